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
The sizes every untrusted input is held to, in one place, and the checks that need no recursion.

A request, a catalog or a bindings file can come from anywhere on the robot's network. Whatever
reads one first checks it against these limits, so no later step (``json.loads``, jsonschema,
``json.dumps``, ``copy.deepcopy``, a YAML composer: all recursive) ever sees a value that could
exhaust the stack, the memory or the dispatch thread's time. Every check here is iterative.

=========================  ==========  ========================================================
limit                      value       applies to
=========================  ==========  ========================================================
``MAX_ARGUMENT_BYTES``     64 KiB      a call's arguments as JSON text (``~/call``; the MCP
                                       server's ``max_argument_bytes`` default)
``MAX_ARGUMENT_DEPTH``     32          arrays/objects nested in a call's arguments
``MAX_TOOL_NAME_CHARS``    64          a tool name (the catalog's name pattern allows 64)
``MAX_INFO_JSON_BYTES``    16 MiB      ``meta/info.json`` (a 10,000-tool catalog is ~5 MB)
``MAX_SCHEMA_DEPTH``       64          arrays/objects nested in one tool's parameter schema
``MAX_INFO_JSON_DEPTH``    128         arrays/objects nested anywhere in ``info.json``
``MAX_BINDINGS_BYTES``     1 MiB       a tool_server bindings file (~5,000 bindings)
``MAX_YAML_DEPTH``         64          collections nested in a bindings file
``MAX_YAML_NODES``         100,000     YAML nodes of a bindings file, aliases counted expanded
=========================  ==========  ========================================================
"""

import itertools
import os
import pathlib
import re
from typing import Any, Iterable

__all__ = [
    'json_text_deeper_than', 'MAX_ARGUMENT_BYTES', 'MAX_ARGUMENT_DEPTH', 'MAX_BINDINGS_BYTES',
    'MAX_INFO_JSON_BYTES', 'MAX_INFO_JSON_DEPTH', 'MAX_SCHEMA_DEPTH', 'MAX_TOOL_NAME_CHARS',
    'MAX_YAML_DEPTH', 'MAX_YAML_NODES', 'read_limited', 'TooLarge', 'utf8_size',
    'value_deeper_than', 'check_yaml', 'yaml_safe_loader',
]

MAX_ARGUMENT_BYTES = 64 * 1024
# jsonschema spends ~4-10 Python frames per level of a value checked against a recursive
# schema: 32 levels keep validation far from Python's recursion limit (1000) on any thread.
MAX_ARGUMENT_DEPTH = 32
MAX_TOOL_NAME_CHARS = 64
MAX_INFO_JSON_BYTES = 16 * 1024 * 1024
MAX_INFO_JSON_DEPTH = 128
# jsonschema checks a schema against its meta-schema recursively (~10 frames per level).
MAX_SCHEMA_DEPTH = 64
# PyYAML's pure-Python composer (needed to count nodes) reads ~0.1-1 MB/s: 1 MiB keeps a
# tool_server's start, or `catalog --check`, within seconds.
MAX_BINDINGS_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 64
MAX_YAML_NODES = 100_000

# One JSON string (escapes included), or one bracket: the only things that change the depth.
_JSON_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
_DEPTH_STEP = {'[': 1, '{': 1, ']': -1, '}': -1}


class TooLarge(ValueError):
    """A file longer than its limit; the message names the file, the limit and the setting."""


def utf8_size(text: str, limit: int) -> int:
    """
    Return the UTF-8 size of ``text`` in bytes, or any number above ``limit`` once it is above.

    ``len`` answers without encoding when the text is surely under or over the limit (one
    character is 1 to 4 bytes): an 11 MB request is refused without being copied.
    """
    if len(text) > limit:
        return len(text)
    if len(text) * 4 <= limit:
        return len(text)  # small enough whatever it holds (exact only for ASCII)
    return len(text.encode('utf-8', 'surrogatepass'))


def json_text_deeper_than(text: str, limit: int) -> bool:
    """
    Tell whether brackets nest more than ``limit`` levels deep in JSON ``text`` (outside strings).

    Checked before ``json.loads``, whose C decoder recurses per level and raises
    ``RecursionError`` at a depth that depends on the caller's stack. Linear and without
    recursion: a regex finds strings and brackets, and the depth is a running sum.
    """
    if text.count('[') + text.count('{') <= limit:
        return False
    steps = (_DEPTH_STEP.get(token, 0) for token in _JSON_STRING_OR_BRACKET.findall(text))
    return any(depth > limit for depth in itertools.accumulate(steps))


def value_deeper_than(value: object, limit: int) -> bool:
    """Tell whether lists, tuples and dicts nest more than ``limit`` levels deep in ``value``."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children
                       if isinstance(child, (dict, list, tuple)))
    return False


def read_limited(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """
    Read at most ``limit`` bytes of ``path``; raise ``TooLarge`` when it holds more.

    Works for files that report no size (a named pipe, ``/dev/zero``, ``/proc`` files): at most
    ``limit + 1`` bytes are ever read. ``OSError`` passes through.
    """
    with open(pathlib.Path(path).expanduser(), 'rb') as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f'{path}: {what} is larger than {_size(limit)} (the limit); a file this '
                       'large is not read')
    return data


def _size(count: int) -> str:
    for unit, scale in (('MiB', 1 << 20), ('KiB', 1 << 10)):
        if count >= scale and count % scale == 0:
            return f'{count // scale} {unit}'
    return f'{count} bytes'


def yaml_safe_loader() -> type:
    """Return LibYAML's ``CSafeLoader`` where PyYAML has it (~10x faster), else ``SafeLoader``."""
    import yaml
    return getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def check_yaml(text: str) -> None:
    """
    Refuse YAML that no configuration file needs, before anything composes it.

    - collections nested more than ``MAX_YAML_DEPTH`` deep (PyYAML's composer recurses: 5,000
      levels end in ``RecursionError``);
    - more than ``MAX_YAML_NODES`` nodes, counting each alias as the whole node it repeats: a
      1 KB "billion laughs" file (aliases of aliases) would hand every later step a structure
      that is exponentially large when walked;
    - an alias inside the node it names (a structure that contains itself).

    One pass over the parser's events, without recursion, stopping at the first excess.
    Raises ``yaml.YAMLError`` (a ``ComposerError`` pointing at the place in the file for the
    limits; a parse error as PyYAML reports it).
    """
    import yaml

    def refuse(message: str, event: Any) -> None:
        raise yaml.composer.ComposerError(None, None, message, event.start_mark)

    nodes = 0
    open_collections: list[tuple[str | None, int]] = []  # (anchor, nodes before it)
    open_anchors: set[str] = set()
    sizes: dict[str, int] = {}  # anchor -> nodes it expands to
    for event in yaml.parse(text, Loader=yaml_safe_loader()):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_collections) >= MAX_YAML_DEPTH:
                refuse(f'collections nested more than {MAX_YAML_DEPTH} levels deep (the limit)',
                       event)
            open_collections.append((event.anchor, nodes))
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            nodes += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, before = open_collections.pop()
            if anchor is not None:
                sizes[anchor] = nodes - before
                open_anchors.discard(anchor)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                refuse(f'the alias *{event.anchor} is inside the node it names (a structure '
                       'that contains itself)', event)
            nodes += sizes.get(event.anchor, 1)
        if nodes > MAX_YAML_NODES:
            refuse(f'more than {MAX_YAML_NODES} YAML nodes, aliases counted expanded (the '
                   'limit)', event)
