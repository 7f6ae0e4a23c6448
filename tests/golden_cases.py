"""The golden cases: small runs whose result digests are checked in, so that a change that moves any result
is seen (``crates/dclb-core/tests/golden.rs`` runs them under ``cargo test``).

Each case is a scenario file with overrides, resolved here to the engine config it makes and written to
``crates/dclb-core/tests/golden/cases/<name>.json``. ``tests/test_golden_configs.py`` checks that resolving
them today gives the same configs (a change in how the Python front resolves a scenario is a moved result too),
and the Rust test checks the engine's tables and statistics against ``digests.json``.

Re-bless after a change that is meant to move results (and say in the commit which moved and why)::

    python tests/golden_cases.py --bless

That rewrites every case config, then runs the Rust test with ``DCLB_BLESS=1`` to write the digests.
``python tests/golden_cases.py --list`` prints the cases and what each covers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "crates" / "dclb-core" / "tests" / "golden"
CASES_DIR = GOLDEN / "cases"
ASYM = ROOT / "benchmarks" / "asym_4x4.toml"
QUICK = ROOT / "scenarios" / "quickstart.toml"
EXAMPLES = ROOT / "scenarios"
PAPERS = ROOT / "python" / "dclb" / "data" / "papers"

SCHEMES = ["ecmp", "rps", "drb", "presto", "letflow", "conga", "drill", "hermes", "clove", "lbt", "tam", "tr", "dar", "mdtlb"]

#: name -> (scenario, overrides, event-driven ports, what it covers). Small runs: the point is every code
#: path, not statistics.
CASES: dict[str, tuple[Path, list[str], bool, str]] = {}

for _s in SCHEMES:
    CASES[f"asym-{_s}"] = (ASYM, ["traffic.flows=200", f"lb.scheme={_s}"], False, f"{_s} on a 4x4 fabric with one 2 Gbps uplink, web search at 0.6, lazy ports")
for _s in ("ecmp", "conga", "tam", "hermes"):
    CASES[f"event-driven-{_s}"] = (ASYM, ["traffic.flows=150", f"lb.scheme={_s}"], True, f"{_s} with every port event-driven")
for _s in ("ecmp", "drill", "hermes", "clove", "conga", "tr"):
    CASES[f"failed-{_s}"] = (ASYM, ["traffic.flows=150", "topology.links.0.failed=true", f"lb.scheme={_s}"], False, f"{_s} with leaf 0 - spine 0 down")
CASES.update({
    "packets-conga": (QUICK, ["traffic.flows=200", "topology.queue_unit=packets", "lb.scheme=conga"], False, "queues counted in packets"),
    "packets-tam": (QUICK, ["traffic.flows=200", "topology.queue_unit=packets", "lb.scheme=tam"], False, "queues counted in packets, TAM's own marking"),
    "loss-rps": (ASYM, ["traffic.flows=150", "topology.links.0.loss_rate=0.02", "topology.links.0.rate_gbps=10", "lb.scheme=rps"], False, "random wire loss on one link"),
    "blackhole-hermes": (ASYM, ["traffic.flows=150", "topology.links.0.blackhole=true", "topology.links.0.rate_gbps=10", "lb.scheme=hermes", "run.horizon_us=30000"], False, "a blackhole that Hermes routes data around (flows whose ACKs ECMP hashes into it never finish: a horizon)"),
    "sack-rps": (QUICK, ["traffic.flows=200", "transport.sack=true", "lb.scheme=rps"], False, "SACK recovery under per-packet spraying"),
    "dsack-rps": (QUICK, ["traffic.flows=150", "transport.sack=true", "transport.dsack_undo=true", "lb.scheme=rps"], False, "DSACK undo"),
    "handshake-lbt": (QUICK, ["traffic.flows=200", "transport.handshake=true", "lb.scheme=lbt"], False, "SYN / SYN-ACK before data"),
    "newreno-ecmp": (QUICK, ["traffic.flows=200", "traffic.transport=newreno", "traffic.load=0.7"], False, "NewReno without ECN"),
    "reseq-drb": (ASYM, ["traffic.flows=150", "transport.reseq_timeout_us=100", "lb.scheme=drb"], False, "receiver resequencing buffer"),
    "ackprio-ecmp": (QUICK, ["traffic.flows=150", "transport.host_ack_priority=true"], False, "ACKs first at host NICs (event-driven NICs)"),
    "minrto-granularity": (QUICK, ["traffic.flows=150", "transport.min_rto_us=1000", "transport.rto_granularity_us=1000", "lb.scheme=letflow"], False, "RTO granularity"),
    "incast": (EXAMPLES / "incast.toml", ["traffic.sources.1.flows=100"], False, "incast rounds over Poisson background"),
    "long-lived-sampler": (EXAMPLES / "long_lived.toml", ["run.horizon_us=4000", "traffic.sources.1.duration_us=3000"], False, "long-lived flows to a horizon, sampler rows"),
    "several-sources": (EXAMPLES / "several_sources.toml", [], False, "three sources, a mixture, best effort"),
    "deadlines-dar": (EXAMPLES / "deadlines.toml", ["lb.scheme=dar"], False, "deadline flows, DAR's drops and cancels"),
    "failed-slow-letflow": (EXAMPLES / "failed_and_slow_links.toml", ["lb.scheme=letflow"], False, "a failed and a slow link"),
    "udp-mismatch-mdtlb": (PAPERS / "mdtlb" / "mismatch.toml", ["run.horizon_us=1500", "lb.scheme=mdtlb"], False, "a UDP constant-rate source, MDTLB"),
    "paper-lbt": (PAPERS / "lbt" / "main.toml", ["traffic.sources.0.flows=120", "traffic.sources.1.flows=15"], False, "LBT's paper fabric (9 paths, best effort)"),
    "paper-tam": (PAPERS / "tam" / "large.toml", ["traffic.flows=150"], False, "TAM's large-scale fabric at 40 Gbps"),
    "paper-tr": (PAPERS / "tr" / "large.toml", ["traffic.flows=150"], False, "TR's large-scale fabric"),
    "paper-dar": (PAPERS / "dar" / "websearch.toml", ["traffic.sources.0.duration_us=1500", "traffic.sources.1.duration_us=1500"], False, "DAR's fabric: deadlines, handshake, SACK"),
    "paper-mdtlb": (PAPERS / "mdtlb" / "main.toml", ["traffic.duration_us=20000"], False, "MDTLB's fabric"),
    "stationary-ecmp": (
        QUICK,
        ["traffic.flows=150", 'traffic.workload="datamining"', 'run.start="stationary"', "run.warmup_us=2000", "run.drain_us=500", "run.start_candidates=4"],
        False,
        "a stationary start (pre-loaded data-mining flows from the fluid run), a window and a drain",
    ),
    "stationary-lbt": (
        PAPERS / "lbt" / "main.toml",
        ["traffic.sources.0.flows=100", "traffic.sources.1.flows=12", 'traffic.workload="datamining"', 'run.start="stationary"', "run.warmup_us=2000", "run.drain_us=1000", "lb.short_priority=true", "topology.priority_queues=2"],
        False,
        "a stationary start under LBT with strict priority: pre-loaded flows skip the handshake, resume mid-flow (SACK) and count their prior bytes",
    ),
})


def case_config(name: str) -> dict:
    """The case file's content: the engine config the case's scenario resolves to, and its port mode."""
    from dclb.scenario import engine_config, load_scenario

    path, overrides, event_driven, _ = CASES[name]
    config = engine_config(load_scenario(path, overrides))
    return {"event_driven": event_driven, "config": config}


def case_text(name: str) -> str:
    return json.dumps(case_config(name), indent=1, sort_keys=True) + "\n"


def bless() -> int:
    CASES_DIR.mkdir(parents=True, exist_ok=True)
    for old in CASES_DIR.glob("*.json"):
        if old.stem not in CASES:
            old.unlink()
    for name in CASES:
        (CASES_DIR / f"{name}.json").write_text(case_text(name))
    print(f"wrote {len(CASES)} case configs to {CASES_DIR.relative_to(ROOT)}")
    env = dict(os.environ, DCLB_BLESS="1")
    cmd = ["cargo", "test", "-p", "dclb-core", "--test", "golden", "--", "--nocapture"]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--bless", action="store_true", help="rewrite the case configs and their digests")
    g.add_argument("--list", action="store_true", help="list the cases and what each covers")
    args = ap.parse_args()
    if args.list:
        for name, (path, overrides, event_driven, what) in CASES.items():
            print(f"{name:24} {what} ({path.relative_to(ROOT)} {' '.join(overrides)}{' event-driven' if event_driven else ''})")
        return
    sys.exit(bless())


if __name__ == "__main__":
    main()
