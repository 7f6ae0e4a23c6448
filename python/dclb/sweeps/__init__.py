"""Sweeps: run a scenario over a grid of field values and seeds, in parallel, into one result store.

How it works
------------
**The grid.** A grid maps dotted scenario fields to lists of values. It comes from the scenario's optional
``[sweep]`` table and from ``--grid FIELD=VALUES`` options (or ``grid={...}`` in Python), the latter
replacing the table's entry for the same field. A text of values is a comma list (``ecmp,rps,drb``), each
item read like ``--set`` (TOML when it parses, else a string), where an item ``START:STOP:STEP`` is an
inclusive numeric range (``0.2:0.8:0.2`` is 0.2, 0.4, 0.6, 0.8; the end point is kept when it is within
1e-9 steps of the range, and float values are rounded to 12 decimals, so ``0.6`` is exactly the number
``--set traffic.load=0.6`` gives). A TOML/Python list is taken literally. The points are the cartesian
product of the fields, in the order given, times the seeds.

**Seeds.** ``seeds = N`` runs every grid point with the seeds ``base, base + 1, ..., base + N - 1``, where
``base`` is the scenario's ``seed`` (after ``--seed``). A point is exactly the scenario that
``dclb run FILE --set FIELD=VALUE ... --seed S`` would run, with the same run id: the ``[sweep]`` table is not
part of a run's identity.

**Validation.** Grid field names are checked against the scenario schema before anything runs (an unknown
field, or a malformed range, is an error for the whole sweep). Each point is then validated on its own,
exactly as ``dclb run`` validates (the schema, then the engine's one check): a point whose values are
invalid (say ``traffic.load = 3.0``, or ``lb.d = 0`` for DRILL) becomes a *failed* run with the validation
message as its error. The coordinator records it; it never reaches a worker, and the other points run. If
no point at all is valid, the sweep is an error.

**Where work runs.** By default a local :class:`concurrent.futures.ProcessPoolExecutor` (spawn context)
with one process per core (``jobs`` to limit). With ``dask="tcp://HOST:8786"`` the same tasks go to an
existing Dask cluster; ``dask="local"`` starts a :class:`distributed.LocalCluster` with ``jobs`` single-
threaded worker processes. A task carries the validated scenario and its engine config (CDF files and flow
lists already read), so workers need only the same dclb (a wheel, see the README) -- but they write the run folders
themselves, so the store directory must be reachable at the same path from every worker (a shared file
system for a remote cluster).

**The store.** Each worker writes its run's folder (:meth:`~dclb.store.Store.write_run`, or
:meth:`~dclb.store.Store.write_failed` with the error message for a failure), and the coordinator writes the
failed folders of invalid points; only the coordinating process writes catalog rows, each as its point's
future completes (it blocks on the futures with ``wait`` from :mod:`concurrent.futures` or
:mod:`distributed`; nothing polls). A point is *done* iff its run folder verifies
(:meth:`~dclb.store.Store.verify`: the ``COMPLETE`` marker, every file as its manifest recorded it, each
Parquet footer readable with the recorded row count, a readable ``run.json``), so re-running a sweep runs
only the points that are missing, failed or damaged; since folders are published by an atomic rename, a
killed sweep leaves nothing half-written that counts as done. A point whose worker process died (so wrote nothing) is recorded as failed by the coordinator. At the end
the catalog is reconciled with the folders of the sweep's points: a complete or failed folder whose row is
missing or out of date (e.g. written by a sweep that was killed before recording it) is recorded, and a row
whose folder is gone or incomplete is dropped.

**Sharing the work.** Several sweeps may write one store at once (two shells, two machines on a shared file
system, or ``dclb reproduce`` beside a sweep). A worker *claims* a point before running it
(:mod:`dclb.claims`: an atomic claim file with its process id and host, kept fresh while it runs). A worker
that finds a point claimed by a live process does not run it: the coordinator sends it round again at the
end of its queue, flagged to wait, and that worker then waits for the owner to publish the run (or die,
when the point is claimed anew) and uses it. So each point runs once, whichever sweep gets to it first, and
both sweeps end with every point; a worker waits only when nothing else is left to do.

**Interrupts.** Ctrl-C, SIGTERM or SIGHUP (see :mod:`dclb.interrupts`) stop a sweep within a second or two.
Worker processes (the local pool's, a local Dask cluster's) never see the terminal's Ctrl-C; the
coordinator asks them to stop through an event they look at between chunks of engine events, so each gives up its point and writes nothing (a
point being published is finished first), releases its claim and exits; one that has not exited after
:data:`STOP_GRACE_S` seconds is killed. A local Dask cluster is closed with its workers. The coordinator
then records every finished run in the catalog and raises :class:`~dclb.interrupts.Interrupted`, which says
how many runs are stored; the CLI prints that one line and exits with 130. On Dask (local or remote) the
stop request is a file ``DIR/claims/stop-<pid>-<random>`` named for the sweep, whose existence each task
checks between chunks (the workers share the store's file system already); the coordinator creates it,
waits for its tasks to give up, closes the client (and a local cluster with its worker processes) and
deletes it.

The code
--------
This package is the sweep's public face; its parts, one job each: :mod:`~dclb.sweeps.grid` (grid fields
and values), :mod:`~dclb.sweeps.plan` (the points, validated), :mod:`~dclb.sweeps.coordinator` (running a
plan: what to run, recording results, reconciling the catalog), :mod:`~dclb.sweeps.executors` (local pool,
Dask) and :mod:`~dclb.sweeps.worker` (one point in a worker, and stopping).
"""

from __future__ import annotations

from .coordinator import SweepState, execute, invalid_point_reply, reconcile, sweep
from .executors import default_jobs
from .grid import MAX_RANGE_VALUES, check_grid_field, expand_range, normalize_grid, parse_grid_option, parse_values
from .plan import Plan, Point, plan_sweep
from .worker import CLAIM_POLL_S, STOP_GRACE_S, STOP_PREFIX, failed_record, run_point

__all__ = [
    "sweep",
    "execute",
    "plan_sweep",
    "Plan",
    "Point",
    "SweepState",
    "reconcile",
    "invalid_point_reply",
    "default_jobs",
    "normalize_grid",
    "parse_grid_option",
    "parse_values",
    "expand_range",
    "check_grid_field",
    "MAX_RANGE_VALUES",
    "run_point",
    "failed_record",
    "CLAIM_POLL_S",
    "STOP_GRACE_S",
    "STOP_PREFIX",
]
