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
What the result of a call that was stopped while it ran says: what its executor answered.

A cancel, a pause, a replacement or a broken stream stops a call that went to its executor.
Its result waits for the executor's answer, because only that answer tells what the tool did:

- it finished before the stop reached it: its own result (success or failure), outcome ran;
- it honoured the stop: the stop's code (cancelled, paused, ...), and the executor's outcome
  (not_run when it had not started, ran when it stopped part-way);
- no answer within the dispatcher's cancel_timeout_s: answer_lost, outcome unknown (it may
  still be acting).
"""

from dataclasses import dataclass

from .. import errors

__all__ = ['Stop', 'Settled', 'settle', 'unconfirmed']


@dataclass(frozen=True, slots=True)
class Stop:
    """Why a running call is being stopped: the code its result gets if the stop is honoured."""

    code: str
    why: str  # e.g. 'tool use was paused while this call ran'


@dataclass(frozen=True, slots=True)
class Settled:
    """The one result of a stopped call."""

    code: str
    message: str
    content: str
    outcome: str


def settle(stop: Stop, *, success: bool, content: str, error_code: str, error_message: str,
           outcome: str) -> Settled:
    """Return the result of a stopped call from its executor's answer (see the module doc)."""
    outcome = errors.answered_outcome('' if success else error_code, outcome)
    if success:
        return Settled('', '', content, outcome)
    if error_code != errors.CANCELLED:  # it ended on its own before the stop reached it
        return Settled(error_code, f'{error_message} (it ended so before the stop reached it: '
                                   f'{stop.why})', '', outcome)
    if outcome == errors.NOT_RUN:
        return Settled(stop.code, f'{stop.why}; its executor stopped it before it started: it '
                                  'did not run', '', outcome)
    return Settled(stop.code, f'{stop.why}; its executor stopped it while it ran ('
                              f'{error_message})', '', outcome)


def unconfirmed(stop: Stop, waited_s: float) -> Settled:
    """Return the result of a stopped call whose executor did not answer in time."""
    return Settled(errors.ANSWER_LOST, (
        f'{stop.why}; it was being stopped on its executor, which did not answer within '
        f'{waited_s:g} s (cancel_timeout_s): it may have acted, or may still be acting'), '',
        errors.UNKNOWN)


def lost(stop: Stop | None, why: str) -> Settled:
    """Return the result of a sent call whose answer will never come (`why`: what happened)."""
    before = f'{stop.why}; ' if stop is not None else ''
    return Settled(errors.ANSWER_LOST, f'{before}{why}; the call may or may not have run', '',
                   errors.UNKNOWN)
