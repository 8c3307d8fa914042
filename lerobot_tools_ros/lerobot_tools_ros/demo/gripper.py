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
A stand-in gripper for demos: an action server that closes in steps, with feedback.

It shows a catalog tool bound to a robot's own action (``config/demo_bindings.yaml`` binds
``close_gripper`` to it). A real gripper would serve its driver's action (e.g.
``control_msgs/action/GripperCommand``, which no wheel ships); this one serves
``lerobot_tools_interfaces/action/CloseGripper``: the goal is a number of steps, the feedback
and result the opening in percent after each step. Cancelling stops it where it is.

The execute callback is a coroutine that waits on timers, so the node runs correctly on the
single-threaded executor of ``lerobot-tools-ros bringup`` (no thread blocked per goal).
"""

import sys
from typing import Any

from lerobot_tools_interfaces.action import CloseGripper
from lerobot_tools_ros.nodes.params import declare_table
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parameters.declarations import DEMO_GRIPPER
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.task import Future

MAX_STEPS = 100


def openings(steps: int) -> list[int]:
    """Return the opening in percent after each of ``steps`` equal steps from 100 to 0."""
    return [round(100 * (steps - done) / steps) for done in range(1, steps + 1)]


class DemoGripper(Node):
    """Serve the gripper action; see the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('demo_gripper', **kwargs)
        values = declare_table(self, DEMO_GRIPPER)
        action = values['action']
        self.step_s = values['step_s']
        self._server = ActionServer(
            self, CloseGripper, action, self._execute, goal_callback=self._accept,
            cancel_callback=lambda _: CancelResponse.ACCEPT)
        self.get_logger().info(f'gripper action at {self.resolve_service_name(action)}')

    def _accept(self, goal: Any) -> GoalResponse:
        if not 1 <= goal.steps <= MAX_STEPS:
            self.get_logger().warning(f'rejecting a goal of {goal.steps} steps '
                                      f'(1..{MAX_STEPS})')
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    async def _sleep(self, seconds: float) -> None:
        done = Future()
        timer = self.create_timer(seconds, lambda: done.done() or done.set_result(True))
        try:
            await done
        finally:
            self.destroy_timer(timer)

    async def _execute(self, goal_handle: Any) -> CloseGripper.Result:
        plan = openings(goal_handle.request.steps)
        reached: list[int] = []
        for opening in plan:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                self.get_logger().info(f'cancelled at {reached[-1] if reached else 100}% open')
                return CloseGripper.Result(openings=reached, closed=False)
            await self._sleep(self.step_s)
            reached.append(opening)
            goal_handle.publish_feedback(CloseGripper.Feedback(openings=reached))
        goal_handle.succeed()
        self.get_logger().info(f'closed in {len(plan)} steps')
        return CloseGripper.Result(openings=reached, closed=True)


def main(args: list[str] | None = None) -> int:
    return run_node(DemoGripper, 'demo_gripper', args)


if __name__ == '__main__':
    sys.exit(main())
