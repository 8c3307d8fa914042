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
Making text from models and callers safe, in one place.

Tool names, arguments, call and generation ids, error texts and tool output can come from a model
or from any node on the domain. Before such text reaches a ROS message, a log line or a file it
goes through one of these functions:

- ``ros_string``: valid UTF-8 for a ROS string field (lone surrogates become U+FFFD; rclpy refuses
  to publish them and a tool thread that tried would die).
- ``log_text``: one line that cannot forge log records: control characters (newlines, ANSI
  escapes, NUL), the Unicode line separators, bidirectional overrides and lone surrogates are
  escaped, and long texts are cut with a marker.
- ``json_line``: one line of JSON for a JSONL file (audit log, exported atoms): valid UTF-8 (lone
  surrogates kept as JSON ``uXXXX`` escapes, so nothing is lost and no encoder fails) and free of
  the characters ``str.splitlines()`` treats as line breaks (U+0085, U+2028, U+2029).
"""

import json
import re
from typing import Any

__all__ = ['json_line', 'log_text', 'ros_string']

_SURROGATE = re.compile('[\ud800-\udfff]')
# C0 and C1 controls, DEL, the characters some readers treat as line breaks, lone surrogates,
# and the bidirectional overrides that make a terminal show text in another order.
_UNSAFE_IN_LOG = re.compile(
    '[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]')
# What json.dumps(ensure_ascii=False) leaves raw although a line reader or a UTF-8 encoder
# chokes on it. It can only occur inside JSON strings, where a \uXXXX escape means the same.
_UNSAFE_IN_JSONL = re.compile('[\x7f-\x9f\u2028\u2029\ud800-\udfff]')


def ros_string(text: str) -> str:
    """Return ``text`` as valid UTF-8 (lone surrogates replaced), ready for a ROS string field."""
    if text.isascii():
        return text
    return _SURROGATE.sub('\ufffd', text)


def _escape(match: re.Match) -> str:
    char = match.group()
    return {'\n': '\\n', '\r': '\\r', '\t': '\\t'}.get(char, f'\\u{ord(char):04x}')


def log_text(text: object, limit: int = 200) -> str:
    """
    Return ``text`` as one safe log line of at most about ``limit`` characters.

    Escaping (not removing) keeps what was sent visible: a newline followed by ``[ERROR] ...``
    is logged as a backslash-n on the same line, so nobody can forge a record or recolour a
    terminal.
    """
    text = text if isinstance(text, str) else str(text)
    if len(text) > limit:
        text = f'{text[:limit]}... ({len(text)} chars)'
    if text.isprintable() and text.isascii():
        return text
    return _UNSAFE_IN_LOG.sub(_escape, text)


def _json_escape(match: re.Match) -> str:
    return f'\\u{ord(match.group()):04x}'


def json_line(value: Any, **dumps_options: Any) -> str:
    """
    Return ``value`` as one line of JSON, safe to write to a UTF-8 JSONL file.

    Readable text stays readable (``ensure_ascii=False``); only the characters that would break
    the file are escaped, and ``json.loads`` gives back exactly ``value`` (lone surrogates too).
    ``dumps_options`` go to ``json.dumps`` (``default=str``, ``sort_keys=True``); ``indent`` is
    refused, since it would span lines.
    """
    if dumps_options.get('indent') is not None:
        raise ValueError('json_line writes one line; indent is not allowed')
    text = json.dumps(value, ensure_ascii=False, **dumps_options)
    if text.isascii():
        return text
    return _UNSAFE_IN_JSONL.sub(_json_escape, text)
