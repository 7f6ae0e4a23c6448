"""LBT (J. Netw. Comput. Appl. 2023): Figs. 2, 3 (motivation), 5-10 (three workloads), 11 (incast), and the
threshold model beside LBT's queues.

Lnnn = line nnn of the paper's text; the evaluation section of dclb's implementation notes (§ 8; both in
docs/references.md) tags every setting [P] (the paper's) or [G] (a guess). Scenario files:
``main.toml`` (Figs. 2, 3, 5-10 and the model figure) and ``incast.toml`` (Fig. 11); every choice is commented
there.

**Setup.** 8 leaves x 9 spines, 9 hosts per leaf [G], 10 Gbps, 100 µs round-trip propagation, 256-packet
buffers, DCTCP [P]; Poisson arrivals between hosts on different leaves at loads 0.1-0.7 of the host links
[P/G]. The paths figures (5, 7, 9) change the spines to 3, 5, 7, 9 [P] and keep the traffic (load 0.3 of
the host links [G]: 0.9, 0.54, 0.39 and 0.3 of the uplinks), as the paper's explanation of them reads (L318).
Best-effort flows [G]: one host of each leaf sends only best-effort flows, 1/9 of the flows and of the load.
Transport as in the DCTCP authors' NS-2 scripts (handshake and SACK); DCTCP marking at 65 packets [G].

**Schemes.** LBT with the paper's values (t = 500 µs, W = 64 KB, R = 100 µs) and dclb's default readings of
what the paper leaves open: ``threshold_model = "mg1_backlog"`` (the repaired eqs 8-11 are ill-posed:
docs/assumptions.md § LBT, item 14), ``long_mode = "sticky"``, short flows pinned per flow. Baselines with
their published settings (``lb.timing = "published"``; the paper gives none): ECMP, CONGA (flowlets 500 µs,
τ = 160 µs), DRILL(2, 1), LetFlow (500 µs) and Hermes ([LB] README set). Hermes' delay thresholds are margins
above the base delay of [LB]'s fabric (20 and 140 µs above 40 µs one way); on this fabric (104.9 µs base RTT,
as ``dclb run --dry-run`` prints under ``lb.timing = "fabric"``) they are given as 125 and 245 µs of RTT.
Fig. 2 adds RPS (L86).

**Metrics** (spec § 8.1). Short flows are those of at most 100 KB, best-effort flows left out of every FCT and
throughput number (they are the background the paper's classes protect). Short AFCT and 99th-percentile FCT of
short flows (and of all flows, panel (b) of Figs. 6, 8, 10); long-flow throughput = mean over long flows of
size / FCT. Fig. 3's deadlines are not given (L98, "consistent with other articles"): a short flow misses if it
takes longer than twice its ideal FCT [G] (what ``deadline = {kind = "slack", factor = 2}`` makes the engine
check; no scheme here reads deadlines, so the runs of Fig. 8 are judged from their flow tables). Link
utilisation (Fig. 2(c)): bytes the leaf uplinks sent between the first and the last arrival over their
capacity in that window, from the 500 µs samples.

**The threshold model** (figure "Q"). The engine counts LBT's decisions and port changes (``lbt_*``) but does
not export Q1/Q2, so the model's curves (:mod:`.lbt_model`, dclb's default reading) are drawn against the queue
LBT packs long flows onto: the longest leaf-uplink queue of each leaf, averaged over the arrival window. The
comparison is qualitative: sticky long flows leave a port when its queue reaches Q1, and DCTCP holds a busy
queue near its marking threshold (97.5 KB, Q1's upper bound). Beside it, what the thresholds are for: long-flow
packets per change of port (``lbt_decisions_long / lbt_moves_long``), the switching granularity that the paper
says grows with load.

**Fig. 11** (incast): the paper uses "NDP's parameter settings" (L355) but the rest of its setup; dclb keeps the
main fabric and transport and takes the pattern: long-lived flows from hosts 1 (normal) and 2 (best-effort),
then 64 senders x 900 KB to host 3 at 5 ms; the long-lived flows also go to host 3 [G]. "DCTCP" in the paper
is ECMP with DCTCP here [G].

**Scales, and the load they reach.** Every run generates a fixed number of flows and lets all of them finish
(as NS-2 studies of this lineage do). Paper: 10,000 flows per point [G] and 5 seeds [G]. Quick: 2,000 web-server,
450 web-search and 180 data-mining flows per point, three seeds. With so few flows a heavy-tailed workload does not
reach its nominal load: its arrivals end before its largest flows have sent much. At quick scale, the leaf
uplinks carry (between the first and the last arrival) about 0.1-0.5 of their capacity for web server at nominal
0.1-0.7, 0.08-0.3 for web search and 0.04-0.07 for data mining, so the quick verdicts on the web-search and
data-mining figures (2, 3, 7-10) describe a lightly loaded fabric. Panel (d) of Figs. 6, 8 and 10 shows it, and
each figure's header gives the carried load per nominal load. The paper scale's 10,000 flows stretch the arrivals 5 (web server) to 55
(data mining) times.

**Claims** are declared as data (:mod:`dclb.reproduce.claims`), judged by the rule of :mod:`dclb.reproduce.verdict`;
"little difference" between schemes is read as max/min at most 1.5 (``LITTLE``), "about" a number within a factor 2.
The paper's concessions are claims too (L355: LBT's throughput falls in the incast; L385: LBT needs much switch
storage, which dclb cannot test).

**Not reproduced.** Nothing is left out. Limits: Table 1's W = 64 KB enters only LBT's model (dclb's senders
have no window cap); the paper's flow counts and seeds are not given (paper scale: 10,000 flows per point and 5
seeds [G]). The paper's absolute numbers are claims beside dclb's at the same point: LBT's short AFCT about 1 ms
at 7 paths and the others' about twice that (L292), read within a factor 2 (:func:`.common.paper_number`); below
and above 1 ms at 9 paths (L294); ECMP's miss probability about 90% (L98), read as at least 75%. They depend on
the load the paths figures ran at and on the deadlines, neither of which is given, so a large gap in a baseline
points at the setup (their verdict lines say so).
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import metrics as m
from ..claims import Side, Spread, all_of, compare, level, not_testable, points, rank, trend
from ..spec import Claim, Figure, Metric, Panel, Paper, Scale, Series, Sweep
from . import lbt_model
from .common import paper_number

LOAD = "traffic.load"
WL = "traffic.workload"
SPINES = "topology.spines"
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
PATHS = [3, 5, 7, 9]
PATH_LOAD = 0.3
BE_SHARE = 1 / 9

LBT = "LBT"
# The paper's values for LBT (t, W, R: L123, L284, Table 1); the rest are dclb's defaults (module doc).
S_LBT = Series(LBT, ("lb.scheme=lbt", "lb.period_us=500", "lb.max_window_bytes=65536", "lb.rtt_us=100"))
S_ECMP = Series("ECMP", ("lb.scheme=ecmp",))
S_CONGA = Series("CONGA", ("lb.scheme=conga", "lb.flowlet_timeout_us=500", "lb.dre_tau_us=160"))
S_DRILL = Series("DRILL", ("lb.scheme=drill", "lb.d=2", "lb.m=1"))
S_HERMES = Series("Hermes", ("lb.scheme=hermes", "lb.rtt_low_us=125", "lb.rtt_high_us=245"))
S_LETFLOW = Series("LetFlow", ("lb.scheme=letflow", "lb.flowlet_timeout_us=500"))
S_RPS = Series("RPS", ("lb.scheme=rps",))
SIX = (S_LBT, S_ECMP, S_CONGA, S_DRILL, S_HERMES, S_LETFLOW)
BASELINES = ["ECMP", "CONGA", "DRILL", "Hermes", "LetFlow"]
#: dclb's reading of "little difference" / "similar" between schemes (L292, L300, L302, L324): the largest mean
#: at most 1.5 times the smallest.
LITTLE, LITTLE_WORDS = (1.0, 1.5), "'little difference' read as max/min at most 1.5"

WORKLOADS = {"webserver": "Web Server", "websearch": "Web Search", "datamining": "Data Mining"}
# Flows per point: (normal, best-effort), 8:1 as the senders. Paper: 10,000 per point [G] (spec § 8.1); quick:
# about 2 minutes per workload on two cores; ci: a few dozen.
FLOWS = {
    "paper": {wl: (8889, 1111) for wl in WORKLOADS},
    "quick": {"webserver": (1778, 222), "websearch": (400, 50), "datamining": (160, 20)},
    "ci": {"webserver": (80, 10), "websearch": (40, 5), "datamining": (16, 2)},
}


def _flows_set(wl: str) -> dict[str, tuple[str, ...]]:
    return {scale: (f"traffic.sources.0.flows={n[wl][0]}", f"traffic.sources.1.flows={n[wl][1]}") for scale, n in FLOWS.items()}


def load_sweep(wl: str, series: Sequence[Series] = SIX, loads: Sequence[float] = LOADS) -> Sweep:
    return Sweep("main.toml", tuple(series), grid={WL: [wl], LOAD: list(loads)}, scale_set=_flows_set(wl))


def path_sweep(wl: str) -> Sweep:
    return Sweep("main.toml", SIX, grid={WL: [wl], LOAD: [PATH_LOAD], SPINES: PATHS}, scale_set=_flows_set(wl))


# ----------------------------------------------------------------------------------------------------------
# Metrics (best-effort flows left out; short = at most 100 KB)


def _window(t: Any) -> tuple[pd.DataFrame, float, float] | None:
    """Leaf-uplink samples between the first and the last arrival, and that window's ends (µs)."""
    ports = t.ports
    up = ports[ports["role"] == "leaf_up"][["port", "node", "rate_gbps"]]
    s = t.samples
    s = s[s["kind"] == "port"]
    starts = t.flows["start_us"]
    times = np.sort(s["time_us"].unique())
    inside = times[(times >= starts.min()) & (times <= starts.max())]
    if len(inside) < 2:
        return None
    t0, t1 = float(inside[0]), float(inside[-1])
    w = s[(s["time_us"] >= t0) & (s["time_us"] <= t1)].merge(up, left_on="id", right_on="port")
    return w, t0, t1


def _utilisation(t: Any) -> float:
    got = _window(t)
    if got is None:
        return math.nan
    w, t0, t1 = got
    first = w[w["time_us"] == t0].set_index("port")
    last = w[w["time_us"] == t1].set_index("port")
    util = (last["bytes"] - first["bytes"]) * 8 / (first["rate_gbps"] * 1e3 * (t1 - t0))
    return float(util.mean())


def _longest_queue_kb(t: Any) -> float:
    got = _window(t)
    if got is None:
        return math.nan
    w, _, _ = got
    return float(w.groupby(["time_us", "node"])["queue_bytes"].max().mean()) / 1e3


def _lbt_counter(t: Any, name: str) -> float:
    raw = t.summary.get("scheme_counters")
    counters = json.loads(raw) if isinstance(raw, str) else (raw or {})
    return float(counters[name]) if name in counters else math.nan


def _packets_per_move(t: Any) -> float:
    """LBT's switching granularity for long flows: long-flow packets decided per change of port (the engine's
    ``lbt_decisions_long`` / ``lbt_moves_long``, summed over the switches)."""
    moves = _lbt_counter(t, "lbt_moves_long")
    return _lbt_counter(t, "lbt_decisions_long") / moves if moves and math.isfinite(moves) else math.nan


SHORT_AFCT = m.afct(m.SHORT, "short-flow AFCT", key="short_afct_ms", best_effort=False)
SHORT_P99 = m.fct_quantile(0.99, m.SHORT, "short-flow 99th-pct FCT", key="short_p99_ms", best_effort=False)
ALL_P99 = m.fct_quantile(0.99, m.ALL, "99th-pct FCT, all flows", key="all_p99_ms", best_effort=False)
LONG_TPUT = m.goodput_mean(m.LONG, "long-flow average throughput", key="long_tput_gbps", best_effort=False)
MISS = m.slack_miss_rate(m.SHORT, 2.0, "short flows missing the deadline", key="short_miss_rate", best_effort=False)
MISSES = m.slack_miss_count(m.SHORT, 2.0, "short flows missing the deadline (count)", key="short_miss_flows", best_effort=False)
UTIL = Metric("uplink_util", "leaf-uplink utilisation", run=_utilisation)
GRANULARITY = Metric("lbt_packets_per_move", "long-flow packets per path change", run=_packets_per_move)
LONGEST_Q = Metric("longest_uplink_queue_kb", "threshold / queue (KB)", run=_longest_queue_kb)
LEAF_STATE = Metric("leaf_state_bytes", "balancer state at the leaves, end of run (bytes)", switches=lambda sw: float(sw.loc[sw["kind"] == "leaf", "state_bytes"].sum()))


# Fig. 11: throughput over time from the samples (flow 0: host 1's long-lived flow; flow 1: host 2's
# best-effort flow; port 108: host 3's access link), and averages over a window.
INCAST_US = 5000.0
DURING = (INCAST_US, 45_000.0)
BEFORE = (1000.0, INCAST_US)


def _series_of(s: pd.DataFrame, kind: str, ident: int) -> pd.DataFrame:
    g = s[(s["kind"] == kind) & (s["id"] == ident)].sort_values("time_us")
    return g[["time_us", "bytes"]].reset_index(drop=True)


def _rate_ts(kind: str, ident: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def f(s: pd.DataFrame) -> pd.DataFrame:
        g = _series_of(s, kind, ident)
        gbps = g["bytes"].diff() * 8 / (g["time_us"].diff() * 1e3)
        return pd.DataFrame({"time_us": g["time_us"], "value": gbps}).dropna()

    return f


def _rate_between(kind: str, ident: int, lo: float, hi: float) -> Callable[[Any], float]:
    def f(t: Any) -> float:
        g = _series_of(t.samples, kind, ident).set_index("time_us")["bytes"]
        if lo not in g.index or hi not in g.index:
            return math.nan
        return float((g[hi] - g[lo]) * 8 / ((hi - lo) * 1e3))

    return f


LL_TS = Metric("ll_gbps_t", "throughput (Gbps)", samples=_rate_ts("flow", 0))
BE_TS = Metric("be_gbps_t", "throughput (Gbps)", samples=_rate_ts("flow", 1))
HOST3_TS = Metric("host3_gbps_t", "throughput (Gbps)", samples=_rate_ts("port", 108))
LL_BEFORE = Metric("ll_before_gbps", "host 1's flow before the incast (Gbps)", run=_rate_between("flow", 0, *BEFORE))
LL_DURING = Metric("ll_during_gbps", "host 1's flow during the incast (Gbps)", run=_rate_between("flow", 0, *DURING))
def _incast_done_ms(flows: pd.DataFrame) -> float:
    """When the last incast flow (source 2) completed; NaN if one did not."""
    inc = flows[flows["source"] == 2]
    return float(inc["finish_us"].max()) / 1e3 if len(inc) and (inc["state"] == "completed").all() else math.nan


INCAST_DONE = Metric("incast_done_ms", "last incast flow done (ms)", flows=_incast_done_ms)


def _pts(x: str, values: Sequence[Any], **fixed: Any) -> list[dict[str, Any]]:
    return points(x, values, fixed)


def _wl(wl: str, **kw: Any) -> dict[str, Any]:
    return {WL: wl, **kw}


# ----------------------------------------------------------------------------------------------------------
# Figures


def _loads_figure(fig_id: str, wl: str, claims: tuple[Claim, ...]) -> Figure:
    name = WORKLOADS[wl]
    w = {WL: wl}
    panels = (
        Panel(f"(a) short-flow AFCT, {name}", SHORT_AFCT, x=LOAD, where=w, xlabel="load"),
        Panel("(b) short-flow 99th-pct FCT, load 0.3", SHORT_P99, x=LOAD, kind="bar", where={**w, LOAD: 0.3}, xlabel="load"),
        Panel("(b') 99th-pct FCT of all flows, load 0.3", ALL_P99, x=LOAD, kind="bar", where={**w, LOAD: 0.3}, xlabel="load"),
        Panel(f"(c) long-flow throughput, {name}", LONG_TPUT, x=LOAD, where=w, xlabel="load"),
        Panel("(d) not in the paper: the load reached", UTIL, x=LOAD, where=w, xlabel="nominal load"),
    )
    note = (
        "Panel (d) is dclb's: the utilisation of the leaf uplinks between the first and the last arrival. A run of few "
        "flows from a heavy-tailed workload ends its arrivals before its largest flows have sent much, so it falls "
        "short of the nominal load (data mining's flows of 100 MB-1 GB last 80-800 ms at line rate); compare the "
        "scales before reading the load axis."
    )
    return Figure(fig_id, f"{name}: short AFCT and long throughput vs load, tail at 0.3 (§6)", (load_sweep(wl),), panels, claims, note)


#: What the absolute AFCTs of the paths figures depend on that the paper does not give.
PATHS_SETUP = f"the load of the paths figures, which the paper does not give: dclb's is {PATH_LOAD:g} of the host links [G]; and the flow counts"


def _paths_figure(fig_id: str, wl: str, claims: tuple[Claim, ...], also: Sequence[str] = ()) -> Figure:
    name = WORKLOADS[wl]
    panels = [Panel(f"short-flow AFCT, {name}, load {PATH_LOAD:g} of the host links", SHORT_AFCT, x=SPINES, where={WL: wl}, xlabel="number of paths (spines)")]
    for other in also:
        panels.append(Panel(f"(for comparison) {WORKLOADS[other]}", SHORT_AFCT, x=SPINES, where={WL: other}, xlabel="number of paths (spines)"))
    note = (
        f"The traffic is the same at every path count: load {PATH_LOAD:g} of the host links, i.e. "
        + ", ".join(f"{PATH_LOAD * 9 / k:.2f} of the uplinks at {k}" for k in PATHS)
        + " paths (the load is a guess: the paper does not give it)."
    )
    return Figure(fig_id, f"{name}: short-flow AFCT vs number of paths (§6)", tuple(path_sweep(w) for w in (wl, *also)), tuple(panels), claims, note)


def _fig2() -> Figure:
    at = {WL: "websearch", LOAD: 0.5}
    sw = Sweep("main.toml", (S_ECMP, S_RPS, S_CONGA, S_LETFLOW, S_DRILL, S_HERMES), grid={WL: ["websearch"], LOAD: [0.5]}, scale_set=_flows_set("websearch"))
    panels = (
        Panel("(a) short-flow AFCT", SHORT_AFCT, x=LOAD, kind="bar", xlabel="load (web search)"),
        Panel("(b) long-flow throughput", LONG_TPUT, x=LOAD, kind="bar", xlabel="load (web search)"),
        Panel("(c) leaf-uplink utilisation (arrival window)", UTIL, x=LOAD, kind="bar", xlabel="load (web search)"),
    )
    claims = (
        Claim("ECMP's short AFCT is clearly above DRILL's (L90; (a))", compare(SHORT_AFCT, "DRILL", "ECMP", at=at)),
        Claim("ECMP's short AFCT is clearly above Hermes' (L90; (a))", compare(SHORT_AFCT, "Hermes", "ECMP", at=at)),
        Claim("Hermes has the highest long-flow throughput (L90; (b))", rank(LONG_TPUT, "Hermes", at=at, top="highest")),
        Claim("the flow-granularity scheme, ECMP, has the lowest long-flow throughput (L90; (b))", rank(LONG_TPUT, "ECMP", at=at)),
        Claim("link utilisation: DRILL above CONGA and ECMP (L92; (c))", compare(UTIL, "DRILL", ["CONGA", "ECMP"], at=at, higher=True)),
        Claim("link utilisation: CONGA above ECMP (L92; (c))", compare(UTIL, "CONGA", "ECMP", at=at, higher=True)),
    )
    note = "Load and workload are not given (L86-L92): web search at load 0.5 [G], the run of Fig. 8's 0.5 point for the five shared schemes."
    return Figure("2", "motivation: schemes of different granularity (§2.2)", (sw,), panels, claims, note)


def _fig3() -> Figure:
    loads = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    w = {WL: "websearch"}
    sw = load_sweep("websearch", (S_ECMP, S_CONGA, S_DRILL, S_HERMES), loads)
    panels = (
        Panel("(a) short-flow AFCT", SHORT_AFCT, x=LOAD, xlabel="load (web search)"),
        Panel("(b) long-flow throughput", LONG_TPUT, x=LOAD, xlabel="load (web search)"),
        Panel("(c) short flows missing the deadline (2 x ideal FCT)", MISS, x=LOAD, xlabel="load (web search)"),
        Panel("[dclb] (c) as counts: short flows missing the deadline per run", MISSES, x=LOAD, xlabel="load (web search)"),
    )
    claims = (
        Claim("short AFCT rises with load for every scheme (L96; (a), 0.1 → 0.6)", trend(SHORT_AFCT, None, LOAD, 0.1, 0.6, at=w)),
        Claim("the rise is largest for Hermes and ECMP (L96; (a))", trend(SHORT_AFCT, ["Hermes", "ECMP"], LOAD, 0.1, 0.6, goes="most", at=w)),
        Claim(
            "long throughput at 0.6 is about 1/6 of that at 0.1 (L96; (b))",
            trend(LONG_TPUT, None, LOAD, 0.1, 0.6, goes="down", within=(1 / 12, 1 / 3), at=w, reading="the paper's 1/6 within a factor 2"),
        ),
        Claim("ECMP misses the most deadlines (L98; (c), load 0.6)", rank(MISS, "ECMP", at={**w, LOAD: 0.6}, top="highest")),
        Claim(
            "ECMP's miss probability reaches about 90% (L98; (c))",
            level(
                MISS,
                "ECMP",
                _pts(LOAD, loads, **w),
                within=(0.75, 1.0),
                paper=0.9,
                any_point=True,
                reading="'about 90%' read as at least 75% at some load; ECMP is a baseline, so a large gap points at the setup (the deadlines, which the paper does not give: 2 x the ideal FCT [G]), not at a scheme",
            ),
        ),
    )
    note = (
        "Schemes, workload and deadlines are not given: ECMP, CONGA, DRILL, Hermes and web search [G] (the runs of "
        "Fig. 8); a short flow misses when it takes more than twice its ideal FCT [G]."
    )
    return Figure("3", "motivation: mixed traffic under increasing load (§2.2)", (sw,), panels, claims, note)


def _model_figure() -> Figure:
    sweeps = tuple(load_sweep(wl, (S_LBT,)) for wl in WORKLOADS)

    def curves(frame: pd.DataFrame) -> pd.DataFrame:
        loads = sorted(frame[LOAD].dropna().unique()) if len(frame) and LOAD in frame else LOADS
        return lbt_model.threshold_curves(loads, BE_SHARE)

    panels = tuple(
        Panel(f"{name}: Q1, Q2 (lines), LBT (dots)", LONGEST_Q, x=LOAD, kind="model", where={WL: wl}, model=curves, xlabel="load")
        for wl, name in WORKLOADS.items()
    ) + tuple(Panel(f"{name}: LBT's long-flow granularity", GRANULARITY, x=LOAD, where={WL: wl}, xlabel="load") for wl, name in WORKLOADS.items())
    note = (
        "Not a figure of the paper: its threshold model (§4.1, eqs 1-5 in dclb's default reading, lbt_model.py) gives Q1 "
        "and Q2 as functions of the load (l1 without the best-effort 1/9, l2 with it), bounded by one packet and by "
        "the marking threshold (Q1) or the buffer (Q2). The engine counts LBT's decisions and moves (lbt_*) but does "
        "not export the thresholds, so the dots are what they act on: the longest of each leaf's uplink queues, "
        "averaged over the arrival window (LBT runs of Figs. 6, 8, 10). The second row is what the thresholds are "
        "for: long-flow packets per change of port, the 'switching granularity' the paper says grows with load "
        "(L22, L125, L271). The paper claims Q1 and Q2 rise with load (L125) and Q2 ≥ Q1 (L208); the model does both "
        "by construction."
    )
    claims = tuple(
        Claim(f"{WORKLOADS[wl]}: the queue long flows are packed onto grows with load, as Q1 does (L125; LBT, 0.1 → 0.7)", trend(LONGEST_Q, LBT, LOAD, 0.1, 0.7, at={WL: wl}))
        for wl in WORKLOADS
    ) + tuple(
        Claim(f"{WORKLOADS[wl]}: long flows switch paths less often at higher load, a coarser granularity (L22, L125; LBT, 0.1 → 0.7)", trend(GRANULARITY, LBT, LOAD, 0.1, 0.7, at={WL: wl}))
        for wl in WORKLOADS
    )
    return Figure("Q", "LBT's thresholds: the M/D/1 model against load, beside LBT's uplink queues (§4.1)", sweeps, panels, claims, note)


def _fig11() -> Figure:
    sw = Sweep("incast.toml", (S_LBT, Series("DCTCP (ECMP)", S_ECMP.set)))
    panels = (
        Panel("(a) host 1's long-lived flow", LL_TS, kind="timeseries"),
        Panel("(b) host 2's long-lived best-effort flow", BE_TS, kind="timeseries"),
        Panel("(c) host 3's access link (all flows)", HOST3_TS, kind="timeseries"),
        Panel("host 1's flow before the incast (1-5 ms)", LL_BEFORE, kind="bar"),
        Panel("host 1's flow during the incast (5-45 ms)", LL_DURING, kind="bar"),
        Panel("when the last incast flow is done", INCAST_DONE, kind="bar"),
    )
    claims = (
        Claim(
            "the long-lived flow's throughput falls when the incast starts, LBT's too (L355)",
            compare(
                LL_DURING,
                pairs=[(Side(s, metric=LL_DURING), Side(s, metric=LL_BEFORE)) for s in (LBT, "DCTCP (ECMP)")],
                subject="host 1's flow, during the incast (5-45 ms) lower than before it (1-5 ms), LBT and DCTCP (ECMP)",
            ),
            concession=True,
        ),
        Claim("LBT's throughput during the incast is well above DCTCP's (L355; host 1's flow, 5-45 ms)", compare(LL_DURING, LBT, "DCTCP (ECMP)", higher=True)),
    )
    note = (
        "NDP's settings (L355) are not LBT's fabric: dclb keeps the main setup and takes NDP's pattern only. Hosts 1, 2, 3 are "
        "hosts 0, 9, 18 (leaves 0, 1, 2); the long-lived flows also go to host 3 [G]; 64 senders x 900 KB start at 5 ms [P/G]. "
        "Time series: the first seed."
    )
    return Figure("11", "incast: throughput over time, LBT vs DCTCP (§6.4)", (sw,), panels, claims, note)


FIGURES = (
    _fig2(),
    _fig3(),
    _paths_figure(
        "5",
        "webserver",
        (
            Claim("3 and 5 paths: little difference between the six schemes (L292)", level(SHORT_AFCT, Spread(), _pts(SPINES, [3, 5], **_wl("webserver")), within=LITTLE, reading=LITTLE_WORDS)),
            Claim("7 paths: LBT's short AFCT about half of the others' (L292)", compare(SHORT_AFCT, LBT, BASELINES, at=_wl("webserver", **{SPINES: 7}), paper=-50.0)),
            Claim("the paper's absolute number: at 7 paths LBT's short AFCT is about 1 ms (L292)", paper_number(SHORT_AFCT, LBT, _wl("webserver", **{SPINES: 7}), 1.0, unit="ms", setup=PATHS_SETUP)),
            Claim(
                "the paper's absolute number: at 7 paths the other schemes' short AFCT is about 2 ms (L292: LBT's 1 ms 'is only half of other schemes')",
                paper_number(SHORT_AFCT, BASELINES, _wl("webserver", **{SPINES: 7}), 2.0, unit="ms", setup=PATHS_SETUP, derived="twice LBT's 1 ms"),
            ),
            Claim(
                "9 paths: only LBT's short AFCT is below 1 ms (L294)",
                all_of(
                    level(SHORT_AFCT, LBT, _wl("webserver", **{SPINES: 9}), within=(0, 1.0)),
                    level(SHORT_AFCT, BASELINES, _wl("webserver", **{SPINES: 9}), within=(1.0, math.inf)),
                    reading=f"the paper's absolute 1 ms; the baselines' side of it depends on the setup ({PATHS_SETUP}) more than on LBT",
                ),
            ),
            Claim("short AFCT falls as paths are added, every scheme (L292; 3 → 9)", trend(SHORT_AFCT, None, SPINES, 3, 9, goes="down", at=_wl("webserver"))),
        ),
    ),
    _loads_figure(
        "6",
        "webserver",
        (
            Claim("(a) LBT's short AFCT is the lowest at every load (L300)", compare(SHORT_AFCT, LBT, BASELINES, at=_pts(LOAD, LOADS, **_wl("webserver")))),
            Claim("(a) LBT's short AFCT rises least with load (L300)", trend(SHORT_AFCT, LBT, LOAD, 0.1, 0.7, goes="least", at=_wl("webserver"))),
            Claim(
                "(a) DRILL, CONGA, ECMP and LetFlow differ little over the loads (L300)",
                level(SHORT_AFCT, Spread(("DRILL", "CONGA", "ECMP", "LetFlow")), _pts(LOAD, LOADS, **_wl("webserver")), within=LITTLE, reading=LITTLE_WORDS),
            ),
            Claim("(a) Hermes' short AFCT rises sharply from load 0.5 (L300; largest rise 0.5 → 0.7)", trend(SHORT_AFCT, "Hermes", LOAD, 0.5, 0.7, goes="most", at=_wl("webserver"))),
            Claim("(b) LBT has the smallest 99th-pct FCT at load 0.3 (L302)", rank(SHORT_P99, LBT, at=_wl("webserver", **{LOAD: 0.3}))),
            Claim("(b) the other five have similar 99th-pct FCTs at load 0.3 (L302)", level(SHORT_P99, Spread(tuple(BASELINES)), _wl("webserver", **{LOAD: 0.3}), within=LITTLE, reading=LITTLE_WORDS)),
            Claim("(c) long-flow throughput decreases with load, every scheme (L304)", trend(LONG_TPUT, None, LOAD, 0.1, 0.7, goes="down", at=_wl("webserver"))),
            Claim("(c) LBT's long-flow throughput is the highest at every load (L304)", compare(LONG_TPUT, LBT, BASELINES, at=_pts(LOAD, LOADS, **_wl("webserver")), higher=True)),
        ),
    ),
    _paths_figure(
        "7",
        "websearch",
        (
            Claim(
                "LBT's short AFCT is higher than in Web Server at 3, 5 and 7 paths (L318)",
                compare(SHORT_AFCT, Side(LBT, {WL: "websearch"}), Side(LBT, {WL: "webserver"}), at=_pts(SPINES, [3, 5, 7]), higher=True),
            ),
            Claim(
                "CONGA, DRILL and ECMP have more than twice LBT's short AFCT, even at 9 paths (L318)",
                compare(SHORT_AFCT, LBT, ["CONGA", "DRILL", "ECMP"], at=_wl("websearch", **{SPINES: 9}), paper=-50.0, at_least=True),
            ),
            Claim("LBT's short AFCT is the lowest at every path count (L318)", compare(SHORT_AFCT, LBT, BASELINES, at=_pts(SPINES, PATHS, **_wl("websearch")))),
            Claim("short AFCT falls as paths are added, every scheme (L318; 3 → 9)", trend(SHORT_AFCT, None, SPINES, 3, 9, goes="down", at=_wl("websearch"))),
        ),
        also=("webserver",),
    ),
    _loads_figure(
        "8",
        "websearch",
        (
            Claim("(a) at load 0.1 the schemes differ little (L324)", level(SHORT_AFCT, Spread(), _wl("websearch", **{LOAD: 0.1}), within=LITTLE, reading=LITTLE_WORDS)),
            Claim("(a) the baselines' short AFCT at least doubles from 0.1 to 0.7 (L324)", trend(SHORT_AFCT, BASELINES, LOAD, 0.1, 0.7, paper=100.0, at_least=True, at=_wl("websearch"))),
            Claim("(a) LBT's short AFCT rises least (L324: 'only slightly')", trend(SHORT_AFCT, LBT, LOAD, 0.1, 0.7, goes="least", at=_wl("websearch"))),
            Claim("(b) LBT's 99th-pct FCT is up to 50% below ECMP's at load 0.3 (L324)", compare(SHORT_P99, LBT, "ECMP", at=_wl("websearch", **{LOAD: 0.3}), paper=-50.0)),
            Claim("(c) LBT's long-flow throughput is the highest at every load (L326)", compare(LONG_TPUT, LBT, BASELINES, at=_pts(LOAD, LOADS, **_wl("websearch")), higher=True)),
        ),
    ),
    _paths_figure(
        "9",
        "datamining",
        (
            Claim("LBT's short AFCT is the lowest at every path count (L334)", compare(SHORT_AFCT, LBT, BASELINES, at=_pts(SPINES, PATHS, **_wl("datamining")))),
            Claim("short AFCT falls as paths are added, every scheme (L334; 3 → 9)", trend(SHORT_AFCT, None, SPINES, 3, 9, goes="down", at=_wl("datamining"))),
            Claim(
                "short AFCT is higher than in the other workloads, every scheme and path count (L334)",
                compare(SHORT_AFCT, pairs=[(Side(s.label, {WL: "datamining"}), Side(s.label, {WL: o})) for s in SIX for o in ("webserver", "websearch")], at=_pts(SPINES, PATHS), higher=True),
            ),
        ),
        also=("webserver", "websearch"),
    ),
    _loads_figure(
        "10",
        "datamining",
        (
            Claim(
                "headline: LBT cuts short AFCT by 55.9%-65.4% against ECMP, CONGA, DRILL, LetFlow and Hermes at load 0.5 (L22, L59, L383)",
                compare(SHORT_AFCT, LBT, BASELINES, at=_wl("datamining", **{LOAD: 0.5}), paper=(-55.9, -65.4)),
            ),
            Claim("(a) LBT's short AFCT is about a third of the others' at load 0.5 (L338, L347)", compare(SHORT_AFCT, LBT, BASELINES, at=_wl("datamining", **{LOAD: 0.5}), paper=-66.7)),
            Claim("(a) LBT's short AFCT rises least with load (L338)", trend(SHORT_AFCT, LBT, LOAD, 0.1, 0.7, goes="least", at=_wl("datamining"))),
            Claim("(b) LBT has the smallest 99th-pct FCT at load 0.3 (L347)", rank(SHORT_P99, LBT, at=_wl("datamining", **{LOAD: 0.3}))),
            Claim("(b) ECMP has the largest 99th-pct FCT at load 0.3 (L347)", rank(SHORT_P99, "ECMP", at=_wl("datamining", **{LOAD: 0.3}), top="highest")),
            Claim("(c) LBT's long-flow throughput is the highest at every load (L349)", compare(LONG_TPUT, LBT, BASELINES, at=_pts(LOAD, LOADS, **_wl("datamining")), higher=True)),
            Claim(
                "LBT has the drawback of requiring a lot of switch storage resources (L385, the conclusion; no figure)",
                not_testable(
                    "dclb's balancer state is what each scheme's tables hold when a run ends, not the memory a switch needs to implement it",
                    show=(LEAF_STATE, [s.label for s in SIX], _wl("datamining", **{LOAD: 0.5})),
                ),
                concession=True,
            ),
        ),
    ),
    _fig11(),
    _model_figure(),
)

PAPER = Paper(
    key="lbt",
    title="LBT: load balancing for heterogeneous traffic in datacenter networks (J. Netw. Comput. Appl. 2023)",
    citation="Wang, Rao, Liu, Sharma, Hu, Load balancing for heterogeneous traffic in datacenter networks, J. Netw. Comput. "
    "Appl. 2023 (doi 10.1016/j.jnca.2023.103692); motivation §2 (L86-L98), evaluation §6 (L275-L356); line numbers: "
    "docs/references.md.",
    setup=(
        "Leaf-spine of 8 leaves x 9 spines (3, 5, 7, 9 spines in the paths figures), 9 hosts per leaf [G], 10 Gbps links, "
        "100 us round-trip propagation (12.5 us per link), 256-packet drop-tail buffers, DCTCP marking at 65 packets [G]. "
        "Poisson arrivals between random hosts on different leaves at loads 0.1-0.7 of the host links; web server, web "
        "search and data mining (the shipped CDFs); one host per leaf sends best-effort flows (1/9 of the load) [G]. "
        "The paths figures keep load 0.3 of the host links [G]. Fig. 11: hosts 1 and 2 send one long-lived flow each "
        "(host 2's best-effort) to host 3, then 64 senders send 900 KB each to host 3. LBT with the paper's t, W, R and "
        "dclb's mg1_backlog threshold model; baselines with published settings."
    ),
    transport=(
        "DCTCP as the DCTCP authors' NS-2 scripts run it (FullTcp/Sack): three-way handshake, SACK, every segment ACKed; "
        "MSS 1,460 B, initial window 10, minimum RTO 5 ms (none of these is in the paper). Queues counted in packets, as "
        "NS-2's are."
    ),
    figures=FIGURES,
    scales={
        # Flows per point are set per workload by each sweep (FLOWS above); the scale sets only the seeds.
        "paper": Scale(seeds=5, stationary=True),
        # Five seeds at every judged point, each run from a stationary start at its nominal load (docs/reproduce.md).
        "quick": Scale(seeds=5, stationary=True),
        "ci": Scale(seeds=1, trim=True),
    },
)


# ----------------------------------------------------------------------------------------------------------
# Sensitivity (issue #23 items 3-4; dclb.reproduce.sensitivity): the headline claims, re-judged under the settings
# the paper does not state and under the other readings of LBT's rules. Kept apart from the claims above.

from ..sensitivity import Headline, Sensitivity, around, not_applicable, reading, setting  # noqa: E402

#: 16 hosts per leaf instead of 9 [G]: 15 normal senders and the last host best-effort on every leaf, as the shipped
#: file has 8 and 1 (its sources name hosts by number, so the variant renames them).
_HOSTS16 = (
    "topology.hosts_per_leaf=16",
    "traffic.sources.0.senders=[" + ", ".join(f'"{16 * leaf}-{16 * leaf + 14}"' for leaf in range(8)) + "]",
    "traffic.sources.1.senders=[" + ", ".join(str(16 * leaf + 15) for leaf in range(8)) + "]",
)

SENSITIVITY = Sensitivity(
    headlines=(
        Headline(
            "10",
            (
                "headline: LBT cuts short AFCT by",
                "(a) LBT's short AFCT is about a third of the others'",
                "(b) LBT has the smallest 99th-pct FCT at load 0.3",
            ),
            scheme=LBT,
            baseline="ECMP",
            short=SHORT_AFCT,
            long=LONG_TPUT,
            at=_wl("datamining", **{LOAD: 0.5}),
            why="the paper's one number (abstract L22, contributions L59, conclusion L383): short AFCT -55.9% to -65.4% "
            "against all five baselines at data mining 0.5, with its restatement (L338) and the tail at 0.3 (L347).",
        ),
    ),
    variants=(
        *around("lbt", ["main.toml"], notes={"minimum RTO": "1 ms; 200 ms is ns-2's default minrto_"}),
        setting("16 hosts per leaf", *_HOSTS16, group="hosts per leaf", note="9 per leaf is a guess (1:1 at 9 spines); 16 gives 16:9 oversubscription, so load 0.5 of the host links is 0.89 of the uplinks"),
        not_applicable(
            "load basis: fabric",
            "with 9 hosts per leaf and 9 spines of the same rate the host links and the leaf uplinks have the same capacity "
            "(dclb run --dry-run: access load 0.50 = fabric load 0.50 summed over the two sources), so the two bases are the same "
            "load at Fig. 10; they differ only in the paths figures (5, 7, 9)",
            group="load basis",
        ),
        not_applicable("deadline model", "no run of LBT's carries deadlines: Fig. 3's are a metric on the flow tables (2 x ideal FCT), and Fig. 3 is no headline", group="deadlines"),
        reading("lb.long_mode=per_packet", only=(LBT,), group="long-flow mode", note="Algorithm 1's literal loop: every long and BE packet placed afresh"),
        reading("lb.threshold_model=paper", only=(LBT,), group="threshold model", note="eqs 8-11 after dclb's repairs (docs/assumptions.md, LBT 14)"),
        reading("lb.short_granularity=packet", only=(LBT,), group="short-flow granularity", note="every short packet to the shortest queue"),
        reading(
            "lb.long_mode=per_packet",
            "lb.short_granularity=packet",
            "lb.threshold_model=paper",
            only=(LBT,),
            label="Algorithm 1 as printed (LBT)",
            group="literal Algorithm 1",
            note="the three literal readings together: per packet for every class, thresholds from eqs 8-11",
        ),
        reading(
            "topology.priority_queues=3",
            "lb.short_priority=true",
            only=(LBT,),
            label="strict priority for short flows (LBT)",
            group="priority",
            note="three strict-priority queues per port: short packets on top, long below, best effort lowest (L202-L208, L269: short flows 'take priority', BE 'the lowest')",
        ),
        reading(
            "lb.short_placement=first_data",
            only=(LBT,),
            label="short flows placed at their first data packet (LBT)",
            group="placement",
            note="the SYN leaves no flow entry, so a short flow takes the shortest queue when its data arrives, an RTT after its SYN",
        ),
    ),
)
