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

"""``say`` end to end: tool_server and speaker as real processes, audio over DDS."""

import importlib.util
import itertools
import json
import pathlib
import shutil
import signal
import tempfile
import threading
import time

from conftest import prove_service, spin_until
from lerobot_tools_interfaces.msg import AudioChunk, ErrorCodes
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.names import READINESS_PROBE
from lerobot_tools_ros.tool_server.host import RosToolHost
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
import soundfile
from std_srvs.srv import Trigger

AUDIO_TOPIC = '/speaker/audio'


class Heard:
    """The test node's view of /speaker/audio, by utterance."""

    def __init__(self, node) -> None:
        self.chunks: dict[str, list] = {}
        self.arrival: dict[str, float] = {}
        node.create_subscription(AudioChunk, AUDIO_TOPIC, self._on_chunk,
                                 QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE))

    def _on_chunk(self, message: AudioChunk) -> None:
        self.chunks.setdefault(message.utterance_id, []).append(message)
        self.arrival.setdefault(message.utterance_id, time.monotonic())

    def ended(self, uid: str) -> bool:
        return any(chunk.final for chunk in self.chunks.get(uid, []))

    def audio(self, uid: str) -> bytes:
        return b''.join(chunk.data.tobytes() for chunk in self.chunks[uid])


@pytest.fixture
def say_stack(start_node, ros_node, tmp_path):
    """Start tool_server hosting only `say` plus a speaker; return a call function."""

    def start(*say_params: str, sink: str = 'wav', speaker: bool = True,
              speaker_params: tuple = (), env: dict | None = None):
        out = tmp_path / 'audio'
        args = ['-p', 'tools:=[say]', '-p', 'tool.say.backend:=espeak_ng']
        for param in say_params:
            args += ['-p', f'tool.say.{param}']
        server = start_node('lerobot_tools_ros.tool_server.node', *args)
        speaker_proc = None
        if speaker:
            extra = [arg for param in speaker_params for arg in ('-p', param)]
            speaker_proc = start_node('lerobot_tools_ros.speaker.node', '-p', f'sink:={sink}',
                                      '-p', f'output_dir:={out}', *extra, env=env)
        heard = Heard(ros_node)
        client = ros_node.create_client(CallTool, '/lerobot_tools/say')
        # pocket-tts takes a few seconds to import, load and warm up; on a machine busy with
        # other tests' processes, a minute and more (a bound on a hang, not a timing check).
        if not spin_until(ros_node, client.service_is_ready, 120.0):
            pytest.fail('tool_server did not come up:\n' + server.output())
        wanted = 2 if speaker else 1  # the speaker and this test node
        assert spin_until(ros_node, lambda: ros_node.count_subscribers(AUDIO_TOPIC) >= wanted
                          and ros_node.count_publishers(AUDIO_TOPIC) >= 1, 20.0), (
            (speaker_proc.output() if speaker_proc else '') + server.output())
        # tool_server answers a ':probe' at once, without running say: its answers reach us.
        prove_service(ros_node, client, CallTool.Request(name=READINESS_PROBE))
        call_ids = itertools.count(1)

        def call(arguments, timeout: float = 20.0):
            future = client.call_async(CallTool.Request(  # a new id: each call runs
                call_id=f't{next(call_ids)}', name='say', arguments=json.dumps(arguments)))
            assert spin_until(ros_node, future.done, timeout), server.output()
            return future.result()

        return call, heard, out, server, speaker_proc

    return start


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))


def test_espeak_hello_world_reaches_the_speaker_as_a_wav_file(say_stack, ros_node):
    call, heard, out, _, speaker = say_stack()
    response = call({'text': 'hello world'})
    assert response.success, response.error_message
    result = json.loads(response.content)
    assert set(result) == {'utterance_id', 'backend', 'audio_seconds', 'first_chunk_ms',
                           'playback', 'played_s', 'playback_detail'}
    assert result['backend'] == 'espeak_ng' and result['playback'] == 'finished'
    uid = result['utterance_id']
    assert spin_until(ros_node, lambda: heard.ended(uid), 30.0)
    chunks = heard.chunks[uid]
    assert len(chunks) >= 2 and chunks[-1].final and not chunks[-1].cancelled
    assert {(c.sample_rate, c.channels, c.encoding) for c in chunks} == {
        (22050, 1, AudioChunk.ENCODING_PCM_S16LE)}
    assert result['first_chunk_ms'] > 0

    path = out / f'{uid}.wav'
    # Paced at the speed of speech; complete when it appears (written aside, then renamed).
    assert spin_until(ros_node, path.exists, 30.0), speaker.output()
    samples, rate = soundfile.read(path, dtype='int16')
    assert rate == 22050
    assert 0.5 <= len(samples) / rate <= 4.0
    assert rms(samples) > 1000  # speech; silence is ~0
    assert samples.tobytes() == heard.audio(uid)
    assert result['audio_seconds'] == pytest.approx(len(samples) / rate, abs=1e-3)


def test_a_call_answers_after_the_speaker_finished(say_stack, ros_node):
    call, heard, out, _, speaker = say_stack()
    response = call({'text': 'The file is complete when I answer.'})
    assert response.success, response.error_message
    result = json.loads(response.content)
    assert result['playback'] == 'finished'
    path = pathlib.Path(result['playback_detail'])
    assert path == out / f'{result["utterance_id"]}.wav'
    info = soundfile.info(path)  # already closed and complete: no waiting needed here
    assert info.frames * 2 == len(heard.audio(result['utterance_id']))

    speaker.stop()
    assert spin_until(ros_node, lambda: ros_node.count_subscribers(AUDIO_TOPIC) == 1, 10.0)
    time.sleep(0.3)
    response = call({'text': 'Is anyone there?'})
    assert response.error_code == ErrorCodes.UNAVAILABLE
    assert 'speaker' in response.error_message


def test_a_listener_that_never_matches_does_not_stop_playback_being_awaited(
        say_stack, ros_node):
    # A waiting call first waits until its audio reaches every speaker; a subscriber whose QoS
    # can never match (it asks for transient-local audio) must not make it fail or hang.
    call, heard, out, _, _ = say_stack()
    ros_node.create_subscription(AudioChunk, AUDIO_TOPIC, lambda message: None, QoSProfile(
        depth=10, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    assert spin_until(ros_node, lambda: ros_node.count_subscribers(AUDIO_TOPIC) == 3, 10.0)
    for text in ('Still heard.', 'And again.'):
        response = call({'text': text})
        assert response.success, response.error_message
        result = json.loads(response.content)
        assert result['playback'] == 'finished'
        info = soundfile.info(pathlib.Path(result['playback_detail']))
        assert info.frames * 2 == len(heard.audio(result['utterance_id']))


def test_empty_and_too_long_text_is_rejected_as_invalid_arguments(say_stack, ros_node):
    call, heard, _, _, _ = say_stack('max_chars:=40', speaker=False)
    for text in ('', '   \n\t '):
        response = call({'text': text})
        assert response.error_code == ErrorCodes.INVALID_ARGUMENTS
        assert 'empty' in response.error_message
    response = call({'text': 'x' * 41})
    assert response.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert 'at most 40' in response.error_message and '41' in response.error_message
    response = call({'words': 'hello'})
    assert response.error_code == ErrorCodes.INVALID_ARGUMENTS
    spin_until(ros_node, lambda: False, 0.3)
    assert heard.chunks == {}  # nothing was spoken for any of them
    # Valid text, but no speaker could play it: never `ok` for what nobody can hear.
    response = call({'text': 'x' * 40})
    assert response.error_code == ErrorCodes.UNAVAILABLE
    assert 'no speaker is running' in response.error_message
    assert heard.chunks == {}


def _processes_mentioning(marker: str) -> list[str]:
    found = []
    for entry in pathlib.Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode()
            except OSError:
                continue
            if marker in cmdline:
                found.append(cmdline)
    return found


def test_shell_metacharacters_are_spoken_not_run(say_stack, ros_node, request):
    # Long audio: the speaker writes it as fast as it comes rather than at speaking pace.
    call, heard, out, _, _ = say_stack(speaker_params=('realtime:=false',))
    # A short directory: the whole text must fit in say's 500 characters wherever pytest runs.
    victim = pathlib.Path(tempfile.mkdtemp(prefix='lt'))
    request.addfinalizer(lambda: shutil.rmtree(victim, ignore_errors=True))
    keep = victim / 'keep'
    keep.mkdir()
    text = (f'"; touch {victim}/a; $(touch {victim}/b) `touch {victim}/c` '
            f'| sleep 31.4159 & --help -v xx\n'
            f"rm -rf {keep} '$HOME' > {victim}/d $(sleep 27.1828) ${{IFS}} && exit 1")
    assert len(text) <= 500
    response = call({'text': text}, timeout=30.0)
    assert response.success, response.error_message
    result = json.loads(response.content)
    samples, rate = soundfile.read(result['playback_detail'], dtype='int16')
    assert len(samples) / rate > 3.0 and rms(samples) > 1000  # all of it was read out
    assert sorted(p.name for p in victim.iterdir()) == ['keep']
    assert keep.is_dir()
    assert _processes_mentioning('31.4159') == [] and _processes_mentioning('27.1828') == []


@pytest.mark.skipif(importlib.util.find_spec('pocket_tts') is None,
                    reason='pocket-tts is not installed (bootstrap installs torch and '
                           'pocket-tts==4.0.1)')
def test_pocket_tts_streams_24khz_chunks_and_stop_cuts_it_short(say_stack, ros_node, tmp_path):
    from tiny_pocket_model import build_tiny_model_config

    config = build_tiny_model_config(tmp_path / 'tiny_model')
    call, heard, _, server, _ = say_stack(
        'backend:=pocket_tts', f'config:={config}', 'eos_threshold:=-1e9', sink='null')
    text = ' '.join(f'Sentence number {i} is here.' for i in range(14))

    # A bound on a hang: the tiny model's whole text, with other tests' processes beside it.
    response = call({'text': text}, timeout=90.0)
    assert response.success, response.error_message
    full = json.loads(response.content)
    assert full['backend'] == 'pocket_tts'
    uid = full['utterance_id']
    assert spin_until(ros_node, lambda: heard.ended(uid), 5.0)
    audio_chunks = [c for c in heard.chunks[uid] if len(c.data)]
    assert len(audio_chunks) > 10
    assert {(c.sample_rate, c.channels) for c in audio_chunks} == {(24000, 1)}
    assert all(len(c.data) // 2 % 1920 == 0 for c in audio_chunks)
    assert full['audio_seconds'] == pytest.approx(len(heard.audio(uid)) / 2 / 24000, abs=1e-3)
    assert full['audio_seconds'] > 5.0

    stop = ros_node.create_client(Trigger, '/tool_server/stop')
    prove_service(ros_node, stop, Trigger.Request())  # nothing speaks: stops nothing
    say = ros_node.create_client(CallTool, '/lerobot_tools/say')
    prove_service(ros_node, say, CallTool.Request(name=READINESS_PROBE))
    before = set(heard.chunks)
    pending = say.call_async(
        CallTool.Request(call_id='s', name='say', arguments=json.dumps({'text': text})))
    assert spin_until(ros_node, lambda: set(heard.chunks) - before, 10.0), server.output()
    stopped = stop.call_async(Trigger.Request())
    assert spin_until(ros_node, lambda: stopped.done() and pending.done(), 10.0)
    assert stopped.result().success, stopped.result().message
    response = pending.result()
    assert response.success, response.error_message
    cut = json.loads(response.content)
    assert cut['stopped'] is True
    assert cut['audio_seconds'] < full['audio_seconds'] / 2
    assert spin_until(ros_node, lambda: heard.ended(cut['utterance_id']), 5.0)
    last = heard.chunks[cut['utterance_id']][-1]
    assert last.final and last.cancelled


def test_auto_falls_back_to_espeak_with_exactly_one_warning(start_node, ros_node, ros_env):
    env = dict(ros_env, HF_HUB_OFFLINE='1')  # no weights here; fail fast instead of retrying
    server = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[say]', env=env)
    start_node('lerobot_tools_ros.speaker.node', '-p', 'sink:=null', '-p', 'realtime:=false')
    client = ros_node.create_client(CallTool, '/lerobot_tools/say')
    assert spin_until(ros_node, client.service_is_ready, 45.0), server.output()
    prove_service(ros_node, client, CallTool.Request(name=READINESS_PROBE))
    future = client.call_async(CallTool.Request(call_id='a', name='say',
                                                arguments='{"text": "fallback"}'))
    assert spin_until(ros_node, future.done, 20.0)
    assert json.loads(future.result().content)['backend'] == 'espeak_ng'
    warnings = [line for line in server.output().splitlines() if '[WARN]' in line]
    assert len(warnings) == 1, server.output()
    assert 'using espeak-ng because pocket-tts' in warnings[0]


def test_plain_python_say_streams_to_a_callback_and_stops():
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.say import SayTool

    pieces = []
    tool = SayTool(DEFAULT_TOOLS[0], backend='espeak_ng', on_chunk=pieces.append)
    try:
        result = tool.call({'text': 'Plain Python works too.'})
        assert result['backend'] == 'espeak_ng' and 'stopped' not in result
        assert [p.utterance_id for p in pieces] == [result['utterance_id']] * len(pieces)
        assert pieces[-1].final and not pieces[-1].cancelled
        audio = sum(len(p.data) for p in pieces)
        assert result['audio_seconds'] == pytest.approx(audio / 2 / 22050, abs=1e-3)

        pieces.clear()

        def stop_at_first_audio(piece):
            pieces.append(piece)
            if len(pieces) == 1:
                assert tool.stop()[0]

        tool._on_chunk = stop_at_first_audio
        result = tool.call({'text': 'This long sentence is cut off right after it starts. ' * 8})
        assert result['stopped'] is True
        assert result['audio_seconds'] < 2.0
        assert pieces[-1].final and pieces[-1].cancelled
    finally:
        tool.close()


@pytest.mark.parametrize('params, message', [
    ({'backend': 'festival'}, 'backend must be one of'),
    ({'max_chars': 0}, 'max_chars must be a positive integer'),
    ({'eos_threshold': 'low'}, 'eos_threshold must be empty'),
    ({'backend': 'espeak_ng', 'rate': 5}, 'rate must be between 80 and 450'),
    ({'backend': 'espeak_ng', 'voice': '--help; rm'}, 'voice must be a voice name'),
])
def test_bad_parameters_are_refused_at_construction(params, message):
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.say import SayTool

    with pytest.raises(ValueError, match=message):
        SayTool(DEFAULT_TOOLS[0], **params)


def test_unknown_backend_stops_the_server_with_a_clear_message(start_node):
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[say]',
                      '-p', 'tool.say.backend:=festival')
    assert proc.proc.wait(30) == 78  # a configuration error: one line
    assert "'tool.say.backend' must be one of auto, pocket_tts, espeak_ng" in proc.output()


# ------------------------------------------------------ progress, cancel, stop (in-process say)
LONG_TEXT = 'This sentence is long enough to be cut off while the speaker is playing it. ' * 2


class Running:
    """A `say` call on its own thread, with a CallContext whose feedback is recorded."""

    def __init__(self, tool, text: str) -> None:
        from lerobot_tools_ros.tools.base import CallContext

        self.feedback: list[tuple[str, float, str]] = []
        self.context = CallContext('c1', lambda *report: self.feedback.append(report))
        self.result = None
        self.error = None
        self._thread = threading.Thread(target=self._run, args=(tool, text))
        self._thread.start()

    def _run(self, tool, text: str) -> None:
        try:
            self.result = tool.call({'text': text}, self.context)
        except ToolError as exc:
            self.error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def played_s(self) -> float:
        played = [float(detail.split()[0]) for stage, _, detail in self.feedback
                  if stage == 'playing' and detail.endswith(' s played')]
        return max(played, default=0.0)


@pytest.fixture
def local_say(start_node, ros_node, tmp_path):
    """Start a speaker process and a `say` tool bound to the test node (spun by the test)."""
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.say import SayTool

    tools = []

    def start(**params):
        out = tmp_path / 'audio'
        speaker = start_node('lerobot_tools_ros.speaker.node', '-p', 'sink:=wav',
                             '-p', f'output_dir:={out}')
        tool = SayTool(DEFAULT_TOOLS[0], backend='espeak_ng', **params)
        tools.append(tool)
        tool.bind(RosToolHost(ros_node))
        assert spin_until(ros_node, lambda: tool._publisher.get_subscription_count() >= 1
                          and ros_node.count_publishers('/speaker/status') >= 1, 20.0), (
            speaker.output())
        spin_until(ros_node, lambda: False, 0.3)
        return tool, out, speaker

    yield start
    for tool in tools:
        tool.close()


def test_say_feedback_follows_what_the_speaker_played(local_say, ros_node):
    tool, out, _ = local_say()
    running = Running(tool, 'Progress comes from the speaker.')
    assert spin_until(ros_node, running.done, 20.0)
    assert running.error is None, running.error
    stages = [stage for stage, _, _ in running.feedback]
    assert stages[0] == 'synthesizing' and stages[-1] == 'playing'
    assert stages.index('playing') > stages.index('synthesizing')
    progress = [value for stage, value, _ in running.feedback if stage == 'playing'
                and value >= 0]
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert len(set(progress)) >= 5  # reported while it played, not only at the end
    samples, rate = soundfile.read(out / f'{running.result["utterance_id"]}.wav')
    assert running.played_s() == pytest.approx(len(samples) / rate, abs=0.01)


def test_cancel_mid_utterance_ends_cancelled_and_the_wav_is_shorter(local_say, ros_node):
    tool, out, _ = local_say()
    full = Running(tool, LONG_TEXT)
    assert spin_until(ros_node, full.done, 30.0)
    assert full.error is None, full.error
    full_frames = soundfile.info(out / f'{full.result["utterance_id"]}.wav').frames

    cut = Running(tool, LONG_TEXT)
    assert spin_until(ros_node, lambda: cut.played_s() >= 1.0, 20.0), cut.feedback
    cut.context.cancel()
    assert spin_until(ros_node, cut.done, 5.0)
    assert cut.error is not None and cut.error.code == ErrorCodes.CANCELLED
    assert 's had been played' in cut.error.message
    wavs = [p for p in out.glob('*.wav') if p.stem != full.result['utterance_id']]
    assert len(wavs) == 1
    cut_frames = soundfile.info(wavs[0]).frames
    assert 1.0 * 22050 <= cut_frames < full_frames / 2


def test_a_speaker_stopped_mid_utterance_is_no_success_and_says_what_it_played(
        local_say, ros_node):
    """SIGTERM to the speaker while it plays: the rest is not heard, so say does not succeed."""
    from lerobot_tools_interfaces.msg import SpeakerStatus
    statuses: list = []  # what the speaker reported, by its sink's own count
    ros_node.create_subscription(SpeakerStatus, '/speaker/status', statuses.append,
                                 QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE))
    tool, out, speaker = local_say(playback_timeout_s=60.0)
    running = Running(tool, LONG_TEXT)
    assert spin_until(ros_node, lambda: running.played_s() >= 1.0, 20.0), running.feedback
    speaker.proc.send_signal(signal.SIGTERM)
    assert spin_until(ros_node, running.done, 20.0)
    assert speaker.proc.wait(10.0) == 0
    assert running.error is not None, running.result  # not a success
    assert running.error.code == ErrorCodes.EXECUTION_FAILED, running.error.message
    assert running.error.outcome in ('', 'ran')  # it spoke part of it (tool_server: ran)
    last = [s for s in statuses if s.state != SpeakerStatus.PLAYING][-1]
    assert last.state == SpeakerStatus.DROPPED, last
    played_s = last.frames_played / last.sample_rate
    assert 1.0 <= played_s < last.frames_total / last.sample_rate
    assert f'{played_s:.2f} s of {last.frames_total / last.sample_rate:.2f} s played' in \
        running.error.message
    # The file still holds all of it (written out at shutdown): it was not lost, only unheard.
    (wav,) = out.glob('*.wav')
    assert soundfile.info(wav).frames == last.frames_total


def test_stop_releases_a_call_waiting_on_a_dead_speaker_at_once(local_say, ros_node):
    tool, _, speaker = local_say(playback_timeout_s=60.0)
    running = Running(tool, LONG_TEXT)
    assert spin_until(ros_node, lambda: running.played_s() >= 0.5, 20.0), running.feedback
    speaker.kill()
    assert tool.stop()[0]
    # The old code waited for the audio plus playback_timeout_s (over a minute here).
    assert spin_until(ros_node, running.done, 3.0)
    assert running.error is None and running.result['stopped'] is True
    assert running.result['playback'] == 'stopped'


def test_a_speaker_leaving_the_graph_ends_the_wait_with_a_clear_error(local_say, ros_node):
    tool, _, speaker = local_say(playback_timeout_s=60.0)
    running = Running(tool, LONG_TEXT)
    assert spin_until(ros_node, lambda: running.played_s() >= 0.5, 20.0), running.feedback
    speaker.kill()  # a crash: no status will ever come
    # DDS notices a killed participant when its lease ends (about 20 s with Fast DDS's
    # defaults); the old code waited for the audio plus playback_timeout_s (over a minute).
    assert spin_until(ros_node, running.done, 45.0)
    assert running.error is not None and running.error.code == ErrorCodes.ANSWER_LOST
    assert 'the speaker left the graph' in running.error.message


# ----------------------------------------------------------------- through a real sound device
def _offset(reference: np.ndarray, signal: np.ndarray) -> int:
    """Where ``reference`` starts within ``signal`` (FFT cross-correlation)."""
    size = 1 << int(np.ceil(np.log2(len(reference) + len(signal))))
    spectrum = np.fft.rfft(signal, size) * np.conj(np.fft.rfft(reference, size))
    return int(np.argmax(np.fft.irfft(spectrum, size)[:len(signal)]))


def test_say_plays_on_the_sound_device_that_auto_picks(say_stack, ros_node, ros_env, tmp_path):
    import soxr
    from alsa_device import AlsaFileDevice, require_alsa_and_portaudio

    require_alsa_and_portaudio()
    device = AlsaFileDevice(tmp_path / 'alsa')
    call, heard, out, _, _ = say_stack(sink='auto',
                                       env=device.env(ros_env))
    response = call({'text': 'hello world'})
    assert response.success, response.error_message
    result = json.loads(response.content)
    assert result['playback'] == 'finished'
    assert result['playback_detail'] == "played on 'default' at 48000 Hz x2"
    assert not out.exists()  # auto chose the device, not WAV files
    sent = np.frombuffer(heard.audio(result['utterance_id']), dtype='<i2')
    expected = soxr.resample(sent.astype(np.float32), 22050, 48000)
    played = device.frames().astype(np.float32)
    assert np.array_equal(played[:, 0], played[:, 1])
    start = _offset(expected, played[:, 0])
    assert start <= 2 * 960  # at most the device buffer PortAudio starts with silence
    segment = played[start:start + len(expected), 0]
    assert len(segment) == len(expected)  # the whole utterance reached the device
    assert np.corrcoef(segment, expected)[0, 1] > 0.999  # and it is that utterance
    assert not played[start + len(expected) + 960:].any()  # then silence


def test_say_waiting_on_a_failing_device_ends_with_a_clear_error(say_stack, ros_env, tmp_path):
    from alsa_device import AlsaFileDevice, require_alsa_and_portaudio

    require_alsa_and_portaudio()
    device = AlsaFileDevice(tmp_path / 'alsa')
    call, _, _, _, speaker = say_stack(sink='sounddevice',
                                       env=device.env(ros_env))
    device.card.rmdir()  # the sound card's output fails from now on
    response = call({'text': 'Can you hear me?'})
    assert response.error_code == ErrorCodes.EXECUTION_FAILED
    assert response.error_message.startswith(
        "say: the speaker could not play the utterance: 'default' stopped taking audio after")
    assert speaker.proc.poll() is None
    device.card.mkdir()
    response = call({'text': 'Now you can.'})
    assert response.success, response.error_message
    assert json.loads(response.content)['playback'] == 'finished'
    assert device.frames().any()


def test_a_cancelled_context_stops_synthesis_and_ends_cancelled():
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.base import CallContext
    from lerobot_tools_ros.tools.say import SayTool

    pieces = []
    context = CallContext('c')

    def cancel_at_first_audio(piece):
        pieces.append(piece)
        context.cancel()

    tool = SayTool(DEFAULT_TOOLS[0], backend='espeak_ng', on_chunk=cancel_at_first_audio)
    try:
        with pytest.raises(ToolError) as caught:
            tool.call({'text': 'This long sentence is cancelled right after it starts. ' * 8},
                      context)
        assert caught.value.code == ErrorCodes.CANCELLED
        assert caught.value.message.startswith('say: cancelled after ')
        audio = [p for p in pieces if p.data]
        assert len(audio) == 1  # synthesis stopped at the first chunk
        assert pieces[-1].final and pieces[-1].cancelled
        assert {p.utterance_id for p in pieces} == {audio[0].utterance_id}
    finally:
        tool.close()


def test_a_speaker_stopped_cleanly_writes_out_the_utterance_but_it_was_not_all_heard(
        local_say, ros_node):
    tool, out, speaker = local_say(playback_timeout_s=60.0)
    running = Running(tool, LONG_TEXT)
    assert spin_until(ros_node, lambda: running.played_s() >= 0.5, 20.0), running.feedback
    speaker.stop()  # Ctrl-C: the whole utterance is there, so the WAV is written out
    assert spin_until(ros_node, running.done, 30.0), speaker.output()
    # ... but the rest of it was never played: no success.
    assert running.error is not None and running.error.code == ErrorCodes.EXECUTION_FAILED
    assert 'speaker shutting down' in running.error.message
    (wav,) = out.glob('*.wav')
    assert soundfile.info(wav).frames > 0.5 * 22050
