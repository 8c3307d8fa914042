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

r"""
A fenced code block holding one of the JSON call shapes: ```` ```json\n{...}\n``` ````.

The fence is part of the markup when its body is exactly one call-shaped JSON value (language
tag empty, ``json``, ``json5``, ``jsonc``, ``javascript``, ``js``, ``tool_call`` or
``tool_calls``). Anything else in a fence is left alone, so the other formats still find calls
inside it and ordinary code blocks stay prose.

Reasoning safety: a code fence is ordinary text that reasoning may quote, so it never ends a
reasoning span.
"""

import re

from ..answers import Match, MatchResult, NEED_ANY, NeedMore
from ..context import Ctx
from ..readers.json_calls import add_value_calls, is_call_shaped, looks_like_call, message_content
from ..readers.json_values import guess_name, READ_NEED, READ_OK, READ_TRUNCATED, read_value
from ..readers.text import match_end, skip_ws
from ..registry import format_spec
from ..results import TRUNCATED

FORMAT = 'fenced_json'
FENCE = '```'
_LANG = re.compile(r'[A-Za-z0-9_+.\-]*')
_LANGS = frozenset(('', 'json', 'json5', 'jsonc', 'javascript', 'js', 'tool_call', 'tool_calls'))
_WAKE = ('}', ']', FENCE)


def match_fence(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a code fence whose body is one JSON call value."""
    if ctx.char_before(text, pos) == '`':
        return None
    n = len(text)
    e = match_end(_LANG, text, pos + len(FENCE))
    if e >= n:
        return NEED_ANY if not ctx.final else None
    if text[pos + len(FENCE):e].lower() not in _LANGS:
        return None
    body = skip_ws(text, e)
    if body >= n:
        return NEED_ANY if not ctx.final else None
    if text[body] not in '{[':
        return None
    status, value, end, note = read_value(text, body, ctx)
    if status == READ_NEED:
        return NeedMore(_WAKE)
    if status == READ_TRUNCATED:
        if not looks_like_call(text[body:]):
            return None
        return Match(n, [ctx.issue(TRUNCATED, f'the fenced JSON call starting at char '
                                   f'{ctx.base + pos} is truncated: the text ended inside it '
                                   f'({note})', pos, n, FORMAT, guess_name(text[body:]))])
    if status != READ_OK:
        return None
    if text.startswith(FENCE, end + 1) and text[end] == '\n':
        stop = end + 1 + len(FENCE)
    else:
        k = skip_ws(text, end)
        if text.startswith(FENCE, k):
            stop = k + len(FENCE)
        elif k >= n or (not ctx.final and FENCE.startswith(text[k:k + len(FENCE)])):
            if not ctx.final:
                return NEED_ANY if is_call_shaped(value, ctx.view.names) else None
            stop = end  # the fence was never closed; the call itself is complete
        else:
            return None
    items: list = []
    if not add_value_calls(value, FORMAT, ctx, pos, stop, items, explicit=False):
        return None
    return Match(stop, items, message_content(value) if type(value) is dict else None)


FAMILY = format_spec(FORMAT, [(FENCE, match_fence)], priority=5,
                     description='```json fenced block holding a JSON call shape')
