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
Bindings: the mapping language, the startup check, JSON conversion, and each kind in-process.

The in-process tests bind tools to a host node and call them as tool_server would (with a
``CallContext``), against the real servers of ``robot_servers`` over DDS: feedback relay and
cancellation are checked where the tool meets the robot.
"""

import json
import math
import pathlib
import re
import threading
import time

from conftest import spin_until
from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.tools.base import CallContext
from lerobot_tools_ros.tools.bindings.interfaces import message_to_json, resolve_type
from lerobot_tools_ros.tools.bindings.loader import BindingsError, load_bindings, parse_bindings
import pytest
from robot_servers import BATTERY_TOPIC, CMD_VEL_TOPIC, FAULTY_SERVICE, GRIPPER_ACTION
from robot_servers import LIGHT_SERVICE
from robot_servers import RobotServers


def _tool(name: str, properties: dict, required: list[str] | None = None) -> dict:
    return {'type': 'function', 'function': {
        'name': name, 'description': name,
        'parameters': {'type': 'object', 'properties': properties,
                       'required': required or []}}}


CATALOG = ToolCatalog.from_tools([
    _tool('set_light', {'on': {'type': 'boolean'}}, ['on']),
    _tool('move_gripper', {'steps': {'type': 'integer', 'minimum': 0, 'maximum': 100}},
          ['steps']),
    _tool('drive', {'speed': {'type': 'number'}, 'turn': {'type': 'number', 'default': 0.1},
                    'frame': {'type': 'string'}}),
    _tool('point_at', {'target': {'type': 'object', 'properties': {
        'x': {'type': 'number'}, 'y': {'type': 'number'}}}, 'label': {'type': 'string'}}),
    _tool('pose_joints', {'names': {'type': 'array', 'items': {'type': 'string'}},
                          'a': {'type': 'number'}, 'b': {'type': 'number'}}),
    _tool('set_mode', {'mode': {'type': 'integer'}, 'level': {'type': 'integer'},
                       'ratio': {}}),
    _tool('get_battery', {}),
])


def bind(text: str) -> dict:
    return parse_bindings(text, CATALOG, source='test.yaml')


# ------------------------------------------------------------------------------------ mapping
def test_mapping_fills_constants_arguments_nested_fields_arrays_and_defaults():
    tools = bind("""
bindings:
  drive:
    kind: publish
    topic: /cmd_vel
    type: geometry_msgs/msg/TwistStamped
    message:
      header: {frame_id: base_link}
      twist:
        linear: {x: {$arg: speed, default: 0.2}}
        angular: {z: $turn}
  point_at:
    kind: publish
    topic: /target
    type: geometry_msgs/msg/PointStamped
    message: {header: {frame_id: $$literal}, point: $target}
  pose_joints:
    kind: publish
    topic: /joints
    type: sensor_msgs/msg/JointState
    message: {name: $names, position: [$a, $b, 0.5], velocity: [0.0, 0.0, 0.0]}
""")
    drive = tools['drive'].message
    message = drive.build({'speed': 0.5, 'turn': -0.3})
    assert (message.header.frame_id, message.twist.linear.x, message.twist.angular.z) == (
        'base_link', 0.5, -0.3)
    # Absent optional arguments: the binding's default, then the catalog schema's default.
    message = drive.build({})
    assert (message.twist.linear.x, message.twist.angular.z) == (0.2, 0.1)
    point = tools['point_at'].message.build({'target': {'x': 1.5, 'y': -2}})
    assert (point.point.x, point.point.y, point.point.z) == (1.5, -2.0, 0.0)
    assert point.header.frame_id == '$literal'
    joints = tools['pose_joints'].message.build({'names': ['j1', 'j2', 'j3'], 'a': 1, 'b': 2})
    assert list(joints.name) == ['j1', 'j2', 'j3']
    assert list(joints.position) == [1.0, 2.0, 0.5]
    # Nothing is shared between calls: each call builds a new message.
    assert tools['pose_joints'].message.build({'a': 3, 'b': 4}).position[0] == 3.0
    with pytest.raises(ValueError, match=r'position\[1\].*\$b'):
        tools['pose_joints'].message.build({'a': 1})  # an array item without its argument


def test_default_mapping_fills_fields_named_like_the_arguments():
    tools = bind("""
bindings:
  move_gripper: {kind: action, action: /g, type: test_msgs/action/Fibonacci, goal: {order: $steps}}
  set_mode: {kind: service, service: /mode, type: test_msgs/srv/BasicTypes,
             request: {int8_value: $mode, uint8_value: $level}}
""")
    assert tools['move_gripper'].goal.build({'steps': 7}).order == 7
    request = tools['set_mode'].request.build({'mode': -3, 'level': 200})
    assert (request.int8_value, request.uint8_value) == (-3, 200)


@pytest.mark.parametrize('arguments, message', [
    ({'mode': 128, 'level': 0}, r'int8_value.*128 is out of the int8 range -128\.\.127'),
    ({'mode': 0, 'level': -1}, r'uint8_value.*-1 is out of the uint8 range 0\.\.255'),
    ({'mode': 1.5, 'level': 0}, r'int8_value.*expects an integer'),
    ({'mode': 0, 'level': 0, 'ratio': 10**400}, r'float64_value.*out of the float64 range'),
    ({'mode': 0, 'level': 0, 'ratio': 'fast'}, r'float64_value.*expects a number, got string'),
])
def test_values_the_ros_type_cannot_hold_are_invalid_arguments_before_sending(
        arguments, message):
    tool = bind("""
bindings:
  set_mode: {kind: service, service: /mode, type: test_msgs/srv/BasicTypes,
             request: {int8_value: $mode, uint8_value: $level, float64_value: $ratio}}
""")['set_mode']
    # Not bound to ROS at all: the arguments are refused before anything could be sent.
    with pytest.raises(ToolError, match=message) as caught:
        tool.call(arguments)
    assert caught.value.code == errors.INVALID_ARGUMENTS


# ------------------------------------------------------------------------------ startup check
BAD_FILE = """
bindings:
  set_light: {kind: service, service: /light, type: std_srvs/srv/SetBol}
  move_gripper:
    kind: action
    action: /gripper
    type: test_msgs/action/Fibonacci
    goal: {order: $step, ordr: 3}
    timeout: 3
  drive:
    kind: publish
    topic: /cmd_vel
    type: geometry_msgs/msg/Twist
    message: {linear: {x: $frame, y: fast}}
  set_mode: {kind: service, service: /mode, type: test_msgs/srv/BasicTypes,
             request: {int8_value: 300, uint8_value: $level}}
  point_at: {kind: teleport}
  get_battery: {kind: read, topic: /battery, type: sensor_msgs/msg/BatteryState,
                fields: [percent]}
  fly_away: {kind: service, service: /fly, type: std_srvs/srv/Trigger}
  pose_joints: {kind: publish, topic: /joint states, type: sensor_msgs/msg/JointState,
                message: {name: $names, position: [$a, $b]}}
"""


def test_bad_bindings_file_is_one_error_naming_every_problem():
    with pytest.raises(BindingsError) as caught:
        bind(BAD_FILE)
    problems = caught.value.problems
    expected = [
        r'set_light\.type: unknown type std_srvs/srv/SetBol.*has: Empty, SetBool, Trigger',
        r'move_gripper\.timeout: unknown key',
        r'move_gripper\.goal\.order: \$step is not declared in the catalog schema of tool '
        r"'move_gripper' \(declared: steps\)",
        r"move_gripper\.goal\.ordr: unknown field: .*Fibonacci_Goal has no field 'ordr'",
        r'drive\.message\.linear\.x \(\$frame\): JSON string cannot fill a float64 field',
        r"drive\.message\.linear\.y: constant expects a number, got string 'fast'",
        r'set_mode\.request\.int8_value: constant 300 is out of the int8 range',
        r'point_at\.kind: must be one of service, action, publish, read',
        r"get_battery\.fields: unknown field: .*BatteryState has no field 'percent'",
        r"fly_away: tool 'fly_away' is not in the catalog",
        r"pose_joints\.topic: '/joint states' is not a valid ROS name: topic name must not "
        r'contain characters other than',
    ]
    for pattern in expected:
        assert sum(1 for p in problems if re.search(pattern, p)) == 1, (
            pattern, problems)
    assert len(problems) == len(expected), problems
    text = str(caught.value)
    assert '\n' not in text and text.startswith('bindings file test.yaml: 11 problem(s): (1) ')


def test_schema_ranges_wider_than_the_ros_type_are_startup_problems():
    catalog = ToolCatalog.from_tools([_tool('set_mode', {
        'mode': {'type': 'integer', 'minimum': 0, 'maximum': 1000},
        'level': {'type': 'number'}})])
    with pytest.raises(BindingsError) as caught:
        parse_bindings("""
bindings:
  set_mode: {kind: service, service: /mode, type: test_msgs/srv/BasicTypes,
             request: {uint8_value: $mode, int32_value: $level}}
""", catalog)
    assert len(caught.value.problems) == 2, caught.value.problems
    assert 'allows 0..1000, outside the uint8 range 0..255' in str(caught.value)
    assert 'JSON number cannot fill a int32 field' in str(caught.value)


def test_unreadable_or_malformed_files_are_clear_errors(tmp_path):
    with pytest.raises(BindingsError, match='cannot read'):
        load_bindings(tmp_path / 'missing.yaml', CATALOG)
    with pytest.raises(BindingsError, match='not valid YAML'):
        bind('bindings: {set_light: [unclosed')
    with pytest.raises(BindingsError, match="duplicate key 'set_light'"):
        bind('bindings:\n  set_light: {kind: read}\n  set_light: {kind: read}\n')
    with pytest.raises(BindingsError, match="expected a mapping with the key 'bindings'"):
        bind('- set_light\n')


def test_tool_server_with_a_bad_bindings_file_does_not_start(start_node, tmp_path):
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': CATALOG.tools}))
    path = tmp_path / 'bindings.yaml'
    path.write_text(BAD_FILE)
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[set_light]',
                      '-p', f'dataset:={root}', '-p', f'bindings_file:={path}')
    assert proc.proc.wait(60) == 78  # EXIT_CONFIGURATION_ERROR
    lines = [line for line in proc.output().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f'[tool_server] error: bindings file {path}: 11 problem(s)')
    for name in ('SetBol', 'ordr', '$step', 'int8 range', 'fly_away', 'percent', 'joint states'):
        assert name in lines[0]


# ------------------------------------------------------------------ hostile files
def _alias_bomb(levels: int = 9) -> str:
    """About 1 KB of YAML whose last alias stands for 9^9 (387 million) strings."""
    lines = ['bindings:', '  set_light:', '    kind: service', '    service: /light',
             '    type: std_srvs/srv/SetBool', '    request: {data: $on}',
             '    x0: &a0 [s, s, s, s, s, s, s, s, s]']
    lines += [f'    x{i}: &a{i} [' + ', '.join([f'*a{i - 1}'] * 9) + ']'
              for i in range(1, levels + 1)]
    return '\n'.join(lines) + '\n'


def test_a_yaml_alias_bomb_is_refused_before_it_is_walked(tmp_path):
    path = tmp_path / 'bomb.yaml'
    path.write_text(_alias_bomb())
    assert path.stat().st_size < 1500
    with pytest.raises(BindingsError) as caught:
        load_bindings(path, CATALOG)
    (problem,) = caught.value.problems
    assert 'more than 100000 YAML nodes, aliases counted expanded' in problem
    assert 'line 12' in problem  # x5: where the expansion passed the limit


def test_a_yaml_alias_inside_the_node_it_names_is_refused():
    with pytest.raises(BindingsError, match=r'the alias \*a is inside the node it names'):
        bind('bindings:\n  set_light: &a {kind: read, x: *a}\n')


@pytest.mark.parametrize('style,depth', [('flow', 100), ('flow', 5000), ('block', 100)])
def test_yaml_nested_too_deep_is_one_error_not_a_traceback(style, depth):
    if style == 'flow':
        nested = '[' * depth + ']' * depth
    else:
        nested = ''.join(f'\n{"  " * (level + 2)}k{level}:' for level in range(depth)) + ' 1'
    with pytest.raises(BindingsError) as caught:
        bind('bindings:\n  set_light: ' + nested + '\n')
    (problem,) = caught.value.problems
    assert problem.startswith('not valid YAML: ') and 'nest' in problem, problem


def test_a_bindings_file_over_1_mib_is_not_read(tmp_path):
    path = tmp_path / 'many.yaml'
    with open(path, 'w') as handle:
        handle.write('bindings:\n')
        for index in range(200_000):
            handle.write(f'  tool{index}: {{kind: service}}\n')
    with pytest.raises(BindingsError) as caught:
        load_bindings(path, CATALOG)
    assert caught.value.problems == ['the bindings file is larger than 1 MiB (the limit); a '
                                     'file this large is not read']


def test_the_check_of_a_file_with_thousands_of_bad_entries_stops_after_100_problems():
    text = 'bindings:\n' + ''.join(f'  t{index}: {{}}\n' for index in range(20_000))
    with pytest.raises(BindingsError) as caught:
        bind(text)
    problems = caught.value.problems
    assert len(problems) == 101
    assert problems[-1] == ('checking stopped after 100 problems; 19900 of 20000 entries not '
                            'checked')


def test_the_mcp_server_reads_hostile_bindings_as_no_read_only_tools():
    from lerobot_tools_ros.mcp.listing import read_bindings
    assert read_bindings('bindings:\n  get_battery: {kind: read}\n') == {'get_battery'}
    for text in ('bindings: ' + '[' * 5000 + ']' * 5000, _alias_bomb(),
                 'bindings:\n' + '  x: 1\n' * 200_000):
        assert read_bindings(text) == frozenset()


# ------------------------------------------------------------------------------ JSON results
def test_messages_become_faithful_json():
    battery = resolve_type('sensor_msgs/msg/BatteryState')(
        voltage=math.nan, percentage=0.5, cell_voltage=[3.7, math.inf], serial_number='ü-1')
    battery.header.stamp.sec, battery.header.stamp.nanosec = 1700000000, 5
    data, non_finite = message_to_json(battery)
    assert data['voltage'] is None and data['cell_voltage'] == [pytest.approx(3.7), None]
    assert non_finite == {'voltage': 'NaN', 'cell_voltage[1]': 'Infinity'}
    assert data['header']['stamp'] == {'sec': 1700000000, 'nanosec': 5}
    assert data['serial_number'] == 'ü-1'
    sequences = resolve_type('test_msgs/msg/UnboundedSequences')(
        byte_values=bytes([0, 7, 255]), int64_values=[2**62])
    data, _ = message_to_json(sequences)
    assert data['byte_values'] == [0, 7, 255] and data['int64_values'] == [2**62]
    data, _ = message_to_json(resolve_type('test_msgs/msg/Arrays')())
    assert data['byte_values'] == [0, 0, 0] and data['float64_values_default'] == [
        3.1415, 0.0, -3.1415]
    json.dumps(data, allow_nan=False)


# ----------------------------------------------------------------------- each kind, in-process
@pytest.fixture
def robot(ros_node):
    servers = RobotServers(ros_node.context, step_s=0.1)
    yield servers
    servers.close()


@pytest.fixture
def host(ros_node, robot):
    """Bind tools to a host node like tool_server's (spun by its own thread); close them after."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    node = rclpy.create_node('host', context=ros_node.context)
    executor = SingleThreadedExecutor(context=ros_node.context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    bound = []

    def make(text: str, name: str):
        tool = bind(text)[name]
        tool.bind_ros(node)
        bound.append(tool)
        return tool
    yield make
    for tool in bound:
        tool.close()
    executor.shutdown(timeout_sec=2.0)
    thread.join(5.0)
    node.destroy_node()


GRIPPER = f"""
bindings:
  move_gripper:
    kind: action
    action: {GRIPPER_ACTION}
    type: test_msgs/action/Fibonacci
    goal: {{order: $steps}}
    timeout_s: 10.0
"""


def _recording_context() -> tuple[CallContext, list]:
    reports: list = []
    return CallContext('c1', lambda *report: reports.append(report)), reports


def test_action_feedback_is_relayed_as_json(host, robot):
    tool = host(GRIPPER, 'move_gripper')
    context, reports = _recording_context()
    content = json.loads(tool.call({'steps': 5}, context))
    assert content == {'sequence': [0, 1, 1, 2, 3, 5]}
    assert [stage for stage, _, _ in reports] == ['running'] * 4
    assert [json.loads(detail) for _, _, detail in reports] == [
        {'sequence': [0, 1, 1]}, {'sequence': [0, 1, 1, 2]}, {'sequence': [0, 1, 1, 2, 3]},
        {'sequence': [0, 1, 1, 2, 3, 5]}]


def test_cancelling_the_call_cancels_the_goal_on_the_server(host, robot):
    tool = host(GRIPPER, 'move_gripper')
    context, reports = _recording_context()
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(_attempt(tool, {'steps': 50},
                                                                     context)))
    thread.start()
    assert _wait(lambda: len(reports) >= 2, 10.0)
    context.cancel()
    thread.join(10.0)
    assert isinstance(outcome[0], ToolError) and outcome[0].code == errors.CANCELLED
    assert 'cancelled on the server' in outcome[0].message
    with robot.lock:
        assert robot.cancelled_goals == [50] and robot.finished_goals == []


def test_a_goal_whose_acceptance_is_lost_is_cancelled_by_its_id(host, robot):
    # The server accepts the goal, but its answer is lost on the way (as when the server's side
    # has not matched the client yet): here the client drops the goal response it takes. The
    # binding cannot know the goal runs, so it cancels it by the id it gave it.
    tool = host(GRIPPER.replace('timeout_s: 10.0', 'timeout_s: 1.0'), 'move_gripper')
    client = tool._client
    take = client.take_data

    def take_losing_goal_responses():
        data = take()
        data.pop('goal', None)
        return data
    client.take_data = take_losing_goal_responses
    context, _ = _recording_context()
    error = _attempt(tool, {'steps': 40}, context)
    assert isinstance(error, ToolError) and error.code == errors.TIMEOUT, error
    assert 'never answered the goal request; a cancel for its goal id was accepted' \
        in error.message, error.message
    assert _wait(lambda: robot.cancelled_goals == [40], 10.0), robot.finished_goals
    with robot.lock:
        assert robot.finished_goals == []


def test_close_cancels_a_running_goal(host, robot):
    tool = host(GRIPPER, 'move_gripper')
    context, reports = _recording_context()
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(_attempt(tool, {'steps': 50},
                                                                     context)))
    thread.start()
    assert _wait(lambda: bool(reports), 10.0)
    tool.close()  # what tool_server does at shutdown
    thread.join(10.0)
    assert outcome[0].code == errors.CANCELLED and 'shutting down' in outcome[0].message
    with robot.lock:
        assert robot.cancelled_goals == [50]


def test_read_next_waits_for_a_new_message_and_fields_select(host, robot):
    tool = host(f"""
bindings:
  get_battery: {{kind: read, topic: {BATTERY_TOPIC}, type: sensor_msgs/msg/BatteryState,
                mode: next, timeout_s: 2.0, fields: [header, percentage]}}
""", 'get_battery')
    first = json.loads(tool.call({}))
    second = json.loads(tool.call({}))
    assert set(first) == {'header', 'percentage'}
    stamps = [(m['header']['stamp']['sec'], m['header']['stamp']['nanosec'])
              for m in (first, second)]
    assert stamps[1] > stamps[0]  # "next" never returns the message it already had
    robot.stop_battery()
    time.sleep(0.2)
    with pytest.raises(ToolError) as caught:
        tool.call({})
    assert caught.value.code == errors.NO_FRAME
    assert 'no new message on /robot/battery within 2 s (1 publisher(s))' in caught.value.message


def test_publish_without_subscribers_is_unavailable_and_sends_nothing(host, robot):
    tool = host("""
bindings:
  drive: {kind: publish, topic: /nobody/listens, type: geometry_msgs/msg/Twist,
          message: {linear: {x: $speed}}, timeout_s: 0.3}
""", 'drive')
    with pytest.raises(ToolError) as caught:
        tool.call({'speed': 1.0})
    assert caught.value.code == errors.UNAVAILABLE
    assert '0 subscriber(s) on /nobody/listens after 0.3 s, 1 needed' in caught.value.message


def test_service_binding_returns_the_whole_response_by_default(host, robot):
    tool = host(f"""
bindings:
  set_light: {{kind: service, service: {LIGHT_SERVICE}, type: std_srvs/srv/SetBool,
              request: {{data: $on}}}}
""", 'set_light')
    assert json.loads(tool.call({'on': True})) == {'success': True, 'message': 'light is on'}
    with robot.lock:
        assert robot.light_requests == [True]


def test_cancelled_publish_still_sends_the_final_message(host, robot, ros_node):
    tool = host(f"""
bindings:
  drive: {{kind: publish, topic: {CMD_VEL_TOPIC}, type: geometry_msgs/msg/Twist,
          message: {{linear: {{x: $speed}}}}, repeat: 100, rate_hz: 10.0, final: {{}}}}
""", 'drive')
    context = CallContext('c1')
    threading.Timer(0.35, context.cancel).start()
    with pytest.raises(ToolError) as caught:
        tool.call({'speed': 0.5}, context)
    assert caught.value.code == errors.CANCELLED and 'final message sent' in caught.value.message
    assert spin_until(ros_node, lambda: robot.twists and robot.twists[-1].linear.x == 0.0, 5.0)
    with robot.lock:
        speeds = [twist.linear.x for twist in robot.twists]
    assert 1 <= speeds.count(0.5) < 100 and speeds[-1] == 0.0  # stopped early, then final


def _attempt(tool, arguments: dict, context: CallContext):
    try:
        return tool.call(arguments, context)
    except ToolError as exc:
        return exc


def _wait(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


# ------------------------------------------------------------------------ shipped config files
CONFIG_DIR = pathlib.Path(__file__).resolve().parent.parent / 'config'


def test_example_bindings_file_is_valid_for_its_tools():
    catalog = ToolCatalog.from_tools([
        _tool('set_light', {'on': {'type': 'boolean'}}, ['on']),
        _tool('move_gripper', {'steps': {'type': 'integer', 'minimum': 1, 'maximum': 20}}),
        _tool('drive', {'speed': {'type': 'number'}, 'turn': {'type': 'number'}}, ['speed']),
        _tool('get_battery', {}),
    ])
    tools = load_bindings(CONFIG_DIR / 'bindings_example.yaml', catalog)
    assert {name: tool.KIND for name, tool in tools.items()} == {
        'set_light': 'service', 'move_gripper': 'action', 'drive': 'publish',
        'get_battery': 'read'}
    assert tools['move_gripper'].goal.build({}).order == 5


def test_demo_binding_runs_the_demo_gripper_with_feedback(ros_node):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from lerobot_tools_ros.demo.gripper import DemoGripper
    tool = load_bindings(CONFIG_DIR / 'demo_bindings.yaml', ToolCatalog.load())['close_gripper']
    gripper = DemoGripper(context=ros_node.context,
                          parameter_overrides=[rclpy.parameter.Parameter('step_s', value=0.05)])
    host = rclpy.create_node('host', context=ros_node.context)
    executor = SingleThreadedExecutor(context=ros_node.context)
    for node in (gripper, host):
        executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        tool.bind_ros(host)
        context, reports = _recording_context()
        assert json.loads(tool.call({'steps': 4}, context)) == {
            'openings': [75, 50, 25, 0], 'closed': True}
        assert [json.loads(detail)['openings'] for _, _, detail in reports] == [
            [75], [75, 50], [75, 50, 25], [75, 50, 25, 0]]
        # No steps given: the catalog schema's default (5 steps).
        assert json.loads(tool.call({}))['openings'] == [80, 60, 40, 20, 0]
    finally:
        tool.close()
        executor.shutdown(timeout_sec=2.0)
        thread.join(5.0)
        gripper.destroy_node()
        host.destroy_node()


def test_catalog_arguments_the_binding_ignores_are_reported():
    tools = bind("""
bindings:
  drive: {kind: publish, topic: /cmd_vel, type: geometry_msgs/msg/Twist,
          message: {linear: {x: $speed}}}
  set_light: {kind: service, service: /light, type: std_srvs/srv/SetBool,
              request: {data: $on}}
""")
    assert tools['set_light'].warnings() == []
    (warning,) = tools['drive'].warnings()
    assert 'ignores the argument(s) turn, frame' in warning


def test_action_server_that_is_not_up_is_unavailable_after_its_own_wait(host):
    # Waiting for the server has its own limit: a long goal timeout does not delay the answer.
    tool = host("""
bindings:
  move_gripper: {kind: action, action: /nobody/serves/this, type: test_msgs/action/Fibonacci,
                 goal: {order: $steps}, server_timeout_s: 0.4, timeout_s: 40.0}
""", 'move_gripper')
    with pytest.raises(ToolError) as caught:
        tool.call({'steps': 3})
    assert caught.value.code == errors.UNAVAILABLE
    assert ('action server /nobody/serves/this (test_msgs/action/Fibonacci) is not available '
            '(waited 0.4 s)') in caught.value.message


def test_tool_server_shutdown_cancels_a_running_goal(start_node, ros_node, robot, tmp_path):
    from lerobot_tools_interfaces.srv import CallTool
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': CATALOG.tools}))
    path = tmp_path / 'bindings.yaml'
    path.write_text(GRIPPER)
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[move_gripper]',
                      '-p', f'dataset:={root}', '-p', f'bindings_file:={path}')
    client = ros_node.create_client(CallTool, '/lerobot_tools/move_gripper')
    assert spin_until(ros_node, client.service_is_ready, 30.0), proc.output()
    spin_until(ros_node, lambda: False, 0.5)  # let the response path match too
    client.call_async(CallTool.Request(call_id='long', name='move_gripper',
                                       arguments='{"steps": 80}'))
    assert spin_until(ros_node, lambda: 80 in robot.goals, 10.0), proc.output()
    assert proc.stop() == 0  # Ctrl-C while the goal runs on the robot
    with robot.lock:
        assert robot.cancelled_goals == [80] and robot.finished_goals == []


def test_service_failures_are_execution_failed_or_timeout(host, robot):
    tool = host(f"""
bindings:
  set_light: {{kind: service, service: {FAULTY_SERVICE}, type: std_srvs/srv/SetBool,
              request: {{data: $on}}, result: {{success: success, message: message}},
              timeout_s: 1.0}}
""", 'set_light')
    with pytest.raises(ToolError) as caught:
        tool.call({'on': True})
    assert caught.value.code == errors.EXECUTION_FAILED
    assert caught.value.message.endswith('answered success=false: motor fault')
    with pytest.raises(ToolError) as caught:
        tool.call({'on': False})  # this one answers after 3 s
    assert caught.value.code == errors.TIMEOUT
    assert 'did not answer within 1 s (the request was sent)' in caught.value.message


class SlowSwitch:
    """A SetBool service of the test's own: data=true answered at once, data=false after 2 s."""

    NAME = '/robot/slow_switch'
    OFF_DELAY_S = 2.0

    def __init__(self, context) -> None:
        import rclpy
        from rclpy.callback_groups import ReentrantCallbackGroup
        from rclpy.executors import MultiThreadedExecutor
        from std_srvs.srv import SetBool
        self.offs_answered = 0
        self.node = rclpy.create_node('slow_switch', context=context)
        self.node.create_service(SetBool, self.NAME, self._handle,
                                 callback_group=ReentrantCallbackGroup())
        self.executor = MultiThreadedExecutor(num_threads=2, context=context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _handle(self, request, response):
        if not request.data:
            time.sleep(self.OFF_DELAY_S)
            self.offs_answered += 1
        response.success = True
        response.message = 'late answer to off' if not request.data else 'on, answered now'
        return response

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=2.0)
        self.thread.join(5.0)
        self.node.destroy_node()


@pytest.fixture
def slow_switch(ros_node):
    switch = SlowSwitch(ros_node.context)
    yield switch
    switch.close()


def _switch_binding(timeout_s: float, result: str = '') -> str:
    return f"""
bindings:
  set_light: {{kind: service, service: {SlowSwitch.NAME}, type: std_srvs/srv/SetBool,
              request: {{data: $on}}, timeout_s: {timeout_s}{result}}}
"""


def _prove(tool) -> None:
    """Call 'on' until answered: a fresh client's first answers can be lost (see conftest)."""
    for _ in range(20):
        try:
            if 'on, answered now' in tool.call({'on': True}):
                return
        except ToolError as exc:
            assert exc.code in (errors.TIMEOUT, errors.UNAVAILABLE), exc.message
    pytest.fail('the slow switch never answered')


def test_a_late_answer_to_a_timed_out_request_is_not_the_next_calls_answer(host, slow_switch):
    tool = host(_switch_binding(1.0, ', result: {message: message}'), 'set_light')
    _prove(tool)
    with pytest.raises(ToolError) as caught:
        tool.call({'on': False})
    assert caught.value.code == errors.TIMEOUT
    # The answer to that request arrives meanwhile, unclaimed.
    waited_until = time.monotonic() + 5.0
    while slow_switch.offs_answered < 1 and time.monotonic() < waited_until:
        time.sleep(0.05)
    assert slow_switch.offs_answered == 1
    time.sleep(0.3)
    assert tool.call({'on': True}) == 'on, answered now'


def test_cancelling_a_call_ends_its_wait_for_the_service_answer(host, slow_switch):
    tool = host(_switch_binding(5.0), 'set_light')
    _prove(tool)
    context, _ = _recording_context()
    threading.Timer(0.2, context.cancel).start()
    started = time.monotonic()
    with pytest.raises(ToolError) as caught:
        tool.call({'on': False}, context)
    assert caught.value.code == errors.CANCELLED
    assert 'while waiting for the answer' in caught.value.message
    assert time.monotonic() - started < 1.5  # not the 2 s answer, nor the 5 s timeout


def test_a_server_that_comes_up_during_the_call_is_used_at_once(host, ros_node):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import SetBool
    tool = host("""
bindings:
  set_light: {kind: service, service: /robot/late_switch, type: std_srvs/srv/SetBool,
              request: {data: $on}, result: {message: message}, timeout_s: 8.0}
""", 'set_light')
    late: dict = {'requests': []}

    def handle(request, response):
        late['requests'].append(time.monotonic())
        return SetBool.Response(success=True, message='up late')

    def come_up() -> None:
        node = late['node'] = rclpy.create_node('late_switch', context=ros_node.context)
        node.create_service(SetBool, '/robot/late_switch', handle)
        executor = late['executor'] = SingleThreadedExecutor(context=ros_node.context)
        executor.add_node(node)
        late['thread'] = threading.Thread(target=executor.spin, daemon=True)
        late['thread'].start()
    timer = threading.Timer(0.5, come_up)
    timer.start()
    started = time.monotonic()
    try:
        try:
            assert tool.call({'on': True}) == 'up late'
        except ToolError as exc:  # the answer to a fresh client's first request can be lost
            assert exc.code == errors.TIMEOUT, exc.message
        # The request went out when the server appeared, not at the end of timeout_s (the call
        # then sent it with no time left and reported a timeout although the server was there).
        assert late['requests'] and late['requests'][0] - started < 4.0
    finally:
        timer.join(5.0)  # the server is up (and can be stopped) once come_up has run
        if 'executor' in late:
            late['executor'].shutdown(timeout_sec=2.0)
            late['thread'].join(5.0)
            late['node'].destroy_node()


@pytest.mark.parametrize('called', [0, 1])
def test_a_shutdown_ends_the_wait_for_a_service_answer(ros_domain, slow_switch, called):
    import rclpy
    from rclpy.executors import ExternalShutdownException
    context = rclpy.Context()  # the host's own, so shutting it down leaves the server up
    rclpy.init(context=context, domain_id=ros_domain)
    node = rclpy.create_node('host_to_shut_down', context=context)
    # Two bindings (two client nodes), as a tool_server has: a shutdown destroys the context's
    # nodes before it calls back, and may do so for one of them only (Kilted); either way the
    # wait ends.
    tools = [bind(_switch_binding(1.0))['set_light'] for _ in range(2)]
    try:
        for tool in tools:
            tool.bind_ros(node)
        tool = tools[called]
        _prove(tool)
        threading.Timer(0.2, rclpy.shutdown, kwargs={'context': context}).start()
        started = time.monotonic()
        with pytest.raises(ExternalShutdownException):
            tool.call({'on': False})  # its answer would take 2 s, the timeout 1 s
        assert time.monotonic() - started < 0.9
    finally:
        for tool in tools:
            tool.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_rejected_and_aborted_goals_are_execution_failed(host, robot):
    tool = host(GRIPPER, 'move_gripper')
    with pytest.raises(ToolError) as caught:
        tool.call({'steps': -1})
    assert caught.value.code == errors.EXECUTION_FAILED
    assert 'rejected the goal' in caught.value.message
    with pytest.raises(ToolError) as caught:
        tool.call({'steps': 13})
    assert caught.value.code == errors.EXECUTION_FAILED
    assert 'the goal aborted; result {"sequence": [13]}' in caught.value.message


def test_model_text_with_lone_surrogates_becomes_a_valid_ros_string():
    tool = bind("""
bindings:
  point_at: {kind: publish, topic: /target, type: geometry_msgs/msg/PointStamped,
             message: {header: {frame_id: $label}, point: $target}}
""")['point_at']
    message = tool.message.build({'label': 'cup\ud800', 'target': {}})
    assert message.header.frame_id == 'cup\ufffd'
    message.header.frame_id.encode('utf-8')  # what serialization needs
