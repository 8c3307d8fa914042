# Copyright 2026 lerobot_tools_ros contributors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Start the LeRobot tool runtime: dispatcher, one tool_server (say + record_observation), speaker.

Usage: ros2 launch lerobot_tools_ros lerobot_tools.launch.py [dataset:=/data/my_dataset]
[namespace:=robot1] [tts_backend:=espeak_ng] [output_dir:=/tmp/lerobot_tools]
[bindings_file:=/path/to/bindings.yaml]

`lerobot-tools-ros bringup` starts the same nodes with the same parameters file in one process.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node, PushRosNamespace


def _nodes(context: LaunchContext) -> list:
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    params_file = arg('params_file')
    dataset = arg('dataset')
    output_dir = arg('output_dir')
    common = {'package': 'lerobot_tools_ros', 'output': 'screen', 'emulate_tty': True,
              'ros_arguments': ['--log-level', arg('log_level')]}
    # Launch arguments left empty keep what params_file says (as `bringup` does).
    server_overrides = {}
    dispatcher_overrides = {}
    if dataset:
        server_overrides['dataset'] = dispatcher_overrides['dataset'] = dataset
    if arg('tts_backend'):
        server_overrides['tool.say.backend'] = arg('tts_backend')
    if arg('bindings_file'):
        server_overrides['bindings_file'] = arg('bindings_file')
    speaker_overrides = {}
    if output_dir:
        server_overrides['tool.record_observation.output_dir'] = os.path.join(
            output_dir, 'observations')
        speaker_overrides['output_dir'] = os.path.join(output_dir, 'audio')
    return [GroupAction([
        PushRosNamespace(arg('namespace')),
        Node(**common, executable='dispatcher', name='dispatcher',
             parameters=[params_file, dispatcher_overrides]),
        Node(**common, executable='tool_server', name='tool_server',
             parameters=[params_file, server_overrides]),
        Node(**common, executable='speaker', name='speaker',
             parameters=[params_file, speaker_overrides]),
    ])]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory('lerobot_tools_ros')
    return LaunchDescription([
        DeclareLaunchArgument('dataset', default_value='',
                              description="Dataset root, info.json or repo id ('' = params_file)"),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config', 'lerobot_tools.yaml'),
                              description='Parameters file for every node'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace for all nodes'),
        DeclareLaunchArgument('log_level', default_value='info',
                              description='debug, info, warn, error'),
        DeclareLaunchArgument('output_dir', default_value='',
                              description="Where WAV and PNG files go ('' = params_file)"),
        DeclareLaunchArgument('tts_backend', default_value='',
                              description="auto, pocket_tts or espeak_ng ('' = params_file)"),
        DeclareLaunchArgument('bindings_file', default_value='',
                              description='YAML binding catalog tools to ROS services, actions '
                                          "and topics ('' = params_file)"),
        OpaqueFunction(function=_nodes),
    ])
