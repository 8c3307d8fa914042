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
A second SIGINT or SIGTERM while a node stops still gives a clean stop: exit 0, calls answered.

`ros2 launch` run without a terminal (CI, `timeout`, systemd with KillSignal=SIGINT) signals the
process group and then each node, so every node gets two signals ~50 ms apart. The runner used
to put the default handlers back before destroying the node: the second signal then interrupted
the shutdown (exit 130 or 1, C++ "terminate called", calls in flight never answered).
"""

import json
import signal
import time

from conftest import PACKAGE_DIR, prove_service, spin_until
from lerobot_tools_interfaces.srv import CallTool
from lerobot_tools_ros import names
import pytest

PARAMS_FILE = PACKAGE_DIR / 'config' / 'lerobot_tools.yaml'
NODE_ARGS = {
    'dispatcher': [],
    'tool_server': ['-p', 'tool.say.backend:=espeak_ng', '-p', 'tools:=[say]'],
    'speaker': ['-p', 'sink:=null'],
}
# Each node's service that answers once it is up (the dispatcher's ~/call takes a call).
READY_SERVICE = {'dispatcher': '/dispatcher/call',
                 'tool_server': f'/{names.SERVICE_PREFIX}/say'}


def _stop_twice(proc, second: int) -> int:
    proc.proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    if proc.proc.poll() is None:
        proc.proc.send_signal(second)
    return proc.proc.wait(30)


def _clean(output: str) -> None:
    for bad in ('Traceback', 'terminate called', 'KeyboardInterrupt'):
        assert bad not in output, output


@pytest.mark.parametrize('second', [signal.SIGINT, signal.SIGTERM], ids=['INT', 'TERM'])
@pytest.mark.parametrize('node', ['dispatcher', 'tool_server', 'speaker'])
def test_a_second_signal_while_stopping_still_stops_cleanly(
        start_node, ros_node, tmp_path, node, second):
    extra = ['-p', f'output_dir:={tmp_path}'] if node == 'speaker' else []
    proc = start_node(f'lerobot_tools_ros.nodes.{node}', '--params-file', str(PARAMS_FILE),
                      *NODE_ARGS[node], *extra)
    pending = None
    if node in READY_SERVICE:
        client = ros_node.create_client(CallTool, READY_SERVICE[node])
        prove_service(ros_node, client, CallTool.Request(call_id='p',
                                                         name=names.READINESS_PROBE),
                      60.0, proc.output)
        # In flight at the signal: the dispatcher has no executor for say (it waits for one,
        # tool.say.timeout_s); tool_server has no speaker to play it (it waits for one).
        pending = client.call_async(CallTool.Request(
            call_id='in-flight', name='say', arguments=json.dumps({'text': 'Still here.'})))
        spin_until(ros_node, lambda: False, 1.0)
        assert not pending.done(), pending.result()
    else:
        assert spin_until(ros_node, lambda: any(
            name == node for name, _ in ros_node.get_node_names_and_namespaces()), 60.0)
        spin_until(ros_node, lambda: 'playing' in proc.output(), 10.0)
    returncode = _stop_twice(proc, second)
    assert returncode == 0, proc.output()
    _clean(proc.output())
    if pending is not None:
        assert spin_until(ros_node, pending.done, 10.0), 'the call in flight got no answer'
        answer = pending.result()
        assert answer.call_id == 'in-flight' and not answer.success
        assert answer.error_code, answer
