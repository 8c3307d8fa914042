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

r"""
Regular expressions of catalog schemas (``pattern``, ``patternProperties``) in bounded time.

A catalog pattern is matched against argument text the caller chooses. Python's ``re``
backtracks: ``^(a+)+$`` against 26 characters takes seconds, doubling per character, and even
``a*b`` takes 7 s on 64 KiB of ``a``. Matching runs on the dispatch thread, so a slow match
blocks every call and the e-stop with it.

- **RE2** (the ``google-re2`` package, imported when first needed): matching time is linear
  in the text, whatever the pattern. RE2 has no backreferences (``\1``) and no lookaround
  (``(?=``, ``(?!``, ``(?<=``, ``(?<!``): a pattern using them is refused when the catalog
  is loaded, with RE2's reason, never matched by a backtracking engine instead.
- **Without google-re2** (a platform without its wheel), Python's ``re`` is used only for
  patterns whose cost is bounded: besides backreferences and lookaround (refused, like RE2),
  a repetition that holds another variable-length repetition or an alternation (``(a+)+``,
  ``(a|ab)*``: exponential) is refused at load, and so is a pattern with more than
  ``MAX_FALLBACK_DEGREE`` variable-length repetitions in a row. Such a pattern costs at most
  about n^d steps for a text of n characters (d: the repetitions, plus one for an unanchored
  search); a text longer than the n that keeps n^d under ``FALLBACK_BUDGET`` (10 million
  steps, ~10-50 ms) is refused with ``invalid_arguments`` instead of being matched.

Patterns are compiled once and cached. JSON Schema patterns are ECMA-262 regexes; RE2 is
closer to them than Python's ``re`` (``\d`` and ``\w`` are ASCII, ``$`` matches only at the
end). Lone surrogates (possible in JSON strings) are matched as U+FFFD.
"""

import functools
import math
import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    from re import _constants as _sre, _parser as _sre_parse
else:  # Python 3.10
    import sre_constants as _sre  # noqa: I100 - only one of the two imports runs
    import sre_parse as _sre_parse

__all__ = ['compile_pattern', 'engine', 'PatternError', 'search', 'TextTooLong']

FALLBACK_BUDGET = 10_000_000
MAX_FALLBACK_DEGREE = 3
_SURROGATE = re.compile('[\ud800-\udfff]')
_REPEATS = frozenset(op for op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT,
                                   getattr(_sre, 'POSSESSIVE_REPEAT', None)) if op is not None)


class PatternError(ValueError):
    """A pattern that cannot be matched in bounded time here; the message says why."""


class TextTooLong(ValueError):
    """A text too long to match against a pattern without RE2 (see the module docstring)."""


@functools.cache
def _re2() -> Any:
    """Return the ``re2`` module (google-re2), or None where it is not installed."""
    try:
        import re2
    except ImportError:
        return None
    return re2


def engine() -> str:
    """Name the engine in use: ``re2``, or ``python (bounded)`` without google-re2."""
    return 're2' if _re2() is not None else 'python (bounded)'


class _Re2Pattern:
    __slots__ = ('_compiled',)

    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled

    def search(self, text: str) -> bool:
        if not text.isascii():
            text = _SURROGATE.sub('\ufffd', text)
        return self._compiled.search(text) is not None


class _BoundedPattern:
    __slots__ = ('_compiled', 'max_chars', '_pattern')

    def __init__(self, pattern: str, compiled: re.Pattern, max_chars: int) -> None:
        self._pattern = pattern
        self._compiled = compiled
        self.max_chars = max_chars

    def search(self, text: str) -> bool:
        if len(text) > self.max_chars:
            raise TextTooLong(
                f'is {len(text)} characters long; without google-re2 the pattern '
                f'{self._pattern[:80]!r} is checked only on texts of at most {self.max_chars} '
                'characters (pip install google-re2 to lift this)')
        return self._compiled.search(text) is not None


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> _Re2Pattern | _BoundedPattern:
    """Compile a schema pattern for bounded-time matching, or raise ``PatternError``."""
    if not isinstance(pattern, str):
        raise PatternError(f'a pattern must be a string, got {type(pattern).__name__}')
    pattern = _SURROGATE.sub('\ufffd', pattern)
    re2 = _re2()
    if re2 is not None:
        options = re2.Options()
        options.log_errors = False  # the reason is in the exception; RE2 would print it too
        try:
            return _Re2Pattern(re2.compile(pattern, options=options))
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            if isinstance(reason, bytes):
                reason = reason.decode('utf-8', 'replace')
            raise PatternError(
                f'RE2 cannot use this pattern ({reason}); tool argument patterns are matched '
                'with RE2, in time linear in the text: backreferences and lookaround are not '
                'supported') from None
    try:
        parsed: Any = _sre_parse.parse(pattern)  # (the private parser's types vary by version)
        compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        raise PatternError(f'not a valid regular expression ({exc})') from None
    degree = _degree(parsed.data if hasattr(parsed, 'data') else list(parsed))
    anchored = _anchored(parsed)
    total = degree + (0 if anchored else 1)
    if degree > MAX_FALLBACK_DEGREE:
        raise PatternError(
            f'{degree} variable-length repetitions in a row: too costly to match without '
            f'google-re2 (at most {MAX_FALLBACK_DEGREE}; pip install google-re2)')
    max_chars = (2 ** 62 if total == 0
                 else int(math.floor(FALLBACK_BUDGET ** (1.0 / total) + 1e-9)))
    return _BoundedPattern(pattern, compiled, max_chars)


def search(pattern: str, text: str) -> bool:
    """
    Tell whether ``pattern`` matches somewhere in ``text`` (JSON Schema semantics: unanchored).

    Raises ``PatternError`` for a pattern that cannot be used and ``TextTooLong`` for a text
    that cannot be matched in bounded time without RE2.
    """
    return compile_pattern(pattern).search(text)


def _anchored(parsed: Any) -> bool:
    """Tell whether a parsed pattern can only match at the start of the text."""
    items = list(parsed)
    if not items:
        return False
    op, av = items[0]
    if op is _sre.AT:
        if av is _sre.AT_BEGINNING_STRING:
            return True
        return av is _sre.AT_BEGINNING and not parsed.state.flags & re.MULTILINE
    return False


def _degree(items: list) -> int:
    """
    Return how many variable-length repetitions follow one another in ``items``.

    Refuses (``PatternError``) what a backtracking engine cannot match in polynomial time,
    and what RE2 refuses too (backreferences, lookaround), so a catalog loads alike with and
    without RE2 except for the costly patterns. Iterative over the parse tree.
    """
    degree = 0
    for op, av in items:
        if op in (_sre.GROUPREF, getattr(_sre, 'GROUPREF_IGNORE', None),
                  _sre.GROUPREF_EXISTS):
            raise PatternError('backreferences are not supported in tool argument patterns '
                               '(their matching time is not bounded)')
        if op in (_sre.ASSERT, _sre.ASSERT_NOT):
            raise PatternError('lookaround ((?=, (?!, (?<=, (?<!) is not supported in tool '
                               'argument patterns')
        if op in _REPEATS:
            low, high, body = av
            inner = _degree(list(body))
            if high == 1:  # optional (?, {0,1}): not a loop
                degree += inner
            elif high != low:
                if inner or _has_branch(body):
                    raise PatternError(
                        'a repetition of a variable-length part (such as (a+)+ or (a|ab)*) '
                        'takes exponential time to match without google-re2; rewrite it '
                        '(e.g. a+) or pip install google-re2')
                degree += 1
            elif inner:
                degree += inner * max(1, min(low, MAX_FALLBACK_DEGREE + 1))
        elif op is _sre.SUBPATTERN:
            degree += _degree(list(av[-1]))
        elif op is getattr(_sre, 'ATOMIC_GROUP', None):
            degree += _degree(list(av))
        elif op is _sre.BRANCH:
            degree += max((_degree(list(branch)) for branch in av[1]), default=0)
    return degree


def _has_branch(items: Any) -> bool:
    for op, av in items:
        if op is _sre.BRANCH:
            return True
        if op is _sre.SUBPATTERN and _has_branch(av[-1]):
            return True
    return False
