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
What the dispatcher reports on /diagnostics, decided without ROS.

`statuses()` turns the core's counters into plain `Status` values; the node only converts them
to `diagnostic_msgs/DiagnosticStatus` (OK or WARN) and publishes them once a second.
"""

from dataclasses import dataclass, field
from typing import Callable

from .core import DispatchCore, NOT_IN_CATALOG
from .input_loss import InputLoss
from .records import AuditLog, ToolStats


@dataclass(slots=True)
class Status:
    """One diagnostic status: `warn` False means OK."""

    name: str
    message: str
    warn: bool = False
    hardware_id: str = ''
    values: dict = field(default_factory=dict)


# Above this many catalog tools, only the tools called so far get a status of their own (and
# one status counts the rest): at 10,000 tools a status for each, once a second, kept the
# dispatch thread busy for most of every second.
MAX_TOOL_STATUSES = 100
# An audit writer waiting this long for one write is reported (records queue up meanwhile).
AUDIT_STALL_S = 1.0


def statuses(core: DispatchCore, audit: AuditLog | None, available: Callable[[str], bool],
             service: Callable[[str], str], input_loss: InputLoss | None = None,
             max_tools: int = MAX_TOOL_STATUSES) -> list[Status]:
    """Return the audit log's, the input's, the streams' and each tool's status."""
    found = []
    if input_loss is not None:
        lost = input_loss.total_lost
        found.append(Status(
            'input', f'{lost} input message(s) lost before they were taken (queue overflow)'
            if lost else 'ok', bool(lost), values=input_loss.values()))
    if audit is not None:
        lost, stalled = audit.write_errors + audit.dropped, audit.stalled_s
        message = audit.last_error if lost else 'ok'
        if stalled >= AUDIT_STALL_S:
            message = (f'the writer has waited {stalled:.0f} s for the OS to take a record '
                       f'({audit.queued} queued; a stopped pipe reader, a hung disk?)'
                       + (f'; {message}' if lost else ''))
        found.append(Status('audit_log', message, bool(lost) or stalled >= AUDIT_STALL_S,
                            str(audit.path), {
                                'write_failures': audit.write_errors, 'dropped': audit.dropped,
                                'queued': audit.queued, 'stalled_s': f'{stalled:.1f}',
                                # results published (calls sent) before their record reached the OS
                                'published_unwritten': audit.published_unwritten}))
    streams, held, evicted = core.streams.open_count, core.streams.held, core.streams.evicted
    refused, lost = core.streams.chunks_refused, core.streams.chunks_lost
    problems = [text for count, text in (
        (evicted, 'streams were finished early (max_open_streams, max_stream_bytes)'),
        (lost, 'numbered chunks never arrived (gaps in TextChunk.index)'),
        (refused, 'chunks of streams already ended were refused')) if count]
    found.append(Status(
        'streams', '; '.join(problems) or 'ok', bool(problems),
        values={'open': streams, 'held_chars': held, 'finished_early': evicted,
                'chunks_lost': lost, 'chunks_refused': refused}))
    tools = core.catalog.names
    if len(tools) > max_tools:
        called = [name for name in tools if name in core.stats]
        found.append(Status('catalog', f'{len(tools)} tools: statuses only for the '
                                       f'{len(called)} called so far (more than {max_tools})',
                            values={'tools': len(tools), 'called': len(called)}))
        tools = called
    for name in [*tools, NOT_IN_CATALOG]:
        stats = core.stats.get(name) or ToolStats()
        unknown = name == NOT_IN_CATALOG
        if unknown and not stats.calls:
            continue
        ready = not unknown and available(name)
        p50, p99 = stats.percentile_ms(0.5), stats.percentile_ms(0.99)
        values = {
            'calls': stats.calls, 'successes': stats.successes,
            'latency_p50_ms': f'{p50:.2f}' if p50 is not None else '',
            'latency_p99_ms': f'{p99:.2f}' if p99 is not None else '',
            'executor_available': ready, 'enabled': core.enabled,
            **{f'errors.{code}': count for code, count in sorted(stats.errors_by_code.items())},
            **{f'benign.{code}': count for code, count in sorted(stats.benign_by_code.items())},
        }
        if unknown:
            found.append(Status(name, 'calls of unknown tools or unparseable calls', True,
                                values=values))
            continue
        message = ('ok' if ready else 'executor unavailable') + (
            '' if core.enabled else ', paused')
        found.append(Status(name, message, not (ready and core.enabled), service(name), values))
    return found
