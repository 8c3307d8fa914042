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
The dispatcher's tool.<name>.<setting> parameters follow its catalog across reloads.

A real dispatcher process; the test reads its parameters through the rcl_interfaces parameter
services, as `ros2 param list/get/describe` do. Before: a removed tool's parameters stayed
declared forever, and a large catalog's parameters were declared in one block on the dispatch
thread (5.4 s for 10,000 tools) while calls waited.
"""

import json
import pathlib

from conftest import prove_service, spin_until
from lerobot_tools_interfaces.msg import ErrorCodes
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.names import READINESS_PROBE
from lerobot_tools_ros.parameters.declarations import PER_TOOL_SETTINGS
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
from rcl_interfaces.msg import ParameterEvent
from rclpy.parameter import parameter_value_to_python
from std_srvs.srv import Trigger
from test_parameters import ParameterClient

SETTINGS = PER_TOOL_SETTINGS


def _tool(name: str, index: int = 0) -> dict:
    return {'type': 'function', 'function': {
        'name': name, 'description': f'Tool {name}.', 'parameters': {
            'type': 'object', 'properties': {'target': {'type': 'string',
                                                        'maxLength': 64 + index}},
            'required': ['target']}}}


def _write(info: pathlib.Path, tools: list[dict]) -> None:
    info.write_text(json.dumps({'codebase_version': 'v3.0', 'fps': 30, 'features': {},
                                'tools': tools}))


def _tool_parameters(params: ParameterClient, tool: str) -> set[str]:
    return {name for name in params.names() if name.startswith(f'tool.{tool}.')}


def _value(params: ParameterClient, name: str):
    (value,) = params.get([name])
    return parameter_value_to_python(value)


def _start(start_node, ros_node, tmp_path, tools: list[dict], *args: str):
    info = tmp_path / 'dataset' / 'meta' / 'info.json'
    info.parent.mkdir(parents=True)
    _write(info, tools)
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node',
                            '-p', f'dataset:={info.parent.parent}', *args)
    params = ParameterClient(ros_node, 'dispatcher')
    assert params.wait(), dispatcher.output()
    reload = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, reload.service_is_ready, 30.0), dispatcher.output()
    return info, dispatcher, params, reload


def _reload(ros_node, reload, dispatcher, timeout: float = 60.0) -> Trigger.Response:
    future = reload.call_async(Trigger.Request())
    assert spin_until(ros_node, future.done, timeout), dispatcher.output()[-3000:]
    return future.result()


def test_reload_undeclares_a_removed_tools_parameters_and_declares_a_new_ones_with_overrides(
        start_node, ros_node, tmp_path):
    overrides = tmp_path / 'params.yaml'
    overrides.write_text(
        'dispatcher:\n  ros__parameters:\n    tool:\n'
        '      say: {repeat_window_s: 7.5}\n'
        '      arrived: {timeout_s: 4.0, approval: confirm}\n')
    info, dispatcher, params, reload = _start(
        start_node, ros_node, tmp_path, [ECHO_SCHEMA, *DEFAULT_TOOLS],
        '--params-file', str(overrides))
    say = {f'tool.say.{setting}' for setting in SETTINGS}
    assert _tool_parameters(params, 'say') == say
    assert _value(params, 'tool.say.repeat_window_s') == 7.5  # from the parameters file
    assert all(d.description for d in params.describe(sorted(say)))

    # say removed, arrived added: say's parameters are gone, arrived's carry the file's values.
    _write(info, [ECHO_SCHEMA, *[t for t in DEFAULT_TOOLS if t['function']['name'] != 'say'],
                  _tool('arrived')])
    reloaded = _reload(ros_node, reload, dispatcher)
    assert reloaded.success, reloaded.message
    assert "added ['arrived'], removed ['say']" in reloaded.message
    names = set(params.names())
    assert not {name for name in names if name.startswith('tool.say.')}, sorted(names)
    assert {f'tool.echo.{setting}' for setting in SETTINGS} <= names  # kept tools keep theirs
    assert _tool_parameters(params, 'arrived') == {f'tool.arrived.{s}' for s in SETTINGS}
    assert _value(params, 'tool.arrived.timeout_s') == 4.0
    assert _value(params, 'tool.arrived.approval') == 'confirm'
    assert _value(params, 'tool.arrived.rate_limit_hz') == -1.0  # -1: the global value

    # Back: say is declared again, with the parameters file's value again.
    _write(info, [ECHO_SCHEMA, *DEFAULT_TOOLS])
    back = _reload(ros_node, reload, dispatcher)
    assert back.success and "added ['say'], removed ['arrived']" in back.message, back.message
    assert _tool_parameters(params, 'say') == say
    assert _value(params, 'tool.say.repeat_window_s') == 7.5
    assert not _tool_parameters(params, 'arrived')


def test_a_new_tools_bad_setting_keeps_the_old_catalog(start_node, ros_node, tmp_path):
    info, dispatcher, params, reload = _start(
        start_node, ros_node, tmp_path, [ECHO_SCHEMA, *DEFAULT_TOOLS],
        '-p', 'tool.arrived.timeout_s:=-2.0')
    _write(info, [ECHO_SCHEMA, *DEFAULT_TOOLS, _tool('arrived')])
    refused = _reload(ros_node, reload, dispatcher)
    assert not refused.success
    assert refused.message.startswith('kept the old catalog: a new tool has a bad setting: ')
    assert ("parameter 'tool.arrived.timeout_s' must be above 0 and at most 604800, or -1, "
            'got -2.0') in refused.message
    assert not _tool_parameters(params, 'arrived')


def test_a_call_during_a_large_reload_is_not_held_until_every_parameter_is_declared(
        start_node, ros_node, tmp_path):
    info, dispatcher, params, reload = _start(start_node, ros_node, tmp_path,
                                              [ECHO_SCHEMA, *DEFAULT_TOOLS])
    call = ros_node.create_client(CallTool, '/dispatcher/call')
    prove_service(ros_node, call, CallTool.Request(name=READINESS_PROBE))
    declared: list[str] = []

    def on_event(event: ParameterEvent) -> None:
        if event.node == '/dispatcher':
            declared.extend(p.name for p in event.new_parameters)
    events = ros_node.create_subscription(ParameterEvent, '/parameter_events', on_event, 1000)
    count = 1000  # 5,000 parameters: seconds of declarations here, milliseconds for one call
    _write(info, [ECHO_SCHEMA, *DEFAULT_TOOLS, *(_tool(f'tool_{i}', i) for i in range(count))])
    reloaded = reload.call_async(Trigger.Request())
    # The first declaration of a new tool's parameters: the new catalog has been swapped in.
    assert spin_until(ros_node, lambda: bool(declared), 60.0), dispatcher.output()[-3000:]
    # Stop listening: thousands of events, one callback each on this node, would hold up the
    # call's answer and the parameter query below while the declarations go on.
    ros_node.destroy_subscription(events)
    # A call of the tool whose parameters come last: checked against the new catalog at once.
    future = call.call_async(CallTool.Request(name=f'tool_{count - 1}', arguments='{}'))
    assert spin_until(ros_node, future.done, 60.0), dispatcher.output()[-3000:]
    answer = future.result()
    assert answer.error_code == ErrorCodes.INVALID_ARGUMENTS, answer
    assert 'target' in answer.error_message
    # The order of events: answered while the declarations were still going on. Before, the
    # call waited for all 5,000 of them (and the reload answered first).
    assert not reloaded.done(), reloaded.result()
    assert not _tool_parameters(params, f'tool_{count - 1}')
    assert spin_until(ros_node, reloaded.done, 120.0), dispatcher.output()[-3000:]
    assert reloaded.result().success, reloaded.result().message
    names = set(params.names())
    assert all(f'tool.tool_{i}.timeout_s' in names for i in range(count))
