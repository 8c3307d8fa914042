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
   every robot's catalog, and the ``~/call`` p50 over all robots, as ratios to one robot.

In part 3 every robot is light (a dispatcher and a tool_server with echo only). Real robots
each have their own computer; here all hosts share 2 cores, and a full stack's idle load (its
demo camera publishes 640x480 frames at 15 fps into record_observation) would be charged to
the fleet's scaling. Parts 1 and 2 call a full robot. Figures under the shared load of a 2-core
machine are noisy; the start times include starting every robot's processes on those cores.
"""

import argparse
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
        cut_at, during = time.monotonic(), []
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer calls and hosts (1, 2, 4)')
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
    with reserve_test_domain() as domain:
        cross_host(fleet_support, domain, root / 'cross', batches, per_batch)
        scale(fleet_support, domain, root / 'scale', sizes, calls)
    return 0


if __name__ == '__main__':
    sys.exit(main())
