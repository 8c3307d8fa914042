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
The fleet MCP endpoint across hosts, under the official SDK client (stdio and HTTP).

The robots are on their own network namespaces, the endpoint on the operator's.

Robot B's cable is pulled while a call to it runs: the call ends in exactly one result, which
says the outcome is unknown (``answer_lost``); robot A's calls go on; B's tools leave the MCP
list (``list_changed``) and come back when the cable is plugged in again, with no restart of
anything; B's own audit log keeps the call it ran while cut off. The robots (light: dispatcher
and tool_server with echo) start once for the module; the SDK client runs on the operator's host
(stdio: the server is started there; HTTP: the client's thread enters the host's namespace).
"""

import asyncio
import contextlib
import json
import time

from conftest import reserve_test_domain
from fleet_support import Fleet, fleet_results, LEASE_S
from lerobot_tools_ros import errors
from mcp_fleet_support import run_on_host, wait_for_port
from netns_hosts import namespaces_unavailable
import pytest
from test_mcp_server import _mcp, free_port, ListChanges, server_command, text_of, within

ROBOTS = ['robot_a', 'robot_b']
BOTH = ['robot_a.echo', 'robot_b.echo']


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    _mcp()
    reason = namespaces_unavailable()
    if reason:
        pytest.skip(f'cannot make network namespaces for hosts: {reason}')
    with reserve_test_domain() as domain:
        running = Fleet(domain, tmp_path_factory.mktemp('mcp_fleet_hosts'), 'multicast')
        try:
            running.add_hosts(ROBOTS)
            for name in ROBOTS:
                running.start_robot(name, full=False)
            yield running
        finally:
            problems = running.close()
            assert not problems, problems


@contextlib.asynccontextmanager
async def stdio_on_operator(fleet: Fleet, changes: ListChanges):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    host = fleet.switch.hosts['operator']
    command = host.command(server_command('--robots', ','.join(ROBOTS),
                                          '--discovery-wait-s', '60'))
    params = StdioServerParameters(command=command[0], args=command[1:], env=fleet.env(host))
    with open(fleet.root / 'mcp-stdio.log', 'a') as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=changes) as client:
                await within(client.initialize(), 60.0)
                yield client


@contextlib.asynccontextmanager
async def http_on_operator(url: str, changes: ListChanges):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, message_handler=changes) as client:
            await within(client.initialize(), 60.0)
            yield client


def text_sent(record: dict) -> str:
    """Return the ``text`` argument of an audited call (arguments: an object or JSON text)."""
    arguments = record['call'].get('arguments') or {}
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    return str(arguments.get('text', ''))


async def names(client) -> list[str]:
    return sorted(t.name for t in (await within(client.list_tools(), 90.0)).tools)


async def until_listed(client, changes: ListChanges, wanted: list[str], seconds: float) -> None:
    """Wait for list_changed notifications until the list is ``wanted`` (bounded)."""
    deadline = time.monotonic() + seconds
    while await names(client) != wanted:
        left = deadline - time.monotonic()
        assert left > 0, f'the list never became {wanted}: {await names(client)}'
        with contextlib.suppress(asyncio.TimeoutError):
            await changes.wait(left)


async def cut_mid_call(fleet: Fleet, client, changes: ListChanges, tag: str) -> dict:
    """Pull robot B's cable during a call to it; return what the client saw."""
    robot_b = fleet.robots['robot_b']
    await until_listed(client, changes, BOTH, 90.0)
    for name in ROBOTS:  # both answer before the cut
        done = await within(client.call_tool(f'{name}.echo', {'text': f'{tag} before'}))
        assert not done.is_error, text_of(done)

    def on_b() -> list[str]:
        return [text_sent(r) for r in fleet_results(robot_b.audit_records()).values()
                if 'call' in r]

    in_flight = asyncio.ensure_future(client.call_tool(
        'robot_b.echo', {'text': f'{tag} cut', 'delay_s': 3.0}))
    deadline = time.monotonic() + 15.0
    while f'{tag} cut' not in on_b():
        assert time.monotonic() < deadline, "robot_b's dispatcher never got the call"
        await asyncio.sleep(0.1)
    cut_at = time.monotonic()
    fleet.cut('robot_b')
    try:
        during = []
        for index in range(3):  # robot A goes on
            done = await within(client.call_tool('robot_a.echo', {'text': f'{tag} a{index}'}))
            during.append(done)
        lost = await within(in_flight, 6.0 * LEASE_S + 10.0)
        lost_after = time.monotonic() - cut_at
        await until_listed(client, changes, ['robot_a.echo'], 6.0 * LEASE_S)
        gone = await within(client.call_tool('robot_b.echo', {'text': f'{tag} gone'}), 30.0)
    finally:
        fleet.plug('robot_b')
    await until_listed(client, changes, BOTH, 90.0)
    back = await within(client.call_tool('robot_b.echo', {'text': f'{tag} back'}), 30.0)
    return {'during': during, 'lost': lost, 'lost_after': lost_after, 'gone': gone,
            'back': back}


def check(fleet: Fleet, seen: dict, tag: str, pids: dict) -> None:
    assert all(not r.is_error for r in seen['during']), [text_of(r) for r in seen['during']]
    lost = seen['lost']
    assert lost.is_error and text_of(lost).startswith(f'{errors.ANSWER_LOST}: '), text_of(lost)
    assert 'outcome is unknown' in text_of(lost)
    assert lost.structured_content['outcome'] == errors.UNKNOWN, lost.structured_content
    assert seen['lost_after'] < 6.0 * LEASE_S + 5.0, seen['lost_after']
    gone = seen['gone']  # refused before anything was sent
    assert gone.is_error and text_of(gone).startswith(f'{errors.UNAVAILABLE}: '), text_of(gone)
    assert gone.structured_content['outcome'] == errors.NOT_RUN, gone.structured_content
    assert not seen['back'].is_error, text_of(seen['back'])
    # No restart: the robots' processes are the ones started for the module.
    assert {n: [p.proc.pid for p in r.processes] for n, r in fleet.robots.items()} == pids
    # B's own audit log keeps the cut-off call, with exactly one result, and nothing unsent.
    audited = fleet_results(fleet.robots['robot_b'].audit_records()).values()
    calls = {text_sent(r): r for r in audited if 'call' in r}
    assert set(calls[f'{tag} cut']) == {'call', 'result'}, calls[f'{tag} cut']
    assert calls[f'{tag} cut']['result'].get('success') is True, calls[f'{tag} cut']
    assert f'{tag} gone' not in calls


def test_stdio_endpoint_on_the_operator_host_through_a_pulled_cable(fleet):
    pids = {n: [p.proc.pid for p in r.processes] for n, r in fleet.robots.items()}
    changes = ListChanges()

    async def session() -> dict:
        async with stdio_on_operator(fleet, changes) as client:
            return await cut_mid_call(fleet, client, changes, 'stdio')

    host = fleet.switch.hosts['operator']
    check(fleet, run_on_host(host, session, 240.0), 'stdio', pids)


def test_http_endpoint_on_the_operator_host_through_a_pulled_cable(fleet):
    pids = {n: [p.proc.pid for p in r.processes] for n, r in fleet.robots.items()}
    host = fleet.switch.hosts['operator']
    port = free_port()  # free here; the operator's namespace has its own ports, all free
    server = fleet.start(host, server_command(
        '--transport', 'http', '--port', str(port), '--robots', ','.join(ROBOTS),
        '--discovery-wait-s', '60'), 'mcp-http')
    changes = ListChanges()

    async def session() -> dict:
        await wait_for_port(port, server)  # the server imports the SDK first (seconds)
        async with http_on_operator(f'http://127.0.0.1:{port}/mcp', changes) as client:
            return await cut_mid_call(fleet, client, changes, 'http')

    check(fleet, run_on_host(host, session, 240.0), 'http', pids)
    assert server.proc.poll() is None, server.output()
