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

"""`lerobot-tools-ros bringup` as a real process, driven over DDS as a policy runtime would."""

import json
import re
import sys

from conftest import prove_service, spin_until
import cv2
from lerobot_tools_interfaces.msg import ErrorCodes, SpeakerStatus, ToolResult
import pytest
from rcl_interfaces.srv import GetParameters
from rclpy.parameter import parameter_value_to_python
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import SetBool

RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


@pytest.fixture
def bringup(start_process, ros_node, tmp_path):
    out = tmp_path / 'out'
    proc = start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup',
                          '--demo-camera', '--tts-backend', 'espeak_ng', '--duration', '300',
                          '--output-dir', str(out)], name='bringup')
    results: list[ToolResult] = []
    statuses: list[SpeakerStatus] = []
    ros_node.create_subscription(SpeakerStatus, '/speaker/status', statuses.append, RELIABLE)
    probes: list[ToolResult] = []  # a slow machine may send several; late ones stay here

    def on_result(result: ToolResult) -> None:
        (probes if result.name == 'probe' else results).append(result)
    sub = ros_node.create_subscription(ToolResult, '/lerobot_tools/results', on_result, RELIABLE)
    pub = ros_node.create_publisher(String, '/policy/text', RELIABLE)
    enable = ros_node.create_client(SetBool, '/dispatcher/set_enabled')
    services = ('/lerobot_tools/say', '/lerobot_tools/record_observation')
    up = spin_until(ros_node, lambda: (
        pub.get_subscription_count() > 0 and ros_node.count_publishers(sub.topic_name) > 0
        and all(name in dict(ros_node.get_service_names_and_types()) for name in services)
        and enable.service_is_ready()), 60.0)
    assert up, 'bringup did not come up:\n' + proc.output()
    # Probe until a result arrives: the dispatcher's writer must have matched our reader too.
    for _ in range(60):
        pub.publish(String(data='<tool_call>{"name": "probe", "arguments": {}}</tool_call>'))
        if spin_until(ros_node, lambda: bool(probes), 0.5):
            break
    assert probes, 'no result reached the test node:\n' + proc.output()
    assert not results, results
    # The camera must have delivered a frame before record_observation can succeed.
    spin_until(ros_node, lambda: False, 1.0)

    def send(text: str, expect: int) -> list[ToolResult]:
        before = len(results)
        pub.publish(String(data=text))
        assert spin_until(ros_node, lambda: len(results) >= before + expect, 30.0), \
            proc.output()[-3000:]
        return results[before:]

    def set_enabled(on: bool) -> None:
        prove_service(ros_node, enable, SetBool.Request(data=on))  # the same state twice: once

    def finished_utterances() -> int:
        return sum(s.state == SpeakerStatus.FINISHED for s in statuses)

    def wait_finished(count: int) -> None:
        assert spin_until(ros_node, lambda: finished_utterances() >= count, 30.0), statuses

    return proc, send, set_enabled, out, results, wait_finished


def test_bringup_runs_both_tools_in_three_formats_and_reports_every_call(bringup):
    proc, send, set_enabled, out, results, wait_finished = bringup
    (spoken,) = send('Starting.\n<say>Hello from the robot.</say>', 1)
    assert spoken.success, spoken.error_message
    assert json.loads(spoken.content)['backend'] == 'espeak_ng'
    (still,) = send('<tool_call>{"name": "record_observation", "arguments": '
                    '{"label": "table"}}</tool_call>', 1)
    assert still.success, still.error_message
    pair = send('[say(text="Two at once."), record_observation(label="bin", format="jpg")]', 2)
    assert all(r.success for r in pair), [r.error_message for r in pair]
    (bad,) = send('<tool_call>{"name": "record_observation", "arguments": '
                  '{"label": "../escape"}}</tool_call>', 1)
    assert bad.error_code == ErrorCodes.INVALID_ARGUMENTS
    set_enabled(False)
    (paused,) = send('<say>Are you there?</say>', 1)
    assert paused.error_code == ErrorCodes.PAUSED
    set_enabled(True)
    (resumed,) = send('<say>Back again.</say>', 1)
    assert resumed.success
    assert len({r.call_id for r in results}) == len(results) == 7
    wait_finished(3)  # the speaker wrote every utterance

    assert proc.stop() == 0
    output = proc.output()
    png = out / 'observations' / 'table.png'
    assert cv2.imread(str(png)).shape == (480, 640, 3)
    assert (out / 'observations' / 'bin.jpg').is_file()
    wavs = sorted((out / 'audio').glob('*.wav'))
    assert len(wavs) == 3
    assert str(png) in output and all(str(w) in output for w in wavs)
    # The live table printed one row per result.
    assert len(re.findall(r'^\s+\d+\.\d+\s+(say|record_observation)\s', output, re.M)) == 7


def test_overrides_and_params_file_apply_under_a_namespace(start_process, ros_node, tmp_path):
    # The file's /**/node keys must match inside the namespace, and a command-line override
    # must win over the file's value for the same parameter.
    dataset = tmp_path / 'dataset'
    (dataset / 'meta').mkdir(parents=True)
    (dataset / 'meta' / 'info.json').write_text(json.dumps({'fps': 30, 'features': {}}))
    params = tmp_path / 'params.yaml'
    params.write_text(
        '/**/dispatcher:\n  ros__parameters:\n    max_pending: 77\n    dataset: from_file\n'
        '    tool:\n      say:\n        timeout_s: 42.0\n'
        '/**/tool_server:\n  ros__parameters:\n    tools: [say]\n'
        '    tool:\n      say:\n        backend: pocket_tts\n'
        '/**/speaker:\n  ros__parameters:\n    sink: wav\n    output_dir: /from/file\n')
    out, audit = tmp_path / 'out', tmp_path / 'audit.jsonl'
    proc = start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup',
                          '--namespace', 'robot1', '--params', str(params),
                          '--dataset', str(dataset), '--tts-backend', 'espeak_ng',
                          '--output-dir', str(out), '--audit-log', str(audit),
                          '--duration', '120'], name='bringup')

    def get(node: str, *names: str) -> dict:
        client = ros_node.create_client(GetParameters, f'/robot1/{node}/get_parameters')
        assert spin_until(ros_node, client.service_is_ready, 60.0), proc.output()[-3000:]
        answer = prove_service(ros_node, client, GetParameters.Request(names=list(names)))
        values = [parameter_value_to_python(v) for v in answer.values]
        ros_node.destroy_client(client)
        return dict(zip(names, values))

    assert get('dispatcher', 'dataset', 'max_pending', 'tool.say.timeout_s', 'audit_log') == {
        'dataset': str(dataset), 'max_pending': 77, 'tool.say.timeout_s': 42.0,
        'audit_log': str(audit.resolve())}
    assert get('tool_server', 'tools', 'dataset', 'tool.say.backend') == {
        'tools': ['say'], 'dataset': str(dataset), 'tool.say.backend': 'espeak_ng'}
    assert get('speaker', 'sink', 'output_dir') == {
        'sink': 'wav', 'output_dir': str(out.resolve() / 'audio')}
    names = dict(ros_node.get_service_names_and_types())
    assert '/robot1/lerobot_tools/say' in names and '/lerobot_tools/say' not in names
    assert proc.stop() == 0
    assert 'goes to /robot1/policy/text' in proc.output()
    assert audit.is_file()


def _lifecycle_state(ros_node, node: str) -> str:
    from lifecycle_msgs.srv import GetState

    client = ros_node.create_client(GetState, f'/{node}/get_state')
    return prove_service(ros_node, client, GetState.Request(), 60.0).current_state.label


def test_bringup_managed_configures_and_activates_every_node(
        start_process, ros_node, tmp_path):
    proc = start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup', '--managed',
                          '--tts-backend', 'espeak_ng', '--duration', '300',
                          '--output-dir', str(tmp_path / 'out')], name='bringup')
    for node in ('dispatcher', 'tool_server', 'speaker'):
        assert _lifecycle_state(ros_node, node) == 'active', proc.output()
    results: list[ToolResult] = []
    ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append, RELIABLE)
    pub = ros_node.create_publisher(String, '/policy/text', RELIABLE)
    assert spin_until(ros_node, lambda: pub.get_subscription_count() > 0
                      and ros_node.count_publishers('/lerobot_tools/results') > 0, 30.0)
    spin_until(ros_node, lambda: False, 1.0)
    pub.publish(String(data='<say>Managed and active.</say>'))
    assert spin_until(ros_node, lambda: bool(results), 30.0), proc.output()
    assert results[0].success, results[0].error_message
    assert proc.stop() == 0, proc.output()
    for node in ('dispatcher', 'tool_server', 'speaker'):
        assert f'[bringup] {node}: active (managed)' in proc.output()


def test_bringup_managed_keeps_a_node_that_fails_to_configure_unconfigured(
        start_process, ros_node, tmp_path):
    proc = start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup', '--managed',
                          '--tts-backend', 'espeak_ng', '--duration', '300',
                          '--dataset', str(tmp_path / 'missing')], name='bringup')
    assert _lifecycle_state(ros_node, 'dispatcher') == 'unconfigured', proc.output()
    assert _lifecycle_state(ros_node, 'speaker') == 'active'
    output = proc.output()
    assert '[bringup] dispatcher stays unconfigured (dispatcher: configure failed' in output
    assert str(tmp_path / 'missing') in output
    assert proc.proc.poll() is None
    assert proc.stop() == 0, proc.output()
