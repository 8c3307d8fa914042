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
DeepSeek V3.2 and V4 "DSML" calls.

::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="move_to">
    <｜DSML｜parameter name="x" string="false">0.5</｜DSML｜parameter>
    <｜DSML｜parameter name="label" string="true">red cup</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

(``｜`` is U+FF5C.) V4 writes ``<｜DSML｜tool_calls>`` ... ``</｜DSML｜tool_calls>`` around the
same invokes. ``string="true"`` keeps the value's text exactly; ``string="false"`` reads it as
JSON (text typed by the catalog schema when it is not JSON). An invoke may hold one JSON
object instead of parameter tags. Several invokes in one block are parallel calls; prose may
come before, between and after blocks; the closing tag may be missing at the end of the text
when the calls are complete.

Reasoning safety: DSML tags are written as ordinary text, not as special tokens, so a DSML
block inside an open reasoning span stays a plan (``call_in_reasoning``).
"""

from ..answers import Match, MatchResult
from ..context import after_tag, Ctx
from ..readers.invokes import Invokes, read_invokes
from ..registry import format_spec

FORMAT = 'deepseek_dsml'
BLOCKS = {'<｜DSML｜function_calls>': '</｜DSML｜function_calls>',  # V3.2
          '<｜DSML｜tool_calls>': '</｜DSML｜tool_calls>'}  # V4
_TAGS = Invokes('｜DSML｜', FORMAT, exact=True, json_body=True)


def match_block(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match a ``<｜DSML｜function_calls>`` or ``<｜DSML｜tool_calls>`` block."""
    k = after_tag(text, pos, trigger, ctx, FORMAT, 'expected <｜DSML｜invoke name="NAME">')
    if not isinstance(k, int):
        return k
    result = read_invokes(text, k, pos, BLOCKS[trigger], _TAGS, ctx)
    return Match(result[0], result[1]) if type(result) is tuple else result


FAMILY = format_spec(FORMAT, [(opener, match_block) for opener in BLOCKS], priority=25,
                     description='<｜DSML｜function_calls><｜DSML｜invoke name=...> (V3.2, V4)')
