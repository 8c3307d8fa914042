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
Every numeric parameter of every node is bounded: extreme values are refused, never taken.

A timeout of 1e308 or 1e12 s used to be accepted by `ros2 param set` and then kill the
dispatcher at its next deadline (an int64 timer period overflowed), with its calls in flight
unanswered. Each extreme is tried on the declarations, through SetParameters on real nodes over
DDS, and at start (command line and parameters file).
"""

import math

from conftest import PACKAGE_DIR, spin_until
from lerobot_tools_interfaces.msg import TextChunk, ToolResult
from lerobot_tools_ros import names
from lerobot_tools_ros.errors import EXIT_CONFIGURATION_ERROR
from lerobot_tools_ros.parameters.generate import node_parameters
from lerobot_tools_ros.parameters.spec import (GENERIC_FLOAT_LIMIT, GENERIC_INT_LIMIT,
                                               MAX_SECONDS)
import pytest
from rcl_interfaces.msg import ParameterType, ParameterValue
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from test_parameters import node_args, ParameterClient

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'
EXTREMES = [math.nan, math.inf, -math.inf, 1e308, -1e308, 1e12, float(2 ** 63)]
INT_EXTREMES = [2 ** 63 - 1, -2 ** 63, 10 ** 12]


def _numeric_specs():
    return [(node, spec) for node, specs in node_parameters().items()
            for spec in specs if spec.numeric]


def _id(case) -> str:
    return f'{case[0]}:{case[1].name}'


@pytest.mark.parametrize('case', _numeric_specs(), ids=_id)
def test_every_number_declares_its_own_bounds(case):
    _, spec = case
    assert spec.maximum not in (GENERIC_FLOAT_LIMIT, GENERIC_INT_LIMIT), (
        f'{spec.name} declares no maximum')
    assert spec.minimum is not None or spec.above is not None
    assert spec.constraints() in spec.full_description()


@pytest.mark.parametrize('case', _numeric_specs(), ids=_id)
def test_every_number_refuses_the_extremes(case):
    _, spec = case
    for value in EXTREMES + (INT_EXTREMES if spec.kind == 'int' else []):
        reason = spec.reason(value)
        assert reason and spec.name in reason, (spec.name, value)
    if 'seconds' in spec.description.lower() or spec.name.endswith('_s'):
        assert spec.maximum <= MAX_SECONDS, spec.name


def test_zero_and_negative_are_refused_where_they_mean_nothing():
    specs = {spec.name: spec for _, spec in _numeric_specs()}
    for name in ('timeout_s', 'stream_idle_timeout_s', 'max_pending', 'max_input_bytes',
                 'max_open_streams', 'max_stream_bytes', 'tool.say.timeout_s',
                 'tool.record_observation.timeout_s', 'tool.say.max_chars',
                 'tool.say.playback_timeout_s', 'stall_timeout_s', 'progress_period_s'):
        assert specs[name].reason(0) and specs[name].reason(-0.5), name
    # -1 is the one negative a per-tool limit takes: the dispatcher's global value.
    for setting in ('timeout_s', 'rate_limit_hz', 'burst'):
        assert not specs[f'tool.say.{setting}'].reason(-1)
        assert specs[f'tool.say.{setting}'].reason(-2)


def _double(value: float) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)


def _integer(value: int) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)


def _ros_values(spec) -> list:
    values = [_double(value) for value in EXTREMES]
    if spec.kind == 'int' or 'int' in spec.also:
        values += [_integer(value) for value in INT_EXTREMES]
    return values


@pytest.fixture
def started(start_node, ros_node, tmp_path):
    def start(name: str, *extra: str):
        proc = start_node(f'lerobot_tools_ros.nodes.{name}', *node_args(name, tmp_path), *extra)
        client = ParameterClient(ros_node, name)
        assert client.wait(), proc.output()
        return client, proc
    return start


@pytest.mark.parametrize('node', ['dispatcher', 'tool_server', 'speaker', 'mcp_server'])
def test_live_extremes_are_refused_over_dds(started, node):
    client, proc = started(node)
    declared = set(client.names())
    writable = [spec for spec in node_parameters()[node]
                if spec.numeric and spec.writable and spec.name in declared]
    if node in ('dispatcher', 'tool_server'):
        assert writable, 'no writable number found'
    for spec in writable:
        (before,) = client.get([spec.name])
        for value in _ros_values(spec):
            result = client.set_value(spec.name, value)
            assert not result.successful, (spec.name, value)
            if spec.kind == 'int' and value.type == ParameterType.PARAMETER_DOUBLE:
                continue  # refused by ROS for its type: an integer parameter takes no double
            assert spec.name in result.reason, result.reason
        (after,) = client.get([spec.name])
        assert after == before, spec.name
    assert proc.proc.poll() is None, proc.output()
    if node == 'dispatcher':  # `ros2 param describe` shows the bounds as ROS ranges
        timeout, pending, per_tool = client.describe(['timeout_s', 'max_pending',
                                                      'tool.say.timeout_s'])
        (float_range,) = timeout.floating_point_range
        assert (float_range.from_value, float_range.to_value) == (0.0, MAX_SECONDS)
        (int_range,) = pending.integer_range
        assert (int_range.from_value, int_range.to_value) == (1, 1_000_000)
        # -1 (the global value) lies outside the range: the rule is told in words instead.
        assert not per_tool.floating_point_range
        assert 'or -1' in per_tool.additional_constraints


def test_the_dispatcher_survives_the_largest_timeouts_and_keeps_answering(started, ros_node):
    client, proc = started('dispatcher')
    # The old killers are refused ...
    for name in ('stream_idle_timeout_s', 'tool.say.timeout_s', 'timeout_s'):
        for value in (1e308, 1e12):
            assert not client.set_value(name, _double(value)).successful, name
    # ... and the largest values taken arm deadlines a week away without harm.
    for name in ('stream_idle_timeout_s', 'tool.say.repeat_window_s'):
        assert client.set_value(name, _double(MAX_SECONDS)).successful, name
    assert client.set_value('tool.say.timeout_s', _double(0.5)).successful
    reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    results = []
    ros_node.create_subscription(ToolResult, f'/{names.RESULTS_TOPIC}', results.append, reliable)
    chunks = ros_node.create_publisher(TextChunk, f'/{names.STREAM_TOPIC}', reliable)
    text = ros_node.create_publisher(String, f'/{names.INPUT_TOPIC}', reliable)
    assert spin_until(ros_node, lambda: chunks.get_subscription_count() > 0
                      and text.get_subscription_count() > 0, 20.0)
    chunks.publish(TextChunk(generation_id='g', text='<say>not fini', final=False))
    # No executor runs: the say waits for one until its timeout, then is answered.
    text.publish(String(data='<say>hello</say>'))
    assert spin_until(ros_node, lambda: results, 30.0), proc.output()
    assert results[0].error_code and results[0].name == 'say'
    assert proc.proc.poll() is None, proc.output()
    assert 'Traceback' not in proc.output()


@pytest.mark.parametrize('node, override, message', [
    ('dispatcher', 'stream_idle_timeout_s:=1e308', "'stream_idle_timeout_s' must be"),
    ('dispatcher', 'tool.say.timeout_s:=1e12', "'tool.say.timeout_s' must be"),
    ('dispatcher', 'timeout_s:=.nan', "'timeout_s' must be a finite number"),
    ('dispatcher', 'max_pending:=0', "'max_pending' must be from 1"),
    ('dispatcher', 'burst:=9223372036854775807', "'burst' must be from 0"),
    ('speaker', 'stall_timeout_s:=.inf', "'stall_timeout_s' must be a finite number"),
])
def test_extremes_at_start_stop_the_node_with_one_line(start_node, tmp_path, node, override,
                                                       message):
    proc = start_node(f'lerobot_tools_ros.nodes.{node}', '--params-file', str(PARAMS_FILE),
                      '-p', override)
    assert proc.proc.wait(60) == EXIT_CONFIGURATION_ERROR, proc.output()
    (line,) = [line for line in proc.output().splitlines() if line.startswith(f'[{node}] error')]
    assert message in line, proc.output()
    assert 'Traceback' not in proc.output()


def test_an_extreme_in_a_parameters_file_stops_the_node(start_node, tmp_path):
    path = tmp_path / 'params.yaml'
    path.write_text('/**/dispatcher:\n  ros__parameters:\n    timeout_s: 1.0e+308\n')
    proc = start_node('lerobot_tools_ros.dispatcher.node', '--params-file', str(path))
    assert proc.proc.wait(60) == EXIT_CONFIGURATION_ERROR, proc.output()
    assert "'timeout_s' must be above 0 and at most 604800" in proc.output()


@pytest.mark.parametrize('key, value', [('timeout_s', '1.0e+308'), ('timeout_s', '.inf'),
                                        ('timeout_s', '1.0e+12'), ('server_timeout_s', '.nan'),
                                        ('cancel_timeout_s', '-1')])
def test_a_bindings_file_refuses_extreme_durations(tmp_path, key, value):
    from lerobot_tools_ros.catalog import ToolCatalog
    from lerobot_tools_ros.tools.bindings.loader import load_bindings

    path = tmp_path / 'bindings.yaml'
    path.write_text('bindings:\n  close_gripper:\n    kind: action\n    action: /gripper\n'
                    '    type: lerobot_tools_interfaces/action/CloseGripper\n'
                    f'    {key}: {value}\n')
    with pytest.raises(ValueError, match=rf'close_gripper.*{key}: must be a number'):
        load_bindings(str(path), ToolCatalog.load(None))
