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
One call as it enters the tool_server, built where it crossed over: DDS or in process.

- Over DDS (a `RunTool` goal, a `CallTool` request) the arguments arrive as JSON text; the
  goal's or request's handler decodes and validates it against the tool_server's catalog, once,
  and builds a `ToolRequest` with ``validated`` set.
- In process (`executors.inprocess.HostedToolOffer`) the arguments arrive as the dispatcher's
  dict. The offer copies them (`catalog.copy_arguments`: the dispatcher keeps its dict) and
  sets ``validated`` when the dispatcher checked them against the very schema the tool_server's
  catalog has for the tool (`ToolCatalog.vouches_for`); otherwise `ToolCalls.submit` validates
  the copy.

No rclpy here.
"""

from dataclasses import dataclass
from typing import Any

__all__ = ['ToolRequest']


@dataclass(frozen=True)
class ToolRequest:
    """A call for one hosted tool: ``arguments`` are the tool's own (no one else holds them)."""

    call_id: str
    name: str  # the tool the caller names ('' : the hosted one)
    arguments: dict[str, Any]
    source: str = ''  # who claims to send it
    validated: bool = False  # checked against this tool_server's schema of ``name``
