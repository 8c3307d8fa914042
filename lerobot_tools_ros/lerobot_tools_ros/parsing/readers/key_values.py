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
GLM-style key/value pairs: ``<arg_key>K</arg_key><arg_value>V</arg_value>`` ... ``</tool_call>``.

Read by ``glm45`` (``<tool_call>NAME<arg_key>...``) and ``hunyuan`` (``<tool_call>NAME
<tool_sep><arg_key>...``). Values are typed by the catalog schema (``typed_values``). The
arguments are an open list of pairs, so only ``</tool_call>`` (or where the next call starts,
or the end of a Hunyuan section) shows that a call is complete.
"""

from .text import skip_ws
from .typed_values import typed_value
from ..answers import Match, NEED_ANY, need_closing, NeedMore
from ..context import Ctx
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS

OPEN = '<tool_call>'
CLOSE = '</tool_call>'
KEY = '<arg_key>'
KEY_END = '</arg_key>'
VALUE = '<arg_value>'
VALUE_END = '</arg_value>'
_WAKE = (VALUE_END, KEY_END, CLOSE)
_NEXT_CALL = (OPEN, '</tool_calls>')  # what may stand where a </tool_call> is missing
_AFTER_PAIRS = (CLOSE, KEY) + _NEXT_CALL
_NEED_CLOSE = need_closing(*_AFTER_PAIRS)
UNCLOSED = object()  # read_pair: the pair is not closed inside its call


def read_arguments(text: str, pos: int, k: int, name: str, ctx: Ctx, fmt: str):
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
    memo_key = (ctx.base + pos, 'pairs', fmt)
    state = ctx.recall(memo_key)
    if state is not None:  # the pairs already complete in an earlier feed
        k = skip_ws(text, state[0] - ctx.base)  # more whitespace may have come since
        arguments = dict(state[1])
        problems = list(state[2])
    while text.startswith(KEY, k):
        pair = read_pair(text, k, ctx)
        if type(pair) is not tuple:
            if pair is not None and pair is not UNCLOSED:
                return pair
            end = call_end(text, k, ctx)  # a pair's closing tag is missing
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
        ctx.remember(memo_key, (ctx.base + k, dict(arguments), tuple(problems)))
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


def read_pair(text: str, k: int, ctx: Ctx):
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


def call_end(text: str, k: int, ctx: Ctx) -> int | None:
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


def _truncated(text: str, pos: int, ctx: Ctx, name: str, fmt: str):
    if not ctx.final:
        return NeedMore(_WAKE)
    n = len(text)
    return Match(n, [ctx.issue(TRUNCATED, f'<tool_call>{name} at char {ctx.base + pos}: the '
                               f'text ended inside the call (expected {CLOSE!r})', pos, n, fmt,
                               name)])
