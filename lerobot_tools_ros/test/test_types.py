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

"""The package and its benchmarks pass the static type check (mypy, setup.cfg's [mypy])."""

import subprocess
import sys

from conftest import PACKAGE_DIR
import pytest

# Figures come only from the benchmarks, and nothing else runs them: a bench that calls an API
# the package no longer has (or sets an attribute nothing reads) would crash, or silently
# measure something else, at its next run. Checked with the package, in the same mypy run.
BENCH_DIR = PACKAGE_DIR.parent / 'bench'


@pytest.mark.linter
def test_types(tmp_path):
    """Mypy reports no error in the package or the benches, from a fresh cache (as in CI)."""
    # What a developer runs from lerobot_tools_ros/: python -m mypy lerobot_tools_ros ../bench
    # (bench/ is outside the package: absent where only the package is checked out).
    paths = ['lerobot_tools_ros'] + ([str(BENCH_DIR)] if BENCH_DIR.is_dir() else [])
    run = subprocess.run(
        [sys.executable, '-m', 'mypy', '--config-file', str(PACKAGE_DIR / 'setup.cfg'),
         '--cache-dir', str(tmp_path / 'mypy_cache'), *paths],
        cwd=PACKAGE_DIR, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f'mypy found type errors:\n{run.stdout}{run.stderr}'
