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
A fleet for tests and benchmarks: robot hosts and an operator host on one switch.

Each robot host (a network namespace, see ``netns_hosts``) runs its own stack under its own ROS
namespace (``/robot_a/...``). A full robot is what ``lerobot-tools-ros bringup`` starts (the
dispatcher with an audit log, tool_server with say, record_observation and echo, the speaker
writing WAV files, the demo camera) plus the demo gripper bound as ``close_gripper``: two
processes, as a robot computer would run them. A light robot is a dispatcher and a tool_server
with only the echo tool (what lets 8 hosts fit on 2 cores). The operator host runs
``fleet_operator``. All share one reserved ROS_DOMAIN_ID; discovery is one of:

- ``multicast``: the switch forwards multicast, ``ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET``;
- ``static_peers``: the switch drops multicast; every host has
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and ``ROS_STATIC_PEERS`` naming the others;
- ``discovery_server``: the switch drops multicast; the operator program is Fast DDS discovery
  server 0 (a profile makes its participant the server), and every other process has
  ``ROS_DISCOVERY_SERVER`` naming it.

Every participant uses UDP only (``FASTDDS_BUILTIN_TRANSPORTS=UDPv4``): the hosts share one
kernel and /dev/shm, and Fast DDS would otherwise move data between "hosts" through shared
memory, which no pulled cable stops. A Fast DDS profile shortens the participant lease (3 s,
announced every 1 s; the default is 20 s) so a host whose link is down leaves the others' graph
within seconds.
"""

import json
import pathlib
import sys
from typing import Any

from conftest import node_env, NodeProcess, PACKAGE_DIR
from fleet_operator import Operator
from netns_hosts import Host, Switch
import yaml

CONFIG_DIR = PACKAGE_DIR / 'config'
SAMPLE_INFO = PACKAGE_DIR / 'lerobot_tools_ros' / 'data' / 'sample_dataset' / 'meta' / 'info.json'
DISCOVERY_MODES = ('multicast', 'static_peers', 'discovery_server')
DISCOVERY_SERVER_PORT = 11811
# The GUID prefix of discovery server 0, the one ROS_DISCOVERY_SERVER's first address names.
DISCOVERY_SERVER_PREFIX = '44.53.00.5f.45.50.52.4f.53.49.4d.41'
LEASE_S = 3
ANNOUNCE_S = 1

FAST_DDS_PROFILE = f"""<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <participant profile_name="fleet_participant" is_default_profile="true">
      <rtps>
        <builtin>
          <discovery_config>
            <leaseDuration><sec>{LEASE_S}</sec></leaseDuration>
            <leaseAnnouncement><sec>{ANNOUNCE_S}</sec></leaseAnnouncement>
          </discovery_config>
        </builtin>
      </rtps>
    </participant>
  </profiles>
</dds>
"""


def discovery_server_profile(address: str) -> str:
    """Return a Fast DDS profile that makes a ROS process discovery server 0 at ``address``."""
    return f"""<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <participant profile_name="fleet_discovery_server" is_default_profile="true">
      <rtps>
        <prefix>{DISCOVERY_SERVER_PREFIX}</prefix>
        <builtin>
          <discovery_config>
            <discoveryProtocol>SERVER</discoveryProtocol>
            <leaseDuration><sec>{LEASE_S}</sec></leaseDuration>
            <leaseAnnouncement><sec>{ANNOUNCE_S}</sec></leaseAnnouncement>
          </discovery_config>
          <metatrafficUnicastLocatorList>
            <locator><udpv4><address>{address}</address>
              <port>{DISCOVERY_SERVER_PORT}</port></udpv4></locator>
          </metatrafficUnicastLocatorList>
        </builtin>
      </rtps>
    </participant>
  </profiles>
</dds>
"""


def echo_schema() -> dict:
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    return json.loads(json.dumps(ECHO_SCHEMA))


def write_dataset(root: pathlib.Path, full: bool) -> pathlib.Path:
    """Write a dataset whose catalog is the sample's plus echo (full) or echo only (light)."""
    info = json.loads(SAMPLE_INFO.read_text(encoding='utf-8'))
    info['tools'] = (info['tools'] if full else []) + [echo_schema()]
    (root / 'meta').mkdir(parents=True, exist_ok=True)
    (root / 'meta' / 'info.json').write_text(json.dumps(info), encoding='utf-8')
    return root


def write_params(path: pathlib.Path, tools: list[str]) -> pathlib.Path:
    """Write the packaged parameters file with tool_server's tools and a WAV speaker."""
    params = yaml.safe_load((CONFIG_DIR / 'lerobot_tools.yaml').read_text(encoding='utf-8'))
    params['/**/tool_server']['ros__parameters']['tools'] = tools
    params['/**/speaker']['ros__parameters']['sink'] = 'wav'
    path.write_text(yaml.safe_dump(params), encoding='utf-8')
    return path


class Robot:
    """One robot host's stack: its processes and the files it writes."""

    def __init__(self, name: str, host: Host, root: pathlib.Path, full: bool) -> None:
        self.name = name
        self.host = host
        self.root = root
        self.full = full
        self.audit_log = root / 'audit.jsonl'
        self.output_dir = root / 'out'
        self.processes: list[NodeProcess] = []

    def audit_records(self) -> list[dict]:
        from lerobot_tools_ros.dispatch.records import read_audit_log
        return list(read_audit_log(self.audit_log)) if self.audit_log.exists() else []

    def output(self) -> str:
        return '\n'.join(f'--- {p.log_path.name}\n{p.output()[-3000:]}' for p in self.processes)


class Fleet:
    """The switch, its hosts, the robots' stacks and the operator (see the module docstring)."""

    def __init__(self, domain: int, root: pathlib.Path, discovery: str = 'multicast') -> None:
        if discovery not in DISCOVERY_MODES:
            raise ValueError(f'discovery {discovery!r}: one of {DISCOVERY_MODES}')
        self.domain = domain
        self.root = root
        self.discovery = discovery
        self.robots: dict[str, Robot] = {}
        self.unlisted: set[str] = set()  # hosts with no static peers, named by none
        self.operator: Operator | None = None
        self.operators: list[Operator] = []
        self._processes: list[NodeProcess] = []
        self.profile = root / 'fast_dds_fleet.xml'
        root.mkdir(parents=True, exist_ok=True)
        self.profile.write_text(FAST_DDS_PROFILE, encoding='utf-8')
        self.switch = Switch()
        self.switch.set_multicast(True)

    def add_hosts(self, robot_names: list[str], unlisted: tuple[str, ...] = ()) -> None:
        """
        Make the operator's host and one host per robot (before anything starts).

        ``unlisted`` hosts are on the switch but outside the static peers: with multicast
        dropped, nothing should discover them or be discovered by them.
        """
        self.switch.add_host('operator')
        for name in (*robot_names, *unlisted):
            self.switch.add_host(name)
        self.unlisted.update(unlisted)
        self.switch.set_multicast(self.discovery == 'multicast')

    def env(self, host: Host, server: bool = False) -> dict:
        """
        Return the environment of a process on ``host`` (see the module docstring).

        ``server``: the process is the discovery server (``discovery_server`` mode).
        """
        env = node_env(self.domain, self.root / host.name)
        env['FASTDDS_BUILTIN_TRANSPORTS'] = 'UDPv4'
        env['FASTDDS_DEFAULT_PROFILES_FILE'] = str(self.profile)
        # Nothing of the caller's DDS setup may name another address or change discovery.
        for name in ('ROS_STATIC_PEERS', 'ROS_DISCOVERY_SERVER', 'ROS_SUPER_CLIENT',
                     'FASTRTPS_DEFAULT_PROFILES_FILE', 'RMW_FASTRTPS_USE_QOS_FROM_XML'):
            env.pop(name, None)
        if self.discovery == 'multicast':
            env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'SUBNET'
        elif self.discovery == 'discovery_server':
            env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'SUBNET'
            server_address = self.switch.hosts['operator'].address
            if server:
                profile = self.root / 'fast_dds_discovery_server.xml'
                profile.write_text(discovery_server_profile(server_address), encoding='utf-8')
                env['FASTDDS_DEFAULT_PROFILES_FILE'] = str(profile)
            elif host.name not in self.unlisted:
                env['ROS_DISCOVERY_SERVER'] = f'{server_address}:{DISCOVERY_SERVER_PORT}'
        else:
            env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
            if host.name not in self.unlisted:
                env['ROS_STATIC_PEERS'] = ';'.join(
                    other.address for other in self.switch.hosts.values()
                    if other is not host and other.name not in self.unlisted)
        return env

    def start(self, host: Host, args: list[str], name: str) -> NodeProcess:
        log_dir = self.root / host.name
        log_dir.mkdir(parents=True, exist_ok=True)
        proc = NodeProcess(host.command(args), self.env(host), log_dir / f'{name}.log')
        self._processes.append(proc)
        return proc

    def start_robot(self, name: str, full: bool = True) -> Robot:
        """Start the stack of robot ``name`` on its host (made by ``add_hosts``)."""
        host = self.switch.hosts[name]
        robot = self.robots[name] = Robot(name, host, self.root / name, full)
        dataset = write_dataset(robot.root / 'dataset', full)
        if full:
            params = write_params(robot.root / 'params.yaml',
                                  ['say', 'record_observation', 'echo'])
            robot.processes.append(self.start(host, [
                sys.executable, '-m', 'lerobot_tools_ros.cli', 'bringup',
                '--namespace', name, '--params', str(params), '--dataset', str(dataset),
                '--demo-camera', '--bindings-file', str(CONFIG_DIR / 'demo_bindings.yaml'),
                '--tts-backend', 'espeak_ng', '--output-dir', str(robot.output_dir),
                '--audit-log', str(robot.audit_log), '--duration', '1800'], 'bringup'))
            robot.processes.append(self.start(host, [
                sys.executable, '-m', 'lerobot_tools_ros.demo.gripper',
                '--ros-args', '-r', f'__ns:=/{name}'], 'demo_gripper'))
        else:
            params = CONFIG_DIR / 'lerobot_tools.yaml'
            common = ['--params-file', str(params), '-r', f'__ns:=/{name}',
                      '-p', f'dataset:={dataset}']
            robot.processes.append(self.start(host, [
                sys.executable, '-m', 'lerobot_tools_ros.dispatcher.node', '--ros-args',
                *common, '-p', f'audit_log:={robot.audit_log}'], 'dispatcher'))
            robot.processes.append(self.start(host, [
                sys.executable, '-m', 'lerobot_tools_ros.tool_server.node', '--ros-args',
                *common, '-p', 'tools:=[echo]'], 'tool_server'))
        return robot

    def start_operator(self, host_name: str = 'operator') -> Operator:
        """Start the operator program on a host (the operator's; a robot's for a local one)."""
        host = self.switch.hosts[host_name]
        log_dir = self.root / host.name
        log_dir.mkdir(parents=True, exist_ok=True)
        # In discovery_server mode the operator station's first program is the server.
        server = (self.discovery == 'discovery_server' and host_name == 'operator'
                  and self.operator is None)
        operator = Operator(host.command([]), self.env(host, server),
                            log_dir / f'operator-{len(self.operators)}.log')
        self.operators.append(operator)
        if host_name == 'operator' and self.operator is None:
            self.operator = operator
        return operator

    def cut(self, name: str) -> None:
        """Pull the cable of host ``name`` (a robot or 'operator') at the switch."""
        self.switch.set_link(self.switch.hosts[name], False)

    def plug(self, name: str) -> None:
        self.switch.set_link(self.switch.hosts[name], True)

    def output(self) -> str:
        text = '\n'.join(robot.output() for robot in self.robots.values())
        for operator in self.operators:
            text += f'\n--- {operator.log_path.name}\n' + operator.output()
        return text

    def close(self) -> list[str]:
        """Stop every process, then delete the namespaces; return teardown problems."""
        problems: list[str] = []
        for name in list(self.switch.hosts):
            if self.switch.link_state(self.switch.hosts[name]) == 'DOWN':
                self.plug(name)  # so that a stopping node can still say goodbye
        for operator in self.operators:
            operator.close()
        for proc in reversed(self._processes):
            try:
                proc.stop(timeout=15.0)
            except Exception as exc:  # noqa: B902 - the namespaces must go in any case
                problems.append(f'{proc.args}: {exc!r}')
                proc.kill()
        problems += self.switch.close()
        return problems


def fleet_results(records: list[dict[str, Any]]) -> dict[str, dict]:
    """Map each call id of an audit log to its call and result records."""
    calls: dict[str, dict] = {}
    for record in records:
        if record.get('event') in ('call', 'result'):
            calls.setdefault(record.get('call_id', ''), {})[record['event']] = record
    return calls
