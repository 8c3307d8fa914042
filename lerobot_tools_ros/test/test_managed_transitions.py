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

"""What a managed node's transition decides, without a graph (lerobot_tools_ros.managed)."""

from lerobot_tools_ros import managed
from lerobot_tools_ros.catalog import CatalogError
from lerobot_tools_ros.errors import ConfigurationError
import pytest


def test_a_configuration_error_fails_the_transition_with_its_reason_on_one_line():
    verdict = managed.outcome('dispatcher', 'configure',
                              ConfigurationError('parameter x\n  must be 1'))
    assert verdict.result == 'failure'
    assert verdict.message == ('dispatcher: configure failed, still unconfigured: parameter x '
                               'must be 1')


def test_a_catalog_error_is_a_configuration_error_too():
    assert issubclass(CatalogError, ConfigurationError)
    assert managed.outcome('tool_server', 'configure', CatalogError('no such file')).result \
        == 'failure'


def test_any_other_exception_is_an_error_named_a_bug():
    verdict = managed.outcome('speaker', 'activate', KeyError('x'))
    assert verdict.result == 'error' and 'KeyError' in verdict.message
    assert 'please report it' in verdict.message


def test_success_says_which_transition_was_done():
    assert managed.outcome('speaker', 'cleanup', None) == managed.Outcome(
        'success', 'speaker: cleanup done')


@pytest.mark.parametrize('state, accepts', [('unconfigured', False), ('inactive', False),
                                            ('active', True), ('finalized', False)])
def test_only_an_active_node_runs_calls(state, accepts):
    assert managed.accepts_calls(state) is accepts


def test_diagnostics_tell_the_state_and_why_configure_failed():
    assert managed.diagnostic('dispatcher', 'active', '')[0] == managed.OK
    level, message = managed.diagnostic('dispatcher', 'unconfigured', 'dataset /x missing')
    assert level == managed.ERROR and 'dataset /x missing' in message
    assert managed.diagnostic('dispatcher', 'inactive', '')[0] == managed.WARN
    assert 'configure, then activate' in managed.diagnostic('speaker', 'unconfigured', '')[1]


def test_every_transition_says_what_it_does_on_every_managed_node():
    assert [t.name for t in managed.TRANSITIONS] == ['configure', 'activate', 'deactivate',
                                                     'cleanup', 'shutdown']
    for transition in managed.TRANSITIONS:
        assert set(transition.does) == set(managed.MANAGED_NODES), transition.name
        assert all(text.strip() for text in transition.does.values())
    assert managed.AUTOSTART == ('configure', 'activate')
