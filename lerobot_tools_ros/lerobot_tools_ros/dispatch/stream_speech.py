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

These are the decisions that need only the call and its `Speech`; the core
(`DispatchCore`) runs the gates, sends and stops, using them.
"""

import json
from typing import Any

from .calls import Call, Speech
from .repeats import normalise_text
from .segments import split_segments


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
