"""The catalog: one DuckDB table ``runs`` with a row per run, whose columns grow with what runs record.

A row is a record's :func:`~dclb.store.records.catalog_row`. Columns are added when a new key appears, and a
column keeps one type, widened only when a value needs it along BOOLEAN -> BIGINT -> DOUBLE -> VARCHAR
(integers beyond 64 bits are text); a null never creates a column by itself. Column names are matched
case-insensitively, as DuckDB does. Non-finite floats are stored as null. Rows are written as one Arrow
table per insert, replacing rows of the same run ids. Its columns are built from their buffers
(:func:`arrow_column`), not with ``pyarrow.array``, which imports pandas (to ask whether a list is a pandas
object): storing a run never loads pandas (issue #30).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .records import RECORD_COLUMNS

if TYPE_CHECKING:  # the connection is opened by dclb.store.store, which imports DuckDB then
    import duckdb

CATALOG_FILE = "catalog.duckdb"
LOCK_FILE = "catalog.lock"
_TYPE_ORDER = ("BOOLEAN", "BIGINT", "DOUBLE", "VARCHAR")
_INT64 = (-(2**63), 2**63 - 1)


def sql_name(name: str) -> str:
    """A column name quoted for SQL."""
    return '"' + name.replace('"', '""') + '"'


def sql_text(text: str) -> str:
    """A text quoted as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _value_type(value: Any) -> str | None:
    """Catalog column type a value needs; None for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT" if _INT64[0] <= value <= _INT64[1] else "VARCHAR"
    if isinstance(value, float):
        return "DOUBLE"
    return "VARCHAR"


def _wider_type(first: str | None, second: str | None) -> str | None:
    if first is None or second is None:
        return first or second
    rank = {name: index for index, name in enumerate(_TYPE_ORDER)}
    return max(first, second, key=lambda name: rank.get(name, len(_TYPE_ORDER)))


def _column_value(value: Any, column_type: str) -> Any:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    if column_type == "VARCHAR":
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if column_type == "DOUBLE":
        return float(value)
    if column_type == "BIGINT":
        return int(value)
    return bool(value)


def arrow_column(values: list[Any], column_type: str) -> pa.Array:
    """Catalog values of one column (None, or each a value of the column's type, as :func:`_column_value`
    gives them) as the Arrow array ``pyarrow.array(values, type=...)`` would build, made from its buffers."""
    count = len(values)
    valid = np.fromiter((value is not None for value in values), dtype=bool, count=count)
    null_count = count - int(valid.sum())
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if null_count else None
    if column_type == "BOOLEAN":
        flags = np.fromiter((value is True for value in values), dtype=bool, count=count)
        return pa.Array.from_buffers(pa.bool_(), count, [validity, pa.py_buffer(np.packbits(flags, bitorder="little"))], null_count)
    if column_type in ("BIGINT", "DOUBLE"):
        dtype, arrow_type = (np.int64, pa.int64()) if column_type == "BIGINT" else (np.float64, pa.float64())
        numbers = np.fromiter((0 if value is None else value for value in values), dtype=dtype, count=count)
        return pa.Array.from_buffers(arrow_type, count, [validity, pa.py_buffer(numbers)], null_count)
    texts = [b"" if value is None else str(value).encode("utf-8") for value in values]
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum([len(text) for text in texts], out=offsets[1:])
    narrow = offsets[-1] < 2**31  # the string type's 32-bit offsets hold it (always, in practice)
    offsets_buffer = pa.py_buffer(offsets.astype(np.int32) if narrow else offsets)
    return pa.Array.from_buffers(pa.string() if narrow else pa.large_string(), count, [validity, offsets_buffer, pa.py_buffer(b"".join(texts))], null_count)


def _catalog_columns(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() "
        "WHERE schema_name = 'main' AND table_name = 'runs' ORDER BY column_index"
    ).fetchall()
    return dict(rows)


def create_catalog_table(con: duckdb.DuckDBPyConnection) -> None:
    columns = [f"{sql_name(name)} {kind}" for name, kind in RECORD_COLUMNS.items()]
    columns[0] += " PRIMARY KEY"
    con.execute(f"CREATE TABLE IF NOT EXISTS runs ({', '.join(columns)})")


def _match_existing_names(
    rows: list[dict[str, Any]], existing: Iterable[str]
) -> list[dict[str, Any]]:
    """Rename row keys to the spelling of a column that differs only in case."""
    spelling = {name.lower(): name for name in existing}
    matched = []
    for row in rows:
        renamed: dict[str, Any] = {}
        for key, value in row.items():
            name = spelling.setdefault(key.lower(), key)
            if renamed.get(name) is None:
                renamed[name] = value
        matched.append(renamed)
    return matched


def _fit_columns(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> dict[str, str]:
    """Add or widen catalog columns so every value fits; return all types."""
    columns = _catalog_columns(con)
    needed: dict[str, str | None] = {}
    for row in rows:
        for name, value in row.items():
            needed[name] = _wider_type(needed.get(name), _value_type(value))
    for name, kind in needed.items():
        if kind is None:
            continue
        current = columns.get(name)
        if current is None:
            con.execute(f"ALTER TABLE runs ADD COLUMN {sql_name(name)} {kind}")
            columns[name] = kind
        elif _wider_type(current, kind) != current:
            con.execute(f"ALTER TABLE runs ALTER COLUMN {sql_name(name)} TYPE {kind}")
            columns[name] = kind
    return columns


def insert_rows(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    """Insert rows (replacing equal run ids), evolving the schema first."""
    rows = _match_existing_names(rows, _catalog_columns(con))
    columns = _fit_columns(con, rows)
    present = [name for name in columns if any(row.get(name) is not None for row in rows)]
    arrays = [arrow_column([_column_value(row.get(name), columns[name]) for row in rows], columns[name]) for name in present]
    incoming = pa.Table.from_arrays(arrays, names=present)
    # Two statements, not one transaction: DuckDB < 1.2 rejects re-inserting a
    # deleted primary key inside the same transaction.  The file lock keeps
    # other processes from seeing the gap; rebuild_catalog repairs a crash.
    ids = [row["run_id"] for row in rows]
    con.execute("DELETE FROM runs WHERE run_id IN (SELECT UNNEST(?))", [ids])
    con.register("incoming_rows", incoming)
    try:
        con.execute("INSERT INTO runs BY NAME SELECT * FROM incoming_rows")
    finally:
        con.unregister("incoming_rows")
