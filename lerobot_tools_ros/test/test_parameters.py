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
Every parameter of every node answers as `ros2 param dump/get/describe/set/load` ask for it.

Each node runs as a real process with the packaged parameters file; the test talks to it
through the rcl_interfaces parameter services, as the ros2 command-line tools do (there is no
`ros2` CLI here: `dump` and `load` below do what ros2param's verbs do). rclpy answers a
get_parameters request with nothing at all when one parameter has a type but no value, which
made `ros2 param dump /dispatcher` print `ros__parameters: {}`; a dump with `null` values
stopped the dispatcher and tool_server when they were started from it.
"""

import json
import pathlib
import socket
import uuid

from conftest import PACKAGE_DIR, prove_service, spin_until
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import names
from lerobot_tools_ros.errors import EXIT_CONFIGURATION_ERROR
from lerobot_tools_ros.nodes.params import string_list
from lerobot_tools_ros.parameters.declarations import dispatcher_tool_spec, PER_TOOL_SETTINGS
from lerobot_tools_ros.parameters.generate import node_parameters
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters
from rclpy.parameter import (parameter_dict_from_yaml_file, PARAMETER_SEPARATOR_STRING,
                             parameter_value_to_python)
import yaml

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'
ARRAYS = {ParameterType.PARAMETER_BYTE_ARRAY: 'byte_array_value',
          ParameterType.PARAMETER_BOOL_ARRAY: 'bool_array_value',
          ParameterType.PARAMETER_INTEGER_ARRAY: 'integer_array_value',
          ParameterType.PARAMETER_DOUBLE_ARRAY: 'double_array_value',
          ParameterType.PARAMETER_STRING_ARRAY: 'string_array_value'}


def node_args(name: str, tmp: pathlib.Path) -> list[str]:
    """ROS arguments each node starts with: the packaged file, output kept in the test's dir."""
    packaged = ['--params-file', str(PARAMS_FILE)]
    return {
        'dispatcher': packaged,
        'tool_server': packaged + ['-p', 'tool.say.backend:=espeak_ng',
                                   '-p', f'tool.record_observation.output_dir:={tmp}'],
        'speaker': packaged + ['-p', 'sink:=null', '-p', f'output_dir:={tmp}'],
        # Small frames: a loaded machine still answers the parameter services promptly.
        'demo_camera': ['-p', 'width:=64', '-p', 'height:=48', '-p', 'fps:=5.0'],
        'scripted_policy': ['-p', 'interval_s:=60.0'],
        'demo_gripper': [],
        'replay': packaged,  # no dispatcher here: it waits, its parameters answer
        # HTTP on a free loopback port: stdio would end with the test's standard input.
        'mcp_server': packaged + ['-p', 'transport:=http', '-p', f'port:={_free_port()}'],
    }[name]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class ParameterClient:
    """The parameter services of one node: what `ros2 param` calls."""

    def __init__(self, ros_node, node_name: str) -> None:
        self.ros_node = ros_node
        self.clients = {
            kind: ros_node.create_client(srv, f'/{node_name}/{kind}')
            for kind, srv in (('list_parameters', ListParameters),
                              ('get_parameters', GetParameters),
                              ('describe_parameters', DescribeParameters),
                              ('set_parameters', SetParameters))}

    def wait(self) -> bool:
        return spin_until(self.ros_node, lambda: all(
            c.service_is_ready() for c in self.clients.values()), 30.0)

    def call(self, kind: str, request):
        """
        Call one parameter service and return its answer.

        `service_is_ready()` can be true before the node's side has matched this client, so a
        first answer can be lost: a read is repeated until answered; a set goes once, after an
        empty set (which sets nothing) proved that answers come.
        """
        client = self.clients[kind]
        if kind != 'set_parameters':
            return prove_service(self.ros_node, client, request, 20.0)
        prove_service(self.ros_node, client, SetParameters.Request(), 20.0)
        future = client.call_async(request)
        assert spin_until(self.ros_node, future.done, 20.0), f'{kind} did not answer'
        return future.result()

    def names(self) -> list[str]:
        return list(self.call('list_parameters', ListParameters.Request()).result.names)

    def get(self, names: list[str]) -> list[ParameterValue]:
        return list(self.call('get_parameters', GetParameters.Request(names=names)).values)

    def describe(self, names: list[str]):
        return list(self.call('describe_parameters',
                              DescribeParameters.Request(names=names)).descriptors)

    def set_value(self, name: str, value: ParameterValue):
        request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)])
        return self.call('set_parameters', request).results[0]

    def dump(self, node_name: str) -> dict:
        """`ros2 param dump /<node>`: every parameter, nested at the dots, as YAML data."""
        names = sorted(self.names())
        values = self.get(names)
        assert len(values) == len(names), 'get_parameters answered for some parameters only'
        parameters: dict = {}
        for name, value in zip(names, values):
            *parents, leaf = name.split(PARAMETER_SEPARATOR_STRING)
            level = parameters
            for part in parents:
                level = level.setdefault(part, {})
            level[leaf] = parameter_value_to_python(value)
        return {f'/{node_name}': {'ros__parameters': parameters}}

    def load(self, path: pathlib.Path, node_name: str) -> dict:
        """`ros2 param load /<node> FILE`: set every parameter of the file; name -> result."""
        parameters = parameter_dict_from_yaml_file(str(path), target_nodes=[f'/{node_name}'])
        request = SetParameters.Request(parameters=list(parameters.values()))
        results = self.call('set_parameters', request).results
        return dict(zip(parameters, results))


@pytest.fixture
def params_of(start_node, ros_node, tmp_path):
    def start(name: str, *args: str, with_process: bool = False):
        proc = start_node(f'lerobot_tools_ros.nodes.{name}',
                          *(args or node_args(name, tmp_path)))
        client = ParameterClient(ros_node, name)
        assert client.wait(), f'{name} never offered its parameter services:\n{proc.output()}'
        return (client, proc) if with_process else client

    return start


NODES = ['dispatcher', 'tool_server', 'speaker', 'demo_camera', 'scripted_policy',
         'demo_gripper', 'replay', 'mcp_server']


@pytest.mark.parametrize('name', NODES)
def test_every_parameter_has_a_value_and_a_description(params_of, name):
    client = params_of(name)
    names = client.names()
    assert 'use_sim_time' in names and len(names) > 1
    values = client.get(names)
    # One value per name: the whole answer is empty when a single parameter lacks a value.
    assert len(values) == len(names), f'get_parameters answered {len(values)} of {len(names)}'
    ours = [n for n in names if n != 'use_sim_time']
    descriptors = dict(zip(ours, client.describe(ours)))
    for parameter, descriptor in descriptors.items():
        assert descriptor.description.strip(), f'{name}: {parameter} has no description'
    # No parameter is unset (a dump would hold null, which no node takes back).
    unset = {n for n, v in zip(names, values) if v.type == ParameterType.PARAMETER_NOT_SET}
    assert not unset, f'{name}: parameters without a value: {unset}'
    # Declared from their one declaration: each has its spec's description (rules, mode).
    specs = {spec.name: spec for spec in node_parameters()[name]}
    if name == 'dispatcher':  # every catalog tool's settings, not only those the file lists
        specs.update((f'tool.{tool}.{setting}', dispatcher_tool_spec(tool, setting))
                     for tool in ('say', 'record_observation', 'close_gripper')
                     for setting in PER_TOOL_SETTINGS)
    rclpy_own = {'start_type_description_service'}
    derived = {n for n in ours if n.startswith('tool.record_observation.camera.')}
    assert set(ours) - rclpy_own - derived == set(specs), name
    for parameter, spec in specs.items():
        assert descriptors[parameter].description == spec.full_description(), parameter
        assert descriptors[parameter].read_only == bool(spec.read_only), parameter


@pytest.mark.parametrize('name', NODES)
def test_list_parameters_can_be_set_empty_and_back(params_of, name):
    client = params_of(name)
    names = client.names()
    values = dict(zip(names, client.get(names)))
    descriptors = dict(zip(names, client.describe(names)))
    lists = [n for n, v in values.items() if v.type in ARRAYS and not descriptors[n].read_only]
    for parameter in lists:
        before = values[parameter]
        # `ros2 param set <node> <name> "[]"` sends an empty BOOL array.
        empty = ParameterValue(type=ParameterType.PARAMETER_BOOL_ARRAY, bool_array_value=[])
        result = client.set_value(parameter, empty)
        assert result.successful, f'{name}: {parameter} := [] refused: {result.reason}'
        (now,) = client.get([parameter])
        assert list(getattr(now, ARRAYS[now.type])) == []
        assert client.set_value(parameter, before).successful
        (now,) = client.get([parameter])
        assert now == before
        blank = ParameterValue(type=ParameterType.PARAMETER_STRING_ARRAY,
                               string_array_value=[''])
        result = client.set_value(parameter, blank)
        assert not result.successful, f"{name}: {parameter} := [''] accepted"
        assert 'empty string' in result.reason
        (now,) = client.get([parameter])
        assert now == before
    if name == 'dispatcher':
        assert {'formats', 'allowed_tools'} <= set(lists)


def test_allowed_tools_means_every_tool_by_default(params_of):
    client = params_of('dispatcher')
    (value,) = client.get(['allowed_tools'])
    assert list(value.string_array_value) == ['*']
    star_and_name = ParameterValue(type=ParameterType.PARAMETER_STRING_ARRAY,
                                   string_array_value=['*', 'say'])
    result = client.set_value('allowed_tools', star_and_name)
    assert not result.successful and 'stands alone' in result.reason


@pytest.mark.parametrize('value, expected', [
    (None, []), ([], []), ((), []), ([False][:0], []), (['say'], ['say']), (['*'], ['*'])])
def test_string_list_accepts(value, expected):
    assert string_list('allowed_tools', value) == expected


@pytest.mark.parametrize('value, message', [
    ([''], 'empty string'), (['say', ' '], 'empty string'), ('say', 'must be a list'),
    ([1, 2], 'list of strings'), (['*', 'say'], 'stands alone'), (3, 'must be a list')])
def test_string_list_refuses_with_a_clear_reason(value, message):
    with pytest.raises(ValueError, match=message):
        string_list('allowed_tools', value)


def _values(dump: dict) -> dict:
    """Flatten a dump's parameters to name -> value."""
    (node,) = dump.values()
    flat = {}

    def walk(prefix: str, level: dict) -> None:
        for key, value in level.items():
            if isinstance(value, dict):
                walk(f'{prefix}{key}.', value)
            else:
                flat[prefix + key] = value
    walk('', node['ros__parameters'])
    return flat


@pytest.mark.parametrize('name', NODES)
def test_a_node_starts_from_its_own_dump_and_loads_it(params_of, name, tmp_path):
    client, proc = params_of(name, with_process=True)
    first = client.dump(name)
    values = _values(first)
    assert None not in values.values(), {k: v for k, v in values.items() if v is None}
    dump_file = tmp_path / f'{name}_dump.yaml'
    dump_file.write_text(yaml.dump(first, default_flow_style=False))
    assert proc.stop() == 0, proc.output()
    # `ros2 run ... --ros-args --params-file <dump>`: the dump alone configures the node.
    client = params_of(name, '--params-file', str(dump_file))
    assert client.dump(name) == first
    # `ros2 param load /<node> <dump>`: every writable parameter takes its value back.
    results = client.load(dump_file, name)
    assert set(results) == set(values)
    descriptors = dict(zip(results, client.describe(list(results))))
    for parameter, result in results.items():
        if descriptors[parameter].read_only:
            assert not result.successful and 'read-only' in result.reason, parameter
        else:
            assert result.successful, f'{parameter}: {result.reason}'
    assert client.dump(name) == first


def test_a_camera_map_survives_the_dump(params_of, tmp_path):
    args = node_args('tool_server', tmp_path) + [
        '-p', 'tool.record_observation.cameras.front:=/robot/front/image_raw']
    client, proc = params_of('tool_server', *args, with_process=True)
    first = client.dump('tool_server')
    values = _values(first)
    assert values['tool.record_observation.cameras'] == ['front=/robot/front/image_raw']
    dump_file = tmp_path / 'dump.yaml'
    dump_file.write_text(yaml.dump(first, default_flow_style=False))
    assert proc.stop() == 0, proc.output()
    client = params_of('tool_server', '--params-file', str(dump_file))
    again = _values(client.dump('tool_server'))
    assert again['tool.record_observation.camera.front.topic'] == '/robot/front/image_raw'
    assert again == values


def _integer(value: int) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)


def _bool(value: bool) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)


def _say(ros_node, text: str) -> CallTool.Response:
    client = ros_node.create_client(CallTool, f'/{names.SERVICE_PREFIX}/say')
    prove_service(ros_node, client, CallTool.Request(name=names.READINESS_PROBE))
    future = client.call_async(CallTool.Request(  # a new id: each call runs (at most once)
        call_id=f't-{uuid.uuid4().hex}', name='say', arguments=json.dumps({'text': text})))
    assert spin_until(ros_node, future.done, 30.0)
    return future.result()


def test_a_live_tool_parameter_takes_effect_when_set(params_of, ros_node):
    client = params_of('tool_server')
    # No speaker runs here: a say within max_chars is checked, then finds nobody to play it.
    assert _say(ros_node, 'x' * 20).error_code != 'invalid_arguments'
    result = client.set_value('tool.say.max_chars', _integer(10))
    assert result.successful, result.reason
    refused = _say(ros_node, 'x' * 20)
    assert refused.error_code == 'invalid_arguments'
    assert 'at most 10' in refused.error_message and 'tool.say.max_chars' in refused.error_message
    # A value the declaration refuses is refused with the reason, and changes nothing.
    result = client.set_value('tool.say.max_chars', _integer(0))
    assert not result.successful
    assert 'tool.say.max_chars' in result.reason and 'Min: 1' in result.reason
    (value,) = client.get(['tool.say.max_chars'])
    assert value.integer_value == 10
    # while_speaking too: one of its choices is taken, anything else refused with them.
    assert client.set_value('tool.say.while_speaking', _string('refuse')).successful
    bad = client.set_value('tool.say.while_speaking', _string('shout'))
    assert not bad.successful and 'queue' in bad.reason
    # A read-only parameter says why in its description, and refuses a set.
    (described,) = client.describe(['tool.say.backend'])
    assert described.read_only and 'Read-only: ' in described.description
    assert not client.set_value('tool.say.backend', ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value='espeak_ng')).successful


def _string(value: str) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)


def test_a_bad_value_from_a_file_stops_the_node_with_one_line(start_node, tmp_path):
    proc = start_node('lerobot_tools_ros.tool_server.node', '--params-file', str(PARAMS_FILE),
                      '-p', 'tool.say.max_chars:=0', '-p', 'tool.say.backend:=espeak_ng')
    assert proc.proc.wait(60) == EXIT_CONFIGURATION_ERROR
    errors = [line for line in proc.output().splitlines() if 'error' in line.lower()]
    assert errors == ["[tool_server] error: parameter 'tool.say.max_chars' must be from 1 to "
                      '1000000, got 0'], proc.output()


def test_tool_enabled_is_not_a_setting(params_of, start_node):
    # Removed everywhere: allowed_tools (not_allowed) and approval: deny (denied) gate every
    # caller; a file that still says tool.<name>.enabled stops the dispatcher, saying so.
    proc = start_node('lerobot_tools_ros.dispatcher.node', '--params-file', str(PARAMS_FILE),
                      '-p', 'tool.say.enabled:=false')
    assert proc.proc.wait(60) == EXIT_CONFIGURATION_ERROR
    assert 'there is no tool.<name>.enabled' in proc.output()
    assert 'Traceback' not in proc.output()
    client = params_of('dispatcher')
    assert 'tool.say.enabled' not in client.names()
    assert not client.set_value('tool.say.enabled', _bool(False)).successful
    result = client.set_value('tool.say.approval', ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value='never'))
    assert not result.successful and 'one of auto, confirm, deny' in result.reason
