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

Names are relative, so a launch namespace moves them (without one, `policy/text` is
`/policy/text`), and every one can be remapped or set by parameter without code changes.
"""

import re

SERVICE_PREFIX = 'lerobot_tools'
CALLS_TOPIC = 'lerobot_tools/calls'
RESULTS_TOPIC = 'lerobot_tools/results'
CHAT_TOPIC = 'lerobot_tools/chat'
APPROVAL_REQUESTS_TOPIC = 'lerobot_tools/approval_requests'
INPUT_TOPIC = 'policy/text'
STREAM_TOPIC = 'policy/text_stream'
AUDIO_TOPIC = 'speaker/audio'
SPEAKER_STATUS_TOPIC = 'speaker/status'
PROGRESS_TOPIC = 'lerobot_tools/progress'
DIAGNOSTICS_TOPIC = '/diagnostics'
# A dataset camera `observation.images.<name>` is read from this topic unless configured.
CAMERA_TOPIC_PATTERN = 'camera/{name}/image_raw'
DEMO_CAMERA_TOPIC = CAMERA_TOPIC_PATTERN.replace('{name}', 'front')
PARAMETER_EVENTS_TOPIC = '/parameter_events'
# What a user said to the robot (std_msgs/String), and episode markers ('start 3', see
# dataset/markers.py): recorded in the audit log with the dispatcher's record_events.
INTERJECTION_TOPIC = 'lerobot_tools/interjections'
EPISODE_MARKER_TOPIC = 'lerobot_tools/episode_markers'
DEMO_GRIPPER_ACTION = 'demo_gripper/close'  # the demo's bound action (config/demo_bindings.yaml)

DISPATCHER_NODE = 'dispatcher'
TOOL_SERVER_NODE = 'tool_server'
SPEAKER_NODE = 'speaker'
MCP_SERVER_NODE = 'mcp_server'

# Services of the dispatcher node, relative to its name (<dispatcher>/call).
DISPATCHER_CALL = 'call'
DISPATCHER_CANCEL = 'cancel'
DISPATCHER_APPROVE = 'approve'
# Latched (transient local) std_msgs/String: the catalog the dispatcher runs, as JSON.
DISPATCHER_CATALOG = 'catalog'

# The tool name of a readiness probe: a CallTool request or RunTool goal naming it is answered
# at once (success, nothing runs). A caller sends one to prove the executor's answers reach it
# before its first real call. ':' cannot appear in a catalog tool name.
READINESS_PROBE = ':probe'

# Catalog names may hold '.' and '-' (LeRobot allows them); ROS names may not.
_NOT_IN_ROS_NAMES = re.compile(r'[^A-Za-z0-9_]')


def tool_text_topic(service_name: str) -> str:
    """
    Topic of the text segments of a tool's streamed calls (TextChunk, generation_id = call id).

    Beside the tool's RunTool action: a goal with ``streamed`` set gets its
    streamable argument's text there, the last segment with ``final`` set.
    """
    return f'{service_name.rstrip("/")}/text'


def tool_stop_topic(service_name: str) -> str:
    """
    Topic of the call ids a tool's callers stopped (std_msgs/String, data = the call id).

    Beside the tool's service and action: a cancel (or pause, or timeout) of a call whose
    request or goal may still be on its way reaches tool_server here, so the call is refused
    when it arrives (it never acts) and cancelled if it already runs.
    """
    return f'{service_name.rstrip("/")}/stop'


def tool_service_name(prefix: str, tool_name: str) -> str:
    """
    Name of the CallTool service that hosts one tool.

    Characters ROS names do not allow become '_' (tool 'pick-up' is served at
    <prefix>/pick_up); the dispatcher and tool_server both use this, so they always agree.
    """
    leaf = ros_safe(tool_name)
    return f'{prefix.rstrip("/")}/{leaf}' if prefix.strip('/') else leaf


def ros_safe(name: str) -> str:
    """Return `name` with every character a ROS name token cannot hold replaced by '_'."""
    return _NOT_IN_ROS_NAMES.sub('_', name) or '_'


# In a list of tool names (allowed_tools), ['*'] means every tool (as does []).
ALL_TOOLS = '*'
