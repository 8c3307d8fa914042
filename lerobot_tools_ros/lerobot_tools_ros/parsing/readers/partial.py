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
Read a call's streamable string argument while the call is still arriving.

A family's ``partial`` reads the call's header (its name, and where the argument's value
begins) and hands back a *value reader*: an object whose ``advance(text)`` returns
``(piece, closed)``, the decoded text that became final since its last call and whether the
value has certainly ended. A reader keeps its place between calls (``text`` only grows and
its start never moves while the call is pending), so a delta costs work in proportion to the
delta, not to the value pending before it: the stream tracker calls ``advance`` on every later
delta and never reads the header again. What a reader has given, joined, only grows and is a
prefix of the value the family's matcher reads once the call is complete. Anything that may
still change meaning is held back: the start of a closing tag, a newline the markup may drop,
an unfinished escape sequence, a high surrogate whose pair is not there. ``closed``: the
value's end (a JSON string's closing quote, a closing tag that no later text can turn into
text inside the value) has arrived, so all of it has been given (``registry.format_spec``'s
``partial`` contract). JSON objects may repeat a member, and the last one wins: a value
reported from the first is then not the call's (the dispatcher checks).

The readers: ``StringReader`` (a JSON string), ``EncodedReader`` (arguments given as a JSON
string holding the object, possibly encoded again) and ``VerbatimReader`` (a value running to
the first of some tags, losing one leading and one trailing newline).
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


class VerbatimReader:
    """
    A verbatim value from ``start`` to the first of ``tags``, read as it arrives.

    The value loses one leading and one trailing newline (``readers.text.strip_one_newline``)
    once it is complete; until then a leading newline not yet whole, a trailing newline and a
    trailing start of one of the tags are held back. ``closes(text, end)`` decides, once a tag
    is there (``end``: where the value stops), whether the value has certainly ended there
    (None: always); ``hold_at_tag``: a start of a tag just before that tag is held back too
    (the value then never closes before the call is complete). The tags are searched for only
    in the text that arrived since the last call (and the few characters before it a tag may
    begin in), so each call costs the new text's length.
    """

    __slots__ = ('_start', '_tags', '_longest', '_from', '_body', '_out', 'cut', '_closes',
                 '_hold_at_tag', 'closed')

    def __init__(self, start: int, tags: tuple[str, ...], closes=None,
                 hold_at_tag: bool = False) -> None:
        self._start = start
        self._tags = tags
        self._longest = max(map(len, tags))
        self._from = start  # no tag begins before this (searched up to here)
        self._body = -1  # where the value's text begins (-1: the leading newline undecided)
        self._out = start  # given up to here
        self.cut = -1  # where the first tag begins (-1: none yet)
        self._closes = closes
        self._hold_at_tag = hold_at_tag
        self.closed = False

    def advance(self, text: str) -> tuple[str, bool]:
        """Return the text that became final since the last call, and whether it is closed."""
        if self.closed:
            return '', True
        n = len(text)
        cut = self.cut
        searched = self._from
        lt = -1
        if cut == -1:
            lt = text.find('<', searched)  # every tag begins with '<'
            if lt != -1:
                for tag in self._tags:
                    found = text.find(tag, lt)
                    if found != -1 and (cut == -1 or found < cut):
                        cut = found
            if cut != -1:
                self.cut = cut
            else:
                self._from = n if lt == -1 else max(lt, n - self._longest + 1)
        end = cut if cut != -1 else n
        window = max(self._start, end - self._longest)
        unseen = cut != -1 or lt != -1 or window < searched  # a '<' may be in the window
        if (cut == -1 or self._hold_at_tag) and unseen:
            start = text.rfind('<', window, end)  # (none since the last search: no hold)
            if start != -1 and any(tag.startswith(text[start:end]) for tag in self._tags):
                end = start
        complete = cut != -1 and (self._closes is None or self._closes(text, end))
        body = self._body
        if body == -1:
            a = self._start
            if text.startswith('\r\n', a, end):
                body = a + 2
            elif text.startswith('\n', a, end):
                body = a + 1
            elif not complete and (end == a or (end == a + 1 and text[a] == '\r')):
                return '', False  # (a leading newline may still be stripped)
            else:
                body = a
            self._body = self._out = body
        stop = end
        if complete:
            if stop - 2 >= body and text.startswith('\r\n', stop - 2, stop):
                stop -= 2
            elif stop - 1 >= body and text[stop - 1] == '\n':
                stop -= 1
        else:
            if stop > body and text[stop - 1] == '\n':
                stop -= 1
            if stop > body and text[stop - 1] == '\r':
                stop -= 1
        out = self._out
        self.closed = complete
        if stop <= out:
            return '', complete
        self._out = stop
        return text[out:stop], complete


def function_prefix(text: str, k: int, view, close: str):
    """
    Read ``<function=NAME>...`` at ``k`` (``readers.xml_parameters``) still arriving.

    ``close`` is the wrapper's closing tag ('' for a bare function). Returns None until the
    name is known (or for a tool without a streamable argument), else ``(name, reader)``, the
    reader None until the argument's value begins. The streamed value is the text after
    ``<parameter=ARG>`` up to the first tag that may end it or open a literal nested call; a
    ``</parameter>`` that turns out to be text inside the value holds the rest back until the
    call is complete (the complete call carries it). The value is closed at a ``</parameter>``
    before any other tag once the markup certainly continues after it: ``</function>``, the
    wrapper's closing tag, or a whole ``<parameter=NAME>`` of a parameter the tool's schema has.
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
            return name, None
        j = i + len(PARAM)
        e = match_end(NAME, text, j)
        if e >= len(text) or text[e] != '>':
            return name, None
        if text[j:e].strip() == argument:
            props = view.properties(name)

            def closes(text: str, end: int) -> bool:
                return text.startswith(PARAM_END, end) and _continues(
                    text, end + len(PARAM_END), close, props)
            return name, VerbatimReader(e + 1, tags, closes, hold_at_tag=True)
        end = text.find(PARAM_END, e)
        if end == -1:
            return name, None
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


def key_value_prefix(text: str, k: int, argument: str):
    """
    Find ``argument`` in GLM-style pairs at ``k`` (``readers.key_values``): its reader or None.

    The first ``</arg_value>`` ends a value, so the value is closed there; until then a
    trailing newline (which the complete value loses) and a trailing start of
    ``</arg_value>`` are held back (``VerbatimReader``). None while the value has not begun.
    """
    n = len(text)
    while text.startswith(KEY, k):
        key_end = text.find(KEY_END, k)
        close = text.find(CLOSE, k)
        if key_end == -1 or (close != -1 and close < key_end):
            return None  # the key still arriving, or a malformed pair
        key = text[k + len(KEY):key_end].strip()
        v = skip_ws(text, key_end + len(KEY_END))
        if not text.startswith(VALUE, v):
            if v >= n or VALUE.startswith(text[v:v + len(VALUE)]) or key == argument:
                return None  # undecided yet, or a key without a value ('')
            k = v  # a key without a value
            continue
        v += len(VALUE)
        if key == argument:
            return VerbatimReader(v, (VALUE_END,))
        end = text.find(VALUE_END, v)
        if end == -1:
            return None
        k = skip_ws(text, end + len(VALUE_END))
    return None


class StringReader:
    r"""
    The JSON string whose opening quote is at ``start``, decoded as it arrives.

    Decoding stops before an unfinished or invalid escape (the complete call then reports the
    problem) and before a ``\u`` high surrogate whose low half has not arrived; the next call
    resumes there.
    """

    __slots__ = ('_k', 'closed')

    def __init__(self, start: int) -> None:
        self._k = start + 1  # decoded up to here
        self.closed = False

    def advance(self, text: str) -> tuple[str, bool]:
        """Return the text decoded since the last call, and whether the closing quote came."""
        if self.closed:
            return '', True
        out = []
        n = len(text)
        k = start = self._k
        while k < n:
            found = _QUOTE_OR_ESCAPE(text, k)
            if found is None:
                break
            k = found.start()
            out.append(text[start:k])
            if text[k] == '"':
                self._k = k + 1
                self.closed = True
                return ''.join(out), True
            self._k = k  # (an escape that is not whole resumes here)
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
        self._k = n
        return ''.join(out), False


def json_string_prefix(text: str, i: int) -> tuple[str, bool]:
    """Decode the JSON string whose opening quote is at ``text[i]`` as far as it is final."""
    return StringReader(i).advance(text)


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

    Returns None or ``(name, reader)`` (see ``json_value_call_prefix``);
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
    prose; with ``parameters`` it is Llama's). Returns None or ``(name, reader)``.
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
    ``(name, reader)`` with ``reader`` None until that argument's string value begins (see
    ``member_prefix``).
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
                return name, arguments_prefix(text, k, argument_of(name))
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
    return name, None


_MAX_ENCODINGS = 3  # JSON strings inside JSON strings (as readers.json_values.decode_arguments)


def arguments_prefix(text: str, k: int, argument: str, encodings: int = 0):
    r"""
    Find ``argument`` in the arguments value at ``k``: its reader, or None (not begun).

    The value is an object, or a JSON string holding one (``"{\"text\": \"Hi"``, possibly
    encoded again, ``encodings`` times so far): the string's decoded prefix is itself a prefix
    of the object's text, so the object is read from it the same way (``EncodedReader``).
    """
    if text[k] == '{':
        return member_prefix(text, k, argument)
    if text[k] != '"' or encodings >= _MAX_ENCODINGS:
        return None
    return EncodedReader(k, argument, encodings + 1)


class EncodedReader:
    """
    Arguments given as a JSON string at ``start`` holding the object: decoded as it arrives.

    The decoded text grows in place; the argument is read from it by the reader
    ``arguments_prefix`` finds there once its value begins (until then the object's header is
    read again per call, which costs the header's length, not the value's).
    """

    __slots__ = ('_outer', '_decoded', '_inner', '_argument', '_encodings', '_at')

    def __init__(self, start: int, argument: str, encodings: int) -> None:
        self._outer = StringReader(start)
        self._decoded = ''
        self._inner = None
        self._argument = argument
        self._encodings = encodings
        self._at = -1  # where the decoded object begins (-1: not yet known)

    @property
    def closed(self) -> bool:
        """Whether the argument's value has ended (in the decoded object)."""
        return self._inner is not None and self._inner.closed

    def advance(self, text: str) -> tuple[str, bool]:
        """Return the argument's text decoded since the last call, and whether it is closed."""
        piece = self._outer.advance(text)[0]
        decoded = self._decoded
        self._decoded = ''
        decoded += piece  # (grows in place: this is its only reference)
        self._decoded = decoded
        inner = self._inner
        if inner is None:
            at = self._at
            if at == -1:
                body = decoded.lstrip()  # decode_arguments strips the string
                if not body:
                    return '', False
                at = self._at = len(decoded) - len(body)
            if decoded[at] not in '{"':
                return '', False  # not an object: nothing to stream (the matcher reports it)
            inner = self._inner = arguments_prefix(decoded, at, self._argument,
                                                   self._encodings)
            if inner is None:
                return '', False
        return inner.advance(decoded)


def member_prefix(text: str, i: int, argument: str):
    """
    Find the string member ``argument`` of the object at ``i``: its ``StringReader`` or None.

    None while the member has not begun (or when its value is not a string).
    """
    members = _members(text, i)
    try:
        key, k = next(members)
        while True:
            if key == argument:
                if text[k] != '"':
                    return None
                return StringReader(k)
            end = _skip_value(text, k)
            if end is None:
                return None
            key, k = members.send(end)
    except StopIteration:
        return None
