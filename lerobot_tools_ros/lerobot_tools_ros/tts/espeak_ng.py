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
The ``espeak_ng`` backend: the espeak-ng program, streamed through a pipe.

espeak-ng speaks on any machine without model weights. Each utterance runs the program once,
with an argument list (never a shell). The text goes in on stdin (``--stdin``), so nothing in
it can become an option or a shell construct: quotes, ``;``, ``$(...)``, backticks, leading
dashes and newlines are all just spoken. The WAV comes back on stdout (``--stdout``) and is
yielded as it arrives.
"""

import io
import re
import shutil
import subprocess
import tempfile
import threading
from typing import BinaryIO, Iterator, NamedTuple, Optional
import wave

from .base import AudioFormat, TtsError, TtsUnavailable

__all__ = ['EspeakNgBackend', 'INSTALL_HINT', 'RATE_RANGE']

INSTALL_HINT = 'install it with `sudo apt-get install espeak-ng`'
RATE_RANGE = (80, 450)  # words per minute, as espeak-ng's -s option accepts them
# Language codes, voice files and variants: en-us, en-us+f3, gmw/en-US, English_(America).
_VOICE_PATTERN = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.+/()-]{0,63}')
_STDERR_LIMIT = 2000  # characters of espeak-ng's stderr kept in an error message
# Upper bound of one yielded chunk (~0.37 s at 22050 Hz mono); a chunk is whatever the pipe
# holds when we read, usually one 4 KiB stdio block of espeak-ng.
_CHUNK_BYTES = 16384
_PROBE_TIMEOUT = 20.0


def _text_bytes(text: str) -> bytes:
    """UTF-8 for espeak-ng's ``-b 1``; a NUL would end the text early, so it becomes a space."""
    return text.replace('\x00', ' ').encode('utf-8', errors='replace')


class _WavHeader(NamedTuple):
    sample_rate: int
    channels: int
    sample_width: int
    compression: str


def _read_header(stream: BinaryIO) -> _WavHeader:
    """
    Parse the WAV header at the start of espeak-ng's stdout; only 16-bit PCM is accepted.

    soundfile cannot do this: on a pipe it needs seeking (a file object fails with "No 'data'
    chunk marker"; a file descriptor opens but only reads fixed-size blocks, which blocks until
    each block is full). The stdlib ``wave`` module reads the RIFF/fmt/data chunk headers with
    plain reads; the data chunk's length is a placeholder (espeak-ng cannot know it in
    advance), so the samples are then read straight from the pipe until EOF.
    """
    params = wave.open(stream).getparams()
    header = _WavHeader(params.framerate, params.nchannels, params.sampwidth, params.comptype)
    if header.compression != 'NONE' or header.sample_width != 2:
        raise TtsError(f'espeak-ng wrote {header.sample_width * 8}-bit {header.compression} '
                       f'audio; only 16-bit PCM is supported')
    return header


class EspeakNgBackend:
    """Speech from the espeak-ng program; safe to use from several threads at once."""

    name = 'espeak_ng'

    def __init__(self, *, voice: str = 'en-us', rate: int = 175,
                 executable: str = 'espeak-ng') -> None:
        """
        Check the parameters and the program, and learn its output format.

        Raises ValueError for a malformed voice or rate, or a voice espeak-ng rejects (it maps
        an unknown dialect to the closest language it has: ``en-zz`` speaks English), and
        TtsUnavailable when the program is missing or does not run.
        """
        if not isinstance(voice, str) or not _VOICE_PATTERN.fullmatch(voice):
            raise ValueError(
                f'espeak_ng voice must be a voice name such as "en-us", "en-us+f3" or '
                f'"gmw/en-US" (letters, digits and _.+/()-, at most 64 characters), got {voice!r}')
        if isinstance(rate, bool) or not isinstance(rate, int):
            raise ValueError(
                f'espeak_ng rate must be an integer number of words per minute, got {rate!r}')
        if not RATE_RANGE[0] <= rate <= RATE_RANGE[1]:
            raise ValueError(
                f'espeak_ng rate must be between {RATE_RANGE[0]} and {RATE_RANGE[1]} words per '
                f'minute, got {rate}')
        if not isinstance(executable, str) or not executable:
            raise ValueError(f'espeak_ng executable must be a program name or path, '
                             f'got {executable!r}')
        path = shutil.which(executable)
        if path is None:
            raise TtsUnavailable(
                f'espeak-ng program {executable!r} not found; {INSTALL_HINT} '
                f'(or set the executable parameter to its full path)')
        self.voice = voice
        self.rate = rate
        self.executable = path
        self._argv = [path, '--stdin', '--stdout', '-b', '1', '-v', voice, '-s', str(rate)]
        self._closed = False
        self.format = self._probe()
        self.sample_rate = self.format.sample_rate
        self.channels = self.format.channels

    def _probe(self) -> AudioFormat:
        """Speak one letter: proves the program and voice work and gives rate and channels."""
        try:
            done = subprocess.run(self._argv, input=b'a', capture_output=True,
                                  timeout=_PROBE_TIMEOUT, check=False)
        except OSError as exc:
            raise TtsUnavailable(f'cannot run espeak-ng at {self.executable}: {exc}; '
                                 f'{INSTALL_HINT}') from exc
        except subprocess.TimeoutExpired as exc:
            raise TtsUnavailable(f'espeak-ng at {self.executable} did not finish speaking one '
                                 f'letter within {_PROBE_TIMEOUT:.0f} s') from exc
        stderr = _clip(done.stderr)
        if done.returncode != 0:
            if 'voice' in stderr.lower():
                raise ValueError(f'espeak-ng has no voice {self.voice!r} ({stderr}); '
                                 f'list the voices with `espeak-ng --voices`')
            raise TtsUnavailable(f'espeak-ng at {self.executable} failed with exit status '
                                 f'{done.returncode}: {stderr or "(no message)"}')
        try:
            header = _read_header(io.BytesIO(done.stdout))
        except (EOFError, wave.Error, TtsError) as exc:
            raise TtsUnavailable(f'{self.executable} did not write a WAV stream ({exc}); is it '
                                 f'espeak-ng? {INSTALL_HINT}') from exc
        return AudioFormat(sample_rate=header.sample_rate, channels=header.channels)

    def warm_up(self) -> None:
        """Speak a short phrase so the program and its voice data are in the page cache."""
        for _ in self.synthesize('Ready.', threading.Event()):
            pass

    def synthesize(self, text: str, stop: threading.Event) -> Iterator[bytes]:
        """
        Yield ``pcm_s16le`` chunks of ``text`` as espeak-ng writes them.

        Setting ``stop`` (or closing the generator) kills the program; it never outlives the
        generator. Raises TtsError, with espeak-ng's stderr, when the program fails.
        """
        if self._closed:
            raise TtsError('the espeak_ng backend is closed')
        data = _text_bytes(text)
        if not data.strip() or stop.is_set():
            return
        with tempfile.TemporaryFile() as errors:
            # stderr goes to a file, so a chatty program can never block on a full pipe.
            try:
                proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=errors)
            except OSError as exc:  # removed or broken since the backend was built
                raise TtsError(f'cannot run espeak-ng at {self.executable}: {exc}') from exc
            try:
                yield from self._stream(proc, data, stop, errors)
            finally:
                _reap(proc)

    def _stream(self, proc: subprocess.Popen, data: bytes, stop: threading.Event,
                errors: BinaryIO) -> Iterator[bytes]:
        stdin, stdout = proc.stdin, proc.stdout
        if stdin is None or not isinstance(stdout, io.BufferedReader):  # (see synthesize)
            raise TtsError('espeak-ng was started without a stdin pipe and a buffered stdout')
        try:
            # With --stdin espeak-ng reads the whole input before it writes any audio, so one
            # blocking write cannot dead-lock against a full stdout pipe.
            stdin.write(data)
            stdin.close()
        except BrokenPipeError:
            pass  # it died early; its exit status and stderr say why, below
        try:
            header = _read_header(stdout)
        except (EOFError, wave.Error) as exc:
            raise self._failure(proc, errors, f'no WAV header on its stdout ({exc})') from exc
        if (header.sample_rate, header.channels) != (self.sample_rate, self.channels):
            raise TtsError(f'espeak-ng wrote {header.sample_rate} Hz, {header.channels} '
                           f'channel(s) for this text but {self.sample_rate} Hz, '
                           f'{self.channels} when probed')
        frame = header.sample_width * header.channels
        pending = b''
        while True:
            block = stdout.read1(_CHUNK_BYTES)
            if stop.is_set():
                return  # synthesize() kills the program
            if not block:
                break
            pending += block
            whole = len(pending) - len(pending) % frame
            if whole:
                chunk, pending = pending[:whole], pending[whole:]
                yield chunk
        if proc.wait() != 0:
            raise self._failure(proc, errors, 'it exited with an error')

    def _failure(self, proc: subprocess.Popen, errors: BinaryIO, what: str) -> TtsError:
        status = proc.wait()
        errors.seek(0)
        message = _clip(errors.read())
        return TtsError(f'espeak-ng failed ({what}; exit status {status}): '
                        f'{message or "(nothing on stderr)"}')

    def close(self) -> None:
        """Refuse further utterances; no program runs between utterances."""
        self._closed = True


def _clip(raw: Optional[bytes]) -> str:
    text = (raw or b'').decode('utf-8', errors='replace').strip()
    return text if len(text) <= _STDERR_LIMIT else '...' + text[-_STDERR_LIMIT:]


def _reap(proc: subprocess.Popen) -> None:
    """Kill the program if it still runs and wait for it, so no zombie or orphan stays."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
