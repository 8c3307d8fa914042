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
One bad input ends one request: hostile requests, catalogs, audit logs and files.

Tried on real processes (dispatcher and tool_server over DDS, the CLI) the way an adversary
would.

Each of these once killed or blocked the dispatcher: a 2 KB ``~/call`` of nested
brackets, a catalog schema with a ``$ref`` loop, a ``format: regex`` argument that exhausts
the stack, a catalog ``pattern`` that backtracks, an audit log on a pipe nobody reads, an
``info.json`` that is ``/dev/zero``, a bindings file nested 5,000 deep.
"""

import json
import os
import pathlib
import resource
import subprocess
import sys

from conftest import prove_service, spin_until
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lerobot_tools_interfaces.msg import ErrorCodes, ToolCall, ToolResult
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import limits, names
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import SetBool

RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
DISPATCHER = 'lerobot_tools_ros.dispatcher.node'
TOOL_SERVER = 'lerobot_tools_ros.tool_server.node'


def _tool(name: str, properties: dict, **parameters) -> dict:
    return {'type': 'function', 'function': {'name': name, 'description': name, 'parameters': {
        'type': 'object', 'properties': properties, **parameters}}}


REF_LOOP = _tool('loop', {'x': {'$ref': '#/$defs/a'}}, **{'$defs': {'a': {'$ref': '#/$defs/a'}}})
REGEX_ARGUMENT = _tool('find', {'expr': {'type': 'string', 'format': 'regex'}}, required=['expr'])
BACKTRACKING = _tool('code', {'code': {'type': 'string', 'pattern': '^(a+)+$'}}, required=['code'])


def _dataset(tmp_path: pathlib.Path, *extra: dict) -> pathlib.Path:
    echo = json.loads(json.dumps(ECHO_SCHEMA))
    echo['function']['parameters']['required'] = ['text']
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True, exist_ok=True)
    (root / 'meta' / 'info.json').write_text(json.dumps(
        {'codebase_version': 'v3.0', 'fps': 30, 'features': {},
         'tools': [echo, *DEFAULT_TOOLS, *extra]}))
    return root


class Caller:
    """A node on the graph that sends ~/call requests and watches what the dispatcher says."""

    def __init__(self, node, dispatcher) -> None:
        self.node = node
        self.dispatcher = dispatcher
        self.client = node.create_client(CallTool, '/dispatcher/call')
        self.set_enabled = node.create_client(SetBool, '/dispatcher/set_enabled')
        self.results: list[ToolResult] = []
        self.calls: list[ToolCall] = []
        node.create_subscription(ToolResult, '/lerobot_tools/results', self.results.append,
                                 RELIABLE)
        node.create_subscription(ToolCall, '/lerobot_tools/calls', self.calls.append, RELIABLE)
        prove_service(node, self.client, CallTool.Request(name=names.READINESS_PROBE),
                      output=dispatcher.output)

    def call(self, name: str, arguments: str, *, call_id: str = '', timeout: float = 30.0):
        future = self.client.call_async(CallTool.Request(call_id=call_id, name=name,
                                                         arguments=arguments, source='test'))
        answered = spin_until(self.node, future.done, timeout)
        assert answered, (f'~/call {name[:40]!r} got no answer (dispatcher alive: '
                          f'{self.dispatcher.proc.poll() is None})\n'
                          + self.dispatcher.output()[-3000:])
        return future.result()

    def still_works(self) -> None:
        """Check that the dispatcher is alive and answers a good call and the e-stop."""
        ok = self.call('echo', '{"text": "still here"}')
        assert ok.success, (ok.error_code, ok.error_message)
        assert json.loads(ok.content) == {'text': 'still here'}
        paused = prove_service(self.node, self.set_enabled, SetBool.Request(data=False),
                               timeout=10.0, output=self.dispatcher.output)
        assert paused.success
        assert self.dispatcher.proc.poll() is None


@pytest.fixture
def stack(start_node, ros_node, tmp_path):
    """tool_server hosting echo and a dispatcher with the given extra catalog tools."""

    def start(*extra: dict, dispatcher_args: tuple = ()) -> Caller:
        root = _dataset(tmp_path, *extra)
        start_node(TOOL_SERVER, '-p', 'tools:=[echo]', '-p', f'dataset:={root}')
        dispatcher = start_node(DISPATCHER, '-p', f'dataset:={root}', *dispatcher_args)
        caller = Caller(ros_node, dispatcher)
        served = spin_until(ros_node, lambda: '/lerobot_tools/echo' in dict(
            ros_node.get_service_names_and_types()), 20.0)
        assert served
        return caller
    return start


def test_a_call_request_of_990_nested_brackets_ends_that_request_only(stack):
    caller = stack()
    deep = '{"text": ' + '[' * 990 + ']' * 990 + '}'  # 2 KB: once a RecursionError that
    bad = caller.call('echo', deep)                       # ended the dispatcher process
    assert bad.error_code == ErrorCodes.INVALID_ARGUMENTS, bad.error_message
    assert f'more than {limits.MAX_ARGUMENT_DEPTH} levels deep' in bad.error_message
    # Deep values inside a JSON string (double-encoded arguments) are held to the same limit.
    nested = caller.call('echo', json.dumps(deep))
    assert nested.error_code == ErrorCodes.INVALID_ARGUMENTS, nested.error_message
    caller.still_works()


def test_call_requests_are_bounded_like_the_mcp_server(stack):
    caller = stack()
    big = json.dumps({'text': 'x' * (limits.MAX_ARGUMENT_BYTES + 1)})
    too_large = caller.call('echo', big, call_id='big-1')
    assert too_large.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert f'at most {limits.MAX_ARGUMENT_BYTES}' in too_large.error_message
    assert 'MCP server' in too_large.error_message
    # The announcement of the refused call carries a cut copy, not the 64 KB it was sent.
    assert spin_until(caller.node, lambda: any(c.call_id == 'big-1' for c in caller.calls), 5.0)
    (announced,) = [c for c in caller.calls if c.call_id == 'big-1']
    assert len(announced.arguments) < 1000
    # Exactly at the limit is accepted (the bound is on bytes, as the MCP server counts them).
    text = 'y' * (limits.MAX_ARGUMENT_BYTES - len(json.dumps({'text': ''})))
    at_limit = caller.call('echo', json.dumps({'text': text}))
    assert at_limit.success, at_limit.error_message
    # A tool name no catalog can hold: refused, and published cut.
    long_name = 'n' * 100_000
    unknown = caller.call(long_name, '{}', call_id='long-name')
    assert unknown.error_code == ErrorCodes.UNKNOWN_TOOL
    assert f'at most {limits.MAX_TOOL_NAME_CHARS}' in unknown.error_message
    assert spin_until(caller.node, lambda: any(r.call_id == 'long-name'
                                               for r in caller.results), 5.0)
    (result,) = [r for r in caller.results if r.call_id == 'long-name']
    assert len(result.name) <= limits.MAX_TOOL_NAME_CHARS + 3
    # An oversized call id is replaced, and the message shows only its start.
    long_id = 'i' * 100_000
    refused = caller.call('echo', '{"text": "x"}', call_id=long_id)
    assert refused.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert refused.call_id != long_id and len(refused.error_message) < 600
    caller.still_works()


def test_a_ref_loop_is_refused_at_load_and_a_failing_check_ends_that_call_only(stack):
    caller = stack(REF_LOOP, REGEX_ARGUMENT, dispatcher_args=('-p', 'timeout_s:=3.0'))
    # The looping schema never enters the catalog (once, the first call of it ended the
    # dispatcher), and the log says why, with the path.
    loop = caller.call('loop', '{"x": 1}')
    assert loop.error_code == ErrorCodes.UNKNOWN_TOOL, loop.error_message
    output = caller.dispatcher.output()
    assert 'reference loop' in output and '$defs/a' in output, output[-3000:]
    # A check that still fails (Python's re recurses compiling a format: regex value 1000
    # groups deep) refuses that call, with what failed.
    nested = caller.call('find', json.dumps({'expr': '(' * 1000 + ')' * 1000}))
    assert nested.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert 'could not be checked' in nested.error_message
    assert 'RecursionError' in nested.error_message
    fine = caller.call('find', json.dumps({'expr': '^a+$'}))
    assert fine.error_code in ('', ErrorCodes.UNAVAILABLE)  # no executor hosts find
    caller.still_works()


def test_a_backtracking_catalog_pattern_is_matched_in_linear_time(stack):
    caller = stack(BACKTRACKING, dispatcher_args=('-p', 'timeout_s:=3.0'))
    # 40 characters: 2^40 steps for a backtracking engine (it once blocked the dispatch
    # thread, e-stop included, 2.5 s at 26 characters, doubling per character).
    bad = caller.call('code', json.dumps({'code': 'a' * 40 + '!'}), timeout=20.0)
    assert bad.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert "must match pattern '^(a+)+$'" in bad.error_message
    good = caller.call('code', json.dumps({'code': 'a' * 40}))
    assert good.error_code in ('', ErrorCodes.UNAVAILABLE), good.error_message  # matched
    caller.still_works()


def test_an_audit_log_on_a_pipe_nobody_reads_never_blocks_dispatching(start_node, ros_node,
                                                                      tmp_path):
    fifo = tmp_path / 'audit.fifo'
    os.mkfifo(fifo)
    # A reader that opened the pipe and stopped reading: the pipe (64 KiB) fills up after
    # ~150 records. Once the dispatcher hung there, e-stop unanswered.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        root = _dataset(tmp_path)
        start_node(TOOL_SERVER, '-p', 'tools:=[echo]', '-p', f'dataset:={root}')
        dispatcher = start_node(DISPATCHER, '-p', f'dataset:={root}', '-p',
                                f'audit_log:={fifo}', '-p', 'max_pending:=1000',
                                '-p', 'timeout_s:=300.0')
        caller = Caller(ros_node, dispatcher)
        warnings: list = []
        ros_node.create_subscription(DiagnosticArray, '/diagnostics', lambda msg: warnings.extend(
            s for s in msg.status
            if s.name.endswith('audit_log') and s.level == DiagnosticStatus.WARN), RELIABLE)
        text = ros_node.create_publisher(String, '/policy/text', RELIABLE)
        assert spin_until(ros_node, lambda: text.get_subscription_count() > 0, 20.0)
        assert caller.call('echo', '{"text": "first"}').success
        total = 600
        for generation in range(total // 10):
            text.publish(String(data=''.join(f'<echo>{generation}-{index} {"z" * 200}</echo>'
                                             for index in range(10))))
        spin_until(ros_node, lambda: len(caller.results) >= total + 1, 120.0)
        assert len(caller.results) == total + 1, dispatcher.output()[-3000:]
        assert all(r.success for r in caller.results)
        caller.still_works()  # e-stop answered while the writer is stuck
        # Diagnostics say the audit writer is stuck and how much waits (drops are counted
        # there too once the queue is full: test_audit.py fills it).
        assert spin_until(ros_node, lambda: bool(warnings), 10.0), dispatcher.output()[-2000:]
        values = {kv.key: kv.value for kv in warnings[-1].values}
        assert int(values['queued']) > 0 and float(values['stalled_s']) >= 1.0, values
        assert 'waited' in warnings[-1].message
    finally:
        os.close(reader)


def test_a_tool_server_refuses_a_bindings_file_nested_5000_deep_in_one_line(
        start_node, tmp_path):
    root = _dataset(tmp_path)
    path = tmp_path / 'bindings.yaml'
    path.write_text('bindings:\n  echo: ' + '[' * 5000 + ']' * 5000 + '\n')
    proc = start_node(TOOL_SERVER, '-p', 'tools:=[echo]', '-p', f'dataset:={root}',
                      '-p', f'bindings_file:={path}')
    assert proc.proc.wait(60) == 78  # EXIT_CONFIGURATION_ERROR
    lines = [line for line in proc.output().splitlines() if line.strip()]
    assert len(lines) == 1 and 'Traceback' not in proc.output(), lines
    assert 'not valid YAML' in lines[0] and 'nest' in lines[0]


def _limit_memory() -> None:
    limit = 3 << 30  # far above what loading a catalog needs, far below what /dev/zero holds
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.skipif(not pathlib.Path('/dev/zero').exists(), reason='no /dev/zero here')
def test_an_info_json_that_never_ends_is_one_error(tmp_path):
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').symlink_to('/dev/zero')
    run = subprocess.run(
        [sys.executable, '-c', 'import sys; from lerobot_tools_ros.cli import main; '
         'sys.exit(main(sys.argv[1:]))', 'catalog', str(root)],
        capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory,
        env={**os.environ, 'PYTHONPATH': os.pathsep.join(
            [str(pathlib.Path(__file__).resolve().parents[1]), os.environ.get('PYTHONPATH', '')])})
    assert run.returncode == 1, run.stderr[-2000:]
    (line,) = run.stderr.strip().splitlines()
    assert 'info.json' in line and 'larger than 16 MiB' in line, line
