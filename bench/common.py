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
What the latency benches share: the raw rclpy floors, their processes, and the driver.

- ``relay_main`` / ``role_noop_server``: the floor every latency bench compares with, a raw
  rclpy relay (a ``std_msgs/String`` in, the service called asynchronously on a
  SingleThreadedExecutor with a reentrant callback group, a ``std_msgs/String`` out with the
  same key: one hop), and a no-op ``CallTool`` server for it to call;
- ``Processes``: the bench's roles (this script with ``--role``) and the project's nodes as
  real processes, stopped like Ctrl-C (then killed) at the end;
- ``bench_domain``: a reserved ROS domain (nobody else's discovery traffic), loopback only;
- ``Driver``: the measuring node in the bench's own process.

Imports of rclpy and the message packages are inside the functions: a role process imports
only what it uses.
"""

import contextlib
import importlib
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Iterator

RELIABLE_DEPTH = 10000
TEST_DIR = pathlib.Path(__file__).resolve().parents[1] / 'lerobot_tools_ros' / 'test'
NOOP_SERVICE = '/bench/noop'
RAW_TEXT = '/bench/raw_text'
RAW_RESULTS = '/bench/raw_results'


def test_helper(name: str) -> Any:
    """Import a helper module of the package's tests (a setup a test and a bench share)."""
    if str(TEST_DIR) not in sys.path:
        sys.path.append(str(TEST_DIR))
    return importlib.import_module(name)


def qos(depth: int = RELIABLE_DEPTH):
    """Reliable, keep-last ``depth``: nothing a bench sends is dropped on the way."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def spin(*nodes: Any) -> None:
    """Spin ``nodes`` on one SingleThreadedExecutor until Ctrl-C or shutdown (a role's end)."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    executor = SingleThreadedExecutor()
    for node in nodes:
        executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()


def answer_noop(request: Any, response: Any) -> Any:
    """Answer a CallTool request at once: success, its call_id, its arguments as content."""
    response.success = True
    response.call_id = request.call_id
    response.content = request.arguments
    return response


def role_noop_server(service: str = NOOP_SERVICE) -> None:
    """Answer every CallTool request at once (the floor's executor)."""
    import rclpy
    from lerobot_tools_interfaces.srv import CallTool
    rclpy.init()
    node = rclpy.create_node('bench_noop_server')
    node.create_service(CallTool, service, answer_noop)
    spin(node)


def relay_main(service_type: Any, service: str, request: Callable[[str], Any], *,
               name: str = 'bench_raw_relay', text_topic: str = RAW_TEXT,
               results_topic: str = RAW_RESULTS) -> None:
    """
    Run the raw relay floor until Ctrl-C.

    Each text on ``text_topic`` is a key: the relay awaits ``request(key)`` on ``service`` and
    publishes the key on ``results_topic``.
    """
    import rclpy
    from rclpy.callback_groups import ReentrantCallbackGroup
    from std_msgs.msg import String
    rclpy.init()
    node = rclpy.create_node(name)
    group = ReentrantCallbackGroup()
    client = node.create_client(service_type, service, callback_group=group)
    pub = node.create_publisher(String, results_topic, qos())

    async def on_text(msg):
        await client.call_async(request(msg.data))
        pub.publish(String(data=msg.data))
    node.create_subscription(String, text_topic, on_text, qos(), callback_group=group)
    spin(node)


def role_noop_relay() -> None:
    """Run the dispatch floor: the raw relay calling the no-op CallTool server."""
    from lerobot_tools_interfaces.srv import CallTool
    relay_main(CallTool, NOOP_SERVICE,
               lambda key: CallTool.Request(call_id=key, name='noop', arguments='{}'))


@contextlib.contextmanager
def bench_domain() -> Iterator[int]:
    """Reserve a ROS domain for the bench and its processes; discovery on loopback only."""
    from domain_coordinator import domain_id
    with domain_id() as domain:
        os.environ['ROS_DOMAIN_ID'] = str(domain)
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        yield domain


def catalog_dir(prefix: str, tools: list[dict]) -> pathlib.Path:
    """Return a fresh directory holding ``meta/info.json`` with ``tools`` (a dataset root)."""
    workdir = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    (workdir / 'meta').mkdir()
    (workdir / 'meta' / 'info.json').write_text(json.dumps({'tools': tools}))
    return workdir


def stop_all(procs: list, timeout: float = 10.0) -> None:
    """Stop processes like Ctrl-C would, all at once; kill those still running after it."""
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()


class Processes:
    """The processes of one bench run: its roles and the project's nodes; a context manager."""

    def __init__(self, script: str) -> None:
        self.script = str(pathlib.Path(script).resolve())
        self.env = dict(os.environ, PYTHONUNBUFFERED='1')
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, argv: list[str]) -> subprocess.Popen:
        self.procs[name] = subprocess.Popen(argv, env=self.env)
        return self.procs[name]

    def role(self, role: str, *args: str) -> subprocess.Popen:
        """Start this bench script as ``--role role``."""
        return self.start(role, [sys.executable, self.script, '--role', role, *args])

    def node(self, name: str, module: str, *ros_args: str) -> subprocess.Popen:
        """Start a node module (``python -m module --ros-args ...``)."""
        return self.start(name, [sys.executable, '-m', module, '--ros-args', *ros_args])

    def __getitem__(self, name: str) -> subprocess.Popen:
        return self.procs[name]

    def __enter__(self) -> 'Processes':
        return self

    def __exit__(self, *exc: Any) -> None:
        stop_all(list(self.procs.values()))


def start_echo_stack(procs: 'Processes', prefix: str, *dispatcher: str) -> None:
    """Start a tool_server hosting echo and a dispatcher (two processes) on a fresh catalog."""
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    workdir = catalog_dir(prefix, [ECHO_SCHEMA, *DEFAULT_TOOLS])
    procs.node('tool_server', 'lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
               '-p', f'dataset:={workdir}', '--log-level', 'warn')
    procs.node('dispatcher', 'lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={workdir}',
               '-p', 'max_pending:=100000', *dispatcher, '--log-level', 'warn')


class Driver:
    """
    The measuring node in the bench's process: a SingleThreadedExecutor it spins itself.

    A bench's ``send(path, key)`` sends one request carrying ``key``; its result callbacks put
    the arrival time in ``arrived[key]``.
    """

    def __init__(self, name: str = 'bench_driver') -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from std_msgs.msg import String
        rclpy.init()
        self.node = rclpy.create_node(name)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.String = String
        self.arrived: dict[str, float] = {}

    def send(self, path: Any, key: str) -> None:
        raise NotImplementedError

    def round_trips(self, path: Any, count: int, prefix: str = '') -> list[float]:
        """Send ``count`` requests one after another on ``path``; return their round trips."""
        latencies = []
        prefix = prefix or str(path)
        for index in range(count):
            key = f'{prefix}{index}-{random.random()}'
            start = time.perf_counter()
            self.send(path, key)
            if not self.spin_until(lambda: key in self.arrived, 10.0):
                raise RuntimeError(f'no result for {prefix} round trip {index} ({key})')
            latencies.append(self.arrived.pop(key) - start)
        return latencies

    def spin_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()
