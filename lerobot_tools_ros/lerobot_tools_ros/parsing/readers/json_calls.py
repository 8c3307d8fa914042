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
JSON call objects in all their shapes, and the matcher for bare ones in prose.

Shapes: ``{"tool_calls": [...]}``, an assistant message dict (its ``content`` string stays
prose), one ``{"type": "function", "function": {...}}`` or ``{"name", "arguments"}`` object, or a
list of them; ``arguments`` may be a dict, a JSON string, or a double-encoded JSON string. A bare
``{"name", "parameters"}`` object is Llama 3.x JSON (``llama_json``; several may be
``;``-separated). ``match_json`` is registered by both ``openai_json`` and ``llama_json``.
"""

import re

from .json_values import guess_name, invalid_end, READ_NEED, READ_OK, READ_TRUNCATED, read_value
from .text import json_type, short, skip_ws
from ..answers import Match, MatchResult, NEED_ANY, NeedMore, Skip
from ..context import Ctx
from ..results import INVALID_CALL, TRUNCATED, UNPARSEABLE_ARGUMENTS

OPENAI = 'openai_json'
LLAMA = 'llama_json'
_CALLISH = ('"name"', "'name'", 'tool_calls', '"function"', "'function'")
_WAKE = ('}', ']')
_SEPARATED_OBJECT = re.compile(r';\s*\{')


def is_entry(obj: object, explicit: bool = False) -> bool:
    """
    Whether ``obj`` is one call object in any of the JSON shapes.

    ``explicit``: the object sits where only calls go (inside ``<tool_call>``, after
    ``[TOOL_CALLS]``), so ``{"name": "get_time"}`` alone is a call without arguments. In prose
    it needs ``arguments``/``parameters`` too, so a config entry with a name stays prose.
    """
    if type(obj) is not dict:
        return False
    function = obj.get('function')
    if type(function) is dict and 'name' in function:
        return True
    return isinstance(obj.get('name'), str) and (
        explicit or 'arguments' in obj or 'parameters' in obj)


def describe_non_call(value: object) -> str:
    """Say why a decoded value is not a call object, for messages."""
    if isinstance(value, dict):
        function = value.get('function')
        target = function if isinstance(function, dict) else value
        if 'name' in target and not (isinstance(target['name'], str) and target['name'].strip()):
            return (f'"name" must be a non-empty string, got {json_type(target["name"])} '
                    f'{short(target["name"])}')
        keys = ', '.join(short(key, 20) for key in list(value)[:6])
        return f'got an object with keys [{keys}] (no "name" with "arguments"/"parameters")'
    if isinstance(value, list):
        return f'got an array of {len(value)} item(s) that are not call objects'
    return f'got {json_type(value)}'


_NAMED_KEYS = frozenset(('name', 'arguments', 'parameters', 'id', 'type'))


def is_named_list(value: object, names: frozenset | None) -> bool:
    """
    Whether ``value`` is a list of ``{"name": TOOL}`` objects naming catalog tools only.

    A JSON array of calls without ``arguments`` (zero-argument tools) is read as calls when
    every name is a tool of the catalog; ``[{"name": "Alice"}]`` in prose stays prose, and so
    does any such list without a catalog.
    """
    return (names is not None and type(value) is list and bool(value)
            and all(type(item) is dict and type(item.get('name')) is str
                    and item['name'] in names and _NAMED_KEYS.issuperset(item)
                    for item in value))


def is_call_shaped(value: object, names: frozenset | None = None) -> bool:
    """Whether ``value`` is one of the JSON call shapes (see ``call_entries``)."""
    if type(value) is dict:
        return 'tool_calls' in value or is_entry(value)
    return type(value) is list and bool(value) and (
        is_entry(value[0]) or is_named_list(value, names))


def message_content(value: object) -> str | None:
    """Return the ``content`` string of an assistant message dict with ``tool_calls``."""
    if type(value) is dict and 'tool_calls' in value:
        content = value.get('content')
        if isinstance(content, str):
            return content
    return None


def call_entries(value: object, explicit: bool = False,
                 names: frozenset | None = None) -> tuple[list | None, str | None]:
    """
    Return ``(entries, content)`` when ``value`` is call-shaped, else ``(None, None)``.

    Shapes: ``{"tool_calls": [...]}`` / an assistant message dict (its ``content`` string is
    kept as prose), one call object, a non-empty list whose first item is a call object, or
    a list of ``{"name": TOOL}`` objects naming catalog tools (``names``; see
    ``is_named_list``).
    """
    if type(value) is dict:
        if 'tool_calls' in value:
            calls = value['tool_calls']
            content = value.get('content')
            return (calls if type(calls) is list else [calls],
                    content if isinstance(content, str) else None)
        if is_entry(value, explicit):
            return [value], None
        return None, None
    if type(value) is list and value and (is_entry(value[0], explicit)
                                          or is_named_list(value, names)):
        return value, None
    return None, None


def entry_format(entry: object) -> str:
    """Auto-detected family of a bare JSON call object: Llama uses ``parameters``."""
    if (type(entry) is dict and 'parameters' in entry and 'arguments' not in entry
            and 'function' not in entry):
        return 'llama_json'
    return 'openai_json'


def add_value_calls(value: object, fmt: str, ctx: Ctx, start: int, end: int, items: list,
                    explicit: bool = True) -> bool:
    """
    Append the calls of a decoded value; False when it is not call-shaped at all.

    The common case (one call object) takes a short path; the rest goes through
    ``call_entries``/``add_entries``. An assistant message's ``content`` is dropped here.
    ``explicit`` (the default: callers are call tags) accepts ``{"name": ...}`` alone as a
    call without arguments (see ``is_entry``).
    """
    if type(value) is dict and 'tool_calls' not in value:
        function = value.get('function')
        if type(function) is not dict or 'name' not in function:
            function = value if ('arguments' in value or 'parameters' in value or (
                explicit and isinstance(value.get('name'), str))) else None
        if function is not None:
            name = function.get('name')
            if type(name) is str and name.strip():
                if 'arguments' in function:
                    ctx.add_call(items, name, function['arguments'], fmt, start, end)
                else:
                    ctx.add_call(items, name, function.get('parameters'), fmt, start, end)
                return True
    entries, _ = call_entries(value, explicit, ctx.view.names)
    if entries is None:
        return False
    add_entries(entries, fmt, ctx, start, end, items)
    return True


def add_entries(entries: list, fmt: str, ctx: Ctx, start: int, end: int, items: list) -> None:
    """Append one ParsedCall or ParseIssue per call object to ``items``."""
    for index, entry in enumerate(entries):
        if type(entry) is not dict:
            label = f'call #{index + 1} of the ' if len(entries) > 1 else 'the '
            items.append(ctx.issue(
                INVALID_CALL, f'{label}{fmt} call at chars {ctx.base + start}-{ctx.base + end} '
                f'is a {json_type(entry)}, expected an object like '
                '{"name": "say", "arguments": {"text": "hi"}}', start, end, fmt))
            continue
        function = entry.get('function')
        if type(function) is not dict:
            function = entry
        name = function.get('name')
        if not isinstance(name, str) or not name.strip():
            label = f'call #{index + 1} of the ' if len(entries) > 1 else 'the '
            items.append(ctx.issue(
                INVALID_CALL, f'{label}{fmt} call at chars {ctx.base + start}-{ctx.base + end} '
                f'has no usable "name" (got {json_type(name)} {short(name)}); expected a '
                'non-empty string', start, end, fmt))
            continue
        if 'arguments' in function:
            raw = function['arguments']
        else:
            raw = function.get('parameters')
        ctx.add_call(items, name, raw, fmt, start, end)


def looks_like_call(fragment: str) -> bool:
    """Whether broken JSON was meant as a call (so it is reported, not treated as prose)."""
    return any(key in fragment for key in _CALLISH)


def guess_format(fragment: str) -> str:
    """Name the family of an unreadable call: Llama when it uses ``parameters``."""
    if ('"parameters"' in fragment or "'parameters'" in fragment) and (
            'arguments' not in fragment):
        return LLAMA
    return OPENAI


def broken_before_next(text: str, start: int, stop: int, ctx: Ctx) -> int:
    """
    Where a broken Llama call object at ``start`` ends when the next call begins inside it.

    ``{"name": "a", "parameters": {"x": 1}; {"name": "b", ...}}``: the first object lacks a
    brace, so by its brackets it runs over the ``;`` and the whole next call. When a ``;``
    inside ``text[start:stop]`` is followed by a complete, valid call object, the broken
    object ends at that ``;`` (returned) and the call after it is read as usual; -1 when
    there is none.
    """
    for found in _SEPARATED_OBJECT.finditer(text, start + 1, stop):
        status, value, _, _ = read_value(text, found.end() - 1, ctx)
        if status == READ_OK and is_entry(value):
            return found.start()
    return -1


def broken_message(start: int, cut: int, note: str, ctx: Ctx) -> str:
    """Describe a Llama call object that ``broken_before_next`` cut at a ``;``."""
    detail = note if note.startswith('not valid') else f'not closed ({note})'
    return (f'the {LLAMA} call at chars {ctx.base + start}-{ctx.base + cut} is {detail}: the '
            'next ;-separated call begins before it is closed; expected a JSON object like '
            '{"name": "say", "parameters": {"text": "hi"}}')


def read_sequence(text: str, end: int, entries: list, ctx: Ctx, problems: list | None = None):
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
        bad_end = n if status == READ_TRUNCATED else invalid_end(text, k2, stop, note, ctx)
        if bad_end is None:
            return None
        cut = broken_before_next(text, k2, bad_end, ctx)
        if cut != -1:
            problems.append((UNPARSEABLE_ARGUMENTS, broken_message(k2, cut, note, ctx),
                             guess_name(text[k2:cut])))
            end = cut
            continue
        if status == READ_TRUNCATED:
            problems.append((TRUNCATED, f'the {LLAMA} call starting at char {ctx.base + k2} is '
                             f'truncated: the text ended inside it ({note})',
                             guess_name(fragment)))
            return n
        problems.append((UNPARSEABLE_ARGUMENTS, f'the {LLAMA} call at chars {ctx.base + k2}-'
                         f'{ctx.base + bad_end} is {note}; expected a JSON object like '
                         '{"name": "say", "parameters": {"text": "hi"}}', guess_name(fragment)))
        end = bad_end


def match_json(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
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
            fmt = OPENAI
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
    if fmt == LLAMA:
        bad_end = n if status == READ_TRUNCATED else invalid_end(text, pos, end, note, ctx)
        if bad_end is None:
            return NeedMore(_WAKE)
        cut = broken_before_next(text, pos, bad_end, ctx)
        if cut != -1:  # a good call after a broken one survives it
            return _after_broken(text, pos, cut, note, ctx)
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
    problems = [(UNPARSEABLE_ARGUMENTS, message, guess_name(fragment))]
    if fmt == LLAMA:  # the ;-separated calls after it are still read
        stop = read_sequence(text, stop, entries, ctx, problems)
        if stop is None:
            return NEED_ANY
    items = []
    add_entries(entries, fmt, ctx, pos, stop, items)
    for code, reason, name in problems:
        items.append(ctx.issue(code, reason, pos, stop, fmt, name))
    return Match(stop, items)


def _after_broken(text: str, pos: int, cut: int, note: str, ctx: Ctx) -> MatchResult:
    """Report the broken Llama object before ``cut`` and read the calls after it."""
    entries: list = []
    problems = [(UNPARSEABLE_ARGUMENTS, broken_message(pos, cut, note, ctx),
                 guess_name(text[pos:cut]))]
    stop = read_sequence(text, cut, entries, ctx, problems)
    if stop is None:
        return NEED_ANY
    items: list = []
    add_entries(entries, LLAMA, ctx, pos, stop, items)
    for code, reason, name in problems:
        items.append(ctx.issue(code, reason, pos, stop, LLAMA, name))
    return Match(stop, items)
