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
``<arg_key>`` or the closing tag.
"""

import re

from .qwen3_coder import typed_value
from ..core import Match, NEED_ANY, need_closing, NeedMore
from ..registry import register_format
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS
from ..values import skip_ws

FORMAT = 'glm45'
OPEN = '<tool_call>'
CLOSE = '</tool_call>'
KEY = '<arg_key>'
KEY_END = '</arg_key>'
VALUE = '<arg_value>'
VALUE_END = '</arg_value>'
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_.\-]*')
_WAKE = (VALUE_END, KEY_END, CLOSE)
_NEED_CLOSE = need_closing(CLOSE, KEY)


def match_glm(text: str, pos: int, trigger: str, ctx):
    """Match ``<tool_call>NAME<arg_key>...`` (None for other ``<tool_call>`` bodies)."""
    n = len(text)
    i = skip_ws(text, pos + len(OPEN))
    if i < n and text[i] in '{[<':
        return None  # JSON or XML: Hermes and Qwen3-Coder read it (the common case first)
    found = _NAME.match(text, i)
    if found is None:
        return NEED_ANY if i >= n and not ctx.final else None
    name = found.group()
    k = skip_ws(text, found.end())
    if k >= n:
        return NEED_ANY if not ctx.final else None
    if not (text.startswith(KEY, k) or text.startswith(CLOSE, k)):
        rest = text[k:]
        if not ctx.final and n - k < len(KEY) and (
                KEY.startswith(rest) or CLOSE.startswith(rest)):
            return NEED_ANY
        return None
    result = read_arguments(text, pos, k, name, ctx, FORMAT)
    return Match(result[0], result[1]) if type(result) is tuple else result


def read_arguments(text: str, pos: int, k: int, name: str, ctx, fmt: str):
    """
    Read ``<arg_key>``/``<arg_value>`` pairs from ``k`` through ``</tool_call>``.

    Return ``(end, items)`` for the call that started at ``pos``, or what the matcher should
    return (wait for more text, or a truncated Match). Shared with Hunyuan's ``<tool_sep>`` form.
    """
    n = len(text)
    arguments: dict = {}
    problems: list[str] = []
    props = ctx.view.properties(name)
    while text.startswith(KEY, k):
        pair = read_pair(text, k, ctx)
        if type(pair) is not tuple:
            return _truncated(text, pos, ctx, name, fmt) if pair is None else pair
        key, raw, k = pair
        if key in arguments:
            problems.append(f'argument {key!r} is given twice')
        else:
            arguments[key] = typed_value(raw, props.get(key))
        k = skip_ws(text, k)
    if text.startswith(CLOSE, k):
        stop = k + len(CLOSE)
    elif k >= n or (not ctx.final and (CLOSE.startswith(text[k:k + len(CLOSE)])
                                       or KEY.startswith(text[k:k + len(KEY)]))):
        if not ctx.final:
            return _NEED_CLOSE
        return _truncated(text, pos, ctx, name, fmt)
    else:
        stop = k  # stray text before </tool_call>: the call ends with its last pair
    items: list = []
    if problems:
        items.append(ctx.issue(UNPARSEABLE_ARGUMENTS, f'<tool_call>{name} at char '
                               f'{ctx.base + pos}: ' + '; '.join(problems), pos, stop, fmt,
                               name))
    else:
        ctx.add_call(items, name, arguments, fmt, pos, stop)
    return stop, items


def read_pair(text: str, k: int, ctx):
    """``<arg_key>K</arg_key><arg_value>V</arg_value>`` at ``k``: (key, raw, end) or None."""
    key_end = ctx.find(text, KEY_END, k)
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
