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
Publish known test images on several topics at once, as a stand-in for camera drivers.

Run as a real process by ``test_record_observation.py``:

    python camera_publisher.py '<json list of streams>' [--rate HZ]

Each stream is ``{"topic", "kind": "raw" | "jpeg" | "png", "encoding", "qos": "best_effort" |
"reliable", "width", "height", "pattern": "gradient" | "red", "bigendian": bool, "pad": int}``.
The pixels come from ``pattern()``, which the tests import to know what was sent. Prints
``READY`` once every publisher exists.
"""

import argparse
import json
import signal
import sys
from typing import Any

import cv2
import numpy as np

CHANNELS = {'mono8': 1, 'mono16': 1, 'rgb8': 3, 'bgr8': 3, 'bgra8': 4, 'rgba8': 4}


def pattern(encoding: str, width: int, height: int, kind: str = 'gradient') -> np.ndarray:
    """Pixels in the encoding's own channel order; every channel differs, no two rows repeat."""
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    if encoding == 'mono16':
        return ((x * 997 + y * 331 + 12345) % 65536).astype(np.uint16)
    if encoding == 'mono8':
        return ((x * 7 + y * 3) % 256).astype(np.uint8)
    channels = CHANNELS[encoding]
    if kind == 'red':
        first = np.full((height, width), 255)
        planes = [first, np.zeros_like(first), np.zeros_like(first), np.full_like(first, 255)]
        if encoding.startswith('bgr'):
            planes[0], planes[2] = planes[2], planes[0]
    else:
        planes = [(x * 5 + 1) % 256, (y * 9 + 2) % 256, ((x + y) * 3 + 7) % 256,
                  (x * 11 + y) % 256]
    return np.dstack(planes[:channels]).astype(np.uint8)


def compressed_payload(stream: dict) -> bytes:
    """Return the exact bytes a compressed stream sends (deterministic for one OpenCV)."""
    encoding = stream.get('encoding', 'bgr8')
    pixels = pattern(encoding, stream['width'], stream['height'], stream.get('pattern',
                                                                             'gradient'))
    if stream['kind'] == 'jpeg':
        ok, data = cv2.imencode('.jpg', pixels, [cv2.IMWRITE_JPEG_QUALITY, 90])
    else:
        ok, data = cv2.imencode('.png', pixels, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    assert ok
    return data.tobytes()


def _message(stream: dict) -> Any:
    from sensor_msgs.msg import CompressedImage, Image

    topic = stream['topic']
    frame_id = 'cam' + topic.replace('/', '_')
    if stream['kind'] in ('jpeg', 'png'):
        fmt = stream.get('encoding', 'bgr8') + (
            '; jpeg compressed bgr8' if stream['kind'] == 'jpeg' else '; png compressed')
        msg = CompressedImage(format=fmt, data=compressed_payload(stream))
    else:
        encoding = stream['encoding']
        pixels = pattern(encoding, stream['width'], stream['height'],
                         stream.get('pattern', 'gradient'))
        bigendian = bool(stream.get('bigendian', False))
        if pixels.dtype.itemsize > 1:
            pixels = pixels.astype(pixels.dtype.newbyteorder('>' if bigendian else '<'))
        rows = pixels.reshape(stream['height'], -1).view(np.uint8)
        pad = int(stream.get('pad', 0))
        if pad:
            rows = np.hstack([rows, np.full((rows.shape[0], pad), 0xAB, np.uint8)])
        msg = Image(height=stream['height'], width=stream['width'], encoding=encoding,
                    is_bigendian=int(bigendian), step=rows.shape[1],
                    data=np.ascontiguousarray(rows).tobytes())
    msg.header.frame_id = frame_id
    return msg


def main(argv: list[str] | None = None) -> int:
    """Publish every stream at ``--rate`` until SIGINT/SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('streams', help='JSON list of stream descriptions')
    parser.add_argument('--rate', type=float, default=20.0)
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import CompressedImage, Image

    rclpy.init()
    node = rclpy.create_node('camera_publisher')
    entries = []
    for stream in json.loads(args.streams):
        reliability = (ReliabilityPolicy.RELIABLE if stream.get('qos') == 'reliable'
                       else ReliabilityPolicy.BEST_EFFORT)
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=reliability,
                         durability=DurabilityPolicy.VOLATILE)
        msg = _message(stream)
        msg_type = CompressedImage if stream['kind'] in ('jpeg', 'png') else Image
        entries.append((node.create_publisher(msg_type, stream['topic'], qos), msg))
    clock = node.get_clock()

    def tick() -> None:
        stamp = clock.now().to_msg()
        for publisher, msg in entries:
            msg.header.stamp = stamp
            publisher.publish(msg)

    node.create_timer(1.0 / args.rate, tick)
    signal.signal(signal.SIGTERM, lambda *_: rclpy.try_shutdown())
    print('READY', flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
