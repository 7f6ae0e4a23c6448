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
two ids with the same digits, and each is run.

**Verification.**  ``COMPLETE`` holds a manifest: for every file of the folder
its size and SHA-256, and for every table its row count, recorded as it was
written.  :meth:`Store.verify` checks a folder against it (sizes, each Parquet
footer with its row count, a readable completed ``run.json``; with ``deep``
the checksums too).  A sweep re-runs any point whose folder does not verify.
Folders written before manifests (``COMPLETE`` holding only the run id) stay
valid; they are checked by what can be read without a manifest.

**Crash safety.**  A run is first written into a hidden sibling folder
``runs/.tmp-<run_id>-<random>-p<pid>@<host>`` (named for its writer, so that
``dclb store check`` can tell the leftover of a killed writer at once); every
file in it goes to a temporary name and is moved into place with
:func:`os.replace`, ``COMPLETE`` last.  The folder is then published by
renaming: an existing ``runs/<run_id>`` is first renamed away to
``runs/.old-<run_id>-<random>-p<pid>@<host>``, the new folder is renamed in,
and the old one deleted.  Killing the process at any instant therefore leaves
``runs/<run_id>`` either absent, or a complete old run, or a complete new run,
never a folder with ``COMPLETE`` but missing or mixed files.  Hidden (dot)
folders are never read; a kill may leave one behind, which ``dclb store
repair`` deletes.  A stop signal (Ctrl-C, SIGTERM) waits until a folder is
published or its staging copy removed (:func:`dclb.interrupts.deferred`), as
it does for a catalog write.  (This guards against a killed process, not
against power loss: nothing is fsync'ed.)  Two processes writing one run id
at once still leave one whole run; sweeps avoid the wasted work by claiming
points first (:mod:`dclb.claims`).

**Damaged runs.**  Every read compares each complete run's files with the
sizes its manifest recorded (:meth:`Store.damaged`: stats only).  A damaged
run is marked ``damaged`` in :meth:`Store.runs` and the ``runs`` view, left out
of the tables and the other views, and named in a :class:`DamagedRunsWarning`
(a file whose size is right but that cannot be read is left out and named the
same way when it is read); only asking for that one run is an error.

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
:class:`~dclb.errors.UserError`) that names the path.

The code
--------
This package is the store's public face; its parts, one job each:
:mod:`~dclb.store.records` (run records, run ids, catalog rows),
:mod:`~dclb.store.files` (atomic writes, manifests, verifying a folder),
:mod:`~dclb.store.catalog` (the catalog's columns and rows) and
:mod:`~dclb.store.store` (the :class:`Store` class that ties them together).

Importing the package loads only :mod:`~dclb.store.records` (the standard library): a run that stores
nothing still needs its run id and record, but not DuckDB or pyarrow. The names of the other parts are
looked up when first used (``dclb.store.Store`` imports :mod:`~dclb.store.store` then; issue #30).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ..errors import StoreError
from ..jsonvalues import to_jsonable
from .records import (
    COSMETIC_FIELDS,
    MAX_FLATTENED_LIST,
    RECORD_COLUMNS,
    RunRecord,
    catalog_row,
    flatten,
    identity,
    run_id_of,
    scenario_hash,
    utc_now,
)

#: Where each name that needs DuckDB or pyarrow lives (the part is imported on first use).
_LAZY = {
    **dict.fromkeys(("CATALOG_FILE", "LOCK_FILE"), "catalog"),
    **dict.fromkeys(("COMPLETE_FILE", "MANIFEST_VERSION", "RECORD_FILE", "RETIRED_PREFIX", "RUNS_DIR", "STAGING_PREFIX", "RunCheck"), "files"),
    **dict.fromkeys(("LOCK_TIMEOUT_S", "QUERYABLE_TABLES", "DamagedRunsWarning", "Store", "open_store"), "store"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "RunRecord",
    "Store",
    "StoreError",
    "DamagedRunsWarning",
    "open_store",
    "scenario_hash",
    "run_id_of",
    "flatten",
    "catalog_row",
    "to_jsonable",
    "identity",
    "utc_now",
    "RunCheck",
    "COSMETIC_FIELDS",
    "MAX_FLATTENED_LIST",
    "RECORD_COLUMNS",
    "CATALOG_FILE",
    "LOCK_FILE",
    "COMPLETE_FILE",
    "MANIFEST_VERSION",
    "RECORD_FILE",
    "RETIRED_PREFIX",
    "RUNS_DIR",
    "STAGING_PREFIX",
    "LOCK_TIMEOUT_S",
    "QUERYABLE_TABLES",
]
