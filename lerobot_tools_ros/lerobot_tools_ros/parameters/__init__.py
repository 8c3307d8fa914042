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
The parameters of every node, declared once (pure Python: no rclpy).

`spec.ParameterSpec` is one declaration; `declarations` holds every node's table;
`generate` writes the packaged parameters file and the parameter reference from them;
`tool_plan` orders the declaring and undeclaring of a catalog's per-tool parameters in slices
(a 10,000-tool catalog), which the dispatcher node carries out. Tools declare their own
settings as `tools.base.ToolParameter`, which makes a `ParameterSpec` of each.
"""

from .spec import ALL, means_all, ParameterSpec, string_list

__all__ = ['ALL', 'ParameterSpec', 'means_all', 'string_list']
