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
How a call reaches a tool: one `Executor` protocol, three implementations, chosen in one place.

`ExecutorClient` (client.py) finds a tool's executor and picks how to call it: in process
(`InProcessExecutor`), as a RunTool goal (`ActionExecutor`) or as a CallTool request
(`ServiceExecutor`). Each returns an `ExecutorCall` handle and reports one `Outcome`.
`ToolClients` (tool_clients.py) keeps the dispatcher's client of each tool.
"""

from .base import ACTION, Executor, ExecutorCall, FeedbackCallback, LOCAL, Outcome, SERVICE
from .client import ExecutorClient
from .tool_clients import ToolClients

__all__ = ['ACTION', 'Executor', 'ExecutorCall', 'ExecutorClient', 'FeedbackCallback', 'LOCAL',
           'Outcome', 'SERVICE', 'ToolClients']
