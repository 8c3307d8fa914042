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
Goal ids that say when the goal was sent: UUID version 7 (RFC 9562), a millisecond timestamp.

The dispatcher gives each RunTool goal such an id. tool_server reads how long a goal waited
before it could take it (a busy tool thread, a stalled process): a goal that waited may have a
stop (`names.tool_stop_topic`) still on its way, sent after it but travelling apart, so it is
held a moment (`STOP_GRACE_S`) while stops are taken, before the tool may act. Any other id
(a caller that makes its own) reads as not waited. Clocks are compared across processes, so a
host whose clock runs ahead only costs its goals that moment. Pure Python.
"""

import os
import time

__all__ = ['LATE_S', 'STOP_GRACE_S', 'new_goal_id', 'sent_at', 'waited_s']

LATE_S = 0.1  # a goal taken this long after it was sent may have a stop still on its way
STOP_GRACE_S = 0.25  # how long such a goal waits for that stop before its tool may act


def new_goal_id(now_s: float | None = None) -> bytes:
    """Return 16 bytes: a version 7 UUID with the time it is made (or `now_s`)."""
    millis = int((time.time() if now_s is None else now_s) * 1000) & ((1 << 48) - 1)
    data = bytearray(millis.to_bytes(6, 'big') + os.urandom(10))
    data[6] = 0x70 | (data[6] & 0x0F)  # version 7
    data[8] = 0x80 | (data[8] & 0x3F)  # RFC 9562 variant
    return bytes(data)


def sent_at(goal_id: bytes) -> float | None:
    """Return when a version 7 goal id was made (seconds since the epoch), else None."""
    if len(goal_id) != 16 or goal_id[6] >> 4 != 7 or goal_id[8] >> 6 != 0b10:
        return None
    return int.from_bytes(goal_id[:6], 'big') / 1000.0


def waited_s(goal_id: bytes, now_s: float | None = None) -> float:
    """Return how long ago the goal was sent by its id (0 for an id without a time)."""
    sent = sent_at(goal_id)
    if sent is None:
        return 0.0
    return max(0.0, (time.time() if now_s is None else now_s) - sent)
