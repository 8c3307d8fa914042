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
``lerobot-tools-ros mcp``: the robot's (or a fleet's) tools for MCP clients (desktop assistants).

Starts the ``mcp_server`` node (``mcp/server.py``) with these options turned into ROS
parameters, so the command and a launch file configure the same thing. The bearer token for a
network-reachable HTTP server is read from an environment variable or a file, never taken as an
argument (command lines are visible to every user of the machine).
"""

import argparse
import pathlib
import sys

from lerobot_tools_ros.mcp import access

HELP = 'Serve the catalog tools over MCP (stdio or Streamable HTTP), gated by the dispatcher.'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--transport', choices=['stdio', 'http'], default='stdio',
                        help='stdio (default; what desktop clients start) or http '
                        '(Streamable HTTP)')
    parser.add_argument('--host', default='127.0.0.1',
                        help='HTTP bind address, IPv4 or IPv6 (:: or [::1]) (default 127.0.0.1; '
                        'anything but loopback needs a token)')
    parser.add_argument('--port', type=int, default=8765, help='HTTP port (default 8765)')
    parser.add_argument('--path', default='/mcp', help='HTTP endpoint path (default /mcp)')
    parser.add_argument('--token-env', default=access.DEFAULT_TOKEN_ENV, metavar='NAME',
                        help='environment variable holding the HTTP bearer token '
                        f'(default {access.DEFAULT_TOKEN_ENV})')
    parser.add_argument('--token-file', type=pathlib.Path, default=None, metavar='FILE',
                        help='file holding the HTTP bearer token (wins over --token-env)')
    parser.add_argument('--dispatcher', default=None, metavar='NAME',
                        help='dispatcher node to submit calls to (default: dispatcher, in '
                        'the ROS namespace)')
    parser.add_argument('--robots', default=None, metavar='NS[,NS...]',
                        help='serve a fleet: the ROS namespaces of its robots (e.g. '
                        "robot_a,robot_b); each robot's tools are offered as <robot>.<tool>")
    parser.add_argument('--discover-robots', action='store_true',
                        help='serve a fleet of every namespace with a dispatcher on this ROS '
                        'domain, as robots appear (with --robots: those and any found)')
    parser.add_argument('--read-only-tools', nargs='*', default=None, metavar='TOOL',
                        help='tools to list with readOnlyHint')
    parser.add_argument('--actuating-tools', nargs='*', default=None, metavar='TOOL',
                        help='tools to list with destructiveHint (approval confirm/deny tools '
                        'always are)')
    parser.add_argument('--discovery-wait-s', type=float, default=None, metavar='SECONDS',
                        help='how long after start a first tools/list waits for the '
                        'dispatcher and its executors to be discovered (default 5)')
    parser.add_argument('--http-session-idle-s', type=float, default=None, metavar='SECONDS',
                        help='an HTTP session without a request in flight for this long ends '
                        '(default 600)')
    parser.add_argument('--http-max-sessions', type=int, default=None, metavar='N',
                        help='most HTTP sessions open at once; at the cap the longest idle one '
                        'ends for a new client (default 100)')
    parser.add_argument('--params', type=pathlib.Path, default=None, metavar='FILE',
                        help='ROS parameters file for the mcp_server node')
    parser.add_argument('--log-level', default='info', choices=['debug', 'info', 'warn', 'error'])


def ros_arguments(args: argparse.Namespace) -> list[str]:
    """Return the ``--ros-args`` the command's options stand for."""
    ros = ['--ros-args', '--log-level', args.log_level]
    if args.params is not None:
        ros += ['--params-file', str(args.params.expanduser())]

    def param(name: str, value, raw: bool = False) -> None:
        # Quoted YAML: '::' and '[::1]' are not YAML plain scalars (rcl refused them).
        if isinstance(value, str) and not raw:
            value = "'" + value.replace("'", "''") + "'"
        ros.extend(['-p', f'{name}:={value}'])

    param('transport', args.transport)
    param('host', args.host)
    param('port', args.port)
    param('path', args.path)
    param('token_env', args.token_env)
    if args.token_file is not None:
        param('token_file', str(args.token_file.expanduser().resolve()))
    if args.dispatcher:
        param('dispatcher', args.dispatcher)
    if args.robots is not None:
        robots = [r.strip() for r in args.robots.split(',') if r.strip()]
        param('robots', '[' + ', '.join(f"'{r}'" for r in robots) + ']' if robots else "['']",
              raw=True)
    if args.discover_robots:
        param('discover_robots', 'true', raw=True)
    if args.discovery_wait_s is not None:
        param('discovery_wait_s', float(args.discovery_wait_s))
    if args.http_session_idle_s is not None:
        param('http_session_idle_s', float(args.http_session_idle_s))
    if args.http_max_sessions is not None:
        param('http_max_sessions', int(args.http_max_sessions))
    for name in ('read_only_tools', 'actuating_tools'):
        tools = getattr(args, name)
        if tools is not None:
            param(name, '[' + ', '.join(f"'{t}'" for t in tools) + ']' if tools else "['']",
                  raw=True)
    return ros


def run(args: argparse.Namespace) -> int:
    from lerobot_tools_ros.mcp import fleet, server as mcp_server
    try:  # checked before they become a YAML parameter override
        fleet.parse_robots([args.robots or ''])
    except fleet.RobotNameError as exc:
        print(f'lerobot-tools-ros mcp: error: --robots: {exc}', file=sys.stderr)
        return 2
    return mcp_server.main(['lerobot-tools-ros-mcp', *ros_arguments(args)])
