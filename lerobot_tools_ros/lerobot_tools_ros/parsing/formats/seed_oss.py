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
ByteDance Seed-OSS: Qwen3-Coder's function body inside ``<seed:tool_call>``.

``<seed:tool_call><function=NAME><parameter=K>V</parameter></function></seed:tool_call>``:
Qwen3-Coder's body in Seed's own wrapper, read by the same code (values
typed by the catalog schema, markup inside values, repeated parameters).
``<seed:think>``...``</seed:think>`` is a reasoning span: calls inside it are reported, not
dispatched, and its text stays in the content.

Reasoning safety: ``<seed:tool_call>`` does not end a ``<seed:think>`` span (Seed-OSS writes
the call format inside its reasoning while planning; only ``</seed:think>`` ends it).
"""

from ..answers import Match, MatchResult, NEED_ANY
from ..context import after_tag, Ctx
from ..readers.partial import function_prefix
from ..readers.text import skip_ws
from ..readers.xml_parameters import FUNC, read_function
from ..registry import format_spec
from ..results import UNPARSEABLE_ARGUMENTS

FORMAT = 'seed_oss'
OPEN = '<seed:tool_call>'
CLOSE = '</seed:tool_call>'


def match_seed(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<seed:tool_call>`` and the function in it."""
    k = after_tag(text, pos, OPEN, ctx, FORMAT, 'expected <function=NAME>')
    if not isinstance(k, int):
        return k
    if text.startswith(FUNC, k):
        return read_function(text, pos, k, ctx, True, CLOSE, FORMAT)
    if not ctx.final and FUNC.startswith(text[k:k + len(FUNC)]):
        return NEED_ANY
    stop = ctx.find(text, CLOSE, k)
    if stop == -1:
        if not ctx.final:
            return NEED_ANY
        stop = len(text)
    else:
        stop += len(CLOSE)
    found = text[k:min(k + 20, stop)]
    return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{OPEN} at char {ctx.base + pos}: '
                                  f'expected <function=NAME>, found {found!r}', pos, stop,
                                  FORMAT)])


def partial_seed(text: str, view):
    """Read a ``<seed:tool_call><function=NAME>`` call still arriving (see function_prefix)."""
    if not text.startswith(OPEN):
        return None
    return function_prefix(text, skip_ws(text, len(OPEN)), view, CLOSE)


FAMILY = format_spec(FORMAT, [(OPEN, match_seed)], priority=25, partial=partial_seed,
                     reasoning=[('<seed:think>', '</seed:think>')],
                     description='<seed:tool_call><function=NAME><parameter=K>v</parameter>')
