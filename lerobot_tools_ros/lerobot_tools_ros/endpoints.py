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
Every topic, service and action of this package's nodes: name, type, QoS, what it carries.

A pure table (no rclpy): the topic reference (docs/reference/topics.md) is generated from it,
and ``test/test_endpoints.py`` starts the nodes and checks that the ROS graph holds exactly
these endpoints, with these types and QoS, so the table and the nodes cannot drift apart.
Names are as the nodes create them with default parameters and no namespace: relative names
move with a namespace (``namespace:=robot1`` puts ``policy/text`` at ``/robot1/policy/text``),
``~/x`` is private to the node, ``<tool>`` stands for each hosted tool and ``<camera>`` for each
camera. Bound tools (a ``bindings_file``) add the endpoints their bindings name.
"""

from dataclasses import dataclass

from lerobot_tools_ros import names

__all__ = ['ENDPOINTS', 'Endpoint', 'KINDS', 'Qos', 'by_node']


@dataclass(frozen=True)
class Qos:
    """A QoS profile as the nodes create it (history keep_last unless said otherwise)."""

    reliability: str = 'reliable'  # reliable | best_effort
    durability: str = 'volatile'  # volatile | transient_local
    history: str = 'keep_last'  # keep_last | keep_all
    depth: int = 10

    def text(self) -> str:
        """Describe the profile in one line: `reliable, keep_last 1000, volatile`."""
        history = (f'keep_last {self.depth}' if self.history == 'keep_last' else self.history)
        return f'{self.reliability}, {history}, {self.durability}'


# The profiles in use (what the nodes pass to create_publisher/create_subscription).
POLICY_IO = Qos(depth=1000)  # policy input, calls, results, chat, progress: bursts must fit
APPROVALS = Qos(depth=100, durability='transient_local')  # a late operator tool still sees them
DEFAULT = Qos(depth=10)
AUDIO = Qos(depth=200)
SPEAKER_STATUS = Qos(depth=50)
SENSOR_DATA = Qos(reliability='best_effort', depth=5)  # rclpy's qos_profile_sensor_data
CAMERA_READ = Qos(reliability='best_effort', depth=1)  # record_observation, qos: sensor_data
MCP_IN = Qos(depth=100)
LATCHED = Qos(depth=1, durability='transient_local')  # the one current value, for late joiners
EVENTS = Qos(depth=100)
SCRIPTED = Qos(depth=100)
CALL_REQUESTS = Qos(history='keep_all')  # ~/call: a keep-last queue drops a burst's oldest
STOPS = Qos(depth=100)  # call ids stopped by their callers

KINDS = ('publisher', 'subscription', 'service', 'action server', 'service client',
         'action client')


@dataclass(frozen=True)
class Endpoint:
    """One endpoint of one node."""

    node: str
    kind: str
    name: str
    interface: str  # pkg/msg/Type, pkg/srv/Type or pkg/action/Type
    description: str
    qos: Qos | None = None  # topics only
    parameter: str = ''  # the parameter that names it, when one does
    demo: bool = False  # demo and tooling nodes (demo.launch.py, bringup --demo, replay)
    only_with: str = ''  # exists only with this setting (not with the defaults)


_DISPATCHER_CALL_NODE = f'{names.DISPATCHER_NODE}_call'
DEMO_BINDINGS = 'bindings_file: config/demo_bindings.yaml'
_TOOL = f'{names.SERVICE_PREFIX}/<tool>'

ENDPOINTS: tuple[Endpoint, ...] = (
    # -- dispatcher ------------------------------------------------------------------------
    Endpoint('dispatcher', 'subscription', names.INPUT_TOPIC, 'std_msgs/msg/String',
             'One complete policy generation per message (UTF-8 text; a NUL byte ends a ROS '
             'string).', POLICY_IO, 'input_topic'),
    Endpoint('dispatcher', 'subscription', names.STREAM_TOPIC,
             'lerobot_tools_interfaces/msg/TextChunk',
             'Streamed generations: the next text delta of generation_id, final on the last.',
             POLICY_IO, 'stream_topic'),
    Endpoint('dispatcher', 'publisher', names.CALLS_TOPIC, 'lerobot_tools_interfaces/msg/ToolCall',
             'Every call found, before it runs.', POLICY_IO),
    Endpoint('dispatcher', 'publisher', names.RESULTS_TOPIC,
             'lerobot_tools_interfaces/msg/ToolResult',
             'Exactly one per call (and per call that could not be recovered from the text); '
             'after a restart, one (answer_lost) per call a killed run left unanswered in the '
             'audit log.',
             POLICY_IO),
    Endpoint('dispatcher', 'publisher', names.CHAT_TOPIC, 'std_msgs/msg/String',
             "JSON chat messages to append to the policy's conversation: one assistant "
             'message per generation, one tool message per call.', POLICY_IO),
    Endpoint('dispatcher', 'publisher', names.PROGRESS_TOPIC,
             'lerobot_tools_interfaces/msg/ToolProgress',
             "Progress of running calls, relayed from the executors' RunTool feedback.",
             POLICY_IO),
    Endpoint('dispatcher', 'publisher', names.APPROVAL_REQUESTS_TOPIC,
             'lerobot_tools_interfaces/msg/ApprovalRequest',
             'A call of a confirm tool waits for an operator; republished with a zero timeout '
             'once it is decided, timed out or paused.', APPROVALS),
    Endpoint('dispatcher', 'publisher', names.DIAGNOSTICS_TOPIC,
             'diagnostic_msgs/msg/DiagnosticArray',
             '1 Hz: per tool calls, successes, errors.<code>, latency p50/p99, executor '
             'availability; input: messages taken and lost.', DEFAULT),
    Endpoint('dispatcher', 'publisher', f'~/{names.DISPATCHER_CATALOG}', 'std_msgs/msg/String',
             'The catalog it loaded, as JSON, latched: at start and after each reload (what '
             'the MCP server lists).', LATCHED),
    Endpoint('dispatcher', 'subscription', names.INTERJECTION_TOPIC, 'std_msgs/msg/String',
             'What a user said to the robot, recorded in the audit log.', EVENTS,
             only_with='record_events: true'),
    Endpoint('dispatcher', 'subscription', names.EPISODE_MARKER_TOPIC, 'std_msgs/msg/String',
             "Episode markers ('start 3', 'end 3'), recorded in the audit log.", EVENTS,
             only_with='record_events: true'),
    Endpoint('dispatcher', 'service', '~/set_enabled', 'std_srvs/srv/SetBool',
             'false pauses tool use (the e-stop for tools): new, waiting and running calls end '
             'paused.'),
    Endpoint('dispatcher', 'service', f'~/{names.DISPATCHER_APPROVE}',
             'lerobot_tools_interfaces/srv/Approve', 'Decide a call waiting for approval.'),
    Endpoint('dispatcher', 'service', f'~/{names.DISPATCHER_CANCEL}',
             'lerobot_tools_interfaces/srv/CancelCalls',
             'Cancel one call or every call of a generation; each ends cancelled.'),
    Endpoint(_DISPATCHER_CALL_NODE, 'service', f'{names.DISPATCHER_NODE}/{names.DISPATCHER_CALL}',
             'lerobot_tools_interfaces/srv/CallTool',
             'The gated entry for other nodes (behaviour trees, UIs, the MCP server): the same '
             "gates as policy text; answers with the call's one result. Served by the "
             'companion node dispatcher_call (keep_all request queue).'),
    Endpoint(_DISPATCHER_CALL_NODE, 'service', f'{names.DISPATCHER_NODE}/reload_catalog',
             'std_srvs/srv/Trigger',
             'Re-read info.json; lists added, removed and changed tools.'),
    Endpoint('dispatcher', 'action client', _TOOL, 'lerobot_tools_interfaces/action/RunTool',
             "Each catalog tool's executor, when it offers the action (progress, cancel).",
             parameter='service_prefix'),
    Endpoint('dispatcher', 'service client', _TOOL, 'lerobot_tools_interfaces/srv/CallTool',
             "Each catalog tool's executor, when it offers only the service.",
             parameter='service_prefix'),
    Endpoint('dispatcher', 'publisher', f'{_TOOL}/text', 'lerobot_tools_interfaces/msg/TextChunk',
             'Streamed calls (stream_speech): the text segments of a goal with streamed set, '
             'generation_id = its call id; created with the first such call.', POLICY_IO,
             parameter='service_prefix', only_with='stream_speech: true'),
    Endpoint('dispatcher', 'publisher', f'{_TOOL}/stop', 'std_msgs/msg/String',
             'The ids of calls sent over DDS that it stopped (cancel, pause, timeout): the '
             'tool_server refuses such a call if it has not started, cancels it if it runs.',
             STOPS, parameter='service_prefix'),
    # -- tool_server -----------------------------------------------------------------------
    Endpoint('tool_server_<tool>', 'service', _TOOL, 'lerobot_tools_interfaces/srv/CallTool',
             'Run one hosted tool (validates its arguments itself). Served by the node '
             'tool_server_<tool>, one per hosted tool, on a thread of its own.',
             parameter='service_prefix'),
    Endpoint('tool_server_<tool>', 'action server', _TOOL,
             'lerobot_tools_interfaces/action/RunTool',
             'The same tool as a goal: feedback while it runs, cancellable.',
             parameter='service_prefix'),
    Endpoint('tool_server_say', 'subscription', f'{names.SERVICE_PREFIX}/say/text',
             'lerobot_tools_interfaces/msg/TextChunk',
             'The text segments of streamed say goals (stream_speech); every hosted tool with a '
             'streamable argument has one at <service_prefix>/<tool>/text.', POLICY_IO,
             parameter='service_prefix'),
    Endpoint('tool_server_stops', 'subscription', f'{_TOOL}/stop', 'std_msgs/msg/String',
             'Call ids its callers stopped, per hosted tool (taken by a thread of its own and '
             'right before a call starts): a call not started yet is refused when it arrives, '
             'a running one cancelled.', STOPS, parameter='service_prefix'),
    Endpoint('tool_server', 'publisher', names.AUDIO_TOPIC,
             'lerobot_tools_interfaces/msg/AudioChunk',
             'say: synthesized speech for the speaker.', AUDIO, 'tool.say.audio_topic'),
    Endpoint('tool_server', 'subscription', names.SPEAKER_STATUS_TOPIC,
             'lerobot_tools_interfaces/msg/SpeakerStatus',
             "say: the speaker's progress, for the call's progress and wait_for_playback.",
             SPEAKER_STATUS, 'tool.say.status_topic'),
    Endpoint('tool_server', 'service', '~/stop', 'std_srvs/srv/Trigger',
             'say: cut the current utterance short; the speaker drops what it queued.'),
    Endpoint('tool_server', 'subscription',
             names.CAMERA_TOPIC_PATTERN.replace('{name}', '<camera>'),
             'sensor_msgs/msg/Image',
             'record_observation: one per camera (sensor_msgs/msg/CompressedImage with '
             'transport compressed); best effort, like camera drivers publish.',
             CAMERA_READ, 'tool.record_observation.camera_topic_pattern'),
    Endpoint('tool_server_close_gripper_client', 'action client', names.DEMO_GRIPPER_ACTION,
             'lerobot_tools_interfaces/action/CloseGripper',
             'The demo binding close_gripper: each call is a goal to the demo gripper. A bound '
             'service or action is called from a node of its own, tool_server_<tool>_client, '
             'spun by the thread that runs the call.',
             demo=True, only_with=DEMO_BINDINGS),
    # -- speaker ---------------------------------------------------------------------------
    Endpoint('speaker', 'subscription', names.AUDIO_TOPIC,
             'lerobot_tools_interfaces/msg/AudioChunk', 'Audio to play.', AUDIO, 'audio_topic'),
    Endpoint('speaker', 'publisher', names.SPEAKER_STATUS_TOPIC,
             'lerobot_tools_interfaces/msg/SpeakerStatus',
             'Per utterance: playing (periodically), then finished, cancelled or dropped.',
             SPEAKER_STATUS, 'status_topic'),
    Endpoint('speaker', 'service', '~/stop', 'std_srvs/srv/Trigger',
             'Silence the utterance playing and drop what is queued; a say call waiting for '
             'it ends cancelled.'),
    # -- mcp_server ------------------------------------------------------------------------
    Endpoint('mcp_server', 'service client', f'{names.DISPATCHER_NODE}/{names.DISPATCHER_CALL}',
             'lerobot_tools_interfaces/srv/CallTool', 'Every MCP tools/call.',
             parameter='dispatcher'),
    Endpoint('mcp_server', 'service client',
             f'{names.DISPATCHER_NODE}/{names.DISPATCHER_CANCEL}',
             'lerobot_tools_interfaces/srv/CancelCalls',
             'An MCP cancellation or a client that disconnects.', parameter='dispatcher'),
    Endpoint('mcp_server', 'service client',
             f'{names.DISPATCHER_NODE}/{names.DISPATCHER_APPROVE}',
             'lerobot_tools_interfaces/srv/Approve',
             "An approval decided by the MCP client's user (elicitation).",
             parameter='dispatcher'),
    Endpoint('mcp_server', 'subscription', f'{names.DISPATCHER_NODE}/{names.DISPATCHER_CATALOG}',
             'std_msgs/msg/String', "The dispatcher's loaded catalog: what is listed.",
             LATCHED, parameter='dispatcher'),
    Endpoint('mcp_server', 'subscription', names.APPROVAL_REQUESTS_TOPIC,
             'lerobot_tools_interfaces/msg/ApprovalRequest',
             'Calls waiting for approval: the approvals resource and MCP elicitation.',
             APPROVALS),
    Endpoint('mcp_server', 'subscription', names.RESULTS_TOPIC,
             'lerobot_tools_interfaces/msg/ToolResult', 'Recent results: a resource.', MCP_IN),
    Endpoint('mcp_server', 'subscription', names.PROGRESS_TOPIC,
             'lerobot_tools_interfaces/msg/ToolProgress',
             'Progress of its own calls, for MCP progress notifications.', MCP_IN),
    Endpoint('mcp_server', 'subscription', names.PARAMETER_EVENTS_TOPIC,
             'rcl_interfaces/msg/ParameterEvent',
             "Changes of the dispatcher's allowlist and approval settings: "
             'tools/list_changed.', MCP_IN),
    # -- demo nodes ------------------------------------------------------------------------
    Endpoint('demo_camera', 'publisher', names.DEMO_CAMERA_TOPIC, 'sensor_msgs/msg/Image',
             'A synthetic test pattern.', SENSOR_DATA, 'topic', demo=True),
    Endpoint('scripted_policy', 'publisher', names.INPUT_TOPIC, 'std_msgs/msg/String',
             'Its script of generations, one per interval_s.', SCRIPTED, 'output_topic',
             demo=True),
    Endpoint('demo_gripper', 'action server', names.DEMO_GRIPPER_ACTION,
             'lerobot_tools_interfaces/action/CloseGripper',
             'A gripper that closes in steps, reporting the opening after each.',
             parameter='action', demo=True),
    Endpoint('replay', 'publisher', names.STREAM_TOPIC, 'lerobot_tools_interfaces/msg/TextChunk',
             "An annotated episode's tool calls, one generation per frame "
             '(lerobot-tools-ros replay).', POLICY_IO, 'stream_topic', demo=True),
    Endpoint('replay', 'publisher', names.INTERJECTION_TOPIC, 'std_msgs/msg/String',
             "The episode's interjections.", POLICY_IO, demo=True),
    Endpoint('replay', 'publisher', names.EPISODE_MARKER_TOPIC, 'std_msgs/msg/String',
             'start / end markers around the replay.', POLICY_IO, demo=True),
    Endpoint('replay', 'subscription', names.RESULTS_TOPIC,
             'lerobot_tools_interfaces/msg/ToolResult',
             'The results of its calls, matched to the calls they answer.', POLICY_IO,
             demo=True),
)


def by_node() -> dict[str, list[Endpoint]]:
    """Return the endpoints grouped by node, in table order."""
    grouped: dict[str, list[Endpoint]] = {}
    for endpoint in ENDPOINTS:
        grouped.setdefault(endpoint.node, []).append(endpoint)
    return grouped
