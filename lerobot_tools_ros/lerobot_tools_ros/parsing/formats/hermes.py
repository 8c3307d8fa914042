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
Hermes / Qwen2.5: ``<tool_call>{"name": "say", "arguments": {...}}</tool_call>``.

One tag per call (repeated for parallel calls); the last closing tag may be missing. The JSON
value's end is found by the decoder, so ``</tool_call>`` inside a string argument is fine.
Single quotes and Python literals are read with ``ast`` when JSON fails. A pythonic
``name(arg=value)`` inside the tag is accepted too. A ``<function=`` body is left to the
Qwen3-Coder format.

Reasoning safety: ``<tool_call>`` is written as text that reasoning may quote (Qwen3 and
Hermes models plan their calls in ``<think>``), so it never ends a reasoning span.
"""

from ..answers import Match, MatchResult, NEED_ANY, need_closing, NeedMore
from ..context import Ctx
from ..readers.json_calls import add_value_calls, describe_non_call
from ..readers.json_values import (guess_name, invalid_end, READ_INVALID, READ_NEED, READ_OK,
                                   READ_TRUNCATED, read_value)
from ..readers.partial import tagged_json_call_prefix
from ..readers.pythonic_calls import finish, read_call
from ..readers.text import IDENT, skip_ws
from ..registry import format_spec
from ..results import INVALID_CALL, TRUNCATED, UNPARSEABLE_ARGUMENTS

FORMAT = 'hermes'
OPEN = '<tool_call>'
CLOSE = '</tool_call>'
_WAKE = ('}', ']', ')', CLOSE)
_NEED_CLOSE = need_closing(CLOSE, OPEN)


def after_value(text: str, end: int, close: str, ctx: Ctx):
    """Where markup ends after a value: past an optional closing tag; None: need more text."""
    if text.startswith(close, end):
        return end + len(close)
    k = skip_ws(text, end)
    if text.startswith(close, k):
        return k + len(close)
    if not ctx.final and close.startswith(text[k:k + len(close)]):
        return None  # only whitespace or the start of the closing tag so far
    return end


def match_hermes(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match one ``<tool_call>`` block holding JSON, a Python literal or a pythonic call."""
    n = len(text)
    body = pos + len(OPEN)
    if body < n and text[body].isspace():
        body = skip_ws(text, body)
    if body >= n:
        if not ctx.final:
            return NEED_ANY
        return Match(n, [ctx.issue(TRUNCATED, f'<tool_call> at char {ctx.base + pos}: the text '
                                   f'ended before the call (expected a JSON object and '
                                   f'{CLOSE!r})', pos, n, FORMAT)])
    first = text[body]
    if first == '<':
        return _tag_body(text, pos, body, ctx)
    if first in '{[':
        return _json_body(text, pos, body, ctx)
    return _other_body(text, pos, body, ctx)


def _tag_body(text: str, pos: int, body: int, ctx: Ctx):
    """Report an empty ``<tool_call></tool_call>``; leave other markup to its format."""
    if text.startswith(CLOSE, body):
        stop = body + len(CLOSE)
        return Match(stop, [ctx.issue(INVALID_CALL, f'<tool_call> at char {ctx.base + pos}: '
                                      'the tag is empty; expected a JSON object like '
                                      '{"name": "say", "arguments": {"text": "hi"}}', pos,
                                      stop, FORMAT)])
    if not ctx.final and CLOSE.startswith(text[body:body + len(CLOSE)]):
        return NEED_ANY
    return None  # <function=...>: Qwen3-Coder XML


def _json_body(text: str, pos: int, body: int, ctx: Ctx):
    """Read a JSON value (or Python literal) body: one call, a list, or a problem."""
    status, value, end, note = read_value(text, body, ctx)
    if status == READ_NEED:
        return NeedMore(_WAKE)
    if status == READ_OK:
        stop = after_value(text, end, CLOSE, ctx)
        if stop is None:
            return _NEED_CLOSE
        items: list = []
        if not add_value_calls(value, FORMAT, ctx, pos, stop, items):
            items.append(ctx.issue(
                INVALID_CALL, f'<tool_call> at char {ctx.base + pos}: expected '
                f'{{"name": ..., "arguments": {{...}}}}; {describe_non_call(value)}',
                pos, stop, FORMAT))
        return Match(stop, items)
    n = len(text)
    where = f'<tool_call> at char {ctx.base + pos}'
    close, following = _own_close(text, body, ctx)
    if status == READ_TRUNCATED and close == -1:
        return Match(n, [ctx.issue(TRUNCATED, f'{where}: the text ended inside the call '
                                   f'({note}, then {CLOSE!r})', pos, n, FORMAT,
                                   guess_name(text[body:]))])
    if close != -1:
        stop = close + len(CLOSE)
    elif following == -1 and not ctx.final:
        return NeedMore((CLOSE, OPEN))
    else:  # no closing tag: the malformed value itself is the block
        stop = invalid_end(text, body, end, note, ctx) if status == READ_INVALID else end
        if following != -1 and (stop is None or stop > following):
            stop = following
        if stop is None:
            return NeedMore(_WAKE + (OPEN,))
    reason = (note if status == READ_INVALID
              else f'not closed before {CLOSE!r} ({note})')
    return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{where}: the call is {reason}; '
                                  'expected a JSON object like {"name": "say", "arguments": '
                                  '{"text": "hi"}}', pos, stop, FORMAT,
                                  guess_name(text[body:stop]))])


def _other_body(text: str, pos: int, body: int, ctx: Ctx):
    """Read a pythonic ``name(...)`` body, or report text that is no call at all."""
    n = len(text)
    where = f'<tool_call> at char {ctx.base + pos}'
    ident = IDENT.match(text, body)
    if ident is not None and ident.end() < n and text[ident.end()] == '(':
        result = read_call(text, body, ctx)
        if type(result) is not tuple:
            return result
        stop = after_value(text, result[0], CLOSE, ctx)
        if stop is None:
            return _NEED_CLOSE
        return Match(stop, finish(result[1], ctx, FORMAT, pos, stop))
    if ident is not None and ident.end() >= n and not ctx.final:
        return NEED_ANY
    close, following = _own_close(text, body, ctx)
    if close == -1 and following == -1:
        if not ctx.final:
            return NeedMore((CLOSE, OPEN))
        return Match(n, [ctx.issue(TRUNCATED, f'{where}: the text ended inside the call '
                                   f'(expected a JSON object, then {CLOSE!r})', pos, n, FORMAT)])
    stop = close + len(CLOSE) if close != -1 else following
    found = text[body:min(body + 20, stop)]
    return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{where}: expected a JSON object '
                                  f'after the tag, found {found!r}', pos, stop, FORMAT)])


def _own_close(text: str, body: int, ctx: Ctx) -> tuple[int, int]:
    """
    ``(close, following)``: this block's ``</tool_call>`` and the next ``<tool_call>``.

    A closing tag after the next opening tag belongs to that one, so ``close`` is -1 then.
    Both -1: neither is in the text (yet).
    """
    close = ctx.find(text, CLOSE, body)
    following = ctx.find(text, OPEN, body)
    if close != -1 and following != -1 and following < close:
        close = -1
    return close, following


def partial_hermes(text: str, view):
    """Read a ``<tool_call>{...`` call still arriving: ``(name, value reader)`` or None."""
    return tagged_json_call_prefix(text, OPEN, view)


FAMILY = format_spec(FORMAT, [(OPEN, match_hermes)], priority=20,
                     description='<tool_call>{"name": ..., "arguments": {...}}</tool_call>',
                     partial=partial_hermes)
