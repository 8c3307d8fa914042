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

"""record_observation against real camera publishers in a separate process, over real DDS."""

from concurrent.futures import ThreadPoolExecutor
import ctypes
import importlib.util
import json
import os
import pathlib
import re
import resource
import signal
import subprocess
import sys
import threading
import time

from conftest import reserve_test_domain, spin_until
from lerobot_tools_ros.errors import (
    EXECUTION_FAILED, INVALID_ARGUMENTS, NO_FRAME, STALE_FRAME, ToolError, UNAVAILABLE)
from lerobot_tools_ros.tool_server.host import RosToolHost
from lerobot_tools_ros.tools.record_observation import (
    RECORD_OBSERVATION_SCHEMA, RecordObservationTool)
import numpy as np
import pytest
import rclpy
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

try:
    import cv2
except ImportError:  # OpenCV is optional: the tests skip (see _camera_libraries), not the module
    cv2 = None

TEST_DIR = pathlib.Path(__file__).resolve().parent
PACKAGE_DIR = TEST_DIR.parent
PUBLISHER = TEST_DIR / 'camera_publisher.py'
_spec = importlib.util.spec_from_file_location('camera_publisher', PUBLISHER)
camera_publisher = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(camera_publisher)

W, H = 96, 64
NS = f'/rec{os.getpid()}'  # topics unique to this run, even if another run shares the domain
RAW = {
    'rgb8': {'encoding': 'rgb8'},
    'bgr8': {'encoding': 'bgr8'},
    'mono8': {'encoding': 'mono8'},
    'mono16': {'encoding': 'mono16'},
    'mono16be': {'encoding': 'mono16', 'bigendian': True},
    'bgra8': {'encoding': 'bgra8'},
    'padded': {'encoding': 'rgb8', 'pad': 6},
    'red': {'encoding': 'rgb8', 'pattern': 'red'},
    'reliable': {'encoding': 'rgb8', 'qos': 'reliable'},
}
COMPRESSED = {
    'jpeg': {'kind': 'jpeg', 'encoding': 'bgr8'},
    'png': {'kind': 'png', 'encoding': 'bgr8'},
    'png16': {'kind': 'png', 'encoding': 'mono16'},
    'mistyped': {'kind': 'jpeg', 'encoding': 'bgr8'},  # only subscribed with the wrong type
}


def _streams() -> dict:
    streams = {}
    for name, spec in RAW.items():
        streams[name] = dict(topic=f'{NS}/{name}', kind='raw', width=W, height=H, **spec)
    for name, spec in COMPRESSED.items():
        streams[name] = dict(topic=f'{NS}/{name}/compressed', width=W, height=H, **spec)
    return streams


STREAMS = _streams()


@pytest.fixture(scope='module', autouse=True)
def _camera_libraries():
    """Skip each test, never the module's collection, where the camera libraries are missing."""
    pytest.importorskip('cv2')
    pytest.importorskip('rosbags.image')


def expected_pixels(name: str) -> np.ndarray:
    """Return what an exact PNG of a stream decodes to with IMREAD_UNCHANGED (BGR order)."""
    stream = STREAMS[name]
    pixels = camera_publisher.pattern(stream['encoding'], W, H, stream.get('pattern', 'gradient'))
    if stream['encoding'].startswith('rgb'):
        pixels = pixels[..., ::-1]
    return pixels


# ------------------------------------------------------------------------------ fixtures
class Publisher:
    """camera_publisher.py as a real process in the test's DDS domain."""

    def __init__(self, streams: list, env: dict, rate: float = 20.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(PUBLISHER), json.dumps(streams), '--rate', str(rate)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        line = ''
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and line.strip() != 'READY':
            line = self.proc.stdout.readline()
            if not line and self.proc.poll() is not None:
                break
        assert line.strip() == 'READY', f'publisher did not start: {line!r}'

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc.stdout.close()


@pytest.fixture(scope='module')
def module_domain():
    with reserve_test_domain() as domain:
        yield domain


@pytest.fixture(scope='module')
def ros_env(tmp_path_factory, module_domain):
    domain = module_domain
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED='1',
               ROS_LOG_DIR=str(tmp_path_factory.mktemp('ros_log')))
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(PACKAGE_DIR), env.get('PYTHONPATH'))
                                        if p)
    return env


@pytest.fixture(scope='module')
def node(ros_env):
    """Give a node in the module's domain, spun in the background like the tool_server's."""
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(ros_env['ROS_DOMAIN_ID']))
    ros_node = rclpy.create_node(f'record_test_{os.getpid()}', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(ros_node)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            try:
                executor.spin_once(timeout_sec=0.1)
            except _rclpy.InvalidHandle:
                # A test's tool.close() destroyed a subscription while this thread built its
                # wait set (rclpy raises instead of skipping it): the next wait goes without.
                continue
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    yield ros_node
    stop.set()
    executor.shutdown()
    spinner.join(10)
    ros_node.destroy_node()
    rclpy.shutdown(context=context)


@pytest.fixture(scope='module')
def publisher(ros_env):
    pub = Publisher(list(STREAMS.values()), ros_env)
    yield pub
    pub.stop()


@pytest.fixture
def make_tool(node, tmp_path):
    """Build a tool bound to the test node; closed at teardown."""
    tools = []

    def make(**params) -> RecordObservationTool:
        params.setdefault('output_dir', str(tmp_path / 'out'))
        tool = RecordObservationTool(RECORD_OBSERVATION_SCHEMA, **params)
        tool.bind(RosToolHost(node))
        tools.append(tool)
        return tool

    yield make
    for tool in tools:
        tool.close()


@pytest.fixture(scope='module')
def shared_tool(node, publisher, tmp_path_factory):
    """One tool subscribed to every test stream (auto transport), warmed up."""
    tool = RecordObservationTool(
        RECORD_OBSERVATION_SCHEMA, output_dir=str(tmp_path_factory.mktemp('shared') / 'out'),
        cameras={name: s['topic'] for name, s in STREAMS.items() if name != 'mistyped'})
    tool.bind(RosToolHost(node))
    result = call_until(tool, {'label': 'warmup'}, lambda r: r['complete'])
    assert result['complete'], result
    yield tool
    tool.close()


def call_until(tool, arguments, accept=lambda result: True, timeout: float = 15.0):
    """
    Call until frames have arrived (discovery takes a moment) and ``accept`` holds.

    Only ``no_frame`` (nothing received yet) and results ``accept`` refuses are retried; any
    other error is raised at once, and a result still refused at the deadline fails the test.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = tool.call(dict(arguments))
            if accept(result):
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f'no accepted result within {timeout} s; last: {result}')
        except ToolError as exc:
            if exc.code != NO_FRAME or time.monotonic() > deadline:
                raise
        time.sleep(0.1)


def sidecar_of(path: str) -> dict:
    return json.loads(pathlib.Path(path).with_suffix('.json').read_text())


def tree(root: pathlib.Path) -> set:
    return {str(p) for p in root.rglob('*')}


def fail(tool, arguments) -> ToolError:
    with pytest.raises(ToolError) as info:
        tool.call(arguments)
    return info.value


# ------------------------------------------------------------------------------ schema, config
def test_schema_is_the_sample_dataset_entry():
    info = json.loads((PACKAGE_DIR / 'lerobot_tools_ros' / 'data' / 'sample_dataset' / 'meta' /
                       'info.json').read_text())
    entry = next(t for t in info['tools'] if t['function']['name'] == 'record_observation')
    assert entry == RECORD_OBSERVATION_SCHEMA


def test_every_declared_parameter_is_a_constructor_keyword(tmp_path):
    params = {name: p.default for name, p in RecordObservationTool.PARAMETERS.items()}
    params['output_dir'] = str(tmp_path)
    tool = RecordObservationTool(RECORD_OBSERVATION_SCHEMA, **params)
    assert tool.name == 'record_observation' and tool.cameras == {}
    assert all(p.description for p in RecordObservationTool.PARAMETERS.values())


def test_camera_configuration_forms(tmp_path):
    as_list = RecordObservationTool(cameras=['front=/a/image', 'wrist = /b/image'],
                                    cameras_transport=['wrist=compressed'])
    assert {n: (c.topic, c.transport) for n, c in as_list.cameras.items()} == {
        'front': ('/a/image', 'auto'), 'wrist': ('/b/image', 'compressed')}
    nested = RecordObservationTool(cameras={'front': '/a', 'front.transport': 'raw',
                                            'top': {'topic': '/t', 'transport': 'compressed'},
                                            'side.topic': '/s'})
    assert {n: (c.topic, c.transport) for n, c in nested.cameras.items()} == {
        'front': ('/a', 'raw'), 'top': ('/t', 'compressed'), 'side': ('/s', 'auto')}
    from_dataset = RecordObservationTool(dataset_cameras=['front', 'wrist'],
                                         camera_topic_pattern='/robot/{name}/image')
    assert [c.topic for c in from_dataset.cameras.values()] == ['/robot/front/image',
                                                                '/robot/wrist/image']
    explicit_wins = RecordObservationTool(cameras={'top': '/t'}, dataset_cameras=['front'])
    assert list(explicit_wins.cameras) == ['top']
    assert RecordObservationTool(output_dir='~/x').output_dir == os.path.expanduser('~/x')


@pytest.mark.parametrize('params, words', [
    ({'cameras': ['front']}, 'name=value'),
    ({'cameras': {'front.transport': 'raw'}}, 'no topic'),
    ({'cameras': {'../up': '/a'}}, 'camera name'),
    ({'cameras': {'front': '/a'}, 'cameras_transport': {'rear': 'raw'}}, 'unknown cameras'),
    ({'cameras': {'front': '/a'}, 'transport': 'h264'}, 'transport'),
    ({'qos': 'best'}, 'qos'),
    ({'max_age_s': 0}, 'max_age_s'),
    ({'png_compression': 10}, 'png_compression'),
    ({'jpeg_quality': -1}, 'jpeg_quality'),
    ({'format': 'gif'}, 'format'),
    ({'dataset_cameras': ['front'], 'camera_topic_pattern': '/fixed'}, '{name}'),
])
def test_bad_configuration_is_refused_at_construction(params, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        RecordObservationTool(**params)


def test_without_ros_or_cameras_calls_fail_clearly(tmp_path):
    error = fail(RecordObservationTool(output_dir=str(tmp_path)), {'label': 'x'})
    assert error.code == UNAVAILABLE and 'cameras' in error.message
    unbound = RecordObservationTool(cameras={'front': '/a'}, output_dir=str(tmp_path))
    error = fail(unbound, {'label': 'x'})
    assert error.code == NO_FRAME and '/a' in error.message and 'not bound' in error.message
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ pixels
@pytest.mark.parametrize('name', ['rgb8', 'bgr8', 'mono8', 'mono16', 'mono16be', 'bgra8',
                                  'padded', 'red', 'reliable'])
def test_raw_frames_are_saved_exactly(shared_tool, name):
    result = shared_tool.call({'label': f'raw_{name}', 'camera': name})
    path = result['paths'][0]
    assert path == os.path.join(shared_tool.output_dir, f'raw_{name}.png')
    assert result['cameras'][name]['ok'] and result['complete']
    saved = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    expected = expected_pixels(name)
    assert saved.dtype == expected.dtype and saved.shape == expected.shape
    assert np.array_equal(saved, expected)

    sidecar = sidecar_of(path)
    stream = STREAMS[name]
    assert sidecar['camera'] == name and sidecar['topic'] == stream['topic']
    assert sidecar['encoding'] == stream['encoding'] and sidecar['transport'] == 'raw'
    assert (sidecar['width'], sidecar['height']) == (W, H)
    assert sidecar['frame_id'] == 'cam' + stream['topic'].replace('/', '_')
    stamp = sidecar['stamp']['sec'] + sidecar['stamp']['nanosec'] * 1e-9
    assert abs(stamp - time.time()) < 60
    assert 0 <= sidecar['age_s'] <= shared_tool.max_age_s


def test_pure_red_rgb8_is_red_in_png_and_jpg(shared_tool):
    png = cv2.imread(shared_tool.call({'label': 'red', 'camera': 'red'})['paths'][0])
    assert png[0, 0].tolist() == [0, 0, 255]  # OpenCV reads BGR
    jpg_path = shared_tool.call({'label': 'red', 'camera': 'red', 'format': 'jpg'})['paths'][0]
    assert jpg_path.endswith('red-1.jpg')  # red.json is taken by the PNG's sidecar
    blue, green, red = cv2.imread(jpg_path).reshape(-1, 3).mean(axis=0)
    assert red > 240 and blue < 15 and green < 15


def test_sixteen_bit_and_alpha_frames_as_jpg_become_8_bit_images(shared_tool):
    path = shared_tool.call({'label': 'deep', 'camera': 'mono16', 'format': 'jpg'})['paths'][0]
    saved = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    assert saved.dtype == np.uint8 and saved.shape == (H, W)
    path = shared_tool.call({'label': 'alpha', 'camera': 'bgra8', 'format': 'jpg'})['paths'][0]
    saved = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    assert saved.shape == (H, W, 3)
    assert np.abs(saved.astype(int) - expected_pixels('bgra8')[..., :3]).mean() < 8


def test_compressed_frames(shared_tool):
    jpeg_bytes = camera_publisher.compressed_payload(STREAMS['jpeg'])
    as_png = shared_tool.call({'label': 'jpeg_in', 'camera': 'jpeg'})['paths'][0]
    assert np.array_equal(cv2.imread(as_png, cv2.IMREAD_UNCHANGED),
                          cv2.imdecode(np.frombuffer(jpeg_bytes, np.uint8), cv2.IMREAD_COLOR))
    sidecar = sidecar_of(as_png)
    assert sidecar['transport'] == 'compressed'
    assert sidecar['encoding'] == 'bgr8; jpeg compressed bgr8'
    assert (sidecar['width'], sidecar['height']) == (W, H)
    # JPEG saved as jpg: the camera's own bytes, no second lossy encode.
    as_jpg = shared_tool.call({'label': 'jpeg_in', 'camera': 'jpeg', 'format': 'jpg'})
    assert pathlib.Path(as_jpg['paths'][0]).read_bytes() == jpeg_bytes

    png = shared_tool.call({'label': 'png_in', 'camera': 'png'})['paths'][0]
    assert np.array_equal(cv2.imread(png, cv2.IMREAD_UNCHANGED), expected_pixels('png'))
    png16 = shared_tool.call({'label': 'png16_in', 'camera': 'png16'})['paths'][0]
    saved = cv2.imread(png16, cv2.IMREAD_UNCHANGED)
    assert saved.dtype == np.uint16 and np.array_equal(saved, expected_pixels('png16'))


def test_dataset_cameras_with_topic_pattern(make_tool, publisher, tmp_path):
    tool = make_tool(dataset_cameras=['rgb8'], camera_topic_pattern=NS + '/{name}')
    result = call_until(tool, {'label': 'from_dataset'})
    assert result['paths'] == [str(tmp_path / 'out' / 'from_dataset.png')]
    assert np.array_equal(cv2.imread(result['paths'][0]), expected_pixels('rgb8'))


# ------------------------------------------------------------------------------ labels, paths
BAD_LABELS = [
    '../x', '/etc/x', 'a/b', '', '.', '..', '.hidden', 'a\\b', 'a b', 'a\nb', 'a\x00b', '\x7f',
    'tab\t', 'x' * 101, 'cup\u0430', '\u0441up', '\uff43\uff55\uff50', 'a\u2024png', '\u200bcup',
    'cup\u202egnp', 'caf\u00e9', '~', '$HOME', 'a;rm', '*', 'a:b',
]


def test_bad_labels_are_rejected_and_nothing_is_written(shared_tool, tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    before = tree(base)
    cwd_before = set(os.listdir('.'))
    for label in BAD_LABELS + [None, 7, ['a']]:
        error = fail(shared_tool, {'label': label, 'camera': 'rgb8'})
        assert error.code == INVALID_ARGUMENTS, label
        assert 'allowed' in error.message and 'A-Z' in error.message, error.message
    assert tree(base) == before
    assert set(os.listdir('.')) == cwd_before
    assert not os.path.exists('/etc/x.png') and not os.path.exists('/etc/x.json')
    error = fail(shared_tool, {'label': 'cup\u0430', 'camera': 'rgb8'})
    assert 'CYRILLIC SMALL LETTER A' in error.message


def test_huge_label_is_refused_quickly(shared_tool):
    start = time.monotonic()
    error = fail(shared_tool, {'label': 'a' * 10_000_000 + '/', 'camera': 'rgb8'})
    assert error.code == INVALID_ARGUMENTS and len(error.message) < 1000
    assert time.monotonic() - start < 1.0  # generous: it takes milliseconds


def test_longest_and_odd_but_safe_labels_work(shared_tool):
    for label in ['x' * 100, 'A-b_c.1', '-', 'v1.2.3', 'a..b']:
        path = shared_tool.call({'label': label, 'camera': 'mono8'})['paths'][0]
        assert os.path.dirname(path) == shared_tool.output_dir
        assert os.path.basename(path) == label + '.png'


def test_unknown_camera_and_arguments(shared_tool):
    error = fail(shared_tool, {'label': 'x', 'camera': 'rear'})
    assert error.code == INVALID_ARGUMENTS
    assert 'rear' in error.message and 'rgb8' in error.message and 'png16' in error.message
    error = fail(shared_tool, {'label': 'x', 'camera': 'rgb8', 'format': 'gif'})
    assert error.code == INVALID_ARGUMENTS and 'png or jpg' in error.message
    error = fail(shared_tool, {'label': 'x', 'path': '/etc'})
    assert error.code == INVALID_ARGUMENTS and 'path' in error.message


def test_symlinks_cannot_redirect_writes(make_tool, publisher, tmp_path):
    real = tmp_path / 'real'
    real.mkdir()
    (tmp_path / 'link').symlink_to(real)
    outside = tmp_path / 'outside.png'
    outside.write_bytes(b'keep me')
    (real / 'trap.png').symlink_to(outside)
    tool = make_tool(cameras={'cam': NS + '/rgb8'}, output_dir=str(tmp_path / 'link'))
    result = call_until(tool, {'label': 'trap'})
    assert result['paths'] == [str(real / 'trap-1.png')]
    replacing = make_tool(cameras={'cam': NS + '/rgb8'}, output_dir=str(tmp_path / 'link'),
                          overwrite=True)
    result = call_until(replacing, {'label': 'trap'})
    assert result['paths'] == [str(real / 'trap.png')]
    assert not (real / 'trap.png').is_symlink()
    assert outside.read_bytes() == b'keep me'


def test_an_output_dir_swapped_for_a_symlink_is_refused_and_nothing_lands_there(
        make_tool, publisher, tmp_path):
    out, target = tmp_path / 'out', tmp_path / 'elsewhere'
    target.mkdir()
    tool = make_tool(cameras={'cam': NS + '/rgb8'}, output_dir=str(out), max_age_s=60.0)
    assert call_until(tool, {'label': 'before'})['complete']
    out.rename(tmp_path / 'out.moved')
    out.symlink_to(target)  # swapped while tool_server runs
    error = fail(tool, {'label': 'after'})
    assert error.code == EXECUTION_FAILED, error.message
    assert f'{out} is a symbolic link (to {target})' in error.message
    assert 'not followed' in error.message and 'nothing was saved' in error.message
    assert list(target.iterdir()) == []
    # A parent component swapped the same way is refused too.
    out.unlink()
    (tmp_path / 'out.moved').rename(out)
    nested = make_tool(cameras={'cam': NS + '/rgb8'}, output_dir=str(tmp_path / 'a' / 'b'),
                       max_age_s=60.0)
    assert call_until(nested, {'label': 'x'})['complete']
    (tmp_path / 'a').rename(tmp_path / 'a.moved')
    (tmp_path / 'a').symlink_to(target)
    (target / 'b').mkdir()
    error = fail(nested, {'label': 'y'})
    assert error.code == EXECUTION_FAILED and f'{tmp_path / "a"} is a symbolic link' in (
        error.message)
    assert list((target / 'b').iterdir()) == []


def _exchange(first: pathlib.Path, second: pathlib.Path) -> None:
    """Swap two names in one step (renameat2 RENAME_EXCHANGE): a name is never missing."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_cwd, rename_exchange = -100, 2
    if libc.renameat2(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second),
                      rename_exchange) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(first))


def test_a_swap_racing_the_calls_never_puts_a_file_in_the_links_target(
        make_tool, publisher, tmp_path):
    # The directory flips between itself and a symlink (atomically, as an attacker would)
    # while calls save: each call writes in the directory it opened, or is refused; the
    # link's target stays empty every time.
    out, link, target = tmp_path / 'out', tmp_path / 'link', tmp_path / 'elsewhere'
    target.mkdir()
    link.symlink_to(target)
    tool = make_tool(cameras={'cam': NS + '/rgb8'}, output_dir=str(out), max_age_s=60.0)
    assert call_until(tool, {'label': 'warm'})['complete']
    try:
        _exchange(out, link)
        _exchange(out, link)
    except (AttributeError, OSError) as exc:
        pytest.skip(f'this filesystem or libc cannot exchange two names atomically: {exc}')
    stop = threading.Event()
    swaps = [0]

    def swap() -> None:
        while not stop.is_set():
            _exchange(out, link)  # out is the symlink now
            time.sleep(0.0005)
            _exchange(out, link)  # and the directory again
            swaps[0] += 1
            time.sleep(0.0005)

    swapper = threading.Thread(target=swap)
    swapper.start()
    saved, refused = 0, 0
    try:
        for index in range(60):
            try:
                tool.call({'label': f'r{index}'})
                saved += 1
            except ToolError as exc:
                assert exc.code == EXECUTION_FAILED, exc.message
                assert 'symbolic link' in exc.message, exc.message
                refused += 1
    finally:
        stop.set()
        swapper.join(10)
    assert out.is_dir() and not out.is_symlink()
    assert list(target.iterdir()) == [], (saved, refused)
    assert saved + refused == 60 and swaps[0] > 0
    # What was saved is all in the real directory, whole, with no temp files left.
    names = os.listdir(out)
    assert not [n for n in names if n.startswith('.')]
    assert len([n for n in names if n.endswith('.png')]) == saved + 1


# ------------------------------------------------------------------------------ names
def test_existing_files_get_a_suffix(shared_tool):
    paths = [shared_tool.call({'label': 'dup', 'camera': 'rgb8'})['paths'][0] for _ in range(3)]
    assert [os.path.basename(p) for p in paths] == ['dup.png', 'dup-1.png', 'dup-2.png']
    assert all(sidecar_of(p)['camera'] == 'rgb8' for p in paths)
    # A .jpg of the same label must not leave dup.json pointing at two images.
    jpg = shared_tool.call({'label': 'dup', 'camera': 'rgb8', 'format': 'jpg'})['paths'][0]
    assert os.path.basename(jpg) == 'dup-3.jpg'


def test_concurrent_calls_never_share_a_name(shared_tool):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: shared_tool.call({'label': 'race', 'camera': 'mono8'}),
                                range(6)))
    paths = [r['paths'][0] for r in results]
    assert len(set(paths)) == 6 and all(os.path.exists(p) for p in paths)
    assert not [n for n in os.listdir(shared_tool.output_dir) if n.endswith('.tmp')]


def test_overwrite_replaces(make_tool, publisher, tmp_path):
    tool = make_tool(cameras={'cam': NS + '/rgb8'}, overwrite=True)
    first = call_until(tool, {'label': 'same'})['paths'][0]
    stamp = sidecar_of(first)['stamp']
    time.sleep(0.15)
    second = tool.call({'label': 'same'})['paths'][0]
    assert first == second == str(tmp_path / 'out' / 'same.png')
    assert sorted(os.listdir(tmp_path / 'out')) == ['same.json', 'same.png']
    assert sidecar_of(second)['stamp'] != stamp


# ------------------------------------------------------------------------------ several cameras
def test_several_cameras_one_file_each_and_partial_failure(make_tool, publisher, tmp_path):
    tool = make_tool(cameras={'rgb': NS + '/rgb8', 'mono': NS + '/mono8',
                              'ghost': NS + '/nobody'}, transport='raw')
    out = tmp_path / 'out'
    # Until frames of both cameras have arrived, a call saves only some (under another label,
    # so the names checked below are the first of their group).
    call_until(tool, {'label': 'warmup'},
               lambda r: r['cameras']['rgb']['ok'] and r['cameras']['mono']['ok'])
    for path in out.glob('warmup*'):
        path.unlink()
    result = tool.call({'label': 'scene'})
    assert result['paths'] == [str(out / 'scene_rgb.png'), str(out / 'scene_mono.png')]
    assert result['complete'] is False and 'ghost' in result['message']
    ghost = result['cameras']['ghost']
    assert ghost['ok'] is False and ghost['code'] == NO_FRAME and '/nobody' in ghost['error']
    assert sorted(os.listdir(out)) == ['scene_mono.json', 'scene_mono.png', 'scene_rgb.json',
                                       'scene_rgb.png']
    assert np.array_equal(cv2.imread(str(out / 'scene_rgb.png')), expected_pixels('rgb8'))
    assert sidecar_of(str(out / 'scene_mono.png'))['camera'] == 'mono'

    # One suffix for the whole group, even if only one of its names was taken.
    (out / 'again_mono.png').write_bytes(b'')
    again = tool.call({'label': 'again'})
    assert [os.path.basename(p) for p in again['paths']] == ['again_rgb-1.png',
                                                             'again_mono-1.png']

    error = fail(tool, {'label': 'lonely', 'camera': 'ghost'})
    assert error.code == NO_FRAME and NS + '/nobody' in error.message
    assert 'sensor_data' in error.message


# ------------------------------------------------------------------------------ frame errors
def test_no_publisher_gives_no_frame_naming_topic_and_qos(make_tool):
    tool = make_tool(cameras={'cam': NS + '/silent'})
    error = fail(tool, {'label': 'x'})
    assert error.code == NO_FRAME
    assert NS + '/silent' in error.message and 'not advertised' in error.message
    assert 'sensor_data' in error.message


def test_reliable_subscriber_and_best_effort_camera(make_tool, publisher, node):
    topic = NS + '/rgb8'
    tool = make_tool(cameras={'cam': topic}, qos='reliable', transport='raw')
    deadline = time.monotonic() + 10
    while not node.count_publishers(topic) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # plenty of frames would have arrived by now if QoS matched
    error = fail(tool, {'label': 'x'})
    assert error.code == NO_FRAME, error.message
    assert topic in error.message and 'reliable' in error.message
    assert 'best effort' in error.message and 'sensor_data' in error.message
    # A reliable camera does match a reliable subscriber.
    reliable = make_tool(cameras={'cam': NS + '/reliable'}, qos='reliable')
    assert call_until(reliable, {'label': 'ok'})['complete']


def test_wrong_transport_is_explained(make_tool, publisher, node):
    topic = STREAMS['mistyped']['topic']
    tool = make_tool(cameras={'cam': topic}, transport='raw')
    deadline = time.monotonic() + 10
    while not node.count_publishers(topic) and time.monotonic() < deadline:
        time.sleep(0.05)
    error = fail(tool, {'label': 'x'})
    assert error.code == NO_FRAME and 'CompressedImage' in error.message


@pytest.fixture
def spun_node(ros_env):
    """Give a node in the module's domain that only the test spins (spin_until)."""
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(ros_env['ROS_DOMAIN_ID']))
    ros_node = rclpy.create_node(f'record_spun_{os.getpid()}', context=context)
    ros_node.executor_for_test = SingleThreadedExecutor(context=context)
    ros_node.executor_for_test.add_node(ros_node)
    yield ros_node
    ros_node.executor_for_test.shutdown()
    ros_node.destroy_node()
    rclpy.shutdown(context=context)


def test_stale_frame_after_camera_stops(ros_env, spun_node, tmp_path):
    # The test spins the tool's node itself, so it knows when frames can arrive: a frame is
    # taken only inside spin_until, never during the sleep below, however loaded the machine.
    stream = dict(STREAMS['mono8'], topic=NS + '/stopping')
    tool = RecordObservationTool(RECORD_OBSERVATION_SCHEMA, cameras={'cam': stream['topic']},
                                 max_age_s=0.5, output_dir=str(tmp_path / 'out'))
    tool.bind(RosToolHost(spun_node))
    results = []

    def saved_once_a_frame_came() -> bool:
        if not results:
            try:  # right after spin_once took a frame: it is fresh
                results.append(tool.call({'label': 'fresh'}))
            except ToolError as exc:
                if exc.code != NO_FRAME:
                    raise
        return bool(results)

    camera = Publisher([stream], ros_env)
    try:
        try:
            assert spin_until(spun_node, saved_once_a_frame_came, 30.0), 'no frame came'
            assert results[0]['complete']
        finally:
            camera.stop()
        # The camera has exited: take every frame still on its way, then let the newest age.
        assert spin_until(spun_node, lambda: not spun_node.count_publishers(stream['topic']),
                          30.0)
        spin_until(spun_node, lambda: False, 0.5)
        time.sleep(0.8)
        error = fail(tool, {'label': 'late'})
    finally:
        tool.close()
    assert error.code == STALE_FRAME
    assert 'max_age_s=0.5' in error.message and stream['topic'] in error.message
    age = float(error.message.split(' is ')[1].split(' s old')[0])
    assert age > 0.5


# ------------------------------------------------------------------------------ disk errors
def test_output_dir_that_cannot_exist(make_tool, publisher, tmp_path):
    # chmod does not stop root, so make a path no user can create: a directory under a file.
    blocker = tmp_path / 'afile'
    blocker.write_text('not a directory')
    # A generous max_age_s: a frame delayed on a loaded machine is not what this is about.
    tool = make_tool(cameras={'cam': NS + '/rgb8'}, output_dir=str(blocker / 'sub'),
                     max_age_s=60.0)
    error = None
    deadline = time.monotonic() + 15
    while error is None or (error.code == NO_FRAME and time.monotonic() < deadline):
        error = fail(tool, {'label': 'x'})
        time.sleep(0.1)
    assert error.code == EXECUTION_FAILED
    assert 'Not a directory' in error.message and str(blocker / 'sub') in error.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ['afile']


def test_write_failure_reports_os_error_and_leaves_no_debris(make_tool, publisher, tmp_path):
    # A disk-full stand-in that works as root: the file-size limit makes write() fail (EFBIG).
    # A generous max_age_s: a frame delayed on a loaded machine is not what this is about.
    tool = make_tool(cameras={'cam': NS + '/rgb8'}, max_age_s=60.0)
    assert call_until(tool, {'label': 'fits'})['complete']
    out = tmp_path / 'out'
    before = sorted(os.listdir(out))
    previous_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, hard))
    try:
        error = fail(tool, {'label': 'toolarge'})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous_handler)
    assert error.code == EXECUTION_FAILED and 'File too large' in error.message
    assert sorted(os.listdir(out)) == before


def test_groups_published_concurrently_keep_matching_unique_names(tmp_path):
    from lerobot_tools_ros import imaging

    def publish(i: int) -> dict:
        files = {cam: (f'shot_{cam}', [(imaging.write_temp(str(tmp_path), f'{i}'.encode()),
                                        '.png'),
                                       (imaging.write_temp(str(tmp_path), f'{i}'.encode()),
                                        '.json')])
                 for cam in ('a', 'b')}
        return imaging.publish_files(str(tmp_path), files, overwrite=False)

    with ThreadPoolExecutor(8) as pool:
        groups = list(pool.map(publish, range(40)))
    names = [p for group in groups for paths in group.values() for p in paths]
    assert len(set(names)) == len(names) == 40 * 4
    for group in groups:
        suffixes = {re.search(r'(-\d+)?\.(png|json)$', p).group(1)
                    for paths in group.values() for p in paths}
        assert len(suffixes) == 1  # shot_a-3.png, shot_a-3.json, shot_b-3.png, shot_b-3.json
        contents = {pathlib.Path(p).read_text() for paths in group.values() for p in paths}
        assert len(contents) == 1  # each name holds this group's own data
    assert not [n for n in os.listdir(tmp_path) if n.startswith('.')]
