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
A robot's own ROS interfaces, for binding tests: real servers of wheel-shipped interface types.

``RobotServers`` puts on one node, spun by its own executor thread: a ``std_srvs/SetBool``
service (a light), a ``test_msgs/Fibonacci`` action (a slow gripper with feedback, that records
cancels), a ``geometry_msgs/Twist`` subscriber (a mobile base) and a ``sensor_msgs/BatteryState``
publisher (a battery, whose voltage reads NaN). Everything they receive is recorded.
"""

import math
import threading
import time

from geometry_msgs.msg import Twist
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import BatteryState
from std_srvs.srv import SetBool
from test_msgs.action import Fibonacci

LIGHT_SERVICE = '/robot/light'
FAULTY_SERVICE = '/robot/faulty'  # answers success=false ('motor fault'); data=false: after 3 s
GRIPPER_ACTION = '/robot/gripper'
CMD_VEL_TOPIC = '/robot/cmd_vel'
BATTERY_TOPIC = '/robot/battery'


class RobotServers:
    """The robot side of the graph; see the module docstring."""

    def __init__(self, context, *, step_s: float = 0.05, battery: bool = True,
                 services: bool = True) -> None:
        import rclpy
        self.node = rclpy.create_node(f'robot_{id(self)}', context=context)
        self.step_s = step_s
        self.light_requests: list[bool] = []
        self.goals: list[int] = []
        self.cancelled_goals: list[int] = []
        self.finished_goals: list[int] = []
        self.twists: list[Twist] = []
        self.lock = threading.Lock()
        group = ReentrantCallbackGroup()
        if services:
            self.node.create_service(SetBool, LIGHT_SERVICE, self._light, callback_group=group)
            self.node.create_service(SetBool, FAULTY_SERVICE, self._faulty, callback_group=group)
            # Goals with a negative order are rejected; order 13 aborts.
            self.action = ActionServer(
                self.node, Fibonacci, GRIPPER_ACTION, self._execute, callback_group=group,
                goal_callback=lambda goal: GoalResponse.REJECT if goal.order < 0
                else GoalResponse.ACCEPT,
                cancel_callback=lambda _: CancelResponse.ACCEPT)
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(Twist, CMD_VEL_TOPIC, self._twist, reliable,
                                      callback_group=group)
        self.battery_pub = self.node.create_publisher(BatteryState, BATTERY_TOPIC, reliable)
        self.battery_timer = None
        if battery:
            self.battery_timer = self.node.create_timer(0.05, self._battery, callback_group=group)
        self.executor = MultiThreadedExecutor(num_threads=3, context=context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _light(self, request, response):
        with self.lock:
            self.light_requests.append(request.data)
        response.success = True
        response.message = 'light is ' + ('on' if request.data else 'off')
        return response

    def _faulty(self, request, response):
        if not request.data:
            time.sleep(3.0)
        response.success = False
        response.message = 'motor fault'
        return response

    def _execute(self, goal_handle):
        order = goal_handle.request.order
        with self.lock:
            self.goals.append(order)
        if order == 13:
            goal_handle.abort()
            return Fibonacci.Result(sequence=[13])
        sequence = [0, 1] if order > 0 else [0]
        for _ in range(max(order - 1, 0)):
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                with self.lock:
                    self.cancelled_goals.append(order)
                return Fibonacci.Result(sequence=sequence)
            sequence.append(sequence[-1] + sequence[-2])
            goal_handle.publish_feedback(Fibonacci.Feedback(sequence=sequence))
            time.sleep(self.step_s)
        goal_handle.succeed()
        with self.lock:
            self.finished_goals.append(order)
        return Fibonacci.Result(sequence=sequence)

    def _twist(self, message: Twist) -> None:
        with self.lock:
            self.twists.append(message)

    def _battery(self) -> None:
        message = BatteryState(voltage=math.nan, percentage=0.8, present=True,
                               cell_voltage=[3.7, 3.75], serial_number='B-1')
        message.header.stamp = self.node.get_clock().now().to_msg()
        self.battery_pub.publish(message)

    def stop_battery(self) -> None:
        if self.battery_timer is not None:
            self.battery_timer.cancel()

    def start_battery(self) -> None:
        """Publish again after `stop_battery` (tests of one module run in any order)."""
        if self.battery_timer is not None:
            self.battery_timer.reset()

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=2.0)
        self.thread.join(timeout=5.0)
        self.node.destroy_node()
