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
Call ids: the ones the dispatcher makes, and what a caller's own id names.

A result names one call, and a call acts at most once per id. A caller's id in the dispatcher's
own form (which a later call it makes could take) is refused. A request repeating the id of a
call that may have acted (its outcome `ran` or `unknown`), with the same tool and arguments, is
that call again: the core joins it while it runs and answers with its result once it ended
(`Earlier`), for the last `RECENT_IDS` such ids. The same id with another tool or arguments is
refused. A call that did not act (outcome `not_run`: refused, paused, never sent) is not
remembered: its id may try again.
"""

from collections import OrderedDict
from dataclasses import dataclass
import itertools
from typing import Container

from .stream_speech import shown
from ..catalog import decode_arguments_json

MAX_CALL_ID_CHARS = 128
# Ids of finished calls a caller may not reuse, and generation ids of streams ended early whose
# later chunks are refused (`dispatch.streams`): at most this many of each remembered.
RECENT_IDS = 4096


@dataclass(frozen=True, slots=True)
class Earlier:
    """The result of a caller's call that may have acted, kept to answer a repeat of its id."""

    name: str
    arguments: str  # the request's arguments text
    error_code: str
    error_message: str
    content: str
    outcome: str

    @property
    def success(self) -> bool:
        return not self.error_code


def same_request(name: str, arguments: str, earlier_name: str, earlier_arguments: str) -> bool:
    """Whether a request names the same tool with the same arguments (as JSON values)."""
    if name != earlier_name:
        return False
    if arguments == earlier_arguments:
        return True
    try:
        return decode_arguments_json(arguments) == decode_arguments_json(earlier_arguments)
    except Exception:  # noqa: B902 - text that does not decode is not the same request
        return False


class CallIds:
    """Make call and generation ids; remember finished ones; check a caller's own id."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._reserved = f'call_{prefix}'  # every call id made here starts so
        self._counter = itertools.count(1)
        self._finished: OrderedDict[str, Earlier] = OrderedDict()

    def new(self, kind: str) -> str:
        """Return a new id, `kind` first ('call_' for a call, '' for a generation)."""
        # Never derived from the policy's generation_id: two streams that reuse (or omit) an
        # id must not share call ids, or one call's result would replace the other's.
        return f'{kind}{self._prefix}{next(self._counter):06x}'

    def finished(self, call_id: str, earlier: Earlier | None) -> None:
        """Keep the result of a caller's call that may have acted; forget one that did not."""
        finished = self._finished
        if earlier is None:
            finished.pop(call_id, None)
            return
        finished[call_id] = earlier
        finished.move_to_end(call_id)
        if len(finished) > RECENT_IDS:
            finished.popitem(last=False)

    def earlier(self, call_id: str) -> Earlier | None:
        """Return the kept result of the call with this id, if one is kept."""
        return self._finished.get(call_id)

    def problem(self, call_id: str, pending: Container[str]) -> str:
        """Return why a caller's own call id cannot name a new call, or ''."""
        if len(call_id) > MAX_CALL_ID_CHARS:
            why = f'is longer than {MAX_CALL_ID_CHARS} characters'
        elif call_id.startswith(self._reserved):
            why = (f'starts with {self._reserved!r}, which is reserved for the ids the '
                   'dispatcher makes')
        elif call_id in pending:
            why = 'names a pending call of another tool or with other arguments'
        elif call_id in self._finished:
            why = 'names a recent call of another tool or with other arguments'
        else:
            return ''
        return (f'call_id {shown(call_id)} {why}; a repeat sends the same tool and arguments, '
                'a new call a new id (or none)')
