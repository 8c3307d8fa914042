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
The dispatcher node and all its ROS wiring; the decisions are in ``dispatch`` (pure).

- ``node``: the node: ROS callbacks in, core events; core effects out, ROS calls;
- ``topics``: what it publishes (calls, results, chat, progress, approvals, catalog);
- ``calls``: the gated ``~/call`` service; ``operator_services``: cancel, pause, approve;
- ``params``: its parameters applied live to the core; ``catalog_reload``: swapping catalogs;
- ``events``: executor events; ``group_work``: work handed to its callback group;
- ``recovery``: the audit record before each result, and answering a crash's open calls.
"""
