"""End-to-end runs through the Python API and the CLI: results, store, determinism, defaults."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import dclb
from dclb import _core
from dclb.errors import ScenarioError
from dclb.scenario import Scenario, Transport, Topology, describe_load, engine_config, load_scenario

from conftest import dclb_cli


def _conserved(stats: dict) -> None:
    assert stats["wire_bytes_created"] == stats["wire_bytes_delivered"] + stats["wire_bytes_dropped"] + stats["wire_bytes_in_flight"]


def test_run_returns_tables_and_a_summary(tiny, tmp_path):
    result = dclb.run(load_scenario(tiny), out=tmp_path / "res")
    assert result.flows.num_rows == 60
    assert result.summary["flows_completed"] == 60
    assert set(result.flows.column_names) >= {"fct_us", "ideal_fct_us", "slowdown", "spurious_retransmissions", "uplink_bytes", "queueing_delay_us", "deadline_met"}
    fct = result.flows["fct_us"].to_numpy()
    ideal = result.flows["ideal_fct_us"].to_numpy()
    assert np.all(fct >= ideal * 0.999), "no flow beats its ideal FCT"
    _conserved(result.stats)
    # The store has the run folder, its marker, and a catalog row.
    assert (result.path / "COMPLETE").exists()
    assert pq.read_table(result.path / "flows.parquet").num_rows == 60
    runs = dclb.open_store(tmp_path / "res").runs()
    assert list(runs["run_id"]) == [result.run_id]
    assert runs["lb.scheme"][0] == "ecmp"


def test_same_seed_identical_flow_tables_different_seed_not(tiny):
    a = dclb.run(load_scenario(tiny), out=None).flows
    b = dclb.run(load_scenario(tiny), out=None).flows
    assert a.equals(b)
    c = dclb.run(load_scenario(tiny, seed=8), out=None).flows
    assert not a.equals(c)


def test_identical_runs_store_equal_flow_tables_with_nulls_not_nan(tiny, tmp_path):
    # The horizon leaves flows unfinished (no FCT) and no flow has a deadline: missing values of both kinds.
    scenario = load_scenario(tiny, ["run.horizon_us=20000"])
    stored = [pq.read_table(dclb.run(scenario, out=tmp_path / name).path / "flows.parquet") for name in ("a", "b")]
    flows = stored[0]
    assert flows.equals(stored[1]), "Arrow's equals says NaN != NaN: a NaN anywhere would fail this"
    states = flows["state"].to_pylist()
    assert "completed" in states and "unfinished" in states
    for name in ("finish_us", "fct_us", "slowdown"):
        assert flows[name].null_count == states.count("unfinished"), name
    assert flows["deadline_us"].null_count == flows["deadline_met"].null_count == flows.num_rows
    for name in flows.column_names:
        if pa.types.is_floating(flows[name].type):
            assert not pc.any(pc.is_nan(flows[name])).as_py(), f"{name} holds NaN"


def test_overrides_reach_the_engine(tiny):
    rps = dclb.run(load_scenario(tiny, ["lb.scheme=rps"]), out=None)
    assert rps.scenario.lb.scheme == "rps"
    rows = np.array(rps.flows["uplink_bytes"].to_pylist())
    multi = (rows > 0).sum(axis=1)
    assert (multi > 1).any(), "RPS sprays a flow over several uplinks"


def test_cli_run_prints_the_summary(tiny, tmp_path):
    result = dclb_cli("run", str(tiny), "--out", str(tmp_path / "r"), "-q")
    assert result.returncode == 0, result.stderr
    for label in ["Flows completed", "Short flows", "p99 FCT", "Long flows mean goodput", "(100 KB, 1 MB]", "Packet drops", "ECN marks", "Spurious retransmissions", "Retransmission timeouts", "Event rate", "Simulated time", "Wall-clock time"]:
        assert label in result.stdout, label
    assert "fabric load 0.40" in result.stderr


def test_cli_json_summary(tiny):
    result = dclb_cli("run", str(tiny), "--no-store", "--json", "--set", "lb.scheme=drb")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["flows_completed"] == 60 and data["events"] > 0


def test_sack_options_reach_the_engine(tiny):
    runs = {o: dclb.run(load_scenario(tiny, ["lb.scheme=rps", *o]), out=None).summary for o in [(), ("transport.sack=true",), ("transport.sack=true", "transport.dsack_undo=true")]}
    assert all(s["flows_completed"] == 60 for s in runs.values())
    spurious = [s["spurious_retransmissions"] for s in runs.values()]
    # RPS reorders; NewReno resends every partial-ACK hole, SACK only holes deemed lost (14,309 vs 1,134).
    assert spurious[1] * 4 < spurious[0], spurious
    assert spurious[2] != spurious[1], "the undo changes the windows, hence the run"


def test_python_defaults_match_the_engine():
    engine = json.loads(_core.default_config())
    assert Transport().model_dump() == engine["transport"]
    # Every field, those left out of a resolved scenario at their "as before" value included.
    from dclb.scenario.schema import COMPLETE

    topo = Topology().model_dump(context=COMPLETE)
    for key, value in engine["topology"].items():
        assert topo[key] == value, key


def test_host_and_queue_options_reach_the_engine(tiny):
    plain = dclb.run(load_scenario(tiny), out=None)
    options = ["transport.handshake=true", "transport.host_ack_priority=true", "transport.host_queue_limit_bytes=6000", 'topology.queue_unit="packets"', "topology.buffer_packets=200"]
    r = dclb.run(load_scenario(tiny, options), out=None)
    assert r.summary["flows_completed"] == plain.summary["flows_completed"]
    # The handshake adds a small round trip to every ideal FCT; switch ports count packets.
    gap = np.array(r.flows["ideal_fct_us"].to_pylist()) - np.array(plain.flows["ideal_fct_us"].to_pylist())
    assert (gap > 1.0).all()
    ports = r.ports.to_pandas()
    switch = ports[ports.role != "host_up"]
    assert (switch.buffer_packets == 200).all() and (switch.ecn_k_packets == 65).all() and (switch.ecn_k_bytes == 0).all()
    assert (plain.ports.to_pandas().query("role != 'host_up'").buffer_bytes == 384_000).all()


def test_schemes_and_workloads_commands():
    s = dclb_cli("schemes")
    assert s.returncode == 0 and "ecmp" in s.stdout and "rps" in s.stdout and "drb" in s.stdout
    w = dclb_cli("workloads")
    assert w.returncode == 0 and "websearch" in w.stdout and "1.711 MB" in w.stdout


def test_mixture_and_multiple_sources(tmp_path):
    text = """
name = "mix"
[topology]
leaves = 2
spines = 2
hosts_per_leaf = 4
[traffic]
workload = {websearch = 0.5, datamining = 0.5}
load = 0.2
flows = 30
[[traffic.sources]]
senders = "leaf:0"
receivers = "leaf:1"
[[traffic.sources]]
pattern = "incast"
senders = "0-2"
receivers = [7]
size_bytes = 50000
start_us = 100
[run]
sampler = { interval_us = 50, flows = [0] }
"""
    p = tmp_path / "mix.toml"
    p.write_text(text)
    r = dclb.run(load_scenario(p), out=None)
    src = r.flows["source"].to_numpy()
    assert (src == 0).sum() == 30 and (src == 1).sum() == 3
    first = r.flows["src_host"].to_numpy()[src == 0]
    assert (first < 4).all()
    assert r.samples.num_rows > 0
    _conserved(r.stats)


def test_a_source_without_a_pair_is_an_error_not_a_hang(tiny):
    single = ["traffic.senders=3", "traffic.receivers=3", "traffic.inter_leaf_only=false"]
    message = "traffic.receivers: the only sender is also the only receiver (host 3); a flow needs two different hosts"
    with pytest.raises(ScenarioError) as e:
        load_scenario(tiny, single)
    assert str(e.value) == message
    # A scenario built in Python without load_scenario is checked before the engine runs it.
    sc = Scenario.model_validate({"topology": {"leaves": 2, "hosts_per_leaf": 4}, "traffic": {"workload": "websearch", "load": 0.4, "flows": 5, "senders": 3, "receivers": 3, "inter_leaf_only": False}})
    with pytest.raises(ScenarioError, match="the only sender is also the only receiver"):
        dclb.run(sc, out=None)


def test_a_run_reads_each_file_once(tmp_path, monkeypatch):
    from dclb import workloads
    from dclb.scenario import resolution

    (tmp_path / "small.cdf").write_text("1000 0\n20000 1\n")
    (tmp_path / "flows.csv").write_text("start_us,src,dst,size_bytes\n0,1,5,1000\n")
    (tmp_path / "s.toml").write_text(
        '[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n[traffic]\nworkload = "small.cdf"\nload = 0.2\nflows = 20\n'
        '[[traffic.sources]]\n[[traffic.sources]]\npattern = "list"\nflows_csv = "flows.csv"\n'
    )
    reads: list[str] = []
    for module, name in [(workloads, "load"), (resolution, "_read_flow_csv")]:
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda spec, *a, _real=real, **k: reads.append(spec) or _real(spec, *a, **k))
    sc = load_scenario(tmp_path / "s.toml")
    engine_config(sc)
    describe_load(sc)
    assert dclb.run(sc, out=None).flows.num_rows == 21
    assert reads == ["small.cdf", "flows.csv"]



def test_offered_load_ratio_measures_the_drawn_sizes_against_the_workload_mean(tiny, tmp_path):
    # A fixed size offers exactly its nominal load: the drawn mean is the workload's mean.
    fixed = tmp_path / "fixed.toml"
    fixed.write_text(tiny.read_text().replace('workload = "websearch"', "size_bytes = 20000"))
    steady = dclb.run(load_scenario(fixed), out=None).summary
    assert steady["offered_load_ratio"] == pytest.approx(1.0)
    assert 0.8 < steady["carried_load_ratio"] < 1.2
    # 60 data-mining flows: the drawn mean over the CDF's mean, recomputed here from the flows, is far below 1.
    result = dclb.run(load_scenario(tiny, ["traffic.workload=datamining"]), out=None)
    drawn = float(np.mean(result.flows["size_bytes"].to_numpy()))
    cdf_mean = _core.describe_sources(json.dumps(engine_config(result.scenario)))[0]["mean_bytes"]
    assert result.summary["offered_load_ratio"] == pytest.approx(drawn / cdf_mean)
    assert result.summary["offered_load_ratio"] < 0.8


def test_carried_load_ratio_counts_only_the_bytes_delivered_while_flows_arrive(tiny, tmp_path):
    from dclb.runner import load_ratios

    fixed = tmp_path / "fixed.toml"
    fixed.write_text(tiny.read_text().replace('workload = "websearch"', "size_bytes = 20000"))
    config = engine_config(load_scenario(fixed))
    offered_bps = _core.describe_sources(json.dumps(config))[0]["offered_bps"]
    # Arrivals at 0, 50 and 100 us: the window is 100 us. The first flow lives 0-40 us (all inside), the second
    # 50-150 us (half inside), the third starts as the window ends and is unfinished (nothing inside).
    flows = pa.table({
        "source": [0, 0, 0], "size_bytes": [20000, 20000, 20000], "start_us": [0.0, 50.0, 100.0],
        "finish_us": pa.array([40.0, 150.0, None], pa.float64()), "bytes_delivered": [20000, 20000, 10000],
    })
    ratios = load_ratios(config, flows, sim_time_us=1100.0)
    carried_bits = (20000 + 10000 + 10000 * 0.0) * 8
    assert ratios["offered_load_ratio"] == pytest.approx(1.0)
    assert ratios["carried_load_ratio"] == pytest.approx(carried_bits / (offered_bps * 100e-6))


def test_run_notes_when_the_drawn_flows_offer_well_under_the_nominal_load(tiny, tmp_path):
    low = dclb_cli("run", str(tiny), "--set", "traffic.workload=datamining", "--no-store", "-q")
    assert low.returncode == 0, low.stderr
    assert "of the nominal load" in low.stderr
    fixed = tmp_path / "fixed.toml"
    fixed.write_text(tiny.read_text().replace('workload = "websearch"', "size_bytes = 20000"))
    ok = dclb_cli("run", str(fixed), "--no-store", "-q")
    assert ok.returncode == 0, ok.stderr
    assert "of the nominal load" not in ok.stderr


def test_the_run_path_loads_no_heavy_library_before_the_engine_starts(tiny):
    """`dclb run` stays small while the engine runs: pandas, DuckDB, pyarrow, plotting and Dask load only when
    the results come back (issue #12: resident memory before the run under 100 MB)."""
    import subprocess
    import sys

    spy = f"""
import sys
from dclb import cli, runner
real = runner.simulate
def spy(*a, **k):
    heavy = sorted(m for m in ("pandas", "duckdb", "pyarrow", "matplotlib", "dask", "distributed") if m in sys.modules)
    print("HEAVY", heavy, file=sys.stderr)
    return real(*a, **k)
runner.simulate = spy
sys.argv = ["dclb", "run", {str(tiny)!r}, "--no-store", "-q"]
cli.main()
"""
    done = subprocess.run([sys.executable, "-c", spy], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr, done.stderr
