"""
A TTS backend's own time to first audio, without ROS: the baseline for bench/say_bench.py.

Run from the repository root::

    .venv/bin/python bench/tts_baseline.py [--runs 20] [--text "hello world"]

It prints p50/p90 of the time from the ``synthesize()`` call to its first chunk for espeak-ng
and for the tiny random-weight pocket-tts model (built offline in a temporary directory; it
produces noise, not speech, but runs pocket-tts' real generation code), plus pocket-tts'
import, load and warm-up times.
"""

import argparse
import io
from pathlib import Path
import statistics
import sys
import tempfile
import threading
import time
from typing import Any, Optional

# The tiny model is a fixture of the package's tests (test/tiny_pocket_model.py), not runtime code.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'lerobot_tools_ros' / 'test'))
try:
    from lerobot_tools_ros.tts import make_backend, PocketTtsBackend, TtsBackend, TtsUnavailable
except ImportError:  # run from a source checkout without the workspace sourced
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'lerobot_tools_ros'))
    from lerobot_tools_ros.tts import make_backend, PocketTtsBackend, TtsBackend, TtsUnavailable
from tiny_pocket_model import build_tiny_model_config  # noqa: E402
from tiny_pocket_model import TINY_EOS_THRESHOLD  # noqa: E402

__all__ = ['measure_backend_first_audio', 'measure_first_audio', 'measure_model_first_audio',
           'measure_program_first_audio', 'percentile', 'tiny_pocket_params']

DEFAULT_TEXT = 'Hello world, I am starting now.'


def measure_backend_first_audio(backend: TtsBackend, text: str, runs: int) -> list[float]:
    """
    Seconds from each ``synthesize()`` call to its first chunk, for a ready backend.

    Every utterance is played out in full (not stopped) so each run starts from an idle backend,
    as a robot speaking one sentence after another would.
    """
    if runs < 1:
        raise ValueError(f'runs must be at least 1, got {runs}')
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        first: Optional[float] = None
        for _chunk in backend.synthesize(text, threading.Event()):
            if first is None:
                first = time.perf_counter() - started
        if first is None:
            raise RuntimeError(f'{backend.name} produced no audio for {text!r}')
        times.append(first)
    return times


def measure_first_audio(backend_kind: str, text: str, runs: int, **params: Any) -> list[float]:
    """Build and warm up a backend of ``backend_kind`` (with ``params``), then measure it."""
    backend = make_backend(backend_kind, **params)
    try:
        backend.warm_up()
        return measure_backend_first_audio(backend, text, runs)
    finally:
        backend.close()


def measure_program_first_audio(text: str, runs: int, voice: str = 'en-us',
                                rate: int = 175) -> list[float]:
    """
    Seconds from starting the espeak-ng program to its first audio bytes: no wrapper at all.

    The same arguments the backend uses; the WAV header (44 bytes) does not count as audio.
    """
    import subprocess
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen(['espeak-ng', '--stdin', '--stdout', '-b', '1', '-v', voice,
                                 '-s', str(rate)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        stdin, stdout = proc.stdin, proc.stdout
        # Both are pipes (above), and a buffered pipe can return what has arrived (read1).
        assert stdin is not None and isinstance(stdout, io.BufferedReader)
        stdin.write(text.encode('utf-8'))
        stdin.close()
        received = b''
        while len(received) <= 44:
            block = stdout.read1(65536)
            if not block:
                break
            received += block
        times.append(time.perf_counter() - started)
        stdout.read()
        proc.wait()
    return times


def measure_model_first_audio(config: str, eos_threshold: float, text: str,
                              runs: int) -> list[float]:
    """
    Seconds from pocket-tts' own ``generate_audio_stream`` call to its first chunk: no wrapper.

    Loads the model from ``config`` (the tiny offline model) with a silent 1 s voice prompt.
    """
    import pocket_tts
    import torch
    model = pocket_tts.TTSModel.load_model(config=config, eos_threshold=eos_threshold)
    state = model.get_state_for_audio_prompt(torch.zeros(1, int(model.sample_rate)))
    for _ in model.generate_audio_stream(state, text):  # warm-up
        pass
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        stream = model.generate_audio_stream(state, text)
        next(stream)
        times.append(time.perf_counter() - started)
        for _ in stream:
            pass
    return times


def tiny_pocket_params(directory: Path) -> dict[str, Any]:
    """``make_backend('pocket_tts', ...)`` parameters for the tiny offline model."""
    return {'config': str(build_tiny_model_config(directory)),
            'eos_threshold': TINY_EOS_THRESHOLD}


def percentile(values: list[float], fraction: float) -> float:
    """Return the nearest-rank percentile of ``values``; ``fraction`` is in 0..1."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def _report(label: str, times: list[float]) -> None:
    print(f'{label:<22} first chunk p50 {percentile(times, 0.5) * 1e3:7.1f} ms   '
          f'p90 {percentile(times, 0.9) * 1e3:7.1f} ms   '
          f'mean {statistics.mean(times) * 1e3:7.1f} ms   (n={len(times)})')


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--runs', type=int, default=20, help='utterances per backend')
    parser.add_argument('--text', default=DEFAULT_TEXT, help='the utterance to speak')
    args = parser.parse_args(argv)

    _report('espeak_ng', measure_first_audio('espeak_ng', args.text, args.runs))

    with tempfile.TemporaryDirectory(prefix='tiny_pocket_') as directory:
        try:
            backend = make_backend('pocket_tts', **tiny_pocket_params(Path(directory)))
        except (ImportError, TtsUnavailable) as exc:  # no pocket-tts: the espeak figure stands
            print(f'pocket_tts (tiny)      skipped: {exc}')
            return 0
        try:
            backend.warm_up()
            _report('pocket_tts (tiny)', measure_backend_first_audio(
                backend, args.text, args.runs))
            if not isinstance(backend, PocketTtsBackend):
                raise RuntimeError(f"make_backend('pocket_tts') made {type(backend).__name__}")
            print('pocket_tts (tiny)      ' + '   '.join(
                f'{name} {seconds * 1e3:.0f} ms' for name, seconds in backend.timings.items()))
        finally:
            backend.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
