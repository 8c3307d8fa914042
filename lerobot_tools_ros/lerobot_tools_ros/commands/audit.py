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

"""``lerobot-tools-ros audit export LOG --lerobot OUT.jsonl``: calls as LeRobot language atoms."""

import argparse
import contextlib
import os
import pathlib
import sys
import tempfile

from lerobot_tools_ros.dispatch import lerobot_atoms, read_audit_log
from lerobot_tools_ros.untrusted import json_line, log_text

HELP = "Work with the dispatcher's audit log (export calls as LeRobot language_events atoms)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest='audit_action', metavar='ACTION')
    actions.required = True
    export = actions.add_parser(
        'export', help='Write the logged calls as LeRobot language atoms, one JSON line each.')
    export.add_argument('log', type=pathlib.Path, help="the dispatcher's audit_log file")
    export.add_argument('--lerobot', type=pathlib.Path, required=True, metavar='OUT.jsonl',
                        help='output file: one atom per generation, with its timestamp')
    export.add_argument('--include-failed', action='store_true',
                        help='also export calls whose result was an error (default: only '
                             'calls that succeeded)')
    export.add_argument('--include-callers', action='store_true',
                        help='also export calls other nodes submitted to ~/call (default: only '
                             "the policy's own calls, as the dispatcher received them)")


def run(args: argparse.Namespace) -> int:
    bad_lines: list[str] = []
    try:
        atoms = lerobot_atoms(read_audit_log(args.log, bad_lines),
                              include_failed=args.include_failed,
                              include_callers=args.include_callers)
    except FileNotFoundError:
        print(f'error: audit log {args.log} does not exist (set the dispatcher parameter '
              'audit_log to record one)', file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f'error: cannot read audit log {args.log}: {log_text(exc)}', file=sys.stderr)
        return 1
    # A fragment (the dispatcher cuts back a record a full disk cut short, but a pipe or a writer
    # killed mid-line can leave one) costs that record only.
    for problem in bad_lines[:5]:
        print(f'warning: skipped {log_text(problem)}', file=sys.stderr)
    if len(bad_lines) > 5:
        print(f'warning: skipped {len(bad_lines) - 5} more line(s) that are not JSON',
              file=sys.stderr)
    try:
        _write_atoms(args.lerobot, atoms)
    except OSError as exc:
        print(f'error: cannot write {args.lerobot}: {exc.strerror or exc}; nothing was written',
              file=sys.stderr)
        return 1
    out = args.lerobot
    calls = sum(len(atom['tool_calls']) for atom in atoms)
    print(f'wrote {len(atoms)} atom(s) holding {calls} call(s) to {out}')
    return 0


def _write_atoms(out: pathlib.Path, atoms: list[dict]) -> None:
    """Write every atom or nothing: a temporary file in the same directory, then a rename."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f'.{out.name}.', suffix='.tmp')
    try:
        with os.fdopen(handle, 'w', encoding='utf-8') as stream:
            for atom in atoms:
                # Arguments are model text: lone surrogates and U+2028 stay escapes, never raw.
                stream.write(json_line(atom) + '\n')
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
