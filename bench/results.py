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
Machine-readable benchmark results: one JSON object per line in ``bench/results.jsonl``.

Every benchmark calls ``record`` for each figure it prints: the figure, the floor it is
compared with (measured in the same run), their ratio and the target. ``make bench`` empties
the file and runs every benchmark, so the file always holds one complete run; the documentation
build draws its performance table and plots from it (``docs/_ext/benchplots.py``). Never edit
the file by hand: regenerate it (``make bench``, or one bench alone, which replaces only its
own lines).

``LEROBOT_BENCH_RESULTS`` names another file (empty: write nothing).
"""

import datetime
import json
import os
import pathlib
import platform
import sys
from typing import Any

DEFAULT_PATH = pathlib.Path(__file__).resolve().parent / 'results.jsonl'
_replaced: set[str] = set()


def results_path() -> pathlib.Path | None:
    """Return the results file of this run (None: recording is off)."""
    value = os.environ.get('LEROBOT_BENCH_RESULTS')
    if value is None:
        return DEFAULT_PATH
    return pathlib.Path(value) if value.strip() else None


def _environment() -> dict[str, Any]:
    try:
        from importlib import metadata
        rclpy = metadata.version('ros-rclpy')
    except Exception:  # noqa: BLE001 (outside the venv: no version to give)
        rclpy = ''
    return {'python': platform.python_version(), 'rclpy': rclpy, 'cpus': os.cpu_count(),
            'load': round(os.getloadavg()[0], 2) if hasattr(os, 'getloadavg') else None}


def record(bench: str, metric: str, value: float, unit: str, *, floor: float | None = None,
           floor_label: str = '', target_ratio: float | None = None, target: str = '',
           label: str = '', group: str = '', series: str = '',
           samples: list[float] | None = None, floor_samples: list[float] | None = None,
           ratio: bool = True, **extra: Any) -> dict[str, Any]:
    """
    Append one figure of ``bench`` to the results file and return the record.

    ``metric`` is unique within the bench; ``ratio`` is ``value / floor`` when a floor is given
    (``ratio=False``: a floor shown beside the value whose ratio means nothing, e.g. a floor of
    about zero); ``met`` compares the ratio with ``target_ratio``. ``group`` and ``series``
    place the figure in a plot (e.g. group = a parser family, series = the delta size);
    ``samples`` and ``floor_samples`` (a few hundred values at most) draw its distribution. The
    first record a bench writes in a process removes that bench's older lines, so the file
    holds its latest run.
    """
    entry: dict[str, Any] = {'bench': bench, 'metric': metric, 'label': label or metric,
                             'value': value, 'unit': unit}
    if floor is not None:
        entry.update(floor=floor, floor_label=floor_label,
                     ratio=(value / floor) if floor and ratio else None)
    if target_ratio is not None:
        entry['target_ratio'] = target_ratio
        if entry.get('ratio') is not None:
            entry['met'] = entry['ratio'] <= target_ratio
    if target:
        entry['target'] = target
    if group:
        entry['group'] = group
    if series:
        entry['series'] = series
    if samples:
        entry['samples'] = [round(v, 6) for v in samples]
    if floor_samples:
        entry['floor_samples'] = [round(v, 6) for v in floor_samples]
    entry.update(extra)
    path = results_path()
    if path is None:
        return entry
    if bench not in _replaced:
        _replaced.add(bench)
        kept = []
        if path.exists():
            kept = [line for line in path.read_text(encoding='utf-8').splitlines()
                    if line.strip() and json.loads(line).get('bench') != bench]
        stamp = {'bench': bench, 'metric': '_run', 'label': 'run',
                 'time': datetime.datetime.now(datetime.timezone.utc).isoformat(
                     timespec='seconds'),
                 'argv': sys.argv[1:], **_environment()}
        kept.append(json.dumps(stamp, ensure_ascii=False))
        path.write_text(''.join(line + '\n' for line in kept), encoding='utf-8')
    with path.open('a', encoding='utf-8') as handle:
        handle.write(json.dumps(entry, ensure_ascii=False) + '\n')
    return entry
