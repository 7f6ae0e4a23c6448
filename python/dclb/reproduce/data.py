"""A figure's data: one row per (series, grid point, seed) with every metric its panels draw and its claims read.

Rows whose run failed or is missing from the store keep their place with ``status`` saying so and no metric
values, so that the drawing skips them and a verdict that needs them says it cannot tell. Per-flow, port, switch and
sample tables are read only for metrics that need them, once per run.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from .plan import PaperPlan
from .spec import Figure, Metric


#: Columns every figure frame takes from its runs' summaries: the load the whole fabric carried in the window over
#: the nominal one, the measured source's own share, and the measured flows still running when a drained run stopped
#: (NaN where a run has none of these: no poisson source, no window).
RUN_COLUMNS = ("fabric_carried_load_ratio", "window_carried_load_ratio", "window_flows_censored")


def figure_metrics(fig: Figure) -> list[Metric]:
    """The metrics of a figure's frame: those its panels draw and those its claims read (time series aside)."""
    from .claims import metrics_of

    seen: dict[str, Metric] = {}
    for m in [*(panel.y for panel in fig.panels), *metrics_of(fig.claims)]:
        if not m.needs_samples:
            seen.setdefault(m.key, m)
    return list(seen.values())


class RunReader:
    """Reads records and tables of runs from a store, each once."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._records: dict[str, dict[str, Any] | None] = {}
        self._flows: dict[str, pd.DataFrame] = {}
        self._samples: dict[str, pd.DataFrame] = {}
        self._switches: dict[str, pd.DataFrame] = {}
        self._ports: dict[str, pd.DataFrame] = {}

    def record(self, run_id: str) -> dict[str, Any] | None:
        if run_id not in self._records:
            self._records[run_id] = self.store.read_record(run_id) if self.store.is_complete(run_id) else None
        return self._records[run_id]

    def status(self, run_id: str) -> str:
        return self.store.status(run_id) or "missing"

    def flows(self, run_id: str) -> pd.DataFrame:
        """The run's measured flows: a run with a warm-up or a stationary start also carries flows that are load,
        not measurement (``measured`` false), and no metric reads them."""
        if run_id not in self._flows:
            f = self.store.flows(run_id)
            if "measured" in f.columns:
                f = f[f["measured"].astype(bool)]
            self._flows[run_id] = f
        return self._flows[run_id]

    def samples(self, run_id: str) -> pd.DataFrame:
        if run_id not in self._samples:
            self._samples[run_id] = self.store.samples(run_id)
        return self._samples[run_id]

    def switches(self, run_id: str) -> pd.DataFrame:
        if run_id not in self._switches:
            self._switches[run_id] = self.store.switches(run_id)
        return self._switches[run_id]

    def value(self, run_id: str, metric: Metric) -> float:
        rec = self.record(run_id)
        if rec is None:
            return math.nan
        if metric.summary is not None:
            v = (rec.get("summary") or {}).get(metric.summary)
            return math.nan if v is None else float(v) * metric.factor
        if metric.flows is not None:
            return float(metric.flows(self.flows(run_id))) * metric.factor
        if metric.switches is not None:
            return float(metric.switches(self.switches(run_id))) * metric.factor
        if metric.run is not None:
            return float(metric.run(RunTables(self, run_id))) * metric.factor
        raise ValueError(f"metric {metric.key} has neither a summary key nor a flow, switch or run function")

    def release(self, run_id: str) -> None:
        """Forgets a run's tables (its record stays): a paper-scale figure reads hundreds of per-flow tables,
        and holding them all would grow with runs x flows."""
        for cache in (self._flows, self._samples, self._switches, self._ports):
            cache.pop(run_id, None)

    def ports(self, run_id: str) -> pd.DataFrame:
        if run_id not in self._ports:
            self._ports[run_id] = self.store.ports(run_id)
        return self._ports[run_id]


class RunTables:
    """One run's record and tables for a :class:`~dclb.reproduce.spec.Metric` ``run`` function: ``record``,
    ``summary``, ``flows``, ``ports`` and ``samples``, each read (once, through the reader) when first used."""

    def __init__(self, reader: RunReader, run_id: str) -> None:
        self.reader, self.run_id = reader, run_id

    @property
    def record(self) -> dict[str, Any]:
        return self.reader.record(self.run_id) or {}

    @property
    def summary(self) -> dict[str, Any]:
        return self.record.get("summary") or {}

    @property
    def flows(self) -> pd.DataFrame:
        return self.reader.flows(self.run_id)

    @property
    def ports(self) -> pd.DataFrame:
        return self.reader.ports(self.run_id)

    @property
    def samples(self) -> pd.DataFrame:
        return self.reader.samples(self.run_id)


def figure_frame(pp: PaperPlan, fig: Figure, reader: RunReader) -> pd.DataFrame:
    """The rows of ``fig``: ``series``, its grid fields, ``seed``, ``run_id``, ``status`` and one column per
    metric of its panels."""
    metrics = figure_metrics(fig)
    rows = []
    for e in pp.entries:
        if e.figure != fig.id:
            continue
        row: dict[str, Any] = {"series": e.series, **e.values, "seed": e.seed, "run_id": e.run_id}
        complete = reader.record(e.run_id) is not None
        row["status"] = "completed" if complete else reader.status(e.run_id)
        summary = ((reader.record(e.run_id) or {}).get("summary") or {}) if complete else {}
        for key in RUN_COLUMNS:  # what the run carried, beside what it measured (every figure's data has them)
            v = summary.get(key)
            row[key] = float(v) if isinstance(v, (int, float)) else math.nan
        for m in metrics:
            row[m.key] = reader.value(e.run_id, m) if complete else math.nan
            if m.ideal is not None:  # what the metric would be with every flow at its ideal FCT (headroom)
                row[f"{m.key}@ideal"] = reader.value(e.run_id, m.ideal) if complete else math.nan
        reader.release(e.run_id)
        rows.append(row)
    return pd.DataFrame(rows)


def timeseries_frame(pp: PaperPlan, fig: Figure, metric: Metric, reader: RunReader) -> pd.DataFrame:
    """``series``, grid fields, ``seed``, ``time_us`` and ``value`` from each run's sample table."""
    assert metric.samples is not None
    parts = []
    for e in pp.entries:
        if e.figure != fig.id or reader.record(e.run_id) is None:
            continue
        ts = metric.samples(reader.samples(e.run_id))
        reader.release(e.run_id)
        if ts is None or not len(ts):
            continue
        ts = ts.assign(series=e.series, seed=e.seed, **{k: v for k, v in e.values.items()})
        parts.append(ts)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["series", "seed", "time_us", "value"])


def _matches(frame: pd.DataFrame, where: dict[str, Any]) -> pd.Series:
    keep = pd.Series(True, index=frame.index)
    for k, v in where.items():
        if k not in frame.columns:
            raise ValueError(f"panel filter on {k!r}, which is not a grid field of the figure ({', '.join(frame.columns)})")
        col = frame[k]
        keep &= col.map(lambda c: c == v or (isinstance(c, float) and isinstance(v, (int, float)) and abs(c - v) < 1e-9))
    return keep


def normalized(frame: pd.DataFrame, metric: str, to_series: str) -> pd.DataFrame:
    """``metric`` divided by the value of series ``to_series`` at the same grid point and seed."""
    keys = point_keys(frame)
    base = frame[frame["series"] == to_series][[*keys, metric]].rename(columns={metric: "_base"})
    out = frame.merge(base, on=keys, how="left")
    out[metric] = out[metric] / out["_base"]
    return out.drop(columns="_base")


def normalized_at(frame: pd.DataFrame, metric: str, at: dict[str, Any]) -> pd.DataFrame:
    """``metric`` divided by the value of the same series and seed at the grid point ``at`` (the other grid
    fields equal)."""
    keys = ["series", *(k for k in point_keys(frame) if k not in at)]
    base = frame[_matches(frame, at)][[*keys, metric]].rename(columns={metric: "_base"})
    out = frame.merge(base, on=keys, how="left")
    out[metric] = out[metric] / out["_base"]
    return out.drop(columns="_base")


def point_keys(frame: pd.DataFrame) -> list[str]:
    """The columns that identify a run within a series: the grid fields (dotted scenario paths) and the seed."""
    return [c for c in frame.columns if "." in c or c == "seed"]


def panel_table(
    frame: pd.DataFrame, metric: str, x: str | None, where: dict[str, Any] | None = None, normalize_to: str | None = None, normalize_at: dict[str, Any] | None = None
) -> pd.DataFrame:
    """Mean over seeds, 95% CI half-width and count of ``metric`` per ``series`` (and ``x``), after the
    filter ``where`` and the normalisation to ``normalize_to`` (a series) or ``normalize_at`` (a grid point)."""
    from ..analysis import aggregate, physical_range

    if frame.empty:
        return pd.DataFrame(columns=["series", *([x] if x else []), "mean", "ci", "n", "lo", "hi"])
    f = frame[_matches(frame, dict(where or {}))] if where else frame
    if normalize_to is not None:
        f = normalized(f, metric, normalize_to)
    if normalize_at:
        f = normalized_at(f, metric, dict(normalize_at))
    order = list(dict.fromkeys(frame["series"]))
    # A ratio to another series or point is only known to be >= 0; otherwise the metric's own range holds.
    bounds = physical_range(metric, ratio=normalize_to is not None or bool(normalize_at))
    table = aggregate(f, ["series", *([x] if x else [])], metric, bounds)
    table["_order"] = table["series"].map(order.index)
    return table.sort_values(["_order", *([x] if x else [])]).drop(columns="_order").reset_index(drop=True)
