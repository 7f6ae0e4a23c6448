"""The verdict rule of ``dclb reproduce`` and its reasons, on crafted frames: each outcome and each reason category
is produced by changing the data, and breaks when the data change back.

A frame here is what :func:`dclb.reproduce.data.figure_frame` gives a figure: one row per series, grid point and
seed. Schemes share flows per seed, so the crafted values share a per-seed factor (the "flows" of that seed) that
paired comparisons cancel.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dclb.reproduce.claims import Ratio, Side, Spread, all_of, any_of, chain, compare, level, not_testable, points, rank, trend
from dclb.reproduce.report import SUMMARY_COLUMNS, write_summary_csv
from dclb.reproduce.spec import Claim, Metric, Reading
from dclb.reproduce.verdict import (
    MIN_SEEDS,
    REPRODUCED_FRACTION,
    Alternative,
    Effect,
    Number,
    Outcome,
    Reason,
    judge_claim,
    judge_effect,
    paired,
)

LOAD = "traffic.load"
AFCT = Metric("afct_ms", "AFCT (ms)", summary="afct")
P99 = Metric("p99_ms", "p99 FCT (ms)", summary="p99")
MISS = Metric("miss_rate", "miss rate", summary="miss", scale="difference")
SEED_FACTOR = [1.0, 1.6, 0.7, 1.3, 0.9]  # the flows of each seed, shared by every scheme


def frame(values: dict[tuple[str, float], list[float]], column: str = "afct_ms", **more: dict[tuple[str, float], list[float]]) -> pd.DataFrame:
    """One row per (series, load, seed) with ``column`` = value x the seed's factor."""
    rows = []
    for (series, load), ys in values.items():
        for i, y in enumerate(ys):
            row = {"series": series, LOAD: load, "seed": i + 1, "run_id": f"{series}-{load}-{i}", "status": "completed", column: y * SEED_FACTOR[i]}
            for other, table in more.items():
                row[other] = table[(series, load)][i] * SEED_FACTOR[i]
            rows.append(row)
    return pd.DataFrame(rows)


def at(load: float) -> dict[str, float]:
    return {LOAD: load}


# ---------------------------------------------------------------------------------------------------------------
# The rule: effects and outcomes


def test_paired_effect_is_the_mean_log_ratio_over_seeds_with_a_t_interval():
    a = {(1,): 5.0, (2,): 8.0, (3,): 3.5}
    b = {(1,): 10.0, (2,): 16.0, (3,): 7.0}
    e = paired(a, b)
    assert e.n == 3 and e.mean == pytest.approx(math.log(0.5)) and e.half == pytest.approx(0.0)
    assert e.percent()[0] == pytest.approx(-50.0)
    noisy = paired({(1,): 5.0, (2,): 9.0, (3,): 3.0}, b)
    assert noisy.half > 0 and noisy.lo < noisy.mean < noisy.hi
    # The t quantile with 2 degrees of freedom (4.30) sets the interval: mean ± 4.30 s / √3.
    d = [math.log(5 / 10), math.log(9 / 16), math.log(3 / 7)]
    m = sum(d) / 3
    s = math.sqrt(sum((x - m) ** 2 for x in d) / 2)
    assert noisy.half == pytest.approx(4.302652729911275 * s / math.sqrt(3))
    # A zero in a pair turns the comparison into a difference, over the second series' mean.
    z = paired({(1,): 0.0, (2,): 0.0, (3,): 0.0}, {(1,): 0.1, (2,): 0.2, (3,): 0.3})
    assert z.scale == "difference" and z.percent()[0] == pytest.approx(-100.0)


def test_each_outcome_comes_from_the_data():
    base = {("B", 0.5): [10.0, 10.0, 10.0]}
    claim = compare(AFCT, "A", "B", at=at(0.5), paper=-33.0)
    # reproduced: -40%, tight
    assert claim(frame({("A", 0.5): [6.0, 6.1, 5.9], **base})).outcome is Outcome.REPRODUCED
    # same direction, much smaller: -2% against the paper's -33% (tight: significant, but a tenth of it)
    small = claim(frame({("A", 0.5): [9.8, 9.79, 9.81], **base}))
    assert small.outcome is Outcome.SMALLER and "-2.0%" in small.text and "paper -33.0%" in small.text
    # indistinguishable: a gap inside the noise of the seeds
    noise = claim(frame({("A", 0.5): [9.0, 11.5, 9.6], **base}))
    assert noise.outcome is Outcome.INDISTINGUISHABLE and noise.effect.lo < 0 < noise.effect.hi
    # opposite: significantly the other way
    assert claim(frame({("A", 0.5): [12.0, 12.2, 11.9], **base})).outcome is Outcome.OPPOSITE
    # cannot tell: no data at the point, or fewer than MIN_SEEDS seeds
    assert claim(frame({("A", 0.7): [6.0, 6.0, 6.0], ("B", 0.7): [10.0] * 3})).outcome is Outcome.CANNOT_TELL
    two = claim(frame({("A", 0.5): [6.0, 6.0], ("B", 0.5): [10.0, 10.0]}))
    assert two.outcome is Outcome.CANNOT_TELL and "noise unknown with 2 seeds" in two.text and two.seeds == 2
    assert MIN_SEEDS == 3


def test_the_size_rule_half_of_the_paper_or_all_of_it_for_more_than():
    """Reproduced from half of the paper's number on (the smaller end of a range); "more than p%" needs all of p."""
    def tight(ratio: float) -> Effect:
        return Effect.of([math.log(ratio * f) for f in (0.99, 1.0, 1.01)], "log ratio")

    assert judge_effect(tight(0.83), Number(-33.0, -33.0)) is Outcome.REPRODUCED  # -17% of -33%: over half
    assert judge_effect(tight(0.85), Number(-33.0, -33.0)) is Outcome.SMALLER  # -15%: under half
    assert judge_effect(tight(0.70), Number(-55.9, -65.4)) is Outcome.REPRODUCED  # -30% of a range from -55.9%
    assert judge_effect(tight(0.75), Number(-55.9, -65.4)) is Outcome.SMALLER
    assert judge_effect(tight(0.75), Number(-20.0, -20.0, at_least=True)) is Outcome.REPRODUCED
    assert judge_effect(tight(0.85), Number(-20.0, -20.0, at_least=True)) is Outcome.SMALLER
    assert judge_effect(tight(1.30), Number(40.0, 40.0)) is Outcome.REPRODUCED  # an increase, +30% of +40%
    assert REPRODUCED_FRACTION == 0.5


def test_pairing_removes_the_noise_the_flows_of_a_seed_cause_in_every_scheme():
    """The per-seed factors vary the values by 0.7x-1.6x, the same for both series: paired, a steady -10% is
    significant. Unpaired (seeds shuffled so that no two values share flows) the same means are indistinguishable."""
    f = frame({("A", 0.5): [9.0, 9.0, 9.0], ("B", 0.5): [10.0, 10.0, 10.0]})
    claim = compare(AFCT, "A", "B", at=at(0.5))
    assert claim(f).outcome is Outcome.REPRODUCED
    shuffled = f.copy()
    shuffled.loc[shuffled["series"] == "A", "seed"] = [2, 3, 1]
    assert claim(shuffled).outcome is Outcome.INDISTINGUISHABLE


def test_ordinal_claims_judge_every_pair_and_say_how_many_missed():
    f = frame(
        {
            ("A", 0.1): [5.0, 5.0, 5.0],
            ("B", 0.1): [10.0, 10.0, 10.0],
            ("C", 0.1): [5.1, 4.8, 5.3],  # within noise of A
            ("A", 0.7): [5.0, 5.0, 5.0],
            ("B", 0.7): [10.0, 10.0, 10.0],
            ("C", 0.7): [4.0, 4.0, 4.0],  # better than A: opposite
        }
    )
    out = compare(AFCT, "A", ["B", "C"], at=points(LOAD, [0.1, 0.7]))(f)
    assert out.outcome is Outcome.OPPOSITE
    assert "2 of 4 pairs significantly so, 1 indistinguishable, 1 opposite" in out.text and "worst A vs C at load 0.7" in out.text
    assert compare(AFCT, "A", "B", at=points(LOAD, [0.1, 0.7]))(f).outcome is Outcome.REPRODUCED
    assert compare(AFCT, "A", ["B", "C"], at=at(0.1))(f).outcome is Outcome.INDISTINGUISHABLE
    # a chain: A below C below B at load 0.7
    assert compare(AFCT, pairs=chain("C", "A", "B"), at=at(0.7))(f).outcome is Outcome.REPRODUCED
    assert compare(AFCT, pairs=chain("A", "C", "B"), at=at(0.7))(f).outcome is Outcome.OPPOSITE
    # higher is better
    assert compare(AFCT, "B", ["A", "C"], at=at(0.7), higher=True)(f).outcome is Outcome.REPRODUCED


def test_best_case_and_mean_over_points():
    f = frame({("A", 0.1): [8.0, 8.0, 8.0], ("A", 0.7): [4.0, 4.0, 4.0], ("B", 0.1): [10.0] * 3, ("B", 0.7): [10.0] * 3})
    best = compare(AFCT, "A", "B", at=points(LOAD, [0.1, 0.7]), paper=-60.0, best=True)(f)
    assert best.outcome is Outcome.REPRODUCED and "best case A vs B at load 0.7" in best.text and "-60.0%" in best.text
    mean = compare(AFCT, "A", "B", at=points(LOAD, [0.1, 0.7]), paper=-40.0, mean=True)(f)
    assert mean.effect.percent()[0] == pytest.approx(100 * (math.sqrt(0.8 * 0.4) - 1))  # geometric mean of -20% and -60%
    assert mean.outcome is Outcome.REPRODUCED
    near = compare(AFCT, "A", "B", at=at(0.1), within=(0.75, 1.25))(f)
    assert near.outcome is Outcome.REPRODUCED
    assert compare(AFCT, "A", "B", at=at(0.7), within=(0.75, 1.25))(f).outcome is Outcome.OPPOSITE


def test_rank_trend_level_and_their_bands():
    f = frame(
        {
            ("A", 0.1): [5.0, 5.0, 5.0],
            ("A", 0.7): [5.5, 5.4, 5.6],
            ("B", 0.1): [6.0, 6.0, 6.0],
            ("B", 0.7): [12.0, 12.0, 12.0],
            ("C", 0.1): [9.0, 9.0, 9.0],
            ("C", 0.7): [18.0, 19.0, 17.0],
        }
    )
    assert rank(AFCT, "A", at=at(0.7))(f).outcome is Outcome.REPRODUCED
    assert rank(AFCT, "B", at=at(0.7))(f).outcome is Outcome.OPPOSITE
    assert rank(AFCT, "B", 2, at=at(0.7))(f).outcome is Outcome.REPRODUCED
    assert rank(AFCT, "C", at=at(0.7), top="highest")(f).outcome is Outcome.REPRODUCED
    assert trend(AFCT, ["B", "C"], LOAD)(f).outcome is Outcome.REPRODUCED
    assert trend(AFCT, None, LOAD, goes="down")(f).outcome is Outcome.OPPOSITE
    assert trend(AFCT, "A", LOAD, goes="least")(f).outcome is Outcome.REPRODUCED
    assert trend(AFCT, "C", LOAD, goes="least")(f).outcome is not Outcome.REPRODUCED
    assert trend(AFCT, ["B"], LOAD, paper=100.0, at_least=True)(f).outcome is Outcome.REPRODUCED  # doubles
    # a series with a zero at one end: both growths compare as differences, not a log ratio against a difference
    z = frame({("A", 0.1): [0.0, 0.0, 0.0], ("A", 0.7): [0.5, 0.5, 0.5], ("B", 0.1): [1.0] * 3, ("B", 0.7): [3.0] * 3})
    z["afct_ms"] = z["afct_ms"] / z["seed"].map(dict(enumerate(SEED_FACTOR, start=1)))  # no per-seed factor
    least = trend(AFCT, "A", LOAD, goes="least", than=["B"])(z)
    assert least.effect.scale == "difference" and least.outcome is Outcome.REPRODUCED
    assert trend(AFCT, "A", LOAD, goes="flat", within=(0.8, 1.25))(f).outcome is Outcome.REPRODUCED
    assert trend(AFCT, "B", LOAD, goes="flat", within=(0.8, 1.25))(f).outcome is Outcome.OPPOSITE
    assert trend(AFCT, "A", LOAD, goes="flat", values=[0.1, 0.7], within=(0.9, 1.1))(f).outcome is Outcome.REPRODUCED
    # levels: a band of values, a spread between series, every run
    assert level(AFCT, "A", at(0.1), within=(4.0, 6.0))(f).outcome is Outcome.INDISTINGUISHABLE  # the seed factors spread A's runs
    assert level(AFCT, Spread(("A", "B")), at(0.1), within=(1.0, 1.5))(f).outcome is Outcome.REPRODUCED
    assert level(AFCT, Spread(), at(0.7), within=(1.0, 1.5))(f).outcome is Outcome.OPPOSITE
    assert level(AFCT, "A", points(LOAD, [0.1, 0.7]), within=(100.0, 200.0), any_point=True)(f).outcome is Outcome.OPPOSITE
    # "at some point" names the point that comes closest, not the first one tried: C is 9 at 0.1 and about 18 at 0.7
    closest = level(AFCT, "C", points(LOAD, [0.1, 0.7]), within=(100.0, 200.0), any_point=True)(f)
    assert closest.outcome is Outcome.OPPOSITE and "at load 0.7" in closest.text and "the closest of 2" in closest.text
    zero = frame({("T", 0.1): [0.0, 0.0, 0.0]})
    assert level(AFCT, "T", at(0.1), within=(0, 0), every_run=True)(zero).outcome is Outcome.REPRODUCED
    zero.loc[1, "afct_ms"] = 0.001
    assert level(AFCT, "T", at(0.1), within=(0, 0), every_run=True)(zero).outcome is Outcome.OPPOSITE


def test_sides_compare_across_grid_values_metrics_and_ratios():
    rows = []
    for seed, k in enumerate(SEED_FACTOR[:3], start=1):
        for wl, scale in (("heavy", 3.0), ("light", 1.0)):
            for s, v in (("A", 1.0), ("B", 1.1)):
                rows.append({"series": s, "traffic.workload": wl, "seed": seed, "afct_ms": k * scale * v, "p99_ms": 2 * k * scale * v})
    f = pd.DataFrame(rows)
    assert compare(AFCT, Side("A", {"traffic.workload": "heavy"}), Side("A", {"traffic.workload": "light"}), higher=True)(f).outcome is Outcome.REPRODUCED
    assert compare(AFCT, pairs=[(Side("A", metric=P99), Side("A"))], higher=True)(f).outcome is Outcome.REPRODUCED
    assert compare(AFCT, Ratio("A", "B"), Ratio("B", "A"), at={"traffic.workload": "heavy"})(f).outcome is Outcome.REPRODUCED
    either = any_of(compare(AFCT, "B", "A", at={"traffic.workload": "light"}), compare(AFCT, "A", "B", at={"traffic.workload": "light"}))
    assert either(f).outcome is Outcome.REPRODUCED
    both = all_of(compare(AFCT, "B", "A", at={"traffic.workload": "light"}), compare(AFCT, "A", "B", at={"traffic.workload": "light"}))
    assert both(f).outcome is Outcome.OPPOSITE
    with pytest.raises(ValueError, match="not a grid field"):
        compare(AFCT, "A", "B", at={"traffic.load": 0.5})(f)


def test_miss_rates_compare_as_differences_and_a_zero_baseline_has_no_relative_change():
    f = frame({("DAR", 0.7): [0.0, 0.0, 0.0], ("ECMP", 0.7): [0.0, 0.0, 0.0]}, column="miss_rate")
    out = compare(MISS, "DAR", "ECMP", at=at(0.7), paper=-38.0)(f)
    assert out.outcome is Outcome.INDISTINGUISHABLE and out.effect.scale == "difference"
    f.loc[f["series"] == "ECMP", "miss_rate"] = [0.2, 0.21, 0.19]
    f.loc[f["series"] == "DAR", "miss_rate"] = [0.1, 0.11, 0.09]
    out = compare(MISS, "DAR", "ECMP", at=at(0.7), paper=-38.0)(f)
    assert out.outcome is Outcome.REPRODUCED and "(-50.0% of" in out.text


# ---------------------------------------------------------------------------------------------------------------
# Reasons: every category, from the data


def _claim(shape, **kw) -> Claim:
    return Claim("A beats B by a third (L1)", shape, **kw)


GOOD = {("A", 0.5): [6.0, 6.1, 5.9], ("B", 0.5): [10.0] * 3}
BAD = {("A", 0.5): [10.5, 10.6, 10.4], ("B", 0.5): [10.0] * 3}
NOISY = {("A", 0.5): [9.0, 11.5, 9.6], ("B", 0.5): [10.0] * 3}


def test_reason_holds_noise_unknown_and_no_data():
    claim = _claim(compare(AFCT, "A", "B", at=at(0.5), paper=-33.0))
    assert judge_claim(claim, frame(GOOD)).reason is Reason.HOLDS
    one = judge_claim(claim, frame({k: v[:1] for k, v in GOOD.items()}))
    assert one.reason is Reason.NOISE_UNKNOWN and one.detail == "1 seed"
    assert judge_claim(claim, frame({("A", 0.7): [1.0] * 3})).reason is Reason.NO_DATA


def test_reason_within_noise_and_fails_under_everything_tried():
    claim = _claim(compare(AFCT, "A", "B", at=at(0.5), paper=-33.0))
    assert judge_claim(claim, frame(NOISY)).reason is Reason.NOISE
    fails = judge_claim(claim, frame(BAD), [(Alternative("transport.init_cwnd_packets=2"), frame(NOISY))])
    assert fails.reason is Reason.FAILS
    assert fails.detail == "opposite; tried: the shipped setting, transport.init_cwnd_packets=2 (indistinguishable)"


def test_reason_setting_dependent_names_the_setting_or_reading():
    claim = _claim(compare(AFCT, "A", "B", at=at(0.5), paper=-33.0))
    j = judge_claim(claim, frame(BAD), {Alternative("transport.init_cwnd_packets=2", "setting"): frame(GOOD)})
    assert j.outcome is Outcome.OPPOSITE and j.reason is Reason.SETTING
    assert j.detail == "holds with transport.init_cwnd_packets=2"
    # the same claim whose other run fails too is not setting-dependent
    assert judge_claim(claim, frame(BAD), {Alternative("transport.init_cwnd_packets=2"): frame(BAD)}).reason is Reason.FAILS
    # a reading of the words, declared with the claim: "a third" read as "lower at all"
    read = _claim(compare(AFCT, "A", "B", at=at(0.5), paper=-33.0), alternatives=(Reading("'beats' as lower by any amount", compare(AFCT, "A", "B", at=at(0.5))),))
    small = {("A", 0.5): [9.8, 9.79, 9.81], ("B", 0.5): [10.0] * 3}
    j = judge_claim(read, frame(small))
    assert j.outcome is Outcome.SMALLER and j.reason is Reason.SETTING and "the reading 'beats' as lower by any amount" in j.detail


def test_reason_metric_dependent():
    claim = _claim(compare(AFCT, "A", "B", at=at(0.5)), alternatives=(Reading("p99 FCT", compare(P99, "A", "B", at=at(0.5)), kind="metric"),))
    f = frame(BAD, p99_ms=GOOD)
    j = judge_claim(claim, f)
    assert j.reason is Reason.METRIC and j.detail == "holds on p99 FCT"
    j = judge_claim(claim, frame(BAD, p99_ms=BAD))
    assert j.reason is Reason.FAILS


def test_reason_headroom_from_the_ideal_fcts():
    """The paper's -60% cannot be reached when every flow at its ideal FCT would give only -20% against B: the
    frame's ``afct_ms@ideal`` column (what a metric's ``ideal`` fills) says so."""
    claim = _claim(compare(AFCT, "A", "B", at=at(0.5), paper=-60.0))
    f = frame({("A", 0.5): [9.0, 9.1, 8.9], ("B", 0.5): [10.0] * 3}, **{"afct_ms@ideal": {("A", 0.5): [8.0] * 3, ("B", 0.5): [8.0] * 3}})
    j = judge_claim(claim, f)
    assert j.outcome is Outcome.SMALLER and j.reason is Reason.HEADROOM
    assert j.verdict.headroom == pytest.approx(-20.0) and "-60.0%" in j.detail and "-20.0%" in j.detail
    # with room to spare (ideal a tenth of B), the same shortfall is a plain failure
    f["afct_ms@ideal"] = f["afct_ms@ideal"] / 8.0
    assert judge_claim(claim, f).reason is Reason.FAILS
    # without the column, headroom is unknown
    assert judge_claim(claim, f.drop(columns="afct_ms@ideal")).verdict.headroom is None


def test_reason_not_testable():
    claim = Claim("CPU overhead is low (L240)", not_testable("in a simulator: no switch CPU", show=(AFCT, ["A"], at(0.5))))
    j = judge_claim(claim, frame(GOOD))
    assert j.outcome is Outcome.NOT_TESTABLE and j.reason is Reason.NOT_TESTABLE and j.detail == "in a simulator: no switch CPU"
    assert j.holds is None and "dclb shows AFCT at load 0.5" in j.verdict.text


def test_summary_csv_has_one_row_per_claim_with_its_reason(tmp_path):
    claims = [_claim(compare(AFCT, "A", "B", at=at(0.5), paper=-33.0)), Claim("x (L2)", not_testable("why"))]
    rows = []
    for c in claims:
        r = judge_claim(c, frame(NOISY)).row()
        rows.append({"paper": "p", "figure": "1", **r, "paper_number": r["paper"]})
    path = write_summary_csv(rows, tmp_path / "summary.csv")
    got = pd.read_csv(path)
    assert list(got.columns) == list(SUMMARY_COLUMNS) and len(got) == 2
    assert got["reason"].tolist() == ["within noise", "not testable"] and got["verdict"].tolist() == ["indistinguishable", "not testable"]
    assert got.loc[0, "paper_number"] == "-33.0%" and got.loc[0, "seeds"] == 3
