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
Hunyuan's tool-call tokens (HY v3 and HY v4): GLM-like key/value pairs in ``<tool_call>``.

::

    <tool_calls>
    <tool_call>say<tool_sep>
    <arg_key>text</arg_key>
    <arg_value>hi</arg_value>
    </tool_call>
    </tool_calls>

HY v4 writes the same without ``<tool_sep>``: ``<tool_calls><tool_call>NAME<arg_key>...``
(a zero-argument call is ``<tool_call>NAME</tool_call>``); without the section token that is
GLM's syntax and read as ``glm45``. Hunyuan-A13B's first format, ``<tool_calls>[{...}]
</tool_calls>``, is JSON and is read by ``tool_calls_json``: this matcher answers only when a
``<tool_call>NAME`` call follows the section token (or ``<tool_call>NAME<tool_sep>`` stands
without it). Values are typed by the catalog schema like GLM's; the closing ``</tool_calls>``
may be missing at the end of the text when the calls are complete.

Reasoning safety: the tags are written as text that reasoning may quote, so they never end
a reasoning span.
"""

import re

from ..answers import Match, MatchResult, NEED_ANY
from ..context import Ctx
from ..readers import key_values, tagged
from ..readers.text import skip_ws
from ..registry import format_spec

FORMAT = 'hunyuan'
SECTION = '<tool_calls>'
SECTION_END = '</tool_calls>'
OPEN = '<tool_call>'
SEP = '<tool_sep>'
_NAME = re.compile(r'[^\s<>{}\[\]"]+')
_TOKENS = (SECTION, SECTION_END, OPEN)
_IN_SECTION = (SEP, key_values.KEY, key_values.CLOSE)  # what may follow the name inside a section


def match_section(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<tool_calls>`` when ``<tool_call>`` calls follow (None for a JSON body)."""
    k = skip_ws(text, pos + len(SECTION))
    if k >= len(text):  # nothing after the token yet: tool_calls_json reports a final one
        return NEED_ANY if not ctx.final else None
    if text[k] != '<':
        return None
    return tagged.match_section(text, pos, ctx, FORMAT, _TOKENS, read_section_call)


def match_call(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<tool_call>NAME<tool_sep>...`` without the section token."""
    result = read_call(text, pos, ctx)
    return Match(result[0], result[1]) if type(result) is tuple else result


def read_section_call(text: str, pos: int, ctx: Ctx):
    """Read one call inside ``<tool_calls>``, with or without ``<tool_sep>`` (HY v4)."""
    return read_call(text, pos, ctx, in_section=True)


def read_call(text: str, pos: int, ctx: Ctx, in_section: bool = False):
    """Read one call at ``pos``: ``(end, items)``, None (another family's), or NeedMore."""
    n = len(text)
    i = skip_ws(text, pos + len(OPEN))
    if i < n and text[i] in '{[<':
        return None  # JSON or XML: Hermes, GLM and Qwen3-Coder read it
    found = _NAME.match(text, i)
    if found is None:
        return NEED_ANY if i >= n and not ctx.final else None
    k = skip_ws(text, found.end())
    if text.startswith(SEP, k):
        return key_values.read_arguments(text, pos, skip_ws(text, k + len(SEP)), found.group(),
                                         ctx, FORMAT)
    follows = _IN_SECTION if in_section else (SEP,)
    if in_section and text.startswith(follows[1:], k):
        return key_values.read_arguments(text, pos, k, found.group(), ctx, FORMAT)
    if not ctx.final and any(n - k < len(tag) and tag.startswith(text[k:]) for tag in follows):
        return NEED_ANY
    return None


FAMILY = format_spec(FORMAT, [(SECTION, match_section), (OPEN, match_call)], priority=17,
                     description='<tool_calls><tool_call>NAME<tool_sep><arg_key>k</arg_key>'
                     '<arg_value>v</arg_value></tool_call></tool_calls>')
