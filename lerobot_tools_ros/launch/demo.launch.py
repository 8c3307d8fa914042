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
The runtime plus a demo camera, a demo gripper and a scripted policy: a self-contained demo.

Usage: ros2 launch lerobot_tools_ros demo.launch.py output_dir:=/tmp/lerobot_tools_demo
[namespace:=robot1] [bindings_file:=config/demo_bindings.yaml] (and every argument of
lerobot_tools.launch.py)

The camera and the policy run in the same namespace as the runtime, with relative topics, so the
policy reaches the dispatcher and record_observation reads the camera in any namespace.
"""

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node, PushRosNamespace


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory('lerobot_tools_ros')
    return LaunchDescription([
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace for all nodes, demo ones included'),
        DeclareLaunchArgument('bindings_file', default_value=f'{share}/config/demo_bindings.yaml',
                              description='YAML binding catalog tools to ROS services, actions '
                                          'and topics (default: the demo gripper binding)'),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(f'{share}/launch/lerobot_tools.launch.py'),
            launch_arguments={'namespace': LaunchConfiguration('namespace'),
                              'bindings_file': LaunchConfiguration('bindings_file')}.items()),
        GroupAction([
            PushRosNamespace(LaunchConfiguration('namespace')),
            Node(package='lerobot_tools_ros', executable='demo_gripper', name='demo_gripper',
                 output='screen'),
            # Relative topic: camera/front/image_raw, where record_observation reads the
            # sample dataset's observation.images.front camera.
            Node(package='lerobot_tools_ros', executable='demo_camera', name='demo_camera',
                 output='screen'),
            Node(package='lerobot_tools_ros', executable='scripted_policy',
                 name='scripted_policy', output='screen'),
        ]),
    ])
