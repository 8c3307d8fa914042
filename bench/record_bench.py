#!/usr/bin/env python3
"""
Benchmark record_observation: what it costs while frames stream in, and how fast a call saves.

Ingest: three 1280x720 rgb8 cameras at 30 fps (a publisher process) feed two subscriber
processes at the same time: one hosting the tool's subscriptions, one with bare rclpy
subscriptions whose callback does nothing. Each reports its CPU time (whole process: executor
thread plus DDS threads, from getrusage; and the executor thread alone) per received frame.
Target: tool / bare <= 1.2.

Save: after the cameras stop, the tool process times one call that saves all three frames as
PNG (conversion, parallel encoding, atomic writes, sidecars) against one ``cv2.imwrite`` of one
such frame with the same PNG settings. Target: call / imwrite <= 1.5 (three encodes on two
cores, i.e. parallel rather than 3x).

Run from the repository root with the venv active and ``install/setup.bash`` sourced:

    python bench/record_bench.py [--duration 10] [--calls 15]
"""

import argparse
import json
import os
import pathlib
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'lerobot_tools_ros'))

WIDTH, HEIGHT, FPS, CAMERAS = 1280, 720, 30.0, 3
TOPIC = '/bench_record/cam{}/image_raw'
WARMUP_S = 2.0


def scene(index: int):
    """Return a camera-like 1280x720 rgb8 frame: smooth shading plus sensor noise."""
    import numpy as np

    rng = np.random.default_rng(index)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float32)
    base = np.dstack([
        128 + 90 * np.sin(x / (140 + 20 * index)) * np.cos(y / 110),
        110 + 70 * np.cos((x + y) / 230),
        90 + 60 * np.sin(y / (70 + 10 * index)),
    ])
    noise = rng.normal(0, 3, base.shape)
    return np.clip(base + noise, 0, 255).astype(np.uint8)


def _qos():
    from rclpy.qos import qos_profile_sensor_data, QoSProfile

    profile = QoSProfile(depth=1, reliability=qos_profile_sensor_data.reliability,
                         history=qos_profile_sensor_data.history,
                         durability=qos_profile_sensor_data.durability)
    return profile


# ------------------------------------------------------------------------------ roles
def run_publisher(seconds: float) -> None:
    """Publish the three cameras at FPS for ``seconds``."""
    import rclpy
    from sensor_msgs.msg import Image

    rclpy.init()
    node = rclpy.create_node('bench_cameras')
    cameras = []
    for index in range(CAMERAS):
        msg = Image(height=HEIGHT, width=WIDTH, encoding='rgb8', step=WIDTH * 3,
                    data=scene(index).tobytes())
        msg.header.frame_id = f'cam{index}'
        cameras.append((node.create_publisher(Image, TOPIC.format(index), _qos()), msg))
    clock = node.get_clock()
    sent = [0]

    def tick() -> None:
        stamp = clock.now().to_msg()
        for publisher, msg in cameras:
            msg.header.stamp = stamp
            publisher.publish(msg)
            sent[0] += 1

    node.create_timer(1.0 / FPS, tick)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    print(json.dumps({'role': 'publisher', 'sent': sent[0]}), flush=True)
    node.destroy_node()
    rclpy.shutdown()


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_subscriber(mode: str, seconds: float, calls: int) -> None:
    """Receive for ``seconds`` with the tool's or bare subscriptions; then maybe time saves."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import Image

    rclpy.init()
    node = rclpy.create_node(f'bench_{mode}')
    received = [0]
    tool = None
    output_dir = tempfile.mkdtemp(prefix='record_bench_')
    if mode == 'tool':
        from lerobot_tools_ros.tools.record_observation import RecordObservationTool

        tool = RecordObservationTool(
            cameras={f'cam{i}': TOPIC.format(i) for i in range(CAMERAS)}, transport='raw',
            output_dir=output_dir, max_age_s=3600.0, overwrite=True)
        tool.bind_ros(node)
        subscriptions = list(tool._subscriptions)
    else:
        subscriptions = [node.create_subscription(Image, TOPIC.format(i), lambda msg: None,
                                                  _qos()) for i in range(CAMERAS)]
    for subscription in subscriptions:  # the same counting wrapper on both sides
        inner = subscription.callback

        def counted(msg, inner=inner):
            received[0] += 1
            inner(msg)

        subscription.callback = counted

    executor = SingleThreadedExecutor()
    executor.add_node(node)
    end = time.monotonic() + WARMUP_S
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    received[0] = 0
    cpu0, thread0, wall0 = _cpu(), time.thread_time(), time.monotonic()
    end = wall0 + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    cpu, thread, wall = _cpu() - cpu0, time.thread_time() - thread0, time.monotonic() - wall0
    frames = received[0]
    print(json.dumps({'role': mode, 'frames': frames, 'wall_s': wall, 'cpu_s': cpu,
                      'executor_cpu_s': thread}), flush=True)

    if tool is not None:
        sys.stdin.readline()  # the orchestrator says when the cameras have stopped
        print(json.dumps({'role': 'save', **time_saves(tool, output_dir, calls)}), flush=True)
        tool.close()
    node.destroy_node()
    rclpy.shutdown()


def time_saves(tool, output_dir: str, calls: int) -> dict:
    """Time full tool calls (three PNGs) against cv2.imwrite of one frame, interleaved."""
    import cv2
    from rosbags.image import message_to_cvimage

    frame = message_to_cvimage(tool._frames['cam0'].msg, 'bgr8')
    params = [cv2.IMWRITE_PNG_COMPRESSION, tool.png_compression]
    single = os.path.join(output_dir, 'single.png')
    tool.call({'label': 'warmup'})
    cv2.imwrite(single, frame, params)
    call_s, imwrite_s = [], []
    for _ in range(calls):
        start = time.perf_counter()
        result = tool.call({'label': 'bench'})
        call_s.append(time.perf_counter() - start)
        assert result['complete'] and len(result['paths']) == CAMERAS, result
        start = time.perf_counter()
        cv2.imwrite(single, frame, params)
        imwrite_s.append(time.perf_counter() - start)
    size = os.path.getsize(single)
    return {'call_s': call_s, 'imwrite_s': imwrite_s, 'png_bytes': size,
            'png_compression': tool.png_compression}


# ------------------------------------------------------------------------------ orchestration
def _env() -> dict:
    env = dict(os.environ)
    env.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(101, 200)))
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env['PYTHONUNBUFFERED'] = '1'
    return env


def _ms(values: list) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return f'median {statistics.median(values) * 1e3:7.1f} ms  p90 {p90 * 1e3:7.1f} ms'


def main() -> int:
    """Run the publisher and both subscribers as processes and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--duration', type=float, default=10.0, help='ingest window, seconds')
    parser.add_argument('--calls', type=int, default=15, help='timed save calls')
    parser.add_argument('--role', choices=['publisher', 'tool', 'bare'], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == 'publisher':
        run_publisher(args.duration)
        return 0
    if args.role:
        run_subscriber(args.role, args.duration, args.calls)
        return 0

    env = _env()
    me = [sys.executable, str(pathlib.Path(__file__).resolve())]
    common = ['--duration', str(args.duration), '--calls', str(args.calls)]
    subscribers = {
        mode: subprocess.Popen(me + common + ['--role', mode], env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for mode in ('tool', 'bare')
    }
    time.sleep(1.0)  # let the subscribers come up before the cameras start
    publisher = subprocess.Popen(
        me + ['--duration', str(args.duration + WARMUP_S + 2.0), '--role', 'publisher'],
        env=env, text=True, stdout=subprocess.PIPE)
    ingest = {mode: json.loads(proc.stdout.readline()) for mode, proc in subscribers.items()}
    sent = json.loads(publisher.stdout.readline())['sent']
    publisher.wait()
    subscribers['tool'].stdin.write('save\n')
    subscribers['tool'].stdin.flush()
    save = json.loads(subscribers['tool'].stdout.readline())
    for proc in subscribers.values():
        proc.wait(60)

    print(f'record_observation benchmark: {CAMERAS} cameras, {WIDTH}x{HEIGHT} rgb8 at {FPS:g} fps,'
          f' {args.duration:g} s window, {os.cpu_count()} CPUs, domain {env["ROS_DOMAIN_ID"]}')
    print(f'publisher sent {sent} frames in total (warm-up included)')
    per = {}
    for mode in ('tool', 'bare'):
        row = ingest[mode]
        frames = max(row['frames'], 1)
        per[mode] = (row['cpu_s'] / frames, row['executor_cpu_s'] / frames)
        print(f'ingest {mode:4s}: {row["frames"]:5d} frames '
              f'({row["frames"] / row["wall_s"]:5.1f}/s)  process CPU '
              f'{per[mode][0] * 1e3:6.3f} ms/frame  executor thread '
              f'{per[mode][1] * 1e3:6.3f} ms/frame')
    ratio = per['tool'][0] / per['bare'][0]
    ratio_thread = per['tool'][1] / per['bare'][1]
    print(f'ingest ratio tool/bare: process {ratio:.2f}x, executor thread {ratio_thread:.2f}x '
          f'(target <= 1.2x)')
    print(f'save   call (3 PNGs): {_ms(save["call_s"])}')
    print(f'save   cv2.imwrite (1 PNG): {_ms(save["imwrite_s"])}  '
          f'({save["png_bytes"] / 1e6:.2f} MB, png_compression {save["png_compression"]})')
    save_ratio = statistics.median(save['call_s']) / statistics.median(save['imwrite_s'])
    print(f'save ratio call/imwrite: {save_ratio:.2f}x (target <= 1.5x)')
    return 0


if __name__ == '__main__':
    threading.current_thread().name = 'record_bench'
    sys.exit(main())
