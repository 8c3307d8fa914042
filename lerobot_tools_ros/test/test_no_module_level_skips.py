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
No test module skips at import time.

On a ROS install the launch_testing pytest plugin imports every test module of the directory;
one `pytest.importorskip` or `pytest.skip` that runs at import aborts the collection of all of
them, and `colcon test` reports "0 items / 1 skipped" as success. Optional dependencies are
skipped inside the fixtures and tests that need them.
"""

import ast
import pathlib

import pytest

TEST_DIR = pathlib.Path(__file__).resolve().parent
SKIP_CALLS = {'importorskip', 'skip', 'exit'}


def _is_skip_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):  # pytest.importorskip(...), pytest.skip(...)
        return (func.attr in SKIP_CALLS and isinstance(func.value, ast.Name)
                and func.value.id == 'pytest')
    return isinstance(func, ast.Name) and func.id in {'importorskip'}  # from pytest import ...


def module_level_skips(source: str) -> list[int]:
    """Line numbers of skip calls that run when the module is imported (not inside a def)."""
    lines = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                # The body runs later, but decorators and default values run at import.
                for expr in [*getattr(child, 'decorator_list', []),
                             *child.args.defaults, *child.args.kw_defaults]:
                    if expr is not None:
                        visit_expr(expr)
                continue
            if _is_skip_call(child):
                lines.append(child.lineno)
            visit(child)

    def visit_expr(expr: ast.AST) -> None:
        if _is_skip_call(expr):
            lines.append(expr.lineno)
        visit(expr)

    visit(ast.parse(source))
    return sorted(lines)


def test_finds_module_level_skips():
    source = (
        'import pytest\n'
        'cv2 = pytest.importorskip("cv2")\n'
        'if True:\n'
        '    pytest.skip("no", allow_module_level=True)\n'
        'class T:\n'
        '    x = pytest.importorskip("y")\n'
        '    def test_a(self):\n'
        '        pytest.importorskip("z")\n'
        '@pytest.fixture\n'
        'def f():\n'
        '    return pytest.importorskip("w")\n'
    )
    assert module_level_skips(source) == [2, 4, 6]


@pytest.mark.parametrize('path', sorted(TEST_DIR.glob('*.py')), ids=lambda p: p.name)
def test_no_test_module_skips_at_import(path):
    lines = module_level_skips(path.read_text())
    assert not lines, (f'{path.name} skips at import (lines {lines}); skip inside the fixture or '
                       'test that needs the optional dependency')
