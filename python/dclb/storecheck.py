"""``dclb store check`` and ``dclb store repair``: find and fix what makes a store disagree with itself.

How it works
------------
The run folders are the truth and the catalog is derived from them (:mod:`dclb.store`), so checking a store
means checking each folder, then the catalog against the folders, then what concurrent and interrupted
writers leave behind. :func:`inspect` walks the store once and returns one :class:`Finding` per problem,
each with what repair does about it; :func:`check` only reports, :func:`repair` also acts.

* **Run folders.** A folder with a ``COMPLETE`` marker must verify (:meth:`dclb.store.Store.verify`: every
  file of its manifest there with its size, Parquet footers readable with the recorded row counts, a
  readable completed ``run.json``; ``deep`` also compares SHA-256 sums, reading every byte). A folder
  without the marker must hold a readable failed record. Anything else (damaged, unfinished, a marker
  deleted by hand) is *set aside*: moved to ``DIR/set-aside/<run_id>-<time>`` where nothing reads it, so
  the point counts as missing and the next sweep runs it again. Nothing is deleted.
* **The catalog.** Every complete or failed folder must have a row with its status, and every row a folder
  that backs it. Repair rebuilds the catalog from the folders (in a temporary file moved into place), which
  also replaces a catalog DuckDB cannot open.
* **Leftovers.** Claims of processes that are gone (:mod:`dclb.claims`) are deleted. Hidden staging
  (``runs/.tmp-*``) and retired (``runs/.old-*``) folders, left when a writer was killed in the middle of
  publishing, are deleted at once when their name's writer (``-p<pid>@<host>``) is a process of this host
  that is gone, else once they are :data:`LEFTOVER_AGE_S` old (a younger one may still be in use, on
  another host); so are the stop files of interrupted Dask sweeps (``claims/stop-*``) of that age.

What only a deep check finds (a checksum) only a deep repair finds again: ``check --deep`` names
``repair --deep`` in its last line. The line before their total says what was checked and what was not
(:func:`scope`): without ``--deep`` a file whose bytes changed inside it (same size, footer intact) is not
found, so the line says that the files' contents were not read and which command reads them: "no problems
found" is never more than what was checked.

Reading every folder's footers keeps a check of a 1,000-run store to a second or two; ``--deep`` reads all.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from . import claims
from .store.files import hidden_owner
from .store import (
    COMPLETE_FILE,
    RETIRED_PREFIX,
    STAGING_PREFIX,
    Store,
    StoreError,
)

#: Hidden staging and retired folders younger than this (seconds) may belong to a live writer: left alone.
LEFTOVER_AGE_S = 600.0
SET_ASIDE_DIR = "set-aside"


@dataclass
class Finding:
    """One problem: where (``run X``, ``catalog``, ``claim X``, a path), what is wrong, and what repair does
    about it (``fix``, run by :func:`repair`)."""

    where: str
    problem: str
    remedy: str
    fix: Optional[Callable[[], Optional[str]]] = field(default=None, repr=False)

    def line(self) -> str:
        return f"{self.where}: {self.problem}"


@dataclass
class Inspection:
    findings: list[Finding]
    complete: int = 0
    failed: int = 0
    claimed: int = 0
    #: What was looked at: run folders, catalog rows (None: no catalog could be read), claims.
    folders: int = 0
    catalog_rows: Optional[int] = None
    claims: int = 0
    deep: bool = False


def _age_s(path: Path) -> float:
    newest = path.lstat().st_mtime
    if path.is_dir():
        for child in path.iterdir():
            try:
                newest = max(newest, child.lstat().st_mtime)
            except OSError:
                pass
    return time.time() - newest


def _set_aside(store: Store, run_id: str) -> str:
    target_dir = store.path / SET_ASIDE_DIR
    target_dir.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    target = target_dir / f"{run_id}-{stamp}"
    os.replace(store.run_path(run_id), target)
    return f"set aside in {target}"


def inspect(store: Store, deep: bool = False) -> Inspection:
    """Every problem of ``store`` (see the module documentation), nothing changed."""
    store._require_store()
    out = Inspection([], deep=deep)
    truth: dict[str, str] = {}  # run id -> status, of the folders that will be there after repair
    gone: dict[str, str] = {}  # run id -> what happens to a folder that will not be there, and why
    for folder in store._run_folders():
        out.folders += 1
        run_id = folder.name
        where = f"run {run_id}"
        if (folder / COMPLETE_FILE).is_file():
            found = store.verify(run_id, deep=deep)
            if not found.ok:
                out.findings.append(Finding(where, "; ".join(found.problems), "set aside", lambda r=run_id: _set_aside(store, r)))
                gone[run_id] = "its folder is damaged"
                continue
            status = "completed"
        else:
            try:
                record = store.read_record(run_id)
            except StoreError as error:
                problem = "it has neither a COMPLETE marker nor a run.json" if "has no record" in str(error) else f"run.json cannot be read ({error.__cause__ or error})"
                out.findings.append(Finding(where, problem, "set aside", lambda r=run_id: _set_aside(store, r)))
                gone[run_id] = "its folder is damaged"
                continue
            if record.get("status") != "failed":
                out.findings.append(
                    Finding(where, "it has no COMPLETE marker (unfinished, or the marker was deleted)", "set aside", lambda r=run_id: _set_aside(store, r))
                )
                gone[run_id] = "its folder has no COMPLETE marker"
                continue
            status = "failed"
        truth[run_id] = status
        out.complete += status == "completed"
        out.failed += status == "failed"
    _inspect_catalog(store, truth, gone, out)
    for run_id, claim in claims.claims(store.path).items():
        out.claims += 1
        if claims.is_stale(claim):
            out.findings.append(
                Finding(f"claim {run_id}", f"left by {claims.describe(claim)}, which is gone", "delete it",
                        lambda r=run_id: "deleted" if claims.drop_stale(store.path, r) else "its owner came back; kept")
            )
        else:
            out.claimed += 1
    claims_dir = claims.claims_path(store.path)
    if claims_dir.is_dir():
        from .sweeps import STOP_PREFIX

        for entry in sorted(claims_dir.glob(f"{STOP_PREFIX}*")):
            if _age_s(entry) > LEFTOVER_AGE_S:
                out.findings.append(
                    Finding(f"claims/{entry.name}", "stop request of an interrupted sweep, left behind", "delete it",
                            lambda e=entry: (e.unlink(missing_ok=True), "deleted")[1])
                )
    if store.runs_path.is_dir():
        for entry in sorted(store.runs_path.iterdir()):
            if not entry.name.startswith((STAGING_PREFIX, RETIRED_PREFIX)):
                continue
            kind = "half-written copy of a run" if entry.name.startswith(STAGING_PREFIX) else "replaced run"
            owner = hidden_owner(entry.name)
            if owner is not None and claims.process_gone(*owner):
                why = f"left by process {owner[0]}, which is gone (killed while writing)"
            elif _age_s(entry) > LEFTOVER_AGE_S:
                why = "left by an interrupted writer"
            else:
                continue  # may belong to a writer that is still at work
            out.findings.append(
                Finding(f"runs/{entry.name}", f"{kind} {why}", "delete it",
                        lambda e=entry: (shutil.rmtree(e, ignore_errors=True), "deleted")[1])
            )
    return out


def _inspect_catalog(store: Store, truth: dict[str, str], gone: dict[str, str], out: Inspection) -> None:
    rebuild = lambda: f"rebuilt the catalog ({store.rebuild_catalog()} rows)"  # noqa: E731
    if not store.catalog_path.is_file():
        if truth:
            out.findings.append(Finding("catalog", f"{store.catalog_path.name} is missing", "rebuild it", rebuild))
        return
    try:
        with store._locked(), store._catalog(read_only=True) as con:
            rows = dict(con.execute("SELECT run_id, status FROM runs").fetchall())
    except StoreError as error:
        out.findings.append(Finding("catalog", f"cannot be read ({error.__cause__ or error})", "rebuild it", rebuild))
        return
    out.catalog_rows = len(rows)
    problems = []
    for run_id, status in sorted(rows.items()):
        if run_id not in truth:
            why = gone.get(run_id) or ("its folder is gone" if not store.run_path(run_id).exists() else "its folder is not a run")
            problems.append(f"lists {run_id} as {status}, but {why}")
        elif truth[run_id] != status:
            problems.append(f"lists {run_id} as {status}, but its folder is {truth[run_id]}")
    for run_id in sorted(set(truth) - set(rows)):
        problems.append(f"does not list {run_id} ({truth[run_id]})")
    for index, problem in enumerate(problems):
        # One line per problem; the single rebuild fixes them all, so only the first carries it.
        if index == 0:
            out.findings.append(Finding("catalog", problem, "rebuild the catalog", rebuild))
        else:
            out.findings.append(Finding("catalog", problem, "fixed by the rebuild above"))


def check(store: Store, deep: bool = False, echo: Callable[[str], None] = print) -> int:
    """Prints one line per problem and a total; returns how many problems there are."""
    found = inspect(store, deep)
    for finding in found.findings:
        echo(finding.line())
    # A problem only a deep check finds (a checksum) is found again only by a deep repair: say so.
    repair_command = f"dclb store repair {'--deep ' if deep else ''}{store.path}"
    echo(scope(found, f"dclb store check --deep {store.path}"))
    echo(_total(found) + (f"; `{repair_command}` fixes them" if found.findings else ""))
    return len(found.findings)


def repair(store: Store, deep: bool = False, echo: Callable[[str], None] = print) -> int:
    """Fixes every problem :func:`check` finds, printing one line per problem with what was done and a
    total; returns how many could not be fixed."""
    found = inspect(store, deep)
    failures = 0
    for finding in found.findings:
        if finding.fix is None:
            echo(f"{finding.line()} -> {finding.remedy}")
            continue
        try:
            done = finding.fix()
        except (OSError, StoreError) as error:
            failures += 1
            echo(f"{finding.line()} -> could not {finding.remedy}: {error}")
        else:
            echo(f"{finding.line()} -> {done or finding.remedy}")
    fixed = len(found.findings) - failures
    echo(scope(found, f"dclb store repair --deep {store.path}"))
    echo(_total(found) + (f"; {fixed} fixed" if found.findings else "") + (f", {failures} could not be fixed" if failures else ""))
    return failures


def scope(found: Inspection, deep_command: str) -> str:
    """What the inspection looked at and what it did not, as one line; ``deep_command`` is the command that
    looks at what a shallow one leaves out."""
    folders = f"{found.folders} run folder{'s' if found.folders != 1 else ''}"
    rows = "no catalog" if found.catalog_rows is None else f"{found.catalog_rows} catalog row{'s' if found.catalog_rows != 1 else ''}"
    contents = "files present with their recorded sizes, Parquet footers and row counts" + (", every byte against its SHA-256" if found.deep else "")
    checked = f"checked: {folders} ({contents}, run.json), {rows} against the folders, {found.claims} claim{'s' if found.claims != 1 else ''}, leftovers of interrupted writes"
    if found.deep:
        return checked + "; not checked: nothing left (every byte was read)"
    return checked + f"; not checked: the files' contents (a change inside a file that keeps its size and footer) - `{deep_command}` reads every byte"


def _total(found: Inspection) -> str:
    total = found.complete + found.failed
    runs = f"{total} run{'s' if total != 1 else ''} ({found.complete} complete, {found.failed} failed)"
    claimed = f", {found.claimed} being run now" if found.claimed else ""
    problems = len(found.findings)
    return f"{runs}{claimed}: " + (f"{problems} problem{'s' if problems != 1 else ''}" if problems else "no problems found")
