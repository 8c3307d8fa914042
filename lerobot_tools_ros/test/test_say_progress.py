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
`say`'s progress end to end: policy text -> dispatcher -> RunTool goal -> tool_server -> speaker.

Real processes over DDS with the packaged parameters (config/lerobot_tools.yaml): the dispatcher
calls `say` as a `RunTool` action, tool_server's `say` synthesizes with espeak-ng and lasts until
the speaker played it (wav sink, played in real time), and the
goal's feedback comes out on lerobot_tools/progress: `synthesizing`, then `playing` with the
speaker's own frame counts, up to 1.0 - what was really heard, checked against the WAV file.
"""

import json
import re

from conftest import PACKAGE_DIR, spin_until
from lerobot_tools_interfaces.msg import ToolProgress, ToolResult
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
TEXT = 'Progress on this topic comes from what the speaker really played.'


def test_say_progress_over_the_action_rises_to_one_from_the_speakers_frames(
        start_node, ros_node, tmp_path):
    import soundfile

    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': DEFAULT_TOOLS}))
    out = tmp_path / 'audio'
    packaged = ['--params-file', str(PACKAGE_DIR / 'config' / 'lerobot_tools.yaml')]
    speaker = start_node('lerobot_tools_ros.speaker.node', *packaged, '-p', 'sink:=wav',
                         '-p', f'output_dir:={out}')
    server = start_node('lerobot_tools_ros.tool_server.node', *packaged, '-p', 'tools:=[say]',
                        '-p', f'dataset:={root}', '-p', 'tool.say.backend:=espeak_ng')
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', *packaged,
                            '-p', f'dataset:={root}')
    progress: list[ToolProgress] = []
    results: list[ToolResult] = []
    ros_node.create_subscription(ToolProgress, '/lerobot_tools/progress', progress.append,
                                 RELIABLE)
    ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append, RELIABLE)
    text = ros_node.create_publisher(String, '/policy/text', RELIABLE)
    up = spin_until(ros_node, lambda: (
        text.get_subscription_count() > 0
        and ros_node.count_publishers('/lerobot_tools/progress') > 0
        and ros_node.count_publishers('/lerobot_tools/results') > 0
        and ros_node.count_publishers('/speaker/status') > 0
        and '/lerobot_tools/say/_action/send_goal' in dict(
            ros_node.get_service_names_and_types())), 60.0)
    assert up, speaker.output() + server.output() + dispatcher.output()
    spin_until(ros_node, lambda: False, 1.0)  # both directions matched

    text.publish(String(data=f'<say>{TEXT}</say>'))
    assert spin_until(ros_node, lambda: bool(results), 60.0), (
        server.output()[-3000:] + dispatcher.output()[-3000:])
    spin_until(ros_node, lambda: False, 0.3)
    (result,) = results
    assert result.success, result
    mine = [p for p in progress if p.call_id == result.call_id and p.name == 'say']
    stages = [p.stage for p in mine]
    assert stages and stages[0] == 'synthesizing', stages
    assert stages[-1] == 'playing' and 'synthesizing' not in stages[stages.index('playing'):]
    playing = [p.progress for p in mine if p.stage == 'playing' and p.progress >= 0]
    assert playing == sorted(playing) and playing[-1] == 1.0, playing
    assert len(set(playing)) >= 5, playing  # reported while it played, not only at the end

    # The last report's seconds are the speaker's frame count: what the WAV file holds.
    uid = json.loads(result.content)['utterance_id']
    samples, rate = soundfile.read(out / f'{uid}.wav')
    played = float(re.match(r'([0-9.]+) s played', mine[-1].detail).group(1))
    assert abs(played - len(samples) / rate) <= 0.01, (played, len(samples) / rate)
