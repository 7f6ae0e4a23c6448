"""Run folders on disk: atomic writes, the manifest each folder's ``COMPLETE`` marker holds, and the
checks of a folder against it.

Every file goes to a temporary name first and is moved into place with :func:`os.replace`
(:func:`atomic_write`), so a reader never sees half a file. ``COMPLETE`` is written last and holds the
manifest: each file's size and SHA-256, each table's row count, as written. :func:`verify_folder` checks a
folder against it (sizes, each Parquet footer with its row count, a readable completed ``run.json``; with
``deep`` the checksums too); a folder written before manifests (its marker holding just the run id) gets
what can be checked without one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import StoreError, one_line

RUNS_DIR = "runs"
RECORD_FILE = "run.json"
COMPLETE_FILE = "COMPLETE"
STAGING_PREFIX = ".tmp-"
RETIRED_PREFIX = ".old-"
#: The end of a hidden (staging or retired) folder's name: the process that made it, so that a folder left
#: by a writer that was killed can be told from one still being written (``dclb store check``).
_OWNER = re.compile(r"-p(\d+)@([^@/]*)$")
#: Version of the manifest a ``COMPLETE`` marker holds (before manifests, the marker held the run id).
MANIFEST_VERSION = 1

#: A table to write: a pyarrow.Table, or a pandas DataFrame (pandas is never imported to write a run).
TableLike = "pa.Table | pd.DataFrame"


def hidden_name(prefix: str, run_id: str) -> str:
    """The name of a hidden folder of run ``run_id`` made by this process: ``prefix``, the run id, a random
    part and the owner (``-p<pid>@<host>``)."""
    return f"{prefix}{run_id}-{secrets.token_hex(4)}-p{os.getpid()}@{socket.gethostname()}"


def hidden_owner(name: str) -> tuple[int, str] | None:
    """(process id, host) of the process that made hidden folder ``name``; None for a name without one."""
    match = _OWNER.search(name)
    return (int(match.group(1)), match.group(2)) if match else None


def atomic_write(target: Path, write: Callable[[Path], None]) -> None:
    """Write through ``write(temp_path)`` and move the result onto ``target``."""
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
    try:
        write(temp)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_json(target: Path, value: Any) -> None:
    text = json.dumps(value, indent=2, allow_nan=False) + "\n"
    atomic_write(target, lambda path: path.write_text(text, encoding="utf-8"))


def write_parquet(target: Path, table: TableLike) -> None:
    if type(table).__module__.split(".")[0] == "pandas":
        table = pa.Table.from_pandas(table, preserve_index=False)
    if not isinstance(table, pa.Table):
        raise TypeError(f"expected a pyarrow.Table, got {type(table).__name__}")
    atomic_write(target, lambda path: pq.write_table(table, path))


def read_json(path: Path) -> dict[str, Any]:
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


def file_facts(path: Path, rows: int | None = None) -> dict[str, Any]:
    """What the manifest records of a file just written: size, SHA-256 and (tables) row count."""
    facts: dict[str, Any] = {"bytes": path.stat().st_size, "sha256": _sha256_of_file(path)}
    if rows is not None:
        facts["rows"] = int(rows)
    return facts


def write_marker(folder: Path, run_id: str, files: Mapping[str, Any]) -> None:
    """The ``COMPLETE`` marker, written last: the manifest of the folder's files."""
    write_json(folder / COMPLETE_FILE, {"run_id": run_id, "manifest": MANIFEST_VERSION, "files": dict(files)})


def short_error(error: BaseException) -> str:
    """An error of a file that cannot be read, as one short line for a problem report."""
    return one_line(error)[:200]


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
            return [f"{name} is not a readable Parquet file ({short_error(error)})"]
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
        return None, [f"{path.name} is not a readable Parquet file ({short_error(error)})"]


@dataclass(frozen=True)
class RunCheck:
    """The result of verifying one run folder: what is wrong with it (nothing if ``ok``) and its record."""

    run_id: str
    problems: list[str]
    record: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_folder(folder: Path, run_id: str, deep: bool = False) -> RunCheck:
    """Checks that the folder of run ``run_id`` is complete and as it was written.

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
    if not folder.is_dir():
        return RunCheck(run_id, ["the run folder is missing"])
    marker = folder / COMPLETE_FILE
    if not marker.is_file():
        return RunCheck(run_id, ["it has no COMPLETE marker (unfinished, or the marker was deleted)"])
    try:
        text = marker.read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        return RunCheck(run_id, [f"its COMPLETE marker cannot be read ({short_error(error)})"])
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
            record = read_json(record_path) if record_path.is_file() else None
        except StoreError as error:
            problems.append(f"{RECORD_FILE} cannot be read ({short_error(error.__cause__ or error)})")
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


def size_problems(folder: Path, run_id: str) -> list[str]:
    """What a glance finds wrong with a complete run folder: its manifest's files missing or not of the size
    written (a truncated table, a deleted file). Only stats, no file opened but the marker, so that every
    read of a store can afford it; :func:`verify_folder` checks more. A folder written before manifests
    gives nothing to compare with (no problems)."""
    try:
        text = (folder / COMPLETE_FILE).read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        return [f"its COMPLETE marker cannot be read ({short_error(error)})"]
    if text.strip() == run_id:
        return []
    try:
        manifest = json.loads(text)
    except ValueError:
        manifest = None
    if not (isinstance(manifest, dict) and isinstance(manifest.get("files"), dict)):
        return ["its COMPLETE marker is damaged"]
    problems = []
    for name, facts in sorted(manifest["files"].items()):
        if not (isinstance(name, str) and "/" not in name and isinstance(facts, dict)):
            continue
        try:
            size = (folder / name).stat().st_size
        except OSError:
            problems.append(f"{name} is missing")
            continue
        if size != facts.get("bytes"):
            problems.append(f"{name} has {size:,} bytes, {facts.get('bytes', 0):,} when written (truncated or changed)")
    return problems
