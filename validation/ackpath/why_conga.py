"""The per-flow reading behind CONGA's short mean FCT under the blackhole (docs/assumptions.md, "The ACK path of
edge schemes"): CONGA and LetFlow on blackhole.toml (seed 1), and CONGA with the link failed instead, their flow
and port tables read back.

    python validation/ackpath/why_conga.py     # a few seconds; the runs go to a temporary store
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "blackhole.toml"
HOSTS_PER_LEAF = 8
SHORT = 100_000


def tables(out: Path, *sets: str) -> tuple:
    args = [a for s in sets for a in ("--set", s)]
    subprocess.run([sys.executable, "-m", "dclb", "run", str(SCENARIO), *args, "--out", str(out), "-q"], check=True, capture_output=True)
    run = next((out / "runs").iterdir())
    return pq.read_table(run / "flows.parquet").to_pandas(), pq.read_table(run / "ports.parquet").to_pandas()


def report(name: str, flows, ports) -> None:
    f = flows.assign(sl=flows.src_host // HOSTS_PER_LEAF, dl=flows.dst_host // HOSTS_PER_LEAF)
    short = f[f.size_bytes <= SHORT]
    done = short[short.state == "completed"]
    leaf0 = short[(short.sl == 0) | (short.dl == 0)]
    hit = leaf0[(leaf0.timeouts > 0) | (leaf0.state != "completed")]
    print(f"{name}: short flows {len(short)}, completed {len(done)}, mean FCT {done.fct_us.mean() / 1e3:.2f} ms, median {done.fct_us.median() / 1e3:.3f} ms")
    other = done[(done.sl != 0) & (done.dl != 0)]
    print(f"  not touching leaf 0: {len(other)} completed, mean {other.fct_us.mean() / 1e3:.3f} ms, {int((other.timeouts > 0).sum())} with a timeout")
    print(f"  to or from leaf 0: {len(leaf0)}, of which {len(hit)} ({len(hit) / len(leaf0):.0%}) timed out or never finished")
    print(f"    from leaf 0 {int((leaf0.sl == 0).sum())}, into leaf 0 {int((leaf0.dl == 0).sum())}")
    by = done.groupby(done.timeouts.clip(upper=8)).fct_us
    share = by.sum() / done.fct_us.sum()
    print("  completed short flows by timeouts (count, share of the summed FCT): " + ", ".join(f"{k}: {n} ({s:.1%})" for (k, n), s in zip(by.count().items(), share)))
    print(f"  slowest short flow: {done.fct_us.max() / 1e3:.1f} ms")
    up = ports[(ports.node_kind == "leaf") & (ports.role == "leaf_up")]
    first_leaf = up[up.node == up.node.min()].sort_values("slot")
    print("  leaf 0's uplinks, packets sent: " + ", ".join(f"spine {s}: {p:,}" for s, p in zip(first_leaf.slot, first_leaf.packets_sent)))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report("CONGA", *tables(Path(tmp) / "conga", "lb.scheme=conga"))
        report("LetFlow", *tables(Path(tmp) / "letflow", "lb.scheme=letflow"))
        report("CONGA, link failed (routing avoids it)", *tables(Path(tmp) / "failed", "lb.scheme=conga", "topology.links=[{leaf=0, spine=1, failed=true}]"))


if __name__ == "__main__":
    main()
