"""Runs the issue #4 comparison table: every scheme on an asymmetric 4x4 fabric (a 2 Gbps or failed link,
web search at fabric load 0.6) and on the symmetric fabric at load 0.8. Prints a Markdown table.

    python benchmarks/compare_schemes.py [--flows N] [--seeds K] [--schemes a,b,c+reseq,d+sack+undo]

Suffixes switch transport options on: `+reseq` the receiver resequencing buffer (100 µs hold); `+sack` SACK
loss recovery; `+undo` D-SACK undo (with `+sack`). `+noreseq` turns the buffer off.

Presto and DRB are designed with a receive-side buffer (Presto's modified GRO, DRB's resequencing buffer;
baselines.md §3, §4), so they run with `+reseq` unless `+noreseq` is given: `presto` is compared as
`presto+reseq`, and the table names every run by what it ran. The engine's own default stays off (a bare
`lb.scheme = "presto"` shows the reordering cost). RPS and DRILL are compared with stock TCP receivers, as
their papers argue they work with them; give `rps+reseq` to see them with a buffer.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import dclb
from dclb import _core
from dclb.scenario import load_scenario

HERE = Path(__file__).parent
VARIANTS = {"reseq": "transport.reseq_timeout_us=100", "noreseq": "transport.reseq_timeout_us=0", "sack": "transport.sack=true", "undo": "transport.dsack_undo=true"}
#: Schemes whose design includes a receiver resequencing buffer: compared with it unless told `+noreseq`.
WITH_RECEIVE_BUFFER = {"presto", "drb"}
SETTINGS = {
    "2G link, load 0.6": ["traffic.load=0.6"],
    "failed link, load 0.6": ["traffic.load=0.6", "topology.links.0.failed=true"],
    "symmetric, load 0.8": ["traffic.load=0.8", "topology.links.0.rate_gbps=10"],
}


def with_receiver(scheme: str) -> str:
    """`scheme` with `+reseq` added if its design has a receive buffer and the name does not say otherwise."""
    name, *variants = scheme.split("+")
    if name in WITH_RECEIVE_BUFFER and "reseq" not in variants and "noreseq" not in variants:
        return "+".join([name, "reseq", *variants])
    return scheme


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=1500)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--schemes", default=",".join(s["name"] for s in _core.schemes()))
    args = ap.parse_args()
    schemes = [with_receiver(s) for s in args.schemes.split(",")]
    print("| setting | scheme | avg FCT (ms) | short avg (µs) | short p99 (µs) | long avg (ms) | spurious retx | timeouts | drops |")
    print("|---|---|---|---|---|---|---|---|---|")
    for setting, overrides in SETTINGS.items():
        for scheme in schemes:
            rows = []
            for seed in range(1, args.seeds + 1):
                name, *variants = scheme.split("+")
                extra = [VARIANTS[v] for v in variants]
                sc = load_scenario(HERE / "asym_4x4.toml", overrides + extra + [f"lb.scheme={name}", f"traffic.flows={args.flows}"], seed=seed)
                rows.append(dclb.run(sc, out=None).summary)
            m = lambda k: statistics.mean(r[k] for r in rows)
            print(f"| {setting} | {scheme} | {m('overall_afct_us')/1e3:.2f} | {m('short_afct_us'):.0f} | {m('short_p99_fct_us'):.0f} | {m('long_afct_us')/1e3:.2f} | {m('spurious_retransmissions'):.0f} | {m('timeouts'):.0f} | {m('drops'):.0f} |", flush=True)


if __name__ == "__main__":
    main()
