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
The ``replay`` executable: the episode replay node (``lerobot_tools_ros.dataset.replay_node``).

``ros2 run lerobot_tools_ros replay`` starts it through ``nodes.entry``; ``python -m
lerobot_tools_ros.nodes.replay`` starts it too.
"""

import sys

from lerobot_tools_ros.dataset.replay_node import main

__all__ = ['main']

if __name__ == '__main__':
    sys.exit(main())
