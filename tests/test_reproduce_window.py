"""The paper scale measures in steady state: each run with a poisson source warms up for fifteen fill times of its
workload at its host rate (dclb.reproduce.steady), and every load axis and figure header says what load the runs
carried, in the window when they had one."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

from dclb.reproduce.draw import _load_ticks
from dclb.reproduce.plan import plan_paper
from dclb.reproduce.report import header_text
from dclb.reproduce.run import Header, carried_ratio
from dclb.reproduce.spec import Panel
from dclb.reproduce.steady import FILL_TIMES, fill_time_us, warmup_us
from dclb.scenario import load_scenario
from dclb.workloads import load

PAPERS = Path(__file__).resolve().parents[1] / "python" / "dclb" / "data" / "papers"


def test_the_second_moment_is_that_of_the_piecewise_linear_cdf():
    # Uniform on [0, 2]: E[S^2] = 4/3; a point mass of 1/2 at 1 and uniform on [1, 3] otherwise: 1/2 + 1/2 * 13/3.
    from dclb.workloads import Workload

    uniform = Workload("u", Path("u"), ((0.0, 0.0), (2.0, 1.0)), "", "")
    assert uniform.second_moment_bytes2 == pytest.approx(4 / 3)
    mass = Workload("m", Path("m"), ((1.0, 0.5), (3.0, 1.0)), "", "")
    assert mass.second_moment_bytes2 == pytest.approx(0.5 + 0.5 * 13 / 3)
    # The fill time of data mining, as docs/assumptions.md tabulates it: 255 MB.
    dm = load("datamining")
    assert dm.second_moment_bytes2 / (2 * dm.mean_bytes) == pytest.approx(255.4e6, rel=1e-3)


def test_the_warm_up_follows_the_workload_and_the_host_rate():
    main = PAPERS / "lbt" / "main.toml"
    ws = load_scenario(main, ["traffic.workload=websearch"])
    dm = load_scenario(main, ["traffic.workload=datamining"])
    # 5.45 MB at 10 Gbps is 4.36 ms; fifteen of them, two significant digits.
    assert fill_time_us(ws) == pytest.approx(5.452e6 * 8 / 10e9 * 1e6, rel=1e-3)
    assert warmup_us(ws) == 65_000.0
    assert warmup_us(dm) == 3_100_000.0
    faster = load_scenario(main, ["traffic.workload=datamining", "topology.host_rate_gbps=40", "topology.fabric_rate_gbps=40"])
    assert warmup_us(faster) == pytest.approx(FILL_TIMES * fill_time_us(faster), rel=0.05) and warmup_us(faster) < warmup_us(dm) / 3
    # An incast has no steady load to reach: no window.
    assert warmup_us(load_scenario(PAPERS / "lbt" / "incast.toml")) is None


def test_a_steady_state_scale_plans_each_poisson_run_with_its_warm_up_and_a_stationary_one_none():
    lbt = importlib.import_module("dclb.reproduce.papers.lbt").PAPER
    # The long warm-up (the paper scale before the stationary start, and what a UDP poisson source still gets).
    warm = dataclasses.replace(lbt, scales={**lbt.scales, "paper": dataclasses.replace(lbt.scales["paper"], steady_state=True, stationary=False)})
    paper = plan_paper(warm, "paper", ["10", "11"])
    by_name: dict[str, set] = {}
    for p in paper.plan.points:
        by_name.setdefault(p.scenario.name, set()).add(p.scenario.run.warmup_us)
    assert by_name["lbt_main"] == {3_100_000.0}  # Fig. 10 is data mining at 10 Gbps
    assert by_name["lbt_incast"] == {None}
    # Every seed of every point is still planned, each once, and its id is that of its scenario with the warm-up.
    plain_lbt = dataclasses.replace(lbt, scales={**lbt.scales, "paper": dataclasses.replace(lbt.scales["paper"], steady_state=False, stationary=False)})
    plain = plan_paper(plain_lbt, "paper", ["10", "11"])
    assert len(paper.plan.points) == len(plain.plan.points)
    assert sorted((p.values == q.values, p.seed == q.seed) for p, q in zip(paper.plan.points, plain.plan.points)) == [(True, True)] * len(plain.plan.points)
    assert not {p.run_id for p in paper.plan.points if p.scenario.name == "lbt_main"} & {p.run_id for p in plain.plan.points}
    for scale in ("quick", "paper"):
        stationary = plan_paper(lbt, scale, ["10"])
        assert {p.scenario.run.warmup_us for p in stationary.plan.points} == {None}
        assert {p.scenario.run.start for p in stationary.plan.points} == {"stationary"}


def test_the_load_carried_is_the_window_s_when_the_run_had_one():
    assert carried_ratio({"carried_load_ratio": 0.3, "window_carried_load_ratio": 0.9}) == 0.9
    assert carried_ratio({"carried_load_ratio": 0.3, "window_carried_load_ratio": float("nan")}) == 0.3
    assert carried_ratio({}) is None


def test_a_header_says_where_the_load_was_measured_and_at_which_points_it_fell_short():
    h = Header(flows=(200, 220), seeds=(1, 2, 3), load=((0.3, 0.95, 3), (0.7, 0.5, 3)), windowed=True)
    text = " ".join(header_text(h, 6, 0))
    assert "measured flows per run 200-220" in text
    assert "over the whole fabric in the measurement window" in text
    assert "0.7: 50% (0.35)" in text and "not reached (under 80% of it) at 0.7" in text and "at 0.3" not in text
    reached = " ".join(header_text(dataclasses.replace(h, load=((0.3, 0.95, 3),), windowed=False), 3, 0))
    assert "while the flows arrived" in reached and "reached at every point" in reached


def test_a_load_axis_prints_the_load_carried_under_each_nominal_load():
    from dclb.plots import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots()
    ax.plot([0.3, 0.7], [1, 2])
    metric = importlib.import_module("dclb.reproduce.papers.lbt").FIGURES[0].panels[0].y
    assert _load_ticks(ax, Panel("t", metric, x="traffic.load"), {0.3: 0.9, 0.7: 0.5})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.3\n(0.27)", "0.7\n(0.35)"]
    assert not _load_ticks(ax, Panel("t", metric, x="traffic.flows"), {0.3: 0.9})
    plt.close(fig)
