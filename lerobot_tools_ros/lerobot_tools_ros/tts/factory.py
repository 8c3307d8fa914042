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
Choosing and building a backend from the ``say`` tool's parameters.

Parameters come either flat, for the chosen backend (``make_backend('espeak_ng', rate=200)``),
or grouped per backend (``make_backend('auto', pocket_tts={'voice': 'alba'},
espeak_ng={'voice': 'en-us'})``). ``auto`` needs the grouped form because both backends have a
``voice`` with different meanings; a caller may always pass both groups, whatever the kind,
and only the chosen backend's group is used.
"""

import inspect
import logging
from typing import Any, Mapping, Optional, Protocol

from .base import TtsBackend, TtsUnavailable
from .espeak_ng import EspeakNgBackend
from .pocket import PocketTtsBackend

__all__ = ['BACKENDS', 'KINDS', 'backend_defaults', 'make_backend']

# Concrete backends by name. Importing this module imports neither torch nor pocket-tts.
BACKENDS: dict[str, type] = {
    PocketTtsBackend.name: PocketTtsBackend,
    EspeakNgBackend.name: EspeakNgBackend,
}
# Every value the `backend` parameter accepts.
KINDS = ('auto',) + tuple(BACKENDS)

_log = logging.getLogger(__name__)


class WarningLogger(Protocol):
    """Where ``make_backend`` warns: a ``logging.Logger``, an rclpy logger, or a holder."""

    def warning(self, message: str, /) -> None:
        """Log one preformatted message."""


def backend_defaults(kind: str) -> dict[str, Any]:
    """Return the parameters a concrete backend accepts, with their defaults."""
    if kind not in BACKENDS:
        raise ValueError(f'unknown TTS backend {kind!r}; choose one of {", ".join(BACKENDS)}')
    signature = inspect.signature(BACKENDS[kind])  # its __init__'s, without self
    return {name: parameter.default for name, parameter in signature.parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY}


def _build(kind: str, params: Mapping[str, Any]) -> TtsBackend:
    unknown = sorted(set(params) - set(backend_defaults(kind)))
    if unknown:
        raise ValueError(f'unknown {kind} parameter(s) {", ".join(unknown)}; it accepts '
                         f'{", ".join(backend_defaults(kind))}')
    return BACKENDS[kind](**params)


def make_backend(kind: str = 'auto', *, logger: Optional[WarningLogger] = None,
                 **params: Any) -> TtsBackend:
    """
    Build the backend ``kind`` names: ``auto``, ``pocket_tts`` or ``espeak_ng``.

    ``auto`` uses pocket-tts when it imports and its model loads, else espeak-ng, and then
    logs exactly one warning on ``logger`` saying why pocket-tts was not used (the message is
    one preformatted string, so an rclpy logger works too). Bad parameters raise ValueError
    for every kind, ``auto`` included: a typo is not a reason to fall back. TtsUnavailable
    means no requested backend can run here.
    """
    if kind not in KINDS:
        raise ValueError(f'unknown TTS backend {kind!r}; choose one of {", ".join(KINDS)}')
    groups: dict[str, dict[str, Any]] = {}
    for name in BACKENDS:
        if name in params:
            group = params.pop(name)
            if group is None:
                group = {}
            if not isinstance(group, Mapping):
                raise ValueError(f'{name} parameters must be a mapping of parameter names to '
                                 f'values, got {group!r}')
            groups[name] = dict(group)
    if kind != 'auto':
        return _build(kind, {**groups.get(kind, {}), **params})
    if params:
        raise ValueError(
            f'with backend auto, give parameters per backend (pocket_tts={{...}}, '
            f'espeak_ng={{...}}), since both have a voice; got {", ".join(sorted(params))}')
    try:
        return _build(PocketTtsBackend.name, groups.get(PocketTtsBackend.name, {}))
    except TtsUnavailable as exc:
        pocket_problem = exc
    try:
        backend = _build(EspeakNgBackend.name, groups.get(EspeakNgBackend.name, {}))
    except TtsUnavailable as exc:
        raise TtsUnavailable(f'no text-to-speech backend can run here. pocket-tts: '
                             f'{pocket_problem} espeak-ng: {exc}') from exc
    (logger or _log).warning(f'TTS backend auto: using espeak-ng because pocket-tts is not '
                             f'usable: {pocket_problem}')
    return backend
