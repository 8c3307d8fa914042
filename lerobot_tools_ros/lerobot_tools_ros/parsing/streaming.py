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
partial trigger (``<tool_ca``) and trailing whitespace are held back.

Per token the common cases cost little more than a string append. While nothing is held back,
a delta without any *key character* (one per trigger that every occurrence of it contains,
``plan.key_chars``: ``<``, ``[``, ``{``, ``(``...) cannot complete a trigger, so it is prose
that is never scanned: it is appended, and delivered as soon as the undelivered prose reaches
``lag_chars`` (the length of the longest trigger prefix, so prose never lags behind the text
by more than a held-back partial trigger would), before the next scanned delta, and at
``finish``; trailing whitespace (the content rule) and a trailing word that may begin a trigger
such as ``say(`` wait for the next delta. The scanner runs only on a delta that holds a key
character, and only from that word on.
While a call is pending, a delta only wakes the scanner when it completes one of the matcher's
wake strings (checked by their last character first) or, for an optional closing tag, brings a
character that is not whitespace or part of that tag (``NeedMore.quiet``). The bracket scanner
resumes where it stopped (``values.scan_brackets``), so a long call arriving in small deltas is
scanned once.

For every split of a text into deltas, the concatenated ContentEvents, the CallEvents and the
IssueEvents equal ``parse(text)``'s content, calls and errors (tested with hypothesis). The one
exception is input over ``max_input_bytes``: events already emitted stand, one ``too_large``
issue follows, and the rest of the input is ignored.

With ``stream_arguments``, a call of a tool with a streamable argument
(``registry.STREAMABLE_ARGUMENTS``) that is still arriving is reported early, in the families
that can read it incrementally (a ``partial`` reader in their ``format_spec``: the LeRobot
marker, Hermes/Qwen JSON, Llama 3 JSON after its tag, Mistral, OpenAI JSON (the first call of
a value), Qwen3-Coder XML and Seed-OSS, GLM key/value XML): a CallStartEvent once its name is
known, then ArgumentEvents with the argument's decoded text as it grows (their texts joined
are always a prefix of the argument the complete call carries), the last of them ``closed``
when the argument's value has certainly ended before the call's markup has (an ArgumentEvent
with empty text when nothing is left to report), then exactly one CallEvent or IssueEvent
whose span starts at the CallStartEvent's ``start`` (a malformed or truncated tail is an
IssueEvent as usual). Every other event is unchanged; calls completed within one ``feed`` are
not announced early. The option costs some work per delta, so it is off by default.
The call's header is read by the family's ``partial`` until the argument's value begins; from
then on the value reader it returned (``readers.partial``) keeps its place and reads only the
new text, so a delta costs in proportion to its length, however long the pending call.
(JSON lets a later duplicate member replace a value already reported; the complete call then
does not continue the text, which the dispatcher treats as a failed call.)
"""

import re
from typing import Callable, Sequence

from .answers import Match, NeedMore
from .api import internal_error_issue, report_reasoning, too_large_issue, utf8_size
from .context import Ctx
from .core import Content, scan
from .registry import get_plan
from .results import (ArgumentEvent, CallEvent, CallStartEvent, ContentEvent,
                      DEFAULT_MAX_INPUT_BYTES, INVALID_CALL, IssueEvent, ParsedCall, ParseIssue)

_SPACE = frozenset(' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002'
                   '\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f'
                   '\u205f\u3000')  # what str.isspace() and str.rstrip() take
_ASCII_NAME = ('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.')
_EMPTY: list = []  # returned (never mutated) when a delta makes nothing final
_new_event = object.__new__  # frozen dataclasses: set the slot directly (half the cost)
# (the slot descriptors, read from the class dicts: type checkers see a slot as its value type)
_set_text = vars(ContentEvent)['text'].__set__
_set_call = vars(CallEvent)['call'].__set__
_set_issue = vars(IssueEvent)['issue'].__set__
_FINDS_NOTHING = re.compile('(?!)').search
_last_chars: dict = {}  # wake tuple -> search for a character that ends one of its strings
_reaches: dict = {}  # wake tuple -> how far before a delta one of its strings may begin
_quiet_sets: dict = {}  # quiet characters -> issuperset of them and whitespace


def _quiet_check(quiet: str):
    """Return a test of whether a delta holds only whitespace and ``quiet`` characters."""
    found = _quiet_sets.get(quiet)
    if found is None:
        found = _quiet_sets[quiet] = frozenset(quiet + ' \t\r\n\f\v').issuperset
    return found


def _wake_search(wake: tuple[str, ...]):
    """Return a search for any last character of the wake strings (compiled once per tuple)."""
    found = _last_chars.get(wake)
    if found is None:
        chars = ''.join(sorted({needle[-1] for needle in wake}))
        found = _last_chars[wake] = re.compile('[' + re.escape(chars) + ']').search
    return found


def _reach(wake: tuple[str, ...]) -> int:
    """Return the length of the longest wake string, minus one (cached per tuple)."""
    found = _reaches.get(wake)
    if found is None:
        found = _reaches[wake] = max(map(len, wake)) - 1
    return found


class StreamingParser:
    """Incremental tool-call parser for one generation; ``feed`` deltas, then ``finish``."""

    __slots__ = ('_asleep', '_base', '_buf', '_chunks', '_content', '_extra', '_failed',
                 '_finished', '_held', '_idle', '_key_search', '_limit', '_memo', '_overflow',
                 '_partial', '_release_at', 'lag_chars',
                 '_plan', '_prev', '_quiet', '_reasoning', '_report', '_room', '_room_base',
                 '_seen', '_size', '_waiting', '_wake', '_wake_search', '_word', '_words',
                 '_need', '_wake_short', '_stream_args', '_open', '_header_base',
                 '_header_retry')

    def __init__(self, catalog=None, formats: str | Sequence[str] = 'auto', *,
                 max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
                 reasoning_calls: str = 'report', stream_arguments: bool = False) -> None:
        plan = self._plan = get_plan(catalog, formats)
        self._stream_args = bool(stream_arguments) and bool(plan.partials)
        if self._stream_args:
            self.__class__ = _ArgumentStreamingParser  # (feed also tracks the pending call)
        self._open: list | None = None  # [start, name, argument, format, reader, closed]
        # A header (or text that may be one) that is not read yet is read again on every delta
        # while short; once 256 characters are pending, only when the text has grown by an eighth:
        # the work stays linear even when a long member precedes the argument (or the text is no
        # call at all), at the price of announcing such a call a little later.
        self._header_base = -1  # the buffer start the header was last read at
        self._header_retry = 0  # read it again once the pending text is this long
        self._report = report_reasoning(reasoning_calls)
        self._reasoning: str | None = None  # the closing token of the open reasoning span
        self._limit = max_input_bytes
        self._buf = ''
        self._chunks: list[str] = []
        self._base = 0
        self._prev = ''
        self._content = Content()
        self._size = 0
        self._seen = 0
        self._wake: tuple[str, ...] | None = None
        self._need: NeedMore | None = None  # what the pending call waits for
        self._wake_short = False
        # (used only while waiting; until then a search that finds nothing)
        self._wake_search: Callable[[str], re.Match[str] | None] = _FINDS_NOTHING
        self._asleep: Callable[[str], bool] | None = None
        self._partial = False
        self._overflow = False
        self._finished = False
        self._failed = False
        self._memo: dict = {}
        self._key_search = plan.key_rx.search if plan.key_rx is not None else None
        self._quiet = plan.key_chars.isdisjoint
        self._words = plan.word_prefixes
        # _idle: nothing held back and no call pending, so a delta without a key character is
        # prose (the fast path). _waiting: a call is pending on one of the wake strings. In
        # both, deltas only spend _room (bytes left under max_input_bytes; _extra: the bytes
        # above one per character); _settle() books them.
        self._idle = self._key_search is not None
        self._waiting = False
        self._room = self._room_base = max_input_bytes
        self._extra = 0
        self._held: list[str] = []  # idle: prose not delivered yet (never needs a scan)
        self.lag_chars = max(1, plan.hold_len)
        """Prose is delivered once this many characters of it are pending (bytes, for UTF-8)."""
        self._release_at = max_input_bytes - self.lag_chars
        self._word = ''  # idle: a trailing word that may begin a trigger (say( functools[)

    def feed(self, delta: str) -> list:
        """
        Add text; return the events it made final (possibly none).

        Prose is delivered once ``lag_chars`` characters of it are pending, before a call or
        issue, and at ``finish``; trailing whitespace and a trailing partial trigger
        (``<tool_ca``, ``sa``) wait for the next delta. Calls and issues are delivered as soon
        as their markup is complete.
        """
        if type(delta) is str:
            if self._idle:
                if self._quiet(delta) and delta:
                    n = len(delta)
                    if not delta.isascii():
                        n = utf8_size(delta)
                        self._extra += n - len(delta)
                    if n <= self._room:
                        self._room -= n
                        self._held.append(delta)
                        if self._room > self._release_at:
                            return _EMPTY
                        return self._release()
            elif self._waiting:
                n = len(delta)
                if not delta.isascii():
                    n = utf8_size(delta)
                    self._extra += n - len(delta)
                if n <= self._room:
                    self._room -= n
                    self._chunks.append(delta)
                    asleep = self._asleep
                    if asleep is not None and not asleep(delta):
                        return self._pending()  # a character that may decide
                    if self._wake_search(delta) is None:
                        return _EMPTY
                    if self._wake_short or self._woken(delta):
                        return self._pending()
                    return _EMPTY
        return self._slow_feed(delta)

    def _settle(self) -> None:
        """Book the bytes and characters the fast paths took."""
        used = self._room_base - self._room
        if used:
            self._size += used
            self._seen += used - self._extra
            self._extra = 0
            self._room_base = self._room

    def _release(self) -> list:
        """Deliver the prose the fast path took (it holds no trigger; it is not scanned)."""
        text = ''.join(self._held)
        self._held.clear()
        if self._word:
            text = self._word + text
            self._word = ''
        self._release_at = self._room - self.lag_chars
        return self._prose(text)

    def _prose(self, delta: str) -> list:
        """
        Take a delta that holds no key character while nothing is held back.

        Only a trailing word can still become a trigger (``say(``, ``functools[``): it is held
        back (``_word``, still on the fast path) when it is a prefix of one and starts a word.
        The rest is prose under the content whitespace rule (``core.Content``), inlined here
        because this runs per token.
        """
        if self._words:
            body = delta.rstrip(_ASCII_NAME)
            if len(body) != len(delta) and delta[len(body):] in self._words:
                if body or not self._prev or not (self._prev.isalnum() or self._prev in '_.'):
                    self._word = delta[len(body):]
                    if not body:
                        return _EMPTY
                    delta = body
        self._prev = delta[-1]
        self._base += len(delta)
        content = self._content
        if content.after:
            delta = delta.lstrip()
            if not delta:
                return _EMPTY
            content.after = False
        pending = content.pending
        if pending:
            delta = pending + delta
        if delta[-1] in _SPACE:
            body = delta.rstrip()
            content.pending = delta[len(body):]
            if not body:
                return _EMPTY
            delta = body
        elif pending:
            content.pending = ''
        event = _new_event(ContentEvent)
        _set_text(event, delta)
        return [event]

    def _woken(self, delta: str) -> bool:
        """
        Whether a wake string ends in ``delta`` (it may begin in the text before it).

        A wake string that ended before ``delta`` was in the text of the last scan, whose
        answer did not depend on it arriving again: only one that ends in ``delta`` counts
        (rescanning for an old one only cost time, per delta while it stayed in view).
        """
        wake = self._wake
        if wake is None:
            raise ValueError('_woken: the parser is not waiting for wake strings')
        reach = _reach(wake)
        before = self._recent(reach)
        window = before + delta
        cut = len(before)
        for needle in wake:
            if window.find(needle, max(0, cut - len(needle) + 1)) != -1:
                return True
        return False

    def _recent(self, count: int) -> str:
        """Return the last ``count`` characters before the newest chunk."""
        if count <= 0:
            return ''  # (text[-0:] would be all of it)
        parts = []
        have = 0
        chunks = self._chunks
        for index in range(len(chunks) - 2, -1, -1):
            parts.append(chunks[index])
            have += len(chunks[index])
            if have >= count:
                break
        else:
            parts.append(self._buf[-(count - have):] if count > have else '')
        return ''.join(reversed(parts))[-count:]

    def _rescan(self) -> list:
        self._settle()
        return self._rescan_buffer()

    def _rescan_buffer(self) -> list:
        # Grow the buffer in place (CPython appends to a str that has no other reference), so
        # a long pending call costs O(delta) per wake-up, not a copy of the whole call.
        text = self._buf
        self._buf = ''
        text += ''.join(self._chunks) if len(self._chunks) > 1 else self._chunks[0]
        self._chunks = []
        return self._scan(text, False)

    def _slow_feed(self, delta: str) -> list:
        if self._finished:
            raise RuntimeError('StreamingParser.feed() called after finish()')
        if not isinstance(delta, str):
            raise TypeError(f'feed() needs a str, got {type(delta).__name__}')
        if not delta or self._failed:
            return []
        self._settle()
        try:
            first = self._release() if self._held else _EMPTY  # prose before the delta
            word = self._word
            if word:  # fed again with the delta (it is ASCII: one byte a character)
                self._word = ''
                self._size -= len(word)
                self._seen -= len(word)
                delta = word + delta
            events = self._feed(delta)
            if not first:
                return events
            if events and type(events[0]) is ContentEvent:  # one event for adjacent prose
                return [ContentEvent(first[0].text + events[0].text)] + events[1:]
            return first + events
        except Exception as exc:  # noqa: B902 - model text must never take the caller down
            return self._fail(exc)

    def _guarded(self, step, *args) -> list:
        """Run one parsing step; a parser bug becomes one issue, never an exception."""
        try:
            return step(*args)
        except Exception as exc:  # noqa: B902 - model text must never take the caller down
            return self._fail(exc)

    def finish(self) -> list:
        """End of the generation: resolve everything held back (truncated calls included)."""
        if self._failed:
            self._finished = True
            return []
        self._settle()
        self._idle = self._waiting = False
        if self._stream_args:
            return self._track(self._guarded(self._finish))
        return self._guarded(self._finish)

    def _track(self, events: list) -> list:
        """Add the events of a streamed call (``stream_arguments``) to what a step returned."""
        opened = self._open
        if opened is not None:
            start = opened[0]
            for event in events:
                kind = type(event)
                if (kind is CallEvent and event.call.span[0] == start) or (
                        kind is IssueEvent and event.issue.span[0] == start):
                    self._open = opened = None
                    break
            if opened is not None and (self._finished or self._failed or self._overflow
                                       or self._base > start):
                # its markup was decided without an event naming it (a parser failure)
                self._open = None
                self._settle()
                return events + [IssueEvent(ParseIssue(
                    INVALID_CALL, f'the {opened[3]} call {opened[1]!r} that began at char '
                    f'{start} could not be read to its end (the parser stopped)',
                    (start, self._seen), opened[3], opened[1]))]
        if (self._finished or self._failed or self._overflow or self._reasoning is not None
                or (opened is not None and opened[5])):  # (closed: its text is all out)
            return events
        chunks = self._chunks
        if chunks:  # join the pending text once, in place (the scanner reads it the same)
            text = self._buf
            self._buf = ''
            text += ''.join(chunks) if len(chunks) > 1 else chunks[0]
            self._chunks = []
            self._buf = text
        text = self._buf
        if not text:
            return events
        try:
            if opened is None or opened[4] is None:  # the call's header: what the family reads
                if len(text) < self._header_retry and self._header_base == self._base:
                    return events  # read again once the text has grown by a share of it
                self._header_base = self._base
                self._header_retry = len(text) + (len(text) >> 3 if len(text) >= 256 else 1)
                found = None
                fmt = ''
                for fmt, partial in self._plan.partials:
                    found = partial(text, self._plan.view)
                    if found is not None:
                        break
                if found is None:
                    return events
                name, reader = found
                if opened is None:
                    argument = self._plan.view.streamable.get(name)
                    if not argument:
                        return events
                    opened = self._open = [self._base, name, argument, fmt, None, False]
                    events = events + [CallStartEvent(self._base, name, argument, fmt)]
                elif opened[1] != name:
                    return events
                if reader is None:
                    return events
                opened[4] = reader
            piece, closed = opened[4].advance(text)  # the value: only what is new
        except Exception as exc:  # noqa: B902 - model text must never take the caller down
            return events + self._fail(exc)
        if piece or closed:
            opened[5] = closed
            events = events + [ArgumentEvent(opened[0], piece, closed)]
        return events

    def _fail(self, exc: Exception) -> list:
        """Report a parser failure once; the rest of the generation is ignored."""
        self._failed = True
        self._idle = self._waiting = False
        return [IssueEvent(internal_error_issue(exc, self._seen))]

    def _feed(self, delta: str) -> list:
        self._seen += len(delta)
        if self._overflow:
            return []
        self._size += utf8_size(delta)
        if self._size > self._limit:
            return self._overflowed()
        if self._wake is not None:
            self._chunks.append(delta)
            asleep = self._asleep
            if (asleep is None or asleep(delta)) and not self._woken(delta):
                return []
            return self._rescan_buffer()
        if self._buf:
            text = self._buf
            self._buf = ''
            text += delta
            if self._partial and text in self._plan.prefix_set:
                self._buf = text  # still only the start of a trigger (<|tool_ca...)
                return []
            return self._scan(text, False)
        return self._scan(delta, False)

    def _finish(self) -> list:
        if self._finished:
            return []
        self._finished = True
        if self._overflow:
            return []
        events = list(self._release()) if self._held else []
        text = self._word + self._buf + ''.join(self._chunks)
        self._word = ''
        self._chunks = []
        if text:
            events += self._scan(text, True)
        tail = self._content.finish()
        if tail:
            events.append(ContentEvent(tail))
        return events

    def _pending(self) -> list:
        """
        Rescan a pending call that a delta may have decided (the waiting fast path).

        Most such rescans end where they began: the call is still pending at the start of the
        buffer, so there is nothing to deliver and only the buffer and the wake strings change.
        That case returns at once; any other result goes through the common delivery.
        """
        try:
            used = self._room_base - self._room  # book the bytes the fast path took
            if used:
                self._size += used
                self._seen += used - self._extra
                self._extra = 0
                self._room_base = self._room
            text = self._buf
            self._buf = ''
            chunks = self._chunks
            text += ''.join(chunks) if len(chunks) > 1 else chunks[0]
            self._chunks = []
            ctx = Ctx(self._plan, False, self._base, self._prev, self._memo, self._reasoning,
                      self._report)
            pieces, stop, need = scan(text, ctx)
            if stop or need is None or need.wake is None:
                return self._deliver(text, False, ctx, pieces, stop, need)
            self._buf = text  # still pending where it was: nothing is final yet
            self._reasoning = ctx.reasoning
            if need is not self._need:
                self._await(need)
            return _EMPTY
        except Exception as exc:  # noqa: B902 - model text must never take the caller down
            return self._fail(exc)

    def _await(self, need: NeedMore) -> None:
        """Wait for ``need``'s wake strings (and quiet characters) on the waiting fast path."""
        wake = need.wake
        if wake is None:
            raise ValueError('_await: this NeedMore waits for any text, not for wake strings')
        self._need = need
        self._wake = wake
        self._wake_search = _wake_search(wake)
        self._wake_short = _reach(wake) == 0  # every wake string is one character
        self._asleep = _quiet_check(need.quiet) if need.quiet else None

    def _scan(self, text: str, final: bool) -> list:
        ctx = Ctx(self._plan, final, self._base, self._prev, self._memo, self._reasoning,
                  self._report)
        pieces, stop, need = scan(text, ctx)
        return self._deliver(text, final, ctx, pieces, stop, need)

    def _deliver(self, text: str, final: bool, ctx: Ctx, pieces: list, stop: int,
                 need: NeedMore | None) -> list:
        """Turn a scan's pieces into events and keep the undecided rest for the next delta."""
        self._reasoning = ctx.reasoning
        wake = need.wake if need is not None else None
        events: list = []
        event: ContentEvent | CallEvent | IssueEvent
        content = self._content
        for piece in pieces:
            if type(piece) is not Match:
                kept = content.prose(piece)
                if kept:
                    event = _new_event(ContentEvent)
                    _set_text(event, kept)
                    events.append(event)
                continue
            if piece.content:
                kept = content.prose(piece.content)
                if kept:
                    event = _new_event(ContentEvent)
                    _set_text(event, kept)
                    events.append(event)
            if not piece.keep:
                content.markup()
            for item in piece.items:
                if type(item) is ParsedCall:
                    event = _new_event(CallEvent)
                    _set_call(event, item)
                else:
                    event = _new_event(IssueEvent)
                    _set_issue(event, item)
                events.append(event)
        if stop:
            self._prev = text[stop - 1]
            self._base += stop
            text = text[stop:]
            if self._memo:  # values that start before the new buffer are decided
                for key in [key for key in self._memo if key[0] < self._base]:
                    del self._memo[key]
        self._buf = text
        self._partial = need is None and not final  # text: a held start of a trigger
        self._wake = wake
        self._waiting = wake is not None and not final
        if self._waiting and need is not None:  # (need is None only without wake strings)
            self._await(need)
        else:
            self._need = None
        self._idle = not text and not final and self._key_search is not None
        self._room = self._room_base = self._limit - self._size
        self._release_at = self._room - self.lag_chars
        return events

    def _overflowed(self) -> list:
        self._overflow = True
        self._idle = self._waiting = False
        self._buf = ''
        self._chunks = []
        return [IssueEvent(too_large_issue(self._size, self._limit, self._base, self._seen))]


class _ArgumentStreamingParser(StreamingParser):
    """A StreamingParser with ``stream_arguments``: each delta's events also go to ``_track``."""

    __slots__ = ()

    def feed(self, delta: str) -> list:
        """Add text; return the events it made final, a streamed call's among them."""
        return self._track(StreamingParser.feed(self, delta))
