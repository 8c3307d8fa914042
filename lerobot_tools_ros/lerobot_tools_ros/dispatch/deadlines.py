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
When the dispatch core next needs a tick: call deadlines and stream idle checks, in one heap.

An entry is never removed when it stops mattering (a call finished, a deadline moved): the core
says which entries are still live when it asks for the next one, and ignores stale ones it pops.
"""

import heapq
import itertools
import math
from typing import Callable, Iterator

CALL, STREAM = 'call', 'stream'


class Deadlines:
    """A heap of (due, order, kind, key): `kind` CALL (a call id) or STREAM (a generation)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str, str]] = []
        self._order = itertools.count()  # equal times pop in the order they were pushed

    def push(self, due: float, kind: str, key: str) -> None:
        """Ask for a tick at `due` for `key`."""
        heapq.heappush(self._heap, (due, next(self._order), kind, key))

    def next_due(self, live: Callable[[float, str, str], bool]) -> float:
        """Return the earliest due time whose entry is `live` (math.inf: none), dropping others."""
        heap = self._heap
        while heap and not live(heap[0][0], heap[0][2], heap[0][3]):
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def pop_due(self, now: float) -> Iterator[tuple[float, str, str]]:
        """Take every entry due at `now`, earliest first: (due, kind, key)."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            due, _, kind, key = heapq.heappop(heap)
            yield due, kind, key
