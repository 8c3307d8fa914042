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
tool_server's stop topics: the call ids its callers stopped, taken where nothing can race them.

A stop must win over the call it stops even when both wait in a tool_server that was busy or
stalled (SIGSTOP): its goal and its stop then arrive together, and the goal may be taken first.
So no executor takes the stop topics. Their subscriptions live on a node of their own that is
never spun; a thread takes what arrives (waiting on a native wait set, as
``rclpy.wait_for_message`` does), and `drain()` takes it too, under the same lock, right before
a tool starts a call: a stop that has reached the process is applied before the call can act.
"""

import threading
from typing import Any, Callable

from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

__all__ = ['StopListener']

_WAIT_NS = 1_000_000_000  # a wait ends at least this often (a closed listener is noticed)


class StopListener:
    """The stop topics of `parent`'s tools, taken by a thread of its own and by `drain()`."""

    def __init__(self, parent: Any) -> None:
        import rclpy
        self._context = parent.context
        self._node = rclpy.create_node(
            f'{parent.get_name()}_stops', namespace=parent.get_namespace(),
            context=parent.context, start_parameter_services=False, use_global_arguments=False)
        self._subscriptions: list[tuple[Any, Callable[[str], None]]] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._wake: Any = None

    def add(self, topic: str, on_stop: Callable[[str], None]) -> Callable[[], None]:
        """
        Listen on `topic` (before `start`); `on_stop(call_id)` runs for each stop.

        Returns a function that applies the stops of this topic that have arrived.
        """
        subscription = self._node.create_subscription(
            String, topic, lambda _message: None,  # taken here, never by an executor
            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        entry = (subscription, on_stop)
        self._subscriptions.append(entry)
        return lambda: self._drain([entry])

    def start(self) -> None:
        """Start taking stops on a thread of its own."""
        from rclpy.guard_condition import GuardCondition
        self._wake = GuardCondition(None, None, context=self._context)
        self._thread = threading.Thread(target=self._run, daemon=True, name='tool-stops')
        self._thread.start()

    def drain(self) -> None:
        """Apply every stop that has arrived, on every topic."""
        self._drain(self._subscriptions)

    def _drain(self, entries: list) -> None:
        with self._lock:
            if self._closed.is_set():
                return
            for subscription, on_stop in entries:
                while True:
                    with subscription.handle:
                        taken = subscription.handle.take_message(subscription.msg_type,
                                                                 subscription.raw)
                    if taken is None:
                        break
                    on_stop(taken[0].data)

    def _run(self) -> None:
        from rclpy.impl.implementation_singleton import rclpy_implementation as implementation
        wake = self._wake
        wait_set = implementation.WaitSet(len(self._subscriptions), 1, 0, 0, 0, 0,
                                          self._context.handle)
        try:
            while not self._closed.is_set() and self._context.ok():
                wait_set.clear_entities()
                for subscription, _ in self._subscriptions:
                    wait_set.add_subscription(subscription.handle)
                wait_set.add_guard_condition(wake.handle)
                wait_set.wait(_WAIT_NS)
                if not self._closed.is_set():
                    self.drain()
        except implementation.InvalidHandle:
            pass  # the context shut down under the wait
        finally:
            wait_set.destroy_when_not_in_use()

    def close(self) -> None:
        """Stop the thread and destroy the node (once)."""
        if self._closed.is_set():
            return
        with self._lock:  # a drain in progress ends first
            self._closed.set()
        if self._wake is not None:
            try:
                self._wake.trigger()
            except Exception:  # noqa: B902 - destroyed by a context shutdown already
                pass
        if self._thread is not None:
            self._thread.join(timeout=3.0)
        if self._wake is not None:
            self._wake.destroy()
        self._node.destroy_node()
