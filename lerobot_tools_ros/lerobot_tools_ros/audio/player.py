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
The speaker's state machine: a queue of utterances fed to one sink, each one's status reported.

``UtterancePlayer`` feeds a sink from its own thread: ``submit`` never blocks, so the ROS
subscription callback that calls it never waits on a device or a disk.

- Order: utterances play one at a time, in the order their first audio (or their final chunk)
  arrived. A chunk without audio does not queue an utterance, so ids without audio cost
  nothing and never hold up one that has audio. Ids longer than ``MAX_UTTERANCE_ID``
  characters are ignored; more than ``max_pending`` utterances waiting are refused (reported
  ``dropped``); queued bytes (plus a per-chunk overhead) are bounded by ``max_queued_bytes``.
- Pace: a sink with a clock (a sound card) takes audio as fast as it plays it. A sink without
  one (WAV files, null) is handed audio in blocks of ``block_ms`` at the pace it would be
  heard when ``realtime`` is on (the default), so progress, a ``say`` waiting for it and cancel
  behave as on a robot; off, it takes the audio as fast as it arrives.
- Statuses (``on_status(Status)``, from the player thread): ``playing`` when an utterance
  starts, then one end: ``finished``; ``cancelled`` when a chunk with ``cancelled`` arrives
  (the output goes silent within one block, what is still queued is dropped, and the status
  says how much was played), or for every utterance at once on ``stop_all`` (an operator's
  stop); ``dropped`` when its chunks are malformed, the sink fails, the queue is full, or no
  chunk came for ``stall_timeout_s`` (the sender died). ``progress()``
  gives the current utterance's ``playing`` status with the frames handed to the sink so far.
  Chunks of an utterance that already ended are ignored.
"""

import collections
from dataclasses import dataclass, field
import logging
import threading
import time
from typing import Any, Callable, Optional

from lerobot_tools_ros.untrusted import log_text

from .base import (
    AudioSink, CANCELLED, Chunk, DROPPED, FINISHED, PCM_S16LE, PLAYING, SAMPLE_WIDTH, SinkError)

__all__ = ['MAX_UTTERANCE_ID', 'Status', 'UtterancePlayer']

SAMPLE_RATE_RANGE = (1000, 768000)
MAX_CHANNELS = 32
MAX_UTTERANCE_ID = 128
# What a queued chunk costs besides its audio, so a flood of tiny chunks is bounded too.
_CHUNK_OVERHEAD = 256
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Status:
    """One ``SpeakerStatus`` report; frames are the sink's output frames at ``sample_rate``."""

    utterance_id: str
    state: str
    detail: str = ''
    frames_played: int = 0
    frames_total: int = 0  # known once the final chunk has arrived, else 0
    sample_rate: int = 0
    stamp: float = 0.0  # time.time() when frames_played was reached


@dataclass
class _Pending:
    chunks: collections.deque = field(default_factory=collections.deque)
    queued_bytes: int = 0
    cancelled: bool = False  # stop playing it: cut off (reported cancelled) or dropped
    why: str = ''  # with cancelled: the status detail ('' = 'cancelled'), or the drop reason
    dropped: bool = False  # with cancelled: not the sender's or an operator's cancel
    complete: bool = False  # the final chunk has arrived
    frames: int = 0  # of audio received, at the utterance's own rate
    last_arrival: float = field(default_factory=time.monotonic)


@dataclass
class _Run:
    """The utterance the player thread is on."""

    uid: str
    pending: _Pending
    began: bool = False
    audio_format: Optional[tuple[int, int]] = None  # (sample_rate, channels)
    clock_start: Optional[float] = None
    clock_frames: int = 0
    ended: bool = False  # its end status is out: no more progress for it
    # The sink's own count when the speaker began shutting down while this played: what
    # was heard. The rest is written out unpaced (a file is not lost) but nobody hears it.
    cut_at: Optional[tuple[int, float]] = None


def _chunk_problem(chunk: Chunk, expected: Optional[tuple[int, int]]) -> str:
    if chunk.encoding != PCM_S16LE:
        return f'unsupported encoding {chunk.encoding!r} (only {PCM_S16LE})'
    if not SAMPLE_RATE_RANGE[0] <= chunk.sample_rate <= SAMPLE_RATE_RANGE[1]:
        return f'sample_rate {chunk.sample_rate} outside {SAMPLE_RATE_RANGE}'
    if not 1 <= chunk.channels <= MAX_CHANNELS:
        return f'channels {chunk.channels} outside 1..{MAX_CHANNELS}'
    if len(chunk.data) % (SAMPLE_WIDTH * chunk.channels):
        return (f'{len(chunk.data)} bytes is not a whole number of {chunk.channels}-channel '
                'int16 frames')
    if expected is not None and (chunk.sample_rate, chunk.channels) != expected:
        return (f'format changed within the utterance: {expected[0]} Hz x{expected[1]} -> '
                f'{chunk.sample_rate} Hz x{chunk.channels}')
    return ''


class UtterancePlayer:
    """Feed a sink from a queue, one utterance at a time; see the module docstring."""

    _REMEMBERED_IDS = 1024

    def __init__(self, sink: AudioSink, on_status: Callable[[Status], None], *,
                 stall_timeout_s: float = 10.0, max_queued_bytes: int = 64 << 20,
                 max_pending: int = 32, realtime: bool = True, block_ms: int = 20,
                 logger: Any = None) -> None:
        """Start the player thread."""
        self.sink = sink
        self._on_status = on_status
        self._stall_timeout_s = float(stall_timeout_s)
        self._max_queued_bytes = int(max_queued_bytes)
        self._max_pending = int(max_pending)
        self._paced = bool(realtime) and not sink.has_clock
        self.block_ms = int(block_ms)
        self._logger = logger or _log
        self._cond = threading.Condition()
        self._pending: dict[str, _Pending] = {}
        self._order: collections.deque = collections.deque()
        self._ended: collections.OrderedDict = collections.OrderedDict()
        self._run_state: Optional[_Run] = None
        self._queued_bytes = 0
        self._closing = False
        self._unheard = False  # shutting down: what a sink without a clock gets is not heard
        self.ignored_chunks = 0  # chunks with an over-long id (counted, not logged each)
        self.refused_utterances = 0  # more than max_pending waiting
        self._refusal_logged_at = -1.0
        self._thread = threading.Thread(target=self._run, name='speaker-sink', daemon=True)
        self._thread.start()

    # -------------------------------------------------------------- called from any thread
    def submit(self, chunk: Chunk) -> None:
        """Queue a chunk; returns at once."""
        uid = chunk.utterance_id
        refused = ''
        with self._cond:
            if self._closing or uid in self._ended:
                return
            if not uid or len(uid) > MAX_UTTERANCE_ID:
                self.ignored_chunks += 1
                return
            pending = self._pending.get(uid)
            if pending is None:
                if chunk.cancelled or not (chunk.data or chunk.final):
                    return  # a stop for an utterance we never had, or no audio yet
                if len(self._pending) >= self._max_pending:
                    self._forget(uid)
                    refused = f'more than {self._max_pending} utterances are waiting'
                else:
                    pending = self._pending[uid] = _Pending()
                    self._order.append(uid)
            if pending is not None:
                self._add(uid, pending, chunk)
                self._cond.notify_all()
        if refused:
            self.refused_utterances += 1
            now = time.monotonic()
            if now - self._refusal_logged_at >= 1.0:  # a flood of ids is one line a second
                self._refusal_logged_at = now
                self._logger.warning(f'speaker: refused utterance {log_text(uid)}: {refused} '
                                     f'({self.refused_utterances} refused so far)')
            self._status(Status(uid, DROPPED, refused, stamp=time.time()))

    def _add(self, uid: str, pending: _Pending, chunk: Chunk) -> None:
        pending.last_arrival = time.monotonic()
        cost = len(chunk.data) + _CHUNK_OVERHEAD
        if chunk.cancelled:
            pending.cancelled = True
            self._clear(pending)
            run = self._run_state
            if run is not None and run.uid == uid:
                self.sink.interrupt()
        elif self._queued_bytes + cost > self._max_queued_bytes:
            self._logger.warning(f'speaker: more than {self._max_queued_bytes} bytes '
                                 f'queued; dropping utterance {log_text(uid)}')
            pending.cancelled = pending.dropped = True
            pending.why = f'more than {self._max_queued_bytes} bytes of audio were queued'
            self._clear(pending)
        else:
            pending.chunks.append(chunk)
            if chunk.channels > 0:
                pending.frames += len(chunk.data) // (SAMPLE_WIDTH * chunk.channels)
            pending.queued_bytes += cost
            self._queued_bytes += cost
            pending.complete = pending.complete or chunk.final

    def _clear(self, pending: _Pending) -> None:
        self._queued_bytes -= pending.queued_bytes
        pending.chunks.clear()
        pending.queued_bytes = 0

    def _forget(self, uid: str) -> None:
        self._ended[uid] = True
        while len(self._ended) > self._REMEMBERED_IDS:
            self._ended.popitem(last=False)

    def stop_all(self, reason: str) -> list[str]:
        """
        Cut off the utterance playing (silent within one block) and drop every queued one.

        Each is reported ``cancelled`` with ``reason`` as its detail (what was played of the
        current one is kept, as for any cancel). Returns their ids; later utterances play.
        """
        with self._cond:
            stopped = [uid for uid in self._order if not self._pending[uid].cancelled]
            for uid in stopped:
                pending = self._pending[uid]
                pending.cancelled, pending.why = True, reason
                self._clear(pending)
            run = self._run_state
            if run is not None and run.uid in stopped:
                self.sink.interrupt()
            self._cond.notify_all()
        return stopped

    def busy(self) -> bool:
        """Whether an utterance is queued or playing (so its progress is still to come)."""
        with self._cond:
            return bool(self._order) or self._run_state is not None

    def progress(self) -> Optional[Status]:
        """Return the ``playing`` status of the utterance being played now, or None."""
        run = self._run_state
        if run is None or not run.began or run.ended:
            return None
        played, stamp = self.sink.progress()
        return Status(run.uid, PLAYING, self.sink.name, played, self._total(run),
                      self.sink.output_rate(), stamp)

    def _total(self, run: _Run) -> int:
        """Output frames of the whole utterance once its final chunk is in, else 0."""
        pending = run.pending
        return self.sink.output_frames(pending.frames) if pending.complete else 0

    def close(self, timeout: float = 5.0, drain_s: float = 2.0) -> None:
        """
        Stop the thread and close the sink.

        Utterances whose final chunk has arrived get up to ``drain_s`` to finish, written out
        without pacing (so a WAV of speech that was fully synthesized is not lost at shutdown);
        the rest are abandoned.
        """
        deadline = time.monotonic() + drain_s
        with self._cond:
            if self._paced:  # what is written from now on is not heard: say so when it ends
                self._unheard = True
                run = self._run_state
                if run is not None and run.began:
                    run.cut_at = self.sink.progress()
            self._paced = False  # nobody listens any more: finish the files now
            self._cond.notify_all()
            while (any(p.complete and not p.cancelled for p in self._pending.values())
                   and time.monotonic() < deadline):
                self._cond.wait(max(0.0, deadline - time.monotonic()))
            self._closing = True
            self._cond.notify_all()
        self.sink.interrupt()
        self._thread.join(timeout)
        try:
            self.sink.close()
        except Exception as exc:  # noqa: B902 - shutting down regardless
            self._logger.warning(f'speaker: closing the {self.sink.name} sink failed: {exc}')

    # -------------------------------------------------------------- the player thread
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closing and not self._order:
                    self._cond.wait()
                if self._closing:
                    return
                uid = self._order[0]
                run = self._run_state = _Run(uid, self._pending[uid])
            try:
                self._play(run)
            except Exception as exc:  # noqa: B902 - the player thread must survive anything
                self._logger.error(f'speaker: utterance {log_text(uid)} failed: {exc}')
            with self._cond:
                self._run_state = None
                self._order.popleft()
                gone = self._pending.pop(uid)
                self._queued_bytes -= gone.queued_bytes
                self._forget(uid)
                self._cond.notify_all()  # close() may be waiting for the queue to drain

    def _next(self, pending: _Pending) -> Optional[Chunk]:
        """Wait for the utterance's next chunk; None when it was cancelled or stalled."""
        with self._cond:
            while not pending.chunks and not pending.cancelled and not self._closing:
                left = pending.last_arrival + self._stall_timeout_s - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            if pending.cancelled or self._closing:
                return None
            chunk = pending.chunks.popleft()
            cost = len(chunk.data) + _CHUNK_OVERHEAD
            pending.queued_bytes -= cost
            self._queued_bytes -= cost
            return chunk

    def _wait_until(self, run: _Run, when: float) -> bool:
        """Wait for the monotonic time ``when``; False when cancelled or closing first."""
        with self._cond:
            while not run.pending.cancelled and not self._closing:
                if not self._paced:  # closing: complete utterances are written out at once
                    return True
                left = when - time.monotonic()
                if left <= 0:
                    return True
                self._cond.wait(left)
        return False

    def _due(self, run: _Run, rate: int) -> float:
        """When the next block is to be handed over: right after what was handed so far."""
        now = time.monotonic()
        if run.clock_start is None or now > run.clock_start + run.clock_frames / rate:
            run.clock_start = now - run.clock_frames / rate  # late audio: no catching up
        return run.clock_start + run.clock_frames / rate

    def _hand(self, run: _Run, data: bytes) -> bool:
        """Give ``data`` to the sink (paced when needed); False when stopped part way."""
        if run.audio_format is None:  # (set with began, before the first block)
            raise RuntimeError(f'{run.uid}: audio handed over before its format was known')
        rate, channels = run.audio_format
        frame_bytes = SAMPLE_WIDTH * channels
        if not self._paced:
            self.sink.write(data)
            return True
        step = max(1, rate * self.block_ms // 1000) * frame_bytes
        for start in range(0, len(data), step):
            if not self._wait_until(run, self._due(run, rate)):
                return False
            block = data[start:start + step]
            self.sink.write(block)
            run.clock_frames += len(block) // frame_bytes
        return True

    def _play(self, run: _Run) -> None:
        while True:
            chunk = self._next(run.pending)
            if chunk is None:
                self._stopped_early(run)
                return
            if chunk.data or chunk.encoding != PCM_S16LE:
                problem = _chunk_problem(chunk, run.audio_format)
                if problem:
                    self._drop(run, problem)
                    return
                try:
                    if not run.began:
                        self.sink.begin(run.uid, chunk.sample_rate, chunk.channels)
                        run.began = True
                        run.audio_format = (chunk.sample_rate, chunk.channels)
                        self._report(run, PLAYING, self.sink.name)
                    if not self._hand(run, chunk.data):
                        self._stopped_early(run)
                        return
                except SinkError as exc:
                    self._drop(run, str(exc))
                    return
            if chunk.final:
                self._finish(run)
                return

    def _finish(self, run: _Run) -> None:
        if not run.began:
            self._report(run, FINISHED, 'no audio in this utterance')
            return
        if self._paced:
            clock_start, audio_format = run.clock_start, run.audio_format
            if clock_start is None or audio_format is None:  # (began: a block was handed over)
                raise RuntimeError(f'{run.uid}: began without a format or a clock')
            if not self._wait_until(run, clock_start + run.clock_frames / audio_format[0]):
                self._stopped_early(run)
                return
        try:
            detail = self.sink.end()
        except SinkError as exc:
            if run.pending.cancelled:
                self._stopped_early(run)
            else:
                self._drop(run, str(exc))
            return
        if self._unheard:
            heard = run.cut_at or (0, time.time())
            rate = self.sink.output_rate()
            if heard[0] < self._total(run) and rate:
                self._report(run, DROPPED, (
                    f'speaker shutting down: {heard[0] / rate:.2f} s of '
                    f'{self._total(run) / rate:.2f} s had been played; the rest was written out '
                    f'unplayed ({detail})'), heard)
                return
        self._report(run, FINISHED, detail)

    def _stopped_early(self, run: _Run) -> None:
        if run.pending.dropped:
            self._drop(run, run.pending.why)
        elif run.pending.cancelled:
            detail = run.pending.why or 'cancelled'
            if run.began:
                try:
                    extra = self.sink.cut()
                except Exception as exc:  # noqa: B902 - report the cancel regardless
                    extra = f'stopping failed: {exc}'
                detail = f'{detail}; {extra}' if extra else detail
            self._report(run, CANCELLED, detail)
        elif self._closing:
            self._drop(run, 'speaker shutting down')
        else:
            self._drop(run, f'no audio for {self._stall_timeout_s:g} s (the sender stopped)')

    def _drop(self, run: _Run, reason: str) -> None:
        detail = reason
        if run.began:
            try:
                extra = self.sink.drop()
            except Exception as exc:  # noqa: B902 - report the drop regardless
                extra = f'dropping failed: {exc}'
            detail = f'{reason}; {extra}' if extra else reason
        self._logger.warning(f'speaker: dropped utterance {log_text(run.uid)}: {detail}')
        self._report(run, DROPPED, detail)

    def _report(self, run: _Run, state: str, detail: str,
                heard: Optional[tuple[int, float]] = None) -> None:
        """Report a state with the sink's count of frames played (`heard`: the count to use)."""
        run.ended = state != PLAYING
        if heard is not None:
            played, stamp = heard
            rate = self.sink.output_rate()
        elif run.began:
            played, stamp = self.sink.progress()
            rate = self.sink.output_rate()
        else:
            played, stamp, rate = 0, time.time(), 0
        self._status(Status(run.uid, state, detail, played, self._total(run), rate, stamp))

    def _status(self, status: Status) -> None:
        try:
            self._on_status(status)
        except Exception as exc:  # noqa: B902 - a failing publisher must not stop playback
            self._logger.warning(f'speaker: cannot report {status.state} for '
                                 f'{log_text(status.utterance_id)}: {exc}')
