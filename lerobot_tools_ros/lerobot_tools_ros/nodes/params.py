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
Declaring ROS parameters with descriptors, in one way for every node.

Every parameter gets a value, so `ros2 param dump` and get_parameters answer for all of them
(rclpy answers nothing for the whole request when one parameter has a type but no value). Lists
of names are dynamically typed and checked here instead: `ros2 param set <node> <list> "[]"`
sends an empty BOOL array, which a statically typed string-array parameter refuses.
"""

from typing import Any
import weakref

from lerobot_tools_ros import names
from rcl_interfaces.msg import ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.node import Node

_TYPE_OF_DEFAULT = {
    bool: ParameterType.PARAMETER_BOOL,
    int: ParameterType.PARAMETER_INTEGER,
    float: ParameterType.PARAMETER_DOUBLE,
    str: ParameterType.PARAMETER_STRING,
}
_ARRAY_TYPE_OF_ITEM = {
    bool: ParameterType.PARAMETER_BOOL_ARRAY,
    int: ParameterType.PARAMETER_INTEGER_ARRAY,
    float: ParameterType.PARAMETER_DOUBLE_ARRAY,
    str: ParameterType.PARAMETER_STRING_ARRAY,
}
# In a list of names, ['*'] (or []) means every one, e.g. allowed_tools: ['*'].
ALL = names.ALL_TOOLS
_LIST_PARAMETERS = '_lerobot_list_parameters'  # node attribute: names declared as string lists


def parameter_type(default: Any) -> int:
    """ROS parameter type for a Python default (an empty list is a string array)."""
    if isinstance(default, (list, tuple)):
        item_type = type(default[0]) if default else str
        return _ARRAY_TYPE_OF_ITEM.get(item_type, ParameterType.PARAMETER_STRING_ARRAY)
    return _TYPE_OF_DEFAULT.get(type(default), ParameterType.PARAMETER_NOT_SET)


def string_list(name: str, value: Any) -> list[str]:
    """
    Check a list-of-strings parameter as it arrives from a file, the CLI or a client.

    Any empty array is the empty list (`ros2 param set x "[]"` types it as a bool array). An
    empty string is refused: `['']` would otherwise silently match nothing.
    """
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not hasattr(value, '__iter__'):
        raise ValueError(f"parameter '{name}' must be a list such as [a, b]; got {value!r}")
    items = list(value)
    if not items:
        return []
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"parameter '{name}' must be a list of strings; got {items!r}")
    if any(not item.strip() for item in items):
        raise ValueError(f"parameter '{name}' holds an empty string ({items!r}), which names "
                         f"nothing; write [] or ['{ALL}'] for all")
    if ALL in items and len(items) > 1:
        raise ValueError(f"parameter '{name}': '{ALL}' means all and stands alone; got {items!r}")
    return items


def means_all(items: list[str]) -> bool:
    """Return whether a checked list of names means every name: [] or ['*']."""
    return not items or items == [ALL]


def _check_string_lists(node: Node | None, parameters: list) -> SetParametersResult:
    """On-set callback: every list declared through `declare` is checked by `string_list`."""
    declared = getattr(node, _LIST_PARAMETERS, set()) if node is not None else set()
    for parameter in parameters:
        if parameter.name in declared:
            try:
                string_list(parameter.name, parameter.value)
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
    return SetParametersResult(successful=True)


def declare(node: Node, name: str, default: Any, description: str, *,
            read_only: bool = False) -> Any:
    """
    Declare one parameter with a descriptor and a value, and return the value.

    Numbers are declared with dynamic typing and coerced, so `timeout_s: 5` in a YAML file is
    as good as `timeout_s: 5.0`. Lists of strings (and empty lists) are dynamically typed and
    checked by `string_list`, at declaration and on every later set.
    """
    ptype = parameter_type(default)
    is_string_list = ptype == ParameterType.PARAMETER_STRING_ARRAY
    dynamic = is_string_list or ptype in (ParameterType.PARAMETER_DOUBLE,
                                          ParameterType.PARAMETER_NOT_SET)
    descriptor = ParameterDescriptor(
        name=name, description=description, read_only=read_only, dynamic_typing=dynamic,
        type=ParameterType.PARAMETER_NOT_SET if dynamic else ptype)
    initial = list(default) if isinstance(default, (list, tuple)) else default
    if is_string_list:
        if not hasattr(node, _LIST_PARAMETERS):
            setattr(node, _LIST_PARAMETERS, set())
            # A weak reference: a node whose constructor fails must still be garbage, or the
            # context would later destroy a half-built node at shutdown.
            node_ref = weakref.ref(node)
            node.add_on_set_parameters_callback(
                lambda parameters: _check_string_lists(node_ref(), parameters))
        getattr(node, _LIST_PARAMETERS).add(name)
    value = node.declare_parameter(name, initial, descriptor).value
    if is_string_list:
        return string_list(name, value)
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    return list(value) if isinstance(value, (list, tuple)) else value


def overrides_with_prefix(node: Node, prefix: str) -> dict[str, Any]:
    """
    Values given for parameters under `prefix` (from files or the command line).

    Used for map-like settings such as `tool.record_observation.cameras.front: /cam/...`,
    which cannot be declared up front because their keys are the user's. rclpy keeps the
    overrides in `_parameter_overrides` on Humble, Jazzy and Kilted.
    """
    overrides = getattr(node, '_parameter_overrides', None)
    if overrides is None:  # a future rclpy without it must not silently drop settings
        raise RuntimeError('this rclpy keeps no _parameter_overrides; map-like parameters such '
                           f'as {prefix}* cannot be read')
    return {name[len(prefix):]: param.value for name, param in overrides.items()
            if name.startswith(prefix)}
