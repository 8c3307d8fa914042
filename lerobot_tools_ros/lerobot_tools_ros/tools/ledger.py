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
The call ids a tool's host has run, is running, or was told to stop: at most once per call id.

A caller that lost an answer (a timeout, a restarted dispatcher, a link that dropped) may send
the same call again. `CallLedger` makes that safe: the first call with an id runs; a repeat
while it runs joins it (gets its answer), and a repeat after it ended gets the first answer
again, for `window_s` after that end and among the last `max_ids` ids. Nothing runs twice.

It also carries the stop of a call that has not reached the host yet: a caller that cancels a
call whose request is still on its way (queued in DDS behind a busy tool thread, or in a host
that was stalled) says so with `stop(call_id)`, and the call is answered "not run" when it
arrives instead of acting. A stop of a running call cancels its `CallContext`; a stop of an
ended call changes nothing (its answer stands). Pure Python and thread-safe; `tool_server`
holds one per tool.
"""

from collections import OrderedDict
from dataclasses import dataclass, field
import threading
import time
from typing import Any, Callable

from lerobot_tools_ros import errors

__all__ = ['Answer', 'CallLedger', 'Claim', 'STOPPED_MESSAGE']

Answer = tuple[str, str, str]  # (error_code or '', content or error message, outcome)
STOPPED_MESSAGE = ('its caller stopped it (a cancel, a pause or a timeout) before it started '
                   'here; it did not run')


@dataclass(slots=True, eq=False)
class _Entry:
    answer: Answer | None = None  # None while the call runs
    ended_at: float = 0.0
    contexts: list = field(default_factory=list)  # CallContexts of the running call
    waiters: list = field(default_factory=list)  # callbacks of repeats that joined it


@dataclass(frozen=True, slots=True)
class Claim:
    """What `CallLedger.claim` decided: run it (`first`), or it is a repeat of a known id."""

    first: bool
    answer: Answer | None = None  # a repeat of an ended call (or a stopped one): its answer


class CallLedger:
    """At most once per call id, for `window_s` after a call ends and the last `max_ids` ids."""

    def __init__(self, window_s: float, max_ids: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.max_ids = max_ids
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # oldest first
        self.repeats = 0  # repeats answered without running again

    def claim(self, call_id: str, context: Any,
              joined: Callable[[Answer], None] | None = None) -> Claim:
        """
        Decide whether a call with this id runs: `first`, or a repeat (its first answer).

        A repeat of a running call gets `first` False and no answer: `joined(answer)` runs when
        the first ends (on the thread that ends it). An empty id is never remembered.
        """
        if not call_id:
            return Claim(True)
        with self._lock:
            self._forget_old()
            entry = self._entries.get(call_id)
            if entry is None:
                self._entries[call_id] = _Entry(contexts=[context])
                return Claim(True)
            self.repeats += 1
            if entry.answer is None:
                if joined is not None:
                    entry.waiters.append(joined)
                return Claim(False)
            return Claim(False, entry.answer)

    def finish(self, call_id: str, answer: Answer) -> None:
        """Record the answer of the call that ran; repeats that joined it get it too."""
        if not call_id:
            return
        with self._lock:
            entry = self._entries.get(call_id)
            if entry is None or entry.answer is not None:
                return
            entry.answer, entry.ended_at = answer, self._clock()
            entry.contexts.clear()
            waiters, entry.waiters = entry.waiters, []
            self._entries.move_to_end(call_id)
        for waiter in waiters:
            waiter(answer)

    def stop(self, call_id: str) -> bool:
        """
        Stop a call: cancel it if it runs, refuse it if it has not arrived yet.

        Returns True when a running call was cancelled.
        """
        if not call_id:
            return False
        with self._lock:
            self._forget_old()
            entry = self._entries.get(call_id)
            if entry is None:  # still on its way: answered "not run" when it arrives
                self._entries[call_id] = _Entry(
                    answer=(errors.CANCELLED, STOPPED_MESSAGE, errors.NOT_RUN),
                    ended_at=self._clock())
                return False
            contexts = list(entry.contexts) if entry.answer is None else []
        for context in contexts:
            context.cancel()
        return bool(contexts)

    def __len__(self) -> int:
        return len(self._entries)

    def _forget_old(self) -> None:
        """
        Drop ended entries older than the window, then the oldest ended beyond `max_ids`.

        Ended entries are kept in the order they ended (running ones sit among them), so the
        scan stops at the first ended entry that stays: cheap on every call.
        """
        now = self._clock()
        entries = self._entries
        excess = len(entries) - self.max_ids
        gone = []
        for call_id, entry in entries.items():
            if entry.answer is None:
                continue
            if excess <= 0 and now - entry.ended_at < self.window_s:
                break
            gone.append(call_id)
            excess -= 1
        for call_id in gone:
            del entries[call_id]
