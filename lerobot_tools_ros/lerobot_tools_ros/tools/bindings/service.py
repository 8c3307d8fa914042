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
``kind: service``: a tool that calls an existing ROS service.

.. code-block:: yaml

    set_light:                       # a tool of the catalog
      kind: service
      service: /light/enable         # relative names resolve in tool_server's namespace
      type: std_srvs/srv/SetBool
      request: {data: $on}           # mapping language (mapping.py); default: same names
      result: {success: success, message: message}   # optional; default: whole response
      timeout_s: 5.0                 # server discovery + answer (default 5)

A service that is not up within ``timeout_s`` is ``unavailable``; one that does not answer in
time is ``timeout`` (the request was sent: the robot may still act on it). Keep ``timeout_s``
below the dispatcher's timeout for the tool (``tool.<name>.timeout_s``, default 10 s), so the
binding, not the dispatcher, decides how the call ends.
"""

import time
from typing import Any

from lerobot_tools_ros import errors
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.tools.base import CallContext
from lerobot_tools_ros.tools.bindings.base import (
    BoundTool, ConfigReader, ResultFields, RosClientNode,
)

__all__ = ['ServiceBinding']


class ServiceBinding(BoundTool):
    """Call ``service`` of ``type`` with a request filled from the arguments."""

    KIND = 'service'
    MAPPINGS = ('request',)
    KEYS = ('kind', 'service', 'type', 'request', 'result', 'timeout_s')

    def __init__(self, schema: dict, config: dict, where: str) -> None:
        super().__init__(schema, config, where)
        reader = ConfigReader(config, where, self.KEYS)
        self.service = reader.ros_name('service', service=True)
        self.type_name = config.get('type', '')
        self.service_type = reader.interface('type', 'srv')
        request_class = self.service_type.Request if self.service_type else None
        self.request = reader.mapping('request', request_class, self.parameters, self.name)
        self.result = ResultFields(reader, self.service_type.Response
                                   if self.service_type else None)
        self.timeout_s = reader.number('timeout_s', 5.0, positive=True)
        reader.done()

    def describe(self) -> str:
        return f'service {self.type_name} at {self.service}'

    def bind_ros(self, node: Any) -> None:
        """Create the client on a node of this binding's own (see ``RosClientNode``)."""
        self._ros = RosClientNode(node, self.name)
        self.service = node.resolve_service_name(self.service)
        self._client = self._ros.node.create_client(self.service_type, self.service)

    def call(self, arguments: dict, context: CallContext | None = None) -> str:
        """Send the request; return the response as JSON (or per ``result``)."""
        with self._calling(self.request, arguments, context,
                           'before the request was sent') as (request, context):
            stopped = self._stopped(context)
            deadline = time.monotonic() + self.timeout_s
            self._wait_for_server(self._client.service_is_ready, deadline, context,
                                  f'service {self.service}', 'before the request was sent')
            if stopped():  # a stop that came while waiting for the server: nothing is sent
                raise self._stop_error(context, 'before the request was sent', errors.NOT_RUN)
            outcome, response = self._bound().request(self._client, request, deadline, stopped)
            if outcome != 'done':
                if outcome == 'unsent':
                    raise self._stop_error(context, 'before the request was sent',
                                           errors.NOT_RUN)
                if outcome == 'stopped':
                    raise self._stop_error(context, 'while waiting for the answer (the request '
                                                    'was sent; a service call cannot be undone)',
                                           errors.UNKNOWN)
                raise ToolError(errors.TIMEOUT,
                                f'{self.name}: service {self.service} did not answer within '
                                f'{self.timeout_s:g} s (the request was sent)', errors.UNKNOWN)
        return self.result.content(response, f'service {self.service}')

    def _release(self) -> None:
        if self._ros is not None:
            self._ros.close()
            self._ros = None
            self._client = None
