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
Action path overhead: policy text -> dispatcher -> RunTool action (echo) -> ToolResult.

Measured in the same run, interleaved so every path sees the same machine load:

- relay floor: a raw rclpy node that takes the text, calls a no-op CallTool service and
  publishes a ToolResult (the floor `dispatch_bench.py` uses);
- action floor: the same raw relay, but sending a RunTool goal to a raw rclpy action server whose
  execute callback answers at once, then asking for the result (goal, accept, result request,
  result: the round trips any action call costs);
- project: a generation on /policy/text -> dispatcher -> tool_server's RunTool action on `echo`
  -> ToolResult. Target: p50 within 1.5x of the action floor.

Two direct measurements (no relay, the driver calls itself) show where the time goes: a raw
action round trip to the raw server, and one to tool_server through `ExecutorClient` (the
client the dispatcher uses). Every process runs on this machine over DDS on loopback, in a
domain of its own.

    scripts/with_env.sh python bench/action_bench.py [--round-trips 500]
"""

import argparse
import json
import statistics
import sys
import time

from common import (answer_noop, bench_domain, Driver, percentile, Processes, qos, spin,
                    start_echo_stack)
from results import record


def role_noop_servers() -> None:
    """Answer every CallTool request and RunTool goal at once (the floors' executors)."""
    import rclpy
    from lerobot_tools_interfaces.action import RunTool
    from lerobot_tools_interfaces.srv import CallTool
    from rclpy.action import ActionServer
    rclpy.init()
    node = rclpy.create_node('bench_noop_servers')

    def execute(goal_handle):
        goal_handle.succeed()
        return RunTool.Result(success=True, call_id=goal_handle.request.call_id,
                              content=goal_handle.request.arguments)
    node.create_service(CallTool, '/bench/noop', answer_noop)
    # Results kept as long as tool_server keeps them by default: every kept goal is listed in
    # each status message, so the floor must keep as many for the ratio to show our own cost.
    from lerobot_tools_ros.parameters.declarations import TOOL_SERVER
    ActionServer(node, RunTool, '/bench/noop', execute,
                 result_timeout=TOOL_SERVER['action_result_timeout_s'].default)
    spin(node)


def role_raw_relay() -> None:
    """Take text, call the no-op service or action asynchronously, publish the answer."""
    import rclpy
    from lerobot_tools_interfaces.action import RunTool
    from lerobot_tools_interfaces.msg import ToolResult
    from lerobot_tools_interfaces.srv import CallTool
    from rclpy.action import ActionClient
    from std_msgs.msg import String
    rclpy.init()
    node = rclpy.create_node('bench_raw_relay')
    client = node.create_client(CallTool, '/bench/noop')
    action = ActionClient(node, RunTool, '/bench/noop')
    pub = node.create_publisher(ToolResult, '/bench/raw_results', qos())

    def on_text(msg):
        future = client.call_async(CallTool.Request(call_id=msg.data, name='noop',
                                                    arguments='{}'))

        def done(fut, call_id=msg.data):
            response = fut.result()
            pub.publish(ToolResult(call_id=call_id, success=response.success,
                                   content=response.content))
        future.add_done_callback(done)

    def on_action_text(msg):
        goal = RunTool.Goal(call_id=msg.data, name='noop', arguments='{}')

        def accepted(fut, call_id=msg.data):
            def done(result_fut):
                result = result_fut.result().result
                pub.publish(ToolResult(call_id=call_id, success=result.success,
                                       content=result.content))
            fut.result().get_result_async().add_done_callback(done)
        action.send_goal_async(goal).add_done_callback(accepted)
    node.create_subscription(String, '/bench/raw_text', on_text, qos())
    node.create_subscription(String, '/bench/raw_action_text', on_action_text, qos())
    spin(node)


class Bench(Driver):
    """The measuring side: publishes requests or sends goals, times the results."""

    def __init__(self) -> None:
        from lerobot_tools_interfaces.action import RunTool
        from lerobot_tools_interfaces.msg import ToolResult
        from lerobot_tools_ros.executors import ExecutorClient
        from rclpy.action import ActionClient
        from rclpy.logging import LoggingSeverity
        super().__init__()
        String = self.String
        self.RunTool = RunTool
        self.pubs = {
            'relay': self.node.create_publisher(String, '/bench/raw_text', qos()),
            'action_relay': self.node.create_publisher(String, '/bench/raw_action_text', qos()),
            'project': self.node.create_publisher(String, '/policy/text', qos()),
        }
        self.node.create_subscription(ToolResult, '/bench/raw_results', self._on_result, qos())
        self.node.create_subscription(ToolResult, '/lerobot_tools/results', self._on_project,
                                      qos())
        self.raw_action = ActionClient(self.node, RunTool, '/bench/noop')
        self.node.get_logger().set_level(LoggingSeverity.WARN)  # the client's path notes
        self.tool_server = ExecutorClient(self.node, '/lerobot_tools/echo', mode='action')
        self.failures: list[str] = []

    def _on_result(self, msg) -> None:
        self.arrived[msg.call_id] = time.perf_counter()

    def _on_project(self, msg) -> None:
        if not msg.success:
            self.failures.append(f'{msg.error_code}: {msg.error_message}')
            key = msg.call_id
        else:
            key = json.loads(msg.content)['text']
        self.arrived[key] = time.perf_counter()

    def send(self, path: str, key: str) -> None:
        if path == 'project':
            text = ('Plan: greet.\n<tool_call>{"name": "echo", "arguments": {"text": "%s"}}'
                    '</tool_call>' % key)
            self.pubs[path].publish(self.String(data=text))
        elif path in self.pubs:
            self.pubs[path].publish(self.String(data=key))
        elif path == 'raw_action':
            def accepted(fut):
                fut.result().get_result_async().add_done_callback(
                    lambda _: self.arrived.__setitem__(key, time.perf_counter()))
            self.raw_action.send_goal_async(self.RunTool.Goal(
                call_id=key, name='noop', arguments='{}')).add_done_callback(accepted)
        else:  # tool_server through ExecutorClient
            self.tool_server.send(key, 'echo', {}, lambda _: self.arrived.__setitem__(
                key, time.perf_counter()))


PATHS = {
    'relay': 'relay floor: raw relay + no-op service',
    'action_relay': 'action floor: raw relay + raw action',
    'project': 'project: dispatcher + tool_server action',
    'raw_action': 'direct: raw action round trip',
    'tool_server': 'direct: ExecutorClient -> tool_server',
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--role', choices=['noop_servers', 'raw_relay'], help=argparse.SUPPRESS)
    parser.add_argument('--round-trips', type=int, default=500)
    args = parser.parse_args()
    if args.role == 'noop_servers':
        role_noop_servers()
        return 0
    if args.role == 'raw_relay':
        role_raw_relay()
        return 0

    with bench_domain():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    with Processes(__file__) as procs:
        procs.role('noop_servers')
        procs.role('raw_relay')
        start_echo_stack(procs, 'action_bench_')
        bench = Bench()
        ready = bench.spin_until(lambda: (
            all(pub.get_subscription_count() > 0 for pub in bench.pubs.values())
            and bench.raw_action.server_is_ready() and bench.tool_server.poll()), 30.0)
        if not ready:
            print('error: the bench processes did not come up', file=sys.stderr)
            return 1
        for path in PATHS:  # warm up: discovery, readiness probes, first-call allocations
            bench.round_trips(path, 50)
        rounds = 5
        figures: dict[str, list[float]] = {path: [] for path in PATHS}
        for _ in range(rounds):  # interleaved, so every path sees the same machine load
            for path in PATHS:
                figures[path] += bench.round_trips(path, args.round_trips // rounds)
        print(f'round trips ({args.round_trips // rounds * rounds} each, ms)'
              '                  p50      p99     mean')
        stats = {}
        for path, label in PATHS.items():
            values = figures[path]
            stats[path] = (percentile(values, 0.5) * 1e3, percentile(values, 0.99) * 1e3)
            print(f'  {label:<44} {stats[path][0]:7.3f}  {stats[path][1]:7.3f}  '
                  f'{statistics.mean(values) * 1e3:7.3f}')
        for path, floor in (('project', 'action_relay'), ('project', 'relay'),
                            ('action_relay', 'relay'), ('tool_server', 'raw_action')):
            print(f'  ratio {path}/{floor}'.ljust(48) + f'{stats[path][0] / stats[floor][0]:6.2f}x'
                  f' {stats[path][1] / stats[floor][1]:6.2f}x'
                  + ('   (target: p50 <= 1.5x)' if (path, floor) == ('project', 'action_relay')
                     else ''))
        for floor, target in (('action_relay', 1.5), ('relay', None)):
            record('action_bench', f'project/{floor}', stats['project'][0], 'ms',
                   floor=stats[floor][0], floor_label=PATHS[floor].split(': ', 1)[-1],
                   target_ratio=target, target=f'<= {target:g}x' if target else '',
                   label='policy text -> RunTool action (echo) -> ToolResult, p50',
                   samples=[t * 1e3 for t in figures['project']][:300] if target else None,
                   floor_samples=[t * 1e3 for t in figures[floor]][:300] if target else None)
        if bench.failures:
            print(f'  failures: {len(bench.failures)}, first: {bench.failures[0]}')
        return 0


if __name__ == '__main__':
    sys.exit(main())
