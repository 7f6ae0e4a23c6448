"""`dclb reproduce PAPER --sensitivity`: headline claims re-judged under unstated settings and other readings.

What is checked: every paper's declaration resolves (its headline claims exist, each variant plans at every scale,
changes runs of its own and, for a reading, only the scheme's); only the points and series the headline claims read
are planned; one paper end to end at ci scale (every variant ran or says why not, a CSV row and a table row per
claim and variant, resumed without running anything, the section kept by a later invocation); and, on crafted
frames, a variant that flips a claim makes its reason "setting-dependent", in the sensitivity table and in the
report's summary.
"""

from __future__ import annotations

import html as html_lib

import pandas as pd
import pytest

from conftest import dclb_cli
from dclb import reproduce as rp
from dclb.errors import ScenarioError
from dclb.reproduce import sensitivity as sv
from dclb.reproduce import sensitivity_report as sr
from dclb.reproduce.claims import FrameData, compare, level, rank, trend
from dclb.reproduce.run import run_paper
from dclb.reproduce.spec import Metric
from dclb.reproduce.verdict import Outcome, Reason, judge_claim

LOAD = "traffic.load"


@pytest.mark.parametrize("key", rp.PAPERS)
def test_each_paper_declares_headline_claims_and_variants_that_plan_at_every_scale(key):
    paper = rp.get_paper(key)
    sens = sv.of_paper(key)
    assert sens is not None
    claims = [c for h in sens.headlines for c in h.resolve(paper.figure(h.figure))]
    assert 2 <= len(claims) <= 5 and len({c.text for c in claims}) == len(claims)
    assert all(c.check.__class__.__name__ != "NotTestable" for c in claims)
    kinds = {v.kind for v in sens.variants}
    assert kinds == {sv.SETTING, sv.READING}, "each paper varies settings and readings of its scheme"
    for scale in ("ci", "quick", "paper"):
        splan = sv.plan_sensitivity(paper, sens, scale)
        shipped = splan.runs_of(None)
        assert shipped
        for vp in splan.variants:
            v = vp.variant
            assert vp.status != sv.INVALID, f"{key} {scale} {v.label}: {vp.why}"
            if vp.status in (sv.SKIPPED, sv.NOT_APPLICABLE):
                assert vp.why, v.label
                continue
            # a variant that ran judges other runs than the shipped ones (its own, or, for a reading that
            # equals one of the figure's series, that series' runs: MDTLB's rtt_only) ...
            assert splan.runs_of(vp) != shipped, f"{key} {scale}: {v.label} changes no run"
            # ... and a reading only the scheme's: every other series' run is the shipped one
            if v.kind == sv.READING:
                for e in vp.pp.entries:
                    same = [s for s in splan.shipped.entries if (s.figure, s.series, s.values, s.seed) == (e.figure, e.series, e.values, e.seed)]
                    assert same, (v.label, e)
                    assert (e.run_id == same[0].run_id) == (e.series not in v.only), (v.label, e.series)
    skipped = [v for v in sens.variants if v.skip]
    assert all(v.skip.startswith(("needs engine option", "not applicable: ")) for v in skipped)


def test_only_the_points_and_series_the_headline_claims_read_are_planned():
    paper = rp.get_paper("lbt")
    splan = sv.plan_sensitivity(paper, sv.of_paper("lbt"), "ci")
    (hf,) = splan.headlines
    # ci trims every grid to its ends (0.1 and 0.7); the headline claims read 0.5 (the cut, the tradeoff) and 0.3 (the tail)
    grids = sorted((sw.grid["traffic.load"], sw.grid["traffic.workload"]) for sw in hf.derived.sweeps)
    assert grids == [([0.3], ["datamining"]), ([0.5], ["datamining"])]
    assert {e.values["traffic.load"] for e in splan.shipped.entries} == {0.3, 0.5}
    mdtlb = sv.plan_sensitivity(rp.get_paper("mdtlb"), sv.of_paper("mdtlb"), "ci")
    fig10 = next(h for h in mdtlb.headlines if h.figure.id == "10")
    assert [sw.series[0].label for sw in fig10.derived.sweeps] and not fig10.derived.panels
    # "beats Clove and Hermes at 0.9" and "below ECMP at every load" read 4 of the 10 series (and MDTLB read by
    # RTT alone, every MDTLB claim's alternative), never DRB or Presto
    read = {(e.series, e.values["traffic.load"]) for e in mdtlb.shipped.entries if e.figure == "10"}
    assert {s for s, _ in read} == {"MDTLB", "MDTLB (RTT only)", "ECMP", "Clove", "Hermes"}
    assert {x for s, x in read if s == "Clove"} == {0.9} and {x for s, x in read if s == "ECMP"} == {0.3, 0.5, 0.7, 0.9}


def test_reads_of_each_shape():
    m = Metric("afct_ms", "AFCT (ms)", summary="afct")
    assert sv.reads(compare(m, "A", ["B", "C"], at={LOAD: 0.5})) == [
        (frozenset({"A"}), {LOAD: 0.5}), (frozenset({"B"}), {LOAD: 0.5}), (frozenset({"A"}), {LOAD: 0.5}), (frozenset({"C"}), {LOAD: 0.5})
    ]
    assert sv.reads(rank(m, "A", at={LOAD: 0.9})) == [(None, {LOAD: 0.9})]
    assert sv.reads(trend(m, "A", LOAD, 0.1, 0.7, goes="least")) == [(None, {LOAD: 0.1}), (None, {LOAD: 0.7})]
    assert sv.reads(trend(m, "A", LOAD, 0.1, 0.7, goes="least", than=["B"])) == [(frozenset({"A", "B"}), {LOAD: 0.1}), (frozenset({"A", "B"}), {LOAD: 0.7})]
    assert sv.reads(trend(m, "A", LOAD)) == [(frozenset({"A"}), {})]  # no ends given: the whole axis
    assert sv.reads(level(m, ["A"], {LOAD: 0.3}, within=(0, 1))) == [(frozenset({"A"}), {LOAD: 0.3})]


def test_settings_around_the_shipped_values_in_each_file_s_unit():
    lbt = {v.label: v for v in sv.of_paper("lbt").variants}
    # main.toml ships K = 65 and 256-packet buffers, initial window 10, DCTCP, 5 ms minimum RTO, inter-leaf pairs only
    for label in ("topology.ecn_k_packets=33", "topology.ecn_k_packets=130", "topology.buffer_packets=128", "topology.buffer_packets=512",
                  "transport.init_cwnd_packets=2", "transport.min_rto_us=1000", "transport.min_rto_us=200000", "traffic.inter_leaf_only=false"):
        assert lbt[label].set == (label,)
    assert lbt["NewReno without ECN (traffic.transport=newreno)"].set == ("traffic.transport=newreno",)
    tr = {v.label: v for v in sv.of_paper("tr").variants}
    # packets in the 1 Gbps motivation file, bytes in the 40 Gbps one; intra-leaf pairs only where they can exist
    assert dict(tr["ECN K x0.5"].by_scenario) == {"motivation.toml": ("topology.ecn_k_packets=10",), "large.toml": ("topology.ecn_k_bytes=48750",)}
    assert dict(tr["traffic.inter_leaf_only=true (large.toml only)"].by_scenario) == {"large.toml": ("traffic.inter_leaf_only=true",)}
    mdtlb = {v.label: v for v in sv.of_paper("mdtlb").variants}
    # MDTLB ships NewReno without marking: its transport variant is DCTCP with a threshold
    assert mdtlb["DCTCP (traffic.transport=dctcp topology.ecn_k_packets=65)"].set == ("traffic.transport=dctcp", "topology.ecn_k_packets=65")
    assert mdtlb["ECN K"].skip.startswith("not applicable")


def test_a_headline_that_names_no_claim_is_one_clear_error():
    paper = rp.get_paper("lbt")
    sens = sv.of_paper("lbt")
    bad = sv.Sensitivity((sv.Headline("10", ("no such words",), "LBT", "ECMP", sens.headlines[0].short, sens.headlines[0].long, {LOAD: 0.5}),), ())
    with pytest.raises(ScenarioError, match="headline 'no such words' matches 0 claims of Fig. 10"):
        sv.plan_sensitivity(paper, bad, "ci")
    with pytest.raises(ValueError, match="variant labels must differ"):
        sv.Sensitivity((), (sv.setting("x", "a=1"), sv.setting("x", "b=2")))


def _dar_frame(dar_miss: float, ecmp_miss: float, seeds: int = 3, noise: float = 0.01) -> pd.DataFrame:
    """DAR's Fig. 4 points at load 0.7: miss rates, AFCTs and long AFCTs per series and seed (seed-shared factors)."""
    rows = []
    for series, miss, afct in (("DAR", dar_miss, 1.0), ("ECMP", ecmp_miss, 1.5)):
        for i in range(seeds):
            wiggle = 1 + noise * ((i * 7) % 3 - 1)
            rows.append(
                {"series": series, LOAD: 0.7, "seed": i + 1, "run_id": f"{series}-{i}", "status": "completed",
                 "deadline_miss_rate": miss * wiggle, "overall_afct_ms": afct * wiggle, "long_afct_ms": 2.0 * wiggle}
            )
    return pd.DataFrame(rows)


def test_a_variant_that_flips_a_claim_makes_it_setting_dependent(tmp_path):
    """Crafted frames for DAR's Fig. 4: as shipped DAR misses as many deadlines as ECMP (within the noise of three
    seeds); under one setting it misses far fewer. The claim's reason names that setting, in the sensitivity table
    and in the summary of the report, where the figure's own frame is judged with the variants as alternatives."""
    paper = rp.get_paper("dar")
    splan = sv.plan_sensitivity(paper, sv.of_paper("dar"), "ci", ["4"])
    flip = next(vp for vp in splan.variants if vp.variant.label == "transport.init_cwnd_packets=2")
    shipped = _dar_frame(0.30, 0.30, noise=0.05)
    frames = {(None, "4"): shipped}
    for vp in splan.variants:
        if vp.status == sv.JUDGED:
            frames[(vp.variant.label, "4")] = _dar_frame(0.10, 0.30) if vp is flip else shipped
    result = sv.SensitivityResult(splan, sv.judge(splan, frames))
    miss = next(cs for cs in result.claims if cs.claim.text.startswith("deadline miss rate at load 0.7: DAR -35.0% vs ECMP"))
    assert miss.judgement.outcome is Outcome.INDISTINGUISHABLE
    assert miss.judgement.reason is Reason.SETTING and miss.judgement.detail == "holds with transport.init_cwnd_packets=2"
    cell = next(c for c in miss.cells if c.variant is flip.variant)
    assert cell.verdict.outcome is Outcome.REPRODUCED and miss.holds_under[0] == 1
    # the same claim with that variant failing too falls back to "within noise"
    frames[(flip.variant.label, "4")] = shipped
    again = next(cs for cs in sv.judge(splan, frames) if cs.claim is miss.claim)
    assert again.judgement.reason is Reason.NOISE
    # the report's summary judges the figure's own frame with the variants as alternatives (what run_paper hands
    # judge_claim for a headline claim; nothing for any other claim)
    fig = paper.figure("4")
    settings = result.settings_for
    assert settings("4", miss.claim) and settings("4", fig.claims[0]) == []
    j = judge_claim(miss.claim, FrameData(shipped), settings("4", miss.claim))
    assert j.reason is Reason.SETTING and "transport.init_cwnd_packets=2" in j.detail
    # the table and the CSV: a row per claim and variant, skipped and not-applicable ones with why
    rows = sr.csv_rows(result)
    assert len(rows) == len(result.claims) * (len(splan.variants) + 1)
    table = sr.section_html(result)
    for vp in splan.variants:
        assert html_lib.escape(vp.variant.label) in table
    skipped = [r for r in rows if r["variant"] == "load basis: access"]
    assert skipped and all(r["status"].startswith("skipped: not applicable") for r in skipped)
    table_one = [r for r in rows if r["variant"] == "web search as Table I"]
    assert table_one and all(r["status"] == sv.JUDGED for r in table_one)  # Fig. 4 is web search: it applies


def test_sensitivity_end_to_end_at_ci_scale(tmp_path):
    """DAR (the cheapest headline runs at ci): every variant ran or says why not; the CSV and the report's table
    hold a row per claim and variant; the summary tags the headline claims; a second invocation runs nothing; a
    later invocation without --sensitivity keeps the section."""
    paper = rp.get_paper("dar")
    quiet = dict(out=tmp_path, jobs=2, progress=False, log=lambda _: None)
    result = run_paper(paper, "ci", ["4", "6"], sensitivity=True, **quiet)
    s = result.sensitivity
    assert s is not None and s.failed == 0 and s.runs == len(s.splan.plan.points) > 0
    sens = sv.of_paper("dar")
    n_claims = sum(len(h.claims) for h in sens.headlines)
    table = pd.read_csv(result.out / "sensitivity.csv")
    assert list(table.columns) == list(sr.CSV_COLUMNS)
    assert len(table) == n_claims * (len(sens.variants) + 1)
    assert set(table["variant"]) == {sv.SHIPPED, *(v.label for v in sens.variants)}
    judged = table[table["status"] == sv.JUDGED]
    # every variant that runs was judged on its own runs (one seed at ci: the noise is unknown)
    ran = {vp.variant.label for vp in s.splan.variants if vp.status == sv.JUDGED}
    assert ran and ran | {sv.SHIPPED} == set(judged["variant"])
    assert set(judged["verdict"]) == {"cannot tell"} and judged["seeds"].eq(1).all()
    assert set(table.loc[table["variant"] == "web search as Table I", "status"]) == {sv.JUDGED, "not applicable: changes websearch.toml only; this figure runs datamining.toml"}
    store = result.out.parent / "store"
    for point in s.splan.plan.points:
        assert (store / "runs" / point.run_id).is_dir()
    page = result.report.read_text()
    assert "Sensitivity: the headline claims under other settings and readings" in page
    for v in sens.variants:
        assert html_lib.escape(v.label) in page
    summary = pd.read_csv(result.out / "summary.csv")
    assert len(summary) == len(paper.figure("4").claims) + len(paper.figure("6").claims)
    summary_part = page[page.index("<h2>Summary</h2>"): page.index("<h2 id='sensitivity'>")]
    assert summary_part.count("<span class='headline'>headline</span>") == n_claims
    again = run_paper(paper, "ci", ["4", "6"], sensitivity=True, **quiet)
    assert again.ran == 0 and again.sensitivity.ran == 0 and again.sensitivity.runs == s.runs
    later = run_paper(paper, "ci", ["4"], **quiet)
    assert later.sensitivity is None and "drawn by an earlier <code>--sensitivity</code> invocation" in later.report.read_text()


@pytest.mark.parametrize("key", [k for k in rp.PAPERS if k != "dar"])
def test_each_paper_s_headline_runs_and_judges_at_ci_scale(key, tmp_path):
    """The other papers at ci, with one setting and one reading of their own (the whole list costs 30-80 s a paper;
    it is what the planning test above checks): runs complete, every claim is judged under each, both the short-
    and the long-flow comparison have a value."""
    from dataclasses import replace

    paper = rp.get_paper(key)
    sens = sv.of_paper(key)
    runnable = [v for v in sens.variants if not v.skip]
    pick = (next(v for v in runnable if v.kind == sv.SETTING), next(v for v in runnable if v.kind == sv.READING))
    splan = sv.plan_sensitivity(paper, replace(sens, variants=pick), "ci")
    result = sv.run_sensitivity(splan, tmp_path, jobs=2, progress=False, log=lambda _: None)
    assert result.failed == 0 and result.ran == result.runs == len(splan.plan.points)
    assert len(result.claims) == sum(len(h.claims) for h in sens.headlines)
    for cs in result.claims:
        assert [c.label for c in cs.cells] == [sv.SHIPPED, *(v.label for v in pick)]
        for c in cs.cells:
            if c.status == sv.NOT_APPLICABLE:
                continue
            assert c.status == sv.JUDGED and c.verdict.outcome is Outcome.CANNOT_TELL and "noise unknown with 1 seed" in c.verdict.text
            assert c.short.effect is not None and c.short.effect.n == 1 and c.long.effect is not None and c.long.effect.n == 1
        assert cs.judgement.reason is Reason.NOISE_UNKNOWN


def test_cli_lists_the_variants_and_rejects_a_bad_scale():
    r = dclb_cli("reproduce", "dar", "--list", "--sensitivity", "--scale", "ci")
    assert r.returncode == 0, r.stderr
    assert "sensitivity at scale ci: headline Fig. 6 (2 claims), Fig. 4 (2 claims)" in r.stdout
    assert "lb.reclassify=first_packet (DAR)" in r.stdout and "B = unsent bytes (DAR)" in r.stdout and "skipped: not applicable" in r.stdout
    r = dclb_cli("reproduce", "dar", "--sensitivity", "--scale", "huge")
    assert r.returncode == 2 and "huge" in r.stderr and "Traceback" not in r.stderr
