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

"""The speaker node as a real process: AudioChunk messages in, files and statuses out."""

from alsa_device import has_output_device
from conftest import spin_until
from lerobot_tools_interfaces.msg import AudioChunk, SpeakerStatus
import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
import soundfile

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)


NO_DEVICE = not has_output_device()


def tone(seconds: float, rate: int = 22050) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * 330 * t) * 10000).astype('<i2').tobytes()


class Link:
    """A publisher of AudioChunk and a collector of SpeakerStatus on the test node."""

    def __init__(self, node) -> None:
        self.node = node
        self.publisher = node.create_publisher(AudioChunk, '/speaker/audio', RELIABLE)
        self.statuses: list[SpeakerStatus] = []
        node.create_subscription(SpeakerStatus, '/speaker/status', self.statuses.append,
                                 RELIABLE)

    def send(self, uid: str, audio: bytes, *, rate: int = 22050, pieces: int = 4,
             final: bool = True, cancelled: bool = False, encoding: str = 'pcm_s16le') -> None:
        step = max(2, len(audio) // pieces // 2 * 2)
        for start in range(0, len(audio), step):
            self._publish(uid, audio[start:start + step], rate, False, False, encoding)
        if final or cancelled:
            self._publish(uid, b'', rate, True, cancelled, encoding)

    def _publish(self, uid, data, rate, final, cancelled, encoding) -> None:
        message = AudioChunk(utterance_id=uid, sample_rate=rate, channels=1, encoding=encoding,
                             final=final, cancelled=cancelled)
        message.data = data
        self.publisher.publish(message)

    def states(self, uid: str) -> list[tuple[str, str]]:
        return [(s.state, s.detail) for s in self.statuses if s.utterance_id == uid]

    def end(self, uid: str, timeout: float = 10.0) -> tuple[str, str]:
        def ended():
            return [s for s in self.states(uid) if s[0] in ('finished', 'dropped', 'cancelled')]
        assert spin_until(self.node, ended, timeout), f'no end status for {uid}: {self.statuses}'
        return ended()[0]


@pytest.fixture
def speaker(start_node, ros_node, tmp_path):
    """Start a speaker with the given sink; return (link, output_dir, process)."""

    def start(sink: str, *params: str):
        out = tmp_path / 'audio'
        args = ['-p', f'sink:={sink}', '-p', f'output_dir:={out}']
        for param in params:
            args += ['-p', param]
        proc = start_node('lerobot_tools_ros.nodes.speaker', *args)
        link = Link(ros_node)
        ready = spin_until(ros_node, lambda: link.publisher.get_subscription_count() >= 1
                           and ros_node.count_publishers('/speaker/status') >= 1, 20.0)
        assert ready, 'speaker did not come up:\n' + proc.output()
        spin_until(ros_node, lambda: False, 0.3)
        return link, out, proc

    return start


def test_wav_sink_writes_what_was_published_and_reports_the_path(speaker):
    link, out, _ = speaker('wav')
    audio = tone(0.8)
    link.send('utt1', audio)
    state, detail = link.end('utt1')
    assert (state, detail) == ('finished', str(out / 'utt1.wav'))
    assert link.states('utt1')[0] == ('playing', 'wav')
    samples, rate = soundfile.read(out / 'utt1.wav', dtype='int16')
    assert rate == 22050 and samples.tobytes() == audio


def test_cancel_mid_utterance_keeps_what_was_played_and_the_next_plays(speaker, ros_node):
    link, out, _ = speaker('wav')
    audio = tone(2.0)
    link.send('cut', audio, final=False)
    assert spin_until(ros_node, lambda: ('playing', 'wav') in link.states('cut'), 5.0)
    spin_until(ros_node, lambda: False, 0.4)
    link.send('cut', b'', final=True, cancelled=True)
    state, detail = link.end('cut')
    assert state == 'cancelled' and detail.startswith('cancelled; kept what was played in')
    report = [s for s in link.statuses if s.utterance_id == 'cut'][-1]
    progress = [s.frames_played for s in link.statuses
                if s.utterance_id == 'cut' and s.state == 'playing']
    assert progress == sorted(progress) and len(set(progress)) >= 3  # reported as it played
    samples, rate = soundfile.read(out / 'cut.wav', dtype='int16')
    assert rate == report.sample_rate == 22050
    assert len(samples) == report.frames_played < len(audio) // 2 // 2
    assert samples.tobytes() == audio[:2 * len(samples)]
    link.send('next', tone(0.2))
    assert link.end('next')[0] == 'finished'
    assert sorted(p.name for p in out.iterdir()) == ['cut.wav', 'next.wav']


def test_null_sink_still_reports_finished(speaker):
    link, out, _ = speaker('null')
    link.send('quiet', tone(0.3))
    assert link.end('quiet')[0] == 'finished'
    states = [state for state, _ in link.states('quiet')]
    assert list(dict.fromkeys(states)) == ['playing', 'finished'] and states[-1] == 'finished'
    assert not out.exists()


def test_malformed_audio_is_dropped_and_the_node_keeps_serving(speaker):
    link, _, proc = speaker('null')
    link.send('mp3', b'\x00' * 64, encoding='mp3')
    state, detail = link.end('mp3')
    assert state == 'dropped' and "encoding 'mp3'" in detail
    link.send('odd', b'\x00' * 63)
    assert link.end('odd')[0] == 'dropped'
    link.send('fine', tone(0.1))
    assert link.end('fine')[0] == 'finished'
    assert proc.proc.poll() is None


@pytest.mark.skipif(not NO_DEVICE, reason='this machine has a sound output device')
def test_auto_without_a_sound_device_writes_wav_files_with_one_warning(speaker):
    link, out, proc = speaker('auto')
    link.send('auto1', tone(0.2))
    assert link.end('auto1') == ('finished', str(out / 'auto1.wav'))
    warnings = [line for line in proc.output().splitlines() if '[WARN]' in line]
    assert len(warnings) == 1 and 'no sound output' in warnings[0], proc.output()


@pytest.mark.skipif(not NO_DEVICE, reason='this machine has a sound output device')
def test_sounddevice_without_a_device_drops_utterances_but_stays_up(speaker):
    link, _, proc = speaker('sounddevice')
    link.send('nodev', tone(0.2))
    state, detail = link.end('nodev')
    assert state == 'dropped' and 'audio output device' in detail
    assert proc.proc.poll() is None


def test_bad_sink_parameter_exits_with_a_clear_message(start_node):
    proc = start_node('lerobot_tools_ros.nodes.speaker', '-p', 'sink:=speakers')
    assert proc.proc.wait(30) == 1
    assert 'must be one of auto, sounddevice, wav, null' in proc.output()
