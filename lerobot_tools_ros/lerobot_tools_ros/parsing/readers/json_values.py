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
JSON values, with Python literals as the fallback: where a value ends and what it is.

Everything here runs in time linear in the text it looks at. JSON goes through the C decoder
(``raw_decode`` finds where a value ends, so a closing tag inside a string argument is harmless).
When that fails, a string- and bracket-aware scanner finds where the value ends (or that the
text ended inside it) before ``ast.parse`` sees exactly that slice; nothing is ever evaluated.
While streaming, an unclosed value's scan resumes where it stopped (``ValueContext.memo``).
"""

from enum import Enum
import json
import re
from typing import Any, Protocol

from .literals import literal_value, LiteralError
from .text import json_type, match_end, short
from ..results import INVALID_CALL, UNPARSEABLE_ARGUMENTS


class ReadStatus(Enum):
    """What ``read_value`` found."""

    OK = 'ok'  # a complete value
    NEED = 'need'  # streaming: more text may still complete it
    TRUNCATED = 'truncated'  # the text ended inside it
    INVALID = 'invalid'  # neither JSON nor a Python literal


class Bracket(Enum):
    """What ``scan_brackets`` found."""

    CLOSED = 'closed'
    UNCLOSED = 'unclosed'
    BAD = 'bad'


class ValueContext(Protocol):
    """What the readers here use of the matcher context (``context.Ctx`` has it)."""

    final: bool  # the whole text is there (False while streaming)
    base: int  # offset of the scanned text in the whole input
    memo: dict | None  # streaming only: scanner state kept between feeds


# The members under plain module names: the hot paths compare with these (a class attribute of
# an Enum costs about 0.6 us on Python 3.11, a module global about 20 ns).
READ_OK, READ_NEED, READ_TRUNCATED, READ_INVALID = (ReadStatus.OK, ReadStatus.NEED,
                                                    ReadStatus.TRUNCATED, ReadStatus.INVALID)
CLOSED, UNCLOSED, BAD = Bracket.CLOSED, Bracket.UNCLOSED, Bracket.BAD
_DECODER = json.JSONDecoder(strict=False)  # models put raw newlines inside strings
raw_decode = _DECODER.raw_decode
JSONDecodeError = json.JSONDecodeError
MAX_DEPTH = 200  # deepest JSON nesting accepted (Python's parser stops at 200 too)
_TOO_DEEP = f'nested more than {MAX_DEPTH} levels deep'
_DQ_END = re.compile(r'["\\]')
_SQ_END = re.compile(r"['\\]")
# Outside strings, the next character worth a look: brackets, quotes, and anything that cannot
# appear there. In a JSON value / Python literal that includes letters (checked as words:
# only the JSON and Python constants, or letters inside a number like 1e5); in a pythonic call
# names and '=' are fine. Single negated classes: the C matcher skips the rest.
_NEXT_JSON = re.compile(r'[^\s,:0-9.+\-]')
_NEXT_PY = re.compile(r'[^\s,:0-9.+\-=*A-Za-z_]')
_WORD_CHARS = re.compile(r'[A-Za-z0-9_]*')
_LETTERS = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_')
_JSON_WORDS = frozenset(('true', 'false', 'null', 'True', 'False', 'None', 'NaN', 'Infinity'))
_CLOSER = {'(': ')', '[': ']', '{': '}'}
_DIRECT_DECODE_BEFORE = 4096  # see read_value
_SMALL_PENDING = 2048
_NAME_FIELD = re.compile(r'["\']name["\']\s*:\s*["\']([A-Za-z0-9_.\-]{1,64})["\']')
_BLOCK_NEXT = re.compile(r'[()\[\]{}"\']')
_BLIND_NEXT = re.compile(r'[()\[\]{}]')
_ITEM_NEXT = re.compile(r'[()\[\]{}"\',]')


def guess_name(fragment: str) -> str:
    """Return the ``"name": "..."`` of a call that could not be read, or ''."""
    found = _NAME_FIELD.search(fragment)
    return found.group(1) if found else ''


def decode_json(source: str) -> object:
    """``json.loads`` that accepts raw control characters inside strings."""
    return _DECODER.decode(source)


def _open_note(stack: list, string_quote: str) -> str:
    closers = ''.join(reversed(stack[-12:]))
    if len(stack) > 12:
        closers = f'{closers}... ({len(stack)} in all)'
    parts = []
    if string_quote:
        parts.append(f'the closing {string_quote} of a string')
    if closers:
        parts.append(f'{closers!r}')
    return 'expected ' + ', then '.join(parts) if parts else 'expected more text'


def _string_end(text: str, k: int, quote: str) -> tuple[int, int]:
    """Find a string's closing ``quote`` from ``k``: ``(index past it, 0)``/``(-1, resume)``."""
    if len(quote) == 3:
        found = text.find(quote, k)
        return (found + 3, 0) if found != -1 else (-1, max(k, len(text) - 2))
    end = _DQ_END if quote == '"' else _SQ_END
    while True:
        hit = end.search(text, k)
        if hit is None:
            return -1, max(k, len(text))  # k > len(text): the next character is escaped
        k = hit.start()
        if text[k] == '\\':
            k += 2
            continue
        return k + 1, 0


def scan_brackets(text: str, start: int, python: bool,
                  ctx: ValueContext | None = None) -> tuple[Bracket, int, str]:
    """
    Find the end of the bracketed value that opens at ``text[start]``.

    Returns ``(CLOSED, end, '')``, ``(UNCLOSED, len(text), what was still
    expected)`` or ``(BAD, index, what was wrong)`` when a character that cannot belong
    to a JSON value (``python=False``) or a pythonic call (``python=True``) shows up outside
    strings, or a bracket does not match. One left-to-right pass with an explicit stack: no
    recursion, so 100,000 nested brackets are fine.

    While streaming (``ctx.memo`` is a dict kept across feeds), an unclosed scan remembers
    where it stopped (inside a string too), and the next scan of the same value resumes there:
    a value that grows by small deltas is scanned once overall, not once per delta.
    """
    memo = ctx.memo if ctx is not None else None
    if ctx is None or memo is None:
        return _scan_from(text, start, [], '', python)[0]
    key = (ctx.base + start, python)
    i, stack, quote = start, [], ''
    state = memo.pop(key, None)
    if state is not None:
        i, stack, quote = state[0] - ctx.base, state[1], state[2]
    result, resume = _scan_from(text, i, stack, quote, python)
    if resume is not None:
        memo[key] = (ctx.base + resume[0], stack, resume[1])
    return result


def _scan_from(text: str, i: int, stack: list, quote: str,
               python: bool) -> tuple[tuple[Bracket, int, str], tuple[int, str] | None]:
    """
    Run the loop of ``scan_brackets`` from ``i`` (inside a string when ``quote``).

    Returns ``(result, resume)``; ``resume`` is ``(index, quote)`` to continue from when the
    value is unclosed, else None.
    """
    search = (_NEXT_PY if python else _NEXT_JSON).search
    n = len(text)
    while True:
        if quote:
            i, resume = _string_end(text, i, quote)
            if i == -1:
                return (UNCLOSED, n, _open_note(stack, quote)), (resume, quote)
            quote = ''
        m = search(text, i)
        if m is None:  # nothing in [i, n) needs a second look
            return (UNCLOSED, n, _open_note(stack, '')), (n, '')
        j = m.start()
        c = text[j]
        if c in '([{':
            stack.append(_CLOSER[c])
            i = j + 1
        elif c in ')]}':
            if not stack or stack[-1] != c:
                expected = f'{stack[-1]!r}' if stack else 'nothing'
                return (BAD, j, f'unexpected {c!r} (expected {expected})'), None
            stack.pop()
            if not stack:
                return (CLOSED, j + 1, ''), None
            i = j + 1
        elif c in _LETTERS:  # JSON mode only
            word = text[j:match_end(_WORD_CHARS, text, j)]
            if j + len(word) >= n:  # the word may still grow (tru -> true)
                return (UNCLOSED, n, _open_note(stack, '')), (j, '')
            if word not in _JSON_WORDS and text[j - 1] not in '0123456789.':
                return (BAD, j, f'unexpected bare word {short(word)}'), None
            i = j + len(word)
        elif c != '"' and c != "'":
            return (BAD, j, f'unexpected {c!r}'), None
        elif n - j < 3 and text[j:] == c * (n - j):
            # '"' or '""' at the very end may still become a triple quote
            return (UNCLOSED, n, _open_note(stack, c)), (j, '')
        else:
            quote = c * 3 if text.startswith(c * 3, j) else c
            i = j + len(quote)


def block_end(text: str, start: int, ctx: ValueContext) -> int | None:
    """
    Where a malformed bracketed block that opens at ``text[start]`` ends.

    Brackets of any kind are counted (so a mismatched one still closes a level) and quoted
    strings are skipped. Returns the index past the closing bracket; when the text ends
    first, ``len(text)`` if ``ctx.final`` else None (more text may close it). While streaming,
    an unclosed scan resumes where it stopped, like ``scan_brackets``.
    """
    n = len(text)
    memo = ctx.memo
    key = (ctx.base + start, 'block')
    i, depth = start, 0
    if memo is not None:
        state = memo.pop(key, None)
        if state is not None:
            i, depth = state[0] - ctx.base, state[1]
    search = _BLOCK_NEXT.search
    resume = n
    while True:
        m = search(text, i)
        if m is None:
            break
        j = m.start()
        c = text[j]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth <= 0:
                return j + 1
        else:
            quote = c * 3 if text.startswith(c * 3, j) else c
            k, _ = _string_end(text, j + len(quote), quote)
            if k == -1:
                resume = j  # look at this string again when more text arrives
                break
            i = k
            continue
        i = j + 1
    if ctx.final:
        return n
    if memo is not None:
        memo[key] = (ctx.base + resume, depth)
    return None


def split_items(text: str, start: int, stop: int) -> list[tuple[int, int]]:
    """
    Split ``text[start:stop]``, the inside of a list, at its top-level commas.

    Brackets of any kind nest and quoted strings are skipped, so ``f(a=1, b=[2, 3])`` is one
    item. Returns the ``(start, end)`` of each item without surrounding whitespace; an empty
    item (a trailing comma) is left out. One pass, no recursion.
    """
    items = []
    depth = 0
    begin = i = start
    search = _ITEM_NEXT.search
    while True:
        m = search(text, i, stop)
        if m is None:
            break
        j = m.start()
        c = text[j]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth = max(0, depth - 1)
        elif c == ',':
            if depth == 0:
                items.append((begin, j))
                begin = j + 1
        else:
            quote = c * 3 if text.startswith(c * 3, j) else c
            k, _ = _string_end(text, j + len(quote), quote)
            if k == -1 or k > stop:
                break
            i = k
            continue
        i = j + 1
    items.append((begin, stop))
    out = []
    for a, b in items:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def salvage_items(text: str, start: int, stop: int) -> list[tuple[bool, object, str]]:
    """
    Read each item of the broken JSON list ``text[start:stop]`` on its own.

    Returns ``(True, value, source)`` for an item that is a JSON value (or Python literal) and
    ``(False, reason, source)`` for one that is not, or [] when no item could be read (then the
    list is reported whole). So one good call survives a broken sibling.
    """
    if start >= stop or text[start] != '[':
        return []
    items = split_items(text, start + 1, stop - 1 if text[stop - 1] in ')]}' else stop)
    if len(items) < 2:
        return []
    out = []
    for a, b in items:
        source = text[a:b]
        try:
            out.append((True, decode_json(source), source))
            continue
        except (ValueError, RecursionError) as exc:
            json_error = getattr(exc, 'msg', 'not JSON')
        try:
            out.append((True, literal_value(source), source))
        except LiteralError as exc:
            out.append((False, f'not valid JSON ({json_error}), nor a Python literal '
                        f'({exc.message})', source))
    return out if any(ok for ok, _, _ in out) else []


STRAY_QUOTE = ('not valid JSON: a string in it is never closed (an unbalanced quote; the '
               'closing brackets come later in the text, so it did not end inside the call)')


def invalid_end(text: str, start: int, end: int, note: str, ctx: ValueContext) -> int | None:
    """
    Find the end of the markup of a value ``read_value`` found invalid: the whole block.

    ``read_value`` stops where decoding failed; a report must take the rest of the block too
    (``block_end``), except after an unbalanced quote, whose end ``read_value`` already found.
    None: more text may still close the block.
    """
    if note.startswith(STRAY_QUOTE):
        return end
    return block_end(text, start, ctx)


def unbalanced_quote(text: str, start: int, ctx: ValueContext, note: str) -> int:
    """
    Find where a call ends when the text "ended inside" it only because of a stray quote.

    ``note`` is what ``scan_brackets`` still expected. When it was inside a string but, with
    quotes ignored, the brackets all close later in the text (``say(text="hi) and more``),
    the text did not end inside the call; a stray quote did. Returns the index past the
    closing bracket, or -1 (really truncated, or still streaming).
    """
    if not ctx.final or not note.startswith('expected the closing'):
        return -1
    depth = 0
    search = _BLIND_NEXT.search
    i = start
    while True:
        m = search(text, i)
        if m is None:
            return -1
        j = m.start()
        depth += 1 if text[j] in '([{' else -1
        if depth <= 0:
            return j + 1
        i = j + 1


def read_value(text: str, start: int,
               ctx: ValueContext) -> tuple[ReadStatus, object, int, str]:
    """
    Read the JSON (or Python-literal) value that opens at ``text[start]`` (a bracket).

    Returns ``(READ_OK, value, end, '')``; ``(READ_NEED, None, start, '')`` when the
    text may still complete it (streaming only); ``(READ_TRUNCATED, None, len(text), what was
    expected)`` when the text ended inside it; ``(READ_INVALID, None, end, reason)`` with
    ``end`` where reading stopped. All positions in messages are absolute.

    Near the start of the text, the first time a value is read, the C decoder runs first (the
    hot path). Otherwise the bracket scanner finds the extent first and the decoder sees only
    that slice: a decoding error costs time proportional to the slice (the decoder counts lines
    up to the error), and while streaming, a value that grows by small deltas is scanned once
    and decoded once. Valid JSON always scans as closed, and JSON errors lie inside the slice,
    so both orders give the same result.
    """
    memo = ctx.memo
    if memo is None:
        return _read_value(text, start, ctx, None)
    key = (ctx.base + start, 'value')
    hit = memo.get(key)
    if hit is not None:  # decided in an earlier feed (a value never changes once closed)
        return READ_OK, hit[0], hit[1] - ctx.base, ''
    result = _read_value(text, start, ctx, memo)
    if result[0] == READ_OK:
        memo[key] = (result[1], ctx.base + result[2])
    return result


def _read_value(text: str, start: int, ctx: ValueContext,
                memo: dict | None) -> tuple[ReadStatus, object, int, str]:
    if not ctx.final:
        closer = _CLOSER.get(text[start])
        if closer is not None and text.find(closer, start + 1) == -1:
            # cannot be complete yet: skip the decoder (a failed decode raises, which costs
            # more than the rest of a streamed scan)
            return READ_NEED, None, start, ''
    state: Bracket | None = None
    if start < _DIRECT_DECODE_BEFORE and (memo is None or (ctx.base + start, False) not in memo):
        try:
            value, end = raw_decode(text, start)
            if end - start <= 2 * MAX_DEPTH or not _deeper_than(value, MAX_DEPTH):
                return READ_OK, value, end, ''
            json_error = _TOO_DEEP
        except JSONDecodeError as exc:
            if (not ctx.final and len(text) - start < _SMALL_PENDING
                    and (exc.pos >= len(text) or exc.msg.startswith('Unterminated'))):
                # Valid so far and small: decoding it again on the next delta is cheaper
                # than scanning it in Python.
                return READ_NEED, None, start, ''
            json_error = f'{exc.msg} at char {ctx.base + exc.pos}'
        except RecursionError:
            json_error = _TOO_DEEP
        except ValueError as exc:  # e.g. an integer beyond Python's digit limit
            json_error = f'{exc}'.split(';')[0]
        state, end, note = scan_brackets(text, start, False, ctx)
        if state == UNCLOSED and not ctx.final:
            return READ_NEED, None, start, ''
    else:
        state, end, note = scan_brackets(text, start, False, ctx)
        if state == UNCLOSED and not ctx.final:
            return READ_NEED, None, start, ''
        # A bad bare word may start with a JSON literal (nullx): the decoder reads into it.
        stop = match_end(_WORD_CHARS, text, end) + 1 if state == BAD else end
        try:
            value, stop = raw_decode(text[start:stop])
            if stop <= 2 * MAX_DEPTH or not _deeper_than(value, MAX_DEPTH):
                return READ_OK, value, start + stop, ''
            json_error = _TOO_DEEP
        except JSONDecodeError as exc:
            json_error = f'{exc.msg} at char {ctx.base + start + exc.pos}'
        except RecursionError:
            json_error = _TOO_DEEP
        except ValueError as exc:  # e.g. an integer beyond Python's digit limit
            json_error = f'{exc}'.split(';')[0]
    if state == UNCLOSED:
        stray = unbalanced_quote(text, start, ctx, note)
        if stray == -1:
            return READ_TRUNCATED, None, end, note
        return READ_INVALID, None, stray, f'{STRAY_QUOTE} ({json_error})'

    if end - start > 2 * MAX_DEPTH and _text_deeper_than(text, start, end, MAX_DEPTH):
        # Whether the decoder's recursion limit is hit depends on the caller's stack depth;
        # this fixed limit keeps the result the same everywhere (and for every split).
        json_error = _TOO_DEEP
    if state == BAD:
        return READ_INVALID, None, end, (
            f'not valid JSON ({json_error}), nor a Python literal ({note} at char '
            f'{ctx.base + end})')
    try:
        value = literal_value(text[start:end])
    except LiteralError as exc:
        where = f' at char {ctx.base + start + exc.offset}' if exc.offset >= 0 else ''
        return READ_INVALID, None, end, (
            f'not valid JSON ({json_error}), nor a Python literal ({exc.message}{where})')
    return READ_OK, value, end, ''


def slice_problem(text: str, start: int, stop: int, ctx: ValueContext) -> str:
    """
    Say why ``text[start:stop]`` is not one JSON value, for a value a closing token bounds.

    Looks at the slice only, so the answer is the same at every split of a stream.
    """
    source = text[start:stop]
    body = source.strip()
    lead = len(source) - len(source.lstrip())
    try:
        value, end = raw_decode(body)
    except JSONDecodeError as exc:
        return f'{exc.msg} at char {ctx.base + start + lead + exc.pos}'
    except (ValueError, RecursionError):
        return 'it cannot be decoded'
    if end < len(body):
        return f'unexpected {short(body[end:end + 20])} after the value'
    return f'got {json_type(value)} {short(value)}'


def _deeper_than(value: object, limit: int) -> bool:
    """Whether decoded data nests containers more than ``limit`` levels deep."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if type(item) is dict else item
        for child in children:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return False


def _text_deeper_than(text: str, start: int, stop: int, limit: int) -> bool:
    """Whether brackets in ``text[start:stop]`` (outside strings) nest beyond ``limit``."""
    depth = 0
    i = start
    while True:
        m = _NEXT_JSON.search(text, i, stop)
        if m is None:
            return False
        j = m.start()
        c = text[j]
        if c in '([{':
            depth += 1
            if depth > limit:
                return True
        elif c in ')]}':
            depth -= 1
        elif c == '"' or c == "'":
            quote = c * 3 if text.startswith(c * 3, j) else c
            i, _ = _string_end(text, j + len(quote), quote)
            if i == -1 or i > stop:
                return False
            continue
        i = j + 1


def decode_arguments(raw: object) -> tuple[dict | None, str, str]:
    """
    Turn a call's raw arguments into a dict: ``(dict, '', '')`` or ``(None, code, reason)``.

    Accepts a dict, a JSON object text, a JSON string holding one (double-encoded), a Python
    dict literal text; a missing/null/empty-string value means no arguments.
    """
    if type(raw) is dict:
        return raw, '', ''
    if raw is None:
        return {}, '', ''
    value = raw
    for _ in range(3):
        if not isinstance(value, str):
            break
        source = value.strip()
        if not source:
            return {}, '', ''
        try:
            value = decode_json(source)
            continue
        except JSONDecodeError as exc:
            json_error = f'{exc.msg} at offset {exc.pos} of the string'
        except RecursionError:
            json_error = 'nested too deeply'
        except ValueError as exc:  # e.g. an integer beyond Python's digit limit
            json_error = f'{exc}'.split(';')[0]
        if source[0] not in '{[':
            return None, UNPARSEABLE_ARGUMENTS, (
                f'the arguments string {short(source)} is not JSON ({json_error}); expected '
                'a JSON object such as {"text": "hi"}')
        try:
            value = literal_value(source)
        except LiteralError as exc:
            return None, UNPARSEABLE_ARGUMENTS, (
                f'the arguments string is not JSON ({json_error}), nor a Python literal '
                f'({exc.message}); expected a JSON object such as {{"text": "hi"}}')
    if isinstance(value, dict):
        return value, '', ''
    return None, INVALID_CALL, (f'arguments must be a JSON object (or a string holding one), '
                                f'got {json_type(value)} {short(value)}')
