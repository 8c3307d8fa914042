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
measured fastest for this work. Work that starts on other threads is posted into that group
(`group_work`): `~/call` requests always, and executor answers (rclpy runs future callbacks as
group-less tasks) whenever the node spins on a multi-threaded executor. The group, not only the
lock, is what makes this safe: the executor clients (rclpy 7's ActionClient keeps its goal
tables unlocked) are touched only from it.
The executor-facing code (`_send` ... `_poll_executors`) calls each tool through
`executors.ToolClients`: a `RunTool` action when offered, else a `CallTool` service, once its
answers are proven to reach us; a tool_server in this process directly (`executors.inprocess`).

The node holds the rest as objects it calls: its parameters (`dispatcher_params`), publishers
(`dispatcher_topics`), ~/set_enabled, ~/approve and ~/cancel (`dispatcher_operator`), the
`<name>_call` node serving `~/call` and `~/reload_catalog` (`dispatcher_calls`), and catalog
reloads with the tool.<name>.<setting> parameters (`catalog_reload.CatalogReloader`).
"""
import functools
import os
import sys
import threading
import time
from typing import Any, Callable

from lerobot_tools_interfaces.msg import TextChunk
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.dispatch import AuditLog, diagnostics, DispatchCore, effects as fx
from lerobot_tools_ros.dispatch.core import stream_key
from lerobot_tools_ros.dispatch.input_loss import InputLoss, message_origin
from lerobot_tools_ros.dispatcher.calls import CallService, Waiter
from lerobot_tools_ros.dispatcher.catalog_reload import CatalogReloader, load_catalog
from lerobot_tools_ros.dispatcher.events import record_events
from lerobot_tools_ros.dispatcher.group_work import GroupWork
from lerobot_tools_ros.dispatcher.operator_services import OperatorServices
from lerobot_tools_ros.dispatcher.params import DispatcherParameters
from lerobot_tools_ros.dispatcher.recovery import audited_first, Recovery
from lerobot_tools_ros.dispatcher.topics import DispatcherTopics
from lerobot_tools_ros.executors import Outcome, ToolClients
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parameters.spec import MAX_SECONDS
from lerobot_tools_ros.parsing import parse
from lerobot_tools_ros.untrusted import log_text
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from std_msgs.msg import String

# rclpy >= Iron hands a two-argument subscription callback the MessageInfo (sequence numbers,
# from which lost input is counted); Humble's calls every callback with the message alone.
_MESSAGE_INFO = hasattr(Subscription, 'CallbackType')


class Dispatcher(Node):
    """Turn policy output into tool calls on executor services, one result per call."""

    accepting = True  # false while a managed dispatcher is not active (set_accepting)
    # Set in __init__; destroy_node (of a half-built dispatcher) and the parameter callback
    # (run while parameters are declared, before the core exists) use getattr(..., None).
    _core: DispatchCore
    _reloads: CatalogReloader
    _calls: CallService

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.DISPATCHER_NODE, **kwargs)
        # Set first: destroy_node must work on a dispatcher whose construction failed.
        self._audit: AuditLog | None = None
        self._lock = threading.Lock()
        self._build()

    def _build(self) -> None:
        """Make everything the dispatcher runs with (a managed one does it at configure)."""
        self.params = params = DispatcherParameters(self)
        # Write failures are reported by the log itself, at most once per 10 s.
        self._audit = AuditLog(params.audit_log_path, on_error=self.get_logger().error) \
            if params.audit_log_path else None
        record_events(self, self._audit)  # interjections, episode markers (dispatcher_events)
        catalog = load_catalog(self.get_logger(), params.dataset)
        refused = params.check_tool_overrides(catalog.names)
        if refused:
            raise errors.ConfigurationError(f'bad per-tool setting: {refused}')
        self._group = MutuallyExclusiveCallbackGroup()
        self._work = work = GroupWork(self, self._group)  # from other threads, run in the group
        self._tool_clients = ToolClients(self, params, group=self._group,
                                         on_ready=self._on_ready, post=work.in_group)
        # Registered first, so values from a parameters file are checked like `ros2 param set`.
        self.add_on_set_parameters_callback(self._on_set_parameters)
        # Declares the first tools' parameters now, the rest in slices once spinning.
        self._reloads = CatalogReloader(
            self, params, catalog, group=self._group, current=lambda: self._core.catalog,
            post=work.post, swap=self._swap_catalog, busy=self._busy,
            add_client=self._tool_clients.get,
            publish_catalog=lambda catalog: self._topics.catalog(catalog, self._service_name))
        parse('', catalog, params.formats)  # an unknown format name fails here, not per message
        self._core = DispatchCore(
            catalog, params.core_settings(), params.tool_settings,
            id_prefix=os.urandom(4).hex(),  # unique per dispatcher run
            describe_executor=self._service_name)
        self._clock = self.get_clock()
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self._topics = topics = DispatcherTopics(self, reliable)
        # A killed run's calls: answered; its callers' results kept for their retries.
        self._recovery = Recovery(self, self._audit, topics, self._group, self._core.remember)
        topics.catalog(catalog, self._service_name)  # latched: what MCP clients are offered
        self._handlers: dict[type, Callable[[Any], None]] = {
            fx.Send: self._send, fx.SendText: self._send_text,
            fx.StopOnExecutor: self._stop_on_executor,
            fx.PublishCall: topics.call, fx.PublishResult: self._publish_result,
            fx.AnswerAgain: lambda effect: self._calls.answer(effect.call, effect.earlier),
            fx.PublishChat: topics.chat, fx.Audit: lambda effect: None, fx.Log: self._log,
            fx.PublishProgress: topics.progress, fx.RequestApproval: topics.request_approval,
            fx.ApprovalClosed: topics.close_approval}
        self._effects = fx.EffectRunner(self._carry_out)  # in order, one batch at a time
        self._input_loss = InputLoss()
        on_text, on_chunk = (self._on_text, self._on_chunk) if _MESSAGE_INFO else (  # Humble:
            lambda msg: self._on_text(msg, None), lambda msg: self._on_chunk(msg, None))  # no info
        text_sub = self._text_sub = self.create_subscription(
            String, params.input_topic, on_text, reliable, callback_group=self._group)
        stream_sub = self._stream_sub = self.create_subscription(
            TextChunk, params.stream_topic, on_chunk, reliable, callback_group=self._group)
        self._operator = OperatorServices(self, self._group, self._enter)  # pause, approve, cancel
        # One one-shot timer, armed for the core's next deadline (see _arm).
        self._wake = self.create_timer(3600.0, self._on_wake, callback_group=self._group,
                                       clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._wake.cancel()
        self._armed_for = float('inf')
        self.create_timer(1.0, self._publish_diagnostics, callback_group=self._group)
        self._reloads.start_clients(catalog)  # a small catalog's now, a large one's when called
        self._calls = CallService(self, submit=self._submit, post=work.post,
                                  reload=self._reloads.on_reload)
        services = self.resolve_service_name(names.tool_service_name(params.service_prefix, 'x'))
        self.get_logger().info(params.summary(catalog, text_sub.topic_name,
                                              stream_sub.topic_name, services[:-1] + '<tool>'))

    @property
    def catalog(self) -> ToolCatalog:
        return self._core.catalog

    # -- parameters (declared and checked in dispatcher_params) ------------------------------

    def _on_set_parameters(self, parameters: list) -> SetParametersResult:
        core = getattr(self, '_core', None)
        refused, updates, changed_tools = self.params.check(
            parameters, core.catalog if core is not None else None)
        if refused:
            return SetParametersResult(successful=False, reason=refused)
        if core is None or self._reloads.declaring:
            # Declaring: the values are the core's settings already (overrides or globals).
            return SetParametersResult(successful=True)
        with self._lock:
            if self.params.update(updates, self._core.settings) or changed_tools:
                self._core.settings_changed(time.monotonic())  # per-tool values re-read
        if updates:
            self.get_logger().info(f'parameters changed: {log_text(updates, 500)}')
        return SetParametersResult(successful=True)

    def set_accepting(self, accepting: bool) -> None:
        """Resume (a managed dispatcher's activate) or pause (deactivate): dispatcher_operator."""
        self.accepting = accepting
        self._operator.set_accepting(accepting)

    def _service_name(self, name: str) -> str:
        """Return the fully resolved name of a tool's service, for messages people read."""
        return self.resolve_service_name(names.tool_service_name(self.params.service_prefix,
                                                                 name))

    def executor_path(self, name: str) -> str:
        """How calls of tool `name` go now (LOCAL, ACTION, SERVICE, or '' while unproven)."""
        return self._tool_clients.get(name).path

    def _swap_catalog(self, catalog: ToolCatalog, removed: list[str]) -> None:
        """In the group (a reload): make `catalog` the core's; retire removed tools' clients."""
        with self._lock:
            self._core.catalog = catalog
            self._core.settings_changed(time.monotonic())
            self._tool_clients.retire(removed)
            self._tool_clients.retire_idle(self._busy_tools)

    def _busy_tools(self) -> list[str]:
        """Name the tools with calls still out (their retired clients are kept)."""
        return [call.name for call in self._core.active_calls()]

    def _busy(self) -> bool:
        """Return whether calls are pending or work is posted (reload slices leave a gap)."""
        return bool(self._core.pending_calls or self._work.pending)

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

    def _enter(self, event: Any) -> Any:
        """Run `event(core, now)` -> (answer, effects or None) in the lock; apply; answer."""
        with self._lock:
            answer, effects = event(self._core, time.monotonic())
            if effects is not None:
                self._apply(effects)
        return answer

    def _apply(self, effects: list) -> None:
        """Carry out the core's effects in order (`EffectRunner`), then arm the next wake."""
        self._effects.run(effects)
        due = self._core.next_wake()
        if due is not None and due < self._armed_for:
            self._arm(due)

    def _carry_out(self, effects: list) -> None:
        audit = self._audit  # audit records first, with the OS before the rest happens:
        for effect in effects if audit is None else audited_first(audit, effects, self._clock):
            self._handlers[type(effect)](effect)

    def _arm(self, due: float) -> None:
        # At most MAX_SECONDS (a later deadline wakes the core early; it re-arms): no overflow.
        self._armed_for = due
        wait_s = min(max(due - time.monotonic(), 0.001), MAX_SECONDS)
        self._wake.timer_period_ns = int(wait_s * 1e9)
        self._wake.reset()

    def _submit(self, request: CallTool.Request, source: str, waiter: Waiter) -> None:
        """In the group: a ~/call request's call into the core (`dispatcher_calls`)."""
        with self._lock:
            call, effects = self._core.submit(request.name, request.arguments, time.monotonic(),
                                              source=source, call_id=request.call_id)
            self._calls.expect(call, waiter)
            self._apply(effects)

    # -- executors (ExecutorClient: the action when offered, else the service) ----------------

    def _send(self, effect: fx.Send) -> None:
        call = effect.call
        client = self._tool_clients.get(call.name)
        if not (client.ready or client.poll()):  # told to the core once this batch is done
            self._effects.follow_up(lambda: self._core.executor_missing(call.call_id,
                                                                        time.monotonic()))
            return
        call.handle = client.send(
            call.call_id, call.name, call.arguments,
            functools.partial(self._on_outcome, call), functools.partial(self._on_feedback, call),
            source=call.source,
            stream_argument=call.speech.argument if call.speech is not None else '')

    def _send_text(self, effect: fx.SendText) -> None:
        """Pass on a streamed call's text segments (stream_speech) to its executor."""
        if effect.call.handle is not None:
            effect.call.handle.send_text(effect.text, effect.end)

    def _on_outcome(self, call: Any, outcome: Outcome) -> None:
        # In the group (GroupWork.in_group); the lock keeps the core serial with parameter changes.
        with self._lock:
            if call.handle is None:
                return  # forgotten (timed out, shut down)
            call.handle = None
            self._apply(self._core.answered(
                call.call_id, time.monotonic(), success=outcome.success, content=outcome.content,
                error_code=outcome.error_code, error_message=outcome.error_message,
                outcome=outcome.outcome))

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
        self._tool_clients.get(effect.call.name).mark_unproven()

    def _poll_executors(self) -> None:
        for name in self._core.waiting_tools():
            if self._tool_clients.get(name).poll():
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
        self._calls.answer(call, effect)  # a ~/call request may wait for this result
        if effect.error_code:
            self.get_logger().warning(
                f'{log_text(call.name)} [{log_text(call.call_id)}] {effect.error_code}: '
                f'{log_text(effect.error_message, 500)}')

    def _log(self, effect: fx.Log) -> None:
        log = getattr(self.get_logger(), effect.level, self.get_logger().warning)
        log(log_text(effect.text, 1000))

    # -- diagnostics, shutdown -------------------------------------------------------------------

    def _publish_diagnostics(self) -> None:
        with self._lock:
            self._tool_clients.retire_idle(self._busy_tools)
            found = diagnostics.statuses(self._core, self._audit, self._tool_clients.available,
                                         self._service_name, self._input_loss)
        self._topics.diagnostics(found)

    def active_calls(self) -> list:
        """Return the calls accepted and not answered yet (for diagnostics and tests)."""
        core = getattr(self, '_core', None)
        return core.active_calls() if core is not None else []

    @property
    def pending_calls(self) -> int:
        """Count calls queued or in flight, plus streamed generations not yet finished."""
        core = getattr(self, '_core', None)
        return core.pending_calls if core is not None else 0

    def destroy_node(self) -> None:
        self._release()
        super().destroy_node()

    def _release(self) -> None:
        """Answer every accepted call, close ~/call and the audit log (shutdown, cleanup)."""
        try:  # every accepted call gets its one result; a half-built dispatcher has none
            core = getattr(self, '_core', None)
            if core is not None and hasattr(self, '_handlers') and self.context.ok():
                with self._lock:
                    self._apply(final := core.shutdown(time.monotonic()))
                if final:  # the last results reach their subscribers before we go
                    self._topics.flush()
        except Exception as exc:  # noqa: B902 - shutting down regardless
            self.get_logger().error(f'could not publish the final results: {exc}')
        finally:
            calls = getattr(self, '_calls', None)
            for waiting in (calls, getattr(self, '_reloads', None)):
                if waiting is not None:
                    waiting.release()  # 'unavailable' if the core had no result for a call
            if calls is not None:
                calls.close()
            if self._audit:
                self._audit.close()


def main(args: list[str] | None = None) -> int:
    return run_node(Dispatcher, 'dispatcher', args)


if __name__ == '__main__':
    sys.exit(main())
