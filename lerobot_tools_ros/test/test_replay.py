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
Replaying annotated LeRobot episodes: the plan (pure) and `lerobot-tools-ros replay` for real.

The episodes are written the way LeRobot 0.6.1's annotation writer writes them
(`annotated_episode`); the replay goes through the real dispatcher, tool_server and speaker
with the packaged parameters file, as one process like a user runs it.
"""

import json
import pathlib
import re
import subprocess
import sys

import annotated_episode
from conftest import PACKAGE_DIR, spin_until
from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import DEFAULT_TOOLS, SAMPLE_DATASET, ToolCatalog
from lerobot_tools_ros.dataset import episodes
from lerobot_tools_ros.dataset.language import LanguageRowError
from lerobot_tools_ros.dataset.render import FORMATS, render, RenderError
from lerobot_tools_ros.dataset.replay import plan_replay, ResultBook, Schedule
from lerobot_tools_ros.parsing import parse
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

SAMPLE_INFO = json.loads((SAMPLE_DATASET / 'meta' / 'info.json').read_text())
UPSTREAM_SAY = annotated_episode.UPSTREAM_SAY


def sample_plan(fmt: str = 'auto', prose: bool = False):
    root = episodes.dataset_root(SAMPLE_DATASET)
    return plan_replay(episodes.read_episode(root, 0), ToolCatalog.load(root), fmt, prose=prose)


# -- the sample dataset ---------------------------------------------------------------------

def test_default_tools_and_the_sample_say_stay_upstreams_say_schema():
    assert DEFAULT_TOOLS == [UPSTREAM_SAY]
    assert SAMPLE_INFO['tools'][0] == UPSTREAM_SAY


def test_the_sample_episode_is_what_the_generator_writes(tmp_path):
    """The committed parquet files are `annotated_episode.write_sample`'s output."""
    annotated_episode.write_sample(tmp_path, SAMPLE_INFO)
    for relative in ('data/chunk-000/file-000.parquet', 'meta/tasks.parquet',
                     'meta/episodes/chunk-000/file-000.parquet'):
        shipped = pq.read_table(SAMPLE_DATASET / relative)
        fresh = pq.read_table(tmp_path / relative)
        assert shipped.schema.equals(fresh.schema), relative
        assert shipped.to_pylist() == fresh.to_pylist(), relative
    info = json.loads((tmp_path / 'meta' / 'info.json').read_text())
    for key in ('total_episodes', 'total_frames', 'total_tasks', 'fps', 'splits', 'features'):
        assert SAMPLE_INFO[key] == info[key], key


def test_setup_py_installs_every_file_of_the_sample_dataset():
    patterns = re.findall(r"'(data/sample_dataset/[^']+)'", (PACKAGE_DIR / 'setup.py').read_text())
    package = PACKAGE_DIR / 'lerobot_tools_ros'
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    present = {path for path in SAMPLE_DATASET.rglob('*') if path.is_file()}
    assert present and present == shipped


def test_a_repo_id_is_found_in_lerobots_home_or_a_hub_cache_and_nowhere_else(
        tmp_path, monkeypatch):
    home, hub = tmp_path / 'lerobot_home', tmp_path / 'hf_hub'
    monkeypatch.setenv('HF_LEROBOT_HOME', str(home))
    monkeypatch.setenv('HF_HUB_CACHE', str(hub))
    with pytest.raises(episodes.DatasetError, match=r"cannot find dataset 'lab/cubes': tried .*"
                                                    r'lab/cubes \(no meta/info.json\).*'
                                                    'reads local copies only'):
        episodes.dataset_root('lab/cubes')
    snapshot = hub / 'datasets--lab--cubes' / 'snapshots' / 'abc123'
    annotated_episode.write_sample(snapshot, SAMPLE_INFO)
    assert episodes.dataset_root('lab/cubes') == snapshot
    annotated_episode.write_sample(home / 'lab' / 'cubes', SAMPLE_INFO)
    assert episodes.dataset_root('lab/cubes') == home / 'lab' / 'cubes'  # LeRobot's place first
    assert episodes.read_episode(episodes.dataset_root('lab/cubes'), 0).frames[45].events


# -- planning -------------------------------------------------------------------------------

def test_plan_puts_each_frames_calls_and_interjections_at_its_time():
    plan = sample_plan()
    assert [(s.frame_index, s.timestamp) for s in plan.steps] == [
        (0, 0.0), (30, 1.0), (45, 1.5), (75, 2.5)]
    assert plan.steps[0].calls == [('say', {'text': 'I will put the red cube in the bin.'})]
    assert plan.steps[1].calls == [('record_observation', {'label': 'before_grasp'})]
    assert plan.steps[2].interjections == ['Use the blue cube instead.']
    assert plan.steps[2].calls == [('say', {'text': 'OK, I will use the blue cube.'})]
    assert [name for name, _ in plan.steps[3].calls] == ['record_observation', 'say']
    assert plan.calls == 5 and not plan.skipped
    assert plan.steps[0].text == '<say>I will put the red cube in the bin.</say>'


@pytest.mark.parametrize('fmt', FORMATS)
def test_every_format_parses_back_to_the_episodes_calls(fmt):
    catalog = ToolCatalog.load(SAMPLE_DATASET)
    for step in sample_plan(fmt, prose=True).steps:
        parsed = parse(step.text, catalog)
        assert not parsed.errors, (fmt, step.text, parsed.errors)
        assert [(c.name, c.arguments) for c in parsed.calls] == step.calls, (fmt, step.text)


def test_prose_puts_plan_and_subtasks_where_they_become_active():
    steps = {step.frame_index: step for step in sample_plan(prose=True).steps}
    assert steps[0].prose == ['1. Find the cube. 2. Pick it up. 3. Place it in the bin.',
                              'Find the red cube.']
    assert steps[45].prose == ['Pick up the blue cube and place it in the bin.']
    assert steps[45].text.startswith('Pick up the blue cube')
    catalog = ToolCatalog.load(SAMPLE_DATASET)
    assert parse(steps[45].text, catalog).content == steps[45].prose[0]


def test_auto_writes_a_tag_for_a_call_a_marker_cannot_carry():
    catalog = ToolCatalog.load(SAMPLE_DATASET)
    calls = [('record_observation', {'label': 'cup', 'camera': 'front'}),
             ('say', {'text': 'a </say> inside'})]
    text = render(calls, catalog, 'auto')
    assert '<record_observation>' not in text and text.count('<tool_call>') == 2
    assert [(c.name, c.arguments) for c in parse(text, catalog).calls] == calls
    with pytest.raises(RenderError, match='cannot be written as a <record_observation> marker'):
        render(calls, catalog, 'lerobot_marker')
    with pytest.raises(RenderError, match='unknown format'):
        render(calls, catalog, 'yaml')


def _episode_with(events: dict) -> episodes.Episode:
    frames = [episodes.Frame(i, i / 10, events.get(i, [])) for i in range(5)]
    return episodes.Episode(0, frames, [], 10.0)


def test_rows_that_break_upstreams_schema_are_named():
    bad_style = {0: [{'role': 'assistant', 'content': 'x', 'style': 'plan', 'camera': None,
                      'tool_calls': None}]}
    with pytest.raises(LanguageRowError, match='frame 0 language_events.0.: style .plan. '
                                               'belongs in language_persistent'):
        plan_replay(_episode_with(bad_style), None)
    no_function = {2: [{'role': 'assistant', 'content': None, 'style': None, 'camera': None,
                        'tool_calls': ['{"name": "say"}']}]}
    with pytest.raises(LanguageRowError, match=r'frame 2 .*tool_calls\[0\]: no "function"'):
        plan_replay(_episode_with(no_function), None)
    vqa = {1: [{'role': 'assistant', 'content': '{}', 'style': 'vqa', 'camera': 'front',
                'tool_calls': None}]}
    plan = plan_replay(_episode_with(vqa), None)
    assert not plan.steps and 'has nothing to replay' in plan.skipped[0]


def test_arguments_stored_as_json_text_are_read():
    row = {'role': 'assistant', 'content': None, 'style': None, 'camera': None,
           'tool_calls': [json.dumps({'type': 'function', 'function': {
               'name': 'say', 'arguments': json.dumps({'text': 'hi'})}})]}
    assert plan_replay(_episode_with({3: [row]}), None).steps[0].calls == [
        ('say', {'text': 'hi'})]


def test_schedule_follows_the_rate_from_the_first_frame():
    steps = sample_plan().steps
    schedule = Schedule(steps, rate=2.0, origin=0.0)
    assert [s.frame_index for s in schedule.due(0.0)] == [0]
    assert schedule.next_due() == pytest.approx(0.5)
    assert schedule.due(0.49) == []
    assert [s.frame_index for s in schedule.due(0.75)] == [30, 45]
    assert not schedule.finished
    assert [s.frame_index for s in schedule.due(10.0)] == [75] and schedule.finished
    with pytest.raises(ValueError, match='rate must be a positive number'):
        Schedule(steps, rate=0.0)


def test_a_first_call_late_in_the_episode_waits_for_its_frame():
    row = {'role': 'assistant', 'content': None, 'style': None, 'camera': None,
           'tool_calls': [{'type': 'function', 'function': {'name': 'say',
                                                            'arguments': {'text': 'late'}}}]}
    plan = plan_replay(_episode_with({4: [row]}), None)
    assert plan.origin == 0.0 and plan.duration_s == pytest.approx(0.4)
    schedule = Schedule(plan.steps, 1.0, plan.origin)
    assert schedule.due(0.3) == [] and schedule.next_due() == pytest.approx(0.4)


def test_result_book_pairs_results_with_calls_and_names_failures():
    steps = sample_plan().steps
    book = ResultBook()
    book.expect('g75', steps[3])
    book.expect('g0', steps[0])
    assert not book.result('other', name='say', arguments='{}', success=True, error_code='')
    # Answers come in any order; matched by name and arguments.
    book.result('g75', name='say', arguments='{"text": "Done. The blue cube is in the bin."}',
                success=False, error_code=errors.DUPLICATE, error_message='said already')
    book.result('g75', name='record_observation', arguments='{"label": "after_place"}',
                success=False, error_code=errors.NO_FRAME, error_message='no camera frame')
    assert not book.complete
    book.result('g0', name='say', arguments='{"text": "I will put the red cube in the bin."}',
                success=True, error_code='', content='{}')
    assert book.complete and book.received == book.expected == 3
    rows = book.rows()
    assert [(r.frame_index, r.outcome, r.failed) for r in rows] == [
        (0, 'ok', False), (75, errors.NO_FRAME, True), (75, errors.DUPLICATE, False)]
    assert [r.detail for r in book.failures()] == ['no camera frame']


def test_a_call_without_result_is_a_failure():
    book = ResultBook()
    book.expect('g', sample_plan().steps[1])
    (row,) = book.failures()
    assert row.outcome == 'no result' and row.call.startswith('record_observation(')


# -- lerobot-tools-ros replay, for real -------------------------------------------------------

def run_replay(tmp_path: pathlib.Path, env: dict, *args: str, timeout: float = 240.0):
    out = tmp_path / 'out'
    return subprocess.run(
        [sys.executable, '-m', 'lerobot_tools_ros.cli', 'replay', *args, '--tts-backend',
         'espeak_ng', '--output-dir', str(out)], env=env, capture_output=True, text=True,
        timeout=timeout), out


def table_rows(stdout: str) -> list[tuple[int, str, str]]:
    """(frame, call, result) of each table row."""
    return [(int(m.group(1)), m.group(2).strip(), m.group(3).strip()) for m in re.finditer(
        r'^\s+(\d+)\s+\d+\.\d{3}\s{2}(.{56}) (.*)$', stdout, re.M)]


def test_replay_of_the_sample_episode_speaks_and_records_through_the_executors(
        ros_env, tmp_path):
    run, out = run_replay(tmp_path, ros_env)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = table_rows(run.stdout)
    assert [(frame, result) for frame, _, result in rows] == [
        (0, 'ok'), (30, 'ok'), (45, 'published'), (45, 'ok'), (75, 'ok'), (75, 'ok')], run.stdout
    assert rows[2][1] == 'interjection: Use the blue cube instead.'
    assert '5 result(s) for 5 call(s); 0 failed' in run.stdout
    stills = sorted(p.name for p in (out / 'observations').glob('*.png'))
    assert stills == ['after_place.png', 'before_grasp.png']
    assert len(list((out / 'audio').glob('*.wav'))) == 3


def test_replay_exits_1_and_names_the_call_that_failed(ros_env, tmp_path):
    events = {0: [annotated_episode.speech('Starting.')],
              2: [annotated_episode.call('record_observation', {'label': '../escape'})],
              4: [annotated_episode.call('fly', {'height': 3})]}
    root = annotated_episode.write_dataset(tmp_path / 'bad', SAMPLE_INFO, {0: (events, [])},
                                           frames=6)
    run, _ = run_replay(tmp_path, ros_env, str(root), '--format', 'hermes', '--rate', '4')
    assert run.returncode == 1, run.stdout + run.stderr
    rows = table_rows(run.stdout)
    assert [(frame, result.split(':')[0]) for frame, _, result in rows] == [
        (0, 'ok'), (2, errors.INVALID_ARGUMENTS), (4, errors.UNKNOWN_TOOL)], run.stdout
    assert '3 result(s) for 3 call(s); 2 failed' in run.stdout


def test_replay_of_a_missing_episode_is_one_error_line(ros_env, tmp_path):
    run, _ = run_replay(tmp_path, ros_env, '--episode', '7', timeout=60.0)
    assert run.returncode == errors.EXIT_CONFIGURATION_ERROR
    assert 'episode 7 has no frames (the dataset has 1 episode(s), numbered from 0)' in \
        run.stderr
    assert 'Traceback' not in run.stderr


def test_the_replay_node_plays_into_a_runtime_already_running(
        start_process, ros_env, ros_node, tmp_path):
    """The `replay` executable, as a launch file starts it, against a running `bringup`."""
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    bringup = start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup',
                             '--demo-camera', '--tts-backend', 'espeak_ng', '--duration', '300',
                             '--output-dir', str(tmp_path / 'out')], name='bringup')
    # A robot's camera is streaming before a replay starts: wait for its frames here too (the
    # tool_server's subscription matches about when ours does; then one more second).
    frames = []
    ros_node.create_subscription(Image, '/camera/front/image_raw', frames.append,
                                 qos_profile_sensor_data)
    assert spin_until(ros_node, lambda: bool(frames) and '[bringup] ready' in bringup.output(),
                      60.0), bringup.output()
    spin_until(ros_node, lambda: False, 1.0)
    run = subprocess.run(
        [sys.executable, '-m', 'lerobot_tools_ros.dataset.replay_node', '--ros-args', '-p',
         'format:=hermes', '-p', 'rate:=2.0', '-p', 'prose:=true'],
        env=ros_env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = table_rows(run.stdout)
    assert [result for _, _, result in rows] == ['ok', 'ok', 'published', 'ok', 'ok', 'ok'], \
        run.stdout
    stills = sorted(p.name for p in (tmp_path / 'out' / 'observations').glob('*.png'))
    assert stills == ['after_place.png', 'before_grasp.png']


@pytest.mark.parametrize('tools', ['none', 'say'])
def test_an_upstream_annotated_dataset_replays_with_the_packaged_defaults(
        ros_env, tmp_path, tools):
    """`tools: [say]` (LeRobot's pipeline) or none (DEFAULT_TOOLS), a registered style, VQA."""
    info = {k: v for k, v in SAMPLE_INFO.items() if k != 'tools'}
    if tools == 'say':
        info['tools'] = [UPSTREAM_SAY]
    mood = {'role': 'assistant', 'content': 'cheerful', 'style': 'mood', 'camera': None,
            'tool_calls': None}
    vqa = {'role': 'assistant', 'content': '{"count": 1}', 'style': 'vqa', 'camera': 'front',
           'tool_calls': None}
    events = {0: [annotated_episode.speech('Starting.'), mood],
              3: [annotated_episode.interjection('Faster.'), vqa,
                  annotated_episode.speech('Sure.')]}
    root = annotated_episode.write_dataset(tmp_path / 'upstream', info, {0: (events, [])},
                                           frames=6)
    run, _ = run_replay(tmp_path, ros_env, str(root), '--rate', '4')
    assert run.returncode == 0, run.stdout + run.stderr
    output = run.stdout + run.stderr
    assert output.count("not hosting 'record_observation': the catalog ") == 1, output
    assert 'does not declare it (declared: say)' in output
    rows = table_rows(run.stdout)
    assert [(frame, result) for frame, _, result in rows] == [
        (0, 'ok'), (3, 'published'), (3, 'ok')], run.stdout
    assert "style 'mood' is not one of upstream's core styles" in output
    assert "role 'assistant' style 'vqa' has nothing to replay" in output
    assert '2 result(s) for 2 call(s); 0 failed' in run.stdout
    assert 'Traceback' not in output


def test_a_malformed_or_unannotated_episode_is_one_line_with_a_hint(ros_env, tmp_path):
    root = annotated_episode.write_sample(tmp_path / 'wrong', SAMPLE_INFO)
    data = root / 'data' / 'chunk-000' / 'file-000.parquet'
    table = pq.read_table(data)
    column = table.column_names.index('language_events')
    pq.write_table(table.set_column(column, 'language_events', pa.array(
        range(table.num_rows), pa.int64())), data)
    run, _ = run_replay(tmp_path, ros_env, str(root), timeout=60.0)
    assert run.returncode == errors.EXIT_CONFIGURATION_ERROR, run.stdout + run.stderr
    assert f'{data} column language_events has type int64; LeRobot stores a list of rows' in \
        run.stderr
    assert 'Traceback' not in run.stderr
    pq.write_table(table.drop_columns(['language_events', 'language_persistent']), data)
    run, _ = run_replay(tmp_path, ros_env, str(root), timeout=60.0)
    assert run.returncode == errors.EXIT_CONFIGURATION_ERROR, run.stdout + run.stderr
    assert 'has no language columns (language_persistent or language_events): nothing to ' \
        'replay. Annotate it first' in run.stderr
    assert 'dataset add-events' in run.stderr and 'Traceback' not in run.stderr
