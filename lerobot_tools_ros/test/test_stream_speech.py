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
stream_speech over DDS with the packaged parameters: a say starts before its markup is complete.

speaker (WAV sink), tool_server (say, espeak-ng) and dispatcher run as real processes from
``config/lerobot_tools.yaml``, with ``stream_speech:=true`` on the dispatcher, started once for
the module (CI time: every case goes through the same stack). The policy publishes a generation
as numbered TextChunks and holds its closing markup back until the speaker reports the
utterance playing: the tests can only pass when audio comes first.

The families whose say text the parser reads as it grows are all here: the LeRobot marker,
Hermes/Qwen JSON, Llama 3 JSON, Mistral, OpenAI JSON (its arguments as a JSON string), GLM and
Qwen3-Coder XML. The others (pythonic, ...) are dispatched when the call is complete, as
without ``stream_speech`` (test_parsing_stream_arguments.py).
"""

import json
import os
import sys

from conftest import (node_env, NodeProcess, PACKAGE_DIR, prove_service, reserve_test_domain,
                      spin_until)
from lerobot_tools_interfaces.msg import ErrorCodes, SpeakerStatus, TextChunk, ToolCall, ToolResult
from lerobot_tools_interfaces.srv import CancelCalls
from lerobot_tools_ros.dispatch.recovery import unanswered_calls
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
import soundfile
from std_srvs.srv import SetBool

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
# family: (opening markup, say text, closing markup)
FAMILIES = {
    'lerobot_marker': ('Plan: greet.\n<say>', 'Hello there. Bye now.', '</say>'),
    'hermes': ('<tool_call>{"name": "say", "arguments": {"text": "', 'On my way. See you.',
               '"}}</tool_call>'),
    'llama_json': ('Sure.<|python_tag|>{"name": "say", "parameters": {"text": "',
                   'Picking it up. Almost done.', '"}}<|eom_id|>'),
    'mistral': ('[TOOL_CALLS]say[ARGS]{"text": "', 'Moving left. Stopping here.', '"}'),
    'openai_json': ('{"tool_calls": [{"type": "function", "function": {"name": "say", '
                    '"arguments": "{\\"text\\": \\"', 'Turning around. Facing you now.',
                    '\\"}"}}]}'),
    'glm45': ('<tool_call>say\n<arg_key>text</arg_key>\n<arg_value>', 'Lifting the lid. Lid up.',
              '</arg_value>\n</tool_call>'),
    'qwen3_coder_xml': ('<tool_call>\n<function=say>\n<parameter=text>\n',
                        'Opening the gripper. It is open.',
                        '\n</parameter>\n</function>\n</tool_call>'),
}
LONG_TEXT = ' I will keep talking about the weather, the garden and the long road home'


def packaged(module: str, *overrides: str) -> list[str]:
    args = ['--params-file', str(PARAMS_FILE)]
    for override in overrides:
        args += ['-p', override]
    return [sys.executable, '-m', f'lerobot_tools_ros.nodes.{module}', '--ros-args', *args]


class Stack:
    """The three nodes, and the policy's node: publishes generations, hears what comes back."""

    def __init__(self, domain: int, tmp) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        env = node_env(domain, tmp)
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self.out = tmp / 'audio'
        self.audit = tmp / 'audit.jsonl'
        # realtime:=false: the WAV sink takes audio as it comes (the say waits for no clock).
        # The say rate limit and repeat window are off: the module sends its calls faster than
        # a policy would, and a say that begins like a recent one would wait for its end
        # (repeat suppression: test_dispatch_stream_speech.py), e.g. with --count.
        self.procs = [
            NodeProcess(packaged('speaker', 'sink:=wav', f'output_dir:={self.out}',
                                 'realtime:=false'), env, tmp / 'speaker.log'),
            NodeProcess(packaged('tool_server', 'tools:=[say]', 'tool.say.backend:=espeak_ng'),
                        env, tmp / 'tool_server.log'),
            NodeProcess(packaged('dispatcher', 'stream_speech:=true',
                                 'tool.say.rate_limit_hz:=0.0', 'tool.say.repeat_window_s:=0.0',
                                 f'audit_log:={self.audit}'),
                        env, tmp / 'dispatcher.log')]
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        node = self.node = rclpy.create_node('stream_speech_policy', context=self.context)
        node.executor_for_test = SingleThreadedExecutor(context=self.context)
        node.executor_for_test.add_node(node)
        self.pub = node.create_publisher(TextChunk, '/policy/text_stream', RELIABLE)
        self.statuses: list[SpeakerStatus] = []
        self.results: list[ToolResult] = []
        self.calls: list[ToolCall] = []
        node.create_subscription(SpeakerStatus, '/speaker/status', self.statuses.append,
                                 RELIABLE)
        node.create_subscription(ToolResult, '/lerobot_tools/results', self.results.append,
                                 RELIABLE)
        node.create_subscription(ToolCall, '/lerobot_tools/calls', self.calls.append, RELIABLE)
        self.cancel = node.create_client(CancelCalls, '/dispatcher/cancel')
        self.set_enabled = node.create_client(SetBool, '/dispatcher/set_enabled')
        self._index: dict[str, int] = {}
        self.known: set[str] = set()  # utterances a test already waited for

        def up() -> bool:
            services = dict(node.get_service_names_and_types())
            return ('/lerobot_tools/say/_action/send_goal' in services
                    and node.count_subscribers('/lerobot_tools/say/text') > 0
                    and node.count_subscribers('/policy/text_stream') > 0
                    and node.count_publishers('/speaker/status') > 0
                    and node.count_publishers('/lerobot_tools/results') > 0)
        assert spin_until(node, up, 60.0), self.output()
        # Requests that change nothing prove the operator services' paths both ways.
        prove_service(node, self.set_enabled, SetBool.Request(data=True), output=self.output)
        prove_service(node, self.cancel, CancelCalls.Request(generation_id='no such generation'),
                      output=self.output)
        spin_until(node, lambda: False, 1.0)  # every subscription matched both ways

    def output(self) -> str:
        return '\n'.join(f'--- {proc.args[2]}\n{proc.output()[-3000:]}' for proc in self.procs)

    def generation(self, tag: str) -> str:
        """Return a generation id not used before in this stack."""
        return f'{tag}_{len(self._index)}'

    def publish(self, generation: str, text: str, final: bool = False) -> None:
        """Publish ``text`` in 4-character chunks, numbered on from the generation's last."""
        pieces = [text[i:i + 4] for i in range(0, len(text), 4)] or ['']
        for count, piece in enumerate(pieces, 1):
            index = self._index[generation] = self._index.get(generation, 0) + 1
            self.pub.publish(TextChunk(generation_id=generation, index=index, text=piece,
                                       final=final and count == len(pieces)))

    def playing(self) -> str:
        """Wait until the speaker plays audio of a new utterance; return the utterance id."""
        found = ''

        def heard() -> bool:
            nonlocal found
            # Not one of a say that has its result (the settling says): the streamed one has
            # none yet.
            done = self.known | {json.loads(r.content).get('utterance_id') for r in self.results
                                 if r.success and r.name == 'say'}
            found = next((s.utterance_id for s in self.statuses
                          if s.state == SpeakerStatus.PLAYING and s.frames_played
                          and s.utterance_id not in done), '')
            return bool(found)
        assert spin_until(self.node, heard, 20.0), 'no speech before the closing markup\n' + \
            self.output()
        self.known.add(found)
        return found

    def results_of(self, generation: str, count: int = 1) -> list[ToolResult]:
        """Wait for ``count`` results of ``generation``; return all it has."""
        def mine() -> list[ToolResult]:
            return [r for r in self.results if r.generation_id == generation]
        assert spin_until(self.node, lambda: len(mine()) >= count, 20.0), self.output()
        return mine()

    def call_of(self, call_id: str) -> ToolCall:
        """Wait for the one call message of ``call_id`` (its topic is not ordered with results)."""
        def mine() -> list[ToolCall]:
            return [c for c in self.calls if c.call_id == call_id]
        assert spin_until(self.node, mine, 10.0), self.output()
        [call] = mine()
        return call

    def end(self, uid: str) -> SpeakerStatus:
        """Wait for the one end status of utterance ``uid``."""
        def ends() -> list[SpeakerStatus]:
            return [s for s in self.statuses
                    if s.utterance_id == uid and s.state != SpeakerStatus.PLAYING]
        assert spin_until(self.node, ends, 10.0), self.output()
        [end] = ends()
        return end

    def settle(self, tag: str) -> None:
        """
        Wait until say is idle again: a short say (complete at once) has run.

        A call stopped while it ran keeps its tool busy until its executor has answered the
        stop, after the call's own result; a say that starts then waits for its end instead of
        starting early, which the next test would take for a failure.
        """
        generation = self.generation('settle')
        self.publish(generation, f'<say>Ready after the {tag}.</say>', final=True)
        [result] = self.results_of(generation)
        assert result.success, result.error_message + self.output()

    def request(self, client, request):
        future = client.call_async(request)
        assert spin_until(self.node, future.done, 10.0), self.output()
        return future.result()

    def close(self) -> None:
        import rclpy

        for proc in self.procs:
            proc.stop()
        self.node.executor_for_test.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with reserve_test_domain() as domain:
        running = Stack(domain, tmp_path_factory.mktemp('stream_speech'))
        try:
            yield running
        finally:
            running.close()


@pytest.mark.parametrize('family', sorted(FAMILIES))
def test_first_audio_plays_before_the_closing_markup_is_published(stack, family):
    opening, text, closing = FAMILIES[family]
    generation = stack.generation(family)
    stack.publish(generation, opening + text)
    uid = stack.playing()  # the closing markup is not published yet
    assert not [r for r in stack.results if r.generation_id == generation]
    # Already speaking, so already in the audit log: a dispatcher killed now leaves a call
    # its next start answers (answer_lost), though the call's text is not complete yet.
    [started] = [c for c in unanswered_calls(stack.audit, stack.audit.stat().st_size).calls
                 if c.get('generation_id') == generation]
    assert started['event'] == 'started' and started['name'] == 'say'
    stack.publish(generation, closing, final=True)
    [result] = stack.results_of(generation)
    assert result.success, result.error_message
    call = stack.call_of(result.call_id)
    assert json.loads(call.arguments) == {'text': text}
    content = json.loads(result.content)
    assert content['text'] == text and content['utterance_id'] == uid  # spoken in segments
    end = stack.end(uid)
    assert end.state == SpeakerStatus.FINISHED
    assert soundfile.info(stack.out / f'{uid}.wav').frames == end.frames_played > 0


def test_a_malformed_tail_stops_the_speech_with_one_result(stack):
    generation = stack.generation('malformed')
    stack.publish(generation, '<tool_call>{"name": "say", "arguments": {"text": "Good '
                  'morning.' + LONG_TEXT)
    uid = stack.playing()
    # The closing quote comes first (chunk '"}, '): the text is final there and its rest goes
    # to speech; the tail that follows is malformed and stops it.
    stack.publish(generation, '"}, oops}</tool_call>', final=True)
    [result] = stack.results_of(generation)
    assert result.error_code == ErrorCodes.PARSE_ERROR
    assert ("handed to speech in 2 segment(s): 'Good morning. I will keep talking"
            in result.error_message), result.error_message
    assert stack.end(uid).state == SpeakerStatus.CANCELLED
    stack.settle('malformed tail')


@pytest.mark.parametrize('how', ['cancel', 'pause'])
def test_a_cancel_or_a_pause_while_a_streamed_say_speaks_stops_it_with_one_result(stack, how):
    generation, first = stack.generation(how), f'Stopped by a {how}.'
    stack.publish(generation, '<say>' + first + LONG_TEXT)
    uid = stack.playing()
    try:
        if how == 'cancel':  # the policy's generation, by its id (its call id is not out yet)
            answer = stack.request(stack.cancel, CancelCalls.Request(generation_id=generation))
            assert answer.success and len(answer.cancelled_call_ids) == 1, answer.message
        else:
            answer = stack.request(stack.set_enabled, SetBool.Request(data=False))
            assert answer.message == ('tool use paused; 1 running call(s) stopped on their '
                                      'executor (each result says what it did once its '
                                      'executor answers)')
        [result] = stack.results_of(generation)
        assert result.error_code == {'cancel': ErrorCodes.CANCELLED,
                                     'pause': ErrorCodes.PAUSED}[how], result.error_message
        assert result.outcome == 'ran'  # it had spoken: say confirmed it stopped part-way
        assert f"handed to speech in 1 segment(s): '{first} '" in result.error_message
        assert stack.end(uid).state == SpeakerStatus.CANCELLED
        # The rest of the generation, then a second say: once that one has its result, the
        # stopped call's end went through the dispatcher too, with no second result.
        stack.publish(generation, f' and back.</say>\n<say>Second {how} call.</say>', final=True)
        results = stack.results_of(generation, 2)
        assert [r.call_id for r in results].count(result.call_id) == 1
        assert len(results) == 2
        if how == 'pause':
            assert results[1].error_code == ErrorCodes.PAUSED
        else:
            assert results[1].success, results[1].error_message
            assert json.loads(results[1].arguments) == {'text': f'Second {how} call.'}
        assert stack.end(uid).state == SpeakerStatus.CANCELLED  # still its one end
    finally:
        if how == 'pause':
            stack.request(stack.set_enabled, SetBool.Request(data=True))
    stack.settle(how)
