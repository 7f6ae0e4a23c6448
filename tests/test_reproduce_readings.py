"""Metrics the papers leave undefined, read both ways, and the papers' own absolute numbers beside dclb's.

Crafted flow tables check the metrics (a cancelled flow counts as a miss in one reading and not in the other; the
counts behind the rates); crafted frames check that a claim holding on one reading only gets the reason that names
it ("metric-dependent" for a metric, "setting-dependent" for MDTLB judging by RTT alone), and that a paper's
absolute number is judged within a factor 2 with a verdict line that says what a larger gap means.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dclb.reproduce import metrics as m
from dclb.reproduce.claims import all_of, compare, level, rank, trend
from dclb.reproduce.papers import common, dar, lbt, mdtlb, tam, tr
from dclb.reproduce.spec import Metric
from dclb.reproduce.verdict import Outcome, Reason, judge_claim

LOAD = "traffic.load"
SEED_FACTOR = [1.0, 1.4, 0.8, 1.2, 0.9]


def _frame(values: dict[tuple[str, float], dict[str, list[float]]], shared: bool = True) -> pd.DataFrame:
    """One row per (series, load, seed); each column's value times the seed's factor (flows shared per seed), or
    as given (``shared=False``: an absolute level)."""
    rows = []
    for (series, load), cols in values.items():
        n = min(len(v) for v in cols.values())
        for i in range(n):
            rows.append({"series": series, LOAD: load, "seed": i + 1, "run_id": f"{series}-{load}-{i}", "status": "completed", **{k: v[i] * (SEED_FACTOR[i] if shared else 1.0) for k, v in cols.items()}})
    return pd.DataFrame(rows)


def _claim(fig, start):
    return next(c for c in fig.claims if c.text.startswith(start))


# ---------------------------------------------------------------------------------------------------------------
# Metrics


def _deadline_flows():
    base = {"transport": "dctcp", "size_bytes": 10_000}
    rows = [
        {"state": "completed", "deadline_us": 100.0, "deadline_met": True},  # met
        {"state": "completed", "deadline_us": 100.0, "deadline_met": False},  # late
        {"state": "cancelled", "deadline_us": 100.0, "deadline_met": False},  # given up by the network
        {"state": "unfinished", "deadline_us": 100.0, "deadline_met": False},  # not done by the end: late
        {"state": "completed", "deadline_us": None, "deadline_met": None, "size_bytes": 1_000_000},  # no deadline
    ]
    return pd.DataFrame([{**base, **r} for r in rows])


def test_a_cancelled_flow_is_a_miss_in_one_reading_and_left_out_in_the_other():
    f = _deadline_flows()
    # Late only: the late and the unfinished flow over the three deadline flows not cancelled.
    assert m.deadline_late_rate().flows(f) == pytest.approx(2 / 3)
    assert m.deadline_count("late", "late").flows(f) == 2
    assert m.deadline_count("cancelled", "cancelled").flows(f) == 1
    # The other reading (the engine's deadline_miss_rate): three misses of four.
    missed = (~f["deadline_met"].dropna().astype(bool)).sum()
    assert missed / f["deadline_us"].notna().sum() == 0.75 == (m.deadline_count("late", "").flows(f) + m.deadline_count("cancelled", "").flows(f)) / 4
    # Without cancellations the two readings agree; with nothing but cancellations late only has nothing to rate.
    kept = f[f["state"] != "cancelled"]
    assert m.deadline_late_rate().flows(kept) == pytest.approx(2 / 3)
    assert math.isnan(m.deadline_late_rate().flows(f[f["state"] == "cancelled"]))
    assert math.isnan(m.deadline_late_rate().flows(f[f["deadline_us"].isna()]))
    with pytest.raises(ValueError, match="which must be"):
        m.deadline_count("missed", "x")


def test_miss_counts_stand_beside_the_miss_rates():
    # LBT's slack deadline (2 x ideal FCT): the count behind the rate, best-effort flows left out.
    rows = [
        (10_000, 100.0, 60.0, "completed", False),  # met
        (50_000, 300.0, 100.0, "completed", False),  # missed
        (90_000, None, 100.0, "unfinished", False),  # missed
        (20_000, 9_000.0, 60.0, "completed", True),  # best-effort: left out
    ]
    f = pd.DataFrame([{"size_bytes": s, "fct_us": fct, "ideal_fct_us": i, "state": st, "transport": "dctcp", "best_effort": be} for s, fct, i, st, be in rows])
    assert lbt.MISSES.flows(f) == 2 and lbt.MISS.flows(f) == pytest.approx(2 / 3)
    # Every figure that draws a miss rate draws its count too (so the CSV has both columns).
    for fig in (dar.FIG2, dar.FIG4, dar.FIG5, dar.FIG6, dar.FIG6A_4A):
        keys = [p.y.key for p in fig.panels]
        assert dar.MISS.key in keys and dar.MISSES.key in keys, fig.id
    assert lbt.MISSES.key in [p.y.key for p in lbt.PAPER.figure("3").panels]
    assert dar.LATE.key in [p.y.key for p in dar.FIG4.panels] and tam.SLOWDOWN.key in [p.y.key for p in tam.FIG12.panels]
    assert m.DEADLINE_MISSES.summary == "deadline_misses" and m.MEAN_SLOWDOWN.summary == "mean_slowdown"


# ---------------------------------------------------------------------------------------------------------------
# Claims that hold on one reading only


def test_dar_miss_claim_turns_metric_dependent_when_only_late_only_holds():
    """DAR cancels flows that would have made it: counted as misses it misses more than the baselines; left out, it
    misses none. The claim "DAR has the lowest miss rate" then fails as shipped and holds late only."""
    claim = _claim(dar.FIG4, "DAR has the lowest miss rate at every load")
    assert [a.kind for a in claim.alternatives] == ["metric"] and claim.alternatives[0].label == dar.LATE_WORDS
    values = {}
    for load in dar.LOADS:
        values[("DAR", load)] = {"deadline_miss_rate": [0.40, 0.41, 0.39], "deadline_late_rate": [0.0, 0.0, 0.0]}
        for b in dar.BASELINES:
            values[(b, load)] = {"deadline_miss_rate": [0.30, 0.31, 0.29], "deadline_late_rate": [0.30, 0.31, 0.29]}
    j = judge_claim(claim, _frame(values))
    assert j.outcome is Outcome.OPPOSITE and j.reason is Reason.METRIC
    assert j.detail == f"holds on {dar.LATE_WORDS}"
    # Late only no better: the claim fails under both readings.
    for load in dar.LOADS:
        values[("DAR", load)]["deadline_late_rate"] = [0.40, 0.41, 0.39]
    assert judge_claim(claim, _frame(values)).reason is Reason.FAILS
    # Claims that do not read the miss rate carry no miss reading.
    assert _claim(dar.FIG4, "at high load DAR has the lowest AFCT").alternatives == ()


def test_tam_overall_performance_turns_metric_dependent_on_the_mean_slowdown():
    claim = _claim(tam.FIG12, "overall, TAM is better than every other scheme at every load")
    values = {}
    for load in tam.LOADS:
        values[(tam.TAM, load)] = {"overall_afct_ms": [10.0, 10.1, 9.9], "mean_slowdown": [2.0, 2.02, 1.98]}
        for o in tam.OTHERS:
            values[(o, load)] = {"overall_afct_ms": [9.0, 9.1, 8.9], "mean_slowdown": [3.0, 3.03, 2.97]}
    j = judge_claim(claim, _frame(values))
    assert j.outcome is Outcome.OPPOSITE and j.reason is Reason.METRIC and j.detail == "holds on mean slowdown of all flows"
    # Both metrics for TAM: holds as shipped.
    for load in tam.LOADS:
        values[(tam.TAM, load)]["overall_afct_ms"] = [8.0, 8.1, 7.9]
    assert judge_claim(claim, _frame(values)).reason is Reason.HOLDS


def test_mdtlb_claims_are_also_judged_on_mdtlb_by_rtt_alone_and_say_it_acts_as_hermes():
    claim = _claim(mdtlb.FIGURES[3], "web search: MDTLB beats ECMP, Hermes")
    assert "Hermes" in claim.check.reading and "never moves a flow for congestion" in claim.check.reading
    assert _claim(mdtlb.FIGURES[2], "MDTLB has a lower FCT than ECMP").check.reading == ""  # no Hermes in it
    key = mdtlb.ALL.key
    values = {}
    for load in mdtlb.LOADS:
        values[(mdtlb.MDTLB, load)] = {key: [10.0, 10.1, 9.9]}
        values[(mdtlb.RTT_ONLY, load)] = {key: [7.0, 7.1, 6.9]}
        for o in ("ECMP", "Hermes", "Clove", "LetFlow", "CONGA"):
            values[(o, load)] = {key: [9.0, 9.1, 8.9]}
    j = judge_claim(claim, _frame(values))
    assert j.outcome is Outcome.OPPOSITE and j.reason is Reason.SETTING
    assert j.detail == "holds with the reading MDTLB judging by RTT alone (lb.ecn_mode = rtt_only)"
    # The throughput ranks are among the paper's nine schemes, not the RTT-only variant (a dclb reading).
    ranked = _claim(mdtlb.FIGURES[5], "general: MDTLB among the top 3").check
    assert mdtlb.RTT_ONLY not in ranked.among and len(ranked.among) == 9


def test_a_shape_swaps_its_metric_or_series_and_nothing_else():
    a, b = Metric("a_ms", "a (ms)", summary="a"), Metric("b_ms", "b (ms)", summary="b")
    shapes = [compare(a, "X", ["Y", "Z"], at={LOAD: 0.5}), rank(a, "X", among=["X", "Y"]), trend(a, "X", LOAD, 0.1, 0.5, than=["X"]), level(a, "X", within=(0, 1))]
    for s in shapes:
        swapped = common.on_metric(s, b)
        assert swapped.metrics() == [b] and type(swapped) is type(s)
        moved = common.on_series(s, "X", "X2")
        assert moved.metrics() == [a] and "X" not in repr(moved).replace("X2", "")
    both = common.on_metric(all_of(*shapes[:2]), b)
    assert both.metrics() == [b, b]
    assert common.on_series(compare(a, "Y", "Z"), "X", "X2") == compare(a, "Y", "Z")


# ---------------------------------------------------------------------------------------------------------------
# The papers' absolute numbers


def test_paper_number_is_judged_within_a_factor_2_and_names_the_setup():
    claim = _claim(dar.FIG2, "the paper's absolute number: ECMP misses 59%")
    close = _frame({("ECMP", 0.7): {"deadline_miss_rate": [0.50, 0.55, 0.52]}}, shared=False)
    v = claim.check(close)
    assert v.outcome is Outcome.REPRODUCED and v.paper == "0.59"
    far = _frame({("ECMP", 0.7): {"deadline_miss_rate": [0.10, 0.12, 0.11]}}, shared=False)
    v = claim.check(far)
    assert v.outcome is Outcome.OPPOSITE
    assert "points at the setup (the deadlines, which the paper does not give" in v.text and "in [0.295, 1]" in v.text
    # The band is capped at what the metric can be; a gap inside the factor but straddling its edge is noise.
    assert common.paper_number(m.DEADLINE_MISS, "ECMP", None, 0.6, setup="s", cap=1.0).band.hi == 1.0
    edge = _frame({("ECMP", 0.7): {"deadline_miss_rate": [0.2, 0.4, 0.3]}}, shared=False)
    assert claim.check(edge).outcome is Outcome.INDISTINGUISHABLE


def test_every_absolute_number_claim_reads_a_grid_point_its_figure_runs():
    """The absolute-number claims are on the figures whose runs hold the point the paper states."""
    found = {
        "lbt": [c for f in lbt.PAPER.figures for c in f.claims if c.text.startswith("the paper's absolute number")],
        "dar": [c for f in dar.PAPER.figures for c in f.claims if c.text.startswith("the paper's absolute number")],
        "tr": [c for f in tr.PAPER.figures for c in f.claims if c.text.startswith("the paper's absolute number")],
        "mdtlb": [c for f in mdtlb.PAPER.figures for c in f.claims if c.text.startswith("the paper's absolute number")],
    }
    assert {k: len(v) for k, v in found.items()} == {"lbt": 2, "dar": 3, "tr": 1, "mdtlb": 1}
    seven = _claim(lbt.PAPER.figure("5"), "the paper's absolute number: at 7 paths LBT's")
    assert seven.check.points == ({lbt.WL: "webserver", lbt.SPINES: 7},) and seven.check.paper == 1.0
    assert seven.check.band.lo == 0.5 and seven.check.band.hi == 2.0
