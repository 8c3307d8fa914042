#!/usr/bin/env python3

"""
Benchmark stream_speech: a say heard while the policy still writes it.

A scripted policy (this process) streams a three-sentence ``say`` as numbered TextChunks of 4
characters at 20 and 40 tokens/s (a 4-character delta per token), in three families (LeRobot
marker, Hermes JSON, Qwen3-Coder XML), to a dispatcher with ``stream_speech:=true``, a
tool_server hosting ``say`` and a speaker, all real processes from the packaged parameters
file. Every combination of two TTS engines and two sinks is run, each with its own stack:

- engines: espeak-ng, and the tiny random-weight pocket-tts model built offline
  (``tiny_pocket_model``: noise, not speech, but pocket-tts' own generation code; skipped where
  pocket-tts is not installed);
- sinks: ``wav`` (not paced: audio is written as it comes) and ``device``: the speaker's
  ``sounddevice`` sink on ALSA's ``file`` plugin device (``alsa_device.py``, 48 kHz stereo,
  block 20 ms, jitter 60 ms, as ``audio_device_bench.py`` uses it): PortAudio sees an ordinary
  output device, the speaker paces it to the wall clock, and everything played lands in a raw
  file, rewritten for each utterance.

Per case it reports:

- **first sentence -> first audio**: from publishing the delta that completes the first
  sentence (the whitespace after its period: the segment rule needs it) to the first audio at
  the sink: the first AudioChunk of the utterance on /speaker/audio (the speaker's input, which
  the WAV sink writes as it comes), or the device's raw file growing (its first sample,
  after the speaker's jitter buffer and PortAudio). Two floors, measured in the same run,
  alternating with the streamed says (one of each per streamed say):

  - the engine floor: the engine's own time to first audio for that sentence alone (the
    backend's ``synthesize()`` in this process). Target: p50 <= engine floor p50 + 20 ms.
  - the pipeline floor: the same sentence as a complete, non-streamed say in the same stack
    (the case's family, published whole in one TextChunk with ``final`` set, so the
    dispatcher runs it on complete as it does with ``stream_speech`` off), from its
    publication to the first audio at the same sink, detected the same way. It holds what the
    engine floor leaves out and every say goes through: two DDS hops and three node processes
    (dispatcher -> tool_server's RunTool -> say -> engine -> /speaker/audio -> speaker ->
    sink) and, on the device, the speaker's jitter buffer, PortAudio and ALSA. It is what the
    runtime reaches for that sentence without streaming; streaming cannot do better, so the
    streamed p50 minus the pipeline floor p50 is what streaming itself adds. Target:
    streaming adds <= 20 ms (p50 <= pipeline floor p50 + 20 ms).

  Both targets are printed (met / NOT met) and recorded: the ``<case>_first_audio_ms`` record
  carries the engine floor as ``floor`` plus ``pipeline_floor``, ``pipeline_floor_samples``
  and ``streaming_adds_ms``; ``<case>_first_audio_vs_pipeline_ms`` compares the same p50
  with the pipeline floor as its ``floor``.
- **first audio before the closing markup**: seconds between that first audio and the
  publication of the delta that completes the call (must be positive: audio first).
- **gaps** (device sink only): silence the speaker inserted into the utterance at the device,
  in ms: the frames the device received for the utterance (its raw file) minus the frames of
  audio the speaker played (``frames_played`` of its final status). The sink writes zeros only
  where its buffer ran dry before the utterance's end (an underrun: the next segment's audio
  was not there yet) and to fill the last device period; silence inside the synthesized audio
  (pauses between sentences) is audio, not a gap. The floor is the same count for a say whose
  text was complete from the start (published whole, dispatched on complete) in the same
  stack: what a streamed say has above it is time the device waited for text or synthesis.
  The underruns the sink counted (its final status) are shown beside it, and so is the time
  to the first AudioChunk (the speaker's input): the rest is the device's start (the speaker's
  jitter buffer, PortAudio, ALSA).

Run from the repository root with the venv active and ``install/setup.bash`` sourced
(``. scripts/env.sh``); the default (3 says per case, each with its pipeline floor say)
takes about six to seven minutes::

    python bench/stream_say_bench.py [--runs 3 | --quick] [--engines espeak_ng,pocket_tts]
                                     [--sinks wav,device]
"""

import argparse
import json
import os
import pathlib
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'lerobot_tools_ros'))
sys.path.insert(0, str(REPO / 'lerobot_tools_ros' / 'test'))
sys.path.insert(0, str(REPO / 'bench'))

from alsa_device import AlsaFileDevice  # noqa: E402
from tts_baseline import measure_backend_first_audio, percentile  # noqa: E402
from tts_baseline import tiny_pocket_params  # noqa: E402
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
ENGINES = ('espeak_ng', 'pocket_tts')
SINKS = ('wav', 'device')
ENGINE_LABELS = {'espeak_ng': 'espeak-ng', 'pocket_tts': 'pocket-tts (tiny)'}
BLOCK_MS = 20  # the speaker's block_ms on the device
PARAMS_FILE = REPO / 'lerobot_tools_ros' / 'config' / 'lerobot_tools.yaml'
_UNDERRUNS = re.compile(r'\((\d+) underruns\)')


class DeviceWatch:
    """Watches the ALSA file device from a thread: when its raw file first has audio."""

    POLL_S = 0.0005

    def __init__(self, device: AlsaFileDevice) -> None:
        self.device = device
        self.first: float | None = None
        self._armed = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def arm(self) -> None:
        """Forget the last utterance's file; time the next one's first sample."""
        self.device.raw.unlink(missing_ok=True)
        self.first = None
        self._armed.set()

    def _watch(self) -> None:
        while not self._closed:
            if not self._armed.wait(0.1):
                continue
            if self.device.size() > 0:
                self.first = time.perf_counter()
                self._armed.clear()
            else:
                time.sleep(self.POLL_S)

    def frames(self) -> int:
        """Frames the device received for the last utterance (48 kHz stereo S16)."""
        return self.device.size() // (2 * self.device.channels)

    def close(self) -> None:
        self._closed = True
        self._armed.set()
        self._thread.join(5)


class Policy:
    """The measuring node: publishes the generations, timestamps audio, statuses, results."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from lerobot_tools_interfaces.msg import AudioChunk, SpeakerStatus, TextChunk, ToolResult

        self.TextChunk = TextChunk
        self.PLAYING = SpeakerStatus.PLAYING
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('stream_say_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self.first_audio: dict[str, float] = {}
        self.ends: dict[str, Any] = {}
        self.results: list[Any] = []
        self.node.create_subscription(AudioChunk, '/speaker/audio', self._on_audio,
                                      QoSProfile(depth=200,
                                                 reliability=ReliabilityPolicy.RELIABLE))
        self.node.create_subscription(SpeakerStatus, '/speaker/status', self._on_status,
                                      reliable)
        self.node.create_subscription(ToolResult, '/lerobot_tools/results',
                                      self.results.append, reliable)
        self.pub = self.node.create_publisher(TextChunk, '/policy/text_stream', reliable)

    def _on_audio(self, message: Any) -> None:
        if message.data:
            self.first_audio.setdefault(message.utterance_id, time.perf_counter())

    def _on_status(self, message: Any) -> None:
        if message.state != self.PLAYING:
            self.ends[message.utterance_id] = message

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.005)
        return predicate()

    def wait_ready(self, procs: list, timeout: float = 120.0) -> None:
        node = self.node

        def ready() -> bool:
            services = dict(node.get_service_names_and_types())
            return ('/lerobot_tools/say/_action/send_goal' in services
                    and node.count_subscribers('/lerobot_tools/say/text') > 0
                    and node.count_subscribers('/policy/text_stream') > 0
                    and node.count_publishers('/speaker/audio') > 0
                    and node.count_publishers('/speaker/status') > 0
                    and node.count_publishers('/lerobot_tools/results') > 0)
        if not self.spin_until(lambda: ready() or any(p.poll() is not None for p in procs),
                               timeout) or any(p.poll() is not None for p in procs):
            raise RuntimeError('the stack did not come up')
        self.spin_until(lambda: False, 2.0)  # every subscription matched both ways

    def one(self, generation: str, family: str, rate: float,
            watch: DeviceWatch | None = None, text: str = TEXT) -> dict:
        """Stream one say (``rate`` 0: the whole call at once); return what was measured."""
        opening, closing = FAMILIES[family]
        whole = opening + text + closing
        # the whitespace after the first sentence (a shorter text: its end)
        first_end = len(opening) + min(len(FIRST), len(text))
        close_end = len(opening) + len(text) + len(closing.rstrip('\n'))
        deltas = [whole[i:i + 4] for i in range(0, len(whole), 4)] if rate else [whole]
        known = set(self.first_audio)
        seen = len(self.results)
        if watch is not None:
            watch.arm()
        period = 1.0 / rate if rate else 0.0
        start = time.perf_counter()
        marks: dict[str, float] = {}
        for index, delta in enumerate(deltas, 1):
            due = start + (index - 1) * period
            self.spin_until(lambda due=due: time.perf_counter() >= due, period + 1.0)
            self.pub.publish(self.TextChunk(generation_id=generation, index=index, text=delta,
                                            final=index == len(deltas)))
            now = time.perf_counter()
            end = index * 4 if rate else len(whole)
            if 'sentence' not in marks and end >= first_end:
                marks['sentence'] = now
            if 'close' not in marks and end >= close_end:
                marks['close'] = now
        if not self.spin_until(lambda: len(self.results) > seen, 60.0):
            raise RuntimeError('no result for the streamed say')
        result = self.results[-1]
        if not result.success:
            raise RuntimeError(f'say failed: {result.error_code}: {result.error_message}')
        uid = json.loads(result.content)['utterance_id']
        if uid in known or not self.spin_until(
                lambda: uid in self.first_audio and uid in self.ends, 10.0):
            raise RuntimeError(f'no audio or no end status for utterance {uid}')
        if watch is None:
            first = self.first_audio[uid]
            return {'first_audio_s': first - marks['sentence'],
                    'before_close_s': marks['close'] - first}
        end = self.ends[uid]
        if watch.first is None:
            raise RuntimeError(f'the device never received utterance {uid}: {end.detail}')
        inserted = watch.frames() - end.frames_played
        underruns = _UNDERRUNS.search(end.detail)
        return {'first_audio_s': watch.first - marks['sentence'],
                'first_chunk_s': self.first_audio[uid] - marks['sentence'],
                'before_close_s': marks['close'] - watch.first,
                'gap_ms': inserted / end.sample_rate * 1e3,
                'underruns': int(underruns.group(1)) if underruns else 0}

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def start(module: str, overrides: list[str], env: dict, log: pathlib.Path) -> subprocess.Popen:
    """Start a node from the packaged parameters file plus ``overrides``."""
    return start_node(module, ['--params-file', str(PARAMS_FILE), *parameters(overrides)],
                      env, log)


def run_stack(engine: str, engine_params: dict, sink: str, backend: Any, args: Any,
              workdir: pathlib.Path, count: list[int]) -> bool:
    """Start the three nodes for ``engine`` and ``sink``, run every case; True if all met."""
    env = node_env(args.domain)
    watch = None
    if sink == 'device':
        device = AlsaFileDevice(workdir / f'alsa_{engine}')
        speaker_env = node_env(args.domain, device.env(dict(os.environ)))
        speaker_params = ['sink:=sounddevice', f'block_ms:={BLOCK_MS}']
    else:
        speaker_env = env
        speaker_params = ['sink:=wav', f'output_dir:={workdir / "audio"}', 'realtime:=false']
    server_params = ['tools:=[say]', f'tool.say.backend:={engine}'] + [
        f'tool.say.{key}:={value}' for key, value in engine_params.items()]
    logs = [workdir / f'{name}_{engine}_{sink}.log'
            for name in ('speaker', 'tool_server', 'dispatcher')]
    procs = [start('speaker', speaker_params, speaker_env, logs[0]),
             start('tool_server', server_params, env, logs[1]),
             start('dispatcher', ['stream_speech:=true', 'tool.say.repeat_window_s:=0.0',
                                  'tool.say.rate_limit_hz:=0.0'], env, logs[2])]
    policy = Policy(args.domain)
    all_met = True
    try:
        try:
            policy.wait_ready(procs)
            if watch is None and sink == 'device':
                watch = DeviceWatch(device)
            policy.one('warmup', 'lerobot_marker', 40.0, watch)
        except RuntimeError as exc:
            raise RuntimeError(f'{exc}\n' + '\n'.join(
                f'--- {log.name}\n{log.read_text(errors="replace")[-3000:]}' for log in logs))
        gap_floor: list[float] = []
        if watch is not None:
            for _ in range(args.runs):  # the text complete from the start: dispatched whole
                count[0] += 1
                gap_floor.append(policy.one(f'g{count[0]}', 'lerobot_marker', 0.0,
                                            watch)['gap_ms'])
        for family in FAMILIES:
            for rate in RATES:
                figures: dict[str, list[float]] = {}
                floor: list[float] = []
                pipeline: list[float] = []
                for _ in range(args.runs):
                    count[0] += 1
                    for key, value in policy.one(f'g{count[0]}', family, rate, watch).items():
                        figures.setdefault(key, []).append(value)
                    count[0] += 1  # the pipeline floor: the first sentence as a complete say
                    pipeline.append(policy.one(f'g{count[0]}', family, 0.0, watch,
                                               FIRST.strip())['first_audio_s'])
                    floor += measure_backend_first_audio(backend, FIRST.strip(), 1)
                all_met = report(engine, sink, family, rate, figures, floor, pipeline,
                                 gap_floor) and all_met
    finally:
        if watch is not None:
            watch.close()
        for proc in procs:
            stop(proc)
        policy.close()
    return all_met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--runs', type=int, default=3, help='streamed says per case')
    parser.add_argument('--quick', action='store_true', help='one say per case (a smoke run)')
    parser.add_argument('--engines', default=','.join(ENGINES),
                        help=f'comma-separated, of {", ".join(ENGINES)}')
    parser.add_argument('--sinks', default=','.join(SINKS),
                        help=f'comma-separated, of {", ".join(SINKS)}')
    parser.add_argument('--domain', type=int, default=random.randrange(150, 200),
                        help='ROS_DOMAIN_ID for this benchmark (default: random 150-199)')
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 1
    engines = [e for e in args.engines.split(',') if e]
    sinks = [s for s in args.sinks.split(',') if s]
    unknown = sorted(set(engines) - set(ENGINES)) + sorted(set(sinks) - set(SINKS))
    if unknown or args.runs < 1:
        parser.error(f'unknown engine or sink {unknown}' if unknown else '--runs must be >= 1')
    from lerobot_tools_ros.tts import make_backend, TtsUnavailable

    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    print(f'stream_say bench: {args.runs} say(s) per case; load average '
          f'{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs at the start')
    all_met = True
    count = [0]
    with tempfile.TemporaryDirectory(prefix='stream_say_bench_') as directory:
        workdir = pathlib.Path(directory)
        for engine in engines:
            try:
                params = tiny_pocket_params(workdir / 'tiny_model') \
                    if engine == 'pocket_tts' else {}
                backend = make_backend(engine, **params)
                backend.warm_up()
            except (ImportError, TtsUnavailable) as exc:
                print(f'{ENGINE_LABELS[engine]}: skipped: {exc}')
                continue
            try:
                for sink in sinks:
                    all_met = run_stack(engine, params, sink, backend, args, workdir,
                                        count) and all_met
            finally:
                backend.close()
    print(f'load average {os.getloadavg()[0]:.2f} at the end')
    return 0 if all_met else 1


def report(engine: str, sink: str, family: str, rate: float, figures: dict[str, list[float]],
           floor: list[float], pipeline: list[float], gap_floor: list[float]) -> bool:
    streamed, before = figures['first_audio_s'], figures['before_close_s']
    p50, floor50 = percentile(streamed, 0.5) * 1e3, percentile(floor, 0.5) * 1e3
    pipeline50 = percentile(pipeline, 0.5) * 1e3
    met = p50 <= floor50 + TARGET_EXTRA_MS
    adds_met = p50 <= pipeline50 + TARGET_EXTRA_MS
    early = min(before)
    label = ENGINE_LABELS[engine]
    line = (f'{label:<17} {sink:<6} {family:<15} {rate:3.0f} tok/s  first sentence -> first '
            f'audio p50 {p50:6.1f} ms (p90 {percentile(streamed, 0.9) * 1e3:6.1f})  engine '
            f'alone p50 {floor50:6.1f} ms  target <= {floor50 + TARGET_EXTRA_MS:.1f}: '
            f'{"met" if met else "NOT met"};  audio before the closing markup by '
            f'{statistics.median(before) * 1e3:.0f} ms p50 (min {early * 1e3:.0f})')
    gaps = figures.get('gap_ms')
    if gaps:
        chunk50 = percentile(figures['first_chunk_s'], 0.5) * 1e3
        line += (f' (first AudioChunk p50 {chunk50:.1f} ms);  gaps p50 '
                 f'{statistics.median(gaps):.0f} ms (max {max(gaps):.0f}, complete text '
                 f'{statistics.median(gap_floor):.0f} ms), underruns '
                 f'{sorted(int(v) for v in figures["underruns"])}')
    print(line)
    print(f'{"":<17} {"":<6} {"":<15} {"":>3}        pipeline floor (first sentence as a '
          f'complete say) p50 {pipeline50:6.1f} ms  streamed - pipeline '
          f'{p50 - pipeline50:+6.1f} ms  streaming adds <= {TARGET_EXTRA_MS:.0f} ms over the '
          f'pipeline floor: {"met" if adds_met else "NOT met"}')
    case = f'{engine}_{sink}_{family}_{rate:.0f}'
    series = f'{label}, {sink}, {rate:.0f} tok/s'
    where = 'first AudioChunk' if sink == 'wav' else 'first sample at the device'
    record(BENCH, f'{case}_first_audio_ms', p50, 'ms', floor=floor50,
           floor_label=f'{label} synthesize() to first audio, first sentence alone',
           target=f'<= floor + {TARGET_EXTRA_MS:.0f} ms', group=family, series=series,
           label=f'{family}, {series}: first sentence complete -> {where}',
           samples=[v * 1e3 for v in streamed], floor_samples=[v * 1e3 for v in floor],
           met=met, ratio=False, pipeline_floor=pipeline50,
           pipeline_floor_samples=[v * 1e3 for v in pipeline],
           streaming_adds_ms=p50 - pipeline50)
    record(BENCH, f'{case}_first_audio_vs_pipeline_ms', p50, 'ms', floor=pipeline50,
           floor_label='the first sentence as a complete say (published whole) to first audio',
           target=f'<= floor + {TARGET_EXTRA_MS:.0f} ms (what streaming adds)', group=family,
           series=series, label=f'{family}, {series}: first sentence complete -> {where}, '
           'against the pipeline floor', samples=[v * 1e3 for v in streamed],
           floor_samples=[v * 1e3 for v in pipeline], met=adds_met, ratio=False)
    record(BENCH, f'{case}_before_close_ms', statistics.median(before) * 1e3, 'ms',
           target='> 0 (audio before the closing markup)', group=family, series=series,
           label=f'{family}, {series}: {where} before the closing markup',
           samples=[v * 1e3 for v in before], met=early > 0)
    if gaps:
        record(BENCH, f'{case}_gap_ms', statistics.median(gaps), 'ms',
               floor=statistics.median(gap_floor),
               floor_label='silence inserted for a say whose text was complete from the start',
               group=family, series=series, ratio=False,
               label=f'{family}, {series}: silence inserted at the device (gaps)',
               samples=gaps, floor_samples=gap_floor, underruns=figures['underruns'])
    return met and adds_met and early > 0


if __name__ == '__main__':
    sys.exit(main())
