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
``lerobot-tools-ros replay DATASET --episode N``: play an annotated episode on the robot.

The episode's `language_events` assistant calls go out as policy output at their frames'
timestamps through the real dispatcher and executors, its interjections on
`lerobot_tools/interjections`; the command prints one row per call (frame, time, call, result)
and exits 1 if any call failed or got no result. By default it starts the runtime in this
process, as `bringup` does (dispatcher, tool_server, speaker and the demo camera, with the
packaged parameters file and the dataset's own catalog; the tool_server leaves out, with a
line saying so, a tool of the parameters that the catalog does not declare); with
``--connect`` it replays into a runtime already running (a launch file, a robot).
"""

import argparse
import pathlib
import sys
import time

from lerobot_tools_ros.dataset.render import FORMATS

HELP = 'Replay an annotated episode of a LeRobot dataset through the dispatcher and executors.'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('dataset', nargs='?', default='',
                        help='dataset directory (v3 layout) or a repo id in the local cache '
                             "(default: the package's sample dataset)")
    parser.add_argument('--episode', type=int, default=0, metavar='N',
                        help='episode index (default 0)')
    parser.add_argument('--rate', type=float, default=1.0,
                        help='speed: 1.0 real time (default), 2.0 twice as fast')
    parser.add_argument('--format', default='auto', choices=FORMATS, dest='fmt',
                        help='model format of the replayed calls (default auto: the <say> '
                             'marker for tools that have one, Hermes <tool_call> otherwise)')
    parser.add_argument('--prose', action='store_true',
                        help='write the plan/subtask rows as prose before the calls')
    parser.add_argument('--connect', action='store_true',
                        help='replay into a runtime already running instead of starting one')
    parser.add_argument('--params', type=pathlib.Path, default=None, metavar='FILE',
                        help='parameters file of the runtime started here (default: the '
                             'package config/lerobot_tools.yaml)')
    parser.add_argument('--output-dir', type=pathlib.Path, default=None, metavar='DIR',
                        help='runtime started here: audio to DIR/audio, stills to '
                             'DIR/observations')
    parser.add_argument('--audit-log', type=pathlib.Path, default=None, metavar='FILE',
                        help='runtime started here: record calls, interjections and the '
                             'episode marker to FILE (for `dataset add-events`)')
    parser.add_argument('--tts-backend', default=None, choices=['auto', 'pocket_tts', 'espeak_ng'],
                        help="runtime started here: the say tool's backend")
    parser.add_argument('--no-camera', action='store_true',
                        help='runtime started here: do not start the demo camera')
    parser.add_argument('--namespace', default='', metavar='NS',
                        help="the runtime's namespace (started here or to connect to)")
    parser.add_argument('--result-timeout', type=float, default=60.0, metavar='S',
                        help='seconds to wait for the last results (default 60)')
    parser.add_argument('--log-level', default='info', choices=['debug', 'info', 'warn', 'error'])


def _runtime_args(args: argparse.Namespace, root: pathlib.Path) -> argparse.Namespace:
    """Return the bringup options that start the runtime here, with the dataset's tools."""
    return argparse.Namespace(
        dataset=str(root), tts_backend=args.tts_backend, audit_log=args.audit_log,
        bindings_file=None, demo=False, output_dir=args.output_dir)


def run(args: argparse.Namespace) -> int:
    """Start (or join) the runtime, replay, print the table; 1 if a call failed."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from lerobot_tools_ros.catalog import SAMPLE_DATASET
    from lerobot_tools_ros.commands import bringup
    from lerobot_tools_ros.dataset.episodes import dataset_root, DatasetError
    from lerobot_tools_ros.dataset.replay_node import format_table, Replay
    from lerobot_tools_ros.errors import EXIT_CONFIGURATION_ERROR
    from lerobot_tools_ros.nodes.runner import CONFIGURATION_ERRORS, spin_until, StopOnSignal

    if not args.rate > 0:
        print(f'error: --rate must be positive, got {args.rate}', file=sys.stderr)
        return 2
    try:
        root = dataset_root(args.dataset or SAMPLE_DATASET).resolve()
    except DatasetError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    params = args.params or bringup.default_params_file()
    if not args.connect and not params.is_file():
        print(f'error: parameters file {params} does not exist', file=sys.stderr)
        return 1
    namespace = bringup.checked_namespace(args.namespace)
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    stop = StopOnSignal()
    nodes: list = []
    executor = SingleThreadedExecutor()
    replay = None
    started, started_wall = time.monotonic(), time.time()
    output_dirs: list[pathlib.Path] = []
    try:
        replay_args = ['--ros-args', '--log-level', args.log_level,
                       '-p', f'dataset:={root}', '-p', f'episode:={args.episode}',
                       '-p', f'rate:={float(args.rate)}', '-p', f'format:={args.fmt}',
                       '-p', f'prose:={str(args.prose).lower()}',
                       '-p', f'result_timeout_s:={float(args.result_timeout)}']
        if not args.connect:  # the runtime starts with us: let its camera deliver frames
            replay_args += ['-p', 'start_delay_s:=1.0']
        if namespace:
            replay_args += ['-r', f'__ns:={namespace}']
        replay = Replay(cli_args=replay_args)  # a bad episode fails before anything starts
        nodes.append(replay)
        if not args.connect:
            _start_runtime(nodes, params, args, root, namespace, bringup)
            output_dirs = bringup.output_directories(args, nodes[1:])
        stop.wake_through(replay)
        replay.create_timer(0.1, lambda: stop.event.set() if replay.done else None)
        for node in nodes:
            executor.add_node(node)
        where = 'the runtime already running' if args.connect else 'the runtime started here'
        print(f'[replay] episode {args.episode} of {root}: {len(replay.plan.steps)} step(s), '
              f'{replay.plan.calls} call(s), {replay.plan.duration_s / args.rate:.1f} s, '
              f'through {where}', flush=True)
        spin_until(executor, stop.event, 'replay')
        bringup.settle(executor, 0.3)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except CONFIGURATION_ERRORS as exc:
        print(f'[replay] error: {" ".join(str(exc).split())}', file=sys.stderr)
        return EXIT_CONFIGURATION_ERROR
    finally:
        for node in reversed(nodes):
            executor.remove_node(node)
            node.destroy_node()
        rclpy.try_shutdown()
    status = _report(replay, time.monotonic() - started, format_table)
    files = bringup.files_written_since(output_dirs, started_wall - 1)
    if files:
        print(f'[replay] {len(files)} file(s) written under '
              f'{", ".join(map(str, output_dirs))}:')
        for path in files:
            print(f'  {path}')
    return status


def _start_runtime(nodes: list, params: pathlib.Path, args: argparse.Namespace,
                   root: pathlib.Path, namespace: str, bringup) -> None:
    """Append dispatcher, tool_server, speaker (and the demo camera) to `nodes`."""
    from lerobot_tools_ros.dispatcher.node import Dispatcher
    from lerobot_tools_ros.speaker.node import Speaker
    from lerobot_tools_ros.tool_server.node import ToolServer

    overrides = bringup.node_overrides(_runtime_args(args, root))
    if args.audit_log is not None:
        overrides['dispatcher']['record_events'] = 'true'

    def cli_args(node: str) -> list[str]:
        return bringup.node_arguments(params, args.log_level, overrides.get(node, {}), namespace)

    nodes.append(Dispatcher(cli_args=cli_args('dispatcher')))
    nodes.append(ToolServer(cli_args=cli_args('tool_server')))
    nodes.append(Speaker(cli_args=cli_args('speaker')))
    if not args.no_camera:
        from lerobot_tools_ros.demo.camera import DemoCamera
        nodes.append(DemoCamera(cli_args=cli_args('demo_camera')))


def _report(replay, elapsed: float, format_table) -> int:
    if replay is None:
        return 1
    print(format_table(replay.book.rows()), flush=True)
    failed = replay.failed
    if not replay.done:
        print(f'[replay] interrupted after {elapsed:.1f} s: {replay.book.received} of '
              f'{replay.plan.calls} result(s)', file=sys.stderr)
        return 1
    print(f'[replay] {replay.book.received} result(s) for {replay.plan.calls} call(s); '
          f'{len(failed)} failed', flush=True)
    return 1 if failed else 0
