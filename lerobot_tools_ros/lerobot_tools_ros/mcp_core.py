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
What the MCP server shows and answers, decided without ROS or the MCP SDK.

The MCP server (``nodes/mcp_server.py``) is only another client of the dispatcher's gated
``~/call``. This module holds its decisions so they can be tested directly:

- (which tools are listed, and how, is in ``lerobot_tools_ros.mcp.listing``);
- how a ``CallTool`` response becomes an MCP result (text, ``isError``, images of
  ``record_observation``);
- who may connect over HTTP (loopback by default; any other bind needs a bearer token that comes
  from an environment variable or a file, never from the command line).
"""

from dataclasses import dataclass
import hmac
import ipaddress
import json
import math
import os
import pathlib
from typing import Any, Mapping

from lerobot_tools_ros import errors

# Image files whose bytes are returned as MCP image content, by their first bytes.
_IMAGE_MAGIC = {
    b'\x89PNG\r\n\x1a\n': 'image/png',
    b'\xff\xd8\xff': 'image/jpeg',
}

DEFAULT_TOKEN_ENV = 'LEROBOT_TOOLS_MCP_TOKEN'


class ArgumentsTooLarge(ValueError):
    """The arguments of an MCP call are larger than the server accepts."""


def encode_arguments(arguments: Mapping[str, Any] | None, max_bytes: int) -> str:
    """
    Return the JSON text sent as ``CallTool.Request.arguments``.

    NaN and Infinity are refused here (they are not JSON; the dispatcher would refuse them too)
    and so is anything longer than ``max_bytes`` once encoded.
    """
    try:
        text = json.dumps(dict(arguments or {}), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f'arguments are not valid JSON: {exc} (NaN and Infinity are not '
                         'JSON numbers)') from exc
    except RecursionError:
        raise ValueError('arguments are nested too deeply to encode') from None
    size = len(text.encode('utf-8', 'surrogatepass'))
    if size > max_bytes:
        raise ArgumentsTooLarge(
            f'arguments are {size} bytes encoded; this server accepts at most {max_bytes}')
    return text


def error_text(code: str, message: str) -> str:
    """Return the text of an ``isError`` result: code first, so a model can branch on it."""
    return f'{code}: {message}' if message else code


def progress_value(progress: float) -> float | None:
    """MCP progress (0..1) from a ``ToolProgress.progress``; ``None`` when it is unknown (-1)."""
    if progress is None or not math.isfinite(progress) or progress < 0:
        return None
    return min(float(progress), 1.0)


@dataclass(frozen=True)
class Image:
    """An image a tool saved, ready to be returned as MCP image content."""

    path: str
    mime_type: str
    data: bytes


def images_in_result(content: str, max_bytes: int) -> tuple[list[Image], list[str]]:
    """
    Read the images a ``record_observation`` result names; return them and notes on skipped ones.

    Only regular files whose first bytes are PNG or JPEG and whose size is at most ``max_bytes``
    are read; anything else (missing on this host, too large, another format) gets a note instead,
    so the text result still tells the client where the file is.
    """
    try:
        result = json.loads(content)
    except ValueError:
        return [], []
    paths = result.get('paths') if isinstance(result, dict) else None
    if not isinstance(paths, list):
        return [], []
    images: list[Image] = []
    notes: list[str] = []
    for raw in paths:
        if not isinstance(raw, str) or not raw:
            continue
        path = pathlib.Path(raw)
        try:
            if not path.is_file():
                notes.append(f'{raw}: not readable on the MCP server host')
                continue
            size = path.stat().st_size
            if size > max_bytes:
                notes.append(f'{raw}: {size} bytes, over the {max_bytes}-byte image cap; '
                             'not attached')
                continue
            data = path.read_bytes()
        except OSError as exc:
            notes.append(f'{raw}: could not be read ({exc.strerror or exc})')
            continue
        mime = next((m for magic, m in _IMAGE_MAGIC.items() if data.startswith(magic)), None)
        if mime is None:
            notes.append(f'{raw}: not a PNG or JPEG file; not attached')
            continue
        images.append(Image(raw, mime, data))
    return images, notes


# -- HTTP access ------------------------------------------------------------------------------

def is_loopback(host: str) -> bool:
    """Return whether ``host`` binds only the local machine (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host.strip().strip('[]')).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def read_token(env_name: str, token_file: str, environ: Mapping[str, str] | None = None
               ) -> str | None:
    """
    Return the bearer token from the file ``token_file`` or else the variable ``env_name``.

    A file wins when both are given (it is the more deliberate setting). Surrounding whitespace
    is dropped; an empty token counts as none. Raises ``ValueError`` for an unreadable file or a
    token shorter than 16 characters (too easy to guess for a robot on a network).
    """
    environ = os.environ if environ is None else environ
    token = ''
    if token_file:
        try:
            token = pathlib.Path(token_file).expanduser().read_text(encoding='utf-8').strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f'cannot read the token file {token_file}: {exc}') from exc
        if not token:
            raise ValueError(f'the token file {token_file} is empty')
    elif env_name:
        token = environ.get(env_name, '').strip()
    if token and len(token) < 16:
        raise ValueError('the bearer token is shorter than 16 characters; use a long random '
                         'one (e.g. python -c "import secrets; print(secrets.token_urlsafe())")')
    return token or None


def check_bind(host: str, token: str | None, env_name: str) -> str:
    """
    Decide whether the HTTP transport may listen on ``host``; return the line to print at start.

    Raises ``ValueError`` when ``host`` is not loopback and no token is configured.
    """
    if is_loopback(host):
        if token:
            return f'listening on {host} (loopback); requests must carry the bearer token'
        return f'listening on {host} (loopback only); no token required'
    if not token:
        raise ValueError(
            f'refusing to listen on {host}: a non-loopback bind needs a bearer token; put one in '
            f'the environment variable {env_name} or in a file named by the token_file '
            'parameter (never on the command line)')
    return (f'listening on {host}, reachable from the network; every request must carry '
            '"Authorization: Bearer <token>" (requests without it get 401)')


def token_matches(expected: str, offered: str) -> bool:
    """Compare a presented token with the configured one in constant time."""
    return hmac.compare_digest(expected.encode('utf-8'), offered.encode('utf-8'))


def result_code(success: bool, error_code: str) -> str:
    """Return the error code to report: a failure without a code is ``execution_failed``."""
    if success:
        return ''
    return error_code or errors.EXECUTION_FAILED
