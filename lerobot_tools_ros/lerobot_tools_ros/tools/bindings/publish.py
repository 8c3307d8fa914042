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
``kind: publish``: a tool that publishes a message on a topic (once, or N times at a rate).

.. code-block:: yaml

    drive:
      kind: publish
      topic: /cmd_vel
      type: geometry_msgs/msg/Twist
      message: {linear: {x: $speed}, angular: {z: $turn}}
      repeat: 10                # messages sent (default 1) ...
      rate_hz: 20.0             # ... at this rate: a 0.5 s velocity command
      final: {}                 # then this message (here: all zeros, the robot stops)
      min_subscribers: 1        # fewer subscribers after timeout_s: unavailable (0: never)
      timeout_s: 2.0
      qos: reliable             # reliable | sensor_data | transient_local

The ``final`` message is sent even when the call is cancelled mid-way, so a stop command is
never skipped. The content says what was sent, how often, and to how many subscribers.
"""

import time
from typing import Any

from lerobot_tools_ros import errors
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.parameters.spec import MAX_SECONDS
from lerobot_tools_ros.tools.base import CallContext
from lerobot_tools_ros.tools.bindings.base import BoundTool, ConfigReader, QOS_CHOICES
from lerobot_tools_ros.tools.bindings.interfaces import ConversionError, message_to_json
from lerobot_tools_ros.tools.bindings.qos import qos_profile

__all__ = ['PublishBinding']

_POLL_S = 0.01


class PublishBinding(BoundTool):
    """Publish ``message`` (``repeat`` times at ``rate_hz``), then the optional ``final``."""

    KIND = 'publish'
    MAPPINGS = ('message', 'final')
    KEYS = ('kind', 'topic', 'type', 'message', 'repeat', 'rate_hz', 'final', 'qos',
            'min_subscribers', 'timeout_s')

    def __init__(self, schema: dict, config: dict, where: str) -> None:
        super().__init__(schema, config, where)
        reader = ConfigReader(config, where, self.KEYS)
        self.topic = reader.ros_name('topic')
        self.type_name = config.get('type', '')
        self.message_type = reader.interface('type', 'msg')
        self.message = reader.mapping('message', self.message_type, self.parameters, self.name)
        self.final = None
        if 'final' in config:
            self.final = reader.mapping('final', self.message_type, self.parameters, self.name)
        self.repeat = reader.integer('repeat', 1, minimum=1)
        self.rate_hz = reader.number('rate_hz', 10.0, minimum=1.0 / MAX_SECONDS, positive=True,
                                     maximum=1e6)
        self.qos = reader.choice('qos', QOS_CHOICES, 'reliable')
        self.min_subscribers = reader.integer('min_subscribers', 1, minimum=0)
        self.timeout_s = reader.number('timeout_s', 2.0, positive=True)
        reader.done()
        self._publisher: Any = None
        self._node: Any = None

    def describe(self) -> str:
        return f'publish {self.type_name} on {self.topic}'

    def bind_ros(self, node: Any) -> None:
        """Create the publisher on the host node."""
        self._node = node
        self._publisher = node.create_publisher(self.message_type, self.topic,
                                                qos_profile(self.qos))
        self.topic = self._publisher.topic_name

    def call(self, arguments: dict, context: CallContext | None = None) -> str:
        """Publish and report what was sent."""
        context = self._context(context)
        mapping = self.message
        if mapping is None:  # (an entry without one fails its check: never bound)
            raise ToolError(errors.UNAVAILABLE, f'{self.name}: no message mapping', errors.NOT_RUN)
        try:
            message = mapping.build(arguments)
            final = self.final.build(arguments) if self.final is not None else None
        except ConversionError as exc:
            raise ToolError(errors.INVALID_ARGUMENTS, f'{self.name}: {exc}',
                            errors.NOT_RUN) from None
        if self._publisher is None:
            raise ToolError(errors.UNAVAILABLE, f'{self.name}: not bound to ROS', errors.NOT_RUN)
        with self._lock:
            return self._publish(message, final, context)

    def _publish(self, message: Any, final: Any, context: CallContext) -> str:
        import json
        stopped = self._stopped(context)
        deadline = time.monotonic() + self.timeout_s
        while self._publisher.get_subscription_count() < self.min_subscribers:
            if stopped():
                raise self._stop_error(context, 'before anything was published', errors.NOT_RUN)
            if time.monotonic() >= deadline:
                raise ToolError(errors.UNAVAILABLE,
                                f'{self.name}: {self._publisher.get_subscription_count()} '
                                f'subscriber(s) on {self.topic} after {self.timeout_s:g} s, '
                                f'{self.min_subscribers} needed; nothing was published',
                                errors.NOT_RUN)
            time.sleep(_POLL_S)
        if stopped():  # the last moment before the first message: nothing is published
            raise self._stop_error(context, 'before anything was published', errors.NOT_RUN)
        period = 1.0 / self.rate_hz
        sent = 0
        started = time.monotonic()
        for index in range(self.repeat):
            if index and stopped():
                break
            self._publisher.publish(message)
            sent += 1
            if index + 1 < self.repeat:
                # Sleep to the next slot of the schedule (no drift), waking early on cancel.
                wake = started + (index + 1) * period
                while not stopped() and time.monotonic() < wake:
                    context.cancelled.wait(min(wake - time.monotonic(), 0.02))
        if final is not None:
            self._publisher.publish(final)
        report = {'topic': self.topic, 'type': self.type_name, 'sent': sent,
                  'subscribers': self._publisher.get_subscription_count(),
                  'message': message_to_json(message)[0]}
        if self.repeat > 1:
            report['rate_hz'] = self.rate_hz
        if final is not None:
            report['final'] = message_to_json(final)[0]
        if sent < self.repeat:
            raise ToolError(errors.CANCELLED, f'{self.name}: stopped after {sent} of '
                                              f'{self.repeat} messages'
                            + (' (final message sent)' if final is not None else '')
                            + f': {json.dumps(report, allow_nan=False)}')
        return json.dumps(report, allow_nan=False, ensure_ascii=False)

    def _release(self) -> None:
        if self._publisher is not None and self._node is not None:
            self._node.destroy_publisher(self._publisher)
            self._publisher = None
