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
The interface every text-to-speech backend offers to the ``say`` tool.

A backend turns text into raw ``pcm_s16le`` audio at its own native rate and channel count and
yields it chunk by chunk, as soon as each chunk exists, so the speaker can start playing while
the rest is still being generated. Resampling is the speaker's job, not the backend's.
"""

from dataclasses import dataclass
import threading
from typing import Iterator, Protocol, runtime_checkable

__all__ = ['AudioFormat', 'PCM_S16LE', 'TtsBackend', 'TtsError', 'TtsUnavailable']

PCM_S16LE = 'pcm_s16le'


class TtsError(RuntimeError):
    """A backend failed while synthesizing (the program crashed, the model raised)."""


class TtsUnavailable(TtsError):
    """
    A backend cannot run here: its program, package or model weights are missing.

    The message says what is missing and how to get it, so it can be shown to the user as is.
    """


@dataclass(frozen=True)
class AudioFormat:
    """What the bytes a backend yields mean; chunks always hold whole frames."""

    sample_rate: int
    channels: int
    encoding: str = PCM_S16LE
    sample_width: int = 2

    @classmethod
    def of(cls, backend: 'TtsBackend') -> 'AudioFormat':
        """Describe the native output of ``backend``."""
        return cls(sample_rate=backend.sample_rate, channels=backend.channels)

    @property
    def frame_bytes(self) -> int:
        """Bytes per frame (one sample for every channel)."""
        return self.sample_width * self.channels


@runtime_checkable
class TtsBackend(Protocol):
    """
    A text-to-speech engine as the ``say`` tool uses it.

    ``synthesize`` is a generator: the caller must exhaust it or ``close()`` it (for instance
    with ``contextlib.closing``); either way the backend's worker process or threads are gone
    when it returns. Setting ``stop`` ends the stream promptly and cleans up the same way.
    """

    name: str
    sample_rate: int
    channels: int

    def warm_up(self) -> None:
        """Run one short generation so the first real utterance starts fast."""
        ...

    def synthesize(self, text: str, stop: threading.Event) -> Iterator[bytes]:
        """Yield interleaved ``pcm_s16le`` chunks of ``text`` as soon as each exists."""
        ...

    def close(self) -> None:
        """Release the program or model; the backend is unusable afterwards."""
        ...
