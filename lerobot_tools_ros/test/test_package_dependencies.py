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
Every import of the package is a declared dependency.

package.xml (what rosdep installs) for ROS packages and system Python modules, setup.py for
what only pip provides.

Imports inside functions (optional backends) count too: each must name where it comes from.
"""

import ast
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

from conftest import PACKAGE_DIR
import pytest

# Python modules and the rosdep keys that install them.
ROSDEP_KEYS = {'yaml': 'python3-yaml', 'numpy': 'python3-numpy',
               'jsonschema': 'python3-jsonschema', 'cv2': 'python3-opencv',
               'pyarrow': 'python3-pyarrow'}
# Python modules only pip installs, and the setup.py requirement that brings each.
PIP_PROVIDERS = {'pocket_tts': 'pocket-tts', 'torch': 'pocket-tts', 'tokenizers': 'pocket-tts',
                 'huggingface_hub': 'huggingface_hub', 'rosbags': 'rosbags-image',
                 'soundfile': 'soundfile', 'soxr': 'soxr', 'sounddevice': 'sounddevice',
                 'mcp': 'mcp', 'mcp_types': 'mcp', 'anyio': 'mcp', 'uvicorn': 'mcp',
                 'starlette': 'mcp',
                 'jsonschema_rs': 'jsonschema-rs', 'transformers': 'transformers',
                 're2': 'google-re2'}
# Imported only to probe whether it works here, with a fallback that needs no declaration.
PROBED = {'cv_bridge': 'imaging.py converts frames with rosbags-image when cv_bridge is '
                       'missing or broken (NumPy 2)'}
# ROS Python packages that are not message packages (found by name, not in the ament index
# of every machine: launch and launch_ros have no wheel).
ROS_PYTHON = {'rclpy', 'ament_index_python', 'rosidl_parser', 'launch', 'launch_ros'}


def _imports(paths) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                found.setdefault(module.split('.')[0], set()).add(
                    str(path.relative_to(PACKAGE_DIR)))
    return found


def _runtime_dependencies() -> set[str]:
    root = ET.parse(PACKAGE_DIR / 'package.xml').getroot()
    return {element.text.strip() for tag in ('depend', 'exec_depend')
            for element in root.iter(tag)}


def _test_dependencies() -> set[str]:
    root = ET.parse(PACKAGE_DIR / 'package.xml').getroot()
    return {element.text.strip() for element in root.iter('test_depend')}


def _pip_requirements() -> set[str]:
    text = (PACKAGE_DIR / 'setup.py').read_text()
    return {re.split(r'[<>=!~ ]', match)[0].lower()
            for match in re.findall(r"'([A-Za-z0-9_.\-]+(?:[<>=!~]=?[^']*)?)'", text)}


def _is_ros_package(module: str) -> bool:
    if module in ROS_PYTHON:
        return True
    from ament_index_python.packages import get_package_share_directory
    try:
        get_package_share_directory(module)
    except Exception:  # noqa: B902 - not a ROS package here
        return False
    return True


PACKAGE_CODE = sorted((PACKAGE_DIR / 'lerobot_tools_ros').rglob('*.py')) + sorted(
    (PACKAGE_DIR / 'launch').glob('*.py'))


def test_every_import_of_the_package_is_a_declared_dependency():
    runtime, pip = _runtime_dependencies(), _pip_requirements()
    problems = []
    for module, where in sorted(_imports(PACKAGE_CODE).items()):
        if module in sys.stdlib_module_names or module == 'lerobot_tools_ros' or module in PROBED:
            continue
        if module in ROSDEP_KEYS:
            wanted = ROSDEP_KEYS[module]
            ok = wanted in runtime
        elif module in PIP_PROVIDERS:
            wanted = PIP_PROVIDERS[module]
            ok = wanted.lower() in pip
        elif _is_ros_package(module):
            wanted = module
            ok = module in runtime
        else:
            problems.append(f'{module} (imported by {sorted(where)}) is not mapped to a '
                            'dependency: add it to package.xml or setup.py, and here')
            continue
        if not ok:
            problems.append(f'{module} (imported by {sorted(where)}) needs {wanted} as a runtime '
                            'dependency (package.xml depend/exec_depend, or setup.py for pip)')
    assert not problems, '\n'.join(problems)


def test_test_only_packages_are_not_imported_at_run_time():
    for module, where in _imports(PACKAGE_CODE).items():
        if module in _test_dependencies() and module not in _runtime_dependencies():
            pytest.fail(f'{module} is a test dependency only, yet {sorted(where)} import it')


def test_the_cli_is_installed_where_a_sourced_workspace_finds_it():
    script = PACKAGE_DIR / 'bin' / 'lerobot-tools-ros'
    assert "('bin', ['bin/lerobot-tools-ros'])" in (PACKAGE_DIR / 'setup.py').read_text()
    assert script.stat().st_mode & 0o111, 'bin/lerobot-tools-ros must be executable'
    assert '../lib/lerobot_tools_ros/lerobot-tools-ros' in script.read_text()


def test_the_cli_runs_from_path_after_sourcing_the_package(ros_env, tmp_path):
    from ament_index_python.packages import get_package_prefix
    import subprocess

    prefix = pathlib.Path(get_package_prefix('lerobot_tools_ros'))
    hooks = prefix / 'share' / 'lerobot_tools_ros' / 'package.sh'
    if not hooks.exists():
        pytest.skip(f'{prefix} is not a colcon install (no share/lerobot_tools_ros/package.sh)')
    # A PATH without the install's bin: only sourcing the package's hooks can put it there.
    env = dict(ros_env, PATH=':'.join(p for p in ros_env['PATH'].split(':')
                                      if not p.startswith(str(prefix))))
    done = subprocess.run(
        ['sh', '-c', f'. "{hooks}" && command -v lerobot-tools-ros && lerobot-tools-ros --help'],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == str(prefix / 'bin' / 'lerobot-tools-ros')
    assert 'usage: lerobot-tools-ros' in done.stdout
