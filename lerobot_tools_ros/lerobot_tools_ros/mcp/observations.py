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
Saved observations as MCP resources: ``lerobot-tools://observations/<path in the output dir>``.

A ``file://`` link means nothing to a client on another host and the server could not serve
it; a link under the server's own scheme is read back with ``resources/read``. Only regular
files under ``record_observation``'s output directory (tool_server's
``tool.record_observation.output_dir``) are linked or served: a URI whose path leaves the
directory (``..``, an absolute path, a symlink pointing out) names nothing.
"""

import os
from urllib.parse import quote, unquote

PREFIX = 'lerobot-tools://observations/'
TEMPLATE = PREFIX + '{path}'
# What a saved observation is, by its name (record_observation writes these).
MIME_TYPES = {'.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg',
              '.json': 'application/json'}


class NotAnObservation(ValueError):
    """A URI or path that names no servable observation file."""


def _inside(path: str, root: str) -> str | None:
    """Return the real path of ``path`` when it is a regular file under ``root``, else None."""
    real_root = os.path.realpath(os.path.expanduser(root))
    real = os.path.realpath(path)
    try:
        if os.path.commonpath([real_root, real]) != real_root or real == real_root:
            return None
    except ValueError:  # different drives, or a mix of absolute and relative paths
        return None
    return real if os.path.isfile(real) else None


def mime_type(path: str) -> str | None:
    """Return the MIME type of an observation file by its suffix; None: not one we serve."""
    return MIME_TYPES.get(os.path.splitext(path)[1].lower())


def uri_for(path: str, root: str) -> str | None:
    """Return the resource URI of a saved file, or None when it is not servable from ``root``."""
    if not root or not path or mime_type(path) is None:
        return None
    real = _inside(path, root)
    if real is None:
        return None
    relative = os.path.relpath(real, os.path.realpath(os.path.expanduser(root)))
    return PREFIX + quote(relative.replace(os.sep, '/'), safe='/')


def path_for(uri: str, root: str) -> str:
    """Return the file a resource URI names; raise ``NotAnObservation`` when it names none."""
    if not uri.startswith(PREFIX):
        raise NotAnObservation(f'not an observation URI: {uri[:200]}')
    if not root:
        raise NotAnObservation('observations are not served: the output directory of '
                               'record_observation is not known (is tool_server running?)')
    relative = unquote(uri[len(PREFIX):])
    parts = relative.split('/')
    if not relative or relative.startswith('/') or '\0' in relative or any(
            part in ('', '.', '..') for part in parts):
        raise NotAnObservation(f'not a path inside the observation directory: {uri[:200]}')
    candidate = os.path.join(os.path.realpath(os.path.expanduser(root)), *parts)
    real = _inside(candidate, root) if mime_type(candidate) else None
    if real is None:
        raise NotAnObservation(f'no saved observation at {uri[:200]}')
    return real
