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

"""Build the sink the speaker's ``sink`` parameter names."""

import logging
from typing import Callable, Optional

from .base import AudioSink, NullSink, SinkUnavailable
from .device import SounddeviceSink
from .wav import WavSink
from ..parameters.declarations import SPEAKER

__all__ = ['SINK_KINDS', 'make_sink']

SINK_KINDS = SPEAKER['sink'].choices  # declared once, with the speaker's parameters
_log = logging.getLogger(__name__)


def make_sink(kind: str, *, output_dir: str = '~/.lerobot_tools/audio', device: str = '',
              jitter_ms: int = 60, block_ms: int = 20,
              warn: Optional[Callable[[str], None]] = None) -> AudioSink:
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
        return SounddeviceSink(device, jitter_ms, block_ms)
    try:
        return SounddeviceSink(device, jitter_ms, block_ms)
    except SinkUnavailable as exc:
        sink = WavSink(output_dir)
        (warn or _log.warning)(f'sink auto: writing WAV files to {sink.output_dir} because '
                               f'there is no sound output: {exc}')
        return sink
