"""MDTLB (Electronics 2019): Figs. 10-15, FCT normalised to MDTLB and average throughput, per workload.

The setup follows the paper's Table 5 and the ns-3 simulator it names its parameters after (scenario file
``main.toml``, every choice commented there). The paper gives no numeric improvement anywhere, so every verdict
is ordinal ("MDTLB below X"); a normalised FCT above 1 means MDTLB is better. Short flows are below 100 KB and
long flows above 10 MB, as the simulator's result parser splits them; flows in between count only in "all".

MDTLB runs twice: as printed (``ecn_mode = "and"``: a path is bad only if its ECN fraction and its RTT are
both high) and judging by RTT alone (``rtt_only``, labelled). The paper's switches mark nothing (plain TCP, ECN
off), so under ``and`` no path is ever judged bad and MDTLB only places flows; docs/assumptions.md § MDTLB, item
15. Hermes runs with its MDTLB-paper preset (Table 5's values).

Not reproduced: Fig. 2 and Fig. 3 (motivation: congestion mismatch of oblivious spraying) need a UDP flow
beside a DCTCP one on a 3 x 2 fabric (Fig. 2) and weighted Presto (Fig. 3), which dclb does not have; the
paper's main claims are all in Figs. 10-15.
"""

from __future__ import annotations

from ...reproduce import metrics as m
from ...reproduce import verdict as v
from ...reproduce.spec import Claim, Figure, Panel, Paper, Scale, Series, Sweep

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
    return Sweep("main.toml", SERIES, grid={LOAD: LOADS}, set=WORKLOADS[workload])


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


C1 = _beats("MDTLB has a lower FCT than ECMP at every load, all flows (L317)", ALL, ["ECMP"], LOADS)
FIGURES = (
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
    citation="Electronics 2019; full text in the project's shared papers (mdtlb.txt), evaluation §5 (L230-L338).",
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
        "ci": Scale(seeds=1, set=("traffic.flows=12",), trim=True),
    },
)
