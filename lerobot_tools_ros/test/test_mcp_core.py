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

from lerobot_tools_ros import mcp_core
from lerobot_tools_ros.catalog import ToolCatalog
import pytest

MOVE = {'type': 'function', 'function': {
    'name': 'move_arm', 'description': 'Move the arm.', 'parameters': {
        'type': 'object', 'properties': {'x': {'type': 'number'}}, 'required': ['x']}}}
LOOK = {'type': 'function', 'function': {
    'name': 'read_joints', 'description': 'Read joint angles.', 'parameters': {
        'type': 'object', 'properties': {}}}}


@pytest.fixture
def catalog() -> ToolCatalog:
    return ToolCatalog.from_tools([*ToolCatalog.load(None).tools, MOVE, LOOK], source='test')


def test_every_tool_is_listed_with_the_catalog_schema_and_description(catalog):
    tools = mcp_core.visible_tools(catalog, mcp_core.DispatcherView())
    assert [t.name for t in tools] == catalog.names
    for tool in tools:
        assert tool.input_schema == catalog.parameters(tool.name)
        assert tool.description == catalog.description(tool.name)
        assert tool.annotations() == {'readOnlyHint': False, 'destructiveHint': False}


def test_tools_outside_the_allowlist_are_hidden(catalog):
    view = mcp_core.view_from_parameters({
        'allowed_tools': ['say', 'move_arm'], 'tool.say.timeout_s': 3.0})
    assert [t.name for t in mcp_core.visible_tools(catalog, view)] == ['say', 'move_arm']
    # Unset parameters (None) are the defaults.
    view = mcp_core.view_from_parameters({'allowed_tools': None, 'tool.say.approval': None})
    assert len(mcp_core.visible_tools(catalog, view)) == len(catalog.names)
    # The dispatcher's default allowlist ['*'] and an empty one both mean every tool.
    for every in (['*'], []):
        view = mcp_core.view_from_parameters({'allowed_tools': every})
        assert len(mcp_core.visible_tools(catalog, view)) == len(catalog.names)


def test_hints_follow_approval_and_the_servers_settings(catalog):
    view = mcp_core.view_from_parameters({'tool.move_arm.approval': 'confirm',
                                          'tool.say.approval': 'auto',
                                          'tool.read_joints.approval': 'Deny'})
    tools = {t.name: t for t in mcp_core.visible_tools(
        catalog, view, read_only=['read_joints', 'record_observation'], actuating=['say'])}
    assert tools['move_arm'].annotations() == {'readOnlyHint': False, 'destructiveHint': True}
    # A tool that needs approval is destructive even when configured read-only.
    assert tools['read_joints'].annotations() == {'readOnlyHint': False,
                                                  'destructiveHint': True}
    assert tools['record_observation'].annotations() == {'readOnlyHint': True,
                                                         'destructiveHint': False}
    assert tools['say'].destructive and not tools['say'].read_only


def test_listed_schema_is_a_copy(catalog):
    (say,) = [t for t in mcp_core.visible_tools(catalog, mcp_core.DispatcherView())
              if t.name == 'say']
    say.input_schema['properties'].clear()
    assert catalog.parameters('say')['properties']


def test_arguments_are_encoded_capped_and_finite():
    assert json.loads(mcp_core.encode_arguments({'text': 'héllo'}, 100)) == {'text': 'héllo'}
    assert mcp_core.encode_arguments(None, 10) == '{}'
    with pytest.raises(mcp_core.ArgumentsTooLarge, match='at most 20'):
        mcp_core.encode_arguments({'text': 'x' * 30}, 20)
    with pytest.raises(ValueError, match='NaN and Infinity'):
        mcp_core.encode_arguments({'x': float('nan')}, 100)


def test_error_text_and_codes():
    assert mcp_core.error_text('paused', 'tool use is paused') == 'paused: tool use is paused'
    assert mcp_core.result_code(False, '') == 'execution_failed'
    assert mcp_core.result_code(True, '') == ''
    assert mcp_core.progress_value(-1.0) is None
    assert mcp_core.progress_value(float('nan')) is None
    assert mcp_core.progress_value(1.5) == 1.0


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
    images, notes = mcp_core.images_in_result(content, 50)
    assert [(i.path, i.mime_type, i.data) for i in images] == [
        (str(png), 'image/png', png.read_bytes()), (str(jpg), 'image/jpeg', jpg.read_bytes())]
    assert len(notes) == 3
    assert 'not a PNG or JPEG' in notes[0] and 'image cap' in notes[1]
    assert 'not readable' in notes[2]
    assert mcp_core.images_in_result('not json', 50) == ([], [])
    assert mcp_core.images_in_result('{"paths": "x"}', 50) == ([], [])


def test_non_loopback_bind_needs_a_token():
    assert mcp_core.is_loopback('127.0.0.1') and mcp_core.is_loopback('::1')
    assert mcp_core.is_loopback('localhost') and mcp_core.is_loopback('127.0.0.2')
    assert not mcp_core.is_loopback('0.0.0.0') and not mcp_core.is_loopback('robot.local')
    assert 'no token' in mcp_core.check_bind('127.0.0.1', None, 'T')
    with pytest.raises(ValueError, match='needs a bearer token.*variable T'):
        mcp_core.check_bind('0.0.0.0', None, 'T')
    assert '401' in mcp_core.check_bind('0.0.0.0', 'x' * 20, 'T')


def test_token_comes_from_a_file_or_the_environment(tmp_path):
    assert mcp_core.read_token('T', '', {}) is None
    assert mcp_core.read_token('T', '', {'T': '  ' + 'a' * 20 + '\n'}) == 'a' * 20
    token_file = tmp_path / 'token'
    token_file.write_text('b' * 24 + '\n')
    assert mcp_core.read_token('T', str(token_file), {'T': 'a' * 20}) == 'b' * 24
    with pytest.raises(ValueError, match='shorter than 16'):
        mcp_core.read_token('T', '', {'T': 'short'})
    with pytest.raises(ValueError, match='cannot read'):
        mcp_core.read_token('T', str(tmp_path / 'missing'), {})
    (tmp_path / 'empty').write_text('\n')
    with pytest.raises(ValueError, match='is empty'):
        mcp_core.read_token('T', str(tmp_path / 'empty'), {})
    assert mcp_core.token_matches('a' * 20, 'a' * 20)
    assert not mcp_core.token_matches('a' * 20, 'a' * 19 + 'b')


def test_bridge_hands_rclpy_futures_to_asyncio_and_tolerates_cancelled_waiters():
    import asyncio
    import threading
    import types

    from lerobot_tools_ros.nodes.mcp_server import RosBridge
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
    assert mcp_core.read_bindings(text) == {'get_battery'}
    assert mcp_core.read_bindings('not: [valid') == frozenset()
    assert mcp_core.read_bindings('- a list') == frozenset()
