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
Read a call's streamable string argument while the call is still arriving (issue 32).

Each helper returns the decoded text *known to be final so far*: it only grows as the text
grows, and is a prefix of the value the family's matcher reads once the call is complete.
Anything that may still change meaning is held back: the start of a closing tag, a newline
the markup may drop, an unfinished escape sequence, a high surrogate whose pair is not there.
Most also say whether the value is *closed*: its end (a JSON string's closing quote, a closing
tag that no later text can turn into text inside the value) has arrived, so the text is all of
it (``registry.format_spec``'s ``partial`` contract). JSON objects may repeat a member, and the
last one wins: a value reported from the first is then not the call's (the dispatcher checks).
"""

import json
import re

from .key_values import CLOSE, KEY, KEY_END, VALUE, VALUE_END
from .text import match_end, skip_ws
from .xml_parameters import FUNC, FUNC_END, NAME, OPEN, PARAM, PARAM_END

_DECODER = json.JSONDecoder(strict=False)  # as readers.json_values: raw newlines in strings
_ESCAPES = {'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r',
            't': '\t'}
_HEX = frozenset('0123456789abcdefABCDEF')
_QUOTE_OR_ESCAPE = re.compile(r'["\\]').search


def hold_partial_tag(raw: str, tags: tuple[str, ...]) -> str:
    """Cut ``raw`` before the first of ``tags`` or before a trailing start of one of them."""
    cut = len(raw)
    for tag in tags:
        found = raw.find(tag)
        if found != -1 and found < cut:
            cut = found
    raw = raw[:cut]
    start = raw.rfind('<', max(0, len(raw) - max(map(len, tags))))
    if start != -1 and any(tag.startswith(raw[start:]) for tag in tags):
        raw = raw[:start]
    return raw


def verbatim_prefix(raw: str, complete: bool) -> str:
    """
    Return what is final of a verbatim value that loses one leading and one trailing newline.

    ``complete``: ``raw`` is the whole value (``readers.text.strip_one_newline`` applies);
    otherwise a leading newline not yet whole and any trailing newline are held back.
    """
    if raw.startswith('\r\n'):
        raw = raw[2:]
    elif raw.startswith('\n'):
        raw = raw[1:]
    elif raw == '\r' and not complete:
        return ''
    if complete:
        if raw.endswith('\r\n'):
            return raw[:-2]
        return raw[:-1] if raw.endswith('\n') else raw
    if raw.endswith('\n'):
        raw = raw[:-1]
    return raw[:-1] if raw.endswith('\r') else raw


def function_prefix(text: str, k: int, view, close: str):
    """
    Read ``<function=NAME>...`` at ``k`` (``readers.xml_parameters``) still arriving.

    ``close`` is the wrapper's closing tag ('' for a bare function). Returns None until the
    name is known (or for a tool without a streamable argument), else ``(name, text so far,
    closed)``. The streamed value is the text after ``<parameter=ARG>`` up to the first tag
    that may end it or open a literal nested call; a ``</parameter>`` that turns out to be
    text inside the value holds the rest back until the call is complete (the complete call
    carries it). The value is closed at a ``</parameter>`` before any other tag once the
    markup certainly continues after it: ``</function>``, the wrapper's closing tag, or a
    whole ``<parameter=NAME>`` of a parameter the tool's schema has.
    """
    if not text.startswith(FUNC, k):
        return None
    i = k + len(FUNC)
    e = match_end(NAME, text, i)
    if e >= len(text) or text[e] != '>':
        return None
    name = text[i:e].strip()
    argument = view.streamable.get(name)
    if not argument:
        return None
    tags = _VALUE_TAGS + ((close, '<' + close[2:]) if close else ())
    i = e + 1
    while True:
        i = skip_ws(text, i)
        if not text.startswith(PARAM, i):
            return name, None, False
        j = i + len(PARAM)
        e = match_end(NAME, text, j)
        if e >= len(text) or text[e] != '>':
            return name, None, False
        if text[j:e].strip() == argument:
            raw = hold_partial_tag(text[e + 1:], tags)
            end = e + 1 + len(raw)
            if text.startswith(PARAM_END, end) and _continues(
                    text, end + len(PARAM_END), close, view.properties(name)):
                return name, verbatim_prefix(raw, True), True
            return name, verbatim_prefix(raw, False), False
        end = text.find(PARAM_END, e)
        if end == -1:
            return name, None, False
        i = end + len(PARAM_END)


# what may end a streamed <parameter=...> value or open a literal nested call in it
_VALUE_TAGS = (PARAM_END, PARAM, FUNC_END, CLOSE, OPEN, FUNC)


def _continues(text: str, a: int, close: str, props) -> bool:
    """Whether the function's markup certainly continues at ``a``, after a ``</parameter>``."""
    a = skip_ws(text, a)
    if text.startswith(FUNC_END, a) or (close and text.startswith(close, a)):
        return True
    if not text.startswith(PARAM, a):
        return False
    e = match_end(NAME, text, a + len(PARAM))
    return e < len(text) and text[e] == '>' and (
        not props or text[a + len(PARAM):e].strip() in props)


def key_value_prefix(text: str, k: int, argument: str) -> tuple[str | None, bool]:
    """
    Read ``argument`` from GLM-style pairs at ``k`` (``readers.key_values``) so far.

    Returns ``(prefix or None, closed)``. The first ``</arg_value>`` ends a value, so the value
    is closed there; until then a trailing newline (which the complete value loses) and a
    trailing start of ``</arg_value>`` are held back.
    """
    n = len(text)
    while text.startswith(KEY, k):
        key_end = text.find(KEY_END, k)
        close = text.find(CLOSE, k)
        if key_end == -1 or (close != -1 and close < key_end):
            return None, False  # the key still arriving, or a malformed pair
        key = text[k + len(KEY):key_end].strip()
        v = skip_ws(text, key_end + len(KEY_END))
        if not text.startswith(VALUE, v):
            if v >= n or VALUE.startswith(text[v:v + len(VALUE)]) or key == argument:
                return None, False  # undecided yet, or a key without a value ('')
            k = v  # a key without a value
            continue
        v += len(VALUE)
        end = text.find(VALUE_END, v)
        if key == argument:
            if end != -1:
                return verbatim_prefix(text[v:end], True), True
            return verbatim_prefix(hold_partial_tag(text[v:], (VALUE_END,)), False), False
        if end == -1:
            return None, False
        k = skip_ws(text, end + len(VALUE_END))
    return None, False


def json_string_prefix(text: str, i: int) -> tuple[str, bool]:
    r"""
    Decode the JSON string whose opening quote is at ``text[i]`` as far as it is final.

    Returns ``(decoded, closed)``. Decoding stops before an unfinished or invalid escape (the
    complete call then reports the problem) and before a ``\u`` high surrogate whose low half
    has not arrived.
    """
    out = []
    n = len(text)
    k = i + 1
    start = k
    while k < n:
        found = _QUOTE_OR_ESCAPE(text, k)
        if found is None:
            break
        k = found.start()
        if text[k] == '"':
            out.append(text[start:k])
            return ''.join(out), True
        out.append(text[start:k])
        if k + 1 >= n:
            return ''.join(out), False
        code = text[k + 1]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            k += 2
        elif code == 'u':
            unit = _unit(text, k)
            if unit is None:
                return ''.join(out), False
            k += 6
            if 0xD800 <= unit < 0xDC00:
                if k + 6 > n and text.startswith('\\u'[:n - k], k):
                    return ''.join(out), False  # the low half may still come
                low = _unit(text, k) if text.startswith('\\u', k) else None
                if low is not None and 0xDC00 <= low < 0xE000:
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    k += 6
            out.append(chr(unit))
        else:
            return ''.join(out), False  # an invalid escape: the complete call reports it
        start = k
    out.append(text[start:])
    return ''.join(out), False


def _unit(text: str, k: int) -> int | None:
    r"""Return the code unit of the ``\uXXXX`` at ``k``, or None when it is not all there."""
    digits = text[k + 2:k + 6]
    if len(digits) < 4 or not _HEX.issuperset(digits):
        return None
    return int(digits, 16)


def _skip_value(text: str, i: int) -> int | None:
    """Return the end of the complete JSON value at ``i``, or None (incomplete or not JSON)."""
    try:
        return _DECODER.raw_decode(text, i)[1]
    except ValueError:
        return None


def _members(text: str, i: int):
    """
    Yield ``(key, value index)`` for the members of the JSON object at ``text[i] == '{'``.

    Stops at the first member that is not complete up to its value's first character; the
    caller skips (``_skip_value``) the values it does not read, and sends the index on.
    """
    n = len(text)
    i = skip_ws(text, i + 1)
    while i < n and text[i] == '"':
        key, closed = json_string_prefix(text, i)
        if not closed:
            return
        i = skip_ws(text, _string_end(text, i))
        if i >= n or text[i] != ':':
            return
        i = skip_ws(text, i + 1)
        if i >= n:
            return
        end = yield key, i
        if end is None:
            return
        i = skip_ws(text, end)
        if i >= n or text[i] != ',':
            return
        i = skip_ws(text, i + 1)


def _string_end(text: str, i: int) -> int:
    """Return the index after the closed JSON string whose opening quote is at ``i``."""
    k = i + 1
    while True:
        ch = text[k]
        if ch == '\\':
            k += 2
        elif ch == '"':
            return k + 1
        else:
            k += 1


def tagged_json_call_prefix(text: str, tag: str, view):
    """
    Read ``TAG {"name": ..., "arguments": {...`` still arriving (``TAG [...`` too).

    Returns None or ``(name, prefix, closed)`` (see ``json_value_call_prefix``);
    ``view.streamable`` maps a tool name to its streamable argument.
    """
    if not text.startswith(tag):
        return None
    k = skip_ws(text, len(tag))
    if k >= len(text) or text[k] not in '{[':
        return None
    return json_value_call_prefix(text, k, lambda name: view.streamable.get(name, ''), True)


def json_value_call_prefix(text: str, i: int, argument_of, explicit: bool):
    """
    Read the first call of a JSON call value at ``text[i]`` (``{`` or ``[``) still arriving.

    The shapes of ``readers.json_calls``: one call object (see ``json_call_prefix``), a list
    whose first item is one, and ``{"tool_calls": [...]}`` (an assistant message: its other
    members may come first). Only the first call is read; the rest wait to be complete.
    ``explicit``: the value sits where only calls go (a call tag), so ``{"name": ...}`` is a
    call before its arguments begin, and ``parameters`` may stand for ``arguments``; in prose
    (``openai_json``) an object is reported once its ``arguments`` begin (before, it may be
    prose; with ``parameters`` it is Llama's). Returns None or ``(name, prefix, closed)``.
    """
    keys = ('arguments', 'parameters') if explicit else ('arguments',)
    if text[i] == '[':
        k = skip_ws(text, i + 1)
        if k >= len(text) or text[k] != '{':
            return None
        return json_call_prefix(text, k, argument_of, keys, explicit)
    members = _members(text, i)
    try:
        key, k = next(members)
        while key != 'tool_calls':
            end = _skip_value(text, k)
            if end is None:  # a call object (or prose) still arriving
                return json_call_prefix(text, i, argument_of, keys, explicit)
            key, k = members.send(end)
    except StopIteration:
        return json_call_prefix(text, i, argument_of, keys, explicit)
    if text[k] == '[':
        k = skip_ws(text, k + 1)
    if k >= len(text) or text[k] != '{':
        return None
    return json_call_prefix(text, k, argument_of, ('arguments', 'parameters'), True)


def json_call_prefix(text: str, i: int, argument_of,
                     argument_keys: tuple[str, ...] = ('arguments', 'parameters'),
                     explicit: bool = True):
    """
    Read ``{"name": ..., "arguments": {..., ARG: "..."}}`` at ``text[i] == '{'`` so far.

    ``{"type": "function", "function": {...}}`` too, and ``arguments`` given as a JSON string
    holding the object (see ``arguments_prefix``). ``argument_of(name)`` gives the tool's
    streamable argument ('' for none). Returns None until the name is known (it must come
    before the arguments) and, unless ``explicit``, until the arguments begin; else
    ``(name, prefix, closed)`` with ``prefix`` None until that argument's string value begins
    and ``closed`` once its closing quote is there (see ``member_prefix``).
    """
    name = None
    members = _members(text, i)
    try:
        key, k = next(members)
        while True:
            if key == 'function' and text[k] == '{':
                return json_call_prefix(text, k, argument_of)  # the call object is in there
            if key == 'name' and name is None:
                if text[k] != '"':
                    return None
                value, closed = json_string_prefix(text, k)
                if not closed:
                    return None
                name = value
                end = _string_end(text, k)
            elif key in argument_keys:
                if name is None or not argument_of(name):
                    return None
                return (name,) + arguments_prefix(text, k, argument_of(name))
            else:
                skipped = _skip_value(text, k)
                if skipped is None:
                    break
                end = skipped
            key, k = members.send(end)
    except StopIteration:
        pass
    if name is None or not explicit or not argument_of(name):
        return None
    return name, None, False


_MAX_ENCODINGS = 3  # JSON strings inside JSON strings (as readers.json_values.decode_arguments)


def arguments_prefix(text: str, k: int, argument: str) -> tuple[str | None, bool]:
    r"""
    Read ``argument`` of the arguments value at ``k`` so far: ``(prefix or None, closed)``.

    The value is an object, or a JSON string holding one (``"{\"text\": \"Hi"``, possibly
    encoded again): the string's decoded prefix is itself a prefix of the object's text, so
    the object is read from it the same way.
    """
    for _ in range(_MAX_ENCODINGS + 1):
        if text[k] == '{':
            return member_prefix(text, k, argument)
        if text[k] != '"':
            return None, False
        text = json_string_prefix(text, k)[0].lstrip()  # decode_arguments strips the string
        if not text:
            return None, False
        k = 0
    return None, False


def member_prefix(text: str, i: int, argument: str) -> tuple[str | None, bool]:
    """
    Decode the string member ``argument`` of the object at ``i`` so far.

    Returns ``(prefix, closed)``: prefix None while the member has not begun; ``closed`` once
    its string's closing quote is there (its whole value is known).
    """
    members = _members(text, i)
    try:
        key, k = next(members)
        while True:
            if key == argument:
                if text[k] != '"':
                    return None, False
                return json_string_prefix(text, k)
            end = _skip_value(text, k)
            if end is None:
                return None, False
            key, k = members.send(end)
    except StopIteration:
        return None, False
