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
DeepSeek V3 / R1 / V3.1 call tokens.

V3 and R1: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`` then the
arguments in a ```` ```json ```` fence, ``<｜tool▁call▁end｜>``, and ``<｜tool▁calls▁end｜>``
after the last call. V3.1 writes ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}`` without the
``function`` type and the fence. (``｜`` is U+FF5C, ``▁`` U+2581.) The section tokens are
optional around a call; a missing closing token at the end of the text is tolerated when the
call itself is complete. A call's arguments end at its ``<｜tool▁call▁end｜>``: an invalid
value is reported up to that token and the next call is still read. V3.2's and V4's DSML
markup is its own family, ``deepseek_dsml``.

Reasoning safety: the call tokens are special tokens that a tokenizer never produces as
reasoning text, so ``<｜tool▁calls▁begin｜>`` ends an open ``<think>`` span (R1 and V3.1 in
thinking mode write ``</think>`` first; a section without it is still a call).
"""

import re

from ..answers import Match, MatchResult, need_closing, NeedMore
from ..context import Ctx
from ..readers import tagged
from ..readers.text import match_end, skip_ws
from ..registry import format_spec
from ..results import INVALID_CALL

FORMAT = 'deepseek'
CALLS_BEGIN = '<｜tool▁calls▁begin｜>'
CALLS_END = '<｜tool▁calls▁end｜>'
CALL_BEGIN = '<｜tool▁call▁begin｜>'
CALL_END = '<｜tool▁call▁end｜>'
SEP = '<｜tool▁sep｜>'
_NAME = re.compile(r'[^\s<>{}｜]*')
_FENCE = re.compile(r'```[A-Za-z]*')
_WAKE = ('}', ']', CALL_END)


def match_section(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<｜tool▁calls▁begin｜>`` and the calls in it."""
    return tagged.match_section(text, pos, ctx, FORMAT, (CALLS_BEGIN, CALLS_END, CALL_BEGIN),
                                read_call)


def match_call(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a ``<｜tool▁call▁begin｜>`` call without the section token."""
    result = read_call(text, pos, ctx)
    if type(result) is not tuple:
        return result
    return Match(result[0], result[1])


def read_call(text: str, pos: int, ctx: Ctx):
    """Read one ``<｜tool▁call▁begin｜>...<｜tool▁call▁end｜>``: ``(end, items)`` or a result."""
    n = len(text)
    i = pos + len(CALL_BEGIN)
    sep = ctx.find(text, SEP, i)
    if sep == -1 or sep - i > 200:
        if not ctx.final and n - i <= 200:
            return NeedMore((SEP,))
        if sep == -1:
            return _truncated(text, pos, ctx, '')
        return _bad(text, pos, i, ctx, '', f'expected NAME{SEP}{{...}}')
    head = text[i:sep].strip()
    k = sep + len(SEP)
    if head == 'function':  # V3 / R1: the name follows the separator, then a fenced value
        e = match_end(_NAME, text, k)
        if e >= n:
            return _truncated(text, pos, ctx, '')
        name = text[k:e]
        k = skip_ws(text, e)
        fence = _FENCE.match(text, k)
        if fence is not None:
            k = skip_ws(text, fence.end())
    else:
        name = head
    if k >= n:
        return _truncated(text, pos, ctx, name)
    if text[k] not in '{[':
        return _bad(text, pos, k, ctx, name, f'expected the arguments of {name!r} as a JSON '
                    'object, found {found!r}', k)
    result = tagged.call_arguments(text, pos, k, ctx, FORMAT, (CALL_BEGIN, CALL_END), name,
                                   _WAKE)
    if type(result) is not tuple or type(result[1]) is list:
        return result
    value, end = result
    stop = _after_call(text, end, ctx)
    if stop is None:
        return need_closing('```', CALL_END)
    items: list = []
    if not name:
        items.append(ctx.issue(INVALID_CALL, f'{CALL_BEGIN} at char {ctx.base + pos}: the call '
                               'has no name', pos, stop, FORMAT))
    else:
        ctx.add_call(items, name, value, FORMAT, pos, stop)
    return stop, items


def _after_call(text: str, end: int, ctx: Ctx):
    """Past the closing fence and ``<｜tool▁call▁end｜>``; None: need more text."""
    k = skip_ws(text, end)
    if text.startswith('```', k):
        k = skip_ws(text, k + 3)
    if text.startswith(CALL_END, k):
        return k + len(CALL_END)
    if not ctx.final and (k >= len(text) or CALL_END.startswith(text[k:k + len(CALL_END)])
                          or '```'.startswith(text[k:k + 3])):
        return None
    return end


def _truncated(text: str, pos: int, ctx: Ctx, name: str):
    return tagged.truncated_call(text, pos, ctx, FORMAT, CALL_BEGIN, name, _WAKE)


def _bad(text: str, pos: int, stop: int, ctx: Ctx, name: str, reason: str, found_at: int = -1):
    """Report the call as unparseable; it runs to its closing token (``{found}``: an excerpt)."""
    return tagged.bad_call(text, pos, stop, ctx, FORMAT, (CALL_BEGIN, CALL_END), name, reason,
                           found_at)


FAMILY = format_spec(FORMAT, [(CALLS_BEGIN, match_section), (CALL_BEGIN, match_call)], priority=25,
                     ends_reasoning={'<think>': (CALLS_BEGIN,)},
                     description='DeepSeek V3/V3.1 <｜tool▁call▁begin｜> tokens')
