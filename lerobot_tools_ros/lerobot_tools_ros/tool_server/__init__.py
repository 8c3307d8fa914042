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
The tool_server node: hosts the tools as CallTool services and RunTool actions.

- ``node``: the node and its ROS wiring (a node and an executor thread per tool);
- ``calls``: ``ToolCalls``, one tool's call lifecycle (no rclpy): checks, at most once per call
  id, its queue and worker thread, stops first, running a call and its answer;
- ``building``: which tools are hosted and how each is made from its parameters;
- ``streamed_text``: the text of streamed goals, taken in segments (no rclpy);
- ``request``: ``ToolRequest``, one call as it enters (from DDS or in process), validated once;
- ``host``: what a tool may use of ROS (subscriptions, clients) through ``tools.host.ToolHost``;
- ``stop_listener``: the stops (cancel, pause) its callers publish, taken on a thread of its own.
"""
