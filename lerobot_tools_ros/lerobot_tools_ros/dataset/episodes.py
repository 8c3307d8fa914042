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
Open a LeRobot v3 dataset and read one episode's frames (timestamps and language rows).

A dataset is a local directory holding `meta/info.json` and `data/chunk-*/file-*.parquet`, or
a repo id whose copy is already on this machine: `$HF_LEROBOT_HOME/<repo_id>` (LeRobot's own
place), or a snapshot in LeRobot's or huggingface_hub's hub cache. Nothing is downloaded.
The episode's data file comes from `meta/episodes` when present (as LeRobot finds it), else
every data file is searched for its rows.
"""

from dataclasses import dataclass, field
import json
import math
import os
import pathlib

from . import language
from ..hub import hf_lerobot_home

INFO_PATH = pathlib.Path('meta') / 'info.json'
EPISODES_DIR = pathlib.Path('meta') / 'episodes'
DATA_DIR = 'data'
_READ_COLUMNS = ('episode_index', 'frame_index', 'timestamp')


class DatasetError(ValueError):
    """A dataset or episode that cannot be read; the message says where and why."""


@dataclass
class Frame:
    """One frame of an episode: where it is, and its language rows."""

    frame_index: int
    timestamp: float
    events: list[dict] = field(default_factory=list)
    persistent: list[dict] = field(default_factory=list)


@dataclass
class Episode:
    """An episode's frames in order, and the data files that hold them (relative paths)."""

    index: int
    frames: list[Frame]
    files: list[str]
    fps: float
    # Whether the episode's data file(s) have a language column at all (an episode that was
    # never annotated has none: nothing to replay).
    has_language: bool = True

    @property
    def timestamps(self) -> list[float]:
        return [frame.timestamp for frame in self.frames]


def _hub_snapshots(repo_id: str) -> list[pathlib.Path]:
    """Snapshots of `repo_id` in LeRobot's hub cache and in huggingface_hub's cache."""
    caches = [hf_lerobot_home() / 'hub']
    hub_cache = os.environ.get('HF_HUB_CACHE')
    if hub_cache:
        caches.append(pathlib.Path(hub_cache).expanduser())
    else:
        home = os.environ.get('HF_HOME') or os.path.join(
            os.environ.get('XDG_CACHE_HOME') or os.path.join('~', '.cache'), 'huggingface')
        caches.append(pathlib.Path(home).expanduser() / 'hub')
    found = []
    for cache in caches:
        snapshots = cache / ('datasets--' + repo_id.replace('/', '--')) / 'snapshots'
        if snapshots.is_dir():
            found += sorted((path for path in snapshots.iterdir()
                             if (path / INFO_PATH).is_file()),
                            key=lambda path: path.stat().st_mtime, reverse=True)
    return found


def dataset_root(source: str | os.PathLike) -> pathlib.Path:
    """Return the root directory of a dataset given as a path or a locally cached repo id."""
    path = pathlib.Path(os.fspath(source)).expanduser()
    if path.is_dir():
        if (path / INFO_PATH).is_file():
            return path
        raise DatasetError(f'{path}: not a LeRobot dataset (no {INFO_PATH})')
    text = os.fspath(source)
    tried = [f'{path} (no such directory)']
    if text.count('/') == 1 and not text.startswith(('.', '/', '~')):
        local = hf_lerobot_home() / text
        if (local / INFO_PATH).is_file():
            return local
        tried.append(f'{local} (no {INFO_PATH})')
        snapshots = _hub_snapshots(text)
        if snapshots:
            return snapshots[0]
        tried.append(f'the hub caches (no snapshot of datasets--{text.replace("/", "--")} '
                     'with meta/info.json)')
    raise DatasetError(f'cannot find dataset {text!r}: tried ' + '; '.join(tried)
                       + '. Replay reads local copies only: download it first (e.g. with '
                       "LeRobot's LeRobotDataset) or give its directory.")


def read_info(root: pathlib.Path) -> dict:
    """Read `meta/info.json` as a dict, with errors naming the file."""
    path = root / INFO_PATH
    try:
        info = json.loads(path.read_text(encoding='utf-8'))
    except OSError as exc:
        raise DatasetError(f'{path}: cannot read: {exc.strerror or exc}') from None
    except ValueError as exc:
        raise DatasetError(f'{path}: not valid JSON: {exc}') from None
    if not isinstance(info, dict):
        raise DatasetError(f'{path}: must hold a JSON object')
    return info


def data_files(root: pathlib.Path) -> list[pathlib.Path]:
    """Every data parquet file of the dataset (`data/chunk-*/file-*.parquet`), sorted."""
    return sorted((root / DATA_DIR).glob('chunk-*/file-*.parquet'))


def _episode_files(root: pathlib.Path, info: dict, episode: int) -> list[pathlib.Path] | None:
    """Return the data file(s) `meta/episodes` names for `episode` (None: it does not say)."""
    import pyarrow.parquet as pq

    meta_files = sorted((root / EPISODES_DIR).glob('chunk-*/file-*.parquet'))
    pattern = info.get('data_path')
    if not meta_files or not isinstance(pattern, str):
        return None
    for meta_file in meta_files:
        try:
            table = pq.read_table(meta_file, columns=['episode_index', 'data/chunk_index',
                                                      'data/file_index'])
        except (OSError, ValueError, KeyError):
            return None  # an episodes table without these columns: search the data files
        for row in table.to_pylist():
            if row['episode_index'] == episode:
                try:
                    relative = pattern.format(chunk_index=row['data/chunk_index'],
                                              file_index=row['data/file_index'])
                except (KeyError, IndexError, ValueError):
                    return None
                return [root / relative]
    return None


def read_episode(root: pathlib.Path, episode: int, info: dict | None = None) -> Episode:
    """Read the frames of `episode` in frame order, with their language rows."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    info = read_info(root) if info is None else info
    fps = info.get('fps')
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0:
        raise DatasetError(f'{root / INFO_PATH}: "fps" must be a positive number, got {fps!r}')
    files = _episode_files(root, info, episode)
    if files is None:
        files = data_files(root)
    if not files:
        raise DatasetError(f'{root}: no data files (data/chunk-*/file-*.parquet); the dataset '
                           'has metadata only')
    frames: list[Frame] = []
    used: list[str] = []
    has_language = False
    for path in files:
        try:
            schema = pq.read_schema(path)
            missing = [name for name in _READ_COLUMNS if name not in schema.names]
            if missing:
                raise DatasetError(f'{path}: no column {", ".join(missing)}')
            present = [name for name in language.LANGUAGE_COLUMNS if name in schema.names]
            for name in present:
                check_language_type(schema.field(name).type, f'{path} column {name}')
            columns = [*_READ_COLUMNS, *present]
            table = pq.read_table(path, columns=columns,
                                  filters=pc.field('episode_index') == episode)
        except (OSError, pa.ArrowException) as exc:
            raise DatasetError(f'{path}: cannot read: {exc}') from None
        if not table.num_rows:
            continue
        used.append(path.relative_to(root).as_posix())
        has_language = has_language or bool(present)
        for number, row in enumerate(table.to_pylist()):
            frames.append(_frame(row, f'{path.name} episode {episode} row {number}'))
    if not frames:
        total = info.get('total_episodes')
        raise DatasetError(f'{root}: episode {episode} has no frames (the dataset has '
                           f'{total if total is not None else "an unknown number of"} '
                           'episode(s), numbered from 0)')
    frames.sort(key=lambda frame: frame.frame_index)
    return Episode(episode, frames, used, float(fps), has_language)


def check_language_type(data_type, where: str) -> None:
    """Raise DatasetError unless `data_type` is a list of row structs (or of nothing yet)."""
    import pyarrow as pa

    is_list = pa.types.is_list(data_type) or pa.types.is_large_list(data_type)
    if is_list and pa.types.is_null(data_type.value_type):
        return  # every cell empty: pyarrow's inferred type when upstream wrote no rows
    if is_list and pa.types.is_struct(data_type.value_type) \
            and data_type.value_type.get_field_index('role') >= 0:
        return
    raise DatasetError(f'{where} has type {data_type}; LeRobot stores a list of rows there '
                       '(structs with role, content, style, camera, tool_calls)')


def _frame(row: dict, where: str) -> Frame:
    stamp = row.get('timestamp')
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) \
            or not math.isfinite(stamp):
        raise DatasetError(f'{where}: timestamp must be a finite number, got {stamp!r}')
    frame_index = row.get('frame_index')
    if isinstance(frame_index, bool) or not isinstance(frame_index, int):
        raise DatasetError(f'{where}: frame_index must be an integer, got {frame_index!r}')
    events = row.get(language.LANGUAGE_EVENTS) or []
    persistent = row.get(language.LANGUAGE_PERSISTENT) or []
    return Frame(frame_index, float(stamp), list(events), list(persistent))


def tools_of(info: dict) -> list[dict] | None:
    """Return the `tools` an info.json declares (None when it declares none)."""
    tools = info.get('tools')
    return tools if isinstance(tools, list) and tools else None
