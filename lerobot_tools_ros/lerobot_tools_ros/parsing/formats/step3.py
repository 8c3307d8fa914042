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

``<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="N">
<steptml:parameter name="K">V</steptml:parameter></steptml:invoke><｜tool_call_end｜>
<｜tool_calls_end｜>`` (``｜`` is U+FF5C). Values are typed by the catalog schema.
"""

from .invoke_xml import Invokes, read_invokes
from ..core import after_tag, Match, need_closing
from ..registry import register_format
from ..values import skip_ws

FORMAT = 'step3'
CALLS_BEGIN = '<｜tool_calls_begin｜>'
CALLS_END = '<｜tool_calls_end｜>'
CALL_BEGIN = '<｜tool_call_begin｜>'
CALL_END = '<｜tool_call_end｜>'
SEP = '<｜tool_sep｜>'
_TAGS = Invokes('steptml:', FORMAT)
_NEED_TOKENS = need_closing(CALL_BEGIN, 'function', SEP, CALLS_END, _TAGS.invoke)


def match_section(text: str, pos: int, trigger: str, ctx):
    """Match the call section: each call is ``function<｜tool_sep｜>`` and one invoke."""
    k = after_tag(text, pos, CALLS_BEGIN, ctx, FORMAT, f'expected {CALL_BEGIN}')
    if type(k) is not int:
        return k
    n = len(text)
    items: list = []
    while True:
        k = skip_ws(text, k)
        for token in (CALL_BEGIN, 'function', SEP):
            if text.startswith(token, k):
                k = skip_ws(text, k + len(token))
            elif not ctx.final and token.startswith(text[k:k + len(token)]):
                return _NEED_TOKENS
        if text.startswith(CALLS_END, k):
            return Match(k + len(CALLS_END), items)
        if not ctx.final and CALLS_END.startswith(text[k:k + len(CALLS_END)]):
            return _NEED_TOKENS
        if k >= n or not text.startswith(_TAGS.invoke, k):
            if not ctx.final and n - k < len(_TAGS.invoke) and _TAGS.invoke.startswith(text[k:]):
                return _NEED_TOKENS
            return Match(k, items) if items else None
        result = read_invokes(text, k, pos, CALL_END, _TAGS, ctx)
        if type(result) is not tuple:
            if type(result) is Match and items:
                return Match(result.end, items + result.items)
            return result
        k = result[0]
        items.extend(result[1])


register_format(FORMAT, [(CALLS_BEGIN, match_section)], priority=25,
                description='<｜tool_calls_begin｜>...<steptml:invoke name=...>')
