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
The value readers of streamed arguments keep their place: reading on equals reading afresh.

A reader advanced on a text that grows by deltas must give, joined, what a new reader gives on
the text as it stands, after every delta, and say it is closed at the same moment: keeping
state across feeds (so a delta costs its own length) changes nothing in what is read. (When a
later character makes a fresh read shorter, e.g. a ``<`` that turns out to open a tag right
after another ``<``, the text already given stands and nothing more is given until the fresh
read is longer again: what the stream did when it read the value afresh on every delta.)
"""

from hypothesis import given, settings
from hypothesis import strategies as st
from lerobot_tools_ros.parsing.formats.glm import partial_glm
from lerobot_tools_ros.parsing.formats.hermes import partial_hermes
from lerobot_tools_ros.parsing.formats.marker import partial_marker
from lerobot_tools_ros.parsing.formats.mistral import partial_mistral
from lerobot_tools_ros.parsing.formats.qwen3_coder import partial_function
from lerobot_tools_ros.parsing.registry import get_plan
from parsing_corpus import catalog

VIEW = get_plan(catalog(), 'auto').view
ALPHABET = list('ab "\\\n\r\t<>/=&é😀\u2028u0{}') + [
    '</say>', '</parameter>', '\\u00e9', '\\ud83d', '\\ude00', '</arg_value>',
    '<parameter=text>', '</function>', '\\"']
# family reader -> a call whose streamed value is filled in raw (escapes and tags included)
SHAPES = {
    'marker': (partial_marker, '<say>{}'),
    'hermes': (partial_hermes, '<tool_call>{{"name": "say", "arguments": {{"text": "{}'),
    'hermes_encoded': (partial_hermes,
                       '<tool_call>{{"name": "say", "arguments": "{{\\"text\\": \\"{}'),
    'mistral': (partial_mistral, '[TOOL_CALLS]say{{"text": "{}'),
    'qwen3_coder_xml': (partial_function, '<tool_call>\n<function=say>\n<parameter=text>{}'),
    'glm45': (partial_glm, '<tool_call>say<arg_key>text</arg_key><arg_value>{}'),
}


def fresh(partial, text: str):
    """Read ``text`` with a new reader: (all of the value so far, closed), or None."""
    found = partial(text, VIEW)
    if found is None or found[1] is None:
        return None
    return found[1].advance(text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(SHAPES)), st.lists(st.sampled_from(ALPHABET), max_size=25),
       st.lists(st.integers(1, 7), min_size=1, max_size=20))
def test_reading_on_equals_reading_afresh_after_every_delta(shape, pieces, sizes):
    partial, template = SHAPES[shape]
    whole = template.format(''.join(pieces)) + '</say>"}</parameter>\n</function></arg_value>'
    reader = None
    said = ''
    closed = False
    reference, reference_closed = '', False  # reading afresh on every delta
    pos = 0
    while pos < len(whole):
        pos = min(len(whole), pos + sizes[pos % len(sizes)])
        text = whole[:pos]
        if reader is None:
            found = partial(text, VIEW)
            if found is not None and found[1] is not None:
                reader = found[1]
        if reader is not None and not closed:
            piece, closed = reader.advance(text)
            said += piece
        expected = fresh(partial, text)
        if expected is None:
            assert reader is None
        elif not reference_closed and expected[0].startswith(reference):
            reference, reference_closed = expected
        assert (said, closed) == (reference, reference_closed), (shape, text)


def test_what_was_read_is_never_read_again():
    """
    The work per delta does not depend on what is pending: the text already read is not read.

    Overwriting the part of the value a reader has read (keeping the length) changes nothing
    in what it reads next, which it would if it read the value from its start again.
    """
    for shape in ('marker', 'hermes', 'qwen3_coder_xml', 'glm45', 'hermes_encoded'):
        partial, template = SHAPES[shape]
        head = template.format('')
        reader = partial(head + 'a', VIEW)[1]
        said = reader.advance(head + 'a')[0]
        text = head + 'a' * 5000
        said += reader.advance(text)[0]
        forged = head + '#' * 4990 + text[len(head) + 4990:] + 'bc'
        said += reader.advance(forged)[0]
        assert said == 'a' * 5000 + 'bc', shape
