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
Catalog patterns in bounded time: RE2 where google-re2 is installed, a bounded fallback elsewhere.

The fallback runs in a child Python in which ``import re2`` fails, as on a platform without
the wheel: the same code path a user there gets.
"""

import json
import pathlib
import subprocess
import sys

from lerobot_tools_ros.catalog import safe_regex
import pytest

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]

needs_re2 = pytest.mark.skipif(safe_regex.engine() != 're2', reason='google-re2 not installed')


@needs_re2
def test_re2_refuses_what_it_cannot_match_in_linear_time_with_its_reason():
    for pattern, reason in ((r'(a)\1', r'invalid escape sequence: \1'),
                            ('(?=a)', 'invalid perl operator: (?='),
                            ('(?<!a)b', 'invalid perl operator: (?<')):
        with pytest.raises(safe_regex.PatternError) as raised:
            safe_regex.compile_pattern(pattern)
        assert reason in str(raised.value) and 'RE2' in str(raised.value)


@needs_re2
def test_re2_matches_what_backtracks_in_python_re():
    # 2^60 steps for a backtracking engine.
    assert safe_regex.search('^(a+)+$', 'a' * 60 + '!') is False
    assert safe_regex.search('^(a+)+$', 'a' * 60) is True
    assert safe_regex.search('a*b', 'a' * 65536) is False  # quadratic in Python's re
    assert safe_regex.search('x', 'lone \ud800 surrogate x') is True


FALLBACK = r"""
import json, sys
sys.modules['re2'] = None  # as where google-re2 has no wheel
from lerobot_tools_ros.catalog import safe_regex
from lerobot_tools_ros.catalog import CatalogError, ToolArgumentError, ToolCatalog
out = {'engine': safe_regex.engine(), 'refused': {}, 'accepted': {}}
for pattern in ['^(a+)+$', '(a|ab)*c', '(x+x+)+y', r'(a)\1', '(?=a)', '^a*a*a*a*b']:
    try:
        safe_regex.compile_pattern(pattern)
    except safe_regex.PatternError as exc:
        out['refused'][pattern] = str(exc)
for pattern in ['^[a-z]+$', r'^\d{3}-\d{4}$', 'a*b', '(cat)?s', '^[a-z]+_[0-9]+$']:
    out['accepted'][pattern] = safe_regex.compile_pattern(pattern).max_chars
tool = {'type': 'function', 'function': {'name': 't', 'parameters': {
    'type': 'object', 'properties': {'s': {'type': 'string', 'pattern': 'a*b'}}}}}
catalog = ToolCatalog.from_tools([tool], strict=True)
out['short'] = catalog.validate('t', {'s': 'aab'})
try:
    catalog.validate('t', {'s': 'a' * 65536})
except ToolArgumentError as exc:
    out['long'] = exc.message
bad = dict(tool, function=dict(tool['function'], parameters={'type': 'object', 'properties': {
    's': {'type': 'string', 'pattern': '^(a+)+$'}}}))
try:
    ToolCatalog.from_tools([bad], strict=True)
except CatalogError as exc:
    out['load'] = str(exc)
print(json.dumps(out))
"""


def test_without_re2_only_patterns_of_bounded_cost_are_used():
    run = subprocess.run([sys.executable, '-c', FALLBACK], capture_output=True, text=True,
                         timeout=120, cwd=PACKAGE_DIR)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout)
    assert out['engine'] == 'python (bounded)'
    refused = out['refused']
    assert sorted(refused) == sorted(['^(a+)+$', '(a|ab)*c', '(x+x+)+y', r'(a)\1', '(?=a)',
                                      '^a*a*a*a*b'])
    assert 'exponential time' in refused['^(a+)+$'] and 'google-re2' in refused['^(a+)+$']
    assert 'backreferences' in refused[r'(a)\1'] and 'lookaround' in refused['(?=a)']
    assert '4 variable-length repetitions' in refused['^a*a*a*a*b']
    accepted = out['accepted']
    # Anchored, one repetition: linear; unanchored or two repetitions: n^2 <= 10^7.
    assert accepted['^[a-z]+$'] >= 10 ** 7 and accepted[r'^\d{3}-\d{4}$'] >= 10 ** 7
    assert accepted['a*b'] == accepted['^[a-z]+_[0-9]+$'] == 3162
    assert out['short'] == {'s': 'aab'}
    assert 'without google-re2' in out['long'] and 'at most 3162 characters' in out['long']
    assert 'exponential time' in out['load'] and "pattern '^(a+)+$'" in out['load']
