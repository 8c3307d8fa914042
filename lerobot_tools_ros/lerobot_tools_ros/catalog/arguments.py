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
Arguments a catalog validated, and the copy of them a tool gets.

`ToolCatalog.validate` returns `ValidatedArguments`: a dict that remembers the tool and the
fingerprint of the schema it was checked against (`schema_fingerprint`: the canonical JSON of
the tool's declared parameters). Arguments cross in process as these objects, never as JSON
text: a tool_server in the dispatcher's process takes the dispatcher's check instead of making
it again, but only when its own catalog holds the very same schema for that tool
(`ToolCatalog.vouches_for`); two nodes of one process may load different datasets, and then the
tool_server validates against its own.

A tool never gets its caller's object: `copy_arguments` makes a deep copy (dicts and lists; the
other JSON values are immutable) where arguments enter the tool_server in process, so the
dispatcher, which keeps them for its audit record and results, cannot change what a running tool
sees, and a tool cannot change what the dispatcher recorded.

Refused arguments raise `ToolArgumentError` (defined here, re-exported by the catalog). Nothing
here imports rclpy.
"""

import hashlib
import json
from typing import Any, Mapping

from lerobot_tools_ros import errors, limits

__all__ = ['copy_arguments', 'schema_fingerprint', 'too_deep', 'ToolArgumentError',
           'ValidatedArguments']


class ToolArgumentError(ValueError):
    """A call the catalog rejects; ``error_code`` is ``unknown_tool`` or ``invalid_arguments``."""

    def __init__(self, error_code: str, message: str, *, tool: str | None = None,
                 suggestion: str | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message
        self.tool = tool
        self.suggestion = suggestion

    @property
    def code(self) -> str:
        """Alias of ``error_code``, matching ``errors.ToolError.code``."""
        return self.error_code


class ValidatedArguments(dict):
    """
    A tool's arguments as a catalog accepted them: a plain dict to everyone who reads it.

    `tool` and `schema` (a `schema_fingerprint`) say what they were checked against. Only
    `ToolCatalog.validate` makes them; a change made afterwards is not checked, which is why
    the in-process boundary copies them (`copy_arguments`) before a tool sees them.
    """

    __slots__ = ('tool', 'schema')

    def __init__(self, value: dict, tool: str, schema: str) -> None:
        super().__init__(value)
        self.tool = tool
        self.schema = schema


def schema_fingerprint(parameters: Any) -> str:
    """
    Return an identity of a tool's parameters schema: equal schemas, equal fingerprints.

    The canonical JSON (sorted keys) of the schema decides what a validator accepts: its draft
    (``$schema``), keywords and formats are all in it, and every catalog of a process validates
    with the same code. Schemas that differ only in how a number is written (1 and 1.0) count
    as different: re-validating is the safe side.
    """
    text = json.dumps(parameters, sort_keys=True, separators=(',', ':'), default=repr)
    return hashlib.blake2b(text.encode('utf-8', 'surrogatepass'), digest_size=16).hexdigest()


def copy_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """
    Return a deep copy of JSON arguments, a plain dict that shares no dict or list with them.

    Raises ``ToolArgumentError`` (invalid_arguments) when they nest deeper than any tool
    accepts (`limits.MAX_ARGUMENT_DEPTH`), as validation would.
    """
    return {key: _copy(item, 2) for key, item in arguments.items()}


def _copy(value: Any, depth: int) -> Any:
    if isinstance(value, dict):
        if depth > limits.MAX_ARGUMENT_DEPTH:
            raise too_deep()
        return {key: _copy(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        if depth > limits.MAX_ARGUMENT_DEPTH:
            raise too_deep()
        return [_copy(item, depth + 1) for item in value]
    return value  # str, int, float, bool, None: immutable


def too_deep() -> ToolArgumentError:
    """Return the error for arguments nested deeper than `limits.MAX_ARGUMENT_DEPTH`."""
    return ToolArgumentError(
        errors.INVALID_ARGUMENTS,
        f'arguments nest arrays/objects more than {limits.MAX_ARGUMENT_DEPTH} levels deep (the '
        'limit for tool arguments); flatten them')
