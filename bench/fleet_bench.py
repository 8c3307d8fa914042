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
Fleet: robots on separate hosts (network namespaces), driven from an operator host.

Needs root (network namespaces; see lerobot_tools_ros/test/netns_hosts.py). Three parts, each
against a floor measured in the same run:

1. cross-host ``~/call`` (echo) from the operator's host vs the same call from a client on the
   robot's own host, in interleaved batches: p50 and p99 of each, and their ratio;
2. robot A's cross-host p50 while robot B's cable is pulled, against A's p50 just before;
3. scale, 1, 2, 4 and 8 robot hosts: the time from starting the robots until the operator has
   every robot's catalog, and the ``~/call`` p50 over all robots, as ratios to one robot;
4. the fleet MCP endpoint (``lerobot-tools-ros mcp --robots ...`` over Streamable HTTP on the
   operator's host, the official SDK client there too) for 1, 2, 4 and 8 robot hosts: the time
   from starting the endpoint until its first ``tools/list`` answer (listing every robot's
   tools), the ``tools/call`` p50 over all robots, and the endpoint's CPU while idle with a
   client connected, as ratios to one robot.

In parts 3 and 4 every robot is light (a dispatcher and a tool_server with echo only). Real robots
each have their own computer; here all hosts share 2 cores, and a full stack's idle load (its
demo camera publishes 640x480 frames at 15 fps into record_observation) would be charged to
the fleet's scaling. Parts 1 and 2 call a full robot. Figures under the shared load of a 2-core
machine are noisy; the start times include starting every robot's processes on those cores.
"""

import argparse
import asyncio
import os
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from common import percentile, test_helper  # noqa: E402
from results import record  # noqa: E402

BENCH = 'fleet_bench'
# Part 4 is recorded on its own, so that `--only mcp` keeps the figures of parts 1-3.
MCP_BENCH = 'fleet_mcp'
SIZES = (1, 2, 4, 8)
SETTLE_S = 2.0


def _round_trips(operator, robot: str, count: int, tag: str) -> list[float]:
    """Call echo on ``robot`` ``count`` times, one after another; return the times in ms."""
    times = []
    for index in range(count):
        reply = operator.ask('call', robot=robot, call_id=f'{tag}-{index}', name='echo',
                             arguments={'text': 'ping'}, timeout=10.0)
        assert reply['response']['success'], reply
        times.append((reply['answered'] - reply['sent']) * 1e3)
    return times


def _fleet(fleet_support, domain: int, root: pathlib.Path, robots: list[str]):
    """Make the switch and the hosts of a multicast fleet (nothing started yet)."""
    fleet = fleet_support.Fleet(domain, root, 'multicast')
    fleet.add_hosts(robots)
    return fleet


def cross_host(fleet_support, domain: int, root: pathlib.Path, batches: int,
               per_batch: int) -> None:
    """Parts 1 and 2: cross-host vs same-host, and A while B is cut off."""
    robots = ['robot_a', 'robot_b']
    lease_s = fleet_support.LEASE_S
    fleet = _fleet(fleet_support, domain, root, robots)
    try:
        operator = fleet.start_operator()
        fleet.start_robot('robot_a', full=True)
        fleet.start_robot('robot_b', full=False)
        local = fleet.start_operator('robot_a')
        for client in (operator, local):
            assert client.ask('catalogs', robots=robots if client is operator else ['robot_a'],
                              timeout=120.0)['ok'], fleet.output()
            _round_trips(client, 'robot_a', 20, f'warm-{id(client)}')
        remote_ms: list[float] = []
        local_ms: list[float] = []
        for batch in range(batches):
            remote_ms += _round_trips(operator, 'robot_a', per_batch, f'remote-{batch}')
            local_ms += _round_trips(local, 'robot_a', per_batch, f'local-{batch}')
        for q, name in ((0.5, 'p50'), (0.99, 'p99')):
            value, floor = percentile(remote_ms, q), percentile(local_ms, q)
            record(BENCH, f'cross_host_{name}', value, 'ms', floor=floor,
                   floor_label=f"the same ~/call from the robot's own host ({name})",
                   label=f'~/call echo across hosts, {name}', group='cross host',
                   series=name, samples=remote_ms[:300] if q == 0.5 else None,
                   floor_samples=local_ms[:300] if q == 0.5 else None)
            print(f'cross-host {name}: {value:.2f} ms; same host {floor:.2f} ms; '
                  f'ratio {value / floor:.2f}x')
        before = _round_trips(operator, 'robot_a', batches * per_batch, 'a-before')
        fleet.cut('robot_b')
        # Over twice B's lease: while the others still try to reach B, and after it left.
        cut_at = time.monotonic()
        during: list[float] = []
        while len(during) < batches * per_batch or time.monotonic() - cut_at < 2 * lease_s:
            during += _round_trips(operator, 'robot_a', per_batch, f'a-during-{len(during)}')
        fleet.plug('robot_b')
        value, floor = statistics.median(during), statistics.median(before)
        record(BENCH, 'a_while_b_cut_p50', value, 'ms', floor=floor,
               floor_label="robot A's cross-host p50 just before B's cable was pulled",
               label="robot A's ~/call p50 while robot B is cut off", group='lost link')
        print(f'A while B is cut off: p50 {value:.2f} ms; before {floor:.2f} ms; '
              f'ratio {value / floor:.2f}x')
    finally:
        problems = fleet.close()
        assert not problems, problems


def _scale_run(fleet_support, domain: int, root: pathlib.Path, size: int,
               calls: int) -> tuple[float, list[float]]:
    """Start ``size`` light robot hosts; return (seconds until every catalog, call times)."""
    robots = [f'robot_{index}' for index in range(size)]
    fleet = _fleet(fleet_support, domain, root, robots)
    try:
        operator = fleet.start_operator()
        operator.ask('watch', robots=robots)
        started = time.monotonic()
        for name in robots:
            fleet.start_robot(name, full=False)
        seen = operator.ask('catalogs', robots=robots, timeout=300.0)
        assert seen['ok'], fleet.output()
        seen_s = max(c['first_seen'] for c in seen['catalogs'].values()) - started
        time.sleep(SETTLE_S)  # the robots' processes finish starting before calls are timed
        for name in robots:  # every ~/call proven and warm
            _round_trips(operator, name, 5, f'warm-{name}')
        times: list[float] = []
        for round_index in range(max(1, calls // size)):
            for name in robots:
                times += _round_trips(operator, name, 1, f'{name}-{round_index}')
        return seen_s, times
    finally:
        problems = fleet.close()
        assert not problems, problems


def scale(fleet_support, domain: int, root: pathlib.Path, sizes: tuple[int, ...],
          calls: int) -> None:
    """
    Part 3: time to see every robot's tools and the ~/call p50, for 1..8 robot hosts.

    One robot host is measured first and again last, and the baseline is both runs together:
    the load of a shared machine drifts over the minutes the sizes take.
    """
    seen_s: dict[int, list[float]] = {}
    times_ms: dict[int, list[float]] = {}
    base = sizes[0]
    for run, size in enumerate((*sizes, base)):
        seen, times = _scale_run(fleet_support, domain, root / f'run{run}-n{size}', size, calls)
        seen_s.setdefault(size, []).append(seen)
        times_ms.setdefault(size, []).extend(times)
        print(f'{size} robot host(s): every catalog seen after {seen:.2f} s; '
              f'~/call p50 {statistics.median(times):.2f} ms over {len(times)} calls')
    seen_floor = statistics.mean(seen_s[base])
    call_floor = statistics.median(times_ms[base])
    for size in sizes:
        seen = statistics.mean(seen_s[size])
        p50 = statistics.median(times_ms[size])
        record(BENCH, f'catalogs_seen_{size}', seen, 's', floor=seen_floor,
               floor_label=f'{base} robot host, same run (first and last)',
               label=f'start -> operator has every catalog, {size} robot hosts',
               group='time to see every robot', series=str(size), robots=size)
        record(BENCH, f'call_p50_{size}', p50, 'ms', floor=call_floor,
               floor_label=f'{base} robot host, same run (first and last)',
               label=f'~/call echo p50, {size} robot hosts', group='~/call p50',
               series=str(size), robots=size)
        print(f'{size} robot host(s): catalogs {seen:.2f} s ({seen / seen_floor:.2f}x); '
              f'~/call p50 {p50:.2f} ms ({p50 / call_floor:.2f}x)')


def _mcp_scale_run(fleet_support, mcp_support, domain: int, root: pathlib.Path, size: int,
                   calls: int, idle_s: float) -> tuple[float, list[float], float]:
    """Part 4 for ``size`` light robots: (s to the first full list, call ms, idle CPU %)."""
    robots = [f'robot_{index}' for index in range(size)]
    wanted = sorted(f'{name}.echo' for name in robots)
    fleet = _fleet(fleet_support, domain, root, robots)
    try:
        operator = fleet.start_operator()
        operator.ask('watch', robots=robots)
        for name in robots:
            fleet.start_robot(name, full=False)
        assert operator.ask('catalogs', robots=robots, timeout=300.0)['ok'], fleet.output()
        time.sleep(SETTLE_S)
        host = fleet.switch.hosts['operator']
        port = 8765  # the operator's namespace has its own ports: all free

        async def session() -> tuple[float, list[float], float]:
            from mcp import ClientSession
            from mcp.client.streamable_http import streamable_http_client
            started = time.monotonic()
            server = fleet.start(host, [
                sys.executable, '-m', 'lerobot_tools_ros.cli', 'mcp', '--transport', 'http',
                '--port', str(port), '--robots', ','.join(robots), '--discovery-wait-s', '60',
                '--log-level', 'warn'], f'mcp-{size}')
            await mcp_support.wait_for_port(port, server)
            url = f'http://127.0.0.1:{port}/mcp'
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    listed = sorted(t.name for t in (await client.list_tools()).tools)
                    first_s = time.monotonic() - started
                    assert listed == wanted, (listed, fleet.output())
                    for name in wanted:  # every robot's ~/call proven and warm
                        for _ in range(3):
                            assert not (await client.call_tool(name, {'text': 'w'})).is_error
                    times: list[float] = []
                    for _ in range(max(1, calls // size)):
                        for name in wanted:
                            sent = time.perf_counter()
                            done = await client.call_tool(name, {'text': 'ping'})
                            times.append((time.perf_counter() - sent) * 1e3)
                            assert not done.is_error, done
                    pid = server.proc.pid  # ip netns exec runs the server in its own process
                    cpu_before, wall_before = mcp_support.cpu_seconds(pid), time.monotonic()
                    await asyncio.sleep(idle_s)  # a client connected, nothing asked
                    cpu = (mcp_support.cpu_seconds(pid) - cpu_before) / (
                        time.monotonic() - wall_before) * 100.0
            return first_s, times, cpu

        return mcp_support.run_on_host(host, session, 600.0)
    finally:
        problems = fleet.close()
        assert not problems, problems


def mcp_scale(fleet_support, domain: int, root: pathlib.Path, sizes: tuple[int, ...],
              calls: int, idle_s: float) -> None:
    """Part 4: the fleet MCP endpoint for 1..8 robot hosts, one robot first and last."""
    mcp_support = test_helper('mcp_fleet_support')
    first: dict[int, list[float]] = {}
    times_ms: dict[int, list[float]] = {}
    idle: dict[int, list[float]] = {}
    base = sizes[0]
    for run, size in enumerate((*sizes, base)):
        first_s, times, cpu = _mcp_scale_run(fleet_support, mcp_support, domain,
                                             root / f'run{run}-n{size}', size, calls, idle_s)
        first.setdefault(size, []).append(first_s)
        times_ms.setdefault(size, []).extend(times)
        idle.setdefault(size, []).append(cpu)
        print(f'MCP, {size} robot host(s): first tools/list {first_s:.2f} s; tools/call p50 '
              f'{statistics.median(times):.2f} ms over {len(times)} calls; idle CPU {cpu:.2f} %')
    floors = (statistics.mean(first[base]), statistics.median(times_ms[base]),
              statistics.mean(idle[base]))
    floor_label = f'{base} robot host, same run (first and last)'
    for size in sizes:
        values = (statistics.mean(first[size]), statistics.median(times_ms[size]),
                  statistics.mean(idle[size]))
        record(MCP_BENCH, f'mcp_first_list_{size}', values[0], 's', floor=floors[0],
               floor_label=floor_label, robots=size, series=str(size),
               label=f'MCP endpoint start -> first tools/list, {size} robot hosts',
               group='MCP first tools/list')
        record(MCP_BENCH, f'mcp_call_p50_{size}', values[1], 'ms', floor=floors[1],
               floor_label=floor_label, robots=size, series=str(size),
               label=f'MCP tools/call echo p50, {size} robot hosts', group='MCP tools/call p50')
        record(MCP_BENCH, f'mcp_idle_cpu_{size}', values[2], '%', floor=floors[2],
               floor_label=floor_label, robots=size, series=str(size),
               label=f'MCP endpoint idle CPU, {size} robot hosts', group='MCP idle CPU')
        print(f'MCP, {size} robot host(s): first list {values[0] / floors[0]:.2f}x; call p50 '
              f'{values[1] / floors[1]:.2f}x; idle CPU {values[2] / floors[2]:.2f}x')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer calls and hosts (1, 2, 4)')
    parser.add_argument('--only', choices=['cross', 'scale', 'mcp'], action='append',
                        help='run only these parts (repeatable; default: all)')
    args = parser.parse_args()
    netns_hosts = test_helper('netns_hosts')
    reason = netns_hosts.namespaces_unavailable()
    if reason:
        print(f'fleet_bench: skipped: {reason}')
        return 0
    fleet_support = test_helper('fleet_support')
    from conftest import reserve_test_domain
    root = pathlib.Path(tempfile.mkdtemp(prefix='fleet_bench_'))
    batches, per_batch = (3, 20) if args.quick else (5, 40)
    sizes = SIZES[:3] if args.quick else SIZES
    calls = 24 if args.quick else 96
    print(f'fleet_bench: files under {root}; load {os.getloadavg()[0]:.2f} on '
          f'{os.cpu_count()} cores (figures under shared load are noisy)')
    parts = args.only or ['cross', 'scale', 'mcp']
    with reserve_test_domain() as domain:
        if 'cross' in parts:
            cross_host(fleet_support, domain, root / 'cross', batches, per_batch)
        if 'scale' in parts:
            scale(fleet_support, domain, root / 'scale', sizes, calls)
        if 'mcp' in parts:
            mcp_scale(fleet_support, domain, root / 'mcp', sizes, calls // 2,
                      5.0 if args.quick else 15.0)
    return 0


if __name__ == '__main__':
    sys.exit(main())
