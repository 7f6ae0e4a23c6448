"""TAM (Hindawi 2022): the motivation (Figs. 3, 4), the microbenchmarks (Figs. 6-9) and the large-scale runs
(Figs. 10-12).

"L" numbers are lines of the paper's text and [P]/[G] tags those of dclb's implementation notes (§7), see
docs/references.md: [P] the paper states it, [G] a guess. Each scenario file comments every setting.

**Microbenchmarks** (``micro.toml``, ``micro_asym.toml``): 2 leaves (groups A and B, 20 hosts each) x 10 spines,
1 Gbps and 25 us per link, 192 KB = 128-packet buffers [P]; DCTCP. Group A sends N_long long flows and N_short short
flows to group B. The paper gives neither their sizes nor their rates, so [G]: long flows are 10 MB, starting
uniformly over the first 10 ms (a Poisson process conditioned on its count); short flows are data-mining flows of
at most 100 KB (``datamining_short.cdf``, mean 6.4 KB), Poisson with a 1 ms mean gap from 10 ms on. Figs. 3, 6
and 8 sweep N_long = 1..10 with 100 short flows; Figs. 4, 7 and 9 sweep N_short = 10..100 with 10 long flows (step
10 [G]). Figs. 8-9 make 5 of the 10 spines [G] bad: their leaf-spine links have 100 us of delay (4x) [P]. Figs.
3-4 are Figs. 6-7 with three schemes, so they reuse those runs.

**Large scale** (``large.toml``): 10 x 10 leaf-spine, 40 Gbps, 1 us links, 375 KB = 250-packet buffers, 200 hosts,
half of them senders [P] (10 per leaf [G]). Figs. 10-11: one run per workload (data mining, web search, cache
follower, web server, Hadoop; 10,000 flows [P]) at load 0.5 [G: the paper gives none]. Fig. 12: the five mixed in
equal shares (50,000 flows [P]) at loads 0.2-0.8 [P]. Hadoop is ``hadoop_parsimon_intracluster``, the CDF that
matches the paper's Table 4; web search is ``websearch`` although the paper's Table 4 row matches no public CDF
(spec A25).

**Schemes** [P] L244-L256: ECMP (5-tuple hash; the paper says a hash of the source IP, A21), LetFlow (flowlet
timeout 500 us [G], the same group's TR value), RPS (random per packet), DRB (round robin per packet), Presto
(round robin over 64 KB flowcells, L254), TAM with dclb's defaults (the paper's reading: every switch counts and
marks; flowlet timeout 500 us; k* = C x RTT / 7; see ``dclb schemes``). Presto and DRB run without a receive
(resequencing) buffer: NS2's TCP has none, and the paper blames their low goodput on reordering (L262).

**Metrics.** Short flows are <= 100 KB, long ones above (L29). "Average queueing delay of short flows" is the mean
per packet: the summed queueing delay of completed short flows over their packets (sizes / 1460 B, rounded up).
Long-flow retransmissions are summed over the long flows. "Standard deviation of long flows' routing" (Fig. 4(c))
is the population standard deviation, over the 10 uplinks of the senders' leaf, of the long flows' bytes on each,
as a rate over the long flows' lifetime (first start to last finish), in Mbps.

**Claims.** Ordinal claims are checked at every point of the axis (``ordering``); "X hardly changes" claims compare
schemes' growth along the axis (the paper gives no tolerance, so TAM's growth is compared with the others'); the
headline numbers (short AFCT up to -60 %, tail up to -50 %, long goodput up to +40 %, L25, L48) are read as the
best case over schemes and points, since the paper says "up to" without naming a figure; they are checked on the
microbenchmark figures (the goodput claim can only come from Figs. 7 and 9). Where the paper says "close to" or
"about the same", the claim states the tolerance used.

**Scales.** paper: 5 seeds [G] ("repeated many times", L77), the paper's 10,000 flows per workload and 50,000
mixed. quick: the microbenchmarks as in the paper with 3 seeds; the 40 Gbps runs with one seed (``Sweep.seeds``) of
1,000 flows per workload and 2,000 mixed. ci: one seed, every grid trimmed to its ends, 1 MB long flows in the
microbenchmarks, 60 flows at 40 Gbps.

**Caveats.** (1) With random pairs [G] the long flows of the microbenchmarks often share a sender or a receiver
host, which halves their goodput whatever the balancer does: at quick scale the seeds differ more than the schemes
(seed 1 vs seed 2 long goodput 0.52 vs 0.87 Gbps under TAM), and the confidence bands of Figs. 4, 7 and 9 are wide.
(2) At quick scale the 40 Gbps arrivals last 10-40 ms while the largest data-mining flows (up to 1 GB) take up to
200 ms alone, so the realised load falls short of the nominal one and the load axis of Fig. 12 compresses; only
the paper scale gives the load its meaning. (3) TAM places a long flow while it is still short (by transmission
delay, when every uplink is idle at 1 Gbps) and moves it only at a flowlet gap, which a backlogged DCTCP flow at
1 Gbps never leaves: two long flows that start on one uplink stay there.

Not reproduced: Figs. 1, 2 and 5 are illustrations (no data). Every evaluation figure is reproduced.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...reproduce import metrics as m
from ...reproduce import verdict as v
from ...reproduce.spec import Claim, Figure, Metric, Panel, Paper, Scale, Series, Sweep, Verdict

TAM = "TAM"
SHORT_LIMIT = 100_000
MSS = 1460  # micro.toml, large.toml

ECMP_S = Series("ECMP", ("lb.scheme=ecmp",))
LETFLOW_S = Series("LetFlow", ("lb.scheme=letflow",))
RPS_S = Series("RPS", ("lb.scheme=rps",))
DRB_S = Series("DRB", ("lb.scheme=drb",))
PRESTO_S = Series("Presto", ("lb.scheme=presto", "lb.flowcell_bytes=64000"))
TAM_S = Series(TAM, ("lb.scheme=tam",))
MOTIVATION = (ECMP_S, LETFLOW_S, RPS_S)
ALL = (ECMP_S, LETFLOW_S, RPS_S, DRB_S, PRESTO_S, TAM_S)
OTHERS = [s.label for s in ALL if s.label != TAM]
COARSE = ["ECMP", "LetFlow", "Presto"]
FINE = ["RPS", "DRB"]

N_LONG = "traffic.sources.0.flows"
N_SHORT = "traffic.sources.1.flows"
LONGS = list(range(1, 11))
SHORTS = list(range(10, 101, 10))
WORKLOAD = "traffic.workload"
WORKLOADS = ["cachefollower", "datamining", "hadoop_parsimon_intracluster", "websearch", "webserver"]
LOAD = "traffic.load"
LOADS = [0.2, 0.4, 0.6, 0.8]
MIXED = "traffic.workload={datamining = 0.2, websearch = 0.2, cachefollower = 0.2, webserver = 0.2, hadoop_parsimon_intracluster = 0.2}"

# ---------------------------------------------------------------------------------------------------- metrics


def _short_done(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[(flows["state"] == "completed") & (flows["size_bytes"] <= SHORT_LIMIT) & (flows["transport"] != "udp")]


def _short_queueing(flows: pd.DataFrame) -> float:
    d = _short_done(flows)
    packets = np.ceil(d["size_bytes"].to_numpy(dtype=float) / MSS).sum()
    return float(d["queueing_delay_us"].sum() / packets) if packets else math.nan


def _long_retx(flows: pd.DataFrame) -> float:
    d = flows[(flows["size_bytes"] > SHORT_LIMIT) & (flows["transport"] != "udp")]
    return float(d["retransmissions"].sum()) if len(d) else math.nan


def _long_path_std(flows: pd.DataFrame) -> float:
    d = flows[(flows["size_bytes"] > SHORT_LIMIT) & (flows["transport"] != "udp")]
    if not len(d):
        return math.nan
    per_path = np.sum(np.stack([np.asarray(u, dtype=float) for u in d["uplink_bytes"]]), axis=0)
    span_us = float(d["finish_us"].max() - d["start_us"].min())
    if not span_us > 0:
        return math.nan
    return float(np.std(per_path * 8 / span_us))  # bits per us = Mbps


SHORT_AFCT = m.SHORT_AFCT
SHORT_P99 = m.SHORT_P99
SHORT_QUEUE = Metric("short_queueing_us", "short-flow queueing delay per packet (µs)", flows=_short_queueing)
LONG_GOODPUT = m.LONG_GOODPUT
LONG_RETX = Metric("long_retx", "retransmitted packets of long flows", flows=_long_retx)
LONG_STD = Metric("long_path_std_mbps", "std. dev. of long-flow rate per path (Mbps)", flows=_long_path_std)
LONG_AFCT = m.LONG_AFCT
LONG_P99 = m.fct_quantile(0.99, SHORT_LIMIT, None, "long-flow 99th-percentile FCT")
OVERALL = m.OVERALL_AFCT

# ---------------------------------------------------------------------------------------------------- verdicts


def _fmt(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


class _Means:
    """Means over seeds of one metric per (series, value of ``x``), computed once (``verdict.mean_of`` filters the
    frame on every call, which the many comparisons below would repeat)."""

    def __init__(self, frame: pd.DataFrame, metric: str, x: str | None) -> None:
        self.x = x
        ok = not frame.empty and metric in frame.columns and (x is None or x in frame.columns)
        if ok:
            g = frame.dropna(subset=[metric]).groupby(["series", *([x] if x else [])], sort=False)[metric].mean()
            self.table = {k if x else k: float(a) for k, a in g.items()}
            self.series = list(dict.fromkeys(frame["series"]))
            self.xs = sorted(frame[x].dropna().unique(), key=lambda a: (isinstance(a, str), a)) if x else []
        else:
            self.table, self.series, self.xs = {}, [], []

    def __call__(self, series: str, at: Any = None) -> float:
        key = (series, at) if self.x else series
        return self.table.get(key, math.nan)

    def growth(self, series: str) -> float:
        """Mean at the last point of ``x`` over the mean at the first (NaN if either is missing)."""
        if len(self.xs) < 2:
            return math.nan
        a, b = self(series, self.xs[0]), self(series, self.xs[-1])
        return b / a if math.isfinite(a) and math.isfinite(b) and a > 0 else math.nan


def rises(frame: pd.DataFrame, subject: str, metric: str, series: Sequence[str], x: str) -> Verdict:
    """Each of ``series`` is higher at the last point of ``x`` than at the first."""
    mm = _Means(frame, metric, x)
    parts, ok = [], []
    for s in series:
        g = mm.growth(s)
        if math.isfinite(g):
            parts.append(f"{s} x{g:.2f}")
            ok.append(g > 1)
    if not ok:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb, last over first point (from {_fmt(mm.xs[0])} to {_fmt(mm.xs[-1])}): {', '.join(parts)}", all(ok))


def least_growth(frame: pd.DataFrame, subject: str, metric: str, series: str, others: Sequence[str], x: str) -> Verdict:
    """``series`` grows least (last over first point of ``x``) of all."""
    mm = _Means(frame, metric, x)
    g0 = mm.growth(series)
    rest = {o: mm.growth(o) for o in others}
    rest = {o: g for o, g in rest.items() if math.isfinite(g)}
    if not math.isfinite(g0) or not rest:
        return Verdict(f"{subject}: dclb: no data", None)
    least = min(rest, key=rest.get)
    text = f"{subject}: dclb {series} x{g0:.2f} from {_fmt(mm.xs[0])} to {_fmt(mm.xs[-1])}; least among the others: {least} x{rest[least]:.2f}"
    return Verdict(text, g0 < rest[least])


def flattest(frame: pd.DataFrame, subject: str, metric: str, series: Sequence[str], x: str, tolerance: float) -> Verdict:
    """Each of ``series`` stays within ``tolerance`` (relative) of its own mean along ``x``."""
    mm = _Means(frame, metric, x)
    parts, ok = [], []
    for s in series:
        means = [a for a in (mm(s, p) for p in mm.xs) if math.isfinite(a)]
        if len(means) < 2:
            continue
        mid = float(np.mean(means))
        dev = max(abs(a / mid - 1) for a in means) if mid else math.nan
        parts.append(f"{s} ±{100 * dev:.0f}%")
        ok.append(dev <= tolerance)
    if not ok:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb, largest deviation from the mean over {x.split('.')[-1]}: {', '.join(parts)}", all(ok))


def all_zero(frame: pd.DataFrame, subject: str, metric: str, series: Sequence[str]) -> Verdict:
    """Every run of ``series`` has the value 0."""
    parts, ok = [], []
    for s in series:
        vals = frame[frame["series"] == s][metric].dropna() if not frame.empty else pd.Series(dtype=float)
        if len(vals):
            parts.append(f"{s} max {vals.max():g}")
            ok.append(bool((vals == 0).all()))
    if not ok:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb {', '.join(parts)}", all(ok))


def ratio_within(frame: pd.DataFrame, subject: str, metric: str, series: str, others: Sequence[str], lo: float, hi: float, where: Mapping[str, Any] | None = None) -> Verdict:
    """``series`` / each of ``others`` (means over the rows matching ``where``) lies in [lo, hi]."""
    a = v.mean_of(frame, metric, series, where)
    parts, ok = [], []
    for o in others:
        b = v.mean_of(frame, metric, o, where)
        if math.isfinite(a) and math.isfinite(b) and b > 0:
            r = a / b
            parts.append(f"{series}/{o} = {r:.2f}")
            ok.append(lo <= r <= hi)
    if not ok:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb {', '.join(parts)}", all(ok))


def between(frame: pd.DataFrame, subject: str, metric: str, series: str, a: str, b: str) -> Verdict:
    """``series`` lies between ``a`` and ``b`` (means over every point)."""
    s, x, y = (v.mean_of(frame, metric, n) for n in (series, a, b))
    if not all(math.isfinite(t) for t in (s, x, y)):
        return Verdict(f"{subject}: dclb: no data", None)
    holds = min(x, y) <= s <= max(x, y)
    return Verdict(f"{subject}: dclb, mean over the axis: {a} {x:.3g}, {series} {s:.3g}, {b} {y:.3g}", holds)


def group_beats(frame: pd.DataFrame, subject: str, metric: str, winners: Sequence[str], losers: Sequence[str], x: str, at: Sequence[Any], higher_is_better: bool = False) -> Verdict:
    """Every one of ``winners`` beats every one of ``losers`` at every value ``at`` of ``x``."""
    return v.ordering(frame, subject, metric, winners, losers, v.points(x, at), higher_is_better=higher_is_better)


def best_case(frame: pd.DataFrame, subject: str, metric: str, series: str, others: Sequence[str], x: str, paper_pct: float, higher_is_better: bool = False) -> Verdict:
    """The paper's "up to p %": ``series`` against the scheme and point of ``x`` where it gains most, as
    ``verdict.relative`` words it."""
    mm = _Means(frame, metric, x)
    best: tuple[float, str, Any] | None = None
    for p in mm.xs:
        a = mm(series, p)
        for o in others:
            b = mm(o, p)
            if not (math.isfinite(a) and math.isfinite(b)) or b == 0:
                continue
            gain = (a / b - 1) * (1 if higher_is_better else -1)
            if best is None or gain > best[0]:
                best = (gain, o, p)
    if best is None:
        return Verdict(f"{subject}: dclb: no data", None)
    _, o, p = best
    return v.relative(frame, f"{subject} (best case: vs {o} at {x.split('.')[-1]} {_fmt(p)})", metric, series, o, paper_pct, {x: p})


def best_other(frame: pd.DataFrame, subject: str, metric: str, paper_pct: float, where: Mapping[str, Any]) -> Verdict:
    """TAM against the best of the other schemes at ``where``, as ``verdict.relative`` words it; holds only if
    TAM gains at least ``|paper_pct|`` ("more than 20 %" is a bound, not an estimate)."""
    vals = {o: v.mean_of(frame, metric, o, where) for o in OTHERS}
    vals = {o: a for o, a in vals.items() if math.isfinite(a)}
    if not vals:
        return Verdict(f"{subject}: dclb: no data", None)
    o = min(vals, key=vals.get)
    out = v.relative(frame, f"{subject} vs {o} (best other)", metric, TAM, o, paper_pct, where)
    c = v.change(frame, metric, TAM, o, where)
    holds = None if out.holds is None else bool(math.isfinite(c) and 100 * c <= paper_pct)
    return Verdict(out.text, holds)


def _spread(mm: _Means, at: Any) -> float:
    """Largest over smallest scheme mean at ``at``."""
    vals = [a for a in (mm(s, at) for s in mm.series) if math.isfinite(a) and a > 0]
    return max(vals) / min(vals) if len(vals) >= 2 else math.nan


def spread_order(frame: pd.DataFrame, subject: str, metric: str, wide: Sequence[str], narrow: Sequence[str]) -> Verdict:
    """The spread between schemes (largest over smallest mean) is larger at each workload of ``wide`` than at
    each of ``narrow``."""
    mm = _Means(frame, metric, WORKLOAD)
    w = {k: _spread(mm, k) for k in wide}
    n = {k: _spread(mm, k) for k in narrow}
    w = {k: s for k, s in w.items() if math.isfinite(s)}
    n = {k: s for k, s in n.items() if math.isfinite(s)}
    if not w or not n:
        return Verdict(f"{subject}: dclb: no data", None)
    text = "; ".join(f"{k} x{s:.2f}" for k, s in {**w, **n}.items())
    return Verdict(f"{subject}: dclb, largest/smallest scheme: {text}", min(w.values()) > max(n.values()))


def extreme_workload(frame: pd.DataFrame, subject: str, metric: str, workload: str, lowest: bool = False) -> Verdict:
    """For every scheme, ``workload`` has the highest (``lowest``: the lowest) value of all workloads."""
    mm = _Means(frame, metric, WORKLOAD)
    if workload not in mm.xs or len(mm.xs) < 2:
        return Verdict(f"{subject}: dclb: no data", None)
    hits, misses = 0, []
    for s in mm.series:
        vals = {k: mm(s, k) for k in mm.xs}
        vals = {k: a for k, a in vals.items() if math.isfinite(a)}
        if workload not in vals:
            continue
        top = (min if lowest else max)(vals, key=vals.get)
        if top == workload:
            hits += 1
        else:
            misses.append(f"{s}: {top}")
    total = hits + len(misses)
    if total == 0:
        return Verdict(f"{subject}: dclb: no data", None)
    text = f"{subject}: dclb: so for {hits} of {total} schemes" + (f" (otherwise {', '.join(misses)})" if misses else "")
    return Verdict(text, not misses)


# ---------------------------------------------------------------------------------------------------- figures


def _ordering(subject: str, metric: Metric, winner: str, others: Sequence[str], points: Sequence[Mapping[str, Any]], higher: bool = False) -> Claim:
    # The verdict names the metric and the schemes (no apostrophes or arrows: the report escapes them).
    short = f"{metric.label.rsplit(' (', 1)[0]}: {winner} vs {', '.join(others)}"
    return Claim(subject, lambda f: v.ordering(f, short, metric.key, winner, list(others), points, higher_is_better=higher))


def _sweep_long(scenario: str, series: tuple[Series, ...]) -> Sweep:
    return Sweep(scenario, series, grid={N_LONG: LONGS}, scale_set=MICRO_SCALE)


def _sweep_short(scenario: str, series: tuple[Series, ...]) -> Sweep:
    return Sweep(scenario, series, grid={N_SHORT: SHORTS}, scale_set=MICRO_SCALE)


# ci: shorter long flows (1 MB) so that a microbenchmark run takes a fraction of a second.
MICRO_SCALE = {"ci": ("traffic.sources.0.size_bytes=1000000",)}


def _short_panels() -> tuple[Panel, ...]:
    return (
        Panel("(a) short-flow AFCT", SHORT_AFCT, x=N_LONG, xlabel="number of long flows"),
        Panel("(b) short-flow 99th-percentile FCT", SHORT_P99, x=N_LONG, xlabel="number of long flows"),
        Panel("(c) short-flow queueing delay", SHORT_QUEUE, x=N_LONG, xlabel="number of long flows"),
    )


def _long_panels() -> tuple[Panel, ...]:
    return (
        Panel("(a) long-flow average goodput", LONG_GOODPUT, x=N_SHORT, xlabel="number of short flows"),
        Panel("(b) retransmitted packets of long flows", LONG_RETX, x=N_SHORT, xlabel="number of short flows"),
        Panel("(c) std. dev. of long-flow traffic per path", LONG_STD, x=N_SHORT, xlabel="number of short flows"),
    )


P_LONG = v.points(N_LONG, LONGS)
P_SHORT = v.points(N_SHORT, SHORTS)
P_LONG_HI = v.points(N_LONG, [10])

FIG3 = Figure(
    "3",
    "how long flows affect short flows (motivation, symmetric)",
    (_sweep_long("micro.toml", MOTIVATION),),
    _short_panels(),
    (
        Claim("ECMP and LetFlow: short AFCT rises with the number of long flows (L88)", lambda f: rises(f, "ECMP, LetFlow short AFCT", SHORT_AFCT.key, ["ECMP", "LetFlow"], N_LONG)),
        Claim("ECMP and LetFlow: short tail FCT rises with the number of long flows (L88)", lambda f: rises(f, "ECMP, LetFlow short p99", SHORT_P99.key, ["ECMP", "LetFlow"], N_LONG)),
        Claim("RPS: short AFCT grows less with the long flows than under ECMP and LetFlow (L86, L88)", lambda f: least_growth(f, "RPS short AFCT growth", SHORT_AFCT.key, "RPS", ["ECMP", "LetFlow"], N_LONG)),
        Claim("ECMP and LetFlow: short-flow queueing delay grows with the long flows (L88)", lambda f: rises(f, "ECMP, LetFlow short queueing", SHORT_QUEUE.key, ["ECMP", "LetFlow"], N_LONG)),
        Claim("RPS: short-flow queueing delay stable, below ECMP's and LetFlow's with 10 long flows (L88)", lambda f: v.ordering(f, "RPS short queueing, 10 long flows", SHORT_QUEUE.key, "RPS", ["ECMP", "LetFlow"], P_LONG_HI)),
    ),
)

FIG4 = Figure(
    "4",
    "how short flows affect long flows (motivation, symmetric)",
    (_sweep_short("micro.toml", MOTIVATION),),
    _long_panels(),
    (
        _ordering("long goodput: LetFlow above ECMP and RPS at every N_short (L90)", LONG_GOODPUT, "LetFlow", ["ECMP", "RPS"], P_SHORT, higher=True),
        _ordering("long goodput: ECMP above RPS at every N_short (L90)", LONG_GOODPUT, "ECMP", ["RPS"], P_SHORT, higher=True),
        Claim("ECMP and LetFlow retransmit no packet of long flows (L90)", lambda f: all_zero(f, "long-flow retransmissions", LONG_RETX.key, ["ECMP", "LetFlow"])),
        _ordering("RPS has the smallest per-path standard deviation of long-flow traffic (L90)", LONG_STD, "RPS", ["ECMP", "LetFlow"], P_SHORT),
        Claim(
            "long-flow goodput hardly changes with the number of short flows (L90; read: within ±10% of its mean)",
            lambda f: flattest(f, "long goodput vs N_short", LONG_GOODPUT.key, ["ECMP", "LetFlow", "RPS"], N_SHORT, 0.10),
        ),
    ),
)


def _short_claims(sym: bool) -> tuple[Claim, ...]:
    where = "L258-L260" if sym else "L266"
    claims = [
        _ordering(f"TAM has the lowest short AFCT at every number of long flows ({where})", SHORT_AFCT, TAM, OTHERS, P_LONG),
        _ordering(f"TAM has the lowest short 99th-percentile FCT at every number of long flows ({where})", SHORT_P99, TAM, OTHERS, P_LONG),
        Claim(f"TAM's short AFCT is hardly affected by the number of long flows: it grows least of all schemes ({where})", lambda f: least_growth(f, "short AFCT growth", SHORT_AFCT.key, TAM, OTHERS, N_LONG)),
        Claim(f"TAM's short tail FCT is hardly affected by the number of long flows: it grows least of all schemes ({where})", lambda f: least_growth(f, "short p99 growth", SHORT_P99.key, TAM, OTHERS, N_LONG)),
    ]
    if sym:
        claims += [
            Claim(
                "TAM's short-flow queueing delay is at RPS's level (L260; read: within a factor 2, mean over N_long)",
                lambda f: ratio_within(f, "short queueing, TAM vs RPS", SHORT_QUEUE.key, TAM, ["RPS"], 0.5, 2.0),
            ),
            Claim("Presto's short AFCT lies between ECMP's and LetFlow's (L258)", lambda f: between(f, "short AFCT", SHORT_AFCT.key, "Presto", "ECMP", "LetFlow")),
        ]
    else:
        claims.append(_ordering("TAM keeps short-flow queueing delay low: below ECMP, LetFlow and Presto at every N_long (L266)", SHORT_QUEUE, TAM, COARSE, P_LONG))
    claims += [
        Claim(
            "headline: TAM's short AFCT up to 60% lower than the representative schemes' (L25, L48)",
            lambda f: best_case(f, "short AFCT", SHORT_AFCT.key, TAM, OTHERS, N_LONG, -60.0),
        ),
        Claim(
            "headline: TAM's short tail FCT up to 50% lower (L48)",
            lambda f: best_case(f, "short p99", SHORT_P99.key, TAM, OTHERS, N_LONG, -50.0),
        ),
    ]
    return tuple(claims)


def _long_claims(sym: bool) -> tuple[Claim, ...]:
    where = "L262" if sym else "L268-L270"
    claims = [
        _ordering(f"TAM has the best long-flow goodput at every number of short flows ({where})", LONG_GOODPUT, TAM, OTHERS, P_SHORT, higher=True),
        Claim(
            f"long-flow goodput hardly changes with the number of short flows ({where}; read: TAM within ±10% of its mean)",
            lambda f: flattest(f, "TAM long goodput vs N_short", LONG_GOODPUT.key, [TAM], N_SHORT, 0.10),
        ),
    ]
    if sym:
        claims += [
            _ordering("TAM's long goodput is above LetFlow's (L262)", LONG_GOODPUT, TAM, ["LetFlow"], P_SHORT, higher=True),
            Claim("TAM, ECMP and LetFlow retransmit no packet of long flows (L262)", lambda f: all_zero(f, "long-flow retransmissions", LONG_RETX.key, [TAM, "ECMP", "LetFlow"])),
            Claim(
                "Presto and DRB have a lower long goodput than RPS (L262)",
                lambda f: group_beats(f, "long goodput", LONG_GOODPUT.key, ["RPS"], ["Presto", "DRB"], N_SHORT, SHORTS, higher_is_better=True),
            ),
            _ordering("TAM's per-path standard deviation of long-flow traffic is below LetFlow's and ECMP's (L262)", LONG_STD, TAM, ["LetFlow", "ECMP"], P_SHORT),
        ]
    else:
        claims += [
            _ordering("round robin beats random: Presto's long goodput exceeds ECMP's (L268)", LONG_GOODPUT, "Presto", ["ECMP"], P_SHORT, higher=True),
            Claim(
                "Presto's long goodput is almost equal to LetFlow's (L268; read: within 10%, mean over N_short)",
                lambda f: ratio_within(f, "long goodput, Presto vs LetFlow", LONG_GOODPUT.key, "Presto", ["LetFlow"], 0.9, 1.1),
            ),
            _ordering("DRB's long goodput exceeds RPS's (L270)", LONG_GOODPUT, "DRB", ["RPS"], P_SHORT, higher=True),
        ]
    claims.append(
        Claim(
            "headline: TAM's long-flow average goodput up to 40% higher (L25, L48)",
            lambda f: best_case(f, "long goodput", LONG_GOODPUT.key, TAM, OTHERS, N_SHORT, 40.0, higher_is_better=True),
        )
    )
    return tuple(claims)


FIG6 = Figure("6", "how long flows affect short flows, six schemes (symmetric)", (_sweep_long("micro.toml", ALL),), _short_panels(), _short_claims(True))
FIG7 = Figure("7", "how short flows affect long flows, six schemes (symmetric)", (_sweep_short("micro.toml", ALL),), _long_panels(), _long_claims(True))
FIG8 = Figure(
    "8",
    "how long flows affect short flows, six schemes (asymmetric: 5 of 10 paths at 4x link delay)",
    (_sweep_long("micro_asym.toml", ALL),),
    _short_panels(),
    _short_claims(False),
)
FIG9 = Figure(
    "9",
    "how short flows affect long flows, six schemes (asymmetric: 5 of 10 paths at 4x link delay)",
    (_sweep_short("micro_asym.toml", ALL),),
    _long_panels(),
    _long_claims(False),
)

# Large scale. quick: one seed of 1,000 flows per workload and 2,000 mixed (the paper's 10,000 data-mining flows
# alone take about 2 minutes per run on one core); ci: 60 flows.
LARGE_SEEDS = {"quick": 1}
LARGE_SCALE = {"quick": ("traffic.flows=1000",), "ci": ("traffic.flows=60",)}
MIXED_SCALE = {"quick": ("traffic.flows=2000",), "ci": ("traffic.flows=60",)}
# Two sweeps, so that the ci scale (which trims every grid to its ends) keeps cache follower, web server and Hadoop:
# enough for every claim of Figs. 10-11 to be computed.
WORKLOAD_SWEEPS = tuple(
    Sweep("large.toml", ALL, grid={WORKLOAD: wl}, scale_set=LARGE_SCALE, seeds=LARGE_SEEDS)
    for wl in (["cachefollower", "datamining", "websearch", "webserver"], ["hadoop_parsimon_intracluster"])
)
P_WL = v.points(WORKLOAD, WORKLOADS)
HEAVY = ["cachefollower", "websearch", "datamining"]

FIG10 = Figure(
    "10",
    "short flows at large scale, per workload (10 x 10, 40 Gbps, load 0.5)",
    WORKLOAD_SWEEPS,
    (
        Panel("(a) short-flow AFCT", SHORT_AFCT, x=WORKLOAD, kind="bar", xlabel="workload", logy=True),
        Panel("(b) short-flow 99th-percentile FCT", SHORT_P99, x=WORKLOAD, kind="bar", xlabel="workload", logy=True),
    ),
    (
        Claim("cache follower has the highest short AFCT of the five workloads (L276; the paper reasons from equal flow counts, dclb runs every workload at load 0.5)", lambda f: extreme_workload(f, "cache follower highest short AFCT", SHORT_AFCT.key, "cachefollower")),
        Claim(
            "RPS and DRB beat ECMP, LetFlow and Presto on short AFCT (L276, L280; cache follower, web search, data mining)",
            lambda f: group_beats(f, "short AFCT", SHORT_AFCT.key, FINE, COARSE, WORKLOAD, HEAVY),
        ),
        Claim(
            "web server and Hadoop show small differences between schemes (L276; read: a smaller spread than cache follower's)",
            lambda f: spread_order(f, "short AFCT spread", SHORT_AFCT.key, ["cachefollower"], ["webserver", "hadoop_parsimon_intracluster"]),
        ),
        _ordering("TAM has the lowest short AFCT in every workload (L282, L290)", SHORT_AFCT, TAM, OTHERS, P_WL),
        _ordering("TAM has the lowest short tail FCT in every workload (L282, L290)", SHORT_P99, TAM, OTHERS, P_WL),
    ),
    note="Load 0.5 of the senders' access links [G]: the paper gives no load for these runs (spec A20).",
)

FIG11 = Figure(
    "11",
    "long flows at large scale, per workload (10 x 10, 40 Gbps, load 0.5)",
    WORKLOAD_SWEEPS,
    (
        Panel("(a) long-flow AFCT", LONG_AFCT, x=WORKLOAD, kind="bar", xlabel="workload", logy=True),
        Panel("(b) long-flow 99th-percentile FCT", LONG_P99, x=WORKLOAD, kind="bar", xlabel="workload", logy=True),
    ),
    (
        Claim(
            "long-flow differences concentrate on cache follower and web server (L278; read: larger spread between schemes than in the other three)",
            lambda f: spread_order(f, "long AFCT spread", LONG_AFCT.key, ["cachefollower", "webserver"], ["datamining", "websearch", "hadoop_parsimon_intracluster"]),
        ),
        Claim("web server has the best long-flow AFCT of the five workloads (L278)", lambda f: extreme_workload(f, "web server lowest long AFCT", LONG_AFCT.key, "webserver", lowest=True)),
        Claim(
            "coarse-grained schemes (ECMP, LetFlow, Presto) favour long flows over fine-grained RPS and DRB (L280; long AFCT, every workload)",
            lambda f: group_beats(f, "long AFCT", LONG_AFCT.key, COARSE, FINE, WORKLOAD, WORKLOADS),
        ),
        _ordering("TAM has the lowest long AFCT in every workload (L282, L290)", LONG_AFCT, TAM, OTHERS, P_WL),
        _ordering("TAM has the lowest long tail FCT in every workload (L282, L290)", LONG_P99, TAM, OTHERS, P_WL),
    ),
    note="Load 0.5 of the senders' access links [G]: the paper gives no load for these runs (spec A20).",
)

P_LOAD = v.points(LOAD, LOADS)
FIG12 = Figure(
    "12",
    "five workloads mixed, vs load (10 x 10, 40 Gbps)",
    (Sweep("large.toml", ALL, grid={LOAD: LOADS}, set=(MIXED, "traffic.flows=50000"), scale_set=MIXED_SCALE, seeds=LARGE_SEEDS),),
    (
        Panel("(a) short-flow AFCT", SHORT_AFCT, x=LOAD, xlabel="load"),
        Panel("(b) short-flow 99th-percentile FCT", SHORT_P99, x=LOAD, xlabel="load"),
        Panel("(c) long-flow AFCT", LONG_AFCT, x=LOAD, xlabel="load"),
        Panel("(d) long-flow 99th-percentile FCT", LONG_P99, x=LOAD, xlabel="load"),
        Panel("(e) overall AFCT", OVERALL, x=LOAD, xlabel="load"),
    ),
    (
        Claim(
            "at low load TAM's short AFCT is near RPS's and DRB's (L294; load 0.2; read: within 25%)",
            lambda f: ratio_within(f, "short AFCT, load 0.2", SHORT_AFCT.key, TAM, FINE, 0.75, 1.25, {LOAD: 0.2}),
        ),
        Claim("as load grows TAM's short AFCT stays almost flat: it grows least of all schemes (L294-L296)", lambda f: least_growth(f, "short AFCT growth", SHORT_AFCT.key, TAM, OTHERS, LOAD)),
        Claim("as load grows TAM's short tail FCT stays almost flat: it grows least of all schemes (L294-L296)", lambda f: least_growth(f, "short p99 growth", SHORT_P99.key, TAM, OTHERS, LOAD)),
        _ordering("TAM has the lowest short AFCT at high load (L296; load 0.8)", SHORT_AFCT, TAM, OTHERS, v.points(LOAD, [0.8])),
        _ordering("TAM's long AFCT is the best at every load (L296)", LONG_AFCT, TAM, OTHERS, P_LOAD),
        Claim("TAM's long AFCT grows with load (L296)", lambda f: rises(f, "TAM long AFCT", LONG_AFCT.key, [TAM], LOAD)),
        _ordering("overall, TAM is better than every other scheme at every load (L296; AFCT of all flows)", OVERALL, TAM, OTHERS, P_LOAD),
        Claim(
            "overall, TAM improves on the other schemes by more than 20% (L296; AFCT of all flows vs the best other, load 0.2)",
            lambda f: best_other(f, "overall AFCT, load 0.2", OVERALL.key, -20.0, {LOAD: 0.2}),
        ),
        Claim(
            "overall, TAM improves on the other schemes by more than 20% (L296; AFCT of all flows vs the best other, load 0.8)",
            lambda f: best_other(f, "overall AFCT, load 0.8", OVERALL.key, -20.0, {LOAD: 0.8}),
        ),
    ),
    note="Fig. 12(e) 'overall performance' is read as the AFCT of all flows (spec A23).",
)



PAPER = Paper(
    key="tam",
    title="TAM: coarse-grained load balancing with traffic-aware marking (Hindawi 2022)",
    citation="Huang et al., Coarse-Grained Load Balancing with Traffic-Aware Marking in Data Center Networks, Hindawi 2022; "
    "motivation §1.2 (L65-L90) and evaluation §4 (L240-L296); line numbers: docs/references.md.",
    setup=(
        "Microbenchmarks (Figs. 3, 4, 6-9): 2 leaves x 10 spines, 20 hosts per leaf, 1 Gbps links of 25 us (RTPD 200 us), "
        "128-packet (192 KB) buffers, DCTCP K 20 packets; group A sends N_long 10 MB flows (starts uniform over 10 ms) and "
        "N_short data-mining flows <= 100 KB (Poisson, 1 ms mean gap, from 10 ms) to group B; Figs. 8-9 put 100 us on "
        "the leaf-spine links of 5 of the 10 spines. Large scale (Figs. 10-12): 10 x 10, 20 hosts per leaf (10 send, 10 "
        "receive), 40 Gbps links of 1 us, 250-packet (375 KB) buffers, K 65 packets; Poisson arrivals between random "
        "pairs; one workload per run at load 0.5 (Figs. 10-11), the five mixed at loads 0.2-0.8 (Fig. 12). ECMP, "
        "LetFlow (500 us), RPS, DRB, Presto (64 KB cells, no receive buffer) and TAM with its defaults."
    ),
    transport=(
        "DCTCP (L170, L274) as in NS2's one-way TCP: no handshake, no SACK, MSS 1460 B, initial window 10 packets "
        "(TR, same group), minimum RTO 5 ms for every scheme [G]; every packet ACKed. Switch queues counted in packets, "
        "as NS2's DropTail queues are."
    ),
    figures=(FIG3, FIG4, FIG6, FIG7, FIG8, FIG9, FIG10, FIG11, FIG12),
    scales={
        # 5 seeds [G] ("repeated many times", L77); the paper's 10,000 and 50,000 flows at 40 Gbps.
        "paper": Scale(seeds=5),
        # Microbenchmarks as in the paper with 3 seeds (their results depend much on which hosts the random pairs
        # share); the 40 Gbps runs with one seed and fewer flows (LARGE_SEEDS, LARGE_SCALE, MIXED_SCALE).
        "quick": Scale(seeds=3),
        "ci": Scale(seeds=1, trim=True),
    },
)
