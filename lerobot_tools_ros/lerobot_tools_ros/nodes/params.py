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

"""Declaring ROS parameters with descriptors, in one way for every node."""

from typing import Any

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter

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


def parameter_type(default: Any) -> int:
    """ROS parameter type for a Python default (an empty list is a string array)."""
    if isinstance(default, (list, tuple)):
        item_type = type(default[0]) if default else str
        return _ARRAY_TYPE_OF_ITEM.get(item_type, ParameterType.PARAMETER_STRING_ARRAY)
    return _TYPE_OF_DEFAULT.get(type(default), ParameterType.PARAMETER_NOT_SET)


def declare(node: Node, name: str, default: Any, description: str, *,
            read_only: bool = False) -> Any:
    """
    Declare one parameter with a descriptor and return its value.

    Numbers are declared with dynamic typing and coerced, so `timeout_s: 5` in a YAML file is
    as good as `timeout_s: 5.0`.
    """
    ptype = parameter_type(default)
    dynamic = ptype in (ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_NOT_SET)
    descriptor = ParameterDescriptor(
        name=name, description=description, read_only=read_only, dynamic_typing=dynamic,
        type=ParameterType.PARAMETER_NOT_SET if dynamic else ptype)
    initial = default
    if isinstance(default, (list, tuple)) and not default:
        # rclpy infers BYTE_ARRAY from []; declare the type and let "unset" mean empty.
        initial = Parameter.Type(ptype)
    value = node.declare_parameter(name, initial, descriptor).value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(default, (list, tuple)) and value is None:
        value = []
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
