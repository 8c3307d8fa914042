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
Work-arounds for defects of the rclpy releases we run on, each removable once they are fixed.

`send_goal_async`: rclpy 9.1.2 (Kilted) `ActionClient.send_goal_async` registers two futures
per goal with the executor and completes one (a regression of ros2/rclpy#1308, fixed upstream
by ros2/rclpy#1532). The orphan is never removed from the client's `_futures`, which every
executor pass over the client walks: each goal leaks memory and makes every later action message
slower (after 10,000 goals, each message walked 10,000 futures; the dispatcher's throughput fell
from hundreds to tens of calls/s). Jazzy's rclpy has one future and is left alone.
"""

from typing import Any


def send_goal_async(client: Any, goal: Any, **kwargs: Any) -> Any:
    """Send a goal like `client.send_goal_async`, dropping the orphan future rclpy may leave."""
    futures = getattr(client, '_futures', None)
    if not isinstance(futures, list):
        return client.send_goal_async(goal, **kwargs)
    # Executor threads may add and remove futures meanwhile (MultiThreadedExecutor): find the
    # orphan by identity, never by position. `before` keeps the known ones alive (ids stay unique).
    before = list(futures)
    known = {id(f) for f in before}
    future = client.send_goal_async(goal, **kwargs)
    added = [f for f in list(futures) if id(f) not in known and f is not future]
    # Read after `added`: rclpy files a future as pending before it adds it to `_futures`, and
    # unfiles it only once done, so every live future in `added` is in here but the orphan.
    pending = [f for name in ('_pending_goal_requests', '_pending_result_requests',
                              '_pending_cancel_requests')
               for f in list(getattr(client, name, {}).values())]
    for candidate in added:
        if not candidate.done() and all(candidate is not p for p in pending):
            try:
                futures.remove(candidate)  # never completed, never removed by rclpy
            except ValueError:
                pass
    return future
