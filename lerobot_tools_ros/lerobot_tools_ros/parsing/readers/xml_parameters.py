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
Qwen3-Coder's function markup: ``<function=NAME><parameter=K>value</parameter></function>``.

Read by ``qwen3_coder_xml`` (wrapper ``<tool_call>``, optional) and ``seed_oss`` (wrapper
``<seed:tool_call>``). Parameter values are typed from the catalog schema
(``typed_values``); a string keeps its text verbatim except for one leading and one trailing
newline.

What ends a value: its ``</parameter>`` when the markup continues after it (``<parameter=`` of
a parameter the tool's schema has, ``</function>``, the wrapper's closing tag, the end of the
text); any other ``</parameter>`` is text inside the value, as is a ``<parameter=NAME>`` whose
NAME the schema does not have (a file holding ``<parameter=new_string>``). A ``<tool_call>`` or
``<function=`` inside a value opens a literal nested call whose tags are all text up to its own
closing tag. A value whose ``</parameter>`` is missing ends at the next parameter the schema
has (not given before, nor later), or at ``</function>``.
"""

import re

from .text import match_end, skip_ws
from .typed_values import schema_types, typed_value
from ..answers import Match, NEED_ANY, need_closing, NeedMore
from ..context import Ctx
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS

OPEN = '<tool_call>'
CLOSE = '</tool_call>'
FUNC = '<function='
FUNC_END = '</function>'
PARAM = '<parameter='
PARAM_END = '</parameter>'
NAME = re.compile(r'[^<>\n]*')  # a function or parameter name (stripped)
_NAME = NAME
# a name still arriving: only a character that ends it can change the answer
_NAME_ENDS = NeedMore(('<', '>', '\n'))
_WAKE = (PARAM_END, PARAM, FUNC_END, CLOSE)


def _first(text: str, ctx: Ctx, start: int, needles: tuple[str, ...]) -> int:
    best = -1
    for needle in needles:
        found = ctx.find(text, needle, start)
        if found != -1 and (best == -1 or found < best):
            best = found
    return best


def _truncated(text: str, pos: int, ctx: Ctx, what: str, name: str, fmt: str):
    if not ctx.final:
        return NeedMore(_WAKE)
    n = len(text)
    return Match(n, [ctx.issue(TRUNCATED, f'<function=...> call starting at char '
                               f'{ctx.base + pos}: the text ended {what}', pos, n, fmt, name)])


class _Call:
    """One ``<function=NAME>`` being read: where it is, its wrapper, and what it found."""

    __slots__ = ('text', 'pos', 'ctx', 'close', 'fmt', 'name', 'props', 'arguments',
                 'problems')

    def __init__(self, text: str, pos: int, ctx: Ctx, close: str, fmt: str) -> None:
        self.text, self.pos, self.ctx, self.close, self.fmt = text, pos, ctx, close, fmt
        self.name = ''
        self.props: dict = {}
        self.arguments: dict = {}
        self.problems: list[str] = []

    def truncated(self, what: str):
        return _truncated(self.text, self.pos, self.ctx, what, self.name, self.fmt)

    def enders(self) -> tuple[str, ...]:
        """Tags that may follow a parameter's real closing tag."""
        return (PARAM, FUNC_END, self.close) if self.close else (PARAM, FUNC_END)

    def need_value(self) -> NeedMore:
        """Wait for a tag that may end the value being read."""
        return NeedMore((PARAM_END,) + self.enders()[1:])


def read_function(text: str, pos: int, func: int, ctx: Ctx, wrapped: bool, close: str, fmt: str):
    """
    Read ``<function=NAME>...</function>`` at ``func``; markup starts at ``pos``.

    ``wrapped``: inside a wrapper whose closing tag is ``close`` (``</tool_call>``; Seed-OSS
    uses its own). Returns Match/NeedMore, or None when a bare ``<function=`` is not a call.
    """
    call = _Call(text, pos, ctx, close if wrapped else '', fmt)
    i = _read_header(call, func)
    if not isinstance(i, int):
        return i
    i = _read_parameters(call, i)
    if not isinstance(i, int):
        return i
    stop = i
    if not wrapped:
        close = CLOSE  # a bare function's stray closing wrapper tag is markup too
    k = skip_ws(text, i)
    if text.startswith(close, k):
        stop = k + len(close)
    elif not ctx.final and close.startswith(text[k:k + len(close)]):
        return need_closing(close)
    items: list = []
    if call.problems:
        items.append(ctx.issue(UNPARSEABLE_ARGUMENTS, f'<function={call.name}> at char '
                               f'{ctx.base + pos}: ' + '; '.join(call.problems), pos, stop,
                               fmt, call.name))
    else:
        ctx.add_call(items, call.name, call.arguments, fmt, pos, stop)
    return Match(stop, items)


def _read_header(call: _Call, func: int):
    """Read ``<function=NAME>``; return the index after it (or what the matcher returns)."""
    text, ctx = call.text, call.ctx
    i = func + len(FUNC)
    e = match_end(_NAME, text, i)
    if e >= len(text):  # the next character decides: more name, '>', or a malformed tag
        return _NAME_ENDS if not ctx.final else call.truncated('inside the <function=NAME> tag')
    name = text[i:e].strip()
    if text[e] != '>' or not name:
        if not call.close:
            return None
        return Match(e, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'<function= at char '
                                   f'{ctx.base + func}: expected <function=NAME>, found '
                                   f'{text[func:e + 1]!r}', call.pos, e, call.fmt)])
    call.name = name
    call.props = ctx.view.properties(name)
    return e + 1


def _read_parameters(call: _Call, i: int):
    """Read parameters up to ``</function>``; return the index after the function's markup."""
    text, ctx = call.text, call.ctx
    n = len(text)
    key = (ctx.base + call.pos, 'parameters', call.fmt, call.close)
    state = ctx.recall(key)
    if state is not None:  # the parameters already complete in an earlier feed
        i = state[0] - ctx.base
        call.arguments = dict(state[1])
        call.problems = list(state[2])
    while True:
        i = skip_ws(text, i)
        if i >= n:
            return call.truncated(f'inside <function={call.name}> (expected <parameter=NAME> '
                                  f'or {FUNC_END!r})')
        if text.startswith(PARAM, i):
            i = _read_parameter(call, i)
            if not isinstance(i, int):
                return i
            ctx.remember(key, (ctx.base + i, dict(call.arguments), tuple(call.problems)))
            continue
        if text.startswith(FUNC_END, i):
            return i + len(FUNC_END)
        if call.close and text.startswith(call.close, i):
            return i  # </function> missing; the wrapper still closes the call
        rest = text[i:i + len(PARAM)]
        if not ctx.final and len(rest) < len(PARAM) and any(
                tag.startswith(rest) for tag in call.enders()):
            return need_closing(*call.enders())
        following = _first(text, ctx, i + 1, call.enders())
        if following == -1:
            return call.truncated(f'inside <function={call.name}> (expected {FUNC_END!r})')
        i = following  # stray text between parameters is ignored


def _read_parameter(call: _Call, i: int):
    """Read ``<parameter=NAME>value</parameter>`` at ``i``; return the index after it."""
    text, ctx = call.text, call.ctx
    j = i + len(PARAM)
    e = match_end(_NAME, text, j)
    if e >= len(text):  # the next character decides: more name, '>', or a malformed tag
        return _NAME_ENDS if not ctx.final else call.truncated('inside a <parameter=NAME> tag')
    if text[e] != '>':
        return Match(e, [ctx.issue(
            UNPARSEABLE_ARGUMENTS, f'<parameter= at char {ctx.base + i} in '
            f'<function={call.name}>: expected <parameter=NAME>, found {text[i:e + 1]!r}',
            call.pos, e, call.fmt, call.name)])
    pname = text[j:e].strip()
    start = e + 1
    found = _value_end(call, pname, start)
    if type(found) is not tuple:
        return found
    end, after = found
    if pname in call.arguments:
        call.problems.append(f'parameter {pname!r} is given twice (at char '
                             f'{ctx.base + i}); expected each parameter once')
    else:
        call.arguments[pname] = typed_value(text[start:end], call.props.get(pname))
    return after


def _plausible_next(call: _Call, a: int):
    """
    Whether the ``<parameter=NAME>`` at ``a`` can open the next parameter (NeedMore: undecided).

    Without the tool's schema any name can. With it, a parameter of the tool can; a name the
    schema does not have only when its whole value is clean markup, ``<parameter=NAME>v
    </parameter>`` with nothing tag-like inside and the call continuing after it (an extra
    argument, left for validation). Otherwise the tag is text inside a value: a file that
    holds ``</parameter>`` and ``<parameter=new_string>`` when the tool has no new_string.
    """
    text, ctx = call.text, call.ctx
    n = len(text)
    while True:
        e = match_end(_NAME, text, a + len(PARAM))
        if e >= n:
            return NEED_ANY if not ctx.final else True
        if text[e] != '>' or not call.props or text[a + len(PARAM):e].strip() in call.props:
            return True
        close = ctx.find(text, PARAM_END, e)
        if close == -1:
            return call.need_value() if not ctx.final else False
        inner = ctx.find(text, PARAM, e)
        if inner != -1 and inner < close:
            return False
        a = skip_ws(text, close + len(PARAM_END))
        if a >= n:
            return call.need_value() if not ctx.final else True
        if text.startswith(call.enders()[1:], a):
            return True
        if not text.startswith(PARAM, a):
            if not ctx.final and n - a < len(PARAM) and any(
                    tag.startswith(text[a:]) for tag in call.enders()):
                return need_closing(*call.enders())
            return False


def _ender_after(call: _Call, close: int):
    """
    Whether the markup continues after the ``</parameter>`` at ``close`` (NeedMore: undecided).

    It does when ``<parameter=`` of a plausible next parameter, ``</function>``, the wrapper's
    closing tag or the end of the text follows (after whitespace); then that ``</parameter>``
    ends the value. Any other one is text inside the value.
    """
    text, ctx = call.text, call.ctx
    n = len(text)
    a = skip_ws(text, close + len(PARAM_END))
    if a >= n:
        return True if ctx.final else need_closing(*call.enders())
    if text.startswith(PARAM, a):
        return _plausible_next(call, a)
    if text.startswith(call.enders()[1:], a):
        return True
    if not ctx.final and n - a < len(PARAM) and any(
            tag.startswith(text[a:]) for tag in call.enders()):
        return need_closing(*call.enders())
    return False


_MAX_NESTED_TAGS = 64  # tags looked at per value for nested calls; beyond, read flat


_NESTING: dict = {}  # wrapper closing tag -> search for the tags that nest or end a value


def _nesting_search(close: str):
    found = _NESTING.get(close)
    if found is None:
        tags = {FUNC, FUNC_END, PARAM, PARAM_END, OPEN, CLOSE}
        if close:
            tags |= {close, '<' + close[2:]}
        found = _NESTING[close] = re.compile(
            '|'.join(map(re.escape, sorted(tags, key=len, reverse=True)))).search
    return found


def _scan_value(call: _Call, start: int):
    """
    Find where a value that starts at ``start`` ends, reading nested markup as text.

    A ``<tool_call>``/``<function=`` inside a value opens a nested (literal) call whose tags
    are all text until its own closing tag, so a value may hold a whole example call. Returns
    ``(close, following, function_end)``: the ``</parameter>`` that ends the value, the first
    ``<parameter=`` before it, and the first ``</function>`` when the value has no
    ``</parameter>`` (the wrapper's closing tag when ``</function>`` is missing too); -1 for
    what is not there. NeedMore while undecided.
    """
    text = call.text
    search = _nesting_search(call.close)
    opens = (FUNC, OPEN, '<' + call.close[2:]) if call.close else (FUNC, OPEN)
    depth = 0
    following = function_end = -1
    i = start
    for _ in range(_MAX_NESTED_TAGS):
        m = search(text, i)
        if m is None:
            if not call.ctx.final:
                return call.need_value()
            return -1, following, function_end
        j = m.start()
        tag = m.group()
        i = j + len(tag)
        if tag == PARAM_END:
            if depth == 0:
                verdict = _ender_after(call, j)
                if verdict is True:
                    return j, following, -1
                if verdict is not False:
                    return verdict
        elif tag == PARAM:
            if depth == 0 and following == -1 and function_end == -1:
                following = j
        elif tag in opens:
            if function_end != -1:
                return -1, following, function_end  # the next call starts
            depth += 1
        elif depth:
            depth -= 1
        elif tag == FUNC_END:
            if function_end == -1:
                function_end = j  # the value lost its </parameter> unless one still follows
        elif tag == call.close:
            return -1, following, function_end if function_end != -1 else j
    return None  # too much markup inside one value to read it as nested calls: read it flat


def _value_end(call: _Call, pname: str, start: int):
    """Return ``(end of the value, index after its markup)`` or what the matcher returns."""
    found = _scan_value(call, start)
    if found is None:
        return _flat_value_end(call, pname, start)
    if type(found) is not tuple:
        return found
    close, following, function_end = found
    if close == -1 and function_end == -1:
        return _flat_value_end(call, pname, start)  # unbalanced nested tags: read them flat
    end = close if close != -1 else function_end
    after = close + len(PARAM_END) if close != -1 else function_end
    if following == -1:
        return end, after
    return _inner_tag(call, pname, start, following, end, after)


def _flat_value_end(call: _Call, pname: str, start: int):
    """
    Find a value's end without reading nested calls (unbalanced or too many nested tags).

    The value ends at the first ``</parameter>`` the markup continues after; without one, at
    the next ``<parameter=`` (its ``</parameter>`` is missing) or the function's closing tag.
    """
    text, ctx = call.text, call.ctx
    k = start
    close = -1
    while True:
        c = ctx.find(text, PARAM_END, k)
        if c == -1:
            break
        verdict = _ender_after(call, c)
        if verdict is True:
            close = c
            break
        if verdict is not False:
            return verdict
        k = c + 1
    following = ctx.find(text, PARAM, start)
    if close != -1:
        if following == -1 or close < following:
            return close, close + len(PARAM_END)
        return _inner_tag(call, pname, start, following, close, close + len(PARAM_END))
    if not ctx.final:
        return call.need_value()
    end = _first(text, ctx, start, call.enders()[1:])
    if following != -1 and (end == -1 or following < end):
        return following, following  # this value's </parameter> is missing
    if end == -1:
        return call.truncated(f'inside parameter {pname!r} of <function={call.name}> '
                              f'(expected {PARAM_END!r})')
    return end, end  # no </parameter>: the function's closing tag ends it


def _inner_tag(call: _Call, pname: str, start: int, following: int, end: int, after: int):
    """
    Decide what a ``<parameter=`` at ``following``, before the value's real end, is.

    Either this value lost its ``</parameter>`` (the tag opens the next parameter) or the tag
    is text inside the value. It is text when it names this parameter, one already given, one
    given again later in the call, or (the tool's schema known) no parameter of the tool.
    Otherwise it opens the next parameter. A value whose type cannot be text but holds such a
    tag is reported as ambiguous.
    """
    text, ctx = call.text, call.ctx
    j = following + len(PARAM)
    e = match_end(_NAME, text, j)
    inner = text[j:e].strip()
    known = call.props
    function_end = text.find(FUNC_END, after)
    if function_end == -1 and not ctx.final:
        return call.need_value()  # a later <parameter=NAME> may still say "text"
    later = text.find(f'{PARAM}{inner}>', after)
    is_text = (inner == pname or inner in call.arguments
               or (known and inner not in known)
               or (later != -1 and (function_end == -1 or later < function_end)))
    if not is_text:
        return following, following
    types = schema_types(known.get(pname)) if pname in known else {'any'}
    if 'any' in types or 'string' in types:
        return end, after
    call.problems.append(
        f'the end of parameter {pname!r} is ambiguous: the {PARAM}{inner}> at char '
        f'{ctx.base + following} is text by its name, but a {"/".join(sorted(types))} value '
        'cannot hold it')
    return end, after
