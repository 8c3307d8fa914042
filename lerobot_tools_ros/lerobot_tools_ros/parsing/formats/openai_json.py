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
OpenAI / LeRobot JSON, and bare JSON call objects anywhere in the text.

Shapes: ``{"tool_calls": [...]}``, an assistant message dict (its ``content`` string stays as
prose), one ``{"type": "function", "function": {...}}`` or ``{"name", "arguments"}`` object, or
a list of them. ``arguments`` may be a dict, a JSON string, or a double-encoded JSON string.
A bare ``{"name", "parameters"}`` object is Llama 3.x JSON and reported as ``llama_json``
(several may be ``;``-separated). Single quotes and Python literals are read with ``ast``.

Only ``{`` followed by a quote and ``[`` followed by ``{`` start a candidate. A complete JSON
value that is not call-shaped is prose and is not searched further.
"""

from ..core import Match, NEED_ANY, NeedMore, Skip
from ..registry import register_format
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS
from ..values import (add_entries, call_entries, entry_format, invalid_end, is_entry, READ_NEED,
                      READ_OK, READ_TRUNCATED, read_value, skip_ws)
from ..values import guess_name

FORMAT = 'openai_json'
LLAMA = 'llama_json'
_CALLISH = ('"name"', "'name'", 'tool_calls', '"function"', "'function'")
_WAKE = ('}', ']')


def looks_like_call(fragment: str) -> bool:
    """Whether broken JSON was meant as a call (so it is reported, not treated as prose)."""
    return any(key in fragment for key in _CALLISH)


def guess_format(fragment: str) -> str:
    """Name the family of an unreadable call: Llama when it uses ``parameters``."""
    if ('"parameters"' in fragment or "'parameters'" in fragment) and (
            'arguments' not in fragment):
        return LLAMA
    return FORMAT


def read_sequence(text: str, end: int, entries: list, ctx, problems: list | None = None):
    """
    Extend ``entries`` with ``; {...}`` call objects after ``end`` (Llama's separator).

    A value that is meant as a call but cannot be read adds ``(code, message, name)`` to
    ``problems`` (when given) and the sequence goes on after it, so a good call survives a
    broken sibling. Returns the end of the markup, or None when more text is needed to decide.
    """
    n = len(text)
    while True:
        k = skip_ws(text, end)
        if k >= n:
            return None if not ctx.final else end
        if text[k] != ';':
            return end
        k2 = skip_ws(text, k + 1)
        if k2 >= n:
            return None if not ctx.final else k + 1
        if text[k2] != '{':
            return end
        status, value, stop, note = read_value(text, k2, ctx)
        if status == READ_NEED:
            return None
        if status == READ_OK:
            if not is_entry(value):
                return end  # prose after the separator
            entries.append(value)
            end = stop
            continue
        fragment = text[k2:stop]
        if problems is None or not looks_like_call(fragment):
            return end  # the scanner reports that value on its own
        if status == READ_TRUNCATED:
            problems.append((TRUNCATED, f'the {LLAMA} call starting at char {ctx.base + k2} is '
                             f'truncated: the text ended inside it ({note})',
                             guess_name(fragment)))
            return n
        stop = invalid_end(text, k2, stop, note, ctx)
        if stop is None:
            return None
        problems.append((UNPARSEABLE_ARGUMENTS, f'the {LLAMA} call at chars {ctx.base + k2}-'
                         f'{ctx.base + stop} is {note}; expected a JSON object like '
                         '{"name": "say", "parameters": {"text": "hi"}}', guess_name(fragment)))
        end = stop


def match_json(text: str, pos: int, trigger: str, ctx):
    """Match a JSON (or Python-literal) call value starting with ``{"`` or ``[{``."""
    n = len(text)
    k = skip_ws(text, pos + 1)
    if k >= n:
        return NEED_ANY if not ctx.final else None
    c = text[k]
    if trigger == '{':
        if c != '"' and c != "'":
            return None
    elif c != '{':
        return None
    status, value, end, note = read_value(text, pos, ctx)
    if status == READ_OK:
        entries, content = call_entries(value, False, ctx.view.names)
        if entries is None:
            return Skip(end)
        if type(value) is dict and 'tool_calls' in value:
            fmt = FORMAT
        else:
            fmt = entry_format(entries[0])
        if fmt not in ctx.plan.formats:
            return Skip(end)
        problems: list = []
        if fmt == LLAMA:
            entries = list(entries)
            end = read_sequence(text, end, entries, ctx, problems)
            if end is None:
                return NEED_ANY
        items: list = []
        add_entries(entries, fmt, ctx, pos, end, items)
        for code, message, name in problems:
            items.append(ctx.issue(code, message, pos, end, fmt, name))
        return Match(end, items, content)
    if status == READ_NEED:
        return NeedMore(_WAKE)
    fragment = text[pos:end]
    fmt = guess_format(fragment)
    if not looks_like_call(fragment) or fmt not in ctx.plan.formats:
        return Skip(end)
    if status == READ_TRUNCATED:
        return Match(n, [ctx.issue(TRUNCATED, f'the {fmt} call starting at char '
                                   f'{ctx.base + pos} is truncated: the text ended inside it '
                                   f'({note})', pos, n, fmt, guess_name(fragment))])
    stop = invalid_end(text, pos, end, note, ctx)  # the whole block, not where decoding stopped
    if stop is None:
        return NeedMore(_WAKE)
    message = (f'the {fmt} call at chars {ctx.base + pos}-{ctx.base + stop} is {note}; '
               'expected a JSON object like {"name": "say", "arguments": {"text": "hi"}}')
    entries = []
    problems: list = [(UNPARSEABLE_ARGUMENTS, message, guess_name(fragment))]
    if fmt == LLAMA:  # the ;-separated calls after it are still read
        stop = read_sequence(text, stop, entries, ctx, problems)
        if stop is None:
            return NEED_ANY
    items: list = []
    add_entries(entries, fmt, ctx, pos, stop, items)
    for code, reason, name in problems:
        items.append(ctx.issue(code, reason, pos, stop, fmt, name))
    return Match(stop, items)


register_format(FORMAT, [('{', match_json), ('[', match_json)], priority=60,
                description='{"tool_calls": [...]}, {"name": ..., "arguments": ...}, lists')
