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
The gates a call passes before it runs, as one ordered list used at two moments.

At admission every gate marked `at_admission` is checked in order; when a call admitted earlier
(queued, waiting for its executor, or approved) is about to start, every gate marked `at_start`
is checked again, because an operator may have changed what they test since (a reload, allowed
tools, a tool's approval). The first gate that does not pass decides: a `Refusal` ends the call
with its code; a `Hold` makes it wait for an operator (approval: confirm).
"""

from dataclasses import dataclass
from typing import Callable, Protocol

from .calls import Call, DispatchSettings, ToolState
from .. import errors
from ..catalog import ToolCatalog

ADMISSION, START = 'admission', 'start'


@dataclass(frozen=True, slots=True)
class Refusal:
    """The call ends here with this error code and message (it did not run)."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Hold:
    """The call waits for an operator's decision; `reason` is shown with the request."""

    reason: str


class Gatekeeper(Protocol):
    """What the gates read of the core (`DispatchCore` provides it)."""

    catalog: ToolCatalog
    settings: DispatchSettings
    enabled: bool

    @property
    def calls_without_result(self) -> int: ...  # noqa: D102, E704

    def tool_state(self, name: str, now: float) -> ToolState: ...  # noqa: D102, E704

    def duplicate_of(self, call: Call, tool: ToolState, now: float) -> str: ...  # noqa: D102, E704

    def busy(self, name: str) -> bool: ...  # noqa: D102, E704

    def running_call_id(self, name: str) -> str: ...  # noqa: D102, E704


Verdict = Refusal | Hold | None
Check = Callable[[Gatekeeper, Call, float, str], Verdict]


def _enabled(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    if core.enabled:
        return None
    return Refusal(errors.PAUSED, 'tool use is paused; call ~/set_enabled with data: true to '
                   'resume')


def _in_catalog(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    if call.name in core.catalog:
        return None
    return Refusal(errors.UNKNOWN_TOOL, _late(
        f"tool '{call.name}' was removed from the catalog by a reload"))


def _allowed(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    allowed = core.settings.allowed_tools
    if not allowed or call.name in allowed:
        return None
    if stage == ADMISSION:
        return Refusal(errors.NOT_ALLOWED,
                       f"tool '{call.name}' is not in allowed_tools ({', '.join(allowed)})")
    return Refusal(errors.NOT_ALLOWED, _late(
        f"tool '{call.name}' was removed from allowed_tools ({', '.join(allowed)})"))


def _not_denied(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    name = call.name
    if core.tool_state(name, now).settings.approval != 'deny':
        return None
    if stage == ADMISSION:
        return Refusal(errors.DENIED, f"tool '{name}' has approval: deny (parameter "
                       f'tool.{name}.approval); no call of it runs')
    return Refusal(errors.DENIED, _late(
        f"tool '{name}' was set to approval: deny (parameter tool.{name}.approval)"))


def _not_a_repeat(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    duplicate = core.duplicate_of(call, core.tool_state(call.name, now), now)
    return Refusal(errors.DUPLICATE, duplicate) if duplicate else None


def _within_rate(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    bucket = core.tool_state(call.name, now).bucket
    if bucket.try_acquire(now):
        return None
    return Refusal(errors.RATE_LIMITED, (
        f"'{call.name}' is limited to {bucket.rate_hz:g} calls/s (burst {bucket.capacity:g});"
        f' retry in {bucket.retry_after_s():.2f} s'))


def _room_pending(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    limit, pending = core.settings.max_pending, core.calls_without_result
    if pending < limit:
        return None
    return Refusal(errors.BUSY, (
        f'{pending} calls are already pending (max_pending={limit}); retry later'))


def _not_refused_while_busy(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    name = call.name
    if core.tool_state(name, now).settings.when_busy != 'refuse' or not core.busy(name):
        return None
    return Refusal(errors.BUSY, (
        f"'{name}' is still running call {core.running_call_id(name)} "
        f'(tool.{name}.when_busy is refuse); retry when it has finished'))


def _confirmed(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    name = call.name
    if call.approved or core.tool_state(name, now).settings.approval != 'confirm':
        return None
    reason = f"tool '{name}' has approval: confirm (parameter tool.{name}.approval)"
    if stage == START:
        reason = (f"tool '{name}' was set to approval: confirm (parameter "
                  f'tool.{name}.approval) after this call was accepted')
    return Hold(reason)


def _late(refusal: str) -> str:
    """Say that a gate changed after the call was accepted, and that it did not run."""
    return f'{refusal} after this call was accepted; it did not run'


@dataclass(frozen=True, slots=True)
class Gate:
    """One gate: its check, and at which moments it applies."""

    check: Check
    at_admission: bool
    at_start: bool


# In order; the first gate that does not pass decides. Arguments are validated before these
# (a call with invalid arguments is refused without reaching any gate).
GATES = (
    Gate(_enabled, at_admission=True, at_start=False),  # a pause answers waiting calls itself
    Gate(_in_catalog, at_admission=False, at_start=True),  # validation covers admission
    Gate(_allowed, at_admission=True, at_start=True),
    Gate(_not_denied, at_admission=True, at_start=True),
    Gate(_not_a_repeat, at_admission=True, at_start=False),
    Gate(_within_rate, at_admission=True, at_start=False),
    Gate(_room_pending, at_admission=True, at_start=False),
    Gate(_not_refused_while_busy, at_admission=True, at_start=False),
    Gate(_confirmed, at_admission=True, at_start=True),
)
_AT = {ADMISSION: tuple(g.check for g in GATES if g.at_admission),
       START: tuple(g.check for g in GATES if g.at_start)}


def verdict(core: Gatekeeper, call: Call, now: float, stage: str) -> Verdict:
    """Return what the first gate that does not pass says at `stage`, or None: it passes."""
    for check in _AT[stage]:
        found = check(core, call, now, stage)
        if found is not None:
            return found
    return None
