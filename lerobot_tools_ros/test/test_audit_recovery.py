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
A killed dispatcher's calls are answered once by the next one, from its audit log.

The end-to-end test floods a real dispatcher process (policy text and ~/call), kills it with
SIGKILL, and restarts it on the same audit log: every accepted call then has exactly one result
in the log, every result a subscriber saw before the kill is in the log, and the calls the killed
run left are answered once (answer_lost, outcome unknown), not again by a later start.
"""

from collections import Counter
import json

from conftest import spin_until
from lerobot_tools_interfaces.msg import ToolResult
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.dispatch import AuditLog, read_audit_log
from lerobot_tools_ros.dispatch.recovery import kept_results, recovered_result, \
    unanswered_calls
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


def _line(**record) -> str:
    return json.dumps(record) + '\n'


# -- finding unanswered calls (pure) ---------------------------------------------------------


def test_calls_without_a_result_are_found_oldest_first(tmp_path):
    log = tmp_path / 'audit.jsonl'
    log.write_text(''.join([
        _line(event='call', call_id='a', name='say', wall_time=1.0),
        _line(event='result', call_id='a', success=True),
        _line(event='call', call_id='b', name='say', generation_id='g1', wall_time=2.0),
        _line(event='approval', call_id='b', approved=True),
        _line(event='result', call_id='parse-1', error_code='parse_error'),  # no call record
        _line(event='call', call_id='c', name='echo', source='bt', origin='call_service'),
        _line(event='interjection', text='stop'),
    ]))
    scan = unanswered_calls(log, log.stat().st_size)
    assert [call['call_id'] for call in scan.calls] == ['b', 'c']
    assert (scan.window_start, scan.bad_lines) == (0, 0)


def test_a_call_id_used_again_pairs_each_result_with_one_call(tmp_path):
    log = tmp_path / 'audit.jsonl'
    log.write_text(''.join([
        _line(event='call', call_id='bt-1', name='echo'),
        _line(event='result', call_id='bt-1'),
        _line(event='call', call_id='bt-1', name='echo', arguments={'text': 'second'}),
    ]))
    (call,) = unanswered_calls(log, log.stat().st_size).calls
    assert call['arguments'] == {'text': 'second'}


def test_the_results_of_callers_calls_that_may_have_acted_are_kept_for_their_retries(tmp_path):
    log = tmp_path / 'audit.jsonl'
    log.write_text(''.join([
        _line(event='call', call_id='ran', name='echo', origin='call_service',
              arguments={'text': 'a'}),
        _line(event='result', call_id='ran', content='a', outcome='ran'),
        _line(event='call', call_id='refused', name='echo', origin='call_service'),
        _line(event='result', call_id='refused', error_code='paused', outcome='not_run'),
        _line(event='call', call_id='timed-out', name='echo', origin='call_service'),
        _line(event='result', call_id='timed-out', error_code='timeout', outcome='unknown'),
        _line(event='call', call_id='call_x01', name='say', origin='policy_text'),
        _line(event='result', call_id='call_x01', outcome='ran'),
        _line(event='call', call_id='in-flight', name='echo', origin='call_service',
              arguments={'text': 'b'}),
    ]))
    kept = kept_results(unanswered_calls(log, log.stat().st_size), 100.0)
    assert sorted(kept) == ['in-flight', 'ran', 'timed-out']  # not the one that did not act
    assert (kept['ran'].content, kept['ran'].outcome, kept['ran'].success) == ('a', 'ran', True)
    assert json.loads(kept['ran'].arguments) == {'text': 'a'}
    assert (kept['timed-out'].error_code, kept['timed-out'].outcome) == ('timeout', 'unknown')
    assert (kept['in-flight'].error_code, kept['in-flight'].outcome) == (
        errors.ANSWER_LOST, errors.UNKNOWN)  # what the restarted dispatcher answered


def test_a_streamed_call_sent_before_its_text_was_complete_is_one_call(tmp_path):
    # stream_speech sends a say while its text still arrives (a `started` record), and writes
    # its `call` record once the text is complete.
    log = tmp_path / 'audit.jsonl'
    log.write_text(''.join([
        _line(event='started', call_id='s1', name='say', arguments={'text': ''}),
        _line(event='started', call_id='s1', name='say'),  # sent again: its executor came back
        _line(event='call', call_id='s1', name='say', arguments={'text': 'Hello there.'}),
        _line(event='result', call_id='s1', success=True),
        _line(event='started', call_id='s2', name='say', arguments={'text': ''}),
        _line(event='started', call_id='s3', name='say', arguments={'text': ''}),
        _line(event='call', call_id='s3', name='say', arguments={'text': 'Complete.'}),
    ]))
    calls = unanswered_calls(log, log.stat().st_size).calls
    assert [(c['call_id'], c['event'], c['arguments']) for c in calls] == [
        ('s2', 'started', {'text': ''}), ('s3', 'call', {'text': 'Complete.'})]


def test_corrupt_lines_are_skipped_and_counted_never_fatal(tmp_path):
    log = tmp_path / 'audit.jsonl'
    with open(log, 'wb') as handle:
        handle.write(_line(event='call', call_id='a', name='say').encode())
        handle.write(b'{"event": "result", "call_id": "a", "succ\n')  # cut by a full disk
        handle.write(b'\xff\xfe not text at all\n')
        handle.write(b'[1, 2]\n')
        handle.write(_line(event='call', call_id='b', name='say').encode())
    scan = unanswered_calls(log, log.stat().st_size)
    assert [call['call_id'] for call in scan.calls] == ['a', 'b']
    assert scan.bad_lines == 3


def test_only_the_window_at_the_end_of_a_huge_log_is_read(tmp_path):
    log = tmp_path / 'audit.jsonl'
    old = _line(event='call', call_id='old', name='say', arguments={'text': 'x' * 200})
    recent = _line(event='call', call_id='recent', name='say')
    log.write_text(old * 1000 + recent)
    size = log.stat().st_size
    scan = unanswered_calls(log, size, window_bytes=len(recent) + 100)
    # The window starts inside an old record: that fragment is skipped, not counted as bad.
    assert [call['call_id'] for call in scan.calls] == ['recent']
    assert scan.window_start == size - len(recent) - 100 and scan.bad_lines == 0
    # Records written after the log was opened (this run's) are not read.
    with open(log, 'a') as handle:
        handle.write(_line(event='call', call_id='mine', name='say'))
    assert [c['call_id'] for c in unanswered_calls(log, size).calls][-1] == 'recent'


def test_the_answer_says_when_the_call_was_accepted_and_that_it_may_have_run():
    answer = recovered_result({'call_id': 'c', 'generation_id': 'g', 'source': 'policy',
                               'origin': 'policy_text', 'name': 'say',
                               'wall_time': 1_800_000_000.0}, 1_800_000_010.0)
    assert answer['error_code'] == errors.ANSWER_LOST and answer['outcome'] == errors.UNKNOWN
    assert answer['success'] is False and answer['recovered'] is True
    assert (answer['call_id'], answer['generation_id'], answer['name']) == ('c', 'g', 'say')
    assert answer['duration_s'] == 10.0
    assert '2027-01-15T08:00:00+00:00' in answer['error_message']
    assert 'may or may not have run' in answer['error_message']
    # A record with odd fields still gets an answer.
    odd = recovered_result({'call_id': 'x', 'wall_time': 'yesterday', 'name': 3}, 0.0)
    assert odd['name'] == '' and odd['duration_s'] is None


def test_a_second_holder_of_the_log_does_not_claim_its_calls(tmp_path):
    path = tmp_path / 'audit.jsonl'
    path.write_text(_line(event='call', call_id='a', name='say'))
    first = AuditLog(path)
    second = AuditLog(path)
    try:
        assert first.exclusive and not second.exclusive
        assert first.start_size == second.start_size == path.stat().st_size
    finally:
        first.close()
        second.close()
    third = AuditLog(path)  # the lock went with the first log's file
    assert third.exclusive
    third.close()


# -- a real dispatcher killed during a flood, then restarted ---------------------------------


def _dataset(tmp_path):
    echo = json.loads(json.dumps(ECHO_SCHEMA))
    echo['function']['parameters']['required'] = ['text']  # so the <echo>...</echo> marker applies
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps(
        {'codebase_version': 'v3.0', 'fps': 30, 'features': {}, 'tools': [echo, *DEFAULT_TOOLS]}))
    return root


def _results_per_call(log) -> tuple[Counter, Counter]:
    calls, results = Counter(), Counter()
    for record in read_audit_log(log):
        if record.get('event') == 'call':
            calls[record['call_id']] += 1
        elif record.get('event') == 'result':
            results[record['call_id']] += 1
    return calls, results


def test_sigkill_during_a_flood_then_restart_answers_every_call_once(
        start_node, ros_node, tmp_path):
    root = _dataset(tmp_path)
    log = tmp_path / 'audit.jsonl'
    start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
               '-p', f'dataset:={root}')
    dispatcher_args = ('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={root}',
                       '-p', f'audit_log:={log}', '-p', 'max_pending:=1000',
                       '-p', 'timeout_s:=300.0')
    dispatcher = start_node(*dispatcher_args)
    results: list[ToolResult] = []
    sub = ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append,
                                       RELIABLE)
    pub = ros_node.create_publisher(String, '/policy/text', RELIABLE)
    client = ros_node.create_client(CallTool, '/dispatcher/call')
    ready = spin_until(ros_node, lambda: (
        pub.get_subscription_count() > 0 and ros_node.count_publishers(sub.topic_name) > 0
        and client.service_is_ready()
        and '/lerobot_tools/echo' in dict(ros_node.get_service_names_and_types())), 30.0)
    assert ready, dispatcher.output()
    for _ in range(60):  # discovery handshake: our reader matched before we count
        pub.publish(String(data='<tool_call>{"name": "probe", "arguments": {}}</tool_call>'))
        if spin_until(ros_node, lambda: bool(results), 0.5):
            break
    assert results, dispatcher.output()

    # The flood: generations of policy text and ~/call requests, interleaved.
    futures = []
    for batch in range(30):
        pub.publish(String(data=''.join(f'<echo>{batch}-{i}</echo>' for i in range(10))))
        for i in range(3):
            futures.append(client.call_async(CallTool.Request(
                call_id=f'node-{batch}-{i}', name='echo',
                arguments=json.dumps({'text': f'call {batch}-{i}'}), source='flood')))
    seen_before = len(results)
    spin_until(ros_node, lambda: len(results) >= seen_before + 40, 60.0)
    dispatcher.kill()  # SIGKILL, the whole process group
    spin_until(ros_node, lambda: False, 1.0)  # anything still in flight arrives now
    published = {r.call_id for r in results}
    assert len(published) == len(results)  # one result per call id on the topic
    # ~/call answers a caller got are results that were seen too.
    seen = published | {f.result().call_id for f in futures if f.done() and f.result()}

    # Every result a subscriber saw is in the log; some accepted calls have none.
    calls, answered = _results_per_call(log)
    missing = seen - set(answered)
    assert not missing, f'{len(missing)} published results not audited, e.g. {sorted(missing)[:5]}'
    left = unanswered_calls(log, log.stat().st_size).calls
    left_ids = {call['call_id'] for call in left}
    assert left_ids, 'the kill came after every call was answered: nothing to recover'
    assert not left_ids & seen

    results.clear()
    restarted = start_node(*dispatcher_args)
    assert spin_until(ros_node, lambda: {r.call_id for r in results} >= left_ids, 60.0), (
        len(results), len(left_ids), restarted.output()[-3000:])
    spin_until(ros_node, lambda: False, 0.5)
    recovered = [r for r in results if r.call_id in left_ids]
    assert len(recovered) == len(left_ids)  # once each
    by_id = {call['call_id']: call for call in left}
    for result in recovered:
        call = by_id[result.call_id]
        assert (result.error_code, result.outcome, result.success) == (
            errors.ANSWER_LOST, errors.UNKNOWN, False)
        assert 'may or may not have run' in result.error_message
        assert (result.generation_id, result.name, result.source, result.origin) == (
            call.get('generation_id', ''), call['name'], call['source'], call['origin'])
    assert 'left unanswered by the previous dispatcher' in restarted.output()

    # Every accepted call now has exactly one result in the log.
    calls, answered = _results_per_call(log)
    assert calls, 'no call records'
    extra = {call_id: n for call_id, n in answered.items() if call_id in calls and n != calls[
        call_id]}
    unanswered = set(calls) - set(answered)
    assert not unanswered and not extra, (sorted(unanswered)[:5], list(extra.items())[:5])

    # A caller's retry of its call id after the restart acts once: it gets the result it had
    # (or the answer_lost the restart gave); nothing is accepted a second time.
    done = [f.result() for f in futures if f.done() and f.result() is not None]
    retried = [r for r in done if r.success][:2] + [
        CallTool.Response(call_id=call['call_id'], error_code=errors.ANSWER_LOST,
                          outcome=errors.UNKNOWN)
        for call in left if call.get('origin') == 'call_service'][:2]
    assert retried, 'no ~/call was answered or left in flight by the kill'
    for first in retried:
        again = client.call_async(CallTool.Request(
            call_id=first.call_id, name='echo', source='flood',
            arguments=json.dumps({'text': f'call {first.call_id.removeprefix("node-")}'})))
        assert spin_until(ros_node, again.done, 30.0), restarted.output()[-3000:]
        answer = again.result()
        assert (answer.call_id, answer.error_code, answer.outcome, answer.content) == (
            first.call_id, first.error_code, first.outcome, first.content), answer
    calls_after, answered_after = _results_per_call(log)
    assert all(calls_after[r.call_id] == calls[r.call_id] == 1 for r in retried)
    assert all(answered_after[r.call_id] == 1 for r in retried)

    # A second restart (after a clean stop) finds nothing to answer.
    assert restarted.stop() == 0
    results.clear()
    again = start_node(*dispatcher_args)
    assert spin_until(ros_node, lambda: ros_node.count_publishers(sub.topic_name) > 0, 30.0)
    spin_until(ros_node, lambda: False, 2.0)
    assert not [r for r in results if r.error_code == errors.ANSWER_LOST], again.output()
    assert 'left unanswered by the previous dispatcher' not in again.output()
    assert again.stop() == 0
    calls_after, answered_after = _results_per_call(log)
    assert answered_after == answered and calls_after == calls
