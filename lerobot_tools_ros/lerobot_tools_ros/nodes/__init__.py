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
How every node process starts and stops: one entry module per executable, and what they share.

- ``dispatcher``, ``tool_server``, ``speaker``, ``mcp_server``, ``replay``, ``demo_camera``,
  ``demo_gripper``, ``scripted_policy``: the executables (``ros2 run lerobot_tools_ros NAME``,
  ``python -m lerobot_tools_ros.nodes.NAME``); each only imports its node's ``main``;
- ``entry``: the console scripts (a Ctrl-C while a node's module imports ends it quietly);
- ``runner``: init, spin, signals and a clean stop for every node; ``managed_node``: the same
  nodes as managed (lifecycle) nodes; ``params``: declaring a node's parameters from
  ``parameters``.

The nodes themselves live with their capability: ``dispatcher/``, ``tool_server/``,
``speaker/``, ``mcp/``, ``dataset/`` (replay) and ``demo/``.
"""
