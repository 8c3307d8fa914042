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
JSON-RPC text the MCP SDK refuses before any handler runs.

The SDK parses each message with a nesting limit (about 200 levels) and, when a message cannot
be parsed, answers nothing: the client waits forever. ``request_id_of`` finds the ``id`` of
such a message without parsing its body, so the transport can answer it with an error.
"""

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# Characters scanned for a top-level "id" (the id of a request is near its start or end).
_MAX_SCAN = 1 << 20


def request_id_of(text: str) -> tuple[bool, Any]:
    """
    Return ``(found, id)`` of a JSON-RPC request text, whatever its nesting depth.

    Scans only the top-level object (strings and nesting tracked, nothing built): ``found`` is
    False when the text is not an object or has no top-level ``"id"`` with a string, integer
    or null value.
    """
    text = text.strip()
    if not text.startswith('{') or len(text) > _MAX_SCAN:
        return False, None
    depth = 0
    i = 0
    n = len(text)
    expect_key = False
    while i < n:
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            if end < 0:
                return False, None
            if depth == 1 and expect_key:
                key = text[i:end + 1]
                j = end + 1
                while j < n and text[j] in ' \t\r\n':
                    j += 1
                if j < n and text[j] == ':' and _json_string(key) == 'id':
                    return _value_at(text, j + 1)
            expect_key = False
            i = end + 1
            continue
        if c in '{[':
            depth += 1
            expect_key = depth == 1
        elif c in '}]':
            depth -= 1
        elif c == ',' and depth == 1:
            expect_key = True
        i += 1
    return False, None


def _string_end(text: str, start: int) -> int:
    """Return the index of the quote closing the JSON string opened at ``start``, or -1."""
    i = start + 1
    while i < len(text):
        if text[i] == '\\':
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return -1


def _json_string(token: str) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _value_at(text: str, start: int) -> tuple[bool, Any]:
    i = start
    while i < len(text) and text[i] in ' \t\r\n':
        i += 1
    if i < len(text) and text[i] == '"':
        end = _string_end(text, i)
        value = _json_string(text[i:end + 1]) if end > 0 else None
        return (value is not None), value
    j = i
    while j < len(text) and text[j] not in ',}] \t\r\n':
        j += 1
    token = text[i:j]
    if token == 'null':
        return True, None
    try:
        number = int(token)
    except ValueError:
        return False, None
    return True, number


def error_response(request_id: Any, code: int, message: str) -> str:
    """Return a JSON-RPC error response line (no newline)."""
    return json.dumps({'jsonrpc': '2.0', 'id': request_id,
                       'error': {'code': code, 'message': message}})
