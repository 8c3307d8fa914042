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
What a result says the robot did, checked against what a counting robot logged it received.

The robot is a real ``test_msgs/Fibonacci`` action server (an arm: the goal's ``order`` is the
call's id, so every goal is told apart) and a ``std_srvs/SetBool`` service (a light) in this
process; tool_server (with bindings to them) and the dispatcher run as real processes, over DDS
in a domain reserved for this module. Scenarios: a pause while the dispatcher's call waits
behind a tool thread held by a direct call (20 runs: nothing reaches the robot after the pause
answered), a call id sent twice (acts once), a cancel racing completion (about 100 calls: a
result never says cancelled when the robot ran the goal to its end), and the dispatcher stopped
with SIGTERM while a call runs (outcome unknown, not "nothing was sent").
"""

import json
import os
import pathlib
import random
import signal
import threading
import time

from bound_stack import in_own_domain, light_binding, LIGHT_TOOL, node_commands, Policy
from bound_stack import tool_schema, write_stack_files
from conftest import node_env, NodeProcess, prove_action, spin_until
from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_interfaces.msg import ErrorCodes, Outcomes
from lerobot_tools_interfaces.srv import CallTool, CancelCalls
from lerobot_tools_ros.names import READINESS_PROBE
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest
from std_srvs.srv import SetBool

ARM_ACTION = '/robot/counting_arm'
LIGHT_SERVICE = '/robot/counting_light'
HOLD = 1000  # an id at or above this holds the arm for (id - HOLD) / 100 s
QUICK_S = 0.03  # how long any other goal takes
WINDOW_S = 4.0  # tool_server's call_ids_window_s here

CATALOG = [LIGHT_TOOL, tool_schema('arm', {'id': {'type': 'integer', 'minimum': 0}}, ['id']),
           tool_schema('slow_arm', {'id': {'type': 'integer', 'minimum': 0}}, ['id']),
           tool_schema('ghost', {}),  # in the catalog, hosted by nobody
           ECHO_SCHEMA]
BINDINGS = light_binding(LIGHT_SERVICE) + f"""
  arm:
    kind: action
    action: {ARM_ACTION}
    type: test_msgs/action/Fibonacci
    goal: {{order: $id}}
    timeout_s: 8.0
    cancel_timeout_s: 3.0
  slow_arm:
    kind: action
    action: {ARM_ACTION}
    type: test_msgs/action/Fibonacci
    goal: {{order: $id}}
    timeout_s: 8.0
"""


class CountingRobot:
    """The robot's own servers: they log every goal and request they receive, and how it ended."""

    def __init__(self, context) -> None:
        import rclpy
        from rclpy.action import ActionServer, CancelResponse
        from rclpy.callback_groups import ReentrantCallbackGroup
        from rclpy.executors import MultiThreadedExecutor
        from test_msgs.action import Fibonacci
        self.Fibonacci = Fibonacci
        self.node = rclpy.create_node('counting_robot', context=context)
        self.lock = threading.Lock()
        self.received: list[int] = []  # goal ids, in the order they arrived
        self.finished: list[int] = []  # ran to their end (succeeded)
        self.cancelled: list[int] = []  # stopped by a cancel
        self.light: list[bool] = []
        group = ReentrantCallbackGroup()
        self.action = ActionServer(self.node, Fibonacci, ARM_ACTION, self._execute,
                                   callback_group=group,
                                   cancel_callback=lambda _: CancelResponse.ACCEPT)
        self.node.create_service(SetBool, LIGHT_SERVICE, self._light, callback_group=group)
        self.executor = MultiThreadedExecutor(num_threads=4, context=context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _execute(self, goal_handle):
        goal_id = goal_handle.request.order
        with self.lock:
            self.received.append(goal_id)
        hold_s = (goal_id - HOLD) / 100 if goal_id >= HOLD else QUICK_S
        end = time.monotonic() + hold_s
        while time.monotonic() < end:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                with self.lock:
                    self.cancelled.append(goal_id)
                return self.Fibonacci.Result(sequence=[goal_id])
            time.sleep(0.005)
        goal_handle.succeed()
        with self.lock:
            self.finished.append(goal_id)
        return self.Fibonacci.Result(sequence=[goal_id])

    def _light(self, request, response):
        with self.lock:
            self.light.append(request.data)
        response.success = True
        response.message = 'light is ' + ('on' if request.data else 'off')
        return response

    def clear(self) -> None:
        with self.lock:
            for log in (self.received, self.finished, self.cancelled, self.light):
                log.clear()

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=2.0)
        self.thread.join(timeout=5.0)
        self.node.destroy_node()


class Stack:
    """The counting robot, tool_server with the bindings, the dispatcher, the policy's node."""

    def __init__(self, domain: int, tmp: pathlib.Path, dispatcher: tuple = ()) -> None:
        import rclpy
        root, bindings = write_stack_files(tmp, CATALOG, BINDINGS)
        env = node_env(domain, tmp)
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.robot = CountingRobot(self.context)
        commands = node_commands(root, bindings, dispatcher=(
            '-p', 'timeout_s:=10.0', '-p', 'cancel_timeout_s:=5.0',
            '-p', 'tool.slow_arm.timeout_s:=0.6', '-p', 'tool.ghost.timeout_s:=0.6', *dispatcher),
            server=(
            '-p', f'call_ids_window_s:={WINDOW_S}', '-p', 'call_ids_max:=200'))
        self.server = NodeProcess(commands['tool_server'], env, tmp / 'tool_server.log')
        self._start_dispatcher = lambda log: NodeProcess(commands['dispatcher'], env, tmp / log)
        self.dispatcher = self._start_dispatcher('dispatcher.log')
        self.policy = Policy(self.context, self.logs)
        self.node, self.results = self.policy.node, self.policy.results
        self.direct = {name: self.node.create_client(CallTool, f'/lerobot_tools/{name}')
                       for name in ('arm', 'set_light')}
        self.enable = self.node.create_client(SetBool, '/dispatcher/set_enabled')
        self.cancel = self.node.create_client(CancelCalls, '/dispatcher/cancel')
        up = spin_until(self.node, lambda: all(c.service_is_ready() for c in [
            *self.direct.values(), self.enable, self.cancel]), 30.0)
        assert up, self.logs()
        for client in self.direct.values():  # prove the answers of each direct path reach us
            for _ in range(60):
                if self.request(client, READINESS_PROBE, {}, timeout=0.5) is not None:
                    break
        self.prove_paths()

    def prove_paths(self) -> None:
        """Prove tool_server's paths to the robot, and the dispatcher's, with harmless calls."""
        for name, arguments in (('set_light', {'on': False}), ('arm', {'id': 0})):
            for _ in range(5):
                if self.policy.call(name, arguments).success:
                    break
            assert self.results[-1].success, self.results[-1].error_message + self.logs()
        self.robot.clear()  # then forget what the robot logged (as a bringup would)
        self.results.clear()
        self.policy.calls.clear()

    def restart_dispatcher(self) -> None:
        """Start a new dispatcher after a test stopped the old one; tests run in any order."""
        self.dispatcher.stop()
        self.dispatcher = self._start_dispatcher('dispatcher-restarted.log')
        assert spin_until(self.node, lambda: 'dispatching' in self.dispatcher.output()
                          and self.enable.service_is_ready(), 30.0), self.logs()
        self.prove_paths()

    def logs(self) -> str:
        return ('--- tool_server\n' + self.server.output()[-4000:] + '\n--- dispatcher\n'
                + self.dispatcher.output()[-4000:])

    def request(self, client, name: str, arguments: dict, *, call_id: str = '',
                timeout: float = 15.0):
        """Send a CallTool request straight to tool_server; its response, or None."""
        future = client.call_async(CallTool.Request(
            call_id=call_id, name=name, arguments=json.dumps(arguments), source='test'))
        if not spin_until(self.node, future.done, timeout):
            client.remove_pending_request(future)
            return None
        return future.result()

    def set_enabled(self, enabled: bool) -> str:
        future = self.enable.call_async(SetBool.Request(data=enabled))
        assert spin_until(self.node, future.done, 10.0), self.logs()
        return future.result().message

    def announced(self, goal_id: int, timeout: float = 10.0):
        """Wait for the dispatcher's announcement of the arm call with this id (it is sent)."""
        def found():
            return next((c for c in self.policy.calls if c.name == 'arm'
                         and json.loads(c.arguments).get('id') == goal_id), None)
        assert spin_until(self.node, lambda: found() is not None, timeout), self.logs()
        return found()

    def result_of(self, call_id: str, timeout: float = 20.0):
        def found():
            return next((r for r in self.results if r.call_id == call_id), None)
        assert spin_until(self.node, lambda: found() is not None, timeout), self.logs()
        return found()

    def close(self) -> None:
        import rclpy
        for proc in (self.dispatcher, self.server):
            proc.stop()
        self.robot.close()
        self.policy.close()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with in_own_domain(lambda domain: Stack(domain, tmp_path_factory.mktemp('outcomes'))) as up:
        yield up


def test_nothing_reaches_the_robot_after_a_pause_answered_while_a_call_waits_for_a_thread(stack):
    """
    A direct CallTool request holds the arm tool's thread; the dispatcher's goal waits behind.

    Paused then, the waiting call must never reach the robot, however the held call ends.
    """
    robot = stack.robot
    for run in range(20):
        robot.clear()
        goal_id = run + 1
        held = stack.direct['arm'].call_async(CallTool.Request(
            call_id=f'held-{run}', name='arm', arguments=json.dumps({'id': HOLD + 60})))
        assert spin_until(stack.node, lambda: HOLD + 60 in robot.received, 10.0), stack.logs()
        stack.policy.send('arm', {'id': goal_id})
        call = stack.announced(goal_id)  # admitted and sent: its goal waits for the thread
        spin_until(stack.node, lambda: False, random.uniform(0.0, 0.2))
        message = stack.set_enabled(False)
        with robot.lock:
            at_pause = list(robot.received)
        assert 'paused' in message
        result = stack.result_of(call.call_id)
        assert spin_until(stack.node, held.done, 15.0), stack.logs()
        spin_until(stack.node, lambda: False, 0.3)  # anything late would show here
        with robot.lock:
            received = list(robot.received)
        assert goal_id not in received, (run, received, result, stack.logs())
        assert received == at_pause == [HOLD + 60], (run, received)
        assert (result.error_code, result.outcome) == (ErrorCodes.PAUSED, Outcomes.NOT_RUN), (
            run, result.error_message)
        assert held.result().success and held.result().outcome == Outcomes.RAN
        stack.set_enabled(True)
        stack.results.clear()
        stack.policy.calls.clear()


@pytest.fixture(scope='module')
def service_stack(tmp_path_factory):
    """Start the same robot and nodes, with the dispatcher calling tools as CallTool requests."""
    with in_own_domain(lambda domain: Stack(domain, tmp_path_factory.mktemp('service'), (
            '-p', 'executor_interface:=service'))) as up:
        yield up


@pytest.mark.parametrize('interface', ['action', 'service'])
def test_nothing_reaches_the_robot_after_a_pause_answered_while_tool_server_stalled(
        interface, request):
    """The dispatcher's goal (or request) and its stop both wait in a stalled tool_server."""
    stack = request.getfixturevalue({'action': 'stack', 'service': 'service_stack'}[interface])
    robot = stack.robot
    pid = stack.server.proc.pid
    for run in range(5):
        robot.clear()
        goal_id = 200 + run
        os.kill(pid, signal.SIGSTOP)
        try:
            stack.policy.send('arm', {'id': goal_id})
            call = stack.announced(goal_id)
            assert 'paused' in stack.set_enabled(False)
            spin_until(stack.node, lambda: False, 1.6)
        finally:
            os.kill(pid, signal.SIGCONT)
        result = stack.result_of(call.call_id)
        spin_until(stack.node, lambda: False, 0.5)  # anything late would show here
        with robot.lock:
            assert robot.received == [], (run, robot.received, result, stack.logs())
        assert result.outcome == Outcomes.NOT_RUN, (run, result.error_code,
                                                    result.error_message)
        stack.set_enabled(True)
        stack.results.clear()
        stack.policy.calls.clear()


def test_a_call_id_sent_twice_acts_once_and_answers_the_first_outcome(stack):
    robot = stack.robot
    robot.clear()
    light = stack.direct['set_light']
    first = stack.request(light, 'set_light', {'on': True}, call_id='once-light')
    again = stack.request(light, 'set_light', {'on': True}, call_id='once-light')
    assert first.success and first.outcome == Outcomes.RAN
    assert (again.success, again.content, again.outcome) == (True, first.content, Outcomes.RAN)
    with robot.lock:
        assert robot.light == [True]  # one actuation
    # The same id as a RunTool goal: the first answer again, nothing sent to the robot.
    from rclpy.action import ActionClient
    client = ActionClient(stack.node, RunTool, '/lerobot_tools/set_light')
    assert spin_until(stack.node, client.server_is_ready, 10.0)
    prove_action(stack.node, client, RunTool.Goal(name=READINESS_PROBE))
    sent = client.send_goal_async(RunTool.Goal(call_id='once-light', name='set_light',
                                               arguments='{"on": true}'))
    assert spin_until(stack.node, sent.done, 10.0) and sent.result().accepted
    done = sent.result().get_result_async()
    assert spin_until(stack.node, done.done, 10.0)
    assert done.result().result.content == first.content
    with robot.lock:
        assert robot.light == [True]
    # A retry after the caller gave up waiting (a timeout) while the tool ran: it joins the
    # running call and gets its answer; the robot gets the goal once.
    arm = stack.direct['arm']
    assert stack.request(arm, 'arm', {'id': HOLD + 80}, call_id='once-arm', timeout=0.2) is None
    assert spin_until(stack.node, lambda: HOLD + 80 in robot.received, 10.0)
    retry = stack.request(arm, 'arm', {'id': HOLD + 80}, call_id='once-arm')
    assert retry is not None and retry.success and retry.outcome == Outcomes.RAN, retry
    assert json.loads(retry.content) == {'sequence': [HOLD + 80]}
    later = stack.request(arm, 'arm', {'id': HOLD + 80}, call_id='once-arm')
    assert later.content == retry.content
    with robot.lock:
        assert robot.received.count(HOLD + 80) == 1 and robot.finished == [HOLD + 80]


def test_a_call_id_repeated_through_the_dispatcher_acts_once_with_one_published_result(stack):
    robot = stack.robot
    robot.clear()
    call = stack.node.create_client(CallTool, '/dispatcher/call')
    try:
        assert spin_until(stack.node, call.service_is_ready, 10.0), stack.logs()
        # The caller gives up waiting while the arm moves, then asks again with the same id:
        # the dispatcher joins the running call instead of sending a second goal.
        assert stack.request(call, 'arm', {'id': HOLD + 50}, call_id='disp-arm',
                             timeout=0.2) is None
        assert spin_until(stack.node, lambda: HOLD + 50 in robot.received, 10.0), stack.logs()
        joined = stack.request(call, 'arm', {'id': HOLD + 50}, call_id='disp-arm')
        assert joined is not None and joined.success and joined.outcome == Outcomes.RAN
        assert json.loads(joined.content) == {'sequence': [HOLD + 50]}
        again = stack.request(call, 'arm', {'id': HOLD + 50}, call_id='disp-arm')
        assert (again.success, again.content) == (True, joined.content)
        assert again.outcome == Outcomes.RAN
        other = stack.request(call, 'arm', {'id': 990}, call_id='disp-arm')  # another call
        assert (other.error_code, other.outcome) == (ErrorCodes.INVALID_ARGUMENTS,
                                                     Outcomes.NOT_RUN)
        assert 'names a recent call of another tool or with other arguments' in (
            other.error_message)
        spin_until(stack.node, lambda: False, 0.3)  # anything late would show here
        with robot.lock:
            assert robot.received == [HOLD + 50] and robot.finished == [HOLD + 50]
        assert [r.call_id for r in stack.results].count('disp-arm') == 1  # one result
        assert "call_id 'disp-arm' repeated by 'test'" in stack.dispatcher.output()
    finally:
        stack.node.destroy_client(call)
        stack.results.clear()
        stack.policy.calls.clear()


def test_a_call_id_is_remembered_for_the_window_then_runs_again(stack):
    robot = stack.robot
    robot.clear()
    light = stack.direct['set_light']
    first = stack.request(light, 'set_light', {'on': False}, call_id='window-light')
    assert first.success and first.outcome == Outcomes.RAN
    assert stack.request(light, 'set_light', {'on': False}, call_id='window-light').success
    with robot.lock:
        assert robot.light == [False]
    spin_until(stack.node, lambda: False, WINDOW_S + 0.5)  # the window has passed
    late = stack.request(light, 'set_light', {'on': False}, call_id='window-light')
    assert late.success and late.outcome == Outcomes.RAN
    with robot.lock:
        assert robot.light == [False, False]  # forgotten: it ran again, as documented


def test_a_cancel_racing_completion_never_says_cancelled_for_a_goal_the_robot_finished(stack):
    robot = stack.robot
    robot.clear()
    rng = random.Random(7)
    outcomes = []
    for goal_id in range(1, 101):
        stack.policy.send('arm', {'id': goal_id})
        call = stack.announced(goal_id)
        spin_until(stack.node, lambda: False, rng.uniform(0.0, 2.5 * QUICK_S))
        cancel = stack.cancel.call_async(CancelCalls.Request(call_id=call.call_id))
        assert spin_until(stack.node, cancel.done, 10.0)
        result = stack.result_of(call.call_id)
        outcomes.append((goal_id, result))
    spin_until(stack.node, lambda: False, 0.5)
    with robot.lock:
        received, finished, cancelled = set(robot.received), set(robot.finished), \
            set(robot.cancelled)
    for goal_id, result in outcomes:
        assert result.outcome in (Outcomes.NOT_RUN, Outcomes.RAN, Outcomes.UNKNOWN)
        if result.success:
            assert goal_id in finished and result.outcome == Outcomes.RAN, (goal_id, result)
        elif result.error_code == ErrorCodes.CANCELLED:
            assert goal_id not in finished, (goal_id, result.error_message)
            if result.outcome == Outcomes.NOT_RUN:
                assert goal_id not in received, (goal_id, result.error_message)
            else:
                assert result.outcome == Outcomes.RAN and goal_id in cancelled, (
                    goal_id, result.error_message)
        else:
            assert result.outcome == Outcomes.UNKNOWN, (goal_id, result)
    # Both ends of the race happened (otherwise the test proves little).
    codes = [result.error_code for _, result in outcomes]
    assert codes.count('') and codes.count(ErrorCodes.CANCELLED), codes


def test_a_refused_call_is_not_run_and_nothing_reaches_the_robot(stack):
    robot = stack.robot
    robot.clear()
    refused = stack.policy.call('arm', {'id': -1})  # the catalog's minimum: a gate refuses it
    assert (refused.error_code, refused.outcome) == (ErrorCodes.INVALID_ARGUMENTS,
                                                     Outcomes.NOT_RUN)
    direct = stack.request(stack.direct['arm'], 'arm', {'id': 'x'}, call_id='bad-args')
    assert (direct.error_code, direct.outcome) == (ErrorCodes.INVALID_ARGUMENTS,
                                                   Outcomes.NOT_RUN)
    ran = stack.policy.call('arm', {'id': 7})
    assert ran.success and ran.outcome == Outcomes.RAN
    spin_until(stack.node, lambda: False, 0.3)
    with robot.lock:
        assert robot.received == [7] and robot.finished == [7]


def test_a_pause_while_the_robot_acts_stops_it_and_says_it_ran(stack):
    robot = stack.robot
    robot.clear()
    stack.policy.send('arm', {'id': HOLD + 500})
    call = stack.announced(HOLD + 500)
    assert spin_until(stack.node, lambda: HOLD + 500 in robot.received, 10.0), stack.logs()
    message = stack.set_enabled(False)
    try:
        assert '1 running call(s) stopped' in message, message
        result = stack.result_of(call.call_id)
        assert (result.error_code, result.outcome) == (ErrorCodes.PAUSED, Outcomes.RAN), \
            result.error_message
        with robot.lock:
            assert robot.cancelled == [HOLD + 500] and robot.finished == []
    finally:
        stack.set_enabled(True)


def test_a_timeout_is_unknown_and_no_executor_is_not_run(stack):
    robot = stack.robot
    robot.clear()
    for _ in range(3):  # slow_arm's first calls may still find its executor being proven
        timed_out = stack.policy.call('slow_arm', {'id': HOLD + 150}, timeout=20.0)
        if timed_out.error_code == ErrorCodes.TIMEOUT:
            break
    assert (timed_out.error_code, timed_out.outcome) == (ErrorCodes.TIMEOUT, Outcomes.UNKNOWN), \
        timed_out.error_message
    with robot.lock:
        assert HOLD + 150 in robot.received  # it had reached the robot: unknown was right
    nobody = stack.policy.call('ghost', {}, timeout=20.0)
    assert (nobody.error_code, nobody.outcome) == (ErrorCodes.UNAVAILABLE, Outcomes.NOT_RUN)
    spin_until(stack.node, lambda: False, 0.5)
    with robot.lock:
        assert set(robot.received) == {HOLD + 150}  # the unserved call reached nothing


def test_a_dispatcher_stopped_mid_call_answers_unknown_not_nothing_sent(stack):
    """It stops the dispatcher, then starts a new one for the tests that run after it."""
    robot = stack.robot
    robot.clear()
    stack.policy.send('arm', {'id': HOLD + 300})
    call = stack.announced(HOLD + 300)
    assert spin_until(stack.node, lambda: HOLD + 300 in robot.received, 10.0), stack.logs()
    stack.dispatcher.proc.send_signal(signal.SIGTERM)
    result = stack.result_of(call.call_id)
    assert (result.error_code, result.outcome) == (ErrorCodes.ANSWER_LOST, Outcomes.UNKNOWN), \
        result.error_message
    assert 'may or may not have run' in result.error_message
    with robot.lock:
        assert robot.received == [HOLD + 300]  # it had reached the robot
    stack.dispatcher.proc.wait(15.0)
    stack.restart_dispatcher()
