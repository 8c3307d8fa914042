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
Calls to a robot's dispatcher (``~/call``) from another host: exactly one answer per call.

Across a network a request or its answer can be lost (a cable pulled, Wi-Fi gone, the robot's
computer off). DDS never reports that to a service client: the answer just never comes. So a
caller on an operator station gives every call a deadline and ends it once:

- the dispatcher's own response, when it arrives in time (``outcome`` says what the robot did);
- ``unavailable`` / ``not_run`` when no ``~/call`` of that robot answered a readiness probe in
  time: the request itself was never sent, so a retry cannot act twice;
- ``answer_lost`` / ``unknown`` when the request was sent and no answer came by the deadline:
  the robot may have run it; its own audit log says whether it did.

An answer that arrives after the deadline is dropped: the call already has its one answer.
The decisions are in ``PendingCall`` (no ROS); ``RemoteCalls`` wires them to a node.
"""

import dataclasses
import time
from typing import Any, Callable

from lerobot_tools_ros import errors, names

# How long one readiness probe waits for its answer before the next is sent.
PROBE_WAIT_S = 0.5


@dataclasses.dataclass
class PendingCall:
    """One call's way to its single answer (see the module docstring)."""

    call_id: str
    dispatcher: str
    deadline: float
    sent: bool = False
    answered: bool = False

    def lost_answer(self) -> dict:
        """Return the answer of a call whose deadline passed without the dispatcher's."""
        self.answered = True
        if self.sent:
            return {'success': False, 'call_id': self.call_id, 'content': '',
                    'error_code': errors.ANSWER_LOST, 'outcome': errors.UNKNOWN,
                    'error_message': (
                        f'{self.dispatcher}/{names.DISPATCHER_CALL} got the call but no answer '
                        'came back in time (link lost?): the robot may have run it; its audit '
                        'log says whether it did')}
        return {'success': False, 'call_id': self.call_id, 'content': '',
                'error_code': errors.UNAVAILABLE, 'outcome': errors.NOT_RUN,
                'error_message': (
                    f'{self.dispatcher}/{names.DISPATCHER_CALL} did not answer a readiness probe '
                    'in time (robot not discovered, or its link is down): nothing was sent')}


class RemoteCalls:
    """
    Send ``CallTool`` requests to dispatchers by name, each ending in exactly one answer.

    Driven by the node's executor (call ``call()`` from its thread): ``call()`` returns at
    once, ``on_answer(response)`` runs on the executor when the call ends. A request whose
    deadline passed is withdrawn from its client, so an outage of any length holds no memory.
    A client per dispatcher is proven once with a probe (an answer sent before the server
    matched this client would be lost) and again after the dispatcher left the graph.
    """

    def __init__(self, node: Any, tick_s: float = 0.05,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from lerobot_tools_interfaces.srv import CallTool
        self._types = CallTool
        self._node = node
        self._clock = clock
        self._clients: dict[str, Any] = {}
        self._proven: set[str] = set()
        self._probing: dict[str, tuple[Any, float]] = {}  # dispatcher: (probe future, sent at)
        self._waiting: list[tuple[PendingCall, Any, Callable]] = []  # not sent yet
        self._in_flight: list[tuple[PendingCall, Any, Callable]] = []  # (call, future, done)
        self._timer = node.create_timer(tick_s, self.tick)

    def _client(self, dispatcher: str) -> Any:
        client = self._clients.get(dispatcher)
        if client is None:
            client = self._node.create_client(
                self._types, f'{dispatcher.rstrip("/")}/{names.DISPATCHER_CALL}')
            self._clients[dispatcher] = client
        return client

    def call(self, dispatcher: str, request: Any, timeout_s: float,
             on_answer: Callable[[Any], None]) -> PendingCall:
        """Send ``request`` to ``dispatcher`` (its node name, e.g. /robot_a/dispatcher)."""
        self._client(dispatcher)
        pending = PendingCall(request.call_id, dispatcher, self._clock() + timeout_s)
        self._waiting.append((pending, request, on_answer))
        self.tick()
        return pending

    def tick(self) -> None:
        """Probe, send what may be sent, and end every call whose deadline passed."""
        now = self._clock()
        for dispatcher, client in self._clients.items():
            if not client.service_is_ready():
                self._proven.discard(dispatcher)  # gone: proven again when it is back
        for dispatcher in {p.dispatcher for p, _, _ in self._waiting}:
            self._prove(dispatcher, now)
        waiting, self._waiting = self._waiting, []
        for pending, request, on_answer in waiting:
            if pending.dispatcher in self._proven:
                self._send(pending, request, on_answer)
            elif now >= pending.deadline:
                on_answer(self._response(pending.lost_answer()))
            else:
                self._waiting.append((pending, request, on_answer))
        in_flight, self._in_flight = self._in_flight, []
        for pending, future, on_answer in in_flight:
            if pending.answered:
                continue
            if now >= pending.deadline and not future.done():
                self._clients[pending.dispatcher].remove_pending_request(future)
                on_answer(self._response(pending.lost_answer()))
            else:
                self._in_flight.append((pending, future, on_answer))

    def _send(self, pending: PendingCall, request: Any, on_answer: Callable) -> None:
        """Send the request; its answer ends the call at once unless the deadline did."""
        future = self._clients[pending.dispatcher].call_async(request)
        pending.sent = True

        def answered(done: Any) -> None:
            if pending.answered:
                return  # the call already ended as answer_lost
            pending.answered = True
            on_answer(done.result())
        future.add_done_callback(answered)
        self._in_flight.append((pending, future, on_answer))

    def _prove(self, dispatcher: str, now: float) -> None:
        client = self._clients[dispatcher]
        if not client.service_is_ready():
            self._proven.discard(dispatcher)  # gone: proven again when it is back
            return
        if dispatcher in self._proven:
            return
        probe = self._probing.get(dispatcher)
        if probe is not None and probe[0].done():
            del self._probing[dispatcher]
            self._proven.add(dispatcher)
            return
        if probe is not None and now - probe[1] < PROBE_WAIT_S:
            return
        if probe is not None:
            client.remove_pending_request(probe[0])
        future = client.call_async(self._types.Request(name=names.READINESS_PROBE))
        self._probing[dispatcher] = (future, now)

    def discovered(self, dispatcher: str) -> bool:
        """Whether a ``~/call`` server of ``dispatcher`` is in this node's graph now."""
        return self._client(dispatcher).service_is_ready()

    def _response(self, fields: dict) -> Any:
        return self._types.Response(**fields)

    @property
    def pending_calls(self) -> int:
        """Return how many calls have no answer yet."""
        return len(self._waiting) + sum(not p.answered for p, _, _ in self._in_flight)

    def close(self) -> None:
        """Stop the timer and destroy the clients (calls still pending get no answer)."""
        self._node.destroy_timer(self._timer)
        for client in self._clients.values():
            self._node.destroy_client(client)
        self._clients.clear()
