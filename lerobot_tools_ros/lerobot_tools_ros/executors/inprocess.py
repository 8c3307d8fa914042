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
  A call goes through `tool_server.calls.ToolCalls.submit` (name check, the closing check, the
  tool's queue and worker thread), exactly like a `RunTool` goal. Its arguments cross as the
  caller's dict, not as JSON text: the offer copies them (the caller keeps its dict, the tool
  gets its own) and the tool_server validates them only when its catalog's schema of the tool
  is not the one the caller checked them against (`ToolCatalog.vouches_for`;
  `tool_server.request`).
- `InProcessExecutor` (dispatcher side): one call to such a tool, as a `LocalCall`. The tool
  runs on the tool_server's worker thread; its progress and answer reach the caller's executor
  thread as executor tasks (`Executor.create_task` wakes the executor through its guard
  condition), so the caller's callbacks run where the DDS path would run them.

A tool_server that closes answers `unavailable` (shutting down) and then withdraws its offer; a
tool_server that is gone (its node collected) answers `unavailable` too. Either way the caller
then finds no offer and goes back to DDS, where nobody answers: `unavailable` at its timeout.
"""

import logging
import threading
import time
from typing import Any, Callable
import weakref

from lerobot_tools_ros import errors, inprocess
from lerobot_tools_ros.catalog import copy_arguments, ToolArgumentError
from lerobot_tools_ros.tool_server.calls import Feedback
from lerobot_tools_ros.tool_server.request import ToolRequest
from lerobot_tools_ros.tools.base import CallContext, TextStream
from lerobot_tools_ros.untrusted import ros_string

from .base import Arguments, DoneCallback, ExecutorCall, FeedbackCallback, LOCAL, Outcome, Post

_LOGGER = logging.getLogger(__name__)


class HostedToolOffer:
    """The `calls` of a tool hosted by `server` (a ToolServer), offered at `name` here."""

    def __init__(self, server: Any, calls: Any, name: str) -> None:
        self._server = weakref.ref(server)  # the offer must not keep a destroyed server alive
        self._calls = calls  # the tool's `tool_server.calls.ToolCalls`
        self.name = name
        self.context = server.context

    def start(self, call_id: str, name: str, arguments: Arguments, source: str,
              context: CallContext, answer: inprocess.Answer) -> None:
        server = self._server()
        if server is None or not self.context.ok():
            answer(errors.UNAVAILABLE, f'the tool_server hosting {self.name} is gone; the call '
                                       'did not run', errors.NOT_RUN)
            return
        try:
            # The tool's own copy: nothing the caller does with its dict afterwards reaches it.
            request = ToolRequest(call_id, name, copy_arguments(arguments), source,
                                  validated=server.catalog.vouches_for(name, arguments))
        except ToolArgumentError as exc:  # nested deeper than any tool takes
            answer(exc.error_code, exc.message, errors.NOT_RUN)
            return
        try:
            done = self._calls.submit(request, context, local=True)
        except Exception as exc:  # noqa: B902 - every call gets an answer, as over DDS
            answer(errors.EXECUTION_FAILED, f'{type(exc).__name__}: {exc}', errors.UNKNOWN)
            return
        # On the tool's worker thread, or at once when it was refused before it was queued.
        done.add_done_callback(lambda future: answer(*future.result()))
        # Let the worker take the GIL now: it runs the call while this thread finishes the
        # dispatcher's work. Otherwise the worker waits until this thread next blocks
        # (measured: about 0.4 ms a call).
        time.sleep(0)

    def offer(self) -> None:
        inprocess.register(self.name, self)

    def withdraw(self) -> None:
        inprocess.unregister(self.name, self)


class LocalCall(ExecutorCall):
    """
    A call running on a tool hosted in this process: cancel reaches the tool directly.

    The tool's progress reports and its answer reach the caller in the order the tool gave
    them, run by one posted executor task at a time (rclpy before Kilted runs pending tasks
    newest first: two tasks could run answer-first and drop the report).
    """

    def __init__(self, call_id: str, on_done: DoneCallback,
                 on_feedback: FeedbackCallback | None, post: Post,
                 stream_argument: str = '') -> None:
        super().__init__(call_id, LOCAL)
        # Rate-limited per stage exactly as the RunTool feedback of the DDS path.
        progress = Feedback(lambda stage, value, detail: self._report(
            ros_string(stage), value, ros_string(detail)), _LOGGER)
        self.context = CallContext(call_id, progress,
                                   TextStream(stream_argument) if stream_argument else None)
        self._on_done = on_done
        self._on_feedback = on_feedback
        self._post = post  # runs a function as a task of the caller's executor
        self._lock = threading.Lock()
        self._queue: list[tuple[Callable[..., None], tuple]] = []  # reports, then the answer
        self._drain_posted = False

    def arrive(self, code: str, text: str, outcome: str) -> None:
        """Take the tool's answer (from any thread, once)."""
        self._deliver(self._answered, (code, text, outcome))

    def _report(self, stage: str, progress: float, detail: str) -> None:
        self._deliver(self._feedback, (stage, progress, detail))

    def _deliver(self, work: Callable[..., None], arguments: tuple) -> None:
        with self._lock:
            self._queue.append((work, arguments))
            post = not self._drain_posted
            self._drain_posted = True
        if post:
            self._post(self._drain)

    def _drain(self) -> None:
        """Run what is queued, in order (an executor task)."""
        with self._lock:
            queued, self._queue = self._queue, []
            self._drain_posted = False
        for work, arguments in queued:
            work(*arguments)

    def _answered(self, code: str, text: str, outcome: str) -> None:  # on the caller's thread
        text = ros_string(text)  # as a RunTool result carries it: valid UTF-8
        self.finish(self._on_done, Outcome(True, content=text, call_id=self.call_id,
                                           outcome=outcome) if not code
                    else Outcome(False, error_code=code, error_message=text,
                                 call_id=self.call_id, outcome=outcome))

    def _feedback(self, stage: str, progress: float, detail: str) -> None:
        if self._on_feedback is not None and not self.done:
            self._on_feedback(stage, progress, detail)

    def send_text(self, text: str, end: bool) -> None:
        """Hand a streamed call's text straight to the tool's TextStream."""
        if self.context.text is not None and not self.done:
            self.context.text.put(text, end)

    def cancel(self) -> bool:
        """Cancel the call's context: the tool stops and answers `cancelled` (or its result)."""
        if self.done:
            return False
        self.cancel_requested = True
        self.context.cancel()
        return True


class InProcessExecutor:
    """Call `host`, a tool_server's tool in this process; answers come as `executor` tasks."""

    kind = LOCAL

    def __init__(self, host: inprocess.LocalHost, executor: Any,
                 post: Post | None = None) -> None:
        self.host = host
        self.executor = executor
        self._post = post  # the owner's group, where it runs on a multi-threaded executor

    def send(self, call_id: str, tool_name: str, arguments: Arguments, source: str,
             on_done: DoneCallback, on_feedback: FeedbackCallback | None,
             stream_argument: str = '') -> ExecutorCall:
        post = self._post
        if post is not None:  # the answer comes as an executor task: into the owner's group
            done_here, feedback_here = on_done, on_feedback
            on_done = lambda outcome: post(lambda: done_here(outcome))  # noqa: E731
            if feedback_here is not None:
                on_feedback = lambda *report: post(  # noqa: E731
                    lambda: feedback_here(*report))
        call = LocalCall(call_id, on_done, on_feedback, self.executor.create_task,
                         stream_argument)
        self.host.start(call_id, tool_name, arguments, source, call.context, call.arrive)
        return call
