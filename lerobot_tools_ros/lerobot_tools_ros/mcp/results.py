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
How a dispatcher answer becomes an MCP result, and a client's arguments a ~/call request.

Arguments are encoded once, bounded; a ``CallTool`` response becomes text (an error text that
names its code), images of ``record_observation`` and structured output.

Structured output: ``outputSchema`` of tools with a known result shape, ``structuredContent``.

The built-in tools' results are JSON objects of a known shape; a catalog entry may declare the
shape of its own tool's result with an optional top-level ``outputSchema`` (a JSON Schema
object). The schemas list what is always there as required and leave the rest open, so a
newer tool adding a field does not break clients that validate against them.
"""

from dataclasses import dataclass
import json
import pathlib
from typing import Any, Mapping

from lerobot_tools_ros import errors

_NUMBER_OR_NULL = {'anyOf': [{'type': 'number'}, {'type': 'null'}]}  # one type per schema

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


# Image files whose bytes are returned as MCP image content, by their first bytes.
_IMAGE_MAGIC = {
    b'\x89PNG\r\n\x1a\n': 'image/png',
    b'\xff\xd8\xff': 'image/jpeg',
}


class ArgumentsTooLarge(ValueError):
    """The arguments of an MCP call are larger than the server accepts."""


def encode_arguments(arguments: Mapping[str, Any] | None, max_bytes: int) -> str:
    """
    Return the JSON text sent as ``CallTool.Request.arguments``.

    NaN and Infinity are refused here (they are not JSON; the dispatcher would refuse them too)
    and so is anything longer than ``max_bytes`` once encoded.
    """
    try:
        text = json.dumps(dict(arguments or {}), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f'arguments are not valid JSON: {exc} (NaN and Infinity are not '
                         'JSON numbers)') from exc
    except RecursionError:
        raise ValueError('arguments are nested too deeply to encode') from None
    size = len(text.encode('utf-8', 'surrogatepass'))
    if size > max_bytes:
        raise ArgumentsTooLarge(
            f'arguments are {size} bytes encoded; this server accepts at most {max_bytes}')
    return text


def error_text(code: str, message: str) -> str:
    """Return the text of an ``isError`` result: code first, so a model can branch on it."""
    return f'{code}: {message}' if message else code


@dataclass(frozen=True)
class Image:
    """An image a tool saved, ready to be returned as MCP image content."""

    path: str
    mime_type: str
    data: bytes


def images_in_result(content: str, max_bytes: int) -> tuple[list[Image], list[str]]:
    """
    Read the images a ``record_observation`` result names; return them and notes on skipped ones.

    Only regular files whose first bytes are PNG or JPEG and whose size is at most ``max_bytes``
    are read; anything else (missing on this host, too large, another format) gets a note instead,
    so the text result still tells the client where the file is.
    """
    try:
        result = json.loads(content)
    except ValueError:
        return [], []
    paths = result.get('paths') if isinstance(result, dict) else None
    if not isinstance(paths, list):
        return [], []
    images: list[Image] = []
    notes: list[str] = []
    for raw in paths:
        if not isinstance(raw, str) or not raw:
            continue
        path = pathlib.Path(raw)
        try:
            if not path.is_file():
                notes.append(f'{raw}: not readable on the MCP server host')
                continue
            size = path.stat().st_size
            if size > max_bytes:
                notes.append(f'{raw}: {size} bytes, over the {max_bytes}-byte image cap; '
                             'not attached')
                continue
            data = path.read_bytes()
        except OSError as exc:
            notes.append(f'{raw}: could not be read ({exc.strerror or exc})')
            continue
        mime = next((m for magic, m in _IMAGE_MAGIC.items() if data.startswith(magic)), None)
        if mime is None:
            notes.append(f'{raw}: not a PNG or JPEG file; not attached')
            continue
        images.append(Image(raw, mime, data))
    return images, notes


def result_code(success: bool, error_code: str) -> str:
    """Return the error code to report: a failure without a code is ``execution_failed``."""
    if success:
        return ''
    return error_code or errors.EXECUTION_FAILED


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
