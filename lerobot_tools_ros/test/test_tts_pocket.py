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
The pocket_tts backend running pocket-tts' real generation code on a tiny offline model.

The model has random weights (``tiny_pocket_model``): it produces noise, not speech, but the
text splitting, the generator and decoder threads, streaming and ``stop`` are pocket-tts' own.
"""

import logging
import os
import subprocess
import sys
import threading
import time

from lerobot_tools_ros.tts import (
    make_backend, PocketTtsBackend, TtsBackend, TtsError, TtsUnavailable,
)
import numpy as np
import pytest
import soundfile
from tiny_pocket_model import build_tiny_model_config, TINY_EOS_THRESHOLD


FRAME_SAMPLES = 1920  # one Mimi frame: 24000 Hz / 12.5 Hz
# With end-of-speech disabled (threshold 1e9), pocket-tts generates this sentence up to its own
# length cap: 192 frames, 15 s of noise, ~1.7 s of work here. A stream that was abandoned
# instead of stopped and drained would keep its threads busy that long.
CAPPED_SENTENCE = 'This sentence keeps going until the cap.'
THREADS_GONE_WITHIN = 1.0  # seconds; far less than the capped generation takes


@pytest.fixture(scope='module', autouse=True)
def pocket_tts():
    """
    Pocket-tts itself: every test here skips where it is not installed.

    A skip here, not at import: on a ROS install the launch_testing pytest plugin imports every
    test module of the directory, and one module-level skip would empty the whole collection.
    """
    return pytest.importorskip(
        'pocket_tts', reason='pocket-tts is not installed; install torch==2.13.0 then '
                             'pocket-tts==4.0.1 (requirements-tts.txt)')


@pytest.fixture(scope='module')
def tiny_config(tmp_path_factory):
    return build_tiny_model_config(tmp_path_factory.mktemp('tiny_pocket'))


@pytest.fixture(scope='module')
def pocket(tiny_config) -> PocketTtsBackend:
    """Load the tiny model as tests and benchmarks use it: sentences end after ~9 frames."""
    backend = make_backend('pocket_tts', config=str(tiny_config),
                           eos_threshold=TINY_EOS_THRESHOLD)
    backend.warm_up()
    return backend


@pytest.fixture(scope='module')
def endless(tiny_config) -> PocketTtsBackend:
    """Load the tiny model with end-of-speech disabled: it stops at pocket-tts' length cap."""
    return make_backend('pocket_tts', config=str(tiny_config), eos_threshold=1e9)


@pytest.fixture
def hub_offline(monkeypatch, tmp_path):
    """
    HF_HUB_OFFLINE=1 and an empty hub cache: the released model cannot load.

    huggingface_hub reads the variable once, at import, so its constant is set as well.
    """
    import huggingface_hub.constants

    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    monkeypatch.setattr(huggingface_hub.constants, 'HF_HUB_OFFLINE', True)
    monkeypatch.setattr(huggingface_hub.constants, 'HF_HUB_CACHE', str(tmp_path / 'hub'))


def samples_per_chunk(chunks: list[bytes]) -> list[int]:
    assert all(len(chunk) % 2 == 0 for chunk in chunks)
    return [len(chunk) // 2 for chunk in chunks]


def wait_for_threads(before: set, timeout: float = THREADS_GONE_WITHIN) -> set:
    """Threads started since ``before`` that are still alive after up to ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        extra = {thread for thread in threading.enumerate() if thread not in before}
        if not extra or time.monotonic() > deadline:
            return extra
        time.sleep(0.02)


def test_chunks_are_whole_mimi_frames_at_24khz(pocket):
    chunks = list(pocket.synthesize('Hello world.', threading.Event()))
    sizes = samples_per_chunk(chunks)
    assert isinstance(pocket, TtsBackend)
    assert (pocket.name, pocket.sample_rate, pocket.channels) == ('pocket_tts', 24000, 1)
    assert sizes and all(size > 0 and size % FRAME_SAMPLES == 0 for size in sizes)
    # Random weights never reach EOS; the threshold ends the sentence after a few frames.
    assert 0.2 <= sum(sizes) / pocket.sample_rate <= 2.0
    pcm = np.frombuffer(b''.join(chunks), dtype='<i2')
    assert np.abs(pcm).max() > 0


def test_stop_ends_generation_early_and_leaves_no_worker_threads(endless):
    full = samples_per_chunk(list(endless.synthesize(CAPPED_SENTENCE, threading.Event())))
    before = set(threading.enumerate())
    stop = threading.Event()
    received = []
    for chunk in endless.synthesize(CAPPED_SENTENCE, stop):
        received.append(chunk)
        stop.set()
    stopped = samples_per_chunk(received)
    assert len(stopped) == 1 and stopped[0] % FRAME_SAMPLES == 0
    assert sum(stopped) < sum(full) / 10
    assert wait_for_threads(before) == set()


def test_abandoned_stream_is_drained_and_releases_the_model(endless):
    before = set(threading.enumerate())
    stream = endless.synthesize(CAPPED_SENTENCE, threading.Event())
    assert next(stream)
    stream.close()
    assert wait_for_threads(before) == set()
    again = endless.synthesize('Again.', threading.Event())
    assert next(again)  # the model lock was released
    again.close()


def test_generations_are_serialised(endless):
    first = endless.synthesize(CAPPED_SENTENCE, threading.Event())
    assert next(first)
    second_chunks = []
    second = threading.Thread(target=lambda: second_chunks.extend(
        endless.synthesize('Second.', threading.Event())))
    second.start()
    second.join(0.3)
    assert second.is_alive() and second_chunks == []  # waits for the model
    first.close()
    second.join(10)
    assert not second.is_alive() and second_chunks


def test_waiting_generation_gives_up_when_stopped(endless):
    first = endless.synthesize(CAPPED_SENTENCE, threading.Event())
    assert next(first)
    stop = threading.Event()
    stop.set()
    assert list(endless.synthesize('Never spoken.', stop)) == []
    first.close()


def test_empty_text_yields_nothing(pocket):
    assert list(pocket.synthesize('   ', threading.Event())) == []


def test_voice_from_audio_file_and_from_saved_state(pocket_tts, tiny_config, tmp_path):
    prompt = tmp_path / 'voice.wav'
    noise = np.random.default_rng(0).normal(0.0, 0.1, 24000).astype(np.float32)
    soundfile.write(prompt, noise, 24000)
    from_audio = PocketTtsBackend(config=str(tiny_config), voice=str(prompt),
                                  eos_threshold=TINY_EOS_THRESHOLD)
    state = tmp_path / 'voice.safetensors'
    pocket_tts.export_model_state(from_audio._state, state)
    from_state = PocketTtsBackend(config=str(tiny_config), voice=str(state),
                                  eos_threshold=TINY_EOS_THRESHOLD)
    for backend in (from_audio, from_state):
        sizes = samples_per_chunk(list(backend.synthesize('Hi there.', threading.Event())))
        assert sizes and all(size % FRAME_SAMPLES == 0 for size in sizes)


def test_auto_picks_pocket_tts_when_its_model_loads(tiny_config, caplog):
    logger = logging.getLogger('test_tts_pocket.auto_ok')
    with caplog.at_level(logging.WARNING, logger=logger.name):
        backend = make_backend('auto', logger=logger, pocket_tts={
            'config': str(tiny_config), 'eos_threshold': TINY_EOS_THRESHOLD})
    assert backend.name == 'pocket_tts'
    assert [r for r in caplog.records if r.name == logger.name] == []


def test_auto_falls_back_to_espeak_with_one_warning(hub_offline, caplog):
    logger = logging.getLogger('test_tts_pocket.auto_fallback')
    with caplog.at_level(logging.WARNING, logger=logger.name):
        backend = make_backend('auto', logger=logger, pocket_tts={'language': 'english'},
                               espeak_ng={'rate': 200})
    assert (backend.name, backend.rate) == ('espeak_ng', 200)
    warnings = [r for r in caplog.records if r.name == logger.name]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert 'pocket-tts' in warnings[0].getMessage()
    assert 'could not load its model' in warnings[0].getMessage()


def test_pocket_tts_without_weights_is_unavailable_with_the_reason(hub_offline):
    with pytest.raises(TtsUnavailable, match=r"could not load its model \(language 'english'\)"):
        make_backend('pocket_tts', language='english')


def test_builtin_voice_needs_the_released_model(tiny_config):
    with pytest.raises(TtsUnavailable, match=r"could not prepare voice 'alba'"):
        PocketTtsBackend(config=str(tiny_config), voice='alba')


@pytest.mark.parametrize('params, message', [
    ({'language': 'klingon'}, r"no language 'klingon'; choose one of .*english"),
    ({'config': '/nonexistent/model.yaml'}, r'does not exist'),
    ({'config': '/etc/hostname'}, r'must be a \.yaml file'),
    ({'voice': '/nonexistent/voice.wav'}, r'voice file .* does not exist'),
    ({'quantize': 'yes'}, r'quantize must be true or false'),
    ({'threads': -1}, r'threads must be an integer >= 0'),
    ({'eos_threshold': 'low'}, r'eos_threshold must be a number'),
    ({'temperature': 0.5}, r'unknown pocket_tts parameter\(s\) temperature'),
])
def test_bad_parameters_are_rejected_clearly(params, message):
    with pytest.raises(ValueError, match=message):
        make_backend('pocket_tts', **params)


def test_closed_backend_refuses_text(tiny_config):
    backend = PocketTtsBackend(config=str(tiny_config), eos_threshold=TINY_EOS_THRESHOLD)
    backend.close()
    with pytest.raises(TtsError, match='closed'):
        list(backend.synthesize('Hello.', threading.Event()))


def test_offline_mode_for_an_unreachable_hub_is_scoped_to_the_load(tmp_path):
    # A fresh process (huggingface_hub not imported yet, as in a node), a hub nobody answers
    # at, an empty cache, and offline mode not asked for.
    env = {key: value for key, value in os.environ.items() if key != 'HF_HUB_OFFLINE'}
    env.update(HF_ENDPOINT='http://127.0.0.1:9', HF_HUB_CACHE=str(tmp_path / 'hub'),
               HF_HOME=str(tmp_path / 'home'))
    code = """
import os
import sys
from lerobot_tools_ros.tts import PocketTtsBackend, TtsUnavailable
try:
    PocketTtsBackend(language='english')
except TtsUnavailable as exc:
    print('unavailable:', 'could not load its model' in str(exc))
# Known from the cache before importing torch: a node falling back to espeak-ng starts at once.
print('torch imported:', 'torch' in sys.modules)
import huggingface_hub.constants
print('env:', os.environ.get('HF_HUB_OFFLINE'))
print('constant:', huggingface_hub.constants.HF_HUB_OFFLINE)
"""
    done = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                          text=True, timeout=120)
    # The old code left HF_HUB_OFFLINE=1 (and the constant) set for the rest of the process.
    assert done.stdout.splitlines() == ['unavailable: True', 'torch imported: False',
                                        'env: None', 'constant: False'], (
        done.stdout + done.stderr)
