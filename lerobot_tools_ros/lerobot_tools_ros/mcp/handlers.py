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
The MCP server's request handlers on the SDK's low-level ``Server``: tools, resources, prompts.

Every tools/call goes to the dispatcher's gated ``~/call`` (source ``mcp``); nothing here reaches
a robot any other way. While a call waits for an operator's approval the client is told (a
progress message) and, when it can answer an elicitation, asked: its user's answer is sent to
``~/approve`` like an operator's, audited with who decided. A call whose client cancels, goes
away or times out is cancelled on the dispatcher; at shutdown every call in flight is
cancelled and still answered.
"""

import asyncio
import json
from typing import Any
import uuid
import warnings

from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.mcp import bridge as mcp_bridge
from lerobot_tools_ros.mcp import (
    fleet, listing, observations, results as mcp_results, sdk_adapter)
from lerobot_tools_ros.mcp.bridge import ActiveCall, RosBridge
from lerobot_tools_ros.mcp.progress import progress_value, ProgressTrack
from lerobot_tools_ros.untrusted import ros_string

IMAGE_TOOLS = ('record_observation',)
# Seconds a call stopped at shutdown waits for the dispatcher's "cancelled" answer.
STOP_ANSWER_S = 1.5
# How often a 2025-era HTTP call looks whether its client is still connected.
DISCONNECT_POLL_S = 0.25
APPROVAL_SCHEMA = {
    'type': 'object',
    'properties': {'approve': {
        'type': 'boolean', 'title': 'Approve',
        'description': 'true: let the robot run this call; false: refuse it.'}},
    'required': ['approve'],
}
JSON = 'application/json'
JSON_LINES = 'application/x-ndjson'
# (uri, name, description, MIME type): listed and read back with the same type.
RESOURCES = (
    (mcp_bridge.URI_CATALOG, 'catalog', 'The tool catalog the dispatcher runs (JSON).', JSON),
    (mcp_bridge.URI_APPROVALS, 'pending approvals',
     'Calls waiting for an operator decision (JSON).', JSON),
    (mcp_bridge.URI_RESULTS, 'recent results',
     f'The last {mcp_bridge.RECENT_RESULTS} call results of the dispatcher (JSON).', JSON),
    (mcp_bridge.URI_AUDIT, 'audit tail', "The end of the dispatcher's audit log (JSON lines).",
     JSON_LINES),
    (mcp_bridge.URI_STATUS, 'server status', 'What this MCP server sees (JSON).', JSON),
)
PROMPTS = {
    'describe_scene': ('Describe what the robot sees', [
        ('camera', 'Camera to look through (default: every camera).', False)]),
    'speak_to_user': ('Say something to the people near the robot', [
        ('message', 'What to say.', True)]),
    'explain_tool': ('Explain a robot tool before using it', [
        ('tool', 'Name of the tool.', True)]),
}


def _text(text: str):
    import mcp_types as types
    return types.TextContent(type='text', text=text)


def failed(code: str, message: str, outcome: str = errors.NOT_RUN):
    import mcp_types as types
    return types.CallToolResult(
        content=[_text(mcp_results.error_text(code, message)),
                 _text(mcp_results.outcome_line(outcome))],
        structured_content=mcp_results.with_outcome(None, outcome, code), is_error=True)


def _client_name(ctx: Any) -> str:
    params = ctx.session.client_params
    info = getattr(params, 'client_info', None)
    return f'{info.name} {info.version}'.strip() if info is not None else 'an MCP client'


def _elicits(ctx: Any) -> bool:
    """Return whether the client declared it answers (form) elicitations."""
    import mcp_types as types
    return ctx.session.check_client_capability(
        types.ClientCapabilities(elicitation=types.ElicitationCapability()))


def _is_modern(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    return ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS


def _can_elicit(ctx: Any) -> bool:
    """2025 era: the server sends elicitation/create while the call waits."""
    return not _is_modern(ctx) and ctx.session.can_send_request and _elicits(ctx)


def _approval_message(name: str, reason: str, arguments: str, robot: str = '') -> str:
    """Say what needs approval; a fleet endpoint names the robot (and its tool as listed)."""
    if robot:
        return (f'Robot {robot!r}: its tool {fleet.scoped_name(robot, name) or name!r} needs '
                f'approval before it runs ({reason}). Arguments: {arguments}. Approve it?')
    return (f'The robot tool {name!r} needs approval before it runs ({reason}). Arguments: '
            f'{arguments}. Approve it?')


def _robot(bridge: RosBridge) -> str:
    """Return the robot label of ``bridge`` ('' when serving a single robot)."""
    return getattr(bridge.node, 'label', '')


def _decision(answer: Any) -> bool | None:
    """Return approve / deny from an elicitation answer; None: no choice made (dismissed)."""
    action = getattr(answer, 'action', None)
    content = getattr(answer, 'content', None)
    if action == 'accept' and isinstance(content, dict) and isinstance(
            content.get('approve'), bool):
        return content['approve']
    if action == 'decline':
        return False
    return None


class Parked:
    """A 2026-era call that returned ``input_required`` (approval), awaiting the retry."""

    __slots__ = ('active', 'pending', 'runner')

    def __init__(self, active: ActiveCall, pending: asyncio.Future, runner: Any) -> None:
        self.active = active
        self.pending = pending
        self.runner = runner


async def send_warnings(bridge: RosBridge, ctx: Any) -> None:
    """On a 2026-era request that opted in to log messages, send the current problems."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS or not bridge.warnings:
        return
    from mcp.shared.exceptions import MCPDeprecationWarning
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', MCPDeprecationWarning)
        for text in list(bridge.warnings.values()):
            await ctx.session.send_log_message('warning', text, logger='lerobot_tools_ros')


class CallRunner:
    """One tools/call: submitted to ``~/call``, its events relayed, its end decided."""

    def __init__(self, bridge: RosBridge, ctx: Any, active: ActiveCall, tool: Any) -> None:
        from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
        self.bridge = bridge
        self.ctx = ctx
        self.active = active
        self.tool = tool
        self.wants_progress = progress_token_from_params(ctx.params) is not None
        self.track = ProgressTrack()
        self.elicitation: asyncio.Task | None = None

    async def report(self, fraction: float | None, message: str) -> None:
        if not self.wants_progress:
            return
        step = self.track.step(fraction)
        if step is not None:
            await self.ctx.session.report_progress(step[0], step[1], message)

    async def relay_events(self) -> None:
        while True:
            event = await self.active.events.get()
            if event[0] == 'progress':
                _, stage, progress, detail = event
                await self.report(progress_value(progress),
                                  f'{stage}: {detail}' if detail else stage)
            elif event[0] == 'approval':
                _, reason, timeout_s = event
                if timeout_s > 0:
                    await self.report(None, f'waiting for approval ({reason}); an operator '
                                      f'decides within {timeout_s:g} s')
                    if self.elicitation is None and _can_elicit(self.ctx):
                        self.elicitation = asyncio.ensure_future(self.elicit(reason))
                    elif self.park_for is None and not self.asked and _is_modern(self.ctx) \
                            and _elicits(self.ctx):
                        self.park_for = reason  # 2026 era: ask with an input_required result
                        self.asked = True
                        self.active.stop.set()
                elif self.elicitation is not None:
                    self.elicitation.cancel()  # decided elsewhere (or timed out)

    async def elicit(self, reason: str) -> None:
        """Ask the client's user to approve or deny; send the answer to ``~/approve``."""
        message = _approval_message(self.active.name, reason, self.arguments_shown,
                                    _robot(self.bridge))
        try:
            answer = await self.ctx.session.elicit_form(message, APPROVAL_SCHEMA,
                                                        related_request_id=self.ctx.request_id)
        except Exception as exc:  # noqa: B902 - the client refused or failed: operator decides
            self.bridge.node.get_logger().info(
                f'elicitation for {self.active.call_id} got no answer ({exc!r}); the operator '
                'decides')
            return
        await self.apply(answer)

    async def apply(self, answer: Any) -> None:
        """Send the user's approve / deny to ``~/approve`` (a dismissed form decides nothing)."""
        decision = _decision(answer)
        if decision is not None:
            await self.bridge.decide(self.active.call_id, decision,
                                     f'MCP elicitation: the user of {_client_name(self.ctx)}')

    arguments_shown = '{}'
    park_for: str | None = None  # 2026 era: the approval reason to ask the client about
    asked = False                # an input_required was returned once for this call

    async def watch_disconnect(self) -> None:
        """2025-era HTTP: a client whose stream closed can never get the result: cancel it."""
        request = self.ctx.request
        while not await request.is_disconnected():
            await asyncio.sleep(DISCONNECT_POLL_S)
        self.bridge.cancel(self.active.call_id, 'MCP client disconnected mid-call')
        self.active.stop.set()

    async def run(self, request: Any) -> Any:
        """Submit the call and return the dispatcher's response (None: no answer in time)."""
        return await self.follow(self.bridge.submit(request))

    async def follow(self, pending: asyncio.Future) -> Any:
        """Relay the call's events until its response; None: none in time, or parked."""
        import anyio
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS
        self.pending = pending
        stop = asyncio.ensure_future(self.active.stop.wait())
        legacy_http = (self.ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS
                       and hasattr(self.ctx.request, 'is_disconnected'))
        response = None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self.relay_events)
                if legacy_http:
                    group.start_soon(self.watch_disconnect)
                with anyio.move_on_after(self.bridge.node.call_timeout_s):
                    await asyncio.wait([pending, stop], return_when=asyncio.FIRST_COMPLETED)
                if pending.done():
                    response = pending.result()
                elif self.park_for is not None:
                    pass  # 2026 era, approval needed: the handler returns input_required
                elif self.active.lost:
                    pass  # the robot left: no answer can come back (answer_lost)
                elif stop.done():
                    # Shutting down or the client left: the dispatcher answers "cancelled".
                    self.bridge.cancel(self.active.call_id, 'MCP call stopped')
                    with anyio.move_on_after(STOP_ANSWER_S):
                        response = await pending
                group.cancel_scope.cancel()
        finally:
            stop.cancel()
            if self.elicitation is not None:
                self.elicitation.cancel()
        return response


class ToolHandlers:
    """tools/list and tools/call: the catalog the dispatcher runs, each call through ``~/call``."""

    def __init__(self, bridge: RosBridge) -> None:
        self.bridge = bridge
        self.node = bridge.node

    def as_tool(self, tool: listing.McpTool) -> Any:
        import mcp_types as types
        hints = dict(tool.annotations)
        return types.Tool(
            name=tool.name, title=tool.title, description=tool.description,
            input_schema=tool.input_schema,
            output_schema=mcp_results.output_schema(tool.name, _entry(self.bridge, tool.name)),
            annotations=types.ToolAnnotations(
                title=hints.get('title'), read_only_hint=hints.get('readOnlyHint'),
                destructive_hint=hints.get('destructiveHint'),
                idempotent_hint=hints.get('idempotentHint'),
                open_world_hint=hints.get('openWorldHint')))

    async def list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        bridge = self.bridge
        bridge.remember(ctx)
        await bridge.wait_for_first_list()
        bridge.served = True
        await send_warnings(bridge, ctx)
        return types.ListToolsResult(tools=[self.as_tool(tool) for tool in bridge.tools])

    def input_schema(self, name: str) -> Any:
        tool = self.bridge.tool(name)
        return tool.input_schema if tool is not None else None

    async def call_tool(self, ctx: Any, params: Any) -> Any:
        bridge, node = self.bridge, self.node
        bridge.remember(ctx)
        if bridge.closing.is_set():
            return failed(errors.UNAVAILABLE, 'the MCP server is shutting down')
        name = params.name
        await bridge.wait_for_first_list()  # a first call may come before any tools/list
        tool = bridge.tool(name)
        try:
            given = listing.drop_null_optionals(params.arguments, tool.schema) if tool \
                else params.arguments
            arguments = mcp_results.encode_arguments(given, node.max_argument_bytes)
        except (ValueError, RecursionError) as exc:
            return failed(errors.INVALID_ARGUMENTS, str(exc))
        if not await bridge.call_service_ready(5.0):
            await send_warnings(bridge, ctx)
            return failed(errors.UNAVAILABLE, f"the dispatcher's ~/call ({node.dispatcher_fqn}/"
                          f'{names.DISPATCHER_CALL}) is not available; is the dispatcher running?')
        if params.request_state is not None:
            return await self.resume(ctx, params)
        call_id = f'mcp-{uuid.uuid4().hex[:16]}'
        active = bridge.active[call_id] = ActiveCall(call_id, name)
        runner = CallRunner(bridge, ctx, active, tool)
        runner.arguments_shown = ros_string(arguments[:300])
        request = CallTool.Request(call_id=call_id, name=ros_string(name),
                                   arguments=ros_string(arguments), source='mcp')
        return await self.finish(runner, runner.run(request))

    async def resume(self, ctx: Any, params: Any) -> Any:
        """2026 era: the retry of a call that asked for approval, carrying the answer."""
        parked = self.bridge.parked.pop(params.request_state, None)
        if parked is None or parked.active.name != params.name:
            return failed(errors.INVALID_ARGUMENTS, 'this request_state names no call waiting '
                          'for approval (it ended, or it was not issued by this server)')
        runner = parked.runner
        runner.ctx = ctx
        runner.park_for = None
        parked.active.stop.clear()
        answer = (params.input_responses or {}).get('approval')
        await runner.apply(answer)
        return await self.finish(runner, runner.follow(parked.pending))

    async def finish(self, runner: CallRunner, running: Any) -> Any:
        """Await a call's response (or park it) and turn it into the MCP result."""
        import anyio
        import mcp_types as types
        bridge = self.bridge
        active = runner.active
        call_id = active.call_id
        name = active.name
        parked = False
        try:
            response = await running
            if response is None and runner.park_for is not None:
                parked = True
                bridge.park(call_id, Parked(active, runner.pending, runner))
                return types.InputRequiredResult(
                    input_requests={'approval': types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=_approval_message(name, runner.park_for,
                                                      runner.arguments_shown, _robot(bridge)),
                            requested_schema=APPROVAL_SCHEMA))},
                    request_state=call_id)
        except anyio.get_cancelled_exc_class():
            bridge.cancel(call_id, 'MCP client cancelled the call')  # or went away
            raise
        finally:
            if not parked:
                bridge.active.pop(call_id, None)
        if response is None:
            if active.lost:
                return failed(errors.ANSWER_LOST, f'{bridge.node.dispatcher_fqn} left the ROS '
                              f'graph (its link or process is gone) while call {call_id} was '
                              'out: the call was sent and may have run; its outcome is '
                              "unknown (the robot's audit log records what it did)",
                              errors.UNKNOWN)
            if active.stop.is_set():
                return failed(errors.CANCELLED, f'call {call_id} was stopped (the MCP server is '
                              'shutting down or the client left); asked the dispatcher to '
                              'cancel it', errors.UNKNOWN)
            bridge.cancel(call_id, 'no answer in time')
            return failed(errors.TIMEOUT, f'no answer from the dispatcher within '
                          f'{self.node.call_timeout_s:g} s; asked it to cancel call {call_id}',
                          errors.UNKNOWN)
        code = mcp_results.result_code(response.success, response.error_code)
        outcome = errors.answered_outcome(code, response.outcome)
        if code:
            return failed(code, f'{response.error_message} (call {call_id})', outcome)
        return self.result_of(name, response.content, runner.tool, outcome)

    def result_of(self, name: str, content: str, tool: Any, outcome: str = errors.RAN) -> Any:
        import mcp_types as types
        items: list = [_text(content), _text(mcp_results.outcome_line(outcome))]
        structured = None
        if tool is not None and mcp_results.output_schema(name, _entry(self.bridge, name)):
            structured = mcp_results.structured_content(content)
        structured = mcp_results.with_outcome(structured, outcome)
        if name in IMAGE_TOOLS:
            images, notes = mcp_results.images_in_result(content, self.node.max_image_bytes)
            items += [types.ImageContent(type='image', data=_b64(image.data),
                                         mime_type=image.mime_type) for image in images]
            items += [_text(note) for note in notes]
            # Links under this server's own scheme (resources/read serves them); a file outside
            # record_observation's output directory, or on another host, gets no link.
            for path in mcp_results.saved_files(mcp_results.structured_content(content)):
                uri = observations.uri_for(path, self.bridge.observation_dir)
                if uri is not None:
                    items.append(types.ResourceLink(
                        type='resource_link', uri=uri, name=path.rsplit('/', 1)[-1],
                        mime_type=observations.mime_type(path)))
        return types.CallToolResult(content=items, structured_content=structured,
                                    is_error=False)


class ResourceHandlers:
    """resources/*: the catalog, pending approvals, recent results, the audit tail, status."""

    def __init__(self, bridge: RosBridge) -> None:
        self.bridge = bridge

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        self.bridge.remember(ctx)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, description=description, mime_type=mime)
            for uri, name, description, mime in RESOURCES])

    async def list_templates(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            uri_template=observations.TEMPLATE, name='observation',
            description='An image (or its JSON sidecar) record_observation saved, by its path '
                        "in record_observation's output directory (as its result links it).")])

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        bridge = self.bridge
        bridge.remember(ctx)
        uri = str(params.uri)
        if uri == mcp_bridge.URI_CATALOG:
            loaded = bridge.loaded
            data: Any = None if loaded is None else {
                'source': loaded.source, 'tools': list(loaded.entries),
                'problems': list(loaded.problems)}
        elif uri == mcp_bridge.URI_APPROVALS:
            data = list(bridge.approvals.values())
        elif uri == mcp_bridge.URI_RESULTS:
            data = list(bridge.results)
        elif uri == mcp_bridge.URI_STATUS:
            data = bridge.status()
        elif uri == mcp_bridge.URI_AUDIT:
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=uri, mime_type=JSON_LINES, text=bridge.audit_tail())])
        elif uri.startswith(observations.PREFIX):
            return self.read_observation(uri)
        else:
            from mcp.shared.exceptions import MCPError
            raise MCPError(code=-32002, message=f'unknown resource {uri[:200]}')
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type=JSON, text=json.dumps(data, ensure_ascii=False))])

    def read_observation(self, uri: str) -> Any:
        """Read a saved observation (only under record_observation's output directory)."""
        from mcp.shared.exceptions import MCPError
        import mcp_types as types
        try:
            path = observations.path_for(uri, self.bridge.observation_dir)
            with open(path, 'rb') as handle:
                data = handle.read(self.bridge.node.max_image_bytes + 1)
        except (observations.NotAnObservation, OSError) as exc:
            raise MCPError(code=-32002, message=str(exc)) from None
        if len(data) > self.bridge.node.max_image_bytes:
            raise MCPError(code=-32002, message=f'{uri[:200]} is larger than max_image_bytes '
                           f'({self.bridge.node.max_image_bytes})')
        mime = observations.mime_type(path)
        if mime == JSON:
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=uri, mime_type=mime, text=data.decode('utf-8', 'replace'))])
        return types.ReadResourceResult(contents=[types.BlobResourceContents(
            uri=uri, mime_type=mime, blob=_b64(data))])

    async def subscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        bridge = self.bridge
        bridge.remember(ctx)
        connection = sdk_adapter.connection_of(ctx)
        if connection is not None and id(connection) in bridge.sessions:
            bridge.subscriptions.setdefault(id(connection), set()).add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        connection = sdk_adapter.connection_of(ctx)
        if connection is not None:
            self.bridge.subscriptions.get(id(connection), set()).discard(str(params.uri))
        return types.EmptyResult()

    async def set_level(self, ctx: Any, params: Any) -> Any:
        """logging/setLevel (2025 era): this session's level; the current problems at once."""
        import mcp_types as types
        bridge = self.bridge
        bridge.remember(ctx)
        connection = sdk_adapter.connection_of(ctx)
        if connection is not None:
            connection.state['log_level'] = params.level
            for text in list(bridge.warnings.values()):  # what is wrong now, at once
                if sdk_adapter.level_passes('warning', params.level):
                    await bridge.broadcast_one(connection, text)
        return types.EmptyResult()


class PromptHandlers:
    """prompts/* and completion: ready-made requests an agent's user can pick."""

    def __init__(self, bridge: RosBridge) -> None:
        self.bridge = bridge

    async def list_prompts(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=name, description=description, arguments=[
                types.PromptArgument(name=arg, description=text, required=required)
                for arg, text, required in arguments])
            for name, (description, arguments) in PROMPTS.items()])

    async def get_prompt(self, ctx: Any, params: Any) -> Any:
        from mcp.shared.exceptions import MCPError
        import mcp_types as types
        arguments = params.arguments or {}
        if params.name not in PROMPTS:
            raise MCPError(code=-32602, message=f'unknown prompt {params.name[:100]!r}; '
                           f'prompts: {", ".join(PROMPTS)}')
        for arg, _, required in PROMPTS[params.name][1]:
            if required and not str(arguments.get(arg, '')).strip():
                raise MCPError(code=-32602, message=f'prompt {params.name} needs the '
                               f'argument {arg!r}')
        await self.bridge.wait_for_first_list()  # a session's first request: the robot's tools
        text = self.prompt_text(params.name, arguments)
        return types.GetPromptResult(
            description=PROMPTS[params.name][0],
            messages=[types.PromptMessage(role='user', content=_text(text))])

    def prompt_text(self, name: str, arguments: dict) -> str:
        if name == 'describe_scene':
            camera = str(arguments.get('camera') or '').strip()
            where = f'camera {camera!r}' if camera else 'every camera'
            return ('Call the record_observation tool with label "scene" and '
                    + (f'camera "{camera}"' if camera else 'no camera (all cameras)')
                    + f', then describe in a few sentences what the robot sees through {where}:'
                    ' objects, people, and anything that looks unsafe.')
        if name == 'speak_to_user':
            return ('Use the say tool to tell the people near the robot, in one short spoken '
                    f'sentence: {arguments.get("message", "")}')
        bridge = self.bridge
        tool = bridge.tool(str(arguments.get('tool', '')))
        if tool is None:
            return (f'The robot has no tool {str(arguments.get("tool"))[:100]!r} right now; '
                    f'its tools are: {", ".join(t.name for t in bridge.tools) or "none"}.')
        description = tool.description.rstrip().rstrip('.')
        return (f'Explain what the robot tool {tool.name!r} does and what each argument means, '
                f'before using it. Description: {description}. Argument schema: '
                f'{json.dumps(tool.schema)}. Hints: {json.dumps(dict(tool.annotations))}.')

    async def complete(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        ref = params.ref
        argument = params.argument
        values: list[str] = []
        await self.bridge.wait_for_first_list()  # a session's first request: the robot's tools
        if getattr(ref, 'type', '') == 'ref/prompt':
            if argument.name == 'camera':
                values = list(self.bridge.loaded.cameras) if self.bridge.loaded else []
            elif argument.name == 'tool':
                values = [t.name for t in self.bridge.tools]
        prefix = argument.value or ''
        matches = [v for v in values if v.startswith(prefix)][:100]
        return types.CompleteResult(completion=types.Completion(
            values=matches, total=len(matches), has_more=False))


def new_server(title: str, instructions: str, **handlers: Any) -> Any:
    """
    Return the MCP low-level ``Server`` of this package with `handlers` (its ``on_*`` hooks).

    Shared by the single-robot and the fleet endpoint: the same name and version, and
    initialization options that announce tool list changes (the list follows the robots).
    """
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.shared.exceptions import MCPDeprecationWarning

    class _Server(Server):
        def create_initialization_options(self, notification_options=None, *args, **kwargs):
            return super().create_initialization_options(
                notification_options or NotificationOptions(
                    tools_changed=True, resources_changed=False), *args, **kwargs)

    with warnings.catch_warnings():
        warnings.simplefilter('ignore', MCPDeprecationWarning)  # logging: 2025-era clients
        return _Server('lerobot_tools_ros', version=package_version(), title=title,
                       instructions=instructions, **handlers)


def build_server(bridge: RosBridge) -> Any:
    """Build the MCP low-level ``Server`` with every handler over ``bridge``."""
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

    bridge.bus = InMemorySubscriptionBus()
    tools, resources, prompts = (
        ToolHandlers(bridge), ResourceHandlers(bridge), PromptHandlers(bridge))
    return new_server(
        'Robot tools (lerobot_tools_ros)',
        'Tools of a robot running lerobot_tools_ros. Every call passes the same gates as '
        "the robot policy's own calls (validation, pause, allowlist, operator approval, "
        'rate limits); an error result starts with its error code (e.g. "paused: ..."). '
        'A call that needs approval reports "waiting for approval" and may ask you.',
        on_list_tools=tools.list_tools, on_call_tool=tools.call_tool,
        get_tool_input_schema=tools.input_schema,
        on_list_resources=resources.list_resources,
        on_list_resource_templates=resources.list_templates,
        on_read_resource=resources.read_resource,
        on_subscribe_resource=resources.subscribe,
        on_unsubscribe_resource=resources.unsubscribe,
        on_set_logging_level=resources.set_level,
        on_list_prompts=prompts.list_prompts, on_get_prompt=prompts.get_prompt,
        on_completion=prompts.complete,
        on_subscriptions_listen=ListenHandler(bridge.bus))


def _entry(bridge: RosBridge, name: str) -> dict:
    loaded = bridge.loaded
    if loaded is None:
        return {}
    return next((e for e in loaded.entries if e['function']['name'] == name), {})


def _b64(data: bytes) -> str:
    import base64
    return base64.b64encode(data).decode('ascii')


def package_version() -> str:
    try:
        from importlib.metadata import version
        return version('lerobot_tools_ros')
    except Exception:  # noqa: B902 - not installed as a distribution (source tree)
        return '0.1.0'
