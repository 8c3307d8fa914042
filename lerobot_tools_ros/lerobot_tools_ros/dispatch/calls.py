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
The values the dispatch core keeps about calls, streams and tools, and the settings it reads.

Kept apart from the core (`dispatch.core`) so that effects (`dispatch.effects`), streaming
speech (`dispatch.stream_speech`) and the state table (`dispatch.states`) can name a `Call`
without importing the core.
"""

from dataclasses import dataclass, field
import json
import math
from typing import Any

from .records import TokenBucket
from .states import CallState
from ..limits import MAX_ARGUMENT_BYTES
from ..parameters.declarations import DISPATCHER
from ..parsing import StreamingParser

POLICY_SOURCE = 'policy'
# How the dispatcher received a call (what it knows, unlike `source`, which a ~/call caller
# claims): the values of ToolCall.ORIGIN_*.
ORIGIN_TEXT, ORIGIN_STREAM, ORIGIN_CALL = 'policy_text', 'policy_stream', 'call_service'
POLICY_ORIGINS = (ORIGIN_TEXT, ORIGIN_STREAM)


def arguments_text(arguments: Any) -> str:
    """Return arguments as JSON text for a refused call's announcement, whatever they are."""
    try:
        text = json.dumps(arguments, default=str)
    except (ValueError, TypeError, RecursionError):
        return '{}'
    return text if len(text) <= MAX_ARGUMENT_BYTES else text[:256] + '...'


def stream_key(generation_id: str) -> str:
    """Return the key a streamed generation is held under (chunks without an id share one)."""
    return generation_id or 'stream'


@dataclass(frozen=True, slots=True)
class ToolSettings:
    """Per-tool settings (parameters tool.<name>.<setting>, else the global values)."""

    timeout_s: float = DISPATCHER['timeout_s'].default
    rate_limit_hz: float = DISPATCHER['rate_limit_hz'].default
    burst: int = DISPATCHER['burst'].default
    repeat_window_s: float = 0.0
    approval: str = 'auto'
    when_busy: str = 'queue'  # a call while one runs: queue, replace or refuse


@dataclass(slots=True)
class DispatchSettings:
    """Settings that apply to every tool; the node updates them when parameters change."""

    # Defaults: the dispatcher's parameter declarations (parameters.declarations).
    formats: list = field(default_factory=lambda: list(DISPATCHER['formats'].default))
    allowed_tools: list = field(default_factory=list)  # []: every tool (the parameter's ['*'])
    max_pending: int = DISPATCHER['max_pending'].default
    serialize_per_tool: bool = DISPATCHER['serialize_per_tool'].default
    max_input_bytes: int = DISPATCHER['max_input_bytes'].default
    stream_idle_timeout_s: float = DISPATCHER['stream_idle_timeout_s'].default
    max_open_streams: int = DISPATCHER['max_open_streams'].default
    max_stream_bytes: int = DISPATCHER['max_stream_bytes'].default
    stream_speech: bool = DISPATCHER['stream_speech'].default
    cancel_timeout_s: float = DISPATCHER['cancel_timeout_s'].default
    executor_poll_s: float = 0.05  # how often a call waiting for its executor is re-checked


@dataclass(slots=True, eq=False)
class Call:
    """One tool call. `handle` belongs to the node (its future or goal handle for the call)."""

    call_id: str
    generation_id: str
    name: str
    arguments: dict
    arguments_json: str
    format: str  # noqa: A003 - the field name of ToolCall.msg
    source: str
    accepted_at: float
    deadline: float = math.inf
    timeout_s: float = 0.0
    state: CallState = CallState.NEW
    stream: Any = None  # the Stream a streamed call came from (its chat messages wait)
    repeat_key: tuple | None = None
    handle: Any = None
    origin: str = ORIGIN_TEXT  # how the dispatcher received it (ORIGIN_*)
    approved: bool = False  # an operator approved it (approval: confirm is not asked again)
    speech: Any = None  # Speech: a call started before its text was complete (stream_speech)
    stop: Any = None  # outcomes.Stop: it is being stopped on its executor (state CANCELLING)


@dataclass(slots=True, eq=False)
class Speech:
    """
    A call of a tool with a streamable argument, seen while its markup still arrives.

    `received`: the argument's text so far; `handed`: what went to the executor (whole
    segments, then all of it once `closed`); `closed`: the parser saw the argument's value
    end (its closing quote or tag), so `received` is all of it. `call` is None until the first
    segment (or the whole text, when it closes first) decides whether the call starts early;
    `fallback`: it does not (it runs, or is refused, once complete, like any call).
    """

    start: int
    name: str
    argument: str
    format: str  # noqa: A003
    received: str = ''
    closed: bool = False
    handed: str = ''
    segments: int = 0
    call: Any = None
    fallback: bool = False
    announced: bool = False
    complete: bool = False  # the complete call came: `received` is its validated text
    ended: bool = False  # the executor was told the text is complete
    chat_index: int = -1  # its entry in the stream's chat_calls


@dataclass(slots=True, eq=False)
class Stream:
    """A streamed generation being parsed: its content, its calls' chat entries, its speech."""

    parser: StreamingParser
    last_chunk: float
    content: list = field(default_factory=list)
    chat_calls: list = field(default_factory=list)
    held_tool_messages: list = field(default_factory=list)
    closed: bool = False  # the assistant message is out: tool messages need not wait
    finish_note: str = ''  # why the stream was finished without a final chunk
    size: int = 0  # characters fed so far (what the stream holds, at most)
    next_index: int = 1  # TextChunk.index expected next (numbered chunks only)
    speech: dict = field(default_factory=dict)  # markup start -> Speech (stream_speech)


@dataclass(slots=True)
class ToolState:
    """A tool's settings in force, its rate budget and the arguments compared loosely."""

    settings: ToolSettings
    bucket: TokenBucket
    free_text: frozenset = frozenset()  # arguments compared loosely for repeats
