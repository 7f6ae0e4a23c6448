"""DAR's reproduction: the split workloads are the shipped ones, the load axis splits one offered load between the
deadline and the non-deadline source, and ``Sweep.linked`` (the shared machinery it needs) plans one set of
overrides per grid value.
"""

from __future__ import annotations

import math

import pytest

from dclb import _core
from dclb.errors import ScenarioError
from dclb.reproduce import get_paper
from dclb.reproduce.papers import dar
from dclb.reproduce.plan import plan_paper
from dclb.reproduce.spec import PAPERS_DIR, Figure, Panel, Paper, Scale, Series, Sweep
from dclb.reproduce import metrics as m
from dclb.workloads import builtin_paths, parse_cdf


def _cdf(path):
    return parse_cdf(path.read_text(), str(path))


def _at(points, x):
    for (x0, p0), (x1, p1) in zip(points, points[1:]):
        if x0 <= x <= x1 and x1 > x0:
            return p0 + (p1 - p0) * (x - x0) / (x1 - x0)
    return 0.0 if x < points[0][0] else 1.0


@pytest.mark.parametrize("workload", sorted(dar.WORKLOADS))
def test_split_cdfs_recombine_to_the_shipped_workload(workload):
    whole = _cdf(builtin_paths()[workload])
    short = _cdf(PAPERS_DIR / "dar" / f"{workload}_short.cdf")
    long_ = _cdf(PAPERS_DIR / "dar" / f"{workload}_long.cdf")
    f = _at(whole, 100_000)
    assert short[-1][0] == 100_000 and long_[0][0] == 100_000
    # The mixture F * short + (1 - F) * long is the shipped CDF at every size.
    sizes = sorted({x for x, _ in whole} | {x for x, _ in short} | {x for x, _ in long_} | {50_000, 250_000})
    for x in sizes:
        mixed = f * _at(short, x) + (1 - f) * _at(long_, x)
        assert mixed == pytest.approx(_at(whole, x), abs=1e-8), x
    means = f * _core.cdf_mean(list(short)) + (1 - f) * _core.cdf_mean(list(long_))
    assert means == pytest.approx(_core.cdf_mean(list(whole)), rel=1e-7)  # probabilities written to 9 digits


def test_short_byte_shares_are_the_specs():
    # spec §9: web search ~ 0.010, web server ~ 0.102, data mining ~ 0.001 of the bytes below 100 KB.
    assert dar.short_byte_share("websearch") == pytest.approx(0.010226, abs=1e-6)
    assert dar.short_byte_share("webserver") == pytest.approx(0.101815, abs=1e-6)
    assert dar.short_byte_share("datamining") == pytest.approx(0.000700, abs=1e-6)


def test_every_point_splits_its_load_between_the_two_sources():
    pp = plan_paper(get_paper("dar"), "quick", ["5"])
    loads = set()
    for p in pp.plan.points:
        rho = p.values["traffic.load"]
        s0, s1 = p.scenario.traffic.sources
        share = dar.short_byte_share("webserver")
        assert float(s0["load"]) == pytest.approx(rho * share) and float(s1["load"]) == pytest.approx(rho * (1 - share))
        assert s0["deadline"]["kind"] == "uniform" and "deadline" not in s1
        loads.add(rho)
    assert sorted(loads) == dar.LOADS
    # 6 series x 5 loads x the quick scale's five seeds, each a distinct run.
    assert pp.paper.scales["quick"].seeds == 5
    assert len(pp.plan.points) == 150 and len({e.run_id for e in pp.entries}) == 150


def _paper(sweep: Sweep) -> Paper:
    fig = Figure("1", "t", (sweep,), (Panel("p", m.OVERALL_AFCT, x="traffic.load"),))
    return Paper("dar", "t", "c", "s", "t", (fig,), {"quick": Scale(seeds=1), "ci": Scale(seeds=1, trim=True)})


def test_linked_overrides_follow_the_grid_value():
    calls = []

    def linked(rho):
        calls.append(rho)
        return (f"traffic.sources.0.load={rho / 2!r}", f"traffic.sources.1.load={rho / 2!r}")

    series = (Series("ECMP", ("lb.scheme=ecmp",)),)
    pp = plan_paper(_paper(Sweep("websearch.toml", series, grid={"traffic.load": [0.2, 0.6], "lb.scheme": ["ecmp", "rps"]}, linked={"traffic.load": linked})), "quick")
    assert sorted(calls) == [0.2, 0.6]
    assert len(pp.plan.points) == 4
    for p in pp.plan.points:
        assert [float(s["load"]) for s in p.scenario.traffic.sources] == [p.values["traffic.load"] / 2] * 2
    # Trimmed grids (ci) call it only for the values kept; a sweep without links plans as before.
    pp = plan_paper(_paper(Sweep("websearch.toml", series, grid={"traffic.load": [0.2, 0.4, 0.6]}, linked={"traffic.load": linked})), "ci")
    assert sorted(p.values["traffic.load"] for p in pp.plan.points) == [0.2, 0.6]
    plain = plan_paper(_paper(Sweep("websearch.toml", series, grid={"traffic.load": [0.2, 0.6]})), "quick")
    assert all(float(s["load"]) != p.values["traffic.load"] / 2 for p in plain.plan.points for s in p.scenario.traffic.sources)


def test_a_linked_field_must_be_on_the_grid():
    sweep = Sweep("websearch.toml", (Series("ECMP", ()),), grid={"traffic.load": [0.5]}, linked={"traffic.flows": lambda v: ()})
    with pytest.raises(ScenarioError, match="linked field 'traffic.flows'"):
        plan_paper(_paper(sweep), "quick")


def test_miss_rate_claims_read_differences_and_a_baseline_that_never_misses():
    import pandas as pd

    claim = next(c for c in dar.FIG4.claims if c.text == "deadline miss rate at load 0.7: DAR -35.0% vs ECMP (L116)").check

    def frame(dar_miss, ecmp_miss):
        return pd.DataFrame(
            [{"series": s, "traffic.load": 0.7, "seed": i + 1, "deadline_miss_rate": v[i]} for s, v in (("DAR", dar_miss), ("ECMP", ecmp_miss)) for i in range(3)]
        )

    out = claim(frame([0.0] * 3, [0.0] * 3))
    assert out.outcome.value == "indistinguishable" and out.effect.scale == "difference"
    assert claim(frame([0.1, 0.11, 0.09], [0.0] * 3)).outcome.value == "opposite"
    out = claim(frame([0.1, 0.11, 0.09], [0.2, 0.21, 0.19]))
    assert out.holds is True and "(-50.0% of" in out.text
    assert math.isnan(dar._cancelled_share(pd.DataFrame({"deadline_us": [float("nan")], "state": ["completed"]})))


def test_fig6_csv_columns_carry_the_unit_their_name_says():
    """The AFCT of flows above 100 KB is shown in ms, so its column says ms (it said us over ms values)."""
    assert dar.LONG.key == "long_afct_ms" and dar.LONG.factor == 1e-3 and dar.LONG.summary == "long_afct_us"
    for m_ in (dar.AFCT, dar.P99, dar.LONG):
        assert m_.key.endswith("_ms") and "(ms)" in m_.label
