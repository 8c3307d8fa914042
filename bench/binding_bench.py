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
- floor: a raw rclpy relay (subscribe text, call the SetBool service asynchronously, publish a
  ToolResult; SingleThreadedExecutor, callbacks), the floor dispatch_bench.py uses, pointed at
  the same SetBool server;
- echo: the same runtime calling the built-in echo tool (one service hop after the dispatcher);
- bound: the runtime calling ``set_light``, bound in a bindings file to the SetBool server (two
  service hops: dispatcher -> tool_server -> robot service);
- floor2: the raw rclpy relay calling a raw rclpy hop server (an async SetBool service that
  calls the SetBool server and answers): the same two hops, written the fast way;
- call: in this process, ``ServiceBinding.call`` alone against a raw rclpy client call
  (``call_async`` + ``spin_until_future_complete``) to the same server: the binding's own cost.
Every process runs on this machine over DDS on loopback, in a domain of its own.

    scripts/with_env.sh python bench/binding_bench.py [--round-trips 500]
"""

import argparse
import json
import os
import pathlib
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

LIGHT_SERVICE = '/bench/light'
HOP_SERVICE = '/bench/hop'
DEPTH = 1000


def _qos():
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=DEPTH, reliability=ReliabilityPolicy.RELIABLE)


def _spin(node) -> None:
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()


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
    _spin(node)


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
    _spin(node)


def role_raw_relay(service: str = LIGHT_SERVICE, suffix: str = '') -> None:
    """Subscribe text, call SetBool asynchronously, publish the answer (the floor)."""
    import rclpy
    from lerobot_tools_interfaces.msg import ToolResult
    from std_msgs.msg import String
    from std_srvs.srv import SetBool
    rclpy.init()
    node = rclpy.create_node(f'bench_raw_relay{suffix}')
    client = node.create_client(SetBool, service)
    pub = node.create_publisher(ToolResult, f'/bench/raw_results{suffix}', _qos())

    def on_text(msg):
        future = client.call_async(SetBool.Request(data=True))

        def done(fut, call_id=msg.data):
            response = fut.result()
            pub.publish(ToolResult(call_id=call_id, success=response.success,
                                   content=response.message))
        future.add_done_callback(done)
    node.create_subscription(String, f'/bench/raw_text{suffix}', on_text, _qos())
    _spin(node)


class Bench:
    """The measuring side: publishes one generation at a time, times its result."""

    def __init__(self) -> None:
        import rclpy
        from lerobot_tools_interfaces.msg import ToolResult
        from rclpy.executors import SingleThreadedExecutor
        from std_msgs.msg import String
        rclpy.init()
        self.node = rclpy.create_node('bench_driver')
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.String = String
        self.results: list = []
        self.raw_pub = self.node.create_publisher(String, '/bench/raw_text', _qos())
        self.raw2_pub = self.node.create_publisher(String, '/bench/raw_text2', _qos())
        self.text_pub = self.node.create_publisher(String, '/policy/text', _qos())
        for topic in ('/bench/raw_results', '/bench/raw_results2', '/lerobot_tools/results'):
            self.node.create_subscription(
                ToolResult, topic, lambda msg: self.results.append((time.perf_counter(), msg)),
                _qos())

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def once(self, path: str) -> float:
        """One round trip on ``path`` (floor, floor2, echo or bound); return seconds."""
        before = len(self.results)
        if path in ('floor', 'floor2'):
            message = self.String(data=f'r{random.random()}')
            start = time.perf_counter()
            (self.raw_pub if path == 'floor' else self.raw2_pub).publish(message)
        else:
            call = ({'name': 'echo', 'arguments': {'text': 'hi'}} if path == 'echo'
                    else {'name': 'set_light', 'arguments': {'on': True}})
            message = self.String(data=f'Plan.\n<tool_call>{json.dumps(call)}</tool_call>')
            start = time.perf_counter()
            self.text_pub.publish(message)
        if not self.spin_until(lambda: len(self.results) > before, 10.0):
            raise RuntimeError(f'no result on the {path} path')
        arrived, result = self.results[before]
        if not result.success:
            raise RuntimeError(f'{path}: {result.error_code}: {result.error_message}')
        if path == 'bound' and result.content != 'on':
            raise RuntimeError(f'bound: unexpected content {result.content!r}')
        return arrived - start


def call_alone(host, count: int) -> tuple[list[float], list[float]]:
    """Time ServiceBinding.call and a raw rclpy client call on the same server, interleaved."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import SetBool

    from lerobot_tools_ros.catalog import ToolCatalog
    from lerobot_tools_ros.tools.bindings.loader import parse_bindings
    catalog = ToolCatalog.from_tools([LIGHT_TOOL])
    tool = parse_bindings(BINDINGS, catalog)['set_light']
    tool.bind_ros(host)
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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


LIGHT_TOOL = {'type': 'function', 'function': {
    'name': 'set_light', 'description': 'Switch the light.',
    'parameters': {'type': 'object', 'properties': {'on': {'type': 'boolean'}},
                   'required': ['on']}}}

BINDINGS = f"""
bindings:
  set_light:
    kind: service
    service: {LIGHT_SERVICE}
    type: std_srvs/srv/SetBool
    request: {{data: $on}}
    result: {{success: success, message: message}}
    timeout_s: 5.0
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--role', choices=['light_server', 'hop_server', 'raw_relay',
                                           'raw_relay2'], help=argparse.SUPPRESS)
    parser.add_argument('--round-trips', type=int, default=500)
    args = parser.parse_args()
    if args.role == 'light_server':
        role_light_server()
        return 0
    if args.role == 'hop_server':
        role_hop_server()
        return 0
    if args.role == 'raw_relay':
        role_raw_relay()
        return 0
    if args.role == 'raw_relay2':
        role_raw_relay(HOP_SERVICE, '2')
        return 0

    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randrange(101, 200) % 101 + 1))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    workdir = pathlib.Path(tempfile.mkdtemp(prefix='binding_bench_'))
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    (workdir / 'meta').mkdir()
    (workdir / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA, LIGHT_TOOL]}))
    (workdir / 'bindings.yaml').write_text(BINDINGS)
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    me = [sys.executable, str(pathlib.Path(__file__).resolve())]
    node = [sys.executable, '-m']
    procs = {
        'light_server': subprocess.Popen(me + ['--role', 'light_server'], env=env),
        'hop_server': subprocess.Popen(me + ['--role', 'hop_server'], env=env),
        'raw_relay': subprocess.Popen(me + ['--role', 'raw_relay'], env=env),
        'raw_relay2': subprocess.Popen(me + ['--role', 'raw_relay2'], env=env),
        'tool_server': subprocess.Popen(node + [
            'lerobot_tools_ros.nodes.tool_server', '--ros-args', '-p', 'tools:=[echo]',
            '-p', f'dataset:={workdir}', '-p', f'bindings_file:={workdir / "bindings.yaml"}',
            '--log-level', 'warn'], env=env),
        'dispatcher': subprocess.Popen(node + [
            'lerobot_tools_ros.nodes.dispatcher', '--ros-args', '-p', f'dataset:={workdir}',
            '--log-level', 'warn'], env=env),
    }
    try:
        bench = Bench()
        services = ('/lerobot_tools/echo', '/lerobot_tools/set_light', LIGHT_SERVICE,
                    HOP_SERVICE)
        ready = bench.spin_until(lambda: (
            bench.raw_pub.get_subscription_count() > 0
            and bench.raw2_pub.get_subscription_count() > 0
            and bench.text_pub.get_subscription_count() > 0
            and bench.node.count_publishers('/lerobot_tools/results') > 0
            and all(bench.node.count_services(name) if hasattr(bench.node, 'count_services')
                    else name in dict(bench.node.get_service_names_and_types())
                    for name in services)), 30.0)
        if not ready:
            print('error: the bench processes did not come up', file=sys.stderr)
            return 1
        time.sleep(1.0)  # let every response path match (a first answer can be lost)
        times: dict[str, list[float]] = {'floor': [], 'floor2': [], 'echo': [], 'bound': []}
        for path in times:  # warm up: discovery, first-call allocations
            for _ in range(50):
                bench.once(path)
        for _ in range(10):  # interleave so every path sees the same machine load
            for path in times:
                times[path] += [bench.once(path) for _ in range(args.round_trips // 10)]
        f50, f99 = percentile(times['floor'], 0.5), percentile(times['floor'], 0.99)
        print(f'round trips ({len(times["floor"])} each, ms)                     p50      p99'
              '     mean   p50/floor  p99/floor')
        labels = {'floor': 'floor: raw rclpy relay -> SetBool server',
                  'floor2': 'floor2: raw relay -> hop server -> SetBool',
                  'echo': 'echo: dispatcher + tool_server (built-in)',
                  'bound': 'bound: dispatcher + tool_server -> SetBool'}
        for path, values in times.items():
            p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
            print(f'  {labels[path]:<44} {p50 * 1e3:7.3f}  {p99 * 1e3:7.3f}  '
                  f'{statistics.mean(values) * 1e3:7.3f}   {p50 / f50:6.2f}x    {p99 / f99:6.2f}x')
        b50 = percentile(times['bound'], 0.5)
        e50 = percentile(times['echo'], 0.5)
        g50 = percentile(times['floor2'], 0.5)
        print(f'bound p50 / floor p50 = {b50 / f50:.2f}x (target <= 1.5x); bound p50 / floor2 '
              f'p50 = {b50 / g50:.2f}x; bound - echo p50 = {(b50 - e50) * 1e3:+.3f} ms')
        binding, raw = call_alone(bench.node, args.round_trips)
        print(f'call alone ({len(binding)} each, ms): ServiceBinding.call p50 '
              f'{percentile(binding, 0.5) * 1e3:.3f} p99 {percentile(binding, 0.99) * 1e3:.3f}; '
              f'raw rclpy client p50 {percentile(raw, 0.5) * 1e3:.3f} p99 '
              f'{percentile(raw, 0.99) * 1e3:.3f}; ratio p50 '
              f'{percentile(binding, 0.5) / percentile(raw, 0.5):.2f}x')
        return 0
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGINT)
        for proc in procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == '__main__':
    sys.exit(main())
