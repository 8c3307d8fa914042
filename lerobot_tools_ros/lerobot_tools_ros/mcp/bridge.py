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
The MCP server's ROS side seen from its asyncio loop: tool list, calls, approvals, resources.

``RosBridge`` lives on the loop the MCP SDK runs on; the rclpy node (``McpServerNode``) spins on
its own thread and hands everything over with ``post`` (``call_soon_threadsafe``), so nothing
here blocks ROS or the other way round. The tool list comes from the dispatcher's latched
catalog message plus its live parameters (``allowed_tools``, ``tool.<name>.approval``); calls go
to its gated ``~/call``. Decisions are in the pure modules of ``lerobot_tools_ros.mcp``.
"""

import asyncio
from collections import deque
import json
import os
from typing import Any, Callable

from lerobot_tools_interfaces.srv import Approve, CallTool, CancelCalls
from lerobot_tools_ros import names
from lerobot_tools_ros.mcp import fleet, listing, sdk_adapter
from lerobot_tools_ros.mcp.presence import LEFT, Presence
from lerobot_tools_ros.untrusted import log_text
from rclpy.parameter import parameter_value_to_python
from rclpy.task import Future

# Seconds a first tools/list also waits for a discovered dispatcher's settings to be read.
READ_SETTINGS_S = 6.0
# Recent results kept for the results resource; approval requests kept open at most.
RECENT_RESULTS = 50
MAX_PENDING_APPROVALS = 1000
# Legacy-era connections told about list changes and logs (HTTP sessions are bounded by the
# SDK too; closed ones are forgotten as they close).
MAX_SESSIONS = 1000
# Seconds a seen dispatcher's latched catalog may take to arrive before we subscribe again.
CATALOG_WAIT_S = 2.0
# Seconds between cheap looks at the ROS graph (is the dispatcher there, which executors are):
# a robot that leaves or comes back, or a tool whose executor does, is announced within about
# ROBOT_GONE_AFTER_S + GRAPH_LOOK_S.
GRAPH_LOOK_S = 0.5
# Seconds a dispatcher must stay undiscovered before its robot is announced gone.
ROBOT_GONE_AFTER_S = 1.0
# Seconds a first tools/list waits, once the dispatcher is discovered, for the executors its
# catalog names (the robot's other processes are discovered at about the same time; one that
# is not found by then is listed as unavailable, and a list_changed follows when it comes).
EXECUTOR_WAIT_S = 4.0
# Seconds a parked 2026-era call is kept for its retry once its result is in.
PARKED_AFTER_RESULT_S = 60.0
# Bytes read from the end of the audit log for the audit resource.
AUDIT_TAIL_BYTES = 64 * 1024

URI_CATALOG = 'lerobot-tools://catalog'
URI_APPROVALS = 'lerobot-tools://approvals/pending'
URI_RESULTS = 'lerobot-tools://results/recent'
URI_AUDIT = 'lerobot-tools://audit/tail'
URI_STATUS = 'lerobot-tools://server/status'


class ActiveCall:
    """One MCP tools/call waiting for the dispatcher: where its events go."""

    __slots__ = ('call_id', 'name', 'events', 'stop', 'lost')

    def __init__(self, call_id: str, name: str) -> None:
        self.call_id = call_id
        self.name = name
        self.events: asyncio.Queue = asyncio.Queue()
        self.stop: asyncio.Event = asyncio.Event()  # the server is shutting down
        self.lost = False  # the robot left the graph while the call was out: no answer comes


class RosBridge:
    """Hands rclpy futures and callbacks over to the asyncio loop the MCP server runs on."""

    def __init__(self, node: Any, loop: asyncio.AbstractEventLoop,
                 started: float | None = None) -> None:
        """
        Follow the robot of ``node`` (a ``RobotLink``) on ``loop``.

        ``started``: when discovery_wait_s counts from (default now; a robot a fleet endpoint
        discovers later makes no list wait).
        """
        self.node = node
        self.loop = loop
        self.tools: list[listing.McpTool] = []
        self.loaded: listing.LoadedCatalog | None = None
        self.have_tools = asyncio.Event()
        self.dispatcher_seen = asyncio.Event()  # its parameter services were discovered once
        self.presence = Presence(ROBOT_GONE_AFTER_S)  # and whether they are there now
        self.changed = asyncio.Event()
        self.closing = asyncio.Event()
        self.active: dict[str, ActiveCall] = {}
        self.parked: dict[str, Any] = {}     # 2026-era calls awaiting an approval retry
        self.sessions: dict[int, Any] = {}   # legacy-era connections (list changes, logs)
        self.subscriptions: dict[int, set] = {}  # legacy connection -> resource URIs
        self.bus = None                      # SubscriptionBus of modern-era listeners
        self.cancels: list[Future] = []      # ~/cancel and ~/approve requests sent
        self.call_proven = False  # a :probe on ~/call was answered (see call_service_ready)
        self.served = False       # a tools/list was answered (changes must be announced)
        self.started = loop.time() if started is None else started
        self.warnings: dict[str, str] = {}   # current problems, by kind
        self.approvals: dict[str, dict] = {}  # call_id -> open approval request
        self.results: deque = deque(maxlen=RECENT_RESULTS)
        self.audit_log = ''
        self._told_empty = False
        self._seen_at: float | None = None  # when the dispatcher was seen without a catalog
        self._found_at: float | None = None  # when the dispatcher and its catalog were found
        self._bindings: tuple | None = None  # (bindings file, mtime, tools bound kind: read)
        self._listed_with: tuple | None = None  # (view, read-only, overwrite) of the last list
        # tool_server's record_observation output directory ('' unknown): observations served
        self.observation_dir = ''
        self.http_server: Any = None  # the SDK server, when serving Streamable HTTP
        node.bridge = self

    def post(self, function: Callable, *args: Any) -> None:
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

    # -- from the ROS thread (posted) ---------------------------------------------------------

    def on_catalog(self, text: str) -> None:
        try:
            self.loaded = listing.decode_catalog(text)
        except listing.CatalogMessageError as exc:
            self.warn('catalog', f'cannot read the dispatcher catalog: {exc}')
            return
        self.clear_warning('catalog')
        self.node.get_logger().debug(f'catalog of {log_text(self.loaded.source)} received')
        problems = list(self.loaded.problems)
        for entry in self.loaded.entries:
            problems += listing.declared_hints(entry)[1]
        if problems:
            more = f' (and {len(problems) - 5} more)' if len(problems) > 5 else ''
            self.warn('catalog_entries', 'catalog entries skipped or partly ignored: '
                      + '; '.join(problems[:5]) + more)
        else:
            self.clear_warning('catalog_entries')
        self.changed.set()
        self.resource_changed(URI_CATALOG)

    def on_approval(self, call_id: str, name: str, arguments: str, reason: str,
                    timeout_s: float) -> None:
        if timeout_s > 0:
            if len(self.approvals) >= MAX_PENDING_APPROVALS:
                self.approvals.pop(next(iter(self.approvals)))
            self.approvals[call_id] = {'call_id': call_id, 'name': name,
                                       'arguments': arguments, 'reason': reason,
                                       'timeout_s': timeout_s}
        else:
            self.approvals.pop(call_id, None)
        active = self.active.get(call_id)
        if active is not None:
            active.events.put_nowait(('approval', reason, timeout_s))
        self.resource_changed(URI_APPROVALS)

    def on_progress(self, call_id: str, stage: str, progress: float, detail: str) -> None:
        active = self.active.get(call_id)
        if active is not None:
            active.events.put_nowait(('progress', stage, progress, detail))

    def on_result(self, record: dict) -> None:
        self.results.append(record)
        self.resource_changed(URI_RESULTS)

    def settings_changed(self) -> None:
        self.changed.set()

    # -- warnings (also MCP log notifications) ----------------------------------------------

    def warn(self, kind: str, text: str) -> None:
        """Log a problem once (ROS log and MCP log notifications) until it is cleared."""
        if self.warnings.get(kind) == text:
            return
        self.warnings[kind] = text
        self.node.get_logger().warning(log_text(text, 1000))
        self.loop.create_task(self.broadcast_log('warning', text))

    def clear_warning(self, kind: str) -> None:
        self.warnings.pop(kind, None)

    async def broadcast_log(self, level: str, text: str) -> None:
        """Send a log notification to every legacy-era connection whose level lets it pass."""
        if not self.sessions:
            # Nobody to tell; and while the SDK is still being imported in another thread (the
            # start), importing it here too deadlocks on its circular imports.
            return
        import warnings
        from mcp.shared.exceptions import MCPDeprecationWarning
        for key, connection in list(self.sessions.items()):
            if not sdk_adapter.level_passes(level, connection.state.get('log_level', 'info')):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore', MCPDeprecationWarning)
                    await connection.log(level, text, logger='lerobot_tools_ros')
            except Exception:  # noqa: B902 - a closed connection: forget it
                self.forget(key)

    async def broadcast_one(self, connection: Any, text: str) -> None:
        """Send one warning log notification to one legacy-era connection."""
        import warnings
        from mcp.shared.exceptions import MCPDeprecationWarning
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', MCPDeprecationWarning)
            await connection.log('warning', text, logger='lerobot_tools_ros')

    # -- connections --------------------------------------------------------------------------

    def remember(self, ctx: Any) -> None:
        """Keep a legacy-era connection (told about changes) until it closes."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS
        connection = sdk_adapter.connection_of(ctx)
        if connection is None or connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # 2026-era: one connection per request; changes go on listen streams
        key = id(connection)
        if key in self.sessions:
            return
        while len(self.sessions) >= MAX_SESSIONS:
            self.forget(next(iter(self.sessions)))
        self.sessions[key] = connection
        connection.exit_stack.callback(self.forget, key)

    def forget(self, key: int) -> None:
        self.sessions.pop(key, None)
        self.subscriptions.pop(key, None)

    async def notify_list_changed(self) -> None:
        """Tell every client the tool list changed (legacy connections and listen streams)."""
        for key, connection in list(self.sessions.items()):
            try:
                await connection.send_tool_list_changed()
            except Exception:  # noqa: B902 - a closed connection: forget it
                self.forget(key)
        if self.bus is not None:
            from mcp.server.subscriptions import ToolsListChanged
            await self.bus.publish(ToolsListChanged())

    def public_uri(self, uri: str) -> str:
        """Return ``uri`` as clients name it: under its robot when serving a fleet."""
        label = getattr(self.node, 'label', '')
        return fleet.scoped_uri(label, uri) if label else uri

    def resource_changed(self, uri: str) -> None:
        """Tell subscribers a resource changed (fire and forget, on the loop)."""
        uri = self.public_uri(uri)
        if any(uri in uris for uris in self.subscriptions.values()) or self.bus is not None:
            self.loop.create_task(self._resource_updated(uri))

    async def _resource_updated(self, uri: str) -> None:
        for key, uris in list(self.subscriptions.items()):
            connection = self.sessions.get(key)
            if uri in uris and connection is not None:
                try:
                    await connection.send_resource_updated(uri)
                except Exception:  # noqa: B902 - a closed connection: forget it
                    self.forget(key)
        if self.bus is not None:
            from mcp.server.subscriptions import ResourceUpdated
            await self.bus.publish(ResourceUpdated(uri=uri))

    # -- tool list --------------------------------------------------------------------------

    def tool(self, name: str) -> listing.McpTool | None:
        return next((t for t in self.tools if t.name == name), None)

    async def refresh_forever(self) -> None:
        """
        Keep ``tools`` equal to what the dispatcher lets MCP clients call.

        The dispatcher's settings are read every ``refresh_s`` and at once when they change; in
        between, every ``GRAPH_LOOK_S`` a look at the ROS graph (no request) finds a robot that
        left or came back and executors that went or came, and refreshes then.
        """
        next_full = 0.0
        while not self.closing.is_set():
            if self.changed.is_set() or self.loop.time() >= next_full or self.graph_moved():
                self.changed.clear()
                try:
                    await self.refresh()
                    self.clear_warning('refresh')
                except (ValueError, TimeoutError, asyncio.TimeoutError) as exc:
                    self.warn('refresh', f'tool list not refreshed: {exc or type(exc).__name__}')
                except Exception as exc:  # noqa: B902 - a bug must not end the server: say it
                    self.warn('refresh', f'tool list not refreshed: {exc!r}')
                # Until the list is known, look again soon (clients are waiting).
                next_full = self.loop.time() + (
                    self.node.refresh_s if self.have_tools.is_set() else 0.1)
            pause = max(0.0, min(GRAPH_LOOK_S, next_full - self.loop.time()))
            try:
                await asyncio.wait_for(self.changed.wait(), pause)
            except asyncio.TimeoutError:
                pass

    def graph_moved(self) -> bool:
        """Return whether the graph disagrees with the list: robot or executors came or went."""
        seen = self.node.param_client.services_are_ready()
        if seen != self.presence.present:
            return True
        return seen and any(self.offered(t.executor) != t.available
                            for t in self.tools if t.executor)

    async def refresh(self) -> None:
        if not self.node.call_client.service_is_ready():
            self.call_proven = False  # gone: a dispatcher that comes back is proven again
        params = self.node.param_client
        change = self.presence.observe(params.services_are_ready(), self.loop.time())
        if not self.presence.present:
            if change == LEFT:
                await self.robot_left()
            return  # calls answer unavailable until the dispatcher is back
        if self.dispatcher_seen.is_set() and change is not None:
            self.node.get_logger().info(f'the dispatcher {self.node.dispatcher_fqn} is back')
        self.dispatcher_seen.set()
        if self.loaded is None:
            now = self.loop.time()
            if self._seen_at is None:
                self._seen_at = now
            elif now - self._seen_at > CATALOG_WAIT_S:
                self._seen_at = now
                self.warn('catalog', f'no catalog message from {self.node.dispatcher_fqn} '
                          f'within {CATALOG_WAIT_S:g} s of seeing it; subscribing again')
                self.node.resubscribe.trigger()
            return  # its catalog message has not arrived yet (it is latched: it will)
        # One round trip: the approval of every catalog tool, named from the catalog (a tool
        # whose parameters are not declared yet reads as unset: the default, auto).
        wanted = ['allowed_tools', 'audit_log'] + [
            f'tool.{name}.approval' for name in self.loaded.names]
        if self._found_at is None:
            self._found_at = self.loop.time()
        deadline = min(self.started + self.node.discovery_wait_s,
                       self._found_at + EXECUTOR_WAIT_S)
        if not self.have_tools.is_set() and self.loop.time() < deadline \
                and not self.executors_discovered():
            return  # a first list names no executor as missing that is only not found yet
        values, (bound_read, overwrite) = await asyncio.gather(  # one round trip's time
            self.get_parameters(self.node.param_client, wanted), self.tool_server_settings())
        self.audit_log = str(values.get('audit_log') or '')
        view = listing.view_from_parameters(values)
        read_only = set(self.node.read_only_tools) | bound_read
        self._listed_with = (view, read_only, overwrite)
        tools = listing.visible_tools(
            self.loaded, view, read_only=read_only, actuating=self.node.actuating_tools,
            available=self.offered, overwrite=overwrite)
        self.clear_warning('no_dispatcher')
        await self.publish(tools)

    def executors_discovered(self) -> bool:
        """Return whether every executor of the catalog, and tool_server's settings, are found."""
        executors = [e for e in (self.loaded.executors.values() if self.loaded else ()) if e]
        return all(self.offered(e) for e in executors) and (
            not executors or self.node.server_param_client.services_are_ready())

    async def robot_left(self) -> None:
        """
        List every tool as unavailable: the dispatcher is no longer discovered.

        Each call in flight ends with ``answer_lost`` (outcome unknown: it was sent, and may
        have run): its answer cannot come back over a link that is gone, and waiting for the
        call timeout would tell the caller nothing more. The robot's audit log keeps what it
        did.
        """
        self.call_proven = False
        for active in list(self.active.values()):
            if not self.parked.get(active.call_id):
                active.lost = True
                active.stop.set()
        self.warn('no_dispatcher', f'the dispatcher {self.node.dispatcher_fqn} is gone (not '
                  f'discovered for {ROBOT_GONE_AFTER_S:g} s): every tool is listed as '
                  'unavailable until it is back')
        if self.loaded is None or self._listed_with is None:
            return
        view, read_only, overwrite = self._listed_with
        await self.publish(listing.visible_tools(
            self.loaded, view, read_only=read_only, actuating=self.node.actuating_tools,
            overwrite=overwrite, gone=self.node.dispatcher_fqn))

    async def publish(self, tools: list) -> None:
        """Make ``tools`` the list; announce a change to the clients (list_changed, status)."""
        if tools == self.tools and self.have_tools.is_set():
            return
        self.tools = tools
        first = not self.have_tools.is_set()
        self.have_tools.set()
        shown = ', '.join(t.name + ('' if t.available else ' (unavailable)') for t in tools)
        if first:
            source = self.loaded.source if self.loaded is not None else ''
            self.node.get_logger().info(
                f'serving {len(tools)} tool(s) of {log_text(source)}: {shown}')
        else:
            self.node.get_logger().info(f'tool list changed: {shown}')
        self.resource_changed(URI_STATUS)
        if self.served or not first:
            await self.notify_list_changed()

    def offered(self, executor: str) -> bool:
        """Return whether a server offers ``executor`` (its CallTool service or RunTool action)."""
        count = getattr(self.node, 'count_services', None)
        try:
            if count is None:  # Humble: the graph names services with clients only too
                offered = {name for name, _ in self.node.get_service_names_and_types()}
                return executor in offered or f'{executor}/_action/send_goal' in offered
            return bool(count(executor) or count(f'{executor}/_action/send_goal'))
        except Exception:  # noqa: B902 - shutting down
            return True

    async def wait_for_first_list(self) -> None:
        """
        Right after start, wait (bounded by discovery_wait_s) until the tool list is known.

        A client that connects at launch would otherwise be told the robot has no tools.
        Later lists answer at once; a list that changes afterwards is announced.
        """
        if self.have_tools.is_set():
            return
        left = self.started + self.node.discovery_wait_s - self.loop.time()
        if left > 0:
            try:
                await asyncio.wait_for(self.dispatcher_seen.wait(), left)
                left = self.started + self.node.discovery_wait_s - self.loop.time()
                await asyncio.wait_for(self.have_tools.wait(), max(left, READ_SETTINGS_S))
                return
            except asyncio.TimeoutError:
                pass
        if not self._told_empty:
            self._told_empty = True
            why = ('its settings could not be read' if self.dispatcher_seen.is_set() else
                   'it was not discovered')
            self.warn('no_dispatcher',
                      f'listing no tools: no dispatcher at {self.node.dispatcher_fqn} within '
                      f'discovery_wait_s {self.node.discovery_wait_s:g} s ({why}; is it '
                      'running, in this ROS domain and namespace?); clients are told when the '
                      'list changes')

    async def tool_server_settings(self) -> tuple[frozenset[str], dict[str, bool] | None]:
        """
        Read what tool_server says of its tools: read-only bindings, which tools replace files.

        Returns the tools bound with ``kind: read`` and, per file-writing tool, its
        ``tool.<name>.overwrite`` (None: tool_server is not found, no claim is made). Also keeps
        ``observation_dir`` (record_observation's output directory) up to date.
        """
        params = self.node.server_param_client
        if not params.services_are_ready():
            return frozenset(), None  # seen on a later refresh; clients are told of the change
        writers = listing.OVERWRITING_TOOLS
        wanted = ['bindings_file', 'tool.record_observation.output_dir'] + [
            f'tool.{name}.overwrite' for name in writers]
        values = await self.get_parameters(params, wanted)
        self.observation_dir = str(values.get('tool.record_observation.output_dir') or '')
        overwrite = {name: values[f'tool.{name}.overwrite'] for name in writers
                     if isinstance(values.get(f'tool.{name}.overwrite'), bool)}
        return await self.bound_read_tools(values.get('bindings_file')), overwrite

    async def bound_read_tools(self, path: Any) -> frozenset[str]:
        """Tools the tool_server binds with ``kind: read`` (its bindings file ``path``)."""
        if not path or not isinstance(path, str):
            return frozenset()
        path = os.path.expanduser(path)
        cached = self._bindings
        if cached is not None and cached[0] == path and cached[1] == _mtime(path):
            return cached[2]
        try:
            with open(path, encoding='utf-8') as handle:
                tools = listing.read_bindings(handle.read(1 << 20))
        except (OSError, UnicodeDecodeError) as exc:
            self.warn('bindings', f'cannot read the bindings file {path}: {exc}')
            tools = frozenset()
        self._bindings = (path, _mtime(path), tools)
        return tools

    async def get_parameters(self, params: Any, wanted: list[str]) -> dict[str, Any]:
        """
        Read the parameters ``wanted`` through the parameter client ``params``; unset: ``None``.

        A parameter declared without a value (e.g. ``allowed_tools`` left empty) makes
        ``get_parameters`` answer nothing for the whole request, so when the batch comes back
        short, each one is asked for on its own.
        """
        got = await asyncio.wait_for(self.wait(params.get_parameters(wanted)), 5.0)
        if len(got.values) == len(wanted):
            return {name: parameter_value_to_python(value)
                    for name, value in zip(wanted, got.values)}
        answers = await asyncio.wait_for(asyncio.gather(
            *(self.wait(params.get_parameters([name])) for name in wanted)), 5.0)
        return {name: (parameter_value_to_python(answer.values[0]) if answer.values else None)
                for name, answer in zip(wanted, answers)}

    # -- calls ------------------------------------------------------------------------------

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

    def submit(self, request: Any) -> asyncio.Future:
        return self.wait(self.node.call_client.call_async(request))

    async def drain(self, timeout: float) -> None:
        """Wait (bounded) until the dispatcher answered the cancels sent, before exiting."""
        deadline = self.loop.time() + timeout
        while any(not f.done() for f in self.cancels) and self.loop.time() < deadline:
            await asyncio.sleep(0.02)

    def cancel(self, call_id: str, why: str) -> None:
        """Ask the dispatcher to cancel ``call_id`` (fire and forget; it answers the call)."""
        if self.node.cancel_client.service_is_ready():
            future = self.node.cancel_client.call_async(CancelCalls.Request(call_id=call_id))
            self.cancels.append(future)
            self.node.get_logger().info(f'{why}: asked the dispatcher to cancel {call_id}')
        else:
            self.node.get_logger().warning(
                f'{why} but the dispatcher has no ~/cancel; call {call_id} runs to its end (its '
                'result is still published once)')

    async def decide(self, call_id: str, approve: bool, decided_by: str) -> str:
        """Send an approval decision to the dispatcher's ``~/approve``; return its answer."""
        client = self.node.approve_client
        if not client.service_is_ready():
            return 'the dispatcher has no ~/approve'
        future = client.call_async(Approve.Request(call_id=call_id, approve=approve,
                                                   note=decided_by))
        self.cancels.append(future)
        answer = await asyncio.wait_for(self.wait(future), 5.0)
        if answer.success:
            self.node.get_logger().info(
                f'call {call_id} {"approved" if approve else "denied"} by '
                f'{log_text(decided_by)} (MCP elicitation): {log_text(answer.message)}')
        else:  # too late (decided, timed out or ended): nothing was approved or denied
            self.node.get_logger().info(
                f'call {call_id}: the {"approval" if approve else "denial"} by '
                f'{log_text(decided_by)} (MCP elicitation) came too late and was not applied: '
                f'{log_text(answer.message)}')
        return answer.message

    def park(self, call_id: str, parked: Any) -> None:
        """Keep a call until its client retries with the approval (bounded by its result)."""
        self.parked[call_id] = parked

        def forget(_: Any) -> None:  # its result came: a retry still gets it for a while
            self.loop.call_later(PARKED_AFTER_RESULT_S, self._unpark, call_id, parked)
        parked.pending.add_done_callback(forget)

    def _unpark(self, call_id: str, parked: Any) -> None:
        if self.parked.get(call_id) is parked:
            del self.parked[call_id]
            self.active.pop(call_id, None)

    def shut_down(self) -> None:
        """Stop every call in flight (each still gets its result) and refuse new ones."""
        self.closing.set()
        for active in list(self.active.values()):
            active.stop.set()
        for call_id, parked in list(self.parked.items()):  # nobody follows them any more
            if not parked.pending.done():
                self.cancel(call_id, 'the MCP server is stopping')
        self.parked.clear()

    # -- resources ------------------------------------------------------------------------

    def status(self) -> dict:
        return {
            'dispatcher': self.node.dispatcher_fqn,
            'dispatcher_seen': self.presence.present,
            'catalog_source': self.loaded.source if self.loaded else None,
            'tools': [t.name for t in self.tools],
            'unavailable_tools': [t.name for t in self.tools if not t.available],
            'legacy_connections': len(self.sessions),
            'http_sessions': (None if self.http_server is None else
                              len(sdk_adapter.http_sessions(self.http_server))),
            'calls_in_flight': len(self.active),
            'pending_approvals': len(self.approvals),
            'warnings': list(self.warnings.values()),
        }

    def audit_tail(self, lines: int = 50) -> str:
        """Return the last ``lines`` lines of the dispatcher's audit log ('' when it has none)."""
        path = self.audit_log
        if not path:
            return ''
        try:
            with open(os.path.expanduser(path), 'rb') as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - AUDIT_TAIL_BYTES))
                data = handle.read(AUDIT_TAIL_BYTES)
        except OSError as exc:
            return json.dumps({'error': f'cannot read the audit log {path}: {exc.strerror}'})
        text = data.decode('utf-8', 'replace')
        if size > AUDIT_TAIL_BYTES:
            text = text.partition('\n')[2]  # drop the partial first line
        return '\n'.join(text.splitlines()[-lines:])


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except (OSError, ValueError):
        return None
