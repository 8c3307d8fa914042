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
Which tools' ``tool.<name>.<setting>`` parameters to declare or undeclare next, one tool a step.

Why in steps: rclpy declares a parameter in ~0.1-0.4 ms here (each one is checked and published
as its own parameter event, even inside one ``declare_parameters``), so the five settings of
10,000 tools are 5-20 s of work, and rclpy's parameter APIs may only be used from the node's
callback group, the one that dispatches. Done in one go, every call waits that long. So the
dispatcher declares in short slices (a time budget each) posted to its group, calls run between
them, and until a tool's parameters are declared its settings come from the parameters file's
overrides or the global values: the very values the declaration will give it, so a tool's
settings are right from the moment it can be called.

Weighed and not chosen: declaring per-tool parameters above some catalog size only for tools
with overrides. It bounds the total work too, but then a large catalog's tools cannot be
tuned with ``ros2 param set`` and vanish from ``ros2 param list``/``dump``, a behaviour that
flips at an arbitrary size. Slices keep one rule for every size; the cost is ~4 KB per tool
(~40 MB at 10,000 tools, measured) and the total declaration time spread over calls.

Order: removed tools' parameters go first (undeclaring is ~100x cheaper and frees memory), then
new tools with overrides from the parameters file (their values are then visible to
``ros2 param get`` and the MCP server soonest), then the rest in catalog order. Retargeting
while steps are pending is fine: the plan always moves from what is declared towards the
newest target.
"""

from collections.abc import Iterable, Sequence

DECLARE = 'declare'
UNDECLARE = 'undeclare'


class ToolParameterPlan:
    """What is declared, what should be, and the next step from one towards the other."""

    def __init__(self, overridden: Iterable[str] = ()) -> None:
        """`overridden`: tools a parameters file gives a tool.<name>.<setting> for."""
        self._overridden = frozenset(overridden)
        self._declared: set[str] = set()
        self._target: frozenset[str] = frozenset()
        self._to_undeclare: list[str] = []  # stacks: the next step is at the end
        self._to_declare: list[str] = []

    def retarget(self, tools: Sequence[str]) -> None:
        """Make `tools` (a catalog's names, in order) the tools that should have parameters."""
        self._target = frozenset(tools)
        self._to_undeclare = sorted(self._declared - self._target, reverse=True)
        missing = [name for name in tools if name not in self._declared]
        first = [name for name in missing if name in self._overridden]
        rest = [name for name in missing if name not in self._overridden]
        self._to_declare = (first + rest)[::-1]

    @property
    def pending(self) -> int:
        """Count the steps still to take."""
        return len(self._to_undeclare) + len(self._to_declare)

    def declared(self, tool: str) -> bool:
        """Return whether `tool`'s parameters are declared now."""
        return tool in self._declared

    def next_step(self) -> tuple[str, str] | None:
        """Return the next step, (DECLARE or UNDECLARE, tool), or None when in step."""
        if self._to_undeclare:
            return UNDECLARE, self._to_undeclare[-1]
        if self._to_declare:
            return DECLARE, self._to_declare[-1]
        return None

    def done(self, step: tuple[str, str]) -> None:
        """Record that `step` (the one `next_step` returned) was taken, or given up."""
        kind, tool = step
        queue = self._to_undeclare if kind == UNDECLARE else self._to_declare
        if not queue or queue[-1] != tool:
            raise ValueError(f'{step!r} is not the next step')
        queue.pop()
        if kind == UNDECLARE:
            self._declared.discard(tool)
        else:
            self._declared.add(tool)
