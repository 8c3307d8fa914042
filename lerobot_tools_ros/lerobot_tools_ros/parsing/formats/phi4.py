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
Phi-4-mini: ``functools[{"name": ..., "arguments": {...}}, ...]``.

Reasoning safety: ``functools[`` is ordinary text and never ends a reasoning span.
"""

from ..answers import MatchResult
from ..context import Ctx
from ..readers import tagged
from ..registry import format_spec

FORMAT = 'phi4_mini'
SPEC = tagged.Tagged(FORMAT, 'functools')
TRIGGER = 'functools['


def match_functools(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``functools[...]`` (``functools`` as a word, directly followed by the list)."""
    if ctx.char_before(text, pos).isalnum() or ctx.char_before(text, pos) == '_':
        return None
    return tagged.match(text, pos, SPEC, ctx, pos + len(SPEC.open))


FAMILY = format_spec(FORMAT, [(TRIGGER, match_functools)], priority=25,
                     description='functools[{"name": ..., "arguments": {...}}]')
