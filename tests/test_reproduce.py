"""`dclb reproduce`: every written paper end to end at ci scale, verdicts computed from data, bad input.

Each paper's ci run produces every figure file, its data and the report; a second invocation reuses every run.
The verdict functions are checked on crafted frames: changing the data changes the verdict.
"""

from __future__ import annotations

import html as html_lib
import math

import pandas as pd
import pytest

from conftest import dclb_cli
from dclb import reproduce as rp
from dclb.reproduce import verdict as v
from dclb.reproduce.run import run_paper


@pytest.mark.parametrize("key", rp.available())
def test_each_paper_reproduces_end_to_end_at_ci_scale(key, tmp_path):
    paper = rp.get_paper(key)
    result = run_paper(paper, "ci", out=tmp_path, jobs=2, progress=False, log=lambda _: None)
    assert result.failed == 0
    assert len(result.figures) == len(paper.figures)
    html = result.report.read_text()
    for fr in result.figures:
        assert fr.error is None, f"Fig. {fr.figure.id}: {fr.error}"
        assert fr.image is not None and fr.image.stat().st_size > 5000
        data = pd.read_csv(fr.data)
        assert len(data) > 0 and set(data["status"]) == {"completed"}
        assert f"Fig. {fr.figure.id}:" in html
        assert len(fr.verdicts) == len(fr.figure.claims)
        for _, verdict in fr.verdicts:
            assert "could not be computed" not in verdict.text
            assert html_lib.escape(verdict.text) in html
    again = run_paper(paper, "ci", out=tmp_path, jobs=2, progress=False, log=lambda _: None)
    assert again.ran == 0 and again.runs == result.runs


def test_a_figure_drawn_alone_keeps_the_other_figures_in_the_report(tmp_path):
    """``--figure N`` into a directory that holds a whole paper's report: the report still shows every figure
    drawn there at that scale, and says which were drawn earlier; a section drawn at another scale is left out."""
    import json

    paper = rp.get_paper("lbt")
    quiet = dict(out=tmp_path, jobs=2, progress=False, log=lambda _: None)
    run_paper(paper, "ci", ["2", "5"], **quiet)
    again = run_paper(paper, "ci", ["5"], **quiet)
    html = again.report.read_text()
    assert "Fig. 2:" in html and "Fig. 5:" in html
    assert "Drawn by an earlier invocation into this directory, at the same scale: Fig. 2 (" in html
    assert "Not drawn yet at this scale: Fig. 3, " in html
    n = len(paper.figure("2").claims) + len(paper.figure("5").claims)
    assert sum(html.count(f'<span class="{c}">') for c in ("holds", "fails", "unknown")) == n
    section = again.out / "fig2.section.json"
    data = json.loads(section.read_text())
    section.write_text(json.dumps({**data, "scale": "quick"}))
    html = run_paper(paper, "ci", ["5"], **quiet).report.read_text()
    assert "Fig. 2:" not in html and "Not drawn yet at this scale: Fig. 2, Fig. 3, " in html
    section.write_text("{not json")
    assert "Fig. 2:" not in run_paper(paper, "ci", ["5"], **quiet).report.read_text()


def _frame(values: dict[tuple[str, float], list[float]]) -> pd.DataFrame:
    rows = []
    for (series, load), ys in values.items():
        for seed, y in enumerate(ys, start=1):
            rows.append({"series": series, "traffic.load": load, "seed": seed, "run_id": f"{series}-{load}-{seed}", "status": "completed", "afct": y})
    return pd.DataFrame(rows)


def test_relative_verdict_follows_the_data():
    f = _frame({("LBT", 0.5): [4.0, 6.0], ("ECMP", 0.5): [10.0, 10.0]})
    out = v.relative(f, "LBT vs ECMP", "afct", "LBT", "ECMP", (-55.9, -65.4), {"traffic.load": 0.5})
    assert out.holds is True and "dclb -50.0%" in out.text and "same direction, smaller" in out.text
    f.loc[f["series"] == "LBT", "afct"] = 12.0
    out = v.relative(f, "LBT vs ECMP", "afct", "LBT", "ECMP", (-55.9, -65.4), {"traffic.load": 0.5})
    assert out.holds is False and "+20.0%" in out.text and "opposite" in out.text
    f.loc[f["series"] == "LBT", "afct"] = 4.0
    out = v.relative(f, "LBT vs ECMP", "afct", "LBT", "ECMP", (-55.9, -65.4), {"traffic.load": 0.5})
    assert out.holds is True and "within the paper's range" in out.text
    assert v.relative(f, "x", "afct", "LBT", "ECMP", -50, {"traffic.load": 0.7}).holds is None


def test_ordering_and_rank_follow_the_data():
    f = _frame({("A", 0.3): [1.0], ("A", 0.7): [2.0], ("B", 0.3): [1.5], ("B", 0.7): [3.0], ("C", 0.3): [0.5], ("C", 0.7): [4.0]})
    pts = v.points("traffic.load", [0.3, 0.7])
    assert v.ordering(f, "A beats B", "afct", "A", ["B"], pts).holds is True
    out = v.ordering(f, "A beats B, C", "afct", "A", ["B", "C"], pts)
    assert out.holds is False and "3 of 4" in out.text and "C at load 0.3" in out.text
    assert v.ordering(f, "A beats C somewhere", "afct", "A", ["C"], pts, need="any").holds is True
    assert v.rank(f, "r", "afct", "A", 1, {"traffic.load": 0.7}).holds is True
    assert v.rank(f, "r", "afct", "A", 1, {"traffic.load": 0.3}).holds is False
    assert v.rank(f, "r", "afct", "A", 2, {"traffic.load": 0.3}, higher_is_better=True).holds is True
    f.loc[(f["series"] == "A") & (f["traffic.load"] == 0.7), "afct"] = math.nan
    assert v.ordering(f, "A beats B", "afct", "A", ["B"], v.points("traffic.load", [0.7])).holds is None


def test_reproduce_rejects_bad_input_with_one_line(tmp_path):
    r = dclb_cli("reproduce", "nosuch", "--list")
    assert r.returncode == 2 and "unknown paper 'nosuch'" in r.stderr and "Traceback" not in r.stderr
    key = rp.available()[0]
    r = dclb_cli("reproduce", key, "--figure", "999", "--list")
    assert r.returncode == 2 and "has no figure '999'" in r.stderr
    r = dclb_cli("reproduce", key, "--scale", "huge", "--list")
    assert r.returncode == 2 and "huge" in r.stderr
    r = dclb_cli("reproduce", key, "--list", "--scale", "ci")
    assert r.returncode == 0 and "Fig." in r.stdout


def test_a_figure_says_when_its_runs_carried_well_under_the_nominal_load():
    from dclb.reproduce.run import load_note

    class Reader:
        def __init__(self, ratios):
            self.ratios = ratios

        def record(self, run_id):
            return {"summary": {"carried_load_ratio": self.ratios[run_id]}}

    frame = pd.DataFrame({"run_id": ["a", "b", "c"], "status": ["completed", "completed", "failed"]})
    assert load_note(frame, Reader({"a": 0.95, "b": 1.1, "c": 0.1})) is None  # the failed run does not count
    note = load_note(frame, Reader({"a": 0.3, "b": 1.1, "c": 0.1}))
    assert note is not None and "1 of 2 runs" in note and "30%" in note


def test_mdtlb_fig3_verdicts_follow_the_data():
    from dclb.reproduce.papers import mdtlb as md

    # A queue that fills and empties every millisecond for 5 ms refills 5 times (the first fill included); a
    # queue that never empties does not oscillate by this measure.
    t = [i * 10.0 for i in range(501)]
    saw = pd.DataFrame({"time_us": t, "value": [60.0 * (1 - abs((x % 1000) - 500) / 500) for x in t]})
    assert md._refills_per_ms(saw) == pytest.approx(1.0)
    assert md._refills_per_ms(saw.assign(value=saw["value"] + 100)) == 0.0

    series = md.WEIGHTED + (md.SCALED_K,)

    def frame(**cols: float) -> pd.DataFrame:
        return pd.DataFrame([{"series": s, "seed": 1, **cols} for s in series])

    assert md._hetero_throughput(frame(a_gbps_mean=5.0)).holds is True
    assert md._hetero_throughput(frame(a_gbps_mean=10.5)).holds is False
    assert md._hetero_oscillation(frame(queue_s0_l2_refills_per_ms=1.0, queue_s0_l2_mean=15.0)).holds is True
    assert md._hetero_oscillation(frame(queue_s0_l2_refills_per_ms=0.1, queue_s0_l2_mean=15.0)).holds is False
    assert md._hetero_mechanism(frame(queue_s0_l2_peak_over_k=1.5, marks_share_s0_l2=0.8)).holds is True
    below = md._hetero_mechanism(frame(queue_s0_l2_peak_over_k=0.63, marks_share_s0_l2=0.0))
    assert below.holds is False and "peak 0.63 K, 0% of the marks" in below.text
    assert md._hetero_throughput(pd.DataFrame(columns=["series", "a_gbps_mean"])).holds is None


def test_figure_frame_holds_one_run_s_tables_at_a_time():
    """A paper-scale figure reads hundreds of per-flow tables: drawing one must not hold them all at once. The
    store counts the tables the reader holds whenever it is asked for another; without the reader's release in
    ``figure_frame`` the count grows with the runs."""
    from dclb.reproduce.data import RunReader, figure_frame
    from dclb.reproduce.plan import plan_paper

    pp = plan_paper(rp.get_paper("lbt"), "ci", ["5"])
    fig = pp.figures[0]
    runs = {e.run_id for e in pp.entries}
    assert len(runs) > 2
    held: list[int] = []

    class CountingStore:
        def is_complete(self, run_id):
            return True

        def read_record(self, run_id):
            return {"summary": {}}

        def flows(self, run_id):
            held.append(len(reader._flows))
            return pd.DataFrame(
                {"size_bytes": [50_000, 200_000], "fct_us": [100.0, 900.0], "state": "completed", "transport": "tcp", "best_effort": False}
            )

    reader = RunReader(CountingStore())
    frame = figure_frame(pp, fig, reader)
    assert len(held) == len(pp.entries), "each entry's flows are read once"
    assert max(held) == 0, f"tables of earlier runs still held: {held}"
    assert not reader._flows
    assert frame["short_afct_ms"].tolist() == [0.1] * len(frame)
