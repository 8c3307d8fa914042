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
A diagnostic tool: returns its arguments, optionally after a delay or with a failure.

``echo`` exercises the whole path (parse, validate, service call, result) without hardware, so
it is what wiring checks and benchmarks call. ``delay_s`` simulates a slow executor (timeouts,
busy handling, cancel): while it waits it reports its progress and stops when its call is
cancelled (error ``cancelled``); ``fail`` simulates an executor error.
"""

import json
import math
import threading
import time
from typing import Any, ClassVar

from lerobot_tools_ros.errors import CANCELLED, ToolError
from lerobot_tools_ros.tools.base import CallContext, tool_name_from_schema, ToolParameter

__all__ = ['ECHO_SCHEMA', 'EchoTool', 'MAX_DELAY_S']

MAX_DELAY_S = 30.0
# How often a delay reports progress (and notices close()); a cancel ends it at once.
PROGRESS_INTERVAL_S = 0.1

ECHO_SCHEMA: dict[str, Any] = {
    'type': 'function',
    'function': {
        'name': 'echo',
        'description': 'Return the arguments unchanged (diagnostics: wiring checks, benchmarks).',
        'parameters': {
            'type': 'object',
            'properties': {
                'text': {
                    'type': 'string',
                    'description': 'Any text; returned as given.',
                },
                'delay_s': {
                    'type': 'number',
                    'minimum': 0,
                    'maximum': MAX_DELAY_S,
                    'description': 'Seconds to wait before answering (simulates a slow tool).',
                },
                'fail': {
                    'type': 'string',
                    'description': 'If given, the call fails with this message.',
                },
            },
            'required': [],
        },
    },
}


class EchoTool:
    """Echo the arguments as sorted-key JSON text."""

    PARAMETERS: ClassVar[dict[str, ToolParameter]] = {}

    def __init__(self, schema: dict, **params: Any) -> None:
        if params:
            raise TypeError(f'echo takes no parameters, got {sorted(params)}')
        self.schema = schema
        self.name = tool_name_from_schema(schema)
        self._closed = threading.Event()

    def call(self, arguments: dict, context: CallContext | None = None) -> str:
        """Wait ``delay_s`` (capped, cancellable), fail on ``fail``, else echo the arguments."""
        context = context or CallContext()
        delay = arguments.get('delay_s')
        if isinstance(delay, (int, float)) and not isinstance(delay, bool):
            if math.isfinite(delay) and delay > 0:
                self._wait(min(float(delay), MAX_DELAY_S), context)
        fail = arguments.get('fail')
        if isinstance(fail, str):
            raise RuntimeError(fail)
        return json.dumps(arguments, sort_keys=True)

    def _wait(self, delay: float, context: CallContext) -> None:
        """Sleep ``delay`` s, reporting progress; raise ``cancelled`` if the call is cancelled."""
        started = time.monotonic()
        while True:
            elapsed = time.monotonic() - started
            # A cancel or a shutdown that came during the delay ends it as cancelled, never as
            # a delay that ran its course, whichever of the two this thread notices first.
            if context.cancelled.is_set() or self._closed.is_set():
                reason = 'cancelled' if context.cancelled.is_set() else 'stopped (shutting down)'
                raise ToolError(CANCELLED, f'echo {reason} after {elapsed:.2f} s of a '
                                           f'{delay:g} s delay')
            if elapsed >= delay:
                break
            context.feedback('running', elapsed / delay, f'{delay - elapsed:.1f} s left')
            context.cancelled.wait(min(PROGRESS_INTERVAL_S, delay - elapsed))
        context.feedback('running', 1.0, 'done')

    def close(self) -> None:
        """Wake any call still sleeping so shutdown is not held up by a delay."""
        self._closed.set()
