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

"""The parser's per-catalog plans: shared while a catalog lives, gone with it."""

import gc
import weakref

from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.parsing import parse, registry


def _catalog(count: int, tag: str) -> ToolCatalog:
    return ToolCatalog.from_tools([{'type': 'function', 'function': {
        'name': f'{tag}_{index}', 'description': 'A tool.', 'parameters': {
            'type': 'object', 'properties': {'text': {'type': 'string'}}}}}
        for index in range(count)])


def test_a_replaced_catalog_is_freed_with_its_plan():
    # A dispatcher that reloads its catalog must not keep every catalog it ever had: the
    # plan cache is keyed weakly by the catalog, and a plan holding its catalog kept it alive.
    catalog = _catalog(50, 'old')
    assert parse('[old_3(text="hi")]', catalog, ['auto']).calls[0].name == 'old_3'
    gone = weakref.ref(catalog)
    del catalog
    parse('<say>hi</say>', _catalog(5, 'new'), ['auto'])  # the last-used slot moves on
    gc.collect()
    assert gone() is None


def test_each_trigger_keeps_the_handlers_of_its_prefixes():
    catalog = _catalog(300, 'tool')
    plan = registry.get_plan(catalog, ('auto',))
    handled = [literal for literal in plan.by_trigger if literal not in plan.reasoning_tokens]
    assert 'tool_299(' in handled
    for literal in handled:
        handlers = plan.by_trigger[literal]
        assert handlers and all(literal.startswith(trigger) for trigger, _ in handlers)
    # A longer trigger keeps the handlers of a shorter one that it starts with.
    shorter = {trigger for trigger, _ in plan.by_trigger['tool_299(']}
    assert shorter >= {t for t in handled if 'tool_299('.startswith(t)}
    assert parse('[tool_299(text="y")]', catalog, ['auto']).calls[0].name == 'tool_299'
