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
`~/call` and `~/reload_catalog`: the dispatcher's services whose requests wait for an answer.

`~/call` (CallTool) lets other nodes submit a call through the same gates; it is served by a
small node of its own (`<name>_call`) whose threads wait for the calls' results, because rclpy
cannot answer a service request later and an awaiting coroutine would busy-poll the executor.
`~/reload_catalog` is served there too (loading a 10,000-tool catalog takes seconds: on these
threads the dispatch thread keeps answering calls meanwhile; see `catalog_reload`).
"""

from collections.abc import Callable
import threading
import time
from typing import Any

from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.dispatch import effects as fx
from lerobot_tools_ros.dispatch.call_ids import Earlier
from lerobot_tools_ros.untrusted import ros_string
import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

# Threads of ~/call and ~/reload_catalog: requests waiting at once (more wait in the queue).
_CALL_THREADS = 16
_CALL_SOURCE_DEFAULT = 'call_service'
# How long the answers given at shutdown get to leave before the node is destroyed (the
# middleware sends them from its own thread; 0.3 s lost one on two loaded cores).
_ANSWER_LINGER_S = 1.0


class Waiter:
    """One ~/call request waiting in its service thread for its call's one result."""

    __slots__ = ('answered', 'result', 'call', 'fault')

    def __init__(self) -> None:
        self.answered = threading.Event()
        self.result: Any = None  # the call's PublishResult, or a service's answer
        self.call: Any = None  # the core's call, once submitted
        self.fault = ''  # why the core never took the request (a bug), if it did not


class CallService:
    """
    The `<name>_call` node of a dispatcher `node`, serving ~/call and ~/reload_catalog.

    `submit(request, source, waiter)` runs in the dispatch group (posted there with `post`): it
    submits the call to the core and, before carrying out its effects, hands the call and
    `waiter` to `expect`; `answer` (the dispatcher's PublishResult effect) then wakes the request.
    """

    def __init__(self, node: Node, *, submit: Callable[[Any, str, Waiter], None],
                 post: Callable[[Callable[[], None]], None],
                 reload: Callable[[Trigger.Request, Trigger.Response], Any]) -> None:
        self._context = node.context
        self._submit = submit
        self._post = post
        self._waiters: dict[Any, list[Waiter]] = {}  # ~/call requests by their call (repeats)
        self._waiting: set[Waiter] = set()  # every ~/call request still waiting (for shutdown)
        self._node = rclpy.create_node(
            f'{node.get_name()}_call', namespace=node.get_namespace(), context=node.context,
            start_parameter_services=False, use_global_arguments=False)
        group = ReentrantCallbackGroup()
        # Keep all: a keep-last queue drops the oldest requests of a burst before rclpy takes
        # them (4 clients x 500 requests lost 992), and a service callback cannot tell.
        qos = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
        self._node.create_service(CallTool, node.resolve_service_name('~/call'), self._on_call,
                                  qos_profile=qos, callback_group=group)
        self._node.create_service(Trigger, node.resolve_service_name('~/reload_catalog'),
                                  reload, callback_group=group)
        self._executor = MultiThreadedExecutor(num_threads=_CALL_THREADS, context=node.context)
        self._executor.add_node(self._node)
        self._thread = threading.Thread(target=self._spin, daemon=True, name='dispatcher-call')
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except ExternalShutdownException:
            pass

    def expect(self, call: Any, waiter: Waiter) -> None:
        """In the group, from `submit`: `waiter` waits for `call`'s result (repeats join it)."""
        waiter.call = call
        self._waiters.setdefault(call, []).append(waiter)

    def answer(self, call: Any, result: fx.PublishResult | Earlier) -> None:
        """In the group: wake the ~/call requests waiting for `call`'s result, if any are."""
        for waiter in self._waiters.pop(call, ()):
            waiter.result = result
            waiter.answered.set()

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
            try:
                self._submit(request, source, waiter)
            except Exception as exc:  # noqa: B902 - re-raised: the group logs it
                if waiter.call is None:  # the core never took it: answer now, not at shutdown
                    waiter.fault = f'{type(exc).__name__}: {str(exc)[:200]}'
                    waiter.answered.set()
                raise

        self._waiting.add(waiter)
        try:
            self._post(submit)
            while not waiter.answered.wait(1.0) and self._context.ok():
                pass  # the core answers every call by its deadline; this only notices shutdown
        finally:
            self._waiting.discard(waiter)
        result: fx.PublishResult | Earlier | None = waiter.result
        response.call_id = waiter.call.call_id if waiter.call is not None else request.call_id
        if result is None:
            if waiter.fault or waiter.call is None:  # the core never took it: nothing was sent
                response.error_code, response.outcome = errors.UNAVAILABLE, errors.NOT_RUN
            else:  # taken, and it may have been sent before the dispatcher went away
                response.error_code, response.outcome = errors.ANSWER_LOST, errors.UNKNOWN
            response.error_message = ros_string(
                f'the dispatcher failed to take the call ({waiter.fault}; a bug, please report '
                'it); nothing was run' if waiter.fault else
                'the dispatcher shut down before the call had a result; it may or may not '
                'have run' if waiter.call is not None else
                'the dispatcher shut down before it took the call; nothing was run')
            return response
        response.success = result.success
        response.content = ros_string(result.content)
        response.error_code = result.error_code
        response.error_message = ros_string(result.error_message)
        response.outcome = result.outcome
        return response

    def release(self) -> None:
        """At shutdown: let every waiting request answer (unavailable if it has no result)."""
        self._released = bool(self._waiters or self._waiting)
        for waiter in [*(w for ws in self._waiters.values() for w in ws), *self._waiting]:
            waiter.answered.set()

    def close(self) -> None:
        """Stop serving: the threads end, the node is destroyed."""
        self._executor.shutdown(timeout_sec=2.0)  # the answering callbacks end first
        if getattr(self, '_released', False):
            # The middleware sends answers from a thread of its own: a node destroyed (a
            # process that exits) at once can drop the answers just written.
            time.sleep(_ANSWER_LINGER_S)
        self._node.destroy_node()
        self._thread.join(2.0)
