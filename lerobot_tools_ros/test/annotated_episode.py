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
Small annotated LeRobot episodes, written the way LeRobot 0.6.1's annotation writer does.

`write_dataset` builds a v3 dataset with pyarrow alone, following upstream's schema and its
writer's code path (`LanguageColumnsWriter._materialize_table`: the language columns' Arrow
types are inferred by `pa.array`, so tool calls are structs, not JSON text; one row group per
episode): `meta/info.json`, `meta/tasks.parquet`, `meta/episodes/...` and
`data/chunk-000/file-000.parquet`. The package's sample dataset is this module's output:
`python test/annotated_episode.py lerobot_tools_ros/data/sample_dataset` rewrites it (and
`test_replay.py` checks that it is unchanged).
"""

import copy
import json
import pathlib
import struct
import sys
import zlib

import pyarrow as pa
import pyarrow.parquet as pq

# LeRobot 0.6.1's lerobot.datasets.language.SAY_TOOL_SCHEMA, verbatim.
UPSTREAM_SAY = {
    'type': 'function',
    'function': {
        'name': 'say',
        'description': 'Speak a short utterance to the user via the TTS executor.',
        'parameters': {
            'type': 'object',
            'properties': {'text': {'type': 'string',
                                    'description': 'The verbatim text to speak.'}},
            'required': ['text'],
        },
    },
}
FPS = 30
FRAMES = 90
TASK = 'Put the cube in the bin.'


def speech(text: str) -> dict:
    """Build what upstream's `speech_atom` builds (without the timestamp it buckets by)."""
    return {'role': 'assistant', 'content': None, 'style': None, 'camera': None,
            'tool_calls': [{'type': 'function',
                            'function': {'name': 'say', 'arguments': {'text': text}}}]}


def call(name: str, arguments: dict) -> dict:
    return {'role': 'assistant', 'content': None, 'style': None, 'camera': None,
            'tool_calls': [{'type': 'function',
                            'function': {'name': name, 'arguments': arguments}}]}


def interjection(text: str) -> dict:
    return {'role': 'user', 'content': text, 'style': 'interjection', 'camera': None,
            'tool_calls': None}


def persistent(style: str, timestamp: float, content: str) -> dict:
    return {'role': 'assistant', 'content': content, 'style': style, 'timestamp': timestamp,
            'camera': None, 'tool_calls': None}


# The sample episode: a plan, two subtasks, speech, an interjection answered by speech, and two
# record_observation calls. Keys are frame indices.
SAMPLE_EVENTS = {
    0: [speech('I will put the red cube in the bin.')],
    30: [call('record_observation', {'label': 'before_grasp'})],
    45: [interjection('Use the blue cube instead.'), speech('OK, I will use the blue cube.')],
    75: [call('record_observation', {'label': 'after_place'}),
         speech('Done. The blue cube is in the bin.')],
}
SAMPLE_PERSISTENT = [
    persistent('plan', 0.0, '1. Find the cube. 2. Pick it up. 3. Place it in the bin.'),
    persistent('subtask', 0.0, 'Find the red cube.'),
    persistent('subtask', 1.5, 'Pick up the blue cube and place it in the bin.'),
]


# The camera is an image feature (PNG frames in the data file, as LeRobot stores `dtype: image`),
# not a video one: the dataset then needs no video files to open in LeRobot.
CAMERA = 'observation.images.front'
IMAGE_HEIGHT, IMAGE_WIDTH = 48, 64


def png(height: int, width: int, rgb: tuple[int, int, int]) -> bytes:
    """Encode a solid-colour RGB image as PNG (deterministic bytes, no imaging library)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack('>I', len(data)) + kind + data
                + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff))
    rows = b''.join(b'\x00' + bytes(rgb) * width for _ in range(height))
    return (b'\x89PNG\r\n\x1a\n'
            + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows, 9)) + chunk(b'IEND', b''))


def frame_timestamps(frames: int = FRAMES, fps: int = FPS) -> list[float]:
    """Frame times as LeRobot stores them (float32 of index / fps)."""
    return pa.array([index / fps for index in range(frames)], pa.float32()).to_pylist()


def data_table(episodes: dict[int, tuple[dict[int, list[dict]], list[dict]]],
               frames: int = FRAMES, fps: int = FPS) -> pa.Table:
    """Build the data table: per episode ({frame: event rows}, persistent rows)."""
    columns: dict[str, list] = {name: [] for name in (
        'action', 'observation.state', 'timestamp', 'frame_index', 'episode_index', 'index',
        'task_index')}
    persistent_column, events_column, images = [], [], []
    stamps = frame_timestamps(frames, fps)
    for episode, (events, persistent_rows) in sorted(episodes.items()):
        for frame in range(frames):
            position = 0.1 * frame / frames
            images.append({'bytes': png(IMAGE_HEIGHT, IMAGE_WIDTH,
                                        (200, 40 + frame % 200, 40)), 'path': None})
            columns['action'].append([position] * 6)
            columns['observation.state'].append([position] * 6)
            columns['timestamp'].append(stamps[frame])
            columns['frame_index'].append(frame)
            columns['episode_index'].append(episode)
            columns['index'].append(episode * frames + frame)
            columns['task_index'].append(0)
            persistent_column.append(copy.deepcopy(persistent_rows))
            events_column.append(copy.deepcopy(events.get(frame, [])))
    arrays = [pa.array(columns['action'], pa.list_(pa.float32(), 6)),
              pa.array(columns['observation.state'], pa.list_(pa.float32(), 6)),
              pa.array(images, pa.struct([('bytes', pa.binary()), ('path', pa.string())])),
              pa.array(columns['timestamp'], pa.float32()),
              pa.array(columns['frame_index'], pa.int64()),
              pa.array(columns['episode_index'], pa.int64()),
              pa.array(columns['index'], pa.int64()),
              pa.array(columns['task_index'], pa.int64()),
              # Upstream's writer: "We let pyarrow infer struct/list schema".
              pa.array(persistent_column), pa.array(events_column)]
    names = [*columns]
    names.insert(2, CAMERA)
    return pa.Table.from_arrays(arrays, names=[*names, 'language_persistent',
                                               'language_events'])


def write_one_row_group_per_episode(table: pa.Table, path: pathlib.Path) -> None:
    """Upstream's `write_table_one_row_group_per_episode`."""
    episodes = table.column('episode_index').to_pylist()
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(str(path), table.schema, compression='snappy',
                          use_dictionary=True) as writer:
        start = 0
        for index in range(1, len(episodes) + 1):
            if index == len(episodes) or episodes[index] != episodes[start]:
                writer.write_table(table.slice(start, index - start))
                start = index


def _tasks_table() -> pa.Table:
    """meta/tasks.parquet as pandas writes it: the task text is the index."""
    table = pa.table({'task_index': pa.array([0], pa.int64()), 'task': [TASK]})
    pandas_meta = {
        'index_columns': ['task'],
        'column_indexes': [{'name': None, 'field_name': None, 'pandas_type': 'unicode',
                            'numpy_type': 'object', 'metadata': {'encoding': 'UTF-8'}}],
        'columns': [{'name': 'task_index', 'field_name': 'task_index', 'pandas_type': 'int64',
                     'numpy_type': 'int64', 'metadata': None},
                    {'name': 'task', 'field_name': 'task', 'pandas_type': 'unicode',
                     'numpy_type': 'object', 'metadata': None}],
        'creator': {'library': 'pyarrow', 'version': pa.__version__},
        'pandas_version': '2.2.3'}
    return table.replace_schema_metadata({b'pandas': json.dumps(pandas_meta).encode()})


def _episodes_table(episodes: list[int], frames: int) -> pa.Table:
    return pa.table({
        'episode_index': pa.array(episodes, pa.int64()),
        'tasks': pa.array([[TASK] for _ in episodes], pa.list_(pa.string())),
        'length': pa.array([frames] * len(episodes), pa.int64()),
        'data/chunk_index': pa.array([0] * len(episodes), pa.int64()),
        'data/file_index': pa.array([0] * len(episodes), pa.int64()),
        'dataset_from_index': pa.array([e * frames for e in episodes], pa.int64()),
        'dataset_to_index': pa.array([(e + 1) * frames for e in episodes], pa.int64()),
        'meta/episodes/chunk_index': pa.array([0] * len(episodes), pa.int64()),
        'meta/episodes/file_index': pa.array([0] * len(episodes), pa.int64()),
    })


def write_dataset(root: pathlib.Path, info: dict,
                  episodes: dict[int, tuple[dict[int, list[dict]], list[dict]]],
                  frames: int = FRAMES, *, write_info: bool = True) -> pathlib.Path:
    """
    Write a dataset with `episodes` ({index: (events by frame, persistent rows)}).

    `info` is completed (totals, splits, the language features) and written as
    `meta/info.json` unless `write_info` is false (the sample keeps its own file).
    """
    fps = int(info.get('fps', FPS))
    info = copy.deepcopy(info)
    info.update({'total_episodes': len(episodes), 'total_frames': len(episodes) * frames,
                 'total_tasks': 1, 'fps': fps, 'splits': {'train': f'0:{len(episodes)}'}})
    for name in ('language_persistent', 'language_events'):
        info.setdefault('features', {})[name] = {'dtype': 'language', 'shape': [1],
                                                 'names': None}
    (root / 'meta').mkdir(parents=True, exist_ok=True)
    if write_info:
        (root / 'meta' / 'info.json').write_text(json.dumps(info, indent=4) + '\n')
    pq.write_table(_tasks_table(), root / 'meta' / 'tasks.parquet')
    episodes_file = root / 'meta' / 'episodes' / 'chunk-000' / 'file-000.parquet'
    episodes_file.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(_episodes_table(sorted(episodes), frames), episodes_file)
    write_one_row_group_per_episode(data_table(episodes, frames, fps),
                                    root / 'data' / 'chunk-000' / 'file-000.parquet')
    return root


def write_sample(root: pathlib.Path, info: dict, *, write_info: bool = True) -> pathlib.Path:
    """Write the package's sample dataset: one annotated episode, index 0."""
    return write_dataset(root, info, {0: (SAMPLE_EVENTS, SAMPLE_PERSISTENT)},
                         write_info=write_info)


if __name__ == '__main__':
    target = pathlib.Path(sys.argv[1])
    write_sample(target, json.loads((target / 'meta' / 'info.json').read_text()),
                 write_info=False)
    print(f'wrote the sample episode into {target}')
