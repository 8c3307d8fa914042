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

A standard launch_testing module: the launch_testing pytest plugin of a ROS install (or
`launch_test test/test_launch_lerobot_tools.py`) runs it. Where launch_testing is absent (ROS 2
from PyPI wheels) its tests skip one by one; the module still imports, so the rest of the
directory is collected (test_no_module_level_skips.py). test_bringup.py covers the same
behaviour there, starting the same nodes with the same parameters file.

The runtime runs in a namespace and a domain of its own, reserved with domain_coordinator (never
the caller's), and writes into a temporary directory removed when the launch shuts down.
"""

import contextlib
import json
import os
import shutil
import tempfile
import time
import unittest

import pytest

try:
    import launch
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    import launch_ros.actions
    import launch_testing
    import launch_testing.actions
    import launch_testing.asserts
except ImportError:  # no launch_testing: the tests below skip, the module still imports
    launch_testing = None

NO_LAUNCH_TESTING = ('launch_testing is not installed (no PyPI wheel); it runs on ROS 2 installs '
                     'with ros-<distro>-launch-testing-ros')


def _post_shutdown_test():
    """launch_testing.post_shutdown_test(), or nothing where launch_testing is absent."""
    if launch_testing is None:
        return lambda cls: cls
    return launch_testing.post_shutdown_test()


def _reserve_domain(stack: contextlib.ExitStack) -> int:
    """Reserve a DDS domain that is not the caller's, held until `stack` closes."""
    from domain_coordinator import domain_id

    caller = os.environ.get('ROS_DOMAIN_ID', '0').strip() or '0'
    candidates = iter([d for d in range(1, 101) if str(d) != caller])
    return stack.enter_context(domain_id(lambda: next(candidates)))


@pytest.mark.launch_test
def generate_test_description():
    from ament_index_python.packages import get_package_share_directory

    share = get_package_share_directory('lerobot_tools_ros')
    held = contextlib.ExitStack()
    domain = _reserve_domain(held)
    output_dir = tempfile.mkdtemp(prefix='lerobot_tools_launch_test_')
    held.callback(shutil.rmtree, output_dir, ignore_errors=True)
    namespace = f'launch_test_{os.getpid()}'
    runtime = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'lerobot_tools.launch.py')),
        launch_arguments={'output_dir': output_dir, 'tts_backend': 'espeak_ng',
                          'namespace': namespace}.items())
    camera = launch_ros.actions.Node(package='lerobot_tools_ros', executable='demo_camera',
                                     namespace=namespace, output='screen')
    release = launch.actions.RegisterEventHandler(launch.event_handlers.OnShutdown(
        on_shutdown=lambda event, context: held.close()))
    description = launch.LaunchDescription([
        launch.actions.SetEnvironmentVariable('ROS_DOMAIN_ID', str(domain)),
        launch.actions.SetEnvironmentVariable('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'),
        runtime, camera, release, launch_testing.actions.ReadyToTest()])
    return description, {'domain': domain, 'namespace': namespace, 'output_dir': output_dir}


def _wait_until_the_calls_can_run(node, executor, pub, deadline: float) -> None:
    """
    Wait for what the two calls need, not for a fixed time.

    The dispatcher listens on policy/text; tool_server offers both tools as actions; the
    camera publishes and tool_server's camera subscription exists (record_observation picks
    its transport once the topic is advertised) and frames keep coming after it appeared, so
    the tool holds a fresh frame when the call comes (else: no_frame).
    """
    from lerobot_tools_interfaces.action import RunTool
    from rclpy.action import ActionClient
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    def spin_until(predicate, what: str) -> None:
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f'gave up waiting: {what}')
            executor.spin_once(timeout_sec=0.05)

    spin_until(lambda: pub.get_subscription_count() > 0, 'the dispatcher on policy/text')
    for tool in ('say', 'record_observation'):
        client = ActionClient(node, RunTool, f'lerobot_tools/{tool}')
        spin_until(client.server_is_ready, f'the {tool} action of tool_server')
    camera = node.resolve_topic_name('camera/front/image_raw')
    spin_until(lambda: any(info.node_name == 'tool_server' for info in
                           node.get_subscriptions_info_by_topic(camera)),
               f"tool_server's subscription to {camera}")
    frames = []
    node.create_subscription(Image, camera, frames.append, qos_profile_sensor_data)
    # Frames that arrive here after tool_server subscribed reach it as well.
    spin_until(lambda: len(frames) >= 3, f'frames on {camera}')


@unittest.skipIf(launch_testing is None, NO_LAUNCH_TESTING)
class TestToolCallsSucceed(unittest.TestCase):

    def test_say_and_record_observation(self, proc_output, domain, namespace, output_dir):
        import rclpy
        from lerobot_tools_interfaces.msg import ToolResult
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String

        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain)
        node = rclpy.create_node('launch_test_policy', namespace=namespace, context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        try:
            qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
            results = []
            # Relative names: inside the runtime's namespace, as a policy node would be.
            node.create_subscription(ToolResult, 'lerobot_tools/results', results.append, qos)
            pub = node.create_publisher(String, 'policy/text', qos)
            deadline = time.monotonic() + 60.0
            _wait_until_the_calls_can_run(node, executor, pub, deadline)
            pub.publish(String(data='Hello.\n<say>Hello from the launch test.</say>'))
            pub.publish(String(data='<tool_call>{"name": "record_observation", '
                                    '"arguments": {"label": "launch_test"}}</tool_call>'))
            while len(results) < 2 and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.1)
            self.assertEqual(len(results), 2)
            for result in results:
                self.assertTrue(result.success, result.error_message)
            by_name = {r.name: r for r in results}
            self.assertEqual(json.loads(by_name['say'].content)['backend'], 'espeak_ng')
            for path in json.loads(by_name['record_observation'].content)['paths']:
                self.assertTrue(path.startswith(output_dir), path)
                self.assertTrue(os.path.getsize(path) > 0, path)
        finally:
            executor.shutdown()
            node.destroy_node()
            rclpy.shutdown(context=context)


@_post_shutdown_test()
@unittest.skipIf(launch_testing is None, NO_LAUNCH_TESTING)
class TestProcessesExitCleanly(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(
            proc_info, allowable_exit_codes=[0, -2, -15])
