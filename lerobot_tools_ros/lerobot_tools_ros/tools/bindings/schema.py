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
Generate a catalog tool schema (and its binding entry) from a ROS interface type.

The request of a service, the goal of an action or a message's fields become the tool's
parameters: ROS integer types give ``integer`` with their exact range, floats ``number``,
bounded strings ``maxLength``, fixed arrays ``minItems = maxItems``, bounded sequences
``maxItems``, nested messages objects. Comments in the installed interface definition
(``share/<pkg>/<msg|srv|action>/<Type>.idl``, found through the ament index or next to the
type's Python module) become descriptions, and ``@default`` values defaults. Without that file
both are missing (and fields with defaults are marked required): ``interface_tool`` says so in
its ``warnings``. The binding entry maps each argument to its namesake field, so catalog and
binding cannot drift apart; ``loader`` accepts the pair as generated.
"""

import importlib
import logging
import pathlib
from typing import Any

from lerobot_tools_ros.tools.bindings.interfaces import (
    fields_of, INTEGER_RANGES, InterfaceError, nested_class, resolve_type, TYPE_NAME,
)
from rosidl_parser import definition as idl

__all__ = ['interface_tool']

_LOG = logging.getLogger('lerobot_tools_ros.tools.bindings.schema')
_KIND_OF_CATEGORY = {'srv': 'service', 'action': 'action', 'msg': 'publish'}
_MESSAGE_KINDS = ('publish', 'read')


def _idl_share(package: str, relative: str) -> pathlib.Path | None:
    """
    Return the share directory of `package` that holds `relative` (its .idl), or None.

    The ament index (AMENT_PREFIX_PATH) first; else the install prefix of the package's Python
    module (``<prefix>/lib/pythonX.Y/site-packages/<pkg>`` -> ``<prefix>/share/<pkg>``), so a
    type that imports is described even from a shell that did not source its workspace.
    """
    candidates = []
    try:
        from ament_index_python.packages import get_package_share_directory
        candidates.append(pathlib.Path(get_package_share_directory(package)))
    except Exception:  # noqa: B902 - not in the index (or no index): try the module's prefix
        pass
    try:
        module_file = importlib.import_module(package).__file__
        if module_file is None:  # a namespace package: no prefix to derive
            raise ImportError(f'{package} has no __file__')
        module_dir = pathlib.Path(module_file).resolve().parent
        candidates += [parent / 'share' / package for parent in module_dir.parents]
    except Exception:  # noqa: B902 - no module (the type would not resolve either)
        pass
    return next((share for share in candidates if (share / relative).is_file()), None)


def _comments(type_name: str, warnings: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """
    Return ``{struct name: {field: {"description": ..., "default": ...}}}`` from the type's .idl.

    Without the .idl (or its parser) there is nothing to return; why goes to `warnings`.
    """
    match = TYPE_NAME.fullmatch(type_name)
    if match is None:
        raise InterfaceError(f'{type_name!r} is not an interface type name')
    package, category, name = match.groups()
    relative = f'{category}/{name}.idl'
    share = _idl_share(package, relative)
    try:
        if share is None:
            raise FileNotFoundError(f'share/{package}/{relative} is neither on AMENT_PREFIX_PATH '
                                    f"nor beside {package}'s Python module")
        from rosidl_parser.parser import parse_idl_file
        content = parse_idl_file(idl.IdlLocator(str(share), relative)).content
    except Exception as exc:  # noqa: B902 - missing file, index or parser: no descriptions
        _LOG.debug('no interface comments for %s: %s', type_name, exc)
        if warnings is not None:
            warnings.append(
                f'{type_name}: its interface definition could not be read ({exc}); the schema '
                'has no field descriptions and marks fields that have defaults as required '
                f'(source the workspace that installs {package} and run this again)')
        return {}
    structures = [element.structure for element in content.get_elements_of_type(idl.Message)]
    for service in content.get_elements_of_type(idl.Service):
        structures += [service.request_message.structure, service.response_message.structure]
    for action in content.get_elements_of_type(idl.Action):
        structures += [action.goal.structure, action.result.structure,
                       action.feedback.structure]
    found: dict[str, dict[str, Any]] = {}
    for structure in structures:
        members: dict[str, Any] = {}
        for member in structure.members:
            notes: dict[str, Any] = {}
            texts = [value.get('text', '') for value in
                     (member.get_annotation_values('verbatim')
                      if member.has_annotation('verbatim') else [])
                     if isinstance(value, dict) and value.get('language') == 'comment']
            text = ' '.join(' '.join(texts).split())
            if text:
                notes['description'] = text
            if member.has_annotation('default'):
                notes['default'] = member.get_annotation_value('default').get('value')
            members[member.name] = notes
        found[structure.namespaced_type.name] = members
    return found


def _field_schema(slot_type: Any, notes: dict, depth: int = 0) -> dict:
    schema: dict[str, Any] = {}
    if isinstance(slot_type, idl.BasicType):
        name = slot_type.typename
        if name == 'boolean':
            schema['type'] = 'boolean'
        elif name in INTEGER_RANGES:
            low, high = INTEGER_RANGES[name]
            schema.update(type='integer', minimum=low, maximum=high)
        elif name in ('float', 'double', 'long double'):
            schema['type'] = 'number'
        else:
            schema.update(type='string', minLength=1, maxLength=1)
    elif isinstance(slot_type, idl.AbstractString):
        schema['type'] = 'string'
        bound = getattr(slot_type, 'maximum_size', None)
        if bound:
            schema['maxLength'] = bound
    elif isinstance(slot_type, idl.NamespacedType):
        schema = _object_schema(nested_class(slot_type), depth + 1)
    elif isinstance(slot_type, idl.AbstractNestedType):
        schema['type'] = 'array'
        schema['items'] = _field_schema(slot_type.value_type, {}, depth)
        if isinstance(slot_type, idl.Array):
            schema['minItems'] = schema['maxItems'] = slot_type.size
        elif isinstance(slot_type, idl.BoundedSequence):
            schema['maxItems'] = slot_type.maximum_size
    description = notes.get('description')
    if description:
        schema = {'description': description, **schema}
    if 'default' in notes and isinstance(slot_type, (idl.BasicType, idl.AbstractString)):
        default = notes['default']
        if schema.get('type') == 'boolean' and isinstance(default, str):
            default = default.lower() == 'true'
        schema['default'] = default
    return schema


def _object_schema(message_class: Any, depth: int = 0) -> dict:
    if depth > 10:
        return {'type': 'object'}
    module = message_class.__module__.split('.')
    notes = _comments(f'{module[0]}/{module[1]}/{message_class.__name__}') \
        if len(module) > 1 and not message_class.__name__.endswith(
            ('_Request', '_Response', '_Goal', '_Result', '_Feedback')) else {}
    return _properties_schema(message_class, notes.get(message_class.__name__, {}), depth)


def _properties_schema(message_class: Any, notes: dict, depth: int) -> dict:
    properties = {name: _field_schema(slot_type, notes.get(name, {}), depth)
                  for name, slot_type in fields_of(message_class).items()}
    return {'type': 'object', 'properties': properties, 'additionalProperties': False}


def interface_tool(tool_name: str, type_name: str, *, kind: str | None = None,
                   ros_name: str | None = None, description: str | None = None,
                   warnings: list[str] | None = None) -> tuple[dict, dict]:
    """
    Return ``(catalog schema, binding entry)`` for a tool bound to ``type_name``.

    ``kind`` is implied by the type (srv: service, action: action, msg: publish, or ``read``
    for a read-only tool, whose schema then takes no arguments). ``ros_name`` is the service,
    action or topic name (default ``/<tool_name>``). What the schema lacks (no interface
    definition to read) is appended to ``warnings``. Raises ``InterfaceError``/``ValueError``.
    """
    match = TYPE_NAME.fullmatch(type_name) if isinstance(type_name, str) else None
    cls = resolve_type(type_name, match.group(2) if match else None)  # refuses other names
    if match is None:  # (resolve_type raised already)
        raise InterfaceError(f'{type_name!r} is not an interface type name')
    category = match.group(2)
    kind = kind or _KIND_OF_CATEGORY.get(category or '', 'publish')
    if category == 'msg' and kind not in _MESSAGE_KINDS:
        raise ValueError(f'a msg type binds as {" or ".join(_MESSAGE_KINDS)}, not {kind!r}')
    if category != 'msg' and kind != _KIND_OF_CATEGORY[category]:
        raise ValueError(f'a {category} type binds as {_KIND_OF_CATEGORY[category]}, not {kind!r}')
    notes = _comments(type_name, warnings) if kind != 'read' else {}
    part, key = {'srv': ('Request', 'request'), 'action': ('Goal', 'goal'),
                 'msg': (None, 'message')}[category]
    target = getattr(cls, part) if part else cls
    if kind == 'read':  # takes no arguments, and refuses any
        parameters: dict = {'type': 'object', 'properties': {}, 'required': [],
                            'additionalProperties': False}
    else:
        parameters = _properties_schema(target, notes.get(target.__name__, {}), 0)
        # Scalars without a default in the interface are required; arrays (empty is a value)
        # and nested messages (a header, a stamp) are optional: absent, they keep ROS defaults.
        member_notes = notes.get(target.__name__, {})
        parameters['required'] = [
            name for name, slot in fields_of(target).items()
            if isinstance(slot, (idl.BasicType, idl.AbstractString))
            and 'default' not in member_notes.get(name, {})]
    ros_key = {'service': 'service', 'action': 'action'}.get(kind, 'topic')
    where = ros_name or f'/{tool_name}'
    what = {'service': f'Call the ROS service {where} ({type_name})',
            'action': f'Run the ROS action {where} ({type_name})',
            'publish': f'Publish a {type_name} message on the ROS topic {where}',
            'read': f'Read the latest {type_name} message on the ROS topic {where}'}[kind]
    schema = {'type': 'function', 'function': {
        'name': tool_name,
        'description': description or f'{what}.',
        'parameters': parameters}}
    binding: dict[str, Any] = {'kind': kind, ros_key: where, 'type': type_name}
    if kind != 'read':
        binding[key] = {name: f'${name}' for name in fields_of(target)}
    return schema, binding
