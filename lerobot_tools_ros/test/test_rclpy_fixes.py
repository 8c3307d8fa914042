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


"""Work-arounds for rclpy defects, checked against the real rclpy of this venv over DDS."""

from conftest import spin_until
from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_ros import rclpy_fixes


def test_goals_leave_no_futures_behind_in_the_action_client(ros_node):
    """Every goal leaves no future behind (rclpy 9.1.2 leaked one per goal into `_futures`)."""
    from rclpy.action import ActionClient, ActionServer

    def execute(goal_handle):
        goal_handle.succeed()
        return RunTool.Result(success=True, call_id=goal_handle.request.call_id)

    server = ActionServer(ros_node, RunTool, 'rclpy_fixes_test', execute)
    client = ActionClient(ros_node, RunTool, 'rclpy_fixes_test')
    try:
        assert spin_until(ros_node, client.server_is_ready, 20.0)
        results = []
        for index in range(20):
            sent = rclpy_fixes.send_goal_async(client, RunTool.Goal(call_id=str(index)))
            assert spin_until(ros_node, sent.done, 10.0)
            handle = sent.result()
            assert handle.accepted
            got = handle.get_result_async()
            assert spin_until(ros_node, got.done, 10.0)
            results.append(got.result().result.call_id)
        spin_until(ros_node, lambda: not client._futures, 2.0)  # done callbacks run as tasks
        assert results == [str(index) for index in range(20)]
        assert client._futures == []
    finally:
        client.destroy()
        server.destroy()
