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
  escapes, NUL), the Unicode line separators and lone surrogates are escaped, and long texts are
  cut with a marker.
"""

import re

__all__ = ['log_text', 'ros_string']

# C0 and C1 controls, DEL, and the characters some readers treat as line breaks.
_SURROGATE = re.compile('[\ud800-\udfff]')
_UNSAFE_IN_LOG = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]')


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
