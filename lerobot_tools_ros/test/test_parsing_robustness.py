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

"""The failure modes users report against existing parsers, one test each."""

import json
import random
import sys
import traceback

from lerobot_tools_ros.parsing import DEFAULT_MAX_INPUT_BYTES, IssueEvent, parse, StreamingParser
from lerobot_tools_ros.parsing.readers.json_values import MAX_DEPTH
from parsing_corpus import catalog, growth, summary
import pytest

CATALOG = catalog()
SAY = '<tool_call>{"name": "say", "arguments": {"text": "%s"}}</tool_call>'


def calls_of(result) -> list:
    return [(call.name, call.arguments) for call in result.calls]


def test_prose_before_between_and_after_calls():
    text = ('I see the cup.\n' + SAY % 'one' + '\nNow the second.\n' + SAY % 'two'
            + '\nAll done.')
    result = parse(text, CATALOG)
    assert calls_of(result) == [('say', {'text': 'one'}), ('say', {'text': 'two'})]
    assert result.content == 'I see the cup.\nNow the second.\nAll done.'
    assert result.errors == []


def test_several_calls_of_mixed_tools():
    text = ('<tool_call>{"name": "say", "arguments": {"text": "Saving."}}</tool_call>\n'
            '<tool_call>{"name": "record_observation", "arguments": {"label": "cup"}}</tool_call>'
            '\n<tool_call>{"name": "move_to", "arguments": {"x": 0.1, "y": 0.2}}</tool_call>')
    assert calls_of(parse(text, CATALOG)) == [
        ('say', {'text': 'Saving.'}), ('record_observation', {'label': 'cup'}),
        ('move_to', {'x': 0.1, 'y': 0.2})]


def test_single_quotes_and_python_literals_are_read_by_ast():
    # A blanket quote replacement would break the apostrophe and the embedded double quotes.
    text = ("<tool_call>{'name': 'say', 'arguments': {'text': \"it's a \\\"red\\\" cup\"}}"
            "</tool_call><tool_call>{'name': 'set_gripper', 'arguments': {'open': True, "
            "'force': None}}</tool_call>")
    assert calls_of(parse(text, CATALOG)) == [
        ('say', {'text': 'it\'s a "red" cup'}), ('set_gripper', {'open': True, 'force': None})]


def test_python_literal_is_never_evaluated():
    text = "<tool_call>{'name': 'say', 'arguments': {'text': __import__('os').getcwd()}}"
    result = parse(text + '</tool_call>', CATALOG)
    assert result.calls == []
    assert [issue.code for issue in result.errors] == ['unparseable_arguments']


def test_double_encoded_arguments():
    arguments = json.dumps(json.dumps({'text': 'hi'}))
    text = '{"name": "say", "arguments": %s}' % json.dumps(arguments)
    assert calls_of(parse(text, CATALOG)) == [('say', {'text': 'hi'})]


def test_literal_closing_tag_inside_a_string_argument():
    text = SAY % 'use </tool_call> tags' + ' then ' + SAY % 'and {"braces"}'.replace('"', '\\"')
    assert calls_of(parse(text, CATALOG)) == [
        ('say', {'text': 'use </tool_call> tags'}), ('say', {'text': 'and {"braces"}'})]
    fenced = '```json\n{"name": "say", "arguments": {"text": "a ``` b"}}\n```'
    assert calls_of(parse(fenced, CATALOG)) == [('say', {'text': 'a ``` b'})]
    xml = '<function=say><parameter=text>a </function> b</parameter></function>'
    assert calls_of(parse(xml, CATALOG)) == [('say', {'text': 'a </function> b'})]


@pytest.mark.parametrize('text, name', [
    ('<tool_call>{"name": "say", "arguments": {"text": "hel', 'say'),
    ('<tool_call>{"name": "say", "argum', 'say'),
    ('<tool_call>\n', ''),
    ('<say>half a sente', 'say'),
    ('[say(text="hel', 'say'),
    ('say(text="hi", ', 'say'),
    ('[TOOL_CALLS][{"name": "say", "arguments": {', 'say'),
    ('[TOOL_CALLS]say{"text": "h', 'say'),
    ('<|python_tag|>{"name": "say", "parameters": {"text": ', 'say'),
    ('<tool_call>\n<function=say>\n<parameter=text>\nhel', 'say'),
    ('```json\n{"name": "say", "arguments": {"text": "hel', 'say'),
    ('{"tool_calls": [{"type": "function", "function": {"name": "say", "arg', 'say'),
])
def test_truncated_final_call_is_reported_not_dropped(text, name):
    prefix = 'Plan.\n' + SAY % 'first' + '\n'
    result = parse(prefix + text, CATALOG)
    assert calls_of(result) == [('say', {'text': 'first'})]
    assert [(issue.code, issue.name) for issue in result.errors] == [('truncated', name)]
    issue = result.errors[0]
    assert issue.span == (len(prefix), len(prefix + text))
    assert 'ended' in issue.message and 'expected' in issue.message
    assert result.content == 'Plan.'


def test_truncation_message_says_what_was_still_open():
    message = parse('<tool_call>{"name": "say", "arguments": {"text": "hel').errors[0].message
    assert message == ('<tool_call> at char 0: the text ended inside the call (expected the '
                       "closing \" of a string, then '}}', then '</tool_call>')")


def test_unknown_tool_is_an_issue_with_a_suggestion():
    result = parse('[say(text="a"), recrod_observation(label="cup"), dance()]', CATALOG)
    assert calls_of(result) == [('say', {'text': 'a'})]
    assert [(issue.code, issue.name) for issue in result.errors] == [
        ('unknown_tool', 'recrod_observation'), ('unknown_tool', 'dance')]
    assert "did you mean 'record_observation'?" in result.errors[0].message
    assert 'no similar name (known tools: say, record_observation, move_to' in (
        result.errors[1].message)


def test_without_a_catalog_any_name_is_accepted():
    result = parse('<tool_call>{"name": "dance", "arguments": {}}</tool_call>')
    assert calls_of(result) == [('dance', {})]


def test_empty_input():
    assert summary(parse('', CATALOG)) == ([], [], '')
    assert summary(parse('')) == ([], [], '')


def test_one_megabyte_of_noise():
    rng = random.Random(4)
    pieces = ['<', '>', '{', '}', '[', ']', '(', ')', '"', "'", '\\', 'say', ' ', '\n', 'x',
              '<tool_call>', '</say>', '```', ':', ',', '\ud800', 'é']
    noise = ''.join(rng.choice(pieces) for _ in range(400_000))[:1_000_000]
    assert len(noise.encode('utf-8', 'surrogatepass')) > DEFAULT_MAX_INPUT_BYTES
    result = parse(noise, CATALOG)
    assert [issue.code for issue in result.errors] == ['too_large']
    result = parse(noise, CATALOG, max_input_bytes=4_000_000)
    assert all(issue.code != 'too_large' for issue in result.errors)
    # linear: twice the noise is about twice the work (counted in function calls, not timed)
    assert growth(lambda size: noise[:size], lambda text: parse(text, CATALOG), 20_000) < 2.5


@pytest.mark.parametrize('text', [
    '[' * 100_000,
    '{"a":' * 50_000,
    '<tool_call>' + '[' * 100_000,
    '<tool_call>' + '{"a":' * 20_000 + '1' + '}' * 20_000 + '</tool_call>',
    '[say(text=' + '[' * 50_000 + ']' * 50_000 + ')]',
    'say(' + '(' * 100_000,
    '[TOOL_CALLS]' + '[' * 100_000 + ']' * 100_000,
    '<|python_tag|>' + '{"x": ' * 30_000,
])
def test_deeply_nested_brackets_do_not_raise(text):
    result = parse(text, CATALOG, max_input_bytes=1_000_000)
    assert result.calls == []


def test_deeply_nested_argument_is_reported():
    text = '<tool_call>{"name": "say", "arguments": {"text": ' + '[' * 5000 + ']' * 5000 + '}}'
    result = parse(text + '</tool_call>', CATALOG, max_input_bytes=1_000_000)
    assert [(issue.code, issue.name) for issue in result.errors] == [
        ('unparseable_arguments', 'say')]
    assert 'nested more than 200 levels deep' in result.errors[0].message


def test_nesting_limit_does_not_depend_on_the_callers_stack():
    ok = '{"name": "plan_path", "arguments": {"waypoints": ' + '[' * 150 + ']' * 150 + '}}'
    deep = '{"name": "plan_path", "arguments": {"waypoints": ' + '[' * 900 + ']' * 900 + '}}'

    def nested_call(levels: int, text: str):
        return parse(text, CATALOG) if levels == 0 else nested_call(levels - 1, text)

    # Leave the parser MAX_DEPTH frames however deep the test runner itself already is.
    headroom_levels = sys.getrecursionlimit() - len(traceback.extract_stack()) - MAX_DEPTH
    for text in (ok, deep):
        shallow = parse(text, CATALOG)
        assert nested_call(headroom_levels, text) == shallow
    assert parse(ok, CATALOG).calls[0].name == 'plan_path'
    assert parse(deep, CATALOG).errors[0].code == 'unparseable_arguments'


@pytest.mark.parametrize('text, calls, content', [
    ('\ud800', [], '\ud800'),
    ('\udfff\ud800', [], '\udfff\ud800'),
    ('a\ud800b <say>\udc00</say>', [('say', {'text': '\udc00'})], 'a\ud800b'),
    ('<tool_call>{"name": "say", "arguments": {"text": "\ud800"}}', [('say', {'text': '\ud800'})],
     ''),
    ('[say(text="\ud800")]', [], ''),
])
def test_invalid_utf8_surrogates(text, calls, content):
    result = parse(text, CATALOG)
    assert (calls_of(result), result.content) == (calls, content)
    # ast cannot read a lone surrogate: that call is reported, not dropped
    assert [issue.code for issue in result.errors] == (
        ['unparseable_arguments'] if text.startswith('[say') else [])


def test_escaped_surrogate_in_json_string():
    result = parse('{"name": "say", "arguments": {"text": "\\ud800"}}', CATALOG)
    assert calls_of(result) == [('say', {'text': '\ud800'})]


def test_input_above_the_limit_is_one_too_large_issue():
    text = SAY % 'x' * 2000
    result = parse(text, CATALOG)
    assert (result.content, result.calls) == ('', [])
    [issue] = result.errors
    assert (issue.code, issue.span, issue.format) == ('too_large', (0, len(text)), '')
    assert f'{len(text)} bytes' in issue.message and '65536' in issue.message
    assert len(parse(text, CATALOG, max_input_bytes=len(text)).calls) == 2000


def test_limit_counts_utf8_bytes():
    assert parse('é' * 30_000, max_input_bytes=60_000).errors == []
    assert parse('é' * 30_001, max_input_bytes=60_000).errors[0].code == 'too_large'
    assert parse('\ud800' * 20_001, max_input_bytes=60_000).errors[0].code == 'too_large'


# (prefix, repeated unit, count, suffix): inputs that made other parsers (or earlier versions
# of this one) hang, backtrack or recurse. Each is parsed at full size (it must not raise), and
# its work (function calls, not time) at count/20 and count/10 repetitions is compared: it must
# grow linearly.
ADVERSARIAL = [
    ('', '<tool_call>', 20_000, ''),
    ('', '[', 100_000, ''),
    ('', '{"a":', 50_000, ''),
    ('', 'say(', 20_000, ''),
    ('', '"', 100_000, ''),
    ('', "'", 100_000, ''),
    ('', '[say(text="', 20_000, ''),
    ('', '<say>', 20_000, ''),
    ('', '<function=say><parameter=text>', 5_000, ''),
    ('', '<parameter=', 20_000, ''),
    ('', '```json\n{', 20_000, ''),
    ('', '[TOOL_CALLS]', 20_000, ''),
    ('', '[TOOL_CALLS]say', 20_000, ''),
    ('', '<|python_tag|>{"name": "say", "parameters": {}};', 5_000, ''),
    ('{"name": "say", "arguments": {"text": "', '\\', 100_000, ''),
    ('', '[a(', 30_000, ''),
    ('', '[{', 50_000, ''),
    ('', '{"', 50_000, ''),
    ('', '{"name": "x", "arguments": {}} ', 5_000, ''),
    ('', 'say(text="a") ', 10_000, ''),
    ('', '\\"', 50_000, ''),
    ('', ' ', 200_000, '<tool_call>'),
    ('', '<think>', 20_000, ''),
    ('', '<think><tool_call>', 10_000, ''),
    ('', '<think>a</think>', 10_000, ''),
]


def _both(text: str) -> None:
    parse(text, CATALOG, max_input_bytes=1_000_000)
    parse(text, None, max_input_bytes=1_000_000)


@pytest.mark.parametrize('prefix, unit, count, suffix', ADVERSARIAL,
                         ids=[repr((case[0] + case[1])[:24]) for case in ADVERSARIAL])
def test_adversarial_input_takes_linear_work(prefix, unit, count, suffix):
    _both(prefix + unit * count + suffix)
    assert growth(lambda size: prefix + unit * size + suffix, _both, count // 20) < 2.5


HUGE = '9' * 5000  # beyond Python's 4300-digit limit for int(str)


@pytest.mark.parametrize('text', [
    '<tool_call>{"name": "say", "arguments": {"text": "a", "n": %s}}</tool_call>' % HUGE,
    '{"tool_calls": [{"type": "function", "function": {"name": "say", '
    '"arguments": {"n": %s}}}]}' % HUGE,
    '{"tool_calls": [{"type": "function", "function": {"name": "say", '
    '"arguments": "{\\"n\\": %s}"}}]}' % HUGE,
    '<|python_tag|>{"name": "say", "parameters": {"n": %s}}' % HUGE,
    '[TOOL_CALLS][{"name": "say", "arguments": {"n": %s}}]' % HUGE,
    '[TOOL_CALLS]say{"n": %s}' % HUGE,
    '```json\n{"name": "say", "arguments": {"n": %s}}\n```' % HUGE,
    '[say(text="a", n=%s)]' % HUGE,
], ids=['hermes', 'openai', 'openai_string_args', 'llama', 'mistral', 'mistral_name', 'fenced',
        'pythonic'])
def test_integer_beyond_the_digit_limit_is_an_issue_not_a_crash(text):
    result = parse(text, max_input_bytes=1 << 20)
    assert result.calls == []
    assert [issue.code for issue in result.errors] == ['unparseable_arguments']
    assert 'digits' in result.errors[0].message or 'limit' in result.errors[0].message
    streamed = StreamingParser(max_input_bytes=1 << 20)
    events = []
    for start in range(0, len(text), 97):
        events += streamed.feed(text[start:start + 97])
    events += streamed.finish()
    assert [e.issue.code for e in events if isinstance(e, IssueEvent)] == ['unparseable_arguments']
