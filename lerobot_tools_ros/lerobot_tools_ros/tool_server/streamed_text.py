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
The text of a tool's streamed calls, taken in segments beside their goals.

A tool with a streamable argument (say: text) also takes its calls' text in segments
(`TextChunk`, generation_id = the goal's call_id), for goals with `streamed` set. Segments that
arrive before their goal wait for it (the last `EARLY_CALLS` calls' worth); a segment out of
order ends its call's text failed. No rclpy here: a segment is anything with the fields of a
`TextChunk`.
"""

from collections import OrderedDict
import threading
from typing import Any, Protocol

from lerobot_tools_ros.tools.base import TextStream

__all__ = ['EARLY_CALLS', 'Segment', 'StreamedTexts']

EARLY_CALLS = 64  # streamed calls whose segments may wait for their goal


class Segment(Protocol):
    """One segment of a streamed call's text (the fields of a `TextChunk` that are read)."""

    generation_id: str
    index: int
    text: str
    final: bool


class StreamedTexts:
    """The texts of one tool's streamed calls that run, and segments that came first."""

    def __init__(self, argument: str, early_calls: int = EARLY_CALLS) -> None:
        self.argument = argument  # the tool's streamable argument
        self._early_calls = early_calls
        self._lock = threading.Lock()
        self._texts: dict[str, TextStream] = {}  # call_id -> the text of a streamed goal
        self._early: OrderedDict[str, list[Any]] = OrderedDict()  # call_id -> segments

    def arrived(self, call_id: str) -> TextStream:
        """Return the text of a streamed call that arrived, with the segments that came first."""
        text = TextStream(self.argument)
        with self._lock:
            self._texts[call_id] = text
            for segment in self._early.pop(call_id, ()):
                _take(text, segment)
        return text

    def ended(self, call_id: str, text: TextStream) -> None:
        """Forget the text of a call whose goal has its result (not a later goal's)."""
        with self._lock:
            if self._texts.get(call_id) is text:
                del self._texts[call_id]

    def take(self, segment: Segment) -> None:
        """Hand a segment to its call's text, or keep it until the call arrives."""
        with self._lock:
            text = self._texts.get(segment.generation_id)
            if text is not None:
                _take(text, segment)
                return
            self._early.setdefault(segment.generation_id, []).append(segment)
            self._early.move_to_end(segment.generation_id)
            while len(self._early) > self._early_calls:
                self._early.popitem(last=False)


def _take(text: TextStream, segment: Segment) -> None:
    """Add one segment to a streamed call's text; a segment out of order ends it failed."""
    expected = text.next_index
    if segment.index and segment.index != expected:
        text.fail(f'text segment {expected} of the streamed call never arrived (segment '
                  f'{segment.index} came next); the rest was not spoken')
        return
    text.next_index = expected + 1
    text.put(segment.text, segment.final)
