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
What the tool_server hosts, and how each tool is made from its parameters.

Which tools of the `tools` parameter and the bindings file are hosted (those the catalog
declares), which are refused (a name neither declared nor registered, two tools on one ROS
name, a parameter a tool does not declare), and each tool made: a binding as loaded, or an
instance of its registered class from its `tool.<name>.*` parameters. The node calls these
while it configures; they read and declare parameters on it.
"""

import inspect
from typing import Any, Callable, Iterable

from lerobot_tools_ros import names
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.nodes.params import declare_spec, descriptor, overrides_with_prefix
from lerobot_tools_ros.tools import TOOL_REGISTRY
from lerobot_tools_ros.tools.base import declared_parameters
from lerobot_tools_ros.untrusted import log_text
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

__all__ = ['apply_parameter', 'check_hostable', 'declare_derived', 'declared_only', 'make_tool',
           'refuse_unknown', 'tool_kwargs']


def declared_only(catalog: ToolCatalog, tool_names: list[str],
                  warn: Callable[[str], Any]) -> list[str]:
    """
    Leave out, with a line each, registered tools the dataset's catalog does not declare.

    A dataset annotated by LeRobot declares only `say` (or no tools: the defaults), while
    the packaged parameters host `say` and `record_observation`: its policy can only call
    what its catalog declares, so the rest is not hosted rather than refused. A name that
    is neither declared nor registered is a mistake, refused by `check_hostable`.
    """
    left_out = [name for name in tool_names if name not in catalog and name in TOOL_REGISTRY]
    for name in left_out:
        warn(f"not hosting '{name}': the catalog {catalog.source} does not declare it "
             f"(declared: {', '.join(catalog.names)}); add its schema to info.json to host it")
    hosted = [name for name in tool_names if name not in left_out]
    if not hosted:
        raise ConfigurationError(
            f"none of the tools in parameter 'tools' ({', '.join(tool_names)}) is declared in "
            f"the catalog {catalog.source} (declared: {', '.join(catalog.names)}); "
            'host a declared tool or add its schema to info.json')
    return hosted


def check_hostable(tool_name: str, catalog: ToolCatalog, bound: dict[str, Any],
                   hosted: Iterable[str], service_prefix: str) -> Any:
    """Refuse a tool this server cannot host; return its binding (None: a tool class)."""
    hosted = list(hosted)
    if tool_name in hosted:
        raise ConfigurationError(f"tool '{tool_name}' is listed twice in parameter 'tools'")
    if tool_name not in catalog:
        hint = catalog.suggest(tool_name)
        raise ConfigurationError(
            f"tool '{tool_name}' is not declared in the catalog {catalog.source} "
            f"(declared: {', '.join(catalog.names)})"
            + (f"; did you mean '{hint}'?" if hint else '; add its schema to info.json'))
    binding = bound.get(tool_name)
    if binding is None and tool_name not in TOOL_REGISTRY:
        raise ConfigurationError(
            f"no implementation is registered for tool '{tool_name}' (registered: "
            f"{', '.join(sorted(TOOL_REGISTRY))}); install a package that provides it "
            "through the 'lerobot_tools_ros.tools' entry-point group")
    for other in hosted:
        if names.ros_safe(other) == names.ros_safe(tool_name):
            raise ConfigurationError(
                f"tools '{other}' and '{tool_name}' would share the service "
                f'{names.tool_service_name(service_prefix, tool_name)} '
                '(ROS names hold no "-" or "."); rename one in info.json')
    return binding


def make_tool(node: Node, tool_name: str, binding: Any, catalog: ToolCatalog,
              apply: Callable[[str, Any], None]) -> Any:
    """Return the binding, or an instance of the registered class from its parameters."""
    if binding is not None:
        wins = ' (wins over the registered tool class)' if tool_name in TOOL_REGISTRY else ''
        node.get_logger().info(f"'{tool_name}' is bound to {binding.describe()}{wins}")
        for warning in binding.warnings():
            node.get_logger().warning(warning)
        return binding
    tool_class = TOOL_REGISTRY[tool_name]
    kwargs = tool_kwargs(node, tool_name, tool_class, catalog, apply)
    try:
        return tool_class(catalog.schema(tool_name), **kwargs)
    except ValueError as exc:  # the tool refused a value (see tools.base)
        raise ConfigurationError(f"tool '{tool_name}': {exc}") from exc


def tool_kwargs(node: Node, tool_name: str, tool_class: type, catalog: ToolCatalog,
                apply: Any = None) -> dict:
    """
    Collect the constructor kwargs of a tool from its `tool.<name>.*` parameters.

    Each is declared from the tool's `ToolParameter` and checked against it. A list parameter
    given with nested keys is passed as a map
    (`tool.record_observation.cameras.front: /camera/front/image_raw` -> cameras={'front': ...})
    and declared as the equivalent list (`['front=/camera/front/image_raw']`), so a dump of the
    node holds it and the node starts again from that dump. `apply(key, value)` is called when
    a live parameter is set while the tool runs.
    """
    prefix = f'tool.{tool_name}.'
    declared = declared_parameters(tool_class)
    kwargs: dict[str, Any] = {}
    for key, parameter in declared.items():
        spec = parameter.spec(prefix + key)
        nested = overrides_with_prefix(node, f'{prefix}{key}.')
        if nested and spec.kind == 'str_list':
            kwargs[key] = nested
            node.declare_parameter(spec.name, [f'{k}={v}' for k, v in nested.items()],
                                   descriptor(spec), ignore_override=True)
            continue
        live = None
        if apply is not None and spec.writable:
            live = (lambda value, key=key: apply(key, value))
        kwargs[key] = declare_spec(node, spec, apply=live)
    accepted = inspect.signature(tool_class).parameters
    if 'catalog' in accepted:
        kwargs['catalog'] = catalog
    if 'dataset_cameras' in accepted:
        kwargs['dataset_cameras'] = catalog.camera_names
    return kwargs


def declare_derived(node: Node, tool_name: str, tool: Any) -> None:
    """
    Declare, read-only, what the tool derived from its parameters, for ros2 param to show.

    record_observation: one camera per dataset image feature. It shows what is used, so
    overrides do not apply.
    """
    for key, (value, description) in getattr(tool, 'resolved_parameters', dict)().items():
        name = f'tool.{tool_name}.{key}'
        if not node.has_parameter(name):
            node.declare_parameter(name, value, ParameterDescriptor(
                name=name, description=f'{description} Read-only: derived from the '
                "tool's parameters at start.", read_only=True), ignore_override=True)


def refuse_unknown(node: Node, tool_name: str, tool_class: type) -> None:
    """Refuse a tool.<name>.<key> the tool does not declare (a typo would be ignored)."""
    prefix = f'tool.{tool_name}.'
    known = set(declared_parameters(tool_class))
    for extra in sorted(overrides_with_prefix(node, prefix)):
        if extra.split('.', 1)[0] in known or node.has_parameter(prefix + extra):
            continue  # a declared map's key, or what the tool derived (in a dump)
        raise ConfigurationError(
            f"unknown parameter '{prefix}{log_text(extra, 100)}': tool '{tool_name}' "
            f"declares {', '.join(sorted(known)) or 'no parameters'}")


def apply_parameter(tool: Any, key: str, value: Any) -> None:
    """Apply a live tool parameter that was set: through the tool's `set_parameter`, if any."""
    setter = getattr(tool, 'set_parameter', None)
    if setter is not None:
        setter(key, value)
    else:
        setattr(tool, key, value)
