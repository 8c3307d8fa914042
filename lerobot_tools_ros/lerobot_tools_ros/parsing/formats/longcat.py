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
LongCat-Flash: ``<longcat_tool_call>{"name": ..., "arguments": {...}}</longcat_tool_call>``.

Reasoning safety: LongCat closes ``</think>`` before calling, so its tag does not end a
reasoning span; a call inside one stays a plan.
"""

from ..answers import MatchResult
from ..context import Ctx
from ..readers import tagged
from ..registry import format_spec

FORMAT = 'longcat'
SPEC = tagged.Tagged(FORMAT, '<longcat_tool_call>', '</longcat_tool_call>')


def match_longcat(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match one ``<longcat_tool_call>`` block."""
    return tagged.match(text, pos, SPEC, ctx)


FAMILY = format_spec(FORMAT, [(SPEC.open, match_longcat)], priority=25,
                     description='<longcat_tool_call>{...}</longcat_tool_call>')
