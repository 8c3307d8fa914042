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

"""Catalog loading and argument validation, against real info.json files in a temp directory."""

import json
import logging
import pathlib

import hypothesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from lerobot_tools_ros import errors
from lerobot_tools_ros.catalog import (
    CatalogError, DEFAULT_TOOLS, SAMPLE_DATASET, ToolArgumentError, ToolCatalog,
)
import pytest

# LeRobot's DEFAULT_TOOLS, as upstream's lerobot.datasets.language declares it.
UPSTREAM_DEFAULT_TOOLS_JSON = (
    '[{"type": "function", "function": {"name": "say", "description": "Speak a short utterance'
    ' to the user via the TTS executor.", "parameters": {"type": "object", "properties": {"text":'
    ' {"type": "string", "description": "The verbatim text to speak."}}, "required": ["text"]}}}]'
)

MOVE_TOOL = {
    'type': 'function',
    'function': {
        'name': 'move_to',
        'description': 'Move the gripper to a target.',
        'parameters': {
            'type': 'object',
            'properties': {
                'target': {
                    'type': 'object',
                    'properties': {
                        'x': {'type': 'number'},
                        'y': {'type': 'number'},
                        'frame': {'type': 'string', 'enum': ['base', 'tool']},
                    },
                    'required': ['x', 'y'],
                    'additionalProperties': False,
                },
                'speed': {'type': 'integer', 'minimum': 1, 'maximum': 100},
                'label': {'type': 'string', 'maxLength': 10, 'pattern': '^[a-z]+$'},
                'careful': {'type': 'boolean'},
                'waypoints': {'type': 'array', 'items': {'type': 'number'}, 'maxItems': 3},
                'note': {'type': ['string', 'null']},
            },
            'required': ['target'],
            'additionalProperties': False,
        },
    },
}

FEATURES = {
    'action': {'dtype': 'float32', 'shape': [6], 'names': None},
    'observation.state': {'dtype': 'float32', 'shape': [6], 'names': None},
    'observation.images.front': {'dtype': 'video', 'shape': [480, 640, 3],
                                 'names': ['height', 'width', 'channels']},
    'observation.images.wrist': {'dtype': 'video', 'shape': [480, 640, 3],
                                 'names': ['height', 'width', 'channels']},
    'timestamp': {'dtype': 'float32', 'shape': [1], 'names': None},
}


def write_dataset(root: pathlib.Path, **fields) -> pathlib.Path:
    """Write a LeRobot v3.0-style ``<root>/meta/info.json``; ``tools=...`` etc. override."""
    info = {'codebase_version': 'v3.0', 'robot_type': 'so101', 'fps': 30, 'total_episodes': 1,
            'total_frames': 10, 'features': FEATURES}
    info.update(fields)
    path = root / 'meta' / 'info.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info, indent=4))
    return path


def say_entry() -> dict:
    return json.loads(json.dumps(DEFAULT_TOOLS[0]))


# ------------------------------------------------------------------------------------ loading
def test_default_tools_match_lerobot_content():
    assert json.dumps(DEFAULT_TOOLS) == UPSTREAM_DEFAULT_TOOLS_JSON


def test_load_dataset_root_with_tools(tmp_path):
    path = write_dataset(tmp_path, tools=[say_entry(), MOVE_TOOL])
    before = path.read_bytes()
    catalog = ToolCatalog.load(tmp_path)
    assert catalog.names == ['say', 'move_to']
    assert catalog.tools == [say_entry(), MOVE_TOOL]
    assert catalog.schema('move_to') == MOVE_TOOL
    assert catalog.parameters('say') == DEFAULT_TOOLS[0]['function']['parameters']
    assert not catalog.used_default
    assert catalog.source == str(path)
    assert catalog.problems == []
    assert catalog.info['fps'] == 30 and catalog.info['codebase_version'] == 'v3.0'
    assert catalog.camera_names == ['front', 'wrist']
    assert 'say' in catalog and 'wave' not in catalog and len(catalog) == 2
    catalog.validate('say', {'text': 'hi'})
    assert path.read_bytes() == before  # read, never written


def test_load_info_json_path_and_str(tmp_path):
    path = write_dataset(tmp_path, tools=[MOVE_TOOL])
    assert ToolCatalog.load(path).names == ['move_to']
    assert ToolCatalog.load(str(path)).names == ['move_to']
    assert ToolCatalog.load(str(tmp_path)).names == ['move_to']


def test_without_tools_key_uses_lerobot_default(tmp_path):
    write_dataset(tmp_path)
    catalog = ToolCatalog.load(tmp_path)
    assert catalog.used_default
    assert catalog.tools == DEFAULT_TOOLS
    assert catalog.names == ['say']
    assert catalog.info['robot_type'] == 'so101'


@pytest.mark.parametrize('tools', [[], None])
def test_empty_or_null_tools_use_default(tmp_path, tools):
    write_dataset(tmp_path, tools=tools)
    catalog = ToolCatalog.load(tmp_path)
    assert catalog.used_default and catalog.tools == DEFAULT_TOOLS


def test_default_is_a_copy():
    catalog = ToolCatalog.from_tools(None)
    catalog.tools[0]['function']['name'] = 'changed'
    assert DEFAULT_TOOLS[0]['function']['name'] == 'say'


def test_from_tools_does_not_alias_callers_list():
    tools = [json.loads(json.dumps(MOVE_TOOL))]
    catalog = ToolCatalog.from_tools(tools, source='mine', info={'fps': 15})
    tools[0]['function']['name'] = 'renamed'
    tools.append(say_entry())
    assert catalog.names == ['move_to'] and catalog.source == 'mine' and catalog.info['fps'] == 15


def test_sample_dataset():
    catalog = ToolCatalog.load()
    assert catalog.source == str(SAMPLE_DATASET / 'meta' / 'info.json')
    assert ToolCatalog.load('').names == catalog.names == ['say', 'record_observation',
                                                           'close_gripper']
    assert catalog.schema('say') == DEFAULT_TOOLS[0]
    record = catalog.parameters('record_observation')
    assert record['required'] == ['label'] and record['additionalProperties'] is False
    assert record['properties']['format']['enum'] == ['png', 'jpg']
    assert catalog.camera_names == ['front']
    front = catalog.info['features']['observation.images.front']
    # An image feature (PNG frames in the data file), so LeRobot opens it without video files.
    assert front['dtype'] == 'image' and front['shape'] == [48, 64, 3]
    assert front['names'] == ['height', 'width', 'channels']
    assert catalog.info['codebase_version'] == 'v3.0' and catalog.info['fps'] == 30
    assert catalog.validate('record_observation', {'label': 'cup-1', 'format': 'jpg'})


BAD_ENTRIES = [
    ('not an object', 'entry must be an object'),
    ({'type': 'tool', 'function': {'name': 'x', 'parameters': {}}}, '"type" must be "function"'),
    ({'type': 'function'}, '"function" must be an object'),
    ({'type': 'function', 'function': {'name': '9lives', 'parameters': {}}}, 'must match'),
    ({'type': 'function', 'function': {'name': 'a' * 65, 'parameters': {}}}, 'must match'),
    ({'type': 'function', 'function': {'name': 'x y', 'parameters': {}}}, 'must match'),
    ({'type': 'function', 'function': {'name': 'nop'}}, 'parameters is missing'),
    ({'type': 'function', 'function': {'name': 'nop', 'parameters': []}},
     'must be a JSON Schema object'),
    ({'type': 'function', 'function': {'name': 'nop', 'parameters': {'type': 'string'}}},
     'must describe an object'),
    ({'type': 'function', 'function': {'name': 'nop', 'description': 3, 'parameters': {}}},
     'description must be a string'),
    ({'type': 'function', 'function': {'name': 'nop', 'parameters': {
        'type': 'object', 'properties': {'a': {'type': 'strin'}}}}},
     'function.parameters.properties.a.type is not a valid JSON Schema'),
    ({'type': 'function', 'function': {'name': 'nop', 'parameters': {
        '$schema': 'https://example.com/my-schema', 'type': 'object'}}}, 'unknown $schema'),
]


@pytest.mark.parametrize('entry,problem', BAD_ENTRIES)
def test_bad_entry_among_good_is_skipped_with_warning(tmp_path, caplog, entry, problem):
    path = write_dataset(tmp_path, tools=[say_entry(), entry, MOVE_TOOL])
    with caplog.at_level(logging.WARNING, logger='lerobot_tools_ros.catalog'):
        catalog = ToolCatalog.load(tmp_path)
    assert catalog.names == ['say', 'move_to']
    assert len(catalog.problems) == 1
    message = catalog.problems[0]
    assert str(path) in message and 'tools[1]' in message and problem in message
    if isinstance(entry, dict) and isinstance(entry.get('function'), dict):
        assert repr(entry['function']['name'])[:20] in message
    assert message in caplog.text


@pytest.mark.parametrize('entry,problem', BAD_ENTRIES)
def test_bad_entry_strict_raises(tmp_path, entry, problem):
    path = write_dataset(tmp_path, tools=[say_entry(), entry])
    with pytest.raises(CatalogError) as caught:
        ToolCatalog.load(tmp_path, strict=True)
    assert str(path) in str(caught.value) and 'tools[1]' in str(caught.value)
    assert problem in str(caught.value)


def test_duplicate_names(tmp_path):
    other_say = say_entry()
    other_say['function']['description'] = 'Second say.'
    path = write_dataset(tmp_path, tools=[say_entry(), MOVE_TOOL, other_say])
    catalog = ToolCatalog.load(tmp_path)
    assert catalog.names == ['say', 'move_to']
    assert catalog.description('say') == DEFAULT_TOOLS[0]['function']['description']
    assert catalog.problems == [f"{path}: tools[2] ('say'): duplicate tool name 'say' "
                                '(first declared earlier)']
    with pytest.raises(CatalogError, match=r"tools\[2\] \('say'\): duplicate tool name"):
        ToolCatalog.load(tmp_path, strict=True)


def test_all_entries_bad_is_an_error_not_an_empty_catalog(tmp_path):
    # An empty catalog would turn every call into unknown_tool, and a reload to it would remove
    # every tool: the loader refuses, so the dispatcher keeps its old catalog.
    path = write_dataset(tmp_path, tools=[{'type': 'function'}, {'type': 'function'}])
    with pytest.raises(CatalogError) as caught:
        ToolCatalog.load(tmp_path)
    message = str(caught.value)
    assert str(path) in message and 'none of the 2 declared tool(s) is valid' in message
    assert 'tools[0]' in message and 'tools[1]' in message


def test_names_that_share_a_ros_name_are_a_problem(tmp_path):
    def named(name):
        entry = json.loads(json.dumps(MOVE_TOOL))
        entry['function']['name'] = name
        return entry

    path = write_dataset(tmp_path, tools=[named('pick-up'), named('pick_up'), named('pick.up'),
                                          named('place')])
    catalog = ToolCatalog.load(tmp_path)
    assert catalog.names == ['pick-up', 'place']
    assert catalog.problems == [
        f"{path}: tools[{index}] ('{name}'): '{name}' and 'pick-up' (declared earlier) are both "
        "served as ROS name 'pick_up'; rename one (ROS names allow only letters, digits and _)"
        for index, name in ((1, 'pick_up'), (2, 'pick.up'))]
    with pytest.raises(CatalogError, match=r"tools\[1\] \('pick_up'\).*ROS name 'pick_up'"):
        ToolCatalog.load(tmp_path, strict=True)


@pytest.mark.parametrize('where', ['pattern', 'patternProperties'])
def test_a_regex_python_cannot_compile_is_a_schema_error(where):
    # Valid in ECMA-262 (what some validators check patterns with), not in Python's re, which
    # jsonschema uses to run them: loading must refuse it, not crash on the first call.
    regex = '(?<name>x)'
    prop = ({'type': 'string', 'pattern': regex} if where == 'pattern'
            else {'type': 'object', 'patternProperties': {regex: {'type': 'string'}}})
    entry = {'type': 'function', 'function': {'name': 'bad_regex', 'parameters': {
        'type': 'object', 'properties': {'a': prop}}}}
    catalog = ToolCatalog.from_tools([entry, say_entry()])
    assert catalog.names == ['say']
    assert 'is not a valid JSON Schema' in catalog.problems[0]


def test_fast_and_full_schema_checks_agree(monkeypatch):
    # jsonschema-rs (optional) answers the common case fast; jsonschema alone must give the
    # same catalog and the same problems.
    import lerobot_tools_ros.catalog.tool_catalog as catalog_module
    if catalog_module._jsonschema_rs() is None:
        pytest.skip('jsonschema-rs is not installed: only the full check runs here')

    def load_each() -> list[tuple[list[str], list[str]]]:
        monkeypatch.setattr(catalog_module, '_CHECKED_SCHEMAS', set())
        loaded = [ToolCatalog.from_tools([say_entry(), MOVE_TOOL, entry])
                  for entry, _ in BAD_ENTRIES]
        return [(catalog.names, catalog.problems) for catalog in loaded]

    fast = load_each()
    monkeypatch.setattr(catalog_module, '_jsonschema_rs', lambda: None)
    full = load_each()
    assert fast == full
    assert all(names == ['say', 'move_to'] and len(problems) == 1 for names, problems in full)


# Argument schemas that use only keywords of the fast path (tool_catalog._FAST_KEYWORDS), and one
# that does not (pattern, format: jsonschema alone).
_ARGUMENT_SCHEMAS = [
    {'type': 'object', 'properties': {
        'n': {'anyOf': [{'type': 'integer', 'minimum': -3, 'exclusiveMaximum': 7},
                        {'type': 'null'}]},
        'mode': {'enum': ['a', 'b', 1, True, None]}, 'fixed': {'const': [1, 'x']},
        'tags': {'type': 'array', 'items': {'type': 'string', 'minLength': 1, 'maxLength': 3},
                 'uniqueItems': True, 'maxItems': 3},
        'pair': {'type': 'array', 'prefixItems': [{'type': 'number'}, {'type': 'boolean'}]},
        'inner': {'type': 'object', 'properties': {'x': {'type': 'number'}},
                  'required': ['x'], 'additionalProperties': False},
        'other': {'oneOf': [{'type': 'string'}, {'type': 'integer'}], 'not': {'const': 0}}},
     'required': ['n'], 'additionalProperties': {'type': ['string', 'integer']}},
    {'type': 'object', 'properties': {'id': {'type': 'string', 'pattern': '^[a-z]+$'},
                                      'when': {'type': 'string', 'format': 'date'}}},
]
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4)
    | st.sampled_from(['a', 'b', 'x', 'ab', '2026-12-03', '2026-13-40', '\ud800']),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(['n', 'mode', 'fixed', 'tags', 'pair', 'inner', 'other', 'x', 'id',
                         'when', 'extra']), inner, max_size=5),
    max_leaves=12)


def _outcome(catalog: ToolCatalog, name: str, arguments: dict) -> tuple[bool, str]:
    try:
        return True, json.dumps(catalog.validate(name, arguments), sort_keys=True)
    except ToolArgumentError as exc:
        return False, exc.message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@hypothesis.given(
    schema=st.sampled_from(range(len(_ARGUMENT_SCHEMAS))),
    arguments=st.dictionaries(st.sampled_from(['n', 'mode', 'fixed', 'tags', 'pair', 'inner',
                                               'other', 'id', 'when', 'extra']),
                              _JSON_VALUES, max_size=6))
def test_fast_and_full_argument_checks_agree(schema, arguments):
    # jsonschema-rs (optional) only ever says "valid" quickly; every call must get exactly the
    # verdict and the message jsonschema alone gives.
    import lerobot_tools_ros.catalog.tool_catalog as catalog_module
    entry = {'type': 'function', 'function': {'name': 'probe',
                                              'parameters': _ARGUMENT_SCHEMAS[schema]}}
    fast = ToolCatalog.from_tools([entry])
    fast_outcome = _outcome(fast, 'probe', arguments)
    original = catalog_module._jsonschema_rs
    catalog_module._jsonschema_rs = lambda: None
    try:
        full = ToolCatalog.from_tools([entry])
        assert fast_outcome == _outcome(full, 'probe', arguments)
    finally:
        catalog_module._jsonschema_rs = original
    if original() is not None and schema == 0:
        assert fast._fast['probe'] is not None  # the fast path really ran
    if schema == 1:
        assert fast._fast['probe'] is None  # pattern and format: jsonschema alone


def test_reloading_a_changed_schema_checks_it_again(tmp_path):
    # Checked schemas are remembered by content: an edit must not slip past the meta-schema.
    good = json.loads(json.dumps(MOVE_TOOL))
    write_dataset(tmp_path, tools=[good, say_entry()])
    assert ToolCatalog.load(tmp_path).names == ['move_to', 'say']
    bad = json.loads(json.dumps(MOVE_TOOL))
    bad['function']['parameters']['properties']['speed']['minimum'] = 'one'
    write_dataset(tmp_path, tools=[bad, say_entry()])
    catalog = ToolCatalog.load(tmp_path)
    assert catalog.names == ['say']
    assert 'properties.speed.minimum is not a valid JSON Schema' in catalog.problems[0]


def test_non_json_file_is_always_an_error(tmp_path):
    path = tmp_path / 'meta' / 'info.json'
    path.parent.mkdir()
    path.write_text('{"fps": 30, "tools": [')
    with pytest.raises(CatalogError, match='not valid JSON') as caught:
        ToolCatalog.load(tmp_path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize('content,problem', [
    ({'tools': {'say': {}}}, '"tools" must be a list, got object'),
    ({'tools': 'say'}, '"tools" must be a list, got string'),
])
def test_tools_not_a_list_is_always_an_error(tmp_path, content, problem):
    path = write_dataset(tmp_path, **content)
    with pytest.raises(CatalogError) as caught:
        ToolCatalog.load(tmp_path)
    assert problem in str(caught.value) and str(path) in str(caught.value)


def test_info_not_an_object(tmp_path):
    path = tmp_path / 'info.json'
    path.write_text('[1, 2]')
    with pytest.raises(CatalogError, match='must hold a JSON object, got array'):
        ToolCatalog.load(path)


def test_missing_sources(tmp_path):
    with pytest.raises(CatalogError, match='no meta/info.json'):
        ToolCatalog.load(tmp_path)
    with pytest.raises(CatalogError, match='no such file'):
        ToolCatalog.load(tmp_path / 'nope.json')


# ------------------------------------------------------------------------------- repo ids
def test_repo_id_resolved_under_hf_lerobot_home(tmp_path, monkeypatch):
    home = tmp_path / 'lerobot_home'
    path = write_dataset(home / 'someone' / 'pick_cube', tools=[MOVE_TOOL])
    monkeypatch.setenv('HF_LEROBOT_HOME', str(home))
    monkeypatch.chdir(tmp_path)  # 'someone/pick_cube' must not exist as a relative path
    catalog = ToolCatalog.load('someone/pick_cube')
    assert catalog.names == ['move_to']
    assert catalog.source.startswith('someone/pick_cube') and str(path) in catalog.source


def test_repo_id_default_home_follows_hf_home(tmp_path, monkeypatch):
    monkeypatch.delenv('HF_LEROBOT_HOME', raising=False)
    monkeypatch.setenv('HF_HOME', str(tmp_path / 'hf'))
    monkeypatch.chdir(tmp_path)
    write_dataset(tmp_path / 'hf' / 'lerobot' / 'someone' / 'pick_cube')
    catalog = ToolCatalog.load('someone/pick_cube')
    assert catalog.used_default


def test_repo_id_from_hub_cache(tmp_path, monkeypatch):
    hub_constants = pytest.importorskip('huggingface_hub.constants')
    cache = tmp_path / 'hub'
    repo = cache / 'datasets--someone--cached_set'
    commit = 'a' * 40
    (repo / 'refs').mkdir(parents=True)
    (repo / 'refs' / 'main').write_text(commit)
    write_dataset(repo / 'snapshots' / commit, tools=[MOVE_TOOL])
    monkeypatch.setattr(hub_constants, 'HF_HUB_CACHE', str(cache))
    monkeypatch.setenv('HF_LEROBOT_HOME', str(tmp_path / 'empty_home'))
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    monkeypatch.chdir(tmp_path)
    catalog = ToolCatalog.load('someone/cached_set')
    assert catalog.names == ['move_to'] and 'hub cache' in catalog.source


def test_repo_id_offline_fails_fast_naming_paths(tmp_path, monkeypatch):
    """Offline, a missing repo id fails with the offline error, without touching the network."""
    import socket
    attempts: list[str] = []

    def no_network(what: str):
        def refuse(*args, **kwargs):
            attempts.append(f'{what}{args[1:] if what == "connect" else args[:2]}')
            raise OSError(f'test: no network ({what})')
        return refuse
    # Every way to the network (name lookups, connections, the hub client's download with its
    # retries) is recorded and refused: offline, none may even be tried.
    monkeypatch.setattr(socket.socket, 'connect', no_network('connect'))
    monkeypatch.setattr(socket.socket, 'connect_ex', no_network('connect'))
    monkeypatch.setattr(socket, 'getaddrinfo', no_network('getaddrinfo'))
    monkeypatch.setattr(socket, 'create_connection', no_network('create_connection'))
    try:
        import huggingface_hub
        monkeypatch.setattr(huggingface_hub, 'hf_hub_download', no_network('hf_hub_download'))
    except ImportError:
        pass  # without it no download can be tried at all
    monkeypatch.setenv('HF_LEROBOT_HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CatalogError) as caught:
        ToolCatalog.load('nobody/missing_set')
    assert attempts == []
    message = str(caught.value)
    assert str(tmp_path / 'home' / 'nobody' / 'missing_set' / 'meta' / 'info.json') in message
    assert 'datasets--nobody--missing_set' in message
    assert 'download skipped (HF_HUB_OFFLINE is set)' in message


def test_repo_id_with_the_hub_unreachable_fails_without_downloading(tmp_path, monkeypatch):
    hub_constants = pytest.importorskip('huggingface_hub.constants')
    import socket
    with socket.socket() as probe:  # a local port nobody listens on: connections are refused
        probe.bind(('127.0.0.1', 0))
        closed = probe.getsockname()[1]
    endpoint = f'http://127.0.0.1:{closed}'
    monkeypatch.setattr(hub_constants, 'ENDPOINT', endpoint)
    monkeypatch.setattr(hub_constants, 'HF_HUB_OFFLINE', False)
    monkeypatch.setattr(hub_constants, 'HF_HUB_CACHE', str(tmp_path / 'hub'))
    monkeypatch.delenv('HF_HUB_OFFLINE', raising=False)
    for proxy in ('http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'):
        monkeypatch.delenv(proxy, raising=False)  # probe the endpoint itself
    monkeypatch.setenv('HF_LEROBOT_HOME', str(tmp_path / 'home'))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CatalogError) as caught:
        ToolCatalog.load('nobody/missing_set')
    message = str(caught.value)
    assert f'download {endpoint}/datasets/nobody/missing_set/meta/info.json skipped' in message
    assert f'hub not reachable (127.0.0.1:{closed}' in message
    assert not (tmp_path / 'hub').exists()  # nothing was downloaded or cached


def test_local_path_wins_over_repo_id(tmp_path, monkeypatch):
    write_dataset(tmp_path / 'someone' / 'pick_cube', tools=[MOVE_TOOL])
    monkeypatch.setenv('HF_LEROBOT_HOME', str(tmp_path / 'elsewhere'))
    monkeypatch.chdir(tmp_path)
    assert ToolCatalog.load('someone/pick_cube').names == ['move_to']


# ------------------------------------------------------------------------------ validation
@pytest.fixture
def catalog() -> ToolCatalog:
    return ToolCatalog.from_tools([say_entry(), MOVE_TOOL])


GOOD_ARGUMENTS = [
    {'target': {'x': 0.1, 'y': 2}},
    {'target': {'x': 1, 'y': -2.5, 'frame': 'tool'}, 'speed': 100, 'label': 'cup',
     'careful': False, 'waypoints': [0, 0.5, 1], 'note': None},
    {'target': {'x': 1, 'y': 1}, 'note': 'slowly'},
]


@pytest.mark.parametrize('arguments', GOOD_ARGUMENTS)
def test_good_arguments_every_type(catalog, arguments):
    assert catalog.validate('move_to', arguments) == arguments
    assert catalog.validate('move_to', json.dumps(arguments)) == arguments


BAD_ARGUMENTS = [
    ({}, ['arguments.target: required property is missing']),
    ({'target': {'x': 1}}, ['arguments.target.y: required property is missing']),
    ({'target': {'x': '1', 'y': 2}}, ['arguments.target.x: expected number, got string']),
    ({'target': {'x': 1, 'y': 2, 'frame': 'world'}},
     ["arguments.target.frame: must be one of ['base', 'tool'], got 'world'"]),
    ({'target': {'x': 1, 'y': 2, 'z': 3}}, ['arguments.target.z: unexpected property']),
    ({'target': {'x': 1, 'y': 2}, 'colour': 'red'},
     ['arguments.colour: unexpected property (additionalProperties is false; allowed: target,']),
    ({'target': [1, 2]}, ['arguments.target: expected object, got array']),
    ({'target': {'x': 1, 'y': 2}, 'speed': 2.5}, ['arguments.speed: expected integer']),
    ({'target': {'x': 1, 'y': 2}, 'speed': True},
     ['arguments.speed: expected integer, got boolean']),
    ({'target': {'x': 1, 'y': 2}, 'speed': 0}, ['arguments.speed: must be >= 1, got 0']),
    ({'target': {'x': 1, 'y': 2}, 'speed': 101}, ['arguments.speed: must be <= 100, got 101']),
    ({'target': {'x': 1, 'y': 2}, 'careful': 'yes'}, ['arguments.careful: expected boolean']),
    ({'target': {'x': 1, 'y': 2}, 'label': 'Cup'}, ['arguments.label: must match pattern']),
    ({'target': {'x': 1, 'y': 2}, 'label': 'abcdefghijk'},
     ['arguments.label: expected at most 10 characters, got 11']),
    ({'target': {'x': 1, 'y': 2}, 'waypoints': [1, 'two']},
     ['arguments.waypoints[1]: expected number, got string']),
    ({'target': {'x': 1, 'y': 2}, 'waypoints': [1, 2, 3, 4]},
     ['arguments.waypoints: expected at most 3 items, got 4']),
    ({'target': {'x': 1, 'y': 2}, 'note': 5}, ['arguments.note: expected string or null']),
    ({'target': {'x': 1}, 'speed': 'fast', 'extra': 1},
     ['arguments.target.y: required', 'arguments.speed: expected integer', 'arguments.extra']),
]


@pytest.mark.parametrize('arguments,expected', BAD_ARGUMENTS)
def test_bad_arguments_name_path_and_constraint(catalog, arguments, expected):
    for given in (arguments, json.dumps(arguments)):
        with pytest.raises(ToolArgumentError) as caught:
            catalog.validate('move_to', given)
        error = caught.value
        assert error.error_code == errors.INVALID_ARGUMENTS
        assert error.message == str(error) and error.tool == 'move_to'
        for fragment in expected:
            assert fragment in error.message


def test_say_schema_wrong_type(catalog):
    with pytest.raises(ToolArgumentError, match=r'arguments\.text: expected string, got integer'):
        catalog.validate('say', {'text': 5})
    with pytest.raises(ToolArgumentError, match=r'arguments\.text: required property'):
        catalog.validate('say', {})


def test_double_encoded_arguments(catalog):
    once = json.dumps({'text': 'On it.'})
    assert catalog.validate('say', once) == {'text': 'On it.'}
    assert catalog.validate('say', json.dumps(once)) == {'text': 'On it.'}
    assert catalog.validate('say', json.dumps(json.dumps(once))) == {'text': 'On it.'}
    assert catalog.validate('say', once.encode()) == {'text': 'On it.'}


@pytest.mark.parametrize('arguments,expected', [
    ('[1, 2]', 'must be a JSON object, got array'),
    ('"hello"', 'must be a JSON object, got string'),
    ('3', 'must be a JSON object, got integer'),
    ('null', 'must be a JSON object, got null'),
    (json.dumps('[1]'), 'must be a JSON object, got array'),
    ("{'text': 'hi'}", 'not valid JSON'),
    ('{"text": "hi"', 'not valid JSON'),
    ('', 'not valid JSON'),
    ('{"text": NaN}', 'NaN is not allowed'),
    (None, 'must be a JSON object, got null'),
    (['text', 'hi'], 'must be a JSON object, got array'),
    (42, 'must be a JSON object, got integer'),
])
def test_arguments_not_an_object(catalog, arguments, expected):
    with pytest.raises(ToolArgumentError) as caught:
        catalog.validate('say', arguments)
    assert caught.value.error_code == errors.INVALID_ARGUMENTS
    assert expected in caught.value.message


def test_unknown_tool_did_you_mean(catalog):
    with pytest.raises(ToolArgumentError) as caught:
        catalog.validate('sya', {'text': 'hi'})
    error = caught.value
    assert error.error_code == errors.UNKNOWN_TOOL and error.suggestion == 'say'
    assert "did you mean 'say'?" in error.message
    assert 'known tools: say, move_to' in error.message
    assert catalog.suggest('Say') == 'say' and catalog.suggest('move') == 'move_to'


def test_unknown_tool_without_close_match(catalog):
    with pytest.raises(ToolArgumentError) as caught:
        catalog.validate('launch_rocket', {})
    assert caught.value.error_code == errors.UNKNOWN_TOOL
    assert 'did you mean' not in caught.value.message
    assert 'known tools: say, move_to' in caught.value.message
    assert catalog.suggest('launch_rocket') is None
    for name in (None, 3, 'x' * 10000):
        with pytest.raises(ToolArgumentError) as caught:
            catalog.validate(name, {})
        assert caught.value.error_code == errors.UNKNOWN_TOOL
        assert len(caught.value.message) < 300


def test_schema_and_parameters_unknown_name(catalog):
    for method in (catalog.schema, catalog.parameters):
        with pytest.raises(ToolArgumentError) as caught:
            method('mov_to')
        assert caught.value.error_code == errors.UNKNOWN_TOOL
        assert caught.value.suggestion == 'move_to'


def test_unknown_tool_is_checked_before_arguments(catalog):
    with pytest.raises(ToolArgumentError) as caught:
        catalog.validate('nope', 'not json')
    assert caught.value.error_code == errors.UNKNOWN_TOOL


def test_declared_draft_is_used():
    draft7 = {
        'type': 'function',
        'function': {'name': 'pair', 'parameters': {
            '$schema': 'http://json-schema.org/draft-07/schema#',
            'type': 'object',
            'properties': {'a': {'type': 'string'}, 'b': {'type': 'string'}},
            'dependencies': {'a': ['b']},
        }},
    }
    catalog = ToolCatalog.from_tools([draft7])
    assert catalog.validate('pair', {'a': 'x', 'b': 'y'}) == {'a': 'x', 'b': 'y'}
    with pytest.raises(ToolArgumentError, match='arguments'):
        catalog.validate('pair', {'a': 'x'})


def test_huge_model_text_gives_bounded_message(catalog):
    with pytest.raises(ToolArgumentError) as caught:
        catalog.validate('move_to', {'target': {'x': 1, 'y': 2}, 'label': 'a' * 100000,
                                     'b' * 5000: 1})
    assert len(caught.value.message) <= 600
    assert 'arguments.label: expected at most 10 characters, got 100000' in caught.value.message


def test_argument_error_is_value_error():
    error = ToolArgumentError(errors.UNKNOWN_TOOL, 'unknown tool')
    assert isinstance(error, ValueError) and error.code == errors.UNKNOWN_TOOL


@pytest.mark.parametrize('arguments', [
    {'text': 'x', 'n': float('nan')}, {'text': 'x', 'n': [1.0, float('inf')]},
    '{"text": "x", "n": 1e999}', {'text': 'x', 'n': {'deep': -float('inf')}}])
def test_non_finite_numbers_are_invalid_arguments(arguments):
    parameters = {'type': 'object', 'properties': {'text': {'type': 'string'}}}
    catalog = ToolCatalog.from_tools(
        [{'type': 'function', 'function': {'name': 'f', 'parameters': parameters}}])
    with pytest.raises(ToolArgumentError) as caught:
        catalog.validate('f', arguments)
    assert caught.value.error_code == 'invalid_arguments'
    assert 'arguments.n' in caught.value.message and 'finite' in caught.value.message


def test_required_but_undeclared_property_is_reported():
    def entry(additional):
        parameters = {'type': 'object', 'properties': {'text': {'type': 'string'}},
                      'required': ['text', 'volume']}
        if additional is not None:
            parameters['additionalProperties'] = additional
        return {'type': 'function', 'function': {'name': 'say', 'parameters': parameters}}

    loose = ToolCatalog.from_tools([entry(None)])
    assert loose.names == ['say']
    assert any("['volume']" in problem for problem in loose.problems)
    closed = ToolCatalog.from_tools([entry(False), say_entry()])
    assert closed.names == ['say']
    assert any('no call can be valid' in problem for problem in closed.problems)


# ------------------------------------------------------------------ schemas that must end (#36)
def _params_tool(name: str, parameters: dict) -> dict:
    return {'type': 'function', 'function': {'name': name, 'description': name,
                                             'parameters': parameters}}


LOOPS = {
    'self': {'type': 'object', '$defs': {'a': {'$ref': '#/$defs/a'}},
             'properties': {'x': {'$ref': '#/$defs/a'}}},
    'through_allOf_anyOf': {'type': 'object', '$defs': {
        'a': {'allOf': [{'$ref': '#/$defs/b'}]},
        'b': {'anyOf': [{'type': 'string'}, {'$ref': '#/$defs/a'}]}}},
    'root': {'type': 'object', 'allOf': [{'$ref': '#'}]},
    'anchor_and_not': {'type': 'object', '$defs': {'a': {'$anchor': 'x', 'not': {'$ref': '#x'}}}},
    'if': {'type': 'object', 'if': {'$ref': '#'}, 'then': {}},
    'dependentSchemas': {'type': 'object', 'dependentSchemas': {'k': {'$ref': '#'}}},
    'through_an_id': {'$id': 'https://example.com/root', 'type': 'object',
                      '$defs': {'a': {'$id': 'a.json', '$ref': 'root'}},
                      'allOf': [{'$ref': 'a.json'}]},
    'draft7': {'$schema': 'http://json-schema.org/draft-07/schema#', 'type': 'object',
               'definitions': {'a': {'$ref': '#/definitions/a'}},
               'properties': {'x': {'$ref': '#/definitions/a'}}},
}


@pytest.mark.parametrize('parameters', LOOPS.values(), ids=LOOPS.keys())
def test_a_ref_loop_applied_in_place_is_refused_at_load_with_its_path(tmp_path, parameters):
    root = write_dataset(tmp_path, tools=[_params_tool('loop', parameters), *DEFAULT_TOOLS])
    with pytest.raises(CatalogError) as raised:
        ToolCatalog.load(root, strict=True)
    message = str(raised.value)
    assert "tools[0] ('loop')" in message and 'reference loop applied in place' in message
    assert 'function.parameters' in message and ' -> ' in message
    catalog = ToolCatalog.load(root)  # not strict: the tool is skipped, the others load
    assert catalog.names == ['say'] and 'reference loop' in catalog.problems[0]


RECURSIVE = {
    'tree': ({'type': 'object', 'properties': {
        'value': {'type': 'number'},
        'children': {'type': 'array', 'items': {'$ref': '#'}}}, 'required': ['value']},
        {'value': 1, 'children': [{'value': 2, 'children': [{'value': 3}]}]},
        {'value': 1, 'children': [{'value': 2, 'children': [{'value': 'x'}]}]}),
    'linked_list': (
        {'type': 'object', 'properties': {'head': {'$ref': '#/$defs/node'}}, '$defs': {
            'node': {'type': 'object', 'properties': {'v': {'type': 'integer'},
                                                      'next': {'$ref': '#/$defs/node'}}}}},
        {'head': {'v': 1, 'next': {'v': 2}}}, {'head': {'v': 1, 'next': {'v': 2.5}}}),
    'dynamic': ({'$dynamicAnchor': 'node', 'type': 'object', 'properties': {
        'kids': {'type': 'array', 'items': {'$dynamicRef': '#node'}},
        'name': {'type': 'string'}}},
        {'kids': [{'kids': [], 'name': 'a'}]}, {'kids': [{'name': 3}]}),
}


@pytest.mark.parametrize('parameters,good,bad', RECURSIVE.values(), ids=RECURSIVE.keys())
def test_recursive_schemas_that_descend_load_and_validate(parameters, good, bad):
    catalog = ToolCatalog.from_tools([_params_tool('t', parameters)], strict=True)
    assert catalog.validate('t', good) == good
    with pytest.raises(ToolArgumentError) as raised:
        catalog.validate('t', bad)
    assert raised.value.error_code == errors.INVALID_ARGUMENTS


@pytest.mark.parametrize('ref,problem', [
    ('#/$defs/missing', 'nothing at that pointer'),
    ('#nowhere', "no $anchor or $dynamicAnchor 'nowhere'"),
    ('https://example.com/schema.json', 'does not resolve inside the schema'),
    ('other.json#/x', 'does not resolve inside the schema'),
])
def test_a_ref_that_does_not_resolve_is_refused_at_load(ref, problem):
    # jsonschema raised on the first call that reached it (and never fetches remote schemas).
    tool = _params_tool('t', {'type': 'object', 'properties': {'x': {'$ref': ref}}})
    with pytest.raises(CatalogError) as raised:
        ToolCatalog.from_tools([tool], strict=True)
    assert problem in str(raised.value) and 'function.parameters#/properties/x' in str(
        raised.value)


def test_in_place_expansion_beyond_a_bound_is_refused_at_load():
    # allOf of two refs to a schema that is allOf of two refs ... 30 levels: 2^30 checks of
    # every value.
    defs = {f'd{i}': {'allOf': [{'$ref': f'#/$defs/d{i + 1}'}, {'$ref': f'#/$defs/d{i + 1}'}]}
            for i in range(30)}
    defs['d30'] = {'type': 'string'}
    tool = _params_tool('t', {'type': 'object', '$defs': defs,
                              'properties': {'x': {'$ref': '#/$defs/d0'}}})
    with pytest.raises(CatalogError, match=r'applies \d+ subschemas in place to one value'):
        ToolCatalog.from_tools([tool], strict=True)


def test_a_schema_nested_too_deep_is_refused_at_load():
    from lerobot_tools_ros import limits
    inner: dict = {'type': 'string'}
    for _ in range(limits.MAX_SCHEMA_DEPTH):
        inner = {'type': 'object', 'properties': {'a': inner}}
    with pytest.raises(CatalogError, match=f'more than {limits.MAX_SCHEMA_DEPTH} levels deep'):
        ToolCatalog.from_tools([_params_tool('t', inner)], strict=True)


@pytest.mark.parametrize('pattern,problem', [
    (r'(a)\1', 'backreferences'),
    ('(?=a)b', 'lookaround'),
])
def test_a_pattern_without_bounded_matching_is_refused_at_load(pattern, problem):
    for where in ('pattern', 'patternProperties'):
        prop = ({'type': 'string', 'pattern': pattern} if where == 'pattern'
                else {'type': 'object', 'patternProperties': {pattern: {}}})
        tool = _params_tool('t', {'type': 'object', 'properties': {'x': prop}})
        with pytest.raises(CatalogError) as raised:
            ToolCatalog.from_tools([tool], strict=True)
        assert f'{where} {pattern!r}' in str(raised.value) and problem in str(raised.value)


def test_unevaluated_properties_with_pattern_properties_is_refused_at_load():
    tool = _params_tool('t', {'type': 'object', 'patternProperties': {'^x': {}},
                              'unevaluatedProperties': False})
    with pytest.raises(CatalogError, match='unevaluatedProperties together with '
                                           'patternProperties'):
        ToolCatalog.from_tools([tool], strict=True)


def test_patterns_match_like_ecma_262_not_like_python_re():
    # RE2, like the JSON Schema (ECMA-262) dialect: $ is the end of the text, \d is ASCII.
    # Python's re accepted both values below.
    catalog = ToolCatalog.from_tools([_params_tool('t', {
        'type': 'object', 'properties': {'code': {'type': 'string', 'pattern': r'^\d+$'}},
        'patternProperties': {'^x_[a-z]+$': {'type': 'integer'}},
        'additionalProperties': False})], strict=True)
    assert catalog.validate('t', {'code': '42', 'x_a': 1}) == {'code': '42', 'x_a': 1}
    for arguments in ({'code': '42\n'}, {'code': '\u0663'}, {'x_a\n': 1}):
        with pytest.raises(ToolArgumentError) as raised:
            catalog.validate('t', arguments)
        assert raised.value.error_code == errors.INVALID_ARGUMENTS


def test_arguments_nested_too_deep_are_refused_whatever_their_form(catalog):
    from lerobot_tools_ros import limits
    deep: list = []  # MAX_ARGUMENT_DEPTH lists, one in the other
    for _ in range(limits.MAX_ARGUMENT_DEPTH - 1):
        deep = [deep]
    text = '{"text": ' + '[' * 990 + ']' * 990 + '}'
    for arguments in ({'text': deep}, text, json.dumps(text)):
        with pytest.raises(ToolArgumentError) as raised:
            catalog.validate('say', arguments)
        assert raised.value.error_code == errors.INVALID_ARGUMENTS
        assert f'more than {limits.MAX_ARGUMENT_DEPTH} levels deep' in raised.value.message
    # At the limit (the object and 31 lists), the schema decides (say wants a string).
    with pytest.raises(ToolArgumentError, match='expected string, got array'):
        catalog.validate('say', {'text': deep[0]})


def test_a_check_that_raises_refuses_that_call_only():
    # Python's re recurses while compiling a format: regex value 1000 groups deep.
    catalog = ToolCatalog.from_tools([_params_tool('find', {
        'type': 'object', 'properties': {'expr': {'type': 'string', 'format': 'regex'}}})])
    with pytest.raises(ToolArgumentError) as raised:
        catalog.validate('find', {'expr': '(' * 1000 + ')' * 1000})
    assert raised.value.error_code == errors.INVALID_ARGUMENTS
    assert 'could not be checked' in raised.value.message
    assert catalog.validate('find', {'expr': '^a+$'}) == {'expr': '^a+$'}


def test_an_info_json_over_16_mib_is_refused_without_being_decoded(tmp_path):
    path = tmp_path / 'info.json'
    with open(path, 'w') as handle:
        handle.write('{"tools": []' + ' ' * (16 << 20) + '}')
    with pytest.raises(CatalogError, match='larger than 16 MiB'):
        ToolCatalog.load(path)


@pytest.mark.parametrize('depth', [200, 5000])
def test_an_info_json_nested_too_deep_is_one_error(tmp_path, depth):
    path = tmp_path / 'info.json'
    path.write_text('{"tools": [], "x": ' + '[' * depth + ']' * depth + '}')
    with pytest.raises(CatalogError, match='nest more than 128 levels deep'):
        ToolCatalog.load(path)


def test_the_fast_path_never_matches_patterns():
    # jsonschema-rs (used to say "valid" quickly) matches patterns with a backtracking engine:
    # schemas with pattern or patternProperties never take it.
    from lerobot_tools_ros.catalog import tool_catalog as catalog_module
    if catalog_module._jsonschema_rs() is None:
        pytest.skip('jsonschema-rs is not installed')
    base = catalog_module._safe_class(catalog_module.jsonschema.Draft202012Validator)
    for schema in ({'type': 'object', 'properties': {'x': {'type': 'string', 'pattern': 'a'}}},
                   {'type': 'object', 'patternProperties': {'a': {}}}):
        assert catalog_module._fast_validator(base, schema) is None
    assert catalog_module._fast_validator(base, {'type': 'object'}) is not None
