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
Pythonic calls (Llama 3.2/4, Olmo, LFM2): ``[say(text="hi"), record_observation(label="cup")]``.

Also a bare ``say(text="hi")`` for catalog names (never for other names, so prose with
parentheses stays prose), Llama 4's ``<|python_start|>...<|python_end|>`` and LFM2's
``<|tool_call_start|>...<|tool_call_end|>`` wrappers (the tokens are markup, not content), and
LFM2's end-of-turn token ``<|im_end|>``, which is markup wherever it stands. The
extent of the call is found by the bracket scanner first; then ``ast.parse`` reads exactly that
slice and only literal nodes are converted. Nothing is evaluated. JSON's ``true``/``false``/
``null`` are accepted as values; positional arguments follow the catalog's parameter order.
A list that does not parse as a whole is read item by item: a good call survives a broken one.

Reasoning safety: ``[name(...)]`` and the wrapper tokens never end a reasoning span (a plan
in reasoning may be written the same way).
"""

from ..answers import Match, MatchResult, NEED_ANY
from ..context import after_tag, Ctx
from ..readers.pythonic_calls import finish, list_start, read_call, read_list, read_named_call
from ..readers.text import skip_ws
from ..registry import CatalogView, format_spec

FORMAT = 'pythonic'
PY_START = '<|python_start|>'
PY_END = '<|python_end|>'
LFM2_START = '<|tool_call_start|>'
LFM2_END = '<|tool_call_end|>'
WRAPPERS = {PY_START: PY_END, LFM2_START: LFM2_END}  # Llama 4, LFM2
END_OF_TURN = '<|im_end|>'  # LFM2 (ChatML): a special token, never content
_IDENT_CHARS = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.')

# read_call / read_list return ``(end, parts)``; each part is ``(code, name, arguments,
# reason)`` with code '' for a call. ``finish`` turns parts into items once the caller knows
# where the markup ends (a wrapper may add a closing token).


def match_list(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``[f(a=1), g(b="x")]``."""
    start = list_start(text, pos, ctx)
    if start is not True:
        return start or None
    result = read_list(text, pos, ctx, False)
    if type(result) is not tuple:
        return result
    end, parts = result
    return Match(end, finish(parts, ctx, FORMAT, pos, end))


def match_bare(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``say(text="hi")`` for a catalog name not preceded by a name character."""
    if ctx.char_before(text, pos) in _IDENT_CHARS:
        return None
    result = read_call(text, pos, ctx)
    if type(result) is not tuple:
        return result
    end, parts = result
    return Match(end, finish(parts, ctx, FORMAT, pos, end))


def match_wrapper(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a call or call list between wrapper tokens (``WRAPPERS``); the tokens are markup."""
    k = after_tag(text, pos, trigger, ctx, FORMAT, 'expected a call or a list of calls')
    if not isinstance(k, int):
        return k
    if text[k] == '[':
        start = list_start(text, k, ctx)
        if start is not True:
            return start or None
        result = read_list(text, k, ctx, True)
    else:
        result = read_named_call(text, k, ctx)
    if type(result) is not tuple:
        return result
    end, parts = result
    close = WRAPPERS[trigger]
    e = skip_ws(text, end)
    if text.startswith(close, e):
        stop = e + len(close)
    elif not ctx.final and close.startswith(text[e:e + len(close)]):
        return NEED_ANY
    else:
        stop = end
    return Match(stop, finish(parts, ctx, FORMAT, pos, stop))


def match_end_of_turn(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Take the end-of-turn token as markup: it never reaches the content."""
    return Match(pos + len(trigger), [])


def _bare_triggers(view: CatalogView) -> list[str]:
    return [name + '(' for name in view.bare_call_names()]


FAMILY = format_spec(FORMAT, [('[', match_list), (PY_START, match_wrapper),
                              (LFM2_START, match_wrapper), (END_OF_TURN, match_end_of_turn),
                              (_bare_triggers, match_bare)], priority=50,
                     description='[say(text="hi")], bare say(text="hi") for catalog names')
