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
``lerobot-tools-ros bringup``: the launch file's nodes in one process, with a live call table.

For machines without ``ros2 launch`` (or for a quick look): the same nodes
(dispatcher, tool_server, speaker; with ``--demo`` also demo_camera, demo_gripper and
scripted_policy, with the demo's bindings file) and the
same parameters file as ``lerobot_tools.launch.py``, on one executor. Every result is printed
as a table row as it happens; at the end the files written are listed.
"""

import argparse
import os
import pathlib
import sys
import threading
import time
from typing import Any

from lerobot_tools_ros.untrusted import log_text

HELP = 'Start the runtime (and with --demo a camera and a scripted policy) in one process.'

_EXTENSIONS = ('.wav', '.png', '.jpg')


def default_params_file() -> pathlib.Path:
    """Return config/lerobot_tools.yaml from the installed share dir, else the source tree."""
    try:
        from ament_index_python.packages import get_package_share_directory
        share = pathlib.Path(get_package_share_directory('lerobot_tools_ros'))
        if (share / 'config' / 'lerobot_tools.yaml').is_file():
            return share / 'config' / 'lerobot_tools.yaml'
    except (ImportError, LookupError, ValueError):
        pass
    return pathlib.Path(__file__).resolve().parents[2] / 'config' / 'lerobot_tools.yaml'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--params', type=pathlib.Path, default=None, metavar='FILE',
                        help='parameters file (default: the package config/lerobot_tools.yaml)')
    parser.add_argument('--demo', action='store_true',
                        help='also start demo_camera and scripted_policy')
    parser.add_argument('--demo-camera', action='store_true',
                        help='also start demo_camera (without the scripted policy)')
    parser.add_argument('--duration', type=float, default=0.0, metavar='S',
                        help='exit after S seconds (0: run until Ctrl-C; with --demo the run '
                             'also ends once the script is done and every call has a result)')
    parser.add_argument('--dataset', default=None,
                        help='catalog source for dispatcher and tool_server (default: params)')
    parser.add_argument('--output-dir', type=pathlib.Path, default=None, metavar='DIR',
                        help='write audio to DIR/audio and stills to DIR/observations')
    parser.add_argument('--tts-backend', default=None, choices=['auto', 'pocket_tts', 'espeak_ng'],
                        help="the say tool's backend (default: params)")
    parser.add_argument('--bindings-file', type=pathlib.Path, default=None, metavar='FILE',
                        help="tool_server's bindings_file (default: params; with --demo the "
                             'demo gripper binding, config/demo_bindings.yaml)')
    parser.add_argument('--audit-log', type=pathlib.Path, default=None, metavar='FILE',
                        help="record every call and result to FILE (the dispatcher's audit_log)")
    parser.add_argument('--namespace', default='', metavar='NS',
                        help='put every node (and so every relative topic and service) under '
                             "NS, like the launch file's namespace:=NS")
    parser.add_argument('--log-level', default='info', choices=['debug', 'info', 'warn', 'error'])
    parser.add_argument('--managed', action='store_true',
                        help='run dispatcher, tool_server and speaker as managed (lifecycle) '
                             'nodes, configured and activated here; a lifecycle manager or '
                             '`ros2 lifecycle set` drives them afterwards')


def node_arguments(params: pathlib.Path, log_level: str, overrides: dict,
                   namespace: str = '') -> list[str]:
    """
    Return the ROS arguments of one node: the parameters file, then the command line's overrides.

    Later ``-p`` values win over the file's, and the file's ``/**/node`` keys match in any
    namespace, so an override applies the same with or without ``--namespace``.
    """
    args = ['--ros-args', '--params-file', str(params), '--log-level', log_level]
    if namespace:
        args += ['-r', f'__ns:={namespace}']
    for name, value in overrides.items():
        args += ['-p', f'{name}:={value}']
    return args


def node_overrides(args: argparse.Namespace) -> dict[str, dict]:
    """Map each node name to the parameters the command line sets for it."""
    overrides: dict[str, dict] = {'dispatcher': {}, 'tool_server': {}, 'speaker': {}}
    if args.dataset is not None:
        overrides['tool_server']['dataset'] = overrides['dispatcher']['dataset'] = args.dataset
    if args.tts_backend:
        overrides['tool_server']['tool.say.backend'] = args.tts_backend
    if args.audit_log is not None:
        overrides['dispatcher']['audit_log'] = args.audit_log.expanduser().resolve()
    if args.bindings_file is not None:
        overrides['tool_server']['bindings_file'] = args.bindings_file.expanduser().resolve()
    elif args.demo:
        overrides['tool_server']['bindings_file'] = (default_params_file().parent
                                                     / 'demo_bindings.yaml')
    if args.output_dir is not None:
        out = args.output_dir.expanduser().resolve()
        overrides['tool_server']['tool.record_observation.output_dir'] = out / 'observations'
        overrides['speaker']['output_dir'] = out / 'audio'
    return overrides


def checked_namespace(value: str | None) -> str:
    value = (value or '').strip().strip('/')
    return f'/{value}' if value else ''


class _Table:
    """Prints one row per ToolResult."""

    COLUMNS = f'{"time":>7}  {"tool":<20} {"arguments":<44} {"outcome":<18} {"latency":>9}'

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.results = 0
        self.errors: dict[str, int] = {}
        print(self.COLUMNS)
        print('-' * len(self.COLUMNS))

    def row(self, msg) -> None:
        self.results += 1
        if not msg.success:
            self.errors[msg.error_code] = self.errors.get(msg.error_code, 0) + 1
        arguments = log_text(msg.arguments or '-', 10_000)  # model text: one safe line
        if len(arguments) > 44:
            arguments = arguments[:41] + '...'
        outcome = 'ok' if msg.success else msg.error_code
        latency = msg.duration.sec * 1e3 + msg.duration.nanosec / 1e6
        lines = (f'{time.monotonic() - self.started:7.2f}  {log_text(msg.name or "?"):<20} '
                 f'{arguments:<44} {outcome:<18} {latency:7.1f}ms\n')
        if not msg.success:
            lines += f'{"":9}{log_text(msg.error_message, 150)}\n'
        # One write: a log line from another thread cannot land inside a row.
        sys.stdout.write(lines)
        sys.stdout.flush()


def files_written_since(directories: list[pathlib.Path], since: float) -> list[pathlib.Path]:
    found = []
    for directory in directories:
        if directory.is_dir():
            found += [path for path in directory.rglob('*')
                      if path.suffix in _EXTENSIONS and path.stat().st_mtime >= since]
    return sorted(found)


def run(args: argparse.Namespace) -> int:
    """Start the nodes, print a row per result until the end, then list the files written."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from lerobot_tools_ros.errors import EXIT_CONFIGURATION_ERROR
    from lerobot_tools_ros.nodes.runner import CONFIGURATION_ERRORS, StopOnSignal

    from lerobot_tools_ros.errors import ConfigurationError
    from lerobot_tools_ros.parameters.files import check_params_file

    params = args.params or default_params_file()
    if not params.is_file():
        print(f'error: parameters file {params} does not exist', file=sys.stderr)
        return 1
    try:
        check_params_file(str(params))
    except ConfigurationError as exc:
        print(f'[bringup] error: {exc}', file=sys.stderr)
        return 78
    started_wall = time.time()
    # Ctrl-C and SIGTERM only set a flag the loop below checks, so the nodes are destroyed in
    # order while the context is still valid (the speaker finishes WAVs of whole utterances).
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    stop = StopOnSignal()
    nodes: list = []
    table = None
    output_dirs: list[pathlib.Path] = []
    executor = SingleThreadedExecutor()
    print(f'[bringup] parameters: {params}', flush=True)
    try:
        policy = _create_nodes(nodes, params, args)
        output_dirs = output_directories(args, nodes)
        table = _Table()
        monitor = _add_monitor(nodes, table, checked_namespace(args.namespace))
        stop.wake_through(monitor)
        for node in nodes:
            executor.add_node(node)
        dispatcher = nodes[0]
        params = getattr(dispatcher, 'params', None)  # None: a managed one not configured
        text_topic = (dispatcher.resolve_topic_name(params.input_topic) if params
                      else '(nowhere: the dispatcher is not configured)')
        print(f'[bringup] ready: {", ".join(n.get_name() for n in nodes[:-1])}; policy text '
              f'goes to {text_topic}', flush=True)
        _spin(executor, monitor, dispatcher, policy, args.duration, stop.event)
        settle(executor, 0.5)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except CONFIGURATION_ERRORS as exc:
        print(f'[bringup] error: {" ".join(str(exc).split())}', file=sys.stderr)
        return EXIT_CONFIGURATION_ERROR
    finally:
        for node in reversed(nodes):
            executor.remove_node(node)
            node.destroy_node()
        rclpy.try_shutdown()
    _print_summary(table, output_dirs, started_wall)
    return 0


def _create_nodes(nodes: list, params: pathlib.Path, args: argparse.Namespace):
    """
    Append dispatcher, tool_server, speaker (and demo nodes) to ``nodes``; return the policy.

    Nodes are appended one by one so that, if one fails to start, the ones already running are
    still destroyed by the caller.
    """
    from lerobot_tools_ros.dispatcher.node import Dispatcher
    from lerobot_tools_ros.nodes.params import refuse_unknown_parameters
    from lerobot_tools_ros.speaker.node import Speaker
    from lerobot_tools_ros.tool_server.node import ToolServer

    namespace = checked_namespace(args.namespace)
    overrides = node_overrides(args)

    def cli_args(node: str) -> list[str]:
        return node_arguments(params, args.log_level, overrides.get(node, {}), namespace)

    def add(node: Any) -> Any:
        nodes.append(node)
        refuse_unknown_parameters(node)  # a misspelled name in the file would be ignored
        return node

    if args.managed:
        _add_managed(nodes, cli_args)
    else:
        add(Dispatcher(cli_args=cli_args('dispatcher')))
        add(ToolServer(cli_args=cli_args('tool_server')))
        add(Speaker(cli_args=cli_args('speaker')))
    policy = None
    if args.demo or args.demo_camera:
        from lerobot_tools_ros.demo.camera import DemoCamera
        add(DemoCamera(cli_args=cli_args('demo_camera')))
    if args.demo:
        from lerobot_tools_ros.demo.gripper import DemoGripper
        add(DemoGripper(cli_args=cli_args('demo_gripper')))
        from lerobot_tools_ros.demo.scripted_policy import ScriptedPolicy
        policy = add(ScriptedPolicy(cli_args=cli_args('scripted_policy')))
    return policy


def _add_managed(nodes: list, cli_args: Any) -> None:
    """
    Add the three nodes as managed nodes and take each through AUTOSTART (configure, activate).

    A node whose configure fails stays unconfigured (its reason is printed and on
    /diagnostics), as under a lifecycle manager: bringup keeps running, so the parameter can be
    fixed and the node configured with `ros2 lifecycle set`.
    """
    from lerobot_tools_ros.dispatcher.node import Dispatcher
    from lerobot_tools_ros.managed import AUTOSTART
    from lerobot_tools_ros.nodes.managed_node import managed_class
    from lerobot_tools_ros.parameters.declarations import NODES
    from lerobot_tools_ros.speaker.node import Speaker
    from lerobot_tools_ros.tool_server.node import ToolServer

    for name, plain in (('dispatcher', Dispatcher), ('tool_server', ToolServer),
                        ('speaker', Speaker)):
        node = managed_class(plain, NODES[name])(cli_args=cli_args(name))
        nodes.append(node)
        for transition in AUTOSTART:
            getattr(node, f'trigger_{transition}')()
            if node.lifecycle_state == 'unconfigured':
                print(f'[bringup] {name} stays unconfigured ({node.last_failure}); fix it, '
                      f'then: ros2 lifecycle set {node.get_fully_qualified_name()} configure',
                      file=sys.stderr, flush=True)
                break
        print(f'[bringup] {name}: {node.lifecycle_state} (managed)', flush=True)


def _add_monitor(nodes: list, table: '_Table', namespace: str) -> Any:
    """Add the node that prints a table row per ToolResult (in the runtime's namespace)."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from lerobot_tools_interfaces.msg import ToolResult
    from lerobot_tools_ros import names

    monitor = rclpy.create_node('bringup_monitor', namespace=namespace or None)
    nodes.append(monitor)
    monitor.create_subscription(
        ToolResult, names.RESULTS_TOPIC, table.row,
        QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    return monitor


def _spin(executor, monitor, dispatcher, policy, duration: float, stop: threading.Event) -> None:
    """Spin until Ctrl-C, ``duration``, or (with a scripted policy) every call has its result."""
    from lerobot_tools_ros.nodes.runner import spin_until

    deadline = time.monotonic() + duration if duration > 0 else float('inf')
    quiet_since = None

    def check() -> None:  # twice a second, on the executor's thread
        nonlocal quiet_since
        if stop.is_set():
            return  # (the executor still spins briefly at the end: settle)
        if time.monotonic() >= deadline:
            stop.set()
        elif policy is not None and policy.finished and not dispatcher.pending_calls:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 1.5:
                print('[bringup] the scripted policy is done and every call has a result')
                stop.set()
    monitor.create_timer(0.5, check)
    spin_until(executor, stop, 'bringup')


def output_directories(args: argparse.Namespace, nodes: list) -> list[pathlib.Path]:
    if args.output_dir is not None:
        out = args.output_dir.expanduser().resolve()
        return [out / 'observations', out / 'audio']
    return _configured_output_dirs(nodes)


def _print_summary(table: '_Table | None', output_dirs: list[pathlib.Path],
                   started_wall: float) -> None:
    if table is not None:
        errors = ', '.join(f'{code}: {count}' for code, count in sorted(table.errors.items()))
        print(f'[bringup] {table.results} result(s)' + (f'; errors: {errors}' if errors else ''))
    files = files_written_since(output_dirs, started_wall - 1)
    print(f'[bringup] {len(files)} file(s) written under {", ".join(map(str, output_dirs))}:')
    for path in files:
        print(f'  {path}')


def settle(executor, seconds: float) -> None:
    """Keep spinning briefly so messages already on their way (final audio chunks) land."""
    from rclpy.executors import ExternalShutdownException

    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
    except ExternalShutdownException:
        pass  # the context went first (a second Ctrl-C): nothing more can arrive
    except Exception as exc:  # noqa: B902 - a dying graph must not stop the shutdown
        print(f'[bringup] stopped waiting for the last messages early: {type(exc).__name__}: '
              f'{exc}', file=sys.stderr)


def _configured_output_dirs(nodes: list) -> list[pathlib.Path]:
    dirs = []
    for node in nodes:
        for name in ('output_dir', 'tool.record_observation.output_dir'):
            if node.has_parameter(name):
                dirs.append(pathlib.Path(os.path.expanduser(node.get_parameter(name).value)))
    return dirs or [pathlib.Path.cwd()]
