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
Change several files of a dataset at once: build the new version beside it, then swap it in.

A write that changes data files and `meta/info.json` together must never be seen half done:
a reader would find rows calling tools info.json does not declare. So the new version of the
whole dataset is built in a staging directory beside the target (`.<name>.add-events-<pid>-<n>`;
unchanged files are hard links, so a dataset with gigabytes of video costs nothing to stage),
flushed to disk, and then put in place with one rename: a new `--output` directory is renamed
into place; an existing dataset is exchanged with its staging directory in one step
(Linux `renameat2(RENAME_EXCHANGE)`), after which the staging name holds the old version and
is removed. A failure or a `kill -9` at any point leaves either the old or the new dataset at
the target, never a mix, and at most a staging directory, which the next run removes once the
process that made it is gone.

One writer at a time (`one_writer`): two runs on one dataset would each build from the version
they read, and the second swap would drop the first one's rows. A run holds an exclusive lock
on the directory the dataset is in from its first read to its swap; another waits for it.
"""

import contextlib
import ctypes
import errno
import fcntl
import itertools
import os
import pathlib
import re
import shutil
import time

from .episodes import DatasetError
from ..output_dir import writer_alive

STAGING_TAG = 'add-events'
# Test hook: `<point>:<file>` makes the writer create <file> when it reaches <point> and then
# wait there forever, so a test can kill it at exactly that moment (see `checkpoint`).
PAUSE_ENV = 'LEROBOT_TOOLS_ROS_DATASET_PAUSE'
CHECKPOINTS = ('data-written', 'before-commit', 'after-commit')
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_counter = itertools.count()
# How long a write waits for another one on the same directory (copying gigabytes of video for
# --output takes minutes) before it gives up, saying so.
LOCK_WAIT_S = 600.0
_LOCK_POLL_S = 0.05


@contextlib.contextmanager
def one_writer(root: pathlib.Path, wait_s: float = LOCK_WAIT_S):
    """Hold the write lock of the directory `root` is in (waiting for another writer)."""
    descriptor = os.open(root.parent, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0))
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise DatasetError(
                        f'another run has been writing a dataset in {root.parent} for '
                        f'{wait_s:g} s; wait for it to end (or stop it), then run again')
                time.sleep(_LOCK_POLL_S)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def staging_dir(final: pathlib.Path) -> pathlib.Path:
    """Return a new, unused staging path beside `final` (not created)."""
    while True:
        path = final.parent / f'.{final.name}.{STAGING_TAG}-{os.getpid()}-{next(_counter)}'
        if not os.path.lexists(path):
            return path


def remove_stale(final: pathlib.Path) -> list[pathlib.Path]:
    """Remove staging directories beside `final` left by runs whose process is gone."""
    pattern = re.compile(re.escape(f'.{final.name}.{STAGING_TAG}-') + r'(\d+)-\d+')
    removed: list[pathlib.Path] = []
    if not final.parent.is_dir():
        return removed
    for path in final.parent.iterdir():
        match = pattern.fullmatch(path.name)
        if match is None or writer_alive(int(match.group(1))):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(path)
    return removed


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, target, follow_symlinks=False)


def link_tree(source: pathlib.Path, target: pathlib.Path) -> None:
    """Stage `source` at `target`: the same directories, every file a hard link (else a copy)."""
    shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy)


def replace_file(path: pathlib.Path, write) -> None:
    """Write `path` through a temporary file beside it, then rename it over `path`."""
    temporary = path.with_name(f'.{path.name}.{os.getpid()}-{next(_counter)}.tmp')
    try:
        write(temporary)
        sync_file(temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def sync_file(path: pathlib.Path) -> None:
    """Flush a file's contents to disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def sync_dir(path: pathlib.Path) -> None:
    """Flush a directory's entries to disk (a rename in it is durable after this)."""
    with contextlib.suppress(OSError):  # some filesystems refuse fsync on directories
        descriptor = os.open(path, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0))
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def exchange(first: pathlib.Path, second: pathlib.Path) -> None:
    """Swap two directories in one atomic step, or raise DatasetError saying why not."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        renameat2 = None
    if renameat2 is not None:
        renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                              ctypes.c_uint]
        if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
                     _RENAME_EXCHANGE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(code, os.strerror(code), str(second))
    raise DatasetError(f'{second}: this system cannot swap two directories in one step '
                       '(Linux renameat2 RENAME_EXCHANGE), which --in-place needs to change '
                       'data files and info.json together; write a copy with --output')


def checkpoint(point: str) -> None:
    """
    Stop here when the test hook (`PAUSE_ENV`) names this point; else nothing.

    The writer makes the hook's file and waits while it exists: the test kills it there, or
    removes the file to let it go on.
    """
    spec = os.environ.get(PAUSE_ENV, '')
    name, _, ready = spec.partition(':')
    if name != point or not ready:
        return
    path = pathlib.Path(ready)
    path.write_text(f'{os.getpid()}\n', encoding='utf-8')
    while path.exists():
        time.sleep(_LOCK_POLL_S)
