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
One tool's executor as its callers see it: a `RunTool` action when offered, else `CallTool`.

Two things make a first call reliable, and both live here so every caller gets them:

- **Discovery, not configuration.** The executor's kind is whatever it offers at the tool's name:
  the action (feedback, cancel) when its server is there, the service otherwise. A tool_server
  offers both; an executor that only has the service is still usable.
- **Ready means answers reach us.** `service_is_ready()` / `server_is_ready()` only prove that
  our *requests* reach the executor; with Fast DDS the executor's response writer can match our
  reader a moment later, and an answer sent before that is lost (a first call that "times out"
  although it ran). So a client is ready only after a readiness probe (a request or goal naming
  `names.READINESS_PROBE`, answered at once without running anything) has come back on the
  very path the calls will use. A lost probe is simply sent again; a lost call never is.

**In process, no DDS.** When the executor is a tool_server in this very process (same rclpy
context, same resolved name; `lerobot_tools_ros.inprocess`), calls go to it directly
(`inprocess_executor`): the same validation, queue, cancel, progress and one answer, without
the DDS round trip. `in_process=False` keeps every call on DDS. The path each executor takes is
logged when it is first found and whenever it changes.

The client never blocks and never spins: it works from the caller's executor through future
callbacks. The owner calls `poll()` now and then (a timer) to advance discovery and probing, and
`mark_unproven()` after a call went unanswered (the executor may have restarted), so the path is
proven again before the next call. rclpy runs future callbacks as tasks outside any callback
group, so under a multi-threaded executor they would race the owner's callbacks (and, on rclpy 7,
the ActionClient's own unlocked goal tables); an owner there passes `post`, which runs them in
its mutually exclusive group. Everything else runs where the owner calls it.
"""

from dataclasses import dataclass
import time
from typing import Any, Callable

from action_msgs.msg import GoalStatus
from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, inprocess, names
from lerobot_tools_ros.rclpy_fixes import send_goal_async
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.task import Future

__all__ = ['ACTION', 'ExecutorCall', 'ExecutorClient', 'LOCAL', 'Outcome', 'SERVICE']

ACTION = 'action'
SERVICE = 'service'
LOCAL = 'in-process'
_MODES = ('auto', ACTION, SERVICE)
_MAX_PROBE_WAIT_S = 5.0
_PATH_NOTES = {  # logged when the way calls go changes (the first time: at startup)
    LOCAL: 'calls go in-process (its tool_server runs in this process; no DDS round trip)',
    ACTION: 'calls go over DDS as RunTool goals',
    SERVICE: 'calls go over DDS as CallTool requests (no progress, no cancel)',
    '': 'its in-process tool_server is gone; looking for it over DDS'}


@dataclass(frozen=True)
class Outcome:
    """How a call ended, as the executor reported it (or why it could not)."""

    success: bool
    content: str = ''
    error_code: str = ''
    error_message: str = ''
    call_id: str = ''  # as the executor echoed it


FeedbackCallback = Callable[[str, float, str], None]  # stage, progress (0..1 or -1), detail


class ExecutorCall:
    """One call in flight: its outcome arrives through `on_done`; `cancel()` asks it to stop."""

    def __init__(self, call_id: str, kind: str) -> None:
        self.call_id = call_id
        self.kind = kind  # ACTION or SERVICE: how it was sent
        self.done = False
        self.cancel_requested = False
        # Expected to answer at once; the caller must `take_answer` or `release` it (in process
        # only: `inprocess_executor.LocalCall`).
        self.quick = False
        self._goal_handle: Any = None
        self._forget: Callable[[], None] | None = None

    def take_answer(self, timeout_s: float) -> bool:
        """Run the answer on this thread if it comes within `timeout_s` (quick calls only)."""
        return False

    def release(self) -> None:
        """Let the answer of a quick call reach `on_done` the usual way."""

    def cancel(self) -> bool:
        """
        Ask the executor to stop this call; return True if it will be told.

        A goal is cancelled on the executor: it then ends with `cancelled` (or with its own
        result when it finished first), which still arrives through `on_done`. A service request
        cannot be stopped remotely: False is returned and its answer still comes when the
        executor is done (`forget()` to drop it).
        """
        if self.done:
            return False
        self.cancel_requested = True
        if self.kind == SERVICE:
            return False
        if self._goal_handle is not None:
            self._goal_handle.cancel_goal_async()
        return True  # before acceptance: cancelled as soon as the goal is accepted

    def forget(self) -> None:
        """Drop this call: no outcome will be reported (after a timeout, at shutdown)."""
        if not self.done:
            self.done = True
            if self._forget is not None:
                self._forget()


class ExecutorClient:
    """
    Discover, prove and call one tool's executor at `name` (a service/action name).

    `mode`: 'auto' (the action when offered, else the service), or force ACTION or SERVICE.
    `on_ready`: called (on the executor thread) each time the client becomes ready, so callers
    waiting for it can send at once instead of at their next poll.
    `post`: runs a future's callbacks (readiness, acceptance, outcome) where the owner's state
    may be touched; by default they run at once, on the thread that completed the future.
    `in_process`: call a tool_server in this process directly when it hosts the tool.
    """

    def __init__(self, node: Node, name: str, *, mode: str = 'auto', callback_group: Any = None,
                 probe_interval_s: float = 0.25, action_grace_s: float = 0.5,
                 on_ready: Callable[[], None] | None = None,
                 post: Callable[[Callable[[], None]], None] | None = None,
                 in_process: bool = True) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self._node = node
        self._post = post
        self.mode = mode
        self.probe_interval_s = probe_interval_s
        self.action_grace_s = action_grace_s
        self.on_ready = on_ready
        self._service = None if mode == ACTION else node.create_client(
            CallTool, name, callback_group=callback_group)
        self._action = None if mode == SERVICE else ActionClient(
            node, RunTool, name, callback_group=callback_group)
        self.name = (self._service.srv_name if self._service is not None
                     else node.resolve_service_name(name))
        self.kind = ''  # ACTION or SERVICE once proven; '' while not ready
        self._epoch = 0  # bumped whenever readiness is lost: older probe answers do not count
        self._probe_kind = ''
        self._probe_sent_at = 0.0
        self._probe_wait_s = probe_interval_s  # doubles while probes go unanswered (max 5 s)
        self._service_probes: list[Future] = []
        self._service_seen_at: float | None = None
        self._reproving = False  # a proof was lost: say so in the log when it is regained
        self._send_local = None
        self._resolved = node.resolve_service_name(name)  # as the tool_server registers it
        if in_process:
            from lerobot_tools_ros.nodes.inprocess_executor import send_local
            self._send_local = send_local
        self.path = ''  # how calls go now, as logged: LOCAL, or the proven DDS kind

    # -- readiness -----------------------------------------------------------------------------

    def _local(self) -> Any:
        """Return the in-process host of this executor (None: over DDS), noting path changes."""
        host = None
        if self._send_local is not None and self._node.executor is not None:
            host = inprocess.lookup(self._node.context, self._resolved)
        if host is not None:
            self._note_path(LOCAL)
        elif self.path == LOCAL:
            # Its tool_server is gone, and with it whatever DDS proof there was: prove again.
            self.mark_unproven()
            self._note_path('')
        return host

    def _note_path(self, path: str) -> None:
        if path != self.path:
            self.path = path
            self._node.get_logger().info(f'{self._resolved}: {_PATH_NOTES[path]}')

    @property
    def ready(self) -> bool:
        """Return True in process, else once a probe proved that the executor's answers come."""
        return self._local() is not None or bool(self.kind)

    def offered(self) -> str:
        """Return what the executor offers right now (ACTION, SERVICE or '')."""
        if self._action is not None and self._action.server_is_ready():
            return ACTION
        if self._service is not None and self._service.service_is_ready():
            return SERVICE
        return ''

    def poll(self, now: float | None = None) -> bool:
        """Advance discovery and probing; return `ready`. Cheap; call it from a timer."""
        if self._local() is not None:
            return True  # nothing to discover or prove
        now = time.monotonic() if now is None else now
        offered = self.offered()
        if offered != ACTION:
            if self.kind == ACTION or (self.kind == SERVICE and not offered):
                self.mark_unproven()  # what was proven is gone (the executor went away)
        if not offered:
            self._service_seen_at = None
            return False
        if offered == self.kind:
            return True
        if offered == SERVICE and self.mode == 'auto' and self.kind == '':
            # A tool_server offers both; give the action a moment to be discovered too.
            if self._service_seen_at is None:
                self._service_seen_at = now
            if now - self._service_seen_at < self.action_grace_s:
                return False
        if self._probe_kind != offered or now - self._probe_sent_at >= self._probe_wait_s:
            self._send_probe(offered, now)
        return self.ready

    def mark_unproven(self) -> None:
        """Forget the proof (a call went unanswered, the executor vanished): probe again."""
        self._reproving = self._reproving or bool(self.kind)
        self.kind = ''
        self._epoch += 1
        self._probe_kind = ''
        self._drop_service_probes()

    def _send_probe(self, kind: str, now: float) -> None:
        if self._probe_kind == kind:  # the last one went unanswered: back off (a hung executor)
            self._probe_wait_s = min(self._probe_wait_s * 2, _MAX_PROBE_WAIT_S)
        else:
            self._probe_wait_s = self.probe_interval_s
        self._probe_kind, self._probe_sent_at = kind, now
        epoch = self._epoch
        if kind == SERVICE:
            future = self._service.call_async(CallTool.Request(name=names.READINESS_PROBE))
            self._service_probes.append(future)
            self._when_done(future, lambda f: self._proven(SERVICE, epoch) if f.result()
                            is not None else None)
            return

        def accepted(future: Future) -> None:
            handle = future.result()
            if handle is not None and handle.accepted:  # rejected: the executor is closing
                self._when_done(handle.get_result_async(), lambda _: self._proven(ACTION, epoch))
        self._when_done(send_goal_async(self._action, RunTool.Goal(name=names.READINESS_PROBE)),
                        accepted)

    def _when_done(self, future: Future, callback: Callable[[Future], None]) -> None:
        """Run `callback(future)` when it is done, through `post` when the owner gave one."""
        post = self._post
        if post is None:
            future.add_done_callback(callback)
        else:
            future.add_done_callback(lambda done: post(lambda: callback(done)))

    def _proven(self, kind: str, epoch: int) -> None:
        if epoch != self._epoch or self.kind in (ACTION, kind):
            return  # an answer from before readiness was lost, or nothing new
        self.kind = kind  # the first proof, or the action proven after the service
        self._probe_kind = ''
        if self.path != LOCAL:
            if self._reproving and self.path == kind:  # no path change to log: say it is back
                self._node.get_logger().info(f'{self._resolved}: its answers reach us again')
            self._note_path(kind)
        self._reproving = False
        self._drop_service_probes()
        if self.on_ready is not None:
            self.on_ready()

    def _drop_service_probes(self) -> None:
        for future in self._service_probes:
            if not future.done():
                self._service.remove_pending_request(future)
        self._service_probes.clear()

    # -- calls ---------------------------------------------------------------------------------

    def send(self, call_id: str, tool_name: str, arguments_json: str,
             on_done: Callable[[Outcome], None],
             on_feedback: FeedbackCallback | None = None) -> ExecutorCall:
        """
        Send one call the way the executor was proven (check `ready` first).

        `on_done` gets exactly one `Outcome` unless the call is cancelled while it is a service
        request (see `ExecutorCall.cancel`). `on_feedback` gets the goal's feedback (actions
        only).
        """
        host = self._local()
        if host is not None:
            post = self._post
            if post is not None:  # the answer comes as an executor task: into the group
                done_here, feedback_here = on_done, on_feedback
                on_done = lambda outcome: post(lambda: done_here(outcome))  # noqa: E731
                if feedback_here is not None:
                    on_feedback = lambda *report: post(  # noqa: E731
                        lambda: feedback_here(*report))
            return self._send_local(host, self._node.executor, call_id, tool_name,
                                    arguments_json, on_done, on_feedback)
        if not self.kind:
            raise RuntimeError(f'{self.name}: not ready (poll() until ready is True)')
        call = ExecutorCall(call_id, self.kind)

        def finish(outcome: Outcome) -> None:
            if not call.done:
                call.done = True
                on_done(outcome)

        if self.kind == SERVICE:
            future = self._service.call_async(CallTool.Request(
                call_id=call_id, name=tool_name, arguments=arguments_json))
            call._forget = lambda: self._service.remove_pending_request(future)
            _callbacks_when_taken(future)
            self._when_done(future, lambda f: finish(_service_outcome(f.result())))
            return call

        def feedback(message: Any) -> None:
            if on_feedback is not None and not call.done:
                fb = message.feedback
                on_feedback(fb.stage, float(fb.progress), fb.detail)

        def accepted(future: Future) -> None:
            handle = future.result()
            if handle is None or not handle.accepted:
                finish(Outcome(False, error_code=errors.UNAVAILABLE, error_message=(
                    f'the executor at {self.name} refused the goal (it is shutting down); the '
                    'call did not run')))
                self.mark_unproven()
                return
            call._goal_handle = handle
            if call.cancel_requested:
                handle.cancel_goal_async()
            self._when_done(handle.get_result_async(),
                            lambda f: finish(_action_outcome(f.result(), self.name)))

        self._when_done(send_goal_async(
            self._action, RunTool.Goal(call_id=call_id, name=tool_name, arguments=arguments_json),
            feedback_callback=feedback), accepted)
        return call

    def destroy(self) -> None:
        """Release the ROS clients (pending calls get no outcome)."""
        if self._service is not None:
            self._node.destroy_client(self._service)
            self._service = None
        if self._action is not None:
            self._action.destroy()
            self._action = None


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


def _service_outcome(response: Any) -> Outcome:
    if response is None:
        return Outcome(False, error_code=errors.EXECUTION_FAILED,
                       error_message='the service call ended without a response')
    if response.success:
        return Outcome(True, content=response.content, call_id=response.call_id)
    return Outcome(False, error_code=response.error_code or errors.EXECUTION_FAILED,
                   error_message=response.error_message or 'the executor reported failure',
                   call_id=response.call_id)


def _action_outcome(response: Any, name: str) -> Outcome:
    result = getattr(response, 'result', None)
    status = getattr(response, 'status', GoalStatus.STATUS_UNKNOWN)
    if result is None or status == GoalStatus.STATUS_UNKNOWN:
        return Outcome(False, error_code=errors.UNAVAILABLE, error_message=(
            f'the executor at {name} no longer knows the goal (restarted?); the call may or may '
            'not have run'))
    if status == GoalStatus.STATUS_SUCCEEDED and result.success:
        return Outcome(True, content=result.content, call_id=result.call_id)
    if result.error_code:
        return Outcome(False, error_code=result.error_code, error_message=result.error_message,
                       call_id=result.call_id)
    if status == GoalStatus.STATUS_CANCELED:
        return Outcome(False, error_code=errors.CANCELLED, call_id=result.call_id,
                       error_message='the executor cancelled the call')
    return Outcome(False, error_code=errors.EXECUTION_FAILED, call_id=result.call_id,
                   error_message=f'the executor at {name} aborted the goal without a result')
