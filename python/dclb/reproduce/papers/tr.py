"""TR (J. Cloud Computing 2021): Figs. 2, 3 and 6-15 except the CDFs of Fig. 10 — every evaluation figure.

What runs (scenario files in ``dclb/data/papers/tr/``, every choice commented there; "spec"
is dclb's implementation notes, see docs/references.md):

* **Figs. 2, 3, 7, 8** (``motivation.toml``): 2 leaves x 10 spines, 10 hosts each, 1 Gbps, 25 µs links,
  250-packet buffers; five bad spines whose two leaf-spine links are slowed so that the bad round trip is ρ =
  1.5 ... 3.5 times the good 200 µs (x = 25 (2ρ - 1) µs); 100 DCTCP data-mining flows group 1 → group 2 at load
  0.3 [G]. Figs. 2/3 draw ECMP, LetFlow and RPS; Figs. 7/8 add DRB, Presto and TR on the same runs. The x axis ρ
  moves ten link delays at once: a derived axis (:attr:`~dclb.reproduce.spec.Sweep.axes`).
* **Fig. 6** (``model.toml``): the analytic model of §5 (:mod:`.tr_model`, Eqs. 2-8 as published) as dashed
  lines beside dclb's mean FCT of N synchronised flows of S bytes under RPS and TR on the motivation fabric at ρ
  = 3.5 [G]: (a) S = 100-350 KB at N = 20, (b) N = 10-50 at S = 300 KB.
* **Fig. 9** (``threshold.toml``): TR alone, long-flow threshold Tl = 10 KB ... 1 MB, the motivation fabric at 10
  Gbps and ρ = 3.5, 1,000 flows at load 0.3, four workloads; AFCT and 99th-percentile FCT of all flows divided by
  the Tl = 100 KB value of the same workload.
* **Figs. 11-14** (``large.toml``): 10 x 10 leaf-spine, 200 hosts, 40 Gbps, 1 µs links [G], 375 KB buffers, five
  bad spines at 1.5x round trip, 100 senders → 100 receivers, 50,000 flows, load 0.2-0.8, one figure per
  workload (data mining, web search, cache follower, web server); FCT per size bin normalised to LetFlow.
* **Fig. 15** (``overhead.toml``): the paper's Mininet topology (20 Mbps, 256 packets, good / bad round trips 1
  / 4 ms, 100 flows, 90 % short) simulated; dclb has no switch CPU or memory utilisation, so the figure shows what
  it counts instead: balancer decisions and balancer state (bytes) at the source leaf.

Choices. Transport as the NS2 runs imply where the paper is silent (spec §6): DCTCP, initial window 10 (L169),
no handshake, no SACK, MSS 1460 B, minimum RTO 5 ms, K = 20 packets at 1 Gbps and 65 at 10/40 Gbps [G]; Fig. 15's
Mininet hosts get Linux's handshake, SACK and 200 ms minimum RTO. LetFlow's flowlet timeout 500 µs and Presto's 64
KB flowcells are the paper's (L169); DRB and Presto run without a receive buffer, as the paper's retransmission
ratios for DRB (L172) show reordering reaching TCP. TR runs with dclb's defaults (Tl = 100 KB, 5-bit codes, strict
order filter, ...; ``dclb schemes``). Metric classes follow each figure: the motivation's short flows are < 100
KB and long ones >= 100 KB (L35), the large-scale bins are (0, 100 KB], (100 KB, 1 MB], (1 MB, inf) (L208); the
tail is the 99th percentile [G]. The retransmission ratio is retransmitted / sent packets of the class; queueing
delay is the mean per packet sent of the class's queueing time; the per-path standard deviation is that of the
long flows' bytes on each uplink of the source leaf over the time long flows are active; "total throughput" of
long flows is the sum of their average rates (size / FCT).

Verdicts: where the paper gives a number ("around 20 %", "up to 50 %") the line shows dclb's change beside it
(mean over loads for "around", best case for "up to"); otherwise the claim is ordinal. The headline (short AFCT
-60 %, tail -80 %, long throughput x3.02; L8, L261) names no figure: it is checked on Figs. 7-8 as the best case
over the baselines and ρ (spec A26).

Not reproduced: Fig. 10 (the workloads' CDFs: an input, listed by ``dclb workloads``). Fig. 15's CPU and memory
utilisation of BMv2 switches: dclb counts decisions and table bytes, not CPU time or a process's memory, so its
claims are shown with dclb's numbers and no verdict where nothing comparable exists. Only TR reports a peak of its
state; the other schemes' state is their tables at the end of the run, and Presto's lives at the hosts (0 at the
leaf).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...reproduce import metrics as m
from ...reproduce import verdict as v
from ...reproduce.spec import Claim, Figure, Metric, Panel, Paper, Scale, Series, Sweep, Verdict
from . import tr_model

# --------------------------------------------------------------------------------------------------------
# Series: the six schemes with the paper's parameters (L35, L169)

ECMP = Series("ECMP", ("lb.scheme=ecmp",))
LETFLOW = Series("LetFlow", ("lb.scheme=letflow", "lb.flowlet_timeout_us=500"))
RPS = Series("RPS", ("lb.scheme=rps",))
DRB = Series("DRB", ("lb.scheme=drb",))
PRESTO = Series("Presto", ("lb.scheme=presto", "lb.flowcell_bytes=64000"))
TR = Series("TR", ("lb.scheme=tr", "lb.long_threshold_bytes=100000"))
MOTIVATION = (ECMP, LETFLOW, RPS)
SIX = (ECMP, LETFLOW, RPS, DRB, PRESTO, TR)
BASELINES = [s.label for s in SIX if s.label != "TR"]

# --------------------------------------------------------------------------------------------------------
# The asymmetry axis: rho = bad / good round trip; the ten [[topology.links]] of motivation.toml are the bad
# spines' leaf-spine links, x = h (2 rho - 1) with h = 25 us (spec section 8.1).

RHO = "asym.rtt_ratio"
RHOS = [1.5, 2.0, 2.5, 3.0, 3.5]
BAD_LINKS = 10


def bad_link_delay_us(rho: float, h_us: float = 25.0) -> float:
    """Delay of a bad spine's leaf-spine link that makes the bad round trip ``rho`` times the good one (8 h)."""
    return h_us * (2.0 * rho - 1.0)


RHO_AXIS = {RHO: {r: tuple(f"topology.links.{i}.delay_us={bad_link_delay_us(r):g}" for i in range(BAD_LINKS)) for r in RHOS}}
LOAD = "traffic.load"
LOADS = [0.2, 0.4, 0.6, 0.8]
TL = "lb.long_threshold_bytes"
# 100 KB first: ci keeps a grid's first and last values, and every Fig. 9 value is divided by the 100 KB one.
THRESHOLDS = [100000, 10000, 50000, 500000, 1000000]

# --------------------------------------------------------------------------------------------------------
# Metrics of the motivation figures (classes of L35: short < 100 KB, long >= 100 KB)

SHORT_LIMIT = 100_000


def _tcp(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[flows["transport"] != "udp"]


def _short(flows: pd.DataFrame) -> pd.DataFrame:
    f = _tcp(flows)
    return f[f["size_bytes"] < SHORT_LIMIT]


def _long(flows: pd.DataFrame) -> pd.DataFrame:
    f = _tcp(flows)
    return f[f["size_bytes"] >= SHORT_LIMIT]


def _done(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[flows["state"] == "completed"]


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def queueing_per_packet_us(flows: pd.DataFrame) -> float:
    """Mean queueing delay per packet (µs): the flows' summed queueing time over the packets they sent."""
    return _ratio(float(flows["queueing_delay_us"].sum()), float(flows["packets_sent"].sum()))


def retx_ratio(flows: pd.DataFrame) -> float:
    """Retransmitted packets over packets sent."""
    return _ratio(float(flows["retransmissions"].sum()), float(flows["packets_sent"].sum()))


def busy_us(flows: pd.DataFrame) -> float:
    """Length of the union of the flows' [start, finish] intervals (µs): the time at least one is active."""
    iv = sorted(zip(flows["start_us"], flows["finish_us"]))
    total, cur_s, cur_e = 0.0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def path_std_mbps(flows: pd.DataFrame) -> float:
    """Population standard deviation over the source leaf's uplinks of the long flows' rate on each (Mbps):
    each uplink's bytes over the time long flows are active."""
    d = _done(_long(flows))
    if not len(d):
        return math.nan
    per_uplink = np.sum(np.stack([np.asarray(u, dtype=float) for u in d["uplink_bytes"]]), axis=0)
    t = busy_us(d)
    return float(np.std(per_uplink * 8 / t)) if t > 0 else math.nan  # bytes/us x 8 = Mbps


def total_goodput_gbps(flows: pd.DataFrame) -> float:
    """Sum over completed long flows of size x 8 / FCT (Gbps)."""
    d = _done(_long(flows))
    return float((d["size_bytes"] * 8 / (d["fct_us"] * 1e3)).sum()) if len(d) else math.nan


def _fct_ms(sel, q: float | None = None):
    def f(flows: pd.DataFrame) -> float:
        d = _done(sel(flows))
        if not len(d):
            return math.nan
        x = d["fct_us"].to_numpy()
        return float(np.quantile(x, q) if q is not None else x.mean()) * 1e-3

    return f


SHORT_QDELAY = Metric("short_queueing_us", "short-flow queueing delay per packet (µs)", flows=lambda f: queueing_per_packet_us(_short(f)))
SHORT_RETX = Metric("short_retx_ratio", "short-flow retransmission ratio", flows=lambda f: retx_ratio(_short(f)))
SHORT_AFCT = Metric("short_afct_lt100k_ms", "short-flow (< 100 KB) AFCT (ms)", flows=_fct_ms(_short))
SHORT_TAIL = Metric("short_p99_lt100k_ms", "short-flow (< 100 KB) 99th-pct FCT (ms)", flows=_fct_ms(_short, 0.99))
LONG_STD = Metric("long_path_std_mbps", "std-dev of long-flow rate per path (Mbps)", flows=path_std_mbps)
LONG_RETX = Metric("long_retx_ratio", "long-flow retransmission ratio", flows=lambda f: retx_ratio(_long(f)))
LONG_TOTAL = Metric("long_total_gbps", "total long-flow throughput (Gbps)", flows=total_goodput_gbps)

# Large-scale bins (L208), right-closed
BIN_SHORT = m.fct_mean(None, 100e3, "(0, 100 KB] AFCT")
BIN_SHORT_TAIL = m.fct_quantile(0.99, None, 100e3, "(0, 100 KB] 99th-pct FCT")
BIN_MID = m.fct_mean(100e3, 1e6, "(100 KB, 1 MB] AFCT")
BIN_LONG = m.fct_mean(1e6, None, "(1 MB, inf) AFCT")
ALL = m.fct_mean(None, None, "AFCT of all flows")
ALL_TAIL = m.fct_quantile(0.99, None, None, "99th-pct FCT of all flows")

# Fig. 15: the switch table of the source leaf (leaf 0: the senders' leaf)


def _source_leaf(column: str):
    def f(sw: pd.DataFrame) -> float:
        if column not in sw.columns:
            return math.nan
        row = sw[(sw["kind"] == "leaf") & (sw["index"] == 0)]
        return float(row[column].iloc[0]) if len(row) else math.nan

    return f


DECISIONS = Metric("leaf_decisions_k", "decisions at the source leaf (thousands)", switches=_source_leaf("decisions"), factor=1e-3)
STATE_END = Metric("leaf_state_bytes", "state at the source leaf (bytes)", switches=_source_leaf("state_bytes"))
TR_PEAK = Metric("leaf_tr_peak_state_bytes", "TR peak state at the source leaf (bytes)", switches=_source_leaf("tr_peak_state_bytes"))

# --------------------------------------------------------------------------------------------------------
# Verdict helpers (built on dclb.reproduce.verdict)


def _num(x: Any) -> str:
    """A grid value as written: whole numbers in full (1000000, not 1e+06)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return str(int(x)) if float(x).is_integer() and abs(x) >= 1000 else f"{x:g}"
    return str(x)


def _where_text(where: Mapping[str, Any]) -> str:
    return ", ".join(f"{k.split('.')[-1]} {_num(val)}" for k, val in where.items())


def _ok(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def beats(frame: pd.DataFrame, subject: str, metric: str, winners: Sequence[str], losers: Sequence[str], points: Sequence[Mapping[str, Any]], higher: bool = False) -> Verdict:
    """Every one of ``winners`` better than every one of ``losers`` at every point."""
    return v.ordering(frame, subject, metric, winners, losers, points, higher_is_better=higher)


def trend(frame: pd.DataFrame, subject: str, metric: str, series: Sequence[str], axis: str, lo: Any, hi: Any, rises: bool) -> Verdict:
    """Each of ``series`` higher (``rises``) or lower at ``axis`` = ``hi`` than at ``lo``."""
    parts, holds = [], []
    for s in series:
        a, b = v.mean_of(frame, metric, s, {axis: lo}), v.mean_of(frame, metric, s, {axis: hi})
        if not (_ok(a) and _ok(b)):
            continue
        holds.append(b > a if rises else b < a)
        parts.append(f"{s} {a:.3g} → {b:.3g}")
    name = axis.split(".")[-1]
    if not parts:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb from {name} {lo:g} to {hi:g}: {'; '.join(parts)}", all(holds))


def always_zero(frame: pd.DataFrame, subject: str, metric: str, series: str) -> Verdict:
    f = frame[frame["series"] == series][metric].dropna() if metric in frame.columns else []
    if not len(f):
        return Verdict(f"{subject}: dclb: no data", None)
    top = float(f.max())
    return Verdict(f"{subject}: dclb largest value of {series} over {len(f)} runs: {top:.3g}", top == 0.0)


def steady(frame: pd.DataFrame, subject: str, metric: str, series: str, axis: str, lo: Any, hi: Any, tolerance: float = 0.1) -> Verdict:
    """``series`` at ``hi`` no more than ``tolerance`` below its value at ``lo`` (higher is better)."""
    a, b = v.mean_of(frame, metric, series, {axis: lo}), v.mean_of(frame, metric, series, {axis: hi})
    if not (_ok(a) and _ok(b)) or a == 0:
        return Verdict(f"{subject}: dclb: no data", None)
    name = axis.split(".")[-1]
    return Verdict(f"{subject}: dclb {series} {a:.3g} at {name} {lo:g}, {b:.3g} at {hi:g} ({100 * (b / a - 1):+.1f}%; holds within -{100 * tolerance:g}%)", b >= (1 - tolerance) * a)


def best_relative(frame: pd.DataFrame, subject: str, metric: str, series: str, baselines: Sequence[str], points: Sequence[Mapping[str, Any]], paper_pct: float, higher: bool = False) -> Verdict:
    """The paper's "up to": the best change of ``series`` over ``baselines`` and ``points``, beside the paper's."""
    best = None
    for where in points:
        for b in baselines:
            c = v.change(frame, metric, series, b, where)
            if _ok(c) and (best is None or (c > best[0] if higher else c < best[0])):
                best = (c, b, where)
    if best is None:
        return Verdict(f"{subject}: dclb: no data", None)
    _, b, where = best
    return v.relative(frame, f"{subject}; best case in dclb: vs {b} at {_where_text(where)}", metric, series, b, paper_pct, where)


def mean_relative(frame: pd.DataFrame, subject: str, metric: str, series: str, baseline: str, points: Sequence[Mapping[str, Any]], paper_pct: float) -> Verdict:
    """The paper's "around p %": dclb's change at each point and their mean; holds when the mean has the sign."""
    changes = [(where, v.change(frame, metric, series, baseline, where)) for where in points]
    changes = [(w, c) for w, c in changes if _ok(c)]
    if not changes:
        return Verdict(f"{subject}: paper {paper_pct:+.1f}%, dclb: no data", None)
    pct = [100 * c for _, c in changes]
    mean = sum(pct) / len(pct)
    each = ", ".join(f"{_where_text(w)}: {100 * c:+.1f}%" for w, c in changes)
    same = (mean < 0) == (paper_pct < 0) and mean != 0
    return Verdict(f"{subject}: paper {paper_pct:+.1f}%, dclb mean {mean:+.1f}% ({each})", same)


def worst_two(frame: pd.DataFrame, subject: str, metric: str, pair: Sequence[str], points: Sequence[Mapping[str, Any]]) -> Verdict:
    """At each point the two highest values (worst FCTs) belong to ``pair``."""
    hits, total, misses = 0, 0, []
    names = list(dict.fromkeys(frame["series"])) if len(frame) else []
    for where in points:
        vals = {s: v.mean_of(frame, metric, s, where) for s in names}
        vals = {s: x for s, x in vals.items() if _ok(x)}
        if len(vals) < 3 or not all(p in vals for p in pair):
            continue
        total += 1
        top = sorted(vals, key=lambda s: -vals[s])[: len(pair)]
        if set(top) == set(pair):
            hits += 1
        else:
            misses.append(f"{_where_text(where)}: worst {', '.join(top)}")
    if total == 0:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb {' and '.join(pair)} worst at {hits} of {total} points" + (f" ({'; '.join(misses)})" if misses else ""), hits == total)


def lowest_at(frame: pd.DataFrame, subject: str, metric: str, series: Sequence[str], axis: str, at: Any, ends: Sequence[Any]) -> Verdict:
    """For each of ``series``, the value at ``axis`` = ``at`` below those at each of ``ends``."""
    ok, total, parts = 0, 0, []
    for s in series:
        base = v.mean_of(frame, metric, s, {axis: at})
        if not _ok(base):
            continue
        for e in ends:
            x = v.mean_of(frame, metric, s, {axis: e})
            if not _ok(x):
                continue
            total += 1
            ok += x > base
            parts.append(f"{s} {_num(e)}: {x / base:.2f}")
    if total == 0:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb value / value at {_num(at)}, higher at {ok} of {total} ({'; '.join(parts)})", ok == total)


def rho_points(values: Sequence[float] = RHOS) -> list[dict[str, Any]]:
    return v.points(RHO, list(values))


def load_points(values: Sequence[float] = LOADS) -> list[dict[str, Any]]:
    return v.points(LOAD, list(values))


# --------------------------------------------------------------------------------------------------------
# Figures


def _motivation_sweep(series: tuple[Series, ...]) -> Sweep:
    return Sweep("motivation.toml", series, axes=RHO_AXIS)


def _rho_panels(specs: Sequence[tuple[str, Metric]]) -> tuple[Panel, ...]:
    return tuple(Panel(title, metric, x=RHO, xlabel="bad / good path RTT ratio ρ") for title, metric in specs)


RHO_LO, RHO_HI = RHOS[0], RHOS[-1]

FIG2 = Figure(
    "2",
    "motivation, short flows (< 100 KB) vs asymmetry: ECMP, LetFlow, RPS",
    (_motivation_sweep(MOTIVATION),),
    _rho_panels((("(a) average queueing delay", SHORT_QDELAY), ("(b) retransmission ratio", SHORT_RETX), ("(c) AFCT", SHORT_AFCT))),
    (
        Claim("RPS gives short flows the lowest queueing delay (L43; every ρ)", lambda f: v.ordering(f, "RPS queueing delay below ECMP, LetFlow", SHORT_QDELAY.key, "RPS", ["ECMP", "LetFlow"], rho_points())),
        Claim(
            "short flows under RPS always have a much higher retransmission ratio than under ECMP and LetFlow (L43)",
            lambda f: beats(f, "ECMP, LetFlow retransmit less than RPS", SHORT_RETX.key, ["ECMP", "LetFlow"], ["RPS"], rho_points()),
        ),
        Claim("short-flow AFCT under RPS is higher than under ECMP and LetFlow (L43; every ρ)", lambda f: beats(f, "ECMP, LetFlow short AFCT below RPS", SHORT_AFCT.key, ["ECMP", "LetFlow"], ["RPS"], rho_points())),
        Claim(
            "... and the gap widens with the asymmetry (L43; RPS's AFCT over each baseline's, ρ 1.5 → 3.5)",
            lambda f: _gap_widens(f, "RPS / baseline short AFCT", SHORT_AFCT.key, "RPS", ["ECMP", "LetFlow"]),
        ),
    ),
    note="Short flows are < 100 KB as the paper defines them (L35). The paper sees no drop in these runs (L43), so every retransmission there is due to reordering.",
)


def _gap_widens(frame: pd.DataFrame, subject: str, metric: str, series: str, baselines: Sequence[str]) -> Verdict:
    parts, holds = [], []
    for b in baselines:
        lo = v.change(frame, metric, series, b, {RHO: RHO_LO})
        hi = v.change(frame, metric, series, b, {RHO: RHO_HI})
        if not (_ok(lo) and _ok(hi)):
            continue
        parts.append(f"vs {b} {1 + lo:.2f}x → {1 + hi:.2f}x")
        holds.append(hi > lo)
    if not parts:
        return Verdict(f"{subject}: dclb: no data", None)
    return Verdict(f"{subject}: dclb from ρ {RHO_LO:g} to {RHO_HI:g}: {'; '.join(parts)}", all(holds))


def _utilisation(frame: pd.DataFrame) -> Verdict:
    t = trend(frame, "RPS total long-flow throughput falls with ρ", LONG_TOTAL.key, ["RPS"], RHO, RHO_LO, RHO_HI, rises=False)
    thr = v.mean_of(frame, LONG_TOTAL.key, "RPS", {RHO: RHO_HI})
    if _ok(thr):
        # Ten parallel 1 Gbps paths between the groups.
        t = Verdict(f"{t.text}; path utilisation (total / 10 Gbps) at ρ {RHO_HI:g}: paper about 0.12, dclb {thr / 10:.2f}", t.holds)
    return t


FIG3 = Figure(
    "3",
    "motivation, long flows (>= 100 KB) vs asymmetry: ECMP, LetFlow, RPS",
    (_motivation_sweep(MOTIVATION),),
    _rho_panels((("(a) std-dev of per-path throughput", LONG_STD), ("(b) retransmission ratio", LONG_RETX), ("(c) total throughput", LONG_TOTAL))),
    (
        Claim("RPS distributes long-flow load most evenly (L49; every ρ)", lambda f: v.ordering(f, "RPS per-path std-dev below ECMP, LetFlow", LONG_STD.key, "RPS", ["ECMP", "LetFlow"], rho_points())),
        Claim("LetFlow balances between RPS and ECMP (L49; every ρ)", lambda f: v.ordering(f, "LetFlow per-path std-dev below ECMP", LONG_STD.key, "LetFlow", ["ECMP"], rho_points())),
        Claim(
            "long flows under RPS retransmit far more than under LetFlow and ECMP (L49; every ρ)",
            lambda f: beats(f, "ECMP, LetFlow retransmit less than RPS", LONG_RETX.key, ["ECMP", "LetFlow"], ["RPS"], rho_points()),
        ),
        Claim(
            "LetFlow has the highest total long-flow throughput (L49; every ρ)",
            lambda f: v.ordering(f, "LetFlow total throughput above ECMP, RPS", LONG_TOTAL.key, "LetFlow", ["ECMP", "RPS"], rho_points(), higher_is_better=True),
        ),
        Claim("RPS's total throughput falls steeply with ρ, to a path utilisation of about 0.12 (L49)", _utilisation),
    ),
    note="Long flows are >= 100 KB (L35). Total throughput is the sum of the long flows' average rates (size / FCT); the per-path standard deviation is over the source leaf's ten uplinks.",
)

FIG7 = Figure(
    "7",
    "microbenchmark, short flows (< 100 KB) vs asymmetry: six schemes",
    (_motivation_sweep(SIX),),
    _rho_panels((("(a) average queueing delay", SHORT_QDELAY), ("(b) retransmission ratio", SHORT_RETX), ("(c) AFCT", SHORT_AFCT), ("(d) tail (99th-pct) FCT", SHORT_TAIL))),
    (
        Claim(
            "ECMP and LetFlow give short flows large queueing delay, Presto non-trivial; RPS, DRB and TR much lower (L172; every ρ)",
            lambda f: beats(f, "RPS, DRB, TR queueing delay below ECMP, LetFlow, Presto", SHORT_QDELAY.key, ["RPS", "DRB", "TR"], ["ECMP", "LetFlow", "Presto"], rho_points()),
        ),
        Claim(
            "RPS's and DRB's retransmission ratios rise with the asymmetry (L172)",
            lambda f: trend(f, "RPS, DRB short retransmission ratio rises with ρ", SHORT_RETX.key, ["RPS", "DRB"], RHO, RHO_LO, RHO_HI, rises=True),
        ),
        Claim("TR's retransmission ratio is always 0 (L172)", lambda f: always_zero(f, "TR short-flow retransmission ratio", SHORT_RETX.key, "TR")),
        Claim("TR has the shortest short-flow AFCT in every case (L172)", lambda f: v.ordering(f, "TR short AFCT below the five others", SHORT_AFCT.key, "TR", BASELINES, rho_points())),
        Claim("TR has the shortest short-flow tail FCT in every case (L172)", lambda f: v.ordering(f, "TR short p99 FCT below the five others", SHORT_TAIL.key, "TR", BASELINES, rho_points())),
        Claim(
            "headline: short-flow AFCT reduced by up to 60 % vs the state of the art (abstract L8, L261; source figure not named, taken as Fig. 7, spec A26)",
            lambda f: best_relative(f, "TR short AFCT", SHORT_AFCT.key, "TR", BASELINES, rho_points(), -60.0),
        ),
        Claim(
            "headline: short-flow tail FCT reduced by up to 80 % (abstract L8, L261; taken as Fig. 7)",
            lambda f: best_relative(f, "TR short p99 FCT", SHORT_TAIL.key, "TR", BASELINES, rho_points(), -80.0),
        ),
    ),
    note="Same runs as Fig. 2 for ECMP, LetFlow and RPS. Tail = 99th percentile [G].",
)

FIG8 = Figure(
    "8",
    "microbenchmark, long flows (>= 100 KB) vs asymmetry: six schemes",
    (_motivation_sweep(SIX),),
    _rho_panels((("(a) std-dev of per-path throughput", LONG_STD), ("(b) retransmission ratio", LONG_RETX), ("(c) total throughput", LONG_TOTAL))),
    (
        Claim(
            "RPS and DRB distribute load in the most balanced way (L178; every ρ)",
            lambda f: beats(f, "RPS, DRB per-path std-dev below ECMP, LetFlow, Presto, TR", LONG_STD.key, ["RPS", "DRB"], ["ECMP", "LetFlow", "Presto", "TR"], rho_points()),
        ),
        Claim(
            "... but have high retransmission ratios, while ECMP and LetFlow avoid reordering (L178; every ρ)",
            lambda f: beats(f, "ECMP, LetFlow, TR retransmit less than RPS, DRB", LONG_RETX.key, ["ECMP", "LetFlow", "TR"], ["RPS", "DRB"], rho_points()),
        ),
        Claim(
            "RPS's and DRB's total long-flow throughput falls as the asymmetry rises (L178)",
            lambda f: trend(f, "RPS, DRB total throughput falls with ρ", LONG_TOTAL.key, ["RPS", "DRB"], RHO, RHO_LO, RHO_HI, rises=False),
        ),
        Claim("TR outperforms Presto (L178; total throughput, every ρ)", lambda f: v.ordering(f, "TR total throughput above Presto", LONG_TOTAL.key, "TR", ["Presto"], rho_points(), higher_is_better=True)),
        Claim(
            "TR always has the highest total long-flow throughput (L178; every ρ)",
            lambda f: v.ordering(f, "TR total throughput above the five others", LONG_TOTAL.key, "TR", BASELINES, rho_points(), higher_is_better=True),
        ),
        Claim(
            "TR is not affected by the rising asymmetry (L178; ρ 1.5 → 3.5, dclb allows a 10 % fall)",
            lambda f: steady(f, "TR total throughput", LONG_TOTAL.key, "TR", RHO, RHO_LO, RHO_HI),
        ),
        Claim(
            "headline: long-flow throughput up to 3.02x that of the state of the art (abstract L8, L261; taken as Fig. 8)",
            lambda f: best_relative(f, "TR total long throughput", LONG_TOTAL.key, "TR", BASELINES, rho_points(), +202.0, higher=True),
        ),
    ),
    note="Same runs as Fig. 7.",
)

# Fig. 6: the model against dclb
FIG6_SIZES = [100000, 150000, 200000, 250000, 300000, 350000]
FIG6_FLOWS = [10, 20, 30, 40, 50]
FIG6_N, FIG6_S = 20, 300000
SIZE, FLOWS = "traffic.size_bytes", "traffic.flows"
MEAN_FCT = m.fct_mean(None, None, "FCT")


def _model_vs_size(_: pd.DataFrame) -> pd.DataFrame:
    xs = list(np.linspace(FIG6_SIZES[0], FIG6_SIZES[-1], 26))
    return tr_model.curves("size", xs, FIG6_N)


def _model_vs_flows(_: pd.DataFrame) -> pd.DataFrame:
    return tr_model.curves("flows", list(range(FIG6_FLOWS[0], FIG6_FLOWS[-1] + 1)), FIG6_S)


def _model_points() -> list[tuple[dict[str, Any], float, int]]:
    return [({SIZE: s, FLOWS: FIG6_N}, s, FIG6_N) for s in FIG6_SIZES] + [({SIZE: FIG6_S, FLOWS: n}, FIG6_S, n) for n in FIG6_FLOWS]


def _close_to_model(frame: pd.DataFrame, tolerance: float = 0.5) -> Verdict:
    parts, holds = [], []
    for label, fn in (("RPS", tr_model.fct_rps), ("TR", tr_model.fct_tr)):
        ratios = []
        for where, s, n in _model_points():
            sim = v.mean_of(frame, MEAN_FCT.key, label, where)
            if _ok(sim):
                ratios.append(sim / (fn(s, n) * 1e-3))
        if ratios:
            parts.append(f"{label} sim / model {min(ratios):.2f}..{max(ratios):.2f}")
            holds.append(all(abs(r - 1) <= tolerance for r in ratios))
    if not parts:
        return Verdict("dclb: no data", None)
    return Verdict(f"dclb {'; '.join(parts)} (close: within ±{100 * tolerance:g}% of the model)", all(holds))


FIG6 = Figure(
    "6",
    "model verification: one flow's FCT under RPS and TR, model (dashed) and dclb (dots)",
    (
        Sweep("model.toml", (RPS, TR), grid={SIZE: FIG6_SIZES, FLOWS: [FIG6_N]}),
        Sweep("model.toml", (RPS, TR), grid={SIZE: [FIG6_S], FLOWS: FIG6_FLOWS}),
    ),
    (
        Panel("(a) N = 20 flows", MEAN_FCT, x=SIZE, kind="model", where={FLOWS: FIG6_N}, model=_model_vs_size, xlabel="flow size S (bytes)"),
        Panel("(b) S = 300 KB", MEAN_FCT, x=FLOWS, kind="model", where={SIZE: FIG6_S}, model=_model_vs_flows, xlabel="number of flows N"),
    ),
    (
        Claim(
            "with out-of-order prediction TR always outperforms RPS (L156; dclb's simulated points, both panels)",
            lambda f: v.ordering(f, "TR mean FCT below RPS", MEAN_FCT.key, "TR", ["RPS"], [w for w, _, _ in _model_points()]),
        ),
        Claim("the simulation results are basically close to the model (L156)", _close_to_model),
    ),
    note=(
        "Model: Eqs. 2-8 as published (tr_model.py), n = 10 paths (5 good, 5 bad), B = 250 packets, t = 12 µs, d_g = 200 µs, "
        "d_b = 700 µs (ρ = 3.5 [G]), H = 3; TR's curve is the paper's worst case (every packet on a bad path). "
        "dclb: N DCTCP flows of S bytes started together between random group-1 and group-2 hosts, mean FCT over the N."
    ),
)

# Fig. 9: threshold sensitivity, TR only, one series per workload
WORKLOADS = {"data mining": "datamining", "web search": "websearch", "cache follower": "cachefollower", "web server": "webserver"}
# quick: fewer flows for the heavy workloads; web server (mean 66 KB) keeps the paper's 1,000.
THRESHOLD_QUICK_FLOWS = {"datamining": 250, "websearch": 400, "cachefollower": 600, "webserver": 1000}

FIG9 = Figure(
    "9",
    "TR's long-flow threshold Tl: FCT of all flows normalised to Tl = 100 KB",
    tuple(
        Sweep(
            "threshold.toml",
            (Series(label, (f"traffic.workload={name}", "lb.scheme=tr")),),
            grid={TL: THRESHOLDS},
            scale_set={"quick": (f"traffic.flows={THRESHOLD_QUICK_FLOWS[name]}",)},
        )
        for label, name in WORKLOADS.items()
    ),
    (
        Panel("(a) average FCT", ALL, x=TL, kind="bar", normalize_at={TL: 100000}, xlabel="long-flow threshold Tl (bytes)"),
        Panel("(b) tail (99th-pct) FCT", ALL_TAIL, x=TL, kind="bar", normalize_at={TL: 100000}, xlabel="long-flow threshold Tl (bytes)"),
    ),
    (
        Claim(
            "the average FCT rises when the threshold is very small or very large: lowest at 100 KB (L192; every workload, 10 KB and 1 MB vs 100 KB)",
            lambda f: lowest_at(f, "AFCT", ALL.key, list(WORKLOADS), TL, 100000, [10000, 1000000]),
        ),
        Claim(
            "the same for the tail FCT (L192)",
            lambda f: lowest_at(f, "p99 FCT", ALL_TAIL.key, list(WORKLOADS), TL, 100000, [10000, 1000000]),
        ),
    ),
    note="Motivation fabric at 10 Gbps and ρ = 3.5; 1,000 flows at load 0.3 per workload; TR with Tl swept (L186-L192).",
)

# Figs. 11-14: large scale, normalised to LetFlow

LARGE_FLOWS = {"datamining": 400, "websearch": 500, "cachefollower": 1200, "webserver": 4000}


def _large_claims(workload: str) -> tuple[Claim, ...]:
    pts = load_points()
    mid_words = "about 20 % better than LetFlow" if workload in ("datamining", "websearch") else "up to 20 % better than LetFlow"
    claims = [
        Claim(
            "(0, 100 KB]: TR beats LetFlow and is far ahead of ECMP, Presto, DRB and RPS (L210; AFCT, every load)",
            lambda f: v.ordering(f, "TR (0, 100 KB] AFCT below the five others", BIN_SHORT.key, "TR", BASELINES, pts),
        ),
        Claim(
            "(0, 100 KB]: TR's AFCT is around 20 % below LetFlow's (L210)",
            lambda f: mean_relative(f, "TR vs LetFlow, (0, 100 KB] AFCT", BIN_SHORT.key, "TR", "LetFlow", pts, -20.0),
        ),
        Claim(
            "(0, 100 KB]: the tail FCT improves by up to 50 % over LetFlow (L210)",
            lambda f: best_relative(f, "TR vs LetFlow, (0, 100 KB] p99 FCT", BIN_SHORT_TAIL.key, "TR", ["LetFlow"], pts, -50.0),
        ),
    ]
    if workload in ("datamining", "websearch"):
        claims.append(
            Claim(
                f"(100 KB, 1 MB]: {mid_words} (L228)",
                lambda f: mean_relative(f, "TR vs LetFlow, (100 KB, 1 MB] AFCT", BIN_MID.key, "TR", "LetFlow", pts, -20.0),
            )
        )
    else:
        claims.append(
            Claim(
                f"(100 KB, 1 MB]: {mid_words} (L228)",
                lambda f: best_relative(f, "TR vs LetFlow, (100 KB, 1 MB] AFCT", BIN_MID.key, "TR", ["LetFlow"], pts, -20.0),
            )
        )
    if workload != "webserver":
        claims.append(
            Claim(
                "(1 MB, inf): TR slightly outperforms LetFlow, by about 10 % (L230)",
                lambda f: mean_relative(f, "TR vs LetFlow, (1 MB, inf) AFCT", BIN_LONG.key, "TR", "LetFlow", pts, -10.0),
            )
        )
    claims += [
        Claim("all flows: TR's overall performance is the best at every load (L232)", lambda f: v.ordering(f, "TR AFCT of all flows below the five others", ALL.key, "TR", BASELINES, pts)),
        Claim("all flows: RPS and DRB are always worse than the other schemes (L232)", lambda f: worst_two(f, "AFCT of all flows", ALL.key, ["RPS", "DRB"], pts)),
        Claim("all flows: DRB performs a little better than RPS (L232; every load)", lambda f: v.ordering(f, "DRB AFCT of all flows below RPS", ALL.key, "DRB", ["RPS"], pts)),
    ]
    return tuple(claims)


def _large_figure(fig_id: str, label: str, workload: str) -> Figure:
    bins = [("(a) (0, 100 KB] AFCT", BIN_SHORT), ("(b) (0, 100 KB] tail FCT", BIN_SHORT_TAIL), ("(c) (100 KB, 1 MB] AFCT", BIN_MID)]
    if workload != "webserver":
        bins.append(("(d) (1 MB, inf) AFCT", BIN_LONG))
    bins.append((f"({'e' if workload != 'webserver' else 'd'}) all flows AFCT", ALL))
    panels = tuple(Panel(t, metric, x=LOAD, kind="bar", normalize_to="LetFlow", xlabel="load") for t, metric in bins)
    sweep = Sweep("large.toml", SIX, grid={LOAD: LOADS}, set=(f"traffic.workload={workload}",), scale_set={"quick": (f"traffic.flows={LARGE_FLOWS[workload]}",)})
    note = "Every value divided by LetFlow's at the same load and seed (L208). Tail = 99th percentile [G]."
    if workload == "webserver":
        note += " Web server has no flow above 1 MB, so there is no (1 MB, inf) panel (L232)."
    return Figure(fig_id, f"large scale, {label} workload: FCT normalised to LetFlow", (sweep,), panels, _large_claims(workload), note=note)


FIG11 = _large_figure("11", "data mining", "datamining")
FIG12 = _large_figure("12", "web search", "websearch")
FIG13 = _large_figure("13", "cache follower", "cachefollower")
FIG14 = _large_figure("14", "web server", "webserver")

# Fig. 15: overhead


def _decisions_comparable(frame: pd.DataFrame, tolerance: float = 0.1) -> Verdict:
    parts, holds = [], []
    for where in load_points():
        tr = v.mean_of(frame, DECISIONS.key, "TR", where)
        others = [v.mean_of(frame, DECISIONS.key, s, where) for s in BASELINES]
        others = [o for o in others if _ok(o)]
        if not (_ok(tr) and others):
            continue
        med = float(np.median(others))
        parts.append(f"{_where_text(where)}: TR / median {tr / med:.2f}")
        holds.append(abs(tr / med - 1) <= tolerance)
    if not parts:
        return Verdict("decisions at the source leaf: dclb: no data", None)
    return Verdict(
        f"dclb counts decisions, not CPU time: decisions at the source leaf, TR over the median of the other schemes: {'; '.join(parts)} (comparable: within ±{100 * tolerance:g}%)",
        all(holds),
    )


def _memory(frame: pd.DataFrame) -> Verdict:
    peak = v.mean_of(frame, TR_PEAK.key, "TR", {LOAD: 0.8})
    if not _ok(peak):
        peak = v.mean_of(frame, TR_PEAK.key, "TR")
    if not _ok(peak):
        return Verdict("dclb: no data", None)
    return Verdict(f"dclb: peak TR balancer state at the source leaf {peak:.0f} bytes at load 0.8; dclb has no switch memory utilisation to compare with 5 %", None)


FIG15 = Figure(
    "15",
    "implementation overhead at the source leaf (dclb: decisions and balancer state, not CPU and memory)",
    (Sweep("overhead.toml", SIX, grid={LOAD: LOADS}),),
    (
        Panel("(a) decisions (the paper: CPU)", DECISIONS, x=LOAD, kind="bar", xlabel="load"),
        Panel("(b) state at the end of the run (the paper: memory)", STATE_END, x=LOAD, kind="bar", xlabel="load"),
        Panel("(c) TR's peak state", TR_PEAK, x=LOAD, kind="bar", xlabel="load"),
    ),
    (
        Claim("TR does not incur excessive CPU overhead compared with the other schemes (L240)", _decisions_comparable),
        Claim("even at 80 % load TR's memory utilisation is only around 5 % (L240)", _memory),
    ),
    note=(
        "The paper measures BMv2 switches in Mininet; dclb simulates the same topology and counts its own work. Only TR "
        "reports a peak of its state; the others' state is what their tables hold when the run ends (Presto's lives at the "
        "hosts, so the leaf holds none)."
    ),
)

FIGURES = (FIG2, FIG3, FIG6, FIG7, FIG8, FIG9, FIG11, FIG12, FIG13, FIG14, FIG15)

PAPER = Paper(
    key="tr",
    title="TR: fine-grained load balancing with traffic-aware rerouting (J. Cloud Computing 2021)",
    citation="T. Zhang et al., Fine-grained load balancing with traffic-aware rerouting in datacenter networks, Journal of Cloud "
    "Computing 10:37 (2021); evaluation L35-L49, L118-L156, L165-L240 (line numbers: docs/references.md).",
    setup=(
        "Motivation and microbenchmarks: 2 leaves x 10 spines, 10 hosts per leaf, 1 Gbps, 25 µs links, 250-packet buffers, five "
        "bad spines with leaf-spine delay 25 (2ρ - 1) µs (RTT ratio ρ = 1.5-3.5), 100 DCTCP data-mining flows at load 0.3 [G]. "
        "Fig. 6: the same fabric at ρ = 3.5 with N synchronised flows of S bytes, beside the paper's model. Fig. 9: the same at 10 "
        "Gbps, 1,000 flows at load 0.3, TR's threshold 10 KB-1 MB, four workloads. Figs. 11-14: 10 x 10 leaf-spine, 200 hosts, "
        "40 Gbps, 1 µs links [G], 375 KB buffers, five bad spines at 1.5x RTT, 100 senders, 50,000 flows, load 0.2-0.8. "
        "Fig. 15: 2 x 10 at 20 Mbps, 256-packet buffers, 1 / 4 ms RTTs. Schemes ECMP, LetFlow (500 µs), RPS, DRB, Presto "
        "(64 KB), TR."
    ),
    transport=(
        "DCTCP (g = 1/16) with initial window 10 (L169); as NS2's one-way agents: no handshake, no SACK, MSS 1460 B, one ACK "
        "per packet, minimum RTO 5 ms [G]; K = 20 packets at 1 Gbps, 65 at 10 and 40 Gbps [G]. Queues in packets where the "
        "paper gives packets, in bytes at 40 Gbps (375 KB). Fig. 15's Mininet hosts: Linux-like handshake, SACK, 200 ms "
        "minimum RTO."
    ),
    figures=FIGURES,
    scales={
        # The paper's flow counts; one run per point (the paper shows no error bars or seed counts) [G].
        "paper": Scale(seeds=1),
        # Every setting kept; two seeds; the heavy sweeps with fewer flows (Fig. 9: THRESHOLD_QUICK_FLOWS instead of
        # 1,000; Figs. 11-14: LARGE_FLOWS instead of 50,000). 380 runs, 414 CPU-seconds: measured 15 min wall with
        # --jobs 2 on two cores shared with other work (load average 8-9), i.e. about 4 min on two idle cores.
        "quick": Scale(seeds=2),
        "ci": Scale(seeds=1, set=("traffic.flows=12",), trim=True),
    },
)
