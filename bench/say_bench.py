#!/usr/bin/env python3
"""
Benchmark say: CallTool request to the first AudioChunk, against the backend's own first audio.

For each backend (espeak-ng, and the tiny random-weight pocket-tts model built offline), a
``tool_server`` hosting ``say`` runs in a subprocess, with a ``speaker`` (``sink: null``,
``realtime: false``: a say call lasts until the speaker played it, here as fast as the audio
comes); this process is the measuring node: it sends the CallTool request and timestamps the
first AudioChunk of that utterance arriving on /speaker/audio. In the same run, alternating
with the ROS calls, the same backend is driven in-process without ROS (``synthesize()`` to its
first chunk, as bench/tts_baseline.py does). Target: ROS p50 <= backend p50 + 15 ms.

Run from the repository root with the venv active and ``install/setup.bash`` sourced
(``. scripts/env.sh``)::

    python bench/say_bench.py [--runs 30] [--backend both|espeak_ng|pocket_tts]
"""

import argparse
import itertools
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'lerobot_tools_ros'))
sys.path.insert(0, str(REPO / 'bench'))

from tts_baseline import DEFAULT_TEXT, measure_backend_first_audio, percentile  # noqa: E402
from tts_baseline import measure_model_first_audio, measure_program_first_audio  # noqa: E402
from tts_baseline import tiny_pocket_params  # noqa: E402
from processes import node_env, parameters, start_node, stop  # noqa: E402, I100
from results import record  # noqa: E402, I100

TARGET_MS = 15.0
WARMUP_CALLS = 3
AUDIO_TOPIC = '/speaker/audio'
STATUS_TOPIC = '/speaker/status'


class RosSide:
    """The measuring node: a CallTool client and an AudioChunk subscription."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from lerobot_tools_interfaces.msg import AudioChunk
        from lerobot_tools_interfaces.srv import CallTool

        self._request_type = CallTool.Request
        # A call id runs once: a repeat gets the first call's answer and speaks nothing.
        self._call_ids = (f'bench-{index}' for index in itertools.count())
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('say_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.first_chunk: dict[str, float] = {}
        self.node.create_subscription(
            AudioChunk, AUDIO_TOPIC, self._on_chunk,
            QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE))
        self.client = self.node.create_client(CallTool, '/lerobot_tools/say')

    def _on_chunk(self, message: Any) -> None:
        self.first_chunk.setdefault(message.utterance_id, time.perf_counter())

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        return predicate()

    def wait_ready(self, server: subprocess.Popen, timeout: float = 60.0) -> None:
        def ready() -> bool:
            return (self.client.service_is_ready()
                    and self.node.count_publishers(AUDIO_TOPIC) >= 1
                    and self.node.count_publishers(STATUS_TOPIC) >= 1)
        if not self.spin_until(lambda: ready() or server.poll() is not None, timeout) or (
                server.poll() is not None):
            raise RuntimeError('tool_server did not come up')
        self.spin_until(lambda: False, 0.5)  # let the publisher match this subscription

    def first_chunk_latency(self, text: str) -> tuple[float, dict]:
        """Seconds from sending the request to the first chunk; and the tool's result."""
        seen = set(self.first_chunk)
        request = self._request_type(call_id=next(self._call_ids), name='say',
                                     arguments=json.dumps({'text': text}))
        started = time.perf_counter()
        future = self.client.call_async(request)
        if not self.spin_until(future.done, 30.0):
            raise RuntimeError('no answer from say')
        response = future.result()
        if not response.success:
            raise RuntimeError(f'say failed: {response.error_code}: {response.error_message}')
        result = json.loads(response.content)
        uid = result['utterance_id']
        if uid in seen or not self.spin_until(lambda: uid in self.first_chunk, 5.0):
            raise RuntimeError(f'no AudioChunk for utterance {uid}')
        return self.first_chunk[uid] - started, result

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def start_server(params: list[str], env: dict, log: pathlib.Path) -> subprocess.Popen:
    """Start a tool_server hosting say with ``params`` (``name:=value`` of tool.say.*)."""
    values = ['tools:=[say]', *(f'tool.say.{param}' for param in params)]
    return start_node('tool_server', parameters(values), env, log)


def start_speaker(env: dict, log: pathlib.Path) -> subprocess.Popen:
    """Start a speaker that plays to nothing, as fast as it is given audio."""
    return start_node('speaker', parameters(['sink:=null', 'realtime:=false']), env, log)


def bench_backend(label: str, kind: str, params: dict, runs: int, text: str, ros: RosSide,
                  env: dict, workdir: pathlib.Path) -> Optional[dict]:
    from lerobot_tools_ros.tts import make_backend, TtsUnavailable

    try:
        backend = make_backend(kind, **params)
    except (ImportError, TtsUnavailable) as exc:
        print(f'{label:<18} skipped: {exc}')
        return None
    server_params = [f'backend:={kind}'] + [
        f'{key}:={value}' for key, value in params.items()]
    log = workdir / f'tool_server_{kind}.log'
    server = start_server(server_params, env, log)
    try:
        backend.warm_up()
        try:
            ros.wait_ready(server)
        except RuntimeError as exc:
            raise RuntimeError(f'{exc}:\n{log.read_text(errors="replace")}') from exc
        for _ in range(WARMUP_CALLS):
            ros.first_chunk_latency(text)
            measure_backend_first_audio(backend, text, 1)
        ros_times, backend_times, tool_times = [], [], []
        for _ in range(runs):  # alternate, so both see the same machine conditions
            backend_times += measure_backend_first_audio(backend, text, 1)
            latency, result = ros.first_chunk_latency(text)
            ros_times.append(latency)
            tool_times.append(result['first_chunk_ms'] / 1e3)
    finally:
        stop(server)
        backend.close()
    if kind == 'espeak_ng':
        raw_times = measure_program_first_audio(text, runs)
    else:
        raw_times = measure_model_first_audio(params['config'], params['eos_threshold'], text,
                                              runs)
    return {'label': label, 'ros': ros_times, 'backend': backend_times, 'tool': tool_times,
            'raw': raw_times}


def report(figures: dict) -> bool:
    def ms(values: list[float], fraction: float) -> float:
        return percentile(values, fraction) * 1e3

    ros, backend, tool = figures['ros'], figures['backend'], figures['tool']
    raw = figures['raw']
    print(f'{figures["label"]} (n={len(ros)})')
    for name, values in (('program/model alone -> first audio', raw),
                         ('backend alone, synthesize() -> first chunk', backend),
                         ('tool call() -> first chunk published', tool),
                         ('CallTool request -> first AudioChunk here', ros)):
        print(f'  {name:<44} p50 {ms(values, 0.5):7.1f} ms   p90 {ms(values, 0.9):7.1f} ms'
              f'   mean {statistics.mean(values) * 1e3:7.1f} ms')
    difference = ms(ros, 0.5) - ms(raw, 0.5)
    met = difference <= TARGET_MS
    print(f'  difference at p50 (ROS - program/model alone): {difference:+.1f} ms   target <= '
          f'{TARGET_MS:.0f} ms: {"met" if met else "MISSED"}')
    record('say_bench', figures['label'], ms(ros, 0.5), 'ms', floor=ms(raw, 0.5),
           floor_label='the TTS program / model alone to its first audio',
           target=f'<= +{TARGET_MS:.0f} ms', met=met,
           label=f'CallTool -> first AudioChunk, {figures["label"]}, p50',
           samples=[v * 1e3 for v in ros], floor_samples=[v * 1e3 for v in raw])
    return met


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--runs', type=int, default=30, help='measured calls per backend')
    parser.add_argument('--text', default=DEFAULT_TEXT, help='the utterance to speak')
    parser.add_argument('--backend', choices=('both', 'espeak_ng', 'pocket_tts'),
                        default='both')
    parser.add_argument('--domain', type=int, default=random.randrange(150, 200),
                        help='ROS_DOMAIN_ID for this benchmark (default: random 150-199)')
    args = parser.parse_args(argv)

    env = node_env(args.domain)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    ros = RosSide(args.domain)
    all_met = True
    try:
        with tempfile.TemporaryDirectory(prefix='say_bench_') as directory:
            workdir = pathlib.Path(directory)
            speaker = start_speaker(env, workdir / 'speaker.log')
            plans: list[tuple[str, str, dict[str, Any]]] = []
            if args.backend in ('both', 'espeak_ng'):
                plans.append(('espeak_ng', 'espeak_ng', {}))
            if args.backend in ('both', 'pocket_tts'):
                try:
                    params = tiny_pocket_params(workdir / 'tiny_model')
                except ImportError as exc:
                    print(f'pocket_tts (tiny)  skipped: {exc}')
                else:
                    plans.append(('pocket_tts (tiny model)', 'pocket_tts', params))
            try:
                for label, kind, params in plans:
                    figures = bench_backend(label, kind, params, args.runs, args.text, ros, env,
                                            workdir)
                    if figures is not None:
                        all_met = report(figures) and all_met
            finally:
                stop(speaker)
    finally:
        ros.close()
    return 0 if all_met else 1


if __name__ == '__main__':
    sys.exit(main())
