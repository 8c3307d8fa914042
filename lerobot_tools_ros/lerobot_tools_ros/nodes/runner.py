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
One `main()` for every node executable of this package.

Starts rclpy, spins the node on a SingleThreadedExecutor (measured fastest for these nodes) in a
thread that waits without a timeout, turns a configuration error into one clear line and exit
status 78 (EXIT_CONFIGURATION_ERROR, sysexits' EX_CONFIG), and shuts down cleanly on Ctrl-C or
SIGTERM. Any other exception from a constructor is a bug: it keeps its traceback (exit status 1).
The launch files restart a node that crashed after running fine, never one that exited 78: it
would only fail the same way again.
"""

import signal
import sys
import threading
import traceback
from typing import Callable

from lerobot_tools_ros.errors import ConfigurationError, EXIT_CONFIGURATION_ERROR
from lerobot_tools_ros.nodes.params import refuse_unknown_parameters
from lerobot_tools_ros.parameters.files import check_params_files
import rclpy
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

# What a node's constructor raises on purpose for bad parameters, names, catalogs, bindings or
# tools: our one type (ConfigurationError; CatalogError, BindingsError and ToolLoadError are
# ConfigurationErrors), and rclpy's own for a bad node name or parameter type given by the user.
# The message says what to change, so a traceback would only hide it. A plain ValueError,
# TypeError or LookupError is not among them: raised by accident, its traceback finds the bug.
CONFIGURATION_ERRORS = (ConfigurationError, NameValidationException, ParameterException)
# rcl's error for ROS arguments it cannot take (a parameters file it cannot parse, a bad remap).
RCLError = rclpy_implementation.RCLError
# On a node's command line (before --ros-args): run it as a managed (lifecycle) node.
MANAGED_FLAG = '--managed'


def report_start_failure(name: str, exc: BaseException) -> int:
    """
    Print why a node could not start; return the exit status.

    A configuration error: one line (newlines in the message folded), status 78. Anything
    else: the traceback, status 1.
    """
    if isinstance(exc, CONFIGURATION_ERRORS):
        message = ' '.join(str(exc).split())
        print(f'[{name}] error: {message}', file=sys.stderr)
        return EXIT_CONFIGURATION_ERROR
    traceback.print_exception(exc, file=sys.stderr)
    print(f'[{name}] error: could not start ({type(exc).__name__}: {exc}); the traceback above '
          'shows where (please report it)', file=sys.stderr)
    return 1


def run_node(make_node: Callable[[], Node], name: str, args: list[str] | None = None) -> int:
    """
    Create the node from `make_node`, spin it until Ctrl-C or SIGTERM, return the exit status.

    Signals only set a flag: the node is destroyed while the context is still valid, so it can
    still publish (the dispatcher answers every pending call before it goes). The handler stays
    installed until rclpy is shut down: a supervisor often sends a second SIGINT or SIGTERM
    (`ros2 launch` without a terminal signals the process group, then the node), and that one
    must not interrupt the shutdown half-way (exit 130, calls unanswered, or a C++ abort).
    """
    stop = StopOnSignal(name)
    node = None
    command_line = sys.argv if args is None else args
    if MANAGED_FLAG in _outside_ros_args(command_line):
        make_node = _managed(make_node, name)
    try:
        try:
            check_params_files(command_line)
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        except (ConfigurationError, RCLError) as exc:
            return report_start_failure(name, ConfigurationError(
                f'{exc}' if isinstance(exc, ConfigurationError)
                else f'the ROS arguments were refused: {exc}'))
        try:
            node = make_node()
            if not hasattr(node, 'lifecycle_state'):  # a managed node checks at configure
                refuse_unknown_parameters(node)
        except Exception as exc:  # noqa: B902 - every start failure is reported, then exits
            # Only the constructor's errors can be configuration errors; once spinning, an
            # exception is a bug and keeps its traceback.
            return report_start_failure(name, exc)
        stop.wake_through(node)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            spin_until(executor, stop.event, name)
        finally:
            stop.stopping()
            executor.remove_node(node)
            executor.shutdown(timeout_sec=0.0)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        stop.stopping()  # further signals are noted, never raised: the shutdown completes
        try:
            if node is not None:
                node.destroy_node()
        finally:
            rclpy.try_shutdown()
            # Asked to stop: the process only exits now, and a late second signal (a supervisor
            # signals the group and then the node) must not turn that exit into death by signal.
            stop.restore(ignore=stop.event.is_set())
    return 0


def _outside_ros_args(args: list[str]) -> list[str]:
    """Return the arguments outside `--ros-args ... [--]` (without rcl, which reads files)."""
    outside, inside = [], False
    for arg in args:
        if arg == '--ros-args':
            inside = True
        elif arg == '--' and inside:
            inside = False
        elif not inside:
            outside.append(arg)
    return outside


def _managed(make_node: Callable[[], Node], name: str) -> Callable[[], Node]:
    """Return the managed (lifecycle) variant of a node class (`--managed`)."""
    from lerobot_tools_ros.nodes.managed_node import managed_class
    from lerobot_tools_ros.parameters.declarations import NODES

    if not isinstance(make_node, type) or name not in NODES:
        raise SystemExit(f'[{name}] error: {name} cannot run as a managed node')
    return managed_class(make_node, NODES[name])


class StopOnSignal:
    """
    Ctrl-C and SIGTERM set `event` and trigger a guard condition of a spun node.

    Only a flag and a wake-up: whoever spins ends its loop and destroys the nodes while the
    context is still valid (see spin_until for why the wake-up is needed). Once `stopping()`
    was called, a signal only sets the flag again (the guard conditions are being destroyed);
    the handler stays installed until `restore()`, so a second signal cannot cut a shutdown
    short. A process that hangs while stopping is ended with SIGKILL by its supervisor.
    """

    def __init__(self, name: str = '') -> None:
        self.event = threading.Event()
        self._name = name
        self._guards: list = []
        self._previous = {signum: signal.signal(signum, self._on_signal)
                          for signum in (signal.SIGINT, signal.SIGTERM)}

    def _on_signal(self, signum: int, *_: object) -> None:
        first = not self.event.is_set()
        self.event.set()
        if not first:
            return
        for guard in self._guards:
            try:
                guard.trigger()
            except Exception:  # noqa: B902 - a guard destroyed meanwhile: the flag suffices
                pass

    def wake_through(self, node: Node) -> None:
        """Give `node` the guard condition a signal triggers (the node must be spun)."""
        self._guards.append(node.create_guard_condition(lambda: None))

    def stopping(self) -> None:
        """From now on a signal only sets the flag: the nodes and their guards are going."""
        self.event.set()
        self._guards = []

    def restore(self, ignore: bool = False) -> None:
        """Put back the signal handlers that were there before (`ignore`: ignore signals)."""
        for signum, handler in self._previous.items():
            signal.signal(signum, signal.SIG_IGN if ignore else handler)


def spin_until(executor: Executor, stop: threading.Event, name: str) -> None:
    """
    Spin `executor` in a thread of its own until `stop` is set.

    The executor waits without a timeout: rclpy's spin_once(timeout_sec=...) creates a timer
    for every wait, a cost on every message. A signal cannot end that wait from the thread that
    waits (Python runs handlers between bytecodes), so this thread spins while the caller's
    thread joins it and takes the signal; its handler sets `stop` and triggers a guard condition
    of a spun node (StopOnSignal). An exception from a callback ends the spin and is raised
    here, in the caller's thread.
    """
    failure: list[BaseException] = []

    def spin() -> None:
        try:
            while not stop.is_set() and rclpy.ok():
                executor.spin_once()
        except ExternalShutdownException:
            pass
        except BaseException as exc:  # noqa: B902 - handed to the caller's thread, raised there
            failure.append(exc)
    if stop.is_set():
        return
    spinner = threading.Thread(target=spin, name=f'{name}-spin', daemon=True)
    spinner.start()
    spinner.join()  # signals interrupt the join; their handler runs here
    if failure:
        raise failure[0]
