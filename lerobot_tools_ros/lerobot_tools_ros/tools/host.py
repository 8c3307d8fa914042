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
What a tool may use of the ROS node that hosts it: a small, typed interface.

A tool that needs ROS (a publisher, a subscription, a service, a timer, the clock, the graph)
asks its host in ``bind(host)``; ``nodes.tool_host.RosToolHost`` implements it over the
``tool_server`` node (or the dispatcher's, for a tool run in process). The tool's module then
imports nothing of ROS: it names the message types it exchanges as strings at its top
(``'lerobot_tools_interfaces/msg/AudioChunk'``), and this module is everything else it can reach.
Tools that bind robot interfaces of any type (``tools/bindings``) keep the raw
``bind_ros(node)`` hook.
"""

from dataclasses import dataclass
from typing import Any, Callable, Protocol

__all__ = ['bound', 'Endpoint', 'Logger', 'Publisher', 'Qos', 'Subscription', 'ToolHost']


@dataclass(frozen=True)
class Qos:
    """A topic's QoS as a tool states it (keep last ``depth``, volatile); the host builds it."""

    depth: int = 10
    reliable: bool = True  # False: best effort, what camera drivers publish (sensor data)


@dataclass(frozen=True)
class Endpoint:
    """One publisher or subscription of a topic, as the ROS graph reports it."""

    gid: tuple[int, ...]
    node: tuple[str, str]  # (namespace, name)
    topic_type: str        # 'sensor_msgs/msg/Image'
    reliable: bool


class Logger(Protocol):
    """The host node's logger (rcutils: its lines carry the node's name)."""

    def debug(self, message: str) -> Any: ...  # noqa: D102
    def info(self, message: str) -> Any: ...  # noqa: D102
    def warning(self, message: str) -> Any: ...  # noqa: D102
    def error(self, message: str) -> Any: ...  # noqa: D102


class Publisher(Protocol):
    """A publisher the host made for the tool."""

    topic_name: str

    def publish(self, message: Any) -> None: ...  # noqa: D102
    def get_subscription_count(self) -> int: ...  # noqa: D102


class Subscription(Protocol):
    """A subscription the host made for the tool."""

    topic_name: str

    def get_publisher_count(self) -> int: ...  # noqa: D102


class ToolHost(Protocol):
    """Everything of ROS a tool reaches; names of types are ``'package/msg/Type'`` strings."""

    def logger(self) -> Logger:
        """Return the host node's logger."""
        ...

    def message_type(self, name: str) -> type:
        """Return the class of a message or service type, e.g. ``'std_srvs/srv/Trigger'``."""
        ...

    def publisher(self, message_type: str, topic: str, qos: Qos) -> Publisher:
        """Advertise ``topic`` (relative names resolve in the host node's namespace)."""
        ...

    def subscription(self, message_type: str, topic: str, callback: Callable[[Any], None],
                     qos: Qos, on_incompatible_qos: Callable[[str], None] | None = None,
                     ) -> Subscription:
        """Subscribe; ``on_incompatible_qos(policy name)`` when a publisher cannot match."""
        ...

    def service(self, service_type: str, name: str,
                callback: Callable[[Any, Any], Any]) -> Any:
        """Serve ``name`` (``~/stop`` is private to the host node)."""
        ...

    def timer(self, period_s: float, callback: Callable[[], None]) -> Any:
        """Call ``callback`` every ``period_s`` on the host's executor (``.cancel()`` ends it)."""
        ...

    def destroy(self, entity: Any) -> None:
        """Destroy a subscription or timer this host made (at the tool's ``close``)."""
        ...

    def now(self) -> Any:
        """Return the host clock's time as a ``builtin_interfaces/msg/Time`` (a header stamp)."""
        ...

    def now_ns(self) -> int:
        """Return the host clock's time in nanoseconds."""
        ...

    def resolve_topic_name(self, name: str) -> str:
        """Return the full name ``name`` has for the host node (namespace, remaps)."""
        ...

    def resolve_service_name(self, name: str) -> str:
        """Return the full name of a service ``name`` of the host node."""
        ...

    def topic_types(self) -> dict[str, list[str]]:
        """Return every advertised topic (full name) with its types."""
        ...

    def publishers_of(self, topic: str) -> list[Endpoint]:
        """Return the publishers of a topic (full name) on the graph."""
        ...

    def subscriptions_of(self, topic: str) -> list[Endpoint]:
        """Return the subscriptions of a topic (full name) on the graph."""
        ...


def bound(host: ToolHost | None, tool_name: str) -> ToolHost:
    """Return the host a tool's ``bind`` was given; its ROS work runs only after that."""
    if host is None:
        raise RuntimeError(f'{tool_name}: not bound to a host (bind() first)')
    return host
