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
What the dispatch core asks the outside world to do: small values, one class per kind.

The core never publishes, sends or writes anything itself; every event it handles returns a list
of these, in the order they must happen. The node turns each into a ROS operation (or, in tests,
they are inspected directly). Text in them that came from a model or a caller is still raw: the
node makes it safe (`untrusted.ros_string`, `untrusted.log_text`) where it leaves the process.
"""

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .calls import Call


@dataclass(slots=True)
class Send:
    """Send the call to its tool's executor (as a service request or an action goal)."""

    call: 'Call'


@dataclass(slots=True)
class SendText:
    """
    More text of a streamed call's streamable argument (``stream_speech``).

    Follows that call's `Send`; `text` is one or more whole segments safe to speak
    (`dispatch.segments`), or the rest of the text once the argument's value is closed (its
    end is a boundary too); `end`: the call is complete and valid, the text ends here
    (`text` may then be '').
    The executor speaks each as it arrives and answers the call once, after the end.
    """

    call: 'Call'
    text: str
    end: bool


@dataclass(slots=True)
class StopOnExecutor:
    """
    Stop caring about a call that went to its executor, and stop it there if it can be.

    `await_answer`: the core still expects `answered`/`failed` for this call (a cancel, which
    keeps the tool busy until the executor stops); False after a timeout (forget the call).
    """

    call: 'Call'
    reason: str
    await_answer: bool


@dataclass(slots=True)
class PublishCall:
    """Announce an accepted or rejected call (lerobot_tools/calls)."""

    call: 'Call'


@dataclass(slots=True)
class PublishResult:
    """The one result of a call (lerobot_tools/results; answers ~/call too)."""

    call: 'Call'
    error_code: str
    error_message: str
    content: str
    duration_s: float
    # Whether the tool may have acted: errors.NOT_RUN, RAN or UNKNOWN (Outcomes.msg).
    outcome: str = 'not_run'

    @property
    def success(self) -> bool:
        return not self.error_code


@dataclass(slots=True)
class AnswerAgain:
    """Answer a ~/call request that repeats a finished call's id with that call's result."""

    call: 'Call'  # the repeat (its id is the earlier call's)
    earlier: Any  # call_ids.Earlier: the earlier call's result (success, content, outcome...)


@dataclass(slots=True)
class PublishChat:
    """One OpenAI-shaped chat message (lerobot_tools/chat), as a dict."""

    message: dict


@dataclass(slots=True)
class PublishProgress:
    """Progress of a running call, relayed from its executor (lerobot_tools/progress)."""

    call: 'Call'
    stage: str
    progress: float
    detail: str


@dataclass(slots=True)
class RequestApproval:
    """Ask an operator to approve a call (lerobot_tools/approval_requests)."""

    call: 'Call'
    reason: str
    timeout_s: float


@dataclass(slots=True)
class ApprovalClosed:
    """A call no longer waits for approval (`outcome`: approved by ..., denied, paused, ...)."""

    call: 'Call'
    outcome: str


@dataclass(slots=True)
class Audit:
    """One audit-log record: `event` ('call', 'result', 'approval', ...) and its fields."""

    event: str
    fields: dict[str, Any]

    @classmethod
    def of_call(cls, call: 'Call') -> 'Audit':
        """Return the record of a call as it was announced (before its result)."""
        return cls('call', {
            'call_id': call.call_id, 'generation_id': call.generation_id, 'source': call.source,
            'origin': call.origin, 'name': call.name, 'arguments': call.arguments,
            'format': call.format})

    @classmethod
    def of_decision(cls, call: 'Call', approve: bool, decided_by: str, note: str,
                    now: float) -> 'Audit':
        """Return the record of an operator's decision on a call waiting for approval."""
        return cls('approval', {
            'call_id': call.call_id, 'name': call.name, 'approved': approve,
            'decided_by': decided_by, 'note': note, 'waited_s': round(now - call.accepted_at, 3)})

    @classmethod
    def of_result(cls, call: 'Call', code: str, message: str, content: str, outcome: str,
                  elapsed: float) -> 'Audit':
        """Return the record of a call's one result."""
        return cls('result', {
            'call_id': call.call_id, 'generation_id': call.generation_id, 'source': call.source,
            'origin': call.origin, 'name': call.name, 'success': not code, 'content': content,
            'error_code': code, 'error_message': message, 'outcome': outcome,
            'duration_s': elapsed})


@dataclass(slots=True)
class Log:
    """A line for the node's logger; `level` is 'info', 'warning' or 'error'."""

    level: str
    text: str


Effect = Send | SendText | StopOnExecutor | PublishCall | PublishResult | PublishChat \
    | PublishProgress | RequestApproval | ApprovalClosed | Audit | Log


class EffectRunner:
    """
    Carry out batches of effects in the order they were made, never one batch inside another.

    A handler that must tell the core something while a batch is carried out (the node found
    no executor for a `Send`) passes that event to `follow_up`: it runs once the batch is done,
    and the effects it returns are carried out after, so the core is never entered while the
    effects of an earlier event are half carried out.
    """

    def __init__(self, carry_out: Callable[[list], None]) -> None:
        self._carry_out = carry_out
        self._events: deque[Callable[[], list]] = deque()
        self._running = False

    def run(self, effects: list) -> None:
        """Carry out `effects`, then every follow-up event queued meanwhile, in order."""
        if self._running:  # a handler passed effects in: they wait for the current batch
            self._events.append(lambda: effects)
            return
        self._running = True
        try:
            self._carry_out(effects)
            while self._events:
                self._carry_out(self._events.popleft()())
        finally:
            self._running = False

    def follow_up(self, event: Callable[[], list]) -> None:
        """Run `event` (a core event returning effects) after the batch being carried out."""
        if self._running:
            self._events.append(event)
        else:
            self.run(event())
