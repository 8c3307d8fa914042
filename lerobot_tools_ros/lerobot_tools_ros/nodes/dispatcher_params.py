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
The dispatcher's ROS parameters: declared with descriptors, read, and checked when they change.

Kept apart from the node so that it stays wiring: `DispatcherParameters` declares every global
parameter and, one tool at a time (the node decides when, with `dispatch.tool_parameters`),
each catalog tool's `tool.<name>.<setting>`, turns them into the core's
`DispatchSettings` and per-tool `ToolSettings`, and checks a `ros2 param set` before the node
applies it.
"""

from typing import Any, NamedTuple

from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.dispatch import APPROVAL_MODES, DispatchSettings, ToolSettings
from lerobot_tools_ros.nodes.params import ALL, declare, means_all, overrides_with_prefix, \
    string_list
from lerobot_tools_ros.parsing import parse
from lerobot_tools_ros.untrusted import log_text
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

# Settings a parameters file may give per tool as tool.<name>.<setting>.
PER_TOOL_SETTINGS = ('timeout_s', 'rate_limit_hz', 'burst', 'repeat_window_s', 'approval')
# Seconds in which an identical call of a tool is a duplicate, unless tool.<name>.repeat_window_s
# says otherwise: on for say (a VLA emits the same <say> with every action chunk), off elsewhere
# (record_observation: repeating is the point).
DEFAULT_REPEAT_WINDOW_S = {'say': 3.0}
# Dispatcher parameters that are DispatchSettings fields of the same name.
CORE_SETTINGS = ('formats', 'allowed_tools', 'max_pending', 'serialize_per_tool',
                 'max_input_bytes', 'stream_idle_timeout_s', 'max_open_streams',
                 'max_stream_bytes')
# Parameters that can change while running (ros2 param set), and how each is checked.
RUNTIME_PARAMETERS = {
    'formats': list, 'allowed_tools': list, 'timeout_s': float, 'rate_limit_hz': float,
    'burst': int, 'max_pending': int, 'serialize_per_tool': bool, 'max_input_bytes': int,
    'stream_idle_timeout_s': float, 'max_open_streams': int, 'max_stream_bytes': int}
# Changing one of these changes per-tool settings the core has cached.
_TOOL_WIDE = frozenset({'timeout_s', 'rate_limit_hz', 'burst'})


class _Override(NamedTuple):
    """A parameters file's value for a parameter not declared yet, as `check` reads it."""

    name: str
    value: Any


def allowed(tool_names: list[str]) -> list[str]:
    """allowed_tools as the dispatcher keeps it: [] for every tool (given as [] or ['*'])."""
    return [] if means_all(tool_names) else tool_names


class DispatcherParameters:
    """Every dispatcher parameter, declared on `node`; the current values are attributes."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self.dataset = declare(
            node, 'dataset', '', 'Catalog source: a dataset root, an info.json path or a LeRobot '
            "repo id. Empty: the package's sample dataset. Re-read with ~/reload_catalog.",
            read_only=True)
        self.input_topic = declare(
            node, 'input_topic', names.INPUT_TOPIC,
            'std_msgs/String topic carrying one complete policy generation per message.',
            read_only=True)
        self.stream_topic = declare(
            node, 'stream_topic', names.STREAM_TOPIC,
            'lerobot_tools_interfaces/TextChunk topic carrying streamed generations.',
            read_only=True)
        self.formats = declare(
            node, 'formats', ['auto'],
            "Model output formats to recognise: ['auto'] or names such as hermes, pythonic, "
            'lerobot_marker, openai_json, llama_json, mistral, qwen3_coder_xml, fenced_json.')
        self.service_prefix = declare(
            node, 'service_prefix', names.SERVICE_PREFIX,
            'Prefix of the executors: <prefix>/<tool name> (RunTool action or CallTool service).',
            read_only=True)
        self.executor_interface = declare(
            node, 'executor_interface', 'auto',
            "How calls reach executors: 'auto' (the RunTool action when offered: progress and "
            "cancel; else the CallTool service), 'action', or 'service' (one DDS round trip, "
            'about 4x cheaper than an action, but no progress and no cancel of running calls).',
            read_only=True)
        self.in_process_executors = declare(
            node, 'in_process_executors', True,
            'Call a tool hosted by a tool_server in this same process (bringup) directly, '
            'without the DDS round trip (same gates, cancel, progress and timeout); false: '
            'always over DDS.', read_only=True)
        if self.executor_interface not in ('auto', 'action', 'service'):
            raise errors.ConfigurationError(
                "parameter 'executor_interface' must be auto, action or service, got "
                f"'{log_text(self.executor_interface, 40)}'")
        self.allowed_tools = allowed(declare(
            node, 'allowed_tools', [ALL],
            f"Tools the policy may call; ['{ALL}'] or []: every catalog tool. Others get "
            'not_allowed.'))
        self.timeout_s = declare(
            node, 'timeout_s', 10.0,
            'Seconds a call may take, including waiting for its executor to come up; per tool: '
            'tool.<name>.timeout_s.')
        self.rate_limit_hz = declare(
            node, 'rate_limit_hz', 0.0,
            'Calls per second allowed per tool (0: unlimited); per tool: '
            'tool.<name>.rate_limit_hz.')
        self.burst = declare(
            node, 'burst', 5, 'Calls allowed at once above the rate limit; per tool: '
            'tool.<name>.burst.')
        self.max_pending = declare(
            node, 'max_pending', 256,
            'Most calls queued or in flight at once; further calls get busy immediately.')
        self.serialize_per_tool = declare(
            node, 'serialize_per_tool', True,
            'Run calls of one tool one after another (a second say waits for the first).')
        self.audit_log_path = declare(
            node, 'audit_log', '', 'JSON-lines file recording every call and result; empty: off.',
            read_only=True)
        self.max_input_bytes = declare(
            node, 'max_input_bytes', 65536,
            'Largest generation parsed; larger ones get one parse_error result.')
        self.stream_idle_timeout_s = declare(
            node, 'stream_idle_timeout_s', 30.0,
            'A streamed generation without a chunk for this long is finished as if final.')
        self.max_open_streams = declare(
            node, 'max_open_streams', 64,
            'Most streamed generations open at once; beyond it the least recently fed one is '
            'finished early (its unfinished call gets parse_error).')
        self.max_stream_bytes = declare(
            node, 'max_stream_bytes', 8 << 20,
            'Most characters all open streams hold together; beyond it the least recently fed '
            'streams are finished early.')
        # tool.<name>.<setting> from a parameters file or the command line, by parameter name:
        # a tool's settings until its parameters are declared (they then take these values).
        self._tool_overrides: dict[str, Any] = {}
        for key, value in overrides_with_prefix(node, 'tool.').items():
            tool, _, setting = key.rpartition('.')
            if setting not in PER_TOOL_SETTINGS:
                node.get_logger().warning(
                    f"ignoring parameter 'tool.{key}': per-tool settings are "
                    f'{", ".join(PER_TOOL_SETTINGS)}')
            else:
                self._tool_overrides[f'tool.{key}'] = value
        self.overridden_tools = frozenset(
            name[len('tool.'):].rpartition('.')[0] for name in self._tool_overrides)

    def core_settings(self) -> DispatchSettings:
        """Return the core's settings from the current values."""
        return DispatchSettings(**{name: getattr(self, name) for name in CORE_SETTINGS})

    # -- per tool ----------------------------------------------------------------------------

    def check_tool_overrides(self, tools: list[str]) -> str:
        """
        Return why the overrides given for `tools` are refused, or '' when they are fine.

        The check `ros2 param set` gets, made before a catalog is taken, because its tools'
        parameters are declared later, in slices (see `dispatch.tool_parameters`).
        """
        wanted = set(tools)
        given = [_Override(name, value) for name, value in self._tool_overrides.items()
                 if name[len('tool.'):].rpartition('.')[0] in wanted]
        return self.check(given, None)[0]

    def declare_tool(self, name: str) -> None:
        """Declare tool.<name>.<setting> for every setting: unset means the global value."""
        node = self._node
        new = []
        for setting in PER_TOOL_SETTINGS:
            parameter = f'tool.{name}.{setting}'
            if not node.has_parameter(parameter):
                initial, description = self._tool_parameter_default(name, setting)
                new.append((parameter, initial, ParameterDescriptor(
                    name=parameter, dynamic_typing=True, description=description)))
        if new:
            node.declare_parameters('', new)

    def undeclare_tool(self, name: str) -> None:
        """Undeclare the tool.<name>.<setting> parameters of a tool gone from the catalog."""
        node = self._node
        for setting in PER_TOOL_SETTINGS:
            parameter = f'tool.{name}.{setting}'
            if node.has_parameter(parameter):
                node.undeclare_parameter(parameter)

    @staticmethod
    def _tool_parameter_default(name: str, setting: str) -> tuple[Any, str]:
        """Return (initial value, description) of tool.<name>.<setting>."""
        if setting == 'repeat_window_s':
            return DEFAULT_REPEAT_WINDOW_S.get(name, 0.0), (
                f"Seconds in which a call of '{name}' with the same arguments as a running or "
                'recent one is answered duplicate instead of run (0: off).')
        if setting == 'approval':
            return 'auto', (
                f"'{name}' calls: auto (run), confirm (wait for ~/approve, announced on "
                'lerobot_tools/approval_requests) or deny (refused).')
        return None, f"{setting} for '{name}' only; unset: {setting}"

    def _per_tool(self, name: str, setting: str, default: Any) -> Any:
        parameter = f'tool.{name}.{setting}'
        node = self._node
        if node.has_parameter(parameter):
            value = node.get_parameter(parameter).value
        else:  # not declared yet: the value its declaration will take
            value = self._tool_overrides.get(parameter)
        try:
            return default if value is None else type(default)(value)
        except (TypeError, ValueError):  # checked on set; kept as a last line of defence
            return default

    def tool_settings(self, name: str) -> ToolSettings:
        """Per-tool settings for the core: tool.<name>.<setting>, else the global value."""
        return ToolSettings(timeout_s=self._per_tool(name, 'timeout_s', self.timeout_s),
                            rate_limit_hz=self._per_tool(name, 'rate_limit_hz',
                                                         self.rate_limit_hz),
                            burst=self._per_tool(name, 'burst', self.burst),
                            repeat_window_s=self._per_tool(
                                name, 'repeat_window_s', DEFAULT_REPEAT_WINDOW_S.get(name, 0.0)),
                            approval=self._per_tool(name, 'approval', 'auto'))

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
            if parameter.name.startswith('tool.'):
                setting = parameter.name.rpartition('.')[2]
                value = parameter.value
                if setting == 'approval':
                    if value is not None and value not in APPROVAL_MODES:
                        return (f'{parameter.name} must be one of {", ".join(APPROVAL_MODES)}, '
                                f'got {value!r}'), {}, False
                elif value is not None and (isinstance(value, bool)
                                            or not isinstance(value, (int, float)) or value < 0):
                    return (f'{parameter.name} must be a non-negative number, got {value!r}',
                            {}, False)
                if setting in PER_TOOL_SETTINGS:
                    changed_tools = True
                continue
            kind = RUNTIME_PARAMETERS.get(parameter.name)
            if kind is None:
                continue
            value = parameter.value
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if kind is list:
                try:
                    value = string_list(parameter.name, value)
                except ValueError as exc:
                    return str(exc), {}, False
                if parameter.name == 'allowed_tools':
                    value = allowed(value)
            if not isinstance(value, kind) or (kind in (int, float) and value < 0):
                return (f'{parameter.name} must be a non-negative {kind.__name__}, got '
                        f'{value!r}'), {}, False
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
