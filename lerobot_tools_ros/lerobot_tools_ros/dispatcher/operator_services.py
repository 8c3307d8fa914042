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
The dispatcher's operator services: `~/set_enabled` (pause), `~/approve` and `~/cancel`.

Each request is one event into the dispatch core, entered through the node's `enter` (under its
lock, effects carried out); what is answered and logged is built here from what the core did.
"""

from collections.abc import Callable
from typing import Any

from lerobot_tools_interfaces.srv import Approve, CancelCalls
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.dispatch import DispatchCore, effects as fx
from lerobot_tools_ros.untrusted import log_text, ros_string
from rclpy.node import Node
from std_srvs.srv import SetBool

# enter(event): run event(core, now) -> (answer, effects) in the node's state lock, carry out
# the effects (None: the core was not changed), return the answer.
Enter = Callable[[Callable[[DispatchCore, float], tuple[Any, list | None]]], Any]


class OperatorServices:
    """Serve ~/set_enabled, ~/approve and ~/cancel on `node`, in its dispatch `group`."""

    def __init__(self, node: Node, group: Any, enter: Enter) -> None:
        self._logger = node.get_logger()
        self._enter = enter
        self._node = node
        node.create_service(SetBool, '~/set_enabled', self._on_set_enabled,
                            callback_group=group)
        node.create_service(Approve, '~/approve', self._on_approve, callback_group=group)
        node.create_service(CancelCalls, '~/cancel', self._on_cancel, callback_group=group)

    def _on_set_enabled(self, request: SetBool.Request, response: SetBool.Response):
        wanted = bool(request.data)
        if wanted and not getattr(self._node, 'accepting', True):
            response.success = False
            response.message = ('the dispatcher is not active (managed node): activate it '
                                'through its lifecycle to resume tool use')
            return response

        def event(core: DispatchCore, now: float) -> tuple[list | None, list | None]:
            if wanted == core.enabled:
                return None, None  # nothing changes
            effects = core.set_enabled(wanted, now)
            return effects, effects
        effects = self._enter(event)
        state = 'enabled' if wanted else 'paused'
        response.success = True
        if effects is None:
            response.message = f'tool use already {state}'
            return response
        answered = sum(isinstance(effect, fx.PublishResult) for effect in effects)
        stopped = sum(isinstance(effect, fx.StopOnExecutor) for effect in effects)
        response.message = f'tool use {state}' + (
            f'; {answered} call(s) not yet sent answered paused' if answered else '') + (
            f'; {stopped} running call(s) stopped on their executor (each result says what it '
            'did once its executor answers)' if stopped else '')
        self._logger.info(response.message)
        return response

    def set_accepting(self, accepting: bool) -> None:
        """
        Resume or pause tool use for a managed dispatcher's activate or deactivate.

        Pausing answers every open call paused (running ones are cancelled on their executor,
        so speech stops) and answers new calls paused; ~/set_enabled cannot resume it then.
        """
        def event(core: DispatchCore, now: float) -> tuple[None, list | None]:
            return None, (core.set_enabled(accepting, now) if core.enabled != accepting
                          else None)
        self._enter(event)

    def _on_cancel(self, request: CancelCalls.Request, response: CancelCalls.Response):
        """Cancel one call, or every call of a generation (a policy that changed its mind)."""
        if not request.call_id and not request.generation_id:
            response.success = False
            response.message = 'nothing to cancel: give a call_id or a generation_id'
            return response

        def event(core: DispatchCore, now: float) -> tuple[list, list]:
            effects = core.cancel(now, call_id=request.call_id,
                                  generation_id=request.generation_id)
            return effects, effects
        effects = self._enter(event)
        # Calls not yet sent are answered at once; running ones are stopped on their executor
        # (their results follow and say what the tool did).
        cancelled = [effect.call.call_id for effect in effects
                     if (isinstance(effect, fx.PublishResult)
                         and effect.error_code == errors.CANCELLED)
                     or (isinstance(effect, fx.StopOnExecutor) and effect.await_answer)]
        what = (f'call {log_text(request.call_id, 80)}' if request.call_id
                else f'generation {log_text(request.generation_id, 80)}')
        response.success = bool(cancelled)
        response.cancelled_call_ids = cancelled
        response.message = (f'cancelled {len(cancelled)} call(s) of {what}' if cancelled
                            else f'no pending call matches {what}; it may have finished already')
        self._logger.info(response.message)
        return response

    def _on_approve(self, request: Approve.Request, response: Approve.Response):
        if request.call_id == names.READINESS_PROBE:  # a client proving its answers reach it
            response.message = 'probe: nothing decided'
            return response
        # rclpy gives a service callback no caller identity: the note says who decided.
        note = ros_string(request.note.strip()[:200])
        decided_by = note or 'an operator who left no note'
        found = self._enter(lambda core, now: core.decide(
            request.call_id, bool(request.approve), decided_by, note, now))
        verdict = 'approved' if request.approve else 'denied'
        response.success = found
        if found:
            response.message = f'call {request.call_id} {verdict}'
            self._logger.info(f'call {log_text(request.call_id)} {verdict} by '
                              f'{log_text(decided_by)}')
        else:
            response.message = (f'no call {request.call_id!r} is waiting for approval (it may '
                                'have been decided, timed out or been paused)')
        return response
