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
