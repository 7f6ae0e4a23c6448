"""The catalog: one DuckDB table ``runs`` with a row per run, whose columns grow with what runs record.

A row is a record's :func:`~dclb.store.records.catalog_row`. Columns are added when a new key appears, and a
column keeps one type, widened only when a value needs it along BOOLEAN -> BIGINT -> DOUBLE -> VARCHAR
(integers beyond 64 bits are text); a null never creates a column by itself. Column names are matched
case-insensitively, as DuckDB does. Non-finite floats are stored as null. Rows are written as one Arrow
table per insert, replacing rows of the same run ids.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import duckdb
import pyarrow as pa

from .records import RECORD_COLUMNS

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


_ARROW_TYPES = {
    "BOOLEAN": pa.bool_(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.string(),
}


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
    arrays = {
        name: pa.array(
            [_column_value(row.get(name), columns[name]) for row in rows],
            type=_ARROW_TYPES.get(columns[name], pa.string()),
        )
        for name in present
    }
    incoming = pa.table(arrays)
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
