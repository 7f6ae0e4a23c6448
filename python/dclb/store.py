"""Result store: one folder per run plus a DuckDB catalog that indexes them.

How it works
------------
A store is a directory ``DIR``::

    DIR/runs/<run_id>/flows.parquet    per-flow table
    DIR/runs/<run_id>/ports.parquet    per-port table
    DIR/runs/<run_id>/switches.parquet per-switch table
    DIR/runs/<run_id>/samples.parquet  optional time series (any schema)
    DIR/runs/<run_id>/run.json         the run record
    DIR/runs/<run_id>/COMPLETE         written last: the manifest; marks the folder valid
    DIR/catalog.duckdb                 table ``runs``, one row per run
    DIR/catalog.lock                   file lock serialising catalog access
    DIR/claims/<run_id>.json           who is running a point now (see dclb.claims)

**The run folders are the truth; the catalog is derived.**  A folder counts as
a finished run only if it holds ``COMPLETE``.  A failed run is a folder with a
``run.json`` whose ``status`` is ``"failed"`` (and whose ``error`` says why)
and no ``COMPLETE``.  :meth:`Store.rebuild_catalog` recreates the catalog
from those two kinds of folder at any time.  :meth:`Store.runs` and the
``runs`` view of :meth:`Store.sql` leave out catalog rows that the folders do
not back (a completed run whose folder or marker is gone), and
:meth:`Store.catalog_drift` says where the two disagree; ``dclb store repair``
(:mod:`dclb.storecheck`) reconciles them.

**Run ids.**  ``<name>-<12 hex digits>``: the scenario name made safe for a
folder name, then the start of :func:`scenario_hash`, the SHA-256 of the
resolved scenario (every default filled in, seed included) without the
cosmetic fields ``name`` and ``description``.  Everything else counts, since
it changes the simulation or what is stored of it (``run.short_threshold_bytes``
changes the summary; ``run.sampler`` the samples).  The same scenario therefore
always maps to the same folder, and a sweep finds the runs it has done.  The
name stays as a readable prefix: two scenarios that differ only in name get
two ids with the same digits, and each is run.  Before this rule the hash
covered the name and description too (:func:`legacy_run_ids`); a sweep moves
such a run to its current id when it needs it, and ``dclb store repair`` moves
them all.

**Verification.**  ``COMPLETE`` holds a manifest: for every file of the folder
its size and SHA-256, and for every table its row count, recorded as it was
written.  :meth:`Store.verify` checks a folder against it (sizes, each Parquet
footer with its row count, a readable completed ``run.json``; with ``deep``
the checksums too).  A sweep re-runs any point whose folder does not verify.
Folders written before manifests (``COMPLETE`` holding only the run id) stay
valid; they are checked by what can be read without a manifest.

**Crash safety.**  A run is first written into a hidden sibling folder
``runs/.tmp-<run_id>-<random>``; every file in it goes to a temporary name and
is moved into place with :func:`os.replace`, ``COMPLETE`` last.  The folder is
then published by renaming: an existing ``runs/<run_id>`` is first renamed
away to ``runs/.old-<run_id>-<random>``, the new folder is renamed in, and the
old one deleted.  Killing the process at any instant therefore leaves
``runs/<run_id>`` either absent, or a complete old run, or a complete new run,
never a folder with ``COMPLETE`` but missing or mixed files.  Hidden (dot)
folders are never read; a kill may leave one behind, which ``dclb store
repair`` deletes.  A stop signal (Ctrl-C, SIGTERM) waits until a folder is
published or its staging copy removed (:func:`dclb.interrupts.deferred`), as
it does for a catalog write.  (This guards against a killed process, not
against power loss: nothing is fsync'ed.)  Two processes writing one run id
at once still leave one whole run; sweeps avoid the wasted work by claiming
points first (:mod:`dclb.claims`).

**The run record** (:class:`RunRecord`) is the one definition of what a
run leaves behind: ``dclb run`` and sweep workers both build one, it is
written as ``run.json`` and it is what a catalog row is made of.

**The catalog** ``runs`` table has the record's scalar fields ``run_id``
(primary key), ``name``, ``status``, ``seed``, ``scenario_hash``,
``dclb_version``, ``started_at``, ``finished_at`` (ISO-8601 text),
``wall_s`` and ``error``, then every scenario field flattened to dotted
names (``"lb.scheme"``,
``"traffic.load"``; lists and empty dicts as JSON text), then every summary
metric under its own name (``"short_afct_us"``).  A scenario list of at most
``MAX_FLATTENED_LIST`` elements is also spread over one column per element,
named by its index as ``--set`` and ``--grid`` name it
(``"topology.links.0.rate_gbps"``, ``"traffic.senders.1"``), so a sweep over
a list element can be selected, plotted and titled by that column; the
whole list stays in its own column as well, which tells runs with and
without the list apart.  A scenario or summary key
that would clash with an earlier column is prefixed with ``scenario.`` or
``summary.`` (for example the summary's ``wall_s`` becomes
``"summary.wall_s"``).  Columns are added when a new key appears.  A column
keeps one type, widened only when a value needs it along
BOOLEAN -> BIGINT -> DOUBLE -> VARCHAR (integers beyond 64 bits are text);
a null never creates a column by itself, except a summary metric's: a
missing measurement (NaN, such as ``deadline_miss_rate`` without deadline
flows) is a float, so it creates a DOUBLE column and every metric a run
prints is a column of the catalog.  (After a fall-back to text,
earlier numbers keep DuckDB's spelling, e.g. ``1.0``, which a rebuild may
spell ``1``.)  Column names are matched
case-insensitively, as DuckDB does.  Non-finite floats (NaN, inf) are stored
as null in both ``run.json`` and the catalog, so a rebuilt catalog equals the
incrementally written one.

**Concurrency.**  Every catalog access (write, read and query) opens DuckDB,
works and closes it while holding a :class:`filelock.FileLock` on
``DIR/catalog.lock``, so several processes can share one store (while one
process has a DuckDB file open for writing, another cannot open it at all,
not even to read: it gets an error instead of waiting).  Run folders need no lock: each is published by a
single rename.

**Queries.**  :meth:`Store.sql` runs SQL in a fresh in-memory DuckDB that
attaches the catalog read-only and defines the views ``runs`` (the catalog),
and ``flows``, ``ports``, ``switches``, ``samples`` over the Parquet files of
the complete runs, each with a leading ``run_id`` column taken from the
folder name.  :meth:`Store.table` (and its shorthands :meth:`Store.flows`,
:meth:`Store.ports`, :meth:`Store.switches`, :meth:`Store.samples`) reads
the same tables into pandas, optionally only some columns: figures, the
report and the CLI read runs' tables this way, never by file path.

Reading a path that is not a store raises :class:`StoreError` (a
``ValueError``) that names the path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import math
import os
import re
import secrets
import shutil
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import duckdb
import filelock
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__, interrupts

if TYPE_CHECKING:  # the readers return DataFrames; writing a run never imports pandas (issue #12)
    import pandas as pd

__all__ = [
    "RunRecord",
    "Store",
    "StoreError",
    "open_store",
    "scenario_hash",
    "run_id_of",
    "flatten",
    "catalog_row",
    "to_jsonable",
]

RUNS_DIR = "runs"
CATALOG_FILE = "catalog.duckdb"
LOCK_FILE = "catalog.lock"
RECORD_FILE = "run.json"
COMPLETE_FILE = "COMPLETE"
STAGING_PREFIX = ".tmp-"
RETIRED_PREFIX = ".old-"
#: Version of the manifest a ``COMPLETE`` marker holds (before manifests, the marker held the run id).
MANIFEST_VERSION = 1
LOCK_TIMEOUT_S = 600.0
QUERYABLE_TABLES = ("flows", "ports", "switches", "samples")

_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,=+@-]{0,199}")
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_TYPE_ORDER = ("BOOLEAN", "BIGINT", "DOUBLE", "VARCHAR")
_INT64 = (-(2**63), 2**63 - 1)

TableLike = "pa.Table | pd.DataFrame"


class StoreError(ValueError):
    """A path is not a usable result store, or a store operation failed."""


# --------------------------------------------------------------------------
# records: JSON form, hashing, flattening
# --------------------------------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """Plain-JSON copy of ``value``: numpy scalars unwrapped, NaN/inf as None,
    dates as ISO text, paths as text, tuples as lists."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if hasattr(value, "model_dump"):  # pydantic models
        return to_jsonable(value.model_dump(mode="json"))
    raise TypeError(f"cannot store a {type(value).__name__} in a run record")


def _canonical_json(value: Any) -> str:
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


#: Top-level scenario fields that change neither the simulation nor its stored
#: analysis: they are left out of the scenario hash, and so of the run id.
COSMETIC_FIELDS = ("name", "description")


def identity(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a scenario that makes a run what it is: everything but
    :data:`COSMETIC_FIELDS`."""
    return {key: value for key, value in scenario.items() if key not in COSMETIC_FIELDS}


def _sha256_16(value: Any) -> str:
    return hashlib.sha256(_canonical_json(value).encode("utf-8")).hexdigest()[:16]


def scenario_hash(scenario: Mapping[str, Any]) -> str:
    """First 16 hex digits of the SHA-256 of the scenario's :func:`identity`
    as canonical JSON (sorted keys, no whitespace, NaN as null)."""
    return _sha256_16(identity(scenario))


def _safe_name(name: Any) -> str:
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in str(name))[:60] or "run"


def run_id_of(name: Any, scenario: Mapping[str, Any], valid: bool = True) -> str:
    """The run id of a scenario: its name made safe for a folder name (cut to
    60 characters), a dash, and 12 hex digits of its :func:`scenario_hash`.

    ``valid=False`` is the id of a sweep point that failed validation; its
    ``scenario`` is the raw data, hashed under an ``"invalid"`` key so that it
    can never share an id with a valid run."""
    digest = scenario_hash(scenario) if valid else _sha256_16({"invalid": identity(scenario)})
    return f"{_safe_name(name)}-{digest[:12]}"


def legacy_run_ids(name: Any, scenario: Mapping[str, Any]) -> dict[str, bool]:
    """The ids dclb gave this scenario before cosmetic fields were left out
    of the hash (the whole resolved scenario was hashed), each mapped to
    whether it is the id of a valid run."""
    safe = _safe_name(name)
    return {
        f"{safe}-{_sha256_16(scenario)[:12]}": True,
        f"{safe}-{_sha256_16({'invalid': scenario})[:12]}": False,
    }


def utc_now(at: float | None = None) -> str:
    """The current UTC time (or the POSIX time ``at``) as ISO-8601 text to the second (the record's time
    stamps)."""
    when = dt.datetime.now(dt.timezone.utc) if at is None else dt.datetime.fromtimestamp(at, dt.timezone.utc)
    return when.isoformat(timespec="seconds")


def _catalog_field(sql_type: str, **options: Any) -> Any:
    """A record field that is also one of the leading catalog columns, of type ``sql_type``."""
    return field(metadata={"catalog": sql_type}, **options)


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """What one run leaves behind, completed or failed: ``run.json`` and the catalog row.

    The fields with a catalog type are the leading catalog columns, in this order; ``scenario`` and
    ``summary`` are flattened into the columns after them (see the module documentation).
    ``scenario_hash`` is derived from ``scenario``, so the two can never disagree."""

    run_id: str = _catalog_field("VARCHAR")
    name: str = _catalog_field("VARCHAR")
    status: str = _catalog_field("VARCHAR")  # "completed" or "failed"
    seed: int = _catalog_field("BIGINT")
    scenario_hash: str = _catalog_field("VARCHAR", init=False)
    dclb_version: str = _catalog_field("VARCHAR", default=__version__)
    started_at: str = _catalog_field("VARCHAR")
    finished_at: str = _catalog_field("VARCHAR", default_factory=utc_now)
    wall_s: float = _catalog_field("DOUBLE")
    error: str | None = _catalog_field("VARCHAR", default=None)
    #: The resolved scenario (nested, as ``Scenario.resolved()`` gives it; a failed point's raw data).
    scenario: dict[str, Any]
    #: The summary metrics (:func:`dclb.summary.summarize`); empty for a failed run.
    summary: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scenario_hash", scenario_hash(self.scenario))

    def as_dict(self) -> dict[str, Any]:
        """The record as plain data, the form ``run.json`` and the store's methods take."""
        return dataclasses.asdict(self)


#: Record fields that become the leading catalog columns, with their types.
RECORD_COLUMNS: dict[str, str] = {
    f.name: f.metadata["catalog"] for f in dataclasses.fields(RunRecord) if "catalog" in f.metadata
}

#: Longest scenario list whose elements also get a catalog column each (a long explicit flow list stays one
#: text column instead of becoming thousands of columns).
MAX_FLATTENED_LIST = 16


def flatten(d: Mapping[str, Any], prefix: str = "", lists: bool = False) -> dict[str, Any]:
    """Nested mappings to one level with dotted keys.

    ``{"lb": {"scheme": "ecmp"}}`` becomes ``{"lb.scheme": "ecmp"}``.  Lists
    and empty mappings are kept as values.  With ``lists=True`` a list of at
    most :data:`MAX_FLATTENED_LIST` elements is also spread over one key per
    element, named by its index: ``{"links": [{"rate": 2}]}`` gives
    ``{"links": [{"rate": 2}], "links.0.rate": 2}``.
    """
    flat: dict[str, Any] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, prefix=f"{name}.", lists=lists))
        else:
            flat[name] = value
            if lists and isinstance(value, list) and 0 < len(value) <= MAX_FLATTENED_LIST:
                elements = {str(index): item for index, item in enumerate(value)}
                flat.update(flatten(elements, prefix=f"{name}.", lists=True))
    return flat


RecordLike = RunRecord | Mapping[str, Any]


def _plain(record: RecordLike) -> dict[str, Any]:
    return record.as_dict() if isinstance(record, RunRecord) else dict(record)


def _normalized_record(record: RecordLike, run_id: str | None = None) -> dict[str, Any]:
    """JSON-clean copy of a record with ``run_id``, ``status`` and
    ``scenario_hash`` filled in where missing (a mapping from elsewhere may
    lack them; a :class:`RunRecord` never does)."""
    clean = to_jsonable(_plain(record))
    given = clean.get("run_id")
    if run_id is not None:
        if given not in (None, run_id):
            raise ValueError(f"record says run_id={given!r} but was written as {run_id!r}")
        clean["run_id"] = run_id
    if not isinstance(clean.get("run_id"), str):
        raise ValueError("a run record needs a string 'run_id'")
    _check_run_id(clean["run_id"])
    clean.setdefault("status", "completed")
    if isinstance(clean.get("scenario"), Mapping) and not clean.get("scenario_hash"):
        clean["scenario_hash"] = scenario_hash(clean["scenario"])
    return clean


def catalog_row(record: RecordLike) -> dict[str, Any]:
    """The catalog row of a run record (column name -> plain value; a
    missing summary measurement is NaN, see the module documentation)."""
    clean = _normalized_record(record)
    row = {column: clean.get(column) for column in RECORD_COLUMNS}
    taken = {column.lower() for column in row}
    for section in ("scenario", "summary"):
        for key, value in flatten(clean.get(section) or {}, lists=section == "scenario").items():
            name = f"{section}.{key}" if key.lower() in taken else key
            if name and name.lower() not in taken:
                # run.json holds a missing measurement as null (JSON has no NaN); as NaN, a float, it still
                # makes its DOUBLE column, so a metric that is n/a in every run is a column all the same.
                row[name] = math.nan if section == "summary" and value is None else value
                taken.add(name.lower())
    return row


def _check_run_id(run_id: str) -> None:
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise ValueError(
            f"invalid run id {run_id!r}: use letters, digits and _ . , = + @ -, "
            "not starting with '.' or '-', at most 200 characters"
        )


# --------------------------------------------------------------------------
# files: atomic writes and reads
# --------------------------------------------------------------------------


def _atomic_write(target: Path, write: Callable[[Path], None]) -> None:
    """Write through ``write(temp_path)`` and move the result onto ``target``."""
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
    try:
        write(temp)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _write_json(target: Path, value: Any) -> None:
    text = json.dumps(value, indent=2, allow_nan=False) + "\n"
    _atomic_write(target, lambda path: path.write_text(text, encoding="utf-8"))


def _write_parquet(target: Path, table: TableLike) -> None:
    if type(table).__module__.split(".")[0] == "pandas":
        table = pa.Table.from_pandas(table, preserve_index=False)
    if not isinstance(table, pa.Table):
        raise TypeError(f"expected a pyarrow.Table, got {type(table).__name__}")
    _atomic_write(target, lambda path: pq.write_table(table, path))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise StoreError(f"cannot read run record {path}: {error}") from error
    if not isinstance(value, dict):
        raise StoreError(f"run record {path} is not a JSON object")
    return value


def _sha256_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file_facts(path: Path, rows: int | None = None) -> dict[str, Any]:
    """What the manifest records of a file just written: size, SHA-256 and (tables) row count."""
    facts: dict[str, Any] = {"bytes": path.stat().st_size, "sha256": _sha256_of_file(path)}
    if rows is not None:
        facts["rows"] = int(rows)
    return facts


def _write_marker(folder: Path, run_id: str, files: Mapping[str, Any]) -> None:
    """The ``COMPLETE`` marker, written last: the manifest of the folder's files."""
    _write_json(folder / COMPLETE_FILE, {"run_id": run_id, "manifest": MANIFEST_VERSION, "files": dict(files)})


def _short_error(error: BaseException) -> str:
    return " ".join(str(error).split())[:200] or type(error).__name__


def _check_file(path: Path, facts: Mapping[str, Any], deep: bool) -> list[str]:
    """Problems of one file listed in a manifest (none if it is as written)."""
    name = path.name
    if not path.is_file():
        return [f"{name} is missing"]
    size = path.stat().st_size
    if size != facts.get("bytes"):
        return [f"{name} has {size:,} bytes, {facts.get('bytes', 0):,} when written (truncated or changed)"]
    if name.endswith(".parquet"):
        try:
            rows = pq.read_metadata(path).num_rows
        except (pa.ArrowException, OSError) as error:
            return [f"{name} is not a readable Parquet file ({_short_error(error)})"]
        if "rows" in facts and rows != facts["rows"]:
            return [f"{name} has {rows:,} rows, {facts['rows']:,} when written"]
    if deep and "sha256" in facts and _sha256_of_file(path) != facts["sha256"]:
        return [f"{name} has changed since it was written (its SHA-256 differs)"]
    return []


def _check_unlisted_parquet(path: Path, deep: bool) -> tuple[int | None, list[str]]:
    """(row count, problems) of a table in a folder written before manifests: its footer must read, and
    with ``deep`` the whole table."""
    try:
        if deep:
            return pq.read_table(path).num_rows, []
        return pq.read_metadata(path).num_rows, []
    except (pa.ArrowException, OSError) as error:
        return None, [f"{path.name} is not a readable Parquet file ({_short_error(error)})"]


@dataclass(frozen=True)
class RunCheck:
    """The result of verifying one run folder: what is wrong with it (nothing if ``ok``) and its record."""

    run_id: str
    problems: list[str]
    record: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _sql_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --------------------------------------------------------------------------
# catalog: column types and row insertion
# --------------------------------------------------------------------------


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


def _create_catalog_table(con: duckdb.DuckDBPyConnection) -> None:
    columns = [f"{_sql_name(name)} {kind}" for name, kind in RECORD_COLUMNS.items()]
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
            con.execute(f"ALTER TABLE runs ADD COLUMN {_sql_name(name)} {kind}")
            columns[name] = kind
        elif _wider_type(current, kind) != current:
            con.execute(f"ALTER TABLE runs ALTER COLUMN {_sql_name(name)} TYPE {kind}")
            columns[name] = kind
    return columns


def _insert_rows(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
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


# --------------------------------------------------------------------------
# per-run tables
# --------------------------------------------------------------------------


def _tagged_table(run_id: str, path: Path, columns: Sequence[str] | None) -> pa.Table:
    """One run's table (of the requested columns, those it has) with a leading ``run_id`` column."""
    try:
        with pq.ParquetFile(path) as file:
            names = file.schema_arrow.names
            table = file.read(columns=None if columns is None else [c for c in columns if c in names])
    except (pa.ArrowException, OSError) as error:
        raise StoreError(
            f"cannot read {path}: {_short_error(error)} (`dclb store check {path.parent.parent.parent}` "
            "lists damaged runs; `dclb store repair` sets them aside so that a sweep runs them again)"
        ) from error
    if "run_id" in table.column_names:
        table = table.drop_columns(["run_id"])
    return table.add_column(0, "run_id", pa.array([run_id] * table.num_rows, pa.string()))


# --------------------------------------------------------------------------
# the store
# --------------------------------------------------------------------------


class Store:
    """A results directory; see the module documentation for the layout.

    Creating a ``Store`` touches nothing on disk.  Writing methods create the
    directory as needed; reading methods raise :class:`StoreError` if the
    path is not a store.  ``is_complete`` and ``status`` just answer False /
    None for a run that is not there.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._file_lock: filelock.FileLock | None = None

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # ---- paths -----------------------------------------------------------

    @property
    def runs_path(self) -> Path:
        return self.path / RUNS_DIR

    @property
    def catalog_path(self) -> Path:
        return self.path / CATALOG_FILE

    def run_path(self, run_id: str) -> Path:
        _check_run_id(run_id)
        return self.runs_path / run_id

    # ---- writing run folders --------------------------------------------

    def write_run(
        self,
        run_id: str,
        record: RecordLike,
        tables: Mapping[str, TableLike],
    ) -> Path:
        """Write (or atomically replace) the folder of a finished run.

        ``tables`` maps a name (``"flows"``, ``"ports"``, ``"samples"``, ...)
        to a table stored as ``<name>.parquet``.  The record is stored as
        ``run.json`` with ``run_id`` set, ``status`` defaulting to
        ``"completed"`` and ``scenario_hash`` computed if absent.  The
        catalog is not touched; call :meth:`record_in_catalog` for that.
        """
        clean = _normalized_record(record, run_id)
        if clean["status"] == "failed":
            raise ValueError("record has status 'failed'; use write_failed()")
        for name in tables:
            if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
                raise ValueError(f"invalid table name {name!r}")

        def fill(folder: Path) -> None:
            files: dict[str, dict[str, Any]] = {}
            for name, table in tables.items():
                path = folder / f"{name}.parquet"
                _write_parquet(path, table)
                files[path.name] = _file_facts(path, rows=table.num_rows if isinstance(table, pa.Table) else len(table))
            _write_json(folder / RECORD_FILE, clean)
            files[RECORD_FILE] = _file_facts(folder / RECORD_FILE)
            _write_marker(folder, run_id, files)

        return self._publish(run_id, fill)

    def write_failed(self, run_id: str, record: RecordLike) -> Path:
        """Write the folder of a failed run: ``run.json`` only, with status
        ``"failed"``, and no ``COMPLETE``.  It replaces any earlier folder of
        that run id.  The record must carry a non-empty ``error``."""
        clean = _normalized_record({**_plain(record), "status": "failed"}, run_id)
        if not clean.get("error"):
            raise ValueError("a failed run record needs a non-empty 'error'")
        return self._publish(run_id, lambda folder: _write_json(folder / RECORD_FILE, clean))

    def _publish(self, run_id: str, fill: Callable[[Path], None]) -> Path:
        self._prepare_for_writing()
        final = self.run_path(run_id)
        staging = self.runs_path / f"{STAGING_PREFIX}{run_id}-{secrets.token_hex(4)}"
        # A stop signal waits until the folder is published (or its staging copy removed): between the two
        # renames of _swap_in the run would have no folder at all.
        with interrupts.deferred():
            staging.mkdir()
            try:
                fill(staging)
                self._swap_in(staging, final)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        return final

    def _retire(self, run_id: str) -> None:
        """Removes a run folder: renamed away first (one atomic step), then deleted."""
        folder = self.run_path(run_id)
        retired = self.runs_path / f"{RETIRED_PREFIX}{run_id}-{secrets.token_hex(4)}"
        with interrupts.deferred():
            try:
                os.replace(folder, retired)
            except FileNotFoundError:
                return
        shutil.rmtree(retired, ignore_errors=True)

    def rename_run(self, old_id: str, new_id: str) -> Path:
        """Moves a complete or failed run to another run id: the folder is published again under
        ``new_id`` (tables hard-linked, ``run.json`` with the new ``run_id`` and ``scenario_hash``, a fresh
        manifest), then the old folder is removed and the catalog follows.  Used to adopt runs stored under
        the ids of an older dclb (see :func:`legacy_run_ids`)."""
        old = self.run_path(old_id)
        record = self.read_record(old_id)
        clean = {**record, "run_id": new_id}
        if isinstance(record.get("scenario"), Mapping):
            clean["scenario_hash"] = scenario_hash(record["scenario"])
        if (old / COMPLETE_FILE).is_file():

            def fill(folder: Path) -> None:
                files: dict[str, dict[str, Any]] = {}
                for path in sorted(old.glob("*.parquet")):
                    target = folder / path.name
                    try:
                        os.link(path, target)  # tables are never changed in place, so a link is safe
                    except OSError:
                        shutil.copy2(path, target)
                    files[path.name] = _file_facts(target, rows=pq.read_metadata(target).num_rows)
                _write_json(folder / RECORD_FILE, to_jsonable(clean))
                files[RECORD_FILE] = _file_facts(folder / RECORD_FILE)
                _write_marker(folder, new_id, files)

            final = self._publish(new_id, fill)
        else:
            final = self.write_failed(new_id, clean)
        self._retire(old_id)
        if self.catalog_path.is_file():
            self.record_in_catalog(clean)
            self.forget_in_catalog([old_id])
        return final

    def _swap_in(self, staging: Path, final: Path) -> None:
        retired = None
        if final.exists() or final.is_symlink():
            retired = self.runs_path / f"{RETIRED_PREFIX}{final.name}-{secrets.token_hex(4)}"
            os.replace(final, retired)
        try:
            os.replace(staging, final)
        except BaseException:
            if retired is not None:
                with contextlib.suppress(OSError):
                    os.replace(retired, final)
            raise
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)

    def _prepare_for_writing(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"cannot use {self.path} as a result store: it is not a directory")
        self.runs_path.mkdir(parents=True, exist_ok=True)

    # ---- inspecting run folders ------------------------------------------

    def is_complete(self, run_id: str) -> bool:
        """True if the run's folder carries the ``COMPLETE`` marker."""
        return (self.run_path(run_id) / COMPLETE_FILE).is_file()

    def status(self, run_id: str) -> str | None:
        """The status in ``run.json`` of a complete or failed run,
        ``"incomplete"`` for a folder that is neither, ``"damaged"`` if its
        ``run.json`` cannot be read, None if there is no folder."""
        folder = self.run_path(run_id)
        if not folder.is_dir():
            return None
        record_path = folder / RECORD_FILE
        if not record_path.is_file():
            return "incomplete"
        try:
            status = _read_json(record_path).get("status")
        except StoreError:
            return "damaged"
        if self.is_complete(run_id) or status == "failed":
            return str(status)
        return "incomplete"

    def verify(self, run_id: str, deep: bool = False) -> RunCheck:
        """Checks that a run folder is complete and as it was written.

        With a manifest in ``COMPLETE`` (every folder written since
        manifests exist): every listed file is there with its size, every
        table's Parquet footer reads and gives the recorded row count, and
        ``run.json`` is a completed record of this run.  That costs a few
        stats and one footer read per table, well under a millisecond per run
        from a warm cache.  ``deep`` also compares every file's SHA-256 (it
        reads everything).  A folder written before manifests gets what can
        be checked without them: footers (whole tables with ``deep``), the
        record, and the flow table's rows against the summary's
        ``flows_total``."""
        folder = self.run_path(run_id)
        if not folder.is_dir():
            return RunCheck(run_id, ["the run folder is missing"])
        marker = folder / COMPLETE_FILE
        if not marker.is_file():
            return RunCheck(run_id, ["it has no COMPLETE marker (unfinished, or the marker was deleted)"])
        try:
            text = marker.read_text(encoding="utf-8")
        except (OSError, ValueError) as error:
            return RunCheck(run_id, [f"its COMPLETE marker cannot be read ({_short_error(error)})"])
        manifest: Any = None
        if text.strip() != run_id:  # a marker of the time before manifests holds just the run id
            try:
                manifest = json.loads(text)
            except ValueError:
                manifest = None
            if not (isinstance(manifest, dict) and isinstance(manifest.get("files"), dict) and manifest.get("run_id") == run_id):
                return RunCheck(run_id, ["its COMPLETE marker is damaged"])
        problems: list[str] = []
        if manifest is not None:
            for name, facts in sorted(manifest["files"].items()):
                if isinstance(name, str) and "/" not in name and isinstance(facts, dict):
                    problems += _check_file(folder / name, facts, deep)
            if RECORD_FILE not in manifest["files"]:
                problems.append(f"its manifest does not list {RECORD_FILE}")
        record: dict[str, Any] | None = None
        if not any(problem.startswith(RECORD_FILE) for problem in problems):
            record_path = folder / RECORD_FILE
            try:
                record = _read_json(record_path) if record_path.is_file() else None
            except StoreError as error:
                problems.append(f"{RECORD_FILE} cannot be read ({_short_error(error.__cause__ or error)})")
            else:
                if record is None:
                    problems.append(f"{RECORD_FILE} is missing")
                elif record.get("status") != "completed":
                    problems.append(f"{RECORD_FILE} says status {record.get('status')!r}, not 'completed'")
                    record = None
                elif record.get("run_id") not in (None, run_id):
                    problems.append(f"{RECORD_FILE} belongs to run {record.get('run_id')!r}")
                    record = None
        if manifest is None:
            for path in sorted(folder.glob("*.parquet")):
                rows, found = _check_unlisted_parquet(path, deep)
                problems += found
                expected = ((record or {}).get("summary") or {}).get("flows_total")
                if path.name == "flows.parquet" and rows is not None and isinstance(expected, int) and rows != expected:
                    problems.append(f"flows.parquet has {rows:,} rows, but the run's summary counts {expected:,} flows")
        return RunCheck(run_id, problems, record if not problems else None)

    def read_record(self, run_id: str) -> dict[str, Any]:
        """The ``run.json`` of a run (complete, failed or otherwise)."""
        path = self.run_path(run_id) / RECORD_FILE
        if not path.is_file():
            raise StoreError(f"run {run_id!r} has no record in {self.path}")
        return _read_json(path)

    def run_ids(self) -> list[str]:
        """Ids of all complete runs, sorted."""
        self._require_store()
        return [folder.name for folder in self._run_folders() if (folder / COMPLETE_FILE).is_file()]

    def _run_folders(self) -> list[Path]:
        if not self.runs_path.is_dir():
            return []
        return sorted(
            entry
            for entry in self.runs_path.iterdir()
            if entry.is_dir() and not entry.name.startswith(".")
        )

    def records(self) -> Iterator[dict[str, Any]]:
        """Records of complete runs and failed runs (what the catalog
        indexes), in run id order; an unreadable record is skipped with a
        warning."""
        for folder in self._run_folders():
            record_path = folder / RECORD_FILE
            if not record_path.is_file():
                continue
            try:
                record = _read_json(record_path)
            except StoreError as error:
                warnings.warn(f"skipping run folder {folder}: {error}", stacklevel=3)
                continue
            if (folder / COMPLETE_FILE).is_file() or record.get("status") == "failed":
                yield {**record, "run_id": folder.name}

    def _require_store(self) -> None:
        if not self.path.exists():
            raise StoreError(f"no result store at {self.path}: the path does not exist")
        if not self.path.is_dir():
            raise StoreError(f"{self.path} is not a result store: it is not a directory")
        if not (self.runs_path.is_dir() or self.catalog_path.is_file()):
            raise StoreError(
                f"{self.path} is not a result store: it has neither {RUNS_DIR}/ nor {CATALOG_FILE}"
            )

    # ---- the catalog -------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self._file_lock is None:
            self._file_lock = filelock.FileLock(str(self.path / LOCK_FILE), timeout=LOCK_TIMEOUT_S)
        try:
            with self._file_lock:
                yield
        except filelock.Timeout as error:
            raise StoreError(f"timed out waiting for the catalog lock of {self.path}") from error

    @contextlib.contextmanager
    def _catalog(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the catalog for one operation; DuckDB errors become StoreError."""
        try:
            con = duckdb.connect(str(self.catalog_path), read_only=read_only)
        except duckdb.Error as error:
            raise StoreError(
                f"cannot open the catalog {self.catalog_path}: {error} "
                f"(if the file is damaged, `dclb store repair {self.path}` rebuilds it from the run folders)"
            ) from error
        try:
            yield con
        except duckdb.Error as error:
            raise StoreError(f"catalog operation on {self.catalog_path} failed: {error}") from error
        finally:
            con.close()

    def _ensure_catalog_locked(self) -> set[str]:
        """Rebuilds a missing catalog from the run folders; returns the run ids it put in (none if it existed)."""
        if not self.catalog_path.is_file():
            return self._rebuild_locked()
        return set()

    def record_in_catalog(self, record: RecordLike) -> None:
        """Insert or replace the catalog row of one run record.

        If the catalog file is missing it is first rebuilt from the run
        folders, so recording never hides runs already on disk.
        """
        row = catalog_row(record)
        self._prepare_for_writing()
        # The insert is a delete and an insert: a stop signal waits until both are done.
        with interrupts.deferred(), self._locked():
            if row["run_id"] in self._ensure_catalog_locked():
                return  # the rebuild just read this run's row from its folder (the first run of a new store)
            with self._catalog() as con:
                _create_catalog_table(con)
                _insert_rows(con, [row])

    def forget_in_catalog(self, run_ids: Iterable[str]) -> None:
        """Deletes the catalog rows of these runs (their folders are not touched)."""
        ids = list(run_ids)
        if not ids or not self.catalog_path.is_file():
            return
        with interrupts.deferred(), self._locked():
            with self._catalog() as con:
                _create_catalog_table(con)
                con.execute("DELETE FROM runs WHERE run_id IN (SELECT UNNEST(?))", [ids])

    def rebuild_catalog(self) -> int:
        """Recreate the catalog from the run folders; return its row count.

        Complete runs and failed runs are included; hidden folders and
        folders that are neither are ignored.  The new catalog is built in a
        temporary file and moved over the old one.
        """
        self._require_store()
        with interrupts.deferred(), self._locked():
            return len(self._rebuild_locked())

    def _rebuild_locked(self) -> set[str]:
        rows = [catalog_row(record) for record in self.records()]
        temp = self.path / f".{CATALOG_FILE}.{secrets.token_hex(4)}.part"
        temp_wal = temp.with_name(temp.name + ".wal")
        try:
            try:
                con = duckdb.connect(str(temp))
                try:
                    _create_catalog_table(con)
                    if rows:
                        _insert_rows(con, rows)
                finally:
                    con.close()
            except duckdb.Error as error:
                raise StoreError(
                    f"rebuilding the catalog of {self.path} failed: {error}"
                ) from error
            # A write-ahead log left by a crash belongs to the old file.
            self.catalog_path.with_name(CATALOG_FILE + ".wal").unlink(missing_ok=True)
            os.replace(temp, self.catalog_path)
        finally:
            temp.unlink(missing_ok=True)
            temp_wal.unlink(missing_ok=True)
        return {row["run_id"] for row in rows}

    def runs(self, all_rows: bool = False) -> pd.DataFrame:
        """The catalog, one row per run, ordered by run id.

        Rows the run folders no longer back (see :meth:`catalog_drift`) are
        left out, so a run whose folder is gone, or lost its ``COMPLETE``
        marker, is never shown as completed; ``all_rows=True`` gives the
        catalog as it is."""
        self._require_store()
        with self._locked():
            self._ensure_catalog_locked()
            with self._catalog(read_only=True) as con:
                frame = con.execute("SELECT * FROM runs ORDER BY run_id").df()
        if all_rows:
            return frame
        stale = set(self._unbacked(zip(frame["run_id"], frame["status"])))
        if stale:
            frame = frame[~frame["run_id"].isin(stale)].reset_index(drop=True)
        return frame

    def _folder_states(self) -> dict[str, bool]:
        """Run folder name -> whether it carries the ``COMPLETE`` marker (one stat per folder)."""
        return {folder.name: (folder / COMPLETE_FILE).is_file() for folder in self._run_folders()}

    def _unbacked(self, rows: Iterable[tuple[str, str]], states: Mapping[str, bool] | None = None) -> list[str]:
        """Run ids of catalog rows (run_id, status) that their folders do not back: a completed run whose
        folder is gone or has no ``COMPLETE`` marker, a failed run whose folder is gone or is complete."""
        states = self._folder_states() if states is None else states
        out = []
        for run_id, status in rows:
            complete = states.get(run_id)
            if complete is None or complete != (status == "completed"):
                out.append(run_id)
        return out

    def catalog_drift(self) -> tuple[list[str], list[str]]:
        """Where catalog and folders disagree, cheaply (no file is opened): the run ids of catalog rows
        whose folders do not back them, and of complete folders the catalog does not list.
        ``dclb store repair`` reconciles the two."""
        self._require_store()
        if not self.catalog_path.is_file():
            return [], [run_id for run_id, complete in self._folder_states().items() if complete]
        with self._locked():
            with self._catalog(read_only=True) as con:
                rows = con.execute("SELECT run_id, status FROM runs").fetchall()
        states = self._folder_states()
        listed = {run_id for run_id, _ in rows}
        unlisted = sorted(run_id for run_id, complete in states.items() if complete and run_id not in listed)
        return sorted(self._unbacked(rows, states)), unlisted

    # ---- per-run tables ----------------------------------------------------

    def table(
        self,
        name: str,
        run_ids: str | Iterable[str] | None = None,
        columns: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """The ``<name>.parquet`` tables of complete runs, concatenated, with
        a leading ``run_id`` column.  ``run_ids=None`` means every complete
        run; naming a run that is not complete raises StoreError.  Runs
        without that table are skipped.  ``columns`` reads only those
        columns (a run whose table lacks one gets nulls); a column that no
        selected run has raises StoreError listing the columns there are."""
        if not _TABLE_NAME.fullmatch(name):
            raise ValueError(f"invalid table name {name!r}")
        files = self._table_files(name, run_ids)
        parts = [_tagged_table(run_id, path, columns) for run_id, path in files]
        if not parts:
            import pandas as pd

            return pd.DataFrame({"run_id": pd.Series(dtype="str")})
        found = {column for part in parts for column in part.column_names}
        missing = [column for column in columns or () if column not in found]
        if missing:
            there = pq.read_schema(files[0][1]).names
            raise StoreError(f"no column {', '.join(missing)} in the {name} table; its columns: {', '.join(there)}")
        return pa.concat_tables(parts, promote_options="permissive").to_pandas()

    def flows(self, run_ids: str | Iterable[str] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Per-flow tables of complete runs with a ``run_id`` column."""
        return self.table("flows", run_ids, columns)

    def ports(self, run_ids: str | Iterable[str] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Per-port tables of complete runs with a ``run_id`` column."""
        return self.table("ports", run_ids, columns)

    def switches(self, run_ids: str | Iterable[str] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Per-switch tables of complete runs with a ``run_id`` column."""
        return self.table("switches", run_ids, columns)

    def samples(self, run_ids: str | Iterable[str] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Sample tables of complete runs that have one, with ``run_id``."""
        return self.table("samples", run_ids, columns)

    def _table_files(
        self, name: str, run_ids: str | Iterable[str] | None = None
    ) -> list[tuple[str, Path]]:
        complete = self.run_ids()
        if run_ids is None:
            chosen = complete
        else:
            chosen = [run_ids] if isinstance(run_ids, str) else list(run_ids)
            missing = sorted(set(chosen) - set(complete))
            if missing:
                raise StoreError(f"no complete run {missing} in {self.path}")
        files = [(run_id, self.runs_path / run_id / f"{name}.parquet") for run_id in chosen]
        return [(run_id, path) for run_id, path in files if path.is_file()]

    # ---- SQL -----------------------------------------------------------------

    def sql(self, query: str) -> pd.DataFrame:
        """Run SQL over the catalog (view ``runs``, read-only) and the
        Parquet files of complete runs (views ``flows``, ``ports``,
        ``switches``, ``samples``, each with a ``run_id`` column).  A view is defined only
        if at least one complete run has that table."""
        self._require_store()
        with self._locked():
            self._ensure_catalog_locked()
            con = duckdb.connect()
            try:
                self._define_views(con)
                return con.execute(query).df()
            except duckdb.Error as error:
                raise StoreError(f"query on store {self.path} failed: {error}") from error
            finally:
                con.close()

    def _define_views(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute(f"ATTACH {_sql_text(str(self.catalog_path))} AS catalog (READ_ONLY)")
        stale = self._unbacked(con.execute("SELECT run_id, status FROM catalog.main.runs").fetchall())
        hidden = f" WHERE run_id NOT IN ({', '.join(_sql_text(run_id) for run_id in stale)})" if stale else ""
        con.execute(f"CREATE VIEW runs AS SELECT * FROM catalog.main.runs{hidden}")
        folder_of_file = r"regexp_extract(filename, '([^/\\]+)[/\\][^/\\]+$', 1)"
        for name in QUERYABLE_TABLES:
            files = [path.as_posix() for _, path in self._table_files(name)]
            if not files:
                continue
            file_list = "[" + ", ".join(_sql_text(file) for file in files) + "]"
            con.execute(
                f"CREATE VIEW {name} AS SELECT {folder_of_file} AS run_id, "
                f"* EXCLUDE (filename) FROM read_parquet({file_list}, "
                "filename = true, union_by_name = true)"
            )


def open_store(path: str | os.PathLike[str], *, create: bool = False) -> Store:
    """A :class:`Store` for ``path``.

    With ``create=False`` the path must already be a store (else
    :class:`StoreError`); with ``create=True`` the directory is created if
    needed.
    """
    store = Store(path)
    if create:
        store._prepare_for_writing()
    else:
        store._require_store()
    return store
