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
What makes two calls "the same call" for repeat suppression (tool.<name>.repeat_window_s).

A VLA writes the same `<say>` with every action chunk; what it writes is not byte-identical
every time: spacing, a no-break or zero-width space, case, a composed or decomposed accent.
Free text arguments (string properties without enum, const, pattern or format: prose, not
identifiers) are compared after NFKC normalisation, with invisible format characters removed,
whitespace collapsed and case folded; every other argument is compared exactly.

`RecentCalls` remembers, per tool, the calls still running or done within the window: only a
call that is running or that succeeded suppresses its repeats (a retry of a failed, cancelled
or paused call runs).
"""

import json
import re
from typing import Any
import unicodedata

from .calls import Call, ToolState

_WHITESPACE = re.compile(r'\s+')
_CONSTRAINTS = ('enum', 'const', 'pattern', 'format')


def free_text_properties(parameters: Any) -> frozenset:
    """Return the top-level properties of a tool's schema that hold free text."""
    properties = parameters.get('properties') if isinstance(parameters, dict) else None
    if not isinstance(properties, dict):
        return frozenset()
    found = set()
    for name, schema in properties.items():
        if not isinstance(schema, dict) or any(key in schema for key in _CONSTRAINTS):
            continue
        declared = schema.get('type')
        if declared == 'string' or (isinstance(declared, list) and 'string' in declared):
            found.add(name)
    return frozenset(found)


def normalise_text(text: str) -> str:
    """Return `text` as compared for repeats: NFKC, no format characters, spaces, casefold."""
    text = unicodedata.normalize('NFKC', text)
    text = ''.join(ch for ch in text if unicodedata.category(ch) != 'Cf')
    return _WHITESPACE.sub(' ', text).strip().casefold()


def repeat_key(name: str, arguments: dict, free_text: frozenset) -> tuple:
    """Return the key under which a call of `name` with `arguments` counts as a repeat."""
    if free_text:
        arguments = {key: normalise_text(value) if key in free_text and isinstance(value, str)
                     else value for key, value in arguments.items()}
    return (name, json.dumps(arguments, sort_keys=True))


# A tool's remembered calls are swept of those the window no longer covers past this many.
_SWEEP_ABOVE = 256


class RecentCalls:
    """Per tool: repeat key -> (call id, when it succeeded; None while it runs)."""

    def __init__(self) -> None:
        self._by_tool: dict[str, dict[tuple, tuple[str, float | None]]] = {}

    def of(self, name: str) -> dict[tuple, tuple[str, float | None]]:
        """Return the remembered calls of a tool (read only)."""
        return self._by_tool.get(name, {})

    def duplicate_of(self, call: Call, tool: ToolState, now: float) -> str:
        """Return why `call` repeats a running or recent call of its tool, or ''."""
        window = tool.settings.repeat_window_s
        if window <= 0:
            return ''
        call.repeat_key = repeat_key(call.name, call.arguments, tool.free_text)
        recent = self._by_tool.setdefault(call.name, {})
        if len(recent) > _SWEEP_ABOVE:  # forget what the window no longer covers
            for key, (_, ended) in list(recent.items()):
                if ended is not None and now - ended >= window:
                    del recent[key]
        original = recent.get(call.repeat_key)
        if original is None:
            return ''
        original_id, ended = original
        if ended is not None and now - ended >= window:
            return ''
        when = 'is still running' if ended is None else f'finished {now - ended:.1f} s ago'
        call.repeat_key = None  # a duplicate is not an original for later calls
        return (f'same call as {original_id}, which {when}; identical {call.name} calls within '
                f'{window:g} s are not repeated (tool.{call.name}.repeat_window_s)')

    def running(self, call: Call) -> None:
        """Remember an accepted call (its `repeat_key` set) as running."""
        if call.repeat_key is not None:
            self._by_tool.setdefault(call.name, {})[call.repeat_key] = (call.call_id, None)

    def finished(self, call: Call, succeeded: bool, now: float) -> None:
        """Keep a call that succeeded until its window passes; forget one that did not."""
        if call.repeat_key is None:
            return
        recent = self._by_tool.get(call.name, {})
        if recent.get(call.repeat_key, ('',))[0] != call.call_id:
            return
        if succeeded:
            recent[call.repeat_key] = (call.call_id, now)
        else:  # not done: its retry is no repeat
            del recent[call.repeat_key]
