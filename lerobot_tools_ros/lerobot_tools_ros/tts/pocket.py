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
The ``pocket_tts`` backend: Kyutai's pocket-tts model, streamed chunk by chunk.

pocket-tts (4.0.1) and torch are imported in the constructor, never at module import: the
import alone takes seconds and sets torch to one thread process-wide, and robots without the
package must still be able to import this module (``auto`` then falls back to espeak-ng).

One model per backend, loaded once. pocket-tts is not thread-safe per model, so a lock lets one
generation run at a time; a second ``synthesize`` waits (and gives up when its ``stop`` is set).

Cancelling follows pocket-tts' own contract: its ``stop`` event is set and its stream is then
drained. Abandoning the stream instead would leave its generator and decoder threads running
until the maximum length. A few frames already queued when ``stop`` is set are decoded during
the drain and dropped, not yielded.

Offline: the released weights, tokenizer and built-in voices come from the Hugging Face hub.
Without network, loading fails (``TtsUnavailable``) unless they are in the local cache. When the
hub cannot be reached, the load runs in huggingface_hub's offline mode (so it fails or uses the
cache at once instead of retrying for about 20 s); that mode is switched on for the load call
only and restored afterwards, never left set for the rest of the process.
"""

import contextlib
import logging
import math
import os
from pathlib import Path
import re
import threading
import time
from typing import Any, Iterator, Optional, Union

from lerobot_tools_ros.hub import hub_endpoint, unreachable_reason
import numpy as np

from .base import AudioFormat, TtsError, TtsUnavailable

__all__ = ['INSTALL_HINT', 'PocketTtsBackend', 'bundled_languages']

INSTALL_HINT = ('install the CPU build of torch first (pip install torch==2.13.0), then '
                'pip install pocket-tts==4.0.1 (see requirements-tts.txt)')
_REMOTE_PREFIXES = ('hf://', 'http://', 'https://')
_AUDIO_SUFFIXES = ('.safetensors', '.wav', '.mp3', '.flac', '.ogg', '.opus', '.m4a')
_LOCK_POLL = 0.05  # seconds between checks of `stop` while another generation runs
_WARM_UP_TEXT = 'Hello.'
_HUB_PROBE_TIMEOUT_S = 3.0
# `key: hf://owner/repo/path/in/repo@revision` lines of a pocket-tts config YAML.
_HF_LINE = re.compile(r'^\s*(\w+):\s*(hf://\S+)\s*$', re.MULTILINE)


def bundled_languages() -> list[str]:
    """Language names pocket-tts ships configs for (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec('pocket_tts')
    if spec is None or not spec.submodule_search_locations:
        return []
    config_dir = Path(list(spec.submodule_search_locations)[0]) / 'config'
    return sorted(path.stem for path in config_dir.glob('*.yaml'))


class _EitherStop(threading.Event):
    """
    The event handed to pocket-tts: set by the caller's ``stop`` or by the backend itself.

    pocket-tts only polls ``is_set()`` (once per generated frame), so OR-ing the caller's
    event in there stops generation within one frame, without a watcher thread.
    """

    def __init__(self, outer: threading.Event) -> None:
        super().__init__()
        self._outer = outer

    def is_set(self) -> bool:
        return super().is_set() or self._outer.is_set()


def _to_pcm(chunk: Any) -> bytes:
    """Convert a float32 tensor in [-1, 1] to little-endian int16 bytes (noise may clip)."""
    samples = np.nan_to_num(chunk.detach().cpu().numpy(), nan=0.0, posinf=1.0, neginf=-1.0)
    samples = np.clip(samples, -1.0, 1.0) * 32767.0
    return np.rint(samples).astype('<i2').tobytes()


class PocketTtsBackend:
    """Speech from a pocket-tts model held in memory; one generation at a time."""

    name = 'pocket_tts'
    channels = 1

    def __init__(self, *, language: str = 'english', config: str = '', voice: str = '',
                 quantize: bool = False, threads: int = 0,
                 eos_threshold: Optional[float] = None) -> None:
        """
        Load the model and the voice once.

        ``config`` (a pocket-tts YAML) wins over ``language``. ``voice`` is a built-in voice
        name, a ``.safetensors`` voice state, an audio file, or '' for a silent one-second
        prompt that needs no download. ``threads`` 0 keeps torch's setting, which importing
        pocket-tts sets to 1 for the whole process; any other value calls
        ``torch.set_num_threads`` (also process-wide). ``eos_threshold`` overrides the config's
        end-of-speech threshold when given.

        Raises ValueError for bad parameters and TtsUnavailable when pocket-tts cannot be
        imported or its model or voice cannot be loaded (no weights offline, hub unreachable).
        """
        self.language, self.config = self._check_source(language, config)
        self.voice = self._check_voice(voice)
        if not isinstance(quantize, bool):
            raise ValueError(f'pocket_tts quantize must be true or false, got {quantize!r}')
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
            raise ValueError(f'pocket_tts threads must be an integer >= 0 (0 keeps the torch '
                             f'setting), got {threads!r}')
        if eos_threshold is not None and (
                isinstance(eos_threshold, bool) or not isinstance(eos_threshold, (int, float))
                or math.isnan(eos_threshold)):
            raise ValueError(f'pocket_tts eos_threshold must be a number or None, '
                             f'got {eos_threshold!r}')
        self.quantize = quantize
        self.threads = threads
        self.eos_threshold = eos_threshold
        self.timings: dict[str, float] = {}
        self._lock = threading.Lock()
        self._model, self._state = self._load()
        self.sample_rate = int(self._model.sample_rate)
        self.format = AudioFormat(sample_rate=self.sample_rate, channels=self.channels)

    @staticmethod
    def _check_source(language: str, config: Union[str, os.PathLike]) -> tuple[str, str]:
        config = os.fspath(config) if isinstance(config, os.PathLike) else config
        if not isinstance(config, str):
            raise ValueError(f'pocket_tts config must be a path to a YAML file, got {config!r}')
        if config:
            if Path(config.split('@')[0]).suffix not in ('.yaml', '.yml'):
                raise ValueError(f'pocket_tts config must be a .yaml file, got {config!r}')
            if not config.startswith(_REMOTE_PREFIXES) and not Path(config).is_file():
                raise ValueError(f'pocket_tts config file {config!r} does not exist')
            return '', config
        if not isinstance(language, str) or not language:
            raise ValueError(f'pocket_tts language must be a non-empty name such as '
                             f'"english", got {language!r}')
        known = bundled_languages()
        if known and language not in known:
            raise ValueError(f'pocket_tts has no language {language!r}; choose one of '
                             f'{", ".join(known)} or give a config YAML')
        return language, ''

    @staticmethod
    def _check_voice(voice: Union[str, os.PathLike]) -> Union[str, Path]:
        if isinstance(voice, os.PathLike):
            voice = os.fspath(voice)
        if not isinstance(voice, str):
            raise ValueError(f'pocket_tts voice must be a voice name or a file path, '
                             f'got {voice!r}')
        if not voice or voice.startswith(_REMOTE_PREFIXES):
            return voice
        looks_like_path = (os.sep in voice or '/' in voice
                           or voice.lower().endswith(_AUDIO_SUFFIXES))
        if looks_like_path or Path(voice).is_file():
            if not Path(voice).is_file():
                raise ValueError(f'pocket_tts voice file {voice!r} does not exist')
            return Path(voice)
        return voice

    def _load(self) -> tuple[Any, Any]:
        with contextlib.ExitStack() as scope:
            if not self.config:
                offline = scope.enter_context(_offline_if_hub_unreachable())
                missing = _not_in_cache(self.language) if offline else []
                if missing:
                    # Known before importing torch (seconds of CPU): `auto` falls back at once.
                    raise TtsUnavailable(
                        f'pocket-tts could not load its model (language {self.language!r}) '
                        f'offline ({offline}): not in the local Hugging Face cache: '
                        f'{", ".join(missing)}; run once with network access, or give a '
                        'config YAML with local weights')
            return self._load_model()

    def _load_model(self) -> tuple[Any, Any]:
        started = time.perf_counter()
        try:
            import pocket_tts
            import torch
        except (ImportError, OSError) as exc:
            raise TtsUnavailable(f'pocket-tts cannot be imported ({exc}); {INSTALL_HINT}') from exc
        loaded = time.perf_counter()
        self.timings['import'] = loaded - started
        if self.threads:
            torch.set_num_threads(self.threads)
        options: dict[str, Any] = {'quantize': self.quantize}
        if self.config:
            options['config'] = self.config
        else:
            options['language'] = self.language
        if self.eos_threshold is not None:
            options['eos_threshold'] = float(self.eos_threshold)
        source = self.config or f'language {self.language!r}'
        try:
            model = pocket_tts.TTSModel.load_model(**options)
        except Exception as exc:  # hub errors, missing files, bad YAML: all mean "no model"
            raise TtsUnavailable(
                f'pocket-tts could not load its model ({source}): {type(exc).__name__}: '
                f'{_one_line(exc)}') from exc
        self.timings['load'] = time.perf_counter() - loaded
        prompted = time.perf_counter()
        prompt = self.voice if self.voice != '' else torch.zeros(1, int(model.sample_rate))
        try:
            state = model.get_state_for_audio_prompt(prompt)
        except Exception as exc:
            raise TtsUnavailable(
                f'pocket-tts could not prepare voice {str(self.voice) or "(silent prompt)"!r} '
                f'for {source}: {type(exc).__name__}: {_one_line(exc)}') from exc
        self.timings['voice'] = time.perf_counter() - prompted
        return model, state

    def warm_up(self) -> None:
        """Generate one short sentence: the first generation of a fresh model is the slowest."""
        started = time.perf_counter()
        for _ in self.synthesize(_WARM_UP_TEXT, threading.Event()):
            pass
        self.timings['warm_up'] = time.perf_counter() - started

    def synthesize(self, text: str, stop: threading.Event) -> Iterator[bytes]:
        """
        Yield mono ``pcm_s16le`` chunks (multiples of 1920 samples at 24 kHz) of ``text``.

        Raises TtsError when pocket-tts fails on the text.
        """
        if self._model is None:
            raise TtsError('the pocket_tts backend is closed')
        if not text.strip():
            return
        while not self._lock.acquire(timeout=_LOCK_POLL):
            if stop.is_set():
                return
        cancel = _EitherStop(stop)
        stream = None
        try:
            if self._model is None:
                raise TtsError('the pocket_tts backend is closed')
            stream = self._model.generate_audio_stream(self._state, text, stop=cancel)
            for chunk in stream:
                if cancel.is_set():
                    break
                yield _to_pcm(chunk)
        except TtsError:
            raise
        except Exception as exc:
            raise TtsError(f'pocket-tts failed: {type(exc).__name__}: {_one_line(exc)}') from exc
        finally:
            cancel.set()
            try:
                if stream is not None:
                    for _ in stream:  # drain: its worker threads end with the stream
                        pass
            except Exception:  # the stream's own error was raised above already
                pass
            finally:
                self._lock.release()

    def close(self) -> None:
        """Drop the model (after any running generation) so its memory can be freed."""
        with self._lock:
            self._model = None
            self._state = None


def _one_line(exc: BaseException, limit: int = 600) -> str:
    """Put the exception's message on one line (pydantic and hub errors span several)."""
    text = ' '.join(str(exc).split()) or '(no message)'
    return text if len(text) <= limit else text[:limit] + '...'


def _not_in_cache(language: str) -> list[str]:
    """
    Name the hub files a bundled language needs that the local cache lacks ([]: all there).

    Read from the language's config YAML without importing pocket-tts: of its ``weights_path*``
    variants one is enough, every other ``hf://`` file (the tokenizer) is needed.
    """
    import importlib.util
    spec = importlib.util.find_spec('pocket_tts')
    if spec is None or not spec.submodule_search_locations:
        return []  # not installed: the import says so
    config = Path(list(spec.submodule_search_locations)[0]) / 'config' / f'{language}.yaml'
    try:
        text = config.read_text(encoding='utf-8')
        import huggingface_hub
    except (OSError, ImportError):
        return []  # pocket-tts itself gives the precise error
    weights: list[tuple[str, bool]] = []
    missing: list[str] = []
    for key, url in _HF_LINE.findall(text):
        repo, _, rest = url[len('hf://'):].partition('/')
        owner_repo = f'{repo}/{rest.split("/", 1)[0]}'
        filename, _, revision = rest.split('/', 1)[1].partition('@')
        try:
            cached = huggingface_hub.try_to_load_from_cache(owner_repo, filename,
                                                            revision=revision or None)
        except (ValueError, OSError):
            cached = None
        found = isinstance(cached, str) and os.path.isfile(cached)
        if key.startswith('weights_path'):
            weights.append((f'{owner_repo}/{filename}', found))
        elif not found:
            missing.append(f'{owner_repo}/{filename}')
    if weights and not any(found for _, found in weights):
        missing.insert(0, ' or '.join(name for name, _ in weights))
    return missing


@contextlib.contextmanager
def _offline_if_hub_unreachable() -> Iterator[str]:
    """
    Run the body in huggingface_hub's offline mode when the hub cannot be reached.

    Yields why it is offline ('' when online). Offline mode still finds weights already in the
    local cache. huggingface_hub reads ``HF_HUB_OFFLINE`` once, at import, into
    ``constants.HF_HUB_OFFLINE``, which its download functions consult at each call: both are
    set for the body and restored after it.
    """
    if _is_true(os.environ.get('HF_HUB_OFFLINE')):
        yield 'HF_HUB_OFFLINE is set'
        return
    reason = unreachable_reason(hub_endpoint(), _HUB_PROBE_TIMEOUT_S)
    if not reason:
        yield ''
        return
    logging.getLogger(__name__).info(
        f'Hugging Face hub not reachable ({reason}); loading pocket-tts offline (local cache)')
    import huggingface_hub.constants as hub_constants

    saved_env = os.environ.get('HF_HUB_OFFLINE')
    saved_constant = hub_constants.HF_HUB_OFFLINE
    os.environ['HF_HUB_OFFLINE'] = '1'
    hub_constants.HF_HUB_OFFLINE = True
    try:
        yield f'hub not reachable: {reason}'
    finally:
        hub_constants.HF_HUB_OFFLINE = saved_constant
        if saved_env is None:
            os.environ.pop('HF_HUB_OFFLINE', None)
        else:
            os.environ['HF_HUB_OFFLINE'] = saved_env


def _is_true(value: Optional[str]) -> bool:
    return (value or '').strip().upper() in ('1', 'ON', 'YES', 'TRUE')
