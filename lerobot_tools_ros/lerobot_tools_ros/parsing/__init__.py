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
Find the tool calls in model output text, in every common format, complete or streamed.

>>> from lerobot_tools_ros.parsing import parse
>>> result = parse('Pick the cube.\n<say>On it.</say>')
>>> result.content, result.calls[0].name, result.calls[0].arguments
('Pick the cube.', 'say', {'text': 'On it.'})

Formats (the ``format`` field of calls and issues): ``lerobot_marker``, ``openai_json``,
``hermes``, ``llama_json``, ``pythonic``, ``mistral``, ``qwen3_coder_xml``, ``fenced_json``.
Issue codes: ``truncated``, ``unparseable_arguments``, ``invalid_call``, ``unknown_tool``,
``too_large``, ``call_in_reasoning`` (see ``results``). Spans are [start, end) character
offsets into the input. Calls inside reasoning spans (``<think>``...``</think>`` and each
family's own, see ``register_reasoning``) are ``call_in_reasoning`` issues, not calls; a family
whose call markers are special tokens may end such a span with its section opener (see
``register_format(ends_reasoning=...)``).

Content rule: call markup (calls and issues) takes the whitespace right after it; when the text
ends with markup, the whitespace right before that markup goes too; nothing else changes. A
reasoning span stays in the content verbatim, the call markup written inside it included.
"""

from . import formats  # noqa: F401  (registers the built-in formats)
from .answers import Match, MatchResult, NeedMore, Skip
from .api import parse
from .context import Ctx, Matcher
from .registry import (add_format, format_spec, FORMATS, FormatSpec, REASONING,
                       register_format, register_reasoning, unregister_format)
from .results import (ArgumentEvent, CALL_IN_REASONING, CallEvent, CallStartEvent,
                      ContentEvent, DEFAULT_MAX_INPUT_BYTES, INVALID_CALL, ISSUE_CODES,
                      IssueEvent, ParsedCall, ParseIssue, ParseResult, TOO_LARGE, TRUNCATED,
                      UNKNOWN_TOOL, UNPARSEABLE_ARGUMENTS)
from .streaming import StreamingParser

__all__ = [
    'add_format', 'ArgumentEvent', 'CALL_IN_REASONING', 'CallEvent', 'CallStartEvent',
    'ContentEvent', 'Ctx', 'DEFAULT_MAX_INPUT_BYTES', 'format_spec', 'FORMATS', 'FormatSpec',
    'INVALID_CALL', 'ISSUE_CODES', 'IssueEvent', 'Match', 'Matcher', 'MatchResult', 'NeedMore',
    'parse', 'ParsedCall', 'ParseIssue', 'ParseResult', 'REASONING', 'register_format',
    'register_reasoning', 'Skip', 'StreamingParser', 'TOO_LARGE', 'TRUNCATED', 'UNKNOWN_TOOL',
    'unregister_format', 'UNPARSEABLE_ARGUMENTS',
]
