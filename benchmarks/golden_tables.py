"""Fingerprints of the result tables of every scheme on the benchmark scenarios, to prove a refactor changed
no behaviour.

    python benchmarks/golden_tables.py --write before.json     # on the old commit
    python benchmarks/golden_tables.py --check before.json     # on the new one: lists every column that differs

Each (scenario, scheme) pair is run through `dclb.run` and every column of the flow, port and switch tables is
hashed on its values (NaN and null hash alike, integer widths are normalised), so a column whose type changed
but whose values did not still matches, while any changed value is reported by table and column.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

import dclb
from dclb import _core
from dclb.scenario import load_scenario

HERE = Path(__file__).parent
ROOT = HERE.parent

#: name -> (scenario file, overrides). Small flow counts: the point is every code path, not statistics.
CASES = {
    "asym-2g": (HERE / "asym_4x4.toml", ["traffic.flows=400"]),
    "asym-failed": (HERE / "asym_4x4.toml", ["traffic.flows=400", "topology.links.0.failed=true"]),
    "sym-0.8": (HERE / "asym_4x4.toml", ["traffic.flows=400", "traffic.load=0.8", "topology.links.0.rate_gbps=10"]),
    "asym-reseq": (HERE / "asym_4x4.toml", ["traffic.flows=300", "transport.reseq_timeout_us=100"]),
    "quickstart": (ROOT / "scenarios" / "quickstart.toml", ["traffic.flows=400"]),
    "newreno": (ROOT / "scenarios" / "quickstart.toml", ["traffic.flows=300", "traffic.transport=newreno", "traffic.load=0.7"]),
}
TABLES = ("flows", "ports", "switches")


def _column_digest(col: pa.ChunkedArray) -> str:
    t = col.type
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_large_list(t):
        data = json.dumps(col.to_pylist()).encode()
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_boolean(t):
        data = json.dumps(col.to_pylist()).encode()
    elif pa.types.is_floating(t):
        data = np.nan_to_num(col.to_numpy(zero_copy_only=False).astype(np.float64), nan=-1.2345e300).tobytes()
    else:
        arr = col.to_numpy(zero_copy_only=False)
        data = (arr.astype(np.int64) if arr.dtype.kind in "iu" else arr.astype(np.float64)).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def fingerprints(schemes: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for case, (path, overrides) in CASES.items():
        for scheme in schemes:
            sc = load_scenario(path, overrides + [f"lb.scheme={scheme}"])
            r = dclb.run(sc, out=None)
            key = f"{case}/{scheme}"
            out[key] = {f"{t}.{name}": _column_digest(getattr(r, t)[name]) for t in TABLES for name in getattr(r, t).column_names}
            print(f"{key}: {r.summary['flows_completed']} flows completed, {r.stats['events']} events", file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", type=Path, help="write fingerprints to this JSON file")
    g.add_argument("--check", type=Path, help="compare with fingerprints in this JSON file")
    ap.add_argument("--schemes", default=None, help="comma list (default: every registered scheme)")
    args = ap.parse_args()
    schemes = args.schemes.split(",") if args.schemes else [s["name"] for s in _core.schemes()]
    now = fingerprints(schemes)
    if args.write:
        args.write.write_text(json.dumps(now, indent=1, sort_keys=True))
        print(f"wrote {len(now)} runs to {args.write}")
        return
    before = json.loads(args.check.read_text())
    differ, missing = [], []
    for key, cols in before.items():
        if key not in now:
            missing.append(key)
            continue
        for col, h in cols.items():
            if col not in now[key]:
                differ.append(f"{key}: column {col} is gone")
            elif now[key][col] != h:
                differ.append(f"{key}: {col} differs")
        for col in now[key].keys() - cols.keys():
            differ.append(f"{key}: new column {col}")
    for line in differ:
        print(line)
    for key in missing:
        print(f"{key}: not run now")
    same = sum(1 for k in before if k in now) - len({d.split(':')[0] for d in differ})
    print(f"{same} of {len(before)} runs identical in every column; {len(differ)} column differences")
    sys.exit(1 if differ or missing else 0)


if __name__ == "__main__":
    main()
