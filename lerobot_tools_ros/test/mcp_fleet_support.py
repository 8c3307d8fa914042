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
Helpers for MCP clients on a test host (a network namespace): the fleet MCP tests and bench.

An MCP server started on the operator's host listens inside that host's namespace, where the
test process cannot connect. ``run_on_host`` runs a coroutine on a thread that entered the
host's network namespace (``setns`` changes only the calling thread), so an SDK client there
reaches the server as a client on that host would. Nothing else of the test process moves.
"""

import asyncio
import ctypes
import os
import threading
import time
from typing import Any, Awaitable, Callable

CLONE_NEWNET = 0x40000000


def run_on_host(host: Any, coroutine_function: Callable[[], Awaitable[Any]],
                timeout: float) -> Any:
    """Run ``coroutine_function()`` on a thread inside ``host``'s network namespace."""
    outcome: dict = {}

    def main() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f'/var/run/netns/{host.namespace}', os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:  # this thread only
                    raise OSError(ctypes.get_errno(), 'setns failed')
            finally:
                os.close(fd)
            outcome['value'] = asyncio.run(asyncio.wait_for(coroutine_function(), timeout))
        except BaseException as exc:  # noqa: B902 - re-raised in the caller's thread
            outcome['error'] = exc

    thread = threading.Thread(target=main, name=f'on-{host.name}')
    thread.start()
    thread.join(timeout + 30.0)
    if thread.is_alive():
        raise TimeoutError(f'the client on {host.name} did not end')
    if 'error' in outcome:
        raise outcome['error']
    return outcome.get('value')


async def wait_for_port(port: int, proc: Any, timeout: float = 90.0) -> None:
    """Wait (on a host's thread) until ``proc`` listens on 127.0.0.1:``port`` there."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _, writer = await asyncio.open_connection('127.0.0.1', port)
            writer.close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.proc.poll() is not None:
                raise AssertionError(f'no server on port {port}:\n{proc.output()}') from None
            await asyncio.sleep(0.1)


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system, seconds) process ``pid`` has used so far."""
    with open(f'/proc/{pid}/stat') as handle:
        fields = handle.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
