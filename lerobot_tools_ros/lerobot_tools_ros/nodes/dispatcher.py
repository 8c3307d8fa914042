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
lock (executor answers arrive as group-less future callbacks), so the node is safe under any
executor; `run_node` spins it on a SingleThreadedExecutor, measured fastest for this work.
The executor-facing code is `_send`, `_stop_on_executor`, `_on_outcome`, `_on_feedback` and
`_poll_executors`: through `ExecutorClient` each tool's executor is called as a `RunTool` action
when it offers one (feedback relayed on lerobot_tools/progress, cancel, timeouts that stop the
goal), as a `CallTool` service otherwise, and only once its answers are proven to reach us.

`~/call` (CallTool) lets other nodes submit a call through the same gates; it is served by a
small node of its own (`<name>_call`) whose threads wait for the calls' results, because rclpy
cannot answer a service request later and an awaiting coroutine would busy-poll the executor.
"""

import json
import os
import sys
import threading
import time
from typing import Any

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from lerobot_tools_interfaces.msg import (
    ApprovalRequest, TextChunk, ToolCall, ToolProgress, ToolResult)
from lerobot_tools_interfaces.srv import Approve, CallTool, CancelCalls
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import CatalogError, ToolCatalog
from lerobot_tools_ros.dispatch import (APPROVAL_MODES, AuditLog, diagnostics, DispatchCore,
                                        DispatchSettings, effects as fx, ToolSettings)
from lerobot_tools_ros.dispatch.core import stream_key
from lerobot_tools_ros.dispatch.input_loss import InputLoss, message_origin
from lerobot_tools_ros.nodes.executor_client import ExecutorClient, Outcome
from lerobot_tools_ros.nodes.params import (
    ALL, declare, means_all, overrides_with_prefix, string_list)
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parsing import parse
from lerobot_tools_ros.untrusted import log_text, ros_string
from rcl_interfaces.msg import ParameterDescriptor
import rclpy
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

# Settings a parameters file may give per tool as tool.<name>.<setting>.
_PER_TOOL_SETTINGS = ('timeout_s', 'rate_limit_hz', 'burst', 'repeat_window_s', 'approval')
# Seconds in which an identical call of a tool is a duplicate, unless tool.<name>.repeat_window_s
# says otherwise: on for say (a VLA emits the same <say> with every action chunk), off elsewhere
# (record_observation: repeating is the point).
_DEFAULT_REPEAT_WINDOW_S = {'say': 3.0}
# Threads of ~/call: requests waiting for their results at once (more wait in the queue).
_CALL_THREADS = 16
_CALL_SOURCE_DEFAULT = 'call_service'
# rclpy >= Iron hands a two-argument subscription callback the MessageInfo (sequence numbers,
# from which lost input is counted); Humble's calls every callback with the message alone.
_MESSAGE_INFO = hasattr(Subscription, 'CallbackType')
# Dispatcher parameters that are DispatchSettings fields of the same name.
_CORE_SETTINGS = ('formats', 'allowed_tools', 'max_pending', 'serialize_per_tool',
                  'max_input_bytes', 'stream_idle_timeout_s', 'max_open_streams',
                  'max_stream_bytes')


def _json(message: dict) -> str:
    """Encode JSON for a ROS string; lone surrogates stay recoverable as JSON escapes."""
    return json.dumps(message, ensure_ascii=False).encode('utf-8', 'backslashreplace').decode()


def _duration(seconds: float) -> Duration:
    seconds = max(0.0, seconds)
    whole = int(seconds)
    return Duration(sec=whole, nanosec=int((seconds - whole) * 1e9))


class Dispatcher(Node):
    """Turn policy output into tool calls on executor services, one result per call."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.DISPATCHER_NODE, **kwargs)
        # Set first: destroy_node must work on a dispatcher whose construction failed.
        self._audit: AuditLog | None = None
        self._core: DispatchCore | None = None
        self._lock = threading.Lock()
        self._waiters: dict[Any, list] = {}  # ~/call requests: call -> [Event, its result]
        self._call_node: Node | None = None
        self._declare_parameters()
        # Write failures are reported by the log itself, at most once per 10 s.
        self._audit = AuditLog(self.audit_log_path, on_error=self.get_logger().error) \
            if self.audit_log_path else None
        catalog = self._load_catalog()
        # Registered first, so values from a parameters file are checked like `ros2 param set`.
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._declare_tool_parameters(catalog)
        parse('', catalog, self.formats)  # an unknown format name fails here, not per message
        self._core = DispatchCore(
            catalog, DispatchSettings(**{name: getattr(self, name) for name in _CORE_SETTINGS}),
            self._tool_settings, id_prefix=os.urandom(4).hex(),  # unique per dispatcher run
            describe_executor=self._service_name)
        self._group = MutuallyExclusiveCallbackGroup()
        self._tool_clients: dict[str, Any] = {}
        self._clock = self.get_clock()
        self._handlers = {
            fx.Send: self._send, fx.StopOnExecutor: self._stop_on_executor,
            fx.PublishCall: self._publish_call, fx.PublishResult: self._publish_result,
            fx.PublishChat: self._publish_chat, fx.Audit: self._write_audit, fx.Log: self._log,
            fx.PublishProgress: self._publish_progress,
            fx.RequestApproval: self._request_approval,
            fx.ApprovalClosed: self._close_approval}

        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self._calls_pub = self.create_publisher(ToolCall, names.CALLS_TOPIC, reliable)
        self._results_pub = self.create_publisher(ToolResult, names.RESULTS_TOPIC, reliable)
        self._chat_pub = self.create_publisher(String, names.CHAT_TOPIC, reliable)
        self._progress_pub = self.create_publisher(ToolProgress, names.PROGRESS_TOPIC, reliable)
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS_TOPIC, 10)
        # Transient local: an operator tool started later still sees recent requests.
        self._approval_pub = self.create_publisher(
            ApprovalRequest, names.APPROVAL_REQUESTS_TOPIC,
            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self._input_loss = InputLoss()
        text_sub = self._text_sub = self.create_subscription(
            String, self.input_topic, self._on_text if _MESSAGE_INFO else self._on_text_only,
            reliable, callback_group=self._group)
        stream_sub = self._stream_sub = self.create_subscription(
            TextChunk, self.stream_topic, self._on_chunk if _MESSAGE_INFO else self._on_chunk_only,
            reliable, callback_group=self._group)
        self.create_service(Trigger, '~/reload_catalog', self._on_reload,
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
        for name in catalog.names:
            self._client(name)
        self._serve_calls(reliable)
        allowed = ', '.join(self.allowed_tools) if self.allowed_tools else 'all catalog tools'
        services = self.resolve_service_name(names.tool_service_name(self.service_prefix, 'x'))
        self.get_logger().info(
            f'dispatching {", ".join(catalog.names)} from {text_sub.topic_name} and '
            f'{stream_sub.topic_name} to {services[:-1]}<tool> (allowed: '
            f'{allowed}; formats: {", ".join(self.formats)}; in-process executors: '
            f'{"on" if self.in_process_executors else "off"})')

    @property
    def catalog(self) -> ToolCatalog:
        return self._core.catalog

    @property
    def enabled(self) -> bool:
        return self._core.enabled

    # -- parameters ------------------------------------------------------------------------

    def _declare_parameters(self) -> None:
        self.dataset = declare(
            self, 'dataset', '', 'Catalog source: a dataset root, an info.json path or a LeRobot '
            "repo id. Empty: the package's sample dataset. Re-read with ~/reload_catalog.",
            read_only=True)
        self.input_topic = declare(
            self, 'input_topic', names.INPUT_TOPIC,
            'std_msgs/String topic carrying one complete policy generation per message.',
            read_only=True)
        self.stream_topic = declare(
            self, 'stream_topic', names.STREAM_TOPIC,
            'lerobot_tools_interfaces/TextChunk topic carrying streamed generations.',
            read_only=True)
        self.formats = declare(
            self, 'formats', ['auto'],
            "Model output formats to recognise: ['auto'] or names such as hermes, pythonic, "
            'lerobot_marker, openai_json, llama_json, mistral, qwen3_coder_xml, fenced_json.')
        self.service_prefix = declare(
            self, 'service_prefix', names.SERVICE_PREFIX,
            'Prefix of the executors: <prefix>/<tool name> (RunTool action or CallTool service).',
            read_only=True)
        self.executor_interface = declare(
            self, 'executor_interface', 'auto',
            "How calls reach executors: 'auto' (the RunTool action when offered: progress and "
            "cancel; else the CallTool service), 'action', or 'service' (one DDS round trip, "
            'about 4x cheaper than an action, but no progress and no cancel of running calls).',
            read_only=True)
        self.in_process_executors = declare(
            self, 'in_process_executors', True,
            'Call a tool hosted by a tool_server in this same process (bringup) directly, '
            'without the DDS round trip (same gates, cancel, progress and timeout); false: '
            'always over DDS.', read_only=True)
        if self.executor_interface not in ('auto', 'action', 'service'):
            raise errors.ConfigurationError(
                "parameter 'executor_interface' must be auto, action or service, got "
                f"'{log_text(self.executor_interface, 40)}'")
        self.allowed_tools = self._allowed(declare(
            self, 'allowed_tools', [ALL],
            f"Tools the policy may call; ['{ALL}'] or []: every catalog tool. Others get "
            'not_allowed.'))
        self.timeout_s = declare(
            self, 'timeout_s', 10.0,
            'Seconds a call may take, including waiting for its executor to come up; per tool: '
            'tool.<name>.timeout_s.')
        self.rate_limit_hz = declare(
            self, 'rate_limit_hz', 0.0,
            'Calls per second allowed per tool (0: unlimited); per tool: '
            'tool.<name>.rate_limit_hz.')
        self.burst = declare(
            self, 'burst', 5, 'Calls allowed at once above the rate limit; per tool: '
            'tool.<name>.burst.')
        self.max_pending = declare(
            self, 'max_pending', 256,
            'Most calls queued or in flight at once; further calls get busy immediately.')
        self.serialize_per_tool = declare(
            self, 'serialize_per_tool', True,
            'Run calls of one tool one after another (a second say waits for the first).')
        self.audit_log_path = declare(
            self, 'audit_log', '', 'JSON-lines file recording every call and result; empty: off.',
            read_only=True)
        self.max_input_bytes = declare(
            self, 'max_input_bytes', 65536,
            'Largest generation parsed; larger ones get one parse_error result.')
        self.stream_idle_timeout_s = declare(
            self, 'stream_idle_timeout_s', 30.0,
            'A streamed generation without a chunk for this long is finished as if final.')
        self.max_open_streams = declare(
            self, 'max_open_streams', 64,
            'Most streamed generations open at once; beyond it the least recently fed one is '
            'finished early (its unfinished call gets parse_error).')
        self.max_stream_bytes = declare(
            self, 'max_stream_bytes', 8 << 20,
            'Most characters all open streams hold together; beyond it the least recently fed '
            'streams are finished early.')
        for key in overrides_with_prefix(self, 'tool.'):
            tool, _, setting = key.rpartition('.')
            if setting not in _PER_TOOL_SETTINGS:
                self.get_logger().warning(
                    f"ignoring parameter 'tool.{key}': per-tool settings are "
                    f'{", ".join(_PER_TOOL_SETTINGS)}')

    @staticmethod
    def _allowed(names: list[str]) -> list[str]:
        """allowed_tools as the dispatcher keeps it: [] for every tool (given as [] or ['*'])."""
        return [] if means_all(names) else names

    def _declare_tool_parameters(self, catalog: ToolCatalog) -> None:
        """Declare tool.<name>.<setting> for every catalog tool: unset means the global value."""
        for name in catalog.names:
            for setting in _PER_TOOL_SETTINGS:
                parameter = f'tool.{name}.{setting}'
                if not self.has_parameter(parameter):
                    initial, description = self._tool_parameter_default(name, setting)
                    self.declare_parameter(parameter, initial, ParameterDescriptor(
                        name=parameter, dynamic_typing=True, description=description))

    @staticmethod
    def _tool_parameter_default(name: str, setting: str) -> tuple[Any, str]:
        """Return (initial value, description) of tool.<name>.<setting>."""
        if setting == 'repeat_window_s':
            return _DEFAULT_REPEAT_WINDOW_S.get(name, 0.0), (
                f"Seconds in which a call of '{name}' with the same arguments as a running or "
                'recent one is answered duplicate instead of run (0: off).')
        if setting == 'approval':
            return 'auto', (
                f"'{name}' calls: auto (run), confirm (wait for ~/approve, announced on "
                'lerobot_tools/approval_requests) or deny (refused).')
        return None, f"{setting} for '{name}' only; unset: {setting}"

    def _per_tool(self, name: str, setting: str, default: Any) -> Any:
        parameter = f'tool.{name}.{setting}'
        value = self.get_parameter(parameter).value if self.has_parameter(parameter) else None
        try:
            return default if value is None else type(default)(value)
        except (TypeError, ValueError):  # checked on set; kept as a last line of defence
            return default

    # Parameters that can change while running (ros2 param set), and how each is checked.
    _RUNTIME_PARAMETERS = {
        'formats': list, 'allowed_tools': list, 'timeout_s': float, 'rate_limit_hz': float,
        'burst': int, 'max_pending': int, 'serialize_per_tool': bool, 'max_input_bytes': int,
        'stream_idle_timeout_s': float, 'max_open_streams': int, 'max_stream_bytes': int}

    def _on_set_parameters(self, parameters: list):
        from rcl_interfaces.msg import SetParametersResult
        updates = {}
        changed_tools = False
        for parameter in parameters:
            if parameter.name.startswith('tool.'):
                setting = parameter.name.rpartition('.')[2]
                value = parameter.value
                if setting == 'approval':
                    if value is not None and value not in APPROVAL_MODES:
                        return SetParametersResult(successful=False, reason=(
                            f'{parameter.name} must be one of {", ".join(APPROVAL_MODES)}, '
                            f'got {value!r}'))
                elif value is not None and (isinstance(value, bool)
                                            or not isinstance(value, (int, float)) or value < 0):
                    return SetParametersResult(successful=False, reason=(
                        f'{parameter.name} must be a non-negative number, got {value!r}'))
                if setting in _PER_TOOL_SETTINGS:
                    changed_tools = True
                continue
            kind = self._RUNTIME_PARAMETERS.get(parameter.name)
            if kind is None:
                continue
            value = parameter.value
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if kind is list:
                try:
                    value = string_list(parameter.name, value)
                except ValueError as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
                if parameter.name == 'allowed_tools':
                    value = self._allowed(value)
            if not isinstance(value, kind) or (kind in (int, float) and value < 0):
                return SetParametersResult(successful=False, reason=(
                    f'{parameter.name} must be a non-negative {kind.__name__}, got {value!r}'))
            updates[parameter.name] = value
        if 'formats' in updates and self._core is not None:
            try:
                parse('', self.catalog, updates['formats'])
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
        if self._core is None:  # declaring: the values become the core's settings
            return SetParametersResult(successful=True)
        with self._lock:
            for name, value in updates.items():
                setattr(self, name, value)
                if name in _CORE_SETTINGS:
                    setattr(self._core.settings, name, value)
            if changed_tools or {'timeout_s', 'rate_limit_hz', 'burst'} & set(updates):
                self._core.settings_changed(time.monotonic())  # per-tool values re-read
        if updates:
            self.get_logger().info(f'parameters changed: {log_text(updates, 500)}')
        return SetParametersResult(successful=True)

    def _load_catalog(self) -> ToolCatalog:
        catalog = ToolCatalog.load(self.dataset or None)
        for problem in catalog.problems:
            self.get_logger().warning(problem)
        return catalog

    def _tool_settings(self, name: str) -> ToolSettings:
        """Per-tool settings for the core: tool.<name>.<setting>, else the global value."""
        return ToolSettings(timeout_s=self._per_tool(name, 'timeout_s', self.timeout_s),
                            rate_limit_hz=self._per_tool(name, 'rate_limit_hz',
                                                         self.rate_limit_hz),
                            burst=self._per_tool(name, 'burst', self.burst),
                            repeat_window_s=self._per_tool(
                                name, 'repeat_window_s', _DEFAULT_REPEAT_WINDOW_S.get(name, 0.0)),
                            approval=self._per_tool(name, 'approval', 'auto'))

    def _service_name(self, name: str) -> str:
        """Return the fully resolved name of a tool's service, for messages people read."""
        return self.resolve_service_name(names.tool_service_name(self.service_prefix, name))

    def _client(self, name: str) -> ExecutorClient:
        client = self._tool_clients.get(name)
        if client is None:
            client = ExecutorClient(
                self, names.tool_service_name(self.service_prefix, name),
                mode=self.executor_interface, callback_group=self._group,
                on_ready=lambda name=name: self._on_ready(name),
                in_process=self.in_process_executors)
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
                self._apply(self._core.chunk(msg.generation_id, msg.text, msg.final, now))

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

    # -- ~/call: the gated entry for other nodes -------------------------------------------------

    def _serve_calls(self, qos: QoSProfile) -> None:
        service = self.resolve_service_name('~/call')
        self._call_node = rclpy.create_node(
            f'{self.get_name()}_call', namespace=self.get_namespace(), context=self.context,
            start_parameter_services=False, use_global_arguments=False)
        self._call_node.create_service(CallTool, service, self._on_call, qos_profile=qos,
                                       callback_group=ReentrantCallbackGroup())
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
        """Run one request through the core, wait (in this thread) for its one result."""
        waiter = [threading.Event(), None]
        source = ros_string(request.source.strip()[:128]) or _CALL_SOURCE_DEFAULT
        with self._lock:
            call, effects = self._core.submit(request.name, request.arguments, time.monotonic(),
                                              source=source, call_id=request.call_id)
            self._waiters[call] = waiter
            self._apply(effects)
        while not waiter[0].wait(1.0) and self.context.ok():
            pass  # the core answers every call by its deadline; this only notices shutdown
        result: fx.PublishResult | None = waiter[1]
        response.call_id = call.call_id
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
                                                                         detail))

    def _on_outcome(self, call: Any, outcome: Outcome) -> None:
        # A future callback (group-less under some executors): the lock keeps the core serial.
        with self._lock:
            if call.handle is None:
                return  # forgotten (timed out, shut down)
            call.handle = None
            self._apply(self._core.answered(
                call.call_id, time.monotonic(), success=outcome.success, content=outcome.content,
                error_code=outcome.error_code, error_message=outcome.error_message))

    def _on_feedback(self, call: Any, stage: str, progress: float, detail: str) -> None:
        if not self._progress_pub.get_subscription_count():
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

    def _publish_call(self, effect: fx.PublishCall) -> None:
        if not self._calls_pub.get_subscription_count():
            return  # nobody listens: skip building the message (hot path)
        call = effect.call
        msg = ToolCall(call_id=call.call_id, name=ros_string(call.name),
                       arguments=ros_string(call.arguments_json), format=call.format,
                       generation_id=call.generation_id, source=call.source)
        msg.header.stamp = self._clock.now().to_msg()
        self._calls_pub.publish(msg)

    def _publish_result(self, effect: fx.PublishResult) -> None:
        call = effect.call
        message = ros_string(effect.error_message)
        msg = ToolResult(call_id=call.call_id, generation_id=call.generation_id,
                         source=call.source, name=ros_string(call.name),
                         arguments=ros_string(call.arguments_json), success=effect.success,
                         content=ros_string(effect.content), error_code=effect.error_code,
                         error_message=message, duration=_duration(effect.duration_s))
        msg.header.stamp = self._clock.now().to_msg()
        self._results_pub.publish(msg)
        waiter = self._waiters.pop(call, None)
        if waiter is not None:  # a ~/call request waits for this result
            waiter[1] = effect
            waiter[0].set()
        if effect.error_code:
            self.get_logger().warning(
                f'{log_text(call.name)} [{log_text(call.call_id)}] {effect.error_code}: '
                f'{log_text(effect.error_message, 500)}')

    def _publish_chat(self, effect: fx.PublishChat) -> None:
        if not self._chat_pub.get_subscription_count():
            return  # nobody listens: skip the JSON encoding (hot path)
        self._chat_pub.publish(String(data=_json(effect.message)))

    def _publish_progress(self, effect: fx.PublishProgress) -> None:
        call = effect.call
        msg = ToolProgress(call_id=call.call_id, name=ros_string(call.name),
                           stage=ros_string(effect.stage), progress=float(effect.progress),
                           detail=ros_string(effect.detail))
        msg.header.stamp = self._clock.now().to_msg()
        self._progress_pub.publish(msg)

    def _request_approval(self, effect: fx.RequestApproval) -> None:
        call = effect.call
        self._publish_approval(call, effect.reason, effect.timeout_s)
        self.get_logger().info(
            f'{log_text(call.name)} [{log_text(call.call_id)}] waits for approval '
            f'({log_text(effect.reason)}); decide with ~/approve within {effect.timeout_s:g} s')

    def _close_approval(self, effect: fx.ApprovalClosed) -> None:
        # timeout_s 0: nothing left to decide. The topic keeps recent requests (transient
        # local), so a tool started later sees which requests are closed.
        self._publish_approval(effect.call, f'closed: {effect.outcome}', 0.0)

    def _publish_approval(self, call: Any, reason: str, timeout_s: float) -> None:
        msg = ApprovalRequest(call_id=call.call_id, name=ros_string(call.name),
                              arguments=ros_string(call.arguments_json), source=call.source,
                              reason=ros_string(reason), timeout_s=timeout_s)
        msg.header.stamp = self._clock.now().to_msg()
        self._approval_pub.publish(msg)

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

    def _on_reload(self, request: Trigger.Request, response: Trigger.Response):
        try:
            catalog = self._load_catalog()
        except CatalogError as exc:
            response.success = False
            response.message = f'kept the old catalog: {exc}'
            return response
        old = {name: self.catalog.schema(name) for name in self.catalog.names}
        new = {name: catalog.schema(name) for name in catalog.names}
        added = sorted(set(new) - set(old))
        removed = sorted(set(old) - set(new))
        changed = sorted(name for name in set(old) & set(new) if old[name] != new[name])
        try:
            self._declare_tool_parameters(catalog)
        except ParameterException as exc:
            response.success = False
            response.message = f'kept the old catalog: a new tool has a bad setting: {exc}'
            return response
        with self._lock:
            self._core.catalog = catalog
            self._core.settings_changed(time.monotonic())
        for name in catalog.names:
            self._client(name)
        response.success = True
        response.message = (f'reloaded {catalog.source}: added {added or "none"}, removed '
                            f'{removed or "none"}, changed {changed or "none"}')
        self.get_logger().info(response.message)
        return response

    def _publish_diagnostics(self) -> None:
        with self._lock:
            self._warn_input_lost()  # losses after the last line are reported here
            found = diagnostics.statuses(self._core, self._audit,
                                         lambda name: self._client(name).poll(),
                                         self._service_name, self._input_loss)
        array = DiagnosticArray()
        array.header.stamp = self._clock.now().to_msg()
        array.status = [DiagnosticStatus(
            level=DiagnosticStatus.WARN if status.warn else DiagnosticStatus.OK,
            name=f'{self.get_name()}: {status.name}', hardware_id=status.hardware_id,
            message=status.message,
            values=[KeyValue(key=key, value=str(value)) for key, value in status.values.items()])
            for status in found]
        self._diag_pub.publish(array)

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
            for waiter in self._waiters.values():
                waiter[0].set()  # answered 'unavailable' if the core had no result for it
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
