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
A stand-in camera for demos: a moving test pattern with the frame number drawn in.

Publishes `sensor_msgs/Image` (rgb8) with the sensor-data QoS real camera drivers use, so the
record_observation tool meets the same best-effort topic it would on a robot.
"""

import sys
from typing import Any

from lerobot_tools_ros.nodes.params import declare_table
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parameters.declarations import DEMO_CAMERA
import numpy as np
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Image


def test_pattern(frame: int, width: int, height: int) -> np.ndarray:
    """An RGB frame: colour bars scrolling sideways and the frame number in large digits."""
    import cv2

    bars = np.array([[255, 255, 255], [255, 255, 0], [0, 255, 255], [0, 255, 0],
                     [255, 0, 255], [255, 0, 0], [0, 0, 255], [0, 0, 0]], dtype=np.uint8)
    columns: np.ndarray = (np.arange(width) + 4 * frame) % width * len(bars) // width
    image = np.ascontiguousarray(np.broadcast_to(bars[columns], (height, width, 3)))
    cv2.rectangle(image, (0, height - 90), (width, height), (32, 32, 32), thickness=-1)
    cv2.putText(image, f'frame {frame}', (20, height - 25), cv2.FONT_HERSHEY_SIMPLEX, 2.0,
                (255, 255, 255), 4, cv2.LINE_AA)
    return image


class DemoCamera(Node):
    """Publish the test pattern at a fixed rate."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('demo_camera', **kwargs)
        values = declare_table(self, DEMO_CAMERA)
        self.topic = values['topic']
        self.width = values['width']
        self.height = values['height']
        fps = values['fps']
        self.frame_id = values['frame_id']
        self.frame = 0
        self._pub = self.create_publisher(Image, self.topic, qos_profile_sensor_data)
        self.create_timer(1.0 / fps, self._publish)
        self.get_logger().info(
            f'publishing a {self.width}x{self.height} rgb8 test pattern at {fps:g} fps on '
            f'{self._pub.topic_name} (best effort)')

    def _publish(self) -> None:
        pixels = test_pattern(self.frame, self.width, self.height)
        msg = Image(height=self.height, width=self.width, encoding='rgb8', is_bigendian=0,
                    step=self.width * 3)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self.frame_id
        msg.data = pixels.tobytes()
        self._pub.publish(msg)
        self.frame += 1


def main(args: list[str] | None = None) -> int:
    return run_node(DemoCamera, 'demo_camera', args)


if __name__ == '__main__':
    sys.exit(main())
