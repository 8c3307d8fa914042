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
The audit log: every record on disk at once, a full disk never stops dispatching, safe export.

`/dev/full` is a real device that fails every write with ENOSPC, exactly like a full disk.
"""

import contextlib
import json
import os
import pathlib
import subprocess
import threading
import time

from conftest import spin_until
from lerobot_tools_interfaces.msg import ToolResult
from lerobot_tools_ros.catalog import DEFAULT_TOOLS, ToolCatalog
from lerobot_tools_ros.cli import main as cli_main
from lerobot_tools_ros.dispatch import (AuditLog, diagnostics, DispatchCore, DispatchSettings,
                                        read_audit_log, ToolSettings)
from lerobot_tools_ros.errors import ConfigurationError
from lerobot_tools_ros.tools.echo import ECHO_SCHEMA
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

FULL_DISK = pathlib.Path('/dev/full')
needs_dev_full = pytest.mark.skipif(not FULL_DISK.exists(), reason='no /dev/full here')
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


class FakeClock:
    """Seconds that the test advances: the rate limit of error reports is checked exactly."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_every_record_is_handed_to_the_os_without_a_close(tmp_path):
    path = tmp_path / 'audit.jsonl'
    log = AuditLog(path)
    assert log.write('call', 1, call_id='a', name='say', arguments={'text': 'hi'})
    # The writer thread hands it to the OS: read by another handle with no close (a crash now
    # would lose nothing); flush only waits for the writer, it does not sync or close.
    assert log.flush(5.0)
    (record,) = read_audit_log(path)
    assert record['call_id'] == 'a' and record['arguments'] == {'text': 'hi'}
    assert log.write('result', 2, call_id='a', success=True)
    assert log.flush(5.0)
    assert [r['event'] for r in read_audit_log(path)] == ['call', 'result']
    log.close()
    assert (log.write_errors, log.dropped, log.written) == (0, 0, 2)


@needs_dev_full
def test_a_full_disk_is_counted_and_reported_at_a_limited_rate_never_raised():
    reports: list[str] = []
    clock = FakeClock()
    log = AuditLog(FULL_DISK, on_error=reports.append, report_interval_s=10.0, clock=clock)
    assert log.write('call', 1, call_id='a')  # queued: the writer thread meets the full disk
    assert log.flush(5.0)
    assert log.write_errors == 1
    assert len(reports) == 1
    assert '/dev/full' in reports[0] and 'No space left on device' in reports[0]
    for index in range(500):
        log.write('result', index, call_id=str(index))
    assert log.flush(10.0)
    assert log.write_errors == 501 and log.dropped == 0
    assert len(reports) == 1  # the same failure is not reported 500 times
    clock.now += 10.0
    log.write('call', 2)
    assert log.flush(5.0)
    assert len(reports) == 2
    assert '501 record(s) could not be written' in reports[1]
    assert '502 lost in total' in reports[1]
    log.close()  # never raises
    assert log.write('call', 3) is False  # closed: refused at once, and counted
    assert log.write_errors == 503


@needs_dev_full
def test_a_failing_error_callback_does_not_escape():
    def broken(message: str) -> None:
        raise RuntimeError('reporter down')

    log = AuditLog(FULL_DISK, on_error=broken)
    log.write('call', 1)
    assert log.flush(5.0)
    assert log.write_errors == 1
    assert log.write('call', 2) and log.flush(5.0) and log.write_errors == 2


def test_an_io_error_is_counted_like_a_full_disk():
    # /proc/version opens for writing (as root) and fails every write with EIO.
    path = pathlib.Path('/proc/version')
    if not path.exists() or not os.access(path, os.W_OK):
        pytest.skip('no writable-looking /proc/version here')
    reports: list[str] = []
    log = AuditLog(path, on_error=reports.append)
    log.write('call', 1, call_id='a')
    assert log.flush(5.0)
    assert log.write_errors == 1 and 'Input/output error' in reports[0]
    log.close()


def _fill_the_pipe(fifo) -> None:
    """Write to a named pipe (whose reader reads nothing) until the OS takes no more bytes."""
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        for chunk in (b'\n' * 4096, b'\n'):
            with contextlib.suppress(BlockingIOError):
                while True:
                    os.write(writer, chunk)
    finally:
        os.close(writer)


def test_a_pipe_whose_reader_stopped_never_blocks_the_writer_of_records(tmp_path):
    # A reader that opened the pipe and reads nothing: the pipe (64 KiB) fills up. Once, the
    # dispatch thread then hung in os.write, e-stop unanswered.
    fifo = tmp_path / 'audit.fifo'
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    _fill_the_pipe(fifo)  # full from the start: the writer can never catch up in between
    reports: list[str] = []
    clock = FakeClock()
    try:
        log = AuditLog(fifo, on_error=reports.append, clock=clock, max_queued=100,
                       close_timeout_s=0.5)
        accepted: list[bool] = []

        def dispatch() -> None:  # what the dispatch thread does: write, and go on
            for index in range(2000):
                accepted.append(log.write('result', index, call_id=str(index), pad='p' * 500))

        thread = threading.Thread(target=dispatch)
        thread.start()
        thread.join(60.0)
        assert not thread.is_alive(), f'write blocked after {len(accepted)} records'
        assert log.flush(0.5) is False  # the writer waits for the reader; nobody else does
        assert log.dropped == accepted.count(False) > 0
        assert log.written + log.queued + log.dropped == 2000
        # Drops are reported once for now (the rate limit holds the rest) and counted in the
        # dispatcher's diagnostics.
        assert len(reports) == 1 and 'dropped' in reports[0], reports
        core = DispatchCore(ToolCatalog.from_tools(None), DispatchSettings(),
                            lambda name: ToolSettings(), id_prefix='t')
        (status,) = [s for s in diagnostics.statuses(core, log, lambda name: True, str)
                     if s.name == 'audit_log']
        assert status.warn and status.values['dropped'] == log.dropped
        assert status.values['queued'] > 0
        clock.now += 10.0
        assert log.write('call', 1) is False
        assert len(reports) == 2  # every drop since the first report, counted in one line
        assert f'{log.dropped - 1} record(s) dropped' in reports[1]
        assert f'{log.dropped} dropped in total' in reports[1]
        closer = threading.Thread(target=log.close)
        closer.start()
        closer.join(10.0)
        assert not closer.is_alive(), 'close waited for the reader without a bound'
        # Everything is accounted for: written, refused by the OS, or dropped.
        assert log.written + log.write_errors + log.dropped == 2001
    finally:
        os.close(reader)


def test_wait_written_returns_once_the_os_has_every_record_queued_before(tmp_path):
    path = tmp_path / 'audit.jsonl'
    log = AuditLog(path)
    try:
        for index in range(200):
            log.write('call', index, call_id=str(index))
        log.write('result', 200, call_id='199', success=True)
        # What the dispatcher does before it publishes a result: the record is in the file
        # (another reader sees it, no close, no flush), so a SIGKILL now would not lose it.
        assert log.wait_written()
        records = list(read_audit_log(path))
        assert records[-1] == {**records[-1], 'event': 'result', 'call_id': '199'}
        assert len(records) == 201 and log.published_unwritten == 0
    finally:
        log.close()


def test_wait_written_gives_up_on_a_stalled_writer_once_not_per_result(tmp_path):
    # A pipe whose reader stopped: the writer is stuck on one record. The first result waits
    # sync_timeout_s, later ones not at all (dispatching goes on), and each is counted.
    fifo = tmp_path / 'audit.fifo'
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    _fill_the_pipe(fifo)
    log = AuditLog(fifo, sync_timeout_s=0.3, close_timeout_s=0.2)
    try:
        log.write('result', 1, call_id='a')
        started = time.monotonic()
        assert log.wait_written() is False
        first = time.monotonic() - started
        log.write('result', 2, call_id='b')
        started = time.monotonic()
        assert log.wait_written() is False
        second = time.monotonic() - started
        assert first >= 0.25 and second < first
        assert log.published_unwritten == 2
        core = DispatchCore(ToolCatalog.from_tools(None), DispatchSettings(),
                            lambda name: ToolSettings(), id_prefix='t')
        (status,) = [s for s in diagnostics.statuses(core, log, lambda name: True, str)
                     if s.name == 'audit_log']
        assert status.values['published_unwritten'] == 2
    finally:
        log.close()
        os.close(reader)


def test_a_log_that_ends_in_a_fragment_gets_a_newline_before_the_next_record(tmp_path):
    path = tmp_path / 'audit.jsonl'
    path.write_bytes(b'{"event": "call", "call_id": "a"}\n{"event": "resu')  # killed mid-line
    log = AuditLog(path)
    log.write('result', 1, call_id='b')
    log.close()
    bad: list[str] = []
    assert [r['call_id'] for r in read_audit_log(path, bad)] == ['a', 'b']
    assert len(bad) == 1 and ':2:' in bad[0]


@pytest.fixture
def tiny_disk(tmp_path):
    """Mount a 64 KiB tmpfs for this test (root only); unmount it after."""
    if os.geteuid() != 0:
        pytest.skip('mounting a tiny tmpfs to fill needs root (CI runs as root)')
    mount = tmp_path / 'tiny'
    mount.mkdir()
    made = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', str(mount)],
                          capture_output=True, text=True)
    if made.returncode:
        pytest.skip(f'cannot mount a tmpfs here: {made.stderr.strip()}')
    try:
        yield mount
    finally:
        # A file a failed test left open keeps it busy: detach it then (freed once closed).
        if subprocess.run(['umount', str(mount)], capture_output=True).returncode:
            subprocess.run(['umount', '-l', str(mount)], check=True)


def test_a_record_cut_by_a_full_disk_is_cut_back_and_counted(tiny_disk):
    # Fill a real filesystem: records of ~420 bytes do not fit its pages evenly, so the OS
    # takes part of one record ("only 77 of 422 bytes written"), then refuses the rest.
    path = tiny_disk / 'audit.jsonl'
    reports: list[str] = []
    log = AuditLog(path, on_error=reports.append, report_interval_s=0.0)
    try:
        total = _fill_then_free(log, tiny_disk, reports)
    finally:
        log.close()
    bad: list[str] = []
    records = list(read_audit_log(path, bad))
    assert not bad, bad  # every line of the log is one whole record
    assert len(records) == log.written
    # Lost: the record cut by the full disk and the 5 sent while it stayed full, no more.
    assert (log.write_errors, log.dropped, log.written) == (6, 0, total - 6), reports
    # The records after the disk had space again are all there, in order.
    assert [r['call_id'] for r in records[-10:]] == [f'c{i}' for i in range(total - 10, total)]


def _fill_then_free(log: AuditLog, tiny_disk: pathlib.Path, reports: list[str]) -> int:
    """Write until the disk is full, write more, free it, write more; return records sent."""
    ballast = tiny_disk / 'ballast'
    ballast.write_bytes(b'\0' * (16 << 10))
    queued = 0
    while not log.write_errors and queued < 1000:
        assert log.write('call', queued, call_id=f'c{queued}', pad='p' * 350)
        queued += 1
        assert log.flush(5.0)
    assert log.write_errors == 1, reports
    assert 'bytes written' in reports[0] and 'cut back' in reports[0], reports
    for index in range(queued, queued + 5):  # still full: refused whole, counted
        log.write('call', index, call_id=f'c{index}', pad='p' * 350)
    queued += 5
    assert log.flush(5.0)
    ballast.unlink()  # space again
    for index in range(queued, queued + 10):
        log.write('call', index, call_id=f'c{index}', pad='p' * 350)
    return queued + 10


def test_a_pipe_without_a_reader_is_one_configuration_error(tmp_path):
    fifo = tmp_path / 'audit.fifo'
    os.mkfifo(fifo)
    with pytest.raises(ConfigurationError, match='a named pipe must have a reader'):
        AuditLog(fifo)


def test_close_writes_every_queued_record(tmp_path):
    path = tmp_path / 'audit.jsonl'
    log = AuditLog(path)
    for index in range(3000):
        assert log.write('call', index, call_id=str(index))
    log.close()
    assert [record['call_id'] for record in read_audit_log(path)] == [
        str(index) for index in range(3000)]
    assert (log.written, log.dropped, log.write_errors) == (3000, 0, 0)


@pytest.mark.parametrize('where', ['directory', 'under_a_file'])
def test_a_path_that_cannot_be_opened_is_one_configuration_error(tmp_path, where):
    blocker = tmp_path / 'a_file'
    blocker.write_text('not a directory')
    path = {'directory': tmp_path, 'under_a_file': blocker / 'audit.jsonl'}[where]
    with pytest.raises(ConfigurationError) as raised:
        AuditLog(path)
    message = str(raised.value)
    assert str(path) in message
    assert 'audit_log' in message and "'' to turn the audit log off" in message
    assert isinstance(raised.value, ValueError)


def test_hostile_text_keeps_one_record_per_line_and_round_trips(tmp_path):
    path = tmp_path / 'audit.jsonl'
    log = AuditLog(path)
    hostile = 'boom\ud800 a\u2028b\u2029c\x85d\nnext\x1b[31m'
    assert log.write('call', 1, call_id='a', arguments={'text': hostile})
    assert log.write('result', 2, call_id='a', error_message=hostile)
    log.close()
    data = path.read_bytes()
    data.decode('utf-8')  # strict: no surrogate was written raw
    for raw in ('\u2028', '\u2029', '\x85'):
        assert raw.encode('utf-8') not in data
    assert len(data.decode('utf-8').splitlines()) == 2  # what a splitlines() reader counts
    first, second = read_audit_log(path)
    assert first['arguments']['text'] == hostile
    assert second['error_message'] == hostile


def _write_log(path: pathlib.Path, lines: list[str]) -> None:
    path.write_bytes(''.join(line + '\n' for line in lines).encode('utf-8', 'surrogatepass'))


def test_export_writes_atoms_whose_arguments_hold_lone_surrogates(tmp_path, capsys):
    log = tmp_path / 'audit.jsonl'
    writer = AuditLog(log)
    text = 'boom\ud800 and\u2028more'
    writer.write('call', 1, call_id='a', generation_id='g', name='say', arguments={'text': text})
    writer.write('result', 2, call_id='a', success=True)
    writer.close()
    out = tmp_path / 'atoms.jsonl'
    assert cli_main(['audit', 'export', str(log), '--lerobot', str(out)]) == 0
    assert 'wrote 1 atom(s)' in capsys.readouterr().out
    data = out.read_bytes().decode('utf-8')  # strict UTF-8
    assert '\u2028' not in data and len(data.splitlines()) == 1
    (atom,) = [json.loads(line) for line in data.splitlines()]
    assert atom['tool_calls'][0]['function']['arguments'] == {'text': text}


def test_export_of_a_log_with_raw_surrogate_escapes_does_not_crash(tmp_path, capsys):
    # What the previous AuditLog wrote: `\ud800` escapes that json.loads turns into a lone one.
    log = tmp_path / 'audit.jsonl'
    _write_log(log, [
        '{"event": "call", "wall_time": 1.0, "call_id": "a", "name": "say", '
        '"arguments": {"text": "x\\ud800"}}',
        '{"event": "result", "call_id": "a", "success": true}'])
    out = tmp_path / 'atoms.jsonl'
    assert cli_main(['audit', 'export', str(log), '--lerobot', str(out)]) == 0
    (atom,) = [json.loads(line) for line in out.read_text(encoding='utf-8').splitlines()]
    assert atom['tool_calls'][0]['function']['arguments'] == {'text': 'x\ud800'}


def test_export_skips_a_line_cut_by_a_full_disk_and_says_so(tmp_path, capsys):
    log = tmp_path / 'audit.jsonl'
    _write_log(log, [
        '{"event": "call", "wall_time": 1.0, "call_id": "a", "name": "say", '
        '"arguments": {"text": "kept"}}',
        '{"event": "result", "call_id": "a", "success": true}',
        '{"event": "call", "wall_time": 2.0, "call_id": "b", "na'])
    out = tmp_path / 'atoms.jsonl'
    assert cli_main(['audit', 'export', str(log), '--lerobot', str(out)]) == 0
    captured = capsys.readouterr()
    assert 'wrote 1 atom(s)' in captured.out
    assert f'skipped {log}:3: not a JSON line' in captured.err


def test_export_to_an_unwritable_place_is_one_error_and_leaves_nothing(tmp_path, capsys):
    log = tmp_path / 'audit.jsonl'
    _write_log(log, ['{"event": "call", "wall_time": 1.0, "call_id": "a", "name": "say"}',
                     '{"event": "result", "call_id": "a", "success": true}'])
    blocker = tmp_path / 'a_file'
    blocker.write_text('')
    assert cli_main(['audit', 'export', str(log), '--lerobot', str(blocker / 'x.jsonl')]) == 1
    assert 'cannot write' in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ['a_file', 'audit.jsonl']


@needs_dev_full
def test_dispatcher_with_a_full_audit_disk_answers_every_call(start_node, ros_node, tmp_path):
    echo = json.loads(json.dumps(ECHO_SCHEMA))
    echo['function']['parameters']['required'] = ['text']  # so the <echo>...</echo> marker applies
    root = tmp_path / 'dataset'
    (root / 'meta').mkdir(parents=True)
    (root / 'meta' / 'info.json').write_text(json.dumps(
        {'codebase_version': 'v3.0', 'fps': 30, 'features': {}, 'tools': [echo, *DEFAULT_TOOLS]}))
    server = start_node('lerobot_tools_ros.tool_server.node', '-p', 'tools:=[echo]',
                        '-p', f'dataset:={root}')
    started = time.monotonic()
    # 300 calls at once: on a loaded 2-core machine the last waits longer than the default
    # 10 s timeout for its turn, and a timeout is not what this test is about.
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'dataset:={root}',
                            '-p', f'audit_log:={FULL_DISK}', '-p', 'max_pending:=1000',
                            '-p', 'timeout_s:=300.0')
    results: list[ToolResult] = []
    sub = ros_node.create_subscription(ToolResult, '/lerobot_tools/results', results.append,
                                       RELIABLE)
    pub = ros_node.create_publisher(String, '/policy/text', RELIABLE)
    ready = spin_until(ros_node, lambda: (
        pub.get_subscription_count() > 0 and ros_node.count_publishers(sub.topic_name) > 0
        and '/lerobot_tools/echo' in dict(ros_node.get_service_names_and_types())), 30.0)
    assert ready, dispatcher.output() + server.output()
    # Discovery handshake: the dispatcher's writer must match our reader before we count.
    for _ in range(60):
        pub.publish(String(data='<tool_call>{"name": "probe", "arguments": {}}</tool_call>'))
        if spin_until(ros_node, lambda: bool(results), 0.5):
            break
    assert results, dispatcher.output()
    spin_until(ros_node, lambda: False, 0.2)
    results.clear()

    generations, per_generation = 30, 10
    for generation in range(generations):
        pub.publish(String(data=''.join(f'<echo>{generation}-{index}</echo>'
                                        for index in range(per_generation))))
    total = generations * per_generation
    spin_until(ros_node, lambda: len(results) >= total, 300.0)
    spin_until(ros_node, lambda: False, 0.3)
    output = dispatcher.output()
    elapsed = time.monotonic() - started
    assert dispatcher.proc.poll() is None, output[-3000:]
    assert len(results) == total, output[-3000:]
    failed = [(r.error_code, r.error_message) for r in results if not r.success]
    assert not failed, f'{len(failed)} failed, e.g. {failed[:3]}\n' + output[-3000:]
    assert len({r.call_id for r in results}) == total
    reports = [line for line in output.splitlines() if 'could not be written' in line]
    # Rate limited (at most one report per 10 s after the first; the limit itself is tested
    # with a fake clock above), not one line per lost record.
    assert 1 <= len(reports) <= 1 + elapsed // 10.0, (elapsed, reports)


def test_dispatcher_with_an_unopenable_audit_path_exits_with_one_line(start_node, tmp_path):
    blocker = tmp_path / 'a_file'
    blocker.write_text('')
    path = blocker / 'audit.jsonl'
    dispatcher = start_node('lerobot_tools_ros.dispatcher.node', '-p', f'audit_log:={path}')
    assert dispatcher.proc.wait(60) == 78  # a configuration error
    output = dispatcher.output()
    assert 'Traceback' not in output, output
    (line,) = [line for line in output.splitlines() if 'error' in line.lower()]
    assert str(path) in line and 'audit_log' in line
