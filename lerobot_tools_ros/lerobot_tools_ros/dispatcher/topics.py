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
What the dispatcher publishes: its topics, and the core's effects turned into their messages.

Every string that came from a model or a caller is made a valid ROS string here (`ros_string`)
before it goes out. Topics nobody subscribes to are skipped where building the message costs
something on the hot path (calls, chat).
"""

import json
import time
from typing import Any

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from lerobot_tools_interfaces.msg import ApprovalRequest, ToolCall, ToolProgress, ToolResult
from lerobot_tools_ros import names
from lerobot_tools_ros.dispatch import effects as fx
from lerobot_tools_ros.untrusted import log_text, ros_string
from rclpy.duration import Duration as RclpyDuration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
try:
    from rclpy.event_handler import PublisherEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import PublisherEventCallbacks

# No QoS event handlers on these publishers: rclpy polls every handler in Python at each wake of
# the executor (the dispatcher's per-message cost), and a subscriber with an incompatible QoS is
# reported on its own side by rclpy's and rclcpp's default handlers.
_NO_EVENTS = PublisherEventCallbacks(use_default_callbacks=False)
# At shutdown: how long the last results get to be acknowledged by their subscribers.
FLUSH_WAIT_S = 1.0


def _json(message: dict) -> str:
    """Encode JSON for a ROS string; lone surrogates stay recoverable as JSON escapes."""
    return json.dumps(message, ensure_ascii=False).encode('utf-8', 'backslashreplace').decode()


def catalog_message(catalog: Any, executor_of: Any) -> str:
    """
    Encode what a client needs to offer exactly the tools this dispatcher runs.

    ``{"source", "tools": [catalog entries as loaded], "executors": {tool: executor name},
    "cameras": [dataset cameras], "problems": [entries skipped]}``; ``executor_of(name)`` is the
    fully resolved name of a tool's CallTool service / RunTool action.
    """
    return _json({'source': catalog.source, 'tools': catalog.tools,
                  'executors': {name: executor_of(name) for name in catalog.names},
                  'cameras': catalog.camera_names, 'problems': catalog.problems})


def _duration(seconds: float) -> Duration:
    seconds = max(0.0, seconds)
    whole = int(seconds)
    return Duration(sec=whole, nanosec=int((seconds - whole) * 1e9))


class DispatcherTopics:
    """The dispatcher's publishers (calls, results, chat, progress, approvals, diagnostics)."""

    def __init__(self, node: Node, reliable: QoSProfile) -> None:
        self._node = node
        self._clock = node.get_clock()

        def publisher(kind: Any, topic: str, qos: QoSProfile | int) -> Any:
            return node.create_publisher(kind, topic, qos, event_callbacks=_NO_EVENTS)
        self._calls = publisher(ToolCall, names.CALLS_TOPIC, reliable)
        self._results = publisher(ToolResult, names.RESULTS_TOPIC, reliable)
        self._chat = publisher(String, names.CHAT_TOPIC, reliable)
        self._progress = publisher(ToolProgress, names.PROGRESS_TOPIC, reliable)
        self._diagnostics = publisher(DiagnosticArray, names.DIAGNOSTICS_TOPIC, 10)
        # Transient local: an operator tool started later still sees recent requests.
        self._approvals = publisher(
            ApprovalRequest, names.APPROVAL_REQUESTS_TOPIC,
            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL))
        # Latched: a client started later (the MCP server) gets the catalog in force at once.
        self._catalog = publisher(
            String, f'~/{names.DISPATCHER_CATALOG}',
            QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL))

    def flush(self, timeout_s: float = FLUSH_WAIT_S) -> bool:
        """
        Wait until every subscriber acknowledged the calls, results and chat published so far.

        At shutdown: a node destroyed (a process that exits) right after publishing can drop
        what its writers still hold. False when `timeout_s` passed first.
        """
        deadline = time.monotonic() + timeout_s
        for publisher in (self._calls, self._results, self._chat):
            left = max(0.0, deadline - time.monotonic())
            if not publisher.wait_for_all_acked(RclpyDuration(nanoseconds=int(left * 1e9))):
                return False
        return True

    def _stamp(self, msg: Any) -> Any:
        msg.header.stamp = self._clock.now().to_msg()
        return msg

    @property
    def progress_followed(self) -> bool:
        """Return whether anyone subscribes to progress (else feedback is not worth relaying)."""
        return bool(self._progress.get_subscription_count())

    def call(self, effect: fx.PublishCall) -> None:
        if not self._calls.get_subscription_count():
            return  # nobody listens: skip building the message (hot path)
        call = effect.call
        self._calls.publish(self._stamp(ToolCall(
            call_id=call.call_id, name=ros_string(call.name),
            arguments=ros_string(call.arguments_json), format=call.format,
            generation_id=call.generation_id, source=call.source, origin=call.origin)))

    def result(self, effect: fx.PublishResult) -> None:
        call = effect.call
        self._results.publish(self._stamp(ToolResult(
            call_id=call.call_id, generation_id=call.generation_id, source=call.source,
            origin=call.origin, name=ros_string(call.name),
            arguments=ros_string(call.arguments_json),
            success=effect.success, content=ros_string(effect.content),
            error_code=effect.error_code, error_message=ros_string(effect.error_message),
            outcome=effect.outcome, duration=_duration(effect.duration_s))))

    def chat(self, effect: fx.PublishChat) -> None:
        if not self._chat.get_subscription_count():
            return  # nobody listens: skip the JSON encoding (hot path)
        self._chat.publish(String(data=_json(effect.message)))

    def progress(self, effect: fx.PublishProgress) -> None:
        call = effect.call
        self._progress.publish(self._stamp(ToolProgress(
            call_id=call.call_id, name=ros_string(call.name), stage=ros_string(effect.stage),
            progress=float(effect.progress), detail=ros_string(effect.detail))))

    def approval(self, call: Any, reason: str, timeout_s: float) -> None:
        """Announce a call waiting for approval, or (timeout_s 0) that its request is closed."""
        self._approvals.publish(self._stamp(ApprovalRequest(
            call_id=call.call_id, name=ros_string(call.name),
            arguments=ros_string(call.arguments_json), source=call.source,
            reason=ros_string(reason), timeout=_duration(timeout_s))))

    def request_approval(self, effect: fx.RequestApproval) -> None:
        """Announce a call waiting for approval (the core's RequestApproval), and log it."""
        call = effect.call
        self.approval(call, effect.reason, effect.timeout_s)
        self._node.get_logger().info(
            f'{log_text(call.name)} [{log_text(call.call_id)}] waits for approval '
            f'({log_text(effect.reason)}); decide with ~/approve within {effect.timeout_s:g} s')

    def close_approval(self, effect: fx.ApprovalClosed) -> None:
        """Announce that a call's approval request is closed (the core's ApprovalClosed)."""
        # timeout_s 0: nothing left to decide. The topic keeps recent requests (transient
        # local), so a tool started later sees which requests are closed.
        self.approval(effect.call, f'closed: {effect.outcome}', 0.0)

    def catalog(self, catalog: Any, executor_of: Any) -> None:
        """
        Publish the catalog now in force (latched), as ``catalog_message`` encodes it.

        Called at start and after each reload's swap, from the thread that loaded it (encoding
        a 10,000-tool catalog takes tens of ms: not on the dispatch thread).
        """
        self._catalog.publish(String(data=catalog_message(catalog, executor_of)))

    @property
    def results_followed(self) -> bool:
        """Return whether anyone subscribes to results."""
        return bool(self._results.get_subscription_count())

    def result_message(self, msg: ToolResult) -> None:
        """Publish a ToolResult built elsewhere (the answers of calls a killed run left)."""
        self._results.publish(self._stamp(msg))

    def chat_message(self, message: dict) -> None:
        """Publish one chat message given as a dict."""
        self._chat.publish(String(data=_json(message)))

    def diagnostics(self, statuses: list) -> None:
        """Publish `dispatch.diagnostics.Status` values as one DiagnosticArray."""
        # Namespaced (/robot_a/dispatcher): /diagnostics is one topic for every robot.
        node_name = self._node.get_fully_qualified_name()
        array = DiagnosticArray()
        array.header.stamp = self._clock.now().to_msg()
        array.status = [DiagnosticStatus(
            level=DiagnosticStatus.WARN if status.warn else DiagnosticStatus.OK,
            name=f'{node_name}: {status.name}', hardware_id=status.hardware_id,
            message=status.message,
            values=[KeyValue(key=key, value=str(value)) for key, value in status.values.items()])
            for status in statuses]
        self._diagnostics.publish(array)
