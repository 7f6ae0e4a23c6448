"""The stationary start against the long warm-up it replaces (docs/assumptions.md, *Stationary start*).

Each setup runs at each load and seed twice: from a stationary start (``run.start = "stationary"``, the engine's
20 ms warm-up) and from an empty fabric with the paper scale's long warm-up (fifteen fill times,
``dclb.reproduce.steady.warmup_us``). Neither drains: both wait for their last measured flow, so every size bin
has its flows. The two runs of a seed draw the same measured arrivals, so they are compared in pairs.

    python validation/stationary/compare.py run --out runs.jsonl [--setups dm10,ws10,dm40] [--loads 0.3,0.5,0.8] [--seeds 5] [--jobs 2]
    python validation/stationary/compare.py table runs.jsonl
    # where the paper's warm-up itself falls short of the load (0.8): a reference warmed up F times as long
    python validation/stationary/compare.py run --out runs.jsonl --setups ws10 --loads 0.8 --warmup-factor 4
    python validation/stationary/compare.py table runs.jsonl --reference long4x

``run`` appends one JSON line per run (resumable: runs already in the file are skipped); ``table`` prints the
markdown tables of docs/assumptions.md: the load carried in the window, the short flows' mean and p99 FCT and the
mean FCT per size bin, each as the paired difference (stationary over long warm-up) with its 95% interval over
the seeds, and the cost of each.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections import defaultdict
from multiprocessing import Pool
from pathlib import Path

HERE = Path(__file__).resolve().parent
FABRIC = HERE / "dm16.toml"
LBT_MAIN = HERE.parents[1] / "python" / "dclb" / "data" / "papers" / "lbt" / "main.toml"

#: name -> (scenario file, overrides, what it is)
SETUPS = {
    "dm10": (FABRIC, [], "data mining, 4 x 4 x 4 at 10 Gbps, 180 measured flows"),
    "ws10": (FABRIC, ["traffic.workload=websearch", "traffic.flows=450"], "web search, 4 x 4 x 4 at 10 Gbps, 450 measured flows"),
    "dm40": (FABRIC, ["topology.host_rate_gbps=40", "topology.fabric_rate_gbps=40"], "data mining, 4 x 4 x 4 at 40 Gbps, 180 measured flows"),
    "lbt": (LBT_MAIN, ["traffic.workload=datamining", "traffic.sources.0.flows=160", "traffic.sources.1.flows=20", "lb.scheme=ecmp"], "data mining, LBT's 8 x 9 at 10 Gbps (its quick scale's 160 + 20 flows), ECMP"),
}
#: Size bins (bytes, right-closed) of the per-bin FCT comparison.
BINS = ((0, 100e3), (100e3, 1e6), (1e6, 10e6), (10e6, math.inf))
SUMMARY = ("fabric_carried_load_ratio", "short_afct_us", "short_p99_fct_us", "events", "prefill_flows", "util_leaf_to_host", "util_leaf_to_spine")
#: Agreement: the paired 95% interval contains zero, or the mean difference is under this.
CLOSE = 0.05


def _reference(factor: float) -> str:
    """The label of the empty-start reference warmed up ``factor`` times the paper scale's warm-up."""
    return "long" if factor == 1 else f"long{factor:g}x"


def _jobs(setups: list[str], loads: list[float], seeds: int, factor: float = 1.0) -> list[dict]:
    from dclb.reproduce.steady import warmup_us
    from dclb.scenario import load_scenario

    out = []
    for name in setups:
        path, sets, _ = SETUPS[name]
        for load in loads:
            base = [*sets, f"traffic.load={load}"]
            long = factor * warmup_us(load_scenario(path, base))
            for seed in range(1, seeds + 1):
                out.append({"setup": name, "load": load, "seed": seed, "start": "stationary", "path": str(path), "sets": [*base, "run.start=stationary"]})
                out.append({"setup": name, "load": load, "seed": seed, "start": _reference(factor), "path": str(path), "sets": [*base, f"run.warmup_us={long!r}"]})
    return out


def _one(job: dict) -> dict:
    import dclb

    t0 = time.process_time()
    r = dclb.run(job["path"], overrides=job["sets"], seed=job["seed"], out=None)
    cpu = time.process_time() - t0
    f = r.flows.to_pandas()
    f = f[f["measured"].astype(bool) & (f["transport"] != "udp")]
    bins = {}
    for lo, hi in BINS:
        d = f[(f["size_bytes"] > lo) & (f["size_bytes"] <= hi)]
        done = d[d["state"] == "completed"]
        bins[f"{lo:g}-{hi:g}"] = {"n": int(len(d)), "unfinished": int((d["state"] != "completed").sum()), "mean_fct_us": float(done["fct_us"].mean()) if len(done) else None}
    return {**{k: job[k] for k in ("setup", "load", "seed", "start")}, "cpu_s": cpu, **{k: r.summary.get(k) for k in SUMMARY}, "bins": bins}


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            d = json.loads(line)
            done.add((d["setup"], d["load"], d["seed"], d["start"]))
    jobs = [j for j in _jobs(args.setups.split(","), [float(x) for x in args.loads.split(",")], args.seeds, args.warmup_factor) if (j["setup"], j["load"], j["seed"], j["start"]) not in done]
    with Pool(args.jobs) as pool, out.open("a") as fh:
        for res in pool.imap_unordered(_one, jobs):
            fh.write(json.dumps(res) + "\n")
            fh.flush()


def _paired(pairs: list[tuple[float, float]], log: bool) -> tuple[float, float, float, int]:
    """Mean paired difference (relative: exp of the mean log ratio - 1, when ``log``) with its 95% t interval."""
    from scipy import stats

    d = [(math.log(a / b) if log else a - b) for a, b in pairs if a and b and math.isfinite(a) and math.isfinite(b) and (not log or (a > 0 and b > 0))]
    n = len(d)
    if n < 2:
        return (math.nan, math.nan, math.nan, n)
    m, s = statistics.fmean(d), statistics.stdev(d)
    h = stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)
    f = (lambda x: math.expm1(x)) if log else (lambda x: x)
    return (f(m), f(m - h), f(m + h), n)


def _agrees(m: float, lo: float, hi: float) -> str:
    if not math.isfinite(m):
        return "n/a"
    return "yes" if (lo <= 0 <= hi or abs(m) < CLOSE) else "**no**"


def table(args: argparse.Namespace) -> None:
    rows = [json.loads(l) for l in Path(args.file).read_text().splitlines() if l.strip()]
    by = defaultdict(dict)
    for r in rows:
        by[(r["setup"], r["load"])].setdefault(r["seed"], {})[r["start"]] = r
    print(f"| setup | load | seeds | carried, stationary | carried, {args.reference} | short mean FCT | short p99 FCT | " + " | ".join(f"FCT {lo / 1e3:g}-{hi / 1e3:g} KB" for lo, hi in BINS) + " | events (stat./long) | CPU s (stat./long) |")
    print("|" + "---|" * (9 + len(BINS)))
    for (setup, load), seeds in sorted(by.items(), key=lambda kv: (list(SETUPS).index(kv[0][0]), kv[0][1])):
        ref = args.reference
        both = [{"stationary": v["stationary"], "long": v[ref]} for v in seeds.values() if "stationary" in v and ref in v]
        if not both:
            continue
        st = [v["stationary"] for v in both]
        lg = [v["long"] for v in both]

        def carried(rs):
            xs = [r["fabric_carried_load_ratio"] for r in rs if r["fabric_carried_load_ratio"] is not None]
            return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "n/a"

        cells = [setup, f"{load:g}", str(len(both)), carried(st), carried(lg)]
        for key in ("short_afct_us", "short_p99_fct_us"):
            m, lo, hi, n = _paired([(v["stationary"][key], v["long"][key]) for v in both], log=True)
            cells.append(f"{m:+.1%} [{lo:+.1%}, {hi:+.1%}] {_agrees(m, lo, hi)}")
        for lo_b, hi_b in BINS:
            k = f"{lo_b:g}-{hi_b:g}"
            m, lo, hi, n = _paired([(v["stationary"]["bins"][k]["mean_fct_us"], v["long"]["bins"][k]["mean_fct_us"]) for v in both], log=True)
            cells.append(f"{m:+.0%} [{lo:+.0%}, {hi:+.0%}] {_agrees(m, lo, hi)}" if n >= 2 else f"too few ({n})")
        ev = (statistics.fmean(r["events"] for r in st), statistics.fmean(r["events"] for r in lg))
        cpu = (statistics.fmean(r["cpu_s"] for r in st), statistics.fmean(r["cpu_s"] for r in lg))
        cells.append(f"{ev[0] / 1e6:.0f} M / {ev[1] / 1e6:.0f} M ({ev[0] / ev[1]:.0%})")
        cells.append(f"{cpu[0]:.1f} / {cpu[1]:.1f} ({cpu[0] / cpu[1]:.0%})")
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--setups", default="dm10,ws10,dm40")
    r.add_argument("--loads", default="0.3,0.5,0.8")
    r.add_argument("--seeds", type=int, default=5)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--warmup-factor", type=float, default=1.0, help="the reference's warm-up as a multiple of the paper scale's")
    t = sub.add_parser("table")
    t.add_argument("file")
    t.add_argument("--reference", default="long", help="the empty-start reference: long (the paper's warm-up) or longFx")
    a = p.parse_args()
    (run if a.cmd == "run" else table)(a)


if __name__ == "__main__":
    main()
