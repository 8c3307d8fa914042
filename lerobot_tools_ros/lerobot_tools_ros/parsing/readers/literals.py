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
Python literals read with ``ast``, never evaluated: what a value is when it is not JSON.

``literal_value`` parses exactly a slice (its extent found by ``json_values.scan_brackets``)
and converts only literal nodes (strings, numbers, booleans, None/null, lists, tuples, dicts
with string keys); anything else is a ``LiteralError`` saying what and where.
"""

import ast
import warnings

from .text import short


class LiteralError(ValueError):
    """A slice that is not a literal; ``offset`` (chars into the slice) is -1 when unknown."""

    def __init__(self, message: str, offset: int = -1, node: ast.AST | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.node = node


_NAMED_CONSTANTS = {'True': True, 'False': False, 'None': None,
                    'true': True, 'false': False, 'null': None}


def from_node(node: ast.AST) -> object:
    """
    Convert a literal expression node to JSON-compatible data; anything else is an error.

    Like ``ast.literal_eval`` but also accepts JSON's true/false/null and rejects what JSON
    cannot carry (sets, bytes, complex numbers, non-string keys).
    """
    if type(node) is ast.Constant:
        value = node.value
        if value is None or isinstance(value, (str, bool, int, float)):
            return value
        raise LiteralError(f'{type(value).__name__} values are not allowed', node=node)
    if type(node) is ast.Dict:
        out = {}
        for key, item in zip(node.keys, node.values):
            if key is None:
                raise LiteralError("'**' unpacking is not allowed", node=item)
            name = from_node(key)
            if not isinstance(name, str):
                raise LiteralError(f'object keys must be strings, got {short(name)}', node=key)
            out[name] = from_node(item)
        return out
    if type(node) is ast.List or type(node) is ast.Tuple:
        return [from_node(item) for item in node.elts]
    if type(node) is ast.UnaryOp and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        if (type(operand) is ast.Constant and isinstance(operand.value, (int, float))
                and not isinstance(operand.value, bool)):
            return -operand.value if isinstance(node.op, ast.USub) else operand.value
    if type(node) is ast.Name and node.id in _NAMED_CONSTANTS:
        return _NAMED_CONSTANTS[node.id]
    raise LiteralError(f'{describe_node(node)} is not a literal (only strings, numbers, '
                       'booleans, None, lists and dicts are allowed)', node=node)


def describe_node(node: ast.AST) -> str:
    """Name what a node is, for messages (``the name 'x'``, ``a function call``)."""
    if isinstance(node, ast.Name):
        return f'the name {node.id!r}'
    if isinstance(node, ast.Call):
        return 'a function call'
    if isinstance(node, ast.Set):
        return 'a set'
    return f'an expression ({type(node).__name__})'


def _syntax_offset(source: str, exc: SyntaxError) -> int:
    """Character offset in ``source`` of a SyntaxError (lineno/offset are 1-based)."""
    lineno = exc.lineno or 1
    offset = (exc.offset or 1) - 1
    pos = 0
    for _ in range(lineno - 1):
        nxt = source.find('\n', pos)
        if nxt == -1:
            break
        pos = nxt + 1
    return min(len(source), pos + max(0, offset))


def parse_expression(source: str) -> ast.AST:
    """``ast.parse`` in eval mode with every failure mapped to LiteralError."""
    try:
        if '\\' in source:  # "C:\path": no invalid-escape warnings printed for model text
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                return ast.parse(source, mode='eval').body
        return ast.parse(source, mode='eval').body
    except SyntaxError as exc:
        raise LiteralError(f'invalid syntax ({exc.msg})', _syntax_offset(source, exc)) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        reason = 'nested too deeply' if isinstance(exc, (RecursionError, MemoryError)) else exc
        raise LiteralError(f'cannot be parsed ({reason})') from None


def node_offset(source: str, node: ast.AST | None) -> int:
    """Character offset of ``node`` in ``source`` (ast columns count UTF-8 bytes), or -1."""
    if node is None or not hasattr(node, 'lineno') or not hasattr(node, 'col_offset'):
        return -1
    pos = 0
    for _ in range(node.lineno - 1):
        nxt = source.find('\n', pos)
        if nxt == -1:
            return -1
        pos = nxt + 1
    line_end = source.find('\n', pos)
    line = source[pos:] if line_end == -1 else source[pos:line_end]
    prefix = line.encode('utf-8', 'surrogatepass')[:node.col_offset]
    return pos + len(prefix.decode('utf-8', 'ignore'))


def literal_value(source: str) -> object:
    """Parse a Python literal (JSON-compatible result) from exactly ``source``."""
    node = parse_expression(source)
    try:
        return from_node(node)
    except RecursionError:
        raise LiteralError('nested too deeply') from None
    except LiteralError as exc:
        if exc.node is not None:
            exc.offset = node_offset(source, exc.node)
        raise
