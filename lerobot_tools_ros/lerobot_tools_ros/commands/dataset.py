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
``lerobot-tools-ros dataset add-events DATASET --episode N --audit LOG``: record a run back.

Writes the robot's successful calls (a speech atom per `say`, an assistant tool-call row per
other call) and the interjections it heard, from the dispatcher's audit log, into the episode's
`language_events`, each on the frame at or just before its time since the episode began (given
with ``--start``, or read from the episode marker the dispatcher recorded with
`record_events`). Declares both language features and the tools used in `meta/info.json`;
every other cell, column and file stays as it was. Into a copy (``--output DIR``) or in place
(``--in-place``); either way the data files and info.json change together or not at all.
"""

import argparse
import pathlib
import sys

from lerobot_tools_ros.untrusted import log_text

_SHOWN_BAD_LINES = 5
HELP = 'Write what the robot did (from an audit log) into a LeRobot dataset episode.'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest='dataset_action', metavar='ACTION')
    actions.required = True
    add = actions.add_parser(
        'add-events', help="Write an audit log's calls and interjections into an episode's "
        'language_events.', description='Write the successful calls and the interjections of '
        "an audit log into an episode's language_events, each on the frame at or just before "
        'its time.')
    add.add_argument('dataset', help='dataset directory (v3 layout) or a repo id in the local '
                                     'cache')
    add.add_argument('--episode', type=int, required=True, metavar='N', help='episode index')
    add.add_argument('--audit', type=pathlib.Path, required=True, metavar='LOG',
                     help="the dispatcher's audit_log file")
    add.add_argument('--start', default=None, metavar='T',
                     help='when the episode began: seconds since the epoch or an ISO 8601 time '
                          '(default: its start marker in the audit log)')
    where = add.add_mutually_exclusive_group()
    where.add_argument('--output', type=pathlib.Path, metavar='DIR',
                       help='write a copy of the dataset to DIR (a new or empty directory)')
    where.add_argument('--in-place', action='store_true',
                       help='change the dataset itself (data files and info.json swapped in '
                            'together, in one step)')
    add.add_argument('--catalog', action='append', default=[], metavar='SOURCE',
                     help='where to find the schemas of tools the dataset does not declare '
                          "(dataset, info.json or repo id; repeatable; default: the package's "
                          'sample dataset)')
    add.add_argument('--dry-run', action='store_true',
                     help='show where each event would go; write nothing')


def run(args: argparse.Namespace) -> int:
    from lerobot_tools_ros.catalog import CatalogError, SAMPLE_DATASET, ToolCatalog
    from lerobot_tools_ros.dataset import episodes as ds_episodes, events as ds_events
    from lerobot_tools_ros.dataset.language import LanguageRowError
    from lerobot_tools_ros.dispatch import read_audit_log

    if not (args.output or args.in_place or args.dry_run):
        print('error: say where to write: --output DIR (a copy) or --in-place, '
              'or --dry-run to only show where each event would go', file=sys.stderr)
        return 2
    try:
        root = ds_episodes.dataset_root(args.dataset).resolve()
        if args.output is not None:
            ds_events.check_output(root, args.output)
        info = ds_episodes.read_info(root)
        episode = ds_episodes.read_episode(root, args.episode, info)
        bad_lines: list[str] = []
        try:
            records = list(read_audit_log(args.audit, bad_lines))
        except FileNotFoundError:
            raise ds_episodes.DatasetError(
                f'audit log {args.audit} does not exist (set the dispatcher parameter '
                'audit_log to record one)') from None
        except (OSError, ValueError) as exc:
            raise ds_episodes.DatasetError(f'cannot read audit log {args.audit}: '
                                           f'{log_text(exc)}') from None
        for problem in bad_lines[:_SHOWN_BAD_LINES]:
            print(f'warning: skipped {log_text(problem)}', file=sys.stderr)
        if len(bad_lines) > _SHOWN_BAD_LINES:
            print(f'warning: ... and {len(bad_lines) - _SHOWN_BAD_LINES} more skipped audit '
                  f'line(s) ({len(bad_lines)} in all)', file=sys.stderr)
        start = ds_events.parse_start(args.start) if args.start is not None else None
        window = ds_events.episode_window(records, args.episode, start)
        found = ds_events.recorded_events(records, window)
        placed, left_out = ds_events.place_on_frames(found, episode)
        used = [name for rows in placed.values() for event in rows
                for name, _ in _calls(event.row)]
        catalogs = [ToolCatalog.load(source) for source in (args.catalog or [SAMPLE_DATASET])]
        tools = ds_events.tools_for(info, used, catalogs)
    except (ds_episodes.DatasetError, LanguageRowError, CatalogError, ValueError) as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    except ImportError as exc:
        print(f'error: reading datasets needs pyarrow ({exc}); pip install pyarrow',
              file=sys.stderr)
        return 1
    print(f'episode {args.episode} starts at {window.start:.3f} ({window.origin})'
          + (f', replayed at rate {window.rate:g}' if window.rate != 1.0 else ''))
    by_frame = {frame.frame_index: frame.timestamp for frame in episode.frames}
    for frame_index in sorted(placed):
        for event in placed[frame_index]:
            print(f'  frame {frame_index:>6} ({by_frame[frame_index]:8.3f} s) <- '
                  f'{event.description} at {event.time_s:8.3f} s: '
                  f'{log_text(_summary(event.row), 120)}')
    crowded = [frame for frame, rows in placed.items()
               if sum(name == 'say' for event in rows for name, _ in _calls(event.row)) > 1]
    if crowded:
        print(f'warning: frame(s) {", ".join(map(str, sorted(crowded)))} get more than one say '
              "call: LeRobot's emitted_at(role=assistant, tool_name=say) cannot pick one there "
              '(it raises "Ambiguous resolver")', file=sys.stderr)
    if left_out:
        print(f"warning: {len(left_out)} event(s) outside the episode's frames were left out "
              f'(first at {left_out[0].time_s:.3f} s)', file=sys.stderr)
    if args.dry_run:
        print('dry run: nothing written')
        return 0
    try:
        report = ds_events.write_events(root, episode, placed, tools,
                                        None if args.in_place else args.output)
    except (ds_events.DatasetError, LanguageRowError) as exc:
        print(f'error: {exc} (nothing was written)', file=sys.stderr)
        return 1
    except OSError as exc:
        print(f'error: cannot write {exc.filename or ""}: {exc.strerror or exc} (nothing was '
              'written)', file=sys.stderr)
        return 1
    for path in report.removed_leftovers:
        print(f'removed {log_text(path)}: left by an earlier run that was stopped', flush=True)
    for note in report.notes:
        print(f'note: {log_text(note, 400)}', flush=True)
    already = sum(len(rows) for rows in placed.values()) - report.added
    print(f'wrote {report.added} row(s) into episode {args.episode} of {report.target}'
          + (f' ({already} already there)' if already else ''))
    return 0


def _calls(row: dict) -> list:
    from lerobot_tools_ros.dataset.language import tool_calls
    return tool_calls(row)


def _summary(row: dict) -> str:
    calls = _calls(row)
    if calls:
        return '; '.join(f'{name}({arguments})' for name, arguments in calls)
    return f'{row["role"]} {row["style"]}: {row["content"]}'
