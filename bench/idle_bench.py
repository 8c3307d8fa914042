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
Idle CPU of the running stack, next to plain rclpy nodes with the same entities, same run.

Stack: `lerobot-tools-ros bringup` (dispatcher, tool_server, speaker in one process, as users run
it; say on espeak-ng, the speaker writing WAVs), nothing sent to it. Baseline: one process with
plain rclpy nodes of the same names, each with the same publishers, subscriptions, services and
clients as the stack's node (read from the ROS graph), plus a 1 Hz timer, spun by one
SingleThreadedExecutor, in a domain of its own. Both run at the same time, so machine load hits
both alike; CPU time (user + system, all threads) is sampled over the same window.

    scripts/with_env.sh python bench/idle_bench.py [--seconds 30] [--settle 5]
"""

import argparse
import importlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from common import spin, stop_all
from results import record

# Services every rclpy node makes by itself (parameters, type description): not mirrored.
_AUTOMATIC_SERVICES = ('/describe_parameters', '/get_parameter_types', '/get_parameters',
                       '/list_parameters', '/set_parameters', '/set_parameters_atomically',
                       '/get_type_description')
_AUTOMATIC_TOPICS = ('/rosout', '/parameter_events')
# How the graph names an action's parts, and where rclpy keeps their types (Action.Impl).
_ACTION_PARTS = {'FeedbackMessage': 'FeedbackMessage', 'SendGoal': 'SendGoalService',
                 'GetResult': 'GetResultService'}


def _interface(type_name: str):
    """Import a ROS interface class from 'pkg/msg/Name'."""
    package, kind, name = type_name.split('/')
    module = importlib.import_module(f'{package}.{kind}')
    if kind == 'action' and not hasattr(module, name):  # an action's hidden topic or service
        action, _, part = name.rpartition('_')  # RunTool_FeedbackMessage, RunTool_SendGoal, ...
        return getattr(getattr(module, action).Impl, _ACTION_PARTS[part])
    return getattr(module, name)


def role_plain(spec_path: str) -> None:
    """Create plain nodes with the entities in the spec file, each with a 1 Hz timer; spin."""
    import rclpy
    spec = json.loads(pathlib.Path(spec_path).read_text())
    rclpy.init()
    nodes = []
    for node_name, entities in spec.items():
        node = rclpy.create_node(node_name)
        for topic, types in entities['publishers']:
            node.create_publisher(_interface(types[0]), topic, 10)
        for topic, types in entities['subscriptions']:
            node.create_subscription(_interface(types[0]), topic, lambda msg: None, 10)
        for service, types in entities['services']:
            node.create_service(_interface(types[0]), service,
                                lambda request, response: response)
        for service, types in entities['clients']:
            node.create_client(_interface(types[0]), service)
        node.create_timer(1.0, lambda: None)
        nodes.append(node)
    spin(*nodes)


def _graph_spec(probe, node_names: list[str]) -> dict:
    """Read each node's publishers, subscriptions, services and clients from the graph."""
    spec = {}
    for name in node_names:
        def keep_topics(pairs):
            return [[t, types] for t, types in pairs if t not in _AUTOMATIC_TOPICS]

        def keep_services(pairs):
            return [[s, types] for s, types in pairs
                    if not s.endswith(_AUTOMATIC_SERVICES)]
        spec[name] = {
            'publishers': keep_topics(probe.get_publisher_names_and_types_by_node(name, '/')),
            'subscriptions': keep_topics(
                probe.get_subscriber_names_and_types_by_node(name, '/')),
            'services': keep_services(probe.get_service_names_and_types_by_node(name, '/')),
            'clients': keep_services(probe.get_client_names_and_types_by_node(name, '/')),
        }
    return spec


def _cpu_seconds(pid: int) -> float:
    import psutil
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--role', choices=['plain'], help=argparse.SUPPRESS)
    parser.add_argument('--spec', help=argparse.SUPPRESS)
    parser.add_argument('--seconds', type=float, default=30.0)
    parser.add_argument('--settle', type=float, default=5.0)
    args = parser.parse_args()
    if args.role == 'plain':
        role_plain(args.spec)
        return 0

    from domain_coordinator import domain_id
    # Two reserved domains (nobody else's discovery traffic): the stack's and the baseline's.
    with domain_id() as stack_domain, domain_id() as plain_domain:
        return _measure(args, stack_domain, plain_domain)


def _measure(args: argparse.Namespace, stack_domain: int, plain_domain: int) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    workdir = pathlib.Path(tempfile.mkdtemp(prefix='idle_bench_'))
    base_env = dict(os.environ, PYTHONUNBUFFERED='1', ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    stack = subprocess.Popen(
        [sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup', '--tts-backend', 'espeak_ng',
         '--output-dir', str(workdir / 'out'), '--log-level', 'warn'],
        env=dict(base_env, ROS_DOMAIN_ID=str(stack_domain)), stdout=subprocess.DEVNULL)
    procs = [stack]
    try:
        os.environ.update(ROS_DOMAIN_ID=str(stack_domain),
                          ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
        rclpy.init()
        probe = rclpy.create_node('idle_bench_probe')
        executor = SingleThreadedExecutor()
        executor.add_node(probe)
        wanted = {'dispatcher', 'tool_server', 'speaker'}
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.2)
            present = set(probe.get_node_names())
            if wanted <= present and '/lerobot_tools/say' in dict(
                    probe.get_service_names_and_types()):
                break
        else:
            print('error: the stack did not come up', file=sys.stderr)
            return 1
        time.sleep(1.0)  # the last entities of the stack appear
        executor.spin_once(timeout_sec=0.2)
        node_names = sorted(n for n in probe.get_node_names() if n != 'idle_bench_probe')
        spec = _graph_spec(probe, node_names)
        executor.shutdown()
        probe.destroy_node()
        rclpy.try_shutdown()
        spec_path = workdir / 'spec.json'
        spec_path.write_text(json.dumps(spec))
        plain = subprocess.Popen(
            [sys.executable, str(pathlib.Path(__file__).resolve()), '--role', 'plain', '--spec',
             str(spec_path)], env=dict(base_env, ROS_DOMAIN_ID=str(plain_domain)))
        procs.append(plain)
        time.sleep(args.settle)
        if stack.poll() is not None or plain.poll() is not None:
            print('error: a process exited early', file=sys.stderr)
            return 1
        start = time.monotonic()
        stack_cpu, plain_cpu = _cpu_seconds(stack.pid), _cpu_seconds(plain.pid)
        time.sleep(args.seconds)
        wall = time.monotonic() - start
        stack_pct = (_cpu_seconds(stack.pid) - stack_cpu) / wall * 100
        plain_pct = (_cpu_seconds(plain.pid) - plain_cpu) / wall * 100
        entities = sum(len(v) for node in spec.values() for v in node.values())
        print(f'idle CPU over {wall:.0f} s ({len(spec)} nodes, {entities} entities: '
              f'{", ".join(node_names)})')
        print(f'  stack (bringup, one process)               {stack_pct:6.2f} % of a core')
        print(f'  plain rclpy nodes, same entities, 1 Hz     {plain_pct:6.2f} % of a core')
        ratio = stack_pct / max(plain_pct, 1e-9)
        print(f'  ratio stack/plain                          {ratio:6.2f}x   (target: <= 1.5x)')
        record('idle_bench', 'idle_cpu', stack_pct, '% of a core', floor=plain_pct,
               floor_label='plain rclpy nodes, same entities, 1 Hz timer', target_ratio=1.5,
               target='<= 1.5x', label=f'idle CPU of bringup over {wall:.0f} s')
        return 0
    finally:
        stop_all(procs, 15.0)


if __name__ == '__main__':
    sys.exit(main())
