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

The node only wires ROS: what happens to a call (checks, at most once per call id, the queue,
stops first, running it, its answer) is `tool_server.calls.ToolCalls`, one per tool; what is
hosted, each tool made from its parameters, is `tool_server.building`. Any node may call the
tools, so a goal's or request's JSON text is validated where it arrives; a caller in this
process (`executors.inprocess`) passes its validated dict (`tool_server.request`).

Each tool has a node of its own, spun by an executor thread of its own, plus the worker thread
of its `ToolCalls`: a slow `say` never delays a `record_observation`, and while a goal runs the
tool's executor thread still takes new requests, goals and cancel requests. A `CallTool` request
that finds its tool idle runs on the executor thread itself (nothing can cancel a request, and
the hand-off to the worker cost about a third of a round trip).

An action goal's cancel request cancels its call's `CallContext`, the tool's progress reports
become the goal's feedback, and shutdown cancels every call still queued or running (each still
gets its answer). Callers stop calls whose goal or request may still be on its way on
`names.tool_stop_topic` (a std_msgs/String call id, taken by `tool_server.stop_listener` on a
thread of its own, and right before each call starts). A goal whose id (or a request whose
stamp) says it waited before it was taken (`executors.goal_ids`) is held first, so a stop sent
after it that is still on its way wins. A request or goal naming `names.READINESS_PROBE` is
answered at once without running anything: callers use it to prove that answers reach them
before their first real call.
A tool with a streamable argument (say: text) also takes its streamed goals' text in segments on
`names.tool_text_topic` beside its action (`tool_server.streamed_text`).
"""

from dataclasses import dataclass, field
import sys
import threading
import time
from typing import Any

from lerobot_tools_interfaces.action import RunTool
from lerobot_tools_interfaces.msg import TextChunk
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.executors import goal_ids
from lerobot_tools_ros.executors.inprocess import HostedToolOffer
from lerobot_tools_ros.nodes.params import declare_table
from lerobot_tools_ros.nodes.runner import run_node
from lerobot_tools_ros.parameters.declarations import TOOL_SERVER
from lerobot_tools_ros.parsing.registry import composed_properties, streamable_argument
from lerobot_tools_ros.tool_server import building
from lerobot_tools_ros.tool_server.calls import CLOSE_TIMEOUT_S, Feedback, ToolCalls
from lerobot_tools_ros.tool_server.host import RosToolHost
from lerobot_tools_ros.tool_server.stop_listener import StopListener
from lerobot_tools_ros.tool_server.streamed_text import StreamedTexts
from lerobot_tools_ros.tools import TOOL_REGISTRY
from lerobot_tools_ros.tools.base import CallContext, Tool
from lerobot_tools_ros.tools.bindings.loader import load_bindings
from lerobot_tools_ros.tools.ledger import CallLedger
from lerobot_tools_ros.untrusted import log_text, ros_string
import rclpy
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.logging import LoggingSeverity
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future

# At shutdown: how long the answers of cancelled calls get to go out.
_ANSWER_GRACE_S = 0.2


@dataclass
class _HostedTool:
    """One hosted tool: its calls, and the ROS parts that serve them."""

    calls: ToolCalls[Future]
    node: Node | None = None  # serves the tool's CallTool service and RunTool action
    executor: SingleThreadedExecutor | None = None  # spins `node` in `thread`
    thread: threading.Thread | None = None
    action_server: ActionServer | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    wake: Any = None  # guard condition on `node`: wakes `thread` when `stop` is set
    lock: threading.Lock = field(default_factory=threading.Lock)  # goal_contexts, in_flight
    goal_contexts: dict = field(default_factory=dict)  # goal id bytes -> CallContext
    in_flight: int = 0  # requests and goals not yet answered
    offer: HostedToolOffer | None = None  # to callers in this process (no DDS hop)
    texts: StreamedTexts = field(default_factory=lambda: StreamedTexts(''))  # of streamed goals

    @property
    def tool(self) -> Tool:
        """Return the hosted tool: what its calls run."""
        return self.calls.tool

    def wake_executor(self) -> None:
        """Wake the tool's executor thread: a handler awaiting an answer resumes there."""
        if self.executor is None:
            raise RuntimeError('no executor')
        self.executor.wake()


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
        tool_names = building.declared_only(self.catalog, tool_names, self.get_logger().warning)
        self._hosted = {}
        self._stops = StopListener(self)
        try:
            for tool_name in tool_names:
                self._host(tool_name)
            self._stops.start()
        except BaseException:
            self.close_tools()
            raise

    def _host(self, tool_name: str) -> None:
        """Make the tool, bind it to ROS and offer it as a service and an action."""
        bound = building.check_hostable(tool_name, self.catalog, self._bound, self._hosted,
                                        self.service_prefix)
        tool = building.make_tool(self, tool_name, bound, self.catalog,
                                  lambda key, value: self._apply(tool_name, key, value))
        logger = self.get_logger()
        hosted = _HostedTool(ToolCalls(
            tool, new_future=Future, logger=logger,
            validate=lambda name, arguments: self.catalog.validate(name, arguments),
            ledger=CallLedger(*self._call_ids), wake=lambda: hosted.wake_executor(),
            accepting=lambda: self.accepting,
            service_of=lambda name: self.resolve_service_name(
                names.tool_service_name(self.service_prefix, name)),
            debug_enabled=lambda: logger.is_enabled_for(LoggingSeverity.DEBUG)))
        self._hosted[tool_name] = hosted
        building.declare_derived(self, tool_name, tool)
        if bound is None:
            building.refuse_unknown(self, tool_name, type(tool))
        # A tool reaches ROS through a typed host (tools/host.py); a binding to robot
        # interfaces of any type gets the node itself.
        bind, bind_ros = getattr(tool, 'bind', None), getattr(tool, 'bind_ros', None)
        if bind is not None:
            bind(RosToolHost(self))
        elif bind_ros is not None:
            bind_ros(self)
        self._offer(tool_name, hosted)

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
        hosted.texts = StreamedTexts(streamable_argument(
            tool_name, composed_properties(self.catalog.parameters(tool_name))))
        if hosted.texts.argument:
            hosted.node.create_subscription(
                TextChunk, names.tool_text_topic(service_name), hosted.texts.take,
                QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        hosted.action_server = ActionServer(
            hosted.node, RunTool, service_name, execute_callback=self._goal_handler(hosted),
            goal_callback=lambda _goal: (GoalResponse.REJECT if hosted.calls.closing
                                         else GoalResponse.ACCEPT),
            cancel_callback=lambda goal_handle: self._on_cancel(hosted, goal_handle),
            result_timeout=self.result_timeout_s)
        hosted.wake = hosted.node.create_guard_condition(lambda: None)
        # Not on the tool's node: a stop is taken while the tool's thread is busy, and right
        # before a call starts (so a stop that arrived with its goal wins).
        hosted.calls.take_stops = self._stops.add(names.tool_stop_topic(service_name),
                                                  hosted.calls.stop_call)
        hosted.executor = SingleThreadedExecutor(context=self.context)
        hosted.executor.add_node(hosted.node)
        hosted.calls.start()
        hosted.thread = threading.Thread(target=self._spin, args=(hosted,), daemon=True,
                                         name=f'tool-{tool_name}')
        hosted.thread.start()
        hosted.offer = HostedToolOffer(self, hosted.calls, service_name)
        hosted.offer.offer()
        self.get_logger().info(f"hosting '{tool_name}' ({type(hosted.tool).__name__}) at "
                               f'{service_name} (CallTool service and RunTool action)')

    def handles_parameter(self, name: str) -> bool:
        """tool.<name>.* of a registered tool not hosted here: for another configuration."""
        tool = name[len('tool.'):].split('.', 1)[0] if name.startswith('tool.') else ''
        return bool(tool) and tool not in self._hosted and tool in TOOL_REGISTRY

    def _apply(self, tool_name: str, key: str, value: Any) -> None:
        """Apply a live tool parameter that was set (checked against its declaration)."""
        hosted = self._hosted.get(tool_name)
        if hosted is None:
            return  # set while the tool is being built: its constructor took the value
        building.apply_parameter(hosted.tool, key, value)
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

    # -- calls: decoded and validated on the executor thread, run by the tool's ToolCalls -------

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
                # A request is stopped only through the stop topic: when the tool is idle it
                # runs right here, on the tool's executor thread, without the worker hand-off.
                code, text, outcome = await hosted.calls.submit_text(
                    request.call_id, request.name, request.arguments, request.source,
                    CallContext(request.call_id), inline=True, hold_until=goal_ids.hold_until(
                        goal_ids.stamp_waited_s(request.stamp.sec, request.stamp.nanosec)))
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
            feedback = Feedback(lambda stage, progress, detail: goal_handle.publish_feedback(
                RunTool.Feedback(stage=ros_string(stage), progress=progress,
                                 detail=ros_string(detail))), self.get_logger())
            if goal.streamed and not hosted.texts.argument:
                goal_handle.abort()
                _fill(result, errors.INVALID_ARGUMENTS, (
                    f"'{hosted.tool.name}' has no streamable argument, so a goal with streamed "
                    'set cannot run; send the complete arguments'), errors.NOT_RUN)
                return result
            text = hosted.texts.arrived(goal.call_id) if goal.streamed else None
            context = CallContext(goal.call_id, feedback, text)
            with hosted.lock:
                hosted.in_flight += 1
                hosted.goal_contexts[key] = context
            if goal_handle.is_cancel_requested:  # cancelled between acceptance and now
                context.cancel()
            try:
                code, content, outcome = await hosted.calls.submit_text(
                    goal.call_id, goal.name, goal.arguments, goal.source, context,
                    hold_until=goal_ids.hold_until(goal_ids.waited_s(key)))
            except Exception as exc:  # noqa: B902 - every goal gets a result
                code, content, outcome = (errors.EXECUTION_FAILED,
                                          f'{type(exc).__name__}: {exc}', errors.UNKNOWN)
            finally:
                feedback.closed = True
                with hosted.lock:
                    hosted.in_flight -= 1
                    hosted.goal_contexts.pop(key, None)
                if text is not None:
                    hosted.texts.ended(goal.call_id, text)
            _fill(result, code, content, outcome)
            if not code:
                goal_handle.succeed()
            elif code == errors.CANCELLED and goal_handle.is_cancel_requested:
                goal_handle.canceled()
            else:  # a failure, or a cancel that came from shutdown rather than the client
                goal_handle.abort()
            return result
        return execute

    def _on_cancel(self, hosted: _HostedTool, goal_handle: Any) -> CancelResponse:
        """Accept every cancel request: the call's context is cancelled, the tool stops."""
        with hosted.lock:
            context = hosted.goal_contexts.get(bytes(goal_handle.goal_id.uuid))
        if context is not None:
            context.cancel()
        return CancelResponse.ACCEPT

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
            cancelled = bool(hosted.calls.begin_close()) or cancelled
        for hosted in hosted_tools:
            hosted.calls.close_tool()
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        for hosted in hosted_tools:
            hosted.calls.join(deadline)
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
        return sum(hosted.calls.stop() for hosted in list(self._hosted.values()))

    def _release(self) -> None:
        self.close_tools()

    def destroy_node(self) -> None:
        self._release()
        super().destroy_node()


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
