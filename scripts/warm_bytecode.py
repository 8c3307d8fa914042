#!/usr/bin/env python3
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
Write the bytecode of what the nodes and the tests import, once (scripts/bootstrap.sh).

Every node process of a run or of the suite would otherwise compile the same modules again, and
several starting at once compile them side by side. Importing what runs writes bytecode for
exactly that: compiling the whole venv (14,000 files, most of them transformers, sympy and scipy,
which come with pocket-tts and are never imported) took four times the CPU.

    warm_bytecode.py libraries   # third-party modules (before the package is built)
    warm_bytecode.py package     # every module of lerobot_tools_ros (in the built workspace)

Run it with bytecode writing on (PYTHONDONTWRITEBYTECODE unset). A module that fails to import
is skipped: it is compiled when something first imports it.
"""

import importlib
import importlib.util
import pkgutil
import sys
import warnings

# Imported by every node, or late (the MCP SDK once a server starts, torch once pocket-tts
# speaks), or by each test worker.
LIBRARIES = (
    'rclpy', 'rclpy.action', 'numpy', 'yaml', 'jsonschema', 'pyarrow.parquet',
    'mcp.server.lowlevel', 'mcp.server.stdio', 'mcp.server.streamable_http_manager',
    'mcp.client.session', 'mcp.client.stdio', 'mcp.client.streamable_http', 'uvicorn',
    'pytest', 'xdist', 'hypothesis', 'pocket_tts')


def _modules(which: str) -> list[str]:
    if which == 'libraries':
        return [name for name in LIBRARIES
                if importlib.util.find_spec(name.split('.')[0]) is not None]
    import lerobot_tools_ros
    return ['lerobot_tools_ros'] + [
        info.name for info in pkgutil.walk_packages(lerobot_tools_ros.__path__,
                                                    'lerobot_tools_ros.')]


def main(argv: list[str]) -> int:
    """Import the chosen modules; return 0 (2 for a usage error)."""
    if len(argv) != 1 or argv[0] not in ('libraries', 'package'):
        print(__doc__.strip().split('\n\n')[2], file=sys.stderr)
        return 2
    if sys.dont_write_bytecode:
        print('warm_bytecode: bytecode writing is off (PYTHONDONTWRITEBYTECODE): nothing to do',
              file=sys.stderr)
        return 0
    skipped = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for name in _modules(argv[0]):
            try:
                importlib.import_module(name)
            except Exception as exc:  # noqa: B902 - a cache warm-up never fails the bootstrap
                skipped.append(f'{name} ({type(exc).__name__})')
    if skipped:
        print(f'warm_bytecode: not imported (compiled on first use): {", ".join(skipped)}',
              file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
