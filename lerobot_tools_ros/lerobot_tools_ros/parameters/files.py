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
Parameters files named on a command line, checked before rcl reads them (pure: no rclpy).

rcl's own error for a file that is not YAML is an exception raised three times over with its
tracebacks; a node that checks the file first says in one line which file and what is wrong
(`nodes.runner` then exits 78, the configuration-error status).
"""

import os

from lerobot_tools_ros.errors import ConfigurationError

__all__ = ['check_params_files', 'params_files']

_FILE_FLAGS = ('--params-file',)
_ROS_ARGS = '--ros-args'


def params_files(args: list[str]) -> list[str]:
    """Return the files given as `--params-file FILE` inside `--ros-args ... [--]` sections."""
    found = []
    inside = False
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == _ROS_ARGS:
            inside = True
        elif arg == '--':
            inside = False
        elif inside and arg in _FILE_FLAGS and index + 1 < len(args):
            found.append(args[index + 1])
            index += 1
        index += 1
    return found


def _one_line(text: str) -> str:
    return ' '.join(str(text).split())


def check_params_file(path: str) -> None:
    """Raise ConfigurationError naming `path` when it is missing, unreadable or not YAML."""
    import yaml

    if not os.path.isfile(path):
        raise ConfigurationError(f'parameters file {path}: no such file')
    try:
        with open(path, encoding='utf-8') as stream:
            data = yaml.safe_load(stream)
    except OSError as exc:
        raise ConfigurationError(f'parameters file {path}: cannot be read '
                                 f'({exc.strerror or exc})') from None
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f'parameters file {path}: not UTF-8 text ({exc.reason} at '
                                 f'byte {exc.start})') from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' (line {mark.line + 1}, column {mark.column + 1})' if mark is not None else ''
        problem = getattr(exc, 'problem', None) or exc
        context = getattr(exc, 'context', None)
        what = f'{context}: {problem}' if context else str(problem)
        raise ConfigurationError(f'parameters file {path} is not valid YAML{where}: '
                                 f'{_one_line(what)}') from None
    if data is not None and not isinstance(data, dict):
        raise ConfigurationError(
            f'parameters file {path}: must map node names to {{ros__parameters: ...}}, got '
            f'{type(data).__name__}')


def check_params_files(args: list[str]) -> None:
    """Check every parameters file named in `args`; raise ConfigurationError for the first bad."""
    for path in params_files(args):
        check_params_file(path)
