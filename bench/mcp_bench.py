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
MCP cost against its floors, in the same run: cold start, a session per call, round trips.

Starts a dispatcher whose catalog is ``echo`` and a tool_server hosting it (real processes, an
isolated ROS domain).

- Cold start (``--cold N``): ``lerobot-tools-ros mcp`` spawned by the SDK's stdio client, timed
  from spawn to the answer of its first ``tools/list`` (checked right: echo listed, not marked
  unavailable); and a session per call (what langchain-mcp-adapters does by default): spawn,
  initialize, one ``tools/call``, exit. Two floors, spawned the same way, runs interleaved: a
  bare SDK server (this script, ``--role bare``) that lists the same tools from a file and
  answers ``echo`` itself; and the same bare server as an rclpy node (``--role ros_bare``: rclpy
  imported and initialised first, its list answered once the dispatcher's ``~/call`` and the
  echo executor are discovered), the least any ROS-backed server whose first list is right
  can do.
- Round trips (``--round-trips``): batches of MCP ``tools/call`` on one session and of direct
  ``~/call`` requests from an rclpy node in this process, interleaved; with ``--http`` the
  Streamable HTTP transport on 127.0.0.1 too.

    python bench/mcp_bench.py [--cold 10] [--round-trips 300] [--http]
"""

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

from common import bench_domain, catalog_dir, Driver, percentile, Processes
from results import record


class DirectCaller(Driver):
    """Calls the dispatcher's ~/call from an rclpy node in this process (the baseline)."""

    def __init__(self) -> None:
        from lerobot_tools_interfaces.srv import CallTool
        super().__init__('mcp_bench_direct')
        self.CallTool = CallTool
        self.client = self.node.create_client(CallTool, '/dispatcher/call')
        self.count = 0

    def call(self) -> float:
        self.count += 1
        request = self.CallTool.Request(
            call_id=f'direct-{self.count}', name='echo', source='bench',
            arguments=json.dumps({'text': f'direct {self.count}'}))
        start = time.perf_counter()
        future = self.client.call_async(request)
        while not future.done():
            self.executor.spin_once(timeout_sec=1.0)
        elapsed = time.perf_counter() - start
        response = future.result()
        if not response.success:
            raise RuntimeError(f'~/call failed: {response.error_code}: '
                               f'{response.error_message}')
        return elapsed


async def mcp_batch(session, count: int, offset: int) -> list[float]:
    times = []
    for i in range(count):
        start = time.perf_counter()
        result = await session.call_tool('echo', {'text': f'mcp {offset + i}'})
        times.append(time.perf_counter() - start)
        if result.is_error:
            raise RuntimeError(f'MCP call failed: {result.content[0].text}')
    return times


async def ping_batch(session, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await session.send_ping()
        times.append(time.perf_counter() - start)
    return times


async def measure(session, direct: DirectCaller, round_trips: int, label: str) -> tuple:
    await mcp_batch(session, 30, 0)  # warm up: first-call allocations, discovery
    await ping_batch(session, 30)
    for _ in range(30):
        direct.call()
    mcp_times, direct_times, ping_times = [], [], []
    batches = 6
    for batch in range(batches):  # interleaved: every path sees the same load
        mcp_times += await mcp_batch(session, round_trips // batches, batch * 1000)
        direct_times += [direct.call() for _ in range(round_trips // batches)]
        ping_times += await ping_batch(session, round_trips // batches)
    return label, mcp_times, direct_times, ping_times


def report(label: str, mcp_times: list[float], direct_times: list[float],
           ping_times: list[float]) -> None:
    def row(name: str, times: list[float]) -> float:
        p50, p99 = percentile(times, 0.5) * 1e3, percentile(times, 0.99) * 1e3
        print(f'  {name:<42}{p50:7.3f}  {p99:7.3f}  {statistics.mean(times) * 1e3:7.3f}')
        return p50

    print(f'{label}: {len(mcp_times)} round trips each (ms)' + ' ' * 9 + 'p50      p99     mean')
    d50 = row('dispatcher ~/call (rclpy client)', direct_times)
    m50 = row('MCP tools/call -> mcp_server -> ~/call', mcp_times)
    p50 = row('MCP ping (SDK + transport only)', ping_times)
    print(f'  added by the MCP layer (p50)              {m50 - d50:7.3f} ms  '
          f'({m50 / d50:.2f}x the ~/call round trip)')
    record('mcp_bench', label, m50, 'ms', floor=d50,
           floor_label="the dispatcher's ~/call from an rclpy client",
           label=f'MCP tools/call (echo), {label}, p50; MCP ping {p50:.2f} ms',
           samples=[t * 1e3 for t in mcp_times][:300],
           floor_samples=[t * 1e3 for t in direct_times][:300])
    if p50 < m50 - d50:  # a ping and a call take different paths through some transports
        print(f'    of which SDK + transport (ping p50)     {p50:7.3f} ms; bridge to ROS '
              f'{m50 - d50 - p50:6.3f} ms')


def role_ros_bare(tools_file: str) -> None:
    """Serve as the bare server, but as an rclpy node listing once the robot is discovered."""
    import threading
    from lerobot_tools_interfaces.srv import CallTool
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    rclpy.init()
    node = rclpy.create_node('mcp_bench_ros_bare')
    dispatcher = node.create_client(CallTool, '/dispatcher/call')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()

    def discovered() -> bool:
        return dispatcher.service_is_ready() and node.count_services('/lerobot_tools/echo') > 0
    role_bare(tools_file, discovered)


def role_bare(tools_file: str, ready: Any = None) -> None:
    """Serve the tools of a file over stdio with the bare SDK, echo answered here (the floor)."""
    import anyio
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    import mcp_types as types

    async def main() -> None:
        with open(tools_file) as handle:
            entries = json.load(handle)['tools']
        tools = [types.Tool(name=e['function']['name'],
                            description=e['function'].get('description', ''),
                            input_schema=e['function']['parameters']) for e in entries]

        async def list_tools(ctx, params):
            while ready is not None and not ready():
                await anyio.sleep(0.005)
            return types.ListToolsResult(tools=tools)

        async def call_tool(ctx, params):
            return types.CallToolResult(content=[types.TextContent(
                type='text', text=json.dumps(params.arguments or {}, sort_keys=True))])

        server = Server('bare', on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    anyio.run(main)


async def spawn_and_use(command: list[str], env: dict, call: bool) -> tuple[float, float]:
    """Spawn a stdio server; return (seconds to the first tools/list answer, to a call)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    start = time.perf_counter()
    listed = called = float('nan')
    with open(os.devnull, 'w') as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                if call:  # a session per call: no list first
                    result = await session.call_tool('echo', {'text': 'cold'})
                    if result.is_error:
                        raise RuntimeError(f'cold call failed: {result.content[0].text}')
                    called = time.perf_counter() - start
                else:
                    tools = await session.list_tools()
                    listed = time.perf_counter() - start
                    if [t.name for t in tools.tools] != ['echo'] or \
                            tools.tools[0].description.startswith('[Unavailable'):
                        raise RuntimeError(f'the first list is wrong: {tools}')
    return listed, called


async def cold_start(args, env: dict, tools_file: str) -> None:
    ours = [sys.executable, '-m', 'lerobot_tools_ros.cli', 'mcp', '--log-level', 'warn']
    bare = [sys.executable, __file__, '--role', 'bare', tools_file]
    ros_bare = [sys.executable, __file__, '--role', 'ros_bare', tools_file]
    servers = (('bare', bare), ('ros_bare', ros_bare), ('ours', ours))
    first: dict[str, list[float]] = {name: [] for name, _ in servers}
    per_call: dict[str, list[float]] = {'ours': [], 'bare': []}
    for _ in range(args.cold):  # interleaved: all see the same load
        for name, command in servers:
            first[name].append((await spawn_and_use(command, env, call=False))[0])
            if name in per_call:
                per_call[name].append((await spawn_and_use(command, env, call=True))[1])
    print(f'cold start: {args.cold} spawns each (s)' + ' ' * 18 + 'p50      min      max')

    def row(label: str, times: list[float]) -> float:
        p50 = statistics.median(times)
        print(f'  {label:<48}{p50:7.3f}  {min(times):7.3f}  {max(times):7.3f}')
        return p50
    b50 = row('bare SDK server: spawn -> first tools/list', first['bare'])
    r50 = row('bare SDK server as an rclpy node: -> first list', first['ros_bare'])
    o50 = row('lerobot-tools-ros mcp: spawn -> first tools/list', first['ours'])
    c50 = row('bare SDK server: spawn -> one tools/call', per_call['bare'])
    d50 = row('lerobot-tools-ros mcp: spawn -> one tools/call', per_call['ours'])
    print(f'  first tools/list: {o50 / b50:.2f}x the bare server (target: within 2x), '
          f'{o50 / r50:.2f}x the bare server as an rclpy node (whose own floor is '
          f'{r50 / b50:.2f}x); a session per call: {d50 / c50:.2f}x')
    record('mcp_bench', 'cold_first_list', o50, 's', floor=b50, target_ratio=2.0,
           floor_label='a bare one-tool MCP SDK server (no ROS)',
           label=f'cold start to a right first tools/list, p50 of {args.cold}',
           samples=first['ours'], floor_samples=first['bare'])
    record('mcp_bench', 'cold_first_list_ros_floor', r50, 's', floor=b50,
           floor_label='a bare one-tool MCP SDK server (no ROS)',
           label='the same bare server as an rclpy node that lists once the dispatcher and '
                 'echo are discovered (the floor of any ROS-backed server)',
           samples=first['ros_bare'], floor_samples=first['bare'])
    record('mcp_bench', 'cold_session_per_call', d50, 's', floor=c50,
           floor_label='a bare one-tool MCP SDK server answering echo itself',
           label=f'spawn, initialize, one tools/call (echo), p50 of {args.cold}',
           samples=per_call['ours'], floor_samples=per_call['bare'])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


async def run(args, env: dict, direct: DirectCaller) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    command = [sys.executable, '-m', 'lerobot_tools_ros.cli', 'mcp', '--log-level', 'warn']
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            assert 'echo' in [t.name for t in tools.tools], tools
            report(*await measure(session, direct, args.round_trips, 'stdio'))
    if not args.http:
        return
    from mcp.client.streamable_http import streamable_http_client
    port = free_port()
    server = subprocess.Popen(command + ['--transport', 'http', '--port', str(port)], env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(('127.0.0.1', port)) == 0:
                    break
            await asyncio.sleep(0.1)
        async with streamable_http_client(f'http://127.0.0.1:{port}/mcp') as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                report(*await measure(session, direct, args.round_trips, 'streamable http'))
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(10)


def start_echo_only(procs: Processes) -> None:
    """Start a tool_server hosting echo and a dispatcher whose catalog is echo alone."""
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    workdir = catalog_dir('mcp_bench_', [ECHO_SCHEMA])  # every tool served: a right first list
    procs.node('tool_server', 'lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
               '-p', f'dataset:={workdir}', '--log-level', 'warn')
    procs.node('dispatcher', 'lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={workdir}',
               '-p', 'max_pending:=100000', '--log-level', 'warn')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--round-trips', type=int, default=300,
                        help='calls per path on one session (0: skip)')
    parser.add_argument('--cold', type=int, default=10,
                        help='cold-start spawns per server (0: skip)')
    parser.add_argument('--role', nargs='+', help=argparse.SUPPRESS)
    parser.add_argument('--http', action='store_true', help='also measure Streamable HTTP')
    args = parser.parse_args()
    if args.role:
        (role_ros_bare if args.role[0] == 'ros_bare' else role_bare)(args.role[1])
        return 0
    with bench_domain() as domain, Processes(__file__) as procs:
        start_echo_only(procs)
        direct = DirectCaller()
        ready = direct.spin_until(lambda: direct.client.service_is_ready() and (
            '/lerobot_tools/echo' in dict(direct.node.get_service_names_and_types())), 60.0)
        if not ready:
            print('error: the dispatcher (with ~/call) or tool_server did not come up',
                  file=sys.stderr)
            return 1
        print(f'domain {domain}; echo via dispatcher + tool_server; '
              f'{os.cpu_count()} cores')
        if args.cold:
            from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
            tools_file = catalog_dir('mcp_bench_bare_', [ECHO_SCHEMA]) / 'meta' / 'info.json'
            asyncio.run(cold_start(args, procs.env, str(tools_file)))
        if args.round_trips:
            asyncio.run(run(args, procs.env, direct))
        return 0


if __name__ == '__main__':
    sys.exit(main())
