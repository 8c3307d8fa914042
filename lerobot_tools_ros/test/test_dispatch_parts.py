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

"""The dispatch core's parts on their own: call ids, repeat memory, deadlines."""

import math

from lerobot_tools_ros.dispatch.call_ids import CallIds, MAX_CALL_ID_CHARS, RECENT_IDS
from lerobot_tools_ros.dispatch.calls import Call, ToolSettings, ToolState
from lerobot_tools_ros.dispatch.deadlines import CALL, Deadlines, STREAM
from lerobot_tools_ros.dispatch.records import TokenBucket
from lerobot_tools_ros.dispatch.repeats import RecentCalls


def say(call_id: str, text: str) -> Call:
    return Call(call_id, '', 'say', {'text': text}, '', '', 'policy', 0.0)


def say_tool(window_s: float = 5.0) -> ToolState:
    return ToolState(ToolSettings(repeat_window_s=window_s), TokenBucket(0.0, 1, 0.0),
                     frozenset({'text'}))


def test_made_ids_are_unique_and_a_caller_may_not_take_one_in_their_form():
    ids = CallIds('ab')
    made = {ids.new('call_') for _ in range(100)}
    assert len(made) == 100 and all(i.startswith('call_ab') for i in made)
    assert ids.new('').startswith('ab')  # a generation id
    assert 'reserved' in ids.problem('call_ab999999', pending=())
    assert ids.problem('mine-1', pending=()) == ''


def test_an_id_in_use_recently_used_or_too_long_is_refused_and_old_ones_are_forgotten():
    ids = CallIds('x')
    assert 'in use' in ids.problem('mine', pending={'mine'})
    ids.finished('mine')
    assert 'recent call' in ids.problem('mine', pending=())
    assert 'longer than' in ids.problem('m' * (MAX_CALL_ID_CHARS + 1), pending=())
    for n in range(RECENT_IDS):
        ids.finished(f'other-{n}')
    assert ids.problem('mine', pending=()) == ''  # remembered ids are bounded


def test_a_running_or_successful_call_suppresses_its_repeat_within_the_window():
    recent, tool = RecentCalls(), say_tool()
    first = say('c1', 'Hello there')
    assert recent.duplicate_of(first, tool, 0.0) == ''
    recent.running(first)
    again = say('c2', '  hello   THERE ')  # free text compared loosely
    assert 'c1, which is still running' in recent.duplicate_of(again, tool, 1.0)
    assert again.repeat_key is None  # a duplicate is no original for later calls
    recent.finished(first, succeeded=True, now=2.0)
    assert 'finished 1.0 s ago' in recent.duplicate_of(say('c3', 'Hello there'), tool, 3.0)
    assert recent.duplicate_of(say('c4', 'Hello there'), tool, 7.5) == ''  # window passed


def test_a_failed_call_is_forgotten_so_its_retry_runs():
    recent, tool = RecentCalls(), say_tool()
    first = say('c1', 'Hello')
    recent.duplicate_of(first, tool, 0.0)
    recent.running(first)
    recent.finished(first, succeeded=False, now=1.0)
    assert recent.duplicate_of(say('c2', 'Hello'), tool, 1.5) == ''
    assert recent.duplicate_of(say('c3', 'Hello'), say_tool(window_s=0.0), 1.5) == ''


def test_deadlines_come_earliest_first_and_stale_ones_are_skipped():
    deadlines = Deadlines()
    assert deadlines.next_due(lambda *entry: True) == math.inf
    deadlines.push(3.0, CALL, 'late')
    deadlines.push(1.0, CALL, 'stale')
    deadlines.push(2.0, STREAM, 'g1')
    deadlines.push(2.0, CALL, 'same-time')
    assert deadlines.next_due(lambda due, kind, key: key != 'stale') == 2.0
    assert list(deadlines.pop_due(2.5)) == [(2.0, STREAM, 'g1'), (2.0, CALL, 'same-time')]
    assert deadlines.next_due(lambda *entry: True) == 3.0
