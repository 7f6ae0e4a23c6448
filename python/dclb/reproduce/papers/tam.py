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

**Metrics** (:mod:`dclb.reproduce.metrics`). Short flows are <= 100 KB, long ones above (L29). "Average queueing
delay of short flows" is the mean per packet: the summed queueing delay of completed short flows over the packets
they sent. Long-flow retransmissions are summed over the long flows. "Standard deviation of long flows' routing"
(Fig. 4(c)) is the population standard deviation, over the 10 uplinks of the senders' leaf, of the completed long
flows' bytes on each, as a rate over the time at least one of them is active, in Mbps. "Overall performance" (Fig.
12(e)) is undefined: read as the AFCT of all flows (spec A23), each claim on it also judged on the mean slowdown of
all flows (``mean_slowdown``, drawn beside it), so that one holding only there reads "metric-dependent".

**Claims** (data, :mod:`dclb.reproduce.claims`). Ordinal claims are judged at every point of the axis; "X hardly
changes" is read as TAM's growth below every other scheme's (paired per seed) or, where the paper says so of one
scheme alone, within ±10% of its own mean at every point; the headline numbers (short AFCT up to -60 %, tail up to -50 %, long goodput up to +40 %, L25, L48) are read as the
best case over schemes and points, since the paper says "up to" without naming a figure; they are checked on the
microbenchmark figures (the goodput claim can only come from Figs. 7 and 9). Where the paper says "close to" or
"about the same", the claim states the tolerance used. The paper's concessions are claims too: L282 (in web server
and Hadoop TAM's short flows do about as well as under the others) and L296 (TAM's long AFCT grows with load).

**Scales.** paper: 5 seeds [G] ("repeated many times", L77), the paper's 10,000 flows per workload and 50,000
mixed. quick: three seeds everywhere (a verdict needs three); the microbenchmarks as in the paper, the 40 Gbps runs
with 1,000 flows per workload and 2,000 mixed. ci: one seed, every grid trimmed to its ends, 1 MB long flows in the
microbenchmarks, 60 flows at 40 Gbps.

**Caveats.** (1) With random pairs [G] the long flows of the microbenchmarks often share a sender or a receiver
host, which halves their goodput whatever the balancer does: at quick scale the seeds differ more than the schemes
(seed 1 vs seed 2 long goodput 0.52 vs 0.87 Gbps under TAM), and the confidence bands of Figs. 4, 7 and 9 are wide.
(2) At quick scale the 40 Gbps arrivals last 10-40 ms while the largest data-mining flows (up to 1 GB) take up to
200 ms alone, so the realised load falls short of the nominal one and the load axis of Fig. 12 compresses; only
the paper scale gives the load its meaning. (3) TAM places a long flow while it is still short (by transmission
delay, when every uplink is idle at 1 Gbps) and moves it only at a flowlet gap, which a backlogged DCTCP flow at
1 Gbps never leaves: two long flows that start on one uplink stay there. (4) The same holds at 40 Gbps, where it is
measured: with a 9 us round trip and no drop or timeout in these runs, no long flow leaves a 500 us gap, so the
counters of every switch show 0 flowlet starts and 0 moves of long flows (``tam_long_flowlets``,
``tam_long_moves``; the 12 TAM runs of Fig. 12 at quick scale, 2,000 mixed flows each at loads 0.2-0.8). Every long-flow claim of Figs. 11 and 12 says so in
its verdict: TAM's long flows stay where their first packet went, and only that placement and TAM's marking
act on them.

Not reproduced: Figs. 1, 2 and 5 are illustrations (no data). Every evaluation figure is reproduced.
"""

from __future__ import annotations

from typing import Any

from .. import metrics as m
from ..claims import Side, Spread, any_of, compare, level, points, trend
from ..spec import Claim, Figure, Panel, Paper, Scale, Series, Sweep
from .common import metric_reading

TAM = "TAM"
#: dclb's reading of "similar" / "near" between two schemes: within 25% of each other.
SIMILAR = (0.8, 1.25)

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

SHORT_AFCT = m.SHORT_AFCT
SHORT_P99 = m.SHORT_P99
SHORT_QUEUE = m.queueing_per_packet(m.SHORT, "short-flow queueing delay per packet", key="short_queueing_us", completed=True)
LONG_GOODPUT = m.LONG_GOODPUT
LONG_RETX = m.retx_count(m.LONG, "retransmitted packets of long flows", key="long_retx_packets")
LONG_STD = m.path_std_mbps(m.LONG, "std. dev. of long-flow rate per path", key="long_path_std_mbps")
LONG_AFCT = m.LONG_AFCT
LONG_P99 = m.fct_quantile(0.99, m.LONG, "long-flow 99th-percentile FCT")
OVERALL = m.OVERALL_AFCT
#: The other reading of Fig. 12(e)'s "overall performance": the mean slowdown of all flows, where every flow weighs
#: the same (the AFCT of all flows is dominated by the few largest flows, the slowdown mostly by the many short ones).
SLOWDOWN = m.MEAN_SLOWDOWN

# ---------------------------------------------------------------------------------------------------- figures


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


P_LONG = points(N_LONG, LONGS)
P_SHORT = points(N_SHORT, SHORTS)
P_LONG_HI = points(N_LONG, [10])
#: dclb's reading of "hardly changes" along an axis: within ±10% of the series' own mean at every point.
STEADY = (0.9, 1.1)

FIG3 = Figure(
    "3",
    "how long flows affect short flows (motivation, symmetric)",
    (_sweep_long("micro.toml", MOTIVATION),),
    _short_panels(),
    (
        Claim("ECMP and LetFlow: short AFCT rises with the number of long flows (L88)", trend(SHORT_AFCT, ["ECMP", "LetFlow"], N_LONG)),
        Claim("ECMP and LetFlow: short tail FCT rises with the number of long flows (L88)", trend(SHORT_P99, ["ECMP", "LetFlow"], N_LONG)),
        Claim("RPS: short AFCT grows less with the long flows than under ECMP and LetFlow (L86, L88)", trend(SHORT_AFCT, "RPS", N_LONG, goes="least", than=["ECMP", "LetFlow"])),
        Claim("ECMP and LetFlow: short-flow queueing delay grows with the long flows (L88)", trend(SHORT_QUEUE, ["ECMP", "LetFlow"], N_LONG)),
        Claim("RPS: short-flow queueing delay stable, below ECMP's and LetFlow's with 10 long flows (L88)", compare(SHORT_QUEUE, "RPS", ["ECMP", "LetFlow"], at=P_LONG_HI)),
    ),
)

FIG4 = Figure(
    "4",
    "how short flows affect long flows (motivation, symmetric)",
    (_sweep_short("micro.toml", MOTIVATION),),
    _long_panels(),
    (
        Claim("long goodput: LetFlow above ECMP and RPS at every N_short (L90)", compare(LONG_GOODPUT, "LetFlow", ["ECMP", "RPS"], at=P_SHORT, higher=True)),
        Claim("long goodput: ECMP above RPS at every N_short (L90)", compare(LONG_GOODPUT, "ECMP", "RPS", at=P_SHORT, higher=True)),
        Claim("ECMP and LetFlow retransmit no packet of long flows (L90)", level(LONG_RETX, ["ECMP", "LetFlow"], P_SHORT, within=(0, 0), every_run=True)),
        Claim("RPS has the smallest per-path standard deviation of long-flow traffic (L90)", compare(LONG_STD, "RPS", ["ECMP", "LetFlow"], at=P_SHORT)),
        Claim(
            "long-flow goodput hardly changes with the number of short flows (L90)",
            trend(LONG_GOODPUT, ["ECMP", "LetFlow", "RPS"], N_SHORT, goes="flat", values=SHORTS, within=STEADY, reading="within ±10% of its mean at every N_short"),
        ),
    ),
)


def _short_claims(sym: bool) -> tuple[Claim, ...]:
    where = "L258-L260" if sym else "L266"
    claims = [
        Claim(f"TAM has the lowest short AFCT at every number of long flows ({where})", compare(SHORT_AFCT, TAM, OTHERS, at=P_LONG)),
        Claim(f"TAM has the lowest short 99th-percentile FCT at every number of long flows ({where})", compare(SHORT_P99, TAM, OTHERS, at=P_LONG)),
        Claim(f"TAM's short AFCT is hardly affected by the number of long flows: it grows least of all schemes ({where})", trend(SHORT_AFCT, TAM, N_LONG, goes="least", than=OTHERS)),
        Claim(f"TAM's short tail FCT is hardly affected by the number of long flows: it grows least of all schemes ({where})", trend(SHORT_P99, TAM, N_LONG, goes="least", than=OTHERS)),
    ]
    if sym:
        claims += [
            Claim(
                "TAM's short-flow queueing delay is at RPS's level (L260)",
                compare(SHORT_QUEUE, TAM, "RPS", at=P_LONG, within=(0.5, 2.0), mean=True, reading="within a factor 2, mean over N_long"),
            ),
            Claim(
                "Presto's short AFCT lies between ECMP's and LetFlow's (L258)",
                any_of(
                    compare(SHORT_AFCT, pairs=[("LetFlow", "Presto"), ("Presto", "ECMP")], at=P_LONG, mean=True),
                    compare(SHORT_AFCT, pairs=[("ECMP", "Presto"), ("Presto", "LetFlow")], at=P_LONG, mean=True),
                    reading="either order, mean over N_long",
                ),
            ),
        ]
    else:
        claims.append(Claim("TAM keeps short-flow queueing delay low: below ECMP, LetFlow and Presto at every N_long (L266)", compare(SHORT_QUEUE, TAM, COARSE, at=P_LONG)))
    claims += [
        Claim("headline: TAM's short AFCT up to 60% lower than the representative schemes' (L25, L48)", compare(SHORT_AFCT, TAM, OTHERS, at=P_LONG, paper=-60.0, best=True)),
        Claim("headline: TAM's short tail FCT up to 50% lower (L48)", compare(SHORT_P99, TAM, OTHERS, at=P_LONG, paper=-50.0, best=True)),
    ]
    return tuple(claims)


def _long_claims(sym: bool) -> tuple[Claim, ...]:
    where = "L262" if sym else "L268-L270"
    claims = [
        Claim(f"TAM has the best long-flow goodput at every number of short flows ({where})", compare(LONG_GOODPUT, TAM, OTHERS, at=P_SHORT, higher=True)),
        Claim(
            f"long-flow goodput hardly changes with the number of short flows ({where})",
            trend(LONG_GOODPUT, TAM, N_SHORT, goes="flat", values=SHORTS, within=STEADY, reading="TAM within ±10% of its mean at every N_short"),
        ),
    ]
    if sym:
        claims += [
            Claim("TAM's long goodput is above LetFlow's (L262)", compare(LONG_GOODPUT, TAM, "LetFlow", at=P_SHORT, higher=True)),
            Claim("TAM, ECMP and LetFlow retransmit no packet of long flows (L262)", level(LONG_RETX, [TAM, "ECMP", "LetFlow"], P_SHORT, within=(0, 0), every_run=True)),
            Claim("Presto and DRB have a lower long goodput than RPS (L262)", compare(LONG_GOODPUT, "RPS", ["Presto", "DRB"], at=P_SHORT, higher=True)),
            Claim("TAM's per-path standard deviation of long-flow traffic is below LetFlow's and ECMP's (L262)", compare(LONG_STD, TAM, ["LetFlow", "ECMP"], at=P_SHORT)),
        ]
    else:
        claims += [
            Claim("round robin beats random: Presto's long goodput exceeds ECMP's (L268)", compare(LONG_GOODPUT, "Presto", "ECMP", at=P_SHORT, higher=True)),
            Claim(
                "Presto's long goodput is almost equal to LetFlow's (L268)",
                compare(LONG_GOODPUT, "Presto", "LetFlow", at=P_SHORT, within=(0.9, 1.1), mean=True, reading="within 10%, mean over N_short"),
            ),
            Claim("DRB's long goodput exceeds RPS's (L270)", compare(LONG_GOODPUT, "DRB", "RPS", at=P_SHORT, higher=True)),
        ]
    claims.append(Claim("headline: TAM's long-flow average goodput up to 40% higher (L25, L48)", compare(LONG_GOODPUT, TAM, OTHERS, at=P_SHORT, paper=40.0, best=True)))
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

# Large scale. quick: three seeds of 1,000 flows per workload and 2,000 mixed (the paper's 10,000 data-mining flows
# alone take about 2 minutes per run on one core); ci: 60 flows.
LARGE_SCALE = {"quick": ("traffic.flows=1000",), "ci": ("traffic.flows=60",)}
MIXED_SCALE = {"quick": ("traffic.flows=2000",), "ci": ("traffic.flows=60",)}
# At load the 200 hosts at 40 Gbps cost far more than the quick scale's budget: a stationary start's 20 ms warm-up
# and a drain carry about 0.5 Tbps of traffic for 70 ms or more, some 200 M events (about 45 CPU-seconds) per run
# before a single measured flow, against 1-2 s from an empty fabric. So at quick scale they start empty, as before
# (their headers show the load they carried, well under the nominal one); the paper scale starts them stationary.
LARGE_EMPTY = ("quick",)
# Two sweeps, so that the ci scale (which trims every grid to its ends) keeps cache follower, web server and Hadoop:
# enough for every claim of Figs. 10-11 to be computed.
WORKLOAD_SWEEPS = tuple(
    Sweep("large.toml", ALL, grid={WORKLOAD: wl}, scale_set=LARGE_SCALE, empty_start=LARGE_EMPTY)
    for wl in (["cachefollower", "datamining", "websearch", "webserver"], ["hadoop_parsimon_intracluster"])
)
P_WL = points(WORKLOAD, WORKLOADS)
HEAVY = ["cachefollower", "websearch", "datamining"]
LIGHT = ["webserver", "hadoop_parsimon_intracluster"]
NAMES = [s.label for s in ALL]


#: What the verdicts on TAM's long flows at 40 Gbps say (docs/assumptions.md, TAM 8).
NO_FLOWLETS = (
    "TAM's 500 us flowlet timeout never fires at 40 Gbps: a DCTCP flow with a 9 us round trip leaves no 500 us gap "
    "unless it times out, and these runs neither drop nor time out (measured: 0 flowlet starts and 0 moves of long "
    "flows on every switch in the 12 TAM runs of Fig. 12 at quick scale, 2,000 mixed flows each, loads 0.2-0.8), so TAM's long flows stay on the uplink their "
    "first packet took; what TAM does for them here is that placement and its marking, not flowlet rerouting"
)


def _wl(workload: str, series: str) -> Side:
    return Side(series, {WORKLOAD: workload})


FIG10 = Figure(
    "10",
    "short flows at large scale, per workload (10 x 10, 40 Gbps, load 0.5)",
    WORKLOAD_SWEEPS,
    (
        Panel("(a) short-flow AFCT", SHORT_AFCT, x=WORKLOAD, kind="bar", xlabel="workload", logy=True),
        Panel("(b) short-flow 99th-percentile FCT", SHORT_P99, x=WORKLOAD, kind="bar", xlabel="workload", logy=True),
    ),
    (
        Claim(
            "cache follower has the highest short AFCT of the five workloads (L276; the paper reasons from equal flow counts, dclb runs every workload at load 0.5)",
            compare(SHORT_AFCT, pairs=[(_wl("cachefollower", s), _wl(w, s)) for s in NAMES for w in WORKLOADS if w != "cachefollower"], higher=True),
        ),
        Claim("RPS and DRB beat ECMP, LetFlow and Presto on short AFCT (L276, L280; cache follower, web search, data mining)", compare(SHORT_AFCT, FINE, COARSE, at=points(WORKLOAD, HEAVY))),
        Claim(
            "web server and Hadoop show small differences between schemes (L276; read: a smaller spread than cache follower's)",
            compare(SHORT_AFCT, Side(Spread(), {WORKLOAD: "cachefollower"}), [Side(Spread(), {WORKLOAD: w}) for w in LIGHT], higher=True),
        ),
        Claim("TAM has the lowest short AFCT in every workload (L282, L290)", compare(SHORT_AFCT, TAM, OTHERS, at=P_WL)),
        Claim("TAM has the lowest short tail FCT in every workload (L282, L290)", compare(SHORT_P99, TAM, OTHERS, at=P_WL)),
        Claim(
            "in web server and Hadoop, short flows under TAM perform much like under the other schemes, the load being light (L282)",
            compare(SHORT_AFCT, TAM, OTHERS, at=points(WORKLOAD, LIGHT), within=SIMILAR, reading="within 25% of each other scheme"),
            concession=True,
        ),
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
            compare(LONG_AFCT, [Side(Spread(), {WORKLOAD: w}) for w in ("cachefollower", "webserver")], [Side(Spread(), {WORKLOAD: w}) for w in ("datamining", "websearch", "hadoop_parsimon_intracluster")], higher=True),
        ),
        Claim(
            "web server has the best long-flow AFCT of the five workloads (L278)",
            compare(LONG_AFCT, pairs=[(_wl("webserver", s), _wl(w, s)) for s in NAMES for w in WORKLOADS if w != "webserver"]),
        ),
        Claim("coarse-grained schemes (ECMP, LetFlow, Presto) favour long flows over fine-grained RPS and DRB (L280; long AFCT, every workload)", compare(LONG_AFCT, COARSE, FINE, at=P_WL)),
        Claim("TAM has the lowest long AFCT in every workload (L282, L290)", compare(LONG_AFCT, TAM, OTHERS, at=P_WL, reading=NO_FLOWLETS)),
        Claim("TAM has the lowest long tail FCT in every workload (L282, L290)", compare(LONG_P99, TAM, OTHERS, at=P_WL, reading=NO_FLOWLETS)),
    ),
    note="Load 0.5 of the senders' access links [G]: the paper gives no load for these runs (spec A20).",
)

P_LOAD = points(LOAD, LOADS)


def _overall(text: str, shape: Any) -> Claim:
    """A claim on "overall performance", read as the AFCT of all flows and also judged on their mean slowdown."""
    return Claim(text, shape, alternatives=(metric_reading(shape, SLOWDOWN, "mean slowdown of all flows"),))


FIG12 = Figure(
    "12",
    "five workloads mixed, vs load (10 x 10, 40 Gbps)",
    (Sweep("large.toml", ALL, grid={LOAD: LOADS}, set=(MIXED, "traffic.flows=50000"), scale_set=MIXED_SCALE, empty_start=LARGE_EMPTY),),
    (
        Panel("(a) short-flow AFCT", SHORT_AFCT, x=LOAD, xlabel="load"),
        Panel("(b) short-flow 99th-percentile FCT", SHORT_P99, x=LOAD, xlabel="load"),
        Panel("(c) long-flow AFCT", LONG_AFCT, x=LOAD, xlabel="load"),
        Panel("(d) long-flow 99th-percentile FCT", LONG_P99, x=LOAD, xlabel="load"),
        Panel("(e) overall AFCT", OVERALL, x=LOAD, xlabel="load"),
        Panel("[dclb] (e) read as the mean slowdown of all flows", SLOWDOWN, x=LOAD, xlabel="load"),
    ),
    (
        Claim("at low load TAM's short AFCT is near RPS's and DRB's (L294; load 0.2)", compare(SHORT_AFCT, TAM, FINE, at={LOAD: 0.2}, within=(0.75, 1.25), reading="within 25%")),
        Claim("as load grows TAM's short AFCT stays almost flat: it grows least of all schemes (L294-L296)", trend(SHORT_AFCT, TAM, LOAD, goes="least", than=OTHERS)),
        Claim("as load grows TAM's short tail FCT stays almost flat: it grows least of all schemes (L294-L296)", trend(SHORT_P99, TAM, LOAD, goes="least", than=OTHERS)),
        Claim("TAM has the lowest short AFCT at high load (L296; load 0.8)", compare(SHORT_AFCT, TAM, OTHERS, at={LOAD: 0.8})),
        Claim("TAM's long AFCT is the best at every load (L296)", compare(LONG_AFCT, TAM, OTHERS, at=P_LOAD, reading=NO_FLOWLETS)),
        Claim("TAM's long AFCT grows markedly with load (L296)", trend(LONG_AFCT, TAM, LOAD, reading=NO_FLOWLETS), concession=True),
        _overall("overall, TAM is better than every other scheme at every load (L296; AFCT of all flows)", compare(OVERALL, TAM, OTHERS, at=P_LOAD)),
        _overall("overall, TAM improves on the other schemes by more than 20% (L296; AFCT of all flows, load 0.2)", compare(OVERALL, TAM, OTHERS, at={LOAD: 0.2}, paper=-20.0, at_least=True)),
        _overall("overall, TAM improves on the other schemes by more than 20% (L296; AFCT of all flows, load 0.8)", compare(OVERALL, TAM, OTHERS, at={LOAD: 0.8}, paper=-20.0, at_least=True)),
    ),
    note=(
        "Fig. 12(e) 'overall performance' is undefined: read as the AFCT of all flows (spec A23), and also judged on "
        "the mean slowdown of all flows (the dclb panel beside it); a claim that holds only on the second is "
        "'metric-dependent'."
    ),
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
        "paper": Scale(seeds=5, stationary=True),
        # Five seeds everywhere (the microbenchmarks' results depend much on which hosts the random pairs share), a
        # stationary start; the 40 Gbps runs with fewer flows and an empty start (LARGE_SCALE, MIXED_SCALE,
        # LARGE_EMPTY).
        "quick": Scale(seeds=5, stationary=True),
        "ci": Scale(seeds=1, trim=True),
    },
)


# ---------------------------------------------------------------------------------------------------- sensitivity
# Issue #23 items 3-4 (dclb.reproduce.sensitivity): the headline claims, re-judged under the settings the paper does
# not state and under the other reading of TAM's marking. Kept apart from the claims above.

from ..sensitivity import Headline, Sensitivity, around, not_applicable, reading  # noqa: E402

SENSITIVITY = Sensitivity(
    headlines=(
        Headline(
            "12",
            (
                "by more than 20% (L296; AFCT of all flows, load 0.2)",
                "by more than 20% (L296; AFCT of all flows, load 0.8)",
                "TAM has the lowest short AFCT at high load",
            ),
            scheme=TAM,
            baseline="LetFlow",
            short=SHORT_AFCT,
            long=LONG_AFCT,
            at={LOAD: 0.8},
            why="the paper's large-scale result (L296): the five workloads mixed, TAM better overall than every scheme by more "
            "than 20% at low and high load, and the best short flows at high load. (The microbenchmark headline, 'up to 60%', "
            "reads every point of Figs. 6-9 and would cost ten times as much per variant.)",
        ),
    ),
    variants=(
        *around("tam", ["large.toml"], notes={"minimum RTO": "1 ms; 200 ms is NS2's default minimum RTO"}),
        not_applicable(
            "load basis: fabric",
            "10 senders per leaf and 10 uplinks of the same 40 Gbps: the senders' host links and the leaf uplinks have the same capacity, so the bases are the same load",
            group="load basis",
        ),
        not_applicable("hosts per leaf", "stated by the paper: 200 hosts on 10 leaves (L274)", group="hosts per leaf"),
        reading("lb.mark_scope=source_leaf", only=(TAM,), group="marking scope", note="only the packet's source leaf marks (the paper's 'the switch' read as the one that classifies), not every switch"),
    ),
)
