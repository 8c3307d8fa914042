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
One MCP endpoint for two robots on one host, under the official SDK client (stdio and HTTP).

robot_a and robot_b are each a stack in its own ROS namespace on one domain, driven through
``lerobot-tools-ros mcp --robots robot_a,robot_b``.

Each robot's tools are listed as ``<robot>.<tool>`` with its own catalog's text and schemas, a
call reaches only the robot it names (what its dispatcher published says so), a pause or an
approval is that robot's, resources are per robot, and a robot that leaves takes its tools out of
the list and brings them back when it returns. The stacks start once for the module.
"""

import asyncio
import contextlib
import json
import os
import subprocess
import sys

from conftest import node_env, NodeProcess, reserve_test_domain, spin_until
import pytest
from test_mcp_server import (
    _mcp, free_port, ListChanges, server_command, text_of, wait_for_port, within)

ROBOTS = ('robot_a', 'robot_b')
GENEROUS = ('--discovery-wait-s', '60')


class FleetStack:
    """Two robot stacks (dispatcher + tool_server hosting echo) and a test node, one domain."""

    def __init__(self, root, domain: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from lerobot_tools_interfaces.msg import ToolResult
        from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
        self.root = root
        self.env = node_env(domain, root)
        self.procs: list[NodeProcess] = []
        self.dispatchers: dict[str, NodeProcess] = {}
        self.dataset = root / 'echo_dataset'
        (self.dataset / 'meta').mkdir(parents=True)
        (self.dataset / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA]}))
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(f'fleet_test_{os.getpid()}', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.node.executor_for_test = self.executor
        self.results: dict[str, list] = {robot: [] for robot in ROBOTS}
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        for robot in ROBOTS:
            self.node.create_subscription(ToolResult, f'/{robot}/lerobot_tools/results',
                                          self.results[robot].append, reliable)
            self.start(robot, 'tool_server', '-p', 'tools:=[echo]')
            self.start_dispatcher(robot)
        for robot in ROBOTS:
            self.wait_ready(robot)

    def start(self, robot: str, node: str, *ros_args: str) -> NodeProcess:
        args = [sys.executable, '-m', f'lerobot_tools_ros.nodes.{node}', '--ros-args',
                '-r', f'__ns:=/{robot}', '-p', f'dataset:={self.dataset}', *ros_args]
        proc = NodeProcess(args, self.env, self.root / f'{robot}-{node}-{len(self.procs)}.log')
        self.procs.append(proc)
        return proc

    def start_dispatcher(self, robot: str) -> None:
        self.dispatchers[robot] = self.start(robot, 'dispatcher')

    def wait_ready(self, robot: str) -> None:
        from lerobot_tools_interfaces.srv import CallTool
        call = self.node.create_client(CallTool, f'/{robot}/dispatcher/call')
        assert spin_until(self.node, lambda: call.service_is_ready() and (
            f'/{robot}/lerobot_tools/echo' in dict(self.node.get_service_names_and_types())),
            60.0), self.dispatchers[robot].output()
        self.node.destroy_client(call)

    def service(self, srv_type, name: str, request, timeout: float = 15.0):
        client = self.node.create_client(srv_type, name)
        try:
            assert spin_until(self.node, client.service_is_ready, timeout), name
            future = client.call_async(request)
            assert spin_until(self.node, future.done, timeout), name
            return future.result()
        finally:
            self.node.destroy_client(client)

    def set_parameter(self, robot: str, name: str, value) -> None:
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        answer = self.service(SetParameters, f'/{robot}/dispatcher/set_parameters',
                              SetParameters.Request(parameters=[
                                  Parameter(name, value=value).to_parameter_msg()]))
        assert answer.results[0].successful, answer.results[0].reason

    def pause(self, robot: str, paused: bool) -> None:
        from std_srvs.srv import SetBool
        answer = self.service(SetBool, f'/{robot}/dispatcher/set_enabled',
                              SetBool.Request(data=not paused))
        assert answer.success, answer.message

    def mcp_results(self, robot: str, since: int = 0) -> list:
        """Return the robot's results of MCP calls, from the `since`-th result on (`seen`)."""
        spin_until(self.node, lambda: False, 0.5)  # what is on its way arrives
        return [r for r in self.results[robot][since:] if r.source == 'mcp']

    def seen(self, robot: str) -> int:
        """Return how many results of the robot arrived: tests of a module run in any order."""
        return len(self.results[robot])

    def close(self) -> None:
        import rclpy
        for proc in self.procs:
            proc.stop()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    _mcp()
    with reserve_test_domain() as domain:
        stack = FleetStack(tmp_path_factory.mktemp('mcp_fleet'), domain)
        try:
            yield stack
        finally:
            stack.close()


@contextlib.asynccontextmanager
async def stdio_fleet(fleet: FleetStack, *options: str, **session_kwargs):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    command = server_command(*options, *GENEROUS)
    params = StdioServerParameters(command=command[0], args=command[1:], env=fleet.env)
    with open(fleet.root / 'mcp-stderr.log', 'a') as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, **session_kwargs) as client:
                await within(client.initialize(), 60.0)
                yield client


def test_each_robots_tools_under_its_name_each_call_to_its_robot_pause_per_robot(fleet):
    from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
    fleet.set_parameter('robot_a', 'tool.echo.approval', 'auto')
    since = {robot: fleet.seen(robot) for robot in ROBOTS}

    async def session() -> None:
        async with stdio_fleet(fleet, '--robots', ','.join(ROBOTS)) as client:
            listed = {t.name: t for t in (await within(client.list_tools(), 90.0)).tools}
            assert sorted(listed) == ['robot_a.echo', 'robot_b.echo']
            for robot in ROBOTS:
                tool = listed[f'{robot}.echo']
                assert tool.description.startswith(f'[robot {robot}] ')
                assert ECHO_SCHEMA['function']['description'] in tool.description
                assert set(tool.input_schema['properties']) == set(
                    ECHO_SCHEMA['function']['parameters']['properties'])
                assert tool.output_schema is not None
                assert robot in (tool.title or '')

            # Each call reaches the robot it names, and only that one.
            for robot in ROBOTS:
                done = await within(client.call_tool(f'{robot}.echo', {'text': f'to {robot}'}))
                assert not done.is_error, text_of(done)
                assert done.structured_content == {'text': f'to {robot}', 'outcome': 'ran'}

            # A pause is per robot: robot_a refuses, robot_b goes on.
            fleet.pause('robot_a', True)
            try:
                paused = await within(client.call_tool('robot_a.echo', {'text': 'paused?'}))
                assert paused.is_error and text_of(paused).startswith('paused: '), text_of(paused)
                going = await within(client.call_tool('robot_b.echo', {'text': 'still on'}))
                assert not going.is_error, text_of(going)
            finally:
                fleet.pause('robot_a', False)

            unknown = await within(client.call_tool('robot_c.echo', {'text': 'x'}))
            assert unknown.is_error and text_of(unknown).startswith('unknown_tool: ')
            assert 'robot_a, robot_b' in text_of(unknown)

            # Resources per robot: each one's catalog, results and status.
            uris = {str(r.uri) for r in (await within(client.list_resources())).resources}
            for robot in ROBOTS:
                assert f'lerobot-tools://robots/{robot}/catalog' in uris
                assert f'lerobot-tools://robots/{robot}/results/recent' in uris
                status = json.loads((await within(client.read_resource(
                    f'lerobot-tools://robots/{robot}/server/status'))).contents[0].text)
                assert status['dispatcher'] == f'/{robot}/dispatcher'
                catalog = (await within(client.read_resource(
                    f'lerobot-tools://robots/{robot}/catalog'))).contents[0]
                assert str(catalog.uri) == f'lerobot-tools://robots/{robot}/catalog'
                assert [e['function']['name'] for e in json.loads(catalog.text)['tools']] \
                    == ['echo']
            templates = (await within(client.list_resource_templates())).resource_templates
            assert {t.uri_template for t in templates} == {
                f'lerobot-tools://robots/{robot}/observations/{{path}}' for robot in ROBOTS}

    asyncio.run(session())
    results = {robot: fleet.mcp_results(robot, since[robot]) for robot in ROBOTS}
    sent_a, sent_b = ([json.loads(r.arguments)['text'] for r in results[robot]]
                      for robot in ROBOTS)
    assert sent_a == ['to robot_a', 'paused?'] and sent_b == ['to robot_b', 'still on']
    assert [r.error_code for r in results['robot_a']] == ['', 'paused']


def test_discovery_finds_every_robot_on_the_domain(fleet):
    async def session() -> list:
        async with stdio_fleet(fleet, '--discover-robots') as client:
            deadline = asyncio.get_running_loop().time() + 60.0
            while True:  # each namespace is found once its dispatcher shows in the graph
                names = sorted(t.name for t in (await within(client.list_tools(), 90.0)).tools)
                if names == ['robot_a.echo', 'robot_b.echo'] or \
                        asyncio.get_running_loop().time() > deadline:
                    return names
                await asyncio.sleep(0.5)

    assert asyncio.run(session()) == ['robot_a.echo', 'robot_b.echo']


def test_a_2026_client_is_asked_about_the_right_robot_and_bad_robot_names_are_refused(fleet):
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    fleet.set_parameter('robot_a', 'tool.echo.approval', 'confirm')
    asked: list[str] = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action='accept', content={'approve': True})

    async def session() -> None:
        # 2026 era: the call answers input_required naming the robot; the SDK retries it with
        # the user's answer, under the same robot-scoped name.
        command = server_command('--robots', ','.join(ROBOTS), *GENEROUS)
        params = StdioServerParameters(command=command[0], args=command[1:], env=fleet.env)
        async with Client(params, mode='auto', elicitation_callback=elicit) as client:
            assert client.session.protocol_version == '2026-07-28'
            listed = (await within(client.list_tools(cache_mode='bypass'), 90.0)).tools
            assert sorted(t.name for t in listed) == ['robot_a.echo', 'robot_b.echo']
            done = await within(client.call_tool('robot_a.echo', {'text': 'approved'}), 30.0)
            assert not done.is_error, text_of(done)
            assert done.structured_content == {'text': 'approved', 'outcome': 'ran'}
            assert len(asked) == 1 and "Robot 'robot_a'" in asked[0], asked
            free = await within(client.call_tool('robot_b.echo', {'text': 'no approval'}))
            assert not free.is_error and len(asked) == 1, text_of(free)

    try:
        asyncio.run(session())
    finally:
        fleet.set_parameter('robot_a', 'tool.echo.approval', 'auto')
    for options, code, why in (
            (['--robots', 'robot-a'], 2, 'not a ROS name segment'),
            (['--robots', 'robot_a,/robot_a'], 2, 'twice'),
            (['--robots', 'robot_a', '--dispatcher', '/dispatcher'], 1, 'is absolute')):
        refused = subprocess.run(server_command(*options), env=fleet.env, timeout=60,
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert refused.returncode == code and why in refused.stderr, refused.stderr


def test_http_approval_names_the_robot_and_a_robot_that_leaves_takes_its_tools(fleet):
    import mcp_types as types
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    port = free_port()
    server = NodeProcess(server_command('--transport', 'http', '--port', str(port),
                                        '--robots', 'robot_a, robot_b', *GENEROUS),
                         fleet.env, fleet.root / 'mcp-http.log')
    fleet.procs.append(server)
    wait_for_port(port, server)
    fleet.set_parameter('robot_b', 'tool.echo.approval', 'confirm')
    asked: list[str] = []
    changes = ListChanges()

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action='accept', content={'approve': True})

    async def names(client) -> list[str]:
        return sorted(t.name for t in (await within(client.list_tools(), 90.0)).tools)

    async def session() -> None:
        async with streamable_http_client(f'http://127.0.0.1:{port}/mcp') as (read, write):
            async with ClientSession(read, write, elicitation_callback=elicit,
                                     message_handler=changes) as client:
                await within(client.initialize(), 60.0)
                assert await names(client) == ['robot_a.echo', 'robot_b.echo']
                plain = await within(client.call_tool('robot_a.echo', {'text': 'no approval'}))
                assert not plain.is_error and not asked, text_of(plain)
                done = await within(client.call_tool('robot_b.echo', {'text': 'approved'}), 30.0)
                assert not done.is_error, text_of(done)
                assert len(asked) == 1 and "Robot 'robot_b'" in asked[0], asked
                assert "'robot_b.echo' needs approval" in asked[0], asked
                fleet.set_parameter('robot_b', 'tool.echo.approval', 'auto')

                # robot_b's dispatcher stops: its tools leave the list, robot_a's stay.
                changes.event.clear()
                fleet.dispatchers['robot_b'].stop()
                for _ in range(5):
                    await changes.wait(30.0)
                    if await names(client) == ['robot_a.echo']:
                        break
                assert await names(client) == ['robot_a.echo']
                gone = await within(client.call_tool('robot_b.echo', {'text': 'gone'}), 30.0)
                assert gone.is_error and text_of(gone).startswith('unavailable: '), text_of(gone)
                again = await within(client.call_tool('robot_a.echo', {'text': 'a goes on'}))
                assert not again.is_error, text_of(again)

                # It comes back: its tools return, with no restart of the endpoint.
                fleet.start_dispatcher('robot_b')
                for _ in range(5):
                    await changes.wait(60.0)
                    if await names(client) == ['robot_a.echo', 'robot_b.echo']:
                        break
                assert await names(client) == ['robot_a.echo', 'robot_b.echo']
                back = await within(client.call_tool('robot_b.echo', {'text': 'back'}), 30.0)
                assert not back.is_error, text_of(back)
                assert back.structured_content == {'text': 'back', 'outcome': 'ran'}

    asyncio.run(within(session(), 300.0))
    assert server.proc.poll() is None, server.output()
    # (The restarted dispatcher's results topic may publish before the test node matched it,
    # so 'back' is checked on the MCP answer above, not here.)
    sent = [json.loads(r.arguments)['text'] for r in fleet.mcp_results('robot_b')]
    assert 'approved' in sent, sent
    assert 'gone' not in sent  # unavailable: nothing was sent
