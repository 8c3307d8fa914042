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
Cohere Command: ``<|START_ACTION|>`` JSON ``<|END_ACTION|>``, and ``Action:`` with a fence.

``<|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}]
<|END_ACTION|>`` is Command A and R7B; for Command R / R+ a line ``Action:`` followed by a
```` ```json ```` fence holding ``[{"tool_name": ..., "parameters": {...}}]``. ``tool_name`` is
the name and ``parameters`` the arguments. ``<|START_THINKING|>``...``<|END_THINKING|>`` is a
reasoning span (calls in it are reported, not dispatched).

Reasoning safety: ``<|START_ACTION|>`` is a special token, but Command models close their
thinking span before acting, so it does not end one; an action inside the span stays a plan.
"""

import re

from ..answers import MatchResult, NEED_ANY
from ..context import Ctx
from ..readers import tagged
from ..registry import format_spec

FORMAT = 'cohere'
_FENCE = re.compile(r'\s*```[A-Za-z_]*\s*')
_FENCE_SO_FAR = re.compile(r'\s*(?:`{0,3}|```[A-Za-z_]*\s*)\Z')


def normalize(value: object) -> object:
    """Cohere's ``{"tool_name", "parameters"}`` objects as ``{"name", "arguments"}`` ones."""
    if type(value) is list:
        return [normalize(item) for item in value]
    if type(value) is dict and 'tool_name' in value and 'name' not in value:
        return {'name': value['tool_name'], 'arguments': value.get('parameters')}
    return value


ACTION = tagged.Tagged(FORMAT, '<|START_ACTION|>', '<|END_ACTION|>', normalize=normalize,
                       example='[{"tool_name": "say", "parameters": {"text": "hi"}}]')
PLAIN = tagged.Tagged(FORMAT, 'Action:', '```', normalize=normalize,
                      example='[{"tool_name": "say", "parameters": {"text": "hi"}}]')


def match_action_tokens(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<|START_ACTION|>...<|END_ACTION|>``."""
    return tagged.match(text, pos, ACTION, ctx)


def match_plain_action(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``Action:`` at the start of a line, then a fenced JSON list."""
    before = ctx.char_before(text, pos)
    if before and before != '\n':
        return None
    start = pos + len(PLAIN.open)
    fence = _FENCE.match(text, start)
    if fence is None or fence.end() >= len(text):
        if not ctx.final and _FENCE_SO_FAR.match(text, start):
            return NEED_ANY  # the fence (or what follows it) may still be arriving
        return None
    if text[fence.end()] not in '{[':
        return None
    return tagged.match(text, pos, PLAIN, ctx, fence.end())


FAMILY = format_spec(FORMAT, [(ACTION.open, match_action_tokens),
                              (PLAIN.open, match_plain_action)], priority=25,
                     reasoning=[('<|START_THINKING|>', '<|END_THINKING|>')],
                     description='<|START_ACTION|>[{"tool_name": ..., "parameters": {...}}]')
