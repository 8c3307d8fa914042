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

"""The espeak_ng backend, run against the real espeak-ng program."""

import threading

from lerobot_tools_ros.tts import (
    AudioFormat, backend_defaults, BACKENDS, EspeakNgBackend, KINDS, make_backend, TtsBackend,
    TtsError, TtsUnavailable,
)
import numpy as np
import psutil
import pytest

LONG_TEXT = ' '.join(f'This is sentence number {n} of a long announcement.' for n in range(40))


@pytest.fixture(scope='module')
def espeak() -> EspeakNgBackend:
    backend = make_backend('espeak_ng')
    backend.warm_up()
    return backend


def speak(backend: EspeakNgBackend, text: str) -> tuple[list[bytes], np.ndarray]:
    chunks = list(backend.synthesize(text, threading.Event()))
    return chunks, np.frombuffer(b''.join(chunks), dtype='<i2')


def rms(pcm: np.ndarray) -> float:
    return float(np.sqrt(np.mean(pcm.astype(np.float64) ** 2))) if pcm.size else 0.0


def espeak_children() -> list[psutil.Process]:
    children = psutil.Process().children(recursive=True)
    return [child for child in children if 'espeak' in child.name()]


def test_hello_world_is_audible_speech_of_plausible_length(espeak):
    chunks, pcm = speak(espeak, 'hello world')
    fmt = AudioFormat.of(espeak)
    assert isinstance(espeak, TtsBackend)
    assert (espeak.name, fmt.channels, fmt.encoding) == ('espeak_ng', 1, 'pcm_s16le')
    assert espeak.sample_rate == 22050
    assert len(chunks) >= 1
    assert all(len(chunk) > 0 and len(chunk) % fmt.frame_bytes == 0 for chunk in chunks)
    assert 0.5 <= pcm.size / espeak.sample_rate <= 4.0
    assert rms(pcm) > 500  # silence is 0; espeak-ng speech is ~2000


def test_shell_metacharacters_are_spoken_not_interpreted(espeak, tmp_path):
    targets = [tmp_path / name for name in ('pwned_a', 'pwned_b', 'pwned_c', 'x.wav')]
    first_line = (f'"; touch {targets[0]}; $(touch {targets[1]}) `touch {targets[2]}` '
                  f"'quoted' --help -w {targets[3]}")
    _, pcm = speak(espeak, first_line + '\nsecond line')
    _, first_only = speak(espeak, first_line)
    assert rms(pcm) > 500
    # The text after the newline was spoken too, not cut off or taken as another argument.
    assert pcm.size > first_only.size + 0.3 * espeak.sample_rate
    assert [target for target in targets if target.exists()] == []
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('text', ['-', '--help', '-w out.wav', '-v xx -s 999'])
def test_text_that_looks_like_options_is_not_taken_as_options(espeak, tmp_path, monkeypatch,
                                                              text):
    monkeypatch.chdir(tmp_path)
    chunks, _ = speak(espeak, text)
    assert all(len(chunk) % 2 == 0 for chunk in chunks)
    assert list(tmp_path.iterdir()) == []


def test_awkward_text_does_not_crash(espeak):
    _, pcm = speak(espeak, 'h\u00e9llo\x00 w\u00f6rld \ud800 \U0001f916 <b>bold</b> &amp;')
    assert rms(pcm) > 500
    assert speak(espeak, '')[0] == []
    assert speak(espeak, ' \n\t ')[0] == []


def test_rate_changes_the_speaking_speed():
    text = 'the quick brown fox jumps over the lazy dog'
    _, slow = speak(make_backend('espeak_ng', rate=100), text)
    _, fast = speak(make_backend('espeak_ng', rate=350), text)
    assert fast.size < 0.5 * slow.size


def test_voice_variant_is_used(espeak):
    female = make_backend('espeak_ng', voice='en-us+f3')
    _, default_pcm = speak(espeak, 'hello world')
    _, variant_pcm = speak(female, 'hello world')
    assert rms(variant_pcm) > 500
    assert not np.array_equal(default_pcm, variant_pcm)


def test_stop_after_first_chunk_ends_stream_and_kills_program(espeak):
    _, full = speak(espeak, LONG_TEXT)
    stop = threading.Event()
    received = []
    for chunk in espeak.synthesize(LONG_TEXT, stop):
        received.append(chunk)
        stop.set()
    assert len(received) == 1
    assert len(received[0]) < 0.1 * full.nbytes
    assert espeak_children() == []


def test_abandoned_stream_kills_program_when_closed(espeak):
    stream = espeak.synthesize(LONG_TEXT, threading.Event())
    assert next(stream)
    assert len(espeak_children()) == 1  # still speaking, blocked on the full pipe
    stream.close()
    assert espeak_children() == []


def test_stop_set_before_start_yields_nothing(espeak):
    stop = threading.Event()
    stop.set()
    assert list(espeak.synthesize('hello world', stop)) == []
    assert espeak_children() == []


def test_missing_program_names_the_fix(tmp_path):
    with pytest.raises(TtsUnavailable, match=r'apt-get install espeak-ng'):
        make_backend('espeak_ng', executable=str(tmp_path / 'no-such-espeak-ng'))


def test_program_that_is_not_espeak_is_unavailable():
    with pytest.raises(TtsUnavailable, match=r'exit status 1'):
        EspeakNgBackend(executable='false')


def test_closed_backend_refuses_text():
    backend = make_backend('espeak_ng')
    backend.close()
    with pytest.raises(TtsError, match='closed'):
        list(backend.synthesize('hello', threading.Event()))


@pytest.mark.parametrize('params, message', [
    ({'rate': 79}, r'between 80 and 450'),
    ({'rate': 451}, r'between 80 and 450'),
    ({'rate': '175'}, r'integer number of words per minute'),
    ({'rate': 175.0}, r'integer number of words per minute'),
    ({'rate': True}, r'integer number of words per minute'),
    ({'voice': ''}, r'voice must be a voice name'),
    ({'voice': '-w /tmp/x'}, r'voice must be a voice name'),
    ({'voice': 'en us'}, r'voice must be a voice name'),
    ({'voice': 'nosuchvoice'}, r"no voice 'nosuchvoice'.*espeak-ng --voices"),
    ({'executable': ''}, r'executable must be'),
    ({'pitch': 50}, r'unknown espeak_ng parameter\(s\) pitch'),
])
def test_bad_parameters_are_rejected_clearly(params, message):
    with pytest.raises(ValueError, match=message):
        make_backend('espeak_ng', **params)


def test_factory_rejects_unknown_kind_and_flat_params_for_auto():
    with pytest.raises(ValueError, match=r"unknown TTS backend 'festival'.*auto"):
        make_backend('festival')
    with pytest.raises(ValueError, match=r'per backend'):
        make_backend('auto', voice='en-us')
    with pytest.raises(ValueError, match=r'must be a mapping'):
        make_backend('espeak_ng', espeak_ng='en-us')


def test_grouped_parameters_pick_the_chosen_backends_group():
    backend = make_backend('espeak_ng', espeak_ng={'voice': 'en-gb', 'rate': 200},
                           pocket_tts={'voice': 'alba'})
    assert (backend.name, backend.voice, backend.rate) == ('espeak_ng', 'en-gb', 200)


def test_backend_defaults_list_each_backends_parameters():
    assert backend_defaults('espeak_ng') == {
        'voice': 'en-us', 'rate': 175, 'executable': 'espeak-ng'}
    assert backend_defaults('pocket_tts') == {
        'language': 'english', 'config': '', 'voice': '', 'quantize': False, 'threads': 0,
        'eos_threshold': None}
    assert KINDS == ('auto', 'pocket_tts', 'espeak_ng') and set(BACKENDS) == set(KINDS[1:])
    with pytest.raises(ValueError, match='unknown TTS backend'):
        backend_defaults('auto')
