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
Catalog reloads and the tool.<name>.<setting> parameters: one object the dispatcher holds.

`CatalogReloader` is everything the dispatcher does because a catalog can have 10,000 tools;
the node gives it what it needs as a few callables (see its constructor) and calls it at start,
from `~/reload_catalog`, and at shutdown. `~/reload_catalog` loads and checks the new catalog on a
~/call thread, compares it with the old one there, and swaps it into the core in the dispatch
group (a few ms, whatever its size). Declaring the tools' parameters (five per tool, 0.1-0.4 ms
each) and creating the executor clients of new tools then run in slices in the group, between
calls (`dispatch.tool_parameters` decides the order); the reload answers once they are in step.
Clients of removed tools are destroyed once none of their calls is still out (`ToolClients`),
removed tools' parameters undeclared.

What only large catalogs need, all here: executor clients made per tool at its first call above
`EAGER_CLIENTS` tools, parameters declared in slices after the first
`_TOOLS_DECLARED_AT_START` tools, `gc.freeze` above `EAGER_CLIENTS` tools. (The schema check
cache that makes an unchanged reload cheap is the catalog's own, in `catalog`.)
"""

from collections.abc import Callable
import gc
import time
from typing import Any

from lerobot_tools_ros.catalog import CatalogError, ToolCatalog
from lerobot_tools_ros.dispatch.tool_parameters import DECLARE, ToolParameterPlan
from lerobot_tools_ros.dispatcher.calls import Waiter
from lerobot_tools_ros.dispatcher.params import DispatcherParameters
from lerobot_tools_ros.parsing import parse
from lerobot_tools_ros.untrusted import log_text
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from std_srvs.srv import Trigger

# A catalog of at most this many tools gets its executor clients at once (discovery and the
# readiness probe start before the first call); a larger one per tool at its first call: each
# client is a CallTool client and a RunTool action client (6 DDS endpoints), and 1,000 of them
# took ~100 s and ~550 MB to create here.
EAGER_CLIENTS = 100
# Declaring tool.<name>.<setting> costs 0.1-0.4 ms a parameter here (five per tool): the
# constructor declares this many tools' at once (every tool of a normal catalog, so they are all
# there when the node's services come up), the rest go in slices of about _SLICE_S of work
# (see dispatch.tool_parameters), as do a reload's new executor clients (~15 ms each). Slices
# follow each other at once while no call is pending; with calls pending, _SLICE_GAP_S apart,
# for a call's several turns on the dispatch thread (request, goal, answer, result) fit between
# two slices instead of each waiting for one.
_TOOLS_DECLARED_AT_START = 200
_SLICE_S = 0.010
_SLICE_GAP_S = 0.015


def load_catalog(logger: Any, dataset: str) -> ToolCatalog:
    """Load the catalog of `dataset` ('': the sample), logging the entries it skipped."""
    catalog = ToolCatalog.load(dataset or None)
    for problem in catalog.problems:
        logger.warning(problem)
    return catalog


def freeze_if_large(catalog: ToolCatalog) -> None:
    """
    Keep the cyclic GC from walking a large catalog and its parameters again and again.

    They are ~30 Python objects per tool (and ~50 per declared tool's parameters) that live
    until the next reload, and each full collection walks every object while holding the GIL:
    0.1-2 s each at 10,000 tools here, every call waiting meanwhile. `gc.freeze()` moves what
    exists now out of the collector's reach (a replaced catalog is freed by reference counting:
    it leaves no cyclic garbage). The price: cyclic garbage of objects alive at a freeze (a few
    calls in flight) is never collected; small catalogs are not worth it.
    """
    if len(catalog) > EAGER_CLIENTS:
        gc.freeze()


def _catalog_diff(old: ToolCatalog, new: ToolCatalog) -> tuple[list, list, list]:
    """Return the tools `new` adds, removes and changes (schema) compared with `old`."""
    before = {name: old.schema(name) for name in old.names}
    after = {name: new.schema(name) for name in new.names}
    return (sorted(set(after) - set(before)), sorted(set(before) - set(after)),
            sorted(name for name in set(before) & set(after) if before[name] != after[name]))


def _some(names: list[str], shown: int = 20) -> str:
    """Name at most `shown` tools in a message (a 10,000-tool reload lists 10,000 names)."""
    if not names:
        return 'none'
    rest = len(names) - shown
    return f'{names[:shown]}' + (f' and {rest} more' if rest > 0 else '')


class _SyncStats:
    """What the tool parameter slices did since a reload asked for them (for its answer)."""

    __slots__ = ('declared', 'undeclared', 'slices', 'longest_s')

    def __init__(self) -> None:
        self.declared = self.undeclared = self.slices = 0
        self.longest_s = 0.0

    def __str__(self) -> str:
        if not self.slices:
            return 'tool parameters unchanged'
        return (f'tool parameters: {self.declared} tool(s) declared, {self.undeclared} '
                f'undeclared in {self.slices} slice(s), the longest {self.longest_s * 1e3:.1f} ms')


class CatalogReloader:
    """
    Reload the catalog and keep tool.<name>.<setting> in step with it, in slices.

    Held by the `Dispatcher` node; everything it needs from the node is given here:

    - `node`, `group`: where its guard condition and gap timer live (the dispatch group);
    - `params`: the dispatcher's parameters (declares and undeclares the tools');
    - `current()`: the catalog in force (the core's);
    - `post(work)`: run `work()` in the group, soon, from any thread;
    - `swap(catalog, removed)`: in the group, make `catalog` the core's and retire the executor
      clients of the `removed` tools;
    - `busy()`: whether calls are pending or work is posted (slices then leave them a gap);
    - `add_client(name)`: make a tool's executor client;
    - `publish_catalog(catalog)`: announce the catalog in force (off the dispatch thread).

    The constructor declares the first tools' parameters of `catalog` at once and plans the
    rest (in slices, once the node spins).
    """

    def __init__(self, node: Node, params: DispatcherParameters, catalog: ToolCatalog, *,
                 group: Any, current: Callable[[], ToolCatalog],
                 post: Callable[[Callable[[], None]], None],
                 swap: Callable[[ToolCatalog, list[str]], None], busy: Callable[[], bool],
                 add_client: Callable[[str], Any],
                 publish_catalog: Callable[[ToolCatalog], None]) -> None:
        self._node = node
        self._params = params
        self._current = current
        self._post = post
        self._swap = swap
        self._busy = busy
        self._add_client = add_client
        self._publish_catalog = publish_catalog
        self._tool_params = ToolParameterPlan(params.overridden_tools)
        self._tool_params.retarget(catalog.names)
        # True while declaring: the values taken are in force already, nothing to re-read.
        self.declaring = False
        self._sync_waiters: list[Waiter] = []  # reloads waiting for the parameters
        self._waiting: set[Waiter] = set()  # every reload still waiting (for shutdown)
        self._sync_stats = _SyncStats()
        self._new_clients: list[str] = []  # executor clients a reload added, made in slices
        self._step_tool_parameters(max_steps=_TOOLS_DECLARED_AT_START)
        self._slice_guard = node.create_guard_condition(self._catch_up, callback_group=group)
        self._slice_timer = node.create_timer(_SLICE_GAP_S, self._catch_up, callback_group=group,
                                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._slice_timer.cancel()
        if self._tool_params.pending:
            self._slice_guard.trigger()

    def start_clients(self, catalog: ToolCatalog) -> None:
        """Make every tool's executor client now, unless the catalog is large (at first call)."""
        if len(catalog) <= EAGER_CLIENTS:
            for name in catalog.names:
                self._add_client(name)

    def release(self) -> None:
        """At shutdown: let every waiting reload answer (that the dispatcher shut down)."""
        for waiter in [*self._waiting, *self._sync_waiters]:
            waiter.answered.set()

    def on_reload(self, request: Trigger.Request, response: Trigger.Response):
        """Load and check the new catalog here (a ~/call thread); swap it in the group."""
        start = time.perf_counter()
        try:
            catalog = load_catalog(self._node.get_logger(), self._params.dataset)
        except CatalogError as exc:
            response.success = False
            response.message = f'kept the old catalog: {exc}'
            return response
        refused = self._params.check_tool_overrides(catalog.names)
        if refused:
            response.success = False
            response.message = f'kept the old catalog: a new tool has a bad setting: {refused}'
            return response
        # The parser's plan for the new catalog is built here too: built lazily by the first
        # policy text after the swap, it held the dispatch thread (and e-stop) for seconds.
        parse('', catalog, self._params.formats)
        freeze_if_large(catalog)
        loaded_s = time.perf_counter() - start
        swapped = Waiter()
        synced = Waiter()
        self._waiting.update((swapped, synced))
        context = self._node.context
        try:
            base = self._current()  # compared here, off the dispatch thread (10,000 schemas)
            diff = _catalog_diff(base, catalog)
            self._post(lambda: self._swap_catalog(catalog, swapped, synced, base, diff))
            while not swapped.answered.wait(1.0) and context.ok():
                pass  # the swap is quick; this only notices shutdown
            # The new catalog is in force; answer once its tools' parameters are declared and
            # removed tools' undeclared (in slices, calls are served meanwhile).
            while swapped.result and not synced.answered.wait(1.0) and context.ok():
                pass
        finally:
            self._waiting.difference_update((swapped, synced))
        if swapped.result and swapped.result[0] and self._current() is catalog:
            self._publish_catalog(catalog)  # here: off the dispatch thread
        response.success, response.message = swapped.result or (
            False, 'the dispatcher shut down before the new catalog was swapped in')
        if response.success:
            response.message += (f'; loaded and checked in {loaded_s:.3f} s; '
                                 f'{self._sync_stats}')
        return response

    def _swap_catalog(self, catalog: ToolCatalog, swapped: Waiter, synced: Waiter,
                      base: ToolCatalog, diff: tuple[list, list, list]) -> None:
        """
        In the group: make `catalog` the core's, retire the clients of removed tools.

        Tool parameters and the new tools' clients follow in slices (`_catch_up`), which
        answer `synced`.
        """
        start = time.perf_counter()
        if self._current() is not base:  # another reload came first: compare with its catalog
            diff = _catalog_diff(self._current(), catalog)
        added, removed, changed = diff
        self._tool_params.retarget(catalog.names)
        self._sync_stats = _SyncStats()
        self._sync_waiters.append(synced)
        self._slice_guard.trigger()  # answers `synced` at once if there is nothing to do
        self._swap(catalog, removed)
        if len(catalog) <= EAGER_CLIENTS:
            self._new_clients = added[::-1]  # a stack: made in order
        message = (f'reloaded {catalog.source}: added {_some(added)}, removed '
                   f'{_some(removed)}, changed {_some(changed)}; swapped in '
                   f'{(time.perf_counter() - start) * 1e3:.1f} ms')
        self._node.get_logger().info(message)
        swapped.result = (True, message)
        swapped.answered.set()

    def _catch_up(self) -> None:
        """In the group: one slice of new clients and tool parameter steps; then the next."""
        self._slice_timer.cancel()
        start = time.perf_counter()
        deadline = start + _SLICE_S
        steps = 0
        while self._new_clients and time.perf_counter() < deadline:
            name = self._new_clients.pop()
            if name in self._current():  # still (a later reload may have removed it)
                self._add_client(name)
            steps += 1
        if time.perf_counter() < deadline:
            steps += self._step_tool_parameters(deadline=deadline)
        if steps:
            freeze_if_large(self._current())  # what this slice declared
            stats = self._sync_stats
            stats.slices += 1
            stats.longest_s = max(stats.longest_s, time.perf_counter() - start)
        if self._tool_params.pending or self._new_clients:
            if self._busy():
                self._slice_timer.reset()  # calls are on their way: leave them the gap
            else:
                self._slice_guard.trigger()  # after whatever else is ready now
            return
        for synced in self._sync_waiters:
            synced.answered.set()
        self._sync_waiters.clear()

    def _step_tool_parameters(self, *, deadline: float = float('inf'),
                              max_steps: int | None = None) -> int:
        """Take the plan's next steps until `deadline` (perf_counter) or `max_steps` taken."""
        plan = self._tool_params
        taken = 0
        self.declaring = True
        try:
            while (step := plan.next_step()) is not None and taken != max_steps:
                kind, tool = step
                try:
                    if kind == DECLARE:
                        self._params.declare_tool(tool)
                    else:
                        self._params.undeclare_tool(tool)
                except ParameterException as exc:  # the overrides were checked before
                    self._node.get_logger().error(
                        f'could not {kind} the parameters of {log_text(tool)}: {exc}')
                plan.done(step)
                taken += 1
                if kind == DECLARE:
                    self._sync_stats.declared += 1
                else:
                    self._sync_stats.undeclared += 1
                if time.perf_counter() >= deadline:
                    break
        finally:
            self.declaring = False
        return taken
