#!/usr/bin/env python3
"""
Benchmark cancel to silence: `say` stopped mid-utterance -> last sample handed to the sink.

Two paths, each against a floor measured in the same run (the same player and sink in this
process, cancelled by a direct ``submit``: no ROS, no TTS):

- ``tool``: a ``speaker`` process with ``sink: wav`` (paced like a sound card, ``block_ms`` 20:
  the sink block) and with ``sink: sounddevice`` on a real PortAudio device (ALSA's file plugin
  at 48 kHz stereo, set up in a temporary directory; PortAudio period = the 20 ms block);
  ``say`` runs in this process on a node spun in the background, as the tool_server runs it,
  with a ``CallContext``. Each run speaks a long text, waits until the speaker reports 0.3 s
  played, then sets ``context.cancel()``. Backends: espeak-ng and the tiny random-weight
  pocket-tts model. Target: p50 and p99 <= one sink block + 20 ms.
- ``stack``: what an operator or an agent does. ``dispatcher``, ``tool_server`` (say,
  espeak-ng) and ``speaker`` (wav) run as processes with the packaged parameters
  (``config/lerobot_tools.yaml``); the policy text says ``<say>...``, and once 0.3 s was
  played the run stops it by turns with ``/dispatcher/set_enabled false`` (pause),
  ``/dispatcher/cancel`` and the dispatcher's own timeout (``tool.say.timeout_s`` set to
  1.5 s for those runs): request sent (for the timeout: the stamp of its ``timeout`` result)
  -> last sample. Target: p50 <= one sink block + 40 ms (three processes and DDS hops:
  dispatcher -> goal cancel -> tool_server -> AudioChunk -> speaker).

The speaker's ``cancelled`` status carries, as its stamp, the wall-clock time at which the last
frame was handed to the sink (and ``frames_played``): stop -> that stamp is the figure (0 when
the last block went out before the stop).

Run from the repository root with the venv active and ``install/setup.bash`` sourced
(``. scripts/env.sh``)::

    python bench/cancel_bench.py [--runs 20] [--path both|tool|stack]
                                 [--backend both|espeak_ng|pocket_tts] [--sink both|wav|device]
"""

import argparse
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Optional

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'lerobot_tools_ros'))
sys.path.insert(0, str(REPO / 'lerobot_tools_ros' / 'test'))
sys.path.insert(0, str(REPO / 'bench'))

from alsa_device import AlsaFileDevice  # noqa: E402
from results import record  # noqa: E402
from tts_baseline import percentile, tiny_pocket_params  # noqa: E402

BLOCK_MS = 20
TARGET_MS = BLOCK_MS + 20
STACK_TARGET_MS = BLOCK_MS + 40
PARAMS_FILE = REPO / 'lerobot_tools_ros' / 'config' / 'lerobot_tools.yaml'
STACK_TIMEOUT_S = 1.5
PLAYED_BEFORE_CANCEL_S = 0.3
TEXT = 'This keeps going. There is always more to cancel. ' * 6


class Side:
    """The measuring node: hosts `say`, follows /speaker/status."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from lerobot_tools_interfaces.msg import SpeakerStatus

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('cancel_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.statuses: dict[str, list[Any]] = {}
        self.arrival: dict[tuple[str, str], float] = {}
        self.node.create_subscription(
            SpeakerStatus, '/speaker/status', self._on_status,
            QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE))
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _on_status(self, message: Any) -> None:
        self.arrival.setdefault((message.utterance_id, message.state), time.time())
        self.statuses.setdefault(message.utterance_id, []).append(message)

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: B902 - the executor is shut down at the end
            pass

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.001)
    return predicate()


def cancel_once(tool: Any, side: Side) -> tuple[float, float]:
    """Seconds from context.cancel() to the last frame handed to the sink; to the report."""
    from lerobot_tools_ros.errors import ToolError
    from lerobot_tools_ros.tools.base import CallContext

    context = CallContext('bench')
    outcome: list[Any] = []

    def call() -> None:
        try:
            outcome.append(tool.call({'text': TEXT}, context))
        except ToolError as exc:
            outcome.append(exc)

    known = set(side.statuses)
    thread = threading.Thread(target=call)
    thread.start()

    def playing() -> Optional[str]:
        for uid in set(side.statuses) - known:
            if any(s.frames_played >= PLAYED_BEFORE_CANCEL_S * s.sample_rate > 0
                   for s in side.statuses[uid]):
                return uid
        return None

    if not wait_for(playing, 30.0):
        raise RuntimeError('the speaker did not start playing')
    uid = playing()
    if uid is None:  # (statuses only grow: what was playing stays found)
        raise RuntimeError('the playing utterance was lost')
    cancelled_at = time.time()
    context.cancel()
    thread.join(30.0)
    if not outcome or getattr(outcome[0], 'code', '') != 'cancelled':
        raise RuntimeError(f'expected a cancelled call, got {outcome}')
    if not wait_for(lambda: any(s.state == 'cancelled' for s in side.statuses[uid]), 5.0):
        raise RuntimeError('the speaker did not report cancelled')
    final = [s for s in side.statuses[uid] if s.state == 'cancelled'][0]
    stamp = final.header.stamp.sec + final.header.stamp.nanosec * 1e-9
    return max(0.0, stamp - cancelled_at), side.arrival[(uid, 'cancelled')] - cancelled_at


def floor_once(directory: pathlib.Path, rate: int, sink_kind: str) -> float:
    """Measure the same player and sink in-process, cancelled by a direct submit."""
    import numpy as np
    from lerobot_tools_ros.audio import (
        CANCELLED, Chunk, SounddeviceSink, UtterancePlayer, WavSink)

    done = threading.Event()
    reports = []

    def on_status(status) -> None:
        reports.append(status)
        if status.state == CANCELLED:
            done.set()

    sink = WavSink(directory) if sink_kind == 'wav' else SounddeviceSink(block_ms=BLOCK_MS)
    player = UtterancePlayer(sink, on_status, block_ms=BLOCK_MS)
    try:
        audio = (np.sin(np.arange(rate * 3) * 0.05) * 8000).astype('<i2').tobytes()
        player.submit(Chunk('floor', rate, 1, audio))

        def played() -> bool:
            status = player.progress()
            return status is not None and status.frames_played >= PLAYED_BEFORE_CANCEL_S * rate

        if not wait_for(played, 10.0):
            raise RuntimeError('the floor player did not play')
        cancelled_at = time.time()
        player.submit(Chunk('floor', rate, 1, b'', final=True, cancelled=True))
        done.wait(5.0)
        return max(0.0, reports[-1].stamp - cancelled_at)
    finally:
        player.close()


def bench(label: str, kind: str, params: dict, runs: int, side: Side,
          workdir: pathlib.Path, sink_kind: str) -> dict[str, Any]:
    from lerobot_tools_ros.catalog import DEFAULT_TOOLS
    from lerobot_tools_ros.tool_server.host import RosToolHost
    from lerobot_tools_ros.tools.say import SayTool

    tool = SayTool(DEFAULT_TOOLS[0], backend=kind, **params)
    try:
        tool.bind(RosToolHost(side.node))
        if not wait_for(lambda: tool._publisher.get_subscription_count() >= 1, 30.0):
            raise RuntimeError('no speaker subscribed')
        time.sleep(0.5)
        cancel_once(tool, side)  # warm-up
        times, reported, floor = [], [], []
        for run in range(runs):  # alternate with the floor: same machine conditions
            floor.append(floor_once(workdir / f'floor_{kind}_{run}', tool.backend.sample_rate,
                                    sink_kind))
            last_sample, report_back = cancel_once(tool, side)
            times.append(last_sample)
            reported.append(report_back)
    finally:
        tool.close()
    return {'label': label, 'times': times, 'floor': floor, 'reported': reported}


def report(figures: dict[str, Any], target_ms: float = TARGET_MS,
           name: str = 'say cancelled -> last sample to the sink', quantile: float = 0.99) -> bool:
    def ms(values: list[float], fraction: float) -> float:
        return percentile(values, fraction) * 1e3

    times, floor = figures['times'], figures['floor']
    print(f'{figures["label"]} (n={len(times)}, sink block {BLOCK_MS} ms)')
    for label, values in (('floor: in-process player, direct cancel', floor),
                          (name, times),
                          (name.split(' -> ')[0] + ' -> `cancelled` status here',
                           figures['reported'])):
        print(f'  {label:<42} p50 {ms(values, 0.5):6.1f} ms   p99 {ms(values, 0.99):6.1f} ms   '
              f'max {max(values) * 1e3:6.1f} ms')
    print(f'  p50 over the floor: {ms(times, 0.5) - ms(floor, 0.5):+.1f} ms')
    met = ms(times, quantile) <= target_ms
    which = 'p50/p99' if quantile > 0.5 else 'p50'
    print(f'  target {which} <= {target_ms} ms: {"met" if met else "MISSED"}')
    group = figures['label']
    for q in (0.5, 0.99):
        record('cancel_bench', f'{group}.p{round(q * 100)}', ms(times, q), 'ms', group=group,
               series=f'p{round(q * 100)}', bound=target_ms, table=False,
               label=f'{name}, {group}, p{round(q * 100)}')
    record('cancel_bench', group, ms(times, quantile), 'ms', floor=ms(floor, quantile),
           floor_label='in-process player, direct cancel', target=f'<= {target_ms:g} ms',
           met=met, ratio=False,
           label=f'{name}, {group}, p{round(quantile * 100)} of {len(times)}')
    return met


def start_speaker(sink_kind: str, env: dict, workdir: pathlib.Path) -> subprocess.Popen:
    params = ['sink:=wav', f'output_dir:={workdir / "audio"}'] if sink_kind == 'wav' else [
        'sink:=sounddevice']
    args = [sys.executable, '-m', 'lerobot_tools_ros.speaker.node', '--ros-args',
            '-p', f'block_ms:={BLOCK_MS}']
    for param in params:
        args += ['-p', param]
    with open(workdir / f'speaker_{sink_kind}.log', 'wb') as log:
        return subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)


class StackSide(Side):
    """The operator's side of the stack: policy text, pause, ~/cancel, results, calls."""

    def __init__(self, domain: int) -> None:
        super().__init__(domain)
        from lerobot_tools_interfaces.msg import ToolCall, ToolResult
        from lerobot_tools_interfaces.srv import CancelCalls
        from rcl_interfaces.srv import SetParameters
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        from std_srvs.srv import SetBool

        reliable = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
        self.calls: list[Any] = []
        self.results: dict[str, Any] = {}
        self.node.create_subscription(ToolCall, '/lerobot_tools/calls', self.calls.append,
                                      reliable)
        self.node.create_subscription(
            ToolResult, '/lerobot_tools/results',
            lambda message: self.results.setdefault(message.call_id, message), reliable)
        self.text = self.node.create_publisher(String, '/policy/text', reliable)
        self.enable = self.node.create_client(SetBool, '/dispatcher/set_enabled')
        self.cancel = self.node.create_client(CancelCalls, '/dispatcher/cancel')
        self.parameters = self.node.create_client(SetParameters, '/dispatcher/set_parameters')

    def service(self, client: Any, request: Any) -> Any:
        if not wait_for(client.service_is_ready, 30.0):
            raise RuntimeError(f'no {client.srv_name}')
        future = client.call_async(request)
        if not wait_for(future.done, 10.0):
            raise RuntimeError(f'{client.srv_name} did not answer')
        return future.result()

    def set_say_timeout(self, seconds: float) -> None:
        from rclpy.parameter import Parameter
        from rcl_interfaces.srv import SetParameters

        response = self.service(self.parameters, SetParameters.Request(parameters=[
            Parameter('tool.say.timeout_s', value=seconds).to_parameter_msg()]))
        if not response.results[0].successful:
            raise RuntimeError(response.results[0].reason)


def start_stack(env: dict, workdir: pathlib.Path) -> list[subprocess.Popen]:
    """Start speaker, tool_server and dispatcher with the packaged parameters."""
    nodes = {
        'speaker': ['sink:=wav', f'output_dir:={workdir / "stack_audio"}',
                    f'block_ms:={BLOCK_MS}'],
        'tool_server': ['tools:=[say]', 'tool.say.backend:=espeak_ng'],
        'dispatcher': [],
    }
    procs = []
    for name, overrides in nodes.items():
        args = [sys.executable, '-m', f'lerobot_tools_ros.nodes.{name}', '--ros-args',
                '--params-file', str(PARAMS_FILE)]
        for override in overrides:
            args += ['-p', override]
        with open(workdir / f'stack_{name}.log', 'wb') as log:
            procs.append(subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT))
    return procs


def stop_once(side: StackSide, how: str, run: int) -> tuple[float, float]:
    """Say a long text through the stack, stop it ``how``; seconds to last sample, to report."""
    from lerobot_tools_interfaces.srv import CancelCalls
    from std_msgs.msg import String
    from std_srvs.srv import SetBool

    known, calls = set(side.statuses), len(side.calls)
    side.text.publish(String(data=f'<say>{TEXT} This is run {how} {run}.</say>'))
    if not wait_for(lambda: len(side.calls) > calls, 10.0):
        raise RuntimeError('the dispatcher took no call')
    call_id = side.calls[-1].call_id

    def playing() -> Optional[str]:
        for uid in set(side.statuses) - known:
            if any(s.frames_played >= PLAYED_BEFORE_CANCEL_S * s.sample_rate > 0
                   for s in side.statuses[uid]):
                return uid
        return None

    if not wait_for(lambda: playing() or call_id in side.results, 30.0) or not playing():
        raise RuntimeError(f'the speaker did not start playing: {side.results.get(call_id)}')
    uid = playing()
    if uid is None:  # (statuses only grow: what was playing stays found)
        raise RuntimeError('the playing utterance was lost')
    if how == 'pause':
        stopped_at = time.time()
        side.service(side.enable, SetBool.Request(data=False))
    elif how == 'cancel':
        stopped_at = time.time()
        side.service(side.cancel, CancelCalls.Request(call_id=call_id))
    if not wait_for(lambda: call_id in side.results, 30.0):
        raise RuntimeError('no result')
    result = side.results[call_id]
    if how == 'timeout':
        stopped_at = result.header.stamp.sec + result.header.stamp.nanosec * 1e-9
    expected = {'pause': 'paused', 'cancel': 'cancelled', 'timeout': 'timeout'}[how]
    if result.error_code != expected:
        raise RuntimeError(f'expected {expected}, got {result}')
    if not wait_for(lambda: any(s.state == 'cancelled' for s in side.statuses[uid]), 5.0):
        raise RuntimeError(f'the speaker did not report cancelled: {side.statuses[uid][-1]}')
    if how == 'pause':
        side.service(side.enable, SetBool.Request(data=True))
    final = [s for s in side.statuses[uid] if s.state == 'cancelled'][0]
    stamp = final.header.stamp.sec + final.header.stamp.nanosec * 1e-9
    return max(0.0, stamp - stopped_at), side.arrival[(uid, 'cancelled')] - stopped_at


def bench_stack(runs: int, side: StackSide, env: dict, workdir: pathlib.Path) -> bool:
    """Pause, ~/cancel and timeout through the dispatcher; report each against the floor."""
    procs = start_stack(env, workdir)
    try:
        def up() -> bool:
            return (side.enable.service_is_ready() and side.cancel.service_is_ready()
                    and side.text.get_subscription_count() > 0
                    and side.node.count_publishers('/speaker/status') > 0
                    and side.node.count_subscribers('/speaker/audio') > 0)

        if not wait_for(up, 60.0):
            raise RuntimeError('the stack did not come up; logs in ' + str(workdir))
        time.sleep(1.0)
        stop_once(side, 'cancel', 0)  # warm-up (the dispatcher proves the executor first)
        met = True
        for how in ('pause', 'cancel', 'timeout'):
            if how == 'timeout':
                side.set_say_timeout(STACK_TIMEOUT_S)
            times, reported, floor = [], [], []
            for run in range(runs):  # alternate with the floor: same machine conditions
                floor.append(floor_once(workdir / f'floor_stack_{how}_{run}', 22050, 'wav'))
                last_sample, report_back = stop_once(side, how, run)
                times.append(last_sample)
                reported.append(report_back)
            met = report({'label': f'stack ({how}), espeak-ng, sink wav', 'times': times,
                          'floor': floor, 'reported': reported},
                         STACK_TARGET_MS, f'{how} sent -> last sample to the sink',
                         quantile=0.5) and met
        return met
    finally:
        for proc in reversed(procs):
            proc.send_signal(2)
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--runs', type=int, default=20, help='measured cancels per backend')
    parser.add_argument('--backend', choices=('both', 'espeak_ng', 'pocket_tts'),
                        default='both')
    parser.add_argument('--sink', choices=('both', 'wav', 'device'), default='both')
    parser.add_argument('--path', choices=('both', 'tool', 'stack'), default='both')
    parser.add_argument('--domain', type=int, default=random.randrange(150, 200),
                        help='ROS_DOMAIN_ID for this benchmark (default: random 150-199)')
    args = parser.parse_args(argv)
    all_met = True
    with tempfile.TemporaryDirectory(prefix='cancel_bench_') as directory:
        workdir = pathlib.Path(directory)
        device = AlsaFileDevice(workdir / 'alsa')
        # This process's floor on the device needs the same ALSA configuration.
        os.environ.update(device.env({}), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
        env = dict(os.environ, ROS_DOMAIN_ID=str(args.domain), PYTHONUNBUFFERED='1')
        env['PYTHONPATH'] = os.pathsep.join(
            p for p in (str(REPO / 'lerobot_tools_ros'), env.get('PYTHONPATH', '')) if p)
        plans: list[tuple[str, str, dict[str, Any]]] = []
        if args.backend in ('both', 'espeak_ng'):
            plans.append(('espeak-ng', 'espeak_ng', {}))
        if args.backend in ('both', 'pocket_tts') and args.path != 'stack':
            params = tiny_pocket_params(workdir / 'tiny_model')
            plans.append(('pocket-tts (tiny model)', 'pocket_tts', {
                'config': params['config'], 'eos_threshold': -1e9}))
        side = StackSide(args.domain)
        try:
            if args.path in ('both', 'stack'):
                all_met = bench_stack(args.runs, side, env, workdir) and all_met
            for sink_kind in ('wav', 'device'):
                if args.sink not in ('both', sink_kind) or args.path == 'stack':
                    continue
                speaker = start_speaker(sink_kind, env, workdir)
                try:
                    for label, kind, params in plans:
                        figures = bench(f'{label}, sink {sink_kind}', kind, params, args.runs,
                                        side, workdir, sink_kind)
                        all_met = report(figures) and all_met
                finally:
                    speaker.send_signal(2)
                    speaker.wait(10)
        finally:
            side.close()
    return 0 if all_met else 1


if __name__ == '__main__':
    sys.exit(main())
