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
What makes two calls "the same call" for repeat suppression (tool.<name>.repeat_window_s).

A VLA writes the same `<say>` with every action chunk; what it writes is not byte-identical
every time: spacing, a no-break or zero-width space, case, a composed or decomposed accent.
Free text arguments (string properties without enum, const, pattern or format: prose, not
identifiers) are compared after NFKC normalisation, with invisible format characters removed,
whitespace collapsed and case folded; every other argument is compared exactly.
"""

import json
import re
from typing import Any
import unicodedata

_WHITESPACE = re.compile(r'\s+')
_CONSTRAINTS = ('enum', 'const', 'pattern', 'format')


def free_text_properties(parameters: Any) -> frozenset:
    """Return the top-level properties of a tool's schema that hold free text."""
    properties = parameters.get('properties') if isinstance(parameters, dict) else None
    if not isinstance(properties, dict):
        return frozenset()
    found = set()
    for name, schema in properties.items():
        if not isinstance(schema, dict) or any(key in schema for key in _CONSTRAINTS):
            continue
        declared = schema.get('type')
        if declared == 'string' or (isinstance(declared, list) and 'string' in declared):
            found.add(name)
    return frozenset(found)


def normalise_text(text: str) -> str:
    """Return `text` as compared for repeats: NFKC, no format characters, spaces, casefold."""
    text = unicodedata.normalize('NFKC', text)
    text = ''.join(ch for ch in text if unicodedata.category(ch) != 'Cf')
    return _WHITESPACE.sub(' ', text).strip().casefold()


def repeat_key(name: str, arguments: dict, free_text: frozenset) -> tuple:
    """Return the key under which a call of `name` with `arguments` counts as a repeat."""
    if free_text:
        arguments = {key: normalise_text(value) if key in free_text and isinstance(value, str)
                     else value for key, value in arguments.items()}
    return (name, json.dumps(arguments, sort_keys=True))
