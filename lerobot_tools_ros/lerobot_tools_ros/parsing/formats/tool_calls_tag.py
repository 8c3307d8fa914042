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
``<tool_calls>`` holding JSON calls: Jamba, Hunyuan-A13B and MiniMax-M1.

Jamba and Hunyuan write one JSON list, ``<tool_calls>[{"name": ..., "arguments": {...}}]
</tool_calls>``; MiniMax-M1 writes one object per line between the same tags. The three share
one syntax, so they are one format (``tool_calls_json``).

Reasoning safety: ``<tool_calls>`` is written as text that reasoning may quote (MiniMax-M1
does), so it never ends a reasoning span.
"""

from ..answers import MatchResult
from ..context import Ctx
from ..readers import tagged
from ..registry import format_spec

FORMAT = 'tool_calls_json'
SPEC = tagged.Tagged(FORMAT, '<tool_calls>', '</tool_calls>', several=True)


def match_tool_calls(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match one ``<tool_calls>`` block."""
    return tagged.match(text, pos, SPEC, ctx)


FAMILY = format_spec(FORMAT, [(SPEC.open, match_tool_calls)], priority=25,
                     description='<tool_calls>[{...}]</tool_calls> (Jamba, Hunyuan, MiniMax-M1)')
