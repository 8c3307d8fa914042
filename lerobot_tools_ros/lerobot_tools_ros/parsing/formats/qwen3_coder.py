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
Qwen3-Coder XML: ``<tool_call><function=say><parameter=text>hi</parameter></function>``.

The ``<tool_call>`` wrapper is optional. Parameter values are typed from the catalog schema
(integer, number, boolean, null, object and array are parsed; a string keeps its text verbatim
except for one leading and one trailing newline). A value that does not parse as its declared
type stays a string, so argument validation reports it against the schema. A value ends at
its ``</parameter>`` (so it may contain ``</function>``); when that is missing, at the next
``<parameter=``, or, for the last one, at ``</function>``.
"""

import re

from .marker import strip_one_newline
from ..core import Match, NEED_ANY, NeedMore
from ..registry import register_format
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS
from ..values import decode_json, literal_value, LiteralError, skip_ws

FORMAT = 'qwen3_coder_xml'
OPEN = '<tool_call>'
CLOSE = '</tool_call>'
FUNC = '<function='
FUNC_END = '</function>'
PARAM = '<parameter='
PARAM_END = '</parameter>'
_NAME = re.compile(r'[^<>\n]*')
_WAKE = (PARAM_END, PARAM, FUNC_END, CLOSE)


def _typed(raw: str, schema: object) -> object:
    value = strip_one_newline(raw)
    if not isinstance(schema, dict):
        return value
    types = schema.get('type')
    if isinstance(types, str):
        types = [types]
    elif not isinstance(types, list):
        return value
    source = value.strip()
    for kind in types:
        if kind == 'string':
            continue
        ok, parsed = _parse_as(source, kind)
        if ok:
            return parsed
    return value


def _parse_as(source: str, kind: object) -> tuple[bool, object]:
    if kind == 'boolean':
        lowered = source.lower()
        if lowered in ('true', 'false'):
            return True, lowered == 'true'
        return False, None
    if kind == 'null':
        return (True, None) if source in ('null', 'None', '') else (False, None)
    if kind not in ('integer', 'number', 'object', 'array'):
        return False, None
    try:
        parsed = decode_json(source)
    except (ValueError, RecursionError):  # JSONDecodeError, or an integer over the digit limit
        if kind not in ('object', 'array') or not source[:1] in ('{', '['):
            return False, None
        try:
            parsed = literal_value(source)
        except LiteralError:
            return False, None
    if kind == 'integer':
        ok = isinstance(parsed, int) and not isinstance(parsed, bool)
    elif kind == 'number':
        ok = isinstance(parsed, (int, float)) and not isinstance(parsed, bool)
    elif kind == 'object':
        ok = isinstance(parsed, dict)
    else:
        ok = isinstance(parsed, list)
    return ok, parsed


def _first(text: str, ctx, start: int, needles: tuple[str, ...]) -> int:
    best = -1
    for needle in needles:
        found = ctx.find(text, needle, start)
        if found != -1 and (best == -1 or found < best):
            best = found
    return best


def _truncated(text: str, pos: int, ctx, what: str, name: str = ''):
    if not ctx.final:
        return NeedMore(_WAKE)
    n = len(text)
    return Match(n, [ctx.issue(TRUNCATED, f'<function=...> call starting at char '
                               f'{ctx.base + pos}: the text ended {what}', pos, n, FORMAT, name)])


def read_function(text: str, pos: int, func: int, ctx, wrapped: bool):
    """Read ``<function=NAME>...</function>`` at ``func``; markup starts at ``pos``."""
    n = len(text)
    i = func + len(FUNC)
    e = _NAME.match(text, i).end()
    if e >= n:
        return _truncated(text, pos, ctx, 'inside the <function=NAME> tag')
    name = text[i:e].strip()
    if text[e] != '>' or not name:
        if not wrapped:
            return None
        stop = e
        return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'<function= at char '
                                      f'{ctx.base + func}: expected <function=NAME>, found '
                                      f'{text[func:e + 1]!r}', pos, stop, FORMAT)])
    i = e + 1
    props = ctx.view.properties(name)
    arguments: dict = {}
    while True:
        i = skip_ws(text, i)
        if i >= n:
            return _truncated(text, pos, ctx, f'inside <function={name}> (expected '
                              f'<parameter=NAME> or {FUNC_END!r})', name)
        if text.startswith(PARAM, i):
            j = i + len(PARAM)
            e = _NAME.match(text, j).end()
            if e >= n:
                return _truncated(text, pos, ctx, 'inside a <parameter=NAME> tag', name)
            if text[e] != '>':
                stop = e
                return Match(stop, [ctx.issue(
                    UNPARSEABLE_ARGUMENTS, f'<parameter= at char {ctx.base + i} in '
                    f'<function={name}>: expected <parameter=NAME>, found '
                    f'{text[i:e + 1]!r}', pos, stop, FORMAT, name)])
            pname = text[j:e].strip()
            start = e + 1
            close = ctx.find(text, PARAM_END, start)
            following = ctx.find(text, PARAM, start)
            if close != -1 and (following == -1 or close < following):
                arguments[pname] = _typed(text[start:close], props.get(pname))
                i = close + len(PARAM_END)
                continue
            if following == -1:
                # No </parameter> and no next <parameter=: only at the very end may the
                # function's closing tag end the value (a later </parameter> would win).
                if not ctx.final:
                    return NeedMore((PARAM_END, PARAM))
                following = _first(text, ctx, start, (FUNC_END, CLOSE))
                if following == -1:
                    return _truncated(text, pos, ctx, f'inside parameter {pname!r} of '
                                      f'<function={name}> (expected {PARAM_END!r})', name)
            arguments[pname] = _typed(text[start:following], props.get(pname))
            i = following
            continue
        if text.startswith(FUNC_END, i):
            i += len(FUNC_END)
            break
        if wrapped and text.startswith(CLOSE, i):
            break  # </function> missing; the wrapper still closes the call
        rest = text[i:i + len(PARAM)]
        if not ctx.final and len(rest) < len(PARAM) and any(
                tag.startswith(rest) for tag in (PARAM, FUNC_END, CLOSE)):
            return NEED_ANY
        following = _first(text, ctx, i + 1, (PARAM, FUNC_END, CLOSE))
        if following == -1:
            return _truncated(text, pos, ctx, f'inside <function={name}> (expected '
                              f'{FUNC_END!r})', name)
        i = following  # stray text between parameters is ignored
    stop = i
    if wrapped:
        k = skip_ws(text, i)
        if text.startswith(CLOSE, k):
            stop = k + len(CLOSE)
        elif not ctx.final and CLOSE.startswith(text[k:k + len(CLOSE)]):
            return NEED_ANY
    items: list = []
    ctx.add_call(items, name, arguments, FORMAT, pos, stop)
    return Match(stop, items)


def match_wrapped(text: str, pos: int, trigger: str, ctx):
    """Match ``<tool_call>`` whose body is ``<function=...>``."""
    n = len(text)
    k = skip_ws(text, pos + len(OPEN))
    if text.startswith(FUNC, k):
        return read_function(text, pos, k, ctx, True)
    if not ctx.final and n - k < len(FUNC) and FUNC.startswith(text[k:]):
        return NEED_ANY
    if k >= n and FORMAT in ctx.plan.formats and 'hermes' not in ctx.plan.formats:
        return Match(n, [ctx.issue(TRUNCATED, f'<tool_call> at char {ctx.base + pos}: the '
                                   'text ended before the call', pos, n, FORMAT)])
    return None


def match_function(text: str, pos: int, trigger: str, ctx):
    """Match a bare ``<function=...>`` without the wrapper."""
    return read_function(text, pos, pos, ctx, False)


register_format(FORMAT, [(OPEN, match_wrapped), (FUNC, match_function)], priority=30,
                description='<tool_call><function=NAME><parameter=P>v</parameter></function>')
