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
`ToolClients`: one `ExecutorClient` per catalog tool, made when first needed, by tool name.

The dispatcher makes a small catalog's clients at start and a large one's at each tool's first
call (see `nodes.catalog_reload`); the clients of tools a reload removed are kept until none of
their calls is still out, then destroyed.
"""

from collections.abc import Callable, Iterable
import functools
from typing import Any

from lerobot_tools_ros import names
from rclpy.node import Node

from .base import Post
from .client import ExecutorClient


class ToolClients:
    """
    The executor clients of `node`'s tools, at ``<service_prefix>/<tool>`` (see `names`).

    `settings` has the read-only parameters `service_prefix`, `executor_interface` and
    `in_process_executors`; `on_ready(name)` is called when a tool's client becomes ready;
    `group` and `post` are given to each `ExecutorClient`.
    """

    def __init__(self, node: Node, settings: Any, *, group: Any,
                 on_ready: Callable[[str], None], post: Post) -> None:
        self._node = node
        self._settings = settings
        self._group = group
        self._on_ready = on_ready
        self._post = post
        self._clients: dict[str, ExecutorClient] = {}
        self._retiring: dict[str, ExecutorClient] = {}  # of removed tools, until their calls end

    def get(self, name: str) -> ExecutorClient:
        """Return the client of tool `name`, made now if it has none yet."""
        client = self._clients.get(name)
        if client is None:
            settings = self._settings
            client = ExecutorClient(
                self._node, names.tool_service_name(settings.service_prefix, name),
                mode=settings.executor_interface, callback_group=self._group,
                on_ready=functools.partial(self._on_ready, name), post=self._post,
                in_process=settings.in_process_executors)
            self._clients[name] = client
            client.poll()  # discovery and the readiness probe start before the first call
        return client

    def available(self, name: str) -> bool:
        """For diagnostics: a tool not called yet in a large catalog has no client to ask."""
        client = self._clients.get(name)
        return client is not None and client.poll()

    def retire(self, removed: Iterable[str]) -> None:
        """Keep the clients of tools gone from the catalog only until their calls end."""
        for name in removed:
            client = self._clients.pop(name, None)
            if client is not None:
                self._retiring[name] = client

    def retire_idle(self, busy: Callable[[], Iterable[str]]) -> None:
        """Destroy the retiring clients of tools not among `busy()` (tools with calls out)."""
        if not self._retiring:
            return
        busy_now = set(busy())
        for name in [name for name in self._retiring if name not in busy_now]:
            self._retiring.pop(name).destroy()
