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
Write tool calls as model output text, in one of the formats the dispatcher reads.

One function per format behind `RENDERERS`; each takes the calls and the catalog and returns
the text, or raises `RenderError` for a call it cannot express. `auto` is the format a
LeRobot policy trained on the dataset writes: the `<say>` marker for every tool that has one
(one required string parameter, and no other argument given), a Hermes `<tool_call>` for the
rest.
"""

import json
from typing import Any, Callable

FORMATS = ('auto', 'lerobot_marker', 'hermes', 'openai_json', 'pythonic')


class RenderError(ValueError):
    """A call the chosen format cannot express."""


def marker_argument(catalog: Any, name: str) -> str | None:
    """Return the one required string parameter making `<name>...</name>` a call, or None."""
    if catalog is None:
        return 'text' if name == 'say' else None
    try:
        schema = catalog.parameters(name)
    except (KeyError, LookupError, ValueError):
        return None
    required = schema.get('required')
    if not isinstance(required, list) or len(required) != 1:
        return None
    prop = (schema.get('properties') or {}).get(required[0])
    return required[0] if isinstance(prop, dict) and prop.get('type') == 'string' else None


def _marker(name: str, arguments: dict, catalog: Any) -> str | None:
    argument = marker_argument(catalog, name)
    if argument is None or set(arguments) != {argument}:
        return None
    value = arguments[argument]
    if not isinstance(value, str) or f'</{name}>' in value:
        return None
    return f'<{name}>{value}</{name}>'


def _hermes(name: str, arguments: dict) -> str:
    body = json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)
    return f'<tool_call>{body}</tool_call>'


def render_auto(calls: list[tuple[str, dict]], catalog: Any) -> str:
    """Write the `<say>`-style marker where the tool has one, a Hermes tag otherwise."""
    return '\n'.join(_marker(name, args, catalog) or _hermes(name, args) for name, args in calls)


def render_marker(calls: list[tuple[str, dict]], catalog: Any) -> str:
    """Write markers only (LeRobot's `<say>`): every call must fit `<name>value</name>`."""
    parts = []
    for name, arguments in calls:
        text = _marker(name, arguments, catalog)
        if text is None:
            raise RenderError(
                f'{name}({json.dumps(arguments, ensure_ascii=False)}) cannot be written as a '
                f'<{name}> marker (a marker carries exactly one required string parameter); '
                'use --format auto or hermes')
        parts.append(text)
    return '\n'.join(parts)


def render_hermes(calls: list[tuple[str, dict]], catalog: Any) -> str:
    """Hermes / Qwen2.5: one `<tool_call>{...}</tool_call>` per call."""
    return '\n'.join(_hermes(name, arguments) for name, arguments in calls)


def render_openai_json(calls: list[tuple[str, dict]], catalog: Any) -> str:
    """`{"tool_calls": [{"type": "function", "function": {...}}]}` (arguments as objects)."""
    return json.dumps({'tool_calls': [
        {'type': 'function', 'function': {'name': name, 'arguments': arguments}}
        for name, arguments in calls]}, ensure_ascii=False)


def _python_literal(value: Any) -> str:
    if isinstance(value, dict):
        return '{' + ', '.join(f'{_python_literal(k)}: {_python_literal(v)}'
                               for k, v in value.items()) + '}'
    if isinstance(value, list):
        return '[' + ', '.join(map(_python_literal, value)) + ']'
    return repr(value)  # str, int, float, bool, None: Python literals the parser reads


def render_pythonic(calls: list[tuple[str, dict]], catalog: Any) -> str:
    """`[say(text="..."), record_observation(label="...")]`."""
    rendered = []
    for name, arguments in calls:
        bad = [key for key in arguments if not key.isidentifier()]
        if bad or not all(part.isidentifier() for part in name.split('.')):
            raise RenderError(f'{name}: a pythonic call needs identifier names (got '
                              f'{", ".join(map(repr, bad or [name]))}); use --format hermes')
        rendered.append(f'{name}(' + ', '.join(f'{key}={_python_literal(value)}'
                                               for key, value in arguments.items()) + ')')
    return '[' + ', '.join(rendered) + ']'


RENDERERS: dict[str, Callable[[list[tuple[str, dict]], Any], str]] = {
    'auto': render_auto,
    'lerobot_marker': render_marker,
    'hermes': render_hermes,
    'openai_json': render_openai_json,
    'pythonic': render_pythonic,
}


def render(calls: list[tuple[str, dict]], catalog: Any, fmt: str = 'auto') -> str:
    """Write `calls` as text in `fmt` (one of FORMATS)."""
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        raise RenderError(f'unknown format {fmt!r}; choose one of {", ".join(FORMATS)}')
    return renderer(calls, catalog) if calls else ''
