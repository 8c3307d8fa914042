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
Declaring ROS parameters from their one declaration (`parameters.ParameterSpec`).

Every parameter gets a value, so `ros2 param dump` and get_parameters answer for all of them
(rclpy answers nothing for the whole request when one parameter has a type but no value), and a
node starts from its own dump. Each value is checked against its spec before the parameter is
declared (a bad value in a parameters file stops the node with one line naming it) and on every
later set, in the node's set-parameters callback, which refuses a bad value with the reason and
applies a good one to a writable parameter at once (`declare(..., apply=...)`).
"""

from typing import Any, Callable
import weakref

from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.parameters.spec import ALL, means_all, ParameterSpec, string_list
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType, SetParametersResult)
from rclpy.node import Node

__all__ = ['ALL', 'declare', 'declare_spec', 'declare_table', 'descriptor', 'means_all',
           'overrides_with_prefix', 'string_list']

_ROS_TYPE = {'bool': ParameterType.PARAMETER_BOOL, 'int': ParameterType.PARAMETER_INTEGER,
             'float': ParameterType.PARAMETER_DOUBLE, 'str': ParameterType.PARAMETER_STRING,
             'str_list': ParameterType.PARAMETER_STRING_ARRAY}
_REGISTRY = '_lerobot_parameters'  # node attribute: the _Registry below


class _Registry:
    """The specs declared on one node and how each writable one is applied."""

    def __init__(self) -> None:
        self.specs: dict[str, ParameterSpec] = {}
        self.appliers: dict[str, Callable[[Any], None]] = {}

    def on_set(self, parameters: list) -> SetParametersResult:
        """Check every parameter that has a spec; apply the writable ones once all are fine."""
        checked = []
        for parameter in parameters:
            spec = self.specs.get(parameter.name)
            if spec is None:
                continue
            try:
                checked.append((parameter.name, spec.check(parameter.value)))
            except ConfigurationError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
        for name, value in checked:
            apply = self.appliers.get(name)
            if apply is None:
                continue
            try:
                apply(value)
            except (ConfigurationError, ValueError) as exc:
                return SetParametersResult(successful=False, reason=f'{name}: {exc}')
        return SetParametersResult(successful=True)


def _registry(node: Node) -> _Registry:
    registry = getattr(node, _REGISTRY, None)
    if registry is None:
        registry = _Registry()
        setattr(node, _REGISTRY, registry)
        # A weak reference: a node whose constructor fails must still be garbage, or the
        # context would later destroy a half-built node at shutdown. Registered before any
        # other callback of the node, so it runs last: it applies only what all others took.
        node_ref = weakref.ref(node)
        node.add_on_set_parameters_callback(
            lambda parameters: (_registry(node_ref()).on_set(parameters)
                                if node_ref() is not None
                                else SetParametersResult(successful=True)))
    return registry


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """Return the ROS descriptor of `spec`: description with rules, type, range, read-only."""
    result = ParameterDescriptor(
        name=spec.name, description=spec.full_description(), read_only=bool(spec.read_only),
        dynamic_typing=spec.dynamic, additional_constraints=spec.constraints(),
        type=ParameterType.PARAMETER_NOT_SET if spec.dynamic else _ROS_TYPE[spec.kind])
    if spec.minimum is None or spec.maximum is None:
        return result  # one bound only: `additional_constraints` and the set check say it
    if spec.kind == 'int':
        result.integer_range = [IntegerRange(
            from_value=int(spec.minimum), to_value=int(spec.maximum), step=0)]
    elif spec.kind == 'float':
        result.floating_point_range = [FloatingPointRange(
            from_value=float(spec.minimum), to_value=float(spec.maximum), step=0.0)]
    return result


def declare_spec(node: Node, spec: ParameterSpec, *,
                 apply: Callable[[Any], None] | None = None) -> Any:
    """
    Declare `spec` on `node` and return its checked value.

    A value from a parameters file or the command line is checked first: a bad one raises
    ConfigurationError naming the parameter. `apply(value)` (writable parameters only) is
    called with each later value once it is checked; it may refuse one by raising ValueError.
    """
    if apply is not None and spec.read_only:
        raise TypeError(f'{spec.name} is read-only: nothing to apply')
    registry = _registry(node)
    override = getattr(node, '_parameter_overrides', {}).get(spec.name)
    ignore_override = False
    if override is not None:
        if override.value is None and spec.kind == 'str_list':
            # A file's `[]` arrives without a type: declared as an empty list, not unset.
            ignore_override = True
            initial = []
        else:
            initial = spec.check(override.value)
    else:
        initial = spec.default
    registry.specs[spec.name] = spec
    value = node.declare_parameter(spec.name, list(initial) if isinstance(initial, list)
                                   else initial, descriptor(spec),
                                   ignore_override=ignore_override).value
    if apply is not None:
        registry.appliers[spec.name] = apply
    return spec.check(value)


def declare_table(node: Node, specs: dict[str, ParameterSpec],
                  apply: dict[str, Callable[[Any], None]] | None = None) -> dict[str, Any]:
    """Declare every spec of a node's table; return the values by name."""
    apply = apply or {}
    return {name: declare_spec(node, spec, apply=apply.get(name))
            for name, spec in specs.items()}


def declare(node: Node, name: str, default: Any, description: str, *,
            read_only: bool = False) -> Any:
    """Declare one parameter given inline (prefer a spec in `parameters.declarations`)."""
    return declare_spec(node, ParameterSpec(
        name, default, description,
        read_only='read when the node starts; restart it to change' if read_only else ''))


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
