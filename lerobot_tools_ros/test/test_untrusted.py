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

"""The one place that makes model and caller text safe: ROS strings, log lines, JSONL lines."""

import json

from lerobot_tools_ros.untrusted import json_line, log_text, ros_string
import pytest

LONE = 'boom\ud800'


def test_ros_string_replaces_lone_surrogates_and_keeps_everything_else():
    assert ros_string(LONE) == 'boom\ufffd'
    assert ros_string(LONE).encode('utf-8') == b'boom\xef\xbf\xbd'
    text = 'caf\u00e9 \U0001f916 line\nnext\x00nul'
    assert ros_string(text) == text  # valid text is untouched (NUL is the producer's problem)


@pytest.mark.parametrize('hostile, shown', [
    ('unknown\n[ERROR] [dispatcher]: forged', 'unknown\\n[ERROR] [dispatcher]: forged'),
    ('a\r\nb', 'a\\r\\nb'),
    ('\x1b[31mred\x1b[0m', '\\u001b[31mred\\u001b[0m'),
    ('nul\x00byte', 'nul\\u0000byte'),
    ('tab\there', 'tab\\there'),
    ('sep\u2028para\u2029next\x85', 'sep\\u2028para\\u2029next\\u0085'),
    (LONE, 'boom\\ud800'),
    ('\u202eevil', '\\u202eevil'),
])
def test_log_text_escapes_what_could_forge_or_recolour_a_log_line(hostile, shown):
    safe = log_text(hostile)
    assert safe == shown
    assert len(safe.splitlines()) == 1
    safe.encode('utf-8')  # no lone surrogate left: a logger's encoder cannot fail


def test_log_text_keeps_readable_text_and_converts_non_strings():
    assert log_text('caf\u00e9 \U0001f916 ok') == 'caf\u00e9 \U0001f916 ok'
    assert log_text(42) == '42'
    assert log_text(ValueError('bad\nline')) == 'bad\\nline'


def test_log_text_cuts_long_texts_with_a_marker_naming_the_length():
    assert log_text('x' * 10_000, limit=50) == 'x' * 50 + '... (10000 chars)'
    # The escapes of a hostile long text are bounded by the cut too.
    assert len(log_text('\n' * 1_000_000, limit=100)) < 300
    assert log_text('y' * 200) == 'y' * 200  # the limit itself is not cut


@pytest.mark.parametrize('value', [
    {'text': LONE},
    {'text': 'a\u2028b\u2029c\x85d'},
    {'k\u2028ey': ['\x7f', '\x9f', 'line\nbreak', 'nul\x00', '\U0001f916', 'caf\u00e9']},
    ['\udc80\udfff', '\udfff\ud800'],  # lone and reversed: no pair to join
])
def test_json_line_is_one_utf8_line_that_round_trips(value):
    line = json_line(value)
    assert line.splitlines() == [line]
    encoded = line.encode('utf-8')  # would raise UnicodeEncodeError on a raw surrogate
    assert json.loads(encoded.decode('utf-8')) == value


def test_json_line_gives_surrogate_code_points_that_form_a_pair_back_joined():
    # JSON reads the escapes \ud83e\udd16 as one character: what a UTF-16 producer meant.
    assert json.loads(json_line(['\ud83e\udd16'])) == ['\U0001f916']


def test_json_line_keeps_readable_text_and_refuses_indent():
    assert json_line({'text': 'caf\u00e9 \U0001f916'}) == '{"text": "caf\u00e9 \U0001f916"}'
    assert json_line({'when': object}, default=lambda _: 'x') == '{"when": "x"}'
    with pytest.raises(ValueError, match='one line'):
        json_line({'a': 1}, indent=2)
