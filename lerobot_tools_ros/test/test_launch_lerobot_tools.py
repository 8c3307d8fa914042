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
launch_testing test of lerobot_tools.launch.py (runs where launch_testing is installed).

On machines without `ros2 launch` (ROS 2 from PyPI wheels), the same behaviour is covered by
test_bringup.py, which starts the same nodes with the same parameters file.
"""

import json
import os
import tempfile
import time
import unittest

import pytest

launch_testing = pytest.importorskip(
    'launch_testing', reason='launch_testing is not installed (no PyPI wheel); it runs on ROS 2 '
                             'installs with ros-<distro>-launch-testing-ros')
import launch  # noqa: E402, I100
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
import launch_ros.actions  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402

OUTPUT_DIR = tempfile.mkdtemp(prefix='lerobot_tools_launch_test_')


@pytest.mark.launch_test
def generate_test_description():
    from ament_index_python.packages import get_package_share_directory
    share = get_package_share_directory('lerobot_tools_ros')
    runtime = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'lerobot_tools.launch.py')),
        launch_arguments={'output_dir': OUTPUT_DIR, 'tts_backend': 'espeak_ng'}.items())
    camera = launch_ros.actions.Node(package='lerobot_tools_ros', executable='demo_camera',
                                     output='screen')
    return launch.LaunchDescription([runtime, camera, launch_testing.actions.ReadyToTest()])


class TestToolCallsSucceed(unittest.TestCase):

    def test_say_and_record_observation(self, proc_output):
        import rclpy
        from lerobot_tools_interfaces.msg import ToolResult
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String

        rclpy.init()
        node = rclpy.create_node('launch_test_policy')
        try:
            qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
            results = []
            node.create_subscription(ToolResult, '/lerobot_tools/results', results.append, qos)
            pub = node.create_publisher(String, '/policy/text', qos)
            deadline = time.monotonic() + 60.0
            while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.1)
            time.sleep(2.0)  # let the camera deliver frames
            pub.publish(String(data='Hello.\n<say>Hello from the launch test.</say>'))
            pub.publish(String(data='<tool_call>{"name": "record_observation", '
                                    '"arguments": {"label": "launch_test"}}</tool_call>'))
            while len(results) < 2 and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.1)
            self.assertEqual(len(results), 2)
            for result in results:
                self.assertTrue(result.success, result.error_message)
            by_name = {r.name: r for r in results}
            self.assertEqual(json.loads(by_name['say'].content)['backend'], 'espeak_ng')
        finally:
            node.destroy_node()
            rclpy.shutdown()


@launch_testing.post_shutdown_test()
class TestProcessesExitCleanly(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(
            proc_info, allowable_exit_codes=[0, -2, -15])
