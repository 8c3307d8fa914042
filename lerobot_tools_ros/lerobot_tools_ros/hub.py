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
Everything that talks to the Hugging Face hub: reachability, and finding dataset files.

huggingface_hub retries connection errors with backoff (about 20 s here) before giving up, which
is far too long for a node starting on an offline robot. Both the catalog (repo ids) and the
pocket-tts backend (model weights) ask this module first and fail fast. ``huggingface_hub`` is
imported only when a file has to be looked up in the hub cache or downloaded, and
``urllib.request`` (with http.client and email: ~60 ms of every node's start) only to probe.
"""

import os
import pathlib
import socket
import threading
import urllib.parse

DEFAULT_ENDPOINT = 'https://huggingface.co'
# LeRobot pins dataset downloads to its codebase version tag; ``None`` means the main branch.
DATASET_REVISIONS = (None, 'v3.0')
DOWNLOAD_TIMEOUT_S = 3.0


class DatasetNotFound(LookupError):
    """A dataset file found nowhere; the message lists every place tried and why it failed."""


def hub_endpoint() -> str:
    """Return the hub URL huggingface_hub would use (``HF_ENDPOINT`` or the public hub)."""
    return os.environ.get('HF_ENDPOINT') or DEFAULT_ENDPOINT


def unreachable_reason(endpoint: str, timeout: float) -> str | None:
    """
    Return why ``endpoint`` cannot be reached within ``timeout`` seconds, or None if it can.

    Connects to the endpoint (or to the HTTPS proxy the environment configures) in a daemon
    thread, so even a resolver that ignores timeouts cannot hold the caller longer.
    """
    from urllib.request import getproxies, proxy_bypass  # (see the module docstring)

    parsed = urllib.parse.urlsplit(endpoint)
    host = parsed.hostname or ''
    port = parsed.port or (443 if parsed.scheme == 'https' else 80)
    proxies = getproxies()
    proxy = proxies.get(parsed.scheme) or proxies.get('all')
    if proxy and not proxy_bypass(host):
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


def _hf_home() -> pathlib.Path:
    # Same resolution as hub_constants.HF_HOME, without importing huggingface_hub.
    if os.environ.get('HF_HOME'):
        return pathlib.Path(os.environ['HF_HOME']).expanduser()
    xdg = os.environ.get('XDG_CACHE_HOME') or os.path.join('~', '.cache')
    return pathlib.Path(xdg).expanduser() / 'huggingface'


def hf_lerobot_home() -> pathlib.Path:
    """Return LeRobot's local dataset root (``$HF_LEROBOT_HOME``, default ``$HF_HOME/lerobot``)."""
    if os.environ.get('HF_LEROBOT_HOME'):
        return pathlib.Path(os.environ['HF_LEROBOT_HOME']).expanduser()
    return _hf_home() / 'lerobot'


def _is_true(value: str | None) -> bool:
    return (value or '').strip().upper() in {'1', 'ON', 'YES', 'TRUE'}


def _not_found(repo_id: str, tried: list[str]) -> DatasetNotFound:
    return DatasetNotFound(f'cannot find dataset {repo_id!r}: tried ' + '; '.join(tried))


def find_dataset_file(repo_id: str, relpath: str) -> tuple[pathlib.Path, str]:
    """
    Find ``relpath`` of a LeRobot dataset: LeRobot home, hub cache, then a download.

    Return the local path and where it came from; raise ``DatasetNotFound`` naming every place
    tried. Offline (``HF_HUB_OFFLINE``) or with the hub unreachable, no download is attempted.
    """
    tried: list[str] = []
    local = hf_lerobot_home() / repo_id / relpath
    if local.is_file():
        return local, repo_id
    tried.append(f'{local} (not found)')
    try:
        import huggingface_hub
        from huggingface_hub import constants as hub_constants
    except ImportError:
        tried.append('hub cache and download skipped: huggingface_hub is not installed'
                     ' (pip install huggingface_hub)')
        raise _not_found(repo_id, tried) from None
    cache_dir = pathlib.Path(hub_constants.HF_HUB_CACHE)
    repo_dir = cache_dir / ('datasets--' + repo_id.replace('/', '--'))
    for revision in DATASET_REVISIONS:
        try:
            cached = huggingface_hub.try_to_load_from_cache(
                repo_id, relpath, revision=revision, repo_type='dataset')
        except (ValueError, OSError) as exc:
            cached = None
            tried.append(f'hub cache {repo_dir} ({exc})')
        if isinstance(cached, str) and os.path.isfile(cached):
            return pathlib.Path(cached), f'{repo_id}@{revision or "main"} (hub cache)'
    tried.append(f'hub cache {repo_dir}/snapshots/*/{relpath} (not cached for '
                 + ', '.join(rev or 'main' for rev in DATASET_REVISIONS) + ')')
    if _is_true(os.environ.get('HF_HUB_OFFLINE')) or hub_constants.HF_HUB_OFFLINE:
        tried.append('download skipped (HF_HUB_OFFLINE is set)')
        raise _not_found(repo_id, tried)
    url = f'{hub_constants.ENDPOINT}/datasets/{repo_id}/{relpath}'
    unreachable = unreachable_reason(hub_constants.ENDPOINT, DOWNLOAD_TIMEOUT_S)
    if unreachable:
        # hf_hub_download retries connection errors with backoff (~20 s); do not wait for it.
        tried.append(f'download {url} skipped: hub not reachable ({unreachable})')
        raise _not_found(repo_id, tried)
    try:
        downloaded = huggingface_hub.hf_hub_download(
            repo_id, relpath, repo_type='dataset', etag_timeout=DOWNLOAD_TIMEOUT_S)
    except Exception as exc:  # noqa: B902 - any hub/network failure means "not reachable"
        reason = f'{type(exc).__name__}: {exc}'.splitlines()[0][:200]
        tried.append(f'download {url} failed ({reason})')
        raise _not_found(repo_id, tried) from None
    return pathlib.Path(downloaded), f'{repo_id} (downloaded)'
