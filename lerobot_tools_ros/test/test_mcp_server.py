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
``lerobot-tools-ros mcp`` against real nodes over DDS, driven by the MCP SDK's own clients.

The stdio client spawns the server as a subprocess in the test's ROS domain; the Streamable HTTP
client talks to a server on 127.0.0.1 at a free port.
"""

import asyncio
import json
import socket
import sys
import time

from conftest import PACKAGE_DIR, spin_until
import pytest
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

SAMPLE = PACKAGE_DIR / 'lerobot_tools_ros' / 'data' / 'sample_dataset' / 'meta' / 'info.json'
WAVE = {'type': 'function', 'function': {
    'name': 'wave', 'description': 'Wave the arm.',
    'parameters': {'type': 'object', 'properties': {'times': {'type': 'integer'}}}}}
TOKEN = 'test-token-0123456789abcdef'


def _mcp():
    """Import the SDK, skipping the test where it is not installed (an optional dependency)."""
    return pytest.importorskip('mcp')


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    info = json.loads(SAMPLE.read_text())
    # Differs from the sample dataset, so a server that read another catalog is caught.
    info['tools'][0]['function']['description'] = 'Speak (test dataset).'
    (root / 'meta' / 'info.json').write_text(json.dumps(info))
    return root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def server_command(*options: str) -> list[str]:
    return [sys.executable, '-m', 'lerobot_tools_ros.cli', 'mcp', *options]


async def within(awaitable, seconds: float = 20.0):
    return await asyncio.wait_for(awaitable, seconds)


def call_service(node, client, request, timeout: float = 10.0):
    assert spin_until(node, client.service_is_ready, timeout)
    future = client.call_async(request)
    assert spin_until(node, future.done, timeout)
    return future.result()


def set_dispatcher_parameter(node, name: str, value) -> None:
    from rcl_interfaces.srv import SetParameters
    client = node.create_client(SetParameters, '/dispatcher/set_parameters')
    response = call_service(node, client, SetParameters.Request(
        parameters=[Parameter(name, value=value).to_parameter_msg()]))
    assert response.results[0].successful, response.results[0].reason


class ListChanges:
    """A message handler counting notifications/tools/list_changed."""

    def __init__(self) -> None:
        self.count = 0
        self.event = asyncio.Event()

    async def __call__(self, message) -> None:
        import mcp_types as types
        root = getattr(message, 'root', message)
        if isinstance(root, types.ToolListChangedNotification):
            self.count += 1
            self.event.set()

    async def wait(self, seconds: float = 15.0) -> None:
        await within(self.event.wait(), seconds)
        self.event.clear()


def test_stdio_lists_the_catalog_and_follows_allowlist_and_reloads(
        start_node, ros_node, ros_env, dataset, tmp_path):
    _mcp()
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from lerobot_tools_ros.catalog import ToolCatalog

    dispatcher = start_node('lerobot_tools_ros.nodes.dispatcher', '-p', f'dataset:={dataset}')
    reload = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, reload.service_is_ready, 20.0), dispatcher.output()
    catalog = ToolCatalog.load(str(dataset))
    changes = ListChanges()

    async def session() -> None:
        command = server_command('--read-only-tools', 'record_observation')
        params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
        with open(tmp_path / 'mcp-stderr.log', 'w') as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=changes) as client:
                    init = await within(client.initialize())
                    assert init.capabilities.tools.list_changed is True
                    listed = (await within(client.list_tools())).tools
                    assert [t.name for t in listed] == catalog.names == ['say',
                                                                         'record_observation']
                    for tool in listed:
                        assert tool.input_schema == catalog.parameters(tool.name)
                        assert tool.description == catalog.description(tool.name)
                    assert listed[0].description == 'Speak (test dataset).'
                    hints = {t.name: (t.annotations.read_only_hint, t.annotations.destructive_hint)
                             for t in listed}
                    assert hints == {'say': (False, False), 'record_observation': (True, False)}

                    # The dispatcher's allowlist narrows the list, at once.
                    set_dispatcher_parameter(ros_node, 'allowed_tools', ['say'])
                    await changes.wait()
                    assert [t.name for t in (await client.list_tools()).tools] == ['say']
                    set_dispatcher_parameter(ros_node, 'allowed_tools',
                                             ['say', 'record_observation', 'wave'])
                    await changes.wait()

                    # A reloaded catalog with a new tool.
                    info = json.loads((dataset / 'meta' / 'info.json').read_text())
                    info['tools'].append(WAVE)
                    (dataset / 'meta' / 'info.json').write_text(json.dumps(info))
                    response = call_service(ros_node, reload, Trigger.Request())
                    assert response.success, response.message
                    await changes.wait()
                    listed = (await client.list_tools()).tools
                    assert [t.name for t in listed] == ['say', 'record_observation', 'wave']
                    assert listed[2].input_schema == WAVE['function']['parameters']

    asyncio.run(session())


def test_http_refuses_a_non_loopback_bind_without_token(start_process, ros_env):
    env = dict(ros_env)
    env.pop('LEROBOT_TOOLS_MCP_TOKEN', None)
    proc = start_process(server_command('--transport', 'http', '--host', '0.0.0.0',
                                        '--port', str(free_port())), env=env, name='mcp')
    assert proc.proc.wait(30) == 1
    output = proc.output()
    assert 'refusing to listen on 0.0.0.0' in output and 'LEROBOT_TOOLS_MCP_TOKEN' in output


def test_short_token_is_refused_at_start(start_process, ros_env, tmp_path):
    token_file = tmp_path / 'token'
    token_file.write_text('guessable')
    proc = start_process(server_command('--transport', 'http', '--port', str(free_port()),
                                        '--token-file', str(token_file)), name='mcp')
    assert proc.proc.wait(30) == 1
    assert 'shorter than 16 characters' in proc.output()


def wait_for_port(port: int, proc, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.proc.poll() is None, proc.output()
        with socket.socket() as sock:
            if sock.connect_ex(('127.0.0.1', port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail('the MCP HTTP server did not start:\n' + proc.output())


def test_http_with_a_token_rejects_missing_and_wrong_tokens(
        start_node, start_process, ros_node, ros_env, dataset):
    _mcp()
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    start_node('lerobot_tools_ros.nodes.dispatcher', '-p', f'dataset:={dataset}')
    port = free_port()
    env = dict(ros_env, MY_MCP_TOKEN=TOKEN)
    proc = start_process(server_command('--transport', 'http', '--port', str(port),
                                        '--token-env', 'MY_MCP_TOKEN'), env=env, name='mcp')
    wait_for_port(port, proc)
    assert 'requests must carry the bearer token' in proc.output()
    url = f'http://127.0.0.1:{port}/mcp'
    initialize = {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
        'protocolVersion': '2025-11-25', 'capabilities': {},
        'clientInfo': {'name': 'test', 'version': '0'}}}
    headers = {'Accept': 'application/json, text/event-stream'}

    async def session() -> None:
        async with httpx2.AsyncClient() as raw:
            missing = await raw.post(url, json=initialize, headers=headers)
            assert missing.status_code == 401
            wrong = await raw.post(url, json=initialize, headers={
                **headers, 'Authorization': 'Bearer ' + TOKEN[:-1] + 'X'})
            assert wrong.status_code == 401
        http = create_mcp_http_client(headers={'Authorization': f'Bearer {TOKEN}'})
        async with http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as client:
                    await within(client.initialize())
                    tools = (await within(client.list_tools())).tools
                    assert [t.name for t in tools] == ['say', 'record_observation']

    asyncio.run(session())
