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
``config/lerobot_tools.yaml``, with ``stream_speech:=true`` on the dispatcher. The policy
publishes a generation as numbered TextChunks and holds its closing markup back until the
speaker reports the utterance playing: the test can only pass when audio comes first.
"""

import json

from conftest import PACKAGE_DIR, spin_until
from lerobot_tools_interfaces.msg import ErrorCodes, SpeakerStatus, TextChunk, ToolCall, ToolResult
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
import soundfile

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


def packaged(*overrides: str) -> list[str]:
    args = ['--params-file', str(PARAMS_FILE)]
    for override in overrides:
        args += ['-p', override]
    return args


class Policy:
    """Publishes generations in 4-character chunks; hears statuses, calls and results."""

    def __init__(self, node) -> None:
        self.node = node
        self.pub = node.create_publisher(TextChunk, '/policy/text_stream', RELIABLE)
        self.statuses: list[SpeakerStatus] = []
        self.results: list[ToolResult] = []
        self.calls: list[ToolCall] = []
        node.create_subscription(SpeakerStatus, '/speaker/status', self.statuses.append,
                                 RELIABLE)
        node.create_subscription(ToolResult, '/lerobot_tools/results', self.results.append,
                                 RELIABLE)
        node.create_subscription(ToolCall, '/lerobot_tools/calls', self.calls.append, RELIABLE)
        self._index = {}

    def publish(self, generation: str, text: str, final: bool = False) -> None:
        pieces = [text[i:i + 4] for i in range(0, len(text), 4)] or ['']
        for count, piece in enumerate(pieces, 1):
            index = self._index[generation] = self._index.get(generation, 0) + 1
            self.pub.publish(TextChunk(generation_id=generation, index=index, text=piece,
                                       final=final and count == len(pieces)))

    def playing(self, known: set) -> str:
        """Return an utterance not in ``known`` that the speaker reports playing, or ''."""
        for status in self.statuses:
            if status.state == SpeakerStatus.PLAYING and status.frames_played \
                    and status.utterance_id not in known:
                return status.utterance_id
        return ''

    def end(self, uid: str) -> SpeakerStatus | None:
        ends = [s for s in self.statuses
                if s.utterance_id == uid and s.state != SpeakerStatus.PLAYING]
        return ends[0] if ends else None


@pytest.fixture
def speech(start_node, ros_node, tmp_path):
    out = tmp_path / 'audio'
    procs = [start_node('lerobot_tools_ros.nodes.speaker',
                        *packaged('sink:=wav', f'output_dir:={out}')),
             start_node('lerobot_tools_ros.nodes.tool_server',
                        *packaged('tools:=[say]', 'tool.say.backend:=espeak_ng')),
             start_node('lerobot_tools_ros.nodes.dispatcher', *packaged('stream_speech:=true'))]
    policy = Policy(ros_node)

    def output() -> str:
        return '\n'.join(f'--- {proc.args[2]}\n{proc.output()[-3000:]}' for proc in procs)

    def up() -> bool:
        services = dict(ros_node.get_service_names_and_types())
        return ('/lerobot_tools/say/_action/send_goal' in services
                and ros_node.count_subscribers('/lerobot_tools/say/text') > 0
                and ros_node.count_subscribers('/policy/text_stream') > 0
                and ros_node.count_publishers('/speaker/status') > 0
                and ros_node.count_publishers('/lerobot_tools/results') > 0)

    assert spin_until(ros_node, up, 60.0), output()
    spin_until(ros_node, lambda: False, 1.0)  # every subscription matched both ways
    return policy, out, output


def test_first_audio_plays_before_the_closing_markup_is_published(speech, ros_node):
    policy, out, output = speech
    known: set = set()
    for generation, (opening, text, closing) in enumerate([  # (a repeat would wait: new texts)
            ('Plan: greet.\n<say>', 'Hello there. Bye now.', '</say>'),
            ('<tool_call>{"name": "say", "arguments": {"text": "', 'On my way. See you.',
             '"}}</tool_call>')]):
        policy.publish(f'g{generation}', opening + text)
        uid = ''

        def heard() -> bool:
            nonlocal uid
            uid = policy.playing(known)
            return bool(uid)
        assert spin_until(ros_node, heard, 20.0), output()  # closing markup not published yet
        known.add(uid)
        assert len(policy.results) == generation
        policy.publish(f'g{generation}', closing, final=True)
        assert spin_until(ros_node, lambda: len(policy.results) > generation, 20.0), output()
        result = policy.results[-1]
        assert result.success, result.error_message
        assert json.loads(policy.calls[-1].arguments) == {'text': text}
        assert json.loads(result.content)['text'] == text  # what say spoke, in segments
        assert spin_until(ros_node, lambda: policy.end(uid) is not None, 10.0)
        assert policy.end(uid).state == SpeakerStatus.FINISHED
        assert soundfile.info(out / f'{uid}.wav').frames == policy.end(uid).frames_played > 0
    assert len(policy.results) == len(policy.calls) == 2


def test_a_malformed_tail_stops_the_speech_with_one_result(speech, ros_node):
    policy, out, output = speech
    policy.publish('m', '<tool_call>{"name": "say", "arguments": {"text": "Hello there. I will '
                   'keep talking about the weather, the garden and the long road home')
    uid = ''

    def heard() -> bool:
        nonlocal uid
        uid = policy.playing(set())
        return bool(uid)
    assert spin_until(ros_node, heard, 20.0), output()
    policy.publish('m', '"}, oops}</tool_call>', final=True)
    assert spin_until(ros_node, lambda: policy.results, 10.0), output()
    assert spin_until(ros_node, lambda: policy.end(uid) is not None, 10.0), output()
    spin_until(ros_node, lambda: len(policy.results) > 1, 1.0)
    [result] = policy.results
    assert result.error_code == ErrorCodes.PARSE_ERROR
    assert "handed to speech in 1 segment(s): 'Hello there. '" in result.error_message
    assert policy.end(uid).state == SpeakerStatus.CANCELLED
