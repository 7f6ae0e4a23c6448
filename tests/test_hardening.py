"""Issue #24, hardening round 2: no wrong result stored as valid, no false message, nothing silently ignored.

One section per class of failure the issue names; each test failed on the main branch before the fix (the
engine items, marked ``xfail(strict=True, reason="engine: ...")``, fail today and must pass once the engine
does its part). Everything runs in a second or two: no simulation here lasts longer than the tiny scenario's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import dclb
from conftest import TINY, tiny_with
from dclb import _core
from dclb.errors import ScenarioError, StoreError, UserError
from test_scenario_schema import dclb_main, refused


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _load(tmp_path: Path, text: str, *overrides: str):
    return dclb.load_scenario(_write(tmp_path, text), list(overrides))


def _refused_load(tmp_path: Path, text: str, overrides: list[str], *needles: str) -> str:
    """Loading the scenario raises one ScenarioError line that starts with the first needle (the field) and
    contains the others."""
    with pytest.raises(ScenarioError) as caught:
        _load(tmp_path, text, *overrides)
    message = str(caught.value)
    assert message.startswith(needles[0]), message
    for needle in needles[1:]:
        assert needle in message, (needle, message)
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------------------------------------
# Wrong results that look valid: the clock's range


@pytest.mark.parametrize("text, overrides, field", [
    (TINY, ["topology.host_rate_gbps=1e-9"], "topology.host_rate_gbps"),
    (TINY, ["traffic.load=1e-12"], "traffic.load"),
    (TINY, ["traffic.transport=\"udp\"", "traffic.udp_rate_gbps=1e-9"], "traffic.udp_rate_gbps"),
    (TINY, ["traffic.start_us=1.8e13", "traffic.duration_us=1e12"], "traffic.duration_us"),
    (tiny_with('pattern = "incast"\nsize_bytes = 1000\nreceivers = [0]\nrounds = 3\nperiod_us = 1e13'), [], "traffic.period_us"),
    (TINY, ["traffic.start_us=1.8e13", "traffic.deadline={kind=\"fixed\", us=1e12}"], "traffic.deadline.us"),
])
def test_times_beyond_the_clock_are_refused_before_the_run(tmp_path, text, overrides, field):
    message = _refused_load(tmp_path, text, overrides, field, "clock")
    # The dry run says the same (it called such runs valid, estimating billions of seconds).
    refused(dclb_main("run", str(_write(tmp_path, text, "d.toml")), "--dry-run", "--no-store", *[a for o in overrides for a in ("--set", o)]), field)
    assert "us" in message


def _engine_config_of(tmp_path: Path, **changes: float) -> str:
    """The engine config of the tiny scenario with topology values changed behind the front's back."""
    config = dclb.scenario.engine_config(_load(tmp_path, TINY))
    config["topology"].update(changes)
    return json.dumps(config)


def test_the_engines_check_refuses_times_beyond_its_clock(tmp_path):
    with pytest.raises(_core.ConfigError) as caught:
        _core.check_config(_engine_config_of(tmp_path, host_rate_gbps=1e-9))
    assert "topology" in ".".join(map(str, caught.value.path))


# --------------------------------------------------------------------------------------------------------
# Wrong results that look valid: a run with nothing to do


@pytest.mark.parametrize("text, overrides, field", [
    (TINY, ["traffic.duration_us=1e-6"], "traffic.duration_us"),
    (TINY, ["run.horizon_us=10"], "run.horizon_us"),  # the first arrival expected after about 850 us
    (tiny_with('pattern = "group"\nsize_bytes = 1000\nflows = 5\nstart_us = 500'), ["run.horizon_us=100"], "traffic.start_us"),
    (tiny_with('pattern = "incast"\nsize_bytes = 1000\nreceivers = [0]\nstart_us = 500'), ["run.horizon_us=100"], "traffic.start_us"),
    (tiny_with('pattern = "long_lived"\nstart_us = 500'), ["run.horizon_us=100"], "traffic.start_us"),
    (tiny_with('pattern = "list"\nflow_list = [{start_us = 500, src = 0, dst = 5, size_bytes = 1000}]'), ["run.horizon_us=100"], "traffic.flow_list"),
    (TINY.replace("flows = 60", "flows = 60\n[[traffic.sources]]\n[[traffic.sources]]\nduration_us = 1e-3"), [], "traffic.sources[1].duration_us"),
])
def test_a_source_that_would_start_no_flow_is_refused(tmp_path, text, overrides, field):
    _refused_load(tmp_path, text, overrides, field)


def test_a_run_that_started_no_flow_is_not_stored(tmp_path):
    # About 1.5 flows expected (so the run may start), and with seed 1 the arrivals draw none.
    sc = _load(tmp_path, TINY, "traffic.duration_us=1300", "seed=1")
    with pytest.raises(ScenarioError, match=r"^traffic: started no flow in this run \(seed 1; about 1.5 were expected\), nor did any other source"):
        dclb.run(sc, out=tmp_path / "store")
    assert not (tmp_path / "store" / "runs").exists() or not any((tmp_path / "store" / "runs").iterdir())


def test_a_source_that_started_no_flow_is_a_warning_a_caller_can_make_an_error(tmp_path):
    # Two sources; with seed 1 the second's arrivals (about 1.5 expected) fall outside its window.
    text = TINY.replace("flows = 60", "flows = 60\n[[traffic.sources]]\nflows = 20\n[[traffic.sources]]\nduration_us = 1300")
    sc = _load(tmp_path, text, "seed=1")
    with pytest.warns(dclb.SourceWithoutFlows, match=r"^traffic.sources\[1\]: started no flow in this run"):
        result = dclb.run(sc, out=None)
    assert result.flows.num_rows == 20
    shown = dclb_main("run", str(_write(tmp_path, text, "w.toml")), "--seed", "1", "--no-store", "-q")
    assert shown.returncode == 0 and "warning: traffic.sources[1]: started no flow" in shown.stderr, shown.stderr
    refused(dclb_main("run", str(tmp_path / "w.toml"), "--seed", "1", "--no-store", "-q", "--strict"), "traffic.sources[1]", "started no flow", "strict")
    with warnings.catch_warnings(), pytest.raises(dclb.SourceWithoutFlows):
        warnings.simplefilter("error", dclb.SourceWithoutFlows)
        dclb.run(sc, out=None)
    frame = dclb.sweep(tmp_path / "w.toml", seed=1, out=tmp_path / "s", jobs=1, strict=True)
    assert frame["status"].tolist() == ["failed"] and "started no flow" in frame["error"][0]


# --------------------------------------------------------------------------------------------------------
# Wrong results that look valid: contradictory scheme parameters (the engine's relations)


@pytest.mark.parametrize("scheme, settings, field", [
    ("hermes", ["lb.rtt_low_us=200", "lb.rtt_high_us=100"], "lb.rtt_low_us"),
    ("mdtlb", ["lb.rtt_low_s_us=200", "lb.rtt_high_s_us=100"], "lb.rtt_low_s_us"),
    ("mdtlb", ["lb.portion_small=0.9", "lb.portion_big=0.5"], "lb.portion_small"),
    ("lbt", ["lb.q_min_bytes=5000", "lb.q1_max_bytes=3000"], "lb.q_min_bytes"),
])
def test_contradictory_scheme_parameters_are_refused(tmp_path, scheme, settings, field):
    with pytest.raises(ScenarioError) as caught:
        _load(tmp_path, TINY, f"lb.scheme={scheme}", *settings)
    assert field.split(".")[1].split("_")[0] in str(caught.value)


# --------------------------------------------------------------------------------------------------------
# Runs that never end


def test_probes_count_in_the_estimate_and_a_run_beyond_the_event_limit_is_refused(tmp_path, monkeypatch):
    path = _write(tmp_path, TINY)
    monkeypatch.delenv("DCLB_EVENT_LIMIT", raising=False)
    normal = dclb_main("run", str(path), "--dry-run", "--no-store", "--json", "--set", "lb.scheme=hermes")
    assert normal.returncode == 0, normal.stderr
    assert json.loads(normal.stdout)["events_by_kind"]["probes"] > 0
    refused(dclb_main("run", str(path), "--dry-run", "--no-store", "--set", "lb.scheme=hermes", "--set", "lb.probe_us=1e-6"),
            "lb.probe_us", "events", "DCLB_EVENT_LIMIT=none")
    monkeypatch.setenv("DCLB_EVENT_LIMIT", "none")  # the way to insist
    insisted = dclb_main("run", str(path), "--dry-run", "--no-store", "--set", "lb.scheme=hermes", "--set", "lb.probe_us=1e-6")
    assert insisted.returncode == 0, insisted.stderr
    monkeypatch.setenv("DCLB_EVENT_LIMIT", "lots")
    refused(dclb_main("run", str(path), "--dry-run", "--no-store"), "DCLB_EVENT_LIMIT")


def test_the_seeds_option_has_the_limit_of_the_sweep_table(tmp_path):
    path = _write(tmp_path, TINY)
    started = time.monotonic()
    refused(dclb_main("sweep", str(path), "--seeds", "100001", "--dry-run", "--out", str(tmp_path / "s")), "--seeds", "100,000")
    refused(dclb_main("sweep", str(path), "--seeds", "1001", "--grid", "traffic.load=0.01:1:0.01", "--dry-run", "--out", str(tmp_path / "s")),
            "--grid", "100,100 runs")
    assert time.monotonic() - started < 20  # refused at once, not after validating every point
    with pytest.raises(ScenarioError, match="seeds"):
        dclb.sweeps.plan_sweep(path, seeds=100_001)


# --------------------------------------------------------------------------------------------------------
# False messages: an interrupt while `dclb run` stores its results


@pytest.mark.parametrize("moment", ["_swap_in", "record_in_catalog"])
def test_an_interrupt_while_storing_says_stored_and_leaves_the_store_clean(tmp_path, monkeypatch, moment):
    from dclb.store.store import Store
    from dclb.storecheck import inspect

    real = getattr(Store, moment)

    def interrupted(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while the folder is published / the row written
        time.sleep(0.05)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, moment, interrupted)
    out = tmp_path / "store"
    result = dclb_main("run", str(_write(tmp_path, TINY)), "--out", str(out), "-q")
    assert result.returncode == 130, (result.stdout, result.stderr)
    assert "interrupted: the run had finished and is stored" in result.stderr, result.stderr
    assert "nothing was stored" not in result.stderr
    store = dclb.open_store(out)
    assert len(store.runs()) == 1 and inspect(store).findings == []


def test_a_writer_killed_while_publishing_leaves_a_leftover_that_check_names_at_once(tmp_path):
    from dclb.store.files import STAGING_PREFIX

    out = tmp_path / "store"
    dclb.run(_load(tmp_path, TINY), out=out)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = os.uname().nodename
    leftover = out / "runs" / f"{STAGING_PREFIX}tiny-0123456789ab-deadbeef-p{dead.pid}@{host}"
    leftover.mkdir()
    (leftover / "flows.parquet").write_bytes(b"half")
    check = dclb_main("store", "check", str(out))
    assert check.returncode == 1 and f"left by process {dead.pid}, which is gone" in check.stdout, check.stdout
    assert dclb_main("store", "repair", str(out)).returncode == 0
    assert not leftover.exists() and dclb_main("store", "check", str(out)).returncode == 0


# --------------------------------------------------------------------------------------------------------
# False messages: `store check --deep` and `repair`


def test_a_deep_check_points_to_the_repair_that_finds_the_same(tmp_path):
    out = tmp_path / "store"
    result = dclb.run(_load(tmp_path, TINY), out=out)
    flows = result.path / "flows.parquet"
    data = bytearray(flows.read_bytes())
    data[len(data) // 3] ^= 0xFF  # same size, footer intact: only a checksum tells
    flows.write_bytes(bytes(data))
    deep = dclb_main("store", "check", str(out), "--deep")
    assert deep.returncode == 1 and f"`dclb store repair --deep {out}` fixes them" in deep.stdout, deep.stdout
    assert dclb_main("store", "repair", "--deep", str(out)).returncode == 0
    assert dclb_main("store", "check", str(out), "--deep").returncode == 0


# --------------------------------------------------------------------------------------------------------
# False messages: errors that name the wrong thing


def _cdf(tmp_path: Path, content: bytes) -> str:
    (tmp_path / "w.cdf").write_bytes(content)
    return 'traffic.workload="w.cdf"'


@pytest.mark.parametrize("make, needles", [
    (lambda p: ("bin.toml", None, b"\xde\xad\xbe\xef" * 20), ("bin.toml", "not a text file")),
    (lambda p: ("s.toml", _cdf(p, b"\xde\xad\xbe\xef" * 20), None), ("traffic.workload", "w.cdf", "not a text file")),
    (lambda p: ("s.toml", _cdf(p, b"0 0\nnan 0.5\n2000 1\n"), None), ("w.cdf:2", "finite")),
    (lambda p: ("s.toml", _cdf(p, b"0 0\n0 1\n"), None), ("w.cdf", "mean is 0 bytes")),
    (lambda p: ("s.toml", (p / "dir.cdf").mkdir() or 'traffic.workload="dir.cdf"', None), ("traffic.workload", "dir.cdf is a directory")),
])
def test_a_bad_file_is_named_with_what_is_wrong_with_it(tmp_path, make, needles):
    name, setting, content = make(tmp_path)
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    else:
        path.write_text(TINY)
    line = refused(dclb_main("run", str(path), "--dry-run", "--no-store", *(("--set", setting) if setting else ())), *needles)
    assert "codec" not in line and "traffic.load" not in line


def test_a_flow_list_is_read_whatever_the_editor_wrote_and_named_when_it_is_not_a_file(tmp_path):
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbfstart_us,src,dst,size_bytes\r\n0,0,5,1000\r\n")
    sc = _load(tmp_path, tiny_with('pattern = "list"\nflows_csv = "bom.csv"'))
    assert dclb.scenario.engine_config(sc)["sources"][0]["list"][0]["size_bytes"] == 1000
    (tmp_path / "dir.csv").mkdir()
    _refused_load(tmp_path, tiny_with('pattern = "list"\nflows_csv = "dir.csv"'), [], "traffic.flows_csv", "is a directory")


def test_a_name_outside_ascii_makes_a_safe_run_id(tmp_path):
    sc = _load(tmp_path, TINY, 'name="café 日本"')
    run_id = dclb.runner.run_id_for(sc)
    assert run_id.startswith("cafe___-") and run_id.isascii()
    assert dclb_main("run", str(_write(tmp_path, TINY)), "--set", 'name="café"', "--dry-run", "--no-store").returncode == 0


def test_option_errors_name_the_option_and_what_it_takes(tmp_path):
    path = _write(tmp_path, TINY)
    refused(dclb_main("sweep", str(path), "--dask", "bogus", "--out", str(tmp_path / "s"), "-q"), "--dask bogus", "tcp://host:8786")
    refused(dclb_main("run", ""), "SCENARIO_FILE", "empty")
    refused(dclb_main("run", str(path), "--out", ""), "--out", "empty")


# --------------------------------------------------------------------------------------------------------
# Late errors


def test_an_output_that_cannot_be_written_is_found_before_the_run(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a directory")
    bad = tmp_path / "file" / "store"

    def no_simulation(*args, **kwargs):
        raise AssertionError("simulated before checking the output")

    monkeypatch.setattr(dclb.runner, "simulate", no_simulation)
    refused(dclb_main("run", str(_write(tmp_path, TINY)), "--out", str(bad), "-q"), "--out", "cannot write")
    with pytest.raises(UserError, match="^out: cannot write"):
        dclb.run(_load(tmp_path, TINY), out=bad)


# --------------------------------------------------------------------------------------------------------
# Input silently ignored


@pytest.mark.parametrize("text, overrides, field", [
    (TINY, ["traffic.rounds=3"], "traffic.rounds"),
    (TINY, ["traffic.flows_csv=\"f.csv\""], "traffic.flows_csv"),
    (TINY, ["traffic.spread_us=10"], "traffic.spread_us"),
    (TINY, ["traffic.udp_rate_gbps=2"], "traffic.udp_rate_gbps"),
    (tiny_with('pattern = "group"\nsize_bytes = 1000\nflows = 5\nload = 0.5'), [], "traffic.load"),
    (tiny_with('pattern = "incast"\nsize_bytes = 1000\nflows = 5'), [], "traffic.flows"),
    (tiny_with('pattern = "long_lived"\nworkload = "websearch"'), ["run.horizon_us=100"], "traffic.workload"),
    (tiny_with('pattern = "list"\nsenders = "leaf:0"\nflow_list = [{start_us = 0, src = 0, dst = 5, size_bytes = 1000}]'), [], "traffic.senders"),
    (TINY.replace("flows = 60", "flows = 60\nperiod_us = 5\n[[traffic.sources]]\n[[traffic.sources]]\npattern = \"group\""), [], "traffic.period_us"),
    (TINY.replace("flows = 60", "flows = 60\n[[traffic.sources]]\nrounds = 2"), [], "traffic.sources[0].rounds"),
])
def test_a_source_field_its_pattern_does_not_use_is_refused(tmp_path, text, overrides, field):
    _refused_load(tmp_path, text, overrides, field)


@pytest.mark.parametrize("links, field", [
    ("leaf = 0\nspine = 1\nrate_gbps = 5\n[[topology.links]]\nleaf = 0\nspine = 1\nlink = 0\nrate_gbps = 2", "topology.links[1].rate_gbps"),
    ("leaf = 0\nspine = 1\nfailed = true\nblackhole = true", "topology.links[0].blackhole"),
    ("leaf = 0\nspine = 1\nblackhole = true\nloss_rate = 0.1", "topology.links[0].loss_rate"),
    ("leaf = 0\nspine = 1\nfailed = true\n[[topology.links]]\nleaf = 0\nspine = 1\nloss_rate = 0.1", "topology.links[1].loss_rate"),
])
def test_link_overrides_that_would_be_dropped_are_refused(tmp_path, links, field):
    _refused_load(tmp_path, TINY + "\n[[topology.links]]\n" + links + "\n", [], field)
    # Overrides of different links, or of different properties of one link, are fine.
    _load(tmp_path, TINY + "\n[[topology.links]]\nleaf = 0\nspine = 1\nrate_gbps = 5\n[[topology.links]]\nleaf = 0\nspine = 1\ndelay_us = 3\n[[topology.links]]\nleaf = 1\nspine = 1\nfailed = true\nrate_gbps = 2\n")


def test_deadline_fields_of_another_kind_are_refused(tmp_path):
    _refused_load(tmp_path, TINY, ["traffic.deadline={kind=\"fixed\", us=500, lo_us=100}"], "traffic.deadline.lo_us", "fixed")


@pytest.mark.parametrize("csv, needles", [
    ("start_us,src,dst,size_bytes,priority\n0,0,5,1000,3\n", ("f.csv:1", "unknown column 'priority'")),
    ("start_us,src,dst,size_bytes\n0,0,5\n", ("f.csv:2", "3 cells")),
    ("start_us,src,dst,size_bytes\n0,0,5,1000,7\n", ("f.csv:2", "5 cells")),
])
def test_a_flow_list_row_must_match_its_header(tmp_path, csv, needles):
    (tmp_path / "f.csv").write_text(csv)
    with pytest.raises(ScenarioError) as caught:
        _load(tmp_path, tiny_with('pattern = "list"\nflows_csv = "f.csv"'))
    for needle in needles:
        assert needle in str(caught.value)


@pytest.mark.parametrize("args, needles", [
    (["sweep", "{s}", "--grid", "lb.scheme=ecmp", "--grid", "lb.scheme=rps", "--dry-run"], ("--grid lb.scheme", "twice")),
    (["sweep", "{s}", "--dask", "tcp://127.0.0.1:1", "--jobs", "2"], ("--jobs", "--dask")),
    (["results", "{o}", "--where", "seed = 7", "--sql", "select 1"], ("--sql", "--where")),
    (["results", "{o}", "--columns", "seed", "--sql", "select 1"], ("--sql", "--columns")),
    (["results", "{o}", "--columns", ""], ("--columns", "empty")),
    (["results", "{o}", "--columns", " , "], ("--columns", "no column")),
    (["run", "{s}", "--no-store", "--out", "{o}"], ("--no-store", "--out")),
    (["plot", "{o}", "--kind", "cdf", "--x", "traffic.load"], ("--x", "--kind cdf")),
    (["plot", "{o}", "--x", "seed", "--y", "short_afct_us", "--stat", "p99"], ("--stat", "--kind line")),
    (["report", "{o}", "--out", "{o}/r.pdf"], ("--out", ".html")),
    (["reproduce", "lbt", "--list", "--jobs", "2"], ("--list", "--jobs")),
])
def test_an_option_the_command_would_ignore_is_refused(tmp_path, stored, args, needles):
    path = _write(tmp_path, TINY)
    refused(dclb_main(*[a.format(s=path, o=stored) for a in args]), *needles)
    assert not (Path(str(stored)) / "r.pdf").exists()


# --------------------------------------------------------------------------------------------------------
# Damaged stores and results


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A store of three tiny runs at loads 0.2, 0.3 and 0.4."""
    base = tmp_path_factory.mktemp("stored")
    path = base / "tiny.toml"
    path.write_text(TINY)
    for load in (0.2, 0.3, 0.4):
        dclb.run(dclb.load_scenario(path, [f"traffic.load={load}"]), out=base / "store")
    return base / "store"


@pytest.fixture
def damaged(stored, tmp_path) -> tuple[Path, str, str, str]:
    """A copy of ``stored`` with one run's flow table truncated and another's port table deleted:
    (store, truncated run, run without ports, intact run)."""
    out = tmp_path / "store"
    shutil.copytree(stored, out)
    truncated, deleted, intact = sorted(p.name for p in (out / "runs").iterdir())
    flows = out / "runs" / truncated / "flows.parquet"
    flows.write_bytes(flows.read_bytes()[:-200])
    (out / "runs" / deleted / "ports.parquet").unlink()
    return out, truncated, deleted, intact


def test_results_and_queries_use_the_intact_runs_and_name_the_damaged(damaged):
    out, truncated, deleted, intact = damaged
    shown = dclb_main("results", str(out), "--format", "csv", "--columns", "status")
    assert shown.returncode == 0, shown.stderr
    assert f"{truncated},damaged" in shown.stdout and f"{deleted},damaged" in shown.stdout and f"{intact},completed" in shown.stdout
    assert "2 runs are damaged" in shown.stderr
    store = dclb.open_store(out)
    with pytest.warns(dclb.store.DamagedRunsWarning, match=f"2 damaged runs left out: {truncated} \\(flows.parquet has .* bytes.*{deleted} \\(ports.parquet is missing"):
        assert set(store.flows()["run_id"]) == {intact}  # the run without ports still has its flows, but is damaged
    store = dclb.open_store(out)
    with pytest.warns(dclb.store.DamagedRunsWarning):
        counts = store.sql("select (select count(distinct run_id) from flows) as f, (select count(*) from runs where status = 'damaged') as d")
    assert counts.iloc[0].tolist() == [1, 2]
    with pytest.raises(StoreError, match=f"cannot read run {truncated}: flows.parquet has"):
        store.flows(truncated)


def test_a_report_and_a_plot_are_drawn_from_the_intact_runs_and_name_the_damaged(damaged, tmp_path):
    out, truncated, deleted, intact = damaged
    report = dclb_main("report", str(out), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r.html").read_text()
    assert "Damaged runs (2)" in page and truncated in page and deleted in page
    plot = dclb_main("plot", str(out), "--x", "traffic.load", "--y", "short_afct_us", "--out", str(tmp_path / "p.png"))
    assert plot.returncode == 0, plot.stderr
    assert "warning: 2 damaged runs left out" in plot.stderr
    cdf = dclb_main("plot", str(out), "--kind", "cdf", "--out", str(tmp_path / "c.png"))
    assert cdf.returncode == 0, cdf.stderr


def test_a_plot_of_a_store_of_several_scenarios_names_what_it_leaves_out(stored, tmp_path):
    out = tmp_path / "store"
    shutil.copytree(stored, out)
    listed = _write(tmp_path, tiny_with('pattern = "list"\nflow_list = [{start_us = 0, src = 0, dst = 5, size_bytes = 1000}]'), "listed.toml")
    dclb.run(dclb.load_scenario(listed), out=out)  # a run without traffic.load
    plot = dclb_main("plot", str(out), "--x", "traffic.load", "--y", "short_afct_us", "--hue", "name", "--out", str(tmp_path / "p.png"))
    assert plot.returncode == 0, plot.stderr
    assert "1 run left out: no value for traffic.load" in plot.stderr
    categorical = dclb_main("plot", str(out), "--x", "traffic.workload", "--y", "short_afct_us", "--out", str(tmp_path / "w.png"))
    assert categorical.returncode == 0, categorical.stderr  # was an internal KeyError: 'nan'
    assert "1 run left out: no value for traffic.workload" in categorical.stderr
    # Runs that differ in too many ways for one legend: refused, naming the fields. (21 more runs, written
    # from one run's tables under other flow counts: the figure only reads their catalog rows.)
    result = dclb.run(_load(tmp_path, TINY, "traffic.load=0.2"), out=None)
    store = dclb.open_store(out)
    tables = {"flows": result.flows, "ports": result.ports, "switches": result.switches}
    for flows in range(40, 61):
        record = result.record.as_dict()
        record.pop("scenario_hash")
        record["scenario"]["traffic"]["flows"] = flows
        store.write_run(f"tiny-flows{flows}", {**record, "run_id": f"tiny-flows{flows}"}, tables)
    store.rebuild_catalog()
    many = dclb_main("plot", str(out), "--x", "traffic.load", "--y", "short_afct_us", "--out", str(tmp_path / "q.png"))
    refused(many, "traffic.flows", "lines", "--where")


# --------------------------------------------------------------------------------------------------------
# The Python API


def test_the_python_api_takes_its_documented_shapes_and_refuses_others(tmp_path, stored):
    path = _write(tmp_path, TINY)
    assert dclb.run(str(path), out=None).flows.num_rows == 60  # a path
    assert dclb.run(path, out=None, overrides=["traffic.flows=30"], seed=3).flows.num_rows == 30
    raw = {"topology": {"leaves": 2, "spines": 2, "hosts_per_leaf": 4}, "traffic": {"workload": "websearch", "load": 0.3, "flows": 20}}
    assert dclb.run(raw, out=None).flows.num_rows == 20  # a dict of tables
    sc = dclb.load_scenario(path)
    for call, match in [
        (lambda: dclb.run(None), "^scenario: expected a dclb.Scenario, the path of a scenario file or a dict"),
        (lambda: dclb.run(sc, out=5), "^out: expected a results directory"),
        (lambda: dclb.run(sc, out=""), "^out: expected"),
        (lambda: dclb.run(sc, overrides=[1]), "^overrides: expected 'FIELD=VALUE' texts"),
        (lambda: dclb.run(sc, overrides="lb.scheme=drb"), r"^overrides: expected a list .* write \['lb.scheme=drb'\]"),
        (lambda: dclb.load_scenario(None), "^path: expected the path of a scenario file"),
        (lambda: dclb.sweep(path, grid=5, out=tmp_path / "s"), "^grid: expected a dict"),
        (lambda: dclb.sweep(path, out=5), "^out: expected a results directory"),
        (lambda: dclb.sweep(path, out=tmp_path / "s", jobs="2"), "^jobs: expected a whole number"),
        (lambda: dclb.sweep(path, overrides="lb.scheme=rps", out=tmp_path / "s"), "^overrides: expected a list"),
        (lambda: dclb.open_store(stored).table("nosuch"), "no table 'nosuch'.*flows, ports, switches, samples"),
    ]:
        with pytest.raises(UserError, match=match):
            call()


# --------------------------------------------------------------------------------------------------------
# Docs that promise what the code does not


def test_results_as_csv_or_json_give_every_column(stored):
    import duckdb

    con = duckdb.connect(str(stored / "catalog.duckdb"), read_only=True)
    columns = [row[0] for row in con.execute("select column_name from duckdb_columns() where table_name = 'runs'").fetchall()]
    con.close()
    csv = dclb_main("results", str(stored), "--format", "csv")
    assert csv.stdout.splitlines()[0].split(",") == columns
    rows = json.loads(dclb_main("results", str(stored), "--format", "json").stdout)
    assert list(rows[0]) == columns


def test_figure_captions_promise_no_interval_from_two_seeds(pool_sweep, tmp_path):
    _, store_dir, _ = pool_sweep
    report = dclb_main("report", str(store_dir), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r.html").read_text()
    assert "with 95% CI" not in page and "mean over 2 seeds per point, no confidence interval" in page
