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
Bound tools end to end: policy text -> dispatcher -> tool_server -> the robot's own interfaces.

The robot side is ``robot_servers.RobotServers`` (a real SetBool service, Fibonacci action
server, Twist subscriber and BatteryState publisher) in this process; dispatcher and tool_server
run as real processes, everything over DDS in a domain reserved for this module.
"""

import json
import os
import pathlib
import time

from bound_stack import gripper_binding, in_own_domain, light_binding, LIGHT_TOOL, node_commands
from bound_stack import Policy, tool_schema, write_stack_files
from conftest import node_env, NodeProcess, prove_action, spin_until
from lerobot_tools_interfaces.msg import ErrorCodes, ToolResult
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros.names import READINESS_PROBE
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest
from robot_servers import BATTERY_TOPIC, CMD_VEL_TOPIC, GRIPPER_ACTION, LIGHT_SERVICE
from robot_servers import RobotServers


CATALOG = [
    LIGHT_TOOL,
    tool_schema('move_gripper', {'steps': {'type': 'integer', 'minimum': 0}}, ['steps']),
    tool_schema('slow_gripper', {'steps': {'type': 'integer', 'minimum': 0}}, ['steps']),
    tool_schema('drive', {'speed': {'type': 'number', 'minimum': -1, 'maximum': 1},
                          'turn': {'type': 'number', 'default': 0.0}}, ['speed']),
    tool_schema('get_battery', {}),
    tool_schema('missing_light', {'on': {'type': 'boolean'}}, ['on']),
    ECHO_SCHEMA,
]

BINDINGS = light_binding(LIGHT_SERVICE) + gripper_binding('move_gripper', GRIPPER_ACTION, 8.0) \
    + gripper_binding('slow_gripper', GRIPPER_ACTION, 0.6) + f"""
  drive:
    kind: publish
    topic: {CMD_VEL_TOPIC}
    type: geometry_msgs/msg/Twist
    message: {{linear: {{x: $speed}}, angular: {{z: $turn}}}}
    repeat: 3
    rate_hz: 20.0
    final: {{}}
  get_battery:
    kind: read
    topic: {BATTERY_TOPIC}
    type: sensor_msgs/msg/BatteryState
    max_age_s: 2.0
    fields: [percentage, voltage, cell_voltage, present, serial_number, header]
  missing_light:
    kind: service
    service: /robot/nobody_serves_this
    type: std_srvs/srv/SetBool
    request: {{data: $on}}
    timeout_s: 0.5
"""


class Stack:
    """Robot servers, tool_server with the bindings, dispatcher, and the policy's node."""

    def __init__(self, domain: int, tmp: pathlib.Path) -> None:
        import rclpy
        root, bindings = write_stack_files(tmp, CATALOG, BINDINGS)
        env = node_env(domain, tmp)
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.robot = RobotServers(self.context)
        commands = node_commands(root, bindings, dispatcher=('-p', 'timeout_s:=10.0'))
        self.server = NodeProcess(commands['tool_server'], env, tmp / 'tool_server.log')
        self.dispatcher = NodeProcess(commands['dispatcher'], env, tmp / 'dispatcher.log')
        self.policy = Policy(self.context, self.logs)
        self.node, self.results = self.policy.node, self.policy.results
        clients = [self.node.create_client(CallTool, f'/lerobot_tools/{tool["function"]["name"]}')
                   for tool in CATALOG]
        up = spin_until(self.node, lambda: all(c.service_is_ready() for c in clients), 30.0)
        assert up, self.logs()
        # The ROS graph can list a server before DDS has matched both of its paths with a
        # client, so a request sent at once, or its answer, can be lost (README: binding tools,
        # right after startup). A robot's server cannot be probed for free (a call acts), so
        # the stack proves tool_server's paths to the robot with harmless calls before the
        # tests, as an integrator's bringup would, and forgets what the robot recorded.
        for name, arguments in (('set_light', {'on': False}), ('move_gripper', {'steps': 0}),
                                ('slow_gripper', {'steps': 0})):
            for _ in range(5):
                if self.call(name, arguments).success:
                    break
            assert self.results[-1].success, self.results[-1].error_message + self.logs()
        with self.robot.lock:
            for recorded in (self.robot.light_requests, self.robot.goals,
                             self.robot.finished_goals, self.robot.cancelled_goals):
                recorded.clear()
        self.results.clear()
        self.policy.calls.clear()

    def logs(self) -> str:
        return ('--- tool_server\n' + self.server.output()[-3000:] + '\n--- dispatcher\n'
                + self.dispatcher.output()[-3000:])

    def call(self, name: str, arguments: dict, timeout: float = 15.0) -> ToolResult:
        """Publish one Hermes-format call as policy text and return its one result."""
        return self.policy.call(name, arguments, timeout)

    def close(self) -> None:
        import rclpy
        for proc in (self.dispatcher, self.server):
            proc.stop()
        self.robot.close()
        self.policy.close()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with in_own_domain(lambda domain: Stack(domain, tmp_path_factory.mktemp('bindings'))) as up:
        yield up


def test_bound_service_gets_the_mapped_request_and_answers_its_message(stack):
    result = stack.call('set_light', {'on': True})
    assert result.success, result.error_message + stack.logs()
    assert result.content == 'light is on'
    result = stack.call('set_light', {'on': False})
    assert result.content == 'light is off'
    with stack.robot.lock:
        assert stack.robot.light_requests == [True, False]


def test_bound_action_returns_the_result_of_the_goal(stack):
    result = stack.call('move_gripper', {'steps': 6})
    assert result.success, result.error_message
    assert json.loads(result.content) == {'sequence': [0, 1, 1, 2, 3, 5, 8]}
    with stack.robot.lock:
        assert 6 in stack.robot.finished_goals


def test_bound_action_timeout_cancels_the_goal_on_the_server(stack):
    with stack.robot.lock:
        stack.robot.cancelled_goals.clear()
    result = stack.call('slow_gripper', {'steps': 40})  # 40 steps of 50 ms: 2 s > 0.6 s
    assert result.error_code == ErrorCodes.TIMEOUT, result
    assert 'cancelled on the server' in result.error_message
    # The goal was over on the robot before the call had its result.
    with stack.robot.lock:
        assert stack.robot.cancelled_goals == [40]
        assert 40 not in stack.robot.finished_goals


def test_out_of_range_for_the_ros_type_is_invalid_arguments_and_nothing_is_sent(stack):
    with stack.robot.lock:
        goals_before = list(stack.robot.goals)
    result = stack.call('move_gripper', {'steps': 2**31})  # the schema allows it; int32 does not
    assert result.error_code == ErrorCodes.INVALID_ARGUMENTS, result
    assert 'int32' in result.error_message and 'order' in result.error_message
    time.sleep(0.2)
    with stack.robot.lock:
        assert stack.robot.goals == goals_before


def test_bound_publish_sends_n_messages_then_the_final_one(stack):
    with stack.robot.lock:
        stack.robot.twists.clear()
    result = stack.call('drive', {'speed': 0.25})
    assert result.success, result.error_message
    content = json.loads(result.content)
    assert content['sent'] == 3 and content['subscribers'] >= 1
    assert content['message']['linear']['x'] == 0.25
    assert content['final']['linear']['x'] == 0.0
    assert spin_until(stack.node, lambda: len(stack.robot.twists) >= 4, 5.0)
    with stack.robot.lock:
        speeds = [(twist.linear.x, twist.angular.z) for twist in stack.robot.twists]
    assert speeds == [(0.25, 0.0)] * 3 + [(0.0, 0.0)]


def test_bound_read_returns_the_latest_message_with_nan_reported(stack):
    result = stack.call('get_battery', {})
    assert result.success, result.error_message
    content = json.loads(result.content)  # strict JSON: no NaN token
    assert content['percentage'] == pytest.approx(0.8)
    assert content['voltage'] is None
    assert content['_non_finite'] == {'voltage': 'NaN'}
    assert content['cell_voltage'] == pytest.approx([3.7, 3.75])
    assert content['present'] is True and content['serial_number'] == 'B-1'
    assert content['header']['stamp']['sec'] > 0
    assert set(content) == {'percentage', 'voltage', 'cell_voltage', 'present', 'serial_number',
                            'header', '_non_finite'}


def test_bound_service_that_is_not_up_is_unavailable(stack):
    started = time.monotonic()
    result = stack.call('missing_light', {'on': True})
    assert result.error_code == ErrorCodes.UNAVAILABLE, result
    assert '/robot/nobody_serves_this' in result.error_message
    assert time.monotonic() - started >= 0.5


def test_stale_reading_is_stale_frame(stack):
    stack.robot.stop_battery()
    try:
        time.sleep(2.5)  # max_age_s is 2.0
        result = stack.call('get_battery', {})
    finally:
        stack.robot.start_battery()
    assert result.error_code == ErrorCodes.STALE_FRAME, result
    assert BATTERY_TOPIC in result.error_message


def test_bound_action_over_run_tool_relays_feedback_and_cancels_on_the_robot(stack):
    """tool_server's RunTool action on a bound action: feedback up, cancel down."""
    from lerobot_tools_interfaces.action import RunTool
    from rclpy.action import ActionClient
    client = ActionClient(stack.node, RunTool, '/lerobot_tools/move_gripper')
    if not spin_until(stack.node, client.server_is_ready, 3.0):
        pytest.skip('this tool_server serves no RunTool action (CallTool only)')
    prove_action(stack.node, client, RunTool.Goal(name=READINESS_PROBE))  # a new client
    feedback: list = []
    sent = client.send_goal_async(
        RunTool.Goal(call_id='rt1', name='move_gripper', arguments='{"steps": 5}'),
        feedback_callback=lambda message: feedback.append(message.feedback))
    assert spin_until(stack.node, sent.done, 10.0) and sent.result().accepted
    result = sent.result().get_result_async()
    # (a bound on a hang: five robot steps and their relay take seconds on a loaded machine)
    assert spin_until(stack.node, result.done, 30.0), (feedback, stack.logs())
    assert result.result().result.success, result.result().result.error_message
    assert json.loads(result.result().result.content) == {'sequence': [0, 1, 1, 2, 3, 5]}
    relayed = [json.loads(f.detail)['sequence'] for f in feedback if f.stage == 'running']
    assert relayed[-1] == [0, 1, 1, 2, 3, 5] and len(relayed) == 4
    # Cancelling the RunTool goal cancels the goal on the robot.
    with stack.robot.lock:
        stack.robot.cancelled_goals.clear()
    sent = client.send_goal_async(
        RunTool.Goal(call_id='rt2', name='move_gripper', arguments='{"steps": 60}'))
    assert spin_until(stack.node, sent.done, 10.0) and sent.result().accepted
    assert spin_until(stack.node, lambda: 60 in stack.robot.goals, 10.0)
    result = sent.result().get_result_async()
    sent.result().cancel_goal_async()
    assert spin_until(stack.node, result.done, 15.0), (stack.robot.cancelled_goals,
                                                       stack.robot.finished_goals, stack.logs())
    assert result.result().result.error_code == ErrorCodes.CANCELLED
    with stack.robot.lock:
        assert stack.robot.cancelled_goals == [60]
