"""TAM's reproduction: its own flow-table metrics and the verdict helpers its claims use, on crafted data.

Each helper is checked both ways: changing the data changes the verdict.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dclb.reproduce.papers import tam


def _flows(rows):
    base = {"state": "completed", "transport": "dctcp", "retransmissions": 0, "queueing_delay_us": 0.0, "uplink_bytes": [0, 0]}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_short_queueing_is_per_packet_over_completed_short_flows():
    f = _flows(
        [
            {"size_bytes": 1460, "queueing_delay_us": 10.0, "start_us": 0, "finish_us": 1},  # 1 packet
            {"size_bytes": 2921, "queueing_delay_us": 50.0, "start_us": 0, "finish_us": 1},  # 3 packets
            {"size_bytes": 10_000_000, "queueing_delay_us": 1e6, "start_us": 0, "finish_us": 1},  # long: ignored
            {"size_bytes": 1460, "queueing_delay_us": 1e6, "state": "unfinished", "start_us": 0, "finish_us": 1},
        ]
    )
    assert tam._short_queueing(f) == pytest.approx(60.0 / 4)
    assert math.isnan(tam._short_queueing(f[f["size_bytes"] > 100_000]))


def test_long_retransmissions_and_per_path_spread():
    f = _flows(
        [
            {"size_bytes": 10_000_000, "retransmissions": 3, "uplink_bytes": [1_000_000, 0], "start_us": 0.0, "finish_us": 100.0},
            {"size_bytes": 10_000_000, "retransmissions": 4, "uplink_bytes": [0, 1_000_000], "start_us": 50.0, "finish_us": 200.0},
            {"size_bytes": 5_000, "retransmissions": 9, "uplink_bytes": [5_000, 0], "start_us": 0.0, "finish_us": 10.0},
        ]
    )
    assert tam._long_retx(f) == 7
    # Both paths carry 1 MB of long-flow data over 200 us: no spread.
    assert tam._long_path_std(f) == pytest.approx(0.0)
    f.at[1, "uplink_bytes"] = [1_000_000, 0]
    # 2 MB and 0 B over 200 us: 80,000 and 0 Mbps, population std 40,000 Mbps.
    assert tam._long_path_std(f) == pytest.approx(40_000.0)


def _frame(values):
    rows = []
    for (series, x), ys in values.items():
        for seed, y in enumerate(ys, start=1):
            rows.append({"series": series, "traffic.sources.0.flows": x, "seed": seed, "run_id": f"{series}-{x}-{seed}", "status": "completed", "m": y})
    return pd.DataFrame(rows)


X = "traffic.sources.0.flows"


def test_rises_least_growth_and_flattest_follow_the_data():
    f = _frame({("TAM", 1): [1.0, 1.0], ("TAM", 10): [1.1, 1.1], ("ECMP", 1): [1.0], ("ECMP", 10): [3.0]})
    assert tam.rises(f, "s", "m", ["TAM", "ECMP"], X).holds is True
    assert tam.least_growth(f, "s", "m", "TAM", ["ECMP"], X).holds is True
    assert tam.flattest(f, "s", "m", ["TAM"], X, 0.10).holds is True
    assert tam.flattest(f, "s", "m", ["ECMP"], X, 0.10).holds is False
    f.loc[(f["series"] == "TAM") & (f[X] == 10), "m"] = 5.0
    assert tam.least_growth(f, "s", "m", "TAM", ["ECMP"], X).holds is False
    f.loc[f["series"] == "TAM", "m"] = 0.5
    assert tam.rises(f, "s", "m", ["TAM"], X).holds is False
    assert tam.rises(f, "s", "m", ["DRB"], X).holds is None


def test_group_beats_best_case_and_best_other_follow_the_data():
    f = _frame({("TAM", 1): [1.0], ("TAM", 10): [2.0], ("ECMP", 1): [2.0], ("ECMP", 10): [2.5], ("RPS", 1): [1.5], ("RPS", 10): [5.0]})
    assert tam.group_beats(f, "s", "m", ["TAM"], ["ECMP", "RPS"], X, [1, 10]).holds is True
    out = tam.best_case(f, "short AFCT", "m", "TAM", ["ECMP", "RPS"], X, -60.0)
    assert out.holds is True and "vs RPS at flows 10" in out.text and "-60.0%" in out.text
    assert tam.group_beats(f, "s", "m", ["ECMP"], ["RPS"], X, [1, 10]).holds is False
    # Overall: TAM 1.0 vs the best other (RPS 1.5) is -33%: more than 20% better.
    g = f.assign(**{"traffic.load": f[X]})
    assert tam.best_other(g, "o", "m", -20.0, {"traffic.load": 1}).holds is True
    g.loc[(g["series"] == "TAM") & (g["traffic.load"] == 1), "m"] = 1.4
    out = tam.best_other(g, "o", "m", -20.0, {"traffic.load": 1})
    assert out.holds is False and "same direction, smaller" in out.text


def test_workload_helpers_follow_the_data():
    rows = []
    for s, vals in {"TAM": {"cachefollower": 5.0, "webserver": 1.0, "datamining": 2.0}, "ECMP": {"cachefollower": 9.0, "webserver": 1.1, "datamining": 3.0}}.items():
        for w, y in vals.items():
            rows.append({"series": s, "traffic.workload": w, "seed": 1, "run_id": f"{s}{w}", "status": "completed", "m": y})
    f = pd.DataFrame(rows)
    assert tam.extreme_workload(f, "s", "m", "cachefollower").holds is True
    assert tam.extreme_workload(f, "s", "m", "webserver", lowest=True).holds is True
    assert tam.extreme_workload(f, "s", "m", "datamining").holds is False
    assert tam.spread_order(f, "s", "m", ["cachefollower"], ["webserver", "datamining"]).holds is True
    assert tam.spread_order(f, "s", "m", ["webserver"], ["cachefollower"]).holds is False
    assert tam.spread_order(f, "s", "m", ["hadoop_parsimon_intracluster"], ["webserver"]).holds is None


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
    """``Sweep.seeds`` (used by TAM's 40 Gbps figures at quick scale) overrides the scale's seeds for that sweep
    only; sweeps without it keep the scale's, and other scales are untouched."""
    from dclb.reproduce import get_paper
    from dclb.reproduce.plan import plan_paper

    pp = plan_paper(tam.PAPER, "quick", ["6", "12"])
    seeds = {f: {e.seed for e in pp.entries if e.figure == f} for f in ("6", "12")}
    assert seeds == {"6": {1, 2, 3}, "12": {1}}
    assert {e.seed for e in plan_paper(tam.PAPER, "paper", ["12"]).entries} == {1, 2, 3, 4, 5}
    mdtlb = get_paper("mdtlb")
    assert {e.seed for e in plan_paper(mdtlb, "quick", ["13"]).entries} == set(range(1, mdtlb.scales["quick"].seeds + 1))


def test_verdict_texts_survive_html_escaping():
    """The report escapes verdict lines; TAM's are written without characters that escaping changes."""
    import html

    rows = []
    for s in ["TAM", *tam.OTHERS]:
        for x in (1, 10):
            rows.append({"series": s, X: x, "seed": 1, "run_id": f"{s}{x}", "status": "completed", tam.SHORT_AFCT.key: 1.0 + x * (s != "TAM")})
    f = pd.DataFrame(rows)
    for claim in tam.FIG6.claims:
        try:
            text = claim.check(f).text
        except KeyError:  # claims on other metrics: not in this frame
            continue
        assert html.escape(text) == text, text
