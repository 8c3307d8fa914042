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
JSON call objects in a family's own tokens, and sections of calls between special tokens.

``<|tool_call|>[...]`` (Granite), ``<longcat_tool_call>{...}</longcat_tool_call>`` (LongCat),
``<tool_calls>[...]</tool_calls>`` (Jamba, Hunyuan, MiniMax-M1), ``functools[...]`` (Phi-4-mini)
and the like differ only in their tokens, so each family module declares a ``Tagged`` and
registers a matcher calling ``match`` with it. ``match_section``, ``call_arguments``,
``truncated_call`` and ``bad_call`` serve the families whose calls sit between special tokens
(DeepSeek, Kimi K2, Hunyuan).
"""

from dataclasses import dataclass
from typing import Callable

from .json_calls import add_value_calls, describe_non_call
from .json_values import (guess_name, invalid_end, READ_NEED, READ_OK, READ_TRUNCATED, read_value,
                          salvage_items, slice_problem)
from .text import skip_ws
from ..answers import Match, NEED_ANY, need_closing, NeedMore
from ..context import after_tag, Ctx
from ..results import INVALID_CALL, TRUNCATED, UNPARSEABLE_ARGUMENTS


@dataclass(frozen=True)
class Tagged:
    """
    One family's JSON-in-tokens syntax.

    ``open``/``close``: the tokens (``close`` '' when there is none, or optional when
    ``close_optional``); ``several``: more JSON values may follow one another before the
    close (MiniMax-M1 writes one object per line); ``normalize``: turns the family's own
    call objects into ``{"name", "arguments"}`` ones (Cohere's ``tool_name``).
    """

    fmt: str
    open: str  # noqa: A003
    close: str = ''
    several: bool = False
    normalize: Callable | None = None
    example: str = '{"name": "say", "arguments": {"text": "hi"}}'


def after_close(text: str, end: int, close: str, ctx: Ctx):
    """Where markup ends after a value: past an optional closing token; None: need more text."""
    if not close:
        return end
    k = skip_ws(text, end)
    if text.startswith(close, k):
        return k + len(close)
    if not ctx.final and close.startswith(text[k:k + len(close)]):
        return None  # only whitespace or the start of the closing token so far
    return end


def _block_to_close(text: str, pos: int, k: int, spec: Tagged, ctx: Ctx):
    """Report a body that is not JSON; the block runs to the closing token (or the end)."""
    n = len(text)
    stop = ctx.find(text, spec.close, k) if spec.close else -1
    if stop == -1:
        if not ctx.final:
            return NeedMore((spec.close,) if spec.close else None)
        stop = n
    else:
        stop += len(spec.close)
    found = text[k:min(k + 20, stop)]
    return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{spec.open} at char '
                                  f'{ctx.base + pos}: expected JSON like {spec.example}, found '
                                  f'{found!r}', pos, stop, spec.fmt)])


def match(text: str, pos: int, spec: Tagged, ctx: Ctx, k: int | None = None):
    """Match ``spec.open`` + JSON value(s) + ``spec.close`` at ``pos`` (body at ``k``)."""
    if k is None:
        body = after_tag(text, pos, spec.open, ctx, spec.fmt,
                         f'expected JSON like {spec.example}')
        if not isinstance(body, int):
            return body
        k = body
    n = len(text)
    if text[k] not in '{[':
        return _block_to_close(text, pos, k, spec, ctx)
    values: list = []
    problems: list = []  # (message, name) of values that could not be read
    while True:
        status, value, end, note = read_value(text, k, ctx)
        if status == READ_NEED:
            return NeedMore(('}', ']'))
        if status == READ_TRUNCATED:
            return Match(n, [ctx.issue(TRUNCATED, f'{spec.open} at char {ctx.base + pos}: the '
                                       f'text ended inside the call ({note})', pos, n, spec.fmt,
                                       guess_name(text[k:]))])
        if status != READ_OK:
            stop = invalid_end(text, k, end, note, ctx)
            if stop is None:
                return NeedMore(('}', ']'))
            salvaged = salvage_items(text, k, stop)
            if not salvaged and not (spec.several and (values or problems or _more(text, stop))):
                return _invalid(text, pos, k, end, note, spec, ctx)
            for ok, item, source in salvaged:  # a broken list, read item by item
                if ok:
                    values.append(item)
                else:
                    problems.append((f'an item of the list is {item}', guess_name(source)))
            if not salvaged:  # one broken value among several (MiniMax-M1's lines)
                problems.append((f'the call at char {ctx.base + k} is {note}',
                                 guess_name(text[k:stop])))
            end = stop
        else:
            values.append(value)
        j = skip_ws(text, end)
        if not spec.several or (j < n and text[j] not in '{['):
            break
        if j >= n:
            if not ctx.final:
                return NEED_ANY
            break
        k = j
    stop = after_close(text, end, spec.close, ctx)
    if stop is None:
        return need_closing(spec.close, spec.open)
    items: list = []
    for value in values:
        if spec.normalize is not None:
            value = spec.normalize(value)
        if not add_value_calls(value, spec.fmt, ctx, pos, stop, items):
            items.append(ctx.issue(INVALID_CALL, f'{spec.open} at char {ctx.base + pos}: '
                                   f'expected {spec.example}; {describe_non_call(value)}', pos,
                                   stop, spec.fmt))
    for reason, name in problems:
        items.append(ctx.issue(UNPARSEABLE_ARGUMENTS, f'{spec.open} at char {ctx.base + pos}: '
                               f'{reason}; expected JSON like {spec.example}', pos, stop,
                               spec.fmt, name))
    return Match(stop, items)


def _more(text: str, end: int) -> bool:
    """Whether another JSON value follows ``end`` (after whitespace)."""
    j = skip_ws(text, end)
    return j < len(text) and text[j] in '{['


def _invalid(text: str, pos: int, k: int, end: int, note: str, spec: Tagged, ctx: Ctx):
    stop = invalid_end(text, k, end, note, ctx)
    if stop is None:
        return NeedMore(('}', ']'))
    close = after_close(text, stop, spec.close, ctx)
    if close is None:
        return NEED_ANY
    return Match(close, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{spec.open} at char '
                                   f'{ctx.base + pos}: the call is {note}; expected JSON like '
                                   f'{spec.example}', pos, close, spec.fmt,
                                   guess_name(text[k:stop]))])


def match_section(text: str, pos: int, ctx: Ctx, fmt: str, tokens: tuple[str, str, str],
                  read_call: Callable):
    """
    Match a section of calls: ``begin``, calls that start with ``call``, then ``end``.

    ``tokens`` is ``(begin, end, call)``; ``read_call(text, k, ctx)`` reads one call at ``k``
    and returns ``(end, items)``, None (not such a call) or a matcher result. The closing token
    may be missing at the end of the text when the calls are complete (DeepSeek, Kimi K2,
    Hunyuan).
    """
    begin, end, call = tokens
    k = after_tag(text, pos, begin, ctx, fmt, f'expected {call}')
    if not isinstance(k, int):
        return k
    n = len(text)
    items: list = []
    key = (ctx.base + pos, 'section', fmt, tokens)
    state = ctx.recall(key)
    if state is not None:  # the calls already complete in an earlier feed
        k = state[0] - ctx.base
        items = list(state[1])
    while True:
        k = skip_ws(text, k)
        if text.startswith(end, k):
            return Match(k + len(end), items)
        if k >= n or (not ctx.final and end.startswith(text[k:k + len(end)])):
            if not ctx.final:
                return need_closing(end, call)
            if items:
                return Match(k, items)  # the closing token never came; the calls are complete
            return Match(n, [ctx.issue(TRUNCATED, f'{begin} at char {ctx.base + pos}: the text '
                                       'ended before a call', pos, n, fmt)])
        if not text.startswith(call, k):
            if not ctx.final and call.startswith(text[k:k + len(call)]):
                return need_closing(end, call)
            return Match(k, items) if items else None
        result = read_call(text, k, ctx)
        if result is None:  # not a call of this family: the section ends before it
            return Match(k, items) if items else None
        if type(result) is not tuple:
            if type(result) is Match and items:  # keep the complete calls before it
                return Match(result.end, items + result.items)
            return result
        k, call_items = result
        items.extend(call_items)
        ctx.remember(key, (ctx.base + k, tuple(items)))


def call_arguments(text: str, pos: int, k: int, ctx: Ctx, fmt: str, tokens: tuple[str, str],
                   name: str, wake: tuple):
    """
    Read the JSON arguments at ``k`` of a call that the special token ``tokens[1]`` closes.

    ``tokens`` is ``(call, call_end)``. Returns ``(value, end)`` when the arguments are a JSON
    value (or Python literal) that ends before the closing token; otherwise what a call reader
    returns: NeedMore, a truncated Match, or ``(end, items)`` with one issue. The closing token
    bounds the arguments: a value that is not complete before it is reported up to that token
    and never read into the next call (a special token cannot be part of a JSON string).
    """
    call, call_end = tokens
    status, value, end, note = read_value(text, k, ctx)
    limit = ctx.find(text, call_end, k)
    if status == READ_OK and (limit == -1 or end <= limit):
        return value, end
    if limit != -1:
        stop = limit + len(call_end)
        return stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{call} at char {ctx.base + pos}: the '
                                f'arguments of {name!r} are not a JSON object that ends before '
                                f'{call_end} ({slice_problem(text, k, limit, ctx)})', pos,
                                stop, fmt, name or guess_name(text[k:limit]))]
    if status == READ_NEED:
        return NeedMore(wake)
    if status == READ_TRUNCATED:
        return truncated_call(text, pos, ctx, fmt, call, name or guess_name(text[k:]), wake)
    bad_end = invalid_end(text, k, end, note, ctx)
    if bad_end is None:
        return NeedMore(wake)
    return bad_call(text, pos, bad_end, ctx, fmt, tokens, name, f'the arguments are {note}')


def truncated_call(text: str, pos: int, ctx: Ctx, fmt: str, call: str, name: str, wake: tuple):
    """Answer for text that ended inside a call: wait for ``wake``, or (final) report it."""
    if not ctx.final:
        return NeedMore(wake)
    n = len(text)
    return Match(n, [ctx.issue(TRUNCATED, f'{call} at char {ctx.base + pos}: the text ended '
                               'inside the call', pos, n, fmt, name)])


def bad_call(text: str, pos: int, stop: int, ctx: Ctx, fmt: str, tokens: tuple[str, str],
             name: str, reason: str, found_at: int = -1):
    """
    Report a ``call`` token's call as unparseable: ``(end, items)``, or NeedMore.

    ``tokens`` is ``(call, call_end)``; the call runs to ``call_end`` (or the end of the text).
    ``{found!r}`` in ``reason`` becomes an excerpt from ``found_at``.
    """
    call, call_end = tokens
    end = ctx.find(text, call_end, stop)
    if end == -1:
        if not ctx.final:
            return NeedMore((call_end,))
        end = len(text)
    else:
        end += len(call_end)
    if found_at != -1:
        found = text[found_at:min(found_at + 20, end)]
        reason = reason.replace('{found!r}', repr(found))
    return end, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{call} at char {ctx.base + pos}: {reason}',
                           pos, end, fmt, name)]
