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
The life of one accepted call as data: its states, the events that move it, one table.

Read `TRANSITIONS` top to bottom to follow a call: it is admitted (`NEW`), may wait for an
operator (`APPROVAL`) or behind earlier calls of its tool (`QUEUED`), is sent to its executor
(`SENT`, or `WAITING` while that executor is missing), may be stopped there (`CANCELLING`: its
result waits for the executor's answer) and ends `FINISHED` with its one result. The core
changes a call's state only through `next_state`, which raises on any move not in the table,
and `container_problems` checks the core's containers against the states of its calls.
"""

from enum import Enum
from typing import Any, Iterable, Mapping


class CallState(str, Enum):
    """Where a call is (its value is the name used in messages and tests)."""

    NEW = 'new'  # made by the core, not through its gates yet
    APPROVAL = 'approval'  # waits for an operator (tool approval: confirm)
    QUEUED = 'queued'  # waits behind an earlier call of its tool (serialize_per_tool)
    WAITING = 'waiting'  # its turn came, but no executor serves its tool yet (polled)
    SENT = 'sent'  # with its executor, which answers it
    CANCELLING = 'cancelling'  # being stopped on its executor: that answer decides its result
    FINISHED = 'finished'  # has its one result

    __hash__ = str.__hash__  # as fast as a str key in the tables (Enum's own is in Python)

    def __str__(self) -> str:
        return self.value


class StateEvent(str, Enum):
    """What happens to a call (what the core does to it, as one word)."""

    HOLD = 'hold'  # approval: confirm, at admission or when its turn comes
    APPROVE = 'approve'  # an operator approved it: it waits its turn like a queued call
    QUEUE = 'queue'  # its tool is busy
    SEND = 'send'  # it goes to its executor
    MISS = 'miss'  # the node found no executor to send it to
    STOP = 'stop'  # stop it on its executor (cancel, pause, replace, stopped speech)
    FINISH = 'finish'  # it gets its result

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return self.value


S, E = CallState, StateEvent
# state -> {event: next state}; a pair not listed is a bug in the core (`IllegalTransition`).
TRANSITIONS: dict[CallState, dict[StateEvent, CallState]] = {
    S.NEW: {E.HOLD: S.APPROVAL, E.QUEUE: S.QUEUED, E.SEND: S.SENT, E.FINISH: S.FINISHED},
    S.APPROVAL: {E.APPROVE: S.QUEUED, E.FINISH: S.FINISHED},
    S.QUEUED: {E.HOLD: S.APPROVAL, E.QUEUE: S.QUEUED, E.SEND: S.SENT, E.FINISH: S.FINISHED},
    S.WAITING: {E.HOLD: S.APPROVAL, E.SEND: S.SENT, E.FINISH: S.FINISHED},
    S.SENT: {E.MISS: S.WAITING, E.STOP: S.CANCELLING, E.FINISH: S.FINISHED},
    S.CANCELLING: {E.FINISH: S.FINISHED},
    S.FINISHED: {},
}
del S, E

# States whose calls hold their tool's turn (serialize_per_tool): the tool is busy.
RUNNING = frozenset({CallState.WAITING, CallState.SENT, CallState.CANCELLING})
# Cancel order: calls not started first, so a released tool never starts a call being cancelled.
CANCEL_ORDER = {CallState.APPROVAL: 0, CallState.QUEUED: 0, CallState.WAITING: 1,
                CallState.SENT: 2}


class IllegalTransition(RuntimeError):
    """The core tried a move the table does not have (a bug: no input can cause it)."""


def next_state(state: CallState, event: StateEvent) -> CallState:
    """Return the state `event` moves a call in `state` to, or raise `IllegalTransition`."""
    try:
        return TRANSITIONS[state][event]
    except KeyError:
        raise IllegalTransition(f'a {state} call cannot {event}') from None


def move(call: Any, event: StateEvent) -> CallState:
    """Move a call (its `state`) by the table; return the state it left. The only way to move."""
    state = call.state
    call.state = next_state(state, event)
    return state


def container_problems(active: Mapping, queues: Mapping[str, Iterable],
                       waiting: Mapping[str, Iterable]) -> list[str]:
    """
    Say where the core's containers disagree with its calls' states ([] when they agree).

    `active`: call id -> every call without a result (no NEW or FINISHED call); `queues`:
    tool -> its QUEUED calls, each once; `waiting`: tool -> its WAITING calls, each once.
    """
    problems = []
    for call_id, call in active.items():
        if call.state in (CallState.NEW, CallState.FINISHED) or call.call_id != call_id:
            problems.append(f'{call_id} is active as a {call.state} call')
    for state, held in ((CallState.QUEUED, queues), (CallState.WAITING, waiting)):
        listed = [call for calls in held.values() for call in calls]
        ids = [call.call_id for call in listed]
        expected = sorted(call.call_id for call in active.values() if call.state == state)
        if sorted(ids) != expected or any(active.get(c.call_id) is not c for c in listed):
            problems.append(f'{state} calls {expected} but the containers hold {sorted(ids)}')
        problems += [f'{call.call_id} is held under {name!r}' for name, calls in held.items()
                     for call in calls if call.name != name]
    return problems
