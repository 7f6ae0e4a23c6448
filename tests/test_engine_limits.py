"""The engine's limits through the real CLI (issue #11): DCTCP marking against buffers at every rate, a run
that makes no progress, and scenarios too large for the machine's memory. Each gets one line naming the field
and exit 2, never a hang, a Rust abort or a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TINY

QUICKSTART = Path(__file__).resolve().parent.parent / "scenarios" / "quickstart.toml"


def _cli(*args: str, memory: str | None = "8GB", timeout: float = 120) -> subprocess.CompletedProcess:
    """The installed `dclb` (as conftest's dclb_cli), with a fixed memory limit so that what is refused does
    not depend on this machine's memory, and a timeout well under the suite's (a hang fails fast)."""
    exe = shutil.which("dclb") or str(Path(sys.executable).parent / "dclb")
    env = {k: v for k, v in os.environ.items() if k != "DCLB_MEMORY_LIMIT"}
    if memory is not None:
        env["DCLB_MEMORY_LIMIT"] = memory
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, env=env)


def _error_line(result: subprocess.CompletedProcess, *needles: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "panicked" not in result.stderr and "memory allocation" not in result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


# --------------------------------------------------------------------------------------------------------
# DCTCP marking and buffers


def test_dctcp_marks_at_100_gbps():
    # Defaults scale K and the buffer together: at 100 Gbps DCTCP marks (the tester saw 0 marks and 111 k drops).
    result = _cli("run", str(QUICKSTART), "--set", "topology.host_rate_gbps=100", "--set", "topology.fabric_rate_gbps=100", "--set", "traffic.flows=200", "--no-store", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["ecn_marks"] > 0


@pytest.mark.parametrize(
    "options, needles",
    [
        # K at or above the buffer, both given.
        (["topology.ecn_k_bytes=400000", "topology.buffer_bytes=384000"], ["topology.ecn_k_bytes: K = 400000", "topology.buffer_bytes = 384000", "never mark"]),
        # K just below the buffer: a full-size packet that finds K queued does not fit, so none is ever marked.
        (["topology.ecn_k_bytes=383000"], ["topology.ecn_k_bytes: K = 383000", "(the default at this rate)", "at most the buffer less one full-size packet (382500 bytes)"]),
        # A per-role K and the NIC ring in packets.
        (['topology.queue_unit="packets"', "topology.ecn_k_by_role.host_up=600"], ["topology.ecn_k_by_role.host_up", "transport.nic_queue_packets = 512"]),
        # A link override's rate gives its ports the default K of 100 Gbps, above the fixed buffer.
        (["topology.buffer_bytes=384000", "topology.links=[{leaf=0,spine=1,rate_gbps=100}]"], ["topology.ecn_k_bytes: K = 975000 bytes (the default at this rate)", "at 100 Gbps (topology.links[0].rate_gbps)", "topology.buffer_bytes = 384000"]),
        # A positive threshold in packets that rounds to 0 would turn marking off.
        (['topology.queue_unit="packets"', "topology.ecn_k_packets=0.4"], ["topology.ecn_k_packets", "rounds to 0 packets"]),
    ],
)
def test_thresholds_that_could_never_mark_are_refused(tiny, options, needles):
    args = [a for o in options for a in ("--set", o)]
    _error_line(_cli("run", str(tiny), *args, "--no-store"), *needles)


@pytest.mark.parametrize("unit", ["bytes", "packets"])
def test_defaults_hold_a_packet_and_mark_at_very_low_rates(tiny, unit):
    # 10 Mbps: the rate-scaled default buffer would hold less than a packet; the defaults keep room for one.
    result = _cli("run", str(tiny), "--set", "topology.host_rate_gbps=0.01", "--set", "topology.fabric_rate_gbps=0.01", "--set", f'topology.queue_unit="{unit}"', "--dry-run")
    assert result.returncode == 0, result.stderr


def test_a_buffer_smaller_than_a_packet_is_refused_with_the_minimum():
    _error_line(_cli("run", str(QUICKSTART), "--set", "topology.buffer_bytes=1499", "--no-store"), "topology.buffer_bytes: 1499 bytes", "use at least 1500")


# --------------------------------------------------------------------------------------------------------
# No progress


def test_a_run_that_makes_no_progress_stops_with_an_error(tiny):
    # ECMP pins some flows to a blackholed link; without a horizon they would retry at their RTO forever.
    line = _error_line(
        _cli("run", str(tiny), "--set", "topology.links=[{leaf=0,spine=0,blackhole=true}]", "--out", str(tiny.parent / "store"), timeout=60),
        "run: no progress for",
        "flows are active and none has delivered a new byte since",
        "set run.horizon_us",
    )
    assert "64.0 s" in line
    # Nothing is stored for the stopped run.
    assert not any((tiny.parent / "store").glob("*/COMPLETE"))


def test_loss_rate_one_stops_too(tiny):
    _error_line(_cli("run", str(tiny), "--set", "topology.links=[{leaf=1,spine=1,loss_rate=1.0}]", "--no-store", timeout=60), "run: no progress for")


# --------------------------------------------------------------------------------------------------------
# Memory


@pytest.mark.parametrize(
    "option, field",
    [
        ("traffic.flows=1000000000", "traffic.flows"),
        ("topology.leaves=100000", "topology.leaves"),
        ("run.sampler={interval_us=0.0001}", "run.sampler.interval_us"),
        ("topology.hosts_per_leaf=10000000", "topology.hosts_per_leaf"),
    ],
)
def test_a_run_larger_than_memory_is_refused_before_allocating(option, field):
    line = _error_line(_cli("run", str(QUICKSTART), "--set", option, "--no-store"), f"error: {field}: the run would need about ", "more than the 8.0 GB it may use (DCLB_MEMORY_LIMIT=8GB)")
    assert "DCLB_MEMORY_LIMIT" in line


def test_a_delay_longer_than_the_longest_rto_is_refused():
    # 10^12 us links: every sender would resend its window once per RTO for 46 days of round trip.
    _error_line(_cli("run", str(QUICKSTART), "--set", "topology.fabric_delay_us=1e12", "--no-store"), "topology.fabric_delay_us", "transport.max_rto_us")


def test_the_memory_limit_can_be_set_and_is_read_as_a_size(tiny):
    _error_line(_cli("run", str(tiny), "--no-store", memory="10KB"), "more than the 10.0 KB it may use (DCLB_MEMORY_LIMIT=10KB)")
    _error_line(_cli("run", str(tiny), "--no-store", memory="lots"), "DCLB_MEMORY_LIMIT: cannot read 'lots'")


def test_a_run_that_outgrows_its_memory_stops_with_an_error(tmp_path):
    # One 50 MB flow: its arrivals span nothing, so the sampler's rows (1 us x 16 ports over some 40 ms) are
    # counted only as the run records them, and the limit stops it.
    scenario = tmp_path / "one.toml"
    scenario.write_text(TINY.replace('pattern = "poisson"', 'pattern = "list"\nflow_list = [{start_us = 0, src = 0, dst = 4, size_bytes = 50000000}]').replace("workload = \"websearch\"\nload = 0.4\nflows = 60\n", "") + "\n[run]\nsampler = { interval_us = 1 }\n")
    _error_line(_cli("run", str(scenario), "--no-store", memory="40MB"), "run.sampler.interval_us: at ", "the sampler holds", "more than the 40.0 MB it may use")


@pytest.mark.parametrize("option, field", [("topology.fabric_rate_gbps=1e-12", "topology.fabric_rate_gbps"), ("topology.links=[{leaf=0,spine=0,rate_gbps=1e-12}]", "topology.links[0].rate_gbps")])
def test_a_rate_below_one_bit_per_second_is_refused_not_a_panic(tiny, option, field):
    _error_line(_cli("run", str(tiny), "--set", option, "--no-store"), f"error: {field}: ", "1 bit")


# --------------------------------------------------------------------------------------------------------
# Issue #24: the clock's range, runs with nothing to do, contradictory parameters, runs that never end. The
# engine decides each (Config::check, the running simulation); here, the user's one line and exit 2.


@pytest.mark.parametrize(
    "options, needles",
    [
        (["topology.host_rate_gbps=1e-9"], ["error: topology.host_rate_gbps: the flows of ", "at the earliest", "clock", "picoseconds in 64 bits"]),
        (["traffic.load=1e-12"], ["error: traffic.load: 60 flows arriving at ", "clock"]),
        (['traffic.transport="udp"', "traffic.udp_rate_gbps=1e-9"], ["error: traffic.udp_rate_gbps: ", "clock"]),
        (["traffic.start_us=1.8e13", "traffic.duration_us=1e12"], ["error: traffic.duration_us: start_us + duration_us = 1.9e13 us", "clock"]),
        (["traffic.start_us=1.8e13", 'traffic.deadline={kind="fixed", us=1e12}'], ["error: traffic.deadline.us: the last flow's deadline", "clock"]),
        (["transport.max_rto_us=1e12"], ["error: transport.max_rto_us: the no-progress watchdog waits 6.4e13 us", "clock"]),
    ],
)
def test_times_beyond_the_clock_are_one_line_before_the_run(tiny, options, needles):
    # Each ran to "flows completed" with every FCT 0 and 18,446,744 s of simulated time (the clock saturated).
    args = [a for o in options for a in ("--set", o)]
    _error_line(_cli("run", str(tiny), *args, "--no-store"), *needles)
    _error_line(_cli("run", str(tiny), *args, "--dry-run"), *needles)


def test_a_source_with_nothing_to_do_is_one_line_before_the_run(tiny):
    _error_line(_cli("run", str(tiny), "--set", "traffic.duration_us=1e-6", "--no-store"), "error: traffic.duration_us: 1e-6 us of arrivals at ", "at least one")
    _error_line(_cli("run", str(tiny), "--set", "run.horizon_us=10", "--dry-run"), "error: run.horizon_us: ", "would start before the horizon")


@pytest.mark.parametrize(
    "options, needles",
    [
        (['lb.scheme="hermes"', "lb.rtt_low_us=200", "lb.rtt_high_us=100"], ["error: lb.rtt_low_us: lb.rtt_low_us = 200 us and lb.rtt_high_us = 100 us break rtt_low_us <= rtt_high_us: "]),
        (['lb.scheme="mdtlb"', "lb.portion_small=0.9", "lb.portion_big=0"], ["error: lb.portion_small: ", "break portion_small <= portion_big"]),
        (['lb.scheme="lbt"', "lb.q_min_bytes=5000", "lb.q1_max_bytes=3000"], ["error: lb.q_min_bytes: ", "break q_min_bytes <= q1_max_bytes if q1_max_bytes > 0"]),
        # Only the upper bound given, below the published lower one: the given one is named.
        (['lb.scheme="hermes"', 'lb.timing="published"', "lb.rtt_high_us=50"], ["error: lb.rtt_high_us: lb.rtt_low_us = 60 us (not given: the default"]),
    ],
)
def test_contradictory_scheme_parameters_are_one_line(tiny, options, needles):
    args = [a for o in options for a in ("--set", o)]
    _error_line(_cli("run", str(tiny), *args, "--dry-run"), *needles)


def test_the_schemes_list_their_relations():
    result = _cli("schemes", "--json")
    assert result.returncode == 0, result.stderr
    relations = {s["name"]: [r["relation"] for r in s["relations"]] for s in json.loads(result.stdout)}
    assert relations["hermes"] == ["rtt_low_us <= rtt_high_us"]
    assert "q_min_bytes <= q1_max_bytes if q1_max_bytes > 0" in relations["lbt"]
    assert relations["ecmp"] == []
    shown = _cli("schemes")
    assert "rtt_low_us <= rtt_high_us" in shown.stdout


def test_a_run_beyond_the_event_limit_is_refused_and_the_limit_can_be_raised(tiny):
    # Hermes probing every picosecond: the run "ran forever" (issue #24); its probes are in the estimate now.
    args = ["--set", 'lb.scheme="hermes"', "--set", "lb.probe_us=1e-6", "--dry-run"]
    _error_line(_cli("run", str(tiny), *args), "error: lb.probe_us: the run would take about ", "hermes probes", "more than the limit of 100.0 G", "DCLB_EVENT_LIMIT=none")
    insisted = subprocess.run([shutil.which("dclb") or str(Path(sys.executable).parent / "dclb"), "run", str(tiny), *args], capture_output=True, text=True, timeout=120, env={**os.environ, "DCLB_EVENT_LIMIT": "none"})
    assert insisted.returncode == 0, insisted.stderr


def test_a_run_held_to_its_event_limit_stops_when_only_timers_run(tmp_path):
    # One flow whose only path is a blackhole, and a sampler ticking every microsecond: the run's estimate
    # (about 1,200 events) is within a limit of 200,000, but while the flow retries at its RTO the sampler
    # alone keeps the run busy; the limit stops it long before the 64 s no-progress window would.
    scenario = tmp_path / "stuck.toml"
    scenario.write_text(
        "[topology]\nleaves = 2\nspines = 1\nhosts_per_leaf = 1\n[[topology.links]]\nleaf = 0\nspine = 0\nblackhole = true\n"
        '[traffic]\npattern = "list"\nflow_list = [{start_us = 0, src = 0, dst = 1, size_bytes = 100000}]\n'
        "[run]\nsampler = { interval_us = 1, ports = [2] }\n"
    )
    exe = shutil.which("dclb") or str(Path(sys.executable).parent / "dclb")
    env = {**os.environ, "DCLB_MEMORY_LIMIT": "8GB", "DCLB_EVENT_LIMIT": "2e5"}
    result = subprocess.run([exe, "run", str(scenario), "--no-store"], capture_output=True, text=True, timeout=120, env=env)
    _error_line(result, "error: run: at ", "more than the limit of 200.0 k (DCLB_EVENT_LIMIT=2e5; set DCLB_EVENT_LIMIT=none", "no flow has delivered a byte since 0.0 us")
