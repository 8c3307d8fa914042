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

"""``lerobot-tools-ros catalog``: table, --check, --strict and --add-from, on real files."""

import json
import pathlib
import sys

from lerobot_tools_ros.catalog import CatalogError, DEFAULT_TOOLS, SAMPLE_DATASET, ToolCatalog
from lerobot_tools_ros.catalog.edit import add_tool_schema
from lerobot_tools_ros.cli import main
import pytest

WAVE = {
    'type': 'function',
    'function': {
        'name': 'wave',
        'description': 'Wave the arm.',
        'parameters': {'type': 'object', 'properties': {'times': {'type': 'integer'}},
                       'required': ['times']},
    },
}


def write_info(root: pathlib.Path, **fields) -> pathlib.Path:
    info = {'codebase_version': 'v3.0', 'robot_type': 'so101', 'fps': 30,
            'features': {'observation.images.front': {'dtype': 'video', 'shape': [480, 640, 3],
                                                      'names': ['height', 'width', 'channels']}}}
    info.update(fields)
    path = root / 'meta' / 'info.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info, indent=4))
    return path


def test_table_lists_declared_tools(tmp_path, capsys):
    path = write_info(tmp_path, tools=DEFAULT_TOOLS + [WAVE])
    assert main(['catalog', str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ['NAME', 'REQUIRED', 'DESCRIPTION', 'IMPLEMENTATION', 'SOURCE',
                                'KIND']
    assert lines[1].startswith('say') and ' text ' in lines[1]
    assert 'Speak a short utterance' in lines[1] and lines[1].endswith('declared')
    assert str(path) in lines[1]
    assert lines[2].startswith('wave') and ' times ' in lines[2] and ' none ' in lines[2]
    assert len(lines) == 3


def test_table_marks_default_tools(tmp_path, capsys):
    write_info(tmp_path)
    assert main(['catalog', str(tmp_path / 'meta' / 'info.json')]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith('say') and lines[1].endswith('default')


def test_table_for_sample_dataset(capsys):
    assert main(['catalog']) == 0
    out = capsys.readouterr().out
    assert 'record_observation' in out and 'label' in out and 'built-in' in out


def test_table_warns_about_skipped_entries(tmp_path, capsys):
    write_info(tmp_path, tools=[WAVE, {'type': 'function', 'function': {'name': 'x'}}])
    assert main(['catalog', str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert 'wave' in captured.out
    assert "tools[1] ('x'): function.parameters is missing" in captured.err


def test_check_ok(tmp_path, capsys):
    write_info(tmp_path, tools=[WAVE])
    assert main(['catalog', str(tmp_path), '--check']) == 0
    assert 'OK, 1 tool(s) declared by the dataset: wave' in capsys.readouterr().out


def test_check_lists_every_problem(tmp_path, capsys):
    path = write_info(tmp_path, tools=[
        WAVE, {'type': 'function', 'function': {'name': 'x'}}, 'junk', WAVE])
    assert main(['catalog', str(tmp_path), '--check']) == 1
    out = capsys.readouterr().out
    assert f'{path}: 3 problem(s):' in out
    assert "tools[1] ('x'): function.parameters is missing" in out
    assert 'tools[2] (no name): entry must be an object, got string' in out
    assert "tools[3] ('wave'): duplicate tool name 'wave'" in out


@pytest.mark.parametrize('content,message', [
    ('{not json', 'not valid JSON'),
    ('{"tools": {"say": 1}}', '"tools" must be a list'),
])
def test_check_on_unloadable_file(tmp_path, capsys, content, message):
    (tmp_path / 'info.json').write_text(content)
    assert main(['catalog', str(tmp_path / 'info.json'), '--check']) == 1
    err = capsys.readouterr().err
    assert message in err and str(tmp_path / 'info.json') in err


def test_strict_fails_on_first_bad_entry(tmp_path, capsys):
    write_info(tmp_path, tools=[WAVE, {'type': 'function', 'function': {'name': 'x'}}])
    assert main(['catalog', str(tmp_path), '--strict']) == 1
    assert "tools[1] ('x'): function.parameters is missing" in capsys.readouterr().err


def test_offline_repo_id_fails_fast(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv('HF_LEROBOT_HOME', str(tmp_path))
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    monkeypatch.chdir(tmp_path)
    assert main(['catalog', 'nobody/nothing']) == 1
    err = capsys.readouterr().err
    assert str(tmp_path / 'nobody' / 'nothing' / 'meta' / 'info.json') in err


def test_no_subcommand_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2


def test_add_from_without_transformers_refuses(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, 'transformers', None)  # as if not installed
    monkeypatch.setitem(sys.modules, 'transformers.utils', None)
    path = write_info(tmp_path, tools=[WAVE])
    before = path.read_bytes()
    assert main(['catalog', str(tmp_path), '--add-from', 'json:dumps']) == 2
    err = capsys.readouterr().err
    assert 'transformers' in err and 'pip install transformers' in err
    assert path.read_bytes() == before
    assert not (path.parent / 'info.json.bak').exists()


TOOL_MODULE = '''
def wave_hand(times: int, speed: float = 0.5) -> str:
    """
    Wave the robot's hand at the user.

    Args:
        times: How many times to wave.
        speed: Fraction of the top speed.
    """
    return 'waved'
'''


@pytest.fixture
def tool_module(tmp_path, monkeypatch) -> str:
    """Write a typed, documented function in a module of the current directory, as users do."""
    pytest.importorskip('transformers.utils', reason='--add-from needs transformers')
    name = 'addfrom_tools_for_test'
    work = tmp_path / 'work'
    work.mkdir()
    (work / f'{name}.py').write_text(TOOL_MODULE)
    monkeypatch.chdir(work)
    monkeypatch.delitem(sys.modules, name, raising=False)
    yield f'{name}:wave_hand'
    sys.modules.pop(name, None)


def test_add_from_appends_the_function_schema(tmp_path, tool_module, capsys):
    path = write_info(tmp_path / 'ds', tools=[WAVE])
    before = path.read_bytes()
    assert main(['catalog', str(tmp_path / 'ds'), '--add-from', tool_module]) == 0
    assert f"added tool 'wave_hand' to {path}" in capsys.readouterr().out
    catalog = ToolCatalog.load(tmp_path / 'ds', strict=True)
    assert catalog.names == ['wave', 'wave_hand']
    assert catalog.description('wave_hand') == "Wave the robot's hand at the user."
    parameters = catalog.parameters('wave_hand')
    assert parameters['required'] == ['times']
    assert parameters['properties']['times']['type'] == 'integer'
    assert parameters['properties']['speed']['type'] == 'number'
    assert catalog.validate('wave_hand', {'times': 2}) == {'times': 2}
    assert path.with_name('info.json.bak').read_bytes() == before
    # A second run refuses the duplicate and leaves the file as it is.
    after = path.read_bytes()
    assert main(['catalog', str(tmp_path / 'ds'), '--add-from', tool_module]) == 1
    assert "already named 'wave_hand'" in capsys.readouterr().err
    assert path.read_bytes() == after


def test_add_from_refuses_to_edit_the_packaged_sample_dataset(tmp_path, tool_module, capsys):
    info = SAMPLE_DATASET / 'meta' / 'info.json'
    before = info.read_bytes()
    link = tmp_path / 'looks_local'
    link.symlink_to(SAMPLE_DATASET, target_is_directory=True)
    for source in (SAMPLE_DATASET, link, info):
        assert main(['catalog', str(source), '--add-from', tool_module]) == 2
        assert 'sample dataset shipped with this package' in capsys.readouterr().err
    assert info.read_bytes() == before
    assert not info.with_name('info.json.bak').exists()


# ----------------------------------------------------------------------- add_tool_schema
def test_add_tool_schema_appends_atomically_with_backup(tmp_path):
    path = write_info(tmp_path, tools=[WAVE])
    before = path.read_bytes()
    point = {'type': 'function', 'function': {
        'name': 'point', 'description': 'Point at something.',
        'parameters': {'type': 'object', 'properties': {'what': {'type': 'string'}}}}}
    backup = add_tool_schema(path, point)
    assert backup == path.with_name('info.json.bak') and backup.read_bytes() == before
    catalog = ToolCatalog.load(tmp_path, strict=True)
    assert catalog.names == ['wave', 'point'] and catalog.schema('point') == point
    assert catalog.info['fps'] == 30
    assert sorted(p.name for p in path.parent.iterdir()) == ['info.json', 'info.json.bak']


def test_add_tool_schema_keeps_default_say(tmp_path):
    path = write_info(tmp_path)
    add_tool_schema(path, WAVE)
    catalog = ToolCatalog.load(tmp_path)
    assert catalog.names == ['say', 'wave'] and not catalog.used_default
    assert catalog.schema('say') == DEFAULT_TOOLS[0]


def test_add_tool_schema_refuses_duplicates_and_bad_entries(tmp_path):
    path = write_info(tmp_path, tools=[WAVE])
    before = path.read_bytes()
    with pytest.raises(CatalogError, match="tools\\[0\\] is already named 'wave'"):
        add_tool_schema(path, WAVE)
    bad = {'type': 'function', 'function': {'name': 'bad tool', 'parameters': {}}}
    with pytest.raises(CatalogError, match='must match'):
        add_tool_schema(path, bad)
    assert path.read_bytes() == before
    assert not path.with_name('info.json.bak').exists()


def test_add_tool_schema_refuses_unreadable_targets(tmp_path):
    path = tmp_path / 'info.json'
    path.write_text('[]')
    with pytest.raises(CatalogError, match='must hold a JSON object'):
        add_tool_schema(path, WAVE)
    path.write_text('{"tools": "say"}')
    with pytest.raises(CatalogError, match='"tools" must be a list'):
        add_tool_schema(path, WAVE)
