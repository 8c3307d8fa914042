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
Where the speaker node sends audio: a sound device, WAV files, or nowhere.

Pure Python (no rclpy), so the playback logic is usable and testable without a ROS graph.

- ``SounddeviceSink`` plays through PortAudio (python-sounddevice). The stream runs in callback
  mode from an in-memory buffer, so nothing in the speaker ever blocks on the device: a busy
  device is an error for that one utterance, a stuck one is given up after the utterance's
  duration plus a margin. Playback starts once ``jitter_ms`` of audio is buffered (or the
  utterance is complete), which rides over uneven chunk arrival; an underrun later plays
  silence rather than stopping. When the device rejects the utterance's native rate or channel
  count (``sd.check_output_settings``), the audio is converted: channels are duplicated or
  averaged, and the rate is changed by linear interpolation, which is plenty for speech and
  needs nothing beyond numpy.
- ``WavSink`` writes one 16-bit PCM file per utterance, ``<output_dir>/<utterance_id>.wav``, as
  chunks arrive, and closes it on the final chunk. A dropped (cancelled, failed) utterance's
  partial file is deleted: every file in the directory is a whole utterance.
- ``NullSink`` discards the audio; useful on machines without a device and in tests.

``UtterancePlayer`` feeds a sink from a queue on its own thread: ``submit`` never blocks, so the
ROS subscription callback that calls it never waits on a device or a disk.
"""

import collections
from dataclasses import dataclass, field
import hashlib
import logging
import math
import os
from pathlib import Path
import re
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

__all__ = [
    'AudioSink', 'Chunk', 'DROPPED', 'FINISHED', 'LinearResampler', 'NullSink', 'PCM_S16LE',
    'PLAYING', 'SINK_KINDS', 'SinkError', 'SinkUnavailable', 'SounddeviceSink', 'UtterancePlayer',
    'WavSink', 'choose_output_format', 'find_output_device', 'make_sink', 'map_channels',
    'wav_file_stem',
]

PCM_S16LE = 'pcm_s16le'
# Status values, identical to the constants of lerobot_tools_interfaces/msg/SpeakerStatus.
PLAYING = 'playing'
FINISHED = 'finished'
DROPPED = 'dropped'

SINK_KINDS = ('auto', 'sounddevice', 'wav', 'null')
SAMPLE_RATE_RANGE = (1000, 768000)
MAX_CHANNELS = 32
MAX_UTTERANCE_ID = 128
_SAMPLE_WIDTH = 2
_SAFE_STEM = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]{0,127}')
_log = logging.getLogger(__name__)


class SinkError(RuntimeError):
    """A sink could not take one utterance (device error, disk full); the next may work."""


class SinkUnavailable(SinkError):
    """A sink cannot work on this machine at all (no device, no library)."""


@dataclass(frozen=True)
class Chunk:
    """One piece of an utterance, as the ``AudioChunk`` message carries it."""

    utterance_id: str
    sample_rate: int
    channels: int
    data: bytes
    final: bool = False
    cancelled: bool = False
    encoding: str = PCM_S16LE


class AudioSink:
    """
    Plays or stores one utterance at a time; ``UtterancePlayer`` calls it from one thread.

    ``interrupt`` is the exception: it may come from any thread and must only set a flag that
    makes a waiting ``end`` return soon.
    """

    name = 'sink'

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        """Start an utterance of interleaved ``pcm_s16le`` audio in this format."""

    def write(self, data: bytes) -> None:
        """Add whole frames to the current utterance."""

    def end(self) -> str:
        """Finish the utterance once it is played or stored; return a detail for the status."""
        return ''

    def drop(self) -> str:
        """Abandon the current utterance (stop playing, delete the partial file)."""
        return ''

    def interrupt(self) -> None:
        """Make a running ``end`` return soon; the utterance will then be dropped."""

    def close(self) -> None:
        """Release the device or files."""


class NullSink(AudioSink):
    """Discard audio; statuses are still reported, so callers waiting on playback go on."""

    name = 'null'

    def end(self) -> str:
        return 'discarded (sink null)'

    def drop(self) -> str:
        return 'discarded (sink null)'


def wav_file_stem(utterance_id: str) -> str:
    """
    File name stem for an utterance: the id itself when it is a safe name, else a hash.

    Ids arrive on a topic anyone can publish to; a crafted one (``../x``) must not choose
    where the file goes.
    """
    if _SAFE_STEM.fullmatch(utterance_id) and '..' not in utterance_id:
        return utterance_id
    digest = hashlib.sha256(utterance_id.encode('utf-8', errors='replace')).hexdigest()[:32]
    return f'utterance-{digest}'


class WavSink(AudioSink):
    """Write ``<output_dir>/<utterance_id>.wav`` (16-bit PCM) per utterance."""

    name = 'wav'

    def __init__(self, output_dir: str | os.PathLike) -> None:
        """Create ``output_dir`` (``~`` expanded); raise SinkUnavailable if that fails."""
        try:
            import soundfile
        except (ImportError, OSError) as exc:
            raise SinkUnavailable(f'the wav sink needs soundfile ({exc}); '
                                  'pip install soundfile') from exc
        self._soundfile = soundfile
        self.output_dir = Path(os.path.expanduser(os.fspath(output_dir))).resolve()
        try:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkUnavailable(f'cannot create output_dir {self.output_dir}: {exc}') from exc
        if not os.access(self.output_dir, os.W_OK):
            raise SinkUnavailable(f'output_dir {self.output_dir} is not writable')
        self._file: Any = None
        self._path: Optional[Path] = None

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        self._discard()
        path = self.output_dir / f'{wav_file_stem(utterance_id)}.wav'
        try:
            self._file = self._soundfile.SoundFile(
                str(path), 'w', samplerate=sample_rate, channels=channels, subtype='PCM_16',
                format='WAV')
        except (OSError, RuntimeError) as exc:  # soundfile raises LibsndfileError(RuntimeError)
            raise SinkError(f'cannot create {path}: {exc}') from exc
        self._path = path

    def write(self, data: bytes) -> None:
        if self._file is None:
            raise SinkError('write before begin')
        try:
            self._file.buffer_write(data, dtype='int16')
        except (OSError, RuntimeError) as exc:
            raise SinkError(f'cannot write {self._path}: {exc}') from exc

    def end(self) -> str:
        if self._file is None:
            raise SinkError('end before begin')
        path = self._path
        file, self._file, self._path = self._file, None, None
        try:
            file.close()
        except (OSError, RuntimeError) as exc:
            _unlink(path)
            raise SinkError(f'cannot finish {path}: {exc}') from exc
        return str(path)

    def drop(self) -> str:
        path = self._path
        self._discard()
        return f'partial file {path} deleted' if path is not None else ''

    def _discard(self) -> None:
        file, path, self._file, self._path = self._file, self._path, None, None
        if file is not None:
            try:
                file.close()
            except (OSError, RuntimeError):
                pass
            _unlink(path)

    def close(self) -> None:
        self._discard()


def _unlink(path: Optional[Path]) -> None:
    if path is not None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            _log.warning('cannot delete %s: %s', path, exc)


# ----------------------------------------------------------------------------- sounddevice
def map_channels(frames: np.ndarray, channels: int) -> np.ndarray:
    """
    Convert ``(n, c)`` int16 frames to ``channels``: average to mono, else cycle sources.

    Mono to stereo duplicates; stereo to mono averages; anything else takes source channel
    ``i % c`` for output channel ``i``.
    """
    have = frames.shape[1]
    if have == channels:
        return frames
    if channels == 1:
        return frames.astype(np.int32).mean(axis=1, keepdims=True).round().astype(np.int16)
    return frames[:, [i % have for i in range(channels)]]


class LinearResampler:
    """
    Streaming linear-interpolation resampler for int16 frames.

    Chunk boundaries are seamless: the last input frame and the fractional read position carry
    over to the next call. No anti-alias filter: for speech at TTS rates (16-48 kHz) the
    aliasing of a downward conversion is far below what a robot's speaker reproduces.
    """

    def __init__(self, in_rate: int, out_rate: int) -> None:
        """Convert from ``in_rate`` to ``out_rate`` frames per second."""
        if in_rate <= 0 or out_rate <= 0:
            raise ValueError(f'rates must be positive, got {in_rate} -> {out_rate}')
        self.in_rate = in_rate
        self.out_rate = out_rate
        self._step = in_rate / out_rate
        self._position = 0.0
        self._last: Optional[np.ndarray] = None

    def process(self, frames: np.ndarray) -> np.ndarray:
        """Resample ``(n, c)`` int16 frames; returns the output frames they complete."""
        if self.in_rate == self.out_rate or not len(frames):
            return frames
        # Positions are measured from the first frame of `block`, which (after the first
        # call) is the previous call's last frame.
        block = frames if self._last is None else np.concatenate([self._last, frames])
        span = len(block) - 1
        self._last = block[-1:].copy()
        if self._position > span:
            self._position -= span
            return np.zeros((0, frames.shape[1]), dtype=np.int16)
        count = int(math.floor((span - self._position) / self._step)) + 1
        times = self._position + self._step * np.arange(count)
        index = np.floor(times).astype(np.int64)
        fraction = (times - index)[:, None]
        upper = np.minimum(index + 1, span)
        samples = block[index] * (1.0 - fraction) + block[upper] * fraction
        self._position += self._step * count - span
        return np.clip(np.rint(samples), -32768, 32767).astype(np.int16)


def choose_output_format(check: Callable[[int, int], None], rate: int, channels: int,
                         device_rate: int, device_channels: int) -> tuple[int, int]:
    """
    Pick the (rate, channels) to open the device with, preferring the audio's own.

    ``check(rate, channels)`` raises when the device rejects a setting (as
    ``sd.check_output_settings`` does). Tries the native format, then stereo or mono, then the
    device's default rate with the same channel choices. Raises SinkError if none works.
    """
    choices = []
    for candidate_rate in dict.fromkeys([rate, device_rate]):
        for candidate_channels in dict.fromkeys([channels, 2, 1, device_channels]):
            if 0 < candidate_channels <= max(device_channels, 1) and candidate_rate > 0:
                choices.append((candidate_rate, candidate_channels))
    reasons = []
    for choice in choices:
        try:
            check(*choice)
            return choice
        except Exception as exc:  # noqa: B902 - PortAudio reports rejection as any error
            reasons.append(f'{choice[0]} Hz x{choice[1]}: {exc}')
    raise SinkError('the output device accepts none of ' + '; '.join(reasons))


def find_output_device(sd: Any, device: str = '') -> dict:
    """
    Return sounddevice's info dict of the output device ``device`` names.

    ``device`` is '' (the default output), an index, or part of a device name, as sounddevice
    accepts it. Raises SinkUnavailable saying why there is no usable output device.
    """
    spec: Any = None
    if device:
        spec = int(device) if device.strip().isdigit() else device
    try:
        info = sd.query_devices(spec, kind='output') if spec is None else sd.query_devices(spec)
    except (ValueError, sd.PortAudioError) as exc:
        names = []
        try:
            names = [d['name'] for d in sd.query_devices() if d['max_output_channels'] > 0]
        except Exception:  # noqa: B902 - only for the message
            pass
        which = f'{device!r}' if device else 'default'
        raise SinkUnavailable(
            f'no {which} audio output device ({exc}); output devices here: '
            f'{", ".join(names) or "none"}') from exc
    if int(info.get('max_output_channels', 0)) < 1:
        raise SinkUnavailable(f'audio device {info.get("name")!r} has no output channels')
    return dict(info)


class _Playback:
    """State shared with the PortAudio callback thread: a byte buffer it drains."""

    def __init__(self, frame_bytes: int) -> None:
        self.lock = threading.Lock()
        self.buffer = bytearray()
        self.frame_bytes = frame_bytes
        self.draining = False
        self.underruns = 0
        self.finished = threading.Event()

    def fill(self, out: Any, stop: Callable[[], None]) -> None:
        """Copy buffered audio into ``out`` (padding with silence); stop once drained."""
        need = len(out)
        with self.lock:
            take = min(need, len(self.buffer))
            take -= take % self.frame_bytes
            out[:take] = self.buffer[:take]
            del self.buffer[:take]
            empty = not self.buffer
            draining = self.draining
        if take < need:
            out[take:need] = bytes(need - take)
            if not draining:
                self.underruns += 1
        if draining and empty:
            stop()


class SounddeviceSink(AudioSink):
    """Play through PortAudio, converting rate and channels only when the device needs it."""

    name = 'sounddevice'
    _END_MARGIN_S = 2.0

    def __init__(self, device: str = '', jitter_ms: int = 60) -> None:
        """Import sounddevice and find the device; raise SinkUnavailable if either fails."""
        try:
            import sounddevice
        except (ImportError, OSError) as exc:
            raise SinkUnavailable(f'sounddevice (PortAudio) cannot be loaded: {exc}; install '
                                  'libportaudio2 and pip install sounddevice') from exc
        if isinstance(jitter_ms, bool) or not isinstance(jitter_ms, int) or not (
                0 <= jitter_ms <= 2000):
            raise ValueError(f'jitter_ms must be an integer from 0 to 2000, got {jitter_ms!r}')
        self._sd = sounddevice
        self.device = device
        self.jitter_ms = jitter_ms
        self.device_info = find_output_device(sounddevice, device)
        self._interrupted = threading.Event()
        self._reset()

    def _reset(self) -> None:
        self._stream: Any = None
        self._playback: Optional[_Playback] = None
        self._resampler: Optional[LinearResampler] = None
        self._source_channels = 0
        self._out_channels = 0
        self._out_rate = 0
        self._written_frames = 0

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        self._abort()
        self._interrupted.clear()
        sd = self._sd
        info = find_output_device(sd, self.device)  # the device may have gone or changed
        index = info.get('index')

        def check(rate: int, count: int) -> None:
            sd.check_output_settings(device=index, samplerate=rate, channels=count,
                                     dtype='int16')

        rate, count = choose_output_format(
            check, sample_rate, channels, int(info.get('default_samplerate') or sample_rate),
            int(info['max_output_channels']))
        self._source_channels = channels
        self._out_channels = count
        self._out_rate = rate
        self._resampler = LinearResampler(sample_rate, rate) if rate != sample_rate else None
        playback = _Playback(frame_bytes=_SAMPLE_WIDTH * count)

        def callback(outdata: Any, frames: int, time_info: Any, status: Any) -> None:
            playback.fill(outdata, self._stop_callback)

        try:
            self._stream = sd.RawOutputStream(
                samplerate=rate, channels=count, dtype='int16', device=index,
                callback=callback, finished_callback=playback.finished.set,
                latency='low')
        except (sd.PortAudioError, ValueError) as exc:
            raise SinkError(f'cannot open {info.get("name")!r} at {rate} Hz x{count}: '
                            f'{exc}') from exc
        self._playback = playback
        self._device_name = str(info.get('name'))

    def _stop_callback(self) -> None:
        raise self._sd.CallbackStop

    def write(self, data: bytes) -> None:
        playback = self._playback
        if playback is None:
            raise SinkError('write before begin')
        frames = np.frombuffer(data, dtype='<i2').reshape(-1, self._source_channels)
        frames = map_channels(frames, self._out_channels)
        if self._resampler is not None:
            frames = self._resampler.process(frames)
        with playback.lock:
            playback.buffer += frames.astype('<i2', copy=False).tobytes()
            buffered_s = len(playback.buffer) / playback.frame_bytes / self._out_rate
        self._written_frames += len(frames)
        if not self._stream.active and buffered_s * 1e3 >= self.jitter_ms:
            self._start()

    def _start(self) -> None:
        try:
            self._stream.start()
        except self._sd.PortAudioError as exc:
            raise SinkError(f'cannot start playback on {self._device_name!r} (busy?): '
                            f'{exc}') from exc

    def end(self) -> str:
        playback = self._playback
        if playback is None:
            raise SinkError('end before begin')
        with playback.lock:
            playback.draining = True
        if not self._stream.active and not playback.finished.is_set():
            self._start()
        # The callback stops the stream once the buffer is empty; a stuck device gets the
        # utterance's own duration plus a margin, never forever.
        deadline = time.monotonic() + self._written_frames / self._out_rate + self._END_MARGIN_S
        while not playback.finished.wait(0.02):
            if self._interrupted.is_set():
                raise SinkError('interrupted')
            if time.monotonic() > deadline:
                raise SinkError(f'{self._device_name!r} stopped consuming audio')
        detail = f'played on {self._device_name!r} at {self._out_rate} Hz x{self._out_channels}'
        if playback.underruns:
            detail += f' ({playback.underruns} underruns)'
        self._close_stream()
        return detail

    def drop(self) -> str:
        self._abort()
        return 'playback stopped'

    def interrupt(self) -> None:
        self._interrupted.set()

    def _abort(self) -> None:
        if self._stream is not None:
            try:
                self._stream.abort()
            except self._sd.PortAudioError:
                pass
        self._close_stream()

    def _close_stream(self) -> None:
        stream = self._stream
        self._reset()
        if stream is not None:
            try:
                stream.close()
            except self._sd.PortAudioError as exc:
                _log.warning('closing the audio stream failed: %s', exc)

    def close(self) -> None:
        self._abort()


def make_sink(kind: str, *, output_dir: str = '~/.lerobot_tools/audio', device: str = '',
              jitter_ms: int = 60, warn: Optional[Callable[[str], None]] = None) -> AudioSink:
    """
    Build the sink ``kind`` names; ``auto`` falls back to ``wav`` with one warning.

    ``auto`` plays on a sound device when one exists, else writes WAV files, calling ``warn``
    once with the reason. An explicit ``sounddevice`` without a device raises SinkUnavailable.
    """
    if kind not in SINK_KINDS:
        raise ValueError(f'unknown sink {kind!r}; choose one of {", ".join(SINK_KINDS)}')
    if kind == 'null':
        return NullSink()
    if kind == 'wav':
        return WavSink(output_dir)
    if kind == 'sounddevice':
        return SounddeviceSink(device, jitter_ms)
    try:
        return SounddeviceSink(device, jitter_ms)
    except SinkUnavailable as exc:
        sink = WavSink(output_dir)
        (warn or _log.warning)(f'sink auto: writing WAV files to {sink.output_dir} because '
                               f'there is no sound output: {exc}')
        return sink


# ----------------------------------------------------------------------------- the player
@dataclass
class _Pending:
    chunks: collections.deque = field(default_factory=collections.deque)
    queued_bytes: int = 0
    cancelled: bool = False
    complete: bool = False  # the final chunk has arrived
    last_arrival: float = field(default_factory=time.monotonic)


def _chunk_problem(chunk: Chunk, expected: Optional[tuple[int, int]]) -> str:
    if chunk.encoding != PCM_S16LE:
        return f'unsupported encoding {chunk.encoding!r} (only {PCM_S16LE})'
    if not SAMPLE_RATE_RANGE[0] <= chunk.sample_rate <= SAMPLE_RATE_RANGE[1]:
        return f'sample_rate {chunk.sample_rate} outside {SAMPLE_RATE_RANGE}'
    if not 1 <= chunk.channels <= MAX_CHANNELS:
        return f'channels {chunk.channels} outside 1..{MAX_CHANNELS}'
    if len(chunk.data) % (_SAMPLE_WIDTH * chunk.channels):
        return (f'{len(chunk.data)} bytes is not a whole number of {chunk.channels}-channel '
                'int16 frames')
    if expected is not None and (chunk.sample_rate, chunk.channels) != expected:
        return (f'format changed within the utterance: {expected[0]} Hz x{expected[1]} -> '
                f'{chunk.sample_rate} Hz x{chunk.channels}')
    return ''


class UtterancePlayer:
    """
    Feed a sink from a queue, one utterance at a time, reporting each one's status.

    Utterances play in the order their first chunk arrived. ``on_status(utterance_id, state,
    detail)`` gets ``playing`` when an utterance starts and ``finished`` or ``dropped`` at its
    end; it is called from the player's thread. An utterance is dropped when a chunk with
    ``cancelled`` arrives (also after its final chunk, while it still plays), when its chunks
    are malformed, when the sink fails, or when no chunk arrived for ``stall_timeout_s`` (the
    sender died). Chunks of an utterance that already ended are ignored.
    """

    _REMEMBERED_IDS = 1024

    def __init__(self, sink: AudioSink, on_status: Callable[[str, str, str], None], *,
                 stall_timeout_s: float = 10.0, max_queued_bytes: int = 64 << 20,
                 logger: Any = None) -> None:
        """Start the player thread."""
        self.sink = sink
        self._on_status = on_status
        self._stall_timeout_s = float(stall_timeout_s)
        self._max_queued_bytes = int(max_queued_bytes)
        self._logger = logger or _log
        self._cond = threading.Condition()
        self._pending: dict[str, _Pending] = {}
        self._order: collections.deque = collections.deque()
        self._ended: collections.OrderedDict = collections.OrderedDict()
        self._current: Optional[str] = None
        self._queued_bytes = 0
        self._closing = False
        self._thread = threading.Thread(target=self._run, name='speaker-sink', daemon=True)
        self._thread.start()

    # -------------------------------------------------------------- called from any thread
    def submit(self, chunk: Chunk) -> None:
        """Queue a chunk; returns at once."""
        uid = chunk.utterance_id
        with self._cond:
            if self._closing or uid in self._ended:
                return
            pending = self._pending.get(uid)
            if pending is None:
                if chunk.cancelled:
                    return  # a stop for an utterance that never reached us
                pending = self._pending[uid] = _Pending()
                self._order.append(uid)
            pending.last_arrival = time.monotonic()
            if chunk.cancelled:
                pending.cancelled = True
                self._queued_bytes -= pending.queued_bytes
                pending.chunks.clear()
                pending.queued_bytes = 0
                if self._current == uid:
                    self.sink.interrupt()
            elif self._queued_bytes + len(chunk.data) > self._max_queued_bytes:
                self._logger.warning(f'speaker: more than {self._max_queued_bytes} bytes '
                                     f'queued; dropping utterance {uid}')
                pending.cancelled = True
                pending.chunks.clear()
                self._queued_bytes -= pending.queued_bytes
                pending.queued_bytes = 0
            else:
                pending.chunks.append(chunk)
                pending.queued_bytes += len(chunk.data)
                self._queued_bytes += len(chunk.data)
                pending.complete = pending.complete or chunk.final
            self._cond.notify_all()

    def close(self, timeout: float = 5.0, drain_s: float = 2.0) -> None:
        """
        Stop the thread and close the sink.

        Utterances whose final chunk has arrived get up to ``drain_s`` to finish (so a WAV of
        speech that was fully synthesized is not lost at shutdown); the rest are abandoned.
        """
        deadline = time.monotonic() + drain_s
        with self._cond:
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
                pending = self._pending[uid]
                self._current = uid
            try:
                self._play(uid, pending)
            except Exception as exc:  # noqa: B902 - the player thread must survive anything
                self._logger.error(f'speaker: utterance {uid} failed: {exc}')
            with self._cond:
                self._current = None
                self._order.popleft()
                gone = self._pending.pop(uid)
                self._queued_bytes -= gone.queued_bytes
                self._ended[uid] = True
                while len(self._ended) > self._REMEMBERED_IDS:
                    self._ended.popitem(last=False)
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
            pending.queued_bytes -= len(chunk.data)
            self._queued_bytes -= len(chunk.data)
            return chunk

    def _play(self, uid: str, pending: _Pending) -> None:
        expected: Optional[tuple[int, int]] = None
        began = False
        while True:
            chunk = self._next(pending)
            if chunk is None:
                if pending.cancelled:
                    reason = 'cancelled'
                elif self._closing:
                    reason = 'speaker shutting down'
                else:
                    reason = f'no audio for {self._stall_timeout_s:g} s (the sender stopped)'
                self._drop(uid, began, reason)
                return
            if chunk.data or chunk.encoding != PCM_S16LE:
                problem = _chunk_problem(chunk, expected)
                if problem:
                    self._drop(uid, began, problem)
                    return
                try:
                    if not began:
                        self.sink.begin(uid, chunk.sample_rate, chunk.channels)
                        began = True
                        expected = (chunk.sample_rate, chunk.channels)
                        self._status(uid, PLAYING, self.sink.name)
                    self.sink.write(chunk.data)
                except SinkError as exc:
                    self._drop(uid, began, str(exc))
                    return
            if chunk.final:
                if not began:
                    self._status(uid, FINISHED, 'no audio in this utterance')
                    return
                try:
                    detail = self.sink.end()
                except SinkError as exc:
                    reason = 'cancelled' if pending.cancelled else str(exc)
                    self._drop(uid, began, reason)
                    return
                self._status(uid, FINISHED, detail)
                return

    def _drop(self, uid: str, began: bool, reason: str) -> None:
        detail = reason
        if began:
            try:
                extra = self.sink.drop()
            except Exception as exc:  # noqa: B902 - report the drop regardless
                extra = f'dropping failed: {exc}'
            detail = f'{reason}; {extra}' if extra else reason
        if reason != 'cancelled':
            self._logger.warning(f'speaker: dropped utterance {uid}: {detail}')
        self._status(uid, DROPPED, detail)

    def _status(self, uid: str, state: str, detail: str) -> None:
        try:
            self._on_status(uid, state, detail)
        except Exception as exc:  # noqa: B902 - a failing publisher must not stop playback
            self._logger.warning(f'speaker: cannot report {state} for {uid}: {exc}')
