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
The mapping language: how a tool's JSON arguments fill a ROS request, goal or message.

A mapping mirrors the message: a YAML mapping of field names to values, nested for nested
messages. A value is one of:

- a constant: ``data: true``, ``frame_id: base_link``, ``covariance: [0.1, 0, 0]``;
- an argument reference: ``data: $on`` (the tool's argument ``on``), ``x: $target.x`` (a field
  of an object argument); ``$$text`` is the literal string ``$text``;
- an argument with a default for when the caller leaves the (optional) argument out:
  ``speed: {$arg: speed, default: 0.2}``. Without one, the catalog schema's ``default`` is used,
  and without that the field keeps the message's own default;
- a nested mapping for a nested message: ``linear: {x: $speed}``;
- a list for an array field, each item a value: ``position: [$x, $y, 0.0]``.

An argument may also fill a whole nested message or array when its JSON value has that shape
(``pose: $pose`` with an object argument). No expressions, no arithmetic, no units, no eval:
what a binding sends is readable from the file.

``compile_mapping`` checks a mapping against the message type and the tool's catalog schema and
returns every problem at once; ``Mapping.build`` fills a message at call time and raises
``ConversionError`` (reported as ``invalid_arguments``) before anything is sent.
"""

from dataclasses import dataclass, field
import re
from typing import Any

from lerobot_tools_ros.tools.bindings.interfaces import (
    ConversionError, fields_of, FLOAT_TYPES, from_json, INTEGER_RANGES, nested_class,
    slot_description, type_name,
)
from rosidl_parser import definition as idl

__all__ = ['ARG_KEY', 'DEFAULT_KEY', 'Mapping', 'compile_mapping', 'default_mapping',
           'schema_fits']

ARG_KEY = '$arg'
DEFAULT_KEY = 'default'
_REFERENCE = re.compile(r'^\$([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)$')
_MISSING = object()


class _Node:
    def value(self, arguments: dict, path: str) -> Any:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class _Constant(_Node):
    raw: Any
    slot_type: Any

    def value(self, arguments: dict, path: str) -> Any:
        # Converted on every call: a nested message or list is never shared between messages.
        return from_json(self.raw, self.slot_type, path)


@dataclass
class _Argument(_Node):
    reference: tuple[str, ...]
    slot_type: Any
    default: Any = _MISSING

    def value(self, arguments: dict, path: str) -> Any:
        found: Any = arguments
        for key in self.reference:
            if not isinstance(found, dict) or key not in found:
                found = _MISSING
                break
            found = found[key]
        if found is _MISSING:
            found = self.default
        if found is _MISSING:
            return _MISSING
        return from_json(found, self.slot_type, f'{path} (${".".join(self.reference)})')


@dataclass
class _Message(_Node):
    message_class: Any
    fields: dict[str, _Node] = field(default_factory=dict)

    def value(self, arguments: dict, path: str) -> Any:
        message = self.message_class()
        for name, node in self.fields.items():
            item = node.value(arguments, f'{path}.{name}' if path else name)
            if item is not _MISSING:
                setattr(message, name, item)
        return message


@dataclass
class _List(_Node):
    slot_type: Any
    items: list[_Node]

    def value(self, arguments: dict, path: str) -> Any:
        values = []
        for index, node in enumerate(self.items):
            item = node.value(arguments, f'{path}[{index}]')
            if item is _MISSING:
                reference = '$' + '.'.join(getattr(node, 'reference', ()))
                raise ConversionError(f'{path}[{index}]', f'{reference} was not given and has '
                                                          'no default (an array item is needed)')
            values.append(item)
        if isinstance(self.slot_type.value_type, idl.BasicType) \
                and self.slot_type.value_type.typename == 'octet' \
                and not isinstance(self.slot_type, idl.Array):
            return b''.join(values)
        return values


class Mapping:
    """A checked mapping for one message type; ``build(arguments)`` returns a new message."""

    def __init__(self, root: _Message, references: set[str]) -> None:
        self._root = root
        self.references = references

    @property
    def message_class(self) -> Any:
        """Return the class of the messages this mapping builds."""
        return self._root.message_class

    def build(self, arguments: dict) -> Any:
        """Fill a new message from ``arguments``; raise ``ConversionError`` naming the field."""
        return self._root.value(arguments, '')


def default_mapping(parameters: dict) -> dict:
    """Return the mapping used when a binding gives none: each argument fills its namesake."""
    properties = parameters.get('properties') if isinstance(parameters, dict) else None
    return {name: f'${name}' for name in (properties or {})}


def _schema_types(schema: dict) -> set[str]:
    declared = schema.get('type')
    if isinstance(declared, str):
        return {declared} - {'null'}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)} - {'null'}
    return set()


def _bound(schema: dict, key: str, exclusive: str) -> float | None:
    value = schema.get(key)
    other = schema.get(exclusive)
    candidates = [v for v in (value, other) if isinstance(v, (int, float))
                  and not isinstance(v, bool)]
    if not candidates:
        return None
    return min(candidates) if key == 'minimum' else max(candidates)


def schema_fits(schema: Any, slot_type: Any, where: str) -> list[str]:
    """
    List why values valid under the JSON ``schema`` could not fill a field of ``slot_type``.

    Only what the schema states is checked (an integer schema without bounds is fine for an
    int8 field: an out-of-range value is refused at call time, as ``invalid_arguments``).
    """
    if not isinstance(schema, dict):
        return []
    types = _schema_types(schema)
    field_type = slot_description(slot_type)
    problems: list[str] = []

    def refuse(allowed: set[str]) -> None:
        wrong = sorted(types - allowed)
        if wrong:
            problems.append(f'{where}: JSON {"/".join(wrong)} cannot fill a {field_type} field')

    if isinstance(slot_type, idl.BasicType):
        name = slot_type.typename
        if name == 'boolean':
            refuse({'boolean'})
        elif name in INTEGER_RANGES:
            refuse({'integer'})
            low, high = INTEGER_RANGES[name]
            minimum = _bound(schema, 'minimum', 'exclusiveMinimum')
            maximum = _bound(schema, 'maximum', 'exclusiveMaximum')
            if minimum is not None and minimum < low or maximum is not None and maximum > high:
                problems.append(f'{where}: the schema allows {minimum}..{maximum}, outside the '
                                f'{field_type} range {low}..{high}')
            for option in schema.get('enum') or []:
                if isinstance(option, int) and not low <= option <= high:
                    problems.append(f'{where}: enum value {option} is outside the {field_type} '
                                    f'range {low}..{high}')
        elif name in FLOAT_TYPES:
            refuse({'number', 'integer'})
        else:
            refuse({'string'})
    elif isinstance(slot_type, idl.AbstractString):
        refuse({'string'})
        bound = getattr(slot_type, 'maximum_size', None)
        length = schema.get('maxLength')
        if bound is not None and isinstance(length, int) and length > bound:
            problems.append(f'{where}: the schema allows {length} characters, the field '
                            f'{field_type} holds {bound}')
    elif isinstance(slot_type, idl.NamespacedType):
        refuse({'object'})
        properties = schema.get('properties')
        if isinstance(properties, dict):
            fields = fields_of(nested_class(slot_type))
            for key, sub in properties.items():
                if key not in fields:
                    problems.append(f'{where}.{key}: {field_type} has no field {key!r} '
                                    f'(fields: {_field_list(fields)})')
                else:
                    problems.extend(schema_fits(sub, fields[key], f'{where}.{key}'))
    elif isinstance(slot_type, idl.AbstractNestedType):
        refuse({'array'})
        if isinstance(slot_type, idl.BoundedSequence):
            most = schema.get('maxItems')
            if isinstance(most, int) and most > slot_type.maximum_size:
                problems.append(f'{where}: the schema allows {most} items, the field '
                                f'{field_type} holds {slot_type.maximum_size}')
        if isinstance(slot_type, idl.Array):
            for key in ('minItems', 'maxItems'):
                count = schema.get(key)
                if isinstance(count, int) and count != slot_type.size:
                    problems.append(f'{where}: {key} {count} but the field {field_type} holds '
                                    f'exactly {slot_type.size}')
        problems.extend(schema_fits(schema.get('items'), slot_type.value_type, f'{where}[]'))
    return problems


def _field_list(fields: dict) -> str:
    names = list(fields)
    return ', '.join(names[:15]) + (', ...' if len(names) > 15 else '')


def _argument_schema(parameters: dict, reference: tuple[str, ...]) -> Any:
    schema: Any = parameters
    for key in reference:
        properties = schema.get('properties') if isinstance(schema, dict) else None
        if not isinstance(properties, dict) or key not in properties:
            return _MISSING
        schema = properties[key]
    return schema


class _Compiler:
    def __init__(self, parameters: dict, tool: str) -> None:
        self.parameters = parameters if isinstance(parameters, dict) else {}
        self.tool = tool
        self.problems: list[str] = []
        self.references: set[str] = set()

    def message(self, message_class: Any, spec: Any, where: str) -> _Message:
        node = _Message(message_class)
        if spec is None:
            return node
        if not isinstance(spec, dict):
            self.problems.append(f'{where}: expected a mapping of field names, got '
                                 f'{type(spec).__name__} {spec!r:.60}')
            return node
        fields = fields_of(message_class)
        for key, value in spec.items():
            path = f'{where}.{key}'
            slot_type = fields.get(key) if isinstance(key, str) else None
            if slot_type is None:
                self.problems.append(f'{path}: unknown field: {type_name(message_class)}'
                                     f' has no field {key!r} (fields: {_field_list(fields)})')
                continue
            compiled = self.value(value, slot_type, path)
            if compiled is not None:
                node.fields[key] = compiled
        return node

    def value(self, spec: Any, slot_type: Any, where: str) -> _Node | None:
        if isinstance(spec, str) and spec.startswith('$') and not spec.startswith('$$'):
            return self.argument(spec, _MISSING, slot_type, where)
        if isinstance(spec, dict) and ARG_KEY in spec:
            extra = sorted(set(spec) - {ARG_KEY, DEFAULT_KEY})
            if extra:
                self.problems.append(f'{where}: {{{ARG_KEY}: ..., {DEFAULT_KEY}: ...}} takes no '
                                     f'other keys, got {extra}')
                return None
            name = spec[ARG_KEY]
            reference = name if isinstance(name, str) and name.startswith('$') else f'${name}'
            default = spec.get(DEFAULT_KEY, _MISSING)
            if default is not _MISSING:
                try:
                    from_json(default, slot_type, f'{where} (default)')
                except ConversionError as exc:
                    self.problems.append(str(exc))
            return self.argument(reference, default, slot_type, where)
        if isinstance(slot_type, idl.NamespacedType) and isinstance(spec, dict):
            return self.message(nested_class(slot_type), spec, where)
        if isinstance(slot_type, idl.AbstractNestedType) and isinstance(spec, list):
            if isinstance(slot_type, idl.Array) and len(spec) != slot_type.size:
                self.problems.append(f'{where}: {slot_description(slot_type)} needs exactly '
                                     f'{slot_type.size} items, the mapping gives {len(spec)}')
                return None
            if isinstance(slot_type, idl.BoundedSequence) and len(spec) > slot_type.maximum_size:
                self.problems.append(f'{where}: {slot_description(slot_type)} holds at most '
                                     f'{slot_type.maximum_size} items, the mapping gives '
                                     f'{len(spec)}')
                return None
            items = [self.value(item, slot_type.value_type, f'{where}[{index}]')
                     for index, item in enumerate(spec)]
            nodes = [item for item in items if item is not None]
            return None if len(nodes) != len(items) else _List(slot_type, nodes)
        if isinstance(spec, str) and spec.startswith('$$'):
            spec = spec[1:]
        try:
            from_json(spec, slot_type, where)
        except ConversionError as exc:
            self.problems.append(f'{exc.path}: constant {exc.message}')
            return None
        return _Constant(spec, slot_type)

    def argument(self, text: str, default: Any, slot_type: Any, where: str) -> _Node | None:
        match = _REFERENCE.fullmatch(text)
        if match is None:
            self.problems.append(f'{where}: {text!r} is not an argument reference such as $name '
                                 'or $name.field (write $$ for a literal $)')
            return None
        reference = tuple(match.group(1).split('.'))
        schema = _argument_schema(self.parameters, reference)
        if schema is _MISSING:
            declared = sorted((self.parameters.get('properties') or {}))
            self.problems.append(f'{where}: {text} is not declared in the catalog schema of tool '
                                 f"'{self.tool}' (declared: {', '.join(declared) or 'none'})")
            return None
        self.problems.extend(schema_fits(schema, slot_type, f'{where} ({text})'))
        if default is _MISSING and isinstance(schema, dict) and 'default' in schema:
            default = schema['default']
            try:
                from_json(default, slot_type, f'{where} (schema default of {text})')
            except ConversionError as exc:
                self.problems.append(str(exc))
        self.references.add(reference[0])
        return _Argument(reference, slot_type, default)


def compile_mapping(message_class: Any, spec: Any, parameters: dict, *, tool: str,
                    where: str) -> tuple[Mapping | None, list[str]]:
    """
    Check ``spec`` against ``message_class`` and the tool's catalog ``parameters`` schema.

    Returns the mapping (``None`` when there are problems) and every problem found, each
    prefixed with ``where`` and the field path.
    """
    compiler = _Compiler(parameters, tool)
    root = compiler.message(message_class, spec, where)
    if compiler.problems:
        return None, compiler.problems
    return Mapping(root, compiler.references), []
