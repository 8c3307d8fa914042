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
Kimi K2 call sections.

::

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.say:0<|tool_call_argument_begin|>{"text": "hi"}<|tool_call_end|>
    <|tool_calls_section_end|>

The call id is ``functions.NAME:INDEX``; the name is what lies between the ``functions.``
prefix (optional) and the ``:INDEX`` suffix. Section tokens are optional around a call. All five
tokens are special tokens, so none of them is ever content: text between them inside a section
is dropped, and a stray one anywhere (``<|tool_call_argument_begin|>`` in prose, a second
``<|tool_calls_section_end|>`` after a call) is markup without a call. A call's arguments end
at its ``<|tool_call_end|>``: an invalid value is reported up to that token and the next call
is still read.

Reasoning safety: Kimi K2 Thinking opens its call section without closing ``<think>``. The call
tokens are special tokens that a tokenizer never produces as reasoning text, so the section
opener ends an open ``<think>`` span and the calls after it are dispatched.
"""

import re

from ..answers import Match, MatchResult, need_closing, NeedMore
from ..context import Ctx
from ..readers import tagged
from ..readers.text import skip_ws
from ..registry import format_spec
from ..results import TRUNCATED

FORMAT = 'kimi_k2'
SECTION = '<|tool_calls_section_begin|>'
SECTION_END = '<|tool_calls_section_end|>'
CALL = '<|tool_call_begin|>'
ARGS = '<|tool_call_argument_begin|>'
CALL_END = '<|tool_call_end|>'
_ID = re.compile(r'\s*(?:functions\.)?([^\s:<>]+?)(?::\d+)?\s*\Z')
_WAKE = ('}', ']', CALL_END)
_NEXT = (CALL, SECTION_END)


def match_section(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a call section and every call in it; text between the tokens is dropped."""
    n = len(text)
    k = pos + len(SECTION)
    items: list = []
    key = (ctx.base + pos, 'kimi')
    state = ctx.recall(key)
    if state is not None:  # the calls already complete in an earlier feed
        k = state[0] - ctx.base
        items = list(state[1])
    while True:
        k = skip_ws(text, k)
        if text.startswith(SECTION_END, k):
            return Match(k + len(SECTION_END), items)
        if text.startswith(CALL, k):
            result = read_call(text, k, ctx)
            if type(result) is not tuple:
                if type(result) is Match and items:  # keep the complete calls before it
                    return Match(result.end, items + result.items)
                return result
            k, found = result
            items.extend(found)
            ctx.remember(key, (ctx.base + k, tuple(items)))
            continue
        if k >= n or (not ctx.final and n - k < len(SECTION_END) and (
                SECTION_END.startswith(text[k:]) or CALL.startswith(text[k:]))):
            if not ctx.final:
                return need_closing(*_NEXT)
            if not items:
                return Match(n, [ctx.issue(TRUNCATED, f'{SECTION} at char {ctx.base + pos}: the '
                                           'text ended before a call', pos, n, FORMAT)])
            return Match(k, items)  # the closing token never came
        following = _next_token(text, k, ctx)
        if following == -1:
            if not ctx.final:
                return NeedMore(_NEXT)
            return Match(k, items)  # no token follows: the section ended; the rest is prose
        k = following  # noise between the tokens is not content


def _next_token(text: str, k: int, ctx: Ctx) -> int:
    """Return where the next call or section-closing token starts, or -1."""
    best = -1
    for token in _NEXT:
        found = ctx.find(text, token, k)
        if found != -1 and (best == -1 or found < best):
            best = found
    return best


def match_call(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a ``<|tool_call_begin|>`` call outside a section."""
    result = read_call(text, pos, ctx)
    return Match(result[0], result[1]) if type(result) is tuple else result


def match_token(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Take a stray special token as markup: it is never content."""
    return Match(pos + len(trigger), [])


def read_call(text: str, pos: int, ctx: Ctx):
    """Read one call: ``(end, items)``, NeedMore, or a truncated Match."""
    n = len(text)
    i = pos + len(CALL)
    args = ctx.find(text, ARGS, i)
    if args == -1 or args - i > 200:
        if not ctx.final and n - i <= 200:
            return NeedMore((ARGS,))
        if args == -1:
            return _truncated(text, pos, ctx, '')
        return _bad(text, pos, i, ctx, '', f'expected functions.NAME:INDEX{ARGS}')
    found = _ID.match(text[i:args])
    if found is None:
        return _bad(text, pos, args, ctx, '', f'expected functions.NAME:INDEX before {ARGS}, '
                    f'found {text[i:args]!r}')
    name = found.group(1)
    k = skip_ws(text, args + len(ARGS))
    if k >= n:
        return _truncated(text, pos, ctx, name)
    if text[k] not in '{[':
        return _bad(text, pos, k, ctx, name, f'expected the arguments of {name!r} as a JSON '
                    'object, found {found!r}', k)
    result = tagged.call_arguments(text, pos, k, ctx, FORMAT, (CALL, CALL_END), name, _WAKE)
    if type(result) is not tuple or type(result[1]) is list:
        return result
    value, end = result
    e = skip_ws(text, end)
    if text.startswith(CALL_END, e):
        stop = e + len(CALL_END)
    elif not ctx.final and CALL_END.startswith(text[e:e + len(CALL_END)]):
        return need_closing(CALL_END, SECTION_END, CALL)
    else:
        stop = end
    items: list = []
    ctx.add_call(items, name, value, FORMAT, pos, stop)
    return stop, items


def _truncated(text: str, pos: int, ctx: Ctx, name: str):
    return tagged.truncated_call(text, pos, ctx, FORMAT, CALL, name, _WAKE)


def _bad(text: str, pos: int, stop: int, ctx: Ctx, name: str, reason: str, found_at: int = -1):
    """Report the call as unparseable; it runs to its closing token (``{found}``: an excerpt)."""
    return tagged.bad_call(text, pos, stop, ctx, FORMAT, (CALL, CALL_END), name, reason,
                           found_at)


FAMILY = format_spec(FORMAT, [(SECTION, match_section), (CALL, match_call)]
                     + [(token, match_token) for token in (ARGS, CALL_END, SECTION_END)],
                     priority=25, ends_reasoning={'<think>': (SECTION,)},
                     description='<|tool_call_begin|>functions.NAME:0'
                     '<|tool_call_argument_begin|>{...}')
