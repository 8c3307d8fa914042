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
Gemma: FunctionGemma's call tokens and Gemma 3's ```` ```tool_code ```` blocks.

FunctionGemma: ``<start_function_call>call:NAME{key:<escape>text<escape>,n:5}<end_function_call>``.
Strings are wrapped in ``<escape>`` tokens (so they may hold any character); numbers, booleans
and null are bare; objects ``{k:v}`` and lists ``[v,...]`` nest. Gemma 3 has no call tokens; its
function-calling guide has the model write a Python call in a ```` ```tool_code ```` fence
(optionally inside ``print(...)``), read here like a pythonic call. A bare ``[f(x=1)]`` is the
pythonic format.

Reasoning safety: FunctionGemma has no reasoning span of its own and a ```` ```tool_code ````
fence is ordinary text, so neither ends a reasoning span.
"""

import re

from ..answers import Match, MatchResult, NEED_ANY, NeedMore
from ..context import after_tag, Ctx
from ..readers.json_values import decode_json, MAX_DEPTH
from ..readers.pythonic_calls import finish, list_start, read_list, read_named_call
from ..readers.text import skip_ws
from ..registry import format_spec
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS

FORMAT = 'gemma'
START = '<start_function_call>'
END = '<end_function_call>'
ESCAPE = '<escape>'
TOOL_CODE = '```tool_code'
_NAME = re.compile(r'call:([A-Za-z_][A-Za-z0-9_.\-]*)')
_KEY = re.compile(r'\s*([^\s:{}\[\],<>]+)\s*:\s*')
_SCALAR = re.compile(r'[^,}\]<]*')


class _Bad(Exception):
    """Not FunctionGemma's value syntax at ``pos`` (an internal signal, never raised out)."""

    def __init__(self, pos: int, reason: str) -> None:
        super().__init__(reason)
        self.pos = pos
        self.reason = reason


def match_function_call(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<start_function_call>call:NAME{...}<end_function_call>``."""
    k = after_tag(text, pos, START, ctx, FORMAT, 'expected call:NAME{...}')
    if not isinstance(k, int):
        return k
    n = len(text)
    end = ctx.find(text, END, k)
    if end == -1:
        if not ctx.final:
            return NeedMore((END,))
        return Match(n, [ctx.issue(TRUNCATED, f'{START} at char {ctx.base + pos}: the text '
                                   f'ended before {END!r}', pos, n, FORMAT, _name(text, k))])
    stop = end + len(END)
    found = _NAME.match(text, k)
    if found is None:
        seen = text[k:min(k + 20, end)]
        return _bad(ctx, pos, stop, '', f'expected call:NAME{{...}}, found {seen!r}')
    name = found.group(1)
    i = skip_ws(text, found.end())
    try:
        if i >= end or text[i] != '{':
            raise _Bad(i, 'expected {')
        arguments, i = _read_value(text, i, end)
        if skip_ws(text, i) != end:
            raise _Bad(i, f'unexpected {text[i:min(i + 10, end)]!r} after the arguments')
    except _Bad as exc:
        return _bad(ctx, pos, stop, name, f'{exc.reason} at char {ctx.base + exc.pos}')
    items: list = []
    ctx.add_call(items, name, arguments, FORMAT, pos, stop)
    return Match(stop, items)


def _name(text: str, k: int) -> str:
    found = _NAME.match(text, k)
    return found.group(1) if found else ''


def _bad(ctx: Ctx, pos: int, stop: int, name: str, reason: str):
    return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{START} at char {ctx.base + pos}: '
                                  f'{reason}', pos, stop, FORMAT, name)])


def _read_value(text: str, i: int, end: int) -> tuple[object, int]:
    """Read one value at ``i`` (before ``end``); an explicit stack, no recursion."""
    stack: list = []  # (container, pending key) pairs
    while True:
        i = skip_ws(text, i)
        if i >= end:
            raise _Bad(i, 'the arguments end early')
        c = text[i]
        if c == '{' or c == '[':
            if len(stack) >= MAX_DEPTH:
                raise _Bad(i, f'nested more than {MAX_DEPTH} levels deep')
            stack.append([{} if c == '{' else [], None])
            i += 1
            if c == '{':
                i = _key(text, i, end, stack[-1])
            continue
        if (c == '}' or c == ']') and stack and not stack[-1][0] and (
                (c == '}') == (type(stack[-1][0]) is dict)):
            value = stack.pop()[0]  # an empty {} or []
            i += 1
        elif text.startswith(ESCAPE, i):
            close = text.find(ESCAPE, i + len(ESCAPE), end)
            if close == -1:
                raise _Bad(i, f'a string without its closing {ESCAPE}')
            value = text[i + len(ESCAPE):close]
            i = close + len(ESCAPE)
        else:
            scalar = _SCALAR.match(text, i, end)
            raw = scalar.group().strip() if scalar is not None else ''
            if scalar is None or not raw:
                raise _Bad(i, f'expected a value, found {text[i:min(i + 10, end)]!r}')
            value = _scalar(raw)
            i += len(scalar.group())
        while True:  # put the value in its container; close finished containers
            if not stack:
                return value, i
            container, key = stack[-1]
            if type(container) is dict:
                container[key] = value
            else:
                container.append(value)
            i = skip_ws(text, i)
            closer = '}' if type(container) is dict else ']'
            if i < end and text[i] == ',':
                i += 1
                if type(container) is dict:
                    i = _key(text, i, end, stack[-1])
                break
            if i < end and text[i] == closer:
                stack.pop()
                value = container
                i += 1
                continue
            raise _Bad(i, f'expected , or {closer}')


def _key(text: str, i: int, end: int, frame: list) -> int:
    """Read ``key:`` into ``frame``; an empty object ``{}`` is closed by the caller's loop."""
    k = skip_ws(text, i)
    if k < end and text[k] == '}' and not frame[0]:
        return k  # '{}': the value loop closes the empty object
    found = _KEY.match(text, i, end)
    if found is None:
        raise _Bad(i, 'expected key:value')
    frame[1] = found.group(1)
    return found.end()


def _scalar(raw: str) -> object:
    try:
        return decode_json(raw)
    except (ValueError, RecursionError):
        return raw


def match_tool_code(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a ```` ```tool_code ```` fence holding a Python call (maybe in ``print(...)``)."""
    n = len(text)
    k = skip_ws(text, pos + len(TOOL_CODE))
    if k >= n:
        return NEED_ANY if not ctx.final else None
    printed = text.startswith('print(', k)
    if printed:
        k = skip_ws(text, k + len('print('))
        if k >= n:
            return NEED_ANY if not ctx.final else None
    elif not ctx.final and 'print('.startswith(text[k:k + 6]):
        return NEED_ANY
    if text[k:k + 1] == '[':
        start = list_start(text, k, ctx)
        if start is not True:
            return start or None
        result = read_list(text, k, ctx, True)
    else:
        result = read_named_call(text, k, ctx)
    if type(result) is not tuple:
        return result
    end, parts = result
    e = skip_ws(text, end)
    if printed:
        if e >= n and not ctx.final:
            return NEED_ANY
        if text.startswith(')', e):
            e = skip_ws(text, e + 1)
    if text.startswith('```', e):
        stop = e + 3
    elif not ctx.final and '```'.startswith(text[e:e + 3]):
        return NEED_ANY
    else:
        stop = end
    return Match(stop, finish(parts, ctx, FORMAT, pos, stop))


FAMILY = format_spec(FORMAT, [(START, match_function_call), (TOOL_CODE, match_tool_code)],
                     priority=25,
                     description='<start_function_call>call:NAME{k:<escape>v<escape>}')
