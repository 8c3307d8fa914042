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
MCP server: the catalog's tools for LLM agents, every call through the dispatcher's gates.

An rclpy node (spun on its own thread) follows the dispatcher: its latched catalog message (the
tools it runs), its parameters (``allowed_tools``, approvals), progress, approval requests and
results; each MCP ``tools/call`` goes to the dispatcher's ``~/call`` with source ``mcp``, so
validation, pause, allowlist, approval, repeat suppression and rate limits apply as for policy
text. The MCP side runs on the official ``mcp`` SDK's low-level ``Server`` in the main thread
(asyncio): ``mcp_bridge`` hands ROS over to it, ``mcp_handlers`` answers the clients,
``transports`` carries stdio and Streamable HTTP. SIGINT and SIGTERM stop it cleanly: calls
in flight are cancelled and answered, then it exits 0.

Run with ``lerobot-tools-ros mcp`` or as the ``mcp_server`` executable (parameters below).
"""

import asyncio
import contextlib
import signal
import sys
import threading
from typing import Any

from lerobot_tools_ros import names
from lerobot_tools_ros.mcp import access, fleet, sdk_adapter
from lerobot_tools_ros.mcp.robot_link import RobotLink
from lerobot_tools_ros.nodes.params import declare_table, refuse_unknown_parameters
from lerobot_tools_ros.parameters.declarations import MCP_SERVER
from lerobot_tools_ros.untrusted import log_text
from rcl_interfaces.msg import ParameterEvent
import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

TRANSPORTS = MCP_SERVER['transport'].choices
# Seconds calls stopped by a signal get to be answered before the transport closes.
STOP_GRACE_S = 2.0
# How long answers made while stopping get to reach their clients before the streams close.
RESPONSE_FLUSH_S = 0.5
# Seconds between looks at the graph for new robot namespaces (discover_robots).
DISCOVERY_LOOK_S = 1.0


class McpServerNode(Node):
    """The ROS side: one ``RobotLink`` per robot served (its dispatcher, tool_server, topics)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.MCP_SERVER_NODE, **kwargs)
        values = declare_table(self, MCP_SERVER)  # each checked against its declaration
        self.transport = values['transport']
        self.host = access.bind_host(values['host'])
        self.port = values['port']
        self.path = values['path']
        self.token_env = values['token_env']
        self.token_file = values['token_file']
        self.dispatcher = values['dispatcher']
        self.tool_server = values['tool_server']
        self.read_only_tools = values['read_only_tools']
        self.actuating_tools = values['actuating_tools']
        self.max_argument_bytes = values['max_argument_bytes']
        self.max_image_bytes = values['max_image_bytes']
        self.max_request_bytes = values['max_request_bytes']
        self.http_session_idle_s = values['http_session_idle_s']
        self.http_max_sessions = values['http_max_sessions']
        self.refresh_s = values['refresh_s']
        self.discovery_wait_s = values['discovery_wait_s']
        self.call_timeout_s = values['call_timeout_s']
        self.token = None
        if self.transport == 'http':
            self.token = access.read_token(self.token_env, self.token_file)
            self.bind_note = access.check_bind(self.host, self.token, self.token_env)

        self.robots = fleet.parse_robots(values['robots'])  # RobotNameError: a ValueError
        self.discover_robots = values['discover_robots']
        self.fleet = bool(self.robots) or self.discover_robots
        if self.fleet:  # each robot's nodes are found in its own namespace
            for name in ('dispatcher', 'tool_server'):
                if getattr(self, name).startswith('/'):
                    raise ValueError(f'{name} {getattr(self, name)!r} is absolute: serving a '
                                     'fleet, it names a node relative to each robot namespace')
            if self.discover_robots and '/' in self.dispatcher.strip('/'):
                raise ValueError(f'dispatcher {self.dispatcher!r}: discover_robots looks for '
                                 'a node name (such as dispatcher), not a path')
        # One link per robot: the fleet's, or the single robot's in this node's namespace.
        self.links: list[RobotLink] = (
            [RobotLink(self, ns, fleet.robot_label(ns)) for ns in self.robots] if self.fleet
            else [RobotLink(self)])
        self.dispatcher_fqn = self.links[0].dispatcher_fqn if not self.fleet else ''
        # Set by serve() on the asyncio side: told of each robot discovery adds.
        self.on_new_robot: Any = None
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.create_subscription(ParameterEvent, names.PARAMETER_EVENTS_TOPIC,
                                 self._on_parameter_event, reliable)
        if self.discover_robots:
            self.create_timer(DISCOVERY_LOOK_S, self._discover)

    def _on_parameter_event(self, event: ParameterEvent) -> None:
        for link in self.links:
            if event.node == link.dispatcher_fqn:
                link.parameters_changed()

    def _discover(self) -> None:
        """Wire every robot namespace whose dispatcher has appeared on the domain (ROS thread)."""
        known = {link.namespace for link in self.links}
        dispatcher = self.dispatcher.rstrip('/').rsplit('/', 1)[-1]
        for namespace in fleet.dispatcher_namespaces(
                self.get_node_names_and_namespaces(), dispatcher):
            if namespace in known:
                continue
            link = RobotLink(self, namespace, fleet.robot_label(namespace))
            self.links.append(link)
            self.get_logger().info(f'robot {link.label} discovered ({link.dispatcher_fqn})')
            if self.on_new_robot is not None:
                self.on_new_robot(link)


async def serve(node: McpServerNode, stop_requested: threading.Event | None = None) -> None:
    """
    Run the MCP server on ``node``'s transport until the client leaves or a signal comes.

    ``stop_requested``: set by a signal that came before this ran (see ``main``).
    """
    loop = asyncio.get_running_loop()
    # Ours before the SDK import (seconds): a signal then is kept and handled once serving.
    group = None
    signalled = False

    def on_signal() -> None:
        nonlocal signalled
        if signalled:
            return
        signalled = True
        node.get_logger().info('stopping: cancelling calls in flight')
        if group is not None:
            group.start_soon(stop)

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    if stop_requested is not None and stop_requested.is_set():
        on_signal()
    import anyio
    from lerobot_tools_ros.mcp.bridge import RosBridge

    # One bridge per robot (discovery_wait_s counts from here). Each robot's tool list is read
    # from its dispatcher while the SDK is imported in a thread (most of a cold start: the
    # import is CPU, discovery and parameter reads mostly wait), so a first tools/list that
    # arrives once the SDK is up finds it ready.
    bridges = [RosBridge(link, loop) for link in list(node.links)]
    refreshing = [asyncio.ensure_future(b.refresh_forever()) for b in bridges]
    try:
        await anyio.to_thread.run_sync(_import_sdk)
    except BaseException:
        for task in refreshing:
            task.cancel()
        raise
    from lerobot_tools_ros.mcp import transports as mcp_transports
    from lerobot_tools_ros.mcp.fleet_handlers import build_fleet_server, FleetHandlers
    from lerobot_tools_ros.mcp.handlers import build_server

    http = None
    fleet_handlers = None
    if node.fleet:
        fleet_handlers = FleetHandlers(bridges)
        server = build_fleet_server(fleet_handlers)

        def add_robot(link: Any) -> None:  # on the loop: a robot discovery found
            if link.bridge is not None:
                return
            bridge = RosBridge(link, loop, started=loop.time() - node.discovery_wait_s)
            fleet_handlers.add(bridge)
            bridges.append(bridge)
            refreshing.append(asyncio.ensure_future(bridge.refresh_forever()))
            if http is not None:
                bridge.http_server = server
        node.on_new_robot = lambda link: loop.call_soon_threadsafe(add_robot, link)
        for link in list(node.links):  # found while the SDK was imported
            add_robot(link)
    else:
        server = build_server(bridges[0])
    async with anyio.create_task_group() as group:
        serving = anyio.CancelScope()

        async def stop() -> None:
            for bridge in bridges:
                bridge.shut_down()  # calls in flight are cancelled, and answered
            deadline = loop.time() + STOP_GRACE_S
            while any(b.active for b in bridges) and loop.time() < deadline:
                await asyncio.sleep(0.02)
            # The answers just made still travel through the session's writer to stdout or to
            # an SSE stream: closing at once cut them off on a busy machine.
            await asyncio.sleep(RESPONSE_FLUSH_S)
            if http is not None:
                # Open streams (a client's GET stream) would hold uvicorn's graceful shutdown.
                for transport in sdk_adapter.http_sessions(server).values():
                    with contextlib.suppress(Exception):
                        await transport.terminate()
                http.should_exit = True
            else:
                serving.cancel()

        if signalled:  # during the start
            group.start_soon(stop)
        try:
            if node.transport == 'stdio':
                node.get_logger().info('MCP server on stdio')
                with serving:
                    async with mcp_transports.stdio_streams() as (read, write):
                        await server.run(read, write, server.create_initialization_options())
                    node.get_logger().info('stdin closed (the client left): stopping')
            else:
                node.get_logger().info(f'MCP server at {mcp_transports.base_url(node)}'
                                       f'{node.path}: {node.bind_note}')
                http = mcp_transports.uvicorn_server(mcp_transports.http_app(server, node), node)
                for bridge in bridges:
                    bridge.http_server = server
                with serving:
                    await http.serve()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            node.on_new_robot = None
            for bridge in bridges:
                bridge.shut_down()
            with anyio.CancelScope(shield=True):
                # Calls stopped on the way out: let their cancels reach the dispatchers.
                await asyncio.gather(*(b.drain(2.0) for b in bridges))
            for task in refreshing:
                task.cancel()
            group.cancel_scope.cancel()


def _import_sdk() -> None:
    """Import what serving needs from the MCP SDK (the slow part of a start)."""
    import mcp.server.lowlevel  # noqa: F401
    import mcp.server.subscriptions  # noqa: F401
    from lerobot_tools_ros.mcp import fleet_handlers, handlers, transports  # noqa: F401


def main(args: list[str] | None = None) -> int:
    import importlib.util
    if importlib.util.find_spec('mcp') is None or importlib.util.find_spec('anyio') is None:
        print(f'[{names.MCP_SERVER_NODE}] error: the MCP server needs the mcp package '
              '(pip install mcp==2.3.0)', file=sys.stderr)
        return 1
    # Until serve() takes signals over, one is only remembered: the start goes on, and serve()
    # stops at once, answering what it must. (Left to the defaults, a Ctrl-C during the start
    # met asyncio's own handler, which cancelled the start half way: a traceback, and on a busy
    # machine a process that never ended.) A second one interrupts a start that hangs.
    stop_requested = threading.Event()

    def remember(signum: int, frame: Any) -> None:
        if stop_requested.is_set():
            raise KeyboardInterrupt
        stop_requested.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, remember)
    # The node first: DDS discovers the dispatcher while the MCP SDK is imported (seconds).
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = None
    executor = None
    spinner = None
    try:
        try:
            node = McpServerNode()
            refuse_unknown_parameters(node)  # a misspelled name would be ignored
        except (ValueError, TypeError, LookupError, ParameterException) as exc:
            print(f'[{names.MCP_SERVER_NODE}] error: {exc}', file=sys.stderr)
            return 1
        executor = SingleThreadedExecutor()
        executor.add_node(node)

        def spin() -> None:
            # A fault in one callback (one odd message) is logged; the server keeps serving.
            while rclpy.ok():
                try:
                    executor.spin()
                except (ExternalShutdownException, KeyboardInterrupt):
                    return
                except Exception as exc:  # noqa: B902 - never end the bridge to ROS
                    node.get_logger().error(
                        f'a ROS callback failed and was skipped ({type(exc).__name__}: '
                        f'{log_text(exc, 300)}); please report it')

        spinner = threading.Thread(target=spin, name='ros', daemon=True)
        spinner.start()
        import anyio
        anyio.run(serve, node, stop_requested, backend='asyncio')
    except KeyboardInterrupt:
        pass  # a second Ctrl-C while stopping
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        if spinner is not None:
            spinner.join(2.0)
    return 0


if __name__ == '__main__':
    sys.exit(main())
