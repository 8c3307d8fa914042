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

"""The package passes the static type check (mypy, configured in setup.cfg's [mypy])."""

import subprocess
import sys

from conftest import PACKAGE_DIR
import pytest


@pytest.mark.linter
def test_types(tmp_path):
    """Mypy reports no error in the package, from a fresh cache (as in CI)."""
    # What a developer runs from lerobot_tools_ros/: python -m mypy lerobot_tools_ros
    run = subprocess.run(
        [sys.executable, '-m', 'mypy', '--config-file', str(PACKAGE_DIR / 'setup.cfg'),
         '--cache-dir', str(tmp_path / 'mypy_cache'), 'lerobot_tools_ros'],
        cwd=PACKAGE_DIR, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f'mypy found type errors:\n{run.stdout}{run.stderr}'
