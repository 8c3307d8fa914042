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
Values written as text, typed by the catalog schema (Qwen3-Coder, GLM, Hunyuan, invoke XML).

``typed_value`` tries each JSON type the parameter's schema allows (``type``, a type list,
``anyOf``/``oneOf``), in ``TYPE_ORDER``; a value that fits none stays text, and argument
validation reports it against the schema.
"""

from .json_values import decode_json
from .literals import literal_value, LiteralError
from .text import strip_one_newline

# The order in which a value's text is tried against the types its schema allows; the first
# that fits wins. Strings come last, so a union such as ``["integer", "string"]`` reads "42" as
# 42. A value that fits none stays the text, and argument validation reports it.
TYPE_ORDER = ('null', 'boolean', 'integer', 'number', 'object', 'array', 'string')


_MAX_SCHEMA_DEPTH = 8


def schema_types(schema: object, depth: int = 0) -> set:
    """
    Collect the JSON types a (sub)schema allows.

    That is ``type`` (a name or a list), and the alternatives of ``anyOf``/``oneOf`` (what
    Pydantic emits for ``Optional[int]``), nested.
    An alternative without a type (``{}``) or a schema we cannot read allows anything.
    """
    if not isinstance(schema, dict) or depth > _MAX_SCHEMA_DEPTH:
        return {'any'}
    found: set = set()
    kind = schema.get('type')
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(item for item in kind if isinstance(item, str))
    for key in ('anyOf', 'oneOf'):
        alternatives = schema.get(key)
        if isinstance(alternatives, list):
            for alternative in alternatives:
                found |= schema_types(alternative, depth + 1)
    if not found and 'const' not in schema and 'enum' not in schema:
        found.add('any')
    return found


def typed_value(raw: str, schema: object, exact: bool = False) -> object:
    """
    Type one parameter's text by its schema: try each allowed type in ``TYPE_ORDER``.

    The text loses one leading and one trailing newline (the markup's own), unless ``exact``
    (a family whose values sit inline between their tags). Without a schema (no catalog,
    unknown parameter) or when strings are the only option it stays text.
    """
    value = raw if exact else strip_one_newline(raw)
    if not isinstance(schema, dict):
        return value
    types = schema_types(schema)
    if 'any' in types or types <= {'string'}:
        return value
    source = value.strip()
    for kind in TYPE_ORDER:
        if kind not in types:
            continue
        if kind == 'string':
            return value
        ok, parsed = _parse_as(source, kind, 'string' in types)
        if ok:
            return parsed
    return value


def _parse_as(source: str, kind: str, string_allowed: bool) -> tuple[bool, object]:
    if kind == 'boolean':
        lowered = source.lower()
        if lowered in ('true', 'false'):
            return True, lowered == 'true'
        return False, None
    if kind == 'null':
        empty_is_null = source == '' and not string_allowed
        return (True, None) if source in ('null', 'None') or empty_is_null else (False, None)
    try:
        parsed = decode_json(source)
    except (ValueError, RecursionError):  # JSONDecodeError, or an integer over the digit limit
        if kind not in ('object', 'array') or not source[:1] in ('{', '['):
            return False, None
        try:
            parsed = literal_value(source)
        except LiteralError:
            return False, None
    if kind == 'integer':
        ok = isinstance(parsed, int) and not isinstance(parsed, bool)
    elif kind == 'number':
        ok = isinstance(parsed, (int, float)) and not isinstance(parsed, bool)
    elif kind == 'object':
        ok = isinstance(parsed, dict)
    else:
        ok = isinstance(parsed, list)
    return ok, parsed
