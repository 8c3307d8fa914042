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
Catalog load time and memory for 10, 1,000 and 10,000 tools.

Part ``load`` (in-process, no ROS): each size is loaded in a fresh process (so RSS is that
catalog's alone): `ToolCatalog.load` of a dataset whose info.json declares N tools with realistic
argument schemas, then one validated call per tool. Baseline measured in the same run and
process: reading and decoding the same info.json (`json.loads`), the floor any loader pays.
Loading is linear when the time per tool stays flat. `reload` is a second load of the same file
in the same process (schemas already checked).

Part ``node`` (real processes over DDS): a dispatcher and a tool_server hosting echo start on a
small catalog (echo and the default tools); for each size the dispatcher's ~/reload_catalog
takes the small catalog plus N tools, then the small one again. While each reload runs, the
bench sends an echo call through ~/call every 100 ms and times its answer (a call waits while
the dispatch thread is blocked); baseline: the same calls for 5 s without a reload. From the
reload's answer: load+check time (off the dispatch thread), the swap's time on the dispatch
thread and the longest slice of tool parameter declarations (the longest single blocks there).
RSS of the dispatcher process before the reload, after it, and after reverting to the small
catalog.

    scripts/with_env.sh python bench/catalog_bench.py [--sizes 10 1000 10000] [--repeat 3]
        [--part load|node|all] [--call-period 0.1] [--without-jsonschema-rs]
"""

import argparse
import json
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
import time

from typing import Callable

from common import bench_domain, catalog_dir, Driver, percentile, Processes
from results import record


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


def _jsonschema_rs_importable() -> bool:
    """Tell whether the catalog's optional fast checker can be imported in this process."""
    try:
        import jsonschema_rs  # noqa: F401
    except ImportError:
        return False
    return True


def child(root: str, repeat: int, without_rs: bool) -> None:
    """Measure in this (fresh) process and print one JSON line."""
    if without_rs:
        # As where jsonschema-rs is not installed: the catalog imports it lazily (once, on
        # first use), and a None in sys.modules makes that import raise ImportError, so every
        # schema and argument check is jsonschema's own. Set before the package is imported.
        sys.modules['jsonschema_rs'] = None  # type: ignore[assignment]  # blocks the import
    from lerobot_tools_ros.catalog import ToolCatalog
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
    print(json.dumps({'tools': len(catalog), 'jsonschema_rs': _jsonschema_rs_importable(),
                      'floor_s': min(floor), 'load_s': first,
                      'reload_s': min(reload), 'validate_all_s': validate,
                      'rss_growth_mb': rss_growth}))


class Bench(Driver):
    """The bench's node: ~/call and ~/reload_catalog clients of the dispatcher."""

    def __init__(self) -> None:
        from lerobot_tools_interfaces.srv import CallTool
        from std_srvs.srv import Trigger
        super().__init__('catalog_bench')
        self.CallTool, self.Trigger = CallTool, Trigger
        self.call = self.node.create_client(CallTool, '/dispatcher/call')
        self.reload = self.node.create_client(Trigger, '/dispatcher/reload_catalog')
        self.failed = 0  # calls answered with an error (timeout: waited too long)
        from lerobot_tools_interfaces.msg import ToolResult
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.String = String
        self.text = self.node.create_publisher(String, '/policy/text', reliable)
        self.texts_answered: list[str] = []
        self.node.create_subscription(ToolResult, '/lerobot_tools/results',
                                      lambda msg: self.texts_answered.append(msg.content),
                                      reliable)

    def policy_text(self, marker: str) -> float:
        """Publish one policy text with an echo call; return the time to its result."""
        start = time.perf_counter()
        # Hermes: the marker form (<echo>...</echo>) is for tools with one required text.
        self.text.publish(self.String(data=f'<tool_call>{{"name": "echo", "arguments": '
                                           f'{{"text": "{marker}"}}}}</tool_call>'))
        if not self.spin_until(lambda: any(marker in c for c in self.texts_answered), 60.0):
            raise RuntimeError(f'no result for the policy text {marker!r}')
        return time.perf_counter() - start

    def echo(self) -> float:
        """Call echo once; return its round trip."""
        start = time.perf_counter()
        future = self.call.call_async(self.CallTool.Request(name='echo',
                                                            arguments='{"text": "x"}'))
        if not self.spin_until(future.done, 30.0) or not future.result().success:
            raise RuntimeError(f'echo failed: {future.result()}')
        return time.perf_counter() - start

    def calling(self, period: float, until: Callable[[], bool]) -> list[float]:
        """Send an echo call every `period` until `until()`; return their round trips."""
        sent: list = []  # (time sent, future)
        answered: dict[int, float] = {}  # index in sent -> round trip
        start = next_call = time.perf_counter()

        waiting: set[int] = set()

        def collect() -> None:
            now = time.perf_counter()
            for index in [index for index in waiting if sent[index][1].done()]:
                answered[index] = now - sent[index][0]
                waiting.discard(index)
        while not until():
            now = time.perf_counter()
            if now >= next_call:
                waiting.add(len(sent))
                sent.append((now, self.call.call_async(self.CallTool.Request(
                    name='echo', arguments='{"text": "during"}'))))
                next_call = now + period
            self.executor.spin_once(timeout_sec=max(0.0, next_call - now))
            collect()
            if time.perf_counter() - start > 600:
                raise RuntimeError('no end in 600 s')
        while len(answered) < len(sent):
            if time.perf_counter() - start > 660:
                raise RuntimeError('calls were not answered')
            self.executor.spin_once(timeout_sec=0.005)
            collect()
        self.failed += sum(not future.result().success for _, future in sent)
        return [answered[index] for index in range(len(sent))]

    def reload_while_calling(self, period: float) -> tuple[str, float, list[float]]:
        """Reload, calling echo every `period` until it answers; (message, seconds, RTTs)."""
        start = time.perf_counter()
        reloaded = self.reload.call_async(self.Trigger.Request())
        took: list[float] = []  # seconds to the reload's answer, noted when it is seen

        def answered() -> bool:
            if reloaded.done() and not took:
                took.append(time.perf_counter() - start)
            return bool(took)
        rtts = self.calling(period, answered)
        result = reloaded.result()
        if not result.success:
            raise RuntimeError(f'reload failed: {result.message}')
        return result.message, took[0], rtts


def _rss_of(pid: int) -> float:
    """Return a process's resident set in MB (VmRSS: now, not the peak)."""
    for line in pathlib.Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f'no VmRSS for {pid}')


def _figure(pattern: str, message: str) -> float | None:
    found = re.search(pattern, message)
    return float(found.group(1)) if found else None


def _ms(value: float | None, scale: float = 1.0) -> str:
    return '-' if value is None else f'{value * scale:.1f}'


def node_part(sizes: list[int], period: float) -> None:
    """Reload a running dispatcher to small+N tools and back; print one row per size."""
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    small = [ECHO_SCHEMA, *DEFAULT_TOOLS]
    with bench_domain(), Processes(__file__) as procs:
        workdir = catalog_dir('catalog_bench_', small)
        info = workdir / 'meta' / 'info.json'
        procs.node('tool_server', 'lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
                   '-p', f'dataset:={workdir}', '--log-level', 'warn')
        dispatcher = procs.node('dispatcher', 'lerobot_tools_ros.dispatcher.node',
                                '-p', f'dataset:={workdir}', '--log-level', 'warn')
        bench = Bench()
        if not bench.spin_until(lambda: bench.call.service_is_ready()
                                and bench.reload.service_is_ready(), 60.0):
            raise RuntimeError('the dispatcher did not come up')
        for _ in range(20):
            bench.echo()  # executor discovered, answers proven, caches warm
        if not bench.spin_until(lambda: bench.text.get_subscription_count() > 0, 30.0):
            raise RuntimeError('the dispatcher does not take policy text')
        text_idle = min(bench.policy_text(f'idle {i}') for i in range(5))
        # Baseline, same run: the same calls at the same rate while nothing is reloaded.
        idle_until = time.perf_counter() + 5.0
        idle = bench.calling(period, lambda: time.perf_counter() > idle_until)
        print(f'\nnode: an echo call via ~/call every {period * 1e3:.0f} ms; with no reload: '
              f'p50 {percentile(idle, 0.5) * 1e3:.1f} ms, max {max(idle) * 1e3:.1f} ms '
              f'({len(idle)} calls); a policy text with an echo call: {text_idle * 1e3:.1f} '
              'ms', flush=True)
        print(f'{"tools":>7} {"reload":>8} {"load+chk":>9} {"swap":>8} {"slice max":>9} '
              f'{"calls":>6} {"p50 call":>9} {"max call":>9} {"RSS before":>11} '
              f'{"after":>8} {"reverted":>9} {"revert":>8} {"failed":>6} {"1st text":>9}')
        for count in sizes:
            rss_before = _rss_of(dispatcher.pid)
            bench.failed = 0
            info.write_text(json.dumps({'tools': small + [tool_entry(i) for i in range(count)]}))
            message, took, rtts = bench.reload_while_calling(period)
            # The first policy text after the swap: it must not wait for the parser's plan of
            # the new catalog (built with the catalog, off the dispatch thread).
            first_text = bench.policy_text(f'after {count}')
            rss_after = _rss_of(dispatcher.pid)
            info.write_text(json.dumps({'tools': small}))
            revert_message, revert_took, revert_rtts = bench.reload_while_calling(period)
            rss_reverted = _rss_of(dispatcher.pid)
            print(f'{count:>7} {took:>7.2f}s '
                  f'{_ms(_figure(r"loaded and checked in ([0-9.]+) s", message), 1e3):>7}ms '
                  f'{_ms(_figure(r"swapped in ([0-9.]+) ms", message)):>6}ms '
                  f'{_ms(_figure(r"the longest ([0-9.]+) ms", message)):>7}ms '
                  f'{len(rtts):>6} {percentile(rtts, 0.5) * 1e3:>7.1f}ms '
                  f'{max(rtts) * 1e3:>7.1f}ms {rss_before:>9.0f}MB {rss_after:>6.0f}MB '
                  f'{rss_reverted:>7.0f}MB {revert_took:>7.2f}s {bench.failed:>6} '
                  f'{first_text * 1e3:>7.1f}ms', flush=True)
            swap = _ms(_figure(r'swapped in ([0-9.]+) ms', revert_message))
            longest = _ms(_figure(r'the longest ([0-9.]+) ms', revert_message))
            print(f'        revert: swap {swap} ms, slice max {longest} ms, calls '
                  f'{len(revert_rtts)}, p50 {percentile(revert_rtts, 0.5) * 1e3:.1f} ms, max '
                  f'{max(revert_rtts) * 1e3:.1f} ms', flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--sizes', type=int, nargs='+', default=[10, 1000, 10000])
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--part', choices=['load', 'node', 'all'], default='all')
    parser.add_argument('--call-period', type=float, default=0.1,
                        help='seconds between echo calls during a reload (keep it below what '
                             'the machine sustains: the baseline row shows it)')
    parser.add_argument('--without-jsonschema-rs', action='store_true',
                        help='check schemas with jsonschema only (as where jsonschema-rs is '
                             'not installed)')
    parser.add_argument('--child', default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.repeat, args.without_jsonschema_rs)
        return 0
    if args.part in ('load', 'all'):
        load_part(args)
    if args.part in ('node', 'all'):
        node_part(args.sizes, args.call_period)
    return 0


def load_part(args: argparse.Namespace) -> None:
    """Load each size in a fresh process; print one row per size and the linearity."""
    print(f'{"tools":>7} {"json floor":>11} {"first load":>11} {"/floor":>7} {"us/tool":>8} '
          f'{"reload":>9} {"validate/call":>13} {"RSS growth":>11}  checks')
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
            if args.without_jsonschema_rs and f['jsonschema_rs']:
                raise RuntimeError('--without-jsonschema-rs: jsonschema_rs was still importable')
            # What really checked the schemas (jsonschema alone also where jsonschema-rs is not
            # installed): the figures of the two differ by orders of magnitude.
            checks = 'jsonschema-rs' if f['jsonschema_rs'] else 'jsonschema only'
            us_per_tool = f['load_s'] / count * 1e6
            per_tool.append(us_per_tool)
            print(f'{count:>7} {f["floor_s"] * 1e3:>9.1f}ms {f["load_s"] * 1e3:>9.1f}ms '
                  f'{f["load_s"] / f["floor_s"]:>6.0f}x {us_per_tool:>8.0f} '
                  f'{f["reload_s"] * 1e3:>7.1f}ms {f["validate_all_s"] / count * 1e6:>11.1f}us '
                  f'{f["rss_growth_mb"]:>9.1f}MB  {checks}', flush=True)
            metric, label = f'load.{count}', f'catalog load of {count} tools'
            if not f['jsonschema_rs']:
                metric, label = f'load_jsonschema_only.{count}', f'{label} (jsonschema only)'
            record('catalog_bench', metric, f['load_s'] * 1e3, 'ms',
                   floor=f['floor_s'] * 1e3, floor_label='json.loads of the same info.json',
                   label=label)
    # Ten tools are too few to time well (fixed costs dominate): compare each size with the one
    # before it. 1.0 is linear; quadratic work would show about size ratio (10x) here.
    for (small, small_us), (large, large_us) in zip(zip(args.sizes, per_tool),
                                                    zip(args.sizes[1:], per_tool[1:])):
        print(f'linearity: time per tool at {large} tools is {large_us / small_us:.2f}x that at '
              f'{small} tools (1.0 = linear)')


if __name__ == '__main__':
    sys.exit(main())
