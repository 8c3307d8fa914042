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
Calls an earlier dispatcher accepted and never answered, found in its audit log.

A dispatcher that was killed (SIGKILL, a crash, the OOM killer, a power cut) leaves calls whose
`call` record has no `result` record: some of them had been sent and may have run. At start, the
dispatcher reads the end of its audit log with `unanswered_calls` and answers each such call
once (`recovered_result`: outcome unknown, error code answer_lost), auditing that answer, so a
second restart finds nothing left to answer. Pure: no rclpy, no clock of its own.

Bounded: only the last `RECOVERY_WINDOW_BYTES` of the log are read (a call accepted before that
is not answered; a call and its result take some 600 bytes, so that is tens of thousands of
calls back); there is no age limit within that window (the answer says when the call was
accepted). Lines that are not JSON (a fragment, a foreign line) are skipped and counted, never
fatal.

The same read finds the ~/call calls with a caller's own id that may have acted (their result
`ran` or `unknown`, or answered here as `unknown`): `kept_results` gives them to the new core,
so a caller's retry of such an id after the restart gets that result instead of acting again.
"""

from collections import deque
from dataclasses import dataclass, field
import datetime
import json
import os
from typing import Any

from .call_ids import Earlier
from .calls import ORIGIN_CALL
from .. import errors

RECOVERY_WINDOW_BYTES = 16 << 20
CALL_EVENT, RESULT_EVENT = 'call', 'result'
# A streamed call sent to its executor before its text was complete (stream_speech): its `call`
# record comes once the text is complete; this one says it may already be running.
STARTED_EVENT = 'started'


def started_record(call: Any) -> dict:
    """Return the audit fields of a streamed call sent before its `call` record (a Call)."""
    return {'call_id': call.call_id, 'generation_id': call.generation_id,
            'source': call.source, 'origin': call.origin, 'name': call.name,
            'arguments': call.arguments, 'format': call.format}


@dataclass(slots=True)
class Scan:
    """What the end of an audit log says: calls without a result, oldest first."""

    calls: list[dict] = field(default_factory=list)
    # ~/call calls that may have acted, with their result records: (call, result)
    answered: list[tuple[dict, dict]] = field(default_factory=list)
    window_start: int = 0  # offset the read began at (0: the whole log was read)
    end: int = 0  # offset the read stopped at (the size the log had when it was opened)
    bad_lines: int = 0  # lines skipped: not a JSON object


def unanswered_calls(path: str | os.PathLike, end: int,
                     window_bytes: int = RECOVERY_WINDOW_BYTES) -> Scan:
    """
    Return the `call` records of the log's last `window_bytes` (before `end`) with no result.

    A call id used again after its result (a ~/call caller's own id) pairs each result with the
    oldest open call of that id. A result with no call (a parse error's) closes nothing. A
    `started` record opens a call like a `call` record; the `call` record that follows it
    (the same call, complete) takes its place.
    """
    start = max(0, end - window_bytes)
    scan = Scan(window_start=start, end=end)
    open_calls: dict[str, deque] = {}
    started: dict[str, dict] = {}  # call id -> its `started` record, no `call` record yet
    order: list[dict] = []
    with open(path, 'rb') as handle:
        handle.seek(start)
        if start:
            handle.readline(window_bytes)  # starts inside a line: skip to the next whole one
        position = handle.tell()
        while position < end:
            line = handle.readline(end - position)
            if not line:
                break
            position += len(line)
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line.decode('utf-8', 'surrogateescape'))
            except ValueError:  # not JSON (JSONDecodeError), or not text
                scan.bad_lines += 1
                continue
            if not isinstance(record, dict):
                scan.bad_lines += 1
                continue
            call_id = record.get('call_id')
            if not isinstance(call_id, str):
                continue
            event = record.get('event')
            if event == CALL_EVENT and call_id in started:
                placeholder = started.pop(call_id)  # the same call, now complete
                placeholder.clear()
                placeholder.update(record)
            elif event in (CALL_EVENT, STARTED_EVENT):
                if event == STARTED_EVENT:
                    if call_id in started:
                        continue  # sent again (its executor came back): still one call
                    started[call_id] = record
                open_calls.setdefault(call_id, deque()).append(record)
                order.append(record)
            elif event == RESULT_EVENT and open_calls.get(call_id):
                answered = open_calls[call_id].popleft()
                answered['_answered'] = True
                if answered.get('origin') == ORIGIN_CALL \
                        and record.get('outcome') in (errors.RAN, errors.UNKNOWN):
                    scan.answered.append((answered, record))
                if started.get(call_id) is answered:
                    del started[call_id]
    scan.calls = [record for record in order if not record.pop('_answered', False)]
    return scan


def recovered_result(call: dict, now_wall: float) -> dict:
    """
    Return the audit fields of the answer to a call an earlier dispatcher left unanswered.

    The same fields as every `result` record (outcome unknown: it was accepted, maybe sent,
    maybe run), plus `recovered: true`; `duration_s` is the wall time since it was accepted.
    """
    accepted = call.get('wall_time')
    when, waited = 'at an unknown time', None
    if isinstance(accepted, (int, float)) and not isinstance(accepted, bool):
        when = 'at ' + datetime.datetime.fromtimestamp(
            accepted, datetime.timezone.utc).isoformat(timespec='seconds')
        waited = max(0.0, now_wall - accepted)
    return {
        'call_id': call.get('call_id', ''), 'generation_id': _text(call.get('generation_id')),
        'source': _text(call.get('source')), 'origin': _text(call.get('origin')),
        'name': _text(call.get('name')), 'success': False, 'content': '',
        'error_code': errors.ANSWER_LOST, 'outcome': errors.UNKNOWN, 'recovered': True,
        'error_message': (
            f'the dispatcher stopped without answering this call (accepted {when}; killed or '
            'crashed) and was restarted: the call may or may not have run; check what the '
            'robot did before you retry it'),
        'duration_s': waited}


def kept_results(scan: Scan, now_wall: float) -> dict[str, Earlier]:
    """Return, by call id, the results of ~/call calls that may have acted (newest wins)."""
    kept: dict[str, Earlier] = {}
    found = [*scan.answered, *((call, recovered_result(call, now_wall)) for call in scan.calls
                               if call.get('origin') == ORIGIN_CALL)]
    for call, result in found:
        kept[call['call_id']] = Earlier(
            _text(call.get('name')), arguments_text(call), _text(result.get('error_code')),
            _text(result.get('error_message')), _text(result.get('content')),
            _text(result.get('outcome')))
    return kept


def arguments_text(call: dict) -> str:
    """Return a call record's arguments as the JSON text a ToolResult carries."""
    arguments: Any = call.get('arguments', {})
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError):
        return '{}'


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ''
