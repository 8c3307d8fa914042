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

"""The speaker's sinks and player, in plain Python: files, conversions, statuses, drops."""

import threading
import time

from alsa_device import dominant_frequency, has_output_device
from lerobot_tools_ros.audio import (
    CANCELLED, choose_output_format, Chunk, DROPPED, FINISHED, make_sink, map_channels,
    NullSink, PLAYING, SinkError, SinkUnavailable, Status, StreamResampler, UtterancePlayer,
    wav_file_stem, WavSink)
import numpy as np
import pytest
import soundfile


def tone(seconds: float, rate: int = 22050, freq: float = 440.0) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * 12000).astype('<i2').tobytes()


class Statuses:
    """Collects (utterance_id, state, detail) reports from the player thread."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, str]] = []
        self.reports: list[Status] = []
        self._cond = threading.Condition()

    def __call__(self, status: Status) -> None:
        with self._cond:
            self.items.append((status.utterance_id, status.state, status.detail))
            self.reports.append(status)
            self._cond.notify_all()

    def last(self, uid: str) -> Status:
        with self._cond:
            return [s for s in self.reports if s.utterance_id == uid][-1]

    def wait_end(self, uid: str, timeout: float = 5.0) -> tuple[str, str]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for item_uid, state, detail in self.items:
                    if item_uid == uid and state in (FINISHED, DROPPED, CANCELLED):
                        return state, detail
                left = deadline - time.monotonic()
                assert left > 0, f'no end status for {uid}: {self.items}'
                self._cond.wait(left)

    def states(self, uid: str) -> list[str]:
        with self._cond:
            return [state for item_uid, state, _ in self.items if item_uid == uid]


@pytest.fixture
def wav_player(tmp_path):
    statuses = Statuses()
    player = UtterancePlayer(WavSink(tmp_path / 'out'), statuses, stall_timeout_s=0.5)
    yield player, statuses, tmp_path / 'out'
    player.close()


def send(player: UtterancePlayer, uid: str, audio: bytes, *, pieces: int = 4,
         rate: int = 22050, channels: int = 1, final: bool = True) -> None:
    step = max(1, len(audio) // pieces)
    step -= step % (2 * channels)
    for start in range(0, len(audio), step):
        player.submit(Chunk(uid, rate, channels, audio[start:start + step]))
    if final:
        player.submit(Chunk(uid, rate, channels, b'', final=True))


def test_wav_sink_writes_the_exact_samples_to_one_file_per_utterance(wav_player):
    player, statuses, out = wav_player
    audio = tone(0.5)
    send(player, 'u1', audio)
    state, detail = statuses.wait_end('u1')
    assert (state, detail) == (FINISHED, str(out / 'u1.wav'))
    assert statuses.states('u1') == [PLAYING, FINISHED]
    data, rate = soundfile.read(out / 'u1.wav', dtype='int16')
    assert rate == 22050
    assert data.tobytes() == audio
    assert soundfile.info(out / 'u1.wav').subtype == 'PCM_16'


def test_utterances_play_in_arrival_order_even_when_interleaved(wav_player):
    player, statuses, out = wav_player
    first, second = tone(0.3), tone(0.2, rate=16000, freq=300)
    player.submit(Chunk('a', 22050, 1, first[:2000]))
    player.submit(Chunk('b', 16000, 1, second[:1000]))
    player.submit(Chunk('a', 22050, 1, first[2000:], final=True))
    player.submit(Chunk('b', 16000, 1, second[1000:], final=True))
    assert statuses.wait_end('a')[0] == FINISHED
    assert statuses.wait_end('b')[0] == FINISHED
    order = [uid for uid, state, _ in statuses.items if state == PLAYING]
    assert order == ['a', 'b']
    assert soundfile.read(out / 'b.wav', dtype='int16')[0].tobytes() == second
    assert soundfile.info(out / 'b.wav').samplerate == 16000


def test_cancel_silences_within_a_block_keeps_what_was_played_and_spares_the_next(wav_player):
    player, statuses, out = wav_player
    send(player, 'cut', tone(2.0), final=False)
    send(player, 'next', tone(0.2))  # queued behind it: must play untouched
    time.sleep(0.5)
    player.submit(Chunk('cut', 22050, 1, b'', final=True, cancelled=True))
    cancelled_at = time.time()
    state, detail = statuses.wait_end('cut')
    assert state == CANCELLED and 'cancelled' in detail
    report = statuses.last('cut')
    # Paced like a sound card: about 0.5 s was handed over, and nothing after the cancel
    # beyond the block in hand (20 ms).
    assert 0.3 * 22050 < report.frames_played < 1.0 * 22050
    assert report.sample_rate == 22050 and report.frames_total == 0
    assert report.stamp <= cancelled_at + 0.02
    data, rate = soundfile.read(out / 'cut.wav', dtype='int16')
    assert len(data) == report.frames_played  # the file holds what was played, no more
    assert data.tobytes() == tone(2.0)[:2 * len(data)]
    # Late chunks of an ended utterance are ignored, not played as a new one.
    send(player, 'cut', tone(0.1))
    assert statuses.wait_end('next')[0] == FINISHED
    assert statuses.states('cut') == [PLAYING, CANCELLED]
    assert soundfile.read(out / 'next.wav', dtype='int16')[0].tobytes() == tone(0.2)
    assert sorted(p.name for p in out.iterdir()) == ['cut.wav', 'next.wav']


def test_playing_reports_progress_of_what_was_handed_to_the_sink(wav_player):
    player, statuses, _ = wav_player
    send(player, 'long', tone(1.0))
    seen = []
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and statuses.states('long')[-1:] != [FINISHED]:
        report = player.progress()
        if report is not None:
            seen.append(report.frames_played)
        time.sleep(0.05)
    assert statuses.last('long').frames_played == statuses.last('long').frames_total == 22050
    # Progress grew in steps over about a second (paced), not all at once.
    assert len(set(seen)) >= 10 and seen == sorted(seen)
    assert 0 < seen[0] < 22050 // 2


def test_a_stalled_utterance_is_dropped_and_the_next_one_plays(wav_player):
    player, statuses, out = wav_player
    send(player, 'orphan', tone(0.1), final=False)  # the sender died before the final chunk
    send(player, 'after', tone(0.1))
    state, detail = statuses.wait_end('orphan')
    assert state == DROPPED and 'no audio for 0.5 s' in detail
    assert statuses.wait_end('after')[0] == FINISHED
    assert not (out / 'orphan.wav').exists()


@pytest.mark.parametrize('chunk, problem', [
    (Chunk('bad', 22050, 1, b'\x00\x01\x02'), 'whole number'),
    (Chunk('bad', 22050, 1, b'\x00\x00', encoding='mp3'), 'encoding'),
    (Chunk('bad', 0, 1, b'\x00\x00'), 'sample_rate'),
    (Chunk('bad', 22050, 0, b'\x00\x00'), 'channels'),
])
def test_malformed_chunks_drop_the_utterance_with_the_reason(wav_player, chunk, problem):
    player, statuses, _ = wav_player
    player.submit(chunk)
    player.submit(Chunk('bad', 22050, 1, b'', final=True))
    state, detail = statuses.wait_end('bad')
    assert state == DROPPED and problem in detail


def test_format_change_within_an_utterance_is_refused(wav_player):
    player, statuses, out = wav_player
    player.submit(Chunk('mix', 22050, 1, tone(0.1)))
    player.submit(Chunk('mix', 16000, 1, tone(0.1, rate=16000), final=True))
    state, detail = statuses.wait_end('mix')
    assert state == DROPPED and 'format changed' in detail
    assert not (out / 'mix.wav').exists()


def test_final_chunk_without_audio_is_finished_without_a_file(wav_player):
    player, statuses, out = wav_player
    player.submit(Chunk('quiet', 22050, 1, b'', final=True))
    assert statuses.wait_end('quiet') == (FINISHED, 'no audio in this utterance')
    assert not list(out.iterdir())


def test_crafted_utterance_ids_cannot_choose_the_file_location(wav_player, tmp_path):
    player, statuses, out = wav_player
    uid = '../../escaped'
    send(player, uid, tone(0.1))
    state, detail = statuses.wait_end(uid)
    assert state == FINISHED
    assert detail.startswith(str(out) + '/utterance-')
    assert not (tmp_path / 'escaped.wav').exists()
    assert wav_file_stem('0123abcd') == '0123abcd'
    assert wav_file_stem('..') != '..'


def test_null_sink_reports_playing_and_finished():
    statuses = Statuses()
    player = UtterancePlayer(NullSink(), statuses)
    try:
        send(player, 'n', tone(0.2))
        assert statuses.wait_end('n')[0] == FINISHED
        assert statuses.states('n') == [PLAYING, FINISHED]
    finally:
        player.close()


def test_submit_never_blocks_on_a_slow_sink():
    class SlowSink(NullSink):
        def write(self, data: bytes) -> None:
            time.sleep(0.2)

    statuses = Statuses()
    player = UtterancePlayer(SlowSink(), statuses)
    try:
        started = time.monotonic()
        send(player, 'slow', tone(0.2), pieces=5)
        assert time.monotonic() - started < 0.1
        assert statuses.wait_end('slow')[0] == FINISHED
    finally:
        player.close()


def test_a_failing_sink_drops_that_utterance_and_the_player_goes_on():
    class FlakySink(NullSink):
        calls = 0

        def begin(self, utterance_id: str, sample_rate: int, channels: int) -> None:
            FlakySink.calls += 1
            if FlakySink.calls == 1:
                raise SinkError('device busy')

    statuses = Statuses()
    player = UtterancePlayer(FlakySink(), statuses)
    try:
        send(player, 'first', tone(0.1))
        send(player, 'second', tone(0.1))
        assert statuses.wait_end('first') == (DROPPED, 'device busy')
        assert statuses.wait_end('second')[0] == FINISHED
    finally:
        player.close()


def test_resampler_is_seamless_across_chunks_and_keeps_length_and_pitch():
    rate_in, rate_out = 24000, 44100
    samples = np.frombuffer(tone(0.5, rate=rate_in, freq=500), dtype='<i2').reshape(-1, 1)
    whole = StreamResampler(rate_in, rate_out, 1)
    whole_out = np.concatenate([whole.process(samples), whole.flush()])
    pieces = StreamResampler(rate_in, rate_out, 1)
    chunked = np.concatenate([pieces.process(samples[i:i + 1920])
                              for i in range(0, len(samples), 1920)] + [pieces.flush()])
    assert abs(len(chunked) - len(samples) * rate_out / rate_in) <= 1
    # Seams would show as clicks of thousands; chunking only changes rounding (LSBs).
    assert np.max(np.abs(chunked.astype(int) - whole_out.astype(int))) <= 4
    assert dominant_frequency(chunked[:, 0], rate_out) == pytest.approx(500, rel=0.002)


def test_downsampling_stereo_also_keeps_length_and_pitch():
    mono = np.frombuffer(tone(0.5, rate=48000, freq=300), dtype='<i2').reshape(-1, 1)
    samples = map_channels(mono, 2)
    resampler = StreamResampler(48000, 16000, 2)
    out = np.concatenate([resampler.process(samples[i:i + 700])
                          for i in range(0, len(samples), 700)] + [resampler.flush()])
    assert abs(len(out) - len(samples) / 3) <= 1
    assert np.max(np.abs(out[:, 0].astype(int) - out[:, 1].astype(int))) <= 4  # dither only
    assert dominant_frequency(out[:, 0], 16000) == pytest.approx(300, rel=0.002)


def test_channel_mapping_duplicates_mono_and_averages_to_mono():
    mono = np.array([[100], [-200]], dtype=np.int16)
    assert map_channels(mono, 2).tolist() == [[100, 100], [-200, -200]]
    stereo = np.array([[100, 300], [-200, 0]], dtype=np.int16)
    assert map_channels(stereo, 1).tolist() == [[200], [-100]]
    assert map_channels(stereo, 2) is stereo


def test_output_format_follows_the_device_and_falls_back_to_what_it_accepts():
    def device(rates: set, channel_counts: set):
        def check(rate: int, channels: int) -> None:
            if rate not in rates or channels not in channel_counts:
                raise ValueError(f'Invalid sample rate or channels ({rate}, {channels})')
        return check

    # A USB speaker: its own rate, stereo (mono audio is duplicated).
    assert choose_output_format(device({24000, 48000}, {1, 2}), 24000, 1, 48000, 2) == (48000, 2)
    assert choose_output_format(device({48000}, {1}), 24000, 1, 48000, 1) == (48000, 1)
    # A plug device offering 128 channels still gets stereo.
    assert choose_output_format(device({48000}, set(range(1, 129))), 22050, 1, 48000,
                                128) == (48000, 2)
    # The device's own rate is refused: the audio's rate is tried next.
    assert choose_output_format(device({24000}, {2}), 24000, 1, 48000, 2) == (24000, 2)
    with pytest.raises(SinkError, match='48000 Hz x2.*Invalid'):
        choose_output_format(device({44100}, {2}), 24000, 1, 48000, 2)


@pytest.mark.skipif(has_output_device(), reason='this machine has a sound output device')
def test_without_a_sound_device_auto_writes_wav_files_and_warns_once(tmp_path):
    warnings: list[str] = []
    sink = make_sink('auto', output_dir=str(tmp_path / 'audio'), warn=warnings.append)
    assert isinstance(sink, WavSink)
    assert len(warnings) == 1 and 'no sound output' in warnings[0]
    assert str(tmp_path / 'audio') in warnings[0]
    with pytest.raises(SinkUnavailable, match='audio output device'):
        make_sink('sounddevice')


def test_unknown_sink_and_unwritable_directory_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match='choose one of auto, sounddevice, wav, null'):
        make_sink('speakers')
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    with pytest.raises(SinkUnavailable, match='cannot create output_dir'):
        WavSink(blocker / 'sub')


def test_ids_without_audio_never_hold_up_an_utterance_that_has_audio(wav_player):
    player, statuses, out = wav_player  # stall_timeout_s 0.5
    for n in range(40):  # a node publishing fake ids: each would have held the player 0.5 s
        player.submit(Chunk(f'fake{n}', 22050, 1, b''))
    send(player, 'real', tone(0.2))
    assert statuses.wait_end('real', timeout=3.0)[0] == FINISHED
    assert [uid for uid, _, _ in statuses.items if uid.startswith('fake')] == []


def test_over_long_ids_are_ignored_and_waiting_utterances_are_bounded(tmp_path):
    statuses = Statuses()
    player = UtterancePlayer(WavSink(tmp_path), statuses, max_pending=3, stall_timeout_s=0.5)
    try:
        player.submit(Chunk('x' * 129, 22050, 1, tone(0.1), final=True))
        for uid in ('a', 'b', 'c', 'd'):
            player.submit(Chunk(uid, 22050, 1, tone(0.1), final=True))
        assert statuses.wait_end('d') == (DROPPED, 'more than 3 utterances are waiting')
        assert [statuses.wait_end(uid)[0] for uid in 'abc'] == [FINISHED] * 3
        assert player.ignored_chunks == 1 and player.refused_utterances == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == ['a.wav', 'b.wav', 'c.wav']
    finally:
        player.close()


def test_queued_audio_over_the_byte_bound_is_dropped_not_reported_cancelled(tmp_path):
    # A cancel is what a sender or an operator asked for; running out of room is not (a say
    # waiting on it must hear `dropped`, with the reason).
    statuses = Statuses()
    player = UtterancePlayer(WavSink(tmp_path), statuses, max_queued_bytes=100_000)
    try:
        player.submit(Chunk('playing', 22050, 1, tone(2.0), final=True))  # ~88 KB, paced
        send(player, 'flood', tone(4.0), pieces=8)  # ~176 KB behind it: over the bound
        assert statuses.wait_end('flood') == (
            DROPPED, 'more than 100000 bytes of audio were queued')
        assert statuses.wait_end('playing')[0] == FINISHED
    finally:
        player.close()


def test_stop_all_cuts_off_the_one_playing_and_drops_the_queue(wav_player):
    player, statuses, out = wav_player
    send(player, 'now', tone(2.0))
    send(player, 'next', tone(0.5))
    deadline = time.monotonic() + 5.0
    while (player.progress() is None or player.progress().frames_played < 0.2 * 22050) \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    assert player.stop_all('stopped by the operator') == ['now', 'next']
    state, detail = statuses.wait_end('now')
    assert state == CANCELLED and detail.startswith('stopped by the operator; kept')
    assert soundfile.info(out / 'now.wav').frames == statuses.last('now').frames_played
    assert statuses.last('now').frames_played < 1.0 * 22050
    assert statuses.wait_end('next') == (CANCELLED, 'stopped by the operator')
    assert player.stop_all('again') == []
    send(player, 'later', tone(0.2))
    assert statuses.wait_end('later')[0] == FINISHED


def test_a_wav_appears_under_its_name_only_when_complete(tmp_path):
    sink = WavSink(tmp_path)
    sink.begin('whole', 22050, 1)
    sink.write(tone(0.1))
    assert not (tmp_path / 'whole.wav').exists()  # a crash now leaves no broken whole.wav
    [partial] = tmp_path.iterdir()
    assert partial.name.startswith('.whole.wav.') and partial.name.endswith('.part')
    assert sink.end() == str(tmp_path / 'whole.wav')
    assert [p.name for p in tmp_path.iterdir()] == ['whole.wav']
    assert soundfile.read(tmp_path / 'whole.wav', dtype='int16')[0].tobytes() == tone(0.1)


def test_a_wav_output_dir_swapped_for_a_symlink_gets_no_file(tmp_path):
    out, moved, target = tmp_path / 'out', tmp_path / 'out.moved', tmp_path / 'elsewhere'
    target.mkdir()
    sink = WavSink(out)
    # Swapped in the middle of an utterance: it is finished in the directory it began in.
    sink.begin('during', 22050, 1)
    sink.write(tone(0.1))
    out.rename(moved)
    out.symlink_to(target)
    sink.write(tone(0.1))
    assert sink.end() == str(out / 'during.wav')
    assert [p.name for p in moved.iterdir()] == ['during.wav']
    # Swapped before an utterance: it is refused, saying why, and nothing lands there.
    with pytest.raises(SinkError, match='is a symbolic link .* not followed'):
        sink.begin('after', 22050, 1)
    assert list(target.iterdir()) == []
    sink.close()


def test_closing_writes_complete_utterances_out_without_pacing(tmp_path):
    statuses = Statuses()
    player = UtterancePlayer(WavSink(tmp_path), statuses)  # paced: 5 s would take 5 s
    send(player, 'whole', tone(5.0))
    statuses_seen = statuses.states
    deadline = time.monotonic() + 5.0
    while statuses_seen('whole') != [PLAYING] and time.monotonic() < deadline:
        time.sleep(0.01)
    heard_at_close = player.sink.progress()[0]  # what had been played when it stopped
    player.close(drain_s=2.0)
    # The file is complete (not lost at shutdown), but most of it was never played: the end
    # says so, with the sink's own count when the shutdown began.
    state, detail = statuses.wait_end('whole', timeout=0.1)
    assert state == DROPPED and detail.startswith('speaker shutting down: '), detail
    end = statuses.last('whole')
    assert heard_at_close <= end.frames_played < end.frames_total == 5 * 22050
    assert end.frames_played < 2 * 22050  # about what the wall clock allowed, not all 5 s
    assert soundfile.read(tmp_path / 'whole.wav', dtype='int16')[0].tobytes() == tone(5.0)
