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
The tool catalog: the tools a LeRobot dataset declares in ``meta/info.json["tools"]``.

The catalog is the single source of truth for which tools exist and what arguments they take.
The dispatcher validates every model-written call against it before anything touches hardware,
so entries are checked when loaded (against the JSON Schema meta-schema) and validators are
compiled once per tool. ``info.json`` is only ever read here, never written.

Schemas are checked with ``jsonschema`` (the authority); where the optional ``jsonschema-rs`` is
installed it answers the common case (a valid Draft 2020-12 schema) ~100x faster, which is what
makes a 10,000-tool catalog load in seconds rather than minutes.

Nothing in this module imports rclpy; ``huggingface_hub`` is imported only when a repo id has to
be looked up in the hub cache or downloaded.
"""

import copy
import difflib
import functools
import hashlib
import json
import logging
import math
import os
import pathlib
import re
import reprlib
from typing import Any, Iterator

import jsonschema
from jsonschema import exceptions as jsonschema_exceptions
from jsonschema import validators as jsonschema_validators

from lerobot_tools_ros import errors, limits, names
from lerobot_tools_ros.catalog import safe_regex
from lerobot_tools_ros.catalog.arguments import (schema_fingerprint, too_deep, ToolArgumentError,
                                                 ValidatedArguments)
from lerobot_tools_ros.catalog.schema_safety import check_schema_safety
from lerobot_tools_ros.hub import DatasetNotFound, find_dataset_file, hf_lerobot_home
from lerobot_tools_ros.parsing.values import json_type as _json_type

__all__ = [
    'CatalogError', 'decode_arguments_json', 'DEFAULT_TOOLS', 'SAMPLE_DATASET',
    'ToolArgumentError', 'ToolCatalog', 'hf_lerobot_home',
]

_LOG = logging.getLogger('lerobot_tools_ros.catalog')

# LeRobot's ``lerobot.datasets.language.DEFAULT_TOOLS``: used when a dataset declares no tools.
DEFAULT_TOOLS: list[dict[str, Any]] = [
    {
        'type': 'function',
        'function': {
            'name': 'say',
            'description': 'Speak a short utterance to the user via the TTS executor.',
            'parameters': {
                'type': 'object',
                'properties': {
                    'text': {
                        'type': 'string',
                        'description': 'The verbatim text to speak.',
                    },
                },
                'required': ['text'],
            },
        },
    },
]

SAMPLE_DATASET: pathlib.Path = (
    pathlib.Path(__file__).resolve().parents[1] / 'data' / 'sample_dataset')

TOOL_NAME_PATTERN = re.compile(r'[A-Za-z_][A-Za-z0-9_.-]{0,63}')
_REPO_ID_PATTERN = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*')
_INFO_RELPATH = 'meta/info.json'
_MAX_DECODE_DEPTH = 3
_MAX_MESSAGE = 600
# The "validator" of an error that says a pattern could not be matched in bounded time.
_UNCHECKED_PATTERN = 'pattern (unchecked)'

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = 5
_short.maxdict = 5
_short.maxlevel = 2


class CatalogError(errors.ConfigurationError):
    """A catalog that cannot be loaded: not found, not JSON, no valid entry, strict-mode errors."""


def _json_path(root: str, parts: Any) -> str:
    path = root
    for part in parts:
        if isinstance(part, int):
            path += f'[{part}]'
        elif isinstance(part, str) and re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]{0,39}', part):
            path += '.' + part
        else:
            path += '[' + _short.repr(part) + ']'
    return path


def _reject_constant(name: str) -> Any:
    raise ValueError(f'{name} is not allowed in tool arguments')


def _truncate(text: str, limit: int = _MAX_MESSAGE) -> str:
    return text if len(text) <= limit else text[:limit - 3] + '...'


def _describe_error(error: jsonschema_exceptions.ValidationError) -> list[str]:
    """Turn one jsonschema error into messages that name the field path and the constraint."""
    path = _json_path('arguments', error.absolute_path)
    kind = error.validator
    expected = error.validator_value
    value = error.instance
    if kind == 'required' and isinstance(value, dict):
        missing = [name for name in expected if name not in value]
        return [f'{_json_path(path, [name])}: required property is missing' for name in missing]
    if kind == 'additionalProperties' and isinstance(value, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        allowed = list(schema.get('properties', {}))
        patterns = list(schema.get('patternProperties', {}))
        extras = [key for key in value if key not in allowed
                  and not any(_safe_search(pattern, key) for pattern in patterns)]
        allowed_text = ', '.join(allowed) if allowed else 'none'
        return [f'{_json_path(path, [key])}: unexpected property (additionalProperties is false;'
                f' allowed: {allowed_text})' for key in extras] or [f'{path}: {error.message}']
    if kind == 'type':
        types = expected if isinstance(expected, list) else [expected]
        return [f'{path}: expected {" or ".join(map(str, types))}, got {_json_type(value)}'
                f' {_short.repr(value)}']
    if kind == 'enum':
        return [f'{path}: must be one of {_short.repr(expected)}, got {_short.repr(value)}']
    if kind == 'const':
        return [f'{path}: must be {_short.repr(expected)}, got {_short.repr(value)}']
    if kind in ('minLength', 'maxLength') and isinstance(value, str):
        bound = 'at least' if kind == 'minLength' else 'at most'
        return [f'{path}: expected {bound} {expected} characters, got {len(value)}']
    if kind in ('minItems', 'maxItems') and isinstance(value, list):
        bound = 'at least' if kind == 'minItems' else 'at most'
        return [f'{path}: expected {bound} {expected} items, got {len(value)}']
    comparisons = {'minimum': '>=', 'maximum': '<=', 'exclusiveMinimum': '>',
                   'exclusiveMaximum': '<'}
    if kind in comparisons and isinstance(expected, (int, float)):
        return [f'{path}: must be {comparisons[kind]} {expected}, got {_short.repr(value)}']
    if kind == 'pattern':
        return [f'{path}: must match pattern {expected!r}, got {_short.repr(value)}']
    if kind == _UNCHECKED_PATTERN:
        return [f'{path}: {error.message}']
    if kind in ('anyOf', 'oneOf') and error.context:
        best = jsonschema_exceptions.best_match(error.context)
        inner = '; '.join(_describe_error(best))
        return [f'{path}: does not match any allowed schema ({kind}); closest: {inner}']
    return [f'{path}: {_truncate(error.message, 200)} (constraint: {kind})']


def _safe_search(pattern: str, text: str) -> bool:
    """``re.search`` for schema patterns, in bounded time (``safe_regex``); errors: no match."""
    try:
        return safe_regex.search(pattern, text)
    except ValueError:
        return False


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator:
    """Jsonschema's ``pattern`` keyword, matched with ``safe_regex`` (RE2) instead of ``re``."""
    if not validator.is_type(instance, 'string'):
        return
    try:
        matched = safe_regex.search(pattern, instance)
    except ValueError as exc:  # TextTooLong (no RE2 here), or a pattern refused
        yield jsonschema_exceptions.ValidationError(
            f'{_short.repr(instance)} {exc}', validator=_UNCHECKED_PATTERN)
        return
    if not matched:
        yield jsonschema_exceptions.ValidationError(
            f'{_short.repr(instance)} does not match {pattern!r}')


def _pattern_properties(validator: Any, patterns: dict, instance: Any,
                        schema: dict) -> Iterator:
    """Jsonschema's ``patternProperties``, matched with ``safe_regex``."""
    if not validator.is_type(instance, 'object'):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _safe_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any,
                           schema: dict) -> Iterator:
    """Jsonschema's ``additionalProperties``, with ``patternProperties`` matched safely."""
    if not validator.is_type(instance, 'object'):
        return
    properties = schema.get('properties', {})
    patterns = list(schema.get('patternProperties', {}))
    extras = [key for key in instance if key not in properties
              and not any(_safe_search(pattern, key) for pattern in patterns)]
    if validator.is_type(additional, 'object'):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        shown = ', '.join(_short.repr(extra) for extra in sorted(extras)[:10])
        yield jsonschema_exceptions.ValidationError(
            f'Additional properties are not allowed ({shown} unexpected)')


_SAFE_KEYWORDS = {'pattern': _pattern, 'patternProperties': _pattern_properties,
                  'additionalProperties': _additional_properties}


@functools.cache
def _safe_class(cls: Any) -> type:
    """
    Return ``cls`` with its regex keywords matched in bounded time (``safe_regex``).

    jsonschema matches ``pattern`` and ``patternProperties`` with Python's backtracking ``re``
    (``^(a+)+$`` on 26 characters: seconds). ``unevaluatedProperties`` also matches patterns,
    inside jsonschema; schemas combining it with ``patternProperties`` are refused at load
    (``schema_safety``).
    """
    keywords = {keyword: function for keyword, function in _SAFE_KEYWORDS.items()
                if keyword in cls.VALIDATORS}
    safe = jsonschema_validators.extend(cls, keywords)
    safe.BASE_VALIDATOR = cls
    return safe


def _entry_label(index: int, entry: Any) -> str:
    name = None
    if isinstance(entry, dict) and isinstance(entry.get('function'), dict):
        name = entry['function'].get('name')
    if isinstance(name, str):
        return f'tools[{index}] ({_short.repr(name)})'
    return f'tools[{index}] (no name)'


def _check_entry(entry: Any) -> tuple[str, type]:
    """Check one catalog entry; return its name and validator class or raise ValueError."""
    if not isinstance(entry, dict):
        raise ValueError(f'entry must be an object, got {_json_type(entry)}')
    if entry.get('type') != 'function':
        raise ValueError(f'"type" must be "function", got {_short.repr(entry.get("type"))}')
    function = entry.get('function')
    if not isinstance(function, dict):
        raise ValueError(f'"function" must be an object, got {_json_type(function)}')
    name = function.get('name')
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        raise ValueError(f'function.name {_short.repr(name)} must match '
                         f'^{TOOL_NAME_PATTERN.pattern}$')
    if 'description' in function and not isinstance(function['description'], str):
        raise ValueError('function.description must be a string, got '
                         f'{_json_type(function["description"])}')
    if 'parameters' not in function:
        raise ValueError('function.parameters is missing (a JSON Schema object)')
    parameters = function['parameters']
    if not isinstance(parameters, dict):
        raise ValueError(f'function.parameters must be a JSON Schema object, got '
                         f'{_json_type(parameters)}')
    declared_type = parameters.get('type', 'object')
    if declared_type != 'object' and not (isinstance(declared_type, list)
                                          and 'object' in declared_type):
        raise ValueError(f'function.parameters must describe an object (type "object"), got '
                         f'type {_short.repr(declared_type)}')
    cls = jsonschema_validators.validator_for(parameters, default=None)
    if cls is None:
        # Draft 2020-12 needs jsonschema >= 4 (Ubuntu 22.04 / Humble ships 3.2: Draft 7).
        cls = getattr(jsonschema, 'Draft202012Validator', None) or jsonschema.Draft7Validator
        if '$schema' in parameters:
            raise ValueError(f'function.parameters declares an unknown $schema '
                             f'{_short.repr(parameters["$schema"])}')
    if limits.value_deeper_than(parameters, limits.MAX_SCHEMA_DEPTH):
        raise ValueError(f'function.parameters nests arrays/objects more than '
                         f'{limits.MAX_SCHEMA_DEPTH} levels deep (the limit for a tool schema)')
    _check_schema(cls, parameters)
    undeclared = _undeclared_required(parameters)
    if undeclared and parameters.get('additionalProperties') is False:
        raise ValueError(f'function.parameters requires {undeclared} but does not declare it in '
                         'properties and forbids additional properties: no call can be valid')
    return name, cls


# Digests of parameter schemas already checked against their meta-schema, per validator class:
# a reload re-checks only the schemas that changed. Bounded: cleared when full.
_CHECKED_SCHEMAS: set[tuple[str, bytes]] = set()
_CHECKED_SCHEMAS_MAX = 100_000


@functools.cache
def _jsonschema_rs() -> Any:
    """Return the ``jsonschema_rs`` module, or None where it is not installed (it is optional)."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs


def _patterns_compile(schema: Any) -> bool:
    """Tell whether every ``pattern`` and ``patternProperties`` key in ``schema`` compiles."""
    pending = [schema]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            regexes = [item['pattern']] if isinstance(item.get('pattern'), str) else []
            if isinstance(item.get('patternProperties'), dict):
                regexes += list(item['patternProperties'])
            for regex in regexes:
                try:
                    re.compile(regex)
                except (re.error, TypeError, OverflowError):
                    return False
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def _surely_valid(cls: type, parameters: dict) -> bool:
    """
    Tell quickly whether ``parameters`` is a valid Draft 2020-12 schema (False: ask jsonschema).

    jsonschema's own meta-schema check costs ~1-10 ms per tool (the 2020-12 meta-schema resolves
    many ``$dynamicRef``s): 10,000 tools took minutes. ``jsonschema-rs`` checks the same
    meta-schema in ~30 us. It does not check the "regex" format jsonschema checks (with Python's
    ``re``, which then runs the patterns), so every pattern is compiled here too. Any doubt (an
    error, another draft, a schema it refuses) falls back to jsonschema, which stays the
    authority for what is invalid and for the message that says why.
    """
    rs = _jsonschema_rs()
    if rs is None or cls is not getattr(jsonschema, 'Draft202012Validator', None) \
            or '$schema' in parameters:
        return False
    try:
        valid = rs.meta.is_valid(parameters)
    except Exception:  # noqa: B902 - a value it cannot take: let jsonschema decide
        return False
    return bool(valid) and _patterns_compile(parameters)


# Keywords on which jsonschema-rs and jsonschema agree for JSON-decoded values (see
# _fast_validator). Not among them: pattern and patternProperties (Rust and Python regexes
# differ, and jsonschema-rs's fancy-regex backtracks: patterns are matched only with
# safe_regex, so the fast path must never see one), format (jsonschema asserts it here,
# with its own checkers), multipleOf (float rounding), references and the
# unevaluated*/dependent* family.
_FAST_KEYWORDS = frozenset({
    'type', 'properties', 'required', 'additionalProperties', 'items', 'prefixItems', 'enum',
    'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength',
    'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
    'anyOf', 'oneOf', 'allOf', 'not', 'title', 'description', 'default', 'examples',
    'deprecated', 'readOnly', 'writeOnly', '$comment'})
_SUBSCHEMA_LISTS = ('prefixItems', 'anyOf', 'oneOf', 'allOf')


def _fast_keywords_only(schema: Any) -> bool:
    """Tell whether every (sub)schema of ``schema`` uses only ``_FAST_KEYWORDS``."""
    pending = [schema]
    while pending:
        item = pending.pop()
        if isinstance(item, bool):
            continue
        if not isinstance(item, dict) or not item.keys() <= _FAST_KEYWORDS:
            return False
        properties = item.get('properties', {})
        if not isinstance(properties, dict):
            return False
        pending.extend(properties.values())
        for key in ('items', 'additionalProperties', 'not'):
            if key in item:
                pending.append(item[key])
        for key in _SUBSCHEMA_LISTS:
            if key in item:
                if not isinstance(item[key], list):
                    return False
                pending.extend(item[key])
    return True


def _fast_validator(cls: type, parameters: dict) -> Any:
    """
    Return a ``jsonschema-rs`` validator that can accept arguments quickly, or None.

    jsonschema checks a small argument object in ~25 us, and a call is checked by the dispatcher
    and, over DDS, again by the executor; jsonschema-rs in ~1 us. It is used only to say "valid",
    and only for Draft 2020-12 schemas made of keywords both implement alike: anything else, a
    "not valid", or a value it cannot take goes to jsonschema, which stays the authority and
    writes the message.
    """
    rs = _jsonschema_rs()
    cls = getattr(cls, 'BASE_VALIDATOR', cls)
    if rs is None or cls is not getattr(jsonschema, 'Draft202012Validator', None) \
            or '$schema' in parameters or not _fast_keywords_only(parameters):
        return None
    try:
        return rs.validator_for(parameters)
    except Exception:  # noqa: B902 - a schema it refuses: jsonschema alone
        return None


def _check_schema(cls: Any, parameters: dict) -> None:
    """Raise ValueError naming the path when ``parameters`` is not a valid schema for ``cls``."""
    try:
        text = json.dumps(parameters, sort_keys=True, allow_nan=False, default=repr)
    except ValueError:
        text = None  # NaN or Infinity somewhere: no cache, let the meta-schema decide
    key = None
    if text is not None:
        key = (cls.__name__, hashlib.blake2b(text.encode('utf-8', 'surrogatepass'),
                                             digest_size=16).digest())
        if key in _CHECKED_SCHEMAS:
            return
    if not _surely_valid(cls, parameters):
        try:
            cls.check_schema(parameters)
        except jsonschema_exceptions.SchemaError as exc:
            where = _json_path('function.parameters', exc.absolute_path)
            raise ValueError(f'{where} is not a valid JSON Schema ({cls.__name__}): '
                             f'{_truncate(exc.message, 200)}') from None
    # Valid is not enough: validating untrusted arguments must end, and end soon.
    check_schema_safety(parameters)
    if key is not None:
        if len(_CHECKED_SCHEMAS) >= _CHECKED_SCHEMAS_MAX:
            _CHECKED_SCHEMAS.clear()
        _CHECKED_SCHEMAS.add(key)


def _undeclared_required(parameters: dict) -> list[str]:
    """List required names missing from ``properties`` (models are only shown properties)."""
    properties = parameters.get('properties')
    required = parameters.get('required')
    if not isinstance(properties, dict) or not isinstance(required, list):
        return []
    return [name for name in required if isinstance(name, str) and name not in properties]


def decode_arguments_json(text: str) -> Any:
    """
    Decode a caller's JSON argument text under the size and depth limits.

    The same limits as the MCP server: at most ``limits.MAX_ARGUMENT_BYTES`` of UTF-8 and
    ``limits.MAX_ARGUMENT_DEPTH`` levels of arrays/objects (checked on the text, without
    recursion, before ``json.loads`` could recurse). Empty text means no arguments. Any failure
    is a ``ToolArgumentError`` (``invalid_arguments``) that says which limit or what JSON error.
    """
    if not text.strip():
        return {}
    size = limits.utf8_size(text, limits.MAX_ARGUMENT_BYTES)
    if size > limits.MAX_ARGUMENT_BYTES:
        raise ToolArgumentError(
            errors.INVALID_ARGUMENTS,
            f'arguments are {size} bytes of JSON; at most {limits.MAX_ARGUMENT_BYTES} are '
            'accepted (the MCP server has the same limit); pass large data by reference, such '
            'as a file path or a topic name')
    _check_text_depth(text)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ToolArgumentError(
            errors.INVALID_ARGUMENTS, f'arguments are not JSON ({_truncate(str(exc), 200)}); '
            'send a JSON object such as {"text": "hi"}') from None


def _check_text_depth(text: str | bytes | bytearray) -> None:
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode('latin-1')  # brackets and quotes are ASCII in any encoding
    if limits.json_text_deeper_than(text, limits.MAX_ARGUMENT_DEPTH):
        raise too_deep()


def _decode_arguments(arguments: Any) -> dict:
    """Accept a dict, a JSON object text, or a JSON string that encodes one (double-encoded)."""
    value = arguments
    for depth in range(_MAX_DECODE_DEPTH):
        if not isinstance(value, (str, bytes, bytearray)):
            break
        _check_text_depth(value)
        try:
            value = json.loads(value, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            if depth:  # a JSON string whose content is not JSON: report the string
                break
            raise ToolArgumentError(
                errors.INVALID_ARGUMENTS,
                f'arguments are not valid JSON: {_truncate(str(exc), 200)}') from None
    if limits.value_deeper_than(value, limits.MAX_ARGUMENT_DEPTH):
        raise too_deep()
    if isinstance(value, dict):
        return value
    raise ToolArgumentError(
        errors.INVALID_ARGUMENTS,
        f'arguments must be a JSON object, got {_json_type(value)} {_short.repr(value)}')


def _non_finite_path(value: Any, path: str) -> str | None:
    """Return the path of the first NaN or infinite float inside ``value``, if any."""
    pending = [(value, path)]
    while pending:
        item, where = pending.pop()
        if isinstance(item, float):
            if item != item or item in (math.inf, -math.inf):
                return where
        elif isinstance(item, dict):
            pending.extend((v, f'{where}.{k}') for k, v in item.items())
        elif isinstance(item, list):
            pending.extend((v, f'{where}[{i}]') for i, v in enumerate(item))
    return None


def _is_readable_file(path: pathlib.Path) -> bool:
    """Tell whether `path` can be read as a file: regular, a named pipe or a device."""
    return path.exists() and not path.is_dir()


def read_info_json(path: str | os.PathLike) -> Any:
    """
    Read and decode an info.json, or raise ``CatalogError`` naming the file and the problem.

    At most ``limits.MAX_INFO_JSON_BYTES`` (16 MiB) are read, whatever the path is (a symlink
    to ``/dev/zero``, a pipe that never ends), and JSON nested more than
    ``limits.MAX_INFO_JSON_DEPTH`` levels is refused before it is decoded.
    """
    try:
        raw = limits.read_limited(path, limits.MAX_INFO_JSON_BYTES, 'info.json')
    except limits.TooLarge as exc:
        raise CatalogError(str(exc)) from None
    except OSError as exc:
        raise CatalogError(f'{path}: cannot read: {exc.strerror or exc}') from None
    try:
        text = raw.decode('utf-8-sig')
    except UnicodeDecodeError as exc:
        raise CatalogError(f'{path}: not valid JSON: not UTF-8 text ({exc.reason} at byte '
                           f'{exc.start})') from None
    if limits.json_text_deeper_than(text, limits.MAX_INFO_JSON_DEPTH):
        raise CatalogError(f'{path}: not valid JSON for a catalog: arrays/objects nest more '
                           f'than {limits.MAX_INFO_JSON_DEPTH} levels deep')
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CatalogError(f'{path}: not valid JSON: {exc}') from None


class ToolCatalog:
    """The validated tools of one dataset, with a compiled argument validator per tool."""

    def __init__(self, tools: list | None, *, source: str = '<memory>',
                 info: dict | None = None, strict: bool = False) -> None:
        self._source = str(source)
        self._info = info if info is not None else {}
        self._problems: list[str] = []
        self._entries: dict[str, dict] = {}
        self._validators: dict[str, Any] = {}
        self._fast: dict[str, Any] = {}  # jsonschema-rs validators, made at a tool's first call
        self._fingerprints: dict[str, str] = {}  # schema_fingerprint, made at a tool's first call
        if tools is not None and not isinstance(tools, list):
            raise CatalogError(f'{self._source}: "tools" must be a list, got {_json_type(tools)}')
        self._used_default = not tools
        tools = copy.deepcopy(tools) if tools else copy.deepcopy(DEFAULT_TOOLS)
        ros_names: dict[str, str] = {}
        for index, entry in enumerate(tools):
            try:
                name, cls = _check_entry(entry)
                if name in self._entries:
                    raise ValueError(f'duplicate tool name {name!r} (first declared earlier)')
                ros_name = names.ros_safe(name)
                if ros_name in ros_names:
                    raise ValueError(
                        f'{name!r} and {ros_names[ros_name]!r} (declared earlier) are both '
                        f'served as ROS name {ros_name!r}; rename one (ROS names allow only '
                        'letters, digits and _)')
            except ValueError as exc:
                problem = f'{self._source}: {_entry_label(index, entry)}: {exc}'
                if strict:
                    raise CatalogError(problem) from None
                _LOG.warning('skipping tool entry: %s', problem)
                self._problems.append(problem)
                continue
            ros_names[ros_name] = name
            undeclared = _undeclared_required(entry['function']['parameters'])
            if undeclared:
                problem = (f'{self._source}: {_entry_label(index, entry)}: required {undeclared} '
                           'not declared in properties; models are not shown it, so calls will '
                           'miss it (declare it, or remove it from required)')
                _LOG.warning('%s', problem)
                self._problems.append(problem)
            self._entries[name] = entry
            # FORMAT_CHECKER: enforce "format" too (jsonschema >= 4.5; older ones skip it).
            self._validators[name] = _safe_class(cls)(
                entry['function']['parameters'],
                format_checker=getattr(cls, 'FORMAT_CHECKER', None))
        if tools and not self._entries:
            # Loading it would silently turn every call into unknown_tool (and a reload would
            # remove every tool): refuse, so the caller keeps what it has.
            shown = '; '.join(p.removeprefix(f'{self._source}: ') for p in self._problems[:3])
            more = f' (and {len(self._problems) - 3} more)' if len(self._problems) > 3 else ''
            raise CatalogError(f'{self._source}: none of the {len(tools)} declared tool(s) is '
                               f'valid, refusing an empty catalog: {shown}{more}')

    # ----------------------------------------------------------------------------- constructors
    @classmethod
    def from_tools(cls, tools: list[dict] | None, *, source: str = '<memory>',
                   info: dict | None = None, strict: bool = False) -> 'ToolCatalog':
        """Build a catalog from a list of OpenAI function schemas (``None``/``[]``: defaults)."""
        return cls(tools, source=source, info=info, strict=strict)

    @classmethod
    def from_info(cls, info: Any, *, source: str = '<memory>',
                  strict: bool = False) -> 'ToolCatalog':
        """Build a catalog from a parsed ``info.json`` document."""
        if not isinstance(info, dict):
            raise CatalogError(f'{source}: info.json must hold a JSON object, got '
                               f'{_json_type(info)}')
        return cls(info.get('tools'), source=source, info=info, strict=strict)

    @classmethod
    def load(cls, source: str | os.PathLike | None = None, *,
             strict: bool = False) -> 'ToolCatalog':
        """
        Load from a dataset root, an ``info.json`` path, or a LeRobot repo id.

        ``None`` or ``''`` loads the sample dataset shipped with this package. An existing local
        path always wins over a repo id of the same spelling. Any readable non-directory is read
        as a file (a named pipe too: a generator can hand over its catalog without a temp file).
        """
        if source is None or source == '':
            source = SAMPLE_DATASET
        path = pathlib.Path(os.fspath(source)).expanduser()
        if path.is_dir():
            for candidate in (path / 'meta' / 'info.json', path / 'info.json'):
                if _is_readable_file(candidate):
                    return cls._load_file(candidate, strict=strict)
            raise CatalogError(f'{path}: no meta/info.json in this directory (tried '
                               f'{path / "meta" / "info.json"}, {path / "info.json"})')
        if _is_readable_file(path):
            return cls._load_file(path, strict=strict)
        text = os.fspath(source)
        if isinstance(text, str) and _REPO_ID_PATTERN.fullmatch(text):
            try:
                info_path, origin = find_dataset_file(text, _INFO_RELPATH)
            except DatasetNotFound as exc:
                raise CatalogError(str(exc)) from None
            return cls._load_file(info_path, strict=strict, origin=origin)
        raise CatalogError(f'{text}: no such file or directory, and not a repo id (user/name)')

    @classmethod
    def _load_file(cls, path: pathlib.Path, *, strict: bool,
                   origin: str | None = None) -> 'ToolCatalog':
        source = str(path) if origin is None else f'{origin} ({path})'
        return cls.from_info(read_info_json(path), source=source, strict=strict)

    # ----------------------------------------------------------------------------- accessors
    @property
    def tools(self) -> list[dict]:
        """Return the accepted entries as stored (a new list; do not mutate the entries)."""
        return list(self._entries.values())

    @property
    def names(self) -> list[str]:
        """Tool names in declaration order."""
        return list(self._entries)

    @property
    def source(self) -> str:
        """Where the catalog came from (a path, ``repo_id (path)``, or ``<memory>``)."""
        return self._source

    @property
    def used_default(self) -> bool:
        """Tell whether the dataset declared no tools and LeRobot's ``DEFAULT_TOOLS`` were used."""
        return self._used_default

    @property
    def info(self) -> dict:
        """Return the whole ``info.json`` document (read-only use; the runtime never writes it)."""
        return self._info

    @property
    def problems(self) -> list[str]:
        """Warnings about entries skipped in non-strict mode."""
        return list(self._problems)

    @property
    def camera_names(self) -> list[str]:
        """Camera names from ``features`` keys ``observation.images.<name>``."""
        features = self._info.get('features') if isinstance(self._info, dict) else None
        if not isinstance(features, dict):
            return []
        prefix = 'observation.images.'
        return [key[len(prefix):] for key in features
                if isinstance(key, str) and key.startswith(prefix) and len(key) > len(prefix)]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __repr__(self) -> str:
        return (f'ToolCatalog(names={self.names!r}, source={self._source!r}, '
                f'used_default={self._used_default})')

    def schema(self, name: str) -> dict:
        """Return the stored entry of ``name`` (raises ``ToolArgumentError`` when unknown)."""
        return self._entries[self._require(name)]

    def parameters(self, name: str) -> dict:
        """Return the JSON Schema of ``name``'s arguments."""
        return self._entries[self._require(name)]['function']['parameters']

    def description(self, name: str) -> str:
        """Return the description of ``name`` ('' when the entry has none)."""
        return self._entries[self._require(name)]['function'].get('description', '')

    def suggest(self, name: Any) -> str | None:
        """Return the closest known tool name, or None when nothing is close."""
        if not isinstance(name, str) or not self._entries:
            return None
        lowered = {known.lower(): known for known in self._entries}
        if name.lower() in lowered:
            return lowered[name.lower()]
        matches = difflib.get_close_matches(name[:200], list(self._entries), n=1, cutoff=0.6)
        return matches[0] if matches else None

    def validate(self, name: str, arguments: Any) -> ValidatedArguments:
        """
        Return ``arguments`` (a dict or JSON text) as a dict checked against ``name``'s schema.

        The dict is a `ValidatedArguments` that remembers the schema it was checked against,
        so a tool_server in this process takes the check instead of making it again
        (`vouches_for`). Raises ``ToolArgumentError`` (``unknown_tool`` or
        ``invalid_arguments``) with a message that names each failing field path
        (``arguments.target.x``) and its constraint.
        """
        validator = self._validators.get(name) if isinstance(name, str) else None
        if validator is None:
            self._require(name)
        try:
            checked = self._check(name, validator, _decode_arguments(arguments))
        except ToolArgumentError:
            raise
        except Exception as exc:  # noqa: B902 - one call's failure must stay that call's
            # Schemas are checked at load so that validation ends (schema_safety); anything
            # left (a RecursionError, a bug in a format checker) refuses this call only.
            raise ToolArgumentError(
                errors.INVALID_ARGUMENTS,
                f'arguments for {name!r} could not be checked against its schema '
                f'({type(exc).__name__}: {_truncate(str(exc), 200)}); the call was refused',
                tool=name) from None
        return ValidatedArguments(checked, name, self.fingerprint(name))

    def fingerprint(self, name: str) -> str:
        """Return the `schema_fingerprint` of ``name``'s parameters (equal schemas, equal)."""
        found = self._fingerprints.get(name)
        if found is None:
            found = self._fingerprints[name] = schema_fingerprint(self.parameters(name))
        return found

    def vouches_for(self, name: str, arguments: Any) -> bool:
        """
        Tell whether ``arguments`` were validated against this catalog's schema of ``name``.

        True for a `ValidatedArguments` of ``name`` whose schema fingerprint is this catalog's,
        whichever catalog made it (the dispatcher's and the tool_server's in one process, with
        the same dataset); then validating them here again would find nothing new. False for
        anything else: a plain dict, another tool, another schema of the same tool.
        """
        return (isinstance(arguments, ValidatedArguments) and arguments.tool == name
                and name in self._entries and arguments.schema == self.fingerprint(name))

    def _check(self, name: str, validator: Any, value: dict) -> dict:
        bad_number = _non_finite_path(value, 'arguments')
        if bad_number:
            raise ToolArgumentError(
                errors.INVALID_ARGUMENTS,
                f'invalid arguments for {name!r}: {bad_number} is not a finite number (NaN and '
                'Infinity are not JSON); send a finite value', tool=name)
        fast = self._fast.get(name, False)
        if fast is False:
            fast = self._fast[name] = _fast_validator(type(validator), validator.schema)
        if fast is not None:
            try:
                if fast.is_valid(value):
                    return value
            except Exception:  # noqa: B902 - a value it cannot take: jsonschema decides
                pass
        found = list(validator.iter_errors(value))
        if not found:
            return value
        found.sort(key=jsonschema_exceptions.relevance, reverse=True)
        messages: list[str] = []
        for error in found:
            for message in _describe_error(error):
                if message not in messages:
                    messages.append(message)
        text = _truncate(f'invalid arguments for {name!r}: ' + '; '.join(messages))
        raise ToolArgumentError(errors.INVALID_ARGUMENTS, text, tool=name)

    def _require(self, name: Any) -> str:
        if isinstance(name, str) and name in self._entries:
            return name
        suggestion = self.suggest(name)
        hint = f"; did you mean '{suggestion}'?" if suggestion else ''
        known = ', '.join(self._entries) or 'none'
        raise ToolArgumentError(
            errors.UNKNOWN_TOOL,
            f'unknown tool {_short.repr(name)}{hint} (known tools: {known})',
            tool=name if isinstance(name, str) else None, suggestion=suggestion)
