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
tool_server as a real process, called over DDS through its CallTool service and RunTool action.

Calls go through the product's `ExecutorClient` (what the dispatcher uses): it is ready only
once a readiness probe came back, so a first call is never retried here. A lost first answer
fails the test, as it would fail a user.
"""

import json
import pathlib
import signal
import subprocess
import sys
import time

from conftest import PACKAGE_DIR, spin_until
from executor_calls import Caller, destroy_callers, RawCaller
from lerobot_tools_interfaces.msg import ErrorCodes, Outcomes
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.executors import ACTION, SERVICE
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest


@pytest.fixture(autouse=True)
def _clients_go_first(ros_node):
    """Destroy every Caller's ROS clients before the test node (orphans crash the GC)."""
    yield
    destroy_callers()


@pytest.fixture
def echo_dataset(tmp_path) -> pathlib.Path:
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    info = {'codebase_version': 'v3.0', 'fps': 30, 'features': {},
            'tools': [ECHO_SCHEMA, *DEFAULT_TOOLS]}
    (root / 'meta' / 'info.json').write_text(json.dumps(info))
    return root


def ready_caller(ros_node, proc, name: str, mode: str = 'auto', timeout: float = 30.0) -> Caller:
    caller = Caller(ros_node, name, mode)
    if not caller.wait_ready(timeout):
        pytest.fail(f'{name} never became ready:\n' + proc.output())
    return caller


@pytest.fixture
def echo_server(start_node, ros_node, echo_dataset):
    """Start a tool_server hosting echo; return it with a service caller and an action caller."""
    proc = start_node('lerobot_tools_ros.tool_server.node',
                      '-p', 'tools:=[echo]', '-p', f'dataset:={echo_dataset}')
    service = ready_caller(ros_node, proc, '/lerobot_tools/echo', SERVICE)
    action = ready_caller(ros_node, proc, '/lerobot_tools/echo', ACTION)
    return proc, service, action


def test_two_processes_talk_call_tool_over_dds(echo_server):
    _, service, _ = echo_server
    outcome = service.call({'text': 'hello'}, call_id='abc')
    assert outcome.success, outcome.error_message
    assert outcome.call_id == 'abc'
    assert json.loads(outcome.content) == {'text': 'hello'}
    assert outcome.error_code == ''


def test_invalid_arguments_are_answered_not_executed(echo_server, ros_node):
    _, service, action = echo_server
    for caller in (service, action):
        outcome = caller.call({'delay_s': 'soon'})
        assert not outcome.success
        assert outcome.error_code == ErrorCodes.INVALID_ARGUMENTS
        assert outcome.outcome == Outcomes.NOT_RUN
        assert 'delay_s' in outcome.error_message
    # The JSON text of a goal or request is decoded and validated where it arrives, whoever
    # wrote it: text that is not JSON, or not an object, is refused as it always was.
    raw = RawCaller(ros_node, '/lerobot_tools/echo')
    try:
        for number, (text, says) in enumerate([
                ('{not json', 'not valid JSON'), ('[1, 2]', 'must be a JSON object'),
                ('{"delay_s": "soon"}', 'delay_s'), ('{"text": NaN}', 'not valid JSON')]):
            for answer in (raw.request(text, f'raw-s{number}'), raw.goal(text, f'raw-g{number}')):
                assert not answer.success
                assert answer.error_code == ErrorCodes.INVALID_ARGUMENTS, answer
                assert answer.outcome == Outcomes.NOT_RUN
                assert says in answer.error_message, answer.error_message
        assert raw.request('', 'raw-empty').success  # no arguments: an empty object
        assert json.loads(raw.goal('{"text": "raw"}', 'raw-ok').content) == {'text': 'raw'}
    finally:
        raw.destroy()


def test_wrong_name_for_the_service_is_unknown_tool(echo_server):
    _, service, action = echo_server
    for caller in (service, action):
        outcome = caller.call({'text': 'hi'}, name='say')
        assert outcome.error_code == ErrorCodes.UNKNOWN_TOOL
        assert '/lerobot_tools/say' in outcome.error_message


def test_tool_exception_is_execution_failed_and_server_survives(echo_server):
    proc, service, action = echo_server
    for caller in (service, action):
        outcome = caller.call({'fail': 'gripper jammed'})
        assert outcome.error_code == ErrorCodes.EXECUTION_FAILED
        assert 'gripper jammed' in outcome.error_message
        assert proc.proc.poll() is None
        assert caller.call({'text': 'still here'}).success


def test_action_call_reports_progress_as_feedback(echo_server):
    _, _, action = echo_server
    assert action.client.kind == ACTION
    pending = action.start({'text': 'slow', 'delay_s': 0.6}, call_id='fb')
    outcome = action.finish(pending)
    assert outcome.success, outcome.error_message
    assert outcome.call_id == 'fb'
    assert json.loads(outcome.content) == {'text': 'slow', 'delay_s': 0.6}
    progress = [value for stage, value, _ in pending.feedback if stage == 'running']
    assert len(progress) >= 3, pending.feedback  # ~10 reports a second
    assert progress == sorted(progress) and progress[0] < 0.5 and progress[-1] == 1.0


def test_cancelling_a_long_call_stops_it_with_cancelled(echo_server):
    proc, _, action = echo_server
    started = time.monotonic()
    pending = action.start({'delay_s': 20}, call_id='long')
    assert spin_until(action.node, lambda: bool(pending.feedback), 10.0)  # it is running
    assert pending.handle.cancel()
    outcome = action.finish(pending, timeout=10.0)
    assert outcome.error_code == ErrorCodes.CANCELLED, outcome
    assert 'cancelled after' in outcome.error_message
    assert time.monotonic() - started < 15.0  # not the 20 s delay
    assert action.call({'text': 'next'}).success  # the tool is free again
    assert proc.proc.poll() is None


def test_cancel_of_a_queued_goal_means_it_never_runs(echo_server):
    _, _, action = echo_server
    first = action.start({'delay_s': 1.0}, call_id='first')
    second = action.start({'text': 'never'}, call_id='second')
    assert spin_until(action.node, lambda: any(
        stage == 'queued' for stage, _, _ in second.feedback), 10.0), second.feedback
    second.handle.cancel()
    outcome = action.finish(second)
    assert outcome.error_code == ErrorCodes.CANCELLED
    assert 'did not run' in outcome.error_message
    assert action.finish(first).success


def test_service_and_action_callers_at_once_each_get_their_answer(echo_server):
    _, service, action = echo_server
    by_service = [service.start({'text': f's{i}', 'delay_s': 0.05}, call_id=f's{i}')
                  for i in range(5)]
    by_action = [action.start({'text': f'a{i}', 'delay_s': 0.05}, call_id=f'a{i}')
                 for i in range(5)]
    for caller, calls, prefix in ((service, by_service, 's'), (action, by_action, 'a')):
        for index, pending in enumerate(calls):
            outcome = caller.finish(pending)
            assert outcome.success, outcome.error_message
            assert outcome.call_id == f'{prefix}{index}'
            assert json.loads(outcome.content)['text'] == f'{prefix}{index}'


def test_shutdown_mid_call_still_answers_every_caller(echo_server):
    proc, service, action = echo_server
    running = action.start({'delay_s': 20}, call_id='running')
    assert spin_until(action.node, lambda: bool(running.feedback), 10.0)
    queued = service.start({'text': 'behind'}, call_id='queued')
    spin_until(action.node, lambda: False, 0.5)  # the request reaches the server
    assert proc.stop(signal.SIGINT) == 0, proc.output()
    assert spin_until(action.node, lambda: running.outcomes and queued.outcomes, 10.0), (
        proc.output())
    assert running.outcome.error_code == ErrorCodes.CANCELLED
    assert queued.outcome.error_code == ErrorCodes.CANCELLED
    assert 'did not run' in queued.outcome.error_message


def test_say_as_an_action_reports_queueing_and_reaches_the_wav_sink(start_node, ros_node,
                                                                    tmp_path):
    out = tmp_path / 'audio'
    server = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[say]',
                        '-p', 'tool.say.backend:=espeak_ng')
    speaker = start_node('lerobot_tools_ros.speaker.node', '-p', 'sink:=wav',
                         '-p', f'output_dir:={out}')
    assert spin_until(ros_node, lambda: ros_node.count_subscribers('/speaker/audio') >= 1
                      and ros_node.count_publishers('/speaker/status') >= 1, 30.0), (
        speaker.output())
    say = ready_caller(ros_node, server, '/lerobot_tools/say', ACTION, timeout=45.0)
    first = say.start({'text': 'first sentence'}, call_id='one')
    second = say.start({'text': 'second'}, call_id='two')
    results = [say.finish(pending, timeout=30.0) for pending in (first, second)]
    for outcome in results:
        assert outcome.success, outcome.error_message + server.output()
    stages = [stage for stage, _, _ in second.feedback]
    assert stages[:2] == ['queued', 'running'], second.feedback  # it waited for the first
    for outcome in results:
        path = out / f'{json.loads(outcome.content)["utterance_id"]}.wav'
        assert path.stat().st_size > 1000  # played (a say call lasts until) into a file


def test_record_observation_as_an_action_reports_saving(start_node, start_process, ros_node,
                                                        tmp_path):
    topic = f'/act{time.monotonic_ns()}/front'
    stream = {'topic': topic, 'kind': 'raw', 'encoding': 'rgb8', 'width': 32, 'height': 24}
    camera = start_process([sys.executable, str(pathlib.Path(__file__).parent /
                                                'camera_publisher.py'), json.dumps([stream])],
                           name='camera')
    out = tmp_path / 'obs'
    server = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[record_observation]',
                        '-p', f'tool.record_observation.cameras.front:={topic}',
                        '-p', f'tool.record_observation.output_dir:={out}')
    record = ready_caller(ros_node, server, '/lerobot_tools/record_observation', ACTION)
    assert spin_until(ros_node, lambda: ros_node.count_subscribers(topic) >= 1
                      and ros_node.count_publishers(topic) >= 1, 20.0), camera.output()
    spin_until(ros_node, lambda: False, 1.0)  # 20 frames/s: the tool holds a recent one
    pending = record.start({'label': 'act'}, call_id='rec')
    outcome = record.finish(pending)
    assert outcome.success, outcome.error_message + server.output()
    saving = [fb for fb in pending.feedback if fb[0] == 'saving']
    assert len(saving) == 1 and 'front' in saving[0][2], pending.feedback
    paths = json.loads(outcome.content)['paths']
    assert len(paths) == 1 and pathlib.Path(paths[0]).is_file()
    assert pathlib.Path(paths[0]).resolve().is_relative_to(out.resolve())


def test_a_slow_tool_does_not_block_another_tool(start_node, ros_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo, say]',
                      '-p', f'dataset:={echo_dataset}', '-p', 'tool.say.backend:=espeak_ng')
    # A say call lasts until a speaker played it (this one as fast as the audio comes).
    start_node('lerobot_tools_ros.speaker.node', '-p', 'sink:=null', '-p', 'realtime:=false')
    echo = ready_caller(ros_node, proc, '/lerobot_tools/echo', SERVICE)
    say = ready_caller(ros_node, proc, '/lerobot_tools/say', SERVICE)
    warm = say.call({'text': 'ready'}, call_id='warm', timeout=20.0)  # the speaker is matched
    assert warm.success, warm.error_message
    started = time.monotonic()
    slow = echo.start({'delay_s': 1.5}, call_id='slow')
    second_slow = echo.start({'delay_s': 0.1}, call_id='slow2')
    spoken = say.call({'text': 'meanwhile'}, call_id='say', timeout=10.0)
    assert spoken.success, spoken.error_message
    assert not slow.outcomes  # say answered while echo was still busy
    assert echo.finish(second_slow, timeout=10.0).success
    # Calls of one tool run one after another: the second echo waited for the first.
    assert slow.outcomes and time.monotonic() - started >= 1.5
    assert slow.outcome.success


def test_first_calls_to_fresh_executors_succeed_under_load(start_node, ros_node, echo_dataset):
    """
    A first call must not be lost while the executor's answers cannot reach us yet.

    Under a CPU hog, tool_server is started several times, and against each, fresh clients
    (a service one and an action one, new DDS endpoints each time) send their first call the
    moment they report ready: every one must be answered, with no retry anywhere.
    """
    hog = subprocess.Popen([sys.executable, '-c', 'while True: pass'])
    try:
        for start in range(4):
            proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
                              '-p', f'dataset:={echo_dataset}', '--log-level', 'warn')
            for attempt in range(25):
                key = f'{start}.{attempt}'
                callers = [Caller(ros_node, '/lerobot_tools/echo', mode)
                           for mode in (SERVICE, ACTION)]
                sent = {}

                def send_when_ready() -> bool:
                    """Send each caller's one call the moment its client is ready."""
                    for caller in callers:
                        if caller not in sent and caller.client.poll():
                            sent[caller] = caller.start({'text': key}, call_id=key)
                    return len(sent) == len(callers)
                assert spin_until(ros_node, send_when_ready, 60.0), proc.output()
                for caller in callers:
                    outcome = caller.finish(sent[caller], timeout=20.0)
                    assert outcome.success, (key, caller.client.kind, outcome)
                    assert json.loads(outcome.content) == {'text': key}
                    caller.client.destroy()
            assert proc.stop() == 0
    finally:
        hog.kill()
        hog.wait()


def test_unknown_tool_in_parameters_fails_with_a_clear_message(start_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.tool_server.node',
                      '-p', 'tools:=[ech]', '-p', f'dataset:={echo_dataset}')
    assert proc.proc.wait(30) == 78  # a configuration error: one line, status 78
    assert 'Traceback' not in proc.output()
    assert "did you mean 'echo'" in proc.output()


def test_tool_names_that_ros_forbids_map_to_valid_service_names():
    from lerobot_tools_ros.names import tool_service_name
    assert tool_service_name('lerobot_tools', 'say') == 'lerobot_tools/say'
    assert tool_service_name('/lerobot_tools/', 'pick-up.v2') == '/lerobot_tools/pick_up_v2'
    assert tool_service_name('', 'say') == 'say'


def test_catalog_tool_with_dashes_is_dispatched_to_its_mapped_service(start_node, ros_node,
                                                                      tmp_path):
    from lerobot_tools_interfaces.msg import ToolResult
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    root = tmp_path / 'dashes'
    (root / 'meta').mkdir(parents=True)
    pick_up = {'type': 'function', 'function': {
        'name': 'pick-up', 'parameters': {'type': 'object', 'properties': {}}}}
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [pick_up]}))
    proc = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={root}',
                      '-p', 'timeout_s:=0.5')
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    results = []
    ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append, qos)
    pub = ros_node.create_publisher(String, '/policy/text', qos)
    # A reliable publisher delivers once it has matched the subscriber: publish exactly once.
    assert spin_until(ros_node, lambda: pub.get_subscription_count() >= 1
                      and ros_node.count_publishers('/lerobot_tools/results') >= 1, 20.0), (
        proc.output())
    pub.publish(String(data='<tool_call>{"name": "pick-up", "arguments": {}}</tool_call>'))
    assert spin_until(ros_node, lambda: bool(results), 10.0), proc.output()
    assert results[0].error_code == ErrorCodes.UNAVAILABLE
    assert '/lerobot_tools/pick_up' in results[0].error_message


def test_third_party_tool_from_an_entry_point_is_served_over_dds(start_node, ros_node,
                                                                 ros_env, tmp_path):
    from test_tools_registry import install_distribution, WAVE_MODULE
    plugins = tmp_path / 'site'
    plugins.mkdir()
    install_distribution(plugins, 'wave = example_tool_pkg.wave:WaveTool\n',
                         {'wave': WAVE_MODULE})
    root = tmp_path / 'wave_dataset'
    (root / 'meta').mkdir(parents=True)
    wave = {'type': 'function', 'function': {'name': 'wave', 'parameters': {
        'type': 'object', 'properties': {'times': {'type': 'integer'}}}}}
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [wave]}))
    env = dict(ros_env, PYTHONPATH=f'{plugins}:{ros_env["PYTHONPATH"]}')
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[wave]',
                      '-p', f'dataset:={root}', env=env)
    wave = ready_caller(ros_node, proc, '/lerobot_tools/wave')
    outcome = wave.call({'times': 3}, call_id='w')
    assert outcome.success, outcome.error_message
    assert json.loads(outcome.content) == {'waved': 3, 'arm': 'left'}


def test_namespace_and_node_rename_move_the_services(start_node, ros_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.tool_server.node', '-r', '__ns:=/robot1',
                      '-r', '__node:=arm_tools', '-p', 'tools:=[echo]',
                      '-p', f'dataset:={echo_dataset}')
    echo = ready_caller(ros_node, proc, '/robot1/lerobot_tools/echo')
    # The action moved with the service.
    assert spin_until(ros_node, lambda: echo.client.poll() and echo.client.kind == ACTION, 10.0)
    assert echo.call({'text': 'ns'}).success
    expected = {('arm_tools', '/robot1'), ('arm_tools_echo', '/robot1')}  # + the tool's node

    def nodes() -> set:
        return set(ros_node.get_node_names_and_namespaces())
    assert spin_until(ros_node, lambda: expected <= nodes(), 10.0), nodes()


def _late_result_status(ros_node, wait_s: float) -> int:
    """Run an echo goal to its end; ask for its result again `wait_s` later; return the status."""
    from lerobot_tools_interfaces.action import RunTool
    from rclpy.action import ActionClient

    from conftest import prove_action
    client = ActionClient(ros_node, RunTool, '/lerobot_tools/echo')
    try:
        prove_action(ros_node, client, RunTool.Goal(name=':probe'))
        sent = client.send_goal_async(RunTool.Goal(call_id='late', name='echo',
                                                   arguments='{"text": "hi"}'))
        assert spin_until(ros_node, sent.done, 20.0) and sent.result().accepted
        handle = sent.result()
        first = handle.get_result_async()
        assert spin_until(ros_node, first.done, 20.0)
        assert first.result().result.success
        deadline = time.monotonic() + wait_s
        spin_until(ros_node, lambda: time.monotonic() >= deadline, wait_s + 1.0)
        late = handle.get_result_async()
        assert spin_until(ros_node, late.done, 20.0)
        return late.result().status
    finally:
        client.destroy()


def test_a_goal_result_is_kept_for_action_result_timeout_s(start_node, ros_node, echo_dataset):
    from action_msgs.msg import GoalStatus
    # The default (3 s): a result asked for 1.5 s after the goal ended is still there (with the
    # 1 s kept before, it was gone: status unknown, an empty result).
    proc = start_node('lerobot_tools_ros.tool_server.node',
                      '-p', 'tools:=[echo]', '-p', f'dataset:={echo_dataset}')
    assert _late_result_status(ros_node, 1.5) == GoalStatus.STATUS_SUCCEEDED, proc.output()
    proc.stop()
    # Set shorter, it is gone by then.
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
                      '-p', f'dataset:={echo_dataset}', '-p', 'action_result_timeout_s:=0.3')
    assert _late_result_status(ros_node, 1.5) == GoalStatus.STATUS_UNKNOWN, proc.output()


@pytest.fixture
def upstream_dataset(tmp_path) -> pathlib.Path:
    """Return a dataset as LeRobot writes it without tool annotations (no `tools`: say)."""
    root = tmp_path / 'upstream'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps(
        {'codebase_version': 'v3.0', 'fps': 30, 'features': {}}))
    return root


def test_the_packaged_parameters_host_what_an_upstream_dataset_declares(
        start_node, ros_node, upstream_dataset):
    server = start_node('lerobot_tools_ros.tool_server.node',
                        '--params-file', str(PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'),
                        '-p', f'dataset:={upstream_dataset}', '-p', 'tool.say.backend:=espeak_ng')
    start_node('lerobot_tools_ros.speaker.node', '-p', 'sink:=null', '-p', 'realtime:=false')
    say = ready_caller(ros_node, server, '/lerobot_tools/say', SERVICE, timeout=45.0)
    outcome = say.call({'text': 'hello'}, call_id='upstream-say', timeout=30.0)
    assert outcome.success, outcome.error_message + server.output()
    services = dict(ros_node.get_service_names_and_types())
    assert '/lerobot_tools/record_observation' not in services
    assert "not hosting 'record_observation': the catalog" in server.output()
    assert server.proc.poll() is None


def test_a_tool_server_with_no_declared_tool_to_host_refuses_to_start(start_node,
                                                                      upstream_dataset):
    server = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[record_observation]',
                        '-p', f'dataset:={upstream_dataset}')
    assert server.proc.wait(60) == 78, server.output()
    assert "none of the tools in parameter 'tools' (record_observation) is declared" in (
        server.output())
