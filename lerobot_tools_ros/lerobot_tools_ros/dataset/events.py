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
Recording what the robot did back into a dataset: audit log in, `language_events` out.

`recorded_events` picks from a dispatcher audit log the calls that succeeded (a speech atom
per `say`, an assistant tool-call row per other call) and the interjections heard, each with
its time since the episode began (`episode_window` reads that start from the episode marker the
dispatcher recorded, or takes it given). `place_on_frames` puts each on the frame at or just
before its time. `write_events` adds them to the episode's cells of its data file(s) (every
other cell as it was, see `columns`), declares both language features and the tools used in
`meta/info.json`, and puts all of it in place at once (see `atomic`): into a copy of the
dataset, or in place.
"""

import bisect
import copy
from dataclasses import dataclass, field
import datetime
import json
import os
import pathlib
import shutil
from typing import Any, Iterable

from . import atomic, columns, language
from .episodes import DatasetError, Episode, INFO_PATH, read_info
from .markers import AUDIT_EVENT, INTERJECTION_EVENT
from ..catalog import DEFAULT_TOOLS

# Frame timestamps are float32: an event at a frame's time must land on that frame.
_TIME_TOLERANCE_S = 1e-4


@dataclass
class RecordedEvent:
    """One row to add, with its time in episode seconds and a description for the summary."""

    time_s: float
    row: dict
    description: str


@dataclass
class EpisodeWindow:
    """Where an episode lies in the audit log's wall-clock time."""

    start: float
    end: float | None
    rate: float
    origin: str


def parse_start(text: str) -> float:
    """`--start`: seconds since the epoch, or an ISO 8601 time (local time when no zone)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f'--start must be seconds since the epoch or an ISO 8601 time such as '
                         f'2026-12-04T21:30:00+00:00, got {text!r}') from None
    return moment.timestamp()


def _wall(record: dict) -> float | None:
    value = record.get('wall_time')
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _marker_time(record: dict) -> float:
    """When a marker says its episode began or ended: the time it states, else its arrival."""
    stated = record.get('time')
    if isinstance(stated, (int, float)) and not isinstance(stated, bool):
        return float(stated)
    wall = _wall(record)
    if wall is None:  # (markers without one are left out before)
        raise DatasetError(f'an episode marker without a wall_time: {record!r:.200}')
    return wall


def episode_window(records: list[dict], episode: int, start: float | None = None
                   ) -> EpisodeWindow:
    """
    Find where `episode` starts (and ends) in the log.

    With `start` given, the episode runs from there to the log's next start marker (if any).
    Otherwise the start marker of `episode` is used (one without a number when it is the only
    marker); none, or several, is an error that says to give `--start`.
    """
    markers = [r for r in records if r.get('event') == AUDIT_EVENT and _wall(r) is not None]
    if start is None:
        numbered = [r for r in markers if r.get('marker') == 'start'
                    and r.get('episode') == episode]
        unnumbered = [r for r in markers if r.get('marker') == 'start'
                      and r.get('episode') is None]
        found = numbered or (unnumbered if len(unnumbered) == 1 else [])
        if len(found) != 1:
            seen = ', '.join(f'{r.get("episode")}@{_wall(r):.3f}' for r in markers
                             if r.get('marker') == 'start') or 'none'
            why = ('several start markers for it' if len(found) > 1
                   else 'no start marker for it')
            raise DatasetError(
                f'episode {episode}: {why} in the audit log (start markers seen, episode@time: '
                f'{seen}); give --start, or record markers with the dispatcher parameter '
                'record_events')
        marker = found[0]
        start = _marker_time(marker)
        origin = ('the time its start marker states' if start != _wall(marker)
                  else 'the arrival of its start marker')
        rate = marker.get('rate', 1.0)
        rate = float(rate) if isinstance(rate, (int, float)) and rate > 0 else 1.0
    else:
        marker, origin, rate = None, '--start', 1.0
    end = None
    for record in markers:
        wall = _marker_time(record)
        if record is marker or wall <= start:
            continue
        if record.get('marker') == 'start' or (
                record.get('marker') == 'end' and record.get('episode') in (None, episode)):
            end = wall if end is None else min(end, wall)
    return EpisodeWindow(start, end, rate, origin)


def recorded_events(records: list[dict], window: EpisodeWindow) -> list[RecordedEvent]:
    """Return the successful calls and the interjections of the window, in time order."""
    succeeded = {r.get('call_id') for r in records
                 if r.get('event') == 'result' and r.get('success') is True}
    found: list[RecordedEvent] = []
    for record in records:
        wall = _wall(record)
        if wall is None or wall < window.start or (
                window.end is not None and wall >= window.end):
            continue
        time_s = (wall - window.start) * window.rate
        kind = record.get('event')
        if kind == 'call' and record.get('call_id') in succeeded:
            name, arguments = record.get('name'), record.get('arguments')
            if not isinstance(name, str) or not isinstance(arguments, dict):
                continue
            found.append(RecordedEvent(time_s, language.tool_call_row(name, arguments),
                                       f'{name} call'))
        elif kind == INTERJECTION_EVENT and isinstance(record.get('text'), str) \
                and record['text'].strip():
            found.append(RecordedEvent(time_s, language.interjection_row(record['text']),
                                       'interjection'))
    found.sort(key=lambda event: event.time_s)
    return found


def place_on_frames(events: Iterable[RecordedEvent], episode: Episode
                    ) -> tuple[dict[int, list[RecordedEvent]], list[RecordedEvent]]:
    """
    Put each event on the frame at or just before its time.

    Return ({frame_index: events}, events left out): before the first frame, or later than
    one frame period after the last frame.
    """
    stamps = episode.timestamps
    last = stamps[-1] + 1.0 / episode.fps
    placed: dict[int, list[RecordedEvent]] = {}
    left_out = []
    for event in events:
        position = bisect.bisect_right(stamps, event.time_s + _TIME_TOLERANCE_S) - 1
        if position < 0 or event.time_s >= last:
            left_out.append(event)
            continue
        placed.setdefault(episode.frames[position].frame_index, []).append(event)
    return placed, left_out


def tools_for(info: dict, used: Iterable[str], catalogs: Iterable[Any]) -> list[dict]:
    """
    Return the `tools` info.json must declare so every used tool has its schema.

    Starts from the dataset's own list (LeRobot's DEFAULT_TOOLS when it declares none, which
    is what readers assume then) and appends the schema of each used tool it lacks, taken from
    the first catalog that has it; a tool found in none is an error naming it.
    """
    declared = info.get('tools')
    tools = list(declared) if isinstance(declared, list) and declared \
        else copy.deepcopy(DEFAULT_TOOLS)
    have = {t.get('function', {}).get('name') for t in tools if isinstance(t, dict)}
    missing = []
    for name in dict.fromkeys(used):
        if name in have:
            continue
        for catalog in catalogs:
            if name in catalog:
                tools.append(copy.deepcopy(catalog.schema(name)))
                have.add(name)
                break
        else:
            missing.append(name)
    if missing:
        raise DatasetError(f'no schema for tool(s) {", ".join(missing)}: neither the dataset '
                           'nor --catalog declares them; give --catalog with a dataset or '
                           'info.json that does')
    return tools


# -- writing -----------------------------------------------------------------------------------

@dataclass
class WriteReport:
    """What `write_events` did: where, how many rows, and anything the user should know."""

    target: pathlib.Path
    added: int
    notes: list[str] = field(default_factory=list)
    removed_leftovers: list[pathlib.Path] = field(default_factory=list)


def updated_info(info: dict, tools: list[dict]) -> dict:
    """info.json with both language features and `tools` declared (other keys as they were)."""
    info = copy.deepcopy(info)
    features = info.setdefault('features', {})
    for name in language.LANGUAGE_COLUMNS:
        features.setdefault(name, dict(language.LANGUAGE_FEATURE))
    info['tools'] = tools
    return info


def check_output(root: pathlib.Path, output: pathlib.Path) -> pathlib.Path:
    """Return `output` expanded if a copy of `root` can go there (new or an empty dir)."""
    output = output.expanduser().absolute()
    if output.resolve() == root.resolve():
        raise DatasetError('--output is the dataset itself; use --in-place to change it')
    if output.resolve().is_relative_to(root.resolve()):
        raise DatasetError(f'--output {output} is inside the dataset {root}; give a directory '
                           'outside it')
    if output.exists() and not (output.is_dir() and not any(output.iterdir())):
        raise DatasetError(f'{output} exists and is not empty; give a new directory')
    return output


def write_events(root: pathlib.Path, episode: Episode, placed: dict[int, list[RecordedEvent]],
                 tools: list[dict], output: pathlib.Path | None = None) -> WriteReport:
    """
    Write the placed events and the info.json changes, all at once (see `atomic`).

    Into a new copy at `output`, or into `root` itself. Only the episode's data file(s) and
    info.json change; every other file is the same file (in place) or a copy of it.
    """
    with atomic.one_writer(root):  # from the first read to the swap
        return _write_events(root, episode, placed, tools, output)


def _write_events(root: pathlib.Path, episode: Episode, placed: dict[int, list[RecordedEvent]],
                  tools: list[dict], output: pathlib.Path | None) -> WriteReport:
    info = read_info(root)
    new_info = updated_info(info, tools)
    final = check_output(root, output) if output is not None else root
    report = WriteReport(final, 0, removed_leftovers=atomic.remove_stale(final))
    rows_by_frame = {frame: [language.storable(event.row) for event in events]
                     for frame, events in placed.items()}
    staging = atomic.staging_dir(final)
    try:
        if output is not None:
            # A copy stands alone: files a symlink points to (a hub snapshot's blobs) are copied.
            shutil.copytree(root, staging)
        else:
            atomic.link_tree(root, staging)
        changed = []
        for relative in episode.files:
            written = columns.add_event_rows(root / relative, episode.index, rows_by_frame,
                                             staging / relative)
            report.added += written.added
            report.notes += written.notes
            if written.written:
                changed.append(staging / relative)
            atomic.checkpoint('data-written')
        if new_info != info:
            text = json.dumps(new_info, indent=4, ensure_ascii=False) + '\n'
            atomic.replace_file(staging / INFO_PATH,
                                lambda path: path.write_text(text, encoding='utf-8'))
            changed.append(staging / INFO_PATH)
        if output is None and not changed:
            shutil.rmtree(staging)  # nothing to change: the dataset stays exactly as it was
            return report
        for directory in {path.parent for path in changed}:
            atomic.sync_dir(directory)
        atomic.checkpoint('before-commit')
        if output is not None:
            os.rename(staging, final)  # (an empty directory given as the place is replaced)
            atomic.sync_dir(final.parent)
        else:
            atomic.exchange(staging, root)  # staging now holds the old version
            atomic.sync_dir(root.parent)
            atomic.checkpoint('after-commit')
    finally:
        if os.path.lexists(staging):
            shutil.rmtree(staging, ignore_errors=True)
    return report
