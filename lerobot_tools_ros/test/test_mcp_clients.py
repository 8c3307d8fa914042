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
The MCP server under real SDK clients, both protocol eras.

Every test starts real nodes in its own ROS domain and talks to ``lerobot-tools-ros mcp``
through the official ``mcp`` SDK: the handshake-era ``ClientSession`` (2025-11-25) and the
``Client`` of the 2026-07-28 per-request era.
"""

import asyncio
import contextlib
import json
import signal
import subprocess
import time

from conftest import spin_until
from lerobot_tools_ros.catalog import ToolCatalog
from test_mcp_server import (
    _mcp, dataset, echo_stack, free_port, ListChanges, mcp_results, RELIABLE, server_command,
    set_dispatcher_parameter, text_of, wait_for_port, WAVE, within)

__all__ = ['dataset', 'echo_stack']  # fixtures used here
# A loaded machine may take seconds to read the dispatcher's settings: wait for them.
GENEROUS = ('--discovery-wait-s', '60')


@contextlib.asynccontextmanager
async def legacy(ros_env, tmp_path, *options: str, **session_kwargs):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    command = server_command(*(options or GENEROUS))
    params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
    with open(tmp_path / 'mcp-stderr.log', 'a') as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, **session_kwargs) as client:
                await within(client.initialize(), 60.0)
                yield client


@contextlib.asynccontextmanager
async def modern(ros_env, tmp_path, *options: str, **client_kwargs):
    from mcp import Client, StdioServerParameters
    command = server_command(*(options or GENEROUS))
    params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
    async with Client(params, mode='auto', **client_kwargs) as client:
        assert client.session.protocol_version == '2026-07-28'
        yield client


def test_tools_that_appear_later_are_announced_and_the_wait_is_logged(
        start_node, ros_node, ros_env, dataset, tmp_path):
    """Defect 1 and the logging capability: a client that connected first is told."""
    _mcp()
    names = ToolCatalog.load(str(dataset)).names
    changes = ListChanges()
    old_logs: list = []
    new_logs: list = []

    async def on_old_log(params) -> None:
        old_logs.append(str(params.data))

    async def on_new_log(params) -> None:
        new_logs.append(str(params.data))

    async def session() -> None:
        async with legacy(ros_env, tmp_path, '--discovery-wait-s', '0.5',
                          message_handler=changes, logging_callback=on_old_log) as old, \
                modern(ros_env, tmp_path, '--discovery-wait-s', '0.5', log_level='warning',
                       logging_callback=on_new_log) as new:
            assert (await within(old.list_tools())).tools == []
            assert (await within(new.list_tools(cache_mode='bypass'))).tools == []
            async with new.listen(tools_list_changed=True) as subscription:
                start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
                await changes.wait(60.0)
                await within(subscription.__anext__(), 30.0)
            assert [t.name for t in (await within(old.list_tools())).tools] == names
            listed = (await within(new.list_tools(cache_mode='bypass'))).tools
            assert [t.name for t in listed] == names
            # Both were told why the first list was empty, as MCP log messages (the 2026
            # client opted in to warnings on its request); a 2025 client can set the level.
            assert any('listing no tools' in text for text in old_logs), old_logs
            assert any('listing no tools' in text for text in new_logs), new_logs
            await within(old.set_logging_level('error'))

    asyncio.run(session())


def test_hints_titles_schemas_and_output_schemas_in_both_eras(
        start_node, ros_node, ros_env, dataset, tmp_path):
    """Defects 2, 10 and 11b, structured output, annotations and titles."""
    _mcp()
    from lerobot_tools_interfaces.srv import CallTool
    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
    call = ros_node.create_client(CallTool, '/dispatcher/call')
    assert spin_until(ros_node, call.service_is_ready, 60.0)

    def check(tools) -> None:
        tools = {t.name: t for t in tools}
        assert set(tools) == {'say', 'record_observation', 'close_gripper'}
        for name in ('say', 'close_gripper'):  # nobody declared them harmless
            assert tools[name].annotations.destructive_hint is None, name
            assert tools[name].annotations.read_only_hint is None, name
        hints = tools['record_observation'].annotations  # it writes an image and a sidecar
        assert hints.read_only_hint is False and hints.idempotent_hint is False
        assert hints.open_world_hint is False
        assert tools['record_observation'].title == 'Record observation'
        assert tools['say'].output_schema['required'] == ['utterance_id']
        assert 'paths' in tools['record_observation'].output_schema['properties']
        assert tools['close_gripper'].output_schema is None
        camera = tools['record_observation'].input_schema['properties']['camera']
        # Strict mode can leave it out with null; one type per schema (Inspector --strict).
        assert camera['anyOf'] == [{'type': 'string', 'description': camera['description']},
                                   {'type': 'null'}]
        # No tool_server runs here: nothing serves them, and the descriptions say so.
        assert tools['say'].description.startswith('[Unavailable: no executor serves it at '
                                                   '/lerobot_tools/say right now')

    async def session() -> None:
        async with legacy(ros_env, tmp_path) as old:
            check((await within(old.list_tools())).tools)
        async with modern(ros_env, tmp_path) as new:
            check((await within(new.list_tools())).tools)

    asyncio.run(session())


def test_the_list_follows_the_loaded_catalog_not_the_file(
        start_node, ros_node, ros_env, dataset, tmp_path):
    """Defect 3: an edited info.json is listed only once the dispatcher reloaded it."""
    _mcp()
    from std_srvs.srv import Trigger
    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
    reload = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, reload.service_is_ready, 60.0)
    changes = ListChanges()

    async def session() -> None:
        async with legacy(ros_env, tmp_path, message_handler=changes) as client:
            before = [t.name for t in (await within(client.list_tools())).tools]
            info = json.loads((dataset / 'meta' / 'info.json').read_text())
            info['tools'].append(WAVE)
            (dataset / 'meta' / 'info.json').write_text(json.dumps(info))
            # A parameter change makes the server re-read the dispatcher at once.
            set_dispatcher_parameter(ros_node, 'allowed_tools', ['say', 'record_observation',
                                                                 'close_gripper', 'wave'])
            # Longer than the server's periodic re-read (refresh_s 5 s): the file is not read.
            deadline = time.monotonic() + 7.0
            while time.monotonic() < deadline:
                assert [t.name for t in (await within(client.list_tools())).tools] == before
                await asyncio.sleep(0.5)
            future = reload.call_async(Trigger.Request())
            assert await asyncio.to_thread(spin_until, ros_node, future.done, 30.0)
            assert future.result().success, future.result().message
            await changes.wait(30.0)
            listed = [t.name for t in (await within(client.list_tools())).tools]
            assert listed == before + ['wave']
            catalog = json.loads(text_of_resource(
                await within(client.read_resource('lerobot-tools://catalog'))))
            assert [e['function']['name'] for e in catalog['tools']] == listed

    asyncio.run(session())


def read_line(pipe, timeout: float = 90.0) -> bytes:
    """Read one line of a subprocess's output, failing (not hanging) when none comes."""
    # A bound on a hang: a server starting beside other tests' processes may take a while.
    import select
    ready, _, _ = select.select([pipe], [], [], timeout)
    assert ready, f'no answer within {timeout:g} s'
    return pipe.readline()


def text_of_resource(result) -> str:
    return result.contents[0].text


def approval_stack(start_node, ros_node, tmp_path, timeout_s: float = 6.0):
    """Start a dispatcher (echo needs approval, audited) and a tool_server hosting echo."""
    from lerobot_tools_interfaces.msg import ToolResult
    from lerobot_tools_interfaces.srv import CallTool
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    root = tmp_path / 'echo_dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA]}))
    audit = tmp_path / 'audit.jsonl'
    start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]', '-p',
               f'dataset:={root}')
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={root}',
                            '-p', 'tool.echo.approval:=confirm', '-p',
                            f'tool.echo.timeout_s:={timeout_s}', '-p', f'audit_log:={audit}')
    results: list = []
    ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append, RELIABLE)
    call = ros_node.create_client(CallTool, '/dispatcher/call')
    assert spin_until(ros_node, lambda: call.service_is_ready() and '/lerobot_tools/echo' in dict(
        ros_node.get_service_names_and_types()), 60.0), dispatcher.output()
    return results, audit


def test_approval_is_reported_and_decided_by_the_clients_user(
        start_node, ros_node, ros_env, tmp_path):
    """Defect 4 and 5: "waiting for approval", elicitation approve / deny / no answer."""
    _mcp()
    import mcp_types as types
    results, audit = approval_stack(start_node, ros_node, tmp_path)
    answers: list = []
    asked: list = []

    async def elicit(context, params):
        asked.append(params.message)
        answer = answers.pop(0)
        if answer is None:
            await asyncio.sleep(3600)  # the user never answers
        return types.ElicitResult(action='accept', content={'approve': answer})

    progress: list = []

    async def on_progress(value, total, message) -> None:
        progress.append((value, total, message))

    async def session() -> None:
        async with legacy(ros_env, tmp_path, elicitation_callback=elicit) as client:
            answers.append(True)
            done = await within(client.call_tool('echo', {'text': 'approved by the user'},
                                                 progress_callback=on_progress), 30.0)
            assert not done.is_error, text_of(done)
            assert json.loads(done.content[0].text) == {'text': 'approved by the user'}
            assert done.structured_content == {'text': 'approved by the user', 'outcome': 'ran'}
            assert "'echo' needs approval" in asked[0]
            assert any('waiting for approval' in (m or '') for _, _, m in progress), progress
            values = [v for v, _, _ in progress]
            assert values == sorted(values) and len(set(values)) == len(values), progress
            answers.append(False)
            refused = await within(client.call_tool('echo', {'text': 'no'}), 30.0)
            assert refused.is_error and text_of(refused).startswith('denied: '), text_of(refused)
            assert refused.structured_content == {'error_code': 'denied', 'outcome': 'not_run'}
            answers.append(None)
            left = await within(client.call_tool('echo', {'text': 'nobody'}), 30.0)
            assert left.is_error and text_of(left).startswith('approval_timeout: ')

    async def modern_session() -> None:
        # 2026 era: no server-initiated requests; the call answers input_required with the
        # elicitation, and the client retries with its user's answer (the SDK drives it).
        async def dismiss(context, params):
            asked.append(params.message)
            return types.ElicitResult(action='cancel')  # closed without a choice

        async with modern(ros_env, tmp_path, elicitation_callback=elicit) as client:
            asked.clear()
            answers.append(True)
            done = await within(client.call_tool('echo', {'text': 'approved in 2026'}), 30.0)
            assert not done.is_error, text_of(done)
            assert done.structured_content == {'text': 'approved in 2026', 'outcome': 'ran'}
            assert "'echo' needs approval" in asked[0]
            answers.append(False)
            refused = await within(client.call_tool('echo', {'text': 'no'}), 30.0)
            assert refused.is_error and text_of(refused).startswith('denied: ')
        async with modern(ros_env, tmp_path, elicitation_callback=dismiss) as client:
            left = await within(client.call_tool('echo', {'text': 'dismissed'}), 30.0)
            assert left.is_error and text_of(left).startswith('approval_timeout: ')

    asyncio.run(session())
    asyncio.run(modern_session())
    decisions = [json.loads(line) for line in audit.read_text().splitlines()
                 if '"approval"' in line or 'decided_by' in line]
    who = [d.get('decided_by', '') for d in decisions if d.get('decided_by')]
    assert len(who) == 4 and all('MCP elicitation' in w for w in who), decisions


def test_a_2025_http_client_that_disconnects_mid_call_cancels_it(
        echo_stack, start_process, ros_node, ros_env):
    """Defect 6: a dropped 2025-era stream cancels the call, as stdio and 2026-era HTTP do."""
    _mcp()
    import httpx2
    results, calls = echo_stack
    port = free_port()
    proc = start_process(server_command('--transport', 'http', '--port', str(port), *GENEROUS),
                         name='mcp')
    wait_for_port(port, proc)
    url = f'http://127.0.0.1:{port}/mcp'
    headers = {'Accept': 'application/json, text/event-stream',
               'Content-Type': 'application/json'}

    async def session() -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            init = await http.post(url, headers=headers, json={
                'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
                    'protocolVersion': '2025-11-25', 'capabilities': {},
                    'clientInfo': {'name': 'raw', 'version': '0'}}})
            session_headers = dict(headers, **{
                'mcp-session-id': init.headers['mcp-session-id'],
                'mcp-protocol-version': '2025-11-25'})
            await http.post(url, headers=session_headers, json={
                'jsonrpc': '2.0', 'method': 'notifications/initialized'})
            async with http.stream('POST', url, headers=session_headers, json={
                    'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': {
                        'name': 'echo', 'arguments': {'text': 'gone', 'delay_s': 4.0}}}):
                assert await asyncio.to_thread(spin_until, ros_node, lambda: [
                    c for c in calls if c.source == 'mcp'], 20.0)
            # The stream is closed without a DELETE or a cancel notification.

    asyncio.run(within(session(), 60.0))
    (result,) = mcp_results(ros_node, results, 1, 20.0)
    assert result.error_code == 'cancelled', result


def test_closed_sessions_are_forgotten(start_node, start_process, ros_node, ros_env, dataset):
    """Defect 7: 40 connect/close cycles, and 2026-era requests, leave no registry entry."""
    _mcp()
    from mcp import Client, ClientSession
    from mcp.client.streamable_http import streamable_http_client
    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
    port = free_port()
    proc = start_process(server_command('--transport', 'http', '--port', str(port), *GENEROUS),
                         name='mcp')
    wait_for_port(port, proc)
    url = f'http://127.0.0.1:{port}/mcp'

    async def session() -> None:
        for _ in range(40):
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write) as client:
                    await within(client.initialize())
                    await within(client.list_resources())
        async with Client(url, mode='auto') as new:
            for _ in range(10):
                await within(new.list_resources(cache_mode='bypass'))
            status = json.loads(text_of_resource(
                await within(new.read_resource('lerobot-tools://server/status'))))
        assert status['legacy_connections'] == 0, status
        assert status['dispatcher'] == '/dispatcher'

    asyncio.run(within(session(), 240.0))


def test_sigterm_answers_calls_in_flight_and_exits_0(echo_stack, start_process, ros_node,
                                                     ros_env, tmp_path):
    """Defect 8: HTTP and stdio (stdin left open) servers stop at once, cleanly."""
    _mcp()
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    results, calls = echo_stack
    port = free_port()
    proc = start_process(server_command('--transport', 'http', '--port', str(port), *GENEROUS),
                         name='mcp')
    wait_for_port(port, proc)

    async def http_session() -> str:
        async with streamable_http_client(f'http://127.0.0.1:{port}/mcp') as (read, write):
            async with ClientSession(read, write) as client:
                await within(client.initialize())
                pending = asyncio.ensure_future(client.call_tool(
                    'echo', {'text': 'http', 'delay_s': 10.0}))
                assert await asyncio.to_thread(spin_until, ros_node, lambda: [
                    c for c in calls if c.source == 'mcp'], 20.0)
                proc.proc.send_signal(signal.SIGTERM)
                return text_of(await within(pending, 10.0))

    started = time.monotonic()
    answer = asyncio.run(http_session())
    assert answer.startswith('cancelled: '), answer
    assert proc.proc.wait(10) == 0, proc.output()
    assert time.monotonic() - started < 20
    assert 'Traceback' not in proc.output() and 'KeyboardInterrupt' not in proc.output()

    # stdio, its stdin kept open by the client.
    stdio = subprocess.Popen(server_command(), env=ros_env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=open(tmp_path / 'stdio.log', 'w'))
    try:
        send = stdio.stdin
        send.write(json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
            'protocolVersion': '2025-11-25', 'capabilities': {},
            'clientInfo': {'name': 'raw', 'version': '0'}}}).encode() + b'\n')
        send.flush()
        assert json.loads(read_line(stdio.stdout))['id'] == 1  # then the rest (the protocol)
        send.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        send.write(json.dumps({'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': {
            'name': 'echo', 'arguments': {'text': 'stdio', 'delay_s': 10.0}}}).encode() + b'\n')
        send.flush()
        assert spin_until(ros_node, lambda: len([c for c in calls if c.source == 'mcp']) >= 2,
                          30.0)
        stdio.send_signal(signal.SIGTERM)
        answer = json.loads(read_line(stdio.stdout, 10.0))
        while 'id' not in answer:  # notifications (progress, log messages) may come first
            answer = json.loads(read_line(stdio.stdout, 10.0))
        assert answer['id'] == 2 and answer['result']['isError'], answer
        assert answer['result']['content'][0]['text'].startswith('cancelled: ')
        assert stdio.wait(5) == 0
    finally:
        if stdio.poll() is None:
            stdio.kill()
            stdio.wait()
    after = mcp_results(ros_node, results, 2)
    assert [r.error_code for r in after] == ['cancelled', 'cancelled'], after

    # stdio with nothing on stdin (/dev/null, as a service manager starts it): no client will
    # come, so it stops (asyncio cannot poll /dev/null: it waited forever, with a traceback).
    alone = subprocess.run(server_command(), env=ros_env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
    output = alone.stdout + alone.stderr
    assert alone.returncode == 0, output
    assert 'stdin closed (the client left): stopping' in output
    assert 'Traceback' not in output


def test_an_ipv6_host_is_served_and_named_in_brackets(start_node, start_process, ros_node,
                                                      ros_env, dataset):
    """Defect 9: --host '[::1]' (and '::1') bind IPv6 loopback; the start line is a URL."""
    _mcp()
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
    port = free_port()
    proc = start_process(server_command('--transport', 'http', '--host', '[::1]', '--port',
                                        str(port), *GENEROUS), name='mcp')
    url = f'http://[::1]:{port}/mcp'
    deadline = time.monotonic() + 60
    while url not in proc.output():
        assert proc.proc.poll() is None and time.monotonic() < deadline, proc.output()
        time.sleep(0.2)

    async def session() -> list:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as client:
                await within(client.initialize())
                return [t.name for t in (await within(client.list_tools())).tools]

    assert asyncio.run(session()) == ToolCatalog.load(str(dataset)).names


def test_a_request_nested_too_deep_is_answered(ros_env):
    """The SDK cannot parse it; the server still answers its id."""
    nested = '[' * 300 + ']' * 300
    server = subprocess.Popen(server_command('--discovery-wait-s', '0.2'), env=ros_env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        server.stdin.write(json.dumps({
            'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
                'protocolVersion': '2025-11-25', 'capabilities': {},
                'clientInfo': {'name': 'raw', 'version': '0'}}}).encode() + b'\n')
        server.stdin.flush()
        # As the protocol has it: `initialized` and requests after the initialize answer. (A
        # client that sends them before it may get no initialize answer from the SDK's runner
        # when the server starts under load.)
        assert json.loads(read_line(server.stdout))['id'] == 1
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        server.stdin.write(('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
                            '{"name": "say", "arguments": {"text": ' + nested + '}}}\n').encode())
        server.stdin.flush()
        answer = json.loads(read_line(server.stdout))
        assert answer['error']['code'] == -32600, answer
        assert 'nested deeper than the server reads' in answer['error']['message']
    finally:
        server.kill()
        server.wait()


def test_resources_prompts_and_completion_in_both_eras(start_node, ros_node, ros_env,
                                                       dataset, tmp_path):
    """Resources (catalog, status, approvals, results), prompts, completion."""
    _mcp()
    from lerobot_tools_interfaces.srv import CallTool
    start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={dataset}')
    call = ros_node.create_client(CallTool, '/dispatcher/call')
    assert spin_until(ros_node, call.service_is_ready, 60.0)

    async def check(client) -> None:
        import mcp_types as types
        listed = {str(r.uri): r.mime_type
                  for r in (await within(client.list_resources())).resources}
        uris = set(listed)
        assert {'lerobot-tools://catalog', 'lerobot-tools://approvals/pending',
                'lerobot-tools://results/recent', 'lerobot-tools://server/status',
                'lerobot-tools://audit/tail'} <= uris
        for uri, mime in listed.items():  # each is read back as the type it is listed with
            (content,) = (await within(client.read_resource(uri))).contents
            assert content.mime_type == mime, (uri, content.mime_type, mime)
        templates = (await within(client.list_resource_templates())).resource_templates
        assert [t.uri_template for t in templates] == ['lerobot-tools://observations/{path}']
        status = json.loads(text_of_resource(
            await within(client.read_resource('lerobot-tools://server/status'))))
        assert status['dispatcher_seen'] and status['pending_approvals'] == 0
        prompts = {p.name for p in (await within(client.list_prompts())).prompts}
        assert {'describe_scene', 'speak_to_user', 'explain_tool'} <= prompts
        prompt = await within(client.get_prompt('describe_scene', {'camera': 'front'}))
        assert 'record_observation' in prompt.messages[0].content.text
        cameras = await within(client.complete(
            types.PromptReference(type='ref/prompt', name='describe_scene'),
            {'name': 'camera', 'value': 'fr'}))
        assert cameras.completion.values == ['front']
        tools = await within(client.complete(
            types.PromptReference(type='ref/prompt', name='explain_tool'),
            {'name': 'tool', 'value': 're'}))
        assert tools.completion.values == ['record_observation']

    async def session() -> None:
        async with legacy(ros_env, tmp_path) as old:
            await within(old.list_tools())
            await check(old)
        async with modern(ros_env, tmp_path) as new:
            await within(new.list_tools())
            await check(new)

    asyncio.run(session())
