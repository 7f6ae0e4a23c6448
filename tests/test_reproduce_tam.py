"""TAM's reproduction: its flow-table metrics on crafted tables, its one two-way claim, its grids and seeds.

The shapes its claims use are checked in test_reproduce_verdicts.py.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dclb.reproduce.papers import tam


def _flows(rows):
    base = {"state": "completed", "transport": "dctcp", "retransmissions": 0, "queueing_delay_us": 0.0, "uplink_bytes": [0, 0], "packets_sent": 1}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_short_queueing_is_per_packet_over_completed_short_flows():
    f = _flows(
        [
            {"size_bytes": 1460, "packets_sent": 1, "queueing_delay_us": 10.0, "start_us": 0, "finish_us": 1},
            {"size_bytes": 2921, "packets_sent": 3, "queueing_delay_us": 50.0, "start_us": 0, "finish_us": 1},
            {"size_bytes": 10_000_000, "packets_sent": 7000, "queueing_delay_us": 1e6, "start_us": 0, "finish_us": 1},  # long: ignored
            {"size_bytes": 1460, "packets_sent": 1, "queueing_delay_us": 1e6, "state": "unfinished", "start_us": 0, "finish_us": 1},
        ]
    )
    assert tam.SHORT_QUEUE.flows(f) == pytest.approx(60.0 / 4)
    assert math.isnan(tam.SHORT_QUEUE.flows(f[f["size_bytes"] > 100_000]))


def test_long_retransmissions_and_per_path_spread():
    f = _flows(
        [
            {"size_bytes": 10_000_000, "retransmissions": 3, "uplink_bytes": [1_000_000, 0], "start_us": 0.0, "finish_us": 100.0},
            {"size_bytes": 10_000_000, "retransmissions": 4, "uplink_bytes": [0, 1_000_000], "start_us": 50.0, "finish_us": 200.0},
            {"size_bytes": 5_000, "retransmissions": 9, "uplink_bytes": [5_000, 0], "start_us": 0.0, "finish_us": 10.0},
        ]
    )
    assert tam.LONG_RETX.flows(f) == 7
    # Both paths carry 1 MB of long-flow data over 200 us: no spread.
    assert tam.LONG_STD.flows(f) == pytest.approx(0.0)
    f.at[1, "uplink_bytes"] = [1_000_000, 0]
    # 2 MB and 0 B over 200 us: 80,000 and 0 Mbps, population std 40,000 Mbps.
    assert tam.LONG_STD.flows(f) == pytest.approx(40_000.0)


def test_presto_between_ecmp_and_letflow_in_either_order():
    """L258's "between ECMP and LetFlow" names no order: either one holds, neither order is opposite."""
    claim = next(c for c in tam.FIG6.claims if c.text.startswith("Presto's short AFCT lies between")).check
    X = tam.N_LONG

    def frame(values):
        return pd.DataFrame(
            [{"series": s, X: x, "seed": i + 1, tam.SHORT_AFCT.key: v * (1 + 0.01 * i)} for s, v in values.items() for x in (1, 10) for i in range(3)]
        )

    assert claim(frame({"ECMP": 3.0, "Presto": 2.0, "LetFlow": 1.0})).holds is True
    assert claim(frame({"ECMP": 1.0, "Presto": 2.0, "LetFlow": 3.0})).holds is True
    assert claim(frame({"ECMP": 1.0, "Presto": 4.0, "LetFlow": 3.0})).holds is False


def test_every_claim_point_is_on_its_figure_grid():
    """Claims name points (loads, counts, workloads) that the figure's sweeps run, so no claim is left without data
    at the quick and paper scales."""
    for fig in tam.PAPER.figures:
        grid = {}
        for sw in fig.sweeps:
            for k, vals in sw.grid.items():
                grid.setdefault(k, set()).update(vals)
        for panel in fig.panels:
            assert panel.x in grid, (fig.id, panel.title)
    assert set(tam.WORKLOADS) >= set(tam.HEAVY)


def test_a_sweep_can_have_its_own_seed_count_at_a_scale():
    """``Sweep.seeds`` overrides the scale's seeds for that sweep only; sweeps without it keep the scale's, and other
    scales are untouched. Every TAM figure runs five seeds at quick scale (every judged point has five)."""
    import dataclasses

    from dclb.reproduce import get_paper
    from dclb.reproduce.plan import plan_paper

    pp = plan_paper(tam.PAPER, "quick", ["6", "12"])
    five = {1, 2, 3, 4, 5}
    assert {f: {e.seed for e in pp.entries if e.figure == f} for f in ("6", "12")} == {"6": five, "12": five}
    fig12 = tam.PAPER.figure("12")
    one = dataclasses.replace(fig12, sweeps=(dataclasses.replace(fig12.sweeps[0], seeds={"quick": 1}),))
    paper = dataclasses.replace(tam.PAPER, figures=(tam.PAPER.figure("6"), one))
    pp = plan_paper(paper, "quick", ["6", "12"])
    assert {f: {e.seed for e in pp.entries if e.figure == f} for f in ("6", "12")} == {"6": five, "12": {1}}
    assert {e.seed for e in plan_paper(paper, "paper", ["12"]).entries} == {1, 2, 3, 4, 5}
    # MDTLB's main figures use it: their few flows per run need many seeds (50 at paper; at quick the scale's
    # five, which a run at load costs ten times what it did from an empty fabric); its motivation figures keep the
    # scale's.
    mdtlb = get_paper("mdtlb")
    assert {e.seed for e in plan_paper(mdtlb, "quick", ["13"]).entries} == set(range(1, 6))
    assert {e.seed for e in plan_paper(mdtlb, "quick", ["14"]).entries} == set(range(1, 6))
    assert {e.seed for e in plan_paper(mdtlb, "paper", ["15"]).entries} == set(range(1, 51))
    assert {e.seed for e in plan_paper(mdtlb, "quick", ["2"]).entries} == set(range(1, mdtlb.scales["quick"].seeds + 1))
    assert {e.seed for e in plan_paper(mdtlb, "ci", ["13"]).entries} == {1}
