"""Claims as data: the shapes a paper's claim takes, and how each is judged from a figure's runs.

A paper file declares each claim as its words (with the paper's line) and one shape, built by a function here:

* :func:`compare` — X against Y at some points: "X below Y at every load" (no number), "X is 33% below Y at load
  0.7" (the paper's number), "up to 60%" (``best``: the pair and point where dclb's effect is largest), "around
  20%" (``mean``: the per-seed mean over the points), "more than 20%" (``at_least``), "about the same"
  (``within``: a band of ratios, dclb's reading). X and Y are series, or :class:`Side` objects when they differ
  in a grid value (a workload) or a metric (throughput before and during an incast), and a :class:`Spread` (the
  largest over the smallest series) when the claim is about how much the schemes differ.
* :func:`rank` — X among the best (or worst) k at a point.
* :func:`trend` — a metric goes ``up``, ``down`` or stays ``flat`` along an axis, for each series, or rises
  ``least`` or ``most`` of the series (its growth compared paired with each other's).
* :func:`level` — an absolute value in a band (dclb's reading of the paper's number, or of "below 1 ms", or
  "always 0"), against a model's value (``reference``), at every point or at ``any_point``.
* :func:`not_testable` — with the reason, and dclb's numbers shown where it has related ones.
* :func:`all_of`, :func:`any_of` — a claim made of several of these.

Every shape is a frozen dataclass and a callable: ``shape(frame)`` returns the :class:`~dclb.reproduce.verdict.Verdict`
under the rule of :mod:`dclb.reproduce.verdict` (paired per seed, a t interval over seeds, the outcomes and their
tolerances). Where a shape encodes dclb's reading of vague words ("differ little" read as max/min ≤ 1.5), the
``reading`` is declared with the claim and printed in its verdict.

The figure's frame (:func:`dclb.reproduce.data.figure_frame`) holds one row per series, grid point and seed;
:class:`FrameData` indexes it once per figure. Two values pair when they have the same seed and the same value of
every grid field the comparison does not fix.
"""

from __future__ import annotations

import abc
import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import pandas as pd

from .spec import Metric
from .verdict import (
    DIFF,
    LOG,
    VALUE,
    Band,
    Direction,
    Effect,
    Number,
    Outcome,
    Tally,
    Verdict,
    combine,
    judge_effect,
    no_data,
)

# ---------------------------------------------------------------------------------------------------------------
# Operands


@dataclass(frozen=True)
class Spread:
    """How much the series differ at a point: per seed, the largest value over the smallest, of ``series``
    (default: every series of the figure)."""

    series: Optional[tuple[str, ...]] = None

    def __str__(self) -> str:
        return "max/min of " + (", ".join(self.series) if self.series else "all schemes")


@dataclass(frozen=True)
class Ratio:
    """One series over another at the same seed and point (e.g. TR over LetFlow, as the papers normalise)."""

    num: str
    den: str

    def __str__(self) -> str:
        return f"{self.num} / {self.den}"


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a series (or a :class:`Spread`), with grid values of its own (``where``, e.g.
    another workload) and its own metric when it differs from the claim's."""

    series: Union[str, Spread, Ratio]
    where: Mapping[str, Any] = field(default_factory=dict)
    metric: Optional[Metric] = None

    def label(self) -> str:
        extra = [where_text(self.where)] if self.where else []
        if self.metric is not None:
            extra.append(short_label(self.metric))
        return f"{self.series}" + (f" ({', '.join(extra)})" if extra else "")

    def __hash__(self) -> int:  # where is a dict
        return hash((self.series, tuple(sorted(self.where.items())), self.metric.key if self.metric else None))


Operand = Union[str, Side, Spread, Ratio]


def _side(x: Operand) -> Side:
    return x if isinstance(x, Side) else Side(x)


def _many(x: Union[Operand, Sequence[Operand], None]) -> list[Operand]:
    if x is None:
        return []
    if isinstance(x, (str, Side, Spread, Ratio)):
        return [x]
    return list(x)


def _points(at: Union[Mapping[str, Any], Sequence[Mapping[str, Any]], None]) -> tuple[Mapping[str, Any], ...]:
    if at is None:
        return ({},)
    if isinstance(at, Mapping):
        return (at,)
    return tuple(at) or ({},)


def points(field_name: str, values: Iterable[Any], fixed: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``[{field_name: v, **fixed} for v in values]``: the points of one axis, the other grid fields fixed."""
    return [{field_name: v, **dict(fixed or {})} for v in values]


def chain(*series: str) -> list[tuple[str, str]]:
    """The pairs of an order, best (lowest) first: ``chain("A", "B", "C")`` is A below B below C."""
    return list(zip(series, series[1:]))


# ---------------------------------------------------------------------------------------------------------------
# Words


def _num(x: Any) -> str:
    """A grid value as written: whole numbers in full (1000000, not 1e+06)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return str(int(x)) if float(x).is_integer() and abs(x) >= 1000 else f"{x:g}"
    return str(x)


def where_text(where: Mapping[str, Any]) -> str:
    return ", ".join(f"{k.split('.')[-1]} {_num(v)}" for k, v in where.items())


def short_label(m: Metric) -> str:
    return re.sub(r"\s*\([^()]*\)$", "", m.label)


def unit_of(m: Metric) -> str:
    found = re.search(r"\(([^()]*)\)$", m.label)
    return found.group(1) if found else ""


def points_text(pts: Sequence[Mapping[str, Any]]) -> str:
    """`` at load 0.5`` or `` at load 0.1…0.7 (7 points)``; empty for the one empty point."""
    pts = [p for p in pts if p]
    if not pts:
        return ""
    if len(pts) == 1:
        return f" at {where_text(pts[0])}"
    keys = list(dict.fromkeys(k for p in pts for k in p))
    varying = [k for k in keys if len({_key(p.get(k)) for p in pts}) > 1]
    fixed = {k: pts[0][k] for k in keys if k not in varying and k in pts[0]}
    if len(varying) == 1:
        vals = [p.get(varying[0]) for p in pts]
        span = f"{varying[0].split('.')[-1]} {_num(vals[0])}…{_num(vals[-1])}" if len(vals) > 2 else f"{varying[0].split('.')[-1]} {' and '.join(_num(v) for v in vals)}"
        rest = f", {where_text(fixed)}" if fixed else ""
        return f" at {span}{rest} ({len(pts)} points)" if len(vals) > 2 else f" at {span}{rest}"
    return f" at {len(pts)} points"


def _names(ops: Sequence[Operand]) -> str:
    return ", ".join(_side(o).label() for o in ops)


# ---------------------------------------------------------------------------------------------------------------
# The frame, indexed


def _key(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 9) if math.isfinite(v) else None
    return v


class FrameData:
    """A figure's frame indexed for verdicts: per metric and series, each run's grid values, seed and value
    (rows without a value — failed or missing runs — are left out)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        cols = list(frame.columns) if frame is not None else []
        self.fields = [c for c in cols if "." in c and "@" not in c]
        self.series = list(dict.fromkeys(frame["series"])) if frame is not None and len(frame) and "series" in cols else []
        self._tables: dict[str, dict[str, list[tuple[tuple[Any, ...], Any, float]]]] = {}

    @classmethod
    def of(cls, frame: Any) -> "FrameData":
        return frame if isinstance(frame, FrameData) else cls(frame)

    def has(self, key: str) -> bool:
        return self.frame is not None and key in self.frame.columns

    def _table(self, key: str) -> dict[str, list[tuple[tuple[Any, ...], Any, float]]]:
        if key not in self._tables:
            table: dict[str, list[tuple[tuple[Any, ...], Any, float]]] = {}
            f = self.frame
            if self.has(key) and len(f):
                values = pd.to_numeric(f[key], errors="coerce").to_numpy(dtype=float)
                seeds = f["seed"].tolist() if "seed" in f.columns else [0] * len(f)
                series = f["series"].tolist()
                cols = [[_key(v) for v in f[c].tolist()] for c in self.fields]
                for i, value in enumerate(values):
                    if math.isfinite(value):
                        table.setdefault(series[i], []).append((tuple(col[i] for col in cols), seeds[i], float(value)))
            self._tables[key] = table
        return self._tables[key]

    def values(self, key: str, series: Union[str, Spread, Ratio], where: Mapping[str, Any]) -> dict[tuple[Any, ...], float]:
        """``{(seed, other grid values...): value}`` of ``series`` at the runs matching ``where``."""
        if isinstance(series, Spread):
            return self._spread(key, series, where)
        if isinstance(series, Ratio):
            num, den = self.values(key, series.num, where), self.values(key, series.den, where)
            return {k: num[k] / den[k] for k in num if k in den and den[k] > 0}
        unknown = [k for k in where if k not in self.fields]
        if unknown:
            if not self.fields and self.frame is not None and not len(self.frame):
                return {}
            if self.frame is not None and len(self.frame):
                raise ValueError(f"claim point on {unknown[0]!r}, which is not a grid field of the figure ({', '.join(self.fields) or 'none'})")
            return {}
        want = [(self.fields.index(k), _key(v)) for k, v in where.items()]
        fixed = {i for i, _ in want}
        rest = [i for i in range(len(self.fields)) if i not in fixed]
        out: dict[tuple[Any, ...], float] = {}
        for vals, seed, value in self._table(key).get(series, ()):
            if all(vals[i] == w for i, w in want):
                out[(seed, *(vals[i] for i in rest))] = value
        return out

    def _spread(self, key: str, spread: Spread, where: Mapping[str, Any]) -> dict[tuple[Any, ...], float]:
        names = list(spread.series) if spread.series else self.series
        per: dict[tuple[Any, ...], list[float]] = {}
        for s in names:
            for k, v in self.values(key, s, where).items():
                per.setdefault(k, []).append(v)
        return {k: max(v) / min(v) for k, v in per.items() if len(v) >= 2 and min(v) > 0}

    def side(self, side: Side, metric: Metric, point: Mapping[str, Any]) -> dict[tuple[Any, ...], float]:
        m = side.metric or metric
        return self.values(m.key, side.series, {**point, **side.where})

    def series_with(self, key: str, point: Mapping[str, Any]) -> list[str]:
        return [s for s in self.series if self.values(key, s, point)]

    def axis_values(self, field_name: str) -> list[Any]:
        if self.frame is None or field_name not in getattr(self.frame, "columns", ()):
            return []
        vals = [v for v in dict.fromkeys(self.frame[field_name].tolist()) if v is not None and not (isinstance(v, float) and math.isnan(v))]
        return sorted(vals, key=lambda a: (isinstance(a, str), a))


def _differences(a: Mapping[Any, float], b: Mapping[Any, float], scale: str) -> tuple[str, dict[Any, float], float]:
    """The paired numbers of ``a`` against ``b`` on ``scale`` (a log scale falls back to differences when a value is
    at or below zero), and the mean of ``b`` over the pairs."""
    keys = [k for k in a if k in b]
    if scale == LOG and any(a[k] <= 0 or b[k] <= 0 for k in keys):
        scale = DIFF
    base = sum(b[k] for k in keys) / len(keys) if keys else math.nan
    if scale == LOG:
        return LOG, {k: math.log(a[k] / b[k]) for k in keys}, base
    return DIFF, {k: a[k] - b[k] for k in keys}, base


def _scale_of(m: Metric) -> str:
    return DIFF if m.scale == "difference" else LOG


def _noise_note(n: int) -> str:
    return f"noise unknown with {n} seed{'s' if n != 1 else ''}"


def _hint_text(results: Sequence[tuple[Any, Effect]], expect: Any) -> str:
    """What the means say when the noise is unknown: how many comparisons lean the claimed way."""
    if isinstance(expect, Band):
        inside = sum(1 for _, e in results if e.on_ratio(expect.lo) <= e.mean <= e.on_ratio(expect.hi))
        return f"by the means {inside} of {len(results)} in the band"
    lean = sum(1 for _, e in results if e.hint == expect.sign)
    return f"by the means {lean} of {len(results)} lean the claimed way"


def _headroom(d: FrameData, metric: Metric, a: Side, b: Side, point: Mapping[str, Any]) -> Optional[float]:
    """The largest percent change of ``a`` against ``b`` any balancer could reach: ``a`` at its ideal FCTs (the
    frame's ``<key>@ideal`` column), paired with ``b`` per seed. A difference-scale metric (a count, rate or
    share of events: misses, drops, retransmissions) can go down to zero and no further: -100% of ``b``, or 0%
    when ``b`` is zero in every run (nothing to reduce). None when the frame does not know it."""
    m = a.metric or metric
    ideal_key = f"{m.key}@ideal"
    if not d.has(ideal_key):
        if m.scale != "difference":
            return None
        base = list(d.side(b, metric, point).values())
        if not base:
            return None
        return 0.0 if all(v == 0 for v in base) else -100.0
    ideal = d.values(ideal_key, a.series, {**point, **a.where})
    actual = d.side(b, metric, point)
    scale, diffs, base = _differences(ideal, actual, LOG)
    e = Effect.of(diffs.values(), scale, base)
    pct = e.percent()
    return pct[0] if pct else None


# ---------------------------------------------------------------------------------------------------------------
# Shapes


class Shape(abc.ABC):
    """A claim's shape: judged by calling it on a figure's frame (or its :class:`FrameData`). Every shape
    defines :meth:`judge`; a class that does not cannot be made."""

    def __call__(self, frame: Any) -> Verdict:
        return self.judge(FrameData.of(frame))

    @abc.abstractmethod
    def judge(self, d: FrameData) -> Verdict: ...

    def metrics(self) -> list[Metric]:
        return []


def _with_reading(text: str, reading: str, band: str = "") -> str:
    """The verdict line with dclb's reading of the paper's words: the declared reading, the band it comes to."""
    if reading and band:
        return f"{text}; dclb's reading: {reading} ({band})"
    if reading or band:
        return f"{text}; dclb's reading: {reading or band}"
    return text


def _decide(results: Sequence[tuple[Any, Effect, Outcome]], expect: Any, best: bool = False) -> tuple[Any, Effect, Outcome]:
    """The comparison that decides a claim of several: the one that misses by most (first by outcome, then by how
    far its mean lies on the wrong side); with ``best``, for a claim that needs only one, the one that comes
    closest."""
    order = {o: i for i, o in enumerate((Outcome.OPPOSITE, Outcome.INDISTINGUISHABLE, Outcome.SMALLER, Outcome.CANNOT_TELL, Outcome.REPRODUCED))}

    def lean(e: Effect) -> float:
        if isinstance(expect, Band):
            lo, hi = e.on_ratio(expect.lo), e.on_ratio(expect.hi)
            return -max(lo - e.mean, e.mean - hi, 0.0)
        pct = e.percent()
        v = pct[0] if pct else e.mean
        return expect.sign * v if math.isfinite(v) else math.inf

    key = lambda r: (order[r[2]], lean(r[1]))  # noqa: E731
    return max(results, key=key) if best else min(results, key=key)


@dataclass(frozen=True)
class Compare(Shape):
    """X against Y (each pair of ``pairs``) at each of ``points``; see :func:`compare`."""

    metric: Metric
    pairs: tuple[tuple[Side, Side], ...]
    points: tuple[Mapping[str, Any], ...]
    expect: Any
    aggregate: str = "each"
    reading: str = ""
    subject: str = ""

    def metrics(self) -> list[Metric]:
        return [self.metric, *(s.metric for p in self.pairs for s in p if s.metric is not None)]

    def _subject(self) -> str:
        if self.subject:
            return self.subject
        xs = list(dict.fromkeys(a for a, _ in self.pairs))
        ys = list(dict.fromkeys(b for _, b in self.pairs))
        word = {1: "higher than", -1: "lower than"}.get(getattr(self.expect, "sign", 0), "vs") if isinstance(self.expect, Direction) else "vs"
        if len(self.pairs) < len(xs) * len(ys) and len(self.pairs) > 2:  # explicit pairs, not each against each
            a, b = self.pairs[0]
            return f"{short_label(self.metric)}, {len(self.pairs)} pairs such as {a.label()} {word} {b.label()}{points_text(self.points)}"
        return f"{short_label(self.metric)}, {_names(xs)} {word} {_names(ys)}{points_text(self.points)}"

    def _effects(self, d: FrameData) -> list[tuple[tuple[Side, Side, Mapping[str, Any]], Effect]]:
        scale = _scale_of(self.metric)
        out = []
        if self.aggregate == "mean":
            for a, b in self.pairs:
                parts = [_differences(d.side(a, self.metric, p), d.side(b, self.metric, p), scale) for p in self.points]
                used = DIFF if any(s == DIFF for s, diffs, _ in parts if diffs) else scale
                if used != scale:
                    parts = [_differences(d.side(a, self.metric, p), d.side(b, self.metric, p), DIFF) for p in self.points]
                per_seed: dict[Any, list[float]] = {}
                for _, diffs, _ in parts:
                    for k, v in diffs.items():
                        per_seed.setdefault(k[0], []).append(v)
                if not per_seed:
                    continue
                full = max(len(v) for v in per_seed.values())
                means = [sum(v) / len(v) for v in per_seed.values() if len(v) == full]
                bases = [base for _, diffs, base in parts if diffs]
                out.append(((a, b, {}), Effect.of(means, used, sum(bases) / len(bases) if bases else math.nan, unit_of(self.metric))))
            return out
        for p in self.points:
            for a, b in self.pairs:
                used, diffs, base = _differences(d.side(a, self.metric, p), d.side(b, self.metric, p), scale)
                if diffs:
                    out.append(((a, b, p), Effect.of(diffs.values(), used, base, unit_of(self.metric))))
        return out

    def judge(self, d: FrameData) -> Verdict:
        subject = self._subject()
        paper = self.expect.text() if isinstance(self.expect, Number) else ""
        effects = self._effects(d)
        if not effects:
            band = self.expect.text(ratio=True) if isinstance(self.expect, Band) else ""
            return Verdict(Outcome.CANNOT_TELL, _with_reading(f"{subject}: dclb: no data", self.reading, band), paper=paper)
        if self.aggregate == "best":
            sign = getattr(self.expect, "sign", -1)

            def gain(e: Effect) -> float:
                pct = e.percent()
                v = pct[0] if pct else e.mean
                return sign * v if math.isfinite(v) else -math.inf

            effects = [max(effects, key=lambda r: gain(r[1]))]
        seeds = min(e.n for _, e in effects)
        results = [(where, e, judge_effect(e, self.expect)) for where, e in effects]
        (a, b, p), e, _ = _decide(results, self.expect)
        outcome = combine([o for _, _, o in results])
        headroom = _headroom(d, self.metric, a, b, p) if isinstance(self.expect, Number) else None
        paper_part = f"; paper {paper}" if paper else ""
        band = self.expect.text(ratio=True) if isinstance(self.expect, Band) else ""
        where = f" at {where_text(p)}" if p and len(self.points) > 1 else ""
        if len(results) == 1:
            lead = f"best case {a.label()} vs {b.label()}{where}: " if self.aggregate == "best" else (f"{a.label()} vs {b.label()}{where}: " if len(self.pairs) > 1 or where else "")
            text = f"{subject}: {lead}dclb {e.text()}, {e.seeds_text()}"
        else:
            if not all(r[1].known for r in results):
                text = f"{subject}: {_hint_text([(w, r) for w, r, _ in results], self.expect)}"
            else:
                text = f"{subject}: {Tally.of(o for _, _, o in results).text('pairs' if len(self.pairs) > 1 else 'points')}"
            text += f"; worst {a.label()} vs {b.label()}{f' at {where_text(p)}' if p else ''}: {e.text()}, {e.seeds_text()}"
        if seeds < 3 and outcome is Outcome.CANNOT_TELL:
            text += f" ({_noise_note(seeds)})"
        if self.aggregate == "mean" and len(self.points) > 1:
            text += f" (per-seed mean over {len(self.points)} points)"
        if headroom is not None:
            text += f"; most any balancer could reach: {headroom:+.1f}%"
        need = self.expect.need if isinstance(self.expect, Number) else None
        return Verdict(outcome, _with_reading(text + paper_part, self.reading, band), e, paper, seeds, len(results), headroom, need)


@dataclass(frozen=True)
class Rank(Shape):
    """``series`` among the first ``k`` of the series at each point, by ``top`` ("lowest" or "highest")."""

    metric: Metric
    series: str
    k: int
    points: tuple[Mapping[str, Any], ...]
    top: str = "lowest"
    among: Optional[tuple[str, ...]] = None
    reading: str = ""

    def metrics(self) -> list[Metric]:
        return [self.metric]

    def judge(self, d: FrameData) -> Verdict:
        first = "lowest" if self.top == "lowest" else "highest"
        place = f"the {first}" if self.k == 1 else f"among the {self.k} {first}"
        subject = f"{short_label(self.metric)}, {self.series} {place}{points_text(self.points)}"
        ahead = 1 if self.top == "highest" else -1  # the sign of (series vs other) when series is ahead
        outcomes, parts, seeds, deciding = [], [], [], None
        for p in self.points:
            names = list(self.among) if self.among else d.series_with(self.metric.key, p)
            mine = d.values(self.metric.key, self.series, p)
            if not mine:
                continue
            effects = {}
            for o in names:
                if o == self.series:
                    continue
                used, diffs, base = _differences(mine, d.values(self.metric.key, o, p), _scale_of(self.metric))
                if diffs:
                    effects[o] = Effect.of(diffs.values(), used, base, unit_of(self.metric))
            if not effects:
                continue
            means = {self.series: sum(mine.values()) / len(mine)}
            for o in effects:
                vals = d.values(self.metric.key, o, p)
                means[o] = sum(vals.values()) / len(vals)
            order = sorted(means, key=lambda s: means[s], reverse=self.top == "highest")
            place = order.index(self.series) + 1
            n = min(e.n for e in effects.values())
            seeds.append(n)
            at = f" at {where_text(p)}" if p and len(self.points) > 1 else ""
            if not all(e.known for e in effects.values()):
                outcomes.append(Outcome.CANNOT_TELL)
                parts.append(f"{self.series} {place} of {len(order)} by the means{at} (first: {order[0]})")
                continue
            behind_sig = [o for o, e in effects.items() if e.sign == -ahead]
            not_behind = [o for o, e in effects.items() if e.sign != ahead]
            if len(not_behind) <= self.k - 1:
                outcomes.append(Outcome.REPRODUCED)
            elif len(behind_sig) >= self.k:
                outcomes.append(Outcome.OPPOSITE)
            else:
                outcomes.append(Outcome.INDISTINGUISHABLE)
            parts.append(
                f"{self.series} {place} of {len(order)} by the means{at} (first: {order[0]}); significantly ahead of it: "
                f"{len(behind_sig)}, indistinguishable from it: {len(not_behind) - len(behind_sig)}"
            )
            if deciding is None or outcomes[-1] is not Outcome.REPRODUCED:
                worst = min(effects, key=lambda o: ahead * effects[o].mean)
                deciding = effects[worst]
        if not outcomes:
            return Verdict(Outcome.CANNOT_TELL, _with_reading(f"{subject}: dclb: no data", self.reading))
        outcome = combine(outcomes)
        n = min(seeds)
        text = f"{subject}: dclb " + "; ".join(parts) + f", {n} seed{'s' if n != 1 else ''}"
        if outcome is Outcome.CANNOT_TELL:
            text += f" ({_noise_note(n)})"
        return Verdict(outcome, _with_reading(text, self.reading), deciding, "", n, len(outcomes))


@dataclass(frozen=True)
class Trend(Shape):
    """A metric along ``along``: see :func:`trend`."""

    metric: Metric
    series: Optional[tuple[str, ...]]
    along: str
    lo: Any
    hi: Any
    goes: str
    expect: Any
    than: Optional[tuple[str, ...]] = None
    at: Mapping[str, Any] = field(default_factory=dict)
    values: Optional[tuple[Any, ...]] = None
    reading: str = ""

    def metrics(self) -> list[Metric]:
        return [self.metric]

    def __hash__(self) -> int:
        return hash((self.metric.key, self.series, self.along, self.goes))

    def _ends(self, d: FrameData) -> tuple[Any, Any]:
        vals = d.axis_values(self.along)
        lo = self.lo if self.lo is not None else (vals[0] if vals else None)
        hi = self.hi if self.hi is not None else (vals[-1] if vals else None)
        return lo, hi

    def _growth(self, d: FrameData, s: str, lo: Any, hi: Any, scale: str) -> tuple[str, dict[Any, float], float]:
        a = d.values(self.metric.key, s, {**self.at, self.along: hi})
        b = d.values(self.metric.key, s, {**self.at, self.along: lo})
        return _differences(a, b, scale)

    def judge(self, d: FrameData) -> Verdict:
        lo, hi = self._ends(d)
        name = self.along.split(".")[-1]
        names = list(self.series) if self.series else list(d.series)
        at = f", {where_text(self.at)}" if self.at else ""
        if self.goes == "flat" and self.values is not None:
            return self._flat_all(d, names, at)
        span = f"{name} {_num(lo)} to {_num(hi)}" if lo is not None else name
        word = {"up": "rises", "down": "falls", "flat": "stays flat", "least": "rises least", "most": "rises most"}[self.goes]
        subject = f"{short_label(self.metric)} {word} from {span}{at}: {', '.join(names) if self.series else 'every series'}"
        if self.goes in ("least", "most"):
            subject += " against " + (", ".join(self.than) if self.than else "every other series")
        scale = _scale_of(self.metric)
        results: list[tuple[Any, Effect, Outcome]] = []
        if lo is None or hi is None:
            return Verdict(Outcome.CANNOT_TELL, _with_reading(f"{subject}: dclb: no data", self.reading))
        if self.goes in ("least", "most"):
            for s in names:
                others = list(self.than) if self.than else [o for o in d.series if o not in names]
                for o in others:
                    # Both growths on one scale: log ratios, or differences when either has a value at zero.
                    (ss, gs, _), (so, go, _) = self._growth(d, s, lo, hi, LOG), self._growth(d, o, lo, hi, LOG)
                    used = LOG if ss == so == LOG else DIFF
                    if used == DIFF:
                        (_, gs, _), (_, go, _) = self._growth(d, s, lo, hi, DIFF), self._growth(d, o, lo, hi, DIFF)
                    keys = [k for k in gs if k in go]
                    if keys:
                        e = Effect.of((gs[k] - go[k] for k in keys), used, unit=unit_of(self.metric))
                        results.append(((s, o), e, judge_effect(e, self.expect)))
        else:
            for s in names:
                used, diffs, base = self._growth(d, s, lo, hi, scale)
                if diffs:
                    e = Effect.of(diffs.values(), used, base, unit_of(self.metric))
                    results.append(((s, None), e, judge_effect(e, self.expect)))
        if not results:
            return Verdict(Outcome.CANNOT_TELL, _with_reading(f"{subject}: dclb: no data", self.reading))
        (s, o), e, _ = _decide(results, self.expect)
        outcome = combine([r[2] for r in results])
        seeds = min(r[1].n for r in results)
        each = "; ".join(f"{a}{f' vs {b}' if b else ''} {r.text()}" for (a, b), r, _ in results[:8])
        if len(results) > 8:
            each += f"; ... ({len(results)} in all; worst {s}{f' vs {o}' if o else ''} {e.text()})"
        what = "growth ratio of each against each" if self.goes in ("least", "most") else f"change from {_num(lo)} to {_num(hi)}"
        text = f"{subject}: dclb {what}: {each}, {seeds} seed{'s' if seeds != 1 else ''}"
        if outcome is Outcome.CANNOT_TELL:
            text += f" ({_noise_note(seeds)})"
        paper = self.expect.text() if isinstance(self.expect, Number) else ""
        if paper:
            text += f"; paper {paper}"
        band = self.expect.text(ratio=True) if isinstance(self.expect, Band) else ""
        need = self.expect.need if isinstance(self.expect, Number) else None
        return Verdict(outcome, _with_reading(text, self.reading, band), e, paper, seeds, len(results), None, need)

    def _flat_all(self, d: FrameData, names: list[str], at: str) -> Verdict:
        """Each series within the band of its own mean (geometric, per seed) at every value of the axis."""
        name = self.along.split(".")[-1]
        subject = f"{short_label(self.metric)} stays flat along {name}{at}: {', '.join(names)}"
        results = []
        for s in names:
            per: dict[Any, dict[Any, float]] = {}
            for x in self.values or ():
                for k, v in d.values(self.metric.key, s, {**self.at, self.along: x}).items():
                    if v > 0:
                        per.setdefault(k, {})[_key(x)] = math.log(v)
            full = [row for row in per.values() if len(row) == len(self.values or ())]
            if not full:
                continue
            for x in self.values or ():
                devs = [row[_key(x)] - sum(row.values()) / len(row) for row in full]
                e = Effect.of(devs, LOG)
                results.append(((s, x), e, judge_effect(e, self.expect)))
        if not results:
            return Verdict(Outcome.CANNOT_TELL, _with_reading(f"{subject}: dclb: no data", self.reading, self.expect.text(ratio=True)))
        (s, x), e, _ = _decide(results, self.expect)
        outcome = combine([r[2] for r in results])
        seeds = min(r[1].n for r in results)
        text = f"{subject}: dclb, off the series' own mean: worst {s} at {name} {_num(x)} {e.text()}, {seeds} seed{'s' if seeds != 1 else ''}; {Tally.of(r[2] for r in results).text('points')}"
        if outcome is Outcome.CANNOT_TELL:
            text += f" ({_noise_note(seeds)})"
        return Verdict(outcome, _with_reading(text, self.reading, self.expect.text(ratio=True)), e, "", seeds, len(results))


@dataclass(frozen=True)
class Level(Shape):
    """A value in a band: see :func:`level`."""

    metric: Metric
    series: tuple[Union[str, Spread], ...]
    points: tuple[Mapping[str, Any], ...]
    band: Band
    paper: Optional[float] = None
    need: str = "all"
    every_run: bool = False
    reference: Optional[Callable[[Mapping[str, Any], str], float]] = None
    reading: str = ""

    def metrics(self) -> list[Metric]:
        return [self.metric]

    def __hash__(self) -> int:
        return hash((self.metric.key, self.series, self.band))

    def judge(self, d: FrameData) -> Verdict:
        unit = unit_of(self.metric)
        ratio = self.reference is not None or any(isinstance(s, Spread) for s in self.series)
        who = ", ".join(str(s) for s in self.series)
        subject = f"{short_label(self.metric)}{' over the model' if self.reference else ''}, {who}{points_text(self.points)}"
        results = []
        for s in self.series:
            for p in self.points:
                vals = list(d.values(self.metric.key, s, p).values())
                if not vals:
                    continue
                if self.reference is not None:
                    ref = self.reference(p, str(s))
                    vals = [math.log(v / ref) for v in vals if v > 0 and ref > 0]
                    e = Effect.of(vals, LOG)
                elif isinstance(s, Spread):
                    e = Effect.of([math.log(v) for v in vals], LOG)
                else:
                    e = Effect.of(vals, VALUE, unit=unit)
                if self.every_run:
                    raw = list(d.values(self.metric.key, s, p).values())
                    outside = [v for v in raw if not (self.band.lo <= v <= self.band.hi)]
                    o = Outcome.OPPOSITE if outside else (Outcome.REPRODUCED if len(raw) >= 3 else Outcome.CANNOT_TELL)
                    e = Effect.of(raw, VALUE, unit=unit)
                else:
                    o = judge_effect(e, self.band)
                results.append(((s, p), e, o))
        reading = self.band.text(unit, ratio) + (" in every run" if self.every_run else "") + (" at some point" if self.need == "any" else "")
        paper = f"{self.paper:g}" + (f" {unit}" if unit and not ratio else "") if self.paper is not None else ""
        if not results:
            return Verdict(Outcome.CANNOT_TELL, _with_reading(f"{subject}: dclb: no data", self.reading, reading), paper=paper)
        outcome = combine([r[2] for r in results], self.need)
        # The deciding result: for "at some point" the one that comes closest to the band, else the one that
        # misses it by most.
        (s, p), e, _ = _decide(results, self.band, best=self.need == "any")
        seeds = min(r[1].n for r in results)
        shown = e.text() if not ratio else f"ratio {math.exp(e.mean):.3g}" + (f" [{math.exp(e.lo):.3g}, {math.exp(e.hi):.3g}]" if e.known else "")
        where = f" at {where_text(p)}" if p else ""
        lead = f"{s}{where}: " if len(results) > 1 else ""
        text = f"{subject}: dclb {lead}{shown}, {seeds} seed{'s' if seeds != 1 else ''}"
        if len(results) > 1:
            which = "the closest" if self.need == "any" else "the deciding one"
            text += f" ({which} of {len(results)} series and points)"
        if outcome is Outcome.CANNOT_TELL:
            text += f" ({_noise_note(seeds)})"
        if paper:
            text += f"; paper {paper}"
        return Verdict(outcome, _with_reading(text, self.reading, reading), e, paper, seeds, len(results))


@dataclass(frozen=True)
class NotTestable(Shape):
    """A claim dclb cannot test; ``why`` says why, ``show`` names a related number dclb has (metric, series,
    point), shown beside it."""

    why: str
    show: Optional[tuple[Metric, tuple[str, ...], Mapping[str, Any]]] = None

    def metrics(self) -> list[Metric]:
        return [self.show[0]] if self.show else []

    def __hash__(self) -> int:
        return hash(self.why)

    def judge(self, d: FrameData) -> Verdict:
        text = f"not testable: {self.why}"
        if self.show is not None:
            metric, names, where = self.show
            vals = []
            for s in names or d.series:
                v = list(d.values(metric.key, s, where).values())
                if v:
                    vals.append(f"{s} {sum(v) / len(v):.3g}")
            if vals:
                text += f"; dclb shows {short_label(metric)}{points_text([where])}, mean over seeds: {', '.join(vals)}"
        return Verdict(Outcome.NOT_TESTABLE, text, why=self.why)


@dataclass(frozen=True)
class Combined(Shape):
    """Several shapes that must all hold (``need="all"``) or one of which must (``"any"``)."""

    parts: tuple[Shape, ...]
    need: str = "all"
    reading: str = ""

    def metrics(self) -> list[Metric]:
        return [m for p in self.parts for m in p.metrics()]

    def judge(self, d: FrameData) -> Verdict:
        verdicts = [p.judge(d) for p in self.parts]
        outcome = combine([v.outcome for v in verdicts], self.need)
        deciding = next((v for v in verdicts if v.outcome is outcome), verdicts[0])
        joiner = " AND " if self.need == "all" else " OR "
        text = joiner.join(f"({v.text})" for v in verdicts)
        known = [v.seeds for v in verdicts if v.seeds]
        return Verdict(
            outcome,
            _with_reading(text, self.reading),
            deciding.effect,
            deciding.paper,
            min(known) if known else 0,
            sum(v.points for v in verdicts),
            deciding.headroom,
            deciding.need,
            "; ".join(v.why for v in verdicts if v.why),
        )


# ---------------------------------------------------------------------------------------------------------------
# Constructors: what a paper file calls


Points = Union[Mapping[str, Any], Sequence[Mapping[str, Any]], None]


def _expectation(paper: Any, at_least: bool, within: Optional[tuple[float, float]], higher: bool) -> Any:
    if within is not None:
        return Band(*within)
    if paper is not None:
        lo, hi = (paper, paper) if isinstance(paper, (int, float)) else paper
        return Number(float(lo), float(hi), at_least)
    return Direction(1 if higher else -1)


def compare(
    metric: Metric,
    x: Union[Operand, Sequence[Operand], None] = None,
    y: Union[Operand, Sequence[Operand], None] = None,
    *,
    at: Points = None,
    higher: bool = False,
    paper: Union[float, tuple[float, float], None] = None,
    at_least: bool = False,
    within: Optional[tuple[float, float]] = None,
    best: bool = False,
    mean: bool = False,
    pairs: Optional[Sequence[tuple[Operand, Operand]]] = None,
    reading: str = "",
    subject: str = "",
) -> Compare:
    """Each of ``x`` against each of ``y`` (or the explicit ``pairs``) at each point of ``at``.

    Without ``paper``: x lower than y (``higher``: higher), by any significant amount. ``paper``: the paper's percent
    change of x against y (a number or a (low, high) range), ``at_least`` for "more than". ``within``: a band of
    ratios x/y ("about the same"). ``best``: the paper's "up to": judged at the pair and point where dclb's effect
    is largest. ``mean``: the paper's "around" over several points: the per-seed mean over the points."""
    if pairs is None:
        pairs = [(a, b) for a, b in itertools.product(_many(x), _many(y)) if _side(a) != _side(b)]
    return Compare(
        metric,
        tuple((_side(a), _side(b)) for a, b in pairs),
        _points(at),
        _expectation(paper, at_least, within, higher),
        "best" if best else "mean" if mean else "each",
        reading,
        subject,
    )


def rank(metric: Metric, series: str, within: int = 1, *, at: Points = None, top: str = "lowest", among: Optional[Sequence[str]] = None, reading: str = "") -> Rank:
    """``series`` among the first ``within`` of the series (or of ``among``) at each point, ordered by ``top``
    ("lowest" first or "highest" first): "X has the smallest p99" is ``rank(P99, X)``, "ECMP has the largest" is
    ``rank(P99, "ECMP", top="highest")``."""
    return Rank(metric, series, within, _points(at), top, tuple(among) if among else None, reading)


def trend(
    metric: Metric,
    series: Union[str, Sequence[str], None] = None,
    along: str = "traffic.load",
    lo: Any = None,
    hi: Any = None,
    *,
    goes: str = "up",
    than: Optional[Sequence[str]] = None,
    at: Optional[Mapping[str, Any]] = None,
    paper: Union[float, tuple[float, float], None] = None,
    at_least: bool = False,
    within: Optional[tuple[float, float]] = None,
    values: Optional[Sequence[Any]] = None,
    reading: str = "",
) -> Trend:
    """How ``metric`` of each of ``series`` (default: every series) changes from ``along = lo`` to ``hi`` (default:
    the axis's first and last values), the other grid fields at ``at``.

    ``goes``: ``"up"`` or ``"down"`` (significantly), ``"flat"`` (the ratio hi/lo within the band ``within``; or,
    with ``values``, within the band of the series' own mean at each of those values), ``"least"`` or ``"most"``
    (its growth hi/lo below or above each of ``than``'s, default every other series, paired per seed). ``paper``:
    the paper's percent change from lo to hi (``at_least`` for "at least doubles": ``paper=100, at_least=True``);
    ``within``: a band of ratios hi/lo (dclb's reading of "about a sixth")."""
    names = None if series is None else ((series,) if isinstance(series, str) else tuple(series))
    if goes in ("least", "most"):
        expect: Any = Direction(-1 if goes == "least" else 1)
    elif goes == "flat":
        expect = Band(*(within or (0.9, 1.1)))
    else:
        expect = _expectation(paper, at_least, within, goes == "up")
        if paper is None and within is None:
            expect = Direction(1 if goes == "up" else -1)
    return Trend(metric, names, along, lo, hi, goes, expect, tuple(than) if than else None, dict(at or {}), tuple(values) if values else None, reading)


def level(
    metric: Metric,
    series: Union[str, Spread, Sequence[Union[str, Spread]]],
    at: Points = None,
    *,
    within: tuple[float, float],
    paper: Optional[float] = None,
    any_point: bool = False,
    every_run: bool = False,
    reference: Optional[Callable[[Mapping[str, Any], str], float]] = None,
    reading: str = "",
) -> Level:
    """``metric`` of each of ``series`` inside ``within`` (low, high) at each point (``any_point``: at one of
    them at least). A :class:`Spread` or a ``reference`` (a function of the point and series returning the model's
    value) makes the band one of ratios. ``every_run``: each run inside the band, no averaging ("always 0")."""
    names = (series,) if isinstance(series, (str, Spread)) else tuple(series)
    return Level(metric, names, _points(at), Band(*within), paper, "any" if any_point else "all", every_run, reference, reading)


def not_testable(why: str, show: Optional[tuple[Metric, Sequence[str], Mapping[str, Any]]] = None) -> NotTestable:
    """A claim dclb cannot test, and why; ``show`` = (metric, series, point) prints a related number of dclb's."""
    return NotTestable(why, (show[0], tuple(show[1]), dict(show[2])) if show else None)


def all_of(*parts: Shape, reading: str = "") -> Combined:
    return Combined(tuple(parts), "all", reading)


def any_of(*parts: Shape, reading: str = "") -> Combined:
    return Combined(tuple(parts), "any", reading)


def metrics_of(claims: Iterable[Any]) -> list[Metric]:
    """Every metric the claims read (their shapes', their alternatives')."""
    out: list[Metric] = []
    for c in claims:
        for shape in (c.check, *(a.check for a in getattr(c, "alternatives", ()))):
            if isinstance(shape, Shape):
                out.extend(shape.metrics())
    return out
