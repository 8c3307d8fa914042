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

"""dispatcher + tool_server as real processes, driven over DDS like a policy would."""

import json
import pathlib
import random
import sys
import time

from conftest import PACKAGE_DIR, prove_service, spin_until
from lerobot_tools_interfaces.msg import ErrorCodes, TextChunk, ToolCall, ToolResult
from lerobot_tools_ros import names
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.dispatch import lerobot_atoms, read_audit_log
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import SetBool

RELIABLE = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)
DISPATCHER = 'lerobot_tools_ros.dispatcher.node'
TOOL_SERVER = 'lerobot_tools_ros.tool_server.node'


@pytest.fixture
def dataset(tmp_path) -> pathlib.Path:
    """Write a dataset declaring echo (text required: the <echo>...</echo> marker applies), say."""
    echo = json.loads(json.dumps(ECHO_SCHEMA))
    echo['function']['parameters']['required'] = ['text']
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps(
        {'codebase_version': 'v3.0', 'fps': 30, 'features': {}, 'tools': [echo, *DEFAULT_TOOLS]}))
    return root


class Policy:
    """The test's side of the graph: publishes generations, collects everything published."""

    def __init__(self, node, dispatcher=None) -> None:
        self.node = node
        self.dispatcher = dispatcher
        self.results: list[ToolResult] = []
        self.calls: list[ToolCall] = []
        self.chat: list[dict] = []
        self.text_pub = node.create_publisher(String, '/policy/text', RELIABLE)
        self.stream_pub = node.create_publisher(TextChunk, '/policy/text_stream', RELIABLE)
        self.subscriptions = [
            node.create_subscription(ToolResult, '/lerobot_tools/results', self.results.append,
                                     RELIABLE),
            node.create_subscription(ToolCall, '/lerobot_tools/calls', self.calls.append,
                                     RELIABLE),
            node.create_subscription(String, '/lerobot_tools/chat',
                                     lambda msg: self.chat.append(json.loads(msg.data)),
                                     RELIABLE)]
        self.set_enabled = node.create_client(SetBool, '/dispatcher/set_enabled')

    def wait_connected(self, proc) -> None:
        def matched(subscription) -> bool:
            count = getattr(subscription, 'get_publisher_count', None)  # Iron and newer
            return (count() if count else self.node.count_publishers(subscription.topic_name)) > 0

        ok = spin_until(self.node, lambda: (
            self.text_pub.get_subscription_count() > 0
            and self.stream_pub.get_subscription_count() > 0
            and all(matched(sub) for sub in self.subscriptions)), 30.0)
        assert ok, 'dispatcher did not come up:\n' + proc.output()
        # Matching is seen from this side first; a result published before the dispatcher's
        # writer has matched our reader would be lost (volatile QoS). Probe until one arrives.
        probe = '<tool_call>{"name": "connection_probe", "arguments": {}}</tool_call>'
        for _ in range(60):
            self.text_pub.publish(String(data=probe))
            if spin_until(self.node, lambda: bool(self.results), 0.5):
                break
        assert self.results, 'no result reached the test node:\n' + proc.output()
        spin_until(self.node, lambda: False, 0.2)
        self.results.clear()
        self.calls.clear()
        self.chat.clear()

    def say(self, text: str, expect: int, timeout: float = 20.0) -> list[ToolResult]:
        before = len(self.results)
        self.text_pub.publish(String(data=text))
        got_all = spin_until(self.node, lambda: len(self.results) >= before + expect, timeout)
        assert got_all, (f'expected {expect} result(s) for {text!r}, got '
                         f'{self.results[before:]}\n' + self.dispatcher.output()[-3000:])
        spin_until(self.node, lambda: False, 0.1)  # nothing extra may arrive
        got = self.results[before:]
        assert len(got) == expect, got
        return got

    def enable(self, on: bool) -> None:
        # Setting a state twice is setting it once: the request itself is the probe.
        assert prove_service(self.node, self.set_enabled, SetBool.Request(data=on)).success


@pytest.fixture
def stack(start_node, ros_node, dataset, tmp_path):
    """tool_server hosting echo, dispatcher, and the test's policy node."""

    def start(*dispatcher_args: str, server: bool = True):
        server_proc = None
        if server:
            server_proc = start_node(TOOL_SERVER, '-p', 'tools:=[echo]',
                                     '-p', f'dataset:={dataset}')
        dispatcher = start_node(DISPATCHER, '-p', f'dataset:={dataset}', *dispatcher_args)
        policy = Policy(ros_node, dispatcher)
        policy.wait_connected(dispatcher)
        if server:
            served = spin_until(ros_node, lambda: '/lerobot_tools/echo' in dict(
                ros_node.get_service_names_and_types()), 20.0)
            assert served, server_proc.output()
        return policy, dispatcher, server_proc
    return start


EVERY_FORMAT = {
    'lerobot_marker': 'Wave at the user.\n<echo>hi</echo>',
    'hermes': 'Plan.\n<tool_call>{"name": "echo", "arguments": {"text": "hi"}}</tool_call>',
    'openai_json': '{"tool_calls": [{"type": "function", "function": {"name": "echo", '
                   '"arguments": "{\\"text\\": \\"hi\\"}"}}]}',
    'llama_json': '<|python_tag|>{"name": "echo", "parameters": {"text": "hi"}}',
    'pythonic': '[echo(text="hi")]',
    'mistral': '[TOOL_CALLS][{"name": "echo", "arguments": {"text": "hi"}}]',
    'qwen3_coder_xml': '<tool_call>\n<function=echo>\n<parameter=text>\nhi\n</parameter>\n'
                       '</function>\n</tool_call>',
    'fenced_json': 'Here:\n```json\n{"name": "echo", "arguments": {"text": "hi"}}\n```',
}


def test_every_format_reaches_the_executor(stack):
    policy, _, _ = stack()
    for fmt, text in EVERY_FORMAT.items():
        (result,) = policy.say(text, expect=1)
        assert result.success, (fmt, result.error_code, result.error_message)
        assert result.name == 'echo'
        assert json.loads(result.content) == {'text': 'hi'}, fmt
        call = next(c for c in policy.calls if c.call_id == result.call_id)
        assert call.format == fmt
        assert json.loads(call.arguments) == {'text': 'hi'}


def test_errors_are_results_with_specific_codes(stack):
    policy, _, _ = stack('-p', 'allowed_tools:=[echo]')
    (bad,) = policy.say('<tool_call>{"name": "echo", "arguments": {"text": 5}}</tool_call>', 1)
    assert bad.error_code == ErrorCodes.INVALID_ARGUMENTS and 'text' in bad.error_message
    (unknown,) = policy.say('<tool_call>{"name": "ecko", "arguments": {}}</tool_call>', 1)
    assert unknown.error_code == ErrorCodes.UNKNOWN_TOOL and 'echo' in unknown.error_message
    (denied,) = policy.say('<say>hello</say>', 1)
    assert denied.error_code == ErrorCodes.NOT_ALLOWED and denied.name == 'say'
    (failed,) = policy.say('[echo(text="x", fail="motor stalled")]', 1)
    assert failed.error_code == ErrorCodes.EXECUTION_FAILED
    assert 'motor stalled' in failed.error_message
    (truncated,) = policy.say('<tool_call>{"name": "echo", "arguments": {"te', 1)
    assert truncated.error_code == ErrorCodes.PARSE_ERROR
    assert not any(r.success for r in (bad, unknown, denied, failed, truncated))


def test_pause_answers_paused_and_resume_works(stack):
    policy, _, _ = stack()
    policy.enable(False)
    (paused,) = policy.say('<echo>stop</echo>', 1)
    assert paused.error_code == ErrorCodes.PAUSED
    policy.enable(True)
    (ok,) = policy.say('<echo>go</echo>', 1)
    assert ok.success


def test_rate_limit_answers_immediately(stack):
    policy, _, _ = stack('-p', 'tool.echo.rate_limit_hz:=0.5', '-p', 'tool.echo.burst:=1')
    results = policy.say('<echo>a</echo><echo>b</echo><echo>c</echo>', 3)
    codes = sorted(r.error_code for r in results)
    assert codes == ['', ErrorCodes.RATE_LIMITED, ErrorCodes.RATE_LIMITED]


def test_full_queue_answers_busy(stack):
    policy, _, _ = stack('-p', 'max_pending:=1')
    results = policy.say('[echo(text="1", delay_s=0.5), echo(text="2")]', 2)
    by_text = {json.loads(r.arguments)['text']: r for r in results}
    assert by_text['1'].success
    assert by_text['2'].error_code == ErrorCodes.BUSY


def test_burst_of_1000_calls_gives_1000_results_each_once(stack):
    # Calls of echo run one after another; the timeout covers waiting in line, so it is set
    # far beyond what 1000 round trips take even on a loaded machine (no timing asserted here).
    policy, dispatcher, _ = stack('-p', 'max_pending:=2000', '-p', 'timeout_s:=120.0')
    for start in range(0, 1000, 10):
        calls = ''.join(f'<echo>{i}</echo>' for i in range(start, start + 10))
        policy.text_pub.publish(String(data=calls))
    assert spin_until(policy.node, lambda: len(policy.results) >= 1000, 120.0), \
        f'{len(policy.results)} results\n' + dispatcher.output()[-2000:]
    spin_until(policy.node, lambda: False, 0.5)
    ids = [r.call_id for r in policy.results]
    assert len(ids) == 1000 and len(set(ids)) == 1000
    failures = [(r.error_code, r.error_message[:100]) for r in policy.results if not r.success]
    assert not failures, (len(failures), failures[:3])
    assert sorted(int(json.loads(r.content)['text']) for r in policy.results) == list(range(1000))


def _executor_available(node, tool: str = 'echo'):
    """
    Return a function giving what the dispatcher's diagnostics last said of `tool`'s executor.

    'True', 'False', or None before any report: the dispatcher's own view of the graph.
    """
    from diagnostic_msgs.msg import DiagnosticArray
    last: dict[str, str] = {}

    def on_array(array) -> None:
        for status in array.status:
            if status.name.endswith(f': {tool}'):
                values = {kv.key: kv.value for kv in status.values}
                last['available'] = values['executor_available']
    node.create_subscription(DiagnosticArray, '/diagnostics', on_array, 10)
    return lambda: last.get('available')


def _wait_until_proven(policy, tool: str = 'echo') -> None:
    """Wait until the dispatcher has proven `tool`'s executor (its deadlines then time work)."""
    available = _executor_available(policy.node, tool)
    assert spin_until(policy.node, lambda: available() == 'True', 30.0), \
        policy.dispatcher.output()[-2000:]


def test_dead_executor_gives_unavailable_then_recovers(stack, start_node, dataset):
    policy, _, server = stack('-p', 'timeout_s:=1.0')
    available = _executor_available(policy.node)
    assert spin_until(policy.node, lambda: available() == 'True', 20.0)
    assert policy.say('<echo>up</echo>', 1)[0].success
    # Stopped (a kill -9 leaves the service in the graph for the DDS lease time, and a call
    # sent there ends in timeout: test_executor_killed_mid_call_gives_exactly_one_result).
    assert server.stop() == 0
    # Once the dispatcher's graph shows the executor gone, a call is answered unavailable (not
    # timeout): it waits its timeout for an executor, and none comes.
    assert spin_until(policy.node, lambda: available() == 'False', 20.0)
    (down,) = policy.say('<echo>down</echo>', 1, timeout=30.0)
    assert down.error_code == ErrorCodes.UNAVAILABLE, down.error_message
    assert 'no executor serves /lerobot_tools/echo' in down.error_message
    # A new executor: once the dispatcher has proven it, the first call succeeds.
    start_node(TOOL_SERVER, '-p', 'tools:=[echo]', '-p', f'dataset:={dataset}')
    assert spin_until(policy.node, lambda: available() == 'True', 30.0)
    (again,) = policy.say('<echo>again</echo>', 1)
    assert again.success, again.error_message


def test_slow_executor_times_out_once(stack):
    # Proven first: a deadline that passes before the dispatcher has proven a fresh executor
    # is `unavailable`, not a slow executor. The late answer comes at 4 s.
    policy, _, _ = stack('-p', 'tool.echo.timeout_s:=2.0')
    _wait_until_proven(policy)
    (slow,) = policy.say('[echo(text="s", delay_s=4.0)]', 1)
    assert slow.error_code == ErrorCodes.TIMEOUT, slow.error_message
    spin_until(policy.node, lambda: False, 3.0)
    assert [r.call_id for r in policy.results].count(slow.call_id) == 1


def test_streamed_input_split_at_random_points_gives_the_same_calls(stack):
    policy, _, _ = stack()
    text = ('I will greet.\n<echo>one</echo> then <tool_call>{"name": "echo", '
            '"arguments": {"text": "two"}}</tool_call> and [echo(text="three")]')
    expected = policy.say(text, 3)
    rng = random.Random(7)
    for generation in range(5):
        cuts = sorted(rng.sample(range(1, len(text)), 8))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        before = len(policy.results)
        for index, piece in enumerate(pieces):
            policy.stream_pub.publish(TextChunk(generation_id=f'g{generation}', text=piece,
                                                final=index == len(pieces) - 1))
        assert spin_until(policy.node, lambda: len(policy.results) >= before + 3, 20.0)
        got = policy.results[before:]
        assert [json.loads(r.content) for r in got] == \
            [json.loads(r.content) for r in expected]
        assert all(r.generation_id == f'g{generation}' for r in got)


def test_chat_messages_pair_every_call_with_its_result(stack):
    policy, _, _ = stack()
    policy.say('Greeting now.\n<echo>hello</echo>', 1)
    spin_until(policy.node, lambda: len(policy.chat) >= 2, 5.0)
    assistant, tool = policy.chat[-2:]
    assert assistant['role'] == 'assistant'
    assert assistant['content'].strip() == 'Greeting now.'
    (tool_call,) = assistant['tool_calls']
    assert tool_call['function'] == {'name': 'echo', 'arguments': {'text': 'hello'}}
    assert tool == {'role': 'tool', 'name': 'echo', 'tool_call_id': tool_call['id'],
                    'content': json.dumps({'text': 'hello'}, sort_keys=True)}


def test_audit_log_records_calls_and_exports_lerobot_atoms(stack, tmp_path):
    log = tmp_path / 'audit.jsonl'
    policy, dispatcher, _ = stack('-p', f'audit_log:={log}')
    policy.say('<echo>logged</echo>[echo(text="too")]', 2)
    dispatcher.stop()
    records = [r for r in read_audit_log(log) if r['name'] == 'echo']  # not the probe
    assert [r['event'] for r in records].count('call') == 2
    assert [r['event'] for r in records].count('result') == 2
    (atom,) = lerobot_atoms(records)
    assert {k: atom[k] for k in ('role', 'content', 'style', 'camera')} == {
        'role': 'assistant', 'content': None, 'style': None, 'camera': None}
    assert [c['function'] for c in atom['tool_calls']] == [
        {'name': 'echo', 'arguments': {'text': 'logged'}},
        {'name': 'echo', 'arguments': {'text': 'too'}}]


def test_audit_export_command_writes_atoms(tmp_path, capsys):
    from lerobot_tools_ros.cli import main
    log = tmp_path / 'audit.jsonl'
    log.write_text(
        json.dumps({'event': 'call', 'wall_time': 2.0, 'ros_time_ns': 2, 'call_id': 'b',
                    'generation_id': 'g2', 'name': 'say', 'arguments': {'text': 'later'}}) + '\n'
        + json.dumps({'event': 'call', 'wall_time': 1.0, 'ros_time_ns': 1, 'call_id': 'a',
                      'generation_id': 'g1', 'name': 'say', 'arguments': {'text': 'first'}})
        + '\n' + json.dumps({'event': 'result', 'call_id': 'a', 'success': True})
        + '\n' + json.dumps({'event': 'result', 'call_id': 'b', 'success': False}) + '\n')
    out = tmp_path / 'atoms.jsonl'
    assert main(['audit', 'export', str(log), '--lerobot', str(out)]) == 0
    atoms = [json.loads(line) for line in out.read_text().splitlines()]
    assert [a['tool_calls'][0]['function']['arguments']['text'] for a in atoms] == ['first']
    assert atoms[0]['timestamp'] == 1.0
    assert 'wrote 1 atom(s)' in capsys.readouterr().out
    assert main(['audit', 'export', str(log), '--lerobot', str(out), '--include-failed']) == 0
    atoms = [json.loads(line) for line in out.read_text().splitlines()]
    assert [a['tool_calls'][0]['function']['arguments']['text'] for a in atoms] == [
        'first', 'later']
    assert 'wrote 2 atom(s)' in capsys.readouterr().out
    assert main(['audit', 'export', str(tmp_path / 'missing'), '--lerobot', str(out)]) == 1
    assert 'audit_log' in capsys.readouterr().err


def test_diagnostics_report_per_tool_counts_and_availability(stack, ros_node):
    from diagnostic_msgs.msg import DiagnosticArray
    arrays: list = []
    ros_node.create_subscription(DiagnosticArray, '/diagnostics', arrays.append, 10)
    policy, _, _ = stack()
    policy.say('<echo>a</echo>[echo(text="b", fail="no")]', 2)

    def echo_status():
        for array in reversed(arrays):
            for status in array.status:
                if status.name.endswith(': echo'):
                    return {kv.key: kv.value for kv in status.values}
        return None
    assert spin_until(ros_node, lambda: (echo_status() or {}).get('calls') == '2', 5.0)
    values = echo_status()
    assert values['successes'] == '1'
    assert values['errors.execution_failed'] == '1'
    assert values['executor_available'] == 'True'
    assert float(values['latency_p50_ms']) > 0


def test_two_robots_diagnostics_on_one_topic_are_told_apart(start_node, ros_node):
    from diagnostic_msgs.msg import DiagnosticArray
    names: set = set()
    ros_node.create_subscription(DiagnosticArray, '/diagnostics', lambda array: names.update(
        status.name for status in array.status), 10)
    params = str(PACKAGE_DIR / 'config' / 'lerobot_tools.yaml')
    robots = [start_node('lerobot_tools_ros.dispatcher.node', '--params-file', params,
                         '-r', f'__ns:=/{robot}', name=robot) for robot in ('robot_a', 'robot_b')]
    wanted = {'/robot_a/dispatcher: say', '/robot_b/dispatcher: say'}
    assert spin_until(ros_node, lambda: wanted <= names, 30.0), (
        sorted(names), [robot.output()[-2000:] for robot in robots])
    assert not [name for name in names if name.startswith('dispatcher:')]


def test_reload_catalog_reports_what_changed(stack, ros_node, dataset):
    from std_srvs.srv import Trigger
    policy, _, _ = stack()
    info_path = dataset / 'meta' / 'info.json'
    info = json.loads(info_path.read_text())
    info['tools'] = [tool for tool in info['tools'] if tool['function']['name'] != 'say']
    info_path.write_text(json.dumps(info))
    reload = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, reload.service_is_ready, 10.0)
    future = reload.call_async(Trigger.Request())
    assert spin_until(ros_node, future.done, 10.0)
    assert future.result().success
    assert "removed ['say']" in future.result().message
    (gone,) = policy.say('<tool_call>{"name": "say", "arguments": {"text": "hi"}}</tool_call>', 1)
    assert gone.error_code == ErrorCodes.UNKNOWN_TOOL


def _dispatcher_clients_of(node, tool: str) -> list[str]:
    """Client names (CallTool, and the RunTool action's own) the dispatcher holds for `tool`."""
    service = f'/lerobot_tools/{tool}'
    return [name for name, _ in node.get_client_names_and_types_by_node('dispatcher', '/')
            if name == service or name.startswith(service + '/')]


def test_reload_that_removes_a_tool_destroys_its_executor_client(stack, ros_node, dataset):
    from std_srvs.srv import Trigger
    stack()
    assert spin_until(ros_node, lambda: len(_dispatcher_clients_of(ros_node, 'echo')) > 1, 20.0)
    assert _dispatcher_clients_of(ros_node, 'say')
    info_path = dataset / 'meta' / 'info.json'
    info = json.loads(info_path.read_text())
    info['tools'] = [tool for tool in info['tools'] if tool['function']['name'] != 'echo']
    info_path.write_text(json.dumps(info))
    reload = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, reload.service_is_ready, 10.0)
    future = reload.call_async(Trigger.Request())
    assert spin_until(ros_node, future.done, 20.0)
    assert future.result().success and "removed ['echo']" in future.result().message
    # Gone from the graph: before, every client ever created stayed until the node ended.
    assert spin_until(ros_node, lambda: not _dispatcher_clients_of(ros_node, 'echo'), 20.0), \
        _dispatcher_clients_of(ros_node, 'echo')
    assert _dispatcher_clients_of(ros_node, 'say')  # the tools kept keep theirs


def test_a_call_during_a_catalog_load_is_answered_before_the_reload_completes(
        stack, ros_node, dataset):
    import errno
    import os
    from std_srvs.srv import Trigger
    policy, dispatcher, _ = stack()
    available = _executor_available(ros_node)
    assert spin_until(ros_node, lambda: available() == 'True', 20.0)
    info_path = dataset / 'meta' / 'info.json'
    big = json.loads(info_path.read_text())
    big['tools'] += [{'type': 'function', 'function': {
        'name': f'tool_{i}', 'description': f'Tool {i}.', 'parameters': {
            'type': 'object', 'properties': {'target': {'type': 'string', 'maxLength': 64 + i}},
            'required': ['target']}}} for i in range(300)]  # more than get clients at once
    # A named pipe as info.json: the load blocks reading it until this test writes the catalog,
    # so "while the catalog is being loaded" is a state the test holds, not a race it times.
    info_path.unlink()
    os.mkfifo(info_path)
    reload = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, reload.service_is_ready, 10.0)
    reloaded = reload.call_async(Trigger.Request())
    writer = None

    def loading() -> bool:  # the dispatcher has the pipe open: it is reading the catalog
        nonlocal writer
        if writer is None:  # one writer only: a second would keep the pipe from ending
            try:
                writer = os.open(info_path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                assert exc.errno == errno.ENXIO, exc  # no reader yet
        return writer is not None
    try:
        assert spin_until(ros_node, loading, 20.0), dispatcher.output()[-2000:]
        policy.text_pub.publish(String(data='<echo>during the load</echo>'))
        assert spin_until(ros_node, lambda: len(policy.results) == 1, 20.0), \
            'the call waited for the catalog load\n' + dispatcher.output()[-2000:]
        # The order of events: the call has its result while the reload is still loading.
        assert not reloaded.done(), reloaded.result()
        assert policy.results[0].success, policy.results[0].error_message
        os.set_blocking(writer, True)
        os.write(writer, json.dumps(big).encode())
    finally:
        if writer is not None:
            os.close(writer)
    assert spin_until(ros_node, reloaded.done, 60.0), dispatcher.output()[-2000:]
    assert reloaded.result().success, reloaded.result().message
    assert "added ['tool_0', 'tool_1'" in reloaded.result().message
    (after,) = policy.say('<echo>after</echo>', 1)
    assert after.success, after.error_message


def test_unknown_format_name_fails_at_start_with_the_known_names(start_node, dataset):
    proc = start_node(DISPATCHER, '-p', f'dataset:={dataset}', '-p', 'formats:=[hermes, yaml]')
    assert proc.proc.wait(30) == 78  # a configuration error: one line
    assert 'Traceback' not in proc.output()
    assert "unknown format 'yaml'" in proc.output()
    assert 'hermes' in proc.output()


def test_streams_without_generation_ids_never_share_call_ids(stack):
    policy, _, _ = stack()
    for text in ('[echo(text="first", delay_s=0.5)]', '[echo(text="second")]'):
        policy.stream_pub.publish(TextChunk(generation_id='', text=text, final=True))
    assert spin_until(policy.node, lambda: len(policy.results) >= 2, 20.0), policy.results
    spin_until(policy.node, lambda: False, 0.3)
    assert len(policy.results) == 2
    assert len({r.call_id for r in policy.results}) == 2
    assert sorted(json.loads(r.content)['text'] for r in policy.results) == ['first', 'second']


def test_hostile_model_text_gets_results_and_the_dispatcher_survives(stack):
    policy, dispatcher, _ = stack()
    huge = '9' * 5000
    texts = [
        '<tool_call>{"name": "wave hand", "arguments": {}}</tool_call>',   # not a ROS name
        '<tool_call>{"name": "ec\\ud800ho", "arguments": {}}</tool_call>',  # lone surrogate
        '<tool_call>{"name": "echo", "arguments": {"text": "a\\udfffb"}}</tool_call>',
        '<tool_call>{"name": "echo", "arguments": {"text": "x", "delay_s": %s}}</tool_call>'
        % huge,
        '<tool_call>{"name": "echo", "arguments": {"text": "x", "delay_s": NaN}}</tool_call>',
        '[echo(text="x", delay_s=1e999)]',
    ]
    for text in texts:
        policy.say(text, 1)
    spin_until(policy.node, lambda: False, 1.5)  # a diagnostics cycle with those names
    assert dispatcher.proc.poll() is None, dispatcher.output()[-2000:]
    codes = [r.error_code for r in policy.results]
    assert codes == [ErrorCodes.UNKNOWN_TOOL, ErrorCodes.UNKNOWN_TOOL, '',
                     ErrorCodes.PARSE_ERROR, ErrorCodes.INVALID_ARGUMENTS,
                     ErrorCodes.INVALID_ARGUMENTS]
    assert policy.results[1].name == 'ec\ufffdho'  # the surrogate reached ROS replaced
    # The lone surrogate in an argument ran (echo) and came back as a JSON escape, no crash.
    assert policy.results[2].success
    assert json.loads(policy.results[2].content) == {'text': 'a\udfffb'}
    (ok,) = policy.say('<echo>still here</echo>', 1)
    assert ok.success


def test_pause_also_stops_calls_waiting_for_their_executor(stack):
    policy, _, _ = stack('-p', 'timeout_s:=30.0', server=False)
    policy.text_pub.publish(String(data='<echo>waiting</echo>'))
    spin_until(policy.node, lambda: False, 0.5)  # the call now waits for a tool_server
    assert policy.results == []
    policy.enable(False)
    assert spin_until(policy.node, lambda: len(policy.results) == 1, 5.0)
    assert policy.results[0].error_code == ErrorCodes.PAUSED
    assert 'waited for its executor' in policy.results[0].error_message


def test_queued_calls_time_out_without_waiting_for_their_turn(stack):
    # (0.6 s of slack for a: a loaded machine must not make it late)
    policy, _, _ = stack('-p', 'tool.echo.timeout_s:=2.0')
    _wait_until_proven(policy)  # a call that waits for its executor is in no queue yet
    results = policy.say('[echo(text="a", delay_s=1.4), echo(text="b", delay_s=1.4), '
                         'echo(text="c")]', 3, timeout=10.0)
    by_text = {json.loads(r.arguments)['text']: r for r in results}
    assert by_text['a'].success, by_text['a'].error_message
    # timeout_s covers the wait in the queue: b waited 1.4 s, then ran past 2.0 s in all.
    assert by_text['b'].error_code == ErrorCodes.TIMEOUT
    # c waited behind a and b longer than its timeout: answered without ever starting, and
    # its timeout is the one it had from the start (not a fresh one once its turn came).
    assert by_text['c'].error_code == ErrorCodes.TIMEOUT
    assert 'behind earlier' in by_text['c'].error_message
    waited = by_text['c'].duration.sec + by_text['c'].duration.nanosec / 1e9
    assert waited < 3.0  # its own 2 s (a fresh timeout from its turn at 2 s would end at 4 s)


def test_allowlist_can_change_while_running(stack, ros_node):
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter
    policy, _, _ = stack()
    client = ros_node.create_client(SetParameters, '/dispatcher/set_parameters')
    prove_service(ros_node, client, SetParameters.Request())  # sets nothing

    def set_parameter(parameter: Parameter) -> bool:
        request = SetParameters.Request(parameters=[parameter.to_parameter_msg()])
        future = client.call_async(request)
        assert spin_until(ros_node, future.done, 10.0)
        return future.result().results[0].successful

    assert set_parameter(Parameter('allowed_tools', Parameter.Type.STRING_ARRAY, ['say']))
    (denied,) = policy.say('<echo>now?</echo>', 1)
    assert denied.error_code == ErrorCodes.NOT_ALLOWED
    assert not set_parameter(Parameter('formats', Parameter.Type.STRING_ARRAY, ['yaml']))
    assert set_parameter(Parameter('allowed_tools', Parameter.Type.STRING_ARRAY, ['echo', 'say']))
    assert policy.say('<echo>now</echo>', 1)[0].success
    # Per-tool limits are declared parameters too (ros2 param list shows tool.echo.*).
    assert set_parameter(Parameter('tool.echo.rate_limit_hz', Parameter.Type.DOUBLE, 0.01))
    assert set_parameter(Parameter('tool.echo.burst', Parameter.Type.INTEGER, 1))
    assert not set_parameter(Parameter('tool.echo.timeout_s', Parameter.Type.DOUBLE, -2.0))
    codes = sorted(r.error_code for r in policy.say('<echo>1</echo><echo>2</echo>', 2))
    assert codes == ['', ErrorCodes.RATE_LIMITED]


def test_executor_killed_mid_call_gives_exactly_one_result(stack, start_node, dataset):
    from lerobot_tools_interfaces.msg import ToolProgress
    policy, _, server = stack('-p', 'tool.echo.timeout_s:=4.0')
    progress: list = []
    followed = policy.node.create_subscription(ToolProgress, '/lerobot_tools/progress',
                                               progress.append, 50)
    # The dispatcher relays progress only while someone follows it: be matched first.
    assert spin_until(policy.node, lambda: policy.node.count_publishers(followed.topic_name) > 0,
                      10.0)
    policy.text_pub.publish(String(data='[echo(text="in flight", delay_s=8.0)]'))
    # Killed once the call runs on the executor (its progress came back); killed before, the
    # call would wait for an executor and end unavailable, not timeout.
    assert spin_until(policy.node, lambda: bool(progress), 10.0), server.output()[-2000:]
    server.kill()
    assert spin_until(policy.node, lambda: len(policy.results) == 1, 10.0)
    assert policy.results[0].error_code == ErrorCodes.TIMEOUT
    spin_until(policy.node, lambda: False, 1.0)
    assert len(policy.results) == 1


def _pairs_are_well_formed(chat: list[dict]) -> None:
    """Each tool message answers a call listed by an earlier assistant message, once."""
    declared, answered = set(), set()
    for message in chat:
        if message['role'] == 'assistant':
            declared |= {call['id'] for call in message.get('tool_calls', [])}
        else:
            assert message['tool_call_id'] in declared, (message, chat)
            assert message['tool_call_id'] not in answered
            answered.add(message['tool_call_id'])
    assert answered == declared


def test_chat_pairs_unparseable_calls_and_streams_ending_inside_a_call(stack):
    policy, _, _ = stack()
    (broken,) = policy.say('Hi.\n<tool_call>{name: say, arguments: {text: hi}}</tool_call>', 1)
    assert broken.error_code == ErrorCodes.PARSE_ERROR
    for index, piece in enumerate(['Plan.\n<echo>done</echo><tool_call>{"name": "echo", ',
                                   '"arguments": {"te']):
        policy.stream_pub.publish(TextChunk(generation_id='cut', text=piece, final=index == 1))
    assert spin_until(policy.node, lambda: len(policy.results) >= 3, 10.0)
    assert spin_until(policy.node, lambda: len(policy.chat) >= 5, 5.0), policy.chat
    _pairs_are_well_formed(policy.chat)
    tool_errors = [m['content'] for m in policy.chat if m['role'] == 'tool']
    assert any(text.startswith('error (parse_error)') for text in tool_errors)


class _InProcess:
    """A dispatcher running in the test process (its log goes to the test's output)."""

    @staticmethod
    def output() -> str:
        return '(the dispatcher runs in the test process: see the captured log)'


def test_dispatcher_under_a_multithreaded_executor_gives_one_result_per_call(
        start_node, ros_node, ros_domain, dataset):
    # Fails when the node's state or its executor clients are reached from more than one thread
    # at a time: with a reentrant group and no lock (189 of 240 echo calls succeeded), or with a
    # reentrant group and the lock on rclpy 7, whose ActionClient does not lock its goal tables
    # (201 of 240; 93 of 240 when future callbacks still ran outside the group).
    import threading

    import rclpy
    from rclpy.executors import MultiThreadedExecutor
    from lerobot_tools_ros.dispatcher.node import Dispatcher

    server = start_node(TOOL_SERVER, '-p', 'tools:=[echo]', '-p', f'dataset:={dataset}')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    dispatcher = Dispatcher(context=context, cli_args=[
        '--ros-args', '-p', f'dataset:={dataset}', '-p', 'max_pending:=5000',
        '-p', 'tool.echo.timeout_s:=60.0'])
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    executor.add_node(dispatcher)
    failures: list[BaseException] = []

    def spin() -> None:
        try:
            executor.spin()
        except BaseException as exc:  # noqa: B902 - reported by the assertion below
            failures.append(exc)

    thread = threading.Thread(target=spin, daemon=True)
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between bytecodes: unguarded state races
    thread.start()
    try:
        policy = Policy(ros_node, _InProcess())
        policy.wait_connected(_InProcess())
        assert spin_until(ros_node, lambda: '/lerobot_tools/echo' in dict(
            ros_node.get_service_names_and_types()), 20.0), server.output()
        # Texts, streams, unknown tools and parse errors at once: threads race for the state.
        for batch in range(40):
            policy.text_pub.publish(String(data=''.join(
                f'<echo>{batch}-{i}</echo>' for i in range(5)) + '[nope()]'))
            policy.stream_pub.publish(TextChunk(generation_id=f's{batch}',
                                                text=f'<echo>s{batch}</echo><tool_call>{{',
                                                final=True))
        expected = 40 * (6 + 2)
        assert spin_until(ros_node, lambda: len(policy.results) >= expected, 120.0), \
            f'{len(policy.results)} of {expected} results; failures: {failures}'
        spin_until(ros_node, lambda: False, 0.5)
        ids = [r.call_id for r in policy.results]
        assert len(ids) == expected and len(set(ids)) == expected
        codes = [r.error_code for r in policy.results]
        assert codes.count('') == 40 * 6, [(r.error_code, r.error_message)
                                           for r in policy.results if r.error_code][:8]
        assert codes.count(ErrorCodes.UNKNOWN_TOOL) == 40
        assert codes.count(ErrorCodes.PARSE_ERROR) == 40
        assert failures == [] and thread.is_alive()
    finally:
        sys.setswitchinterval(switch_interval)
        executor.shutdown()
        dispatcher.destroy_node()
        rclpy.shutdown(context=context)
        thread.join(10)


def _call_tool(node, client, name: str, arguments: str, *, source: str = 'test_node',
               call_id: str = '', timeout: float = 20.0):
    from lerobot_tools_interfaces.srv import CallTool
    prove_service(node, client, CallTool.Request(name=names.READINESS_PROBE))
    future = client.call_async(CallTool.Request(call_id=call_id, name=name, arguments=arguments,
                                                source=source))
    assert spin_until(node, future.done, timeout), f'no answer from ~/call for {name}'
    return future.result()


def test_a_call_request_the_dispatcher_fails_to_take_is_answered_at_once(
        ros_node, ros_domain, dataset, monkeypatch):
    # A fault inside the dispatcher (a bug, injected here) left the ~/call request waiting until
    # the dispatcher shut down; now it is answered, and the next request is served as usual.
    import threading

    import rclpy
    from rclpy.executors import MultiThreadedExecutor
    from lerobot_tools_interfaces.srv import CallTool
    from lerobot_tools_ros.dispatch.core import DispatchCore
    from lerobot_tools_ros.dispatcher.node import Dispatcher

    take = DispatchCore.submit
    faults: list[str] = []

    def submit(core, *args, **kwargs):
        if not faults:
            faults.append('once')
            raise RuntimeError('injected fault')
        return take(core, *args, **kwargs)

    monkeypatch.setattr(DispatchCore, 'submit', submit)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    dispatcher = Dispatcher(context=context, cli_args=['--ros-args', '-p', f'dataset:={dataset}'])
    executor = MultiThreadedExecutor(num_threads=2, context=context)
    executor.add_node(dispatcher)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        client = ros_node.create_client(CallTool, '/dispatcher/call')
        failed = _call_tool(ros_node, client, 'nope', '{}')
        assert failed.error_code == ErrorCodes.UNAVAILABLE, failed.error_message
        assert ('the dispatcher failed to take the call (RuntimeError: injected fault; a bug, '
                'please report it); nothing was run') == failed.error_message
        served = _call_tool(ros_node, client, 'nope', '{}')
        assert served.error_code == ErrorCodes.UNKNOWN_TOOL, served.error_message
    finally:
        executor.shutdown()
        dispatcher.destroy_node()
        rclpy.shutdown(context=context)
        thread.join(10)


def test_call_service_runs_calls_through_the_same_gates(stack, ros_node):
    from lerobot_tools_interfaces.srv import CallTool
    policy, _, _ = stack('-p', 'allowed_tools:=[echo]')
    client = ros_node.create_client(CallTool, '/dispatcher/call')
    ok = _call_tool(ros_node, client, 'echo', '{"text": "from a node"}', call_id='bt-1')
    assert ok.success, ok.error_message
    assert (ok.call_id, json.loads(ok.content)) == ('bt-1', {'text': 'from a node'})
    # The same call is on the calls and results topics, with its source.
    assert spin_until(ros_node, lambda: any(r.call_id == 'bt-1' for r in policy.results), 5.0)
    (result,) = [r for r in policy.results if r.call_id == 'bt-1']
    assert result.success and result.source == 'test_node' and result.generation_id == ''
    (announced,) = [c for c in policy.calls if c.call_id == 'bt-1']
    assert announced.source == 'test_node' and json.loads(announced.arguments) == {
        'text': 'from a node'}
    # ... and in the chat, an assistant message naming it, then its tool message.
    assert spin_until(ros_node, lambda: len(policy.chat) >= 2, 5.0)
    assistant, tool = policy.chat[:2]
    assert assistant['source'] == tool['source'] == 'test_node'
    assert assistant['tool_calls'][0]['id'] == tool['tool_call_id'] == 'bt-1'
    # The readiness probes `_call_tool` sent first made no call: nothing announced or answered.
    assert prove_service(ros_node, client, CallTool.Request(
        call_id='p', name=names.READINESS_PROBE)).success
    spin_until(ros_node, lambda: False, 0.3)
    assert [c.call_id for c in policy.calls] == ['bt-1']
    assert [r.call_id for r in policy.results] == ['bt-1'] and len(policy.chat) == 2

    # The gates: allowlist, validation, unknown tools, JSON, pause.
    denied = _call_tool(ros_node, client, 'say', '{"text": "hi"}')
    assert denied.error_code == ErrorCodes.NOT_ALLOWED and denied.call_id
    bad = _call_tool(ros_node, client, 'echo', '{"text": 5}')
    assert bad.error_code == ErrorCodes.INVALID_ARGUMENTS and 'text' in bad.error_message
    unknown = _call_tool(ros_node, client, 'ecko', '{}')
    assert unknown.error_code == ErrorCodes.UNKNOWN_TOOL and 'echo' in unknown.error_message
    not_json = _call_tool(ros_node, client, 'echo', '{"text": ')
    assert not_json.error_code == ErrorCodes.INVALID_ARGUMENTS and 'JSON' in not_json.error_message
    policy.enable(False)
    paused = _call_tool(ros_node, client, 'echo', '{"text": "x"}')
    assert paused.error_code == ErrorCodes.PAUSED
    policy.enable(True)
    # Policy text keeps source 'policy'; every ~/call answer was also published, once.
    (from_policy,) = policy.say('<echo>policy</echo>', 1)
    assert from_policy.success and from_policy.source == 'policy'
    spin_until(ros_node, lambda: False, 0.3)
    ids = [r.call_id for r in policy.results]
    assert len(ids) == len(set(ids)) == 7


def test_call_service_waits_for_slow_calls_without_blocking_policy_text(stack, ros_node):
    from lerobot_tools_interfaces.srv import CallTool
    policy, _, _ = stack()
    client = ros_node.create_client(CallTool, '/dispatcher/call')
    prove_service(ros_node, client, CallTool.Request(name=names.READINESS_PROBE))
    slow = client.call_async(CallTool.Request(name='echo', source='ui',
                                              arguments='{"text": "slow", "delay_s": 1.5}'))
    spin_until(ros_node, lambda: False, 0.3)
    # The dispatcher keeps handling policy text while a ~/call request waits for its result.
    (other,) = policy.say('<tool_call>{"name": "wave", "arguments": {}}</tool_call>', 1,
                          timeout=1.0)
    assert other.error_code == ErrorCodes.UNKNOWN_TOOL and not slow.done()
    assert spin_until(ros_node, slow.done, 10.0)
    assert slow.result().success and json.loads(slow.result().content)['text'] == 'slow'


def test_the_same_say_ten_times_in_two_seconds_is_spoken_once(stack, start_node, ros_node,
                                                              dataset):
    from lerobot_tools_interfaces.msg import AudioChunk
    start_node(TOOL_SERVER, '-p', 'tools:=[echo, say]', '-p', 'tool.say.backend:=espeak_ng',
               '-p', f'dataset:={dataset}')
    # A say call lasts until a speaker played it (this one as fast as the audio comes).
    start_node('lerobot_tools_ros.speaker.node', '-p', 'sink:=null', '-p', 'realtime:=false')
    utterances: set[str] = set()
    ros_node.create_subscription(AudioChunk, '/speaker/audio',
                                 lambda msg: utterances.add(msg.utterance_id), RELIABLE)
    # A tight rate budget: duplicates must be recognised before it and use none of it.
    policy, dispatcher, _ = stack('-p', 'tool.say.rate_limit_hz:=0.5', '-p', 'tool.say.burst:=1',
                                  server=False)
    assert spin_until(ros_node, lambda: '/lerobot_tools/say' in dict(
        ros_node.get_service_names_and_types()), 20.0)
    # Our audio subscription must have matched say's publisher, or the utterance is missed.
    assert spin_until(ros_node, lambda: ros_node.count_publishers('/speaker/audio') > 0, 20.0)
    spin_until(ros_node, lambda: False, 0.5)
    for _ in range(10):  # a VLA emits the marker with every action chunk
        policy.text_pub.publish(String(data='Moving.\n<say>On it.</say>'))
        spin_until(ros_node, lambda: False, 0.2)
    assert spin_until(ros_node, lambda: len(policy.results) >= 10, 30.0), \
        dispatcher.output()[-2000:]
    assert spin_until(ros_node, lambda: len(utterances) >= 1, 10.0)
    spin_until(ros_node, lambda: len(utterances) > 1, 1.0)
    spoken = [r for r in policy.results if r.success]
    duplicates = [r for r in policy.results if r.error_code == ErrorCodes.DUPLICATE]
    assert len(spoken) == 1 and len(duplicates) == 9, [r.error_code for r in policy.results]
    assert all(spoken[0].call_id in r.error_message for r in duplicates)
    assert len(utterances) == 1  # the speaker got one utterance
    # Another sentence is not a duplicate; it waits for the rate budget only.
    (other,) = policy.say('<say>Done.</say>', 1, timeout=30.0)
    assert other.success, other.error_message


class Operator:
    """The operator's side: approval requests seen, decisions sent to ~/approve."""

    def __init__(self, node) -> None:
        from lerobot_tools_interfaces.msg import ApprovalRequest
        from lerobot_tools_interfaces.srv import Approve
        from rclpy.qos import DurabilityPolicy
        self.node = node
        self.requests: list = []
        node.create_subscription(
            ApprovalRequest, '/lerobot_tools/approval_requests', self.requests.append,
            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.client = node.create_client(Approve, '/dispatcher/approve')
        self.Approve = Approve

    def wait_for(self, count: int) -> list:
        assert spin_until(self.node, lambda: len(self.requests) >= count, 10.0), self.requests
        return self.requests[-count:]

    def decide(self, call_id: str, approve: bool, note: str = 'test operator'):
        # Deciding on no call changes nothing: the probe.
        prove_service(self.node, self.client, self.Approve.Request(call_id='no-such-call'))
        future = self.client.call_async(self.Approve.Request(call_id=call_id, approve=approve,
                                                             note=note))
        assert spin_until(self.node, future.done, 10.0)
        return future.result()


def test_confirm_calls_wait_for_approval_deny_timeout_and_pause(stack, ros_node, tmp_path):
    log = tmp_path / 'audit.jsonl'
    policy, dispatcher, _ = stack('-p', 'tool.echo.approval:=confirm',
                                  '-p', 'tool.echo.timeout_s:=3.0', '-p', f'audit_log:={log}',
                                  '-p', 'serialize_per_tool:=false')
    operator = Operator(ros_node)
    policy.text_pub.publish(String(data='<echo>approve me</echo><echo>deny me</echo>'))
    first, second = operator.wait_for(2)
    assert (first.name, json.loads(first.arguments), first.source) == (
        'echo', {'text': 'approve me'}, 'policy')
    assert 'approval: confirm' in first.reason
    assert (first.timeout.sec, first.timeout.nanosec) == (3, 0)
    assert policy.results == []  # nothing runs before a decision
    assert operator.decide(first.call_id, True, 'alice at the console').success
    assert operator.decide(second.call_id, False, 'bob: arm is near a person').success
    assert spin_until(ros_node, lambda: len(policy.results) >= 2, 10.0)
    by_id = {r.call_id: r for r in policy.results}
    assert by_id[first.call_id].success
    assert by_id[second.call_id].error_code == ErrorCodes.DENIED
    assert 'bob: arm is near a person' in by_id[second.call_id].error_message
    assert not operator.decide(second.call_id, True).success  # decided already

    # No decision in time: approval_timeout, counted against the call's timeout (3 s).
    (timed_out,) = policy.say('<echo>nobody answers</echo>', 1, timeout=10.0)
    assert timed_out.error_code == ErrorCodes.APPROVAL_TIMEOUT
    assert 2.5 < timed_out.duration.sec + timed_out.duration.nanosec / 1e9 < 6.0
    # Pause while a call waits: paused.
    policy.text_pub.publish(String(data='<echo>pause me</echo>'))
    operator.wait_for(4)
    policy.enable(False)
    assert spin_until(ros_node, lambda: len(policy.results) >= 4, 5.0)
    assert policy.results[-1].error_code == ErrorCodes.PAUSED
    assert 'approval' in policy.results[-1].error_message
    policy.enable(True)

    dispatcher.stop()
    decisions = [r for r in read_audit_log(log) if r['event'] == 'approval']
    assert [(d['call_id'], d['approved'], d['decided_by']) for d in decisions] == [
        (first.call_id, True, 'alice at the console'),
        (second.call_id, False, 'bob: arm is near a person')]


def test_burst_mixing_every_path_gives_one_result_per_call(stack, start_node, ros_node,
                                                           dataset):
    from lerobot_tools_interfaces.srv import CallTool
    policy, dispatcher, _ = stack(
        '-p', 'tool.echo.approval:=confirm', '-p', 'tool.echo.timeout_s:=2.0',
        '-p', 'tool.say.repeat_window_s:=5.0', '-p', 'tool.say.rate_limit_hz:=1.0',
        '-p', 'tool.say.timeout_s:=1.0', '-p', 'max_pending:=20')
    operator = Operator(ros_node)
    client = ros_node.create_client(CallTool, '/dispatcher/call')
    prove_service(ros_node, client, CallTool.Request(name=names.READINESS_PROBE))
    answers = []
    texts = ['<echo>a</echo><say>same</say>', '<say>same</say>[nope()]',
             '<tool_call>{"name": "echo", "arguments": {"te', '<echo>b</echo><echo>c</echo>']
    for round_ in range(6):
        for text in texts:
            policy.text_pub.publish(String(data=text))
        policy.stream_pub.publish(TextChunk(generation_id=f's{round_}', final=True,
                                            text='<say>same</say><echo>s</echo>'))
        answers.append(client.call_async(CallTool.Request(name='echo', source='bt',
                                                          arguments='{"text": "call"}')))
        spin_until(ros_node, lambda: False, 0.2)
        for request in list(operator.requests):  # approve some, deny some, leave the rest
            if request.call_id.endswith(('0', '1', '2', '3')):
                operator.decide(request.call_id, True)
            elif request.call_id.endswith(('4', '5', '6')):
                operator.decide(request.call_id, False)
        operator.requests.clear()
        if round_ == 3:
            policy.enable(False)
            spin_until(ros_node, lambda: False, 0.2)
            policy.enable(True)
    expected = 6 * (2 + 2 + 1 + 2 + 2 + 1)  # calls and unparseable calls, ~/call included
    assert spin_until(ros_node, lambda: len(policy.results) >= expected, 30.0), \
        f'{len(policy.results)} of {expected}\n' + dispatcher.output()[-3000:]
    assert spin_until(ros_node, lambda: all(a.done() for a in answers), 10.0)
    spin_until(ros_node, lambda: False, 1.0)
    ids = [r.call_id for r in policy.results]
    assert len(ids) == expected and len(set(ids)) == expected
    codes = {r.error_code for r in policy.results}
    assert {ErrorCodes.DUPLICATE, ErrorCodes.DENIED, ErrorCodes.UNKNOWN_TOOL,
            ErrorCodes.PARSE_ERROR} <= codes
    by_id = {r.call_id: r for r in policy.results}
    for answer in answers:  # each ~/call answer is its published result
        response = answer.result()
        assert by_id[response.call_id].error_code == response.error_code
        assert by_id[response.call_id].source == 'bt'


def test_approve_command_lists_pending_calls_and_approves_one(stack, start_process, ros_node):
    policy, _, _ = stack('-p', 'tool.echo.approval:=confirm', '-p', 'tool.echo.timeout_s:=60.0')
    operator = Operator(ros_node)
    policy.text_pub.publish(String(data='<echo>lift the cup</echo>'))
    (request,) = operator.wait_for(1)
    cli = [sys.executable, '-m', 'lerobot_tools_ros.cli', 'approve']
    listing = start_process(cli, name='approve-list')
    assert listing.proc.wait(30) == 0, listing.output()
    assert request.call_id in listing.output() and 'lift the cup' in listing.output()
    decide = start_process(cli + [request.call_id, '--note', 'carol'], name='approve-one')
    assert decide.proc.wait(30) == 0, decide.output()
    assert 'approved' in decide.output()
    assert spin_until(ros_node, lambda: len(policy.results) == 1, 10.0)
    assert policy.results[0].success and policy.results[0].call_id == request.call_id
    again = start_process(cli + [request.call_id], name='approve-again')
    assert again.proc.wait(30) == 1 and 'no call' in again.output()
    empty = start_process(cli, name='approve-empty')
    assert empty.proc.wait(30) == 0 and 'no calls are waiting' in empty.output()


def test_a_full_disk_under_the_audit_log_never_stops_dispatching(stack, ros_node):
    from diagnostic_msgs.msg import DiagnosticArray
    arrays: list = []
    ros_node.create_subscription(DiagnosticArray, '/diagnostics', arrays.append, 10)
    # /dev/full: every write ends in ENOSPC, as on a full disk.
    started = time.monotonic()
    # 300 calls at once: on a loaded machine the last waits longer than the default 10 s
    # timeout for its turn, and a timeout is not what this test is about.
    policy, dispatcher, _ = stack('-p', 'audit_log:=/dev/full', '-p', 'max_pending:=1000',
                                  '-p', 'timeout_s:=300.0')
    for start in range(0, 300, 10):
        policy.text_pub.publish(String(data=''.join(
            f'<echo>{i}</echo>' for i in range(start, start + 10))))
    assert spin_until(ros_node, lambda: len(policy.results) >= 300, 300.0), \
        f'{len(policy.results)} results\n' + dispatcher.output()[-2000:]
    failed = [(r.error_code, r.error_message) for r in policy.results if not r.success]
    assert not failed, f'{len(failed)} failed, e.g. {failed[:3]}'

    def audit_failures() -> int:
        for array in reversed(arrays):
            for status in array.status:
                if status.name.endswith(': audit_log'):
                    return int({kv.key: kv.value for kv in status.values}['write_failures'])
        return 0
    assert spin_until(ros_node, lambda: audit_failures() > 0, 5.0)
    assert dispatcher.proc.poll() is None
    lines = [line for line in dispatcher.output().splitlines() if 'audit log /dev/full' in line]
    assert lines and 'No space left on device' in lines[0]
    # Rate limited: at most one line per 10 s after the first (test_audit.py tests the limit
    # with a fake clock), not one per lost record.
    assert len(lines) <= 1 + (time.monotonic() - started) // 10.0, lines


def test_an_audit_log_that_cannot_be_opened_is_one_clear_line(start_node, dataset):
    proc = start_node(DISPATCHER, '-p', f'dataset:={dataset}',
                      '-p', 'audit_log:=/proc/self/no/audit.jsonl')
    assert proc.proc.wait(30) == 78
    output = proc.output()
    assert "audit_log '/proc/self/no/audit.jsonl' cannot be opened" in output
    assert 'Traceback' not in output


def test_unfinished_streams_are_bounded_and_each_gets_its_result(stack):
    policy, dispatcher, _ = stack('-p', 'max_open_streams:=2')
    for index in range(5):  # five generations that never send final
        policy.stream_pub.publish(TextChunk(generation_id=f'open{index}',
                                            text=f'<echo>never finished {index}', final=False))
    assert spin_until(policy.node, lambda: len(policy.results) >= 3, 10.0), \
        dispatcher.output()[-2000:]
    spin_until(policy.node, lambda: False, 0.3)
    assert sorted(r.generation_id for r in policy.results) == ['open0', 'open1', 'open2']
    assert all(r.error_code == ErrorCodes.PARSE_ERROR and 'max_open_streams' in r.error_message
               for r in policy.results)
    for index in (3, 4):  # the two still open finish normally
        policy.stream_pub.publish(TextChunk(generation_id=f'open{index}', text='</echo>',
                                            final=True))
    assert spin_until(policy.node, lambda: len(policy.results) >= 5, 10.0)
    assert all(r.success for r in policy.results[3:])


def test_cancel_answers_queued_and_running_calls_once(stack, ros_node):
    from lerobot_tools_interfaces.srv import CancelCalls
    policy, _, _ = stack('-p', 'tool.echo.timeout_s:=20.0')
    client = ros_node.create_client(CancelCalls, '/dispatcher/cancel')
    prove_service(ros_node, client, CancelCalls.Request(call_id='no-such-call'))
    from lerobot_tools_interfaces.msg import ToolProgress
    progress = []
    ros_node.create_subscription(ToolProgress, '/lerobot_tools/progress', progress.append, 50)
    policy.text_pub.publish(String(data='[echo(text="long", delay_s=5), echo(text="queued")]'))
    assert spin_until(ros_node, lambda: len(policy.calls) >= 2, 10.0)
    # The first call runs on its executor once its own progress comes back (the second queues).
    first = policy.calls[0].call_id
    assert spin_until(ros_node, lambda: any(p.call_id == first for p in progress), 10.0)
    generation = policy.calls[0].generation_id
    future = client.call_async(CancelCalls.Request(generation_id=generation))
    assert spin_until(ros_node, future.done, 10.0)
    answer = future.result()
    assert answer.success and len(answer.cancelled_call_ids) == 2
    assert spin_until(ros_node, lambda: len(policy.results) >= 2, 5.0)
    spin_until(ros_node, lambda: False, 2.0)  # the executor's late answer adds nothing
    assert sorted(r.call_id for r in policy.results) == sorted(answer.cancelled_call_ids)
    assert all(r.error_code == ErrorCodes.CANCELLED for r in policy.results)
    messages = sorted(r.error_message for r in policy.results)
    assert 'before it started' in messages[0] and 'while it ran' in messages[1]
    # The tool is free again once the executor finished the cancelled call.
    assert policy.say('<echo>after</echo>', 1)[0].success
    nothing = client.call_async(CancelCalls.Request(call_id='no-such-call'))
    assert spin_until(ros_node, nothing.done, 10.0)
    assert not nothing.result().success
