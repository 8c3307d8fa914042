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
Node start failures: one line and exit status 78 for configuration errors, else a traceback.

The launch files restart a node that crashed after running fine, never one that exited 78
(`respawn.RespawnPolicy`); the real node executables are started here with the configuration
mistakes users make (a dataset that does not exist, a binding kind with a typo, a value out of
range) and must each end with one line and that status.
"""

import subprocess
import sys

from conftest import PACKAGE_DIR
from lerobot_tools_ros.errors import EXIT_CONFIGURATION_ERROR
from lerobot_tools_ros.respawn import RespawnPolicy
import pytest

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'

# A node executable in miniature: run_node with a constructor that fails the way the test says.
SCRIPT = """
import sys

from lerobot_tools_ros.catalog import CatalogError
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.nodes.runner import run_node
from rclpy.node import Node


def make_node():
    kind = sys.argv[1]
    if kind == 'configuration':
        raise ConfigurationError("parameter 'rate' must be positive, got -1; set it above 0")
    if kind == 'catalog':
        raise CatalogError('/data/meta/info.json: not valid JSON')
    if kind == 'node_name':
        return Node('not a valid name!')
    if kind == 'parameter':
        node = Node('runner_test')
        node.declare_parameter('rate', 1.0)
        node.declare_parameter('rate', 2.0)  # ParameterAlreadyDeclaredException
    if kind == 'key_bug':
        return {}['a_key_the_code_forgot']
    if kind == 'value_bug':
        return int('not a number')
    if kind == 'multi_line':
        raise ConfigurationError('first line\\nsecond line')
    raise AssertionError(kind)


sys.exit(run_node(make_node, 'runner_test', []))
"""


def start_failure(kind: str, env: dict) -> tuple[int, str]:
    done = subprocess.run([sys.executable, '-c', SCRIPT, kind], env=env, capture_output=True,
                          text=True, timeout=60)
    return done.returncode, done.stderr


@pytest.mark.parametrize('kind, message', [
    ('configuration', "parameter 'rate' must be positive, got -1; set it above 0"),
    ('catalog', '/data/meta/info.json: not valid JSON'),
    ('node_name', 'Invalid node name'),
    ('parameter', 'rate'),
    ('multi_line', 'first line second line'),
])
def test_configuration_errors_are_one_line(ros_env, kind, message):
    status, stderr = start_failure(kind, ros_env)
    assert status == EXIT_CONFIGURATION_ERROR == 78
    assert 'Traceback' not in stderr, stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith('[runner_test] error: ')]
    assert message in line


@pytest.mark.parametrize('kind, exception', [
    ('key_bug', "KeyError: 'a_key_the_code_forgot'"),
    ('value_bug', "ValueError: invalid literal for int() with base 10: 'not a number'"),
])
def test_other_errors_keep_their_traceback(ros_env, kind, exception):
    status, stderr = start_failure(kind, ros_env)
    assert status == 1
    assert 'Traceback (most recent call last)' in stderr, stderr
    assert exception in stderr
    assert 'in make_node' in stderr  # the frame that has the bug is shown
    assert '[runner_test] error: could not start' in stderr


@pytest.mark.parametrize('node, args, message', [
    ('tool_server', ['-p', 'dataset:=/nonexistent'], '/nonexistent'),
    ('dispatcher', ['-p', 'dataset:=/nonexistent'], '/nonexistent'),
    ('tool_server', ['-p', 'bindings_file:={bindings}'], "got 'servce'"),
    ('tool_server', ['-p', 'tools:=[say, say]', '-p', 'tool.say.backend:=espeak_ng'],
     'listed twice'),
    ('tool_server', ['-p', 'tool.say.backend:=festival'], 'tool.say.backend'),
    ('tool_server', ['-p', 'tool.say.max_char:=10', '-p', 'tool.say.backend:=espeak_ng'],
     "unknown parameter 'tool.say.max_char'"),
    ('speaker', ['-p', 'jitter_ms:=5000'], "parameter 'jitter_ms' must be from 0 to 2000"),
    ('dispatcher', ['-p', 'tool.say.aproval:=deny'], "unknown parameter 'tool.say.aproval'"),
])
def test_node_configuration_mistakes_end_with_one_line_and_status_78(
        start_node, tmp_path, node, args, message):
    bindings = tmp_path / 'bindings.yaml'
    bindings.write_text('bindings:\n  close_gripper: {kind: servce, service: /g, '
                        'type: std_srvs/srv/Trigger}\n')
    args = [arg.replace('{bindings}', str(bindings)) for arg in args]
    proc = start_node(f'lerobot_tools_ros.nodes.{node}', '--params-file', str(PARAMS_FILE),
                      *args)
    assert proc.proc.wait(60) == EXIT_CONFIGURATION_ERROR, proc.output()
    output = proc.output()
    assert 'Traceback' not in output, output
    (line,) = [line for line in output.splitlines() if line.startswith(f'[{node}] error: ')]
    assert message in line, output


# The entry point of a node executable, with a Ctrl-C arriving while the node module imports.
INTERRUPTED_IMPORT = """
import sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == 'lerobot_tools_ros.dispatcher.node':
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
from lerobot_tools_ros.nodes import entry
sys.exit(entry.dispatcher())
"""


def test_ctrl_c_while_a_node_starts_ends_it_without_a_traceback(ros_env):
    done = subprocess.run([sys.executable, '-c', INTERRUPTED_IMPORT], env=ros_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 130
    assert 'Traceback' not in done.stderr, done.stderr


def test_every_executable_goes_through_the_entry_module():
    setup = (PACKAGE_DIR / 'setup.py').read_text()
    for node in ('dispatcher', 'tool_server', 'speaker', 'demo_camera', 'demo_gripper',
                 'scripted_policy', 'mcp_server'):
        assert f"'{node} = lerobot_tools_ros.nodes.entry:{node}'" in setup


# -- when a launch file restarts a node (respawn.RespawnPolicy) ---------------------------------

def test_a_configuration_error_is_never_restarted_and_stops_the_launch():
    decision = RespawnPolicy().decide('tool_server', EXIT_CONFIGURATION_ERROR, 3600.0, 0)
    assert not decision.restart and decision.shutdown
    assert 'configuration' in decision.message


@pytest.mark.parametrize('returncode', [1, -9, -11, 134])
def test_a_crash_after_running_fine_is_restarted_up_to_the_limit(returncode):
    policy = RespawnPolicy(max_restarts=2, delay_s=1.5, min_uptime_s=10.0)
    first = policy.decide('tool_server', returncode, 60.0, 0)
    assert first.restart and not first.shutdown and 'in 1.5 s' in first.message
    assert policy.decide('tool_server', returncode, 60.0, 1).restart
    last = policy.decide('tool_server', returncode, 60.0, 2)
    assert not last.restart and not last.shutdown and '2 time(s)' in last.message


def test_a_crash_while_starting_or_a_clean_exit_is_not_restarted():
    policy = RespawnPolicy(min_uptime_s=10.0)
    early = policy.decide('speaker', 1, 2.0, 0)
    assert not early.restart and not early.shutdown and 'before running 10 s' in early.message
    assert not policy.decide('speaker', 0, 600.0, 0).restart
