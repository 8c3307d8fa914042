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
"""

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch_ros.actions import Node


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory('lerobot_tools_ros')
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(f'{share}/launch/lerobot_tools.launch.py'),
            launch_arguments={'bindings_file': f'{share}/config/demo_bindings.yaml'}.items()),
        Node(package='lerobot_tools_ros', executable='demo_gripper', name='demo_gripper',
             output='screen'),
        Node(package='lerobot_tools_ros', executable='demo_camera', name='demo_camera',
             output='screen', parameters=[{'topic': '/camera/front/image_raw'}]),
        Node(package='lerobot_tools_ros', executable='scripted_policy', name='scripted_policy',
             output='screen'),
    ])
