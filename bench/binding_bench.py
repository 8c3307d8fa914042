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
Bound-tool latency: policy text -> dispatcher -> tool_server -> a bound std_srvs/SetBool service.

Measured in the same run, interleaved so every path sees the same machine load:
- floor: the raw rclpy relay floor of dispatch_bench.py (a std_msgs/String in, the SetBool
  service awaited on a SingleThreadedExecutor, a String out: one hop), pointed at the same
  SetBool server;
- floor2: the same relay calling a raw rclpy hop server (an async SetBool service that calls
  the SetBool server and answers): two hops, written the fast way;
- echo, bound: dispatcher and tool_server as two processes (the built-in echo tool; ``set_light``
  bound in a bindings file to the SetBool server): dispatcher -> tool_server over DDS;
- echo in-proc, bound in-proc: dispatcher and tool_server in one process, as
  ``lerobot-tools-ros bringup`` runs them (under the namespace /inproc): the dispatcher calls
  the tool_server directly (``in_process_executors``), no DDS hop between them;
- call alone: in this process, ``ServiceBinding.call`` alone against a raw rclpy client call
  (``call_async`` + ``spin_until_future_complete``) to the same server: the binding's own cost.
Every process runs on this machine over DDS on loopback, in a reserved domain of its own.
``--profile FILE`` writes a cProfile of the in-process stack (dispatcher + tool_server);
``--inner`` prints the p50 of the bound call made on that stack's worker thread (at its exit).

    scripts/with_env.sh python bench/binding_bench.py [--round-trips 500] [--interface auto]
"""

import argparse
import json
import pathlib
import random
import statistics
import sys
import tempfile
import time
from typing import TYPE_CHECKING

from common import (bench_domain, Driver, percentile, Processes, qos, RAW_RESULTS, RAW_TEXT,
                    relay_main, spin, test_helper)
from results import record

if TYPE_CHECKING:  # mypy follows it (setup.cfg): the bench's calls into it are checked
    import bound_stack as stack
else:  # the stack's files and command lines are the binding tests' (test/bound_stack.py)
    stack = test_helper('bound_stack')

LIGHT_SERVICE = '/bench/light'
HOP_SERVICE = '/bench/hop'
IN_PROCESS = '/inproc'  # namespace of the in-process stack (its own topics and executors)


def role_light_server() -> None:
    """Serve the robot's SetBool service, answering at once."""
    import rclpy
    from std_srvs.srv import SetBool
    rclpy.init()
    node = rclpy.create_node('bench_light')

    def handle(request, response):
        response.success = True
        response.message = 'on' if request.data else 'off'
        return response
    node.create_service(SetBool, LIGHT_SERVICE, handle)
    spin(node)


def role_hop_server() -> None:
    """Serve a SetBool that forwards each request to the robot's service (raw two hops)."""
    import rclpy
    from rclpy.callback_groups import ReentrantCallbackGroup
    from std_srvs.srv import SetBool
    rclpy.init()
    node = rclpy.create_node('bench_hop')
    # Reentrant: the response to the forwarded request must run while the service task waits.
    group = ReentrantCallbackGroup()
    client = node.create_client(SetBool, LIGHT_SERVICE, callback_group=group)
    client.wait_for_service()  # offer the hop only once the robot's service is reachable
    time.sleep(0.5)  # and its response path has matched

    async def handle(request, response):
        answer = await client.call_async(SetBool.Request(data=request.data))
        response.success = answer.success
        response.message = answer.message
        return response
    node.create_service(SetBool, HOP_SERVICE, handle, callback_group=group)
    spin(node)


def role_raw_relay(service: str, suffix: str) -> None:
    """Run the floor: String in, SetBool awaited, String out."""
    from std_srvs.srv import SetBool
    relay_main(SetBool, service, lambda _key: SetBool.Request(data=True),
               name=f'bench_raw_relay{suffix}', text_topic=RAW_TEXT + suffix,
               results_topic=RAW_RESULTS + suffix)


def _time_binding_calls() -> None:
    """Time every ServiceBinding.call in this process; print the p50 at exit (``--inner``)."""
    import atexit

    from lerobot_tools_ros.tools.bindings.service import ServiceBinding
    spans: list[float] = []
    call = ServiceBinding.call

    def timed(self, arguments, context=None):
        start = time.perf_counter()
        try:
            return call(self, arguments, context)
        finally:
            spans.append(time.perf_counter() - start)
    # Replaced on the class, so the tool_server's own ServiceBinding instances are timed.
    ServiceBinding.call = timed  # type: ignore[method-assign]  # a timing wrapper, same signature
    atexit.register(lambda: spans and print(
        "inner: ServiceBinding.call on the in-process stack's worker thread p50 "
        f'{percentile(spans, 0.5) * 1e3:.3f} ms ({len(spans)} calls)', flush=True))


def role_stack(dataset: str, bindings: str, interface: str, profile: str, inner: bool) -> None:
    """Run dispatcher and tool_server in this one process, on one executor (as bringup)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from lerobot_tools_ros.dispatcher.node import Dispatcher
    from lerobot_tools_ros.tool_server.node import ToolServer
    # Ctrl-C stops the spin, then the nodes go in order while the context is valid (bringup).
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    if inner:
        _time_binding_calls()
    extra = ('-r', f'__ns:={IN_PROCESS}', '--log-level', 'warn')
    nodes = [Dispatcher(cli_args=stack.dispatcher_args(
        pathlib.Path(dataset), '-p', f'executor_interface:={interface}', *extra))]
    nodes.append(ToolServer(cli_args=stack.tool_server_args(
        pathlib.Path(dataset), pathlib.Path(bindings), *extra)))
    executor = SingleThreadedExecutor()
    for node in nodes:
        executor.add_node(node)
    profiler = None
    if profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    try:
        executor.spin()
    except KeyboardInterrupt:
        pass
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        for node in reversed(nodes):
            executor.remove_node(node)
            node.destroy_node()
        rclpy.try_shutdown()


class Bench(Driver):
    """The measuring side: publishes one generation at a time, times its result."""

    TEXT = {'floor': RAW_TEXT, 'floor2': RAW_TEXT + '2', 'echo': '/policy/text',
            'bound': '/policy/text', 'echo in-proc': f'{IN_PROCESS}/policy/text',
            'bound in-proc': f'{IN_PROCESS}/policy/text'}

    def __init__(self) -> None:
        from lerobot_tools_interfaces.msg import ToolResult
        super().__init__()
        self.results: list = []
        self.pubs = {topic: self.node.create_publisher(self.String, topic, qos())
                     for topic in set(self.TEXT.values())}
        for topic, kind in ((RAW_RESULTS, self.String), (RAW_RESULTS + '2', self.String),
                            ('/lerobot_tools/results', ToolResult),
                            (f'{IN_PROCESS}/lerobot_tools/results', ToolResult)):
            self.node.create_subscription(
                kind, topic, lambda msg: self.results.append((time.perf_counter(), msg)), qos())

    def connected(self) -> bool:
        return (all(pub.get_subscription_count() > 0 for pub in self.pubs.values())
                and self.node.count_publishers('/lerobot_tools/results') > 0
                and self.node.count_publishers(f'{IN_PROCESS}/lerobot_tools/results') > 0)

    def once(self, path: str) -> float:
        """One round trip on ``path`` (a key of TEXT); return seconds."""
        before = len(self.results)
        if path.startswith('floor'):
            message = self.String(data=f'r{random.random()}')
        else:
            call = ({'name': 'echo', 'arguments': {'text': 'hi'}} if path.startswith('echo')
                    else {'name': 'set_light', 'arguments': {'on': True}})
            message = self.String(data=f'Plan.\n<tool_call>{json.dumps(call)}</tool_call>')
        publisher = self.pubs[self.TEXT[path]]
        start = time.perf_counter()
        publisher.publish(message)
        if not self.spin_until(lambda: len(self.results) > before, 10.0):
            raise RuntimeError(f'no result on the {path} path')
        arrived, result = self.results[before]
        if path.startswith('floor'):
            if result.data != message.data:
                raise RuntimeError(f'{path}: unexpected answer {result.data!r}')
        elif not result.success:
            raise RuntimeError(f'{path}: {result.error_code}: {result.error_message}')
        elif path.startswith('bound') and result.content != 'on':
            raise RuntimeError(f'{path}: unexpected content {result.content!r}')
        return arrived - start


def call_alone(host, count: int) -> tuple[list[float], list[float]]:
    """Time ServiceBinding.call and a raw rclpy client call on the same server, interleaved."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import SetBool

    from lerobot_tools_ros.catalog import ToolCatalog
    from lerobot_tools_ros.tools.bindings.loader import parse_bindings
    from lerobot_tools_ros.tools.bindings.service import ServiceBinding
    catalog = ToolCatalog.from_tools([stack.LIGHT_TOOL])
    tool = parse_bindings(BINDINGS, catalog)['set_light']
    if not isinstance(tool, ServiceBinding):
        raise RuntimeError(f'set_light: expected a service binding, got {type(tool).__name__}')
    tool.bind_ros(host)  # as tool_server binds a binding kind to robot interfaces: its node
    node = rclpy.create_node('bench_raw_client')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    client = node.create_client(SetBool, LIGHT_SERVICE)
    client.wait_for_service(10.0)
    binding: list[float] = []
    raw: list[float] = []
    try:
        for index in range(count + 50):
            start = time.perf_counter()
            if tool.call({'on': True}) != 'on':
                raise RuntimeError('binding: unexpected answer')
            middle = time.perf_counter()
            future = client.call_async(SetBool.Request(data=True))
            executor.spin_until_future_complete(future, timeout_sec=5.0)
            if not future.done():
                raise RuntimeError('raw client: no answer')
            end = time.perf_counter()
            if index >= 50:  # the first 50 warm up
                binding.append(middle - start)
                raw.append(end - middle)
    finally:
        tool.close()
        executor.shutdown()
        node.destroy_node()
    return binding, raw


BINDINGS = 'bindings:\n' + stack.light_binding(LIGHT_SERVICE)

LABELS = {'floor': 'floor: raw rclpy relay -> SetBool server',
          'floor2': 'floor2: raw relay -> hop server -> SetBool',
          'echo': 'echo: dispatcher, tool_server (2 processes)',
          'bound': 'bound: dispatcher, tool_server -> SetBool',
          'echo in-proc': 'echo in-proc: dispatcher + tool_server',
          'bound in-proc': 'bound in-proc: ... + tool_server -> SetBool'}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--role', choices=['light_server', 'hop_server', 'raw_relay',
                                           'raw_relay2', 'stack'], help=argparse.SUPPRESS)
    parser.add_argument('--files', nargs=2, help=argparse.SUPPRESS)
    parser.add_argument('--round-trips', type=int, default=500)
    parser.add_argument('--interface', choices=['auto', 'action', 'service'], default='auto',
                        help="the dispatchers' executor_interface (over DDS; default auto: the "
                        'RunTool action)')
    parser.add_argument('--profile', default='', metavar='FILE',
                        help='write a cProfile of the in-process stack to FILE')
    parser.add_argument('--inner', action='store_true',
                        help="also time the bound call on the in-process stack's worker thread")
    args = parser.parse_args()
    roles = {'light_server': role_light_server, 'hop_server': role_hop_server,
             'raw_relay': lambda: role_raw_relay(LIGHT_SERVICE, ''),
             'raw_relay2': lambda: role_raw_relay(HOP_SERVICE, '2'),
             'stack': lambda: role_stack(args.files[0], args.files[1], args.interface,
                                         args.profile, args.inner)}
    if args.role:
        roles[args.role]()
        return 0
    with bench_domain():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    workdir = pathlib.Path(tempfile.mkdtemp(prefix='binding_bench_'))
    dataset, bindings = stack.write_stack_files(workdir, [ECHO_SCHEMA, stack.LIGHT_TOOL],
                                                stack.light_binding(LIGHT_SERVICE))
    quiet = ('--log-level', 'warn')
    commands = stack.node_commands(dataset, bindings, server=quiet, dispatcher=(
        '-p', f'executor_interface:={args.interface}', *quiet))
    with Processes(__file__) as procs:
        for role in ('light_server', 'hop_server', 'raw_relay', 'raw_relay2'):
            procs.role(role)
        procs.role('stack', '--files', str(dataset), str(bindings), '--interface',
                   args.interface, *(('--profile', args.profile) if args.profile else ()),
                   *(('--inner',) if args.inner else ()))
        for name, command in commands.items():
            procs.start(name, command)
        bench = Bench()
        services = ('/lerobot_tools/echo', '/lerobot_tools/set_light', LIGHT_SERVICE,
                    HOP_SERVICE, f'{IN_PROCESS}/lerobot_tools/set_light')
        ready = bench.spin_until(lambda: bench.connected() and all(
            name in dict(bench.node.get_service_names_and_types()) for name in services), 30.0)
        if not ready:
            print('error: the bench processes did not come up', file=sys.stderr)
            return 1
        time.sleep(1.0)  # let every response path match (a first answer can be lost)
        times: dict[str, list[float]] = {path: [] for path in LABELS}
        for path in times:  # warm up: discovery, first-call allocations
            for _ in range(50):
                bench.once(path)
        for _ in range(10):  # interleave so every path sees the same machine load
            for path in times:
                times[path] += [bench.once(path) for _ in range(args.round_trips // 10)]
        f50, f99 = percentile(times['floor'], 0.5), percentile(times['floor'], 0.99)
        print(f'round trips ({len(times["floor"])} each, ms; executor_interface '
              f'{args.interface})          p50      p99     mean   p50/floor  p99/floor')
        for path, values in times.items():
            p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
            print(f'  {LABELS[path]:<44} {p50 * 1e3:7.3f}  {p99 * 1e3:7.3f}  '
                  f'{statistics.mean(values) * 1e3:7.3f}   {p50 / f50:6.2f}x    {p99 / f99:6.2f}x')
        p50s = {path: percentile(values, 0.5) for path, values in times.items()}
        print(f'bound in-proc p50 / floor p50 = {p50s["bound in-proc"] / f50:.2f}x (target <= '
              f'1.5x); two processes: bound / floor {p50s["bound"] / f50:.2f}x, bound / floor2 '
              f'{p50s["bound"] / p50s["floor2"]:.2f}x; bound - echo p50 = '
              f'{(p50s["bound"] - p50s["echo"]) * 1e3:+.3f} ms (in-proc '
              f'{(p50s["bound in-proc"] - p50s["echo in-proc"]) * 1e3:+.3f} ms)')
        for path, target in (('bound in-proc', 1.5), ('bound', None)):
            record('binding_bench', path, p50s[path] * 1e3, 'ms', floor=f50 * 1e3,
                   floor_label='raw rclpy relay calling the same SetBool server',
                   target_ratio=target, target=f'<= {target:g}x' if target else '',
                   label=f'policy text -> bound SetBool -> result ({path}), p50',
                   samples=[t * 1e3 for t in times[path]][:300] if target else None,
                   floor_samples=[t * 1e3 for t in times['floor']][:300] if target else None)
        binding, raw = call_alone(bench.node, args.round_trips)
        print(f'call alone ({len(binding)} each, ms): ServiceBinding.call p50 '
              f'{percentile(binding, 0.5) * 1e3:.3f} p99 {percentile(binding, 0.99) * 1e3:.3f}; '
              f'raw rclpy client p50 {percentile(raw, 0.5) * 1e3:.3f} p99 '
              f'{percentile(raw, 0.99) * 1e3:.3f}; ratio p50 '
              f'{percentile(binding, 0.5) / percentile(raw, 0.5):.2f}x')
        return 0


if __name__ == '__main__':
    sys.exit(main())
