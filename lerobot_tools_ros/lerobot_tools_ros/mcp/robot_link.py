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
One robot as the MCP server node sees it: its dispatcher's clients and topics, and its bridge.

A ``RobotLink`` holds everything about one robot (one dispatcher): the ``~/call``, ``~/cancel``
and ``~/approve`` clients, the parameter clients of its dispatcher and tool_server, and the
subscriptions to its latched catalog, progress, approval requests and results. Each message is
posted to the robot's own ``RosBridge`` (set as ``bridge``). A single-robot server has one link
whose names resolve in the node's namespace, as before; a fleet endpoint has one per robot
namespace (``/robot_a/dispatcher``, ``/robot_a/lerobot_tools/progress``, ...), all on one node.
Settings it does not hold itself (timeouts, byte limits, hints) are the node's.
"""

from typing import Any

from lerobot_tools_interfaces.msg import ApprovalRequest, ToolProgress, ToolResult
from lerobot_tools_interfaces.srv import Approve, CallTool, CancelCalls
from lerobot_tools_ros import names
from rclpy.parameter_client import AsyncParameterClient
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String


class RobotLink:
    """One robot's dispatcher and tool_server, wired on the MCP server node."""

    def __init__(self, node: Any, namespace: str = '', label: str = '') -> None:
        """
        Wire the robot in ``namespace`` ('' : the node's own, as a single-robot server does).

        ``label``: how the fleet endpoint names the robot ('' for a single robot).
        """
        self.node = node
        self.bridge: Any = None
        self.label = label
        self.namespace = namespace
        prefix = namespace.rstrip('/') + '/' if namespace else ''

        def resolve(name: str) -> str:
            name = name.rstrip('/')
            return name if name.startswith('/') else prefix + name

        base = resolve(node.dispatcher)
        self.dispatcher_fqn = (base if base.startswith('/') else
                               f'{node.get_namespace().rstrip("/")}/{base}')
        self.call_client = node.create_client(CallTool, f'{base}/{names.DISPATCHER_CALL}')
        self.cancel_client = node.create_client(CancelCalls,
                                                f'{base}/{names.DISPATCHER_CANCEL}')
        self.approve_client = node.create_client(Approve, f'{base}/{names.DISPATCHER_APPROVE}')
        self.param_client = AsyncParameterClient(node, base)
        self.server_param_client = AsyncParameterClient(node, resolve(node.tool_server))
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        latched = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._catalog_topic = f'{base}/{names.DISPATCHER_CATALOG}'
        self._catalog_sub = self._subscribe_catalog()
        # Set from the asyncio thread, run on the ROS thread: a fresh subscription to the
        # latched catalog when none arrived although the dispatcher is up (its late-joiner
        # copy was seen lost on a loaded machine).
        self.resubscribe = node.create_guard_condition(self._resubscribe_catalog)
        node.create_subscription(ToolProgress, prefix + names.PROGRESS_TOPIC,
                                 self._on_progress, reliable)
        node.create_subscription(ApprovalRequest, prefix + names.APPROVAL_REQUESTS_TOPIC,
                                 self._on_approval, latched)
        node.create_subscription(ToolResult, prefix + names.RESULTS_TOPIC, self._on_result,
                                 reliable)

    def __getattr__(self, name: str) -> Any:
        # The node's settings and graph queries (call_timeout_s, get_logger, count_services...).
        return getattr(self.node, name)

    def _subscribe_catalog(self) -> Any:
        return self.node.create_subscription(
            String, self._catalog_topic, self._on_catalog,
            QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL))

    def _resubscribe_catalog(self) -> None:
        self.node.destroy_subscription(self._catalog_sub)
        self._catalog_sub = self._subscribe_catalog()

    def _on_catalog(self, msg: String) -> None:
        if self.bridge is not None:
            self.bridge.post(self.bridge.on_catalog, msg.data)

    def _on_progress(self, msg: ToolProgress) -> None:
        # Only calls this server made (a dict lookup is safe across threads).
        if self.bridge is not None and msg.call_id in self.bridge.active:
            self.bridge.post(self.bridge.on_progress, msg.call_id, msg.stage, msg.progress,
                             msg.detail)

    def _on_approval(self, msg: ApprovalRequest) -> None:
        if self.bridge is not None:
            self.bridge.post(self.bridge.on_approval, msg.call_id, msg.name, msg.arguments,
                             msg.reason, msg.timeout.sec + msg.timeout.nanosec * 1e-9)

    def _on_result(self, msg: ToolResult) -> None:
        if self.bridge is not None:
            self.bridge.post(self.bridge.on_result, {
                'call_id': msg.call_id, 'name': msg.name, 'source': msg.source,
                'success': msg.success, 'error_code': msg.error_code,
                'content': msg.content[:2000], 'error_message': msg.error_message[:2000],
                'stamp': msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9})

    def parameters_changed(self) -> None:
        """Tell the bridge the dispatcher's parameters changed (``/parameter_events`` said so)."""
        if self.bridge is not None:
            self.bridge.post(self.bridge.settings_changed)
