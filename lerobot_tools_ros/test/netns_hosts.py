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
Hosts for tests, made of Linux network namespaces: one per host, joined to a switch.

The switch is a bridge in a namespace of its own, and every veth pair is created directly
inside the namespaces it joins (``ip -n``), so nothing is ever added to, or sent through, the
machine's own interfaces: the hosts have no route out of their switch, so no packet they send
can reach any other address. Addresses come from one private /24 the caller gives; each test's
switch is a separate layer-2 segment, so parallel runs may use the same addresses. Names carry
the process id and a random tag, so parallel pytest workers never collide, and ``close()``
deletes every namespace (which removes its interfaces and kills nothing: the caller stops its
processes first). Needs root (CAP_SYS_ADMIN) and iproute2.
"""

import os
import pathlib
import secrets
import shutil
import subprocess
from typing import Sequence

IP_TIMEOUT_S = 10.0


def namespaces_unavailable() -> str:
    """Return why network namespaces cannot be made here ('' when they can)."""
    if shutil.which('ip') is None:
        return 'iproute2 (the ip command) is not installed'
    if os.geteuid() != 0:
        return 'network namespaces need root (CAP_SYS_ADMIN); this test runs as a normal user'
    probe = f'ltprobe{os.getpid()}{secrets.token_hex(2)}'
    made = subprocess.run(['ip', 'netns', 'add', probe], capture_output=True, text=True,
                          timeout=IP_TIMEOUT_S)
    if made.returncode != 0:
        return f'ip netns add failed: {made.stderr.strip()}'
    subprocess.run(['ip', 'netns', 'del', probe], capture_output=True, timeout=IP_TIMEOUT_S)
    return ''


def ip(*args: str, namespace: str | None = None) -> str:
    """Run one ``ip`` command (in ``namespace``); raise with its message when it fails."""
    command = ['ip'] + (['-n', namespace] if namespace else []) + list(args)
    done = subprocess.run(command, capture_output=True, text=True, timeout=IP_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f'{" ".join(command)}: {done.stderr.strip()}')
    return done.stdout


class Host:
    """One host: a network namespace with ``lo`` and ``eth0`` (an address on the switch)."""

    def __init__(self, name: str, namespace: str, address: str, port: str) -> None:
        self.name = name
        self.namespace = namespace
        self.address = address
        self.port = port  # the switch's end of this host's cable (in the switch namespace)

    def command(self, args: Sequence[str]) -> list[str]:
        """Return ``args`` as a command that runs inside this host's namespace."""
        return ['ip', 'netns', 'exec', self.namespace, *args]


class Switch:
    """A bridge in its own namespace, and the hosts cabled to it (see the module docstring)."""

    def __init__(self, subnet_prefix: str = '10.77.0', igmp_snooping: bool = False) -> None:
        self.tag = f'lt{os.getpid() % 100000}{secrets.token_hex(2)}'
        self.subnet_prefix = subnet_prefix
        self.namespace = f'{self.tag}-switch'
        self.hosts: dict[str, Host] = {}
        self._made: list[str] = []
        ip('netns', 'add', self.namespace)
        self._made.append(self.namespace)
        ip('link', 'set', 'lo', 'up', namespace=self.namespace)
        # Like an unmanaged switch: no IGMP snooping unless asked for.
        ip('link', 'add', 'br0', 'type', 'bridge', 'mcast_snooping',
           '1' if igmp_snooping else '0', namespace=self.namespace)
        ip('link', 'set', 'br0', 'up', namespace=self.namespace)

    def add_host(self, name: str) -> Host:
        """Make a host namespace, cable it to the switch and give it the next address."""
        index = len(self.hosts) + 1
        if index > 250:
            raise ValueError('a switch holds at most 250 hosts')
        namespace = f'{self.tag}-{name}'
        ip('netns', 'add', namespace)
        self._made.append(namespace)
        port = f'port{index}'
        # Both ends are created where they live: no interface ever appears in the caller's
        # namespace (the machine's own).
        ip('link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace,
           namespace=self.namespace)
        ip('link', 'set', port, 'master', 'br0', namespace=self.namespace)
        ip('link', 'set', port, 'up', namespace=self.namespace)
        address = f'{self.subnet_prefix}.{index + 1}'
        ip('link', 'set', 'lo', 'up', namespace=namespace)
        ip('addr', 'add', f'{address}/24', 'dev', 'eth0', namespace=namespace)
        ip('link', 'set', 'eth0', 'up', namespace=namespace)
        host = self.hosts[name] = Host(name, namespace, address, port)
        return host

    def set_multicast(self, forwarded: bool) -> None:
        """
        Let the switch forward multicast to every port, or drop it.

        Many Wi-Fi and cloud networks drop it; then only unicast goes between the hosts.
        """
        flag = 'on' if forwarded else 'off'
        for host in self.hosts.values():
            ip('link', 'set', host.port, 'type', 'bridge_slave', 'mcast_flood', flag,
               namespace=self.namespace)

    def set_link(self, host: Host, up: bool) -> None:
        """Plug (``up``) or pull the host's cable at the switch: its port goes up or down."""
        ip('link', 'set', host.port, 'up' if up else 'down', namespace=self.namespace)

    def link_state(self, host: Host) -> str:
        """Return the switch port's operational state ('UP', 'DOWN', ...)."""
        out = ip('-o', 'link', 'show', host.port, namespace=self.namespace)
        return out.split(' state ', 1)[1].split()[0] if ' state ' in out else '?'

    def close(self) -> list[str]:
        """Delete every namespace made (hosts first); return the problems, if any."""
        problems = []
        for namespace in reversed(self._made):
            done = subprocess.run(['ip', 'netns', 'del', namespace], capture_output=True,
                                  text=True, timeout=IP_TIMEOUT_S)
            if done.returncode != 0:
                problems.append(f'{namespace}: {done.stderr.strip()}')
        self._made.clear()
        return problems

    def leftovers(self) -> list[str]:
        """Return the namespaces of this switch still present (none after ``close()``)."""
        run_netns = pathlib.Path('/run/netns')
        if not run_netns.is_dir():
            return []
        return sorted(p.name for p in run_netns.iterdir() if p.name.startswith(self.tag + '-'))
