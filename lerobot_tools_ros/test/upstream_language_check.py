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

`python upstream_language_check.py ROOT EPISODE FRAME...` opens ROOT with `LeRobotDataset` (as a
user would: metadata, data files, image features decoded), takes EPISODE's frames, and renders
each FRAME's chat messages with `language_render.render_sample`. Prints one JSON object: the
tools, the language features, each frame's events as LeRobot decodes them (and those of the
other episodes, keyed `episode:frame`), the shape of each camera image, and the rendered
messages. Used by test_dataset_events.py; never imported by the
package.
"""

import json
import pathlib
import sys


def main(root: pathlib.Path, episode: int, frames: list[int]) -> dict:
    from lerobot.configs.recipe import MessageTurn, TrainingRecipe
    from lerobot.datasets.language import DEFAULT_TOOLS
    from lerobot.datasets.language_render import render_sample
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    dataset = LeRobotDataset('local/checked', root=root)
    meta = dataset.meta
    # The speech turn of upstream's own recipes: the user's interjection, then the target
    # assistant message carrying the say call emitted at this frame.
    recipe = TrainingRecipe(messages=[
        MessageTurn(role='user', content='${task}', stream='high_level'),
        MessageTurn(role='user', content='${interjection}', stream='high_level',
                    if_present='interjection'),
        MessageTurn(role='assistant', content=None, stream='high_level', target=True,
                    if_present='speech', tool_calls_from='speech'),
    ])
    cameras = [key for key in meta.features if key.startswith('observation.images.')]
    by_frame, other_events = {}, {}
    for index in range(len(dataset)):
        item = dataset[index]
        if int(item['episode_index']) == episode:
            by_frame[int(item['frame_index'])] = item
        elif item['language_events']:
            other_events[f"{int(item['episode_index'])}:{int(item['frame_index'])}"] = \
                item['language_events']
    out = {'tools': meta.tools, 'default_tools': DEFAULT_TOOLS, 'frames': len(by_frame),
           'has_language_columns': meta.has_language_columns,
           'language_features': {k: v for k, v in meta.features.items()
                                 if v['dtype'] == 'language'},
           'image_shapes': {key: list(by_frame[0][key].shape) for key in cameras},
           'events': {}, 'rendered': {}, 'other_episodes_events': other_events}
    for frame, item in sorted(by_frame.items()):
        if item['language_events']:
            out['events'][frame] = item['language_events']
    for frame in frames:
        item = by_frame[frame]
        out['rendered'][frame] = render_sample(
            recipe=recipe, persistent=item['language_persistent'],
            events=item['language_events'], t=float(item['timestamp']), sample_idx=frame,
            task='task')
    return out


if __name__ == '__main__':
    print(json.dumps(main(pathlib.Path(sys.argv[1]), int(sys.argv[2]),
                          [int(f) for f in sys.argv[3:]])))
