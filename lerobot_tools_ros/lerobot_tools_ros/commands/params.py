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
``lerobot-tools-ros params``: the files generated from the parameter declarations.

``--yaml`` prints the packaged parameters file (``config/lerobot_tools.yaml``), ``--reference``
the parameter reference (Markdown); ``--check FILE`` compares FILE with what would be generated
and exits 1 naming the first difference (the package's tests do the same for its own file).
"""

import argparse
import difflib
import pathlib
import sys

HELP = 'print the parameters file or reference generated from the parameter declarations'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument('--yaml', action='store_true',
                      help='the packaged parameters file (the default)')
    what.add_argument('--reference', action='store_true', help='the reference page (Markdown)')
    parser.add_argument('--output', '-o', type=pathlib.Path, metavar='FILE',
                        help='write to FILE instead of standard output')
    parser.add_argument('--check', type=pathlib.Path, metavar='FILE',
                        help='exit 1 when FILE differs from what would be generated')


def run(args: argparse.Namespace) -> int:
    from lerobot_tools_ros.parameters import generate

    text = generate.reference() if args.reference else generate.yaml_file()
    if args.check is not None:
        try:
            current = args.check.read_text()
        except OSError as exc:
            print(f'error: cannot read {args.check}: {exc}', file=sys.stderr)
            return 1
        if current == text:
            print(f'{args.check}: up to date')
            return 0
        diff = difflib.unified_diff(current.splitlines(), text.splitlines(), str(args.check),
                                    'generated', lineterm='', n=1)
        print(f'{args.check} is stale; regenerate it with `lerobot-tools-ros params'
              f"{' --reference' if args.reference else ' --yaml'} -o {args.check}`:",
              file=sys.stderr)
        print('\n'.join(list(diff)[:40]), file=sys.stderr)
        return 1
    if args.output is not None:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0
