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
Shared by the binding tests and bench/binding_bench.py: catalog, bindings file, the stack.

The stack is a dispatcher and a tool_server with a bindings file, either as two processes
(`node_commands`) or as two nodes in the caller's process (`InProcessStack`, like
`lerobot-tools-ros bringup` runs them), on the caller's rclpy context.
"""

import contextlib
import json
import pathlib
import sys
import threading
from typing import Any, Callable, Iterator


@contextlib.contextmanager
def in_own_domain(make: Callable[[int], Any]) -> Iterator[Any]:
    """Yield ``make(domain)`` in a domain reserved for it; ``close()`` it at the end."""
    from conftest import reserve_test_domain
    with reserve_test_domain() as domain:
        running = make(domain)
        try:
            yield running
        finally:
            running.close()


def tool_schema(name: str, properties: dict, required: list[str] | None = None) -> dict:
    """Return a catalog entry (OpenAI function schema) for a bound tool."""
    return {'type': 'function', 'function': {
        'name': name, 'description': f'{name} (bound)',
        'parameters': {'type': 'object', 'properties': properties,
                       'required': required or []}}}


LIGHT_TOOL = tool_schema('set_light', {'on': {'type': 'boolean'}}, ['on'])


def light_binding(service: str) -> str:
    """Return the bindings-file entry of ``set_light``: a std_srvs/SetBool service."""
    return f"""
  set_light:
    kind: service
    service: {service}
    type: std_srvs/srv/SetBool
    request: {{data: $on}}
    result: {{success: success, message: message}}
    timeout_s: 5.0
"""


def gripper_binding(tool: str, action: str, timeout_s: float) -> str:
    """Return a bindings-file entry binding ``tool`` ({steps}) to a Fibonacci action."""
    return f"""
  {tool}:
    kind: action
    action: {action}
    type: test_msgs/action/Fibonacci
    goal: {{order: $steps}}
    timeout_s: {timeout_s}
"""


def write_stack_files(root: pathlib.Path, tools: list[dict], bindings: str
                      ) -> tuple[pathlib.Path, pathlib.Path]:
    """Write ``root/dataset/meta/info.json`` and ``root/bindings.yaml``; return both paths."""
    dataset = root / 'dataset'
    (dataset / 'meta').mkdir(parents=True)
    (dataset / 'meta' / 'info.json').write_text(json.dumps(
        {'codebase_version': 'v3.0', 'fps': 30, 'features': {}, 'tools': tools}))
    path = root / 'bindings.yaml'
    path.write_text('bindings:\n' + bindings)
    return dataset, path


def tool_server_args(dataset: pathlib.Path, bindings: pathlib.Path, *extra: str) -> list[str]:
    """ROS arguments of a tool_server hosting echo plus every bound tool."""
    return ['--ros-args', '-p', 'tools:=[echo]', '-p', f'dataset:={dataset}',
            '-p', f'bindings_file:={bindings}', *extra]


def dispatcher_args(dataset: pathlib.Path, *extra: str) -> list[str]:
    """ROS arguments of a dispatcher on the same catalog."""
    return ['--ros-args', '-p', f'dataset:={dataset}', *extra]


def node_commands(dataset: pathlib.Path, bindings: pathlib.Path, *, server: tuple = (),
                  dispatcher: tuple = ()) -> dict[str, list[str]]:
    """Command lines of the tool_server and dispatcher processes (this Python)."""
    python = [sys.executable, '-m']
    return {
        'tool_server': [*python, 'lerobot_tools_ros.tool_server.node',
                        *tool_server_args(dataset, bindings, *server)],
        'dispatcher': [*python, 'lerobot_tools_ros.dispatcher.node',
                       *dispatcher_args(dataset, *dispatcher)],
    }


class Policy:
    """
    The policy's node: publishes text, collects results, calls and progress; cancels calls.

    Made once the dispatcher is up: it waits until results reach it (``logs()`` explains a
    failure).
    """

    def __init__(self, context: Any, logs: Callable[[], str] = lambda: '') -> None:
        # Imported here: bench/binding_bench.py imports this module without the tests' conftest.
        from conftest import spin_until
        from lerobot_tools_interfaces.msg import ToolCall, ToolProgress, ToolResult
        from lerobot_tools_interfaces.srv import CancelCalls
        from lerobot_tools_ros import names
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        self.String = String
        self.spin_until = lambda predicate, timeout: spin_until(self.node, predicate, timeout)
        self.logs = logs
        self.node = rclpy.create_node('policy', context=context)
        self.node.executor_for_test = SingleThreadedExecutor(context=context)
        self.node.executor_for_test.add_node(self.node)
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self.results: list[ToolResult] = []
        self.calls: list[ToolCall] = []
        self.progress: list[ToolProgress] = []
        self.node.create_subscription(ToolResult, '/' + names.RESULTS_TOPIC,
                                      self.results.append, reliable)
        self.node.create_subscription(ToolCall, '/' + names.CALLS_TOPIC, self.calls.append,
                                      reliable)
        self.node.create_subscription(ToolProgress, '/' + names.PROGRESS_TOPIC,
                                      self.progress.append, reliable)
        self.text = self.node.create_publisher(String, '/policy/text', reliable)
        self.cancel = self.node.create_client(CancelCalls, '/dispatcher/cancel')
        assert self.spin_until(lambda: self.text.get_subscription_count() > 0
                               and self.node.count_publishers('/' + names.RESULTS_TOPIC) > 0
                               and self.node.count_publishers('/' + names.PROGRESS_TOPIC) > 0
                               and self.cancel.service_is_ready(), 30.0), logs()
        # A result published before the dispatcher's writer matched our reader would be lost:
        # probe with an unknown tool (answered by the dispatcher itself) until one arrives.
        for _ in range(60):
            self.send('probe', {})
            if self.spin_until(lambda: bool(self.results), 0.5):
                break
        assert self.results, logs()
        self.spin_until(lambda: False, 0.2)
        self.results.clear()
        self.calls.clear()

    def send(self, name: str, arguments: dict) -> None:
        call = json.dumps({'name': name, 'arguments': arguments})
        self.text.publish(self.String(data=f'Doing it.\n<tool_call>{call}</tool_call>'))

    def call(self, name: str, arguments: dict, timeout: float = 15.0) -> Any:
        """Publish one call as policy text; return its one result (checked to be the only)."""
        before = len(self.results)
        self.send(name, arguments)
        assert self.spin_until(lambda: len(self.results) > before, timeout), self.logs()
        self.spin_until(lambda: False, 0.3)  # a second result would show here
        assert len(self.results) == before + 1, self.results[before:]
        return self.results[-1]

    def close(self) -> None:
        self.node.executor_for_test.shutdown()
        self.node.destroy_node()


class InProcessStack:
    """
    Dispatcher and tool_server as nodes of this process, on one executor thread (as bringup).

    ``server=False`` leaves the tool_server out (start it with ``start_server``), so tests can
    also run a tool_server elsewhere.
    """

    def __init__(self, context: Any, dataset: pathlib.Path, bindings: pathlib.Path, *,
                 server: tuple = (), dispatcher: tuple = (), with_server: bool = True) -> None:
        from lerobot_tools_ros.dispatcher.node import Dispatcher
        from rclpy.executors import SingleThreadedExecutor
        self.context = context
        self._dataset, self._bindings, self._server_args = dataset, bindings, server
        self.executor = SingleThreadedExecutor(context=context)
        self.dispatcher = Dispatcher(context=context,
                                     cli_args=dispatcher_args(dataset, *dispatcher))
        self.executor.add_node(self.dispatcher)
        self.server = None
        if with_server:
            self.start_server()
        self._thread = threading.Thread(target=self._spin, daemon=True, name='stack')
        self._thread.start()

    def start_server(self) -> None:
        from lerobot_tools_ros.tool_server.node import ToolServer
        self.server = ToolServer(context=self.context, cli_args=tool_server_args(
            self._dataset, self._bindings, *self._server_args))
        self.executor.add_node(self.server)

    def remove_server(self) -> None:
        """Destroy the tool_server (its calls are cancelled and answered first)."""
        server, self.server = self.server, None
        self.executor.remove_node(server)
        server.destroy_node()

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass

    def close(self) -> None:
        if self.server is not None:
            self.remove_server()
        self.executor.remove_node(self.dispatcher)
        self.dispatcher.destroy_node()
        self.executor.shutdown(timeout_sec=2.0)
        self._thread.join(5.0)
