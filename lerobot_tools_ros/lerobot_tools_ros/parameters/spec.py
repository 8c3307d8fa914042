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
One declaration per ROS parameter: name, type, default, rules, description, live or not.

A parameter that cannot change while its node runs says why.

`ParameterSpec` is pure Python (no rclpy): nodes declare from it (`nodes.params`), the packaged
parameters file and the parameter reference are generated from it (`parameters.generate`), and
every value that arrives - from a parameters file, the command line or `ros2 param set` - is
checked by `ParameterSpec.check`, which says what is wrong and what would be right.

A writable parameter takes effect when it is set (the node's set-parameters callback checks and
applies it); one that cannot is read-only and its `read_only` text says why.
"""

from dataclasses import dataclass, field
import math
from typing import Any

from lerobot_tools_ros import names
from lerobot_tools_ros.errors import ConfigurationError

__all__ = ['ALL', 'GENERIC_FLOAT_LIMIT', 'GENERIC_INT_LIMIT', 'KINDS', 'MAX_SECONDS',
           'ParameterSpec', 'means_all', 'number_text', 'string_list']

# The ROS types a parameter can have here; `str_list` is a list of non-empty strings.
KINDS = ('bool', 'int', 'float', 'str', 'str_list')
_KIND_OF = {bool: 'bool', int: 'int', float: 'float', str: 'str'}
_KIND_TEXT = {'bool': 'true or false', 'int': 'an integer', 'float': 'a number',
              'str': 'a string', 'str_list': 'a list of strings such as [a, b]'}
# In a list of names, ['*'] (or []) means every one, e.g. allowed_tools: ['*'].
ALL = names.ALL_TOOLS
# The longest any duration parameter may be: a week. Every timeout, period and window becomes a
# timer period or a deadline in int64 nanoseconds somewhere; 1e308 or 1e12 s set on a running
# node used to overflow the dispatcher's timer (OverflowError, TypeError) and kill it with its
# calls unanswered. A week is far beyond any sensible value and far inside int64 nanoseconds.
MAX_SECONDS = 7 * 24 * 3600.0
# Bounds a number gets when its declaration names none (a third-party tool's ToolParameter): a
# value is always finite and fits what ROS and the timers take. The package's own declarations
# all name their bounds (a test checks it).
GENERIC_FLOAT_LIMIT = 1e9
GENERIC_INT_LIMIT = 2 ** 53


def number_text(value: float) -> str:
    """Return a bound as people read it: 1073741824, 604800, 0.5, 1e-06."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15):
        return str(int(value))
    return f'{value:g}'


def _kind_of(default: Any) -> str:
    if isinstance(default, (list, tuple)):
        return 'str_list'
    kind = _KIND_OF.get(type(default))
    if kind is None:
        raise TypeError(f'a parameter default must be a bool, int, float, str or list of str, '
                        f'got {default!r}')
    return kind


def string_list(name: str, value: Any) -> list[str]:
    """
    Check a list-of-strings parameter as it arrives from a file, the CLI or a client.

    Any empty array is the empty list (`ros2 param set x "[]"` types it as a bool array, and a
    parameters file's `[]` arrives without a type at all). An empty string is refused: `['']`
    would otherwise silently match nothing.
    """
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not hasattr(value, '__iter__'):
        raise ConfigurationError(f"parameter '{name}' must be a list such as [a, b]; got "
                                 f'{value!r}')
    items = list(value)
    if not items:
        return []
    if not all(isinstance(item, str) for item in items):
        raise ConfigurationError(f"parameter '{name}' must be a list of strings; got {items!r}")
    if any(not item.strip() for item in items):
        raise ConfigurationError(f"parameter '{name}' holds an empty string ({items!r}), which "
                                 f"names nothing; write [] or ['{ALL}'] for all")
    if ALL in items and len(items) > 1:
        raise ConfigurationError(f"parameter '{name}': '{ALL}' means all and stands alone; "
                                 f'got {items!r}')
    return items


def means_all(items: list[str]) -> bool:
    """Return whether a checked list of names means every name: [] or ['*']."""
    return not items or items == [ALL]


@dataclass(frozen=True)
class ParameterSpec:
    """
    One parameter of one node, declared once.

    - ``default``: the value a node starts with (a bool, int, float, str or list of str; never
      None, so every parameter has a value and `ros2 param dump` writes no null).
    - ``choices``: the only values allowed (strings); ``minimum``/``maximum``: inclusive bounds
      of a number; ``above``: an exclusive lower bound (``above=0``: positive). A number is
      always finite (NaN and infinity are refused) and always bounded: a declaration without
      bounds gets GENERIC_FLOAT_LIMIT / GENERIC_INT_LIMIT on both sides.
    - ``special``: values allowed besides the bounds, each with its meaning in the description
      (``special=(-1,)``: -1 takes the global value).
    - ``read_only``: why the parameter cannot change while the node runs; empty: writable, and
      applied at once when set.
    - ``also``: further kinds accepted besides the default's (e.g. ``('int',)`` for a device
      given by name or index); such a parameter is dynamically typed.
    """

    name: str
    default: Any
    description: str
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    read_only: str = ''
    also: tuple = ()
    special: tuple = ()
    kind: str = field(init=False, default='')

    def __post_init__(self) -> None:
        if not self.description.strip():
            raise TypeError(f'parameter {self.name}: a description is required')
        for kind in self.also:
            if kind not in KINDS:
                raise TypeError(f'parameter {self.name}: unknown kind {kind!r} in also')
        object.__setattr__(self, 'kind', _kind_of(self.default))
        if isinstance(self.default, tuple):
            object.__setattr__(self, 'default', list(self.default))
        if self.numeric:
            limit = GENERIC_INT_LIMIT if self.kind == 'int' else GENERIC_FLOAT_LIMIT
            if self.minimum is None and self.above is None:
                object.__setattr__(self, 'minimum', -limit)
            if self.maximum is None:
                object.__setattr__(self, 'maximum', limit)
        self.check(self.default)  # a default that breaks its own rules is a bug, found at import

    @property
    def numeric(self) -> bool:
        """Return whether the parameter takes numbers (its own kind or an ``also`` kind)."""
        return bool({'int', 'float'} & {self.kind, *self.also})

    @property
    def writable(self) -> bool:
        """Return whether the parameter can be set while the node runs (and applies at once)."""
        return not self.read_only

    @property
    def dynamic(self) -> bool:
        """
        Return whether ROS should accept more than one type for it.

        Numbers (a file's `5` for `5.0`), lists (`[]` arrives typed as a bool array or
        untyped) and parameters with ``also`` kinds.
        """
        return self.kind in ('float', 'str_list') or bool(self.also)

    def constraints(self) -> str:
        """Return the rules a value must follow, in words ('' when any value of its type)."""
        parts = []
        if self.choices:
            parts.append('one of ' + ', '.join(str(choice) for choice in self.choices))
        low = (f'from {number_text(self.minimum)}' if self.minimum is not None
               else f'above {number_text(self.above)}' if self.above is not None else '')
        if self.minimum is not None and self.above is not None:
            low += f' and above {number_text(self.above)}'
        high = f'at most {number_text(self.maximum)}' if self.maximum is not None else ''
        if low.startswith('from') and high:
            parts.append(f'{low} to {high[len("at most "):]}')
        elif low or high:
            parts.append(' and '.join(part for part in (low, high) if part))
        if self.special and parts:
            parts[-1] += ', or ' + ' or '.join(number_text(value) for value in self.special)
        return '; '.join(parts)

    def full_description(self) -> str:
        """Return the description as `ros2 param describe` shows it: with rules and mode."""
        text = self.description.strip()
        rules = self.constraints()
        if rules:
            text += f' Allowed: {rules}.'
        if self.read_only:
            text += f' Read-only: {self.read_only.strip().rstrip(".")}.'
        return text

    def _wrong(self, value: Any, wanted: str) -> ConfigurationError:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + '...'
        return ConfigurationError(f"parameter '{self.name}' must be {wanted}, got {shown}")

    def _as_kind(self, kind: str, value: Any) -> tuple[bool, Any]:
        if kind == 'bool':
            return isinstance(value, bool), value
        if kind == 'int':
            return isinstance(value, int) and not isinstance(value, bool), value
        if kind == 'float':
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return False, value
            try:
                as_float = float(value)
            except OverflowError:  # an int beyond any float (10**400)
                return False, value
            return True, as_float  # NaN and infinity: refused by `check`, saying so
        if kind == 'str':
            return isinstance(value, str), value
        return True, string_list(self.name, value)

    def check(self, value: Any) -> Any:
        """
        Return `value` as the node uses it, or raise ConfigurationError saying what is wrong.

        Integers are taken for floats; any empty array (and a file's untyped `[]`) for a list.
        """
        if value is None and self.kind != 'str_list':
            raise self._wrong(value, _KIND_TEXT[self.kind] + ' (it has no value)')
        for kind in (self.kind, *self.also):
            ok, checked = self._as_kind(kind, value)
            if ok:
                break
        else:
            wanted = ' or '.join(_KIND_TEXT[kind] for kind in (self.kind, *self.also))
            raise self._wrong(value, wanted)
        if self.choices and not isinstance(checked, list) and checked not in self.choices:
            raise self._wrong(checked, 'one of ' + ', '.join(map(str, self.choices)))
        if isinstance(checked, float) and not math.isfinite(checked):
            raise self._wrong(checked, 'a finite number ' + self.constraints())
        if (isinstance(checked, (int, float)) and not isinstance(checked, bool)
                and checked not in self.special):
            if ((self.minimum is not None and checked < self.minimum)
                    or (self.maximum is not None and checked > self.maximum)
                    or (self.above is not None and not checked > self.above)):
                raise self._wrong(checked, self.constraints())
        return checked

    def reason(self, value: Any) -> str:
        """Return why `value` is refused, or '' when it is fine (for set-parameters results)."""
        try:
            self.check(value)
        except ConfigurationError as exc:
            return str(exc)
        return ''
