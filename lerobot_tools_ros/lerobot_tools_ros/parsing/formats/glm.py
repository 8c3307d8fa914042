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

from .qwen3_coder import typed_value
from ..core import Match, NEED_ANY, need_closing, NeedMore
from ..registry import register_format
from ..results import INVALID_CALL, TRUNCATED, UNPARSEABLE_ARGUMENTS
from ..values import short, skip_ws

FORMAT = 'glm45'
OPEN = '<tool_call>'
CLOSE = '</tool_call>'
KEY = '<arg_key>'
KEY_END = '</arg_key>'
VALUE = '<arg_value>'
VALUE_END = '</arg_value>'
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_.\-]*')
_WAKE = (VALUE_END, KEY_END, CLOSE)
_NEXT_CALL = (OPEN, '</tool_calls>')  # what may stand where a </tool_call> is missing
_AFTER_PAIRS = (CLOSE, KEY) + _NEXT_CALL
_NEED_CLOSE = need_closing(*_AFTER_PAIRS)
_MAX_NAME = 200  # a tool name before <arg_key> is at most this long
UNCLOSED = object()  # read_pair: the pair is not closed inside its call


def match_glm(text: str, pos: int, trigger: str, ctx):
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


def _nameless(text: str, pos: int, key: int, ctx):
    """Report key/value pairs whose call has no recognisable name; it runs to its end tag."""
    end = _call_end(text, key, ctx)
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


def _call_end(text: str, k: int, ctx) -> int | None:
    """
    Where a malformed call from ``k`` ends: past its ``</tool_call>``, or at the next call.

    None: not known yet (streaming); -1: the text ended first.
    """
    close = ctx.find(text, CLOSE, k)
    following = ctx.find(text, OPEN, k)
    if following != -1 and (close == -1 or following < close):
        return following
    if close != -1:
        return close + len(CLOSE)
    return None if not ctx.final else -1


def read_arguments(text: str, pos: int, k: int, name: str, ctx, fmt: str):
    """
    Read ``<arg_key>``/``<arg_value>`` pairs from ``k`` through ``</tool_call>``.

    Return ``(end, items)`` for the call that started at ``pos``, or what the matcher should
    return (wait for more text, or a truncated Match). Shared with Hunyuan. The arguments are
    an open list, so only ``</tool_call>`` (or the next call, or the end of a Hunyuan section)
    shows that they are complete: other text where it should be makes the call unparseable,
    and a text that ends there ends inside the call.
    """
    n = len(text)
    arguments: dict = {}
    problems: list[str] = []
    props = ctx.view.properties(name)
    while text.startswith(KEY, k):
        pair = read_pair(text, k, ctx)
        if type(pair) is not tuple:
            if pair is not None and pair is not UNCLOSED:
                return pair
            end = _call_end(text, k, ctx)  # a pair's closing tag is missing
            if end is None:
                return NeedMore((CLOSE, OPEN))
            if end == -1:
                return _truncated(text, pos, ctx, name, fmt)
            return end, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'<tool_call>{name} at char '
                                   f'{ctx.base + pos}: the <arg_key>/<arg_value> pair at char '
                                   f'{ctx.base + k} is not closed', pos, end, fmt, name)]
        key, raw, k = pair
        if key in arguments:
            problems.append(f'argument {key!r} is given twice')
        else:
            arguments[key] = typed_value(raw, props.get(key))
        k = skip_ws(text, k)
    if text.startswith(CLOSE, k):
        stop = k + len(CLOSE)
    elif text.startswith(_NEXT_CALL, k):
        stop = k  # </tool_call> missing, but the next call (or the section's end) follows
    elif k >= n or (not ctx.final and any(tag.startswith(text[k:k + len(tag)])
                                          for tag in _AFTER_PAIRS)):
        if not ctx.final:
            return _NEED_CLOSE
        return _truncated(text, pos, ctx, name, fmt)
    else:
        return k, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'<tool_call>{name} at char '
                             f'{ctx.base + pos}: expected another <arg_key> or {CLOSE!r} after '
                             f'the arguments, found other text at char {ctx.base + k}', pos, k,
                             fmt, name)]
    items: list = []
    if problems:
        items.append(ctx.issue(UNPARSEABLE_ARGUMENTS, f'<tool_call>{name} at char '
                               f'{ctx.base + pos}: ' + '; '.join(problems), pos, stop, fmt,
                               name))
    else:
        ctx.add_call(items, name, arguments, fmt, pos, stop)
    return stop, items


def read_pair(text: str, k: int, ctx):
    """
    Read ``<arg_key>K</arg_key><arg_value>V</arg_value>`` at ``k``: ``(key, raw, end)``.

    None: the text ended inside the pair; ``UNCLOSED``: its ``</arg_key>`` does not come before
    the call's ``</tool_call>``; NeedMore while streaming.
    """
    key_end = ctx.find(text, KEY_END, k)
    close = ctx.find(text, CLOSE, k)
    if close != -1 and (key_end == -1 or close < key_end):
        return UNCLOSED
    if key_end == -1:
        return NeedMore(_WAKE) if not ctx.final else None
    key = text[k + len(KEY):key_end].strip()
    v = skip_ws(text, key_end + len(KEY_END))
    if v >= len(text) or (not ctx.final and VALUE.startswith(text[v:v + len(VALUE)])
                          and not text.startswith(VALUE, v)):
        # the next character decides whether a value follows (a key may have none)
        return NEED_ANY if not ctx.final else None
    if not text.startswith(VALUE, v):
        return key, '', v  # a key without a value
    value_end = ctx.find(text, VALUE_END, v)
    if value_end == -1:
        return NeedMore(_WAKE) if not ctx.final else None
    return key, text[v + len(VALUE):value_end], value_end + len(VALUE_END)


def _truncated(text: str, pos: int, ctx, name: str, fmt: str):
    if not ctx.final:
        return NeedMore(_WAKE)
    n = len(text)
    return Match(n, [ctx.issue(TRUNCATED, f'<tool_call>{name} at char {ctx.base + pos}: the '
                               f'text ended inside the call (expected {CLOSE!r})', pos, n, fmt,
                               name)])


register_format(FORMAT, [(OPEN, match_glm)], priority=18,
                description='<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>')
