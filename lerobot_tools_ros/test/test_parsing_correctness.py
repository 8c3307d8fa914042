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
Format correctness found by running the serving engines' own parser test cases.

One group per kind of mistake: schema unions in Qwen3-Coder values, zero-argument calls,
LFM2 wrapper tokens, markup inside Qwen3-Coder values, fragments of malformed markup left in
the content, and ``truncated`` used for text that did not end inside a call. Every case is
also streamed one character at a time and must give the same result.
"""

from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.parsing import (INVALID_CALL, parse, TRUNCATED, UNKNOWN_TOOL,
                                       UNPARSEABLE_ARGUMENTS)
from parsing_corpus import catalog, guard_fails, stream, summary
import pytest

CATALOG = catalog()


def _tool(name: str, properties: dict, required: list[str] | None = None) -> dict:
    return {'type': 'function', 'function': {
        'name': name, 'description': f'The {name} tool.',
        'parameters': {'type': 'object', 'properties': properties,
                       'required': required or []}}}


OPTIONAL_INT = {'anyOf': [{'type': 'integer'}, {'type': 'null'}], 'default': None}
UNION_CATALOG = ToolCatalog.from_tools([
    _tool('count_items', {'count': OPTIONAL_INT,
                          'where': {'anyOf': [{'type': 'object'}, {'type': 'null'}]},
                          'tags': {'oneOf': [{'type': 'array'}, {'type': 'string'}]},
                          'ratio': {'type': ['number', 'null']},
                          'note': {'anyOf': [{'type': 'string'}, {'type': 'null'}]},
                          'flag': {'anyOf': [{'type': 'boolean'}, {'type': 'null'}]}}),
    _tool('write_file', {'path': {'type': 'string'}, 'content': {'type': 'string'}},
          ['path', 'content']),
    _tool('get_time', {}),
    _tool('f', {'x': {'type': 'integer'}}, ['x']),
    _tool('say', {'text': {'type': 'string'}}, ['text']),
])


def both(text: str, tools=CATALOG):
    """Parse ``text`` and check that streaming it one character at a time agrees."""
    with guard_fails():
        result = parse(text, tools)
        assert stream(text, list(range(len(text))), tools) == result
    return result


def qwen3(function: str, **params: str) -> str:
    body = ''.join(f'<parameter={name}>\n{value}\n</parameter>\n' for name, value in
                   params.items())
    return f'<tool_call>\n<function={function}>\n{body}</function>\n</tool_call>'


# --- 1. Qwen3-Coder values follow anyOf / oneOf / type lists of the schema

@pytest.mark.parametrize('params, expected', [
    ({'count': '42'}, {'count': 42}),
    ({'count': 'null'}, {'count': None}),
    ({'count': 'None'}, {'count': None}),
    ({'where': '{"room": "kitchen"}'}, {'where': {'room': 'kitchen'}}),
    ({'where': 'null'}, {'where': None}),
    ({'tags': '["a", "b"]'}, {'tags': ['a', 'b']}),
    ({'tags': 'plain words'}, {'tags': 'plain words'}),
    ({'ratio': '0.5'}, {'ratio': 0.5}),
    ({'ratio': 'null'}, {'ratio': None}),
    ({'note': 'null'}, {'note': None}),
    ({'note': '42'}, {'note': '42'}),  # no integer alternative: the text stays
    ({'flag': 'false'}, {'flag': False}),
    ({'count': 'many'}, {'count': 'many'}),  # fits no alternative: left for validation
])
def test_qwen3_values_try_the_schema_alternatives(params, expected):
    result = both(qwen3('count_items', **params), UNION_CATALOG)
    assert [(call.name, call.arguments) for call in result.calls] == [('count_items', expected)]
    assert result.errors == []


# --- 2. zero-argument calls inside an explicit call context

@pytest.mark.parametrize('text, fmt', [
    ('<tool_call>{"name": "get_time"}</tool_call>', 'hermes'),
    ('<tool_call>\n{"name": "get_time"}\n</tool_call>', 'hermes'),
    ('[TOOL_CALLS][{"name": "get_time"}]', 'mistral'),
    ('[TOOL_CALLS][{"name": "get_time"}, {"name": "f", "arguments": {"x": 1}}]', 'mistral'),
    ('<|python_tag|>{"name": "get_time"}', 'llama_json'),
])
def test_zero_argument_call_in_a_call_context(text, fmt):
    result = both(text, UNION_CATALOG)
    assert (result.calls[0].name, result.calls[0].arguments, result.calls[0].format) == (
        'get_time', {}, fmt)
    assert result.errors == [] and result.content == ''


def test_bare_name_object_in_prose_stays_prose():
    text = 'The record {"name": "get_time"} is a config entry.'
    assert summary(both(text, UNION_CATALOG)) == ([], [], text)


# --- 3. LFM2 wrapper tokens are markup

@pytest.mark.parametrize('text, content', [
    ('<|tool_call_start|>[f(x=1)]<|tool_call_end|>', ''),
    ('Checking.<|tool_call_start|>[f(x=1), get_time()]<|tool_call_end|>Done.', 'Checking.Done.'),
    ('<|tool_call_start|>[f(x=1)]<|tool_call_end|>\nThe value is set.', 'The value is set.'),
])
def test_lfm2_wrapper_tokens_leave_the_content(text, content):
    result = both(text, UNION_CATALOG)
    assert result.calls[0].name == 'f' and result.calls[0].arguments == {'x': 1}
    assert all(call.format == 'pythonic' for call in result.calls)
    assert result.content == content


def test_lfm2_truncated_inside_wrapper():
    result = both('<|tool_call_start|>[f(x=', UNION_CATALOG)
    assert [(issue.code, issue.name) for issue in result.errors] == [(TRUNCATED, 'f')]
    assert result.content == ''


# --- 4. markup inside Qwen3-Coder values

def test_closing_parameter_tag_inside_a_value():
    text = qwen3('write_file', path='a.md', content='Close it with </parameter> tags.')
    result = both(text, UNION_CATALOG)
    assert result.calls[0].arguments == {'path': 'a.md',
                                         'content': 'Close it with </parameter> tags.'}


def test_literal_parameter_tag_inside_a_value_does_not_overwrite():
    text = qwen3('write_file', content='Use <parameter=path> to name it.', path='/tmp/x.md')
    result = both(text, UNION_CATALOG)
    assert result.calls[0].arguments == {'content': 'Use <parameter=path> to name it.',
                                         'path': '/tmp/x.md'}


def test_tool_call_tag_inside_a_value():
    text = qwen3('write_file', path='t.md', content='An example: <tool_call> ... </tool_call>')
    result = both(text, UNION_CATALOG)
    assert result.calls[0].arguments['content'] == 'An example: <tool_call> ... </tool_call>'


def test_repeated_parameter_is_an_issue_not_an_overwrite():
    text = ('<tool_call><function=write_file><parameter=path>a</parameter><parameter=path>b'
            '</parameter><parameter=content>x</parameter></function></tool_call>')
    result = both(text, UNION_CATALOG)
    assert result.calls == []
    assert [(issue.code, issue.name) for issue in result.errors] == [
        (UNPARSEABLE_ARGUMENTS, 'write_file')]
    assert "'path'" in result.errors[0].message


def test_missing_close_before_a_parameter_of_the_schema_opens_that_parameter():
    # content lost its </parameter> before a real <parameter=path>: path is a parameter of
    # the tool that is not given anywhere else, so the tag opens it (it used to be
    # reported as ambiguous)
    text = ('<tool_call><function=write_file><parameter=content>abc<parameter=path>x.md'
            '</parameter></function></tool_call>')
    result = both(text, UNION_CATALOG)
    assert result.calls[0].arguments == {'content': 'abc', 'path': 'x.md'}
    assert result.errors == []


def test_ambiguous_value_end_is_reported():
    # <parameter=y> names no parameter of f, so it would be text, but x is an integer
    text = ('<tool_call><function=f><parameter=x>5<parameter=y>6</parameter></function>'
            '</tool_call>')
    result = both(text, UNION_CATALOG)
    assert result.calls == []
    assert [issue.code for issue in result.errors] == [UNPARSEABLE_ARGUMENTS]
    assert 'ambiguous' in result.errors[0].message


def test_missing_close_without_any_closing_tag_still_parses():
    text = ('<tool_call><function=write_file><parameter=path>a.md<parameter=content>hi'
            '</function></tool_call>')
    result = both(text, UNION_CATALOG)
    assert result.calls[0].arguments == {'path': 'a.md', 'content': 'hi'}


# --- 5. the whole malformed block leaves the content

@pytest.mark.parametrize('text, code, content', [
    ('{"name": "say", "parameters": {invalid json}', UNPARSEABLE_ARGUMENTS, ''),
    ('{"name": "say", "parameters": {invalid json}} Then I wait.', UNPARSEABLE_ARGUMENTS,
     'Then I wait.'),
    ('[TOOL_CALLS] not json at all', UNPARSEABLE_ARGUMENTS, ''),
    ('Okay. [TOOL_CALLS]say then nothing', UNPARSEABLE_ARGUMENTS, 'Okay.'),
    ('<tool_call>{"name": "say", "arguments": {bad}}', UNPARSEABLE_ARGUMENTS, ''),
    ('[say(text="hi" ; oops)] after', UNPARSEABLE_ARGUMENTS, 'after'),
    ('<|python_tag|>{"name": "say", "parameters": {nope}} ok', UNPARSEABLE_ARGUMENTS, 'ok'),
])
def test_malformed_block_is_removed_whole(text, code, content):
    result = both(text)
    assert [issue.code for issue in result.errors] == [code]
    assert result.content == content


# --- 6. truncated means the text ended inside a call

@pytest.mark.parametrize('text', [
    '[say(text="hi)]\nAll done.',
    'say(text="hi) and then more prose.',
    "<tool_call>say(text='it)</tool_call>",
])
def test_unbalanced_quote_in_a_complete_text_is_not_truncated(text):
    result = both(text)
    assert [issue.code for issue in result.errors] == [UNPARSEABLE_ARGUMENTS]
    assert 'quote' in result.errors[0].message


@pytest.mark.parametrize('text', [
    '[say(text="hi',
    '[say(text="use {x} and',
    '{"name": "say", "arguments": {"text": "a',
])
def test_text_ending_inside_a_call_is_truncated(text):
    result = both(text)
    assert [issue.code for issue in result.errors] == [TRUNCATED]


def test_other_codes_unchanged():
    assert [i.code for i in both('<tool_call>{"name": "sya", "arguments": {}}'
                                 '</tool_call>').errors] == [UNKNOWN_TOOL]
    assert [i.code for i in both('<tool_call></tool_call>').errors] == [INVALID_CALL]
