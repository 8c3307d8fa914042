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
from ..readers.partial import function_prefix
from ..readers.text import skip_ws
from ..readers.xml_parameters import CLOSE, FUNC, OPEN, read_function
from ..registry import format_spec
from ..results import TRUNCATED

FORMAT = 'qwen3_coder_xml'


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


def partial_function(text: str, view):
    """Read a ``<function=NAME>`` call still arriving: ``(name, value reader)`` or None."""
    if text.startswith(OPEN):
        return function_prefix(text, skip_ws(text, len(OPEN)), view, CLOSE)
    return function_prefix(text, 0, view, '')


FAMILY = format_spec(FORMAT, [(OPEN, match_wrapped), (FUNC, match_function)], priority=30,
                     description='<tool_call><function=NAME><parameter=P>v</parameter></function>',
                     partial=partial_function)
