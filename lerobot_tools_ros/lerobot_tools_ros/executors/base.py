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
What every way of calling a tool's executor has in common: a call handle and its outcome.

An executor takes one call (id, tool name, arguments, who claims to send it) with two
callbacks: `on_done` gets exactly one `Outcome` (unless the call is forgotten first), and
`on_feedback` gets the tool's progress while it runs. It returns an `ExecutorCall`, the handle
through which the caller cancels the call or forgets it. Three implement it: `ActionExecutor`
(a RunTool goal: progress and cancel), `ServiceExecutor` (a CallTool request: neither) and
`InProcessExecutor` (a tool_server in this process, called directly). `ExecutorClient` picks
one per tool, in one place.

Arguments are a dict, as the caller validated them (`catalog.ValidatedArguments`, from
`ToolCatalog.validate`), never JSON text: the DDS executors write the JSON of a goal or request
at their boundary, once, and the tool_server decodes and validates it there; the in-process
executor hands the object itself to the tool_server, which copies it before the tool sees it and
validates it again only when its catalog's schema of the tool is not the one it was checked
against. The executor never changes the dict: the caller keeps it (audit, results).
"""

from dataclasses import dataclass
import json
from typing import Any, Callable, Mapping, Protocol

from lerobot_tools_ros import errors

ACTION = 'action'
SERVICE = 'service'
LOCAL = 'in-process'


@dataclass(frozen=True)
class Outcome:
    """How a call ended, as the executor reported it (or why it could not)."""

    success: bool
    content: str = ''
    error_code: str = ''
    error_message: str = ''
    call_id: str = ''  # as the executor echoed it
    # Whether the tool may have acted (errors.NOT_RUN, RAN, UNKNOWN), decided where the call
    # ended: the executor's own answer, or the path that lost it.
    outcome: str = errors.UNKNOWN


FeedbackCallback = Callable[[str, float, str], None]  # stage, progress (0..1 or -1), detail
DoneCallback = Callable[[Outcome], None]
# Runs a function where the owner's state may be touched (its callback group), from any thread.
Post = Callable[[Callable[[], None]], Any]
# A call's arguments as its caller validated them (a dict; see the module's docstring).
Arguments = Mapping[str, Any]


def arguments_json(arguments: Arguments) -> str:
    """Write a call's arguments as the JSON text of a goal or request: the DDS boundary."""
    return json.dumps(arguments if isinstance(arguments, dict) else dict(arguments))


class ExecutorCall:
    """One call in flight: its outcome arrives through `on_done`; `cancel()` asks it to stop."""

    def __init__(self, call_id: str, kind: str) -> None:
        self.call_id = call_id
        self.kind = kind  # ACTION, SERVICE or LOCAL: how it was sent
        self.done = False
        self.cancel_requested = False
        self._forget: Callable[[], None] | None = None

    def send_text(self, text: str, end: bool) -> None:
        """
        Pass on more text of a streamed call's streamable argument (``end``: it is complete).

        Only for calls sent with a ``stream_argument``; ignored once done.
        """

    def cancel(self) -> bool:
        """
        Ask the executor to stop this call; return True if it will be told.

        A cancelled call still ends through `on_done` (`cancelled`, or its own result when it
        finished first). Over DDS the stop also goes to the tool's stop topic
        (`names.tool_stop_topic`), so a tool_server refuses the call if its goal or request has
        not reached it yet, and cancels it if it runs (a request too); an executor that does not
        listen there runs a service request to its end: False, and its answer still comes
        when the executor is done (`forget()` to drop it).
        """
        return False

    def forget(self) -> None:
        """Drop this call: no outcome will be reported (after a timeout, at shutdown)."""
        if not self.done:
            self.done = True
            if self._forget is not None:
                self._forget()

    def finish(self, on_done: DoneCallback, outcome: Outcome) -> None:
        """Report `outcome` once: nothing after the first, nothing after `forget`."""
        if not self.done:
            self.done = True
            on_done(outcome)


class Executor(Protocol):
    """One way of reaching a tool's executor (action, service or in process)."""

    kind: str

    def send(self, call_id: str, tool_name: str, arguments: Arguments, source: str,
             on_done: DoneCallback, on_feedback: FeedbackCallback | None,
             stream_argument: str = '') -> ExecutorCall:
        """
        Start one call; `on_done` gets its one `Outcome`, `on_feedback` its progress.

        `arguments`: a JSON object's value (dicts, lists, str, numbers, bool, None), not changed
        here. `stream_argument`: the call is streamed: that argument's text follows
        through the handle's `send_text` (and `arguments` are the rest, not yet validated).
        """
