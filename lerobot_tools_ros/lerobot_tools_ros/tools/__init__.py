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
Tool implementations and the registry that maps catalog names to them.

The catalog (``meta/info.json["tools"]``) says which tools a dataset declares; this registry says
which of them this process can run. Three ways a class gets registered:

- built-ins: one line in ``_BUILTIN_TOOLS`` (``name -> 'module:Class'``). Modules are imported
  only when a tool is requested, so a missing optional dependency of one tool (pocket-tts for
  ``say``) never breaks the others or the import of this package.
- third-party packages: the entry-point group ``lerobot_tools_ros.tools``
  (``name = package.module:ToolClass``), scanned at first use. No change to this package needed.
- in-process: ``register_tool`` (decorator or function).

``get_tools(catalog_or_meta)`` then instantiates one object per catalog tool, mirroring LeRobot's
planned ``get_tools(meta)``.
"""

from collections.abc import Mapping
import importlib
import importlib.metadata
import logging
import threading
from typing import Any, Callable, Iterator

from lerobot_tools_ros.catalog import TOOL_NAME_PATTERN, ToolCatalog
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.tools.base import declared_parameters, Tool, ToolParameter

__all__ = [
    'ENTRY_POINT_GROUP', 'TOOL_REGISTRY', 'Tool', 'ToolLoadError', 'ToolParameter', 'ToolRegistry',
    'ToolSet', 'get_tools', 'register_tool', 'reload_entry_points',
]

_LOG = logging.getLogger('lerobot_tools_ros.tools')

ENTRY_POINT_GROUP = 'lerobot_tools_ros.tools'

# Adding a built-in tool: one new file in this package plus one line here.
_BUILTIN_TOOLS: dict[str, str] = {
    'echo': 'lerobot_tools_ros.tools.echo:EchoTool',
    'say': 'lerobot_tools_ros.tools.say:SayTool',
    'record_observation': 'lerobot_tools_ros.tools.record_observation:RecordObservationTool',
}


class ToolLoadError(ConfigurationError):
    """A registered tool that cannot be imported or constructed; names the tool and the cause."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(message)
        self.tool = tool
        self.message = message


class _LazyTool:
    """A tool class known by import path only, imported on first request."""

    def __init__(self, target: str, origin: str, entry_point: Any = None) -> None:
        self.target = target
        self.origin = origin
        self.entry_point = entry_point

    def load(self, name: str) -> type:
        module_name, _, attribute = self.target.partition(':')
        try:
            if self.entry_point is not None:
                obj = self.entry_point.load()
            else:
                obj = importlib.import_module(module_name)
                for part in attribute.split('.') if attribute else []:
                    obj = getattr(obj, part)
        except ImportError as exc:
            raise ToolLoadError(name, f'tool {name!r} ({self.origin}): cannot import module '
                                      f'{module_name!r}: {type(exc).__name__}: {exc}') from exc
        except AttributeError as exc:
            raise ToolLoadError(name, f'tool {name!r} ({self.origin}): module {module_name!r} '
                                      f'has no {attribute!r}: {exc}') from exc
        except Exception as exc:  # noqa: B902 - module-level code of a plugin may raise anything
            raise ToolLoadError(name, f'tool {name!r} ({self.origin}): importing '
                                      f'{self.target!r} failed: {type(exc).__name__}: '
                                      f'{exc}') from exc
        if not callable(obj):
            raise ToolLoadError(name, f'tool {name!r} ({self.origin}): {self.target!r} is not a '
                                      'class or callable')
        return obj


def _qualified(cls: Any) -> str:
    return f'{getattr(cls, "__module__", "?")}:{getattr(cls, "__qualname__", repr(cls))}'


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        raise ValueError(f'tool name {name!r} must match ^{TOOL_NAME_PATTERN.pattern}$')
    return name


class ToolRegistry(Mapping):
    """
    Tool name -> class; built-ins and entry points are imported only when looked up.

    ``name in TOOL_REGISTRY`` and iteration never import tool modules; ``TOOL_REGISTRY[name]``
    does, and raises ``ToolLoadError`` (naming the module and the ``ImportError``) when that
    fails, or ``KeyError`` for a name nobody registered.
    """

    def __init__(self, builtins: dict[str, str], group: str = ENTRY_POINT_GROUP) -> None:
        self._group = group
        self._lock = threading.RLock()
        self._builtins = {name: _LazyTool(target, 'built-in') for name, target in builtins.items()}
        self._classes: dict[str, Any] = {}
        self._origins: dict[str, str] = {}
        self._entry_points: dict[str, _LazyTool] = {}
        self._discovered = False
        self._problems: list[str] = []

    # ------------------------------------------------------------------------------ mapping
    def __getitem__(self, name: str) -> Any:
        with self._lock:
            if name in self._classes:
                return self._classes[name]
            lazy = self._builtins.get(name)
            if lazy is None:
                self._discover()
                lazy = self._entry_points.get(name)
            if lazy is None:
                raise KeyError(name)
            cls = lazy.load(name)
            self._classes[name] = cls
            self._origins[name] = lazy.origin
            return cls

    def __contains__(self, name: object) -> bool:
        with self._lock:
            if name in self._classes or name in self._builtins:
                return True
            self._discover()
            return name in self._entry_points

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            self._discover()
            names = dict.fromkeys([*self._builtins, *self._classes, *self._entry_points])
        return iter(list(names))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f'ToolRegistry({list(self)!r})'

    # ------------------------------------------------------------------------------ queries
    def origin(self, name: str) -> str:
        """Say where ``name`` comes from: built-in, an entry point, or ``register_tool``."""
        with self._lock:
            if name in self._origins:
                return self._origins[name]
            if name in self._builtins:
                return self._builtins[name].origin
            self._discover()
            if name in self._entry_points:
                return self._entry_points[name].origin
        raise KeyError(name)

    @property
    def problems(self) -> list[str]:
        """Entry points that were ignored (name clashes, bad names), for diagnostics."""
        with self._lock:
            self._discover()
            return list(self._problems)

    # ------------------------------------------------------------------------------ changes
    def register(self, name: str, cls: Any, *, replace: bool = False) -> Any:
        """Register ``cls`` under ``name``; a different class under a taken name is an error."""
        _check_name(name)
        if not callable(cls):
            raise TypeError(f'tool {name!r}: {cls!r} is not a class or callable')
        with self._lock:
            existing = self._classes.get(name)
            lazy = self._builtins.get(name) or self._entry_points.get(name)
            if not replace:
                if existing is not None and existing is not cls:
                    raise ValueError(f'tool name {name!r} is already registered to '
                                     f'{_qualified(existing)}; cannot register '
                                     f'{_qualified(cls)} (pass replace=True to override)')
                if existing is None and lazy is not None and lazy.target != _qualified(cls):
                    raise ValueError(f'tool name {name!r} is already taken by {lazy.target} '
                                     f'({lazy.origin}); cannot register {_qualified(cls)} '
                                     '(pass replace=True to override)')
            self._classes[name] = cls
            self._origins[name] = f'registered ({_qualified(cls)})'
        return cls

    def unregister(self, name: str) -> None:
        """Forget an explicit registration (built-ins stay available by import path)."""
        with self._lock:
            self._classes.pop(name, None)
            self._origins.pop(name, None)

    def refresh(self) -> None:
        """Forget discovered entry points so the next lookup rescans installed distributions."""
        with self._lock:
            for name, lazy in self._entry_points.items():
                if self._origins.get(name) == lazy.origin:
                    self._classes.pop(name, None)
                    self._origins.pop(name, None)
            self._entry_points = {}
            self._problems = []
            self._discovered = False
        importlib.invalidate_caches()

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        try:
            found = importlib.metadata.entry_points(group=self._group)
        except Exception as exc:  # noqa: B902 - broken metadata must not break built-in tools
            self._problems.append(f'cannot read entry points {self._group!r}: {exc}')
            _LOG.warning('cannot read entry points %r: %s', self._group, exc)
            return
        for entry_point in found:
            dist = getattr(entry_point, 'dist', None)
            dist_name = getattr(getattr(dist, 'metadata', None), 'get', lambda _k: None)('Name')
            origin = f'entry point {entry_point.name} = {entry_point.value}'
            if dist_name:
                origin += f' from {dist_name}'
            problem = None
            if not TOOL_NAME_PATTERN.fullmatch(entry_point.name):
                problem = f'invalid tool name (must match ^{TOOL_NAME_PATTERN.pattern}$)'
            elif entry_point.name in self._builtins or entry_point.name in self._classes:
                problem = 'name already taken by a built-in or registered tool; ignored'
            elif entry_point.name in self._entry_points:
                first = self._entry_points[entry_point.name]
                if first.target == entry_point.value:
                    continue  # the same distribution seen twice on sys.path
                problem = f'name already provided by {first.origin}; ignored'
            if problem:
                self._problems.append(f'{origin}: {problem}')
                _LOG.warning('%s: %s', origin, problem)
                continue
            self._entry_points[entry_point.name] = _LazyTool(entry_point.value, origin,
                                                             entry_point)


TOOL_REGISTRY = ToolRegistry(_BUILTIN_TOOLS)


def reload_entry_points() -> None:
    """Rescan the ``lerobot_tools_ros.tools`` entry points (after installing a plugin)."""
    TOOL_REGISTRY.refresh()


def register_tool(cls_or_name: Any = None, cls: Any = None, *, name: str | None = None,
                  replace: bool = False) -> Any:
    """
    Register a tool class in ``TOOL_REGISTRY``; usable as a decorator or a function.

    ``@register_tool('wave')``, ``@register_tool(name='wave')``, ``register_tool('wave',
    WaveTool)``, or ``@register_tool`` on a class with a string ``name`` class attribute.
    Registering a different class under a taken name raises ``ValueError`` unless
    ``replace=True``.
    """
    if isinstance(cls_or_name, str):
        if name is not None and name != cls_or_name:
            raise TypeError(f'register_tool got two names: {cls_or_name!r} and {name!r}')
        name, target = cls_or_name, cls
    else:
        if cls is not None:
            raise TypeError('register_tool(cls, cls) is ambiguous; pass the name first')
        target = cls_or_name

    def decorate(tool_class: Any) -> Any:
        tool_name = name if name is not None else getattr(tool_class, 'name', None)
        if not isinstance(tool_name, str):
            raise TypeError(f'cannot tell the tool name of {_qualified(tool_class)}: use '
                            "@register_tool('name') or give the class a string 'name' attribute")
        return TOOL_REGISTRY.register(tool_name, tool_class, replace=replace)

    if target is None:
        return decorate
    return decorate(target)


class ToolSet(dict):
    """``{name: tool instance}`` plus ``unimplemented``: catalog tools with no registered class."""

    def __init__(self, tools: dict | None = None, unimplemented: list[str] | None = None,
                 catalog: ToolCatalog | None = None) -> None:
        super().__init__(tools or {})
        self.unimplemented: list[str] = list(unimplemented or [])
        self.catalog = catalog

    def close(self) -> None:
        """Call each tool's optional ``close`` hook; one failing tool does not stop the rest."""
        for name, tool in self.items():
            close = getattr(tool, 'close', None)
            if callable(close):
                try:
                    close()
                except Exception:  # noqa: B902 - shutdown must reach every tool
                    _LOG.exception('closing tool %r failed', name)


def _as_catalog(catalog_or_meta: Any) -> ToolCatalog:
    if isinstance(catalog_or_meta, ToolCatalog):
        return catalog_or_meta
    if isinstance(catalog_or_meta, list):
        return ToolCatalog.from_tools(catalog_or_meta, source='<list>')
    tools = getattr(catalog_or_meta, 'tools', None)
    if tools is None:
        raise TypeError('get_tools needs a ToolCatalog, a list of tool schemas, or an object with '
                        f'a .tools list (LeRobotDatasetMetadata); got {type(catalog_or_meta)!r}')
    source = f'<{type(catalog_or_meta).__name__}.tools>'
    if isinstance(tools, tuple):
        tools = list(tools)
    return ToolCatalog.from_tools(tools, source=source)


def get_tools(catalog_or_meta: Any, /, **kwargs: Mapping[str, Any]) -> ToolSet:
    """
    Instantiate every catalog tool that has a registered implementation.

    ``catalog_or_meta`` is a ``ToolCatalog``, a list of tool schemas, or any object with a
    ``.tools`` list (LeRobot's ``LeRobotDatasetMetadata``); raw lists are validated like a
    catalog. Keyword arguments are per-tool constructor arguments keyed by tool name, e.g.
    ``get_tools(catalog, say={'backend': 'espeak_ng'})`` calls ``SayTool(schema,
    backend='espeak_ng')``. Catalog tools without an implementation are logged at WARNING and
    listed in ``result.unimplemented``. A tool whose module fails to import raises
    ``ToolLoadError``.
    """
    catalog = _as_catalog(catalog_or_meta)
    for tool_name, params in kwargs.items():
        if not isinstance(params, Mapping):
            raise TypeError(f'get_tools({tool_name}=...) must be a dict of constructor '
                            f'arguments, got {type(params).__name__}')
        if tool_name not in catalog:
            _LOG.warning('get_tools: arguments given for %r, which is not in catalog %s',
                         tool_name, catalog.source)
    instances: dict[str, Any] = {}
    unimplemented: list[str] = []
    for tool_name in catalog.names:
        if tool_name not in TOOL_REGISTRY:
            unimplemented.append(tool_name)
            continue
        tool_class = TOOL_REGISTRY[tool_name]
        if isinstance(tool_class, type):
            declared_parameters(tool_class)
        params = dict(kwargs.get(tool_name, {}))
        try:
            instance = tool_class(catalog.schema(tool_name), **params)
        except Exception as exc:  # noqa: B902 - report which tool failed and why
            raise ToolLoadError(tool_name, f'tool {tool_name!r}: {_qualified(tool_class)}'
                                           f'(schema, **{params!r}) failed: '
                                           f'{type(exc).__name__}: {exc}') from exc
        problem = _protocol_problem(instance, tool_name)
        if problem:
            raise ToolLoadError(tool_name, f'tool {tool_name!r}: {_qualified(tool_class)} '
                                           f'{problem}')
        instances[tool_name] = instance
    if unimplemented:
        _LOG.warning('catalog %s declares tools with no implementation: %s (registered: %s)',
                     catalog.source, ', '.join(unimplemented), ', '.join(TOOL_REGISTRY))
    return ToolSet(instances, unimplemented, catalog)


def _protocol_problem(instance: Any, name: str) -> str | None:
    if getattr(instance, 'name', None) != name:
        return (f"instance has name {getattr(instance, 'name', None)!r}, expected {name!r} "
                "(take it from schema['function']['name'])")
    if not isinstance(getattr(instance, 'schema', None), dict):
        return 'instance has no dict attribute "schema"'
    call: Callable | None = getattr(instance, 'call', None)
    if not callable(call):
        return 'instance has no call(arguments) method'
    return None
