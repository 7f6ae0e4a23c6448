"""TR's reproduction: the analytic model of Fig. 6 (spec seed-schemes/tr.md §5, test T12), the machinery it added to
``dclb reproduce`` (derived axes, switch-table metrics, normalisation at a grid point), its total throughput and
the claims it cannot test.

The end-to-end ci run of the paper is in test_reproduce.py (parametrised over every written paper)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dclb.reproduce.data import RunReader, panel_table
from dclb.reproduce.papers import tr
from dclb.reproduce.papers import tr_model as tm
from dclb.reproduce.plan import plan_paper
from dclb.reproduce.spec import Metric

# --------------------------------------------------------------------------------------------------------
# The model (T12)


@pytest.mark.parametrize("ng,nb", [(5, 5), (8, 2), (2, 8)])
def test_closed_form_p_fr_equals_the_printed_double_sum(ng, nb):
    p = tm.ModelParams(n_good=ng, n_bad=nb)
    for s in range(1, 41):
        assert tm.p_fr(s, p) == pytest.approx(float(tm.p_fr_exact(s, p)), rel=1e-9, abs=1e-12)


def test_p_fr_reference_values():
    # Spec §5.2 table (computed there from Eq. 4).
    assert tm.p_fr(5) == pytest.approx(0.1875, abs=1e-4)
    assert tm.p_fr(10) == pytest.approx(0.8281, abs=1e-4)
    assert tm.p_fr(20) == pytest.approx(0.9987, abs=1e-4)
    assert tm.p_fr(10, tm.ModelParams(n_good=8, n_bad=2)) == pytest.approx(0.7455, abs=1e-4)
    assert tm.p_fr(20, tm.ModelParams(n_good=2, n_bad=8)) == pytest.approx(0.7543, abs=1e-4)
    assert tm.p_fr(2) == 0.0  # fewer packets than the dupACK threshold cannot trigger it
    assert tm.p_fr(10, tm.ModelParams(n_good=10, n_bad=0)) == 0.0  # no bad path, no reordering


@pytest.mark.parametrize(
    "size,flows,f_rps_ms,f_tr_ms",
    [(100e3, 20, 3.145, 2.811), (200e3, 20, 6.242, 5.580), (300e3, 20, 9.387, 8.391), (350e3, 20, 10.935, 9.776), (300e3, 10, 4.693, 4.196), (300e3, 40, 18.773, 16.782)],
)
def test_fct_reference_values(size, flows, f_rps_ms, f_tr_ms):
    # Spec §5.4 table: n = 10 (5 + 5), B = 250, t = 12 us, d_g = 200 us, d_b = 700 us, H = 3.
    assert tm.fct_rps(size, flows) / 1e3 == pytest.approx(f_rps_ms, abs=5e-4)
    assert tm.fct_tr(size, flows) / 1e3 == pytest.approx(f_tr_ms, abs=5e-4)


def test_fct_at_ratio_two_and_the_tr_closed_form():
    p = tm.with_ratio(2.0)
    assert p.d_bad_us == 400.0
    assert tm.fct_rps(300e3, 20, p) / 1e3 == pytest.approx(8.107, abs=5e-4)
    assert tm.fct_tr(300e3, 20, p) / 1e3 == pytest.approx(7.538, abs=5e-4)
    # Eq. (8) equals Eq. (2) with TR's window 3nB/4N and delay d_b + 3Bt/4.
    base = tm.ModelParams()
    s, n = tm.packets(250e3), 30
    w = 3 * base.n * base.buffer_packets / (4 * n)
    r = base.d_bad_us + 3 * base.buffer_packets * base.packet_time_us / 4
    assert tm.fct_tr(250e3, n) == pytest.approx(4 * s * r / (3 * w))


def test_model_curves_frame():
    c = tm.curves("size", [100e3, 200e3], 20)
    assert list(c.columns) == ["x", "value", "series"] and set(c["series"]) == {"RPS", "TR"}
    tr_ = c[c["series"] == "TR"]["value"].tolist()
    assert tr_ == pytest.approx([2.811, 5.580], abs=5e-4)
    c = tm.curves("flows", [10, 40], 300e3)
    assert c[c["series"] == "RPS"]["value"].tolist() == pytest.approx([4.693, 18.773], abs=5e-4)
    # TR below RPS everywhere in the model (the figure's claim, within the model)
    for x_field, xs, fixed in (("size", [100e3, 350e3], 20), ("flows", [10, 50], 300e3)):
        d = tm.curves(x_field, xs, fixed).pivot(index="x", columns="series", values="value")
        assert (d["TR"] < d["RPS"]).all()


# --------------------------------------------------------------------------------------------------------
# Derived axes (Sweep.axes): one x value, several overrides


def test_rho_axis_sets_every_bad_link_and_becomes_a_column():
    assert tr.bad_link_delay_us(1.5) == 50 and tr.bad_link_delay_us(3.5) == 150
    pp = plan_paper(tr.PAPER, "quick", ["2"])
    rhos = sorted({e.values[tr.RHO] for e in pp.entries})
    assert rhos == tr.RHOS
    by_id = {p.run_id: p for p in pp.plan.points}
    for e in pp.entries:
        links = by_id[e.run_id].raw["topology"]["links"]
        assert len(links) == tr.BAD_LINKS
        assert {lk["delay_us"] for lk in links} == {tr.bad_link_delay_us(e.values[tr.RHO])}
    # every (series, rho, seed) is its own run; 3 series x 5 ratios x the quick scale's five seeds
    assert tr.PAPER.scales["quick"].seeds == 5
    assert len(pp.plan.points) == 75 and len({e.run_id for e in pp.entries}) == 75
    # ci keeps the axis's ends, as it does a grid's
    ci = plan_paper(tr.PAPER, "ci", ["2"])
    assert sorted({e.values[tr.RHO] for e in ci.entries}) == [1.5, 3.5]
    # Figs. 2 and 7 share the runs of their common schemes
    both = plan_paper(tr.PAPER, "ci", ["2", "7"])
    assert len(both.plan.points) == 12


# --------------------------------------------------------------------------------------------------------
# Metrics from the switch table; normalisation at a grid point


class _FakeStore:
    def __init__(self, switches: pd.DataFrame) -> None:
        self._sw = switches

    def is_complete(self, run_id):
        return True

    def read_record(self, run_id):
        return {"summary": {}}

    def switches(self, run_id):
        return self._sw


def test_switch_table_metric():
    sw = pd.DataFrame({"kind": ["leaf", "leaf", "spine"], "index": [0, 1, 0], "decisions": [5000, 7000, 0], "state_bytes": [416, 96, 0], "tr_peak_state_bytes": [2264, 800, 0]})
    reader = RunReader(_FakeStore(sw))
    assert reader.value("r", tr.DECISIONS) == pytest.approx(5.0)
    assert reader.value("r", tr.STATE_END) == 416
    assert reader.value("r", tr.TR_PEAK) == 2264
    no_tr = RunReader(_FakeStore(sw.drop(columns="tr_peak_state_bytes")))
    assert math.isnan(no_tr.value("r", tr.TR_PEAK))
    with pytest.raises(ValueError):
        reader.value("r", Metric("x", "x"))


def test_normalize_at_divides_by_the_same_series_and_seed_at_that_point():
    rows = []
    for s, base in (("a", 2.0), ("b", 10.0)):
        for seed in (1, 2):
            for tl, k in ((10, 3.0), (100, 1.0), (1000, 2.0)):
                rows.append({"series": s, "lb.long_threshold_bytes": tl, "seed": seed, "y": base * k * seed})
    f = pd.DataFrame(rows)
    t = panel_table(f, "y", "lb.long_threshold_bytes", normalize_at={"lb.long_threshold_bytes": 100})
    got = {(r.series, r._2): r.mean for r in t.itertuples()}
    assert got[("a", 10)] == pytest.approx(3.0) and got[("b", 1000)] == pytest.approx(2.0) and got[("a", 100)] == 1.0


# --------------------------------------------------------------------------------------------------------
# Metrics and claims


def test_total_throughput_is_bytes_delivered_over_the_time_long_flows_are_active():
    """Figs. 3 and 8: two long flows of 1 MB active over [0, 1 ms] and [0.5, 1.5 ms] deliver 2 MB in 1.5 ms: 10.7
    Gbps; summing each flow's size / FCT would say 16 Gbps, more than the flows were ever given."""
    flows = pd.DataFrame(
        {
            "size_bytes": [1_000_000, 1_000_000, 50_000],
            "start_us": [0.0, 500.0, 0.0],
            "finish_us": [1000.0, 1500.0, 10.0],
            "fct_us": [1000.0, 1000.0, 10.0],
            "state": "completed",
            "transport": "dctcp",
        }
    )
    assert tr.LONG_TOTAL.flows(flows) == pytest.approx(2e6 * 8 / 1.5e6)
    assert tr.LONG_TOTAL.key.endswith("_gbps")


def test_every_claim_has_a_verdict_on_an_empty_frame():
    empty = pd.DataFrame(columns=["series", "seed", "run_id", "status"])
    for fig in tr.PAPER.figures:
        for claim in fig.claims:
            verdict = claim.check(empty)
            assert verdict.holds is None, (fig.id, claim.text, verdict.text)


def test_fig15_decisions_are_not_testable_and_show_dclbs_numbers():
    rows = [{"series": s, tr.LOAD: 0.8, "seed": i, tr.DECISIONS.key: 10.0 + i} for s in [*tr.BASELINES, "TR"] for i in (1, 2, 3)]
    cpu, memory = (c.check(pd.DataFrame(rows)) for c in tr.FIG15.claims)
    assert cpu.outcome.value == "not testable" and "one per packet for every scheme" in cpu.text and "TR 12" in cpu.text
    assert memory.outcome.value == "not testable"


# --------------------------------------------------------------------------------------------------------
# Reordering: the two-leaf claim scoped, the large-scale counts beside the verdicts (issue #23)


def _large_frame(counts: dict[str, list[float]]) -> pd.DataFrame:
    """Fig. 11's frame with only the reordering counts: per series, its spurious retransmissions at each seed (the
    same at every load)."""
    rows = []
    for series, per_seed in counts.items():
        for load in tr.LOADS:
            for seed, v in enumerate(per_seed, start=1):
                rows.append({"series": series, tr.LOAD: load, "seed": seed, "run_id": f"{series}{load}{seed}", "status": "completed", tr.SPURIOUS.key: v})
    return pd.DataFrame(rows)


def test_large_scale_reordering_claim_compares_tr_with_rps_and_drb_and_shows_every_scheme():
    (claim,) = [c for c in tr.FIG11.claims if "out-of-order prediction" in c.text]
    counts = {"ECMP": [0, 0, 0], "LetFlow": [0, 0, 0], "RPS": [9000, 9500, 8800], "DRB": [3000, 3100, 2900], "Presto": [700, 650, 720], "TR": [150, 160, 140]}
    v = claim.check(_large_frame(counts))
    assert v.outcome.value == "reproduced", v.text
    # Every scheme's count at load 0.8, mean over seeds, in the verdict line.
    assert "TR 150" in v.text and "RPS 9.1e+03" in v.text and "ECMP 0" in v.text and "LetFlow 0" in v.text and "Presto 690" in v.text
    # TR reordering as much as DRB is not "greatly reducing".
    counts["TR"] = [3200, 3000, 3100]
    assert claim.check(_large_frame(counts)).outcome.value != "reproduced"
    # Each large-scale figure draws the counts, not normalised to LetFlow (whose counts are 0).
    for fig in (tr.FIG11, tr.FIG12, tr.FIG13, tr.FIG14):
        drawn = {p.y.key: p for p in fig.panels}
        assert drawn[tr.SPURIOUS.key].normalize_to is None and drawn[tr.OUT_OF_ORDER.key].normalize_to is None
        assert sum("out-of-order prediction" in c.text for c in fig.claims) == 1


def test_the_zero_retransmission_claim_is_scoped_to_the_two_leaf_fabric():
    (claim,) = [c for c in tr.FIG7.claims if "always 0" in c.text]
    assert "two-leaf" in claim.text
    rows = [{"series": "TR", tr.RHO: r, "seed": s, "run_id": f"{r}{s}", "status": "completed", tr.SHORT_RETX.key: 0.0} for r in tr.RHOS for s in (1, 2, 3)]
    v = claim.check(pd.DataFrame(rows))
    assert v.outcome.value == "reproduced"
    assert "one input" in v.text and "Figs. 11-14" in v.text


def test_long_flow_granularity_is_a_reading_that_runs():
    from dclb import load_scenario
    from dclb.errors import ScenarioError
    from dclb.runner import engine_config

    (v,) = [v for v in tr.SENSITIVITY.variants if v.group == "long-flow granularity"]
    assert not v.skip and v.only == ("TR",) and v.set == ("lb.long_granularity=flowlet",)
    # The engine knows the option (and its gap), and names the values it takes for a wrong one.
    path = tr.PAPER.scenario_path("large.toml")
    cfg = engine_config(load_scenario(path, [*v.set, "lb.long_flowlet_gap_us=8"]))
    assert cfg["lb"]["params"] == {"long_granularity": "flowlet", "long_flowlet_gap_us": 8}
    with pytest.raises(ScenarioError, match="lb.long_granularity: expected one of packet, flowlet"):
        engine_config(load_scenario(path, ["lb.long_granularity=flowcell"]))
