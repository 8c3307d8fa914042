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

"""Node start failures: one line for configuration errors raised on purpose, else a traceback."""

import subprocess
import sys

import pytest

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
])
def test_configuration_errors_are_one_line(ros_env, kind, message):
    status, stderr = start_failure(kind, ros_env)
    assert status == 1
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
