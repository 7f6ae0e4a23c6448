"""TR's analytic model of one flow's completion time under RPS and under TR (paper §"Model analysis", L118-L156,
Eqs. 2-8; dclb's implementation notes §5, see docs/references.md), drawn in Fig. 6 against dclb's simulated points.

N flows of S packets start together on n parallel paths, n_g good (round-trip propagation d_g) and n_b bad
(d_b); every switch port holds B packets, a packet takes t to serialise, and H duplicate ACKs trigger a fast
retransmit. The equations are reproduced as published (spec §5.3), inconsistencies included:

* Eq. (4), the probability that reordering triggers a spurious fast retransmit, in the closed form
  ``P_fr = sum_{i=1}^{S-H} p_g^(i-1) p_b Pr[Binomial(S-i, p_g) >= H]`` (p_g = n_g/n, p_b = n_b/n), which equals
  the printed double sum over n^S path assignments (:func:`p_fr_exact` computes that one exactly; the unit test
  checks they agree) without its overflow;
* Eq. (3): ``w = (nB/N)(1 - P_fr) + (nB/2N) P_fr``; Eq. (6): ``r = (1 - (n_g/n)^w) d_b + (n_g/n)^w d_g + N w t / n``;
* Eq. (7): ``F_RPS = 4 S r / (3 w)``;
* Eq. (8), TR's worst case (every packet on a bad path, window 3nB/4N): ``F_TR = S N (16 d_b + 12 B t) / (9 n B)``.

Times are in microseconds. A flow of ``size`` bytes is ``round(size / packet_bytes)`` packets (1,500 B on the
wire, spec §5.4), which gives the spec's reference values (67 packets for 100 KB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import pandas as pd


@dataclass(frozen=True)
class ModelParams:
    """The model's inputs (Table 3), by default the motivation fabric at rho = 3.5 (spec §5.4)."""

    n_good: int = 5
    n_bad: int = 5
    buffer_packets: float = 250.0
    packet_time_us: float = 12.0  # 1,500 B at 1 Gbps
    d_good_us: float = 200.0  # round-trip propagation of a good path
    d_bad_us: float = 700.0  # ... of a bad path (3.5 x)
    dupack_threshold: int = 3
    packet_bytes: float = 1500.0

    @property
    def n(self) -> int:
        return self.n_good + self.n_bad


def packets(size_bytes: float, p: ModelParams = ModelParams()) -> int:
    """S in packets for a flow of ``size_bytes``."""
    return max(1, round(size_bytes / p.packet_bytes))


def _binom_at_least(m: int, q: float, h: int) -> float:
    """Pr[Binomial(m, q) >= h]."""
    if h <= 0:
        return 1.0
    if m < h:
        return 0.0
    below = sum(math.comb(m, k) * q**k * (1.0 - q) ** (m - k) for k in range(h))
    return max(0.0, 1.0 - below)


def p_fr(s: int, p: ModelParams = ModelParams()) -> float:
    """Eq. (4) in closed form: the probability that reordering triggers a fast retransmit in a flow of ``s``
    packets sprayed uniformly over the paths."""
    pg, pb, h = p.n_good / p.n, p.n_bad / p.n, p.dupack_threshold
    return sum(pg ** (i - 1) * pb * _binom_at_least(s - i, pg, h) for i in range(1, s - h + 1))


def p_fr_exact(s: int, p: ModelParams = ModelParams()) -> Fraction:
    """Eq. (4) as printed (limits 1 <= i <= S-H, H <= k <= S-i), in exact arithmetic; for small ``s`` only."""
    ng, nb, h = p.n_good, p.n_bad, p.dupack_threshold
    num = sum(math.comb(s - i, k) * ng ** (i - 1 + k) * nb ** (s - i - k + 1) for i in range(1, s - h + 1) for k in range(h, s - i + 1))
    return Fraction(num, p.n**s)


def window_rps(s: int, flows: int, p: ModelParams = ModelParams()) -> float:
    """Eq. (3): RPS's mean window (packets)."""
    top = p.n * p.buffer_packets / flows
    pf = p_fr(s, p)
    return top * (1.0 - pf) + top / 2.0 * pf


def rtt_rps(s: int, flows: int, p: ModelParams = ModelParams()) -> float:
    """Eq. (6): RPS's end-to-end delay r (µs)."""
    w = window_rps(s, flows, p)
    good = (p.n_good / p.n) ** w
    return (1.0 - good) * p.d_bad_us + good * p.d_good_us + flows * w * p.packet_time_us / p.n


def fct_rps(size_bytes: float, flows: int, p: ModelParams = ModelParams()) -> float:
    """Eq. (7): one flow's completion time under RPS (µs)."""
    s = packets(size_bytes, p)
    return 4.0 * s * rtt_rps(s, flows, p) / (3.0 * window_rps(s, flows, p))


def fct_tr(size_bytes: float, flows: int, p: ModelParams = ModelParams()) -> float:
    """Eq. (8): one flow's completion time under TR, worst case (µs)."""
    s = packets(size_bytes, p)
    return s * flows * (16.0 * p.d_bad_us + 12.0 * p.buffer_packets * p.packet_time_us) / (9.0 * p.n * p.buffer_packets)


def curves(x_field: str, xs: list[float], fixed: float, p: ModelParams = ModelParams(), labels: tuple[str, str] = ("RPS", "TR"), factor: float = 1e-3) -> pd.DataFrame:
    """Model curves for Fig. 6: columns ``x``, ``value`` (FCT × ``factor``, ms by default) and ``series``.

    ``x_field`` is ``"size"`` (x = flow size in bytes, ``fixed`` = number of flows) or ``"flows"`` (x = number
    of flows, ``fixed`` = flow size in bytes)."""
    rows = []
    for x in xs:
        size, n = (x, int(fixed)) if x_field == "size" else (fixed, int(x))
        rows.append({"x": x, "value": fct_rps(size, n, p) * factor, "series": labels[0]})
        rows.append({"x": x, "value": fct_tr(size, n, p) * factor, "series": labels[1]})
    return pd.DataFrame(rows)


def with_ratio(rho: float, p: ModelParams = ModelParams()) -> ModelParams:
    """The same model with the bad paths' round trip at ``rho`` times the good one."""
    return replace(p, d_bad_us=rho * p.d_good_us)
