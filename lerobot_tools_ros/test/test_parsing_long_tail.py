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
The long tail of the serving engines' format expectations, one group per family.

Every text is parsed once and streamed in deltas of several sizes; the streamed result must
equal the one-shot result (the machinery of ``test_parsing_streaming``), so each expectation
holds for both. Groups: DeepSeek DSML, Step-3, Kimi K2, Qwen3-Coder, Hunyuan, recovery of good
calls next to broken ones, reasoning and end-of-turn tokens, GLM-4.5.
"""

from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.parsing import (CALL_IN_REASONING, CallEvent, ContentEvent, parse,
                                       StreamingParser, TRUNCATED, UNPARSEABLE_ARGUMENTS)
from parsing_corpus import catalog, guard_fails, stream
import pytest

CATALOG = catalog()
SIZES = (1, 2, 3, 5, 8, 64)


def both(text: str, tools=CATALOG, formats='auto'):
    """Parse ``text``; streaming it in deltas of every size in SIZES must give the same."""
    with guard_fails():
        result = parse(text, tools, formats)
        for size in SIZES:
            assert stream(text, list(range(size, len(text), size)), tools, formats) == result, (
                size)
    return result


def calls(result) -> list:
    return [(call.name, call.arguments, call.format) for call in result.calls]


def codes(result) -> list:
    return [(issue.code, issue.name) for issue in result.errors]


def _tool(name: str, properties: dict, required: list[str] | None = None) -> dict:
    return {'type': 'function', 'function': {
        'name': name, 'description': f'The {name} tool.',
        'parameters': {'type': 'object', 'properties': properties,
                       'required': required or []}}}


# --- 1. DeepSeek V3.2 / V4 DSML: a family of its own ------------------------------------------

D = '｜DSML｜'


def dsml_invoke(name: str, body: str) -> str:
    return f'<{D}invoke name="{name}">\n{body}</{D}invoke>\n'


def dsml_param(name: str, value: str, string: bool) -> str:
    return (f'<{D}parameter name="{name}" string="{"true" if string else "false"}">{value}'
            f'</{D}parameter>\n')


def dsml(*invokes: str, block: str = 'function_calls') -> str:
    return f'<{D}{block}>\n' + ''.join(invokes) + f'</{D}{block}>'


DSML_MOVE = dsml_invoke('move_to', dsml_param('x', '0.5', False) + dsml_param('y', '-1', False))
DSML_SAY = dsml_invoke('say', dsml_param('text', '  two\nlines, kept exactly \n', True))


@pytest.mark.parametrize('block', ['function_calls', 'tool_calls'])  # V3.2, V4
def test_dsml_is_its_own_auto_detected_family(block):
    text = 'Let me check. ' + dsml(DSML_MOVE, DSML_SAY, block=block) + '\nDone.'
    expected = [('move_to', {'x': 0.5, 'y': -1}, 'deepseek_dsml'),
                ('say', {'text': '  two\nlines, kept exactly \n'}, 'deepseek_dsml')]
    result = both(text)
    assert calls(result) == expected and result.errors == []
    assert result.content == 'Let me check. Done.'
    assert calls(both(text, CATALOG, 'deepseek_dsml')) == expected


def test_dsml_content_before_and_between_blocks():
    text = 'First. ' + dsml(DSML_MOVE) + ' Then. ' + dsml(DSML_SAY, block='tool_calls') + ' End.'
    result = both(text)
    assert [call.name for call in result.calls] == ['move_to', 'say']
    assert result.content == 'First. Then. End.'


def test_dsml_invoke_with_a_json_body():
    text = dsml(dsml_invoke('move_to', '{"x": 1, "y": 2.5}\n'), DSML_SAY)
    result = both(text)
    assert calls(result)[0] == ('move_to', {'x': 1, 'y': 2.5}, 'deepseek_dsml')
    assert len(result.calls) == 2 and result.errors == [] and result.content == ''


def test_dsml_opener_split_at_any_point_streams_like_one_shot():
    text = 'Sure.\n' + dsml(DSML_MOVE, DSML_SAY) + '\nBye.'
    expected = both(text)
    assert [call.format for call in expected.calls] == ['deepseek_dsml'] * 2
    opener = text.index('<')
    for cut in range(opener, opener + len(f'<{D}function_calls>') + 1):
        assert stream(text, [cut], CATALOG) == expected, cut


# --- 2. Step-3: string values exactly, several calls in one section ---------------------------

S3 = {'begin': '<｜tool_calls_begin｜>', 'end': '<｜tool_calls_end｜>', 'call': '<｜tool_call_begin｜>',
      'call_end': '<｜tool_call_end｜>', 'sep': '<｜tool_sep｜>'}
EDIT_CATALOG = ToolCatalog.from_tools([
    _tool('edit_file', {'old_string': {'type': 'string'}, 'indent': {'type': 'integer'},
                        'enabled': {'type': 'boolean'}}),
    _tool('get_time', {'timezone': {'type': 'string'}}),
])


def step3_invoke(name: str, **params: str) -> str:
    body = ''.join(f'<steptml:parameter name="{key}">{value}</steptml:parameter>'
                   for key, value in params.items())
    return f'<steptml:invoke name="{name}">{body}</steptml:invoke>'


@pytest.mark.parametrize('header, value', [
    ('function<｜tool_sep｜>', 'return 1\n'),
    ('function<｜tool_sep｜>', '    if x:\n        return 1\n'),
    ('function<｜tool_sep｜>', '\nhello '),
    ('function<｜tool_sep｜>edit_file\n', '    if x:'),  # the name again after the separator
    ('function<｜tool_sep｜>edit_file\n', 'hello\u00a0'),
    ('function<｜tool_sep｜>edit_file\n', 'hello'),
])
def test_step3_string_values_are_kept_exactly(header, value):
    text = (S3['begin'] + S3['call'] + header
            + step3_invoke('edit_file', old_string=value, indent=' 4 ', enabled='\ntrue\n')
            + S3['call_end'] + S3['end'])
    result = both(text, EDIT_CATALOG)
    assert calls(result) == [('edit_file', {'old_string': value, 'indent': 4, 'enabled': True},
                              'step3')]
    assert result.content == ''


def test_step3_parallel_calls_in_one_section():
    text = ('Checking both. ' + S3['begin'] + S3['call']
            + step3_invoke('edit_file', old_string='a') + S3['call_end'] + S3['sep']
            + S3['call'] + step3_invoke('get_time', timezone='Asia/Tokyo') + S3['call_end']
            + '\n' + S3['call'] + 'function' + S3['sep'] + step3_invoke('edit_file', indent='2')
            + S3['call_end'] + S3['end'] + ' Done.')
    result = both(text, EDIT_CATALOG)
    assert calls(result) == [('edit_file', {'old_string': 'a'}, 'step3'),
                             ('get_time', {'timezone': 'Asia/Tokyo'}, 'step3'),
                             ('edit_file', {'indent': 2}, 'step3')]
    assert result.content == 'Checking both. Done.'


def test_step3_call_without_its_section_and_after_an_unclosed_think():
    lone = S3['call'] + step3_invoke('get_time', timezone='UTC') + S3['call_end'] + ' ok'
    result = both(lone, EDIT_CATALOG)
    assert calls(result) == [('get_time', {'timezone': 'UTC'}, 'step3')]
    assert result.content == 'ok'
    thinking = '<think>Time first. ' + S3['begin'] + lone.replace(' ok', S3['end'])
    assert calls(both(thinking, EDIT_CATALOG)) == [('get_time', {'timezone': 'UTC'}, 'step3')]


# --- 3. Kimi K2: special tokens never reach the content -------------------------------------

SB, SE = '<|tool_calls_section_begin|>', '<|tool_calls_section_end|>'
TB, TE, AB = '<|tool_call_begin|>', '<|tool_call_end|>', '<|tool_call_argument_begin|>'
KIMI_TOKENS = (SB, SE, TB, TE, AB)


def kimi(call_id: str, arguments: str) -> str:
    return f'{TB}{call_id} {AB}{arguments}{TE}'


@pytest.mark.parametrize('text, content', [
    ('Reasoning. ' + SB + ' spurious noise ' + kimi('functions.say:0', '{"text": "v"}') + SE,
     'Reasoning.'),
    (SB + kimi('functions.say:0', '{"text": "v"}') + SE + TE + SE + ' After tools.',
     'After tools.'),
    ('I wrote ' + AB + ' here, then ' + kimi('functions.say:0', '{"text": "v"}') + ' and '
     + TE + 'more.', 'I wrote here, then and more.'),
    (SB + kimi('functions.say:0', '{"text": "v"}') + '\nstray words\n' + SE + 'Done.', 'Done.'),
])
def test_kimi_tokens_and_noise_between_them_never_reach_the_content(text, content):
    result = both(text)
    assert calls(result) == [('say', {'text': 'v'}, 'kimi_k2')]
    assert result.content == content
    assert not any(token in result.content for token in KIMI_TOKENS)


def test_kimi_invalid_arguments_end_at_their_call_end_token():
    text = ('Help. ' + SB + kimi('functions.say:0', '{"text": "Beijing"')
            + kimi('functions.say:1', '{"text": "Shanghai"}') + SE)
    result = both(text)
    assert calls(result) == [('say', {'text': 'Shanghai'}, 'kimi_k2')]
    assert codes(result) == [(UNPARSEABLE_ARGUMENTS, 'say')]
    assert text[slice(*result.errors[0].span)] == kimi('functions.say:0', '{"text": "Beijing"')
    assert result.content == 'Help.'


def test_kimi_section_ends_an_open_think_and_nothing_else_does():
    # Kimi K2 Thinking opens its call section without </think>: the special token ends the span
    text = ('<think>The user wants a greeting. ' + SB + kimi('functions.say:0', '{"text": "hi"}')
            + SE)
    result = both(text)
    assert calls(result) == [('say', {'text': 'hi'}, 'kimi_k2')]
    assert result.errors == []
    assert result.content == '<think>The user wants a greeting.'
    # a call token inside a closed span is still reasoning; the rule is Kimi's <think> only
    closed = both('<think>Maybe ' + kimi('functions.say:0', '{"text": "a"}') + '</think>' + text)
    assert codes(closed) == [(CALL_IN_REASONING, 'say')] and len(closed.calls) == 1
    cohere = both('<|START_THINKING|>' + SB + kimi('functions.say:0', '{"text": "a"}') + SE)
    assert cohere.calls == [] and codes(cohere) == [(CALL_IN_REASONING, 'say')]


def test_kimi_tokens_split_at_every_point_stream_like_one_shot():
    text = 'Sure. ' + SB + 'noise ' + kimi('functions.say:0', '{"text": "hi"}') + SE + TE + ' Bye.'
    expected = both(text)
    for cut in range(1, len(text)):
        assert stream(text, [cut], CATALOG) == expected, cut
    assert expected.content == 'Sure. Bye.' and len(expected.calls) == 1


# --- 4. Qwen3-Coder: the schema and nesting decide what ends a value -------------------------

FILES = ToolCatalog.from_tools([
    _tool('write_file', {'path': {'type': 'string'}, 'content': {'type': 'string'}}),
    _tool('get_weather', {'city': {'type': 'string'}, 'state': {'type': 'string'},
                          'unit': {'type': 'string'}}),
])


def write_file(path: str, content: str) -> str:
    return ('<tool_call>\n<function=write_file>\n<parameter=path>\n' + path + '\n</parameter>\n'
            '<parameter=content>\n' + content + '</parameter>\n</function>\n</tool_call>')


@pytest.mark.parametrize('content', [
    # </parameter> and <parameter=new_string> on their own lines: write_file has no new_string
    'TEMPLATE = """\n</parameter>\n<parameter=new_string>\n#!/usr/bin/env python3\n'
    '</parameter>\n"""\n',
    # a whole call inside the value, with the outer tool's own names
    'doc = """\n<tool_call>\n<function=write_file>\n<parameter=path>\nliteral/value.txt\n'
    '</parameter>\n<parameter=content>\nhello\n</parameter>\n</function>\n</tool_call>\n'
    '"""\n',
    # a whole call of another tool whose parameter is not in the schema
    'template = """\n<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n'
    '</function>\n</tool_call>\n"""\n',
])
def test_qwen3_markup_inside_a_value_is_text(content):
    text = 'Writing it.\n' + write_file('fixture.py', content)
    result = both(text, FILES)
    assert calls(result) == [('write_file', {'path': 'fixture.py', 'content': content[:-1]},
                              'qwen3_coder_xml')]
    assert result.errors == [] and result.content == 'Writing it.'


def test_qwen3_nested_call_in_the_second_of_two_calls():
    nested = ('template = """\n<tool_call>\n<function=get_weather>\n<parameter=city>x'
              '</parameter>\n</function>\n</tool_call>\n"""\n')
    text = ('<tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n'
            '</function>\n</tool_call>\n\n' + write_file('f.py', nested))
    result = both(text, FILES)
    assert calls(result) == [('get_weather', {'city': 'Paris'}, 'qwen3_coder_xml'),
                             ('write_file', {'path': 'f.py', 'content': nested[:-1]},
                              'qwen3_coder_xml')]


def test_qwen3_missing_closing_tags():
    # city lost its </parameter> before a parameter of the schema; unit lost it before
    # </function>; the bare function's stray </tool_call> is markup
    text = ('Let me check the weather for you:\n<function=get_weather>\n<parameter=city>\n'
            'Dallas\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n'
            '</function>\n</tool_call>\nDone.')
    result = both(text, FILES)
    assert calls(result) == [('get_weather', {'city': 'Dallas', 'state': 'TX',
                                              'unit': 'fahrenheit'}, 'qwen3_coder_xml')]
    assert result.errors == [] and result.content == 'Let me check the weather for you:\nDone.'


# --- 5. Hunyuan: HY v4 without <tool_sep>, arguments typed by a composed schema ---------------

HY_CATALOG = ToolCatalog.from_tools([
    _tool('get_weather', {'city': {'type': 'string'}, 'days': {'type': 'integer'}}, ['city']),
    _tool('get_current_date', {}),
])


def hy(name: str, *pairs: tuple[str, str], sep: str = '') -> str:
    body = ''.join(f'<arg_key>{key}</arg_key><arg_value>{value}</arg_value>'
                   for key, value in pairs)
    return f'<tool_call>{name}{sep}{body}</tool_call>'


@pytest.mark.parametrize('text, expected, content', [
    ('sure!<tool_calls>' + hy('get_weather', ('city', 'Beijing'), ('days', '3')) + '</tool_calls>',
     [('get_weather', {'city': 'Beijing', 'days': 3})], 'sure!'),
    ('<tool_calls>' + hy('get_weather', ('city', 'A')) + hy('get_current_date') + '</tool_calls>',
     [('get_weather', {'city': 'A'}), ('get_current_date', {})], ''),
    ('hi<tool_calls>\n  ' + hy('get_weather', ('city', '北京')) + '\n'
     + hy('get_current_date', sep='<tool_sep>') + '</tool_calls> ok',
     [('get_weather', {'city': '北京'}), ('get_current_date', {})], 'hiok'),
])
def test_hunyuan_v4_without_the_tool_separator(text, expected, content):
    result = both(text, HY_CATALOG)
    with guard_fails():  # and one character at a time
        assert stream(text, list(range(len(text))), HY_CATALOG) == result
    assert [(call.name, call.arguments) for call in result.calls] == expected
    assert {call.format for call in result.calls} == {'hunyuan'}
    assert result.errors == [] and result.content == content


COMPOSED = ToolCatalog.from_tools([
    {'type': 'function', 'function': {'name': 'pick', 'description': 'Pick.', 'parameters': {
        'allOf': [{'type': 'object', 'properties': {'count': {'type': 'integer'}}},
                  {'type': 'object', 'properties': {'gentle': {'type': 'boolean'}}}]}}},
    {'type': 'function', 'function': {'name': 'place', 'description': 'Place.', 'parameters': {
        'anyOf': [{'type': 'object', 'properties': {'slot': {'type': 'integer'}},
                   'required': ['slot']},
                  {'type': 'object', 'properties': {'slot': {'type': 'string'},
                                                    'pose': {'type': 'array'}}}]}}},
    {'type': 'function', 'function': {'name': 'wait', 'description': 'Wait.', 'parameters': {
        'oneOf': [{'type': 'object', 'properties': {'seconds': {'type': 'number'}}}]}}},
])


@pytest.mark.parametrize('text, expected', [
    ('<tool_calls>' + hy('pick', ('count', '3'), ('gentle', 'true'), sep='<tool_sep>')
     + '</tool_calls>', ('pick', {'count': 3, 'gentle': True})),
    ('<tool_calls>' + hy('place', ('slot', '2'), ('pose', '[0, 1]')) + '</tool_calls>',
     ('place', {'slot': 2, 'pose': [0, 1]})),
    ('<tool_calls>' + hy('place', ('slot', 'left')) + '</tool_calls>',
     ('place', {'slot': 'left'})),
    ('<tool_calls>' + hy('wait', ('seconds', '1.5')) + '</tool_calls>',
     ('wait', {'seconds': 1.5})),
    ('<tool_call>\n<function=pick>\n<parameter=count>\n4\n</parameter>\n</function>\n'
     '</tool_call>', ('pick', {'count': 4})),  # the same typing for every schema-typed family
])
def test_arguments_typed_by_a_top_level_composed_schema(text, expected):
    result = both(text, COMPOSED)
    assert [(call.name, call.arguments) for call in result.calls] == [expected]


# --- 6. Recovery: a good call survives a broken sibling ---------------------------------------

@pytest.mark.parametrize('text, name, fmt', [
    ('[say(text="hi"), move_to(x=1, y=)] Done.', 'move_to', 'pythonic'),
    ('[move_to(x=1 y=2), say(text="hi")] Done.', 'move_to', 'pythonic'),
    ('<|python_start|>[say(text="hi"), move_to(x=1,, y=2)]<|python_end|> Done.', 'move_to',
     'pythonic'),
    # Llama 3 JSON: an invalid object before a valid one, bare and after <|python_tag|>
    ('{"name": "move_to", "parameters": {x: 1}}; {"name": "say", "parameters": {"text": "hi"}}'
     ' Done.', 'move_to', 'llama_json'),
    ('<|python_tag|>{"name": "move_to", "parameters": {x: 1}}; {"name": "say", "parameters": '
     '{"text": "hi"}}<|eom_id|> Done.', 'move_to', 'llama_json'),
    # MiniMax-M1: one invalid JSON line among valid ones
    ('<tool_calls>\n{"name": "move_to", "arguments": {x: 1}}\n{"name": "say", "arguments": '
     '{"text": "hi"}}\n</tool_calls> Done.', 'move_to', 'tool_calls_json'),
])
def test_a_good_call_survives_an_unparsable_sibling(text, name, fmt):
    result = both(text)
    assert calls(result) == [('say', {'text': 'hi'}, fmt)]
    assert [issue.name for issue in result.errors] == [name]
    assert result.errors[0].code in (UNPARSEABLE_ARGUMENTS, 'invalid_call')
    assert result.content == 'Done.'


def test_mistral_pre_v11_list_and_its_failure_mode():
    ok = both('[TOOL_CALLS] [{"arguments": {"x": 1, "y": 2}, "name": "move_to"}, '
              '{"name": "say", "arguments": {"text": "hi"}}]')
    assert calls(ok) == [('move_to', {'x': 1, 'y': 2}, 'mistral'),
                         ('say', {'text': 'hi'}, 'mistral')]
    # one broken item: the good call survives, the broken one is an issue
    salvaged = both('[TOOL_CALLS] [{"name": "say", "arguments": {"text": "hi"}}, '
                    '{"name": "move_to", "arguments": {x: 1}}] Done.')
    assert calls(salvaged) == [('say', {'text': 'hi'}, 'mistral')]
    assert codes(salvaged) == [(UNPARSEABLE_ARGUMENTS, 'move_to')]
    assert salvaged.content == 'Done.'
    # a list that cannot be read at all is one issue, and none of it stays in the content
    broken = both('Sure. [TOOL_CALLS] [{"name": "say" "arguments": {"text": "hi"}}] later')
    assert broken.calls == [] and codes(broken) == [(UNPARSEABLE_ARGUMENTS, 'say')]
    assert broken.content == 'Sure. later'


@pytest.mark.parametrize('text, fmt', [
    ('[{"name": "record_observation"}]', 'openai_json'),
    ('Looking now.\n```json\n[{"name": "record_observation"}]\n```', 'fenced_json'),
])
def test_a_json_array_call_without_arguments_is_a_call_with_empty_arguments(text, fmt):
    result = both(text)
    assert calls(result) == [('record_observation', {}, fmt)] and result.errors == []
    # without a catalog such a list is prose: {"name": "Alice"} may be any record
    assert both(text, None).calls == []


# --- 7. Reasoning and end-of-turn tokens ------------------------------------------------------

WEATHER = ToolCatalog.from_tools([
    _tool('get_current_weather', {'city': {'type': 'string'}, 'state': {'type': 'string'},
                                  'unit': {'type': 'string'}}, ['city', 'state']),
    _tool('get_weather', {'location': {'type': 'string'}, 'unit': {'type': 'string'}},
          ['location']),
])


def test_minimax_m1_calls_after_a_closed_thinking_block():
    thinking = ('<think>I should use a tool. <tool_calls>\n{"name": "ignored_tool", '
                '"arguments": {"should": "ignore"}}\n</tool_calls></think>\n\n'
                'Let me help you with the weather.')
    text = (thinking + ' <tool_calls>\n{"name": "get_current_weather", "arguments": {"city": '
            '"Miami", "state": "FL", "unit": "fahrenheit"}}\n</tool_calls>')
    result = both(text, WEATHER)
    assert calls(result) == [('get_current_weather', {'city': 'Miami', 'state': 'FL',
                                                      'unit': 'fahrenheit'}, 'tool_calls_json')]
    assert [issue.code for issue in result.errors] == [CALL_IN_REASONING]
    assert result.content == thinking  # the reasoning block stays whole, as engines return it


def test_seed_oss_calls_after_an_unlimited_thinking_budget_block():
    call = ('<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain'
            '</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>')
    thinking = ('<seed:think>\nGot it. The user asked for the weather in Barcelona, Spain. The '
                'format is ' + call + '. Wait, does the unit parameter accept "celsius"? '
                '<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>\n'
                'Let me go with that.</seed:think>')
    result = both(thinking + call, WEATHER)
    assert calls(result) == [('get_weather', {'location': 'Barcelona, Spain', 'unit': 'celsius'},
                              'seed_oss')]
    assert [issue.code for issue in result.errors] == [CALL_IN_REASONING]
    assert result.content == thinking


@pytest.mark.parametrize('text, content', [
    ('<|tool_call_start|>[say(text="hi")]<|tool_call_end|>Done.<|im_end|>', 'Done.'),
    ('Sure, nothing to do.<|im_end|>', 'Sure, nothing to do.'),
    ('Checking.<|tool_call_start|>[say(text="hi")]<|tool_call_end|><|im_end|>', 'Checking.'),
])
def test_lfm2_end_of_turn_token_never_reaches_the_content(text, content):
    result = both(text)
    for cut in range(1, len(text)):  # wherever a delta boundary falls
        streamed = stream(text, [cut], CATALOG)
        assert streamed == result and '<|im_end|>' not in streamed.content, cut
    assert result.content == content


@pytest.mark.parametrize('tail', ['<|action_end|>\n', '', '<|action_end|><|im_end|>',
                                  '<|im_end|>'])
def test_internlm2_complete_call_is_emitted_once_when_the_stream_finishes(tail):
    text = ('I will greet.<|action_start|><|plugin|>\n{"name": "say", "parameters": '
            '{"text": "hi"}}' + tail)
    for size in SIZES:
        parser = StreamingParser(CATALOG)
        events = [event for i in range(0, len(text), size)
                  for event in parser.feed(text[i:i + size])]
        events += parser.finish()
        assert [event.call.name for event in events if isinstance(event, CallEvent)] == ['say']
        assert ''.join(event.text for event in events if isinstance(event, ContentEvent)) == (
            'I will greet.'), size
    assert parser.finish() == []


def test_deepseek_section_after_an_unclosed_think_is_dispatched():
    text = ('<think>Greet the user.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>say<｜tool▁sep｜>'
            '{"text": "hi"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>')
    result = both(text)
    assert calls(result) == [('say', {'text': 'hi'}, 'deepseek')] and result.errors == []


# --- 8. GLM-4.5: an incomplete final call, a call without a recognisable name -----------------

GLM_WEATHER = ('<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Beijing'
               '</arg_value>\n')


@pytest.mark.parametrize('tail, code, content', [
    ('', TRUNCATED, 'Checking.'),  # the text ends where </tool_call> should be
    ('The weather there is mild.', UNPARSEABLE_ARGUMENTS, 'Checking.The weather there is mild.'),
    ('<|user|>', UNPARSEABLE_ARGUMENTS, 'Checking.<|user|>'),
])
def test_glm_incomplete_final_call_is_not_dispatched(tail, code, content):
    # the arguments are an open list of pairs: only </tool_call> shows they are complete
    done = '<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n'
    text = 'Checking.' + done + '</tool_call>' + GLM_WEATHER + tail
    result = both(text, WEATHER)
    assert calls(result) == [('get_weather', {'location': 'Paris'}, 'glm45')]
    assert codes(result) == [(code, 'get_weather')]
    assert result.content == content


@pytest.mark.parametrize('text', [
    'Sure.<tool_call>\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>'
    ' Done.',
    'Sure.<tool_call>12 weather!\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n'
    '</tool_call> Done.',
])
def test_glm_call_without_a_recognisable_name_is_one_issue(text):
    result = both(text, WEATHER)
    assert result.calls == [] and codes(result) == [('invalid_call', '')]
    assert result.errors[0].format == 'glm45' and 'name' in result.errors[0].message
    assert result.content == 'Sure.Done.'


def test_glm_pair_without_its_closing_tag_is_unparseable_not_truncated():
    text = ('<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n'
            '<arg_key>unit\n<arg_value>celsius</arg_value>\n</tool_call> Done.')
    result = both(text, WEATHER)
    assert result.calls == [] and codes(result) == [(UNPARSEABLE_ARGUMENTS, 'get_weather')]
    assert result.content == 'Done.'
    # a call whose </tool_call> is missing before the next call is complete (parallel calls)
    text = GLM_WEATHER + GLM_WEATHER.replace('Beijing', 'Paris') + '</tool_call>'
    assert [call.arguments for call in both(text, WEATHER).calls] == [
        {'location': 'Beijing'}, {'location': 'Paris'}]
