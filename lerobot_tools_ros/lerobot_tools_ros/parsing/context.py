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
The matcher context ``Ctx``: what a format's matcher and the readers know about the text.

A matcher is ``matcher(text, pos, trigger, ctx) -> MatchResult`` (``Matcher``): ``text`` is
the text being scanned (all of it, or the undecided tail while streaming), ``pos`` where its
``trigger`` starts. It reads from ``pos`` on, builds calls and issues through ``ctx`` (spans
made absolute, unknown names and arguments checked against the catalog) and answers with
``answers.Match``/``Skip``/``NeedMore``/None.
"""

from typing import Callable

from .answers import Match, MatchResult, NEED_ANY
from .readers.json_values import decode_arguments
from .readers.text import short, skip_ws
from .registry import CatalogView, Plan
from .results import ParsedCall, ParseIssue, TRUNCATED, UNKNOWN_TOOL

# ParsedCall is a frozen dataclass; its generated __init__ sets each field through
# object.__setattr__. Setting the slots directly is the same result at about half the cost,
# and building calls is a measurable part of every parse.
_new_call = object.__new__
# (the slot descriptors, read from the class dict: type checkers see a slot as its value type)
_set_name = vars(ParsedCall)['name'].__set__
_set_arguments = vars(ParsedCall)['arguments'].__set__
_set_format = vars(ParsedCall)['format'].__set__
_set_span = vars(ParsedCall)['span'].__set__


def make_call(name: str, arguments: dict, fmt: str, span: tuple[int, int]) -> ParsedCall:
    """Build a ParsedCall (equal to ``ParsedCall(name, arguments, fmt, span)``)."""
    call = _new_call(ParsedCall)
    _set_name(call, name)
    _set_arguments(call, arguments)
    _set_format(call, fmt)
    _set_span(call, span)
    return call


class Ctx:
    """
    What a matcher (and a reader) may use: the plan, finality, offsets, streaming memo.

    ``plan``: the compiled formats and the catalog view (``view``: names, parameter schemas);
    ``final``: the whole text is there (False while streaming: answer NeedMore when more text
    could change the answer); ``base``: offset of the scanned text in the whole input (spans and
    messages are absolute); ``prev``: the character before the scanned text; ``memo``:
    streaming only, state kept between feeds (``json_values`` resumes scans there);
    ``reasoning``: the closing token of the reasoning span the scan is in, or None;
    ``report``: calls in reasoning become issues (False: ``reasoning_calls='dispatch'``).
    """

    __slots__ = ('plan', 'view', 'final', 'base', 'prev', 'memo', 'reasoning', 'report',
                 '_finds')

    plan: Plan
    view: CatalogView
    final: bool
    base: int
    prev: str
    memo: dict | None
    reasoning: str | None
    report: bool

    def __init__(self, plan: Plan, final: bool, base: int = 0, prev: str = '',
                 memo: dict | None = None, reasoning: str | None = None,
                 report: bool = True) -> None:
        self.plan = plan
        self.view = plan.view
        self.final = final
        self.base = base  # offset of the scanned text in the whole input
        self.prev = prev  # the character just before the scanned text ('' at the start)
        self.memo = memo  # streaming only: scanner state kept between feeds
        # inside a reasoning span: its closing token (scan updates it as it goes), else None
        self.reasoning = reasoning
        self.report = report  # calls in reasoning become issues (False: they are dispatched)
        self._finds: dict[str, tuple[int, int]] | None = None

    def find(self, text: str, needle: str, start: int) -> int:
        """Find ``needle`` like ``str.find``; remembered, so forward searches stay linear."""
        finds = self._finds
        if finds is None:
            finds = self._finds = {}
        else:
            memo = finds.get(needle)
            if memo is not None:
                since, found = memo
                if start >= since and (found == -1 or start <= found):
                    return found
        found = text.find(needle, start)
        finds[needle] = (start, found)
        return found

    def recall(self, key: tuple) -> tuple | None:
        """
        Return what a reader remembered for ``key`` in an earlier feed (streaming), or None.

        Readers of long calls remember how far they got (the calls or parameters already
        complete) under ``(absolute position, what)``, so a call that grows by small deltas is
        read once, not once per delta. Only decided text is remembered: it reads the same
        whatever follows. Nothing is remembered in one-shot parses or inside a reasoning span
        (whose end may still cut the text).
        """
        memo = self.memo
        if memo is None or self.reasoning is not None:
            return None
        return memo.get(key)

    def remember(self, key: tuple, state: tuple) -> None:
        """Keep ``state`` under ``key`` for the next feed (see ``recall``)."""
        memo = self.memo
        if memo is not None and self.reasoning is None:
            memo[key] = state

    def char_before(self, text: str, pos: int) -> str:
        """Return the character before ``pos`` in the whole input ('' at its start)."""
        return text[pos - 1] if pos else self.prev

    def issue(self, code: str, message: str, start: int, end: int, fmt: str,
              name: str = '') -> ParseIssue:
        """Build an issue whose span is made absolute."""
        return ParseIssue(code, message, (self.base + start, self.base + end), fmt, name)

    def add_call(self, items: list, name: str, raw_arguments: object, fmt: str, start: int,
                 end: int) -> None:
        """Append the call, or the issue that stops it (unknown tool, bad arguments)."""
        view = self.view
        span = (self.base + start, self.base + end)
        if view.names is not None and name not in view.names:
            suggestion = view.suggest(name)
            hint = f"did you mean '{suggestion}'?" if suggestion else 'no similar name'
            items.append(ParseIssue(
                UNKNOWN_TOOL, f'unknown tool {short(name)} in the {fmt} call at chars '
                f'{span[0]}-{span[1]}; {hint} (known tools: {view.known})', span, fmt, name))
            return
        if type(raw_arguments) is dict:
            items.append(make_call(name, raw_arguments, fmt, span))
            return
        arguments, code, reason = decode_arguments(raw_arguments)
        if arguments is None:
            items.append(ParseIssue(code, f'{fmt} call {short(name)} at chars {span[0]}-'
                                    f'{span[1]}: {reason}', span, fmt, name))
        else:
            items.append(make_call(name, arguments, fmt, span))


Matcher = Callable[[str, int, str, Ctx], MatchResult]
"""``matcher(text, pos, trigger, ctx)``: the answer at one trigger (see ``answers``)."""


def after_tag(text: str, pos: int, tag: str, ctx: Ctx, fmt: str,
              expected: str) -> int | MatchResult:
    """
    Skip ``tag`` (at ``pos``) and the whitespace after it; return the index of what follows.

    When the text ends there instead, return what the matcher should: wait for more text, or
    (final) one ``truncated`` issue saying what was ``expected``.
    """
    n = len(text)
    k = skip_ws(text, pos + len(tag))
    if k < n:
        return k
    if not ctx.final:
        return NEED_ANY
    return Match(n, [ctx.issue(TRUNCATED, f'{tag} at char {ctx.base + pos}: the text ended '
                               f'before the call ({expected})', pos, n, fmt)])
