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
``record_observation``: save the latest still of one or more camera topics under a label.

The seed's worked example of a tool (capture a high-resolution still for the user, outside the
control loop, as ``<label>.png``), made safe to drive from model text: labels cannot leave the
output directory, nothing is silently overwritten, every failure says which camera and why.

Receiving frames costs the control loop nothing beyond what rclpy already does: the
subscription callback keeps a reference to the newest message and its arrival time. Conversion,
encoding and disk I/O happen only inside ``call``, which the tool_server runs in a worker thread.
"""

from concurrent.futures import ThreadPoolExecutor
import json
import os
import re
import threading
import time
from typing import Any, ClassVar, NamedTuple, Optional
import unicodedata

from lerobot_tools_ros.errors import (
    EXECUTION_FAILED, INVALID_ARGUMENTS, NO_FRAME, STALE_FRAME, ToolError, UNAVAILABLE)
from lerobot_tools_ros.names import CAMERA_TOPIC_PATTERN
from lerobot_tools_ros.output_dir import configured_path, exists, open_output_dir, \
    SymlinkRefused
from lerobot_tools_ros.parameters.spec import MAX_SECONDS
from lerobot_tools_ros.tools.base import tool_name_from_schema, ToolParameter
from lerobot_tools_ros.tools.host import bound, Qos, ToolHost

__all__ = ['LABEL_PATTERN', 'MAX_LABEL_LENGTH', 'RECORD_OBSERVATION_SCHEMA',
           'RecordObservationTool', 'check_label']

MAX_LABEL_LENGTH = 100
LABEL_PATTERN = re.compile(r'[A-Za-z0-9_.-]{1,%d}' % MAX_LABEL_LENGTH)
_DISALLOWED = re.compile(r'[^A-Za-z0-9_.-]')
_ALLOWED_TEXT = ('letters A-Z a-z, digits 0-9, ".", "_" and "-" (ASCII only), 1-%d characters, '
                 'not starting with "."' % MAX_LABEL_LENGTH)

TRANSPORTS = ('auto', 'raw', 'compressed')
QOS_CHOICES = ('sensor_data', 'reliable')
# What this tool reads from the graph, through its host (tools/host.py): camera frames.
_MESSAGE_TYPES = {'raw': 'sensor_msgs/msg/Image', 'compressed': 'sensor_msgs/msg/CompressedImage'}
_TRANSPORT_OF_TYPE = {v: k for k, v in _MESSAGE_TYPES.items()}
_AUTO_RETRY_S = 0.5

RECORD_OBSERVATION_SCHEMA: dict[str, Any] = {
    'type': 'function',
    'function': {
        'name': 'record_observation',
        'description': 'Save the latest camera frame(s) to disk under a label, for later review.',
        'parameters': {
            'type': 'object',
            'properties': {
                'label': {
                    'type': 'string',
                    'description': "Name for the saved image: letters, digits, '-', '_' and '.', "
                                   'up to 100 characters.',
                },
                'camera': {
                    'type': 'string',
                    'description': 'camera name; default: all configured cameras',
                },
                'format': {
                    'type': 'string',
                    'enum': ['png', 'jpg'],
                    'description': "Image file format; default: the server's configured format.",
                },
            },
            'required': ['label'],
            'additionalProperties': False,
        },
    },
}


def check_label(label: Any) -> str:
    """
    Return ``label`` if it is a safe file-name stem, else raise ``invalid_arguments``.

    Only ASCII letters, digits, ``.``, ``_`` and ``-``, so look-alike Unicode (Cyrillic U+0430,
    fullwidth letters, the one-dot leader U+2024), separators, control characters and NUL can
    never reach a path. The message names the first offending character.
    """
    if not isinstance(label, str):
        raise ToolError(INVALID_ARGUMENTS, f'label must be a string, got '
                                           f'{type(label).__name__}; allowed: {_ALLOWED_TEXT}')
    if LABEL_PATTERN.fullmatch(label) and not label.startswith('.'):
        return label
    shown = ascii(label if len(label) <= 120 else label[:120] + '...')
    problems = []
    if not label:
        problems.append('it is empty')
    if len(label) > MAX_LABEL_LENGTH:
        problems.append(f'it has {len(label)} characters')
    if label.startswith('.'):
        problems.append('it starts with "."')
    bad = _DISALLOWED.search(label)
    if bad is not None:
        index, char = bad.start(), bad.group()
        name = unicodedata.name(char, 'control character' if ord(char) < 32 else 'unnamed')
        problems.append(f'character {index} is U+{ord(char):04X} {name}')
    problem = '; '.join(problems)
    raise ToolError(INVALID_ARGUMENTS, f'label {shown} is not allowed ({problem}); allowed: '
                                       f'{_ALLOWED_TEXT}')


class _Camera(NamedTuple):
    name: str
    topic: str
    transport: str


class _Frame(NamedTuple):
    msg: Any
    received_mono: float
    received_ns: int


def _pairs(value: Any, what: str) -> dict[str, Any]:
    """Accept a mapping or a list of ``'name=value'`` strings (ROS files cannot hold maps)."""
    if value is None or value == '' or value == []:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)):
        result = {}
        for item in value:
            name, sep, rest = str(item).partition('=')
            if not sep or not name.strip() or not rest.strip():
                raise ValueError(f'{what} entry {item!r} must look like "name=value"')
            result[name.strip()] = rest.strip()
        return result
    raise ValueError(f'{what} must be a mapping or a list of "name=value" strings, got '
                     f'{type(value).__name__}')


def _check_camera_name(name: Any) -> str:
    if not isinstance(name, str) or not LABEL_PATTERN.fullmatch(name) or name.startswith('.'):
        raise ValueError(f'camera name {name!r} must use only {_ALLOWED_TEXT} (it becomes part '
                         'of file names)')
    return name


def _check_choice(value: Any, choices: tuple, what: str) -> str:
    if value not in choices:
        raise ValueError(f'{what} must be one of {", ".join(choices)}; got {value!r}')
    return value


def _check_int(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f'{what} must be an integer from {low} to {high}; got {value!r}')
    return value


class RecordObservationTool:
    """
    Save the newest frame of each selected camera as ``<label>.png`` plus a JSON sidecar.

    Parameters (ROS ``tool.record_observation.<param>``, or constructor keywords):

    - ``cameras``: camera name -> topic. As a map (``cameras.front: /camera/front/image_raw``),
      a list of ``'name=topic'`` strings, or a map of ``{topic: ..., transport: ...}``. When
      empty, the dataset's ``observation.images.<name>`` cameras (``dataset_cameras``, passed
      by the tool_server) are used with ``camera_topic_pattern``.
    - Transport per camera: ``cameras.<name>.transport: compressed`` next to
      ``cameras.<name>: <topic>``, or ``cameras_transport`` (map or ``'name=transport'`` list);
      ``transport`` is the default for the rest. ``raw`` subscribes ``sensor_msgs/Image``,
      ``compressed`` ``sensor_msgs/CompressedImage``, ``auto`` uses the type the topic is
      advertised with (waiting, re-checking every 0.5 s, until it is advertised).
    - ``qos``: ``sensor_data`` (best effort, matches every camera driver) or ``reliable``.
    - ``output_dir`` (``~`` expanded, resolved when the tool is made, created on demand; each
      call opens it without following a symlink that appeared since, refusing the call, and
      writes relative to that open directory), ``format`` (default file format),
      ``max_age_s``, ``png_compression``, ``jpeg_quality``, ``overwrite``.

    Files: ``<label>.<ext>`` for one camera, ``<label>_<camera>.<ext>`` for several, each with
    ``<same stem>.json``. Without ``overwrite`` an existing name gets the first free ``-N``
    suffix (shared by all files of one call). A compressed frame that already is in the requested
    format is written byte for byte (no second lossy JPEG encode). Files appear complete or not
    at all (written to a hidden temp file, then linked or renamed into place).

    Result: ``{'label', 'format', 'paths': [...], 'complete': bool, 'message', 'cameras':
    {name: {'ok': True, 'path', 'sidecar'} or {'ok': False, 'code', 'error'}}}``. When every
    selected camera fails, ``ToolError`` is raised instead, with ``no_frame``, ``stale_frame`` or
    ``execution_failed`` (the first of these that any camera hit) and every camera's reason.
    """

    PARAMETERS: ClassVar[dict[str, ToolParameter]] = {
        'cameras': ToolParameter(
            [], 'Camera name -> image topic: a map (cameras.front: /camera/front/image_raw) or '
                "a list of 'name=topic' strings. Empty: the dataset's observation.images "
                'cameras with camera_topic_pattern.'),
        'cameras_transport': ToolParameter(
            [], "Per-camera transport (raw, compressed, auto): a map or 'name=transport' "
                'strings; cameras not listed use transport.'),
        'camera_topic_pattern': ToolParameter(
            CAMERA_TOPIC_PATTERN,
            'Topic for a dataset camera when cameras is empty; {name} is the camera name.'),
        'transport': ToolParameter(
            'auto', 'raw (sensor_msgs/Image), compressed (sensor_msgs/CompressedImage) or auto '
                    "(the topic's advertised type).", choices=TRANSPORTS,
            why='the camera subscriptions are made when tool_server starts'),
        'qos': ToolParameter(
            'sensor_data', 'Subscription QoS: sensor_data (best effort; matches any camera) or '
                           'reliable (matches reliable publishers only).', choices=QOS_CHOICES,
            why='the camera subscriptions are made when tool_server starts'),
        'output_dir': ToolParameter(
            '~/.lerobot_tools/observations', 'Directory for images and sidecars (created on '
                                             'demand; ~ is expanded).'),
        'format': ToolParameter('png', 'File format when a call gives none: png or jpg.',
                                choices=('png', 'jpg'), live=True),
        'max_age_s': ToolParameter(
            1.0, 'A frame older than this many seconds (since it was received) is refused as '
                 'stale.', above=0.0, maximum=MAX_SECONDS, live=True),
        'png_compression': ToolParameter(3, 'PNG zlib level 0-9 (higher: smaller, slower).',
                                         minimum=0, maximum=9, live=True),
        'jpeg_quality': ToolParameter(95, 'JPEG quality 0-100.', minimum=0, maximum=100,
                                      live=True),
        'overwrite': ToolParameter(
            False, 'Replace existing files; when false a -1, -2, ... suffix is added.',
            live=True),
    }

    def __init__(self, schema: Optional[dict] = None, *, cameras: Any = None,
                 cameras_transport: Any = None,
                 camera_topic_pattern: str = CAMERA_TOPIC_PATTERN,
                 transport: str = 'auto', qos: str = 'sensor_data',
                 output_dir: str = '~/.lerobot_tools/observations',
                 format: str = 'png',  # noqa: A002 - the ROS parameter's name
                 max_age_s: float = 1.0, png_compression: int = 3, jpeg_quality: int = 95,
                 overwrite: bool = False, dataset_cameras: Any = None) -> None:
        self.schema = schema if schema is not None else RECORD_OBSERVATION_SCHEMA
        self.name = tool_name_from_schema(self.schema)
        self.qos = _check_choice(qos, QOS_CHOICES, 'qos')
        self.format = _check_choice(format, ('png', 'jpg'), 'format')
        if isinstance(max_age_s, bool) or not isinstance(max_age_s, (int, float)) or not (
                max_age_s > 0):
            raise ValueError(f'max_age_s must be a positive number; got {max_age_s!r}')
        self.max_age_s = float(max_age_s)
        self.png_compression = _check_int(png_compression, 0, 9, 'png_compression')
        self.jpeg_quality = _check_int(jpeg_quality, 0, 100, 'jpeg_quality')
        self.overwrite = bool(overwrite)
        if not isinstance(output_dir, str) or not output_dir.strip():
            raise ValueError(f'output_dir must be a non-empty path; got {output_dir!r}')
        self.output_dir = os.path.abspath(os.path.expanduser(output_dir))
        # Resolved once, now: a symlink found in this path later (a swapped directory) is
        # refused, never followed (output_dir.open_output_dir).
        self._real_output_dir = configured_path(self.output_dir)
        self.cameras = self._configure_cameras(cameras, cameras_transport, camera_topic_pattern,
                                               _check_choice(transport, TRANSPORTS, 'transport'),
                                               dataset_cameras)
        self._frames: dict[str, _Frame] = {}
        self._resolved: dict[str, str] = {}  # camera -> 'raw' | 'compressed' once subscribed
        self._problems: dict[str, str] = {}  # camera -> why it has no subscription
        self._incompatible: dict[str, str] = {}  # camera -> QoS policy a publisher mismatched
        self._host: ToolHost | None = None
        self._subscriptions: list[Any] = []
        self._timer: Any = None
        self._lock = threading.Lock()
        self._pool: Optional[ThreadPoolExecutor] = None
        self._pool_size = 0

    # ------------------------------------------------------------------------ configuration
    @staticmethod
    def _configure_cameras(cameras: Any, transports: Any, pattern: str, default_transport: str,
                           dataset_cameras: Any) -> dict[str, _Camera]:
        topics: dict[str, Any] = {}
        overrides: dict[str, Any] = {}
        for key, value in _pairs(cameras, 'cameras').items():
            key = str(key)
            name, _, field = key.rpartition('.')
            if name and field in ('topic', 'transport'):  # cameras.front.transport: compressed
                (topics if field == 'topic' else overrides)[name] = value
            elif isinstance(value, dict):  # cameras: {front: {topic: ..., transport: ...}}
                if set(value) - {'topic', 'transport'} or 'topic' not in value:
                    raise ValueError(f'camera {key!r} must be a topic or {{topic, transport}}; '
                                     f'got {value!r}')
                topics[key] = value['topic']
                if 'transport' in value:
                    overrides[key] = value['transport']
            else:
                topics[key] = value
        missing = set(overrides) - set(topics)
        if missing:
            raise ValueError(f'cameras {sorted(missing)} have a transport but no topic')
        flat = topics
        overrides.update(_pairs(transports, 'cameras_transport'))
        if not flat and dataset_cameras:
            if not isinstance(pattern, str) or '{name}' not in pattern:
                raise ValueError(f'camera_topic_pattern must contain {{name}}; got {pattern!r}')
            for name in dataset_cameras:
                flat[_check_camera_name(name)] = pattern.replace('{name}', name)
        result: dict[str, _Camera] = {}
        for name, topic in flat.items():
            _check_camera_name(name)
            if not isinstance(topic, str) or not topic.strip():
                raise ValueError(f'camera {name!r}: topic must be a non-empty string; '
                                 f'got {topic!r}')
            chosen = _check_choice(overrides.get(name, default_transport), TRANSPORTS,
                                   f'transport of camera {name!r}')
            result[name] = _Camera(name, topic.strip(), chosen)
        unknown = set(overrides) - set(result)
        if unknown:
            raise ValueError(f'cameras_transport names unknown cameras {sorted(unknown)}; '
                             f'cameras: {sorted(result)}')
        return result

    def resolved_parameters(self) -> dict[str, tuple[Any, str]]:
        """Return the cameras this tool reads, as read-only parameters (ros2 param list/get)."""
        shown: dict[str, tuple[Any, str]] = {}
        for camera in self.cameras.values():
            shown[f'camera.{camera.name}.topic'] = (
                camera.topic, f"Image topic camera '{camera.name}' is read from (from cameras, "
                              "else the dataset's observation.images.<name> and "
                              'camera_topic_pattern).')
            shown[f'camera.{camera.name}.transport'] = (
                camera.transport, f"Transport of camera '{camera.name}' (raw, compressed, auto).")
        return shown

    # ------------------------------------------------------------------------ ROS side
    def bind(self, host: ToolHost) -> None:
        """Subscribe to every camera through ``host`` (the only place this tool touches ROS)."""
        self._host = host
        logger = host.logger()
        if not self.cameras:
            logger.warning('record_observation: no cameras configured; set '
                           'tool.record_observation.cameras (name=topic) or give the dataset '
                           'observation.images.<name> features')
            return
        pending = []
        for camera in self.cameras.values():
            if camera.transport == 'auto':
                pending.append(camera)
            else:
                self._subscribe(camera, camera.transport)
        if pending:
            waiting = self._resolve_auto(pending)
            if waiting:
                topics = ', '.join(c.topic for c in waiting)
                logger.info(f'record_observation: waiting for {topics} to be advertised to pick '
                            'raw or compressed transport')
                self._timer = host.timer(_AUTO_RETRY_S, self._retry_auto)

    def _subscribe(self, camera: _Camera, transport: str) -> None:
        host = bound(self._host, self.name)
        logger = host.logger()
        frames = self._frames
        name = camera.name
        monotonic = time.monotonic
        now_ns = host.now_ns

        def on_frame(msg: Any) -> None:
            # Keep a reference only: conversion and I/O belong to call(), not the executor.
            frames[name] = _Frame(msg, monotonic(), now_ns())

        def on_incompatible_qos(policy: str) -> None:
            if name not in self._incompatible:
                logger.warning(
                    f'record_observation: a publisher on {camera.topic} offers QoS incompatible '
                    f'with this {self.qos} subscription (policy {policy})')
            self._incompatible[name] = policy

        try:
            subscription = host.subscription(
                _MESSAGE_TYPES[transport], camera.topic, on_frame,
                Qos(depth=1, reliable=self.qos != 'sensor_data'),
                on_incompatible_qos=on_incompatible_qos)
        except Exception as exc:  # noqa: B902 - e.g. an invalid topic name from a params file
            self._problems[name] = (f'cannot subscribe to {camera.topic!r}: '
                                    f'{type(exc).__name__}: {exc}')
            logger.error(f'record_observation: {self._problems[name]}')
            return
        with self._lock:
            self._subscriptions.append(subscription)
            self._resolved[name] = transport

    def _resolve_auto(self, cameras: list) -> list:
        """Subscribe cameras whose topic type is known; return those still unadvertised."""
        host = bound(self._host, self.name)
        advertised = host.topic_types()
        waiting = []
        for camera in cameras:
            try:
                full = host.resolve_topic_name(camera.topic)
            except Exception:  # noqa: B902 - invalid names are reported by _subscribe
                full = camera.topic
            types = advertised.get(full)
            if not types:
                waiting.append(camera)
                continue
            transport = next((_TRANSPORT_OF_TYPE[t] for t in types if t in _TRANSPORT_OF_TYPE),
                             None)
            if transport is None:
                self._problems[camera.name] = (f'topic {full} carries {", ".join(types)}, not an '
                                               'image (sensor_msgs/msg/Image or CompressedImage)')
                host.logger().error(f'record_observation: {self._problems[camera.name]}')
                continue
            self._subscribe(camera, transport)
        return waiting

    def _retry_auto(self) -> None:
        if self._host is None:
            return
        with self._lock:
            pending = [c for c in self.cameras.values()
                       if c.name not in self._resolved and c.name not in self._problems]
        if not pending or not self._resolve_auto(pending):
            if self._timer is not None:
                self._timer.cancel()

    def close(self) -> None:
        """Drop subscriptions and the encoder threads."""
        host, self._host = self._host, None
        with self._lock:
            subscriptions, self._subscriptions = self._subscriptions, []
            timer, self._timer = self._timer, None
        if host is not None:
            try:
                for entity in ([timer] if timer is not None else []) + subscriptions:
                    host.destroy(entity)
            except Exception as exc:  # noqa: B902 - the node may already be shutting down
                host.logger().debug(
                    f'record_observation: subscriptions not destroyed at close ({exc!r}); the '
                    'node is going away with them')
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    # ------------------------------------------------------------------------ the call
    def call(self, arguments: dict, context: Any = None) -> dict:
        """Save the selected cameras' newest frames; see the class docstring for names."""
        from lerobot_tools_ros import imaging

        if not isinstance(arguments, dict):
            raise ToolError(INVALID_ARGUMENTS, 'arguments must be an object')
        unknown = sorted(set(arguments) - {'label', 'camera', 'format'})
        if unknown:
            raise ToolError(INVALID_ARGUMENTS, f'unknown argument(s) {unknown}; '
                                               'allowed: label, camera, format')
        label = check_label(arguments.get('label'))
        fmt = arguments.get('format', self.format)
        if not isinstance(fmt, str) or fmt not in imaging.FORMATS:
            raise ToolError(INVALID_ARGUMENTS, f'format must be png or jpg; got '
                                               f'{ascii(fmt)[:60]}')
        selected = self._select(arguments.get('camera'))

        outcomes: dict[str, dict] = {}
        ready: dict[str, _Frame] = {}
        now = time.monotonic()
        for camera in selected:
            frame = self._frames.get(camera.name)
            if frame is None:
                outcomes[camera.name] = {'code': NO_FRAME, 'error': self._no_frame(camera)}
            elif now - frame.received_mono > self.max_age_s:
                age = now - frame.received_mono
                outcomes[camera.name] = {
                    'code': STALE_FRAME,
                    'error': f'camera {camera.name!r}: newest frame on {camera.topic} is '
                             f'{age:.2f} s old, more than max_age_s={self.max_age_s:g} (has the '
                             'camera stopped publishing?)',
                    'age_s': round(age, 3)}
            else:
                ready[camera.name] = frame
        if ready:
            root, dir_fd = self._open_output_dir()
            try:
                if context is not None:  # a CallContext (tools/base.py): RunTool feedback
                    context.feedback('saving', -1.0,
                                     f'{len(ready)} camera(s): {", ".join(ready)}')
                self._save(root, dir_fd, label, fmt, selected, ready, outcomes)
            finally:
                os.close(dir_fd)
        return self._result(label, fmt, selected, outcomes)

    def _select(self, camera: Any) -> list:
        if not self.cameras:
            raise ToolError(UNAVAILABLE, 'record_observation has no cameras configured: set '
                                         'tool.record_observation.cameras (name=topic)')
        if camera is None:
            return list(self.cameras.values())
        if not isinstance(camera, str) or camera not in self.cameras:
            raise ToolError(INVALID_ARGUMENTS, f'unknown camera {ascii(camera)[:120]}; '
                                               f'configured cameras: {", ".join(self.cameras)}')
        return [self.cameras[camera]]

    def _no_frame(self, camera: _Camera) -> str:
        """Explain a missing frame, using the ROS graph to name the likely cause."""
        qos = ('sensor_data (best effort)' if self.qos == 'sensor_data' else 'reliable')
        prefix = f'camera {camera.name!r}: no frame received yet on {camera.topic}'
        if camera.name in self._problems:
            return f'{prefix}: {self._problems[camera.name]}'
        host = self._host
        if host is None:
            return f'{prefix} (the tool is not bound to a ROS node, so it has no subscriptions)'
        transport = self._resolved.get(camera.name)
        if transport is None:
            return (f'{prefix}: the topic is not advertised yet, so its transport (auto: raw or '
                    f'compressed) is unknown; QoS {qos}')
        hint = ('nothing publishes on it: is the camera running? (compressed frames come on '
                '<base topic>/compressed)')
        try:
            publishers = host.publishers_of(host.resolve_topic_name(camera.topic))
        except Exception:  # noqa: B902 - diagnostics only
            publishers = []
        wanted = _MESSAGE_TYPES[transport]
        if publishers:
            types = sorted({p.topic_type for p in publishers})
            best_effort = [p for p in publishers if not p.reliable]
            if wanted not in types:
                hint = (f'its publishers send {", ".join(types)} but this subscription expects '
                        f'{wanted} (transport {transport}); fix cameras_transport')
            elif self.qos == 'reliable' and (best_effort or camera.name in self._incompatible):
                hint = (f'{len(best_effort)} of its {len(publishers)} publisher(s) are best '
                        'effort, which a reliable subscriber never matches: set '
                        'tool.record_observation.qos to sensor_data')
            elif camera.name in self._incompatible:
                hint = (f'a publisher offers incompatible QoS (policy '
                        f'{self._incompatible[camera.name]})')
            else:
                hint = f'{len(publishers)} publisher(s) found, but no frame has arrived yet'
        return f'{prefix} ({wanted}, QoS {qos}): {hint}'

    def _open_output_dir(self) -> tuple[str, int]:
        """
        Open the output directory for one call: (its path, a descriptor to write relative to).

        Created on demand; a component that became a symlink since configuration is refused.
        """
        root = self._real_output_dir
        try:
            dir_fd = open_output_dir(root)
        except SymlinkRefused as exc:
            raise ToolError(EXECUTION_FAILED, f'cannot use output directory {self.output_dir}: '
                                              f'{exc.strerror}; nothing was saved') from exc
        except OSError as exc:
            raise ToolError(EXECUTION_FAILED, f'cannot use output directory {self.output_dir}: '
                                              f'{exc.strerror or exc}') from exc
        try:
            if not os.access('.', os.W_OK | os.X_OK, dir_fd=dir_fd):
                raise PermissionError(13, 'Permission denied', root)
        except OSError as exc:
            os.close(dir_fd)
            raise ToolError(EXECUTION_FAILED, f'cannot use output directory {self.output_dir}: '
                                              f'{exc.strerror or exc}') from exc
        return root, dir_fd

    def _executor(self, workers: int) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None or self._pool_size < workers:
                if self._pool is not None:
                    self._pool.shutdown(wait=False)
                self._pool_size = max(workers, len(self.cameras), 1)
                self._pool = ThreadPoolExecutor(max_workers=self._pool_size,
                                                thread_name_prefix='record_observation')
            return self._pool

    def _save(self, root: str, dir_fd: int, label: str, fmt: str, selected: list,
              ready: dict, outcomes: dict) -> None:
        from lerobot_tools_ros import imaging

        several = len(selected) > 1
        ext = imaging.FORMATS[fmt]
        pool = self._executor(len(ready))
        futures = {name: pool.submit(self._encode_one, dir_fd, frame, fmt)
                   for name, frame in ready.items()}
        encoded: dict[str, tuple[str, dict]] = {}
        for name, future in futures.items():  # collect all first, so no temp file is orphaned
            try:
                encoded[name] = future.result()
            except imaging.ImagingError as exc:
                outcomes[name] = {'code': EXECUTION_FAILED, 'error': f'camera {name!r}: {exc}'}
            except OSError as exc:
                outcomes[name] = {'code': EXECUTION_FAILED,
                                  'error': f'camera {name!r}: cannot write to {root}: '
                                           f'{exc.strerror or exc}'}
            except Exception as exc:  # noqa: B902 - one camera's bug must not hide the others
                outcomes[name] = {'code': EXECUTION_FAILED,
                                  'error': f'camera {name!r}: {type(exc).__name__}: {exc}'}
        temps: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        try:
            for name, (image_temp, info) in encoded.items():
                camera = self.cameras[name]
                stem = f'{label}_{name}' if several else label
                frame = ready[name]
                header = getattr(frame.msg, 'header', None)
                stamp = getattr(header, 'stamp', None)
                sidecar = {
                    'camera': name,
                    'topic': camera.topic,
                    'transport': self._resolved.get(name, camera.transport),
                    'frame_id': getattr(header, 'frame_id', ''),
                    'stamp': {'sec': int(getattr(stamp, 'sec', 0)),
                              'nanosec': int(getattr(stamp, 'nanosec', 0))},
                    'received': {'sec': frame.received_ns // 10**9,
                                 'nanosec': frame.received_ns % 10**9},
                    'age_s': round(time.monotonic() - frame.received_mono, 6),
                    'label': label,
                    'format': fmt,
                    **info,
                }
                try:
                    sidecar_temp = imaging.write_temp(
                        root, (json.dumps(sidecar, indent=2) + '\n').encode(), dir_fd)
                except OSError as exc:
                    outcomes[name] = {'code': EXECUTION_FAILED,
                                      'error': f'camera {name!r}: cannot write to {root}: '
                                               f'{exc.strerror or exc}'}
                    continue
                temps[name] = (stem, [(image_temp, ext), (sidecar_temp, '.json')])
            if not temps:
                return
            for stem, _ in temps.values():  # one name in the directory, never a path
                if os.path.basename(stem + ext) != stem + ext or stem.startswith('.'):
                    raise ToolError(INVALID_ARGUMENTS, f'{stem}{ext} would leave {root}')
            try:
                paths = imaging.publish_files(root, temps, self.overwrite, dir_fd=dir_fd)
            except OSError as exc:
                raise ToolError(EXECUTION_FAILED, f'cannot save {label} in {root}: '
                                                  f'{exc.strerror or exc}') from exc
            for name, (image_path, sidecar_path) in paths.items():
                outcomes[name] = {'path': image_path, 'sidecar': sidecar_path}
        finally:
            leftovers = [image_temp for image_temp, _ in encoded.values()]
            leftovers += [temp for _, files in temps.values() for temp, _ in files]
            for temp in leftovers:  # published ones were linked/renamed away already
                if exists(temp, dir_fd):
                    os.unlink(temp, dir_fd=dir_fd)

    def _encode_one(self, dir_fd: int, frame: _Frame, fmt: str) -> tuple[str, dict]:
        """Convert, encode and write one frame to a temp file (runs in the worker pool)."""
        from lerobot_tools_ros import imaging

        msg = frame.msg
        image = imaging.decode_frame(msg, fmt)  # also validates a passed-through payload
        data: bytes | memoryview | None = imaging.passthrough_bytes(msg, fmt)
        passthrough = data is not None
        if not passthrough:
            data = imaging.encode(image, fmt, png_compression=self.png_compression,
                                  jpeg_quality=self.jpeg_quality)
        info = {
            'encoding': msg.format if imaging.is_compressed(msg) else msg.encoding,
            'width': int(image.shape[1]),
            'height': int(image.shape[0]),
            'saved_as': ('original bytes' if passthrough else
                         f'{image.dtype} x{1 if image.ndim == 2 else image.shape[2]}'),
            'converter': imaging.converter_name(),
        }
        return imaging.write_temp('', data, dir_fd), info

    def _result(self, label: str, fmt: str, selected: list, outcomes: dict) -> dict:
        saved = [name for name, outcome in outcomes.items() if 'path' in outcome]
        if not saved:
            codes = [outcomes[c.name]['code'] for c in selected]
            code = next(c for c in (NO_FRAME, STALE_FRAME, EXECUTION_FAILED) if c in codes)
            raise ToolError(code, '; '.join(outcomes[c.name]['error'] for c in selected))
        cameras = {}
        for camera in selected:
            outcome = outcomes[camera.name]
            if 'path' in outcome:
                cameras[camera.name] = {'ok': True, **outcome}
            else:
                cameras[camera.name] = {'ok': False, **outcome}
        failed = [c.name for c in selected if not cameras[c.name]['ok']]
        return {
            'label': label,
            'format': fmt,
            'paths': [outcomes[name]['path'] for name in saved],
            'cameras': cameras,
            'complete': not failed,
            'message': (f'saved {len(saved)} image(s)' if not failed else
                        f'saved {len(saved)} of {len(selected)} image(s); failed: '
                        + ', '.join(failed)),
        }
