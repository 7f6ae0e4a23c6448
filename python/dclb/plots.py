"""Figures from a result store, drawn with matplotlib (Agg backend, no display needed).

Kinds (``dclb plot DIR --kind ...``):

* ``line`` -- a metric of the catalog (``--y short_afct_us``) against a scenario field (``--x traffic.load``),
  one line per ``--hue`` value: the mean over seeds with a 95 % confidence interval (see
  :mod:`dclb.analysis`), clipped to the values the metric can take and drawn only from 3 seeds on; the
  figure's note says how many seeds each point averages (each point is labelled with its count when they
  differ) and, below 3, that there is no interval. A non-numeric ``--x`` is drawn at category positions. The points of different
  lines are shifted sideways by about 1 % of the x range so that their error bars do not hide each other.
* ``cdf`` -- the empirical CDF of a per-flow column (``--y fct_us`` by default, or ``slowdown``) over the
  completed TCP flows, pooled over seeds, one line per hue.
* ``bins`` -- the mean (``--stat p99``: 99th percentile) of a per-flow column (default ``slowdown``) by flow
  size bin, averaged over seeds with a confidence interval.
* ``timeseries`` -- the sampler's time series (the runs' ``samples`` tables): ``queue_bytes`` (ports, default),
  ``throughput_gbps`` (ports, from the bytes sent per interval) or ``bytes`` (flows, delivered); the mean
  (``--stat max``/``sum``) over the sampled ports or flows, averaged over seeds.

Every kind takes ``--facet FIELD`` (one panel per value), ``--where`` (a SQL condition on the catalog to
select runs) and ``line``/``bins`` take ``--normalize-to FIELD=VALUE``. Scenario fields that vary but are
not the x axis, hue or facet split the lines further (their values are added to the legend), so runs that
differ in more than their seed are never averaged together.
"""

from __future__ import annotations

import io
import math
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .analysis import (
    MIN_SEEDS_FOR_CI,
    aggregate,
    field_values,
    is_numeric,
    label_of,
    load_runs,
    normalize,
    physical_range,
    require_columns,
    varying_fields,
)
from .errors import UserError
from .paths import output_file
from .errors import StoreError

KINDS = ("line", "cdf", "bins", "timeseries")
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p"]
LINESTYLES = ["-", "--", "-.", ":"]
#: Size bins of the ``bins`` kind: upper edges in bytes (right-closed) and labels.
SIZE_BIN_EDGES = [0, 10e3, 100e3, 1e6, 10e6, math.inf]
SIZE_BIN_LABELS = ["≤10 KB", "10–100 KB", "100 KB–1 MB", "1–10 MB", ">10 MB"]
PANEL_SIZE = (4.6, 3.3)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _line_label(key: tuple, fields: Sequence[str], hue: str | None) -> str:
    parts = []
    for f, v in zip(fields, key):
        parts.append(_fmt(v) if f == hue else f"{f}={_fmt(v)}")
    return ", ".join(parts) if parts else "all runs"


class _Styles:
    """A fixed style (colour, marker, line style) per line label, the same in every panel."""

    def __init__(self) -> None:
        self.known: dict[str, dict[str, Any]] = {}

    def __call__(self, label: str) -> dict[str, Any]:
        if label not in self.known:
            i = len(self.known)
            self.known[label] = {
                "color": f"C{i % 10}",
                "marker": MARKERS[i % len(MARKERS)],
                "linestyle": LINESTYLES[(i // 10) % len(LINESTYLES)],
            }
        return self.known[label]


#: Most lines (or CDF curves) one panel may have: beyond, the legend would dwarf the figure.
MAX_LINES = 20


def _split_fields(runs: pd.DataFrame, used: Sequence[str | None], hue: str | None) -> list[str]:
    """Fields that tell the lines apart: the hue first, then any other varying field not otherwise used.

    Runs that differ in more than their seed are never averaged together, so every such field splits the
    lines; when that makes more than :data:`MAX_LINES` lines (a store of several scenarios), the figure is
    refused, naming the fields, rather than drawn with a legend larger than its panels."""
    rest = [f for f in varying_fields(runs) if f not in used and f != hue]
    split = ([hue] if hue else []) + rest
    lines = len(runs.groupby(split, dropna=False)) if split else 1
    if lines > MAX_LINES:
        fields = ", ".join(split)
        raise UserError(
            f"the selected runs differ in {len(split)} field{'s' if len(split) != 1 else ''} besides the axes ({fields}), "
            f"which makes {lines} lines (at most {MAX_LINES}); select runs with --where, or draw one of them as --hue or --facet"
        )
    return split


class RunsLeftOut(UserWarning):
    """Some selected runs were left out of a figure (the text says which and why)."""


def _with_values(runs: pd.DataFrame, axes: dict[str, str], store: Any) -> pd.DataFrame:
    """``runs`` without those that have no value on one of ``axes`` (option -> column: ``--x`` on runs of a
    scenario without that field, a metric that is n/a in a run), named in a warning; a UserError if no run
    is left."""
    names = list(axes.values())
    keep = runs[names].notna().all(axis=1)
    if keep.all():
        return runs
    if not keep.any():
        option, name = next(((o, n) for o, n in axes.items() if runs[n].isna().all()), next(iter(axes.items())))
        raise UserError(
            f"{option} {name}: no selected run of {store.path} has a value for it "
            "(n/a in every run, or a field their scenarios do not have)"
        )
    left = runs.loc[~keep, "run_id"].tolist()
    missing = [n for n in names if runs.loc[~keep, n].isna().any()]
    warnings.warn(
        f"{len(left)} run{'s' if len(left) != 1 else ''} left out: no value for {', '.join(missing)} "
        f"({', '.join(left[:3])}{', ...' if len(left) > 3 else ''})",
        RunsLeftOut,
        stacklevel=3,
    )
    return runs[keep].reset_index(drop=True)


def _facets(frame: pd.DataFrame, facet: str | None) -> list[tuple[Any, pd.DataFrame]]:
    if not facet:
        return [(None, frame)]
    return [(value, frame[frame[facet].astype(str) == str(value)]) for value in field_values(frame, [facet])[facet]]


def _figure(n_panels: int, sharey: bool = False):
    plt = _pyplot()
    cols = min(n_panels, 3)
    rows = math.ceil(n_panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows), squeeze=False, sharey=sharey)
    flat = list(axes.flat)
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels]


def _finish(fig, axes, legend_title: str | None, title: str | None) -> None:
    for ax in axes:
        ax.grid(True, color="0.88", linewidth=0.6)
        ax.set_axisbelow(True)
    handles, labels, seen = [], [], set()
    for ax in axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in seen:
                seen.add(l)
                handles.append(h)
                labels.append(l)
    if title:
        fig.suptitle(title, fontsize=9, color="0.35")
    fig.tight_layout()
    if handles and not (len(handles) == 1 and labels[0] == "all runs"):
        # Outside the panels, on the right: it never covers data.
        fig.legend(handles, labels, title=legend_title, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=9, title_fontsize=9)


# --------------------------------------------------------------------------------------------------------
# line: metric vs parameter


def _draw_points(ax, table: pd.DataFrame, x: str, split: list[str], hue: str | None, styles: _Styles, categories: list[Any] | None) -> list[tuple[Any, Any, int]]:
    """Draws one line per key of ``split`` with its clipped interval (``lo``, ``hi`` of
    :func:`~dclb.analysis.aggregate`; none where they are NaN); returns (axes, (x, y), n) of every point."""
    points = []
    keys = [k if isinstance(k, tuple) else (k,) for k, _ in table.groupby(split, dropna=False, sort=True)] if split else [()]
    n = max(len(keys), 1)
    span = 0.0
    if categories is None and len(table):
        values = table[x].astype(float)
        span = float(values.max() - values.min())
    for i, key in enumerate(keys):
        part = table
        for f, v in zip(split, key):
            part = part[part[f].astype(str) == str(v)]
        label = _line_label(key, split, hue)
        style = styles(label)
        if categories is None:
            part = part.sort_values(x)
            xs = part[x].astype(float).to_numpy() + (i - (n - 1) / 2) * span * 0.012
        else:
            position = {str(c): j for j, c in enumerate(categories)}
            dodge = (i - (n - 1) / 2) * min(0.5 / n, 0.12)
            part = part.assign(__pos=[position[str(v)] for v in part[x]]).sort_values("__pos")
            xs = part["__pos"].to_numpy(dtype=float) + dodge
        means = part["mean"].to_numpy(dtype=float)
        # Asymmetric bars from the clipped interval; NaN (fewer than 3 seeds) draws no bar at that point.
        below, above = means - part["lo"].to_numpy(dtype=float), part["hi"].to_numpy(dtype=float) - means
        ax.errorbar(
            xs, means, yerr=np.vstack([below, above]),
            label=label, capsize=3, markersize=6, linewidth=1.4, elinewidth=1.0,
            linestyle=style["linestyle"] if categories is None else "none",
            marker=style["marker"], color=style["color"],
        )
        points.extend((ax, (px, py), int(n)) for px, py, n in zip(xs, means, part["n"]) if np.isfinite(py))
    if categories is not None:
        ax.set_xticks(range(len(categories)), [_fmt(c) for c in categories], fontsize=8)
    return points


def _seeds_note(points: list[tuple[Any, Any, int]], prefix: str = "") -> str:
    """The figure's note on how many seeds its points average (n); labels each point with its n when they
    differ; says when there are too few seeds for an interval."""
    counts = sorted({n for _, _, n in points})
    if not counts:
        return prefix
    if len(counts) > 1:
        for ax, xy, n in points:
            ax.annotate(f"n={n}", xy, xytext=(4, 4), textcoords="offset points", fontsize=7, color="0.35")
    seeds = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    text = f"{prefix}mean over n = {seeds} seed{'s' if counts[-1] > 1 else ''} per point"
    if counts[-1] < MIN_SEEDS_FOR_CI:
        return f"{text}; fewer than {MIN_SEEDS_FOR_CI} seeds: no confidence interval"
    if counts[0] < MIN_SEEDS_FOR_CI:
        return f"{text}; 95% CI where n ≥ {MIN_SEEDS_FOR_CI}"
    return f"{text}, 95% CI"


def plot_line(store: Any, x: str, y: str, hue: str | None = None, facet: str | None = None, normalize_to: str | None = None, where: str | None = None):
    runs = load_runs(store, where)
    if runs.empty:
        raise UserError(f"{store.path}: no completed runs to plot")
    require_columns(runs, [x, y, hue, facet])
    runs = _with_values(runs, {"--x": x, "--y": y}, store)
    if not is_numeric(runs[y]):
        raise UserError(f"--y {y}: not a numeric metric")
    if normalize_to:
        runs = normalize(runs, y, normalize_to)
        if runs.empty:
            raise UserError(f"--normalize-to {normalize_to}: no run has a baseline partner (same seed and other fields)")
    split = _split_fields(runs, [x, facet], hue)
    categories = None if is_numeric(runs[x]) else field_values(runs, [x])[x]
    panels = _facets(runs, facet)
    fig, axes = _figure(len(panels), sharey=True)
    styles = _Styles()
    points = []
    bounds = physical_range(y, ratio=bool(normalize_to))
    for ax, (value, frame) in zip(axes, panels):
        table = aggregate(frame, [*split, x], y, bounds)
        points += _draw_points(ax, table, x, split, hue, styles, categories)
        ax.set_xlabel(label_of(x))
        if facet:
            ax.set_title(f"{facet} = {_fmt(value)}", fontsize=10)
    ylabel = label_of(y) if not normalize_to else f"{label_of(y, with_unit=False)}\nrelative to {normalize_to}"
    for ax in axes[:: min(len(axes), 3)]:
        ax.set_ylabel(ylabel)
    if normalize_to:
        for ax in axes:
            ax.axhline(1.0, color="0.5", linewidth=0.8, linestyle=":")
    _finish(fig, axes, hue or (", ".join(split) if split else None), _seeds_note(points))
    return fig


# --------------------------------------------------------------------------------------------------------
# Per-flow figures


def _flow_rows(store: Any, runs: pd.DataFrame, column: str) -> pd.DataFrame:
    """Completed TCP flows of ``runs`` with ``run_id``, ``size_bytes`` and ``column``."""
    try:
        flows = store.flows(list(runs["run_id"]), columns=sorted({column, "size_bytes", "state", "transport"}))
    except StoreError as error:
        raise UserError(f"--y {column}: {error}") from None
    if flows.empty:
        raise UserError(f"{store.path}: the selected runs have no flows table")
    done = flows[(flows["state"] == "completed") & (flows["transport"] != "udp")]
    return done[["run_id", "size_bytes", column]].reset_index(drop=True)


def plot_cdf(store: Any, y: str = "fct_us", hue: str | None = None, facet: str | None = None, where: str | None = None):
    runs = load_runs(store, where)
    if runs.empty:
        raise UserError(f"{store.path}: no completed runs to plot")
    require_columns(runs, [hue, facet])
    split = _split_fields(runs, [facet], hue)
    flows = _flow_rows(store, runs, y).merge(runs[["run_id", *dict.fromkeys([*split, *([facet] if facet else [])])]], on="run_id")
    panels = _facets(flows, facet)
    fig, axes = _figure(len(panels), sharey=True)
    styles = _Styles()
    for ax, (value, frame) in zip(axes, panels):
        groups = frame.groupby(split, dropna=False, sort=True) if split else [((), frame)]
        for key, part in groups:
            key = key if isinstance(key, tuple) else (key,)
            values = np.sort(part[y].to_numpy(dtype=float))
            values = values[np.isfinite(values)]
            if values.size == 0:
                continue
            label = _line_label(key, split, hue)
            style = styles(label)
            frac = np.arange(1, values.size + 1) / values.size
            marks = np.unique(np.searchsorted(frac, [0.1, 0.3, 0.5, 0.7, 0.9, 0.99]).clip(0, values.size - 1))
            ax.step(values, frac, where="post", label=label, color=style["color"], linestyle=style["linestyle"], marker=style["marker"], markevery=list(marks), markersize=5, linewidth=1.3)
        if (frame[y] > 0).any():
            ax.set_xscale("log")
        ax.set_xlabel(label_of(y))
        ax.set_ylim(0, 1.01)
        if facet:
            ax.set_title(f"{facet} = {_fmt(value)}", fontsize=10)
    for ax in axes[:: min(len(axes), 3)]:
        ax.set_ylabel("Fraction of completed flows")
    _finish(fig, axes, hue or (", ".join(split) if split else None), "CDF over completed TCP flows, seeds pooled")
    return fig


def plot_bins(store: Any, y: str = "slowdown", hue: str | None = None, facet: str | None = None, normalize_to: str | None = None, where: str | None = None, stat: str = "mean"):
    runs = load_runs(store, where)
    if runs.empty:
        raise UserError(f"{store.path}: no completed runs to plot")
    require_columns(runs, [hue, facet])
    if stat not in ("mean", "p99"):
        raise UserError(f"--stat {stat}: the bins kind takes mean or p99")
    flows = _flow_rows(store, runs, y)
    flows["size bin"] = pd.cut(flows["size_bytes"].astype(float), SIZE_BIN_EDGES, labels=SIZE_BIN_LABELS, right=True).astype(str)
    reduce = (lambda s: float(np.nanmean(s)) if len(s) else math.nan) if stat == "mean" else (lambda s: float(np.nanpercentile(s, 99)) if len(s) else math.nan)
    per_run = flows.groupby(["run_id", "size bin"])[y].agg(reduce).reset_index()
    per_run = per_run.merge(runs.drop(columns=[c for c in (y, "size bin") if c in runs.columns]), on="run_id")
    metric = y
    if normalize_to:
        # Normalise bin by bin: the baseline of a bin is the same bin of the baseline run.
        parts = [normalize(group.drop(columns="size bin"), metric, normalize_to).assign(**{"size bin": b}) for b, group in per_run.groupby("size bin")]
        per_run = pd.concat(parts, ignore_index=True) if parts else per_run.iloc[0:0]
        if per_run.empty:
            raise UserError(f"--normalize-to {normalize_to}: no run has a baseline partner (same seed and other fields)")
    categories = [b for b in SIZE_BIN_LABELS if b in set(per_run["size bin"])]
    split = _split_fields(runs, [facet], hue)
    panels = _facets(per_run, facet)
    fig, axes = _figure(len(panels), sharey=True)
    styles = _Styles()
    points = []
    bounds = physical_range(metric, ratio=bool(normalize_to))
    for ax, (value, frame) in zip(axes, panels):
        table = aggregate(frame, [*split, "size bin"], metric, bounds)
        points += _draw_points(ax, table, "size bin", split, hue, styles, categories)
        ax.set_xlabel("Flow size")
        if normalize_to:
            ax.axhline(1.0, color="0.5", linewidth=0.8, linestyle=":")
        if facet:
            ax.set_title(f"{facet} = {_fmt(value)}", fontsize=10)
    name = label_of(y, with_unit=not normalize_to)
    ylabel = f"{'Mean' if stat == 'mean' else 'p99'} {name[:1].lower() + name[1:]}"
    if normalize_to:
        ylabel = f"{ylabel}\nrelative to {normalize_to}"
    for ax in axes[:: min(len(axes), 3)]:
        ax.set_ylabel(ylabel)
    _finish(fig, axes, hue or (", ".join(split) if split else None), _seeds_note(points, f"per-run {stat} per size bin; "))
    return fig


# --------------------------------------------------------------------------------------------------------
# Time series from the sampler


def _series(samples: pd.DataFrame, y: str, stat: str) -> pd.DataFrame:
    """One run's samples of one kind reduced to ``y`` per sample time (``stat`` over the ports or flows)."""
    samples = samples.sort_values(["id", "time_us"])
    if y == "throughput_gbps":
        dt = samples.groupby("id")["time_us"].diff()
        db = samples.groupby("id")["bytes"].diff()
        samples = samples.assign(throughput_gbps=db * 8 / dt / 1e3).dropna(subset=["throughput_gbps"])
    return samples.groupby("time_us")[y].agg(stat).reset_index()


def plot_timeseries(store: Any, y: str = "queue_bytes", hue: str | None = None, facet: str | None = None, where: str | None = None, stat: str = "mean"):
    choices = {"queue_bytes": "port", "throughput_gbps": "port", "bytes": "flow"}
    if y not in choices:
        raise UserError(f"--y {y}: the timeseries kind takes {', '.join(choices)}")
    if stat not in ("mean", "max", "sum"):
        raise UserError(f"--stat {stat}: the timeseries kind takes mean, max or sum")
    runs = load_runs(store, where)
    if runs.empty:
        raise UserError(f"{store.path}: no completed runs to plot")
    require_columns(runs, [hue, facet])
    kind = choices[y]
    samples = store.samples(list(runs["run_id"]))
    if "kind" in samples:
        samples = samples[samples["kind"] == kind]
    frames = [_series(part, y, stat).assign(run_id=run_id) for run_id, part in samples.groupby("run_id", sort=False)]
    if not frames:
        raise UserError(f"{store.path}: the selected runs have no {kind} samples; add a [run.sampler] table to the scenario")
    split = _split_fields(runs, [facet], hue)
    samples = pd.concat(frames, ignore_index=True).merge(runs[["run_id", *dict.fromkeys([*split, *([facet] if facet else [])])]], on="run_id")
    panels = _facets(samples, facet)
    fig, axes = _figure(len(panels), sharey=True)
    styles = _Styles()
    for ax, (value, frame) in zip(axes, panels):
        groups = frame.groupby(split, dropna=False, sort=True) if split else [((), frame)]
        for key, part in groups:
            key = key if isinstance(key, tuple) else (key,)
            series = part.groupby("time_us")[y].mean()
            label = _line_label(key, split, hue)
            style = styles(label)
            ax.plot(series.index / 1e3, series.to_numpy(), label=label, color=style["color"], linestyle=style["linestyle"], marker=style["marker"], markevery=max(1, len(series) // 8), markersize=5, linewidth=1.2)
        ax.set_xlabel("Time (ms)")
        if facet:
            ax.set_title(f"{facet} = {_fmt(value)}", fontsize=10)
    what = {"port": "sampled ports", "flow": "sampled flows"}[kind]
    for ax in axes[:: min(len(axes), 3)]:
        ax.set_ylabel(f"{label_of(y)}\n{stat} over {what}")
    _finish(fig, axes, hue or (", ".join(split) if split else None), "sampler time series, mean over seeds")
    return fig


# --------------------------------------------------------------------------------------------------------
# Entry point and output


def make_figure(store: Any, kind: str = "line", x: str | None = None, y: str | None = None, hue: str | None = None, facet: str | None = None, normalize_to: str | None = None, where: str | None = None, stat: str | None = None):
    """Builds one figure (a matplotlib Figure) of the given kind; see the module documentation."""
    if kind not in KINDS:
        raise UserError(f"--kind {kind}: expected one of {', '.join(KINDS)}")
    if kind == "line":
        if not x or not y:
            raise UserError("--x and --y: the line kind needs both (e.g. --x traffic.load --y short_afct_us)")
        return plot_line(store, x, y, hue, facet, normalize_to, where)
    if normalize_to and kind in ("cdf", "timeseries"):
        raise UserError(f"--normalize-to: not available for the {kind} kind")
    if kind == "cdf":
        return plot_cdf(store, y or "fct_us", hue, facet, where)
    if kind == "bins":
        return plot_bins(store, y or "slowdown", hue, facet, normalize_to, where, stat or "mean")
    return plot_timeseries(store, y or "queue_bytes", hue, facet, where, stat or "mean")


FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def save(fig, path: str | Path, dpi: int = 150) -> Path:
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UserError(f"--out {path}: the file name must end in .png, .svg or .pdf")
    output_file(path, "--out")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def png_bytes(fig, dpi: int = 110) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    _pyplot().close(fig)
    return buffer.getvalue()
