"""Draws a figure's panels side by side: the paper's axes, its schemes as series, its units.

Line panels show the mean over seeds with a 95% confidence band (t distribution) from three seeds on, clipped
to what the metric can be (``lo``, ``hi`` of :func:`dclb.analysis.aggregate`; the report states the seeds per
point); bar panels group one bar per series at each x value, with the interval as an error bar. A model panel draws the
model's curves as lines and the simulated means as markers of the same colour, with their intervals as error
bars. Time-series panels draw every series of one seed (the first), and say which in their title; the figure's
bar panels beside them carry the means over seeds.

A panel whose x axis is the nominal load (``traffic.load``) prints under each load the load the fabric carried
(the median over the point's runs, in the measurement window when the runs had one): a point that did not reach
its nominal load says so on the axis, where the eye reads the load.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..plots import _pyplot
from .data import RunReader, panel_table, timeseries_frame
from .plan import PaperPlan
from .spec import Figure, Panel


def _label(field: str | None, panel: Panel) -> str:
    if panel.xlabel:
        return panel.xlabel
    if field is None:
        return ""
    from ..analysis import label_of

    return label_of(field)


#: The x field whose ticks also print the load carried.
LOAD_AXIS = "traffic.load"


def _load_ticks(ax: Any, panel: Panel, carried: Mapping[float, float], positions: Sequence[float] | None = None, loads: Sequence[Any] | None = None) -> bool:
    """Labels the x ticks of a load axis ``nominal`` over ``(carried)``; ``positions`` are the ticks of a bar
    panel's groups (default: the loads themselves). False, and nothing changed, when the panel has no load axis
    or no carried load is known."""
    if panel.x != LOAD_AXIS or not carried:
        return False
    loads = sorted(carried) if loads is None else list(loads)
    ax.set_xticks(list(positions) if positions is not None else loads)
    ax.set_xticklabels([f"{x:g}\n({x * carried[x]:.2g})" if x in carried else f"{x:g}" for x in loads], fontsize=8)
    return True


def _ylabel(panel: Panel) -> str:
    if panel.normalize_to:
        return f"{panel.y.label.removesuffix(' (ms)').removesuffix(' (Gbps)')} / {panel.normalize_to}"
    if panel.normalize_at:
        at = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in panel.normalize_at.values())
        return f"{panel.y.label.removesuffix(' (ms)').removesuffix(' (Gbps)')} / at {at}"
    return panel.y.label


def _line(ax: Any, frame: pd.DataFrame, panel: Panel, colors: dict[str, Any], markers_only: bool = False) -> None:
    t = panel_table(frame, panel.y.key, panel.x, panel.where, panel.normalize_to, panel.normalize_at)
    for series, g in t.groupby("series", sort=False):
        g = g.dropna(subset=["mean"])
        if g.empty:
            continue
        xs, ys = g[panel.x].to_numpy(), g["mean"].to_numpy()
        lo, hi = g["lo"].to_numpy(dtype=float), g["hi"].to_numpy(dtype=float)
        style = dict(marker="o", linestyle="none" if markers_only else "-", color=colors[series])
        ax.plot(xs, ys, label=None if markers_only else series, **style)
        if not np.isfinite(lo).any():
            continue
        if markers_only:  # simulated points beside a model: an error bar per point
            below = np.where(np.isfinite(lo), ys - lo, 0.0)
            above = np.where(np.isfinite(hi), hi - ys, 0.0)
            ax.errorbar(xs, ys, yerr=[below, above], fmt="none", ecolor=colors[series], capsize=3)
        else:
            ax.fill_between(xs, np.where(np.isfinite(lo), lo, ys), np.where(np.isfinite(hi), hi, ys), alpha=0.15, color=colors[series])


def _bars(ax: Any, frame: pd.DataFrame, panel: Panel, colors: dict[str, Any], carried: Mapping[float, float]) -> None:
    t = panel_table(frame, panel.y.key, panel.x, panel.where, panel.normalize_to, panel.normalize_at)
    series = list(dict.fromkeys(t["series"]))
    xs = sorted(t[panel.x].dropna().unique()) if panel.x else [None]
    width = 0.8 / max(len(series), 1)
    for i, s in enumerate(series):
        g = t[t["series"] == s]
        heights, below, above = [], [], []
        for x in xs:
            row = g if x is None else g[g[panel.x] == x]
            mean = float(row["mean"].iloc[0]) if len(row) else math.nan
            lo, hi = (float(row["lo"].iloc[0]), float(row["hi"].iloc[0])) if len(row) else (math.nan, math.nan)
            heights.append(mean)
            below.append(mean - lo if math.isfinite(lo) else 0.0)
            above.append(hi - mean if math.isfinite(hi) else 0.0)
        pos = np.arange(len(xs)) + (i - (len(series) - 1) / 2) * width
        ax.bar(pos, heights, width, yerr=[below, above], label=s, color=colors[s])
    if xs == [None]:  # one group: name each bar under it, not only in the figure's legend
        ax.set_xticks([(i - (len(series) - 1) / 2) * width for i in range(len(series))])
        ax.set_xticklabels(series, rotation=25, ha="right", fontsize=8)
        if panel.normalize_to or panel.normalize_at:
            ax.axhline(1.0, color="grey", linewidth=0.8)
        return
    if not _load_ticks(ax, panel, carried, positions=np.arange(len(xs)), loads=xs):
        ax.set_xticks(np.arange(len(xs)))
        ticks = [f"{x:g}" if isinstance(x, float) else str(x) for x in xs]
        long_ticks = sum(len(t) for t in ticks) > 40  # names that would overlap side by side (workloads)
        ax.set_xticklabels(ticks, rotation=20 if long_ticks else 0, ha="right" if long_ticks else "center", fontsize=8 if long_ticks else None)
    if panel.normalize_to or panel.normalize_at:
        ax.axhline(1.0, color="grey", linewidth=0.8)


def _timeseries(ax: Any, pp: PaperPlan, fig: Figure, panel: Panel, reader: RunReader, colors: dict[str, Any]) -> Any:
    """Draws one seed's series; returns that seed (None without data)."""
    ts = timeseries_frame(pp, fig, panel.y, reader)
    if ts.empty:
        return None
    seed = ts["seed"].min()
    first = ts[ts["seed"] == seed]
    if panel.where:
        for k, v in panel.where.items():
            first = first[first[k] == v]
    for series, g in first.groupby("series", sort=False):
        ax.plot(g["time_us"] / 1e3, g["value"], label=series, color=colors[series], linewidth=1)
    return seed


def draw_figure(pp: PaperPlan, fig: Figure, frame: pd.DataFrame, reader: RunReader, carried: Mapping[float, float] | None = None):
    """A matplotlib figure with one axis per panel; ``carried`` maps each nominal load to the share of it the
    runs carried (for the load axis's ticks)."""
    carried = carried or {}
    plt = _pyplot()
    n = len(fig.panels)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    mpl_fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    series = list(dict.fromkeys(e.series for e in pp.entries if e.figure == fig.id))
    cmap = plt.get_cmap("tab10" if len(series) <= 10 else "tab20")
    colors = {s: cmap(i % cmap.N) for i, s in enumerate(series)}
    for ax, panel in zip(axes.flat, fig.panels):
        title = panel.title
        if panel.kind == "line":
            _line(ax, frame, panel, colors)
        elif panel.kind == "bar":
            _bars(ax, frame, panel, colors, carried)
        elif panel.kind == "timeseries":
            seed = _timeseries(ax, pp, fig, panel, reader, colors)
            ax.set_xlabel(panel.xlabel or "time (ms)")
            if seed is not None:
                title = f"{title} (seed {seed})"
        elif panel.kind == "model":
            _line(ax, frame, panel, colors, markers_only=True)
            assert panel.model is not None
            model = panel.model(frame)
            for s, g in model.groupby("series", sort=False):
                ax.plot(g["x"], g["value"], label=s, color=colors.get(s), linestyle="--")
        else:
            raise ValueError(f"figure {fig.id}: unknown panel kind {panel.kind!r}")
        if panel.kind in ("line", "model"):
            _load_ticks(ax, panel, carried)
        if panel.kind != "timeseries":
            label = _label(panel.x, panel)
            ax.set_xlabel(f"{label}\n(in brackets: the load carried)" if panel.x == LOAD_AXIS and carried else label)
        ax.set_ylabel(_ylabel(panel))
        ax.set_title(title, fontsize=10)
        if panel.logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        mpl_fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8, bbox_to_anchor=(0.5, -0.02 - 0.035 * math.ceil(len(labels) / 6)))
    mpl_fig.suptitle(f"Fig. {fig.id}: {fig.title}", fontsize=11)
    mpl_fig.tight_layout()
    return mpl_fig
