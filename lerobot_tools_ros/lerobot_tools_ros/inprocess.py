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
Tools hosted in this process, by the executor name a caller would reach them at over DDS.

When the dispatcher and the tool_server share a process (``lerobot-tools-ros bringup``, the
benches), the DDS round trip between them carries nothing a function call could not: the
tool_server registers each hosted tool here, and the dispatcher's executor client calls it
directly when it finds it (same rclpy context, same fully resolved name), over DDS otherwise.
What a call goes through stays the same: the host queues and runs it exactly as a ``RunTool``
goal, with the same cancel, progress and one answer. Its arguments cross as the caller's
validated dict, never as JSON text, and are validated once: again by the host only when its
schema of the tool is not the one the caller checked them against.

No rclpy here: a host is anything with ``context`` and ``start(...)``; the registry only finds it.
"""

import threading
from typing import Any, Callable, Mapping, Protocol

from lerobot_tools_ros.tools.base import CallContext

__all__ = ['Answer', 'LocalHost', 'lookup', 'register', 'registered', 'unregister']

Answer = Callable[[str, str, str], None]  # (error_code or '', content or error, outcome)


class LocalHost(Protocol):
    """One hosted tool as an in-process caller sees it."""

    context: Any  # the rclpy context its node lives in (a caller must share it)

    def start(self, call_id: str, name: str, arguments: Mapping[str, Any], source: str,
              context: CallContext, answer: Answer) -> None:
        """
        Take one call; ``answer(code, text, outcome)`` comes exactly once, from any thread.

        ``arguments``: the caller's dict (a ``catalog.ValidatedArguments`` when it validated
        them); the host never changes it and gives the tool a copy of its own, so the caller may
        keep it. It may answer before ``start`` returns (a call refused at once). Cancel it with
        ``context.cancel()``; progress arrives through ``context``'s report.
        """


_lock = threading.Lock()
_hosts: dict[tuple[int, str], LocalHost] = {}


def register(name: str, host: LocalHost) -> None:
    """Offer ``host`` at the fully resolved executor name ``name`` to callers in this process."""
    with _lock:
        _hosts[(id(host.context), name)] = host


def unregister(name: str, host: LocalHost) -> None:
    """Withdraw ``host`` (only if it is still the one registered at ``name``)."""
    with _lock:
        key = (id(host.context), name)
        if _hosts.get(key) is host:
            del _hosts[key]


def lookup(context: Any, name: str) -> LocalHost | None:
    """Return the host of ``name`` in ``context`` (the caller's rclpy context), or None."""
    with _lock:
        host = _hosts.get((id(context), name))
    # id() of a context that is gone may be reused: the host must live in this very context.
    return host if host is not None and host.context is context else None


def registered(context: Any = None) -> list[str]:
    """Return the names offered in this process (in ``context`` only, when given)."""
    with _lock:
        return sorted(name for (key, name), host in _hosts.items()
                      if context is None or host.context is context)
