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
GLM-4.5 / 4.6 / 4.7: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``.

GLM-4.5 and 4.6 put a newline after the name and between pairs; 4.7 writes them without.
Values are typed by the catalog schema like Qwen3-Coder's (``typed_value``); without a
catalog they stay text. A call without arguments is ``<tool_call>NAME</tool_call>``. Shares the
``<tool_call>`` tag with Hermes: this matcher runs first and answers only for a name followed by
``<arg_key>`` or the closing tag, or for key/value pairs without a recognisable name (reported).
The arguments are an open list of pairs, so a call is complete only at its ``</tool_call>``
(or where the next call starts): an incomplete final call is never dispatched.

Reasoning safety: ``<tool_call>`` is written as text that reasoning may quote, so it never ends
a reasoning span.
"""

import re

from ..answers import Match, MatchResult, NEED_ANY, NeedMore
from ..context import Ctx
from ..readers.key_values import call_end, CLOSE, KEY, OPEN, read_arguments
from ..readers.partial import key_value_prefix
from ..readers.text import short, skip_ws
from ..registry import format_spec
from ..results import INVALID_CALL

FORMAT = 'glm45'
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_.\-]*')
_MAX_NAME = 200  # a tool name before <arg_key> is at most this long


def match_glm(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<tool_call>NAME<arg_key>...`` (None for other ``<tool_call>`` bodies)."""
    n = len(text)
    i = skip_ws(text, pos + len(OPEN))
    if i >= n:
        return NEED_ANY if not ctx.final else None
    if text[i] in '{[':
        return None  # JSON: Hermes reads it (the common case first)
    if text[i] == '<':
        if text.startswith(KEY, i):
            return _nameless(text, pos, i, ctx)
        if not ctx.final and n - i < len(KEY) and KEY.startswith(text[i:]):
            return NEED_ANY
        return None  # XML (<function=...>) or an empty tag: other families read it
    found = _NAME.match(text, i)
    if found is not None:
        k = skip_ws(text, found.end())
        if k >= n:
            return NEED_ANY if not ctx.final else None
        if text.startswith(KEY, k) or text.startswith(CLOSE, k):
            result = read_arguments(text, pos, k, found.group(), ctx, FORMAT)
            return Match(result[0], result[1]) if type(result) is tuple else result
        rest = text[k:]
        if not ctx.final and n - k < len(KEY) and (
                KEY.startswith(rest) or CLOSE.startswith(rest)):
            return NEED_ANY
    # Not NAME<arg_key>: key/value pairs after something that is no name are a GLM call
    # without a recognisable name; anything else belongs to another family.
    j = ctx.find(text, '<', i)
    if j == -1 or j - i > _MAX_NAME:
        return NEED_ANY if not ctx.final and j == -1 and n - i <= _MAX_NAME else None
    if text.startswith(KEY, j):
        return _nameless(text, pos, j, ctx)
    if not ctx.final and n - j < len(KEY) and KEY.startswith(text[j:]):
        return NEED_ANY
    return None


def _nameless(text: str, pos: int, key: int, ctx: Ctx):
    """Report key/value pairs whose call has no recognisable name; it runs to its end tag."""
    end = call_end(text, key, ctx)
    if end is None:
        return NeedMore((CLOSE, OPEN))
    if end == -1:
        end = len(text)
    found = text[pos + len(OPEN):key].strip()
    what = f'found {short(found, 30)}' if found else 'found none'
    return Match(end, [ctx.issue(INVALID_CALL, f'<tool_call> at char {ctx.base + pos}: key/value '
                                 f'arguments without a recognisable tool name before <arg_key> '
                                 f'({what}); expected <tool_call>NAME<arg_key>...', pos, end,
                                 FORMAT)])


def partial_glm(text: str, view):
    """Read a ``<tool_call>NAME<arg_key>...`` call still arriving: ``(name, value reader)``."""
    if not text.startswith(OPEN):
        return None
    found = _NAME.match(text, skip_ws(text, len(OPEN)))
    if found is None:
        return None
    k = skip_ws(text, found.end())
    argument = view.streamable.get(found.group())
    if not argument or not text.startswith(KEY, k):
        return None  # not a streamable tool, a name still growing, or not GLM markup
    return found.group(), key_value_prefix(text, k, argument)


FAMILY = format_spec(FORMAT, [(OPEN, match_glm)], priority=18, partial=partial_glm,
                     description='<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>')
