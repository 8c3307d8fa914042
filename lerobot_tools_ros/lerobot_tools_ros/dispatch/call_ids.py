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
Call ids: the ones the dispatcher makes, and whether a caller's own id may name its call.

A result names one call, so an id is never used twice while the dispatcher remembers it: not
one in use, not a recent one, not one in the dispatcher's own form (which a later call it
makes could take).
"""

from collections import OrderedDict
import itertools
from typing import Container

from .stream_speech import shown

MAX_CALL_ID_CHARS = 128
# Ids of finished calls a caller may not reuse, and generation ids of streams ended early whose
# later chunks are refused (`dispatch.streams`): at most this many of each remembered.
RECENT_IDS = 4096


class CallIds:
    """Make call and generation ids; remember finished ones; check a caller's own id."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._reserved = f'call_{prefix}'  # every call id made here starts so
        self._counter = itertools.count(1)
        self._finished: OrderedDict = OrderedDict()

    def new(self, kind: str) -> str:
        """Return a new id, `kind` first ('call_' for a call, '' for a generation)."""
        # Never derived from the policy's generation_id: two streams that reuse (or omit) an
        # id must not share call ids, or one call's result would replace the other's.
        return f'{kind}{self._prefix}{next(self._counter):06x}'

    def finished(self, call_id: str) -> None:
        """Remember the id of a call that has its result (it is not reusable for a while)."""
        finished = self._finished
        finished[call_id] = None
        if len(finished) > RECENT_IDS:
            finished.popitem(last=False)

    def problem(self, call_id: str, pending: Container[str]) -> str:
        """Return why a caller's own call id cannot name its call, or ''."""
        if len(call_id) > MAX_CALL_ID_CHARS:
            why = f'is longer than {MAX_CALL_ID_CHARS} characters'
        elif call_id.startswith(self._reserved):
            why = (f'starts with {self._reserved!r}, which is reserved for the ids the '
                   'dispatcher makes')
        elif call_id in pending:
            why = 'is in use by a pending call'
        elif call_id in self._finished:
            why = 'was used by a recent call'
        else:
            return ''
        return f'call_id {shown(call_id)} {why}; send a unique id or leave it empty'
