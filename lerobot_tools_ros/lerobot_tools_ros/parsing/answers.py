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
What a matcher answers at a trigger: ``Match``, ``Skip``, ``NeedMore`` or None.

- ``Match(end, items, content, keep)``: call markup up to ``end``, with its ParsedCall and
  ParseIssue items (and, for an assistant-message dict, that message's ``content`` as prose;
  with ``keep``, the markup itself stays in the content, as inside a reasoning span);
- ``Skip(end)``: not a call, and nothing inside ``[start, end)`` should be tried either (a
  complete JSON value that is not a call);
- ``None``: not a call here; the scan continues one character later;
- ``NeedMore(wake, quiet)``: only while streaming: the answer depends on text not seen yet.
  ``wake`` lists strings whose arrival may change that (``None``: any text); ``quiet``
  (optional) lists characters whose arrival alone cannot change it either (besides
  whitespace), e.g. the characters of an optional closing tag that is still arriving. Waking
  late is never wrong (the answer is computed from the whole text then), only later.

Nothing here imports another module of the parser: readers, families and the scanner all
build on these types.
"""

from typing import Union


class Match:
    """
    Call markup found at the scanned position.

    ``keep``: the markup stays in the content as text (call markup inside a reasoning span,
    whose text is reasoning, kept verbatim); ``content`` is then that text.
    """

    __slots__ = ('end', 'items', 'content', 'keep')

    def __init__(self, end: int, items: list, content: str | None = None,
                 keep: bool = False) -> None:
        self.end = end
        self.items = items
        self.content = content
        self.keep = keep


class Skip:
    """Not a call; resume scanning at ``end``."""

    __slots__ = ('end',)

    def __init__(self, end: int) -> None:
        self.end = end


class NeedMore:
    """More text is needed to decide (never returned when ``ctx.final``)."""

    __slots__ = ('wake', 'quiet')

    def __init__(self, wake: tuple[str, ...] | None = None, quiet: str = '') -> None:
        self.wake = wake
        self.quiet = quiet


NEED_ANY = NeedMore(None)


_closing: dict = {}


def need_closing(*tokens: str) -> NeedMore:
    """
    Wait for optional closing ``tokens`` after a complete call (cached per tokens).

    Text made only of whitespace and the tokens' characters cannot decide anything but a
    completed token, so the streaming parser does not rescan for it.
    """
    need = _closing.get(tokens)
    if need is None:
        need = _closing[tokens] = NeedMore(tokens, ''.join(sorted(set(''.join(tokens)))))
    return need


MatchResult = Union[Match, Skip, NeedMore, None]
"""What a matcher returns."""
