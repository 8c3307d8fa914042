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
Default ROS names of the runtime, in one place.

Every name is also a parameter (or a relative name that remapping and namespaces apply to),
so a robot stack can move any of them without code changes.
"""

SERVICE_PREFIX = '/lerobot_tools'
CALLS_TOPIC = '/lerobot_tools/calls'
RESULTS_TOPIC = '/lerobot_tools/results'
CHAT_TOPIC = '/lerobot_tools/chat'
INPUT_TOPIC = '/policy/text'
STREAM_TOPIC = '/policy/text_stream'
AUDIO_TOPIC = '/speaker/audio'
SPEAKER_STATUS_TOPIC = '/speaker/status'
DIAGNOSTICS_TOPIC = '/diagnostics'

DISPATCHER_NODE = 'dispatcher'
TOOL_SERVER_NODE = 'tool_server'
SPEAKER_NODE = 'speaker'


def tool_service_name(prefix: str, tool_name: str) -> str:
    """Name of the CallTool service that hosts one tool."""
    return f'{prefix.rstrip("/")}/{tool_name}' if prefix.strip('/') else tool_name
