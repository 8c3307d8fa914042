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

"""The call state table: every state is reachable, every call can end, nothing else moves."""

from types import SimpleNamespace

from lerobot_tools_ros.dispatch.states import (CallState, container_problems, IllegalTransition,
                                               next_state, StateEvent, TRANSITIONS)
import pytest


def _reachable(start: CallState) -> set:
    seen, todo = {start}, [start]
    while todo:
        for after in TRANSITIONS[todo.pop()].values():
            if after not in seen:
                seen.add(after)
                todo.append(after)
    return seen


def test_every_state_is_reachable_and_every_call_can_end():
    assert set(TRANSITIONS) == set(CallState)
    assert _reachable(CallState.NEW) == set(CallState)
    for state in CallState:
        assert CallState.FINISHED in _reachable(state), state
    assert TRANSITIONS[CallState.FINISHED] == {}  # one result: nothing follows it


def test_a_move_not_in_the_table_is_refused():
    assert next_state(CallState.SENT, StateEvent.STOP) == CallState.CANCELLING
    with pytest.raises(IllegalTransition, match='a finished call cannot finish'):
        next_state(CallState.FINISHED, StateEvent.FINISH)  # a second result
    with pytest.raises(IllegalTransition, match='a queued call cannot stop'):
        next_state(CallState.QUEUED, StateEvent.STOP)  # nothing to stop on an executor
    with pytest.raises(IllegalTransition):
        next_state(CallState.CANCELLING, StateEvent.SEND)  # a stopped call is not sent again


def test_the_container_check_sees_a_call_held_in_the_wrong_place():
    queued = SimpleNamespace(call_id='a', name='echo', state=CallState.QUEUED)
    waiting = SimpleNamespace(call_id='b', name='echo', state=CallState.WAITING)
    active = {'a': queued, 'b': waiting}
    assert container_problems(active, {'echo': [queued]}, {'echo': [waiting]}) == []
    assert container_problems(active, {}, {'echo': [waiting]}) == [
        "queued calls ['a'] but the containers hold []"]
    assert container_problems(active, {'say': [queued]}, {'echo': [waiting]}) == [
        "a is held under 'say'"]
    finished = SimpleNamespace(call_id='c', name='echo', state=CallState.FINISHED)
    assert container_problems({'c': finished}, {}, {}) == ['c is active as a finished call']


def test_effects_are_carried_out_in_order_and_follow_ups_wait_for_their_batch():
    """A handler's event to the core runs after its batch: effects never interleave."""
    from lerobot_tools_ros.dispatch.effects import EffectRunner
    done: list = []

    def carry_out(effects: list) -> None:
        for effect in effects:
            done.append(effect)
            if effect == 'send a':  # no executor: tell the core, which answers with effects
                runner.follow_up(lambda: ['a waits', 'nested'])
            if effect == 'nested':
                runner.run(['after nested'])

    runner = EffectRunner(carry_out)
    runner.run(['send a', 'publish b'])
    assert done == ['send a', 'publish b', 'a waits', 'nested', 'after nested']
    runner.follow_up(lambda: ['alone'])  # outside a batch: runs at once
    assert done[-1] == 'alone'
