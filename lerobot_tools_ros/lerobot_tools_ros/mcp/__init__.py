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
The MCP server's decisions, without ROS (the node is ``nodes/mcp_server.py``).

Only ``sdk_adapter`` touches the MCP SDK's internals; the rest does not import the SDK at all.

- ``listing``: which tools an MCP client is offered (exactly those the dispatcher runs, from the
  catalog it publishes), with which schema, title and hints;
- ``results``: how a dispatcher answer becomes an MCP result (text, structured content, images);
- ``progress``: progress notifications that only ever increase;
- ``wire``: JSON-RPC text the SDK refuses before a handler sees it, and host names;
- ``presence``: whether a robot (its dispatcher) is there, and when it arrives or leaves (one per
  robot: reusable by an endpoint serving a fleet);
- ``observations``: saved observations as resources under the server's own URI scheme, bounded
  to record_observation's output directory;
- ``sdk_adapter``: the only place that reaches into the MCP SDK's private names (pinned by
  ``test_mcp_sdk_adapter.py``).
"""
