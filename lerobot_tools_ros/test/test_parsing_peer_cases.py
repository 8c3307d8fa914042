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
What the serving engines' own parser tests expect, checked on ours, family by family.

Each case is parsed one-shot and streamed one character at a time, plain and with streamed
arguments: all must agree. Where a peer keeps a broken call's markup as content, our rule
differs on purpose: a broken call is reported as an issue and its markup is never content
(content may be spoken); the formats reference says so.
"""

from lerobot_tools_ros.parsing import (ArgumentEvent, CallEvent, ContentEvent,
                                       INVALID_CALL, parse, ParseResult, StreamingParser,
                                       TRUNCATED, UNPARSEABLE_ARGUMENTS)
from parsing_corpus import catalog, guard_fails, stream
import pytest

CATALOG = catalog()


def read(text: str, formats='auto') -> ParseResult:
    """Parse ``text``; streaming it per character, plain and with streamed arguments, agrees."""
    with guard_fails():
        result = parse(text, CATALOG, formats)
        cuts = list(range(len(text)))
        assert stream(text, cuts, CATALOG, formats) == result
        assert stream(text, cuts, CATALOG, formats, stream_arguments=True) == result
    return result


def calls(result: ParseResult) -> list:
    return [(call.format, call.name, call.arguments) for call in result.calls]


def codes(result: ParseResult) -> list:
    return [issue.code for issue in result.errors]


# ----------------------------------------------------------------------------- pythonic


@pytest.mark.parametrize('broken', [
    'record_observation(label=)',
    'foo(bar baz)',  # a name outside the catalog first
    'record_observation(label=open(1))',
    'move_to(x=1, x=2)',
])
@pytest.mark.parametrize('valid_first', [True, False])
def test_pythonic_valid_call_survives_an_unparseable_sibling(broken, valid_first):
    items = ['say(text="hi")', broken] if valid_first else [broken, 'say(text="hi")']
    result = read(f'Okay. [{", ".join(items)}]')
    assert calls(result) == [('pythonic', 'say', {'text': 'hi'})]
    assert len(result.errors) == 1
    assert codes(result)[0] in (UNPARSEABLE_ARGUMENTS, INVALID_CALL)
    assert result.content == 'Okay.'


# ------------------------------------------------------------------ Mistral before v11


@pytest.mark.parametrize('junk', ['junk', ' some junk ', 'I will call:\n'])
def test_mistral_junk_between_the_tag_and_the_json_list(junk):
    text = f'[TOOL_CALLS]{junk}[{{"name": "say", "arguments": {{"text": "hi"}}}}]'
    result = read(text)
    assert calls(result) == [('mistral', 'say', {'text': 'hi'})]
    assert result.errors == []
    assert result.content == junk.strip()  # text that is not a call is kept, never lost


def test_mistral_junk_and_trailing_text_around_the_list():
    text = ('Hello[TOOL_CALLS]  junk [{"name": "say", "arguments": {"text": "hi"}}, '
            '{"name": "record_observation", "arguments": {"label": "cup"}}] trail')
    result = read(text)
    assert calls(result) == [('mistral', 'say', {'text': 'hi'}),
                             ('mistral', 'record_observation', {'label': 'cup'})]
    assert result.errors == []
    assert result.content == 'Hellojunk trail'


def test_mistral_trailing_text_after_the_list_stays_content():
    text = '[TOOL_CALLS] [{"name": "say", "arguments": {"text": "hi"}}]\nextra trailing data'
    result = read(text)
    assert calls(result) == [('mistral', 'say', {'text': 'hi'})]
    assert result.content == 'extra trailing data'


def test_mistral_junk_without_a_list_is_still_reported():
    result = read('[TOOL_CALLS] not json at all')
    assert calls(result) == []
    assert codes(result) == [UNPARSEABLE_ARGUMENTS]
    assert result.content == ''


# ------------------------------------------------------------------ Llama 3.2 JSON


@pytest.mark.parametrize('prefix', ['', 'Sure. ', '<|python_tag|>'])
@pytest.mark.parametrize('broken', [
    '{"name": "say", "parameters": {"text": "a"}',  # a closing brace missing
    '{"name": "say", "parameters": ',  # no value at all
    '{"name": "say", "parameters": {invalid json}}',  # a complete but invalid object
])
def test_llama_broken_object_followed_by_a_valid_one(prefix, broken):
    text = f'{prefix}{broken}; {{"name": "say", "parameters": {{"text": "hi"}}}}'
    result = read(text)
    assert calls(result) == [('llama_json', 'say', {'text': 'hi'})]
    assert codes(result) == [UNPARSEABLE_ARGUMENTS]
    assert result.errors[0].name == 'say'
    assert result.content == prefix.replace('<|python_tag|>', '').strip()


def test_llama_valid_broken_valid_keeps_both_good_calls():
    text = ('{"name": "say", "parameters": {"text": "one"}}; '
            '{"name": "say", "parameters": {"text": "a"}; '
            '{"name": "say", "parameters": {"text": "two"}}')
    result = read(text)
    assert calls(result) == [('llama_json', 'say', {'text': 'one'}),
                             ('llama_json', 'say', {'text': 'two'})]
    assert codes(result) == [UNPARSEABLE_ARGUMENTS]


def test_llama_truncated_object_without_a_following_call_stays_truncated():
    result = read('{"name": "say", "parameters": {"text": "a"}')
    assert calls(result) == []
    assert codes(result) == [TRUNCATED]


# ----------------------------------------------------------------------------- Hunyuan

HY4 = ('<tool_calls><tool_call>say<arg_key>text</arg_key><arg_value>Beijing</arg_value>'
       '</tool_call></tool_calls>')


@pytest.mark.parametrize('text, content', [
    ('sure!' + HY4, 'sure!'),
    ('hi<tool_calls>\n  <tool_call>say<arg_key>text</arg_key><arg_value>Beijing</arg_value>'
     '</tool_call>\n</tool_calls>', 'hi'),
    (HY4[:-len('</tool_calls>')], ''),  # the closing section token may be missing at the end
])
def test_hunyuan_v4_without_the_tool_separator(text, content):
    result = read(text)
    assert calls(result) == [('hunyuan', 'say', {'text': 'Beijing'})]
    assert result.errors == []
    assert result.content == content


def test_hunyuan_v4_several_calls_with_typed_values():
    text = ('<tool_calls><tool_call>move_to<arg_key>x</arg_key><arg_value>1.5</arg_value>'
            '<arg_key>y</arg_key><arg_value>2</arg_value></tool_call>'
            '<tool_call>record_observation<arg_key>label</arg_key><arg_value>cup</arg_value>'
            '</tool_call></tool_calls>')
    assert calls(read(text)) == [('hunyuan', 'move_to', {'x': 1.5, 'y': 2}),
                                 ('hunyuan', 'record_observation', {'label': 'cup'})]


# ---------------------------------------------------------------------------- InternLM2


@pytest.mark.parametrize('end', ['<|action_end|>', '<|action_end|><|im_end|>', ''])
@pytest.mark.parametrize('stream_arguments', [False, True])
def test_internlm_complete_call_is_not_repeated_in_content_at_finish(end, stream_arguments):
    text = ('I will speak.<|action_start|><|plugin|>\n'
            '{"name": "say", "parameters": {"text": "hi"}}' + end)
    parser = StreamingParser(CATALOG, stream_arguments=stream_arguments)
    events = [event for char in text for event in parser.feed(char)]
    at_finish = parser.finish()
    events += at_finish
    said = [event.call for event in events if isinstance(event, CallEvent)]
    assert [(call.format, call.arguments) for call in said] == [('internlm', {'text': 'hi'})]
    content = ''.join(event.text for event in events if isinstance(event, ContentEvent))
    assert content in ('I will speak.', 'I will speak.<|im_end|>')
    assert 'say' not in content and 'plugin' not in content
    assert not [event for event in at_finish if isinstance(event, ContentEvent)
                and 'name' in event.text]
    assert content == read(text).content


# ------------------------------------------------------------------------------ Kimi K2

KIMI_BAD = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.say:0'
            '<|tool_call_argument_begin|>{invalid json}<|tool_call_end|>'
            '<|tool_calls_section_end|>')


def test_kimi_k2_content_around_an_invalid_call():
    result = read(f'Before the call. {KIMI_BAD} After the call.')
    assert calls(result) == []
    assert codes(result) == [UNPARSEABLE_ARGUMENTS]
    assert result.errors[0].name == 'say'
    # our rule: the broken call's markup is not content (a peer keeps it as text)
    assert result.content == 'Before the call. After the call.'


def test_kimi_k2_content_around_a_valid_and_an_invalid_call():
    text = ('Before <|tool_calls_section_begin|><|tool_call_begin|>functions.say:0'
            '<|tool_call_argument_begin|>{"text": "ok"}<|tool_call_end|>'
            '<|tool_call_begin|>functions.say:1<|tool_call_argument_begin|>{"text": '
            '<|tool_call_end|><|tool_calls_section_end|> after')
    result = read(text)
    assert calls(result) == [('kimi_k2', 'say', {'text': 'ok'})]
    assert codes(result) == [UNPARSEABLE_ARGUMENTS]
    assert result.content == 'Before after'


# ------------------------------------------------------------------------ FunctionGemma


@pytest.mark.parametrize('body, arguments', [
    ('record_observation{label:<escape>cup, "red"<escape>,camera:<escape>front<escape>}',
     {'label': 'cup, "red"', 'camera': 'front'}),
    ('move_to{x:1.5,y:-2}', {'x': 1.5, 'y': -2}),
])
def test_function_gemma_streamed_arguments_form_json_with_two_keys(body, arguments):
    text = f'<start_function_call>call:{body}<end_function_call>'
    result = read(text)
    assert calls(result) == [('gemma', body.split('{')[0], arguments)]
    parser = StreamingParser(CATALOG, stream_arguments=True)
    events = [event for char in text for event in parser.feed(char)] + parser.finish()
    assert not [event for event in events if isinstance(event, ArgumentEvent)]
    (call,) = [event.call for event in events if isinstance(event, CallEvent)]
    assert call.arguments == arguments and list(call.arguments) == list(arguments)
