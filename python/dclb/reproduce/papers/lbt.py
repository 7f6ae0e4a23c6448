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
450 web-search and 180 data-mining flows per point, one seed. With so few flows a heavy-tailed workload does not
reach its nominal load: its arrivals end before its largest flows have sent much. At quick scale, the leaf
uplinks carry (between the first and the last arrival) about 0.1-0.5 of their capacity for web server at nominal
0.1-0.7, 0.08-0.3 for web search and 0.04-0.07 for data mining, so the quick verdicts on the web-search and
data-mining figures (2, 3, 7-10) describe a lightly loaded fabric. Panel (d) of Figs. 6, 8 and 10 shows it, and
the headline's verdict line prints it. The paper scale's 10,000 flows stretch the arrivals 5 (web server) to 55
(data mining) times.

**Not reproduced.** Nothing is left out. Limits: Table 1's W = 64 KB enters only LBT's model (dclb's senders
have no window cap); the paper's flow counts and seeds are not given (paper scale: 10,000 flows per point and 5
seeds [G]); the absolute numbers of the paths figures (e.g. "LBT about 1 ms at 7 paths") depend on the load
they ran at, which is not given.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...reproduce import verdict as v
from ...reproduce.data import _matches
from ...reproduce.spec import Claim, Figure, Metric, Panel, Paper, Scale, Series, Sweep, Verdict
from . import lbt_model

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


def _done(flows: pd.DataFrame) -> pd.DataFrame:
    return flows[(flows["state"] == "completed") & (flows["transport"] != "udp") & (~flows["best_effort"].astype(bool))]


def _short(flows: pd.DataFrame) -> pd.DataFrame:
    d = _done(flows)
    return d[d["size_bytes"] <= 100_000]


def _mean_ms(d: pd.DataFrame) -> float:
    return float(d["fct_us"].mean()) / 1e3 if len(d) else math.nan


def _p99_ms(d: pd.DataFrame) -> float:
    return float(np.quantile(d["fct_us"], 0.99)) / 1e3 if len(d) else math.nan


def _long_tput(flows: pd.DataFrame) -> float:
    d = _done(flows)
    d = d[d["size_bytes"] > 100_000]
    return float((d["size_bytes"] * 8 / (d["fct_us"] * 1e3)).mean()) if len(d) else math.nan


def _miss(flows: pd.DataFrame) -> float:
    """Short normal flows that miss a deadline of twice their ideal FCT (unfinished ones miss)."""
    f = flows[(flows["transport"] != "udp") & (~flows["best_effort"].astype(bool)) & (flows["size_bytes"] <= 100_000)]
    if not len(f):
        return math.nan
    met = (f["state"] == "completed") & (f["fct_us"] <= 2.0 * f["ideal_fct_us"])
    return float(1.0 - met.mean())


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


SHORT_AFCT = Metric("short_afct_ms", "short-flow AFCT (ms)", flows=lambda f: _mean_ms(_short(f)))
SHORT_P99 = Metric("short_p99_ms", "short-flow 99th-pct FCT (ms)", flows=lambda f: _p99_ms(_short(f)))
ALL_P99 = Metric("all_p99_ms", "99th-pct FCT, all flows (ms)", flows=lambda f: _p99_ms(_done(f)))
LONG_TPUT = Metric("long_tput_gbps", "long-flow average throughput (Gbps)", flows=_long_tput)
MISS = Metric("short_miss", "short flows missing the deadline", flows=_miss)
UTIL = Metric("uplink_util", "leaf-uplink utilisation", run=_utilisation)
GRANULARITY = Metric("lbt_packets_per_move", "long-flow packets per path change", run=_packets_per_move)
LONGEST_Q = Metric("longest_uplink_queue_kb", "threshold / queue (KB)", run=_longest_queue_kb)


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
LL_BEFORE = Metric("ll_before_gbps", "throughput (Gbps)", run=_rate_between("flow", 0, *BEFORE))
LL_DURING = Metric("ll_during_gbps", "throughput (Gbps)", run=_rate_between("flow", 0, *DURING))
BE_DURING = Metric("be_during_gbps", "throughput (Gbps)", run=_rate_between("flow", 1, *DURING))
def _incast_done_ms(flows: pd.DataFrame) -> float:
    """When the last incast flow (source 2) completed; NaN if one did not."""
    inc = flows[flows["source"] == 2]
    return float(inc["finish_us"].max()) / 1e3 if len(inc) and (inc["state"] == "completed").all() else math.nan


INCAST_DONE = Metric("incast_done_ms", "last incast flow done (ms)", flows=_incast_done_ms)


# ----------------------------------------------------------------------------------------------------------
# Verdicts that the three shapes of :mod:`dclb.reproduce.verdict` do not cover, built from its mean_of


def _at(where: Mapping[str, Any]) -> str:
    return v._fmt_where(where)


def _realised(f: pd.DataFrame, where: Mapping[str, Any]) -> str:
    """Where the frame has it, the leaf-uplink utilisation the runs reached at ``where`` (all series), beside
    the nominal load: a heavy-tailed workload falls far short of it when the run is short (module doc)."""
    if UTIL.key not in f.columns or LOAD not in where or f.empty:
        return ""
    u = f[_matches(f, dict(where))][UTIL.key].dropna()
    return f"; uplinks carried {u.mean():.2f} of their capacity in the arrival window (nominal load {where[LOAD]:g})" if len(u) else ""


def relative_each(subject: str, metric: str, series: str, others: Sequence[str], paper_pct: float | tuple[float, float], where: Mapping[str, Any]) -> Claim:
    """``series`` against each of ``others`` at one point: the paper's change (or range) beside dclb's change
    against each; holds when every change has the paper's sign (magnitudes shown, as :func:`verdict.relative`)."""

    def check(f: pd.DataFrame) -> Verdict:
        lo, hi = (paper_pct, paper_pct) if isinstance(paper_pct, (int, float)) else paper_pct
        paper = f"{lo:+.1f}%" if lo == hi else f"{lo:+.1f}…{hi:+.1f}%"
        ch = {o: v.change(f, metric, series, o, where) for o in others}
        ch = {o: c for o, c in ch.items() if math.isfinite(c)}
        if not ch:
            return Verdict(f"{subject}: paper {paper}, dclb: no data", None)
        neg = (lo + hi) / 2 < 0
        holds = all((c < 0) == neg and c != 0 for c in ch.values())
        pcts = [100 * c for c in ch.values()]
        inside = sum(min(lo, hi) <= p <= max(lo, hi) for p in pcts)
        each = ", ".join(f"{o} {100 * c:+.1f}%" for o, c in ch.items())
        text = f"{subject}: paper {paper}, dclb {min(pcts):+.1f}…{max(pcts):+.1f}% ({each}; {inside} of {len(pcts)} within the paper's range)"
        return Verdict(text + _realised(f, where), holds)

    return Claim(subject, check)


def beats(subject: str, metric: str, others: Sequence[str], points: Sequence[Mapping[str, Any]], higher: bool = False, winner: str = LBT) -> Claim:
    return Claim(subject, lambda f: v.ordering(f, subject.split(" (")[0], metric, winner, list(others), points, higher_is_better=higher))


def ranks(subject: str, metric: str, series: str, within: int, where: Mapping[str, Any], higher: bool = False) -> Claim:
    return Claim(subject, lambda f: v.rank(f, subject.split(" (")[0], metric, series, within, where, higher_is_better=higher))


def extreme(subject: str, metric: str, series: str, where: Mapping[str, Any], highest: bool, fmt: str = "{:.2f}") -> Claim:
    """``series`` has the highest (``highest``) or the lowest mean of all series at ``where``; the line lists
    every series in that order (v.rank would call the top of a "largest FCT" ranking the best)."""

    def check(f: pd.DataFrame) -> Verdict:
        vals = {s: v.mean_of(f, metric, s, where) for s in _series(f)}
        vals = {s: x for s, x in vals.items() if math.isfinite(x)}
        if series not in vals:
            return Verdict(f"{subject}: dclb: no data", None)
        order = sorted(vals, key=lambda s: -vals[s] if highest else vals[s])
        each = ", ".join(f"{s} {fmt.format(vals[s])}" for s in order)
        return Verdict(f"{subject}: dclb, {'highest' if highest else 'lowest'} first: {each}", order[0] == series)

    return Claim(subject, check)


def _series(f: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(f["series"])) if len(f) else []


def growth(subject: str, metric: str, x: str, lo: Any, hi: Any, fixed: Mapping[str, Any], series: Sequence[str] | None = None, rising: bool = True, factor: float = 1.0) -> Claim:
    """Each of ``series`` (default: all) changes from ``x = lo`` to ``x = hi`` by at least ``factor`` up
    (``rising``) or goes down (``rising=False``); the line lists every ratio."""

    def check(f: pd.DataFrame) -> Verdict:
        names = list(series) if series is not None else _series(f)
        ratios = {}
        for s in names:
            a, b = v.mean_of(f, metric, s, {x: lo, **fixed}), v.mean_of(f, metric, s, {x: hi, **fixed})
            if math.isfinite(a) and math.isfinite(b) and a > 0:
                ratios[s] = b / a
        if not ratios:
            return Verdict(f"{subject}: dclb: no data", None)
        ok = [r >= factor and r > 1 for r in ratios.values()] if rising else [r < 1 for r in ratios.values()]
        each = ", ".join(f"{s} ×{r:.2f}" for s, r in ratios.items())
        return Verdict(f"{subject}: dclb {x.split('.')[-1]} {lo:g} → {hi:g}: {each}", all(ok))

    return Claim(subject, check)


def flattest(subject: str, metric: str, x: str, lo: Any, hi: Any, fixed: Mapping[str, Any], series: str = LBT) -> Claim:
    """``series`` rises least (ratio ``hi``/``lo``) of all series."""

    def check(f: pd.DataFrame) -> Verdict:
        ratios = v.growth(f, metric, x, lo, hi, fixed)
        if series not in ratios or len(ratios) < 2:
            return Verdict(f"{subject}: dclb: no data", None)
        order = sorted(ratios, key=ratios.get)
        each = ", ".join(f"{s} ×{ratios[s]:.2f}" for s in order)
        return Verdict(f"{subject}: dclb {x.split('.')[-1]} {lo:g} → {hi:g}: {each}", order[0] == series)

    return Claim(subject, check)


def steepest(subject: str, metric: str, x: str, lo: Any, hi: Any, fixed: Mapping[str, Any], top: Sequence[str]) -> Claim:
    """The series ``top`` have the largest rises (ratio ``hi``/``lo``) of all series."""

    def check(f: pd.DataFrame) -> Verdict:
        ratios = v.growth(f, metric, x, lo, hi, fixed)
        if not all(s in ratios for s in top):
            return Verdict(f"{subject}: dclb: no data", None)
        order = sorted(ratios, key=lambda s: -ratios[s])
        each = ", ".join(f"{s} ×{ratios[s]:.2f}" for s in order)
        return Verdict(f"{subject}: dclb {x.split('.')[-1]} {lo:g} → {hi:g}, largest first: {each}", set(order[: len(top)]) == set(top))

    return Claim(subject, check)


def spread(subject: str, metric: str, wheres: Sequence[Mapping[str, Any]], limit: float, series: Sequence[str] | None = None) -> Claim:
    """"Little difference": at each point the largest mean of ``series`` (default all) is at most ``limit``
    times the smallest."""

    def check(f: pd.DataFrame) -> Verdict:
        parts, ok = [], []
        for where in wheres:
            names = list(series) if series is not None else _series(f)
            vals = [x for x in (v.mean_of(f, metric, s, where) for s in names) if math.isfinite(x)]
            if len(vals) < 2 or min(vals) <= 0:
                continue
            r = max(vals) / min(vals)
            ok.append(r <= limit)
            parts.append(f"{_at(where)}: max/min {r:.2f}")
        if not ok:
            return Verdict(f"{subject}: dclb: no data", None)
        return Verdict(f"{subject} (dclb's reading: max/min ≤ {limit:g}): {'; '.join(parts)}", all(ok))

    return Claim(subject, check)


def only_below(subject: str, metric: str, series: str, level: float, where: Mapping[str, Any]) -> Claim:
    """``series`` is the only one whose mean lies below ``level``."""

    def check(f: pd.DataFrame) -> Verdict:
        vals = {s: v.mean_of(f, metric, s, where) for s in _series(f)}
        vals = {s: x for s, x in vals.items() if math.isfinite(x)}
        if series not in vals:
            return Verdict(f"{subject}: dclb: no data", None)
        below = [s for s, x in vals.items() if x < level]
        each = ", ".join(f"{s} {x:.2f}" for s, x in sorted(vals.items(), key=lambda kv: kv[1]))
        return Verdict(f"{subject}: dclb at {_at(where)}: {each}; below {level:g}: {', '.join(below) or 'none'}", below == [series])

    return Claim(subject, check)


def workload_above(subject: str, series: Sequence[str], wl: str, others: Sequence[str], paths: Sequence[int]) -> Claim:
    """Short AFCT of each of ``series`` in workload ``wl`` above its AFCT in each of ``others`` at the same
    path count, at each of ``paths``."""

    def check(f: pd.DataFrame) -> Verdict:
        wins, total, worst = 0, 0, None
        for s in series:
            for k in paths:
                a = v.mean_of(f, SHORT_AFCT.key, s, {WL: wl, SPINES: k})
                for o in others:
                    b = v.mean_of(f, SHORT_AFCT.key, s, {WL: o, SPINES: k})
                    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0:
                        continue
                    total += 1
                    wins += a > b
                    if a <= b and (worst is None or b / a > worst[0]):
                        worst = (b / a, s, o, k)
        if total == 0:
            return Verdict(f"{subject}: dclb: no data", None)
        text = f"{subject}: dclb holds in {wins} of {total} comparisons"
        if worst is not None:
            text += f"; worst: {worst[1]} at {worst[3]} paths ({WORKLOADS[worst[2]]} / {WORKLOADS[wl]} = {worst[0]:.2f})"
        return Verdict(text, wins == total)

    return Claim(subject, check)


def level(subject: str, metric: str, series: str, paper: float, wheres: Sequence[Mapping[str, Any]], at_least: float) -> Claim:
    """The largest mean of ``series`` over ``wheres``, beside the paper's value; holds when it reaches
    ``at_least`` (the check's reading of "about")."""

    def check(f: pd.DataFrame) -> Verdict:
        vals = [(v.mean_of(f, metric, series, w), w) for w in wheres]
        vals = [(x, w) for x, w in vals if math.isfinite(x)]
        if not vals:
            return Verdict(f"{subject}: dclb: no data", None)
        x, w = max(vals, key=lambda p: p[0])
        return Verdict(f"{subject}: paper ≈ {paper:.0%}, dclb at most {x:.0%} (at {_at(w)}); dclb's reading: at least {at_least:.0%}", x >= at_least)

    return Claim(subject, check)


def ratio_over(subject: str, metric: str, x: str, lo: Any, hi: Any, fixed: Mapping[str, Any], paper_ratio: float) -> Claim:
    """Each series' ``hi``/``lo`` ratio beside the paper's (e.g. long throughput at 0.6 ≈ 1/6 of that at
    0.1); holds when every ratio lies within a factor 2 of the paper's (dclb's reading of "about")."""

    def check(f: pd.DataFrame) -> Verdict:
        ratios = v.growth(f, metric, x, lo, hi, fixed)
        if not ratios:
            return Verdict(f"{subject}: dclb: no data", None)
        each = ", ".join(f"{s} {r:.2f}" for s, r in ratios.items())
        ok = all(paper_ratio / 2 <= r <= paper_ratio * 2 for r in ratios.values())
        return Verdict(f"{subject}: paper {paper_ratio:.2f}, dclb {each} (dclb's reading: within ×2 of the paper's)", ok)

    return Claim(subject, check)


def before_after(subject: str, before: str, during: str, series: Sequence[str]) -> Claim:
    """Throughput during the incast below that before it, for each of ``series``."""

    def check(f: pd.DataFrame) -> Verdict:
        parts, ok = [], []
        for s in series:
            a, b = v.mean_of(f, before, s), v.mean_of(f, during, s)
            if math.isfinite(a) and math.isfinite(b):
                parts.append(f"{s} {a:.2f} → {b:.2f} Gbps")
                ok.append(b < a)
        if not ok:
            return Verdict(f"{subject}: dclb: no data", None)
        return Verdict(f"{subject}: dclb {'; '.join(parts)}", all(ok))

    return Claim(subject, check)


# ----------------------------------------------------------------------------------------------------------
# Figures


def _pts(x: str, values: Sequence[Any], **fixed: Any) -> list[dict[str, Any]]:
    return v.points(x, values, fixed)


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
        beats("ECMP's short AFCT is clearly above DRILL's (L90; (a))", SHORT_AFCT.key, ["ECMP"], [at], winner="DRILL"),
        beats("ECMP's short AFCT is clearly above Hermes' (L90; (a))", SHORT_AFCT.key, ["ECMP"], [at], winner="Hermes"),
        extreme("Hermes has the highest long-flow throughput (L90; (b))", LONG_TPUT.key, "Hermes", at, highest=True),
        extreme("the flow-granularity scheme, ECMP, has the lowest long-flow throughput (L90; (b))", LONG_TPUT.key, "ECMP", at, highest=False),
        beats("link utilisation: DRILL above CONGA and ECMP (L92; (c))", UTIL.key, ["CONGA", "ECMP"], [at], higher=True, winner="DRILL"),
        beats("link utilisation: CONGA above ECMP (L92; (c))", UTIL.key, ["ECMP"], [at], higher=True, winner="CONGA"),
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
    )
    claims = (
        growth("short AFCT rises with load for every scheme (L96; (a), 0.1 → 0.6)", SHORT_AFCT.key, LOAD, 0.1, 0.6, w),
        steepest("the rise is largest for Hermes and ECMP (L96; (a))", SHORT_AFCT.key, LOAD, 0.1, 0.6, w, ["Hermes", "ECMP"]),
        ratio_over("long throughput at 0.6 is about 1/6 of that at 0.1 (L96; (b))", LONG_TPUT.key, LOAD, 0.1, 0.6, w, 1 / 6),
        extreme("ECMP misses the most deadlines (L98; (c), load 0.6)", MISS.key, "ECMP", {**w, LOAD: 0.6}, highest=True),
        level("ECMP's miss probability reaches about 90% (L98; (c))", MISS.key, "ECMP", 0.9, _pts(LOAD, loads, **w), 0.75),
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
        growth(f"{WORKLOADS[wl]}: the queue long flows are packed onto grows with load, as Q1 does (L125; LBT, 0.1 → 0.7)", LONGEST_Q.key, LOAD, 0.1, 0.7, {WL: wl}, [LBT])
        for wl in WORKLOADS
    ) + tuple(
        growth(f"{WORKLOADS[wl]}: long flows switch paths less often at higher load, a coarser granularity (L22, L125; LBT, 0.1 → 0.7)", GRANULARITY.key, LOAD, 0.1, 0.7, {WL: wl}, [LBT])
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
        before_after("the long-lived flow's throughput falls when the incast starts (L355)", LL_BEFORE.key, LL_DURING.key, [LBT, "DCTCP (ECMP)"]),
        beats("LBT's throughput during the incast is well above DCTCP's (L355; host 1's flow, 5-45 ms)", LL_DURING.key, ["DCTCP (ECMP)"], [{}], higher=True),
    )
    note = (
        "NDP's settings (L355) are not LBT's fabric: dclb keeps the main setup and takes NDP's pattern only. Hosts 1, 2, 3 are "
        "hosts 0, 9, 18 (leaves 0, 1, 2); the long-lived flows also go to host 3 [G]; 64 senders x 900 KB start at 5 ms [P/G]. "
        "Time series: the first seed."
    )
    return Figure("11", "incast: throughput over time, LBT vs DCTCP (§6.4)", (sw,), panels, claims, note)


def _wl(wl: str, **kw: Any) -> dict[str, Any]:
    return {WL: wl, **kw}


FIGURES = (
    _fig2(),
    _fig3(),
    _paths_figure(
        "5",
        "webserver",
        (
            spread("3 and 5 paths: little difference between the six schemes (L292)", SHORT_AFCT.key, [_wl("webserver", **{SPINES: 3}), _wl("webserver", **{SPINES: 5})], 1.5),
            relative_each("7 paths: LBT's short AFCT about half of the others' (L292)", SHORT_AFCT.key, LBT, BASELINES, -50.0, _wl("webserver", **{SPINES: 7})),
            only_below("9 paths: only LBT's short AFCT is below 1 ms (L294)", SHORT_AFCT.key, LBT, 1.0, _wl("webserver", **{SPINES: 9})),
            growth("short AFCT falls as paths are added, every scheme (L292; 3 → 9)", SHORT_AFCT.key, SPINES, 3, 9, _wl("webserver"), rising=False),
        ),
    ),
    _loads_figure(
        "6",
        "webserver",
        (
            beats("(a) LBT's short AFCT is the lowest at every load (L300)", SHORT_AFCT.key, BASELINES, _pts(LOAD, LOADS, **_wl("webserver"))),
            flattest("(a) LBT's short AFCT rises least with load (L300)", SHORT_AFCT.key, LOAD, 0.1, 0.7, _wl("webserver")),
            spread("(a) DRILL, CONGA, ECMP and LetFlow differ little over the loads (L300)", SHORT_AFCT.key, _pts(LOAD, LOADS, **_wl("webserver")), 1.5, ["DRILL", "CONGA", "ECMP", "LetFlow"]),
            steepest("(a) Hermes' short AFCT rises sharply from load 0.5 (L300; largest rise 0.5 → 0.7)", SHORT_AFCT.key, LOAD, 0.5, 0.7, _wl("webserver"), ["Hermes"]),
            ranks("(b) LBT has the smallest 99th-pct FCT at load 0.3 (L302)", SHORT_P99.key, LBT, 1, _wl("webserver", **{LOAD: 0.3})),
            spread("(b) the other five have similar 99th-pct FCTs at load 0.3 (L302)", SHORT_P99.key, [_wl("webserver", **{LOAD: 0.3})], 1.5, BASELINES),
            growth("(c) long-flow throughput decreases with load, every scheme (L304)", LONG_TPUT.key, LOAD, 0.1, 0.7, _wl("webserver"), rising=False),
            beats("(c) LBT's long-flow throughput is the highest at every load (L304)", LONG_TPUT.key, BASELINES, _pts(LOAD, LOADS, **_wl("webserver")), higher=True),
        ),
    ),
    _paths_figure(
        "7",
        "websearch",
        (
            workload_above("LBT's short AFCT is higher than in Web Server at 3, 5 and 7 paths (L318)", [LBT], "websearch", ["webserver"], [3, 5, 7]),
            relative_each("CONGA, DRILL and ECMP have more than twice LBT's short AFCT, even at 9 paths (L318)", SHORT_AFCT.key, LBT, ["CONGA", "DRILL", "ECMP"], -50.0, _wl("websearch", **{SPINES: 9})),
            beats("LBT's short AFCT is the lowest at every path count (L318)", SHORT_AFCT.key, BASELINES, _pts(SPINES, PATHS, **_wl("websearch"))),
            growth("short AFCT falls as paths are added, every scheme (L318; 3 → 9)", SHORT_AFCT.key, SPINES, 3, 9, _wl("websearch"), rising=False),
        ),
        also=("webserver",),
    ),
    _loads_figure(
        "8",
        "websearch",
        (
            spread("(a) at load 0.1 the schemes differ little (L324)", SHORT_AFCT.key, [_wl("websearch", **{LOAD: 0.1})], 1.5),
            growth("(a) the baselines' short AFCT at least doubles from 0.1 to 0.7 (L324)", SHORT_AFCT.key, LOAD, 0.1, 0.7, _wl("websearch"), BASELINES, factor=2.0),
            flattest("(a) LBT's short AFCT rises least (L324: 'only slightly')", SHORT_AFCT.key, LOAD, 0.1, 0.7, _wl("websearch")),
            Claim(
                "(b) LBT's 99th-pct FCT is up to 50% below ECMP's at load 0.3 (L324)",
                lambda f: v.relative(f, "LBT short p99 vs ECMP, web search, load 0.3", SHORT_P99.key, LBT, "ECMP", -50.0, _wl("websearch", **{LOAD: 0.3})),
            ),
            beats("(c) LBT's long-flow throughput is the highest at every load (L326)", LONG_TPUT.key, BASELINES, _pts(LOAD, LOADS, **_wl("websearch")), higher=True),
        ),
    ),
    _paths_figure(
        "9",
        "datamining",
        (
            beats("LBT's short AFCT is the lowest at every path count (L334)", SHORT_AFCT.key, BASELINES, _pts(SPINES, PATHS, **_wl("datamining"))),
            growth("short AFCT falls as paths are added, every scheme (L334; 3 → 9)", SHORT_AFCT.key, SPINES, 3, 9, _wl("datamining"), rising=False),
            workload_above("short AFCT is higher than in the other workloads, every scheme and path count (L334)", [s.label for s in SIX], "datamining", ["webserver", "websearch"], PATHS),
        ),
        also=("webserver", "websearch"),
    ),
    _loads_figure(
        "10",
        "datamining",
        (
            relative_each(
                "headline: LBT cuts short AFCT by 55.9%-65.4% against ECMP, CONGA, DRILL, LetFlow and Hermes at load 0.5 (L22, L59, L383)",
                SHORT_AFCT.key,
                LBT,
                BASELINES,
                (-55.9, -65.4),
                _wl("datamining", **{LOAD: 0.5}),
            ),
            relative_each("(a) LBT's short AFCT is about a third of the others' at load 0.5 (L338, L347)", SHORT_AFCT.key, LBT, BASELINES, -66.7, _wl("datamining", **{LOAD: 0.5})),
            flattest("(a) LBT's short AFCT rises least with load (L338)", SHORT_AFCT.key, LOAD, 0.1, 0.7, _wl("datamining")),
            ranks("(b) LBT has the smallest 99th-pct FCT at load 0.3 (L347)", SHORT_P99.key, LBT, 1, _wl("datamining", **{LOAD: 0.3})),
            extreme("(b) ECMP has the largest 99th-pct FCT at load 0.3 (L347)", SHORT_P99.key, "ECMP", _wl("datamining", **{LOAD: 0.3}), highest=True),
            beats("(c) LBT's long-flow throughput is the highest at every load (L349)", LONG_TPUT.key, BASELINES, _pts(LOAD, LOADS, **_wl("datamining")), higher=True),
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
        "paper": Scale(seeds=5),
        "quick": Scale(seeds=1),
        "ci": Scale(seeds=1, trim=True),
    },
)
