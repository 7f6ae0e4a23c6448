"""TR's reproduction: the analytic model of Fig. 6 (spec seed-schemes/tr.md §5, test T12), the machinery it added to
``dclb reproduce`` (derived axes, switch-table metrics, normalisation at a grid point) and its verdict helpers.

The end-to-end ci run of the paper is in test_reproduce.py (parametrised over every written paper)."""

from __future__ import annotations

import html
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
    # every (series, rho, seed) is its own run; 3 series x 5 ratios x 2 seeds
    assert len(pp.plan.points) == 30 and len({e.run_id for e in pp.entries}) == 30
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
# Verdict helpers: a change in the data changes the verdict


def _frame(values: dict[tuple[str, float], float], field: str = tr.RHO) -> pd.DataFrame:
    return pd.DataFrame([{"series": s, field: x, "seed": 1, "run_id": f"{s}{x}", "status": "completed", "y": y} for (s, x), y in values.items()])


def test_beats_trend_zero_steady():
    f = _frame({("A", 1.5): 1.0, ("A", 3.5): 2.0, ("B", 1.5): 3.0, ("B", 3.5): 4.0, ("C", 1.5): 2.5, ("C", 3.5): 1.5})
    pts = tr.rho_points([1.5, 3.5])
    assert tr.beats(f, "s", "y", ["A"], ["B"], pts).holds is True
    out = tr.beats(f, "s", "y", ["A"], ["B", "C"], pts)
    assert out.holds is False and "3 of 4" in out.text and "C at rtt_ratio 3.5 (C/A" in out.text
    assert tr.beats(f, "s", "y", ["B"], ["A"], pts, higher=True).holds is True
    assert tr.trend(f, "s", "y", ["A", "B"], tr.RHO, 1.5, 3.5, rises=True).holds is True
    assert tr.trend(f, "s", "y", ["A", "C"], tr.RHO, 1.5, 3.5, rises=True).holds is False
    assert tr.steady(f, "s", "y", "C", tr.RHO, 1.5, 3.5).holds is False
    assert tr.steady(f, "s", "y", "A", tr.RHO, 1.5, 3.5).holds is True
    z = _frame({("T", 1.5): 0.0, ("T", 3.5): 0.0})
    assert tr.always_zero(z, "s", "y", "T").holds is True
    z.loc[1, "y"] = 0.001
    assert tr.always_zero(z, "s", "y", "T").holds is False
    assert tr.beats(f, "s", "y", ["A"], ["B"], tr.rho_points([2.0])).holds is None


def test_relative_helpers_and_worst_two_and_lowest_at():
    f = _frame({("TR", 0.2): 8.0, ("TR", 0.8): 6.0, ("LetFlow", 0.2): 10.0, ("LetFlow", 0.8): 10.0, ("RPS", 0.2): 30.0, ("RPS", 0.8): 20.0, ("DRB", 0.2): 20.0, ("DRB", 0.8): 30.0, ("ECMP", 0.2): 12.0, ("ECMP", 0.8): 11.0}, tr.LOAD)
    pts = tr.load_points([0.2, 0.8])
    out = tr.mean_relative(f, "s", "y", "TR", "LetFlow", pts, -20.0)
    assert out.holds is True and "mean -30.0%" in out.text and "load 0.2: -20.0%" in out.text
    out = tr.best_relative(f, "s", "y", "TR", ["LetFlow", "RPS"], pts, -60.0)
    assert out.holds is True and "vs RPS at load 0.2" in out.text and "-73.3%" in out.text
    assert tr.worst_two(f, "s", "y", ["RPS", "DRB"], pts).holds is True
    f.loc[(f["series"] == "ECMP") & (f[tr.LOAD] == 0.8), "y"] = 40.0
    out = tr.worst_two(f, "s", "y", ["RPS", "DRB"], pts)
    assert out.holds is False and "1 of 2" in out.text
    f.loc[f["series"] == "TR", "y"] = 12.0
    assert tr.mean_relative(f, "s", "y", "TR", "LetFlow", pts, -20.0).holds is False
    g = _frame({("w", 10000): 1.2, ("w", 100000): 1.0, ("w", 1000000): 1.1, ("v", 10000): 0.9, ("v", 100000): 1.0, ("v", 1000000): 1.3}, tr.TL)
    out = tr.lowest_at(g, "s", "y", ["w", "v"], tr.TL, 100000, [10000, 1000000])
    assert out.holds is False and "higher at 3 of 4" in out.text
    assert tr.lowest_at(g, "s", "y", ["w"], tr.TL, 100000, [10000, 1000000]).holds is True


def test_every_claim_has_a_verdict_on_an_empty_frame():
    empty = pd.DataFrame(columns=["series", "seed", "run_id", "status"])
    for fig in tr.PAPER.figures:
        for claim in fig.claims:
            verdict = claim.check(empty)
            assert verdict.holds is None, (fig.id, claim.text, verdict.text)
            # the report shows it as written (test_reproduce.py looks for it in the HTML)
            assert html.escape(verdict.text) == verdict.text, verdict.text
