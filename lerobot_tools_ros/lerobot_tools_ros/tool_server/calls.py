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
The calls of one hosted tool: one at a time, in order, at most once per call id, stops first.

`ToolCalls` decides what happens to each call the tool_server takes for its tool, wherever the
call came from (a `RunTool` goal, a `CallTool` request, a caller in this process): the name and
argument checks, the closing and accepting checks, at most once per call id (`CallLedger`: a
repeat of a running call joins it, one of an ended or stopped call gets the first answer), the
queue and its worker thread (tools are not required to be thread-safe), the stops taken right
before a call starts, running the call and turning whatever it raised into an answer
`(error_code, text, outcome)`, and cancelling every call at a pause or at shutdown (each still
gets its answer).

The outcome says whether the tool may have acted: not_run when the call was refused or stopped
before the tool was called, ran once it was called, or what the tool itself said (a binding
whose request went out and whose answer never came: unknown). A cancelled call ends with error
code `cancelled`; a tool's exception becomes an `execution_failed` answer and never ends the
server. The ledger's window and size are the tool_server's call_ids_window_s and call_ids_max.
A streamed call's text arrives while it runs (`context.text`): a tool that speaks segments as
they come declares `STREAMS_TEXT = True`; any other tool is called once the text is whole.

No rclpy here: the node passes what needs ROS as plain callables (a new future to answer with,
the wake of the executor thread its handlers await on, its logger, the catalog's validate).
"""

from dataclasses import dataclass
import json
import queue
import threading
import time
from typing import Any, Callable, Generic, Protocol, TypeVar

from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import ToolArgumentError
from lerobot_tools_ros.tool_server.request import ToolRequest
from lerobot_tools_ros.tools.base import accepts_context, CallContext, Tool
from lerobot_tools_ros.tools.ledger import Answer, CallLedger, STOPPED_MESSAGE
from lerobot_tools_ros.untrusted import log_text

__all__ = ['AnswerFuture', 'CLOSE_TIMEOUT_S', 'Feedback', 'FEEDBACK_MIN_INTERVAL_S', 'Logger',
           'STAGE_QUEUED', 'STAGE_RUNNING', 'ToolCalls']

# RunTool.Feedback.STAGE_* (the interface's message module is kept out of this core; a test
# holds the values equal).
STAGE_QUEUED = 'queued'
STAGE_RUNNING = 'running'
# At shutdown: how long cancelled calls get to finish.
CLOSE_TIMEOUT_S = 5.0
# Feedback of one stage is sent at most this often (a tool may report per audio block); a
# new stage, and the end of one (progress 1), always go out.
FEEDBACK_MIN_INTERVAL_S = 0.02


class AnswerFuture(Protocol):
    """What a call's answer is given through (rclpy's Future, or concurrent.futures')."""

    def set_result(self, result: Any) -> None: ...


class Logger(Protocol):
    """The severities the calls log at (rclpy's node logger, or a `logging.Logger`)."""

    def debug(self, message: str) -> Any: ...

    def info(self, message: str) -> Any: ...

    def warning(self, message: str) -> Any: ...


FutureT = TypeVar('FutureT', bound=AnswerFuture)


@dataclass
class _Job:
    """One validated call waiting for (or running on) the tool's worker thread."""

    call_id: str
    arguments: dict
    context: CallContext
    done: AnswerFuture  # set by the worker: (error_code, text, outcome)
    queued: bool = False  # it waited behind another call (told so in its feedback)
    local: bool = False  # from a caller in this process: no handler on the executor awaits it
    hold_until: float = 0.0  # a goal that waited: not started before (its stop may come)


class Feedback:
    """
    A CallContext report that sends a goal's feedback; never raises, rate-limited.

    `send(stage, progress, detail)` publishes one report (the node: a RunTool feedback).
    """

    def __init__(self, send: Callable[[str, float, str], None], logger: Logger,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._send = send
        self._logger = logger
        self._clock = clock
        self._stage = ''
        self._sent_at = 0.0
        self.closed = False  # the goal has its result: later reports go nowhere

    def __call__(self, stage: str, progress: float, detail: str) -> None:
        now = self._clock()
        repeated = stage == self._stage and progress < 1.0
        if self.closed or (repeated and now - self._sent_at < FEEDBACK_MIN_INTERVAL_S):
            return
        self._stage, self._sent_at = stage, now
        try:
            self._send(str(stage), float(progress), str(detail))
        except Exception as exc:  # noqa: B902 - progress is best effort, never fails the call
            self._logger.debug(f'feedback not sent: {exc!r}')


class ToolCalls(Generic[FutureT]):
    """
    The call lifecycle of one hosted tool, from its checks to its answer.

    `new_future()` makes the future each call is answered through; `validate(name, arguments)`
    is the catalog's (dict or JSON text; raises `ToolArgumentError`); `wake()` wakes the thread
    whose handlers await the futures (it may raise: the executor may be gone); `accepting()`
    is false while a managed tool_server is not active; `service_of(name)` names the service a
    tool of that name would be served at (for the hint of a call that names another tool).
    """

    def __init__(self, tool: Tool, *, new_future: Callable[[], FutureT],
                 validate: Callable[[str, Any], dict], logger: Logger,
                 ledger: CallLedger | None = None, wake: Callable[[], None] = lambda: None,
                 accepting: Callable[[], bool] = lambda: True,
                 service_of: Callable[[str], str] = str,
                 debug_enabled: Callable[[], bool] = lambda: False) -> None:
        self.tool = tool
        self.ledger = ledger  # the call ids it ran, runs or was told to stop
        self.take_stops: Callable[[], None] = lambda: None  # applies the stops that arrived
        self.closing = False  # no new calls are taken
        self.pending = 0  # calls queued or running
        self.worker: threading.Thread | None = None  # runs the queued calls, one at a time
        self._new_future = new_future
        self._validate = validate
        self._logger = logger
        self._wake = wake
        self._accepting = accepting
        self._service_of = service_of
        self._debug_enabled = debug_enabled
        self._jobs: 'queue.SimpleQueue[_Job | None]' = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._contexts: set[CallContext] = set()  # of the calls queued or running

    def start(self) -> None:
        """Start the worker thread that runs the queued calls."""
        self.worker = threading.Thread(target=self._work, daemon=True,
                                       name=f'tool-{self.tool.name}-calls')
        self.worker.start()

    def answered(self, answer: Answer) -> FutureT:
        """Return a future that already holds `answer` (a call refused where it arrived)."""
        future = self._new_future()
        future.set_result(answer)
        return future

    def name_refusal(self, requested: str) -> Answer | None:
        """Refuse a call that names another tool than the one hosted here ('' : this one)."""
        name = self.tool.name
        if not requested or requested == name:
            return None
        return (errors.UNKNOWN_TOOL, (
            f"this service hosts '{name}', but the request names '{requested}'; call "
            f'{self._service_of(requested)} instead'), errors.NOT_RUN)

    def submit_text(self, call_id: str, name: str, arguments: str, source: str,
                    context: CallContext, **options: Any) -> FutureT:
        """
        Submit a call whose arguments are JSON text (as a goal or request brings them).

        This is where a call crosses from DDS, so its arguments are checked here, once; a
        refused one is answered at once (the future is done on return), in the order `submit`
        checks: the tool's name first, then its arguments.
        """
        refusal = self.name_refusal(name)
        if refusal is None:
            try:
                decoded = self._validate(self.tool.name, arguments or '{}')
            except ToolArgumentError as exc:
                refusal = (exc.error_code, exc.message, errors.NOT_RUN)
        if refusal is not None:
            return self.answered(refusal)
        return self.submit(ToolRequest(call_id, name, decoded, source, validated=True),
                           context, **options)

    def submit(self, request: ToolRequest, context: CallContext, *, inline: bool = False,
               local: bool = False, hold_until: float = 0.0) -> FutureT:
        """
        Check a call and queue it for the worker; the future gives (code, text, outcome).

        `request.arguments` are validated here unless `request.validated` says they were,
        against this catalog's schema of the tool (at the DDS boundary, or by a caller in this
        process with the same schema).

        `inline`: when no call of the tool is queued or running, run this one now on the
        calling thread (the tool's executor thread; the future is done on return). Only for
        service requests: only a stop (taken on its own thread) cancels them, and the executor
        thread is free again before a goal or cancel request could need it (while the tool is
        idle none is pending).
        `local`: the caller is in this process (`HostedToolOffer`) and takes the answer from the
        future's callback, so the tool's executor thread need not wake for it.
        `hold_until`: a call that waited before it was taken (`executors.goal_ids`) does not start
        before this time (on the worker, never inline), so a stop sent after it, and still on
        its way, wins.
        """
        refusal = self._refusal(request)
        if isinstance(refusal, tuple):
            return self.answered(refusal)
        arguments = refusal
        answer = self._new_future()
        if not self._first(request.call_id, context, answer, local):
            return answer
        with self._lock:
            waits = self.pending > 0
            self.pending += 1
            self._contexts.add(context)
            inline = inline and not waits and hold_until <= time.monotonic()
            if not inline:
                self._jobs.put(_Job(request.call_id, arguments, context, answer, queued=waits,
                                    local=local, hold_until=hold_until))
        if inline:
            self.take_stops()  # the last moment before the tool starts: stops first
            outcome = self.execute(arguments, request.call_id, context) \
                if not context.cancelled.is_set() else self._stopped_before_start()
            self._end(request.call_id, context, answer, outcome)
        elif waits:
            context.feedback(STAGE_QUEUED, -1.0,
                             f"waiting for an earlier '{self.tool.name}' call to finish")
        return answer

    def _refusal(self, request: ToolRequest) -> Answer | dict:
        """Return the answer of a call refused before it was taken, else its arguments."""
        name = self.tool.name
        refusal = self.name_refusal(request.name)
        if refusal is not None:
            return refusal
        arguments = request.arguments
        if not request.validated:
            try:
                arguments = self._validate(name, arguments)
            except ToolArgumentError as exc:
                return (exc.error_code, exc.message, errors.NOT_RUN)
        with self._lock:
            if self.closing:
                return (errors.UNAVAILABLE, (
                    f"the tool_server hosting '{name}' is shutting down; the call did not run"),
                    errors.NOT_RUN)
        if not self._accepting():
            return (errors.PAUSED, (
                f"the tool_server hosting '{name}' is not active (managed node); the call "
                'did not run'), errors.NOT_RUN)
        return arguments

    def _first(self, call_id: str, context: CallContext, answer: FutureT, local: bool) -> bool:
        """
        Return True when this is the first call with its id; else answer it as the first was.

        A repeat of a running call gets that call's answer when it ends; one of an ended (or
        stopped) call gets the first answer now. Nothing runs twice.
        """
        ledger = self.ledger
        if ledger is None:
            return True

        def joined(first: Answer) -> None:  # on the thread that ended the first call
            answer.set_result(first)
            if not local:
                self._wake_handlers()

        claim = ledger.claim(call_id, context, joined)
        if claim.first:
            return True
        stopped = claim.answer is not None and claim.answer[1] == STOPPED_MESSAGE
        self._logger.info(f'{self.tool.name} call {log_text(call_id, 80)}: ' + (
            'its caller stopped it before it arrived; not run' if stopped else
            'a repeat of a call id it has already taken; answered as the first, not run again'))
        if claim.answer is not None:
            answer.set_result(claim.answer)
        return False

    def _wake_handlers(self) -> None:
        """Wake the tool's executor thread: a handler awaiting an answer resumes there."""
        try:
            self._wake()
        except Exception as exc:  # noqa: B902 - the executor may be shutting down
            self._logger.debug(f'{self.tool.name}: could not wake executor: {exc!r}')

    def _work(self) -> None:
        """Worker thread: run the tool's calls one at a time until a None job arrives."""
        while True:
            job = self._jobs.get()
            if job is None:
                return
            remaining = job.hold_until - time.monotonic()
            if remaining > 0:  # it waited: a stop sent after it may still be on its way
                job.context.cancelled.wait(remaining)  # (the stop listener cancels it)
            self.take_stops()  # the last moment before the tool starts: stops first
            if job.context.cancelled.is_set():
                outcome = self._stopped_before_start()
            else:
                if job.queued:
                    job.context.feedback(STAGE_RUNNING, -1.0, 'started')
                outcome = self.execute(job.arguments, job.call_id, job.context)
            self._end(job.call_id, job.context, job.done, outcome)
            if job.local:
                continue  # a caller in this process got it from the future's callback
            self._wake_handlers()  # the awaiting handler resumes on the executor thread

    def _stopped_before_start(self) -> Answer:
        return (errors.CANCELLED, (f"'{self.tool.name}' call cancelled before it started; it "
                                   'did not run'), errors.NOT_RUN)

    def _end(self, call_id: str, context: CallContext, answer: AnswerFuture,
             outcome: Answer) -> None:
        """Answer a call that was taken; repeats that joined it get the same answer."""
        with self._lock:
            self.pending -= 1
            self._contexts.discard(context)
        answer.set_result(outcome)
        if self.ledger is not None:
            self.ledger.finish(call_id, outcome)

    def execute(self, arguments: dict, call_id: str, context: CallContext) -> Answer:
        """
        Run one call; return ('', content, ran) or (error_code, error_message, outcome).

        The outcome is ran once the tool was called, unless the tool says otherwise (a
        `ToolError` with an outcome: a binding that sent nothing, or lost the robot's answer).
        """
        tool = self.tool
        started = time.monotonic()
        called = errors.NOT_RUN  # until the tool is called: refused before it could act
        try:
            if context.text is not None and not getattr(tool, 'STREAMS_TEXT', False):
                whole = context.text.whole(context.cancelled)  # a tool that takes whole texts
                if whole is None:
                    raise errors.ToolError(errors.CANCELLED, (
                        f"'{tool.name}' call cancelled while its text was still arriving; it "
                        'did not run'), errors.NOT_RUN)
                arguments = self._validate(tool.name, {**arguments, context.text.argument: whole})
            call: Callable[..., str | dict] = tool.call  # (Tool.call may take a context too)
            called = errors.RAN
            output = call(arguments, context) if accepts_context(tool) else call(arguments)
            content = output if isinstance(output, str) else json.dumps(output)
            outcome: Answer = ('', content, errors.RAN)
        except errors.ToolError as exc:
            outcome = (exc.code, exc.message, exc.outcome or called)
        except ToolArgumentError as exc:
            outcome = (exc.error_code, exc.message, called)
        except Exception as exc:  # noqa: B902 - a tool's failure must not end the server
            outcome = (errors.EXECUTION_FAILED, f'{tool.name} failed: {type(exc).__name__}: {exc}',
                       called)
        self._log(call_id, outcome, (time.monotonic() - started) * 1e3)
        return outcome

    def _log(self, call_id: str, outcome: Answer, elapsed_ms: float) -> None:
        name = self.tool.name
        if outcome[0]:
            line = (f'{name} call {log_text(call_id, 80)} -> {outcome[0]}: '
                    f'{log_text(outcome[1], 300)} ({elapsed_ms:.0f} ms)')
            # Two call sites: rclpy refuses one call site logging at two severities.
            if outcome[0] == errors.CANCELLED:  # a cancel is what the caller asked for
                self._logger.info(line)
            else:
                self._logger.warning(line)
        elif self._debug_enabled():  # (the line is built only if shown)
            self._logger.debug(f'{name} call {log_text(call_id, 80)} ok ({elapsed_ms:.1f} ms)')

    def stop_call(self, call_id: str) -> None:
        """Take a caller's stop: cancel the call if it runs, refuse it if it has not come yet."""
        if self.ledger is not None and self.ledger.stop(call_id):
            self._logger.info(f'{self.tool.name} call {log_text(call_id, 80)}: stopped by its '
                              'caller')

    def stop(self) -> int:
        """Cancel every queued and running call (each answers cancelled); return how many."""
        with self._lock:
            contexts = list(self._contexts)
        for context in contexts:
            context.cancel()
        return len(contexts)

    def begin_close(self) -> int:
        """
        Refuse new calls and cancel those taken (each still answers); return how many.

        The worker ends after the calls already queued have answered.
        """
        with self._lock:
            self.closing = True
        stopped = self.stop()
        self._jobs.put(None)
        return stopped

    def close_tool(self) -> None:
        """Close the tool: ends a call that ignores its context (a device, a thread)."""
        close = getattr(self.tool, 'close', None)
        if close is None:
            return
        try:
            close()
        except Exception as exc:  # noqa: B902 - keep closing the others
            self._logger.warning(f'closing {self.tool.name} failed: {exc}')

    def join(self, deadline: float) -> None:
        """Wait until `deadline` (time.monotonic) for the worker to end."""
        if self.worker is None:
            return
        self.worker.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.worker.is_alive():
            self._logger.warning(f'{self.tool.name}: a call is still running after '
                                 f'{CLOSE_TIMEOUT_S:g} s; leaving it')
