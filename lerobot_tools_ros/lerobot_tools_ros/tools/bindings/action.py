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
``kind: action``: a tool that sends a goal to an existing ROS action server.

.. code-block:: yaml

    move_gripper:
      kind: action
      action: /gripper/command
      type: test_msgs/action/Fibonacci   # e.g. control_msgs/action/GripperCommand on a robot
      goal: {order: $steps}
      result: {}                         # optional success/message fields, as for services
      server_timeout_s: 5.0              # wait for the action server to be there (default 5)
      timeout_s: 8.0                     # the goal, from sending it to its result (default 8)
      cancel_timeout_s: 5.0              # how long a cancel may take to be confirmed
      log_feedback: false                # true: log each feedback (info) on tool_server

Feedback is relayed as the call's progress (stage ``running``, detail = the feedback as JSON).
The goal is cancelled on the robot when the call times out, when the call is cancelled (a
cancelled ``RunTool`` goal, the dispatcher's pause) and when ``tool_server`` shuts down: no goal
is left running once its call has a result. Each goal gets its id from the binding, so a goal
whose acceptance never reached us (lost, or not yet decided at the timeout) is cancelled by that
id. An action server that is not there within ``server_timeout_s`` is ``unavailable`` (nothing
was sent), whatever ``timeout_s`` allows the goal itself. Keep ``server_timeout_s`` plus
``timeout_s`` (plus ``cancel_timeout_s``) below the dispatcher's timeout for the tool
(``tool.<name>.timeout_s``): a caller of the plain ``CallTool`` service cannot cancel, so the
binding's own timeout is what stops the goal then.
"""

import time
from typing import Any
import uuid

from lerobot_tools_ros import errors
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.rclpy_fixes import send_goal_async
from lerobot_tools_ros.tools.base import CallContext
from lerobot_tools_ros.tools.bindings.base import (
    BoundTool, ConfigReader, content_json, ResultFields, RosClientNode,
)
from lerobot_tools_ros.tools.bindings.interfaces import message_to_json
from lerobot_tools_ros.untrusted import log_text

__all__ = ['ActionBinding', 'FEEDBACK_STAGE']

FEEDBACK_STAGE = 'running'  # RunTool.Feedback.STAGE_RUNNING
# action_msgs/msg/GoalStatus values (kept here so the module imports without ROS)
_SUCCEEDED, _CANCELED, _ABORTED = 4, 5, 6
_CANCEL_UNKNOWN_GOAL = 2  # action_msgs/srv/CancelGoal ERROR_UNKNOWN_GOAL_ID
_RETRY_S = 0.1  # between cancels of a goal id the server does not know yet
# What a cancel found (see ActionBinding._confirmed).
_CANCELLED_NOTE = 'the goal was cancelled on the server'
_ENDED_NOTE = 'the goal had already ended'
_REJECTED_SUFFIX = ' rejected the goal'
_NEVER_HAD_PREFIX = 'the server never answered the goal request, and did not know its goal id'


class ActionBinding(BoundTool):
    """Send a goal filled from the arguments; relay feedback; return the result."""

    KIND = 'action'
    MAPPINGS = ('goal',)
    KEYS = ('kind', 'action', 'type', 'goal', 'result', 'server_timeout_s', 'timeout_s',
            'cancel_timeout_s', 'log_feedback')

    def __init__(self, schema: dict, config: dict, where: str) -> None:
        super().__init__(schema, config, where)
        reader = ConfigReader(config, where, self.KEYS)
        self.action = reader.ros_name('action', service=True)
        self.type_name = config.get('type', '')
        self.action_type = reader.interface('type', 'action')
        goal_class = self.action_type.Goal if self.action_type else None
        self.goal = reader.mapping('goal', goal_class, self.parameters, self.name)
        self.result = ResultFields(reader, self.action_type.Result if self.action_type else None)
        self.server_timeout_s = reader.number('server_timeout_s', 5.0, positive=True)
        self.timeout_s = reader.number('timeout_s', 8.0, positive=True)
        self.cancel_timeout_s = reader.number('cancel_timeout_s', 5.0, positive=True)
        self.log_feedback = config.get('log_feedback', False)
        if not isinstance(self.log_feedback, bool):
            reader.problems.append(f'{where}.log_feedback: must be true or false, got '
                                   f'{self.log_feedback!r:.60}')
        reader.done()
        self._logger: Any = None
        # The result of a goal that ended on its own while it was being cancelled: reported as
        # what the robot did, not as a cancel (set by _cancel, read by _run).
        self._ended_on_its_own: Any = None

    def describe(self) -> str:
        return f'action {self.type_name} at {self.action}'

    def bind_ros(self, node: Any) -> None:
        """Create the action client on a node of this binding's own."""
        from rclpy.action import ActionClient
        self._ros = RosClientNode(node, self.name)
        self._logger = node.get_logger()
        self.action = node.resolve_service_name(self.action)
        self._client = ActionClient(self._ros.node, self.action_type, self.action)

    def call(self, arguments: dict, context: CallContext | None = None) -> str:
        """Run one goal to its end (or cancel it); return the result as JSON."""
        with self._calling(self.goal, arguments, context,
                           'before the goal was sent') as (goal, context):
            return self._run(goal, context)

    def _relay(self, context: CallContext):
        def relay(message: Any) -> None:
            try:
                data, non_finite = message_to_json(message.feedback)
                detail = content_json(data, non_finite)
                context.feedback(FEEDBACK_STAGE, -1.0, detail)
                if self.log_feedback and self._logger is not None:
                    self._logger.info(f'{self.name} feedback: {log_text(detail)}')
            except Exception:  # noqa: B902 - progress is best effort, never fails the goal
                pass
        return relay

    def _run(self, goal: Any, context: CallContext) -> str:
        stopped = self._stopped(context)
        self._wait_for_server(self._client.server_is_ready,
                              time.monotonic() + self.server_timeout_s, context,
                              f'action server {self.action}', 'before the goal was sent',
                              waited_s=self.server_timeout_s)
        deadline = time.monotonic() + self.timeout_s  # the goal's own limit starts now
        from unique_identifier_msgs.msg import UUID
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))  # ours: it can be cancelled unanswered
        if stopped():  # the last moment before the goal goes out: nothing is sent
            raise self._stop_error(context, 'before the goal was sent', errors.NOT_RUN)
        sent = send_goal_async(self._client, goal, feedback_callback=self._relay(context),
                               goal_uuid=goal_id)
        self._ended_on_its_own = None
        outcome = self._bound().wait(sent.done, deadline, stopped)
        if outcome != 'done':
            note = self._cancel_unanswered(sent, goal_id)
            if self._ended_on_its_own is None:
                raise self._ended(outcome, context, note, self._confirmed(note))
            return self._answer(self._ended_on_its_own)  # it ended before the cancel came
        handle = sent.result()
        if not handle.accepted:
            raise ToolError(errors.EXECUTION_FAILED,
                            f'{self.name}: the action server {self.action} rejected the goal',
                            errors.NOT_RUN)
        result_future = handle.get_result_async()
        outcome = self._bound().wait(result_future.done, deadline, stopped)
        if outcome != 'done':
            note = self._cancel(handle, result_future)
            if self._ended_on_its_own is None:
                raise self._ended(outcome, context, note, self._confirmed(note))
        return self._answer(result_future.result())

    def _answer(self, wrapped: Any) -> str:
        """Return the content of a goal's result, or raise the error its status means."""
        if wrapped.status == _SUCCEEDED:
            return self.result.content(wrapped.result, f'action {self.action}')
        data, non_finite = message_to_json(wrapped.result)
        if wrapped.status == _CANCELED:
            raise ToolError(errors.CANCELLED, f'{self.name}: the goal was cancelled on the '
                                              f'server; result {content_json(data, non_finite)}')
        state = 'aborted' if wrapped.status == _ABORTED else f'ended with status {wrapped.status}'
        raise ToolError(errors.EXECUTION_FAILED, f'{self.name}: the goal {state}; result '
                                                 f'{content_json(data, non_finite)}')

    def _ended(self, outcome: str, context: CallContext, note: str, ended: str) -> ToolError:
        """Return the error of a goal stopped or timed out (`ended`: its outcome now)."""
        if outcome == 'stopped':
            return self._stop_error(context, f'while the goal ran; {note}', ended)
        return ToolError(errors.TIMEOUT, f'{self.name}: the goal took longer than '
                                         f'{self.timeout_s:g} s; {note}', ended)

    @staticmethod
    def _confirmed(note: str) -> str:
        """
        Return the outcome a cancel's `note` tells: the goal surely ended, or it may still act.

        Ran: the server confirmed the goal's end (or it had ended). Not run: the server never
        had the goal (rejected, or its id unknown until the cancel gave up). Unknown otherwise:
        the goal may still be running on the robot.
        """
        if note in (_CANCELLED_NOTE, _ENDED_NOTE):
            return errors.RAN
        if note.startswith(_NEVER_HAD_PREFIX) or note.endswith(_REJECTED_SUFFIX):
            return errors.NOT_RUN
        return errors.UNKNOWN

    def _cancel(self, handle: Any, result_future: Any) -> str:
        """Cancel the goal and wait (``cancel_timeout_s``) until the server confirms it ended."""
        deadline = time.monotonic() + self.cancel_timeout_s
        cancel = handle.cancel_goal_async()
        if self._bound().wait(cancel.done, deadline, lambda: False) != 'done':
            return (f'cancel requested, not confirmed by {self.action} within '
                    f'{self.cancel_timeout_s:g} s')
        if result_future is None:
            result_future = handle.get_result_async()
        if not cancel.result().goals_canceling:
            # Refused: usually the goal had just ended (its result may still be on its way).
            if self._bound().wait(result_future.done, deadline, lambda: False) != 'done':
                return f'{self.action} refused to cancel the goal'
            self._note_end(result_future.result())
            return _ENDED_NOTE
        if self._bound().wait(result_future.done, deadline, lambda: False) != 'done':
            return f'cancel accepted by {self.action}; the goal had not ended yet'
        self._note_end(result_future.result())
        return _CANCELLED_NOTE

    def _note_end(self, wrapped: Any) -> None:
        """Keep the result of a goal that ended on its own although it was being cancelled."""
        if wrapped is not None and wrapped.status != _CANCELED:
            self._ended_on_its_own = wrapped

    def _cancel_unanswered(self, sent: Any, goal_id: Any) -> str:
        """
        Cancel a goal whose request has no answer yet, by the id we gave it.

        Requests reaching a server does not mean its answers reach us (its side may not have
        matched our client yet): the goal may be running with its acceptance lost. Until
        ``cancel_timeout_s`` ends, the goal is cancelled through its handle once the answer
        comes, else by its id, asked again while the server does not know the id yet.
        """
        from rclpy.action.client import ClientGoalHandle
        accepted = self.action_type.Impl.SendGoalService.Response(accepted=True)
        by_id = ClientGoalHandle(self._client, goal_id, accepted)
        deadline = time.monotonic() + self.cancel_timeout_s
        unknown = False
        while not sent.done():
            cancel = by_id.cancel_goal_async()
            if self._bound().wait(lambda: cancel.done() or sent.done(), deadline,
                                  lambda: False) != 'done':
                break
            if not cancel.done():
                continue  # the goal's answer came first: cancel through its handle
            answer = cancel.result()
            if answer.goals_canceling:
                return ('the server never answered the goal request; a cancel for its goal id '
                        'was accepted')
            if answer.return_code != _CANCEL_UNKNOWN_GOAL:
                return ('the server never answered the goal request, and refused to cancel it '
                        f'(return code {answer.return_code})')
            unknown = True
            if time.monotonic() + _RETRY_S >= deadline:
                break
            self._bound().wait(sent.done, time.monotonic() + _RETRY_S, lambda: False)
        if sent.done():
            if sent.result().accepted:
                return self._cancel(sent.result(), None)
            return f'{self.action}{_REJECTED_SUFFIX}'
        if unknown:
            return (f'{_NEVER_HAD_PREFIX} within {self.cancel_timeout_s:g} s (it never got the '
                    'request)')
        return ('the server answered neither the goal request nor a cancel for its goal id '
                f'within {self.cancel_timeout_s:g} s')

    def _release(self) -> None:
        if self._ros is not None:
            self._client.destroy()
            self._ros.close()
            self._ros = None
            self._client = None
