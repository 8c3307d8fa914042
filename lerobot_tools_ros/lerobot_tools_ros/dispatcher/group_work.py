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
`GroupWork`: work from other threads, run in one callback group of a node.

A node whose state callbacks share one mutually exclusive group (the dispatcher's) takes work
from other threads (a ~/call request, a reload's swap, an executor's answer on a
multi-threaded executor) by posting it: queued here, run by a guard condition in that group.
"""

from collections import deque
from collections.abc import Callable

from lerobot_tools_ros.untrusted import log_text
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node


class GroupWork:
    """Run work posted from any thread in `node`'s callback `group`, in order."""

    def __init__(self, node: Node, group: object) -> None:
        self._node = node
        self._posted: deque = deque()
        self._guard = node.create_guard_condition(self._run, callback_group=group)

    @property
    def pending(self) -> bool:
        """Return whether posted work waits to run."""
        return bool(self._posted)

    def post(self, work: Callable[[], None]) -> None:
        """Run `work()` in the callback group, soon (from any thread)."""
        self._posted.append(work)
        self._guard.trigger()

    def in_group(self, work: Callable[[], None]) -> None:
        """
        Run a future callback in the group.

        At once on a single-threaded executor (every callback already runs on its one thread),
        else posted.
        """
        if isinstance(self._node.executor, SingleThreadedExecutor):
            work()
        else:
            self.post(work)

    def _run(self) -> None:
        posted = self._posted
        while posted:
            work = posted.popleft()
            try:
                work()
            except Exception as exc:  # noqa: B902 - one request's fault must not end the node
                self._node.get_logger().error(
                    f'a posted event failed and was dropped ({type(exc).__name__}: '
                    f'{log_text(exc, 300)}); please report it')
