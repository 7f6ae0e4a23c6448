"""The benchmarks: scenarios S1 (issue #2, the default) and P1 (issue #12), timed.

S1: 4 leaves x 4 spines x 8 hosts per leaf, every link 10 Gbps with 1 µs propagation, 256-packet buffers,
K = 65 packets, DCTCP, ECMP, web search at fabric load 0.5 (access load 0.25; the leaves are 2:1
oversubscribed and every flow crosses the spines) between random inter-leaf pairs, 10,000 flows.

P1: the papers' large fabric: 10 leaves x 10 spines x 20 hosts per leaf, every link 40 Gbps with 1 µs
propagation, 250-packet buffers, K = 100 packets, DCTCP, ECMP, web search at fabric load 0.5, 10,000 flows.

Reported: events per second and wall time of the engine run (Python overhead included but small), peak
resident memory of this process, and the memory growth per flow in flight. Timing is never asserted in tests;
this command is how speed is measured.

This process only runs the engine: it neither summarises nor stores the run, so its peak RSS is the engine's
and the front's floor. With ``processes=True`` (``dclb bench --rss``) the same scenario is also run as a user
runs it, ``dclb run``, in processes of their own, once with ``--no-store`` and once into a new store in a
temporary directory, and each one's peak RSS is reported (its own high-water mark: every import, the
summary, the Parquet files and the DuckDB catalog included).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from .scenario import load_scenario


BENCH_SCENARIOS = ("s1", "p1")


def bench_scenario_path(name: str = "s1") -> Path:
    if name not in BENCH_SCENARIOS:
        raise ValueError(f"unknown benchmark scenario {name!r}; one of {', '.join(BENCH_SCENARIOS)}")
    return Path(str(resources.files("dclb") / "data" / "scenarios" / f"bench_{name}.toml"))


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * resource.getpagesize() / 1e6


def _peak_rss_mb() -> float:
    """This process's peak RSS in MB of 10^6 bytes, as :func:`_rss_mb` counts: VmHWM, the high-water mark of
    its own memory (``ru_maxrss`` would include the RSS of the process that started it, if that was larger:
    Linux carries it across ``exec``)."""
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh)
    return int(status["VmHWM"].split()[0]) * 1024 / 1e6


#: ``dclb run ARGS`` (the command's own entry point) in this interpreter, writing its peak RSS to the file
#: ARGV[1] once the command is done: VmHWM, the high-water mark of this process's own memory. Not the child's
#: ``ru_maxrss``: Linux carries that across ``exec``, so a child that ``subprocess`` starts would report the
#: RSS its parent had (this benchmark's process) if that was larger.
_RUN_AND_REPORT = """
import sys
report, sys.argv = sys.argv[1], ["dclb", "run", *sys.argv[2:]]
from dclb.cli import main
try:
    main()
finally:
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh)
    with open(report, "w") as fh:
        fh.write(status["VmHWM"].split()[0])
"""


def run_process_peak_rss_mb(scenario_file: Path, overrides: list[str], store: bool) -> float:
    """Peak RSS in MB (10^6 bytes) of ``dclb run scenario_file`` in a process of its own: with ``store`` into a
    new store in a temporary directory, else with ``--no-store``. A run that fails raises RuntimeError with
    its last line of error output."""
    with tempfile.TemporaryDirectory(prefix="dclb-bench-") as folder:
        report = Path(folder) / "peak_kib"
        command = [sys.executable, "-c", _RUN_AND_REPORT, str(report), str(scenario_file), "-q", "--json"]
        for override in overrides:
            command += ["--set", override]
        command += ["--out", str(Path(folder) / "results")] if store else ["--no-store"]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0 or not report.is_file():
            lines = done.stderr.strip().splitlines()
            raise RuntimeError(f"dclb run {'with a store' if store else '--no-store'} failed ({done.returncode}): {lines[-1] if lines else 'no message'}")
        return int(report.read_text()) * 1024 / 1e6


def run_bench(
    overrides: list[str] | None = None,
    scenario: str = "s1",
    progress: Callable[[float, int, int, int], None] | None = None,
    processes: bool = False,
) -> dict[str, Any]:
    """Runs benchmark ``scenario`` (S1 or P1, with ``overrides``) and returns the measurements; ``progress`` is
    called between chunks of events as :func:`dclb.runner.simulate` does (``dclb bench`` draws its progress bar
    with it). With ``processes``, also the peak RSS of ``dclb run`` of the same scenario without and with a
    store (:func:`run_process_peak_rss_mb`; ``run_no_store_peak_rss_mb``, ``run_store_peak_rss_mb``)."""
    from .runner import simulate

    sc = load_scenario(bench_scenario_path(scenario), overrides or [])
    before = _rss_mb()
    raw, wall = simulate(sc, progress)
    stats = raw["stats"]
    peak = _peak_rss_mb()
    report = {
        "scenario": sc.name,
        "flows": stats["flows_total"],
        "flows_completed": stats["flows_completed"],
        "events": stats["events"],
        "wall_s": wall,
        "events_per_s": stats["events"] / wall,
        "sim_time_us": stats["sim_time_us"],
        "rss_before_mb": before,
        "peak_rss_mb": peak,
        "engine_mb": stats["engine_bytes"] / 1e6,
        "peak_flows_active": stats["peak_flows_active"],
        # The engine allocates every flow's state when the run starts, so memory is per flow of the scenario;
        # packets of flows in flight come on top, from the packet arena (counted in engine_mb).
        "bytes_per_flow_rss": max(peak - before, 0.0) * 1e6 / max(stats["flows_total"], 1),
        "bytes_per_flow_engine": stats["engine_bytes"] / max(stats["flows_total"], 1),
        "peak_packets_in_flight": stats["peak_packets_in_flight"],
    }
    if processes:
        path = bench_scenario_path(scenario)
        report["run_no_store_peak_rss_mb"] = run_process_peak_rss_mb(path, overrides or [], store=False)
        report["run_store_peak_rss_mb"] = run_process_peak_rss_mb(path, overrides or [], store=True)
    return report
