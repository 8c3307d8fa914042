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

"""A tool's executor called as a `RunTool` action: progress as feedback, cancellable."""

from typing import Any, Callable

from action_msgs.msg import GoalStatus
from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_interfaces.msg import TextChunk
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.rclpy_fixes import send_goal_async
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from .base import (ACTION, Arguments, arguments_json, DoneCallback, ExecutorCall,
                   FeedbackCallback, Outcome)
from .goal_ids import new_goal_id


class GoalCall(ExecutorCall):
    """A call sent as a goal: cancel reaches the executor, before or after acceptance."""

    def __init__(self, call_id: str, texts: Any = None,
                 stop: Callable[[str], bool] = lambda _call_id: False) -> None:
        super().__init__(call_id, ACTION)
        self.goal_handle: Any = None
        self._stop = stop  # tells tool_server by call id: reaches a goal not yet accepted
        self._texts = texts  # the publisher of a streamed call's text segments
        self._index = 0

    def send_text(self, text: str, end: bool) -> None:
        if self.done or self._texts is None:
            return
        self._index += 1
        self._texts.publish(TextChunk(generation_id=self.call_id, index=self._index,
                                      text=text, final=end))

    def cancel(self) -> bool:
        if self.done:
            return False
        self.cancel_requested = True
        # A goal not yet accepted cannot be cancelled through the action (its executor may be
        # busy, or stalled, with the goal request still queued): the stop topic reaches it, and
        # tool_server refuses the goal when it gets to it. After acceptance, both reach it.
        self._stop(self.call_id)
        if self.goal_handle is not None:
            self.goal_handle.cancel_goal_async()
        return True  # before acceptance: also cancelled as soon as the goal is accepted


class ActionExecutor:
    """Send calls, and readiness probes, as RunTool goals to `name`."""

    kind = ACTION

    def __init__(self, node: Node, name: str, callback_group: Any,
                 when_done: Callable[[Future, Callable[[Future], None]], None],
                 refused: Callable[[], None],
                 stop: Callable[[str], bool] = lambda _call_id: False) -> None:
        self._client = ActionClient(node, RunTool, name, callback_group=callback_group)
        self._when_done = when_done  # runs a future's callback where the owner wants it
        self._refused = refused  # a goal was rejected: the executor is closing
        self._stop = stop  # publishes a stopped call's id on the tool's stop topic
        self.name = node.resolve_service_name(name)
        self._node = node
        self._texts = None  # created with the first streamed call

    def offered(self) -> bool:
        return self._client.server_is_ready()

    def probe(self, answered: Callable[[], None]) -> None:
        """Send a readiness goal; `answered()` runs when its result comes back."""
        def accepted(future: Future) -> None:
            handle = future.result()
            if handle is not None and handle.accepted:  # rejected: the executor is closing
                self._when_done(handle.get_result_async(), lambda _: answered())
        self._when_done(send_goal_async(self._client, RunTool.Goal(name=names.READINESS_PROBE)),
                        accepted)

    def send(self, call_id: str, tool_name: str, arguments: Arguments, source: str,
             on_done: DoneCallback, on_feedback: FeedbackCallback | None,
             stream_argument: str = '') -> ExecutorCall:
        goal = RunTool.Goal(call_id=call_id, name=tool_name, arguments=arguments_json(arguments),
                            source=source, streamed=bool(stream_argument))
        if stream_argument and self._texts is None:
            self._texts = self._node.create_publisher(
                TextChunk, names.tool_text_topic(self.name),
                QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        call = GoalCall(call_id, self._texts if stream_argument else None, self._stop)

        def feedback(message: Any) -> None:
            if on_feedback is not None and not call.done:
                report = message.feedback
                on_feedback(report.stage, float(report.progress), report.detail)

        def accepted(future: Future) -> None:
            handle = future.result()
            if handle is None or not handle.accepted:
                call.finish(on_done, Outcome(False, error_code=errors.UNAVAILABLE, error_message=(
                    f'the executor at {self.name} refused the goal (it is shutting down); the '
                    'call did not run'), outcome=errors.NOT_RUN))
                self._refused()
                return
            call.goal_handle = handle
            if call.cancel_requested:
                handle.cancel_goal_async()
            self._when_done(handle.get_result_async(),
                            lambda done: call.finish(on_done, _outcome(done.result(), self.name)))

        # The goal's id says when it was sent (goal_ids): tool_server holds a goal that waited
        # long enough for its stop to be still on its way.
        self._when_done(send_goal_async(
            self._client, goal, feedback_callback=feedback,
            goal_uuid=UUID(uuid=list(new_goal_id()))), accepted)
        return call

    def destroy(self) -> None:
        self._client.destroy()
        if self._texts is not None:
            self._node.destroy_publisher(self._texts)


def _outcome(response: Any, name: str) -> Outcome:
    result = getattr(response, 'result', None)
    status = getattr(response, 'status', GoalStatus.STATUS_UNKNOWN)
    if result is None or status == GoalStatus.STATUS_UNKNOWN:
        return Outcome(False, error_code=errors.ANSWER_LOST, outcome=errors.UNKNOWN,
                       error_message=(f'the executor at {name} no longer knows the goal '
                                      '(restarted?); the call may or may not have run'))
    outcome = getattr(result, 'outcome', '')
    if status == GoalStatus.STATUS_SUCCEEDED and result.success:
        return Outcome(True, content=result.content, call_id=result.call_id,
                       outcome=errors.answered_outcome('', outcome))
    if result.error_code:
        return Outcome(False, error_code=result.error_code, error_message=result.error_message,
                       call_id=result.call_id,
                       outcome=errors.answered_outcome(result.error_code, outcome))
    if status == GoalStatus.STATUS_CANCELED:
        return Outcome(False, error_code=errors.CANCELLED, call_id=result.call_id,
                       error_message='the executor cancelled the call',
                       outcome=errors.answered_outcome(errors.CANCELLED, outcome))
    return Outcome(False, error_code=errors.EXECUTION_FAILED, call_id=result.call_id,
                   error_message=f'the executor at {name} aborted the goal without a result',
                   outcome=errors.answered_outcome(errors.EXECUTION_FAILED, outcome))
