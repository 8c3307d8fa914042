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
Input lost before the dispatcher took it, found from DDS sequence numbers, without ROS.

The input subscriptions' queues are the dispatcher's only buffer: a publisher that outruns it
loses its oldest unread messages (reliable, keep-last), and Fast DDS raises no `message_lost`
event for that. Every DDS writer numbers its samples 1, 2, 3, ..., and rclpy (Iron and later)
hands a two-argument subscription callback the number and the writer's id (`MessageInfo`
`publication_sequence_number`, `publisher_gid`; Jazzy's rclpy has no `publisher_gid`). A jump in
one writer's numbers is exactly the count of its messages this subscription never took.

`InputLoss` counts those gaps per topic, words a rate-limited warning, and decides what happens
to streamed generations that may have lost chunks: every stream a publisher had open when a gap
appeared (and the one whose first taken chunk follows the gap, which may have lost its start) is
abandoned with one result, and its later chunks are discarded instead of being parsed into
garbled calls. A loss at the very end of a burst shows with that publisher's next message.
"""

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

# Without publisher ids (Jazzy), sequence numbers of several publishers interleave: a gap is
# then only counted while the topic has exactly one publisher.
ANONYMOUS = 'anonymous'
TRACKING_PER_PUBLISHER = 'per publisher'
TRACKING_ONE_PUBLISHER = 'exact with one publisher per topic (this rclpy gives no publisher_gid)'
TRACKING_OFF = 'off (this rclpy or RMW gives no sequence numbers)'


def message_origin(info: Any) -> tuple[Hashable | None, int | None]:
    """
    Return (publisher key, sequence number) from rclpy's MessageInfo, None where unknown.

    The publisher key is the writer's gid bytes, `ANONYMOUS` when the RMW numbers messages but
    rclpy does not say which writer sent them (Jazzy).
    """
    if not isinstance(info, dict):
        return None, None
    sequence = info.get('publication_sequence_number')
    if not isinstance(sequence, int) or sequence <= 0:
        return None, None
    gid = info.get('publisher_gid')
    data = gid.get('data') if isinstance(gid, dict) else None
    return (bytes(data) if data else ANONYMOUS), sequence


@dataclass(slots=True)
class Verdict:
    """What to do with one taken stream chunk."""

    take: bool = True  # parse it (False: its stream was abandoned; it is discarded)
    abandon: list = field(default_factory=list)  # open streams to end now, one result each
    headless: str = ''  # a stream first seen right after the gap: its start may be lost
    lost: int = 0  # messages of this publisher lost just before this one


@dataclass(slots=True)
class _Publisher:
    last: int = 0
    streams: OrderedDict = field(default_factory=OrderedDict)  # streams it fed, not yet final


class InputLoss:
    """Per-publisher sequence gaps on the input topics, and the streams they broke."""

    def __init__(self, *, max_publishers: int = 1024, max_streams: int = 1024,
                 warn_every_s: float = 10.0) -> None:
        self.taken: dict[str, int] = {}
        self.lost: dict[str, int] = {}
        self.unattributed = 0  # gaps seen while several anonymous publishers interleaved
        self.streams_abandoned = 0
        self.chunks_discarded = 0
        self.tracking = ''  # how exact the counts are (TRACKING_*); '' until a message came
        self._publishers: OrderedDict = OrderedDict()  # (topic, key) -> _Publisher, LRU
        self._dropped: OrderedDict = OrderedDict()  # abandoned generation id -> last chunk time
        self._max_publishers = max_publishers
        self._max_streams = max_streams
        self._warn_every_s = warn_every_s
        self._warned_at = float('-inf')
        self._unreported: dict[str, int] = {}

    @property
    def total_lost(self) -> int:
        return sum(self.lost.values())

    def message(self, topic: str, publisher: Hashable | None, sequence: int | None,
                publisher_count: Callable[[], int]) -> int:
        """
        Record one taken message; return how many of its publisher's messages were lost before it.

        `publisher_count` is asked only for a gap from an anonymous publisher: such a gap is
        only real while the topic has exactly one publisher.
        """
        self.taken[topic] = self.taken.get(topic, 0) + 1
        if sequence is None:
            self.tracking = self.tracking or TRACKING_OFF
            return 0
        anonymous = publisher == ANONYMOUS
        if not self.tracking or self.tracking == TRACKING_OFF:
            self.tracking = TRACKING_ONE_PUBLISHER if anonymous else TRACKING_PER_PUBLISHER
        state = self._publisher(topic, publisher)
        last, state.last = state.last, sequence
        if last == 0 or sequence <= last:
            return 0  # first message seen from it, or another writer under the same key
        lost = sequence - last - 1
        if lost and anonymous and publisher_count() != 1:
            self.unattributed += 1
            return 0
        if lost:
            self.lost[topic] = self.lost.get(topic, 0) + lost
            self._unreported[topic] = self._unreported.get(topic, 0) + lost
        return lost

    def chunk(self, topic: str, publisher: Hashable | None, sequence: int | None,
              publisher_count: Callable[[], int], generation_id: str, final: bool,
              now: float, idle_s: float) -> Verdict:
        """
        Record one taken stream chunk and decide whether to parse it and what to abandon.

        `generation_id` is the core's stream key; abandoned streams stay discarded until their
        final chunk, or until they have been quiet for `idle_s` (a lost final chunk).
        """
        verdict = Verdict(lost=self.message(topic, publisher, sequence, publisher_count))
        dropped = self._dropped
        while dropped and now - next(iter(dropped.values())) >= idle_s:
            dropped.popitem(last=False)
        state = self._publishers.get((topic, publisher)) if sequence is not None else None
        if verdict.lost and state is not None:
            if generation_id not in state.streams and generation_id not in dropped:
                verdict.headless = generation_id  # its first chunks may be among the lost
                self._drop(generation_id, now)
            for suspect in state.streams:
                if suspect not in dropped:
                    verdict.abandon.append(suspect)
                self._drop(suspect, now)
            state.streams.clear()
        if generation_id in dropped:
            self.chunks_discarded += 1
            if final:
                del dropped[generation_id]
            else:
                dropped[generation_id] = now
                dropped.move_to_end(generation_id)
            verdict.take = False
            return verdict
        if state is not None:
            if final:
                state.streams.pop(generation_id, None)
            else:
                state.streams[generation_id] = None
                state.streams.move_to_end(generation_id)
                if len(state.streams) > self._max_streams:
                    state.streams.popitem(last=False)
        return verdict

    @staticmethod
    def abandoned_message(verdict: Verdict, generation_id: str) -> str:
        """Return the error message of the one result an abandoned stream gets."""
        what = ('its first chunks may be among them' if generation_id == verdict.headless
                else 'it was open, so chunks of it may be among them')
        return (f'{verdict.lost} stream chunk(s) from its publisher were lost before the '
                f'dispatcher took them (the input queue overflowed); {what}. The stream was '
                'ended here and its remaining chunks are discarded: calls it had completed '
                'before the loss ran, anything after did not. Send it again, more slowly')

    def warning(self, now: float, describe: Callable[[str], str] = str) -> str | None:
        """Return one line about losses not reported yet, at most once per `warn_every_s`."""
        if not self._unreported or now - self._warned_at < self._warn_every_s:
            return None
        self._warned_at = now
        parts = [f'{count} on {describe(topic)}' for topic, count in self._unreported.items()]
        self._unreported.clear()
        return (f'input lost: {", ".join(parts)} message(s) never reached the dispatcher '
                f"({self.total_lost} in total; gaps in the publishers' sequence numbers): the "
                'input queue overflowed because messages arrived faster than they were '
                'processed; publish more slowly or split the load')

    def values(self) -> dict:
        """Counters for diagnostics."""
        return {'input_lost': self.total_lost, 'input_taken': sum(self.taken.values()),
                **{f'input_lost.{topic}': count for topic, count in sorted(self.lost.items())},
                'streams_abandoned': self.streams_abandoned,
                'chunks_discarded': self.chunks_discarded,
                'gaps_unattributed': self.unattributed,
                'loss_tracking': self.tracking or 'no input yet'}

    def _drop(self, generation_id: str, now: float) -> None:
        """Discard a stream's chunks from now on (until its final chunk or it goes quiet)."""
        dropped = self._dropped
        if generation_id not in dropped:
            self.streams_abandoned += 1
        dropped[generation_id] = now
        dropped.move_to_end(generation_id)
        while len(dropped) > self._max_streams:
            dropped.popitem(last=False)

    def _publisher(self, topic: str, publisher: Hashable) -> _Publisher:
        key = (topic, publisher)
        state = self._publishers.get(key)
        if state is None:
            state = self._publishers[key] = _Publisher()
            if len(self._publishers) > self._max_publishers:
                self._publishers.popitem(last=False)
        else:
            self._publishers.move_to_end(key)
        return state
