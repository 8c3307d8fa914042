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

import json

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
    'openai_json': 'Sure. {{"name": "say", "arguments": {{"text": {}}}}} ok',
    'glm45': '<tool_call>say\n<arg_key>text</arg_key>\n<arg_value>{}</arg_value>\n</tool_call>',
    'seed_oss': ('<seed:tool_call>\n<function=say>\n<parameter=text>\n{}\n</parameter>\n'
                 '</function>\n</seed:tool_call>'),
}
JSON = ('hermes', 'llama_json', 'mistral', 'openai_json')
# where the argument's value is certainly closed (the marker's closing tag ends the call)
CLOSED_BY = {'qwen3_coder_xml': '</function>', 'glm45': '</arg_value>',
             'seed_oss': '</function>'}


def markup(fmt: str, text: str) -> str:
    """Return a call of ``say(text)`` in one family (JSON-encoded where the family says so)."""
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
    close = whole.index('</say>' if fmt == 'lerobot_marker' else '"}' if fmt in JSON else
                        '</arg_value>' if fmt == 'glm45' else '</parameter>')
    events = stream(whole, 4)
    first = next(i for i, event in events if isinstance(event, ArgumentEvent))
    sentence = next(i for i, prefix in zip(
        [i for i, e in events if isinstance(e, ArgumentEvent)], spoken_prefixes(events))
        if prefix.startswith('Hello there.'))
    end = whole.index('Hello there.') + len('Hello there.')
    assert first <= whole.index('Hello') // 4 + 1  # at most one delta after it arrives
    assert sentence <= end // 4 + 1
    assert sentence < close // 4  # before the closing markup began to arrive


SPLIT_SHAPES = {
    'hermes': lambda text: markup('hermes', text),
    # arguments as a JSON string holding the object (decoded twice)
    'openai_json': lambda text: '{"tool_calls": [{"function": {"name": "say", "arguments": %s}}]}'
    % json.dumps(json.dumps({'text': text})),
    'glm45': lambda text: markup('glm45', text),
}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(SPLIT_SHAPES)),
       st.text(alphabet=st.sampled_from(list('ab "\\\n\t<>/&é😀\u2028')), max_size=30),
       st.lists(st.integers(1, 6), min_size=1, max_size=40))
def test_any_split_reports_a_growing_prefix_closed_once_whole(shape, text, sizes):
    whole = SPLIT_SHAPES[shape](text)
    [call] = parse(whole, CATALOG).calls
    expected = call.arguments['text']  # (GLM drops one leading and one trailing newline)
    parser = StreamingParser(CATALOG, stream_arguments=True)
    said, pos, events, closed = '', 0, [], []
    for size in sizes * (len(whole) // sum(sizes) + 1):
        events += parser.feed(whole[pos:pos + size])
        pos += size
        for event in events:
            if isinstance(event, ArgumentEvent):
                assert not closed  # nothing after the closed one
                said += event.text
                if event.closed:
                    closed.append(said)
        events = [e for e in events if isinstance(e, CallEvent)]
        assert expected.startswith(said)
    events += parser.finish()
    assert [e.call for e in events if isinstance(e, CallEvent)] == [call]
    assert said == expected
    assert closed in ([], [expected])


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
    '<tool_calls>[{"name": "say", "arguments": {"text": "Hello there. Bye"}}]</tool_calls>',
    '[say(text="Hello there. Bye")]',
    "<tool_call>{'name': 'say', 'arguments': {'text': 'single quotes'}}</tool_call>",
    # a bare Llama object (parameters, no tag) has no partial reader
    '{"name": "say", "parameters": {"text": "Hello there. Bye"}}',
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


def _dumps(text: str) -> str:
    return json.dumps(text)


JSON_SHAPES = [  # (family, markup): the shapes of a call holding say(TEXT)
    ('openai_json', 'Ok: [{"name": "say", "arguments": {"text": %s}}, {"name": "say", '
     '"arguments": {"text": "second"}}] done' % _dumps(TEXT)),
    ('openai_json', '{"type": "function", "function": {"name": "say", "arguments": '
     '{"text": %s}}}' % _dumps(TEXT)),
    ('openai_json', '{"role": "assistant", "content": "On it {ok}.", "tool_calls": [{"id": '
     '"c1", "type": "function", "function": {"name": "say", "arguments": {"text": %s}}}]}'
     % _dumps(TEXT)),
    ('openai_json', '{"tool_calls": [{"name": "say", "arguments": %s}]}'
     % _dumps(_dumps({'text': TEXT}))),  # arguments as a JSON string
    ('openai_json', '{"name": "say", "arguments": %s}'
     % _dumps(_dumps(_dumps({'text': TEXT})))),  # double-encoded
    ('mistral', '[TOOL_CALLS][{"name": "say", "arguments": {"text": %s}}]' % _dumps(TEXT)),
    ('mistral', '[TOOL_CALLS]say[CALL_ID]a1[ARGS]{"text": %s}' % _dumps(TEXT)),
    ('hermes', '<tool_call>{"type": "function", "function": {"name": "say", "arguments": '
     '%s}}</tool_call>' % _dumps(_dumps({'text': TEXT}))),
    # XML: GLM-4.7 without newlines, and parameters before the streamed one
    ('glm45', '<tool_call>say<arg_key>volume</arg_key><arg_value>3</arg_value><arg_key>mute'
     '</arg_key><arg_key>text</arg_key><arg_value>%s</arg_value></tool_call>' % TEXT),
    ('qwen3_coder_xml', '<function=say>\n<parameter=volume>\n3\n</parameter>\n'
     '<parameter=text>\n%s\n</parameter>\n</function> Going.' % TEXT),
]


@pytest.mark.parametrize('fmt, whole', JSON_SHAPES)
def test_every_call_shape_streams_its_first_call(fmt, whole):
    events = stream(whole, 3)
    starts = [e for _, e in events if isinstance(e, CallStartEvent)]
    result = parse(whole, CATALOG)
    assert [e.call for _, e in events if isinstance(e, CallEvent)] == result.calls
    assert [(s.name, s.format, s.start) for s in starts] == [
        ('say', fmt, result.calls[0].span[0])]
    prefixes = spoken_prefixes(events)
    assert prefixes[-1] == TEXT and all(TEXT.startswith(p) for p in prefixes)
    at = [i for i, e in events if isinstance(e, ArgumentEvent)]
    sentence = next(i for i, prefix in zip(at, prefixes) if prefix.startswith('Hello there.'))
    assert sentence <= (whole.index('Hello there.') + len('Hello there.')) // 3 + 1
    # the value closed before the call's markup ended
    closed = [i for i, e in events if isinstance(e, ArgumentEvent) and e.closed]
    ends = [i for i, e in events if isinstance(e, CallEvent)]
    assert len(closed) == 1 and closed[0] < ends[0]


@pytest.mark.parametrize('whole, formats', [
    ('{"name": "say", "description": "Hello there. Bye"} ok', 'auto'),
    ('{"tools": [{"name": "say", "arguments": {"text": "Hello there. Bye"}}]}', 'auto'),
    ('{"name": "say", "params": {"text": "Hello there. Bye"}, "n": 1}', 'auto'),
    ('{"name": "say", "parameters": {"text": "Hello there. Bye"}}', ['openai_json']),
    ('{"name": "say", "arguments": {"text": "Hello there. Bye"}}', ['llama_json']),
])
def test_json_that_is_no_call_reports_nothing(whole, formats):
    events = stream(whole, 3, formats=formats)
    assert [type(e) for _, e in events] == [ContentEvent] * len(events)
    assert ''.join(e.text for _, e in events) == whole


@pytest.mark.parametrize('fmt', sorted(CALLS))
def test_the_value_is_closed_before_the_call_markup_ends(fmt):
    whole = markup(fmt, TEXT)
    events = stream(whole, 1)
    closed = [(i, e) for i, e in events if isinstance(e, ArgumentEvent) and e.closed]
    [end] = [i for i, e in events if isinstance(e, CallEvent)]
    if fmt == 'lerobot_marker':  # its closing tag ends the call itself
        assert not closed
        return
    [(at, event)] = closed
    assert spoken_prefixes(events)[-1] == TEXT
    if fmt in JSON:
        expected = whole.index(_dumps(TEXT)) + len(_dumps(TEXT)) - 1  # the closing quote
    else:
        expected = whole.index(CLOSED_BY[fmt]) + len(CLOSED_BY[fmt]) - 1
    assert at == expected < end


@pytest.mark.parametrize('whole, text, closed_at', [
    # a </parameter> followed by text is text inside the value: nothing is closed early
    ('<tool_call>\n<function=say>\n<parameter=text>\nA </parameter> B. C\n</parameter>\n'
     '</function>\n</tool_call>', 'A </parameter> B. C', None),
    # a parameter the tool does not have may still be text inside the value
    ('<function=say>\n<parameter=text>\nA. B\n</parameter>\n<parameter=volume>\n3\n'
     '</parameter>\n</function>', 'A. B', None),
    # escaped quotes and backslashes do not close a JSON string
    ('<tool_call>{"name": "say", "arguments": {"text": "A. \\"B\\" C\\\\"}}</tool_call>',
     'A. "B" C\\', '"}}'),
])
def test_a_value_is_never_closed_before_it_certainly_ends(whole, text, closed_at):
    events = stream(whole, 1)
    [call] = [e.call for _, e in events if isinstance(e, CallEvent)]
    assert call.arguments['text'] == text
    assert all(text.startswith(prefix) for prefix in spoken_prefixes(events))
    closed = [i for i, e in events if isinstance(e, ArgumentEvent) and e.closed]
    assert closed == ([whole.index(closed_at)] if closed_at else [])
