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
The dispatcher's audit log across a kill: records before effects, a killed run's calls answered.

`audited_first` writes the audit records of a batch of the core's effects, and waits until the
OS has them, before any other effect of the batch happens (see its docstring).

`Recovery`: at start, answer the calls an earlier dispatcher accepted and never answered.

`dispatch.recovery` finds them (the last 16 MiB of the log, read once at start); this object
answers each once: its `result` record is written to the audit log (and handed to the OS), then
a ToolResult with outcome unknown and error code answer_lost, and its {"role": "tool"} chat
message, are published. It waits for the results topic to have a subscriber (at most
`PUBLISH_WAIT_S`): a result published before anyone listens reaches nobody. A dispatcher
stopped before then leaves them for its next start. The core only gets, through `keep`, the
results of ~/call calls that may have acted (`dispatch.recovery.kept_results`), so a caller's
retry of such a call id after the restart is answered with its result instead of acting again.
"""

import time
from typing import Any, Callable

from builtin_interfaces.msg import Duration
from lerobot_tools_interfaces.msg import ToolResult
from lerobot_tools_ros.dispatch import effects as fx
from lerobot_tools_ros.dispatch.call_ids import Earlier
from lerobot_tools_ros.dispatch.core import POLICY_SOURCE
from lerobot_tools_ros.dispatch.records import AuditLog, tool_message
from lerobot_tools_ros.dispatch.recovery import arguments_text, kept_results, \
    recovered_result, RESULT_EVENT, STARTED_EVENT, started_record, unanswered_calls
from lerobot_tools_ros.untrusted import log_text, ros_string
from rclpy.node import Node

# The longest a restarted dispatcher waits for a results subscriber before answering anyway.
PUBLISH_WAIT_S = 5.0
_CHECK_S = 0.1


def audited_first(audit: AuditLog, effects: list, clock: Any) -> list:
    """
    Write the audit records of a batch of effects; return the other effects, to be applied.

    The records are handed to the OS (`AuditLog.wait_written`) before any other effect of the
    batch happens: a result is in the log before anyone sees it, and a call before it is sent
    (a streamed call sent before its text is complete gets a `started` record), so a kill
    right after leaves no published result unaudited and no sent call unknown to the next
    start (`Recovery`).
    """
    records, rest = [], []
    for effect in effects:
        kind = type(effect)
        if kind is fx.Audit:
            records.append(effect)
            continue
        if kind is fx.Send and effect.call.speech is not None \
                and not effect.call.speech.announced:
            records.append(fx.Audit(STARTED_EVENT, started_record(effect.call)))
        rest.append(effect)
    if not records:
        return effects
    now_ns = clock.now().nanoseconds
    for record in records:
        audit.write(record.event, now_ns, **record.fields)
    if rest:
        audit.wait_written()
    return rest


class Recovery:
    """Find a killed dispatcher's unanswered calls in the audit log, then answer each once."""

    def __init__(self, node: Node, audit: Any, topics: Any, group: Any,
                 keep: Callable[[str, Earlier], None]) -> None:
        self._node, self._audit, self._topics = node, audit, topics
        self._calls: list[dict] = []
        self._timer: Any = None
        self._started = time.monotonic()
        if audit is None or not audit.start_size:
            return
        logger = node.get_logger()
        if not audit.exclusive:
            logger.warning(
                f'audit log {audit.path} is held by another process (two dispatchers with one '
                'audit_log?): calls it left unanswered are not answered by this dispatcher')
            return
        try:
            scan = unanswered_calls(audit.path, audit.start_size)
        except OSError as exc:
            logger.error(f'could not read audit log {audit.path} for calls left unanswered: '
                         f'{exc.strerror or exc}; none are answered')
            return
        for call_id, earlier in kept_results(scan, time.time()).items():
            keep(call_id, earlier)  # a caller's retry of a call that may have acted: its result
        if scan.bad_lines:
            logger.warning(f'audit log {audit.path}: {scan.bad_lines} line(s) that are not JSON '
                           'records were skipped while looking for unanswered calls')
        if not scan.calls:
            return
        self._calls = scan.calls
        window = ('the whole log' if not scan.window_start else
                  f'its last {scan.end - scan.window_start} bytes')
        logger.warning(
            f'audit log {audit.path} ({window}) holds {len(scan.calls)} call(s) accepted by a '
            'dispatcher that stopped without answering them (killed?): answering each once, '
            f'answer_lost (outcome unknown), when lerobot_tools/results has a subscriber or '
            f'after {PUBLISH_WAIT_S:g} s')
        self._timer = node.create_timer(_CHECK_S, self._on_check, callback_group=group)

    @property
    def pending(self) -> int:
        """Count the calls found and not answered yet."""
        return len(self._calls)

    def _on_check(self) -> None:
        if self._topics.results_followed \
                or time.monotonic() - self._started >= PUBLISH_WAIT_S:
            self.answer()

    def answer(self) -> None:
        """Audit, then publish, the answer of every call found (once)."""
        if self._timer is not None:
            self._timer.cancel()
            self._node.destroy_timer(self._timer)
            self._timer = None
        calls, self._calls = self._calls, []
        if not calls:
            return
        clock, audit = self._node.get_clock(), self._audit
        answers = [recovered_result(call, time.time()) for call in calls]
        for answer in answers:
            audit.write(RESULT_EVENT, clock.now().nanoseconds, **answer)
        audit.wait_written()  # in the log (with the OS) before anyone sees it
        for call, answer in zip(calls, answers):
            self._topics.result_message(ToolResult(
                call_id=ros_string(answer['call_id']),
                generation_id=ros_string(answer['generation_id']),
                source=ros_string(answer['source']), origin=ros_string(answer['origin']),
                name=ros_string(answer['name']), arguments=ros_string(arguments_text(call)),
                success=False, content='', error_code=answer['error_code'],
                error_message=ros_string(answer['error_message']), outcome=answer['outcome'],
                duration=_duration(answer['duration_s'])))
            chat = tool_message(answer['call_id'], answer['name'], False, '',
                                answer['error_code'], answer['error_message'])
            if answer['source'] and answer['source'] != POLICY_SOURCE:
                chat['source'] = answer['source']
            self._topics.chat_message(chat)
        self._node.get_logger().warning(
            f'answered {len(calls)} call(s) left unanswered by the previous dispatcher '
            f'(answer_lost, outcome unknown), e.g. '
            f'{log_text(", ".join(a["call_id"] for a in answers[:5]), 300)}')


def _duration(seconds: float | None) -> Duration:
    seconds = max(0.0, seconds or 0.0)
    whole = int(seconds)
    return Duration(sec=whole, nanosec=int((seconds - whole) * 1e9))
