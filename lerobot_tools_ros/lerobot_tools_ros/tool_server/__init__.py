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

- ``node``: the node (one executor thread per tool, at most once per call id, stops first);
- ``request``: ``ToolRequest``, one call as it enters (from DDS or in process), validated once;
- ``host``: what a tool may use of ROS (subscriptions, clients) through ``tools.host.ToolHost``;
- ``stop_listener``: the stops (cancel, pause) its callers publish, taken on a thread of its own.
"""
