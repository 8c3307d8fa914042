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
The shell examples of the README and the documentation run as written.

Every ```` ```bash ```` block of README.md, docs/tutorial.md, docs/install.md,
docs/performance.md and docs/guides/*.md is run, in order, file by file, in a copy of the
workspace layout (the repository's files linked into a temporary directory, with an empty
``output/``), with the package's commands on PATH, in a DDS domain of this test's own. A renamed
topic, flag or command therefore fails here, not in a user's terminal.

A block is tagged by an HTML comment on the line before it:

- ``<!-- example: background ... -->``: started and left running while the file's next blocks
  run (a "first terminal"), then stopped with Ctrl-C; it must still be running by then;
- ``<!-- example: needs ros2 ... -->``, ``needs sound``, ``needs network``: skipped here (the
  ros2 and launch command lines are not installed, nor a sound card or a network);
- ``<!-- example: self ... -->``: the commands that bootstrap the machine or run this very
  suite (``make run``, ``make test``), skipped; ``long`` (every benchmark) and ``placeholder``
  (a block holding a value to fill in, such as a call id) are skipped too;
- anything else (or no tag) runs, and must exit 0.
"""

import dataclasses
import os
import pathlib
import re
import signal
import subprocess
import sys

import pytest

REPO_DIR = pathlib.Path(__file__).resolve().parents[2]
DOCS_DIR = REPO_DIR / 'docs'
PAGES = ['README.md', 'docs/tutorial.md', 'docs/install.md', 'docs/performance.md',
         *sorted(f'docs/guides/{p.name}' for p in (DOCS_DIR / 'guides').glob('*.md'))]
SKIP_TAGS = {'self': 'bootstraps the machine or runs this suite',
             'needs ros2': 'needs the ros2 / launch command lines (a ROS 2 install)',
             'needs sound': 'needs a sound card', 'needs network': 'needs a network',
             'long': 'takes many minutes (every benchmark)',
             'placeholder': 'holds placeholders to fill in (an id, a path)'}
_FENCE = re.compile(r'^```+\s*([^\s`]*)')  # the info string's first word
_TAG = re.compile(r'^<!--\s*example:\s*(.*?)\s*-->\s*$')
BLOCK_TIMEOUT_S = 300


@dataclasses.dataclass
class Block:
    """One fenced shell block and how it is tagged."""

    page: str
    line: int
    tag: str
    code: str

    @property
    def skip_reason(self) -> str:
        for tag, reason in SKIP_TAGS.items():
            if self.tag.startswith(tag):
                return reason
        return ''

    @property
    def background(self) -> bool:
        return self.tag.startswith('background')


def blocks(page: str) -> list[Block]:
    """Return the bash blocks of `page` with their tags."""
    found, lines = [], (REPO_DIR / page).read_text(encoding='utf-8').splitlines()
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        end = next((i for i in range(index + 1, len(lines)) if lines[i].startswith('```')),
                   len(lines))
        if fence.group(1) in ('bash', 'sh', 'shell'):
            before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), '')
            tag = _TAG.match(before)
            found.append(Block(page, index + 1, tag.group(1) if tag else '',
                               '\n'.join(lines[index + 1:end]) + '\n'))
        index = end + 1
    return found


def _workspace(tmp_path: pathlib.Path) -> pathlib.Path:
    """Link the repository's files into a fresh directory whose output/ is empty."""
    ws = tmp_path / 'ws'
    ws.mkdir()
    for entry in REPO_DIR.iterdir():
        if entry.name not in ('output', '.git'):
            (ws / entry.name).symlink_to(entry)
    return ws


def _commands(tmp_path: pathlib.Path) -> pathlib.Path:
    """Make a bin directory with python3/python and the package's commands, as env.sh does."""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    # Scripts, not symlinks: a venv's python finds its venv from the path it was started as.
    commands = {'python3': '', 'python': '', 'lerobot-tools-ros': ' -m lerobot_tools_ros.cli'}
    for name, args in commands.items():
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {sys.executable}{args} "$@"\n')
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_every_example_block_is_tagged_with_a_known_tag():
    for page in PAGES:
        for block in blocks(page):
            assert (not block.tag or block.skip_reason or block.background
                    or block.tag.startswith('runs')), (
                f'{page}:{block.line}: unknown example tag {block.tag!r}')


@pytest.mark.parametrize('page', PAGES)
def test_the_shell_examples_run_as_written(page, ros_env, tmp_path):
    page_blocks = blocks(page)
    runnable = [block for block in page_blocks if not block.skip_reason]
    if not runnable:
        pytest.skip(f'{page}: every block is tagged ('
                    + '; '.join(f'line {b.line}: {b.skip_reason}' for b in page_blocks) + ')')
    ws = _workspace(tmp_path)
    env = dict(ros_env, HOME=str(tmp_path / 'home'))
    env['PATH'] = f'{_commands(tmp_path)}{os.pathsep}{env.get("PATH", "")}'
    background = []
    try:
        for number, block in enumerate(runnable):
            script = tmp_path / f'block{number}.sh'
            script.write_text('set -eo pipefail\n' + block.code)
            log = tmp_path / f'block{number}.log'
            if block.background:
                with open(log, 'wb') as out:
                    proc = subprocess.Popen(['bash', str(script)], cwd=ws, env=env, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)
                background.append((block, proc, log))
                continue
            run = subprocess.run(['bash', str(script)], cwd=ws, env=env, capture_output=True,
                                 text=True, timeout=BLOCK_TIMEOUT_S)
            context = ''.join(f'\n--- background {b.page}:{b.line}:\n'
                              + path.read_text(errors='replace')[-3000:]
                              for b, _, path in background)
            assert run.returncode == 0, (
                f'{page}:{block.line}: the example failed (exit {run.returncode}):\n'
                f'{block.code}\n--- output:\n{run.stdout[-3000:]}{run.stderr[-3000:]}{context}')
        for block, proc, log in background:
            assert proc.poll() is None, (
                f'{page}:{block.line}: the background example ended early '
                f'(exit {proc.returncode}):\n{log.read_text(errors="replace")[-3000:]}')
    finally:
        for _, proc, _ in background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)
