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
Every error code the package produces is documented, with the outcomes it comes with.

The source is read (not run): each place that names a code (``errors.TIMEOUT``,
``ErrorCodes.TIMEOUT``, a code constant imported from ``errors``, or a literal code given to
``ToolError`` or an ``error_code=``) must name one of ``errors.ALL_CODES``, declared in
``ErrorCodes.msg``, given its outcomes in ``errors.CODE_OUTCOMES`` and listed with them on the
generated reference page. Every outcome named in the source is one of ``errors.ALL_OUTCOMES``.
"""

import ast
import pathlib

from lerobot_tools_ros import errors

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / 'lerobot_tools_ros'
REPO = PACKAGE.parents[1]
CONSTANTS = {name: getattr(errors, name) for name in dir(errors)
             if name.isupper() and getattr(errors, name) in errors.ALL_CODES}
OUTCOME_CONSTANTS = {name: getattr(errors, name) for name in ('NOT_RUN', 'RAN', 'UNKNOWN')}


def _produced() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Return {code: [where...]} and {outcome: [where...]} for every place the source names one."""
    codes: dict[str, list[str]] = {}
    outcomes: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob('*.py')):
        tree = ast.parse(path.read_text(encoding='utf-8'))
        imported = {alias.asname or alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module
                    and node.module.endswith('errors') for alias in node.names}
        for node in ast.walk(tree):
            where = f'{path.relative_to(PACKAGE)}:{getattr(node, "lineno", 0)}'
            name = ''
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in ('errors', 'ErrorCodes', 'Outcomes'):
                name = node.attr
            elif isinstance(node, ast.Name) and node.id in imported:
                name = node.id
            if name in CONSTANTS:
                codes.setdefault(CONSTANTS[name], []).append(where)
            elif name in OUTCOME_CONSTANTS:
                outcomes.setdefault(OUTCOME_CONSTANTS[name], []).append(where)
            if isinstance(node, ast.Call):
                callee = node.func.id if isinstance(node.func, ast.Name) else getattr(
                    node.func, 'attr', '')
                literals = [node.args[0]] if callee == 'ToolError' and node.args else []
                literals += [k.value for k in node.keywords if k.arg == 'error_code']
                for literal in literals:
                    if isinstance(literal, ast.Constant) and isinstance(literal.value, str) \
                            and literal.value:
                        codes.setdefault(literal.value, []).append(where)
                for keyword in node.keywords:
                    if keyword.arg == 'outcome' and isinstance(keyword.value, ast.Constant):
                        outcomes.setdefault(keyword.value.value, []).append(where)
    return codes, outcomes


def test_the_scan_finds_the_places_codes_are_produced():
    codes, outcomes = _produced()
    assert sum(len(places) for places in codes.values()) > 100, codes
    # A few places it must see: a gate, a tool's own code, an executor's lost answer.
    assert any('dispatch/core.py' in where for where in codes[errors.PAUSED])
    assert any('tools/say.py' in where for where in codes[errors.ANSWER_LOST])
    assert any('executors/action.py' in where for where in codes[errors.ANSWER_LOST])
    assert set(outcomes) >= set(errors.ALL_OUTCOMES)


def test_every_code_produced_is_declared_and_documented_with_its_outcomes():
    codes, outcomes = _produced()
    declared = (REPO / 'lerobot_tools_interfaces' / 'msg' / 'ErrorCodes.msg').read_text()
    page = (REPO / 'docs' / 'reference' / 'errors.md').read_text()
    rows = {line.split('|')[1].strip().strip('`'): line for line in page.splitlines()
            if line.startswith('| `')}
    for code, places in sorted(codes.items()):
        assert code in errors.ALL_CODES, f'{code!r} is not an error code ({places[:3]})'
        assert f'="{code}"' in declared, f'{code} is missing from ErrorCodes.msg'
        described = errors.CODE_OUTCOMES.get(code, '')
        assert any(outcome in described for outcome in errors.ALL_OUTCOMES), code
        assert code in rows, f'{code} is missing from docs/reference/errors.md'
        assert described.split(' ')[0].rstrip(';') in rows[code], rows[code]
    for outcome, places in outcomes.items():
        assert outcome in errors.ALL_OUTCOMES, f'{outcome!r} is no outcome ({places[:3]})'
    guide = (REPO / 'docs' / 'guides' / 'feedback.md').read_text()
    for outcome in errors.ALL_OUTCOMES:
        assert f'| `{outcome}` |' in guide, f'the feedback guide does not explain {outcome}'


def test_an_executor_answer_without_an_outcome_is_read_off_its_code():
    """An executor that predates the field: gates are not_run, lost answers unknown."""
    assert errors.answered_outcome(errors.UNAVAILABLE) == errors.NOT_RUN
    assert errors.answered_outcome(errors.TIMEOUT) == errors.UNKNOWN
    assert errors.answered_outcome(errors.ANSWER_LOST) == errors.UNKNOWN
    assert errors.answered_outcome(errors.EXECUTION_FAILED) == errors.RAN
    assert errors.answered_outcome('') == errors.RAN
    # One that says what happened is believed.
    assert errors.answered_outcome(errors.CANCELLED, errors.NOT_RUN) == errors.NOT_RUN
