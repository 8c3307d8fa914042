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
One request from a command-line client to a service, without losing it to DDS matching.

`service_is_ready()` turns true when this client sees the server, which can be before the
server's side has matched this client: a request sent then reaches the server, but its answer
is lost, and a one-shot client would report that the service "did not answer". So a fresh client
first sends a probe (a request that changes nothing, answered at once: the dispatcher and the
tool servers answer `names.READINESS_PROBE`) until one comes back, and only then the request
that must not be sent twice.
"""

import time
from typing import Any


def call_once(executor: Any, client: Any, probe: Any, request: Any,
              seconds: float) -> tuple[Any, str]:
    """
    Prove `client` with `probe`, then send `request` once; return (response, problem).

    `problem` is '' with a response, else says what did not happen within `seconds` of
    discovery and probing (plus as long again for the answer to `request`).
    """
    deadline = time.monotonic() + seconds
    while not client.service_is_ready() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    if not client.service_is_ready():
        return None, (f'no {client.srv_name} service (is the dispatcher running in this ROS '
                      'domain?)')
    while True:
        future = client.call_async(probe)
        answered_by = min(deadline, time.monotonic() + 0.5)
        while not future.done() and time.monotonic() < answered_by:
            executor.spin_once(timeout_sec=0.05)
        if future.done():
            break
        client.remove_pending_request(future)
        if time.monotonic() >= deadline:
            return None, f'{client.srv_name} is there but never answered a probe request'
    future = client.call_async(request)
    answered_by = time.monotonic() + seconds
    while not future.done() and time.monotonic() < answered_by:
        executor.spin_once(timeout_sec=0.05)
    if not future.done():
        return None, f'{client.srv_name} did not answer within {seconds:g} s'
    return future.result(), ''
