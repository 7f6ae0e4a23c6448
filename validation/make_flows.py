"""Makes validation/flows.csv once: 2,000 web-search flows drawn by dclb's own Poisson generator.

The fabric is validation/scenario.toml's; the traffic is Poisson arrivals between random hosts on different
leaves at host (access) load 0.25, i.e. fabric load 0.5 on this 2:1 oversubscribed fabric, seed 1. Start times
are rounded to whole nanoseconds so that ns-3 (which schedules in ns) and dclb start every flow at the same
instant. The file is committed; rerunning this script reproduces it byte for byte.

    python validation/make_flows.py            # writes validation/flows.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import dclb
from dclb.scenario import from_dict, read_scenario_file

HERE = Path(__file__).resolve().parent
GENERATOR = {"pattern": "poisson", "workload": "websearch", "load": 0.25, "load_basis": "access", "flows": 2000,
             "transport": "dctcp"}


def main() -> int:
    raw = read_scenario_file(HERE / "scenario.toml")
    raw["traffic"] = dict(GENERATOR)  # the validation scenario's fabric and transport, Poisson traffic
    sc = from_dict(raw, base_dir=HERE, name="validation-flows")
    flows = dclb.run(sc, out=None).flows.to_pandas().sort_values("flow_id")
    rows = []
    for f in flows.itertuples():
        start_ns = round(f.start_us * 1000)
        rows.append((start_ns, int(f.src_host), int(f.dst_host), int(f.size_bytes)))
    starts = [r[0] for r in rows]
    if starts != sorted(starts) or len(set(starts)) != len(starts):
        raise SystemExit("start times must be distinct and increasing, so that flow ids are the row order")
    out = HERE / "flows.csv"
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["start_us", "src", "dst", "size_bytes"])
        for start_ns, src, dst, size in rows:
            w.writerow([f"{start_ns // 1000}.{start_ns % 1000:03d}", src, dst, size])
    print(f"wrote {len(rows)} flows to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
