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
The node executables (`ros2 run lerobot_tools_ros <name>`): import the node's module, run it.

A Ctrl-C (or the SIGINT `ros2 launch` sends at shutdown) that arrives while the node's module is
still being imported, before `runner.run_node` takes over the signals, ends the process quietly
with status 130 instead of a KeyboardInterrupt traceback.
"""

import importlib
import sys

__all__ = ['demo_camera', 'demo_gripper', 'dispatcher', 'mcp_server', 'replay',
           'scripted_policy', 'speaker', 'tool_server']


def _run(module: str) -> int:
    try:
        main = importlib.import_module(f'lerobot_tools_ros.nodes.{module}').main
        return main()
    except KeyboardInterrupt:
        return 130


def dispatcher() -> int:
    """Run the dispatcher node."""
    return _run('dispatcher')


def tool_server() -> int:
    """Run the tool_server node."""
    return _run('tool_server')


def speaker() -> int:
    """Run the speaker node."""
    return _run('speaker')


def mcp_server() -> int:
    """Run the MCP server node."""
    return _run('mcp_server')


def replay() -> int:
    """Run the episode replay node."""
    return _run('replay')


def demo_camera() -> int:
    """Run the demo camera node."""
    return _run('demo_camera')


def demo_gripper() -> int:
    """Run the demo gripper node."""
    return _run('demo_gripper')


def scripted_policy() -> int:
    """Run the scripted policy node."""
    return _run('scripted_policy')


if __name__ == '__main__':
    sys.exit(_run(sys.argv.pop(1)))
