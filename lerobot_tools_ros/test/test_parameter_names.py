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
A parameter name a node does not have, and a parameters file that is not YAML, are refused.

rclpy keeps a value given for a name the node never declares and ignores it: `speaker -p
sinkk:=null` ran with the default sink, and `bogus_param: 1` in a file passed unnoticed. Every
node now stops at start with one line naming the closest parameter it has (exit 78), and a
`ros2 param set` of such a name says what is wrong instead of rclpy's "undeclared
parameter(s): []". A file rcl cannot parse used to print 84 lines of tracebacks.
"""

from conftest import PACKAGE_DIR
from lerobot_tools_ros.errors import EXIT_CONFIGURATION_ERROR
from lerobot_tools_ros.parameters.files import check_params_file, params_files
import pytest
from rcl_interfaces.msg import ParameterType, ParameterValue
from test_parameters import ParameterClient

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'


def _error_line(proc, node: str) -> str:
    assert proc.proc.wait(60) == EXIT_CONFIGURATION_ERROR, proc.output()
    output = proc.output()
    assert 'Traceback' not in output, output
    (line,) = [line for line in output.splitlines() if line.startswith(f'[{node}] error: ')]
    return line


@pytest.mark.parametrize('node, args, expected', [
    ('speaker', ['-p', 'sinkk:=null'], "no parameter 'sinkk', did you mean 'sink'?"),
    ('dispatcher', ['-p', 'timeout_sec:=5.0'],
     "no parameter 'timeout_sec', did you mean 'timeout_s'?"),
    ('tool_server', ['-p', 'tools:=[say]', '-p', 'tool.say.backend:=espeak_ng',
                     '-p', 'bindings_fil:=x.yaml'],
     "no parameter 'bindings_fil', did you mean 'bindings_file'?"),
    ('tool_server', ['-p', 'tools:=[say]', '-p', 'tool.say.backend:=espeak_ng',
                     '-p', 'tool.nosuchtool.timeout_s:=5.0'],
     "no parameter 'tool.nosuchtool.timeout_s'"),
    ('demo_camera', ['-p', 'fsp:=3.0'], "no parameter 'fsp', did you mean 'fps'?"),
])
def test_a_misspelled_name_on_the_command_line_stops_the_node(start_node, node, args, expected):
    packaged = [] if node == 'demo_camera' else ['--params-file', str(PARAMS_FILE)]
    proc = start_node(f'lerobot_tools_ros.nodes.{node}', *packaged, *args)
    assert expected in _error_line(proc, node)


def test_an_unknown_name_in_a_parameters_file_stops_the_node(start_node, tmp_path):
    path = tmp_path / 'params.yaml'
    path.write_text('/**/dispatcher:\n  ros__parameters:\n    bogus_param: 1\n'
                    '    max_pendin: 5\n')
    proc = start_node('lerobot_tools_ros.dispatcher.node', '--params-file', str(path))
    line = _error_line(proc, 'dispatcher')
    assert "no parameter 'bogus_param'" in line
    assert "no parameter 'max_pendin', did you mean 'max_pending'?" in line


def test_tool_parameters_of_a_registered_tool_hosted_elsewhere_are_kept(
        start_node, ros_node, tmp_path):
    # The packaged file configures say and record_observation; a tool_server hosting only
    # record_observation starts from it (the say settings are for the server that hosts say).
    proc = start_node('lerobot_tools_ros.tool_server.node', '--params-file', str(PARAMS_FILE),
                      '-p', 'tools:=[record_observation]',
                      '-p', f'tool.record_observation.output_dir:={tmp_path}')
    assert ParameterClient(ros_node, 'tool_server').wait(), proc.output()
    assert proc.proc.poll() is None, proc.output()


def _double(value: float) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)


def test_setting_a_name_the_node_lacks_says_what_is_wrong(start_node, ros_node, tmp_path):
    start_node('lerobot_tools_ros.dispatcher.node', '--params-file', str(PARAMS_FILE))
    start_node('lerobot_tools_ros.speaker.node', '--params-file', str(PARAMS_FILE),
               '-p', 'sink:=null', '-p', f'output_dir:={tmp_path}')
    dispatcher = ParameterClient(ros_node, 'dispatcher')
    assert dispatcher.wait()
    result = dispatcher.set_value('tool.nosuchtool.timeout_s', _double(5.0))
    assert not result.successful
    assert "catalog has no tool 'nosuchtool'" in result.reason, result.reason
    assert 'undeclared' not in result.reason
    result = dispatcher.set_value('tool.say.timout_s', _double(5.0))
    assert "did you mean 'tool.say.timeout_s'?" in result.reason, result.reason
    result = dispatcher.set_value('timeout_sec', _double(5.0))
    assert "no parameter 'timeout_sec', did you mean 'timeout_s'?" in result.reason
    speaker = ParameterClient(ros_node, 'speaker')
    assert speaker.wait()
    result = speaker.set_value('sinkk', ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                       string_value='null'))
    assert not result.successful and "did you mean 'sink'?" in result.reason, result.reason


@pytest.mark.parametrize('node', ['dispatcher', 'tool_server', 'speaker'])
def test_a_parameters_file_that_is_not_yaml_is_one_line_and_status_78(start_node, tmp_path, node):
    path = tmp_path / 'broken.yaml'
    path.write_text('/**/dispatcher:\n  ros__parameters:\n    timeout_s: [1.0\n')
    proc = start_node(f'lerobot_tools_ros.nodes.{node}', '--params-file', str(path))
    line = _error_line(proc, node)
    assert f'parameters file {path} is not valid YAML (line 4' in line, line
    assert "expected ',' or ']'" in line
    assert len(proc.output().strip().splitlines()) == 1, proc.output()


def test_a_missing_parameters_file_is_one_line(start_node, tmp_path):
    proc = start_node('lerobot_tools_ros.speaker.node', '--params-file',
                      str(tmp_path / 'nowhere.yaml'))
    assert 'nowhere.yaml: no such file' in _error_line(proc, 'speaker')


def test_params_files_are_found_in_ros_arguments_only():
    assert params_files(['x', '--params-file', 'a.yaml', '--ros-args', '--params-file',
                         'b.yaml', '-p', 'x:=1', '--', '--params-file', 'c.yaml',
                         '--ros-args', '--params-file', 'd.yaml']) == ['b.yaml', 'd.yaml']


def test_a_parameters_file_that_is_not_a_mapping_is_refused(tmp_path):
    path = tmp_path / 'list.yaml'
    path.write_text('- a\n- b\n')
    with pytest.raises(ValueError, match='must map node names'):
        check_params_file(str(path))
