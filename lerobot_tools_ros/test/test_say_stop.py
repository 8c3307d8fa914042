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
``say`` with the packaged parameters: a call lasts until it was heard, and stop means silence.

Every node runs as a real process over DDS with ``config/lerobot_tools.yaml``; the only
overrides are where things go on this machine (espeak-ng instead of ``auto``, which would
spend seconds finding out pocket-tts has no weights offline; a WAV sink in the test's directory,
paced like a sound card by default) and, for one test, the setting under test. What is checked
is what a listener gets: the speaker's own account of each utterance (``SpeakerStatus``: frames
handed to the file, of how many) and the WAV file it wrote, against the call's result.
"""

import asyncio
import json
import sys
import threading

from conftest import PACKAGE_DIR, prove_action, prove_service, spin_until
from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_interfaces.msg import (
    ErrorCodes, SpeakerStatus, ToolCall, ToolProgress, ToolResult)
from lerobot_tools_interfaces.srv import CallTool, CancelCalls
from lerobot_tools_ros.names import READINESS_PROBE
from lerobot_tools_ros.tool_server.host import RosToolHost
import pytest
from rclpy.action import ActionClient
from rclpy.qos import QoSProfile, ReliabilityPolicy
import soundfile
from std_msgs.msg import String
from std_srvs.srv import SetBool
import yaml

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
SAY_ACTION = '/lerobot_tools/say'
# About 12 s of speech each with espeak-ng at the packaged rate; each is cut after about 1 s.
# Different words: the packaged repeat_window_s would answer a repeat `duplicate`.
LONG = {
    'pause': 'Pausing must silence me. I will keep talking about the weather, the garden and '
             'the long road home, and then about the river, the bridge and the old mill, until '
             'somebody stops me, and then I start all over again.',
    'cancel': 'Cancelling must silence me too. Here is a long story about a robot who counted '
              'every cup on every shelf in the kitchen, then every plate, then every spoon in '
              'every drawer, and every fork and knife as well.',
    'timeout': 'A timeout must silence me as well. I list the colours of the blocks: red, '
               'green, blue, yellow, orange, purple and grey, and then the shapes: cubes, '
               'cones, rings, stars and little wooden wheels.',
    'replace': 'A newer sentence may cut me off. I name the fruit in the bowl: apples, pears, '
               'plums, a lemon, two oranges and a bunch of grapes, and then the vegetables in '
               'the basket below, one by one, slowly.',
    'mcp': 'An agent may cancel me from far away. I describe the workshop, the tools on the '
           'wall and the boxes stacked by the door, the bench, the vice and the lamp above it, '
           'and the broom in the corner.',
    'bringup': 'All in one process, a pause must silence me just the same. I count the '
               'windows, the doors, the chairs, the tables and the lamps in every room of the '
               'house, one by one.',
    'other': 'Someone else is speaking now, about the long afternoon, the quiet hall and the '
             'clock that ticks above the door.',
}
SHORT = 'This call ends when you have heard me.'


def packaged(*overrides: str) -> list[str]:
    """ROS arguments: the packaged parameters file, then ``overrides`` (name:=value)."""
    args = ['--params-file', str(PARAMS_FILE)]
    for override in overrides:
        args += ['-p', override]
    return args


def packaged_values(node: str) -> dict:
    config = yaml.safe_load(PARAMS_FILE.read_text())
    return config[f'/**/{node}']['ros__parameters']


class Ear:
    """What the test node hears: the speaker's reports, results, calls and progress."""

    def __init__(self, node) -> None:
        self.statuses: dict[str, list[SpeakerStatus]] = {}
        self.order: list[tuple[str, str]] = []  # (utterance, state) as the reports arrived
        self.results: list[ToolResult] = []
        self.calls: list[ToolCall] = []
        self.progress: list[ToolProgress] = []
        node.create_subscription(SpeakerStatus, '/speaker/status', self._on_status, RELIABLE)
        node.create_subscription(ToolResult, '/lerobot_tools/results', self.results.append,
                                 RELIABLE)
        node.create_subscription(ToolCall, '/lerobot_tools/calls', self.calls.append, RELIABLE)
        node.create_subscription(ToolProgress, '/lerobot_tools/progress', self.progress.append,
                                 RELIABLE)

    def _on_status(self, message: SpeakerStatus) -> None:
        self.statuses.setdefault(message.utterance_id, []).append(message)
        self.order.append((message.utterance_id, message.state))

    def playing(self, known: set, seconds: float) -> str:
        """Return an utterance not in ``known`` of which ``seconds`` were played, or ''."""
        for uid in set(self.statuses) - known:
            if any(s.sample_rate and s.frames_played >= seconds * s.sample_rate
                   for s in self.statuses[uid]):
                return uid
        return ''

    def end(self, uid: str) -> SpeakerStatus | None:
        ends = [s for s in self.statuses.get(uid, []) if s.state != SpeakerStatus.PLAYING]
        assert len(ends) <= 1, ends
        return ends[0] if ends else None

    def result(self, call_id: str) -> ToolResult | None:
        mine = [r for r in self.results if r.call_id == call_id]
        assert len(mine) <= 1, mine  # exactly one result per call
        return mine[0] if mine else None


def played_and_total(status: SpeakerStatus) -> tuple[float, float]:
    return (status.frames_played / status.sample_rate,
            status.frames_total / status.sample_rate)


def assert_silenced(ear: Ear, node, uid: str, out, output) -> float:
    """Check the speaker cut ``uid`` off well before its end; return the seconds played."""
    assert spin_until(node, lambda: ear.end(uid) is not None, 10.0), output()
    end = ear.end(uid)
    assert end.state == SpeakerStatus.CANCELLED, (end, output())
    played, total = played_and_total(end)
    assert total > 10.0, end  # the whole utterance had been synthesized and sent
    assert 0.5 <= played < total / 2, end
    # What reached the file is what the speaker says it played: not the rest.
    frames = soundfile.info(out / f'{uid}.wav').frames
    assert frames == end.frames_played, (frames, end)
    return played


@pytest.fixture
def stack(start_node, ros_node, tmp_path):
    """Start speaker, tool_server (say) and, if asked, dispatcher, all from the params file."""

    def start(*say_overrides: str, dispatcher: bool = True):
        out = tmp_path / 'audio'
        procs = [start_node('lerobot_tools_ros.speaker.node',
                            *packaged('sink:=wav', f'output_dir:={out}')),
                 start_node('lerobot_tools_ros.tool_server.node',
                            *packaged('tools:=[say]', 'tool.say.backend:=espeak_ng',
                                      *say_overrides))]
        if dispatcher:
            procs.append(start_node('lerobot_tools_ros.dispatcher.node', *packaged()))
        ear = Ear(ros_node)

        def output() -> str:
            return '\n'.join(f'--- {proc.args[2]}\n{proc.output()[-3000:]}' for proc in procs)

        def up() -> bool:
            services = dict(ros_node.get_service_names_and_types())
            return (f'{SAY_ACTION}/_action/send_goal' in services
                    and ros_node.count_publishers('/speaker/status') > 0
                    and ros_node.count_subscribers('/speaker/audio') > 0
                    and (not dispatcher or (
                        '/dispatcher/set_enabled' in services
                        and '/dispatcher/cancel' in services
                        and ros_node.count_subscribers('/policy/text') > 0
                        and ros_node.count_publishers('/lerobot_tools/results') > 0)))

        assert spin_until(ros_node, up, 60.0), output()
        spin_until(ros_node, lambda: False, 1.0)  # every subscription matched both ways
        return ear, out, output

    return start


def call_service(node, client, request, timeout: float = 10.0):
    assert spin_until(node, client.service_is_ready, timeout)
    future = client.call_async(request)
    assert spin_until(node, future.done, timeout)
    return future.result()


class Goal:
    """A RunTool goal to the say action; its feedback is kept."""

    def __init__(self, node, client: ActionClient, text: str) -> None:
        self.feedback: list = []
        self.result = None
        sent = client.send_goal_async(
            RunTool.Goal(call_id='g', name='say', arguments=json.dumps({'text': text})),
            feedback_callback=lambda message: self.feedback.append(message.feedback))
        assert spin_until(node, sent.done, 10.0) and sent.result().accepted
        self._result = sent.result().get_result_async()

    def done(self) -> bool:
        return self._result.done()

    def outcome(self):
        return self._result.result().result


def test_a_say_goal_and_a_say_request_end_when_the_audio_was_heard(stack, ros_node):
    ear, out, output = stack(dispatcher=False)
    client = ActionClient(ros_node, RunTool, SAY_ACTION)
    prove_action(ros_node, client, RunTool.Goal(name=READINESS_PROBE))

    goal = Goal(ros_node, client, SHORT)
    assert spin_until(ros_node, goal.done, 30.0), output()
    # The speaker writes the WAV file (aside, then renamed) once the last frame is played:
    # it is there, complete, when the goal ends.
    result = goal.outcome()
    assert result.success, result.error_message
    content = json.loads(result.content)
    wav = out / f'{content["utterance_id"]}.wav'
    assert wav.exists(), (content, output())
    assert content['playback'] == 'finished' and content['playback_detail'] == str(wav)
    heard = soundfile.info(wav)
    assert content['played_s'] == pytest.approx(heard.frames / heard.samplerate, abs=0.01)
    assert content['played_s'] == pytest.approx(content['audio_seconds'], abs=0.01)
    # Progress followed what the speaker played, up to all of it.
    playing = [f.progress for f in goal.feedback if f.stage == 'playing' and f.progress >= 0]
    assert playing and playing == sorted(playing) and playing[-1] == 1.0, goal.feedback

    say = ros_node.create_client(CallTool, SAY_ACTION)
    prove_service(ros_node, say, CallTool.Request(name=READINESS_PROBE))
    future = say.call_async(CallTool.Request(call_id='s', name='say',
                                             arguments=json.dumps({'text': 'And a request.'})))
    assert spin_until(ros_node, future.done, 30.0), output()
    response = future.result()
    assert response.success, response.error_message
    content = json.loads(response.content)
    assert (out / f'{content["utterance_id"]}.wav').exists()
    assert content['playback'] == 'finished'


class Policy:
    """The policy's side: text with <say> in, the dispatcher's answers out."""

    def __init__(self, node, ear: Ear, output) -> None:
        self.node, self.ear, self.output = node, ear, output
        self.text = node.create_publisher(String, '/policy/text', RELIABLE)

    def speak(self, words: str) -> tuple[str, str]:
        """Have the policy say ``words``; return (call id, utterance) once 1 s was played."""
        ear = self.ear
        known, calls = set(ear.statuses), len(ear.calls)
        self.text.publish(String(data=f'Working.\n<say>{words}</say>'))
        assert spin_until(self.node, lambda: len(ear.calls) > calls, 10.0), self.output()
        call_id = ear.calls[-1].call_id
        # With fire-and-forget the call would be answered `ok` here, long before it is heard.
        assert spin_until(self.node, lambda: ear.playing(known, 1.0) or ear.result(call_id),
                          20.0), self.output()
        assert ear.result(call_id) is None, ear.result(call_id)
        return call_id, ear.playing(known, 1.0)

    def answered(self, call_id: str) -> ToolResult:
        assert spin_until(self.node, lambda: self.ear.result(call_id) is not None, 30.0), (
            self.output())
        return self.ear.result(call_id)


def test_pause_cancel_and_a_timeout_through_the_dispatcher_silence_say(stack, ros_node):
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    ear, out, output = stack()
    policy = Policy(ros_node, ear, output)
    speak, answered = policy.speak, policy.answered
    enable = ros_node.create_client(SetBool, '/dispatcher/set_enabled')
    cancel = ros_node.create_client(CancelCalls, '/dispatcher/cancel')

    # Pause: the e-stop for tool use.
    call_id, uid = speak(LONG['pause'])
    paused = call_service(ros_node, enable, SetBool.Request(data=False))
    assert '1 running call(s) stopped on their executor' in paused.message, paused.message
    stopped = answered(call_id)  # once say confirmed it stopped speaking
    assert (stopped.error_code, stopped.outcome) == (ErrorCodes.PAUSED, 'ran'), stopped
    assert_silenced(ear, ros_node, uid, out, output)
    assert call_service(ros_node, enable, SetBool.Request(data=True)).success

    # ~/cancel of that one call.
    call_id, uid = speak(LONG['cancel'])
    cancelled = call_service(ros_node, cancel, CancelCalls.Request(call_id=call_id))
    assert cancelled.success, cancelled.message
    assert answered(call_id).error_code == ErrorCodes.CANCELLED
    assert_silenced(ear, ros_node, uid, out, output)

    # A newer say replaces the one speaking (tool.say.when_busy replace; the default queues).
    set_parameters = ros_node.create_client(SetParameters, '/dispatcher/set_parameters')
    response = call_service(ros_node, set_parameters, SetParameters.Request(
        parameters=[Parameter('tool.say.when_busy', value='replace').to_parameter_msg()]))
    assert response.results[0].successful, response.results[0].reason
    call_id, uid = speak(LONG['replace'])
    calls = len(ear.calls)
    policy.text.publish(String(data='<say>Sorry, one moment.</say>'))
    assert spin_until(ros_node, lambda: len(ear.calls) > calls, 10.0), output()
    newer = ear.calls[-1].call_id
    replaced = answered(call_id)
    assert replaced.error_code == ErrorCodes.CANCELLED, replaced
    assert f'replaced by call {newer}' in replaced.error_message, replaced.error_message
    assert_silenced(ear, ros_node, uid, out, output)
    assert answered(newer).success, answered(newer).error_message

    # The dispatcher's own deadline for say.
    response = call_service(ros_node, set_parameters, SetParameters.Request(
        parameters=[Parameter('tool.say.timeout_s', value=4.0).to_parameter_msg()]))
    assert response.results[0].successful, response.results[0].reason
    call_id, uid = speak(LONG['timeout'])
    assert answered(call_id).error_code == ErrorCodes.TIMEOUT
    assert_silenced(ear, ros_node, uid, out, output)


def test_an_mcp_client_cancelling_say_silences_it(stack, ros_node, ros_env, tmp_path):
    pytest.importorskip('mcp')
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    ear, out, output = stack()
    seen: list[tuple] = []

    async def on_progress(progress: float, total, message) -> None:
        seen.append((progress, total, message))

    async def session() -> str:
        # (Its own defaults: the packaged file's mcp_server section is not what is tested.)
        command = [sys.executable, '-m', 'lerobot_tools_ros.cli', 'mcp']
        params = StdioServerParameters(command=command[0], args=command[1:], env=ros_env)
        with open(tmp_path / 'mcp-stderr.log', 'a') as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await asyncio.wait_for(client.initialize(), 20.0)
                    known = set(ear.statuses)
                    call = asyncio.ensure_future(client.call_tool(
                        'say', {'text': LONG['mcp']}, progress_callback=on_progress))
                    heard = await asyncio.to_thread(
                        spin_until, ros_node, lambda: ear.playing(known, 1.0) or call.done(),
                        30.0)
                    assert heard and not call.done(), (call, output())
                    # What the agent is told follows what the speaker played.
                    assert await asyncio.to_thread(spin_until, ros_node, lambda: any(
                        message.startswith('playing: ') for _, _, message in seen), 5.0), seen
                    call.cancel()  # the SDK sends notifications/cancelled
                    with pytest.raises(asyncio.CancelledError):
                        await call
                    return ear.playing(known, 1.0)

    uid = asyncio.run(session())
    assert_silenced(ear, ros_node, uid, out, output)
    assert spin_until(ros_node, lambda: [r for r in ear.results if r.source == 'mcp'], 10.0)
    (result,) = [r for r in ear.results if r.source == 'mcp']
    assert result.error_code == ErrorCodes.CANCELLED, result


def test_pause_silences_say_when_every_node_runs_in_one_process(start_process, ros_node,
                                                                tmp_path):
    # `bringup`: the packaged parameters file, the dispatcher calling tool_server in process.
    out = tmp_path / 'out'
    proc = start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup',
                          '--tts-backend', 'espeak_ng', '--duration', '300',
                          '--output-dir', str(out)], name='bringup')
    ear = Ear(ros_node)

    def output() -> str:
        return proc.output()[-4000:]

    assert spin_until(ros_node, lambda: (
        '/dispatcher/set_enabled' in dict(ros_node.get_service_names_and_types())
        and ros_node.count_subscribers('/policy/text') > 0
        and ros_node.count_publishers('/speaker/status') > 0), 60.0), output()
    spin_until(ros_node, lambda: False, 1.0)
    policy = Policy(ros_node, ear, output)
    enable = ros_node.create_client(SetBool, '/dispatcher/set_enabled')
    call_id, uid = policy.speak(LONG['bringup'])
    assert call_service(ros_node, enable, SetBool.Request(data=False)).success
    assert policy.answered(call_id).error_code == ErrorCodes.PAUSED
    assert_silenced(ear, ros_node, uid, out / 'audio', output)


class Speaking:
    """Another source of speech on the same speaker: a `say` of this test node, on a thread."""

    def __init__(self, tool, text: str) -> None:
        self.result = None
        self.error = None
        self._thread = threading.Thread(target=self._run, args=(tool, text), daemon=True)
        self._thread.start()

    def _run(self, tool, text: str) -> None:
        from lerobot_tools_ros.errors import ToolError
        try:
            self.result = tool.call({'text': text})
        except ToolError as exc:
            self.error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()


@pytest.mark.parametrize('mode', ['queue', 'replace', 'refuse'])
def test_a_say_while_other_speech_plays_queues_replaces_or_refuses(mode, stack, ros_node):
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.say import SayTool

    overrides = () if mode == 'queue' else (f'tool.say.while_speaking:={mode}',)
    if mode == 'queue':  # the packaged default
        assert packaged_values('tool_server')['tool']['say']['while_speaking'] == 'queue'
    ear, out, output = stack(*overrides, dispatcher=False)
    client = ActionClient(ros_node, RunTool, SAY_ACTION)
    prove_action(ros_node, client, RunTool.Goal(name=READINESS_PROBE))
    other_say = SayTool(DEFAULT_TOOLS[0], backend='espeak_ng')
    try:
        other_say.bind(RosToolHost(ros_node))
        known = set(ear.statuses)
        other = Speaking(other_say, LONG['other'])
        # 2 s into it: the tool_server (another process, maybe slowed by a busy machine) has
        # had time to hear the speaker's reports too; it decides from them alone.
        assert spin_until(ros_node, lambda: ear.playing(known, 2.0), 20.0), output()
        first = ear.playing(known, 2.0)

        goal = Goal(ros_node, client, SHORT)
        assert spin_until(ros_node, lambda: goal.done() and other.done(), 40.0), output()
        result = goal.outcome()
        # The speaker's status topic is not ordered with the action's result: wait for the end.
        assert spin_until(ros_node, lambda: ear.end(first) is not None, 10.0), output()
        first_end = ear.end(first)
        if mode == 'refuse':
            assert result.error_code == ErrorCodes.BUSY, result
            assert first in result.error_message and 'while_speaking' in result.error_message
            assert other.error is None and other.result['playback'] == 'finished'
            assert first_end.state == SpeakerStatus.FINISHED
            assert set(ear.statuses) - known == {first}  # nothing else was played
            return
        assert result.success, result.error_message
        content = json.loads(result.content)
        second = content['utterance_id']
        assert content['playback'] == 'finished'
        assert spin_until(ros_node, lambda: ear.end(second) is not None, 10.0), output()
        assert ear.end(second).state == SpeakerStatus.FINISHED
        if mode == 'queue':
            assert other.error is None and other.result['playback'] == 'finished'
            assert first_end.state == SpeakerStatus.FINISHED
            # The second began only once the first had been played to its end.
            assert ear.order.index((first, 'finished')) < ear.order.index((second, 'playing'))
            assert 'queued' in [f.stage for f in goal.feedback]
        else:  # replace
            assert first_end.state == SpeakerStatus.CANCELLED
            played, total = played_and_total(first_end)
            assert played < total / 2, first_end
            assert other.error is not None and other.error.code == ErrorCodes.CANCELLED
            assert 'cut' in other.error.message, other.error.message
    finally:
        other_say.close()


def test_the_packaged_say_timeout_covers_two_utterances_of_the_longest_text():
    """A say waits for the one before it (serialize_per_tool); both must fit in its timeout."""
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.say import SayTool

    dispatcher = packaged_values('dispatcher')
    say_params = packaged_values('tool_server')['tool']['say']
    assert dispatcher['serialize_per_tool'] is True
    timeout_s = dispatcher['tool']['say']['timeout_s']
    max_chars = say_params.get('max_chars', SayTool.PARAMETERS['max_chars'].default)
    sentence = ('The robot tells everyone in the room what it is doing, step by step, '
                'so that they can follow along. ')
    text = (sentence * (max_chars // len(sentence) + 1))[:max_chars]
    tool = SayTool(DEFAULT_TOOLS[0], backend='espeak_ng', max_chars=max_chars)
    try:
        longest_s = tool.call({'text': text})['audio_seconds']
    finally:
        tool.close()
    assert longest_s > 20.0  # ordinary speech, not a worst case
    assert timeout_s >= 2 * longest_s, (timeout_s, longest_s)
