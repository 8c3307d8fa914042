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

"""Each output format, table-driven from the corpus, plus format selection and the registry."""

from lerobot_tools_ros.parsing import (FORMATS, Match, parse, ParsedCall, register_format,
                                       unregister_format)
from parsing_corpus import CASES, catalog, summary
import pytest

CATALOG = catalog()
FORMAT_NAMES = ['lerobot_marker', 'openai_json', 'hermes', 'llama_json', 'pythonic', 'mistral',
                'qwen3_coder_xml', 'fenced_json', 'deepseek', 'kimi_k2', 'glm45', 'harmony',
                'minimax_m2', 'tool_calls_json', 'seed_oss', 'step3', 'granite', 'gemma',
                'phi4_mini', 'internlm', 'cohere', 'longcat', 'hunyuan', 'deepseek_dsml']


@pytest.mark.parametrize('case', CASES, ids=[case.id for case in CASES])
def test_corpus_case(case):
    result = parse(case.text, CATALOG if case.with_catalog else None)
    assert summary(result) == (case.calls, case.errors, case.content)


def test_every_format_has_corpus_cases():
    formats = {call[2] for case in CASES for call in case.calls}
    assert formats == set(FORMAT_NAMES)


def test_format_names_are_the_stable_public_set():
    assert list(FORMATS) == FORMAT_NAMES


def test_span_covers_each_calls_markup():
    text = ('A.\n<tool_call>{"name": "say", "arguments": {"text": "hi"}}</tool_call>\n'
            'B.\n<say>bye</say>')
    first, second = parse(text, CATALOG).calls
    assert text[slice(*first.span)] == (
        '<tool_call>{"name": "say", "arguments": {"text": "hi"}}</tool_call>')
    assert text[slice(*second.span)] == '<say>bye</say>'


def test_calls_from_one_list_share_the_list_span():
    text = 'x [say(text="a"), say(text="b")] y'
    calls = parse(text, CATALOG).calls
    assert [call.span for call in calls] == [(2, 32), (2, 32)]


def test_calls_are_frozen_values():
    call = parse('<say>hi</say>').calls[0]
    assert call == ParsedCall('say', {'text': 'hi'}, 'lerobot_marker', (0, 13))
    with pytest.raises(AttributeError):
        call.name = 'other'


MIXED = ('<say>one</say> <tool_call>{"name": "say", "arguments": {"text": "two"}}</tool_call> '
         '[say(text="three")]')


@pytest.mark.parametrize('formats, expected', [
    ('auto', ['lerobot_marker', 'hermes', 'pythonic']),
    (['auto'], ['lerobot_marker', 'hermes', 'pythonic']),
    ('hermes', ['hermes']),
    (['pythonic', 'lerobot_marker'], ['lerobot_marker', 'pythonic']),
])
def test_formats_can_be_pinned(formats, expected):
    assert [call.format for call in parse(MIXED, CATALOG, formats).calls] == expected


def test_pinned_format_leaves_other_markup_as_prose():
    result = parse(MIXED, CATALOG, 'hermes')
    assert result.content == '<say>one</say> [say(text="three")]'


def test_unknown_format_name_is_a_configuration_error():
    with pytest.raises(ValueError, match="unknown format 'hermez'.*hermes"):
        parse('text', None, ['hermez'])


def test_bare_json_format_follows_the_pinned_family():
    text = '{"name": "say", "parameters": {"text": "hi"}}'
    assert [call.format for call in parse(text, CATALOG).calls] == ['llama_json']
    assert parse(text, CATALOG, 'openai_json').calls == []
    assert parse(text, CATALOG, 'llama_json').calls[0].arguments == {'text': 'hi'}


def test_new_format_is_one_registration():
    def match_bang(text, pos, trigger, ctx):
        end = text.find('!!', pos + 2)
        if end == -1:
            return None
        name, _, arg = text[pos + 2:end].partition(' ')
        items = []
        ctx.add_call(items, name, {'text': arg}, 'bang', pos, end + 2)
        return Match(end + 2, items)

    register_format('bang', [('!!', match_bang)], priority=1)
    try:
        result = parse('Go. !!say hello!! <say>x</say>', CATALOG)
        assert [(call.name, call.arguments, call.format) for call in result.calls] == [
            ('say', {'text': 'hello'}, 'bang'), ('say', {'text': 'x'}, 'lerobot_marker')]
        assert parse('!!dance now!!', CATALOG).errors[0].code == 'unknown_tool'
        assert parse('!!say hi!!', CATALOG, 'hermes').calls == []
    finally:
        unregister_format('bang')
    assert parse('!!say hello!!', CATALOG).calls == []


def test_register_format_rejects_bad_handlers():
    with pytest.raises(ValueError):
        register_format('auto', [('x', lambda *args: None)])
    with pytest.raises(ValueError):
        register_format('empty_trigger', [('', lambda *args: None)])
    with pytest.raises(ValueError):
        register_format('no_handlers', [])
    assert 'empty_trigger' not in FORMATS


# --- details per format that the corpus does not pin down


def test_marker_first_closing_tag_ends_it():
    result = parse('<say>a <say>b</say> c</say>')
    assert result.calls[0].arguments == {'text': 'a <say>b'}
    assert result.content == 'c</say>'


def test_openai_missing_or_empty_arguments_mean_no_arguments():
    for arguments in ('', '"arguments": null, ', '"arguments": "", '):
        text = '{"type": "function", "function": {' + arguments + '"name": "say"}}'
        assert parse(text).calls[0].arguments == {}, text


def test_assistant_message_content_is_the_plan():
    text = ('{"role": "assistant", "content": "Picking it up.", "tool_calls": []}')
    result = parse(text, CATALOG)
    assert (result.content, result.calls, result.errors) == ('Picking it up.', [], [])


def test_qwen3_value_that_does_not_fit_its_type_stays_a_string():
    text = ('<function=move_to><parameter=x>left</parameter><parameter=y>2</parameter>'
            '<parameter=speed>2.5</parameter></function>')
    assert parse(text, CATALOG).calls[0].arguments == {'x': 'left', 'y': 2, 'speed': '2.5'}


def test_qwen3_unknown_parameter_kept_as_string():
    text = ('<function=say><parameter=text>hi</parameter><parameter=volume>11</parameter>'
            '</function>')
    assert parse(text, CATALOG).calls[0].arguments == {'text': 'hi', 'volume': '11'}


def test_pythonic_dotted_name_and_errors():
    result = parse('[robot.wave(hand="left")]')
    assert result.calls[0].name == 'robot.wave'
    result = parse('[say(**kwargs)]', CATALOG)
    assert result.errors[0].code == 'invalid_call'
    assert "'**' unpacking" in result.errors[0].message
    result = parse('[wave("left")]')
    assert result.errors[0].code == 'invalid_call'
    assert 'positional' in result.errors[0].message


def test_pythonic_rejects_values_json_cannot_carry():
    for value in ('{1, 2}', "b'x'", '1j', 'x', 'f(1)', '...'):
        result = parse(f'[say(text={value})]', CATALOG)
        assert [issue.code for issue in result.errors] == ['invalid_call'], value
        assert result.calls == []


def test_mistral_without_a_call_after_the_tag():
    result = parse('[TOOL_CALLS] 42', CATALOG)
    assert result.errors[0].code == 'unparseable_arguments'
    assert 'expected a JSON list or name{...}' in result.errors[0].message


def test_fenced_block_with_other_text_is_not_consumed():
    text = '```json\n{"name": "say", "arguments": {"text": "hi"}} // comment\n```'
    result = parse(text, CATALOG)
    assert result.calls[0].format == 'openai_json'
    assert result.content == '```json\n// comment\n```'


def test_say_marker_without_say_in_the_catalog_is_reported_not_ignored():
    from lerobot_tools_ros.catalog import ToolCatalog
    only_wave = ToolCatalog.from_tools([{'type': 'function', 'function': {
        'name': 'wave', 'parameters': {'type': 'object', 'properties': {}}}}])
    result = parse('Hello.\n<say>hi</say>', only_wave)
    assert result.calls == []
    assert [(issue.code, issue.name) for issue in result.errors] == [('unknown_tool', 'say')]
