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


"""Input lost before the dispatcher took it: sequence gaps, streams they broke (no ROS)."""

import json

from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import DEFAULT_TOOLS, ToolCatalog
from lerobot_tools_ros.dispatch import DispatchCore, DispatchSettings, effects as fx, ToolSettings
from lerobot_tools_ros.dispatch.input_loss import (
    ANONYMOUS, InputLoss, message_origin, TRACKING_ONE_PUBLISHER, TRACKING_PER_PUBLISHER)
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA

A, B = b'writer-a', b'writer-b'


def _never_asked() -> int:
    raise AssertionError('the publisher count is only needed for anonymous publishers')


def _info(sequence, gid: bytes | None = A) -> dict:
    info = {'source_timestamp': 1, 'received_timestamp': 2,
            'publication_sequence_number': sequence, 'reception_sequence_number': None}
    if gid is not None:
        info['publisher_gid'] = {'implementation_identifier': 'rmw_fastrtps_cpp', 'data': gid}
    return info


def test_message_origin_reads_kilted_jazzy_and_humble_shapes():
    assert message_origin(_info(7)) == (A, 7)  # Kilted: per-writer numbers and the writer id
    assert message_origin(_info(7, gid=None)) == (ANONYMOUS, 7)  # Jazzy: no publisher_gid
    assert message_origin(_info(None)) == (None, None)  # an RMW without sequence numbers
    assert message_origin(None) == (None, None)  # Humble: no MessageInfo at all


def test_gaps_per_publisher_count_exactly_what_was_never_taken():
    loss = InputLoss()
    published = {A: range(1, 101), B: range(1, 51)}
    taken = {A: [1, 2, 3, 40, 41, 100], B: [5, 6, 50]}  # B's first seen is 5: a late joiner
    gaps = []
    for index in range(max(len(v) for v in taken.values())):
        for writer in (A, B):
            if index < len(taken[writer]):
                gaps.append(loss.message('text', writer, taken[writer][index], _never_asked))
    lost_a = len(published[A]) - len(taken[A])
    lost_b = (published[B][-1] - taken[B][0] + 1) - len(taken[B])  # counted from its first
    assert loss.lost == {'text': lost_a + lost_b}
    assert sum(gaps) == lost_a + lost_b
    assert loss.taken == {'text': len(taken[A]) + len(taken[B])}
    assert loss.tracking == TRACKING_PER_PUBLISHER


def test_a_restarted_writer_or_missing_numbers_are_not_loss():
    loss = InputLoss()
    for sequence in (1, 2, 3, 1, 2):  # the same key starting over
        assert loss.message('text', A, sequence, _never_asked) == 0
    assert loss.message('text', None, None, _never_asked) == 0
    assert loss.total_lost == 0 and loss.taken == {'text': 6}


def test_anonymous_gaps_count_only_with_one_publisher():
    loss = InputLoss()
    count = [1]
    for sequence in (1, 2, 5):
        loss.message('text', ANONYMOUS, sequence, lambda: count[0])
    assert loss.lost == {'text': 2}
    assert loss.tracking == TRACKING_ONE_PUBLISHER
    count[0] = 2  # two writers' numbers interleave: 6, 1, 7, 2 ... are not gaps
    for sequence in (6, 1, 7, 2, 9):
        loss.message('text', ANONYMOUS, sequence, lambda: count[0])
    assert loss.lost == {'text': 2}
    assert loss.unattributed > 0


def test_the_warning_is_rate_limited_and_reports_everything_once():
    loss = InputLoss(warn_every_s=10.0)
    assert loss.warning(0.0) is None  # nothing lost
    loss.message('text', A, 1, _never_asked)
    loss.message('text', A, 11, _never_asked)
    line = loss.warning(0.0, lambda topic: '/policy/text')
    assert '9 on /policy/text' in line and '9 in total' in line and 'overflowed' in line
    loss.message('text', A, 20, _never_asked)
    assert loss.warning(5.0) is None  # within 10 s of the last line
    assert loss.warning(10.0, lambda topic: '/policy/text').startswith(
        'input lost: 8 on /policy/text')
    assert loss.warning(30.0) is None  # reported already
    values = loss.values()
    assert values['input_lost'] == 17 and values['input_taken'] == 3
    assert values['input_lost.text'] == 17


def test_streams_open_at_a_gap_are_abandoned_and_their_chunks_discarded():
    loss = InputLoss()
    chunk = lambda seq, gen, final=False, now=0.0: loss.chunk(  # noqa: E731
        'stream', A, seq, _never_asked, gen, final, now, 30.0)
    assert chunk(1, 'g1').take and chunk(2, 'g2').take and chunk(3, 'g1', True).take
    verdict = chunk(9, 'g2')  # 4-8 lost: g2 was open
    assert (verdict.take, verdict.abandon, verdict.headless, verdict.lost) == (
        False, ['g2'], '', 5)
    assert not chunk(10, 'g2').take  # discarded
    assert not chunk(11, 'g2', True).take  # its final: discarding ends
    assert chunk(12, 'g2').take  # a new generation under the same id is parsed
    verdict = chunk(20, 'g3')  # first seen right after a gap: its start may be lost
    assert (verdict.take, verdict.headless, verdict.abandon) == (False, 'g3', ['g2'])
    assert loss.streams_abandoned == 3 and loss.chunks_discarded == 4


def test_an_abandoned_stream_whose_final_was_lost_is_forgotten_when_quiet():
    loss = InputLoss()
    loss.chunk('stream', A, 1, _never_asked, 'g', False, 0.0, 30.0)
    assert not loss.chunk('stream', A, 5, _never_asked, 'g', False, 1.0, 30.0).take
    # 'g' is reused by a later generation after the idle timeout: parsed again.
    assert loss.chunk('stream', A, 6, _never_asked, 'g', False, 40.0, 30.0).take


def test_other_publishers_streams_are_not_touched_by_a_gap():
    loss = InputLoss()
    loss.chunk('stream', B, 1, _never_asked, 'b', False, 0.0, 30.0)
    loss.chunk('stream', A, 1, _never_asked, 'a', False, 0.0, 30.0)
    verdict = loss.chunk('stream', A, 3, _never_asked, 'a', False, 0.0, 30.0)
    assert verdict.abandon == ['a']
    assert loss.chunk('stream', B, 2, _never_asked, 'b', True, 0.0, 30.0).take


def _core() -> DispatchCore:
    echo = json.loads(json.dumps(ECHO_SCHEMA))
    echo['function']['parameters']['required'] = ['text']
    return DispatchCore(ToolCatalog.from_tools([echo, *DEFAULT_TOOLS]), DispatchSettings(),
                        lambda name: ToolSettings(), id_prefix='t')


def test_an_abandoned_stream_gets_one_busy_result_not_a_parse_error():
    core = _core()
    out = core.chunk('g', '<echo>one</echo> and <echo>tw', False, 0.0)
    assert [e.call.name for e in out if isinstance(e, fx.Send)] == ['echo']  # before the loss
    out = core.abandon_stream('g', 'lost 3 chunks', 1.0)
    (result,) = [e for e in out if isinstance(e, fx.PublishResult)]
    assert (result.error_code, result.error_message, result.call.generation_id) == (
        errors.BUSY, 'lost 3 chunks', 'g')
    assert not [e for e in out if isinstance(e, fx.Send)]  # the unfinished call did not run
    chats = [e.message for e in out if isinstance(e, fx.PublishChat)]
    assert chats[0]['role'] == 'assistant' and len(chats[0]['tool_calls']) == 2
    assert chats[-1]['role'] == 'tool' and chats[-1]['tool_call_id'] == result.call.call_id
    assert (core.streams.open_count, core.streams.held) == (0, 0)
    assert core.pending_calls == 1  # the echo still runs
    assert core.abandon_stream('g', 'again', 2.0) == []  # ended already: no second result


def test_a_stream_that_lost_its_start_gets_a_result_without_being_open():
    core = _core()
    out = core.abandon_stream('', 'lost its start', 0.0, only_open=False)
    kinds = [type(e) for e in out]
    assert kinds.count(fx.PublishResult) == 1
    assert kinds.index(fx.PublishChat) < kinds.index(fx.PublishResult)
    assert core.stats['(not in catalog)'].errors_by_code == {errors.BUSY: 1}
