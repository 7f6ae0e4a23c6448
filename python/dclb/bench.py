"""The benchmarks: scenarios S1 (issue #2, the default) and P1 (issue #12), timed.

S1: 4 leaves x 4 spines x 8 hosts per leaf, every link 10 Gbps with 1 µs propagation, 256-packet buffers,
K = 65 packets, DCTCP, ECMP, web search at fabric load 0.5 (access load 0.25; the leaves are 2:1
oversubscribed and every flow crosses the spines) between random inter-leaf pairs, 10,000 flows.

P1: the papers' large fabric: 10 leaves x 10 spines x 20 hosts per leaf, every link 40 Gbps with 1 µs
propagation, 250-packet buffers, K = 100 packets, DCTCP, ECMP, web search at fabric load 0.5, 10,000 flows.

Reported: events per second and wall time of the engine run (Python overhead included but small), peak
resident memory of this process, and the memory growth per flow in flight. Timing is never asserted in tests;
this command is how speed is measured.
"""

from __future__ import annotations

import resource
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


def run_bench(overrides: list[str] | None = None, scenario: str = "s1", progress: Callable[[float, int, int, int], None] | None = None) -> dict[str, Any]:
    """Runs benchmark ``scenario`` (S1 or P1, with ``overrides``) and returns the measurements; ``progress`` is
    called between chunks of events as :func:`dclb.runner.simulate` does (``dclb bench`` draws its progress bar
    with it)."""
    from .runner import simulate

    sc = load_scenario(bench_scenario_path(scenario), overrides or [])
    before = _rss_mb()
    raw, wall = simulate(sc, progress)
    stats = raw["stats"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    return {
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
