"""Coordinating a sweep: which points to run, sending them to an executor, recording each as it finishes.

The coordinator verifies every valid point against the store first (a point is done iff its folder
verifies), records the invalid ones as failed runs itself, submits the rest to an executor
(:mod:`dclb.sweeps.executors`) and blocks on their futures, writing each point's catalog row as it comes
back (only the coordinator writes catalog rows). At the end, or after an interrupt, the catalog is
reconciled with the folders of the sweep's points (:func:`reconcile`); the result is one row per point
with the headline metrics that compare runs (:data:`dclb.headline.COMPARISON`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import UserError, one_line
from ..headline import COMPARISON
from .executors import _DaskCluster, _LocalPool, default_jobs
from .plan import Plan, Point, plan_sweep
from .worker import failed_record


def invalid_point_reply(store: Any, p: Point) -> dict[str, Any]:
    """Records a point that failed validation as a failed run, in the coordinator: nothing to run."""
    from ..store import utc_now

    record = failed_record({"run_id": p.run_id, "seed": p.seed, "scenario": None, "raw": p.raw}, p.error, utc_now(), 0.0)
    store.write_failed(p.run_id, record)
    return {"run_id": p.run_id, "status": "failed", "reused": False, "error": p.error, "record": record.as_dict(), "sim_s": 0.0, "worker_s": 0.0}


def _folder_record(store: Any, run_id: str) -> Optional[dict[str, Any]]:
    """The record of a complete or failed run folder, None for anything else (missing, unreadable)."""
    from ..store import StoreError

    status = store.status(run_id)
    if status not in ("completed", "failed"):
        return None
    try:
        return {**store.read_record(run_id), "run_id": run_id}
    except StoreError:
        return None


def reconcile(store: Any, run_ids: Optional[Iterable[str]] = None) -> int:
    """Brings the catalog in line with the run folders: records every complete or failed run whose row is
    missing or has another status, and drops rows their folders no longer back. ``run_ids`` limits this to
    those runs (default: every folder). Returns how many rows it wrote or dropped."""
    catalog = store.runs()  # rows the folders do not back are already left out here
    known = dict(zip(catalog["run_id"], catalog["status"]))
    if run_ids is None:
        records: Iterable[dict[str, Any]] = store.records()
        unbacked, _ = store.catalog_drift()
    else:
        ids = list(run_ids)
        records = filter(None, (_folder_record(store, run_id) for run_id in ids))
        unbacked = sorted(set(store.catalog_drift()[0]) & set(ids))
    stale = [record for record in records if known.get(record["run_id"]) != record.get("status")]
    for record in stale:
        store.record_in_catalog(record)
    store.forget_in_catalog(unbacked)
    return len(stale) + len(unbacked)


# --------------------------------------------------------------------------------------------------------
# Progress


@dataclass
class SweepState:
    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    reused: int = 0
    ran: int = 0
    started: float = field(default_factory=time.perf_counter)

    def count(self, reply: Mapping[str, Any]) -> None:
        """Counts a point that came back from a worker."""
        self.done += 1
        self.ran += 0 if reply.get("reused") else 1
        self.reused += 1 if reply.get("reused") else 0
        self.failed += reply["status"] == "failed"

    @property
    def eta_s(self) -> float | None:
        """Seconds left, from the rate at which points finished so far in this sweep (None until one has)."""
        left = self.total - self.done
        if left == 0:
            return 0.0
        if self.ran == 0:
            return None
        return (time.perf_counter() - self.started) / self.ran * left


def _fmt_eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else f"{seconds // 60}:{seconds % 60:02d}"


class _RichProgress:
    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} done · {task.fields[running]} running · {task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("· ETA {task.fields[eta]}"),
            console=Console(stderr=True),
            transient=False,
        )
        self.task = self.progress.add_task("sweep", total=max(total, 1), running=0, failed=0, eta="?")

    def __enter__(self) -> "_RichProgress":
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def __call__(self, state: SweepState) -> None:
        self.progress.update(self.task, completed=state.done, running=state.running, failed=state.failed, eta=_fmt_eta(state.eta_s))


# --------------------------------------------------------------------------------------------------------
# Running a sweep


def _task(store: Any, p: Point, strict: bool = False) -> dict[str, Any]:
    """What a worker needs to run point ``p`` (a valid one) into ``store``."""
    return {"store": str(store.path), "run_id": p.run_id, "seed": p.seed, "scenario": p.scenario, "config": p.config, "raw": p.raw, "strict": strict}


def _reply_of(future: Any, p: Point, store: Any) -> dict[str, Any]:
    """The worker's reply for ``p``; if the worker died or the task could not run, the point is stored
    as failed here (the worker wrote nothing)."""
    from ..store import utc_now

    try:
        return future.result()
    except Exception as error:
        message = f"worker failed: {one_line(error, name_type=True)}"
    record = failed_record({"run_id": p.run_id, "seed": p.seed, "scenario": p.scenario, "raw": p.raw}, message, utc_now(), 0.0)
    try:
        store.write_failed(p.run_id, record)
    except OSError:
        pass  # the store itself is failing: the catalog row and reconcile still say what happened
    return {"run_id": p.run_id, "status": "failed", "reused": False, "error": message, "record": record.as_dict(), "sim_s": 0.0, "worker_s": 0.0}


def _run_points(
    executor: Any,
    todo: list[Point],
    store: Any,
    state: SweepState,
    report: Callable[[SweepState], None] | None,
    on_reply: Callable[[dict[str, Any]], None] | None = None,
    notify: Callable[[str], None] | None = None,
    strict: bool = False,
) -> dict[str, dict[str, Any]]:
    """Submits every point, then records each one in the catalog as its future completes (the coordinator
    blocks on the futures, it never polls); returns the replies by run id.

    A point another sweep is running comes back ``busy`` and is submitted again, at the end of the queue,
    to wait for that sweep to finish it."""
    from ..interrupts import children_ignore_sigint

    def _notify(text: str) -> None:
        if notify is not None:
            notify(text)
        else:
            warnings.warn(text, stacklevel=4)

    with children_ignore_sigint():  # the local pool starts its processes as tasks are submitted
        pending = {executor.submit(_task(store, p, strict)): p for p in todo}
    replies: dict[str, dict[str, Any]] = {}
    while pending:
        for future in executor.wait_any(list(pending)):
            p = pending.pop(future)
            reply = _reply_of(future, p, store)
            if reply["status"] == "busy":
                with children_ignore_sigint():
                    pending[executor.submit({**_task(store, p, strict), "wait": True})] = p
                continue
            if reply["status"] == "interrupted":  # only while stopping; nothing was written
                continue
            if reply.get("record") is not None:
                store.record_in_catalog(reply["record"])
            for text in reply.get("warnings") or ():
                _notify(f"run {p.run_id}: {text}")
            replies[p.run_id] = reply
            state.count(reply)
            state.running = executor.running(pending)
            if on_reply is not None:
                on_reply(reply)
            if report is not None:
                report(state)
    return replies


def _interrupted_note(plan: Plan, store: Any) -> str:
    complete = sum(1 for p in plan.points if p.error is None and store.is_complete(p.run_id))
    valid = sum(1 for p in plan.points if p.error is None)
    return f"{complete} of {valid} runs are complete in {store.path}"


def execute(
    plan: Plan,
    out: str | os.PathLike[str] = "dclb-results",
    jobs: int | None = None,
    dask: Any = None,
    progress: bool | Callable[[SweepState], None] = False,
    on_start: Callable[[int, int, str], None] | None = None,
    on_reply: Callable[[dict[str, Any]], None] | None = None,
    notify: Callable[[str], None] | None = None,
    strict: bool = False,
) -> "pd.DataFrame":  # noqa: F821
    """Runs the points of ``plan`` that are not complete in the store ``out``; returns the summary frame.

    A point counts as complete only if its folder verifies (:meth:`dclb.store.Store.verify`: files as
    recorded in the manifest, Parquet footers readable, row counts as written, a readable ``run.json``);
    anything else, a damaged folder included, is run again. ``notify`` gets a line for each such point.

    ``on_reply`` is called in the coordinating process with each point's reply (``run_id``, ``status``,
    ``reused``, ...) as it is known, reused points first. A run in which a source started no flow is noted
    through ``notify`` (:class:`dclb.SourceWithoutFlows`), or with ``strict`` stored as failed.

    An interrupt (Ctrl-C, SIGTERM through :func:`dclb.interrupts.install`, or a KeyboardInterrupt) stops the
    workers (the points they were running are given up, writing nothing), records in the catalog every run
    that finished, and raises :class:`~dclb.interrupts.Interrupted` whose ``note`` says how many runs are
    stored."""
    import pandas as pd

    from .. import interrupts
    from ..store import open_store
    from .executors import refuse_in_bootstrap

    refuse_in_bootstrap()
    if not isinstance(out, (str, os.PathLike)) or not str(out):
        raise UserError(f"out: expected a results directory (a str or os.PathLike path), got {type(out).__name__} {out!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int)):
        raise UserError(f"jobs: expected a whole number of parallel runs or None, got {type(jobs).__name__} {jobs!r}")
    store = open_store(out, create=True)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise UserError(f"--jobs: must be at least 1, got {jobs}")
    replies: dict[str, dict[str, Any]] = {}
    todo: list[Point] = []
    for p in plan.points:
        if p.error is None:
            found = store.verify(p.run_id)
            if found.ok:
                replies[p.run_id] = {"run_id": p.run_id, "status": "completed", "reused": True, "record": found.record, "error": None, "sim_s": 0.0, "worker_s": 0.0}
                continue
            if store.is_complete(p.run_id) and notify is not None:
                notify(f"run {p.run_id} is damaged ({'; '.join(found.problems)}): running it again")
        todo.append(p)
    to_run = [p for p in todo if p.error is None]
    invalid = [p for p in todo if p.error is not None]
    state = SweepState(total=len(plan.points), done=len(replies), reused=len(replies))
    t0 = time.perf_counter()
    executor: Any = None
    bar = _RichProgress(state.total) if progress is True else None
    report = bar if bar is not None else (progress if callable(progress) else None)
    try:
        if to_run:
            # Starting a local Dask cluster takes seconds: a stop signal waits until it is up (and can be
            # shut down in order); its processes, like the pool's, never see SIGINT themselves.
            with interrupts.deferred(), interrupts.children_ignore_sigint():
                executor = _DaskCluster(dask, jobs) if dask is not None else _LocalPool(min(jobs, len(to_run)))
        where = executor.description if executor else "the coordinator"
        if invalid:
            where += f" ({len(invalid)} invalid point{'s' if len(invalid) != 1 else ''} recorded as failed without running)"
        if on_start is not None:
            on_start(len(plan.points), len(todo), where)
        if on_reply is not None:
            for reply in replies.values():
                on_reply(reply)
        if bar is not None:
            bar.__enter__()
        for p in invalid:
            reply = invalid_point_reply(store, p)
            store.record_in_catalog(reply["record"])
            replies[p.run_id] = reply
            state.count(reply)
            if on_reply is not None:
                on_reply(reply)
        if report is not None:
            report(state)
        if executor is not None:
            replies.update(_run_points(executor, to_run, store, state, report, on_reply, notify, strict))
    except KeyboardInterrupt as error:
        # Stop in order, whatever further signals arrive: workers give up their points (writing nothing),
        # then every run that did finish gets its catalog row.
        with interrupts.shielded():
            if bar is not None:
                bar.__exit__(None, None, None)
                bar = None
            if executor is not None:
                executor.close(cancel=True)
                executor = None
            with contextlib.suppress(Exception):
                reconcile(store, [p.run_id for p in plan.points])
            note = _interrupted_note(plan, store)
        raise interrupts.Interrupted(getattr(error, "signum", signal.SIGINT), note) from None
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
        if executor is not None:
            executor.close()
    wall = time.perf_counter() - t0
    reconcile(store, [p.run_id for p in plan.points])

    rows = []
    for p in plan.points:
        reply = replies[p.run_id]
        summary = (reply.get("record") or {}).get("summary") or {}
        row = {"run_id": p.run_id, **p.values, "seed": p.seed, "status": reply["status"], "reused": bool(reply.get("reused"))}
        row.update({m: summary.get(m) for m in COMPARISON})
        row.update(sim_s=reply.get("sim_s", 0.0), worker_s=reply.get("worker_s", 0.0), error=reply.get("error"))
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["sweep"] = {
        "name": plan.name,
        "grid": plan.grid,
        "seeds": plan.seeds,
        "store": str(store.path),
        "points": len(plan.points),
        "ran": int((~frame["reused"]).sum()),
        "failed": int((frame["status"] == "failed").sum()),
        "wall_s": wall,
        "sim_s": float(frame["sim_s"].sum()),
        "worker_s": float(frame["worker_s"].sum()),
        "executor": executor.description if executor else None,
    }
    return frame


def sweep(
    scenario_or_path: Any,
    grid: Mapping[str, Any] | None = None,
    seeds: int | None = None,
    out: str | os.PathLike[str] = "dclb-results",
    jobs: int | None = None,
    dask: Any = None,
    overrides: Sequence[str] = (),
    seed: int | None = None,
    progress: bool | Callable[[SweepState], None] = False,
    strict: bool = False,
) -> "pd.DataFrame":  # noqa: F821
    """Runs a scenario over a grid of values and seeds into the store ``out``; returns one row per point.

    ``scenario_or_path``: a scenario file, a :class:`~dclb.scenario.Scenario` or raw scenario data (a dict).
    ``grid``: ``{"lb.scheme": ["ecmp", "rps"], "traffic.load": "0.2:0.8:0.2"}`` (merged over the scenario's
    ``[sweep]`` grid); ``seeds``: how many seeds per grid point (``seed, seed + 1, ...``); ``jobs``: local
    processes (default: every core); ``dask``: ``None`` (local pool), ``"local"`` (a LocalCluster of
    ``jobs`` workers), a scheduler address, or a ``distributed.Client``. ``overrides`` are ``--set`` texts
    applied to the scenario before the grid, ``seed`` the base seed. ``strict``: a run in which some source
    started no flow is a failed point rather than a completed one with a note.

    The frame has ``run_id``, one column per grid field, ``seed``, ``status`` ("completed"/"failed"),
    ``reused`` (already complete in the store, not run again), the headline metrics, ``sim_s`` (engine
    time), ``worker_s`` (time in the worker incl. storing) and ``error``; ``frame.attrs["sweep"]`` holds
    totals (wall time, points run, failures)."""
    plan = plan_sweep(scenario_or_path, grid=grid, seeds=seeds, overrides=overrides, seed=seed)
    return execute(plan, out=out, jobs=jobs, dask=dask, progress=progress, strict=strict)
