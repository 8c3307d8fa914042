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

"""Properties over generated text: parse never raises, and streaming always agrees with it."""

import json
import logging
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from lerobot_tools_ros.parsing import (INVALID_CALL, parse, ParsedCall, ParseIssue, ParseResult,
                                       register_format, StreamingParser, unregister_format)
from parsing_corpus import CASES, catalog, fuzz, guard_fails, stream
import pytest

CATALOG = catalog()
SLOW = os.environ.get('LEROBOT_TOOLS_SLOW') == '1'

# Every character, surrogates included (hypothesis leaves out category Cs by default).
ANY_CHAR = st.characters(exclude_categories=())
MARKUP = st.sampled_from([
    '<tool_call>', '</tool_call>', '<say>', '</say>', '<record_observation>', '<|python_tag|>',
    '<|eom_id|>', '[TOOL_CALLS]', '[ARGS]', '<function=say>', '<function=move_to>',
    '<parameter=text>', '<parameter=x>', '</parameter>', '</function>', '```json\n', '```',
    '{"name": "say", "arguments": {"text": "hi"}}', '{"name": ', '"arguments": ', '{', '}',
    '[', ']', '(', ')', '"', "'", '\\', ';', ',', ':', '\n', ' ', 'say(', 'move_to(', 'text=',
    'True', 'null', '<|python_start|>', '<|python_end|>', '\ud800', '\udfff', '\x00',
])
MODEL_LIKE = st.lists(MARKUP | st.text(ANY_CHAR, max_size=8), max_size=40).map(''.join)


def check_result(result: ParseResult, text: str) -> None:
    assert isinstance(result.content, str)
    assert all(isinstance(call, ParsedCall) and isinstance(call.arguments, dict)
               for call in result.calls)
    assert all(isinstance(issue, ParseIssue) and issue.message for issue in result.errors)
    for item in result.calls + result.errors:
        assert 0 <= item.span[0] < item.span[1] <= len(text)
    json.dumps([call.arguments for call in result.calls])  # JSON-compatible values only


@settings(max_examples=500, deadline=None)
@given(st.text(ANY_CHAR))
def test_parse_never_raises_on_any_text(text):
    with guard_fails():
        check_result(parse(text), text)
        check_result(parse(text, CATALOG), text)


@settings(max_examples=1000, deadline=None)
@given(MODEL_LIKE)
def test_parse_never_raises_on_markup_soup(text):
    with guard_fails():
        check_result(parse(text, CATALOG), text)
        check_result(parse(text), text)


@settings(max_examples=300, deadline=None)
@given(MODEL_LIKE, st.data())
def test_streaming_agrees_on_markup_soup(text, data):
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    with guard_fails():
        assert stream(text, cuts, CATALOG) == parse(text, CATALOG)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CASES), st.integers(0, 10_000), st.data())
def test_truncating_any_case_anywhere_never_raises_and_streams_alike(case, cut, data):
    text = case.text[:cut % (len(case.text) + 1)]
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=10))
    with guard_fails():
        result = parse(text, CATALOG)
        check_result(result, text)
        assert stream(text, cuts, CATALOG) == result


def test_lone_surrogate_alone():
    assert parse('\ud800') == ParseResult('\ud800', [], [])
    assert parse('\ud800', CATALOG) == ParseResult('\ud800', [], [])


def test_fuzz_quick():
    streamed, mismatches = fuzz(5_000, seed=11, tools=CATALOG)
    assert streamed == 500 and mismatches == []


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason='set LEROBOT_TOOLS_SLOW=1 for the 100,000-input fuzz')
def test_fuzz_100k():
    streamed, mismatches = fuzz(100_000, seed=1, tools=CATALOG, stream_every=2)
    assert streamed == 50_000
    assert mismatches == []


@pytest.fixture
def broken_format():
    """Register a format whose matcher raises IndexError, like a bug in a format module."""
    def match_broken(text, pos, trigger, ctx):
        return text[len(text) + 5]

    register_format('broken_for_test', [('<boom>', match_broken)], priority=1)
    yield
    unregister_format('broken_for_test')


def test_guard_turns_a_parser_bug_into_an_issue_and_an_error_log(broken_format, caplog):
    with caplog.at_level(logging.ERROR, logger='lerobot_tools_ros.parsing'):
        result = parse('Hi <boom> there')
    assert result.calls == []
    assert [issue.code for issue in result.errors] == [INVALID_CALL]
    assert 'IndexError' in result.errors[0].message
    records = [r for r in caplog.records if r.name == 'lerobot_tools_ros.parsing']
    assert [r.levelno for r in records] == [logging.ERROR]
    assert isinstance(records[0].parser_exception, IndexError)
    assert 'match_broken' in records[0].getMessage()  # the traceback of our code


def test_streaming_guard_logs_too(broken_format, caplog):
    parser = StreamingParser()
    with caplog.at_level(logging.ERROR, logger='lerobot_tools_ros.parsing'):
        events = parser.feed('Hi <boom> there') + parser.finish()
    assert [event.issue.code for event in events if hasattr(event, 'issue')] == [INVALID_CALL]
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


def test_never_raises_checks_fail_when_the_guard_fires(broken_format):
    with pytest.raises(AssertionError, match='guard fired') as info:
        with guard_fails():
            check_result(parse('Hi <boom> there', CATALOG), 'Hi <boom> there')
    assert isinstance(info.value.__cause__, IndexError)
    with pytest.raises(AssertionError, match='guard fired'):
        with guard_fails():
            stream('Hi <boom> there', [3, 7], CATALOG)
