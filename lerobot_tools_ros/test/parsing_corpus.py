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
Shared corpus for the parser tests, the split-invariance property and the fuzz run.

Each case is a model output as users report them, with the calls, issues and content that
``parse`` must return. The same texts feed the hypothesis tests (any split of any case gives the
one-shot result) and the fuzz generator (mutations of these texts must never raise).
"""

import contextlib
from dataclasses import dataclass, field
import json
import logging
import random
import sys
from typing import Callable

from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.parsing import (CallEvent, ContentEvent, IssueEvent, parse, ParseResult,
                                       StreamingParser)


def _tool(name: str, properties: dict, required: list[str]) -> dict:
    return {'type': 'function', 'function': {
        'name': name, 'description': f'The {name} tool.',
        'parameters': {'type': 'object', 'properties': properties, 'required': required}}}


TOOLS = [
    _tool('say', {'text': {'type': 'string'}}, ['text']),
    _tool('record_observation', {'label': {'type': 'string'}, 'camera': {'type': 'string'}},
          ['label']),
    _tool('move_to', {'x': {'type': 'number'}, 'y': {'type': 'number'},
                      'speed': {'type': 'integer'}}, ['x', 'y']),
    _tool('set_gripper', {'open': {'type': 'boolean'}, 'force': {'type': ['number', 'null']}},
          ['open']),
    _tool('plan_path', {'waypoints': {'type': 'array'}, 'options': {'type': 'object'}},
          ['waypoints']),
]


def catalog() -> ToolCatalog:
    """Build the test catalog: say, record_observation, move_to, set_gripper, plan_path."""
    return ToolCatalog.from_tools(TOOLS)


def say_calls(speech: str, prose: str = '') -> dict[str, str]:
    """
    Return format family -> a message with one ``say(text=speech)`` call, after ``prose``.

    ``speech`` must need no escaping in any family (plain ASCII prose without quotes, ``<``
    or backslashes). Used by the scaling tests and ``bench/parse_bench.py``.
    """
    call = {'name': 'say', 'arguments': {'text': speech}}
    call_json = json.dumps(call)
    message_json = json.dumps({'role': 'assistant', 'content': prose.strip(), 'tool_calls': [
        {'type': 'function', 'function': call}]})
    llama_json = json.dumps({'name': 'say', 'parameters': {'text': speech}})
    mistral_json = json.dumps([call])
    args_json = json.dumps(call['arguments'])
    return {
        'lerobot_marker': f'{prose}\n<say>{speech}</say>',
        'openai_json': message_json,
        'hermes': f'{prose}\n<tool_call>\n{call_json}\n</tool_call>',
        'llama_json': f'{prose}<|python_tag|>{llama_json}',
        'pythonic': f'{prose}[say(text="{speech}")]',
        'mistral': f'{prose}[TOOL_CALLS]{mistral_json}',
        'qwen3_coder_xml': f'{prose}\n<tool_call>\n<function=say>\n<parameter=text>\n{speech}\n'
                           '</parameter>\n</function>\n</tool_call>',
        'fenced_json': f'{prose}\n```json\n{call_json}\n```',
        'deepseek': f'{prose}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>say<｜tool▁sep｜>'
                    f'{args_json}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        'kimi_k2': f'{prose}<|tool_calls_section_begin|><|tool_call_begin|>functions.say:0'
                   f'<|tool_call_argument_begin|>{args_json}<|tool_call_end|>'
                   '<|tool_calls_section_end|>',
        'glm45': f'{prose}\n<tool_call>say\n<arg_key>text</arg_key>\n<arg_value>{speech}'
                 '</arg_value>\n</tool_call>',
        'harmony': f'<|channel|>final<|message|>{prose}<|end|><|start|>assistant<|channel|>'
                   f'commentary to=functions.say <|constrain|>json<|message|>'
                   f'{args_json}<|call|>',
        'minimax_m2': f'{prose}\n<minimax:tool_call>\n<invoke name="say">\n<parameter name="text">'
                      f'{speech}</parameter>\n</invoke>\n</minimax:tool_call>',
        'tool_calls_json': f'{prose}\n<tool_calls>[{call_json}]</tool_calls>',
        'seed_oss': f'{prose}<seed:tool_call>\n<function=say>\n<parameter=text>\n{speech}\n'
                    '</parameter>\n</function>\n</seed:tool_call>',
        'step3': f'{prose}<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>'
                 f'<steptml:invoke name="say"><steptml:parameter name="text">{speech}'
                 '</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
        'granite': f'{prose}<|tool_call|>[{call_json}]',
        'gemma': f'{prose}<start_function_call>call:say{{text:<escape>{speech}<escape>}}'
                 '<end_function_call>',
        'phi4_mini': f'{prose}functools[{call_json}]',
        'internlm': f'{prose}<|action_start|><|plugin|>\n{llama_json}<|action_end|>',
        'cohere': f'{prose}<|START_ACTION|>[{{"tool_call_id": "0", "tool_name": "say", '
                  f'"parameters": {args_json}}}]<|END_ACTION|>',
        'longcat': f'{prose}<longcat_tool_call>{call_json}</longcat_tool_call>',
        'hunyuan': f'{prose}\n<tool_calls>\n<tool_call>say<tool_sep>\n<arg_key>text</arg_key>\n'
                   f'<arg_value>{speech}</arg_value>\n</tool_call>\n</tool_calls>',
        'deepseek_dsml': f'{prose}\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="say">\n'
                         f'<｜DSML｜parameter name="text" string="true">{speech}</｜DSML｜parameter>\n'
                         '</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    }


@dataclass
class Case:
    """One model output and what ``parse`` must return for it."""

    id: str  # noqa: A003
    text: str
    calls: list = field(default_factory=list)  # (name, arguments, format)
    errors: list = field(default_factory=list)  # (code, name)
    content: str = ''
    with_catalog: bool = True


SAY_HI = {'text': 'hi'}
H = 'hermes'
M = 'lerobot_marker'
O = 'openai_json'  # noqa: E741
L = 'llama_json'
P = 'pythonic'
MI = 'mistral'
Q = 'qwen3_coder_xml'
F = 'fenced_json'
DS = 'deepseek'
KI = 'kimi_k2'
G = 'glm45'
HA = 'harmony'
MM = 'minimax_m2'
TC = 'tool_calls_json'
SE = 'seed_oss'
ST = 'step3'
GR = 'granite'
GE = 'gemma'
PH = 'phi4_mini'
IN = 'internlm'
CO = 'cohere'
LC = 'longcat'
HY = 'hunyuan'
DD = 'deepseek_dsml'

CASES = [
    # --- LeRobot marker
    Case('marker_plan', 'Pick the cube.\n<say>On it.</say>', [('say', {'text': 'On it.'}, M)],
         content='Pick the cube.'),
    Case('marker_no_catalog', 'Pick the cube.\n<say>On it.</say>',
         [('say', {'text': 'On it.'}, M)], content='Pick the cube.', with_catalog=False),
    Case('marker_catalog_tool', 'Look.\n<record_observation>red cup</record_observation>',
         [('record_observation', {'label': 'red cup'}, M)], content='Look.'),
    Case('marker_tool_needs_catalog', 'Look.\n<record_observation>red cup</record_observation>',
         content='Look.\n<record_observation>red cup</record_observation>', with_catalog=False),
    Case('marker_newlines_kept_inside', '<say>\nLine one.\nLine two.\n</say>',
         [('say', {'text': 'Line one.\nLine two.'}, M)]),
    Case('marker_only_single_string_tools', '<b>bold</b> and <move_to>1, 2</move_to>',
         content='<b>bold</b> and <move_to>1, 2</move_to>'),
    Case('marker_two_with_prose', 'First.\n<say>One.</say>\nThen.\n<say>Two.</say>\n',
         [('say', {'text': 'One.'}, M), ('say', {'text': 'Two.'}, M)],
         content='First.\nThen.'),
    # --- OpenAI / LeRobot JSON
    Case('openai_message',
         '{"role": "assistant", "content": "Let me check.", "tool_calls": [{"type": '
         '"function", "function": {"name": "say", "arguments": {"text": "hi"}}}]}',
         [('say', SAY_HI, O)], content='Let me check.'),
    Case('openai_tool_calls_string_args',
         '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "move_to", '
         '"arguments": "{\\"x\\": 1.5, \\"y\\": -2}"}}]}',
         [('move_to', {'x': 1.5, 'y': -2}, O)]),
    Case('openai_bare_list',
         'Doing both: [{"type": "function", "function": {"name": "say", "arguments": '
         '{"text": "hi"}}}, {"type": "function", "function": {"name": "record_observation", '
         '"arguments": {"label": "cup"}}}] done.',
         [('say', SAY_HI, O), ('record_observation', {'label': 'cup'}, O)],
         content='Doing both: done.'),
    Case('openai_name_arguments_object',
         'Sure. {"name": "say", "arguments": {"text": "hi"}} Anything else?',
         [('say', SAY_HI, O)], content='Sure. Anything else?'),
    Case('openai_no_catalog_any_name', '{"name": "wave", "arguments": {"hand": "left"}}',
         [('wave', {'hand': 'left'}, O)], with_catalog=False),
    Case('json_that_is_not_a_call', 'Config: {"speed": 3, "name": "fast"} ok',
         content='Config: {"speed": 3, "name": "fast"} ok'),
    # --- Hermes / Qwen2.5
    Case('hermes_one', '<tool_call>\n{"name": "say", "arguments": {"text": "hi"}}\n</tool_call>',
         [('say', SAY_HI, H)]),
    Case('hermes_parallel_last_unclosed',
         'Two things.\n<tool_call>{"name": "say", "arguments": {"text": "hi"}}</tool_call>\n'
         '<tool_call>{"name": "record_observation", "arguments": {"label": "cup"}}',
         [('say', SAY_HI, H), ('record_observation', {'label': 'cup'}, H)],
         content='Two things.'),
    Case('hermes_closing_tag_in_argument',
         '<tool_call>{"name": "say", "arguments": {"text": "use </tool_call> tags"}}'
         '</tool_call>', [('say', {'text': 'use </tool_call> tags'}, H)]),
    Case('hermes_python_literal',
         "<tool_call>{'name': 'set_gripper', 'arguments': {'open': True, 'force': None}}"
         '</tool_call>', [('set_gripper', {'open': True, 'force': None}, H)]),
    Case('hermes_parameters_key',
         '<tool_call>{"name": "say", "parameters": {"text": "hi"}}</tool_call>',
         [('say', SAY_HI, H)]),
    Case('hermes_pythonic_body', '<tool_call>say(text="hi")</tool_call>', [('say', SAY_HI, H)]),
    # --- Llama 3.x JSON
    Case('llama_python_tag', '<|python_tag|>{"name": "say", "parameters": {"text": "hi"}}',
         [('say', SAY_HI, L)]),
    Case('llama_semicolons',
         '<|python_tag|>{"name": "say", "parameters": {"text": "hi"}}; {"name": "move_to", '
         '"parameters": {"x": 1, "y": 2}}<|eom_id|>',
         [('say', SAY_HI, L), ('move_to', {'x': 1, 'y': 2}, L)]),
    Case('llama_bare_parameters', 'Okay.\n{"name": "say", "parameters": {"text": "hi"}}',
         [('say', SAY_HI, L)], content='Okay.'),
    Case('llama_builtin_call', '<|python_tag|>brave_search.call(query="weather")',
         [('brave_search', {'query': 'weather'}, L)], with_catalog=False),
    # --- pythonic
    Case('pythonic_list', '[say(text="hi"), record_observation(label="cup", camera="front")]',
         [('say', SAY_HI, P), ('record_observation', {'label': 'cup', 'camera': 'front'}, P)]),
    Case('pythonic_bare_catalog_name', 'I will say(text="hi") now.', [('say', SAY_HI, P)],
         content='I will now.'),
    Case('pythonic_bare_needs_catalog', 'I will say(text="hi") now.',
         content='I will say(text="hi") now.', with_catalog=False),
    Case('pythonic_positional_from_catalog', 'move_to(0.5, 1)',
         [('move_to', {'x': 0.5, 'y': 1}, P)]),
    Case('pythonic_json_constants',
         '[set_gripper(open=true, force=null), plan_path(waypoints=[[0, 1], (2, 3)], '
         'options={"fast": False})]',
         [('set_gripper', {'open': True, 'force': None}, P),
          ('plan_path', {'waypoints': [[0, 1], [2, 3]], 'options': {'fast': False}}, P)]),
    Case('pythonic_prose_parentheses', 'The essay(draft) and (say) [1, 2] stay prose.',
         content='The essay(draft) and (say) [1, 2] stay prose.'),
    Case('pythonic_llama4_wrapper', '<|python_start|>[say(text="hi")]<|python_end|>',
         [('say', SAY_HI, P)]),
    # --- Mistral
    Case('mistral_list', '[TOOL_CALLS][{"name": "say", "arguments": {"text": "hi"}}, '
         '{"name": "move_to", "arguments": {"x": 1, "y": 2}}]',
         [('say', SAY_HI, MI), ('move_to', {'x': 1, 'y': 2}, MI)]),
    Case('mistral_name_args', '[TOOL_CALLS]say{"text": "hi"}', [('say', SAY_HI, MI)]),
    Case('mistral_args_token', 'Ok.[TOOL_CALLS]say[ARGS]{"text": "hi"}[TOOL_CALLS]move_to'
         '[CALL_ID]a1b2[ARGS]{"x": 1, "y": 2}',
         [('say', SAY_HI, MI), ('move_to', {'x': 1, 'y': 2}, MI)], content='Ok.'),
    # --- Qwen3-Coder XML
    Case('qwen3_typed_from_catalog',
         '<tool_call>\n<function=move_to>\n<parameter=x>\n1.5\n</parameter>\n<parameter=y>\n'
         '-2\n</parameter>\n<parameter=speed>\n3\n</parameter>\n</function>\n</tool_call>',
         [('move_to', {'x': 1.5, 'y': -2, 'speed': 3}, Q)]),
    Case('qwen3_string_verbatim',
         '<tool_call>\n<function=say>\n<parameter=text>\n  Two\nlines  \n</parameter>\n'
         '</function>\n</tool_call>', [('say', {'text': '  Two\nlines  '}, Q)]),
    Case('qwen3_bool_object_array',
         '<function=set_gripper>\n<parameter=open>\nTrue\n</parameter>\n<parameter=force>\n'
         'null\n</parameter>\n</function>\n<function=plan_path>\n<parameter=waypoints>\n'
         '[[0, 1], [2, 3]]\n</parameter>\n<parameter=options>\n{"fast": true}\n</parameter>\n'
         '</function>',
         [('set_gripper', {'open': True, 'force': None}, Q),
          ('plan_path', {'waypoints': [[0, 1], [2, 3]], 'options': {'fast': True}}, Q)]),
    Case('qwen3_missing_parameter_close',
         '<tool_call><function=record_observation><parameter=label>cup<parameter=camera>front'
         '</function></tool_call>',
         [('record_observation', {'label': 'cup', 'camera': 'front'}, Q)]),
    Case('qwen3_no_catalog_strings',
         '<tool_call>\n<function=move_to>\n<parameter=x>\n1.5\n</parameter>\n</function>\n'
         '</tool_call>', [('move_to', {'x': '1.5'}, Q)], with_catalog=False),
    Case('qwen3_nested_call_and_schema_tags_in_a_value',
         'Saving.\n<tool_call>\n<function=say>\n<parameter=text>\nExample: <tool_call>'
         '<function=say><parameter=text>hi</parameter></function></tool_call> and '
         '</parameter>\n<parameter=voice>\nloud\n</parameter>\n</parameter>\n</function>\n'
         '</tool_call>',
         [('say', {'text': 'Example: <tool_call><function=say><parameter=text>hi</parameter>'
                           '</function></tool_call> and </parameter>\n<parameter=voice>\n'
                           'loud\n</parameter>'}, Q)],
         content='Saving.'),
    # --- fenced JSON
    Case('fenced_json', 'Here:\n```json\n{"name": "say", "arguments": {"text": "hi"}}\n```\nDone.',
         [('say', SAY_HI, F)], content='Here:\nDone.'),
    Case('fenced_tool_calls', '```\n{"tool_calls": [{"type": "function", "function": {"name": '
         '"say", "arguments": "{\\"text\\": \\"hi\\"}"}}]}\n```', [('say', SAY_HI, F)]),
    Case('fenced_code_stays', 'Example:\n```json\n{"speed": 3}\n```\n',
         content='Example:\n```json\n{"speed": 3}\n```\n'),
    Case('fenced_hermes_inside', '```\n<tool_call>{"name": "say", "arguments": {"text": "hi"}}'
         '</tool_call>\n```', [('say', SAY_HI, H)], content='```\n```'),
    # --- failure modes
    Case('prose_between_mixed_formats',
         'Plan: look first.\n<say>Looking.</say>\nThen save it:\n[record_observation('
         'label="cup")]\nAnd report.\n<tool_call>{"name": "say", "arguments": {"text": "Saved."}}'
         '</tool_call>\nBye.',
         [('say', {'text': 'Looking.'}, M), ('record_observation', {'label': 'cup'}, P),
          ('say', {'text': 'Saved.'}, H)],
         content='Plan: look first.\nThen save it:\nAnd report.\nBye.'),
    Case('double_encoded_arguments',
         '<tool_call>{"name": "say", "arguments": "\\"{\\\\\\"text\\\\\\": \\\\\\"hi\\\\\\"}\\""}'
         '</tool_call>', [('say', SAY_HI, H)]),
    Case('single_quoted_arguments_string',
         '{"name": "say", "arguments": "{\'text\': \'hi\'}"}', [('say', SAY_HI, O)]),
    Case('trailing_comma_repaired_by_ast',
         '<tool_call>{"name": "say", "arguments": {"text": "hi",},}</tool_call>',
         [('say', SAY_HI, H)]),
    Case('unknown_tool', '<tool_call>{"name": "sya", "arguments": {"text": "hi"}}</tool_call>',
         errors=[('unknown_tool', 'sya')]),
    Case('unknown_and_known', '[say(text="hi"), dance(style="waltz")]', [('say', SAY_HI, P)],
         errors=[('unknown_tool', 'dance')]),
    Case('truncated_hermes', 'Working.\n<tool_call>{"name": "say", "arguments": {"text": "hel',
         errors=[('truncated', 'say')], content='Working.'),
    Case('truncated_marker', 'Working.\n<say>I am sayi', errors=[('truncated', 'say')],
         content='Working.'),
    Case('truncated_after_complete', '<say>One.</say>\n[move_to(x=1, y=',
         [('say', {'text': 'One.'}, M)], errors=[('truncated', 'move_to')]),
    Case('truncated_qwen3', '<tool_call>\n<function=say>\n<parameter=text>\nhel',
         errors=[('truncated', 'say')]),
    Case('truncated_mistral', '[TOOL_CALLS][{"name": "say", "arguments": {"text": "h',
         errors=[('truncated', 'say')]),
    Case('truncated_json', 'Sure: {"name": "move_to", "arguments": {"x": 1',
         errors=[('truncated', 'move_to')], content='Sure:'),
    Case('unparseable_hermes',
         '<tool_call>{"name": "say", "arguments": {"text": "hi"</tool_call> after',
         errors=[('unparseable_arguments', 'say')], content='after'),
    Case('arguments_not_an_object', '<tool_call>{"name": "say", "arguments": [1, 2]}</tool_call>',
         errors=[('invalid_call', 'say')]),
    Case('empty_tool_call', 'Hmm. <tool_call></tool_call> ok', errors=[('invalid_call', '')],
         content='Hmm. ok'),
    Case('name_not_a_string', '<tool_call>{"name": 5, "arguments": {}}</tool_call>',
         errors=[('invalid_call', '')]),
    Case('recovery_pythonic_broken_sibling', 'Both: [say(text="hi"), move_to(x=1,, y=2)] ok',
         [('say', SAY_HI, P)], [('unparseable_arguments', 'move_to')], content='Both: ok'),
    Case('recovery_llama_invalid_then_valid',
         '<|python_tag|>{"name": "move_to", "parameters": {x: 1}}; {"name": "say", '
         '"parameters": {"text": "hi"}}', [('say', SAY_HI, L)],
         [('unparseable_arguments', 'move_to')]),
    Case('recovery_minimax_m1_invalid_line',
         '<tool_calls>\n{"name": "say", "arguments": {"text": "hi"}}\n{bad json}\n'
         '{"name": "record_observation", "arguments": {"label": "cup"}}\n</tool_calls>',
         [('say', SAY_HI, TC), ('record_observation', {'label': 'cup'}, TC)],
         [('unparseable_arguments', '')]),
    Case('json_array_zero_argument_catalog_call', 'Now: [{"name": "record_observation"}]',
         [('record_observation', {}, O)], content='Now:'),
    Case('pythonic_non_literal', '[say(text=open("/etc/passwd").read())]',
         errors=[('invalid_call', 'say')]),
    Case('empty_input', ''),
    Case('only_whitespace', ' \n\t ', content=' \n\t '),
    Case('plain_prose', 'Nothing to do here; the cube is already in the bin.\n',
         content='Nothing to do here; the cube is already in the bin.\n'),
    Case('lone_surrogate_argument', '<say>bad \ud800 text</say>',
         [('say', {'text': 'bad \ud800 text'}, M)]),
    # --- DeepSeek V3 / R1 (function + fenced JSON), V3.1 (NAME<sep>JSON); V3.2 DSML
    Case('deepseek_v3_fenced',
         '<think>The user wants a greeting.</think>\n\nI will greet.<｜tool▁calls▁begin｜>'
         '<｜tool▁call▁begin｜>function<｜tool▁sep｜>say\n```json\n{"text": "Grüß dich 👋"}\n```'
         '<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
         [('say', {'text': 'Grüß dich 👋'}, DS)],
         content='<think>The user wants a greeting.</think>\n\nI will greet.'),
    Case('deepseek_v31_two_calls',
         '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>move_to<｜tool▁sep｜>{"x": 1.5, "y": -2}'
         '<｜tool▁call▁end｜><｜tool▁call▁begin｜>say<｜tool▁sep｜>{"text": "line\\nnext \\"q\\""}'
         '<｜tool▁call▁end｜><｜tool▁calls▁end｜>\nMoving now.',
         [('move_to', {'x': 1.5, 'y': -2}, DS), ('say', {'text': 'line\nnext "q"'}, DS)],
         content='Moving now.'),
    Case('deepseek_v31_truncated',
         'Ok.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>say<｜tool▁sep｜>{"text": "hel',
         errors=[('truncated', 'say')], content='Ok.'),
    Case('deepseek_v32_dsml',
         'Sure.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="move_to">\n'
         '<｜DSML｜parameter name="x" string="false">0.5</｜DSML｜parameter>\n'
         '<｜DSML｜parameter name="y" string="false">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
         '<｜DSML｜invoke name="say">\n<｜DSML｜parameter name="text" string="true">'
         '{not json} & <b></｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
         [('move_to', {'x': 0.5, 'y': 1}, DD), ('say', {'text': '{not json} & <b>'}, DD)],
         content='Sure.'),
    Case('deepseek_v4_dsml_json_body',
         'On it.\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="move_to">\n{"x": 1, "y": 2}\n'
         '</｜DSML｜invoke>\n<｜DSML｜invoke name="say">\n<｜DSML｜parameter name="text" '
         'string="true">\n two \n</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
         [('move_to', {'x': 1, 'y': 2}, DD), ('say', {'text': '\n two \n'}, DD)],
         content='On it.'),
    # --- Kimi K2
    Case('kimi_k2_section',
         'Let me do both.\n<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.say:0'
         '<|tool_call_argument_begin|>{"text": "你好"}<|tool_call_end|>\n<|tool_call_begin|>'
         'functions.record_observation:1<|tool_call_argument_begin|>{"label": "cup"}'
         '<|tool_call_end|>\n<|tool_calls_section_end|>\nThe weather is next.',
         [('say', {'text': '你好'}, KI), ('record_observation', {'label': 'cup'}, KI)],
         content='Let me do both.\nThe weather is next.'),
    Case('kimi_k2_noise_stray_tokens_after_unclosed_think',
         '<think>Greet first. <|tool_calls_section_begin|> noise <|tool_call_begin|>'
         'functions.say:0 <|tool_call_argument_begin|>{"text": "hi"}<|tool_call_end|>'
         '<|tool_calls_section_end|>'
         '<|tool_call_end|> Then <|tool_call_argument_begin|>wait.',
         [('say', SAY_HI, KI)], content='<think>Greet first. Then wait.'),
    Case('kimi_k2_unknown_tool',
         '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
         '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
         '<|tool_calls_section_end|>', errors=[('unknown_tool', 'get_weather')]),
    # --- GLM-4.5 / 4.6 (newlines) and 4.7 (none)
    Case('glm45_typed',
         '<think>Need to move.</think>\nMoving.\n<tool_call>move_to\n<arg_key>x</arg_key>\n'
         '<arg_value>1.5</arg_value>\n<arg_key>y</arg_key>\n<arg_value>-2</arg_value>\n'
         '</tool_call>',
         [('move_to', {'x': 1.5, 'y': -2}, G)],
         content='<think>Need to move.</think>\nMoving.'),
    Case('glm47_compact_two',
         '<tool_call>say<arg_key>text</arg_key><arg_value>a "quote" & </arg_value></tool_call>'
         '<tool_call>set_gripper<arg_key>open</arg_key><arg_value>true</arg_value></tool_call>'
         'Done.',
         [('say', {'text': 'a "quote" & '}, G), ('set_gripper', {'open': True}, G)],
         content='Done.'),
    Case('glm_calls_between_reasoning',
         '<think>First greet.</think><tool_call>say<arg_key>text</arg_key><arg_value>hi'
         '</arg_value></tool_call><think>Now move.</think>\n<tool_call>move_to<arg_key>x'
         '</arg_key><arg_value>1</arg_value><arg_key>y</arg_key><arg_value>2</arg_value>'
         '</tool_call>',
         [('say', SAY_HI, G), ('move_to', {'x': 1, 'y': 2}, G)],
         content='<think>First greet.</think><think>Now move.</think>'),
    Case('glm_incomplete_final_call_and_nameless_call',
         'Moving.<tool_call>move_to<arg_key>x</arg_key><arg_value>1</arg_value><arg_key>y'
         '</arg_key><arg_value>2</arg_value></tool_call><tool_call><arg_key>text</arg_key>'
         '<arg_value>hi</arg_value></tool_call><tool_call>say<arg_key>text</arg_key><arg_value>'
         'done</arg_value>\nThat is all.',
         [('move_to', {'x': 1, 'y': 2}, G)],
         [('invalid_call', ''), ('unparseable_arguments', 'say')],
         content='Moving.That is all.'),
    Case('glm_truncated', '<tool_call>say<arg_key>text</arg_key><arg_value>hel',
         errors=[('truncated', 'say')]),
    # --- gpt-oss harmony
    Case('harmony_call',
         '<|channel|>analysis<|message|>User wants a greeting. Call say.<|end|>'
         '<|start|>assistant<|channel|>commentary to=functions.say <|constrain|>json<|message|>'
         '{"text": "Hello \\u00e9"}<|call|>',
         [('say', {'text': 'Hello é'}, HA)]),
    Case('harmony_final_and_call',
         '<|channel|>commentary to=functions.move_to json<|message|>{"x": 1, "y": 2}<|call|>'
         '<|start|>assistant<|channel|>final<|message|>Moving to the table.<|return|>',
         [('move_to', {'x': 1, 'y': 2}, HA)], content='Moving to the table.'),
    Case('harmony_calls_between_analysis',
         '<|channel|>analysis<|message|>Greet first.<|end|><|start|>assistant<|channel|>'
         'commentary to=functions.say<|message|>{"text": "hi"}<|call|><|start|>assistant'
         '<|channel|>analysis<|message|>Then move.<|end|><|start|>assistant<|channel|>'
         'commentary to=functions.move_to <|constrain|>json<|message|>{"x": 1, "y": 2}<|call|>',
         [('say', SAY_HI, HA), ('move_to', {'x': 1, 'y': 2}, HA)]),
    # --- MiniMax-M2 / M1
    Case('minimax_m2_two_invokes',
         '<think>\nTwo calls.\n</think>\n\n<minimax:tool_call>\n<invoke name="move_to">\n'
         '<parameter name="x">1</parameter>\n<parameter name="y">2.5</parameter>\n</invoke>\n'
         '<invoke name="say">\n<parameter name="text">Ça va</parameter>\n</invoke>\n'
         '</minimax:tool_call>',
         [('move_to', {'x': 1, 'y': 2.5}, MM), ('say', {'text': 'Ça va'}, MM)],
         content='<think>\nTwo calls.\n</think>'),
    Case('minimax_m1_lines',
         'Doing it.\n<tool_calls>\n{"name": "say", "arguments": {"text": "hi"}}\n'
         '{"name": "move_to", "arguments": {"x": 1, "y": 2}}\n</tool_calls>',
         [('say', SAY_HI, TC), ('move_to', {'x': 1, 'y': 2}, TC)], content='Doing it.'),
    # --- Jamba / Hunyuan: <tool_calls>[...]</tool_calls>
    Case('jamba_list',
         '<tool_calls>[{"name": "say", "arguments": {"text": "hi"}}, '
         '{"name": "record_observation", "arguments": {"label": "cup"}}]</tool_calls>',
         [('say', SAY_HI, TC), ('record_observation', {'label': 'cup'}, TC)]),
    Case('hunyuan_answer',
         '<think>plan</think>\n<answer>\n<tool_calls>[{"name": "say", "arguments": {"text": '
         '"hi"}}]</tool_calls>\n</answer>',
         [('say', SAY_HI, TC)], content='<think>plan</think>\n<answer>\n</answer>'),
    # --- Hunyuan's second format (HY v3): <tool_call>NAME<tool_sep> + GLM-like pairs
    Case('hunyuan_v3_two',
         'Moving, then saying it.\n<tool_calls>\n<tool_call>move_to<tool_sep>\n<arg_key>x'
         '</arg_key>\n<arg_value>1.5</arg_value>\n<arg_key>y</arg_key>\n<arg_value>-2'
         '</arg_value>\n</tool_call>\n<tool_call>say<tool_sep>\n<arg_key>text</arg_key>\n'
         '<arg_value>Ça va, "ok" \\n</arg_value>\n</tool_call>\n</tool_calls>\nDone.',
         [('move_to', {'x': 1.5, 'y': -2}, HY), ('say', {'text': 'Ça va, "ok" \\n'}, HY)],
         content='Moving, then saying it.\nDone.'),
    Case('hunyuan_v3_typed_no_section_end',
         '<tool_calls><tool_call>set_gripper<tool_sep><arg_key>open</arg_key><arg_value>true'
         '</arg_value><arg_key>force</arg_key><arg_value>null</arg_value></tool_call>',
         [('set_gripper', {'open': True, 'force': None}, HY)]),
    Case('hunyuan_v3_zero_arguments_bare',
         'Looking.<tool_call>record_observation<tool_sep></tool_call>',
         [('record_observation', {}, HY)], content='Looking.'),
    Case('hunyuan_v4_no_separator',
         'On it.<tool_calls>\n<tool_call>move_to<arg_key>x</arg_key><arg_value>1</arg_value>'
         '<arg_key>y</arg_key><arg_value>2.5</arg_value></tool_call>\n<tool_call>'
         'record_observation</tool_call>\n</tool_calls>',
         [('move_to', {'x': 1, 'y': 2.5}, HY), ('record_observation', {}, HY)],
         content='On it.'),
    Case('hunyuan_v3_truncated',
         '<tool_calls><tool_call>say<tool_sep><arg_key>text</arg_key><arg_value>hel',
         errors=[('truncated', 'say')]),
    # --- Seed-OSS
    Case('seed_oss',
         '<seed:think>Greet first.</seed:think>Sure.<seed:tool_call>\n<function=say>\n'
         '<parameter=text>hi</parameter>\n</function>\n</seed:tool_call>',
         [('say', SAY_HI, SE)], content='<seed:think>Greet first.</seed:think>Sure.'),
    # --- Step-3
    Case('step3',
         'Ok.<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜>'
         '<steptml:invoke name="move_to">\n<steptml:parameter name="x">3</steptml:parameter>\n'
         '<steptml:parameter name="y">4</steptml:parameter>\n</steptml:invoke>'
         '<｜tool_call_end｜>\n<｜tool_calls_end｜>',
         [('move_to', {'x': 3, 'y': 4}, ST)], content='Ok.'),
    Case('step3_parallel_exact_strings',
         '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>say\n<steptml:invoke '
         'name="say"><steptml:parameter name="text">\n  indented\n</steptml:parameter>'
         '</steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜><steptml:invoke '
         'name="set_gripper"><steptml:parameter name="open"> true </steptml:parameter>'
         '</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜> Done.',
         [('say', {'text': '\n  indented\n'}, ST), ('set_gripper', {'open': True}, ST)],
         content='Done.'),
    # --- Granite
    Case('granite_tool_call',
         '<|tool_call|>[{"name": "say", "arguments": {"text": "hi"}}, {"name": "move_to", '
         '"arguments": {"x": 0, "y": 0}}]',
         [('say', SAY_HI, GR), ('move_to', {'x': 0, 'y': 0}, GR)]),
    Case('granite_function_call',
         'Calling. <function_call> {"name": "say", "arguments": {"text": "hi"}}',
         [('say', SAY_HI, GR)], content='Calling.'),
    # --- Gemma: FunctionGemma tokens, Gemma 3 tool_code
    Case('functiongemma_two',
         '<start_function_call>call:move_to{x:1.5,y:-2,speed:3}<end_function_call>'
         '<start_function_call>call:say{text:<escape>a, {b}: "c"<escape>}<end_function_call>',
         [('move_to', {'x': 1.5, 'y': -2, 'speed': 3}, GE),
          ('say', {'text': 'a, {b}: "c"'}, GE)]),
    Case('functiongemma_nested',
         '<start_function_call>call:plan_path{waypoints:[[0,1],[2,3]],options:{fast:true,'
         'mode:<escape>safe<escape>}}<end_function_call>',
         [('plan_path', {'waypoints': [[0, 1], [2, 3]],
                         'options': {'fast': True, 'mode': 'safe'}}, GE)]),
    Case('gemma_tool_code', 'Let me greet.\n```tool_code\nprint(say(text="hi"))\n```',
         [('say', SAY_HI, GE)], content='Let me greet.'),
    # --- Phi-4-mini, InternLM2, Cohere, LongCat, xLAM
    Case('phi4_functools',
         'functools[{"name": "say", "arguments": {"text": "hi"}}, {"name": "move_to", '
         '"arguments": {"x": 1, "y": 2}}]',
         [('say', SAY_HI, PH), ('move_to', {'x': 1, 'y': 2}, PH)]),
    Case('internlm_plugin',
         'I will greet.<|action_start|><|plugin|>\n{"name": "say", "parameters": {"text": "hi"}}'
         '<|action_end|>\n', [('say', SAY_HI, IN)], content='I will greet.'),
    Case('cohere_action_tokens',
         '<|START_THINKING|>Greet.<|END_THINKING|><|START_ACTION|>[\n{"tool_call_id": "0", '
         '"tool_name": "say", "parameters": {"text": "hi"}}\n]<|END_ACTION|>',
         [('say', SAY_HI, CO)], content='<|START_THINKING|>Greet.<|END_THINKING|>'),
    Case('cohere_r_plain',
         'Plan: I will greet.\nAction: ```json\n[\n    {\n        "tool_name": "say",\n'
         '        "parameters": {"text": "hi"}\n    }\n]\n```',
         [('say', SAY_HI, CO)], content='Plan: I will greet.'),
    Case('longcat',
         '<longcat_tool_call>{"name": "say", "arguments": {"text": "hi"}}</longcat_tool_call>'
         'Said it.', [('say', SAY_HI, LC)], content='Said it.'),
    Case('xlam_json_list',
         '[{"name": "say", "arguments": {"text": "hi"}}, {"name": "move_to", "arguments": '
         '{"x": 1, "y": 2}}]', [('say', SAY_HI, O), ('move_to', {'x': 1, 'y': 2}, O)]),
    Case('xlam_fenced', '```json\n[{"name": "say", "arguments": {"text": "hi"}}]\n```',
         [('say', SAY_HI, F)]),
    # --- calls inside reasoning spans: reported (call_in_reasoning), never dispatched; the
    # span stays in the content verbatim, its call markup included
    Case('think_call_inside',
         '<think>I could <say>hi</say> first.</think>\nSaying it.\n<say>Hello.</say>',
         [('say', {'text': 'Hello.'}, M)], [('call_in_reasoning', 'say')],
         content='<think>I could <say>hi</say> first.</think>\nSaying it.'),
    Case('think_unclosed_at_the_end',
         'Sure.\n<think>Maybe <tool_call>{"name": "say", "arguments": {"text": "x"}}</tool_call>'
         ' later', errors=[('call_in_reasoning', 'say')],
         content='Sure.\n<think>Maybe <tool_call>{"name": "say", "arguments": {"text": "x"}}'
         '</tool_call> later'),
    Case('think_r1_then_call',
         '<think>\nGreet the user.\n</think>\n\n<tool_call>\n{"name": "say", "arguments": '
         '{"text": "hi"}}\n</tool_call>', [('say', SAY_HI, H)],
         content='<think>\nGreet the user.\n</think>'),
    Case('think_closing_token_inside_a_value',
         '<think><tool_call>{"name": "say", "arguments": {"text": "</think>"}}</tool_call>',
         errors=[('call_in_reasoning', 'say')],
         content='<think><tool_call>{"name": "say", "arguments": {"text": "</think>"}}'
         '</tool_call>'),
    Case('think_qwen3_coder',
         '<think>Option: <function=move_to><parameter=x>1</parameter><parameter=y>2</parameter>'
         '</function></think><function=say><parameter=text>hi</parameter></function>',
         [('say', SAY_HI, Q)], [('call_in_reasoning', 'move_to')],
         content='<think>Option: <function=move_to><parameter=x>1</parameter><parameter=y>2'
         '</parameter></function></think>'),
    Case('think_bare_pythonic_and_unknown_tool',
         '<think>say(text="a") and [get_weather(city="x")]</think>ok',
         errors=[('call_in_reasoning', 'say'), ('call_in_reasoning', 'get_weather')],
         content='<think>say(text="a") and [get_weather(city="x")]</think>ok'),
    Case('seed_think_call',
         '<seed:think>Try <seed:tool_call><function=say><parameter=text>x</parameter></function>'
         '</seed:tool_call></seed:think>Done.', errors=[('call_in_reasoning', 'say')],
         content='<seed:think>Try <seed:tool_call><function=say><parameter=text>x</parameter>'
         '</function></seed:tool_call></seed:think>Done.'),
    Case('cohere_thinking_call',
         '<|START_THINKING|>Plan: <|START_ACTION|>[{"tool_name": "say", "parameters": {"text": '
         '"x"}}]<|END_ACTION|><|END_THINKING|><|START_ACTION|>[{"tool_name": "say", '
         '"parameters": {"text": "hi"}}]<|END_ACTION|>',
         [('say', SAY_HI, CO)], [('call_in_reasoning', 'say')],
         content='<|START_THINKING|>Plan: <|START_ACTION|>[{"tool_name": "say", "parameters": '
         '{"text": "x"}}]<|END_ACTION|><|END_THINKING|>'),
    Case('magistral_think',
         '[THINK]Maybe [TOOL_CALLS]say{"text": "x"}[/THINK][TOOL_CALLS]say{"text": "hi"}',
         [('say', SAY_HI, MI)], [('call_in_reasoning', 'say')],
         content='[THINK]Maybe [TOOL_CALLS]say{"text": "x"}[/THINK]'),
    Case('harmony_analysis_call',
         '<|channel|>analysis<|message|>I might write <say>x</say> here.<|end|><|start|>assistant'
         '<|channel|>commentary to=functions.say<|message|>{"text": "hi"}<|call|>',
         [('say', SAY_HI, HA)], [('call_in_reasoning', 'say')]),
    Case('lone_surrogate_prose', '\udcff<tool_call>{"name": "say", "arguments": {"text": "hi"}}',
         [('say', SAY_HI, H)], content='\udcff'),
]


class _GuardFired(logging.Handler):
    """Turn the parser's last-resort guard (an error record) into a test failure."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            exc = getattr(record, 'parser_exception', None)
            raise AssertionError(f'the parser guard fired: {record.getMessage()}') from exc


@contextlib.contextmanager
def guard_fails():
    """
    Make the parser's "never raises" guard fail the test instead of hiding a crash.

    ``parse``/``StreamingParser`` turn any internal exception into an issue and log it at error
    level; inside this block that log record raises AssertionError (chained to the exception).
    """
    logger = logging.getLogger('lerobot_tools_ros.parsing')
    handler = _GuardFired(logging.ERROR)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def operations(run: Callable[[], object]) -> int:
    """
    Count the Python and C function calls that ``run()`` makes.

    A deterministic measure of work (the same on a loaded machine as on an idle one), so tests
    can check that the parser's work grows linearly without timing anything.
    """
    count = 0

    def profile(frame, event: str, arg) -> None:
        nonlocal count
        if event == 'call' or event == 'c_call':
            count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(previous)
    return count


def growth(make: Callable[[int], str], run: Callable[[str], object], size: int) -> float:
    """
    Return operations(run(make(2 * size))) / operations(run(make(size))).

    About 2 for linear work, about 4 for quadratic work. One run first fills the caches (the
    compiled plan) so they are not counted.
    """
    run(make(size))
    small = operations(lambda: run(make(size)))
    large = operations(lambda: run(make(2 * size)))
    return large / max(small, 1)


def by_id(case_id: str) -> Case:
    """Return the corpus case named ``case_id``."""
    return next(case for case in CASES if case.id == case_id)


def summary(result: ParseResult) -> tuple:
    """Return ``(calls, errors, content)`` in the corpus' comparison form."""
    return ([(call.name, call.arguments, call.format) for call in result.calls],
            [(issue.code, issue.name) for issue in result.errors], result.content)


def stream(text: str, cuts: list[int], tools=None, formats='auto', **kwargs) -> ParseResult:
    """Feed ``text`` split at ``cuts`` through a StreamingParser; collect a ParseResult."""
    parser = StreamingParser(tools, formats, **kwargs)
    events = []
    last = 0
    for cut in sorted(set(cuts)) + [len(text)]:
        if cut > last:
            events += parser.feed(text[last:cut])
            last = cut
    events += parser.finish()
    return ParseResult(
        ''.join(event.text for event in events if isinstance(event, ContentEvent)),
        [event.call for event in events if isinstance(event, CallEvent)],
        [event.issue for event in events if isinstance(event, IssueEvent)])


# ----------------------------------------------------------------------------------- fuzzing

_FRAGMENTS = [
    '<tool_call>', '</tool_call>', '<say>', '</say>', '<|python_tag|>', '<|eom_id|>',
    '[TOOL_CALLS]', '[ARGS]', '<function=say>', '<parameter=text>', '</parameter>',
    '</function>', '```json\n', '```', '{', '}', '[', ']', '(', ')', '"', "'", '\\', ';', ',',
    ':', '\n', ' ', 'say(', 'move_to(', 'text=', '"name": ', '"arguments": ', 'True', 'null',
    '<|python_start|>', '<|python_end|>', '\ud800', '\x00', 'é', '\u2028',
    '<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>', '<｜tool▁sep｜>', '<｜tool▁call▁end｜>',
    '<｜DSML｜function_calls>', '<｜DSML｜invoke name="say">', '</｜DSML｜invoke>',
    '<|tool_calls_section_begin|>', '<|tool_call_begin|>', '<|tool_call_argument_begin|>',
    '<|tool_call_end|>', '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>',
    '<|channel|>', '<|message|>', ' to=functions.say', '<|call|>', '<|end|>', '<|start|>',
    '<minimax:tool_call>', '<invoke name="say">', '<parameter name="text">', '</invoke>',
    '<tool_calls>', '</tool_calls>', '<seed:tool_call>', '<|tool_call|>', '<function_call>',
    '<start_function_call>', 'call:say{', '<escape>', '<end_function_call>', '```tool_code\n',
    'functools[', '<|action_start|><|plugin|>', '<|START_ACTION|>', '\nAction: ```json\n',
    '<longcat_tool_call>', '<|tool_call_start|>', '<|tool_call_end|>', '<tool_sep>',
    '<tool_call>say<tool_sep>', '<think>', '</think>', '<seed:think>', '</seed:think>',
    '[THINK]', '[/THINK]', '<|START_THINKING|>', '<|END_THINKING|>', '<|channel|>analysis',
]


_PADDING = 'Long plan. ' * 460 + '\n'


def mutate(text: str, rng: random.Random) -> str:
    """Return a random mutation of ``text``: cut, splice, insert markup, or random noise."""
    kind = rng.randrange(6)
    if kind == 0 and text:
        return text[:rng.randrange(len(text) + 1)]
    if kind == 1 and text:
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(_FRAGMENTS) + text[i:]
    if kind == 2 and text:
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        return text[:i] + text[j:]
    if kind == 3:
        other = rng.choice(CASES).text
        return text[:rng.randrange(len(text) + 1)] + other[rng.randrange(len(other) + 1):]
    if kind == 4:
        return ''.join(rng.choice(_FRAGMENTS) for _ in range(rng.randrange(1, 30)))
    return ''.join(chr(rng.randrange(0x20, 0x7f)) if rng.random() < 0.9
                   else chr(rng.randrange(0x110000)) for _ in range(rng.randrange(0, 80)))


def fuzz(count: int, seed: int, tools=None, stream_every: int = 10,
         cases: list | None = None) -> tuple[int, list[str]]:
    """
    Parse ``count`` generated inputs; stream every ``stream_every``-th in random splits.

    Seeds are ``cases`` (default: the whole corpus). Any exception propagates, including one
    the parser's own guard caught (``guard_fails``).
    Returns ``(number streamed, texts whose streamed result
    differed from parse)``.
    """
    with guard_fails():
        return _fuzz(count, seed, tools, stream_every, cases or CASES)


def _fuzz(count: int, seed: int, tools, stream_every: int, cases: list) -> tuple[int, list[str]]:
    rng = random.Random(seed)
    mismatches: list[str] = []
    streamed = 0
    for index in range(count):
        text = rng.choice(cases).text
        for _ in range(rng.randrange(1, 4)):
            text = mutate(text, rng)
        if rng.random() < 0.1:  # values far from the start take another decoding path
            text = _PADDING + text
        catalog_arg = tools if rng.random() < 0.7 else None
        result = parse(text, catalog_arg)
        json.dumps([call.arguments for call in result.calls], default=repr)
        if index % stream_every == 0:
            streamed += 1
            cuts = [rng.randrange(len(text) + 1) for _ in range(rng.randrange(0, 12))]
            # every other streamed input also reads streamed arguments (what stream_speech
            # uses): the calls, issues and content must not change
            arguments = index % (2 * stream_every) == 0
            if stream(text, cuts, catalog_arg, stream_arguments=arguments) != result:
                mismatches.append(text)
    return streamed, mismatches
