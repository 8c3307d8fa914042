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
Cost of writing every audit record to the OS at once (no buffer), against a 64 KiB buffer.

Baseline, same run: the previous scheme (a text file with a 64 KiB buffer, flushed once a second,
so a crash lost up to a second of records). Project: `AuditLog.write`, one `os.write` of a whole
line per record. Both write the same call/result records to a file in a temporary directory.

    scripts/with_env.sh python bench/audit_bench.py [--records 50000]
"""

import argparse
import json
import pathlib
import sys
import tempfile
import time

from lerobot_tools_ros.dispatch import AuditLog
from results import record as record_result


def record(index: int) -> dict:
    """Return the fields of a typical call record."""
    return {'call_id': f'call_{index:012x}', 'generation_id': f'gen_{index // 2}', 'name': 'say',
            'arguments': {'text': 'Hello from the robot, item number %d.' % index},
            'format': 'hermes'}


def buffered(path: pathlib.Path, count: int) -> float:
    """Write like the previous AuditLog: a 64 KiB buffered text file, flushed each second."""
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


def per_record(path: pathlib.Path, count: int) -> float:
    log = AuditLog(path)
    start = time.perf_counter()
    for index in range(count):
        log.write('call', index, **record(index))
    elapsed = time.perf_counter() - start
    log.close()
    assert log.write_errors == 0
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--records', type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for label, function in (('buffered 64 KiB (before)', buffered),
                                ('os.write per record (now)', per_record)):
            times = [function(pathlib.Path(tmp) / f'{label[:3]}{i}.jsonl', args.records)
                     for i in range(3)]
            results[label] = min(times)
        base = results['buffered 64 KiB (before)']
        for label, elapsed in results.items():
            print(f'{label:<28} {elapsed / args.records * 1e6:7.2f} us/record '
                  f'{args.records / elapsed:>10.0f} records/s  {elapsed / base:5.2f}x')
        now = results['os.write per record (now)']
        record_result('audit_bench', 'per_record', now / args.records * 1e6, 'us',
                      floor=base / args.records * 1e6, floor_label='a 64 KiB buffered file',
                      label=f'audit log: one record written to the OS at once ({args.records} '
                      'records)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
