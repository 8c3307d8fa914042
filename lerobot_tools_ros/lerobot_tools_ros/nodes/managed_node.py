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
The managed (rclpy.lifecycle) variant of a node of this package, made from its plain class.

`managed_class(Dispatcher, DISPATCHER)` returns a LifecycleNode subclass of the same node: its
constructor only declares the node's start parameters (settable while unconfigured) and the
lifecycle services; `configure` runs the plain class's `_build()` (everything its constructor
does), `activate`/`deactivate` call its `set_accepting()`, `cleanup` runs its `_release()` and
then takes away every topic, service, client, timer, parameter and callback `_build()` made, so
that the node can be configured again. What each transition means is decided and described in
`lerobot_tools_ros.managed` (pure); this module only wires it to rclpy.

Every lifecycle node publishes its state on /diagnostics once a second (the plain node's own
diagnostics come on top once configured).
"""

import traceback
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from lerobot_tools_ros import managed as plan, names
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.nodes.params import descriptor, refuse_unknown_parameters
from lerobot_tools_ros.parameters.spec import ParameterSpec
from lerobot_tools_ros.rclpy_fixes import NodeSnapshot
from rcl_interfaces.msg import ParameterType, SetParametersResult
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.parameter import Parameter

__all__ = ['managed_class']

_RESULTS = {'success': TransitionCallbackReturn.SUCCESS,
            'failure': TransitionCallbackReturn.FAILURE,
            'error': TransitionCallbackReturn.ERROR}
_KEEP_ATTRIBUTES = frozenset({'_parameter_overrides', '_last_failure', '_built', '_building'})


class _Managed(Node):
    """Lifecycle callbacks over a plain node class that has `_build`, `_release`, ..."""

    _start_parameters: dict  # set by managed_class: the node's table of ParameterSpec

    def __init__(self, **kwargs: Any) -> None:
        self._building = False
        self._built: NodeSnapshot | None = None
        self._last_failure = ''
        super().__init__(**kwargs)  # the plain class's constructor; `_build` waits (below)
        self.accepting = False
        self._declare_start_parameters()
        self.add_on_set_parameters_callback(self._check_start_parameters)
        self._lifecycle_diagnostics = self.create_publisher(
            DiagnosticArray, names.DIAGNOSTICS_TOPIC, 10)
        self.create_timer(1.0, self._publish_state)

    @property
    def last_failure(self) -> str:
        """Return why the last transition failed ('' when it did not)."""
        return self._last_failure

    @property
    def lifecycle_state(self) -> str:
        """Return the current lifecycle state's label (unconfigured, inactive, active, ...)."""
        return self._state_machine.current_state[1]

    # -- start parameters: settable while unconfigured, read at configure ---------------------

    def _declare_start_parameters(self) -> None:
        overrides = self._parameter_overrides
        for spec in self._start_parameters.values():
            if self.has_parameter(spec.name):
                continue
            ros = descriptor(spec)
            ros.read_only = False  # taken at configure: settable until then
            ros.dynamic_typing = True  # a bad value is refused by configure, with the reason
            ros.type = ParameterType.PARAMETER_NOT_SET
            ros.integer_range, ros.floating_point_range = [], []
            override = overrides.get(spec.name)
            value = override.value if override is not None else spec.default
            self.declare_parameter(spec.name, value, ros, ignore_override=True)

    def _check_start_parameters(self, parameters: list) -> SetParametersResult:
        if self._built is not None or self._building:
            return SetParametersResult(successful=True)  # configured: the node's own checks
        for parameter in parameters:
            spec: ParameterSpec | None = self._start_parameters.get(parameter.name)
            if spec is not None and parameter.value is not None:
                reason = spec.reason(parameter.value)
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _take_start_parameters(self) -> None:
        """Hand the start parameters' current values to `_build` as if given at start."""
        for name in self._start_parameters:
            if not self.has_parameter(name):
                continue
            value = self.get_parameter(name).value
            if value is not None:
                self._parameter_overrides[name] = Parameter(name, value=value)
            self.undeclare_parameter(name)

    # -- transitions ------------------------------------------------------------------------

    def _build(self) -> None:
        if self._building:  # at configure; the constructor's call waits for it
            super()._build()  # type: ignore[misc]

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        failure: BaseException | None = None
        try:
            self._take_start_parameters()
            built = NodeSnapshot(self, _KEEP_ATTRIBUTES)
        except Exception as exc:  # noqa: B902 - a bug; logged, the node stays unconfigured
            failure = exc
            return self._step('configure', lambda: _raise(failure))
        self._building = True
        try:
            self._build()
            refuse_unknown_parameters(self)
            self.set_accepting(False)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: B902 - the transition fails; the node lives on
            failure = exc
        finally:
            self._building = False
        verdict = plan.outcome(self.get_name(), 'configure', failure)
        if failure is None:
            self._built = built
            self._last_failure = ''
            self.get_logger().info(verdict.message)
            return _RESULTS[verdict.result]
        if not isinstance(failure, ConfigurationError):
            self.get_logger().error(''.join(traceback.format_exception(failure)))
        self._last_failure = verdict.message
        self.get_logger().error(verdict.message)
        self._take_away(built)
        return _RESULTS[verdict.result]

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._step('activate', lambda: self.set_accepting(True))  # type: ignore

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._step('deactivate', lambda: self.set_accepting(False))  # type: ignore

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._step('cleanup', lambda: self._take_away(self._built))

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._step('shutdown', lambda: self._take_away(self._built))

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._take_away(self._built)  # back to unconfigured, nothing held
        return TransitionCallbackReturn.SUCCESS

    def _step(self, transition: str, action: Any) -> TransitionCallbackReturn:
        """Run one transition's work; log its outcome (rclpy drops a callback's exception)."""
        failure: BaseException | None = None
        try:
            action()
        except Exception as exc:  # noqa: B902 - the transition fails; the node lives on
            failure = exc
            self.get_logger().error(''.join(traceback.format_exception(exc)))
        verdict = plan.outcome(self.get_name(), transition, failure)
        if failure is not None:
            self._last_failure = verdict.message
            self.get_logger().error(verdict.message)
        else:
            self.get_logger().info(verdict.message)
        return _RESULTS[verdict.result]

    def _take_away(self, built: 'NodeSnapshot | None') -> None:
        """Release what `_build()` made (answering every call first); settable parameters."""
        if built is None:
            return
        self.accepting = False
        try:
            self._release()  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: B902 - take the rest away regardless
            self.get_logger().error(f'releasing failed: {type(exc).__name__}: {exc}')
        built.take_away(self)
        self._built = None
        self.accepting = False
        self._declare_start_parameters()

    # -- diagnostics ------------------------------------------------------------------------

    def _publish_state(self) -> None:
        state = self.lifecycle_state
        level, message = plan.diagnostic(self.get_name(), state, self._last_failure)
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        array.status = [DiagnosticStatus(
            level=bytes([level]), name=f'{self.get_fully_qualified_name()}: lifecycle',
            message=message, hardware_id=self.get_fully_qualified_name(),
            values=[KeyValue(key='state', value=state)])]
        self._lifecycle_diagnostics.publish(array)


def _raise(exc: BaseException) -> None:
    raise exc


def managed_class(plain: type, start_parameters: dict) -> type:
    """
    Return the managed (LifecycleNode) variant of `plain`, a node class of this package.

    `plain` must make everything in `_build()` and release it in `_release()`, and take
    `set_accepting(bool)`; `start_parameters` is its table from `parameters.declarations`.
    """
    for method in ('_build', '_release', 'set_accepting'):
        if not callable(getattr(plain, method, None)):
            raise ConfigurationError(f'{plain.__name__} cannot run as a managed node (no '
                                     f'{method})')
    return type(f'Managed{plain.__name__}', (_Managed, plain, LifecycleNode),
                {'_start_parameters': start_parameters, '__doc__': plain.__doc__})
