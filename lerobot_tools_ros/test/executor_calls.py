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

"""Test helper: the product's ExecutorClient on the test node, with waiting calls."""

from dataclasses import dataclass, field
import itertools
from typing import Any

from conftest import spin_until
from lerobot_tools_ros.executors import ExecutorCall, ExecutorClient, Outcome

_LIVE: list = []  # callers whose ROS clients must go before their node does
# A call id per call: tool_server answers a repeated id with the first answer (at most once).
_CALL_IDS = itertools.count(1)


def destroy_callers() -> None:
    """Destroy every Caller's ROS clients; call before the test node goes (GC can crash)."""
    while _LIVE:
        _LIVE.pop().client.destroy()


@dataclass
class Pending:
    """A call in flight: its outcome (once done) and every feedback seen so far."""

    handle: ExecutorCall | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    feedback: list[tuple[str, float, str]] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        assert len(self.outcomes) == 1, self.outcomes
        return self.outcomes[0]


class Caller:
    """Call one tool's executor the way the dispatcher does (discovery, readiness probe)."""

    def __init__(self, node: Any, name: str, mode: str = 'auto') -> None:
        self.node = node
        self.tool = name.rsplit('/', 1)[-1]
        self.client = ExecutorClient(node, name, mode=mode)
        _LIVE.append(self)

    def wait_ready(self, timeout: float = 30.0) -> bool:
        """Spin until the client proved the executor's answers reach it (no call is retried)."""
        return spin_until(self.node, self.client.poll, timeout)

    def start(self, arguments: dict, call_id: str = '', name: str | None = None) -> Pending:
        """Send ``arguments`` (a dict, as the dispatcher sends them: JSON only on DDS)."""
        call_id = call_id or f'c{next(_CALL_IDS)}'
        pending = Pending()
        pending.handle = self.client.send(
            call_id, self.tool if name is None else name, arguments, pending.outcomes.append,
            lambda *feedback: pending.feedback.append(feedback))
        return pending

    def finish(self, pending: Pending, timeout: float = 15.0) -> Outcome:
        assert spin_until(self.node, lambda: bool(pending.outcomes), timeout), 'no answer'
        return pending.outcome

    def call(self, arguments: dict, call_id: str = '', name: str | None = None,
             timeout: float = 15.0) -> Outcome:
        return self.finish(self.start(arguments, call_id, name), timeout)


class RawCaller:
    """
    A CallTool client and a RunTool action client that send arguments as the text given.

    What another node may send a tool_server (text that is not JSON, not an object); the
    product's executors send only the JSON of a dict. Both are proven (`prove_service`,
    `prove_action`) before the first call, so no answer is lost.
    """

    def __init__(self, node: Any, name: str, timeout: float = 30.0) -> None:
        from conftest import prove_action, prove_service
        from lerobot_tools_interfaces.action import RunTool
        from lerobot_tools_interfaces.srv import CallTool
        from lerobot_tools_ros import names
        from rclpy.action import ActionClient
        self.node = node
        self._RunTool, self._CallTool = RunTool, CallTool
        self.service = node.create_client(CallTool, name)
        self.action = ActionClient(node, RunTool, name)
        prove_service(node, self.service, CallTool.Request(name=names.READINESS_PROBE), timeout)
        prove_action(node, self.action, RunTool.Goal(name=names.READINESS_PROBE), timeout)

    def request(self, text: str, call_id: str) -> Any:
        """Send a CallTool request with ``arguments=text``; return its response."""
        future = self.service.call_async(self._CallTool.Request(call_id=call_id,
                                                                arguments=text))
        assert spin_until(self.node, future.done, 15.0), 'no response'
        return future.result()

    def goal(self, text: str, call_id: str) -> Any:
        """Send a RunTool goal with ``arguments=text``; return its result."""
        sent = self.action.send_goal_async(self._RunTool.Goal(call_id=call_id, arguments=text))
        assert spin_until(self.node, sent.done, 15.0) and sent.result().accepted, 'not accepted'
        done = sent.result().get_result_async()
        assert spin_until(self.node, done.done, 15.0), 'no result'
        return done.result().result

    def destroy(self) -> None:
        self.action.destroy()
        self.node.destroy_client(self.service)
