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

"""The dispatch core on its own: events in, effects out, no ROS graph and no clock."""

from collections import Counter
import json
import subprocess
import sys

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import DEFAULT_TOOLS, ToolCatalog
from lerobot_tools_ros.dispatch import (DispatchCore, DispatchSettings, effects as fx,
                                        ToolSettings)
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest


def _catalog() -> ToolCatalog:
    """Echo (text required, so the <echo>...</echo> marker applies), say, record_observation."""
    echo = json.loads(json.dumps(ECHO_SCHEMA))
    echo['function']['parameters']['required'] = ['text']
    return ToolCatalog.from_tools([echo, *DEFAULT_TOOLS])


CATALOG = _catalog()


class Harness:
    """A core plus everything it asked for, sorted by kind."""

    def __init__(self, tools: dict[str, ToolSettings] | None = None, **settings) -> None:
        tools = tools or {}
        self.core = DispatchCore(CATALOG, DispatchSettings(**settings),
                                 lambda name: tools.get(name, ToolSettings(timeout_s=1.0)),
                                 id_prefix='t', describe_executor=lambda name: f'/svc/{name}')
        self.effects: list = []

    def feed(self, effects: list) -> list:
        self.effects += effects
        return effects

    def text(self, text: str, now: float = 0.0) -> list:
        return self.feed(self.core.text(text, now))

    def of(self, kind, effects: list | None = None) -> list:
        return [e for e in (self.effects if effects is None else effects) if isinstance(e, kind)]

    def results(self) -> dict[str, fx.PublishResult]:
        found = {}
        for result in self.of(fx.PublishResult):
            assert result.call.call_id not in found, f'two results for {result.call.call_id}'
            found[result.call.call_id] = result
        return found

    def sent(self, effects: list | None = None) -> list:
        return [e.call for e in self.of(fx.Send, effects)]

    def answer(self, call, now: float, **kwargs) -> list:
        kwargs.setdefault('success', True)
        kwargs.setdefault('content', call.arguments_json)
        return self.feed(self.core.answered(call.call_id, now, **kwargs))


def test_a_call_is_announced_sent_and_answered_once():
    h = Harness()
    out = h.text('Greeting.\n<say>hi</say>', now=0.0)
    assert [type(e) for e in out] == [fx.PublishChat, fx.PublishCall, fx.Audit, fx.Send]
    assert out[0].message['tool_calls'][0]['function'] == {
        'name': 'say', 'arguments': {'text': 'hi'}}
    (call,) = h.sent(out)
    assert (call.name, call.arguments, call.source) == ('say', {'text': 'hi'}, 'policy')
    assert h.core.next_wake() == pytest.approx(1.0)  # the call's deadline
    out = h.answer(call, 0.25, content='spoken')
    (result,) = h.of(fx.PublishResult, out)
    assert result.success and result.content == 'spoken'
    assert result.duration_s == pytest.approx(0.25)
    assert h.of(fx.PublishChat, out)[0].message['content'] == 'spoken'
    assert h.core.next_wake() is None and h.core.pending_calls == 0
    assert h.answer(call, 0.3) == []  # a second answer is dropped


def test_calls_of_one_tool_run_one_after_another():
    h = Harness()
    out = h.text('<echo>a</echo><echo>b</echo>')
    (first,) = h.sent(out)
    assert first.arguments == {'text': 'a'}
    (second,) = h.sent(h.answer(first, 0.1))
    assert second.arguments == {'text': 'b'}


def test_a_queued_call_keeps_its_deadline_and_says_it_waited_in_line():
    h = Harness(tools={'echo': ToolSettings(timeout_s=1.0)})
    a, = h.sent(h.text('<echo>a</echo><echo>b</echo><echo>c</echo>', now=0.0))
    b, = h.sent(h.answer(a, 0.7))
    h.feed(h.core.tick(1.0))
    results = h.results()
    b_result = results[b.call_id]
    assert b_result.error_code == errors.TIMEOUT and 'did not answer' in b_result.error_message
    (c_result,) = [r for r in results.values() if r.call.arguments == {'text': 'c'}]
    assert c_result.error_code == errors.TIMEOUT
    assert 'behind earlier' in c_result.error_message  # never started, and says so
    assert c_result.duration_s == pytest.approx(1.0)  # not a fresh timeout after waiting
    assert len(h.sent()) == 2  # c was never sent


def test_a_missing_executor_is_polled_then_the_call_is_sent_or_unavailable():
    h = Harness(executor_poll_s=0.05)
    (call,) = h.sent(h.text('<echo>x</echo>', now=0.0))
    h.feed(h.core.executor_missing(call.call_id, 0.0))
    assert h.core.waiting_tools() == ['echo']
    assert h.core.next_wake() == pytest.approx(0.05)
    h.feed(h.core.tick(0.05))
    assert h.core.next_wake() == pytest.approx(0.1)  # still polling
    (again,) = h.sent(h.feed(h.core.executor_available('echo', 0.08)))
    assert again is call and h.core.waiting_tools() == []
    h.feed(h.core.executor_missing(call.call_id, 0.1))
    h.feed(h.core.tick(1.0))
    result = h.results()[call.call_id]
    assert result.error_code == errors.UNAVAILABLE
    assert 'no executor serves /svc/echo' in result.error_message


def test_pause_answers_every_call_and_stops_running_ones_on_their_executor():
    h = Harness()
    running, = h.sent(h.text('<echo>a</echo><echo>b</echo>'))
    out = h.feed(h.core.set_enabled(False, 0.1))
    (stop,) = h.of(fx.StopOnExecutor, out)
    assert stop.call is running and stop.await_answer  # the e-stop reaches the executor
    # The call not yet sent is answered at once; the running one when its executor says
    # what it did.
    (queued,) = h.of(fx.PublishResult, out)
    assert queued.call.arguments == {'text': 'b'} and queued.error_code == errors.PAUSED
    assert queued.outcome == errors.NOT_RUN
    (rejected,) = h.of(fx.PublishResult, h.text('<echo>c</echo>', now=0.2))
    assert rejected.error_code == errors.PAUSED and rejected.outcome == errors.NOT_RUN
    h.answer(running, 0.3, success=False, error_code=errors.CANCELLED, outcome=errors.RAN,
             error_message='echo cancelled after 0.2 s')  # the executor stopped it part-way
    stopped = h.results()[running.call_id]
    assert (stopped.error_code, stopped.outcome) == (errors.PAUSED, errors.RAN)
    assert 'stopped it while it ran' in stopped.error_message
    assert len(h.results()) == 3  # a, b, c: one result each
    h.feed(h.core.set_enabled(True, 0.4))
    assert h.sent(h.text('<echo>d</echo>', now=0.5))


def test_a_paused_call_that_had_not_started_on_its_executor_says_it_did_not_run():
    h = Harness()
    running, = h.sent(h.text('<echo>a</echo>'))
    h.feed(h.core.set_enabled(False, 0.1))
    h.answer(running, 0.2, success=False, error_code=errors.CANCELLED, outcome=errors.NOT_RUN)
    result = h.results()[running.call_id]
    assert (result.error_code, result.outcome) == (errors.PAUSED, errors.NOT_RUN)
    assert 'did not run' in result.error_message


def test_a_cancel_that_came_after_the_tool_finished_reports_what_it_did():
    h = Harness()
    running, = h.sent(h.text('<echo>a</echo>'))
    h.feed(h.core.cancel(0.1, call_id=running.call_id))
    assert h.results() == {}  # no result until the executor says what the tool did
    h.answer(running, 0.2, outcome=errors.RAN)  # it had finished before the cancel came
    result = h.results()[running.call_id]
    assert result.success and result.outcome == errors.RAN
    assert result.content == running.arguments_json


def test_a_cancel_its_executor_does_not_confirm_in_time_is_answer_lost_unknown():
    h = Harness(tools={'echo': ToolSettings(timeout_s=5.0)}, cancel_timeout_s=2.0)
    running, = h.sent(h.text('<echo>a</echo><echo>b</echo>'))
    h.feed(h.core.cancel(0.1, call_id=running.call_id))
    assert h.core.next_wake() == pytest.approx(2.1)
    out = h.feed(h.core.tick(2.1))
    (forget,) = h.of(fx.StopOnExecutor, out)
    assert forget.call is running and not forget.await_answer
    result = h.results()[running.call_id]
    assert (result.error_code, result.outcome) == (errors.ANSWER_LOST, errors.UNKNOWN)
    assert 'may have acted' in result.error_message
    (b,) = h.sent(out)  # the tool is free again for the next call
    assert b.arguments == {'text': 'b'}
    h.answer(running, 2.5)  # a late answer gives no second result
    assert len(h.results()) == 1


def test_cancel_of_a_running_call_stops_it_and_holds_the_tool_until_it_stopped():
    h = Harness()
    running, = h.sent(h.text('<echo>a</echo><echo>b</echo>'))
    out = h.feed(h.core.cancel(0.1, call_id=running.call_id))
    (stop,) = h.of(fx.StopOnExecutor, out)
    assert stop.call is running and stop.await_answer
    assert h.of(fx.PublishResult, out) == []  # its executor's answer tells what it did
    assert h.sent(out) == []  # b waits until the executor stopped a
    (b,) = h.sent(h.answer(running, 0.2, success=False, error_code=errors.CANCELLED,
                           outcome=errors.RAN))
    assert b.arguments == {'text': 'b'}
    (result,) = h.results().values()
    assert (result.error_code, result.outcome) == (errors.CANCELLED, errors.RAN)


def test_cancel_by_generation_answers_every_call_of_it():
    h = Harness()
    h.text('<echo>a</echo><say>b</say>', now=0.0)
    h.text('<echo>other</echo>', now=0.0)
    generation = h.sent()[0].generation_id
    out = h.feed(h.core.cancel(0.1, generation_id=generation))
    stops = h.of(fx.StopOnExecutor, out)  # both run: each is stopped on its executor
    assert len(stops) == 2 and {s.call.generation_id for s in stops} == {generation}
    for stop in stops:
        h.answer(stop.call, 0.2, success=False, error_code=errors.CANCELLED, outcome=errors.RAN)
    cancelled = list(h.results().values())
    assert len(cancelled) == 2 and all(r.error_code == errors.CANCELLED for r in cancelled)
    assert h.core.pending_calls == 1


def test_progress_is_relayed_only_for_running_calls():
    h = Harness()
    a, = h.sent(h.text('<echo>a</echo><echo>b</echo>'))
    b = next(c for c in h.core.active_calls() if c is not a)
    (progress,) = h.core.progress(a.call_id, 'running', 0.5, 'half')
    assert (progress.call, progress.stage, progress.progress) == (a, 'running', 0.5)
    assert h.core.progress(b.call_id, 'running', 0.5, '') == []  # queued: not running
    assert h.core.progress('nope', 'running', 0.5, '') == []


def test_gates_answer_at_once_in_order():
    h = Harness(tools={'echo': ToolSettings(timeout_s=1.0, rate_limit_hz=1.0, burst=1)},
                allowed_tools=['echo'], max_pending=1)
    h.text('<say>not allowed</say>')
    h.text('<tool_call>{"name": "echo", "arguments": {"text": 5}}</tool_call>')
    h.text('<echo>1</echo><echo>2</echo>', now=0.0)
    h.text('<echo>3</echo>', now=2.0)  # a token again, but one call is pending
    codes = [r.error_code for r in h.results().values()]
    assert codes == [errors.NOT_ALLOWED, errors.INVALID_ARGUMENTS, errors.RATE_LIMITED,
                     errors.BUSY]
    assert all(isinstance(r.call.arguments_json, str) for r in h.results().values())


def test_streamed_tool_messages_follow_the_assistant_message():
    h = Harness()
    h.feed(h.core.chunk('g', 'Plan.\n<echo>a</echo> and ', False, 0.0))
    (call,) = h.sent()
    h.answer(call, 0.1)
    assert h.of(fx.PublishChat) == []  # held until the assistant message is out
    h.feed(h.core.chunk('g', 'done', True, 0.2))
    assistant, tool = [e.message for e in h.of(fx.PublishChat)]
    assert assistant['role'] == 'assistant' and assistant['content'].strip() == 'Plan.\nand done'
    assert tool['tool_call_id'] == call.call_id == assistant['tool_calls'][0]['id']


def test_an_idle_stream_is_finished_at_its_deadline():
    h = Harness(stream_idle_timeout_s=5.0)
    h.feed(h.core.chunk('g', '<tool_call>{"name": "echo", ', False, 0.0))
    assert h.core.next_wake() == pytest.approx(5.0)
    h.feed(h.core.chunk('g', '"arguments": {"te', False, 3.0))
    h.feed(h.core.tick(5.0))
    assert h.results() == {} and h.core.next_wake() == pytest.approx(8.0)
    h.feed(h.core.tick(8.0))
    (result,) = h.results().values()
    assert result.error_code == errors.PARSE_ERROR and 'final' in result.error_message
    assert h.of(fx.Log)[0].level == 'warning' and h.core.pending_calls == 0


def test_submitted_calls_carry_their_source_and_need_unique_ids():
    h = Harness()
    call, out = h.core.submit('echo', '{"text": "hi"}', 0.0, source='mcp', call_id='mine')
    h.feed(out)
    assert h.sent(out) == [call] and call.call_id == 'mine' and call.source == 'mcp'
    clash, out = h.core.submit('echo', '{}', 0.0, source='mcp', call_id='mine')
    h.feed(out)
    assert clash.call_id != 'mine'
    assert 'in use by a pending call' in h.results()[clash.call_id].error_message
    bad, out = h.core.submit('echo', '{"text": ', 0.0, source='ui')
    h.feed(out)
    assert h.results()[bad.call_id].error_code == errors.INVALID_ARGUMENTS
    assert h.results()[bad.call_id].call.arguments_json == '{"text": '


def test_shutdown_answers_every_pending_call():
    h = Harness()
    h.text('<echo>a</echo><echo>b</echo>')
    h.feed(h.core.chunk('g', '<echo>c', False, 0.0))
    out = h.feed(h.core.shutdown(0.5))
    results = h.results()
    assert len(results) == 3 and h.core.pending_calls == 0
    (stop,) = h.of(fx.StopOnExecutor, out)
    sent = results[stop.call.call_id]  # it may have run: the answer was lost
    assert (sent.error_code, sent.outcome) == (errors.ANSWER_LOST, errors.UNKNOWN)
    assert all((r.error_code, r.outcome) in ((errors.UNAVAILABLE, errors.NOT_RUN),
                                             (errors.PARSE_ERROR, errors.NOT_RUN))
               for r in results.values() if r is not sent)


def test_the_core_imports_no_ros_and_reads_no_clock():
    code = ('import sys, time\n'
            'import lerobot_tools_ros.dispatch as d\n'
            'assert not any(m == "rclpy" or m.startswith("rclpy.") for m in sys.modules), '
            '"rclpy imported"\n'
            'from lerobot_tools_ros.catalog import ToolCatalog\n'
            'def no_clock(*args):\n'
            '    raise AssertionError("the core read a clock")\n'
            'time.monotonic = time.time = time.perf_counter = time.monotonic_ns = no_clock\n'
            'core = d.DispatchCore(ToolCatalog.load(None), d.DispatchSettings(), '
            'lambda n: d.ToolSettings(rate_limit_hz=1.0), id_prefix="x")\n'
            'out = core.text("<say>hi</say>", 0.0) + core.tick(20.0)\n'
            'print(sorted({type(e).__name__ for e in out}))\n')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert 'PublishResult' in done.stdout


# -- the invariant: any interleaving gives exactly one result per call ----------------------------

TOOL_MIX = {
    'echo': ToolSettings(timeout_s=1.0),
    'say': ToolSettings(timeout_s=2.0, rate_limit_hz=2.0, burst=2, repeat_window_s=1.0),
    'record_observation': ToolSettings(timeout_s=1.5, approval='confirm'),
}
TEXTS = ['<echo>a</echo>', '<say>hi</say>', '<say>hi</say><echo>b</echo>',
         '<tool_call>{"name": "record_observation", "arguments": {}}</tool_call>',
         '<tool_call>{"name": "nope", "arguments": {}}</tool_call>', '<tool_call>{"name": ',
         '[echo(text="x"), echo(text="y"), say(text="z")]']
OPS = st.one_of(
    st.tuples(st.just('text'), st.sampled_from(TEXTS)),
    st.tuples(st.just('chunk'), st.sampled_from(['g1', 'g2']), st.sampled_from(TEXTS),
              st.booleans()),
    st.tuples(st.just('submit'), st.sampled_from(['echo', 'say', 'record_observation']),
              st.sampled_from(['{"text": "s"}', '{}', 'nope', '{"label": "x"}'])),
    st.tuples(st.just('answer'), st.integers(0, 50), st.booleans()),
    st.tuples(st.just('missing'), st.integers(0, 50)),
    st.tuples(st.just('available'), st.sampled_from(list(TOOL_MIX))),
    st.tuples(st.just('time'), st.floats(0.0, 1.5)),
    st.tuples(st.just('pause'), st.booleans()),
    st.tuples(st.just('cancel'), st.integers(0, 50), st.booleans()),
    st.tuples(st.just('decide'), st.integers(0, 50), st.booleans()),
)


def _run(ops: list, serialize: bool) -> None:
    h = Harness(tools=TOOL_MIX, max_pending=8, serialize_per_tool=serialize,
                stream_idle_timeout_s=3.0)
    core = h.core
    now = 0.0
    executing: list = []  # calls the fake executor holds (sent, not answered)
    submitted: set[str] = set()

    answered: set[str] = set()
    sent_ids: set[str] = set()  # calls an executor was sent

    def feed(effects: list) -> None:
        h.feed(effects)
        assert core.container_problems() == []  # the containers agree with the state table
        for effect in effects:
            if isinstance(effect, fx.PublishResult):
                answered.add(effect.call.call_id)
            elif isinstance(effect, fx.Send):
                assert effect.call.call_id not in answered, 'sent after its result'
                executing.append(effect.call)
                sent_ids.add(effect.call.call_id)
            elif isinstance(effect, fx.StopOnExecutor) and not effect.await_answer \
                    and effect.call in executing:  # (a 'missing' op may have taken it)
                executing.remove(effect.call)

    for op in ops:
        kind = op[0]
        if kind == 'text':
            feed(core.text(op[1], now))
        elif kind == 'chunk':
            feed(core.chunk(op[1], op[2], op[3], now))
        elif kind == 'submit':
            call, effects = core.submit(op[1], op[2], now, source='test')
            submitted.add(call.call_id)
            feed(effects)
        elif kind == 'answer' and executing:
            call = executing.pop(op[1] % len(executing))
            if op[2]:
                feed(core.answered(call.call_id, now, success=True))
            elif op[1] % 2:
                feed(core.answered(call.call_id, now, success=False, error_code='no_frame'))
            else:
                feed(core.failed(call.call_id, 'transport', now))
        elif kind == 'missing' and executing:
            call = executing.pop(op[1] % len(executing))
            feed(core.executor_missing(call.call_id, now))
        elif kind == 'available':
            feed(core.executor_available(op[1], now))
        elif kind == 'time':
            now += op[1]
            due = core.next_wake()
            if due is not None and due <= now:
                feed(core.tick(now))
        elif kind == 'pause':
            feed(core.set_enabled(op[1], now))
        elif kind == 'cancel' and core.active_calls():
            calls = core.active_calls()
            call = calls[op[1] % len(calls)]
            feed(core.cancel(now, call_id=call.call_id) if op[2]
                 else core.cancel(now, generation_id=call.generation_id or 'none'))
        elif kind == 'decide' and core.active_calls():
            calls = core.active_calls()
            call = calls[op[1] % len(calls)]
            feed(core.decide(call.call_id, op[2], 'tester', '', now)[1])
    # Let everything run out: deadlines pass, executors answer what they still hold.
    for _ in range(20):
        now += 5.0
        feed(core.tick(now))
        while executing:
            feed(core.answered(executing.pop().call_id, now, success=True))
    assert core.pending_calls == 0 and core.next_wake() is None

    announced = Counter(e.call.call_id for e in h.of(fx.PublishCall))
    results = h.results()  # raises on a second result for any call
    assert all(count == 1 for count in announced.values())
    assert set(announced) <= set(results)
    assert submitted <= set(results)
    unparsed = set(results) - set(announced)
    assert all(results[i].error_code == errors.PARSE_ERROR or results[i].error_code ==
               errors.UNKNOWN_TOOL for i in unparsed)
    tool_messages = Counter(e.message['tool_call_id'] for e in h.of(fx.PublishChat)
                            if e.message['role'] == 'tool')
    assert tool_messages == Counter(list(results))  # one tool message per result
    for result in results.values():
        assert result.error_code in ('', *errors.ALL_CODES)
        assert result.outcome in errors.ALL_OUTCOMES
        if result.call.call_id not in sent_ids:  # never reached an executor
            assert result.outcome == errors.NOT_RUN, result


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPS, max_size=60), st.booleans())
def test_any_interleaving_gives_exactly_one_result_per_call(ops, serialize):
    _run(ops, serialize)


def test_the_property_runner_sees_a_lost_result(monkeypatch):
    """The property check fails when a call gets no result (it can catch the defect)."""
    original = DispatchCore._result

    def lose_cancelled(self, call, code, message, now, content='', outcome=errors.NOT_RUN):
        if code != errors.CANCELLED:
            original(self, call, code, message, now, content, outcome)

    ops = [('text', '<echo>a</echo><echo>b</echo>'), ('cancel', 1, True)]  # b: queued
    _run(ops, True)
    monkeypatch.setattr(DispatchCore, '_result', lose_cancelled)
    with pytest.raises(AssertionError):
        _run(ops, True)


def test_json_of_results_round_trips():
    h = Harness()
    (call,) = h.sent(h.text('[echo(text="a\\u00e9")]'))
    assert json.loads(call.arguments_json) == {'text': 'aé'}


def test_identical_calls_within_the_repeat_window_are_duplicates():
    h = Harness(tools={'say': ToolSettings(timeout_s=5.0, rate_limit_hz=0.5, burst=1,
                                           repeat_window_s=3.0)})
    (spoken,) = h.sent(h.text('<say>On it.</say>', now=0.0))
    for step in range(1, 10):  # a VLA repeats the marker with every action chunk
        h.text('<say>On it.</say>', now=step * 0.2)
    results = h.results()
    duplicates = [r for r in results.values() if r.error_code == errors.DUPLICATE]
    assert len(duplicates) == 9 and len(h.sent()) == 1
    assert all(spoken.call_id in r.error_message and 'still running' in r.error_message
               for r in duplicates)
    h.answer(spoken, 2.0)
    (late,) = h.of(fx.PublishResult, h.text('<say>On it.</say>', now=4.0))
    assert late.error_code == errors.DUPLICATE and 'finished 2.0 s ago' in late.error_message
    # Duplicates used none of the rate budget (burst 1): a different text runs at once.
    assert h.sent(h.text('<say>Done.</say>', now=4.5))
    # Past the window the same text runs again (here: limited by the rate, not a duplicate).
    (again,) = h.of(fx.PublishResult, h.text('<say>On it.</say>', now=5.5))
    assert again.error_code == errors.RATE_LIMITED
    stats = h.core.stats['say']
    assert stats.benign_by_code[errors.DUPLICATE] == 10
    assert errors.DUPLICATE not in stats.errors_by_code


def test_repeats_are_off_where_the_window_is_zero():
    h = Harness(tools={'echo': ToolSettings(timeout_s=5.0, repeat_window_s=0.0)})
    h.text('<echo>same</echo><echo>same</echo>')
    first, = h.sent()
    h.answer(first, 0.1)
    assert len(h.sent()) == 2 and not h.results()[first.call_id].error_code


def test_approval_confirm_waits_for_a_decision():
    h = Harness(tools={'echo': ToolSettings(timeout_s=5.0, approval='confirm')})
    out = h.text('<echo>move</echo><echo>again</echo>', now=0.0)
    requests = h.of(fx.RequestApproval, out)
    assert [r.call.arguments['text'] for r in requests] == ['move', 'again']
    assert requests[0].timeout_s == 5.0 and 'approval: confirm' in requests[0].reason
    assert h.sent() == []
    found, out = h.core.decide(requests[0].call.call_id, True, 'op', 'looks safe', 1.0)
    assert found and h.sent(out) == [requests[0].call]
    (closed,) = h.of(fx.ApprovalClosed, out)  # the request is closed for operator tools
    assert closed.outcome == 'approved by op'
    (audit,) = [a for a in h.of(fx.Audit, out) if a.event == 'approval']
    assert audit.fields['decided_by'] == 'op' and audit.fields['approved'] is True
    found, out = h.core.decide(requests[1].call.call_id, False, 'op', 'no', 1.5)
    (denied,) = h.of(fx.PublishResult, out)
    assert denied.error_code == errors.DENIED and 'op: no' in denied.error_message
    assert h.core.decide(requests[1].call.call_id, True, 'op', '', 2.0) == (False, [])


def test_approval_times_out_or_is_paused_and_deny_refuses_at_once():
    h = Harness(tools={'echo': ToolSettings(timeout_s=2.0, approval='confirm'),
                       'say': ToolSettings(approval='deny')})
    h.text('<echo>one</echo>', now=0.0)
    h.text('<echo>two</echo>', now=1.0)
    h.feed(h.core.tick(2.0))
    codes = [r.error_code for r in h.results().values()]
    assert codes == [errors.APPROVAL_TIMEOUT]
    h.feed(h.core.set_enabled(False, 2.5))
    (first, second) = h.results().values()
    assert second.error_code == errors.PAUSED and 'approval' in second.error_message
    h.feed(h.core.set_enabled(True, 2.6))
    (refused,) = h.of(fx.PublishResult, h.text('<say>hi</say>', now=3.0))
    assert refused.error_code == errors.DENIED and 'approval: deny' in refused.error_message


def test_open_streams_are_bounded_in_number_and_characters():
    h = Harness(max_open_streams=3, max_stream_bytes=1000)
    for index in range(5):  # five unfinished generations, each ending inside a call
        h.feed(h.core.chunk(f'g{index}', '<echo>open', False, float(index)))
    assert (h.core.streams.open_count, h.core.streams.held) == (3, 30)
    results = list(h.results().values())
    assert [r.call.generation_id for r in results] == ['g0', 'g1']  # the oldest, finished
    assert all(r.error_code == errors.PARSE_ERROR and 'max_open_streams' in r.error_message
               for r in results)
    assert len(h.of(fx.Log)) == 1  # one line, not one per stream
    h.feed(h.core.chunk('g2', 'x' * 990, False, 10.0))  # g2 fed last: g3 and g4 go first
    assert (h.core.streams.open_count, h.core.streams.held) == (1, 1000)
    assert h.core.streams.evicted == 4
    h.feed(h.core.chunk('g2', '</echo>', True, 11.0))
    assert (h.core.streams.open_count, h.core.streams.held) == (0, 0)
    assert h.core.pending_calls == 1  # g2's echo runs


def test_diagnostics_of_a_large_catalog_name_only_the_tools_called():
    from lerobot_tools_ros.dispatch import diagnostics
    h = Harness()
    h.core.catalog = ToolCatalog.from_tools([
        {'type': 'function', 'function': {'name': f'tool_{i}', 'parameters': {
            'type': 'object', 'properties': {}}}} for i in range(3)])
    h.text('<tool_call>{"name": "tool_1", "arguments": {}}</tool_call>')
    (call,) = h.sent()
    h.answer(call, 0.1)

    def named(found) -> list[str]:
        return [status.name for status in found]
    every = diagnostics.statuses(h.core, None, lambda name: True, str)
    assert named(every) == ['streams', 'tool_0', 'tool_1', 'tool_2']
    few = diagnostics.statuses(h.core, None, lambda name: True, str, max_tools=2)
    assert named(few) == ['streams', 'catalog', 'tool_1']
    assert few[1].values == {'tools': 3, 'called': 1}
    assert few[2].values['calls'] == 1
