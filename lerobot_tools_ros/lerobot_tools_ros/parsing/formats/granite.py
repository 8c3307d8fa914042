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
IBM Granite: ``<|tool_call|>`` and ``<function_call>`` followed by JSON.

``<|tool_call|>[{"name": ..., "arguments": {...}}]`` (Granite 3.x) and
``<function_call> {"name": ..., "arguments": {...}}`` (Granite-20B-FunctionCalling, one tag per
call). Granite 3.1+ may also write ``<tool_call>[...]``, which the Hermes format reads.

Reasoning safety: Granite closes its thinking before calling, so ``<|tool_call|>`` does not
end a reasoning span; a call inside one stays a plan.
"""

from ..answers import MatchResult
from ..context import Ctx
from ..readers import tagged
from ..registry import format_spec

FORMAT = 'granite'
TOOL_CALL = tagged.Tagged(FORMAT, '<|tool_call|>')
FUNCTION_CALL = tagged.Tagged(FORMAT, '<function_call>')


def match_tool_call(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<|tool_call|>`` and its JSON list."""
    return tagged.match(text, pos, TOOL_CALL, ctx)


def match_function_call(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<function_call>`` and its JSON object."""
    return tagged.match(text, pos, FUNCTION_CALL, ctx)


FAMILY = format_spec(FORMAT, [(TOOL_CALL.open, match_tool_call),
                              (FUNCTION_CALL.open, match_function_call)], priority=25,
                     description='<|tool_call|>[{"name": ..., "arguments": {...}}]')
