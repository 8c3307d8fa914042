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

"""Small text helpers every reader and family uses: whitespace, names, excerpts, JSON types."""

import re

_WS = re.compile(r'\s*')


IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_.]*')  # a (dotted) name; ast checks the rest


_MAX_SHOWN = 60


def skip_ws(text: str, i: int) -> int:
    """Return the first index at or after ``i`` that is not whitespace."""
    if i < len(text) and not text[i].isspace():
        return i
    found = _WS.match(text, i)  # (inline match_end: skip_ws runs often)
    if found is None:
        raise ValueError(f'{_WS.pattern!r} did not match at {i}')
    return found.end()


def match_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Return where ``pattern`` (one that matches the empty string too, ``[...]*``) ends."""
    found = pattern.match(text, pos)
    if found is None:
        raise ValueError(f'{pattern.pattern!r} did not match at {pos} (it must match the empty '
                         'string)')
    return found.end()


def name_at(text: str, pos: int) -> str:
    """Return the (dotted) name that starts at ``pos`` (a caller that knows there is one)."""
    found = IDENT.match(text, pos)
    if found is None:
        raise ValueError(f'no name at {pos}: {short(text[pos:pos + 20])}')
    return found.group()


def short(value: object, limit: int = _MAX_SHOWN) -> str:
    """Return a repr short enough for an error message."""
    if isinstance(value, str):
        text = repr(value[:limit + 1])
        return text if len(value) <= limit else text[:-1] + "...'"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


def json_type(value: object) -> str:
    """
    Name the JSON Schema type of a decoded value, for messages (the one helper for this).

    ``integer`` for ints and ``number`` for floats, as JSON Schema's ``type`` keyword spells
    them, so a message can say ``expected number, got integer`` consistently with the schema.
    """
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, int):
        return 'integer'
    if isinstance(value, float):
        return 'number'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, (list, tuple)):
        return 'array'
    if isinstance(value, dict):
        return 'object'
    return type(value).__name__


def strip_one_newline(value: str) -> str:
    """Drop a single leading and a single trailing newline (the markup's own line breaks)."""
    if value.startswith('\r\n'):
        value = value[2:]
    elif value.startswith('\n'):
        value = value[1:]
    if value.endswith('\r\n'):
        value = value[:-2]
    elif value.endswith('\n'):
        value = value[:-1]
    return value
