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
The ``wav`` sink: one 16-bit PCM file per utterance, ``<output_dir>/<utterance_id>.wav``.

A file appears under its final name only when it is complete: it is written to a hidden
temporary name in the same directory (``.<stem>.wav.<pid>.part``) and renamed at the end, so a
killed speaker or a full disk never leaves a truncated WAV with a broken header where a reader
looks. A dropped utterance (failed, stalled) leaves no file; a cancelled one keeps what was
played up to the cancel, like a recording of the speaker would. Each utterance opens the output
directory (resolved when the sink is made) without following a symlink that appeared since, and
writes and renames relative to it (`output_dir.open_output_dir`): a directory swapped for a
link to somewhere else gets no file.
"""

import hashlib
import logging
import os
from pathlib import Path
import re
import time
from typing import Any, Optional

from .base import AudioSink, SAMPLE_WIDTH, SinkError, SinkUnavailable
from ..output_dir import open_output_dir, remove_quietly, SymlinkRefused, writer_alive

__all__ = ['PARTIAL_SUFFIX', 'WavSink', 'wav_file_stem']

PARTIAL_SUFFIX = '.part'
_SAFE_STEM = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]{0,127}')
_PARTIAL = re.compile(r'\..+\.wav\.(\d+)\.part')
_log = logging.getLogger(__name__)


def wav_file_stem(utterance_id: str) -> str:
    """
    File name stem for an utterance: the id itself when it is a safe name, else a hash.

    Ids arrive on a topic anyone can publish to; a crafted one (``../x``) must not choose
    where the file goes.
    """
    if _SAFE_STEM.fullmatch(utterance_id) and '..' not in utterance_id:
        return utterance_id
    digest = hashlib.sha256(utterance_id.encode('utf-8', errors='replace')).hexdigest()[:32]
    return f'utterance-{digest}'


class WavSink(AudioSink):
    """Write ``<output_dir>/<utterance_id>.wav`` (16-bit PCM) per utterance."""

    name = 'wav'

    def __init__(self, output_dir: str | os.PathLike) -> None:
        """Create ``output_dir`` (``~`` expanded); raise SinkUnavailable if that fails."""
        try:
            import soundfile
        except (ImportError, OSError) as exc:
            raise SinkUnavailable(f'the wav sink needs soundfile ({exc}); '
                                  'pip install soundfile') from exc
        self._soundfile = soundfile
        self.output_dir = Path(os.path.expanduser(os.fspath(output_dir))).resolve()
        try:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkUnavailable(f'cannot create output_dir {self.output_dir}: {exc}') from exc
        if not os.access(self.output_dir, os.W_OK):
            raise SinkUnavailable(f'output_dir {self.output_dir} is not writable')
        self._remove_stale_partials()
        self._file: Any = None
        self._handle: Any = None  # the partial file's Python file object, under _file
        self._dir_fd: Optional[int] = None  # the output directory, opened for this utterance
        self._path: Optional[Path] = None
        self._partial: Optional[Path] = None
        self._frames = 0
        self._written_at = 0.0
        self._rate = 0
        self._frame_bytes = SAMPLE_WIDTH

    def _remove_stale_partials(self) -> None:
        """Delete temporary files a killed speaker left (its pid is gone)."""
        for path in self.output_dir.glob('.*.part'):
            match = _PARTIAL.fullmatch(path.name)
            if match and not writer_alive(int(match.group(1))):
                _unlink(path)

    def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
        self._discard()
        stem = wav_file_stem(utterance_id)
        path = self.output_dir / f'{stem}.wav'
        partial = self.output_dir / f'.{stem}.wav.{os.getpid()}{PARTIAL_SUFFIX}'
        try:
            dir_fd = open_output_dir(str(self.output_dir))
        except SymlinkRefused as exc:
            raise SinkError(f'cannot write to {self.output_dir}: {exc.strerror}') from exc
        except (OSError, ValueError) as exc:
            raise SinkError(f'cannot open output_dir {self.output_dir}: {exc}') from exc
        self._dir_fd, self._path, self._partial = dir_fd, path, partial
        try:
            self._handle = os.fdopen(os.open(
                partial.name, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                | getattr(os, 'O_CLOEXEC', 0), 0o666, dir_fd=dir_fd), 'w+b')
            self._file = self._soundfile.SoundFile(
                self._handle, 'w', samplerate=sample_rate, channels=channels,
                subtype='PCM_16', format='WAV')
        except (OSError, RuntimeError) as exc:  # soundfile raises LibsndfileError(RuntimeError)
            self._discard()
            raise SinkError(f'cannot create {partial}: {exc}') from exc
        self._frames, self._rate, self._written_at = 0, sample_rate, time.time()
        self._frame_bytes = SAMPLE_WIDTH * channels

    def write(self, data: bytes) -> None:
        if self._file is None:
            raise SinkError('write before begin')
        try:
            self._file.buffer_write(data, dtype='int16')
        except (OSError, RuntimeError) as exc:
            raise SinkError(f'cannot write {self._partial}: {exc}') from exc
        self._frames += len(data) // self._frame_bytes
        self._written_at = time.time()

    def progress(self) -> tuple[int, float]:
        return self._frames, self._written_at

    def output_rate(self) -> int:
        return self._rate

    def end(self) -> str:
        if self._file is None:
            raise SinkError('end before begin')
        file, handle, dir_fd = self._file, self._handle, self._dir_fd
        path, partial = self._path, self._partial
        if path is None or partial is None or dir_fd is None:  # (set with the file by begin)
            raise SinkError('end without a file path')
        self._file = self._handle = self._dir_fd = self._path = self._partial = None
        try:
            file.close()
            handle.close()
            os.replace(partial.name, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except (OSError, RuntimeError) as exc:
            remove_quietly(partial.name, dir_fd)
            raise SinkError(f'cannot finish {path}: {exc}') from exc
        finally:
            os.close(dir_fd)
        return str(path)

    def cut(self) -> str:
        if self._file is None:
            return ''
        try:
            return f'kept what was played in {self.end()}'
        except SinkError as exc:
            return str(exc)

    def drop(self) -> str:
        partial = self._partial
        self._discard()
        return f'partial file {partial} deleted' if partial is not None else ''

    def _discard(self) -> None:
        file, handle, dir_fd, partial = self._file, self._handle, self._dir_fd, self._partial
        self._file = self._handle = self._dir_fd = self._path = self._partial = None
        for closable in (file, handle):
            if closable is not None:
                try:
                    closable.close()
                except (OSError, RuntimeError):
                    pass
        if dir_fd is not None:
            if partial is not None and handle is not None:
                remove_quietly(partial.name, dir_fd)
            os.close(dir_fd)

    def close(self) -> None:
        self._discard()


def _unlink(path: Optional[Path]) -> None:
    if path is not None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            _log.warning('cannot delete %s: %s', path, exc)
