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
Where streamed speech may be cut: whole sentences or clauses, by one documented rule.

A TTS engine reads a text with the intonation of its punctuation, so text handed to it while
the policy is still writing must end where a reader would pause. ``segment_end(text)`` returns
the end of the first such piece of ``text`` (0: none yet); the piece keeps the whitespace after
its boundary, so the pieces joined are the text exactly. A boundary is, in this order:

1. a line break;
2. a sentence end: a run of ``. ! ? …`` (optionally followed by closing quotes or brackets)
   followed by whitespace, except after an initial or a common abbreviation (``A.``, ``e.g.``,
   ``Dr.``, ``etc.``; ``3.5`` has no whitespace after its dot); ``。！？`` end a sentence
   without the whitespace;
3. a clause end: ``; :`` followed by whitespace;
4. a comma (``, ，、``) followed by whitespace, once the piece is at least ``MIN_CLAUSE_CHARS``
   long (``OK, `` alone is not worth a pause);
5. text without any of those: at the last whitespace once it is ``MAX_SEGMENT_CHARS`` long.

No library was used: the ones on the registry here either need data downloads (nltk's punkt)
or are unmaintained (blingfire 2021), and a rule that only ever cuts *after* punctuation that
has been followed by whitespace cannot be wrong about text still to come.
"""

import re

MIN_CLAUSE_CHARS = 40
MAX_SEGMENT_CHARS = 200
_CLOSERS = '"\')]}»”’'
_BOUNDARY = re.compile(
    r'\n|[.!?…]+[' + re.escape(_CLOSERS) + r']*\s|[。！？]+[' + re.escape(_CLOSERS) + r']*'
    r'|[;:；：][' + re.escape(_CLOSERS) + r']*\s|[,，、]\s?')
_ABBREVIATIONS = frozenset({'mr', 'mrs', 'ms', 'dr', 'st', 'prof', 'sr', 'jr', 'vs', 'etc',
                            'eg', 'ie', 'no', 'approx', 'fig', 'mt', 'co', 'inc', 'ltd'})
_WORD_BEFORE = re.compile(r'([A-Za-z.]+)$')


def segment_end(text: str) -> int:
    """Return the end of the first piece of ``text`` that is safe to speak, or 0."""
    for found in _BOUNDARY.finditer(text):
        mark = found.group()
        end = found.end()
        if mark[0] in ',，、':
            if mark[0] == ',' and not mark[1:]:
                continue  # an ASCII comma counts only once whitespace follows it
            if end < MIN_CLAUSE_CHARS:
                continue
        elif mark[0] in '.' and _abbreviation(text, found.start()):
            continue
        return end
    if len(text) >= MAX_SEGMENT_CHARS:
        cut = max(text.rfind(' ', 0, MAX_SEGMENT_CHARS), text.rfind('\t', 0, MAX_SEGMENT_CHARS))
        return cut + 1 if cut > 0 else MAX_SEGMENT_CHARS
    return 0


def _abbreviation(text: str, dot: int) -> bool:
    """Whether the ``.`` at ``dot`` ends an initial or a common abbreviation, not a sentence."""
    word = _WORD_BEFORE.search(text, 0, dot)
    if word is None:
        return False
    letters = word.group(1).replace('.', '').lower()
    return len(letters) == 1 or letters in _ABBREVIATIONS or (
        '.' in word.group(1) and len(letters) <= 3)


def split_segments(text: str) -> tuple[list[str], str]:
    """Return the complete pieces of ``text`` and the rest that is not safe to speak yet."""
    pieces: list[str] = []
    while True:
        end = segment_end(text)
        if not end:
            return pieces, text
        pieces.append(text[:end])
        text = text[end:]
