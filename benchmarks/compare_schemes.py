"""The scheme comparison: every scheme on the 4x4 fabric of `asym_4x4.toml`, symmetric at fabric loads 0.3, 0.5
and 0.7 and with one 2 Gbps leaf-spine link at 0.5, for web search and data mining, under NewReno, NewReno with
SACK and DCTCP. Runs go into a result store as a sweep (parallel, resumable: rerunning finishes what is
missing); the script prints Markdown tables, one per workload and transport.

    python benchmarks/compare_schemes.py [--out DIR] [--flows N] [--seeds K] [--jobs J]
        [--schemes ecmp,rps,drb+reseq] [--transports newreno,sack,dctcp] [--workloads websearch,datamining]

A scheme may carry suffixes that switch transport options on for it: `+reseq` the receiver resequencing buffer
(100 µs hold), `+sack`, `+undo` (D-SACK undo, with SACK); `+noreseq` turns the buffer off. Presto and DRB are
designed with a receive-side buffer (Presto's modified GRO, DRB's resequencing buffer: the Presto and DRB papers), so
they run with `+reseq` unless `+noreseq` is given, and the tables name them by what ran (`presto+reseq`). Each cell is the mean over seeds of the overall mean
FCT in ms, and in brackets the short flows' (< 100 KB) 99th percentile in ms; `×` marks the ratio of the mean
FCT to ECMP's in the same column.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

from dclb import _core
from dclb.store import Store
from dclb.sweeps import sweep

HERE = Path(__file__).parent
VARIANTS = {"reseq": "transport.reseq_timeout_us=100", "noreseq": "transport.reseq_timeout_us=0", "sack": "transport.sack=true", "undo": "transport.dsack_undo=true"}
#: Schemes whose design includes a receiver resequencing buffer: compared with it unless told `+noreseq`.
WITH_RECEIVE_BUFFER = {"presto", "drb"}
SETTINGS = {
    "sym 0.3": ["traffic.load=0.3", "topology.links.0.rate_gbps=10"],
    "sym 0.5": ["traffic.load=0.5", "topology.links.0.rate_gbps=10"],
    "sym 0.7": ["traffic.load=0.7", "topology.links.0.rate_gbps=10"],
    "2G link 0.5": ["traffic.load=0.5"],
    "2G link 0.3": ["traffic.load=0.3"],
    "2G link 0.7": ["traffic.load=0.7"],
}
#: The issue #8 grid; the other settings are for --settings.
DEFAULT_SETTINGS = "sym 0.3,sym 0.5,sym 0.7,2G link 0.5"
TRANSPORTS = {
    "newreno": ["traffic.transport=newreno"],
    "sack": ["traffic.transport=newreno", "transport.sack=true"],
    "dctcp": ["traffic.transport=dctcp"],
}
DEFAULT_SCHEMES = "ecmp,rps,drb,presto,letflow,conga,drill,hermes,clove"


def with_receiver(scheme: str) -> str:
    """`scheme` with `+reseq` added if its design has a receive buffer and the name does not say otherwise."""
    name, *variants = scheme.split("+")
    if name in WITH_RECEIVE_BUFFER and "reseq" not in variants and "noreseq" not in variants:
        return "+".join([name, "reseq", *variants])
    return scheme


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="dclb-results/compare", help="result store (resumable)")
    ap.add_argument("--flows", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--schemes", default=DEFAULT_SCHEMES, help=f"comma list (all registered: {','.join(s['name'] for s in _core.schemes())})")
    ap.add_argument("--transports", default=",".join(TRANSPORTS))
    ap.add_argument("--workloads", default="websearch,datamining")
    ap.add_argument("--settings", default=DEFAULT_SETTINGS, help=f"comma list of: {', '.join(SETTINGS)}")
    ap.add_argument("--classes", action="store_true", help="also print short- and long-flow AFCT tables")
    args = ap.parse_args()

    schemes = [with_receiver(s) for s in args.schemes.split(",")]
    workloads = args.workloads.split(",")
    settings = args.settings.split(",")
    store = Store(args.out)
    cells: dict[tuple[str, str, str, str], list[dict]] = defaultdict(list)
    # One sweep per (setting, transport, scheme variant); the grid is scheme x workload.
    for setting in settings:
        for transport in args.transports.split(","):
            by_variant: dict[tuple[str, ...], list[str]] = defaultdict(list)
            for scheme in schemes:
                _, *variants = scheme.split("+")
                by_variant[tuple(variants)].append(scheme)
            for variants, group in by_variant.items():
                overrides = SETTINGS[setting] + TRANSPORTS[transport] + [VARIANTS[v] for v in variants] + [f"traffic.flows={args.flows}"]
                frame = sweep(
                    HERE / "asym_4x4.toml",
                    grid={"lb.scheme": [g.split("+")[0] for g in group], "traffic.workload": workloads},
                    seeds=args.seeds,
                    overrides=overrides,
                    out=args.out,
                    jobs=args.jobs,
                )
                for _, row in frame.iterrows():
                    label = next(g for g in group if g.split("+")[0] == row["lb.scheme"])
                    if row["status"] != "completed":
                        print(f"<!-- {setting} {transport} {label} {row['traffic.workload']}: {row['status']} {row.get('error')} -->")
                        continue
                    cells[(row["traffic.workload"], transport, label, setting)].append(store.read_record(row["run_id"])["summary"])

    for workload in workloads:
        for transport in args.transports.split(","):
            print(f"\n**{workload}, {transport}** ({args.flows} flows, {args.seeds} seed(s)): mean FCT ms [short p99 ms] ×ECMP\n")
            print("| scheme | " + " | ".join(settings) + " | spurious retx | timeouts | drops |")
            print("|---|" + "---|" * (len(settings) + 3))
            for scheme in schemes:
                line, spur, tos, drops = [], 0.0, 0.0, 0.0
                for setting in settings:
                    rows = cells.get((workload, transport, scheme, setting))
                    if not rows:
                        line.append("–")
                        continue
                    mean = statistics.mean(r["overall_afct_us"] for r in rows)
                    p99 = statistics.mean(r["short_p99_fct_us"] for r in rows)
                    base = cells.get((workload, transport, "ecmp", setting))
                    ratio = f" {mean / statistics.mean(r['overall_afct_us'] for r in base):.2f}×" if base else ""
                    line.append(f"{mean / 1e3:.2f} [{p99 / 1e3:.2f}]{ratio}")
                    spur += statistics.mean(r.get("spurious_retransmissions", 0) for r in rows)
                    tos += statistics.mean(r.get("timeouts", 0) for r in rows)
                    drops += statistics.mean(r.get("drops", 0) for r in rows)
                print(f"| {scheme} | " + " | ".join(line) + f" | {spur:.0f} | {tos:.0f} | {drops:.0f} |", flush=True)
            if args.classes:
                print(f"\n**{workload}, {transport}**, by class: short-flow AFCT µs ×ECMP / long-flow AFCT ms ×ECMP\n")
                print("| scheme | " + " | ".join(settings) + " |")
                print("|---|" + "---|" * len(settings))
                for scheme in schemes:
                    line = []
                    for setting in settings:
                        rows, base = cells.get((workload, transport, scheme, setting)), cells.get((workload, transport, "ecmp", setting))
                        if not rows or not base:
                            line.append("–")
                            continue
                        parts = []
                        for key, unit in (("short_afct_us", 1.0), ("long_afct_us", 1e3)):
                            mine = statistics.mean(r[key] for r in rows if r.get(key) is not None)
                            ref = statistics.mean(r[key] for r in base if r.get(key) is not None)
                            parts.append(f"{mine / unit:.{0 if unit == 1.0 else 2}f} {mine / ref:.2f}×")
                        line.append(" / ".join(parts))
                    print(f"| {scheme} | " + " | ".join(line) + " |", flush=True)


if __name__ == "__main__":
    main()
