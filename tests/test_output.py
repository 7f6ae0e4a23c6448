"""What dclb prints, for people and for tools (issue #11): strict JSON, tables that fit the terminal, honest
confidence intervals, list fields as columns, the report's figures, user text printed as written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from rich.cells import cell_len

import dclb
from dclb import plots
from dclb.cli import cli
from dclb.headline import RUN_SUMMARY
from dclb.store import Store

from conftest import TINY


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The installed `dclb` command with extra environment variables (COLUMNS, rich's TTY switches)."""
    exe = shutil.which("dclb") or str(Path(sys.executable).parent / "dclb")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def _ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    return result


def _invoke(*args: str):
    """The CLI in this process through click's runner (no interpreter start-up: most checks here do not need a
    terminal of their own); returns the result with .stdout and .stderr."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (result.exit_code, result.output[-2000:], result.exception)
    return result


def _strict_json(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity, which are not JSON."""

    def refuse(constant: str):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


# --------------------------------------------------------------------------------------------------------
# --json is strict JSON; every printed metric is a catalog column


def test_json_output_is_strict_and_the_catalog_has_every_printed_metric(tiny, tmp_path):
    store = tmp_path / "st"
    run = _strict_json(_invoke("run", str(tiny), "--out", str(store), "--json").stdout)
    assert run["deadline_miss_rate"] is None  # no deadline flows: a missing number is null, not NaN
    assert isinstance(run["source_mean_bytes"], list) and isinstance(run["scheme_counters"], dict)

    catalog = _strict_json(_invoke("results", str(store), "--sql", "select * from runs", "--format", "json").stdout)
    columns = set(catalog[0])
    printed = [key for key in RUN_SUMMARY if key in run]
    assert "deadline_miss_rate" in printed
    missing = [key for key in printed if key not in columns and f"summary.{key}" not in columns]
    assert not missing, missing
    assert catalog[0]["deadline_miss_rate"] is None
    assert isinstance(catalog[0]["traffic.sources"], list)  # lists as JSON values, not JSON text
    assert isinstance(catalog[0]["source_mean_bytes"], list)
    _strict_json(_invoke("workloads", "--json").stdout)  # `schemes --json` and `bench --json`: tests below


# --------------------------------------------------------------------------------------------------------
# Tables fit an 80-column terminal; nothing a user types is cut


def _widest(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def test_tables_fit_80_columns_and_never_cut_names(pool_sweep):
    narrow = {"COLUMNS": "80"}
    scenario, store_dir, _ = pool_sweep
    store = str(store_dir)
    # The sweep again: every point is in the store already, so this prints the end-of-sweep table only.
    sweep = _ok(_cli("sweep", str(scenario), "--grid", "lb.scheme=ecmp,rps", "--grid", "traffic.load=0.2:0.4:0.2", "--seeds", "2", "--out", store, "-q", env=narrow))
    assert _widest(sweep.stdout) <= 80, sweep.stdout
    for name in ("lb.scheme", "traffic.load", "seed", "ecmp", "rps"):
        assert name in sweep.stdout

    results = _ok(_cli("results", store, env=narrow)).stdout
    assert _widest(results) <= 80, results
    runs = dclb.open_store(store).runs()
    for text in ("lb.scheme", "seed", "short_afct_us", *runs["run_id"]):
        assert text in results, text
    assert "Not shown" in results and "drops" in results  # the columns left out are named

    # Chosen columns too wide for the terminal: one block per run, every name and value whole.
    chosen = "lb.scheme,traffic.load,short_afct_us,short_p99_fct_us,long_afct_us"
    blocks = _ok(_cli("results", store, "--columns", chosen, env={"COLUMNS": "40"})).stdout
    assert _widest(blocks) <= 40, blocks
    for text in (*chosen.split(","), *runs["run_id"]):
        assert text in blocks, text

    workloads = _ok(_cli("workloads", env=narrow)).stdout
    assert _widest(workloads) <= 80, workloads
    words = set(workloads.split())
    for w in _strict_json(_invoke("workloads", "--json").stdout):
        assert w["name"] in words, w["name"]


# --------------------------------------------------------------------------------------------------------
# Confidence intervals: clipped to the metric's range, with n, none from fewer than 3 seeds


def _fake_store(path: Path, values: dict[float, list[float]]) -> Path:
    """A store of hand-made runs: for each load, one run per value (seeds 1, 2, ...) whose mean_slowdown,
    drops and deadline_miss_rate are set from that value, so the intervals are known in advance."""
    store = Store(path)
    flows = pa.table({"size_bytes": [5_000, 500_000], "fct_us": [20.0, 900.0], "slowdown": [1.5, 2.0], "state": ["completed"] * 2, "transport": ["dctcp"] * 2})
    for load, per_seed in values.items():
        for seed, v in enumerate(per_seed, start=1):
            run_id = f"fake-{load}-{seed}"
            record = {
                "name": "fake", "status": "completed", "seed": seed, "wall_s": 0.1,
                "started_at": "2024-01-01T00:00:00", "finished_at": "2024-01-01T00:00:01",
                "scenario": {"lb": {"scheme": "ecmp"}, "traffic": {"load": load}},
                "summary": {"mean_slowdown": v, "drops": 30.0 * (v - 1.0), "deadline_miss_rate": min(1.0, v / 6.0), "short_afct_us": 10.0 * v},
            }
            store.write_run(run_id, record, {"flows": flows})
            store.record_in_catalog({**record, "run_id": run_id})
    return path


def _plot(store: Path, *args: str):
    """`dclb plot` through click's runner; returns the matplotlib figure it drew (saved as usual)."""
    drawn = []
    real_save = plots.save

    def save(fig, path, *a, **k):
        drawn.append(fig)
        return real_save(fig, path, *a, **k)

    plots.save = save
    try:
        result = CliRunner().invoke(cli, ["plot", str(store), *args, "--out", str(store / "f.png")])
    finally:
        plots.save = real_save
    assert result.exit_code == 0, (result.output, result.exception)
    return drawn[0]


def _bars(fig) -> list[tuple[float, float]]:
    """(low, high) of every error bar drawn in the figure's first panel."""
    out = []
    for container in fig.axes[0].containers:
        for segment in container.lines[2][0].get_segments():
            if segment.size == 0:  # a point without an interval
                continue
            out.append((float(segment[:, 1].min()), float(segment[:, 1].max())))
    return out


def test_confidence_bands_are_clipped_and_need_three_seeds(tmp_path):
    three = _fake_store(tmp_path / "three", {0.2: [1.1, 1.2, 6.0], 0.4: [2.0, 2.1, 2.2]})
    # mean_slowdown at load 0.2: mean 2.77, t-interval half-width 6.9, so mean - half is far below 1.
    fig = _plot(three, "--x", "traffic.load", "--y", "mean_slowdown")
    bars = _bars(fig)
    assert len(bars) == 2
    assert min(low for low, _ in bars) == pytest.approx(1.0)  # clipped to slowdown >= 1
    assert "n = 3" in fig._suptitle.get_text()
    drops = _bars(_plot(three, "--x", "traffic.load", "--y", "drops"))
    assert min(low for low, _ in drops) == pytest.approx(0.0)
    miss = _bars(_plot(three, "--x", "traffic.load", "--y", "deadline_miss_rate"))
    assert all(0.0 <= low and high <= 1.0 for low, high in miss)

    two = _fake_store(tmp_path / "two", {0.2: [1.1, 6.0], 0.4: [2.0, 2.2]})
    fig = _plot(two, "--x", "traffic.load", "--y", "mean_slowdown")
    assert _bars(fig) == []  # no interval from 2 seeds...
    assert "fewer than 3 seeds" in fig._suptitle.get_text() and "n = 2" in fig._suptitle.get_text()  # ...and it says so

    mixed = _fake_store(tmp_path / "mixed", {0.2: [1.1, 1.2, 6.0], 0.4: [2.0, 2.2]})
    fig = _plot(mixed, "--x", "traffic.load", "--y", "mean_slowdown")
    assert len(_bars(fig)) == 1
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["n=2", "n=3"]  # n beside each point

    report = CliRunner().invoke(cli, ["report", str(three), "--out", str(tmp_path / "r.html")])
    assert report.exit_code == 0, (report.output, report.exception)
    page = (tmp_path / "r.html").read_text()
    assert re.search(r">2\.767 \[1, 9\.\d+\]<", page)  # mean_slowdown at load 0.2: clipped at 1, not 2.767 ± 6.96
    assert ">2.1 ± 0.2484<" in page  # an interval inside the range keeps the ± form


# --------------------------------------------------------------------------------------------------------
# A sweep over a list element: its own column, usable in --x and --where, no JSON blob in titles


def test_sweep_over_a_list_element_can_be_plotted_and_selected(tmp_path):
    scenario = tmp_path / "links.toml"
    scenario.write_text(TINY + "\n[[topology.links]]\nleaf = 0\nspine = 1\nrate_gbps = 5\n")
    store = str(tmp_path / "st")
    _ok(_cli("sweep", str(scenario), "--grid", "topology.links.0.rate_gbps=2,5", "--set", "traffic.flows=20", "--out", store, "-q", "-j", "1"))
    _invoke("plot", store, "--x", "topology.links.0.rate_gbps", "--y", "short_afct_us", "--out", str(tmp_path / "f.png"))
    assert (tmp_path / "f.png").stat().st_size > 1000
    selected = _invoke("results", store, "--where", "topology.links.0.rate_gbps = 5", "--columns", "topology.links.0.rate_gbps", "--format", "csv")
    runs = dclb.open_store(store).runs()
    five = runs.loc[runs["topology.links.0.rate_gbps"] == 5, "run_id"].tolist()
    assert selected.stdout.splitlines()[1:] == [f"{five[0]},5.0"]
    table = _invoke("results", store).stdout
    assert "topology.links.0.rate_gbps" in table and "blackhole" not in table  # the element, not the whole list
    _invoke("report", store, "--out", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert "topology.links.0.rate_gbps" in page and "&quot;blackhole&quot;" not in page



# --------------------------------------------------------------------------------------------------------
# Small things: bench's progress bar, whole numbers in `dclb schemes`, user text printed as written


def test_bench_shows_progress_on_stderr_but_not_with_json():
    terminal = {"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1", "COLUMNS": "100"}  # rich draws as on a terminal
    shown = _ok(_cli("bench", "--set", "traffic.flows=50", env=terminal))
    assert "simulating" in shown.stderr and "events per second" in shown.stdout
    quiet = _ok(_cli("bench", "--set", "traffic.flows=50", "--json", env=terminal))
    assert "simulating" not in quiet.stderr
    assert _strict_json(quiet.stdout)["flows"] == 50


def test_schemes_print_whole_numbers_as_integers():
    text = _invoke("schemes").stdout
    assert "lb.d = 2:" in text and "lb.d = 2.0" not in text
    assert "lb.flowcell_bytes = 64000 bytes" in text
    drill = next(s for s in _strict_json(_invoke("schemes", "--json").stdout) if s["name"] == "drill")
    d = next(p for p in drill["params"] if p["name"] == "d")
    assert d["default"] == 2 and isinstance(d["default"], int)


def test_user_text_is_printed_as_written(tmp_path):
    name, description = "demo :smile: [bold]x[/bold]", "a :fire: test [red]red[/red]"
    scenario = tmp_path / "s.toml"
    scenario.write_text(TINY.replace('name = "tiny"', f'name = "{name}"\ndescription = "{description}"').replace("flows = 60", "flows = 20"))
    run = _invoke("run", str(scenario), "--out", str(tmp_path / "st"), "-q")
    assert name in run.stderr
    sweep = _invoke("sweep", str(scenario), "--grid", "lb.scheme=ecmp,rps", "--out", str(tmp_path / "st"), "--dry-run")
    assert f"sweep {name}" in sweep.stderr
    results = _invoke("results", str(tmp_path / "st"), "--columns", "name,description").stdout
    assert name in results and description in results
    for text in (run.stderr, sweep.stderr, sweep.stdout, results):
        assert "😄" not in text and "🔥" not in text
