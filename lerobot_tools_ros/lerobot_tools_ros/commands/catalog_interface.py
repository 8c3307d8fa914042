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
``catalog --from-interface TOOL_NAME pkg/srv/Type`` (a tool from a ROS type), ``--check-bindings``.

Prints the catalog entry (JSON, for ``meta/info.json["tools"]``) and the binding entry (YAML,
for the ``bindings_file``), or with ``--add-to DATASET`` adds the entry to the dataset's
``info.json`` (backup kept) and prints the binding entry. The generator is
``lerobot_tools_ros.tools.bindings.schema``. ``--check-bindings FILE`` checks a bindings file
offline, exactly as ``tool_server`` does at startup.
"""

import argparse
import json
import sys

from lerobot_tools_ros.catalog import CatalogError
import yaml

__all__ = ['add_arguments', 'run', 'wants']


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the ``--from-interface`` options of ``catalog``."""
    parser.add_argument(
        '--from-interface', nargs=2, metavar=('TOOL_NAME', 'TYPE'), default=None,
        help='generate the schema of tool TOOL_NAME from a ROS interface type '
             '(pkg/srv/Type, pkg/action/Type or pkg/msg/Type) and print it with its binding '
             'entry')
    parser.add_argument(
        '--kind', choices=('service', 'action', 'publish', 'read'), default=None,
        help='with --from-interface: binding kind (default: from the type; msg types publish)')
    parser.add_argument(
        '--ros-name', default=None, metavar='NAME',
        help='with --from-interface: the service, action or topic (default: /TOOL_NAME)')
    parser.add_argument(
        '--add-to', default=None, metavar='DATASET',
        help='with --from-interface: add the schema to this local dataset root or info.json')
    parser.add_argument(
        '--check-bindings', default=None, metavar='FILE',
        help="check a bindings file against SOURCE's catalog and the installed interface "
             'types, as tool_server does at startup; list every problem, exit 1 if any')


def wants(args: argparse.Namespace) -> bool:
    """Tell whether the command line asks for something this module does."""
    return bool(getattr(args, 'from_interface', None) or getattr(args, 'check_bindings', None))


def _check_bindings(args: argparse.Namespace) -> int:
    from lerobot_tools_ros.catalog import ToolCatalog
    from lerobot_tools_ros.tools.bindings.loader import BindingsError, load_bindings
    try:
        catalog = ToolCatalog.load(args.source)
        tools = load_bindings(args.check_bindings, catalog)
    except BindingsError as exc:
        print(f'{exc.source}: {len(exc.problems)} problem(s):')
        for problem in exc.problems:
            print(f'  - {problem}')
        return 1
    except CatalogError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    print(f'{args.check_bindings}: OK, {len(tools)} binding(s) for the catalog {catalog.source}:')
    for name, tool in tools.items():
        print(f'  {name}: {tool.describe()}')
        for warning in tool.warnings():
            print(f'    warning: {warning}')
    return 0


def run(args: argparse.Namespace) -> int:
    """Generate, then print or add; exit 1 for a bad type or catalog, 2 for a bad request."""
    if getattr(args, 'check_bindings', None):
        return _check_bindings(args)
    from lerobot_tools_ros.catalog.edit import add_tool_schema, local_info_path
    from lerobot_tools_ros.tools.bindings.interfaces import InterfaceError
    from lerobot_tools_ros.tools.bindings.schema import interface_tool
    tool_name, type_name = args.from_interface
    warnings: list[str] = []
    try:
        schema, binding = interface_tool(tool_name, type_name, kind=args.kind,
                                         ros_name=args.ros_name, warnings=warnings)
    except (InterfaceError, ValueError) as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    for warning in warnings:
        print(f'warning: {warning}', file=sys.stderr)
    entry = yaml.safe_dump({'bindings': {tool_name: binding}}, sort_keys=False,
                           default_flow_style=False)
    if args.add_to:
        try:
            path = local_info_path(args.add_to)
            backup = add_tool_schema(path, schema)
        except ValueError as exc:  # CatalogError (the file's problem) is a ValueError too
            print(f'error: {exc}', file=sys.stderr)
            return 1 if isinstance(exc, CatalogError) else 2
        print(f'# added tool {tool_name!r} to {path} (previous version: {backup})')
    else:
        print('# catalog entry (append to meta/info.json "tools"):')
        print(json.dumps(schema, indent=2, ensure_ascii=False))
    print('# binding entry (bindings_file of tool_server):')
    print(entry, end='')
    return 0
