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
The package's shape a newcomer relies on: no import cycles, no reaching into private names.

The import graph is read from the source (every import, also inside functions; a second check
counts those only for type checkers too), so a cycle that a lazy or typing-only import hides
still fails here.
The dispatcher node stays wiring: no mixin shares its state, nothing else (package, tests,
benches) reaches into its private attributes, and its module stays short.
"""

import ast
import pathlib

PACKAGE = 'lerobot_tools_ros'
SOURCE = pathlib.Path(__file__).resolve().parents[1] / PACKAGE
DISPATCHER = SOURCE / 'dispatcher' / 'node.py'
DISPATCHER_MAX_LINES = 420
# The tool_server node wires ROS to its tools' `ToolCalls` (tool_server.calls) and to
# tool_server.building; what it grows beyond wiring belongs in those.
TOOL_SERVER = SOURCE / 'tool_server' / 'node.py'
TOOL_SERVER_MAX_LINES = 420
CORE = SOURCE / 'dispatch' / 'core.py'
# The dispatch core's class stays readable: a call's states, the gates, streamed input, streamed
# speech, ids, repeats and deadlines live in modules of their own (dispatch.states, gates,
# streams, stream_speech, call_ids, repeats, deadlines); the class keeps the event API and the
# life of an accepted call, in about 600 lines.
CORE_CLASS_MAX_LINES = 620
METHOD_MAX_LINES = 50


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for path in SOURCE.rglob('*.py'):
        parts = list(path.relative_to(SOURCE.parent).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts = parts[:-1]
        found['.'.join(parts)] = path
    return found


def _runtime_imports(tree: ast.AST, *, typing_too: bool = False):
    """Yield the import statements that run (and, with `typing_too`, the type checkers' too)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        if not typing_too and isinstance(node, ast.If) \
                and 'TYPE_CHECKING' in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def _targets(module: str, is_package: bool, node: ast.AST, modules: dict) -> list[tuple]:
    """Return (module imported, name taken from it or '') for one import statement."""
    if isinstance(node, ast.Import):
        return [(alias.name, '') for alias in node.names]
    if node.level:
        base = module.split('.') if is_package else module.split('.')[:-1]
        base = base[:len(base) - node.level + 1]
        source = '.'.join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ''
    found = []
    for alias in node.names:
        submodule = f'{source}.{alias.name}'
        found.append((submodule, '') if submodule in modules else (source, alias.name))
    return found


def _graph(*, typing_too: bool = False) -> tuple[dict, list]:
    modules = _modules()
    graph: dict[str, set] = {}
    private: list[str] = []
    for module, path in modules.items():
        edges = graph[module] = set()
        tree = ast.parse(path.read_text(encoding='utf-8'))
        for node in _runtime_imports(tree, typing_too=typing_too):
            for target, name in _targets(module, path.name == '__init__.py', node, modules):
                while target and target not in modules:
                    target = target.rpartition('.')[0]
                if not target.startswith(PACKAGE) or target == module:
                    continue
                edges.add(target)
                if name.startswith('_') and not name.startswith('__'):
                    private.append(f'{module} imports {target}.{name}')
    return graph, private


def _cycles(graph: dict) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_package_has_no_import_cycles():
    graph, _ = _graph()
    assert len(graph) > 50  # the whole package was read
    assert _cycles(graph) == []


def test_no_cycle_hides_behind_type_checking_imports():
    """A module that names another's types only for mypy still depends on it: no cycles."""
    graph, _ = _graph(typing_too=True)
    assert _cycles(graph) == []


def test_no_module_imports_another_modules_private_names():
    _, private = _graph()
    assert private == []


def test_the_checks_see_a_cycle_and_a_private_import():
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}
    assert _cycles(graph) == [['a', 'b', 'c']]
    tree = ast.parse('from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\n'
                     'def f():\n    import y\n')
    assert sorted(ast.unparse(node) for node in _runtime_imports(tree)) == [
        'from typing import TYPE_CHECKING', 'import y']
    assert sorted(ast.unparse(node) for node in _runtime_imports(tree, typing_too=True)) == [
        'from typing import TYPE_CHECKING', 'import x', 'import y']


def _private_names(cls: ast.ClassDef) -> set[str]:
    """Return the private methods a class defines and the private attributes it sets."""
    found = {node.name for node in cls.body if isinstance(node, ast.FunctionDef)}
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == 'self':
            found.add(node.attr)
    return {name for name in found if name.startswith('_') and not name.startswith('__')}


def _dispatcher_class(tree: ast.AST) -> ast.ClassDef:
    return next(node for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef) and node.name == 'Dispatcher')


def _reaches(tree: ast.AST, private: set[str]) -> list[str]:
    """
    Return where `tree` reaches into the `private` attributes of the dispatcher.

    Two ways: ``<...dispatcher...>._name`` (an object the code calls a dispatcher), and a class
    with no base to inherit it from (a mixin) that reads ``self._name`` it neither sets nor
    defines itself.
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in private \
                and 'dispatcher' in ast.unparse(node.value).lower():
            found.append(f'line {node.lineno}: {ast.unparse(node)}')
        if isinstance(node, ast.ClassDef) and not node.bases:
            own = _private_names(node)
            for used in ast.walk(node):
                if isinstance(used, ast.Attribute) and isinstance(used.value, ast.Name) \
                        and used.value.id == 'self' and used.attr in private - own:
                    found.append(f'line {used.lineno}: {node.name} uses self.{used.attr}')
    return sorted(found, key=lambda where: int(where.split()[1].rstrip(':')))


def test_nothing_reaches_into_the_dispatchers_private_attributes():
    tree = ast.parse(DISPATCHER.read_text(encoding='utf-8'))
    dispatcher = _dispatcher_class(tree)
    # Composition: what the node holds are objects it calls, not mixins sharing its state.
    assert [ast.unparse(base) for base in dispatcher.bases] == ['Node']
    private = _private_names(dispatcher)
    assert {'_core', '_lock', '_apply'} <= private  # the names were read
    package_dir = SOURCE.parent
    files = [*SOURCE.rglob('*.py'), *(package_dir / 'test').glob('*.py'),
             *(package_dir.parent / 'bench').glob('*.py')]
    reached = [f'{path.relative_to(package_dir.parent)} {where}'
               for path in files if path != DISPATCHER
               for where in _reaches(ast.parse(path.read_text(encoding='utf-8')), private)]
    assert reached == []


def test_the_dispatcher_module_stays_wiring_sized():
    lines = len(DISPATCHER.read_text(encoding='utf-8').splitlines())
    assert lines <= DISPATCHER_MAX_LINES, (
        f'dispatcher/node.py has {lines} lines: move what is not wiring (events into the '
        'core, effects out) into the objects it holds')


def test_the_tool_server_module_stays_wiring_sized():
    lines = len(TOOL_SERVER.read_text(encoding='utf-8').splitlines())
    assert lines <= TOOL_SERVER_MAX_LINES, (
        f'tool_server/node.py has {lines} lines: move what a call goes through into '
        'tool_server/calls.py (ToolCalls) and what hosting decides into tool_server/building.py')


def test_the_private_access_check_sees_a_reach_and_a_mixin():
    tree = ast.parse('def f(stack):\n    return stack.dispatcher._core.catalog\n'
                     'class Mixin:\n    def g(self):\n        self._own = 1\n'
                     '        return self._lock, self._own\n'
                     'class Other:\n    def h(self, tool):\n        return tool._core\n'
                     'class Child(Base):\n    def i(self):\n        return self._lock\n')
    assert _reaches(tree, {'_core', '_lock', '_own'}) == [
        'line 2: stack.dispatcher._core', 'line 6: Mixin uses self._lock']


# Roots of modules through which code reaches ROS 2 (rclpy, message and interface packages).
ROS_ROOTS = ('rclpy', 'rosidl_runtime_py', 'lerobot_tools_interfaces', 'std_msgs', 'std_srvs',
             'sensor_msgs', 'builtin_interfaces', 'rcl_interfaces', 'action_msgs')


def _ros_imports(path: pathlib.Path) -> list[str]:
    """Every import of a ROS module in a file, at its top or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ''] if isinstance(node, ast.ImportFrom) else [])
        found += [f'{path.name}:{node.lineno} {name}' for name in names
                  if name.split('.')[0] in ROS_ROOTS]
    return found


def test_tools_reach_ros_only_through_their_host():
    # A tool shows what it exchanges with the graph at its top (type names as strings) and
    # gets everything else from tools.host.ToolHost; only bindings of robot interfaces of any
    # type take the node itself.
    tools = sorted((SOURCE / 'tools').glob('*.py'))
    assert {p.stem for p in tools} >= {'say', 'record_observation', 'echo', 'host', 'base'}
    reached = [found for path in tools for found in _ros_imports(path)]
    assert not reached, f'tools import ROS themselves: {reached}'


def _methods(path: pathlib.Path, class_name: str) -> dict[str, list[str]]:
    tree = ast.parse(path.read_text(encoding='utf-8'))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    return {f.name: [a.arg for a in f.args.args + f.args.kwonlyargs] for f in cls.body
            if isinstance(f, ast.FunctionDef) and not f.name.startswith('_')}


def test_the_tool_servers_call_lifecycle_imports_no_ros():
    # What a call goes through is decided without ROS (tested without a graph in
    # test_tool_calls.py); the node passes what needs ROS in as plain callables.
    cores = [SOURCE / 'tool_server' / name for name in ('calls.py', 'streamed_text.py')]
    assert [found for path in cores for found in _ros_imports(path)] == []
    assert _ros_imports(TOOL_SERVER)  # the check reads imports: the node's are found


def test_the_ros_host_offers_exactly_what_the_tool_host_promises():
    promised = _methods(SOURCE / 'tools' / 'host.py', 'ToolHost')
    offered = _methods(SOURCE / 'tool_server' / 'host.py', 'RosToolHost')
    assert offered == promised


# Modules that alone may use a library's private names, each for one library: its adapter.
PRIVATE_ADAPTERS = {
    'rclpy_fixes.py': 'rclpy (what its releases get wrong or lack)',
    'mcp/sdk_adapter.py': 'the MCP SDK (pinned by test_mcp_sdk_adapter.py)',
    'audio/device.py': "sounddevice (re-reading PortAudio's device list)",
}


def _private_reaches(tree: ast.AST) -> list[str]:
    """
    Return the private names a module uses on objects not its own.

    A name with one leading underscore, read as an attribute (or through getattr, setattr or
    hasattr) of anything but ``self``, ``cls`` or ``super()``, must be defined in the same
    module: otherwise the module reaches into another module's, or a library's, internals.
    """
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.keyword) and node.arg:  # set_defaults(_run=...)
            defined.add(node.arg)
    used = []
    for node in ast.walk(tree):
        name, base = '', None
        if isinstance(node, ast.Attribute):
            name, base = node.attr, node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ('getattr', 'setattr', 'hasattr') and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            name, base = node.args[1].value, node.args[0]
        if not name.startswith('_') or name.startswith('__') or name in defined:
            continue
        if isinstance(base, ast.Name) and base.id in ('self', 'cls'):
            continue
        if isinstance(base, ast.Call) and ast.unparse(base.func) == 'super':
            continue
        used.append(f'{ast.unparse(node)} (line {node.lineno})')
    return used


def test_no_module_uses_private_names_of_another_module_or_library():
    found = {}
    for path in sorted(SOURCE.rglob('*.py')):
        relative = path.relative_to(SOURCE).as_posix()
        if relative in PRIVATE_ADAPTERS:
            continue
        reaches = _private_reaches(ast.parse(path.read_text(encoding='utf-8')))
        if reaches:
            found[relative] = reaches
    assert found == {}, ('private names used across modules (make the name public where it is '
                         "defined, or move the use into the library's adapter module): "
                         f'{found}')


def test_the_private_reach_check_sees_an_attribute_and_a_getattr():
    tree = ast.parse('import other\nclass A:\n    def f(self, x):\n        self._mine = 1\n'
                     '        return other._theirs, getattr(x, "_hidden"), self._mine, x._mine\n')
    assert _private_reaches(tree) == ['other._theirs (line 5)',
                                      "getattr(x, '_hidden') (line 5)"]


def _class_sizes(path: pathlib.Path, name: str) -> tuple[int, dict[str, int]]:
    """Return a class's lines and the lines of each of its methods (docstrings included)."""
    (cls,) = [node for node in ast.parse(path.read_text(encoding='utf-8')).body
              if isinstance(node, ast.ClassDef) and node.name == name]
    methods = {node.name: node.end_lineno - node.lineno + 1 for node in cls.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return cls.end_lineno - cls.lineno + 1, methods


def test_the_dispatch_core_stays_readable_in_size():
    lines, methods = _class_sizes(CORE, 'DispatchCore')
    assert len(methods) > 40  # the class was found and read
    assert lines <= CORE_CLASS_MAX_LINES, f'DispatchCore has {lines} lines'
    long = {name: size for name, size in methods.items() if size > METHOD_MAX_LINES}
    assert long == {}, f'methods over {METHOD_MAX_LINES} lines: {long}'


def test_the_size_check_measures_a_class_and_its_methods(tmp_path):
    source = tmp_path / 'sample.py'
    source.write_text('class A:\n    def f(self):\n        return 1\n\n    x = 2\n')
    assert _class_sizes(source, 'A') == (5, {'f': 2})
