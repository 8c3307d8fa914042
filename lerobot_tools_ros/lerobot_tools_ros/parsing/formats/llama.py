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
Llama 3.x JSON: ``<|python_tag|>{"name": "say", "parameters": {...}}`` (``;``-separated).

``arguments`` is accepted in place of ``parameters``. Bare objects without the tag are matched
by the shared JSON matcher and reported as ``llama_json`` when they use ``parameters``. After
the tag, Llama 3.1's built-in tool syntax ``brave_search.call(query="...")`` is read as a
pythonic call named ``brave_search``. A following ``<|eom_id|>`` or ``<|eot_id|>`` belongs to
the markup.

Reasoning safety: Llama 3.x has no reasoning span of its own; ``<|python_tag|>`` does not end
another family's span.
"""

from ..answers import Match, MatchResult, NEED_ANY, need_closing, NeedMore
from ..context import after_tag, Ctx
from ..readers.json_calls import (add_value_calls, broken_before_next, broken_message,
                                  describe_non_call, match_json)
from ..readers.json_values import (guess_name, invalid_end, READ_NEED, READ_OK,
                                   READ_TRUNCATED, read_value)
from ..readers.partial import tagged_json_call_prefix
from ..readers.pythonic_calls import finish, read_named_call
from ..readers.text import skip_ws
from ..registry import format_spec
from ..results import INVALID_CALL, TRUNCATED, UNPARSEABLE_ARGUMENTS

FORMAT = 'llama_json'
TAG = '<|python_tag|>'
END_TOKENS = ('<|eom_id|>', '<|eot_id|>')


def _end_tokens(text: str, stop: int, ctx: Ctx):
    """Move ``stop`` past an end-of-message token; None when one may still be arriving."""
    k = skip_ws(text, stop)
    if k >= len(text):
        return None if not ctx.final else stop
    for token in END_TOKENS:
        if text.startswith(token, k):
            return k + len(token)
    if not ctx.final and any(token.startswith(text[k:k + len(token)])
                             for token in END_TOKENS):
        return None
    return stop


def match_python_tag(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match ``<|python_tag|>`` followed by JSON call objects or a built-in tool call."""
    k = after_tag(text, pos, TAG, ctx, FORMAT, 'expected a JSON object')
    if not isinstance(k, int):
        return k
    if text[k] not in '{[':
        return _builtin_call(text, pos, k, ctx)
    found = _read_values(text, pos, k, ctx)
    if type(found) is not tuple:
        return found
    values, problems, stop = found
    if not problems or problems[-1][0] != TRUNCATED:
        stop = _end_tokens(text, stop, ctx)
        if stop is None:
            return need_closing(*END_TOKENS)
    items: list = []
    for value in values:
        if not add_value_calls(value, FORMAT, ctx, pos, stop, items):
            items.append(ctx.issue(INVALID_CALL, f'{TAG} at char {ctx.base + pos}: expected '
                                   '{"name": ..., "parameters": {...}}; '
                                   f'{describe_non_call(value)}', pos, stop, FORMAT))
    for code, message, name in problems:
        items.append(ctx.issue(code, message, pos, stop, FORMAT, name))
    return Match(stop, items)


def _builtin_call(text: str, pos: int, k: int, ctx: Ctx):
    """Llama 3.1's built-in tool syntax after the tag: ``brave_search.call(query=...)``."""
    result = read_named_call(text, k, ctx)
    if type(result) is not tuple:
        return result
    stop = _end_tokens(text, result[0], ctx)
    if stop is None:
        return need_closing(*END_TOKENS)
    return Match(stop, finish(result[1], ctx, FORMAT, pos, stop, builtin=True))


def _read_values(text: str, pos: int, k: int, ctx: Ctx):
    """
    Read ``;``-separated JSON values from ``k``: ``(values, problems, end)`` or NeedMore.

    A value that cannot be read is one problem ``(code, message, name)``; the values after it
    (``;``-separated) are still read, so a good call survives a broken sibling.
    """
    n = len(text)
    values: list = []
    problems: list[tuple[str, str, str]] = []
    while True:
        status, value, end, note = read_value(text, k, ctx)
        if status == READ_NEED:
            return NeedMore(('}', ']'))
        if status != READ_OK:
            stop = n if status == READ_TRUNCATED else invalid_end(text, k, end, note, ctx)
            if stop is None:
                return NeedMore(('}', ']'))
            cut = broken_before_next(text, k, stop, ctx)  # the next call begins inside it
            if cut != -1:
                problems.append((UNPARSEABLE_ARGUMENTS, broken_message(k, cut, note, ctx),
                                 guess_name(text[k:cut])))
                stop = cut
            elif status == READ_TRUNCATED:
                problems.append((TRUNCATED, f'{TAG} at char {ctx.base + pos}: the text ended '
                                 f'inside the call ({note})', guess_name(text[k:])))
                return values, problems, n
            else:
                problems.append((UNPARSEABLE_ARGUMENTS, f'{TAG} at char {ctx.base + pos}: the '
                                 f'call at char {ctx.base + k} is {note}; expected a JSON '
                                 'object like {"name": "say", "parameters": {"text": "hi"}}',
                                 guess_name(text[k:stop])))
            end = stop
        else:
            values.append(value)
        j = skip_ws(text, end)
        if j >= n:
            return NEED_ANY if not ctx.final else (values, problems, end)
        if text[j] != ';':
            return values, problems, end
        j2 = skip_ws(text, j + 1)
        if j2 >= n:
            return NEED_ANY if not ctx.final else (values, problems, j + 1)
        if text[j2] not in '{[':
            return values, problems, j + 1
        k = j2


def partial_python_tag(text: str, view):
    """Read a ``<|python_tag|>{...`` call still arriving: ``(name, value reader)`` or None."""
    return tagged_json_call_prefix(text, TAG, view)


FAMILY = format_spec(FORMAT, [(TAG, match_python_tag), ('{', match_json), ('[', match_json)],
                     partial=partial_python_tag,
                     priority=40, description='<|python_tag|>{"name": ..., "parameters": {...}}')
