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
The life of a tool call, from policy text (or a ~/call request) to its one result, without ROS.

`DispatchCore` takes events - text and stream chunks from a policy, calls submitted by other
nodes, what executors did (answered, failed, missing, available, progress), operator actions
(cancel, pause, approve) and clock ticks - and returns effects (`dispatch.effects`): send this
call, stop that one, publish this result or chat message, write this audit record. It never
reads a clock (every event carries `now`, seconds on a monotonic clock), never sleeps and never
blocks; `next_wake()` says when it next needs a `tick`. The node wires ROS to it.

States of an accepted call: waiting for approval -> queued behind earlier calls of its tool ->
sent to its executor (or waiting for the executor to appear) -> finished; `dispatch.states`
holds them and the one table of their transitions, which `states.move` consults. Every call the
core accepts, or rejects, or could not parse, ends in exactly one `PublishResult`.
"""

from collections import deque
import json
import math
from typing import Any, Callable

from . import effects as fx, gates, stream_speech
from .call_ids import CallIds, Earlier, MAX_CALL_ID_CHARS, same_request  # noqa: F401
from .calls import (arguments_text, Call, DispatchSettings, ORIGIN_CALL,  # noqa: F401
                    ORIGIN_STREAM, ORIGIN_TEXT, POLICY_ORIGINS, POLICY_SOURCE, Speech, Stream,
                    stream_key, ToolSettings, ToolState)
from .deadlines import CALL, Deadlines, STREAM
from .outcomes import lost, settle, Settled, Stop, unconfirmed
from .records import (assistant_message, error_code_for_issue, issue_message, TokenBucket,
                      tool_message, ToolStats)
from .repeats import free_text_properties, RecentCalls
from .states import CallState, CANCEL_ORDER, container_problems, move, StateEvent
from .stream_speech import shown
from .streams import Streams
from .. import errors
from ..catalog import decode_arguments_json, ToolArgumentError, ToolCatalog
from ..limits import MAX_TOOL_NAME_CHARS
from ..parameters.declarations import APPROVAL_MODES, DISPATCHER  # noqa: F401 - re-exported
from ..parsing import parse

APPROVAL, QUEUED, WAITING = CallState.APPROVAL, CallState.QUEUED, CallState.WAITING
SENT, CANCELLING = CallState.SENT, CallState.CANCELLING
NOT_IN_CATALOG = '(not in catalog)'
# Why a call not sent yet ends when tool use is paused, by its state (in this order).
_PAUSED_BEFORE_SENT = {
    APPROVAL: 'tool use was paused while this call waited for approval',
    QUEUED: 'tool use was paused before this call started',
    WAITING: 'tool use was paused while this call waited for its executor',
}


def _decode_request(call: 'Call', name: str, arguments: str) -> tuple[str, str, Any]:
    """
    Check a ~/call request's name and decode its arguments: (error code, problem, decoded).

    Every field of the request is bounded (the name, the arguments' size and depth) before
    anything recursive sees it; a refused request keeps only a cut copy of what it sent.
    """
    if len(name) > MAX_TOOL_NAME_CHARS:
        call.name = name[:MAX_TOOL_NAME_CHARS] + '...'
        call.arguments_json = '{}'
        return errors.UNKNOWN_TOOL, (
            f'the tool name is {len(name)} characters long; catalog tool names have at most '
            f'{MAX_TOOL_NAME_CHARS} (shown cut)'), {}
    try:
        return '', '', decode_arguments_json(arguments)
    except Exception as exc:  # noqa: B902 - one bad request must not stop the dispatcher
        if len(arguments) > 256:
            call.arguments_json = arguments[:256] + '...'
        message = exc.message if isinstance(exc, ToolArgumentError) else (
            f'arguments could not be decoded ({type(exc).__name__}); send a JSON object')
        return errors.INVALID_ARGUMENTS, message, call.arguments_json


class DispatchCore:
    """Admission, queues, deadlines, approval and one result per call; effects out, no I/O."""

    def __init__(self, catalog: ToolCatalog, settings: DispatchSettings,
                 tool_settings: Callable[[str], ToolSettings], *, id_prefix: str,
                 describe_executor: Callable[[str], str] = str) -> None:
        self.catalog = catalog
        self.settings = settings
        self.enabled = True
        self.stats: dict[str, ToolStats] = {}
        self._tool_settings = tool_settings
        self._describe_executor = describe_executor
        self._ids = CallIds(id_prefix)
        self._tools: dict[str, ToolState] = {}
        # Calls by state (`dispatch.states`): _active holds every call without a result;
        # _queues its tool's QUEUED calls in order, _waiting its tool's WAITING calls.
        self._active: dict[str, Call] = {}
        self._queues: dict[str, deque] = {}
        self._running_tools: set[str] = set()
        self._waiting: dict[str, list[Call]] = {}  # tool -> calls whose executor is missing
        self._poll_due = math.inf
        self.recent = RecentCalls()  # calls running or done lately, for repeat_window_s
        self.streams = Streams(self)  # streamed generations (TextChunk), their calls and speech
        self.deadlines = Deadlines()
        self._out: list = []

    # -- queries ---------------------------------------------------------------------------

    @property
    def pending_calls(self) -> int:
        """Count calls not yet answered, plus streamed generations not yet finished."""
        return len(self._active) + self.streams.open_count

    def active_calls(self) -> list[Call]:
        """Return the calls that have no result yet."""
        return list(self._active.values())

    @property
    def calls_without_result(self) -> int:
        """Count accepted calls that have no result yet (the max_pending gate counts them)."""
        return len(self._active)

    def waiting_tools(self) -> list[str]:
        """Return tools with calls waiting for their executor to appear (the node polls them)."""
        return list(self._waiting)

    def next_wake(self) -> float | None:
        """Return when the core next needs a `tick` (a deadline or a poll), or None."""
        due = self.deadlines.next_due(self._timer_live)
        if self._waiting:
            due = min(due, self._poll_due)
        return None if due == math.inf else due

    def settings_changed(self, now: float) -> None:
        """Re-read per-tool settings on next use (rate budgets start full again)."""
        self._tools.clear()
        self.streams.settings_changed()

    # -- events: input -----------------------------------------------------------------------

    def text(self, text: str, now: float) -> list:
        """Handle one complete policy generation."""
        generation_id = self._ids.new('')
        result = parse(text, self.catalog, self.settings.formats,
                       max_input_bytes=self.settings.max_input_bytes)
        call_ids = [self._ids.new('call_') for _ in range(len(result.calls) + len(result.errors))]
        issues = list(zip(call_ids[len(result.calls):], result.errors))
        # Every result gets a tool message, so every call the model wrote, even one that could
        # not be parsed (name ''), is listed in the assistant message that goes out first.
        chat_calls = [(call_id, parsed.name, parsed.arguments)
                      for call_id, parsed in zip(call_ids, result.calls)]
        chat_calls += [(call_id, issue.name, {}) for call_id, issue in issues]
        self._out.append(fx.PublishChat(assistant_message(result.content, chat_calls)))
        for call_id, parsed in zip(call_ids, result.calls):
            call = Call(call_id, generation_id, parsed.name, parsed.arguments, '',
                        parsed.format, POLICY_SOURCE, now)
            self.admit(call, parsed.arguments, now)
        for call_id, issue in issues:
            self.refuse_issue(call_id, generation_id, issue, now)
        return self._take()

    def chunk(self, generation_id: str, text: str, final: bool, now: float,
              index: int = 0) -> list:
        """
        Handle one streamed delta of a generation (`final`: the generation ends here).

        `index` is the chunk's TextChunk.index: 1, 2, 3, ... within its generation, or 0 when
        the publisher does not number its chunks. A numbered generation that skips an index
        (a chunk lost), goes back (repeated or out of order), or starts after 1 is ended with
        one `busy` result; it is not parsed with a hole in it. A generation the dispatcher
        ended early (evicted, idle, lost chunks) stays ended: its later chunks are refused and
        counted until its final chunk, or until a chunk numbered 1 starts a new generation.
        """
        self.streams.chunk(stream_key(generation_id), text, final, now, index)
        return self._take()

    def abandon_stream(self, generation_id: str, message: str, now: float, *,
                       only_open: bool = True) -> list:
        """
        End a streamed generation that lost chunks, with one `busy` result instead of parsing.

        Calls it completed before the loss were admitted as usual; what it held unfinished is
        dropped, not parsed into a garbled call. Without an open stream (it lost its start, or
        it already ended) there is a result only when `only_open` is False.
        """
        self.streams.abandon(stream_key(generation_id), message, now, only_open)
        return self._take()

    def submit(self, name: str, arguments: str, now: float, *, source: str,
               call_id: str = '') -> tuple[Call, list]:
        """
        Handle one call from another node (~/call): JSON text arguments, the caller's call id.

        Returns the call (its `call_id` is the one its result will carry) and the effects. A
        request repeating the id of a call that may have acted (same tool and arguments) is
        that call: the running call is returned (its result answers the repeat too), or a
        finished one's result comes again as `AnswerAgain`; nothing runs twice (`call_ids`).
        """
        if call_id:
            repeated = self._repeat_of(call_id, name, arguments, source, now)
            if repeated is not None:
                return repeated, self._take()
        call = Call(call_id or self._ids.new('call_'), '', name, {}, arguments, '', source, now,
                    origin=ORIGIN_CALL, request=arguments)
        problem = self._ids.problem(call_id, self._active) if call_id else ''
        if problem:
            call.call_id = self._ids.new('call_')
        code, decoded = errors.INVALID_ARGUMENTS, arguments
        if not problem:
            code, problem, decoded = _decode_request(call, name, arguments)
        # Like a generation: the assistant message naming the call comes before its result.
        self._out.append(fx.PublishChat({
            **assistant_message('', [(call.call_id, call.name, decoded)]), 'source': source}))
        if problem:
            self._reject(call, code, problem, now)
        else:
            self.admit(call, decoded, now)
        return call, self._take()

    def _repeat_of(self, call_id: str, name: str, arguments: str, source: str,
                   now: float) -> Call | None:
        """Return the call a request with an id in use repeats, or None: a new call."""
        running = self._active.get(call_id)
        if running is not None:
            if not same_request(name, arguments, running.name, running.request):
                return None
            what = 'waits for the running call'
        else:
            earlier = self._ids.earlier(call_id)
            if earlier is None or not same_request(name, arguments, earlier.name,
                                                   earlier.arguments):
                return None
            running = Call(call_id, '', name, {}, arguments, '', source, now, origin=ORIGIN_CALL)
            move(running, StateEvent.FINISH)
            self._out.append(fx.AnswerAgain(running, earlier))
            what = f'answered with its result ({earlier.outcome})'
        self._out.append(fx.Log('info', f'call_id {shown(call_id)} repeated by '
                                        f'{shown(source)}: {what}; nothing runs twice'))
        return running

    def remember(self, call_id: str, earlier: Earlier) -> None:
        """Keep a result an earlier run gave (its audit log): a repeat of the id gets it."""
        self._ids.finished(call_id, earlier)

    # -- events: executors -------------------------------------------------------------------

    def executor_missing(self, call_id: str, now: float) -> list:
        """Hold a call the node could not send (its executor is not there yet) and poll for it."""
        call = self._active.get(call_id)
        if call is not None and call.state == SENT:
            move(call, StateEvent.MISS)
            if call.speech is not None:  # none of its text reached an executor
                stream_speech.not_sent(call.speech)
            self._waiting.setdefault(call.name, []).append(call)
            self._poll_due = min(self._poll_due, now + self.settings.executor_poll_s)
        return self._take()

    def executor_available(self, name: str, now: float) -> list:
        """Send the calls that waited for this tool's executor, which is there now."""
        for call in self._waiting.pop(name, []):
            if self._active.get(call.call_id) is call and call.state == WAITING \
                    and self._still_admitted(call, now):
                move(call, StateEvent.SEND)
                self._out.append(fx.Send(call))
                if call.speech is not None:
                    stream_speech.hand(self, call)
        return self._take()

    def answered(self, call_id: str, now: float, *, success: bool, content: str = '',
                 error_code: str = '', error_message: str = '', outcome: str = '') -> list:
        """
        Take an executor's answer to a call (a late answer after a timeout is dropped).

        `outcome`: whether the tool may have acted, as the executor said (read off the code
        when it said nothing: `errors.answered_outcome`). A call being stopped gets the result
        its answer tells (`dispatch.outcomes.settle`).
        """
        call = self._active.get(call_id)
        if call is not None and call.state == SENT:
            code = '' if success else error_code or errors.EXECUTION_FAILED
            self._finish(call, code, '' if success else (
                error_message or 'the executor reported failure'), now, content=content,
                outcome=errors.answered_outcome(code, outcome))
        elif call is not None and call.state == CANCELLING:
            self._settle(call, settle(call.stop, success=success, content=content,
                                      error_code=error_code or errors.EXECUTION_FAILED,
                                      error_message=error_message, outcome=outcome), now)
        return self._take()

    def progress(self, call_id: str, stage: str, progress: float, detail: str) -> list:
        """Relay progress the executor reported for a running call."""
        call = self._active.get(call_id)
        if call is not None and call.state == SENT:
            self._out.append(fx.PublishProgress(call, stage, progress, detail))
        return self._take()

    # -- events: operators -------------------------------------------------------------------

    def cancel(self, now: float, *, call_id: str = '', generation_id: str = '',
               reason: str = 'cancelled by request') -> list:
        """
        Cancel one call, or every call of a generation.

        A call not sent yet is answered `cancelled` at once; a running one is stopped on its
        executor and answered when the executor says what it did (`_cancel_sent`).
        """
        matches = [call for call in self._active.values() if call.state != CANCELLING
                   and ((call_id and call.call_id == call_id)
                        or (generation_id and call.generation_id == generation_id))]
        # Calls not yet started go first, so a released tool never starts a call being cancelled.
        matches.sort(key=lambda call: CANCEL_ORDER[call.state])
        for call in matches:
            if call.state == SENT:
                self._cancel_sent(call, errors.CANCELLED, reason, f'{reason} while it ran', now)
            else:
                self._drop(call, errors.CANCELLED, f'{reason} before it started; it did not run',
                           now)
        return self._take()

    def set_enabled(self, enabled: bool, now: float) -> list:
        """
        Pause (an e-stop for tool use) or resume.

        Pausing answers every call not yet sent with `paused`, and stops every running call
        on its executor (its goal or request is refused there if it has not started): those
        are answered when their executor says what they did (`paused` when the stop was
        honoured, their own result when they had finished, `answer_lost` without an answer
        in cancel_timeout_s).
        """
        self.enabled = enabled
        if not enabled:
            for call in [c for c in self._active.values() if c.state == SENT]:
                self._cancel_sent(call, errors.PAUSED, 'tool use paused',
                                  'tool use was paused while this call ran', now)
            for state, why in _PAUSED_BEFORE_SENT.items():
                for call in [c for c in self._active.values() if c.state == state]:
                    self._drop(call, errors.PAUSED, why, now)
        return self._take()

    def decide(self, call_id: str, approve: bool, decided_by: str, note: str,
               now: float) -> tuple[bool, list]:
        """
        Take an operator's decision on a call waiting for approval.

        Returns (whether a call with that id was waiting, effects).
        """
        call = self._active.get(call_id)
        if call is None or call.state != APPROVAL:
            return False, self._take()
        self._out.append(fx.Audit.of_decision(call, approve, decided_by, note, now))
        if approve:
            self._out.append(fx.ApprovalClosed(call, f'approved by {decided_by}'))
            call.approved = True
            move(call, StateEvent.APPROVE)  # waits its turn (its approval closed above)
            self._queue_or_start(call, now)
        else:
            self._finish(call, errors.DENIED, f'an operator denied the call ({decided_by}'
                         + (f': {note}' if note and note != decided_by else '') + ')', now,
                         release=False)
        return True, self._take()

    def tick(self, now: float) -> list:
        """Handle every deadline due at `now` (timeouts, idle streams, executor polls)."""
        if self._poll_due <= now:
            self._poll_due = (now + self.settings.executor_poll_s) if self._waiting else math.inf
        for due, kind, key in self.deadlines.pop_due(now):
            if kind == STREAM:
                self.streams.idle_check(key, now)
            elif self._timer_live(due, kind, key):
                self._expire(self._active[key], now)
        return self._take()

    def shutdown(self, now: float) -> list:
        """Give every call without a result its result: the dispatcher is going away."""
        self.streams.shutdown(now)
        for call in list(self._active.values()):
            if call.state in (SENT, CANCELLING):
                self._out.append(fx.StopOnExecutor(call, 'dispatcher shutting down',
                                                   await_answer=False))
                settled = lost(call.stop, 'the dispatcher shut down before its executor '
                                          'answered')
                self._finish(call, settled.code, settled.message, now, release=False,
                             outcome=settled.outcome)
            else:
                self._finish(call, errors.UNAVAILABLE, 'the dispatcher shut down before the '
                             'call was sent; it did not run', now, release=False)
        return self._take()

    # -- admission ---------------------------------------------------------------------------

    def admit(self, call: Call, arguments: Any, now: float) -> None:
        """Run one call through the gates; it is started, queued, held for approval or answered."""
        name = call.name
        try:
            call.arguments = self.catalog.validate(name, arguments)
            call.arguments_json = json.dumps(call.arguments)
        except Exception as exc:  # noqa: B902 - one bad call must not stop the dispatcher
            if not isinstance(exc, ToolArgumentError):
                exc = ToolArgumentError(errors.INVALID_ARGUMENTS, (
                    f'arguments for {name!r} could not be checked ({type(exc).__name__}: '
                    f'{str(exc)[:200]}); the call was refused'))
            if not call.arguments_json:
                call.arguments_json = arguments_text(arguments)
            self._reject(call, exc.error_code, exc.message, now)
            return
        found = gates.verdict(self, call, now, gates.ADMISSION)
        if isinstance(found, gates.Refusal):
            self._reject(call, found.code, found.message, now)
            return
        self._out.append(fx.PublishCall(call))
        self._out.append(fx.Audit.of_call(call))
        self._accept(call, self.tool_state(name, now), now)
        self.recent.running(call)
        if isinstance(found, gates.Hold):
            move(call, StateEvent.HOLD)
            self._out.append(fx.RequestApproval(call, found.reason, call.timeout_s))
            return
        self._queue_or_start(call, now)

    def duplicate_of(self, call: Call, tool: ToolState, now: float) -> str:
        """Return why `call` repeats a running or recent call of its tool, or '' (a gate)."""
        return self.recent.duplicate_of(call, tool, now)

    def busy(self, name: str) -> bool:
        """Whether a call of the tool holds its turn (serialize_per_tool)."""
        return self.settings.serialize_per_tool and name in self._running_tools

    def running_call_id(self, name: str) -> str:
        """Return the id of the call of the tool that holds its turn, for a refusal."""
        for call in self._active.values():
            if call.name == name and call.state in (SENT, WAITING):
                return call.call_id
        return '(being cancelled)'

    def _replace_calls_of(self, call: Call, now: float) -> None:
        """when_busy replace: end the tool's queued calls and cancel its running one."""
        name = call.name
        why = f'replaced by call {call.call_id} (tool.{name}.when_busy is replace)'
        for queued in self._queues.pop(name, ()):
            self._finish(queued, errors.CANCELLED, f'{why}; it did not run', now,
                         release=False)
        for old in [c for c in self._active.values() if c.name == name]:
            if old.state == WAITING:  # never reached its executor
                self._finish(old, errors.CANCELLED, f'{why}; it did not run', now)
            elif old.state == SENT:  # its answer (cancelled on the executor) frees the tool
                self._cancel_sent(old, errors.CANCELLED, 'replaced', why, now)

    def _queue_or_start(self, call: Call, now: float) -> None:
        busy = self.busy(call.name)
        if busy and self.tool_state(call.name, now).settings.when_busy == 'replace':
            self._replace_calls_of(call, now)
        if self.busy(call.name):
            move(call, StateEvent.QUEUE)
            self._queues.setdefault(call.name, deque()).append(call)
            return
        self._start(call, now)

    def _start(self, call: Call, now: float) -> bool:
        """Send a call whose turn has come, if the gates that may have changed still pass."""
        if not self._still_admitted(call, now):
            return False
        self._running_tools.add(call.name)
        move(call, StateEvent.SEND)
        self._out.append(fx.Send(call))
        return True

    def _still_admitted(self, call: Call, now: float) -> bool:
        """
        Re-check, as a call is about to reach its executor, the gates an operator can change.

        A call admitted earlier (queued behind a busy tool, waiting for its executor or for an
        approval) may meet a tool set to `deny` or `confirm`, removed from `allowed_tools` or
        from the catalog since. It then ends with that gate's code (or, for `confirm`, waits
        for an operator like a new call), holding no tool. False: it does not start.
        """
        found = gates.verdict(self, call, now, gates.START)
        if found is None:
            return True
        if isinstance(found, gates.Hold):
            if call.state == WAITING:
                self._release(call.name, now)
            move(call, StateEvent.HOLD)
            self._out.append(fx.RequestApproval(call, found.reason, call.deadline - now))
            return False
        self._finish(call, found.code, found.message, now, release=call.state == WAITING)
        return False

    def _cancel_sent(self, call: Call, code: str, reason: str, why: str,
                     now: float) -> None:
        """
        Stop a running call on its executor; its result waits for the executor's answer.

        Only that answer tells what the tool did (`dispatch.outcomes`); without one within
        cancel_timeout_s the result says it may have acted. Its tool is busy until then.
        """
        self._out.append(fx.StopOnExecutor(call, reason, await_answer=True))
        if call.speech is not None and not call.speech.announced:
            self.announce(call)  # with the text it had when it stopped
        move(call, StateEvent.STOP)
        call.stop = Stop(code, why)
        call.deadline = now + self.settings.cancel_timeout_s
        self.deadlines.push(call.deadline, CALL, call.call_id)

    def _settle(self, call: Call, settled: Settled, now: float) -> None:
        """Give a sent (or stopping) call the result its executor's answer (or loss) tells."""
        self._finish(call, settled.code, settled.message, now, content=settled.content,
                     outcome=settled.outcome)

    def _release(self, name: str, now: float) -> None:
        """Start the next call in a tool's queue (its call finished), or mark the tool idle."""
        queue = self._queues.get(name)
        self._running_tools.discard(name)
        while queue:
            call = queue.popleft()
            if now >= call.deadline:  # its deadline passed while the one before it ran
                self._finish_waited(call, now)
            elif self._start(call, now):
                return

    # -- deadlines ---------------------------------------------------------------------------

    def _expire(self, call: Call, now: float) -> None:
        if call.state == CANCELLING:
            self._out.append(fx.StopOnExecutor(call, 'not confirmed stopped',
                                               await_answer=False))
            self._settle(call, unconfirmed(call.stop, self.settings.cancel_timeout_s), now)
        elif call.state == QUEUED:
            self._queues[call.name].remove(call)
            self._finish_waited(call, now)
        elif call.state == APPROVAL:
            self._finish(call, errors.APPROVAL_TIMEOUT, (
                f'no operator decided within {call.timeout_s:g} s (tool.{call.name}.timeout_s); '
                'approve or deny with the ~/approve service'), now, release=False)
        elif call.state == WAITING:
            self._finish(call, errors.UNAVAILABLE, (
                f'no executor serves {self._describe_executor(call.name)} (waited '
                f"{call.timeout_s:g} s); start a tool_server hosting '{call.name}'"), now)
        elif call.state == SENT:
            self._out.append(fx.StopOnExecutor(call, 'timed out', await_answer=False))
            self._finish(call, errors.TIMEOUT, (
                f"'{call.name}' did not answer within {call.timeout_s:g} s, so it was stopped "
                'on its executor where that is possible (a goal is cancelled; a service request '
                f'runs to its end): it may have partly run; raise tool.{call.name}.timeout_s if '
                'it is expected to be slow'), now, outcome=errors.UNKNOWN)

    def _finish_waited(self, call: Call, now: float) -> None:
        self._finish(call, errors.TIMEOUT, (
            f"waited {now - call.accepted_at:.1f} s behind earlier '{call.name}' calls without "
            f'starting (timeout {call.timeout_s:g} s); raise tool.{call.name}.timeout_s or send '
            'fewer calls'), now, release=False)

    # -- results -----------------------------------------------------------------------------

    def _drop(self, call: Call, code: str, message: str, now: float) -> None:
        """Answer a call that was not sent (approval, queued or waiting for its executor)."""
        if call.state == QUEUED:
            self._queues[call.name].remove(call)
        self._finish(call, code, message, now, release=call.state == WAITING)

    def _reject(self, call: Call, code: str, message: str, now: float) -> None:
        """Answer a call that did not pass a gate: it is announced, then gets its result."""
        move(call, StateEvent.FINISH)
        self._out.append(fx.PublishCall(call))
        self._out.append(fx.Audit.of_call(call))
        self._result(call, code, message, now)

    def _finish(self, call: Call, code: str, message: str, now: float, content: str = '', *,
                release: bool = True, outcome: str = errors.NOT_RUN) -> None:
        """
        Give an accepted call its one result; a started call hands its tool to the next.

        `outcome`: whether its tool may have acted; not_run unless the caller knows the call
        was sent (every path that sends says so).
        """
        del self._active[call.call_id]
        state = move(call, StateEvent.FINISH)
        speech = call.speech
        if speech is not None:
            if code:
                message = f'{message}; {stream_speech.spoken(speech)}'
            if not speech.announced:
                self.announce(call)
        if state == APPROVAL:
            self._out.append(fx.ApprovalClosed(call, code or 'finished'))
        elif state == WAITING:
            waiting = self._waiting.get(call.name, [])
            if call in waiting:
                waiting.remove(call)
            if not waiting:
                self._waiting.pop(call.name, None)
        self.recent.finished(call, not code, now)
        self._result(call, code, message, now, content, outcome)
        if release:
            self._release(call.name, now)

    def _result(self, call: Call, code: str, message: str, now: float,
                content: str = '', outcome: str = errors.NOT_RUN) -> None:
        elapsed = max(0.0, now - call.accepted_at)
        self._ids.finished(call.call_id, Earlier(
            call.name, call.request, code, message, content, outcome)
            if call.origin == ORIGIN_CALL and outcome != errors.NOT_RUN else None)
        key = call.name if call.name in self.catalog else NOT_IN_CATALOG
        (self.stats.get(key) or self.stats.setdefault(key, ToolStats())).record(code, elapsed)
        self._out.append(fx.PublishResult(call, code, message, content, elapsed, outcome))
        chat = tool_message(call.call_id, call.name, not code, content, code, message)
        if call.source != POLICY_SOURCE:
            chat['source'] = call.source
        stream = call.stream
        if stream is not None and not stream.closed:
            stream.held_tool_messages.append(chat)
        else:
            self._out.append(fx.PublishChat(chat))
        self._out.append(fx.Audit.of_result(call, code, message, content, outcome, elapsed))

    def refuse_issue(self, call_id: str, generation_id: str, issue: Any, now: float,
                     stream: Stream | None = None) -> None:
        """Publish the one result of a call the parser could not recover."""
        call = Call(call_id, generation_id, issue.name, {}, '', issue.format, POLICY_SOURCE, now,
                    stream=stream, origin=ORIGIN_STREAM if stream is not None else ORIGIN_TEXT)
        self.refuse(call, error_code_for_issue(issue.code), issue_message(
            issue, self.settings.max_input_bytes, stream.finish_note if stream else ''), now)

    def refuse(self, call: Call, code: str, message: str, now: float) -> None:
        """Give its result to a call that was never accepted (announced already, or not at all)."""
        move(call, StateEvent.FINISH)
        self._result(call, code, message, now)

    # -- streamed calls: dispatch.streams and dispatch.stream_speech ask for these --------

    def emit(self, effect: Any) -> None:
        """Add an effect to those the current event returns."""
        self._out.append(effect)

    def new_id(self, kind: str) -> str:
        """Return a new call ('call_') or generation ('') id."""
        return self._ids.new(kind)

    def is_live(self, call: Call) -> bool:
        """Whether `call` has no result yet."""
        return self._active.get(call.call_id) is call

    def send_early(self, call: Call, tool: ToolState, now: float) -> None:
        """Send a streamed call that `may_start_early` let start (announced once complete)."""
        self._accept(call, tool, now)
        self._running_tools.add(call.name)
        move(call, StateEvent.SEND)
        self._out.append(fx.Send(call))

    def stop_speech(self, call: Call, code: str, message: str, now: float) -> None:
        """Stop a started streamed call (on its executor when it is there) with one result."""
        if call.state == SENT:
            self._cancel_sent(call, code, 'stopped while speaking', message, now)
        else:
            self._drop(call, code, message, now)

    def announce(self, call: Call) -> None:
        """Announce a streamed call once (calls topic, audit, chat), with its text at that time."""
        stream_speech.announced_arguments(call)
        self._out.append(fx.PublishCall(call))
        self._out.append(fx.Audit.of_call(call))

    # -- helpers -----------------------------------------------------------------------------

    def tool_state(self, name: str, now: float) -> ToolState:
        """Return a tool's settings in force and its rate budget (made on first use)."""
        tool = self._tools.get(name)
        if tool is None:
            settings = self._tool_settings(name)
            tool = self._tools[name] = ToolState(
                settings, TokenBucket(settings.rate_limit_hz, settings.burst, now),
                free_text_properties(self.catalog.parameters(name)) if name in self.catalog
                else frozenset())
        return tool

    def _accept(self, call: Call, tool: ToolState, now: float) -> None:
        """Hold an accepted call until its result, with its deadline (approval, queue, run)."""
        call.timeout_s = tool.settings.timeout_s
        call.deadline = now + call.timeout_s
        self._active[call.call_id] = call
        self.deadlines.push(call.deadline, CALL, call.call_id)

    def _timer_live(self, due: float, kind: str, key: str) -> bool:
        if kind == STREAM:
            return self.streams.is_open(key)
        call = self._active.get(key)
        return call is not None and call.deadline == due

    def container_problems(self) -> list[str]:
        """Say where the containers disagree with the calls' states (tests check it is [])."""
        return container_problems(self._active, self._queues, self._waiting)

    def _take(self) -> list:
        out, self._out = self._out, []
        return out
