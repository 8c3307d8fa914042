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
The contract between tool implementations and whatever hosts them.

This mirrors LeRobot's planned in-process runtime layer (``Tool`` with ``name``, ``schema`` and
``call``) so a tool written for this package can be lifted into LeRobot and back. The module
imports nothing from ROS: tools stay usable in plain Python (tests, notebooks, LeRobot itself).

Writing a tool
--------------
- One file per tool, so each tool's heavy dependency stays optional.
- Constructor: ``ToolClass(schema: dict, **params)``. ``schema`` is the catalog entry (an OpenAI
  function schema); the instance's ``name`` is ``schema['function']['name']``. ``params`` are the
  values of the tool's declared ``PARAMETERS`` (see ``ToolParameter``), already checked against
  those declarations. A value the constructor still refuses raises ``ValueError`` (or
  ``errors.ConfigurationError``) with a message naming it: tool_server reports it as a
  configuration error (one line, no traceback).
- ``call(arguments)`` receives arguments already validated against ``schema`` and returns a
  string or a JSON-serialisable dict. To choose the error code a caller sees, raise
  ``lerobot_tools_ros.errors.ToolError(code, message)``; any other exception is reported as
  ``execution_failed``.

Optional hooks
--------------
The ``tool_server`` node looks these up with ``getattr``; they are not part of the ``Tool``
protocol, so plain-Python tools need not define them:

- ``bind(self, host) -> None``: called once before the first call with a
  ``tools.host.ToolHost``, everything of ROS a tool may use: publishers, subscriptions, a
  service, timers, the clock and the graph, with message types named as strings
  (``'sensor_msgs/msg/Image'``). This is the only place a tool touches ROS, and the tool module
  imports nothing of ROS (``say`` and ``record_observation`` do this).
- ``bind_ros(self, node) -> None``: the raw rclpy node instead, for a tool that needs what the
  host does not offer (the bindings to robot services, actions and topics of any type); it
  imports rclpy inside the method so the module imports without ROS.
- ``close(self) -> None``: called once at shutdown; release devices, stop threads, cancel work.
- ``call(self, arguments, context)``: a tool whose ``call`` takes a second parameter named
  ``context`` receives a ``CallContext``: it reports progress with ``context.feedback(...)``
  (relayed as the ``RunTool`` action's feedback) and stops early when ``context.cancelled`` is
  set (a cancelled goal, the dispatcher's pause or timeout), raising
  ``ToolError(errors.CANCELLED, ...)``. Long tools should take it; short ones need not.
"""

from dataclasses import dataclass, KW_ONLY
import functools
import inspect
import threading
from typing import Any, Callable, Protocol, runtime_checkable

from lerobot_tools_ros.errors import EXECUTION_FAILED, ToolError
from lerobot_tools_ros.parameters.spec import ParameterSpec

__all__ = ['CallContext', 'TextStream', 'Tool', 'ToolParameter', 'accepts_context',
           'declared_parameters', 'tool_name_from_schema']


@runtime_checkable
class Tool(Protocol):
    """An executable tool: a catalog schema plus the code that runs a validated call."""

    name: str
    schema: dict

    def call(self, arguments: dict) -> str | dict:
        """Run one call with validated ``arguments``; return text or a JSON-serialisable dict."""
        ...


class TextStream:
    """
    The text of a call's streamable argument, arriving while the call runs.

    The caller (the dispatcher, through the executor path) ``put``s whole segments safe to
    speak (the last one ends where the argument's value closed), then ``end`` once the call is
    complete and valid; the tool takes them with ``pieces`` as they come. A tool
    without ``STREAMS_TEXT`` never sees one: its host waits for the whole text (``whole``)
    and calls it as usual. Thread-safe.
    """

    def __init__(self, argument: str) -> None:
        self.argument = argument
        self.received = ''  # every segment so far, joined
        self.ended = False
        self.problem = ''  # why the text cannot be complete (a segment was lost)
        self.next_index = 1  # the host's count of numbered segments (TextChunk.index)
        self._pieces: list[str] = []
        self._changed = threading.Condition()

    def put(self, text: str, end: bool) -> None:
        """Add a segment (``end``: the text is complete); nothing after the end."""
        with self._changed:
            if self.ended:
                return
            if text:
                self._pieces.append(text)
                self.received += text
            self.ended = bool(end)
            self._changed.notify_all()

    def fail(self, problem: str) -> None:
        """End the text as incomplete (the call then fails with ``problem``)."""
        with self._changed:
            if not self.ended:
                self.problem = problem
                self.ended = True
                self._changed.notify_all()

    def wake(self) -> None:
        """Wake a tool waiting in ``pieces`` (its call was cancelled)."""
        with self._changed:
            self._changed.notify_all()

    def pieces(self, cancelled: threading.Event, poll_s: float = 0.5):
        """
        Yield the segments as they arrive, until the end or ``cancelled``.

        Raises ToolError ``execution_failed`` when the text was ended incomplete.
        """
        while True:
            with self._changed:
                while not self._pieces and not self.ended and not cancelled.is_set():
                    self._changed.wait(poll_s)
                taken, self._pieces = self._pieces, []
                ended, problem = self.ended, self.problem
            yield from taken
            if problem:
                raise ToolError(EXECUTION_FAILED, problem)
            if ended or cancelled.is_set():
                return

    def whole(self, cancelled: threading.Event) -> str | None:
        """Wait for the complete text; None when ``cancelled`` first."""
        for _ in self.pieces(cancelled):
            pass
        return self.received if self.ended and not cancelled.is_set() else None


class CallContext:
    """
    What a running call may use besides its arguments: its id, progress reports, cancellation.

    The host (``tool_server``) makes one per call; its ``report`` must not raise (progress is
    best effort and never fails the call). Without a host (plain Python), reports go nowhere.
    ``text``: for a streamed call, the ``TextStream`` its streamable argument
    arrives on (that argument is '' in ``arguments``); None otherwise.
    """

    def __init__(self, call_id: str = '',
                 report: Callable[[str, float, str], None] | None = None,
                 text: TextStream | None = None) -> None:
        self.call_id = call_id
        self.text = text
        self.cancelled = threading.Event()
        self._report = report
        self._lock = threading.Lock()
        self._on_cancel: list[Callable[[], None]] = []

    def feedback(self, stage: str, progress: float = -1.0, detail: str = '') -> None:
        """Report progress: a stage name, 0..1 (or -1 when unknown), and free text."""
        if self._report is not None:
            self._report(stage, float(progress), detail)

    def cancel(self) -> None:
        """Ask the tool to stop; it checks ``cancelled`` and ends with ``cancelled``."""
        with self._lock:
            if self.cancelled.is_set():
                return
            self.cancelled.set()
            callbacks, self._on_cancel = self._on_cancel, []
        if self.text is not None:
            self.text.wake()
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """
        Run ``callback`` in the thread that cancels (at once if cancelled already).

        For what must happen the moment a call is cancelled (a speaker told to go silent),
        without a thread of the tool having to wake up and notice. Returns a function that
        unregisters it. The callback must not raise.
        """
        with self._lock:
            if not self.cancelled.is_set():
                self._on_cancel.append(callback)
                return lambda: self._forget(callback)
        callback()
        return lambda: None

    def _forget(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._on_cancel:
                self._on_cancel.remove(callback)


def accepts_context(tool: Any) -> bool:
    """Return True when ``tool.call`` takes a ``context`` parameter (see ``CallContext``)."""
    call = tool.call
    return _takes_context(getattr(call, '__func__', call))  # one signature per function


@functools.lru_cache(maxsize=1024)
def _takes_context(function: Callable) -> bool:
    try:
        return 'context' in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


# Why a tool parameter declared without ``live`` cannot change while tool_server runs.
READ_AT_START = 'the tool reads it when tool_server starts; restart tool_server to change it'


@dataclass(frozen=True)
class ToolParameter:
    """
    A configuration value a tool class declares in ``PARAMETERS``: its one declaration.

    The ``tool_server`` node declares each as the ROS parameter ``tool.<name>.<param>`` (so it
    can be set from a parameters file), checks every value against it, and passes the value to
    the constructor as a keyword argument; the packaged parameters file and the parameter
    reference are generated from it. ``default`` fixes the type: a bool, int, float, str, or a
    list of str (never None: every parameter has a value, so ``ros2 param dump`` writes none).

    ``live``: the parameter may be set while tool_server runs and takes effect at once: the
    server sets the tool's attribute of the same name, or calls the tool's
    ``set_parameter(name, value)`` when it has one (raising ``ValueError`` refuses the value).
    Otherwise it is read-only and ``why`` says why (default: read at start).
    ``choices``, ``minimum``, ``maximum``, ``above`` (exclusive) and ``also`` (further kinds
    accepted, e.g. ``('float',)``) are the rules a value must follow (see
    ``parameters.ParameterSpec``).
    """

    default: Any
    description: str
    _: KW_ONLY
    live: bool = False
    why: str = ''
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    also: tuple = ()

    def spec(self, name: str) -> ParameterSpec:
        """Return the parameter's declaration under its ROS name (``tool.<tool>.<param>``)."""
        return ParameterSpec(name, self.default, self.description, choices=self.choices,
                             minimum=self.minimum, maximum=self.maximum, above=self.above,
                             also=self.also,
                             read_only='' if self.live else (self.why or READ_AT_START))


PARAMETERS_ATTRIBUTE = 'PARAMETERS'


def declared_parameters(tool_class: type) -> dict[str, ToolParameter]:
    """
    Return the ``PARAMETERS`` a tool class declares (empty when it declares none).

    Raises ``TypeError`` naming the class when the declaration has the wrong shape, so a typo
    surfaces when the tool is loaded rather than as a missing ROS parameter later.
    """
    declared = getattr(tool_class, PARAMETERS_ATTRIBUTE, None)
    if declared is None:
        return {}
    where = f'{getattr(tool_class, "__module__", "?")}.{getattr(tool_class, "__qualname__", "?")}'
    if not isinstance(declared, dict):
        raise TypeError(f'{where}.PARAMETERS must be a dict of ToolParameter, got '
                        f'{type(declared).__name__}')
    for key, value in declared.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise TypeError(f'{where}.PARAMETERS key {key!r} must be a Python identifier '
                            '(it becomes a constructor keyword argument)')
        if not isinstance(value, ToolParameter):
            raise TypeError(f'{where}.PARAMETERS[{key!r}] must be a ToolParameter, got '
                            f'{type(value).__name__}')
    return dict(declared)


def tool_name_from_schema(schema: Any) -> str:
    """Return ``schema['function']['name']``, or raise ``ValueError`` saying what is missing."""
    function = schema.get('function') if isinstance(schema, dict) else None
    name = function.get('name') if isinstance(function, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError('tool schema must be {"type": "function", "function": {"name": ...}}, '
                         f'got {str(schema)[:120]}')
    return name
