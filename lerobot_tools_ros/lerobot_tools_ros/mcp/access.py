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
Who may connect to the MCP server over HTTP, and at which address it listens.

Loopback by default; any other bind needs a bearer token that comes from an environment
variable or a file, never from the command line. Decided without ROS or the MCP SDK.
"""

import hmac
import ipaddress
import os
import pathlib
from typing import Mapping

DEFAULT_TOKEN_ENV = 'LEROBOT_TOOLS_MCP_TOKEN'


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


def bind_host(host: str) -> str:
    """Return ``host`` as a socket binds it: ``[::1]`` -> ``::1`` (brackets are URL syntax)."""
    host = host.strip()
    if host.startswith('[') and host.endswith(']'):
        return host[1:-1]
    return host


def url_host(host: str) -> str:
    """Return ``host`` as it appears in a URL: an IPv6 address in brackets."""
    bare = bind_host(host)
    try:
        if ipaddress.ip_address(bare).version == 6:
            return f'[{bare}]'
    except ValueError:
        pass
    return bare
