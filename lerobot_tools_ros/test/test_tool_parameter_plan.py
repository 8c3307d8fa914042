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

"""The plan that moves the dispatcher's declared tool parameters towards its catalog's tools."""

from lerobot_tools_ros.parameters.tool_plan import DECLARE, ToolParameterPlan, UNDECLARE
import pytest


def _run(plan: ToolParameterPlan, limit: int | None = None) -> list[tuple[str, str]]:
    """Take the plan's steps (at most `limit`) as the node would; return them in order."""
    steps = []
    while (step := plan.next_step()) is not None and len(steps) != limit:
        plan.done(step)
        steps.append(step)
    return steps


def test_removed_tools_go_first_then_overridden_ones_then_the_rest_in_catalog_order():
    plan = ToolParameterPlan(overridden={'c', 'gone_too'})
    plan.retarget(['a', 'gone', 'gone_too'])
    assert _run(plan) == [(DECLARE, 'gone_too'), (DECLARE, 'a'), (DECLARE, 'gone')]
    plan.retarget(['b', 'a', 'c'])
    assert _run(plan) == [(UNDECLARE, 'gone'), (UNDECLARE, 'gone_too'),
                          (DECLARE, 'c'), (DECLARE, 'b')]
    assert plan.pending == 0 and plan.next_step() is None
    assert [plan.declared(name) for name in 'abc'] == [True, True, True]
    assert not plan.declared('gone')


def test_retargeting_half_way_moves_from_what_is_declared_to_the_newest_target():
    plan = ToolParameterPlan()
    plan.retarget([f't{i}' for i in range(5)])
    assert _run(plan, limit=2) == [(DECLARE, 't0'), (DECLARE, 't1')]
    # t0 is removed and t1 kept before t2..t4 were declared; t9 is new.
    plan.retarget(['t1', 't3', 't9'])
    assert plan.pending == 3
    assert _run(plan) == [(UNDECLARE, 't0'), (DECLARE, 't3'), (DECLARE, 't9')]
    # A tool removed and back before its parameters were undeclared keeps them: nothing to do.
    plan.retarget(['t1'])
    assert plan.next_step() == (UNDECLARE, 't3')
    plan.retarget(['t1', 't3', 't9'])
    assert plan.pending == 0


def test_a_step_other_than_the_next_is_refused():
    plan = ToolParameterPlan()
    plan.retarget(['a', 'b'])
    with pytest.raises(ValueError, match='is not the next step'):
        plan.done((DECLARE, 'b'))
