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
The format registry: a family is a ``FormatSpec`` (``format_spec``), registered by ``add_format``.

A format declares handlers, each a trigger (a literal string, or a function of the catalog view
returning several, e.g. ``<say>`` for every marker-capable tool) and a matcher (see ``core``).
A trigger that starts with a name character (a letter, digit, ``_`` or ``.``, like ``say(``
or ``functools[``) is only tried at the start of a word, never right after a name character.
Triggers from all selected formats are compiled into one regular expression, a trie of
escaped literals (no repetition, so searching is linear); a text with none of
them costs one C-level search. Plans are cached per catalog object and format selection.
"""

from dataclasses import dataclass
import re
from typing import Any, Callable, Iterable, Mapping, Sequence, Union
import weakref

DEFAULT_MARKERS = {'say': 'text'}  # LeRobot's DEFAULT_TOOLS: say(text: str)
STREAMABLE_ARGUMENTS = {'say': 'text'}
"""
Tools whose one string argument may be read while it is still being generated.

The one declaration: the parser reports such an argument as it grows, and the dispatcher (with
``stream_speech``) hands it to the tool in segments. Any other catalog tool declares one by
marking a top-level string property of its schema with ``STREAMABLE_KEY: true`` (a binding or
a plugin's schema); a tool may have at most one.
"""
STREAMABLE_KEY = 'x-lerobot-streamable'
NAME_CHARS = '_.'  # with letters and digits: what a key character is not
ASCII_NAME_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' + NAME_CHARS


Trigger = Union[str, Callable[['CatalogView'], Iterable[str]]]
"""A literal trigger string, or a function of the catalog view returning several."""


@dataclass(frozen=True)
class FormatSpec:
    """
    A format: its name, handlers ``(trigger, matcher)``, priority and reasoning spans.

    Built by ``format_spec`` (checked, registered nowhere) and registered by ``add_format``.
    ``reasoning``: ``(opening, closing)`` tokens of the family's own reasoning spans, which
    apply whatever formats are selected once the format is registered. ``ends_reasoning``:
    ``(opening token of a reasoning span, triggers)`` pairs: one of those triggers ends that
    span when it is open (see ``format_spec``).
    """

    name: str
    handlers: tuple[tuple[Trigger, Callable], ...]
    priority: int
    description: str
    ends_reasoning: tuple[tuple[str, tuple[str, ...]], ...] = ()
    reasoning: tuple[tuple[str, str], ...] = ()
    partial: Callable | None = None


FORMATS: dict[str, FormatSpec] = {}
REASONING: dict[str, str] = {}  # opening token -> closing token of a reasoning span
_state = {'version': 0}


def register_reasoning(open_token: str, close_token: str) -> None:
    """
    Declare ``open_token``...``close_token`` a reasoning span (``<think>``...``</think>``).

    Calls written inside one are plans, not requests: they are reported as
    ``call_in_reasoning`` issues and never dispatched (serving engines split reasoning off and
    run their tool parsers on the content only). An unclosed span runs to the end of the text.
    Every registered span applies whatever formats are selected.
    """
    _check_span(open_token, close_token)
    REASONING[open_token] = close_token
    _state['version'] += 1


def _check_span(open_token: str, close_token: str) -> None:
    for token in (open_token, close_token):
        if not isinstance(token, str) or not token:
            raise ValueError(f'reasoning tokens must be non-empty strings, got {token!r}')


def format_spec(name: str, handlers: Sequence[tuple[Trigger, Callable]], *,
                priority: int = 100, description: str = '',
                ends_reasoning: Mapping[str, Sequence[str]] | None = None,
                reasoning: Sequence[tuple[str, str]] = (),
                partial: Callable | None = None) -> FormatSpec:
    """
    Check and build a format's spec; nothing is registered (see ``add_format``).

    ``handlers`` is a list of ``(trigger, matcher)``. ``trigger`` is a non-empty string or a
    function ``(CatalogView) -> iterable of strings``; ``matcher(text, pos, trigger, ctx)``
    returns ``Match``/``Skip``/``NeedMore``/``None`` (``context.Matcher``, ``answers``).
    Matchers shared between formats (same function, same trigger) run once per position.
    Lower ``priority`` is tried first at the same position.

    ``ends_reasoning`` maps the opening token of a reasoning span (``'<think>'``) to literal
    triggers of this format that end that span when they appear inside it: the reasoning-safety
    rule for a family whose call markers are special tokens, which a tokenizer never produces
    as reasoning text (Kimi K2 opens its call section without closing ``<think>``). The span
    then ends at the trigger and the call markup is matched as usual. ``reasoning`` lists the
    family's own reasoning spans (``('<seed:think>', '</seed:think>')``).

    ``partial(text, view)`` (optional) reads a call of this family that is still arriving:
    ``text`` starts at the call's markup (a pending trigger); it returns None while the call's
    name is not known or the text is not certainly such a call (the matcher must end it with a
    call or an issue), else ``(name, reader)``: ``reader`` is None while the tool's streamable
    argument (``view.streamable``) has not begun or cannot be read incrementally, else a value
    reader whose ``advance(text)`` returns ``(piece, closed)``: the argument's decoded text
    that became final since its last call, and True once that value has certainly ended (a
    JSON string's closing quote, a closing tag no later text can turn into text inside the
    value), though the rest of the call's markup may not have arrived. The stream calls the
    reader, not ``partial``, on every later delta, with the same text grown at its end: a
    reader keeps its place, so a delta costs in proportion to its length. The pieces joined
    must be a prefix of the argument the matcher finally reads (``readers.partial`` has the
    shared readers).
    """
    if partial is not None and not callable(partial):
        raise ValueError(f'{name}: partial must be callable, got {partial!r}')
    if not isinstance(name, str) or not name or name == 'auto':
        raise ValueError(f'format name must be a non-empty string other than "auto", got {name!r}')
    checked = []
    for handler in handlers:
        trigger, matcher = handler
        if not (callable(trigger) or (isinstance(trigger, str) and trigger)):
            raise ValueError(f'{name}: trigger must be a non-empty string or a function, '
                             f'got {trigger!r}')
        if not callable(matcher):
            raise ValueError(f'{name}: matcher must be callable, got {matcher!r}')
        checked.append((trigger, matcher))
    if not checked:
        raise ValueError(f'{name}: at least one (trigger, matcher) handler is required')
    exits = []
    for open_token, triggers in (ends_reasoning or {}).items():
        literals = tuple(triggers)
        if not (isinstance(open_token, str) and open_token and literals
                and all(isinstance(t, str) and t for t in literals)):
            raise ValueError(f'{name}: ends_reasoning maps an opening token to non-empty '
                             f'trigger strings, got {open_token!r}: {triggers!r}')
        exits.append((open_token, literals))
    for span in reasoning:
        _check_span(*span)
    return FormatSpec(name, tuple(checked), int(priority), description, tuple(exits),
                      tuple((str(a), str(b)) for a, b in reasoning), partial)


def add_format(spec: FormatSpec) -> FormatSpec:
    """Register (or replace) a format built by ``format_spec``, and its reasoning spans."""
    for open_token, close_token in spec.reasoning:
        REASONING[open_token] = close_token
    FORMATS[spec.name] = spec
    _state['version'] += 1
    return spec


def register_format(name: str, handlers: Sequence[tuple[Trigger, Callable]], *,
                    priority: int = 100, description: str = '',
                    ends_reasoning: Mapping[str, Sequence[str]] | None = None) -> FormatSpec:
    """
    Add (or replace) a format: ``add_format(format_spec(...))``, for formats of your own.

    The built-in families are declared the same way (``format_spec`` in their module) and
    registered in one place, in a fixed order (``lerobot_tools_ros.parsing.formats``).
    """
    return add_format(format_spec(name, handlers, priority=priority, description=description,
                                  ends_reasoning=ends_reasoning))


def unregister_format(name: str) -> None:
    """Remove a format (plans that include it are rebuilt on next use)."""
    FORMATS.pop(name, None)
    _state['version'] += 1


class CatalogView:
    """
    What the formats need from a catalog, computed once per catalog.

    Uses only ``names``, ``parameters(name)`` and ``suggest(name)`` of
    ``lerobot_tools_ros.catalog.ToolCatalog``. Without a catalog: any name is accepted, the
    marker knows ``say`` only, and bare pythonic calls are not recognised.
    """

    def __init__(self, catalog) -> None:
        # Weakly: plans are cached per catalog in a WeakKeyDictionary, and a plan holding its
        # catalog strongly would keep every catalog a dispatcher ever loaded alive.
        self._catalog: Callable[[], Any] | None
        try:
            self._catalog = weakref.ref(catalog) if catalog is not None else None
        except TypeError:  # not weak-referenceable: such a catalog is not cached either
            self._catalog = (lambda: catalog)
        self._properties: dict[str, dict] = {}
        self.names: frozenset[str] | None
        self.ordered: tuple[str, ...]
        self.markers: dict[str, str]
        self.streamable: dict[str, str]
        self.known: str
        if catalog is None:
            self.names = None
            self.ordered = ()
            self.markers = dict(DEFAULT_MARKERS)
            self.streamable = dict(STREAMABLE_ARGUMENTS)
            self.known = 'any'
            return
        self.ordered = tuple(catalog.names)
        self.names = frozenset(self.ordered)
        shown = ', '.join(self.ordered[:20])
        self.known = (shown + f', ... ({len(self.ordered)} in all)'
                      if len(self.ordered) > 20 else shown) or 'none'
        self.markers = {}
        for tool in self.ordered:
            schema = self._schema(tool)
            required = schema.get('required')
            if not isinstance(required, list) or len(required) != 1:
                continue
            if not isinstance(required[0], str):
                continue
            prop = self.properties(tool).get(required[0])
            if isinstance(prop, dict) and prop.get('type') == 'string':
                self.markers[tool] = required[0]
        # LeRobot's own <say> marker is always read, so a policy trained on it is never
        # ignored silently: without a fitting `say` in the catalog the call is reported
        # (unknown_tool, or invalid arguments against the catalog's say schema).
        for tool, argument in DEFAULT_MARKERS.items():
            self.markers.setdefault(tool, argument)
        self.streamable = {}
        for tool in self.ordered:
            argument = streamable_argument(tool, self.properties(tool))
            if argument:
                self.streamable[tool] = argument

    @property
    def catalog(self) -> Any:
        """Return the catalog this view reads (None without one)."""
        return self._catalog() if self._catalog is not None else None

    def _schema(self, name: str) -> dict:
        try:
            schema = self.catalog.parameters(name)
        except (KeyError, ValueError, LookupError):
            return {}
        return schema if isinstance(schema, dict) else {}

    def properties(self, name: str) -> dict:
        """
        Return the ``properties`` of a tool's parameter schema ({} when unknown).

        A schema composed at the top level (``allOf``/``anyOf``/``oneOf`` of object schemas,
        what Pydantic emits for unions of models) contributes the properties of each part; a
        property declared in several parts allows the types of all of them.
        """
        found = self._properties.get(name)
        if found is None:
            found = {}
            if self.names is not None and name in self.names:
                found = composed_properties(self._schema(name))
            self._properties[name] = found
        return found

    def parameter_order(self, name: str) -> list[str] | None:
        """Parameter names in schema order, for positional pythonic arguments."""
        if self.names is None or name not in self.names:
            return None
        return list(self.properties(name))

    def suggest(self, name: str) -> str | None:
        """Return the catalog's closest known name, or None."""
        if self.catalog is None:
            return None
        try:
            return self.catalog.suggest(name)
        except (TypeError, ValueError):
            return None

    def bare_call_names(self) -> list[str]:
        """Catalog names usable as bare pythonic calls (valid dotted Python identifiers)."""
        return [name for name in self.ordered
                if all(part.isidentifier() for part in name.split('.'))]


def streamable_argument(name: str, properties: Mapping) -> str:
    """
    Return the streamable argument of tool ``name`` with these schema properties, or ''.

    ``STREAMABLE_ARGUMENTS`` names it for built-in tools; any tool may mark one string
    property with ``STREAMABLE_KEY: true``. Only a property the schema declares as a plain
    string qualifies (the text is handed out before the call can be validated).
    """
    marked = [key for key, schema in properties.items()
              if isinstance(schema, dict) and schema.get(STREAMABLE_KEY) is True]
    argument = STREAMABLE_ARGUMENTS.get(name) or (marked[0] if len(marked) == 1 else '')
    schema = properties.get(argument) if argument else None
    if not isinstance(schema, dict) or schema.get('type') != 'string':
        return ''
    return argument


_MAX_COMPOSITION_DEPTH = 8


def composed_properties(schema: object, depth: int = 0) -> dict:
    """Collect ``properties`` of an object schema and of its allOf/anyOf/oneOf parts."""
    if not isinstance(schema, dict) or depth > _MAX_COMPOSITION_DEPTH:
        return {}
    props = schema.get('properties')
    found = dict(props) if isinstance(props, dict) else {}
    for key in ('allOf', 'anyOf', 'oneOf'):
        parts = schema.get(key)
        if not isinstance(parts, list):
            continue
        for part in parts:
            for prop, sub in composed_properties(part, depth + 1).items():
                if prop not in found:
                    found[prop] = sub
                elif found[prop] != sub:
                    found[prop] = {'anyOf': [found[prop], sub]}
    return found


def trie_pattern(literals: Iterable[str]) -> str:
    """
    Return a regular expression matching the longest of ``literals`` at a position.

    The literals are merged into a trie (``<(?:say>|tool_call(?:>|s>))``): the regex engine
    then follows one branch per character instead of trying every literal at every position,
    which makes a search over a short delta about twice as fast.
    """
    trie: dict = {}
    for literal in literals:
        node = trie
        for char in literal:
            node = node.setdefault(char, {})
        node[''] = {}

    def emit(node: dict) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items())
                    if char]
        if not branches:
            return ''
        ends = '' in node
        if len(branches) == 1 and not ends:
            return branches[0]
        return '(?:' + '|'.join(branches) + (')?' if ends else ')')

    return emit(trie)


class Plan:
    """Compiled triggers for one (catalog, format selection)."""

    def __init__(self, view: CatalogView, formats: tuple[str, ...]) -> None:
        self.view = view
        self.formats = frozenset(formats)
        # readers of calls still arriving (streamed arguments), by the formats' priority
        self.partials = tuple((spec.name, spec.partial) for spec in sorted(
            (FORMATS[fmt] for fmt in formats), key=lambda spec: spec.priority)
            if spec.partial is not None)
        self.version = _state['version']
        entries: list[tuple[int, int, str, Callable]] = []
        seen = set()
        order = 0
        for fmt in formats:
            spec = FORMATS[fmt]
            for trigger, matcher in spec.handlers:
                triggers = trigger(view) if callable(trigger) else (trigger,)
                for literal in triggers:
                    if not isinstance(literal, str) or not literal:
                        continue
                    key = (literal, matcher)
                    if key in seen:
                        continue
                    seen.add(key)
                    entries.append((spec.priority, order, literal, matcher))
                    order += 1
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        # Reasoning tokens are searched for with the triggers; the scanner handles them itself.
        self.reasoning = dict(REASONING)
        self.reasoning_tokens = frozenset(REASONING) | frozenset(REASONING.values())
        # closing token of an open span -> triggers of the selected formats that end it too
        exits: dict[str, set] = {}
        for fmt in formats:
            for open_token, triggers in FORMATS[fmt].ends_reasoning:
                close = REASONING.get(open_token)
                if close is not None:
                    exits.setdefault(close, set()).update(triggers)
        self.reasoning_exits = {close: frozenset(found) for close, found in exits.items()}
        self.exit_literals = frozenset().union(*self.reasoning_exits.values())
        literals = sorted({entry[2] for entry in entries} | self.reasoning_tokens,
                          key=lambda lit: (-len(lit), lit))
        self.triggers = tuple(literals)
        # The regex alternation lists longer triggers first, so a match is the longest trigger
        # at that position; every handler whose trigger is a prefix of it applies there.
        # For each literal, the handlers of every trigger that is a prefix of it, in priority
        # order: looked up by prefix, so 10,000 tools cost 10,000 x their length, not 10,000^2.
        by_literal: dict[str, list] = {}
        for position, (_, _, literal, matcher) in enumerate(entries):
            by_literal.setdefault(literal, []).append((position, literal, matcher))
        self.by_trigger = {}
        for literal in literals:
            found = [entry for k in range(1, len(literal) + 1)
                     for entry in by_literal.get(literal[:k], ())]
            found.sort()
            self.by_trigger[literal] = [(t, m) for _, t, m in found]
        self.rx = re.compile(trie_pattern(literals)) if literals else None
        prefixes = {literal[:k] for literal in literals for k in range(1, len(literal))}
        firsts = ''.join(sorted({literal[0] for literal in literals}))
        self.first_rx = re.compile('[' + re.escape(firsts) + ']') if firsts else None
        self.hold_len = max((len(literal) for literal in literals), default=1) - 1
        self.prefix_set = frozenset(prefixes)
        # held_start looks at two kinds of candidates: positions of a first character that is
        # not a name character (few in prose), and the trailing run of name characters (the
        # start of say( or functools[). That covers every prefix unless a trigger starting with
        # a name character has a prefix holding other characters: then it tries them all.
        others = ''.join(sorted({c for c in firsts if not (c.isalnum() or c in NAME_CHARS)}))
        self.other_first_rx = re.compile('[' + re.escape(others) + ']') if others else None
        self.slow_hold = any(
            not all(c.isalnum() or c in NAME_CHARS for c in prefix)
            for prefix in prefixes if prefix[0].isalnum() or prefix[0] in NAME_CHARS)
        # One character per trigger that any full occurrence contains (the first one that is
        # not a name character): a delta without any of them cannot hold a whole trigger, so
        # the streaming parser skips the scanner for it. None: some trigger has no such char.
        found_keys: set[str] = set()
        keys: set[str] | None = found_keys
        for literal in literals:
            key_char = next((c for c in literal if not (c.isalnum() or c in NAME_CHARS)), None)
            if key_char is None:
                keys = None
                break
            found_keys.add(key_char)
        self.key_rx = (re.compile('[' + ''.join(sorted(map(re.escape, keys))) + ']')
                       if keys else None)
        self.key_chars = frozenset(keys or ())
        self.quiet_chars = self.key_chars | {'\n'}  # what ends a run of plain prose
        # For text without any key character: the prefixes a trailing word may be of a
        # trigger that starts with name characters (say( functools[ Action:), so the streaming
        # fast path holds back exactly what the scanner would.
        words: set[str] = set()
        for literal in literals:
            run = 0  # how many leading characters are name characters (a proper prefix's)
            while run < len(literal) - 1 and (literal[run].isalnum()
                                              or literal[run] in NAME_CHARS):
                run += 1
            words.update(literal[:k] for k in range(1, run + 1))
        self.word_prefixes = frozenset(words)
        self.word_triggers = frozenset(literal for literal in literals
                                       if literal[0].isalnum() or literal[0] in NAME_CHARS)
        self.word_max = max(map(len, words), default=0)

    def held_start(self, text: str, start: int) -> int:
        """
        Where a suffix of ``text`` (from ``start`` on) that may grow into a trigger begins.

        That is the longest suffix that is a proper prefix of a trigger, or -1. Only positions
        holding a trigger's first character are looked at (one C-level search each).
        """
        if self.first_rx is None:
            return -1
        n = len(text)
        lo = max(start, n - self.hold_len)
        prefixes = self.prefix_set
        if self.slow_hold:
            return self._held_start_any(text, lo)
        if self.other_first_rx is not None:
            search = self.other_first_rx.search
            i = lo
            while True:
                found = search(text, i)
                if found is None:
                    break
                i = found.start()
                if text[i:] in prefixes:
                    return i
                i += 1
        if self.word_max:
            i = len(text.rstrip(ASCII_NAME_CHARS))
            if i < n and n - i <= self.word_max and i >= lo and text[i:] in prefixes:
                return i
        return -1

    def _held_start_any(self, text: str, i: int) -> int:
        """``held_start`` trying every position that holds a trigger's first character."""
        first_rx = self.first_rx
        if first_rx is None:
            raise ValueError('_held_start_any: the plan has no triggers')
        search = first_rx.search
        prefixes = self.prefix_set
        while True:
            found = search(text, i)
            if found is None:
                return -1
            i = found.start()
            if text[i:] in prefixes:
                return i
            i += 1


_plans_without_catalog: dict = {}
_plans_by_catalog: 'weakref.WeakKeyDictionary' = weakref.WeakKeyDictionary()


def format_names(formats: str | Iterable[str]) -> tuple[str, ...]:
    """Resolve ``'auto'`` / a name / names to registered names in priority order."""
    if isinstance(formats, str):
        wanted = [formats]
    else:
        wanted = list(formats)
    for name in wanted:
        if not isinstance(name, str):
            raise TypeError(f'format names must be strings, got {name!r}')
        if name != 'auto' and name not in FORMATS:
            raise ValueError(f'unknown format {name!r}; known: auto, {", ".join(FORMATS)}')
    if not wanted or 'auto' in wanted:
        wanted = list(FORMATS)
    chosen = dict.fromkeys(wanted)
    return tuple(sorted(chosen, key=lambda name: FORMATS[name].priority))


# (catalog, formats, plan) of the last call: the dispatcher repeats one pair. One tuple in a
# one-item list, read and replaced whole, so concurrent callers never mix two entries.
_last: list = [None]


def get_plan(catalog, formats) -> Plan:
    """Return the cached plan for ``catalog`` and ``formats`` (built on first use)."""
    key = formats if type(formats) is str else tuple(formats)
    last = _last[0]
    if (last is not None and last[0] is catalog and last[1] == key
            and last[2].version == _state['version']):
        return last[2]
    plan = _get_plan(catalog, key)
    _last[0] = (catalog, key, plan)
    return plan


def _get_plan(catalog, key) -> Plan:
    cache: dict | None
    if catalog is None:
        cache = _plans_without_catalog
    else:
        try:
            cache = _plans_by_catalog.get(catalog)
            if cache is None:
                cache = _plans_by_catalog[catalog] = {}
        except TypeError:  # not weak-referenceable or not hashable: no caching
            cache = {}
    try:
        plan = cache.get(key)
    except TypeError:
        plan = None
    if plan is None or plan.version != _state['version']:
        plan = Plan(CatalogView(catalog), format_names(key))
        try:
            cache[key] = plan
        except TypeError:
            pass
    return plan
