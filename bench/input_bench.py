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
Input rate: how fast the dispatcher takes policy generations, and what overload loses.

One process publishes generations on /policy/text (reliable, deep enough that nothing is dropped
on the publishing side); everything runs on this machine over DDS on loopback, in a domain of its
own. Measured in the same run:

- take floor: a bare rclpy subscriber (std_msgs/String, SingleThreadedExecutor) that only
  counts: what taking a message costs before any of our code runs;
- project: the dispatcher with a tool_server hosting `echo`. Each generation holds one echo call
  (a parsed call, its executor round trip, a result).

For each path: a flood (all generations published at once; what is taken per second, and how
many were lost - for the dispatcher from its diagnostics `input_lost`, checked against
published minus taken) and sustained rates (each for `--seconds`): the highest rate with
nothing lost is the sustained rate. `--profile FILE` runs the dispatcher under cProfile.

    scripts/with_env.sh python bench/input_bench.py [--flood 3000] [--rates 250,500,750,1000]
        [--seconds 4] [--interface auto|action|service] [--profile FILE]
"""

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

from common import spin
from results import record

DEPTH = 20000


def _qos():
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=DEPTH, reliability=ReliabilityPolicy.RELIABLE)


def role_counter() -> None:
    """Count /bench/text messages and report the count on /bench/count (the take floor)."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String, UInt64
    rclpy.init()
    node = rclpy.create_node('bench_counter')
    taken = [0]

    def on_text(msg, info=None):  # noqa: ARG001
        taken[0] += 1
    node.create_subscription(String, '/bench/text', on_text,
                             QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    pub = node.create_publisher(UInt64, '/bench/count', 10)
    node.create_timer(0.2, lambda: pub.publish(UInt64(data=taken[0])))
    spin(node)


class Driver:
    """Publishes generations; follows results, the floor's count and the dispatcher's input."""

    def __init__(self) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from lerobot_tools_interfaces.msg import ToolResult
        from rclpy.executors import SingleThreadedExecutor
        from std_msgs.msg import String, UInt64
        rclpy.init()
        self.node = rclpy.create_node('bench_input_driver')
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.String = String
        self.results = 0
        self.last_result = 0.0
        self.floor_count = 0
        self.floor_changed = 0.0
        self.input: dict = {}
        self.text_pub = self.node.create_publisher(String, '/policy/text', _qos())
        self.floor_pub = self.node.create_publisher(String, '/bench/text', _qos())
        self.node.create_subscription(ToolResult, '/lerobot_tools/results', self._on_result,
                                      _qos())
        self.node.create_subscription(UInt64, '/bench/count', self._on_count, 10)
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 10)

    def _on_result(self, msg) -> None:
        self.results += 1
        self.last_result = time.perf_counter()

    def _on_count(self, msg) -> None:
        if msg.data != self.floor_count:
            self.floor_count = msg.data
            self.floor_changed = time.perf_counter()

    def _on_diag(self, array) -> None:
        for status in array.status:
            if status.name.endswith(': input'):
                self.input = {kv.key: kv.value for kv in status.values}

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def quiet(self, value, seconds: float = 2.0) -> None:
        """Spin until value() has not changed for `seconds`."""
        last, since = value(), time.perf_counter()
        while time.perf_counter() - since < seconds:
            self.executor.spin_once(timeout_sec=0.05)
            if value() != last:
                last, since = value(), time.perf_counter()

    def generation(self, index: int) -> str:
        return ('Plan: greet.\n<tool_call>{"name": "echo", "arguments": {"text": "i%d"}}'
                '</tool_call>' % index)

    def publish(self, floor: bool, count: int, rate: float | None) -> float:
        """Publish `count` generations (at `rate`/s, or at once); return the seconds it took."""
        pub = self.floor_pub if floor else self.text_pub
        start = time.perf_counter()
        for index in range(count):
            if rate:
                due = start + index / rate
                while time.perf_counter() < due:
                    self.executor.spin_once(timeout_sec=max(0.0, due - time.perf_counter()))
            pub.publish(self.String(data=self.generation(index)))
        return time.perf_counter() - start

    def run_floor(self, count: int, rate: float | None) -> tuple[int, float]:
        """Return (taken, taken per second) for the bare subscriber."""
        before = self.floor_count
        start = time.perf_counter()
        self.publish(True, count, rate)
        self.quiet(lambda: self.floor_count, 1.5)
        taken = self.floor_count - before
        return taken, taken / max(1e-9, self.floor_changed - start)

    def input_values(self) -> dict:
        """Return the dispatcher's input counters from the next diagnostics message."""
        self.input = {}
        self.spin_until(lambda: bool(self.input), 5.0)
        return {key: int(value) for key, value in self.input.items()
                if key in ('input_lost', 'input_taken')}

    def run_project(self, count: int, rate: float | None) -> tuple[int, int, float, int]:
        """Return (taken, results, results per second, lost per diagnostics)."""
        before = self.input_values()
        results = self.results
        start = time.perf_counter()
        self.publish(False, count, rate)
        self.quiet(lambda: self.results, 2.0)
        after = self.input_values()
        got = self.results - results
        return (after['input_taken'] - before['input_taken'], got,
                got / max(1e-9, self.last_result - start),
                after['input_lost'] - before['input_lost'])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--role', choices=['counter'], help=argparse.SUPPRESS)
    parser.add_argument('--flood', type=int, default=3000)
    parser.add_argument('--rates', default='250,500,750,1000')
    parser.add_argument('--seconds', type=float, default=4.0)
    parser.add_argument('--interface', choices=['auto', 'action', 'service'], default='auto')
    parser.add_argument('--profile', type=pathlib.Path, default=None)
    args = parser.parse_args()
    if args.role == 'counter':
        role_counter()
        return 0
    from domain_coordinator import domain_id
    with domain_id() as domain:
        os.environ['ROS_DOMAIN_ID'] = str(domain)
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    workdir = pathlib.Path(tempfile.mkdtemp(prefix='input_bench_'))
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    (workdir / 'meta').mkdir()
    (workdir / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA,
                                                                      *DEFAULT_TOOLS]}))
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    py = [sys.executable]
    dispatcher = py + (['-m', 'cProfile', '-o', str(args.profile)] if args.profile else []) + [
        '-m', 'lerobot_tools_ros.dispatcher.node']
    procs = {
        'counter': subprocess.Popen(py + [str(pathlib.Path(__file__).resolve()),
                                          '--role', 'counter'], env=env),
        'tool_server': subprocess.Popen(py + ['-m', 'lerobot_tools_ros.tool_server.node',
                                              '--ros-args', '-p', 'tools:=[echo]',
                                              '-p', f'dataset:={workdir}',
                                              '--log-level', 'error'], env=env),
        'dispatcher': subprocess.Popen(dispatcher + [
            '--ros-args', '-p', f'dataset:={workdir}', '-p', 'max_pending:=100000',
            '-p', f'executor_interface:={args.interface}', '-p', 'tool.echo.timeout_s:=120.0',
            '--log-level', 'error'], env=env),
    }
    try:
        driver = Driver()
        ready = driver.spin_until(lambda: (
            driver.text_pub.get_subscription_count() > 0
            and driver.floor_pub.get_subscription_count() > 0
            and '/lerobot_tools/echo' in dict(driver.node.get_service_names_and_types())), 60.0)
        if not ready:
            print('error: the bench processes did not come up', file=sys.stderr)
            return 1
        # Warm up: results flow, and the dispatcher has proven the executor.
        for _ in range(100):
            driver.text_pub.publish(driver.String(data=driver.generation(0)))
            if driver.spin_until(lambda: driver.results > 0, 0.5):
                break
        driver.publish(False, 200, 200.0)
        driver.quiet(lambda: driver.results, 1.0)
        driver.publish(True, 200, 200.0)
        driver.quiet(lambda: driver.floor_count, 1.0)

        print(f'flood: {args.flood} generations published at once')
        taken, rate = driver.run_floor(args.flood, None)
        print(f'  take floor (bare rclpy subscriber)   taken {taken:5d}  lost '
              f'{args.flood - taken:5d}  {rate:6.0f}/s taken')
        taken, results, rate, lost = driver.run_project(args.flood, None)
        check = 'equals' if lost == args.flood - taken else 'DIFFERS FROM'
        print(f'  dispatcher + echo ({args.interface:7s})      taken {taken:5d}  lost '
              f'{lost:5d}  {rate:6.0f}/s results ({results} results; input_lost {check} '
              'published - taken)')
        record('input_bench', 'flood.counted', lost, 'lost', target='every loss counted',
               met=lost == args.flood - taken, label=f'a burst of {args.flood} generations: '
               f'lost before the dispatcher took them ({taken} taken; counted exactly: '
               f'{lost == args.flood - taken})')
        rates = [float(rate) for rate in args.rates.split(',') if rate]
        print(f'sustained: each rate for {args.seconds:g} s')
        for rate in rates:
            count = int(rate * args.seconds)
            taken, floor_rate = driver.run_floor(count, rate)
            p_taken, results, p_rate, lost = driver.run_project(count, rate)
            print(f'  {rate:6.0f}/s  floor lost {count - taken:5d}   dispatcher lost {lost:5d}'
                  f'  results {results:5d}/{count}  ({p_rate:4.0f}/s)')
            record('input_bench', f'sustained.{rate:g}', lost, 'lost', target='0 lost (>= 500/s)',
                   met=lost == 0, floor=count - taken, floor_label='a bare subscriber lost',
                   ratio=False, label=f'{rate:g} generations/s for {args.seconds:g} s: lost '
                   f'({results}/{count} results)')
        return 0
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGINT)
        for proc in procs.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == '__main__':
    sys.exit(main())
