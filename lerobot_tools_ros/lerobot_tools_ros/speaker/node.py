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

The subscription callback only queues chunks; ``UtterancePlayer`` (``lerobot_tools_ros.audio``)
does the device or disk work on its own thread, so a missing, busy or slow device never holds
up the executor and never takes the node down: that utterance is reported ``dropped`` with the
reason and the next one is tried afresh (a sound device that was missing is looked for again).
``SpeakerStatus`` reports go to ``status_topic``: ``playing`` at the start and every
``progress_period_s`` while an utterance plays (``frames_played`` = frames handed to the device
or file, at ``sample_rate``), then ``finished``, ``cancelled`` (with how much was played) or
``dropped``. Each report's stamp is when ``frames_played`` was reached. ``say`` follows them.
Stopped (Ctrl-C, SIGTERM) while an utterance plays on a sink without a clock (a WAV file), the
speaker writes the rest of it out unplayed and reports it ``dropped`` with ``frames_played`` as
the sink counted it when the shutdown began: what was heard, so ``say`` does not report a
success.

``~/stop`` (``std_srvs/Trigger``) is the speaker's own stop: the utterance playing goes silent
within one block and every queued one is dropped, whoever sent them (each reported
``cancelled``, detail "cancelled by the speaker's ~/stop"; a ``say`` waiting on one ends
``cancelled``). Utterances that arrive afterwards play as usual.
"""

import sys
import threading
from typing import Any

from lerobot_tools_interfaces.msg import AudioChunk, SpeakerStatus
from lerobot_tools_ros import names
from lerobot_tools_ros.audio import (
    Chunk, make_sink, SinkUnavailable, SounddeviceSink, Status, UtterancePlayer)
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.nodes.params import declare_table
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parameters.declarations import SPEAKER
from lerobot_tools_ros.untrusted import log_text, ros_string
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

# Deep enough for a whole long utterance in flight (espeak-ng sends ~16 KiB per message).
_AUDIO_DEPTH = 200
_STATUS_DEPTH = 50
_LAST_STATUS_ACK_S = 2.0  # at most this long at shutdown for subscribers to take the last status
STOPPED_BY_SERVICE = "cancelled by the speaker's ~/stop"
STOPPED_INACTIVE = 'cancelled: the speaker is not active (managed node)'


def _reliable(depth: int) -> QoSProfile:
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE)


class Speaker(Node):
    """Subscribe to ``audio_topic`` and play each utterance through the chosen sink."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.SPEAKER_NODE, **kwargs)
        self.accepting = True  # false while a managed speaker is not active
        self._build()

    def _build(self) -> None:
        """Open the sink, subscribe to the audio (a managed speaker does it at configure)."""
        params = self._declare_parameters()
        logger = self.get_logger()
        sink_kind = params['sink']
        try:
            sink = make_sink(sink_kind, output_dir=params['output_dir'],
                             device=params['device'], jitter_ms=params['jitter_ms'],
                             block_ms=params['block_ms'], warn=logger.warning)
        except ValueError as exc:  # jitter_ms or block_ms out of range
            raise ConfigurationError(f'speaker: {exc}') from exc
        except SinkUnavailable as exc:
            if sink_kind != 'sounddevice':
                raise ConfigurationError(f'sink {sink_kind}: {exc}') from exc
            # An explicit device may come later (plugged in, ALSA fixed): keep running, look
            # for it at each utterance and report the ones before it as dropped.
            sink = SounddeviceSink(params['device'], params['jitter_ms'], params['block_ms'],
                                   defer=True)
            logger.error(f'sink sounddevice: {exc}; utterances are reported dropped until '
                         'the device is there (it is looked for again at each utterance)')
        self._status_publisher = self.create_publisher(SpeakerStatus, params['status_topic'],
                                                       _reliable(_STATUS_DEPTH))
        self.player = UtterancePlayer(
            sink, self._publish_status, stall_timeout_s=params['stall_timeout_s'],
            max_pending=params['max_pending_utterances'], realtime=params['realtime'],
            block_ms=params['block_ms'], logger=logger)
        self._last_progress: tuple[str, int] = ('', -1)
        # Progress (timer thread) never goes out after the end status (player thread).
        self._publish_lock = threading.Lock()
        self._progress_timer = self.create_timer(params['progress_period_s'],
                                                 self._publish_progress)
        self._subscription = self.create_subscription(AudioChunk, params['audio_topic'],
                                                      self._on_chunk, _reliable(_AUDIO_DEPTH))
        self._stop_service = self.create_service(Trigger, '~/stop', self._on_stop)
        where = getattr(sink, 'output_dir', None) or getattr(sink, 'device_info', {}).get('name')
        logger.info(f'speaker: playing {self._subscription.topic_name} through sink '
                    f'{sink.name}' + (f' ({where})' if where else '') + '; status on '
                    f'{self._status_publisher.topic_name}')

    def _declare_parameters(self) -> dict[str, Any]:
        """Declare every parameter from its spec (parameters.declarations.SPEAKER)."""
        params = declare_table(self, SPEAKER)
        params['device'] = str(params['device'])  # `-p device:=1` arrives as an integer
        return params

    def _on_chunk(self, message: AudioChunk) -> None:
        self.player.submit(Chunk(
            utterance_id=message.utterance_id, sample_rate=message.sample_rate,
            channels=message.channels, data=message.data.tobytes(), final=message.final,
            cancelled=message.cancelled, encoding=message.encoding))
        if not self.accepting:  # a managed speaker not active: reported, never played
            self.player.stop_all(STOPPED_INACTIVE)
        if self._progress_timer.is_canceled():  # idle until now: report progress again
            self._progress_timer.reset()

    def _on_stop(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        stopped = self.player.stop_all(STOPPED_BY_SERVICE)
        response.success = bool(stopped)
        response.message = (
            f'stopped {len(stopped)} utterance(s): ' + ', '.join(stopped) if stopped
            else 'nothing was playing or queued')
        if stopped:
            self.get_logger().info(f'speaker: ~/stop {log_text(response.message, 500)}')
        response.message = ros_string(response.message)
        return response

    def _publish_progress(self) -> None:
        with self._publish_lock:
            status = self.player.progress()
            if status is None:
                if not self.player.busy():
                    # Nothing queued or playing: the timer sleeps until the next chunk comes
                    # (idle CPU). Checked again after cancelling: a chunk may have come between.
                    self._progress_timer.cancel()
                    if self.player.busy():
                        self._progress_timer.reset()
                return
            if (status.utterance_id, status.frames_played) == self._last_progress:
                return
            self._last_progress = (status.utterance_id, status.frames_played)
            self._publish(status)

    def _publish_status(self, status: Status) -> None:
        with self._publish_lock:
            self._publish(status)

    def _publish(self, status: Status) -> None:
        message = SpeakerStatus(
            utterance_id=ros_string(status.utterance_id), state=status.state,
            detail=ros_string(status.detail), frames_played=status.frames_played,
            frames_total=status.frames_total, sample_rate=status.sample_rate)
        seconds = int(status.stamp)
        message.header.stamp.sec = seconds
        message.header.stamp.nanosec = int((status.stamp - seconds) * 1e9)
        self._status_publisher.publish(message)

    def set_accepting(self, accepting: bool) -> None:
        """Take calls (a managed node's activate) or stop every call (its deactivate)."""
        self.accepting = accepting
        if not accepting:
            self.stop_calls()

    def stop_calls(self) -> int:
        """Silence the utterance playing and drop the queued ones; return how many."""
        return len(self.player.stop_all(STOPPED_INACTIVE))

    def _release(self) -> None:
        player = getattr(self, 'player', None)
        if player is None:
            return  # a managed speaker never configured
        player.close()
        # The last statuses (an utterance finished on Ctrl-C) reach the say tools before this
        # node leaves the graph, so a clean stop is never mistaken for a crash.
        self._status_publisher.wait_for_all_acked(Duration(seconds=_LAST_STATUS_ACK_S))

    def destroy_node(self) -> None:
        self._release()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(Speaker, 'speaker', args)


if __name__ == '__main__':
    sys.exit(main())
