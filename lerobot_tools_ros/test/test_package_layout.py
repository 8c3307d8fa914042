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

"""The map of the package in docs/design/layout.md lists exactly what the package holds."""

import pathlib
import re

TEST_DIR = pathlib.Path(__file__).resolve().parent
SOURCE = TEST_DIR.parent / 'lerobot_tools_ros'
MAP = TEST_DIR.parents[1] / 'docs' / 'design' / 'layout.md'


def _tree() -> set[str]:
    entries = set()
    for path in SOURCE.iterdir():
        if path.name.startswith(('_', '.')):
            continue
        if path.is_dir():
            entries.add(path.name + '/')
        elif path.suffix == '.py':
            entries.add(path.name)
    return entries


def _mapped() -> list[str]:
    return re.findall(r'^\| `([^`]+)` \|', MAP.read_text(encoding='utf-8'), re.MULTILINE)


def test_the_map_lists_every_folder_and_module_of_the_package_once():
    mapped = _mapped()
    assert len(mapped) == len(set(mapped)), 'an entry is listed twice'
    assert set(mapped) == _tree(), (
        f'docs/design/layout.md is out of step with the package: missing '
        f'{sorted(_tree() - set(mapped))}, not in the package {sorted(set(mapped) - _tree())}')


def test_the_folders_name_capabilities_and_nodes_holds_only_entry_points():
    nodes = {path.stem for path in (SOURCE / 'nodes').glob('*.py')}
    executables = {'dispatcher', 'tool_server', 'speaker', 'mcp_server', 'replay',
                   'demo_camera', 'demo_gripper', 'scripted_policy'}
    assert nodes - executables == {'__init__', 'entry', 'runner', 'managed_node', 'params'}
    for name in executables & nodes:
        body = (SOURCE / 'nodes' / f'{name}.py').read_text(encoding='utf-8')
        code = [line for line in body.split('"""')[2].splitlines()
                if line.strip() and not line.startswith('#')]
        assert len(code) <= 6, f'nodes/{name}.py holds more than an entry point: {code}'


def test_no_code_test_or_doc_names_a_ticket():
    """Comments, docstrings and pages say what the code does and why, not which ticket asked."""
    root = TEST_DIR.parents[1]
    ticket = re.compile(r'\b[Ii]ssues? #?\d+\b')
    found = []
    for folder in ('lerobot_tools_ros', 'lerobot_tools_interfaces', 'bench', 'docs', 'scripts'):
        for path in (root / folder).rglob('*'):
            parts = path.relative_to(root).parts
            if path.suffix not in ('.py', '.md', '.msg', '.srv', '.action', '.yaml', '.sh') \
                    or any(part.startswith(('_build', '_generated', 'build', 'install', 'log'))
                           for part in parts):
                continue
            for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
                if ticket.search(line):
                    found.append(f'{path.relative_to(root)}:{number}')
    assert found == []
