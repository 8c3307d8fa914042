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
The parser's layout: one family = one module that imports shared readers only.

Read from the source with ``ast``: families never import one another, readers never import a
family, the parser's modules import one another without a cycle, a family module registers
nothing when imported (``formats`` registers them all, in the order of ``FORMATS``), and every
family documents its reasoning-safety rule.
"""

import ast
import pathlib

from lerobot_tools_ros.parsing import FORMATS, formats
import pytest

PARSING = pathlib.Path(formats.__file__).resolve().parents[1]
PACKAGE = 'lerobot_tools_ros.parsing'


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PARSING).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return '.'.join([PACKAGE] + parts)


MODULES = {module_name(path): path for path in sorted(PARSING.rglob('*.py'))}
FAMILIES = sorted(name for name in MODULES
                  if name.startswith(f'{PACKAGE}.formats.') and not name.endswith('.reasoning'))


def imported_modules(name: str) -> set[str]:
    """Return the parser's modules that ``name`` imports (relative imports resolved)."""
    path = MODULES[name]
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition('.')[0]
            target = (f'{base}.{node.module}' if node.module else base) if node.level else (
                node.module or '')
            for alias in node.names:  # `from . import x` imports the submodule x
                if f'{target}.{alias.name}' in MODULES:
                    found.add(f'{target}.{alias.name}')
            if target in MODULES:
                found.add(target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
    found.discard(name)
    return found


def test_no_family_imports_another_family():
    for name in FAMILIES:
        family_imports = [other for other in imported_modules(name)
                          if other.startswith(f'{PACKAGE}.formats')]
        assert family_imports == [], name


def test_readers_import_no_family_and_nothing_above_them():
    readers = {name.rpartition('.')[2] for name in MODULES
               if name.startswith(f'{PACKAGE}.readers.')}
    assert {'json_values', 'literals', 'pythonic_calls', 'xml_parameters', 'invokes',
            'key_values', 'tagged'} <= readers
    for name in MODULES:
        if name.startswith(f'{PACKAGE}.readers'):
            above = {f'{PACKAGE}.{module}' for module in ('formats', 'core', 'api', 'streaming')}
            assert not [other for other in imported_modules(name)
                        if any(other == up or other.startswith(up + '.') for up in above)], name


def test_the_parsers_imports_have_no_cycle():
    graph = {name: imported_modules(name) for name in MODULES}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            pytest.fail('import cycle: ' + ' -> '.join(path[path.index(name):] + [name]))
        if name in done:
            return
        for other in sorted(graph[name]):
            visit(other, path + [name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


@pytest.mark.parametrize('name', FAMILIES)
def test_a_family_module_only_declares_its_format(name):
    tree = ast.parse(MODULES[name].read_text())
    calls = [node for node in tree.body
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
    assert calls == [], f'{name} runs code on import (registration belongs to formats)'
    assert 'FAMILY' in {target.id for node in tree.body if isinstance(node, ast.Assign)
                        for target in node.targets if isinstance(target, ast.Name)}
    assert 'Reasoning safety:' in ast.get_docstring(tree), f'{name}: document the rule'


def test_formats_registers_every_family_once_in_the_public_order():
    assert [family.name for family in formats.BUILT_IN] == list(FORMATS)
    declared = {MODULES[name].stem for name in FAMILIES}
    assert len(formats.BUILT_IN) == len(declared)
