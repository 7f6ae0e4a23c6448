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
failed folders of invalid points; only the coordinating process writes catalog rows, each as its point's future completes (it blocks on the futures with
``as_completed`` from :mod:`concurrent.futures` or :mod:`distributed`; nothing polls). A point is *done*
iff its run folder is complete (``COMPLETE`` marker), so re-running a sweep runs only the points that are
missing or failed; since folders
are published by an atomic rename, a killed sweep leaves nothing half-written that counts as done. A worker
checks again just before running, and if another sweep published the same run meanwhile it uses that one.
A point whose worker process died (so wrote nothing) is recorded as failed by the coordinator. At the end
the catalog is reconciled with the folders: every complete or failed folder whose catalog row is missing or
out of date (e.g. written by a sweep that was killed before recording it) is recorded.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import multiprocessing
import os
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
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
    from .store import scenario_hash

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
                safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in str(data.get("name", name)))[:60] or "run"
                point.run_id = f"{safe}-{scenario_hash({'invalid': data})[:12]}"
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


def run_point(task: Mapping[str, Any]) -> dict[str, Any]:
    """Runs one valid sweep point in a worker and writes its run folder; returns what the coordinator needs.

    Never raises for a failed point (the failure is written to the store and returned); only an
    interrupt, or a store that cannot be written at all, propagates."""
    from .runner import run
    from .store import Store, utc_now

    t0 = time.perf_counter()
    started = utc_now()
    store = Store(task["store"])
    run_id = task["run_id"]
    reply: dict[str, Any] = {"run_id": run_id, "status": "failed", "reused": False, "error": None, "record": None, "sim_s": 0.0, "worker_s": 0.0, "pid": os.getpid()}
    if store.is_complete(run_id):
        reply.update(status="completed", reused=True, record=store.read_record(run_id))
    else:
        try:
            result = run(task["scenario"], out=store.path, catalog=False, config=task["config"])
            reply.update(status="completed", record=result.record.as_dict(), sim_s=float(result.stats.get("wall_s", 0.0)))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: BLE001 -- the engine may raise a PanicException
            if store.is_complete(run_id):  # another sweep published this run meanwhile
                reply.update(status="completed", reused=True, record=store.read_record(run_id))
            else:
                message = _one_line(error)
                record = failed_record(task, message, started, time.perf_counter() - t0)
                store.write_failed(run_id, record)
                reply.update(error=message, record=record.as_dict())
    reply["worker_s"] = time.perf_counter() - t0
    return reply


def _exit_with_parent(parent_pid: int) -> None:
    """Pool initializer: a worker whose coordinator died (e.g. was killed) exits instead of lingering."""

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
        self.slots = jobs
        self.description = f"{jobs} local process{'es' if jobs != 1 else ''}"
        self.pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )

    def submit(self, task: dict[str, Any]) -> Any:
        return self.pool.submit(run_point, task)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        return as_completed(futures)

    def running(self, futures: Iterable[Any]) -> int:
        return min(self.slots, sum(1 for f in futures if f.running()))

    def close(self, cancel: bool = False) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)


class _DaskCluster:
    def __init__(self, dask: Any, jobs: int) -> None:
        import logging

        try:
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - distributed is a dependency
            raise ScenarioError(f"--dask: the 'distributed' package is not installed ({e})") from None
        self.cluster = None
        self.own_client = True
        if isinstance(dask, Client):
            self.client, self.own_client = dask, False
            where = f"Dask cluster {dask.scheduler.address}"
        elif dask == "local":
            self.cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR)
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
        return self.client.submit(run_point, task, pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed as dask_as_completed

        return iter(dask_as_completed(futures))

    def running(self, futures: Iterable[Any]) -> int:
        return min(self.slots, sum(1 for f in futures if not f.done()))

    def close(self, cancel: bool = False) -> None:
        if self.own_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


# --------------------------------------------------------------------------------------------------------
# Catalog reconciliation


def reconcile(store: Any) -> int:
    """Records in the catalog every complete or failed run whose row is missing or has another status;
    returns how many rows it wrote."""
    catalog = store.runs()
    known = dict(zip(catalog["run_id"], catalog["status"]))
    stale = [record for record in store.records() if known.get(record["run_id"]) != record.get("status")]
    for record in stale:
        store.record_in_catalog(record)
    return len(stale)


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
    blocks on the futures, it never polls); returns the replies by run id."""
    pending = {executor.submit(_task(store, p)): p for p in todo}
    replies: dict[str, dict[str, Any]] = {}
    for future in executor.as_completed(list(pending)):
        p = pending.pop(future)
        reply = _reply_of(future, p, store)
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


def execute(
    plan: Plan,
    out: str | os.PathLike[str] = "dclb-results",
    jobs: int | None = None,
    dask: Any = None,
    progress: bool | Callable[[SweepState], None] = False,
    on_start: Callable[[int, int, str], None] | None = None,
    on_reply: Callable[[dict[str, Any]], None] | None = None,
) -> "pd.DataFrame":  # noqa: F821
    """Runs the points of ``plan`` that are not complete in the store ``out``; returns the summary frame.

    ``on_reply`` is called in the coordinating process with each point's reply (``run_id``, ``status``,
    ``reused``, ...) as it is known, reused points first."""
    import pandas as pd

    from .store import open_store

    store = open_store(out, create=True)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ScenarioError(f"--jobs: must be at least 1, got {jobs}")
    replies: dict[str, dict[str, Any]] = {}
    todo: list[Point] = []
    for p in plan.points:
        if p.error is None and store.is_complete(p.run_id):
            replies[p.run_id] = {"run_id": p.run_id, "status": "completed", "reused": True, "record": store.read_record(p.run_id), "error": None, "sim_s": 0.0, "worker_s": 0.0}
        else:
            todo.append(p)
    to_run = [p for p in todo if p.error is None]
    invalid = [p for p in todo if p.error is not None]
    state = SweepState(total=len(plan.points), done=len(replies), reused=len(replies))
    t0 = time.perf_counter()
    executor: Any = None
    if to_run:
        executor = _DaskCluster(dask, jobs) if dask is not None else _LocalPool(min(jobs, len(to_run)))
    where = executor.description if executor else "the coordinator"
    if invalid:
        where += f" ({len(invalid)} invalid point{'s' if len(invalid) != 1 else ''} recorded as failed without running)"
    if on_start is not None:
        on_start(len(plan.points), len(todo), where)
    if on_reply is not None:
        for reply in replies.values():
            on_reply(reply)
    bar = _RichProgress(state.total) if progress is True else None
    report = bar if bar is not None else (progress if callable(progress) else None)
    interrupted = True
    try:
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
        interrupted = False
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
        if executor is not None:
            executor.close(cancel=interrupted)
    wall = time.perf_counter() - t0
    reconcile(store)

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
        "ran": len(todo),
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
