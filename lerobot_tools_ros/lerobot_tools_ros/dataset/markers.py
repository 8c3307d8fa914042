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
Episode markers: the message that says an episode began (or ended) on the robot.

Published as std_msgs/String on `lerobot_tools/episode_markers` by whatever records episodes
(or by `replay`), and written to the audit log by the dispatcher (parameter `record_events`),
so `dataset add-events` knows where an episode starts without guessing. Two spellings:
`{"event": "start", "episode": 3}` (JSON; optional `"rate"`: the replay speed, default 1, and
`"time"`: when the episode began, seconds since the epoch on the sender's clock, which then wins
over the time the marker arrived) or the words `start 3` / `end 3` (the episode number is
optional in both).
"""

import json
import math
from typing import Any

MARKERS = ('start', 'end')
AUDIT_EVENT = 'episode'
INTERJECTION_EVENT = 'interjection'


def parse_episode_marker(text: str) -> dict[str, Any]:
    """Return `{"marker", "episode", "rate"}` from a marker message, or raise ValueError."""
    stripped = text.strip()
    if stripped.startswith('{'):
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise ValueError(f'episode marker is not valid JSON: {exc}') from None
        if not isinstance(data, dict):
            raise ValueError('episode marker must be a JSON object')
        marker, episode, rate = data.get('event'), data.get('episode'), data.get('rate', 1.0)
        stamp = data.get('time')
    else:
        words = stripped.split()
        if not 1 <= len(words) <= 2:
            raise ValueError(f"episode marker must be 'start [N]' or 'end [N]', got "
                             f'{stripped[:80]!r}')
        marker, episode, rate = words[0], words[1] if len(words) == 2 else None, 1.0
        stamp = None
        if episode is not None:
            try:
                number = int(episode)
            except ValueError:
                raise ValueError(f'episode marker: episode must be an integer, got '
                                 f'{episode[:40]!r}') from None
            episode = number
    if marker not in MARKERS:
        raise ValueError(f'episode marker: event must be start or end, got {marker!r}')
    if episode is not None and (isinstance(episode, bool) or not isinstance(episode, int)
                                or episode < 0):
        raise ValueError(f'episode marker: episode must be a non-negative integer, got '
                         f'{episode!r}')
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) \
            or rate <= 0:
        raise ValueError(f'episode marker: rate must be a positive number, got {rate!r}')
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (int, float))
                              or not math.isfinite(stamp)):
        raise ValueError(f'episode marker: time must be seconds since the epoch, got {stamp!r}')
    return {'marker': marker, 'episode': episode, 'rate': float(rate),
            'time': None if stamp is None else float(stamp)}


def episode_marker_text(marker: str, episode: int | None, rate: float = 1.0,
                        stamp: float | None = None) -> str:
    """Return the JSON message for a marker (what `replay` publishes)."""
    data: dict[str, Any] = {'event': marker}
    if episode is not None:
        data['episode'] = episode
    if rate != 1.0:
        data['rate'] = rate
    if stamp is not None:
        data['time'] = stamp
    return json.dumps(data)
