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
The scanner shared by ``parse`` and ``StreamingParser``, and the content whitespace rule.

A format is a set of *triggers* (literal strings such as ``<tool_call>``) with a *matcher* for
each (``context.Matcher``). The scanner finds the leftmost trigger with one compiled alternation
of literals, asks the matchers registered for it, and moves on; text between calls is prose.
What a matcher answers is described in ``answers``; what it may use, in ``context``.

Matchers decide only from the text at and after their start (and the one character before it),
and answer ``NeedMore`` whenever more text could change the answer. That makes streaming
exact: the streaming parser reruns the same scan on the unconsumed tail, commits everything
before the first ``NeedMore``, and holds back a suffix that could still grow into a trigger.

Reasoning spans (``<think>``...``</think>``, see ``registry.register_reasoning``) are tracked
here: call markup inside one becomes ``call_in_reasoning`` issues and stays in the content as
text; a family's special token may end a span (``registry.FormatSpec.ends_reasoning``).
"""

from .answers import Match, MatchResult, NEED_ANY, NeedMore, Skip
from .context import Ctx
from .readers.text import short
from .results import CALL_IN_REASONING, ParsedCall, ParseIssue


def scan(text: str, ctx: Ctx) -> tuple[list, int, NeedMore | None]:
    """
    Split ``text`` into prose strings and Match objects.

    Returns ``(pieces, stop, need)``: everything before ``stop`` is decided. With
    ``ctx.final`` the stop is ``len(text)``; otherwise it is where a matcher needs more text
    (``need``, the matcher's NeedMore, says what may help) or where a held-back partial
    trigger starts (``need`` is None).
    """
    plan = ctx.plan
    pieces: list = []
    n = len(text)
    prose = pos = 0
    rx = plan.rx
    if rx is not None:
        search = rx.search
        by_trigger = plan.by_trigger
        final = ctx.final
        hold_len = plan.hold_len
        prefix_set = plan.prefix_set
        word_triggers = plan.word_triggers
        tokens = plan.reasoning_tokens
        while True:
            m = search(text, pos)
            if m is None:
                break
            p = m.start()
            literal = m.group()
            if literal in tokens:  # a reasoning span opens or closes (kept in the content)
                inside = ctx.reasoning
                if inside is None:
                    ctx.reasoning = plan.reasoning.get(literal)
                elif literal == inside:
                    ctx.reasoning = None
                pos = p + len(literal)
                continue
            if literal in word_triggers:  # starts with a name character: only at a word start
                before = text[p - 1] if p else ctx.prev
                if before and (before.isalnum() or before in '_.'):
                    pos = p + 1
                    continue
            result: MatchResult = None
            inside = ctx.reasoning
            if inside is not None and literal in plan.exit_literals and (
                    literal in plan.reasoning_exits.get(inside, ())):
                ctx.reasoning = inside = None  # a special token that cannot be reasoning text
            if inside is not None:
                result = in_reasoning(text, p, literal, ctx)
            else:
                for trigger, matcher in by_trigger[literal]:
                    result = matcher(text, p, trigger, ctx)
                    if result is not None:
                        break
            if result is None:
                if not final and n - p <= hold_len and text[p:] in prefix_set:
                    # a longer trigger may still form here (``` -> ```tool_code)
                    if p > prose:
                        pieces.append(text[prose:p])
                    return pieces, p, None
                pos = p + 1
                continue
            if type(result) is Match:
                if p > prose:
                    pieces.append(text[prose:p])
                pieces.append(result)
                prose = pos = result.end if result.end > p else p + 1
            elif type(result) is Skip:
                pos = result.end if result.end > p else p + 1
            elif final:  # a matcher bug; never loop or stall on it
                pos = p + 1
            else:
                if type(result) is not NeedMore:
                    raise TypeError(f'a matcher for {literal!r} answered {result!r}')
                if p > prose:
                    pieces.append(text[prose:p])
                return pieces, p, result
    stop = n
    if not ctx.final:
        held = plan.held_start(text, pos)
        if held != -1:
            stop = held
    if stop > prose:
        pieces.append(text[prose:stop])
    return pieces, stop, None


def in_reasoning(text: str, p: int, literal: str, ctx: Ctx) -> MatchResult:
    """
    Match call markup at ``p`` inside a reasoning span; its calls become issues.

    The span ends at its closing token: matchers see the text up to it as complete (so a call
    never runs past the span), or the text so far while the closing token has not arrived.
    """
    token = ctx.reasoning
    if token is None:
        raise ValueError('in_reasoning: the scan is not inside a reasoning span')
    close = ctx.find(text, token, p)
    exits = ctx.plan.reasoning_exits.get(token, ())
    for other in exits:  # a family's special token that ends the span as well
        found = ctx.find(text, other, p)
        if found != -1 and (close == -1 or found < close):
            close = found
    inner = ctx
    if close != -1:
        text = text[:close]
        inner = Ctx(ctx.plan, True, ctx.base, ctx.prev)
    elif not ctx.final:
        # The text may end with the start of the closing token (</thi): the span may end
        # there, so the matcher must not see those characters as part of the call yet.
        for ender in (token, *exits):
            for k in range(min(len(ender) - 1, len(text) - p), 0, -1):
                if text.endswith(ender[:k]):
                    return NEED_ANY
    result = None
    for trigger, matcher in ctx.plan.by_trigger[literal]:
        result = matcher(text, p, trigger, inner)
        if result is not None:
            break
    if type(result) is Match and ctx.report:
        # the span's text stays in the content verbatim, the call markup in it included
        return Match(result.end, reasoning_issues(result.items), text[p:result.end], True)
    if type(result) is NeedMore and result.wake is not None and token not in result.wake:
        # the closing token ends the call here too: its arrival decides, so it wakes the scan
        return NeedMore(result.wake + (token,) + tuple(exits), result.quiet)
    return result


def scan_reasoning(text: str, start: int, stop: int, ctx: Ctx) -> list:
    """
    Return the items for the call markup in ``text[start:stop]``, a complete reasoning span.

    For families whose reasoning is a message of its own (gpt-oss ``analysis``): its calls
    become ``call_in_reasoning`` issues (dispatched only with ``reasoning_calls='dispatch'``).
    """
    inner = Ctx(ctx.plan, True, ctx.base + start, text[start - 1] if start else ctx.prev,
                report=ctx.report)
    items = [item for piece in scan(text[start:stop], inner)[0] if type(piece) is Match
             for item in piece.items]
    return reasoning_issues(items) if ctx.report else items


def reasoning_issues(items: list) -> list:
    """Turn calls (and issues) found inside a reasoning span into ``call_in_reasoning`` issues."""
    out = []
    for item in items:
        start, end = item.span
        if type(item) is ParsedCall:
            what = f'{item.format} call {short(item.name)}'
        else:
            what = f'{item.format or "a"} call markup ({item.code}: {item.message})'
        out.append(ParseIssue(
            CALL_IN_REASONING, f'{what} at chars {start}-{end} is inside a reasoning span: not '
            'dispatched (a call written while reasoning is a plan, not a request)',
            item.span, item.format, item.name))
    return out


class Content:
    r"""
    The content whitespace rule, applied identically to one-shot and streamed text.

    Call markup (calls and issues alike) takes with it the whitespace that directly follows
    it. When the text ends with markup (only whitespace after it), the whitespace directly
    before that markup goes too. Nothing else is changed. So ``'Plan.\n<say>x</say>'`` gives
    ``'Plan.'``, ``'A\n<say>x</say>\nB'`` gives ``'A\nB'``, and text without calls is
    returned unchanged. Trailing whitespace is held back until the next non-space character
    (or the end) shows whether markup follows.
    """

    __slots__ = ('pending', 'after')

    def __init__(self) -> None:
        self.pending = ''
        self.after = False

    def prose(self, text: str) -> str:
        """Take more prose; return the part that is final now."""
        if self.after:
            text = text.lstrip()
            if not text:
                return ''
            self.after = False
        if self.pending:
            text = self.pending + text
        body = text.rstrip()
        self.pending = text[len(body):]
        return body

    def markup(self) -> None:
        """Note call markup at this point."""
        self.after = True

    def finish(self) -> str:
        """Return what is left at the end of the text."""
        out = '' if self.after else self.pending
        self.pending = ''
        return out
