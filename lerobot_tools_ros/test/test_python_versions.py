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
The code must run on the Pythons of Humble (3.10), Jazzy (3.12) and Kilted (3.12).

The wheels here are cp311, so the other versions are checked statically: vermin computes the
minimum version every construct and library call needs, and every other interpreter found on
the machine compiles the sources.
"""

import pathlib
import shutil
import subprocess
import sys

import pytest

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]
SOURCES = [PACKAGE_DIR / 'lerobot_tools_ros', PACKAGE_DIR / 'launch', PACKAGE_DIR / 'test']


def test_minimum_python_is_3_10():
    vermin = shutil.which('vermin')
    assert vermin, 'vermin is missing: pip install vermin (requirements.txt pins it)'
    result = subprocess.run(
        [vermin, '-t=3.10-', '--violations', '--no-tips', '--eval-annotations',
         *map(str, SOURCES)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def find_python(version: str) -> str | None:
    """Find an interpreter of `version`: on PATH, or one pyenv installed (shims may hide it)."""
    candidates = [pathlib.Path(p) for p in sorted(pathlib.Path.home().glob(
        f'.pyenv/versions/{version}.*/bin/python{version}'))]
    found = shutil.which(f'python{version}')
    if found and '.pyenv/shims' not in found:
        candidates.insert(0, pathlib.Path(found))
    return str(candidates[0]) if candidates else None


@pytest.mark.parametrize('version', ['3.10', '3.12'])
def test_sources_compile_on_other_pythons(version, tmp_path):
    interpreter = find_python(version)
    if interpreter is None or version == f'{sys.version_info.major}.{sys.version_info.minor}':
        pytest.skip(f'python{version} is not installed here')
    probe = subprocess.run([interpreter, '-c', 'import sys; print(sys.version_info[:2])'],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f'python{version} does not run here: {probe.stderr.strip()[:200]}')
    for source in SOURCES:
        result = subprocess.run(
            [interpreter, '-m', 'compileall', '-q', '-d', str(source), str(source)],
            capture_output=True, text=True, timeout=300,
            env={'PYTHONPYCACHEPREFIX': str(tmp_path), 'PATH': '/usr/bin:/bin'})
        assert result.returncode == 0, result.stdout + result.stderr
