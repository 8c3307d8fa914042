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
A real sound output device without hardware, for tests: ALSA's ``file`` plugin.

The configuration (in the test's own directory) makes ALSA's default PCM a ``plug`` over a
``file`` PCM over ``null``, at a fixed rate, sample format and channel count, like a USB
speaker; PortAudio, hence ``sounddevice``, sees it as an ordinary output device and everything
played lands in a raw file. Selected for a process with
``ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:<conf>``. A second, named PCM (``robot_speaker``,
listed by PortAudio through its hint) tests choosing a device by name. The device has no
clock: it takes samples as fast as they come (the speaker paces it). ALSA rewrites the raw file
each time a stream opens it, i.e. for every utterance.
"""

import os
from pathlib import Path

import numpy as np

SYSTEM_ALSA_CONF = '/usr/share/alsa/alsa.conf'


def require_alsa_and_portaudio() -> None:
    """Skip the calling test where ALSA's configuration or PortAudio is not installed."""
    import pytest

    if not os.path.exists(SYSTEM_ALSA_CONF):
        pytest.skip(f'ALSA is not installed ({SYSTEM_ALSA_CONF} missing; apt install libasound2)')
    from lerobot_tools_ros.audio import load_sounddevice, SinkUnavailable

    try:
        load_sounddevice()
    except SinkUnavailable as exc:
        pytest.skip(f'PortAudio cannot be used here: {exc}')


def has_output_device() -> bool:
    """Whether this process's PortAudio sees a usable default output device."""
    from lerobot_tools_ros.audio import SinkUnavailable, SounddeviceSink

    try:
        SounddeviceSink()
    except SinkUnavailable:
        return False
    return True


def _file_pcm(path: Path, rate: int, channels: int) -> str:
    return (f'type plug\n  slave {{\n    pcm {{ type file; slave.pcm "null"; file "{path}"; '
            f'format "raw" }}\n    rate {rate}\n    format S16_LE\n    channels {channels}\n  }}')


class AlsaFileDevice:
    """An ALSA configuration with a default and a named output device writing raw files."""

    def __init__(self, directory: Path, rate: int = 48000, channels: int = 2,
                 named_rate: int = 44100) -> None:
        """Write the configuration into ``directory`` (the raw files go to its ``card``)."""
        self.directory = Path(directory)
        self.card = self.directory / 'card'  # remove it and the device fails on write
        self.card.mkdir(parents=True, exist_ok=True)
        self.conf = self.directory / 'asound.conf'
        self.raw = self.card / 'default.raw'
        self.named_raw = self.card / 'robot.raw'
        self.rate, self.channels, self.named_rate = rate, channels, named_rate
        self.repair()

    def repair(self) -> None:
        """Write the working configuration."""
        self.conf.write_text(
            f'pcm.!default {{\n  {_file_pcm(self.raw, self.rate, self.channels)}\n}}\n'
            f'pcm.robot_speaker {{\n  {_file_pcm(self.named_raw, self.named_rate, 2)}\n'
            '  hint { show on; description "Robot speaker (test)" }\n}\n')

    def break_config(self) -> None:
        """Write a configuration ALSA cannot parse (PortAudio then fails to initialize)."""
        self.conf.write_text('pcm.!default { type plug; slave.pcm \n')

    def env(self, base: dict) -> dict:
        return dict(base, ALSA_CONFIG_PATH=f'{SYSTEM_ALSA_CONF}:{self.conf}')

    def frames(self, path: Path | None = None, channels: int | None = None) -> np.ndarray:
        """Return what the device received so far, as (n, channels) int16."""
        path = path or self.raw
        data = path.read_bytes() if path.exists() else b''
        count = channels or self.channels
        usable = len(data) - len(data) % (2 * count)
        return np.frombuffer(data[:usable], dtype='<i2').reshape(-1, count)

    def size(self, path: Path | None = None) -> int:
        path = path or self.raw
        return os.path.getsize(path) if path.exists() else 0


def dominant_frequency(samples: np.ndarray, rate: int) -> float:
    """Return the strongest frequency of a mono signal (Hann window, parabolic peak)."""
    signal = samples.astype(np.float64) * np.hanning(len(samples))
    spectrum = np.abs(np.fft.rfft(signal))
    peak = int(np.argmax(spectrum[1:])) + 1
    left, centre, right = np.log(spectrum[peak - 1:peak + 2] + 1e-12)
    offset = 0.5 * (left - right) / (left - 2 * centre + right)
    return (peak + offset) * rate / len(samples)


def longest_silence(samples: np.ndarray, threshold: int = 1) -> int:
    """Longest run of consecutive samples with magnitude below ``threshold``."""
    quiet = np.abs(samples.astype(np.int32)) < threshold
    longest = run = 0
    for value in quiet:
        run = run + 1 if value else 0
        longest = max(longest, run)
    return longest
