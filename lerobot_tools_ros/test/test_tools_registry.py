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

"""The tool registry: built-ins by import path, register_tool, entry-point plugins, get_tools."""

import json
import logging
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time
from typing import ClassVar

from lerobot_tools_ros.catalog import DEFAULT_TOOLS, ToolCatalog
from lerobot_tools_ros.errors import CANCELLED, ToolError
from lerobot_tools_ros.tools import (
    get_tools, register_tool, reload_entry_points, Tool, TOOL_REGISTRY, ToolLoadError,
    ToolParameter, ToolRegistry, ToolSet,
)
from lerobot_tools_ros.tools.base import CallContext, declared_parameters
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA, EchoTool
import pytest

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]


def schema_named(name: str, **properties) -> dict:
    return {'type': 'function', 'function': {
        'name': name, 'description': f'The {name} tool.',
        'parameters': {'type': 'object', 'properties': properties}}}


class LeRobotMetadataLike:
    """What LeRobot's LeRobotDatasetMetadata offers get_tools: a ``tools`` list."""

    def __init__(self, tools: list) -> None:
        self._tools = tools

    @property
    def tools(self) -> list:
        return list(self._tools) if self._tools else json.loads(json.dumps(DEFAULT_TOOLS))


class GreeterTool:
    """A tool with a declared parameter, for constructor-kwargs tests."""

    PARAMETERS: ClassVar[dict[str, ToolParameter]] = {
        'greeting': ToolParameter('hello', 'Word to greet with.'),
    }

    def __init__(self, schema: dict, greeting: str = 'hello') -> None:
        self.schema = schema
        self.name = schema['function']['name']
        self.greeting = greeting
        self.closed = False

    def call(self, arguments: dict) -> str:
        return f'{self.greeting}, {arguments.get("who", "you")}'

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def greeter():
    register_tool('greeter', GreeterTool)
    yield GreeterTool
    TOOL_REGISTRY.unregister('greeter')


# ------------------------------------------------------------------------------------ echo
def test_echo_returns_sorted_json():
    tool = EchoTool(ECHO_SCHEMA)
    assert tool.name == 'echo' and tool.schema is ECHO_SCHEMA
    assert isinstance(tool, Tool)
    assert tool.call({'text': 'hi', 'a': [1, 2]}) == '{"a": [1, 2], "text": "hi"}'
    assert tool.call({}) == '{}'


def test_echo_fail_and_delay():
    tool = EchoTool(ECHO_SCHEMA)
    with pytest.raises(RuntimeError, match='^boom$'):
        tool.call({'fail': 'boom'})
    started = time.monotonic()
    assert json.loads(tool.call({'delay_s': 0.05, 'text': 'x'})) == {'delay_s': 0.05, 'text': 'x'}
    assert time.monotonic() - started >= 0.05


def test_echo_close_ends_a_pending_delay():
    tool = EchoTool(ECHO_SCHEMA)
    errors = []

    def call() -> None:
        try:
            tool.call({'delay_s': 30})
        except ToolError as exc:
            errors.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    time.sleep(0.05)
    tool.close()
    worker.join(5)
    # A delay cut short by shutdown did not run its course: cancelled, not a normal answer.
    assert not worker.is_alive()
    assert [(e.code, 'stopped (shutting down)' in e.message) for e in errors] == [
        (CANCELLED, True)]


def test_echo_schema_is_a_valid_catalog_entry():
    catalog = ToolCatalog.from_tools([ECHO_SCHEMA], strict=True)
    arguments = {'text': 'hi', 'delay_s': 1.5}
    assert catalog.validate('echo', arguments) == arguments
    for bad in ({'delay_s': 31}, {'delay_s': -1}, {'fail': 3}):
        with pytest.raises(ValueError):
            catalog.validate('echo', bad)
    with pytest.raises(TypeError, match='echo takes no parameters'):
        EchoTool(ECHO_SCHEMA, colour='red')


# ------------------------------------------------------------------------------- get_tools
def test_get_tools_instantiates_and_lists_unimplemented(caplog):
    catalog = ToolCatalog.from_tools([ECHO_SCHEMA, schema_named('wave')])
    with caplog.at_level(logging.WARNING, logger='lerobot_tools_ros.tools'):
        tools = get_tools(catalog)
    assert isinstance(tools, ToolSet) and isinstance(tools, dict)
    assert list(tools) == ['echo'] and isinstance(tools['echo'], EchoTool)
    assert tools['echo'].schema == ECHO_SCHEMA
    assert tools.unimplemented == ['wave'] and tools.catalog is catalog
    assert 'wave' in caplog.text and 'no implementation' in caplog.text


def test_get_tools_accepts_lerobot_metadata_object(greeter):
    meta = LeRobotMetadataLike([ECHO_SCHEMA, schema_named('greeter', who={'type': 'string'})])
    tools = get_tools(meta)
    assert sorted(tools) == ['echo', 'greeter'] and tools.unimplemented == []
    assert tools['greeter'].call({'who': 'Ana'}) == 'hello, Ana'
    assert get_tools([ECHO_SCHEMA]).keys() == {'echo'}


def test_get_tools_validates_raw_metadata_entries(caplog):
    meta = LeRobotMetadataLike([ECHO_SCHEMA, {'type': 'function', 'function': {'name': 'x'}}])
    with caplog.at_level(logging.WARNING):
        tools = get_tools(meta)
    assert list(tools) == ['echo']
    assert 'parameters is missing' in caplog.text


def test_get_tools_per_tool_kwargs(greeter):
    catalog = ToolCatalog.from_tools([schema_named('greeter'), ECHO_SCHEMA])
    tools = get_tools(catalog, greeter={'greeting': 'hola'})
    assert tools['greeter'].greeting == 'hola'
    assert tools['greeter'].call({'who': 'Ana'}) == 'hola, Ana'
    assert declared_parameters(GreeterTool)['greeting'].default == 'hello'
    tools.close()
    assert tools['greeter'].closed
    with pytest.raises(TypeError, match='must be a dict'):
        get_tools(catalog, greeter='hola')


def test_get_tools_reports_constructor_failure(greeter):
    catalog = ToolCatalog.from_tools([schema_named('greeter')])
    with pytest.raises(ToolLoadError) as caught:
        get_tools(catalog, greeter={'volume': 3})
    assert caught.value.tool == 'greeter' and 'volume' in str(caught.value)


def test_get_tools_rejects_instance_with_wrong_name():
    class Misnamed:
        name = 'something_else'

        def __init__(self, schema):
            self.schema = schema

        def call(self, arguments):
            return ''

    register_tool('misnamed', Misnamed)
    try:
        with pytest.raises(ToolLoadError, match="instance has name 'something_else'"):
            get_tools(ToolCatalog.from_tools([schema_named('misnamed')]))
    finally:
        TOOL_REGISTRY.unregister('misnamed')


def test_get_tools_rejects_other_inputs():
    with pytest.raises(TypeError, match='object with a .tools list'):
        get_tools(object())


# -------------------------------------------------------------------------- register_tool
def test_register_tool_forms():
    @register_tool('form_a')
    class FormA:
        pass

    @register_tool(name='form_b')
    class FormB:
        pass

    @register_tool
    class FormC:
        name = 'form_c'

    try:
        assert TOOL_REGISTRY['form_a'] is FormA and TOOL_REGISTRY['form_b'] is FormB
        assert TOOL_REGISTRY['form_c'] is FormC
        assert register_tool('form_a', FormA) is FormA  # same class again is fine
        assert 'registered' in TOOL_REGISTRY.origin('form_a')
        with pytest.raises(ValueError, match="'form_a' is already registered"):
            register_tool('form_a', FormB)
        assert register_tool('form_a', FormB, replace=True) is FormB
        with pytest.raises(TypeError, match='cannot tell the tool name'):
            register_tool(type('Nameless', (), {}))
        with pytest.raises(ValueError, match='must match'):
            register_tool('bad name', FormA)
    finally:
        for name in ('form_a', 'form_b', 'form_c'):
            TOOL_REGISTRY.unregister(name)
    assert 'form_a' not in TOOL_REGISTRY


def test_register_over_builtin_needs_replace():
    class OtherEcho(EchoTool):
        pass

    with pytest.raises(ValueError, match="'echo' is already .* "
                                         'lerobot_tools_ros.tools.echo:EchoTool'):
        register_tool('echo', OtherEcho)
    register_tool('echo', EchoTool)  # the built-in's own class: no conflict
    register_tool('echo', OtherEcho, replace=True)
    try:
        assert isinstance(get_tools([ECHO_SCHEMA])['echo'], OtherEcho)
    finally:
        TOOL_REGISTRY.unregister('echo')
    assert TOOL_REGISTRY['echo'] is EchoTool


def test_builtins_are_listed_without_importing():
    code = ('import sys; from lerobot_tools_ros.tools import TOOL_REGISTRY; '
            'import lerobot_tools_ros.catalog; names = list(TOOL_REGISTRY); '
            "assert {'echo', 'say', 'record_observation'} <= set(names), names; "
            "assert 'say' in TOOL_REGISTRY; "
            "loaded = [m for m in sys.modules if m.startswith(('lerobot_tools_ros.tools.', "
            "'rclpy'))]; print(loaded)")
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(PACKAGE_DIR)),
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['lerobot_tools_ros.tools.base']"


def test_broken_builtin_module_fails_when_requested():
    registry = ToolRegistry({'ghost': 'lerobot_tools_ros.tools.no_such_tool_module:GhostTool',
                             'attr': 'lerobot_tools_ros.tools.echo:NoSuchClass'})
    assert 'ghost' in registry and sorted(registry)[:2] == ['attr', 'ghost']
    with pytest.raises(ToolLoadError) as caught:
        registry['ghost']
    message = str(caught.value)
    assert "'lerobot_tools_ros.tools.no_such_tool_module'" in message
    assert 'ModuleNotFoundError' in message and caught.value.tool == 'ghost'
    with pytest.raises(ToolLoadError, match="has no 'NoSuchClass'"):
        registry['attr']
    with pytest.raises(KeyError):
        registry['unknown']


# --------------------------------------------------------------------------- entry points
@pytest.fixture
def plugin_dir(tmp_path):
    """Give the test a sys.path entry that later tests cannot see once this test ends."""
    sys.path.insert(0, str(tmp_path))
    reload_entry_points()
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for module in [m for m in sys.modules if m.startswith('example_tool_pkg')]:
        del sys.modules[module]
    reload_entry_points()


def install_distribution(root: pathlib.Path, entry_points: str, modules: dict) -> None:
    dist_info = root / 'example_tool-0.1.dist-info'
    dist_info.mkdir()
    (dist_info / 'METADATA').write_text(
        'Metadata-Version: 2.1\nName: example-tool\nVersion: 0.1\n')
    (dist_info / 'entry_points.txt').write_text(
        '[lerobot_tools_ros.tools]\n' + entry_points)
    package = root / 'example_tool_pkg'
    package.mkdir()
    (package / '__init__.py').write_text('')
    for name, source in modules.items():
        (package / f'{name}.py').write_text(textwrap.dedent(source))


WAVE_MODULE = '''
    class WaveTool:
        """A third-party tool: knows nothing about lerobot_tools_ros internals."""

        def __init__(self, schema, arm='left'):
            self.schema = schema
            self.name = schema['function']['name']
            self.arm = arm

        def call(self, arguments):
            return {'waved': arguments.get('times', 1), 'arm': self.arm}
'''


def test_entry_point_plugin_is_hosted_without_changes(plugin_dir):
    assert 'wave' not in TOOL_REGISTRY
    install_distribution(plugin_dir, 'wave = example_tool_pkg.wave:WaveTool\n',
                         {'wave': WAVE_MODULE})
    reload_entry_points()
    assert 'wave' in TOOL_REGISTRY
    assert 'example-tool' in TOOL_REGISTRY.origin('wave')
    catalog = ToolCatalog.from_tools([schema_named('wave', times={'type': 'integer'}),
                                      ECHO_SCHEMA])
    tools = get_tools(catalog, wave={'arm': 'right'})
    assert tools.unimplemented == []
    result = tools['wave'].call(catalog.validate('wave', '{"times": 2}'))
    assert result == {'waved': 2, 'arm': 'right'}


def test_entry_point_clashing_with_builtin_is_ignored(plugin_dir, caplog):
    install_distribution(plugin_dir, 'echo = example_tool_pkg.wave:WaveTool\n'
                                     'bad name = example_tool_pkg.wave:WaveTool\n',
                         {'wave': WAVE_MODULE})
    with caplog.at_level(logging.WARNING, logger='lerobot_tools_ros.tools'):
        reload_entry_points()
        problems = TOOL_REGISTRY.problems
    assert any('echo' in p and 'already taken' in p for p in problems)
    assert any('bad name' in p and 'invalid tool name' in p for p in problems)
    assert TOOL_REGISTRY['echo'] is EchoTool


def test_entry_point_with_broken_import_names_module(plugin_dir):
    install_distribution(plugin_dir, 'needs_dep = example_tool_pkg.needs_dep:Tool\n',
                         {'needs_dep': 'import example_missing_dependency_xyz\n'})
    reload_entry_points()
    with pytest.raises(ToolLoadError) as caught:
        get_tools(ToolCatalog.from_tools([schema_named('needs_dep')]))
    message = str(caught.value)
    assert 'example_tool_pkg.needs_dep' in message
    assert "No module named 'example_missing_dependency_xyz'" in message


# ------------------------------------------------------------------------------ base.py
def test_declared_parameters_rejects_bad_shapes():
    class NoParams:
        pass

    class WrongType:
        PARAMETERS = {'rate': 3}

    class BadKey:
        PARAMETERS = {'not-an-identifier': ToolParameter(1, 'x')}

    assert declared_parameters(NoParams) == {}
    with pytest.raises(TypeError, match=r"WrongType.PARAMETERS\['rate'\] must be a ToolParameter"):
        declared_parameters(WrongType)
    with pytest.raises(TypeError, match='must be a Python identifier'):
        declared_parameters(BadKey)


def test_cancel_runs_callbacks_in_the_cancelling_thread_once():
    context = CallContext('c')
    seen: list = []
    context.on_cancel(lambda: seen.append(('first', threading.get_ident())))
    forget = context.on_cancel(lambda: seen.append(('forgotten', threading.get_ident())))
    forget()
    context.cancel()
    context.cancel()  # a second cancel runs nothing again
    assert seen == [('first', threading.get_ident())] and context.cancelled.is_set()
    context.on_cancel(lambda: seen.append(('late', threading.get_ident())))  # at once
    assert [name for name, _ in seen] == ['first', 'late']
