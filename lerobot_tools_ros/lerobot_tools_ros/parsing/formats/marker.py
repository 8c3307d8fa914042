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

r"""
LeRobot's marker: ``Pick the cube.\n<say>On it.</say>``, generalised to ``<NAME>...</NAME>``.

Recognised only for catalog tools with exactly one required string parameter (``say`` alone
without a catalog), so XML-ish prose is never mistaken for a call. The text between the tags is
the argument, verbatim except that one newline directly after the opening tag and one directly
before the closing tag are dropped. The first closing tag ends the marker.

Reasoning safety: the marker is ordinary text that reasoning may quote, so it never ends a
reasoning span.
"""

from ..answers import Match, MatchResult, NeedMore
from ..context import Ctx
from ..readers.partial import VerbatimReader
from ..readers.text import strip_one_newline
from ..registry import CatalogView, format_spec
from ..results import TRUNCATED

FORMAT = 'lerobot_marker'


def _triggers(view: CatalogView) -> list[str]:
    return [f'<{name}>' for name in view.markers]


def match_marker(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<NAME>text</NAME>``."""
    name = trigger[1:-1]
    close = f'</{name}>'
    start = pos + len(trigger)
    end = ctx.find(text, close, start)
    if end == -1:
        if not ctx.final:
            return NeedMore((close,))
        return Match(len(text), [ctx.issue(
            TRUNCATED, f'the {trigger} marker opened at char {ctx.base + pos} is not closed: '
            f'the text ended before the expected {close!r}', pos, len(text), FORMAT, name)])
    items: list = []
    ctx.add_call(items, name, {ctx.view.markers[name]: strip_one_newline(text[start:end])},
                 FORMAT, pos, end + len(close))
    return Match(end + len(close), items)


def partial_marker(text: str, view: CatalogView):
    """Read a ``<NAME>...`` marker still arriving: ``(name, value reader)`` or None."""
    if not text.startswith('<'):
        return None
    gt = text.find('>', 1)
    name = text[1:gt] if gt != -1 else ''
    argument = view.markers.get(name)
    if not argument or view.streamable.get(name) != argument:
        return None
    return name, VerbatimReader(gt + 1, (f'</{name}>',))  # closed at the closing tag


FAMILY = format_spec(FORMAT, [(_triggers, match_marker)], priority=15,
                     description='<say>On it.</say> for catalog tools with one required string',
                     partial=partial_marker)
