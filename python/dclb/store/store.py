"""The store: one results directory, its run folders and its catalog (see :mod:`dclb.store` for the layout).

:class:`Store` writes run folders (staged in a hidden folder, published by an atomic rename, see
:mod:`dclb.store.files`), keeps the catalog in step under a file lock (:mod:`dclb.store.catalog`), tells
where the two disagree, and reads runs back: the catalog as a DataFrame, each run's tables with a leading
``run_id`` column, and SQL over both.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import filelock
import pyarrow as pa
import pyarrow.parquet as pq

from .. import interrupts
from ..errors import StoreError, UserError
from .catalog import CATALOG_FILE, LOCK_FILE, create_catalog_table, insert_rows, sql_text
from .files import (
    COMPLETE_FILE,
    RECORD_FILE,
    RETIRED_PREFIX,
    RUNS_DIR,
    STAGING_PREFIX,
    RunCheck,
    TableLike,
    file_facts,
    hidden_name,
    read_json,
    short_error,
    size_problems,
    verify_folder,
    write_json,
    write_marker,
    write_parquet,
)
from .records import RecordLike, catalog_row, check_run_id, normalized_record, plain_record

if TYPE_CHECKING:  # the readers return DataFrames; writing a run never imports pandas (issue #12)
    import duckdb  # imported where the catalog is opened: a sweep's worker writes run folders alone (issue #30)
    import pandas as pd

LOCK_TIMEOUT_S = 600.0
#: How long to wait for another program that has the catalog open (DuckDB's own file lock).
CATALOG_BUSY_WAIT_S = 120.0
QUERYABLE_TABLES = ("flows", "ports", "switches", "samples")
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _tagged_table(run_id: str, path: Path, columns: Sequence[str] | None) -> pa.Table:
    """One run's table (of the requested columns, those it has) with a leading ``run_id`` column."""
    try:
        with pq.ParquetFile(path) as file:
            names = file.schema_arrow.names
            table = file.read(columns=None if columns is None else [c for c in columns if c in names])
    except (pa.ArrowException, OSError) as error:
        raise StoreError(
            f"cannot read {path}: {short_error(error)} (`dclb store check {path.parent.parent.parent}` "
            "lists damaged runs; `dclb store repair` sets them aside so that a sweep runs them again)"
        ) from error
    if "run_id" in table.column_names:
        table = table.drop_columns(["run_id"])
    return table.add_column(0, "run_id", pa.array([run_id] * table.num_rows, pa.string()))


class DamagedRunsWarning(UserWarning):
    """Damaged runs were left out of what a store read returned (their ids and problems are in the text)."""


class Store:
    """A results directory; see :mod:`dclb.store` for the layout.

    Creating a ``Store`` touches nothing on disk.  Writing methods create the
    directory as needed; reading methods raise :class:`StoreError` if the
    path is not a store.  ``is_complete`` and ``status`` just answer False /
    None for a run that is not there.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._file_lock: filelock.FileLock | None = None
        self._named_damaged: set[str] = set()  # damaged runs already named in a warning by this object

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
        check_run_id(run_id)
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
        clean = normalized_record(record, run_id)
        if clean["status"] == "failed":
            raise ValueError("record has status 'failed'; use write_failed()")
        for name in tables:
            if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
                raise ValueError(f"invalid table name {name!r}")

        def fill(folder: Path) -> None:
            files: dict[str, dict[str, Any]] = {}
            for name, table in tables.items():
                path = folder / f"{name}.parquet"
                write_parquet(path, table)
                files[path.name] = file_facts(path, rows=table.num_rows if isinstance(table, pa.Table) else len(table))
            write_json(folder / RECORD_FILE, clean)
            files[RECORD_FILE] = file_facts(folder / RECORD_FILE)
            write_marker(folder, run_id, files)

        return self._publish(run_id, fill)

    def write_failed(self, run_id: str, record: RecordLike) -> Path:
        """Write the folder of a failed run: ``run.json`` only, with status
        ``"failed"``, and no ``COMPLETE``.  It replaces any earlier folder of
        that run id.  The record must carry a non-empty ``error``."""
        clean = normalized_record({**plain_record(record), "status": "failed"}, run_id)
        if not clean.get("error"):
            raise ValueError("a failed run record needs a non-empty 'error'")
        return self._publish(run_id, lambda folder: write_json(folder / RECORD_FILE, clean))

    def _publish(self, run_id: str, fill: Callable[[Path], None]) -> Path:
        self._prepare_for_writing()
        final = self.run_path(run_id)
        staging = self.runs_path / hidden_name(STAGING_PREFIX, run_id)
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
        retired = self.runs_path / hidden_name(RETIRED_PREFIX, run_id)
        with interrupts.deferred():
            try:
                os.replace(folder, retired)
            except FileNotFoundError:
                return
        shutil.rmtree(retired, ignore_errors=True)

    def _swap_in(self, staging: Path, final: Path) -> None:
        retired = None
        if final.exists() or final.is_symlink():
            retired = self.runs_path / hidden_name(RETIRED_PREFIX, final.name)
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
        from ..paths import output_dir

        try:
            output_dir(self.path, "out")
        except UserError as error:
            raise StoreError(str(error)) from None
        try:
            self.runs_path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"cannot write results to {self.path}: {error.strerror or error}") from None

    # ---- inspecting run folders ------------------------------------------

    def is_complete(self, run_id: str) -> bool:
        """True if the run's folder carries the ``COMPLETE`` marker."""
        return (self.run_path(run_id) / COMPLETE_FILE).is_file()

    def _has_complete_run(self, run_id: str) -> bool:
        """:meth:`is_complete`, with an id that cannot name a run (``../x``) counted as not there."""
        try:
            return self.is_complete(run_id)
        except ValueError:
            return False

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
            status = read_json(record_path).get("status")
        except StoreError:
            return "damaged"
        if self.is_complete(run_id) or status == "failed":
            return str(status)
        return "incomplete"

    def verify(self, run_id: str, deep: bool = False) -> RunCheck:
        """Checks that a run folder is complete and as it was written (:func:`~dclb.store.files.verify_folder`:
        the files of its manifest with their sizes, Parquet footers and row counts, a readable completed
        ``run.json``; ``deep`` also compares every file's SHA-256, reading everything)."""
        return verify_folder(self.run_path(run_id), run_id, deep)

    def read_record(self, run_id: str) -> dict[str, Any]:
        """The ``run.json`` of a run (complete, failed or otherwise)."""
        path = self.run_path(run_id) / RECORD_FILE
        if not path.is_file():
            raise StoreError(f"run {run_id!r} has no record in {self.path}")
        return read_json(path)

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

    def damaged(self, run_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Complete runs (all, or those of ``run_ids``) whose folders a glance finds damaged: a file of the
        manifest missing or not of the size written (:func:`~dclb.store.files.size_problems`; only stats).
        Run id -> what is wrong. The readers leave these runs out and name them (``runs`` marks their status
        ``damaged``); ``dclb store check`` checks more, and ``repair`` sets them aside."""
        folders = self._run_folders() if run_ids is None else [self.runs_path / r for r in run_ids]
        out = {}
        for folder in folders:
            if (folder / COMPLETE_FILE).is_file():
                problems = size_problems(folder, folder.name)
                if problems:
                    out[folder.name] = "; ".join(problems)
        return out

    def warn_damaged(self, damaged: Mapping[str, str]) -> None:
        """A warning naming the damaged runs a read left out (each run once per Store object)."""
        new = {run_id: problem for run_id, problem in sorted(damaged.items()) if run_id not in self._named_damaged}
        if not new:
            return
        self._named_damaged |= set(new)
        shown = "; ".join(f"{run_id} ({problem})" for run_id, problem in list(new.items())[:5])
        more = f"; and {len(new) - 5} more" if len(new) > 5 else ""
        warnings.warn(
            f"{len(new)} damaged run{'s' if len(new) != 1 else ''} left out: {shown}{more}; "
            f"`dclb store check {self.path}` lists them and `dclb store repair {self.path}` sets them aside",
            DamagedRunsWarning,
            stacklevel=3,
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
                record = read_json(record_path)
            except StoreError as error:
                warnings.warn(f"skipping run folder {folder}: {error}", stacklevel=3)
                continue
            if (folder / COMPLETE_FILE).is_file() or record.get("status") == "failed":
                yield {**record, "run_id": folder.name}

    def _require_store(self) -> None:
        from ..paths import file_part

        if (part := file_part(self.path)) is not None:
            raise StoreError(f"no result store at {self.path}: {part} is a file, not a directory")
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
        """Open the catalog for one operation; DuckDB errors become StoreError.

        dclb's own processes take turns through the store's lock file; another program (a DuckDB shell, a
        notebook) that has the catalog open holds DuckDB's own file lock instead. That is waited for, up to
        :data:`CATALOG_BUSY_WAIT_S`, so that a query run beside a long sweep does not end the sweep."""
        import duckdb

        waited, attempt = 0.0, 0
        while True:
            try:
                con = duckdb.connect(str(self.catalog_path), read_only=read_only)
                break
            except duckdb.Error as error:
                busy = "lock" in str(error).lower()
                if busy and waited < CATALOG_BUSY_WAIT_S:
                    pause = min(0.05 * 2**attempt, 1.0)
                    time.sleep(pause)
                    waited, attempt = waited + pause, attempt + 1
                    continue
                if busy:
                    raise StoreError(
                        f"cannot open the catalog {self.catalog_path}: another program has it open ({error}); "
                        f"waited {waited:.0f} s. Close it (or open it read-only from a copy) and run the command again: "
                        "finished runs are kept and are not run again"
                    ) from error
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
                create_catalog_table(con)
                insert_rows(con, [row])

    def forget_in_catalog(self, run_ids: Iterable[str]) -> None:
        """Deletes the catalog rows of these runs (their folders are not touched)."""
        ids = list(run_ids)
        if not ids or not self.catalog_path.is_file():
            return
        with interrupts.deferred(), self._locked():
            with self._catalog() as con:
                create_catalog_table(con)
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
        import duckdb

        rows = [catalog_row(record) for record in self.records()]
        temp = self.path / f".{CATALOG_FILE}.{secrets.token_hex(4)}.part"
        temp_wal = temp.with_name(temp.name + ".wal")
        try:
            try:
                con = duckdb.connect(str(temp))
                try:
                    create_catalog_table(con)
                    if rows:
                        insert_rows(con, rows)
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
        damaged = self.damaged()
        if damaged:
            hit = frame["run_id"].isin(list(damaged))
            frame["status"] = frame["status"].astype(object).where(~hit, "damaged")
            frame["error"] = frame["error"].astype(object).where(~hit, frame["run_id"].map(damaged))
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
        a leading ``run_id`` column.  ``name`` is one of ``flows``,
        ``ports``, ``switches``, ``samples``.  ``run_ids=None`` means every
        complete run; naming a run that is not complete raises StoreError.
        Runs without that table are skipped.  Damaged runs (a table missing,
        truncated or unreadable) are left out and named in a
        :class:`DamagedRunsWarning`, except when ``run_ids`` is the one run
        asked for, which raises StoreError.  ``columns`` reads only those
        columns (a run whose table lacks one gets nulls); a column that no
        selected run has raises StoreError listing the columns there are."""
        if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name) or name not in QUERYABLE_TABLES:
            raise StoreError(f"no table {name!r} in a run; the tables are {', '.join(QUERYABLE_TABLES)}")
        if columns is not None and (isinstance(columns, str) or not all(isinstance(c, str) for c in columns)):
            raise StoreError(f"columns: expected a list of column names, got {columns!r}")
        files = self._table_files(name, run_ids)
        parts, unreadable = [], {}
        for run_id, path in files:
            try:
                parts.append(_tagged_table(run_id, path, columns))
            except StoreError:
                if isinstance(run_ids, str):
                    raise  # the one run asked for
                # Damaged in a way sizes do not show: left out and named.
                unreadable[run_id] = f"{path.name} cannot be read"
        self.warn_damaged(unreadable)
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
        if run_ids is None:
            chosen = self.run_ids()
        else:
            if not isinstance(run_ids, str) and not all(isinstance(r, str) for r in run_ids):
                raise StoreError(f"run_ids: expected a run id or a list of them, got {run_ids!r}")
            chosen = [run_ids] if isinstance(run_ids, str) else list(run_ids)
            # Only the chosen runs' markers: listing the whole store for each run read made a report over a
            # store of 9,000 runs spend most of its time in stat calls (12 min for LBT's cached 1,005 runs).
            self._require_store()
            missing = sorted(r for r in set(chosen) if not self._has_complete_run(r))
            if missing:
                raise StoreError(f"no complete run {missing} in {self.path}")
        damaged = self.damaged(chosen)
        if damaged and isinstance(run_ids, str):
            raise StoreError(
                f"cannot read run {run_ids}: {damaged[run_ids]} (`dclb store check {self.path}` lists damaged runs; "
                "`dclb store repair` sets them aside so that a sweep runs them again)"
            )
        self.warn_damaged(damaged)
        files = [(run_id, self.runs_path / run_id / f"{name}.parquet") for run_id in chosen if run_id not in damaged]
        return [(run_id, path) for run_id, path in files if path.is_file()]

    # ---- SQL -----------------------------------------------------------------

    def sql(self, query: str) -> pd.DataFrame:
        """Run SQL over the catalog (view ``runs``, read-only) and the
        Parquet files of complete runs (views ``flows``, ``ports``,
        ``switches``, ``samples``, each with a ``run_id`` column).  A view is defined only
        if at least one complete run has that table."""
        import duckdb

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
        con.execute(f"ATTACH {sql_text(str(self.catalog_path))} AS catalog (READ_ONLY)")
        stale = self._unbacked(con.execute("SELECT run_id, status FROM catalog.main.runs").fetchall())
        hidden = f" WHERE run_id NOT IN ({', '.join(sql_text(run_id) for run_id in stale)})" if stale else ""
        # Damaged runs stay in the runs view, as status 'damaged', and their tables are left out of the others.
        damaged = dict(self.damaged())
        for name in QUERYABLE_TABLES:
            for run_id, path in self._table_files(name):
                try:
                    pq.read_metadata(path)
                except (pa.ArrowException, OSError) as error:
                    damaged[run_id] = f"{path.name} is not a readable Parquet file ({short_error(error)})"
        self.warn_damaged(damaged)
        status = "*"
        if damaged:
            ids = ", ".join(sql_text(run_id) for run_id in sorted(damaged))
            status = f"* REPLACE (CASE WHEN run_id IN ({ids}) THEN 'damaged' ELSE status END AS status)"
        con.execute(f"CREATE VIEW runs AS SELECT {status} FROM catalog.main.runs{hidden}")
        folder_of_file = r"regexp_extract(filename, '([^/\\]+)[/\\][^/\\]+$', 1)"
        for name in QUERYABLE_TABLES:
            files = [path.as_posix() for run_id, path in self._table_files(name) if run_id not in damaged]
            if not files:
                continue
            file_list = "[" + ", ".join(sql_text(file) for file in files) + "]"
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
