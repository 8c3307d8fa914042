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
The demo in a namespace, and cameras chosen by the dataset, as a user runs them.

- `bringup --demo --namespace NS`: camera, policy, dispatcher, tool_server and speaker all
  live under /NS, so the policy reaches the dispatcher and the results come on
  /NS/lerobot_tools/results (as `ros2 launch ... demo.launch.py namespace:=NS`).
- A dataset whose info.json declares observation.images.front and observation.images.wrist gives
  record_observation two cameras, with no camera parameter written anywhere.
"""

import json
import os
import re
import sys

from conftest import PACKAGE_DIR, prove_service, spin_until
from lerobot_tools_interfaces.msg import ErrorCodes, ToolResult
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros.catalog import SAMPLE_DATASET
from lerobot_tools_ros.names import READINESS_PROBE
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.qos import QoSProfile, ReliabilityPolicy

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


def test_demo_in_a_namespace_reaches_the_dispatcher(start_process, ros_node, tmp_path):
    namespace = f'robot_{os.getpid()}'
    results: list[ToolResult] = []
    ros_node.create_subscription(ToolResult, f'/{namespace}/lerobot_tools/results',
                                 results.append, RELIABLE)
    outside: list[ToolResult] = []
    ros_node.create_subscription(ToolResult, '/lerobot_tools/results', outside.append, RELIABLE)
    out = tmp_path / 'out'
    proc = start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup', '--demo',
                          '--namespace', namespace, '--tts-backend', 'espeak_ng',
                          '--duration', '120', '--output-dir', str(out)], name='bringup')
    # The default script: 3 say, 2 record_observation, close_gripper (an action on the demo
    # gripper, in the namespace too), 1 record_observation with a bad label.
    expected = sorted([('say', 'ok')] * 3 + [('record_observation', 'ok')] * 2
                      + [('close_gripper', 'ok')]
                      + [('record_observation', ErrorCodes.INVALID_ARGUMENTS)])
    assert spin_until(ros_node, lambda: proc.proc.poll() is not None, 140.0), \
        proc.output()[-3000:]
    output = proc.output()
    # Every result, as bringup's own monitor took it from /NS/lerobot_tools/results (one row
    # each: time, tool, arguments, outcome, latency).
    rows = re.findall(r'^ +\d+\.\d\d  (\S+) .* (\S+) +\d+\.\dms$', output, re.MULTILINE)
    assert sorted(rows) == expected, output[-3000:]
    # And from outside the process: this node sees them on the namespaced topic (all of them
    # but, on a loaded machine, any published before its subscription was matched), none
    # on the global one.
    received = [(r.name, r.error_code or 'ok') for r in results]
    assert received and all(received.count(row) <= expected.count(row) for row in received)
    assert not outside, 'results escaped the namespace'
    assert (out / 'observations' / 'before_grasp.png').stat().st_size > 0
    assert (out / 'observations' / 'after_place.png').stat().st_size > 0
    assert f'/{namespace}/policy/text' in proc.output()


def two_camera_dataset(root):
    info = json.loads((SAMPLE_DATASET / 'meta' / 'info.json').read_text())
    info['features']['observation.images.wrist'] = info['features']['observation.images.front']
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps(info))
    return root


def call(ros_node, client, request):
    """Call once, after a request that changes nothing proved that answers reach us."""
    probe = (CallTool.Request(name=READINESS_PROBE) if isinstance(request, CallTool.Request)
             else type(request)())
    prove_service(ros_node, client, probe)
    future = client.call_async(request)
    assert spin_until(ros_node, future.done, 20.0)
    return future.result()


def test_two_dataset_cameras_without_a_camera_parameter(start_node, ros_node, tmp_path):
    dataset = two_camera_dataset(tmp_path / 'dataset')
    out = tmp_path / 'observations'
    for camera in ('front', 'wrist'):
        start_node('lerobot_tools_ros.demo.camera', '-r', f'__node:={camera}_camera',
                   '-p', f'topic:=camera/{camera}/image_raw', '-p', 'width:=64',
                   '-p', 'height:=48', name=f'{camera}_camera')
    server = start_node('lerobot_tools_ros.tool_server.node', '--params-file', str(PARAMS_FILE),
                        '-p', f'dataset:={dataset}', '-p', 'tools:=[record_observation]',
                        '-p', f'tool.record_observation.output_dir:={out}')
    lister = ros_node.create_client(ListParameters, '/tool_server/list_parameters')
    getter = ros_node.create_client(GetParameters, '/tool_server/get_parameters')
    record = ros_node.create_client(CallTool, '/lerobot_tools/record_observation')
    assert spin_until(ros_node, lambda: lister.service_is_ready() and getter.service_is_ready()
                      and record.service_is_ready(), 30.0), server.output()
    names = call(ros_node, lister, ListParameters.Request(
        prefixes=['tool.record_observation.camera'])).result.names
    assert sorted(names) == [f'tool.record_observation.camera.{c}.{k}'
                             for c in ('front', 'wrist') for k in ('topic', 'transport')]
    values = call(ros_node, getter, GetParameters.Request(names=[
        'tool.record_observation.camera.front.topic',
        'tool.record_observation.camera.wrist.topic'])).values
    assert [v.string_value for v in values] == ['camera/front/image_raw',
                                                'camera/wrist/image_raw']
    # Both cameras are really read: one call saves a still from each.
    request = CallTool.Request(call_id='two-cameras', name='record_observation',
                               arguments=json.dumps({'label': 'both'}))
    topics = ['/camera/front/image_raw', '/camera/wrist/image_raw']
    assert spin_until(ros_node, lambda: all(
        ros_node.count_publishers(t) and ros_node.count_subscribers(t) for t in topics), 30.0)
    spin_until(ros_node, lambda: False, 1.5)  # 15 fps cameras: frames have arrived by then
    response = call(ros_node, record, request)
    assert response.success, response.error_message
    content = json.loads(response.content)
    assert sorted(content['cameras']) == ['front', 'wrist']
    assert all(content['cameras'][c]['ok'] for c in ('front', 'wrist'))
    assert (out / 'both_front.png').stat().st_size > 0
    assert (out / 'both_wrist.png').stat().st_size > 0
