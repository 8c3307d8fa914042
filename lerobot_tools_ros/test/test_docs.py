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
The documentation agrees with the code, builds without a warning, and the README stays short.

- Every generated reference page (docs/generate.py: errors, model families, interfaces,
  topics, launch arguments, parameters) is what the code generates now; a stale page fails
  with the command that regenerates it (`make docs`).
- The Sphinx site builds with warnings as errors (what `make docs` runs), into a temporary
  directory: a broken cross-reference, a missing image or a bad directive fails here.
- Every field and constant of every interface file carries a comment.
- README.md is a user's page: at most ~200 lines, no dates, no issue numbers.
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO_DIR = pathlib.Path(__file__).resolve().parents[2]
DOCS_DIR = REPO_DIR / 'docs'
REGENERATE = '`make docs` (or: scripts/with_env.sh python docs/generate.py)'


def _generator():
    if not (DOCS_DIR / 'generate.py').exists():
        pytest.skip(f'{DOCS_DIR} is not here (a package checked out without the repository)')
    spec = importlib.util.spec_from_file_location('docs_generate', DOCS_DIR / 'generate.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_reference_pages_match_the_code():
    generate = _generator()
    pages = generate.generate()
    stale = generate.stale(pages)
    assert not stale, (
        'generated documentation is stale (the code changed, the page did not): '
        + ', '.join(str(path.relative_to(REPO_DIR)) for path in stale)
        + f'; regenerate with {REGENERATE} and commit the result')


def test_every_interface_field_and_constant_is_commented():
    generate = _generator()
    silent = [f'{item.full_name}: {line.name}' for item in generate.interfaces()
              for section in item.sections for line in section.lines if not line.comment]
    assert not silent, ('interface definitions without a comment (say what the field holds, '
                        'its units or allowed values): ' + ', '.join(silent))
    undescribed = [item.full_name for item in generate.interfaces() if not item.description]
    assert not undescribed, f'interfaces without a leading comment: {undescribed}'


def test_the_docs_build_without_a_warning(tmp_path):
    _generator()
    for module in ('sphinx', 'myst_parser', 'furo', 'sphinxarg', 'matplotlib'):
        pytest.importorskip(module, reason='the documentation tools (requirements.txt)')
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    run = subprocess.run(
        [sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b', 'html',
         '-d', str(tmp_path / 'doctrees'), str(DOCS_DIR), str(tmp_path / 'html')],
        capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, (
        f'the documentation does not build cleanly (make docs):\n{run.stdout}{run.stderr}')
    index = (tmp_path / 'html' / 'index.html').read_text(encoding='utf-8')
    assert 'lerobot_tools_ros' in index
    cli = (tmp_path / 'html' / 'reference' / 'cli.html').read_text(encoding='utf-8')
    assert 'bringup' in cli and '--output-dir' in cli, 'the CLI reference lost its commands'
    for plot in ('ratios', 'distributions', 'streaming', 'cancel'):
        assert (tmp_path / 'html' / '_images' / f'{plot}.png').exists(), plot


def test_the_readme_is_short_and_has_no_dated_text():
    readme = REPO_DIR / 'README.md'
    if not readme.exists():
        pytest.skip('README.md is not here (a package checked out without the repository)')
    lines = readme.read_text(encoding='utf-8').splitlines()
    assert len(lines) <= 210, f'README.md has {len(lines)} lines; keep it under ~200'
    dated = [line for line in lines if re.search(r'\b20\d\d-\d\d(-\d\d)?\b', line)]
    assert not dated, f'README.md holds dates (run logs belong in docs/design): {dated}'
    issues = [line for line in lines if re.search(r'\b[Ii]ssues? \d+|#\d+\b', line)]
    assert not issues, f'README.md names issue numbers: {issues}'
    assert lines[0].startswith('# ')
    # The two fresh-machine commands come first (and .ci/run runs `make test`).
    first_block = '\n'.join(lines[:12])
    assert 'make run' in first_block and 'make test' in first_block
