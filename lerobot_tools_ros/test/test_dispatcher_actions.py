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
The dispatcher driving tool_server's RunTool actions: progress, cancel, pause, timeouts, deaths.

dispatcher and tool_server run as real processes; the test node plays the policy and the
operator, and watches the executor's own goal status topic to see what reached the executor.
"""

from collections import Counter
import json
import pathlib
import time

from action_msgs.msg import GoalStatus, GoalStatusArray
from conftest import prove_service, spin_until
from diagnostic_msgs.msg import DiagnosticArray
from lerobot_tools_interfaces.msg import ErrorCodes, ToolCall, ToolProgress, ToolResult
from lerobot_tools_interfaces.srv import CancelCalls
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import SetBool

RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
# As action servers publish their status: a late-matched reader still gets the latest array.
STATUS_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
ECHO_STATUS = '/lerobot_tools/echo/_action/status'


@pytest.fixture
def dataset(tmp_path) -> pathlib.Path:
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA,
                                                                   *DEFAULT_TOOLS]}))
    return root


def echo(**arguments) -> str:
    return f'<tool_call>{json.dumps({"name": "echo", "arguments": arguments})}</tool_call>'


class Graph:
    """The policy and operator side: publishes text, calls services, records what comes back."""

    def __init__(self, node) -> None:
        self.node = node
        self.results: list[ToolResult] = []
        self.calls: list[ToolCall] = []
        self.progress: list[ToolProgress] = []
        self.goal_status: dict[bytes, int] = {}  # as the executor reports its goals
        node.create_subscription(ToolResult, '/lerobot_tools/results', self.results.append,
                                 RELIABLE)
        node.create_subscription(ToolCall, '/lerobot_tools/calls', self.calls.append, RELIABLE)
        node.create_subscription(ToolProgress, '/lerobot_tools/progress', self.progress.append,
                                 RELIABLE)
        node.create_subscription(GoalStatusArray, ECHO_STATUS, self._on_status, STATUS_QOS)
        self.executor_ready = False  # the dispatcher's diagnostics say echo's executor is proven
        self.ready_stamp = 0.0  # when (its clock, s) the diagnostics last said so
        self.echo_reports: list[tuple[int, dict]] = []  # (stamp s, values): for failure reports
        node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
        self.text = node.create_publisher(String, '/policy/text', RELIABLE)
        self.set_enabled = node.create_client(SetBool, '/dispatcher/set_enabled')
        self.cancel = node.create_client(CancelCalls, '/dispatcher/cancel')

    def _on_status(self, message: GoalStatusArray) -> None:
        for status in message.status_list:
            self.goal_status[bytes(status.goal_info.goal_id.uuid)] = status.status

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.name.endswith(': echo'):
                values = {kv.key: kv.value for kv in status.values}
                self.echo_reports.append((message.header.stamp.sec, values))
                self.executor_ready = values.get('executor_available') == 'True'
                if self.executor_ready:
                    stamp = message.header.stamp
                    self.ready_stamp = stamp.sec + stamp.nanosec * 1e-9

    def connect(self, proc) -> None:
        """Wait until the dispatcher's topics match, and prove its services answer us."""
        assert spin_until(self.node, lambda: self.text.get_subscription_count() > 0
                          and self.node.count_publishers('/lerobot_tools/results') > 0
                          and self.node.count_publishers('/lerobot_tools/progress') > 0,
                          30.0), proc.output()
        # Idempotent probes (enable while enabled, cancel nothing), sent until one is answered:
        # the same readiness exchange the product does for executors.
        for client, probe in ((self.set_enabled, SetBool.Request(data=True)),
                              (self.cancel, CancelCalls.Request())):
            prove_service(self.node, client, probe, 20.0, proc.output)
        # Calls sent before the executor is up would wait for it inside their timeout.
        assert spin_until(self.node, lambda: self.executor_ready, 30.0), proc.output()

    def publish(self, text: str) -> None:
        self.text.publish(String(data=text))

    def request(self, client, request, timeout: float = 10.0):
        future = client.call_async(request)
        assert spin_until(self.node, future.done, timeout)
        return future.result()

    def wait_results(self, count: int, timeout: float = 20.0) -> list[ToolResult]:
        assert spin_until(self.node, lambda: len(self.results) >= count, timeout), self.results
        return self.results

    def one_result_each(self) -> None:
        """Every call announced got exactly one result (checked after a quiet moment)."""
        spin_until(self.node, lambda: False, 1.0)
        counts = Counter(result.call_id for result in self.results)
        assert all(count == 1 for count in counts.values()), counts
        assert {call.call_id for call in self.calls} <= set(counts)

    def stopped_goals(self) -> int:
        """
        Count goals the executor ended early on their caller's stop.

        CANCELED when the goal's cancel request reached tool_server before the stop topic did;
        ABORTED when the stop came first and ended the call (ROS lets a server cancel only a
        goal whose cancel was requested). Either way the goal did not run to its end.
        """
        return sum(status in (GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED)
                   for status in self.goal_status.values())


@pytest.fixture
def stack(start_node, ros_node, dataset):
    """Start tool_server (echo) and a dispatcher; return (graph, start_tool_server, procs)."""
    procs = {}

    def start_tool_server():
        procs['tool_server'] = start_node('lerobot_tools_ros.tool_server.node',
                                          '-p', 'tools:=[echo]', '-p', f'dataset:={dataset}')
        return procs['tool_server']

    def start(*dispatcher_params: str) -> Graph:
        start_tool_server()
        args = ['-p', f'dataset:={dataset}']
        for param in dispatcher_params:
            args += ['-p', param]
        procs['dispatcher'] = start_node('lerobot_tools_ros.dispatcher.node', *args)
        graph = Graph(ros_node)
        graph.connect(procs['dispatcher'])
        # The dispatcher proves the executor's answers reach it before the first call.
        return graph

    return start, start_tool_server, procs


def test_long_call_progress_is_published_and_result_is_one(stack):
    start, _, procs = stack
    graph = start()
    graph.publish(echo(text='slow', delay_s=0.8))
    [result] = graph.wait_results(1)
    assert result.success, result.error_message + procs['dispatcher'].output()
    assert json.loads(result.content) == {'text': 'slow', 'delay_s': 0.8}
    mine = [p for p in graph.progress if p.call_id == result.call_id]
    assert len(mine) >= 3 and all(p.name == 'echo' and p.stage == 'running' for p in mine)
    assert [p.progress for p in mine] == sorted(p.progress for p in mine)
    graph.one_result_each()


def test_dispatcher_timeout_cancels_the_goal_on_the_executor(stack):
    start, _, procs = stack
    graph = start('tool.echo.timeout_s:=1.0')
    graph.publish(echo(text='too slow', delay_s=20))
    [result] = graph.wait_results(1, timeout=10.0)
    assert result.error_code == ErrorCodes.TIMEOUT
    # The executor saw the stop: its goal ended early, long before the 20 s delay.
    assert spin_until(graph.node, lambda: graph.stopped_goals() == 1, 5.0), (
        graph.goal_status, procs['tool_server'].output())
    graph.publish(echo(text='next'))  # the tool is free again at once
    results = graph.wait_results(2, timeout=5.0)
    assert results[1].success, results[1].error_message
    graph.one_result_each()


def test_pause_cancels_running_calls_as_well_as_waiting_ones(stack):
    start, _, procs = stack
    graph = start()
    graph.publish(echo(text='running', delay_s=20) + echo(text='waiting'))
    assert spin_until(graph.node, lambda: bool(graph.progress), 10.0)  # the first one runs
    response = graph.request(graph.set_enabled, SetBool.Request(data=False))
    assert response.success
    results = graph.wait_results(2, timeout=5.0)
    by_text = {json.loads(c.arguments)['text']: c.call_id for c in graph.calls}
    codes = {r.call_id: r.error_code for r in results}
    assert codes[by_text['running']] == ErrorCodes.PAUSED  # documented: paused, not cancelled
    assert codes[by_text['waiting']] == ErrorCodes.PAUSED
    running = next(r for r in results if r.call_id == by_text['running'])
    assert 'its executor stopped it while it ran' in running.error_message
    assert running.outcome == 'ran'  # its executor confirmed it stopped part-way
    waiting = next(r for r in results if r.call_id == by_text['waiting'])
    assert waiting.outcome == 'not_run'
    assert spin_until(graph.node, lambda: graph.stopped_goals() == 1, 5.0), (
        graph.goal_status, procs['tool_server'].output())
    graph.one_result_each()


def test_cancel_service_cancels_every_call_of_a_generation(stack):
    start, _, _ = stack
    graph = start()
    graph.publish(echo(text='one', delay_s=20) + echo(text='two'))
    graph.publish(echo(text='other generation'))
    assert spin_until(graph.node, lambda: len(graph.calls) == 3 and bool(graph.progress), 10.0)
    generation = graph.calls[0].generation_id
    assert graph.calls[1].generation_id == generation != graph.calls[2].generation_id
    response = graph.request(graph.cancel, CancelCalls.Request(generation_id=generation))
    assert response.success, response.message
    assert sorted(response.cancelled_call_ids) == sorted(c.call_id for c in graph.calls[:2])
    results = {r.call_id: r for r in graph.wait_results(3, timeout=10.0)}
    for call in graph.calls[:2]:
        assert results[call.call_id].error_code == ErrorCodes.CANCELLED
    assert results[graph.calls[2].call_id].success  # ran once the tool was free
    assert spin_until(graph.node, lambda: graph.stopped_goals() == 1, 5.0)
    nothing = graph.request(graph.cancel, CancelCalls.Request(call_id='no-such-call'))
    assert not nothing.success and list(nothing.cancelled_call_ids) == []
    graph.one_result_each()


def test_executor_killed_mid_goal_gives_one_timeout_then_recovers(stack):
    start, start_tool_server, procs = stack
    graph = start('tool.echo.timeout_s:=3.0')
    graph.publish(echo(text='doomed', delay_s=20))
    assert spin_until(graph.node, lambda: bool(graph.progress), 10.0)
    procs['tool_server'].kill()
    [result] = graph.wait_results(1, timeout=10.0)
    assert result.error_code == ErrorCodes.TIMEOUT, result.error_message
    restarted_at = time.time()  # the dispatcher's clock is system time too
    start_tool_server()
    # The dispatcher finds the new executor and proves it; no call of this test is repeated.
    # Only diagnostics published after the restart count: one from before the kill can still
    # be waiting in this node's queue, and would say the dead executor was ready.
    assert spin_until(graph.node, lambda: graph.executor_ready
                      and graph.ready_stamp > restarted_at, 30.0), (
        f'restarted at {restarted_at:.1f}; the last echo reports (stamp, ready): '
        f'{[(t, v.get("executor_available")) for t, v in graph.echo_reports][-40:]}\n'
        + procs['dispatcher'].output() + '--- tool_server\n' + procs['tool_server'].output())
    graph.publish(echo(text='after restart'))  # waits for the new executor, proven first
    results = graph.wait_results(2, timeout=20.0)
    assert results[1].success, results[1].error_message + procs['dispatcher'].output()
    assert json.loads(results[1].content) == {'text': 'after restart'}
    # The operator sees the recovery in the log, not only the timeout.
    assert '/lerobot_tools/echo: its answers reach us again' in procs['dispatcher'].output()
    graph.one_result_each()
