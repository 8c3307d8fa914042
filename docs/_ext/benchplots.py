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
Sphinx extension: the performance table and plots, drawn from ``bench/results.jsonl``.

At every build (``builder-inited``) it reads the results file that ``make bench`` writes
(``bench/results.py``) and writes, under ``docs/_generated/`` (not versioned):

- ``bench_table.md``: one row per figure: value, floor, ratio, target, met;
- ``bench_runs.md``: when each bench ran, on what (Python, rclpy, CPUs, load average);
- ``ratios.png``: each figure's ratio to its floor against its target;
- ``distributions.png``: latency samples of the project path next to its floor's;
- ``streaming.png``: streaming cost per parser family (ratio to one-shot parse) and the floor;
- ``scaling.png``: per family, CPU per character of a 32 KB call against a 1 KB one;
- ``cancel.png``: cancel-to-silence per backend and sink against its bound.

A plot without data says so (``make bench`` fills it) instead of failing the build.
"""

import json
import pathlib
from typing import Any

DOCS_DIR = pathlib.Path(__file__).resolve().parents[1]
RESULTS = DOCS_DIR.parent / 'bench' / 'results.jsonl'
OUT = DOCS_DIR / '_generated'


def load(path: pathlib.Path = RESULTS) -> tuple[list[dict], list[dict]]:
    """Return (figures, run stamps) from the results file (both empty when it is missing)."""
    figures, runs = [], []
    if path.exists():
        for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f'{path}:{number}: not JSON ({exc}); regenerate it with '
                                 '`make bench`') from exc
            (runs if entry.get('metric') == '_run' else figures).append(entry)
    return figures, runs


def _number(value: Any, unit: str = '') -> str:
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, (int, float)):
        text = f'{value:.3g}' if abs(value) < 1000 else f'{value:,.0f}'
        return f'{text} {unit}'.strip()
    return str(value)


def _cell(text: Any) -> str:
    return ' '.join(str(text).split()).replace('|', '\\|')


def table(figures: list[dict]) -> str:
    """Return the Markdown table of every figure."""
    if not figures:
        return ('*No results yet.* Run `make bench` (or one bench, e.g. '
                '`scripts/with_env.sh python bench/parse_bench.py --quick`) and rebuild.\n')
    lines = ['| bench | figure | value | floor (same run) | ratio | target | met |',
             '|---|---|---|---|---|---|---|']
    for entry in figures:
        if entry.get('table') is False:
            continue
        floor = ''
        if entry.get('floor') is not None:
            floor = _number(entry['floor'], entry.get('unit', ''))
            if entry.get('floor_label'):
                floor += f' ({entry["floor_label"]})'
        ratio = f'{entry["ratio"]:.2f}x' if entry.get('ratio') is not None else ''
        met = {True: 'met', False: '**not met**'}.get(entry.get('met'), '')
        lines.append('| ' + ' | '.join(_cell(cell) for cell in (
            f'`{entry["bench"]}`', entry.get('label', entry['metric']),
            _number(entry.get('value'), entry.get('unit', '')), floor, ratio,
            entry.get('target', ''), met)) + ' |')
    return '\n'.join(lines) + '\n'


def runs_table(runs: list[dict]) -> str:
    """Return when and where each bench of the file ran."""
    if not runs:
        return ''
    lines = ['| bench | ran (UTC) | arguments | Python | rclpy | CPUs | load average |',
             '|---|---|---|---|---|---|---|']
    for run in runs:
        lines.append('| ' + ' | '.join(_cell(cell) for cell in (
            f'`{run["bench"]}`', run.get('time', ''),
            ' '.join(run.get('argv', [])) or '(defaults)', run.get('python', ''),
            run.get('rclpy', ''), run.get('cpus', ''), run.get('load', ''))) + ' |')
    return '\n'.join(lines) + '\n'


def _empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, f'no {what} in bench/results.jsonl yet:\nrun `make bench`',
            ha='center', va='center', transform=ax.transAxes)
    ax.set_axis_off()


def plot_ratios(plt, figures: list[dict], path: pathlib.Path) -> None:
    """Draw each figure's ratio to its floor (bar) and its target (tick)."""
    rows = [f for f in figures if f.get('ratio') is not None and f.get('table') is not False]
    fig, ax = plt.subplots(figsize=(9, 0.35 * max(len(rows), 4) + 1.2))
    if not rows:
        _empty(ax, 'ratios')
    else:
        labels = [f'{f["bench"]}: {f.get("label", f["metric"])}'[:70] for f in rows]
        ratios = [f['ratio'] for f in rows]
        colors = ['tab:green' if f.get('met') else 'tab:red' if f.get('met') is False
                  else 'tab:gray' for f in rows]
        y = range(len(rows))
        ax.barh(list(y), ratios, color=colors)
        for index, entry in enumerate(rows):
            if entry.get('target_ratio') is not None:
                ax.plot([entry['target_ratio']] * 2, [index - 0.4, index + 0.4], color='black')
        ax.axvline(1.0, color='gray', linestyle=':')
        ax.set_yticks(list(y), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel('ratio to the same-run floor (tick: target; green: met, red: not met)')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_distributions(plt, figures: list[dict], path: pathlib.Path) -> None:
    """Draw the samples of each latency next to its floor's, as box plots."""
    rows = [f for f in figures if f.get('samples') and f.get('floor_samples')]
    fig, ax = plt.subplots(figsize=(9, 0.7 * max(len(rows), 3) + 1.2))
    if not rows:
        _empty(ax, 'latency samples')
    else:
        data, labels = [], []
        for entry in rows:
            name = f'{entry["bench"]}: {entry.get("label", entry["metric"])}'[:55]
            data += [entry['samples'], entry['floor_samples']]
            labels += [name, f'floor: {entry.get("floor_label", "")}'[:55]]
        ax.boxplot(data, orientation='horizontal', tick_labels=labels, showfliers=False)
        ax.set_xscale('log')
        from matplotlib.ticker import ScalarFormatter
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.invert_yaxis()
        ax.tick_params(axis='y', labelsize=7)
        unit = rows[0].get('unit', '')
        ax.set_xlabel(f'latency ({unit}); boxes: quartiles, whiskers: 1.5 IQR')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_streaming(plt, figures: list[dict], path: pathlib.Path) -> None:
    """Draw the streaming cost per family: ours and the floor, at each delta size."""
    rows = [f for f in figures if f['bench'] == 'parse_bench' and f.get('group')
            and f.get('series') and f.get('plot', 'streaming') == 'streaming']
    fig, ax = plt.subplots(figsize=(10, 4.5))
    if not rows:
        _empty(ax, 'streaming figures')
    else:
        families = list(dict.fromkeys(f['group'] for f in rows))
        series = list(dict.fromkeys(f['series'] for f in rows))
        width = 0.8 / len(series)
        value = {(f['group'], f['series']): f['value'] for f in rows}
        for index, name in enumerate(series):
            xs = [i + index * width for i in range(len(families))]
            ax.bar(xs, [value.get((family, name), 0) for family in families], width,
                   label=name)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(families))], families,
                      rotation=60, ha='right', fontsize=7)
        ax.set_ylabel('time / one-shot parse of the same text')
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_scaling(plt, figures: list[dict], path: pathlib.Path) -> None:
    """Draw, per parser family, CPU per character of a 32 KB call over a 1 KB one."""
    rows = [f for f in figures if f.get('plot') == 'scaling' and f.get('ratio') is not None]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    if not rows:
        _empty(ax, 'scaling figures')
    else:
        families = list(dict.fromkeys(f['group'] for f in rows))
        series = list(dict.fromkeys(f['series'] for f in rows))
        width = 0.8 / len(series)
        value = {(f['group'], f['series']): f['ratio'] for f in rows}
        for index, name in enumerate(series):
            xs = [i + index * width for i in range(len(families))]
            ax.bar(xs, [value.get((family, name), 0) for family in families], width,
                   label=name)
        targets = {f['target_ratio'] for f in rows if f.get('target_ratio') is not None}
        for target in targets:
            ax.axhline(target, color='black', linestyle='--', linewidth=1)
        ax.axhline(1.0, color='gray', linestyle=':')
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(families))], families,
                      rotation=60, ha='right', fontsize=7)
        ax.set_ylabel('CPU per character: 32 KB say / 1 KB say')
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_cancel(plt, figures: list[dict], path: pathlib.Path) -> None:
    """Draw cancel-to-silence (last sample to the sink) per backend and sink."""
    rows = [f for f in figures if f['bench'] == 'cancel_bench' and f.get('group')]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    if not rows:
        _empty(ax, 'cancel figures')
    else:
        groups = list(dict.fromkeys(f['group'] for f in rows))
        series = list(dict.fromkeys(f.get('series', '') for f in rows))
        width = 0.8 / len(series)
        value = {(f['group'], f.get('series', '')): f['value'] for f in rows}
        for index, name in enumerate(series):
            xs = [i + index * width for i in range(len(groups))]
            ax.bar(xs, [value.get((group, name), 0) for group in groups], width, label=name)
        bound = next((f.get('bound') for f in rows if f.get('bound')), None)
        if bound:
            ax.axhline(bound, color='black', linestyle='--', label=f'bound {bound:g} ms')
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], groups, fontsize=8)
        ax.set_ylabel('cancel -> silence (ms)')
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_fleet(plt, figures: list[dict], path: pathlib.Path) -> None:
    """Draw the fleet: scaling ratios per robot-host count, and cross-host vs same-host."""
    rows = [f for f in figures if f['bench'] == 'fleet_bench']
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    scaled = [f for f in rows if f.get('robots') and f.get('ratio') is not None]
    if not scaled:
        _empty(left, 'fleet scaling figures')
    else:
        for group in dict.fromkeys(f['group'] for f in scaled):
            points = sorted((f['robots'], f['ratio']) for f in scaled if f['group'] == group)
            left.plot([n for n, _ in points], [r for _, r in points], marker='o', label=group)
        left.set_xscale('log', base=2)
        left.set_xticks([1, 2, 4, 8], ['1', '2', '4', '8'])
        left.set_xlabel('robot hosts')
        left.set_ylabel('ratio to one robot host')
        left.legend(fontsize=7)
    crossing = [f for f in rows if f.get('group') == 'cross host' and f.get('floor')]
    if not crossing:
        _empty(right, 'cross-host figures')
    else:
        labels = [f['series'] for f in crossing]
        xs = range(len(crossing))
        right.bar([x - 0.2 for x in xs], [f['floor'] for f in crossing], 0.4,
                  label='same host')
        right.bar([x + 0.2 for x in xs], [f['value'] for f in crossing], 0.4,
                  label='across hosts')
        right.set_xticks(list(xs), labels)
        right.set_ylabel('~/call echo round trip (ms)')
        right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_fleet_mcp(plt, figures: list[dict], path: pathlib.Path) -> None:
    """Draw the fleet MCP endpoint: each figure's ratio to one robot, per robot-host count."""
    rows = [f for f in figures if f['bench'] == 'fleet_mcp' and f.get('robots')
            and f.get('ratio') is not None]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if not rows:
        _empty(ax, 'fleet MCP endpoint figures')
    else:
        for group in dict.fromkeys(f['group'] for f in rows):
            points = sorted((f['robots'], f['ratio']) for f in rows if f['group'] == group)
            ax.plot([n for n, _ in points], [r for _, r in points], marker='o', label=group)
        ax.set_xscale('log', base=2)
        ax.set_xticks([1, 2, 4, 8], ['1', '2', '4', '8'])
        ax.set_xlabel('robot hosts behind one MCP endpoint')
        ax.set_ylabel('ratio to one robot host')
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_all(out: pathlib.Path = OUT, results: pathlib.Path = RESULTS) -> list[pathlib.Path]:
    """Write the table, the run list and every plot into ``out``; return the files."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    figures, runs = load(results)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (('bench_table.md', table(figures)), ('bench_runs.md', runs_table(runs))):
        (out / name).write_text(text or '*No run recorded yet.*\n', encoding='utf-8')
        written.append(out / name)
    for name, draw in (('ratios.png', plot_ratios), ('distributions.png', plot_distributions),
                       ('streaming.png', plot_streaming), ('scaling.png', plot_scaling),
                       ('cancel.png', plot_cancel), ('fleet.png', plot_fleet),
                       ('fleet_mcp.png', plot_fleet_mcp)):
        draw(plt, figures, out / name)
        written.append(out / name)
    return written


def _on_builder_inited(app) -> None:
    write_all()


def setup(app) -> dict:
    """Register the build step with Sphinx."""
    app.connect('builder-inited', _on_builder_inited)
    return {'version': '1', 'parallel_read_safe': True, 'parallel_write_safe': True}
