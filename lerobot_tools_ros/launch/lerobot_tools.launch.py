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
Start the LeRobot tool runtime: dispatcher, one tool_server (say + record_observation), speaker.

Usage: ros2 launch lerobot_tools_ros lerobot_tools.launch.py [dataset:=/data/my_dataset]
[namespace:=robot1] [tts_backend:=espeak_ng] [output_dir:=/tmp/lerobot_tools]
[log_level:=debug] [respawn:=tool_server,speaker] [respawn_max:=3] [respawn_delay:=2.0]
[params_file:=my_params.yaml] [bindings_file:=/path/to/bindings.yaml] [managed:=true]

Respawn (`lerobot_tools_ros.respawn`): a node named in `respawn` that crashes after running
fine (10 s) is restarted `respawn_delay` seconds later, at most `respawn_max` times. A node
that refuses its configuration exits with status 78 after one line saying what to change: it
is never restarted, and the launch stops with a non-zero exit status (1: launch's status for
an error), so a supervisor or CI can tell it from a normal stop.

Managed nodes (`managed:=true`): the three nodes are lifecycle nodes (`lerobot_tools_ros.managed`
says what each transition does); this launch configures each once it runs and activates it once
configured. A node whose configure fails stays unconfigured and alive (its reason is logged and
on /diagnostics): fix the parameter with `ros2 param set`, then `ros2 lifecycle set <node>
configure`.

`lerobot-tools-ros bringup` starts the same nodes with the same parameters file in one process.
"""

import os
import time

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import (DeclareLaunchArgument, EmitEvent, GroupAction, LogInfo,
                            OpaqueFunction, RegisterEventHandler, TimerAction)
from launch.event_handlers import OnProcessExit, OnProcessStart
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from lerobot_tools_ros.respawn import LaunchRefused, RespawnPolicy


NODES = ('dispatcher', 'tool_server', 'speaker')


def _respawned(text: str) -> set:
    """respawn:=tool_server,speaker | all | none -> the node names to restart when they die."""
    chosen = {name.strip() for name in text.replace(' ', ',').split(',') if name.strip()}
    if chosen == {'all'}:
        return set(NODES)
    if chosen in (set(), {'none'}):
        return set()
    unknown = chosen - set(NODES)
    if unknown:
        raise ValueError(f"respawn:={text}: unknown node(s) {', '.join(sorted(unknown))}; "
                         f"name some of {', '.join(NODES)}, or all, or none")
    return chosen


def _log_level_args(level: str, namespace: str, node: str) -> list:
    """--log-level for this node's logger only: rcl and the middleware stay at their level."""
    logger = '.'.join(part for part in (*namespace.strip('/').split('/'), node) if part)
    return ['--log-level', f'{logger}:={level}']


def _number(text: str, name: str, kind: type):
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f'{name}:={text} must be a number') from None
    if value < 0:
        raise ValueError(f'{name}:={text} must not be negative')
    return value


def _refuse_launch(_context: LaunchContext, message: str) -> None:
    raise LaunchRefused(message)


def _autostart(node, name: str) -> list:
    """Configure a managed node once it runs, then activate it once configured (AUTOSTART)."""
    from launch.events import matches_action
    from launch_ros.event_handlers import OnStateTransition
    from launch_ros.events.lifecycle import ChangeState
    from lifecycle_msgs.msg import Transition

    def change(transition_id: int) -> EmitEvent:
        return EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(node),
                                           transition_id=transition_id))
    # Only after configuring: a node an operator deactivates later stays inactive.
    return [RegisterEventHandler(OnStateTransition(
                target_lifecycle_node=node, start_state='configuring', goal_state='inactive',
                entities=[LogInfo(msg=f'{name}: configured, activating it'),
                          change(Transition.TRANSITION_ACTIVATE)])),
            change(Transition.TRANSITION_CONFIGURE)]


def _supervised(make_node, name: str, policy: RespawnPolicy | None,
                managed: bool = False) -> list:
    """
    Start a node and decide, when it exits, whether to restart it (`policy`) or stop the launch.

    Every node: a configuration error (exit status 78) stops the launch. A node with a policy
    (named in `respawn`) is restarted after a crash when the policy says so.
    """
    restarts = [0]

    def start() -> list:
        node = make_node()
        started = [time.monotonic()]

        def on_start(_event, _context) -> None:
            started[0] = time.monotonic()

        def on_exit(event, context: LaunchContext):
            if getattr(context, 'is_shutdown', False):
                return None  # the launch is ending: the node was told to stop
            decision = (policy or RespawnPolicy(max_restarts=0)).decide(
                name, event.returncode, time.monotonic() - started[0], restarts[0])
            if decision.shutdown:
                # Raised from an action: launch logs it, shuts down with it as the reason and
                # returns non-zero, so `ros2 launch` exits 1 (a Shutdown event alone gives 0).
                return [OpaqueFunction(function=_refuse_launch, args=[decision.message])]
            if policy is None:
                return None  # not respawned: launch reports the exit itself
            if not decision.restart:
                return [LogInfo(msg=decision.message)]
            restarts[0] += 1
            return [LogInfo(msg=decision.message),
                    TimerAction(period=policy.delay_s, actions=start())]

        return [node,
                RegisterEventHandler(OnProcessStart(target_action=node, on_start=on_start)),
                RegisterEventHandler(OnProcessExit(target_action=node, on_exit=on_exit)),
                *(_autostart(node, name) if managed else [])]
    return start()


def _nodes(context: LaunchContext) -> list:
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    params_file = os.path.expanduser(arg('params_file'))
    if not os.path.isfile(params_file):
        # Starting on code defaults would drop the rate limits and write to the home directory.
        raise FileNotFoundError(f'params_file:={params_file} does not exist; give a '
                                'parameters file (start from config/lerobot_tools.yaml)')
    dataset = arg('dataset')
    output_dir = arg('output_dir')
    # Absolute, with any namespace an including launch file pushed: a node restarted later (by
    # an event handler, outside this group's scope) must come back where it was.
    outer = context.launch_configurations.get('ros_namespace', '') or ''
    namespace = '/' + '/'.join(part for part in (*outer.split('/'), *arg('namespace').split('/'))
                               if part)
    respawn = _respawned(arg('respawn'))
    policy = RespawnPolicy(max_restarts=_number(arg('respawn_max'), 'respawn_max', int),
                           delay_s=_number(arg('respawn_delay'), 'respawn_delay', float))

    def common(node: str) -> dict:
        # Restarts are ours (`_supervised`): launch's own respawn also restarts a node that
        # refused its configuration, forever.
        return {'package': 'lerobot_tools_ros', 'executable': node, 'name': node,
                'namespace': namespace, 'output': 'screen', 'emulate_tty': True,
                'ros_arguments': _log_level_args(arg('log_level'), namespace, node)}
    # Launch arguments left empty keep what params_file says (as `bringup` does).
    server_overrides = {}
    dispatcher_overrides = {}
    if dataset:
        server_overrides['dataset'] = dispatcher_overrides['dataset'] = dataset
    if arg('tts_backend'):
        server_overrides['tool.say.backend'] = arg('tts_backend')
    if arg('bindings_file'):
        server_overrides['bindings_file'] = arg('bindings_file')
    speaker_overrides = {}
    if output_dir:
        server_overrides['tool.record_observation.output_dir'] = os.path.join(
            output_dir, 'observations')
        speaker_overrides['output_dir'] = os.path.join(output_dir, 'audio')
    overrides = {'dispatcher': dispatcher_overrides, 'tool_server': server_overrides,
                 'speaker': speaker_overrides}
    managed = _flag(arg('managed'), 'managed')
    actions = []
    for node in NODES:
        actions += _supervised(
            lambda node=node: _node_action(managed, **common(node),
                                           parameters=[params_file, overrides[node]]),
            node, policy if node in respawn else None, managed)
    return [GroupAction(actions)]


def _flag(text: str, name: str) -> bool:
    value = text.strip().lower()
    if value not in ('true', 'false'):
        raise ValueError(f'{name}:={text} must be true or false')
    return value == 'true'


def _node_action(managed: bool, **node: object):
    """Return the node's action: plain, or with managed:=true its lifecycle variant."""
    if not managed:
        return Node(**node)
    from launch_ros.actions import LifecycleNode
    return LifecycleNode(arguments=['--managed'], **node)


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory('lerobot_tools_ros')
    return LaunchDescription([
        DeclareLaunchArgument('dataset', default_value='',
                              description="Dataset root, info.json or repo id ('' = params_file)"),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config', 'lerobot_tools.yaml'),
                              description='Parameters file for every node'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace for all nodes'),
        DeclareLaunchArgument('log_level', default_value='info',
                              description="debug, info, warn, error: this package's nodes "
                                          'only (rcl and the middleware keep theirs)'),
        DeclareLaunchArgument('respawn', default_value='tool_server',
                              description='Nodes restarted when they crash after running '
                                          'fine (10 s): names from dispatcher, tool_server, '
                                          'speaker (comma-separated), all or none. Never after '
                                          'a configuration error (exit 78): that stops the '
                                          'launch'),
        DeclareLaunchArgument('respawn_max', default_value='3',
                              description='Most restarts of each respawned node'),
        DeclareLaunchArgument('respawn_delay', default_value='2.0',
                              description='Seconds between a crash and the restart'),
        DeclareLaunchArgument('output_dir', default_value='',
                              description="Where WAV and PNG files go ('' = params_file)"),
        DeclareLaunchArgument('tts_backend', default_value='',
                              description="auto, pocket_tts or espeak_ng ('' = params_file)"),
        DeclareLaunchArgument('managed', default_value='false',
                              description='true: dispatcher, tool_server and speaker run as '
                                          'managed (lifecycle) nodes, configured and activated '
                                          'by this launch; a lifecycle manager or `ros2 '
                                          'lifecycle set` drives them afterwards'),
        DeclareLaunchArgument('bindings_file', default_value='',
                              description='YAML binding catalog tools to ROS services, actions '
                                          "and topics ('' = params_file)"),
        OpaqueFunction(function=_nodes),
    ])
