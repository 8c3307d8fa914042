"""
Dispatch latency and throughput, next to a raw rclpy relay measured in the same run.

Floor: the leanest raw rclpy relay - a `std_msgs/String` subscriber whose async callback awaits
a CallTool client (a no-op server) and publishes the answer as a `std_msgs/String`, on a
SingleThreadedExecutor with a reentrant callback group. Project: a generation with one call
published on /policy/text -> dispatcher -> tool_server hosting `echo` -> ToolResult.
Every process runs on this machine over DDS on loopback, in a domain of its own. Round trips run
in batches, floor and project interleaved; the reported ratio is the median of the per-batch p50
ratios (both sides of one batch saw the same machine load).

    scripts/with_env.sh python bench/dispatch_bench.py [--round-trips 500] [--batches 10]
        [--rate 500] [--seconds 10] [--memory-calls 10000] [--flood 3000]
"""

import argparse
import json
import random
import statistics
import sys
import time

from common import (bench_domain, Driver, percentile, Processes, qos, RAW_RESULTS, RAW_TEXT,
                    role_noop_relay, role_noop_server, start_echo_stack)
from results import record


class Bench(Driver):
    """The measuring side: publishes requests, times the results."""

    def __init__(self) -> None:
        from lerobot_tools_interfaces.msg import ToolResult
        super().__init__()
        String = self.String
        self.results = 0
        self.raw_pub = self.node.create_publisher(String, RAW_TEXT, qos())
        self.text_pub = self.node.create_publisher(String, '/policy/text', qos())
        self.node.create_subscription(String, RAW_RESULTS, self._on_result, qos())
        self.node.create_subscription(ToolResult, '/lerobot_tools/results', self._on_project,
                                      qos())
        self.failures: list[str] = []

    def _on_result(self, msg) -> None:
        self.arrived[msg.data] = time.perf_counter()
        self.results += 1

    def _on_project(self, msg) -> None:
        if not msg.success:
            self.failures.append(f'{msg.error_code}: {msg.error_message}')
            key = msg.call_id
        else:
            key = json.loads(msg.content)['text']
        self.arrived[key] = time.perf_counter()
        self.results += 1

    def send(self, project: bool, key: str) -> None:
        if project:
            text = ('Plan: greet.\n<tool_call>{"name": "echo", "arguments": {"text": "%s"}}'
                    '</tool_call>' % key)
            self.text_pub.publish(self.String(data=text))
        else:
            self.raw_pub.publish(self.String(data=key))

    def probe(self, project: bool) -> bool:
        """Send one request; return whether its result came back within a second."""
        key = f'probe-{random.random()}'
        self.send(project, key)
        arrived = self.spin_until(lambda: key in self.arrived, 1.0)
        self.arrived.pop(key, None)
        return arrived

    def round_trips(self, path: bool, count: int, prefix: str = '') -> list[float]:
        """Round trips on the project's path (``path`` True) or the floor's (False)."""
        return super().round_trips(path, count, prefix or ('p' if path else 'r'))

    def flood(self, count: int, prefix: str) -> tuple[float, int, float]:
        """Publish `count` generations at once; return (publish rate, results, results/s)."""
        before = self.results
        start = time.perf_counter()
        for index in range(count):
            self.send(True, f'{prefix}{index}')
        published = time.perf_counter() - start
        # Results stop coming when every call that reached the dispatcher is answered.
        last_count, last_change = before, time.perf_counter()
        while time.perf_counter() - last_change < 3.0 and self.results - before < count:
            self.executor.spin_once(timeout_sec=0.05)
            if self.results != last_count:
                last_count, last_change = self.results, time.perf_counter()
        received = self.results - before
        keys = [f'{prefix}{index}' for index in range(count)]
        last = max((self.arrived.get(key, start) for key in keys), default=start)
        for key in keys:
            self.arrived.pop(key, None)
        return count / max(published, 1e-9), received, received / max(1e-9, last - start)

    def sustained(self, rate: float, seconds: float, prefix: str) -> tuple[int, int, float]:
        """Publish at `rate` for `seconds`; return (sent, received, achieved results/s)."""
        total = int(rate * seconds)
        before = self.results
        start = time.perf_counter()
        for index in range(total):
            due = start + index / rate
            while time.perf_counter() < due:
                self.executor.spin_once(timeout_sec=max(0.0, due - time.perf_counter()))
            self.send(True, f'{prefix}{index}')
        self.spin_until(lambda: self.results - before >= total, 30.0)
        received = self.results - before
        keys = [f'{prefix}{index}' for index in range(total)]
        last = max((self.arrived.get(key, start) for key in keys), default=start)
        for key in keys:
            self.arrived.pop(key, None)
        return total, received, received / max(1e-9, last - start)


def rss_mb(pid: int) -> float:
    import psutil
    return psutil.Process(pid).memory_info().rss / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--role', choices=['noop_server', 'raw_relay'], help=argparse.SUPPRESS)
    parser.add_argument('--round-trips', type=int, default=500)
    parser.add_argument('--interface', choices=['service', 'action', 'auto'], default='service',
                        help='dispatcher executor_interface: service (default) is the path this '
                        'floor compares with; the action path has its own floor in action_bench')
    parser.add_argument('--batches', type=int, default=10)
    parser.add_argument('--rate', type=float, default=500.0)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--memory-calls', type=int, default=10000)
    parser.add_argument('--flood', type=int, default=3000, metavar='N',
                        help='publish N generations at once and count what is lost (0: skip)')
    args = parser.parse_args()
    if args.role == 'noop_server':
        role_noop_server()
        return 0
    if args.role == 'raw_relay':
        role_noop_relay()
        return 0

    with bench_domain():  # reserved: no other process's traffic in the bench's domain
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    with Processes(__file__) as procs:
        procs.role('noop_server')
        procs.role('raw_relay')
        start_echo_stack(procs, 'dispatch_bench_', '-p', f'executor_interface:={args.interface}')
        bench = Bench()
        ready = bench.spin_until(lambda: (
            bench.raw_pub.get_subscription_count() > 0
            and bench.text_pub.get_subscription_count() > 0
            and '/lerobot_tools/echo' in dict(bench.node.get_service_names_and_types())
            and '/bench/noop' in dict(bench.node.get_service_names_and_types())), 30.0)
        if not ready:
            print('error: the bench processes did not come up', file=sys.stderr)
            return 1
        # Warm up both paths (discovery of the service clients, first-call allocations). A
        # request sent before the service's response path matched is lost: resend until one
        # arrives.
        for on_project in (False, True):
            if not any(bench.probe(on_project) for _ in range(30)):
                print('error: no round trip came back', file=sys.stderr)
                return 1
        bench.round_trips(False, 50)
        bench.round_trips(True, 50)
        floor: list[float] = []
        project: list[float] = []
        ratios: list[float] = []
        batches = max(1, args.batches)
        per_batch = max(1, args.round_trips // batches)
        for _ in range(batches):  # interleave so both see the same machine load
            batch_floor = bench.round_trips(False, per_batch)
            batch_project = bench.round_trips(True, per_batch)
            ratios.append(percentile(batch_project, 0.5) / percentile(batch_floor, 0.5))
            floor += batch_floor
            project += batch_project
        f50, f99 = percentile(floor, 0.5) * 1e3, percentile(floor, 0.99) * 1e3
        print(f'round trips ({len(floor)} each, {batches} interleaved batches, ms)'
              '   p50      p99     mean')
        print(f'  floor: lean rclpy relay + no-op server      {f50:7.3f}  {f99:7.3f}  '
              f'{statistics.mean(floor) * 1e3:7.3f}')
        p50, p99 = percentile(project, 0.5) * 1e3, percentile(project, 0.99) * 1e3
        label = f'project: dispatcher + tool_server (echo, {args.interface})'
        print(f'  {label:43s} {p50:7.3f}  {p99:7.3f}  {statistics.mean(project) * 1e3:7.3f}')
        print('  ratio project/floor: median of per-batch p50 ratios '
              f'{statistics.median(ratios):.2f}x (batches {min(ratios):.2f}-'
              f'{max(ratios):.2f}x); pooled p99 {p99 / f99:.2f}x'
              '   (targets: p50 <= 1.5x, p99 <= 3x)')
        # The median of the per-batch ratios is the figure (both sides of a batch saw the same
        # load); value and floor are the pooled p50s it comes from.
        record('dispatch_bench', 'p50', p50, 'ms', floor=p50 / statistics.median(ratios),
               floor_label='raw rclpy relay + no-op CallTool server', target_ratio=1.5,
               target='<= 1.5x', label=f'policy text -> ToolResult (echo, {args.interface}), '
               f'p50 (median of {batches} batch ratios)', batch_ratios=ratios,
               samples=[t * 1e3 for t in project[::max(1, len(project) // 300)]],
               floor_samples=[t * 1e3 for t in floor[::max(1, len(floor) // 300)]])
        record('dispatch_bench', 'p99', p99, 'ms', floor=f99,
               floor_label='raw rclpy relay + no-op CallTool server', target_ratio=3.0,
               target='<= 3x', label='policy text -> ToolResult, pooled p99')

        sent, received, achieved = bench.sustained(args.rate, args.seconds, 's')
        lost = sent - received
        print(f'sustained: {sent} calls at {args.rate:g}/s for {args.seconds:g} s -> '
              f'{received} results, {lost} lost, {achieved:.0f} results/s '
              '(target: >= 500/s, 0 lost)')
        record('dispatch_bench', 'sustained.lost', lost, 'calls', target='0 lost',
               met=lost == 0, label=f'sustained {args.rate:g} calls/s for {args.seconds:g} s: '
               f'calls lost ({achieved:.0f} results/s)')
        if bench.failures:
            print(f'  failures: {len(bench.failures)}, first: {bench.failures[0]}')
        if args.flood:
            # Overload: what arrives faster than it is processed waits in the input queue
            # (reliable, depth 1000); beyond that DDS replaces the oldest, and neither side is told
            # (no message_lost event for reliable keep-last readers with Fast DDS).
            rate, received, processed = bench.flood(args.flood, 'f')
            print(f'flood: {args.flood} generations published at once ({rate:.0f}/s) -> '
                  f'{received} results ({args.flood - received} never reached the dispatcher), '
                  f'processed at {processed:.0f} results/s')

        pid = procs['dispatcher'].pid
        before = rss_mb(pid)
        seconds = args.memory_calls / args.rate
        sent, received, _ = bench.sustained(args.rate, seconds, 'm')
        after = rss_mb(pid)
        print(f'memory: dispatcher RSS {before:.1f} MB -> {after:.1f} MB over {received} calls '
              f'({after - before:+.2f} MB; target: < 5 MB)')
        record('dispatch_bench', 'rss_growth', after - before, 'MB', target='< 5 MB',
               met=after - before < 5, label=f'dispatcher RSS growth over {received} calls')
        return 0


if __name__ == '__main__':
    sys.exit(main())
