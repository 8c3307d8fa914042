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
InternLM2 / 2.5: a plugin action between ``<|action_start|><|plugin|>`` and ``<|action_end|>``.

The body is ``{"name": ..., "parameters": {...}}``, usually on its own line.
Only the ``<|plugin|>`` action is a tool call (``<|interpreter|>`` runs code and stays text).

Reasoning safety: InternLM2 has no reasoning span of its own and its action tokens do not end
another family's span.
"""

from ..answers import MatchResult
from ..context import Ctx
from ..readers import tagged
from ..registry import format_spec

FORMAT = 'internlm'
SPEC = tagged.Tagged(FORMAT, '<|action_start|><|plugin|>', '<|action_end|>',
                     example='{"name": "say", "parameters": {"text": "hi"}}')


def match_internlm(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match one plugin action."""
    return tagged.match(text, pos, SPEC, ctx)


FAMILY = format_spec(FORMAT, [(SPEC.open, match_internlm)], priority=25,
                     description='<|action_start|><|plugin|>{...}<|action_end|>')
