"""`dclb reproduce`: every paper end to end at ci scale, verdicts computed from data, bad input.

Each paper's ci run produces every figure file, its data, the report and its summary; a second invocation reuses
every run. The verdict rule and its reasons are checked on crafted frames in test_reproduce_verdicts.py.
"""

from __future__ import annotations

import html as html_lib

import pandas as pd
import pytest

from conftest import dclb_cli
from dclb import reproduce as rp
from dclb.reproduce.report import SUMMARY_COLUMNS
from dclb.reproduce.run import run_paper
from dclb.reproduce.verdict import RULE


@pytest.mark.parametrize("key", rp.PAPERS)
def test_each_paper_reproduces_end_to_end_at_ci_scale(key, tmp_path):
    paper = rp.get_paper(key)
    result = run_paper(paper, "ci", out=tmp_path, jobs=2, progress=False, log=lambda _: None)
    assert result.failed == 0
    assert len(result.figures) == len(paper.figures)
    html = result.report.read_text()
    assert html_lib.escape(RULE) in html  # every report states the verdict rule
    summary = pd.read_csv(result.out / "summary.csv")
    assert list(summary.columns) == list(SUMMARY_COLUMNS)
    assert len(summary) == sum(len(f.claims) for f in paper.figures) == len(result.rows)
    # ci runs one seed: nothing that reads a difference can be told; not-testable claims say so
    assert set(summary["reason"]) <= {"noise unknown", "no data", "not testable", "fails under everything tried"}
    for fr in result.figures:
        assert fr.error is None, f"Fig. {fr.figure.id}: {fr.error}"
        assert fr.image is not None and fr.image.stat().st_size > 5000
        data = pd.read_csv(fr.data)
        assert len(data) > 0 and set(data["status"]) == {"completed"}
        assert f"Fig. {fr.figure.id}:" in html
        assert fr.header.seeds == (1,) and fr.header.flows is not None and fr.header.command.endswith(f"--figure {fr.figure.id} --scale paper")
        assert html_lib.escape(fr.header.command) in html
        assert len(fr.judgements) == len(fr.figure.claims)
        for j in fr.judgements:
            assert "could not be computed" not in j.verdict.text
            assert html_lib.escape(j.verdict.text) in html
    again = run_paper(paper, "ci", out=tmp_path, jobs=2, progress=False, log=lambda _: None)
    assert again.ran == 0 and again.runs == result.runs


def test_a_figure_drawn_alone_keeps_the_other_figures_in_the_report(tmp_path):
    """``--figure N`` into a directory that holds a whole paper's report: the report still shows every figure
    drawn there at that scale, and says which were drawn earlier; a section drawn at another scale is left out."""
    import json

    paper = rp.get_paper("lbt")
    quiet = dict(out=tmp_path, jobs=2, progress=False, log=lambda _: None)
    first = run_paper(paper, "ci", ["2", "5"], **quiet)
    again = run_paper(paper, "ci", ["5"], **quiet)
    html = again.report.read_text()
    assert "Fig. 2:" in html and "Fig. 5:" in html
    assert "Drawn by an earlier invocation into this directory, at the same scale: Fig. 2 (" in html
    assert "Not drawn yet at this scale: Fig. 3, " in html
    n = len(paper.figure("2").claims) + len(paper.figure("5").claims)
    assert len(pd.read_csv(again.out / "summary.csv")) == n == len(again.rows)
    # What the CLI prints after --figure 5 is what the report holds: both figures, every claim, the same lines.
    assert [f.figure.id for f in again.figures] == ["2", "5"] and again.figures[0].earlier
    lines = [v.text for f in again.figures for _, v in f.verdicts]
    assert lines == [v.text for f in first.figures for _, v in f.verdicts]
    assert [v.holds for f in again.figures for _, v in f.verdicts] == [r["holds"] for r in again.rows]
    section = again.out / "fig2.section.json"
    data = json.loads(section.read_text())
    section.write_text(json.dumps({**data, "scale": "quick"}))
    html = run_paper(paper, "ci", ["5"], **quiet).report.read_text()
    assert "Fig. 2:" not in html and "Not drawn yet at this scale: Fig. 2, Fig. 3, " in html
    section.write_text("{not json")
    assert "Fig. 2:" not in run_paper(paper, "ci", ["5"], **quiet).report.read_text()


def test_reproduce_rejects_bad_input_with_one_line(tmp_path):
    r = dclb_cli("reproduce", "nosuch", "--list")
    assert r.returncode == 2 and "unknown paper 'nosuch'" in r.stderr and "Traceback" not in r.stderr
    key = rp.PAPERS[0]
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
    throughput, oscillation, mechanism = (c.check for c in md.FIG3.claims)

    def frame(**cols: list[float]) -> pd.DataFrame:
        n = min(len(v) for v in cols.values())
        return pd.DataFrame([{"series": s, "seed": i + 1, **{k: v[i] for k, v in cols.items()}} for s in series for i in range(n)])

    assert throughput(frame(a_gbps_mean=[5.0, 5.2, 4.9])).holds is True
    assert throughput(frame(a_gbps_mean=[10.5, 10.4, 10.6])).holds is False
    assert throughput(frame(a_gbps_mean=[5.0])).holds is None  # one seed: noise unknown
    assert oscillation(frame(queue_s0_l2_refills_per_ms=[1.0, 1.1, 0.9])).holds is True
    assert oscillation(frame(queue_s0_l2_refills_per_ms=[0.1, 0.12, 0.09])).holds is False
    assert mechanism(frame(queue_s0_l2_peak_over_k=[1.5, 1.6, 1.4], s0_l2_marks_share=[0.8, 0.82, 0.79])).holds is True
    below = mechanism(frame(queue_s0_l2_peak_over_k=[0.63, 0.62, 0.64], s0_l2_marks_share=[0.0, 0.0, 0.0]))
    assert below.holds is False and "ratio" not in below.text and "0.63" in below.text
    assert throughput(pd.DataFrame(columns=["series", "seed", "a_gbps_mean"])).holds is None


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
