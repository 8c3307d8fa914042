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

"""``parse``: one complete generation in, calls + issues + remaining prose out."""

import logging
import traceback
from typing import Sequence

from .answers import Match
from .context import Ctx
from .core import Content, scan
from .registry import get_plan
from .results import (DEFAULT_MAX_INPUT_BYTES, INVALID_CALL, ParsedCall, ParseIssue, ParseResult,
                      TOO_LARGE)
from ..untrusted import log_text

LOG = logging.getLogger(__name__.rpartition('.')[0])  # 'lerobot_tools_ros.parsing'


def utf8_size(text: str) -> int:
    """Size of ``text`` in UTF-8 (lone surrogates count as the 3 bytes they would take)."""
    if text.isascii():
        return len(text)
    return len(text.encode('utf-8', 'surrogatepass'))


def too_large_issue(size: int, limit: int, start: int, end: int) -> ParseIssue:
    """Build the one issue reported for input above ``max_input_bytes``."""
    return ParseIssue(TOO_LARGE, f'the input is {size} bytes (UTF-8), above the limit of '
                      f'{limit} bytes (max_input_bytes); text from char {start} on was not '
                      'parsed', (start, end), '')


REASONING_CALLS = ('report', 'dispatch')


def report_reasoning(reasoning_calls: str) -> bool:
    """Check the ``reasoning_calls`` option; True when calls in reasoning become issues."""
    if reasoning_calls not in REASONING_CALLS:
        raise ValueError(f'reasoning_calls must be one of {", ".join(REASONING_CALLS)}, got '
                         f'{reasoning_calls!r}')
    return reasoning_calls == 'report'


def parse(text: str, catalog=None, formats: str | Sequence[str] = 'auto', *,
          max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
          reasoning_calls: str = 'report') -> ParseResult:
    """
    Find every tool call in ``text``; never raises for any ``str``.

    ``catalog`` (a ``ToolCatalog``) makes unknown names ``unknown_tool`` issues, enables the
    ``<NAME>`` marker and bare ``name(...)`` calls for its tools, and types Qwen3-Coder
    parameters. ``formats`` is ``'auto'`` or one or more names from ``FORMATS``; an unknown
    name raises ValueError (a configuration error, not a property of the text). Calls inside
    reasoning spans (``<think>``...``</think>``, harmony ``analysis`` messages) are
    ``call_in_reasoning`` issues, or with ``reasoning_calls='dispatch'`` calls like any other.
    """
    if not isinstance(text, str):
        raise TypeError(f'parse() needs a str, got {type(text).__name__}')
    plan = get_plan(catalog, formats)
    report = report_reasoning(reasoning_calls)
    try:
        return _parse(text, plan, max_input_bytes, report)
    except Exception as exc:  # noqa: B902 - model text must never take the caller down
        return ParseResult(text, [], [internal_error_issue(exc, len(text))])


def internal_error_issue(exc: Exception, end: int) -> ParseIssue:
    """
    Describe a parser failure (a bug, not the model's fault) as an issue, never a crash.

    The last-resort guard of ``parse`` and ``StreamingParser`` calls this; it logs the failure at
    error level on the ``lerobot_tools_ros.parsing`` logger (the traceback of our code and the
    exception made safe for a log line; never the model text), with the exception object as
    the record's ``parser_exception`` attribute so tests can fail on it.
    """
    LOG.error('the tool-call parser failed (a bug; please report it with the text): %s\n%s',
              log_text(f'{type(exc).__name__}: {exc}'),
              ''.join(traceback.format_tb(exc.__traceback__)).rstrip(),
              extra={'parser_exception': exc})
    return ParseIssue(INVALID_CALL, f'the parser failed on this text ({type(exc).__name__}: '
                      f'{str(exc)[:200]}); please report it with the text', (0, end), '')


def _parse(text: str, plan, max_input_bytes: int, report: bool) -> ParseResult:
    n = len(text)
    if n * 4 > max_input_bytes:
        size = utf8_size(text)
        if size > max_input_bytes:
            return ParseResult('', [], [too_large_issue(size, max_input_bytes, 0, n)])
    pieces = scan(text, Ctx(plan, True, report=report))[0]
    if len(pieces) == 1 and type(pieces[0]) is str:
        return ParseResult(text, [], [])
    return assemble(pieces)


def assemble(pieces: list) -> ParseResult:
    """
    Turn scanner pieces into a ParseResult.

    This is ``core.Content`` inlined (the hot path of every parse); the streaming parser uses
    ``Content`` itself, and the split-invariance tests check that both agree.
    """
    calls: list[ParsedCall] = []
    errors: list[ParseIssue] = []
    out: list[str] = []
    pending = ''
    after = False
    for piece in pieces:
        if type(piece) is Match:
            for item in piece.items:
                if type(item) is ParsedCall:
                    calls.append(item)
                else:
                    errors.append(item)
            if piece.keep:  # markup that stays in the content: prose like any other
                piece = piece.content
            else:
                if piece.content:  # an assistant message's own text counts as prose
                    prose = Content()
                    prose.pending, prose.after = pending, after
                    kept = prose.prose(piece.content)
                    if kept:
                        out.append(kept)
                    pending = prose.pending
                after = True
                continue
        if after:
            piece = piece.lstrip()
            if not piece:
                continue
            after = False
        if pending:
            piece = pending + piece
        body = piece.rstrip()
        if body:
            out.append(body)
        pending = piece[len(body):]
    if pending and not after:
        out.append(pending)
    return ParseResult(''.join(out), calls, errors)
