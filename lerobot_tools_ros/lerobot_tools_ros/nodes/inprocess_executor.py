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
Both ends of the in-process executor path (see `lerobot_tools_ros.inprocess`).

- `HostedToolOffer` (tool_server side): one hosted tool, offered to callers in this process.
  A call goes through the tool_server's own `_submit` (name check, catalog validation, the
  closing check, the tool's queue and worker thread), exactly like a `RunTool` goal.
- `send_local` (dispatcher side): one call to such a tool, as an `ExecutorCall`. The tool runs
  on the tool_server's worker thread; its answer and progress reach the caller's executor
  thread as executor tasks (`Executor.create_task` wakes the executor through its guard
  condition), so the caller's callbacks run where the DDS path would run them.

**Quick answers.** A call to a tool that is idle and answered its previous call within
`QUICK_ANSWER_S` (or one refused at once) is `quick`: its caller, at the end of the callback
that started it, waits up to that long for the answer and runs it on its own thread
(`LocalCall.take_answer`), after the progress reports the tool gave before it. The result
then goes out without an executor task: no wait-set rebuild competes with the tool for the GIL
while the answer is on its way, and no executor wake-up follows it (each is a Python pass over
every entity of the process's executor; measured with `bench/binding_bench.py`). An answer
later than that goes to the executor as for any call. A tool that turns out slow costs its
caller at most `QUICK_ANSWER_S` once, and is not waited for again until it answers quickly.

A tool_server that closes answers `unavailable` (shutting down) and then withdraws its offer; a
tool_server that is gone (its node collected) answers `unavailable` too. Either way the caller
then finds no offer and goes back to DDS, where nobody answers: `unavailable` at its timeout.
"""

import threading
import time
from types import SimpleNamespace
from typing import Any, Callable
import weakref

from lerobot_tools_ros import errors, inprocess
from lerobot_tools_ros.inprocess import QUICK_ANSWER_S
from lerobot_tools_ros.nodes.executor_client import (
    ExecutorCall, FeedbackCallback, LOCAL, Outcome)
from lerobot_tools_ros.tools.base import CallContext
from lerobot_tools_ros.untrusted import ros_string

__all__ = ['HostedToolOffer', 'LocalCall', 'send_local', 'take_answers']

# As the RunTool feedback of the DDS path: a stage's reports at most this often (the first of a
# stage and progress 1 always go).
_PROGRESS_MIN_INTERVAL_S = 0.02


class HostedToolOffer:
    """A tool hosted by `server` (a ToolServer), offered at `name` in this process."""

    def __init__(self, server: Any, hosted: Any, name: str) -> None:
        self._server = weakref.ref(server)  # the offer must not keep a destroyed server alive
        self._hosted = hosted
        self.name = name
        self.context = server.context
        self._quick = True  # the tool answered its last call within QUICK_ANSWER_S

    def start(self, call_id: str, name: str, arguments_json: str, context: CallContext,
              answer: inprocess.Answer) -> bool:
        server = self._server()
        if server is None or not self.context.ok():
            answer(errors.UNAVAILABLE, f'the tool_server hosting {self.name} is gone; the call '
                                       'did not run')
            return True  # answered: nothing to wait for
        request = SimpleNamespace(call_id=call_id, name=name, arguments=arguments_json)
        quick = self._quick and not self._hosted.pending  # not queued behind another call
        started = time.monotonic()
        try:
            done = server._submit(self._hosted, request, context, local=True)
        except Exception as exc:  # noqa: B902 - every call gets an answer, as over DDS
            answer(errors.EXECUTION_FAILED, f'{type(exc).__name__}: {exc}')
            return True
        if done.done():  # answered already (refused at once, or done): taken without a wait
            done.add_done_callback(lambda future: answer(*future.result()))
            return True

        def relay(future: Any) -> None:  # on the tool's worker thread (or this one)
            self._quick = time.monotonic() - started <= QUICK_ANSWER_S
            answer(*future.result())
        done.add_done_callback(relay)
        # Let the worker take the GIL now: it sends the tool's request and waits for the answer
        # without it, while this thread finishes the dispatcher's work. Otherwise the worker
        # waits until this thread next blocks (measured: about 0.4 ms a call).
        time.sleep(0)
        return quick

    def offer(self) -> None:
        inprocess.register(self.name, self)

    def withdraw(self) -> None:
        inprocess.unregister(self.name, self)


class LocalCall(ExecutorCall):
    """
    A call running on a tool hosted in this process: cancel reaches the tool directly.

    The tool's progress reports and answer reach the caller in the order the tool gave them, run
    by one `post`ed executor task at a time (rclpy before Kilted runs pending tasks newest
    first). A new call holds them instead until `take_answer` runs them on the caller's thread
    or `release` posts them (`send_local` releases a call that is not quick at once).
    """

    def __init__(self, call_id: str, finish: Callable[[str, str], None],
                 feedback: Callable[[str, float, str], None],
                 post: Callable[[Callable[[], None]], Any]) -> None:
        super().__init__(call_id, LOCAL)
        self.context: CallContext | None = None
        self._finish = finish  # (error code or '', text): the answer, on the caller's thread
        self._feedback = feedback  # (stage, progress, detail), on the caller's thread
        self._post = post  # runs a function as a task of the caller's executor
        self._lock = threading.Lock()
        self._queue: list[tuple[Callable[..., None], tuple]] = []  # reports, then the answer
        self._held = True  # the queue waits for take_answer or release
        self._drain_posted = False
        self._answered = threading.Event()

    def arrive(self, code: str, text: str) -> None:
        """Take the tool's answer (from any thread, once)."""
        self._deliver(self._finish, (code, text))

    def report(self, stage: str, progress: float, detail: str) -> None:
        """Take a progress report of the tool's (from any thread)."""
        self._deliver(self._feedback, (stage, progress, detail))

    def _deliver(self, work: Callable[..., None], arguments: tuple) -> None:
        with self._lock:
            self._queue.append((work, arguments))
            if work is self._finish:
                self._answered.set()
            post = self._posting()
        if post:
            self._post(self._drain)

    def _posting(self) -> bool:
        """Decide (under the lock) whether a drain task must be posted now."""
        if self._held or self._drain_posted or not self._queue:
            return False
        self._drain_posted = True
        return True

    def _drain(self) -> None:
        """Run what is queued, in order (an executor task)."""
        with self._lock:
            queued, self._queue = self._queue, []
            self._drain_posted = False
        for work, arguments in queued:
            work(*arguments)

    def take_answer(self, timeout_s: float) -> bool:
        """
        Wait up to `timeout_s` for the answer; run it and the reports before it here (True).

        For the caller's executor thread at the end of the callback that started the call,
        holding no lock of the caller's. Without the answer by then, `release` (False).
        """
        self._answered.wait(timeout_s)
        with self._lock:
            if not self._held:
                return False  # already taken or released
            self._held = False
            if not self._answered.is_set():
                post = self._posting()
                queued = []
            else:
                post = False
                queued, self._queue = self._queue, []  # the answer is the last: none follows
        if post:
            self._post(self._drain)
        for work, arguments in queued:
            work(*arguments)
        return bool(queued)

    def release(self) -> None:
        """Stop holding: what arrived goes to the caller's executor now, the rest as it comes."""
        with self._lock:
            self._held = False
            post = self._posting()
        if post:
            self._post(self._drain)

    def cancel(self) -> bool:
        """Cancel the call's context: the tool stops and answers `cancelled` (or its result)."""
        if self.done:
            return False
        self.cancel_requested = True
        if self.context is not None:
            self.context.cancel()
        return True


class _Progress:
    """A tool's progress reports, rate-limited per stage, handed to the caller's executor."""

    def __init__(self, relay: Callable[[str, float, str], None]) -> None:
        self._relay = relay
        self._stage = ''
        self._at = 0.0

    def __call__(self, stage: str, progress: float, detail: str) -> None:
        now = time.monotonic()
        if stage == self._stage and progress < 1.0 and now - self._at < _PROGRESS_MIN_INTERVAL_S:
            return
        self._stage, self._at = stage, now
        self._relay(ros_string(str(stage)), float(progress), ros_string(str(detail)))


def send_local(host: inprocess.LocalHost, executor: Any, call_id: str, tool_name: str,
               arguments_json: str, on_done: Callable[[Outcome], None],
               on_feedback: FeedbackCallback | None) -> LocalCall:
    """
    Start one call on `host`; `on_done` and `on_feedback` run as tasks of `executor`.

    `on_done` gets exactly one `Outcome`, as `ExecutorClient.send` promises, unless the call is
    forgotten first; feedback after the outcome is dropped. A call returned `quick` holds its
    answer until the caller calls `take_answer` (which runs `on_done` on the caller's thread)
    or `release`; the caller must call one of them.
    """
    call: LocalCall

    def finish(code: str, text: str) -> None:  # on the caller's executor thread
        if call.done:
            return
        call.done = True
        text = ros_string(text)  # as a RunTool result carries it: valid UTF-8
        on_done(Outcome(True, content=text, call_id=call_id) if not code else
                Outcome(False, error_code=code, error_message=text, call_id=call_id))

    def feedback(stage: str, progress: float, detail: str) -> None:
        if on_feedback is not None and not call.done:
            on_feedback(stage, progress, detail)

    call = LocalCall(call_id, finish, feedback, executor.create_task)
    call.context = CallContext(call_id, _Progress(call.report))
    try:
        call.quick = bool(host.start(call_id, tool_name, arguments_json, call.context,
                                     call.arrive))
    finally:
        if not call.quick:  # nobody will take it: the answer goes as a task
            call.release()
    return call


def take_answers(calls: list[LocalCall]) -> None:
    """
    Take the answers of quick `calls` that come within QUICK_ANSWER_S in all; release the rest.

    For the thread that started them, at the end of that callback. Every call is released
    (a no-op once taken) even if one fails: no answer stays held.
    """
    deadline = time.monotonic() + QUICK_ANSWER_S
    try:
        for call in calls:
            call.take_answer(max(0.0, deadline - time.monotonic()))
    finally:
        failed: Exception | None = None
        for call in calls:
            try:
                call.release()
            except Exception as exc:  # noqa: B902 - the others must still be released
                failed = failed or exc
        if failed is not None:
            raise failed
