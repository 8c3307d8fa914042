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
When a call was sent: goal ids that say it (UUID version 7, RFC 9562), and request stamps.

The dispatcher gives each RunTool goal such an id, and stamps each CallTool request with the
system time (`stamp`). tool_server reads how long a call waited before it could take it (a busy
tool thread, a stalled process): a call that waited may have a stop (`names.tool_stop_topic`)
still on its way, sent after it but travelling apart, so it is held while stops are taken,
before the tool may act (`hold_until`): as long again as it was late, within `STOP_GRACE_S` and
`MAX_HOLD_S`. After a stall DDS delivers what waited by retransmission, and a stop was seen
arriving a third of a second after its call, taken three seconds late. Any other id, and a zero
stamp (a caller that says nothing), reads as not waited. Clocks are compared across processes:
on one host that is exact; a tool_server whose clock runs ahead of its caller's holds calls that
were on time (at most `MAX_HOLD_S`), and one behind may not hold a late call. Pure Python.
"""

import os
import time

__all__ = ['LATE_S', 'MAX_HOLD_S', 'STOP_GRACE_S', 'hold_until', 'new_goal_id', 'sent_at',
           'stamp_waited_s', 'waited_s']

LATE_S = 0.1  # a call taken this long after it was sent may have a stop still on its way
STOP_GRACE_S = 0.25  # the least such a call waits for that stop before its tool may act
MAX_HOLD_S = 2.0  # the most: a call that waited longer is held this long


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
    return _waited_since(sent_at(goal_id), now_s)


def stamp_waited_s(sec: int, nanosec: int, now_s: float | None = None) -> float:
    """Return how long ago a request stamped so (system time) was sent (0 when unstamped)."""
    return _waited_since(sec + nanosec / 1e9 if sec or nanosec else None, now_s)


def hold_until(waited: float, now_monotonic: float | None = None) -> float:
    """Return the monotonic time a call taken after waiting so long may start at (0: now)."""
    if waited <= LATE_S:
        return 0.0
    hold = min(max(waited, STOP_GRACE_S), MAX_HOLD_S)
    return (time.monotonic() if now_monotonic is None else now_monotonic) + hold


def _waited_since(sent: float | None, now_s: float | None) -> float:
    if sent is None:
        return 0.0
    return max(0.0, (time.time() if now_s is None else now_s) - sent)
