"""LBT's reproduction: the threshold model against the spec's worked numbers, the paper's metrics on crafted
tables, and ``Metric.run`` (a number from any table of a run) in the shared reader."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from dclb.reproduce.data import RunReader, RunTables
from dclb.reproduce.papers import lbt
from dclb.reproduce.papers import lbt_model as lm
from dclb.reproduce.spec import Metric

# Spec shared/reference/seed-schemes/lbt.md §5.7 (10 Gbps, t = 500 µs, W = 65,536 B, m = 7,300 B, R = 100 µs,
# γ = 2, K = 9): (B_s, B_l, B_b, K_s, K_l, K_b, P_s) -> l1, Z1, raw Q1, paper Q1, mg1 Q1.
ROWS = {
    "a": ((20_000, 2_800_000, 0, 1, 5, 0, 2), 0.5013, 5.0876, 60_005, 60_005, 32_943),
    "b": ((10_000, 1_690_000, 0, 1, 3, 0, 1), 0.3022, 3.0670, 192_622, 97_500, 14_193),
    "c": ((10_000, 1_690_000, 0, 2, 3, 0, 1), 0.3022, 3.0670, 958_923, 97_500, 14_193),
    "d": ((10_000, 3_940_000, 0, 1, 7, 0, 1), 0.7022, 7.1262, 18_140, 18_140, 77_274),
    "e": ((10_000, 2_800_000, 0, 0, 5, 0, 1), 0.4996, 5.0695, -72_680, 1_500, 32_710),
}


@pytest.mark.parametrize("case", sorted(ROWS))
def test_threshold_model_matches_the_specs_worked_numbers(case):
    period, l1, z1, raw, q1_paper, q1_mg1 = ROWS[case]
    r = lm.paper_thresholds(lm.Period(*period))
    assert r.n == pytest.approx(1.45403, abs=1e-5)
    assert r.target == pytest.approx(306.806e-6, abs=1e-9) and r.eps == pytest.approx(0.127563, abs=1e-6)
    assert r.l1 == pytest.approx(l1, abs=1e-4) and r.z1 == pytest.approx(z1, abs=1e-4)
    assert r.raw_q1 == pytest.approx(raw, abs=1.0)
    assert r.q1 == pytest.approx(q1_paper, abs=1.0)
    assert lm.mg1_backlog(r.l1, r.l2)[0] == pytest.approx(q1_mg1, abs=1.0)


def test_threshold_model_with_best_effort_traffic():
    # Row f: Q1's denominator leaves room (raw 281,864 B, clamped to the marking threshold); Q2's is negative
    # (no room for BE links: the upper bound).
    r = lm.paper_thresholds(lm.Period(20_000, 2_800_000, 400_000, 1, 5, 1, 2))
    assert r.raw_q1 == pytest.approx(281_864, abs=2.0) and r.q1 == lm.Q1_MAX
    assert math.isinf(r.raw_q2) and r.q2 == lm.Q2_MAX
    q1, q2 = lm.mg1_backlog(r.l1, r.l2)
    assert (round(q1), round(q2)) == (32_943, 43_872)


def test_threshold_model_is_bounded_monotone_and_keeps_q2_above_q1():
    assert lm.backlog(0.5) == pytest.approx(32_768.0) and math.isinf(lm.backlog(1.0))
    assert lm.mg1_backlog(0.0, 0.0) == (lm.Q_MIN, lm.Q_MIN)
    assert lm.mg1_backlog(0.99, 0.99) == (lm.Q1_MAX, lm.Q2_MAX)
    last = (0.0, 0.0)
    for i in range(1, 100):
        q = lm.mg1_backlog(i / 100 * 8 / 9, i / 100)
        assert q[0] >= last[0] and q[1] >= last[1] and q[1] >= q[0]
        last = q
    rng = random.Random(5)
    for _ in range(500):
        p = lm.Period(rng.uniform(0, 1e7), rng.uniform(0, 1e7), rng.uniform(0, 1e7), rng.randint(0, 9), rng.randint(0, 9), rng.randint(0, 9), rng.randint(1, 50))
        r = lm.paper_thresholds(p)
        assert lm.Q_MIN <= r.q1 <= lm.Q1_MAX and lm.Q_MIN <= r.q2 <= lm.Q2_MAX and r.q2 >= r.q1
    # No long traffic: Q1 keeps its previous value.
    assert lm.paper_thresholds(lm.Period(10_000, 0, 0, 1, 0, 0, 1), prev=(5_000.0, 6_000.0)).q1 == 5_000.0
    curves = lm.threshold_curves([0.1, 0.7], 1 / 9, points=7)
    assert set(curves["series"]) == {"Q1 (model)", "Q2 (model)"} and len(curves) == 14
    q1 = curves[curves["series"] == "Q1 (model)"]["value"].tolist()
    assert q1 == sorted(q1) and q1[0] == pytest.approx(lm.backlog(0.1 * 8 / 9) / 1e3)


def _flows(rows):
    cols = ["size_bytes", "fct_us", "ideal_fct_us", "state", "transport", "best_effort", "start_us"]
    return pd.DataFrame(rows, columns=cols)


def test_lbt_metrics_leave_best_effort_out_and_judge_deadlines():
    f = _flows(
        [
            (10_000, 100.0, 60.0, "completed", "dctcp", False, 0.0),  # met (100 <= 120)
            (50_000, 300.0, 100.0, "completed", "dctcp", False, 10.0),  # missed (300 > 200)
            (90_000, 0.0, 100.0, "unfinished", "dctcp", False, 20.0),  # missed: never finished
            (20_000, 9_000.0, 60.0, "completed", "dctcp", True, 30.0),  # best-effort: left out
            (1_000_000, 2_000.0, 900.0, "completed", "dctcp", False, 40.0),  # long: 4 Gbps
        ]
    )
    assert lbt.SHORT_AFCT.flows(f) == pytest.approx(0.2)
    assert lbt.MISS.flows(f) == pytest.approx(2 / 3)
    assert lbt.LONG_TPUT.flows(f) == pytest.approx(4.0)


class _Store:
    """The store calls RunReader makes, over in-memory tables; counts the reads."""

    def __init__(self, tables):
        self.tables, self.reads = tables, []

    def is_complete(self, run_id):
        return True

    def read_record(self, run_id):
        return {"summary": {"short_afct_us": 250.0, "scheme_counters": '{"lbt_decisions_long": 900, "lbt_moves_long": 30}'}}

    def status(self, run_id):
        return "completed"

    def _table(self, name, run_id):
        self.reads.append(name)
        return self.tables[name]

    def flows(self, run_id):
        return self._table("flows", run_id)

    def ports(self, run_id):
        return self._table("ports", run_id)

    def samples(self, run_id):
        return self._table("samples", run_id)


def test_metric_run_reads_the_port_and_sample_tables_once():
    ports = pd.DataFrame({"port": [1, 2, 3], "node": [10, 10, 10], "role": ["leaf_up", "leaf_up", "leaf_down"], "rate_gbps": [10.0, 10.0, 10.0]})
    rows = []
    for t in (0.0, 500.0, 1000.0):
        for port, rate in ((1, 10.0), (2, 5.0), (3, 10.0)):  # bytes sent at `rate` Gbps; port 2 also queues 3 KB
            rows.append({"time_us": t, "kind": "port", "id": port, "queue_bytes": 3_000 if port == 2 else 0, "bytes": int(rate * 1e3 / 8 * t)})
    samples = pd.DataFrame(rows)
    flows = _flows([(1_000, 10.0, 10.0, "completed", "dctcp", False, 0.0), (1_000, 10.0, 10.0, "completed", "dctcp", False, 1000.0)])
    store = _Store({"ports": ports, "samples": samples, "flows": flows})
    reader = RunReader(store)
    assert reader.value("r1", lbt.UTIL) == pytest.approx(0.75)  # uplinks at 10 and 5 Gbps of 10
    assert reader.value("r1", lbt.LONGEST_Q) == pytest.approx(3.0)
    assert reader.value("r1", lbt.GRANULARITY) == pytest.approx(30.0)  # LBT's counters, from the run summary
    seen = []
    probe = Metric("p", "p", run=lambda t: seen.append((t.run_id, t.summary["short_afct_us"], len(t.ports))) or 2.0, factor=0.5)
    assert reader.value("r1", probe) == 1.0 and seen == [("r1", 250.0, 3)]
    assert sorted(store.reads) == ["flows", "ports", "samples"]
    assert isinstance(RunTables(reader, "r1").flows, pd.DataFrame) and store.reads.count("flows") == 1


def test_every_lbt_claim_says_it_cannot_tell_on_an_empty_frame():
    empty = pd.DataFrame(columns=["series", "seed", "run_id", "status", lbt.LOAD, lbt.WL, lbt.SPINES])
    for fig in lbt.PAPER.figures:
        for claim in fig.claims:
            assert claim.check(empty).holds is None, (fig.id, claim.text)
