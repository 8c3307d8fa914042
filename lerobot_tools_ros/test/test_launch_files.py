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
The launch files' arguments (runs where `launch` and `launch_ros` import; skips elsewhere).

params_file that does not exist, respawn and log_level; test_launch_lerobot_tools.py runs the
whole runtime under launch_testing.
"""

import importlib.util
import os
import subprocess
import sys

from conftest import PACKAGE_DIR
import pytest

LAUNCH_FILE = PACKAGE_DIR / 'launch' / 'lerobot_tools.launch.py'


@pytest.fixture
def launch_file():
    """Load the launch file as a module; skip where launch / launch_ros are not installed."""
    pytest.importorskip('launch', reason='launch is not installed (no PyPI wheel)')
    pytest.importorskip('launch_ros', reason='launch_ros is not installed (no PyPI wheel)')
    spec = importlib.util.spec_from_file_location('lerobot_tools_launch', LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_missing_params_file_stops_the_launch_with_one_line(launch_file, tmp_path):
    # In a process of its own, as `ros2 launch` runs: launch's log handlers write to the
    # stdout they found at import, which pytest's capture does not see.
    missing = tmp_path / 'typo.yaml'
    script = (
        'import sys, launch\n'
        'from launch.launch_description_sources import PythonLaunchDescriptionSource\n'
        'service = launch.LaunchService()\n'
        'service.include_launch_description(launch.LaunchDescription([\n'
        '    launch.actions.IncludeLaunchDescription(\n'
        '        PythonLaunchDescriptionSource(sys.argv[1]),\n'
        '        launch_arguments={"params_file": sys.argv[2]}.items())]))\n'
        'sys.exit(service.run())\n')
    env = dict(os.environ, ROS_LOG_DIR=str(tmp_path / 'log'))
    done = subprocess.run([sys.executable, '-c', script, str(LAUNCH_FILE), str(missing)],
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
