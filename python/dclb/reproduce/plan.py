"""From a paper, its chosen figures and a scale to the runs of one sweep.

Each figure's sweeps are expanded with :func:`dclb.sweeps.plan_sweep` — the same planning ``dclb sweep`` uses,
so a point is validated by the same checks and gets the run id ``dclb run`` would give it. The overrides of a
point are applied in this order: the scale's (flow counts), the sweep's, the sweep's for this scale, those of
the point's derived axes (:attr:`~dclb.reproduce.spec.Sweep.axes`), the series' (scheme and its parameters),
those its linked grid values imply (:attr:`~dclb.reproduce.spec.Sweep.linked`), then the grid values; at a
scale measured in steady state, last, the point's start: a stationary start (``run.start = "stationary"``) and,
when every metric of the figure allows it, a drain (``run.drain_us``), or a long warm-up (``run.warmup_us``)
that follows from the point's workload and host rate (:mod:`dclb.reproduce.steady`). Points
that several figures share (LBT's Figs. 6a-c are one sweep drawn three ways) are planned once: the run id is
the identity. A sweep may set its own number of seeds at a scale (:attr:`~dclb.reproduce.spec.Sweep.seeds`).

The result is a :class:`PaperPlan`: the merged :class:`~dclb.sweeps.Plan` and one :class:`Entry` per
(figure, series, grid point, seed) saying which run it reads.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from ..errors import ScenarioError
from ..sweeps import Plan, Point, normalize_grid, plan_sweep
from .spec import SCALES, Figure, Paper


@dataclass(frozen=True)
class Entry:
    figure: str
    series: str
    values: dict[str, Any]
    seed: int
    run_id: str


@dataclass
class PaperPlan:
    paper: Paper
    scale: str
    figures: list[Figure]
    plan: Plan
    entries: list[Entry]

    def runs_of(self, figure_id: str) -> list[str]:
        return sorted({e.run_id for e in self.entries if e.figure == figure_id})


def _trimmed(grid: dict[str, list[Any]]) -> dict[str, list[Any]]:
    return {k: (v if len(v) <= 2 else [v[0], v[-1]]) for k, v in grid.items()}


def _axis_points(axes: Mapping[str, Mapping[Any, tuple[str, ...]]], trim: bool) -> list[tuple[dict[str, Any], list[str]]]:
    """(column values, overrides) of each point of a sweep's derived axes (one empty point without axes)."""
    names = list(axes)
    values = [list(axes[n]) for n in names]
    if trim:
        values = [v if len(v) <= 2 else [v[0], v[-1]] for v in values]
    out = []
    for combo in itertools.product(*values):
        out.append((dict(zip(names, combo)), [o for n, v in zip(names, combo) for o in axes[n][v]]))
    return out


def _file_grid(path: Any) -> dict[str, list[Any]]:
    from ..scenario import read_scenario_file

    raw = read_scenario_file(path)
    return normalize_grid((raw.get("sweep") or {}).get("grid") or {}, f"{path.name} [sweep].grid")


def _linked_parts(grid: dict[str, list[Any]], linked: Any, fig_id: str) -> list[tuple[dict[str, list[Any]], list[str]]]:
    """The grid split by the values of its linked fields, each part with the overrides those values imply
    (the whole grid and no override when nothing is linked)."""
    if not linked:
        return [(grid, [])]
    unknown = [k for k in linked if k not in grid]
    if unknown:
        raise ScenarioError(f"figure {fig_id}: linked field {unknown[0]!r} is not a field of its grid ({', '.join(grid) or 'none'})")
    keys = list(linked)
    parts = []
    for combo in itertools.product(*(grid[k] for k in keys)):
        sub = {**grid, **{k: [v] for k, v in zip(keys, combo)}}
        parts.append((sub, [s for k, v in zip(keys, combo) for s in linked[k](v)]))
    return parts


def _replanned(path: Any, sub: Plan, seeds: int, overrides: list[str], label: str, extra: Callable[[Any], Optional[list[str]]]) -> Plan:
    """``sub`` again with the overrides ``extra`` gives each point's scenario appended; points it gives None (no
    poisson source), and invalid ones, as they were. Points are re-planned by the grid values they share, so that
    each keeps its seeds and its checks."""
    groups: dict[str, list[Point]] = {}
    for p in sub.points:
        groups.setdefault(repr(sorted(p.values.items())), []).append(p)
    points: list[Point] = []
    for group in groups.values():
        first = group[0]
        more = extra(first.scenario) if first.error is None else None
        if not more:
            points.extend(group)
            continue
        grid = {k: [v] for k, v in first.values.items()}
        again = plan_sweep(path, grid=grid, seeds=seeds, overrides=[*overrides, *more], grid_label=label)
        points.extend(again.points)
    return Plan(name=sub.name, grid=sub.grid, seeds=sub.seeds, points=points)


def _warmup(scenario: Any) -> Optional[list[str]]:
    """A long warm-up from an empty fabric (:func:`dclb.reproduce.steady.warmup_us`)."""
    from .steady import warmup_us

    w = warmup_us(scenario)
    return None if w is None else [f"run.warmup_us={w!r}"]


def _stationary(drain: bool) -> Callable[[Any], Optional[list[str]]]:
    """A stationary start, and the drain when the figure's metrics allow it (:mod:`dclb.reproduce.steady`); a
    scenario a stationary start cannot pre-load (a UDP poisson source) gets the long warm-up instead."""
    from .steady import DRAIN_US, stationary_ok

    def extra(scenario: Any) -> Optional[list[str]]:
        ok = stationary_ok(scenario)
        if ok is None:
            return None
        if not ok:
            return _warmup(scenario)
        return ["run.start=stationary", *([f"run.drain_us={DRAIN_US!r}"] if drain else [])]

    return extra


def figure_drains(fig: Figure) -> bool:
    """Whether every metric of ``fig``'s frame is sound on runs stopped a drain after their window
    (:attr:`~dclb.reproduce.spec.Metric.drains`)."""
    from .data import figure_metrics

    metrics = figure_metrics(fig)
    return bool(metrics) and all(m.drains for m in metrics)


def plan_paper(paper: Paper, scale: str, figure_ids: Sequence[str] = ()) -> PaperPlan:
    """The runs behind ``figure_ids`` (default: every figure) of ``paper`` at ``scale``."""
    if scale not in SCALES:
        raise ScenarioError(f"--scale: must be one of {', '.join(SCALES)}, got {scale!r}")
    sc = paper.scales[scale]
    figures = [paper.figure(f) for f in figure_ids] if figure_ids else list(paper.figures)
    points: dict[str, Point] = {}
    entries: list[Entry] = []
    for fig in figures:
        drains = figure_drains(fig)
        for sweep in fig.sweeps:
            path = paper.scenario_path(sweep.scenario)
            if not path.is_file():
                raise ScenarioError(f"paper {paper.key}: figure {fig.id} needs {path}, which is missing")
            grid = _file_grid(path)
            grid.update(normalize_grid(dict(sweep.grid), f"figure {fig.id} grid"))
            if sc.trim:
                grid = _trimmed(grid)
            base = [*sc.set, *sweep.set, *sweep.scale_set.get(scale, ())]
            for tags, axis_set in _axis_points(sweep.axes, sc.trim):
                for series in sweep.series:
                    for sub_grid, linked in _linked_parts(grid, sweep.linked, fig.id):
                        seeds = sweep.seeds.get(scale, sc.seeds)
                        overrides = [*base, *axis_set, *series.set, *linked]
                        sub = plan_sweep(path, grid=sub_grid, seeds=seeds, overrides=overrides, grid_label=f"figure {fig.id}")
                        if sc.stationary and scale not in sweep.empty_start:
                            sub = _replanned(path, sub, seeds, overrides, f"figure {fig.id}", _stationary(drains))
                        elif sc.steady_state:
                            sub = _replanned(path, sub, seeds, overrides, f"figure {fig.id}", _warmup)
                        for p in sub.points:
                            if p.error is not None:
                                raise ScenarioError(f"paper {paper.key}, figure {fig.id}, series {series.label!r}: {p.error}")
                            points.setdefault(p.run_id, p)
                            entries.append(Entry(fig.id, series.label, {**tags, **p.values}, p.seed, p.run_id))
    plan = Plan(name=f"{paper.key}-{scale}", grid={}, seeds=[], points=list(points.values()))
    return PaperPlan(paper=paper, scale=scale, figures=figures, plan=plan, entries=entries)
