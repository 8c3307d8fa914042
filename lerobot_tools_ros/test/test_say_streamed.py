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

"""say with a streamed text, in plain Python: each segment is spoken as it arrives."""

import threading

from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.tools.base import CallContext, TextStream
import pytest


@pytest.fixture
def say():
    from lerobot_tools_ros.tools.say import SayTool
    heard = []
    first_audio = threading.Event()

    def on_chunk(piece):
        heard.append(piece)
        if piece.data:
            first_audio.set()

    tool = SayTool(DEFAULT_TOOLS[0], backend='espeak_ng', on_chunk=on_chunk)
    tool.heard, tool.first_audio = heard, first_audio
    yield tool
    tool.close()


def run(tool, context):
    """Run the call in a thread (the tool_server's worker); return (thread, outcome dict)."""
    outcome = {}

    def work():
        try:
            outcome['result'] = tool.call({'text': ''}, context)
        except ToolError as exc:
            outcome['error'] = exc
    thread = threading.Thread(target=work)
    thread.start()
    return thread, outcome


def test_the_first_segment_is_spoken_before_the_rest_of_the_text_exists(say):
    context = CallContext('c', text=TextStream('text'))
    thread, outcome = run(say, context)
    context.text.put('Hello there. ', False)
    assert say.first_audio.wait(10.0)  # audio of the first sentence, the rest still unknown
    assert not [p for p in say.heard if p.final]
    context.text.put('I will pick up the cube now; ', False)
    context.text.put('done.', True)
    thread.join(30.0)
    result = outcome['result']
    assert result['streamed_segments'] == 3
    assert result['text'] == 'Hello there. I will pick up the cube now; done.'
    finals = [p for p in say.heard if p.final]
    assert len(finals) == 1 and not finals[0].cancelled  # one utterance, ended once
    assert {p.utterance_id for p in say.heard} == {result['utterance_id']}


def test_a_cancel_while_waiting_for_text_ends_the_call_cancelled(say):
    context = CallContext('c', text=TextStream('text'))
    thread, outcome = run(say, context)
    context.text.put('Hello there. ', False)
    assert say.first_audio.wait(10.0)
    context.cancel()  # what the dispatcher's stop (malformed tail, pause, ...) arrives as
    thread.join(30.0)
    assert not thread.is_alive()
    assert outcome['error'].code == errors.CANCELLED
    assert say.heard[-1].final and say.heard[-1].cancelled


def test_a_lost_segment_fails_the_call_and_stops_the_utterance(say):
    context = CallContext('c', text=TextStream('text'))
    thread, outcome = run(say, context)
    context.text.put('Hello. ', False)
    context.text.fail('text segment 2 of the streamed call never arrived')
    thread.join(30.0)
    assert outcome['error'].code == errors.EXECUTION_FAILED
    assert 'segment 2' in outcome['error'].message
    assert say.heard[-1].final and say.heard[-1].cancelled


def test_a_text_stream_yields_segments_in_order_until_its_end():
    stream = TextStream('text')
    stream.put('a ', False)
    stream.put('b', True)
    stream.put('ignored', True)
    assert list(stream.pieces(threading.Event())) == ['a ', 'b']
    assert stream.received == 'a b' and stream.whole(threading.Event()) == 'a b'
    cancelled = threading.Event()
    cancelled.set()
    assert TextStream('text').whole(cancelled) is None
