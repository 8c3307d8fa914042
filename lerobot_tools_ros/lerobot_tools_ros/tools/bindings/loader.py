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
Read a bindings file and check all of it before anything is hosted.

.. code-block:: yaml

    bindings:
      <catalog tool name>:
        kind: service | action | publish | read
        ...   # see the module of each kind

Every problem of every entry is collected (unknown type, unknown field, an ``$argument`` the
tool's catalog schema does not declare, a JSON type or range that cannot fill the field, a tool
the catalog does not have, unknown keys) and raised together as one ``BindingsError``: a
``tool_server`` with a bad bindings file does not start half-configured.
"""

import os
from typing import Any

from lerobot_tools_ros import limits
from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.tools.bindings import binding_kind, KINDS
from lerobot_tools_ros.tools.bindings.base import BindingProblems, BoundTool
from lerobot_tools_ros.untrusted import log_text
import yaml

__all__ = ['BindingsError', 'load_bindings', 'parse_bindings']

TOP_KEY = 'bindings'


class BindingsError(ConfigurationError):
    """A bindings file that cannot be used: ``problems`` lists each reason, ``str`` one line."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        listed = '; '.join(f'({index}) {log_text(problem, 400)}'
                           for index, problem in enumerate(problems, 1))
        super().__init__(f'bindings file {source}: {len(problems)} problem(s): {listed}')


# Problems listed before the check stops (a 200,000-entry file must not build 200,000).
MAX_PROBLEMS = 100


_SafeLoader: Any = limits.yaml_safe_loader()  # (a class chosen at run time: C or Python)


class _UniqueKeyLoader(_SafeLoader):
    """A safe loader that refuses duplicate keys (PyYAML silently keeps the last one)."""


def _mapping_without_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f'duplicate key {key!r} (first on line {seen[key] + 1})',
                key_node.start_mark)
        try:
            seen[key] = key_node.start_mark.line
        except TypeError:  # an unhashable key; construct_mapping reports it
            pass
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 _mapping_without_duplicates)


def load_bindings(path: str | os.PathLike, catalog: ToolCatalog) -> dict[str, BoundTool]:
    """
    Read ``path`` and return the checked bound tools by name, or raise ``BindingsError``.

    At most ``limits.MAX_BINDINGS_BYTES`` (1 MiB) are read; see ``parse_bindings`` for the
    other limits.
    """
    source = str(path)
    try:
        data = limits.read_limited(path, limits.MAX_BINDINGS_BYTES, 'the bindings file')
        text = data.decode('utf-8')
    except limits.TooLarge as exc:
        raise BindingsError(source, [str(exc).removeprefix(f'{source}: ')]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BindingsError(source, [f'cannot read: {getattr(exc, "strerror", None) or exc}'])
    return parse_bindings(text, catalog, source=source)


def parse_bindings(text: str, catalog: ToolCatalog, *,
                   source: str = '<memory>') -> dict[str, BoundTool]:
    """
    Check bindings given as YAML text (see ``load_bindings``).

    Bounded whatever the text holds: at most ``limits.MAX_BINDINGS_BYTES``, collections nested
    at most ``limits.MAX_YAML_DEPTH`` deep, at most ``limits.MAX_YAML_NODES`` nodes with aliases
    counted expanded, and the check stops after ``MAX_PROBLEMS`` problems.
    """
    size = limits.utf8_size(text, limits.MAX_BINDINGS_BYTES)
    if size > limits.MAX_BINDINGS_BYTES:
        raise BindingsError(source, [f'the bindings file is {size} bytes; at most '
                                     f'{limits.MAX_BINDINGS_BYTES} are read'])
    try:
        limits.check_yaml(text)  # depth, alias bombs, size: before anything composes it
        document = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise BindingsError(source, [f'not valid YAML: {" ".join(str(exc).split())}']) from None
    if document is None:
        document = {TOP_KEY: {}}
    if not isinstance(document, dict) or TOP_KEY not in document:
        raise BindingsError(source, [f'expected a mapping with the key {TOP_KEY!r} '
                                     '(bindings: {tool name: {kind: ..., ...}})'])
    problems = [f'{key}: unknown top-level key (expected only {TOP_KEY!r})'
                for key in document if key != TOP_KEY]
    entries = document[TOP_KEY] or {}
    if not isinstance(entries, dict):
        raise BindingsError(source, [*problems, f'{TOP_KEY}: must map tool names to entries'])
    tools: dict[str, BoundTool] = {}
    declared = ', '.join(catalog.names[:20]) + (
        f' and {len(catalog) - 20} more' if len(catalog) > 20 else '')
    for checked, (name, config) in enumerate(entries.items()):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f'checking stopped after {MAX_PROBLEMS} problems; '
                            f'{len(entries) - checked} of {len(entries)} entries not checked')
            break
        where = f'{TOP_KEY}.{name}'
        if name not in catalog:
            hint = catalog.suggest(name) if isinstance(name, str) else None
            problems.append(f"{where}: tool '{name}' is not in the catalog {catalog.source} "
                            f'(declared: {declared})'
                            + (f"; did you mean '{hint}'?" if hint else ''))
            continue
        if not isinstance(config, dict):
            problems.append(f'{where}: must be a mapping with at least kind and type')
            continue
        kind = config.get('kind')
        if kind not in KINDS:
            problems.append(f'{where}.kind: must be one of {", ".join(KINDS)}, got {kind!r}')
            continue
        try:
            tools[name] = binding_kind(kind)(catalog.schema(name), config, where)
        except BindingProblems as exc:
            problems.extend(exc.problems)
    if problems:
        raise BindingsError(source, problems)
    return tools
