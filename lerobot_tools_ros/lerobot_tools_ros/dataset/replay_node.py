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
Replay an annotated LeRobot episode as policy output, through the running dispatcher.

At each frame's timestamp (divided by `rate`), the frame's interjections go out on
`lerobot_tools/interjections` and its assistant tool calls as one generation on the dispatcher's
stream topic (a `TextChunk` with its own generation_id, final), written in a model format.
Every ToolResult of those generations is matched to the call it answers; when every call has
one (or `result_timeout_s` passed after the last step), the replay is done: run on its own, the
node logs the table and exits with status 1 if any call failed. An episode marker (`start`,
then `end`) brackets the replay on `lerobot_tools/episode_markers`, so a dispatcher with
`record_events` logs where the episode began. What to publish when, and the matching, is in
`dataset.replay` (pure).
"""

import os
import sys
import time
from typing import Any

from lerobot_tools_interfaces.msg import TextChunk, ToolResult
from lerobot_tools_ros import errors, names
from lerobot_tools_ros.catalog import CatalogError, ToolCatalog
from lerobot_tools_ros.dataset import episodes as dataset_episodes
from lerobot_tools_ros.dataset.language import LANGUAGE_COLUMNS, LanguageRowError
from lerobot_tools_ros.dataset.markers import episode_marker_text
from lerobot_tools_ros.dataset.render import FORMATS, RenderError
from lerobot_tools_ros.dataset.replay import plan_replay, ReplayPlan, ResultBook, Row, Schedule
from lerobot_tools_ros.nodes.params import declare_spec, refuse_unknown_parameters
from lerobot_tools_ros.nodes.runner import report_start_failure, spin_until, StopOnSignal
from lerobot_tools_ros.parameters.declarations import REPLAY
from lerobot_tools_ros.untrusted import log_text
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String

# Seconds the publishers must have been matched before the first step: discovery completes on
# both sides a little apart, and a generation sent before the dispatcher's reader matched
# would be lost.
_SETTLE_S = 0.5
_TICK_S = 0.01


def load_plan(dataset: str, episode: int, fmt: str, prose: bool) -> ReplayPlan:
    """Read the episode and plan it; every problem is one ConfigurationError naming it."""
    if fmt not in FORMATS:
        raise errors.ConfigurationError(f"parameter 'format' must be one of "
                                        f"{', '.join(FORMATS)}, got {fmt!r}")
    try:
        root = dataset_episodes.dataset_root(dataset)
        catalog = ToolCatalog.load(root)
        found = dataset_episodes.read_episode(root, episode)
        if not found.has_language:
            raise errors.ConfigurationError(
                f'episode {episode} of {root} has no language columns ('
                f'{" or ".join(LANGUAGE_COLUMNS)}): nothing to replay. Annotate it first '
                "(LeRobot's annotation pipeline), or record a run into it with "
                '`lerobot-tools-ros dataset add-events`')
        return plan_replay(found, catalog, fmt, prose=prose)
    except (dataset_episodes.DatasetError, LanguageRowError, RenderError, CatalogError) as exc:
        raise errors.ConfigurationError(str(exc)) from None
    except ImportError as exc:
        raise errors.ConfigurationError(f'reading datasets needs pyarrow ({exc}); pip install '
                                        'pyarrow') from None


class Replay(Node):
    """Publish an episode's calls and interjections at its frames' times; collect results."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('replay', **kwargs)
        # Declared from parameters.declarations.REPLAY, each value checked there.
        values = {name: declare_spec(self, spec) for name, spec in REPLAY.items()}
        dataset, fmt, prose = values['dataset'], values['format'], values['prose']
        self.episode, self.rate = values['episode'], values['rate']
        self.result_timeout_s = values['result_timeout_s']
        self.start_delay_s = values['start_delay_s']
        self.exit_when_done = values['exit_when_done']
        stream_topic = values['stream_topic']
        from lerobot_tools_ros.catalog import SAMPLE_DATASET
        self.plan = load_plan(dataset or str(SAMPLE_DATASET), self.episode, fmt, prose)
        self.book = ResultBook()
        self._schedule = Schedule(self.plan.steps, self.rate, self.plan.origin)
        self._nonce = os.urandom(3).hex()
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self._text = self.create_publisher(TextChunk, stream_topic, reliable)
        self._interjections = self.create_publisher(String, names.INTERJECTION_TOPIC, reliable)
        self._markers = self.create_publisher(String, names.EPISODE_MARKER_TOPIC, reliable)
        self._results = self.create_subscription(ToolResult, names.RESULTS_TOPIC,
                                                 self._on_result, reliable)
        self.state = 'waiting'  # -> running -> draining -> done
        self._matched_at: float | None = None
        self._started: float | None = None
        self._drain_deadline = 0.0
        self._timer = self.create_timer(_TICK_S, self._tick)
        self.get_logger().info(
            f'replaying episode {self.episode} ({len(self.plan.steps)} steps, '
            f'{self.plan.calls} calls, {self.plan.duration_s:.2f} s at rate {self.rate:g}) to '
            f'{self._text.topic_name} once the dispatcher listens')
        for reason in self.plan.skipped:
            self.get_logger().info(f'not replayed: {log_text(reason, 300)}')

    @property
    def done(self) -> bool:
        return self.state == 'done'

    @property
    def failed(self) -> list[Row]:
        return self.book.failures()

    def _tick(self) -> None:
        now = time.monotonic()
        if self.state == 'waiting':
            if not (self._text.get_subscription_count() and self._results.get_publisher_count()):
                self._matched_at = None
                return
            self._matched_at = self._matched_at or now
            if now - self._matched_at < _SETTLE_S + max(0.0, self.start_delay_s):
                return
            self._started = now
            # The marker states the start on this clock: a recorded call can then never look
            # earlier than the frame it was replayed from, however late the marker arrives.
            self._markers.publish(String(data=episode_marker_text(
                'start', self.episode, self.rate, time.time())))
            self.state = 'running'
        if self.state == 'running':
            started = self._started
            if started is None:  # (set when it left 'waiting')
                raise RuntimeError('replay: running without a start time')
            for step in self._schedule.due(now - started):
                self._publish(step)
            if self._schedule.finished:
                self.state = 'draining'
                self._drain_deadline = now + self.result_timeout_s
        if self.state == 'draining' and (self.book.complete or now >= self._drain_deadline):
            self._markers.publish(String(data=episode_marker_text('end', self.episode,
                                                                  self.rate)))
            self.state = 'done'
            self._timer.cancel()
            self.get_logger().info(
                f'replay done: {self.book.received} result(s) for {self.book.expected} '
                f'call(s); {len(self.failed)} failed')

    def _publish(self, step) -> None:
        for text in step.interjections:
            self._interjections.publish(String(data=text))
            self.book.interjections.append((step, text))
        if not step.publishes_generation:
            return
        generation_id = f'replay-{self._nonce}-{self.episode}-{step.frame_index}'
        self.book.expect(generation_id, step)
        self._text.publish(TextChunk(generation_id=generation_id, text=step.text, final=True))

    def _on_result(self, msg: ToolResult) -> None:
        self.book.result(msg.generation_id, name=msg.name, arguments=msg.arguments,
                         success=msg.success, error_code=msg.error_code,
                         error_message=msg.error_message, content=msg.content)


def format_table(rows: list[Row]) -> str:
    """Return the replay table: frame, time, call, result (one safe line per row)."""
    header = f'{"frame":>6}  {"time":>7}  {"call":<56} result'
    lines = [header, '-' * len(header)]
    for row in rows:
        call = log_text(row.call, 10_000)
        call = call if len(call) <= 56 else call[:53] + '...'
        outcome = row.outcome + (f': {log_text(row.detail, 150)}'
                                 if row.failed or row.outcome == errors.DUPLICATE else '')
        lines.append(f'{row.frame_index:>6}  {row.timestamp:7.3f}  {call:<56} {outcome}')
    return '\n'.join(lines)


def main(args: list[str] | None = None) -> int:
    """Run the replay node until it is done (or Ctrl-C); status 1 if a call failed."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = StopOnSignal()
    node = None
    try:
        try:
            node = Replay()
            refuse_unknown_parameters(node)  # a misspelled name would be ignored
        except Exception as exc:  # noqa: B902 - reported, then exit (78: configuration)
            return report_start_failure('replay', exc)
        stop.wake_through(node)
        node.create_timer(0.1, lambda: stop.event.set() if node.done and node.exit_when_done
                          else None)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            spin_until(executor, stop.event, 'replay')
        finally:
            executor.remove_node(node)
            executor.shutdown(timeout_sec=0.0)
        print(format_table(node.book.rows()), flush=True)
        if not node.done:  # stopped (Ctrl-C, launch shutdown): only a failed call is an error
            print(f'[replay] stopped before the end: {node.book.received} of '
                  f'{node.plan.calls} result(s)', file=sys.stderr)
        return 1 if node.failed else 0
    except (KeyboardInterrupt, ExternalShutdownException):
        return 130
    finally:
        stop.restore()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
