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
The MCP server's view of the robot, under the MCP SDK's own clients and real nodes over DDS.

A fresh server's first answer is the true one (tools, prompts, completion), a robot that stops
or comes back under a running HTTP server shows in the list, the status resource and a
list_changed notification, abandoned HTTP sessions cannot lock a new client out, and a late
approval is not logged as one.
"""

import asyncio
import contextlib
import json

from conftest import spin_until
from test_mcp_clients import approval_stack, GENEROUS, text_of_resource
from test_mcp_server import (
    _mcp, free_port, ListChanges, server_command, text_of, wait_for_port, within)

UNAVAILABLE = '[Unavailable'


def start_robot(start_node, ros_node, tmp_path):
    """Start a dispatcher and a tool_server hosting echo; return both processes."""
    from lerobot_tools_interfaces.srv import CallTool
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    root = tmp_path / 'echo_dataset'
    (root / 'meta').mkdir(parents=True, exist_ok=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA]}))
    server = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]', '-p',
                        f'dataset:={root}')
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={root}')
    call = ros_node.create_client(CallTool, '/dispatcher/call')
    assert spin_until(ros_node, lambda: call.service_is_ready() and '/lerobot_tools/echo' in dict(
        ros_node.get_service_names_and_types()), 60.0), dispatcher.output()
    ros_node.destroy_client(call)
    return dispatcher, server


@contextlib.asynccontextmanager
async def one_shot(ros_env, tmp_path, *options: str, **session_kwargs):
    """Start a fresh stdio server for one client, as the Inspector CLI or LangChain do."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    command = server_command(*options)
    params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
    with open(tmp_path / 'mcp-stderr.log', 'a') as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, **session_kwargs) as client:
                await within(client.initialize(), 60.0)
                yield client


def test_ten_fresh_servers_list_every_working_tool_as_available(
        start_node, ros_node, ros_env, tmp_path):
    """The first tools/list of a fresh server waits for the executors, not only the dispatcher."""
    _mcp()
    start_robot(start_node, ros_node, tmp_path)

    async def lists() -> list:
        firsts = []
        for _ in range(10):
            async with one_shot(ros_env, tmp_path, *GENEROUS) as client:
                firsts.append((await within(client.list_tools(), 90.0)).tools)
        return firsts

    for tools in asyncio.run(lists()):
        assert [t.name for t in tools] == ['echo']
        assert not tools[0].description.startswith(UNAVAILABLE), tools[0].description


def test_first_prompt_and_completion_of_a_session_know_the_robots_tools(
        start_node, ros_node, ros_env, tmp_path):
    """prompts/get and completion/complete as a session's first request wait for the list."""
    _mcp()
    import mcp_types as types
    start_robot(start_node, ros_node, tmp_path)

    async def session() -> tuple:
        async with one_shot(ros_env, tmp_path, *GENEROUS) as client:
            prompt = await within(client.get_prompt('explain_tool', {'tool': 'echo'}), 90.0)
        async with one_shot(ros_env, tmp_path, *GENEROUS) as client:
            completion = await within(client.complete(
                types.PromptReference(type='ref/prompt', name='explain_tool'),
                {'name': 'tool', 'value': 'ec'}), 90.0)
        return prompt.messages[0].content.text, completion.completion.values

    text, values = asyncio.run(session())
    assert "Explain what the robot tool 'echo' does" in text, text
    assert 'its tools are: none' not in text and '..' not in text, text
    assert values == ['echo']


def test_a_robot_that_stops_and_comes_back_under_a_running_http_server(
        start_node, start_process, ros_node, ros_env, tmp_path):
    """list_changed, tools/list and the status resource follow the robot, both ways."""
    _mcp()
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    dispatcher, tool_server = start_robot(start_node, ros_node, tmp_path)
    port = free_port()
    proc = start_process(server_command('--transport', 'http', '--port', str(port), *GENEROUS),
                         name='mcp')
    wait_for_port(port, proc)
    changes = ListChanges()

    async def status(client) -> dict:
        return json.loads(text_of_resource(
            await within(client.read_resource('lerobot-tools://server/status'))))

    async def session() -> None:
        url = f'http://127.0.0.1:{port}/mcp'
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write, message_handler=changes) as client:
                await within(client.initialize())
                (echo,) = (await within(client.list_tools())).tools
                assert not echo.description.startswith(UNAVAILABLE)
                assert (await status(client))['dispatcher_seen'] is True

                # The robot stops (Ctrl-C of its nodes): told within seconds, not kept quiet.
                dispatcher.stop()
                tool_server.stop()
                await changes.wait(30.0)
                (echo,) = (await within(client.list_tools())).tools
                assert echo.description.startswith('[Unavailable: the robot (its dispatcher '
                                                   '/dispatcher) is not reachable')
                gone = await status(client)
                assert gone['dispatcher_seen'] is False, gone
                assert gone['unavailable_tools'] == ['echo'], gone
                assert any('is gone' in w for w in gone['warnings']), gone
                call = await within(client.call_tool('echo', {'text': 'anyone?'}), 30.0)
                assert call.is_error and text_of(call).startswith('unavailable: ')

                # It comes back: told again, and listed as working.
                await asyncio.to_thread(start_robot, start_node, ros_node, tmp_path)
                deadline = asyncio.get_running_loop().time() + 60.0
                while True:
                    await changes.wait(60.0)
                    (echo,) = (await within(client.list_tools())).tools
                    back = await status(client)
                    if not echo.description.startswith(UNAVAILABLE) and \
                            back['unavailable_tools'] == []:
                        break
                    assert asyncio.get_running_loop().time() < deadline, (echo, back)
                assert back['dispatcher_seen'] is True, back
                done = await within(client.call_tool('echo', {'text': 'back'}), 30.0)
                assert not done.is_error, text_of(done)

    asyncio.run(within(session(), 240.0))
    assert 'the dispatcher /dispatcher is back' in proc.output()


def test_a_flood_of_abandoned_http_sessions_leaves_a_new_client_served(
        start_process, ros_node, ros_env, tmp_path):
    """2,000 sessions opened and never used again: nobody is refused, a new client is served."""
    _mcp()
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    port = free_port()
    proc = start_process(server_command('--transport', 'http', '--port', str(port),
                                        '--discovery-wait-s', '0'), name='mcp')
    wait_for_port(port, proc)
    url = f'http://127.0.0.1:{port}/mcp'
    initialize = {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
        'protocolVersion': '2025-11-25', 'capabilities': {},
        'clientInfo': {'name': 'flood', 'version': '0'}}}
    headers = {'Accept': 'application/json, text/event-stream'}
    statuses: dict[int, int] = {}

    async def flood(http, count: int) -> None:
        for _ in range(count):
            answer = await http.post(url, json=initialize, headers=headers)
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1

    async def session() -> None:
        async with httpx2.AsyncClient(timeout=30.0) as http:
            await asyncio.gather(*(flood(http, 250) for _ in range(8)))
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as client:
                await within(client.initialize())
                resources = (await within(client.list_resources())).resources
                assert 'lerobot-tools://server/status' in {str(r.uri) for r in resources}
                status = json.loads(text_of_resource(
                    await within(client.read_resource('lerobot-tools://server/status'))))
                # Held sessions stay within the default cap (100), not one per abandoned one.
                assert 1 <= status['http_sessions'] <= 100, status

    asyncio.run(within(session(), 600.0))
    # Every one was admitted (the longest idle made room), none refused with 503.
    assert statuses == {200: 2000}, statuses
    assert 'HTTP sessions open: ended the one idle the longest' in proc.output()


def test_a_late_approval_is_not_logged_as_approved(start_node, ros_node, ros_env, tmp_path):
    """2026 era: the user answers after the approval timed out; nothing is approved."""
    _mcp()
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    import mcp_types as types
    approval_stack(start_node, ros_node, tmp_path, timeout_s=3.0)

    async def late(context, params):
        await asyncio.sleep(5.0)  # after the dispatcher's 3 s approval timeout
        return types.ElicitResult(action='accept', content={'approve': True})

    async def session() -> None:
        command = server_command(*GENEROUS)
        params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
        with open(tmp_path / 'late.log', 'w') as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode='auto',
                              elicitation_callback=late) as client:
                result = await within(client.call_tool('echo', {'text': 'too late'}), 60.0)
                assert result.is_error and text_of(result).startswith('approval_timeout: ')

    asyncio.run(session())
    log = (tmp_path / 'late.log').read_text()
    assert 'came too late and was not applied' in log, log
    assert 'approved by' not in log, log
