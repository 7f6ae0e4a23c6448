"""A lean process (issue #30): a run loads the storage, statistics and plotting stacks only when it uses them,
and the summary is the same number for number whichever way its tables were read.

The process tests run the command in a fresh interpreter (what was imported before would hide what a run
imports) and read its modules and peak RSS there: VmHWM, the high-water mark of its own memory
(``ru_maxrss`` of a child started by ``subprocess`` would include the RSS of the process that started it). The RSS bound has a wide margin (the no-store run of the
quick start holds about 55 MB; before this work 150 MB): it guards against a heavy stack coming back, not
against a few MB.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import dclb
from dclb.scenario import engine_config, load_scenario
from dclb.summary import summarize

from conftest import tiny_with

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "scenarios" / "quickstart.toml"
HEAVY = ("pandas", "pyarrow", "duckdb", "scipy", "matplotlib")
#: Peak RSS (MB of 10^6 bytes) that the quick start's `dclb run --no-store` stays under, with a margin.
NO_STORE_RSS_BOUND_MB = 80

#: Runs what argv[1] says in this fresh interpreter, then writes the heavy modules it loaded and its peak RSS
#: to argv[2]: "cli ARGS..." runs the command `dclb ARGS...`; "worker SCENARIO STORE" runs a point as a
#: sweep's worker does (its run folder only, no catalog row).
PROBE = r"""
import json, sys
mode, report, args = sys.argv[1], sys.argv[2], sys.argv[3:]
try:
    if mode == "cli":
        sys.argv = ["dclb", *args]
        from dclb.cli import main
        main()
    else:
        import dclb
        dclb.run(args[0], out=args[1], catalog=False)
except SystemExit as stop:
    if stop.code not in (0, None):
        raise
heavy = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in %r} | ({"pyarrow.parquet"} & set(sys.modules)))
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
with open(report, "w") as fh:
    json.dump({"modules": heavy, "peak_rss_mb": int(status["VmHWM"].split()[0]) * 1024 / 1e6}, fh)
""" % (HEAVY,)


def _probe(tmp_path: Path, mode: str, *args: str) -> dict:
    report = tmp_path / "probe.json"
    done = subprocess.run([sys.executable, "-c", PROBE, mode, str(report), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(report.read_text())


def test_a_run_without_a_store_loads_no_storage_or_statistics_stack(tmp_path):
    probe = _probe(tmp_path, "cli", "run", str(QUICKSTART), "--no-store", "-q")
    assert probe["modules"] == [], f"`dclb run --no-store` imported {probe['modules']}"
    assert probe["peak_rss_mb"] < NO_STORE_RSS_BOUND_MB


def test_a_run_without_a_store_as_json_loads_no_storage_stack_either(tmp_path):
    probe = _probe(tmp_path, "cli", "run", str(QUICKSTART), "--no-store", "--json", "--set", "traffic.flows=200")
    assert probe["modules"] == []


def test_a_stored_run_loads_the_store_but_not_pandas(tmp_path):
    probe = _probe(tmp_path, "cli", "run", str(QUICKSTART), "--out", str(tmp_path / "res"), "-q", "--set", "traffic.flows=200")
    assert set(probe["modules"]) == {"pyarrow", "pyarrow.parquet", "duckdb"}  # Parquet files and the catalog
    assert (tmp_path / "res" / "catalog.duckdb").is_file()


def test_a_sweep_worker_writes_its_run_folder_without_duckdb_or_pandas(tmp_path):
    probe = _probe(tmp_path, "worker", str(QUICKSTART), str(tmp_path / "res"))
    assert set(probe["modules"]) == {"pyarrow", "pyarrow.parquet"}
    assert len(list((tmp_path / "res" / "runs").iterdir())) == 1


# --------------------------------------------------------------------------------------------------------
# The same numbers whichever way the tables are read


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


SCENARIOS = {
    "tcp": tiny_with('pattern = "poisson"\nworkload = "websearch"\nload = 0.4\nflows = 80'),
    # UDP faster than the fabric can carry: flows lose packets (udp_* keys) and some never complete.
    "udp with loss": tiny_with('pattern = "poisson"\nworkload = "websearch"\nload = 0.9\nflows = 40\ntransport = "udp"\nudp_rate_gbps = 10'),
    # Stopped early: unfinished flows, whose finish and FCT are null.
    "cut short": tiny_with('pattern = "poisson"\nworkload = "websearch"\nload = 0.6\nflows = 80') + "[run]\nhorizon_us = 3000\n",
}
FILES = {
    "window": (QUICKSTART, ["traffic.flows=300", "run.warmup_us=2000"]),
    "long-lived": (ROOT / "scenarios" / "long_lived.toml", []),
    "deadlines": (ROOT / "scenarios" / "deadlines.toml", ["traffic.sources.0.flows=100"]),
    "failed links": (ROOT / "scenarios" / "failed_and_slow_links.toml", ["traffic.flows=200"]),
}


@pytest.fixture(params=sorted(SCENARIOS) + sorted(FILES))
def scenario(request, tmp_path):
    if request.param in SCENARIOS:
        path = tmp_path / "s.toml"
        path.write_text(SCENARIOS[request.param])
        return load_scenario(path)
    path, overrides = FILES[request.param]
    return load_scenario(path, overrides)


def test_the_summary_from_engine_columns_is_the_summary_from_arrow_tables(scenario):
    from dclb.runner import load_ratios
    from dclb.tables import EngineTable

    result = dclb.run(scenario, out=None)
    assert isinstance(result.tables["flows"], EngineTable)
    # The same tables as pyarrow Tables, read through pyarrow.compute as every summary was before.
    flows, ports = result.flows, result.ports
    assert isinstance(flows, pa.Table) and flows.num_rows == result.tables["flows"].num_rows
    again = summarize(flows, ports, result.stats, short_threshold_bytes=scenario.run.short_threshold_bytes)
    assert list(again) == list(result.summary)
    differ = {k: (result.summary[k], again[k]) for k in again if not _same(result.summary[k], again[k])}
    assert not differ
    ratios = load_ratios(engine_config(scenario), flows, float(result.stats["sim_time_us"]))
    assert all(_same(result.stats[k], v) for k, v in ratios.items())


def test_the_engine_columns_are_the_arrow_columns(tmp_path):
    from dclb.tables import ArrowTable

    path = tmp_path / "s.toml"
    path.write_text(SCENARIOS["cut short"])
    result = dclb.run(load_scenario(path), out=None)
    engine, arrow = result.tables["flows"], ArrowTable(result.flows)
    assert engine.column_names == arrow.column_names
    assert result.flows.column("finish_us").null_count > 0  # unfinished flows: nulls read as NaN both ways
    assert result.flows.column("deadline_met").null_count > 0  # and as False in a flag column
    for name, field in zip(arrow.column_names, result.flows.schema):
        if pa.types.is_floating(field.type) or pa.types.is_integer(field.type):
            assert engine.floats(name).tobytes() == arrow.floats(name).tobytes(), name
        if pa.types.is_integer(field.type):
            assert engine.ints(name).tobytes() == arrow.ints(name).tobytes(), name
        if pa.types.is_boolean(field.type):
            assert (engine.bools(name) == arrow.bools(name)).all(), name
        if pa.types.is_string(field.type):
            for text in set(result.flows.column(name).to_pylist()) | {"absent"}:
                assert (engine.equals(name, text) == arrow.equals(name, text)).all(), (name, text)


def test_catalog_columns_built_from_buffers_are_those_pyarrow_builds():
    from dclb.store.catalog import arrow_column

    cases = {
        "BOOLEAN": ([True, None, False] * 7, pa.bool_()),
        "BIGINT": ([1, None, -(2**63), 2**63 - 1], pa.int64()),
        "DOUBLE": ([1.5, None, -0.0, 1e300], pa.float64()),
        "VARCHAR": (["a", None, "é ü", "", "x" * 300], pa.string()),
    }
    for kind, (values, arrow_type) in cases.items():
        built = arrow_column(values, kind)
        built.validate(full=True)
        assert built.equals(pa.array(values, type=arrow_type)), kind
        assert arrow_column([None, None], kind).equals(pa.array([None, None], type=arrow_type)), kind
    assert arrow_column([], "VARCHAR").equals(pa.array([], pa.string()))


def test_bench_reports_the_peak_rss_of_dclb_run_with_and_without_a_store():
    from dclb.bench import run_bench

    report = run_bench(["traffic.flows=30"], processes=True)
    assert 0 < report["run_no_store_peak_rss_mb"] < report["run_store_peak_rss_mb"]
    assert report["run_no_store_peak_rss_mb"] < NO_STORE_RSS_BOUND_MB
