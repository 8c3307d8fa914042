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
The topic reference is the truth: the running nodes create exactly the endpoints of endpoints.py.

`docs/reference/topics.md` is generated from `lerobot_tools_ros.endpoints`; this test starts
the nodes (`bringup --demo`: dispatcher, tool_server, speaker and the demo nodes in one
process, plus `lerobot-tools-ros mcp`) and reads the ROS graph: every publisher, subscription,
service, client and action of each of the package's nodes, with its type, reliability and
durability, must be in the table, and every row of the table must be on the graph. A node
that gains or loses an endpoint fails here until the table (and with `make docs` the page)
says so. DDS discovery does not carry history and depth, so those are not compared.
"""

import pathlib
import socket
import sys
import time

from lerobot_tools_ros import endpoints, names
import pytest

# What every rclpy node has (parameter services, /rosout, parameter events, type descriptions).
_INFRASTRUCTURE = ('/describe_parameters', '/get_parameter_types', '/get_parameters',
                   '/list_parameters', '/set_parameters', '/set_parameters_atomically',
                   '/get_type_description')
_ALWAYS_PUBLISHED = ('/rosout', '/parameter_events')
# Hosted by tool_server with --demo: the sample dataset's tools (close_gripper is bound).
HOSTED = ('say', 'record_observation', 'close_gripper')
CAMERAS = ('front',)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _absolute(name: str, node: str) -> str:
    if name.startswith('/'):
        return name
    if name.startswith('~/'):
        return f'/{node}/{name[2:]}'
    return '/' + name


def expected(catalog_tools: tuple[str, ...]) -> set[tuple[str, str, str, str, str]]:
    """Resolve the table for bringup --demo without namespace: (node, kind, name, type, qos)."""
    rows = set()
    for endpoint in endpoints.ENDPOINTS:
        if endpoint.node == 'replay':
            continue  # a node of `lerobot-tools-ros replay`, not started here
        if endpoint.only_with and endpoint.only_with != endpoints.DEMO_BINDINGS:
            continue
        tools = (catalog_tools if endpoint.node in ('dispatcher', 'dispatcher_call')
                 else HOSTED)
        for tool in tools if '<tool>' in endpoint.node + endpoint.name else ('',):
            node = endpoint.node.replace('<tool>', names.ros_safe(tool))
            name = endpoint.name.replace('<tool>', names.ros_safe(tool))
            for camera in CAMERAS if '<camera>' in name else ('',):
                resolved = _absolute(name.replace('<camera>', camera), node)
                qos = (f'{endpoint.qos.reliability}/{endpoint.qos.durability}'
                       if endpoint.qos else '')
                rows.add((node, endpoint.kind, resolved, endpoint.interface, qos))
    return rows


def _qos_text(info) -> str:
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
    reliability = {ReliabilityPolicy.RELIABLE: 'reliable',
                   ReliabilityPolicy.BEST_EFFORT: 'best_effort'}.get(
        info.qos_profile.reliability, str(info.qos_profile.reliability))
    durability = {DurabilityPolicy.VOLATILE: 'volatile',
                  DurabilityPolicy.TRANSIENT_LOCAL: 'transient_local'}.get(
        info.qos_profile.durability, str(info.qos_profile.durability))
    return f'{reliability}/{durability}'


def observed(node, nodes: tuple[str, ...]) -> set[tuple[str, str, str, str, str]]:
    """Read the graph: every endpoint of `nodes` (in the root namespace), as `expected` has it."""
    from rclpy.action import graph as action_graph

    rows = set()
    present = {name for name, namespace in node.get_node_names_and_namespaces()
               if namespace == '/'}
    for name in sorted(set(nodes) & present):
        for topic, types in node.get_publisher_names_and_types_by_node(name, '/'):
            if '/_action/' in topic or topic in _ALWAYS_PUBLISHED:
                continue
            for info in node.get_publishers_info_by_topic(topic):
                if info.node_name == name:
                    rows.add((name, 'publisher', topic, types[0], _qos_text(info)))
        for topic, types in node.get_subscriber_names_and_types_by_node(name, '/'):
            if '/_action/' in topic:
                continue
            for info in node.get_subscriptions_info_by_topic(topic):
                if info.node_name == name:
                    rows.add((name, 'subscription', topic, types[0], _qos_text(info)))
        for service, types in node.get_service_names_and_types_by_node(name, '/'):
            if '/_action/' not in service and not service.endswith(_INFRASTRUCTURE):
                rows.add((name, 'service', service, types[0], ''))
        for service, types in node.get_client_names_and_types_by_node(name, '/'):
            if '/_action/' not in service and not service.endswith(_INFRASTRUCTURE):
                rows.add((name, 'service client', service, types[0], ''))
        for action, types in action_graph.get_action_server_names_and_types_by_node(
                node, name, '/'):
            rows.add((name, 'action server', action, types[0], ''))
        for action, types in action_graph.get_action_client_names_and_types_by_node(
                node, name, '/'):
            rows.add((name, 'action client', action, types[0], ''))
    return rows


def test_the_running_nodes_have_exactly_the_endpoints_of_the_reference(
        start_process, start_node, ros_node, tmp_path):
    from lerobot_tools_ros.catalog import SAMPLE_DATASET, ToolCatalog

    catalog_tools = tuple(ToolCatalog.load(str(SAMPLE_DATASET)).names)
    want = expected(catalog_tools)
    nodes = tuple(sorted({row[0] for row in want}))
    # bringup --demo ends once its scripted policy is done: start what it starts, kept running.
    share = pathlib.Path(__file__).resolve().parents[1] / 'config'
    procs = [start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup',
                            '--demo-camera', '--bindings-file', str(share / 'demo_bindings.yaml'),
                            '--output-dir', str(tmp_path / 'out'), '--tts-backend',
                            'espeak_ng'], name='bringup'),
             start_node('lerobot_tools_ros.demo.gripper'),
             start_node('lerobot_tools_ros.demo.scripted_policy', '-p', 'interval_s:=3600.0'),
             start_process([sys.executable, '-m', 'lerobot_tools_ros.cli', 'mcp', '--transport',
                            'http', '--port', str(_free_port())], name='mcp')]
    started = time.monotonic()
    have: set = set()
    while time.monotonic() - started < 60.0 and all(p.proc.poll() is None for p in procs):
        ros_node.executor_for_test.spin_once(timeout_sec=0.2)
        have = observed(ros_node, nodes)
        if have >= want and time.monotonic() - started > 5.0:
            break
    time.sleep(2.0)  # settle: a node may still be creating endpoints the table lacks
    have = observed(ros_node, nodes)
    missing = sorted(want - have)
    extra = sorted(have - want)
    assert not missing and not extra, (
        'endpoints.py and the running nodes disagree (fix the table or the node, then run '
        '`make docs` to regenerate docs/reference/topics.md):\n'
        + ''.join(f'  in the table, not on the graph: {row}\n' for row in missing)
        + ''.join(f'  on the graph, not in the table: {row}\n' for row in extra)
        + ''.join(f'--- {p.args[2:5]}:\n{p.output()[-1500:]}\n' for p in procs))


@pytest.mark.parametrize('endpoint', endpoints.ENDPOINTS, ids=lambda e: f'{e.node}:{e.name}')
def test_every_row_is_complete(endpoint):
    assert endpoint.kind in endpoints.KINDS
    assert endpoint.interface.count('/') == 2, endpoint.interface
    assert endpoint.description.strip()
    topic = endpoint.kind in ('publisher', 'subscription')
    assert (endpoint.qos is not None) == topic, 'topics have a QoS, services and actions none'
