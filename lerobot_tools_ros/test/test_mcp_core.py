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

"""The MCP server's decisions and its rclpy-to-asyncio bridge, without a ROS graph or the SDK."""

import json

from lerobot_tools_ros.catalog import ToolCatalog
from lerobot_tools_ros.dispatcher.topics import catalog_message
from lerobot_tools_ros.mcp import access, listing, progress, results, wire
from lerobot_tools_ros.mcp.progress import ProgressTrack
import pytest

MOVE = {'type': 'function', 'function': {
    'name': 'move_arm', 'description': 'Move the arm.', 'parameters': {
        'type': 'object', 'properties': {'x': {'type': 'number'}}, 'required': ['x']}}}
LOOK = {'type': 'function', 'function': {
    'name': 'read_joints', 'description': 'Read joint angles.', 'parameters': {
        'type': 'object', 'properties': {}}}}


@pytest.fixture
def catalog() -> listing.LoadedCatalog:
    loaded = ToolCatalog.from_tools([*ToolCatalog.load(None).tools, MOVE, LOOK], source='test')
    return listing.decode_catalog(catalog_message(loaded, lambda name: f'/lerobot_tools/{name}'))


def test_every_tool_is_listed_with_the_catalog_schema_description_and_title(catalog):
    tools = listing.visible_tools(catalog, listing.DispatcherView())
    assert [t.name for t in tools] == catalog.names
    entries = {e['function']['name']: e['function'] for e in catalog.entries}
    for tool in tools:
        assert tool.schema == entries[tool.name]['parameters']
        assert tool.description == entries[tool.name]['description']
        assert tool.executor == f'/lerobot_tools/{tool.name}'
    assert {t.name: t.title for t in tools}['record_observation'] == 'Record observation'


def test_no_hint_is_claimed_that_nobody_declared(catalog):
    tools = {t.name: t for t in listing.visible_tools(catalog, listing.DispatcherView())}
    # An absent destructiveHint means "may be destructive": never send false on a guess.
    for name in ('say', 'close_gripper', 'move_arm', 'read_joints'):
        assert 'destructiveHint' not in tools[name].annotations, name
        assert 'readOnlyHint' not in tools[name].annotations, name
    # record_observation writes an image and a sidecar on every call: not read-only, and not
    # idempotent; whether it replaces files is tool_server's to say (unknown here: no claim).
    hints = tools['record_observation'].annotations
    assert hints['readOnlyHint'] is False and hints['idempotentHint'] is False
    assert hints['openWorldHint'] is False and 'destructiveHint' not in hints
    assert tools['say'].annotations['idempotentHint'] is False


def test_record_observation_is_destructive_only_when_tool_server_lets_it_overwrite(catalog):
    def hints(overwrite: bool) -> dict:
        tools = listing.visible_tools(catalog, listing.DispatcherView(),
                                      overwrite={'record_observation': overwrite})
        return dict(next(t for t in tools if t.name == 'record_observation').annotations)
    assert hints(False)['destructiveHint'] is False and hints(False)['readOnlyHint'] is False
    assert hints(True)['destructiveHint'] is True


def test_a_robot_that_left_is_listed_unavailable_and_presence_says_when(catalog):
    from lerobot_tools_ros.mcp.presence import ARRIVED, LEFT, Presence
    tools = listing.visible_tools(catalog, listing.DispatcherView(), gone='/robot1/dispatcher')
    assert [t.name for t in tools] == catalog.names and not any(t.available for t in tools)
    assert all(t.description.startswith('[Unavailable: the robot (its dispatcher '
                                        '/robot1/dispatcher) is not reachable') for t in tools)
    presence = Presence(gone_after_s=1.0)
    assert presence.observe(False, 0.0) is None and not presence.ever_seen
    assert presence.observe(True, 0.1) == ARRIVED and presence.present
    assert presence.observe(True, 0.2) is None
    # A moment unseen is not a departure; staying unseen is, announced once.
    assert presence.observe(False, 1.0) is None and presence.present
    assert presence.observe(True, 1.5) is None
    assert presence.observe(False, 2.0) is None
    assert presence.observe(False, 3.1) == LEFT and not presence.present
    assert presence.observe(False, 9.0) is None
    assert presence.observe(True, 9.5) == ARRIVED and presence.changes == 3


def test_observation_uris_stay_inside_the_output_directory(tmp_path):
    from lerobot_tools_ros.mcp import observations
    root = tmp_path / 'out'
    (root / 'day').mkdir(parents=True)
    image = root / 'day' / 'cup front.png'
    image.write_bytes(b'\x89PNG\r\n\x1a\n')
    secret = tmp_path / 'secret.png'
    secret.write_bytes(b'\x89PNG\r\n\x1a\n')
    (root / 'link.png').symlink_to(secret)
    uri = observations.uri_for(str(image), str(root))
    assert uri == 'lerobot-tools://observations/day/cup%20front.png'
    assert observations.path_for(uri, str(root)) == str(image.resolve())
    assert observations.uri_for(str(secret), str(root)) is None     # outside the directory
    assert observations.uri_for(str(root / 'link.png'), str(root)) is None  # points out
    assert observations.uri_for(str(image), '') is None              # directory unknown
    for bad in ('day/../../secret.png', '%2E%2E/secret.png', '/etc/passwd', 'link.png',
                'day/missing.png', '', 'day/cup%20front.png%00'):
        with pytest.raises(observations.NotAnObservation):
            observations.path_for(observations.PREFIX + bad, str(root))
    with pytest.raises(observations.NotAnObservation, match='not known'):
        observations.path_for(uri, '')


def test_hints_a_catalog_entry_declares_are_listed_and_bad_ones_reported():
    entry = dict(MOVE, annotations={'title': 'Move the arm', 'destructiveHint': True,
                                    'idempotentHint': False, 'openWorldHint': 'yes'})
    loaded = listing.decode_catalog(catalog_message(
        ToolCatalog.from_tools([entry], source='t'), lambda name: name))
    (tool,) = listing.visible_tools(loaded, listing.DispatcherView())
    assert tool.title == 'Move the arm'
    assert dict(tool.annotations) == {'title': 'Move the arm', 'destructiveHint': True,
                                      'idempotentHint': False}
    assert "'openWorldHint'='yes' ignored" in listing.declared_hints(entry)[1][0]


def test_allowlist_and_disabled_tools_are_hidden(catalog):
    view = listing.view_from_parameters({
        'allowed_tools': ['say', 'move_arm', 'read_joints'], 'tool.read_joints.enabled': False,
        'tool.say.enabled': True, 'tool.say.timeout_s': 3.0})
    assert [t.name for t in listing.visible_tools(catalog, view)] == ['say', 'move_arm']
    view = listing.view_from_parameters({'allowed_tools': None, 'tool.say.approval': None})
    assert len(listing.visible_tools(catalog, view)) == len(catalog.names)
    for every in (['*'], []):
        view = listing.view_from_parameters({'allowed_tools': every})
        assert len(listing.visible_tools(catalog, view)) == len(catalog.names)


def test_optional_arguments_are_nullable_with_one_type_per_schema(catalog):
    (record,) = [t for t in listing.visible_tools(catalog, listing.DispatcherView())
                 if t.name == 'record_observation']

    def types_in(node) -> list:
        if isinstance(node, dict):
            return [node.get('type')] + [t for v in node.values() for t in types_in(v)]
        if isinstance(node, list):
            return [t for v in node for t in types_in(v)]
        return []
    # "type": [X, "null"] is refused by strict validators (MCP Inspector --strict): anyOf.
    assert not any(isinstance(t, list) for t in types_in(record.input_schema))
    camera = record.input_schema['properties']['camera']
    assert camera['anyOf'][1] == {'type': 'null'} and camera['anyOf'][0]['type'] == 'string'
    assert not any(isinstance(t, list) for t in types_in(results.BUILTIN_OUTPUT_SCHEMAS))


def test_hints_follow_approval_and_the_servers_settings(catalog):
    view = listing.view_from_parameters({'tool.move_arm.approval': 'confirm',
                                         'tool.say.approval': 'auto',
                                         'tool.read_joints.approval': 'Deny'})
    tools = {t.name: t for t in listing.visible_tools(
        catalog, view, read_only=['read_joints', 'record_observation'], actuating=['say'])}
    assert tools['move_arm'].destructive and not tools['move_arm'].read_only
    # A tool that needs approval is destructive even when configured read-only.
    assert tools['read_joints'].destructive and not tools['read_joints'].read_only
    assert tools['record_observation'].read_only
    assert tools['say'].destructive and not tools['say'].read_only


def test_a_tool_without_executor_says_so(catalog):
    tools = {t.name: t for t in listing.visible_tools(
        catalog, listing.DispatcherView(), available=lambda e: e != '/lerobot_tools/move_arm')}
    assert not tools['move_arm'].available
    assert tools['move_arm'].description.startswith(
        '[Unavailable: no executor serves it at /lerobot_tools/move_arm right now')
    assert tools['say'].available and tools['say'].description == catalog.entries[0][
        'function']['description']


def strict(schema: dict) -> dict:
    """
    Apply OpenAI's strict-mode transform to a function schema (Agents SDK, Responses API).

    Every object's properties all become required and additionalProperties false; nothing
    else changes. A model answering a strict schema must give every property.
    """
    schema = json.loads(json.dumps(schema))

    def walk(node):
        if isinstance(node, dict):
            if node.get('type') == 'object' or 'properties' in node:
                node['additionalProperties'] = False
                node['required'] = list(node.get('properties', {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(schema)
    return schema


def test_optional_arguments_survive_openai_strict_mode(catalog):
    from jsonschema import Draft202012Validator
    (record,) = [t for t in listing.visible_tools(catalog, listing.DispatcherView())
                 if t.name == 'record_observation']
    strict_schema = strict(record.input_schema)
    # "All cameras, the default format": the only way a strict model can say it.
    arguments = {'label': 'scene', 'camera': None, 'format': None}
    assert not list(Draft202012Validator(strict_schema).iter_errors(arguments))
    assert list(Draft202012Validator(strict_schema).iter_errors(dict(arguments, format='gif')))
    # The call the dispatcher gets leaves them out, valid against the catalog's own schema.
    sent = listing.drop_null_optionals(arguments, record.schema)
    assert sent == {'label': 'scene'}
    assert not list(Draft202012Validator(record.schema).iter_errors(sent))
    # A required argument's null is kept (the dispatcher explains why it is wrong).
    assert listing.drop_null_optionals({'label': None}, record.schema) == {'label': None}


def test_progress_only_increases():
    track = ProgressTrack()
    sent = [track.step(f) for f in (None, 0.0, 0.0, 0.5, 0.5, None, 0.4, 1.0, 1.0)]
    values = [s[0] for s in sent if s is not None]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert sent[3] == (0.5, 1.0) and sent[-1] is None


def test_the_id_of_a_request_too_deep_to_parse_is_found():
    deep = '[' * 5000 + ']' * 5000
    text = '{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "say", ' \
           '"arguments": {"text": ' + deep + ', "id": 99}}, "id": 7}'
    assert wire.request_id_of(text) == (True, 7)
    assert wire.request_id_of('{"id": "a\\"b", "x": 1}') == (True, 'a"b')
    assert wire.request_id_of('{"method": "notifications/x"}') == (False, None)
    assert wire.request_id_of('[1, 2]') == (False, None)
    assert access.bind_host('[::1]') == '::1' and access.url_host('::') == '[::]'
    assert access.url_host('127.0.0.1') == '127.0.0.1'


def test_structured_output_of_built_in_tools():
    assert results.output_schema('say', {})['required'] == ['utterance_id']
    declared = {'outputSchema': {'type': 'object', 'properties': {'ok': {'type': 'boolean'}}}}
    assert results.output_schema('mine', declared) == declared['outputSchema']
    assert results.output_schema('mine', {}) is None
    assert results.structured_content('{"paths": ["/a.png"]}') == {'paths': ['/a.png']}
    assert results.structured_content('[1]') is None and results.structured_content('x') is None
    assert results.saved_files({'paths': ['/a.png', 3, '']}) == ['/a.png']


def test_arguments_are_encoded_capped_and_finite():
    assert json.loads(results.encode_arguments({'text': 'héllo'}, 100)) == {'text': 'héllo'}
    assert results.encode_arguments(None, 10) == '{}'
    with pytest.raises(results.ArgumentsTooLarge, match='at most 20'):
        results.encode_arguments({'text': 'x' * 30}, 20)
    with pytest.raises(ValueError, match='NaN and Infinity'):
        results.encode_arguments({'x': float('nan')}, 100)


def test_error_text_and_codes():
    assert results.error_text('paused', 'tool use is paused') == 'paused: tool use is paused'
    assert results.result_code(False, '') == 'execution_failed'
    assert results.result_code(True, '') == ''
    assert progress.progress_value(-1.0) is None
    assert progress.progress_value(float('nan')) is None
    assert progress.progress_value(1.5) == 1.0


def test_images_are_read_only_when_png_or_jpeg_and_small_enough(tmp_path):
    png = tmp_path / 'a.png'
    png.write_bytes(b'\x89PNG\r\n\x1a\n' + b'\0' * 10)
    jpg = tmp_path / 'b.jpg'
    jpg.write_bytes(b'\xff\xd8\xff\xe0' + b'\1' * 10)
    fake = tmp_path / 'c.png'
    fake.write_text('not an image')
    big = tmp_path / 'd.png'
    big.write_bytes(b'\x89PNG\r\n\x1a\n' + b'\0' * 100)
    content = json.dumps({'paths': [str(png), str(jpg), str(fake), str(big),
                                    str(tmp_path / 'gone.png')]})
    images, notes = results.images_in_result(content, 50)
    assert [(i.path, i.mime_type, i.data) for i in images] == [
        (str(png), 'image/png', png.read_bytes()), (str(jpg), 'image/jpeg', jpg.read_bytes())]
    assert len(notes) == 3
    assert 'not a PNG or JPEG' in notes[0] and 'image cap' in notes[1]
    assert 'not readable' in notes[2]
    assert results.images_in_result('not json', 50) == ([], [])
    assert results.images_in_result('{"paths": "x"}', 50) == ([], [])


def test_non_loopback_bind_needs_a_token():
    assert access.is_loopback('127.0.0.1') and access.is_loopback('::1')
    assert access.is_loopback('localhost') and access.is_loopback('127.0.0.2')
    assert not access.is_loopback('0.0.0.0') and not access.is_loopback('robot.local')
    assert 'no token' in access.check_bind('127.0.0.1', None, 'T')
    with pytest.raises(ValueError, match='needs a bearer token.*variable T'):
        access.check_bind('0.0.0.0', None, 'T')
    assert '401' in access.check_bind('0.0.0.0', 'x' * 20, 'T')


def test_token_comes_from_a_file_or_the_environment(tmp_path):
    assert access.read_token('T', '', {}) is None
    assert access.read_token('T', '', {'T': '  ' + 'a' * 20 + '\n'}) == 'a' * 20
    token_file = tmp_path / 'token'
    token_file.write_text('b' * 24 + '\n')
    assert access.read_token('T', str(token_file), {'T': 'a' * 20}) == 'b' * 24
    with pytest.raises(ValueError, match='shorter than 16'):
        access.read_token('T', '', {'T': 'short'})
    with pytest.raises(ValueError, match='cannot read'):
        access.read_token('T', str(tmp_path / 'missing'), {})
    (tmp_path / 'empty').write_text('\n')
    with pytest.raises(ValueError, match='is empty'):
        access.read_token('T', str(tmp_path / 'empty'), {})
    assert access.token_matches('a' * 20, 'a' * 20)
    assert not access.token_matches('a' * 20, 'a' * 19 + 'b')


def test_bridge_hands_rclpy_futures_to_asyncio_and_tolerates_cancelled_waiters():
    import asyncio
    import threading
    import types

    from lerobot_tools_ros.mcp.bridge import RosBridge
    from rclpy.task import Future

    async def main() -> None:
        bridge = RosBridge(types.SimpleNamespace(), asyncio.get_running_loop())
        answered = Future()
        threading.Timer(0.05, answered.set_result, ('response',)).start()  # the ROS thread
        assert await asyncio.wait_for(bridge.wait(answered), 5.0) == 'response'

        failed = Future()
        threading.Timer(0.05, failed.set_exception, (RuntimeError('executor died'),)).start()
        with pytest.raises(RuntimeError, match='executor died'):
            await asyncio.wait_for(bridge.wait(failed), 5.0)

        # The MCP request was cancelled before ROS answered: the late answer is dropped quietly.
        late = Future()
        waiter = asyncio.ensure_future(bridge.wait(late))
        await asyncio.sleep(0.01)
        waiter.cancel()
        errors: list = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: errors.append(context))
        late.set_result('too late')
        await asyncio.sleep(0.05)
        assert waiter.cancelled() and not errors

    asyncio.run(main())


def test_tools_bound_with_kind_read_are_read_only():
    text = ('bindings:\n  get_battery: {kind: read, topic: /battery}\n'
            '  close_gripper: {kind: action, action: g}\n  odd: read\n')
    assert listing.read_bindings(text) == {'get_battery'}
    assert listing.read_bindings('not: [valid') == frozenset()
    assert listing.read_bindings('- a list') == frozenset()
