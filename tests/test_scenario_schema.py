"""The scenario schema refuses what it cannot read as written, and `--dry-run` says what a run would be.

Most cases go through the CLI's entry point in this process (`dclb.cli.main`, exactly what the `dclb` script
calls, with its error handling), which is fast; a few go through the installed `dclb` command as well.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

import pytest

from conftest import TINY, dclb_cli, tiny_with


def dclb_main(*args: str) -> subprocess.CompletedProcess:
    """Runs the `dclb` entry point in this process; returns what a subprocess run would."""
    from dclb.cli import main

    out, err = io.StringIO(), io.StringIO()
    with mock.patch.object(sys, "argv", ["dclb", *args]), redirect_stdout(out), redirect_stderr(err):
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException as e:  # noqa: BLE001 -- a Rust panic is a BaseException; report it as a crash would
            if isinstance(e, KeyboardInterrupt):
                raise
            print(f"Traceback: uncaught {type(e).__name__}: {e} (the engine panicked?)", file=sys.stderr)
            code = 99
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def refused(result: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2 with exactly one `error:` line that contains every needle (and no engine/serde jargon)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "panicked" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "engine config" not in lines[0] and "line 1 column" not in lines[0], lines[0]
    return lines[0]


def dry_run(tiny: Path, *settings: str) -> subprocess.CompletedProcess:
    return dclb_main("run", str(tiny), "--dry-run", "--no-store", *[a for s in settings for a in ("--set", s)])


# --------------------------------------------------------------------------------------------------------
# Item 1: no silent coercion, no silently ignored field


@pytest.mark.parametrize("setting, needles", [
    ("traffic.load=true", ("traffic.load", "expected a number, got true")),
    ('topology.leaves="4"', ("topology.leaves", "whole number", "'4'")),
    ('topology.host_rate_gbps="10"', ("topology.host_rate_gbps", "expected a number")),
    ("topology.leaves=4.5", ("topology.leaves", "whole number, got 4.5")),
    ("transport.sack=1", ("transport.sack", "boolean")),
    ("traffic.inter_leaf_only=0", ("traffic.inter_leaf_only", "boolean")),
    ("traffic.senders=true", ("traffic.senders", "got true")),
    ("traffic.senders=[1.5]", ("traffic.senders", "got 1.5")),
    ("traffic.workload={websearch=true}", ("traffic.workload.websearch.weight", "positive number")),
    ('topology.ecn_k_by_role={leaf_up="3"}', ("topology.ecn_k_by_role.leaf_up", "expected a number")),
    ("traffic.size_bytes=1000", ("traffic.size_bytes", "workload", "not both")),
    ("transport.max_rto_us=100", ("transport.max_rto_us", "min_rto_us", "5,000")),
    ("transport.init_rto_us=2e6", ("transport.max_rto_us", "init_rto_us")),
    ('traffic.flows_csv="f.csv"', ("traffic.flows_csv", 'pattern = "list"')),
])
def test_values_are_not_coerced_or_ignored(tiny, setting, needles):
    refused(dry_run(tiny, setting), *needles)


def test_a_quoted_number_in_the_file_is_refused(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(TINY.replace("leaves = 2", 'leaves = "2"'))
    refused(dclb_cli("run", str(path), "--dry-run"), "topology.leaves", "whole number")


@pytest.mark.parametrize("settings", [
    ("topology.leaves=4",),  # an override is read as TOML: 4 is a number
    ("traffic.load=1", "topology.host_rate_gbps=10", "topology.fabric_rate_gbps=10"),  # ints where floats go
    ("traffic.flows=1e2",),  # an integral float where an int goes
    ("transport.max_rto_us=5000",),  # the cap may equal the minimum
    ('traffic.sources=[{pattern="group", size_bytes=1000, flows=5}, {}]',),  # a source's size replaces the inherited workload
])
def test_legitimate_values_still_work(tiny, settings):
    result = dry_run(tiny, *settings)
    assert result.returncode == 0, result.stderr
    assert "valid: run id" in result.stdout


def test_a_flow_list_without_flows_is_refused(tmp_path):
    (tmp_path / "flows.csv").write_text("start_us,src,dst,size_bytes\n")
    path = tmp_path / "s.toml"
    path.write_text(tiny_with('pattern = "list"\nflows_csv = "flows.csv"'))
    refused(dclb_main("run", str(path), "--dry-run"), "traffic.flows_csv", "no flows")


@pytest.mark.parametrize("cell, needles", [
    ("1000.7", ("flows.csv:2", "size_bytes", "whole number")),  # truncated to 1000 before
    ("inf", ("flows.csv:2", "size_bytes", "finite")),  # an OverflowError before
])
def test_a_flow_list_cell_is_not_truncated(tmp_path, cell, needles):
    (tmp_path / "flows.csv").write_text(f"start_us,src,dst,size_bytes\n0,1,5,{cell}\n")
    path = tmp_path / "s.toml"
    path.write_text(tiny_with('pattern = "list"\nflows_csv = "flows.csv"'))
    refused(dclb_main("run", str(path), "--dry-run"), *needles)


def test_flows_and_duration_together_are_a_stated_cap(tiny):
    result = dry_run(tiny, "traffic.duration_us=5000")
    assert result.returncode == 0, result.stderr
    assert "arrivals stop after 60 flows or 5000 us, whichever comes first" in result.stderr
    assert re.search(r"flows: about \d+ expected \(traffic: poisson arrivals over duration_us = 5000, before flows = 60\)", result.stdout), result.stdout


def test_duplicate_grid_values_are_refused(tiny, tmp_path):
    refused(dclb_main("sweep", str(tiny), "--grid", "traffic.load=0.5,0.5", "--dry-run", "--out", str(tmp_path / "s")), "--grid traffic.load", "0.5", "twice")
    refused(dclb_main("sweep", str(tiny), "--grid", "traffic.load=0.2:0.6:0.2,0.4", "--dry-run", "--out", str(tmp_path / "s")), "0.4", "twice")
    path = tmp_path / "sweep.toml"
    path.write_text(TINY + '\n[sweep]\ngrid = {"lb.scheme" = ["ecmp", "rps", "ecmp"]}\n')
    refused(dclb_main("sweep", str(path), "--dry-run", "--out", str(tmp_path / "s")), "sweep.grid.lb.scheme", "'ecmp'", "twice")


# --------------------------------------------------------------------------------------------------------
# Item 2: values the engine cannot read are refused by name, never with a serde message


@pytest.mark.parametrize("settings, needles", [
    (("topology.fabric_rate_gbps=inf",), ("topology.fabric_rate_gbps", "finite")),
    (("topology.fabric_rate_gbps=nan",), ("topology.fabric_rate_gbps", "finite")),
    (("run.horizon_us=inf",), ("run.horizon_us", "finite")),
    (("topology.queue_unit=\"packets\"", "topology.buffer_packets=1e12"), ("topology.buffer_packets", "at most 4,294,967,295")),
    (("run.sampler={ports=[-1]}",), ("run.sampler.ports[0]", "greater than or equal to 0")),
    (("run.sampler={flows=[4294967296]}",), ("run.sampler.flows[0]", "32 bits")),
    (("topology.links=[{leaf=4294967296, spine=0}]",), ("topology.links[0].leaf", "32 bits")),
    (("topology.links=[{leaf=0, spine=0, rate_gbps=inf}]",), ("topology.links[0].rate_gbps", "finite")),
    (("topology.ecn_k_by_role={leaf_up=inf}",), ("topology.ecn_k_by_role.leaf_up", "finite")),
    (("traffic.deadline={kind=\"fixed\", us=nan}",), ("traffic.deadline.us", "finite")),
    (("traffic.workload={websearch=inf}",), ("traffic.workload.websearch.weight",)),
    (("transport.init_ssthresh_bytes=1e30",), ("transport.init_ssthresh_bytes", "64 bits")),
    (("lb.scheme=\"letflow\"", "lb.flowlet_timeout_us=inf"), ("lb.flowlet_timeout_us", "finite")),
    # Found by the property test: a rate that rounds to 0 bits per second made the engine divide by zero.
    (("topology.host_rate_gbps=1e-12",), ("topology.host_rate_gbps", "at least 1e-09 Gbps")),
    (("topology.fabric_delay_us=1e30",), ("topology.fabric_delay_us", "picoseconds in 64 bits")),
])
def test_values_the_engine_cannot_read_are_named(tiny, settings, needles):
    refused(dry_run(tiny, *settings), *needles)


def test_the_real_command_names_an_infinite_rate(tiny):
    refused(dclb_cli("run", str(tiny), "--set", "topology.fabric_rate_gbps=inf", "--no-store"), "topology.fabric_rate_gbps", "finite")


def test_an_engine_parse_error_that_slips_through_names_the_field(tiny):
    """Should the schema ever let through a value the engine cannot parse, the message still names the field
    (here a value set behind the schema's back: model_copy does not validate)."""
    from dclb.errors import ScenarioError
    from dclb.scenario import Sampler, load_scenario, resolve

    sc = load_scenario(tiny)
    for update, field in (
        ({"topology": sc.topology.model_copy(update={"buffer_packets": 2**40, "queue_unit": "packets", "buffer_bytes": None, "ecn_k_bytes": None})}, "topology.buffer_packets"),
        ({"run": sc.run.model_copy(update={"sampler": Sampler.model_construct(interval_us=5.0, ports=[7, -1], flows=[])})}, "run.sampler.ports[1]"),
        ({"transport": sc.transport.model_copy(update={"min_rto_us": float("inf")})}, "transport.min_rto_us"),
    ):
        bad = sc.model_copy(update=update)
        bad._resolution = None
        with pytest.raises(ScenarioError) as e:
            resolve(bad)
        assert str(e.value).startswith(f"{field}: "), str(e.value)
        assert "line 1 column" not in str(e.value)


# --------------------------------------------------------------------------------------------------------
# Item 3: long-lived traffic


LONG_LIVED = """
name = "ll"
[topology]
leaves = 2
spines = 2
hosts_per_leaf = 2
[traffic]
pattern = "long_lived"
[run]
horizon_us = 500
"""


def test_long_lived_defaults_pair_across_leaves_and_report_goodput(tmp_path):
    path = tmp_path / "ll.toml"
    path.write_text(LONG_LIVED)
    out = tmp_path / "store"
    result = dclb_main("run", str(path), "--out", str(out), "-q", "--dump-config", str(tmp_path / "c.json"))
    assert result.returncode == 0, result.stderr
    source = json.loads((tmp_path / "c.json").read_text())["sources"][0]
    assert source["senders"] == [0, 1, 2, 3] and source["receivers"] == [2, 3, 0, 1]  # the next leaf
    for label in ("Long-lived flows", "Long-lived goodput per flow, mean", "Long-lived goodput, total"):
        assert label in result.stdout
    record = json.loads(next(out.glob("runs/*/run.json")).read_text())
    summary = record["summary"]
    assert summary["long_lived_flows"] == 4
    assert 0 < summary["long_lived_goodput_min_gbps"] <= summary["long_lived_goodput_gbps"] <= summary["long_lived_goodput_max_gbps"] <= 10
    assert summary["long_lived_goodput_total_gbps"] == pytest.approx(4 * summary["long_lived_goodput_gbps"])
    # ... in the catalog, `dclb results` and a plot.
    shown = dclb_main("results", str(out), "--columns", "long_lived_goodput_total_gbps", "--format", "csv")
    assert shown.returncode == 0, shown.stderr
    assert f"{summary['long_lived_goodput_total_gbps']:.6g}"[:5] in shown.stdout
    plot = dclb_main("plot", str(out), "--x", "seed", "--y", "long_lived_goodput_gbps", "--out", str(tmp_path / "p.png"))
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "p.png").stat().st_size > 0


def test_goodput_rows_only_for_runs_with_long_lived_flows(tiny):
    result = dclb_main("run", str(tiny), "--no-store", "-q", "--set", "traffic.flows=5")
    assert result.returncode == 0, result.stderr
    assert "Long-lived" not in result.stdout


@pytest.mark.parametrize("extra, needles", [
    ('[traffic]\nreceivers = "all"\n', ("traffic.receivers", "sender 0 (host 0) is paired with itself")),
    ("[traffic]\nsenders = [1, 2]\nreceivers = [3, 1]\n", ("traffic.receivers", "sender 0 (host 1) is paired with itself")),  # receivers sorted
])
def test_a_long_lived_host_paired_with_itself_is_refused(tmp_path, extra, needles):
    path = tmp_path / "ll.toml"
    path.write_text(LONG_LIVED.replace("[traffic]\n", extra))
    refused(dclb_main("run", str(path), "--dry-run"), *needles)


def test_long_lived_defaults_need_a_second_leaf(tmp_path):
    path = tmp_path / "ll.toml"
    path.write_text(LONG_LIVED.replace("leaves = 2", "leaves = 1"))
    refused(dclb_main("run", str(path), "--dry-run"), "traffic.receivers", "one leaf")


# --------------------------------------------------------------------------------------------------------
# Item 4: --dry-run says what would run


def test_dry_run_says_valid_the_run_id_and_the_sizes(tiny, tmp_path):
    result = dclb_cli("run", str(tiny), "--dry-run", "--out", str(tmp_path / "store"))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    m = re.search(r"valid: run id (tiny-[0-9a-f]{12}) \(not yet in ", text)
    assert m, text
    assert "8 hosts, 4 switches (2 leaves, 2 spines), 24 ports (8 host NICs, 16 switch ports)" in text
    assert "flows: 60\n" in text
    assert re.search(r"simulated time: about [\d.]+ ms \(estimate", text), text
    assert re.search(r"events: about [\d.]+ [kM] \(rough estimate", text), text
    assert not (tmp_path / "store").exists()
    # The id is the one the run gets.
    done = dclb_main("run", str(tiny), "--out", str(tmp_path / "store"), "--json")
    assert json.loads(done.stdout)["run_id"] == m[1]
    again = dclb_main("run", str(tiny), "--dry-run", "--out", str(tmp_path / "store"), "--json")
    facts = json.loads(again.stdout)
    assert facts["valid"] and facts["stored"] and facts["run_id"] == m[1]
    assert (facts["hosts"], facts["ports"], facts["flows"], facts["flows_exact"], facts["horizon"]) == (8, 24, 60, True, False)


def test_dry_run_with_a_horizon(tmp_path):
    path = tmp_path / "ll.toml"
    path.write_text(LONG_LIVED)
    result = dclb_main("run", str(path), "--dry-run", "--no-store")
    assert result.returncode == 0, result.stderr
    assert "flows: 4\n" in result.stdout and "simulated time: at most 500.0 us (run.horizon_us)" in result.stdout


def test_sweep_dry_run_totals(tiny, tmp_path):
    result = dclb_main("sweep", str(tiny), "--grid", "traffic.load=0.2,0.4,3", "--seeds", "2", "--dry-run", "--out", str(tmp_path / "s"))
    assert result.returncode == 0, result.stderr
    assert re.search(r"valid: 4 of 6 points \(2 invalid, listed above\); 4 to run: 240 flows, about [\d.]+ [kM] events in all \(rough estimate\), up to [\d.]+ ms simulated per point", result.stdout), result.stdout
