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
"""``tools.host.ToolHost`` over an rclpy node: what tools reach of ROS, made by the node."""

import importlib
from typing import Any, Callable

from lerobot_tools_ros.tools.host import Endpoint, Qos
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from rclpy.timer import Timer

try:
    from rclpy.event_handler import SubscriptionEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import SubscriptionEventCallbacks

__all__ = ['RosToolHost', 'import_type']


def import_type(name: str) -> type:
    """Return the class named ``'package/msg/Type'`` (or ``srv``, ``action``)."""
    parts = name.split('/')
    if len(parts) != 3 or parts[1] not in ('msg', 'srv', 'action') or not all(parts):
        raise ValueError(f'{name!r} is not a ROS type name like package/msg/Type')
    package, kind, type_name = parts
    try:
        return getattr(importlib.import_module(f'{package}.{kind}'), type_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f'ROS type {name} is not installed here ({exc})') from exc


def _profile(qos: Qos) -> QoSProfile:
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=qos.depth,
        reliability=ReliabilityPolicy.RELIABLE if qos.reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE)


def _endpoint(info: Any) -> Endpoint:
    return Endpoint(gid=tuple(info.endpoint_gid), node=(info.node_namespace, info.node_name),
                    topic_type=info.topic_type,
                    reliable=info.qos_profile.reliability == ReliabilityPolicy.RELIABLE)


class RosToolHost:
    """The tools' view of ``node`` (see ``tools.host.ToolHost``)."""

    def __init__(self, node: Node) -> None:
        self._node = node

    def logger(self) -> Any:
        return self._node.get_logger()

    def message_type(self, name: str) -> type:
        return import_type(name)

    def publisher(self, message_type: str, topic: str, qos: Qos) -> Any:
        return self._node.create_publisher(import_type(message_type), topic, _profile(qos))

    def subscription(self, message_type: str, topic: str, callback: Callable[[Any], None],
                     qos: Qos, on_incompatible_qos: Callable[[str], None] | None = None) -> Any:
        events = None
        if on_incompatible_qos is not None:
            def incompatible(info: Any) -> None:
                on_incompatible_qos(getattr(getattr(info, 'last_policy_kind', None), 'name',
                                            'unknown'))
            events = SubscriptionEventCallbacks(incompatible_qos=incompatible)
        return self._node.create_subscription(import_type(message_type), topic, callback,
                                              _profile(qos), event_callbacks=events)

    def service(self, service_type: str, name: str, callback: Callable[[Any, Any], Any]) -> Any:
        return self._node.create_service(import_type(service_type), name, callback)

    def timer(self, period_s: float, callback: Callable[[], None]) -> Any:
        return self._node.create_timer(period_s, callback)

    def destroy(self, entity: Any) -> None:
        if isinstance(entity, Timer):
            self._node.destroy_timer(entity)
        elif isinstance(entity, Subscription):
            self._node.destroy_subscription(entity)
        else:
            raise TypeError(f'a tool host destroys timers and subscriptions, not {entity!r}')

    def now(self) -> Any:
        return self._node.get_clock().now().to_msg()

    def now_ns(self) -> int:
        return self._node.get_clock().now().nanoseconds

    def resolve_topic_name(self, name: str) -> str:
        return self._node.resolve_topic_name(name)

    def resolve_service_name(self, name: str) -> str:
        return self._node.resolve_service_name(name)

    def topic_types(self) -> dict[str, list[str]]:
        return dict(self._node.get_topic_names_and_types())

    def publishers_of(self, topic: str) -> list[Endpoint]:
        return [_endpoint(info) for info in self._node.get_publishers_info_by_topic(topic)]

    def subscriptions_of(self, topic: str) -> list[Endpoint]:
        return [_endpoint(info) for info in self._node.get_subscriptions_info_by_topic(topic)]
