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
One tool's executor as its callers see it: in process, a `RunTool` action, or `CallTool`.

The choice is made here, per call, and nowhere else:

- **In process, no DDS.** When the executor is a tool_server in this very process (same rclpy
  context, same resolved name; `lerobot_tools_ros.inprocess`), calls go to it directly
  (`InProcessExecutor`): the same queue, cancel, progress and one answer, without the DDS
  round trip, and the arguments as the caller validated them (no JSON text, no second check
  when the tool_server's schema of the tool is the caller's). `in_process=False` keeps every
  call on DDS.
- **Discovery, not configuration.** Otherwise the executor's kind is whatever it offers at the
  tool's name: the action (feedback, cancel) when its server is there, the service otherwise.
  A tool_server offers both; an executor that only has the service is still usable.
- **Ready means answers reach us.** `service_is_ready()` / `server_is_ready()` only prove that
  our *requests* reach the executor; with Fast DDS the executor's response writer can match our
  reader a moment later, and an answer sent before that is lost (a first call that "times out"
  although it ran). So a DDS path is ready only after a readiness probe (a request or goal
  naming `names.READINESS_PROBE`, answered at once without running anything) has come back on
  the very path the calls will use. A lost probe is simply sent again; a lost call never is.

The path each executor takes is logged when it is first found and whenever it changes. The
client never blocks and never spins: it works from the caller's executor through future
callbacks. The owner calls `poll()` now and then (a timer) to advance discovery and probing,
and `mark_unproven()` after a call went unanswered (the executor may have restarted). rclpy
runs future callbacks as tasks outside any callback group, so under a multi-threaded executor
they would race the owner's callbacks (and, on rclpy 7, the ActionClient's own unlocked goal
tables); an owner there passes `post`, which runs them in its mutually exclusive group.
"""

import time
from typing import Any, Callable

from lerobot_tools_ros import errors, inprocess, names
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_msgs.msg import String

from .action import ActionExecutor
from .base import (ACTION, Arguments, DoneCallback, Executor, ExecutorCall, FeedbackCallback,
                   LOCAL, Outcome, Post, SERVICE)
from .inprocess import InProcessExecutor
from .service import ServiceExecutor

_MODES = ('auto', ACTION, SERVICE)
_MAX_PROBE_WAIT_S = 5.0
_PATH_NOTES = {  # logged when the way calls go changes (the first time: at startup)
    LOCAL: 'calls go in-process (its tool_server runs in this process; no DDS round trip)',
    ACTION: 'calls go over DDS as RunTool goals',
    SERVICE: 'calls go over DDS as CallTool requests (no progress, no cancel)',
    '': 'its in-process tool_server is gone; looking for it over DDS'}


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
                 on_ready: Callable[[], None] | None = None, post: Post | None = None,
                 in_process: bool = True) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self._node = node
        self._post = post
        self.mode = mode
        self.probe_interval_s = probe_interval_s
        self.action_grace_s = action_grace_s
        self.on_ready = on_ready
        self._resolved = node.resolve_service_name(name)  # as the tool_server registers it
        # Stops of calls sent over DDS (see ExecutorCall.cancel); volatile: a stop is for now.
        self._stops: Any = node.create_publisher(
            String, names.tool_stop_topic(self._resolved),
            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE),
            callback_group=callback_group)
        self._service = None if mode == ACTION else ServiceExecutor(
            node, name, callback_group, self._when_done, self._stop)
        self._action = None if mode == SERVICE else ActionExecutor(
            node, name, callback_group, self._when_done, self.mark_unproven, self._stop)
        self.name = self._resolved
        self.kind = ''  # ACTION or SERVICE once proven; '' while not ready
        self._epoch = 0  # bumped whenever readiness is lost: older probe answers do not count
        self._probe_kind = ''
        self._probe_sent_at = 0.0
        self._probe_wait_s = probe_interval_s  # doubles while probes go unanswered (max 5 s)
        self._service_seen_at: float | None = None
        self._reproving = False  # a proof was lost: say so in the log when it is regained
        self._in_process = in_process
        self._inprocess: InProcessExecutor | None = None
        self.path = ''  # how calls go now, as logged: LOCAL, or the proven DDS kind

    # -- which executor ------------------------------------------------------------------------

    def _local(self) -> InProcessExecutor | None:
        """Return the in-process executor of this tool (None: over DDS), noting path changes."""
        host = None
        if self._in_process and self._node.executor is not None:
            host = inprocess.lookup(self._node.context, self._resolved)
        if host is not None:
            self._note_path(LOCAL)
            local, executor = self._inprocess, self._node.executor
            if local is None or local.host is not host or local.executor is not executor:
                local = self._inprocess = InProcessExecutor(host, executor, self._post)
            return local
        self._inprocess = None
        if self.path == LOCAL:
            # Its tool_server is gone, and with it whatever DDS proof there was: prove again.
            self.mark_unproven()
            self._note_path('')
        return None

    def _note_path(self, path: str) -> None:
        if path != self.path:
            self.path = path
            self._node.get_logger().info(f'{self._resolved}: {_PATH_NOTES[path]}')

    @property
    def ready(self) -> bool:
        """Return True in process, else once a probe proved that the executor's answers come."""
        return self._local() is not None or bool(self.kind)

    def offered(self) -> str:
        """Return what the executor offers over DDS right now (ACTION, SERVICE or '')."""
        if self._action is not None and self._action.offered():
            return ACTION
        if self._service is not None and self._service.offered():
            return SERVICE
        return ''

    # -- readiness -----------------------------------------------------------------------------

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
        if self._service is not None:
            self._service.drop_probes()

    def _send_probe(self, kind: str, now: float) -> None:
        if self._probe_kind == kind:  # the last one went unanswered: back off (a hung executor)
            self._probe_wait_s = min(self._probe_wait_s * 2, _MAX_PROBE_WAIT_S)
        else:
            self._probe_wait_s = self.probe_interval_s
        self._probe_kind, self._probe_sent_at = kind, now
        epoch = self._epoch
        executor = self._service if kind == SERVICE else self._action
        if executor is None:
            raise RuntimeError(f'{self.name}: no {kind} client to probe')
        executor.probe(lambda: self._proven(kind, epoch))

    def _stop(self, call_id: str) -> bool:
        """Tell the tool's executor to stop `call_id`; True when a tool_server listens."""
        stops = self._stops
        if stops is None or not call_id:
            return False
        stops.publish(String(data=call_id))
        return stops.get_subscription_count() > 0

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
        if self._service is not None:
            self._service.drop_probes()
        if self.on_ready is not None:
            self.on_ready()

    # -- calls ---------------------------------------------------------------------------------

    def send(self, call_id: str, tool_name: str, arguments: Arguments, on_done: DoneCallback,
             on_feedback: FeedbackCallback | None = None, *, source: str = '',
             stream_argument: str = '') -> ExecutorCall:
        """
        Send one call the way the executor is reached now (check `ready` first).

        `arguments`: the dict the caller validated (`ToolCatalog.validate`), not JSON text: it
        becomes JSON only on a DDS path, and in process the tool_server takes the caller's
        validation when its schema of the tool is the same (`executors.base`).

        `on_done` gets exactly one `Outcome` unless the call is cancelled while it is a service
        request (see `ExecutorCall.cancel`) or forgotten. `on_feedback` gets the tool's progress
        (actions and in process). `stream_argument`: a streamed call whose text
        follows through the handle's `send_text`: as a goal plus text segments, in process
        straight to the tool, or (a CallTool request cannot grow) sent once the text is whole.
        """
        executor: Executor | None = self._local()
        if executor is None:
            if not self.kind:
                raise RuntimeError(f'{self.name}: not ready (poll() until ready is True)')
            executor = self._action if self.kind == ACTION else self._service
            if executor is None:
                raise RuntimeError(f'{self.name}: no {self.kind} client to send through')
        if not stream_argument:
            return executor.send(call_id, tool_name, arguments, source, on_done, on_feedback)
        if executor.kind == SERVICE:
            return _WholeText(executor, (call_id, tool_name, arguments, source, on_done,
                                         on_feedback), stream_argument)
        return executor.send(call_id, tool_name, arguments, source, on_done, on_feedback,
                             stream_argument)

    def destroy(self) -> None:
        """Release the ROS clients (pending calls get no outcome)."""
        for executor in (self._service, self._action):
            if executor is not None:
                executor.destroy()
        self._service = self._action = None
        if self._stops is not None:
            self._node.destroy_publisher(self._stops)
            self._stops = None


class _WholeText(ExecutorCall):
    """A streamed call to an executor that only has the service: sent when its text is whole."""

    def __init__(self, executor: Any, call: tuple, argument: str) -> None:
        super().__init__(call[0], SERVICE)
        self._executor = executor
        self._call = call
        self._argument = argument
        self._text: list[str] = []
        self._sent: ExecutorCall | None = None

    def send_text(self, text: str, end: bool) -> None:
        if self.done or self._sent is not None:
            return
        self._text.append(text)
        if not end:
            return
        call_id, tool_name, arguments, source, on_done, on_feedback = self._call
        # A new dict: the caller's stays as it gave it. The CallTool request is validated
        # whole by the tool_server.
        whole = {**arguments, self._argument: ''.join(self._text)}
        self._sent = self._executor.send(call_id, tool_name, whole, source,
                                         lambda outcome: self.finish(on_done, outcome),
                                         on_feedback)

    def cancel(self) -> bool:
        if self._sent is not None:
            return self._sent.cancel()
        if self.done:
            return False
        self.finish(self._call[4], Outcome(False, error_code=errors.CANCELLED, error_message=(
            'cancelled before its text was complete; its executor has only the CallTool '
            'service, so nothing was sent and nothing ran'), outcome=errors.NOT_RUN))
        return True

    def forget(self) -> None:
        if self._sent is not None:
            self._sent.forget()
        super().forget()
