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
Host tools as `CallTool` services and `RunTool` actions, both at `<service_prefix>/<name>`.

Other nodes may call these directly (without the dispatcher), so the server validates arguments
against the catalog itself: a goal's or request's JSON text is decoded and validated once, where
it arrives. A caller in this process (the dispatcher, `executors.inprocess`) passes its validated
dict instead: the tool gets a copy, checked again only when this catalog's schema of the tool is
not the one the caller checked it against (`tool_server.request`).

Each tool has a node of its own, spun by an executor thread of its own, plus one worker thread that
runs the tool's calls one at a time (tools are not required to be thread-safe): a slow `say` never
delays a `record_observation`, and while a goal runs the tool's executor thread still takes new
requests, goals and cancel requests. A `CallTool` request that finds its tool idle runs on the
executor thread itself (nothing can cancel a request, and the hand-off to the worker cost about a
third of a round trip); one that finds the tool busy waits for the worker like a goal.

Every call gets a `CallContext`: an action goal's cancel request cancels it, the tool's progress
reports become the goal's feedback, and shutdown cancels every call still queued or running
(each still gets its answer). A cancelled call ends with error code `cancelled`.

Every answer says whether the tool may have acted (`outcome`): not_run when it was refused or
stopped before the tool was called, ran once the tool was called, or what the tool itself
said (a binding whose request went out and whose answer never came: unknown). A call id runs
at most once (`tools.ledger.CallLedger`, parameters call_ids_window_s and call_ids_max): a
repeated goal or request with the id of a running call waits for its answer, one with the id of
an ended call gets the first answer again. Callers stop calls whose goal or request may still
be on its way on `names.tool_stop_topic` (a std_msgs/String call id, taken by a thread of its
own, `nodes.stop_listener`, and right before each call starts, so a busy or stalled tool thread
does not hold it up): such a call is refused when it arrives, and a running one is cancelled
(a request too). A goal whose id says it waited before it was taken (`executors.goal_ids`) is
held a moment first, so a stop sent after it that is still on its way wins. A tool's
exception becomes an `execution_failed` answer; it never takes the server down. A request or
goal naming `names.READINESS_PROBE` is answered at once without running anything: callers use
it to prove that answers reach them before their first real call.

Streamed calls: a tool with a streamable argument (say: text) also takes its calls'
text in segments, on `names.tool_text_topic` beside its action (TextChunk, generation_id = the
goal's call_id), for goals with `streamed` set. Segments that arrive before their goal wait for
it (the last 64 calls' worth). A tool that speaks segments as they come declares
`STREAMS_TEXT = True` and reads `context.text`; any other tool is called once the text is
whole, as usual.
"""

from collections import OrderedDict

from dataclasses import dataclass, field
import inspect
import json
import queue
import sys
import threading
import time
from typing import Any, Callable

from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_interfaces.msg import TextChunk
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import ToolArgumentError, ToolCatalog
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.executors import goal_ids
from lerobot_tools_ros.executors.inprocess import HostedToolOffer
from lerobot_tools_ros.nodes.params import declare_spec, declare_table, descriptor, \
    overrides_with_prefix
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parameters.declarations import TOOL_SERVER
from lerobot_tools_ros.parsing.registry import composed_properties, streamable_argument
from lerobot_tools_ros.tool_server.host import RosToolHost
from lerobot_tools_ros.tool_server.request import ToolRequest
from lerobot_tools_ros.tool_server.stop_listener import StopListener
from lerobot_tools_ros.tools import TOOL_REGISTRY
from lerobot_tools_ros.tools.base import (accepts_context, CallContext, declared_parameters,
                                          TextStream, Tool)
from lerobot_tools_ros.tools.bindings.loader import load_bindings
from lerobot_tools_ros.tools.ledger import Answer, CallLedger, STOPPED_MESSAGE
from lerobot_tools_ros.untrusted import log_text, ros_string
from rcl_interfaces.msg import ParameterDescriptor
import rclpy
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.logging import LoggingSeverity
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future

# Feedback of one stage is sent at most this often (a tool may report per audio block); a
# new stage, and the end of one (progress 1), always go out.
_FEEDBACK_MIN_INTERVAL_S = 0.02
# At shutdown: how long cancelled calls get to finish and their answers to go out.
_CLOSE_TIMEOUT_S = 5.0
_ANSWER_GRACE_S = 0.2


@dataclass
class _Job:
    """One validated call waiting for (or running on) the tool's worker thread."""

    call_id: str
    arguments: dict
    context: CallContext
    done: Future  # set by the worker: (error_code, text, outcome)
    queued: bool = False  # it waited behind another call (told so in its feedback)
    local: bool = False  # from a caller in this process: no handler on the executor awaits it
    hold_until: float = 0.0  # a goal that waited: not started before (its stop may come)


@dataclass
class _HostedTool:
    tool: Tool
    node: Node | None = None  # serves the tool's CallTool service and RunTool action
    executor: SingleThreadedExecutor | None = None  # spins `node` in `thread`
    thread: threading.Thread | None = None
    worker: threading.Thread | None = None  # runs the jobs, one at a time
    action_server: ActionServer | None = None
    jobs: 'queue.SimpleQueue[_Job | None]' = field(default_factory=queue.SimpleQueue)
    pending: int = 0  # jobs queued or running
    closing: bool = False  # no new calls are taken
    stop: threading.Event = field(default_factory=threading.Event)
    wake: Any = None  # guard condition on `node`: wakes `thread` when `stop` is set
    lock: threading.Lock = field(default_factory=threading.Lock)
    contexts: set = field(default_factory=set)  # CallContexts of calls queued or running
    goal_contexts: dict = field(default_factory=dict)  # goal id bytes -> CallContext
    in_flight: int = 0  # requests and goals not yet answered
    offer: HostedToolOffer | None = None  # to callers in this process (no DDS hop)
    streamable: str = ''  # its streamable argument ('' for none): streamed goals allowed
    texts: dict = field(default_factory=dict)  # call_id -> TextStream of a streamed goal
    early: OrderedDict = field(default_factory=OrderedDict)  # call_id -> chunks before goal
    ledger: CallLedger | None = None  # the call ids it ran, runs or was told to stop
    take_stops: Callable[[], None] = lambda: None  # applies the stops that have arrived


class _Feedback:
    """A CallContext report that publishes a goal's feedback; never raises, rate-limited."""

    def __init__(self, goal_handle: Any, logger: Any) -> None:
        self._goal_handle = goal_handle
        self._logger = logger
        self._stage = ''
        self._sent_at = 0.0
        self.closed = False  # the goal has its result: later reports go nowhere

    def __call__(self, stage: str, progress: float, detail: str) -> None:
        now = time.monotonic()
        repeated = stage == self._stage and progress < 1.0
        if self.closed or (repeated and now - self._sent_at < _FEEDBACK_MIN_INTERVAL_S):
            return
        self._stage, self._sent_at = stage, now
        try:
            self._goal_handle.publish_feedback(RunTool.Feedback(
                stage=ros_string(str(stage)), progress=float(progress),
                detail=ros_string(str(detail))))
        except Exception as exc:  # noqa: B902 - progress is best effort, never fails the call
            self._logger.debug(f'feedback not sent: {exc!r}')


def tool_kwargs(node: Node, tool_name: str, tool_class: type, catalog: ToolCatalog,
                apply: Any = None) -> dict:
    """
    Collect the constructor kwargs of a tool from its `tool.<name>.*` parameters.

    Each is declared from the tool's `ToolParameter` and checked against it. A list parameter
    given with nested keys is passed as a map
    (`tool.record_observation.cameras.front: /camera/front/image_raw` -> cameras={'front': ...})
    and declared as the equivalent list (`['front=/camera/front/image_raw']`), so a dump of the
    node holds it and the node starts again from that dump. `apply(key, value)` is called when
    a live parameter is set while the tool runs.
    """
    prefix = f'tool.{tool_name}.'
    declared = declared_parameters(tool_class)
    kwargs: dict[str, Any] = {}
    for key, parameter in declared.items():
        spec = parameter.spec(prefix + key)
        nested = overrides_with_prefix(node, f'{prefix}{key}.')
        if nested and spec.kind == 'str_list':
            kwargs[key] = nested
            node.declare_parameter(spec.name, [f'{k}={v}' for k, v in nested.items()],
                                   descriptor(spec), ignore_override=True)
            continue
        live = None
        if apply is not None and spec.writable:
            live = (lambda value, key=key: apply(key, value))
        kwargs[key] = declare_spec(node, spec, apply=live)
    accepted = inspect.signature(tool_class).parameters
    if 'catalog' in accepted:
        kwargs['catalog'] = catalog
    if 'dataset_cameras' in accepted:
        kwargs['dataset_cameras'] = catalog.camera_names
    return kwargs


class ToolServer(Node):
    """Serve every tool named in the `tools` parameter at `<service_prefix>/<name>`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(names.TOOL_SERVER_NODE, **kwargs)
        self._hosted: dict[str, _HostedTool] = {}
        self.accepting = True  # false while a managed tool_server is not active
        self._build()

    def _build(self) -> None:
        """Load the catalog and bindings, build and offer every tool (managed: configure)."""
        values = declare_table(self, TOOL_SERVER)
        tool_names = values['tools']
        self.service_prefix = values['service_prefix']
        self.result_timeout_s = values['action_result_timeout_s']
        self._call_ids = (values['call_ids_window_s'], values['call_ids_max'])
        self.catalog = ToolCatalog.load(values['dataset'] or None)
        for problem in self.catalog.problems:
            self.get_logger().warning(problem)
        bindings_file = values['bindings_file']
        self._bound = load_bindings(bindings_file, self.catalog) if bindings_file else {}
        tool_names = [*tool_names, *(name for name in self._bound if name not in tool_names)]
        if not tool_names:
            raise ConfigurationError(
                "parameter 'tools' is empty: name at least one tool to host")
        tool_names = self._declared_only(tool_names)
        self._hosted = {}
        self._stops = StopListener(self)
        try:
            for tool_name in tool_names:
                self._host(tool_name)
            self._stops.start()
        except BaseException:
            self.close_tools()
            raise

    def _declared_only(self, tool_names: list[str]) -> list[str]:
        """
        Leave out, with a line each, registered tools the dataset's catalog does not declare.

        A dataset annotated by LeRobot declares only `say` (or no tools: the defaults), while
        the packaged parameters host `say` and `record_observation`: its policy can only call
        what its catalog declares, so the rest is not hosted rather than refused. A name that
        is neither declared nor registered is a mistake, refused by `_check_hostable`.
        """
        left_out = [name for name in tool_names
                    if name not in self.catalog and name in TOOL_REGISTRY]
        for name in left_out:
            self.get_logger().warning(
                f"not hosting '{name}': the catalog {self.catalog.source} does not declare it "
                f"(declared: {', '.join(self.catalog.names)}); add its schema to info.json to "
                'host it')
        hosted = [name for name in tool_names if name not in left_out]
        if not hosted:
            raise ConfigurationError(
                f"none of the tools in parameter 'tools' ({', '.join(tool_names)}) is declared in "
                f"the catalog {self.catalog.source} (declared: {', '.join(self.catalog.names)}); "
                'host a declared tool or add its schema to info.json')
        return hosted

    def _host(self, tool_name: str) -> None:
        """Make the tool, bind it to ROS and offer it as a service and an action."""
        bound = self._check_hostable(tool_name)
        tool = self._make_tool(tool_name, bound)
        hosted = _HostedTool(tool=tool)
        self._hosted[tool_name] = hosted
        # What the tool derived from its parameters (record_observation: one camera per dataset
        # image feature), visible to ros2 param list/get/describe.
        for key, (value, description) in getattr(tool, 'resolved_parameters', dict)().items():
            name = f'tool.{tool_name}.{key}'
            if not self.has_parameter(name):  # shows what is used: overrides do not apply
                self.declare_parameter(name, value, ParameterDescriptor(
                    name=name, description=f'{description} Read-only: derived from the '
                    "tool's parameters at start.", read_only=True), ignore_override=True)
        if bound is None:
            self._refuse_unknown(tool_name, type(tool))
        # A tool reaches ROS through a typed host (tools/host.py); a binding to robot
        # interfaces of any type gets the node itself.
        bind, bind_ros = getattr(tool, 'bind', None), getattr(tool, 'bind_ros', None)
        if bind is not None:
            bind(RosToolHost(self))
        elif bind_ros is not None:
            bind_ros(self)
        self._offer(tool_name, hosted)

    def _check_hostable(self, tool_name: str) -> Any:
        """Refuse a tool this server cannot host; return its binding (None: a tool class)."""
        if tool_name in self._hosted:
            raise ConfigurationError(f"tool '{tool_name}' is listed twice in parameter 'tools'")
        if tool_name not in self.catalog:
            hint = self.catalog.suggest(tool_name)
            raise ConfigurationError(
                f"tool '{tool_name}' is not declared in the catalog {self.catalog.source} "
                f"(declared: {', '.join(self.catalog.names)})"
                + (f"; did you mean '{hint}'?" if hint else '; add its schema to info.json'))
        bound = self._bound.get(tool_name)
        if bound is None and tool_name not in TOOL_REGISTRY:
            raise ConfigurationError(
                f"no implementation is registered for tool '{tool_name}' (registered: "
                f"{', '.join(sorted(TOOL_REGISTRY))}); install a package that provides it "
                "through the 'lerobot_tools_ros.tools' entry-point group")
        for other in self._hosted:
            if names.ros_safe(other) == names.ros_safe(tool_name):
                raise ConfigurationError(
                    f"tools '{other}' and '{tool_name}' would share the service "
                    f'{names.tool_service_name(self.service_prefix, tool_name)} '
                    '(ROS names hold no "-" or "."); rename one in info.json')
        return bound

    def _make_tool(self, tool_name: str, bound: Any) -> Any:
        """Return the binding, or an instance of the registered class from its parameters."""
        if bound is not None:
            wins = ' (wins over the registered tool class)' if tool_name in TOOL_REGISTRY else ''
            self.get_logger().info(f"'{tool_name}' is bound to {bound.describe()}{wins}")
            for warning in bound.warnings():
                self.get_logger().warning(warning)
            return bound
        tool_class = TOOL_REGISTRY[tool_name]
        kwargs = tool_kwargs(self, tool_name, tool_class, self.catalog,
                             lambda key, value: self._apply(tool_name, key, value))
        try:
            return tool_class(self.catalog.schema(tool_name), **kwargs)
        except ValueError as exc:  # the tool refused a value (see tools.base)
            raise ConfigurationError(f"tool '{tool_name}': {exc}") from exc

    def _offer(self, tool_name: str, hosted: _HostedTool) -> None:
        """Serve the tool's CallTool service and RunTool action, each on its own threads."""
        # The service and the action live on a node of their own, spun by their own executor
        # thread, so a slow tool never holds up another tool or this node's topics; the calls
        # run on the tool's worker thread, so that executor stays free for cancel requests.
        service_name = self.resolve_service_name(
            names.tool_service_name(self.service_prefix, tool_name))
        # Global arguments (launch's `-r __node:=tool_server`, params files) are meant for the
        # main node; the service name was resolved (and remapped) on it above.
        hosted.node = rclpy.create_node(
            f'{self.get_name()}_{names.ros_safe(tool_name)}', namespace=self.get_namespace(),
            context=self.context, start_parameter_services=False, use_global_arguments=False)
        hosted.node.create_service(CallTool, service_name, self._service_handler(hosted))
        hosted.streamable = streamable_argument(
            tool_name, composed_properties(self.catalog.parameters(tool_name)))
        if hosted.streamable:
            hosted.node.create_subscription(
                TextChunk, names.tool_text_topic(service_name),
                lambda chunk: self._on_text(hosted, chunk),
                QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        hosted.action_server = ActionServer(
            hosted.node, RunTool, service_name, execute_callback=self._goal_handler(hosted),
            goal_callback=lambda _goal: (GoalResponse.REJECT if hosted.closing
                                         else GoalResponse.ACCEPT),
            cancel_callback=lambda goal_handle: self._on_cancel(hosted, goal_handle),
            result_timeout=self.result_timeout_s)
        hosted.wake = hosted.node.create_guard_condition(lambda: None)
        hosted.ledger = CallLedger(*self._call_ids)
        # Not on the tool's node: a stop is taken while the tool's thread is busy, and right
        # before a call starts (so a stop that arrived with its goal wins).
        hosted.take_stops = self._stops.add(names.tool_stop_topic(service_name),
                                            lambda call_id: self._on_stop(hosted, call_id))
        hosted.executor = SingleThreadedExecutor(context=self.context)
        hosted.executor.add_node(hosted.node)
        hosted.worker = threading.Thread(target=self._work, args=(hosted,), daemon=True,
                                         name=f'tool-{tool_name}-calls')
        hosted.worker.start()
        hosted.thread = threading.Thread(target=self._spin, args=(hosted,), daemon=True,
                                         name=f'tool-{tool_name}')
        hosted.thread.start()
        hosted.offer = HostedToolOffer(self, hosted, service_name)
        hosted.offer.offer()
        self.get_logger().info(f"hosting '{tool_name}' ({type(hosted.tool).__name__}) at "
                               f'{service_name} (CallTool service and RunTool action)')

    def handles_parameter(self, name: str) -> bool:
        """tool.<name>.* of a registered tool not hosted here: for another configuration."""
        tool = name[len('tool.'):].split('.', 1)[0] if name.startswith('tool.') else ''
        return bool(tool) and tool not in self._hosted and tool in TOOL_REGISTRY

    def _refuse_unknown(self, tool_name: str, tool_class: type) -> None:
        """Refuse a tool.<name>.<key> the tool does not declare (a typo would be ignored)."""
        prefix = f'tool.{tool_name}.'
        known = set(declared_parameters(tool_class))
        for extra in sorted(overrides_with_prefix(self, prefix)):
            if extra.split('.', 1)[0] in known or self.has_parameter(prefix + extra):
                continue  # a declared map's key, or what the tool derived (in a dump)
            raise ConfigurationError(
                f"unknown parameter '{prefix}{log_text(extra, 100)}': tool '{tool_name}' "
                f"declares {', '.join(sorted(known)) or 'no parameters'}")

    def _apply(self, tool_name: str, key: str, value: Any) -> None:
        """Apply a live tool parameter that was set (checked against its declaration)."""
        hosted = self._hosted.get(tool_name)
        if hosted is None:
            return  # set while the tool is being built: its constructor took the value
        setter = getattr(hosted.tool, 'set_parameter', None)
        if setter is not None:
            setter(key, value)
        else:
            setattr(hosted.tool, key, value)
        self.get_logger().info(f'tool.{tool_name}.{key} is now {log_text(repr(value), 200)}')

    def _spin(self, hosted: _HostedTool) -> None:
        """Tool thread: serve the tool's service and action until close_tools() sets `stop`."""
        executor = hosted.executor
        if executor is None:
            raise RuntimeError(f'{hosted.tool.name}: serve() starts the thread, not its executor')
        while not hosted.stop.is_set() and self.context.ok():
            try:
                # No timeout (rclpy makes a timer per timed wait): work, `wake` at close or
                # the context shutting down ends the wait.
                executor.spin_once()
            except (ExternalShutdownException, KeyboardInterrupt):
                return
            except Exception as exc:  # noqa: B902 - one bad call must not end the tool
                if hosted.stop.is_set():
                    return
                self.get_logger().error(f'{hosted.tool.name}: service thread error: {exc!r}')

    # -- calls: validation on the executor thread, execution on the worker ---------------------

    def _service_handler(self, hosted: _HostedTool):
        async def handle(request: CallTool.Request, response: CallTool.Response):
            response.call_id = request.call_id
            if request.name == names.READINESS_PROBE:
                response.success = True
                response.outcome = errors.NOT_RUN
                return response
            with hosted.lock:
                hosted.in_flight += 1
            try:
                context = CallContext(request.call_id)
                # A request is stopped only through the stop topic: when the tool is idle it
                # runs right here, on the tool's executor thread, without the worker hand-off.
                code, text, outcome = await self._submit_from_dds(hosted, request, context,
                                                                  inline=True)
            except Exception as exc:  # noqa: B902 - every request gets an answer
                code, text, outcome = (errors.EXECUTION_FAILED, f'{type(exc).__name__}: {exc}',
                                       errors.UNKNOWN)
            finally:
                with hosted.lock:
                    hosted.in_flight -= 1
            _fill(response, code, text, outcome)
            return response
        return handle

    def _goal_handler(self, hosted: _HostedTool):
        async def execute(goal_handle: Any) -> RunTool.Result:
            goal = goal_handle.request
            result = RunTool.Result(call_id=goal.call_id)
            if goal.name == names.READINESS_PROBE:
                goal_handle.succeed()
                result.success = True
                result.outcome = errors.NOT_RUN
                return result
            key = bytes(goal_handle.goal_id.uuid)
            feedback = _Feedback(goal_handle, self.get_logger())
            if goal.streamed and not hosted.streamable:
                goal_handle.abort()
                _fill(result, errors.INVALID_ARGUMENTS, (
                    f"'{hosted.tool.name}' has no streamable argument, so a goal with streamed "
                    'set cannot run; send the complete arguments'), errors.NOT_RUN)
                return result
            text = TextStream(hosted.streamable) if goal.streamed else None
            context = CallContext(goal.call_id, feedback, text)
            with hosted.lock:
                hosted.in_flight += 1
                hosted.goal_contexts[key] = context
                if text is not None:
                    hosted.texts[goal.call_id] = text
                    for chunk in hosted.early.pop(goal.call_id, ()):
                        _take_chunk(text, chunk)
            if goal_handle.is_cancel_requested:  # cancelled between acceptance and now
                context.cancel()
            hold_until = 0.0
            if goal_ids.waited_s(bytes(goal_handle.goal_id.uuid)) > goal_ids.LATE_S:
                hold_until = time.monotonic() + goal_ids.STOP_GRACE_S
            try:
                code, content, outcome = await self._submit_from_dds(
                    hosted, goal, context, hold_until=hold_until)
            except Exception as exc:  # noqa: B902 - every goal gets a result
                code, content, outcome = (errors.EXECUTION_FAILED,
                                          f'{type(exc).__name__}: {exc}', errors.UNKNOWN)
            finally:
                feedback.closed = True
                with hosted.lock:
                    hosted.in_flight -= 1
                    hosted.goal_contexts.pop(key, None)
                    if text is not None and hosted.texts.get(goal.call_id) is text:
                        del hosted.texts[goal.call_id]
            _fill(result, code, content, outcome)
            if not code:
                goal_handle.succeed()
            elif code == errors.CANCELLED and goal_handle.is_cancel_requested:
                goal_handle.canceled()
            else:  # a failure, or a cancel that came from shutdown rather than the client
                goal_handle.abort()
            return result
        return execute

    def _on_text(self, hosted: _HostedTool, chunk: TextChunk) -> None:
        """Hand a streamed goal's text segment to it (or keep it until the goal arrives)."""
        with hosted.lock:
            text = hosted.texts.get(chunk.generation_id)
            if text is not None:
                _take_chunk(text, chunk)
                return
            hosted.early.setdefault(chunk.generation_id, []).append(chunk)
            hosted.early.move_to_end(chunk.generation_id)
            while len(hosted.early) > _EARLY_CALLS:
                hosted.early.popitem(last=False)

    def _on_stop(self, hosted: _HostedTool, call_id: str) -> None:
        """Take a caller's stop: cancel the call if it runs, refuse it if it has not come yet."""
        if hosted.ledger is not None and hosted.ledger.stop(call_id):
            self.get_logger().info(f'{hosted.tool.name} call {log_text(call_id, 80)}: stopped '
                                   'by its caller')

    def _on_cancel(self, hosted: _HostedTool, goal_handle: Any) -> CancelResponse:
        """Accept every cancel request: the call's context is cancelled, the tool stops."""
        with hosted.lock:
            context = hosted.goal_contexts.get(bytes(goal_handle.goal_id.uuid))
        if context is not None:
            context.cancel()
        return CancelResponse.ACCEPT

    def _submit_from_dds(self, hosted: _HostedTool, message: Any, context: CallContext,
                         **options: Any) -> Future:
        """
        Submit a CallTool request or RunTool goal: its JSON text decoded and validated here.

        This is where a call crosses from DDS, so its arguments are checked here, once; a
        refused one is answered at once (the future is done on return), in the order `submit`
        checks: the tool's name first, then its arguments.
        """
        refusal = self._name_refusal(hosted, message.name)
        if refusal is None:
            try:
                arguments = self.catalog.validate(hosted.tool.name, message.arguments or '{}')
            except ToolArgumentError as exc:
                refusal = (exc.error_code, exc.message, errors.NOT_RUN)
        if refusal is not None:
            answer = Future()
            answer.set_result(refusal)
            return answer
        return self.submit(hosted, ToolRequest(message.call_id, message.name, arguments,
                                               message.source, validated=True),
                           context, **options)

    def _name_refusal(self, hosted: _HostedTool, requested: str) -> Answer | None:
        """Refuse a call that names another tool than the one hosted here ('' : this one)."""
        name = hosted.tool.name
        if not requested or requested == name:
            return None
        other = names.tool_service_name(self.service_prefix, requested)
        return (errors.UNKNOWN_TOOL, (
            f"this service hosts '{name}', but the request names '{requested}'; call "
            f'{self.resolve_service_name(other)} instead'), errors.NOT_RUN)

    def submit(self, hosted: _HostedTool, request: ToolRequest, context: CallContext, *,
               inline: bool = False, local: bool = False, hold_until: float = 0.0) -> Future:
        """
        Check a call and queue it for the worker; the future gives (code, text, outcome).

        `request.arguments` are validated here unless `request.validated` says they were,
        against this catalog's schema of the tool (at the DDS boundary, or by a caller in this
        process with the same schema).

        `inline`: when no call of the tool is queued or running, run this one now on the
        calling thread (the tool's executor thread; the future is done on return). Only for
        service requests: only a stop (taken on its own thread) cancels them, and the executor
        thread is free again before a goal or cancel request could need it (while the tool is
        idle none is pending).
        `local`: the caller is in this process (`HostedToolOffer`) and takes the answer from the
        future's callback, so the tool's executor thread need not wake for it.
        `hold_until`: a goal that waited before it was taken (`executors.goal_ids`) does not start
        before this time, so a stop sent after it, and still on its way, wins.
        """
        answer = Future()
        name = hosted.tool.name
        refusal = self._name_refusal(hosted, request.name)
        if refusal is not None:
            answer.set_result(refusal)
            return answer
        arguments = request.arguments
        if not request.validated:
            try:
                arguments = self.catalog.validate(name, arguments)
            except ToolArgumentError as exc:
                answer.set_result((exc.error_code, exc.message, errors.NOT_RUN))
                return answer
        with hosted.lock:
            if hosted.closing:
                answer.set_result((errors.UNAVAILABLE, (
                    f"the tool_server hosting '{name}' is shutting down; the call did not run"),
                    errors.NOT_RUN))
                return answer
            if not self.accepting:
                answer.set_result((errors.PAUSED, (
                    f"the tool_server hosting '{name}' is not active (managed node); the call "
                    'did not run'), errors.NOT_RUN))
                return answer
        if not self._first(hosted, request.call_id, context, answer, local):
            return answer
        with hosted.lock:
            waits = hosted.pending > 0
            hosted.pending += 1
            hosted.contexts.add(context)
            if waits or not inline:
                hosted.jobs.put(_Job(request.call_id, arguments, context, answer, queued=waits,
                                     local=local, hold_until=hold_until))
        if inline and not waits:
            hosted.take_stops()  # the last moment before the tool starts: stops first
            outcome = self._execute(hosted.tool, arguments, request.call_id, context) \
                if not context.cancelled.is_set() else _stopped_before_start(hosted.tool.name)
            with hosted.lock:
                hosted.pending -= 1
                hosted.contexts.discard(context)
            answer.set_result(outcome)
            if hosted.ledger is not None:
                hosted.ledger.finish(request.call_id, outcome)
            return answer
        if waits:
            context.feedback(RunTool.Feedback.STAGE_QUEUED, -1.0,
                             f"waiting for an earlier '{name}' call to finish")
        return answer

    def _first(self, hosted: _HostedTool, call_id: str, context: CallContext, answer: Future,
               local: bool) -> bool:
        """
        Return True when this is the first call with its id; else answer it as the first was.

        A repeat of a running call gets that call's answer when it ends; one of an ended (or
        stopped) call gets the first answer now. Nothing runs twice.
        """
        ledger = hosted.ledger
        if ledger is None:
            return True

        def joined(first: Answer) -> None:  # on the thread that ended the first call
            answer.set_result(first)
            if not local:
                self._wake(hosted)

        claim = ledger.claim(call_id, context, joined)
        if claim.first:
            return True
        stopped = claim.answer is not None and claim.answer[1] == STOPPED_MESSAGE
        self.get_logger().info(f'{hosted.tool.name} call {log_text(call_id, 80)}: ' + (
            'its caller stopped it before it arrived; not run' if stopped else
            'a repeat of a call id it has already taken; answered as the first, not run again'))
        if claim.answer is not None:
            answer.set_result(claim.answer)
        return False

    def _wake(self, hosted: _HostedTool) -> None:
        """Wake the tool's executor thread: a handler awaiting an answer resumes there."""
        try:
            executor = hosted.executor
            if executor is None:
                raise RuntimeError('no executor')
            executor.wake()
        except Exception as exc:  # noqa: B902 - the executor may be shutting down
            self.get_logger().debug(f'{hosted.tool.name}: could not wake executor: {exc!r}')

    def _work(self, hosted: _HostedTool) -> None:
        """Worker thread: run the tool's calls one at a time until a None job arrives."""
        while True:
            job = hosted.jobs.get()
            if job is None:
                return
            remaining = job.hold_until - time.monotonic()
            if remaining > 0:  # it waited: a stop sent after it may still be on its way
                job.context.cancelled.wait(remaining)  # (the stop listener cancels it)
            hosted.take_stops()  # the last moment before the tool starts: stops first
            if job.context.cancelled.is_set():
                outcome = _stopped_before_start(hosted.tool.name)
            else:
                if job.queued:
                    job.context.feedback(RunTool.Feedback.STAGE_RUNNING, -1.0, 'started')
                outcome = self._execute(hosted.tool, job.arguments, job.call_id, job.context)
            with hosted.lock:
                hosted.pending -= 1
                hosted.contexts.discard(job.context)
            job.done.set_result(outcome)
            if hosted.ledger is not None:  # repeats that joined this call get its answer
                hosted.ledger.finish(job.call_id, outcome)
            if job.local:
                continue  # a caller in this process got it from the future's callback
            self._wake(hosted)  # the awaiting handler resumes on the executor thread

    def _execute(self, tool: Tool, arguments: dict, call_id: str,
                 context: CallContext) -> Answer:
        """
        Run one call; return ('', content, ran) or (error_code, error_message, outcome).

        The outcome is ran once the tool was called, unless the tool says otherwise (a
        `ToolError` with an outcome: a binding that sent nothing, or lost the robot's answer).
        """
        started = time.monotonic()
        called = errors.NOT_RUN  # until the tool is called: refused before it could act
        try:
            if context.text is not None and not getattr(tool, 'STREAMS_TEXT', False):
                whole = context.text.whole(context.cancelled)  # a tool that takes whole texts
                if whole is None:
                    raise errors.ToolError(errors.CANCELLED, (
                        f"'{tool.name}' call cancelled while its text was still arriving; it "
                        'did not run'), errors.NOT_RUN)
                arguments = self.catalog.validate(
                    tool.name, {**arguments, context.text.argument: whole})
            call: Callable[..., str | dict] = tool.call  # (Tool.call may take a context too)
            called = errors.RAN
            output = call(arguments, context) if accepts_context(tool) else call(arguments)
            content = output if isinstance(output, str) else json.dumps(output)
            outcome: Answer = ('', content, errors.RAN)
        except errors.ToolError as exc:
            outcome = (exc.code, exc.message, exc.outcome or called)
        except ToolArgumentError as exc:
            outcome = (exc.error_code, exc.message, called)
        except Exception as exc:  # noqa: B902 - a tool's failure must not end the server
            outcome = (errors.EXECUTION_FAILED, f'{tool.name} failed: {type(exc).__name__}: {exc}',
                       called)
        elapsed_ms = (time.monotonic() - started) * 1e3
        if outcome[0]:
            line = (f'{tool.name} call {log_text(call_id, 80)} -> {outcome[0]}: '
                    f'{log_text(outcome[1], 300)} ({elapsed_ms:.0f} ms)')
            # Two call sites: rclpy refuses one call site logging at two severities.
            if outcome[0] == errors.CANCELLED:  # a cancel is what the caller asked for
                self.get_logger().info(line)
            else:
                self.get_logger().warning(line)
        elif self.get_logger().is_enabled_for(LoggingSeverity.DEBUG):  # (built only if shown)
            self.get_logger().debug(
                f'{tool.name} call {log_text(call_id, 80)} ok ({elapsed_ms:.1f} ms)')
        return outcome

    @property
    def tools(self) -> dict[str, Tool]:
        """Return the hosted tool instances by name."""
        return {name: hosted.tool for name, hosted in self._hosted.items()}

    def close_tools(self) -> None:
        """
        Cancel every queued and running call, let each answer, then stop the tools.

        New calls are refused first (goals rejected, requests answered `unavailable`); the calls
        already taken end with `cancelled` (or their own result, if they finish first) and their
        answers go out while the tools' executors still spin.
        """
        hosted_tools = list(self._hosted.values())
        cancelled = False
        for hosted in hosted_tools:
            with hosted.lock:
                hosted.closing = True
                contexts = list(hosted.contexts)
            for context in contexts:
                context.cancel()
            cancelled = cancelled or bool(contexts)
            hosted.jobs.put(None)  # the worker ends after the jobs already queued
        for hosted in hosted_tools:
            close = getattr(hosted.tool, 'close', None)
            if close is not None:  # ends a call that ignores its context (a device, a thread)
                try:
                    close()
                except Exception as exc:  # noqa: B902 - keep closing the others
                    self.get_logger().warning(f'closing {hosted.tool.name} failed: {exc}')
        deadline = time.monotonic() + _CLOSE_TIMEOUT_S
        for hosted in hosted_tools:
            if hosted.worker is not None:
                hosted.worker.join(timeout=max(0.0, deadline - time.monotonic()))
                if hosted.worker.is_alive():
                    self.get_logger().warning(
                        f'{hosted.tool.name}: a call is still running after '
                        f'{_CLOSE_TIMEOUT_S:g} s; leaving it')
        # The handlers answer on the executor threads, which still spin.
        while (any(hosted.in_flight for hosted in hosted_tools)
               and time.monotonic() < deadline and self.context.ok()):
            time.sleep(0.01)
        if cancelled:
            time.sleep(_ANSWER_GRACE_S)  # let the last answers reach their callers
        for hosted in hosted_tools:
            hosted.stop.set()
            if hosted.wake is not None:
                hosted.wake.trigger()
            if hosted.offer is not None:
                hosted.offer.withdraw()
        for hosted in hosted_tools:
            if hosted.thread is not None:
                hosted.thread.join(timeout=2.0)
                if hosted.thread.is_alive():
                    self.get_logger().warning(f'{hosted.tool.name}: service thread did not stop')
                    continue
            if hosted.action_server is not None:
                hosted.action_server.destroy()
            if hosted.executor is not None:
                hosted.executor.shutdown(timeout_sec=1.0)
            if hosted.node is not None:
                hosted.node.destroy_node()
        self._hosted.clear()
        stops = getattr(self, '_stops', None)
        if stops is not None:
            stops.close()

    def set_accepting(self, accepting: bool) -> None:
        """Take calls (a managed node's activate) or stop every call (its deactivate)."""
        self.accepting = accepting
        if not accepting:
            self.stop_calls()

    def stop_calls(self) -> int:
        """Cancel every queued and running call (each answers cancelled); return how many."""
        stopped = 0
        for hosted in list(self._hosted.values()):
            with hosted.lock:
                contexts = list(hosted.contexts)
            for context in contexts:
                context.cancel()
            stopped += len(contexts)
        return stopped

    def _release(self) -> None:
        self.close_tools()

    def destroy_node(self) -> None:
        self._release()
        super().destroy_node()


_EARLY_CALLS = 64  # streamed calls whose segments may wait for their goal


def _take_chunk(text: TextStream, chunk: TextChunk) -> None:
    """Add one segment to a streamed call's text; a segment out of order ends it failed."""
    expected = text.next_index
    if chunk.index and chunk.index != expected:
        text.fail(f'text segment {expected} of the streamed call never arrived (segment '
                  f'{chunk.index} came next); the rest was not spoken')
        return
    text.next_index = expected + 1
    text.put(chunk.text, chunk.final)


def _stopped_before_start(tool_name: str) -> Answer:
    return (errors.CANCELLED, f"'{tool_name}' call cancelled before it started; it did not run",
            errors.NOT_RUN)


def _fill(answer: Any, code: str, text: str, outcome: str) -> None:
    """Fill a CallTool response or RunTool result (same fields) from an `Answer`."""
    text = ros_string(text)  # a ROS string must be valid UTF-8 (model text may not be)
    answer.outcome = outcome
    answer.success = not code
    answer.content = text if not code else ''
    answer.error_code = code
    answer.error_message = text if code else ''


def main(args: list[str] | None = None) -> int:
    return run_node(ToolServer, 'tool_server', args)


if __name__ == '__main__':
    sys.exit(main())
