"""Bad input gets one line naming the field and a non-zero exit: never a traceback or a Rust panic."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY, dclb_cli, tiny_with


def _check(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    text = result.stderr
    assert "Traceback" not in text and "panicked" not in text, text
    lines = [l for l in text.strip().splitlines() if l.startswith("error:")]
    assert len(lines) == 1, text
    for n in needles:
        assert n in lines[0], (n, lines[0])


def _scenario(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def test_unknown_field(tmp_path):
    _check(dclb_cli("run", str(_scenario(tmp_path, TINY.replace("spines = 2", "spines = 2\nspinez = 3"))), "--no-store"), "topology.spinez", "unknown field", "spines")


def test_unknown_field_by_override(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "traffic.lod=0.5", "--no-store"), "traffic.lod", "unknown field")


def test_dsack_undo_needs_sack(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "transport.dsack_undo=true", "--no-store"), "transport.dsack_undo", "transport.sack")


def test_unknown_scheme(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "lb.scheme=magic", "--no-store"), "lb.scheme", "magic", "ecmp")


def test_unknown_scheme_parameter(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "lb.flowlet_timeout=5", "--no-store"), "lb.flowlet_timeout")


@pytest.mark.parametrize("load", ["0", "-0.2", "3.0", "1.5"])
def test_load_out_of_range(tiny, load):
    _check(dclb_cli("run", str(tiny), "--set", f"traffic.load={load}", "--no-store"), "traffic.load", "(0, 1]")


def test_access_load_the_fabric_cannot_carry(tiny):
    # 4 hosts per leaf at 10G over 2 x 10G uplinks: access load 0.6 is fabric load 1.2.
    _check(dclb_cli("run", str(tiny), "--set", "traffic.load=0.6", "--set", "traffic.load_basis=access", "--no-store"), "traffic.load", "fabric load 1.20")


def test_cdf_not_monotonic(tmp_path):
    (tmp_path / "bad.cdf").write_text("0 0\n1000 0.5\n900 0.7\n5000 1\n")
    _check(dclb_cli("run", str(_scenario(tmp_path, TINY.replace('"websearch"', '"bad.cdf"'))), "--no-store"), "bad.cdf:3", "not monotonic")


def test_cdf_probability_decreasing(tmp_path):
    (tmp_path / "bad.cdf").write_text("0 0\n1000 0.5\n2000 0.4\n5000 1\n")
    _check(dclb_cli("run", str(_scenario(tmp_path, TINY.replace('"websearch"', '"bad.cdf"'))), "--no-store"), "bad.cdf:3", "probabilities must not decrease")


def test_cdf_not_ending_at_one(tmp_path):
    (tmp_path / "short.cdf").write_text("0 0\n1000 0.5\n5000 0.9\n")
    _check(dclb_cli("run", str(_scenario(tmp_path, TINY.replace('"websearch"', '"short.cdf"'))), "--no-store"), "short.cdf", "must be 1")


def test_missing_workload_file(tmp_path):
    _check(dclb_cli("run", str(_scenario(tmp_path, TINY.replace('"websearch"', '"nope.cdf"'))), "--no-store"), "traffic.workload", "nope.cdf")


def test_missing_scenario_file(tmp_path):
    _check(dclb_cli("run", str(tmp_path / "absent.toml")), "absent.toml", "no such scenario file")


def test_zero_spines(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "topology.spines=0", "--no-store"), "topology.spines", "greater than or equal to 1")


def test_malformed_toml(tmp_path):
    _check(dclb_cli("run", str(_scenario(tmp_path, "name = \n[topology"))), "not valid TOML")


def test_wrong_type(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "topology.leaves=\"four\"", "--no-store"), "topology.leaves")


def test_bad_host_set(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "traffic.senders=\"leaf:5\"", "--no-store"), "traffic.senders", "leaf")


def test_link_override_out_of_range(tmp_path):
    text = TINY + "\n[[topology.links]]\nleaf = 0\nspine = 9\nfailed = true\n"
    _check(dclb_cli("run", str(_scenario(tmp_path, text)), "--no-store"), "topology.links[0].spine", "out of range")


def test_failures_that_disconnect_the_fabric(tmp_path):
    text = TINY + "\n[[topology.links]]\nleaf = 0\nspine = 0\nfailed = true\n[[topology.links]]\nleaf = 0\nspine = 1\nfailed = true\n"
    result = dclb_cli("run", str(_scenario(tmp_path, text)), "--no-store")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "topology" in result.stderr


def test_long_lived_without_horizon(tmp_path):
    _check(dclb_cli("run", str(_scenario(tmp_path, tiny_with('pattern = "long_lived"'))), "--no-store"), "run.horizon_us")


def test_failed_run_leaves_store_untouched(tiny, tmp_path):
    out = tmp_path / "res"
    ok = dclb_cli("run", str(tiny), "--out", str(out), "-q")
    assert ok.returncode == 0, ok.stderr
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    bad = dclb_cli("run", str(tiny), "--out", str(out), "--set", "traffic.load=3.0")
    assert bad.returncode == 2
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


@pytest.mark.parametrize("scheme, setting, needles", [
    ("drill", "lb.d=0", ("lb.d", "[1, 64]")),
    ("drill", "lb.m=1.5", ("lb.m", "whole number")),
    ("conga", "lb.metric_bits=12", ("lb.metric_bits", "[1, 8]")),
    ("hermes", "lb.preset=\"fast\"", ("lb.preset", "readme, mdtlb")),
    ("clove", "lb.recovery=\"sometimes\"", ("lb.recovery", "none, decay, reset")),
    ("letflow", "lb.flowlet_timeout_us=\"fast\"", ("lb.flowlet_timeout_us", "expected a number")),
    # ACKs routed at the receiving host: only for the schemes that choose at the host.
    ("conga", "lb.ack_routing=\"edge\"", ("lb.ack_routing", "scheme 'conga'", "presto, hermes, clove, mdtlb")),
    ("ecmp", "lb.ack_routing=\"edge\"", ("lb.ack_routing", "scheme 'ecmp'", "\"ecmp\" or \"edge\"")),
    ("tam", "lb.ack_routing=\"edge\"", ("lb.ack_routing", "scheme 'tam'", "\"flow_fastest\" or \"ecmp\"")),
    ("hermes", "lb.ack_routing=\"receiver\"", ("lb.ack_routing", "ecmp, edge")),
])
def test_bad_scheme_parameters(tiny, scheme, setting, needles):
    _check(dclb_cli("run", str(tiny), "--set", f"lb.scheme={scheme}", "--set", setting, "--no-store"), *needles)


# Rules that only the engine's check knows (it relates fields to one another): `--dry-run` asks it too.


def test_dry_run_asks_the_engines_check(tiny):
    _check(dclb_cli("run", str(tiny), "--dry-run", "--set", "lb.scheme=drill", "--set", "lb.d=0"), "lb.d", "[1, 64]")


@pytest.mark.parametrize("traffic, settings, needles", [
    (None, ["traffic.senders=3", "traffic.receivers=3", "traffic.inter_leaf_only=false"], ("traffic.receivers", "two different hosts")),
    (None, ["traffic.senders=\"leaf:1\"", "traffic.receivers=\"leaf:1\""], ("traffic.receivers", "on leaf 1", "inter_leaf_only = false")),
    ('pattern = "long_lived"', ["traffic.receivers=\"all\"", "run.horizon_us=100"], ("traffic.receivers", "paired with itself")),
    ('pattern = "incast"\nworkload = "websearch"', ["traffic.senders=[2]", "traffic.receivers=[2]"], ("traffic.senders", "every sender is the receiver")),
    (None, ["traffic.deadline={kind=\"uniform\", lo_us=5, hi_us=2}"], ("traffic.deadline.hi_us", "at least lo_us")),
    (None, ["traffic.workload={websearch=1, datamining=-1}"], ("traffic.workload.datamining.weight", "positive")),
    ('pattern = "list"', ["traffic.flow_list=[{start_us=0, src=1, dst=99, size_bytes=5}]"], ("traffic.flow_list[0]", "host 99 does not exist")),
    (None, ["traffic.sources=[{}, {pattern=\"group\", flows=3, senders=[1], receivers=[1], inter_leaf_only=false}]"], ("traffic.sources[1].receivers", "two different hosts")),
])
def test_impossible_traffic_names_the_users_field(tiny, tmp_path, traffic, settings, needles):
    path = tiny if traffic is None else _scenario(tmp_path, tiny_with(traffic))
    _check(dclb_cli("run", str(path), "--dry-run", *[a for s in settings for a in ("--set", s)]), *needles)


def test_a_flow_list_error_names_the_csv_line(tmp_path):
    (tmp_path / "flows.csv").write_text("start_us,src,dst,size_bytes\n0,1,5,1000\n\n5,2,2,1000\n")
    text = tiny_with('pattern = "list"\nflows_csv = "flows.csv"')
    _check(dclb_cli("run", str(_scenario(tmp_path, text)), "--dry-run"), "flows.csv:4", "same host")


def test_ecn_threshold_not_below_the_buffer(tiny):
    # A fixed 384,000 B buffer with the default K, which scales with the rate: 390,000 B at 40 Gbps.
    result = dclb_cli("run", str(tiny), "--set", "topology.fabric_rate_gbps=40", "--set", "topology.buffer_bytes=384000", "--no-store")
    _check(result, "topology.ecn_k_bytes", "topology.buffer_bytes", "40 Gbps", "never mark")


def test_buffer_given_in_the_other_unit(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "topology.buffer_packets=100", "--no-store"), "topology.buffer_packets", "queue_unit")


def test_host_queue_limit_below_a_packet(tiny):
    _check(dclb_cli("run", str(tiny), "--set", "transport.host_queue_limit_bytes=1000", "--no-store"), "transport.host_queue_limit_bytes", "full-size packet")


def test_an_engine_panic_is_one_line_and_exit_3(monkeypatch, capsys):
    """pyo3 turns a Rust panic into PanicException, a BaseException that `except Exception` misses."""
    from dclb import cli as cli_module

    class PanicException(BaseException):  # the name is what main() recognises, as pyo3's class has no import path
        pass

    def boom(**_kwargs):
        raise PanicException("index out of bounds: the len is 3 but the index is 7")

    monkeypatch.setattr(cli_module.cli, "main", boom)
    monkeypatch.delenv("DCLB_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    assert exit_info.value.code == 3
    err = capsys.readouterr().err
    assert "internal error" in err and "index out of bounds" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_an_interrupted_command_run_in_process_gives_the_caller_its_signal_handlers_back(monkeypatch):
    """main() ignores further signals while it exits; an in-process caller (this test process) must not keep that:
    every process it started afterwards would inherit an ignored SIGINT and could no longer be interrupted."""
    import signal

    from dclb import cli as cli_module

    def interrupted(**_kwargs):
        raise KeyboardInterrupt

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(cli_module.cli, "main", interrupted)
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    assert exit_info.value.code == 130
    assert {s: signal.getsignal(s) for s in before} == before
