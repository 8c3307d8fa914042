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

"""stream_speech: a say starts while its text still arrives (dispatch.stream_speech, the core)."""

import json

from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import DEFAULT_TOOLS, ToolCatalog
from lerobot_tools_ros.dispatch import DispatchCore, DispatchSettings, effects as fx, ToolSettings
from lerobot_tools_ros.dispatch.segments import segment_end, split_segments
from lerobot_tools_ros.parsing import parse
import pytest

CATALOG = ToolCatalog.from_tools(DEFAULT_TOOLS)
TEXT = 'Hello there. I will pick up the cube now; then place it. Done!'
CALLS = {
    'lerobot_marker': 'Plan: pick.\n<say>{}</say>',
    'hermes': '<tool_call>\n{{"name": "say", "arguments": {{"text": {}}}}}\n</tool_call>',
    'qwen3_coder_xml': ('<tool_call>\n<function=say>\n<parameter=text>\n{}\n</parameter>\n'
                        '</function>\n</tool_call>'),
    'openai_json': 'Sure. {{"name": "say", "arguments": {{"text": {}}}}} ok',
    'glm45': '<tool_call>say\n<arg_key>text</arg_key>\n<arg_value>{}</arg_value>\n</tool_call>',
}
CLOSING = {'lerobot_marker': '</say>', 'hermes': '"}}', 'qwen3_coder_xml': '</parameter>',
           'openai_json': '"}}', 'glm45': '</arg_value>'}
# the markup that closes the argument's value (the marker's closing tag ends the call)
VALUE_END = {'hermes': json.dumps(TEXT), 'openai_json': json.dumps(TEXT),
             'qwen3_coder_xml': '</function>', 'glm45': '</arg_value>'}


def closes(whole: str, end: str) -> int:
    """Return the index of the last character of ``end`` in ``whole``."""
    return whole.index(end) + len(end) - 1


def markup(fmt: str, text: str = TEXT) -> str:
    return CALLS[fmt].format(json.dumps(text) if fmt in ('hermes', 'openai_json') else text)


class Harness:
    """A core with stream_speech, fed a generation in 4-character deltas."""

    def __init__(self, say: ToolSettings | None = None, catalog: ToolCatalog = CATALOG,
                 **settings) -> None:
        settings.setdefault('stream_speech', True)
        say = say or ToolSettings(timeout_s=10.0, repeat_window_s=3.0)
        self.core = DispatchCore(catalog, DispatchSettings(**settings),
                                 lambda name: say if name == 'say' else ToolSettings(),
                                 id_prefix='s')
        self.effects: list = []
        self.at: list = []  # (delta index, effect)

    def stream(self, text: str, gen: str = 'g', now: float = 0.0, size: int = 4,
               final: bool = True, stop: int | None = None) -> None:
        """Feed deltas of `text` (up to char `stop`), each at its own index."""
        pieces = [text[i:i + size] for i in range(0, len(text), size)]
        if stop is not None:
            pieces = pieces[:stop]
        for index, delta in enumerate(pieces):
            last = final and index == len(pieces) - 1
            self.add(self.core.chunk(gen, delta, last, now), index)

    def add(self, effects: list, index: int = -1) -> list:
        self.effects += effects
        self.at += [(index, effect) for effect in effects]
        return effects

    def of(self, kind) -> list:
        return [e for e in self.effects if isinstance(e, kind)]

    def results(self) -> list:
        return self.of(fx.PublishResult)

    def spoken(self) -> str:
        return ''.join(e.text for e in self.of(fx.SendText))

    def stopped(self, call, now: float = 1.0) -> None:
        """Confirm, as its executor, that a call stopped part-way (its result waits for it)."""
        self.add(self.core.answered(call.call_id, now, success=False, error_code='cancelled',
                                    error_message='say cancelled', outcome=errors.RAN))


@pytest.mark.parametrize('fmt', sorted(CALLS))
def test_a_streamed_say_starts_at_its_first_sentence_and_ends_with_one_result(fmt):
    h = Harness()
    whole = markup(fmt)
    h.stream(whole)
    sends = [(i, e) for i, e in h.at if isinstance(e, fx.Send)]
    texts = [(i, e) for i, e in h.at if isinstance(e, fx.SendText)]
    assert len(sends) == 1
    first_end = whole.index('Hello there.') + len('Hello there. ')
    assert sends[0][0] <= first_end // 4 + 1  # the delta after the sentence ends, at most
    assert texts[0][1].text == 'Hello there. ' and texts[0][0] == sends[0][0]
    assert sends[0][0] < whole.index(CLOSING[fmt]) // 4  # long before the closing markup
    # whole segments in order, the rest when the value closes, nothing lost or repeated; the
    # end with the complete call (the marker's value closes with its call)
    segments = ['Hello there. ', 'I will pick up the cube now; ', 'then place it. ', 'Done!']
    if fmt == 'lerobot_marker':
        assert [(e.text, e.end) for _, e in texts] == [(t, t == 'Done!') for t in segments]
    else:
        assert [(e.text, e.end) for _, e in texts] == [(t, False) for t in segments] + [
            ('', True)]
        assert texts[3][0] == closes(whole, VALUE_END[fmt]) // 4  # the delta closing the value
        end = parse(whole, CATALOG).calls[0].span[1] - 1  # the call's markup is complete
        assert texts[3][0] < texts[4][0] == end // 4
    call = sends[0][1].call
    assert not h.results()  # the executor answers after speaking the end
    h.add(h.core.answered(call.call_id, 1.0, success=True, content='spoken'))
    assert [(r.call.call_id, r.success) for r in h.results()] == [(call.call_id, True)]
    # the announcement, the audit log and the chat carry the final text
    assert [json.loads(e.call.arguments_json) for e in h.of(fx.PublishCall)] == [{'text': TEXT}]
    audit = [e.fields for e in h.of(fx.Audit) if e.event == 'call']
    assert [a['arguments'] for a in audit] == [{'text': TEXT}]
    chat = [e.message for e in h.of(fx.PublishChat) if e.message['role'] == 'assistant']
    assert chat[-1]['tool_calls'][0]['function']['arguments'] == {'text': TEXT}


def test_with_stream_speech_off_or_from_policy_text_nothing_starts_early():
    for h, feed in ((Harness(stream_speech=False), 'stream'), (Harness(), 'text')):
        if feed == 'stream':
            h.stream(markup('lerobot_marker'))
            assert h.at[[e for _, e in h.at].index(h.of(fx.Send)[0])][0] == \
                len(markup('lerobot_marker')) // 4  # the last delta: the closing tag
        else:
            h.add(h.core.text(markup('lerobot_marker'), 0.0))
        assert not h.of(fx.SendText)
        assert [e.call.arguments for e in h.of(fx.Send)] == [{'text': TEXT}]


def test_a_short_say_complete_before_a_whole_sentence_runs_as_before():
    h = Harness()
    h.stream('<say>On it.</say>')
    assert not h.of(fx.SendText)
    assert [e.call.arguments for e in h.of(fx.Send)] == [{'text': 'On it.'}]


@pytest.mark.parametrize('whole', [
    '<tool_call>{"name": "say", "arguments": {"text": "On it"}}\n</tool_call>',
    '<tool_call>say\n<arg_key>text</arg_key>\n<arg_value>On it</arg_value>\n</tool_call>',
])
def test_a_short_say_starts_when_its_value_closes_and_a_repeat_still_waits(whole):
    h = Harness()
    h.stream(whole, gen='a', size=1)
    [(at, send)] = [(i, e) for i, e in h.at if isinstance(e, fx.Send)]
    # the value closed: a segment without a boundary, well before the call's end
    assert at == closes(whole, 'On it"' if whole.startswith('<tool_call>{') else '</arg_value>')
    assert [(i, e.text, e.end) for i, e in h.at if isinstance(e, fx.SendText)] == [
        (at, 'On it', False), (len(whole) - 1, '', True)]
    h.add(h.core.answered(send.call.call_id, 1.0, success=True))
    # the same short say again (next action chunk): it does not start early; a duplicate
    h.stream(whole, gen='b', now=1.5, size=1)
    assert len(h.of(fx.Send)) == 1 and len(h.of(fx.SendText)) == 2
    assert [r.error_code for r in h.results()] == ['', errors.DUPLICATE]


def test_a_malformed_tail_stops_speech_with_one_result_saying_what_was_spoken():
    h = Harness()
    h.stream('<tool_call>{"name": "say", "arguments": {"text": "Hello there. I will go'
             '"}, oops}</tool_call>')
    call = h.of(fx.Send)[0].call
    stops = h.of(fx.StopOnExecutor)
    assert [(s.call.call_id, s.await_answer) for s in stops] == [(call.call_id, True)]
    # all of the text went out when its value closed; the end never did
    assert [(e.text, e.end) for e in h.of(fx.SendText)] == [('Hello there. ', False),
                                                            ('I will go', False)]
    assert h.results() == []  # until its executor says what it did
    h.stopped(call)
    [result] = h.results()
    assert result.error_code == errors.PARSE_ERROR and result.outcome == errors.RAN
    assert 'malformed' in result.error_message
    assert "22 characters of its text had been handed to speech in 2 segment(s): 'Hello " \
        "there. I will go'" in result.error_message
    h.add(h.core.answered(call.call_id, 1.5, success=False, error_code='cancelled'))
    assert len(h.results()) == 1
    assert [json.loads(e.call.arguments_json) for e in h.of(fx.PublishCall)] == [
        {'text': 'Hello there. I will go'}]
    chat = [e.message for e in h.of(fx.PublishChat) if e.message['role'] == 'assistant']
    assert chat[-1]['tool_calls'][0]['function']['arguments'] == {'text': 'Hello there. I will go'}


def test_a_complete_call_that_names_another_tool_stops_speech_and_is_not_run():
    echo = {'type': 'function', 'function': {'name': 'echo', 'parameters': {
        'type': 'object', 'properties': {'text': {'type': 'string'}}}}}
    h = Harness(catalog=ToolCatalog.from_tools(DEFAULT_TOOLS + [echo]))
    # a later JSON member names the call's tool: the say that started is not what was called
    h.stream('{"name": "say", "arguments": {"text": "Hello there. Bye"}, "function": '
             '{"name": "echo", "arguments": {"text": "x"}}}')
    [send] = h.of(fx.Send)
    assert send.call.name == 'say' and len(h.of(fx.StopOnExecutor)) == 1
    h.stopped(send.call)
    [result] = h.results()
    assert result.error_code == errors.INVALID_ARGUMENTS
    assert "names 'echo', not the 'say'" in result.error_message
    assert [(e.call.name, e.call.arguments) for e in h.of(fx.PublishCall)] == [
        ('say', {'text': 'Hello there. Bye'})]


def test_a_truncated_generation_stops_speech_with_one_truncated_result():
    h = Harness()
    h.stream('<say>Hello there. And then')
    h.stopped(h.of(fx.Send)[0].call)
    [result] = h.results()
    assert result.error_code == errors.PARSE_ERROR and 'not closed' in result.error_message
    assert len(h.of(fx.StopOnExecutor)) == 1
    chat = [e.message for e in h.of(fx.PublishChat) if e.message['role'] == 'assistant']
    assert chat[-1]['tool_calls'][0]['function']['arguments'] == {'text': 'Hello there. And then'}


@pytest.mark.parametrize('how', ['cancel', 'pause', 'timeout'])
def test_cancel_pause_and_timeout_stop_speech_with_one_result(how):
    h = Harness()
    whole = markup('hermes')
    h.stream(whole, final=False, stop=whole.index('then') // 4)
    call = h.of(fx.Send)[0].call
    spoken = h.spoken()
    if how == 'cancel':
        h.add(h.core.cancel(1.0, call_id=call.call_id))
    elif how == 'pause':
        h.add(h.core.set_enabled(False, 1.0))
    else:
        h.add(h.core.tick(11.0))
    if how != 'timeout':  # a stop's result waits for the executor's answer
        h.stopped(call, 1.5)
    [result] = h.results()
    assert result.error_code == {'cancel': errors.CANCELLED, 'pause': errors.PAUSED,
                                 'timeout': errors.TIMEOUT}[how]
    assert result.outcome == {'cancel': errors.RAN, 'pause': errors.RAN,
                              'timeout': errors.UNKNOWN}[how]
    assert f'{len(spoken)} characters of its text had been handed' in result.error_message
    assert len(h.of(fx.StopOnExecutor)) == 1
    # the rest of the generation speaks no more and gives no second result
    rest = whole[whole.index('then') // 4 * 4:]
    h.add(h.core.chunk('g', rest, True, 12.0))
    assert h.spoken() == spoken and len(h.results()) == 1
    chat = [e.message for e in h.of(fx.PublishChat) if e.message['role'] == 'assistant']
    assert chat[-1]['tool_calls'][0]['function']['arguments'] == {'text': TEXT}


def test_a_repeat_is_decided_at_its_end_and_suppressed_when_identical():
    h = Harness()
    h.stream(markup('lerobot_marker'), gen='a')
    first = h.of(fx.Send)[0].call
    h.add(h.core.answered(first.call_id, 1.0, success=True))
    h.stream(markup('lerobot_marker'), gen='b', now=1.5)  # the same say, next action chunk
    assert len(h.of(fx.Send)) == 1 and len(h.of(fx.SendText)) == 4  # never started
    assert [r.error_code for r in h.results()] == ['', errors.DUPLICATE]
    # same first sentence, different rest: decided complete, and it runs (not a duplicate)
    h.stream(markup('lerobot_marker', 'Hello there. Something else now.'), gen='c', now=2.0)
    assert [e.call.arguments for e in h.of(fx.Send)][1:] == [
        {'text': 'Hello there. Something else now.'}]
    assert len(h.of(fx.SendText)) == 4
    # a different first sentence starts early again
    h.add(h.core.answered(h.of(fx.Send)[1].call.call_id, 2.5, success=True))
    h.stream(markup('lerobot_marker', 'Now the cup. Then done.'), gen='d', now=2.6)
    assert [e.text for e in h.of(fx.SendText)][4:] == ['Now the cup. ', 'Then done.']


@pytest.mark.parametrize('gate, code', [
    ({'approval': 'confirm'}, None), ({'allowed_tools': ['record_observation']},
                                      errors.NOT_ALLOWED),
    ({'rate_limit_hz': 0.001, 'burst': 1}, errors.RATE_LIMITED),
])
def test_gates_that_refuse_or_hold_a_call_keep_it_from_starting_early(gate, code):
    settings = {k: v for k, v in gate.items() if k == 'allowed_tools'}
    say = ToolSettings(timeout_s=10.0, **{k: v for k, v in gate.items()
                                          if k != 'allowed_tools'})
    h = Harness(say=say, **settings)
    if 'burst' in gate:
        h.add(h.core.text('<say>first</say>', 0.0))  # takes the one token
        h.add(h.core.answered(h.of(fx.Send)[0].call.call_id, 0.1, success=True))
    h.stream(markup('hermes'), now=0.2)
    assert not h.of(fx.SendText)
    if code is None:
        assert len(h.of(fx.RequestApproval)) == 1 and not h.results()
    else:
        assert h.results()[-1].error_code == code


def test_a_say_behind_a_running_say_waits_to_be_complete_and_queues():
    h = Harness()
    h.add(h.core.text('<say>Busy now.</say>', 0.0))
    h.stream(markup('lerobot_marker'), now=0.1)
    assert not h.of(fx.SendText) and len(h.of(fx.Send)) == 1
    h.add(h.core.answered(h.of(fx.Send)[0].call.call_id, 1.0, success=True))
    assert [e.call.arguments for e in h.of(fx.Send)][1:] == [{'text': TEXT}]


def test_pause_before_the_first_sentence_refuses_the_call_when_complete():
    h = Harness()
    h.add(h.core.set_enabled(False, 0.0))
    h.stream(markup('lerobot_marker'))
    assert not h.of(fx.Send)
    assert [r.error_code for r in h.results()] == [errors.PAUSED]


def test_an_executor_that_appears_later_gets_all_the_text_so_far():
    h = Harness()
    whole = markup('lerobot_marker')
    h.stream(whole, final=False, stop=8)
    call = h.of(fx.Send)[0].call
    h.add(h.core.executor_missing(call.call_id, 0.1))
    h.add(h.core.chunk('g', whole[32:], True, 0.2))
    assert not h.results()
    before = len(h.of(fx.SendText))
    h.add(h.core.executor_available('say', 0.3))
    again = h.of(fx.SendText)[before:]
    assert ''.join(e.text for e in again) == TEXT and again[-1].end


@pytest.mark.parametrize('text, pieces, rest', [
    ('Hello there. How are', ['Hello there. '], 'How are'),
    ('OK, going. Dr. Smith, e.g. Bob. Pi is 3.14', ['OK, going. ', 'Dr. Smith, e.g. Bob. '],
     'Pi is 3.14'),
    ('Wait: go; now!', ['Wait: ', 'go; '], 'now!'),
    ('A long lead-in clause that runs past forty characters, and more', [
        'A long lead-in clause that runs past forty characters, '], 'and more'),
    ('你好。我来了！好', ['你好。', '我来了！'], '好'),
    ('line one\nline two', ['line one\n'], 'line two'),
    ('He said "Stop." Then', ['He said "Stop." '], 'Then'),
])
def test_segments_are_whole_sentences_or_clauses(text, pieces, rest):
    assert split_segments(text) == (pieces, rest)


def test_text_without_punctuation_is_cut_at_a_space_when_long():
    text = 'word ' * 50
    end = segment_end(text)
    assert 0 < end <= 200 and text[end - 1] == ' '


# -- the decisions of dispatch.stream_speech, on a Speech alone -------------------------------

def _speech(received: str = '', closed: bool = False):
    from lerobot_tools_ros.dispatch.calls import Speech
    return Speech(0, 'say', 'text', 'lerobot_marker', received=received, closed=closed)


def test_the_first_segment_is_whole_or_all_of_a_closed_value():
    from lerobot_tools_ros.dispatch import stream_speech
    assert stream_speech.first_segment(_speech('Hello there')) == ''  # no boundary yet
    assert stream_speech.first_segment(_speech('Hello there', closed=True)) == 'Hello there'
    assert stream_speech.first_segment(_speech('Hello there. I will')) == 'Hello there. '


def test_text_is_handed_in_whole_segments_then_the_rest_with_the_end():
    from lerobot_tools_ros.dispatch import stream_speech
    speech = _speech('Hello there. I will')
    assert stream_speech.text_to_hand(speech) == 'Hello there. '
    assert stream_speech.text_to_hand(speech) is None  # 'I will' is not whole yet
    speech.received += ' go.'
    speech.closed = True
    assert stream_speech.text_to_hand(speech) == 'I will go.'
    speech.complete = True
    assert stream_speech.text_to_hand(speech) == '' and speech.ended  # the end, nothing left
    assert stream_speech.spoken(speech) == (
        '23 characters of its text had been handed to speech in 2 segment(s): '
        "'Hello there. I will go.'")
    stream_speech.not_sent(speech)  # its executor was missing: nothing arrived
    assert (speech.handed, speech.segments, speech.ended) == ('', 0, False)
    assert stream_speech.spoken(speech) == 'none of its text had been handed to speech'


def test_a_first_segment_that_begins_a_recent_call_is_a_repeat():
    from lerobot_tools_ros.dispatch import stream_speech
    speech = _speech('Hello there. More')
    recent = {('say', json.dumps({'text': 'hello there. more to come'})): ('call_1', 10.0)}
    assert stream_speech.repeats_recent(speech, 'Hello there. ', recent, 5.0, 12.0)
    assert not stream_speech.repeats_recent(speech, 'Hello there. ', recent, 5.0, 16.0)  # past
    assert not stream_speech.repeats_recent(speech, 'Hello there. ', recent, 0.0, 12.0)  # off
    assert not stream_speech.repeats_recent(speech, 'Goodbye. ', recent, 5.0, 12.0)
