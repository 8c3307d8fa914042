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
Make a small annotated dataset with LeRobot's own writer code (the Python 3.12 venv, 0.6.1).

`python upstream_make_dataset.py ROOT` records two episodes of FRAMES frames at FPS with
`LeRobotDataset.create` / `add_frame` / `save_episode` / `finalize` (an image camera, no video),
then annotates episode 0 the way the steerable annotation pipeline does: staged rows in
`EpisodeStaging` (a plan, speech atoms from `speech_atom`, an interjection, a VQA pair, and a
row of a style the project registers in `EXTENDED_STYLES` / `EVENT_ONLY_STYLES`), checked by
`StagingValidator`, written by `LanguageColumnsWriter`, and info.json updated by the executor's
own step. Episode 0's first say carries an OpenAI call id and an argument whose value is null,
both valid upstream. Episode 1 is left unannotated (empty language cells). Prints the frame
timestamps of episode 0 as JSON. Used by test_dataset_events.py; never imported by the package.
"""

import json
import pathlib
import sys

FPS = 5
FRAMES = 20
TASK = 'Put the cube in the bin.'
EXTENDED_STYLE = 'mood'
CAMERA = 'observation.images.front'
JOINTS = ['shoulder_pan.pos', 'shoulder_lift.pos', 'elbow_flex.pos', 'wrist_flex.pos',
          'wrist_roll.pos', 'gripper.pos']


def record(root: pathlib.Path) -> None:
    import numpy as np
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    features = {
        'observation.state': {'dtype': 'float32', 'shape': (6,), 'names': JOINTS},
        'action': {'dtype': 'float32', 'shape': (6,), 'names': JOINTS},
        CAMERA: {'dtype': 'image', 'shape': (48, 64, 3),
                 'names': ['height', 'width', 'channels']},
    }
    dataset = LeRobotDataset.create(repo_id='local/upstream-made', fps=FPS, features=features,
                                    root=root, robot_type='so101', use_videos=False)
    for episode in range(2):
        for frame in range(FRAMES):
            position = np.full(6, 0.01 * frame, dtype=np.float32)
            image = np.full((48, 64, 3), (40 * episode + frame) % 256, dtype=np.uint8)
            dataset.add_frame({'observation.state': position, 'action': position,
                               CAMERA: image, 'task': TASK})
        dataset.save_episode()
    dataset.finalize()


def annotate(root: pathlib.Path, staging_dir: pathlib.Path) -> list[float]:
    from lerobot.annotations.steerable_pipeline.executor import Executor
    from lerobot.annotations.steerable_pipeline.reader import iter_episodes
    from lerobot.annotations.steerable_pipeline.staging import EpisodeStaging
    from lerobot.annotations.steerable_pipeline.validator import StagingValidator
    from lerobot.annotations.steerable_pipeline.writer import LanguageColumnsWriter, speech_atom
    from lerobot.datasets import language

    # A project registering its own event style, as language.py says to.
    language.EXTENDED_STYLES.add(EXTENDED_STYLE)
    language.STYLE_REGISTRY.add(EXTENDED_STYLE)
    language.EVENT_ONLY_STYLES.add(EXTENDED_STYLE)

    records = list(iter_episodes(root))
    stamps = records[0].frame_timestamps
    first_say = speech_atom(stamps[0], 'I will put the red cube in the bin.')
    first_say['tool_calls'][0]['id'] = 'call_abc123'
    first_say['tool_calls'][0]['function']['arguments']['voice'] = None
    staging = EpisodeStaging(staging_dir, 0)
    staging.write('plan', [
        {'role': 'assistant', 'content': '1. Find the cube. 2. Place it in the bin.',
         'style': 'plan', 'timestamp': stamps[0], 'camera': None, 'tool_calls': None},
        # The plan refresh upstream expects at every interjection.
        {'role': 'assistant', 'content': '1. Find the blue cube. 2. Place it in the bin.',
         'style': 'plan', 'timestamp': stamps[10], 'camera': None, 'tool_calls': None}])
    staging.write('interjections', [
        first_say,
        {'role': 'user', 'content': 'Use the blue cube instead.', 'style': 'interjection',
         'timestamp': stamps[10], 'camera': None, 'tool_calls': None},
        speech_atom(stamps[10], 'OK, I will use the blue cube.'),
        {'role': 'assistant', 'content': 'cheerful', 'style': EXTENDED_STYLE,
         'timestamp': stamps[3], 'camera': None, 'tool_calls': None}])
    staging.write('vqa', [
        {'role': 'user', 'content': 'How many cubes?', 'style': 'vqa', 'timestamp': stamps[5],
         'camera': CAMERA, 'tool_calls': None},
        {'role': 'assistant', 'content': '{"label": "cube", "count": 2}', 'style': 'vqa',
         'timestamp': stamps[5], 'camera': CAMERA, 'tool_calls': None}])
    report = StagingValidator(dataset_camera_keys=(CAMERA,)).validate(records, staging_dir)
    if not report.ok:
        raise SystemExit(f'upstream validator: {report.summary()}: {report.errors}')
    LanguageColumnsWriter().write_all(records, staging_dir, root)
    Executor._ensure_annotation_metadata_in_info(root)
    return list(stamps)


if __name__ == '__main__':
    target = pathlib.Path(sys.argv[1])
    record(target)
    print(json.dumps(annotate(target, target.parent / f'{target.name}-staging')))
