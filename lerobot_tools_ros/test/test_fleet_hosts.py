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
Robots on separate hosts and an operator station, joined by a switch, over DDS discovery.

Each host is a Linux network namespace (``netns_hosts``); each robot host runs its own stack in
its own ROS namespace (``fleet_support``), and the operator reaches them only across the switch:
catalogs, policy text, results and ``~/call``. Then cables are pulled at the switch in the
middle of calls: every call still ends in exactly one answer, the other robot goes on, the cut
robot is found again without a restart, and its own audit log keeps everything it ran meanwhile.
Skipped, with the reason, where namespaces cannot be made (not root, no iproute2).
"""

import time

from conftest import reserve_test_domain
from fleet_support import Fleet, fleet_results, LEASE_S
from lerobot_tools_ros import errors
from netns_hosts import namespaces_unavailable
import pytest

ROBOTS = ['robot_a', 'robot_b']
ALL_TOOLS = ['say', 'record_observation', 'close_gripper', 'echo']
# What the dispatcher's answers say the tool did. '' is accepted until the dispatcher fills the
# outcome field of every answer; then only RAN remains here.
RAN = (errors.RAN, '')


@pytest.fixture(scope='module')
def namespaces() -> None:
    reason = namespaces_unavailable()
    if reason:
        pytest.skip(f'cannot make network namespaces for hosts: {reason}')


def _make_fleet(domain: int, root, discovery: str, robots: list[str],
                unlisted: tuple[str, ...] = ()) -> Fleet:
    fleet = Fleet(domain, root, discovery)
    try:
        fleet.add_hosts(robots, unlisted)
        fleet.start_operator()
        for name in robots:
            fleet.start_robot(name)
    except BaseException:
        fleet.close()
        raise
    return fleet


def _close(fleet: Fleet) -> None:
    problems = fleet.close()
    assert not problems, problems
    assert not fleet.switch.leftovers(), fleet.switch.leftovers()


@pytest.fixture(scope='module')
def fleet(namespaces, tmp_path_factory):
    """Two full robots and the operator, discovering each other by multicast (started once)."""
    with reserve_test_domain() as domain:
        running = _make_fleet(domain, tmp_path_factory.mktemp('fleet'), 'multicast', ROBOTS)
        try:
            operator = running.operator
            seen = operator.ask('catalogs', robots=ROBOTS, timeout=90.0)
            assert seen['ok'], f'{seen}\n{running.output()}'
            for name in ROBOTS:  # results reach the operator: text and results both matched
                assert operator.ask('prove_text', robot=name, timeout=60.0)['ok'], \
                    running.output()
            yield running
        finally:
            _close(running)


def _call(operator, robot: str, call_id: str, name: str = 'echo', timeout: float = 15.0,
          **arguments) -> dict:
    reply = operator.ask('call', robot=robot, call_id=call_id, name=name,
                         arguments=arguments, timeout=timeout)
    assert reply['response']['call_id'] == call_id, reply
    return reply


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f'{what} within {timeout:g} s'
        time.sleep(0.1)


def test_the_operator_sees_each_robots_tools_and_drives_each_robot_from_its_host(fleet):
    operator = fleet.operator
    catalogs = operator.ask('catalogs', robots=ROBOTS, timeout=10.0)['catalogs']
    assert {name: catalogs[name]['tools'] for name in ROBOTS} == {
        name: ALL_TOOLS for name in ROBOTS}

    # ~/call across the switch: the bound gripper on each robot closes, as its server logged.
    for steps, name in ((3, 'robot_a'), (4, 'robot_b')):
        reply = _call(operator, name, f'grip-{name}', 'close_gripper', steps=steps)
        response = reply['response']
        assert response['success'], response
        assert response['outcome'] in RAN
        assert '"closed": true' in response['content']
        gripper_log = fleet.robots[name].processes[1]
        _wait_for(lambda: f'closed in {steps} steps' in gripper_log.output(), 10.0,
                  f"{name}'s gripper logged the goal")

    # Policy text published on the operator's host reaches each robot's dispatcher; the results
    # come back, and each robot wrote its own files on its own host.
    for name in ROBOTS:
        before = len(operator.ask('wait_results', robot=name, count=0,
                                  origin='policy_text')['results'])
        operator.ask('text', robot=name, text=(
            f'Look and report.\n<say>Hello from {name}.</say>'
            f'<tool_call>{{"name": "record_observation", "arguments": '
            f'{{"label": "seen_by_{name}"}}}}</tool_call>'))
        done = operator.ask('wait_results', robot=name, count=before + 2,
                            origin='policy_text', timeout=60.0)
        assert done['ok'], f'{done}\n{fleet.output()}'
        new = done['results'][before:]
        assert sorted(r['name'] for r in new) == ['record_observation', 'say'], new
        assert all(r['success'] and r['origin'] == 'policy_text' for r in new), new
        assert all(r['outcome'] in RAN for r in new), new
    for name in ROBOTS:
        out = fleet.robots[name].output_dir
        stills = sorted(p.name for p in (out / 'observations').glob('*.png'))
        assert stills == [f'seen_by_{name}.png'], stills  # this robot's camera, on its host
        _wait_for(lambda: any((out / 'audio').glob('*.wav')), 15.0,
                  f"{name}'s speaker wrote its WAV")


@pytest.mark.parametrize('discovery', ['static_peers', 'discovery_server'])
def test_robots_are_found_where_the_network_drops_multicast(namespaces, tmp_path, discovery):
    # The switch drops multicast. static_peers: the operator finds the robot only because each
    # names the other in ROS_STATIC_PEERS (LOCALHOST range: the robot's own processes find each
    # other on its computer). discovery_server: every process registers with the operator
    # station's discovery server (ROS_DISCOVERY_SERVER). A bystander host set up for neither
    # finds nothing: multicast really is gone.
    with reserve_test_domain() as domain:
        fleet = _make_fleet(domain, tmp_path, discovery, ['robot_a'], unlisted=('bystander',))
        try:
            bystander = fleet.start_operator('bystander')
            seen = fleet.operator.ask('catalogs', robots=['robot_a'], timeout=90.0)
            assert seen['ok'], f'{seen}\n{fleet.output()}'
            assert seen['catalogs']['robot_a']['tools'] == ALL_TOOLS
            reply = _call(fleet.operator, 'robot_a', 'peer-grip', 'close_gripper', steps=2)
            assert reply['response']['success'], reply  # the bound gripper on the robot's host
            unseen = bystander.ask('catalogs', robots=['robot_a'], timeout=2.0 * LEASE_S)
            assert not unseen['ok'] and unseen['catalogs'] == {}, unseen
            graph = bystander.ask('graph')
            assert not [n for n in graph['nodes'] if n.startswith('/robot_a/')], graph
        finally:
            _close(fleet)


def test_a_lost_link_ends_each_call_once_and_the_robot_comes_back(fleet):
    operator = fleet.operator
    robot_b = fleet.robots['robot_b']
    pids = {name: [p.proc.pid for p in robot.processes] for name, robot in fleet.robots.items()}
    for index in range(3):  # both robots answer (and are proven) before the cut
        for name in ROBOTS:
            assert _call(operator, name, f'before-{name}-{index}')['response']['success']
    # A client on B's own host (as a policy process on the robot would be) keeps calling B.
    local = fleet.start_operator('robot_b')
    assert _call(local, 'robot_b', 'local-b-before', timeout=30.0)['response']['success']

    # A call to B is running on B (its dispatcher recorded it) when B's cable is pulled.
    timeout_s = 6.0
    in_flight = operator.send('call', robot='robot_b', call_id='b-cut', name='echo',
                              arguments={'text': 'cut', 'delay_s': 3.0}, timeout=timeout_s)
    _wait_for(lambda: 'b-cut' in fleet_results(robot_b.audit_records()), 10.0,
              "robot_b's dispatcher got the call")
    fleet.cut('robot_b')
    # Calls to A go on meanwhile.
    for index in range(5):
        reply = _call(operator, 'robot_a', f'during-a-{index}')
        assert reply['response']['success'], reply
    # B goes on too, for the client on its own host.
    for index in range(3):
        reply = _call(local, 'robot_b', f'local-b-{index}', timeout=30.0)
        assert reply['response']['success'], f'{reply}\n{fleet.output()}'

    # The call to B ends once, within its timeout: sent, answer lost, so it may have acted.
    reply = operator.wait(in_flight, timeout_s + 10.0)
    assert reply['answered'] - reply['sent'] < timeout_s + 1.0, reply
    assert reply['response']['error_code'] == errors.ANSWER_LOST, reply
    assert reply['response']['outcome'] == errors.UNKNOWN, reply
    # B leaves the operator's graph (its participant's lease ran out)...
    assert operator.ask('wait_discovered', robot='robot_b', present=False,
                        timeout=6.0 * LEASE_S)['ok'], operator.ask('graph')
    gone = _call(operator, 'robot_b', 'while-gone', timeout=2.0)['response']
    assert (gone['error_code'], gone['outcome']) == (errors.UNAVAILABLE, errors.NOT_RUN), gone

    # ...and is found again when the cable is back: same processes, no restart.
    fleet.plug('robot_b')
    assert operator.ask('wait_discovered', robot='robot_b', present=True,
                        timeout=60.0)['ok'], fleet.output()
    back = _call(operator, 'robot_b', 'after-b', timeout=30.0)['response']
    assert back['success'] and back['outcome'] in RAN, back
    assert {name: [p.proc.pid for p in robot.processes]
            for name, robot in fleet.robots.items()} == pids
    assert all(p.proc.poll() is None for r in fleet.robots.values() for p in r.processes)

    # Nothing B ran while cut off is missing from B's own audit log, each with one result.
    calls = fleet_results(robot_b.audit_records())
    for call_id in ('b-cut', 'local-b-0', 'local-b-1', 'local-b-2', 'after-b'):
        assert set(calls.get(call_id, {})) == {'call', 'result'}, (call_id, calls.get(call_id))
        assert calls[call_id]['result'].get('success') is True, calls[call_id]
    assert 'while-gone' not in calls  # never sent: not_run was the truth
    assert not operator.duplicates and not local.duplicates

    # Now the operator's own cable: every caller, of either robot, gets exactly one answer.
    waiting = [operator.send('call', robot=name, call_id=f'op-cut-{name}', name='echo',
                             arguments={'delay_s': 2.0}, timeout=5.0) for name in ROBOTS]
    _wait_for(lambda: all(f'op-cut-{name}' in fleet_results(fleet.robots[name].audit_records())
                          for name in ROBOTS), 10.0, 'both robots got their call')
    fleet.cut('operator')
    waiting += [operator.send('call', robot=name, call_id=f'op-cut-late-{name}', name='echo',
                              arguments={}, timeout=3.0) for name in ROBOTS]
    answers = [operator.wait(command, 20.0) for command in waiting]
    codes = [(a['response']['error_code'], a['response']['outcome']) for a in answers]
    assert codes[:2] == [(errors.ANSWER_LOST, errors.UNKNOWN)] * 2, answers
    for code in codes[2:]:  # sent into the cut (lost), or refused unsent once the robot left
        assert code in ((errors.ANSWER_LOST, errors.UNKNOWN),
                        (errors.UNAVAILABLE, errors.NOT_RUN)), answers
    fleet.plug('operator')
    for name in ROBOTS:
        assert operator.ask('wait_discovered', robot=name, present=True,
                            timeout=60.0)['ok'], fleet.output()
        again = _call(operator, name, f'after-op-{name}', timeout=30.0)['response']
        assert again['success'], again
        calls = fleet_results(fleet.robots[name].audit_records())
        assert set(calls[f'op-cut-{name}']) == {'call', 'result'}, calls[f'op-cut-{name}']
    time.sleep(1.0)  # a late answer would arrive now, and must not make a second one
    assert not operator.duplicates, operator.duplicates
