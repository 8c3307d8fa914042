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
Turn ROS image messages into files: conversion, encoding, atomic no-clobber writes.

Conversion goes through cv_bridge when it imports *and* converts correctly with the installed
NumPy (it breaks under NumPy 2 on Humble/Jazzy), else through ``rosbags-image``, which accepts
rclpy messages directly. Pixel encodings are never decoded by hand here: the only thing this
module adds is choosing which colour space a PNG/JPEG writer can hold losslessly.

Everything here is plain Python over duck-typed messages (no rclpy import), so it runs in the
tool's worker threads and in tests without a ROS graph.
"""

import os
import secrets
import threading
import types
from typing import Any, Optional

import cv2
import numpy as np
from rosbags.image import compressed_image_to_cvimage, image_to_cvimage
from rosbags.image.image import Format, to_cvtype

from .output_dir import exists, remove_quietly

__all__ = [
    'FORMATS', 'ImagingError', 'converter_name', 'decode_frame', 'encode', 'is_compressed',
    'passthrough_bytes', 'publish_files', 'write_temp',
]

FORMATS = {'png': '.png', 'jpg': '.jpg'}

_PNG_MAGIC = b'\x89PNG\r\n\x1a\n'
_JPEG_MAGIC = b'\xff\xd8\xff'


class ImagingError(Exception):
    """A frame that cannot be converted or encoded; the message says why, for the caller."""


# ------------------------------------------------------------------------------ converters
_bridge_lock = threading.Lock()
_bridge: Any = None
_bridge_checked = False


def _probe_cv_bridge() -> Any:
    """Return a working ``CvBridge`` or None (not installed, or broken by NumPy 2)."""
    try:
        from cv_bridge import CvBridge
        from sensor_msgs.msg import Image
        bridge = CvBridge()
        probe = Image(height=1, width=2, encoding='rgb8', is_bigendian=0, step=6,
                      data=bytes([1, 2, 3, 4, 5, 6]))
        out = bridge.imgmsg_to_cv2(probe, desired_encoding='bgr8')
        if np.asarray(out).tolist() != [[[3, 2, 1], [6, 5, 4]]]:
            return None
        return bridge
    except Exception:  # noqa: B902 - any failure means "do not use cv_bridge"
        return None


def _cv_bridge() -> Any:
    global _bridge, _bridge_checked
    with _bridge_lock:
        if not _bridge_checked:
            _bridge = _probe_cv_bridge()
            _bridge_checked = True
        return _bridge


def converter_name() -> str:
    """Say which converter frames go through (recorded in sidecars for debugging)."""
    return 'cv_bridge' if _cv_bridge() is not None else 'rosbags-image'


def is_compressed(msg: Any) -> bool:
    """Tell ``sensor_msgs/CompressedImage`` (has ``format``) from ``sensor_msgs/Image``."""
    return hasattr(msg, 'format') and not hasattr(msg, 'encoding')


# ------------------------------------------------------------------------------ raw frames
def _target_encoding(encoding: str, fmt: str) -> Optional[str]:
    """
    Colour space the writer for ``fmt`` stores losslessly; None keeps the frame as it is.

    PNG holds 8/16-bit grey, BGR and BGRA; JPEG holds 8-bit grey and BGR. Anything else is
    converted by the library (Bayer, YUV, RGB orders) or rejected (float depth images).
    """
    try:
        depth, family, typestr, channels = to_cvtype(encoding)
    except Exception as exc:  # noqa: B902 - rosbags raises its own ImageFormatError
        raise ImagingError(f'unsupported image encoding {encoding!r}: {exc}') from exc
    if typestr not in ('uint8', 'uint16'):
        raise ImagingError(f'encoding {encoding!r} ({typestr}) cannot be stored as {fmt}: PNG '
                           'and JPEG hold 8/16-bit integer pixels only')
    wide = fmt == 'png' and depth == 16
    if family == Format.GENERIC:
        if channels not in (1, 3, 4) or (fmt == 'jpg' and channels == 4):
            raise ImagingError(f'encoding {encoding!r} has {channels} channels, which {fmt} '
                               'cannot hold')
        if fmt == 'jpg' and depth == 16:
            return f'8UC{channels}'
        return None
    if family == Format.GRAY:
        return 'mono16' if wide else 'mono8'
    if family in (Format.RGBA, Format.BGRA) and fmt == 'png':
        return 'bgra16' if wide else 'bgra8'
    return 'bgr16' if wide else 'bgr8'


def _unpadded(msg: Any) -> Any:
    """Drop row padding (``step`` > row bytes), which rosbags-image does not account for."""
    _, _, typestr, channels = to_cvtype(msg.encoding)
    row = int(msg.width) * channels * np.dtype(typestr).itemsize
    step = int(msg.step)
    height = int(msg.height)
    size = len(msg.data)
    if step < row or size < step * (height - 1) + row:
        raise ImagingError(f'truncated frame: {size} bytes for {msg.width}x{height} '
                           f'{msg.encoding} with step {step}')
    if step == row:
        return msg
    rows = np.lib.stride_tricks.as_strided(np.frombuffer(msg.data, dtype=np.uint8),
                                           shape=(height, row), strides=(step, 1))
    return types.SimpleNamespace(height=height, width=msg.width, encoding=msg.encoding,
                                 is_bigendian=msg.is_bigendian, step=row,
                                 data=np.ascontiguousarray(rows).data)


def decode_frame(msg: Any, fmt: str) -> np.ndarray:
    """
    Return the frame as an OpenCV array ready for ``encode(image, fmt)``.

    Raw frames keep their bit depth in PNG (16-bit stays 16-bit) and their alpha channel;
    compressed frames are decoded as the library decodes them (8-bit, BGR or grey).
    """
    bridge = _cv_bridge()
    if is_compressed(msg):
        if not len(msg.data):
            raise ImagingError('empty compressed frame')
        try:
            if bridge is not None:
                image = bridge.compressed_imgmsg_to_cv2(msg, 'passthrough')
            else:
                image = compressed_image_to_cvimage(msg)
        except Exception as exc:  # noqa: B902 - decoder failures come in many types
            raise ImagingError(f'cannot decode compressed frame (format {msg.format!r}): '
                               f'{type(exc).__name__}: {exc}') from exc
        if image is None:
            raise ImagingError(f'cannot decode compressed frame (format {msg.format!r})')
        return image
    target = _target_encoding(msg.encoding, fmt)
    try:
        if bridge is not None:
            return bridge.imgmsg_to_cv2(msg, desired_encoding=target or 'passthrough')
        return image_to_cvimage(_unpadded(msg), target)
    except ImagingError:
        raise
    except Exception as exc:  # noqa: B902 - converter failures come in many types
        raise ImagingError(f'cannot convert {msg.width}x{msg.height} {msg.encoding!r} frame to '
                           f'{target or msg.encoding}: {type(exc).__name__}: {exc}') from exc


def passthrough_bytes(msg: Any, fmt: str) -> Optional[bytes]:
    """
    Return a compressed frame's payload when it already is a ``fmt`` file, else None.

    Saving a JPEG camera frame as ``.jpg`` then costs no second lossy encode, and a PNG frame
    saved as ``.png`` keeps its exact bit depth.
    """
    if not is_compressed(msg):
        return None
    head = bytes(msg.data[:8])
    if (fmt == 'png' and head.startswith(_PNG_MAGIC)) or (
            fmt == 'jpg' and head.startswith(_JPEG_MAGIC)):
        return bytes(msg.data)
    return None


def encode(image: np.ndarray, fmt: str, *, png_compression: int,
           jpeg_quality: int) -> memoryview:
    """Encode in memory (OpenCV releases the GIL here, so cameras encode in parallel)."""
    if fmt == 'png':
        params = [cv2.IMWRITE_PNG_COMPRESSION, int(png_compression)]
    else:
        params = [cv2.IMWRITE_JPEG_QUALITY, int(jpeg_quality)]
    try:
        ok, buffer = cv2.imencode(FORMATS[fmt], image, params)
    except cv2.error as exc:
        raise ImagingError(f'{fmt} encoding of a {image.dtype} {image.shape} image failed: '
                           f'{exc}') from exc
    if not ok:
        raise ImagingError(f'{fmt} encoding of a {image.dtype} {image.shape} image failed')
    return buffer.data  # a memoryview, no copy; write_temp takes any bytes-like object


# ------------------------------------------------------------------------------ files
# With ``dir_fd`` (an output directory opened by `output_dir.open_output_dir`), every name is
# relative to that descriptor: a directory swapped for a symlink meanwhile is never followed.
def write_temp(directory: str, data: Any, dir_fd: Optional[int] = None) -> str:
    """
    Write ``data`` to a new hidden temporary file in ``directory``; return its path.

    With ``dir_fd`` the file is made in that directory and its name (relative to it) is
    returned. The name starts with a dot (labels cannot), is created with O_EXCL and O_NOFOLLOW
    and the normal umask (so the published file gets ordinary permissions), and is removed if
    the write fails.
    """
    while True:
        name = f'.record-{secrets.token_hex(8)}.tmp'
        path = name if dir_fd is not None else os.path.join(directory, name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | getattr(os, 'O_CLOEXEC', 0), 0o666, dir_fd=dir_fd)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
    except BaseException:
        remove_quietly(path, dir_fd)
        raise
    return path


def _link_exclusive(temp: str, final: str, dir_fd: Optional[int]) -> bool:
    """
    Publish ``temp`` as ``final`` atomically, failing with FileExistsError if it exists.

    ``link`` never replaces an existing name and the file appears complete; the temp name stays
    (returns True). Filesystems without hard links fall back to reserving the name with O_EXCL
    and renaming the temp over it (returns False: the temp name is gone).
    """
    try:
        os.link(temp, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        return True
    except FileExistsError:
        raise
    except OSError:
        fd = os.open(final, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666,
                     dir_fd=dir_fd)
        os.close(fd)
        os.replace(temp, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return False


def publish_files(directory: str, files: dict[str, tuple[str, list[tuple[str, str]]]],
                  overwrite: bool, max_suffix: int = 10000,
                  dir_fd: Optional[int] = None) -> dict[str, list[str]]:
    """
    Move temp files to their final names as one group; return the final paths per key.

    ``files`` maps a key (camera) to ``(stem, [(temp_path, extension), ...])``. With
    ``overwrite`` the names are replaced atomically. Without it, one ``-N`` suffix is chosen for
    the whole group (the first N for which none of the group's names exist), so a call's images
    and sidecars keep matching names; a name taken concurrently makes the group retry with the
    next N. Raises ``FileExistsError`` when no suffix up to ``max_suffix`` is free. With
    ``dir_fd`` the temp names are relative to it, and so are the renames; the paths returned
    are still ``directory``/name.
    """
    def names(suffix: int) -> dict[str, list[str]]:
        tail = '' if suffix == 0 else f'-{suffix}'
        return {key: [f'{stem}{tail}{ext}' if dir_fd is not None else
                      os.path.join(directory, f'{stem}{tail}{ext}') for _, ext in temps]
                for key, (stem, temps) in files.items()}

    def shown(chosen: dict[str, list[str]]) -> dict[str, list[str]]:
        if dir_fd is None:
            return chosen
        return {key: [os.path.join(directory, name) for name in paths]
                for key, paths in chosen.items()}

    if overwrite:
        result = names(0)
        for key, (_, temps) in files.items():
            for (temp, _), final in zip(temps, result[key]):
                os.replace(temp, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return shown(result)
    for suffix in range(max_suffix + 1):
        candidate = names(suffix)
        if any(_exists(p, dir_fd) for paths in candidate.values() for p in paths):
            continue
        done: list[tuple[str, str, bool]] = []
        try:
            for key, (_, temps) in files.items():
                for (temp, _), final in zip(temps, candidate[key]):
                    done.append((temp, final, _link_exclusive(temp, final, dir_fd)))
        except BaseException as exc:
            for temp, final, linked in done:  # undo the part of the group already published
                if linked:
                    remove_quietly(final, dir_fd)
                else:
                    os.replace(final, temp, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            if isinstance(exc, FileExistsError):
                continue  # lost a race for one name: try the next N
            raise
        for temp, _, linked in done:
            if linked:
                remove_quietly(temp, dir_fd)
        return shown(candidate)
    raise FileExistsError(f'suffixes -1 ... -{max_suffix} are all taken in {directory}')


def _exists(path: str, dir_fd: Optional[int]) -> bool:
    return exists(path, dir_fd) if dir_fd is not None else os.path.lexists(path)
