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
Add rows to one episode's `language_events` cells in a data file; leave every other cell alone.

The cells of other frames and episodes are copied as Arrow values, never decoded and encoded
again, so whatever they hold survives unchanged: an OpenAI `"id"` on a tool call, arguments
whose value is null, styles this package does not know. A frame that gets rows keeps its own
rows first, in stored order, and then the new ones in time order.

A parquet column has one type. When the file already has `language_events`, new rows are
written in that type: upstream's declared type (tool calls as JSON text) or the struct type its
annotation writer lets pyarrow infer. If a new row does not fit an inferred struct (a tool whose
arguments no stored call has), the column is rewritten in upstream's declared type, every cell
keeping its value (struct tool calls become their JSON text), and the caller is told so. A new
column, and `language_persistent` when missing, get upstream's declared type.
"""

from dataclasses import dataclass, field
import json
import pathlib
from typing import Any

from . import language
from .atomic import replace_file
from .episodes import check_language_type, DatasetError


@dataclass
class FileWrite:
    """What adding rows to one data file did."""

    added: int = 0
    written: bool = False  # False: nothing to add, the file was left as it was
    notes: list[str] = field(default_factory=list)


def declared_types() -> dict[str, Any]:
    """Upstream's declared Arrow types of the two columns (tool calls as JSON values)."""
    import pyarrow as pa

    json_type = pa.json_() if hasattr(pa, 'json_') else pa.string()

    def rows(with_timestamp: bool) -> Any:
        fields = [pa.field('role', pa.string(), nullable=False),
                  pa.field('content', pa.string()), pa.field('style', pa.string())]
        if with_timestamp:
            fields.append(pa.field('timestamp', pa.float32(), nullable=False))
        fields += [pa.field('camera', pa.string()),
                   pa.field('tool_calls', pa.list_(json_type))]
        return pa.list_(pa.struct(fields))

    return {language.LANGUAGE_EVENTS: rows(False), language.LANGUAGE_PERSISTENT: rows(True)}


def storage_type(data_type: Any) -> Any:
    """`data_type` with every extension type (Arrow JSON) replaced by its storage type."""
    import pyarrow as pa

    if isinstance(data_type, pa.BaseExtensionType):
        return storage_type(data_type.storage_type)
    if pa.types.is_struct(data_type):
        return pa.struct([pa.field(f.name, storage_type(f.type), f.nullable, f.metadata)
                          for f in data_type])
    for is_kind, make in ((pa.types.is_list, pa.list_), (pa.types.is_large_list, pa.large_list)):
        if is_kind(data_type):
            item = data_type.value_field
            return make(pa.field(item.name, storage_type(item.type), item.nullable))
    if pa.types.is_fixed_size_list(data_type):
        item = data_type.value_field
        return pa.list_(pa.field(item.name, storage_type(item.type), item.nullable),
                        data_type.list_size)
    return data_type


def _calls_are_text(column_storage: Any) -> bool:
    """Whether the column keeps each tool call as JSON text (else as a struct)."""
    import pyarrow as pa

    row_type = column_storage.value_type
    index = row_type.get_field_index('tool_calls') if pa.types.is_struct(row_type) else -1
    if index < 0:
        return True
    calls = row_type.field(index).type
    if not (pa.types.is_list(calls) or pa.types.is_large_list(calls)):
        return True
    return pa.types.is_string(calls.value_type) or pa.types.is_large_string(calls.value_type)


def _encoded(row: dict, calls_as_text: bool) -> dict:
    """Return a new row as the column stores it: tool calls as JSON text or plain dicts."""
    if row.get('tool_calls') is None or not calls_as_text:
        return row
    return {**row, 'tool_calls': [json.dumps(call, ensure_ascii=False)
                                  for call in row['tool_calls']]}


def _without_nulls(value: Any) -> Any:
    """Drop null members (an inferred struct adds one for every key another row has)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _same(first: Any, second: Any) -> bool:
    """Equal up to null struct members, types included (1 is not 1.0, nor true)."""
    return json.dumps(_without_nulls(first), sort_keys=True) == \
        json.dumps(_without_nulls(second), sort_keys=True)


def row_key(row: Any) -> str:
    """Return what makes two stored rows the same event (a rerun adds nothing twice)."""
    try:
        calls = language.tool_calls(row) if isinstance(row, dict) else None
    except language.LanguageRowError:
        calls = None
    if calls is None:
        return json.dumps(_without_nulls(row), sort_keys=True, default=str)
    return json.dumps([row.get('role'), row.get('content'), row.get('style'),
                       row.get('camera'), calls], sort_keys=True, default=str)


def _declared_cell(cell: list | None, where: str) -> list:
    """Return a stored cell in upstream's declared layout, values kept (calls as JSON text)."""
    out = []
    for number, row in enumerate(cell or []):
        extra = sorted(set(row) - set(language.EVENT_ROW_FIELDS))
        if extra:
            raise DatasetError(f'{where}[{number}] has field(s) {", ".join(extra)} that '
                               "upstream's declared language_events type has no place for; "
                               'not rewriting the column (nothing was written)')
        calls = row.get('tool_calls')
        out.append({**{name: row.get(name) for name in language.EVENT_ROW_FIELDS},
                    'tool_calls': None if calls is None else [
                        call if isinstance(call, str) else json.dumps(call, ensure_ascii=False)
                        for call in calls]})
    return out


def add_event_rows(source: pathlib.Path, episode: int, rows_by_frame: dict[int, list[dict]],
                   target: pathlib.Path) -> FileWrite:
    """
    Write `source` to `target` with `rows_by_frame` added to `episode`'s frames.

    Rows already on their frame are not added again. When nothing is added and both language
    columns exist, nothing is written (`target` keeps whatever it was).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    result = FileWrite()
    try:
        table = pq.read_table(source)
    except (OSError, pa.ArrowException) as exc:
        raise DatasetError(f'{source}: cannot read: {exc}') from None
    declared = declared_types()
    events_name = language.LANGUAGE_EVENTS
    has_events = events_name in table.column_names
    column_type = table.schema.field(events_name).type if has_events else declared[events_name]
    if has_events:
        check_language_type(column_type, f'{source.name} column {events_name}')
    column_storage = storage_type(column_type)
    calls_as_text = _calls_are_text(column_storage)
    stored = table.column(events_name).combine_chunks().cast(column_storage) if has_events \
        else None

    episodes = table.column('episode_index').to_pylist()
    frames = table.column('frame_index').to_pylist()
    changed: dict[int, list] = {}
    for index, (row_episode, frame) in enumerate(zip(episodes, frames)):
        new_rows = rows_by_frame.get(frame) if row_episode == episode else None
        if not new_rows:
            continue
        cell = list((stored[index].as_py() if stored is not None else None) or [])
        keys = {row_key(row) for row in cell}
        grown = False
        for row in new_rows:
            key = row_key(row)
            if key in keys:
                continue  # running add-events twice adds nothing the second time
            keys.add(key)
            cell.append(_encoded(row, calls_as_text))
            result.added += 1
            grown = True
        if grown:
            changed[index] = cell
    has_persistent = language.LANGUAGE_PERSISTENT in table.column_names
    if not changed and has_events and has_persistent:
        return result

    events = _events_column(stored, column_type, column_storage, changed, table.num_rows,
                            declared[events_name], source, result)
    schema_changed = not has_events or not events.type.equals(column_type)
    if has_events:
        table = table.set_column(table.column_names.index(events_name), events_name, events)
    else:
        table = table.append_column(events_name, events)
    if not has_persistent:
        persistent_type = declared[language.LANGUAGE_PERSISTENT]
        empty = pa.array([[]] * table.num_rows, type=storage_type(persistent_type))
        table = table.append_column(language.LANGUAGE_PERSISTENT, empty.cast(persistent_type))
        schema_changed = True
    if schema_changed:
        # A `huggingface` features entry written by `datasets` describes the old columns;
        # readers get the features from info.json (LeRobot) or from the Arrow schema without it.
        metadata = dict(table.schema.metadata or {})
        metadata.pop(b'huggingface', None)
        table = table.replace_schema_metadata(metadata or None)
    replace_file(target, lambda path: _write_one_row_group_per_episode(table, episodes, path))
    result.written = True
    return result


def _events_column(stored: Any, column_type: Any, column_storage: Any, changed: dict[int, list],
                   rows: int, declared_type: Any, source: pathlib.Path, result: FileWrite) -> Any:
    """Return the new column: changed cells in the column's type if they fit, else declared."""
    import pyarrow as pa

    if stored is None:  # a new column: upstream's declared type, empty where nothing was added
        cells = [changed.get(index, []) for index in range(rows)]
        return pa.array(cells, type=column_storage).cast(column_type)
    order = sorted(changed)
    cells = [changed[index] for index in order]
    try:
        fresh = pa.array(cells, type=column_storage)
        fits = _same(fresh.to_pylist(), cells)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        fits = False
    if fits:
        position = {index: rows + number for number, index in enumerate(order)}
        combined = pa.concat_arrays([stored, fresh])
        taken = combined.take(pa.array([position.get(index, index) for index in range(rows)]))
        return taken.cast(column_type)
    # The new rows do not fit the type the file's column was inferred with.
    old = stored.to_pylist()
    declared_cells = []
    for index in range(rows):
        where = f'{source.name} row {index} {language.LANGUAGE_EVENTS}'
        declared_cells.append(_declared_cell(changed.get(index, old[index]), where))
    result.notes.append(
        f'{source.name}: {language.LANGUAGE_EVENTS} was stored as {column_type}, which cannot '
        "hold the new rows; the column is now in upstream's declared type (tool calls as JSON "
        'text), every stored value kept')
    return pa.array(declared_cells, type=storage_type(declared_type)).cast(declared_type)


def _write_one_row_group_per_episode(table: Any, episodes: list[int],
                                     path: pathlib.Path) -> None:
    """One row group per episode, as LeRobot writes its data files."""
    import pyarrow.parquet as pq

    with pq.ParquetWriter(str(path), table.schema, compression='snappy',
                          use_dictionary=True) as writer:
        start = 0
        for index in range(1, len(episodes) + 1):
            if index == len(episodes) or episodes[index] != episodes[start]:
                writer.write_table(table.slice(start, index - start))
                start = index
