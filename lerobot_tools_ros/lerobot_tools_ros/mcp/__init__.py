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
Everything MCP: the server's decisions without ROS, the SDK adapter, the node and transports.

The pure modules import neither rclpy nor the MCP SDK; only ``sdk_adapter`` touches the SDK's
internals; ``server`` (the node), ``robot_link`` (one robot's clients and topics on it),
``bridge`` (one robot's ROS side on the asyncio loop), ``handlers`` (the MCP requests),
``fleet_handlers`` (one endpoint for several robots: routes each request to its robot's
bridge and handlers) and ``transports`` (stdio, HTTP) wire them.

- ``listing``: which tools an MCP client is offered (exactly those the dispatcher runs, from the
  catalog it publishes), with which schema, title and hints;
- ``results``: a client's arguments as a ~/call request, and how a dispatcher answer becomes an
  MCP result (text, structured content, images);
- ``progress``: progress notifications that only ever increase;
- ``access``: who may connect over HTTP (bind address, bearer token);
- ``wire``: JSON-RPC text the SDK refuses before a handler sees it;
- ``fleet``: how a fleet endpoint names robots (by ROS namespace), their tools
  (``<robot>.<tool>``, within MCP's tool-name rules) and their resources;
- ``presence``: whether a robot (its dispatcher) is there, and when it arrives or leaves (one per
  robot: reusable by an endpoint serving a fleet);
- ``observations``: saved observations as resources under the server's own URI scheme, bounded
  to record_observation's output directory;
- ``sdk_adapter``: the only place that reaches into the MCP SDK's private names (pinned by
  ``test_mcp_sdk_adapter.py``).
"""
