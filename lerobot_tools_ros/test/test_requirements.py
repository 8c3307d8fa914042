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
requirements-jazzy.txt stays requirements.txt with Jazzy's ROS wheels.

CI tests both distros, each in a venv made from its own file; a dependency added to one file
only would leave the other distro's venv without it.
"""

import pathlib
import re

import pytest

REPO_DIR = pathlib.Path(__file__).resolve().parents[2]
PIN = re.compile(r'^([A-Za-z0-9._-]+)==([^\s#;]+)')
# Kilted's ament_cmake_ros_core does not exist for Jazzy: ament_cmake_ros and what its CMake
# config needs take its place.
KILTED_ONLY = {'ros-ament-cmake-ros-core'}
JAZZY_ONLY = {'ros-ament-cmake-ros', 'ros-ament-cmake-gmock', 'ros-ament-cmake-gtest',
              'ros-ament-cmake-pytest'}


def pins(name: str) -> dict[str, str]:
    path = REPO_DIR / name
    if not path.exists():
        pytest.skip(f'{path} is not here (a package checked out without the repository root)')
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def test_other_pins_are_the_same_for_both_distros():
    kilted, jazzy = pins('requirements.txt'), pins('requirements-jazzy.txt')
    others = {name: version for name, version in kilted.items() if not name.startswith('ros-')}
    assert {name: jazzy.get(name) for name in others} == others


def test_every_ros_wheel_has_its_jazzy_pin():
    kilted, jazzy = pins('requirements.txt'), pins('requirements-jazzy.txt')
    kilted_ros = {name for name in kilted if name.startswith('ros-')}
    jazzy_ros = {name for name in jazzy if name.startswith('ros-')}
    assert kilted_ros - KILTED_ONLY == jazzy_ros - JAZZY_ONLY
    assert JAZZY_ONLY <= jazzy_ros
    assert not KILTED_ONLY & jazzy_ros


def test_jazzy_pins_are_jazzy_releases():
    jazzy = pins('requirements-jazzy.txt')
    assert jazzy['ros-rclpy'].startswith('7.'), 'Jazzy is rclpy 7.x (Kilted 9.x)'
    assert jazzy['ros-ament-cmake'].startswith('2.5.')
