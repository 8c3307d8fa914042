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
``lerobot-tools-ros catalog``: show, check, or extend a dataset's tool catalog.

Exit codes: 0 success; 1 the catalog (or the new entry) has problems; 2 a needed dependency is
missing or the request cannot be carried out as asked.
"""

import argparse
import contextlib
import importlib
import logging
import os
import sys
from typing import Any, Callable, Iterator

from lerobot_tools_ros.catalog import CatalogError, ToolCatalog
from lerobot_tools_ros.catalog.edit import add_tool_schema, local_info_path
from lerobot_tools_ros.commands import catalog_interface

HELP = 'Show the tools a dataset declares (meta/info.json["tools"]), check them, or add one.'

_DESCRIPTION_WIDTH = 60


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the ``catalog`` options."""
    parser.add_argument(
        'source', nargs='?', default=None, metavar='SOURCE',
        help='dataset root, path to info.json, or repo id user/name (default: the sample '
             'dataset shipped with this package)')
    parser.add_argument(
        '--check', action='store_true',
        help='list every problem and exit 1 if there is any')
    parser.add_argument(
        '--strict', action='store_true',
        help='treat a bad entry as an error instead of skipping it')
    parser.add_argument(
        '--add-from', metavar='MODULE:FUNCTION', default=None,
        help='append the schema of a typed, documented Python function to a local info.json '
             '(needs transformers for transformers.utils.get_json_schema)')
    catalog_interface.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand."""
    if catalog_interface.wants(args):
        return catalog_interface.run(args)
    if args.add_from:
        return _run_add_from(args)
    # This command lists the catalog's problems itself; the loader's log lines would repeat them.
    loader_log = logging.getLogger('lerobot_tools_ros.catalog')
    level = loader_log.level
    loader_log.setLevel(logging.ERROR)
    try:
        catalog = ToolCatalog.load(args.source, strict=args.strict)
    except CatalogError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    finally:
        loader_log.setLevel(level)
    if args.check:
        return _run_check(catalog)
    print(format_table(catalog))
    for problem in catalog.problems:
        print(f'warning: skipped {problem}', file=sys.stderr)
    return 0


def _run_check(catalog: ToolCatalog) -> int:
    if catalog.problems:
        print(f'{catalog.source}: {len(catalog.problems)} problem(s):')
        for problem in catalog.problems:
            print(f'  - {problem}')
        return 1
    origin = "LeRobot's DEFAULT_TOOLS (the dataset declares none)" if catalog.used_default \
        else 'declared by the dataset'
    print(f'{catalog.source}: OK, {len(catalog)} tool(s) {origin}: {", ".join(catalog.names)}')
    return 0


def _implementation(name: str) -> str:
    from lerobot_tools_ros.tools import TOOL_REGISTRY
    if name not in TOOL_REGISTRY:
        return 'none'
    origin = TOOL_REGISTRY.origin(name)
    return origin.split(' (')[0] if origin.startswith(('built-in', 'registered')) else 'plugin'


def format_table(catalog: ToolCatalog) -> str:
    """Render one row per tool: name, required args, description, source, default/declared."""
    kind = 'default' if catalog.used_default else 'declared'
    header = ('NAME', 'REQUIRED', 'DESCRIPTION', 'IMPLEMENTATION', 'SOURCE', 'KIND')
    rows = [header]
    for name in catalog.names:
        parameters = catalog.parameters(name)
        required = parameters.get('required') or []
        description = ' '.join(catalog.description(name).split())
        if len(description) > _DESCRIPTION_WIDTH:
            description = description[:_DESCRIPTION_WIDTH - 3] + '...'
        rows.append((name, ','.join(map(str, required)) or '-', description or '-',
                     _implementation(name), catalog.source, kind))
    if len(rows) == 1:
        rows.append(('(no tools)', '', '', '', catalog.source, kind))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    lines = ['  '.join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[-1]])
             for row in rows]
    return '\n'.join(line.rstrip() for line in lines)


# ------------------------------------------------------------------------------------ --add-from
def _load_schema_generator() -> Callable[[Callable], dict] | None:
    try:
        from transformers.utils import get_json_schema
    except ImportError:
        return None
    return get_json_schema


@contextlib.contextmanager
def _cwd_on_path() -> Iterator[None]:
    """Let MODULE name a module in the current directory, as ``python -m`` would."""
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def _import_function(spec: str) -> Callable:
    module_name, sep, attribute = spec.partition(':')
    if not sep or not module_name or not attribute:
        raise ValueError(f'--add-from expects MODULE:FUNCTION, got {spec!r}')
    with _cwd_on_path():
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f'cannot import module {module_name!r}: {exc}') from None
    for part in attribute.split('.'):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f'module {module_name!r} has no {attribute!r}') from None
    if not callable(obj):
        raise ValueError(f'{spec} is not a function')
    return obj


def _run_add_from(args: argparse.Namespace) -> int:
    generator = _load_schema_generator()
    if generator is None:
        print('error: --add-from builds the schema with transformers.utils.get_json_schema, and '
              'transformers is not installed here (pip install transformers); nothing was '
              'changed', file=sys.stderr)
        return 2
    try:
        path = local_info_path(args.source)
        function = _import_function(args.add_from)
    except ValueError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    try:
        schema = generator(function)
    except Exception as exc:  # noqa: B902 - transformers raises its own parsing exceptions
        print(f'error: cannot build a schema from {args.add_from}: {type(exc).__name__}: {exc} '
              '(the function needs type hints and a docstring with an Args: section)',
              file=sys.stderr)
        return 1
    try:
        backup = add_tool_schema(path, schema)
    except CatalogError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    name = schema['function']['name']
    print(f'added tool {name!r} to {path} (previous version: {backup})')
    return 0
