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
What every binding kind shares.

That is: reading its entry of the bindings file, its result content, and (for services and
actions) a private client node spun by the calling thread.

A binding is a ``Tool`` like ``say``: ``name``, ``schema``, ``call(arguments, context)``, plus
the ``bind_ros(node)`` and ``close()`` hooks ``tool_server`` calls. The constructor only checks
(``BindingProblems`` carries every problem of the entry); ROS objects are made in ``bind_ros``.
"""

from contextlib import contextmanager
import json
import threading
import time
from typing import Any, Callable, Iterator

from lerobot_tools_ros import errors
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.parameters.spec import MAX_SECONDS
from lerobot_tools_ros.tools.base import CallContext, tool_name_from_schema
from lerobot_tools_ros.tools.bindings.interfaces import (
    ConversionError, fields_of, InterfaceError, message_to_json, resolve_type, type_name,
)
from lerobot_tools_ros.tools.bindings.mapping import compile_mapping, default_mapping, Mapping
from rosidl_parser import definition as idl

__all__ = ['BindingProblems', 'BoundTool', 'ConfigReader', 'ResultFields', 'RosClientNode',
           'content_json']

NON_FINITE_KEY = '_non_finite'  # ROS field names start with a letter: this never clashes
QOS_CHOICES = ('reliable', 'sensor_data', 'transient_local')
SETTLE_S = 0.25  # see RosClientNode.wait_ready
READY_POLL_S = 0.02  # how often a call waiting for its server checks the graph again


class BindingProblems(Exception):
    """Everything wrong with one binding entry (the loader reports all entries together)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__('; '.join(problems))
        self.problems = problems


class ConfigReader:
    """Read typed keys of one entry, collecting problems instead of stopping at the first."""

    def __init__(self, config: dict, where: str, known: tuple[str, ...]) -> None:
        self.config = config
        self.where = where
        self.problems: list[str] = []
        unknown = [key for key in config if key not in known]
        for key in unknown:
            self.problems.append(f'{where}.{key}: unknown key (this kind takes: '
                                 f'{", ".join(known)})')

    def text(self, key: str, default: str | None = None) -> str:
        value = self.config.get(key, default)
        if not isinstance(value, str) or not value.strip():
            problem = 'required' if key not in self.config \
                else f'must be a non-empty string, got {value!r:.60}'
            self.problems.append(f'{self.where}.{key}: {problem}')
            return ''
        return value.strip()

    def ros_name(self, key: str, *, service: bool = False) -> str:
        """Read a topic/service/action name and check it as rclpy will when binding."""
        name = self.text(key)
        if not name:
            return ''
        try:
            from rclpy.validate_topic_name import validate_topic_name
        except ImportError:  # checked when bound instead
            return name
        try:
            validate_topic_name(name, is_service=service)
        except Exception as exc:  # noqa: B902 - rclpy's Invalid*NameException family
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            reason = first.split(': ', 1)[-1].rstrip(':')
            self.problems.append(f'{self.where}.{key}: {name!r} is not a valid ROS name: '
                                 f'{reason}')
        return name

    def number(self, key: str, default: float, *, minimum: float = 0.0,
               positive: bool = False, maximum: float = MAX_SECONDS) -> float:
        # Bounded above too: a duration becomes a timer period in int64 nanoseconds.
        value = self.config.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or value != value or value < minimum or (positive and value <= 0) \
                or value > maximum:
            need = ('a number > 0' if positive else f'a number >= {minimum:g}') + \
                f' and <= {maximum:g}'
            self.problems.append(f'{self.where}.{key}: must be {need}, got {value!r:.60}')
            return float(default)
        return float(value)

    def integer(self, key: str, default: int, *, minimum: int = 0) -> int:
        value = self.config.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.problems.append(f'{self.where}.{key}: must be an integer >= {minimum}, got '
                                 f'{value!r:.60}')
            return default
        return value

    def choice(self, key: str, options: tuple[str, ...], default: str) -> str:
        value = self.config.get(key, default)
        if value not in options:
            self.problems.append(f'{self.where}.{key}: must be one of {", ".join(options)}, got '
                                 f'{value!r:.60}')
            return default
        return value

    def interface(self, key: str, category: str) -> Any:
        name = self.text(key)
        if not name:
            return None
        try:
            return resolve_type(name, category)
        except InterfaceError as exc:
            self.problems.append(f'{self.where}.{key}: {exc}')
            return None

    def mapping(self, key: str, message_class: Any, parameters: dict, tool: str, *,
                default_to_arguments: bool = True) -> Mapping | None:
        if message_class is None:
            return None
        if key in self.config:
            spec = self.config[key]
        else:
            spec = default_mapping(parameters) if default_to_arguments else {}
        mapping, problems = compile_mapping(message_class, spec, parameters, tool=tool,
                                            where=f'{self.where}.{key}')
        self.problems.extend(problems)
        return mapping

    def done(self) -> None:
        if self.problems:
            raise BindingProblems(self.problems)


class ResultFields:
    """
    The optional ``result: {success: <bool field>, message: <string field>}`` of an entry.

    Without it the whole response (or action result) is the content. With ``success``, a
    false value fails the call (``execution_failed``) with the ``message`` field (or the whole
    response) as the error; with ``message``, that field alone is the content of a success.
    """

    def __init__(self, reader: ConfigReader, message_class: Any) -> None:
        self.success = ''
        self.message = ''
        spec = reader.config.get('result')
        if spec is None or message_class is None:
            return
        where = f'{reader.where}.result'
        if not isinstance(spec, dict):
            reader.problems.append(f'{where}: must be a mapping with success and/or message')
            return
        fields = fields_of(message_class)
        for key, wanted, kind in (('success', idl.BasicType, 'boolean'),
                                  ('message', idl.AbstractString, None)):
            name = spec.get(key)
            if name is None:
                continue
            slot = fields.get(name) if isinstance(name, str) else None
            if slot is None:
                reader.problems.append(f'{where}.{key}: unknown field: {type_name(message_class)} '
                                       f'has no field {name!r} (fields: {", ".join(fields)})')
            elif not isinstance(slot, wanted) or (kind and slot.typename != kind):
                reader.problems.append(f'{where}.{key}: field {name!r} is not a '
                                       f'{"bool" if kind else "string"}')
            else:
                setattr(self, key, name)
        for key in spec:
            if key not in ('success', 'message'):
                reader.problems.append(f'{where}.{key}: unknown key (result takes: success, '
                                       'message)')

    def content(self, message: Any, what: str) -> str:
        """Return the content of a successful answer, or raise ``ToolError`` for a failure."""
        data, non_finite = message_to_json(message)
        if self.success and not data.get(self.success):
            detail = data.get(self.message) if self.message else content_json(data, non_finite)
            raise ToolError(errors.EXECUTION_FAILED,
                            f'{what} answered {self.success}=false: {detail}')
        if self.message:
            return str(data.get(self.message, ''))
        return content_json(data, non_finite)


def content_json(data: dict, non_finite: dict[str, str]) -> str:
    """JSON text of ``data``; non-finite floats (now null) are listed under ``_non_finite``."""
    if non_finite:
        data = {**data, NON_FINITE_KEY: non_finite}
    return json.dumps(data, allow_nan=False, ensure_ascii=False)


class RosClientNode:
    """
    A node of the binding's own, spun by the thread that runs the call.

    The response of the bound service/action then wakes that thread directly (no hand-off to
    another executor thread), and a slow robot server never holds up the host node's topics.
    Calls of one tool run one at a time (``tool_server`` serializes them), so one thread spins.
    """

    def __init__(self, host: Any, suffix: str) -> None:
        import rclpy
        from rclpy.clock import Clock, ClockType
        from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
        from rclpy.guard_condition import GuardCondition
        from rclpy.impl.implementation_singleton import rclpy_implementation

        from lerobot_tools_ros.names import ros_safe
        self.node = rclpy.create_node(
            f'{host.get_name()}_{ros_safe(suffix)}_client', namespace=host.get_namespace(),
            context=host.context, start_parameter_services=False, use_global_arguments=False)
        self.executor = SingleThreadedExecutor(context=host.context)
        self.executor.add_node(self.node)
        # The waits below have no timeout (rclpy makes a timer per timed wait, on every
        # answer's path): this one-shot timer ends a wait at its deadline, `wake` at a stop.
        self._deadline = self.node.create_timer(
            3600.0, self._deadline_passed, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._deadline.cancel()
        self._wake = self.node.create_guard_condition(lambda: None)
        self._context = host.context
        # Resolved once here, not per call (rclpy stays out of this module's imports).
        self._invalid_handle = rclpy_implementation.InvalidHandle
        self._shutdown_error = ExternalShutdownException
        self._wait_set = _client_wait_set(rclpy_implementation, host.context)
        # The wait set's wake-up is not the node's: a context shutdown may destroy the node's
        # entities before it calls back (Kilted does), and the wait must still end then.
        self._answer_wake = GuardCondition(None, None, context=host.context) \
            if self._wait_set is not None else None
        # A wait ends at shutdown, as an executor's does (after close, wake finds its guard
        # conditions destroyed and does nothing).
        host.context.on_shutdown(self.wake)

    def _deadline_passed(self) -> None:
        self._deadline.cancel()

    def wake(self) -> None:
        """End the current wait early, so it checks ``stopped()`` (from any thread)."""
        for guard in (self._wake, self._answer_wake):
            if guard is not None:
                try:
                    guard.trigger()
                except self._invalid_handle:
                    pass  # destroyed by a context shutdown: no wait is left on it

    def wait(self, done: Callable[[], bool], deadline: float,
             stopped: Callable[[], bool]) -> str:
        """Spin until ``done()`` ('done'), ``stopped()`` ('stopped') or ``deadline``."""
        armed = False
        try:
            while not done():
                if stopped():
                    return 'stopped'
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return 'timeout'
                if not armed:
                    self._deadline.timer_period_ns = max(1, int(remaining * 1e9))
                    self._deadline.reset()
                    armed = True
                self.executor.spin_once()
            return 'done'
        finally:
            if armed:
                self._deadline.cancel()

    def request(self, client: Any, request: Any, deadline: float,
                stopped: Callable[[], bool]) -> tuple[str, Any]:
        """
        Send ``request`` on ``client``; wait for its answer ('done', response) like ``wait``.

        'unsent': ``stopped()`` was already true, so nothing was sent.

        The wait is one native wait set holding only this client and a wake guard condition of
        its own (so a context shutdown ends it even after the node's entities are gone), not an
        executor turn: no wait set is rebuilt in Python and no future or task is made
        per answer, and the GIL is free while the answer is on its way (the dispatcher's thread
        runs meanwhile). Answers to earlier requests that timed out are taken and dropped by
        their sequence number. Without that wait set (see ``_client_wait_set``) the client's
        future is spun as before.
        """
        if stopped():  # the last moment before anything is sent: nothing was ('unsent')
            return 'unsent', None
        wait_set = self._wait_set
        if wait_set is None:
            future = client.call_async(request)
            outcome = self.wait(future.done, deadline, stopped)
            if outcome != 'done':
                client.remove_pending_request(future)
                return outcome, None
            return outcome, future.result()
        if not isinstance(request, client.srv_type.Request):  # as call_async checks
            raise TypeError(f'expected {client.srv_type.Request.__name__}, got '
                            f'{type(request).__name__}')
        try:
            return self._request(wait_set, client, request, deadline, stopped)
        except self._invalid_handle:  # the client went in a context shutdown
            if self._context.ok():
                raise
            raise self._shutdown_error() from None

    def _request(self, wait_set: Any, client: Any, request: Any, deadline: float,
                 stopped: Callable[[], bool]) -> tuple[str, Any]:
        answer_wake = self._answer_wake  # made with the wait set
        if answer_wake is None:
            raise RuntimeError(f'{self.node.get_name()}: a wait set without its guard condition')
        handle = client.handle
        wake = answer_wake.handle
        response_type = client.srv_type.Response
        with handle:
            sequence = handle.send_request(request)
        while True:
            if not self._context.ok():
                raise self._shutdown_error()  # what the executor's wait raises
            if stopped():
                return 'stopped', None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return 'timeout', None
            with handle, wake:
                wait_set.clear_entities()
                wait_set.add_client(handle)
                wait_set.add_guard_condition(wake)
                wait_set.wait(max(1, int(remaining * 1e9)))
            with handle:
                header, response = handle.take_response(response_type)
            while response is not None:
                if header.request_id.sequence_number == sequence:
                    return 'done', response
                with handle:  # an answer to a request given up on earlier: drop it
                    header, response = handle.take_response(response_type)

    def wait_ready(self, is_ready: Callable[[], bool], deadline: float,
                   stopped: Callable[[], bool]) -> str:
        """
        Wait for a server like ``wait``; a server that only just appeared gets a moment more.

        Nothing in the graph wakes this node's executor when a server appears, so readiness is
        polled every ``READY_POLL_S``. Readiness is seen on the request path; the answer of a
        request sent at once can still be lost while the server's response writer matches this
        client, so after a server (re)appears the first request waits ``SETTLE_S``. Nothing is
        sent to a server not ready ('timeout') or not settled ('unsettled') before ``deadline``.
        """
        if stopped():  # checked first: a stopped call sends nothing, even to a ready server
            return 'stopped'
        if is_ready():
            return 'done'
        while True:
            poll_until = min(deadline, time.monotonic() + READY_POLL_S)
            outcome = self.wait(is_ready, poll_until, stopped)
            if outcome != 'timeout':
                break
            if time.monotonic() >= deadline:
                return 'timeout'
        if outcome != 'done':
            return outcome
        settle = min(deadline, time.monotonic() + SETTLE_S)
        if self.wait(lambda: False, settle, stopped) == 'stopped' or stopped():
            return 'stopped'
        return 'done' if time.monotonic() < deadline else 'unsettled'

    def close(self) -> None:
        if self._wait_set is not None:
            self._wait_set.destroy_when_not_in_use()
            self._wait_set = None
        if self._answer_wake is not None:  # (made with the wait set)
            self._answer_wake.destroy()
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()


def _client_wait_set(implementation: Any, context: Any) -> Any:
    """
    Return a native wait set for one client and one guard condition, or None.

    It is rclpy's own (``rclpy.wait_for_message`` uses the same type since Humble); an rclpy
    whose implementation differs gets None, and ``RosClientNode.request`` spins the executor.
    """
    try:
        return implementation.WaitSet(0, 1, 0, 1, 0, 0, context.handle)
    except (AttributeError, TypeError):
        return None


class BoundTool:
    """Common part of the binding kinds: identity, timeout, context and shutdown handling."""

    KIND = ''
    KEYS: tuple[str, ...] = ('kind',)
    # Set by the kinds that call a server (``_wait_for_server``'s message names them).
    timeout_s: float
    type_name: str

    def __init__(self, schema: dict, config: dict, where: str) -> None:
        self.schema = schema
        self.name = tool_name_from_schema(schema)
        self.parameters = schema['function'].get('parameters') or {}
        self.config = config
        self._closing = threading.Event()
        self._lock = threading.Lock()  # one call at a time; close() waits for it
        self._client: Any = None  # the ROS client of kinds that call a server (bind_ros)
        self._ros: RosClientNode | None = None  # the node that client lives on

    def describe(self) -> str:
        """One line for logs: kind, type and ROS name."""
        raise NotImplementedError

    MAPPINGS: tuple[str, ...] = ()  # attributes holding this kind's ``Mapping`` objects

    def warnings(self) -> list[str]:
        """List what is allowed but probably a mistake: catalog arguments no mapping uses."""
        used: set[str] = set()
        for attribute in self.MAPPINGS:
            mapping = getattr(self, attribute, None)
            if mapping is not None:
                used |= mapping.references
        declared = list((self.parameters.get('properties') or {}))
        unused = [name for name in declared if name not in used]
        if not unused:
            return []
        return [f"'{self.name}': the binding ignores the argument(s) {', '.join(unused)} that "
                'its catalog schema declares (a model may send them expecting an effect)']

    def call(self, arguments: dict, context: CallContext | None = None) -> str:
        """Run one validated call; each binding kind does it its own way."""
        raise NotImplementedError(f'{type(self).__name__}.call')

    def _context(self, context: CallContext | None) -> CallContext:
        return context if context is not None else CallContext()

    def _bound(self) -> RosClientNode:
        """Return the node the tool's ROS client lives on (``unavailable`` when unbound)."""
        ros = self._ros
        if ros is None:
            raise ToolError(errors.UNAVAILABLE, f'{self.name}: not bound to ROS', errors.NOT_RUN)
        return ros

    @contextmanager
    def _calling(self, mapping: Any, arguments: dict, context: CallContext | None,
                 before: str) -> Iterator[tuple[Any, CallContext]]:
        """
        Open one call to the bound server: yield (message built from ``arguments``, context).

        Bad arguments are ``invalid_arguments`` before anything is sent, an unbound tool is
        ``unavailable``; the body runs holding the call lock (one call at a time, ``close()``
        waits for it), and not at all once the tool server is closing (``before``: what was
        not sent, for the message).
        """
        context = self._context(context)
        try:
            message = mapping.build(arguments)
        except ConversionError as exc:
            raise ToolError(errors.INVALID_ARGUMENTS, f'{self.name}: {exc}',
                            errors.NOT_RUN) from None
        if self._client is None:
            raise ToolError(errors.UNAVAILABLE, f'{self.name}: not bound to ROS', errors.NOT_RUN)
        with self._lock:
            if self._closing.is_set() or context.cancelled.is_set():
                raise self._stop_error(context, before, errors.NOT_RUN)
            forget = context.on_cancel(self._bound().wake)  # a cancel ends the wait at once
            try:
                yield message, context
            finally:
                forget()

    def _wait_for_server(self, is_ready: Callable[[], bool], deadline: float,
                         context: CallContext, server: str, before: str,
                         waited_s: float | None = None) -> None:
        """Return once ``server`` is up; else ``unavailable`` at ``deadline``, or the stop."""
        outcome = self._bound().wait_ready(is_ready, deadline, self._stopped(context))
        waited = self.timeout_s if waited_s is None else waited_s
        if outcome == 'timeout':
            raise ToolError(errors.UNAVAILABLE, f'{self.name}: {server} ({self.type_name}) is '
                                                f'not available (waited {waited:g} s)',
                            errors.NOT_RUN)
        if outcome == 'unsettled':
            raise ToolError(errors.UNAVAILABLE, (
                f'{self.name}: {server} ({self.type_name}) appeared only at the end of the '
                f'{waited:g} s wait, too late for a first call to be answered '
                'reliably; nothing was sent'), errors.NOT_RUN)
        if outcome == 'stopped':
            raise self._stop_error(context, before, errors.NOT_RUN)

    def _stopped(self, context: CallContext) -> Callable[[], bool]:
        return lambda: context.cancelled.is_set() or self._closing.is_set()

    def _stop_error(self, context: CallContext, what: str, outcome: str = '') -> ToolError:
        reason = 'the tool server is shutting down' if self._closing.is_set() \
            else 'the call was cancelled'
        return ToolError(errors.CANCELLED, f'{self.name}: {reason} {what}', outcome)

    def close(self) -> None:
        """Stop a running call (an action goal is cancelled on the robot) and release ROS."""
        self._closing.set()
        ros = self._ros
        if ros is not None:
            ros.wake()  # a call waiting for its server or answer sees the stop at once
        if self._lock.acquire(timeout=10.0):
            try:
                self._release()
            finally:
                self._lock.release()

    def _release(self) -> None:
        """Destroy this binding's ROS objects (called with the call lock held)."""
