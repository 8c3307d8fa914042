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
Whether a robot is there, from repeated looks at the ROS graph (no ROS here: the caller looks).

One ``Presence`` per robot (its dispatcher): the MCP server keeps one, and an endpoint serving a
fleet keeps one per robot. Each look says whether the robot's dispatcher is discovered; a robot
that was there is declared gone only after it stayed unseen for ``gone_after_s`` (a graph that
flickers for a moment does not announce a departure), and one that comes back is there at once.
``observe`` returns the change to announce, once: ``ARRIVED``, ``LEFT`` or None.
"""

ARRIVED = 'arrived'
LEFT = 'left'


class Presence:
    """Tracks one robot's presence; says once when it arrives and when it leaves."""

    def __init__(self, gone_after_s: float = 1.0) -> None:
        self.gone_after_s = gone_after_s
        self.present = False        # seen now (as announced)
        self.ever_seen = False      # seen at least once since start
        self.changes = 0            # arrivals and departures announced so far
        self._unseen_since: float | None = None

    def observe(self, seen: bool, now: float) -> str | None:
        """Record one look at ``now`` (seconds, any monotonic clock); return the change, if any."""
        if seen:
            self._unseen_since = None
            if self.present:
                return None
            self.present = self.ever_seen = True
            self.changes += 1
            return ARRIVED
        if not self.present:
            return None
        if self._unseen_since is None:
            self._unseen_since = now
        if now - self._unseen_since < self.gone_after_s:
            return None
        self.present = False
        self._unseen_since = None
        self.changes += 1
        return LEFT
