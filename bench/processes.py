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

"""The package's node processes as the benches start and stop them (output to a log file)."""

import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]


def node_env(domain: int, base: dict | None = None) -> dict:
    """Return the environment of the benches' nodes: ``domain``, loopback only, the package."""
    env = dict(os.environ if base is None else base, ROS_DOMAIN_ID=str(domain),
               PYTHONUNBUFFERED='1', ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    env['PYTHONPATH'] = os.pathsep.join(
        p for p in (str(REPO / 'lerobot_tools_ros'), env.get('PYTHONPATH', '')) if p)
    return env


def start_node(module: str, ros_args: list[str], env: dict,
               log: pathlib.Path) -> subprocess.Popen:
    """Start ``lerobot_tools_ros.nodes.<module>`` with ``--ros-args`` ``ros_args``."""
    args = [sys.executable, '-m', f'lerobot_tools_ros.nodes.{module}', '--ros-args', *ros_args]
    with open(log, 'wb') as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)


def parameters(values: list[str]) -> list[str]:
    """Return ``-p name:=value`` arguments for ``values``."""
    return [arg for value in values for arg in ('-p', value)]


def stop(proc: subprocess.Popen) -> None:
    """Stop a node as Ctrl-C does; kill it if it has not ended within 10 s."""
    if proc.poll() is None:
        proc.send_signal(2)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
