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
Streamed speech: what the core decides about a call whose text is spoken while it streams.

A call of a tool with a streamable argument (say) starts while its markup still arrives,
once the first segment of its text is whole (dispatch.segments), or its argument's value
is closed (the parser saw its closing quote or tag) with the whole text as its first
segment (`"On it"` in a JSON call whose markup goes on after the value), and every gate
that does not need the rest passes: not paused, allowed, approval `auto` (a `confirm`
call never starts early), its tool idle (serialize_per_tool), max_pending, and a
rate-limit token.
Repeats: when the first segment, normalised as for repeats, begins a call of the tool
still running or done within repeat_window_s, the call does not start early; it is decided
complete, like any call (`duplicate` when it is identical). Otherwise the executor gets
`Send`, then `SendText` with whole segments as they arrive, all the rest once the
argument is closed (the end of the value is a segment boundary: its last words need not
wait for the call's closing markup), and `end` (with what is left, usually nothing) once
the complete call is valid. A call that does not start early runs (or is refused) once
complete, exactly as with stream_speech off. A started call whose complete markup is
malformed or invalid, or whose complete text does not continue what was handed out, is
stopped on its executor; it, and one cancelled, paused or timed out, gets its one result
saying how much text had been handed to speech. Its announcement (calls topic, audit
`call`) and chat entry carry the final text (the text so far when it stopped first).

The functions below are the decisions that need only the call and its `Speech`;
`SpeechSteps` takes a streamed call's text and its complete markup, as `dispatch.streams`
reads them, and asks the core (`SpeechHost`: `DispatchCore`) to run the gates, send and stop.
"""

import json
from typing import Any, Protocol

from .calls import (arguments_text, Call, DispatchSettings, ORIGIN_STREAM, POLICY_SOURCE, Speech,
                    Stream, ToolState)
from .records import error_code_for_issue
from .repeats import normalise_text, RecentCalls, repeat_key
from .segments import split_segments
from .. import errors
from ..catalog import ToolArgumentError, ToolCatalog
from ..parsing import IssueEvent


def first_segment(speech: Speech) -> str:
    """Return the first whole segment of the text so far ('' while there is none)."""
    pieces = split_segments(speech.received)[0]
    if not pieces and speech.closed and speech.received:
        return speech.received  # closed before a boundary: all of it is a segment
    return pieces[0] if pieces else ''


def text_to_hand(speech: Speech) -> str | None:
    """
    Take the text of a started call not handed to its executor yet, or None: nothing to send.

    Whole segments while the value is open, all of it once closed; once the complete call is
    valid (`complete`) the rest goes with the end (`speech.ended`), even when it is ''.
    """
    rest = speech.received[len(speech.handed):]
    if speech.complete:
        speech.ended = True
    else:
        if not speech.closed:  # only whole segments until the value's end is known
            rest = ''.join(split_segments(rest)[0])
        if not rest:
            return None
    speech.handed += rest
    speech.segments += bool(rest)
    return rest


def not_sent(speech: Speech) -> None:
    """Forget what was handed out: the call's executor was missing, none of it arrived."""
    speech.handed = ''
    speech.segments = 0
    speech.ended = False


def repeats_recent(speech: Speech, first: str, recent: dict[tuple, tuple[str, Any]],
                   window: float, now: float) -> bool:
    """Whether `first` begins the text of a call of the tool running or done within `window`."""
    if window <= 0:
        return False
    head = normalise_text(first)
    for key, (_, ended) in recent.items():
        if ended is not None and now - ended >= window:
            continue
        try:
            text = json.loads(key[1]).get(speech.argument)
        except (ValueError, AttributeError):
            continue
        if isinstance(text, str) and text.startswith(head):
            return True
    return False


def announced_arguments(call: Call) -> None:
    """Give a call announced before it was complete the text it had then (and its chat entry)."""
    speech = call.speech
    speech.announced = True
    if speech.complete:
        return
    call.arguments = {speech.argument: speech.received}
    call.arguments_json = json.dumps(call.arguments)
    chat = call.stream.chat_calls if call.stream is not None else []
    if 0 <= speech.chat_index < len(chat) and chat[speech.chat_index][0] == call.call_id:
        chat[speech.chat_index] = (call.call_id, call.name, call.arguments)


def spoken(speech: Speech) -> str:
    """Say how much of a streamed call's text went to speech before it stopped."""
    if not speech.handed:
        return 'none of its text had been handed to speech'
    return (f'{len(speech.handed)} characters of its text had been handed to speech in '
            f'{speech.segments} segment(s): {shown(speech.handed)}')


def shown(text: str, limit: int = 64) -> str:
    """Return ``repr(text)`` cut to about ``limit`` characters (a caller's field in a message)."""
    return repr(text) if len(text) <= limit else f'{text[:limit]!r}... ({len(text)} characters)'


class SpeechHost(Protocol):
    """What streamed speech asks of the call lifecycle (`DispatchCore` provides it)."""

    catalog: ToolCatalog
    settings: DispatchSettings
    enabled: bool
    recent: RecentCalls

    @property
    def calls_without_result(self) -> int: ...  # noqa: D102, E704

    def busy(self, name: str) -> bool: ...  # noqa: D102, E704

    def new_id(self, kind: str) -> str: ...  # noqa: D102, E704

    def tool_state(self, name: str, now: float) -> ToolState: ...  # noqa: D102, E704

    def send_early(self, call: Call, tool: ToolState, now: float) -> None: ...  # noqa: D102, E704

    def is_live(self, call: Call) -> bool: ...  # noqa: D102, E704

    def hand(self, call: Call) -> None: ...  # noqa: D102, E704

    def announce(self, call: Call) -> None: ...  # noqa: D102, E704

    def stop_speech(self, call: Call, code: str, message: str,  # noqa: D102, E704
                    now: float) -> None: ...


def may_start_early(host: SpeechHost, speech: Speech, first: str,
                    now: float) -> ToolState | None:
    """
    Return the tool's state if a streamed call may start at its first segment, else None.

    Only the gates that need no more of its text: not paused, in the catalog and allowed,
    approval `auto`, room in max_pending, its tool idle, no repeat, a rate-limit token (taken).
    """
    name, allowed = speech.name, host.settings.allowed_tools
    if not host.enabled or name not in host.catalog or (allowed and name not in allowed):
        return None
    tool = host.tool_state(name, now)
    if tool.settings.approval != 'auto' or host.busy(name) \
            or host.calls_without_result >= host.settings.max_pending:
        return None
    if repeats_recent(speech, first, host.recent.of(name), tool.settings.repeat_window_s, now) \
            or not tool.bucket.try_acquire(now):
        return None
    return tool


class SpeechSteps:
    """A streamed call's steps: start at its first segment, hand on its text, end or stop it."""

    def __init__(self, host: SpeechHost) -> None:
        self._host = host

    def text(self, generation_id: str, stream: Stream, speech: Speech, text: str,
             closed: bool, now: float) -> None:
        """Take more text of a streamed call: start it at its first whole segment, or hand it."""
        speech.received += text
        speech.closed = speech.closed or closed
        if speech.fallback:
            return
        if speech.call is None:
            first = first_segment(speech)
            if not first:
                return
            if not self._starts(generation_id, stream, speech, first, now):
                speech.fallback = True
                return
        self._host.hand(speech.call)

    def _starts(self, generation_id: str, stream: Stream, speech: Speech, first: str,
                now: float) -> bool:
        """Start a streamed call early if its gates pass without the rest of its text."""
        host = self._host
        tool = may_start_early(host, speech, first, now)
        if tool is None:
            return False
        call = Call(host.new_id('call_'), generation_id, speech.name, {speech.argument: ''}, '',
                    speech.format, POLICY_SOURCE, now, stream=stream, origin=ORIGIN_STREAM,
                    speech=speech)
        call.arguments_json = json.dumps(call.arguments)
        speech.call = call
        speech.chat_index = len(stream.chat_calls)
        stream.chat_calls.append((call.call_id, speech.name, call.arguments))
        host.send_early(call, tool, now)
        return True

    def end(self, stream: Stream, speech: Speech, event: Any, now: float) -> None:
        """Take the complete markup (a call or an issue) of a streamed call that started."""
        host = self._host
        call = speech.call
        live = host.is_live(call)
        if isinstance(event, IssueEvent):
            if live:
                host.stop_speech(call, error_code_for_issue(event.issue.code),
                                 f'the rest of the call was malformed: {event.issue.message}',
                                 now)
            speech.complete = True
            return
        parsed = event.call
        if parsed.name != call.name:  # (a later JSON member replaced the name it streamed)
            if live:  # announced (and in the chat) as the call whose text was spoken
                host.stop_speech(call, errors.INVALID_ARGUMENTS, (
                    f'the complete call names {shown(parsed.name)}, not the '
                    f'{shown(call.name)} whose text was streamed; it was not run'), now)
            speech.complete = True
            return
        try:
            arguments = host.catalog.validate(call.name, parsed.arguments)
        except Exception as exc:  # noqa: B902 - one bad call must not stop the dispatcher
            self._invalid(stream, speech, parsed.arguments, exc, live, now)
            return
        stream.chat_calls[speech.chat_index] = (call.call_id, call.name, arguments)
        speech.complete = True
        call.arguments = arguments
        call.arguments_json = json.dumps(arguments)
        if live:  # (stopped before its end: its result is out)
            self._complete(call, speech, arguments, now)

    def _complete(self, call: Call, speech: Speech, arguments: dict, now: float) -> None:
        """Hand on the rest of a live call's text, if it continues what was handed."""
        host = self._host
        final = arguments.get(speech.argument)
        if not isinstance(final, str) or not final.startswith(speech.handed):
            host.stop_speech(call, errors.INVALID_ARGUMENTS, (
                f"the complete call's {speech.argument!r} does not continue the text that was "
                'streamed (a later duplicate JSON member replaced it; otherwise a parser bug: '
                'please report it with the text)'), now)
            return
        speech.received = final
        host.announce(call)
        tool = host.tool_state(call.name, now)
        if tool.settings.repeat_window_s > 0:
            call.repeat_key = repeat_key(call.name, arguments, tool.free_text)
            host.recent.running(call)
        host.hand(call)

    def _invalid(self, stream: Stream, speech: Speech, arguments: Any, exc: Exception,
                 live: bool, now: float) -> None:
        """Stop a started streamed call whose complete arguments are invalid."""
        call = speech.call
        speech.complete = True  # announced with the arguments it ended with
        stream.chat_calls[speech.chat_index] = (call.call_id, call.name, arguments)
        if live:
            code, message = (exc.error_code, exc.message) if isinstance(
                exc, ToolArgumentError) else (errors.INVALID_ARGUMENTS, (
                    f'arguments could not be checked ({type(exc).__name__})'))
            call.arguments = arguments
            call.arguments_json = arguments_text(arguments)
            self._host.stop_speech(call, code, f'the complete call is invalid: {message}', now)
