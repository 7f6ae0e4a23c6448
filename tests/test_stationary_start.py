"""The quick scale judges at load: its poisson runs start stationary (run.start = "stationary"), a figure whose
metrics read only short flows stops a drain after its window, the figure data reads the measured flows only and
carries each run's load, and the headers say how the runs started. Bad input about the start gets one line."""

from __future__ import annotations

import dataclasses
import importlib
import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import TINY, TINY_FABRIC, dclb_cli, tiny_with
from dclb.reproduce.data import RUN_COLUMNS, RunReader
from dclb.reproduce.metrics import LONG_AFCT, OVERALL_AFCT, SHORT, SHORT_AFCT, SHORT_P99, afct, fct_quantile
from dclb.reproduce.plan import figure_drains, plan_paper
from dclb.reproduce.report import header_text
from dclb.reproduce.run import Header, carried_ratio, start_of
from dclb.reproduce.steady import DRAIN_US, stationary_ok
from dclb.scenario import load_scenario

PAPERS = Path(__file__).resolve().parents[1] / "python" / "dclb" / "data" / "papers"


def _paper(key: str):
    return importlib.import_module(f"dclb.reproduce.papers.{key}").PAPER


def test_only_metrics_of_short_flows_drain():
    assert SHORT_AFCT.drains and SHORT_P99.drains and afct(SHORT, "s").drains and fct_quantile(0.99, SHORT, "s").drains
    assert not LONG_AFCT.drains and not OVERALL_AFCT.drains
    lbt = _paper("lbt")
    assert figure_drains(lbt.figure("7"))  # web search: short AFCT against the number of paths
    assert not figure_drains(lbt.figure("10"))  # long-flow throughput beside the short AFCT
    assert not figure_drains(lbt.figure("11"))  # time series only: nothing says it may stop early


def test_the_quick_scale_starts_stationary_and_drains_only_where_the_figure_allows():
    lbt = _paper("lbt")
    assert lbt.scales["quick"].stationary and lbt.scales["quick"].seeds >= 5
    drained = plan_paper(lbt, "quick", ["7"])
    runs = {p.scenario.name: set() for p in drained.plan.points}
    for p in drained.plan.points:
        runs[p.scenario.name].add((p.scenario.run.start, p.scenario.run.drain_us))
    assert runs == {"lbt_main": {("stationary", DRAIN_US)}}
    waiting = plan_paper(lbt, "quick", ["10", "11"])
    starts = {(p.scenario.name, p.scenario.run.start, p.scenario.run.drain_us) for p in waiting.plan.points}
    assert starts == {("lbt_main", "stationary", None), ("lbt_incast", "empty", None)}
    # Every point keeps its seeds: five per point.
    assert {p.seed for p in waiting.plan.points} == {1, 2, 3, 4, 5}


def test_a_sweep_can_keep_an_empty_start_at_quick_scale_and_the_paper_scale_starts_it_stationary():
    tr = _paper("tr")
    quick = plan_paper(tr, "quick", ["11"])
    assert {p.scenario.run.start for p in quick.plan.points} == {"empty"}
    paper = tr.scales["paper"]
    assert paper.stationary or paper.steady_state


def test_a_udp_poisson_source_gets_the_long_warm_up_instead():
    plain = load_scenario(PAPERS / "lbt" / "main.toml", ["traffic.workload=websearch"])
    assert stationary_ok(plain) is True
    assert stationary_ok(load_scenario(PAPERS / "lbt" / "incast.toml")) is None
    from dclb.reproduce.plan import _stationary
    from dclb.scenario import scenario_from

    udp = scenario_from({"name": "u", "traffic": {"pattern": "poisson", "size_bytes": 1000, "load": 0.2, "flows": 10, "transport": "udp", "udp_rate_gbps": 1.0}})
    assert stationary_ok(udp) is False
    assert _stationary(True)(udp) and _stationary(True)(udp)[0].startswith("run.warmup_us=")
    assert _stationary(True)(plain) == ["run.start=stationary", f"run.drain_us={DRAIN_US!r}"]


def test_a_poisson_stream_beside_a_group_of_long_flows_starts_as_written():
    # TAM's microbenchmarks: ten long flows and a light stream of short ones, judged on the long flows' goodput.
    # A stationary start opened its window on the short arrivals: the long flows went unmeasured, the run
    # stopped before they ended, and 18 claims on their goodput read "no data".
    micro = load_scenario(PAPERS / "tam" / "micro.toml")
    assert stationary_ok(micro) is None
    tam = _paper("tam")
    for fig in ("4", "7", "9"):
        assert {p.scenario.run.start for p in plan_paper(tam, "quick", [fig]).plan.points} == {"empty"}


def test_the_fabric_ratio_counts_only_the_poisson_sources_bytes(tmp_path):
    # Eight 100 MB flows beside a poisson stream offering 2% of the fabric: with the group's bytes counted the
    # ratio read tens of times the nominal load.
    import dclb

    path = tmp_path / "s.toml"
    path.write_text(tiny_with(
        '[[traffic.sources]]\npattern = "group"\nsize_bytes = 100_000_000\nflows = 8\nsenders = "leaf:0"\nreceivers = "leaf:1"\n'
        '[[traffic.sources]]\npattern = "poisson"\nworkload = "websearch"\nload = 0.02\nflows = 40\n'
    ))
    s = dclb.run(path, out=None).summary
    assert s["fabric_carried_load_ratio"] is not None and s["fabric_carried_load_ratio"] < 5, s["fabric_carried_load_ratio"]
    assert s["util_leaf_to_spine"] > 0.05  # the group's bytes are in the utilisations


class _Store:
    def __init__(self, flows: pd.DataFrame, summary: dict):
        self._flows, self._summary = flows, summary

    def is_complete(self, run_id):
        return True

    def read_record(self, run_id):
        return {"summary": self._summary}

    def flows(self, run_id):
        return self._flows


def test_the_figure_data_reads_only_the_measured_flows():
    # A pre-loaded giant (not measured) that completed in the window would double the AFCT if it were read.
    flows = pd.DataFrame(
        {
            "size_bytes": [1_000, 1_000, 1_000],
            "transport": ["dctcp"] * 3,
            "state": ["completed"] * 3,
            "fct_us": [10.0, 30.0, 1_000.0],
            "measured": [True, True, False],
        }
    )
    reader = RunReader(_Store(flows, {}))
    assert reader.value("r", afct(SHORT, "s")) == pytest.approx(0.020)  # ms
    # A table without the column (no window) is every flow.
    reader = RunReader(_Store(flows.drop(columns="measured"), {}))
    assert reader.value("r", afct(SHORT, "s")) == pytest.approx(0.34666, rel=1e-3)


def test_the_load_carried_is_the_fabric_s_first_and_the_start_is_read_from_the_summary():
    assert carried_ratio({"fabric_carried_load_ratio": 0.93, "window_carried_load_ratio": 0.4, "carried_load_ratio": 0.1}) == 0.93
    assert carried_ratio({"fabric_carried_load_ratio": math.nan, "window_carried_load_ratio": 0.4}) == 0.4
    assert start_of({"prefill_flows": 40, "prefill_candidates": 32, "window_carried_load_ratio": 0.9}) == "stationary"
    assert start_of({"prefill_flows": math.nan, "window_carried_load_ratio": 0.9, "carried_load_ratio": 0.5}) == "warm-up"
    assert start_of({"carried_load_ratio": 0.2}) == "empty"
    assert start_of({}) == ""
    assert "fabric_carried_load_ratio" in RUN_COLUMNS and "window_flows_censored" in RUN_COLUMNS


def test_a_header_says_how_the_runs_started_the_lowest_load_and_the_censored_flows():
    h = Header(flows=(180, 180), seeds=(1, 2, 3, 4, 5), load=((0.5, 0.95, 5),), windowed=True, start="stationary", lowest=0.81, censored=3)
    text = " ".join(header_text(h, 5, 0))
    assert "started from a stationary fabric" in text and "over the whole fabric in the measurement window" in text
    assert "lowest run 81%" in text and "3 measured flows still running" in text
    ci = " ".join(header_text(dataclasses.replace(h, start="empty", windowed=False, censored=0), 5, 0))
    assert "not at load" in ci and "still running" not in ci


def _check(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "panicked" not in result.stderr, result.stderr
    lines = [l for l in result.stderr.strip().splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize(
    "traffic, sets, needles",
    [
        (None, ["run.start=warm"], ["run.start", "'empty' or 'stationary'", "warm"]),
        ("pattern = \"list\"\nflow_list = [{ start_us = 0, src = 0, dst = 5, size_bytes = 1000 }]", ["run.start=stationary"], ["run.start", "poisson"]),
        ("pattern = \"long_lived\"", ["run.horizon_us=1000", "run.start=stationary"], ["run.start", "poisson"]),
        (None, ["run.start_candidates=4"], ["run.start_candidates", "only a stationary start"]),
        (None, ["run.drain_us=100"], ["run.drain_us", "measurement window"]),
        (None, ["run.start=stationary", "traffic.transport=udp", "traffic.udp_rate_gbps=1"], ["traffic.transport", "UDP"]),
    ],
)
def test_bad_start_input_is_one_line_exit_2_and_nothing_stored(tmp_path, traffic, sets, needles):
    path = tmp_path / "s.toml"
    path.write_text(TINY if traffic is None else tiny_with(traffic))
    store = tmp_path / "store"
    args = ["run", str(path), "--out", str(store)]
    for s in sets:
        args += ["--set", s]
    _check(dclb_cli(*args), *needles)
    assert not (store / "runs").exists() or not any((store / "runs").iterdir())


def test_a_pre_loaded_population_over_the_memory_limit_is_refused_naming_the_start(tmp_path, monkeypatch):
    path = tmp_path / "s.toml"
    path.write_text(TINY)
    big = ["topology.leaves=16", "topology.spines=16", "topology.hosts_per_leaf=16", "traffic.workload=datamining"]
    args = ["run", str(path), "--out", str(tmp_path / "store")] + [a for s in big for a in ("--set", s)]
    monkeypatch.setenv("DCLB_MEMORY_LIMIT", "1MB")
    _check(dclb_cli(*args, "--set", "run.start=stationary", "--dry-run"), "pre-loaded by the stationary start", "run.start")
    assert not (tmp_path / "store" / "runs").exists()


def test_the_dry_run_counts_the_pre_loaded_flows_and_the_warm_up(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(TINY)
    out = dclb_cli("run", str(path), "--set", "traffic.workload=datamining", "--set", "run.start=stationary", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "pre-loaded by the stationary start" in out.stdout and "warm-up" in out.stdout, out.stdout


def test_a_source_whose_flows_are_all_below_the_fluid_cut_does_not_stall_the_stationary_start(tmp_path):
    # DAR's short-flow source (web search up to 100 KB) at 100 Gbps: every flow is below the fluid run's cut
    # (what a host link carries in 100 µs, 1.25 MB), so it is background only. The fluid run drew sizes for
    # it forever; the run must finish, pre-loading flows of the long source only.
    path = tmp_path / "s.toml"
    short = tmp_path / "short.cdf"
    short.write_text("1000 0\n20000 0.5\n100000 1\n")
    path.write_text(
        TINY_FABRIC.replace("hosts_per_leaf = 4", "hosts_per_leaf = 4\nhost_rate_gbps = 100\nfabric_rate_gbps = 100")
        + '[traffic]\npattern = "poisson"\nload = 0.5\nduration_us = 2000\n'
        + f'[[traffic.sources]]\nworkload = "{short}"\nload = 0.05\n'
        + '[[traffic.sources]]\nworkload = "websearch"\nload = 0.45\n'
        + '[run]\nstart = "stationary"\n'
    )
    import dclb

    r = dclb.run(path, out=None)
    f = r.flows.to_pandas()
    pre = f[f["preloaded"].astype(bool)]
    assert len(pre) > 0 and (pre["source"] == 1).all(), pre[["source", "size_bytes"]]
    assert (f.loc[(f["source"] == 0) & f["measured"].astype(bool), "state"] == "completed").all()


class _Records:
    """A RunReader stand-in: each run's summary holds only its carried load."""

    def __init__(self, ratios: dict[str, float], workloads: dict[str, str] | None = None) -> None:
        self.ratios, self.workloads, self.empty = ratios, workloads or {}, set()

    def record(self, run_id: str):
        scheme = run_id.split("-")[0]
        # Presto's receiver resequences (a transport setting that comes with the scheme, not with the traffic).
        transport = {"reseq_timeout_us": 100.0 if scheme == "Presto" else 0.0}
        scenario = {"lb": {"scheme": scheme}, "transport": transport, "traffic": {"workload": self.workloads.get(run_id, "websearch")}}
        summary = {"fabric_carried_load_ratio": self.ratios[run_id]}
        if run_id not in self.empty:  # a stationary run: pre-loaded flows and a measurement window
            summary |= {"window_carried_load_ratio": self.ratios[run_id], "prefill_flows": 3, "prefill_candidates": 4}
        else:
            summary |= {"carried_load_ratio": self.ratios[run_id]}
        return {"summary": summary, "scenario": scenario}


def _frame(ratios: dict[tuple[str, int], float]):
    rows = [{"series": s, "seed": k, "run_id": f"{s}-{k}", "status": "completed"} for (s, k) in ratios]
    return pd.DataFrame(rows), _Records({f"{s}-{k}": v for (s, k), v in ratios.items()})


def test_the_load_note_names_the_scheme_when_other_schemes_carry_the_same_flows():
    from dclb.reproduce.run import load_note

    # RPS carries half of the load from the same start and flows CONGA carries: the shortfall is RPS's.
    frame, reader = _frame({**{("CONGA", k): 0.9 + 0.01 * k for k in range(5)}, **{("RPS", k): 0.5 + 0.01 * k for k in range(5)}})
    note = load_note(frame, reader)
    assert "RPS 52% against CONGA 92%" in note and "a shortfall of the scheme, not of the start" in note
    assert "warm-up" not in note and "in the measurement window (all runs" in note
    # Runs from an empty start have no window: their share is over the run.
    reader.empty = set(reader.ratios)
    assert "over the run (an empty start, no measurement window)" in load_note(frame, reader)
    # A scheme's own transport settings do not make its traffic different (MDTLB's Fig. 10: Presto at 95%).
    frame, reader = _frame({**{("Presto", k): 0.95 for k in range(5)}, **{("ECMP", k): 0.78 for k in range(5)}})
    assert "ECMP 78% against Presto 95%" in load_note(frame, reader) and "a shortfall of the scheme" in load_note(frame, reader)
    # No series carries it: the start is to blame.
    frame, reader = _frame({("CONGA", k): 0.3 for k in range(3)} | {("RPS", k): 0.2 for k in range(3)})
    assert "no series carried its nominal load" in load_note(frame, reader)
    # Every series does at the median; one seed is light.
    frame, reader = _frame({("CONGA", k): (0.7 if k == 0 else 0.95) for k in range(5)})
    assert "single seeds' windows were light" in load_note(frame, reader)
    # Series that differ in their traffic (TR's workloads side by side) do not blame a scheme.
    frame, reader = _frame({("LetFlow dm", k): 0.15 for k in range(3)} | {("LetFlow ws", k): 0.95 for k in range(3)})
    reader.workloads = {f"LetFlow dm-{k}": "datamining" for k in range(3)}
    note = load_note(frame, reader)
    assert "not shown to be a scheme's" in note and "shortfall of the scheme" not in note
    # All at load: no note.
    frame, reader = _frame({("CONGA", k): 0.95 for k in range(5)})
    assert load_note(frame, reader) is None


def test_a_light_poisson_stream_beside_long_flows_has_no_load_to_report():
    from dclb.reproduce.run import steady_ratio

    summary = {"fabric_carried_load_ratio": 2.16}
    micro = {"scenario": {"traffic": {"sources": [{"pattern": "group"}, {"pattern": "poisson"}]}}, "summary": summary}
    assert steady_ratio(micro) is None
    plain = {"scenario": {"traffic": {"pattern": "poisson", "load": 0.5}}, "summary": summary}
    assert steady_ratio(plain) == 2.16
    two = {"scenario": {"traffic": {"sources": [{"load": 0.1}, {"pattern": "poisson"}]}}, "summary": summary}
    assert steady_ratio(two) == 2.16
