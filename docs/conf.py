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
Sphinx configuration of the lerobot_tools_ros documentation (MyST Markdown, furo).

Build it with `make docs` (regenerates the reference pages, then builds with warnings as
errors). The package is imported from the source tree, so the CLI reference (sphinx-argparse)
and the performance plots (`_ext/benchplots.py`, from `bench/results.jsonl`) need no install;
rosdoc2 builds the same tree (see `lerobot_tools_ros/rosdoc2.yaml`).
"""

import os
import pathlib
import sys


def _docs_dir() -> pathlib.Path:
    """Find this directory, also when a wrapper (rosdoc2) runs this file as its own."""
    candidates = [pathlib.Path(os.environ.get('LEROBOT_DOCS_DIR', '.'))]
    if '__file__' in globals():
        candidates.insert(0, pathlib.Path(__file__).resolve().parent)
    candidates += [parent / 'docs' for parent in (pathlib.Path.cwd(), *pathlib.Path.cwd().parents)]
    return next((path.resolve() for path in candidates if (path / 'generate.py').exists()),
                candidates[0])


DOCS_DIR = _docs_dir()
REPO_DIR = DOCS_DIR.parent
for path in (REPO_DIR / 'lerobot_tools_ros', DOCS_DIR / '_ext'):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

project = 'lerobot_tools_ros'
author = 'lerobot_tools_ros contributors'
copyright = '2026, lerobot_tools_ros contributors'  # noqa: A001 (Sphinx's name)

extensions = [
    'myst_parser',
    'sphinxarg.ext',
    'benchplots',
]
source_suffix = {'.md': 'markdown'}
root_doc = 'index'
exclude_patterns = ['_build', '_generated', 'README.md']
myst_enable_extensions = ['colon_fence', 'deflist']
myst_heading_anchors = 3
# Generated tables hold long literal values; nothing in them is a cross-reference.
suppress_warnings = []
nitpicky = False

html_theme = 'furo'
html_title = 'lerobot_tools_ros'
pygments_style = 'sphinx'
