"""Verdicts: a paper's claim checked against dclb's data, in one line computed from the figure's frame.

Three shapes cover the five papers' claims:

* :func:`relative` — a number the paper gives: "X's metric is p% lower than Y's" at one point. The line shows
  the paper's value (or range) and dclb's; the claim *holds* when dclb's change has the paper's sign (the
  magnitude is shown, not judged: a smaller effect at quick scale is still the same effect).
* :func:`ordering` — "X beats Y" at each point of an axis, or at some of them; holds when it does at every point
  asked for (the line says at how many it does).
* :func:`rank` — "X is among the best k" of the schemes at a point.

Means are over seeds (rows with no value — a failed run — are left out; with nothing left the verdict says it
cannot tell). Lower is better unless ``higher_is_better``.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Optional, Sequence

import pandas as pd

from .data import _matches
from .spec import Verdict


def _fmt_where(where: Mapping[str, Any]) -> str:
    def short(k: str) -> str:
        return k.split(".")[-1]

    return ", ".join(f"{short(k)} {v:g}" if isinstance(v, float) else f"{short(k)} {v}" for k, v in where.items())


def mean_of(frame: pd.DataFrame, metric: str, series: str, where: Mapping[str, Any] | None = None) -> float:
    """Mean of ``metric`` over the rows of ``series`` that match ``where`` (NaN if none has a value)."""
    if frame.empty or metric not in frame.columns:
        return math.nan
    f = frame[frame["series"] == series]
    if where:
        f = f[_matches(f, dict(where))]
    v = f[metric].dropna()
    return float(v.mean()) if len(v) else math.nan


def change(frame: pd.DataFrame, metric: str, series: str, baseline: str, where: Mapping[str, Any] | None = None) -> float:
    """Relative change of ``series`` against ``baseline``: mean / baseline mean − 1."""
    a, b = mean_of(frame, metric, series, where), mean_of(frame, metric, baseline, where)
    if not (math.isfinite(a) and math.isfinite(b)) or b == 0:
        return math.nan
    return a / b - 1.0


def relative(
    frame: pd.DataFrame,
    subject: str,
    metric: str,
    series: str,
    baseline: str,
    paper_pct: float | tuple[float, float],
    where: Mapping[str, Any] | None = None,
) -> Verdict:
    """``subject`` (e.g. "LBT short AFCT vs ECMP, data mining, load 0.5"): the paper's change in percent (one
    value or a range) against dclb's."""
    lo, hi = (paper_pct, paper_pct) if isinstance(paper_pct, (int, float)) else paper_pct
    paper = f"{lo:+.1f}%" if lo == hi else f"{lo:+.1f}…{hi:+.1f}%"
    c = change(frame, metric, series, baseline, where)
    if not math.isfinite(c):
        return Verdict(f"{subject}: paper {paper}, dclb: no data", None)
    pct = 100 * c
    sign = (lo + hi) / 2
    holds = (pct < 0) == (sign < 0) and pct != 0
    if min(lo, hi) <= pct <= max(lo, hi):
        how = "within the paper's range" if lo != hi else "as the paper"
    elif holds:
        how = "same direction, smaller" if abs(pct) < min(abs(lo), abs(hi)) else "same direction, larger"
    else:
        how = "opposite direction"
    return Verdict(f"{subject}: paper {paper}, dclb {pct:+.1f}% ({how})", holds)


def growth(frame: pd.DataFrame, metric: str, x: str, lo: Any, hi: Any, fixed: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Per series, the mean at ``x = hi`` over the mean at ``x = lo`` (other grid fields at ``fixed``); series
    without both values, or with a zero at ``lo``, are left out."""
    out: dict[str, float] = {}
    for s in (list(dict.fromkeys(frame["series"])) if not frame.empty else []):
        a, b = mean_of(frame, metric, s, {x: lo, **dict(fixed or {})}), mean_of(frame, metric, s, {x: hi, **dict(fixed or {})})
        if math.isfinite(a) and math.isfinite(b) and a > 0:
            out[s] = b / a
    return out


def ordering(
    frame: pd.DataFrame,
    subject: str,
    metric: str,
    winner: str | Sequence[str],
    others: Sequence[str],
    points: Iterable[Mapping[str, Any]],
    higher_is_better: bool = False,
    need: str = "all",
) -> Verdict:
    """``winner`` (one series, or each of several) better than each of ``others`` at each of ``points``;
    ``need`` "all" or "any" of the pairs. The line names the worst pair: the one the claim misses by most."""
    winners = [winner] if isinstance(winner, str) else list(winner)
    wins, total, worst = 0, 0, None
    for where in points:
        for w_name in winners:
            w = mean_of(frame, metric, w_name, where)
            for o in others:
                val = mean_of(frame, metric, o, where)
                if not (math.isfinite(w) and math.isfinite(val)):
                    continue
                total += 1
                better = w > val if higher_is_better else w < val
                wins += better
                ratio = val / w if w else math.nan
                if not better and (worst is None or (ratio < worst[0] if not higher_is_better else ratio > worst[0])):
                    worst = (ratio, w_name, o, where)
    if total == 0:
        return Verdict(f"{subject}: dclb: no data", None)
    holds = wins == total if need == "all" else wins > 0
    text = f"{subject}: dclb {', '.join(winners)} better in {wins} of {total} comparisons"
    if worst is not None:
        r, w_name, o, where = worst
        text += f"; worst: {o} at {_fmt_where(where)} ({o}/{w_name} = {r:.2f})"
    return Verdict(text, holds)


def rank(
    frame: pd.DataFrame,
    subject: str,
    metric: str,
    series: str,
    within: int,
    where: Mapping[str, Any] | None = None,
    higher_is_better: bool = False,
) -> Verdict:
    """``series`` among the best ``within`` of all series at ``where``."""
    names = list(dict.fromkeys(frame["series"])) if not frame.empty else []
    values = {s: mean_of(frame, metric, s, where) for s in names}
    values = {s: v for s, v in values.items() if math.isfinite(v)}
    if series not in values:
        return Verdict(f"{subject}: dclb: no data", None)
    order = sorted(values, key=lambda s: -values[s] if higher_is_better else values[s])
    place = order.index(series) + 1
    best = order[0]
    return Verdict(f"{subject}: paper top {within}; dclb {series} ranks {place} of {len(order)} (best: {best})", place <= within)


def points(field: str, values: Sequence[Any], fixed: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``[{field: v, **fixed} for v in values]``: the points of one axis, the other grid fields fixed."""
    return [{field: v, **dict(fixed or {})} for v in values]


def no_claim(text: str) -> Verdict:
    return Verdict(text, None)


def all_hold(verdicts: Sequence[Verdict]) -> Optional[bool]:
    known = [v.holds for v in verdicts if v.holds is not None]
    return None if not known else all(known)
