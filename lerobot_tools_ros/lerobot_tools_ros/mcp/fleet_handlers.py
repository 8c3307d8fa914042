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
One MCP endpoint for a fleet: every robot's tools and resources, each under its robot's name.

Each robot keeps its own ``RosBridge`` (its dispatcher, presence, calls, approvals) and its own
single-robot handlers; this module only routes. ``tools/list`` joins the lists of the robots
that are discovered now, each tool named ``<robot>.<tool>`` (see ``fleet``) with the
description, annotations and output schema its robot's catalog gives; a robot that leaves takes
its tools out of the list and one that comes back brings them in (``list_changed`` either way).
``tools/call`` goes to the named robot's dispatcher, through its gates: a pause, an allowlist or
an approval is that robot's. Resources are per robot under ``lerobot-tools://robots/<robot>/``.
Prompts and completions are a single robot's (they name tools without a robot): not offered.
"""

import asyncio
from typing import Any

from lerobot_tools_ros import errors
from lerobot_tools_ros.mcp import fleet, handlers as single, observations
from lerobot_tools_ros.mcp.bridge import RosBridge


class RobotHandlers:
    """One robot of the fleet: its bridge and the single-robot handlers over it."""

    def __init__(self, bridge: RosBridge) -> None:
        self.bridge = bridge
        self.label: str = bridge.node.label
        self.tools = single.ToolHandlers(bridge)
        self.resources = single.ResourceHandlers(bridge)


class FleetHandlers:
    """Routes each MCP request to the robot its tool name or resource URI names."""

    def __init__(self, bridges: list[RosBridge]) -> None:
        from mcp.server.subscriptions import InMemorySubscriptionBus
        self.bus = InMemorySubscriptionBus()
        self.robots: dict[str, RobotHandlers] = {}
        # (robot, tool) whose scoped name is too long for MCP: warned about once.
        self.skipped: set[tuple[str, str]] = set()
        for bridge in bridges:
            self.add(bridge)

    def add(self, bridge: RosBridge) -> None:
        """Serve one more robot (from the start, or found by discovery)."""
        bridge.bus = self.bus  # its list and resource changes reach every listener
        self.robots[bridge.node.label] = RobotHandlers(bridge)
        for other in self.robots.values():  # connections known so far hear of it too
            for key, connection in list(other.bridge.sessions.items()):
                if key not in bridge.sessions:
                    bridge.sessions[key] = connection
        if any(r.bridge.served for r in self.robots.values()):
            bridge.served = True  # a client has a list: this robot's arrival is announced

    def remember(self, ctx: Any) -> None:
        for robot in self.robots.values():
            robot.bridge.remember(ctx)

    async def wait_for_first_lists(self) -> None:
        await asyncio.gather(*(r.bridge.wait_for_first_list() for r in self.robots.values()))

    # -- tools ------------------------------------------------------------------------------

    def robot_of(self, name: str) -> tuple[RobotHandlers, str] | None:
        split = fleet.split_scoped(name)
        if split is None or split[0] not in self.robots:
            return None
        return self.robots[split[0]], split[1]

    async def list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        self.remember(ctx)
        await self.wait_for_first_lists()
        listed = []
        present = {label: r.bridge.presence.present for label, r in self.robots.items()}
        for label in fleet.listed_robots(present):
            robot = self.robots[label]
            robot.bridge.served = True
            await single.send_warnings(robot.bridge, ctx)
            for tool in robot.bridge.tools:
                name = fleet.scoped_name(label, tool.name)
                if name is None:
                    if (label, tool.name) not in self.skipped:
                        self.skipped.add((label, tool.name))
                        robot.bridge.warn('names', f'tool {tool.name!r} of robot {label} is '
                                          'not listed: its name with the robot is longer than '
                                          'the 128 characters MCP allows')
                    continue
                listed.append(self.scoped_tool(robot.tools.as_tool(tool), label, name))
        for robot in self.robots.values():
            robot.bridge.served = True  # a robot that arrives later is announced
        return types.ListToolsResult(tools=listed)

    @staticmethod
    def scoped_tool(tool: Any, label: str, name: str) -> Any:
        """Return the robot's own MCP tool under its fleet name, its robot in title and text."""
        annotations = tool.annotations
        if annotations is not None and annotations.title:
            annotations = annotations.model_copy(
                update={'title': fleet.scoped_title(label, annotations.title)})
        return tool.model_copy(update={
            'name': name, 'title': fleet.scoped_title(label, tool.title),
            'description': fleet.scoped_description(label, tool.description or ''),
            'annotations': annotations})

    def input_schema(self, name: str) -> Any:
        found = self.robot_of(name)
        return None if found is None else found[0].tools.input_schema(found[1])

    async def call_tool(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        self.remember(ctx)
        found = self.robot_of(params.name)
        if found is None:
            labels = ', '.join(self.robots) or 'none yet'
            return single.failed(errors.UNKNOWN_TOOL, f'{params.name[:200]!r} names no robot of '
                                 f'this endpoint: tools are <robot>.<tool>, robots: {labels}')
        robot, tool = found
        result = await robot.tools.call_tool(ctx, params.model_copy(update={'name': tool}))
        if isinstance(result, types.CallToolResult):
            result = result.model_copy(update={'content': [
                item.model_copy(update={'uri': fleet.scoped_uri(robot.label, str(item.uri))})
                if isinstance(item, types.ResourceLink) else item
                for item in result.content]})
        return result

    # -- resources --------------------------------------------------------------------------

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        self.remember(ctx)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=fleet.scoped_uri(label, uri), name=f'{label} {name}',
                           description=fleet.scoped_description(label, description),
                           mime_type=mime)
            for label in self.robots for uri, name, description, mime in single.RESOURCES])

    async def list_templates(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            uri_template=fleet.scoped_uri(label, observations.TEMPLATE),
            name=f'{label} observation',
            description=fleet.scoped_description(
                label, 'An image (or its JSON sidecar) record_observation saved, by its path in '
                "record_observation's output directory (as its result links it)."))
            for label in self.robots])

    def resource_robot(self, uri: str) -> tuple[RobotHandlers, str]:
        split = fleet.split_uri(uri)
        if split is None or split[0] not in self.robots:
            from mcp.shared.exceptions import MCPError
            raise MCPError(code=-32002, message=f'unknown resource {uri[:200]} (robot '
                           f'resources are {fleet.ROBOTS_PREFIX}<robot>/...)')
        return self.robots[split[0]], split[1]

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        robot, own = self.resource_robot(uri)
        result = await robot.resources.read_resource(ctx, params.model_copy(update={'uri': own}))
        return result.model_copy(update={'contents': [
            item.model_copy(update={'uri': uri}) for item in result.contents]})

    async def subscribe(self, ctx: Any, params: Any) -> Any:
        robot, _ = self.resource_robot(str(params.uri))
        self.remember(ctx)
        return await robot.resources.subscribe(ctx, params)  # kept as the scoped URI

    async def unsubscribe(self, ctx: Any, params: Any) -> Any:
        robot, _ = self.resource_robot(str(params.uri))
        return await robot.resources.unsubscribe(ctx, params)

    async def set_level(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        for robot in self.robots.values():
            await robot.resources.set_level(ctx, params)
        return types.EmptyResult()


def build_fleet_server(fleet_handlers: FleetHandlers) -> Any:
    """Build the MCP low-level ``Server`` that routes to each robot of ``fleet_handlers``."""
    from mcp.server.subscriptions import ListenHandler

    handlers = fleet_handlers
    return single.new_server(
        'Robot fleet tools (lerobot_tools_ros)',
        'Tools of several robots running lerobot_tools_ros. A tool is named '
        '<robot>.<tool> (e.g. robot_a.say) and acts on that robot only; a robot that '
        'leaves the network takes its tools out of the list until it is back. Every call '
        "passes that robot's gates (validation, pause, allowlist, operator approval, "
        'rate limits); an error result starts with its error code (e.g. "paused: ...", '
        '"answer_lost: ..." when the robot left mid-call and its outcome is unknown).',
        on_list_tools=handlers.list_tools, on_call_tool=handlers.call_tool,
        get_tool_input_schema=handlers.input_schema,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_templates,
        on_read_resource=handlers.read_resource,
        on_subscribe_resource=handlers.subscribe,
        on_unsubscribe_resource=handlers.unsubscribe,
        on_set_logging_level=handlers.set_level,
        on_subscriptions_listen=ListenHandler(handlers.bus))
