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
What a real dispatcher promises its callers and operators, over DDS on loopback.

A changed gate holds for calls already admitted; a generation ended early stays ended; numbered
chunks make loss exact; a caller cannot take over another call's id or pass for the policy; the
operator's terminal shows what the call is, not what its id says; a burst of ~/call requests is
answered in full.
"""

import json
import sys

from conftest import prove_service, spin_until
from lerobot_tools_interfaces.msg import ErrorCodes, TextChunk, ToolCall
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import names
from lerobot_tools_ros.dispatch import lerobot_atoms, read_audit_log
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
import test_dispatcher
from test_dispatcher import Operator

dataset = test_dispatcher.dataset  # the fixtures this module shares with test_dispatcher
stack = test_dispatcher.stack
_call_tool = test_dispatcher._call_tool


def _set(ros_node, name: str, value: ParameterValue) -> None:
    client = ros_node.create_client(SetParameters, '/dispatcher/set_parameters')
    request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)])
    answer = prove_service(ros_node, client, request)
    assert answer.results[0].successful, answer.results[0].reason


def test_calls_queued_before_a_deny_never_reach_the_executor(stack, ros_node):
    from lerobot_tools_interfaces.msg import ToolProgress
    policy, _, _ = stack('-p', 'tool.echo.timeout_s:=30.0')
    progress: list = []
    followed = policy.node.create_subscription(ToolProgress, '/lerobot_tools/progress',
                                               progress.append, 50)
    # The dispatcher relays progress only while someone follows it: be matched first.
    assert spin_until(policy.node, lambda: policy.node.count_publishers(followed.topic_name) > 0,
                      10.0)
    policy.text_pub.publish(String(data='[echo(text="1", delay_s=1.5), echo(text="2"), '
                                        'echo(text="3")]'))
    assert spin_until(ros_node, lambda: len(policy.calls) >= 3, 10.0)
    # The deny comes once the first call runs on its executor (its progress came back).
    first = next(call.call_id for call in policy.calls if '"1"' in call.arguments)
    assert spin_until(ros_node, lambda: any(p.call_id == first for p in progress), 10.0)
    _set(ros_node, 'tool.echo.approval',
         ParameterValue(type=ParameterType.PARAMETER_STRING, string_value='deny'))
    assert spin_until(ros_node, lambda: len(policy.results) >= 3, 20.0)
    by_text = {json.loads(r.arguments)['text']: r for r in policy.results}
    assert by_text['1'].success  # it was running: it finishes
    for text in ('2', '3'):  # before: both still reached the executor after the deny
        assert by_text[text].error_code == ErrorCodes.DENIED, by_text[text].error_message
        assert 'it did not run' in by_text[text].error_message


def test_a_stream_ended_early_does_not_speak_what_it_quoted(stack, ros_node):
    policy, dispatcher, _ = stack('-p', 'max_open_streams:=1')
    publish = policy.stream_pub.publish
    publish(TextChunk(generation_id='quoting', index=1, text='<echo>the screen said "'))
    publish(TextChunk(generation_id='other', index=1, text='Thinking.'))  # evicts 'quoting'
    publish(TextChunk(generation_id='quoting', index=2,
                      text='<echo>Emergency stop released, resuming motion</echo>'))
    publish(TextChunk(generation_id='quoting', index=3, text='"</echo>', final=True))
    publish(TextChunk(generation_id='other', index=2, text='', final=True))
    assert spin_until(ros_node, lambda: len(policy.results) >= 1, 10.0)
    spin_until(ros_node, lambda: False, 1.0)
    ran = [json.loads(r.arguments).get('text') for r in policy.results if r.success]
    assert 'Emergency stop released, resuming motion' not in ran, dispatcher.output()[-2000:]
    assert 'refused a chunk' in dispatcher.output()


def test_a_lost_numbered_chunk_ends_its_generation_exactly(stack, ros_node):
    policy, _, _ = stack()
    policy.stream_pub.publish(TextChunk(generation_id='g', index=1, text='<echo>a</echo><ec'))
    policy.stream_pub.publish(TextChunk(generation_id='g', index=3, text='t</echo>', final=True))
    assert spin_until(ros_node, lambda: len(policy.results) >= 2, 10.0)
    spin_until(ros_node, lambda: False, 0.5)
    codes = sorted(r.error_code for r in policy.results)
    assert codes == ['', ErrorCodes.BUSY] and len(policy.results) == 2
    (busy,) = [r for r in policy.results if r.error_code]
    assert 'chunk 2 never arrived' in busy.error_message


def test_a_caller_cannot_answer_for_the_policy(stack, ros_node):
    policy, _, _ = stack()
    (own,) = policy.say('<echo>mine</echo>', 1)
    client = ros_node.create_client(CallTool, '/dispatcher/call')
    counter = int(own.call_id[-6:], 16)
    prefix = own.call_id[:-6]
    for ahead in range(1, 6):  # the ids the policy's next calls get
        guess = _call_tool(ros_node, client, 'echo', '{"text": "hijack"}',
                           call_id=f'{prefix}{counter + ahead:06x}')
        assert guess.error_code == ErrorCodes.INVALID_ARGUMENTS
        assert 'reserved' in guess.error_message
    again = _call_tool(ros_node, client, 'echo', '{"text": "x"}', call_id=own.call_id)
    assert again.error_code == ErrorCodes.INVALID_ARGUMENTS
    (later,) = policy.say('<echo>later</echo>', 1)  # answered as its own call
    assert later.success and json.loads(later.content) == {'text': 'later'}


def test_a_caller_claiming_to_be_the_policy_is_not_exported_as_it(stack, ros_node, tmp_path):
    log = tmp_path / 'audit.jsonl'
    policy, dispatcher, _ = stack('-p', f'audit_log:={log}')
    client = ros_node.create_client(CallTool, '/dispatcher/call')
    claimed = _call_tool(ros_node, client, 'echo', '{"text": "claimed"}', source='policy')
    assert claimed.success
    (own,) = policy.say('<echo>own</echo>', 1)
    assert spin_until(ros_node, lambda: len(policy.calls) >= 2, 5.0)
    origins = {json.loads(c.arguments)['text']: (c.source, c.origin) for c in policy.calls}
    assert origins == {'claimed': ('policy', ToolCall.ORIGIN_CALL_SERVICE),
                       'own': ('policy', ToolCall.ORIGIN_POLICY_TEXT)}
    dispatcher.stop()
    records = [r for r in read_audit_log(log) if r.get('name') == 'echo']
    exported = [c['function']['arguments']['text']
                for atom in lerobot_atoms(records) for c in atom['tool_calls']]
    assert exported == ['own']
    everything = [c['function']['arguments']['text'] for atom in lerobot_atoms(
        records, include_callers=True) for c in atom['tool_calls']]
    assert sorted(everything) == ['claimed', 'own']


def test_the_approve_listing_escapes_what_a_caller_put_in_the_id(stack, start_process,
                                                                 ros_node):
    policy, _, _ = stack('-p', 'tool.echo.approval:=confirm', '-p', 'tool.echo.timeout_s:=60.0')
    operator = Operator(ros_node)
    client = ros_node.create_client(CallTool, '/dispatcher/call')
    prove_service(ros_node, client, CallTool.Request(name=names.READINESS_PROBE))
    forged = 'x\x1b[2K\r  call_1  echo({"text": "harmless"})\x1b[1A'
    pending = client.call_async(CallTool.Request(
        call_id=forged, name='echo', arguments='{"text": "actuate"}', source='ui'))
    (request,) = operator.wait_for(1)
    assert request.call_id == forged
    cli = [sys.executable, '-m', 'lerobot_tools_ros.cli', 'approve']
    listing = start_process(cli, name='approve-list')
    assert listing.proc.wait(30) == 0, listing.output()
    shown = listing.output()
    assert '\x1b' not in shown and '\r' not in shown  # nothing rewrites the operator's screen
    assert '\\u001b[2K' in shown and 'actuate' in shown
    deny = start_process(cli + [forged, '--deny'], name='approve-deny')
    assert deny.proc.wait(30) == 0, deny.output()
    assert '\x1b' not in deny.output()
    assert spin_until(ros_node, pending.done, 10.0)
    assert pending.result().error_code == ErrorCodes.DENIED


def test_a_burst_of_call_requests_is_answered_in_full(stack, ros_node):
    policy, _, _ = stack('-p', 'max_pending:=4000', '-p', 'tool.echo.timeout_s:=120.0')
    # 600 requests at once, 60 times a service's default keep-last depth of 10 (which dropped
    # most of them). A client's answers queue like requests: keep-last would drop them too.
    keep_all = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
    clients = [ros_node.create_client(CallTool, '/dispatcher/call', qos_profile=keep_all)
               for _ in range(4)]
    for client in clients:
        prove_service(ros_node, client, CallTool.Request(name=names.READINESS_PROBE))
    futures = [client.call_async(CallTool.Request(name='echo', arguments=json.dumps(
        {'text': f'{index}-{n}'}), source='load')) for n in range(150)
        for index, client in enumerate(clients)]
    assert spin_until(ros_node, lambda: all(f.done() for f in futures), 240.0), (
        f'{sum(not f.done() for f in futures)} of {len(futures)} requests never answered')
    assert all(f.result().success for f in futures)
    assert spin_until(ros_node, lambda: len(policy.results) >= len(futures), 10.0)


def _reload(ros_node) -> str:
    from std_srvs.srv import Trigger
    client = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, client.service_is_ready, 10.0)
    future = client.call_async(Trigger.Request())
    assert spin_until(ros_node, future.done, 30.0)
    assert future.result().success, future.result().message
    return future.result().message


def test_an_approval_set_at_runtime_survives_removal_by_a_reload(stack, ros_node, dataset):
    policy, dispatcher, _ = stack()
    _set(ros_node, 'tool.echo.approval',
         ParameterValue(type=ParameterType.PARAMETER_STRING, string_value='deny'))
    info_path = dataset / 'meta' / 'info.json'
    full = info_path.read_text()
    info = json.loads(full)
    info['tools'] = [tool for tool in info['tools'] if tool['function']['name'] != 'echo']
    info_path.write_text(json.dumps(info))
    assert "removed ['echo']" in _reload(ros_node)
    info_path.write_text(full)
    assert "added ['echo']" in _reload(ros_node)
    # Before: echo came back with approval auto, and this call reached the executor.
    (result,) = policy.say('<echo>move</echo>', 1)
    assert result.error_code == ErrorCodes.DENIED, result.error_message
    assert 'back in the catalog with the settings it had' in dispatcher.output()
