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
"""LEROBOT_TESTS=ros and =distro leave out only what a second distro cannot change."""

import ast
import os
import subprocess
import sys

from conftest import DISTRO_INDEPENDENT, DISTRO_SURFACE, PACKAGE_DIR, TEST_DIR

# Imports and fixtures through which a test reaches ROS 2 (its Python, its graph, its builds).
ROS_MODULES = ('rclpy', 'lerobot_tools_interfaces', 'launch', 'launch_ros', 'launch_testing',
               'rcl_interfaces', 'std_msgs', 'sensor_msgs', 'builtin_interfaces', 'conftest')
ROS_FIXTURES = {'start_node', 'ros_node', 'ros_env', 'stack', 'session_domain'}
# conftest is imported for helpers; these of its names do not touch ROS.
PURE_CONFTEST_NAMES = {'DISTRO_INDEPENDENT', 'DISTRO_SURFACE', 'TEST_DIR', 'PACKAGE_DIR'}


def _reaches_ros(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split('.')[0] in ROS_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split('.')[0]
            if root == 'conftest':
                found += [a.name for a in node.names if a.name not in PURE_CONFTEST_NAMES]
            elif root in ROS_MODULES:
                found.append(node.module)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [a.arg for a in node.args.args if a.arg in ROS_FIXTURES]
    return found


def _sources(modules: frozenset, listing: str) -> dict[str, str]:
    """Return the text of each test module of a conftest listing (each must exist)."""
    sources = {}
    for name in sorted(modules):
        path = TEST_DIR / f'{name}.py'
        assert path.is_file(), f'{name} is listed in conftest.{listing} but missing'
        sources[name] = path.read_text(encoding='utf-8')
    return sources


def test_every_module_left_out_for_a_second_distro_stays_away_from_ros():
    problems = {}
    for name, source in _sources(DISTRO_INDEPENDENT, 'DISTRO_INDEPENDENT').items():
        reached = _reaches_ros(ast.parse(source))
        if reached:
            problems[name] = reached
    assert not problems, ('these modules reach ROS 2, so a second distro must run them: remove '
                          f'them from conftest.DISTRO_INDEPENDENT: {problems}')


def _node_modules() -> list[str]:
    """Return the node modules behind the package's executables (``nodes.entry`` wraps each)."""
    entry = (PACKAGE_DIR / 'lerobot_tools_ros' / 'nodes' / 'entry.py').read_text(encoding='utf-8')
    setup = (PACKAGE_DIR / 'setup.py').read_text(encoding='utf-8')
    names = [line.split('=')[0].strip().strip("'") for line in setup.splitlines()
             if 'lerobot_tools_ros.nodes.entry:' in line]
    assert names and all(f'def {name}(' in entry for name in names), names
    return names


def test_the_distro_scope_drives_every_node_and_only_reaches_ros():
    sources = _sources(DISTRO_SURFACE, 'DISTRO_SURFACE')
    for name, source in sources.items():
        assert name not in DISTRO_INDEPENDENT, name
        assert _reaches_ros(ast.parse(source)), f'{name} does not reach ROS 2'
    # Every node starts on the second distro: a test there names its module or executable.
    unstarted = [node for node in _node_modules()
                 if not any(f'nodes.{node}' in text or f"'{node}'" in text
                            for text in sources.values())]
    assert not unstarted, f'no module in conftest.DISTRO_SURFACE starts {unstarted}'


def _collect(scope: str, *modules: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(('PYTEST_', 'LEROBOT_TESTS'))}  # not this run's options
    env['LEROBOT_TESTS'] = scope
    return subprocess.run(
        [sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider',
         '-p', 'no:xdist', *(str(TEST_DIR / f'{module}.py') for module in modules)],
        cwd=TEST_DIR.parent, env=env, capture_output=True, text=True, timeout=300)


def test_the_ros_scope_leaves_out_the_listed_modules_and_keeps_the_others():
    # test_audit starts nodes (behaviour above the surface); test_speaker drives a surface.
    modules = ('test_untrusted', 'test_safe_regex', 'test_audit', 'test_speaker')
    collected = {}
    for scope in ('all', 'ros', 'distro'):
        done = _collect(scope, *modules)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        collected[scope] = {line.split('::')[0].rsplit('/', 1)[-1][:-3]
                            for line in done.stdout.splitlines() if '::' in line}
    assert collected == {'all': set(modules), 'ros': {'test_audit', 'test_speaker'},
                         'distro': {'test_speaker'}}


def test_an_unknown_scope_is_refused_with_the_choices():
    done = _collect('everything', 'test_untrusted')
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "LEROBOT_TESTS='everything': choose one of all, ros, distro" in output
