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
The dispatcher's ROS parameters: declared from their specs, read, and checked when they change.

Kept apart from the node so that it stays wiring: `DispatcherParameters` declares every global
parameter (`parameters.declarations.DISPATCHER`) and, one tool at a time (the node decides when,
with `parameters.tool_plan`), each catalog tool's `tool.<name>.<setting>`
(`dispatcher_tool_spec`), turns them into the core's `DispatchSettings` and per-tool
`ToolSettings`, and checks a `ros2 param set` before the node applies it. Every writable
parameter applies at once; the read-only ones say why in their description.

A per-tool limit of -1 (the default for a tool the declarations do not know) means the global
value, so every parameter has a value: `ros2 param dump /dispatcher` writes no null and the
dispatcher starts from its own dump.
"""

from collections import OrderedDict
import difflib
from typing import Any, NamedTuple

from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.dispatch import DispatchSettings, ToolSettings
from lerobot_tools_ros.nodes.params import declare_table, descriptor, means_all, \
    overrides_with_prefix
from lerobot_tools_ros.parameters.declarations import DISPATCHER, dispatcher_tool_spec, \
    PER_TOOL_SETTINGS
from lerobot_tools_ros.parsing import parse
from lerobot_tools_ros.parsing.registry import format_names
from lerobot_tools_ros.rclpy_fixes import parameters_declared_on
from lerobot_tools_ros.untrusted import log_text
from rclpy.node import Node
from rclpy.parameter import Parameter

__all__ = ['CORE_SETTINGS', 'DispatcherParameters', 'PER_TOOL_SETTINGS', 'allowed']

# Dispatcher parameters that are DispatchSettings fields of the same name.
CORE_SETTINGS = ('formats', 'allowed_tools', 'max_pending', 'serialize_per_tool',
                 'max_input_bytes', 'stream_idle_timeout_s', 'max_open_streams',
                 'max_stream_bytes', 'stream_speech', 'cancel_timeout_s')
# Changing one of these changes per-tool settings the core has cached.
_TOOL_WIDE = frozenset({'timeout_s', 'rate_limit_hz', 'burst'})
# Settings of removed tools kept for their return (five per tool: 2,000 tools).
_KEPT_VALUES = 10_000
# Per-tool settings that once existed or are often guessed, and what to use instead.
_NOT_SETTINGS = {
    'enabled': 'there is no tool.<name>.enabled: leave the tool out of allowed_tools (callers '
               'get not_allowed) or set tool.<name>.approval: deny (callers get denied)',
}


class _Override(NamedTuple):
    """A parameters file's value for a parameter not declared yet, as `check` reads it."""

    name: str
    value: Any


def allowed(tool_names: list[str]) -> list[str]:
    """allowed_tools as the dispatcher keeps it: [] for every tool (given as [] or ['*'])."""
    return [] if means_all(tool_names) else tool_names


def _spec_of(name: str):
    """Return the spec of a dispatcher parameter name, or None when it has none."""
    if name.startswith('tool.'):
        tool, _, setting = name[len('tool.'):].rpartition('.')
        if tool and setting in PER_TOOL_SETTINGS:
            return dispatcher_tool_spec(tool, setting)
        return None
    return DISPATCHER.get(name)


class DispatcherParameters:
    """Every dispatcher parameter, declared on `node`; the current values are attributes."""

    def __init__(self, node: Node) -> None:
        self._node = node
        # For nodes.params: tool.<name>.<setting> overrides are checked here, and a set of a
        # tool.* name the dispatcher does not have is explained here.
        setattr(node, 'checks_its_own', ('tool.',))  # noqa: B010
        setattr(node, 'explain_parameter', self.explain)  # noqa: B010
        values = declare_table(node, DISPATCHER)
        self.dataset = values['dataset']
        self.input_topic = values['input_topic']
        self.stream_topic = values['stream_topic']
        self.formats = values['formats']
        try:
            format_names(self.formats)
        except ValueError as exc:
            raise errors.ConfigurationError(f"parameter 'formats': {exc}") from exc
        self.service_prefix = values['service_prefix']
        self.executor_interface = values['executor_interface']
        self.in_process_executors = values['in_process_executors']
        self.allowed_tools = allowed(values['allowed_tools'])
        self.timeout_s = values['timeout_s']
        self.rate_limit_hz = values['rate_limit_hz']
        self.burst = values['burst']
        self.max_pending = values['max_pending']
        self.serialize_per_tool = values['serialize_per_tool']
        self.audit_log_path = values['audit_log']
        self.max_input_bytes = values['max_input_bytes']
        self.stream_idle_timeout_s = values['stream_idle_timeout_s']
        self.max_open_streams = values['max_open_streams']
        self.max_stream_bytes = values['max_stream_bytes']
        self.stream_speech = values['stream_speech']
        self.cancel_timeout_s = values['cancel_timeout_s']
        # tool.<name>.<setting> from a parameters file or the command line, by parameter name:
        # a tool's settings until its parameters are declared (they then take these values).
        self._tool_overrides: dict[str, Any] = {}
        self._removed_values: OrderedDict = OrderedDict()  # of tools a reload removed
        for key, value in overrides_with_prefix(node, 'tool.').items():
            tool, _, setting = key.rpartition('.')
            if setting in _NOT_SETTINGS:
                raise errors.ConfigurationError(
                    f"parameter 'tool.{log_text(key, 200)}': {_NOT_SETTINGS[setting]}")
            if not tool or setting not in PER_TOOL_SETTINGS:
                # A typo here (tool.say.aproval) would silently leave a gate open.
                raise errors.ConfigurationError(
                    f"unknown parameter 'tool.{log_text(key, 200)}': a tool's settings are "
                    f'tool.<name>.{{{",".join(PER_TOOL_SETTINGS)}}}')
            self._tool_overrides[f'tool.{key}'] = value
        self.overridden_tools = frozenset(
            name[len('tool.'):].rpartition('.')[0] for name in self._tool_overrides)

    def summary(self, catalog: ToolCatalog, text_topic: str, stream_topic: str,
                executors: str) -> str:
        """Return the line the dispatcher logs once it runs: what goes where, with what."""
        allowed = ', '.join(self.allowed_tools) or 'all catalog tools'
        return (f'dispatching {", ".join(catalog.names)} from {text_topic} and {stream_topic} '
                f'to {executors} (allowed: {allowed}; formats: {", ".join(self.formats)}; '
                f'in-process executors: {"on" if self.in_process_executors else "off"})')

    def explain(self, name: str) -> str:
        """Say why `name` is no parameter of the dispatcher ('' when it is not a tool.* name)."""
        if not name.startswith('tool.'):
            return ''
        tool, _, setting = name[len('tool.'):].rpartition('.')
        shown = log_text(name, 200)
        if setting in _NOT_SETTINGS:
            return f"parameter '{shown}': {_NOT_SETTINGS[setting]}"
        if not tool or setting not in PER_TOOL_SETTINGS:
            close = difflib.get_close_matches(setting, PER_TOOL_SETTINGS, n=1)
            hint = f"; did you mean 'tool.{log_text(tool, 100)}.{close[0]}'?" if close else ''
            return (f"parameter '{shown}' does not exist: a tool's settings are "
                    f'tool.<name>.{{{",".join(PER_TOOL_SETTINGS)}}}{hint}')
        tools = sorted({key[len('tool.'):].rpartition('.')[0] for key in
                        parameters_declared_on(self._node) if key.startswith('tool.')})
        close = difflib.get_close_matches(tool, tools, n=1)
        hint = f"; did you mean 'tool.{close[0]}.{setting}'?" if close else ''
        return (f"parameter '{shown}' does not exist: the dispatcher's catalog has no tool "
                f"'{log_text(tool, 100)}' (tools: {', '.join(tools) or 'none'}){hint}. A "
                "tool's settings exist while it is in the catalog (~/reload_catalog adds them)")

    def core_settings(self) -> DispatchSettings:
        """Return the core's settings from the current values."""
        return DispatchSettings(**{name: getattr(self, name) for name in CORE_SETTINGS})

    # -- per tool ----------------------------------------------------------------------------

    def check_tool_overrides(self, tools: list[str]) -> str:
        """
        Return why the overrides given for `tools` are refused, or '' when they are fine.

        The check `ros2 param set` gets, made before a catalog is taken, because its tools'
        parameters are declared later, in slices (see `parameters.tool_plan`).
        """
        wanted = set(tools)
        given = [_Override(name, value) for name, value in self._tool_overrides.items()
                 if name[len('tool.'):].rpartition('.')[0] in wanted]
        return self.check(given, None)[0]

    def declare_tool(self, name: str) -> None:
        """
        Declare tool.<name>.<setting> for every setting, each with a value.

        A tool that a reload removed and a later one adds back gets the values it had when it
        was removed (an approval set at runtime must not come back as a weaker default).
        """
        node = self._node
        new = []
        for setting in PER_TOOL_SETTINGS:
            spec = dispatcher_tool_spec(name, setting)
            if not node.has_parameter(spec.name):
                new.append((spec.name, spec.default, descriptor(spec)))
        if new:
            node.declare_parameters('', new)
        kept = [Parameter(parameter, value=self._removed_values.pop(parameter))
                for parameter, _, _ in new if parameter in self._removed_values]
        if kept:
            node.set_parameters(kept)
            node.get_logger().info(
                f'{log_text(name)} is back in the catalog with the settings it had: '
                + ', '.join(f'{p.name}={log_text(p.value, 80)}' for p in kept))

    def undeclare_tool(self, name: str) -> None:
        """
        Undeclare the tool.<name>.<setting> parameters of a tool gone from the catalog.

        Their values are kept (the last _KEPT_VALUES) for `declare_tool`, should it come back.
        """
        node = self._node
        for setting in PER_TOOL_SETTINGS:
            parameter = f'tool.{name}.{setting}'
            if node.has_parameter(parameter):
                self._removed_values[parameter] = node.get_parameter(parameter).value
                self._removed_values.move_to_end(parameter)
                node.undeclare_parameter(parameter)
        while len(self._removed_values) > _KEPT_VALUES:
            self._removed_values.popitem(last=False)

    def _per_tool(self, name: str, setting: str, global_value: Any) -> Any:
        spec = dispatcher_tool_spec(name, setting)
        node = self._node
        if node.has_parameter(spec.name):
            value = node.get_parameter(spec.name).value
        else:  # not declared yet: the value its declaration will take
            value = self._tool_overrides.get(spec.name, spec.default)
        try:
            value = spec.check(value)
        except errors.ConfigurationError:  # checked on set; kept as a last line of defence
            value = spec.default
        if global_value is not None and value < 0:  # -1: the global value
            return global_value
        return value

    def tool_settings(self, name: str) -> ToolSettings:
        """Per-tool settings for the core: tool.<name>.<setting>, else the global value."""
        return ToolSettings(timeout_s=self._per_tool(name, 'timeout_s', self.timeout_s),
                            rate_limit_hz=self._per_tool(name, 'rate_limit_hz',
                                                         self.rate_limit_hz),
                            burst=self._per_tool(name, 'burst', self.burst),
                            repeat_window_s=self._per_tool(name, 'repeat_window_s', None),
                            approval=self._per_tool(name, 'approval', None),
                            when_busy=self._per_tool(name, 'when_busy', None))

    # -- changes while running -----------------------------------------------------------------

    def check(self, parameters: list, catalog: ToolCatalog | None
              ) -> tuple[str, dict[str, Any], bool]:
        """
        Check a parameter change; return (why it is refused or '', updates, per-tool changed).

        `updates` maps each global parameter that changes to its checked value; `catalog`
        (None while declaring) is what a new `formats` value is tried on.
        """
        updates = {}
        changed_tools = False
        for parameter in parameters:
            spec = _spec_of(parameter.name)
            if spec is None:
                continue
            reason = spec.reason(parameter.value)
            if reason:
                return reason, {}, False
            if parameter.name.startswith('tool.'):
                changed_tools = True
                continue
            if spec.read_only:
                continue  # declared from a file (a set is refused by rclpy before this)
            value = spec.check(parameter.value)
            if parameter.name == 'allowed_tools':
                value = allowed(value)
            updates[parameter.name] = value
        if 'formats' in updates and catalog is not None:
            try:
                parse('', catalog, updates['formats'])
            except ValueError as exc:
                return str(exc), {}, False
        return '', updates, changed_tools

    def update(self, updates: dict[str, Any], core_settings: DispatchSettings) -> bool:
        """Take checked updates; return whether the core's per-tool settings must be re-read."""
        for name, value in updates.items():
            setattr(self, name, value)
            if name in CORE_SETTINGS:
                setattr(core_settings, name, value)
        return bool(_TOOL_WIDE & set(updates))
