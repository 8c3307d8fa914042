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
Check both package manifests against the package format 3 schema with xmllint.

ament_xmllint (the usual test) has no wheel and downloads the schema named in the manifest,
which these machines cannot reach; the schema is kept in test/schema instead.
"""

import pathlib
import shutil
import subprocess

import pytest

TEST_DIR = pathlib.Path(__file__).resolve().parent
WORKSPACE = TEST_DIR.parents[1]
SCHEMA = TEST_DIR / 'schema' / 'package_format3.xsd'
MANIFESTS = [
    WORKSPACE / 'lerobot_tools_ros' / 'package.xml',
    WORKSPACE / 'lerobot_tools_interfaces' / 'package.xml',
]


def _xmllint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ['xmllint', '--noout', '--nonet', '--schema', str(SCHEMA), *args],
        capture_output=True, text=True, timeout=60)


@pytest.mark.linter
@pytest.mark.xmllint
@pytest.mark.parametrize('manifest', MANIFESTS, ids=lambda p: p.parent.name)
def test_package_xml_is_valid_format_3(manifest):
    assert shutil.which('xmllint'), 'xmllint is missing: apt-get install libxml2-utils'
    result = _xmllint(str(manifest))
    assert result.returncode == 0, result.stderr


@pytest.mark.linter
@pytest.mark.xmllint
def test_schema_rejects_a_broken_manifest(tmp_path):
    broken = tmp_path / 'package.xml'
    text = MANIFESTS[0].read_text().replace('<name>lerobot_tools_ros</name>', '')
    broken.write_text(text)
    result = _xmllint(str(broken))
    assert result.returncode != 0
    assert 'name' in result.stderr
