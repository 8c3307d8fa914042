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

"""StreamingParser(stream_arguments=True): a say call's name, then its text as it grows."""

from hypothesis import given, settings
from hypothesis import strategies as st
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.parsing import (ArgumentEvent, CallEvent, CallStartEvent, ContentEvent,
                                       IssueEvent, parse, StreamingParser)
from lerobot_tools_ros.parsing.readers.partial import json_string_prefix
from parsing_corpus import catalog
import pytest

CATALOG = catalog()
TEXT = 'Hello there. I will pick up the cube now; then place it. Done!'
SPECIAL = 'Café "quoted" \\ back\nslash\t😀 < & &amp; </say-not> end.'
CALLS = {
    'lerobot_marker': 'Plan: pick.\n<say>{}</say>\nok',
    'hermes': 'Plan.\n<tool_call>\n{{"name": "say", "arguments": {{"text": {}}}}}\n</tool_call>',
    'qwen3_coder_xml': ('<tool_call>\n<function=say>\n<parameter=text>\n{}\n</parameter>\n'
                        '</function>\n</tool_call>'),
    'llama_json': 'Sure.<|python_tag|>{{"name": "say", "parameters": {{"text": {}}}}}<|eom_id|>',
    'mistral': '[TOOL_CALLS]say[ARGS]{{"text": {}}}',
}
JSON = ('hermes', 'llama_json', 'mistral')


def markup(fmt: str, text: str) -> str:
    """Return a call of ``say(text)`` in one family (JSON-encoded where the family says so)."""
    import json
    return CALLS[fmt].format(json.dumps(text) if fmt in JSON else text)


def stream(text: str, size: int, catalog=CATALOG, **options) -> list:
    """Feed ``text`` in deltas of ``size`` characters; return [(delta index, event)]."""
    parser = StreamingParser(catalog, stream_arguments=True, **options)
    out = []
    for index, start in enumerate(range(0, len(text), size)):
        out += [(index, event) for event in parser.feed(text[start:start + size])]
    out += [(-1, event) for event in parser.finish()]
    return out


def spoken_prefixes(events: list) -> list[str]:
    """Return the argument text known after each ArgumentEvent."""
    said, out = '', []
    for _, event in events:
        if isinstance(event, ArgumentEvent):
            said += event.text
            out.append(said)
    return out


@pytest.mark.parametrize('fmt', sorted(CALLS))
@pytest.mark.parametrize('size', [1, 2, 3, 4, 7])
@pytest.mark.parametrize('text', [TEXT, 'Hi.', SPECIAL.replace('</say-not>', '') + 'x'])
def test_the_text_grows_decoded_and_ends_equal_to_the_final_argument(fmt, size, text):
    if fmt == 'lerobot_marker':
        text = text.replace('</say', '<say')
    whole = markup(fmt, text)
    events = stream(whole, size)
    starts = [event for _, event in events if isinstance(event, CallStartEvent)]
    calls = [event.call for _, event in events if isinstance(event, CallEvent)]
    assert [(s.name, s.argument, s.format) for s in starts] == [('say', 'text', fmt)]
    assert [c.arguments for c in calls] == [{'text': text}]
    assert calls[0].span[0] == starts[0].start
    prefixes = spoken_prefixes(events)
    # every character was reported before the end, but for those that came with the call's end
    assert prefixes and text.startswith(prefixes[-1]) and len(text) - len(prefixes[-1]) <= size
    assert all(text.startswith(prefix) for prefix in prefixes)
    # nothing else changes: the same calls, issues and content as a one-shot parse
    result = parse(whole, CATALOG)
    assert calls == result.calls
    content = ''.join(e.text for _, e in events if isinstance(e, ContentEvent))
    assert content == result.content


@pytest.mark.parametrize('fmt', sorted(CALLS))
def test_the_first_sentence_is_reported_before_the_closing_markup_arrives(fmt):
    whole = markup(fmt, TEXT)
    close = whole.index('</say>' if fmt == 'lerobot_marker' else
                        '"}' if fmt in JSON else '</parameter>')
    events = stream(whole, 4)
    first = next(i for i, event in events if isinstance(event, ArgumentEvent))
    sentence = next(i for i, prefix in zip(
        [i for i, e in events if isinstance(e, ArgumentEvent)], spoken_prefixes(events))
        if prefix.startswith('Hello there.'))
    end = whole.index('Hello there.') + len('Hello there.')
    assert first <= whole.index('Hello') // 4 + 1  # at most one delta after it arrives
    assert sentence <= end // 4 + 1
    assert sentence < close // 4  # before the closing markup began to arrive


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab "\\\n\t<>/&é😀\u2028')), max_size=30),
       st.lists(st.integers(1, 6), min_size=1, max_size=40))
def test_any_split_of_a_json_string_reports_a_growing_prefix(text, sizes):
    whole = markup('hermes', text)
    parser = StreamingParser(CATALOG, stream_arguments=True)
    said, pos, events = '', 0, []
    for size in sizes * (len(whole) // sum(sizes) + 1):
        events += parser.feed(whole[pos:pos + size])
        pos += size
        for event in events:
            if isinstance(event, ArgumentEvent):
                said += event.text
        events = [e for e in events if isinstance(e, CallEvent)]
        assert text.startswith(said)
    events += parser.finish()
    assert [e.call.arguments for e in events if isinstance(e, CallEvent)] == [{'text': text}]
    assert said == text


def test_a_malformed_tail_ends_the_call_with_an_issue_at_its_start():
    whole = ('<tool_call>{"name": "say", "arguments": {"text": "Hello there. Bye"}, oops}'
             '</tool_call> after')
    events = stream(whole, 4)
    start = next(e for _, e in events if isinstance(e, CallStartEvent))
    ends = [e for _, e in events if isinstance(e, (CallEvent, IssueEvent))]
    assert len(ends) == 1 and isinstance(ends[0], IssueEvent)
    assert ends[0].issue.code == 'unparseable_arguments'
    assert ends[0].issue.span[0] == start.start
    assert spoken_prefixes(events)[-1] == 'Hello there. Bye'


@pytest.mark.parametrize('fmt', sorted(CALLS))
def test_a_truncated_call_ends_with_one_truncated_issue(fmt):
    whole = markup(fmt, TEXT)
    whole = whole[:whole.index('then')]
    events = stream(whole, 4)
    start = next(e for _, e in events if isinstance(e, CallStartEvent))
    ends = [e for _, e in events if isinstance(e, (CallEvent, IssueEvent))]
    assert [(e.issue.code, e.issue.span[0]) for e in ends] == [('truncated', start.start)]
    assert TEXT.startswith(spoken_prefixes(events)[-1])


def test_a_wrong_argument_type_is_reported_by_the_complete_call():
    whole = '<tool_call>{"name": "say", "arguments": {"text": 5}}</tool_call>'
    events = stream(whole, 3)
    assert [type(e).__name__ for _, e in events] == ['CallStartEvent', 'CallEvent']
    assert spoken_prefixes(events) == []


@pytest.mark.parametrize('whole', [
    '<tool_call>{"name": "record_observation", "arguments": {"label": "cup"}}</tool_call>',
    '<think>maybe <say>Hello there. Bye</say></think> ok',
    '[TOOL_CALLS][{"name": "say", "arguments": {"text": "Hello there. Bye"}}]',
    '<tool_calls>[{"name": "say", "arguments": {"text": "Hello there. Bye"}}]</tool_calls>',
    '[say(text="Hello there. Bye")]',
    "<tool_call>{'name': 'say', 'arguments': {'text': 'single quotes'}}</tool_call>",
    # OpenAI JSON and GLM XML have no partial reader: their say runs once it is complete
    'Sure. {"name": "say", "arguments": {"text": "Hello there. Bye"}} ok',
    '{"tool_calls": [{"type": "function", "function": {"name": "say", "arguments": '
    '{"text": "Hello there. Bye"}}}]}',
    '<tool_call>say\n<arg_key>text</arg_key>\n<arg_value>Hello there. Bye</arg_value>\n'
    '</tool_call>',
])
def test_other_tools_families_and_reasoning_are_dispatched_on_complete(whole):
    events = stream(whole, 4)
    assert not [e for _, e in events if isinstance(e, (CallStartEvent, ArgumentEvent))]
    result = parse(whole, CATALOG)
    assert [e.call for _, e in events if isinstance(e, CallEvent)] == result.calls


def test_nothing_changes_without_the_option_or_within_one_delta():
    whole = markup('lerobot_marker', TEXT)
    off = StreamingParser(CATALOG)
    events = [e for i in range(0, len(whole), 4) for e in off.feed(whole[i:i + 4])]
    assert not [e for e in events if isinstance(e, (CallStartEvent, ArgumentEvent))]
    parser = StreamingParser(CATALOG, stream_arguments=True)
    events = parser.feed(whole) + parser.finish()
    assert [type(e) for e in events] == [ContentEvent, CallEvent, ContentEvent]


def test_a_catalog_tool_declares_its_streamable_argument_in_its_schema():
    announce = {'type': 'function', 'function': {'name': 'announce', 'parameters': {
        'type': 'object', 'required': ['message'], 'properties': {
            'volume': {'type': 'number'},
            'message': {'type': 'string', 'x-lerobot-streamable': True}}}}}
    tools = ToolCatalog.from_tools([announce])
    whole = ('<tool_call>{"name": "announce", "arguments": {"volume": 0.5, '
             '"message": "Doors closing. Stand clear."}}</tool_call>')
    events = stream(whole, 5, catalog=tools)
    assert [(e.name, e.argument) for _, e in events if isinstance(e, CallStartEvent)] == [
        ('announce', 'message')]
    assert spoken_prefixes(events)[-1] == 'Doors closing. Stand clear.'
    # a catalog without say: the marker is reported (unknown_tool), never streamed
    events = stream(markup('lerobot_marker', TEXT), 4, catalog=tools)
    assert not [e for _, e in events if isinstance(e, CallStartEvent)]


@pytest.mark.parametrize('raw, expected', [
    ('"ab\\', ('ab', False)), ('"ab\\u00', ('ab', False)), ('"\\ud83d', ('', False)),
    ('"\\ud83d\\ude00"', ('😀', True)), ('"a\\qb"', ('a', False)), ('"x\\"y"', ('x"y', True)),
])
def test_json_string_prefix_holds_back_unfinished_escapes(raw, expected):
    assert json_string_prefix(raw, 0) == expected
