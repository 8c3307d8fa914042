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
A scripted policy for demos: publishes generations in several model output formats.

Each line of the script is one generation, as a LeRobot policy (or an LLM behind it) would
write it. The default script exercises the LeRobot `<say>` marker, a Hermes `<tool_call>`, a
pythonic call list, a bound action (close_gripper, with feedback) and one call the catalog
rejects, so the demo shows successes and an error.
"""

import sys
from typing import Any

from lerobot_tools_ros.nodes.params import declare_table
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parameters.declarations import DEMO_SCRIPT, SCRIPTED_POLICY
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

DEFAULT_SCRIPT = DEMO_SCRIPT  # declared with the node's parameters


class ScriptedPolicy(Node):
    """Publish one scripted generation every `interval_s` once the dispatcher listens."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('scripted_policy', **kwargs)
        values = declare_table(self, SCRIPTED_POLICY)
        self.script = values['script']
        self.interval_s = values['interval_s']
        self.repeat = values['repeat']
        topic = values['output_topic']
        self.published = 0
        self._pub = self.create_publisher(
            String, topic, QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        self._timer = self.create_timer(self.interval_s, self._tick)

    def _tick(self) -> None:
        if self._pub.get_subscription_count() == 0:
            return  # nothing listens yet: wait instead of losing the generation
        if self.published >= len(self.script):
            if not self.repeat:
                self._timer.cancel()
                self.get_logger().info(f'script finished ({self.published} generations)')
                return
            self.published = 0
        text = self.script[self.published]
        self._pub.publish(String(data=text))
        self.published += 1
        first_line = text.splitlines()[-1] if text else ''
        self.get_logger().info(f'generation {self.published}/{len(self.script)}: {first_line}')

    @property
    def finished(self) -> bool:
        return not self.repeat and self.published >= len(self.script)


def main(args: list[str] | None = None) -> int:
    return run_node(ScriptedPolicy, 'scripted_policy', args)


if __name__ == '__main__':
    sys.exit(main())
