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
The launch files and their arguments, launched (where `launch` and `launch_ros` import).

Elsewhere these skip, and test_runner.py starts the same nodes as processes with the same
mistakes.

Each launch runs in a process of its own, as `ros2 launch` runs it, in the test's DDS domain:
params_file that does not exist, a configuration error (never restarted: the launch stops), a
crash after running fine (restarted, up to respawn_max), bindings_file reaching tool_server
from both launch files, and every documented argument declared.
test_launch_lerobot_tools.py runs the whole runtime under launch_testing.
"""

import importlib.util
import os
import re
import signal
import subprocess
import sys
import time

from conftest import PACKAGE_DIR
import pytest

LAUNCH_FILE = PACKAGE_DIR / 'launch' / 'lerobot_tools.launch.py'
DEMO_LAUNCH_FILE = PACKAGE_DIR / 'launch' / 'demo.launch.py'
# What `ros2 launch FILE name:=value ...` does, in a process of its own: launch's log handlers
# write to the stdout they found at import, which pytest's capture does not see.
LAUNCH = (
    'import sys, launch\n'
    'from launch.launch_description_sources import PythonLaunchDescriptionSource\n'
    'arguments = dict(arg.split(":=", 1) for arg in sys.argv[2:])\n'
    'service = launch.LaunchService()\n'
    'service.include_launch_description(launch.LaunchDescription([\n'
    '    launch.actions.IncludeLaunchDescription(\n'
    '        PythonLaunchDescriptionSource(sys.argv[1]),\n'
    '        launch_arguments=arguments.items())]))\n'
    'sys.exit(service.run())\n')
# The launch files' arguments, as the README documents them.
DOCUMENTED = {'dataset', 'params_file', 'namespace', 'log_level', 'respawn', 'respawn_max',
              'respawn_delay', 'output_dir', 'tts_backend', 'bindings_file', 'managed'}


def _load(path, name: str):
    pytest.importorskip('launch', reason='launch is not installed (no PyPI wheel)')
    pytest.importorskip('launch_ros', reason='launch_ros is not installed (no PyPI wheel)')
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def launch_file():
    """Load the launch file as a module; skip where launch / launch_ros are not installed."""
    return _load(LAUNCH_FILE, 'lerobot_tools_launch')


@pytest.fixture
def demo_launch_file():
    return _load(DEMO_LAUNCH_FILE, 'lerobot_tools_demo_launch')


def _launch_command(path, **arguments) -> list[str]:
    return [sys.executable, '-c', LAUNCH, str(path),
            *(f'{name}:={value}' for name, value in arguments.items())]


def _run_launch(ros_env, path, timeout: float = 90, *, refused: bool = False,
                **arguments) -> str:
    """
    Run a launch to its end; return its output (the launch must end by itself).

    `refused`: a node refuses its configuration, and the launch must say so with a non-zero
    exit status (it exited 0, which a supervisor cannot tell from a normal stop).
    """
    done = subprocess.run(_launch_command(path, **arguments), capture_output=True, text=True,
                          timeout=timeout, env=ros_env)
    output = done.stdout + done.stderr
    if refused:
        assert done.returncode != 0, output
        assert 'Caught exception in launch' in output and 'refused its configuration' in output
    return output


def _starts(output: str, node: str) -> int:
    return len(re.findall(rf'\[{node}-\d+\]: process started with pid', output))


def test_every_documented_argument_is_declared(launch_file, demo_launch_file):
    for module in (launch_file, demo_launch_file):
        declared = {argument.name for argument in
                    module.generate_launch_description().get_launch_arguments()}
        assert DOCUMENTED <= declared, DOCUMENTED - declared


def test_a_configuration_error_stops_the_launch_and_is_never_restarted(launch_file, ros_env):
    output = _run_launch(ros_env, LAUNCH_FILE, refused=True, dataset='/nonexistent',
                         respawn='all', respawn_delay='0.5', tts_backend='espeak_ng',
                         namespace='robot_ns', log_level='debug')
    # namespace and log_level reached the nodes' command lines.
    assert '-r __ns:=/robot_ns' in output and '--log-level robot_ns.tool_server:=debug' in output
    assert _starts(output, 'tool_server') == 1, output
    assert _starts(output, 'dispatcher') == 1, output
    assert 'exit code 78' in output, output
    assert 'refused its configuration (exit status 78' in output, output
    assert 'stopping the launch' in output, output
    assert '[tool_server] error: /nonexistent: no such file or directory' in output
    assert 'Traceback' not in output, output


@pytest.mark.parametrize('path', [LAUNCH_FILE, DEMO_LAUNCH_FILE])
def test_bindings_file_reaches_tool_server(launch_file, ros_env, tmp_path, path):
    bad = tmp_path / 'my_bindings.yaml'
    bad.write_text('bindings:\n  close_gripper: {kind: servce, service: /g, '
                   'type: std_srvs/srv/Trigger}\n')
    output = _run_launch(ros_env, path, refused=True, bindings_file=str(bad),
                         tts_backend='espeak_ng', output_dir=str(tmp_path / 'out'))
    assert f'[tool_server] error: bindings file {bad}' in output, output
    assert "got 'servce'" in output and 'stopping the launch' in output, output


def test_a_crash_after_running_fine_is_restarted_up_to_respawn_max(launch_file, ros_env,
                                                                   tmp_path):
    log = tmp_path / 'launch.log'
    with open(log, 'w') as out:
        launch = subprocess.Popen(
            _launch_command(LAUNCH_FILE, tts_backend='espeak_ng', respawn='tool_server',
                            respawn_max='1', respawn_delay='0.5',
                            output_dir=str(tmp_path / 'out')),
            stdout=out, stderr=subprocess.STDOUT, env=ros_env, start_new_session=True)
    try:
        killed = []
        for restarts in (0, 1):
            deadline = time.monotonic() + 60.0
            while time.monotonic() < deadline:
                pids = re.findall(r'\[tool_server-\d+\]: process started with pid \[(\d+)\]',
                                  log.read_text())
                if len(pids) > restarts:
                    break
                time.sleep(0.2)
            assert len(pids) == restarts + 1, log.read_text()
            time.sleep(12.0)  # runs fine: longer than respawn.MIN_UPTIME_S
            os.kill(int(pids[-1]), signal.SIGKILL)
            killed.append(pids[-1])
        deadline = time.monotonic() + 10.0
        while 'restarted 1 time(s) already' not in log.read_text() and (
                time.monotonic() < deadline):
            time.sleep(0.2)
        output = log.read_text()
        assert 'killed by signal 9 after' in output and 'restarting it in 0.5 s' in output
        assert 'not restarted, it was restarted 1 time(s) already (respawn_max:=1)' in output
        assert _starts(output, 'tool_server') == 2, output
    finally:
        launch.send_signal(signal.SIGINT)
        try:
            launch.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait(10)


def test_missing_params_file_stops_the_launch_with_one_line(launch_file, tmp_path):
    missing = tmp_path / 'typo.yaml'
    env = dict(os.environ, ROS_LOG_DIR=str(tmp_path / 'log'))
    done = subprocess.run(_launch_command(LAUNCH_FILE, params_file=missing),
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode != 0
    errors = [line for line in (done.stdout + done.stderr).splitlines() if 'ERROR' in line]
    assert len(errors) == 1, done.stdout + done.stderr
    assert f'params_file:={missing} does not exist' in errors[0]


@pytest.mark.parametrize('text, nodes', [
    ('tool_server', {'tool_server'}), ('dispatcher, speaker', {'dispatcher', 'speaker'}),
    ('all', {'dispatcher', 'tool_server', 'speaker'}), ('none', set()), ('', set())])
def test_respawn_names_the_nodes_to_restart(launch_file, text, nodes):
    assert launch_file._respawned(text) == nodes


def test_respawn_refuses_unknown_nodes(launch_file):
    with pytest.raises(ValueError, match='unknown node'):
        launch_file._respawned('tool_sever')


def test_log_level_names_our_node_loggers_only(launch_file):
    assert launch_file._log_level_args('debug', '', 'dispatcher') == [
        '--log-level', 'dispatcher:=debug']
    assert launch_file._log_level_args('debug', '/robot1/arm', 'tool_server') == [
        '--log-level', 'robot1.arm.tool_server:=debug']


def _active(ros_node, node: str, timeout: float) -> bool:
    """Ask `node`'s ~/get_state until it answers active (False after `timeout`)."""
    from conftest import spin_until
    from lifecycle_msgs.srv import GetState

    client = ros_node.create_client(GetState, f'/{node}/get_state')
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if spin_until(ros_node, client.service_is_ready, 1.0):
            future = client.call_async(GetState.Request())
            if spin_until(ros_node, future.done, 2.0):
                if future.result().current_state.label == 'active':
                    return True
            else:
                client.remove_pending_request(future)
        time.sleep(0.2)
    return False


def test_managed_nodes_are_brought_up_and_a_group_sigint_stops_them_cleanly(
        launch_file, ros_env, ros_node, tmp_path):
    log = tmp_path / 'launch.log'
    with open(log, 'w') as out:
        launch = subprocess.Popen(
            _launch_command(LAUNCH_FILE, managed='true', tts_backend='espeak_ng',
                            output_dir=str(tmp_path / 'out')),
            stdout=out, stderr=subprocess.STDOUT, env=ros_env, start_new_session=True)
    try:
        for node in ('dispatcher', 'tool_server', 'speaker'):  # configured, then activated
            assert _active(ros_node, node, 90.0), log.read_text()
        # What `timeout -s INT` or a terminal-less `ros2 launch` does: the group gets SIGINT,
        # then each node another one (from launch, or here a second group signal) while it
        # stops.
        os.killpg(launch.pid, signal.SIGINT)
        time.sleep(0.05)
        os.killpg(launch.pid, signal.SIGINT)
        assert launch.wait(60) == 0, log.read_text()
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait(10)
    output = log.read_text()
    for node in ('dispatcher', 'tool_server', 'speaker'):
        assert f'{node}: configure done' in output and f'{node}: activate done' in output
        assert re.search(rf'\[{node}-\d+\]: process has finished cleanly', output), output
    assert 'process has died' not in output and 'terminate called' not in output, output
