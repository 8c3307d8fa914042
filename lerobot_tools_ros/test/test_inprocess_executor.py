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
The in-process executor path: dispatcher and tool_server as nodes of one process (as bringup).

Real nodes on one rclpy context: the dispatcher and tool_server of `bound_stack.InProcessStack`
on their executor thread, the robot's servers (`robot_servers`), and the policy's node spun by
the test. Calls from policy text reach the tool without the DDS hop between dispatcher and
tool_server, with the same result, cancel, timeout and progress; a tool_server that is gone is
`unavailable`; a tool_server in another process is still called over DDS.
"""

import json
import os
import threading

from bound_stack import gripper_binding, in_own_domain, InProcessStack, light_binding, LIGHT_TOOL
from bound_stack import node_commands, Policy, tool_schema, write_stack_files
from conftest import NodeProcess, PACKAGE_DIR, reserve_test_domain, spin_until
from lerobot_tools_interfaces.msg import ErrorCodes
from lerobot_tools_interfaces.srv import CancelCalls
from lerobot_tools_ros import inprocess
from lerobot_tools_ros.executors import ACTION, LOCAL
from lerobot_tools_ros.executors.inprocess import InProcessExecutor
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest
from robot_servers import GRIPPER_ACTION, LIGHT_SERVICE, RobotServers

STEPS = {'steps': {'type': 'integer', 'minimum': 0}}
CATALOG = [LIGHT_TOOL, ECHO_SCHEMA, tool_schema('move_gripper', STEPS, ['steps']),
           tool_schema('slow_gripper', STEPS, ['steps'])]
BINDINGS = (light_binding(LIGHT_SERVICE) + gripper_binding('move_gripper', GRIPPER_ACTION, 8.0)
            + gripper_binding('slow_gripper', GRIPPER_ACTION, 8.0))
# The dispatcher, not the binding, times slow_gripper out; a removed tool_server shows quickly.
DISPATCHER = ('-p', 'tool.slow_gripper.timeout_s:=0.8', '-p', 'tool.set_light.timeout_s:=3.0')


class World:
    """A domain and context with the robot, an in-process stack and the policy."""

    def __init__(self, domain: int, tmp, *, dispatcher: tuple = DISPATCHER,
                 with_server: bool = True, catalog: list = CATALOG) -> None:
        import rclpy
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self.domain = domain
        self.dataset, self.bindings = write_stack_files(tmp, catalog, BINDINGS)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.robot = RobotServers(self.context, battery=False)
        self.stack = InProcessStack(self.context, self.dataset, self.bindings,
                                    dispatcher=dispatcher, with_server=with_server)
        self.policy = Policy(self.context)

    def path(self, tool: str) -> str:
        """How the dispatcher's calls of ``tool`` go now (LOCAL, ACTION, SERVICE or '')."""
        return self.stack.dispatcher.executor_path(tool)

    def close(self) -> None:
        import rclpy
        self.policy.close()
        self.stack.close()
        self.robot.close()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    with in_own_domain(lambda domain: World(domain, tmp_path_factory.mktemp('inproc'))) as running:
        yield running


@pytest.fixture
def own_world(tmp_path):
    """Make worlds of the test's own, for tests that take the tool_server away."""
    made = []

    def make(**kwargs) -> World:
        made.append(World(domain, tmp_path / f'w{len(made)}', **kwargs))
        return made[-1]
    with reserve_test_domain() as domain:
        yield make
        for running in made:
            running.close()


def test_a_bound_service_is_called_in_process_with_its_result(world):
    result = world.policy.call('set_light', {'on': True})
    assert result.success, result.error_message
    assert result.content == 'light is on'
    with world.robot.lock:
        assert world.robot.light_requests[-1] is True
    assert world.path('set_light') == LOCAL
    # The tool_server offers what it hosts; the echo tool goes the same way.
    assert '/lerobot_tools/set_light' in inprocess.registered(world.context)
    result = world.policy.call('echo', {'text': 'hi'})
    assert result.success and json.loads(result.content) == {'text': 'hi'}
    assert world.path('echo') == LOCAL


def test_bad_arguments_are_refused_by_the_tool_server_as_over_dds(world):
    # The schema allows 2**31 steps; the goal's int32 does not: the binding refuses it.
    result = world.policy.call('move_gripper', {'steps': 2**31})
    assert result.error_code == ErrorCodes.INVALID_ARGUMENTS, result
    assert 'int32' in result.error_message


def test_progress_of_a_bound_action_reaches_the_progress_topic(world):
    world.policy.progress.clear()
    result = world.policy.call('move_gripper', {'steps': 5})
    assert result.success, result.error_message
    assert json.loads(result.content) == {'sequence': [0, 1, 1, 2, 3, 5]}
    mine = [p for p in world.policy.progress if p.call_id == result.call_id]
    sequences = [json.loads(p.detail)['sequence'] for p in mine if p.stage == 'running']
    assert sequences and sequences[-1] == [0, 1, 1, 2, 3, 5]
    assert all(p.name == 'move_gripper' for p in mine)


def test_cancel_stops_the_goal_on_the_robot_with_one_cancelled_result(world):
    with world.robot.lock:
        world.robot.cancelled_goals.clear()
    before = len(world.policy.results)
    world.policy.calls.clear()
    world.policy.send('move_gripper', {'steps': 60})  # 60 steps of 50 ms
    assert spin_until(world.policy.node, lambda: 60 in world.robot.goals
                      and world.policy.calls, 10.0)
    call_id = world.policy.calls[-1].call_id
    answer = world.policy.cancel.call_async(CancelCalls.Request(call_id=call_id))
    assert spin_until(world.policy.node, answer.done, 10.0)
    assert answer.result().cancelled_call_ids == [call_id]
    assert spin_until(world.policy.node, lambda: len(world.policy.results) > before, 10.0)
    # The robot saw the cancel (the binding waits for the goal to end before answering).
    assert spin_until(world.policy.node, lambda: world.robot.cancelled_goals == [60], 10.0)
    spin_until(world.policy.node, lambda: False, 0.5)
    mine = [r for r in world.policy.results[before:] if r.call_id == call_id]
    assert len(mine) == 1 and mine[0].error_code == ErrorCodes.CANCELLED, mine
    with world.robot.lock:
        assert 60 not in world.robot.finished_goals


def test_the_dispatchers_timeout_cancels_the_goal_on_the_robot(world):
    with world.robot.lock:
        world.robot.cancelled_goals.clear()
    result = world.policy.call('slow_gripper', {'steps': 40})  # 2 s > the dispatcher's 0.8 s
    assert result.error_code == ErrorCodes.TIMEOUT, result
    assert spin_until(world.policy.node, lambda: world.robot.cancelled_goals == [40], 10.0)
    with world.robot.lock:
        assert 40 not in world.robot.finished_goals
    # The tool is free again: the next call runs.
    assert world.policy.call('move_gripper', {'steps': 2}).success


def test_fast_and_slow_calls_in_one_generation_each_get_one_result(world):
    before = len(world.policy.results)
    calls = [('move_gripper', {'steps': 20}), ('echo', {'text': 'one'}),
             ('set_light', {'on': True}), ('echo', {'text': 'two'})]
    text = 'Plan.\n' + ''.join(f"<tool_call>{json.dumps({'name': name, 'arguments': args})}"
                               '</tool_call>' for name, args in calls)
    world.policy.text.publish(world.policy.String(data=text))
    # The other calls do not wait for the gripper's goal (20 steps of 50 ms): their results
    # come while it still runs.
    assert world.policy.spin_until(lambda: len(world.policy.results) >= before + 3, 15.0)
    with world.robot.lock:
        assert 20 not in world.robot.finished_goals
    assert 'move_gripper' not in [r.name for r in world.policy.results[before:]]
    assert world.policy.spin_until(lambda: len(world.policy.results) >= before + 4, 15.0)
    world.policy.spin_until(lambda: False, 0.3)  # a fifth result would show here
    results = world.policy.results[before:]
    assert sorted(r.name for r in results) == sorted(name for name, _ in calls)
    assert all(r.success for r in results), results
    assert {r.content for r in results if r.name == 'echo'} == {
        json.dumps({'text': 'one'}), json.dumps({'text': 'two'})}


def test_a_removed_tool_server_means_unavailable(own_world):
    world = own_world()
    assert world.policy.call('set_light', {'on': True}).success
    assert world.path('set_light') == LOCAL
    world.stack.remove_server()
    assert '/lerobot_tools/set_light' not in inprocess.registered(world.context)
    result = world.policy.call('set_light', {'on': False}, timeout=10.0)
    assert result.error_code == ErrorCodes.UNAVAILABLE, result
    assert result.outcome == 'not_run'  # nothing was sent: the robot below agrees
    assert '/lerobot_tools/set_light' in result.error_message
    with world.robot.lock:
        assert world.robot.light_requests == [True]
    assert world.path('set_light') != LOCAL


def test_turned_off_the_calls_go_over_dds(own_world):
    world = own_world(dispatcher=(*DISPATCHER, '-p', 'in_process_executors:=false'))
    result = world.policy.call('set_light', {'on': True})
    assert result.success and result.content == 'light is on', result
    assert world.path('set_light') == ACTION


def test_a_tool_server_in_another_process_is_called_over_dds(own_world, tmp_path):
    world = own_world(with_server=False)
    env = dict(os.environ, ROS_DOMAIN_ID=str(world.domain), PYTHONUNBUFFERED='1',
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', ROS_LOG_DIR=str(tmp_path / 'log'))
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(PACKAGE_DIR), env.get('PYTHONPATH', ''))
                                        if p)
    command = node_commands(world.dataset, world.bindings)['tool_server']
    server = NodeProcess(command, env, tmp_path / 'tool_server.log')
    try:
        # Up before the call (the dispatcher gives set_light 3 s, executor discovery included).
        assert spin_until(world.policy.node, lambda: world.path('set_light') == ACTION, 30.0), \
            server.output()
        result = world.policy.call('set_light', {'on': True}, timeout=20.0)
        assert result.success and result.content == 'light is on', (result, server.output())
        assert world.path('set_light') == ACTION
        assert '/lerobot_tools/set_light' not in inprocess.registered(world.context)
    finally:
        server.stop()


class _Host:
    """A stand-in host for the registry alone (it never runs a call here)."""

    def __init__(self, context: object) -> None:
        self.context = context

    def start(self, call_id, name, arguments, source, context, answer) -> None:
        raise AssertionError('the registry never calls a host')


def test_the_registry_finds_a_host_only_in_its_own_context_and_name():
    mine, other = object(), object()  # the registry only compares contexts by identity
    host = _Host(mine)
    inprocess.register('/ns/lerobot_tools/x', host)
    try:
        assert inprocess.lookup(mine, '/ns/lerobot_tools/x') is host
        assert inprocess.lookup(other, '/ns/lerobot_tools/x') is None  # another domain/context
        assert inprocess.lookup(mine, '/lerobot_tools/x') is None  # another namespace
        assert inprocess.registered(mine) == ['/ns/lerobot_tools/x']
        newer = _Host(mine)
        inprocess.register('/ns/lerobot_tools/x', newer)  # a second tool_server took the name
        inprocess.unregister('/ns/lerobot_tools/x', host)  # the first leaving keeps the second
        assert inprocess.lookup(mine, '/ns/lerobot_tools/x') is newer
        inprocess.unregister('/ns/lerobot_tools/x', newer)
        assert inprocess.lookup(mine, '/ns/lerobot_tools/x') is None
    finally:
        inprocess.unregister('/ns/lerobot_tools/x', host)


class _AnswerWhenTold:
    """A host whose tool reports progress and answers when the test says (from any thread)."""

    def __init__(self, context: object, at_once: bool = False) -> None:
        self.context = context
        self.at_once = at_once
        self.answer = None
        self.source = None

    def start(self, call_id, name, arguments, source, context, answer) -> None:
        def progress_then_answer() -> None:
            context.feedback('running', 0.5, 'half way')
            answer('', 'done', 'ran')
        self.answer = progress_then_answer
        self.source = source
        if self.at_once:
            progress_then_answer()


@pytest.mark.parametrize('case', ['later', 'at once'])
def test_every_answer_of_a_local_call_reaches_on_done_exactly_once(world, case):
    # Whenever and on whatever thread the tool answers, its answer reaches on_done once, on the
    # caller's executor thread, after the progress the tool reported before it.
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor(context=world.context)
    host = _AnswerWhenTold(world.context, at_once=case == 'at once')
    events: list = []
    call = InProcessExecutor(host, executor).send(
        'c1', 'echo', {}, 'mcp',
        lambda outcome: events.append(('done', outcome, threading.get_ident())),
        lambda stage, progress, detail: events.append(('progress', stage,
                                                       threading.get_ident())))
    assert host.source == 'mcp'  # who claims the call reaches the tool, as over DDS
    if case == 'later':
        tool = threading.Thread(target=host.answer)
        tool.start()
        tool.join()
    for _ in range(20):  # a posted answer runs as an executor task
        executor.spin_once(timeout_sec=0.01)
    executor.shutdown()
    assert [event[:2] for event in events][:1] == [('progress', 'running')], events
    assert len(events) == 2 and events[1][0] == 'done', events
    outcome = events[1][1]
    assert outcome.success and outcome.content == 'done' and outcome.outcome == 'ran'
    # On the caller's thread, never the tool's.
    assert {event[-1] for event in events} == {threading.get_ident()}
    call.forget()  # forgetting a finished call changes nothing
    assert call.done and len(events) == 2


def test_a_streamed_call_hands_its_text_to_the_tool_in_process(own_world):
    """stream_speech in one process: the segments reach the tool's TextStream, no DDS hop."""
    from lerobot_tools_interfaces.msg import TextChunk
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    echo = json.loads(json.dumps(ECHO_SCHEMA))
    echo['function']['parameters']['properties']['text']['x-lerobot-streamable'] = True
    catalog = [echo if tool['function']['name'] == 'echo' else tool for tool in CATALOG]
    world = own_world(catalog=catalog, dispatcher=('-p', 'stream_speech:=true'))
    policy = world.policy
    chunks = policy.node.create_publisher(TextChunk, '/policy/text_stream', QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    assert policy.spin_until(lambda: chunks.get_subscription_count() > 0, 10.0)
    text = 'Hello there. I am streamed. Bye now.'
    whole = '<tool_call>{"name": "echo", "arguments": {"text": "' + text + '"}}</tool_call>'
    cut = whole.index('Bye')
    for index, start in enumerate(range(0, cut, 4), 1):
        chunks.publish(TextChunk(generation_id='s', index=index,
                                 text=whole[start:min(start + 4, cut)]))
    dispatcher = world.stack.dispatcher

    def handed() -> str:
        calls = [c for c in dispatcher.active_calls()
                 if c.name == 'echo' and c.handle is not None]
        stream = calls[0].handle.context.text if calls else None
        return stream.received if stream is not None else ''
    # before the markup is complete, its whole sentences are with the tool already
    assert policy.spin_until(lambda: handed() == 'Hello there. I am streamed. ', 10.0), \
        handed()
    assert world.path('echo') == LOCAL and not policy.results
    chunks.publish(TextChunk(generation_id='s', index=index + 1, text=whole[cut:], final=True))
    assert policy.spin_until(lambda: policy.results, 10.0)
    [result] = policy.results
    assert result.success, result.error_message
    assert text in result.content  # echo ran once, with the whole text
    # The calls topic is not ordered with the results topic: wait for the announcement.
    assert policy.spin_until(lambda: policy.calls, 10.0)
    assert [json.loads(c.arguments) for c in policy.calls] == [{'text': text}]
