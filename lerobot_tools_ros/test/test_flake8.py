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

import pathlib
import subprocess
import sys

import pytest

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]
BENCH_DIR = PACKAGE_DIR.parent / 'bench'
DOCS_DIR = PACKAGE_DIR.parent / 'docs'  # the generator and the Sphinx extension


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    paths = [str(PACKAGE_DIR)] + [str(d) for d in (BENCH_DIR, DOCS_DIR) if d.is_dir()]
    # In a fresh process: flake8 forks workers, and a fork of this test process (which holds
    # rclpy contexts and threads from earlier tests) can crash in the child.
    run = subprocess.run([sys.executable, '-m', 'ament_flake8.main', *paths],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f'code style errors / warnings:\n{run.stdout}{run.stderr}'
