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
What the parser returns: calls, issues, the remaining prose, and streaming events.

These types are part of the public API (the dispatcher copies their fields into ROS messages),
so field names, issue codes and format names stay stable.
"""

from dataclasses import dataclass, field

DEFAULT_MAX_INPUT_BYTES = 65536

# Issue codes. Each ParseIssue message also says where (absolute character offsets) and what was
# expected, so a user can fix the prompt or the model output without reading parser code.
TRUNCATED = 'truncated'
"""The text ended inside a call: an unclosed tag, bracket, string or code fence."""
UNPARSEABLE_ARGUMENTS = 'unparseable_arguments'
"""The call's payload is neither JSON nor a Python literal (or a pythonic call with bad syntax)."""
INVALID_CALL = 'invalid_call'
"""The payload parsed, but not into a call: no name, arguments not an object, non-literals."""
UNKNOWN_TOOL = 'unknown_tool'
"""A catalog was given and the name is not in it; the message suggests the closest name."""
TOO_LARGE = 'too_large'
"""The input is above ``max_input_bytes`` (UTF-8); nothing beyond the limit is parsed."""

CALL_IN_REASONING = 'call_in_reasoning'
"""Call markup inside a reasoning span (``<think>``, an ``analysis`` message): not dispatched."""

ISSUE_CODES = (TRUNCATED, UNPARSEABLE_ARGUMENTS, INVALID_CALL, UNKNOWN_TOOL, TOO_LARGE,
               CALL_IN_REASONING)


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """
    One recovered call; ``span`` is [start, end) of its markup in the input, in characters.

    Calls that come from one block of markup (a JSON list, a pythonic list) share its span.
    """

    name: str
    arguments: dict
    format: str  # noqa: A003 (a public field name)
    span: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ParseIssue:
    """
    Something that looked like a call but could not be recovered.

    ``name`` is the tool name when it could be read (always set for ``unknown_tool``).
    ``format`` is '' for ``too_large``, which is not tied to any format.
    """

    code: str
    message: str
    span: tuple[int, int]
    format: str  # noqa: A003 (a public field name)
    name: str = ''


@dataclass(slots=True)
class ParseResult:
    """Everything found in one text: the prose left over, the calls, and the issues, in order."""

    content: str
    calls: list[ParsedCall] = field(default_factory=list)
    errors: list[ParseIssue] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ContentEvent:
    """Prose that is final: no later text can turn it into call markup."""

    text: str


@dataclass(frozen=True, slots=True)
class CallEvent:
    """A call whose markup is complete."""

    call: ParsedCall


@dataclass(frozen=True, slots=True)
class IssueEvent:
    """A call that could not be recovered (``truncated`` ones arrive from ``finish()``)."""

    issue: ParseIssue


@dataclass(frozen=True, slots=True)
class CallStartEvent:
    """
    A call of a tool with a streamable argument began (``StreamingParser(stream_arguments)``).

    ``start`` is where its markup begins in the input; it names the call until the one
    CallEvent or IssueEvent whose span starts there ends it. ``argument`` is the argument
    whose text ArgumentEvents report.
    """

    start: int
    name: str
    argument: str
    format: str  # noqa: A003 (a public field name)


@dataclass(frozen=True, slots=True)
class ArgumentEvent:
    """
    More decoded text of the streamable argument of the call that began at ``start``.

    ``closed``: the argument's value is complete (its closing quote or tag arrived; the rest
    of the call's markup may not have): set on the event that brings its last text, or on one
    with empty ``text`` when all of it was reported already. At most one event is closed.
    """

    start: int
    text: str
    closed: bool = False
