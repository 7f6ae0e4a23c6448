"""What a quick reproduction's runs cost and the load they carried (docs/reproduce.md, *Seeds and cost*).

    python validation/stationary/cost.py STORE PAPER[:FIG,FIG...] ...
    python validation/stationary/cost.py reproduce-quick/store lbt tam tr dar mdtlb:10

For each paper (or the named figures of it) at quick scale, from the run records in STORE: the runs of the plan
found in the store, the engine events they took against the engine's own estimate (``dclb run --dry-run``), and
the fabric load carried (``fabric_carried_load_ratio``) over the runs that started stationary (those with a
measurement window) and, apart, over the runs that started empty (the large sweeps kept empty at quick). Runs
whose traffic is not a steady load (a poisson stream beside long flows) have no load to reach and are left out
of both (:func:`dclb.reproduce.run.steady_ratio`). Series whose stationary runs carried a median under 90% are
listed: the load note of the report says whether that is the scheme's shortfall.
"""

from __future__ import annotations

import collections
import json
import statistics
import sys
from pathlib import Path

from dclb.preview import preview
from dclb.reproduce import get_paper
from dclb.reproduce.plan import plan_paper
from dclb.reproduce.run import steady_ratio


def _spread(values: list[float]) -> str:
    if not values:
        return "none"
    v = sorted(values)
    q = lambda x: v[int(x * (len(v) - 1))]  # noqa: E731 (a nearest-rank quantile is all a table needs)
    return f"{len(v)} runs: lowest {q(0):.2f}, p10 {q(0.1):.2f}, median {q(0.5):.2f}, highest {q(1):.2f}"


def main(store: Path, keys: list[str]) -> None:
    runs = store / "runs"
    for key in keys:
        paper, _, figs = key.partition(":")
        pp = plan_paper(get_paper(paper), "quick", figs.split(",") if figs else None)
        series = {e.run_id: e.series for e in pp.entries}
        found = events = estimate = censored = measured = 0
        stationary: list[float] = []
        empty: list[float] = []
        by_series: dict[str, list[float]] = collections.defaultdict(list)
        for point in pp.plan.points:
            path = runs / point.run_id / "run.json"
            if not path.is_file():
                continue
            record = json.loads(path.read_text())
            summary = record.get("summary") or {}
            found += 1
            events += summary.get("events") or 0
            estimate += float(preview(point.scenario).events)
            censored += summary.get("window_flows_censored") or 0
            measured += summary.get("flows_measured") or 0
            ratio = steady_ratio(record)
            if ratio is None:
                continue
            if summary.get("window_carried_load_ratio") is not None:
                stationary.append(ratio)
                by_series[series[point.run_id]].append(ratio)
            else:
                empty.append(ratio)
        print(
            f"{key}: {found} of {len(pp.plan.points)} runs in the store, {events / 1e9:.1f} G events "
            f"(estimate {estimate / 1e9:.1f} G, actual / estimate {events / estimate if estimate else float('nan'):.2f}); "
            f"censored {censored} of {measured} measured flows"
        )
        print(f"   stationary start, fabric load carried: {_spread(stationary)}")
        if empty:
            print(f"   empty start, fabric load carried: {_spread(empty)}")
        low = {k: statistics.median(v) for k, v in by_series.items() if statistics.median(v) < 0.9}
        if low:
            print("   stationary series with a median under 0.90: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(low.items(), key=lambda kv: kv[1])))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), sys.argv[2:])
