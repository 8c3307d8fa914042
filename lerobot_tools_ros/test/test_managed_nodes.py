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
dispatcher, tool_server and speaker as managed (lifecycle) nodes, driven over DDS.

Each node runs as a real process started with `--managed`; the test drives it through the
standard services a lifecycle manager or `ros2 lifecycle set` uses (~/change_state,
~/get_state, ~/get_available_transitions) and checks what each state means to a caller:
inactive answers calls paused, active runs them, cleanup releases everything (configure works
again), a failed configure leaves the node unconfigured and alive. The state is on
/diagnostics.
"""

import json
import sys

from conftest import PACKAGE_DIR, prove_service, spin_until
from diagnostic_msgs.msg import DiagnosticArray
from lerobot_tools_interfaces.msg import ErrorCodes
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import managed, names
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from std_msgs.msg import String
from test_say_stop import assert_silenced, Ear, LONG, packaged, Policy, RELIABLE

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'


@pytest.fixture
def start_managed(start_process):
    """Start one of the three nodes with --managed and the packaged parameters file."""
    def start(node: str, *overrides: str):
        return start_process([sys.executable, '-m', f'lerobot_tools_ros.nodes.{node}',
                              '--managed', '--ros-args', *packaged(*overrides)], name=node)
    return start


class Lifecycle:
    """The lifecycle services of one node, as `ros2 lifecycle` calls them."""

    def __init__(self, ros_node, node: str, output=str) -> None:
        self.ros_node, self.node, self.output = ros_node, node, output
        self.change = ros_node.create_client(ChangeState, f'/{node}/change_state')
        self.get = ros_node.create_client(GetState, f'/{node}/get_state')
        self.transitions = ros_node.create_client(GetAvailableTransitions,
                                                  f'/{node}/get_available_transitions')
        self.diagnostics: list = []
        ros_node.create_subscription(DiagnosticArray, names.DIAGNOSTICS_TOPIC,
                                     self.diagnostics.append, 10)

    def state(self) -> str:
        return prove_service(self.ros_node, self.get, GetState.Request(), 60.0,
                             self.output).current_state.label

    def available(self) -> set:
        answer = prove_service(self.ros_node, self.transitions,
                               GetAvailableTransitions.Request(), 30.0, self.output)
        return {t.transition.label for t in answer.available_transitions}

    def change_to(self, label: str) -> bool:
        self.state()  # proves answers reach us before a request that must go once
        future = self.change.call_async(ChangeState.Request(transition=Transition(label=label)))
        assert spin_until(self.ros_node, future.done, 60.0), self.output()
        return future.result().success

    def diagnosis(self, containing: str) -> str:
        """Return the node's last lifecycle diagnostic message once it contains `containing`."""
        def found() -> str:
            for array in reversed(self.diagnostics):
                for status in array.status:
                    if status.name.endswith(f'{self.node}: lifecycle'):
                        return status.message if containing in status.message else ''
            return ''
        assert spin_until(self.ros_node, lambda: bool(found()), 10.0), self.diagnostics[-3:]
        return found()


def _call(ros_node, service: str, name: str, arguments: dict) -> CallTool.Response:
    client = ros_node.create_client(CallTool, service)
    prove_service(ros_node, client, CallTool.Request(call_id='p', name=names.READINESS_PROBE))
    _CALL_IDS.append(f'c-{name}-{len(_CALL_IDS)}')  # an id runs once: each call its own
    future = client.call_async(CallTool.Request(call_id=_CALL_IDS[-1], name=name,
                                                arguments=json.dumps(arguments)))
    assert spin_until(ros_node, future.done, 30.0)
    return future.result()


_CALL_IDS: list = []
# What a call answers in each state: paused while inactive, run (any other answer) when active.
PROBE_CALLS = {
    'dispatcher': ('/dispatcher/call', 'say', {'text': 'Hello.'}),
    'tool_server': (f'/{names.SERVICE_PREFIX}/record_observation', 'record_observation',
                    {'label': 'x'}),
}
NODE_OVERRIDES = {
    # No executor runs: an active dispatcher's say waits for one, then times out.
    'dispatcher': ['tool.say.timeout_s:=0.5'],
    # No camera runs: an active record_observation answers no_frame at once.
    'tool_server': ['tools:=[record_observation]', 'tool.say.backend:=espeak_ng'],
    'speaker': ['sink:=null'],
}


@pytest.mark.parametrize('node', managed.MANAGED_NODES)
def test_every_transition_over_dds(start_managed, ros_node, tmp_path, node):
    extra = [f'output_dir:={tmp_path}'] if node == 'speaker' else (
        [f'tool.record_observation.output_dir:={tmp_path}'] if node == 'tool_server' else [])
    proc = start_managed(node, *NODE_OVERRIDES[node], *extra)
    lifecycle = Lifecycle(ros_node, node, proc.output)
    assert lifecycle.state() == 'unconfigured'
    assert {'configure', 'shutdown'} <= lifecycle.available()
    lifecycle.diagnosis('configure, then activate')
    for round_ in (1, 2):  # cleanup releases everything: the node configures again
        assert lifecycle.change_to('configure'), proc.output()
        assert lifecycle.state() == 'inactive'
        assert {'activate', 'cleanup'} <= lifecycle.available()
        lifecycle.diagnosis('is inactive')
        if node in PROBE_CALLS:
            answer = _call(ros_node, *PROBE_CALLS[node])
            assert answer.error_code == ErrorCodes.PAUSED, (answer, proc.output())
        assert lifecycle.change_to('activate'), proc.output()
        assert lifecycle.state() == 'active'
        lifecycle.diagnosis('is active')
        if node in PROBE_CALLS:
            answer = _call(ros_node, *PROBE_CALLS[node])
            assert answer.error_code not in ('', ErrorCodes.PAUSED), answer
        assert lifecycle.change_to('deactivate'), proc.output()
        assert lifecycle.state() == 'inactive'
        if node in PROBE_CALLS:
            assert _call(ros_node, *PROBE_CALLS[node]).error_code == ErrorCodes.PAUSED
        assert lifecycle.change_to('cleanup'), proc.output()
        assert lifecycle.state() == 'unconfigured'
    assert lifecycle.change_to('shutdown')
    assert lifecycle.state() == 'finalized'
    assert proc.stop() == 0, proc.output()
    assert 'Traceback' not in proc.output()


def _set_string(ros_node, node: str, name: str, value: str):
    client = ros_node.create_client(SetParameters, f'/{node}/set_parameters')
    request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value=value))])
    return prove_service(ros_node, client, request).results[0]


def test_configure_fails_on_a_bad_dataset_and_succeeds_once_it_is_fixed(start_managed,
                                                                        ros_node, tmp_path):
    proc = start_managed('dispatcher', f'dataset:={tmp_path}/missing')
    lifecycle = Lifecycle(ros_node, 'dispatcher', proc.output)
    assert not lifecycle.change_to('configure')
    assert lifecycle.state() == 'unconfigured'
    assert proc.proc.poll() is None, proc.output()  # no exit, so nothing respawns it
    message = lifecycle.diagnosis('missing')
    assert 'configure failed, still unconfigured' in message and f'{tmp_path}/missing' in message
    assert 'configure failed, still unconfigured' in proc.output()
    # The start parameters stay settable while unconfigured: fix it, configure again.
    assert _set_string(ros_node, 'dispatcher', 'dataset', '').successful
    assert lifecycle.change_to('configure'), proc.output()
    assert lifecycle.change_to('activate')
    lifecycle.diagnosis('is active')
    # Configured, the dataset is read-only again (re-read with ~/reload_catalog).
    assert not _set_string(ros_node, 'dispatcher', 'dataset', '/elsewhere').successful
    assert 'Traceback' not in proc.output()


def test_a_misspelled_parameter_fails_configure_without_exiting(start_managed, ros_node):
    proc = start_managed('dispatcher', 'timeout_sec:=5.0')
    lifecycle = Lifecycle(ros_node, 'dispatcher', proc.output)
    assert not lifecycle.change_to('configure')
    assert "did you mean 'timeout_s'?" in lifecycle.diagnosis('timeout_sec')
    assert lifecycle.state() == 'unconfigured' and proc.proc.poll() is None


def test_deactivate_during_a_playing_say_silences_it_with_one_result(start_managed, start_node,
                                                                     ros_node, tmp_path):
    out = tmp_path / 'audio'
    procs = [start_node('lerobot_tools_ros.speaker.node',
                        *packaged('sink:=wav', f'output_dir:={out}')),
             start_node('lerobot_tools_ros.tool_server.node',
                        *packaged('tools:=[say]', 'tool.say.backend:=espeak_ng')),
             start_managed('dispatcher')]

    def output() -> str:
        return '\n'.join(proc.output()[-3000:] for proc in procs)

    lifecycle = Lifecycle(ros_node, 'dispatcher', output)
    for transition in managed.AUTOSTART:
        assert lifecycle.change_to(transition), output()
    ear = Ear(ros_node)
    text = ros_node.create_publisher(String, '/policy/text', RELIABLE)
    assert spin_until(ros_node, lambda: (
        text.get_subscription_count() > 0
        and ros_node.count_subscribers('/speaker/audio') > 0
        and ros_node.count_publishers('/lerobot_tools/results') > 0
        and f'/{names.SERVICE_PREFIX}/say/_action/send_goal' in dict(
            ros_node.get_service_names_and_types())), 60.0), output()
    spin_until(ros_node, lambda: False, 1.0)  # every subscription matched both ways
    call_id, uid = Policy(ros_node, ear, output).speak(LONG['pause'])
    assert lifecycle.change_to('deactivate'), output()
    assert spin_until(ros_node, lambda: ear.result(call_id) is not None, 30.0), output()
    assert ear.result(call_id).error_code == ErrorCodes.PAUSED  # one result (ear checks it)
    assert_silenced(ear, ros_node, uid, out, output)
    # New policy text while inactive is answered paused, never spoken.
    known = set(ear.statuses)
    text.publish(String(data='<say>Not now.</say>'))
    assert spin_until(ros_node, lambda: len(ear.results) >= 2, 10.0), output()
    assert ear.results[-1].error_code == ErrorCodes.PAUSED
    spin_until(ros_node, lambda: False, 1.0)
    assert set(ear.statuses) == known
    # Activate again: speech runs.
    assert lifecycle.change_to('activate')
    text.publish(String(data='<say>Back again.</say>'))
    assert spin_until(ros_node, lambda: len(ear.results) >= 3, 60.0), output()
    assert ear.results[-1].success, ear.results[-1].error_message


def test_tool_server_deactivate_during_a_playing_say_silences_it(
        start_managed, start_node, ros_node, tmp_path):
    from conftest import prove_action
    from lerobot_tools_interfaces.action import RunTool
    from rclpy.action import ActionClient
    from test_say_stop import Goal, SAY_ACTION

    out = tmp_path / 'audio'
    procs = [start_node('lerobot_tools_ros.speaker.node',
                        *packaged('sink:=wav', f'output_dir:={out}')),
             start_managed('tool_server', 'tools:=[say]', 'tool.say.backend:=espeak_ng')]

    def output() -> str:
        return '\n'.join(proc.output()[-3000:] for proc in procs)

    lifecycle = Lifecycle(ros_node, 'tool_server', output)
    for transition in managed.AUTOSTART:
        assert lifecycle.change_to(transition), output()
    ear = Ear(ros_node)
    client = ActionClient(ros_node, RunTool, SAY_ACTION)
    prove_action(ros_node, client, RunTool.Goal(name=names.READINESS_PROBE))
    assert spin_until(ros_node, lambda: ros_node.count_subscribers('/speaker/audio') > 0, 30.0)
    spin_until(ros_node, lambda: False, 1.0)
    goal = Goal(ros_node, client, LONG['pause'])
    assert spin_until(ros_node, lambda: ear.playing(set(), 1.0), 30.0), output()
    uid = ear.playing(set(), 1.0)
    assert lifecycle.change_to('deactivate'), output()
    assert spin_until(ros_node, goal.done, 30.0), output()
    assert goal.outcome().error_code == ErrorCodes.CANCELLED, goal.outcome()
    assert_silenced(ear, ros_node, uid, out, output)
    # Inactive: a new goal is answered paused and nothing is spoken.
    later = Goal(ros_node, client, 'Not now.')
    assert spin_until(ros_node, later.done, 30.0)
    assert later.outcome().error_code == ErrorCodes.PAUSED
    assert set(ear.statuses) == {uid}
