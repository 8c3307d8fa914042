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
LeRobot's language columns: what upstream stores, read and built without LeRobot itself.

Facts from LeRobot 0.6.1 (`lerobot/datasets/language.py` and the steerable annotation pipeline's
writer): the data parquet may hold `language_persistent` (rows: role, content, style, timestamp,
camera, tool_calls) and `language_events` (the same without timestamp: an event is stored on the
frame whose timestamp is its firing time). `tool_calls` is a list of JSON values: Arrow `json_`
in upstream's declared type, or structs where its writer let pyarrow infer the type; consumers
here accept both, and dicts or JSON strings alike. Both columns are declared in
`info["features"]` with dtype `language`.
"""

import json
import math
import re
from typing import Any

LANGUAGE_PERSISTENT = 'language_persistent'
LANGUAGE_EVENTS = 'language_events'
LANGUAGE_COLUMNS = (LANGUAGE_PERSISTENT, LANGUAGE_EVENTS)
PERSISTENT_ROW_FIELDS = ('role', 'content', 'style', 'timestamp', 'camera', 'tool_calls')
EVENT_ROW_FIELDS = ('role', 'content', 'style', 'camera', 'tool_calls')
PERSISTENT_STYLES = frozenset({'subtask', 'plan', 'memory', 'motion', 'task_aug'})
EVENT_ONLY_STYLES = frozenset({'interjection', 'vqa', 'trace'})
VIEW_DEPENDENT_STYLES = frozenset({'vqa', 'trace'})
INTERJECTION = 'interjection'
# Persistent styles replayed as prose (what the policy says it is doing).
PROSE_STYLES = ('plan', 'subtask')
# info["features"] entry of each language column (upstream's language_feature_info()).
LANGUAGE_FEATURE = {'dtype': 'language', 'shape': [1], 'names': None}


_SURROGATE = re.compile('[\ud800-\udfff]')


class LanguageRowError(ValueError):
    """A language row (or one of its tool calls) that does not follow upstream's schema."""


def is_known_style(style: Any) -> bool:
    """Whether `style` is one of upstream's core styles or None (a tool-call atom)."""
    return style is None or style in PERSISTENT_STYLES or style in EVENT_ONLY_STYLES


def storable(value: Any) -> Any:
    r"""
    Return `value` with all its text (dict keys too) storable in a dataset.

    Arrow and parquet hold UTF-8, which has no encoding for a lone surrogate (`"\ud800"`, as
    JSON lets a caller or a model write it and the runtime accepts it). Such a code point is
    stored as U+FFFD, the replacement character; a surrogate pair becomes the character it
    encodes. Everything else is kept as it is.
    """
    if isinstance(value, str):
        if not _SURROGATE.search(value):
            return value
        return value.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace')
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    return value


def column_for_style(style: str | None) -> str:
    """Return the column rows of `style` live in (None: a tool-call atom, an event)."""
    if style is None or style in EVENT_ONLY_STYLES:
        return LANGUAGE_EVENTS
    if style in PERSISTENT_STYLES:
        return LANGUAGE_PERSISTENT
    raise LanguageRowError(f'unknown language style {style!r} (known: '
                           f'{", ".join(sorted(PERSISTENT_STYLES | EVENT_ONLY_STYLES))})')


def _json_value(value: Any, where: str) -> Any:
    """Decode a JSON value stored as text (Arrow json_ or string); other values pass."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode('utf-8', errors='replace')
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise LanguageRowError(f'{where}: not JSON ({exc})') from None
    return value


def tool_call(call: Any, where: str = 'tool call') -> tuple[str, dict]:
    """
    Return (name, arguments) of one stored tool call.

    Accepts the OpenAI shape `{"type": "function", "function": {"name", "arguments"}}` with
    `arguments` a dict or a JSON string (double-encoded too), as a dict or as JSON text.
    """
    call = _json_value(call, where)
    if not isinstance(call, dict):
        raise LanguageRowError(f'{where}: expected an object, got {type(call).__name__}')
    function = call.get('function')
    if not isinstance(function, dict):
        raise LanguageRowError(f'{where}: no "function" object (got keys '
                               f'{", ".join(sorted(map(str, call))) or "none"})')
    name = function.get('name')
    if not isinstance(name, str) or not name:
        raise LanguageRowError(f'{where}: "function.name" must be a non-empty string')
    arguments = function.get('arguments')
    for _ in range(2):  # arguments as a JSON string, possibly encoded twice
        if isinstance(arguments, (str, bytes, bytearray)):
            arguments = _json_value(arguments, f'{where} ({name}) arguments')
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise LanguageRowError(f'{where} ({name}): arguments must be an object, got '
                               f'{type(arguments).__name__}')
    # A struct column inferred by pyarrow holds every key any call used: drop the nulls other
    # tools' keys became (say has no "label"), so each call keeps its own arguments only.
    return name, {key: value for key, value in arguments.items() if value is not None}


def tool_calls(row: dict, where: str = 'row') -> list[tuple[str, dict]]:
    """Return every (name, arguments) of a row's `tool_calls` ([] when it has none)."""
    calls = row.get('tool_calls')
    if calls is None:
        return []
    calls = _json_value(calls, f'{where} tool_calls')
    if not isinstance(calls, list):
        raise LanguageRowError(f'{where}: tool_calls must be a list, got {type(calls).__name__}')
    return [tool_call(call, f'{where} tool_calls[{index}]') for index, call in enumerate(calls)]


def timestamp(row: dict, where: str = 'row') -> float:
    """Return a persistent row's timestamp, checked to be a finite number."""
    value = row.get('timestamp')
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise LanguageRowError(f'{where}: timestamp must be a finite number, got {value!r}')
    return float(value)


def call_dict(name: str, arguments: dict) -> dict:
    """One tool call as upstream stores it: `{"type": "function", "function": {...}}`."""
    return {'type': 'function', 'function': {'name': name, 'arguments': arguments}}


def speech_atom(text: str) -> dict:
    """Build an event row speaking `text`: role assistant, no content or style, a `say` call."""
    return tool_call_row('say', {'text': text})


def tool_call_row(name: str, arguments: dict) -> dict:
    """Build an event row calling one tool (a speech atom when `name` is `say`)."""
    return {'role': 'assistant', 'content': None, 'style': None, 'camera': None,
            'tool_calls': [call_dict(name, arguments)]}


def interjection_row(text: str) -> dict:
    """Build an event row for what a user said: role user, style interjection, no calls."""
    return {'role': 'user', 'content': text, 'style': INTERJECTION, 'camera': None,
            'tool_calls': None}


def event_row(row: Any, where: str = 'row') -> dict:
    """Return an event row as a plain dict of EVENT_ROW_FIELDS, checked for its column."""
    if not isinstance(row, dict):
        raise LanguageRowError(f'{where}: expected an object, got {type(row).__name__}')
    if not isinstance(row.get('role'), str):
        raise LanguageRowError(f'{where}: role must be a string, got {row.get("role")!r}')
    if column_for_style(row.get('style')) != LANGUAGE_EVENTS:
        raise LanguageRowError(f'{where}: style {row.get("style")!r} belongs in '
                               f'{LANGUAGE_PERSISTENT}, not {LANGUAGE_EVENTS}')
    return {field: row.get(field) for field in EVENT_ROW_FIELDS}
