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
Where the speaker node sends audio, and the player that feeds it.

One module each: ``base`` (chunk, sink contract, statuses), ``wav`` (WAV files), ``device``
(PortAudio device choice, format conversion and resampling), ``player`` (the queue and state
machine), ``factory`` (``make_sink``). Pure Python, no rclpy.
"""

from .base import (
    AudioSink, CANCELLED, Chunk, DROPPED, END_STATES, FINISHED, NullSink, PCM_S16LE, PLAYING,
    SinkError, SinkUnavailable)
from .device import (
    choose_output_format, find_output_device, load_sounddevice, map_channels, output_devices,
    SounddeviceSink, StreamResampler)
from .factory import make_sink, SINK_KINDS
from .player import MAX_UTTERANCE_ID, Status, UtterancePlayer
from .wav import wav_file_stem, WavSink

__all__ = [
    'AudioSink', 'CANCELLED', 'Chunk', 'DROPPED', 'END_STATES', 'FINISHED', 'MAX_UTTERANCE_ID',
    'NullSink', 'PCM_S16LE', 'PLAYING', 'SINK_KINDS', 'SinkError', 'SinkUnavailable',
    'SounddeviceSink', 'Status', 'StreamResampler', 'UtterancePlayer', 'WavSink',
    'choose_output_format', 'find_output_device', 'load_sounddevice', 'make_sink',
    'map_channels', 'output_devices', 'wav_file_stem',
]
