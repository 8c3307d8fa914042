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
E-stop round trips while the dispatcher faces hostile input, next to an idle e-stop, same run.

The e-stop is ``/dispatcher/set_enabled`` (false, then true again: two round trips each time).
Target: every e-stop answered within 100 ms whatever the dispatcher is fed. One
dispatcher (with a tool_server hosting echo) whose catalog holds a backtracking ``pattern``
(``^(a+)+$``), a ``format: regex`` argument and a ``$ref`` loop (refused at load), and whose
audit log is a named pipe whose reader stopped reading. For each scenario an attacker process
keeps ``--in-flight`` hostile requests in flight (a new one as soon as one is answered; policy
texts at ``--text-rate`` per second) while the bench measures e-stop round trips:

- ``idle``: nothing sent (the floor);
- ``deep``: ``~/call`` arguments of 990 nested brackets (2 KB);
- ``huge``: ``~/call`` arguments of 11.7 MB;
- ``ref_loop``: calls of the tool whose schema loops;
- ``format_regex``: a ``format: regex`` value 1000 groups deep (a RecursionError in the check);
- ``redos``: 40 characters against ``^(a+)+$``;
- ``audit_fifo``: policy texts of 10 echo calls each, the audit pipe full.

    scripts/with_env.sh python bench/limits_bench.py [--seconds 6] [--round-trips 20]
        [--in-flight 1] [--text-rate 20]

Each of these inputs once blocked the dispatch thread for seconds or for ever (or ended the
process). With ``--in-flight 4`` the attacker floods the dispatcher as fast as it answers: that
measures how the e-stop shares the dispatch thread with a flood, not what one input costs.
"""

import argparse
import json
import os
import sys
import tempfile
import time

from common import bench_domain, catalog_dir, percentile, Processes, qos
from results import record

TARGET_S = 0.100
SCENARIOS = ('idle', 'deep', 'huge', 'ref_loop', 'format_regex', 'redos', 'audit_fifo')


def _tools() -> list[dict]:
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA

    def tool(name: str, parameters: dict) -> dict:
        return {'type': 'function', 'function': {'name': name, 'description': name,
                                                 'parameters': parameters}}
    return [ECHO_SCHEMA, *DEFAULT_TOOLS,
            tool('code', {'type': 'object', 'properties': {
                'code': {'type': 'string', 'pattern': '^(a+)+$'}}}),
            tool('find', {'type': 'object', 'properties': {
                'expr': {'type': 'string', 'format': 'regex'}}}),
            tool('loop', {'type': 'object', '$defs': {'a': {'$ref': '#/$defs/a'}},
                          'properties': {'x': {'$ref': '#/$defs/a'}}})]


def _requests(scenario: str) -> tuple[str, str]:
    """Return (tool name, arguments text) of one hostile ~/call of ``scenario``."""
    return {
        'deep': ('echo', '{"text": ' + '[' * 990 + ']' * 990 + '}'),
        'huge': ('echo', json.dumps({'text': 'x' * 11_700_000})),
        'ref_loop': ('loop', '{"x": 1}'),
        'format_regex': ('find', json.dumps({'expr': '(' * 1000 + ')' * 1000})),
        'redos': ('code', json.dumps({'code': 'a' * 40 + '!'})),
    }[scenario]


def role_attack(scenario: str, seconds: float, in_flight: int, text_rate: float) -> None:
    """Keep ``in_flight`` hostile requests in flight (or send policy texts) for ``seconds``."""
    import rclpy
    from lerobot_tools_interfaces.srv import CallTool
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import String
    rclpy.init()
    node = rclpy.create_node(f'bench_attacker_{scenario}')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    deadline = time.monotonic() + seconds
    sent = 0
    if scenario == 'audit_fifo':
        pub = node.create_publisher(String, '/policy/text', qos())
        next_text = time.monotonic()
        while time.monotonic() < deadline:
            if time.monotonic() >= next_text:
                pub.publish(String(data=''.join(f'<echo>{sent}-{i} {"z" * 200}</echo>'
                                                for i in range(10))))
                sent += 1
                next_text += 1.0 / text_rate
            executor.spin_once(timeout_sec=0.005)
    else:
        client = node.create_client(CallTool, '/dispatcher/call')
        client.wait_for_service(10.0)
        name, arguments = _requests(scenario)
        pending: list = []
        while time.monotonic() < deadline:
            pending = [future for future in pending if not future.done()]
            if len(pending) < in_flight:
                pending.append(client.call_async(CallTool.Request(
                    name=name, arguments=arguments, source='bench')))
                sent += 1
            executor.spin_once(timeout_sec=0.01)
    print(f'  attacker {scenario}: {sent} sent', flush=True)
    rclpy.try_shutdown()


class EStop:
    """The operator's side: ``/dispatcher/set_enabled`` round trips."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from std_srvs.srv import SetBool
        rclpy.init()
        self.SetBool = SetBool
        self.node = rclpy.create_node('bench_operator')
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.client = self.node.create_client(SetBool, '/dispatcher/set_enabled')

    def prove(self) -> None:
        """Send until answered: a fresh client's first request can be lost while matching."""
        if not self.client.wait_for_service(30.0):
            raise RuntimeError('no /dispatcher/set_enabled')
        for _ in range(60):
            if self.round_trip(True, timeout=0.5) is not None:
                return
        raise RuntimeError('/dispatcher/set_enabled never answered')

    def round_trip(self, data: bool, timeout: float = 30.0) -> float | None:
        start = time.perf_counter()
        future = self.client.call_async(self.SetBool.Request(data=data))
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.001)
        if not future.done():
            self.client.remove_pending_request(future)
            return None
        return time.perf_counter() - start

    def measure(self, count: int) -> list[float]:
        rtts = []
        for _ in range(count):
            for data in (False, True):
                rtt = self.round_trip(data)
                rtts.append(rtt if rtt is not None else float('inf'))
            time.sleep(0.05)
        return rtts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--role', choices=['attack'], help=argparse.SUPPRESS)
    parser.add_argument('--scenario', choices=SCENARIOS, help=argparse.SUPPRESS)
    parser.add_argument('--seconds', type=float, default=6.0)
    parser.add_argument('--round-trips', type=int, default=20,
                        help='e-stop pause/resume pairs measured per scenario')
    parser.add_argument('--in-flight', type=int, default=1,
                        help='hostile ~/call requests the attacker keeps in flight')
    parser.add_argument('--text-rate', type=float, default=20.0,
                        help='policy texts (10 calls each) per second in audit_fifo')
    args = parser.parse_args()
    if args.role == 'attack':
        role_attack(args.scenario, args.seconds, args.in_flight, args.text_rate)
        return 0
    with bench_domain():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    workdir = catalog_dir('limits_bench_', _tools())
    fifo = os.path.join(tempfile.mkdtemp(prefix='limits_bench_audit_'), 'audit.fifo')
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # opened, never read
    try:
        with Processes(__file__) as procs:
            procs.node('tool_server', 'lerobot_tools_ros.tool_server.node', '-p',
                       'tools:=[echo]', '-p', f'dataset:={workdir}', '--log-level', 'error')
            procs.node('dispatcher', 'lerobot_tools_ros.dispatcher.node', '-p',
                       f'dataset:={workdir}', '-p', f'audit_log:={fifo}', '-p',
                       'max_pending:=100000', '-p', 'timeout_s:=2.0', '--log-level', 'error')
            operator = EStop()
            operator.prove()
            print(f'e-stop round trips (/dispatcher/set_enabled), {args.round_trips} pause/'
                  f'resume pairs per scenario, attacker running {args.seconds:g} s with '
                  f'{args.in_flight} request(s) in flight ({args.text_rate:g} texts/s); load '
                  f'average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores')
            floor = None
            failed = False
            for scenario in SCENARIOS:
                attacker = None
                if scenario != 'idle':
                    attacker = procs.role('attack', '--scenario', scenario, '--seconds',
                                          str(args.seconds), '--in-flight', str(args.in_flight),
                                          '--text-rate', str(args.text_rate))
                    time.sleep(1.0)  # it connects and fills the dispatcher's queue
                rtts = operator.measure(args.round_trips)
                if attacker is not None:
                    attacker.wait(args.seconds + 30)
                if procs['dispatcher'].poll() is not None:
                    print(f'  {scenario}: the dispatcher exited ({procs["dispatcher"].poll()})')
                    return 1
                p50, worst = percentile(rtts, 0.5), max(rtts)
                floor = floor or p50
                ok = worst <= TARGET_S
                failed |= not ok
                record('limits_bench', scenario, worst * 1e3, 'ms', floor=floor * 1e3,
                       floor_label='idle e-stop p50', target=f'<= {TARGET_S * 1e3:.0f} ms',
                       met=ok, ratio=False,
                       label=f'e-stop round trip under {scenario!r} input, max')
                print(f'  {scenario:<13} p50 {p50 * 1e3:7.2f} ms  p99 '
                      f'{percentile(rtts, 0.99) * 1e3:7.2f} ms  max {worst * 1e3:7.2f} ms  '
                      f'p50/idle {p50 / floor:5.2f}x  {"ok" if ok else "OVER 100 ms"}')
            print(f'target: every e-stop within {TARGET_S * 1e3:.0f} ms: '
                  f'{"met" if not failed else "NOT met"}')
            return 0
    finally:
        os.close(reader)


if __name__ == '__main__':
    sys.exit(main())
