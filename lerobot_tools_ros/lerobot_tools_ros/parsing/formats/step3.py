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
Step-3: DeepSeek-like call tokens around ``<steptml:invoke>`` markup.

::

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="N">
    <steptml:parameter name="K">V</steptml:parameter></steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

(``｜`` is U+FF5C.) Several calls may share one section (parallel calls), each with its own
``<｜tool_call_begin｜>``...``<｜tool_call_end｜>``, sometimes with ``<｜tool_sep｜>`` between
them; ``function<｜tool_sep｜>`` (optionally followed by the name again) may be left out, and a
``<｜tool_call_begin｜>`` call may stand without the section. A string value is the text
between its tags exactly: leading and trailing whitespace and newlines are data (an edit tool
needs them byte for byte); other types are read from the text by the catalog schema.

Reasoning safety: the call tokens are special tokens that a tokenizer never produces as
reasoning text, so ``<｜tool_calls_begin｜>`` ends an open ``<think>`` span.
"""

import re

from ..answers import Match, MatchResult, need_closing
from ..context import Ctx
from ..readers.invokes import Invokes, read_invokes
from ..readers.text import skip_ws
from ..registry import format_spec
from ..results import TRUNCATED

FORMAT = 'step3'
CALLS_BEGIN = '<｜tool_calls_begin｜>'
CALLS_END = '<｜tool_calls_end｜>'
CALL_BEGIN = '<｜tool_call_begin｜>'
CALL_END = '<｜tool_call_end｜>'
SEP = '<｜tool_sep｜>'
FUNCTION = 'function'
_TAGS = Invokes('steptml:', FORMAT, exact=True)
_SKIPPED = (CALL_BEGIN, CALL_END, SEP)  # tokens between and around the invokes
_PARTS = _SKIPPED + (CALLS_END, FUNCTION, _TAGS.invoke)
_NEED_TOKENS = need_closing(*_PARTS)
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_.\-]*')


def match_section(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match the call section (or a lone ``<｜tool_call_begin｜>`` call) and its calls."""
    n = len(text)
    k = pos + len(trigger)
    items: list = []
    key = (ctx.base + pos, 'step3')
    state = ctx.recall(key)
    if state is not None:  # how far the section was read in an earlier feed
        k = state[0] - ctx.base
        items = list(state[1])
    while True:
        k = skip_ws(text, k)
        if trigger == CALLS_BEGIN and text.startswith(CALLS_END, k):
            return Match(k + len(CALLS_END), items)
        for token in _SKIPPED:
            if text.startswith(token, k):
                k += len(token)
                break
        else:
            token = None
        if token is not None:
            ctx.remember(key, (ctx.base + k, tuple(items)))
            continue
        if text.startswith(FUNCTION, k):
            after = skip_ws(text, k + len(FUNCTION))
            if text.startswith(SEP, after):
                k = after + len(SEP)
                ctx.remember(key, (ctx.base + k, tuple(items)))
                continue
            if not ctx.final and SEP.startswith(text[after:after + len(SEP)]):
                return _NEED_TOKENS  # the separator may still be arriving
        if text.startswith(_TAGS.invoke, k):
            result = read_invokes(text, k, pos, CALL_END, _TAGS, ctx)
            if type(result) is not tuple:
                if type(result) is Match and items:
                    return Match(result.end, items + result.items)
                return result
            k = result[0]
            items.extend(result[1])
            ctx.remember(key, (ctx.base + k, tuple(items)))
            continue
        rest = text[k:k + len(_TAGS.invoke)]
        if k >= n or (not ctx.final and any(part.startswith(rest) for part in _PARTS)):
            if not ctx.final:
                return _NEED_TOKENS
            if items or trigger == CALL_BEGIN:
                return Match(k, items)
            return Match(n, [ctx.issue(TRUNCATED, f'{trigger} at char {ctx.base + pos}: the '
                                       'text ended before a call', pos, n, FORMAT)])
        name = _NAME.match(text, k)
        if name is not None:  # function<｜tool_sep｜>NAME before the invoke: the name again
            after = skip_ws(text, name.end())
            if text.startswith(_TAGS.invoke, after):
                k = after
                continue
            if after >= n or (not ctx.final and _TAGS.invoke.startswith(text[after:])):
                if not ctx.final:
                    return _NEED_TOKENS
        return Match(k, items) if items or trigger == CALL_BEGIN else None


FAMILY = format_spec(FORMAT, [(CALLS_BEGIN, match_section), (CALL_BEGIN, match_section)],
                     priority=25, ends_reasoning={'<think>': (CALLS_BEGIN,)},
                     description='<｜tool_calls_begin｜>...<steptml:invoke name=...>')
