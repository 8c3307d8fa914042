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
What every audio sink shares: the chunk, the sink contract, the status values, the errors.

Pure Python (no rclpy, no numpy), so the speaker's logic is usable and testable without ROS.
"""

from dataclasses import dataclass
import time

__all__ = [
    'AudioSink', 'CANCELLED', 'Chunk', 'DROPPED', 'END_STATES', 'FINISHED', 'NullSink',
    'PCM_S16LE', 'PLAYING', 'SAMPLE_WIDTH', 'SinkError', 'SinkUnavailable',
]

PCM_S16LE = 'pcm_s16le'
SAMPLE_WIDTH = 2  # bytes per pcm_s16le sample
# Status values, identical to the constants of lerobot_tools_interfaces/msg/SpeakerStatus.
PLAYING = 'playing'
FINISHED = 'finished'
DROPPED = 'dropped'
CANCELLED = 'cancelled'
END_STATES = (FINISHED, DROPPED, CANCELLED)


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

    ``interrupt`` is the exception: it may come from any thread and must only make the output
    silent at once and make a waiting ``end`` return soon. ``has_clock`` says whether the sink
    takes audio at the pace it is heard (a sound card); the player paces the others itself.
    """

    name = 'sink'
    has_clock = False

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        """Start an utterance of interleaved ``pcm_s16le`` audio in this format."""

    def write(self, data: bytes) -> None:
        """Add whole frames to the current utterance."""

    def progress(self) -> tuple[int, float]:
        """
        Frames of the current (or last) utterance handed to the device or file so far.

        Returns them with the wall-clock time (``time.time()``) the count was last reached.
        """
        return 0, 0.0

    def output_rate(self) -> int:
        """Sample rate of ``frames_played`` (the device's, which may differ from the audio's)."""
        return 0

    def output_frames(self, source_frames: int) -> int:
        """How many output frames ``source_frames`` frames of the utterance's audio become."""
        return source_frames

    def end(self) -> str:
        """Finish the utterance once it is played or stored; return a detail for the status."""
        return ''

    def cut(self) -> str:
        """Stop the utterance where it is (cancelled): keep what was played, drop the rest."""
        return self.drop()

    def drop(self) -> str:
        """Abandon the current utterance (stop playing, delete the partial file)."""
        return ''

    def interrupt(self) -> None:
        """Go silent now and make a running ``end`` return soon; ``cut`` or ``drop`` follows."""

    def close(self) -> None:
        """Release the device or files."""


class NullSink(AudioSink):
    """Discard audio; statuses are still reported, so callers waiting on playback go on."""

    name = 'null'

    def __init__(self) -> None:
        """Count frames only, so progress reports look like a real sink's."""
        self._frames = 0
        self._written_at = 0.0
        self._rate = 0
        self._frame_bytes = SAMPLE_WIDTH

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        self._frames, self._rate, self._frame_bytes = 0, sample_rate, SAMPLE_WIDTH * channels
        self._written_at = time.time()

    def write(self, data: bytes) -> None:
        self._frames += len(data) // self._frame_bytes
        self._written_at = time.time()

    def progress(self) -> tuple[int, float]:
        return self._frames, self._written_at

    def output_rate(self) -> int:
        return self._rate

    def end(self) -> str:
        return 'discarded (sink null)'

    def cut(self) -> str:
        return 'discarded (sink null)'

    def drop(self) -> str:
        return 'discarded (sink null)'
