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

"""tool_server as a real process, called over DDS with the built CallTool interface."""

import json
import pathlib
import time

from conftest import spin_until
from lerobot_tools_interfaces.msg import ErrorCodes
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest


@pytest.fixture
def echo_dataset(tmp_path) -> pathlib.Path:
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    info = {'codebase_version': 'v3.0', 'fps': 30, 'features': {},
            'tools': [ECHO_SCHEMA, *DEFAULT_TOOLS]}
    (root / 'meta' / 'info.json').write_text(json.dumps(info))
    return root


def call(node, client, name: str, arguments, call_id: str = 'c1', timeout: float = 15.0,
         first: bool = False):
    """
    Call a CallTool service and return the response.

    `first`: right after discovery an answer can be lost while the server's response writer
    matches our reader, so the request is repeated (once a second) until one comes back.
    """
    request = CallTool.Request(call_id=call_id, name=name,
                               arguments=arguments if isinstance(arguments, str)
                               else json.dumps(arguments))
    for _ in range(int(timeout) if first else 1):
        future = client.call_async(request)
        if spin_until(node, future.done, 1.0 if first else timeout):
            return future.result()
        client.remove_pending_request(future)
    raise AssertionError(f'no answer to {name}({arguments})')


@pytest.fixture
def echo_server(start_node, ros_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.nodes.tool_server',
                      '-p', 'tools:=[echo]', '-p', f'dataset:={echo_dataset}')
    client = ros_node.create_client(CallTool, '/lerobot_tools/echo')
    if not spin_until(ros_node, client.service_is_ready, 20.0):
        pytest.fail('tool_server did not come up:\n' + proc.output())
    # service_is_ready() sees the request path only; the first answers can still be lost
    # while the server's response writer matches our reader. Probe until one comes back.
    for _ in range(20):
        future = client.call_async(CallTool.Request(call_id='probe', name='echo',
                                                    arguments='{}'))
        if spin_until(ros_node, future.done, 1.0):
            break
        client.remove_pending_request(future)
    else:
        pytest.fail('tool_server never answered:\n' + proc.output())
    return proc, client


def test_two_processes_talk_call_tool_over_dds(ros_node, echo_server):
    _, client = echo_server
    response = call(ros_node, client, 'echo', {'text': 'hello'}, call_id='abc')
    assert response.success, response.error_message
    assert response.call_id == 'abc'
    assert json.loads(response.content) == {'text': 'hello'}
    assert response.error_code == ''


def test_invalid_arguments_are_answered_not_executed(ros_node, echo_server):
    _, client = echo_server
    response = call(ros_node, client, 'echo', {'delay_s': 'soon'})
    assert not response.success
    assert response.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert 'delay_s' in response.error_message
    response = call(ros_node, client, 'echo', '{not json')
    assert response.error_code == ErrorCodes.INVALID_ARGUMENTS


def test_wrong_name_for_the_service_is_unknown_tool(ros_node, echo_server):
    _, client = echo_server
    response = call(ros_node, client, 'say', {'text': 'hi'})
    assert response.error_code == ErrorCodes.UNKNOWN_TOOL
    assert '/lerobot_tools/say' in response.error_message


def test_tool_exception_is_execution_failed_and_server_survives(ros_node, echo_server):
    proc, client = echo_server
    response = call(ros_node, client, 'echo', {'fail': 'gripper jammed'})
    assert response.error_code == ErrorCodes.EXECUTION_FAILED
    assert 'gripper jammed' in response.error_message
    assert proc.proc.poll() is None
    assert call(ros_node, client, 'echo', {'text': 'still here'}).success


def test_a_slow_tool_does_not_block_another_tool(start_node, ros_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.nodes.tool_server', '-p', 'tools:=[echo, say]',
                      '-p', f'dataset:={echo_dataset}', '-p', 'tool.say.backend:=espeak_ng')
    echo = ros_node.create_client(CallTool, '/lerobot_tools/echo')
    say = ros_node.create_client(CallTool, '/lerobot_tools/say')
    for client in (echo, say):
        assert spin_until(ros_node, client.service_is_ready, 30.0), proc.output()
        call(ros_node, client, client.srv_name.rsplit('/', 1)[-1], '{"text": "warm up"}',
             first=True)
    started = time.monotonic()
    slow = echo.call_async(CallTool.Request(call_id='slow', name='echo',
                                            arguments=json.dumps({'delay_s': 1.5})))
    second_slow = echo.call_async(CallTool.Request(call_id='slow2', name='echo',
                                                   arguments=json.dumps({'delay_s': 0.1})))
    spoken = say.call_async(CallTool.Request(call_id='say', name='say',
                                             arguments=json.dumps({'text': 'meanwhile'})))
    assert spin_until(ros_node, spoken.done, 10.0)
    assert spoken.result().success, spoken.result().error_message
    assert not slow.done()  # say answered while echo was still busy
    assert spin_until(ros_node, second_slow.done, 10.0)
    # Calls of one tool run one after another: the second echo waited for the first.
    assert slow.done() and time.monotonic() - started >= 1.5
    assert slow.result().success and second_slow.result().success


def test_unknown_tool_in_parameters_fails_with_a_clear_message(start_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.nodes.tool_server',
                      '-p', 'tools:=[ech]', '-p', f'dataset:={echo_dataset}')
    assert proc.proc.wait(30) == 1
    assert "did you mean 'echo'" in proc.output()


def test_tool_names_that_ros_forbids_map_to_valid_service_names():
    from lerobot_tools_ros.names import tool_service_name
    assert tool_service_name('lerobot_tools', 'say') == 'lerobot_tools/say'
    assert tool_service_name('/lerobot_tools/', 'pick-up.v2') == '/lerobot_tools/pick_up_v2'
    assert tool_service_name('', 'say') == 'say'


def test_catalog_tool_with_dashes_is_dispatched_to_its_mapped_service(start_node, ros_node,
                                                                      tmp_path):
    from lerobot_tools_interfaces.msg import ToolResult
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    root = tmp_path / 'dashes'
    (root / 'meta').mkdir(parents=True)
    pick_up = {'type': 'function', 'function': {
        'name': 'pick-up', 'parameters': {'type': 'object', 'properties': {}}}}
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [pick_up]}))
    proc = start_node('lerobot_tools_ros.nodes.dispatcher', '-p', f'dataset:={root}',
                      '-p', 'timeout_s:=0.5')
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    results = []
    ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append, qos)
    pub = ros_node.create_publisher(String, '/policy/text', qos)
    text = '<tool_call>{"name": "pick-up", "arguments": {}}</tool_call>'
    for _ in range(40):
        pub.publish(String(data=text))
        if spin_until(ros_node, lambda: bool(results), 1.0):
            break
    assert results, proc.output()
    assert results[0].error_code == ErrorCodes.UNAVAILABLE
    assert '/lerobot_tools/pick_up' in results[0].error_message


def test_third_party_tool_from_an_entry_point_is_served_over_dds(start_node, ros_node,
                                                                 ros_env, tmp_path):
    from test_tools_registry import install_distribution, WAVE_MODULE
    plugins = tmp_path / 'site'
    plugins.mkdir()
    install_distribution(plugins, 'wave = example_tool_pkg.wave:WaveTool\n',
                         {'wave': WAVE_MODULE})
    root = tmp_path / 'wave_dataset'
    (root / 'meta').mkdir(parents=True)
    wave = {'type': 'function', 'function': {'name': 'wave', 'parameters': {
        'type': 'object', 'properties': {'times': {'type': 'integer'}}}}}
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [wave]}))
    env = dict(ros_env, PYTHONPATH=f'{plugins}:{ros_env["PYTHONPATH"]}')
    proc = start_node('lerobot_tools_ros.nodes.tool_server', '-p', 'tools:=[wave]',
                      '-p', f'dataset:={root}', env=env)
    client = ros_node.create_client(CallTool, '/lerobot_tools/wave')
    assert spin_until(ros_node, client.service_is_ready, 20.0), proc.output()
    for _ in range(20):
        future = client.call_async(CallTool.Request(call_id='w', name='wave',
                                                    arguments='{"times": 3}'))
        if spin_until(ros_node, future.done, 1.0):
            break
        client.remove_pending_request(future)
    assert future.done(), proc.output()
    assert future.result().success, future.result().error_message
    assert json.loads(future.result().content) == {'waved': 3, 'arm': 'left'}


def test_namespace_and_node_rename_move_the_services(start_node, ros_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.nodes.tool_server', '-r', '__ns:=/robot1',
                      '-r', '__node:=arm_tools', '-p', 'tools:=[echo]',
                      '-p', f'dataset:={echo_dataset}')
    client = ros_node.create_client(CallTool, '/robot1/lerobot_tools/echo')
    assert spin_until(ros_node, client.service_is_ready, 20.0), proc.output()
    assert call(ros_node, client, 'echo', {'text': 'ns'}, first=True).success
    expected = {('arm_tools', '/robot1'), ('arm_tools_echo', '/robot1')}  # + the tool's node

    def nodes() -> set:
        return set(ros_node.get_node_names_and_namespaces())
    assert spin_until(ros_node, lambda: expected <= nodes(), 10.0), nodes()
