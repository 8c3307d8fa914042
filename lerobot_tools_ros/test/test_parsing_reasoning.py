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
Calls inside reasoning spans are plans, not requests: reported, never dispatched.

Serving engines split ``<think>``...``</think>`` (and each family's own reasoning markers) off
before their tool parsers run. A robot must not execute what a model only considered, so such
calls become ``call_in_reasoning`` issues (visible as parse_error results), the span's text
stays in the content verbatim (as the engines return reasoning), and a call after the span is
dispatched. The corpus holds more cases;
every one of them is also streamed at every split point (test_parsing_streaming).
"""

from lerobot_tools_ros.parsing import (CALL_IN_REASONING, CallEvent, ContentEvent, ISSUE_CODES,
                                       IssueEvent, parse, StreamingParser)
from parsing_corpus import by_id, catalog, guard_fails, stream, summary
import pytest

CATALOG = catalog()
HERMES = '<tool_call>{"name": "say", "arguments": {"text": "%s"}}</tool_call>'


def every_split_agrees(text: str, **kwargs):
    """Parse ``text``; streaming it cut at every single point (and per character) must agree."""
    with guard_fails():
        expected = parse(text, CATALOG, **kwargs)
        for cut in range(len(text) + 1):
            assert stream(text, [cut], CATALOG, **kwargs) == expected, cut
        assert stream(text, list(range(len(text))), CATALOG, **kwargs) == expected
    return expected


def test_the_code_is_public():
    assert CALL_IN_REASONING == 'call_in_reasoning' and CALL_IN_REASONING in ISSUE_CODES


def test_call_inside_think_is_an_issue_and_the_call_after_is_dispatched():
    text = '<think>First ' + HERMES % 'planned' + ' then go.</think>\n' + HERMES % 'real'
    result = every_split_agrees(text)
    assert [(call.name, call.arguments) for call in result.calls] == [('say', {'text': 'real'})]
    [issue] = result.errors
    assert (issue.code, issue.name, issue.format) == (CALL_IN_REASONING, 'say', 'hermes')
    assert text[slice(*issue.span)] == HERMES % 'planned'
    assert 'reasoning' in issue.message and 'not dispatched' in issue.message
    # the span stays in the content verbatim, the call markup in it included
    assert result.content == '<think>First ' + HERMES % 'planned' + ' then go.</think>'


def test_unclosed_think_at_the_end_keeps_everything_after_it_undispatched():
    text = 'Okay.\n<think>Maybe ' + HERMES % 'a' + '\n[say(text="b")] and <say>c</say>'
    result = every_split_agrees(text)
    assert result.calls == []
    assert [(issue.code, issue.format) for issue in result.errors] == [
        (CALL_IN_REASONING, 'hermes'), (CALL_IN_REASONING, 'pythonic'),
        (CALL_IN_REASONING, 'lerobot_marker')]


def test_a_call_cannot_run_past_the_end_of_its_span():
    # the span ends at its first closing token, as the engines' reasoning parsers split it
    text = '<think>' + HERMES[:-len('</tool_call>')] % 'x' + '</think><say>after</say>'
    result = every_split_agrees(text)
    assert [call.name for call in result.calls] == ['say']
    assert [issue.code for issue in result.errors] == [CALL_IN_REASONING]


def test_dispatch_option_reads_calls_in_reasoning_as_calls():
    text = '<think>' + HERMES % 'a' + '</think>' + HERMES % 'b'
    result = every_split_agrees(text, reasoning_calls='dispatch')
    assert [call.arguments['text'] for call in result.calls] == ['a', 'b']
    assert result.errors == []
    harmony = ('<|channel|>analysis<|message|><say>x</say><|end|>')
    assert [call.name for call in every_split_agrees(harmony, reasoning_calls='dispatch').calls
            ] == ['say']


def test_unknown_option_is_a_configuration_error():
    with pytest.raises(ValueError, match='reasoning_calls'):
        parse('x', reasoning_calls='ignore')
    with pytest.raises(ValueError, match='reasoning_calls'):
        StreamingParser(reasoning_calls='')


def test_tokens_of_other_spans_inside_a_span_do_not_end_it():
    text = '<think>a [/THINK] <seed:think> b ' + HERMES % 'x' + '</think>' + HERMES % 'y'
    result = every_split_agrees(text)
    assert [call.arguments['text'] for call in result.calls] == ['y']
    assert [issue.code for issue in result.errors] == [CALL_IN_REASONING]


def test_reasoning_prose_is_streamed_before_the_span_closes():
    parser = StreamingParser(CATALOG)
    events = parser.feed('<think>Let me see.\n')
    events += parser.feed('The cup is red, the bin is blue.\n')
    assert ''.join(event.text for event in events if isinstance(event, ContentEvent)) == (
        '<think>Let me see.\nThe cup is red, the bin is blue.')
    events = parser.feed('<say>x</say></think>') + parser.finish()
    assert [event.issue.code for event in events if isinstance(event, IssueEvent)] == [
        CALL_IN_REASONING]
    assert not any(isinstance(event, CallEvent) for event in events)
    assert ''.join(event.text for event in events if isinstance(event, ContentEvent)) == (
        '\n<say>x</say></think>')


@pytest.mark.parametrize('case_id', ['think_call_inside', 'think_unclosed_at_the_end',
                                     'think_r1_then_call', 'seed_think_call',
                                     'cohere_thinking_call', 'magistral_think',
                                     'harmony_analysis_call'])
def test_corpus_reasoning_cases_stream_at_every_split(case_id):
    case = by_id(case_id)
    assert summary(every_split_agrees(case.text)) == (case.calls, case.errors, case.content)


@pytest.mark.parametrize('text', [
    '<|START_THINKING|><tool_call><|END_THINKING|>',
    '[THINK]<minimax:tool_call>[/THINK]',
    '<|START_THINKING|><|tool_calls_section_begin|><|END_THINKING|>',
    '<think>[say(text="a")</think>',
])
def test_call_cut_by_the_end_of_its_span_streams_like_one_shot(text):
    # found by the 100k fuzz: a delta ending inside the closing token (<|E, [/) must not let
    # the matcher read those characters as part of the call
    result = every_split_agrees(text)
    assert result.calls == [] and [issue.code for issue in result.errors] == [CALL_IN_REASONING]
