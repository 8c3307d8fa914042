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
ROS interface types by name, and faithful conversion between JSON values and their messages.

``rosidl_runtime_py`` (what ``ros2 topic pub`` uses to fill messages) is not available
everywhere, and it would accept what a robot should refuse (silent float-to-int truncation,
wrapped integers), so the few setters and readers needed are here. They work from the generated
classes' ``get_fields_and_field_types()`` and ``SLOT_TYPES`` (``rosidl_parser.definition``
objects that every generated message module carries), so nothing but the installed interface
packages is needed. No rclpy import: this runs in the startup check, the CLI and in tests.
"""

import array
import importlib
import math
import re
from typing import Any

from lerobot_tools_ros.parsing.values import json_type  # JSON Schema's names, as in parse errors
from lerobot_tools_ros.untrusted import ros_string
from rosidl_parser import definition as idl

__all__ = [
    'ConversionError', 'FLOAT32_MAX', 'INTEGER_RANGES', 'InterfaceError', 'fields_of',
    'from_json', 'message_from_json', 'message_to_json', 'nested_class', 'resolve_type',
    'slot_description', 'type_name',
]

TYPE_NAME = re.compile(r'^([A-Za-z][A-Za-z0-9_]*)/(msg|srv|action)/([A-Z][A-Za-z0-9_]*)$')

INTEGER_RANGES: dict[str, tuple[int, int]] = {
    'int8': (-2**7, 2**7 - 1), 'uint8': (0, 2**8 - 1),
    'int16': (-2**15, 2**15 - 1), 'uint16': (0, 2**16 - 1),
    'int32': (-2**31, 2**31 - 1), 'uint32': (0, 2**32 - 1),
    'int64': (-2**63, 2**63 - 1), 'uint64': (0, 2**64 - 1),
    'char': (0, 2**8 - 1), 'octet': (0, 2**8 - 1),
    # IDL's non-explicit names, as some generators spell them
    'short': (-2**15, 2**15 - 1), 'unsigned short': (0, 2**16 - 1),
    'long': (-2**31, 2**31 - 1), 'unsigned long': (0, 2**32 - 1),
    'long long': (-2**63, 2**63 - 1), 'unsigned long long': (0, 2**64 - 1),
}
FLOAT32_MAX = 3.4028234663852886e38
FLOAT_TYPES = ('float', 'double', 'long double')


class InterfaceError(ValueError):
    """An interface type name that does not resolve to an installed type."""


class ConversionError(ValueError):
    """A JSON value that cannot fill a message field; ``path`` names the field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f'{path}: {message}')
        self.path = path
        self.message = message


def resolve_type(type_name: Any, category: str | None = None) -> Any:
    """
    Return the generated class of ``pkg/msg/Type``, ``pkg/srv/Type`` or ``pkg/action/Type``.

    ``category`` ('msg', 'srv' or 'action') is what the caller needs; a type of another
    category is refused with a message that says which one was given.
    """
    match = TYPE_NAME.fullmatch(type_name) if isinstance(type_name, str) else None
    if match is None:
        example = {'srv': 'std_srvs/srv/SetBool', 'action': 'test_msgs/action/Fibonacci'}.get(
            category or '', 'geometry_msgs/msg/Twist')
        raise InterfaceError(f'{type_name!r} is not an interface type name such as {example}')
    package, found, name = match.groups()
    if category is not None and found != category:
        raise InterfaceError(f'{type_name} is a {found} type; this needs a {category} type '
                             f'(<package>/{category}/<Type>)')
    module_name = f'{package}.{found}'
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise InterfaceError(f'unknown type {type_name}: no installed interface package '
                             f'provides {module_name}') from None
    cls = getattr(module, name, None)
    if cls is None or not isinstance(cls, type):
        known = sorted(n for n in dir(module) if n[:1].isupper() and '_' not in n)
        raise InterfaceError(f'unknown type {type_name}: {module_name} has no {name!r} '
                             f'(it has: {", ".join(known) or "nothing"})')
    return cls


def fields_of(message_class: Any) -> dict[str, Any]:
    """Field name -> ``rosidl_parser.definition`` type, in declaration order."""
    cached = getattr(message_class, '_lerobot_fields', None)
    if cached is None:
        names = list(message_class.get_fields_and_field_types())
        cached = dict(zip(names, message_class.SLOT_TYPES))
        message_class._lerobot_fields = cached
    return cached


def nested_class(slot_type: Any) -> Any:
    """Return the class of a ``NamespacedType`` field (``std_msgs.msg.Header``)."""
    module = importlib.import_module('.'.join(slot_type.namespaces))
    return getattr(module, slot_type.name)


def _basic_name(typename: str) -> str:
    return {'boolean': 'bool', 'octet': 'byte', 'float': 'float32',
            'double': 'float64'}.get(typename, typename)


def slot_description(slot_type: Any) -> str:
    """Name a field type as the interface files spell it (``int8``, ``string<=10``...)."""
    if isinstance(slot_type, idl.BasicType):
        return _basic_name(slot_type.typename)
    if isinstance(slot_type, idl.AbstractString):
        wide = 'w' if isinstance(slot_type, idl.AbstractWString) else ''
        bound = getattr(slot_type, 'maximum_size', None)
        return f'{wide}string' + (f'<={bound}' if bound else '')
    if isinstance(slot_type, idl.NamespacedType):
        return '/'.join([*slot_type.namespaces, slot_type.name])
    if isinstance(slot_type, idl.Array):
        return f'{slot_description(slot_type.value_type)}[{slot_type.size}]'
    if isinstance(slot_type, idl.BoundedSequence):
        return f'{slot_description(slot_type.value_type)}[<={slot_type.maximum_size}]'
    if isinstance(slot_type, idl.UnboundedSequence):
        return f'{slot_description(slot_type.value_type)}[]'
    return str(slot_type)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _basic(value: Any, typename: str, path: str) -> Any:
    if typename == 'boolean':
        if isinstance(value, bool):
            return value
        raise ConversionError(path, f'expects a boolean, got {json_type(value)} {_short(value)}')
    if typename in INTEGER_RANGES:
        if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConversionError(path, f'expects an integer ({_basic_name(typename)}), got '
                                        f'{json_type(value)} {_short(value)}')
        low, high = INTEGER_RANGES[typename]
        if not low <= value <= high:
            raise ConversionError(path, f'{value} is out of the {_basic_name(typename)} range '
                                        f'{low}..{high}')
        return bytes([value]) if typename == 'octet' else value
    if typename in FLOAT_TYPES:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ConversionError(path, f'expects a number, got {json_type(value)} '
                                        f'{_short(value)}')
        try:
            number = float(value)
        except OverflowError:  # a JSON integer beyond any float
            raise ConversionError(path, f'{_short(value)} is out of the '
                                        f'{_basic_name(typename)} range') from None
        if not math.isfinite(number):
            raise ConversionError(path, f'expects a finite number, got {value}')
        if typename == 'float' and abs(number) > FLOAT32_MAX:
            raise ConversionError(path, f'{value} is out of the float32 range')
        return number
    if typename == 'wchar':
        if isinstance(value, str) and len(value) == 1:
            return value
        raise ConversionError(path, f'expects one character, got {_short(value)}')
    raise ConversionError(path, f'unsupported field type {typename}')


def from_json(value: Any, slot_type: Any, path: str) -> Any:
    """
    Convert a JSON value for a field of ``slot_type``; raise ``ConversionError`` if it cannot.

    Integers must be integers in range (3.0 counts, 3.5 does not), floats finite, strings and
    sequences within their bounds, nested messages objects of known fields.
    """
    if isinstance(slot_type, idl.BasicType):
        return _basic(value, slot_type.typename, path)
    if isinstance(slot_type, idl.AbstractString):
        if not isinstance(value, str):
            raise ConversionError(path, f'expects a string, got {json_type(value)} '
                                        f'{_short(value)}')
        value = ros_string(value)  # model text may hold lone surrogates; ROS needs UTF-8
        bound = getattr(slot_type, 'maximum_size', None)
        if bound is not None:
            size = len(value) if isinstance(slot_type, idl.AbstractWString) \
                else len(value.encode('utf-8'))
            if size > bound:
                raise ConversionError(path, f'is {size} long, more than its bound {bound}')
        return value
    if isinstance(slot_type, idl.NamespacedType):
        if not isinstance(value, dict):
            raise ConversionError(path, f'expects an object ({slot_description(slot_type)}), '
                                        f'got {json_type(value)} {_short(value)}')
        return message_from_json(nested_class(slot_type), value, path)
    if isinstance(slot_type, idl.AbstractNestedType):
        if not isinstance(value, list):
            raise ConversionError(path, f'expects an array ({slot_description(slot_type)}), '
                                        f'got {json_type(value)} {_short(value)}')
        if isinstance(slot_type, idl.Array) and len(value) != slot_type.size:
            raise ConversionError(path, f'expects exactly {slot_type.size} items, got '
                                        f'{len(value)}')
        if isinstance(slot_type, idl.BoundedSequence) and len(value) > slot_type.maximum_size:
            raise ConversionError(path, f'holds at most {slot_type.maximum_size} items, got '
                                        f'{len(value)}')
        items = [from_json(item, slot_type.value_type, f'{path}[{index}]')
                 for index, item in enumerate(value)]
        value_type = slot_type.value_type
        if isinstance(value_type, idl.BasicType) and value_type.typename == 'octet' \
                and not isinstance(slot_type, idl.Array):
            return b''.join(items)
        return items
    raise ConversionError(path, f'unsupported field type {slot_description(slot_type)}')


def message_from_json(message_class: Any, value: dict, path: str) -> Any:
    """Build a ``message_class`` instance from a JSON object of its fields."""
    fields = fields_of(message_class)
    message = message_class()
    for key, item in value.items():
        slot_type = fields.get(key)
        if slot_type is None:
            raise ConversionError(f'{path}.{key}', f'{type_name(message_class)} has no field '
                                                   f'{key!r} (fields: {", ".join(fields)})')
        setattr(message, key, from_json(item, slot_type, f'{path}.{key}'))
    return message


def type_name(message_class: Any) -> str:
    module = message_class.__module__.split('.')
    return f'{module[0]}/{module[1]}/{message_class.__name__}' if len(module) > 1 \
        else message_class.__name__


def _float_json(value: float, path: str, non_finite: dict[str, str]) -> float | None:
    if math.isfinite(value):
        return value
    non_finite[path] = 'NaN' if value != value else ('Infinity' if value > 0 else '-Infinity')
    return None


def _value_json(value: Any, slot_type: Any, path: str, non_finite: dict[str, str]) -> Any:
    if isinstance(slot_type, idl.NamespacedType):
        return _message_json(value, path, non_finite)
    if isinstance(slot_type, idl.AbstractNestedType):
        if isinstance(value, (bytes, bytearray)):
            return list(value)
        if isinstance(value, array.array) or hasattr(value, 'tolist'):
            value = value.tolist()
        return [_value_json(item, slot_type.value_type, f'{path}[{index}]', non_finite)
                for index, item in enumerate(value)]
    if isinstance(value, (bytes, bytearray)):
        return value[0] if len(value) == 1 else list(value)
    if hasattr(value, 'item') and not isinstance(value, (int, float, str)):
        value = value.item()  # a numpy scalar
    if isinstance(value, float):
        return _float_json(value, path, non_finite)
    return value


def _message_json(message: Any, path: str, non_finite: dict[str, str]) -> dict:
    return {name: _value_json(getattr(message, name), slot_type,
                              f'{path}.{name}' if path else name, non_finite)
            for name, slot_type in fields_of(type(message)).items()}


def message_to_json(message: Any) -> tuple[dict, dict[str, str]]:
    """
    Return ``message`` as a JSON-ready dict, plus the paths of non-finite floats.

    JSON has no NaN or Infinity: such a value becomes ``null`` and its path is reported as
    ``{"voltage": "NaN"}``, so the reading is neither lost nor turned into invalid JSON. Bytes
    become integers 0..255, arrays lists, time stamps ``{"sec", "nanosec"}`` as in the message.
    """
    non_finite: dict[str, str] = {}
    return _message_json(message, '', non_finite), non_finite
