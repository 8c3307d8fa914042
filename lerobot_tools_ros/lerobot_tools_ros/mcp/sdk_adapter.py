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
The only place that reaches into the MCP SDK's private names (``mcp`` 2.3).

The SDK's public API has no way to name a request's connection (to tell it about list changes
later), to list the open Streamable HTTP sessions (to end them at shutdown), to free a slot
taken by an abandoned session, or to build the context streams of a custom stdio transport.
Each of those reaches is one function here, and ``test_mcp_sdk_adapter.py`` pins the SDK
behaviour it relies on, so an SDK upgrade that moves them fails one small test, not the server.
The SDK is imported lazily: importing this module costs nothing.
"""

from typing import Any

# MCP logging levels, least severe first (the protocol's syslog order).
LOG_LEVELS = ('debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency')


def level_passes(level: str, minimum: str) -> bool:
    """Return whether a log message of ``level`` reaches a client that set ``minimum``."""
    try:
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(minimum)
    except ValueError:
        return True


def connection_of(ctx: Any) -> Any:
    """
    Return the SDK ``Connection`` a request came on, or None.

    A 2025-era client keeps one connection for its whole session; the server tells it about
    list changes and logs through it (``send_tool_list_changed``, ``log``, ``state``,
    ``exit_stack``, ``protocol_version``). The request context's session holds it privately.
    """
    return getattr(getattr(ctx, 'session', None), '_connection', None)


def http_sessions(server: Any) -> dict:
    """Return the open Streamable HTTP sessions of ``server`` (session id -> transport)."""
    manager = getattr(server, '_session_manager', None)
    return dict(getattr(manager, '_server_instances', None) or {})


def session_is_idle(transport: Any) -> bool:
    """Return whether an HTTP session has no request in flight (no call, no open GET stream)."""
    return not getattr(transport, '_requests_in_flight', 0) and not transport.is_terminated


def _idle_since(transport: Any) -> float:
    """Return a session's idle deadline: the smaller, the longer it has been idle."""
    scope = getattr(transport, 'idle_scope', None)
    return scope.deadline if scope is not None else 0.0


def evict_idle_at_capacity(server: Any, on_evict: Any = None) -> None:
    """
    Make a full Streamable HTTP session table give way to new clients.

    When a new session would be refused because ``max_sessions`` are open, the session idle the
    longest (no request in flight, no open stream) is ended first, so abandoned sessions can
    never lock a new client out; a 503 comes only when every open session is busy. The ended
    session's id then answers 404, and its client opens a new session (as the spec says).
    ``on_evict(session_id)`` is told about each one.
    """
    manager = server._session_manager
    admit = manager._admit_session

    def admit_or_evict(requestor: Any) -> Any:
        sessions = manager._server_instances
        if manager.max_sessions is not None and len(sessions) >= manager.max_sessions:
            idle = [(_idle_since(t), sid) for sid, t in sessions.items()
                    if session_is_idle(t) and t.idle_scope is not None]
            if idle:
                _, session_id = min(idle)
                transport = sessions.pop(session_id)
                manager._session_owners.pop(session_id, None)
                transport.idle_scope.cancel()  # its server task ends and terminates it
                if on_evict is not None:
                    on_evict(session_id)
        return admit(requestor)

    manager._admit_session = admit_or_evict


def context_streams(item_type: Any) -> tuple[Any, Any]:
    """Return a (send, receive) pair of the SDK's context-carrying memory streams (no buffer)."""
    from mcp.shared._context_streams import create_context_streams
    return create_context_streams[item_type](0)
