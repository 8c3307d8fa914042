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
Every parameter of every node answers as `ros2 param dump/get/describe/set` ask for it.

Each node runs as a real process with the packaged parameters file; the test talks to it
through the rcl_interfaces parameter services, as the ros2 command-line tools do. rclpy answers
a get_parameters request with nothing at all when one parameter has a type but no value, which
made `ros2 param dump /dispatcher` print `ros__parameters: {}`.
"""

import pathlib

from conftest import PACKAGE_DIR, prove_service, spin_until
from lerobot_tools_ros.nodes.params import string_list
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters

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
    }[name]


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


@pytest.fixture
def params_of(start_node, ros_node, tmp_path):
    def start(name: str) -> ParameterClient:
        proc = start_node(f'lerobot_tools_ros.nodes.{name}', *node_args(name, tmp_path))
        client = ParameterClient(ros_node, name)
        assert client.wait(), f'{name} never offered its parameter services:\n{proc.output()}'
        return client

    return start


NODES = ['dispatcher', 'tool_server', 'speaker', 'demo_camera', 'scripted_policy',
         'demo_gripper']


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
    # A parameter may be unset only where unset has a documented meaning (the dispatcher's
    # per-tool limits: the global value; say's eos_threshold: the model's default).
    unset = {n for n, v in zip(names, values) if v.type == ParameterType.PARAMETER_NOT_SET}
    undocumented = {n for n in unset if 'unset' not in descriptors[n].description}
    assert not undocumented, f'{name}: no value and no meaning for unset: {undocumented}'


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
