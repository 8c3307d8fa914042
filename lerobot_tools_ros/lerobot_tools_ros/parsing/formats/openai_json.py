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
OpenAI / LeRobot JSON, and bare JSON call objects anywhere in the text.

Shapes: ``{"tool_calls": [...]}``, an assistant message dict (its ``content`` string stays as
prose), one ``{"type": "function", "function": {...}}`` or ``{"name", "arguments"}`` object, or
a list of them. ``arguments`` may be a dict, a JSON string, or a double-encoded JSON string.
A bare ``{"name", "parameters"}`` object is Llama 3.x JSON and reported as ``llama_json``
(several may be ``;``-separated). Single quotes and Python literals are read with ``ast``.

Only ``{`` followed by a quote and ``[`` followed by ``{`` start a candidate. A complete JSON
value that is not call-shaped is prose and is not searched further.

Reasoning safety: a JSON object is ordinary text that reasoning may quote, so it never ends a
reasoning span.
"""

from ..readers.json_calls import match_json
from ..readers.partial import json_value_call_prefix
from ..registry import format_spec

FORMAT = 'openai_json'


def partial_json(text: str, view):
    """
    Read a JSON call value still arriving: ``(name, value reader)`` or None.

    Only a value that is certainly call-shaped is reported (``{"name", "arguments"`` once the
    arguments begin, ``"function": {"name"``, ``"tool_calls"``), and only its first call: a
    JSON object in prose, or a Llama ``parameters`` object, is never announced.
    """
    if text[:1] not in ('{', '['):
        return None
    return json_value_call_prefix(text, 0, lambda name: view.streamable.get(name, ''), False)


FAMILY = format_spec(FORMAT, [('{', match_json), ('[', match_json)], priority=60,
                     partial=partial_json,
                     description='{"tool_calls": [...]}, {"name": ..., "arguments": ...}, lists')
