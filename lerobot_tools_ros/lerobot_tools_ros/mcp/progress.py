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
MCP progress notifications for one call: values that only increase, as the spec requires.

A tool's feedback (``ToolProgress``) may repeat a value (a gripper reports 0.0 at each step) or
carry none (-1: unknown). Each notification sent must be greater than the last: a known fraction
that advances is sent as it is (out of 1.0); anything else (a new stage, "waiting for
approval") moves the value on by a small step without passing the next whole fraction.
"""

import math

# How far a notification without an advancing fraction moves the value on.
STEP = 1e-3


class ProgressTrack:
    """The progress values already sent for one call."""

    def __init__(self) -> None:
        """Start with nothing sent."""
        self.last: float | None = None
        self.sent = 0

    def step(self, fraction: float | None) -> tuple[float, float | None] | None:
        """
        Return ``(progress, total)`` to send for a report of ``fraction`` (0..1 or None).

        ``total`` is 1.0 when the value is a known fraction, else None. None: nothing can be
        sent that increases (the value is already at 1.0).
        """
        value = None
        if fraction is not None and math.isfinite(fraction) and fraction >= 0:
            value = min(float(fraction), 1.0)
        if value is not None and (self.last is None or value > self.last):
            self.last = value
            self.sent += 1
            return value, 1.0
        base = 0.0 if self.last is None else self.last
        if self.last is not None and base + STEP >= 1.0:
            return None
        stepped = base if self.last is None else base + STEP
        self.last = stepped
        self.sent += 1
        return stepped, (1.0 if value is not None else None)


def progress_value(progress: float) -> float | None:
    """MCP progress (0..1) from a ``ToolProgress.progress``; ``None`` when it is unknown (-1)."""
    if progress is None or not math.isfinite(progress) or progress < 0:
        return None
    return min(float(progress), 1.0)
