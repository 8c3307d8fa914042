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

"""The interface package is built and importable, and its constants match the Python core."""

from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_interfaces.msg import AudioChunk, ErrorCodes, Outcomes, SpeakerStatus, TextChunk
from lerobot_tools_interfaces.msg import ToolCall, ToolResult
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors


def test_error_code_constants_match_the_core():
    from_msg = {getattr(ErrorCodes, name) for name in dir(ErrorCodes)
                if name.isupper() and isinstance(getattr(ErrorCodes, name), str)}
    assert from_msg == set(errors.ALL_CODES)
    assert ErrorCodes.NO_FRAME == errors.NO_FRAME == 'no_frame'


def test_outcome_constants_match_the_core_and_every_answer_carries_one():
    from_msg = {getattr(Outcomes, name) for name in dir(Outcomes)
                if name.isupper() and isinstance(getattr(Outcomes, name), str)}
    assert from_msg == set(errors.ALL_OUTCOMES) == {'not_run', 'ran', 'unknown'}
    for fields in (CallTool.Response.get_fields_and_field_types(),
                   RunTool.Result.get_fields_and_field_types(),
                   ToolResult.get_fields_and_field_types()):
        assert fields['outcome'] == 'string'


def test_message_fields_of_the_contract():
    request_fields = set(CallTool.Request.get_fields_and_field_types())
    assert {'call_id', 'name', 'arguments'} <= request_fields
    assert {'success', 'content', 'error_code', 'error_message'} <= set(
        CallTool.Response.get_fields_and_field_types())
    assert {'header', 'call_id', 'name', 'arguments', 'format', 'generation_id'} <= set(
        ToolCall.get_fields_and_field_types())
    result_fields = ToolResult.get_fields_and_field_types()
    assert result_fields['duration'] == 'builtin_interfaces/Duration'
    assert {'call_id', 'generation_id', 'success', 'error_code', 'error_message'} <= set(
        result_fields)
    audio_fields = AudioChunk.get_fields_and_field_types()
    assert audio_fields['data'] == 'sequence<uint8>'
    assert audio_fields['final'] == 'boolean'
    assert AudioChunk.ENCODING_PCM_S16LE == 'pcm_s16le'
    assert TextChunk.get_fields_and_field_types() == {
        'header': 'std_msgs/Header', 'generation_id': 'string', 'index': 'uint32',
        'text': 'string', 'final': 'boolean'}
    assert {SpeakerStatus.PLAYING, SpeakerStatus.FINISHED, SpeakerStatus.DROPPED} == {
        'playing', 'finished', 'dropped'}


def test_origins_and_durations_of_the_contract():
    from lerobot_tools_interfaces.action import RunTool
    from lerobot_tools_interfaces.msg import ApprovalRequest
    from lerobot_tools_ros.dispatch import core
    assert (ToolCall.ORIGIN_POLICY_TEXT, ToolCall.ORIGIN_POLICY_STREAM,
            ToolCall.ORIGIN_CALL_SERVICE) == (core.ORIGIN_TEXT, core.ORIGIN_STREAM,
                                              core.ORIGIN_CALL)
    assert ToolResult.get_fields_and_field_types()['origin'] == 'string'
    assert ApprovalRequest.get_fields_and_field_types()['timeout'] == \
        'builtin_interfaces/Duration'
    assert 'timeout_s' not in ApprovalRequest.get_fields_and_field_types()
    assert 'source' in RunTool.Goal.get_fields_and_field_types()


def test_enumeration_constants_agree_wherever_they_are_repeated():
    from lerobot_tools_interfaces.action import RunTool
    from lerobot_tools_interfaces.msg import ToolProgress
    from lerobot_tools_ros.dispatch import core
    from lerobot_tools_ros.tools import say

    def constants(cls, prefix):
        return {name: getattr(cls, name) for name in dir(cls) if name.startswith(prefix)}
    # A progress message relays the executor's feedback stage: the same names, the same values.
    assert constants(ToolProgress, 'STAGE_') == constants(RunTool.Feedback, 'STAGE_')
    assert {say.STAGE_SYNTHESIZING, say.STAGE_PLAYING} <= set(
        constants(ToolProgress, 'STAGE_').values())
    # A result carries the origin of its call.
    assert constants(ToolResult, 'ORIGIN_') == constants(ToolCall, 'ORIGIN_')
    assert ToolCall.SOURCE_POLICY == core.POLICY_SOURCE
    assert ToolCall.SOURCE_MCP == 'mcp'
