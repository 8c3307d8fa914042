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
``lerobot-tools-ros approve``: list calls waiting for an operator, approve or deny one.

Without a call id it lists the calls the dispatcher announced on
``lerobot_tools/approval_requests`` (transient local, so recent requests reach a tool started
later) that are still open: the dispatcher closes a request by publishing it again with
``timeout_s`` 0 once it is decided, timed out or paused. With a call id it sends the decision to
the dispatcher's ``~/approve``; the note (default: this user at this host) goes to the audit log
as who decided.
"""

import argparse
import getpass
import socket
import sys
import time
from typing import Any

HELP = 'List tool calls waiting for approval, or approve/deny one (tool.<name>.approval: confirm).'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('call_id', nargs='?',
                        help='the call to decide; omit to list pending calls')
    parser.add_argument('--deny', action='store_true', help='deny the call instead of approving')
    parser.add_argument('--note', default=None,
                        help='who decides and why, for the audit log (default: user@host)')
    parser.add_argument('--dispatcher', default='/dispatcher',
                        help="the dispatcher node's name (its ~/approve service)")
    parser.add_argument('--topic', default=None,
                        help='approval request topic (default: lerobot_tools/approval_requests)')
    parser.add_argument('--wait', type=float, default=10.0, metavar='S',
                        help='seconds to wait for the dispatcher (discovery)')


def _pending(node, executor, topic: str, seconds: float) -> list | None:
    """Return (request, seconds left) of calls still waiting, or None without a dispatcher."""
    from lerobot_tools_interfaces.msg import ApprovalRequest, ToolResult
    from lerobot_tools_ros import names
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    requests: dict[str, Any] = {}  # call id -> ApprovalRequest
    answered: set[str] = set()
    node.create_subscription(
        ApprovalRequest, topic, lambda msg: requests.__setitem__(msg.call_id, msg),
        QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                   durability=DurabilityPolicy.TRANSIENT_LOCAL))
    node.create_subscription(ToolResult, names.RESULTS_TOPIC,
                             lambda msg: answered.add(msg.call_id),
                             QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    # Wait for the dispatcher's publisher, then for its stored requests to arrive.
    deadline = time.monotonic() + seconds
    while not node.count_publishers(topic) and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    if not node.count_publishers(topic):
        return None
    settle = time.monotonic() + 1.0
    while time.monotonic() < settle:
        executor.spin_once(timeout_sec=0.05)
    now_ns = node.get_clock().now().nanoseconds
    pending = []
    for call_id, msg in requests.items():
        stamp_ns = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        timeout_ns = msg.timeout.sec * 10**9 + msg.timeout.nanosec
        left = (timeout_ns - (now_ns - stamp_ns)) / 1e9
        if call_id not in answered and timeout_ns > 0 and left > 0:
            pending.append((msg, left))
    return pending


def _decide(node, executor, service: str, call_id: str, approve: bool, note: str,
            seconds: float) -> tuple[bool, str]:
    from lerobot_tools_interfaces.srv import Approve
    from lerobot_tools_ros import names
    from lerobot_tools_ros.commands.service_client import call_once
    from lerobot_tools_ros.untrusted import log_text
    client = node.create_client(Approve, service)
    response, problem = call_once(
        executor, client, Approve.Request(call_id=names.READINESS_PROBE),
        Approve.Request(call_id=call_id, approve=approve, note=note), seconds)
    if response is None:
        return False, problem
    return response.success, log_text(response.message, 500)


def run(args: argparse.Namespace) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from lerobot_tools_ros import names
    from lerobot_tools_ros.untrusted import log_text
    rclpy.init(args=[])
    node = rclpy.create_node('lerobot_tools_approve')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        if args.call_id is None:
            topic = node.resolve_topic_name(args.topic or names.APPROVAL_REQUESTS_TOPIC)
            pending = _pending(node, executor, topic, args.wait)
            if pending is None:
                print(f'error: nothing publishes {topic} (is the dispatcher running in this ROS '
                      'domain?)', file=sys.stderr)
                return 1
            if not pending:
                print('no calls are waiting for approval')
                return 0
            print(f'{len(pending)} call(s) waiting for approval:')
            for msg, left in pending:
                print(f'  {log_text(msg.call_id, 200)}  {log_text(msg.name)}('
                      f'{log_text(msg.arguments, 120)})  '
                      f'from {log_text(msg.source)}, {left:.0f} s left')
            print('decide with: lerobot-tools-ros approve CALL_ID [--deny] [--note TEXT]')
            return 0
        note = args.note if args.note is not None else \
            f'{getpass.getuser()}@{socket.gethostname()} (lerobot-tools-ros approve)'
        service = f'{args.dispatcher.rstrip("/")}/approve'
        ok, message = _decide(node, executor, service, args.call_id, not args.deny, note,
                              args.wait)
        print(message if ok else f'error: {message}', file=sys.stdout if ok else sys.stderr)
        return 0 if ok else 1
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
