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
The operator station of the fleet tests and bench: a ROS node run inside the operator's host.

Run as a program (``python fleet_operator.py``, inside the operator's network namespace), it
reads one JSON command per line on stdin and writes one JSON reply per line on stdout, tagged
with the command's ``id``; commands run concurrently (a call to one robot can wait for its
answer while another robot is called). It reaches the robots only through DDS, as an operator
station on another computer would: their catalogs (latched ``<robot>/dispatcher/catalog``),
policy text (``<robot>/policy/text``), their results (``<robot>/lerobot_tools/results``) and
``<robot>/dispatcher/call`` through ``lerobot_tools_ros.remote_call.RemoteCalls``.

``Operator`` is the side the test (or bench) holds: it starts the program and waits, bounded,
for each reply. Times are ``time.monotonic()`` values, one clock for every namespace of the
machine, so the caller compares them with its own.
"""

import json
import os
import pathlib
import select
import subprocess
import sys
import threading
import time
from typing import Any

OPERATOR_NODE = 'fleet_operator'
PROBE_TEXT = '<tool_call>{"name": "probe", "arguments": {}}</tool_call>'


def _result_fields(msg: Any) -> dict:
    return {'call_id': msg.call_id, 'name': msg.name, 'success': msg.success,
            'error_code': msg.error_code, 'outcome': msg.outcome, 'origin': msg.origin,
            'source': msg.source, 'content': msg.content[:2000],
            'received': time.monotonic()}


class _Agent:
    """The program's side: one node, spun by the main loop between stdin reads."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        from lerobot_tools_ros.remote_call import RemoteCalls

        rclpy.init(args=[])
        self.node = rclpy.create_node(OPERATOR_NODE)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.calls = RemoteCalls(self.node)
        self.catalogs: dict[str, dict] = {}
        self.results: dict[str, list[dict]] = {}
        self._subscriptions: dict[str, Any] = {}
        self._publishers: dict[str, Any] = {}
        self._waits: list[tuple[float, Any, Any]] = []  # (deadline, predicate, reply)

    def reply(self, command_id: Any, **fields: Any) -> None:
        sys.stdout.write(json.dumps({'id': command_id, **fields}) + '\n')
        sys.stdout.flush()

    def watch(self, robot: str) -> None:
        """Subscribe to a robot's catalog and results (once)."""
        from lerobot_tools_interfaces.msg import ToolResult
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String

        if robot in self._subscriptions:
            return
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self.results[robot] = []

        def on_catalog(msg: Any) -> None:
            tools = [entry.get('function', {}).get('name')
                     for entry in json.loads(msg.data).get('tools', [])]
            self.catalogs.setdefault(robot, {'first_seen': time.monotonic()})['tools'] = tools

        self._subscriptions[robot] = (
            self.node.create_subscription(String, f'/{robot}/dispatcher/catalog', on_catalog,
                                          latched),
            self.node.create_subscription(
                ToolResult, f'/{robot}/lerobot_tools/results',
                lambda msg: self.results[robot].append(_result_fields(msg)), reliable))
        self._publishers[robot] = self.node.create_publisher(
            String, f'/{robot}/policy/text', reliable)

    def handle(self, command: dict) -> None:
        op, command_id = command.get('op'), command.get('id')
        robot = command.get('robot', '')
        if robot:
            self.watch(robot)
        if op == 'watch':
            for name in command['robots']:
                self.watch(name)
            self.reply(command_id, ok=True)
        elif op == 'catalogs':
            for name in command['robots']:
                self.watch(name)
            wanted = command['robots']
            self._wait(command, lambda: all(r in self.catalogs for r in wanted),
                       lambda: {'catalogs': {r: self.catalogs[r] for r in wanted
                                             if r in self.catalogs}})
        elif op == 'call':
            self._call(command)
        elif op == 'text':
            self._publish(robot, command['text'])
            self.reply(command_id, published=time.monotonic())
        elif op == 'prove_text':
            self._prove_text(command)
        elif op == 'results':
            self.reply(command_id, results=self.results[robot])
        elif op == 'wait_results':
            count, origin = command['count'], command.get('origin')
            self._wait(command, lambda: len(self._real(robot, origin)) >= count,
                       lambda: {'results': self._real(robot, origin)})
        elif op == 'graph':
            self.reply(command_id, nodes=sorted(
                f'{ns.rstrip("/")}/{name}'
                for name, ns in self.node.get_node_names_and_namespaces()),
                services=sorted(n for n, _ in self.node.get_service_names_and_types()),
                pending=self.calls.pending_calls)
        elif op == 'wait_discovered':
            # The robot's ~/call server, as endpoint discovery sees it. (Node names are not
            # used: a host that comes back after its lease ran out is talked to again, but
            # this rmw does not list its nodes again.)
            dispatcher, present = f'/{robot}/dispatcher', command.get('present', True)
            self._wait(command, lambda: self.calls.discovered(dispatcher) == present,
                       lambda: {})
        else:
            self.reply(command_id, error=f'unknown op {op!r}')

    def _real(self, robot: str, origin: str | None = None) -> list[dict]:
        """Return a robot's results but the probes' (only those of ``origin``, if given)."""
        return [r for r in self.results[robot]
                if r['name'] != 'probe' and origin in (None, r['origin'])]

    def _publish(self, robot: str, text: str) -> None:
        from std_msgs.msg import String
        self._publishers[robot].publish(String(data=text))

    def _prove_text(self, command: dict) -> None:
        """Publish a probe call until its result comes back: text and results both match."""
        robot = command['robot']
        state = {'next': 0.0}

        def proven() -> bool:
            if any(r['name'] == 'probe' for r in self.results[robot]):
                return True
            if time.monotonic() >= state['next']:
                self._publish(robot, PROBE_TEXT)
                state['next'] = time.monotonic() + 0.5
            return False
        self._wait(command, proven, lambda: {})

    def _call(self, command: dict) -> None:
        from lerobot_tools_interfaces.srv import CallTool
        request = CallTool.Request(call_id=command['call_id'], name=command['name'],
                                   arguments=json.dumps(command.get('arguments', {})),
                                   source='fleet_operator')
        sent = time.monotonic()

        def answered(response: Any) -> None:
            self.reply(command['id'], sent=sent, answered=time.monotonic(), response={
                'success': response.success, 'call_id': response.call_id,
                'content': response.content[:2000], 'error_code': response.error_code,
                'error_message': response.error_message, 'outcome': response.outcome})
        self.calls.call(f'/{command["robot"]}/dispatcher', request, command['timeout'],
                        answered)

    def _wait(self, command: dict, predicate: Any, reply: Any) -> None:
        deadline = time.monotonic() + command.get('timeout', 10.0)
        self._waits.append((deadline, predicate, lambda ok: self.reply(
            command['id'], ok=ok, at=time.monotonic(), **reply())))

    def poll_waits(self) -> None:
        waits, self._waits = self._waits, []
        for deadline, predicate, reply in waits:
            if predicate():
                reply(True)
            elif time.monotonic() >= deadline:
                reply(False)
            else:
                self._waits.append((deadline, predicate, reply))

    def run(self) -> None:
        """Read commands and spin until stdin closes or a ``quit`` command."""
        buffered = b''
        stdin = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, 'raw') else sys.stdin.buffer
        self.reply(None, ready=True)
        while True:
            readable, _, _ = select.select([stdin], [], [], 0)
            if readable:
                chunk = os.read(stdin.fileno(), 65536)
                if not chunk:
                    return
                buffered += chunk
                while b'\n' in buffered:
                    line, buffered = buffered.split(b'\n', 1)
                    command = json.loads(line)
                    if command.get('op') == 'quit':
                        return
                    self.handle(command)
            self.executor.spin_once(timeout_sec=0.01)
            self.poll_waits()

    def close(self) -> None:
        self.calls.close()
        self.executor.shutdown()
        self.node.destroy_node()
        import rclpy
        rclpy.try_shutdown()


class Operator:
    """The test's handle on the operator program (see the module docstring)."""

    def __init__(self, command_prefix: list[str], env: dict, log_path: pathlib.Path) -> None:
        self._log = open(log_path, 'wb')
        self.log_path = log_path
        self.proc = subprocess.Popen(
            [*command_prefix, sys.executable, str(pathlib.Path(__file__).resolve())],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            start_new_session=True)
        self._replies: dict[Any, dict] = {}
        self.duplicates: list[dict] = []  # a second reply to one command: never expected
        self._seen: set = set()
        self._arrived = threading.Condition()
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        ready = self.wait(None, 60.0)
        assert ready.get('ready'), self.output()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            reply = json.loads(line)
            with self._arrived:
                if reply['id'] in self._seen:
                    self.duplicates.append(reply)
                    continue
                self._seen.add(reply['id'])
                self._replies[reply['id']] = reply
                self._arrived.notify_all()

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors='replace')[-3000:]

    def send(self, op: str, **fields: Any) -> int:
        """Send a command; return its id (``wait(id)`` for the reply)."""
        self._next_id += 1
        command = {'id': self._next_id, 'op': op, **fields}
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + '\n').encode())
        self.proc.stdin.flush()
        return self._next_id

    def wait(self, command_id: Any, timeout: float) -> dict:
        """Return the reply to ``command_id``; fail after ``timeout`` seconds without one."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while command_id not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f'the operator gave no reply to {command_id} in '
                                         f'{timeout:g} s\n{self.output()}')
                self._arrived.wait(min(left, 0.5))
            return self._replies.pop(command_id)

    def ask(self, op: str, timeout: float = 30.0, **fields: Any) -> dict:
        """Send a command and wait for its reply (commands that wait get ``timeout`` too)."""
        return self.wait(self.send(op, timeout=timeout, **fields), timeout + 10.0)

    def replied(self) -> list[Any]:
        """Return the ids of the replies not collected yet."""
        with self._arrived:
            return list(self._replies)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send('quit')
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


def main() -> int:
    agent = _Agent()
    try:
        agent.run()
    finally:
        agent.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
