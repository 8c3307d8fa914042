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

"""StreamingParser: early events, held-back partial markers, and exact equality with parse()."""

from hypothesis import given, settings
from hypothesis import strategies as st
from lerobot_tools_ros.parsing import (CallEvent, ContentEvent, IssueEvent, parse,
                                       StreamingParser)
from parsing_corpus import CASES, catalog, growth, stream, summary
import pytest

CATALOG = catalog()


def kinds(events: list) -> list:
    out = []
    for event in events:
        if isinstance(event, ContentEvent):
            out.append(('content', event.text))
        elif isinstance(event, CallEvent):
            out.append(('call', event.call.name, event.call.arguments))
        else:
            out.append(('issue', event.issue.code))
    return out


def test_call_is_emitted_when_its_closing_tag_arrives():
    parser = StreamingParser(CATALOG)
    assert kinds(parser.feed('Picking it up.\n<sa')) == [('content', 'Picking it up.')]
    assert kinds(parser.feed('y>On it')) == []
    assert kinds(parser.feed('.</say>')) == [('call', 'say', {'text': 'On it.'})]
    assert kinds(parser.finish()) == []


def test_hermes_call_is_emitted_when_the_tag_closes():
    parser = StreamingParser(CATALOG)
    events = []
    for delta in ['<tool_', 'call>{"name": "say", ', '"arguments": {"text": "</tool_call>"}}',
                  '</tool_call>']:
        events.append(kinds(parser.feed(delta)))
    assert events == [[], [], [], [('call', 'say', {'text': '</tool_call>'})]]


def test_json_call_is_emitted_at_its_closing_brace():
    parser = StreamingParser(CATALOG)
    assert kinds(parser.feed('[TOOL_CALLS]say{"text": "h}i"')) == []
    assert kinds(parser.feed('} ok')) == [('call', 'say', {'text': 'h}i'}), ('content', 'ok')]
    assert kinds(parser.finish()) == []


def test_call_without_closing_tag_is_emitted_once_the_next_text_shows_it():
    parser = StreamingParser(CATALOG)
    assert parser.feed('<tool_call>{"name": "say", "arguments": {"text": "hi"}}\n') == []
    assert kinds(parser.feed('Done.')) == [('call', 'say', {'text': 'hi'}),
                                           ('content', 'Done.')]


def test_partial_marker_is_held_back_then_released_as_prose():
    parser = StreamingParser(CATALOG)
    assert kinds(parser.feed('a <tool')) == [('content', 'a')]
    assert kinds(parser.feed('box> b')) == [('content', ' <toolbox> b')]
    assert kinds(parser.finish()) == []


def test_trailing_whitespace_waits_for_the_next_word():
    parser = StreamingParser(CATALOG)
    assert kinds(parser.feed('Plan. ')) == []  # shorter than lag_chars: not delivered yet
    assert kinds(parser.feed('\n')) == []
    assert kinds(parser.feed('<say>x</say>')) == [
        ('content', 'Plan.'), ('call', 'say', {'text': 'x'})]
    assert kinds(parser.finish()) == []  # whitespace before final markup is dropped


def test_truncated_call_is_reported_at_finish():
    parser = StreamingParser(CATALOG)
    assert kinds(parser.feed('Ok.\n<tool_call>{"name": "say", "arguments": {"te')) == [
        ('content', 'Ok.')]
    events = parser.finish()
    assert kinds(events) == [('issue', 'truncated')]
    assert events[0].issue.name == 'say'


def test_finish_twice_and_feed_after_finish():
    parser = StreamingParser()
    assert kinds(parser.feed('hello ')) == []
    assert kinds(parser.finish()) == [('content', 'hello'), ('content', ' ')]
    assert parser.finish() == []
    with pytest.raises(RuntimeError):
        parser.feed('more')


def test_input_over_the_limit_gives_one_issue_and_stops():
    parser = StreamingParser(CATALOG, max_input_bytes=100)
    assert kinds(parser.feed('<say>one</say> ')) == [('call', 'say', {'text': 'one'})]
    events = parser.feed('x' * 200)
    assert kinds(events) == [('issue', 'too_large')]
    assert events[0].issue.span == (15, 215)
    assert parser.feed('<say>two</say>') == []
    assert parser.finish() == []


def test_one_character_at_a_time_equals_parse():
    for case in CASES:
        tools = CATALOG if case.with_catalog else None
        assert stream(case.text, list(range(len(case.text))), tools) == parse(case.text, tools)


@pytest.mark.parametrize('case', CASES, ids=[case.id for case in CASES])
def test_every_single_cut_equals_parse(case):
    tools = CATALOG if case.with_catalog else None
    expected = parse(case.text, tools)
    for cut in range(1, len(case.text)):
        assert stream(case.text, [cut], tools) == expected, cut


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), data=st.data())
def test_any_split_equals_parse(case, data):
    cuts = data.draw(st.lists(st.integers(0, len(case.text)), max_size=40))
    tools = CATALOG if case.with_catalog else None
    assert stream(case.text, cuts, tools) == parse(case.text, tools)


@pytest.mark.parametrize('case', CASES, ids=[case.id for case in CASES])
def test_far_into_a_long_text_gives_the_same_result(case):
    # Values far from the start are decoded through another path (see values.read_value).
    tools = CATALOG if case.with_catalog else None
    padding = 'Long plan. ' * 500 + '\n'
    near, far = parse(case.text, tools), parse(padding + case.text, tools)
    assert summary(far)[:2] == summary(near)[:2]
    assert [call.span for call in far.calls] == [
        (call.span[0] + len(padding), call.span[1] + len(padding)) for call in near.calls]
    assert stream(padding + case.text, [len(padding) + len(case.text) // 2], tools) == far


class _RescanEveryDelta(StreamingParser):
    """When events can come at the earliest: a pending call is rescanned on every delta."""

    __slots__ = ()

    def _scan(self, text: str, final: bool) -> list:
        events = super()._scan(text, final)
        self._waiting = False  # no fast path for a pending call: each delta takes _feed...
        return events

    def _woken(self, delta: str) -> bool:
        return True  # ...and wakes the scanner


@pytest.mark.parametrize('case', CASES, ids=[case.id for case in CASES])
def test_each_corpus_case_gets_its_events_as_early_as_a_rescan_on_every_delta(case):
    # The wake strings (and quiet characters) only skip rescans that cannot decide anything:
    # no call, issue or prose may come a delta later than a rescan on every delta gives it.
    tools = CATALOG if case.with_catalog else None
    for size in (1, 2, 3, 5, 8):
        deltas = [case.text[i:i + size] for i in range(0, len(case.text), size)]
        parser, reference = StreamingParser(tools), _RescanEveryDelta(tools)
        got = [kinds(parser.feed(delta)) for delta in deltas] + [kinds(parser.finish())]
        earliest = [kinds(reference.feed(delta)) for delta in deltas]
        assert got == earliest + [kinds(reference.finish())], size


class _CountingRescans(StreamingParser):
    """Counts how often the pending text is scanned again."""

    __slots__ = ()
    rescans = 0

    def _rescan_buffer(self) -> list:
        type(self).rescans += 1
        return super()._rescan_buffer()


def test_a_wake_string_already_scanned_does_not_wake_the_pending_call_again():
    # The value holds '</tool_call>' early on; each later '>' used to rescan the whole call
    # while that old occurrence was within the last 64 characters (15 rescans here).
    text = ('<tool_call>{"name": "say", "arguments": {"text": "use </tool_call> ' +
            '<b>x</b> ' * 10 + '"}}</tool_call>')
    _CountingRescans.rescans = 0
    parser = _CountingRescans(CATALOG)
    events = [event for char in text for event in parser.feed(char)] + parser.finish()
    assert [event.call.name for event in events if isinstance(event, CallEvent)] == ['say']
    assert _CountingRescans.rescans <= 5  # the wake strings that complete: '>' of the inner
    # '</tool_call>', the two '}', the final '</tool_call>'


# A decision that used to wait for the end of the generation: the delta that decides it (a
# reasoning span closing inside a call, a partial tag that turns out not to be one, a bracket
# that ends a malformed call) now delivers it, with the prose after it.
LATE_BEFORE = {  # deltas (the one before the last decides; the last is prose), its events
    'reasoning_closes_inside_a_call': (
        ['<think><tool_call>{"name": "say", "arguments": {"text": "', '</think>', ' Acting.'],
        [('content', '<tool_call>{"name": "say", "arguments": {"text": "'),
         ('issue', 'call_in_reasoning'), ('content', '</think>')]),
    'glm_partial_value_tag': (  # a key, then other text where </tool_call> should be
        ['<tool_call>say<arg_key>text</arg_key><arg_valu', '\nok', ' then.'],
        [('issue', 'unparseable_arguments'), ('content', '<arg_valu\nok')]),
    'pythonic_call_closed_by_another_bracket': (
        ['Now say(text="hi"', ']', ' then.'], [('issue', 'unparseable_arguments')]),
    'pythonic_list_closed_by_another_bracket': (
        ['[say(text="hi")', '}', ' then.'], [('issue', 'unparseable_arguments')]),
    'qwen3_coder_parameter_name_ended_by_a_bad_character': (
        ['<tool_call>\n<function=move_to>\n<parameter=', '<|end|>', ' then.'],
        [('issue', 'unparseable_arguments')]),
    'dsml_malformed_parameter_after_a_complete_one': (
        ['<｜DSML｜function_calls>\n<｜DSML｜invoke name="move_to">\n<｜DSML｜parameter name="x" '
         'string="false">0.5</｜DSML｜parameter>\n', '<｜DSML｜parameter name="y" string="false "',
         '>1', ' then.'],
        [('issue', 'unparseable_arguments'), ('content', 'name="y" string="false ">1')]),
}


@pytest.mark.parametrize('name', list(LATE_BEFORE))
def test_the_delta_that_decides_a_pending_call_delivers_it(name):
    deltas, decided = LATE_BEFORE[name]
    parser = StreamingParser(CATALOG)
    before = [event for delta in deltas[:-2] for event in parser.feed(delta)]
    assert not any(isinstance(event, (CallEvent, IssueEvent)) for event in before)
    assert kinds(parser.feed(deltas[-2])) == decided
    rest = parser.feed(deltas[-1]) + parser.finish()
    assert all(isinstance(event, ContentEvent) for event in rest)
    assert ''.join(event.text for event in rest).strip() == deltas[-1].strip()


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(CASES).map(lambda case: case.text), min_size=2,
                      max_size=4),
       data=st.data())
def test_any_split_of_concatenated_cases_equals_parse(parts, data):
    text = '\n'.join(parts)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=60))
    assert stream(text, cuts, CATALOG) == parse(text, CATALOG)
    assert stream(text, cuts, None, 'hermes') == parse(text, None, 'hermes')


# name -> (prefix, repeated unit, suffix): one long call (or prose) arriving in small deltas.
LONG_PENDING = {
    'string': ('<tool_call>{"name": "say", "arguments": {"text": "', 'w}rd ', '"}}'),
    'escapes': ('<tool_call>{"name": "say", "arguments": {"text": "', '\\\\', '"}}'),
    'closers': ('<tool_call>{"name": "plan_path", "arguments": {"waypoints": [[0, 0], ',
                '[1, 1], ', '[2, 2]]}}</tool_call>'),
    'nesting': ('', '{"a": ', '1'),
    'literal': ("<tool_call>{'name': 'say', 'arguments': {'text': " + "'" * 3, 'a}b ',
                "'" * 3 + '}}</tool_call>'),
    'pythonic': ('[plan_path(waypoints=[(0, 0), ', '(1, 1), ', '(2, 2)])]'),
    'marker': ('<say>', 'a < b </sa ', '</say>'),
    'qwen3': ('<function=say><parameter=text>', 'x</p ', '</parameter></function>'),
}


def _stream_in_deltas(text: str, size: int) -> list:
    parser = StreamingParser(CATALOG, max_input_bytes=1_000_000)
    events = []
    for i in range(0, len(text), size):
        events += parser.feed(text[i:i + size])
    return events + parser.finish()


@pytest.mark.parametrize('name', list(LONG_PENDING))
def test_long_pending_call_in_small_deltas_is_not_rescanned_per_delta(name):
    prefix, unit, suffix = LONG_PENDING[name]

    def make(count: int) -> str:
        if name == 'nesting':
            return unit * count + suffix + '}' * count
        return prefix + unit * count + suffix

    text = make(5_000)
    events = _stream_in_deltas(text, 4)
    expected = parse(text, CATALOG, max_input_bytes=1_000_000)
    assert [event.call for event in events if isinstance(event, CallEvent)] == expected.calls
    assert [event.issue for event in events if isinstance(event, IssueEvent)] == expected.errors
    assert len(expected.calls) == (0 if name == 'nesting' else 1)
    # rescanning the pending call per delta would make twice the text four times the work
    # (2000 repetitions: past the length where long strings take the streaming decoder)
    assert growth(make, lambda text: _stream_in_deltas(text, 4), 2_000) < 2.5


def test_long_prose_in_small_deltas_is_linear():
    text = ('The robot looks at the table; {the cup} is [red]. ' * 1200)[:60_000]
    events = _stream_in_deltas(text, 3)
    assert ''.join(event.text for event in events) == text
    assert not any(isinstance(event, (CallEvent, IssueEvent)) for event in events)
    assert growth(lambda size: text[:size], lambda text: _stream_in_deltas(text, 3),
                  5_000) < 2.5


def test_prose_lags_by_at_most_a_trigger_prefix():
    # what a robot speaks must not wait for a newline: prose is held back no longer than a
    # partial trigger would be (the longest trigger prefix), plus trailing whitespace
    parser = StreamingParser(CATALOG)
    lag = parser.lag_chars
    assert lag == max(len(trigger) for trigger in parser._plan.triggers) - 1
    delivered, fed = '', ''
    for word in ('The ', 'red ', 'cup ', 'is ', 'on ', 'the ', 'left; ', 'I ', 'will ',
                 'take ', 'it ', 'now ', 'and ', 'put ', 'it ', 'in ', 'the ', 'bin.'):
        fed += word
        delivered += ''.join(event.text for event in parser.feed(word))
        assert fed.startswith(delivered)
        assert len(fed.rstrip()) - len(delivered) < lag + len(word)
    assert kinds(parser.feed(' Now sa')) == []
    assert kinds(parser.feed('y(text="hi")')) == [('content', fed[len(delivered):] + ' Now'),
                                                  ('call', 'say', {'text': 'hi'})]
    assert kinds(parser.finish()) == []


def test_wake_string_split_before_a_long_delta_still_wakes():
    parser = StreamingParser(CATALOG)
    assert parser.feed('<say>hello</sa') == []
    events = parser.feed('y>' + ' and then a long stretch of plain prose' * 3)
    assert kinds(events)[0] == ('call', 'say', {'text': 'hello'})


def _joined(events: list) -> tuple[str, list]:
    text = ''.join(event.text for event in events if isinstance(event, ContentEvent))
    return text, [kind for kind in kinds(events) if kind[0] != 'content']


def test_marker_split_across_many_small_deltas_is_one_call():
    text = 'Sure.\n<tool_call>{"name": "say", "arguments": {"text": "hi"}}</tool_call> ok'
    for size in (1, 2, 3, 5):
        parser = StreamingParser(CATALOG)
        events = []
        for i in range(0, len(text), size):
            events += parser.feed(text[i:i + size])
        events += parser.finish()
        assert _joined(events) == ('Sure.\nok', [('call', 'say', {'text': 'hi'})]), size


def test_near_marker_that_turns_out_to_be_prose_is_delivered_as_prose():
    parser = StreamingParser(CATALOG)
    events = parser.feed('Note: a <tool')  # '<tool' may still become <tool_call>
    assert _joined(events)[0] == 'Note: a'
    events += parser.feed('kit> (see above) [x] {y} say')
    events += parser.feed('ing `z` done')
    events += parser.finish()
    assert _joined(events) == ('Note: a <toolkit> (see above) [x] {y} saying `z` done', [])


def test_held_back_tails_are_emitted_at_finish():
    # a partial trigger, a trailing word that may start say(, and trailing whitespace
    for tail in ('<tool_ca', 'functools', 'sa', '   '):
        parser = StreamingParser(CATALOG)
        events = parser.feed('It is done ') + parser.feed(tail)
        events += parser.finish()
        assert _joined(events) == (parse('It is done ' + tail, CATALOG).content, []), tail


def test_prose_fast_path_crossing_the_limit_gives_the_prose_before_then_one_issue():
    # small deltas without a key character are only counted; the limit is still exact
    parser = StreamingParser(CATALOG, max_input_bytes=40)
    events = []
    for _ in range(12):
        events += parser.feed('word ')  # 5 bytes each: the 9th crosses 40
    events += parser.finish()
    text, others = _joined(events)
    assert text == ('word ' * 8).rstrip()
    assert others == [('issue', 'too_large')]
    issue = [event.issue for event in events if isinstance(event, IssueEvent)][0]
    assert issue.span == (40, 45)  # from the end of the delivered prose
    assert 'is 45 bytes' in issue.message


def test_non_ascii_prose_counts_utf8_bytes_against_the_limit():
    parser = StreamingParser(CATALOG, max_input_bytes=20)
    events = parser.feed('éé') + parser.feed('éé') + parser.feed('éé')  # 4 bytes each
    assert [kind for kind in kinds(events) if kind[0] == 'issue'] == []
    events += parser.feed('éééééé')  # 24 bytes in all
    events += parser.finish()
    assert _joined(events) == ('éééééé', [('issue', 'too_large')])


def test_pending_call_crossing_the_limit_in_small_deltas_gives_one_issue():
    parser = StreamingParser(CATALOG, max_input_bytes=60)
    events = parser.feed('<say>')
    for _ in range(20):
        events += parser.feed('abcd')
    events += parser.feed('</say>')
    events += parser.finish()
    assert kinds(events) == [('issue', 'too_large')]
