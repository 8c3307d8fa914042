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

The import graph is read from the source (every import, also inside functions, but not those
only for type checkers), so a cycle that a lazy import hides at run time still fails here.
"""

import ast
import pathlib

PACKAGE = 'lerobot_tools_ros'
SOURCE = pathlib.Path(__file__).resolve().parents[1] / PACKAGE


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for path in SOURCE.rglob('*.py'):
        parts = list(path.relative_to(SOURCE.parent).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts = parts[:-1]
        found['.'.join(parts)] = path
    return found


def _runtime_imports(tree: ast.AST):
    """Yield the import statements that run (not those under ``if TYPE_CHECKING:``)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and 'TYPE_CHECKING' in ast.unparse(node.test):
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


def _graph() -> tuple[dict, list]:
    modules = _modules()
    graph: dict[str, set] = {}
    private: list[str] = []
    for module, path in modules.items():
        edges = graph[module] = set()
        tree = ast.parse(path.read_text(encoding='utf-8'))
        for node in _runtime_imports(tree):
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
