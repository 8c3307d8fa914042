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
The dispatcher's `record_events`: interjections and episode markers into the audit log.

With it on, the dispatcher subscribes to `lerobot_tools/interjections` (what a user said to the
robot, std_msgs/String) and `lerobot_tools/episode_markers` (`start 3`, `end 3` or JSON, see
`dataset.markers`) and writes one audit record for each (`interjection` with `text`; `episode`
with `marker`, `episode` and `rate`), so `lerobot-tools-ros dataset add-events` can put the
interjections and the robot's calls on the right frames of the episode without guessing.
Nothing here touches the dispatch core.
"""

from typing import Any

from lerobot_tools_ros import errors, names
from lerobot_tools_ros.dataset.markers import AUDIT_EVENT, INTERJECTION_EVENT, \
    parse_episode_marker
from lerobot_tools_ros.untrusted import log_text, ros_string
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

PARAMETER = 'record_events'


def record_events(node: Node, audit: Any) -> bool:
    """When the parameter `record_events` is true, subscribe and write to `audit`."""
    enabled = node.get_parameter(PARAMETER).value  # declared with the dispatcher's others
    if not enabled:
        return False
    if audit is None:
        raise errors.ConfigurationError(
            f'{PARAMETER} is true but audit_log is empty: set audit_log to a file path, or '
            f'{PARAMETER} to false')
    clock = node.get_clock()
    logger = node.get_logger()
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)

    def on_interjection(msg: String) -> None:
        audit.write(INTERJECTION_EVENT, clock.now().nanoseconds, text=ros_string(msg.data))

    def on_marker(msg: String) -> None:
        try:
            marker = parse_episode_marker(msg.data)
        except ValueError as exc:
            logger.warning(f'ignoring an episode marker on {marker_sub.topic_name}: '
                           f'{log_text(exc, 300)}')
            return
        audit.write(AUDIT_EVENT, clock.now().nanoseconds, **marker)

    node.create_subscription(String, names.INTERJECTION_TOPIC, on_interjection, qos)
    marker_sub = node.create_subscription(String, names.EPISODE_MARKER_TOPIC, on_marker, qos)
    return True
