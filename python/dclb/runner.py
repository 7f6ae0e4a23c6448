"""Running one scenario: engine, progress, tables, summary, store.

:func:`run` validates nothing itself (a :class:`~dclb.scenario.Scenario` is already valid), builds the engine
config, and drives the engine in chunks of events with the GIL released, updating a progress bar between
chunks. The engine's tables come back as ``dclb._core.ResultTable`` (Arrow arrays, units in column names; see
:mod:`dclb.tables`) and its statistics as JSON. The summary reads the tables' columns through numpy; pyarrow
is loaded only to store the run or when a caller reads ``RunResult.flows`` and the other tables, so a run
that stores nothing never loads pyarrow, DuckDB or pandas (issue #30).
The run is written to the result store only when it has finished: a failed run, or one interrupted before it
is stored, leaves the store as it was. Storing it (the run folder and its catalog row) is one step that a stop
signal waits for, so an interrupt leaves either nothing of the run or all of it, and the caller learns which
(``on_stored``). The output is checked before the simulation starts, so that a results directory that cannot
be written costs no simulation.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from . import interrupts
from .errors import ScenarioError, UserError
from .memory import memory_limit
from .scenario import Scenario, engine_config, scenario_from

# pyarrow and DuckDB (store) are imported when a run is stored, not before: the process stays small while the
# engine runs, a run without a store never loads them, and a short run does not wait for them (issues #12, #30).
if TYPE_CHECKING:
    import pyarrow as pa

    from .store import RunRecord
    from .tables import Columns

#: Events per engine call between progress updates (a few hundredths of a second of work). This is also how
#: soon an interrupt is seen: Python handles signals only when the engine hands control back.
CHUNK_EVENTS = 500_000


@dataclass
class RunResult:
    """One run: its id, scenario, statistics, summary and catalog record, the folder it was stored in (None
    without a store), and its tables. ``flows``, ``ports``, ``switches`` and ``samples`` are pyarrow Tables,
    built the first time they are read (``tables`` holds them as :class:`dclb.tables.Columns`)."""

    run_id: str
    scenario: Scenario
    tables: Mapping[str, "Columns"]
    stats: dict[str, Any]
    summary: dict[str, Any]
    record: RunRecord
    path: Optional[Path] = None

    @property
    def flows(self) -> "pa.Table":
        return self.tables["flows"].to_arrow()

    @property
    def ports(self) -> "pa.Table":
        return self.tables["ports"].to_arrow()

    @property
    def switches(self) -> "pa.Table":
        return self.tables["switches"].to_arrow()

    @property
    def samples(self) -> "pa.Table":
        return self.tables["samples"].to_arrow()


def run_id_for(sc: Scenario) -> str:
    """Stable id of a resolved scenario (seed included): the same scenario always maps to the same folder.

    The name gives the id its readable prefix; the hash covers everything but the name and description
    (:func:`dclb.store.run_id_of`), so editing the description does not make a new run."""
    from .store.records import run_id_of

    return run_id_of(sc.name, sc.resolved())


def simulate(
    sc: Scenario,
    progress: Optional[Callable[[float, int, int, int], None]] = None,
    config: Optional[dict[str, Any]] = None,
) -> tuple[dict[str, Any], float]:
    """Runs the engine to the end; returns its raw results and the wall time in seconds.

    ``config`` is the engine config of ``sc`` when the caller has already built it (a sweep builds it where
    the scenario's files are, so that workers on other machines never read them)."""
    from . import _core

    config = json.dumps(config if config is not None else engine_config(sc))
    t0 = time.perf_counter()
    # Engine errors name engine fields; the scenario's resolution, when this process made it, renames
    # them as the user wrote them (a sweep's worker gets the config alone and keeps the engine's names).
    def user_error(error: Any) -> ScenarioError:
        return sc._resolution.user_error(error) if sc._resolution is not None else ScenarioError(str(error))

    try:
        # Held to the memory this machine (a sweep's worker, too) has now (dclb.memory), and to the event limit
        # (dclb.preview).
        from .preview import engine_event_limit

        sim = _core.Simulation(config, memory_limit(), engine_event_limit())
    except _core.ConfigError as e:  # the engine's own validation, naming the field
        raise user_error(e) from None
    try:
        while not sim.run(CHUNK_EVENTS):
            if progress is not None:
                progress(*sim.progress())
    except _core.ConfigError as e:  # a watchdog stopped the run (no progress, memory): one line saying why
        raise user_error(e) from None
    if progress is not None:
        progress(*sim.progress())
    wall = time.perf_counter() - t0
    raw = sim.results()
    raw["stats"] = json.loads(raw["stats"])
    _check_conservation(raw["stats"])
    return raw, wall


def _check_conservation(stats: dict[str, Any]) -> None:
    """Every run checks that wire bytes are conserved: created = delivered + dropped + still in the network
    (the last counted packet by packet). A violation is a bug in dclb, never a user error."""
    created = stats["wire_bytes_created"]
    accounted = stats["wire_bytes_delivered"] + stats["wire_bytes_dropped"] + stats["wire_bytes_in_flight"]
    if created != accounted:
        raise RuntimeError(f"byte conservation violated: created {created} != delivered + dropped + in flight {accounted}")


def load_ratios(config: dict[str, Any], flows: "pa.Table | Columns", sim_time_us: float) -> dict[str, float]:
    """How much of its nominal load a run's Poisson traffic offered and how much the fabric carried.

    A Poisson source's arrival rate is its load times its senders' capacity over the workload's mean size.
    Two things keep a finite run below that load, and both are worst on heavy-tailed workloads:

    * ``offered_load_ratio``: the flow sizes drawn. Bytes offered per unit time are the nominal load times
      (mean drawn size / workload mean); a few hundred flows may miss the rare giant flows that carry most
      of the bytes, or draw one too many.
    * ``carried_load_ratio``: the start from an empty network. Over the arrival window (first to last
      arrival of each source), the bits delivered divided by the bits the nominal load offers in that
      window. A flow's delivered bytes are spread evenly over its life (start to finish, or to the end of
      the run) -- an estimate. A giant flow that arrives late is mostly carried after the window, so a
      short window on data mining carries a fraction of the load even when the sizes drawn are right.

    Each is a ratio of sums over the Poisson sources with a load and at least two flows; NaN without one.
    ``flows`` is a pyarrow Table or a :class:`dclb.tables.Columns`."""
    import numpy as np

    from . import _core
    from .tables import columns_of

    nan = float("nan")
    facts = _core.describe_sources(json.dumps(config))
    flows = columns_of(flows)
    if flows.num_rows < 2:
        return {"offered_load_ratio": nan, "carried_load_ratio": nan}
    source = flows.ints("source")
    size = flows.ints("size_bytes").astype(float)
    start = flows.floats("start_us")
    finish = flows.floats("finish_us")  # NaN for a flow that did not finish
    end = np.where(np.isnan(finish), sim_time_us, finish)
    delivered = flows.ints("bytes_delivered").astype(float)
    nominal_rate = drawn_rate = nominal_bits = carried_bits = 0.0
    for i, (src, fact) in enumerate(zip(config.get("sources", []), facts)):
        offered_bps, mean = fact.get("offered_bps") or 0.0, fact.get("mean_bytes") or 0.0
        mine = source == i
        if src.get("pattern") != "poisson" or offered_bps <= 0 or mean <= 0 or mine.sum() < 2:
            continue
        nominal_rate += offered_bps
        drawn_rate += offered_bps * float(size[mine].mean()) / mean
        w0, w1 = float(start[mine].min()), float(start[mine].max())
        life = np.maximum(end[mine] - start[mine], 1e-9)
        inside = np.clip(np.minimum(end[mine], w1) - np.maximum(start[mine], w0), 0.0, None) / life
        nominal_bits += offered_bps * (w1 - w0) * 1e-6
        carried_bits += float((delivered[mine] * inside).sum()) * 8.0
    return {
        "offered_load_ratio": drawn_rate / nominal_rate if nominal_rate > 0 else nan,
        "carried_load_ratio": carried_bits / nominal_bits if nominal_bits > 0 else nan,
    }


def _check_out(out: Any) -> Path | None:
    """``out`` as a path, or None (store nothing); anything else is a UserError saying what is accepted."""
    if out is None:
        return None
    if isinstance(out, (str, os.PathLike)) and str(out):
        return Path(out)
    shown = "the empty text" if out == "" else f"{type(out).__name__} {out!r}"
    raise UserError(f"out: expected a results directory (a str or os.PathLike path), or None to store nothing; got {shown}")


def check_writable(out: Path, label: str = "out") -> None:
    """Raises UserError unless the results directory ``out`` can be written (or created): checked before the
    run, so that an output that cannot be written costs no simulation (:func:`dclb.paths.output_dir`)."""
    from .paths import output_dir

    output_dir(out, label)


class SourceWithoutFlows(UserError, UserWarning):
    """A source started no flow in a run that other sources gave work (its poisson arrivals, drawn, fell
    outside its window). Issued as a warning -- the run is still what the other sources made of it -- that a
    caller turns into this error with ``strict=True`` (``--strict`` on the command line: one line, exit
    status 2, nothing stored), or with a warnings filter (``warnings.simplefilter("error",
    dclb.SourceWithoutFlows)``)."""


def _check_made_flows(sc: Scenario, flows: "Columns", sim_time_us: float, strict: bool = False) -> None:
    """What a run that some source started no flow in is: an error when no source started one (the run has
    nothing to report: it is refused, not stored), else a :class:`SourceWithoutFlows` warning naming the
    source. The engine's check before the run makes sure each source is expected to start one;
    a poisson count is random, so this is where a shortfall shows."""
    import numpy as np

    n_sources = len(sc.sources())
    expected = {}
    if sc._resolution is not None:
        from .preview import estimate

        expected = {i: e.started for i, e in enumerate(estimate(sc, sc._resolution).sources)}
    source = flows.ints("source")
    start = flows.floats("start_us")
    started = np.bincount(source[start < sim_time_us] if np.isfinite(sim_time_us) else source, minlength=n_sources)
    idle = [i for i, count in enumerate(started[:n_sources]) if count == 0]
    for i in idle:
        field = "traffic" if not sc.traffic.sources else f"traffic.sources[{i}]"
        about = f"; about {expected[i]:.2g} were expected" if i in expected else ""
        if len(idle) == n_sources:
            raise ScenarioError(
                f"{field}: started no flow in this run (seed {sc.seed}{about}), nor did any other source, so the run "
                "has nothing to report and is not stored; give the source a longer arrival window, a higher load or an earlier start"
            )
        problem = SourceWithoutFlows(
            f"{field}: started no flow in this run (seed {sc.seed}{about})"
            + (", so the run is not stored (strict)" if strict else ": the results are those of the other sources alone")
        )
        if strict:
            raise problem
        warnings.warn(problem, stacklevel=3)


def run(
    scenario: Scenario | str | os.PathLike[str] | Mapping[str, Any],
    out: str | os.PathLike[str] | None = "dclb-results",
    progress: Optional[Callable[[float, int, int, int], None]] = None,
    *,
    overrides: Sequence[str] | None = None,
    seed: int | None = None,
    catalog: bool = True,
    config: Optional[dict[str, Any]] = None,
    on_stored: Optional[Callable[["RunResult"], None]] = None,
    strict: bool = False,
) -> RunResult:
    """Simulates a scenario and, unless ``out`` is None, stores the run under ``out`` (folder + catalog row).

    ``scenario``: a :class:`~dclb.scenario.Scenario`, the path of a scenario file, or raw scenario data (a
    dict of tables); ``overrides`` (``["lb.scheme=rps"]``, as ``--set`` takes them) and ``seed`` are applied
    to it. ``out`` is checked before anything is simulated (an output that cannot be written is found before
    the work). ``progress`` is called between chunks of engine events with (simulated time in us, events,
    flows ended, flows in all).

    With ``catalog=False`` only the run folder is written (sweep workers do this; the process that
    coordinates the sweep records the catalog rows). ``config``: see :func:`simulate`. ``on_stored`` is called
    once the run is stored, before a stop signal that arrived while it was being stored is delivered: the
    folder and the catalog row are written as one step that a signal does not cut, so a caller that is
    interrupted there can say truthfully that the run was stored.

    A run in which no source started a flow is an error; one in which some source started none is a
    :class:`SourceWithoutFlows` warning, or with ``strict`` that error (nothing is stored)."""
    sc = scenario_from(scenario, overrides, seed)
    out_path = _check_out(out)
    if progress is not None and not callable(progress):
        raise UserError(f"progress: expected a callable or None, got {type(progress).__name__}")
    if out_path is not None:
        check_writable(out_path)
    started = time.time()
    config = config if config is not None else engine_config(sc)
    raw, wall = simulate(sc, progress, config)
    from .store.records import RunRecord, utc_now
    from .summary import summarize
    from .tables import EngineTable

    stats = {k: v for k, v in raw["stats"].items() if not k.startswith("flows_")}  # summary recounts flows
    stats["wall_s"] = wall
    tables = {name: EngineTable(raw[name]) for name in ("flows", "ports", "switches", "samples")}
    flows = tables["flows"]
    _check_made_flows(sc, flows, float(stats.get("sim_time_us", float("inf"))), strict)
    stats.update(load_ratios(config, flows, float(stats.get("sim_time_us", float("nan")))))
    summary = summarize(flows, tables["ports"], stats, short_threshold_bytes=sc.run.short_threshold_bytes)
    record = RunRecord(
        run_id=run_id_for(sc), name=sc.name, status="completed", seed=sc.seed, scenario=sc.resolved(),
        summary=summary, started_at=utc_now(started), wall_s=wall,
    )
    result = RunResult(record.run_id, sc, tables, stats, summary, record)
    if out_path is not None:
        from .store import Store, open_store

        store: Store = open_store(out_path, create=True)
        stored = {name: tables[name].to_arrow() for name in ("flows", "ports", "switches")}
        if tables["samples"].num_rows:
            stored["samples"] = tables["samples"].to_arrow()
        # The folder and its catalog row are one step: a stop signal waits until both are written (and
        # on_stored has heard of it), then is delivered as it would have been.
        with interrupts.deferred():
            result.path = store.write_run(result.run_id, result.record, stored)
            if catalog:
                store.record_in_catalog(result.record)
            if on_stored is not None:
                on_stored(result)
    return result
