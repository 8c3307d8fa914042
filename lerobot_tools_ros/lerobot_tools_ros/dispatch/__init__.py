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
The dispatcher without ROS: the call lifecycle (`core`), its effects, and its records.

`core.DispatchCore` decides what happens to every call (streamed input: `streams`, streamed
speech: `stream_speech`; a call's states: `states`; the gates: `gates`); `effects` are what it
asks for;
`diagnostics` is what goes to /diagnostics; `records` holds rate limits, statistics, chat
messages and the audit log (`AuditLog`, `read_audit_log`, `lerobot_atoms`).
`dispatcher/node.py` wires them to ROS.
"""

from . import diagnostics, effects
from .calls import Call, DispatchSettings, POLICY_SOURCE, ToolSettings
from .core import APPROVAL_MODES, DispatchCore, NOT_IN_CATALOG
from .records import (assistant_message, AuditLog, error_code_for_issue, lerobot_atoms,
                      read_audit_log, TokenBucket, tool_message, ToolStats)

__all__ = [
    'APPROVAL_MODES', 'assistant_message', 'AuditLog', 'Call', 'diagnostics', 'DispatchCore',
    'DispatchSettings', 'effects', 'error_code_for_issue', 'lerobot_atoms', 'NOT_IN_CATALOG',
    'POLICY_SOURCE', 'read_audit_log', 'TokenBucket', 'tool_message', 'ToolSettings', 'ToolStats',
]
