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
The ``sounddevice`` sink: play through PortAudio at the device's own rate and channel count.

- Device choice: ``device`` is '' (the default output), an index, or part of a device name
  (case-insensitive; an exact name wins). When it matches nothing, or more than one device, the
  error lists the output devices there are.
- Format: the stream is opened at the device's default sample rate with two channels (one on a
  mono device), the way a USB speaker wants it, and the audio is converted on the way: mono is
  duplicated, stereo averaged to mono, and the rate changed by soxr (libsoxr's streaming
  resampler, seamless across chunks). A device that rejects that format gets the next of a few
  candidates (``choose_output_format``).
- Timing: the stream runs in callback mode from an in-memory buffer, so the speaker never blocks
  on the device. Playback starts once the device's buffer plus ``jitter_ms`` of audio is there
  (or the utterance is complete). A device that asks for audio further ahead of the wall clock
  than a card's buffer could hold has no clock (ALSA's ``file`` plugin): the callback paces it
  to the wall clock, so it plays, reports progress and is cut by a cancel as a card would, and
  when the buffer runs dry it waits for audio rather than writing silence. A real card that
  runs dry gets silence.
- Faults: PortAudio is loaded, and the device looked up, afresh for an utterance whenever the
  device was missing before, so a speaker plugged in (or an ALSA configuration fixed) after the
  node started is used by the next utterance. A device that stops taking audio mid-utterance
  (unplugged, its output failing) ends that utterance with an error; the next one tries again.
"""

import importlib
import logging
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from .base import AudioSink, SAMPLE_WIDTH, SinkError, SinkUnavailable

__all__ = ['SounddeviceSink', 'StreamResampler', 'choose_output_format', 'find_output_device',
           'load_sounddevice', 'map_channels', 'output_devices']

_log = logging.getLogger(__name__)
_RESAMPLE_QUALITY = 'HQ'


def load_sounddevice(rescan: bool = False) -> Any:
    """
    Import sounddevice (PortAudio); with ``rescan``, re-initialize it to see current devices.

    PortAudio lists devices once, when it is initialized; a device plugged in later, or an ALSA
    configuration repaired, only shows after a re-initialization. Raises SinkUnavailable.
    """
    try:
        sd = importlib.import_module('sounddevice')
    except (ImportError, OSError) as exc:
        raise SinkUnavailable(f'sounddevice (PortAudio) cannot be loaded: {exc}; install '
                              'libportaudio2 and pip install sounddevice') from exc
    except Exception as exc:  # noqa: B902 - PortAudioError: PortAudio failed to initialize
        raise SinkUnavailable(f'PortAudio cannot initialize the audio system: {exc}') from exc
    if rescan:
        try:
            sd._terminate()
            sd._initialize()
        except Exception as exc:  # noqa: B902 - PortAudioError, e.g. a broken ALSA config
            raise SinkUnavailable(f'PortAudio cannot initialize the audio system: '
                                  f'{exc}') from exc
    return sd


def output_devices(sd: Any) -> list[dict]:
    """Every device with output channels, as sounddevice describes it (with its index)."""
    return [dict(info) for info in sd.query_devices() if info['max_output_channels'] > 0]


def _describe(devices: list[dict]) -> str:
    return ', '.join(f'{d["index"]}: {d["name"]!r}' for d in devices) or 'none'


def find_output_device(sd: Any, device: str = '') -> dict:
    """
    Return sounddevice's info dict of the output device ``device`` names.

    ``device`` is '' (the default output), an index, or part of a device name. Raises
    SinkUnavailable saying why, with the output devices there are.
    """
    try:
        devices = output_devices(sd)
    except Exception as exc:  # noqa: B902 - PortAudioError
        raise SinkUnavailable(f'cannot list audio devices: {exc}') from exc
    spec = device.strip()
    if not spec:
        try:
            info = dict(sd.query_devices(None, kind='output'))
        except Exception as exc:  # noqa: B902 - PortAudioError or ValueError: no default
            raise SinkUnavailable(f'no default audio output device ({exc}); output devices '
                                  f'here: {_describe(devices)}') from exc
        matches = [d for d in devices if d['index'] == info.get('index')] or [info]
    elif spec.isdigit():
        matches = [d for d in devices if d['index'] == int(spec)]
    else:
        matches = ([d for d in devices if d['name'] == spec]
                   or [d for d in devices if spec.lower() in d['name'].lower()])
    if len(matches) != 1:
        which = 'default' if not spec else repr(spec)
        problem = 'matches several' if matches else 'is not one of the'
        raise SinkUnavailable(f'audio output device {which} {problem} output devices here: '
                              f'{_describe(matches or devices)}')
    if int(matches[0].get('max_output_channels', 0)) < 1:
        raise SinkUnavailable(f'audio device {matches[0].get("name")!r} has no output channels')
    return matches[0]


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


class StreamResampler:
    """Streaming int16 resampling with soxr (libsoxr), seamless across chunk boundaries."""

    def __init__(self, in_rate: int, out_rate: int, channels: int) -> None:
        """Convert ``channels``-channel audio from ``in_rate`` to ``out_rate``."""
        if in_rate <= 0 or out_rate <= 0:
            raise ValueError(f'rates must be positive, got {in_rate} -> {out_rate}')
        import soxr  # imported here: only a device at another rate needs it

        self.in_rate, self.out_rate = in_rate, out_rate
        self._stream = soxr.ResampleStream(in_rate, out_rate, channels, dtype='int16',
                                           quality=_RESAMPLE_QUALITY)
        self._channels = channels

    def process(self, frames: np.ndarray, last: bool = False) -> np.ndarray:
        """Resample ``(n, channels)`` frames; ``last`` flushes what the filter still holds."""
        frames = np.ascontiguousarray(frames, dtype=np.int16)
        return self._stream.resample_chunk(frames, last=last)

    def flush(self) -> np.ndarray:
        """Return what the filter still holds, at the end of the audio."""
        return self.process(np.zeros((0, self._channels), dtype=np.int16), last=True)


def choose_output_format(check: Callable[[int, int], None], rate: int, channels: int,
                         device_rate: int, device_channels: int) -> tuple[int, int]:
    """
    Pick the (rate, channels) to open the device with, following the device.

    Prefers the device's default rate with stereo (mono on a one-channel device), then other
    channel counts, then the audio's own rate. ``check(rate, channels)`` raises when the
    device rejects a setting (as ``sd.check_output_settings`` does). Raises SinkError if none
    works.
    """
    most = max(device_channels, 1)
    counts = [count for count in dict.fromkeys([min(2, most), 1, channels, most])
              if 0 < count <= most]
    choices = [(candidate, count) for candidate in dict.fromkeys([device_rate, rate])
               if candidate > 0 for count in counts]
    reasons = []
    for choice in choices:
        try:
            check(*choice)
            return choice
        except Exception as exc:  # noqa: B902 - PortAudio reports rejection as any error
            reasons.append(f'{choice[0]} Hz x{choice[1]}: {exc}')
    raise SinkError('the output device accepts none of ' + '; '.join(reasons))


class _Playback:
    """State shared with the PortAudio callback thread: a byte buffer it drains."""

    def __init__(self, frame_bytes: int, rate: int) -> None:
        self.cond = threading.Condition()
        self.buffer = bytearray()
        self.frame_bytes = frame_bytes
        self.rate = rate
        self.slack_s = 0.0
        self.draining = False
        self.silenced = False
        self.underruns = 0
        self.played = 0  # frames of audio (not padding) handed to the device
        self.played_at = time.time()  # when `played` last grew
        self.output = 0  # all frames handed to the device, padding included
        self.started_at: Optional[float] = None
        self.finished = threading.Event()

    def add(self, data: bytes) -> float:
        """Append audio; returns the seconds buffered."""
        with self.cond:
            self.buffer += data
            self.cond.notify_all()
            return len(self.buffer) / self.frame_bytes / self.rate

    def mark(self, **flags: bool) -> None:
        with self.cond:
            for key, value in flags.items():
                setattr(self, key, value)
            self.cond.notify_all()

    def _ahead_s(self) -> float:
        """Return how far the audio handed to the device is ahead of the wall clock."""
        if self.started_at is None:
            self.started_at = time.monotonic()
        return self.output / self.rate - (time.monotonic() - self.started_at)

    def fill(self, out: Any, stop: Callable[[], None]) -> None:
        """Copy buffered audio into ``out`` (padding with silence); stop once drained."""
        need = len(out)
        with self.cond:
            # Only a device without a clock gets this far ahead: pace it to the wall clock, so
            # it plays (and a cancel cuts) as a card would, and never fill its gaps with silence.
            while not self.silenced:
                wait = self._ahead_s() - self.slack_s
                if wait <= 0:
                    break
                self.cond.wait(min(wait, 0.05))
            take = 0 if self.silenced else min(need, len(self.buffer))
            take -= take % self.frame_bytes
            out[:take] = self.buffer[:take]
            del self.buffer[:take]
            if take:
                self.played += take // self.frame_bytes
                self.played_at = time.time()
            self.output += need // self.frame_bytes
            done = self.silenced or (self.draining and not self.buffer)
            if take < need and not done:
                self.underruns += 1
        if take < need:
            out[take:need] = bytes(need - take)
        if done:
            stop()


class SounddeviceSink(AudioSink):
    """Play through PortAudio at the device's rate and channel count; see the module doc."""

    name = 'sounddevice'
    has_clock = True
    unavailable_reason = ''  # why the device was missing at start (with ``defer``)
    _END_MARGIN_S = 2.0

    def __init__(self, device: str = '', jitter_ms: int = 60, block_ms: int = 20, *,
                 defer: bool = False) -> None:
        """
        Load PortAudio and find the device; raise SinkUnavailable if either fails.

        With ``defer``, a missing device is not an error here: each utterance looks for it
        again (and is dropped with the reason until it is there).
        """
        for label, value, low, high in (('jitter_ms', jitter_ms, 0, 2000),
                                        ('block_ms', block_ms, 1, 200)):
            if isinstance(value, bool) or not isinstance(value, int) or not (
                    low <= value <= high):
                raise ValueError(f'{label} must be an integer from {low} to {high}, got '
                                 f'{value!r}')
        self.device = device
        self.jitter_ms = jitter_ms
        self.block_ms = block_ms
        self.device_info: dict = {}
        self._sd: Any = None
        self._rescan = False
        self._reset()
        try:
            self._find_device()
        except SinkUnavailable as exc:
            if not defer:
                raise
            self.unavailable_reason = str(exc)

    def _reset(self) -> None:
        self._stream: Any = None
        self._playback: Optional[_Playback] = None
        self._resampler: Optional[StreamResampler] = None
        self._source_channels = 0
        self._source_rate = 0
        self._out_channels = 0
        self._out_rate = 0
        self._written_frames = 0
        self._device_name = ''

    def _find_device(self) -> dict:
        """Find the device; after a miss, re-initialize PortAudio to look again."""
        try:
            if self._sd is None or self._rescan:
                self._sd = load_sounddevice(rescan=self._sd is not None)
            info = find_output_device(self._sd, self.device)
        except SinkUnavailable:
            self._rescan = True
            raise
        self._rescan = False
        self.device_info = info
        return info

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        self._abort()
        self._reset()
        info = self._find_device()
        sd = self._sd
        index = info.get('index')

        def check(rate: int, count: int) -> None:
            sd.check_output_settings(device=index, samplerate=rate, channels=count,
                                     dtype='int16')

        rate, count = choose_output_format(
            check, sample_rate, channels, int(info.get('default_samplerate') or sample_rate),
            int(info['max_output_channels']))
        self._source_channels, self._source_rate = channels, sample_rate
        self._out_channels, self._out_rate = count, rate
        if rate != sample_rate:
            self._resampler = StreamResampler(sample_rate, rate, channels)
        playback = _Playback(SAMPLE_WIDTH * count, rate)

        def callback(outdata: Any, frames: int, time_info: Any, status: Any) -> None:
            playback.fill(outdata, self._stop_callback)

        try:
            self._stream = sd.RawOutputStream(
                samplerate=rate, channels=count, dtype='int16', device=index,
                callback=callback, finished_callback=playback.finished.set,
                blocksize=max(1, rate * self.block_ms // 1000), latency='low',
                prime_output_buffers_using_stream_callback=True)
        except Exception as exc:  # noqa: B902 - PortAudioError, ValueError
            self._rescan = True
            raise SinkError(f'cannot open {info.get("name")!r} at {rate} Hz x{count}: '
                            f'{exc}') from exc
        # A card is never further ahead of the wall clock than its buffer and one block: a
        # device that asks for more (no clock) is waited for rather than fed silence.
        playback.slack_s = float(self._stream.latency) + self.block_ms / 1e3
        self._playback = playback
        self._device_name = str(info.get('name'))

    def _stop_callback(self) -> None:  # runs in PortAudio's thread
        raise self._sd.CallbackStop

    def _check_alive(self, playback: _Playback) -> None:
        """Raise when the stream ended on its own before the utterance did (device error)."""
        if playback.finished.is_set() and not playback.silenced and (
                playback.buffer or not playback.draining):
            self._rescan = True
            raise SinkError(f'{self._device_name!r} stopped taking audio after '
                            f'{playback.played} frames (device failed or disappeared)')

    def write(self, data: bytes) -> None:
        playback = self._playback
        if playback is None or self._stream is None:
            raise SinkError('write before begin')
        self._check_alive(playback)
        frames = np.frombuffer(data, dtype='<i2').reshape(-1, self._source_channels)
        if self._resampler is not None:  # before the channel mapping: fewer channels
            frames = self._resampler.process(frames)
        frames = map_channels(frames, self._out_channels)
        self._written_frames += len(frames)
        buffered_s = playback.add(frames.astype('<i2', copy=False).tobytes())
        # The device's buffer is filled at the start; jitter_ms is the cushion beyond it.
        if not self._stream.active and not playback.finished.is_set() and (
                buffered_s >= self.jitter_ms / 1e3 + playback.slack_s):
            self._start()

    def _start(self) -> None:
        try:
            self._stream.start()
        except Exception as exc:  # noqa: B902 - PortAudioError
            self._rescan = True
            raise SinkError(f'cannot start playback on {self._device_name!r} (busy?): '
                            f'{exc}') from exc

    def progress(self) -> tuple[int, float]:
        playback = self._playback
        return (playback.played, playback.played_at) if playback is not None else (0, 0.0)

    def output_rate(self) -> int:
        return self._out_rate

    def output_frames(self, source_frames: int) -> int:
        if not self._source_rate:
            return source_frames
        return round(source_frames * self._out_rate / self._source_rate)

    def end(self) -> str:
        playback = self._playback
        if playback is None or self._stream is None:
            raise SinkError('end before begin')
        if self._resampler is not None:
            tail = map_channels(self._resampler.flush(), self._out_channels)
            self._written_frames += len(tail)
            playback.add(tail.astype('<i2', copy=False).tobytes())
        self._check_alive(playback)
        playback.mark(draining=True)
        if not self._stream.active and not playback.finished.is_set():
            self._start()
        # The callback stops the stream once the buffer is empty; a stuck device gets the
        # utterance's own duration plus a margin, never forever.
        deadline = time.monotonic() + self._written_frames / self._out_rate + self._END_MARGIN_S
        while not playback.finished.wait(0.02):
            if playback.silenced:
                raise SinkError('interrupted')
            if time.monotonic() > deadline:
                self._rescan = True
                raise SinkError(f'{self._device_name!r} stopped consuming audio')
        if playback.silenced:  # cut short while draining: not a finished utterance
            raise SinkError('interrupted')
        self._check_alive(playback)
        detail = f'played on {self._device_name!r} at {self._out_rate} Hz x{self._out_channels}'
        if playback.underruns:
            detail += f' ({playback.underruns} underruns)'
        self._close_stream()
        return detail

    def cut(self) -> str:
        played = self.progress()[0]
        self._abort()
        return f'playback stopped after {played} frames'

    def drop(self) -> str:
        self._abort()
        return 'playback stopped'

    def interrupt(self) -> None:
        playback = self._playback
        if playback is not None and self._stream is not None:
            playback.mark(silenced=True)

    def _abort(self) -> None:
        if self._stream is not None:
            try:
                self._stream.abort()
            except Exception:  # noqa: B902 - PortAudioError: the device is gone already
                pass
        self._close_stream()

    def _close_stream(self) -> None:
        stream = self._stream
        self._stream = None
        self._resampler = None  # the playback stays readable: frames_played after the end
        if stream is not None:
            try:
                stream.close()
            except Exception as exc:  # noqa: B902 - PortAudioError
                _log.warning('closing the audio stream failed: %s', exc)

    def close(self) -> None:
        self._abort()
