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
Host tools as `lerobot_tools_interfaces/srv/CallTool` services, one per tool.

Other nodes may call these services directly (without the dispatcher), so the server validates
arguments against the catalog itself. Each tool's service is spun by a thread of its own, so a
slow `say` never delays a `record_observation`, while calls of one tool run one at a time (tools
are not required to be thread-safe). A tool's exception becomes an `execution_failed` answer;
it never takes the server down.
"""

from dataclasses import dataclass, field
import inspect
import json
import sys
import threading
import time
from typing import Any

from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import ToolArgumentError, ToolCatalog
from lerobot_tools_ros.nodes.params import declare, overrides_with_prefix
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.tools import TOOL_REGISTRY
from lerobot_tools_ros.tools.base import declared_parameters, Tool
from lerobot_tools_ros.tools.bindings.loader import load_bindings
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node


@dataclass
class _HostedTool:
    tool: Tool
    node: Node | None = None  # serves the tool's CallTool service
    executor: SingleThreadedExecutor | None = None  # spins `node` in `thread`
    thread: threading.Thread | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    calls: int = 0


def _utf8(text: str) -> str:
    """Replace lone surrogates (from model text) so the string can cross ROS."""
    return text if text.isascii() else text.encode('utf-8', 'replace').decode('utf-8')


def tool_kwargs(node: Node, tool_name: str, tool_class: type, catalog: ToolCatalog) -> dict:
    """
    Collect the constructor kwargs of a tool from its `tool.<name>.*` parameters.

    A parameter given with nested keys is passed as a map
    (`tool.record_observation.cameras.front: /camera/front/image_raw` -> cameras={'front': ...}).
    """
    prefix = f'tool.{tool_name}.'
    declared = declared_parameters(tool_class)
    kwargs: dict[str, Any] = {}
    for key, spec in declared.items():
        nested = overrides_with_prefix(node, f'{prefix}{key}.')
        if nested or isinstance(spec.default, dict):
            defaults = spec.default if isinstance(spec.default, dict) else {}
            kwargs[key] = {**defaults, **nested}
        else:
            kwargs[key] = declare(node, prefix + key, spec.default, spec.description)
    known = set(declared)
    for extra in sorted(overrides_with_prefix(node, prefix)):
        if extra.split('.', 1)[0] not in known:
            node.get_logger().warning(
                f"ignoring parameter '{prefix}{extra}': tool '{tool_name}' declares "
                f"{sorted(known) or 'no parameters'}")
    accepted = inspect.signature(tool_class).parameters
    if 'catalog' in accepted:
        kwargs['catalog'] = catalog
    if 'dataset_cameras' in accepted:
        kwargs['dataset_cameras'] = catalog.camera_names
    return kwargs


class ToolServer(Node):
    """Serve every tool named in the `tools` parameter at `<service_prefix>/<name>`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.TOOL_SERVER_NODE, **kwargs)
        tool_names = declare(
            self, 'tools', ['say', 'record_observation'],
            'Names of the tools to host; each must be registered (built in or through the '
            "'lerobot_tools_ros.tools' entry-point group) and declared in the dataset catalog.",
            read_only=True)
        dataset = declare(
            self, 'dataset', '',
            'Catalog source for the tool schemas: a dataset root, an info.json path or a LeRobot '
            "repo id. Empty: the package's sample dataset.", read_only=True)
        self.service_prefix = declare(
            self, 'service_prefix', names.SERVICE_PREFIX,
            'Prefix of the CallTool services; each tool is served at <prefix>/<tool name>.',
            read_only=True)
        self.catalog = ToolCatalog.load(dataset or None)
        for problem in self.catalog.problems:
            self.get_logger().warning(problem)
        bindings_file = declare(
            self, 'bindings_file', '',
            "YAML file binding catalog tools to existing ROS services, actions and topics ('' = "
            'none). Every bound tool is hosted; a binding wins over a registered tool class.',
            read_only=True)
        self._bound = load_bindings(bindings_file, self.catalog) if bindings_file else {}
        tool_names = [*tool_names, *(name for name in self._bound if name not in tool_names)]
        if not tool_names:
            raise ValueError("parameter 'tools' is empty: name at least one tool to host")
        self._hosted: dict[str, _HostedTool] = {}
        try:
            for tool_name in tool_names:
                self._host(tool_name)
        except BaseException:
            self.close_tools()
            raise

    def _host(self, tool_name: str) -> None:
        if tool_name in self._hosted:
            raise ValueError(f"tool '{tool_name}' is listed twice in parameter 'tools'")
        if tool_name not in self.catalog:
            hint = self.catalog.suggest(tool_name)
            raise ValueError(
                f"tool '{tool_name}' is not declared in the catalog {self.catalog.source} "
                f"(declared: {', '.join(self.catalog.names)})"
                + (f"; did you mean '{hint}'?" if hint else '; add its schema to info.json'))
        bound = self._bound.get(tool_name)
        if bound is None and tool_name not in TOOL_REGISTRY:
            raise ValueError(
                f"no implementation is registered for tool '{tool_name}' (registered: "
                f"{', '.join(sorted(TOOL_REGISTRY))}); install a package that provides it "
                "through the 'lerobot_tools_ros.tools' entry-point group")
        for other in self._hosted:
            if names.ros_safe(other) == names.ros_safe(tool_name):
                raise ValueError(f"tools '{other}' and '{tool_name}' would share the service "
                                 f'{names.tool_service_name(self.service_prefix, tool_name)} '
                                 '(ROS names hold no "-" or "."); rename one in info.json')
        if bound is not None:
            tool = bound
            wins = ' (wins over the registered tool class)' if tool_name in TOOL_REGISTRY else ''
            self.get_logger().info(f"'{tool_name}' is bound to {bound.describe()}{wins}")
            for warning in bound.warnings():
                self.get_logger().warning(warning)
        else:
            tool_class = TOOL_REGISTRY[tool_name]
            tool = tool_class(self.catalog.schema(tool_name),
                              **tool_kwargs(self, tool_name, tool_class, self.catalog))
        hosted = _HostedTool(tool=tool)
        self._hosted[tool_name] = hosted
        bind_ros = getattr(tool, 'bind_ros', None)
        if bind_ros is not None:
            bind_ros(self)
        # The service lives on a node of its own, spun by its own executor thread: a call runs
        # right in that thread (no hand-off, so no added latency), calls of one tool run one
        # at a time, and a slow tool never holds up another tool or this node's topics.
        service_name = self.resolve_service_name(
            names.tool_service_name(self.service_prefix, tool_name))
        # Global arguments (launch's `-r __node:=tool_server`, params files) are meant for the
        # main node; the service name was resolved (and remapped) on it above.
        hosted.node = rclpy.create_node(
            f'{self.get_name()}_{names.ros_safe(tool_name)}', namespace=self.get_namespace(),
            context=self.context, start_parameter_services=False, use_global_arguments=False)
        hosted.node.create_service(CallTool, service_name, self._handler(hosted))
        hosted.executor = SingleThreadedExecutor(context=self.context)
        hosted.executor.add_node(hosted.node)
        hosted.thread = threading.Thread(target=self._spin, args=(hosted,), daemon=True,
                                         name=f'tool-{tool_name}')
        hosted.thread.start()
        self.get_logger().info(f"hosting '{tool_name}' ({type(tool).__name__}) at {service_name}")

    def _spin(self, hosted: _HostedTool) -> None:
        """Tool thread: serve the tool's service until close_tools() sets `stop`."""
        while not hosted.stop.is_set() and self.context.ok():
            try:
                hosted.executor.spin_once(timeout_sec=0.1)
            except (ExternalShutdownException, KeyboardInterrupt):
                return
            except Exception as exc:  # noqa: B902 - one bad call must not end the tool
                if hosted.stop.is_set():
                    return
                self.get_logger().error(f'{hosted.tool.name}: service thread error: {exc!r}')

    def _handler(self, hosted: _HostedTool):
        def handle(request: CallTool.Request, response: CallTool.Response):
            response.call_id = request.call_id
            try:
                code, text = self._call(hosted, request)
            except Exception as exc:  # noqa: B902 - every request gets an answer
                code, text = errors.EXECUTION_FAILED, f'{type(exc).__name__}: {exc}'
            text = _utf8(text)  # a ROS string must be valid UTF-8 (model text may not be)
            response.success = not code
            response.content = text if not code else ''
            response.error_code = code
            response.error_message = text if code else ''
            return response
        return handle

    def _call(self, hosted: _HostedTool, request: CallTool.Request) -> tuple[str, str]:
        """Return ('', content) on success, else (error_code, error_message)."""
        name = hosted.tool.name
        if request.name and request.name != name:
            other = names.tool_service_name(self.service_prefix, request.name)
            return errors.UNKNOWN_TOOL, (
                f"this service hosts '{name}', but the request names '{request.name}'; call "
                f'{self.resolve_service_name(other)} instead')
        try:
            arguments = self.catalog.validate(name, request.arguments or '{}')
        except ToolArgumentError as exc:
            return exc.error_code, exc.message
        hosted.calls += 1
        return self._execute(hosted.tool, arguments, request.call_id)

    def _execute(self, tool: Tool, arguments: dict, call_id: str) -> tuple[str, str]:
        """Run one call; return ('', content) or (error_code, error_message)."""
        started = time.monotonic()
        try:
            output = tool.call(arguments)
            content = output if isinstance(output, str) else json.dumps(output)
            outcome = ('', content)
        except errors.ToolError as exc:
            outcome = (exc.code, exc.message)
        except Exception as exc:  # noqa: B902 - a tool's failure must not end the server
            outcome = (errors.EXECUTION_FAILED, f'{tool.name} failed: {type(exc).__name__}: {exc}')
        elapsed_ms = (time.monotonic() - started) * 1e3
        if outcome[0]:
            self.get_logger().warning(_utf8(f"{tool.name} call '{call_id}' -> {outcome[0]}: "
                                            f'{outcome[1]} ({elapsed_ms:.0f} ms)'))
        else:
            self.get_logger().debug(f"{tool.name} call '{call_id}' ok ({elapsed_ms:.1f} ms)")
        return outcome

    @property
    def tools(self) -> dict[str, Tool]:
        """Return the hosted tool instances by name."""
        return {name: hosted.tool for name, hosted in self._hosted.items()}

    def close_tools(self) -> None:
        """Stop the tools' service threads and let each tool release its resources."""
        hosted_tools = list(self._hosted.values())
        for hosted in hosted_tools:
            hosted.stop.set()  # no new requests are taken
        for hosted in hosted_tools:
            close = getattr(hosted.tool, 'close', None)
            if close is not None:  # ends a call still running (a long delay, an utterance)
                try:
                    close()
                except Exception as exc:  # noqa: B902 - keep closing the others
                    self.get_logger().warning(f'closing {hosted.tool.name} failed: {exc}')
        for hosted in hosted_tools:
            if hosted.thread is not None:
                hosted.thread.join(timeout=5.0)
                if hosted.thread.is_alive():
                    self.get_logger().warning(
                        f'{hosted.tool.name}: a call is still running after 5 s; leaving it')
                    continue
            if hosted.executor is not None:
                hosted.executor.shutdown(timeout_sec=1.0)
            if hosted.node is not None:
                hosted.node.destroy_node()
        self._hosted.clear()

    def destroy_node(self) -> None:
        self.close_tools()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(ToolServer, 'tool_server', args)


if __name__ == '__main__':
    sys.exit(main())
