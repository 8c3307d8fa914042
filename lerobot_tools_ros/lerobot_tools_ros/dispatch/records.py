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
Records of the dispatcher: rate limits, statistics, chat messages, the audit log.

Kept free of rclpy so they are tested without a ROS graph and reused by the `audit export`
command; `dispatch.core` uses them (passing the time: the core reads no clock), and
`nodes/dispatcher.py` writes the audit log.
"""

from collections import Counter, deque
import contextlib
from dataclasses import dataclass, field
import errno
import json
import logging
import os
import pathlib
import threading
import time
from typing import Any, Callable, Iterable, Iterator

from .. import errors
from ..untrusted import json_line

_LOG = logging.getLogger('lerobot_tools_ros.audit')
_O_CLOEXEC = getattr(os, 'O_CLOEXEC', 0)

# ParseIssue codes that name a tool the catalog lacks; every other issue is a parse_error.
_ISSUE_CODE_TO_ERROR = {'unknown_tool': errors.UNKNOWN_TOOL}


def error_code_for_issue(issue_code: str) -> str:
    """Return the ToolResult error code for a parser issue."""
    return _ISSUE_CODE_TO_ERROR.get(issue_code, errors.PARSE_ERROR)


class TokenBucket:
    """
    Allow `rate_hz` calls per second on average with bursts of up to `burst`.

    A rate of 0 (or less) means unlimited. Times are seconds on any monotonic clock, passed in.
    """

    def __init__(self, rate_hz: float, burst: int, now: float) -> None:
        self.rate_hz = float(rate_hz)
        self.capacity = max(1.0, float(burst))
        self._tokens = self.capacity
        self._last = now

    def try_acquire(self, now: float) -> bool:
        """Take one token if there is one at `now`."""
        if self.rate_hz <= 0:
            return True
        self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate_hz)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def retry_after_s(self) -> float:
        """Seconds until the next call would be allowed."""
        if self.rate_hz <= 0 or self._tokens >= 1.0:
            return 0.0
        return (1.0 - self._tokens) / self.rate_hz


@dataclass
class ToolStats:
    """Counters and recent latencies of one tool, for /diagnostics."""

    calls: int = 0
    successes: int = 0
    errors_by_code: Counter = field(default_factory=Counter)
    # Benign outcomes (duplicate): handled as intended, neither success nor failure.
    benign_by_code: Counter = field(default_factory=Counter)
    latencies_s: deque = field(default_factory=lambda: deque(maxlen=1000))

    def record(self, error_code: str, latency_s: float | None) -> None:
        self.calls += 1
        if error_code in errors.BENIGN_CODES:
            self.benign_by_code[error_code] += 1
        elif error_code:
            self.errors_by_code[error_code] += 1
        else:
            self.successes += 1
        if latency_s is not None:
            self.latencies_s.append(latency_s)

    def percentile_ms(self, q: float) -> float | None:
        """Return the q-quantile (0..1) of recent latencies in ms, or None without samples."""
        if not self.latencies_s:
            return None
        ordered = sorted(self.latencies_s)
        index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
        return ordered[index] * 1e3


def assistant_message(content: str, calls: Iterable[tuple[str, str, dict]]) -> dict:
    """
    Build the chat message a policy runtime appends after a generation (OpenAI shape).

    `calls` holds (call_id, name, arguments) for every call the generation made.
    """
    message: dict[str, Any] = {'role': 'assistant', 'content': content}
    tool_calls = [{'id': call_id, 'type': 'function',
                   'function': {'name': name, 'arguments': arguments}}
                  for call_id, name, arguments in calls]
    if tool_calls:
        message['tool_calls'] = tool_calls
    return message


def tool_message(call_id: str, name: str, success: bool, content: str, error_code: str,
                 error_message: str) -> dict:
    """Build the {"role": "tool"} message answering one call; errors are stated for the model."""
    text = content if success else f'error ({error_code}): {error_message}'
    return {'role': 'tool', 'name': name, 'tool_call_id': call_id, 'content': text}


class AuditLog:
    """
    Append-only JSON lines: one per accepted call and one per result.

    Each record is handed to the operating system as one ``write`` of a whole line as soon as it
    is written (no buffer in this process), so a crash of the dispatcher loses no record (a power
    loss can still lose what the OS had not stored). A failing disk never stops dispatching: a
    record that cannot be written is counted in ``write_errors`` and reported through ``on_error``
    (at most once per ``report_interval_s``, with the count of failures since the last report).
    A path that cannot be opened at all raises ``ConfigurationError`` when the log is created.
    """

    def __init__(self, path: str | os.PathLike, *,
                 on_error: Callable[[str], None] | None = None,
                 report_interval_s: float = 10.0, clock=time.monotonic) -> None:
        self.path = pathlib.Path(path).expanduser()
        self.write_errors = 0
        self.last_error = ''
        self._on_error = on_error or _LOG.error
        self._report_interval_s = report_interval_s
        self._clock = clock
        self._last_report: float | None = None
        self._unreported = 0
        self._lock = threading.Lock()
        self._fd: int | None = None
        try:
            if self.path.is_dir():
                raise IsADirectoryError(errno.EISDIR, 'is a directory')
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_CLOEXEC,
                               0o644)
        except OSError as exc:
            raise errors.ConfigurationError(
                f'audit_log {str(self.path)!r} cannot be opened for appending '
                f'({exc.strerror or exc}); set the audit_log parameter to a writable file '
                "path, or to '' to turn the audit log off") from None

    def write(self, event: str, ros_time_ns: int, **fields: Any) -> bool:
        """Append one record; return False (and count it) if it could not be written."""
        record = {'event': event, 'wall_time': time.time(), 'ros_time_ns': ros_time_ns, **fields}
        data = (json_line(record, default=str) + '\n').encode('utf-8')
        with self._lock:
            if self._fd is None:
                return self._failed('the audit log is closed')
            try:
                written = os.write(self._fd, data)
            except OSError as exc:
                return self._failed(exc.strerror or str(exc))
            if written != len(data):
                # A disk that filled up mid-line: end the fragment so the next record starts on
                # a line of its own (readers skip the cut line).
                self._write_newline()
                return self._failed(f'only {written} of {len(data)} bytes written (disk full?)')
            return True

    def flush(self) -> None:
        """Do nothing: every record already went to the OS when it was written (kept for API)."""

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._report(force=True)

    def _write_newline(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._fd, b'\n')

    def _failed(self, reason: str) -> bool:
        self.write_errors += 1
        self._unreported += 1
        self.last_error = reason
        self._report()
        return False

    def _report(self, *, force: bool = False) -> None:
        """Report failures not reported yet: the first at once, then at most once per interval."""
        if not self._unreported:
            return
        now = self._clock()
        if not force and self._last_report is not None \
                and now - self._last_report < self._report_interval_s:
            return
        count, self._unreported, self._last_report = self._unreported, 0, now
        message = (f'audit log {self.path}: {count} record(s) could not be written '
                   f'({self.last_error}); {self.write_errors} lost in total. Dispatching '
                   'continues without them.')
        try:
            self._on_error(message)
        except Exception:  # noqa: B902 - a broken reporter must not stop dispatching
            _LOG.exception('the audit error callback failed')


def read_audit_log(path: str | os.PathLike,
                   bad_lines: list[str] | None = None) -> Iterator[dict]:
    """
    Yield the records of an audit log.

    A line that is not JSON (one cut short when the disk filled up) raises ``ValueError`` naming
    it, unless ``bad_lines`` is given: then it is described there and skipped.
    """
    with open(path, encoding='utf-8', errors='surrogateescape') as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                problem = f'{path}:{number}: not a JSON line ({exc.msg})'
                if bad_lines is None:
                    raise ValueError(problem) from None
                bad_lines.append(problem)
                continue
            if isinstance(record, dict):
                yield record


def lerobot_atoms(records: Iterable[dict], *, include_failed: bool = False,
                  include_callers: bool = False) -> list[dict]:
    """
    Turn audit records into LeRobot `language_events` atoms, one per generation.

    Each atom is `{"role": "assistant", "content": null, "style": null, "camera": null,
    "tool_calls": [...]}` plus `timestamp` (wall time of the generation's first call) and
    `ros_time_ns`, ready to be merged into a dataset by time. Only calls that succeeded are
    exported unless `include_failed`: a dataset should not teach a policy its rejected calls.
    Only the policy's own calls (`origin` policy_text or policy_stream, what the dispatcher
    saw, not the `source` a ~/call caller claims) are exported unless `include_callers`.
    """
    records = list(records)
    succeeded = {r.get('call_id') for r in records
                 if r.get('event') == 'result' and r.get('success')}
    atoms: dict[str, dict] = {}
    for record in records:
        if record.get('event') != 'call':
            continue
        if not include_failed and record.get('call_id') not in succeeded:
            continue
        if not include_callers and not _from_policy(record):
            continue
        key = record.get('generation_id') or record.get('call_id', '')
        atom = atoms.get(key)
        if atom is None:
            atom = atoms[key] = {
                'timestamp': record.get('wall_time'), 'ros_time_ns': record.get('ros_time_ns'),
                'role': 'assistant', 'content': None, 'style': None, 'camera': None,
                'tool_calls': []}
        atom['tool_calls'].append({'type': 'function', 'function': {
            'name': record.get('name'), 'arguments': record.get('arguments', {})}})
    return sorted(atoms.values(), key=lambda atom: atom['timestamp'] or 0)


def _from_policy(record: dict) -> bool:
    """Tell whether the dispatcher parsed this call from the policy's own output."""
    origin = record.get('origin')
    if origin is None:  # a log written before origins were recorded
        return record.get('source', 'policy') == 'policy'
    return origin in ('policy_text', 'policy_stream')
