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
Which tools an MCP client is offered, and how each is described.

The list is exactly what the dispatcher would run: the catalog it loaded (its latched
``<dispatcher>/catalog`` message, never the file on disk, which may have changed since), minus the
tools its ``allowed_tools`` leaves out. Hints are only what someone declared or what the runtime
can vouch for (MCP reads an absent ``destructiveHint`` as "may be destructive", so a ``false`` is
a claim): a catalog entry's optional ``annotations`` object, tools bound with ``kind: read``,
the built-in tools (``BUILTIN_HINTS``), the MCP server's own ``read_only_tools`` /
``actuating_tools`` settings, and operator approval (``confirm``/``deny``: destructive).

Optional top-level arguments are listed as nullable (``null`` meaning "the default") and a
``null`` the catalog schema would refuse is dropped before the call: OpenAI's strict mode makes
every property required, so a strict client can only leave an optional out by sending ``null``.
"""

import copy
from dataclasses import dataclass, field
import json
from typing import Any, Callable, Iterable, Mapping

from lerobot_tools_ros import limits, names

# Approval settings (dispatcher parameter tool.<name>.approval) that make a call wait for, or be
# refused by, an operator: such a tool acts on the world.
GATED_APPROVALS = ('confirm', 'deny')
# MCP tool annotations a catalog entry may declare (its optional "annotations" object).
HINTS = ('readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint')
# Built-in tools whose behaviour this package knows. record_observation writes an image and a
# JSON sidecar on every call (not read-only, not idempotent: each call adds files) in its own
# output directory (a closed world); it replaces files only when tool_server's
# tool.record_observation.overwrite allows it (see ``hints_for``). say speaks again on each call.
BUILTIN_HINTS: Mapping[str, Mapping[str, bool]] = {
    'record_observation': {'readOnlyHint': False, 'idempotentHint': False,
                           'openWorldHint': False},
    'say': {'idempotentHint': False},
}
# Built-in tools that replace files when their tool_server setting ``overwrite`` is true.
OVERWRITING_TOOLS = ('record_observation',)


class CatalogMessageError(ValueError):
    """The dispatcher's catalog message cannot be read."""


@dataclass(frozen=True)
class LoadedCatalog:
    """The catalog a dispatcher runs, as its ``<dispatcher>/catalog`` message says."""

    source: str
    entries: tuple[dict, ...]
    executors: Mapping[str, str] = field(default_factory=dict)
    cameras: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        """Tool names in catalog order."""
        return [entry['function']['name'] for entry in self.entries]


def decode_catalog(text: str) -> LoadedCatalog:
    """Read the dispatcher's catalog message (JSON); raise ``CatalogMessageError`` if unusable."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CatalogMessageError(f'the catalog message is not JSON: {exc}') from None
    if not isinstance(data, dict) or not isinstance(data.get('tools'), list):
        raise CatalogMessageError('the catalog message has no "tools" list')
    entries = []
    for entry in data['tools']:
        function = entry.get('function') if isinstance(entry, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get('name'), str) \
                or not isinstance(function.get('parameters'), dict):
            raise CatalogMessageError(f'the catalog message has a malformed entry: '
                                      f'{str(entry)[:200]}')
        entries.append(entry)
    executors = data.get('executors')
    return LoadedCatalog(
        source=str(data.get('source', '')), entries=tuple(entries),
        executors=dict(executors) if isinstance(executors, dict) else {},
        cameras=tuple(str(c) for c in data.get('cameras') or () if isinstance(c, str)),
        problems=tuple(str(p) for p in data.get('problems') or ()))


@dataclass(frozen=True)
class DispatcherView:
    """The dispatcher settings that decide what an MCP client may call."""

    allowed_tools: tuple[str, ...] = ()
    approvals: Mapping[str, str] | None = None      # tool -> auto | confirm | deny
    disabled: frozenset[str] = frozenset()          # tools whose tool.<name>.enabled is false


def view_from_parameters(values: Mapping[str, Any]) -> DispatcherView:
    """
    Build a ``DispatcherView`` from the dispatcher's parameters (name -> value).

    Unset parameters (``None``) mean the defaults: every tool allowed, approval ``auto``,
    enabled.
    """
    allowed = values.get('allowed_tools') or ()
    if list(allowed) == [names.ALL_TOOLS]:  # ['*'] is the dispatcher's "every tool"
        allowed = ()
    approvals: dict[str, str] = {}
    disabled = set()
    for key, value in values.items():
        if not key.startswith('tool.') or value is None:
            continue
        tool, _, setting = key[len('tool.'):].rpartition('.')
        if setting == 'approval' and isinstance(value, str):
            approvals[tool] = value.strip().lower()
        elif setting == 'enabled' and value is False:
            disabled.add(tool)
    return DispatcherView(tuple(str(name) for name in allowed), approvals, frozenset(disabled))


@dataclass(frozen=True)
class McpTool:
    """One catalog tool as an MCP client sees it."""

    name: str
    title: str
    description: str
    input_schema: dict
    annotations: Mapping[str, Any]   # wire names; only hints someone declared or vouched for
    schema: dict                     # the catalog's own argument schema (what ~/call checks)
    executor: str = ''               # the executor's ROS name ('' when unknown)
    available: bool = True           # an executor was seen serving it

    @property
    def read_only(self) -> bool:
        """Return whether the tool is listed with ``readOnlyHint: true``."""
        return self.annotations.get('readOnlyHint') is True

    @property
    def destructive(self) -> bool:
        """Return whether the tool is listed with ``destructiveHint: true``."""
        return self.annotations.get('destructiveHint') is True


def declared_hints(entry: Mapping[str, Any]) -> tuple[dict, list[str]]:
    """
    Return the hints and title a catalog entry declares, and problems with its declaration.

    The optional top-level ``annotations`` object of an entry: ``title`` (a string) and the
    boolean ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``.
    """
    raw = entry.get('annotations')
    if raw is None:
        return {}, []
    name = entry.get('function', {}).get('name', '?')
    if not isinstance(raw, dict):
        return {}, [f'{name}: "annotations" must be an object; ignored']
    hints: dict[str, Any] = {}
    problems = []
    for key, value in raw.items():
        if key in HINTS and isinstance(value, bool):
            hints[key] = value
        elif key == 'title' and isinstance(value, str) and value.strip():
            hints[key] = value.strip()
        else:
            problems.append(f'{name}: annotation {key!r}={value!r} ignored (expected title: '
                            f'string, {", ".join(HINTS)}: true/false)')
    return hints, problems


def default_title(name: str) -> str:
    """Return a display name for a tool that declares none (``say_hello`` -> ``Say hello``)."""
    words = name.replace('_', ' ').replace('-', ' ').replace('.', ' ').split()
    return ' '.join(words).capitalize() if words else name


def hints_for(name: str, entry: Mapping[str, Any], *, approval: str = 'auto',
              read_only: Iterable[str] = (), actuating: Iterable[str] = (),
              overwrite: Mapping[str, bool] | None = None) -> dict:
    """
    Return the annotations (wire names, title included) a tool is listed with.

    ``overwrite``: tool -> its tool_server ``overwrite`` setting, where it was read. A tool that
    replaces files is destructive; one that never does is not; unknown: no claim.
    """
    hints: dict[str, Any] = dict(BUILTIN_HINTS.get(name, {}))
    if name in OVERWRITING_TOOLS and overwrite is not None and name in overwrite:
        hints['destructiveHint'] = bool(overwrite[name])
    if name in set(read_only):
        hints['readOnlyHint'] = True
    if name in set(actuating):
        hints['destructiveHint'] = True
        hints.pop('readOnlyHint', None)
    declared, _ = declared_hints(entry)
    hints.update(declared)
    if approval in GATED_APPROVALS:
        # An operator must decide before it runs: it acts on the world, whatever was declared.
        hints.pop('readOnlyHint', None)
        hints['destructiveHint'] = True
    if hints.get('readOnlyHint') is True:
        hints.pop('destructiveHint', None)  # meaningless for a read-only tool (spec)
    hints.setdefault('title', default_title(name))
    return hints


def accepts_null(schema: Any) -> bool:
    """Return whether a property schema surely accepts ``null`` (conservative: False if unsure)."""
    if not isinstance(schema, dict):
        return schema is True
    kind = schema.get('type')
    if 'enum' in schema and None not in schema['enum']:
        return False
    if 'const' in schema:
        return schema['const'] is None
    if kind is None:
        return not any(k in schema for k in ('anyOf', 'oneOf', 'allOf', 'not', '$ref')) \
            or any(accepts_null(s) for s in schema.get('anyOf', ()))
    return kind == 'null' or (isinstance(kind, list) and 'null' in kind)


def nullable_optionals(schema: dict) -> dict:
    """
    Return a copy of an argument schema whose optional top-level properties also take ``null``.

    OpenAI strict mode makes every property required; ``null`` is then how a model leaves an
    optional one out, and ``drop_null_optionals`` turns it back into "not given" for the call.
    """
    listed = copy.deepcopy(schema)
    properties = listed.get('properties')
    if not isinstance(properties, dict):
        return listed
    required = set(listed.get('required') or ())
    for key, prop in list(properties.items()):
        if key in required or not isinstance(prop, dict) or accepts_null(prop):
            continue
        # anyOf, not "type": [X, "null"]: both are JSON Schema, but strict validators (the MCP
        # Inspector's --strict, some model providers) accept only a single type per schema.
        nullable: dict[str, Any] = {'anyOf': [prop, {'type': 'null'}]}
        for annotation in ('title', 'description'):
            if annotation in prop:
                nullable[annotation] = prop[annotation]
        properties[key] = nullable
    return listed


def drop_null_optionals(arguments: Mapping[str, Any] | None, schema: Mapping[str, Any]
                        ) -> dict:
    """Drop top-level ``null`` arguments for optional properties whose schema refuses null."""
    given = dict(arguments or {})
    properties = schema.get('properties')
    if not isinstance(properties, dict):
        return given
    required = set(schema.get('required') or ())
    for key in [k for k, v in given.items() if v is None]:
        if key in properties and key not in required and not accepts_null(properties[key]):
            del given[key]
    return given


def unavailable_note(executor: str) -> str:
    """Return the sentence put before the description of a tool nobody serves right now."""
    return (f'[Unavailable: no executor serves it at {executor or "its executor name"} right '
            'now; a call waits for one up to its timeout.] ')


def gone_note(dispatcher: str) -> str:
    """Return the sentence put before every description while the robot is not reachable."""
    return (f'[Unavailable: the robot (its dispatcher {dispatcher}) is not reachable right now; '
            'a call is refused until it is back.] ')


def visible_tools(catalog: LoadedCatalog, view: DispatcherView, *,
                  read_only: Iterable[str] = (), actuating: Iterable[str] = (),
                  available: Callable[[str], bool] | None = None,
                  overwrite: Mapping[str, bool] | None = None,
                  gone: str | None = None) -> list[McpTool]:
    """
    List the catalog's tools an MCP client may call, in catalog order.

    A tool outside a non-empty ``allowed_tools`` or with ``enabled`` false is left out (the
    dispatcher would refuse it). ``available(executor)`` tells whether an executor serves the
    tool now; one that does not is still listed, its description saying so. ``gone``: the
    dispatcher that is no longer reachable (every tool is listed as unavailable, saying so).
    """
    allowed = set(view.allowed_tools)
    approvals = dict(view.approvals or {})
    read_only, actuating = set(read_only), set(actuating)
    tools = []
    for entry in catalog.entries:
        function = entry['function']
        name = function['name']
        if (allowed and name not in allowed) or name in view.disabled:
            continue
        hints = hints_for(name, entry, approval=approvals.get(name, 'auto'),
                          read_only=read_only, actuating=actuating, overwrite=overwrite)
        executor = catalog.executors.get(name, '')
        up = True if available is None or not executor else available(executor)
        description = function.get('description', '')
        if gone is not None:
            up, description = False, gone_note(gone) + description
        elif not up:
            description = unavailable_note(executor) + description
        schema = function['parameters']
        tools.append(McpTool(
            name=name, title=hints['title'], description=description,
            input_schema=nullable_optionals(schema), annotations=hints,
            schema=copy.deepcopy(schema), executor=executor, available=up))
    return tools


def read_bindings(text: str) -> frozenset[str]:
    """
    Return the tools a tool_server bindings file binds with ``kind: read`` (read-only tools).

    Only the kinds are looked at; tool_server checks the rest of the file. Text that is not a
    bindings mapping yields nothing.
    """
    import yaml
    try:
        if limits.utf8_size(text, limits.MAX_BINDINGS_BYTES) > limits.MAX_BINDINGS_BYTES:
            return frozenset()
        limits.check_yaml(text)  # depth and alias bombs, as tool_server checks them
        data = yaml.load(text, Loader=limits.yaml_safe_loader())  # noqa: S506 - a SafeLoader
    except (yaml.YAMLError, ValueError, RecursionError):
        return frozenset()
    bindings = data.get('bindings') if isinstance(data, dict) else None
    if not isinstance(bindings, dict):
        return frozenset()
    return frozenset(str(tool) for tool, entry in bindings.items()
                     if isinstance(entry, dict) and entry.get('kind') == 'read')
