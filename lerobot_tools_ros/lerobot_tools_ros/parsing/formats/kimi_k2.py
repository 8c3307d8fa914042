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
Kimi K2 call sections.

::

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.say:0<|tool_call_argument_begin|>{"text": "hi"}<|tool_call_end|>
    <|tool_calls_section_end|>

The call id is ``functions.NAME:INDEX``; the name is what lies between the ``functions.``
prefix (optional) and the ``:INDEX`` suffix. Section tokens are optional around a call.
"""

import re

from . import tagged
from ..core import Match, need_closing, NeedMore
from ..registry import register_format
from ..values import guess_name, invalid_end, READ_NEED, READ_OK, READ_TRUNCATED, read_value
from ..values import skip_ws

FORMAT = 'kimi_k2'
SECTION = '<|tool_calls_section_begin|>'
SECTION_END = '<|tool_calls_section_end|>'
CALL = '<|tool_call_begin|>'
ARGS = '<|tool_call_argument_begin|>'
CALL_END = '<|tool_call_end|>'
_ID = re.compile(r'\s*(?:functions\.)?([^\s:<>]+?)(?::\d+)?\s*\Z')
_WAKE = ('}', ']', CALL_END)


def match_section(text: str, pos: int, trigger: str, ctx):
    """Match a call section and every call in it."""
    return tagged.match_section(text, pos, ctx, FORMAT, (SECTION, SECTION_END, CALL), read_call)


def match_call(text: str, pos: int, trigger: str, ctx):
    """Match a ``<|tool_call_begin|>`` call outside a section."""
    result = read_call(text, pos, ctx)
    return Match(result[0], result[1]) if type(result) is tuple else result


def read_call(text: str, pos: int, ctx):
    """Read one call: ``(end, items)``, NeedMore, or a truncated Match."""
    n = len(text)
    i = pos + len(CALL)
    args = ctx.find(text, ARGS, i)
    if args == -1 or args - i > 200:
        if not ctx.final and n - i <= 200:
            return NeedMore((ARGS,))
        if args == -1:
            return _truncated(text, pos, ctx, '')
        return _bad(text, pos, i, ctx, '', f'expected functions.NAME:INDEX{ARGS}')
    found = _ID.match(text[i:args])
    if found is None:
        return _bad(text, pos, args, ctx, '', f'expected functions.NAME:INDEX before {ARGS}, '
                    f'found {text[i:args]!r}')
    name = found.group(1)
    k = skip_ws(text, args + len(ARGS))
    if k >= n:
        return _truncated(text, pos, ctx, name)
    if text[k] not in '{[':
        return _bad(text, pos, k, ctx, name, f'expected the arguments of {name!r} as a JSON '
                    'object, found {found!r}', k)
    status, value, end, note = read_value(text, k, ctx)
    if status == READ_NEED:
        return NeedMore(_WAKE)
    if status == READ_TRUNCATED:
        return _truncated(text, pos, ctx, name or guess_name(text[k:]))
    if status != READ_OK:
        stop = invalid_end(text, k, end, note, ctx)
        if stop is None:
            return NeedMore(_WAKE)
        return _bad(text, pos, stop, ctx, name, f'the arguments are {note}')
    e = skip_ws(text, end)
    if text.startswith(CALL_END, e):
        stop = e + len(CALL_END)
    elif not ctx.final and CALL_END.startswith(text[e:e + len(CALL_END)]):
        return need_closing(CALL_END, SECTION_END, CALL)
    else:
        stop = end
    items: list = []
    ctx.add_call(items, name, value, FORMAT, pos, stop)
    return stop, items


def _truncated(text: str, pos: int, ctx, name: str):
    return tagged.truncated_call(text, pos, ctx, FORMAT, CALL, name, _WAKE)


def _bad(text: str, pos: int, stop: int, ctx, name: str, reason: str, found_at: int = -1):
    """Report the call as unparseable; it runs to its closing token (``{found}``: an excerpt)."""
    return tagged.bad_call(text, pos, stop, ctx, FORMAT, (CALL, CALL_END), name, reason,
                           found_at)


register_format(FORMAT, [(SECTION, match_section), (CALL, match_call)], priority=25,
                description='<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}')
