"""LBT's threshold model (§4.1, eqs 1-11 of the paper), as pure functions, for drawing beside dclb's runs.

The paper sets its two queue thresholds from an M/G/1 model of the switch's candidate links: Q1 for long flows
from the load of short and long traffic, Q2 for best-effort (BE) traffic from the load of all three classes,
recomputed every t = 500 µs. The printed equations are dimensionally broken and, repaired, ill-posed (dclb's
implementation notes §5.2-§5.5; docs/assumptions.md § LBT, items 8-15). dclb's engine
implements two bounded readings, and this module restates both so that a figure can show what they give:

* :func:`mg1_backlog` (dclb's default, ``lb.threshold_model = "mg1_backlog"``): the threshold is the mean
  backlog, in bytes, of the paper's M/D/1 queue at the measured load, ``G·E[W_q] = W·l/(2(1 - l))`` (eq 5 times
  the link rate), with ``l1`` (eq 1) for Q1 and ``l2`` (eq 2) for Q2, clamped to ``[q_min, q1_max]`` and
  ``[q_min, q2_max]``; Q2 is raised to at least Q1. A load at or above 1 gives the upper bound.
* :func:`paper_thresholds` (``lb.threshold_model = "paper"``): eqs 8-11 with the period put in, the stray
  ``1/X_s`` dropped and the guards of the spec §5.5 (a class without traffic keeps its previous threshold; a
  non-positive queueing budget or denominator gives the upper bound; a negative result the lower bound).

The numbers of the spec's §5.7 table are the unit tests (tests/test_reproduce_lbt.py). Units: bytes, seconds,
bytes per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import pandas as pd

#: Table 1's maximum window W (64 KB), bytes.
W_BYTES = 65_536
#: The paper's link rate, 10 Gbps, in bytes per second.
G_10G = 10e9 / 8
#: The update period t (L123, L284), seconds.
PERIOD_S = 500e-6
#: dclb's bounds on the paper's fabric: one full-size packet; the DCTCP marking threshold (65 packets of
#: 1,500 B); the 256-packet buffer less one packet.
Q_MIN, Q1_MAX, Q2_MAX = 1_500.0, 97_500.0, 382_500.0


def backlog(load: float, w: float = W_BYTES) -> float:
    """Mean backlog (bytes) of the paper's M/D/1 queue at utilisation ``load``: ``W·l/(2(1 - l))`` (eq 5 × G);
    infinite at or above 1."""
    if load >= 1.0:
        return math.inf
    return w * max(load, 0.0) / (2.0 * (1.0 - load))


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def mg1_backlog(l1: float, l2: float, w: float = W_BYTES, q_min: float = Q_MIN, q1_max: float = Q1_MAX, q2_max: float = Q2_MAX) -> tuple[float, float]:
    """(Q1, Q2) in bytes under dclb's default model at loads ``l1`` (short + long) and ``l2`` (all classes)."""
    q1 = _clamp(backlog(l1, w), q_min, q1_max)
    q2 = _clamp(backlog(l2, w), q_min, q2_max)
    return q1, max(q2, q1)


@dataclass(frozen=True)
class Period:
    """What a switch measured over one period, per class: bytes sent into the group's ports (``b_*``), distinct
    flows (``p_s``, short only: it sets X_s) and ports touched (``k_*``)."""

    b_s: float
    b_l: float
    b_b: float
    k_s: int
    k_l: int
    k_b: int
    p_s: int


@dataclass(frozen=True)
class PaperModel:
    """The constants of eqs 8-11 (spec §5.7's defaults: K = 9 links of 10 Gbps, t = 500 µs, R = 100 µs, m =
    7,300 B, γ = 2)."""

    k: int = 9
    g: float = G_10G
    t: float = PERIOD_S
    w: float = W_BYTES
    r: float = 100e-6
    m: float = 7_300.0
    gamma: float = 2.0
    fct_target: Optional[float] = None
    q_min: float = Q_MIN
    q1_max: float = Q1_MAX
    q2_max: float = Q2_MAX


@dataclass(frozen=True)
class PaperResult:
    q1: float
    q2: float
    l1: float
    l2: float
    x_s: float
    n: float
    target: float
    eps: float
    z1: float
    z2: float
    raw_q1: float
    raw_q2: float


def paper_thresholds(m: Period, c: PaperModel = PaperModel(), prev: tuple[float, float] = (Q_MIN, Q_MIN), x_s_prev: float = 10_000.0) -> PaperResult:
    """Eqs 8-11 as repaired and guarded in the spec §5.5 (dclb's ``threshold_model = "paper"``)."""
    gt = c.g * c.t
    x_s = m.b_s / m.p_s if m.b_s > 0 and m.p_s > 0 else x_s_prev
    n = max(1.0, math.log2(x_s / c.m) + 1.0) if x_s > 0 else 1.0
    target = c.fct_target if c.fct_target is not None else c.gamma * (n * c.r + x_s / c.g)
    budget = target - x_s / c.g
    a1 = m.b_s + m.b_l
    a2 = a1 + m.b_b
    l1, l2 = a1 / (c.k * gt), a2 / (c.k * gt)
    eps = n * c.w / (2.0 * c.g * budget) if budget > 0 else math.inf
    z1 = (1.0 + eps) * a1 / gt
    z2 = (1.0 + eps) * a2 / gt

    def solve(b: float, z: float, k_other: int, previous: float, hi: float) -> tuple[float, float]:
        if b <= 0:
            return previous, math.nan
        d = z - k_other
        if budget <= 0 or d <= 0:
            return hi, math.inf
        raw = b / d - gt
        return _clamp(raw, c.q_min, hi), raw

    q1, raw1 = solve(m.b_l, z1, m.k_s + m.k_b, prev[0], c.q1_max)
    q2, raw2 = solve(m.b_b, z2, m.k_s + m.k_l, prev[1], c.q2_max)
    return PaperResult(q1, max(q2, q1), l1, l2, x_s, n, target, eps, z1, z2, raw1, raw2)


def threshold_curves(loads: Sequence[float], be_share: float, points: int = 61) -> pd.DataFrame:
    """Q1 and Q2 (KB) of :func:`mg1_backlog` against the offered load of a leaf's uplinks, from the smallest to
    the largest of ``loads``: ``l2`` = the load, ``l1`` = the load without its best-effort share ``be_share``.
    Columns ``x``, ``value``, ``series`` (the shape a model panel draws)."""
    lo, hi = min(loads), max(loads)
    xs = [lo + (hi - lo) * i / (points - 1) for i in range(points)] if hi > lo else [lo]
    rows = []
    for x in xs:
        q1, q2 = mg1_backlog(x * (1.0 - be_share), x)
        rows.append({"x": x, "value": q1 / 1e3, "series": "Q1 (model)"})
        rows.append({"x": x, "value": q2 / 1e3, "series": "Q2 (model)"})
    return pd.DataFrame(rows)
