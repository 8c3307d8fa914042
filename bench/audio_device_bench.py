#!/usr/bin/env python3
"""
Benchmark the speaker on a real PortAudio device: `say` request -> first sample in the device.

The device is ALSA's ``file`` plugin (48 kHz stereo S16_LE, set up in a temporary directory,
as the tests do): PortAudio sees an ordinary output device and everything played lands in a raw
file. A ``tool_server`` hosting ``say`` (espeak-ng; a say lasts until played) and a ``speaker``
(``sink: sounddevice``) run as processes; this process sends the CallTool request and watches
the device's file until it grows: that is the first sample written to the device, after
synthesis, DDS, the speaker's queue, resampling to 48 kHz stereo and PortAudio. Alternating with
the ROS calls, the espeak-ng program alone is timed to its first audio bytes (the floor).
Target: ROS p50 <= 1.5 x espeak-ng p50 + one device period (the speaker's block, 20 ms).

Run from the repository root with the venv active and ``install/setup.bash`` sourced
(``. scripts/env.sh``)::

    python bench/audio_device_bench.py [--runs 20]
"""

import argparse
import itertools
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'lerobot_tools_ros'))
sys.path.insert(0, str(REPO / 'lerobot_tools_ros' / 'test'))
sys.path.insert(0, str(REPO / 'bench'))

from alsa_device import AlsaFileDevice  # noqa: E402
from tts_baseline import DEFAULT_TEXT, measure_program_first_audio, percentile  # noqa: E402
from processes import node_env, parameters, start_node, stop  # noqa: E402, I100
from results import record  # noqa: E402, I100

BLOCK_MS = 20  # the speaker's block_ms: one device period
WARMUP_CALLS = 3


class RosSide:
    """The measuring node: a CallTool client for `say`."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from lerobot_tools_interfaces.srv import CallTool

        self._request_type = CallTool.Request
        # A call id runs once: a repeat gets the first call's answer and speaks nothing.
        self._call_ids = (f'bench-{index}' for index in itertools.count())
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('audio_device_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.client = self.node.create_client(CallTool, '/lerobot_tools/say')

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)
        return predicate()

    def call(self, text: str, device: AlsaFileDevice) -> float:
        """Seconds from sending the request to the device file growing; waits for the end."""
        size = device.size()
        request = self._request_type(call_id=next(self._call_ids), name='say',
                                     arguments=json.dumps({'text': text}))
        started = time.perf_counter()
        future = self.client.call_async(request)
        deadline = time.monotonic() + 10.0
        while device.size() == size:  # the request is on its way; no spinning needed for that
            if time.monotonic() > deadline:
                raise RuntimeError('the device file did not grow')
            time.sleep(0.0002)
        first = time.perf_counter() - started
        if not self.spin_until(future.done, 30.0):
            raise RuntimeError('no answer from say')
        response = future.result()
        if not response.success:
            raise RuntimeError(f'say failed: {response.error_code}: {response.error_message}')
        if json.loads(response.content).get('playback') != 'finished':
            raise RuntimeError(f'unexpected result {response.content}')
        return first

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def start(module: str, params: list[str], env: dict, log: pathlib.Path) -> subprocess.Popen:
    """Start a node with ``params`` (``name:=value``)."""
    return start_node(module, parameters(params), env, log)


def run(runs: int, text: str, domain: int, workdir: pathlib.Path) -> dict[str, Any]:
    device = AlsaFileDevice(workdir / 'alsa')
    env = node_env(domain, device.env(dict(os.environ)))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    speaker = start('speaker', ['sink:=sounddevice', f'block_ms:={BLOCK_MS}'], env,
                    workdir / 'speaker.log')
    server = start('tool_server', ['tools:=[say]', 'tool.say.backend:=espeak_ng'], env,
                   workdir / 'tool_server.log')
    ros = RosSide(domain)
    try:
        ready = ros.spin_until(lambda: ros.client.service_is_ready() and ros.node.count_publishers(
            '/speaker/status') >= 1, 60.0)
        if not ready:
            raise RuntimeError('nodes did not come up:\n' + (workdir / 'speaker.log').read_text()
                               + (workdir / 'tool_server.log').read_text())
        ros.spin_until(lambda: False, 0.5)
        for _ in range(WARMUP_CALLS):
            ros.call(text, device)
            measure_program_first_audio(text, 1)
        device_times, program_times = [], []
        for _ in range(runs):  # alternate, so both see the same machine conditions
            program_times += measure_program_first_audio(text, 1)
            device_times.append(ros.call(text, device))
    finally:
        ros.close()
        stop(server)
        stop(speaker)
    return {'device': device_times, 'program': program_times}


def report(figures: dict[str, list[float]]) -> bool:
    def ms(values: list[float], fraction: float) -> float:
        return percentile(values, fraction) * 1e3

    device, program = figures['device'], figures['program']
    print(f'audio device bench: espeak-ng, ALSA file device 48 kHz x2, block {BLOCK_MS} ms '
          f'(n={len(device)})')
    for name, values in (('espeak-ng program alone -> first audio', program),
                         ('say request -> first sample in the device', device)):
        print(f'  {name:<42} p50 {ms(values, 0.5):7.1f} ms   p99 {ms(values, 0.99):7.1f} ms')
    limit = 1.5 * ms(program, 0.5) + BLOCK_MS
    met = ms(device, 0.5) <= limit
    print(f'  ratio at p50: {ms(device, 0.5) / ms(program, 0.5):.2f}x; target p50 <= 1.5 x '
          f'{ms(program, 0.5):.1f} + {BLOCK_MS} = {limit:.1f} ms: {"met" if met else "MISSED"}')
    record('audio_device_bench', 'first_sample', ms(device, 0.5), 'ms', floor=ms(program, 0.5),
           floor_label='the espeak-ng program alone to its first audio',
           target=f'<= 1.5x + {BLOCK_MS} ms', met=met,
           label='say request -> first sample in a PortAudio device (ALSA file, 48 kHz x2), p50',
           samples=[v * 1e3 for v in device], floor_samples=[v * 1e3 for v in program])
    return met


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--runs', type=int, default=20, help='measured calls')
    parser.add_argument('--text', default=DEFAULT_TEXT, help='the utterance to speak')
    parser.add_argument('--domain', type=int, default=random.randrange(150, 200),
                        help='ROS_DOMAIN_ID for this benchmark (default: random 150-199)')
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix='audio_device_bench_') as directory:
        figures = run(args.runs, args.text, args.domain, pathlib.Path(directory))
    return 0 if report(figures) else 1


if __name__ == '__main__':
    sys.exit(main())
