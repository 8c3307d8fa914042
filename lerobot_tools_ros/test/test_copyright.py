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

import pytest

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.copyright
@pytest.mark.linter
def test_copyright():
    # Skipped here, never at import (see test_no_module_level_skips.py).
    ament_copyright = pytest.importorskip(
        'ament_copyright.main',
        reason='ament_copyright is not installed (it has no PyPI wheel); '
               'this check runs on ROS 2 installs with ros-<distro>-ament-copyright')
    rc = ament_copyright.main(argv=[str(PACKAGE_DIR), 'test'])
    assert rc == 0, 'Found errors'
