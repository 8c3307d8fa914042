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
The executor contract: a call's arguments cross in process as the validated dict, checked once.

The catalog part needs no ROS. The rest runs a dispatcher and a tool_server as real nodes of
this process (one rclpy context, one executor thread, as ``lerobot-tools-ros bringup``) and the
policy's node; calls come as policy text. Each catalog's ``validate`` is wrapped in a counter on
its instance (nothing of ROS is replaced): the dispatcher validates each call once, and the
tool_server validates it only when its schema of the tool is not the dispatcher's. Over DDS the
tool_server validates every goal and request itself (test_tool_server.py).
"""

import json
import threading
from typing import Any

from bound_stack import in_own_domain, Policy, tool_schema, write_stack_files
from conftest import spin_until
from lerobot_tools_interfaces.msg import ErrorCodes, Outcomes
from lerobot_tools_ros import inprocess
from lerobot_tools_ros.catalog import (copy_arguments, ToolArgumentError, ToolCatalog,
                                       ValidatedArguments)
from lerobot_tools_ros.executors import ExecutorClient, LOCAL
from lerobot_tools_ros.limits import MAX_ARGUMENT_DEPTH
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest

# The same tool, with a tighter schema: what a tool_server given another dataset may hold.
SHORT_ECHO = tool_schema('echo', {'text': {'type': 'string', 'maxLength': 3}})


# -- the catalog: what validated arguments remember, and the copy a tool gets ---------------------

def test_a_catalog_vouches_for_arguments_checked_against_the_same_schema_only():
    dispatcher = ToolCatalog.from_tools([ECHO_SCHEMA])
    checked = dispatcher.validate('echo', '{"text": "hi"}')
    assert isinstance(checked, ValidatedArguments) and checked == {'text': 'hi'}
    assert json.dumps(checked) == '{"text": "hi"}'  # a dict to everyone who reads it
    # Another catalog with the same schema (the tool_server's, same dataset) takes the check.
    assert ToolCatalog.from_tools([ECHO_SCHEMA]).vouches_for('echo', checked)
    assert dispatcher.vouches_for('echo', checked)
    # Not for another schema of the same tool, another tool, or a dict nobody checked.
    assert not ToolCatalog.from_tools([SHORT_ECHO]).vouches_for('echo', checked)
    twin = tool_schema('twin', ECHO_SCHEMA['function']['parameters']['properties'])
    both = ToolCatalog.from_tools([ECHO_SCHEMA, twin])
    assert both.fingerprint('twin') == both.fingerprint('echo')
    assert not both.vouches_for('twin', checked)
    assert not dispatcher.vouches_for('echo', {'text': 'hi'})
    assert not ToolCatalog.from_tools(None).vouches_for('echo', checked)  # no echo there


def test_the_copy_a_tool_gets_shares_nothing_mutable_with_the_callers():
    caller = ToolCatalog.from_tools([ECHO_SCHEMA]).validate(
        'echo', {'text': 'a', 'extra': {'list': [1, {'deep': [2]}]}})
    copied = copy_arguments(caller)
    assert copied == caller and type(copied) is dict
    caller['text'] = 'changed'
    caller['extra']['list'].append(3)
    caller['extra']['list'][1]['deep'].append(4)
    assert copied == {'text': 'a', 'extra': {'list': [1, {'deep': [2]}]}}
    nested: Any = 'bottom'
    for _ in range(MAX_ARGUMENT_DEPTH + 1):
        nested = [nested]
    with pytest.raises(ToolArgumentError) as refused:
        copy_arguments({'text': nested})
    assert refused.value.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert 'levels deep' in refused.value.message


# -- in process: dispatcher and tool_server nodes of one process --------------------------------

class CountingValidate:
    """Count one catalog instance's validate calls (wraps the instance's bound method)."""

    def __init__(self, catalog: ToolCatalog) -> None:
        self._validate = catalog.validate
        self._lock = threading.Lock()
        self.calls: list[str] = []
        catalog.validate = self  # type: ignore[method-assign]

    def __call__(self, name: str, arguments: Any) -> ValidatedArguments:
        with self._lock:
            self.calls.append(name)
        return self._validate(name, arguments)

    def taken(self) -> list[str]:
        with self._lock:
            taken, self.calls = self.calls, []
        return taken


class Stack:
    """A dispatcher and a tool_server hosting echo, each on its own dataset, in one process."""

    def __init__(self, domain: int, root, dispatcher_tools: list, server_tools: list) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from lerobot_tools_ros.dispatcher.node import Dispatcher
        from lerobot_tools_ros.tool_server.node import ToolServer
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        mine, _ = write_stack_files(root / 'dispatcher', dispatcher_tools, '')
        theirs, _ = write_stack_files(root / 'tool_server', server_tools, '')
        self.executor = SingleThreadedExecutor(context=self.context)
        self.dispatcher = Dispatcher(context=self.context, cli_args=[
            '--ros-args', '-p', f'dataset:={mine}'])
        self.server = ToolServer(context=self.context, cli_args=[
            '--ros-args', '-p', 'tools:=[echo]', '-p', f'dataset:={theirs}'])
        for node in (self.dispatcher, self.server):
            self.executor.add_node(node)
        self._thread = threading.Thread(target=self.executor.spin, daemon=True, name='stack')
        self._thread.start()
        self.policy = Policy(self.context)
        self.dispatcher_checks = CountingValidate(self.dispatcher.catalog)
        self.server_checks = CountingValidate(self.server.catalog)

    def close(self) -> None:
        import rclpy
        self.policy.close()
        for node in (self.server, self.dispatcher):
            self.executor.remove_node(node)
            node.destroy_node()
        self.executor.shutdown(timeout_sec=2.0)
        rclpy.shutdown(context=self.context)
        self._thread.join(5.0)


@pytest.fixture(scope='module')
def same(tmp_path_factory):
    """Run a dispatcher and a tool_server on the same catalog (as bringup runs them)."""
    root = tmp_path_factory.mktemp('same')
    with in_own_domain(lambda domain: Stack(domain, root, [ECHO_SCHEMA],
                                            [ECHO_SCHEMA])) as stack:
        yield stack


@pytest.fixture(scope='module')
def differing(tmp_path_factory):
    """Run a tool_server whose dataset declares a tighter echo than the dispatcher's."""
    root = tmp_path_factory.mktemp('differing')
    with in_own_domain(lambda domain: Stack(domain, root, [ECHO_SCHEMA],
                                            [SHORT_ECHO])) as stack:
        yield stack


def test_in_process_each_call_is_validated_once_by_the_dispatcher(same):
    same.dispatcher_checks.taken()
    same.server_checks.taken()
    for number in range(5):
        result = same.policy.call('echo', {'text': f'once {number}'})
        assert result.success, result.error_message
        assert json.loads(result.content) == {'text': f'once {number}'}
    assert same.dispatcher.executor_path('echo') == LOCAL  # no DDS between them
    assert same.dispatcher_checks.taken() == ['echo'] * 5  # exactly once per call
    assert same.server_checks.taken() == []  # the tool_server took the dispatcher's check


def test_in_process_arguments_the_dispatcher_refuses_never_reach_the_tool_server(same):
    same.server_checks.taken()
    result = same.policy.call('echo', {'delay_s': 'soon'})
    assert result.error_code == ErrorCodes.INVALID_ARGUMENTS
    assert result.outcome == Outcomes.NOT_RUN
    assert same.server_checks.taken() == []


def test_in_process_a_differing_schema_is_validated_again_and_refused(differing):
    differing.dispatcher_checks.taken()
    differing.server_checks.taken()
    # Valid for the dispatcher's echo, too long for the tool_server's: refused there, not run.
    result = differing.policy.call('echo', {'text': 'too long'})
    assert result.error_code == ErrorCodes.INVALID_ARGUMENTS, result
    assert result.outcome == Outcomes.NOT_RUN
    assert 'text' in result.error_message and '3' in result.error_message, result.error_message
    assert differing.dispatcher.executor_path('echo') == LOCAL
    ok = differing.policy.call('echo', {'text': 'ok'})
    assert ok.success, ok.error_message
    assert json.loads(ok.content) == {'text': 'ok'}
    assert differing.dispatcher_checks.taken() == ['echo', 'echo']
    assert differing.server_checks.taken() == ['echo', 'echo']  # each call again, against its own


def test_a_running_tool_never_sees_what_its_caller_changes_afterwards(same):
    """The in-process boundary copies the arguments: the caller's later changes stay its own."""
    node = same.policy.node
    client = ExecutorClient(node, '/lerobot_tools/echo')
    try:
        assert spin_until(node, client.poll, 10.0) and client.path == LOCAL
        assert inprocess.lookup(same.context, '/lerobot_tools/echo') is not None
        same.server_checks.taken()
        # Validated as the dispatcher does (its own catalog of the same dataset).
        arguments = ToolCatalog.from_tools([ECHO_SCHEMA]).validate(
            'echo', {'text': 'before', 'delay_s': 0.4, 'extra': {'list': [1, 2]}})
        sent = json.loads(json.dumps(arguments))
        outcomes: list = []
        feedback: list = []
        handle = client.send('mutated', 'echo', arguments, outcomes.append,
                             lambda *report: feedback.append(report))
        assert arguments == sent  # the executor changes nothing of the caller's
        assert spin_until(node, lambda: bool(feedback), 10.0)  # the tool is running
        # The dispatcher keeps its dict (audit, results): whatever happens to it now...
        arguments['text'] = 'after'
        arguments['fail'] = 'changed while running'
        arguments['extra']['list'].append(3)
        del arguments['delay_s']
        assert spin_until(node, lambda: bool(outcomes), 10.0)
        # ...the tool answers from the arguments it was given.
        outcome = outcomes[0]
        assert outcome.success, outcome.error_message
        assert json.loads(outcome.content) == sent
        assert handle.done
        assert same.server_checks.taken() == []  # same schema: not validated again
    finally:
        client.destroy()
