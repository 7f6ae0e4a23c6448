"""Builders the paper files share: a claim read on another metric, and a claim of the paper's own absolute number.

**Another metric.** Where a paper leaves its metric undefined (a miss rate with or without the flows the network
cancelled; "overall performance" as the AFCT of all flows or as their mean slowdown), a claim reads the metric as
dclb reads the paper and declares the other as an alternative, :func:`metric_reading`: the same shape with its
metric swapped (:func:`on_metric`). The verdict stays on the first; a claim that fails there and holds on the other
gets the reason "metric-dependent", naming it (docs/reproduce.md § Reasons).

**The paper's absolute numbers.** Where a paper's text gives a value of its own results at a point ("LBT's short
AFCT is about 1 ms at 7 paths"; "ECMP misses 59% of deadlines at load 0.7"), :func:`paper_number` puts it beside
dclb's value at the same point as a ``level`` claim: dclb's mean within a factor 2 of the paper's (the same factor
as :data:`~dclb.reproduce.verdict.REPRODUCED_FRACTION`: the papers' unstated settings can move a number that much).
Its reading says what a larger gap means: in a baseline, whose behaviour does not depend on the paper's scheme, it
points at the setup (the paper's unstated settings, named), not at a scheme. docs/reproduce.md § The papers'
absolute numbers lists every such number with its line.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence, Union

from ..claims import Combined, Compare, Level, Points, Rank, Shape, Trend, level
from ..spec import Metric, Reading

#: The factor around the paper's absolute number within which dclb's is read as the same (see the module doc).
ABSOLUTE_FACTOR = 2.0


def on_metric(shape: Any, metric: Metric) -> Any:
    """``shape`` read on ``metric`` instead of its own: a compare, rank, trend or level with the metric swapped (a
    compare's sides that name a metric of their own keep it), an ``all_of`` / ``any_of`` part by part; any other
    shape unchanged."""
    if isinstance(shape, Combined):
        return dataclasses.replace(shape, parts=tuple(on_metric(p, metric) for p in shape.parts))
    if isinstance(shape, (Compare, Rank, Trend, Level)):
        return dataclasses.replace(shape, metric=metric)
    return shape


def metric_reading(shape: Shape, metric: Metric, label: str = "") -> Reading:
    """The alternative "the same claim on ``metric``", labelled by ``label`` (default the metric's label)."""
    return Reading(label or metric.label.split(" (")[0], on_metric(shape, metric), kind="metric")


def paper_number(
    metric: Metric,
    series: Union[str, Sequence[str]],
    at: Points,
    paper: float,
    *,
    setup: str,
    unit: str = "",
    cap: Optional[float] = None,
    derived: str = "",
) -> Level:
    """The paper's absolute ``paper`` (in the metric's unit) for ``series`` at ``at``, beside dclb's: reproduced
    when dclb's mean lies within :data:`ABSOLUTE_FACTOR` of it (``cap``: the metric's own bound, e.g. 1 for a
    rate), opposite when wholly outside. ``setup`` names the paper's unstated settings a large gap would point at;
    ``derived`` says how the number follows from the text when the text does not print it."""
    lo, hi = paper / ABSOLUTE_FACTOR, paper * ABSOLUTE_FACTOR
    if cap is not None:
        hi = min(hi, cap)
    u = f" {unit}" if unit else ""  # the band that follows the reading in the verdict line carries the unit
    reading = (
        f"the paper's absolute number {paper:g}{u}{f' ({derived})' if derived else ''}, read as within a factor "
        f"{ABSOLUTE_FACTOR:g}; a gap beyond that in a baseline points at the setup ({setup}), not at a scheme"
    )
    return level(metric, series, at, within=(lo, hi), paper=paper, reading=reading)


def on_series(shape: Any, old: str, new: str) -> Any:
    """``shape`` with series ``new`` wherever it names ``old`` (a compare's sides, a rank's series and the series
    it ranks among, a trend's series and those it is compared with, a level's series), e.g. a scheme read another
    way (MDTLB judging by RTT alone); an ``all_of`` / ``any_of`` part by part; any other shape unchanged."""

    def swap(x: Any) -> Any:
        return new if x == old else x

    if isinstance(shape, Combined):
        return dataclasses.replace(shape, parts=tuple(on_series(p, old, new) for p in shape.parts))
    if isinstance(shape, Compare):
        pairs = tuple((dataclasses.replace(a, series=swap(a.series)), dataclasses.replace(b, series=swap(b.series))) for a, b in shape.pairs)
        return dataclasses.replace(shape, pairs=pairs)
    if isinstance(shape, Rank):
        return dataclasses.replace(shape, series=swap(shape.series), among=tuple(map(swap, shape.among)) if shape.among else None)
    if isinstance(shape, Trend):
        return dataclasses.replace(
            shape,
            series=tuple(map(swap, shape.series)) if shape.series else None,
            than=tuple(map(swap, shape.than)) if shape.than else None,
        )
    if isinstance(shape, Level):
        return dataclasses.replace(shape, series=tuple(map(swap, shape.series)))
    return shape
