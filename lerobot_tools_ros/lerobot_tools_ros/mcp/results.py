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
Structured output: ``outputSchema`` of tools with a known result shape, ``structuredContent``.

The built-in tools' results are JSON objects of a known shape; a catalog entry may declare the
shape of its own tool's result with an optional top-level ``outputSchema`` (a JSON Schema
object). The schemas list what is always there as required and leave the rest open, so a
newer tool adding a field does not break clients that validate against them.
"""

import json
from typing import Any, Mapping

_NUMBER_OR_NULL = {'type': ['number', 'null']}

BUILTIN_OUTPUT_SCHEMAS: Mapping[str, dict] = {
    'say': {
        'type': 'object',
        'properties': {
            'utterance_id': {'type': 'string', 'description': 'Id of the utterance spoken.'},
            'backend': {'type': 'string', 'description': 'TTS backend that spoke it.'},
            'audio_seconds': {'type': 'number', 'description': 'Seconds of audio made.'},
            'first_chunk_ms': _NUMBER_OR_NULL,
            'playback': {'type': 'string',
                         'description': 'How playback ended (finished, cancelled, ...).'},
            'stopped': {'type': 'boolean', 'description': 'True when it was cut short.'},
        },
        'required': ['utterance_id'],
    },
    'record_observation': {
        'type': 'object',
        'properties': {
            'label': {'type': 'string'},
            'format': {'type': 'string'},
            'paths': {'type': 'array', 'items': {'type': 'string'},
                      'description': 'Files saved, one per camera that had a frame.'},
            'cameras': {'type': 'object', 'description': 'Per camera: ok, path or error.'},
            'complete': {'type': 'boolean', 'description': 'Every camera saved a frame.'},
            'message': {'type': 'string'},
        },
        'required': ['paths'],
    },
    'echo': {'type': 'object', 'description': 'The arguments, returned unchanged.'},
}


def output_schema(name: str, entry: Mapping[str, Any]) -> dict | None:
    """Return the ``outputSchema`` of a tool: the catalog's declaration, else a built-in one."""
    declared = entry.get('outputSchema')
    if isinstance(declared, dict) and declared.get('type', 'object') == 'object':
        return dict(declared, type='object')
    return BUILTIN_OUTPUT_SCHEMAS.get(name)


def structured_content(content: str) -> dict | None:
    """Return a successful result's text as a JSON object, or None when it is not one."""
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def saved_files(structured: Mapping[str, Any] | None) -> list[str]:
    """Return the paths of the files a result names (``record_observation``'s ``paths``)."""
    paths = (structured or {}).get('paths')
    if not isinstance(paths, list):
        return []
    return [p for p in paths if isinstance(p, str) and p]


# What a model should read off each outcome (the text of every result ends with one of these).
OUTCOME_NOTES: Mapping[str, str] = {
    'not_run': 'the tool did not act; retrying cannot act twice',
    'ran': 'the tool ran; the result says what it did',
    'unknown': ('the call was sent and its answer lost: the tool may have acted; check before '
                'repeating it'),
}


def outcome_line(outcome: str) -> str:
    """Return the line a result's text ends with: its outcome and what it means."""
    return f'outcome: {outcome} ({OUTCOME_NOTES.get(outcome, "unknown outcome")})'


def with_outcome(structured: Mapping[str, Any] | None, outcome: str,
                 error_code: str = '') -> dict:
    """
    Return a result's ``structuredContent``: the tool's JSON object (if any) and its outcome.

    ``outcome`` (and ``error_code`` of a failure) are added to what the tool returned; the
    output schemas leave room for them.
    """
    data = dict(structured or {})
    data['outcome'] = outcome
    if error_code:
        data['error_code'] = error_code
    return data
