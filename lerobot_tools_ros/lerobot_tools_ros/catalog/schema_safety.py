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
Checks that make a valid JSON Schema safe to validate untrusted arguments with.

The meta-schema says a schema is well formed; it does not say that validating a value against
it ends. Three things can make jsonschema (recursive) fail or hang on a call's arguments, and
each is refused when the catalog is loaded, with the schema path and the reason:

- **Reference loops applied in place.** ``{"$defs": {"a": {"$ref": "#/$defs/a"}}}``: every
  value is checked against ``a``, which is checked against ``a``, ... until ``RecursionError``.
  A cycle that only passes through keywords applied to the *same* value (``$ref``,
  ``$dynamicRef``, ``$recursiveRef``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``,
  ``then``, ``else``, ``dependentSchemas``, ``dependencies``) never ends. A recursive schema
  that descends into ``properties``, ``items`` and the like between references is fine: each
  step consumes one level of the value, whose depth is limited (``limits.MAX_ARGUMENT_DEPTH``).
- **References that do not resolve** inside the schema (a missing ``$defs`` entry, an unknown
  anchor, a remote URI): jsonschema raises on the first call that reaches them. Remote schemas
  are never fetched.
- **In-place expansion**: ``allOf`` of two references to a schema that is ``allOf`` of two
  references to ... applies 2^n subschemas to one value. More than ``MAX_IN_PLACE_SCHEMAS``
  subschemas applied in place to one value is refused.

Patterns (``pattern``, ``patternProperties``) are compiled with ``safe_regex`` here, so one
that cannot be matched in bounded time is refused at load too. ``unevaluatedProperties`` in a
schema that also has ``patternProperties`` is refused: jsonschema evaluates those patterns for
it with Python's backtracking ``re``, outside the keywords this package replaces.
"""

from typing import Any
import urllib.parse

from lerobot_tools_ros.catalog import safe_regex

__all__ = ['check_schema_safety', 'MAX_IN_PLACE_SCHEMAS']

MAX_IN_PLACE_SCHEMAS = 256

# Keywords whose value is one subschema / a map of subschemas / a list of subschemas.
_ONE = ('additionalProperties', 'unevaluatedProperties', 'items', 'additionalItems',
        'unevaluatedItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else')
_MAP = ('properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas',
        'dependencies')
_LIST = ('allOf', 'anyOf', 'oneOf', 'prefixItems', 'items')
# Applied to the same value (in place): a cycle through only these never ends.
_IN_PLACE_ONE = ('not', 'if', 'then', 'else')
_IN_PLACE_MAP = ('dependentSchemas', 'dependencies')
_IN_PLACE_LIST = ('allOf', 'anyOf', 'oneOf')
_REF_KEYWORDS = ('$ref', '$dynamicRef', '$recursiveRef')


def _pointer_part(part: Any) -> str:
    return str(part).replace('~', '~0').replace('/', '~1')


class _Schema:
    """Where each subschema of one tool's parameters is, and what it refers to."""

    def __init__(self, root: dict, where: str) -> None:
        self.root = root
        self.where = where
        self.paths: dict[int, str] = {}  # id(subschema) -> JSON pointer
        self.order: list[dict] = []  # every subschema, in the order found
        self.base: dict[int, str] = {}  # id(subschema) -> base URI
        # id(subschema) -> its resource's root (None: a root whose $id is only an anchor)
        self.resource_of: dict[int, dict | None] = {}
        self.resources: dict[str, dict] = {}  # URI (no fragment) -> resource root
        self.anchors: dict[tuple[int, str], dict] = {}  # (id(resource), name) -> subschema
        self.dynamic: dict[str, list[dict]] = {}  # $dynamicAnchor name -> subschemas
        self.recursive_roots: list[dict] = []  # resources with $recursiveAnchor: true
        self._walk(root, '', '', None)

    def label(self, node: dict) -> str:
        path = self.paths.get(id(node), '')
        return f'{self.where}{"#" + path if path else " (root)"}'

    def _walk(self, start: dict, path: str, base: str, resource: dict | None) -> None:
        pending = [(start, path, base, resource)]
        while pending:
            node, path, base, resource = pending.pop()
            if not isinstance(node, dict) or id(node) in self.paths:
                continue
            own_id = node.get('$id')
            if isinstance(own_id, str) and own_id.startswith('#'):  # draft 6/7 anchor form
                self.anchors[(id(resource or node), own_id[1:])] = node
            elif isinstance(own_id, str) or resource is None:
                base = urllib.parse.urljoin(base, own_id or '').split('#')[0]
                resource = node
                self.resources.setdefault(base, node)
                if node.get('$recursiveAnchor') is True:
                    self.recursive_roots.append(node)
            self.paths[id(node)] = path
            self.order.append(node)
            self.base[id(node)] = base
            self.resource_of[id(node)] = resource
            for key in ('$anchor', '$dynamicAnchor'):
                if isinstance(node.get(key), str):
                    self.anchors[(id(resource), node[key])] = node
            if isinstance(node.get('$dynamicAnchor'), str):
                self.dynamic.setdefault(node['$dynamicAnchor'], []).append(node)
            for key in _ONE:
                if isinstance(node.get(key), dict):
                    pending.append((node[key], f'{path}/{_pointer_part(key)}', base, resource))
            for key in _MAP:
                if isinstance(node.get(key), dict):
                    for name, child in node[key].items():
                        pending.append((child, f'{path}/{_pointer_part(key)}/'
                                               f'{_pointer_part(name)}', base, resource))
            for key in _LIST:
                if isinstance(node.get(key), list):
                    for index, child in enumerate(node[key]):
                        pending.append((child, f'{path}/{_pointer_part(key)}/{index}', base,
                                        resource))

    def resolve(self, node: dict, keyword: str) -> list[dict]:
        """Return what ``node[keyword]`` may refer to, or raise ValueError naming the ref."""
        ref = node[keyword]
        if not isinstance(ref, str):
            return []
        if keyword == '$recursiveRef':
            own = self.resource_of[id(node)]  # (None: the root, which comes next)
            return [*([own] if own is not None else []), self.root, *self.recursive_roots]
        full = urllib.parse.urljoin(self.base[id(node)], ref)
        uri, _, fragment = full.partition('#')
        resource = self.resources.get(uri)
        if resource is None:
            raise ValueError(
                f'{self.label(node)}: {keyword} {ref!r} does not resolve inside the schema '
                '(references to other documents are not fetched; put the schema in $defs)')
        fragment = urllib.parse.unquote(fragment)
        target: dict | None
        if not fragment:
            target = resource
        elif fragment.startswith('/'):
            target = self._pointer(resource, fragment, node, keyword, ref)
        else:
            target = self.anchors.get((id(resource), fragment))
            if target is None:
                raise ValueError(f'{self.label(node)}: {keyword} {ref!r}: no $anchor or '
                                 f'$dynamicAnchor {fragment!r} in the schema')
        found = [target]
        if keyword == '$dynamicRef' and not fragment.startswith('/') \
                and target.get('$dynamicAnchor') == fragment:
            found += self.dynamic.get(fragment, [])
        for item in found:
            if isinstance(item, dict) and id(item) not in self.paths:
                # A pointer into a place no keyword marks as a schema: it is one now.
                resource_path = self.paths[id(resource)]
                self._walk(item, resource_path + (fragment if fragment.startswith('/') else ''),
                           self.base[id(resource)], resource)
        return found

    def _pointer(self, resource: dict, fragment: str, node: dict, keyword: str,
                 ref: str) -> Any:
        target: Any = resource
        for raw in fragment[1:].split('/'):
            part = raw.replace('~1', '/').replace('~0', '~')
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                raise ValueError(f'{self.label(node)}: {keyword} {ref!r}: nothing at that '
                                 'pointer in the schema')
        if not isinstance(target, (dict, bool)):
            raise ValueError(f'{self.label(node)}: {keyword} {ref!r} points to a '
                             f'{type(target).__name__}, not a schema')
        return target


def _in_place_children(schema: _Schema, node: dict) -> list[tuple[str, dict]]:
    children: list[tuple[str, Any]] = []
    for key in _IN_PLACE_ONE:
        if key in node:
            children.append((key, node[key]))
    for key in _IN_PLACE_MAP:
        if isinstance(node.get(key), dict):
            children.extend((f'{key}/{name}', child) for name, child in node[key].items())
    for key in _IN_PLACE_LIST:
        if isinstance(node.get(key), list):
            children.extend((f'{key}/{index}', child) for index, child in enumerate(node[key]))
    for key in _REF_KEYWORDS:
        if key in node:
            children.extend((key, target) for target in schema.resolve(node, key))
    return [(how, child) for how, child in children if isinstance(child, dict)]


def _check_graph(schema: _Schema) -> None:
    """Refuse in-place cycles and too large in-place expansions (iterative DFS)."""
    edges: dict[int, list[tuple[str, dict]]] = {}
    done: dict[int, int] = {}  # id -> subschemas applied in place (itself included)
    on_path: dict[int, int] = {}  # id -> index in `stack`
    index = 0
    while index < len(schema.order):  # resolving can add nodes (pointers into anywhere)
        start = schema.order[index]
        index += 1
        if id(start) in done:
            continue
        stack: list[tuple[dict, int]] = [(start, 0)]
        on_path[id(start)] = 0
        while stack:
            node, next_child = stack[-1]
            children = edges.get(id(node))
            if children is None:
                children = edges[id(node)] = _in_place_children(schema, node)
            if next_child < len(children):
                stack[-1] = (node, next_child + 1)
                how, child = children[next_child]
                if id(child) in on_path:
                    loop = [item for item, _ in stack[on_path[id(child)]:]] + [child]
                    shown = ' -> '.join(schema.label(item) for item in loop)
                    raise ValueError(
                        f'{schema.label(node)}: reference loop applied in place ({shown}): '
                        'validating a value would never end; a recursive schema must descend '
                        'into properties or items between references')
                if id(child) not in done:
                    on_path[id(child)] = len(stack)
                    stack.append((child, 0))
                continue
            stack.pop()
            del on_path[id(node)]
            total = 1 + sum(done[id(child)] for _, child in children)
            done[id(node)] = total
            if total > MAX_IN_PLACE_SCHEMAS:
                raise ValueError(
                    f'{schema.label(node)}: applies {total} subschemas in place to one value '
                    f'through allOf/anyOf/oneOf/$ref (at most {MAX_IN_PLACE_SCHEMAS}); '
                    'validating would take too long, simplify the schema')


def _check_patterns(schema: _Schema) -> None:
    has_pattern_properties = unevaluated = None
    for node in schema.order:
        regexes = []
        if 'pattern' in node and isinstance(node['pattern'], str):
            regexes.append(('pattern', node['pattern']))
        if isinstance(node.get('patternProperties'), dict):
            has_pattern_properties = has_pattern_properties or node
            regexes += [('patternProperties', key) for key in node['patternProperties']]
        if 'unevaluatedProperties' in node:
            unevaluated = unevaluated or node
        for keyword, regex in regexes:
            try:
                safe_regex.compile_pattern(regex)
            except safe_regex.PatternError as exc:
                shown = regex if len(regex) <= 80 else regex[:77] + '...'
                raise ValueError(f'{schema.label(node)}: {keyword} {shown!r}: {exc}') from None
    if has_pattern_properties is not None and unevaluated is not None:
        raise ValueError(
            f'{schema.label(unevaluated)}: unevaluatedProperties together with '
            f'patternProperties ({schema.label(has_pattern_properties)}) is not supported: '
            'jsonschema would match those patterns with a backtracking engine; use '
            'additionalProperties instead')


def check_schema_safety(parameters: dict, where: str = 'function.parameters') -> None:
    """Raise ValueError (path and reason) unless validating against ``parameters`` is bounded."""
    schema = _Schema(parameters, where)
    _check_graph(schema)
    _check_patterns(schema)
