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
Output directories opened without following a symlink that appeared after configuration.

A tool resolves its configured directory once, when it is configured (`configured_path`: a
symlink the operator put in the path is theirs to choose). Each time it writes, it opens that
resolved path component by component with ``O_NOFOLLOW`` (`open_output_dir`), creating what is
missing, and then writes only relative to the directory descriptor it got (``dir_fd``). A
component replaced by a symlink since (the directory swapped for a link to somewhere else) is
refused with `SymlinkRefused`, and a swap during the write changes nothing: the descriptor still
names the directory that was opened. Plain Python, no rclpy.
"""

import errno
import os
import stat

_DIRECTORY_FLAGS = (os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                    | getattr(os, 'O_CLOEXEC', 0))


class SymlinkRefused(OSError):
    """A component of an output directory is a symbolic link now; nothing is written there."""


def configured_path(path: str) -> str:
    """Return the absolute path a configured directory resolves to now (``~`` expanded)."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def open_output_dir(path: str) -> int:
    """
    Open the directory `path` (absolute, resolved at configuration) and return its descriptor.

    Missing components are created (mode 0o777 less the umask). Raises `SymlinkRefused` naming
    the first component that is a symbolic link, or the OSError of a component that is not a
    directory or cannot be opened or created. The caller closes the descriptor.
    """
    if not os.path.isabs(path):
        raise ValueError(f'output directory {path!r} is not an absolute path')
    fd = os.open('/', _DIRECTORY_FLAGS)
    walked = '/'
    try:
        for part in path.split('/'):
            if part in ('', '.'):
                continue
            walked = os.path.join(walked, part)
            child = _open_child(fd, part, walked)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child(parent: int, part: str, walked: str) -> int:
    if part == '..':
        raise ValueError(f'output directory path {walked!r} goes up with ..')
    try:
        return os.open(part, _DIRECTORY_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        try:
            os.mkdir(part, 0o777, dir_fd=parent)
        except FileExistsError:
            pass  # made concurrently (another call): open what is there, checked the same way
        try:
            return os.open(part, _DIRECTORY_FLAGS, dir_fd=parent)
        except OSError as exc:
            _refuse_link(parent, part, walked, exc)
            raise
    except OSError as exc:
        _refuse_link(parent, part, walked, exc)
        raise


def _refuse_link(parent: int, part: str, walked: str, exc: OSError) -> None:
    """Raise `SymlinkRefused` if `part` is a symbolic link (ELOOP or ENOTDIR said so)."""
    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
        return
    swapped = SymlinkRefused(
        exc.errno, f'{walked} was replaced while it was opened (a symbolic link or a file stood '
        'there for a moment); symlinks under an output directory are not followed', walked)
    try:
        info = os.stat(part, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):  # not a directory when opened, a directory now
        raise swapped
    if not stat.S_ISLNK(info.st_mode):
        return
    try:
        target = os.readlink(part, dir_fd=parent)
    except OSError:  # no longer a link: swapped again meanwhile
        raise swapped from None
    raise SymlinkRefused(
        errno.ELOOP, f'{walked} is a symbolic link (to {target}) that was not there when the '
        'tool was configured; symlinks under an output directory are not followed', walked)


def exists(name: str, dir_fd: int) -> bool:
    """Tell whether `name` exists in the directory (a symlink counts; it is not followed)."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def remove_quietly(name: str, dir_fd: int | None = None) -> None:
    """Remove a file if it is there (cleanup: errors are not the caller's concern)."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def writer_alive(pid: int) -> bool:
    """
    Whether the process that left a partial file or directory (its pid in the name) may live.

    True unless that process is certainly gone: what a live writer is still writing is never
    removed as a leftover.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True
