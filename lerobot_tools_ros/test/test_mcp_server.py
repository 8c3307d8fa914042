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
import contextlib
import json
import pathlib
import signal
import socket
import sys
import time

from conftest import PACKAGE_DIR, prove_service, spin_until
from lerobot_tools_ros.catalog import ToolCatalog
import pytest
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

SAMPLE = PACKAGE_DIR / 'lerobot_tools_ros' / 'data' / 'sample_dataset' / 'meta' / 'info.json'
WAVE = {'type': 'function', 'function': {
    'name': 'wave', 'description': 'Wave the arm.',
    'parameters': {'type': 'object', 'properties': {'times': {'type': 'integer'}}}}}
TOKEN = 'test-token-0123456789abcdef'
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


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


async def within(awaitable, seconds: float = 45.0):
    # A bound on a hang, not a timing: a server starting beside other tests' processes may take
    # tens of seconds to import the SDK and answer its first request.
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

    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
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
                    assert [t.name for t in listed] == catalog.names
                    assert {'say', 'record_observation'} <= set(catalog.names)
                    for tool in listed:  # optional arguments also take null (strict mode)
                        schema = catalog.parameters(tool.name)
                        assert tool.input_schema['required'] == schema['required']
                        assert set(tool.input_schema['properties']) == set(schema['properties'])
                        assert catalog.description(tool.name) in tool.description
                    assert listed[0].description.endswith('Speak (test dataset).')
                    hints = {t.name: (t.annotations.read_only_hint, t.annotations.destructive_hint)
                             for t in listed}
                    assert hints['say'] == (None, None)  # nothing declared: no claim
                    # Configured read-only here (--read-only-tools): the operator's word wins.
                    assert hints['record_observation'] == (True, None)

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
                    assert listed[2].input_schema == WAVE['function']['parameters'] | {
                        'properties': {'times': {'anyOf': [{'type': 'integer'},
                                                           {'type': 'null'}]}}}

    asyncio.run(session())


def test_http_refuses_a_non_loopback_bind_without_token(start_process, ros_env):
    env = dict(ros_env)
    env.pop('LEROBOT_TOOLS_MCP_TOKEN', None)
    proc = start_process(server_command('--transport', 'http', '--host', '0.0.0.0',
                                        '--port', str(free_port())), env=env, name='mcp')
    assert proc.proc.wait(30) == 1
    output = proc.output()
    assert 'refusing to listen on 0.0.0.0' in output and 'LEROBOT_TOOLS_MCP_TOKEN' in output


def test_node_executable_refuses_a_short_token_from_its_parameters(start_node, tmp_path):
    # As a launch file starts it: the mcp_server node with ROS parameters.
    token_file = tmp_path / 'token'
    token_file.write_text('guessable')
    proc = start_node('lerobot_tools_ros.mcp.server', '-p', 'transport:=http', '-p',
                      f'port:={free_port()}', '-p', f'token_file:={token_file}')
    assert proc.proc.wait(30) == 1
    assert 'shorter than 16 characters' in proc.output()


def test_ctrl_c_while_the_server_starts_stops_it_cleanly(start_node, ros_node):
    # Ctrl-C (or a launch shutdown) once the node is up, while the MCP SDK still loads: once,
    # asyncio's own handler cancelled the start half way and the process never ended.
    proc = start_node('lerobot_tools_ros.mcp.server', '-p', 'transport:=http', '-p',
                      f'port:={free_port()}')
    from rcl_interfaces.srv import ListParameters
    # Answered by this process's node: it is up (the SDK loads after the node starts).
    client = ros_node.create_client(ListParameters, '/mcp_server/list_parameters')
    prove_service(ros_node, client, ListParameters.Request(), output=proc.output)
    assert proc.stop(signal.SIGINT, timeout=20.0) == 0, proc.output()
    assert 'Traceback' not in proc.output()


def wait_for_port(port: int, proc, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.proc.poll() is None, proc.output()
        with socket.socket() as sock:
            if sock.connect_ex(('127.0.0.1', port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail('the MCP HTTP server did not start:\n' + proc.output())


def test_http_with_a_token_rejects_missing_and_wrong_tokens_and_huge_requests(
        start_node, start_process, ros_node, ros_env, dataset):
    _mcp()
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from std_srvs.srv import SetBool

    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
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
            # RFC 9728: the 401 names metadata saying "a bearer token in the header", no OAuth,
            # and says plainly, to a user reading the client's error, what is needed.
            metadata_url = f'http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp'
            challenge = missing.headers['www-authenticate']
            assert challenge.startswith('Bearer ') and 'a bearer token is needed' in challenge
            assert challenge.endswith(f'resource_metadata="{metadata_url}"')
            assert 'needs a bearer token' in missing.json()['error_description']
            assert 'Authorization: Bearer <token>' in missing.json()['error_description']
            metadata = (await raw.get(metadata_url)).json()
            assert metadata['resource'] == url and metadata['bearer_methods_supported'] == [
                'header'] and 'authorization_servers' not in metadata
            # resource_documentation is a URL when present (RFC 9728), never prose.
            assert metadata.get('resource_documentation', 'http://').startswith('http')
            wrong = await raw.post(url, json=initialize, headers={
                **headers, 'Authorization': 'Bearer ' + TOKEN[:-1] + 'X'})
            assert wrong.status_code == 401
            huge = dict(initialize, params=dict(initialize['params'], padding='x' * 1100000))
            too_large = await raw.post(url, json=huge, headers={
                **headers, 'Authorization': f'Bearer {TOKEN}'})
            assert too_large.status_code == 413
            # A request nested deeper than the SDK reads is answered with an error, not dropped.
            auth = {**headers, 'Authorization': f'Bearer {TOKEN}'}
            opened = await raw.post(url, json=initialize, headers=auth)
            assert opened.status_code == 200, opened.text
            session_headers = {**auth, 'mcp-session-id': opened.headers['mcp-session-id'],
                               'mcp-protocol-version': '2025-11-25'}
            await raw.post(url, json={'jsonrpc': '2.0', 'method': 'notifications/initialized'},
                           headers=session_headers)
            nested = ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
                      '"say", "arguments": {"text": ' + '[' * 300 + ']' * 300 + '}}}')
            deep = await within(raw.post(url, content=nested, headers={
                **session_headers, 'Content-Type': 'application/json'}))
            answer = _json_rpc_answer(deep)
            # A body that cannot be parsed gets a parse error with id null (JSON-RPC 2.0).
            assert answer['id'] is None and answer['error']['code'] == -32700, answer
            assert 'recursion limit' in answer['error']['message'], answer
        http = create_mcp_http_client(headers={'Authorization': f'Bearer {TOKEN}'})
        async with http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as client:
                    await within(client.initialize())
                    tools = (await within(client.list_tools())).tools
                    assert [t.name for t in tools] == ToolCatalog.load(str(dataset)).names
                    # A call over HTTP passes the dispatcher's gates too (here: paused).
                    call_service(ros_node, enable, SetBool.Request(data=False))
                    paused = await within(client.call_tool('say', {'text': 'over http'}))
                    assert paused.is_error and text_of(paused).startswith('paused: ')

    enable = ros_node.create_client(SetBool, '/dispatcher/set_enabled')
    asyncio.run(session())


def _json_rpc_answer(response) -> dict:
    """Return the JSON-RPC message of an HTTP answer, sent as JSON or as one server event."""
    if response.headers.get('content-type', '').startswith('text/event-stream'):
        data = [line[5:].strip() for line in response.text.splitlines()
                if line.startswith('data:')]
        return json.loads(data[0])
    return response.json()


# -- calls through the whole stack (dispatcher ~/call, tool_server, speaker, demo camera) ------

def params_file(tmp_path, **approvals: str):
    """Write the package parameters file with tool.<name>.approval set on the dispatcher."""
    import yaml
    config = yaml.safe_load((PACKAGE_DIR / 'config' / 'lerobot_tools.yaml').read_text())
    tools = config['/**/dispatcher']['ros__parameters'].setdefault('tool', {})
    for name, approval in approvals.items():
        tools.setdefault(name, {})['approval'] = approval
    path = tmp_path / 'params.yaml'
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def stack(start_process, ros_node, tmp_path):
    """Start ``lerobot-tools-ros bringup`` (espeak, wav sink, demo camera); return its parts."""
    from lerobot_tools_interfaces.msg import ToolResult
    from lerobot_tools_interfaces.srv import CallTool

    def start(**approvals: str):
        out = tmp_path / 'out'
        command = [sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup', '--demo-camera',
                   '--tts-backend', 'espeak_ng', '--duration', '300', '--output-dir', str(out)]
        if approvals:
            command += ['--params', str(params_file(tmp_path, **approvals))]
        proc = start_process(command, name='bringup')
        results: list[ToolResult] = []
        ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append,
                                     RELIABLE)
        call = ros_node.create_client(CallTool, '/dispatcher/call')
        assert spin_until(ros_node, lambda: call.service_is_ready() and all(
            name in dict(ros_node.get_service_names_and_types())
            for name in ('/lerobot_tools/say', '/lerobot_tools/record_observation')), 60.0), \
            'bringup did not come up:\n' + proc.output()
        spin_until(ros_node, lambda: False, 1.0)  # a camera frame, matched publishers
        return proc, out, results

    return start


@contextlib.asynccontextmanager
async def stdio_session(ros_env, tmp_path, *options: str):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    command = server_command(*options)
    params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
    with open(tmp_path / 'mcp-stderr.log', 'a') as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await within(client.initialize())
                yield client


def text_of(result) -> str:
    return '\n'.join(c.text for c in result.content if c.type == 'text')


def results_for(results, call_id: str) -> list:
    return [r for r in results if r.call_id == call_id]


def test_say_record_observation_pause_and_bad_input_through_mcp(
        stack, ros_node, ros_env, tmp_path):
    _mcp()
    import base64
    from std_srvs.srv import SetBool
    proc, out, results = stack()
    progress: list = []

    async def on_progress(value, total, message) -> None:
        progress.append(value)

    async def session() -> None:
        async with stdio_session(ros_env, tmp_path) as client:
            said = await within(client.call_tool('say', {'text': 'Hello from MCP.'},
                                                 progress_callback=on_progress), 30.0)
            assert not said.is_error, text_of(said)
            utterance = json.loads(said.content[0].text)['utterance_id']
            assert said.structured_content['utterance_id'] == utterance
            # MCP progress must increase (say reports stage starts at 0.0 more than once).
            assert progress and progress == sorted(progress), progress
            assert len(set(progress)) == len(progress), progress
            wav = out / 'audio' / f'{utterance}.wav'
            await within(asyncio.to_thread(spin_until, ros_node, wav.exists, 15.0))
            assert wav.stat().st_size > 1000

            seen = await within(client.call_tool('record_observation', {'label': 'mcp_view'}),
                                30.0)
            assert not seen.is_error, text_of(seen)
            saved = json.loads(seen.content[0].text)['paths']
            images = [c for c in seen.content if c.type == 'image']
            assert len(images) == len(saved) == 1
            assert images[0].mime_type == 'image/png'
            assert base64.b64decode(images[0].data) == pathlib.Path(saved[0]).read_bytes()
            assert seen.structured_content['paths'] == saved
            # The link is a resource of this server (not a file:// path): read it back.
            (link,) = [c for c in seen.content if c.type == 'resource_link']
            assert str(link.uri).startswith('lerobot-tools://observations/')
            assert str(link.uri).endswith('/' + pathlib.Path(saved[0]).name)
            assert link.mime_type == 'image/png'
            (blob,) = (await within(client.read_resource(link.uri))).contents
            assert blob.mime_type == 'image/png'
            assert base64.b64decode(blob.blob) == pathlib.Path(saved[0]).read_bytes()
            from mcp.shared.exceptions import MCPError
            for outside in ('lerobot-tools://observations/../../../../etc/passwd',
                            'lerobot-tools://observations/%2E%2E/%2E%2E/etc/hostname',
                            'lerobot-tools://observations//etc/passwd'):
                with pytest.raises(MCPError):
                    await within(client.read_resource(outside))
            # Writes files (not read-only); never replaces one here (overwrite is false).
            listed = {t.name: t for t in (await within(client.list_tools())).tools}
            hints = listed['record_observation'].annotations
            assert (hints.read_only_hint, hints.destructive_hint) == (False, False)

            # OpenAI strict mode sends every argument; null means "the default" (all cameras).
            strict = await within(client.call_tool('record_observation', {
                'label': 'strict', 'camera': None, 'format': None}), 30.0)
            assert not strict.is_error, text_of(strict)
            assert len(strict.structured_content['paths']) == 1

            unknown = await within(client.call_tool('sing', {'text': 'la'}))
            assert unknown.is_error and text_of(unknown).startswith('unknown_tool: ')
            malformed = await within(client.call_tool('say', {'text': 42}))
            assert malformed.is_error and text_of(malformed).startswith('invalid_arguments: ')
            oversized = await within(client.call_tool('say', {'text': 'x' * 70000}))
            assert oversized.is_error and 'at most 65536' in text_of(oversized)

            enable = ros_node.create_client(SetBool, '/dispatcher/set_enabled')
            call_service(ros_node, enable, SetBool.Request(data=False))
            paused = await within(client.call_tool('say', {'text': 'Anyone there?'}))
            assert paused.is_error and text_of(paused).startswith('paused: ')
            call_service(ros_node, enable, SetBool.Request(data=True))

    asyncio.run(session())
    spin_until(ros_node, lambda: len(results) >= 5, 5.0)
    # Every call the dispatcher accepted ended in exactly one result, marked as from MCP.
    mcp_results = [r for r in results if r.source == 'mcp']
    assert len(mcp_results) == len({r.call_id for r in mcp_results}) >= 4
    assert {r.name for r in mcp_results} >= {'say', 'record_observation'}


def test_confirm_tool_waits_for_approval_and_a_disconnect_cancels(
        stack, ros_node, ros_env, tmp_path):
    _mcp()
    from lerobot_tools_interfaces.msg import ApprovalRequest
    from lerobot_tools_interfaces.srv import Approve
    proc, out, results = stack(record_observation='confirm')
    requests: list = []
    ros_node.create_subscription(ApprovalRequest, '/lerobot_tools/approval_requests',
                                 requests.append, RELIABLE)
    approve = ros_node.create_client(Approve, '/dispatcher/approve')

    def waiting() -> list:  # requests still open (a decided one is republished, timeout zero)
        return [r for r in requests if r.timeout.sec or r.timeout.nanosec]

    async def session() -> None:
        async with stdio_session(ros_env, tmp_path) as client:
            listed = {t.name: t for t in (await within(client.list_tools())).tools}
            assert listed['record_observation'].annotations.destructive_hint is True
            assert listed['say'].annotations.destructive_hint is None  # nothing declared: no claim

            call = asyncio.ensure_future(client.call_tool('record_observation',
                                                          {'label': 'approved'}))
            assert await asyncio.to_thread(spin_until, ros_node, lambda: bool(waiting()), 15.0)
            request = waiting()[-1]
            assert request.source == 'mcp' and request.name == 'record_observation'
            await asyncio.sleep(0.3)
            assert not call.done()  # waiting for the operator
            answer = call_service(ros_node, approve, Approve.Request(
                call_id=request.call_id, approve=True, note='test operator'))
            assert answer.success, answer.message
            result = await within(call, 30.0)
            assert not result.is_error, text_of(result)
            assert [c for c in result.content if c.type == 'image']

            requests.clear()
            denied = asyncio.ensure_future(client.call_tool('record_observation',
                                                            {'label': 'denied'}))
            assert await asyncio.to_thread(spin_until, ros_node, lambda: bool(waiting()), 15.0)
            call_service(ros_node, approve, Approve.Request(
                call_id=waiting()[-1].call_id, approve=False, note='test operator'))
            refused = await within(denied, 15.0)
            assert refused.is_error and text_of(refused).startswith('denied: ')

            # The client goes away while a call waits for approval.
            requests.clear()
            asyncio.ensure_future(client.call_tool('record_observation', {'label': 'left'}))
            assert await asyncio.to_thread(spin_until, ros_node, lambda: bool(waiting()), 15.0)
            return waiting()[-1].call_id

    # (the dispatcher serves ~/cancel from its ~/call node: give discovery its time)
    cancel_served = spin_until(ros_node, lambda: '/dispatcher/cancel' in dict(
        ros_node.get_service_names_and_types()), 10.0)
    abandoned = asyncio.run(session())
    # The ROS side still ends that call with exactly one result, and does not hang.
    assert spin_until(ros_node, lambda: results_for(results, abandoned), 30.0), proc.output()
    spin_until(ros_node, lambda: False, 1.0)
    (final,) = results_for(results, abandoned)
    # With ~/cancel the call is cancelled at once; without, it runs out its approval time.
    assert final.error_code == ('cancelled' if cancel_served else 'approval_timeout'), final


def test_a_2026_client_without_handshake_lists_tools_and_hears_changes(
        start_node, ros_node, ros_env, dataset):
    _mcp()
    from mcp import Client, StdioServerParameters

    from lerobot_tools_interfaces.srv import CallTool

    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
    call = ros_node.create_client(CallTool, '/dispatcher/call')  # the dispatcher is up first
    assert spin_until(ros_node, call.service_is_ready, 60.0), dispatcher.output()
    command = server_command()

    async def session() -> None:
        params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
        async with Client(params, mode='auto') as client:
            assert client.session.protocol_version == '2026-07-28'
            tools = (await within(client.list_tools())).tools
            assert [t.name for t in tools] == ToolCatalog.load(str(dataset)).names
            assert tools[0].description.endswith('Speak (test dataset).')
            # On this protocol, list changes come on a subscriptions/listen stream.
            async with client.listen(tools_list_changed=True) as subscription:
                set_dispatcher_parameter(ros_node, 'allowed_tools', ['record_observation'])
                await within(subscription.__anext__(), 15.0)
            tools = (await within(client.list_tools())).tools
            assert [t.name for t in tools] == ['record_observation']

    asyncio.run(session())


@pytest.fixture
def echo_stack(start_node, ros_node, tmp_path):
    """Start a dispatcher and a tool_server hosting echo (slow on request: delay_s)."""
    from lerobot_tools_interfaces.msg import ToolCall, ToolResult
    from lerobot_tools_interfaces.srv import CallTool
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    root = tmp_path / 'echo_dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA]}))
    start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]', '-p',
               f'dataset:={root}')
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={root}')
    results: list[ToolResult] = []
    calls: list[ToolCall] = []
    ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append, RELIABLE)
    ros_node.create_subscription(ToolCall, '/lerobot_tools/calls', calls.append, RELIABLE)
    call = ros_node.create_client(CallTool, '/dispatcher/call')
    assert spin_until(ros_node, lambda: call.service_is_ready() and '/lerobot_tools/echo' in dict(
        ros_node.get_service_names_and_types()), 60.0), dispatcher.output()
    return results, calls


def mcp_results(node, results, count: int, timeout: float = 20.0) -> list:
    spin_until(node, lambda: len([r for r in results if r.source == 'mcp']) >= count, timeout)
    spin_until(node, lambda: False, 0.5)  # a second result for a call would show up now
    return [r for r in results if r.source == 'mcp']


def test_cancel_and_disconnect_mid_call_leave_one_result_each(echo_stack, ros_node, ros_env,
                                                              tmp_path):
    _mcp()
    results, calls = echo_stack

    async def accepted(count: int) -> None:
        # Cancel only once the dispatcher has the call (before that, nothing is to be undone).
        assert await asyncio.to_thread(spin_until, ros_node, lambda: len(
            [c for c in calls if c.source == 'mcp']) >= count, 15.0)

    # (the dispatcher serves ~/cancel from its ~/call node: give discovery its time)
    cancel_served = spin_until(ros_node, lambda: '/dispatcher/cancel' in dict(
        ros_node.get_service_names_and_types()), 10.0)

    async def cancelled_then_served() -> None:
        async with stdio_session(ros_env, tmp_path) as client:
            slow = asyncio.ensure_future(client.call_tool('echo', {'text': 'a', 'delay_s': 2.0}))
            await accepted(1)
            slow.cancel()  # the SDK sends notifications/cancelled
            with pytest.raises(asyncio.CancelledError):
                await slow
            # The session is still good for the next call.
            quick = await within(client.call_tool('echo', {'text': 'b'}))
            assert not quick.is_error and json.loads(quick.content[0].text)['text'] == 'b'

    asyncio.run(cancelled_then_served())
    first = mcp_results(ros_node, results, 2)
    assert len(first) == len({r.call_id for r in first}) == 2
    slow_result = next(r for r in first if json.loads(r.arguments).get('text') == 'a')
    if cancel_served:
        assert slow_result.error_code == 'cancelled', slow_result
    else:  # the dispatcher has no ~/cancel: the call runs to its end, still with one result
        assert slow_result.success, slow_result

    async def disconnected() -> None:
        async with stdio_session(ros_env, tmp_path) as client:
            asyncio.ensure_future(client.call_tool('echo', {'text': 'c', 'delay_s': 2.0}))
            await accepted(3)
        # Leaving the session closes the server's stdin: it must exit, not hang.

    started = time.monotonic()
    asyncio.run(within(disconnected(), 30.0))
    assert time.monotonic() - started < 20.0
    after = mcp_results(ros_node, results, 3)
    assert len(after) == len({r.call_id for r in after}) == 3
    (left,) = [r for r in after if json.loads(r.arguments).get('text') == 'c']
    assert left.error_code == ('cancelled' if cancel_served else '')


def test_progress_of_a_long_call_reaches_the_client(echo_stack, ros_node, ros_env, tmp_path):
    _mcp()
    if not spin_until(ros_node, lambda: ros_node.count_publishers('/lerobot_tools/progress'), 3.0):
        pytest.skip('this dispatcher does not publish lerobot_tools/progress')
    seen: list[tuple] = []

    async def on_progress(progress: float, total, message) -> None:
        seen.append((progress, total, message))

    async def session() -> None:
        async with stdio_session(ros_env, tmp_path) as client:
            result = await within(client.call_tool('echo', {'text': 'slow', 'delay_s': 1.5},
                                                   progress_callback=on_progress), 20.0)
            assert not result.is_error, text_of(result)
            # A call without a progress callback gets no progress (and still its result).
            quick = await within(client.call_tool('echo', {'text': 'quick'}))
            assert not quick.is_error

    asyncio.run(session())
    assert seen, 'no progress notification arrived'
    known = [p for p, total, _ in seen if total == 1.0]
    assert known and all(0.0 <= p <= 1.0 for p in known)
    assert known == sorted(known)
    assert all(message for _, _, message in seen)


def test_http_client_gone_mid_call_leaves_one_result(echo_stack, start_process, ros_node,
                                                     ros_env):
    _mcp()
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    results, calls = echo_stack
    # (the dispatcher serves ~/cancel from its ~/call node: give discovery its time)
    cancel_served = spin_until(ros_node, lambda: '/dispatcher/cancel' in dict(
        ros_node.get_service_names_and_types()), 10.0)
    port = free_port()
    proc = start_process(server_command('--transport', 'http', '--port', str(port)), name='mcp')
    wait_for_port(port, proc)

    async def session() -> None:
        async with streamable_http_client(f'http://127.0.0.1:{port}/mcp') as (read, write):
            async with ClientSession(read, write) as client:
                await within(client.initialize())
                asyncio.ensure_future(client.call_tool('echo', {'text': 'h', 'delay_s': 2.0}))
                assert await asyncio.to_thread(spin_until, ros_node, lambda: [
                    c for c in calls if c.source == 'mcp'], 15.0)
        # Leaving closes the session (DELETE); the server stays up for other clients.

    asyncio.run(within(session(), 30.0))
    (result,) = mcp_results(ros_node, results, 1)
    assert result.error_code == ('cancelled' if cancel_served else ''), result
    assert proc.proc.poll() is None, proc.output()


def test_a_tool_bound_with_kind_read_is_listed_read_only(
        start_node, ros_node, ros_env, tmp_path):
    _mcp()
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    battery = {'type': 'function', 'function': {
        'name': 'get_battery', 'description': 'Battery state.',
        'parameters': {'type': 'object', 'properties': {}}}}
    root = tmp_path / 'bound_dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA, battery]}))
    bindings = tmp_path / 'bindings.yaml'
    bindings.write_text('bindings:\n  get_battery: {kind: read, topic: /battery_state, '
                        'type: sensor_msgs/msg/BatteryState}\n')
    server = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]', '-p',
                        f'dataset:={root}', '-p', f'bindings_file:={bindings}')
    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={root}')
    assert spin_until(ros_node, lambda: '/lerobot_tools/get_battery' in dict(
        ros_node.get_service_names_and_types()), 60.0), server.output()

    async def session() -> None:
        async with stdio_session(ros_env, tmp_path) as client:
            # The bindings come from the tool_server's parameters. On a loaded machine the MCP
            # server may discover it only after its start-up grace; a later refresh completes
            # the list (clients get list_changed), so wait for that, not for the first list.
            deadline = time.monotonic() + 60.0
            while True:
                listed = {t.name: t.annotations
                          for t in (await within(client.list_tools())).tools}
                if listed['get_battery'].read_only_hint or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            assert listed['get_battery'].read_only_hint is True
            assert listed['echo'].read_only_hint is None  # nothing declared: no claim

    asyncio.run(session())


def test_a_list_sent_before_the_dispatcher_is_up_waits_for_it(
        start_node, ros_node, ros_env, dataset, tmp_path):
    """A client that connects at launch gets the robot's tools, not an empty list."""
    _mcp()
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = server_command('--discovery-wait-s', '60')  # generous: a loaded machine
    catalog = ToolCatalog.load(str(dataset))

    async def session() -> None:
        params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
        with open(tmp_path / 'mcp-stderr.log', 'w') as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await within(client.initialize(), 60.0)
                    listing = asyncio.ensure_future(client.list_tools())
                    await asyncio.sleep(0.5)
                    assert not listing.done(), 'the list answered before a dispatcher existed'
                    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
                    listed = (await within(listing, 60.0)).tools
                    assert [t.name for t in listed] == catalog.names

    asyncio.run(session())
    assert 'listing no tools' not in (tmp_path / 'mcp-stderr.log').read_text()


def test_without_a_dispatcher_the_list_is_empty_and_the_log_says_why(ros_env, tmp_path):
    _mcp()
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = server_command('--discovery-wait-s', '1.0')

    async def session() -> list:
        params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
        with open(tmp_path / 'mcp-stderr.log', 'w') as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await within(client.initialize(), 60.0)
                    first = (await within(client.list_tools())).tools
                    again = (await within(client.list_tools())).tools
                    return [first, again]

    assert asyncio.run(session()) == [[], []]
    log = (tmp_path / 'mcp-stderr.log').read_text()
    assert log.count('listing no tools: no dispatcher at /dispatcher within discovery_wait_s '
                     '1 s (it was not discovered') == 1, log
