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

import difflib
from typing import Any, Callable
import weakref

from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.parameters.spec import ALL, means_all, ParameterSpec, string_list
from lerobot_tools_ros.rclpy_fixes import parameter_overrides, parameters_declared_on
from lerobot_tools_ros.untrusted import log_text
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType, SetParametersResult)
from rclpy.exceptions import ParameterNotDeclaredException
from rclpy.node import Node
from rclpy.parameter import Parameter

__all__ = ['ALL', 'declare', 'declare_spec', 'declare_table', 'descriptor', 'means_all',
           'overrides_with_prefix', 'refuse_unknown_parameters', 'string_list',
           'unknown_parameter_message']

# Parameters ROS itself reads from overrides, which a node need not declare.
_ROS_OWN = frozenset({'use_sim_time', 'start_type_description_service'})
_ROS_OWN_PREFIXES = ('qos_overrides.',)

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
        _explain_undeclared(node_ref)
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
    if spec.special or spec.maximum is None or spec.kind not in ('int', 'float'):
        return result  # a value allowed outside the range (-1): `additional_constraints` says it
    low = spec.minimum if spec.minimum is not None else spec.above
    if low is None:
        return result
    if spec.kind == 'int':
        if spec.minimum is None:  # above=n: from n + 1
            low = int(low) + 1
        result.integer_range = [IntegerRange(
            from_value=int(low), to_value=int(spec.maximum), step=0)]
    else:  # ROS ranges are inclusive: an exclusive `above` is refused by the set check
        result.floating_point_range = [FloatingPointRange(
            from_value=float(low), to_value=float(spec.maximum), step=0.0)]
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
    override = (parameter_overrides(node) or {}).get(spec.name)
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
    overrides = parameter_overrides(node)
    if overrides is None:  # a future rclpy without it must not silently drop settings
        raise RuntimeError('this rclpy keeps no _parameter_overrides; map-like parameters such '
                           f'as {prefix}* cannot be read')
    return {name[len(prefix):]: param.value for name, param in overrides.items()
            if name.startswith(prefix)}


def _closest(name: str, known: list[str]) -> str:
    """Return ", did you mean 'x'?" for the known name closest to `name`, or ''."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if not close:  # tool.say.timout: compare the last part among names sharing the prefix
        head, _, tail = name.rpartition('.')
        siblings = [known_name.rpartition('.')[2] for known_name in known
                    if known_name.rpartition('.')[0] == head]
        close = [f'{head}.{match}' for match in
                 difflib.get_close_matches(tail, siblings, n=1, cutoff=0.6)] if head else []
    return f", did you mean '{close[0]}'?" if close else ''


def unknown_parameter_message(node: Node, name: str) -> str:
    """
    Say that `node` has no parameter `name`, naming the closest one it has.

    A node may explain names of its own families better (`explain_parameter(name)`: the
    dispatcher's tool.<name>.<setting> of a tool not in its catalog).
    """
    explain = getattr(node, 'explain_parameter', None)
    explained = explain(name) if explain is not None else ''
    if explained:
        return explained
    known = sorted(parameters_declared_on(node))
    return (f"{node.get_fully_qualified_name()} has no parameter '{log_text(name, 200)}'"
            f'{_closest(name, known)} (`ros2 param list {node.get_fully_qualified_name()}` '
            'lists them)')


def refuse_unknown_parameters(node: Node) -> None:
    """
    Raise ConfigurationError when a parameters file or -p gave `node` a name it does not have.

    rclpy keeps such values and never uses them, so a misspelled `sinkk:=null` used to run with
    the default sink. Names the node handles itself (`handles_parameter(name)`: the
    dispatcher's tool.<name>.<setting> overrides, checked when it starts) and ROS's own are
    left alone.
    """
    overrides = parameter_overrides(node) or {}
    declared = parameters_declared_on(node)
    handles = getattr(node, 'handles_parameter', None)
    own = tuple(getattr(node, 'checks_its_own', ()))
    unknown = []
    for name in overrides:
        if (name in declared or name in _ROS_OWN or name.startswith(_ROS_OWN_PREFIXES)
                or (own and name.startswith(own)) or (handles is not None and handles(name))):
            continue
        parent = name.rpartition('.')[0]  # a map given with nested keys (cameras.front)
        if parent in declared and declared[parent].type_ == Parameter.Type.STRING_ARRAY:
            continue
        unknown.append(name)
    if unknown:
        raise ConfigurationError('; '.join(unknown_parameter_message(node, name)
                                           for name in sorted(unknown)))


def _explain_undeclared(node_ref: Callable[[], Any]) -> None:
    """
    Answer `ros2 param set` of a name the node does not have with what is wrong.

    rclpy's own answer is "Invalid access to undeclared parameter(s): []". Its parameter
    service calls the node's `set_parameters_atomically`, which is wrapped on this instance.
    """
    node = node_ref()
    original = type(node).set_parameters_atomically  # the class's: no reference to the node

    def set_parameters_atomically(parameter_list: list) -> SetParametersResult:
        owner = node_ref()
        if owner is None:
            return SetParametersResult(successful=False, reason='the node is gone')
        try:
            return original(owner, parameter_list)
        except ParameterNotDeclaredException:
            missing = [parameter.name for parameter in parameter_list
                       if not owner.has_parameter(parameter.name)]
            if not missing:
                raise
            return SetParametersResult(successful=False, reason='; '.join(
                unknown_parameter_message(owner, name) for name in missing))

    setattr(node, 'set_parameters_atomically', set_parameters_atomically)  # noqa: B010
