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
How the MCP server meets its clients: stdio and Streamable HTTP, and how it stops.

- stdio: messages are read from fd 0 without a thread (a blocked read would keep a stopping
  server alive while its client keeps stdin open), and a request the SDK cannot read (JSON
  nested deeper than its parser takes, or no valid JSON-RPC) is answered with an error carrying
  its id instead of being dropped;
- HTTP: uvicorn without its own signal handling (it re-raised the signal after shutdown: exit 1
  with a traceback), IPv6 hosts in brackets, a session table that abandoned sessions cannot fill
  (an idle timeout, a cap, and the longest-idle session ended for a new client at the cap), and
  RFC 9728 protected-resource metadata naming no authorization server, with a 401 that says in
  plain words that a bearer token is needed (there is no OAuth flow to start).
"""

import asyncio
import contextlib
import json
import os
import stat
from typing import Any, AsyncIterator, IO

from lerobot_tools_ros.mcp import access, sdk_adapter, wire

# Longest stdio message line accepted (a larger one is answered with an error).
MAX_LINE_BYTES = 64 * 1024 * 1024


class _LineReader:
    """Lines from a file descriptor through the asyncio loop (cancellable; no thread)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._reader: asyncio.StreamReader | None = None
        self._file: IO[bytes] | None = None

    async def start(self) -> None:
        if not _pollable(self._fd):
            return  # a file, /dev/null (a service's stdin): read in a thread, to its end
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        self._file = os.fdopen(os.dup(self._fd), 'rb', buffering=0)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                         self._file)
        except (OSError, ValueError):
            self._file.close()
            self._file = None  # not readable through the loop: read it in a thread instead
            return
        self._reader = reader

    async def readline(self) -> bytes:
        if self._reader is not None:
            try:
                return await self._reader.readline()
            except ValueError:  # longer than the limit: skip to the next newline
                await self._reader.readuntil(b'\n')
                return b'{"too long": true}\n'
        import anyio
        return await anyio.to_thread.run_sync(_read_line_blocking, self._fd)


def _pollable(fd: int) -> bool:
    """
    Whether the loop can wait on ``fd``: a pipe, a socket or a terminal.

    asyncio takes any character device as a pipe, but /dev/null cannot be polled: the loop then
    logged a traceback and the server waited forever for a client that was never there.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _read_line_blocking(fd: int) -> bytes:
    out = bytearray()
    while not out.endswith(b'\n'):
        chunk = os.read(fd, 1)
        if not chunk:
            break
        out += chunk
    return bytes(out)


def answer_unreadable(text: str, exc: Exception) -> str | None:
    """Return the error response for a request the SDK could not read, or None (no id)."""
    found, request_id = wire.request_id_of(text)
    if not found:
        return None
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return wire.error_response(request_id, wire.PARSE_ERROR,
                                   'parse error: not valid JSON, or nested too deeply to read')
    return wire.error_response(
        request_id, wire.INVALID_REQUEST,
        'invalid request: not a valid JSON-RPC message, or nested deeper than the server '
        f'reads (about 200 levels): {str(exc).splitlines()[0][:200]}')


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """Yield the (read, write) streams of an MCP connection over this process's stdin/stdout."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    wire_out = os.dup(1)
    os.dup2(2, 1)  # stray prints go to stderr, never onto the wire
    lines = _LineReader(0)
    await lines.start()
    read_writer, read_stream = sdk_adapter.context_streams(SessionMessage | Exception)
    write_stream, write_reader = sdk_adapter.context_streams(SessionMessage)
    write_lock = anyio.Lock()

    async def write(text: str) -> None:
        data = (text + '\n').encode('utf-8')
        async with write_lock:
            await anyio.to_thread.run_sync(_write_all, wire_out, data)

    async def reader() -> None:
        async with read_writer:
            while True:
                raw = await lines.readline()
                if not raw:
                    return  # stdin closed: the client left
                text = raw.decode('utf-8', 'replace')
                if not text.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                except Exception as exc:  # noqa: B902 - whatever the SDK's parser raises
                    answer = answer_unreadable(text, exc)
                    if answer is not None:
                        await write(answer)
                    else:
                        await read_writer.send(exc)
                    continue
                await read_writer.send(SessionMessage(message))

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                await write(session_message.message.model_dump_json(
                    by_alias=True, exclude_unset=True))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            group.start_soon(writer)
            yield read_stream, write_stream
            group.cancel_scope.cancel()
    finally:
        os.close(wire_out)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _StaticToken:
    """The SDK's ``TokenVerifier`` for one configured bearer token."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str):
        from mcp.server.auth.provider import AccessToken
        if not access.token_matches(self._token, token):
            return None
        return AccessToken(token='<configured>', client_id='bearer', scopes=[])


def base_url(node: Any) -> str:
    return f'http://{access.url_host(node.host)}:{node.port}'


def http_app(server: Any, node: Any) -> Any:
    """Build the Streamable HTTP ASGI app; with a token, the SDK bearer middleware guards it."""
    kwargs: dict[str, Any] = {}
    routes = []
    if node.token:
        from mcp.server.auth.settings import AuthSettings
        from starlette.responses import JSONResponse
        from starlette.routing import Route
        resource = f'{base_url(node)}{node.path}'
        kwargs['auth'] = AuthSettings(issuer_url=base_url(node), resource_server_url=None)
        kwargs['token_verifier'] = _StaticToken(node.token)
        # No authorization_servers (there is none: the token is configured on the robot) and
        # no resource_documentation (RFC 9728: a URL; the 401's body says what to do).
        metadata = {
            'resource': resource,
            'bearer_methods_supported': ['header'],
            'resource_name': 'lerobot_tools_ros MCP server (needs a bearer token)',
        }

        async def protected_resource(request: Any) -> Any:
            return JSONResponse(metadata, headers={'Cache-Control': 'no-store'})
        # RFC 9728: the well-known URI with the resource's path appended, and without it.
        routes = [Route(f'/.well-known/oauth-protected-resource{node.path}', protected_resource),
                  Route('/.well-known/oauth-protected-resource', protected_resource)]
    host = access.bind_host(node.host)
    app = server.streamable_http_app(
        streamable_http_path=node.path, host=host,
        max_request_body_size=node.max_request_bytes, custom_starlette_routes=routes,
        session_idle_timeout=node.http_session_idle_s, max_sessions=node.http_max_sessions,
        **kwargs)
    sdk_adapter.evict_idle_at_capacity(server, lambda session_id: node.get_logger().info(
        f'{node.http_max_sessions} HTTP sessions open: ended the one idle the longest '
        f'({session_id[:8]}...) for a new client'))
    if node.token:
        app = _ResourceMetadataHeader(app, f'{base_url(node)}/.well-known/'
                                      f'oauth-protected-resource{node.path}')
    return app


# The body of every 401: what a user reading a client's error needs to do.
TOKEN_NEEDED = ('this MCP server needs a bearer token: send the header "Authorization: Bearer '
                '<token>" with every request. The token is configured on the robot (its '
                'token_env variable or token_file); there is no OAuth authorization server '
                'to sign in with.')


class _ResourceMetadataHeader:
    """
    ASGI wrapper for a 401: name the resource metadata, say plainly a bearer token is needed.

    The header names the protected-resource metadata (RFC 9728 section 5.1); the header's
    error_description and the body say in plain words what to send.
    """

    def __init__(self, app: Any, metadata_url: str) -> None:
        self._app = app
        self._value = (f'Bearer error="invalid_token", error_description="a bearer token is '
                       f'needed (configured on the robot; no OAuth server)", '
                       f'resource_metadata="{metadata_url}"').encode()
        self._body = json.dumps({'error': 'invalid_token',
                                 'error_description': TOKEN_NEEDED}).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get('type') != 'http':
            await self._app(scope, receive, send)
            return
        unauthorized = False

        async def patched(message: dict) -> None:
            nonlocal unauthorized
            if message.get('type') == 'http.response.start' and message.get('status') == 401:
                unauthorized = True
                headers = [(k, v) for k, v in message.get('headers', [])
                           if k.lower() not in (b'www-authenticate', b'content-length')]
                headers += [(b'www-authenticate', self._value),
                            (b'content-length', str(len(self._body)).encode())]
                message = dict(message, headers=headers)
            elif unauthorized and message.get('type') == 'http.response.body':
                if message.get('more_body'):
                    return  # the SDK's own body is replaced by ours, sent whole at its end
                message = {'type': 'http.response.body', 'body': self._body}
            await send(message)
        await self._app(scope, receive, patched)


def uvicorn_server(app: Any, node: Any) -> Any:
    """Return a uvicorn server that leaves signals to us (see ``serve``)."""
    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self):  # noqa: D102 - ours handle SIGINT/SIGTERM
            yield

    config = uvicorn.Config(app, host=access.bind_host(node.host), port=node.port,
                            log_level='warning', lifespan='on', timeout_graceful_shutdown=1)
    return _Server(config)
