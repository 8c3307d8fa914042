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
The ``lerobot-tools-ros`` command: one subcommand per module in ``lerobot_tools_ros.commands``.

A subcommand module defines ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) ->
int``. Adding one is a new module plus one line in ``COMMANDS``. A subcommand whose module cannot
be imported (a missing optional dependency) still appears, and says why when it is run, so one
broken extra never takes the whole tool down.
"""

import argparse
import importlib
import sys
from typing import Sequence

# name -> module implementing it (keep alphabetical).
COMMANDS: dict[str, str] = {
    'approve': 'lerobot_tools_ros.commands.approve',
    'audit': 'lerobot_tools_ros.commands.audit',
    'bringup': 'lerobot_tools_ros.commands.bringup',
    'catalog': 'lerobot_tools_ros.commands.catalog',
    'dataset': 'lerobot_tools_ros.commands.dataset',
    'mcp': 'lerobot_tools_ros.commands.mcp',
    'params': 'lerobot_tools_ros.commands.params',
    'replay': 'lerobot_tools_ros.commands.replay',
}

PROG = 'lerobot-tools-ros'


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """
    Build the parser with every subcommand in ``COMMANDS`` (or only the one named ``only``).

    Importing a subcommand's module can cost seconds (its dependencies); running one command
    imports only its own (``lerobot-tools-ros mcp`` is spawned per session by some clients).
    """
    parser = argparse.ArgumentParser(
        prog=PROG, description='Run and inspect the tools LeRobot policies call.')
    subparsers = parser.add_subparsers(dest='command', metavar='COMMAND')
    subparsers.required = True
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            broken = subparsers.add_parser(
                name, help=f'(unavailable: {exc})', add_help=False)
            broken.add_argument('rest', nargs=argparse.REMAINDER)
            broken.set_defaults(_run=_unavailable(name, module_name, exc))
            continue
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(_run=module.run)
    return parser


def _unavailable(name: str, module_name: str, exc: ImportError):
    def run(_args: argparse.Namespace) -> int:
        print(f'{PROG} {name}: unavailable, importing {module_name} failed: '
              f'{type(exc).__name__}: {exc}', file=sys.stderr)
        return 2
    return run


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the subcommand, return its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == '__main__':
    sys.exit(main())
