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
Streamed generations: chunks taken in order and within bounds, parsed into calls as they close.

A policy streams a generation as `TextChunk`s (`DispatchCore.chunk`). Each open generation has a
`Stream`: its incremental parser, its content and the chat entries of its calls. A call whose
markup closes is handed to the core to be admitted like a call of a complete generation; a call
of a streamable argument (say) may start before it closes (`dispatch.stream_speech`). A stream
ends at its final chunk, or early: when it goes idle (stream_idle_timeout_s), when too many are
open or they hold too much (max_open_streams, max_stream_bytes, least recently fed first), when
its numbered chunks lose their order, or when the node reports chunks lost. A generation ended
early stays ended: its later chunks are refused (counted, a log line per 10 s) until its final
chunk, or a chunk numbered 1 that starts a new one.
"""

from collections import OrderedDict
import math
from typing import Any, Iterable, Protocol

from . import effects as fx
from .call_ids import RECENT_IDS
from .calls import Call, DispatchSettings, ORIGIN_STREAM, POLICY_SOURCE, Speech, Stream
from .records import assistant_message
from .stream_speech import SpeechHost, SpeechSteps
from .. import errors
from ..parsing import ArgumentEvent, CallEvent, CallStartEvent, ContentEvent, IssueEvent
from ..parsing import StreamingParser

_LOG_EVERY_S = 10.0  # one warning line per this many seconds, not one per chunk or stream


class CallHost(SpeechHost, Protocol):
    """What a stream asks of the call lifecycle (`DispatchCore` provides it)."""

    settings: DispatchSettings

    def emit(self, effect: Any) -> None: ...  # noqa: D102, E704

    def admit(self, call: Call, arguments: Any, now: float) -> None: ...  # noqa: D102, E704

    def refuse(self, call: Call, code: str, message: str,  # noqa: D102, E704
               now: float) -> None: ...

    def refuse_issue(self, call_id: str, generation_id: str, issue: Any,  # noqa: D102, E704
                     now: float, stream: Stream | None = None) -> None: ...

    def wake_for_stream(self, due: float, key: str) -> None: ...  # noqa: D102, E704


class Streams:
    """The open streamed generations (least recently fed first) and what ended them early."""

    def __init__(self, host: CallHost) -> None:
        self._host = host
        self._speech = SpeechSteps(host)
        self._open: dict[str, Stream] = {}
        self._held = 0  # characters the open streams hold
        self._closed: OrderedDict = OrderedDict()  # ended early: later chunks refused
        self.evicted = 0  # streams finished early by max_open_streams / max_stream_bytes
        self.chunks_refused = 0  # chunks of a stream that had been ended early
        self.chunks_lost = 0  # numbered chunks that never came (gaps in TextChunk.index)
        self._evictions_logged_at = -math.inf
        self._refusals_logged_at = -math.inf

    @property
    def open_count(self) -> int:
        """Count the open streams."""
        return len(self._open)

    @property
    def held(self) -> int:
        """Count the characters the open streams hold."""
        return self._held

    def is_open(self, key: str) -> bool:
        """Whether a generation is open under `key` (its idle timer is still needed)."""
        return key in self._open

    def chunk(self, key: str, text: str, final: bool, now: float, index: int) -> None:
        """Take one delta of the generation held under `key` (see `DispatchCore.chunk`)."""
        stream = self._open.pop(key, None)
        if stream is None and key in self._closed:
            if index != 1:
                self.chunks_refused += 1
                if final:
                    del self._closed[key]  # its generation is over: the id is free
                self._log_refused(key, now)
                return
            del self._closed[key]  # a new generation reuses the id
        if index and index != (stream.next_index if stream is not None else 1):
            if stream is not None:
                self._open[key] = stream
            self._out_of_sequence(key, stream, index, final, now)
            return
        if stream is None:
            settings = self._host.settings
            stream = Stream(StreamingParser(self._host.catalog, settings.formats,
                                            max_input_bytes=settings.max_input_bytes,
                                            stream_arguments=settings.stream_speech), now)
            self._host.wake_for_stream(now + settings.stream_idle_timeout_s, key)
        self._open[key] = stream  # now the most recently fed
        if index:
            stream.next_index = index + 1
        stream.last_chunk = now
        stream.size += len(text)
        self._held += len(text)
        self._events(key, stream, stream.parser.feed(text), now)
        if final:
            self._finish(key, now)
        self._bound(now)

    def abandon(self, key: str, message: str, now: float, only_open: bool) -> None:
        """
        End a generation that lost chunks with one `busy` result instead of parsing the rest.

        Calls it completed before were admitted as usual; what it held unfinished is dropped.
        Without an open stream there is a result only when `only_open` is False.
        """
        stream = self._open.pop(key, None)
        if stream is None and only_open:
            return
        host = self._host
        if stream is not None:  # calls speaking while the stream broke stop with it
            for speech in stream.speech.values():
                if speech.call is not None and host.is_live(speech.call):
                    host.stop_speech(speech.call, errors.BUSY,
                                     f'its generation broke off: {message}', now)
            stream.speech.clear()
        self._close_early(key)
        call_id = host.new_id('call_')
        call = Call(call_id, key, '', {}, '', '', POLICY_SOURCE, now, stream=stream,
                    origin=ORIGIN_STREAM)
        if stream is None:
            host.emit(fx.PublishChat(assistant_message('', [(call_id, '', {})])))
            host.refuse(call, errors.BUSY, message, now)
            return
        self._held -= stream.size
        stream.chat_calls.append((call_id, '', {}))
        host.refuse(call, errors.BUSY, message, now)
        self._close(stream)

    def idle_check(self, key: str, now: float) -> None:
        """Finish a stream that got no chunk for stream_idle_timeout_s (its timer is due)."""
        stream = self._open.get(key)
        if stream is None:
            return
        idle = self._host.settings.stream_idle_timeout_s
        if now - stream.last_chunk < idle:
            self._host.wake_for_stream(stream.last_chunk + idle, key)
            return
        stream.finish_note = (
            f'the stream got no chunk for {idle:g} s and no chunk with final set; the policy '
            'side must end each generation with final: true')
        self._host.emit(fx.Log('warning', f"stream '{key}': {stream.finish_note}"))
        self._finish(key, now)

    def settings_changed(self) -> None:
        """Re-arm every open stream's idle timer (stream_idle_timeout_s may have changed)."""
        for key, stream in self._open.items():
            self._host.wake_for_stream(
                stream.last_chunk + self._host.settings.stream_idle_timeout_s, key)

    def shutdown(self, now: float) -> None:
        """Finish every open stream: the dispatcher is going away."""
        for key, stream in list(self._open.items()):
            stream.finish_note = 'the dispatcher shut down before the stream ended'
            self._finish(key, now)

    def _out_of_sequence(self, key: str, stream: Stream | None, index: int, final: bool,
                         now: float) -> None:
        """End a numbered generation whose chunk `index` is not the one expected next."""
        expected = stream.next_index if stream is not None else 1
        if index > expected:
            self.chunks_lost += index - expected
            what = (f'chunk(s) {expected}..{index - 1} never arrived (chunk {index} came next)'
                    if index - 1 > expected else f'chunk {expected} never arrived (chunk '
                    f'{index} came next)')
        else:
            what = (f'chunk {index} arrived after chunk {expected - 1} (repeated or out of '
                    'order)')
        message = (f'generation {key!r} lost its order: {what}. It was ended here and its '
                   'later chunks are refused: calls it had completed before ran, anything '
                   'after did not. Send it again with each chunk once, in order')
        self.abandon(key, message, now, only_open=False)
        if final:
            self._closed.pop(key, None)

    def _log_refused(self, key: str, now: float) -> None:
        if now - self._refusals_logged_at >= _LOG_EVERY_S:
            self._refusals_logged_at = now
            self._host.emit(fx.Log('warning', (
                f'refused a chunk of stream {key!r}, which the dispatcher had already ended '
                f'({self.chunks_refused} refused so far): the rest of a generation ended early '
                'is not parsed as a new one. Start a new generation with a new generation_id '
                '(or number its chunks from 1)')))

    def _close_early(self, key: str) -> None:
        """Remember a generation ended before its final chunk: its later chunks are refused."""
        closed = self._closed
        closed[key] = None
        closed.move_to_end(key)
        while len(closed) > RECENT_IDS:
            closed.popitem(last=False)

    def _bound(self, now: float) -> None:
        """Finish the least recently fed streams while too many are open or they hold too much."""
        settings = self._host.settings
        while self._open and (len(self._open) > settings.max_open_streams
                              or self._held > settings.max_stream_bytes):
            key, stream = next(iter(self._open.items()))
            stream.finish_note = (
                f'finished before its final chunk: {len(self._open)} streams were open '
                f'holding {self._held} characters (max_open_streams '
                f'{settings.max_open_streams}, max_stream_bytes {settings.max_stream_bytes})')
            self.evicted += 1
            if now - self._evictions_logged_at >= _LOG_EVERY_S:
                self._evictions_logged_at = now
                self._host.emit(fx.Log('warning', (
                    f"stream '{key}' {stream.finish_note}; {self.evicted} stream(s) finished "
                    'early so far; end each generation with final: true')))
            self._finish(key, now)

    def _events(self, key: str, stream: Stream, events: Iterable, now: float) -> None:
        """Take what the parser found: content, calls (started, growing, complete), issues."""
        for event in events:
            if isinstance(event, ContentEvent):
                stream.content.append(event.text)
            elif isinstance(event, CallStartEvent):
                stream.speech[event.start] = Speech(event.start, event.name, event.argument,
                                                    event.format)
            elif isinstance(event, ArgumentEvent):
                speech = stream.speech.get(event.start)
                if speech is not None:
                    self._speech.text(key, stream, speech, event.text, event.closed, now)
            else:
                self._complete(key, stream, event, now)

    def _complete(self, key: str, stream: Stream, event: Any, now: float) -> None:
        """Take a call's complete markup (a call, or an issue the parser could not recover)."""
        speech = None
        if stream.speech:
            start = (event.call if isinstance(event, CallEvent) else event.issue).span[0]
            speech = stream.speech.pop(start, None)
        if speech is not None and speech.call is not None:
            self._speech.end(stream, speech, event, now)
            return
        host = self._host
        call_id = host.new_id('call_')
        if isinstance(event, CallEvent):
            parsed = event.call
            call = Call(call_id, key, parsed.name, parsed.arguments, '', parsed.format,
                        POLICY_SOURCE, now, stream=stream, origin=ORIGIN_STREAM)
            stream.chat_calls.append((call_id, parsed.name, parsed.arguments))
            host.admit(call, parsed.arguments, now)
            stream.chat_calls[-1] = (call_id, parsed.name, call.arguments)
        elif isinstance(event, IssueEvent):
            stream.chat_calls.append((call_id, event.issue.name, {}))
            host.refuse_issue(call_id, key, event.issue, now, stream)

    def _finish(self, key: str, now: float) -> None:
        stream = self._open.pop(key, None)
        if stream is None:
            return
        if stream.finish_note:  # ended before its final chunk: the rest must not be parsed
            self._close_early(key)
        self._held -= stream.size
        self._events(key, stream, stream.parser.finish(), now)
        self._close(stream)

    def _close(self, stream: Stream) -> None:
        # The assistant message lists every call of the stream; tool messages held so far
        # follow it, and later results of this stream go out directly (stream.closed).
        host = self._host
        host.emit(fx.PublishChat(assistant_message(''.join(stream.content), stream.chat_calls)))
        stream.closed = True
        for message in stream.held_tool_messages:
            host.emit(fx.PublishChat(message))
        stream.held_tool_messages.clear()
        stream.chat_calls = []
