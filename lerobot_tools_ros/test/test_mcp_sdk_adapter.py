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
What ``mcp/sdk_adapter.py`` relies on in the MCP SDK's private names, pinned on a bare server.

The MCP server reaches into the SDK only through that adapter. Each test here drives a small
SDK ``Server`` with the SDK's own clients (in process, and over real HTTP on 127.0.0.1) and
checks the behaviour the adapter assumes, so an SDK upgrade that changes it fails here.
"""

import asyncio
import socket

from lerobot_tools_ros.mcp import sdk_adapter
import pytest


def _mcp():
    return pytest.importorskip('mcp')


def bare_server(seen: list):
    from mcp.server.lowlevel import Server
    import mcp_types as types

    async def list_tools(ctx, params):
        seen.append(sdk_adapter.connection_of(ctx))
        return types.ListToolsResult(tools=[])
    return Server('bare', on_list_tools=list_tools)


def test_a_requests_connection_is_found_and_carries_what_the_server_uses():
    _mcp()
    from mcp import Client
    seen: list = []

    async def session() -> None:
        async with Client(bare_server(seen), mode='legacy') as client:
            await client.list_tools()
            connection = seen[-1]
            # The bridge keys 2025-era connections by id, stores the log level in .state,
            # forgets them through .exit_stack, and tells them of list changes and problems.
            assert connection.protocol_version not in __import__(
                'mcp_types.version', fromlist=['x']).MODERN_PROTOCOL_VERSIONS
            assert isinstance(connection.state, dict)
            assert callable(connection.exit_stack.callback)
            await connection.send_tool_list_changed()
            assert callable(connection.log)
        async with Client(bare_server(seen), mode='auto') as client:
            await client.list_tools(cache_mode='bypass')
            from mcp_types.version import MODERN_PROTOCOL_VERSIONS
            assert seen[-1].protocol_version in MODERN_PROTOCOL_VERSIONS

    asyncio.run(asyncio.wait_for(session(), 30.0))
    assert sdk_adapter.connection_of(object()) is None


def test_log_levels_follow_the_protocols_order():
    assert sdk_adapter.level_passes('warning', 'info')
    assert not sdk_adapter.level_passes('info', 'warning')
    assert sdk_adapter.level_passes('error', 'error')
    assert sdk_adapter.level_passes('warning', 'no-such-level')


def test_context_streams_carry_messages():
    _mcp()
    import anyio

    async def run() -> None:
        send, receive = sdk_adapter.context_streams(str)
        async with send, receive:
            async with anyio.create_task_group() as group:
                group.start_soon(send.send, 'hello')
                assert await receive.receive() == 'hello'
    anyio.run(run)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def test_at_the_session_cap_the_longest_idle_session_makes_room():
    """The SDK's session table, admission hook, idle scope and in-flight count, as used."""
    _mcp()
    import httpx2 as httpx
    import uvicorn
    server = bare_server([])
    app = server.streamable_http_app(max_sessions=3, session_idle_timeout=600.0)
    evicted: list = []
    sdk_adapter.evict_idle_at_capacity(server, evicted.append)
    port = _free_port()
    url = f'http://127.0.0.1:{port}/mcp'
    initialize = {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
        'protocolVersion': '2025-11-25', 'capabilities': {},
        'clientInfo': {'name': 'flood', 'version': '0'}}}
    headers = {'accept': 'application/json, text/event-stream'}

    async def run() -> None:
        web = uvicorn.Server(uvicorn.Config(app, host='127.0.0.1', port=port,
                                            log_level='warning', lifespan='on'))
        task = asyncio.ensure_future(web.serve())
        try:
            while not web.started:
                await asyncio.sleep(0.05)
            async with httpx.AsyncClient(timeout=10.0) as http:
                opened = []
                for _ in range(5):  # abandoned: initialized, never used again
                    answer = await http.post(url, json=initialize, headers=headers)
                    assert answer.status_code == 200, answer.text
                    opened.append(answer.headers['mcp-session-id'])
                    await asyncio.sleep(0.01)  # distinct idle deadlines
                sessions = sdk_adapter.http_sessions(server)
                assert set(sessions) == set(opened[-3:])
                assert evicted == opened[:2]  # the longest idle first
                assert all(sdk_adapter.session_is_idle(t) for t in sessions.values())
                gone = await http.post(url, headers=dict(headers, **{
                    'mcp-session-id': opened[0], 'mcp-protocol-version': '2025-11-25'}),
                    json={'jsonrpc': '2.0', 'id': 2, 'method': 'ping'})
                assert gone.status_code == 404
                # The SDK client then opens a new session and is served.
                from mcp import Client
                async with Client(url, mode='legacy') as client:
                    await client.list_tools()
        finally:
            web.should_exit = True
            await asyncio.wait_for(task, 10.0)

    asyncio.run(asyncio.wait_for(run(), 60.0))
