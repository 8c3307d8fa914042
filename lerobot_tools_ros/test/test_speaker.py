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

import os
import subprocess
import sys
import time

from alsa_device import (
    AlsaFileDevice, dominant_frequency, has_output_device, longest_silence,
    require_alsa_and_portaudio)
from conftest import spin_until
from lerobot_tools_interfaces.msg import AudioChunk, SpeakerStatus
import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
import soundfile

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)


NO_DEVICE = not has_output_device()


def tone(seconds: float, rate: int = 22050, freq: float = 330.0) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * 10000).astype('<i2').tobytes()


class Link:
    """A publisher of AudioChunk and a collector of SpeakerStatus on the test node."""

    def __init__(self, node) -> None:
        self.node = node
        self.publisher = node.create_publisher(AudioChunk, '/speaker/audio', RELIABLE)
        self.statuses: list[SpeakerStatus] = []
        node.create_subscription(SpeakerStatus, '/speaker/status', self.statuses.append,
                                 RELIABLE)

    def send(self, uid: str, audio: bytes, *, rate: int = 22050, pieces: int = 4,
             final: bool = True, cancelled: bool = False, encoding: str = 'pcm_s16le',
             interval_s: float = 0.0) -> None:
        step = max(2, len(audio) // pieces // 2 * 2)
        for start in range(0, len(audio), step):
            self._publish(uid, audio[start:start + step], rate, False, False, encoding)
            if interval_s:  # a steady stream, as a TTS backend sends it
                spin_until(self.node, lambda: False, interval_s)
        if final or cancelled:
            self._publish(uid, b'', rate, True, cancelled, encoding)

    def _publish(self, uid, data, rate, final, cancelled, encoding) -> None:
        message = AudioChunk(utterance_id=uid, sample_rate=rate, channels=1, encoding=encoding,
                             final=final, cancelled=cancelled)
        message.data = data
        self.publisher.publish(message)

    def states(self, uid: str) -> list[tuple[str, str]]:
        return [(s.state, s.detail) for s in self.statuses if s.utterance_id == uid]

    def last(self, uid: str) -> SpeakerStatus:
        return [s for s in self.statuses if s.utterance_id == uid][-1]

    def end(self, uid: str, timeout: float = 30.0) -> tuple[str, str]:
        def ended():
            return [s for s in self.states(uid) if s[0] in ('finished', 'dropped', 'cancelled')]
        assert spin_until(self.node, ended, timeout), f'no end status for {uid}: {self.statuses}'
        return ended()[0]


@pytest.fixture
def speaker(start_node, ros_node, tmp_path):
    """Start a speaker with the given sink; return (link, output_dir, process)."""

    def start(sink: str, *params: str, env: dict | None = None):
        out = tmp_path / 'audio'
        args = ['-p', f'sink:={sink}', '-p', f'output_dir:={out}']
        for param in params:
            args += ['-p', param]
        proc = start_node('lerobot_tools_ros.speaker.node', *args, env=env)
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


def test_the_speakers_own_stop_silences_everything_and_the_next_plays(speaker, ros_node):
    from std_srvs.srv import Trigger

    link, out, _ = speaker('wav')
    stop = ros_node.create_client(Trigger, '/speaker/stop')
    assert spin_until(ros_node, stop.service_is_ready, 10.0)
    playing, queued = tone(3.0), tone(1.0, freq=440.0)
    link.send('first', playing)  # whole utterances, from two senders as far as it knows
    link.send('second', queued)
    assert spin_until(ros_node, lambda: any(
        s.utterance_id == 'first' and s.frames_played >= 0.3 * 22050 for s in link.statuses),
        10.0)
    future = stop.call_async(Trigger.Request())
    assert spin_until(ros_node, future.done, 10.0)
    assert future.result().success
    assert future.result().message == 'stopped 2 utterance(s): first, second'
    state, detail = link.end('first')
    assert state == 'cancelled' and detail.startswith("cancelled by the speaker's ~/stop; kept")
    report = link.last('first')
    assert soundfile.info(out / 'first.wav').frames == report.frames_played < 1.5 * 22050
    assert link.end('second') == ('cancelled', "cancelled by the speaker's ~/stop")
    assert not (out / 'second.wav').exists()  # never started: nothing of it was played
    link.send('third', tone(0.2))
    assert link.end('third')[0] == 'finished'
    future = stop.call_async(Trigger.Request())
    assert spin_until(ros_node, future.done, 10.0)
    assert not future.result().success
    assert future.result().message == 'nothing was playing or queued'


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


@pytest.mark.parametrize('param, message', [
    ('sink:=speakers', "parameter 'sink' must be one of auto, sounddevice, wav, null"),
    ('block_ms:=0', "parameter 'block_ms' must be from 1 to 200, got 0"),
])
def test_bad_parameter_exits_with_one_clear_line(start_node, param, message):
    proc = start_node('lerobot_tools_ros.speaker.node', '-p', 'sink:=null', '-p', param)
    assert proc.proc.wait(30) == 78
    assert message in proc.output()
    assert 'Traceback' not in proc.output()


# ------------------------------------------------------------------ a real PortAudio device
BLOCK = 960  # the speaker's default block: 20 ms at the device's 48 kHz


@pytest.fixture
def alsa(tmp_path, ros_env):
    """Set up an ALSA file-plugin output device of this test's own; return (device, env)."""
    require_alsa_and_portaudio()
    device = AlsaFileDevice(tmp_path / 'alsa')
    return device, device.env(ros_env)


def audible(frames: np.ndarray) -> tuple[int, int]:
    """First and one-past-last index of the non-zero samples."""
    loud = np.flatnonzero(np.any(frames != 0, axis=1))
    return int(loud[0]), int(loud[-1]) + 1


def check_tone_on_device(device: AlsaFileDevice, path, rate: int, seconds: float,
                         freq: float) -> None:
    """Check the device file holds the tone: rate, stereo, length, pitch, no gaps, quiet."""
    frames = device.frames(path)
    start, stop = audible(frames)
    # The tone starts at a zero crossing; PortAudio starts the device with its buffer (two
    # blocks) of silence.
    assert start <= 2 * rate * 0.02 + 2
    assert abs((stop - start) - seconds * rate) <= rate * 0.02  # within one 20 ms block
    assert len(frames) - stop <= rate * 0.02  # after the end: at most the block's padding
    assert np.array_equal(frames[:, 0], frames[:, 1])  # mono duplicated to both channels
    left = frames[start:stop, 0]
    assert dominant_frequency(left, rate) == pytest.approx(freq, rel=0.01)
    assert longest_silence(left, threshold=2) <= 4  # a sine has no gaps; an underrun would
    size = device.size(path)
    time.sleep(0.5)
    assert device.size(path) == size  # silence after the end: nothing more is written


def test_sounddevice_plays_a_steady_stream_at_the_device_rate_and_channels(speaker, alsa):
    device, env = alsa
    # A 400 ms cushion (jitter_ms), as a robot whose computer is busy would set: under a CPU
    # hog the speaker's own thread can miss the default 60 ms, and it rightly reports those
    # underruns. Pieces of 50 ms every 5 ms: a backend well ahead of real time (at only twice
    # real time the test's side starved the stream).
    link, out, _ = speaker('sounddevice', 'jitter_ms:=400', env=env)
    link.send('tone', tone(1.0, freq=440.0), pieces=20, interval_s=0.005)
    state, detail = link.end('tone')
    assert (state, detail) == ('finished', "played on 'default' at 48000 Hz x2")
    report = link.last('tone')
    assert report.sample_rate == 48000
    assert report.frames_played == report.frames_total == 48000
    check_tone_on_device(device, device.raw, 48000, 1.0, 440.0)
    assert not out.exists()


def test_auto_picks_the_sound_device_when_there_is_one(speaker, alsa):
    device, env = alsa
    link, out, proc = speaker('auto', env=env)
    link.send('auto', tone(0.5, freq=300.0))
    assert link.end('auto') == ('finished', "played on 'default' at 48000 Hz x2")
    check_tone_on_device(device, device.raw, 48000, 0.5, 300.0)
    assert '[WARN]' not in proc.output() and not out.exists()


def _device_index(env: dict, name: str) -> int:
    code = ('import sounddevice as sd; print([d["index"] for d in sd.query_devices() '
            f'if d["name"] == {name!r}][0])')
    return int(subprocess.run([sys.executable, '-c', code], env=env, check=True,
                              capture_output=True, text=True).stdout)


@pytest.mark.parametrize('how', ['name', 'index'])
def test_device_parameter_picks_an_output_by_name_part_or_index(speaker, alsa, how):
    device, env = alsa
    choice = 'ROBOT' if how == 'name' else str(_device_index(env, 'robot_speaker'))
    link, _, _ = speaker('sounddevice', f'device:={choice}', env=env)
    link.send('named', tone(0.5, rate=24000, freq=500.0), rate=24000)
    assert link.end('named') == ('finished', "played on 'robot_speaker' at 44100 Hz x2")
    check_tone_on_device(device, device.named_raw, 44100, 0.5, 500.0)
    assert device.size() == 0  # nothing went to the default device


def test_absent_device_is_a_clear_error_listing_the_outputs(speaker, alsa):
    device, env = alsa
    link, _, proc = speaker('sounddevice', 'device:=tannoy', env=env)
    assert "'tannoy' is not one of the output devices here" in proc.output()
    link.send('lost', tone(0.2))
    state, detail = link.end('lost')
    assert state == 'dropped'
    assert "audio output device 'tannoy' is not one of the output devices here: " in detail
    assert "'robot_speaker'" in detail and "'default'" in detail
    assert proc.proc.poll() is None


def test_device_failing_mid_utterance_drops_it_and_the_next_plays_once_back(speaker, alsa):
    device, env = alsa
    link, _, proc = speaker('sounddevice', env=env)
    os.rmdir(device.card)  # the device's output cannot be written any more
    link.send('broken', tone(0.5))
    state, detail = link.end('broken')
    assert state == 'dropped'
    assert "'default' stopped taking audio after" in detail and 'failed or disappeared' in detail
    assert proc.proc.poll() is None
    device.card.mkdir()
    link.send('back', tone(0.5, freq=440.0))
    assert link.end('back')[0] == 'finished'
    check_tone_on_device(device, device.raw, 48000, 0.5, 440.0)


def test_invalid_audio_config_at_start_drops_until_it_is_repaired(speaker, alsa):
    device, env = alsa
    device.break_config()
    link, _, proc = speaker('sounddevice', env=env)
    assert 'PortAudio cannot initialize the audio system' in proc.output()
    link.send('early', tone(0.2))
    state, detail = link.end('early')
    assert state == 'dropped' and 'PortAudio cannot initialize the audio system' in detail
    device.repair()
    link.send('later', tone(0.5, freq=440.0))
    assert link.end('later')[0] == 'finished'
    check_tone_on_device(device, device.raw, 48000, 0.5, 440.0)
    assert proc.proc.poll() is None


def test_a_killed_speaker_leaves_no_broken_wav_and_the_next_one_cleans_up(speaker, ros_node):
    link, out, proc = speaker('wav')
    link.send('torn', tone(3.0), final=False)
    assert spin_until(ros_node, lambda: ('playing', 'wav') in link.states('torn'), 5.0)
    spin_until(ros_node, lambda: False, 0.3)
    proc.kill()  # kill -9 mid-write
    leftovers = [p.name for p in out.iterdir()]
    assert len(leftovers) == 1 and leftovers[0].startswith('.torn.wav.'), leftovers
    assert not (out / 'torn.wav').exists()
    link, out, proc = speaker('wav')  # a new speaker removes the dead one's temporary file
    # (the dead speaker still counts on the graph until its lease ends: wait for the new one)
    assert spin_until(ros_node, lambda: 'through sink wav' in proc.output(), 20.0)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize('complete', [False, True], ids=['while-sent', 'after-final-chunk'])
def test_cancel_on_the_device_silences_it_and_the_next_plays(speaker, alsa, ros_node, complete):
    device, env = alsa
    link, _, _ = speaker('sounddevice', env=env)
    link.send('cut', tone(3.0, freq=440.0), final=complete)
    assert spin_until(ros_node, lambda: any(
        s.utterance_id == 'cut' and s.frames_played >= 48000 // 2 for s in link.statuses), 10.0)
    link.send('cut', b'', final=True, cancelled=True)
    state, detail = link.end('cut')
    assert state == 'cancelled' and 'playback stopped after' in detail
    report = link.last('cut')
    start, stop = audible(device.frames())
    # The device got what the status says was played, not the 3 s that were queued.
    assert abs((stop - start) - report.frames_played) <= BLOCK
    assert 48000 // 2 <= report.frames_played < 2 * 48000
    link.send('next', tone(0.5, freq=300.0))
    assert link.end('next')[0] == 'finished'
    check_tone_on_device(device, device.raw, 48000, 0.5, 300.0)  # ALSA rewrote the file
