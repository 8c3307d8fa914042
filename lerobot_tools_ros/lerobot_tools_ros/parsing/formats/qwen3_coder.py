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

The ``<tool_call>`` wrapper is optional (a bare function's stray ``</tool_call>`` is markup too).
Parameter values are typed from the catalog schema (integer, number, boolean, null, object and
array are parsed; a string keeps its text verbatim except for one leading and one trailing
newline). A value that does not parse as its declared type stays a string, so argument
validation reports it against the schema.

What ends a value: its ``</parameter>`` when the markup continues after it (``<parameter=`` of
a parameter the tool's schema has, ``</function>``, the wrapper's closing tag, the end of the
text); any other ``</parameter>`` is text inside the value, as is a ``<parameter=NAME>`` whose
NAME the schema does not have (a file holding ``<parameter=new_string>``). A ``<tool_call>`` or
``<function=`` inside a value opens a literal nested call whose tags are all text up to its own
closing tag. A value whose ``</parameter>`` is missing ends at the next parameter the schema
has (not given before, nor later), or at ``</function>``.

Reasoning safety: ``<tool_call>`` and ``<function=`` are written as text that reasoning may
quote, so they never end a reasoning span.
"""

from ..answers import Match, MatchResult, NEED_ANY
from ..context import Ctx
from ..readers.partial import hold_partial_tag, verbatim_prefix
from ..readers.text import match_end, skip_ws
from ..readers.xml_parameters import (CLOSE, FUNC, FUNC_END, NAME, OPEN, PARAM, PARAM_END,
                                      read_function)
from ..registry import format_spec
from ..results import TRUNCATED

FORMAT = 'qwen3_coder_xml'


_NESTING: dict = {}  # wrapper closing tag -> search for the tags that nest or end a value


def match_wrapped(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<tool_call>`` whose body is ``<function=...>``."""
    n = len(text)
    k = skip_ws(text, pos + len(OPEN))
    if text.startswith(FUNC, k):
        return read_function(text, pos, k, ctx, True, CLOSE, FORMAT)
    if not ctx.final and n - k < len(FUNC) and FUNC.startswith(text[k:]):
        return NEED_ANY
    if k >= n and FORMAT in ctx.plan.formats and 'hermes' not in ctx.plan.formats:
        return Match(n, [ctx.issue(TRUNCATED, f'<tool_call> at char {ctx.base + pos}: the '
                                   'text ended before the call', pos, n, FORMAT)])
    return None


def match_function(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a bare ``<function=...>`` without the wrapper."""
    return read_function(text, pos, pos, ctx, False, CLOSE, FORMAT)


# What may end a streamed value (or open a literal nested call in it): held back there.
_VALUE_TAGS = (PARAM_END, PARAM, FUNC_END, CLOSE, OPEN, FUNC)


def partial_function(text: str, view):
    """
    Read a ``<function=NAME>`` call still arriving: ``(name, text so far, closed)`` or None.

    The streamed value is the text after ``<parameter=ARG>`` up to the first tag that may end
    it; a ``</parameter>`` that turns out to be text inside the value holds the rest back until
    the call is complete (the complete call carries it). The value is closed at a
    ``</parameter>`` before any other tag once the markup certainly continues after it
    (``xml_parameters``: ``</function>``, the wrapper's closing tag, or ``<parameter=`` of a
    parameter the tool's schema has).
    """
    wrapped = text.startswith(OPEN)
    k = skip_ws(text, len(OPEN)) if wrapped else 0
    if not text.startswith(FUNC, k):
        return None
    i = k + len(FUNC)
    e = match_end(NAME, text, i)
    if e >= len(text) or text[e] != '>':
        return None
    name = text[i:e].strip()
    argument = view.streamable.get(name)
    if not argument:
        return None
    i = e + 1
    while True:
        i = skip_ws(text, i)
        if not text.startswith(PARAM, i):
            return name, None, False
        j = i + len(PARAM)
        e = match_end(NAME, text, j)
        if e >= len(text) or text[e] != '>':
            return name, None, False
        if text[j:e].strip() == argument:
            raw = hold_partial_tag(text[e + 1:], _VALUE_TAGS)
            end = e + 1 + len(raw)
            if text.startswith(PARAM_END, end) and _continues(text, end + len(PARAM_END),
                                                              wrapped, view.properties(name)):
                return name, verbatim_prefix(raw, True), True
            return name, verbatim_prefix(raw, False), False
        end = text.find(PARAM_END, e)
        if end == -1:
            return name, None, False
        i = end + len(PARAM_END)


def _continues(text: str, a: int, wrapped: bool, props) -> bool:
    """Whether the markup certainly continues at ``a``, after a ``</parameter>``."""
    a = skip_ws(text, a)
    if text.startswith(FUNC_END, a) or (wrapped and text.startswith(CLOSE, a)):
        return True
    if not text.startswith(PARAM, a):
        return False
    e = match_end(NAME, text, a + len(PARAM))
    return e < len(text) and text[e] == '>' and (
        not props or text[a + len(PARAM):e].strip() in props)


FAMILY = format_spec(FORMAT, [(OPEN, match_wrapped), (FUNC, match_function)], priority=30,
                     description='<tool_call><function=NAME><parameter=P>v</parameter></function>',
                     partial=partial_function)
