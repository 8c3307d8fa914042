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
Shared helpers: read a JSON or Python-literal value, and turn call objects into calls.

Everything here runs in time linear in the text it looks at. JSON goes through the C decoder
(``raw_decode`` finds where a value ends, so a closing tag inside a string argument is harmless).
When that fails, a string- and bracket-aware scanner finds where the value ends (or that the
text ended inside it) before ``ast.parse`` sees exactly that slice; nothing is ever evaluated.
"""

import ast
import json
import re
import warnings

from .results import INVALID_CALL, UNPARSEABLE_ARGUMENTS

_DECODER = json.JSONDecoder(strict=False)  # models put raw newlines inside strings
raw_decode = _DECODER.raw_decode
JSONDecodeError = json.JSONDecodeError

# read_value statuses
READ_OK = 0
READ_NEED = 1
READ_TRUNCATED = 2
READ_INVALID = 3

# scan_brackets states
CLOSED = 0
UNCLOSED = 1
BAD = 2

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
_WS = re.compile(r'\s*')
IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_.]*')  # a (dotted) name; ast checks the rest
_MAX_SHOWN = 60
_DIRECT_DECODE_BEFORE = 4096  # see read_value
_CLOSERS = {'{': '}', '[': ']', '(': ')'}
_SMALL_PENDING = 2048
MAX_DEPTH = 200  # deepest JSON nesting accepted (Python's parser stops at 200 too)
_TOO_DEEP = f'nested more than {MAX_DEPTH} levels deep'


_NAME_FIELD = re.compile(r'["\']name["\']\s*:\s*["\']([A-Za-z0-9_.\-]{1,64})["\']')


def guess_name(fragment: str) -> str:
    """Return the ``"name": "..."`` of a call that could not be read, or ''."""
    found = _NAME_FIELD.search(fragment)
    return found.group(1) if found else ''


def decode_json(source: str) -> object:
    """``json.loads`` that accepts raw control characters inside strings."""
    return _DECODER.decode(source)


def skip_ws(text: str, i: int) -> int:
    """Return the first index at or after ``i`` that is not whitespace."""
    if i < len(text) and not text[i].isspace():
        return i
    return _WS.match(text, i).end()


def short(value: object, limit: int = _MAX_SHOWN) -> str:
    """Return a repr short enough for an error message."""
    if isinstance(value, str):
        text = repr(value[:limit + 1])
        return text if len(value) <= limit else text[:-1] + "...'"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


def json_type(value: object) -> str:
    """
    Name the JSON Schema type of a decoded value, for messages (the one helper for this).

    ``integer`` for ints and ``number`` for floats, as JSON Schema's ``type`` keyword spells
    them, so a message can say ``expected number, got integer`` consistently with the schema.
    """
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, int):
        return 'integer'
    if isinstance(value, float):
        return 'number'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, (list, tuple)):
        return 'array'
    if isinstance(value, dict):
        return 'object'
    return type(value).__name__


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
        found = end.search(text, k)
        if found is None:
            return -1, max(k, len(text))  # k > len(text): the next character is escaped
        k = found.start()
        if text[k] == '\\':
            k += 2
            continue
        return k + 1, 0


def scan_brackets(text: str, start: int, python: bool, ctx=None) -> tuple[int, int, str]:
    """
    Find the end of the bracketed value that opens at ``text[start]``.

    Returns ``(CLOSED, end, '')``, ``(UNCLOSED, len(text), what was still expected)`` or
    ``(BAD, index, what was wrong)`` when a character that cannot belong to a JSON value
    (``python=False``) or a pythonic call (``python=True``) shows up outside strings, or a
    bracket does not match. One left-to-right pass with an explicit stack: no recursion, so
    100,000 nested brackets are fine.

    While streaming (``ctx.memo`` is a dict kept across feeds), an unclosed scan remembers
    where it stopped (inside a string too), and the next scan of the same value resumes there:
    a value that grows by small deltas is scanned once overall, not once per delta.
    """
    memo = ctx.memo if ctx is not None else None
    key = None
    i, stack, quote = start, [], ''
    if memo is not None:
        key = (ctx.base + start, python)
        state = memo.pop(key, None)
        if state is not None:
            i, stack, quote = state[0] - ctx.base, state[1], state[2]
    result, resume = _scan_from(text, i, stack, quote, python)
    if resume is not None and key is not None:
        memo[key] = (ctx.base + resume[0], stack, resume[1])
    return result


def _scan_from(text: str, i: int, stack: list, quote: str, python: bool):
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
            word = _WORD_CHARS.match(text, j).group()
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


_BLOCK_NEXT = re.compile(r'[()\[\]{}"\']')
_BLIND_NEXT = re.compile(r'[()\[\]{}]')


def block_end(text: str, start: int, ctx) -> int | None:
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


_ITEM_NEXT = re.compile(r'[()\[\]{}"\',]')


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


def invalid_end(text: str, start: int, end: int, note: str, ctx) -> int | None:
    """
    Find the end of the markup of a value ``read_value`` found invalid: the whole block.

    ``read_value`` stops where decoding failed; a report must take the rest of the block too
    (``block_end``), except after an unbalanced quote, whose end ``read_value`` already found.
    None: more text may still close the block.
    """
    if note.startswith(STRAY_QUOTE):
        return end
    return block_end(text, start, ctx)


def unbalanced_quote(text: str, start: int, ctx, note: str) -> int:
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


class LiteralError(ValueError):
    """A slice that is not a literal; ``offset`` (chars into the slice) is -1 when unknown."""

    def __init__(self, message: str, offset: int = -1, node: ast.AST | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.node = node


_NAMED_CONSTANTS = {'True': True, 'False': False, 'None': None,
                    'true': True, 'false': False, 'null': None}


def from_node(node: ast.AST) -> object:
    """
    Convert a literal expression node to JSON-compatible data; anything else is an error.

    Like ``ast.literal_eval`` but also accepts JSON's true/false/null and rejects what JSON
    cannot carry (sets, bytes, complex numbers, non-string keys).
    """
    kind = type(node)
    if kind is ast.Constant:
        value = node.value
        if value is None or isinstance(value, (str, bool, int, float)):
            return value
        raise LiteralError(f'{type(value).__name__} values are not allowed', node=node)
    if kind is ast.Dict:
        out = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                raise LiteralError("'**' unpacking is not allowed", node=value)
            name = from_node(key)
            if not isinstance(name, str):
                raise LiteralError(f'object keys must be strings, got {short(name)}', node=key)
            out[name] = from_node(value)
        return out
    if kind is ast.List or kind is ast.Tuple:
        return [from_node(item) for item in node.elts]
    if kind is ast.UnaryOp and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        if (type(operand) is ast.Constant and isinstance(operand.value, (int, float))
                and not isinstance(operand.value, bool)):
            return -operand.value if isinstance(node.op, ast.USub) else operand.value
    if kind is ast.Name and node.id in _NAMED_CONSTANTS:
        return _NAMED_CONSTANTS[node.id]
    raise LiteralError(f'{_describe_node(node)} is not a literal (only strings, numbers, '
                       'booleans, None, lists and dicts are allowed)', node=node)


def _describe_node(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return f'the name {node.id!r}'
    if isinstance(node, ast.Call):
        return 'a function call'
    if isinstance(node, ast.Set):
        return 'a set'
    return f'an expression ({type(node).__name__})'


def _syntax_offset(source: str, exc: SyntaxError) -> int:
    """Character offset in ``source`` of a SyntaxError (lineno/offset are 1-based)."""
    lineno = exc.lineno or 1
    offset = (exc.offset or 1) - 1
    pos = 0
    for _ in range(lineno - 1):
        nxt = source.find('\n', pos)
        if nxt == -1:
            break
        pos = nxt + 1
    return min(len(source), pos + max(0, offset))


def parse_expression(source: str) -> ast.AST:
    """``ast.parse`` in eval mode with every failure mapped to LiteralError."""
    try:
        if '\\' in source:  # "C:\path": no invalid-escape warnings printed for model text
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                return ast.parse(source, mode='eval').body
        return ast.parse(source, mode='eval').body
    except SyntaxError as exc:
        raise LiteralError(f'invalid syntax ({exc.msg})', _syntax_offset(source, exc)) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        reason = 'nested too deeply' if isinstance(exc, (RecursionError, MemoryError)) else exc
        raise LiteralError(f'cannot be parsed ({reason})') from None


def node_offset(source: str, node: ast.AST | None) -> int:
    """Character offset of ``node`` in ``source`` (ast columns count UTF-8 bytes), or -1."""
    if node is None or not hasattr(node, 'lineno'):
        return -1
    pos = 0
    for _ in range(node.lineno - 1):
        nxt = source.find('\n', pos)
        if nxt == -1:
            return -1
        pos = nxt + 1
    line_end = source.find('\n', pos)
    line = source[pos:] if line_end == -1 else source[pos:line_end]
    prefix = line.encode('utf-8', 'surrogatepass')[:node.col_offset]
    return pos + len(prefix.decode('utf-8', 'ignore'))


def literal_value(source: str) -> object:
    """Parse a Python literal (JSON-compatible result) from exactly ``source``."""
    node = parse_expression(source)
    try:
        return from_node(node)
    except RecursionError:
        raise LiteralError('nested too deeply') from None
    except LiteralError as exc:
        if exc.node is not None:
            exc.offset = node_offset(source, exc.node)
        raise


def read_value(text: str, start: int, ctx) -> tuple[int, object, int, str]:
    """
    Read the JSON (or Python-literal) value that opens at ``text[start]`` (a bracket).

    Returns ``(READ_OK, value, end, '')``; ``(READ_NEED, None, start, '')`` when the text may
    still complete it (streaming only); ``(READ_TRUNCATED, None, len(text), what was
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


def _read_value(text: str, start: int, ctx, memo) -> tuple[int, object, int, str]:
    if not ctx.final:
        closer = _CLOSERS.get(text[start])
        if closer is not None and text.find(closer, start + 1) == -1:
            # cannot be complete yet: skip the decoder (a failed decode raises, which costs
            # more than the rest of a streamed scan)
            return READ_NEED, None, start, ''
    state = -1
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
        stop = _WORD_CHARS.match(text, end).end() + 1 if state == BAD else end
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


def slice_problem(text: str, start: int, stop: int, ctx) -> str:
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
    stack = [(value, 1)]
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


def add_value_calls(value: object, fmt: str, ctx, start: int, end: int, items: list,
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


def add_entries(entries: list, fmt: str, ctx, start: int, end: int, items: list) -> None:
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


def call_from_node(node: ast.AST, view) -> tuple[str, dict | None, str, str]:
    """
    Read one pythonic ``name(kw=literal, ...)``: ``(name, arguments, '', '')`` or an error.

    Errors come back as ``(name, None, code, reason)``; positional arguments are mapped to
    the catalog's parameter order when the tool is known, else rejected.
    """
    if type(node) is not ast.Call:
        return '', None, INVALID_CALL, (
            f'expected a call like name(arg=value), got {_describe_node(node)}')
    func = node.func
    parts = []
    while type(func) is ast.Attribute:
        parts.append(func.attr)
        func = func.value
    if type(func) is not ast.Name:
        return '', None, INVALID_CALL, 'the called object is not a plain (dotted) name'
    parts.append(func.id)
    name = '.'.join(reversed(parts))
    arguments = {}
    if node.args:
        order = view.parameter_order(name)
        if order is None:
            return name, None, INVALID_CALL, (
                f'{name}() got {len(node.args)} positional argument(s) and the catalog has no '
                'parameter order for it; write name=value')
        if len(node.args) > len(order):
            return name, None, INVALID_CALL, (
                f'{name}() takes at most {len(order)} positional argument(s) '
                f'({", ".join(order) or "none"}), got {len(node.args)}')
        for pname, arg in zip(order, node.args):
            if type(arg) is ast.Starred:
                return name, None, INVALID_CALL, f"'*' unpacking in {name}() is not allowed"
            try:
                arguments[pname] = from_node(arg)
            except (LiteralError, RecursionError) as exc:
                return name, None, INVALID_CALL, f'argument {pname!r} of {name}(): {_reason(exc)}'
    for keyword in node.keywords:
        if keyword.arg is None:
            return name, None, INVALID_CALL, f"'**' unpacking in {name}() is not allowed"
        if keyword.arg in arguments:
            return name, None, INVALID_CALL, f'{name}() got argument {keyword.arg!r} twice'
        try:
            arguments[keyword.arg] = from_node(keyword.value)
        except (LiteralError, RecursionError) as exc:
            return name, None, INVALID_CALL, (
                f'argument {keyword.arg!r} of {name}(): {_reason(exc)}')
    return name, arguments, '', ''


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, LiteralError) else 'nested too deeply'
