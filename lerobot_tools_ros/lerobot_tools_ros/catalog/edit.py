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

"""Edit a local dataset's tool catalog (``meta/info.json``): validated, atomic, backed up."""

import contextlib
import json
import os
import pathlib
import shutil
import tempfile

from lerobot_tools_ros.catalog.tool_catalog import (
    CatalogError, DEFAULT_TOOLS, read_info_json, SAMPLE_DATASET, ToolCatalog,
)


def local_info_path(source: str | None) -> pathlib.Path:
    """Return the local info.json that ``source`` names, refusing what must not be edited."""
    if not source:
        raise ValueError('--add-from needs SOURCE: a local dataset root or info.json to edit')
    path = pathlib.Path(source).expanduser()
    if path.is_dir():
        path = path / 'meta' / 'info.json'
    if not path.is_file():
        raise ValueError(f'{path}: not found; --add-from edits a local info.json (a dataset '
                         'root or the file itself), never a hub cache or a download')
    if path.resolve().is_relative_to(SAMPLE_DATASET.resolve()):
        raise ValueError(f'{path} is the sample dataset shipped with this package; copy it '
                         'first and edit the copy')
    return path


def add_tool_schema(info_path: str | os.PathLike, schema: dict) -> pathlib.Path:
    """
    Append ``schema`` to ``info_path``'s tools; return the backup path.

    The entry is validated first and duplicates are refused (``CatalogError``). When the
    dataset declared no tools (so LeRobot used ``DEFAULT_TOOLS``), those defaults are written
    out too, so adding a tool never silently removes ``say``. The original file is copied to
    ``info.json.bak`` and the new one is written atomically (temporary file + ``os.replace``).
    """
    path = pathlib.Path(info_path)
    checked = ToolCatalog.from_tools([schema], source='new entry', strict=True)
    name = checked.names[0]
    info = read_info_json(path)
    if not isinstance(info, dict):
        raise CatalogError(f'{path}: info.json must hold a JSON object')
    tools = info.get('tools')
    if tools is not None and not isinstance(tools, list):
        raise CatalogError(f'{path}: "tools" must be a list, got {type(tools).__name__}')
    tools = list(tools) if tools else json.loads(json.dumps(DEFAULT_TOOLS))
    for index, entry in enumerate(tools):
        function = entry.get('function') if isinstance(entry, dict) else None
        if isinstance(function, dict) and function.get('name') == name:
            raise CatalogError(f'{path}: tools[{index}] is already named {name!r}; refusing to '
                               'add a duplicate')
    tools.append(schema)
    info['tools'] = tools
    backup = path.with_name(path.name + '.bak')
    shutil.copy2(path, backup)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.', suffix='.tmp')
    try:
        with os.fdopen(handle, 'w', encoding='utf-8') as stream:
            json.dump(info, stream, indent=4, ensure_ascii=False)
            stream.write('\n')
            stream.flush()
            os.fsync(stream.fileno())
        shutil.copymode(backup, temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return backup
