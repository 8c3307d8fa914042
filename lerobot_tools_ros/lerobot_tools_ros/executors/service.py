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

"""A tool's executor called as a `CallTool` service: one request, one response, no cancel."""

import time
from typing import Any, Callable

from builtin_interfaces.msg import Time
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, names
from rclpy.node import Node
from rclpy.task import Future

from .base import (Arguments, arguments_json, DoneCallback, ExecutorCall, FeedbackCallback,
                   Outcome, SERVICE)


class RequestCall(ExecutorCall):
    """A call sent as a request: a cancel reaches a tool_server through the stop topic."""

    def __init__(self, call_id: str, stop: Callable[[str], bool]) -> None:
        super().__init__(call_id, SERVICE)
        self._stop = stop

    def cancel(self) -> bool:
        """Stop it on a tool_server (refused if not there yet, cancelled if it runs)."""
        if self.done:
            return False
        self.cancel_requested = True
        return self._stop(self.call_id)


class ServiceExecutor:
    """Send calls, and readiness probes, as CallTool requests to `name`."""

    kind = SERVICE

    def __init__(self, node: Node, name: str, callback_group: Any,
                 when_done: Callable[[Future, Callable[[Future], None]], None],
                 stop: Callable[[str], bool] = lambda _call_id: False) -> None:
        self._node = node
        self._stop = stop  # publishes a stopped call's id on the tool's stop topic
        self._client = node.create_client(CallTool, name, callback_group=callback_group)
        self._when_done = when_done  # runs a future's callback where the owner wants it
        self._probes: list[Future] = []
        self.name = self._client.srv_name

    def offered(self) -> bool:
        return self._client.service_is_ready()

    def probe(self, answered: Callable[[], None]) -> None:
        """Send a readiness probe; `answered()` runs when its answer comes back."""
        future = self._client.call_async(CallTool.Request(name=names.READINESS_PROBE))
        self._probes.append(future)
        self._when_done(future, lambda done: answered() if done.result() is not None else None)

    def drop_probes(self) -> None:
        for future in self._probes:
            if not future.done():
                self._client.remove_pending_request(future)
        self._probes.clear()

    def send(self, call_id: str, tool_name: str, arguments: Arguments, source: str,
             on_done: DoneCallback, on_feedback: FeedbackCallback | None,
             stream_argument: str = '') -> ExecutorCall:
        if stream_argument:  # (ExecutorClient sends a streamed call once its text is whole)
            raise ValueError(f'{tool_name}: a CallTool request cannot stream the argument '
                             f'{stream_argument!r}; send the whole text')
        call = RequestCall(call_id, self._stop)
        future = self._client.call_async(CallTool.Request(
            call_id=call_id, name=tool_name, arguments=arguments_json(arguments), source=source,
            stamp=_system_time()))
        call._forget = lambda: self._client.remove_pending_request(future)
        _callbacks_when_taken(future)
        self._when_done(future, lambda done: call.finish(on_done, _outcome(done.result())))
        return call

    def destroy(self) -> None:
        self._node.destroy_client(self._client)


def _system_time() -> Time:
    """Now, as the request's stamp: tool_server holds a request taken late (`goal_ids`)."""
    sec, nanosec = divmod(time.time_ns(), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def _callbacks_when_taken(future: Future) -> None:
    """
    Run a service future's callbacks where its response is taken, not as a task of their own.

    rclpy attaches the executor to a client's future just before it sets the result (Humble to
    Kilted), and a future with an executor schedules each callback as a new task: more executor
    passes (a wait set rebuilt each) per call; without it the dispatcher's service path took 3.6
    instead of 5.9 passes per round trip here. Without an executor the callbacks run at once, in
    the client's callback group.
    """
    future._set_executor = lambda _executor: None


def _outcome(response: Any) -> Outcome:
    if response is None:
        return Outcome(False, error_code=errors.ANSWER_LOST, outcome=errors.UNKNOWN,
                       error_message='the service call ended without a response; the call may '
                                     'or may not have run')
    outcome = getattr(response, 'outcome', '')
    if response.success:
        return Outcome(True, content=response.content, call_id=response.call_id,
                       outcome=errors.answered_outcome('', outcome))
    code = response.error_code or errors.EXECUTION_FAILED
    return Outcome(False, error_code=code,
                   error_message=response.error_message or 'the executor reported failure',
                   call_id=response.call_id, outcome=errors.answered_outcome(code, outcome))
