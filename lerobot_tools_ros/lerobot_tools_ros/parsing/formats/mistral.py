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
Mistral: ``[TOOL_CALLS][{"name": "say", "arguments": {...}}]`` and ``[TOOL_CALLS]say{...}``.

Newer tokenizers write ``[TOOL_CALLS]say[ARGS]{...}`` (optionally ``[CALL_ID]id`` before
``[ARGS]``); all three are accepted, each ``[TOOL_CALLS]`` holding one call or one list.

``[THINK]``...``[/THINK]`` (Magistral) is a reasoning span.

Reasoning safety: Magistral closes ``[/THINK]`` before calling, so ``[TOOL_CALLS]`` does not end
a reasoning span; a call inside one stays a plan.
"""

import re

from ..answers import Match, MatchResult, NEED_ANY, NeedMore
from ..context import after_tag, Ctx
from ..readers.json_calls import add_value_calls, describe_non_call
from ..readers.json_values import (guess_name, invalid_end, READ_NEED, READ_OK, READ_TRUNCATED,
                                   read_value, salvage_items)
from ..readers.partial import json_value_call_prefix, member_prefix
from ..readers.text import match_end, skip_ws
from ..registry import format_spec
from ..results import INVALID_CALL, TRUNCATED, UNPARSEABLE_ARGUMENTS

FORMAT = 'mistral'
TAG = '[TOOL_CALLS]'
ARGS = '[ARGS]'
CALL_ID = '[CALL_ID]'
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_.\-]*')
_ID = re.compile(r'[A-Za-z0-9_\-]*')
_WAKE = ('}', ']')


def _read_payload(text: str, k: int, ctx: Ctx, pos: int, name: str):
    """Read the JSON value at ``k``; return Match/NeedMore with calls or an issue."""
    status, value, end, note = read_value(text, k, ctx)
    if status != READ_OK and not name:
        name = guess_name(text[k:end])
    if status == READ_NEED:
        return NeedMore(_WAKE)
    if status == READ_TRUNCATED:
        return Match(end, [ctx.issue(TRUNCATED, f'{TAG} at char {ctx.base + pos}: the text '
                                     f'ended inside the call ({note})', pos, end, FORMAT,
                                     name)])
    if status != READ_OK:
        stop = invalid_end(text, k, end, note, ctx)  # the whole malformed value
        if stop is None:
            return NeedMore(_WAKE)
        salvaged = salvage_items(text, k, stop)
        if salvaged:  # a broken list (the pre-v11 form): a good call survives a broken one
            return Match(stop, _salvaged_items(salvaged, ctx, pos, stop))
        return Match(stop, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{TAG} at char {ctx.base + pos}: '
                                      f'the call is {note}; expected JSON', pos, stop, FORMAT,
                                      name)])
    items: list = []
    if name:
        ctx.add_call(items, name, value, FORMAT, pos, end)
        return Match(end, items)
    if not add_value_calls(value, FORMAT, ctx, pos, end, items):
        items.append(ctx.issue(INVALID_CALL, f'{TAG} at char {ctx.base + pos}: expected a list '
                               'of {"name": ..., "arguments": {...}} objects; '
                               f'{describe_non_call(value)}', pos, end, FORMAT))
    return Match(end, items)


def _salvaged_items(salvaged: list, ctx: Ctx, pos: int, end: int) -> list:
    """Return calls for the readable items of a broken list, an issue per unreadable item."""
    items: list = []
    for index, (ok, value, source) in enumerate(salvaged, 1):
        if ok and add_value_calls(value, FORMAT, ctx, pos, end, items):
            continue
        reason = value if not ok else describe_non_call(value)
        items.append(ctx.issue(UNPARSEABLE_ARGUMENTS if not ok else INVALID_CALL,
                               f'{TAG} at char {ctx.base + pos}: item {index} of the list is '
                               f'{reason}; expected {{"name": ..., "arguments": {{...}}}}', pos,
                               end, FORMAT, guess_name(source)))
    return items


_LIST_START = re.compile(r'\[\s*\{')


def _list_after_junk(text: str, k: int, ctx: Ctx, pos: int):
    """
    Read a pre-v11 call list that follows a few words of junk after the tag, or None.

    ``[TOOL_CALLS] junk [{"name": ...}]``: models before the v11 tokenizer sometimes write
    text between the tag and the list. The list's calls count (the serving engines find them
    too); the junk is text that is not a call, so it stays in the content. Only a ``[`` that
    opens a list of objects counts, before the next ``[TOOL_CALLS]``. None: no such list (yet:
    a later ``{`` may complete one, so the caller waits for it as well as for the next tag).
    """
    following = ctx.find(text, TAG, k)
    found = _LIST_START.search(text, k, following if following != -1 else len(text))
    if found is None:
        if not ctx.final and following == -1:
            return NeedMore((TAG, '{'))
        return None
    answer = _read_payload(text, found.start(), ctx, pos, '')
    if isinstance(answer, Match):
        answer.content = text[k:found.start()]  # (k: after the whitespace that follows the tag)
    return answer


def _malformed(text: str, pos: int, ctx: Ctx, reason: str, name: str):
    """
    Report a ``[TOOL_CALLS]`` block that is not a call; the block is all of it.

    Mistral writes calls last, so the block runs to the next ``[TOOL_CALLS]`` or the end of
    the text, and none of it stays in the content.
    """
    following = ctx.find(text, TAG, pos + len(TAG))
    if following == -1:
        if not ctx.final:
            return NeedMore((TAG,))
        following = len(text)
    return Match(following, [ctx.issue(UNPARSEABLE_ARGUMENTS, f'{TAG} at char '
                                       f'{ctx.base + pos}: {reason}', pos, following, FORMAT,
                                       name)])


def match_mistral(text: str, pos: int, trigger: str, ctx: Ctx) -> MatchResult:
    """Match one ``[TOOL_CALLS]`` block."""
    k = after_tag(text, pos, TAG, ctx, FORMAT, 'expected a JSON list or name{...}')
    if not isinstance(k, int):
        return k
    n = len(text)
    if text[k] in '[{':
        return _read_payload(text, k, ctx, pos, '')
    found = _NAME.match(text, k)
    if found is None:
        listed = _list_after_junk(text, k, ctx, pos)
        if listed is not None:
            return listed
        return _malformed(text, pos, ctx, f'expected a JSON list or name{{...}} after the tag, '
                          f'found {text[k]!r}', '')
    name = found.group()
    i = found.end()
    if text.startswith(CALL_ID, i):
        i = match_end(_ID, text, i + len(CALL_ID))
    if text.startswith(ARGS, i):
        i += len(ARGS)
    elif i >= n or (not ctx.final and (ARGS.startswith(text[i:]) or CALL_ID.startswith(text[i:]))):
        if not ctx.final:
            return NEED_ANY
    i = skip_ws(text, i)
    if i >= n:
        if not ctx.final:
            return NEED_ANY
        return Match(n, [ctx.issue(TRUNCATED, f'{TAG} at char {ctx.base + pos}: '
                                   f'the text ended before the arguments '
                                   f'of {name!r} (expected {{...}})', pos, n, FORMAT, name)])
    if text[i] != '{':
        listed = _list_after_junk(text, k, ctx, pos)
        if listed is not None:
            return listed
        return _malformed(text, pos, ctx, f'expected the arguments of {name!r} as a JSON '
                          f'object at char {ctx.base + i}, found {text[i]!r}', name)
    return _read_payload(text, i, ctx, pos, name)


def partial_mistral(text: str, view):
    """Read a ``[TOOL_CALLS]`` call still arriving: ``(name, value reader)`` or None."""
    if not text.startswith(TAG):
        return None
    k = skip_ws(text, len(TAG))
    if k >= len(text):
        return None

    def argument_of(name: str) -> str:
        return view.streamable.get(name, '')
    if text[k] in '{[':
        return json_value_call_prefix(text, k, argument_of, True)
    found = _NAME.match(text, k)
    if found is None or found.end() >= len(text) or not argument_of(found.group()):
        return None  # a name still growing, or no streamable argument
    name = found.group()
    i = found.end()
    if text.startswith(CALL_ID, i):
        i = match_end(_ID, text, i + len(CALL_ID))
    if text.startswith(ARGS, i):
        i = skip_ws(text, i + len(ARGS))
    if i >= len(text) or text[i] != '{':
        return name, None
    return name, member_prefix(text, i, argument_of(name))


FAMILY = format_spec(FORMAT, [(TAG, match_mistral)], priority=10, partial=partial_mistral,
                     reasoning=[('[THINK]', '[/THINK]')],  # Magistral
                     description='[TOOL_CALLS][{...}] and [TOOL_CALLS]name{...}')
