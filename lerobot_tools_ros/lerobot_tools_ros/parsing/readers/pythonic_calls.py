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
Pythonic calls: ``name(arg=literal, ...)`` and lists of them, read without evaluating anything.

The extent of a call is found by the bracket scanner first (``json_values.scan_brackets``);
then ``ast.parse`` reads exactly that slice and only literal nodes are converted. JSON's
``true``/``false``/``null`` are accepted as values; positional arguments follow the catalog's
parameter order. A list that does not parse as a whole is read item by item, so a good call
survives a broken one.

``read_call``/``read_list`` return ``(end, parts)``; each part is ``(code, name, arguments,
reason)`` with code '' for a call. ``finish`` turns parts into items once the caller knows
where the markup ends (a wrapper may add a closing token).
"""

import ast

from .json_values import BAD, block_end, scan_brackets, split_items, unbalanced_quote, UNCLOSED
from .literals import describe_node, from_node, LiteralError, parse_expression
from .text import IDENT, name_at, short, skip_ws
from ..answers import NEED_ANY, NeedMore, Skip
from ..context import Ctx
from ..registry import CatalogView
from ..results import INVALID_CALL, TRUNCATED, UNPARSEABLE_ARGUMENTS

_EXPECTED = 'expected name(arg=value, ...)'
# While a call or list is open, only a closing bracket can decide it: its own closes it, and
# any other ends the malformed block (``block_end`` counts brackets of every kind).
_NEED_CLOSER = NeedMore((')', ']', '}'))
_EXPECTED_LIST = 'expected [name(arg=value, ...), ...]'
_STRAY_QUOTE = ('a string in it is never closed (an unbalanced quote; the closing brackets come '
                'later in the text, so it did not end inside the call)')


def finish(parts: list, ctx: Ctx, fmt: str, start: int, stop: int, builtin: bool = False) -> list:
    """Turn parts into ParsedCall/ParseIssue items spanning ``[start, stop)``."""
    items: list = []
    for code, name, arguments, reason in parts:
        if builtin and name.endswith('.call'):
            name = name[:-5]  # Llama 3.1 built-in tools: brave_search.call(query=...)
        if code:
            items.append(ctx.issue(code, f'{fmt} call at chars {ctx.base + start}-'
                                   f'{ctx.base + stop}: {reason}', start, stop, fmt, name))
        else:
            ctx.add_call(items, name, arguments, fmt, start, stop)
    return items


def _from_nodes(nodes: list, ctx: Ctx) -> list:
    parts = []
    for node in nodes:
        name, arguments, code, reason = call_from_node(node, ctx.view)
        parts.append((code, name, arguments, reason))
    return parts


def read_named_call(text: str, start: int, ctx: Ctx):
    """Read ``name(...)`` at ``start``; None when no call starts there (NEED_ANY: can't tell)."""
    ident = IDENT.match(text, start)
    if ident is None:
        return None
    if ident.end() >= len(text):
        return NEED_ANY if not ctx.final else None
    if text[ident.end()] != '(':
        return None
    return read_call(text, start, ctx)


def read_call(text: str, start: int, ctx: Ctx):
    """Read ``name(...)`` at ``start`` (known to be a name followed by ``(``)."""
    name = name_at(text, start)
    paren = start + len(name)
    state, end, note = scan_brackets(text, paren, True, ctx)
    if state == UNCLOSED:
        if not ctx.final:
            return _NEED_CLOSER
        stray = unbalanced_quote(text, paren, ctx, note)
        if stray != -1:
            return stray, [(UNPARSEABLE_ARGUMENTS, name, None, f'{_STRAY_QUOTE}; {_EXPECTED}')]
        return len(text), [(TRUNCATED, name, None, f'the text ended inside {name}(...) '
                            f'({note})')]
    if state == BAD:
        block = block_end(text, paren, ctx)
        if block is None:
            return _NEED_CLOSER
        return block, [(UNPARSEABLE_ARGUMENTS, name, None,
                        f'{note} at char {ctx.base + end}; {_EXPECTED}')]
    try:
        node = parse_expression(text[start:end])
    except LiteralError as exc:
        at = f' at char {ctx.base + start + exc.offset}' if exc.offset >= 0 else ''
        return end, [(UNPARSEABLE_ARGUMENTS, name, None,
                      f'not a valid call: {exc.message}{at}; {_EXPECTED}')]
    return end, _from_nodes([node], ctx)


def read_list(text: str, pos: int, ctx: Ctx, report_all: bool):
    """
    Read ``[name(...), ...]`` at ``pos`` (known to start with ``[ name(``).

    Returns ``(end, parts)``, NeedMore, or Skip when it is not a call list and nothing needs
    reporting (a first name outside the catalog, unless ``report_all``). A broken list whose
    first name is outside the catalog is still read item by item when its brackets close and
    another item is a valid call of a catalog tool: that call survives its unparseable
    sibling.
    """
    n = len(text)
    first = name_at(text, skip_ws(text, pos + 1))
    names = ctx.view.names
    report = report_all or names is None or first in names
    state, end, note = scan_brackets(text, pos, True, ctx)
    if state == UNCLOSED:
        if not ctx.final:
            return _NEED_CLOSER
        if not report:
            return Skip(n)
        stray = unbalanced_quote(text, pos, ctx, note)
        if stray != -1:
            return stray, [(UNPARSEABLE_ARGUMENTS, first, None,
                            f'{_STRAY_QUOTE}; {_EXPECTED_LIST}')]
        return n, [(TRUNCATED, first, None, f'the text ended inside the list ({note})')]
    if state == BAD:
        if not report:
            return Skip(end)
        block = block_end(text, pos, ctx)
        if block is None:
            return _NEED_CLOSER
        return block, _salvage(text, pos, block, ctx) or [
            (UNPARSEABLE_ARGUMENTS, first, None,
             f'{note} at char {ctx.base + end}; {_EXPECTED_LIST}')]
    try:
        node = parse_expression(text[pos:end])
    except LiteralError as exc:
        if not report:
            if _has_call(text, pos, end, ctx):
                return end, _salvage(text, pos, end, ctx)
            return Skip(end)
        at = f' at char {ctx.base + pos + exc.offset}' if exc.offset >= 0 else ''
        return end, _salvage(text, pos, end, ctx) or [
            (UNPARSEABLE_ARGUMENTS, first, None, f'not a valid list of calls: '
             f'{exc.message}{at}; {_EXPECTED_LIST}')]
    if type(node) is not ast.List or not all(type(elt) is ast.Call for elt in node.elts):
        if not report:
            return Skip(end)
        return end, _salvage(text, pos, end, ctx) or [
            (INVALID_CALL, first, None, 'expected a list of calls only, like '
             '[say(text="hi"), record_observation(label="cup")]')]
    return end, _from_nodes(node.elts, ctx)


def _salvage(text: str, pos: int, end: int, ctx: Ctx) -> list:
    """
    Read a broken list of calls item by item, so a good call survives a broken sibling.

    Returns one part per item (a call, or the issue of that item), or [] when no item is a
    call (the list is then reported whole).
    """
    items = split_items(text, pos + 1, end - 1)
    if len(items) < 2:
        return []
    parts: list[tuple[str, str, dict | None, str]] = []
    for index, (a, b) in enumerate(items, 1):
        source = text[a:b]
        found = IDENT.match(source)
        name = found.group() if found else ''
        try:
            node = parse_expression(source)
        except LiteralError as exc:
            parts.append((UNPARSEABLE_ARGUMENTS, name, None, f'item {index} of the list '
                          f'({short(source)}) is not a valid call: {exc.message}; {_EXPECTED}'))
            continue
        name, arguments, code, reason = call_from_node(node, ctx.view)
        if code:
            reason = f'item {index} of the list: {reason}'
        parts.append((code, name or (found.group() if found else ''), arguments, reason))
    return parts if any(not part[0] for part in parts) else []


def _has_call(text: str, pos: int, end: int, ctx: Ctx) -> bool:
    """Whether an item of the broken list ``text[pos:end]`` is a valid call of a known tool."""
    return bool(_salvage(text, pos, end, ctx))


def list_start(text: str, pos: int, ctx: Ctx):
    """Tell whether ``[`` at ``pos`` opens ``[name(`` (True/False; NEED_ANY: undecided)."""
    n = len(text)
    k = skip_ws(text, pos + 1)
    if k >= n:
        return NEED_ANY if not ctx.final else False
    ident = IDENT.match(text, k)
    if ident is None:
        return False
    e = ident.end()
    if e >= n:
        return NEED_ANY if not ctx.final else False
    return text[e] == '('


def call_from_node(node: ast.AST, view: CatalogView) -> tuple[str, dict | None, str, str]:
    """
    Read one pythonic ``name(kw=literal, ...)``: ``(name, arguments, '', '')`` or an error.

    Errors come back as ``(name, None, code, reason)``; positional arguments are mapped to
    the catalog's parameter order when the tool is known, else rejected.
    """
    if type(node) is not ast.Call:
        return '', None, INVALID_CALL, (
            f'expected a call like name(arg=value), got {describe_node(node)}')
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
