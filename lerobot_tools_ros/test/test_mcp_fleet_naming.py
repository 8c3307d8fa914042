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

"""How a fleet endpoint names robots, their tools and their resources (pure, no ROS)."""

from lerobot_tools_ros.mcp import fleet
from lerobot_tools_ros.mcp.presence import ARRIVED, LEFT, Presence
import pytest


def test_robot_namespaces_and_labels():
    assert fleet.robot_namespace('robot_a') == '/robot_a'
    assert fleet.robot_namespace(' /site1/robot_a/ ') == '/site1/robot_a'
    assert fleet.robot_label('/site1/robot_a') == 'site1-robot_a'
    assert fleet.parse_robots(['robot_a,robot_b', ' robot_c ', '']) == [
        '/robot_a', '/robot_b', '/robot_c']
    assert fleet.parse_robots(['']) == []  # no robots: the single-robot server


@pytest.mark.parametrize('bad, why', [
    ('/', 'root namespace'), ('robot-a', 'not a ROS name segment'),
    ('1robot', 'not a ROS name segment'), ('robot.a', 'not a ROS name segment'),
    ('a//b', 'not a ROS name segment')])
def test_a_bad_robot_name_is_refused_with_the_reason(bad, why):
    with pytest.raises(fleet.RobotNameError, match=why):
        fleet.parse_robots([bad])


def test_a_robot_named_twice_is_refused():
    with pytest.raises(fleet.RobotNameError, match='named twice'):
        fleet.parse_robots(['robot_a', '/robot_a/'])


def test_two_namespaces_never_share_a_label():
    # '-' and '.' never occur in ROS names, so joining segments with '-' is one to one.
    labels = {fleet.robot_label(ns) for ns in ('/a/b_c', '/a_b/c', '/a/b/c', '/a_b_c')}
    assert len(labels) == 4


def test_scoped_tool_names_follow_mcp_rules_and_split_back():
    assert fleet.scoped_name('robot_a', 'say') == 'robot_a.say'
    assert fleet.split_scoped('robot_a.say') == ('robot_a', 'say')
    # A catalog tool name may itself hold dots: the label never does, so the first dot splits.
    assert fleet.split_scoped('site1-robot_a.arm.move') == ('site1-robot_a', 'arm.move')
    assert fleet.split_scoped('say') is None and fleet.split_scoped('.say') is None
    assert fleet.split_scoped('robot_a.') is None
    name = fleet.scoped_name('r' * 60, 't' * 64)
    assert name is not None and len(name) == 125 and fleet.MCP_TOOL_NAME.fullmatch(name)
    assert fleet.scoped_name('r' * 64, 't' * 64) is None  # 129 characters: over MCP's limit


def test_every_scoped_name_passes_the_sdks_own_check():
    from lerobot_tools_ros.catalog import TOOL_NAME_PATTERN
    sdk = pytest.importorskip('mcp.shared.tool_name_validation')
    for label in ('robot_a', 'site1-robot_a', 'R2'):
        for tool in ('say', 'record_observation', 'close-gripper', 'arm.move_to'):
            assert TOOL_NAME_PATTERN.fullmatch(tool)
            name = fleet.scoped_name(label, tool)
            assert name is not None and sdk.validate_tool_name(name).is_valid, name


def test_resource_uris_are_per_robot_and_split_back():
    assert fleet.scoped_uri('robot_a', 'lerobot-tools://catalog') == \
        'lerobot-tools://robots/robot_a/catalog'
    assert fleet.scoped_uri('robot_a', 'lerobot-tools://observations/{path}') == \
        'lerobot-tools://robots/robot_a/observations/{path}'
    assert fleet.split_uri('lerobot-tools://robots/robot_a/results/recent') == (
        'robot_a', 'lerobot-tools://results/recent')
    assert fleet.split_uri('lerobot-tools://catalog') is None
    assert fleet.split_uri('lerobot-tools://robots/robot_a') is None
    assert fleet.scoped_uri('robot_a', 'https://example.org/x') == 'https://example.org/x'


def test_titles_and_descriptions_name_the_robot():
    assert fleet.scoped_title('robot_a', 'Say') == 'Say (robot_a)'
    assert fleet.scoped_title('robot_a', None) is None
    assert fleet.scoped_description('robot_b', 'Speak.') == '[robot robot_b] Speak.'


def test_discovery_finds_each_dispatcher_namespace_once_and_not_the_root():
    graph = [('dispatcher', '/robot_b'), ('tool_server', '/robot_b'), ('dispatcher', '/'),
             ('dispatcher', '/robot_a'), ('dispatcher', '/site1/robot_c'),
             ('mcp_server', '/'), ('dispatcher', '/robot_a')]
    assert fleet.dispatcher_namespaces(graph, 'dispatcher') == [
        '/robot_a', '/robot_b', '/site1/robot_c']


def test_only_robots_that_are_there_are_listed_and_one_leaving_does_not_touch_another():
    a, b = Presence(gone_after_s=1.0), Presence(gone_after_s=1.0)
    assert a.observe(True, 0.0) == ARRIVED and b.observe(True, 0.0) == ARRIVED
    assert fleet.listed_robots({'robot_a': a.present, 'robot_b': b.present}) == [
        'robot_a', 'robot_b']
    assert b.observe(False, 1.0) is None  # a flicker is not a departure
    assert fleet.listed_robots({'robot_a': a.present, 'robot_b': b.present}) == [
        'robot_a', 'robot_b']
    assert b.observe(False, 2.5) == LEFT
    assert a.observe(True, 2.5) is None
    assert fleet.listed_robots({'robot_a': a.present, 'robot_b': b.present}) == ['robot_a']
    assert b.observe(True, 9.0) == ARRIVED
    assert fleet.listed_robots({'robot_a': a.present, 'robot_b': b.present}) == [
        'robot_a', 'robot_b']
