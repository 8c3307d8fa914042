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
Play the ``say`` tool's audio: AudioChunk messages in, sound (or WAV files) out.

The subscription callback only queues chunks; ``UtterancePlayer`` (``audio_sinks``) does the
device or disk work on its own thread, so a missing, busy or slow device never holds up the
executor and never takes the node down: that utterance is reported ``dropped`` with the reason
and the next one is tried afresh. ``SpeakerStatus`` reports (``playing`` at the first chunk,
``finished`` or ``dropped`` at the end) go to ``status_topic``; ``say`` with
``wait_for_playback`` answers on them.
"""

import sys
from typing import Any

from lerobot_tools_interfaces.msg import AudioChunk, SpeakerStatus
from lerobot_tools_ros import names
from lerobot_tools_ros.audio_sinks import (
    AudioSink, Chunk, make_sink, SINK_KINDS, SinkError, SinkUnavailable, UtterancePlayer)
from lerobot_tools_ros.nodes.params import declare
from lerobot_tools_ros.nodes.runner import run_node
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

# Deep enough for a whole long utterance in flight (espeak-ng sends ~16 KiB per message).
_AUDIO_DEPTH = 200
_STATUS_DEPTH = 50


def _reliable(depth: int) -> QoSProfile:
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE)


class Speaker(Node):
    """Subscribe to ``audio_topic`` and play each utterance through the chosen sink."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.SPEAKER_NODE, **kwargs)
        sink_kind = declare(
            self, 'sink', 'auto',
            'Where audio goes: auto (a sound device if one exists, else wav), sounddevice, '
            'wav (one <utterance_id>.wav per utterance in output_dir) or null (discarded).',
            read_only=True)
        output_dir = declare(
            self, 'output_dir', '~/.lerobot_tools/audio',
            'Directory of the wav sink; created if missing. A dropped utterance leaves no file.',
            read_only=True)
        device = declare(
            self, 'device', '',
            "sounddevice output: '' for the default, a device index, or part of its name.",
            read_only=True)
        jitter_ms = declare(
            self, 'jitter_ms', 60,
            'sounddevice: audio buffered before playback starts, to ride over uneven chunks.',
            read_only=True)
        stall_timeout_s = declare(
            self, 'stall_timeout_s', 10.0,
            'Drop an utterance whose next chunk has not come for this long (sender died).',
            read_only=True)
        audio_topic = declare(self, 'audio_topic', names.AUDIO_TOPIC,
                              'AudioChunk topic to play.', read_only=True)
        status_topic = declare(self, 'status_topic', names.SPEAKER_STATUS_TOPIC,
                               'Topic of the SpeakerStatus reports.', read_only=True)
        if sink_kind not in SINK_KINDS:
            raise ValueError(f"parameter 'sink' must be one of {', '.join(SINK_KINDS)}, got "
                             f'{sink_kind!r}')
        if not stall_timeout_s > 0:
            raise ValueError(f"parameter 'stall_timeout_s' must be positive, got "
                             f'{stall_timeout_s}')
        logger = self.get_logger()
        try:
            sink = make_sink(sink_kind, output_dir=output_dir, device=device,
                             jitter_ms=jitter_ms, warn=logger.warning)
        except SinkUnavailable as exc:
            if sink_kind != 'sounddevice':
                raise ValueError(f'sink {sink_kind}: {exc}') from exc
            # An explicit device may be plugged in later: keep running, report each utterance
            # as dropped with the reason until then.
            logger.error(f'sink sounddevice: {exc}; every utterance will be reported '
                         'dropped: connect a device and restart the speaker')
            sink = _UnavailableSink(str(exc))
        self._status_publisher = self.create_publisher(SpeakerStatus, status_topic,
                                                       _reliable(_STATUS_DEPTH))
        self.player = UtterancePlayer(sink, self._publish_status,
                                      stall_timeout_s=stall_timeout_s, logger=logger)
        self._subscription = self.create_subscription(AudioChunk, audio_topic, self._on_chunk,
                                                      _reliable(_AUDIO_DEPTH))
        where = getattr(sink, 'output_dir', None) or getattr(sink, 'device_info', {}).get('name')
        logger.info(f'speaker: playing {self._subscription.topic_name} through sink '
                    f'{sink.name}' + (f' ({where})' if where else '') + '; status on '
                    f'{self._status_publisher.topic_name}')

    def _on_chunk(self, message: AudioChunk) -> None:
        self.player.submit(Chunk(
            utterance_id=message.utterance_id, sample_rate=message.sample_rate,
            channels=message.channels, data=message.data.tobytes(), final=message.final,
            cancelled=message.cancelled, encoding=message.encoding))

    def _publish_status(self, utterance_id: str, state: str, detail: str) -> None:
        status = SpeakerStatus(utterance_id=utterance_id, state=state, detail=detail)
        status.header.stamp = self.get_clock().now().to_msg()
        self._status_publisher.publish(status)

    def destroy_node(self) -> None:
        self.player.close()
        super().destroy_node()


class _UnavailableSink(AudioSink):
    """Stands in for a sound device that is missing: every utterance is dropped with why."""

    name = 'sounddevice'

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        raise SinkError(self.reason)


def main(args: list[str] | None = None) -> int:
    return run_node(Speaker, 'speaker', args)


if __name__ == '__main__':
    sys.exit(main())
