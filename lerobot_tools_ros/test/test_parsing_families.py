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
The model families the serving engines ship parsers for, one by one.

The corpus (``parsing_corpus.CASES``) holds real-looking outputs of each family; here each
family is also parsed with only its own format selected, fuzzed from its own cases (never
raising, streaming always agreeing), and checked on its particular edge cases.
"""

from lerobot_tools_ros.parsing import FORMATS, parse, TRUNCATED, UNPARSEABLE_ARGUMENTS
from parsing_corpus import CASES, catalog, fuzz, guard_fails, stream, summary
import pytest

CATALOG = catalog()
FAMILIES = ['deepseek', 'kimi_k2', 'glm45', 'harmony', 'minimax_m2', 'tool_calls_json',
            'seed_oss', 'step3', 'granite', 'gemma', 'phi4_mini', 'internlm', 'cohere',
            'longcat', 'hunyuan', 'deepseek_dsml']


def family_cases(fmt: str) -> list:
    # (cases with calls inside reasoning spans mix families on purpose: the one in the span is
    # call markup only when its family is selected too)
    return [case for case in CASES if case.calls and all(call[2] == fmt for call in case.calls)
            and all(error[0] != 'call_in_reasoning' for error in case.errors)]


def both(text: str, tools=CATALOG, formats='auto'):
    """Parse ``text``; streaming it one character at a time must agree."""
    with guard_fails():
        result = parse(text, tools, formats)
        assert stream(text, list(range(len(text))), tools, formats) == result
    return result


def test_every_family_is_registered_and_has_cases():
    assert set(FAMILIES) <= set(FORMATS)
    assert all(family_cases(fmt) for fmt in FAMILIES)


@pytest.mark.parametrize('fmt', FAMILIES)
def test_family_alone_reads_its_cases(fmt):
    for case in family_cases(fmt):
        tools = CATALOG if case.with_catalog else None
        assert summary(both(case.text, tools, fmt)) == summary(parse(case.text, tools))


@pytest.mark.parametrize('fmt', FAMILIES)
def test_family_fuzz(fmt):
    streamed, mismatches = fuzz(600, seed=hash(fmt) % 1000, tools=CATALOG, stream_every=3,
                                cases=family_cases(fmt))
    assert streamed == 200 and mismatches == []


def calls(result) -> list:
    return [(call.name, call.arguments, call.format) for call in result.calls]


def codes(result) -> list:
    return [(issue.code, issue.name) for issue in result.errors]


def test_deepseek_v31_call_without_section_tokens():
    result = both('<｜tool▁call▁begin｜>say<｜tool▁sep｜>{"text": "hi"}<｜tool▁call▁end｜> ok')
    assert calls(result) == [('say', {'text': 'hi'}, 'deepseek')] and result.content == 'ok'


def test_deepseek_dsml_string_false_that_is_not_json_is_typed_by_schema():
    text = ('<｜DSML｜function_calls><｜DSML｜invoke name="say"><｜DSML｜parameter name="text" '
            'string="false">plain words</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>')
    assert calls(both(text)) == [('say', {'text': 'plain words'}, 'deepseek_dsml')]


def test_deepseek_malformed_arguments_take_the_whole_call():
    text = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>say<｜tool▁sep｜>{text: hi}'
            '<｜tool▁call▁end｜><｜tool▁calls▁end｜>After.')
    result = both(text)
    assert codes(result) == [(UNPARSEABLE_ARGUMENTS, 'say')] and result.content == 'After.'


def test_kimi_k2_name_without_functions_prefix():
    text = ('<|tool_call_begin|>say:3<|tool_call_argument_begin|>{"text": "hi"}'
            '<|tool_call_end|>')
    assert calls(both(text)) == [('say', {'text': 'hi'}, 'kimi_k2')]


def test_kimi_k2_truncated_arguments():
    result = both('<|tool_calls_section_begin|><|tool_call_begin|>functions.say:0'
                  '<|tool_call_argument_begin|>{"text": "he')
    assert codes(result) == [(TRUNCATED, 'say')]


def test_glm_zero_argument_call_and_hermes_still_work():
    result = both('<tool_call>record_observation</tool_call><tool_call>{"name": "say", '
                  '"arguments": {"text": "hi"}}</tool_call>')
    assert calls(result) == [('record_observation', {}, 'glm45'),
                             ('say', {'text': 'hi'}, 'hermes')]


def test_glm_repeated_key_is_an_issue():
    result = both('<tool_call>say<arg_key>text</arg_key><arg_value>a</arg_value>'
                  '<arg_key>text</arg_key><arg_value>b</arg_value></tool_call>')
    assert codes(result) == [(UNPARSEABLE_ARGUMENTS, 'say')]


def test_harmony_reasoning_is_not_content_but_final_is():
    text = ('<|channel|>analysis<|message|>secret plan<|end|><|start|>assistant<|channel|>final'
            '<|message|>Here you go.<|return|>')
    assert summary(both(text)) == ([], [], 'Here you go.')


def test_harmony_recipient_in_the_role_header():
    text = ('<|start|>assistant to=functions.say<|channel|>commentary json<|message|>'
            '{"text": "hi"}<|call|>')
    assert calls(both(text)) == [('say', {'text': 'hi'}, 'harmony')]


def test_minimax_repeated_parameter_is_an_issue():
    text = ('<minimax:tool_call><invoke name="say"><parameter name="text">a</parameter>'
            '<parameter name="text">b</parameter></invoke></minimax:tool_call>')
    assert codes(both(text)) == [(UNPARSEABLE_ARGUMENTS, 'say')]


def test_seed_oss_markup_inside_a_value():
    text = ('<seed:tool_call><function=say><parameter=text>use </parameter> here'
            '</parameter></function></seed:tool_call>')
    assert calls(both(text)) == [('say', {'text': 'use </parameter> here'}, 'seed_oss')]


def test_functiongemma_empty_arguments_and_errors():
    assert calls(both('<start_function_call>call:record_observation{}<end_function_call>',
                      None)) == [('record_observation', {}, 'gemma')]
    result = both('<start_function_call>call:say{text:<escape>unclosed}<end_function_call>x')
    assert codes(result) == [(UNPARSEABLE_ARGUMENTS, 'say')] and result.content == 'x'


def test_phi4_functools_needs_a_word_boundary():
    text = 'myfunctools[{"name": "say", "arguments": {"text": "hi"}}]'
    assert calls(both(text))[0][2] == 'openai_json'  # the list itself is still a call


def test_cohere_action_word_inside_prose_is_not_markup():
    text = 'The Action: button is red.'
    assert summary(both(text)) == ([], [], text)


def test_tool_calls_tag_not_json_is_one_issue():
    result = both('<tool_calls>say hi</tool_calls> Done.')
    assert codes(result) == [(UNPARSEABLE_ARGUMENTS, '')] and result.content == 'Done.'


def test_hunyuan_json_and_tool_sep_forms_side_by_side():
    result = both('<tool_calls>[{"name": "say", "arguments": {"text": "a"}}]</tool_calls>\n'
                  '<tool_calls><tool_call>say<tool_sep><arg_key>text</arg_key><arg_value>b'
                  '</arg_value></tool_call></tool_calls>')
    assert calls(result) == [('say', {'text': 'a'}, 'tool_calls_json'),
                             ('say', {'text': 'b'}, 'hunyuan')]
    assert result.content == '' and result.errors == []


def test_hunyuan_repeated_key_is_an_issue_not_an_overwrite():
    result = both('<tool_calls><tool_call>say<tool_sep><arg_key>text</arg_key><arg_value>a'
                  '</arg_value><arg_key>text</arg_key><arg_value>b</arg_value></tool_call>'
                  '</tool_calls>')
    assert codes(result) == [(UNPARSEABLE_ARGUMENTS, 'say')] and result.calls == []


def test_hunyuan_unknown_tool_and_glm_call_in_one_text():
    result = both('<tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Paris'
                  '</arg_value></tool_call><tool_call>say<arg_key>text</arg_key><arg_value>hi'
                  '</arg_value></tool_call>')
    assert codes(result) == [('unknown_tool', 'get_weather')]
    assert calls(result) == [('say', {'text': 'hi'}, 'glm45')]
