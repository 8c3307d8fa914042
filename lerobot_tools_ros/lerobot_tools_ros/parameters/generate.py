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
Write what is generated from the parameter declarations: parameters file and reference.

`lerobot-tools-ros params --yaml > config/lerobot_tools.yaml` writes the file every launch file
and `bringup` start from; `--reference` writes the reference page (Markdown). A test fails when
the packaged file differs from what this module writes, so the declarations, the file and the
reference cannot drift apart.
"""

import json
import textwrap
from typing import Any, Iterable

from lerobot_tools_ros.parameters.declarations import (
    dispatcher_tool_spec, NODES, PER_TOOL_DEFAULTS, PER_TOOL_SETTINGS)
from lerobot_tools_ros.parameters.spec import ParameterSpec

__all__ = ['node_parameters', 'reference', 'yaml_file']

# The nodes the packaged file configures, in this order; the demo ones last.
RUNTIME_NODES = ('dispatcher', 'tool_server', 'speaker', 'mcp_server')
DEMO_NODES = ('demo_camera', 'demo_gripper', 'scripted_policy', 'replay')
_WIDTH = 99

_HEADER = """\
# Parameters of every node of lerobot_tools_ros, each at its default: what a node uses when it
# starts without this file. GENERATED from the declarations (lerobot_tools_ros/parameters/
# declarations.py and each tool class's PARAMETERS) by `lerobot-tools-ros params --yaml`; a test
# fails when it is stale, so do not edit it here: copy it and change the copy, or override single
# values (`-p name:=value`, launch arguments). Keys use /** so they match in any namespace.
# `ros2 param describe <node> <name>` shows each description; a read-only parameter says why it
# cannot change while its node runs, every other one takes effect when set.
"""


def _hosted_tool_specs(tools: Iterable[str]) -> list[ParameterSpec]:
    """Return tool.<name>.<param> of each registered tool in `tools` (tool_server)."""
    from lerobot_tools_ros.tools import TOOL_REGISTRY
    from lerobot_tools_ros.tools.base import declared_parameters

    specs = []
    for tool in tools:
        if tool in TOOL_REGISTRY:
            for key, parameter in declared_parameters(TOOL_REGISTRY[tool]).items():
                specs.append(parameter.spec(f'tool.{tool}.{key}'))
    return specs


def node_parameters() -> dict[str, list[ParameterSpec]]:
    """Return every node's parameters with their defaults, tool parameters included."""
    result = {name: list(table.values()) for name, table in NODES.items()}
    result['dispatcher'] += [dispatcher_tool_spec(tool, setting)
                             for tool in PER_TOOL_DEFAULTS for setting in PER_TOOL_SETTINGS]
    result['tool_server'] += _hosted_tool_specs(NODES['tool_server']['tools'].default)
    return result


def _value(value: Any) -> str:
    """Return `value` as YAML in flow style, on one line."""
    import yaml

    text = yaml.safe_dump([value], default_flow_style=True, width=1 << 30,
                          allow_unicode=True).strip()
    return text[1:-1]


def _tree(specs: list[ParameterSpec]) -> dict:
    """Nest specs by the dots in their names, keeping the order of first appearance."""
    tree: dict = {}
    for spec in specs:
        node = tree
        *parents, leaf = spec.name.split('.')
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = spec
    return tree


def _emit(tree: dict, indent: int, lines: list[str]) -> None:
    pad = ' ' * indent
    for key, item in tree.items():
        if isinstance(item, dict):
            lines.append(f'{pad}{key}:')
            _emit(item, indent + 2, lines)
            continue
        lines.extend(textwrap.wrap(item.full_description(), _WIDTH - indent - 2,
                                   initial_indent=f'{pad}# ', subsequent_indent=f'{pad}# ',
                                   break_on_hyphens=False))
        if isinstance(item.default, list) and any('\n' in text for text in item.default):
            lines.append(f'{pad}{key}:')  # one item a line, newlines escaped
            lines.extend(f'{pad}  - {json.dumps(text, ensure_ascii=False)}'
                         for text in item.default)
        else:
            lines.append(f'{pad}{key}: {_value(item.default)}')


def yaml_file() -> str:
    """Return the packaged parameters file (config/lerobot_tools.yaml)."""
    parameters = node_parameters()
    lines = [_HEADER.rstrip('\n')]
    for node in (*RUNTIME_NODES, *DEMO_NODES):
        if node == DEMO_NODES[0]:
            lines += ['', '# -- demo nodes (demo.launch.py, bringup --demo) ' + '-' * 50]
        lines += ['', f'/**/{node}:', '  ros__parameters:']
        _emit(_tree(parameters[node]), 4, lines)
    return '\n'.join(lines) + '\n'


def _cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def reference() -> str:
    """Return the parameter reference as Markdown: one table per node."""
    lines = ['# Parameters', '',
             'Generated from the declarations by `lerobot-tools-ros params --reference`. '
             'Defaults are those of `config/lerobot_tools.yaml`. *live*: takes effect when set '
             '(`ros2 param set`); *read-only*: fixed while the node runs, for the reason given.',
             '']
    for node, specs in node_parameters().items():
        lines += [f'## {node}', '', '| parameter | type | default | rules | when set | '
                  'description |', '|---|---|---|---|---|---|']
        for spec in specs:
            kinds = ' or '.join((spec.kind, *spec.also))
            mode = f'read-only: {spec.read_only}' if spec.read_only else 'live'
            lines.append(f'| `{spec.name}` | {kinds} | `{_cell(_value(spec.default))}` | '
                         f'{_cell(spec.constraints())} | {_cell(mode)} | '
                         f'{_cell(spec.description)} |')
        lines.append('')
    lines += ['The dispatcher declares `tool.<name>.<setting>` for every catalog tool '
              f'({", ".join(PER_TOOL_SETTINGS)}); a tool the table does not list gets -1 '
              '(the global value) for its limits, approval `auto` and no repeat window. '
              'tool_server declares the parameters of each tool it hosts.', '']
    return '\n'.join(lines)
