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
``close_gripper`` to it). A real gripper would serve ``control_msgs/action/GripperCommand``,
which no wheel ships; this one uses ``test_msgs/action/Fibonacci`` (an int32 goal, int32[]
feedback and result) with its own meaning: the goal ``order`` is the number of steps, the
feedback and result ``sequence`` the opening in percent after each step. Cancelling stops it
where it is.

The execute callback is a coroutine that waits on timers, so the node runs correctly on the
single-threaded executor of ``lerobot-tools-ros bringup`` (no thread blocked per goal).
"""

import sys
from typing import Any

from lerobot_tools_ros import names
from lerobot_tools_ros.nodes.params import declare
from lerobot_tools_ros.nodes.runner import run_node
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.task import Future
from test_msgs.action import Fibonacci

MAX_STEPS = 100


def openings(steps: int) -> list[int]:
    """Return the opening in percent after each of ``steps`` equal steps from 100 to 0."""
    return [round(100 * (steps - done) / steps) for done in range(1, steps + 1)]


class DemoGripper(Node):
    """Serve the gripper action; see the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('demo_gripper', **kwargs)
        action = declare(self, 'action', names.DEMO_GRIPPER_ACTION,
                         'Action name (test_msgs/action/Fibonacci: order = steps).',
                         read_only=True)
        self.step_s = declare(self, 'step_s', 0.2, 'Seconds per closing step.', read_only=True)
        self._server = ActionServer(
            self, Fibonacci, action, self._execute, goal_callback=self._accept,
            cancel_callback=lambda _: CancelResponse.ACCEPT)
        self.get_logger().info(f'gripper action at {self.resolve_service_name(action)}')

    def _accept(self, goal: Any) -> GoalResponse:
        if not 1 <= goal.order <= MAX_STEPS:
            self.get_logger().warning(f'rejecting a goal of {goal.order} steps '
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

    async def _execute(self, goal_handle: Any) -> Fibonacci.Result:
        plan = openings(goal_handle.request.order)
        reached: list[int] = []
        for opening in plan:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                self.get_logger().info(f'cancelled at {reached[-1] if reached else 100}% open')
                return Fibonacci.Result(sequence=reached)
            await self._sleep(self.step_s)
            reached.append(opening)
            goal_handle.publish_feedback(Fibonacci.Feedback(sequence=reached))
        goal_handle.succeed()
        self.get_logger().info(f'closed in {len(plan)} steps')
        return Fibonacci.Result(sequence=reached)


def main(args: list[str] | None = None) -> int:
    return run_node(DemoGripper, 'demo_gripper', args)


if __name__ == '__main__':
    sys.exit(main())
