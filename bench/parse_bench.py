"""
Benchmark of the tool-call parser: one-shot and streamed, next to json.loads.

    python bench/parse_bench.py              # the table (about 30 s)
    python bench/parse_bench.py --quick      # fewer rounds
    python bench/parse_bench.py --family     # each text with only its own family selected
    python bench/parse_bench.py --fuzz 100000  # never-raises + streaming-equivalence fuzz

For each format: a ~300-byte message with one call is parsed with the sample catalog (as the
dispatcher does). ``json.loads`` of the call's JSON payload (for non-JSON formats: the same call
written as {"name": ..., "arguments": ...}) is timed in the same rounds, interleaved, so machine
noise hits both alike. Times are CPU time of this process (other processes on a shared machine
do not inflate them); medians over rounds; ratio = parse / json.loads. Streaming is timed
feeding the whole text in one delta (overhead of the streaming API) and in 64-, 16- and
4-character deltas (4: about one token each), as a ratio to parse() in the same round.
Next to them, the floor any streaming parser in Python pays for the same deltas (``floor4``,
``floor64``): a ``feed()`` that only tests each delta for a key character of the selected
families (what delivering a call as soon as its markup is complete requires) and appends it,
then one ``parse()`` of the whole text at the end. ``vs f4``/``vs f64`` are the streaming
parser's time over the floor's, both timed in the same round; the targets are at most
2x the floor at 4-character deltas and 1.5x at 64 (median over the families).
After the table (and alone with ``--scaling``): CPU per input character streaming a 32 KB
``say`` argument against a 1 KB one, per family, plain and with ``stream_arguments``, in
4-character deltas (least process CPU of a few runs); the target is at most 1.5x for every
family.
By default every format is detected (``formats='auto'``, as the dispatcher runs); ``--family``
selects only the text's own family, for parse and streaming alike.
"""

import argparse
import json
import os
import pathlib
import random
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'lerobot_tools_ros'))
sys.path.insert(0, str(ROOT / 'lerobot_tools_ros' / 'test'))

from lerobot_tools_ros.catalog import ToolCatalog  # noqa: E402
from lerobot_tools_ros.parsing import parse, StreamingParser  # noqa: E402
from lerobot_tools_ros.parsing.registry import get_plan  # noqa: E402
import parsing_corpus  # noqa: E402
from results import record  # noqa: E402

TOOLS = [
    {'type': 'function', 'function': {
        'name': 'say', 'description': 'Speak a short utterance to the user via the TTS executor.',
        'parameters': {'type': 'object', 'properties': {'text': {'type': 'string'}},
                       'required': ['text']}}},
    {'type': 'function', 'function': {
        'name': 'record_observation', 'description': 'Save the latest camera frame.',
        'parameters': {'type': 'object', 'properties': {'label': {'type': 'string'},
                                                        'camera': {'type': 'string'}},
                       'required': ['label']}}},
]

PROSE = ('I can see the red cube on the left side of the table, next to the blue bin and the '
         'mug. I will pick it up, put it in the bin, then go back home. ')
SPEECH = 'On it: I am picking up the red cube now and will place it in the blue bin next to you.'


def make_cases(speech: str) -> dict[str, tuple[str, str]]:
    """Return format -> (a message with one ``say`` call of ``speech``, its JSON payload)."""
    call = {'name': 'say', 'arguments': {'text': speech}}
    call_json = json.dumps(call)
    payloads = {'openai_json': json.dumps({'role': 'assistant', 'content': PROSE.strip(),
                                           'tool_calls': [{'type': 'function',
                                                           'function': call}]}),
                'llama_json': json.dumps({'name': 'say', 'parameters': {'text': speech}}),
                'mistral': json.dumps([call])}
    payloads['internlm'] = payloads['llama_json']
    return {fmt: (text, payloads.get(fmt, call_json))
            for fmt, text in parsing_corpus.say_calls(speech, PROSE).items()}


# format -> (text, the JSON payload json.loads is timed on)
CASES = make_cases(SPEECH)
# the families that report a say argument while it arrives (a ``partial`` reader)
STREAMED_FAMILIES = ('lerobot_marker', 'openai_json', 'hermes', 'llama_json', 'mistral',
                     'qwen3_coder_xml', 'seed_oss', 'glm45')
JSON_BASED = ('openai_json', 'hermes', 'llama_json', 'mistral', 'fenced_json')
TARGET4 = 2.0  # streaming at 4-character deltas, at most this many times the floor
TARGET64 = 1.5  # and at 64-character deltas


def per_call(fn, number: int) -> float:
    # CPU time of this process: other processes on a shared machine do not inflate it.
    start = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - start) / number


def stream_whole(text: str, catalog, formats) -> None:
    parser = StreamingParser(catalog, formats)
    parser.feed(text)
    parser.finish()


def stream_chunks(chunks: list[str], catalog, formats, kind=StreamingParser) -> None:
    parser = kind(catalog, formats)
    feed = parser.feed
    for chunk in chunks:
        feed(chunk)
    parser.finish()


class AppendOnlyStream:
    """
    The floor of streaming: per delta, one method call, the key-character test and an append.

    Not a parser: it finds the calls with one ``parse()`` at ``finish``. Any streaming parser
    that delivers a call as soon as its markup is complete does at least this per delta, and
    at least one parse's work in total.
    """

    __slots__ = ('_catalog', '_formats', '_held', '_quiet')
    _none: list = []

    def __init__(self, catalog, formats) -> None:
        self._catalog = catalog
        self._formats = formats
        self._held: list[str] = []
        self._quiet = get_plan(catalog, formats).key_chars.isdisjoint

    def feed(self, delta: str) -> list:
        self._held.append(delta)
        return self._none if self._quiet(delta) else self._none

    def finish(self):
        return parse(''.join(self._held), self._catalog, self._formats)


def run_table(rounds: int, number: int, family: bool) -> int:
    catalog = ToolCatalog.from_tools(TOOLS)
    selection = "each text's own family" if family else 'auto'
    print(f'python {sys.version.split()[0]}, {rounds} rounds x {number} calls; medians over '
          f'rounds; catalog: say, record_observation; formats: {selection}\n')
    header = (f'{"format":<16} {"bytes":>5} {"parse us":>9} {"json us":>8} {"ratio":>6} '
              f'{"stream1":>8} {"s64 us":>7} {"stream64":>9} {"floor64":>8} {"vs f64":>7} '
              f'{"stream16":>9} {"s4 us":>7} {"stream4":>8} {"floor4":>7} {"vs f4":>6}  target')
    print(header)
    print('-' * len(header))
    failures = 0
    over4: list[str] = []
    over64: list[str] = []
    summary: dict[int, list[tuple[float, float]]] = {4: [], 64: []}
    to_floor4: list[float] = []
    to_floor64: list[float] = []
    for fmt, (text, payload) in CASES.items():
        formats = fmt if family else 'auto'
        result = parse(text, catalog, formats)
        assert [call.format for call in result.calls] == [fmt], (fmt, result)
        splits = {size: [text[i:i + size] for i in range(0, len(text), size)]
                  for size in (64, 16, 4)}
        parse_times, json_times, ratios = [], [], []
        stream: dict[str | int, list[float]] = {key: [] for key in ('whole', 64, 16, 4)}
        stream_us: dict[int, list[float]] = {64: [], 4: []}
        floor: dict[int, list[float]] = {64: [], 4: []}
        vs_floor: dict[int, list[float]] = {64: [], 4: []}
        for _ in range(rounds):
            parse_time = per_call(lambda: parse(text, catalog, formats), number)
            json_time = per_call(lambda: json.loads(payload), number)
            parse_times.append(parse_time)
            json_times.append(json_time)
            ratios.append(parse_time / json_time)
            whole = per_call(lambda: stream_whole(text, catalog, formats), number)
            stream['whole'].append(whole / parse_time)
            for size, chunks in splits.items():
                took = per_call(lambda: stream_chunks(chunks, catalog, formats),
                                max(1, number // 8))
                stream[size].append(took / parse_time)
                if size in stream_us:
                    stream_us[size].append(took)
                    least = per_call(
                        lambda: stream_chunks(chunks, catalog, formats, AppendOnlyStream),
                        max(1, number // 8))
                    floor[size].append(least / parse_time)
                    vs_floor[size].append(took / least)  # both in the same round
        med_parse = statistics.median(parse_times)
        ratio = statistics.median(ratios)
        flag = ''
        if fmt in JSON_BASED and ratio > 5:
            flag = '  > 5x json.loads'
            failures += 1
        ratio4, ratio64 = statistics.median(vs_floor[4]), statistics.median(vs_floor[64])
        to_floor4.append(ratio4)
        to_floor64.append(ratio64)
        if ratio4 > TARGET4:
            over4.append(fmt)
        if ratio64 > TARGET64:
            over64.append(fmt)
        meets = ratio4 <= TARGET4 and ratio64 <= TARGET64
        record('parse_bench', f'parse.{fmt}', med_parse * 1e6, 'us',
               floor=statistics.median(json_times) * 1e6, floor_label='json.loads of the call',
               target_ratio=5.0 if fmt in JSON_BASED else None,
               target='<= 5x (JSON formats)' if fmt in JSON_BASED else '',
               label=f'parse() of a {len(text.encode())}-byte {fmt} message, median',
               table=fmt in ('hermes', 'openai_json', 'lerobot_marker'))
        for series, values in (('stream64', stream[64]), ('floor64', floor[64]),
                               ('stream4', stream[4]), ('floor4', floor[4])):
            record('parse_bench', f'{series}.{fmt}', statistics.median(values), 'x parse',
                   group=fmt, series=series, table=False,
                   label=f'{fmt}: {series} (streaming time / one-shot parse)')
        summary[4].append((ratio4, statistics.median(floor[4])))
        summary[64].append((ratio64, statistics.median(floor[64])))
        print(f'{fmt:<16} {len(text.encode()):>5} {med_parse * 1e6:>9.2f} '
              f'{statistics.median(json_times) * 1e6:>8.2f} {ratio:>6.1f} '
              f'{statistics.median(stream["whole"]):>7.2f}x '
              f'{statistics.median(stream_us[64]) * 1e6:>7.2f} '
              f'{statistics.median(stream[64]):>8.2f}x {statistics.median(floor[64]):>7.2f}x '
              f'{ratio64:>6.2f}x {statistics.median(stream[16]):>8.2f}x '
              f'{statistics.median(stream_us[4]) * 1e6:>7.2f} '
              f'{statistics.median(stream[4]):>7.2f}x {statistics.median(floor[4]):>6.2f}x '
              f'{ratio4:>5.2f}x  {"met" if meets else "NOT met"}{flag}')
    print('\nratio: parse / json.loads of the call payload, timed back to back in each round '
          '(target <= 5 for the JSON-based formats)')
    print('streamN: StreamingParser time / parse time for the same text, in the same round '
          '(median over rounds); stream1: one feed() of the whole text + finish(); '
          'stream64/16/4: deltas of 64/16/4 characters; s64/s4 us: those streams in µs; '
          'floorN: the append-only floor / parse time; vs fN: StreamingParser / floor, both '
          'timed in the same round (median over rounds)')
    print(f'streaming against the floor: min-median-max {_spread(to_floor4)} at 4 '
          f'characters (target <= {TARGET4}x: {len(CASES) - len(over4)}/{len(CASES)} families; '
          f'over: {", ".join(over4) or "none"}), {_spread(to_floor64)} at 64 (target <= '
          f'{TARGET64}x: {len(CASES) - len(over64)}/{len(CASES)}; over: '
          f'{", ".join(over64) or "none"})')
    for size, target in ((64, TARGET64), (4, TARGET4)):
        ours = statistics.median(ratio for ratio, _ in summary[size])
        record('parse_bench', f'stream{size}.vs_floor', ours, 'x floor',
               target=f'<= {target:g}x the append-only floor',
               label=f'streaming in {size}-character deltas / the append-only floor '
                     f'(feed() + one parse()), median over {len(CASES)} families')
    return 1 if failures else 0


SCALE_SIZES = (1024, 32768)  # bytes of the say argument
SCALE_DELTA = 4  # characters per delta (about one token)
TARGET_SCALE = 1.5  # CPU per input character, 32 KB against 1 KB, at most this


def speech_of(size: int) -> str:
    """Return a speech text of exactly ``size`` characters (ASCII, safe in every format)."""
    unit = SPEECH + ' '
    return (unit * (size // len(unit) + 1))[:size - 1] + '.'


def stream_cost(text: str, catalog, stream_arguments: bool, repeats: int) -> float:
    """Return the least process CPU time of streaming ``text`` in 4-character deltas."""
    chunks = [text[i:i + SCALE_DELTA] for i in range(0, len(text), SCALE_DELTA)]
    best = float('inf')
    for _ in range(repeats):
        start = time.process_time()
        parser = StreamingParser(catalog, 'auto', stream_arguments=stream_arguments)
        feed = parser.feed
        for chunk in chunks:
            feed(chunk)
        parser.finish()
        best = min(best, time.process_time() - start)
    return best


def check_stream(text: str, catalog, fmt: str, speech: str, stream_arguments: bool) -> None:
    """Fail unless streaming ``text`` yields the one call (and its whole argument)."""
    parser = StreamingParser(catalog, 'auto', stream_arguments=stream_arguments)
    events = [event for i in range(0, len(text), SCALE_DELTA)
              for event in parser.feed(text[i:i + SCALE_DELTA])] + parser.finish()
    calls = [event.call for event in events if type(event).__name__ == 'CallEvent']
    assert [(call.format, call.arguments.get('text')) for call in calls] == [(fmt, speech)], (
        fmt, stream_arguments, events[-3:])
    if stream_arguments and fmt in STREAMED_FAMILIES:
        said = ''.join(event.text for event in events
                       if type(event).__name__ == 'ArgumentEvent')
        assert said == speech, (fmt, len(said), len(speech))


def run_scaling(repeats: int) -> int:
    """
    CPU per input character of a 32 KB ``say`` against a 1 KB one, per family and mode.

    Each message is streamed in 4-character deltas with every format detected (as the
    dispatcher runs), without and with ``stream_arguments`` (what ``stream_speech`` uses);
    the least process CPU time of ``repeats`` runs, divided by the message's length. A
    parser whose work per delta grows with what is pending shows a ratio well above 1.
    """
    catalog = ToolCatalog.from_tools(TOOLS)
    small, large = (make_cases(speech_of(size)) for size in SCALE_SIZES)
    print(f'\nscaling: CPU per input character streaming a {SCALE_SIZES[1] // 1024} KB say '
          f'argument / a {SCALE_SIZES[0] // 1024} KB one, {SCALE_DELTA}-character deltas, '
          f'best of {repeats} (target <= {TARGET_SCALE}x)')
    header = (f'{"format":<16} {"plain 1K ns/ch":>15} {"32K ns/ch":>10} {"ratio":>6}   '
              f'{"streamed args 1K":>16} {"32K":>6} {"ratio":>6}')
    print(header)
    print('-' * len(header))
    over: list[str] = []
    ratios: dict[bool, list[float]] = {False: [], True: []}
    worst: dict[bool, tuple[float, str, list[float]]] = {}
    for fmt in CASES:
        row = []
        for streamed in (False, True):
            per_char = []
            for cases, size in ((small, SCALE_SIZES[0]), (large, SCALE_SIZES[1])):
                text = cases[fmt][0]
                check_stream(text, catalog, fmt, speech_of(size), streamed)
                per_char.append(stream_cost(text, catalog, streamed, repeats) / len(text))
            ratio = per_char[1] / per_char[0]
            ratios[streamed].append(ratio)
            mode = 'streamed' if streamed else 'plain'
            if ratio > TARGET_SCALE:
                over.append(f'{fmt} ({mode})')
            record('parse_bench', f'scale.{mode}.{fmt}', per_char[1] * 1e9, 'ns/char',
                   floor=per_char[0] * 1e9, floor_label='the same with a 1 KB say',
                   group=fmt, series=f'{mode} arguments', plot='scaling', table=False,
                   target_ratio=TARGET_SCALE, target=f'<= {TARGET_SCALE:g}x',
                   label=f'{fmt}, {mode} arguments: CPU per character, 32 KB say')
            worst.setdefault(streamed, (0.0, fmt, per_char))
            if ratio > worst[streamed][0]:
                worst[streamed] = (ratio, fmt, per_char)
            row.append((per_char[0] * 1e9, per_char[1] * 1e9, ratio))
        (a0, a1, ar), (b0, b1, br) = row
        print(f'{fmt:<16} {a0:>15.0f} {a1:>10.0f} {ar:>5.2f}x   {b0:>16.0f} {b1:>6.0f} '
              f'{br:>5.2f}x')
    for streamed, values in ratios.items():
        mode = 'streamed' if streamed else 'plain'
        _, fmt, per_char = worst[streamed]
        record('parse_bench', f'scale.{mode}.max', per_char[1] * 1e9, 'ns/char',
               floor=per_char[0] * 1e9, floor_label='the same with a 1 KB say',
               target_ratio=TARGET_SCALE, target=f'<= {TARGET_SCALE:g}x for every family',
               label=f'CPU per character streaming a 32 KB say in 4-character deltas, '
                     f'{mode} arguments: the family that grows most of {len(values)} ({fmt})')
        print(f'{mode} arguments: min-median-max {_spread(values)}')
    print(f'scaling target <= {TARGET_SCALE}x: '
          f'{"met by every family" if not over else "NOT met by " + ", ".join(over)}')
    return 1 if over else 0


def _spread(values: list[float]) -> str:
    ordered = sorted(values)
    return f'{ordered[0]:.2f}-{statistics.median(ordered):.2f}-{ordered[-1]:.2f}x'


def run_fuzz(count: int, seed: int) -> int:
    catalog = ToolCatalog.from_tools(TOOLS)
    started = time.perf_counter()
    checked, mismatches = parsing_corpus.fuzz(count, seed, catalog)
    elapsed = time.perf_counter() - started
    print(f'fuzz: {count} generated inputs parsed without an exception; {checked} of them '
          f'also streamed in random splits; {len(mismatches)} mismatches; {elapsed:.1f} s')
    for text in mismatches[:5]:
        print('  mismatch:', repr(text[:200]))
    return 1 if mismatches else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer rounds')
    parser.add_argument('--family', action='store_true',
                        help="select only each text's own family (default: auto)")
    parser.add_argument('--fuzz', type=int, default=0, metavar='N',
                        help='run the fuzz with N generated inputs instead of the table')
    parser.add_argument('--scaling', action='store_true',
                        help='run only the 1 KB / 32 KB scaling table')
    parser.add_argument('--seed', type=int, default=int(os.environ.get('SEED', '1')))
    args = parser.parse_args()
    if args.fuzz:
        return run_fuzz(args.fuzz, args.seed)
    random.seed(args.seed)
    repeats = 3 if args.quick else 5
    if args.scaling:
        return run_scaling(repeats)
    failed = run_table(10 if args.quick else 40, 200 if args.quick else 400, args.family)
    return run_scaling(repeats) or failed


if __name__ == '__main__':
    sys.exit(main())
