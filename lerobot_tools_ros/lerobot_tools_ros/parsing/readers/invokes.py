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
``<invoke name="NAME"><parameter name="K">V</parameter></invoke>`` blocks.

MiniMax-M2 (no prefix), DeepSeek-V3.2's DSML (``｜DSML｜`` prefix, with ``string="true"`` or
``"false"`` on each parameter) and Step-3 (``steptml:`` prefix) write calls this way. Values are
typed by the catalog schema like Qwen3-Coder's (``string="true"`` keeps the text;
``string="false"`` reads JSON).
"""

import re

from .json_values import decode_json, READ_NEED, READ_OK, read_value, slice_problem
from .text import short, skip_ws
from .typed_values import typed_value
from ..answers import Match, need_closing, NeedMore
from ..context import Ctx
from ..results import TRUNCATED, UNPARSEABLE_ARGUMENTS

_NEED_GT = NeedMore(('>',))  # a tag's attributes until its '>'
_ATTRS = re.compile(r'\s*name\s*=\s*(?:"([^"<>]*)"|\'([^\'<>]*)\')'
                    r'(?:\s+string\s*=\s*"(true|false)")?\s*>')


class Invokes:
    """
    The tag names of one family: ``<{prefix}invoke ...>`` and ``<{prefix}parameter ...>``.

    ``exact``: a string value is the text between the tags exactly (Step-3: leading and trailing
    whitespace and newlines are data); otherwise one leading and one trailing newline are the
    markup's own (``typed_value``). ``json_body``: an invoke may hold one JSON object instead of
    parameter tags (DeepSeek V3.2).
    """

    def __init__(self, prefix: str, fmt: str, *, exact: bool = False,
                 json_body: bool = False) -> None:
        self.fmt = fmt
        self.invoke = f'<{prefix}invoke'
        self.invoke_end = f'</{prefix}invoke>'
        self.param = f'<{prefix}parameter'
        self.param_end = f'</{prefix}parameter>'
        self.exact = exact
        self.json_body = json_body


def _attrs(text: str, i: int, tag: str, ctx: Ctx):
    """Read ``name="..." [string="..."]>`` after ``tag`` at ``i``: (name, string, end)."""
    found = _ATTRS.match(text, i + len(tag))
    if found is None:
        if not ctx.final and '>' not in text[i:i + 300] and len(text) - i < 300:
            return _NEED_GT
        return None
    return found.group(1) if found.group(1) is not None else found.group(2), found.group(3), \
        found.end()


def read_invokes(text: str, k: int, pos: int, close: str, tags: Invokes, ctx: Ctx):
    """
    Read invoke blocks from ``k`` until ``close`` (the wrapper's closing tag).

    Returns ``(end, items)`` with a ParsedCall or ParseIssue per invoke, or what the matcher
    should return (NeedMore, or a truncated Match).
    """
    n = len(text)
    calls: list = []
    i = k
    key = (ctx.base + k, 'invokes', tags.fmt, close)
    state = ctx.recall(key)
    if state is not None:  # the invokes already complete in an earlier feed
        i = state[0] - ctx.base
        calls = list(state[1])
    while True:
        i = skip_ws(text, i)
        if text.startswith(close, i):
            end = i + len(close)
            break
        if i >= n or (not ctx.final and close.startswith(text[i:i + len(close)])) or (
                not ctx.final and tags.invoke.startswith(text[i:i + len(tags.invoke)])
                and n - i < len(tags.invoke)):
            if not ctx.final:
                return need_closing(close, tags.invoke)
            return Match(n, [ctx.issue(TRUNCATED, f'call block at char {ctx.base + pos}: the '
                                       f'text ended before {close!r}', pos, n, tags.fmt,
                                       calls[-1][0] if calls else '')])
        if not text.startswith(tags.invoke, i):
            end = i  # the wrapper's closing tag is missing; the block ends here
            break
        result = _read_invoke(text, i, pos, tags, ctx)
        if type(result) is not tuple:
            return result
        calls.append(result[1:])
        i = result[0]
        ctx.remember(key, (ctx.base + i, tuple(calls)))
    items: list = []
    for name, arguments, problem in calls:
        if problem:
            items.append(ctx.issue(UNPARSEABLE_ARGUMENTS, f'call {name!r} at char '
                                   f'{ctx.base + pos}: {problem}', pos, end, tags.fmt, name))
        else:
            ctx.add_call(items, name, arguments, tags.fmt, pos, end)
    return end, items


def _read_invoke(text: str, i: int, pos: int, tags: Invokes, ctx: Ctx):
    """One ``<invoke name=...>...</invoke>``: ``(end, name, arguments, problem)``."""
    n = len(text)
    head = _attrs(text, i, tags.invoke, ctx)
    if head is None or head is _NEED_GT:
        return head if head is not None else Match(i + len(tags.invoke), [ctx.issue(
            UNPARSEABLE_ARGUMENTS, f'{tags.invoke} at char {ctx.base + i}: expected '
            f'{tags.invoke} name="NAME">', pos, i + len(tags.invoke), tags.fmt)])
    name, _, j = head
    props = ctx.view.properties(name)
    arguments: dict = {}
    problems: list[str] = []
    if tags.json_body:
        j = skip_ws(text, j)
        if j < n and text[j] == '{':
            return _json_invoke(text, i, j, pos, name, tags, ctx)
    key = (ctx.base + i, 'invoke', tags.fmt)
    state = ctx.recall(key)
    if state is not None:  # the parameters already complete in an earlier feed
        j = state[0] - ctx.base
        arguments = dict(state[1])
        problems = list(state[2])
    while True:
        j = skip_ws(text, j)
        if text.startswith(tags.invoke_end, j):
            return j + len(tags.invoke_end), name, arguments, '; '.join(problems)
        if j >= n:
            if not ctx.final:  # what comes next decides: another parameter, </invoke>, or
                return need_closing(tags.param, tags.invoke_end)  # text that ends the call
            return _truncated(text, pos, name, tags, ctx)
        if not text.startswith(tags.param, j):
            rest = text[j:j + len(tags.invoke_end)]
            if not ctx.final and (tags.invoke_end.startswith(rest) or (
                    len(rest) < len(tags.param) and tags.param.startswith(rest))):
                return need_closing(tags.param, tags.invoke_end)
            # a missing </invoke>: the call ends where the next tag starts
            return j, name, arguments, '; '.join(problems)
        attrs = _attrs(text, j, tags.param, ctx)
        if attrs is _NEED_GT:
            return attrs
        if attrs is None:
            problems.append(f'unreadable parameter tag at char {ctx.base + j}')
            j += len(tags.param)
            continue
        pname, string, start = attrs
        close = ctx.find(text, tags.param_end, start)
        if close == -1:
            return _truncated(text, pos, name, tags, ctx)
        raw = text[start:close]
        if pname in arguments:
            problems.append(f'parameter {pname!r} is given twice')
        else:
            arguments[pname] = _value(raw, string, props.get(pname), tags.exact)
        j = close + len(tags.param_end)
        ctx.remember(key, (ctx.base + j, dict(arguments), tuple(problems)))


def _json_invoke(text: str, i: int, j: int, pos: int, name: str, tags: Invokes, ctx: Ctx):
    """Read an invoke whose body is one JSON object: ``(end, name, arguments, problem)``."""
    n = len(text)
    status, value, end, _ = read_value(text, j, ctx)
    limit = ctx.find(text, tags.invoke_end, j)
    if status == READ_OK and (limit == -1 or end <= limit):
        if type(value) is not dict:
            return _json_problem(text, pos, name, tags, ctx, limit,
                                 f'the JSON body is not an object ({short(value)})')
        k = skip_ws(text, end)
        if text.startswith(tags.invoke_end, k):
            return k + len(tags.invoke_end), name, value, ''
        if not ctx.final and (k >= n or tags.invoke_end.startswith(
                text[k:k + len(tags.invoke_end)])):
            return need_closing(tags.invoke_end)
        return end, name, value, ''  # a missing </invoke>: the call ends with its object
    if limit == -1:
        if status == READ_NEED or not ctx.final:
            return NeedMore(('}', tags.invoke_end))
        return _truncated(text, pos, name, tags, ctx)
    problem = slice_problem(text, j, limit, ctx)
    return _json_problem(text, pos, name, tags, ctx, limit, 'the JSON body is not an object '
                         f'that ends before {tags.invoke_end} ({problem})')


def _json_problem(text: str, pos: int, name: str, tags: Invokes, ctx: Ctx, limit: int,
                  problem: str):
    """Report a JSON body that is no arguments object: the invoke runs to its closing tag."""
    if limit == -1:
        return _truncated(text, pos, name, tags, ctx)
    return limit + len(tags.invoke_end), name, {}, problem


def _value(raw: str, string: str | None, schema: object, exact: bool) -> object:
    if string == 'true':
        return raw
    if string == 'false':
        try:
            return decode_json(raw.strip())
        except (ValueError, RecursionError):
            pass
    return typed_value(raw, schema, exact)


def _truncated(text: str, pos: int, name: str, tags: Invokes, ctx: Ctx):
    if not ctx.final:
        return NeedMore((tags.param_end, tags.invoke_end))
    n = len(text)
    return Match(n, [ctx.issue(TRUNCATED, f'call {name!r} starting at char {ctx.base + pos}: '
                               f'the text ended inside it', pos, n, tags.fmt, name)])
