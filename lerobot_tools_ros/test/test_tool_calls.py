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
What the tool_server does with one tool's calls, on its own (no ROS graph): `ToolCalls`.

The calls of a tool run one at a time, in order, and one that waited is told so; a stopped call
is answered "not run" and the tool never sees it; a call id runs at most once; closing answers
every call taken and refuses new ones; what a tool raises becomes an answer that says whether it
may have acted. The tools are the package's own `echo` and small tool classes written here.
"""

from concurrent.futures import Future
import logging
import subprocess
import sys
import threading
import time

from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.executors import goal_ids
from lerobot_tools_ros.tool_server.calls import CLOSE_TIMEOUT_S, Feedback, \
    FEEDBACK_MIN_INTERVAL_S, STAGE_QUEUED, STAGE_RUNNING, ToolCalls
from lerobot_tools_ros.tool_server.request import ToolRequest
from lerobot_tools_ros.tool_server.streamed_text import StreamedTexts
from lerobot_tools_ros.tools.base import CallContext, tool_name_from_schema
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA, EchoTool
from lerobot_tools_ros.tools.ledger import CallLedger, STOPPED_MESSAGE
import pytest

WAIT_S = 10.0  # the longest a test waits for a thread; a pass never comes near it


def _schema(name: str) -> dict:
    return {'type': 'function', 'function': {
        'name': name, 'description': f'A {name} tool of the tests.',
        'parameters': {'type': 'object', 'properties': {'text': {'type': 'string'}},
                       'required': []}}}


class GateTool:
    """Each call waits until the test opens the gate (or its call is cancelled)."""

    def __init__(self, schema: dict) -> None:
        self.schema = schema
        self.name = tool_name_from_schema(schema)
        self.gate = threading.Event()
        self.started: list[str] = []  # the texts of the calls the tool got, in order
        self.running = 0
        self.most_at_once = 0
        self._lock = threading.Lock()

    def call(self, arguments: dict, context: CallContext) -> str:
        with self._lock:
            self.started.append(arguments.get('text', ''))
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            while not self.gate.wait(0.01):
                if context.cancelled.is_set():
                    raise errors.ToolError(errors.CANCELLED, f'{self.name} cancelled')
            return f"done {arguments.get('text', '')}"
        finally:
            with self._lock:
                self.running -= 1

    def wait_started(self, count: int) -> None:
        deadline = time.monotonic() + WAIT_S
        while len(self.started) < count:
            assert time.monotonic() < deadline, f'the tool got {self.started}, not {count} calls'
            time.sleep(0.005)


class LostAnswerTool:
    """A binding whose request went out and whose answer never came: it says so."""

    def __init__(self, schema: dict) -> None:
        self.schema = schema
        self.name = tool_name_from_schema(schema)
        self.calls = 0

    def call(self, arguments: dict) -> str:
        self.calls += 1
        raise errors.ToolError(errors.TIMEOUT, 'the robot did not answer', errors.UNKNOWN)


class Reports:
    """A call's progress reports, as its context gives them."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, float, str]] = []

    def __call__(self, stage: str, progress: float, detail: str) -> None:
        self.seen.append((stage, progress, detail))


def _calls(tool, *, accepting=lambda: True, ledger=True, start=True) -> ToolCalls:
    catalog = ToolCatalog.from_tools([ECHO_SCHEMA, _schema('gate'), _schema('lost')])
    calls: ToolCalls = ToolCalls(
        tool, new_future=Future, validate=catalog.validate,
        logger=logging.getLogger('test_tool_calls'),
        ledger=CallLedger(60.0, 100) if ledger else None, accepting=accepting,
        service_of=lambda name: f'/tools/{name}')
    if start:
        calls.start()
    return calls


def _submit(calls: ToolCalls, call_id: str, text: str = '', reports: Reports | None = None,
            **options) -> tuple[Future, CallContext]:
    context = CallContext(call_id, reports)
    arguments = {'text': text} if text else {}
    return calls.submit(ToolRequest(call_id, calls.tool.name, arguments), context,
                        **options), context


def _answer(future: Future) -> tuple[str, str, str]:
    return future.result(timeout=WAIT_S)


def _close(calls: ToolCalls) -> None:
    calls.begin_close()
    calls.close_tool()
    calls.join(time.monotonic() + CLOSE_TIMEOUT_S)
    assert calls.worker is None or not calls.worker.is_alive()


def test_calls_of_a_tool_run_one_at_a_time_in_order_and_a_queued_one_is_told_it_waited():
    tool = GateTool(_schema('gate'))
    calls = _calls(tool)
    reports = {name: Reports() for name in 'abc'}
    first, _ = _submit(calls, 'a', 'a', reports['a'])
    tool.wait_started(1)
    second, _ = _submit(calls, 'b', 'b', reports['b'])
    third, _ = _submit(calls, 'c', 'c', reports['c'])
    assert not second.done() and not third.done() and tool.started == ['a']
    waited = (STAGE_QUEUED, -1.0, "waiting for an earlier 'gate' call to finish")
    assert reports['b'].seen == [waited] and reports['c'].seen == [waited]
    assert reports['a'].seen == []  # it found the tool idle
    tool.gate.set()
    assert [_answer(f) for f in (first, second, third)] == [
        ('', 'done a', errors.RAN), ('', 'done b', errors.RAN), ('', 'done c', errors.RAN)]
    assert tool.started == ['a', 'b', 'c'] and tool.most_at_once == 1
    assert reports['b'].seen == [waited, (STAGE_RUNNING, -1.0, 'started')]
    assert calls.pending == 0
    _close(calls)


def test_a_request_that_finds_its_tool_idle_runs_on_the_calling_thread():
    tool = EchoTool(ECHO_SCHEMA)
    calls = _calls(tool)
    answer, _ = _submit(calls, 'now', 'hi', inline=True)
    assert answer.done()  # before submit returned, without the worker
    assert _answer(answer) == ('', '{"text": "hi"}', errors.RAN)
    _close(calls)


def test_a_call_stopped_before_it_starts_is_not_run_and_the_tool_never_sees_it():
    tool = GateTool(_schema('gate'))
    calls = _calls(tool)
    running, _ = _submit(calls, 'a', 'a')
    tool.wait_started(1)
    waiting, context = _submit(calls, 'b', 'b')
    calls.stop_call('b')  # its caller stopped it while it waited
    assert context.cancelled.is_set()
    calls.stop_call('c')  # stopped while still on its way: refused when it arrives
    late, _ = _submit(calls, 'c', 'c')
    assert _answer(late) == (errors.CANCELLED, STOPPED_MESSAGE, errors.NOT_RUN)
    tool.gate.set()
    assert _answer(running) == ('', 'done a', errors.RAN)
    assert _answer(waiting) == (
        errors.CANCELLED, "'gate' call cancelled before it started; it did not run",
        errors.NOT_RUN)
    assert tool.started == ['a']
    _close(calls)


def test_a_request_taken_late_is_held_for_a_stop_sent_after_it():
    """A request that waited (its stamp says so) does not run inline: a late stop still wins."""
    tool = EchoTool(ECHO_SCHEMA)
    calls = _calls(tool)
    sent = time.time() - 1.0  # it waited a second in a stalled process
    sec, nanosec = int(sent), int(sent % 1 * 1e9)
    waited = goal_ids.stamp_waited_s(sec, nanosec)
    assert 0.9 < waited < 5.0
    held, context = _submit(calls, 'late', 'hi', inline=True,
                            hold_until=goal_ids.hold_until(waited))
    assert not held.done()  # on the worker, held, not run on the calling thread
    calls.stop_call('late')  # the pause's stop, sent after the request, arrives now
    assert _answer(held) == (errors.CANCELLED, "'echo' call cancelled before it started; it "
                             'did not run', errors.NOT_RUN)
    # Held as long again as it was late, within bounds (after a stall a stop may lag its call).
    assert [goal_ids.hold_until(waited, now_monotonic=100.0) for waited in (0.15, 1.2, 9.0)] == [
        100.0 + goal_ids.STOP_GRACE_S, 101.2, 100.0 + goal_ids.MAX_HOLD_S]
    fresh = goal_ids.stamp_waited_s(*divmod(time.time_ns(), 1_000_000_000))
    assert goal_ids.hold_until(fresh) == 0.0  # taken at once: runs inline, as before
    assert goal_ids.stamp_waited_s(0, 0) == 0.0  # a caller that gives no stamp: not held
    answer, _ = _submit(calls, 'now', 'hi', inline=True, hold_until=goal_ids.hold_until(fresh))
    assert answer.done() and _answer(answer)[0] == ''
    _close(calls)


def test_a_repeated_call_id_gets_the_first_answer_and_runs_once():
    tool = GateTool(_schema('gate'))
    calls = _calls(tool)
    first, _ = _submit(calls, 'same', 'first')
    tool.wait_started(1)
    joined, _ = _submit(calls, 'same', 'second')  # while the first runs: joins it
    assert not joined.done()
    tool.gate.set()
    assert _answer(first) == _answer(joined) == ('', 'done first', errors.RAN)
    again, _ = _submit(calls, 'same', 'third')  # after it ended: the first answer at once
    assert again.done() and _answer(again) == ('', 'done first', errors.RAN)
    assert tool.started == ['first']
    assert calls.ledger is not None and calls.ledger.repeats == 2
    _close(calls)


def test_closing_answers_every_call_taken_and_refuses_new_ones():
    tool = GateTool(_schema('gate'))
    calls = _calls(tool)
    running, _ = _submit(calls, 'a', 'a')
    tool.wait_started(1)
    queued, _ = _submit(calls, 'b', 'b')
    assert calls.begin_close() == 2
    code, _, outcome = _answer(running)
    assert (code, outcome) == (errors.CANCELLED, errors.RAN)  # the tool had started
    assert _answer(queued) == (
        errors.CANCELLED, "'gate' call cancelled before it started; it did not run",
        errors.NOT_RUN)
    refused, _ = _submit(calls, 'c', 'c')
    assert _answer(refused) == (
        errors.UNAVAILABLE, "the tool_server hosting 'gate' is shutting down; the call did not "
        'run', errors.NOT_RUN)
    calls.join(time.monotonic() + CLOSE_TIMEOUT_S)
    assert calls.worker is not None and not calls.worker.is_alive()
    assert tool.started == ['a']


def test_close_tool_ends_a_call_that_waits_on_the_tool_itself():
    tool = EchoTool(ECHO_SCHEMA)
    calls = _calls(tool)
    slow = calls.submit(ToolRequest('slow', 'echo', {'delay_s': 5.0}), CallContext('slow'))
    calls.close_tool()  # echo's close wakes its delay: answered cancelled, not after 5 s
    code, text, outcome = _answer(slow)
    assert (code, outcome) == (errors.CANCELLED, errors.RAN) and 'shutting down' in text
    _close(calls)


def test_a_paused_server_refuses_calls_and_stop_cancels_those_taken():
    accepting = [True]
    tool = GateTool(_schema('gate'))
    calls = _calls(tool, accepting=lambda: accepting[0])
    running, _ = _submit(calls, 'a', 'a')
    tool.wait_started(1)
    accepting[0] = False
    assert calls.stop() == 1
    assert _answer(running)[0] == errors.CANCELLED
    refused, _ = _submit(calls, 'b', 'b')
    assert _answer(refused) == (
        errors.PAUSED, "the tool_server hosting 'gate' is not active (managed node); the call "
        'did not run', errors.NOT_RUN)
    _close(calls)


def test_a_tool_exception_is_execution_failed_and_says_the_tool_ran():
    calls = _calls(EchoTool(ECHO_SCHEMA))
    queued = calls.submit(ToolRequest('q', 'echo', {'fail': 'boom'}), CallContext('q'))
    inline = calls.submit(ToolRequest('i', 'echo', {'fail': 'bang'}), CallContext('i'),
                          inline=True)
    assert _answer(queued) == (errors.EXECUTION_FAILED, 'echo failed: RuntimeError: boom',
                               errors.RAN)
    assert _answer(inline) == (errors.EXECUTION_FAILED, 'echo failed: RuntimeError: bang',
                               errors.RAN)
    _close(calls)


def test_a_tool_error_keeps_its_own_code_and_outcome():
    tool = LostAnswerTool(_schema('lost'))
    calls = _calls(tool)
    answer = calls.submit(ToolRequest('l', 'lost', {}), CallContext('l'))
    assert _answer(answer) == (errors.TIMEOUT, 'the robot did not answer', errors.UNKNOWN)
    assert tool.calls == 1
    _close(calls)


def test_a_call_for_another_tool_or_with_bad_arguments_is_refused_before_it_runs():
    tool = EchoTool(ECHO_SCHEMA)
    calls = _calls(tool, start=False)  # refused before any worker could take them
    other = calls.submit(ToolRequest('o', 'say', {}), CallContext('o'))
    assert _answer(other) == (errors.UNKNOWN_TOOL, "this service hosts 'echo', but the request "
                              "names 'say'; call /tools/say instead", errors.NOT_RUN)
    bad = calls.submit(ToolRequest('b', 'echo', {'text': 3}), CallContext('b'))
    code, _, outcome = _answer(bad)
    assert (code, outcome) == (errors.INVALID_ARGUMENTS, errors.NOT_RUN)
    text = calls.submit_text('t', '', '{"text": ', '', CallContext('t'))
    code, _, outcome = _answer(text)
    assert (code, outcome) == (errors.INVALID_ARGUMENTS, errors.NOT_RUN)
    assert calls.pending == 0


def test_arguments_as_json_text_are_validated_once_where_they_arrive():
    calls = _calls(EchoTool(ECHO_SCHEMA))
    answer = calls.submit_text('j', 'echo', '{"text": "over dds"}', 'test', CallContext('j'))
    assert _answer(answer) == ('', '{"text": "over dds"}', errors.RAN)
    empty = calls.submit_text('e', '', '', 'test', CallContext('e'))  # '' : no arguments
    assert _answer(empty) == ('', '{}', errors.RAN)
    _close(calls)


def test_a_streamed_call_runs_once_its_text_is_whole():
    tool = EchoTool(ECHO_SCHEMA)
    calls = _calls(tool)
    texts = StreamedTexts('text')
    segment = type('Segment', (), {})

    def chunk(index: int, text: str, final: bool):
        made = segment()
        made.generation_id, made.index, made.text, made.final = 's', index, text, final
        return made

    texts.take(chunk(1, 'hello ', False))  # before its goal: kept for it
    context = CallContext('s', None, texts.arrived('s'))
    answer = calls.submit(ToolRequest('s', 'echo', {'text': ''}), context)
    texts.take(chunk(2, 'world', True))
    assert _answer(answer) == ('', '{"text": "hello world"}', errors.RAN)
    texts.ended('s', context.text)
    _close(calls)


def test_feedback_of_one_stage_is_rate_limited_and_never_raises():
    sent, now = [], [0.0]
    feedback = Feedback(lambda *report: sent.append(report), logging.getLogger('test'),
                        clock=lambda: now[0])
    feedback('running', 0.1, 'a')
    now[0] += FEEDBACK_MIN_INTERVAL_S / 2
    feedback('running', 0.2, 'too soon')  # dropped: the same stage, too soon
    feedback('saving', 0.0, 'a new stage')  # always goes out
    feedback('saving', 1.0, 'its end')  # always goes out
    now[0] += FEEDBACK_MIN_INTERVAL_S * 1.5
    feedback('saving', 0.5, 'later')
    assert [report[2] for report in sent] == ['a', 'a new stage', 'its end', 'later']
    feedback.closed = True  # the goal has its result
    feedback('saving', 1.0, 'after the end')
    assert len(sent) == 4

    def broken(*report):
        raise RuntimeError('the goal has ended')

    Feedback(broken, logging.getLogger('test'))('running', 0.5, '')  # nothing raised


def test_the_feedback_stages_are_the_interfaces():
    from lerobot_tools_interfaces.action import RunTool
    assert (STAGE_QUEUED, STAGE_RUNNING) == (RunTool.Feedback.STAGE_QUEUED,
                                             RunTool.Feedback.STAGE_RUNNING)


@pytest.mark.parametrize('module', ['calls', 'streamed_text'])
def test_the_tool_server_cores_import_no_ros(module):
    code = ('import sys\n'
            f'import lerobot_tools_ros.tool_server.{module}\n'
            'ros = sorted(m for m in sys.modules if m.split(".")[0] in '
            '("rclpy", "lerobot_tools_interfaces", "rosidl_runtime_py"))\n'
            'assert not ros, ros\n')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
