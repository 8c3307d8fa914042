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
Replaying an episode: what to publish when, and which result answers which replayed call.

`plan_replay` turns an episode's frames into `Step`s: at a frame's timestamp, the interjections
a user made there (published on the interjection topic) and one policy generation holding the
frame's assistant tool calls written in a model format (optionally preceded by the `plan` /
`subtask` rows that become active there, as prose). `Schedule` says which steps are due after
some seconds of replay (at `rate` times real time); `ResultBook` pairs each ToolResult with the
replayed call it answers and makes the table. No clock, no ROS: the replay node passes the time
and the results in.
"""

from dataclasses import dataclass, field
import json
from typing import Any

from . import language
from .episodes import Episode
from .render import render
from .. import errors

# A persistent row becomes active on the first frame at or after its timestamp; frame
# timestamps are float32 in the parquet, so "at" allows for their rounding.
_TIME_TOLERANCE_S = 1e-4


@dataclass
class Step:
    """What is published at one frame of the episode."""

    frame_index: int
    timestamp: float
    calls: list[tuple[str, dict]] = field(default_factory=list)
    interjections: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    text: str = ''

    @property
    def publishes_generation(self) -> bool:
        return bool(self.text)


@dataclass
class ReplayPlan:
    """The steps of one episode, and the event rows that are not replayed (and why)."""

    episode: int
    steps: list[Step]
    skipped: list[str] = field(default_factory=list)
    origin: float = 0.0  # the episode's first frame time: the replay's second 0

    @property
    def calls(self) -> int:
        return sum(len(step.calls) for step in self.steps)

    @property
    def duration_s(self) -> float:
        return self.steps[-1].timestamp - self.origin if self.steps else 0.0


def plan_replay(episode: Episode, catalog: Any, fmt: str = 'auto', *,
                prose: bool = False) -> ReplayPlan:
    """
    Plan the replay of `episode`: one step per frame that has something to publish.

    Assistant event rows with tool calls become calls (in stored order); user rows of style
    `interjection` become interjections; other event rows (vqa, trace, assistant rows without
    calls, styles a project registered upstream) are listed in `skipped`. With `prose`, each
    `plan`/`subtask` row is written before the calls of the frame where it becomes active.
    Raises `LanguageRowError` for a row that does not follow upstream's schema and
    `RenderError` for a call `fmt` cannot express.
    """
    steps: dict[int, Step] = {}
    skipped: list[str] = []

    def step_for(frame) -> Step:
        found = steps.get(frame.frame_index)
        if found is None:
            found = steps[frame.frame_index] = Step(frame.frame_index, frame.timestamp)
        return found

    for frame in episode.frames:
        for number, raw in enumerate(frame.events):
            where = f'episode {episode.index} frame {frame.frame_index} language_events[{number}]'
            if isinstance(raw, dict) and not language.is_known_style(raw.get('style')):
                # A style a project registered upstream (EXTENDED_STYLES): not ours to play.
                skipped.append(f'{where}: style {raw.get("style")!r} is not one of upstream\'s '
                               'core styles (a project-registered style?); not replayed')
                continue
            row = language.event_row(raw, where)
            calls = language.tool_calls(row, where)
            if row['role'] == 'assistant' and calls:
                step_for(frame).calls.extend(calls)
            elif row['role'] == 'user' and row['style'] == language.INTERJECTION:
                if isinstance(row['content'], str) and row['content'].strip():
                    step_for(frame).interjections.append(row['content'])
                else:
                    skipped.append(f'{where}: an interjection without text')
            else:
                skipped.append(f'{where}: role {row["role"]!r} style {row["style"]!r} '
                               'has nothing to replay')
    if prose and episode.frames:
        for row, frame in _prose_frames(episode):
            step_for(frame).prose.append(row['content'])
    ordered = [steps[index] for index in sorted(steps)]
    for step in ordered:
        rendered = render(step.calls, catalog, fmt)
        step.text = '\n'.join([*step.prose, rendered] if rendered else step.prose)
    return ReplayPlan(episode.index, ordered, skipped,
                      episode.frames[0].timestamp if episode.frames else 0.0)


def _prose_frames(episode: Episode) -> list[tuple[dict, Any]]:
    """Each plan/subtask row with the frame where it becomes active, in time order."""
    # Upstream broadcasts the same persistent slice on every frame of an episode.
    rows = []
    for number, row in enumerate(episode.frames[0].persistent):
        where = f'episode {episode.index} language_persistent[{number}]'
        if not isinstance(row, dict) or row.get('style') not in language.PROSE_STYLES:
            continue
        content = row.get('content')
        if isinstance(content, str) and content.strip():
            rows.append((language.timestamp(row, where), number, row))
    placed = []
    for stamp, _, row in sorted(rows, key=lambda item: item[:2]):
        frame = next((f for f in episode.frames if f.timestamp >= stamp - _TIME_TOLERANCE_S),
                     None)
        if frame is not None:
            placed.append((row, frame))
    return placed


class Schedule:
    """
    Which steps are due `elapsed` seconds into a replay at `rate` times real time.

    Second 0 of the replay is the episode time `origin` (its first frame), so a step is due
    when its frame would be, and a start marker sent at second 0 puts recorded events back on
    the frames they came from.
    """

    def __init__(self, steps: list[Step], rate: float = 1.0, origin: float = 0.0) -> None:
        if not rate > 0:
            raise ValueError(f'rate must be a positive number, got {rate!r}')
        self.rate = rate
        self._steps = sorted(steps, key=lambda step: (step.timestamp, step.frame_index))
        self._next = 0
        self._origin = origin

    def due(self, elapsed: float) -> list[Step]:
        """Return the steps due by `elapsed` that were not returned before, in order."""
        out = []
        while self._next < len(self._steps) and self.offset(self._steps[self._next]) <= elapsed:
            out.append(self._steps[self._next])
            self._next += 1
        return out

    def offset(self, step: Step) -> float:
        """Seconds after the replay's start at which `step` is due (`origin` at 0)."""
        return max(0.0, (step.timestamp - self._origin) / self.rate)

    def next_due(self) -> float | None:
        """Seconds after the start at which the next step is due; None when all were due."""
        if self._next >= len(self._steps):
            return None
        return self.offset(self._steps[self._next])

    @property
    def finished(self) -> bool:
        return self._next >= len(self._steps)


@dataclass
class Row:
    """One line of the replay table."""

    frame_index: int
    timestamp: float
    call: str
    outcome: str
    detail: str = ''
    failed: bool = False


@dataclass
class _Generation:
    step: Step
    results: list[dict] = field(default_factory=list)


def describe_call(name: str, arguments: Any) -> str:
    """`name(json arguments)` for the table."""
    if isinstance(arguments, str):
        text = arguments
    else:
        text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return f'{name}({text})'


class ResultBook:
    """The replayed generations by id, and the results that answered their calls."""

    def __init__(self) -> None:
        self._generations: dict[str, _Generation] = {}
        self._order: list[str] = []
        self.interjections: list[tuple[Step, str]] = []

    def expect(self, generation_id: str, step: Step) -> None:
        """Record that `step`'s generation went out under `generation_id`."""
        self._generations[generation_id] = _Generation(step)
        self._order.append(generation_id)

    def result(self, generation_id: str, *, name: str, arguments: str, success: bool,
               error_code: str, error_message: str = '', content: str = '') -> bool:
        """Take one ToolResult; return whether it answers a replayed generation."""
        generation = self._generations.get(generation_id)
        if generation is None:
            return False
        generation.results.append({
            'name': name, 'arguments': arguments, 'success': success,
            'error_code': error_code, 'error_message': error_message, 'content': content})
        return True

    @property
    def expected(self) -> int:
        return sum(len(g.step.calls) for g in self._generations.values())

    @property
    def received(self) -> int:
        return sum(len(g.results) for g in self._generations.values())

    @property
    def complete(self) -> bool:
        """Every replayed call has a result (a generation may answer more: parse errors)."""
        return all(len(g.results) >= len(g.step.calls) for g in self._generations.values())

    def rows(self) -> list[Row]:
        """Return the table rows: interjections, every replayed call with its result."""
        rows = [Row(step.frame_index, step.timestamp, f'interjection: {text}', 'published')
                for step, text in self.interjections]
        for generation_id in self._order:
            rows += self._generation_rows(self._generations[generation_id])
        return sorted(rows, key=lambda row: (row.timestamp, row.frame_index))

    @staticmethod
    def _generation_rows(generation: _Generation) -> list[Row]:
        step = generation.step
        left = list(generation.results)
        rows = []
        for name, arguments in step.calls:
            result = _take_match(left, name, arguments)
            call = describe_call(name, arguments)
            if result is None:
                rows.append(Row(step.frame_index, step.timestamp, call, 'no result',
                                'the dispatcher published no result for this call', True))
                continue
            rows.append(_row(step, call, result))
        for result in left:  # results for text that was not a replayed call (parse errors)
            rows.append(_row(step, describe_call(result['name'] or '?', result['arguments']),
                             result))
        return rows

    def failures(self) -> list[Row]:
        return [row for row in self.rows() if row.failed]


def _take_match(results: list[dict], name: str, arguments: dict) -> dict | None:
    """Remove and return the result answering (name, arguments); by name alone as a fallback."""
    for exact in (True, False):
        for index, result in enumerate(results):
            if result['name'] != name:
                continue
            if exact:
                try:
                    same = json.loads(result['arguments'] or '{}') == arguments
                except ValueError:
                    same = False
                if not same:
                    continue
            return results.pop(index)
    return None


def _row(step: Step, call: str, result: dict) -> Row:
    code = result['error_code']
    if result['success']:
        return Row(step.frame_index, step.timestamp, call, 'ok', result['content'])
    benign = code in errors.BENIGN_CODES
    return Row(step.frame_index, step.timestamp, call, code or 'error',
               result['error_message'], not benign)
