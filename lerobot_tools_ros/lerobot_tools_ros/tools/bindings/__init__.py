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
Bind catalog tools to a robot's existing ROS services, actions and topics, without code.

One module per binding kind (``service``, ``action``, ``publish``, ``read``), registered in
``KINDS`` (adding a kind: one new file and one line here); ``mapping`` is the small language
that fills requests, goals and messages from a tool's arguments; ``interfaces`` resolves types
by name and converts between JSON and messages; ``loader`` reads and checks a bindings file.
"""

import importlib
from typing import Any

__all__ = ['KINDS', 'binding_kind']

KINDS: dict[str, str] = {
    'service': 'lerobot_tools_ros.tools.bindings.service:ServiceBinding',
    'action': 'lerobot_tools_ros.tools.bindings.action:ActionBinding',
    'publish': 'lerobot_tools_ros.tools.bindings.publish:PublishBinding',
    'read': 'lerobot_tools_ros.tools.bindings.read:ReadBinding',
}


def binding_kind(kind: str) -> Any:
    """Return the class that implements binding ``kind`` (``KeyError`` when unknown)."""
    module_name, _, attribute = KINDS[kind].partition(':')
    return getattr(importlib.import_module(module_name), attribute)
