"""dclb against ns-3 on the same flows and paths: FCT per size bin (docs/validation.md).

Runs dclb on validation/scenario.toml (the flows of validation/flows.csv, ECMP; a few seconds), checks that the
paths dclb took are the ones the ns-3 run was pinned to (validation/paths_ecmp.csv), reads the per-flow results of
the ns-3 runs under validation/results/ (made by validation/ns3_leafspine.py, minutes each) and prints, per size
bin, the count, median and 99th percentile of FCT in each simulator and their ratio, then drops, marks,
retransmissions and timeouts. Each ns-3 run is compared with a dclb run of the same buffer and K. With no --ns3
argument it also prints yardsticks (how much FCTs move under changes that should not matter) and one overview
table per buffer size. Not part of the test suite.

    python validation/compare.py                    # tables in Markdown on stdout
    python validation/compare.py --ns3 validation/results/ns3_ecmp.csv --ns3 validation/results/ns3_dmodk.csv

ns-3 FCTs are given two ways: from the first data segment (`data`, what dclb measures, since dclb has no
handshake) and from the application's start (`app`, including ns-3's SYN/SYN-ACK).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dclb_paths  # noqa: E402

BINS = [(0, 10_000, "<= 10 KB"), (10_000, 100_000, "10-100 KB"), (100_000, 1_000_000, "100 KB-1 MB"),
        (1_000_000, float("inf"), "> 1 MB"), (0, float("inf"), "all")]


def pct(x: pd.Series, q: float) -> float:
    return float(np.percentile(x.to_numpy(), q)) if len(x) else float("nan")


def load_ns3(path: Path) -> pd.DataFrame:
    n = pd.read_csv(path)
    if (n.finish_ns < 0).any():
        raise SystemExit(f"{path}: {(n.finish_ns < 0).sum()} flows did not finish")
    n["fct_data_us"] = (n.finish_ns - n.first_data_ns) / 1000
    n["fct_app_us"] = (n.finish_ns - n.start_ns) / 1000
    n["handshake_us"] = (n.first_data_ns - n.start_ns) / 1000
    return n


def fmt(v: float) -> str:
    if np.isnan(v):
        return "-"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def bin_table(d: pd.DataFrame, n: pd.DataFrame) -> str:
    m = d.merge(n, on="flow_id", suffixes=("", "_ns3"))
    lines = ["| size bin | flows | dclb median | ns-3 median (data) | ratio | ns-3 median (app) | dclb p99 | "
             "ns-3 p99 (data) | ratio | ns-3 p99 (app) | per-flow ratio, median [p10, p90] | flows within 10% |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for lo, hi, label in BINS:
        b = m[(m.size_bytes > lo) & (m.size_bytes <= hi)]
        dm, nm, am = b.fct_us.median(), b.fct_data_us.median(), b.fct_app_us.median()
        dp, npp, ap_ = pct(b.fct_us, 99), pct(b.fct_data_us, 99), pct(b.fct_app_us, 99)
        r = b.fct_data_us / b.fct_us
        lines.append(f"| {label} | {len(b)} | {fmt(dm)} | {fmt(nm)} | {nm / dm:.2f} | {fmt(am)} | {fmt(dp)} | "
                     f"{fmt(npp)} | {npp / dp:.2f} | {fmt(ap_)} | {r.median():.2f} [{r.quantile(0.1):.2f}, "
                     f"{r.quantile(0.9):.2f}] | {((r - 1).abs() <= 0.1).mean():.0%} |")
    return "\n".join(lines)


def lone_flows(d: pd.DataFrame, n: pd.DataFrame) -> str:
    """Flows that ran alone in dclb (FCT within 0.5% of its ideal): the physics without contention."""
    m = d.merge(n, on="flow_id", suffixes=("", "_ns3"))
    lone = m[m.fct_us <= 1.005 * m.ideal_fct_us]
    r = lone.fct_data_us / lone.fct_us
    diff = lone.fct_data_us - lone.fct_us
    return (f"{len(lone)} flows ran uncontended in dclb (FCT within 0.5% of ideal); for them ns-3 (from the first "
            f"data segment) / dclb: median {r.median():.4f}, min {r.min():.4f}, max {r.max():.4f}; "
            f"difference median {diff.median():+.2f} us, p10 {diff.quantile(0.1):+.2f} us, "
            f"p90 {diff.quantile(0.9):+.2f} us; handshake (app start to first data segment) median "
            f"{lone.handshake_us.median():.2f} us")


def counters(d: pd.DataFrame, summary: dict, stats: dict, n: pd.DataFrame, js: dict) -> str:
    sw, host = js["switch_queues"], js["host_queues"]
    ns_drops_data = sw["overflowData"] + sw["forcedData"] + sw["otherData"] + host["overflowData"]
    ns_drops_ctl = sw["overflowCtl"] + sw["forcedCtl"] + sw["otherCtl"] + host["overflowCtl"]
    # dclb counts drops per port, not per packet kind; its dropped wire bytes split them (ACKs are 40 B, data
    # packets 1500 B except a flow's last one, so this slightly undercounts data drops).
    drops, dropped_bytes = summary["drops"], stats["wire_bytes_dropped"]
    data_est = round((dropped_bytes - 40 * drops) / (1500 - 40))
    rows = [
        ("packets dropped (data + ACK/SYN)", f"{drops:,} (about {data_est:,} data + {drops - data_est:,} ACK)",
         f"{ns_drops_data + ns_drops_ctl:,} ({ns_drops_data:,} data + {ns_drops_ctl:,} ACK/SYN)"),
        ("  of which RED forced drops of non-ECT packets", "n/a", f"{sw['forcedData'] + sw['forcedCtl']:,}"),
        ("ECN marks", f"{summary['ecn_marks']:,} (data only: dclb ACKs are not ECN-capable)",
         f"{sw['markData']:,} data + {sw['markCtl']:,} ACKs (ns-3 DCTCP sends ACKs ECN-capable)"),
        ("data packets sent", f"{int(d.packets_sent.sum()):,}", f"{int(n.data_packets.sum()):,}"),
        ("retransmitted segments", f"{int(d.retransmissions.sum()):,}", f"{int(n.retransmissions.sum()):,}"),
        ("retransmission timeouts", f"{int(d.timeouts.sum()):,}", f"{int(n.timeouts.sum()):,}"),
        ("flows with >= 1 timeout", f"{int((d.timeouts > 0).sum()):,}", f"{int((n.timeouts > 0).sum()):,}"),
        ("  ns-3 timeouts by the state they interrupted: CWR / fast recovery / open or disorder", "-",
         f"{int(n.timeouts_in_cwr.sum())} / {int(n.timeouts_in_recovery.sum())} / {int(n.timeouts_in_open.sum())}"),
        ("  ns-3 timeouts with cwnd below one segment / with nothing in flight", "-",
         f"{int(n.timeouts_cwnd_below_mss.sum())} / {int(n.timeouts_nothing_in_flight.sum())}"),
        ("smallest cwnd of any flow", "2 segments (2,920 B) by rule", f"{int(n.min_cwnd_bytes.min()):,} B"),
        ("fast recoveries (ns-3: entries into CA_RECOVERY)", "-", f"{int(n.fast_recoveries.sum()):,}"),
        ("window reductions on ECE (ns-3: entries into CA_CWR)", "-", f"{int(n.cwr_entries.sum()):,}"),
        ("SYN retransmissions", "no handshake", f"{int(n.syn_sent.sum()) - len(n):,}"),
        ("simulated time (last finish)", f"{d.finish_us.max() / 1000:.1f} ms", f"{n.finish_ns.max() / 1e6:.1f} ms"),
        ("events / wall time", f"{summary['events']:,} / {summary['wall_s']:.1f} s",
         f"{js['events']:,} / {js['wall_s']:.0f} s (incl. {js['import_s']:.0f} s import, "
         f"{js['build_s'] - js['import_s']:.0f} s build)"),
    ]
    out = ["| | dclb | ns-3 |", "|---|--:|--:|"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out)


def timeouts_by_bin(d: pd.DataFrame, n: pd.DataFrame) -> str:
    m = d.merge(n, on="flow_id", suffixes=("", "_ns3"))
    out = ["| size bin | dclb flows with a timeout | ns-3 flows with a timeout | both |", "|---|--:|--:|--:|"]
    for lo, hi, label in BINS:
        b = m[(m.size_bytes > lo) & (m.size_bytes <= hi)]
        a, c = b.timeouts > 0, b.timeouts_ns3 > 0
        out.append(f"| {label} | {int(a.sum())} | {int(c.sum())} | {int((a & c).sum())} |")
    return "\n".join(out)


def without_timeouts(d: pd.DataFrame, n: pd.DataFrame) -> str:
    """The bins again over flows that had no timeout in either simulator."""
    m = d.merge(n, on="flow_id", suffixes=("", "_ns3"))
    keep = m[(m.timeouts == 0) & (m.timeouts_ns3 == 0)].flow_id
    return bin_table(d[d.flow_id.isin(keep)], n[n.flow_id.isin(keep)])


def overview(d: pd.DataFrame, runs: list[tuple[str, pd.DataFrame]]) -> str:
    """Median and p99 FCT per bin for dclb and every ns-3 run side by side (ns-3 from the first data segment)."""
    names = ["dclb ECMP"] + [name for name, _ in runs]
    head = "| size bin | " + " | ".join(f"{x} median | {x} p99" for x in names) + " |"
    out = [head, "|---|" + "--:|" * (2 * len(names))]
    for lo, hi, label in BINS:
        cells = []
        sel = lambda t: t[(t.size_bytes > lo) & (t.size_bytes <= hi)]  # noqa: E731
        cells += [fmt(sel(d).fct_us.median()), fmt(pct(sel(d).fct_us, 99))]
        for _, n in runs:
            cells += [fmt(sel(n).fct_data_us.median()), fmt(pct(sel(n).fct_data_us, 99))]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def run_dclb(buffer_packets: int, k_packets: int):
    """dclb on the validation scenario with this buffer and K (the ns-3 run's queue disc values + 2)."""
    import dclb

    over = [f"topology.buffer_packets={buffer_packets}", f"topology.ecn_k_packets={k_packets}"]
    sc = dclb.load_scenario(HERE / "scenario.toml", overrides=over)
    res = dclb.run(sc, out=None)
    d = res.flows.to_pandas().sort_values("flow_id")
    if (d.state != "completed").any():
        raise SystemExit("dclb: some flows did not complete")
    paths = dclb_paths.paths_from_run(res.flows, sc.seed, sc.topology)
    d = d[["flow_id", "size_bytes", "fct_us", "ideal_fct_us", "finish_us", "packets_sent", "retransmissions",
           "timeouts"]]
    return d, res, paths


def pair_row(name: str, sizes: pd.Series, x: pd.Series, y: pd.Series) -> str:
    """One yardstick row: y against x (both indexed by flow id), per bin: median ratio, p99 ratio, share of flows
    whose FCT moved by at most 10%."""
    cells = []
    for lo, hi, _ in BINS:
        s = (sizes > lo) & (sizes <= hi)
        r = y[s] / x[s]
        cells.append(f"{y[s].median() / x[s].median():.2f} / {pct(y[s], 99) / pct(x[s], 99):.2f} / "
                     f"{((r - 1).abs() <= 0.1).mean():.0%}")
    return f"| {name} | " + " | ".join(cells) + " |"


def yardsticks(d: pd.DataFrame, files: dict[str, pd.DataFrame]) -> str:
    """How much FCTs move under changes that should not matter: a one-packet change of dclb's buffer or K, the
    handshake timing in ns-3, the path assignment in ns-3. Differences between the simulators are to be read
    against these."""
    sizes = d.set_index("flow_id").size_bytes
    base = d.set_index("flow_id").fct_us
    rows = []
    for over, name in ((["topology.buffer_packets=255"], "dclb: buffer 255 instead of 256 packets"),
                       (["topology.ecn_k_packets=64"], "dclb: K 64 instead of 65 packets")):
        import dclb

        sc = dclb.load_scenario(HERE / "scenario.toml", overrides=over)
        other = dclb.run(sc, out=None).flows.to_pandas().set_index("flow_id").fct_us
        rows.append(pair_row(name, sizes, base, other))
    ns3 = {k: v.set_index("flow_id").fct_data_us for k, v in files.items()}
    for a, b, name in (("ns3_ecmp.csv", "ns3_ecmp_preconnected.csv", "ns-3: connections opened early (no handshake before the data)"),
                       ("ns3_ecmp_floor.csv", "ns3_ecmp_floor_preconnected.csv", "ns-3 with the floor: connections opened early"),
                       ("ns3_ecmp.csv", "ns3_dmodk.csv", "ns-3: dmodk paths instead of dclb's ECMP paths")):
        if a in ns3 and b in ns3:
            rows.append(pair_row(name, sizes, ns3[a], ns3[b]))
    head = "| change | " + " | ".join(label for _, _, label in BINS) + " |"
    return "\n".join([head, "|---|" + "--:|" * len(BINS)] + rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns3", action="append", help="ns-3 per-flow CSV (default: every validation/results/ns3_*.csv)")
    args = ap.parse_args()
    files = [Path(p) for p in args.ns3] if args.ns3 else sorted((HERE / "results").glob("ns3_*.csv"))
    if not files:
        raise SystemExit("no ns-3 results: run validation/ns3_leafspine.py first (see docs/validation.md)")

    import dclb

    pinned = pd.read_csv(HERE / "paths_ecmp.csv")
    pinned = list(zip(pinned.data_spine, pinned.ack_spine))
    dclb_runs: dict[tuple[int, int], tuple] = {}
    groups: dict[tuple[int, int], list] = {}
    all_ns3 = {}
    for f in files:
        n = load_ns3(f)
        all_ns3[f.name] = n
        js = json.loads(f.with_suffix(".json").read_text())
        # dclb counts the packet on the wire and ns-3's 1-packet device queue is a second one outside the disc.
        key = (js["buffer_queue_disc_packets"] + 2, js["k_queue_disc_packets"] + 2)
        if key not in dclb_runs:
            dclb_runs[key] = run_dclb(*key)
        d, res, paths = dclb_runs[key]
        if paths != pinned:
            raise SystemExit("dclb's ECMP paths are not those of validation/paths_ecmp.csv")
        n_paths = list(zip(n.data_spine, n.ack_spine))
        what = "the same data and ACK paths as dclb" if n_paths == paths else \
            f"different paths ({sum(a != b for a, b in zip(n_paths, paths))} of {len(n)} flows differ)"
        cc = js.get("congestion_control", "TcpDctcp")
        pre = js.get("preconnect_us", 0)
        how = (f"; connections opened {pre / 1000:g} ms early, data handed to TCP at the flow's start "
               f"({js['late_connections']} connections late)") if pre else ""
        print(f"## {f.name}: paths {js['paths']} ({what}); buffer {key[0]} packets, K {key[1]} packets; "
              f"ns-3 {cc}{how}\n")
        print(f"dclb {dclb.__version__} with ECMP against ns-3 3.44. FCT in microseconds; ratio = ns-3 (data) / dclb.\n")
        print(bin_table(d, n) + "\n")
        print(lone_flows(d, n) + ".\n")
        h = n.handshake_us
        print(f"ns-3 handshake (application start to first data segment), all flows: min {h.min():.2f} us, median "
              f"{h.median():.2f} us, p90 {h.quantile(0.9):.1f} us, p99 {h.quantile(0.99):.1f} us, max {h.max():.1f} us; "
              f"flows that retransmitted their SYN: {int((n.syn_sent > 1).sum())}.\n")
        print("Flows with a retransmission timeout, per bin:\n")
        print(timeouts_by_bin(d, n) + "\n")
        if (n.timeouts > 0).any() or (d.timeouts > 0).any():
            print("The bins over flows without a timeout in either simulator:\n")
            print(without_timeouts(d, n) + "\n")
        print(counters(d, res.summary, res.stats, n, js) + "\n")
        pre = js.get("preconnect_us", 0)
        label = js["paths"].removesuffix(".csv").replace("paths_", "") + (" floor" if cc != "TcpDctcp" else "") \
            + (" preconnected" if pre else "")
        groups.setdefault(key, []).append((f"ns-3 {label}", n))
    if not args.ns3:
        print("## Yardsticks: median ratio / p99 ratio / flows within 10%, changed run against the original\n")
        print(yardsticks(dclb_runs[(256, 65)][0], all_ns3) + "\n")
    for key, runs in groups.items():
        if len(runs) > 1:
            print(f"## All runs with buffer {key[0]}, K {key[1]}: FCT in microseconds (ns-3 from the first data "
                  f"segment)\n")
            print(overview(dclb_runs[key][0], runs) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
