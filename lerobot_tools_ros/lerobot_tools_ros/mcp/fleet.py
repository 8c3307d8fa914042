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
A fleet behind one MCP endpoint: how robots are named, and how their tools and resources are.

Pure (no ROS, no SDK). A robot is a ROS namespace holding a dispatcher (``/robot_a`` runs
``/robot_a/dispatcher``). Its *label* is the namespace without its leading slash, nested segments
joined with ``-`` (``/site1/robot_a`` -> ``site1-robot_a``): ROS names never contain ``-`` or
``.``, so two namespaces never share a label. A tool is offered as ``<label>.<tool>``
(``robot_a.say``); MCP tool names are 1-128 characters of ``A-Z a-z 0-9 _ - .``, which every
label and catalog tool name is made of, so the only name that can break the rule is one longer
than 128 characters: it is left out, with a warning. The label never contains ``.``, so the name
splits at its first dot. A robot's resources sit under ``lerobot-tools://robots/<label>/``.
"""

import re

# What MCP allows in a tool name (the SDK's own check: mcp.shared.tool_name_validation).
MCP_TOOL_NAME = re.compile(r'[A-Za-z0-9._-]{1,128}')
_ROS_SEGMENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
SEPARATOR = '.'
SCHEME = 'lerobot-tools://'
ROBOTS_PREFIX = SCHEME + 'robots/'


class RobotNameError(ValueError):
    """A robot namespace that cannot be served (the message says why)."""


def robot_namespace(text: str) -> str:
    """Return the absolute ROS namespace ``text`` names (``robot_a`` -> ``/robot_a``)."""
    stripped = text.strip().strip('/')
    segments = stripped.split('/') if stripped else []
    if not segments:
        raise RobotNameError(f'robot {text!r}: a robot is a ROS namespace such as robot_a '
                             '(the root namespace is the single-robot server)')
    for segment in segments:
        if not _ROS_SEGMENT.fullmatch(segment):
            raise RobotNameError(
                f'robot {text!r}: {segment!r} is not a ROS name segment (letters, digits and '
                '_, not starting with a digit)')
    return '/' + '/'.join(segments)


def robot_label(namespace: str) -> str:
    """Return the label of the robot in ``namespace``: what its tools and resources start with."""
    return robot_namespace(namespace).strip('/').replace('/', '-')


def parse_robots(entries: list[str]) -> list[str]:
    """
    Return the namespaces of ``entries`` (each may hold several, comma-separated), in order.

    Raises ``RobotNameError`` for a bad name or a robot named twice.
    """
    namespaces: list[str] = []
    for entry in entries:
        for part in str(entry).split(','):
            if not part.strip():
                continue
            namespace = robot_namespace(part)
            if namespace in namespaces:
                raise RobotNameError(f'robot {namespace} is named twice')
            namespaces.append(namespace)
    return namespaces


def dispatcher_namespaces(nodes: list[tuple[str, str]], dispatcher: str) -> list[str]:
    """
    Return the namespaces in which a node named ``dispatcher`` runs (sorted; root left out).

    ``nodes``: the graph's (name, namespace) pairs. The root namespace's dispatcher is a single
    robot's, not a fleet member: it has no label.
    """
    found = set()
    for name, namespace in nodes:
        if name != dispatcher or namespace.strip('/') == '':
            continue
        try:
            found.add(robot_namespace(namespace))
        except RobotNameError:
            continue
    return sorted(found)


def scoped_name(label: str, tool: str) -> str | None:
    """Return ``<label>.<tool>``; None when that is no valid MCP tool name (too long)."""
    name = f'{label}{SEPARATOR}{tool}'
    return name if MCP_TOOL_NAME.fullmatch(name) else None


def split_scoped(name: str) -> tuple[str, str] | None:
    """Split ``<label>.<tool>`` into (label, tool); None when it has no robot part."""
    label, dot, tool = name.partition(SEPARATOR)
    if not dot or not label or not tool:
        return None
    return label, tool


def scoped_title(label: str, title: str | None) -> str | None:
    """Return a tool's title with its robot (what a host shows a user)."""
    return f'{title} ({label})' if title else None


def scoped_description(label: str, description: str) -> str:
    """Return a tool's description, starting with the robot it acts on."""
    return f'[robot {label}] {description}'


def scoped_uri(label: str, uri: str) -> str:
    """Return a robot's own resource URI (``lerobot-tools://catalog``) under its robot."""
    if not uri.startswith(SCHEME):
        return uri
    return f'{ROBOTS_PREFIX}{label}/{uri[len(SCHEME):]}'


def split_uri(uri: str) -> tuple[str, str] | None:
    """Split a robot-scoped URI into (label, the robot's own URI); None if it names no robot."""
    if not uri.startswith(ROBOTS_PREFIX):
        return None
    label, slash, rest = uri[len(ROBOTS_PREFIX):].partition('/')
    if not slash or not label or not rest:
        return None
    return label, SCHEME + rest


def listed_robots(present: dict[str, bool]) -> list[str]:
    """Return the labels whose tools are listed: robots discovered now, in the given order."""
    return [label for label, here in present.items() if here]
