"""The blackhole table of docs/assumptions.md, "The ACK path of edge schemes": every scheme on blackhole.toml,
the edge schemes under both ACK readings, seeds 1-3 (seed 1 is the issue's run).

    python validation/ackpath/table.py            # prints the table (Markdown), about a minute of CPU
    python validation/ackpath/table.py --seeds 1  # seed 1 only

Each run is `dclb run validation/ackpath/blackhole.toml --set lb.scheme=S --set 'lb.ack_routing="R"' --seed N
--no-store --json`; nothing is stored.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "blackhole.toml"
EDGE = ["hermes", "clove", "presto", "mdtlb"]
ALL = ["hermes", "clove", "ecmp", "conga", "letflow", "presto", "mdtlb"]


def run(scheme: str, reading: str | None, seed: int) -> dict:
    cmd = [sys.executable, "-m", "dclb", "run", str(SCENARIO), "--set", f"lb.scheme={scheme}", "--seed", str(seed), "--no-store", "--json", "-q"]
    if reading is not None:
        cmd += ["--set", f'lb.ack_routing="{reading}"']
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    seeds = list(range(1, ap.parse_args().seeds + 1))
    print("| scheme | ACKs | unfinished (of 1,000), per seed | short unfinished | short mean FCT (ms), per seed | long unfinished |")
    print("|---|---|---|---|---|---|")
    for scheme in ALL:
        for reading in (["ecmp", "edge"] if scheme in EDGE else [None]):
            rs = [run(scheme, reading, s) for s in seeds]
            unf = " / ".join(str(r["flows_unfinished"]) for r in rs)
            su = " / ".join(str(r["short_unfinished"]) for r in rs)
            lu = " / ".join(str(r["long_unfinished"]) for r in rs)
            fct = " / ".join(f"{r['short_afct_us'] / 1000:.2f}" for r in rs)
            print(f"| {scheme} | {reading or 'switches'} | {unf} | {su} | {fct} | {lu} |", flush=True)


if __name__ == "__main__":
    main()
