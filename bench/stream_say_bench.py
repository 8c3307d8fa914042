#!/usr/bin/env python3

"""
Benchmark stream_speech: a say heard while the policy still writes it (issue 32).

A scripted policy (this process) streams a three-sentence ``say`` as numbered TextChunks of 4
characters at 20 and 40 tokens/s (a 4-character delta per token), in three families (LeRobot
marker, Hermes JSON, Qwen3-Coder XML), to a dispatcher with ``stream_speech:=true``, a
tool_server hosting ``say`` (espeak-ng) and a speaker (WAV sink, not paced), all real
processes from the packaged parameters file. Per case it reports:

- **first sentence -> first audio**: from publishing the delta that completes the first
  sentence (the whitespace after its period: the segment rule needs it) to the first
  AudioChunk of the utterance on /speaker/audio (the speaker's input, which the WAV sink
  writes as it comes). Floor, measured in the same run, alternating: the TTS engine's own time
  to first audio for that sentence alone (espeak-ng's ``synthesize()`` in this process).
  Target: p50 <= floor p50 + 20 ms.
- **first audio before the closing markup**: seconds between the first AudioChunk and the
  publication of the delta that completes the call (must be positive: audio first).

Gaps between segments at the sink need a paced sink (ALSA device, PulseAudio); with the WAV
sink used here audio is written as fast as it comes, so gaps are not measured.

Run from the repository root with the venv active and ``install/setup.bash`` sourced
(``. scripts/env.sh``)::

    python bench/stream_say_bench.py [--runs 10]
"""

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'lerobot_tools_ros'))
sys.path.insert(0, str(REPO / 'bench'))

from tts_baseline import measure_backend_first_audio, percentile  # noqa: E402
from processes import node_env, parameters, start_node, stop  # noqa: E402, I100
from results import record  # noqa: E402, I100

BENCH = 'stream_say'
TARGET_EXTRA_MS = 20.0
FIRST = 'Hello there, I am the robot. '
TEXT = FIRST + 'I will pick up the red cube now. Then I will put it in the box.'
FAMILIES = {
    'lerobot_marker': ('Plan: pick the cube.\n<say>', '</say>'),
    'hermes': ('<tool_call>\n{"name": "say", "arguments": {"text": "', '"}}\n</tool_call>'),
    'qwen3_coder_xml': ('<tool_call>\n<function=say>\n<parameter=text>\n',
                        '\n</parameter>\n</function>\n</tool_call>'),
}
RATES = (20.0, 40.0)  # tokens (4-character deltas) per second
PARAMS_FILE = REPO / 'lerobot_tools_ros' / 'config' / 'lerobot_tools.yaml'


class Policy:
    """The measuring node: publishes the generation, timestamps AudioChunks and results."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from lerobot_tools_interfaces.msg import AudioChunk, TextChunk, ToolResult

        self.TextChunk = TextChunk
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('stream_say_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self.first_audio: dict[str, float] = {}
        self.results: list[Any] = []
        self.node.create_subscription(AudioChunk, '/speaker/audio', self._on_audio,
                                      QoSProfile(depth=200,
                                                 reliability=ReliabilityPolicy.RELIABLE))
        self.node.create_subscription(ToolResult, '/lerobot_tools/results',
                                      self.results.append, reliable)
        self.pub = self.node.create_publisher(TextChunk, '/policy/text_stream', reliable)

    def _on_audio(self, message: Any) -> None:
        if message.data:
            self.first_audio.setdefault(message.utterance_id, time.perf_counter())

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.005)
        return predicate()

    def wait_ready(self, procs: list, timeout: float = 60.0) -> None:
        node = self.node

        def ready() -> bool:
            services = dict(node.get_service_names_and_types())
            return ('/lerobot_tools/say/_action/send_goal' in services
                    and node.count_subscribers('/lerobot_tools/say/text') > 0
                    and node.count_subscribers('/policy/text_stream') > 0
                    and node.count_publishers('/speaker/audio') > 0
                    and node.count_publishers('/lerobot_tools/results') > 0)
        if not self.spin_until(lambda: ready() or any(p.poll() is not None for p in procs),
                               timeout) or any(p.poll() is not None for p in procs):
            raise RuntimeError('the stack did not come up')
        self.spin_until(lambda: False, 2.0)  # every subscription matched both ways

    def one(self, generation: str, family: str, rate: float) -> dict:
        """Stream one say; return the times of the first sentence, closing markup, audio."""
        opening, closing = FAMILIES[family]
        whole = opening + TEXT + closing
        first_end = len(opening) + len(FIRST)  # the whitespace after the first sentence
        close_end = len(opening) + len(TEXT) + len(closing.rstrip('\n'))
        deltas = [whole[i:i + 4] for i in range(0, len(whole), 4)]
        known = set(self.first_audio)
        seen = len(self.results)
        period = 1.0 / rate
        start = time.perf_counter()
        marks: dict[str, float] = {}
        for index, delta in enumerate(deltas, 1):
            due = start + (index - 1) * period
            self.spin_until(lambda due=due: time.perf_counter() >= due, period + 1.0)
            self.pub.publish(self.TextChunk(generation_id=generation, index=index, text=delta,
                                            final=index == len(deltas)))
            now = time.perf_counter()
            end = index * 4
            if 'sentence' not in marks and end >= first_end:
                marks['sentence'] = now
            if 'close' not in marks and end >= close_end:
                marks['close'] = now
        if not self.spin_until(lambda: len(self.results) > seen, 30.0):
            raise RuntimeError('no result for the streamed say')
        result = self.results[-1]
        if not result.success:
            raise RuntimeError(f'say failed: {result.error_code}: {result.error_message}')
        uid = json.loads(result.content)['utterance_id']
        if uid in known or not self.spin_until(lambda: uid in self.first_audio, 5.0):
            raise RuntimeError(f'no audio for utterance {uid}')
        return {'first_audio_s': self.first_audio[uid] - marks['sentence'],
                'before_close_s': marks['close'] - self.first_audio[uid]}

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def start(module: str, overrides: list[str], env: dict, log: pathlib.Path) -> subprocess.Popen:
    """Start a node from the packaged parameters file plus ``overrides``."""
    return start_node(module, ['--params-file', str(PARAMS_FILE), *parameters(overrides)],
                      env, log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--runs', type=int, default=10, help='streamed says per case')
    parser.add_argument('--domain', type=int, default=random.randrange(150, 200),
                        help='ROS_DOMAIN_ID for this benchmark (default: random 150-199)')
    args = parser.parse_args(argv)
    from lerobot_tools_ros.tts import make_backend

    env = node_env(args.domain)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    backend = make_backend('espeak_ng')
    backend.warm_up()
    policy = Policy(args.domain)
    all_met = True
    with tempfile.TemporaryDirectory(prefix='stream_say_bench_') as directory:
        workdir = pathlib.Path(directory)
        procs = [
            start('speaker', ['sink:=wav', f'output_dir:={workdir / "audio"}',
                              'realtime:=false'], env, workdir / 'speaker.log'),
            start('tool_server', ['tools:=[say]', 'tool.say.backend:=espeak_ng'], env,
                  workdir / 'tool_server.log'),
            start('dispatcher', ['stream_speech:=true', 'tool.say.repeat_window_s:=0.0',
                                 'tool.say.rate_limit_hz:=0.0'], env,
                  workdir / 'dispatcher.log')]
        try:
            policy.wait_ready(procs)
            policy.one('warmup', 'lerobot_marker', 40.0)
            count = 0
            for family in FAMILIES:
                for rate in RATES:
                    streamed, before, floor = [], [], []
                    for _ in range(args.runs):
                        count += 1
                        figures = policy.one(f'g{count}', family, rate)
                        streamed.append(figures['first_audio_s'])
                        before.append(figures['before_close_s'])
                        floor += measure_backend_first_audio(backend, FIRST.strip(), 1)
                    all_met = report(family, rate, streamed, before, floor) and all_met
        finally:
            for proc in procs:
                stop(proc)
            policy.close()
            backend.close()
    return 0 if all_met else 1


def report(family: str, rate: float, streamed: list[float], before: list[float],
           floor: list[float]) -> bool:
    p50, floor50 = percentile(streamed, 0.5) * 1e3, percentile(floor, 0.5) * 1e3
    met = p50 <= floor50 + TARGET_EXTRA_MS
    early = min(before)
    print(f'{family:<16} {rate:4.0f} tok/s  first sentence -> first audio p50 {p50:6.1f} ms '
          f'(p90 {percentile(streamed, 0.9) * 1e3:6.1f})  espeak-ng alone p50 {floor50:6.1f} '
          f'ms  target <= {floor50 + TARGET_EXTRA_MS:.1f}: {"met" if met else "NOT met"};  '
          f'first audio before the closing markup by {statistics.median(before) * 1e3:.0f} ms '
          f'p50 (min {early * 1e3:.0f} ms)')
    series = f'{rate:.0f} tok/s'
    record(BENCH, f'{family}_{rate:.0f}_first_audio_ms', p50, 'ms', floor=floor50,
           floor_label='espeak-ng synthesize() to first audio, first sentence alone',
           target=f'<= floor + {TARGET_EXTRA_MS:.0f} ms', group=family, series=series,
           label=f'{family} at {series}: first sentence complete -> first audio',
           samples=[v * 1e3 for v in streamed], floor_samples=[v * 1e3 for v in floor],
           met=met, ratio=False)
    record(BENCH, f'{family}_{rate:.0f}_before_close_ms', statistics.median(before) * 1e3, 'ms',
           target='> 0 (audio before the closing markup)', group=family, series=series,
           label=f'{family} at {series}: first audio before the closing markup',
           samples=[v * 1e3 for v in before], met=early > 0)
    return met and early > 0


if __name__ == '__main__':
    sys.exit(main())
