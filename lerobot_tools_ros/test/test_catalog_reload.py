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

"""A running dispatcher's ~/reload_catalog keeps the old catalog when the new one is unusable."""

import json

from conftest import spin_until
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
from std_srvs.srv import Trigger


def test_reload_to_only_invalid_or_colliding_entries_keeps_the_old_catalog(
        start_node, ros_node, tmp_path):
    info = tmp_path / 'dataset' / 'meta' / 'info.json'
    info.parent.mkdir(parents=True)
    good = {'codebase_version': 'v3.0', 'fps': 30, 'features': {},
            'tools': [ECHO_SCHEMA, *DEFAULT_TOOLS]}
    info.write_text(json.dumps(good))
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node',
                            '-p', f'dataset:={info.parent.parent}')
    reload = ros_node.create_client(Trigger, '/dispatcher/reload_catalog')
    assert spin_until(ros_node, reload.service_is_ready, 30.0), dispatcher.output()

    def reload_catalog() -> Trigger.Response:
        future = reload.call_async(Trigger.Request())
        assert spin_until(ros_node, future.done, 30.0), dispatcher.output()
        return future.result()

    # Every entry invalid: before, this reloaded "successfully" to an empty catalog.
    info.write_text(json.dumps(dict(good, tools=[
        {'type': 'function', 'function': {'name': 'say'}},
        {'type': 'function', 'function': {'name': 'bad name', 'parameters': {}}}])))
    refused = reload_catalog()
    assert not refused.success
    assert refused.message.startswith('kept the old catalog: ')
    assert 'none of the 2 declared tool(s) is valid' in refused.message
    # Back to the original file: nothing changed, so the old catalog really was kept.
    info.write_text(json.dumps(good))
    same = reload_catalog()
    assert same.success, same.message
    assert 'added none, removed none, changed none' in same.message
    # Two names that share a ROS name: the second is reported and left out.
    pick = json.loads(json.dumps(ECHO_SCHEMA))
    pick['function']['name'] = 'pick-up'
    pick_too = json.loads(json.dumps(ECHO_SCHEMA))
    pick_too['function']['name'] = 'pick_up'
    info.write_text(json.dumps(dict(good, tools=[*good['tools'], pick, pick_too])))
    added = reload_catalog()
    assert added.success, added.message
    assert "added ['pick-up']" in added.message
    assert spin_until(ros_node, lambda: "are both served as ROS name 'pick_up'"
                      in dispatcher.output(), 10.0), dispatcher.output()
