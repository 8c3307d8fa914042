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

"""Tool schemas generated from ROS interface types: checked by the catalog and the bindings."""

import json
import pathlib
import subprocess
import sys

from lerobot_tools_ros.catalog import ToolArgumentError, ToolCatalog
from lerobot_tools_ros.cli import main
from lerobot_tools_ros.tools.bindings import schema as schema_module
from lerobot_tools_ros.tools.bindings.loader import parse_bindings
from lerobot_tools_ros.tools.bindings.schema import interface_tool
import pytest
import yaml

# interface -> (arguments a test sends, arguments out of the ROS type's range or bounds)
CASES = {
    'std_srvs/srv/SetBool': ({'data': True}, {'data': 1}),
    'test_msgs/action/Fibonacci': ({'order': 10}, {'order': 2**31}),
    'geometry_msgs/msg/Twist': ({'linear': {'x': 0.2}, 'angular': {'z': -0.5}},
                                {'linear': {'x': 'fast'}}),
    'test_msgs/srv/BasicTypes': (
        {'bool_value': True, 'byte_value': 255, 'char_value': 65, 'float32_value': 1.5,
         'float64_value': -2.0, 'int8_value': -128, 'uint8_value': 255, 'int16_value': 1,
         'uint16_value': 65535, 'int32_value': -5, 'uint32_value': 5, 'int64_value': 2**63 - 1,
         'uint64_value': 2**64 - 1, 'string_value': 'hi'},
        {'int8_value': 128}),
    'test_msgs/msg/BoundedPlainSequences': ({'int16_values': [1, 2, 3], 'alignment_check': 0},
                                            {'int16_values': [1, 2, 3, 4]}),
    'test_msgs/msg/Strings': ({'string_value': 'a', 'bounded_string_value': 'x' * 22},
                              {'bounded_string_value': 'x' * 23}),
}


@pytest.mark.parametrize('type_name', sorted(CASES))
def test_generated_schema_accepts_valid_arguments_and_rejects_out_of_range(type_name):
    good, bad = CASES[type_name]
    schema, binding = interface_tool('bound_tool', type_name)
    catalog = ToolCatalog.from_tools([schema], strict=True)  # a valid catalog entry
    arguments = catalog.validate('bound_tool', json.dumps(good))
    with pytest.raises(ToolArgumentError):
        catalog.validate('bound_tool', json.dumps({**good, **bad}))
    # The binding entry printed with it is accepted as is, and fills the message.
    tool = parse_bindings(yaml.safe_dump({'bindings': {'bound_tool': binding}}),
                          catalog)['bound_tool']
    mapping = {'service': 'request', 'action': 'goal', 'publish': 'message'}[tool.KIND]
    message = getattr(tool, mapping).build(arguments)
    for key, value in good.items():
        field = getattr(message, key)
        if isinstance(value, dict):
            assert {k: getattr(field, k) for k in value} == value
        elif isinstance(value, list):
            assert list(field) == value
        elif key == 'byte_value':
            assert field == bytes([value])
        else:
            assert field == value


def test_integer_ranges_bounds_and_comments_come_from_the_interface():
    schema, _ = interface_tool('basic', 'test_msgs/srv/BasicTypes')
    properties = schema['function']['parameters']['properties']
    assert (properties['int8_value']['minimum'], properties['int8_value']['maximum']) == (
        -128, 127)
    assert properties['uint64_value']['maximum'] == 2**64 - 1
    assert properties['float64_value'] == {'type': 'number'}
    bounded, _ = interface_tool('bounded', 'test_msgs/msg/BoundedPlainSequences')
    assert bounded['function']['parameters']['properties']['int16_values']['maxItems'] == 3
    light, _ = interface_tool('set_light', 'std_srvs/srv/SetBool')
    assert light['function']['parameters']['properties']['data']['description'] == (
        'e.g. for hardware enabling / disabling')
    battery, binding = interface_tool('get_battery', 'sensor_msgs/msg/BatteryState',
                                      kind='read', ros_name='/battery_state')
    assert battery['function']['parameters']['properties'] == {}
    assert binding == {'kind': 'read', 'topic': '/battery_state',
                       'type': 'sensor_msgs/msg/BatteryState'}


def test_cli_prints_schema_and_binding_and_adds_to_a_dataset(tmp_path, capsys):
    assert main(['catalog', '--from-interface', 'move_gripper', 'test_msgs/action/Fibonacci',
                 '--ros-name', '/gripper']) == 0
    out = capsys.readouterr().out
    schema_text, binding_text = out.split('# binding entry (bindings_file of tool_server):\n')
    schema = json.loads(schema_text.split('\n', 1)[1])
    assert schema['function']['name'] == 'move_gripper'
    assert yaml.safe_load(binding_text) == {'bindings': {'move_gripper': {
        'kind': 'action', 'action': '/gripper', 'type': 'test_msgs/action/Fibonacci',
        'goal': {'order': '$order'}}}}
    info = tmp_path / 'meta' / 'info.json'
    info.parent.mkdir(parents=True)
    info.write_text(json.dumps({'codebase_version': 'v3.0', 'tools': []}))
    assert main(['catalog', '--from-interface', 'move_gripper', 'test_msgs/action/Fibonacci',
                 '--ros-name', '/gripper', '--add-to', str(tmp_path)]) == 0
    tools = json.loads(info.read_text())['tools']
    assert [tool['function']['name'] for tool in tools] == ['say', 'move_gripper']
    assert tools[1] == schema
    assert main(['catalog', '--from-interface', 'x', 'std_srvs/srv/SetBol']) == 1
    assert 'unknown type std_srvs/srv/SetBol' in capsys.readouterr().err


def test_cli_checks_a_bindings_file_like_tool_server(tmp_path, capsys):
    config = pathlib.Path(__file__).resolve().parent.parent / 'config'
    assert main(['catalog', '--check-bindings', str(config / 'demo_bindings.yaml')]) == 0
    out = capsys.readouterr().out
    assert 'OK, 1 binding(s)' in out
    assert ('close_gripper: action lerobot_tools_interfaces/action/CloseGripper at '
            'demo_gripper/close') in out
    bad = tmp_path / 'bad.yaml'
    bad.write_text('bindings:\n  close_gripper: {kind: action, action: /g, '
                   'type: test_msgs/action/Fibonaci}\n  wave: {kind: read}\n')
    assert main(['catalog', '--check-bindings', str(bad)]) == 1
    out = capsys.readouterr().out
    assert f'{bad}: 2 problem(s):' in out
    assert 'unknown type test_msgs/action/Fibonaci' in out and "tool 'wave'" in out


def test_read_and_publish_schemas_name_the_topic_and_refuse_extra_arguments():
    battery, _ = interface_tool('get_battery', 'sensor_msgs/msg/BatteryState', kind='read',
                                ros_name='/battery_state')
    assert battery['function']['description'] == (
        'Read the latest sensor_msgs/msg/BatteryState message on the ROS topic /battery_state.')
    drive, _ = interface_tool('drive', 'geometry_msgs/msg/Twist', ros_name='/cmd_vel')
    assert drive['function']['description'] == (
        'Publish a geometry_msgs/msg/Twist message on the ROS topic /cmd_vel.')
    light, _ = interface_tool('set_light', 'std_srvs/srv/SetBool')
    assert light['function']['description'] == (
        'Call the ROS service /set_light (std_srvs/srv/SetBool).')
    catalog = ToolCatalog.from_tools([battery, drive], strict=True)
    assert catalog.validate('get_battery', '{}') == {}
    with pytest.raises(ToolArgumentError):
        catalog.validate('get_battery', json.dumps({'since': 'yesterday'}))
    with pytest.raises(ToolArgumentError):
        catalog.validate('drive', json.dumps({'linear': {'x': 1.0}, 'speed': 2}))


def test_interface_comments_are_found_beside_the_module_without_the_ament_index(ros_env):
    env = {k: v for k, v in ros_env.items() if k != 'AMENT_PREFIX_PATH'}
    done = subprocess.run(
        [sys.executable, '-m', 'lerobot_tools_ros.cli', 'catalog', '--from-interface',
         'set_light', 'std_srvs/srv/SetBool'], env=env, capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 0, done.stderr
    assert 'warning' not in done.stderr, done.stderr
    assert '"description": "e.g. for hardware enabling / disabling"' in done.stdout


def test_a_schema_without_its_interface_definition_is_reported(monkeypatch, capsys):
    monkeypatch.setattr(schema_module, '_idl_share', lambda package, relative: None)
    assert main(['catalog', '--from-interface', 'set_light', 'std_srvs/srv/SetBool']) == 0
    err = capsys.readouterr().err
    assert ('warning: std_srvs/srv/SetBool: its interface definition could not be read '
            '(share/std_srvs/srv/SetBool.idl is neither on AMENT_PREFIX_PATH') in err
    assert 'marks fields that have defaults as required' in err
