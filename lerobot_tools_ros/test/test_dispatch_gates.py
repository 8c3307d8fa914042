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
The core's promises about what reaches the robot, on their own (no ROS graph, no clock).

A gate changed by an operator holds for calls admitted before; a generation the dispatcher ended
stays ended; a caller cannot take over a call's id; a failed call does not suppress its retry.
"""

from lerobot_tools_ros import errors
from lerobot_tools_ros.dispatch import effects as fx, ToolSettings
from lerobot_tools_ros.dispatch.core import ORIGIN_CALL, ORIGIN_STREAM, ORIGIN_TEXT
from lerobot_tools_ros.dispatch.repeats import normalise_text
import pytest
from test_dispatch_core import Harness


def _names(h: Harness) -> list[str]:
    return [call.name for call in h.sent()]


# -- a generation the dispatcher ended stays ended --------------------------------------------

QUOTED = ['<echo>the user read out "', '<say>Emergency stop released, resuming motion</say>',
          '" from the screen</echo>']


def test_an_evicted_stream_does_not_turn_its_rest_into_new_calls():
    h = Harness(max_open_streams=1)
    h.feed(h.core.chunk('quoting', QUOTED[0], False, 0.0))
    h.feed(h.core.chunk('other', 'Plan only.', False, 0.1))  # evicts 'quoting'
    for at, piece in enumerate(QUOTED[1:]):
        h.feed(h.core.chunk('quoting', piece, at == 1, 0.2 + at))
    assert 'say' not in _names(h)  # before: the quoted sentence was spoken
    assert h.core.streams.chunks_refused == 2
    (log,) = [e for e in h.of(fx.Log) if 'refused' in e.text]
    assert "'quoting'" in log.text and 'new generation_id' in log.text
    # Its final chunk came: the id may start a new generation.
    h.feed(h.core.chunk('quoting', '<echo>next</echo>', True, 5.0))
    assert _names(h) == ['echo']


def test_an_idle_stream_stays_ended_until_a_chunk_numbered_one():
    h = Harness(stream_idle_timeout_s=1.0)
    h.feed(h.core.chunk('g', QUOTED[0], False, 0.0, index=1))
    h.feed(h.core.tick(1.0))  # idle: ended with a parse_error for the open echo
    h.feed(h.core.chunk('g', QUOTED[1], False, 2.0, index=2))
    assert h.sent() == [] and h.core.streams.chunks_refused == 1
    h.feed(h.core.chunk('g', '<say>A new one.</say>', True, 3.0, index=1))
    assert [c.arguments for c in h.sent()] == [{'text': 'A new one.'}]


# -- numbered chunks: loss and order are exact -----------------------------------------------

def test_a_missing_chunk_ends_its_generation_with_one_result():
    h = Harness()
    h.feed(h.core.chunk('g', '<echo>a</echo><say>Pick', False, 0.0, index=1))
    h.feed(h.core.chunk('g', ' it up.</say>', True, 0.2, index=3))  # 2 was lost
    (echo,) = h.sent()
    results = [r for r in h.results().values() if r.call is not echo]
    (busy,) = results
    assert busy.error_code == errors.BUSY and 'chunk 2 never arrived' in busy.error_message
    assert busy.call.origin == ORIGIN_STREAM and h.core.streams.chunks_lost == 1
    assert (h.core.streams.open_count, h.core.streams.held) == (0, 0)
    assert h.core.pending_calls == 1  # the echo only


def test_a_repeated_or_headless_numbered_chunk_is_not_parsed():
    h = Harness()
    h.feed(h.core.chunk('late', '<say>middle</say>', False, 0.0, index=4))
    h.feed(h.core.chunk('late', '<say>end</say>', True, 0.1, index=5))
    h.feed(h.core.chunk('twice', '<echo>x', False, 0.0, index=1))
    h.feed(h.core.chunk('twice', '<echo>x', False, 0.1, index=1))
    messages = sorted(r.error_message for r in h.results().values())
    assert h.sent() == [] and len(messages) == 2
    assert 'chunk(s) 1..3 never arrived' in messages[0]
    assert 'chunk 1 arrived after chunk 1 (repeated or out of order)' in messages[1]
    assert h.core.streams.chunks_lost == 3 and h.core.streams.chunks_refused == 1


def test_unnumbered_chunks_are_taken_as_before():
    h = Harness()
    for piece in ('<ec', 'ho>a</e', 'cho>'):
        h.feed(h.core.chunk('g', piece, False, 0.0))
    h.feed(h.core.chunk('g', '', True, 0.0))
    assert [c.arguments for c in h.sent()] == [{'text': 'a'}]


# -- call ids -----------------------------------------------------------------------------------

def test_a_caller_cannot_take_the_id_of_a_generated_or_recent_call():
    h = Harness()
    policy_call, = h.sent(h.text('<echo>policy</echo>'))
    counter = int(policy_call.call_id.removeprefix('call_t'), 16)
    for ahead in range(1, 4):  # the ids the dispatcher makes next
        guess = f'call_t{counter + ahead:06x}'
        taken, out = h.core.submit('echo', '{"text": "caller"}', 0.0, source='x', call_id=guess)
        h.feed(out)
        message = h.results()[taken.call_id].error_message
        assert 'reserved for the ids the dispatcher makes' in message
    h.answer(policy_call, 0.1)
    later, = h.sent(h.text('<echo>later</echo>'))
    h.answer(later, 0.2)
    assert h.results()[later.call_id].success  # its own result, no caller's call in its place
    mine, out = h.core.submit('echo', '{"text": "1"}', 0.3, source='x', call_id='mine')
    h.answer(mine, 0.4)
    again, out = h.core.submit('echo', '{"text": "2"}', 0.5, source='x', call_id='mine')
    h.feed(out)
    assert 'names a recent call of another tool or with other arguments' in (
        h.results()[again.call_id].error_message)


def test_a_repeated_call_id_joins_the_running_call_and_nothing_runs_twice():
    h = Harness()
    first, out = h.core.submit('echo', '{"text": "1"}', 0.0, source='ui', call_id='c-1')
    h.feed(out)
    again, out = h.core.submit('echo', '{ "text" : "1" }', 0.1, source='ui', call_id='c-1')
    h.feed(out)
    assert again is first and h.sent(out) == []  # the same JSON value: the same call
    h.answer(first, 0.2)
    assert len(h.of(fx.PublishResult)) == 1 and h.results()['c-1'].success


def test_a_repeat_of_a_call_that_may_have_acted_gets_its_result_again():
    h = Harness()
    first, out = h.core.submit('echo', '{"text": "1"}', 0.0, source='ui', call_id='c-1')
    h.feed(out)
    h.feed(h.core.answered('c-1', 0.1, success=True, content='done', outcome=errors.RAN))
    repeat, out = h.core.submit('echo', '{"text": "1"}', 5.0, source='ui', call_id='c-1')
    h.feed(out)
    (again,) = h.of(fx.AnswerAgain, out)
    assert again.call is repeat and repeat.call_id == 'c-1' and h.sent(out) == []
    assert (again.earlier.success, again.earlier.content, again.earlier.outcome) == (
        True, 'done', errors.RAN)
    assert h.of(fx.PublishResult, out) == []  # the call has its one result already
    lost, out = h.core.submit('echo', '{"text": "2"}', 6.0, source='ui', call_id='c-2')
    h.feed(out)
    h.feed(h.core.tick(60.0))  # timed out while sent: it may have run
    (again,) = h.of(fx.AnswerAgain, h.feed(h.core.submit(
        'echo', '{"text": "2"}', 61.0, source='ui', call_id='c-2')[1]))
    assert (again.earlier.error_code, again.earlier.outcome) == (errors.TIMEOUT, errors.UNKNOWN)


def test_a_call_that_did_not_act_leaves_its_id_free_for_a_retry():
    h = Harness()
    h.feed(h.core.set_enabled(False, 0.0))
    paused, out = h.core.submit('echo', '{"text": "1"}', 0.0, source='ui', call_id='c-1')
    h.feed(out)
    assert (h.results()['c-1'].error_code, h.results()['c-1'].outcome) == (
        errors.PAUSED, errors.NOT_RUN)
    h.feed(h.core.set_enabled(True, 1.0))
    retry, out = h.core.submit('echo', '{"text": "1"}', 1.0, source='ui', call_id='c-1')
    assert h.sent(h.feed(out)) == [retry] and retry is not paused


def test_what_the_dispatcher_knows_is_kept_apart_from_what_a_caller_claims():
    h = Harness()
    h.text('<echo>a</echo>')
    h.feed(h.core.chunk('g', '<echo>b</echo>', True, 0.0))
    claimed, out = h.core.submit('echo', '{"text": "c"}', 0.0, source='policy')
    h.feed(out)
    origins = {a.fields['arguments']['text']: (a.fields['origin'], a.fields['source'])
               for a in h.of(fx.Audit) if a.event == 'call'}
    assert origins == {'a': (ORIGIN_TEXT, 'policy'), 'b': (ORIGIN_STREAM, 'policy'),
                       'c': (ORIGIN_CALL, 'policy')}


# -- a changed gate holds for calls admitted before ----------------------------------------------

@pytest.mark.parametrize('change, code', [
    ({'approval': 'deny'}, errors.DENIED),
    ({'allowed_tools': ['say']}, errors.NOT_ALLOWED),
])
def test_queued_calls_meet_the_gate_as_it_is_when_their_turn_comes(change, code):
    tools = {'echo': ToolSettings(timeout_s=10.0)}
    h = Harness(tools=tools)
    first, = h.sent(h.text('<echo>1</echo><echo>2</echo><echo>3</echo>', now=0.0))
    if 'approval' in change:
        tools['echo'] = ToolSettings(timeout_s=10.0, approval=change['approval'])
    else:
        h.core.settings.allowed_tools = change['allowed_tools']
    h.core.settings_changed(0.5)
    out = h.answer(first, 1.0)
    assert h.sent(out) == []  # before: 2 of 3 still reached the robot
    refused = [r for r in h.of(fx.PublishResult, out) if r.call is not first]
    assert [r.error_code for r in refused] == [code, code]
    assert all('after this call was accepted; it did not run' in r.error_message
               for r in refused)
    assert h.core.pending_calls == 0


def test_a_call_waiting_for_its_executor_meets_a_deny_set_meanwhile():
    tools = {'echo': ToolSettings(timeout_s=10.0)}
    h = Harness(tools=tools)
    call, = h.sent(h.text('<echo>move</echo><echo>next</echo>', now=0.0))
    h.feed(h.core.executor_missing(call.call_id, 0.0))
    tools['echo'] = ToolSettings(timeout_s=10.0, approval='deny')
    h.core.settings_changed(1.0)
    out = h.feed(h.core.executor_available('echo', 1.9))
    assert h.sent(out) == []
    assert [r.error_code for r in h.of(fx.PublishResult, out)] == [errors.DENIED] * 2
    assert h.core.pending_calls == 0


def test_a_call_queued_under_auto_asks_for_approval_once_confirm_is_set():
    tools = {'echo': ToolSettings(timeout_s=10.0)}
    h = Harness(tools=tools)
    first, = h.sent(h.text('<echo>1</echo><echo>2</echo>', now=0.0))
    tools['echo'] = ToolSettings(timeout_s=10.0, approval='confirm')
    h.core.settings_changed(0.5)
    out = h.answer(first, 1.0)
    (request,) = h.of(fx.RequestApproval, out)
    assert request.call.arguments == {'text': '2'} and request.timeout_s == pytest.approx(9.0)
    assert 'after this call was accepted' in request.reason and h.sent(out) == []
    found, out = h.core.decide(request.call.call_id, True, 'op', '', 2.0)
    assert found and h.sent(out) == [request.call]  # approved: not asked again


def test_an_approved_call_meets_a_deny_set_while_it_waited():
    tools = {'echo': ToolSettings(timeout_s=10.0, approval='confirm')}
    h = Harness(tools=tools)
    (request,) = h.of(fx.RequestApproval, h.text('<echo>1</echo>', now=0.0))
    tools['echo'] = ToolSettings(timeout_s=10.0, approval='deny')
    h.core.settings_changed(0.5)
    found, out = h.core.decide(request.call.call_id, True, 'op', '', 1.0)
    assert found and h.sent(out) == []
    (result,) = h.of(fx.PublishResult, out)
    assert result.error_code == errors.DENIED
    assert len(h.of(fx.ApprovalClosed, out)) == 1


# -- repeats -------------------------------------------------------------------------------------

def test_a_retry_after_a_failed_call_is_not_a_duplicate():
    h = Harness(tools={'say': ToolSettings(timeout_s=5.0, repeat_window_s=30.0)})
    first, = h.sent(h.text('<say>On it.</say>', now=0.0))
    h.answer(first, 0.5, success=False, error_code=errors.EXECUTION_FAILED)
    retry, = h.sent(h.text('<say>On it.</say>', now=1.0))
    h.feed(h.core.set_enabled(False, 1.5))  # paused while it ran
    h.feed(h.core.set_enabled(True, 1.6))
    h.feed(h.core.answered(retry.call_id, 1.7, success=False, error_code=errors.CANCELLED))
    third, = h.sent(h.text('<say>On it.</say>', now=2.0))
    h.answer(third, 2.5)  # spoken: now its repeats are suppressed
    (late,) = h.of(fx.PublishResult, h.text('<say>On it.</say>', now=3.0))
    assert late.error_code == errors.DUPLICATE


@pytest.mark.parametrize('variant', [
    'On it.', '  On   it. ', 'On\u00a0it.', 'On\u200b it.', 'ON IT.', 'On\tit.\n',
    '\uff2fn it.',  # a fullwidth O (NFKC)
])
def test_text_variants_of_a_say_are_one_utterance(variant):
    h = Harness(tools={'say': ToolSettings(timeout_s=5.0, repeat_window_s=30.0)})
    first, = h.sent(h.text('<say>On it.</say>', now=0.0))
    (result,) = h.of(fx.PublishResult, h.text(f'<say>{variant}</say>', now=0.5))
    assert result.error_code == errors.DUPLICATE and normalise_text(variant) == 'on it.'


def test_constrained_strings_are_compared_exactly():
    schema = {'type': 'object', 'properties': {
        'text': {'type': 'string'}, 'mode': {'type': 'string', 'enum': ['a', 'A']}}}
    from lerobot_tools_ros.dispatch.repeats import free_text_properties, repeat_key
    loose = free_text_properties(schema)
    assert loose == {'text'}
    assert repeat_key('t', {'text': 'X', 'mode': 'a'}, loose) != \
        repeat_key('t', {'text': 'x', 'mode': 'A'}, loose)
    assert repeat_key('t', {'text': 'X', 'mode': 'a'}, loose) == \
        repeat_key('t', {'text': ' x', 'mode': 'a'}, loose)


# -- a call of a tool that is still running a call (when_busy) --------------------------------

def test_when_busy_queue_runs_the_second_call_after_the_first():
    h = Harness(tools={'echo': ToolSettings(timeout_s=10.0)})
    first, = h.sent(h.text('<echo>1</echo><echo>2</echo>', now=0.0))
    out = h.answer(first, 1.0)
    assert [c.arguments for c in h.sent(out)] == [{'text': '2'}]


def test_when_busy_replace_cancels_the_running_and_queued_calls_then_runs():
    h = Harness(tools={'echo': ToolSettings(timeout_s=10.0, when_busy='replace')})
    first, = h.sent(h.text('<echo>1</echo>', now=0.0))
    out = h.text('<echo>2</echo><echo>3</echo>', now=0.5)
    stops = h.of(fx.StopOnExecutor, out)
    assert [s.call for s in stops] == [first] and stops[0].await_answer
    ended = {r.call.arguments['text']: r for r in h.of(fx.PublishResult, out)}
    assert set(ended) == {'2'}  # the running one is answered when its executor stopped it
    assert ended['2'].error_code == errors.CANCELLED and ended['2'].outcome == errors.NOT_RUN
    assert 'it did not run' in ended['2'].error_message
    assert h.sent(out) == []  # the tool is busy until the cancelled call answers
    out = h.answer(first, 0.8, success=False, error_code=errors.CANCELLED, outcome=errors.RAN,
                   error_message='echo cancelled')  # its executor confirms: the last runs
    assert [c.arguments for c in h.sent(out)] == [{'text': '3'}]
    (replaced,) = h.of(fx.PublishResult, out)
    assert replaced.call is first and replaced.error_code == errors.CANCELLED
    assert replaced.outcome == errors.RAN
    assert 'replaced by call' in replaced.error_message
    assert 'tool.echo.when_busy is replace' in replaced.error_message


def test_when_busy_refuse_answers_busy_and_keeps_the_running_call():
    h = Harness(tools={'echo': ToolSettings(timeout_s=10.0, when_busy='refuse')})
    first, = h.sent(h.text('<echo>1</echo>', now=0.0))
    out = h.text('<echo>2</echo>', now=0.5)
    (refused,) = h.of(fx.PublishResult, out)
    assert refused.error_code == errors.BUSY and h.sent(out) == []
    assert f'still running call {first.call_id}' in refused.error_message
    assert 'tool.echo.when_busy is refuse' in refused.error_message
    out = h.answer(first, 1.0)
    assert [r.call for r in h.of(fx.PublishResult, out)] == [first]
    assert h.of(fx.PublishResult, out)[0].error_code == ''


def test_one_gate_list_serves_admission_and_start_in_one_order():
    """The gates an operator can change are checked again, in the same order, at start."""
    from lerobot_tools_ros.dispatch import gates
    both = [g.check.__name__ for g in gates.GATES if g.at_admission and g.at_start]
    assert both == ['_allowed', '_not_denied', '_confirmed']
    assert [g.check.__name__ for g in gates.GATES if g.at_start] == [
        '_in_catalog', '_allowed', '_not_denied', '_confirmed']
    assert gates.GATES[-1].check.__name__ == '_confirmed'  # a hold comes after every refusal
