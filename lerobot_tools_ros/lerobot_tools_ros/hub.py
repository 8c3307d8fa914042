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
Reachability of the Hugging Face hub, checked quickly.

huggingface_hub retries connection errors with backoff (about 20 s here) before giving up, which
is far too long for a node starting on an offline robot. Both the catalog (repo ids) and the
pocket-tts backend (model weights) ask this module first and fail fast.
"""

import os
import socket
import threading
import urllib.parse
import urllib.request

DEFAULT_ENDPOINT = 'https://huggingface.co'


def hub_endpoint() -> str:
    """Return the hub URL huggingface_hub would use (``HF_ENDPOINT`` or the public hub)."""
    return os.environ.get('HF_ENDPOINT') or DEFAULT_ENDPOINT


def unreachable_reason(endpoint: str, timeout: float) -> str | None:
    """
    Return why ``endpoint`` cannot be reached within ``timeout`` seconds, or None if it can.

    Connects to the endpoint (or to the HTTPS proxy the environment configures) in a daemon
    thread, so even a resolver that ignores timeouts cannot hold the caller longer.
    """
    parsed = urllib.parse.urlsplit(endpoint)
    host = parsed.hostname or ''
    port = parsed.port or (443 if parsed.scheme == 'https' else 80)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parsed.scheme) or proxies.get('all')
    if proxy and not urllib.request.proxy_bypass(host):
        proxied = urllib.parse.urlsplit(proxy if '://' in proxy else 'http://' + proxy)
        host, port = proxied.hostname or '', proxied.port or 80
    outcome: list[str | None] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(f'{host}:{port}: {exc}')

    worker = threading.Thread(target=probe, name='hub-probe', daemon=True)
    worker.start()
    worker.join(timeout + 0.5)
    if not outcome:
        return f'{host}:{port}: no answer within {timeout:g} s'
    return outcome[0]
