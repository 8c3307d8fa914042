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
What the audit log costs the dispatch thread: a record handed to the OS before each result.

Floor, same run: ``os.write`` of the encoded line in the caller's own thread (the least it can
cost to put a record in the OS; it blocks the caller on a hung disk, which the dispatcher must
not). Project: ``AuditLog.write`` then ``wait_written`` for every record, as the dispatcher does
before it publishes a result (or sends a call): encode, queue, the writer thread's ``os.write``,
and the hand-back. Also printed: ``write`` alone (queued; what a batch of records costs the
caller before its one wait), timed up to ``close`` so every record was written, and the 64 KiB
buffered file of the first design (a crash lost up to a second of records).

    scripts/with_env.sh python bench/audit_bench.py [--records 20000]
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

from lerobot_tools_ros.dispatch import AuditLog
from lerobot_tools_ros.untrusted import json_line
from results import record as record_result


def record(index: int) -> dict:
    """Return the fields of a typical call record."""
    return {'call_id': f'call_{index:012x}', 'generation_id': f'gen_{index // 2}', 'name': 'say',
            'arguments': {'text': 'Hello from the robot, item number %d.' % index},
            'format': 'hermes'}


def buffered(path: pathlib.Path, count: int) -> float:
    """Write like the first AuditLog: a 64 KiB buffered text file, flushed each second."""
    start = time.perf_counter()
    last_flush = start
    with open(path, 'a', encoding='utf-8', buffering=1 << 16) as handle:
        for index in range(count):
            line = json.dumps({'event': 'call', 'wall_time': time.time(), 'ros_time_ns': index,
                               **record(index)}, ensure_ascii=False, default=str)
            handle.write(line + '\n')
            now = time.perf_counter()
            if now - last_flush >= 1.0:
                handle.flush()
                last_flush = now
    return time.perf_counter() - start


def direct(path: pathlib.Path, count: int) -> float:
    """Encode each record and os.write it in this thread (the floor)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    start = time.perf_counter()
    for index in range(count):
        line = json_line({'event': 'call', 'wall_time': time.time(), 'ros_time_ns': index,
                          **record(index)}, default=str) + '\n'
        os.write(fd, line.encode('utf-8'))
    elapsed = time.perf_counter() - start
    os.close(fd)
    return elapsed


def queued(path: pathlib.Path, count: int) -> float:
    """AuditLog.write of every record, timed until close has written them all."""
    log = AuditLog(path, max_queued=count + 1, max_queued_bytes=1 << 30)
    start = time.perf_counter()
    for index in range(count):
        log.write('call', index, **record(index))
    log.close()
    elapsed = time.perf_counter() - start
    assert (log.written, log.write_errors, log.dropped) == (count, 0, 0)
    return elapsed


def written_each(path: pathlib.Path, count: int) -> float:
    """AuditLog.write then wait_written for each record (the dispatcher, before a result)."""
    log = AuditLog(path, sync_timeout_s=10.0)
    start = time.perf_counter()
    for index in range(count):
        log.write('call', index, **record(index))
        log.wait_written()
    elapsed = time.perf_counter() - start
    log.close()
    assert (log.written, log.write_errors, log.dropped, log.published_unwritten) == (
        count, 0, 0, 0)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--records', type=int, default=20_000)
    args = parser.parse_args()
    labels = (('os.write in the caller (floor)', direct),
              ('write + wait_written (now)', written_each),
              ('write, queued, until close', queued),
              ('buffered 64 KiB (first design)', buffered))
    samples: dict[str, list[float]] = {label: [] for label, _ in labels}
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(3):  # interleaved: load changes affect every variant alike
            for label, function in labels:
                path = pathlib.Path(tmp) / f'{len(samples[label])}{function.__name__}.jsonl'
                samples[label].append(function(path, args.records) / args.records * 1e6)
    best = {label: min(values) for label, values in samples.items()}
    base = best['os.write in the caller (floor)']
    for label, value in best.items():
        print(f'{label:<32} {value:7.2f} us/record {1e6 / value:>10.0f} records/s  '
              f'{value / base:5.2f}x')
    now = best['write + wait_written (now)']
    record_result('audit_bench', 'written_before_result', now, 'us', floor=base,
                  floor_label="os.write of the line in the caller's thread",
                  label=f'audit log: a record written to the OS before each result '
                        f'({args.records} records)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
