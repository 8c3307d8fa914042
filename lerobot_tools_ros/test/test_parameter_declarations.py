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
One declaration per parameter: the packaged file is generated from it, values checked by it.

The packaged parameters file fails this test when stale; every value is checked against its
declaration, with a reason.

`lerobot-tools-ros params --yaml -o config/lerobot_tools.yaml` regenerates the file.
"""

from conftest import PACKAGE_DIR
from lerobot_tools_ros.cli import main
from lerobot_tools_ros.dispatch import DispatchSettings, ToolSettings
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.parameters import ParameterSpec
from lerobot_tools_ros.parameters.declarations import (
    DISPATCHER, dispatcher_tool_spec, INHERIT, NODES, PER_TOOL_DEFAULTS, PER_TOOL_SETTINGS)
from lerobot_tools_ros.parameters.generate import node_parameters, reference, yaml_file
from lerobot_tools_ros.tools import TOOL_REGISTRY
from lerobot_tools_ros.tools.base import declared_parameters
import pytest
import yaml

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'


def test_the_packaged_parameters_file_is_generated_from_the_declarations():
    assert PARAMS_FILE.read_text() == yaml_file(), (
        'config/lerobot_tools.yaml is stale: run `lerobot-tools-ros params --yaml -o '
        'lerobot_tools_ros/config/lerobot_tools.yaml`')


def test_params_check_tells_a_stale_file(tmp_path, capsys):
    assert main(['params', '--check', str(PARAMS_FILE)]) == 0
    stale = tmp_path / 'stale.yaml'
    stale.write_text(PARAMS_FILE.read_text().replace('burst: 5', 'burst: 6', 1))
    assert main(['params', '--check', str(stale)]) == 1
    assert 'is stale' in capsys.readouterr().err


def test_the_file_holds_every_declared_parameter_with_its_default():
    data = yaml.safe_load(PARAMS_FILE.read_text())
    for node, specs in node_parameters().items():
        values = data[f'/**/{node}']['ros__parameters']
        for spec in specs:
            level = values
            for part in spec.name.split('.'):
                level = level[part]
            assert level == spec.default, spec.name
            assert level is not None, spec.name


def test_every_tool_parameter_has_a_value_and_says_if_it_is_live():
    for name in TOOL_REGISTRY:
        for key, parameter in declared_parameters(TOOL_REGISTRY[name]).items():
            spec = parameter.spec(f'tool.{name}.{key}')
            assert spec.default is not None
            assert spec.writable or 'Read-only: ' in spec.full_description()


def test_the_core_defaults_are_the_declared_ones():
    settings = DispatchSettings()
    for name in ('formats', 'max_pending', 'serialize_per_tool', 'max_input_bytes',
                 'stream_idle_timeout_s', 'max_open_streams', 'max_stream_bytes'):
        assert getattr(settings, name) == DISPATCHER[name].default, name
    tool = ToolSettings()
    assert (tool.timeout_s, tool.rate_limit_hz, tool.burst) == (
        DISPATCHER['timeout_s'].default, DISPATCHER['rate_limit_hz'].default,
        DISPATCHER['burst'].default)


def test_a_tool_without_its_own_defaults_takes_the_global_limits():
    for setting in ('timeout_s', 'rate_limit_hz', 'burst'):
        spec = dispatcher_tool_spec('close_gripper', setting)
        assert spec.default == INHERIT and spec.check(-1) == INHERIT
        assert '-1: the global' in spec.description
    assert dispatcher_tool_spec('close_gripper', 'approval').default == 'auto'
    assert dispatcher_tool_spec('say', 'timeout_s').default == (
        PER_TOOL_DEFAULTS['say']['timeout_s'])  # the tools the declarations know: their own
    assert set(PER_TOOL_SETTINGS) == {'timeout_s', 'rate_limit_hz', 'burst', 'repeat_window_s',
                                      'approval', 'when_busy'}


def test_every_parameter_read_only_or_not_says_so():
    for node, table in NODES.items():
        for spec in table.values():
            described = spec.full_description()
            assert ('Read-only: ' in described) == bool(spec.read_only), (node, spec.name)


def test_the_reference_lists_every_parameter():
    text = reference()
    for node, specs in node_parameters().items():
        assert f'## {node}' in text
        for spec in specs:
            assert f'| `{spec.name}` |' in text


@pytest.mark.parametrize('default, value, expected', [
    (1.0, 5, 5.0), (1.0, 2.5, 2.5), (3, 7, 7), (True, False, False), ('a', 'b', 'b'),
    (['x'], [], []), (['x'], None, []), (['x'], ['y', 'z'], ['y', 'z'])])
def test_a_spec_takes_values_of_its_type(default, value, expected):
    checked = ParameterSpec('p', default, 'A parameter.').check(value)
    assert checked == expected and type(checked) is type(expected)


@pytest.mark.parametrize('spec, value, message', [
    (ParameterSpec('p', 1.0, 'P.'), 'null', "parameter 'p' must be a number, got 'null'"),
    (ParameterSpec('p', 1.0, 'P.'), True, 'must be a number'),
    (ParameterSpec('p', 1, 'P.'), 1.5, 'must be an integer'),
    (ParameterSpec('p', 'a', 'P.', choices=('a', 'b')), 'c', 'must be one of a, b'),
    (ParameterSpec('p', 5, 'P.', minimum=1, maximum=9), 10, 'must be from 1 to 9, got 10'),
    (ParameterSpec('p', 1.0, 'P.', above=0.0), 0.0, 'must be above 0'),
    (ParameterSpec('p', ['a'], 'P.'), [''], 'empty string'),
    (ParameterSpec('p', '', 'P.', also=('float',)), True, 'a string or a number'),
])
def test_a_spec_refuses_a_bad_value_with_a_reason(spec, value, message):
    with pytest.raises(ConfigurationError, match=message):
        spec.check(value)
    assert message.split(',')[0].split("'")[-1] in spec.reason(value)


def test_a_declaration_that_breaks_its_own_rules_fails_at_import():
    with pytest.raises(ConfigurationError, match='must be from 1 to'):
        ParameterSpec('p', 0, 'P.', minimum=1)
    with pytest.raises(TypeError, match='never|must be a bool'):
        ParameterSpec('p', None, 'P.')


def test_every_description_reads_as_one_sentence_without_empty_parentheses():
    for node, specs in node_parameters().items():
        for spec in specs:
            text = spec.description
            assert text.strip(), f'{node} {spec.name}: no description'
            for accident in ('()', '( ', ' )', '(=', '( =', '  '):
                assert accident not in text, f'{node} {spec.name}: {accident!r} in {text!r}'


def test_no_two_string_literals_touch():
    """
    Literals written with nothing between them (`'file ('' = a'`) join into one text.

    Such source reads as one string holding quotes, but Python joins the two and the quotes
    vanish: a description once read "file ( = a silent prompt)". Literals are joined with a
    space or a line break between them, and an empty value is spelled out in words.
    """
    import io
    import tokenize

    found = []
    for path in sorted((PACKAGE_DIR / 'lerobot_tools_ros').rglob('*.py')):
        tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text()).readline))
        for first, second in zip(tokens, tokens[1:]):
            if first.type == second.type == tokenize.STRING and first.end == second.start:
                found.append(f'{path.relative_to(PACKAGE_DIR)}:{first.start[0]}')
    assert found == []
