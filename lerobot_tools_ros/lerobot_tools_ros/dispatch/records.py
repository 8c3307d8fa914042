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
`dispatcher/node.py` writes the audit log.
"""

from collections import Counter, deque
import contextlib
from dataclasses import dataclass, field
import errno
import fcntl
import json
import logging
import math
import os
import pathlib
import select
import stat
import threading
import time
from typing import Any, Callable, Iterable, Iterator

from .. import errors
from ..untrusted import json_line

_LOG = logging.getLogger('lerobot_tools_ros.audit')
_O_CLOEXEC = getattr(os, 'O_CLOEXEC', 0)

# ParseIssue codes that name a tool the catalog lacks; every other issue is a parse_error.
_ISSUE_CODE_TO_ERROR = {'unknown_tool': errors.UNKNOWN_TOOL}


def issue_message(issue: Any, max_input_bytes: int, finish_note: str = '') -> str:
    """Return the result message of a call the parser could not recover, with what to do."""
    message = issue.message
    if issue.code == 'too_large':
        message += (f'; split the generation, or raise the dispatcher parameter '
                    f'max_input_bytes (now {max_input_bytes})')
    return f'{message} ({finish_note})' if finish_note else message


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


def assistant_message(content: str, calls: Iterable[tuple[str, str, dict | str]]) -> dict:
    """
    Build the chat message a policy runtime appends after a generation (OpenAI shape).

    `calls` holds (call_id, name, arguments) for every call the generation made (arguments: the
    decoded object, or the text of ~/call arguments that could not be decoded).
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
    Append-only JSON lines: one per accepted call and one per result, written off the caller.

    ``write`` encodes the record and queues it; a writer thread hands each record to the
    operating system as one ``write`` of a whole line (nothing is buffered in this process
    beyond the queue). ``wait_written`` lets the dispatcher publish a result only once its
    record is with the OS: a kill of the process (even SIGKILL) then loses no record of a result
    anyone saw. There is no fsync: what the OS holds reaches the disk within its write-back
    interval (about 30 s on Linux), so a power loss or a kernel crash can still lose the last
    records; ``close`` syncs the file once.
    Audit I/O never blocks the dispatch thread for long: a disk that hangs or a named pipe whose
    reader stopped reading stalls the writer; ``wait_written`` waits at most ``sync_timeout_s``
    and not at all while the writer is stalled, counting each such result in
    ``published_unwritten``. While the writer is stalled the queue fills up (``max_queued``
    records or ``max_queued_bytes``) and further records are dropped and counted in ``dropped``.
    A failing disk never stops dispatching either: a record the OS refuses is counted in
    ``write_errors``. A record the OS took only part of (a disk that filled up mid-line) is cut
    back (the file truncated to where that record began) or, where the file cannot be cut (a
    pipe, another writer appended since), ended with a newline, before the next record is
    written: every line of the log is then one whole record, or one fragment counted in
    ``write_errors`` that readers skip. A log that ends in a fragment when it is opened (a
    writer killed mid-line) gets a newline first. Both counters are reported through
    ``on_error``, the first at once, then at most once per ``report_interval_s`` with the
    counts since the last report, and both are in the dispatcher's diagnostics. ``close``
    writes what is queued, waiting at most ``close_timeout_s``; records still queued then are
    counted as dropped.
    The log holds an advisory lock (``flock``) on a regular file while it is open:
    ``exclusive`` is False when another process holds it (two dispatchers sharing one file),
    and then that file's unanswered calls are not this dispatcher's to answer.
    ``start_size`` is the file's size when opened (what an earlier run wrote).
    A path that cannot be opened at all (or a named pipe nobody reads) raises
    ``ConfigurationError`` when the log is created.
    """

    def __init__(self, path: str | os.PathLike, *,
                 on_error: Callable[[str], None] | None = None,
                 report_interval_s: float = 10.0, clock=time.monotonic,
                 max_queued: int = 10_000, max_queued_bytes: int = 16 << 20,
                 close_timeout_s: float = 2.0, sync_timeout_s: float = 1.0) -> None:
        self.path = pathlib.Path(path).expanduser()
        self.write_errors = 0  # records the OS refused (full disk, I/O error, closed reader)
        self.dropped = 0  # records never handed to the OS (queue full, or left at close)
        self.written = 0
        self.published_unwritten = 0  # wait_written gave up: published before the OS had it
        self.last_error = ''
        self.exclusive = True
        self.start_size = 0
        self._on_error = on_error or _LOG.error
        self._report_interval_s = report_interval_s
        self._clock = clock
        self._last_report: float | None = None
        self._unreported_errors = 0
        self._unreported_drops = 0
        self._max_queued = max(1, max_queued)
        self._max_queued_bytes = max(1, max_queued_bytes)
        self._close_timeout_s = close_timeout_s
        self._sync_timeout_s = sync_timeout_s
        self._queue: deque[bytes] = deque()
        self._queued_bytes = 0
        self._busy = False  # the writer holds a record it took from the queue
        self._busy_since = 0.0  # time.monotonic() when it took it
        self._closed = False
        self._give_up_at = math.inf  # set by close (monotonic): the writer stops waiting
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # the writer waits for records (or close)
        self._done = threading.Condition(lock)  # callers wait for the writer (flush, barrier)
        self._queued_seq = 0  # records queued so far
        self._handled_seq = 0  # of those, how many the writer finished (written or failed)
        # A record the OS took only part of: where it starts (-1: the file cannot be cut back,
        # end it with a newline) and where it ends; None when the log ends with a whole line.
        self._fragment: tuple[int, int] | None = None
        self._fd: int | None = None
        try:
            if self.path.is_dir():
                raise IsADirectoryError(errno.EISDIR, 'is a directory')
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Non-blocking: a named pipe without a reader fails here (ENXIO) instead of
            # hanging the node's start, and a full pipe lets the writer notice close().
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_CLOEXEC
                               | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            hint = (' (a named pipe must have a reader before the dispatcher starts)'
                    if exc.errno == errno.ENXIO else '')
            raise errors.ConfigurationError(
                f'audit_log {str(self.path)!r} cannot be opened for appending '
                f'({exc.strerror or exc}){hint}; set the audit_log parameter to a writable '
                "file path, or to '' to turn the audit log off") from None
        self._inspect(self._fd)
        self._writer = threading.Thread(target=self._run, name='audit-writer', daemon=True)
        self._writer.start()

    def _inspect(self, fd: int) -> None:
        """Lock a regular file, note its size, and end a fragment an earlier writer left."""
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return
        self.start_size = info.st_size
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.exclusive = False
        if info.st_size:
            with contextlib.suppress(OSError), open(self.path, 'rb') as handle:
                handle.seek(info.st_size - 1)
                if handle.read(1) != b'\n':
                    self._fragment = (-1, -1)  # the writer ends it before the first record

    @property
    def stalled_s(self) -> float:
        """Seconds the writer has been waiting for the OS to take one record (0 when idle)."""
        return time.monotonic() - self._busy_since if self._busy else 0.0

    @property
    def queued(self) -> int:
        """Count the records waiting for the writer."""
        return len(self._queue) + self._busy

    def write(self, event: str, ros_time_ns: int, **fields: Any) -> bool:
        """Queue one record; return False (and count it) if it was dropped. Never blocks."""
        record = {'event': event, 'wall_time': time.time(), 'ros_time_ns': ros_time_ns, **fields}
        data = (json_line(record, default=str) + '\n').encode('utf-8')
        with self._cond:
            if self._closed:
                report = self._count_error('the audit log is closed')
            elif len(self._queue) >= self._max_queued \
                    or self._queued_bytes + len(data) > self._max_queued_bytes:
                self.dropped += 1
                self._unreported_drops += 1
                self.last_error = (
                    f'{self.queued} records ({self._queued_bytes} bytes) wait for a write the '
                    'OS has not finished (a stopped pipe reader, a hung disk?): new records are '
                    'dropped')
                report = self._due_report()
            else:
                self._queue.append(data)
                self._queued_bytes += len(data)
                self._queued_seq += 1
                self._cond.notify()
                return True
        self._send(report)
        return False

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every queued record was handed to the OS (at most ``timeout_s``)."""
        with self._done:
            return self._done.wait_for(lambda: not self._queue and not self._busy, timeout_s)

    def wait_written(self) -> bool:
        """
        Wait until the records queued so far were handed to the OS (or refused by it).

        The dispatcher calls this before it publishes a result (or sends a call), so what anyone
        saw is in the log even if the process is killed right after. Waits at most
        ``sync_timeout_s``, and not at all while the writer is stalled on one record for that
        long already (a hung disk costs one wait, not one per result); returns False then and
        counts it in ``published_unwritten``.
        """
        with self._done:
            target = self._queued_seq
            if self._handled_seq >= target:
                return True
            stalled = time.monotonic() - self._busy_since if self._busy else 0.0
            if stalled < self._sync_timeout_s and self._done.wait_for(
                    lambda: self._handled_seq >= target, self._sync_timeout_s - stalled):
                return True
            self.published_unwritten += 1
            return False

    def close(self) -> None:
        """Write what is queued (waiting at most ``close_timeout_s``), then stop the writer."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._give_up_at = time.monotonic() + self._close_timeout_s
            self._cond.notify_all()
        self._writer.join(self._close_timeout_s + 0.5)
        with self._cond:
            left = len(self._queue)  # a record the writer holds is counted by the writer
            if left:
                self._queued_bytes -= sum(map(len, self._queue))
                self._queue.clear()
                self.dropped += left
                self._unreported_drops += left
                self.last_error = (f'{left} record(s) were still waiting for the OS when the '
                                   f'log was closed ({self._close_timeout_s:g} s wait)')
            self._done.notify_all()  # nothing more will be written: waiters stop waiting
            report = self._due_report(force=True)
        self._send(report)

    # -- the writer thread -----------------------------------------------------------------------

    def _run(self) -> None:
        fd = self._fd  # opened before this thread starts; closed by it at the end
        if fd is None:
            raise RuntimeError(f'audit log {self.path}: the writer started without a file')
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    break
                data = self._queue.popleft()
                self._busy = True
                self._busy_since = time.monotonic()
            reason = self._write_all(fd, data)
            with self._cond:
                self._queued_bytes -= len(data)
                if reason:
                    report = self._count_error(reason)
                else:
                    self.written += 1
                    report = None
            self._send(report)
            with self._cond:
                self._busy = False  # only now: flush() returns after the report went out
                self._handled_seq += 1
                self._done.notify_all()
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(fd)  # the one sync: what the OS holds reaches the disk at close
            with contextlib.suppress(OSError):
                os.close(fd)

    def _write_all(self, fd: int, data: bytes) -> str:
        """Write one whole line; return '' or why it could not be (the writer thread only)."""
        if self._fragment is not None and not self._end_fragment(fd):
            return ('an earlier record written only in part could not be cut back or ended '
                    '(is the disk still full?)')
        view, done = memoryview(data), 0
        while done < len(data):
            try:
                done += os.write(fd, view[done:])
            except BlockingIOError:  # a pipe whose reader is behind: wait, but not past close
                if not self._wait_writable(fd):
                    reason = (f'its reader stopped reading; gave up {self._close_timeout_s:g} '
                              's after close')
                    break
                continue
            except OSError as exc:
                reason = exc.strerror or str(exc)
                break
        else:
            return ''
        if done:
            # Cut mid-line (a disk that filled up): cut the fragment back (or end it) so that
            # the next record starts on a line of its own; done now if the OS lets us, else
            # before the next record.
            try:
                end = os.lseek(fd, 0, os.SEEK_CUR)
                self._fragment = (end - done, end)
            except OSError:  # a pipe: it can only be ended
                self._fragment = (-1, -1)
            ended = self._end_fragment(fd)
            reason += (f' (only {done} of {len(data)} bytes written; '
                       f'{ended or "the fragment is cut back before the next record"})')
        return reason

    def _end_fragment(self, fd: int) -> str:
        """Truncate the log where a partly written record began, else end it with a newline."""
        if self._fragment is None:
            return 'nothing to cut'
        start, end = self._fragment
        try:
            if start >= 0 and os.fstat(fd).st_size == end:  # nobody appended after it
                os.ftruncate(fd, start)
                done = 'cut back'
            elif os.write(fd, b'\n') == 1:
                done = 'ended with a newline'
            else:
                return ''
        except OSError:
            return ''
        self._fragment = None
        return done

    def _wait_writable(self, fd: int) -> bool:
        while time.monotonic() < self._give_up_at:
            with contextlib.suppress(OSError, ValueError):
                if select.select([], [fd], [], 0.2)[1]:
                    return True
        return False

    # -- reports (rate limited; sent outside the lock) -----------------------------------------

    def _count_error(self, reason: str) -> str | None:
        self.write_errors += 1
        self._unreported_errors += 1
        self.last_error = reason
        return self._due_report()

    def _due_report(self, *, force: bool = False) -> str | None:
        """Return the report of losses not reported yet, if one is due (under the lock)."""
        if not self._unreported_errors and not self._unreported_drops:
            return None
        now = self._clock()
        if not force and self._last_report is not None \
                and now - self._last_report < self._report_interval_s:
            return None
        parts = []
        if self._unreported_errors:
            parts.append(f'{self._unreported_errors} record(s) could not be written '
                         f'({self.last_error}); {self.write_errors} lost in total')
        if self._unreported_drops:
            parts.append(f'{self._unreported_drops} record(s) dropped, never written '
                         f'({self.last_error}); {self.dropped} dropped in total')
        self._unreported_errors = self._unreported_drops = 0
        self._last_report = now
        return f'audit log {self.path}: {"; ".join(parts)}. Dispatching continues without them.'

    def _send(self, report: str | None) -> None:
        if report is None:
            return
        try:
            self._on_error(report)
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
