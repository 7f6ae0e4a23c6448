"""MDTLB (Electronics 2019): Figs. 10-15, FCT normalised to MDTLB and average throughput, per workload.

The setup follows the paper's Table 5 and the ns-3 simulator it names its parameters after (scenario file
``main.toml``, every choice commented there). The paper gives no numeric improvement anywhere, so every verdict
is ordinal ("MDTLB below X"); a normalised FCT above 1 means MDTLB is better. Short flows are below 100 KB and
long flows above 10 MB, as the simulator's result parser splits them; flows in between count only in "all".

MDTLB runs twice: as printed (``ecn_mode = "and"``: a path is bad only if its ECN fraction and its RTT are
both high) and judging by RTT alone (``rtt_only``, labelled). The paper's switches mark nothing (plain TCP, ECN
off), so under ``and`` no path is ever judged bad and MDTLB only places flows; docs/assumptions.md § MDTLB, item
15. Hermes runs with its MDTLB-paper preset (Table 5's values).

Fig. 2 (motivation, ``mismatch.toml``): a long-lived DCTCP flow A sprayed over two spines while a constant
8 Gbps UDP flow B, confined to spine 0 by a failed link, fills that path; the queue of spine 0 towards the
receivers' leaf and A's throughput over time, under the paper's Presto and DRB (MDTLB added as a labelled
extension). Not reproduced: Fig. 3 (heterogeneous path capacities) needs weighted Presto (flowcells 1:10), which
dclb does not have.
"""

from __future__ import annotations

import math

import pandas as pd

from ...reproduce import metrics as m
from ...reproduce import verdict as v
from ...reproduce.spec import Claim, Figure, Metric, Panel, Paper, Scale, Series, Sweep, Verdict

LOADS = [0.3, 0.5, 0.7, 0.9]
MDTLB = "MDTLB"
RESEQ = "transport.reseq_timeout_us=100"

SERIES = (
    Series(MDTLB, ("lb.scheme=mdtlb",)),
    Series("MDTLB (RTT only)", ("lb.scheme=mdtlb", "lb.ecn_mode=rtt_only")),
    Series("Hermes", ("lb.scheme=hermes", "lb.preset=mdtlb")),
    Series("CONGA", ("lb.scheme=conga",)),
    Series("Presto", ("lb.scheme=presto", RESEQ)),
    Series("DRB", ("lb.scheme=drb", RESEQ)),
    Series("ECMP", ("lb.scheme=ecmp",)),
    Series("Clove", ("lb.scheme=clove",)),
    Series("DRILL", ("lb.scheme=drill",)),
    Series("LetFlow", ("lb.scheme=letflow",)),
)
OTHERS = [s.label for s in SERIES if not s.label.startswith("MDTLB")]

WORKLOADS = {
    "general": ('traffic.workload={datamining_conga_vl2 = 0.5, websearch = 0.5}',),
    "web search": ("traffic.workload=websearch",),
    "data mining": ("traffic.workload=datamining_conga_vl2",),
}

SHORT = m.fct_mean(None, 100e3, "short-flow (< 100 KB) mean FCT")
LONG = m.fct_mean(10e6, None, "long-flow (> 10 MB) mean FCT")
ALL = m.fct_mean(None, None, "mean FCT")
THROUGHPUT = m.goodput_mean(None, None, "average throughput (Gbps)")
LOAD = "traffic.load"


def _sweep(workload: str) -> Sweep:
    return Sweep("main.toml", SERIES, grid={LOAD: LOADS}, set=WORKLOADS[workload], scale_set={"ci": ("traffic.flows=12",)})


def _fct_figure(fig_id: str, workload: str, claims: tuple[Claim, ...]) -> Figure:
    panels = tuple(
        Panel(f"({tag}) {what}", metric, x=LOAD, kind="bar", normalize_to=MDTLB, xlabel="load")
        for tag, what, metric in (("a", "short flows", SHORT), ("b", "long flows", LONG), ("c", "all flows", ALL))
    )
    return Figure(fig_id, f"FCT normalised to MDTLB, {workload}", (_sweep(workload),), panels, claims)


def _throughput_figure(fig_id: str, workload: str, claims: tuple[Claim, ...]) -> Figure:
    panel = Panel(f"average throughput, {workload}", THROUGHPUT, x=LOAD, kind="bar", xlabel="load")
    return Figure(fig_id, f"average throughput, {workload}", (_sweep(workload),), (panel,), claims)


def _beats(subject: str, metric: m.Metric, others: list[str], loads: list[float], higher: bool = False) -> Claim:
    return Claim(subject, lambda f: v.ordering(f, subject.split(" (")[0], metric.key, MDTLB, others, v.points(LOAD, loads), higher_is_better=higher))


# Fig. 2: the queue of spine 0 towards leaf 2 (port 20 of mismatch.toml) and flow A's throughput.
QUEUE_PORT, FLOW_A = 20, 0


def _queue_series(samples: pd.DataFrame) -> pd.DataFrame:
    q = samples[(samples["kind"] == "port") & (samples["id"] == QUEUE_PORT)].sort_values("time_us")
    return pd.DataFrame({"time_us": q["time_us"], "value": q["queue_bytes"] / 1e3})


def _throughput_series(samples: pd.DataFrame) -> pd.DataFrame:
    """A's goodput (Gbps) over 100 us windows, from its delivered bytes sampled every 10 us."""
    f = samples[(samples["kind"] == "flow") & (samples["id"] == FLOW_A)].sort_values("time_us")
    f = f[(f["time_us"] % 100.0).abs() < 1e-6]
    gbps = f["bytes"].diff() * 8 / (f["time_us"].diff() * 1e3)
    return pd.DataFrame({"time_us": f["time_us"], "value": gbps}).dropna()


QUEUE_TS = Metric("queue_s0_l2", "queue at S0 -> L2 (KB)", samples=_queue_series)
A_TS = Metric("a_gbps_ts", "flow A throughput (Gbps)", samples=_throughput_series)
QUEUE_MEAN = Metric("queue_s0_l2_mean", "mean queue at S0 -> L2 (KB)", run=lambda t: float(_queue_series(t.samples)["value"].mean()))
A_MEAN = Metric("a_gbps_mean", "flow A mean throughput (Gbps)", run=lambda t: float(_throughput_series(t.samples)["value"].mean()))
MISMATCH_SERIES = (
    Series("Presto", ("lb.scheme=presto",)),
    Series("DRB", ("lb.scheme=drb",)),
    Series("MDTLB (extension)", ("lb.scheme=mdtlb",)),
)


def _mismatch_throughput(frame: pd.DataFrame) -> Verdict:
    vals = {s: v.mean_of(frame, A_MEAN.key, s) for s in ("Presto", "DRB")}
    if not all(math.isfinite(x) for x in vals.values()):
        return Verdict("flow A's throughput: dclb: no data", None)
    text = ", ".join(f"{s} {x:.2f} Gbps" for s, x in vals.items())
    # Spread evenly over S0 (8 of 10 Gbps taken by B) and S1, A can take at most 2 x (10 - 8) = 4 Gbps although
    # S1 alone could carry 10: below that bound is the mismatch the paper shows.
    return Verdict(f"flow A: paper about 1 Gbps; dclb {text} (equal-split bound 4 Gbps, unmismatched 12 Gbps)", all(x < 4.0 for x in vals.values()))


def _mismatch_queue(frame: pd.DataFrame) -> Verdict:
    vals = {s: v.mean_of(frame, QUEUE_MEAN.key, s) for s in ("Presto", "DRB")}
    if not all(math.isfinite(x) for x in vals.values()):
        return Verdict("queue at S0 -> L2: dclb: no data", None)
    text = ", ".join(f"{s} {x:.0f} KB" for s, x in vals.items())
    return Verdict(f"queue at S0 -> L2, mean: paper about 100 KB; dclb {text} (holds within 50-200 KB)", all(50.0 <= x <= 200.0 for x in vals.values()))


FIG2 = Figure(
    "2",
    "congestion mismatch after a link failure (motivation)",
    (Sweep("mismatch.toml", MISMATCH_SERIES, scale_set={"ci": ("run.horizon_us=2000",)}),),
    (
        Panel("(b) queue of spine 0 towards leaf 2", QUEUE_TS, kind="timeseries"),
        Panel("(c) throughput of flow A, 100 us windows", A_TS, kind="timeseries"),
        Panel("flow A, mean over the run", A_MEAN, kind="bar"),
        Panel("queue at S0 -> L2, mean over the run", QUEUE_MEAN, kind="bar"),
    ),
    (
        Claim("oblivious spraying (Presto, DRB) leaves flow A about 1 Gbps although another path is free (L59-L61)", _mismatch_throughput),
        Claim("the queue at S0 -> L2 is about 100 KB and oscillates (L59)", _mismatch_queue),
    ),
    note="The failed link is L1-S1 (the printed L0-S1 leaves A one path; spec §6.1); B's rate 8 Gbps is a guess. MDTLB is not in the paper's figure.",
)

C1 = _beats("MDTLB has a lower FCT than ECMP at every load, all flows (L317)", ALL, ["ECMP"], LOADS)
FIGURES = (
    FIG2,
    _fct_figure(
        "10",
        "general",
        (
            C1,
            _beats("at 80-90% load MDTLB beats Clove and Hermes for short, long and all flows (L317; all flows, load 0.9)", ALL, ["Clove", "Hermes"], [0.9]),
            _beats("at loads 0.3-0.5 MDTLB beats LetFlow, DRILL, Presto and CONGA (L317; all flows)", ALL, ["LetFlow", "DRILL", "Presto", "CONGA"], [0.3, 0.5]),
            _beats("at loads 0.7-0.9 MDTLB beats every other scheme (L317; all flows)", ALL, OTHERS, [0.7, 0.9]),
            _beats("long flows: MDTLB beats every other scheme at 0.7-0.9 (L317, its largest advantage)", LONG, OTHERS, [0.7, 0.9]),
        ),
    ),
    _fct_figure(
        "11",
        "web search",
        (_beats("web search: MDTLB beats ECMP, Hermes, Clove, LetFlow and CONGA (L323; all flows, every load)", ALL, ["ECMP", "Hermes", "Clove", "LetFlow", "CONGA"], LOADS),),
    ),
    _fct_figure(
        "12",
        "data mining",
        (
            _beats("data mining: MDTLB beats Clove, Hermes, DRILL and LetFlow (L327; all flows, every load)", ALL, ["Clove", "Hermes", "DRILL", "LetFlow"], LOADS),
            _beats("data mining, long flows: MDTLB beats all 8 other schemes (L327; every load)", LONG, OTHERS, LOADS),
        ),
    ),
    _throughput_figure(
        "13", "general", (Claim("general: MDTLB among the top 3 throughputs (L329; load 0.9)", lambda f: v.rank(f, "general, load 0.9", THROUGHPUT.key, MDTLB, 3, {LOAD: 0.9}, higher_is_better=True)),)
    ),
    _throughput_figure(
        "14", "web search", (Claim("web search: MDTLB in the top 5 throughputs (L329; load 0.9)", lambda f: v.rank(f, "web search, load 0.9", THROUGHPUT.key, MDTLB, 5, {LOAD: 0.9}, higher_is_better=True)),)
    ),
    _throughput_figure(
        "15",
        "data mining",
        (Claim("data mining: MDTLB has the highest throughput (L329, L369; load 0.9)", lambda f: v.rank(f, "data mining, load 0.9", THROUGHPUT.key, MDTLB, 1, {LOAD: 0.9}, higher_is_better=True)),),
    ),
)

PAPER = Paper(
    key="mdtlb",
    title="MDTLB: multi-level dynamic traffic load balancing (Electronics 2019)",
    citation="Memon, Huang, Saajid, Khuda Bux, Saleem, Aljeroudi, Novel Multi-Level Dynamic Traffic Load-Balancing Protocol "
    "for Data Center, Electronics 2019; evaluation §5 (L230-L338; line numbers: docs/references.md).",
    setup=(
        "Symmetric 4 x 4 leaf-spine, 8 hosts per leaf (2:1 oversubscription), 10 Gbps links of 10 us; 600-packet "
        "drop-tail buffers, no ECN marking. Poisson arrivals between hosts on different leaves for 0.1 s at loads "
        "0.3-0.9 of the leaves' uplink capacity; general (50/50 by flow count), web search (DCTCP_CDF) and data "
        "mining (VL2_CDF, mean 12.66 MB). Baselines with the simulator's published settings (flowlets 500 us, "
        "Presto 64 KB cells, Presto and DRB with a receive buffer); Hermes with the paper's Table 5 values."
    ),
    transport=(
        "TCP NewReno as in ns-3 (Table 5 'Tcp'): three-way handshake, no SACK, MSS 1400 B, minimum RTO 5 ms, "
        "every packet ACKed; no ECN, so DCTCP is not involved. Queues counted in packets as ns-3's are."
    ),
    figures=FIGURES,
    scales={
        # The paper's own arrival window (0.1 s) with the five seeds its few data-mining flows need (spec §6.2).
        "paper": Scale(seeds=5),
        # The paper's runs are small (about 150 data-mining flows at load 0.9): quick keeps them, with two seeds.
        "quick": Scale(seeds=2),
        "ci": Scale(seeds=1, trim=True),
    },
)
