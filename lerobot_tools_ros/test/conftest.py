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
Shared fixtures: an isolated DDS domain per test, real node processes, a test node.

Every test that touches ROS gets its own ROS_DOMAIN_ID, reserved through `domain_coordinator`
(what `ament_cmake_ros` uses for isolated tests), so tests, parallel runs of the suite and other
coordinated processes never see each other's nodes. The caller's own ROS_DOMAIN_ID (the robot's)
is never used, not even by code that creates a context without a domain: the session reserves a
domain of its own and puts it in the environment. Discovery stays on loopback.
"""

import logging
import os
import pathlib
import random
import signal
import subprocess
import sys
import time
from typing import Any, Callable

from domain_coordinator import domain_id as reserve_domain_id
import pytest

TEST_DIR = pathlib.Path(__file__).resolve().parent
PACKAGE_DIR = TEST_DIR.parent

# The domain this process was started in (a robot's, a developer's): never used by a test.
CALLER_DOMAIN_ID = os.environ.get('ROS_DOMAIN_ID', '0').strip() or '0'


class _DomainSelector:
    """Domains 1-100 from a random start, skipping the caller's: what domain_coordinator tries."""

    def __init__(self) -> None:
        self._next = random.SystemRandom().randrange(100)

    def __call__(self) -> int:
        while True:
            domain = self._next % 100 + 1
            self._next += 1
            if str(domain) != CALLER_DOMAIN_ID:
                return domain


# Test modules whose outcome cannot depend on the ROS 2 distribution: no rclpy, no node, no
# interface built for a distro (parsers, pure cores, linters, the docs build).
# LEROBOT_TESTS=ros leaves them out, for a second distro after a full run on the first (CI:
# Kilted runs everything, Jazzy the rest); test_test_scope.py checks that none touches ROS.
DISTRO_INDEPENDENT = frozenset({
    'test_audio_sinks', 'test_catalog', 'test_cli_catalog', 'test_copyright',
    'test_dispatch_core', 'test_dispatch_gates', 'test_dispatch_stream_speech', 'test_docs',
    'test_flake8', 'test_managed_transitions', 'test_parsing_stream_arguments',
    'test_say_streamed',
    'test_fix_wheel_cmake_paths', 'test_input_loss', 'test_no_module_level_skips',
    'test_package_structure', 'test_parameter_declarations', 'test_parsing_correctness',
    'test_parsing_families', 'test_parsing_formats', 'test_parsing_long_tail',
    'test_parsing_plan_cache', 'test_parsing_properties', 'test_parsing_reasoning',
    'test_parsing_robustness', 'test_parsing_streaming', 'test_parsing_structure',
    'test_pep257', 'test_python_versions', 'test_requirements', 'test_safe_regex',
    'test_test_scope', 'test_tool_parameter_plan', 'test_tools_registry', 'test_tts_espeak',
    'test_types', 'test_untrusted', 'test_xmllint'})
# The modules that drive every ROS 2 surface of the package once: each node started (its
# parameters declared, dumped and loaded), topics, services and actions over DDS, the built
# interfaces, bindings to upstream interfaces, the executors, speech to the speaker, MCP over ROS,
# launch. LEROBOT_TESTS=distro runs only these: what a further distro can break (rclpy, rmw, the
# interface build) after the whole suite passed on one (CI: Jazzy after Kilted). The other ROS
# modules test behaviour decided in the pure cores, above that surface. test_test_scope.py checks
# that every node is started here.
DISTRO_SURFACE = frozenset({
    'test_bindings_dispatch', 'test_bringup', 'test_catalog_reload', 'test_dispatcher_actions',
    'test_endpoints', 'test_executor_client', 'test_inprocess_executor', 'test_interfaces',
    'test_launch_files', 'test_launch_lerobot_tools', 'test_managed_nodes', 'test_mcp_core',
    'test_mcp_server', 'test_namespace_and_cameras', 'test_package_dependencies',
    'test_parameters', 'test_rclpy_fixes', 'test_record_observation', 'test_say_progress',
    'test_shutdown_signals', 'test_speaker', 'test_stream_speech', 'test_tool_server'})
TEST_SCOPES = ('all', 'ros', 'distro')


def test_scope() -> str:
    """Which tests run: LEROBOT_TESTS=all (default), ros (those that touch ROS 2) or distro."""
    scope = os.environ.get('LEROBOT_TESTS', '').strip() or 'all'
    if scope not in TEST_SCOPES:
        raise pytest.UsageError(f'LEROBOT_TESTS={scope!r}: choose one of {", ".join(TEST_SCOPES)}')
    return scope


test_scope.__test__ = False  # a helper, not a test


def pytest_report_header(config):
    scope = test_scope()
    if scope == 'ros':
        return ('LEROBOT_TESTS=ros: the distro-independent modules (parsers, pure cores, '
                'linters, docs) are left out; LEROBOT_TESTS=all runs them')
    if scope == 'distro':
        return ('LEROBOT_TESTS=distro: only the modules that drive each ROS 2 surface once '
                '(conftest.DISTRO_SURFACE); LEROBOT_TESTS=all runs every test')
    return None


def _kept(scope: str, module: str) -> bool:
    if scope == 'ros':
        return module not in DISTRO_INDEPENDENT
    if scope == 'distro':
        return module in DISTRO_SURFACE
    return True


def pytest_ignore_collect(collection_path, config):
    """Leave a test module of another scope unimported (each worker imports what it collects)."""
    name = collection_path.name
    if name.startswith('test_') and name.endswith('.py'):
        if not _kept(test_scope(), collection_path.stem):
            return True
    return None


def pytest_collection_modifyitems(config, items):
    scope = test_scope()
    left_out = [item for item in items if not _kept(scope, item.path.stem)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if _kept(scope, item.path.stem)]


def pytest_configure(config):
    for marker in ('linter', 'flake8', 'pep257', 'copyright', 'xmllint',
                   'launch_test: a launch_testing test (runs only where launch_testing imports)',
                   'slow: long-running; set LEROBOT_TOOLS_SLOW=1 to run'):
        config.addinivalue_line('markers', marker)


_selector = _DomainSelector()


def reserve_test_domain():
    """Reserve a domain (a context manager yielding its id) that is not the caller's."""
    return reserve_domain_id(_selector)


@pytest.fixture(scope='session', autouse=True)
def session_domain():
    """Reserve a domain for the whole run and make it the default, replacing the caller's."""
    with reserve_test_domain() as domain:
        os.environ['ROS_DOMAIN_ID'] = str(domain)
        yield domain
    os.environ['ROS_DOMAIN_ID'] = CALLER_DOMAIN_ID


@pytest.fixture(autouse=True)
def _plain_python_logging():
    """
    Undo, for each test, what importing `launch` does to Python logging.

    On a ROS install the launch_testing pytest plugin imports `launch`, whose logging module
    makes every logger created afterwards a LaunchLogger that does not propagate to the root
    logger: our modules' warnings would then never reach caplog (or a user's handlers).
    """
    launch_logging = sys.modules.get('launch.logging')
    if launch_logging is None:
        yield
        return
    previous = logging.getLoggerClass()
    logging.setLoggerClass(logging.Logger)
    cut_off = [logger for logger in launch_logging.LaunchLogger.all_loggers
               if not logger.propagate and not logger.name.startswith('launch')]
    for logger in cut_off:
        logger.propagate = True
    yield
    for logger in cut_off:
        logger.propagate = False
    logging.setLoggerClass(previous)


@pytest.fixture
def ros_domain() -> int:
    """Reserve a DDS domain for this test: no other coordinated process (or test) holds it."""
    with reserve_test_domain() as domain:
        yield domain


def node_env(domain: int, tmp_path: pathlib.Path) -> dict:
    """Return the environment of node subprocesses in ``domain``: loopback, no buffering."""
    env = dict(os.environ)
    env.update({
        'ROS_DOMAIN_ID': str(domain),
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
        'PYTHONUNBUFFERED': '1',
        'RCUTILS_COLORIZED_OUTPUT': '0',
        'ROS_LOG_DIR': str(tmp_path / 'ros_log'),
    })
    env['PYTHONPATH'] = os.pathsep.join(
        p for p in (str(PACKAGE_DIR), env.get('PYTHONPATH', '')) if p)
    return env


@pytest.fixture
def ros_env(ros_domain, tmp_path) -> dict:
    """Environment for node subprocesses: the test's domain, loopback discovery, no buffering."""
    return node_env(ros_domain, tmp_path)


class NodeProcess:
    """A node (or any program) running as a real subprocess, its output kept in a file."""

    def __init__(self, args: list[str], env: dict, log_path: pathlib.Path) -> None:
        self.args = args
        self.log_path = log_path
        self._log = open(log_path, 'wb')
        self.proc = subprocess.Popen(args, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors='replace')

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30.0) -> int:
        """
        Stop like Ctrl-C would, escalating to SIGKILL; returns the exit code.

        `timeout` bounds a hang, not the speed of a stop: on two loaded cores a node's clean
        stop (calls answered, tool threads joined, each with its own bound) can take seconds.
        """
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout)
        self._log.close()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture
def start_process(ros_env, tmp_path) -> Callable[..., NodeProcess]:
    """Start a program in the test's domain; all are stopped at teardown."""
    started: list[NodeProcess] = []

    def start(args: list[str], *, env: dict | None = None, name: str = 'proc') -> NodeProcess:
        log_path = tmp_path / f'{name}-{len(started)}.log'
        proc = NodeProcess(args, env or ros_env, log_path)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture
def start_node(start_process) -> Callable[..., NodeProcess]:
    """Start one of this package's executables by module, with ROS arguments."""

    def start(module: str, *ros_args: str, name: str | None = None, **kwargs) -> NodeProcess:
        args = [sys.executable, '-m', module]
        if ros_args:
            args += ['--ros-args', *ros_args]
        return start_process(args, name=name or module.rsplit('.', 1)[-1], **kwargs)

    return start


@pytest.fixture
def ros_node(ros_domain):
    """Create a node in the test's domain, with a single-threaded executor to spin it."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    node = rclpy.create_node(f'test_node_{os.getpid()}', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    node.executor_for_test = executor
    yield node
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=context)


def prove_service(node, client, probe, timeout: float = 30.0,
                  output: Callable[[], str] = str) -> Any:
    """
    Send `probe` (a request that changes nothing) until it is answered; return the answer.

    `service_is_ready()` can be true before the server's side has matched this client, and an
    answer sent then is lost. The product proves its executors the same way (a `:probe` call);
    tests do it before a first request that must not be repeated. `output()` is added to a
    failure (a node's log).
    """
    assert spin_until(node, client.service_is_ready, timeout), (
        f'no {client.srv_name}\n{output()}')
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(probe)
        if spin_until(node, future.done, 0.5):
            return future.result()
        client.remove_pending_request(future)
        assert time.monotonic() < deadline, (
            f'{client.srv_name} never answered a probe\n{output()}')


def prove_action(node, client, probe, timeout: float = 30.0) -> None:
    """
    Send the goal `probe` (one that runs nothing) until its result comes back.

    The action counterpart of `prove_service`: a goal sent as soon as `server_is_ready()` can
    have its acceptance or result lost while the server's side matches this client.
    """
    assert spin_until(node, client.server_is_ready, timeout), 'no action server'
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sent = client.send_goal_async(probe)
        if not spin_until(node, sent.done, 0.5) or not sent.result().accepted:
            continue
        if spin_until(node, sent.result().get_result_async().done, 0.5):
            return
    raise AssertionError('the action server never answered a probe goal')


def spin_until(node, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Spin the test node until predicate() is true or timeout; returns predicate()."""
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        node.executor_for_test.spin_once(timeout_sec=0.02)
    return predicate()
