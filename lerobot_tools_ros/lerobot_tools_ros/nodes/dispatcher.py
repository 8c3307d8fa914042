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
Policy text in, executors called (RunTool actions or CallTool services), one ToolResult per call.

The call lifecycle (admission, queues, deadlines, one result per call) lives in the pure
`dispatch.core.DispatchCore`; this node only wires ROS to it: topics and services in as events,
the core's effects out as publications and executor requests, and one one-shot timer armed for
the core's next deadline (an idle dispatcher does not wake up except for its 1 Hz diagnostics).

Every state callback is in one mutually exclusive callback group and enters the core under one
lock, so the node is safe under any executor; `run_node` spins it on a SingleThreadedExecutor,
measured fastest for this work. Work that starts on other threads is posted into that group (a
guard condition in it): `~/call` requests always, and executor answers (rclpy runs future
callbacks as group-less tasks) whenever the node spins on a multi-threaded executor. The group,
not only the lock, is what makes this safe: the executor clients (rclpy 7's ActionClient keeps
its goal tables unlocked) are touched only from it.
The executor-facing code is `_send`, `_stop_on_executor`, `_on_outcome`, `_on_feedback` and
`_poll_executors`: through `ExecutorClient` each tool's executor is called as a `RunTool` action
when it offers one (feedback relayed on lerobot_tools/progress, cancel, timeouts that stop the
goal), as a `CallTool` service otherwise, and only once its answers are proven to reach us.
A tool_server in this process is called directly instead (`executors.inprocess`).

`~/call` (CallTool) lets other nodes submit a call through the same gates; it is served by a
small node of its own (`<name>_call`) whose threads wait for the calls' results, because rclpy
cannot answer a service request later and an awaiting coroutine would busy-poll the executor.
Catalog reloads and the tool.<name>.<setting> parameters are in `dispatcher_reload`.
"""

from collections import deque
import os
import sys
import threading
import time
from typing import Any

from lerobot_tools_interfaces.msg import TextChunk
from lerobot_tools_interfaces.srv import Approve, CallTool, CancelCalls
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.dispatch import AuditLog, diagnostics, DispatchCore, effects as fx
from lerobot_tools_ros.dispatch.core import stream_key
from lerobot_tools_ros.dispatch.input_loss import InputLoss, message_origin
from lerobot_tools_ros.executors import ExecutorClient, Outcome
from lerobot_tools_ros.nodes.dispatcher_events import record_events
from lerobot_tools_ros.nodes.dispatcher_params import DispatcherParameters
from lerobot_tools_ros.nodes.dispatcher_reload import CatalogReloads, EAGER_CLIENTS, Waiter
from lerobot_tools_ros.nodes.dispatcher_topics import DispatcherTopics
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parsing import parse
from lerobot_tools_ros.untrusted import log_text, ros_string
from rcl_interfaces.msg import SetParametersResult
import rclpy
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.executors import (ExternalShutdownException, MultiThreadedExecutor,
                             SingleThreadedExecutor)
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

# Threads of ~/call and ~/reload_catalog: requests waiting at once (more wait in the queue).
_CALL_THREADS = 16
_CALL_SOURCE_DEFAULT = 'call_service'
# rclpy >= Iron hands a two-argument subscription callback the MessageInfo (sequence numbers,
# from which lost input is counted); Humble's calls every callback with the message alone.
_MESSAGE_INFO = hasattr(Subscription, 'CallbackType')


class Dispatcher(CatalogReloads, Node):
    """Turn policy output into tool calls on executor services, one result per call."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.DISPATCHER_NODE, **kwargs)
        # Set first: destroy_node must work on a dispatcher whose construction failed.
        self._audit: AuditLog | None = None
        self._core: DispatchCore | None = None
        self._lock = threading.Lock()
        self._waiters: dict[Any, Waiter] = {}  # ~/call requests by their call
        self._call_waiters: set = set()  # every ~/call request still waiting (for shutdown)
        self._call_node: Node | None = None
        self.params = params = DispatcherParameters(self)
        # Write failures are reported by the log itself, at most once per 10 s.
        self._audit = AuditLog(params.audit_log_path, on_error=self.get_logger().error) \
            if params.audit_log_path else None
        record_events(self, self._audit)  # interjections, episode markers (dispatcher_events)
        catalog = self._load_catalog()
        refused = params.check_tool_overrides(catalog.names)
        if refused:
            raise errors.ConfigurationError(f'bad per-tool setting: {refused}')
        # Registered first, so values from a parameters file are checked like `ros2 param set`.
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._plan_tool_parameters(catalog)  # the first tools now, the rest in slices
        parse('', catalog, params.formats)  # an unknown format name fails here, not per message
        self._core = DispatchCore(
            catalog, params.core_settings(), params.tool_settings,
            id_prefix=os.urandom(4).hex(),  # unique per dispatcher run
            describe_executor=self._service_name)
        self._group = MutuallyExclusiveCallbackGroup()
        self._posted: deque = deque()  # work from other threads, run in the group (_post)
        self._post_guard = self.create_guard_condition(self._run_posted,
                                                       callback_group=self._group)
        self._start_slices()
        self._tool_clients: dict[str, ExecutorClient] = {}
        self._retiring: dict[str, ExecutorClient] = {}  # of removed tools, until their calls end
        self._clock = self.get_clock()
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self._topics = topics = DispatcherTopics(self, reliable)
        topics.catalog(catalog, self._service_name)  # latched: what MCP clients are offered
        self._handlers = {
            fx.Send: self._send, fx.SendText: self._send_text,
            fx.StopOnExecutor: self._stop_on_executor,
            fx.PublishCall: topics.call, fx.PublishResult: self._publish_result,
            fx.PublishChat: topics.chat, fx.Audit: self._write_audit, fx.Log: self._log,
            fx.PublishProgress: topics.progress, fx.RequestApproval: self._request_approval,
            fx.ApprovalClosed: self._close_approval}
        self._input_loss = InputLoss()
        text_sub = self._text_sub = self.create_subscription(
            String, params.input_topic, self._on_text if _MESSAGE_INFO else self._on_text_only,
            reliable, callback_group=self._group)
        stream_sub = self._stream_sub = self.create_subscription(
            TextChunk, params.stream_topic,
            self._on_chunk if _MESSAGE_INFO else self._on_chunk_only, reliable,
            callback_group=self._group)
        self.create_service(SetBool, '~/set_enabled', self._on_set_enabled,
                            callback_group=self._group)
        self.create_service(Approve, '~/approve', self._on_approve, callback_group=self._group)
        self.create_service(CancelCalls, '~/cancel', self._on_cancel, callback_group=self._group)
        # One one-shot timer, armed for the core's next deadline (see _arm).
        self._wake = self.create_timer(3600.0, self._on_wake, callback_group=self._group,
                                       clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._wake.cancel()
        self._armed_for = float('inf')
        self.create_timer(1.0, self._publish_diagnostics, callback_group=self._group)
        if len(catalog) <= EAGER_CLIENTS:
            for name in catalog.names:
                self._client(name)
        # Keep all: a keep-last queue drops the oldest requests of a burst before rclpy takes
        # them (4 clients x 500 requests lost 992), and a service callback cannot tell.
        self._serve_calls(QoSProfile(history=HistoryPolicy.KEEP_ALL,
                                     reliability=ReliabilityPolicy.RELIABLE))
        allowed = ', '.join(params.allowed_tools) or 'all catalog tools'
        services = self.resolve_service_name(names.tool_service_name(params.service_prefix, 'x'))
        self.get_logger().info(
            f'dispatching {", ".join(catalog.names)} from {text_sub.topic_name} and '
            f'{stream_sub.topic_name} to {services[:-1]}<tool> (allowed: '
            f'{allowed}; formats: {", ".join(params.formats)}; in-process executors: '
            f'{"on" if params.in_process_executors else "off"})')

    @property
    def catalog(self) -> ToolCatalog:
        return self._core.catalog

    @property
    def enabled(self) -> bool:
        return self._core.enabled

    # -- parameters (declared and checked in dispatcher_params) ------------------------------

    def _on_set_parameters(self, parameters: list) -> SetParametersResult:
        refused, updates, changed_tools = self.params.check(
            parameters, self._core.catalog if self._core is not None else None)
        if refused:
            return SetParametersResult(successful=False, reason=refused)
        if self._core is None or self._declaring:
            # Declaring: the values are the core's settings already (overrides or globals).
            return SetParametersResult(successful=True)
        with self._lock:
            if self.params.update(updates, self._core.settings) or changed_tools:
                self._core.settings_changed(time.monotonic())  # per-tool values re-read
        if updates:
            self.get_logger().info(f'parameters changed: {log_text(updates, 500)}')
        return SetParametersResult(successful=True)

    def _load_catalog(self) -> ToolCatalog:
        catalog = ToolCatalog.load(self.params.dataset or None)
        for problem in catalog.problems:
            self.get_logger().warning(problem)
        return catalog

    def _service_name(self, name: str) -> str:
        """Return the fully resolved name of a tool's service, for messages people read."""
        return self.resolve_service_name(names.tool_service_name(self.params.service_prefix,
                                                                 name))

    def _client(self, name: str) -> ExecutorClient:
        client = self._tool_clients.get(name)
        if client is None:
            client = ExecutorClient(
                self, names.tool_service_name(self.params.service_prefix, name),
                mode=self.params.executor_interface, callback_group=self._group,
                on_ready=lambda name=name: self._on_ready(name), post=self._in_group,
                in_process=self.params.in_process_executors)
            self._tool_clients[name] = client
            client.poll()  # discovery and the readiness probe start before the first call
        return client

    # -- events into the core ------------------------------------------------------------------

    def _on_text(self, msg: String, info: Any) -> None:
        with self._lock:
            if self._input_loss.message('text', *message_origin(info),
                                        self._text_sub.get_publisher_count):
                self._warn_input_lost()
            self._apply(self._core.text(msg.data, time.monotonic()))

    def _on_chunk(self, msg: TextChunk, info: Any) -> None:
        now = time.monotonic()
        with self._lock:
            verdict = self._input_loss.chunk(
                'stream', *message_origin(info), self._stream_sub.get_publisher_count,
                stream_key(msg.generation_id), msg.final, now,
                self._core.settings.stream_idle_timeout_s)
            if verdict.lost:
                self._warn_input_lost()
            for generation_id in (*verdict.abandon, verdict.headless):
                if generation_id:
                    self._apply(self._core.abandon_stream(
                        generation_id, self._input_loss.abandoned_message(verdict, generation_id),
                        now, only_open=generation_id != verdict.headless))
            if verdict.take:
                self._apply(self._core.chunk(msg.generation_id, msg.text, msg.final, now,
                                             msg.index))

    def _on_text_only(self, msg: String) -> None:
        self._on_text(msg, None)  # Humble: no MessageInfo, so no loss count

    def _on_chunk_only(self, msg: TextChunk) -> None:
        self._on_chunk(msg, None)

    def _warn_input_lost(self) -> None:
        """Log input loss, at most once per 10 s (diagnostics count every message)."""
        line = self._input_loss.warning(time.monotonic(), lambda topic: (
            self._text_sub if topic == 'text' else self._stream_sub).topic_name)
        if line:
            self.get_logger().warning(line)

    def _on_wake(self) -> None:
        with self._lock:
            self._wake.cancel()
            self._armed_for = float('inf')
            self._poll_executors()
            self._apply(self._core.tick(time.monotonic()))

    def _apply(self, effects: list) -> None:
        """Carry out the core's effects in order, then arm the timer for its next deadline."""
        handlers = self._handlers
        for effect in effects:
            handlers[type(effect)](effect)
        due = self._core.next_wake()
        if due is not None and due < self._armed_for:
            self._arm(due)

    def _arm(self, due: float) -> None:
        self._armed_for = due
        self._wake.timer_period_ns = max(1_000_000, int((due - time.monotonic()) * 1e9))
        self._wake.reset()

    # -- work from other threads ----------------------------------------------------------------

    def _post(self, work: Any) -> None:
        """Run `work()` in the callback group, soon (from any thread)."""
        self._posted.append(work)
        self._post_guard.trigger()

    def _run_posted(self) -> None:
        posted = self._posted
        while posted:
            work = posted.popleft()
            try:
                work()
            except Exception as exc:  # noqa: B902 - one request's fault must not end the node
                self.get_logger().error(
                    f'a posted event failed and was dropped ({type(exc).__name__}: '
                    f'{log_text(exc, 300)}); please report it')

    def _in_group(self, work: Any) -> None:
        """
        Run a future callback in the group.

        At once on a single-threaded executor (every callback already runs on its one thread),
        else posted.
        """
        if isinstance(self.executor, SingleThreadedExecutor):
            work()
        else:
            self._post(work)

    # -- ~/call: the gated entry for other nodes -------------------------------------------------

    def _serve_calls(self, qos: QoSProfile) -> None:
        service = self.resolve_service_name('~/call')
        self._call_node = rclpy.create_node(
            f'{self.get_name()}_call', namespace=self.get_namespace(), context=self.context,
            start_parameter_services=False, use_global_arguments=False)
        group = ReentrantCallbackGroup()
        self._call_node.create_service(CallTool, service, self._on_call, qos_profile=qos,
                                       callback_group=group)
        # Loading and checking a catalog can take seconds (10,000 tools): on these threads the
        # dispatch thread keeps answering calls meanwhile; only the swap runs in the group.
        self._call_node.create_service(Trigger, self.resolve_service_name('~/reload_catalog'),
                                       self._on_reload, callback_group=group)
        self._call_executor = MultiThreadedExecutor(num_threads=_CALL_THREADS,
                                                    context=self.context)
        self._call_executor.add_node(self._call_node)
        self._call_thread = threading.Thread(target=self._spin_calls, daemon=True,
                                             name='dispatcher-call')
        self._call_thread.start()

    def _spin_calls(self) -> None:
        try:
            self._call_executor.spin()
        except ExternalShutdownException:
            pass

    def _on_call(self, request: CallTool.Request, response: CallTool.Response):
        """Post one request into the group (the core), wait in this thread for its result."""
        if request.name == names.READINESS_PROBE:
            # Answered at once, no call made: a caller proves our answers reach it (as the
            # dispatcher does with executors) before its first real call.
            response.call_id = request.call_id
            response.success = True
            return response
        waiter = Waiter()
        source = ros_string(request.source.strip()[:128]) or _CALL_SOURCE_DEFAULT

        def submit() -> None:
            with self._lock:
                call, effects = self._core.submit(request.name, request.arguments,
                                                  time.monotonic(), source=source,
                                                  call_id=request.call_id)
                waiter.call = call
                self._waiters[call] = waiter
                self._apply(effects)
        self._call_waiters.add(waiter)
        try:
            self._post(submit)
            while not waiter.answered.wait(1.0) and self.context.ok():
                pass  # the core answers every call by its deadline; this only notices shutdown
        finally:
            self._call_waiters.discard(waiter)
        result: fx.PublishResult | None = waiter.result
        response.call_id = waiter.call.call_id if waiter.call is not None else request.call_id
        if result is None:
            response.error_code = errors.UNAVAILABLE
            response.error_message = 'the dispatcher shut down before the call had a result'
            return response
        response.success = result.success
        response.content = ros_string(result.content)
        response.error_code = result.error_code
        response.error_message = ros_string(result.error_message)
        return response

    # -- executors (ExecutorClient: the action when offered, else the service) ----------------

    def _send(self, effect: fx.Send) -> None:
        call = effect.call
        client = self._client(call.name)
        if not (client.ready or client.poll()):
            self._apply(self._core.executor_missing(call.call_id, time.monotonic()))
            return
        call.handle = client.send(
            call.call_id, call.name, call.arguments_json,
            lambda outcome, call=call: self._on_outcome(call, outcome),
            lambda stage, progress, detail, call=call: self._on_feedback(call, stage, progress,
                                                                         detail),
            source=call.source,
            stream_argument=call.speech.argument if call.speech is not None else '')

    def _send_text(self, effect: fx.SendText) -> None:
        """Pass on a streamed call's text segments (stream_speech) to its executor."""
        if effect.call.handle is not None:
            effect.call.handle.send_text(effect.text, effect.end)

    def _on_outcome(self, call: Any, outcome: Outcome) -> None:
        # In the group (see _in_group); the lock keeps the core serial with parameter changes.
        with self._lock:
            if call.handle is None:
                return  # forgotten (timed out, shut down)
            call.handle = None
            self._apply(self._core.answered(
                call.call_id, time.monotonic(), success=outcome.success, content=outcome.content,
                error_code=outcome.error_code, error_message=outcome.error_message))

    def _on_feedback(self, call: Any, stage: str, progress: float, detail: str) -> None:
        if not self._topics.progress_followed:
            return  # nobody follows progress: skip it (hot path)
        with self._lock:
            self._apply(self._core.progress(call.call_id, stage, progress, detail))

    def _stop_on_executor(self, effect: fx.StopOnExecutor) -> None:
        handle = effect.call.handle
        if handle is None:
            return
        stopped = handle.cancel()  # a goal is cancelled on the executor; a request cannot be
        if effect.await_answer:
            if not stopped:
                self.get_logger().info(
                    f'{log_text(effect.call.name)} [{log_text(effect.call.call_id)}] '
                    f'{effect.reason}: its executor has no action, so it runs to its end and '
                    'the tool stays busy until then')
            return  # its answer releases the tool
        handle.forget()
        effect.call.handle = None
        # No answer in time: the executor may have died or restarted, so its answers must be
        # proven to reach us again before the next call goes out.
        self._client(effect.call.name).mark_unproven()

    def _poll_executors(self) -> None:
        for name in self._core.waiting_tools():
            if self._client(name).poll():
                self._apply(self._core.executor_available(name, time.monotonic()))

    def _on_ready(self, name: str) -> None:
        """Send what waited for an executor whose answers were just proven to reach us."""
        with self._lock:
            if name in self._core.waiting_tools():
                self._apply(self._core.executor_available(name, time.monotonic()))

    # -- effects out ------------------------------------------------------------------------------

    def _publish_result(self, effect: fx.PublishResult) -> None:
        self._topics.result(effect)
        call = effect.call
        waiter = self._waiters.pop(call, None)
        if waiter is not None:  # a ~/call request waits for this result
            waiter.result = effect
            waiter.answered.set()
        if effect.error_code:
            self.get_logger().warning(
                f'{log_text(call.name)} [{log_text(call.call_id)}] {effect.error_code}: '
                f'{log_text(effect.error_message, 500)}')

    def _request_approval(self, effect: fx.RequestApproval) -> None:
        call = effect.call
        self._topics.approval(call, effect.reason, effect.timeout_s)
        self.get_logger().info(
            f'{log_text(call.name)} [{log_text(call.call_id)}] waits for approval '
            f'({log_text(effect.reason)}); decide with ~/approve within {effect.timeout_s:g} s')

    def _close_approval(self, effect: fx.ApprovalClosed) -> None:
        # timeout_s 0: nothing left to decide. The topic keeps recent requests (transient
        # local), so a tool started later sees which requests are closed.
        self._topics.approval(effect.call, f'closed: {effect.outcome}', 0.0)

    def _write_audit(self, effect: fx.Audit) -> None:
        if self._audit:
            self._audit.write(effect.event, self._clock.now().nanoseconds, **effect.fields)

    def _log(self, effect: fx.Log) -> None:
        log = getattr(self.get_logger(), effect.level, self.get_logger().warning)
        log(log_text(effect.text, 1000))

    # -- services, diagnostics -------------------------------------------------------------------

    def _on_set_enabled(self, request: SetBool.Request, response: SetBool.Response):
        with self._lock:
            if bool(request.data) == self.enabled:
                response.success = True
                response.message = f'tool use already {"enabled" if self.enabled else "paused"}'
                return response
            effects = self._core.set_enabled(bool(request.data), time.monotonic())
            self._apply(effects)
        answered = sum(isinstance(effect, fx.PublishResult) for effect in effects)
        stopped = sum(isinstance(effect, fx.StopOnExecutor) for effect in effects)
        state = 'enabled' if self.enabled else 'paused'
        response.success = True
        response.message = f'tool use {state}' + (
            f'; {answered} call(s) answered paused ({stopped} of them cancelled on their '
            'executor while running)' if answered else '')
        self.get_logger().info(response.message)
        return response

    def _on_cancel(self, request: CancelCalls.Request, response: CancelCalls.Response):
        """Cancel one call, or every call of a generation (a policy that changed its mind)."""
        if not request.call_id and not request.generation_id:
            response.success = False
            response.message = 'nothing to cancel: give a call_id or a generation_id'
            return response
        with self._lock:
            effects = self._core.cancel(time.monotonic(), call_id=request.call_id,
                                        generation_id=request.generation_id)
            self._apply(effects)
        cancelled = [effect.call.call_id for effect in effects
                     if isinstance(effect, fx.PublishResult)
                     and effect.error_code == errors.CANCELLED]
        what = (f'call {log_text(request.call_id, 80)}' if request.call_id
                else f'generation {log_text(request.generation_id, 80)}')
        response.success = bool(cancelled)
        response.cancelled_call_ids = cancelled
        response.message = (f'cancelled {len(cancelled)} call(s) of {what}' if cancelled
                            else f'no pending call matches {what}; it may have finished already')
        self.get_logger().info(response.message)
        return response

    def _on_approve(self, request: Approve.Request, response: Approve.Response):
        if request.call_id == names.READINESS_PROBE:  # a client proving its answers reach it
            response.message = 'probe: nothing decided'
            return response
        # rclpy gives a service callback no caller identity: the note says who decided.
        note = ros_string(request.note.strip()[:200])
        decided_by = note or 'an operator who left no note'
        with self._lock:
            found, effects = self._core.decide(request.call_id, bool(request.approve),
                                               decided_by, note, time.monotonic())
            self._apply(effects)
        verdict = 'approved' if request.approve else 'denied'
        response.success = found
        if found:
            response.message = f'call {request.call_id} {verdict}'
            self.get_logger().info(f'call {log_text(request.call_id)} {verdict} by '
                                   f'{log_text(decided_by)}')
        else:
            response.message = (f'no call {request.call_id!r} is waiting for approval (it may '
                                'have been decided, timed out or been paused)')
        return response

    def _executor_available(self, name: str) -> bool:
        """For diagnostics: a tool not called yet in a large catalog has no client to ask."""
        client = self._tool_clients.get(name)
        return client is not None and client.poll()

    def _publish_diagnostics(self) -> None:
        with self._lock:
            self._retire_idle_clients()
            found = diagnostics.statuses(self._core, self._audit, self._executor_available,
                                         self._service_name, self._input_loss)
        self._topics.diagnostics(found)

    @property
    def pending_calls(self) -> int:
        """Count calls queued or in flight, plus streamed generations not yet finished."""
        return self._core.pending_calls if self._core is not None else 0

    def destroy_node(self) -> None:
        # Every accepted call still gets its one result, even at shutdown.
        try:
            # A constructor that failed half-way (a bad audit_log) has no calls to answer.
            if self._core is not None and hasattr(self, '_handlers') and self.context.ok():
                with self._lock:
                    self._apply(self._core.shutdown(time.monotonic()))
        except Exception as exc:  # noqa: B902 - shutting down regardless
            self.get_logger().error(f'could not publish the final results: {exc}')
        finally:
            for waiter in [*self._waiters.values(), *self._call_waiters]:
                waiter.answered.set()  # answered 'unavailable' if the core had no result for it
            if self._call_node is not None:
                self._call_executor.shutdown(timeout_sec=2.0)
                self._call_node.destroy_node()
                self._call_thread.join(2.0)
            if self._audit:
                self._audit.close()
            super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(Dispatcher, 'dispatcher', args)


if __name__ == '__main__':
    sys.exit(main())
