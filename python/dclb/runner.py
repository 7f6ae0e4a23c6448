"""Running one scenario: engine, progress, tables, summary, store.

:func:`run` validates nothing itself (a :class:`~dclb.scenario.Scenario` is already valid), builds the engine
config, and drives the engine in chunks of events with the GIL released, updating a progress bar between
chunks. The engine's tables come back as Arrow record batches (units in column names) and its statistics
as JSON.
The run is written to the result store only when it has finished: a failed or interrupted run leaves the
store as it was.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import pyarrow as pa

from .errors import ScenarioError
from .memory import memory_limit
from .scenario import Scenario, engine_config
from .store import RunRecord, Store, open_store, scenario_hash, utc_now
from .summary import summarize

#: Events per engine call between progress updates (about 0.1-0.3 s of work).
CHUNK_EVENTS = 2_000_000


@dataclass
class RunResult:
    run_id: str
    scenario: Scenario
    flows: pa.Table
    ports: pa.Table
    switches: pa.Table
    samples: pa.Table
    stats: dict[str, Any]
    summary: dict[str, Any]
    record: RunRecord
    path: Optional[Path] = None


def _table(batch: pa.RecordBatch) -> pa.Table:
    return pa.Table.from_batches([batch])


def run_id_for(sc: Scenario) -> str:
    """Stable id of a resolved scenario (seed included): the same scenario always maps to the same folder."""
    safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in sc.name)[:60] or "run"
    return f"{safe}-{scenario_hash(sc.resolved())[:12]}"


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
    # Engine messages name engine fields; the scenario's resolution, when this process made it, renames
    # them as the user wrote them (a sweep's worker gets the config alone and keeps the engine's names).
    user = sc._resolution.user_message if sc._resolution is not None else str
    try:
        # Held to the memory this machine (a sweep's worker, too) has now; see dclb.memory.
        sim = _core.Simulation(config, memory_limit())
    except ValueError as e:  # the engine's own validation: already one line naming the field
        raise ScenarioError(user(str(e))) from None
    try:
        while not sim.run(CHUNK_EVENTS):
            if progress is not None:
                progress(*sim.progress())
    except ValueError as e:  # a watchdog stopped the run (no progress, memory): one line saying why
        raise ScenarioError(user(str(e))) from None
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


def run(
    sc: Scenario,
    out: str | Path | None = "dclb-results",
    progress: Optional[Callable[[float, int, int, int], None]] = None,
    *,
    catalog: bool = True,
    config: Optional[dict[str, Any]] = None,
) -> RunResult:
    """Simulates ``sc`` and, unless ``out`` is None, stores the run under ``out`` (folder + catalog row).

    With ``catalog=False`` only the run folder is written (sweep workers do this; the process that
    coordinates the sweep records the catalog rows). ``config``: see :func:`simulate`."""
    started = utc_now()
    raw, wall = simulate(sc, progress, config)
    stats = {k: v for k, v in raw["stats"].items() if not k.startswith("flows_")}  # summary recounts flows
    stats["wall_s"] = wall
    flows = _table(raw["flows"])
    ports = _table(raw["ports"])
    switches = _table(raw["switches"])
    samples = _table(raw["samples"])
    summary = summarize(flows, ports, stats, short_threshold_bytes=sc.run.short_threshold_bytes)
    record = RunRecord(
        run_id=run_id_for(sc), name=sc.name, status="completed", seed=sc.seed, scenario=sc.resolved(),
        summary=summary, started_at=started, wall_s=wall,
    )
    result = RunResult(record.run_id, sc, flows, ports, switches, samples, stats, summary, record)
    if out is not None:
        store: Store = open_store(out, create=True)
        tables = {"flows": flows, "ports": ports, "switches": switches}
        if samples.num_rows:
            tables["samples"] = samples
        result.path = store.write_run(result.run_id, result.record, tables)
        if catalog:
            store.record_in_catalog(result.record)
    return result
