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
gpt-oss harmony: calls are messages addressed ``to=functions.NAME``.

::

    <|channel|>analysis<|message|>Need to greet.<|end|>
    <|start|>assistant<|channel|>commentary to=functions.say <|constrain|>json<|message|>
    {"text": "hi"}<|call|>

A message header runs from ``<|start|>`` or ``<|channel|>`` to ``<|message|>``; the recipient
(``to=functions.NAME``, also accepted in the role part) makes the message a call whose body is
the JSON arguments, ended by ``<|call|>`` (or ``<|end|>``, ``<|return|>``, the next
``<|start|>``). Without a recipient, the header tokens are markup and the message text is
content, except that ``analysis`` messages (the model's reasoning, which engines return
separately) are dropped from the content; call markup of any family written inside one is a
``call_in_reasoning`` issue, not a call. A message with a recipient is a call whatever its
channel (harmony addresses calls by recipient; engines dispatch them so). A stray
``<|end|>``/``<|return|>``/``<|call|>`` is markup too.

Reasoning safety: harmony's reasoning is a message of its own (the ``analysis`` channel), which
ends with the message; no call token ends another family's span.
"""

import re

from ..answers import Match, MatchResult, NEED_ANY, need_closing, NeedMore
from ..context import Ctx
from ..core import scan_reasoning
from ..readers.json_values import (guess_name, invalid_end, READ_NEED, READ_OK, READ_TRUNCATED,
                                   read_value)
from ..readers.text import skip_ws
from ..registry import format_spec
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS

FORMAT = 'harmony'
START = '<|start|>'
CHANNEL = '<|channel|>'
MESSAGE = '<|message|>'
ENDS = ('<|call|>', '<|end|>', '<|return|>')
_RECIPIENT = re.compile(r'to=(?:functions\.)?([^\s<>]+)')
_CHANNEL = re.compile(r'<\|channel\|>\s*([A-Za-z_]+)')
_MAX_HEADER = 300


def match_header(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a message header, and for a call or reasoning the whole message."""
    n = len(text)
    body = ctx.find(text, MESSAGE, pos + len(trigger))
    if body == -1 or body - pos > _MAX_HEADER:
        if not ctx.final and n - pos <= _MAX_HEADER:
            return NeedMore((MESSAGE,))
        return None
    header = text[pos:body]
    recipient = _RECIPIENT.search(header)
    channel = _CHANNEL.search(header)
    k = body + len(MESSAGE)
    if recipient is not None:
        return _read_call(text, pos, k, recipient.group(1), ctx)
    if channel is not None and channel.group(1) == 'analysis':
        end = _message_end(text, k, ctx)
        if end is None:
            return NeedMore(ENDS + (START,))
        body_end = end
        for token in ENDS:
            if text.startswith(token, end - len(token)) and end - len(token) >= k:
                body_end = end - len(token)
                break
        return Match(end, scan_reasoning(text, k, body_end, ctx))
    return Match(k, [])


def _message_end(text: str, k: int, ctx: Ctx) -> int | None:
    """Index past a message's terminator (the next <|start|> is not taken); None: not yet."""
    best = -1
    for token in ENDS + (START,):
        found = ctx.find(text, token, k)
        if found != -1 and (best == -1 or found < best):
            best = found
    if best == -1:
        return None if not ctx.final else len(text)
    return best if text.startswith(START, best) else best + len(
        next(token for token in ENDS if text.startswith(token, best)))


def _read_call(text: str, pos: int, k: int, name: str, ctx: Ctx):
    n = len(text)
    k = skip_ws(text, k)
    if k >= n:
        if not ctx.final:
            return NEED_ANY
        return Match(n, [ctx.issue(TRUNCATED, f'harmony call to {name!r} at char '
                                   f'{ctx.base + pos}: the text ended before the arguments',
                                   pos, n, FORMAT, name)])
    items: list = []
    if text[k] not in '{[':
        end = _message_end(text, k, ctx)
        if end is None:
            return NeedMore(ENDS + (START,))
        items.append(ctx.issue(UNPARSEABLE_ARGUMENTS, f'harmony call to {name!r} at char '
                               f'{ctx.base + pos}: expected JSON arguments, found '
                               f'{text[k:min(k + 20, end)]!r}', pos, end, FORMAT, name))
        return Match(end, items)
    status, value, end, note = read_value(text, k, ctx)
    if status == READ_NEED:
        return NeedMore(('}', ']'))
    if status == READ_TRUNCATED:
        return Match(n, [ctx.issue(TRUNCATED, f'harmony call to {name!r} at char '
                                   f'{ctx.base + pos}: the text ended inside the arguments '
                                   f'({note})', pos, n, FORMAT, name or guess_name(text[k:]))])
    if status != READ_OK:
        stop = invalid_end(text, k, end, note, ctx)
        if stop is None:
            return NeedMore(('}', ']'))
        stop = _past_end_token(text, stop, ctx)
        if stop is None:
            return NEED_ANY
        return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'harmony call to {name!r} at '
                                      f'char {ctx.base + pos}: the arguments are {note}', pos,
                                      stop, FORMAT, name)])
    stop = _past_end_token(text, end, ctx)
    if stop is None:
        return need_closing(*ENDS)
    ctx.add_call(items, name, value, FORMAT, pos, stop)
    return Match(stop, items)


def _past_end_token(text: str, end: int, ctx: Ctx):
    k = skip_ws(text, end)
    for token in ENDS:
        if text.startswith(token, k):
            return k + len(token)
    if not ctx.final and any(token.startswith(text[k:k + len(token)]) for token in ENDS):
        return None
    return end


def match_end(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Take a message terminator outside a call as markup."""
    return Match(pos + len(trigger), [])


FAMILY = format_spec(FORMAT, [(START, match_header), (CHANNEL, match_header)]
                     + [(token, match_end) for token in ENDS], priority=25,
                     description='<|channel|>commentary to=functions.NAME<|message|>{...}<|call|>')
