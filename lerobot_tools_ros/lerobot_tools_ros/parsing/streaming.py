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
``StreamingParser``: the same results as ``parse``, delivered while the text arrives.

Each ``feed`` appends a delta and reruns the scanner over the unconsumed tail only: prose and
calls before the first undecided position are emitted and dropped from the buffer; a trailing
partial trigger (``<tool_ca``) and trailing whitespace are held back. A delta with no character
that could start a trigger, arriving when nothing is held back, skips the scanner entirely.

While a call is still open, the scanner reruns only when a delta brings a string that could
end it (its closing tag; for JSON and pythonic calls a closing bracket), and the bracket
scanner resumes where it stopped (``values.scan_brackets``), so a long call arriving in small
deltas is scanned once and decoded once.

Cost: O(total length) for prose and for calls closed by a tag. For a pending JSON value,
each wake-up costs O(delta) for the bracket scan, plus, while the value is under 2 KiB, one
C-level decode attempt of the value (cheaper than the Python scan at that size); the value is
decoded in full once it closes. Per delta there is a fixed cost of about 1 us (a Python call
and an event object), which dominates for token-sized deltas.

For every split of a text into deltas, the concatenated ContentEvents, the CallEvents and the
IssueEvents equal ``parse(text)``'s content, calls and errors (tested with hypothesis). The one
exception is input over ``max_input_bytes``: events already emitted stand, one ``too_large``
issue follows, and the rest of the input is ignored.
"""

from typing import Sequence

from .api import internal_error_issue, too_large_issue, utf8_size
from .core import Content, Ctx, Match, scan
from .registry import get_plan
from .results import (CallEvent, ContentEvent, DEFAULT_MAX_INPUT_BYTES, IssueEvent,
                      ParsedCall)

_TAIL = 32  # longer than any wake string


class StreamingParser:
    """Incremental tool-call parser for one generation; ``feed`` deltas, then ``finish``."""

    def __init__(self, catalog=None, formats: str | Sequence[str] = 'auto', *,
                 max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> None:
        self._plan = get_plan(catalog, formats)
        self._limit = max_input_bytes
        self._buf = ''
        self._chunks: list[str] = []
        self._base = 0
        self._prev = ''
        self._content = Content()
        self._size = 0
        self._seen = 0
        self._wake: tuple[str, ...] | None = None
        self._tail = ''
        self._overflow = False
        self._finished = False
        self._failed = False
        self._memo: dict = {}

    def feed(self, delta: str) -> list:
        """Add text; return the events it made final (possibly none)."""
        if self._finished:
            raise RuntimeError('StreamingParser.feed() called after finish()')
        if not isinstance(delta, str):
            raise TypeError(f'feed() needs a str, got {type(delta).__name__}')
        if not delta or self._failed:
            return []
        try:
            return self._feed(delta)
        except Exception as exc:  # noqa: B902 - model text must never take the caller down
            return self._fail(exc)

    def finish(self) -> list:
        """End of the generation: resolve everything held back (truncated calls included)."""
        if self._failed:
            self._finished = True
            return []
        try:
            return self._finish()
        except Exception as exc:  # noqa: B902 - model text must never take the caller down
            return self._fail(exc)

    def _fail(self, exc: Exception) -> list:
        """Report a parser failure once; the rest of the generation is ignored."""
        self._failed = True
        return [IssueEvent(internal_error_issue(exc, self._seen))]

    def _feed(self, delta: str) -> list:
        self._seen += len(delta)
        if self._overflow:
            return []
        self._size += utf8_size(delta)
        if self._size > self._limit:
            return self._overflowed()
        wake = self._wake
        if wake is not None:
            window = self._tail + delta
            self._chunks.append(delta)
            self._tail = window[-_TAIL:]
            for needle in wake:
                if needle in window:
                    break
            else:
                return []
            # Grow the buffer in place (CPython appends to a str that has no other reference),
            # so a long pending call costs O(delta) per wake-up, not a copy of the whole call.
            text = self._buf
            self._buf = ''
            text += ''.join(self._chunks) if len(self._chunks) > 1 else self._chunks[0]
            self._chunks = []
        elif self._buf:
            text = self._buf
            self._buf = ''
            text += delta
        else:
            key_rx = self._plan.key_rx
            if key_rx is not None and key_rx.search(delta) is None:
                return self._prose_only(delta)
            text = delta
        return self._scan(text, False)

    def _prose_only(self, delta: str) -> list:
        """Fast path: nothing held back and no trigger can start in ``delta``."""
        plan = self._plan
        cut = len(delta)
        if plan.hold_rx is not None:
            held = plan.hold_rx.search(delta, max(0, cut - plan.hold_len))
            if held is not None:
                cut = held.start()
        events = []
        if cut:
            kept = self._content.prose(delta if cut == len(delta) else delta[:cut])
            if kept:
                events.append(ContentEvent(kept))
            self._prev = delta[cut - 1]
            self._base += cut
            self._buf = delta[cut:]
        else:
            self._buf = delta
        return events

    def _finish(self) -> list:
        if self._finished:
            return []
        self._finished = True
        if self._overflow:
            return []
        text = self._buf + ''.join(self._chunks)
        self._chunks = []
        events = self._scan(text, True)
        tail = self._content.finish()
        if tail:
            events.append(ContentEvent(tail))
        return events

    def _scan(self, text: str, final: bool) -> list:
        pieces, stop, wake = scan(text, Ctx(self._plan, final, self._base, self._prev,
                                            self._memo))
        events: list = []
        content = self._content
        for piece in pieces:
            if type(piece) is not Match:
                kept = content.prose(piece)
                if kept:
                    events.append(ContentEvent(kept))
                continue
            if piece.content:
                kept = content.prose(piece.content)
                if kept:
                    events.append(ContentEvent(kept))
            content.markup()
            for item in piece.items:
                events.append(CallEvent(item) if type(item) is ParsedCall else IssueEvent(item))
        if stop:
            self._prev = text[stop - 1]
            self._base += stop
            text = text[stop:]
            if self._memo:  # values that start before the new buffer are decided
                for key in [key for key in self._memo if key[0] < self._base]:
                    del self._memo[key]
        self._buf = text
        self._wake = wake
        self._tail = text[-_TAIL:] if wake is not None else ''
        return events

    def _overflowed(self) -> list:
        self._overflow = True
        self._buf = ''
        self._chunks = []
        return [IssueEvent(too_large_issue(self._size, self._limit, self._base, self._seen))]
