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
MiniMax-M2: ``<invoke>`` blocks inside ``<minimax:tool_call>``.

``<minimax:tool_call><invoke name="NAME"><parameter name="K">V</parameter></invoke>
</minimax:tool_call>``, several invokes per block allowed. Values are typed by the catalog
schema (text without one). MiniMax-M1's ``<tool_calls>`` JSON lines are ``tool_calls_json``.

Reasoning safety: MiniMax-M2 closes ``</think>`` before calling, and its tags are text that
reasoning may quote, so they never end a reasoning span.
"""

from ..answers import Match, MatchResult
from ..context import after_tag, Ctx
from ..readers.invokes import Invokes, read_invokes
from ..registry import format_spec

FORMAT = 'minimax_m2'
OPEN = '<minimax:tool_call>'
CLOSE = '</minimax:tool_call>'
_TAGS = Invokes('', FORMAT)


def match_minimax(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match one ``<minimax:tool_call>`` block."""
    k = after_tag(text, pos, OPEN, ctx, FORMAT, 'expected <invoke name="NAME">')
    if not isinstance(k, int):
        return k
    result = read_invokes(text, k, pos, CLOSE, _TAGS, ctx)
    return Match(result[0], result[1]) if type(result) is tuple else result


FAMILY = format_spec(FORMAT, [(OPEN, match_minimax)], priority=25,
                     description='<minimax:tool_call><invoke name=...><parameter name=...>')
