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

An rclpy node (spun on its own thread) reads the dispatcher's parameters to know which tools to
list, and submits each MCP ``tools/call`` to the dispatcher's ``~/call`` service with source
``mcp``, so validation, pause, allowlist, approval, repeat suppression and rate limits apply as
for policy text. The MCP side runs on the official ``mcp`` SDK's low-level ``Server`` in the main
thread (asyncio); rclpy futures are handed over with ``call_soon_threadsafe`` and nothing on the
MCP side blocks the ROS thread or the other way round.

Transports: stdio (default) and Streamable HTTP, loopback unless a bearer token is configured.
Run with ``lerobot-tools-ros mcp`` or as the ``mcp_server`` executable (parameters below).
"""

import asyncio
import os
import signal
import sys
import threading
from typing import Any
import uuid

from lerobot_tools_interfaces.msg import ToolProgress
from lerobot_tools_interfaces.srv import CallTool, CancelCalls
from lerobot_tools_ros import errors, mcp_core, names
from lerobot_tools_ros.catalog import CatalogError, ToolCatalog
from lerobot_tools_ros.nodes.params import declare_table
from lerobot_tools_ros.parameters.declarations import MCP_SERVER
from lerobot_tools_ros.untrusted import log_text, ros_string
from rcl_interfaces.msg import ParameterEvent
import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

TRANSPORTS = MCP_SERVER['transport'].choices
IMAGE_TOOLS = ('record_observation',)
# Seconds a first tools/list also waits for a discovered dispatcher's settings to be read.
_READ_SETTINGS_S = 6.0


class McpServerNode(Node):
    """The ROS side: dispatcher parameters, ``~/call``, ``~/cancel`` and the progress topic."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.MCP_SERVER_NODE, **kwargs)
        values = declare_table(self, MCP_SERVER)  # each checked against its declaration
        self.transport = values['transport']
        self.host = values['host']
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
        self.refresh_s = values['refresh_s']
        self.discovery_wait_s = values['discovery_wait_s']
        self.call_timeout_s = values['call_timeout_s']
        self.token = None
        if self.transport == 'http':
            self.token = mcp_core.read_token(self.token_env, self.token_file)
            self.bind_note = mcp_core.check_bind(self.host, self.token, self.token_env)

        base = self.dispatcher.rstrip('/')
        self.dispatcher_fqn = (base if base.startswith('/') else
                               f'{self.get_namespace().rstrip("/")}/{base}')
        self.call_client = self.create_client(CallTool, f'{base}/{names.DISPATCHER_CALL}')
        self.cancel_client = self.create_client(CancelCalls, f'{base}/{names.DISPATCHER_CANCEL}')
        self.param_client = AsyncParameterClient(self, base)
        self.server_param_client = AsyncParameterClient(self, self.tool_server.rstrip('/'))
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.create_subscription(ToolProgress, names.PROGRESS_TOPIC, self._on_progress, reliable)
        self.create_subscription(ParameterEvent, names.PARAMETER_EVENTS_TOPIC,
                                 self._on_parameter_event,
                                 QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        self.bridge: 'RosBridge | None' = None

    def _on_progress(self, msg: ToolProgress) -> None:
        # Only calls this server made and whose client asked for progress (a dict lookup is
        # safe across threads; the queue itself is touched on the loop only).
        if self.bridge is not None and msg.call_id in self.bridge.progress:
            self.bridge.post(self.bridge.on_progress, msg.call_id, msg.stage, msg.progress,
                             msg.detail)

    def _on_parameter_event(self, event: ParameterEvent) -> None:
        if self.bridge is not None and event.node == self.dispatcher_fqn:
            self.bridge.post(self.bridge.settings_changed)


class RosBridge:
    """Hands rclpy futures and callbacks over to the asyncio loop the MCP server runs on."""

    def __init__(self, node: McpServerNode, loop: asyncio.AbstractEventLoop) -> None:
        self.node = node
        self.loop = loop
        self.tools: list[mcp_core.McpTool] = []
        self.have_tools = asyncio.Event()
        self.dispatcher_seen = asyncio.Event()  # its parameter services were discovered
        self.changed = asyncio.Event()
        self.progress: dict[str, asyncio.Queue] = {}
        self.sessions: dict[int, Any] = {}   # connections to tell about list changes
        self.bus = None                      # SubscriptionBus of modern-era listeners
        self.cancels: list[Future] = []      # ~/cancel requests sent, answered or not
        self.call_proven = False  # a :probe on ~/call was answered (see call_service_ready)
        self.started = loop.time()
        self._told_empty = False
        self._catalog: tuple | None = None   # (dataset parameter, catalog, file mtime)
        self._bindings: tuple | None = None  # (bindings file, mtime, tools bound kind: read)
        node.bridge = self

    def post(self, function, *args) -> None:
        """Run ``function(*args)`` on the asyncio loop (callable from the ROS thread)."""
        try:
            self.loop.call_soon_threadsafe(function, *args)
        except RuntimeError:
            pass  # the loop is closed: we are shutting down

    def wait(self, future: Future) -> asyncio.Future:
        """Return an asyncio future settled when the rclpy ``future`` is (on the loop thread)."""
        result = self.loop.create_future()

        def settle() -> None:
            if result.done():
                return  # the awaiting MCP request was cancelled meanwhile
            exception = future.exception()
            if exception is not None:
                result.set_exception(exception)
            else:
                result.set_result(future.result())

        future.add_done_callback(lambda _: self.post(settle))
        return result

    # -- tool list --------------------------------------------------------------------------

    def settings_changed(self) -> None:
        self.changed.set()

    async def refresh_forever(self) -> None:
        """Keep ``tools`` equal to what the dispatcher lets MCP clients call."""
        while True:
            try:
                await self.refresh()
            except (CatalogError, ValueError, TimeoutError) as exc:
                self.node.get_logger().warning(f'tool list not refreshed: {log_text(exc)}')
            self.changed.clear()
            # Until the dispatcher has been seen once, look again soon (clients are waiting).
            pause = self.node.refresh_s if self.have_tools.is_set() else 0.2
            try:
                await asyncio.wait_for(self.changed.wait(), pause)
            except asyncio.TimeoutError:
                pass

    async def refresh(self) -> None:
        if not self.node.call_client.service_is_ready():
            self.call_proven = False  # gone: a dispatcher that comes back is proven again
        params = self.node.param_client
        if not params.services_are_ready():
            return  # keep the last list: calls answer unavailable until the dispatcher is back
        self.dispatcher_seen.set()
        listed = await asyncio.wait_for(self.wait(params.list_parameters()), 5.0)
        wanted = ['dataset', 'allowed_tools'] + [
            name for name in listed.result.names
            if name.startswith('tool.') and name.endswith('.approval')]
        values = await self.get_parameters(wanted)
        catalog = self.catalog(values.get('dataset') or '')
        view = mcp_core.view_from_parameters(values)
        read_only = set(self.node.read_only_tools) | await self.bound_read_tools()
        tools = mcp_core.visible_tools(catalog, view, read_only=read_only,
                                       actuating=self.node.actuating_tools)
        first = not self.have_tools.is_set()
        if tools != self.tools or first:
            self.tools = tools
            self.have_tools.set()
            if not first:
                self.node.get_logger().info(
                    'tool list changed: ' + ', '.join(t.name for t in tools))
                await self.notify_list_changed()
            else:
                self.node.get_logger().info(
                    f'serving {len(tools)} tool(s) of {catalog.source}: '
                    + ', '.join(t.name for t in tools))

    async def wait_for_first_list(self) -> None:
        """
        Right after start, wait (bounded by discovery_wait_s) until the tool list is known.

        A client that connects at launch would otherwise be told the robot has no tools. Once
        the dispatcher is discovered, reading its settings may take a moment more (its services
        answer RPCs, bounded by their 5 s timeouts). Later lists answer at once.
        """
        if self.have_tools.is_set():
            return
        left = self.started + self.node.discovery_wait_s - self.loop.time()
        if left > 0:
            try:
                await asyncio.wait_for(self.dispatcher_seen.wait(), left)
                await asyncio.wait_for(self.have_tools.wait(), _READ_SETTINGS_S)
                return
            except asyncio.TimeoutError:
                pass
        if not self._told_empty:
            self._told_empty = True
            why = ('its settings could not be read' if self.dispatcher_seen.is_set() else
                   'it was not discovered')
            self.node.get_logger().warning(
                f'listing no tools: no dispatcher at {self.node.dispatcher_fqn} within '
                f'discovery_wait_s {self.node.discovery_wait_s:g} s ({why}; is it running, in '
                'this ROS domain and namespace?); clients are told when the list changes')

    def catalog(self, dataset: str) -> ToolCatalog:
        """Load the dispatcher's catalog, again only when its source or file changed."""
        cached = self._catalog
        if cached is not None and cached[0] == dataset and cached[2] == _mtime(cached[1].source):
            return cached[1]
        catalog = ToolCatalog.load(dataset or None)
        for problem in catalog.problems:
            self.node.get_logger().warning(log_text(problem))
        self._catalog = (dataset, catalog, _mtime(catalog.source))
        return catalog

    async def bound_read_tools(self) -> frozenset[str]:
        """Tools the tool_server binds with ``kind: read`` (its bindings file, if it has one)."""
        params = self.node.server_param_client
        # Just after start, give discovery of the tool_server a moment (later it is seen on the
        # next refresh, and clients are told the list changed).
        deadline = min(self.started + self.node.discovery_wait_s, self.loop.time() + 2.0)
        while not params.services_are_ready():
            if self.loop.time() >= deadline:
                return frozenset()
            await asyncio.sleep(0.05)
        got = await asyncio.wait_for(self.wait(params.get_parameters(['bindings_file'])), 5.0)
        path = parameter_value_to_python(got.values[0]) if got.values else None
        if not path:
            return frozenset()
        path = os.path.expanduser(path)
        cached = self._bindings
        if cached is not None and cached[0] == path and cached[1] == _mtime(path):
            return cached[2]
        try:
            with open(path, encoding='utf-8') as handle:
                tools = mcp_core.read_bindings(handle.read())
        except (OSError, UnicodeDecodeError) as exc:
            self.node.get_logger().warning(f'cannot read the bindings file {log_text(path)}: '
                                           f'{log_text(exc)}')
            tools = frozenset()
        self._bindings = (path, _mtime(path), tools)
        return tools

    async def get_parameters(self, wanted: list[str]) -> dict[str, Any]:
        """
        Read the dispatcher's parameters ``wanted``; unset ones are ``None``.

        A parameter declared without a value (e.g. ``allowed_tools`` left empty) makes
        ``get_parameters`` answer nothing for the whole request, so when the batch comes back
        short, each one is asked for on its own.
        """
        params = self.node.param_client
        got = await asyncio.wait_for(self.wait(params.get_parameters(wanted)), 5.0)
        if len(got.values) == len(wanted):
            return {name: parameter_value_to_python(value)
                    for name, value in zip(wanted, got.values)}
        answers = await asyncio.wait_for(asyncio.gather(
            *(self.wait(params.get_parameters([name])) for name in wanted)), 5.0)
        return {name: (parameter_value_to_python(answer.values[0]) if answer.values else None)
                for name, answer in zip(wanted, answers)}

    async def notify_list_changed(self) -> None:
        """Send notifications/tools/list_changed to every connected client."""
        for key, session in list(self.sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # noqa: B902 - a closed connection: forget it
                self.node.get_logger().debug(f'dropping an MCP session: {exc!r}')
                self.sessions.pop(key, None)
        if self.bus is not None:
            from mcp.server.subscriptions import ToolsListChanged
            await self.bus.publish(ToolsListChanged())

    def remember(self, session: Any) -> None:
        connection = getattr(session, '_connection', session)
        self.sessions.setdefault(id(connection), session)

    # -- calls ------------------------------------------------------------------------------

    def on_progress(self, call_id: str, stage: str, progress: float, detail: str) -> None:
        queue = self.progress.get(call_id)
        if queue is not None:
            queue.put_nowait((stage, progress, detail))

    async def call_service_ready(self, timeout: float) -> bool:
        """
        Wait (bounded) until the dispatcher's ``~/call`` answers us; False when it does not.

        Discovery is not matching: for a moment after a service appears, its answers may not
        reach this node yet. Before the first call (and after the dispatcher was gone) a
        ``:probe`` request, which makes no call, is sent until one is answered.
        """
        deadline = self.loop.time() + timeout
        client = self.node.call_client
        while not client.service_is_ready():
            self.call_proven = False  # gone: a dispatcher that comes back is proven again
            if self.loop.time() >= deadline:
                return False
            await asyncio.sleep(0.05)
        while not self.call_proven:
            if self.loop.time() >= deadline:
                return False
            probe = client.call_async(CallTool.Request(name=names.READINESS_PROBE))
            try:
                await asyncio.wait_for(self.wait(probe), 0.5)
                self.call_proven = True
            except asyncio.TimeoutError:
                client.remove_pending_request(probe)
        return True

    async def drain_cancels(self, timeout: float) -> None:
        """Wait (bounded) until the dispatcher answered the cancels sent, before exiting."""
        deadline = self.loop.time() + timeout
        while any(not f.done() for f in self.cancels) and self.loop.time() < deadline:
            await asyncio.sleep(0.02)

    def cancel(self, call_id: str) -> None:
        """Ask the dispatcher to cancel ``call_id`` (fire and forget; it answers the call)."""
        if self.node.cancel_client.service_is_ready():
            future = self.node.cancel_client.call_async(CancelCalls.Request(call_id=call_id))
            self.cancels.append(future)
            self.node.get_logger().info(f'MCP client cancelled {call_id}; asked the dispatcher '
                                        'to cancel it')
        else:
            self.node.get_logger().warning(
                f'MCP client cancelled {call_id} but the dispatcher has no ~/cancel; the call '
                'runs to its end (its result is still published once)')


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except (OSError, ValueError):
        return None  # an in-memory catalog (the default tools) has no file


def _text(text: str):
    import mcp_types as types
    return types.TextContent(type='text', text=text)


def _error(code: str, message: str):
    import mcp_types as types
    return types.CallToolResult(content=[_text(mcp_core.error_text(code, message))],
                                is_error=True)


def build_server(bridge: RosBridge):
    """Build the MCP low-level ``Server`` with list_tools/call_tool handlers over ``bridge``."""
    import anyio
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
    from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
    import mcp_types as types

    node = bridge.node
    bridge.bus = InMemorySubscriptionBus()

    async def list_tools(ctx, params) -> types.ListToolsResult:
        bridge.remember(ctx.session)
        await bridge.wait_for_first_list()
        return types.ListToolsResult(tools=[
            types.Tool(name=tool.name, description=tool.description,
                       input_schema=tool.input_schema,
                       annotations=types.ToolAnnotations(
                           read_only_hint=tool.read_only, destructive_hint=tool.destructive))
            for tool in bridge.tools])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        bridge.remember(ctx.session)
        name = params.name
        try:
            arguments = mcp_core.encode_arguments(params.arguments, node.max_argument_bytes)
        except ValueError as exc:
            return _error(errors.INVALID_ARGUMENTS, str(exc))
        if not await bridge.call_service_ready(5.0):
            return _error(errors.UNAVAILABLE, f"the dispatcher's ~/call ({node.dispatcher_fqn}/"
                          f'{names.DISPATCHER_CALL}) is not available; is the dispatcher running?')
        call_id = f'mcp-{uuid.uuid4().hex[:16]}'
        request = CallTool.Request(call_id=call_id, name=ros_string(name),
                                   arguments=ros_string(arguments), source='mcp')
        # Progress is relayed only to a client that asked for it (sent a progress token).
        queue: asyncio.Queue | None = (
            asyncio.Queue() if progress_token_from_params(ctx.params) is not None else None)
        if queue is not None:
            bridge.progress[call_id] = queue
        response = None
        try:
            pending = bridge.wait(node.call_client.call_async(request))

            async def forward_progress() -> None:
                while True:
                    stage, progress, detail = await queue.get()
                    value = mcp_core.progress_value(progress)
                    message = f'{stage}: {detail}' if detail else stage
                    await ctx.session.report_progress(
                        value if value is not None else 0.0, 1.0 if value is not None else None,
                        message)

            with anyio.move_on_after(node.call_timeout_s):
                if queue is None:
                    response = await pending
                else:
                    async with anyio.create_task_group() as group:
                        group.start_soon(forward_progress)
                        response = await pending
                        group.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            bridge.cancel(call_id)  # the MCP client cancelled or went away
            raise
        finally:
            bridge.progress.pop(call_id, None)
        if response is None:
            bridge.cancel(call_id)
            return _error(errors.TIMEOUT, f'no answer from the dispatcher within '
                          f'{node.call_timeout_s:g} s; asked it to cancel call {call_id}')
        code = mcp_core.result_code(response.success, response.error_code)
        if code:
            return _error(code, f'{response.error_message} (call {call_id})')
        content = [_text(response.content)]
        if name in IMAGE_TOOLS:
            images, notes = mcp_core.images_in_result(response.content, node.max_image_bytes)
            content += [types.ImageContent(type='image', data=_b64(image.data),
                                           mime_type=image.mime_type) for image in images]
            content += [_text(note) for note in notes]
        return types.CallToolResult(content=content, is_error=False)

    class _Server(Server):
        def create_initialization_options(self, notification_options=None, *args, **kwargs):
            return super().create_initialization_options(
                notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)

    def schema_of(name: str):
        return next((t.input_schema for t in bridge.tools if t.name == name), None)

    return _Server('lerobot_tools_ros', version=_version(), instructions=(
        'Tools of a robot running lerobot_tools_ros. Every call passes the same gates as the '
        "robot policy's own calls (validation, pause, allowlist, operator approval, rate "
        'limits); an error result starts with its error code (e.g. "paused: ...").'),
        on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=schema_of,
        on_subscriptions_listen=ListenHandler(bridge.bus))


def _b64(data: bytes) -> str:
    import base64
    return base64.b64encode(data).decode('ascii')


def _version() -> str:
    try:
        from importlib.metadata import version
        return version('lerobot_tools_ros')
    except Exception:  # noqa: B902 - not installed as a distribution (source tree)
        return '0.1.0'


class _StaticToken:
    """The SDK's ``TokenVerifier`` for one configured bearer token."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str):
        from mcp.server.auth.provider import AccessToken
        if not mcp_core.token_matches(self._token, token):
            return None
        return AccessToken(token='<configured>', client_id='bearer', scopes=[])


def http_app(server, node: McpServerNode):
    """Build the Streamable HTTP ASGI app; with a token, the SDK bearer middleware guards it."""
    kwargs: dict[str, Any] = {}
    if node.token:
        from mcp.server.auth.settings import AuthSettings
        kwargs['auth'] = AuthSettings(issuer_url=f'http://{node.host}:{node.port}',
                                      resource_server_url=None)
        kwargs['token_verifier'] = _StaticToken(node.token)
    return server.streamable_http_app(
        streamable_http_path=node.path, host=node.host,
        max_request_body_size=node.max_request_bytes, **kwargs)


async def serve(node: McpServerNode) -> None:
    """Run the MCP server on ``node``'s transport until the client or a signal ends it."""
    import anyio

    bridge = RosBridge(node, asyncio.get_running_loop())
    server = build_server(bridge)
    async with anyio.create_task_group() as group:
        group.start_soon(bridge.refresh_forever)
        try:
            await _serve_transport(server, node)
        finally:
            with anyio.CancelScope(shield=True):
                # A client that left mid-call: its calls were cancelled; let those requests
                # reach the dispatcher before the node goes away.
                await bridge.drain_cancels(2.0)
        group.cancel_scope.cancel()


async def _serve_transport(server, node: McpServerNode) -> None:
    """Serve MCP on the configured transport until the client leaves or a signal arrives."""
    if node.transport == 'stdio':
        from mcp.server.stdio import stdio_server
        node.get_logger().info('MCP server on stdio')
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return
    import uvicorn
    node.get_logger().info(f'MCP server at http://{node.host}:{node.port}{node.path}: '
                           f'{node.bind_note}')
    config = uvicorn.Config(http_app(server, node), host=node.host, port=node.port,
                            log_level='warning', lifespan='on')
    await uvicorn.Server(config).serve()


def main(args: list[str] | None = None) -> int:
    try:
        import anyio
        import mcp  # noqa: F401 - fail early with one clear line
    except ImportError as exc:
        print(f'[{names.MCP_SERVER_NODE}] error: the MCP server needs the mcp package '
              f'(pip install mcp==2.3.0): {exc}', file=sys.stderr)
        return 1
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = None
    executor = None
    spinner = None
    previous = signal.getsignal(signal.SIGTERM)
    try:
        try:
            node = McpServerNode()
        except (ValueError, TypeError, LookupError, ParameterException) as exc:
            print(f'[{names.MCP_SERVER_NODE}] error: {exc}', file=sys.stderr)
            return 1
        executor = SingleThreadedExecutor()
        executor.add_node(node)

        def spin() -> None:
            try:
                executor.spin()
            except (ExternalShutdownException, KeyboardInterrupt):
                pass

        spinner = threading.Thread(target=spin, name='ros', daemon=True)
        spinner.start()

        def on_sigterm(*_: Any) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, on_sigterm)
        anyio.run(serve, node, backend='asyncio')
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
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
