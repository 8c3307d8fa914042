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
Catalog load time and memory for 10, 1,000 and 10,000 tools (issue 17 item 10, catalog side).

Each size is loaded in a fresh process (so RSS is that catalog's alone): `ToolCatalog.load` of a
dataset whose info.json declares N tools with realistic argument schemas, then one validated call
per tool. Baseline measured in the same run and process: reading and decoding the same info.json
(`json.loads`), the floor any loader pays. Loading is linear when the time per tool stays flat.
`reload` is a second load of the same file in the same process (schemas already checked).

    scripts/with_env.sh python bench/catalog_bench.py [--sizes 10 1000 10000] [--repeat 3]
        [--without-jsonschema-rs]
"""

import argparse
import json
import pathlib
import resource
import subprocess
import sys
import tempfile
import time


def tool_entry(index: int) -> dict:
    """
    One tool with the shape real catalogs have: a few typed, bounded, described arguments.

    Every schema differs (bounds and descriptions carry the index), as in a real catalog, so
    no tool's check is answered by another's.
    """
    return {'type': 'function', 'function': {
        'name': f'tool_{index}',
        'description': f'Tool number {index}: moves something somewhere with some care.',
        'parameters': {
            'type': 'object',
            'properties': {
                'target': {'type': 'string', 'description': f'what to act on ({index})',
                           'maxLength': 64 + index},
                'speed': {'type': 'number', 'minimum': 0, 'maximum': 1},
                'mode': {'type': 'string', 'enum': ['fast', 'careful', 'test']},
                'offset': {'type': 'array', 'items': {'type': 'number'}, 'maxItems': 3},
            },
            'required': ['target'],
            'additionalProperties': False,
        }}}


def write_dataset(root: pathlib.Path, count: int) -> pathlib.Path:
    (root / 'meta').mkdir(parents=True, exist_ok=True)
    info = {'codebase_version': 'v3.0', 'fps': 30, 'features': {},
            'tools': [tool_entry(i) for i in range(count)]}
    path = root / 'meta' / 'info.json'
    path.write_text(json.dumps(info))
    return path


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(root: str, repeat: int, without_rs: bool) -> None:
    """Measure in this (fresh) process and print one JSON line."""
    import lerobot_tools_ros.catalog as catalog_module
    from lerobot_tools_ros.catalog import ToolCatalog
    if without_rs:
        catalog_module._jsonschema_rs = lambda: None  # jsonschema's own check only
    path = pathlib.Path(root) / 'meta' / 'info.json'
    ToolCatalog.from_tools(None)  # import-time and first-use costs are not the catalog's
    json.loads(path.read_bytes())  # warm the page cache and the json module
    floor = []
    for _ in range(repeat):
        start = time.perf_counter()
        json.loads(path.read_bytes())
        floor.append(time.perf_counter() - start)
    rss_before = _rss_mb()
    start = time.perf_counter()
    catalog = ToolCatalog.load(root)
    first = time.perf_counter() - start
    rss_growth = _rss_mb() - rss_before
    reload = []
    for _ in range(repeat):
        start = time.perf_counter()
        ToolCatalog.load(root)  # schemas already checked: what ~/reload_catalog pays unchanged
        reload.append(time.perf_counter() - start)
    start = time.perf_counter()
    for name in catalog.names:
        catalog.validate(name, {'target': 'cup', 'speed': 0.5})
    validate = time.perf_counter() - start
    print(json.dumps({'tools': len(catalog), 'floor_s': min(floor), 'load_s': first,
                      'reload_s': min(reload), 'validate_all_s': validate,
                      'rss_growth_mb': rss_growth}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--sizes', type=int, nargs='+', default=[10, 1000, 10000])
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--without-jsonschema-rs', action='store_true',
                        help='check schemas with jsonschema only (as where jsonschema-rs is '
                             'not installed)')
    parser.add_argument('--child', default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.repeat, args.without_jsonschema_rs)
        return 0
    print(f'{"tools":>7} {"json floor":>11} {"first load":>11} {"/floor":>7} {"us/tool":>8} '
          f'{"reload":>9} {"validate/call":>13} {"RSS growth":>11}')
    per_tool = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.sizes:
            root = pathlib.Path(tmp) / str(count)
            write_dataset(root, count)
            command = [sys.executable, __file__, '--child', str(root),
                       '--repeat', str(args.repeat)]
            if args.without_jsonschema_rs:
                command.append('--without-jsonschema-rs')
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            f = json.loads(out.strip().splitlines()[-1])
            assert f['tools'] == count, f
            us_per_tool = f['load_s'] / count * 1e6
            per_tool.append(us_per_tool)
            print(f'{count:>7} {f["floor_s"] * 1e3:>9.1f}ms {f["load_s"] * 1e3:>9.1f}ms '
                  f'{f["load_s"] / f["floor_s"]:>6.0f}x {us_per_tool:>8.0f} '
                  f'{f["reload_s"] * 1e3:>7.1f}ms {f["validate_all_s"] / count * 1e6:>11.1f}us '
                  f'{f["rss_growth_mb"]:>9.1f}MB', flush=True)
    # Ten tools are too few to time well (fixed costs dominate): compare each size with the one
    # before it. 1.0 is linear; quadratic work would show about size ratio (10x) here.
    for (small, small_us), (large, large_us) in zip(zip(args.sizes, per_tool),
                                                    zip(args.sizes[1:], per_tool[1:])):
        print(f'linearity: time per tool at {large} tools is {large_us / small_us:.2f}x that at '
              f'{small} tools (1.0 = linear)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
