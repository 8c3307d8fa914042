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
Recording what the robot did back into a LeRobot dataset (`dataset add-events`).

Pure parts (markers, the episode's window, placing on frames, writing parquet with upstream's
types) on files written and read back; the dispatcher's `record_events` as a real process; the
whole round trip (replay an annotated episode through the real runtime, record it, write it
into a copy whose events were stripped, get the same events back on the same frames); and, where
the Python 3.12 venv with lerobot 0.6.1 exists (`make lerobot-check`), LeRobot's own readers
loading what add-events wrote.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any

import annotated_episode
from conftest import PACKAGE_DIR, spin_until, TEST_DIR
from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import SAMPLE_DATASET, ToolCatalog
from lerobot_tools_ros.cli import main as cli_main
from lerobot_tools_ros.dataset import atomic, episodes, events, language
from lerobot_tools_ros.dataset.markers import episode_marker_text, parse_episode_marker
from lerobot_tools_ros.dispatch import read_audit_log
import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.parquet as pq
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

SAMPLE_INFO = json.loads((SAMPLE_DATASET / 'meta' / 'info.json').read_text())
REPO_DIR = PACKAGE_DIR.parent
DATA_FILE = 'data/chunk-000/file-000.parquet'
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


def sample_copy(tmp_path: pathlib.Path, **info_changes) -> pathlib.Path:
    info = {**SAMPLE_INFO, **info_changes}
    return annotated_episode.write_sample(tmp_path / 'sample', info)


def bare_copy(tmp_path: pathlib.Path, name: str = 'bare', **info_changes) -> pathlib.Path:
    """Write the sample's frames without language rows (a recorded, unannotated episode)."""
    info = {**SAMPLE_INFO, **info_changes}
    info['features'] = {k: v for k, v in info['features'].items()
                        if v['dtype'] != 'language'}
    del info['tools']
    root = annotated_episode.write_dataset(tmp_path / name, info, {0: ({}, [])})
    # An unannotated dataset has no language columns at all.
    table = pq.read_table(root / DATA_FILE).drop_columns(list(language.LANGUAGE_COLUMNS))
    pq.write_table(table, root / DATA_FILE)
    info_path = root / 'meta' / 'info.json'
    written = json.loads(info_path.read_text())
    written['features'] = info['features']
    info_path.write_text(json.dumps(written, indent=4))
    return root


def audit(start: float, *records: tuple) -> list[dict]:
    """
    Build audit records from tuples, times relative to `start`.

    ('marker', t, fields), ('call', t, id, name, arguments, succeeded), ('say', t, text).
    """
    out = []
    for record in records:
        kind, t = record[0], start + record[1]
        if kind == 'marker':
            out.append({'event': 'episode', 'wall_time': t, **record[2]})
        elif kind == 'call':
            _, _, call_id, name, arguments, ok = record
            out.append({'event': 'call', 'wall_time': t, 'call_id': call_id, 'name': name,
                        'arguments': arguments})
            out.append({'event': 'result', 'wall_time': t + 0.01, 'call_id': call_id,
                        'success': ok})
        else:
            out.append({'event': 'interjection', 'wall_time': t, 'text': record[2]})
    return out


def write_log(path: pathlib.Path, records: list[dict]) -> pathlib.Path:
    path.write_text(''.join(json.dumps(r) + '\n' for r in records))
    return path


# -- markers and the episode's window ---------------------------------------------------------

def test_markers_in_both_spellings_and_clear_errors():
    assert parse_episode_marker('start 3') == {'marker': 'start', 'episode': 3, 'rate': 1.0,
                                               'time': None}
    assert parse_episode_marker(' end ')['episode'] is None
    assert parse_episode_marker(episode_marker_text('start', 2, 2.0, 100.5)) == {
        'marker': 'start', 'episode': 2, 'rate': 2.0, 'time': 100.5}
    for bad, message in (('begin 3', 'event must be start or end'),
                         ('start three', 'episode must be an integer'),
                         ('{"event": "start", "episode": -1}', 'non-negative integer'),
                         ('{"event": "start", "rate": 0}', 'rate must be a positive number'),
                         ('{"event": "start", "time": "noon"}', 'time must be seconds'),
                         ('{"event": ', 'not valid JSON'), ('start 1 2 3', "'start \\[N\\]'")):
        with pytest.raises(ValueError, match=message):
            parse_episode_marker(bad)


def test_the_window_comes_from_the_episodes_marker_or_from_start():
    records = audit(1000.0, ('marker', 0.0, {'marker': 'start', 'episode': 1}),
                    ('marker', 5.0, {'marker': 'end', 'episode': 1}),
                    ('marker', 9.0, {'marker': 'start', 'episode': 2, 'rate': 2.0,
                                     'time': 1008.75}))
    one = events.episode_window(records, 1)
    assert (one.start, one.end, one.rate) == (1000.0, 1005.0, 1.0)
    two = events.episode_window(records, 2)
    assert (two.start, two.end, two.rate) == (1008.75, None, 2.0)  # the time it states
    given = events.episode_window(records, 7, start=1003.0)
    # Until the next start (episode 1's end marker is not episode 7's).
    assert (given.start, given.end, given.origin) == (1003.0, 1008.75, '--start')
    assert events.episode_window(records, 1, start=1003.0).end == 1005.0
    with pytest.raises(episodes.DatasetError, match=r'episode 3: no start marker .*1@1000\.000, '
                                                    r'2@1009\.000.*give --start'):
        events.episode_window(records, 3)
    twice = records + audit(2000.0, ('marker', 0.0, {'marker': 'start', 'episode': 1}))
    with pytest.raises(episodes.DatasetError, match='several start markers'):
        events.episode_window(twice, 1)
    assert events.parse_start('2026-12-04T21:30:00+00:00') == 1796419800.0
    with pytest.raises(ValueError, match='--start must be seconds since the epoch'):
        events.parse_start('yesterday')


def test_only_successful_calls_and_interjections_land_at_or_before_their_time(tmp_path):
    episode = episodes.read_episode(sample_copy(tmp_path), 0)
    records = audit(50.0, ('marker', 0.0, {'marker': 'start', 'episode': 0}),
                    ('say', -1.0, 'before the episode'),
                    ('call', 0.51, 'a', 'say', {'text': 'hello'}, True),
                    ('call', 0.6, 'b', 'record_observation', {'label': 'x'}, False),
                    ('say', 1.0, 'wait'),
                    ('call', 2.99, 'c', 'record_observation', {'label': 'late'}, True),
                    ('call', 3.2, 'd', 'say', {'text': 'after the last frame'}, True))
    found = events.recorded_events(records, events.episode_window(records, 0))
    assert [e.description for e in found] == ['say call', 'interjection',
                                              'record_observation call', 'say call']
    placed, left_out = events.place_on_frames(found, episode)
    # 0.51 s is frame 15 (0.500 s); 1.0 s is exactly frame 30; 2.99 s the last frame (89).
    assert {frame: [e.row for e in rows] for frame, rows in placed.items()} == {
        15: [language.speech_atom('hello')], 30: [language.interjection_row('wait')],
        89: [language.tool_call_row('record_observation', {'label': 'late'})]}
    assert [e.time_s for e in left_out] == pytest.approx([3.2])


# -- writing ----------------------------------------------------------------------------------

def test_add_events_writes_upstream_types_and_leaves_everything_else(tmp_path, capsys):
    root = bare_copy(tmp_path)
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('marker', 0.0, {'marker': 'start', 'episode': 0}),
        ('call', 0.2, 'a', 'say', {'text': 'On it.'}, True),
        ('say', 1.5, 'Use the blue one.'),
        ('call', 1.52, 'b', 'record_observation', {'label': 'cup'}, True)))
    out = tmp_path / 'out'
    assert cli_main(['dataset', 'add-events', str(root), '--episode', '0', '--audit', str(log),
                     '--output', str(out)]) == 0
    printed = capsys.readouterr().out
    assert 'frame      6 (   0.200 s) <- say call' in printed
    assert 'wrote 3 row(s) into episode 0' in printed
    before, after = pq.read_table(root / DATA_FILE), pq.read_table(out / DATA_FILE)
    assert after.select(before.column_names).equals(before)  # every other column unchanged
    assert after.schema.field('language_events').type.value_type.field('tool_calls').type == \
        pa.list_(pa.json_())
    assert after.column('language_persistent').to_pylist() == [[]] * after.num_rows
    rows = after.column('language_events').to_pylist()
    assert {i: r for i, r in enumerate(rows) if r} == {
        6: [{'role': 'assistant', 'content': None, 'style': None, 'camera': None,
             'tool_calls': [json.dumps(language.call_dict('say', {'text': 'On it.'}))]}],
        45: [{'role': 'user', 'content': 'Use the blue one.', 'style': 'interjection',
              'camera': None, 'tool_calls': None},
             {'role': 'assistant', 'content': None, 'style': None, 'camera': None,
              'tool_calls': [json.dumps(language.call_dict('record_observation',
                                                           {'label': 'cup'}))]}]}
    info = json.loads((out / 'meta' / 'info.json').read_text())
    assert info['features']['language_events'] == language.LANGUAGE_FEATURE
    assert info['features']['language_persistent'] == language.LANGUAGE_FEATURE
    # It declared no tools (so: LeRobot's say); record_observation's schema comes from the
    # catalog given (the sample's by default).
    assert info['tools'] == [ToolCatalog.load(SAMPLE_DATASET).schema('say'),
                             ToolCatalog.load(SAMPLE_DATASET).schema('record_observation')]
    original = json.loads((root / 'meta' / 'info.json').read_text())
    assert {k: v for k, v in info.items() if k not in ('features', 'tools')} == \
        {k: v for k, v in original.items() if k not in ('features', 'tools')}
    for relative in ('meta/tasks.parquet', 'meta/episodes/chunk-000/file-000.parquet'):
        assert (out / relative).read_bytes() == (root / relative).read_bytes()
    assert episodes.read_episode(root, 0).frames[6].events == []  # the source is untouched


def test_in_place_changes_the_dataset_and_a_second_run_changes_nothing(tmp_path, capsys):
    root = sample_copy(tmp_path)
    original = (root / DATA_FILE).read_bytes()
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.1, 'a', 'say', {'text': 'Extra.'}, True)))
    args = ['dataset', 'add-events', str(root), '--episode', '0', '--audit', str(log),
            '--start', '10.0']
    assert cli_main([*args, '--dry-run']) == 0
    assert 'frame      3 (   0.100 s) <- say call' in capsys.readouterr().out
    assert (root / DATA_FILE).read_bytes() == original
    assert cli_main([*args, '--in-place']) == 0
    frame3 = episodes.read_episode(root, 0).frames[3].events
    assert [language.tool_calls(row) for row in frame3] == [[('say', {'text': 'Extra.'})]]
    # The stored rows keep the struct type upstream's writer inferred; so does the new one.
    assert pq.read_table(root / DATA_FILE).schema.field('language_events').type == \
        pq.read_table(SAMPLE_DATASET / DATA_FILE).schema.field('language_events').type
    frame0 = episodes.read_episode(root, 0).frames[0].events
    assert [language.tool_calls(row) for row in frame0] == [
        [('say', {'text': 'I will put the red cube in the bin.'})]]
    # Nothing beside the dataset or in it but the dataset: no backups, no staging copies.
    assert sorted(p.name for p in root.parent.iterdir()) == ['audit.jsonl', 'sample']
    assert not [p for p in root.rglob('*') if p.name.endswith(('.bak', '.tmp'))]
    capsys.readouterr()
    changed = {p: p.read_bytes() for p in root.rglob('*') if p.is_file()}
    assert cli_main([*args, '--in-place']) == 0
    assert 'wrote 0 row(s) into episode 0 of' in capsys.readouterr().out
    assert {p: p.read_bytes() for p in root.rglob('*') if p.is_file()} == changed
    out = tmp_path / 'again'
    assert cli_main([*args, '--output', str(out)]) == 0
    assert 'wrote 0 row(s)' in capsys.readouterr().out
    assert pq.read_table(out / DATA_FILE).equals(pq.read_table(root / DATA_FILE))


def test_two_say_calls_on_one_frame_are_written_with_a_warning(tmp_path, capsys):
    root = bare_copy(tmp_path)
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.2, 'a', 'say', {'text': 'One.'}, True),
        ('call', 0.21, 'b', 'say', {'text': 'Two.'}, True)))
    assert cli_main(['dataset', 'add-events', str(root), '--episode', '0', '--audit', str(log),
                     '--start', '10', '--in-place']) == 0
    assert 'frame(s) 6 get more than one say call' in capsys.readouterr().err
    assert len(episodes.read_episode(root, 0).frames[6].events) == 2


def test_add_events_errors_name_what_to_fix(tmp_path, capsys):
    root = sample_copy(tmp_path)
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.1, 'a', 'fly', {'height': 2}, True)))
    base = ['dataset', 'add-events', str(root), '--episode', '0', '--audit', str(log)]
    cases = [
        ([*base, '--output', str(tmp_path / 'o1')], 'episode 0: no start marker'),
        ([*base, '--start', '10', '--output', str(tmp_path / 'o2')],
         'no schema for tool(s) fly'),
        ([*base, '--start', '10', '--output', str(root)], '--output is the dataset itself'),
        (['dataset', 'add-events', str(root), '--episode', '4', '--audit', str(log),
          '--start', '10', '--in-place'], 'episode 4 has no frames'),
        (['dataset', 'add-events', str(tmp_path / 'nope'), '--episode', '0', '--audit',
          str(log), '--in-place'], 'cannot find dataset'),
        (['dataset', 'add-events', str(root), '--episode', '0', '--audit',
          str(tmp_path / 'missing.jsonl'), '--in-place'], 'missing.jsonl does not exist'),
    ]
    for argv, message in cases:
        capsys.readouterr()
        assert cli_main(argv) == 1, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert 'Traceback' not in err
    assert not (root / (DATA_FILE + '.bak')).exists()
    assert cli_main(base) == 2
    assert 'say where to write: --output DIR' in capsys.readouterr().err
    assert cli_main([*base, '--start', '10', '--dry-run', '--catalog', str(tmp_path)]) == 1
    assert f'{tmp_path}: no meta/info.json' in capsys.readouterr().err


# -- what add-events keeps ----------------------------------------------------------------------

# Episode 0 as upstream allows it: an OpenAI call id, an argument whose value is null, a style a
# project registered (EXTENDED_STYLES / EVENT_ONLY_STYLES); episode 1 holds a row of that style
# on frame 6 too, and otherwise nothing yet.
SAY_WITH_ID = {'role': 'assistant', 'content': None, 'style': None, 'camera': None,
               'tool_calls': [{'type': 'function', 'id': 'call_abc123', 'function': {
                   'name': 'say', 'arguments': {'text': 'On it.', 'voice': None}}}]}
MOOD = {'role': 'assistant', 'content': 'cheerful', 'style': 'mood', 'camera': None,
        'tool_calls': None}


def two_episodes(tmp_path: pathlib.Path, extra_field: bool = False) -> pathlib.Path:
    first = {0: [SAY_WITH_ID], 10: [MOOD, annotated_episode.interjection('Faster.')]}
    if extra_field:  # a row field upstream's declared type has no place for
        first[20] = [{**MOOD, 'note': 'kept'}]
    return annotated_episode.write_dataset(
        tmp_path / 'two', SAMPLE_INFO, {0: (first, []), 1: ({6: [MOOD]}, [])})


def by_episode(table: pa.Table, episode: int, keep: bool = True) -> pa.Table:
    mask = pa.compute.equal(table.column('episode_index'), episode)
    return table.filter(mask if keep else pa.compute.invert(mask))


def test_add_events_rewrites_only_the_target_episodes_rows(tmp_path, capsys):
    root = two_episodes(tmp_path)
    before = pq.read_table(root / DATA_FILE)
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.2, 'a', 'say', {'text': 'Hello \ud800 there.'}, True),
        ('say', 0.21, 'Stop.'), ('call', 1.0, 'b', 'say', {'text': 'Going.'}, True)))
    args = ['dataset', 'add-events', str(root), '--episode', '1', '--audit', str(log),
            '--start', '10']
    assert cli_main([*args, '--in-place']) == 0, capsys.readouterr()
    assert 'wrote 3 row(s) into episode 1' in capsys.readouterr().out
    after = pq.read_table(root / DATA_FILE)
    # Episode 0, every column and cell, types included, compares equal as read before.
    assert by_episode(after, 1, keep=False).equals(by_episode(before, 1, keep=False))
    assert after.schema.equals(before.schema)
    assert after.column('language_events')[0].as_py()[0]['tool_calls'][0]['id'] == \
        'call_abc123'
    assert after.column('language_events')[0].as_py()[0]['tool_calls'][0]['function'][
        'arguments'] == {'text': 'On it.', 'voice': None}
    # Episode 1: only frames 6 and 30 changed; frame 6 keeps its own row first, as stored.
    old, new = by_episode(before, 1), by_episode(after, 1)
    changed = [i for i in range(new.num_rows)
               if new.column('language_events')[i] != old.column('language_events')[i]]
    assert [new.column('frame_index')[i].as_py() for i in changed] == [6, 30]
    frame6 = new.column('language_events')[6].as_py()
    assert frame6[0] == old.column('language_events')[6].as_py()[0]  # the stored mood row
    # A lone surrogate the runtime accepted is stored as U+FFFD (UTF-8 has none).
    assert [language.tool_calls(row) for row in frame6[1:]] == [
        [('say', {'text': 'Hello \ufffd there.'})], []]
    assert frame6[2]['content'] == 'Stop.' and frame6[2]['style'] == 'interjection'
    # Nothing to add the second time: not one byte changes.
    data = (root / DATA_FILE).read_bytes()
    assert cli_main([*args, '--in-place']) == 0
    assert 'wrote 0 row(s)' in capsys.readouterr().out
    assert (root / DATA_FILE).read_bytes() == data


def test_a_row_the_inferred_type_cannot_hold_retypes_the_column_keeping_values(
        tmp_path, capsys):
    root = two_episodes(tmp_path)
    before = pq.read_table(root / DATA_FILE)
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.2, 'a', 'record_observation', {'label': 'cup'}, True)))
    out = tmp_path / 'out'
    assert cli_main(['dataset', 'add-events', str(root), '--episode', '1', '--audit', str(log),
                     '--start', '10', '--output', str(out)]) == 0
    printed = capsys.readouterr().out
    assert "the column is now in upstream's declared type" in printed, printed
    after = pq.read_table(out / DATA_FILE)
    assert after.schema.field('language_events').type == \
        pa.list_(pa.struct([pa.field('role', pa.string(), nullable=False),
                            pa.field('content', pa.string()), pa.field('style', pa.string()),
                            pa.field('camera', pa.string()),
                            pa.field('tool_calls', pa.list_(pa.json_()))]))

    def decoded(table: pa.Table) -> list:
        return [[{**row, 'tool_calls': None if row['tool_calls'] is None else [
            json.loads(c) if isinstance(c, str) else c for c in row['tool_calls']]}
            for row in cell] for cell in table.column('language_events').to_pylist()]
    # Every stored value kept: the id, the null argument, the registered style.
    assert decoded(by_episode(after, 1, keep=False)) == decoded(by_episode(before, 1, False))
    assert by_episode(after, 1, keep=False).drop_columns(['language_events']).equals(
        by_episode(before, 1, keep=False).drop_columns(['language_events']))
    assert [language.tool_calls(r) for r in decoded(after)[90 + 6]] == [
        [], [('record_observation', {'label': 'cup'})]]


def test_a_failed_write_leaves_the_dataset_as_it_was_and_nothing_beside_it(tmp_path, capsys):
    root = two_episodes(tmp_path, extra_field=True)
    files = {p: p.read_bytes() for p in root.rglob('*') if p.is_file()}
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.2, 'a', 'record_observation', {'label': 'cup'}, True)))
    for where in (['--in-place'], ['--output', str(tmp_path / 'out')]):
        assert cli_main(['dataset', 'add-events', str(root), '--episode', '1', '--audit',
                         str(log), '--start', '10', *where]) == 1
        err = capsys.readouterr().err
        assert 'has field(s) note' in err and 'nothing was written' in err, err
        assert 'Traceback' not in err
        assert {p: p.read_bytes() for p in root.rglob('*') if p.is_file()} == files
        assert sorted(p.name for p in tmp_path.iterdir()) == ['audit.jsonl', 'two']


def test_a_language_column_of_the_wrong_type_is_one_line(tmp_path, capsys):
    root = sample_copy(tmp_path)
    table = pq.read_table(root / DATA_FILE)
    table = table.set_column(table.column_names.index('language_events'), 'language_events',
                             pa.array(range(table.num_rows), pa.int64()))
    pq.write_table(table, root / DATA_FILE)
    log = write_log(tmp_path / 'audit.jsonl', audit(10.0, ('say', 0.1, 'hi')))
    assert cli_main(['dataset', 'add-events', str(root), '--episode', '0', '--audit', str(log),
                     '--start', '10', '--in-place']) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f'error: {root / DATA_FILE} column language_events has type int64; LeRobot stores a '
        'list of rows there (structs with role, content, style, camera, tool_calls)']


def test_skipped_audit_lines_are_counted_beyond_the_ones_shown(tmp_path, capsys):
    root = sample_copy(tmp_path)
    log = tmp_path / 'audit.jsonl'
    log.write_text(''.join(f'not json {n}\n' for n in range(8))
                   + json.dumps({'event': 'interjection', 'wall_time': 10.1, 'text': 'hi'})
                   + '\n')
    assert cli_main(['dataset', 'add-events', str(root), '--episode', '0', '--audit', str(log),
                     '--start', '10', '--dry-run']) == 0
    err = capsys.readouterr().err
    assert err.count('warning: skipped') == 5
    assert '... and 3 more skipped audit line(s) (8 in all)' in err


def test_a_hub_snapshot_keeps_its_blobs_and_a_copy_of_it_stands_alone(tmp_path, capsys):
    """huggingface_hub's cache: snapshot files are relative symlinks into a shared blob store."""
    repo = tmp_path / 'hub' / 'datasets--lab--cubes'
    snapshot = annotated_episode.write_sample(repo / 'snapshots' / 'abc', SAMPLE_INFO)
    (repo / 'blobs').mkdir()
    for path in [p for p in snapshot.rglob('*') if p.is_file()]:
        blob = repo / 'blobs' / path.name.replace('.', '-')
        path.rename(blob)
        path.symlink_to(os.path.relpath(blob, path.parent))
    blobs = {p: p.read_bytes() for p in (repo / 'blobs').iterdir()}
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.1, 'a', 'say', {'text': 'Extra.'}, True)))
    args = ['dataset', 'add-events', str(snapshot), '--episode', '0', '--audit', str(log),
            '--start', '10']
    out = tmp_path / 'copy'
    assert cli_main([*args, '--output', str(out)]) == 0, capsys.readouterr()
    assert not [p for p in out.rglob('*') if p.is_symlink()]
    assert cli_main([*args, '--in-place']) == 0, capsys.readouterr()
    assert {p: p.read_bytes() for p in (repo / 'blobs').iterdir()} == blobs
    assert not (snapshot / DATA_FILE).is_symlink()
    assert (snapshot / 'meta' / 'tasks.parquet').is_symlink()  # unchanged files stay links
    for root in (out, snapshot):
        frame3 = episodes.read_episode(root, 0).frames[3].events
        assert [language.tool_calls(row) for row in frame3] == [[('say', {'text': 'Extra.'})]]


# -- a kill -9 in the middle of a write -------------------------------------------------------

@pytest.mark.parametrize('point,where', [
    ('data-written', 'in-place'), ('before-commit', 'in-place'), ('after-commit', 'in-place'),
    ('data-written', 'output'), ('before-commit', 'output')])
def test_a_write_killed_at_any_point_leaves_old_or_new_and_a_rerun_works(
        ros_env, tmp_path, point, where):
    root = two_episodes(tmp_path)
    log = write_log(tmp_path / 'audit.jsonl', audit(
        10.0, ('call', 0.2, 'a', 'record_observation', {'label': 'cup'}, True)))
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob('*') if p.is_file()}
    out = tmp_path / 'out'
    command = [sys.executable, '-m', 'lerobot_tools_ros.cli', 'dataset', 'add-events',
               str(root), '--episode', '1', '--audit', str(log), '--start', '10',
               *(['--in-place'] if where == 'in-place' else ['--output', str(out)])]
    ready = tmp_path / 'ready'
    # The writer stops for good at `point` (dataset.atomic.checkpoint); killed there.
    proc = subprocess.Popen(command, env={**ros_env, atomic.PAUSE_ENV: f'{point}:{ready}'},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60.0
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # polling for the file the writer makes when it stops
        assert ready.exists(), proc.communicate(timeout=10)[0] if proc.poll() is not None \
            else 'the writer never reached ' + point
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    now = {p.relative_to(root): p.read_bytes() for p in root.rglob('*') if p.is_file()}
    staged = [p.name for p in tmp_path.iterdir() if '.add-events-' in p.name]
    assert len(staged) == 1, staged  # the staging copy; never the target itself
    if point == 'after-commit':
        assert now != before  # the new version, whole
        assert 'record_observation' in (root / 'meta' / 'info.json').read_text()
        assert [language.tool_calls(r) for r in episodes.read_episode(root, 1).frames[6].events
                ] == [[], [('record_observation', {'label': 'cup'})]]
    else:
        assert now == before  # the old version, untouched
    assert not out.exists()
    rerun = subprocess.run(command, env=ros_env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f'removed {tmp_path / staged[0]}: left by an earlier run' in rerun.stdout
    result = out if where == 'output' else root
    assert [language.tool_calls(r) for r in episodes.read_episode(result, 1).frames[6].events
            ] == [[], [('record_observation', {'label': 'cup'})]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ['audit.jsonl', 'two', 'ready', *(['out'] if where == 'output' else [])])


# -- the dispatcher records interjections and markers ----------------------------------------

def test_dispatcher_records_interjections_and_episode_markers(start_node, ros_node, tmp_path):
    log = tmp_path / 'audit.jsonl'
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '--params-file',
                            str(PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'),
                            '-p', f'audit_log:={log}', '-p', 'record_events:=true')
    said = ros_node.create_publisher(String, '/lerobot_tools/interjections', RELIABLE)
    marks = ros_node.create_publisher(String, '/lerobot_tools/episode_markers', RELIABLE)
    assert spin_until(ros_node, lambda: said.get_subscription_count() > 0
                      and marks.get_subscription_count() > 0, 60.0), dispatcher.output()
    spin_until(ros_node, lambda: False, 0.5)  # the dispatcher's readers match ours too
    marks.publish(String(data='start 4'))
    said.publish(String(data='Stop, wrong cube!'))
    marks.publish(String(data='begin 4'))
    marks.publish(String(data='{"event": "end", "episode": 4}'))

    def records() -> list[dict]:
        return list(read_audit_log(log)) if log.exists() else []
    assert spin_until(ros_node, lambda: len(records()) >= 3, 20.0), dispatcher.output()
    found = [{k: v for k, v in r.items() if k not in ('wall_time', 'ros_time_ns')}
             for r in records()]
    # Two topics: the records keep their times, not one order across both.
    assert sorted(found, key=json.dumps) == sorted([
        {'event': 'episode', 'marker': 'start', 'episode': 4, 'rate': 1.0, 'time': None},
        {'event': 'interjection', 'text': 'Stop, wrong cube!'},
        {'event': 'episode', 'marker': 'end', 'episode': 4, 'rate': 1.0, 'time': None}],
        key=json.dumps)
    markers = [r for r in records() if r['event'] == 'episode']
    assert markers[0]['wall_time'] <= markers[1]['wall_time']
    assert "event must be start or end, got 'begin'" in dispatcher.output()


def test_record_events_without_an_audit_log_is_one_clear_error(start_node):
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', 'record_events:=true')
    assert dispatcher.proc.wait(60) == errors.EXIT_CONFIGURATION_ERROR
    output = dispatcher.output()
    assert 'record_events is true but audit_log is empty' in output
    assert 'Traceback' not in output


# -- the round trip ---------------------------------------------------------------------------

def round_trip(ros_env: dict, tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """
    Replay the sample episode (at 5 fps) with an audit log, add the log to a bare copy.

    Its events are at frames 0, 30, 45 and 75: 0, 6, 9 and 15 s. Each comes back on the frame
    at or just before the time it was recorded, which is its own frame unless the machine
    held it up for a frame period (200 ms); `logged_frames` says which frame that is.
    """
    annotated = sample_copy(tmp_path, fps=5)
    log = tmp_path / 'audit.jsonl'
    run = subprocess.run(
        [sys.executable, '-m', 'lerobot_tools_ros.cli', 'replay', str(annotated),
         '--tts-backend', 'espeak_ng', '--output-dir', str(tmp_path / 'out'),
         '--audit-log', str(log)],
        env=ros_env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    bare, out = bare_copy(tmp_path, fps=5), tmp_path / 'recorded'
    add = subprocess.run(
        [sys.executable, '-m', 'lerobot_tools_ros.cli', 'dataset', 'add-events', str(bare),
         '--episode', '0', '--audit', str(log), '--output', str(out)],
        env=ros_env, capture_output=True, text=True, timeout=120)
    assert add.returncode == 0, add.stdout + add.stderr
    assert 'wrote 6 row(s)' in add.stdout, add.stdout
    return annotated, out


def event_key(row: dict) -> str:
    """Return what an event row says (role, style, content, calls), whatever its layout."""
    return json.dumps([row['role'], row['style'], row['content'], language.tool_calls(row)],
                      sort_keys=True)


def event_text(key: str) -> str:
    """Return an event's words (event_key): what was said, or its first call's text or label."""
    role, style, content, calls = json.loads(key)
    if not calls:
        return content
    arguments = calls[0][1]
    return arguments.get('text') or arguments.get('label')


def event_frames(root: pathlib.Path, episode: int) -> dict[str, int]:
    """Each event of the episode (event_key) with the frame it is on."""
    found = {}
    for frame in episodes.read_episode(root, episode).frames:
        for row in frame.events:
            assert event_key(row) not in found, 'the test episodes hold each event once'
            found[event_key(row)] = frame.frame_index
    return found


def logged_frames(log: pathlib.Path, root: pathlib.Path, episode: int) -> dict[str, int]:
    """
    Return the frame each recorded event belongs on: the last at or before its recorded time.

    Times count from the replay's start marker (the time it states), as add-events counts.
    """
    records = list(read_audit_log(log))
    start = next(r['time'] for r in records
                 if r.get('event') == 'episode' and r.get('marker') == 'start')
    succeeded = {r['call_id'] for r in records if r.get('event') == 'result' and r['success']}
    stamps = episodes.read_episode(root, episode).timestamps
    found = {}
    for record in records:
        if record.get('event') == 'call' and record['call_id'] in succeeded:
            row = language.tool_call_row(record['name'], record['arguments'])
        elif record.get('event') == 'interjection':
            row = language.interjection_row(record['text'])
        else:
            continue
        time_s = record['wall_time'] - start
        found[event_key(row)] = max(i for i, t in enumerate(stamps) if t <= time_s + 1e-4)
    return found


def test_replay_then_add_events_gives_the_episodes_events_back(ros_env, tmp_path):
    annotated, recorded = round_trip(ros_env, tmp_path)
    replayed, written = event_frames(annotated, 0), event_frames(recorded, 0)
    assert written.keys() == replayed.keys()
    # Each on the frame of its recorded time: its own frame, or a later one if held up; never
    # an earlier one.
    assert written == logged_frames(tmp_path / 'audit.jsonl', recorded, 0)
    assert all(written[key] >= replayed[key] for key in written), (written, replayed)


def lerobot_python() -> pathlib.Path | None:
    """Return the Python of the 3.12 venv with lerobot 0.6.1 (`make lerobot-check`), if made."""
    given = os.environ.get('LEROBOT_CHECK_PYTHON')
    if given:
        return pathlib.Path(given)
    venv = REPO_DIR / '.venv-lerobot'
    # Written by scripts/lerobot_venv.sh once the venv is complete (CI makes it meanwhile).
    return venv / 'bin' / 'python' if (venv / '.lerobot-check-ready').exists() else None


def upstream(tmp_path: pathlib.Path, script: str, *args: str) -> Any:
    """Run a test script in LeRobot's venv (`make lerobot-venv`); return its last JSON line."""
    python = lerobot_python()
    if python is None:
        pytest.skip('no Python 3.12 venv with lerobot 0.6.1: run `make lerobot-check` (or set '
                    'LEROBOT_CHECK_PYTHON) to check against upstream itself')
    # LeRobot's venv, not ours: none of the ROS workspace's paths.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('PYTHON', 'AMENT', 'COLCON', 'LD_'))}
    env['HF_HUB_OFFLINE'] = '1'
    env['HF_LEROBOT_HOME'] = str(tmp_path / 'lerobot_home')
    run = subprocess.run([str(python), str(TEST_DIR / script), *args], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_lerobot_opens_the_shipped_sample_dataset(tmp_path):
    found = upstream(tmp_path, 'upstream_language_check.py', str(SAMPLE_DATASET), '0', '45')
    assert found['frames'] == 90
    assert found['image_shapes'] == {'observation.images.front': [3, 48, 64]}
    assert [t['function']['name'] for t in found['tools']] == [
        'say', 'record_observation', 'close_gripper']
    assert sorted(map(int, found['events'])) == [0, 30, 45, 75]
    assert found['rendered']['45']['messages'][-1] == {'role': 'assistant', 'tool_calls': [
        {'type': 'function', 'function': {'name': 'say', 'arguments': {
            'text': 'OK, I will use the blue cube.', 'label': None}}}]}


def test_lerobots_own_readers_load_what_add_events_wrote(ros_env, tmp_path):
    if lerobot_python() is None:
        upstream(tmp_path, 'none')  # skips, saying how to make the venv
    _, recorded = round_trip(ros_env, tmp_path)
    # Where the rows went (frames 0, 30, 45, 75, unless the machine held a call up; see
    # round_trip): LeRobot must find them there.
    frames = event_frames(recorded, 0)
    texts = {event_text(key): frame for key, frame in frames.items()}
    answer = texts['OK, I will use the blue cube.']
    found = upstream(tmp_path, 'upstream_language_check.py', str(recorded), '0',
                     str(texts['I will put the red cube in the bin.']), str(answer),
                     str(answer + 5))
    print(json.dumps(found['rendered'], indent=1))  # the closing note quotes this output
    assert found['default_tools'] == [annotated_episode.UPSTREAM_SAY]
    assert [t['function']['name'] for t in found['tools']] == ['say', 'record_observation']
    assert found['has_language_columns']
    assert set(found['language_features']) == set(language.LANGUAGE_COLUMNS)
    # Every row on the frame add-events put it on, as LeRobot decodes it.
    assert {int(frame): sorted(event_key(row) for row in rows)
            for frame, rows in found['events'].items()} == {
        frame: sorted(key for key in frames if frames[key] == frame)
        for frame in set(frames.values())}
    rendered = found['rendered']
    first = str(texts['I will put the red cube in the bin.'])
    assert rendered[first]['messages'][-1] == {'role': 'assistant', 'tool_calls': [
        language.call_dict('say', {'text': 'I will put the red cube in the bin.'})]}
    heard = texts['Use the blue cube instead.'] == answer  # (unless held up apart)
    assert rendered[str(answer)]['messages'] == [
        {'role': 'user', 'content': 'task'},
        *([{'role': 'user', 'content': 'Use the blue cube instead.'}] if heard else []),
        {'role': 'assistant', 'tool_calls': [
            language.call_dict('say', {'text': 'OK, I will use the blue cube.'})]}]
    assert rendered[str(answer)]['target_message_indices'] == [2 if heard else 1]
    assert rendered[str(answer + 5)] is None  # nothing emitted there: no target message


def test_a_dataset_lerobot_made_replays_with_the_defaults_and_takes_events(ros_env, tmp_path):
    """
    A dataset made by LeRobot's own writer: replay, add-events, LeRobot reads the result.

    `upstream_make_dataset.py` (in LeRobot's venv): two episodes recorded with
    `LeRobotDataset`, episode 0 annotated by the steerable pipeline's staging, validator and
    writer (say only in `tools`; a say with an OpenAI id and a null argument; a registered
    style; a VQA pair). Episode 0 replays with the packaged parameters; its audit log goes into
    episode 1; episode 0 stays equal as a pyarrow table; LeRobot finds the new rows on their
    frames.
    """
    root = tmp_path / 'made'
    stamps = upstream(tmp_path, 'upstream_make_dataset.py', str(root))
    assert len(stamps) == 20
    log = tmp_path / 'audit.jsonl'
    replay = subprocess.run(
        [sys.executable, '-m', 'lerobot_tools_ros.cli', 'replay', str(root), '--episode', '0',
         '--tts-backend', 'espeak_ng', '--output-dir', str(tmp_path / 'out'),
         '--audit-log', str(log)], env=ros_env, capture_output=True, text=True, timeout=240)
    output = replay.stdout + replay.stderr
    assert replay.returncode == 0, output
    assert "not hosting 'record_observation'" in output
    assert "style 'mood' is not one of upstream's core styles" in output
    assert output.count("style 'vqa' has nothing to replay") == 2, output
    assert '2 result(s) for 2 call(s); 0 failed' in replay.stdout
    assert 'Traceback' not in output
    start = next(r['time'] for r in read_audit_log(log)
                 if r.get('event') == 'episode' and r.get('marker') == 'start')
    data = root / DATA_FILE
    before = pq.read_table(data)
    add = subprocess.run(
        [sys.executable, '-m', 'lerobot_tools_ros.cli', 'dataset', 'add-events', str(root),
         '--episode', '1', '--audit', str(log), '--start', repr(start), '--in-place'],
        env=ros_env, capture_output=True, text=True, timeout=120)
    assert add.returncode == 0, add.stdout + add.stderr
    assert 'wrote 3 row(s) into episode 1' in add.stdout, add.stdout
    after = pq.read_table(data)
    # Episode 0 (and every column) exactly as LeRobot wrote it; the column keeps its type.
    assert by_episode(after, 1, keep=False).equals(by_episode(before, 1, keep=False))
    assert after.schema.equals(before.schema)
    assert not [p for p in tmp_path.iterdir() if '.add-events-' in p.name]
    # Each row on the frame of its recorded time (episode 0's frames 0 and 10, unless the
    # machine held a call up for a frame period), and LeRobot finds it there.
    frames = event_frames(root, 1)
    assert frames == logged_frames(log, root, 1)
    texts = {event_text(key): frame for key, frame in frames.items()}
    assert sorted(texts) == ['I will put the red cube in the bin.',
                             'OK, I will use the blue cube.', 'Use the blue cube instead.']
    answer = texts['OK, I will use the blue cube.']
    found = upstream(tmp_path, 'upstream_language_check.py', str(root), '1', str(answer),
                     str(answer + 1))
    assert [t['function']['name'] for t in found['tools']] == ['say']
    assert {int(frame): sorted(event_key(row) for row in rows)
            for frame, rows in found['events'].items()} == {
        frame: sorted(key for key in frames if frames[key] == frame)
        for frame in set(frames.values())}
    heard = texts['Use the blue cube instead.'] == answer
    assert found['rendered'][str(answer)]['messages'][1:] == [
        *([{'role': 'user', 'content': 'Use the blue cube instead.'}] if heard else []),
        {'role': 'assistant', 'tool_calls': [{'type': 'function', 'id': None, 'function': {
            'name': 'say', 'arguments': {'text': 'OK, I will use the blue cube.',
                                         'voice': None}}}]}]
    assert found['rendered'][str(answer + 1)] is None
    # Episode 0's say, as LeRobot decodes it: its id and its null argument kept.
    (call,) = found['other_episodes_events']['0:0'][0]['tool_calls']
    assert call['id'] == 'call_abc123'
    assert call['function']['arguments'] == {'text': 'I will put the red cube in the bin.',
                                             'voice': None}
