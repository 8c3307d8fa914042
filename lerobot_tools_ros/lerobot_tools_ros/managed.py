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
Managed (lifecycle) nodes: what each transition does and how its outcome is decided (pure).

dispatcher, tool_server and speaker can run as ROS 2 managed nodes (`--managed` on their
command line, `managed:=true` for the launch file, `lerobot-tools-ros bringup --managed`).
`nodes.managed_node` wires rclpy.lifecycle to the decisions here; the reference pages list
`TRANSITIONS` with what each does for each node.

A failed `configure` leaves the node unconfigured and alive: the reason is logged and shown in
diagnostics (lifecycle_msgs' ChangeState answer only says success or not), and nothing exits or
respawns. A configuration error (a bad dataset, parameter or bindings file) is a failure; any
other exception is a bug: the transition ends in error processing, which releases what was built
and returns to unconfigured, with the traceback in the log.
"""

from dataclasses import dataclass

from lerobot_tools_ros import names
from lerobot_tools_ros.errors import ConfigurationError

__all__ = ['AUTOSTART', 'MANAGED_NODES', 'TRANSITIONS', 'Outcome', 'Transition',
           'accepts_calls', 'diagnostic', 'outcome']

MANAGED_NODES = (names.DISPATCHER_NODE, names.TOOL_SERVER_NODE, names.SPEAKER_NODE)
# What a launcher does to bring a managed node into service.
AUTOSTART = ('configure', 'activate')
# Diagnostic levels (diagnostic_msgs/DiagnosticStatus), as plain numbers.
OK, WARN, ERROR = 0, 1, 2


@dataclass(frozen=True)
class Transition:
    """One lifecycle transition and what it does on each managed node."""

    name: str
    start: str
    goal: str
    does: dict


TRANSITIONS = (
    Transition('configure', 'unconfigured', 'inactive', {
        names.DISPATCHER_NODE: 'reads and checks every parameter (a name it does not have '
                               'included), loads the catalog, opens the audit log, and creates '
                               'its topics, services and executor clients; calls that arrive '
                               'now are answered paused',
        names.TOOL_SERVER_NODE: 'reads and checks every parameter, loads the catalog and the '
                                'bindings file, builds each tool (the TTS backend is loaded '
                                'and warmed up) and offers its service and action; calls that '
                                'arrive now are answered paused, nothing runs',
        names.SPEAKER_NODE: 'reads and checks every parameter, opens the sink and subscribes '
                            'to the audio topic; audio that arrives now is not played '
                            '(reported cancelled)'}),
    Transition('activate', 'inactive', 'active', {
        names.DISPATCHER_NODE: 'accepts calls: policy text, streamed text and ~/call run '
                               'through the gates to the executors',
        names.TOOL_SERVER_NODE: 'runs the calls it receives',
        names.SPEAKER_NODE: 'plays the audio it receives'}),
    Transition('deactivate', 'active', 'inactive', {
        names.DISPATCHER_NODE: 'stops accepting calls, as a pause does: every call queued, '
                               'waiting or running is answered paused (running ones are '
                               'cancelled on their executor, so speech stops) and new calls '
                               'are answered paused; the catalog, settings and ~/call stay',
        names.TOOL_SERVER_NODE: 'cancels every call queued or running (each is answered '
                                'cancelled; speech stops) and answers new calls paused; the '
                                'tools, bindings and TTS model stay loaded',
        names.SPEAKER_NODE: 'silences the utterance playing and drops the queued ones (each '
                            'reported cancelled); new audio is not played'}),
    Transition('cleanup', 'inactive', 'unconfigured', {
        names.DISPATCHER_NODE: 'answers every call still open, closes ~/call and the audit '
                               'log, and releases every topic, service, client and parameter '
                               'it created (its start parameters stay settable)',
        names.TOOL_SERVER_NODE: 'closes every tool (the TTS model, camera subscriptions, '
                                'binding clients) and releases its services, actions and '
                                'parameters (its start parameters stay settable)',
        names.SPEAKER_NODE: 'closes the sink and releases its topics and parameters (its start '
                            'parameters stay settable)'}),
    Transition('shutdown', 'any', 'finalized', {
        names.DISPATCHER_NODE: 'as cleanup, from any state: every call is answered first',
        names.TOOL_SERVER_NODE: 'as cleanup, from any state: every call is answered first',
        names.SPEAKER_NODE: 'as cleanup, from any state: the utterance playing is finished or '
                            'cancelled first'}),
)


@dataclass(frozen=True)
class Outcome:
    """How a transition ended: success, failure (back where it started) or error."""

    result: str  # 'success', 'failure' or 'error'
    message: str


def outcome(node: str, transition: str, exc: BaseException | None) -> Outcome:
    """Decide the result of `transition` of `node`, which raised `exc` (None: it worked)."""
    if exc is None:
        return Outcome('success', f'{node}: {transition} done')
    text = ' '.join(str(exc).split())
    if isinstance(exc, ConfigurationError):
        return Outcome('failure', f'{node}: {transition} failed, still unconfigured: {text}')
    return Outcome('error', f'{node}: {transition} failed with a bug ({type(exc).__name__}: '
                            f'{text}); what was built is released, the node is unconfigured '
                            '(please report it)')


def accepts_calls(state: str) -> bool:
    """Return whether a node in lifecycle `state` runs calls (only when active)."""
    return state == 'active'


def diagnostic(node: str, state: str, last_failure: str) -> tuple[int, str]:
    """Return the diagnostic level and message of a managed node in `state`."""
    if state == 'active':
        return OK, f'{node} is active (managed)'
    if state == 'inactive':
        return WARN, f'{node} is inactive (managed): calls are answered paused until activate'
    if state == 'unconfigured' and last_failure:
        return ERROR, f'{node} is unconfigured: {last_failure}'
    return WARN, f'{node} is {state} (managed): configure, then activate it'
