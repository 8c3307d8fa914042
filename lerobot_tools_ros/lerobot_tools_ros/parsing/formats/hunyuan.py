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
Hunyuan's second format (the HY v3 models): GLM-like key/value pairs after ``<tool_sep>``.

::

    <tool_calls>
    <tool_call>say<tool_sep>
    <arg_key>text</arg_key>
    <arg_value>hi</arg_value>
    </tool_call>
    </tool_calls>

Hunyuan-A13B's first format, ``<tool_calls>[{...}]</tool_calls>``, is JSON and is read by
``tool_calls_json``: this matcher answers only when a ``<tool_call>NAME<tool_sep>`` follows the
section token (or stands without it). Values are typed by the catalog schema like GLM's; the
closing ``</tool_calls>`` may be missing at the end of the text when the calls are complete.
"""

import re

from . import glm, tagged
from ..core import Match, NEED_ANY
from ..registry import register_format
from ..values import skip_ws

FORMAT = 'hunyuan'
SECTION = '<tool_calls>'
SECTION_END = '</tool_calls>'
OPEN = '<tool_call>'
SEP = '<tool_sep>'
_NAME = re.compile(r'[^\s<>{}\[\]"]+')
_TOKENS = (SECTION, SECTION_END, OPEN)


def match_section(text: str, pos: int, trigger: str, ctx):
    """Match ``<tool_calls>`` when ``<tool_call>`` calls follow (None for a JSON body)."""
    k = skip_ws(text, pos + len(SECTION))
    if k >= len(text):  # nothing after the token yet: tool_calls_json reports a final one
        return NEED_ANY if not ctx.final else None
    if text[k] != '<':
        return None
    return tagged.match_section(text, pos, ctx, FORMAT, _TOKENS, read_call)


def match_call(text: str, pos: int, trigger: str, ctx):
    """Match ``<tool_call>NAME<tool_sep>...`` without the section token."""
    result = read_call(text, pos, ctx)
    return Match(result[0], result[1]) if type(result) is tuple else result


def read_call(text: str, pos: int, ctx):
    """Read one call at ``pos``: ``(end, items)``, None (another family's), or NeedMore."""
    n = len(text)
    i = skip_ws(text, pos + len(OPEN))
    if i < n and text[i] in '{[<':
        return None  # JSON or XML: Hermes, GLM and Qwen3-Coder read it
    found = _NAME.match(text, i)
    if found is None:
        return NEED_ANY if i >= n and not ctx.final else None
    k = skip_ws(text, found.end())
    if not text.startswith(SEP, k):
        if not ctx.final and n - k < len(SEP) and SEP.startswith(text[k:]):
            return NEED_ANY
        return None
    return glm.read_arguments(text, pos, skip_ws(text, k + len(SEP)), found.group(), ctx,
                              FORMAT)


register_format(FORMAT, [(SECTION, match_section), (OPEN, match_call)], priority=17,
                description='<tool_calls><tool_call>NAME<tool_sep><arg_key>k</arg_key>'
                '<arg_value>v</arg_value></tool_call></tool_calls>')
