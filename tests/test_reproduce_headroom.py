"""Headroom: FCT metrics carry their floor (every flow at its FCT alone on the fabric, the flow table's
``alone_fct_us``), and the CLI's summary counts verdicts by outcome."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dclb.reproduce import metrics as m
from dclb.reproduce.run import SavedLine, outcome_counts


def _flows() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "size_bytes": [10_000, 50_000, 2_000_000, 3_000],
            "fct_us": [100.0, 300.0, 4000.0, 50.0],
            "alone_fct_us": [20.0, 60.0, 1700.0, 10.0],
            "transport": ["dctcp"] * 4,
            "state": ["completed", "completed", "completed", "unfinished"],
            "best_effort": [False] * 4,
        }
    )


def test_fct_metrics_read_their_floor_on_the_alone_fcts_of_the_same_flows():
    flows = _flows()
    # Completed short flows: 10 KB and 50 KB (the unfinished one is left out of both).
    assert m.SHORT_AFCT.ideal is not None and m.SHORT_AFCT.ideal.flows(flows) == 40.0 * m.US_TO_MS
    assert m.LONG_AFCT.ideal.flows(flows) == 1700.0 * m.US_TO_MS
    bins = m.afct(m.SHORT, "short")
    assert bins.flows(flows) == 200.0 * m.US_TO_MS and bins.ideal.flows(flows) == 40.0 * m.US_TO_MS
    p99 = m.fct_quantile(0.99, m.ALL, "all")
    assert p99.ideal.flows(flows) < p99.flows(flows)
    # A floor has no floor of its own, and a run stored before the column existed has none.
    assert bins.ideal.ideal is None
    assert math.isnan(bins.ideal.flows(flows.drop(columns=["alone_fct_us"])))


def test_the_summary_line_counts_outcomes_also_of_lines_saved_earlier():
    class J:  # a judgement's outcome
        def __init__(self, value):
            self.outcome = type("O", (), {"value": value})()

    lines = [J("reproduced"), J("opposite"), J("reproduced"), SavedLine("x: dclb +1% => indistinguishable (within noise)", False)]
    assert outcome_counts(lines) == "2 reproduced, 1 indistinguishable, 1 opposite"


def test_a_miss_rate_claim_where_the_baseline_misses_nothing_reads_headroom():
    # DAR's "-38% misses against ECMP" on a fabric where no scheme misses a deadline: nothing to reduce, so the
    # claim cannot be tested here, which "within noise" would hide.
    from dclb.reproduce.claims import compare
    from dclb.reproduce.verdict import Outcome, Reason, reason_of

    def frame(ecmp: list[float]) -> pd.DataFrame:
        rows = []
        for seed, (dar, base) in enumerate(zip([0.0, 0.0, 0.0], ecmp), start=1):
            for series, v in (("DAR", dar), ("ECMP", base)):
                rows.append({"series": series, "traffic.load": 0.7, "seed": seed, "run_id": f"{series}{seed}", "status": "completed", m.DEADLINE_MISS.key: v})
        return pd.DataFrame(rows)

    none = compare(m.DEADLINE_MISS, "DAR", "ECMP", at={"traffic.load": 0.7}, paper=-38.0)(frame([0.0, 0.0, 0.0]))
    assert none.outcome is Outcome.INDISTINGUISHABLE and none.headroom == 0.0
    reason, detail = reason_of(none)
    assert reason is Reason.HEADROOM and "already at the floor" in detail
    # Where ECMP misses, any reduction down to zero is possible: no headroom reason, DAR's zero reproduces it.
    some = compare(m.DEADLINE_MISS, "DAR", "ECMP", at={"traffic.load": 0.7}, paper=-38.0)(frame([0.2, 0.3, 0.25]))
    assert some.headroom == -100.0 and reason_of(some)[0] is not Reason.HEADROOM


def test_a_deadline_flow_that_would_miss_alone_is_the_floor_of_the_miss_rate():
    # Two deadline flows miss; one of them could not meet its deadline even alone (a deadline shorter than its
    # FCT alone), so no balancer could bring the miss rate below one in three.
    flows = pd.DataFrame(
        {
            "size_bytes": [10_000, 10_000, 10_000, 10_000],
            "deadline_us": [50.0, 100.0, 100.0, None],
            "alone_fct_us": [60.0, 30.0, 30.0, 30.0],
            "fct_us": [70.0, 120.0, 40.0, 30.0],
            "deadline_met": [False, False, True, None],
            "state": ["completed"] * 4,
        }
    )
    assert m.DEADLINE_MISS.ideal.flows(flows) == pytest.approx(1 / 3)
    assert m.DEADLINE_MISSES.ideal.flows(flows) == 1.0
    assert math.isnan(m.DEADLINE_MISS.ideal.flows(flows.drop(columns=["alone_fct_us"])))
