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
``kind: read``: a read-only tool that returns a message from a topic.

.. code-block:: yaml

    get_battery:
      kind: read
      topic: /battery_state
      type: sensor_msgs/msg/BatteryState
      mode: latest              # latest: the last message received; next: wait for a new one
      max_age_s: 5.0            # latest: older than this is stale_frame (0: any age)
      timeout_s: 1.0            # how long to wait for a (first / next) message
      fields: [percentage, voltage, power_supply_status]   # optional: only these fields
      qos: reliable             # reliable | sensor_data | transient_local

No message within ``timeout_s`` is ``no_frame``; a latest message older than ``max_age_s`` is
``stale_frame``. (These codes were named for camera frames; they mean "no data" and "data too
old" for any topic, so bindings reuse them rather than adding codes.)
"""

import threading
import time
from typing import Any

from lerobot_tools_ros import errors
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.tools.base import CallContext
from lerobot_tools_ros.tools.bindings.base import (
    BoundTool, ConfigReader, content_json, QOS_CHOICES,
)
from lerobot_tools_ros.tools.bindings.interfaces import fields_of, message_to_json, type_name
from lerobot_tools_ros.tools.bindings.qos import qos_profile

__all__ = ['ReadBinding']


class ReadBinding(BoundTool):
    """Return the latest (or next) message on ``topic`` as JSON."""

    KIND = 'read'
    KEYS = ('kind', 'topic', 'type', 'mode', 'max_age_s', 'timeout_s', 'fields', 'qos')

    def __init__(self, schema: dict, config: dict, where: str) -> None:
        super().__init__(schema, config, where)
        reader = ConfigReader(config, where, self.KEYS)
        self.topic = reader.ros_name('topic')
        self.type_name = config.get('type', '')
        self.message_type = reader.interface('type', 'msg')
        self.mode = reader.choice('mode', ('latest', 'next'), 'latest')
        self.max_age_s = reader.number('max_age_s', 0.0)
        self.timeout_s = reader.number('timeout_s', 1.0, positive=True)
        self.qos = reader.choice('qos', QOS_CHOICES, 'reliable')
        self.fields: list[str] = []
        wanted = config.get('fields')
        if wanted is not None and self.message_type is not None:
            known = fields_of(self.message_type)
            if not isinstance(wanted, list) or not wanted:
                reader.problems.append(f'{where}.fields: must be a non-empty list of field names')
            else:
                for name in wanted:
                    if name not in known:
                        reader.problems.append(
                            f'{where}.fields: unknown field: {type_name(self.message_type)} has '
                            f'no field {name!r} (fields: {", ".join(known)})')
                self.fields = [str(name) for name in wanted]
        reader.done()
        self._condition = threading.Condition()
        self._latest: Any = None
        self._received = 0.0
        self._count = 0
        self._node: Any = None
        self._subscription: Any = None

    def describe(self) -> str:
        return f'read {self.type_name} from {self.topic} ({self.mode})'

    def bind_ros(self, node: Any) -> None:
        """Subscribe on the host node (spun by its executor, so "latest" is always current)."""
        self._node = node
        self._subscription = node.create_subscription(
            self.message_type, self.topic, self._on_message, qos_profile(self.qos))
        self.topic = self._subscription.topic_name

    def _on_message(self, message: Any) -> None:
        with self._condition:
            self._latest = message
            self._received = time.monotonic()
            self._count += 1
            self._condition.notify_all()

    def call(self, arguments: dict, context: CallContext | None = None) -> str:
        """Return the message as JSON (``fields`` only, when configured)."""
        context = self._context(context)
        if self._subscription is None:
            raise ToolError(errors.UNAVAILABLE, f'{self.name}: not bound to ROS')
        stopped = self._stopped(context)
        deadline = time.monotonic() + self.timeout_s
        with self._condition:
            seen = self._count if self.mode == 'next' else 0
            while not self._usable(seen):
                if stopped():
                    raise self._stop_error(context, 'while waiting for a message')
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._no_message(seen)
                self._condition.wait(min(remaining, 0.05))
            message = self._latest
        data, non_finite = message_to_json(message)
        if self.fields:
            data = {name: data[name] for name in self.fields}
            non_finite = {path: value for path, value in non_finite.items()
                          if path.split('.')[0].split('[')[0] in self.fields}
        return content_json(data, non_finite)

    def _usable(self, seen: int) -> bool:
        """Tell whether the message held now answers the call (called with the lock held)."""
        if self._count <= seen:
            return False
        return not (self.mode == 'latest' and self.max_age_s
                    and time.monotonic() - self._received > self.max_age_s)

    def _no_message(self, seen: int) -> ToolError:
        if self._count > seen:  # latest mode: there is a message, but too old
            age = time.monotonic() - self._received
            return ToolError(errors.STALE_FRAME,
                             f'{self.name}: the latest message on {self.topic} is {age:.1f} s '
                             f'old (max_age_s {self.max_age_s:g}) and no newer one came within '
                             f'{self.timeout_s:g} s')
        publishers = self._node.count_publishers(self.topic)
        what = 'no new message' if self.mode == 'next' and self._count else 'no message'
        return ToolError(errors.NO_FRAME, f'{self.name}: {what} on {self.topic} within '
                                          f'{self.timeout_s:g} s ({publishers} publisher(s))')

    def _release(self) -> None:
        if self._subscription is not None and self._node is not None:
            self._node.destroy_subscription(self._subscription)
            self._subscription = None
