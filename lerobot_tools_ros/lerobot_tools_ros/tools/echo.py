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
busy handling); ``fail`` simulates an executor error.
"""

import json
import math
import threading
from typing import Any, ClassVar

from lerobot_tools_ros.tools.base import tool_name_from_schema, ToolParameter

__all__ = ['ECHO_SCHEMA', 'EchoTool', 'MAX_DELAY_S']

MAX_DELAY_S = 30.0

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

    def call(self, arguments: dict) -> str:
        """Sleep ``delay_s`` (capped, cut short by ``close``), fail on ``fail``, else echo."""
        delay = arguments.get('delay_s')
        if isinstance(delay, (int, float)) and not isinstance(delay, bool):
            if math.isfinite(delay) and delay > 0:
                self._closed.wait(min(float(delay), MAX_DELAY_S))
        fail = arguments.get('fail')
        if isinstance(fail, str):
            raise RuntimeError(fail)
        return json.dumps(arguments, sort_keys=True)

    def close(self) -> None:
        """Wake any call still sleeping so shutdown is not held up by a delay."""
        self._closed.set()
