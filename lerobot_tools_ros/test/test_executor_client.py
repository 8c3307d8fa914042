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

"""ExecutorClient against real executors over DDS: discovery, readiness, loss and return."""

import json

from conftest import spin_until
from executor_calls import Caller, destroy_callers
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import names
from lerobot_tools_ros.catalog import DEFAULT_TOOLS
from lerobot_tools_ros.executors import ACTION, ExecutorClient, SERVICE
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest


@pytest.fixture(autouse=True)
def _clients_go_first(ros_node):
    """Destroy every Caller's ROS clients before the test node (orphans crash the GC)."""
    yield
    destroy_callers()


@pytest.fixture
def echo_dataset(tmp_path):
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps({'tools': [ECHO_SCHEMA,
                                                                   *DEFAULT_TOOLS]}))
    return root


@pytest.fixture
def service_only_executor(ros_node):
    """Serve CallTool knowing nothing of actions or probes (like a third-party executor)."""
    import rclpy
    seen = []

    def handle(request, response):
        seen.append(request.name)
        response.call_id = request.call_id
        response.success = True
        response.content = f'handled {request.name}'
        return response
    node = rclpy.create_node('plain_executor', context=ros_node.context)
    node.create_service(CallTool, '/plain/tool', handle)
    ros_node.executor_for_test.add_node(node)
    yield seen
    ros_node.executor_for_test.remove_node(node)
    node.destroy_node()


def test_a_service_only_executor_is_called_through_its_service(ros_node, service_only_executor):
    caller = Caller(ros_node, '/plain/tool')  # auto: would take the action if there were one
    assert caller.wait_ready(20.0)
    assert caller.client.kind == SERVICE
    # Only probes went out before it was ready (a slow answer may have been probed twice).
    assert service_only_executor and set(service_only_executor) == {names.READINESS_PROBE}
    outcome = caller.call({}, call_id='x', name='tool')
    assert outcome.success and outcome.content == 'handled tool' and outcome.call_id == 'x'
    pending = caller.start({}, call_id='y', name='tool')
    assert pending.handle.cancel() is False  # a service request cannot be stopped remotely
    assert caller.finish(pending).success  # and its answer still comes
    forgotten = caller.start({}, call_id='z', name='tool')
    forgotten.handle.forget()
    # The executor handled it (x, y, z), and its answer had time to arrive.
    assert spin_until(ros_node, lambda: service_only_executor.count('tool') == 3, 5.0)
    spin_until(ros_node, lambda: False, 0.5)
    assert forgotten.outcomes == []  # a forgotten request reports nothing


def test_tool_server_is_called_through_its_action(start_node, ros_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
                      '-p', f'dataset:={echo_dataset}')
    caller = Caller(ros_node, '/lerobot_tools/echo')
    assert spin_until(ros_node, lambda: caller.client.poll() and caller.client.kind == ACTION,
                      30.0), proc.output()
    outcome = caller.call({'text': 'via action'})
    assert outcome.success and json.loads(outcome.content) == {'text': 'via action'}


def test_readiness_is_lost_with_the_executor_and_proven_again_on_return(
        start_node, ros_node, echo_dataset):
    args = ('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
            '-p', f'dataset:={echo_dataset}')
    proc = start_node(*args)
    caller = Caller(ros_node, '/lerobot_tools/echo', ACTION)
    assert caller.wait_ready(30.0), proc.output()
    assert proc.stop() == 0
    assert spin_until(ros_node, lambda: not caller.client.poll(), 20.0)
    with pytest.raises(RuntimeError, match='not ready'):
        caller.start({'text': 'nobody'})
    proc = start_node(*args)
    assert caller.wait_ready(30.0), proc.output()
    assert caller.call({'text': 'back'}).success


def test_unproven_client_probes_again_before_the_next_call(start_node, ros_node, echo_dataset):
    proc = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
                      '-p', f'dataset:={echo_dataset}')
    caller = Caller(ros_node, '/lerobot_tools/echo', SERVICE)
    assert caller.wait_ready(30.0), proc.output()
    caller.client.mark_unproven()  # what the dispatcher does after a call went unanswered
    assert not caller.client.ready
    assert caller.wait_ready(10.0)
    assert caller.call({'text': 'again'}).success


def test_bad_mode_is_refused(ros_node):
    with pytest.raises(ValueError, match='mode must be one of'):
        ExecutorClient(ros_node, '/lerobot_tools/echo', mode='topic')
