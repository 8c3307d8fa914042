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
Every parameter of every node of this package, declared once (see `parameters.spec`).

Nodes declare from these tables; `config/lerobot_tools.yaml` and the parameter reference are
generated from them (`lerobot-tools-ros params`), and a test fails when the packaged file is
stale. A tool's own parameters (``tool.<name>.<param>`` on tool_server) are declared by its class
as ``PARAMETERS`` (`tools.base.ToolParameter`); the dispatcher's per-tool settings
(``tool.<name>.<setting>``) come from `dispatcher_tool_spec`.
"""

import functools
from typing import Any

from lerobot_tools_ros import names
from lerobot_tools_ros.dataset.render import FORMATS as REPLAY_FORMATS
from lerobot_tools_ros.limits import MAX_ARGUMENT_BYTES
from lerobot_tools_ros.parameters.spec import ALL, MAX_SECONDS, ParameterSpec

__all__ = ['APPROVAL_MODES', 'DEMO_CAMERA', 'DEMO_SCRIPT', 'DEMO_GRIPPER', 'DISPATCHER', 'INHERIT',
           'MCP_SERVER', 'NODES', 'PER_TOOL_DEFAULTS', 'PER_TOOL_SETTINGS', 'REPLAY',
           'SCRIPTED_POLICY', 'SPEAKER', 'TOOL_SERVER', 'WHEN_BUSY_MODES', 'dispatcher_tool_spec',
           'table']

APPROVAL_MODES = ('auto', 'confirm', 'deny')
# What a call of a tool that is still running a call does (with serialize_per_tool).
WHEN_BUSY_MODES = ('queue', 'replace', 'refuse')
# A per-tool limit with this value (any negative one) takes the dispatcher's global value.
INHERIT = -1


def table(*specs: ParameterSpec) -> dict[str, ParameterSpec]:
    """Return specs by name, in the order given (refusing a name given twice)."""
    by_name: dict[str, ParameterSpec] = {}
    for spec in specs:
        if spec.name in by_name:
            raise TypeError(f'parameter {spec.name} is declared twice')
        by_name[spec.name] = spec
    return by_name


_RESTART = 'read when the node starts; restart it to change'
# Upper bounds of the dispatcher's counts, sizes and rates: far beyond what a robot needs, and
# small enough that no arithmetic or allocation made from them can fail.
_MAX_COUNT = 1_000_000
_MAX_BYTES = 1 << 30
_MAX_RATE_HZ = 1e6

# -- dispatcher ------------------------------------------------------------------------------

DISPATCHER = table(
    ParameterSpec('dataset', '', 'Catalog source: a dataset root, an info.json path or a '
                  "LeRobot repo id. Empty: the package's sample dataset.",
                  read_only='the catalog is re-read with ~/reload_catalog, not by setting it'),
    ParameterSpec('input_topic', names.INPUT_TOPIC,
                  'std_msgs/String topic carrying one complete policy generation per message.',
                  read_only='subscribed once at start'),
    ParameterSpec('stream_topic', names.STREAM_TOPIC,
                  'lerobot_tools_interfaces/TextChunk topic carrying streamed generations.',
                  read_only='subscribed once at start'),
    ParameterSpec('formats', ['auto'],
                  "Model output formats to recognise: ['auto'] or names such as hermes, "
                  'pythonic, lerobot_marker, openai_json, llama_json, mistral, '
                  'qwen3_coder_xml, fenced_json.'),
    ParameterSpec('service_prefix', names.SERVICE_PREFIX,
                  'Prefix of the executors: <prefix>/<tool name> (RunTool action or CallTool '
                  'service).', read_only='executor clients are made once per tool'),
    ParameterSpec('executor_interface', 'auto',
                  "How calls reach executors: 'auto' (the RunTool action when offered: progress "
                  "and cancel; else the CallTool service), 'action', or 'service' (one DDS round "
                  'trip, about 4x cheaper than an action, but no progress and no cancel of '
                  'running calls).', choices=('auto', 'action', 'service'),
                  read_only='executor clients are made once per tool'),
    ParameterSpec('in_process_executors', True,
                  'Call a tool hosted by a tool_server in this same process (bringup) directly, '
                  'without the DDS round trip (same gates, cancel, progress and timeout); '
                  'false: always over DDS.', read_only='executor clients are made once per tool'),
    ParameterSpec('allowed_tools', [ALL],
                  f"Tools the policy and every other caller may call; ['{ALL}'] or []: every "
                  'catalog tool. Others get not_allowed.'),
    ParameterSpec('timeout_s', 10.0,
                  'Seconds a call may take, including waiting for its executor to come up; per '
                  'tool: tool.<name>.timeout_s.', above=0.0, maximum=MAX_SECONDS),
    ParameterSpec('rate_limit_hz', 0.0,
                  'Calls per second allowed per tool (0: unlimited); per tool: '
                  'tool.<name>.rate_limit_hz.', minimum=0.0, maximum=_MAX_RATE_HZ),
    ParameterSpec('burst', 5, 'Calls allowed at once above the rate limit (0 acts as 1: the '
                  'bucket always holds one call); per tool: tool.<name>.burst.', minimum=0,
                  maximum=_MAX_COUNT),
    ParameterSpec('cancel_timeout_s', 5.0,
                  'Seconds a call stopped while it runs (a cancel, a pause, when_busy replace) '
                  "waits for its executor's answer, which says what the tool did (its result if "
                  'it had finished, paused or cancelled if it stopped); without an answer by then '
                  'its result is answer_lost with outcome unknown (it may still be acting).',
                  above=0.0, maximum=MAX_SECONDS),
    ParameterSpec('max_pending', 256,
                  'Most calls queued or in flight at once; further calls get busy immediately.',
                  minimum=1, maximum=_MAX_COUNT),
    ParameterSpec('serialize_per_tool', True,
                  'Run calls of one tool one after another (a second say waits for the first).'),
    ParameterSpec('audit_log', '',
                  'JSON-lines file recording every call and result, each record handed to the '
                  'OS before the result is published; read at start to answer, once, the calls '
                  'a killed dispatcher left without a result (answer_lost). Empty: off.',
                  read_only='the file is opened once at start'),
    ParameterSpec('record_events', False,
                  f'Also record what users say on {names.INTERJECTION_TOPIC} and episode '
                  f'markers on {names.EPISODE_MARKER_TOPIC} in the audit log (needs audit_log), '
                  'for `lerobot-tools-ros dataset add-events`.',
                  read_only='the subscriptions are made at start'),
    ParameterSpec('max_input_bytes', 65536,
                  'Largest generation parsed; larger ones get one parse_error result.',
                  minimum=1, maximum=_MAX_BYTES),
    ParameterSpec('stream_idle_timeout_s', 30.0,
                  'A streamed generation without a chunk for this long is finished as if '
                  'final.', above=0.0, maximum=MAX_SECONDS),
    ParameterSpec('max_open_streams', 64,
                  'Most streamed generations open at once; beyond it the least recently fed '
                  'one is finished early (its unfinished call gets parse_error).', minimum=1,
                  maximum=_MAX_COUNT),
    ParameterSpec('max_stream_bytes', 8 << 20,
                  'Most characters all open streams hold together; beyond it the least '
                  'recently fed streams are finished early.', minimum=1, maximum=_MAX_BYTES),
    ParameterSpec('stream_speech', False,
                  'Streamed generations (TextChunk): start a say call (any tool with a '
                  'streamable argument) while the policy is still writing it, handing its '
                  'text over in whole sentences or clauses; a call that then turns out '
                  'malformed may have spoken its first segments. Off: a call runs once '
                  'complete, as for /policy/text.'),
)

# The dispatcher's settings per catalog tool, as tool.<name>.<setting>.
PER_TOOL_SETTINGS = ('timeout_s', 'rate_limit_hz', 'burst', 'repeat_window_s', 'approval',
                     'when_busy')
# What a tool gets when the parameters say nothing about it: INHERIT (the global value) for
# the limits, 'auto' approval, no repeat window; the built-in tools get what they need.
PER_TOOL_DEFAULTS = {
    # Speech of a long sentence takes a while; a VLA emits the same <say> with every action
    # chunk, so the same words again within 3 s are a duplicate, not spoken twice.
    # A say lasts until it was heard and waits for the one before it: max_chars (500) of
    # speech is ~30 s, so two fit.
    'say': {'timeout_s': 120.0, 'rate_limit_hz': 2.0, 'burst': 3, 'repeat_window_s': 3.0},
    # A second still of the same label is wanted: no repeat window.
    'record_observation': {'timeout_s': 10.0, 'rate_limit_hz': 5.0, 'burst': 5},
}
_GENERIC_TOOL_DEFAULTS = {'timeout_s': float(INHERIT), 'rate_limit_hz': float(INHERIT),
                          'burst': INHERIT, 'repeat_window_s': 0.0, 'approval': 'auto',
                          'when_busy': 'queue'}


@functools.lru_cache(maxsize=8192)  # read at every settings change, for every tool
def dispatcher_tool_spec(tool: str, setting: str) -> ParameterSpec:
    """Return the spec of the dispatcher parameter tool.<tool>.<setting>."""
    default: Any = PER_TOOL_DEFAULTS.get(tool, {}).get(setting, _GENERIC_TOOL_DEFAULTS[setting])
    name = f'tool.{tool}.{setting}'
    if setting == 'approval':
        return ParameterSpec(
            name, default, f"'{tool}' calls: auto (run), confirm (wait for ~/approve, "
            'announced on lerobot_tools/approval_requests) or deny (refused with denied).',
            choices=APPROVAL_MODES)
    if setting == 'when_busy':
        return ParameterSpec(
            name, default, f"A '{tool}' call that comes while another runs (serialize_per_tool): "
            'queue (run after it), replace (cancel the running and queued ones, then run) or '
            'refuse (answered busy).', choices=WHEN_BUSY_MODES)
    if setting == 'repeat_window_s':
        return ParameterSpec(
            name, default, f"Seconds in which a call of '{tool}' with the same arguments as a "
            'running or recent one is answered duplicate instead of run (0: off).',
            minimum=0.0, maximum=MAX_SECONDS)
    if setting == 'burst':
        return ParameterSpec(name, default, f"burst for '{tool}' only; -1: the global burst.",
                             minimum=0, maximum=_MAX_COUNT, special=(INHERIT,))
    if setting == 'timeout_s':
        return ParameterSpec(name, float(default), f"timeout_s for '{tool}' only; -1: the "
                             'global timeout_s.', above=0.0, maximum=MAX_SECONDS,
                             special=(INHERIT,))
    return ParameterSpec(name, float(default), f"{setting} for '{tool}' only; -1: the global "
                         f'{setting}.', minimum=0.0, maximum=_MAX_RATE_HZ, special=(INHERIT,))


# -- tool_server -----------------------------------------------------------------------------
# Plus each hosted tool's PARAMETERS as tool.<name>.<param> (tools.base.ToolParameter).

TOOL_SERVER = table(
    ParameterSpec('tools', ['say', 'record_observation'],
                  'Names of the tools to host; each must be registered (built in or through the '
                  "'lerobot_tools_ros.tools' entry-point group). One the dataset catalog does "
                  'not declare is left out with a warning (a policy of that dataset cannot call '
                  'it); with none declared the node does not start.',
                  read_only='tools are built and served once, at start'),
    ParameterSpec('dataset', '', 'Catalog source for the tool schemas: a dataset root, an '
                  "info.json path or a LeRobot repo id. Empty: the package's sample dataset.",
                  read_only=_RESTART),
    ParameterSpec('service_prefix', names.SERVICE_PREFIX,
                  'Prefix of the CallTool services and RunTool actions; each tool is served at '
                  '<prefix>/<tool name>.', read_only='services and actions are made at start'),
    ParameterSpec('bindings_file', '',
                  'YAML file binding catalog tools to existing ROS services, actions and topics '
                  "('' = none; see config/bindings_example.yaml). Every bound tool is hosted; a "
                  'binding wins over a registered tool class.',
                  read_only='bindings are loaded and checked once, at start'),
    ParameterSpec('action_result_timeout_s', 3.0,
                  "Seconds a finished RunTool goal's result is kept for a result request that "
                  'comes after the goal ended (a quick tool ends before the request of a client '
                  'on a loaded machine arrives); after that its status and result are unknown. '
                  'Every kept goal is listed in each action status message, which every client '
                  'decodes, so calls slow down as this grows. '
                  "rclpy's own default: 10 s on Kilted, 900 s on Jazzy.",
                  above=0.0, maximum=MAX_SECONDS,
                  read_only='the action servers take it when they are made, at start'),
    ParameterSpec('call_ids_window_s', 600.0,
                  'At most once per call id: for this many seconds after a call ended, a '
                  'RunTool goal or CallTool request repeating its call_id is answered with the '
                  'first answer instead of running again (a repeat while it runs waits for it). '
                  'A retry after an answer was lost (outcome unknown) is then safe. Calls '
                  'without a call_id are never matched.', above=0.0, maximum=MAX_SECONDS,
                  read_only='each tool makes its memory of call ids at start'),
    ParameterSpec('call_ids_max', 4096,
                  'Most ended call ids remembered per tool for call_ids_window_s (the oldest '
                  'are forgotten first); also how many stops of calls that have not arrived yet '
                  'are kept.', minimum=1, maximum=_MAX_COUNT,
                  read_only='each tool makes its memory of call ids at start'),
)

# -- speaker -----------------------------------------------------------------------------------

SPEAKER = table(
    ParameterSpec('sink', 'auto', 'Where audio goes: auto (a sound device if one exists, else '
                  'wav), sounddevice, wav (one <utterance_id>.wav per utterance in output_dir) '
                  'or null (discarded).', choices=('auto', 'sounddevice', 'wav', 'null'),
                  read_only='the sink is opened once, at start'),
    ParameterSpec('output_dir', '~/.lerobot_tools/audio',
                  'Directory of the wav sink; created if missing. A file appears only when '
                  'complete; a dropped utterance leaves none, a cancelled one what was played.',
                  read_only='the sink is opened once, at start'),
    ParameterSpec('device', '', "sounddevice output: '' for the default, a device index, or "
                  'part of its name (case-insensitive).', also=('int',), minimum=0, maximum=4096,
                  read_only='the sink is opened once, at start'),
    ParameterSpec('jitter_ms', 60, 'sounddevice: audio buffered before playback starts, to '
                  'ride over uneven chunks.', minimum=0, maximum=2000,
                  read_only='the sink is opened once, at start'),
    ParameterSpec('block_ms', 20, 'Audio block handed to the sink at a time (the device period; '
                  'the pace of wav/null): a cancel silences the output within one block.',
                  minimum=1, maximum=200, read_only='the sink is opened once, at start'),
    ParameterSpec('realtime', True, 'wav and null sinks: take audio at the pace it would be '
                  'heard, so progress, the say call waiting for it and cancel behave as with a '
                  'sound card; false: as fast as it arrives.',
                  read_only='the player is made at start'),
    ParameterSpec('stall_timeout_s', 10.0, 'Drop an utterance whose next chunk has not come for '
                  'this long (sender died).', above=0.0, maximum=MAX_SECONDS,
                  read_only='the player is made at start'),
    ParameterSpec('max_pending_utterances', 32, 'Utterances with audio waiting to play; more '
                  'are refused (reported dropped).', minimum=1, maximum=_MAX_COUNT,
                  read_only='the player is made at start'),
    ParameterSpec('progress_period_s', 0.1, 'How often a playing status with frames_played is '
                  'published during playback.', above=0.0, maximum=3600.0,
                  read_only='the progress timer is made at start'),
    ParameterSpec('audio_topic', names.AUDIO_TOPIC, 'AudioChunk topic to play.',
                  read_only='subscribed once at start'),
    ParameterSpec('status_topic', names.SPEAKER_STATUS_TOPIC,
                  'Topic of the SpeakerStatus reports.', read_only='advertised once at start'),
)

# -- mcp_server --------------------------------------------------------------------------------

_MCP_RESTART = 'read when the MCP server starts; restart it to change'
MCP_SERVER = table(
    ParameterSpec('transport', 'stdio', 'MCP transport: stdio (for desktop clients) or http '
                  '(Streamable HTTP).', choices=('stdio', 'http'), read_only=_MCP_RESTART),
    ParameterSpec('host', '127.0.0.1', 'HTTP bind address (IPv6 with or without brackets). '
                  'Anything but loopback needs a bearer token.', read_only=_MCP_RESTART),
    ParameterSpec('port', 8765, 'HTTP port.', minimum=1, maximum=65535, read_only=_MCP_RESTART),
    ParameterSpec('path', '/mcp', 'HTTP path of the MCP endpoint.', read_only=_MCP_RESTART),
    ParameterSpec('token_env', 'LEROBOT_TOOLS_MCP_TOKEN',
                  'Environment variable holding the HTTP bearer token.', read_only=_MCP_RESTART),
    ParameterSpec('token_file', '', 'File holding the HTTP bearer token (wins over token_env).',
                  read_only=_MCP_RESTART),
    ParameterSpec('dispatcher', names.DISPATCHER_NODE,
                  'Dispatcher node whose catalog, ~/call, ~/cancel, ~/approve and parameters are '
                  "used (relative names resolve in this node's namespace).",
                  read_only=_MCP_RESTART),
    ParameterSpec('tool_server', names.TOOL_SERVER_NODE,
                  'tool_server node whose bindings_file is read: tools bound with kind: read '
                  'are listed with readOnlyHint.', read_only=_MCP_RESTART),
    ParameterSpec('robots', [], 'Serve a fleet: the ROS namespaces of the robots (robot_a or '
                  "/site1/robot_a; an entry may list several, comma-separated). Each robot's "
                  'tools are offered as <robot>.<tool> (dispatcher and tool_server resolve in '
                  "its namespace: both must be relative). Empty: one robot, in this node's "
                  'namespace.',
                  read_only=_MCP_RESTART),
    ParameterSpec('discover_robots', False, 'Serve a fleet of every namespace in which a node '
                  'named like the dispatcher parameter runs on this ROS domain (looked for '
                  'every second; added to the robots listed), not only the listed ones.',
                  read_only=_MCP_RESTART),
    ParameterSpec('read_only_tools', [], 'Tools listed with readOnlyHint (they do not change '
                  'the world).', read_only=_MCP_RESTART),
    ParameterSpec('actuating_tools', [], 'Tools listed with destructiveHint (they move the '
                  'robot); tools with approval confirm/deny are always so.',
                  read_only=_MCP_RESTART),
    ParameterSpec('max_argument_bytes', MAX_ARGUMENT_BYTES,
                  'Largest tool arguments (JSON, bytes) accepted.',
                  minimum=1, maximum=_MAX_BYTES, read_only=_MCP_RESTART),
    ParameterSpec('max_image_bytes', 4 * 1024 * 1024,
                  'Largest saved image returned as MCP image content.', minimum=0,
                  maximum=_MAX_BYTES,
                  read_only=_MCP_RESTART),
    ParameterSpec('max_request_bytes', 1024 * 1024, 'Largest HTTP request body accepted.',
                  minimum=1, maximum=_MAX_BYTES, read_only=_MCP_RESTART),
    ParameterSpec('http_session_idle_s', 600.0, 'Seconds an HTTP session may stay without a '
                  'request in flight before it ends (its client then opens a new one).',
                  above=0.0, maximum=MAX_SECONDS, read_only=_MCP_RESTART),
    ParameterSpec('http_max_sessions', 100, 'Most HTTP sessions open at once. At the cap, the '
                  'session idle the longest is ended for a new client, so abandoned sessions '
                  'never lock clients out; only when every session is busy is a new one '
                  'refused (503).', minimum=1, maximum=_MAX_COUNT, read_only=_MCP_RESTART),
    ParameterSpec('refresh_s', 5.0, 'Seconds between re-reads of the dispatcher settings and '
                  'of which executors are up (catalog and parameter changes are seen at once).',
                  above=0.0, maximum=MAX_SECONDS,
                  read_only=_MCP_RESTART),
    ParameterSpec('discovery_wait_s', 5.0, 'Seconds after start a first tools/list (or call, '
                  'prompt, completion) waits for the dispatcher to be discovered, and then, '
                  'within the same bound and for at most 4 s more, for the executors of its '
                  'tools (a client that connects at launch would otherwise see no tools, or '
                  'working tools marked unavailable); what is not seen by then is listed as '
                  'missing, and the clients are told when the list changes.',
                  minimum=0.0, maximum=3600.0, read_only=_MCP_RESTART),
    ParameterSpec('call_timeout_s', 600.0, 'Safety net: seconds an MCP call waits for ~/call '
                  "before it is cancelled (the dispatcher's own deadlines come first).",
                  above=0.0, maximum=MAX_SECONDS, read_only=_MCP_RESTART),
)

# -- demo nodes (demo.launch.py, bringup --demo) -----------------------------------------------

DEMO_CAMERA = table(
    ParameterSpec('topic', names.DEMO_CAMERA_TOPIC, 'Image topic to publish on.',
                  read_only=_RESTART),
    ParameterSpec('width', 640, 'Frame width in pixels.', minimum=1, maximum=8192,
                  read_only=_RESTART),
    ParameterSpec('height', 480, 'Frame height in pixels.', minimum=1, maximum=8192,
                  read_only=_RESTART),
    ParameterSpec('fps', 15.0, 'Frames per second.', above=0.0, maximum=240.0,
                  read_only=_RESTART),
    ParameterSpec('frame_id', 'front_camera_optical_frame', 'frame_id stamped in each header.',
                  read_only=_RESTART),
)

DEMO_GRIPPER = table(
    ParameterSpec('action', names.DEMO_GRIPPER_ACTION,
                  'Action name (lerobot_tools_interfaces/action/CloseGripper).',
                  read_only='the action server is made at start'),
    ParameterSpec('step_s', 0.2, 'Seconds per closing step.', above=0.0, maximum=60.0,
                  read_only=_RESTART),
)

# What the demo policy says (config/demo_bindings.yaml binds close_gripper); the last call
# is refused (a path outside the output directory), to show a refusal.
DEMO_SCRIPT = [
    'Locate the red cube on the table.\n<say>I can see the red cube. Starting now.</say>',
    'Grasp the cube.\n<tool_call>{"name": "record_observation", '
    '"arguments": {"label": "before_grasp"}}</tool_call>',
    'Lift and place the cube in the bin.\n'
    '[say(text="Placing the cube in the bin."), record_observation(label="after_place")]',
    'Close the gripper on the cube.\n<tool_call>{"name": "close_gripper", '
    '"arguments": {"steps": 4}}</tool_call>',
    'Report to the user.\n<tool_call>{"name": "record_observation", '
    '"arguments": {"label": "../../etc/passwd"}}</tool_call>',
    'Done.\n<say>All done. The cube is in the bin.</say>',
]

SCRIPTED_POLICY = table(
    ParameterSpec('script', DEMO_SCRIPT, 'Generations to publish, in order.',
                  read_only=_RESTART),
    ParameterSpec('interval_s', 2.5, 'Seconds between generations.', above=0.0,
                  maximum=MAX_SECONDS,
                  read_only=_RESTART),
    ParameterSpec('repeat', False, 'Start over after the last generation.', read_only=_RESTART),
    ParameterSpec('output_topic', names.INPUT_TOPIC, 'Topic the generations are published on.',
                  read_only='advertised once at start'),
)

# -- replay (an annotated LeRobot episode as policy output) -------------------------------------

REPLAY = table(
    ParameterSpec('dataset', '', 'Dataset to replay: a directory (v3 layout) or a repo id in '
                  "the local cache; empty: the package's sample dataset.", read_only=_RESTART),
    ParameterSpec('episode', 0, 'Episode index to replay.', minimum=0, maximum=_MAX_COUNT,
                  read_only=_RESTART),
    ParameterSpec('rate', 1.0, 'Speed: 1.0 real time, 2.0 twice as fast.', above=0.0,
                  maximum=1000.0, read_only=_RESTART),
    ParameterSpec('format', 'auto', 'Model format the calls are written in (auto: the <say> '
                  'marker for tools that have one, Hermes <tool_call> otherwise).',
                  choices=REPLAY_FORMATS, read_only=_RESTART),
    ParameterSpec('prose', False, 'Write the plan/subtask rows before the calls of the frame '
                  'where they become active.', read_only=_RESTART),
    ParameterSpec('result_timeout_s', 60.0, 'Seconds to wait for the last results after the '
                  'last step; a call still without one is a failure.', minimum=0.0,
                  maximum=MAX_SECONDS,
                  read_only=_RESTART),
    ParameterSpec('start_delay_s', 0.0, 'Seconds to wait once the dispatcher listens, before '
                  "the first step (a runtime started at the same time: its camera's first "
                  'frames).', minimum=0.0, maximum=3600.0, read_only=_RESTART),
    ParameterSpec('stream_topic', names.STREAM_TOPIC, "The dispatcher's TextChunk topic.",
                  read_only='advertised once at start'),
    ParameterSpec('exit_when_done', True, 'Exit when done (status 1 if a call failed).',
                  read_only=_RESTART),
)

# Node name -> its parameters (tool_server's tools and the dispatcher's per-tool settings
# are added by the generator).
NODES = {
    names.DISPATCHER_NODE: DISPATCHER,
    names.TOOL_SERVER_NODE: TOOL_SERVER,
    names.SPEAKER_NODE: SPEAKER,
    names.MCP_SERVER_NODE: MCP_SERVER,
    'demo_camera': DEMO_CAMERA,
    'demo_gripper': DEMO_GRIPPER,
    'scripted_policy': SCRIPTED_POLICY,
    'replay': REPLAY,
}
