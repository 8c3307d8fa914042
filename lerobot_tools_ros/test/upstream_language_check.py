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
Read a dataset with LeRobot's own code (run by the Python 3.12 venv holding lerobot 0.6.1).

`python upstream_language_check.py ROOT FRAME...` loads ROOT with `LeRobotDatasetMetadata`,
its data with LeRobot's `load_nested_dataset` and the HF features LeRobot derives from
info.json (as `LeRobotDataset` does), and renders each FRAME's chat messages with
`language_render.render_sample`. Prints one JSON object: the tools, the language features,
each frame's events as LeRobot decodes them, and the rendered messages. Used by
test_dataset_events.py; never imported by the package.
"""

import json
import pathlib
import sys


def main(root: pathlib.Path, frames: list[int]) -> dict:
    from lerobot.configs.recipe import MessageTurn, TrainingRecipe
    from lerobot.datasets.dataset_metadata import LeRobotDatasetMetadata
    from lerobot.datasets.feature_utils import get_hf_features_from_features
    from lerobot.datasets.io_utils import load_nested_dataset
    from lerobot.datasets.language import DEFAULT_TOOLS
    from lerobot.datasets.language_render import render_sample

    meta = LeRobotDatasetMetadata('local/checked', root=root)
    data = load_nested_dataset(root / 'data', features=get_hf_features_from_features(
        meta.features))
    # The speech turn of upstream's own recipes: the user's interjection, then the target
    # assistant message carrying the say call emitted at this frame.
    recipe = TrainingRecipe(messages=[
        MessageTurn(role='user', content='${task}', stream='high_level'),
        MessageTurn(role='user', content='${interjection}', stream='high_level',
                    if_present='interjection'),
        MessageTurn(role='assistant', content=None, stream='high_level', target=True,
                    if_present='speech', tool_calls_from='speech'),
    ])
    by_frame = {}
    for index in range(len(data)):
        row = data[index]
        by_frame[int(row['frame_index'])] = row
    out = {'tools': meta.tools, 'default_tools': DEFAULT_TOOLS,
           'has_language_columns': meta.has_language_columns,
           'language_features': {k: v for k, v in meta.features.items()
                                 if v['dtype'] == 'language'},
           'events': {}, 'rendered': {}}
    for frame, row in sorted(by_frame.items()):
        if row['language_events']:
            out['events'][frame] = row['language_events']
    for frame in frames:
        row = by_frame[frame]
        out['rendered'][frame] = render_sample(
            recipe=recipe, persistent=row['language_persistent'],
            events=row['language_events'], t=row['timestamp'], sample_idx=frame, task='task')
    return out


if __name__ == '__main__':
    print(json.dumps(main(pathlib.Path(sys.argv[1]), [int(f) for f in sys.argv[2:]])))
