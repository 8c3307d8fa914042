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
scripts/fix_wheel_cmake_paths.py on a venv-shaped directory: patch, then revert exactly.

`--revert` must never write an original over a file that a later install replaced (another
version, or the other distro's wheel): that would put one distro's CMake files into the other's
venv.
"""

import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / 'scripts' / 'fix_wheel_cmake_paths.py'


@pytest.fixture
def fix():
    if not SCRIPT.exists():
        pytest.skip(f'{SCRIPT} is not here (a package checked out without the repository root)')
    spec = importlib.util.spec_from_file_location('fix_wheel_cmake_paths', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_patch_then_revert_restores_only_what_it_patched(fix, tmp_path):
    venv = tmp_path / 'venv'
    files = {}
    for package in ('std_msgs', 'sensor_msgs', 'other'):
        cmake = venv / 'share' / package / 'cmake' / f'{package}Export.cmake'
        cmake.parent.mkdir(parents=True)
        text = (f'set(INC "{fix.WHEEL_PYTHON_INCLUDE};{fix.WHEEL_NUMPY_INCLUDE}")\n'
                if package != 'other' else 'set(INC "/usr/include")\n')
        cmake.write_text(text)
        files[package] = (cmake, text)
    assert fix.apply(venv) == 0
    for package in ('std_msgs', 'sensor_msgs'):
        patched = files[package][0].read_text()
        assert fix.WHEEL_PYTHON_INCLUDE not in patched
        assert fix.WHEEL_NUMPY_INCLUDE not in patched
    assert files['other'][0].read_text() == files['other'][1]
    # A reinstall replaces one file after patching (say, another distro's wheel).
    replaced = 'set(INC "from another wheel")\n'
    files['sensor_msgs'][0].write_text(replaced)
    assert fix.revert(venv) == 0
    assert files['std_msgs'][0].read_text() == files['std_msgs'][1]
    assert files['sensor_msgs'][0].read_text() == replaced
    assert not (venv / fix.MANIFEST_NAME).exists()


def test_manifest_of_the_earlier_format_still_reverts(fix, tmp_path):
    venv = tmp_path / 'venv'
    cmake = venv / 'share' / 'pkg' / 'cmake' / 'pkgExport.cmake'
    cmake.parent.mkdir(parents=True)
    cmake.write_text('patched\n')
    (venv / fix.MANIFEST_NAME).write_text('{"%s": "original\\n"}' % cmake)
    assert fix.revert(venv) == 0
    assert cmake.read_text() == 'original\n'
