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

"""The QoS choices of topic bindings (``qos: reliable | sensor_data | transient_local``)."""

from typing import Any

__all__ = ['qos_profile']


def qos_profile(choice: str) -> Any:
    """Return the rclpy QoS profile for a ``qos`` choice of the bindings file."""
    from rclpy.qos import (
        DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy,
    )
    if choice == 'sensor_data':
        return qos_profile_sensor_data
    if choice == 'transient_local':  # latched topics (a map, a robot description)
        return QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
    return QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
