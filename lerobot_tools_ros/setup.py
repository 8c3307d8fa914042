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

from glob import glob

from setuptools import find_packages, setup

package_name = 'lerobot_tools_ros'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={package_name: ['data/sample_dataset/meta/info.json',
                                 'data/sample_dataset/meta/*.parquet',
                                 'data/sample_dataset/meta/episodes/chunk-000/*.parquet',
                                 'data/sample_dataset/data/chunk-000/*.parquet']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml')),
        # On PATH once the workspace is sourced (colcon adds <prefix>/bin); see the script.
        ('bin', ['bin/lerobot-tools-ros']),
    ],
    install_requires=['setuptools', 'jsonschema', 'numpy', 'pyyaml'],
    extras_require={
        'camera': ['opencv-python-headless', 'rosbags-image'],
        'audio': ['sounddevice', 'soundfile', 'soxr'],
        'pocket_tts': ['pocket-tts==4.0.1'],
        'hub': ['huggingface_hub'],
        # Linear-time matching of catalog patterns (safe_regex.py; a bounded fallback without).
        're2': ['google-re2'],
        'mcp': ['mcp==2.3.0'],
        # Optional, probed at run time (the package works without them):
        'fast_schema': ['jsonschema-rs'],       # a faster check of catalog schemas
        'schema_from_python': ['transformers'],  # catalog --add-from a Python function
        # replay and `dataset add-events` read and write the datasets' parquet files.
        'dataset': ['pyarrow'],
        # `colcon test` runs pytest only when pytest is declared as a test dependency; without
        # it colcon falls back to unittest, which finds 0 tests and reports success.
        # (extras_require, not tests_require: setuptools >= 72 no longer knows tests_require.)
        'test': ['pytest', 'hypothesis', 'ros-domain-coordinator'],
    },
    zip_safe=True,
    maintainer='lerobot_tools_ros maintainers',
    maintainer_email='maintainers@lerobot-tools-ros.invalid',
    description='ROS 2 runtime for the tool calls LeRobot policies emit.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'lerobot-tools-ros = lerobot_tools_ros.cli:main',
            # Through nodes.entry: a Ctrl-C while a node's module imports ends it quietly.
            'dispatcher = lerobot_tools_ros.nodes.entry:dispatcher',
            'tool_server = lerobot_tools_ros.nodes.entry:tool_server',
            'speaker = lerobot_tools_ros.nodes.entry:speaker',
            'demo_camera = lerobot_tools_ros.nodes.entry:demo_camera',
            'demo_gripper = lerobot_tools_ros.nodes.entry:demo_gripper',
            'scripted_policy = lerobot_tools_ros.nodes.entry:scripted_policy',
            'mcp_server = lerobot_tools_ros.nodes.entry:mcp_server',
            'replay = lerobot_tools_ros.nodes.entry:replay',
        ],
    },
)
