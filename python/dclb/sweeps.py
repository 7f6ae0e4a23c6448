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
killed sweep leaves nothing half-written that counts as done. A point stored under the run id an older
dclb gave it (the name and description were part of the hash then) is moved to its current id and used.
A point whose worker process died (so wrote nothing) is recorded as failed by the coordinator. At the end
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
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import math
import multiprocessing
import os
import secrets
import signal
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from .errors import ScenarioError

if TYPE_CHECKING:
    from .store import RunRecord

#: Metrics shown in sweep and results summaries (every summary key is in the catalog).
HEADLINE_METRICS = ["short_afct_us", "short_p99_fct_us", "long_afct_us", "long_goodput_gbps", "drops"]

#: Most points a single range may expand to (guards against a typo such as 0:1:0.0001).
MAX_RANGE_VALUES = 10_000


# --------------------------------------------------------------------------------------------------------
# Grid text


def _top_level(text: str):
    """Yields (index, character) for the characters outside quotes, brackets and braces."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif depth == 0:
            yield i, ch


def _split_top_level(text: str) -> list[str]:
    """Splits on commas that are not inside quotes, brackets or braces."""
    items, start = [], 0
    for i, ch in _top_level(text):
        if ch == ",":
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def _has_top_level_colon(item: str) -> bool:
    return any(ch == ":" for _, ch in _top_level(item))


def _number(text: str) -> int | float | None:
    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value


def expand_range(item: str, label: str) -> list[int | float]:
    """``"0.2:0.8:0.2"`` -> ``[0.2, 0.4, 0.6, 0.8]`` (inclusive; see the module documentation)."""
    parts = item.split(":")
    numbers = [_number(p) for p in parts]
    if len(parts) != 3 or any(n is None for n in numbers):
        raise ScenarioError(f"{label}: malformed range {item.strip()!r}; expected START:STOP:STEP with numbers, e.g. 0.2:0.8:0.2")
    start, stop, step = numbers  # type: ignore[misc]
    if step <= 0:
        raise ScenarioError(f"{label}: range {item.strip()!r} needs a positive step")
    if stop < start:
        raise ScenarioError(f"{label}: range {item.strip()!r} ends before it starts")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_RANGE_VALUES:
        raise ScenarioError(f"{label}: range {item.strip()!r} has {count:,} values (at most {MAX_RANGE_VALUES:,})")
    if all(isinstance(n, int) for n in numbers):
        return [start + i * step for i in range(count)]
    return [round(start + i * step, 12) for i in range(count)]


def parse_values(field: str, text: str, label: str) -> list[Any]:
    """The values of a grid entry written as text: a comma list whose items are read like ``--set`` values
    or are ``START:STOP:STEP`` ranges."""
    from .scenario import parse_override

    values: list[Any] = []
    for item in _split_top_level(text):
        if not item.strip():
            raise ScenarioError(f"{label}: empty value in {text!r}")
        if _has_top_level_colon(item):
            values.extend(expand_range(item, label))
        else:
            values.append(parse_override(f"{field}={item.strip()}")[1])
    return values


def parse_grid_option(text: str) -> tuple[str, list[Any]]:
    """One ``--grid FIELD=VALUES`` option -> (field, values)."""
    if "=" not in text:
        raise ScenarioError(f"--grid {text}: expected FIELD=VALUES, e.g. --grid lb.scheme=ecmp,rps or --grid traffic.load=0.2:0.8:0.2")
    key, spec = text.split("=", 1)
    key = key.strip()
    return key, parse_values(key, spec, f"--grid {key}")


def _scheme_params() -> set[str] | None:
    try:
        from . import _core
    except ImportError:
        return None
    return {p["name"] for s in _core.schemes() for p in s["params"]}


def check_grid_field(key: str, label: str) -> None:
    """Raises ScenarioError unless ``key`` is a scenario field a grid may vary."""
    from .scenario import field_path_problem

    problem = field_path_problem(key)
    if problem:
        raise ScenarioError(f"{label}: {problem}")
    parts = key.split(".")
    if parts[0] == "lb" and len(parts) == 2 and parts[1] not in ("scheme", "timing"):
        params = _scheme_params()
        if params is not None and parts[1] not in params:
            raise ScenarioError(f"{label}: no scheme has a parameter '{parts[1]}' (`dclb schemes` lists them)")


def _value_key(value: Any) -> tuple[str, Any]:
    """What makes two grid values the same: numbers by value (``1`` and ``1.0`` set a float field alike),
    booleans apart from numbers, anything else by its JSON text."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    try:
        return (type(value).__name__, json.dumps(value, sort_keys=True, default=str))
    except (TypeError, ValueError):
        return (type(value).__name__, repr(value))


def _check_distinct(values: Sequence[Any], where: str) -> None:
    """A value given twice would be one run shown once: refuse it rather than merge it unsaid."""
    seen: dict[tuple[str, Any], Any] = {}
    for v in values:
        key = _value_key(v)
        if key in seen:
            same = f"{v!r}" if seen[key] is v or repr(seen[key]) == repr(v) else f"{v!r} (the same as {seen[key]!r})"
            raise ScenarioError(f"{where}: the value {same} is given twice; each value of a grid dimension must differ")
        seen[key] = v


def normalize_grid(grid: Mapping[str, Any], label: str = "grid") -> dict[str, list[Any]]:
    """Field -> list of values, every field checked. A list is taken literally, a text parsed as above,
    any other value is a single value."""
    out: dict[str, list[Any]] = {}
    for key, spec in grid.items():
        where = f"{label} {key}" if label.startswith("--") else f"{label}.{key}"
        check_grid_field(key, where)
        if isinstance(spec, str):
            values = parse_values(key, spec, where)
        elif isinstance(spec, (list, tuple)):
            values = list(spec)
        else:
            values = [spec]
        if not values:
            raise ScenarioError(f"{where}: needs at least one value")
        _check_distinct(values, where)
        out[key] = values
    return out


# --------------------------------------------------------------------------------------------------------
# Planning: the points of a sweep


@dataclass
class Point:
    """One run of a sweep: grid values and seed, and either a valid scenario or the reason it is invalid."""

    run_id: str
    values: dict[str, Any]
    seed: int
    scenario: Any = None  # a dclb.scenario.Scenario when valid
    config: Optional[dict[str, Any]] = None
    raw: dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None


@dataclass
class Plan:
    name: str
    grid: dict[str, list[Any]]
    seeds: list[int]
    points: list[Point]

    @property
    def fields(self) -> list[str]:
        return list(self.grid)


def _base_from(scenario_or_path: Any, overrides: Sequence[str]) -> tuple[dict[str, Any], Path, str]:
    """Raw scenario data (overrides applied), base directory and default name."""
    from .scenario import Scenario, apply_overrides, read_scenario_file

    if isinstance(scenario_or_path, Scenario):
        raw = scenario_or_path.model_dump(mode="json", exclude_unset=True)
        if scenario_or_path.sweep is not None:
            raw["sweep"] = scenario_or_path.sweep.model_dump(mode="json")
        base_dir, name = scenario_or_path._base_dir, scenario_or_path.name
    elif isinstance(scenario_or_path, Mapping):
        raw, base_dir, name = copy.deepcopy(dict(scenario_or_path)), Path("."), "scenario"
    else:
        path = Path(scenario_or_path)
        raw = read_scenario_file(path)
        base_dir, name = path.parent.resolve(), path.stem
    return apply_overrides(raw, list(overrides)), base_dir, name


def plan_sweep(
    scenario_or_path: Any,
    grid: Mapping[str, Any] | None = None,
    seeds: int | None = None,
    overrides: Sequence[str] = (),
    seed: int | None = None,
    grid_label: str = "grid",
) -> Plan:
    """Expands a sweep into its points and validates each one (nothing runs, nothing is written)."""
    from pydantic import ValidationError

    from .runner import run_id_for
    from .scenario import Sweep, _format_validation, engine_config, from_dict
    from .store import run_id_of

    raw, base_dir, name = _base_from(scenario_or_path, overrides)
    table_raw = raw.pop("sweep", None) or {}
    try:
        table = Sweep.model_validate(table_raw)
    except ValidationError as e:
        raise ScenarioError(_format_validation(e, prefix="sweep", model=Sweep)) from None
    full = normalize_grid(table.grid, "sweep.grid")
    full.update(normalize_grid(grid or {}, grid_label))
    n_seeds = seeds if seeds is not None else table.seeds
    if not isinstance(n_seeds, int) or n_seeds < 1:
        raise ScenarioError(f"seeds: must be a whole number of at least 1, got {n_seeds!r}")
    if seed is not None:
        raw["seed"] = seed
    base_seed = raw.get("seed", 1)
    if isinstance(base_seed, bool) or not isinstance(base_seed, int) or base_seed < 0:
        raise ScenarioError(f"seed: must be a whole number >= 0, got {base_seed!r}")
    seed_values = [base_seed + i for i in range(n_seeds)]
    raw.setdefault("name", name)

    from .scenario import field_path, set_field

    points: list[Point] = []
    seen: set[str] = set()
    for combo in itertools.product(*full.values()):
        values = dict(zip(full, combo))
        for s in seed_values:
            data = copy.deepcopy(raw)
            data["seed"] = s
            point = Point(run_id="", values=values, seed=s, raw=data)
            try:
                for key, value in values.items():
                    set_field(data, field_path(key), copy.deepcopy(value), f"grid {key}={value!r}")
                sc = from_dict(data, base_dir=base_dir, name=name)
                point.config = engine_config(sc)
                point.scenario = sc
                point.run_id = run_id_for(sc)
            except ScenarioError as e:
                point.error = str(e)
                point.run_id = run_id_of(data.get("name", name), data, valid=False)
            if point.run_id not in seen:
                seen.add(point.run_id)
                points.append(point)
    valid = [p for p in points if p.error is None]
    if not valid:
        raise ScenarioError(points[0].error if len(points) == 1 else f"no valid point in the sweep; the first: {points[0].error}")
    return Plan(name=str(raw.get("name", name)), grid=full, seeds=seed_values, points=points)


# --------------------------------------------------------------------------------------------------------
# The worker side


def _one_line(error: BaseException) -> str:
    from .errors import ScenarioError as _SE

    text = str(error) if isinstance(error, (_SE, ValueError)) else f"{type(error).__name__}: {error}"
    return " ".join(text.split()) or type(error).__name__


def failed_record(task: Mapping[str, Any], error: str, started: str, wall_s: float) -> RunRecord:
    """The record of a point that failed: its validated scenario if it has one, else its raw data."""
    from .store import RunRecord

    sc = task.get("scenario")
    return RunRecord(
        run_id=task["run_id"], name=sc.name if sc is not None else task["raw"].get("name"), status="failed",
        seed=task["seed"], scenario=sc.resolved() if sc is not None else task["raw"],
        started_at=started, wall_s=wall_s, error=error,
    )


def invalid_point_reply(store: Any, p: Point) -> dict[str, Any]:
    """Records a point that failed validation as a failed run, in the coordinator: nothing to run."""
    from .store import utc_now

    record = failed_record({"run_id": p.run_id, "seed": p.seed, "scenario": None, "raw": p.raw}, p.error, utc_now(), 0.0)
    store.write_failed(p.run_id, record)
    return {"run_id": p.run_id, "status": "failed", "reused": False, "error": p.error, "record": record.as_dict(), "sim_s": 0.0, "worker_s": 0.0}


#: How often a worker looks again at a point another sweep is running, in seconds.
CLAIM_POLL_S = 0.5
#: Name prefix of the stop files of interrupted Dask sweeps, in ``DIR/claims/``.
STOP_PREFIX = "stop-"
#: How long the coordinator gives its workers to stop after an interrupt before it kills them, in seconds.
STOP_GRACE_S = 10.0

# Set in the processes of the local pool: the coordinator's request to stop (a multiprocessing Event), and
# whether this process got a SIGTERM of its own.
_STOP_EVENT: Any = None
_STOPPING = False


_task_stop = threading.local()  # .path: the stop file of the sweep whose point this thread runs (Dask)


def _stop_requested() -> bool:
    if _STOPPING or (_STOP_EVENT is not None and _STOP_EVENT.is_set()):
        return True
    path = getattr(_task_stop, "path", None)
    return path is not None and os.path.exists(path)


def _check_stop(*_progress: Any) -> None:
    """The engine's progress callback in a worker: between chunks of events, give up the point if asked."""
    if _stop_requested():
        from .interrupts import Interrupted

        raise Interrupted(signal.SIGTERM)


def run_point(task: Mapping[str, Any]) -> dict[str, Any]:
    """Runs one valid sweep point in a worker and writes its run folder; returns what the coordinator needs.

    The point is claimed first (:mod:`dclb.claims`). If another live process holds its claim the reply has
    ``status = "busy"``, unless ``task["wait"]``, when the worker waits for that process to finish (or
    die) and then uses its run (or runs the point itself). A point is given up, with ``status =
    "interrupted"`` and nothing written, when the coordinator asks its workers to stop.

    Never raises for a failed point (the failure is written to the store and returned); only a store that
    cannot be written at all propagates."""
    from . import claims
    from .interrupts import Interrupted
    from .runner import run
    from .store import Store, utc_now

    t0 = time.perf_counter()
    started = utc_now()
    store = Store(task["store"])
    run_id = task["run_id"]
    reply: dict[str, Any] = {"run_id": run_id, "status": "failed", "reused": False, "error": None, "record": None, "sim_s": 0.0, "worker_s": 0.0, "pid": os.getpid()}

    def done(**fields: Any) -> dict[str, Any]:
        reply.update(fields, worker_s=time.perf_counter() - t0)
        _task_stop.path = None
        return reply

    _task_stop.path = task.get("stop_file")  # run by Dask: the coordinator creates this file to stop

    claim = None
    while claim is None:
        if _stop_requested():
            return done(status="interrupted")
        found = store.verify(run_id)
        if found.ok:
            return done(status="completed", reused=True, record=found.record)
        claim, owner = claims.try_claim(store.path, run_id)
        if claim is None:
            if not task.get("wait"):
                return done(status="busy", owner=owner)
            time.sleep(CLAIM_POLL_S)  # in the worker: the coordinator itself never polls
    with claim:
        found = store.verify(run_id)  # it may have been published between our check and our claim
        if found.ok:
            return done(status="completed", reused=True, record=found.record)
        try:
            result = run(task["scenario"], out=store.path, catalog=False, config=task["config"], progress=_check_stop)
            return done(status="completed", record=result.record.as_dict(), sim_s=float(result.stats.get("wall_s", 0.0)))
        except Interrupted:
            if _stop_requested():
                return done(status="interrupted")
            raise
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: BLE001 -- the engine may raise a PanicException
            message = _one_line(error)
            record = failed_record(task, message, started, time.perf_counter() - t0)
            store.write_failed(run_id, record)
            return done(error=message, record=record.as_dict())


def _worker_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM in a pool worker: finish cleanly, like a stop request from the coordinator."""
    global _STOPPING
    _STOPPING = True


def _pool_worker_init(parent_pid: int, stop_event: Any) -> None:
    """Initializer of the local pool's processes. Ctrl-C is the coordinator's to handle (it reaches the whole
    process group): the coordinator asks the workers to stop through ``stop_event``, and each gives up its
    point between two chunks of engine events, writing nothing. A worker whose coordinator died exits."""
    global _STOP_EVENT
    _STOP_EVENT = stop_event
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_sigterm)
    _exit_with_parent(parent_pid)


def _exit_with_parent(parent_pid: int) -> None:
    """A worker whose coordinator died (e.g. was killed) exits instead of lingering."""

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="dclb-exit-with-parent", daemon=True).start()


# --------------------------------------------------------------------------------------------------------
# Executors


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _LocalPool:
    def __init__(self, jobs: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.slots = jobs
        self.description = f"{jobs} local process{'es' if jobs != 1 else ''}"
        self.stop_event = context.Event()
        self.pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=context,
            initializer=_pool_worker_init,
            initargs=(os.getpid(), self.stop_event),
        )

    def submit(self, task: dict[str, Any]) -> Any:
        return self.pool.submit(run_point, task)

    def wait_any(self, futures: Iterable[Any]) -> Iterable[Any]:
        return wait(futures, return_when=FIRST_COMPLETED).done

    def running(self, futures: Iterable[Any]) -> int:
        return min(self.slots, sum(1 for f in futures if f.running()))

    def close(self, cancel: bool = False) -> None:
        """Shuts the pool down; with ``cancel``, asks the workers to give up their points, waits up to
        :data:`STOP_GRACE_S` for them to exit, and kills any that have not."""
        if not cancel:
            self.pool.shutdown(wait=True)
            return
        self.stop_event.set()
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join(1.0)


class _DaskCluster:
    def __init__(self, dask: Any, jobs: int) -> None:
        import logging

        try:
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - distributed is a dependency
            raise ScenarioError(f"--dask: the 'distributed' package is not installed ({e})") from None
        self.cluster = None
        self.own_client = True
        self.futures: list[Any] = []
        self.stop_file: Optional[Path] = None
        if isinstance(dask, Client):
            self.client, self.own_client = dask, False
            where = f"Dask cluster {dask.scheduler.address}"
        elif dask == "local":
            # Workers log only what is critical: the sweep reports each point's failure itself, and what a
            # worker logs at ERROR is its link to the scheduler, which an interrupt closes under it (a
            # heartbeat that found the scheduler gone printed a traceback after Ctrl-C, now and then).
            self.cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL)
            self.client = Client(self.cluster)
            where = f"local Dask cluster ({jobs} worker{'s' if jobs != 1 else ''})"
        elif isinstance(dask, str) and dask:
            try:
                self.client = Client(dask, timeout="20s")
            except (OSError, TimeoutError) as e:
                raise ScenarioError(f"--dask {dask}: cannot reach the Dask scheduler ({_one_line(e)})") from None
            where = f"Dask cluster {dask}"
        else:
            raise ScenarioError(f"--dask: expected 'local', a scheduler address such as tcp://host:8786, or a distributed.Client; got {dask!r}")
        self.slots = max(1, sum(self.client.nthreads().values()))
        self.description = f"{where}, {self.slots} thread{'s' if self.slots != 1 else ''}"

    def submit(self, task: dict[str, Any]) -> Any:
        if self.stop_file is None:
            # Created when the sweep is interrupted: tasks look for it between chunks of engine events and give
            # up. A file in the store, which every worker can already see, needs nothing from Dask.
            from .claims import claims_path

            self.stop_file = claims_path(Path(task["store"])) / f"{STOP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        future = self.client.submit(run_point, {**task, "stop_file": str(self.stop_file)}, pure=False)
        self.futures.append(future)
        return future

    def wait_any(self, futures: Iterable[Any]) -> Iterable[Any]:
        from distributed import wait as dask_wait

        return dask_wait(list(futures), return_when="FIRST_COMPLETED").done

    def running(self, futures: Iterable[Any]) -> int:
        return min(self.slots, sum(1 for f in futures if not f.done()))

    def close(self, cancel: bool = False) -> None:
        """Closes the client (and a local cluster). With ``cancel``, the sweep's stop file is created first
        and its tasks, running or queued, give up their points (writing nothing) before the close."""
        import logging

        if cancel:
            # Closing a cluster under running tasks makes distributed log connection errors: not news.
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            with contextlib.suppress(Exception):
                from distributed import wait as dask_wait

                if self.stop_file is not None:
                    self.stop_file.parent.mkdir(parents=True, exist_ok=True)
                    self.stop_file.touch()
                # Running tasks give up within a chunk of events, queued ones as soon as they start; wait for
                # that (blocking on the futures) so that no worker is in the middle of a point at the close.
                dask_wait(self.futures, timeout=STOP_GRACE_S)
        if self.own_client:
            with contextlib.suppress(Exception):
                self.client.close(timeout=STOP_GRACE_S if cancel else None)
        if self.cluster is not None:
            self.cluster.close(timeout=STOP_GRACE_S if cancel else None)
        if self.stop_file is not None:
            self.stop_file.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------------------
# Catalog reconciliation


def _folder_record(store: Any, run_id: str) -> Optional[dict[str, Any]]:
    """The record of a complete or failed run folder, None for anything else (missing, unreadable)."""
    from .store import StoreError

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


def _task(store: Any, p: Point) -> dict[str, Any]:
    """What a worker needs to run point ``p`` (a valid one) into ``store``."""
    return {"store": str(store.path), "run_id": p.run_id, "seed": p.seed, "scenario": p.scenario, "config": p.config, "raw": p.raw}


def _reply_of(future: Any, p: Point, store: Any) -> dict[str, Any]:
    """The worker's reply for ``p``; if the worker died or the task could not run, the point is stored
    as failed here (the worker wrote nothing)."""
    from .store import utc_now

    try:
        return future.result()
    except Exception as error:
        message = f"worker failed: {_one_line(error)}"
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
) -> dict[str, dict[str, Any]]:
    """Submits every point, then records each one in the catalog as its future completes (the coordinator
    blocks on the futures, it never polls); returns the replies by run id.

    A point another sweep is running comes back ``busy`` and is submitted again, at the end of the queue,
    to wait for that sweep to finish it."""
    from .interrupts import children_ignore_sigint

    with children_ignore_sigint():  # the local pool starts its processes as tasks are submitted
        pending = {executor.submit(_task(store, p)): p for p in todo}
    replies: dict[str, dict[str, Any]] = {}
    while pending:
        for future in executor.wait_any(list(pending)):
            p = pending.pop(future)
            reply = _reply_of(future, p, store)
            if reply["status"] == "busy":
                with children_ignore_sigint():
                    pending[executor.submit({**_task(store, p), "wait": True})] = p
                continue
            if reply["status"] == "interrupted":  # only while stopping; nothing was written
                continue
            if reply.get("record") is not None:
                store.record_in_catalog(reply["record"])
            replies[p.run_id] = reply
            state.count(reply)
            state.running = executor.running(pending)
            if on_reply is not None:
                on_reply(reply)
            if report is not None:
                report(state)
    return replies


def _adopt_or_clear_legacy(store: Any, p: Point) -> bool:
    """Deals with a folder of ``p`` stored under the run id an older dclb gave it (before the name and
    description were left out of the hash): a complete run that verifies is moved to ``p``'s id and used
    (True); a failed or damaged one is removed, since the point runs again now."""
    from .store import legacy_run_ids

    if p.error is None:
        legacy = [run_id for run_id, valid in legacy_run_ids(p.scenario.name, p.scenario.resolved()).items() if valid]
    else:
        legacy = [run_id for run_id, valid in legacy_run_ids(p.raw.get("name", "run"), p.raw).items() if not valid]
    for old_id in legacy:
        if old_id == p.run_id or not store.run_path(old_id).is_dir():
            continue
        if p.error is None and store.verify(old_id).ok and not store.run_path(p.run_id).exists():
            store.rename_run(old_id, p.run_id)
            return True
        store._retire(old_id)
        store.forget_in_catalog([old_id])
    return False


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
) -> "pd.DataFrame":  # noqa: F821
    """Runs the points of ``plan`` that are not complete in the store ``out``; returns the summary frame.

    A point counts as complete only if its folder verifies (:meth:`dclb.store.Store.verify`: files as
    recorded in the manifest, Parquet footers readable, row counts as written, a readable ``run.json``);
    anything else, a damaged folder included, is run again. ``notify`` gets a line for each such point and
    for runs adopted from an older dclb's run ids.

    ``on_reply`` is called in the coordinating process with each point's reply (``run_id``, ``status``,
    ``reused``, ...) as it is known, reused points first.

    An interrupt (Ctrl-C, SIGTERM through :func:`dclb.interrupts.install`, or a KeyboardInterrupt) stops the
    workers (the points they were running are given up, writing nothing), records in the catalog every run
    that finished, and raises :class:`~dclb.interrupts.Interrupted` whose ``note`` says how many runs are
    stored."""
    import pandas as pd

    from . import interrupts
    from .store import open_store

    store = open_store(out, create=True)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ScenarioError(f"--jobs: must be at least 1, got {jobs}")
    replies: dict[str, dict[str, Any]] = {}
    todo: list[Point] = []
    adopted = 0
    for p in plan.points:
        if p.error is None:
            found = store.verify(p.run_id)
            if not found.ok and not store.run_path(p.run_id).exists() and _adopt_or_clear_legacy(store, p):
                adopted += 1
                found = store.verify(p.run_id)
            if found.ok:
                replies[p.run_id] = {"run_id": p.run_id, "status": "completed", "reused": True, "record": found.record, "error": None, "sim_s": 0.0, "worker_s": 0.0}
                continue
            if store.is_complete(p.run_id) and notify is not None:
                notify(f"run {p.run_id} is damaged ({'; '.join(found.problems)}): running it again")
        elif not store.run_path(p.run_id).exists():
            _adopt_or_clear_legacy(store, p)
        todo.append(p)
    if adopted and notify is not None:
        notify(f"adopted {adopted} run{'s' if adopted != 1 else ''} stored under the run ids of an older dclb")
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
            replies.update(_run_points(executor, to_run, store, state, report, on_reply))
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
        row.update({m: summary.get(m) for m in HEADLINE_METRICS})
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
) -> "pd.DataFrame":  # noqa: F821
    """Runs a scenario over a grid of values and seeds into the store ``out``; returns one row per point.

    ``scenario_or_path``: a scenario file, a :class:`~dclb.scenario.Scenario` or raw scenario data (a dict).
    ``grid``: ``{"lb.scheme": ["ecmp", "rps"], "traffic.load": "0.2:0.8:0.2"}`` (merged over the scenario's
    ``[sweep]`` grid); ``seeds``: how many seeds per grid point (``seed, seed + 1, ...``); ``jobs``: local
    processes (default: every core); ``dask``: ``None`` (local pool), ``"local"`` (a LocalCluster of
    ``jobs`` workers), a scheduler address, or a ``distributed.Client``. ``overrides`` are ``--set`` texts
    applied to the scenario before the grid, ``seed`` the base seed.

    The frame has ``run_id``, one column per grid field, ``seed``, ``status`` ("completed"/"failed"),
    ``reused`` (already complete in the store, not run again), the headline metrics, ``sim_s`` (engine
    time), ``worker_s`` (time in the worker incl. storing) and ``error``; ``frame.attrs["sweep"]`` holds
    totals (wall time, points run, failures)."""
    plan = plan_sweep(scenario_or_path, grid=grid, seeds=seeds, overrides=overrides, seed=seed)
    return execute(plan, out=out, jobs=jobs, dask=dask, progress=progress)
