"""dclb against ns-3 on the same flows and paths: FCT per size bin (docs/validation.md).

Runs dclb on the flows of validation/flows.csv (ECMP; seconds per run), checks that the paths dclb took are the
ones the ns-3 runs were pinned to (validation/paths_ecmp.csv), reads the per-flow results of the ns-3 runs under
validation/results/ (made by validation/ns3_leafspine.py, minutes each) and prints, per size bin, the count,
median and 99th percentile of FCT in each simulator and their ratio, then drops, marks, retransmissions and
timeouts. Not part of the test suite.

* An ns-3 run with packet-counted queues (the default) is compared with dclb on validation/scenario.toml (packet
  queues, the host model before issue #8 pinned) with the same buffer and K; FCT from the first data segment.
* An ns-3 run with byte-counted queues (--bytes) is compared with dclb on validation/scenario_defaults.toml
  (dclb's current defaults, handshake on) twice: with the host model closest to ns-3's (no TCP small queues, a
  10,000-packet NIC) and with the full defaults (TCP small queues, a 512-packet NIC); FCT from the application's
  start, handshake included, in both simulators.

With no --ns3 argument it also prints yardsticks (how much FCTs move under changes that should not matter) and
one overview table per group of runs, with dclb variants that show what each default changes.

    python validation/compare.py                    # tables in Markdown on stdout
    python validation/compare.py --ns3 validation/results/ns3_ecmp.csv --ns3 validation/results/ns3_dmodk.csv

ns-3 FCTs are given two ways: from the first data segment (`data`, what dclb measures without a handshake) and
from the application's start (`app`, including ns-3's SYN/SYN-ACK, what dclb measures with transport.handshake).
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

SCENARIO = HERE / "scenario.toml"                    # packet queues, pre-#8 host model (the original comparison)
SCENARIO_DEFAULTS = HERE / "scenario_defaults.toml"  # dclb's defaults (byte queues, TSQ, 512-packet NIC) + handshake
# The host model closest to ns-3's: no TCP small queues, ns-3's 9,998-packet host queue disc + device + wire.
NS3_HOST = ("transport.host_queue_limit_bytes=0", "transport.nic_queue_packets=10000")
# ns-3's byte-mode queue disc holds neither the packet on the wire nor the one in the device queue: 2 x 1,500 B.
BYTES_OUTSIDE_DISC = 3000

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


def bin_table(d: pd.DataFrame, n: pd.DataFrame, app: bool = False) -> str:
    """Per size bin; ratio = ns-3 / dclb with ns-3's FCT from the first data segment, or with `app` (dclb ran with
    its handshake) from the application's start."""
    m = d.merge(n, on="flow_id", suffixes=("", "_ns3"))
    main, other = ("app", "data") if app else ("data", "app")
    lines = [f"| size bin | flows | dclb median | ns-3 median ({main}) | ratio | ns-3 median ({other}) | dclb p99 | "
             f"ns-3 p99 ({main}) | ratio | ns-3 p99 ({other}) | per-flow ratio, median [p10, p90] | flows within 10% |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for lo, hi, label in BINS:
        b = m[(m.size_bytes > lo) & (m.size_bytes <= hi)]
        ns_main, ns_other = (b.fct_app_us, b.fct_data_us) if app else (b.fct_data_us, b.fct_app_us)
        dm, nm, am = b.fct_us.median(), ns_main.median(), ns_other.median()
        dp, npp, ap_ = pct(b.fct_us, 99), pct(ns_main, 99), pct(ns_other, 99)
        r = ns_main / b.fct_us
        lines.append(f"| {label} | {len(b)} | {fmt(dm)} | {fmt(nm)} | {nm / dm:.2f} | {fmt(am)} | {fmt(dp)} | "
                     f"{fmt(npp)} | {npp / dp:.2f} | {fmt(ap_)} | {r.median():.2f} [{r.quantile(0.1):.2f}, "
                     f"{r.quantile(0.9):.2f}] | {((r - 1).abs() <= 0.1).mean():.0%} |")
    return "\n".join(lines)


def lone_flows(d: pd.DataFrame, n: pd.DataFrame, app: bool = False) -> str:
    """Flows that ran alone in dclb (FCT within 0.5% of its ideal): the physics without contention."""
    m = d.merge(n, on="flow_id", suffixes=("", "_ns3"))
    lone = m[m.fct_us <= 1.005 * m.ideal_fct_us]
    ns = lone.fct_app_us if app else lone.fct_data_us
    r = ns / lone.fct_us
    diff = ns - lone.fct_us
    since = "the application's start" if app else "the first data segment"
    return (f"{len(lone)} flows ran uncontended in dclb (FCT within 0.5% of ideal); for them ns-3 (from {since}) / "
            f"dclb: median {r.median():.4f}, min {r.min():.4f}, max {r.max():.4f}; "
            f"difference median {diff.median():+.2f} us, p10 {diff.quantile(0.1):+.2f} us, "
            f"p90 {diff.quantile(0.9):+.2f} us; handshake (app start to first data segment) median "
            f"{lone.handshake_us.median():.2f} us")


def counters(d: pd.DataFrame, summary: dict, stats: dict, n: pd.DataFrame, js: dict, handshake: bool = False) -> str:
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
        ("SYN retransmissions", "counted as timeouts" if handshake else "no handshake",
         f"{int(n.syn_sent.sum()) - len(n):,}"),
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


def without_timeouts(d: pd.DataFrame, n: pd.DataFrame, app: bool = False) -> str:
    """The bins again over flows that had no timeout in either simulator."""
    m = d.merge(n, on="flow_id", suffixes=("", "_ns3"))
    keep = m[(m.timeouts == 0) & (m.timeouts_ns3 == 0)].flow_id
    return bin_table(d[d.flow_id.isin(keep)], n[n.flow_id.isin(keep)], app)


def overview(runs: list[tuple[str, pd.DataFrame, str]]) -> str:
    """Median / p99 FCT per bin (µs) for each (name, per-flow table, FCT column), one run per row."""
    head = "| run | " + " | ".join(label for _, _, label in BINS) + " | timeouts |"
    out = [head, "|---|" + "--:|" * (len(BINS) + 1)]
    for name, t, col in runs:
        cells = []
        for lo, hi, _ in BINS:
            x = t[(t.size_bytes > lo) & (t.size_bytes <= hi)][col]
            cells.append(f"{fmt(x.median())} / {fmt(pct(x, 99))}")
        out.append(f"| {name} | " + " | ".join(cells) + f" | {int(t.timeouts.sum())} |")
    return "\n".join(out)


_DCLB_RUNS: dict = {}


def run_dclb(scenario: Path = SCENARIO, over: tuple[str, ...] = ()):
    """dclb on a validation scenario with these --set overrides (cached: each variant runs once)."""
    key = (scenario.name, tuple(over))
    if key in _DCLB_RUNS:
        return _DCLB_RUNS[key]
    import dclb

    sc = dclb.load_scenario(scenario, overrides=list(over))
    res = dclb.run(sc, out=None)
    d = res.flows.to_pandas().sort_values("flow_id")
    if (d.state != "completed").any():
        raise SystemExit("dclb: some flows did not complete")
    paths = dclb_paths.paths_from_run(res.flows, sc.seed, sc.topology)
    d = d[["flow_id", "size_bytes", "fct_us", "ideal_fct_us", "finish_us", "packets_sent", "retransmissions",
           "timeouts"]]
    _DCLB_RUNS[key] = (d, res, paths)
    return d, res, paths


def packet_overrides(buffer_packets: int, k_packets: int) -> tuple[str, ...]:
    """validation/scenario.toml with this buffer and K (the ns-3 run's queue disc values + 2)."""
    return (f"topology.buffer_packets={buffer_packets}", f"topology.ecn_k_packets={k_packets}")


def byte_overrides(js: dict) -> tuple[str, ...]:
    """validation/scenario_defaults.toml with the ns-3 run's byte buffer and K (queue disc + 2 x 1,500 B), given
    only where they differ from dclb's defaults (384,000 B and 97,500 B at 10 Gbps)."""
    buf, k = js["buffer_queue_disc_bytes"] + BYTES_OUTSIDE_DISC, js["k_queue_disc_bytes"] + BYTES_OUTSIDE_DISC
    return (() if buf == 384_000 else (f"topology.buffer_bytes={buf}",)) + \
        (() if k == 97_500 else (f"topology.ecn_k_bytes={k}",))


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


def yardsticks(files: dict[str, pd.DataFrame], with_bytes: bool) -> str:
    """How much FCTs move under changes that should not matter: a one-packet change of dclb's buffer or K, the
    handshake timing in ns-3, the path assignment in ns-3. Differences between the simulators are to be read
    against these. Also dclb's window validation, which is on by default now and off in ns-3's TcpDctcp."""
    def fct(scenario: Path, over: tuple[str, ...]) -> pd.Series:
        return run_dclb(scenario, over)[0].set_index("flow_id").fct_us

    base_over = packet_overrides(256, 65)
    sizes = run_dclb(SCENARIO, base_over)[0].set_index("flow_id").size_bytes
    rows = []
    pairs = [(SCENARIO, base_over, ("topology.buffer_packets=255", "topology.ecn_k_packets=65"),
              "dclb (scenario.toml): buffer 255 instead of 256 packets"),
             (SCENARIO, base_over, ("topology.buffer_packets=256", "topology.ecn_k_packets=64"),
              "dclb (scenario.toml): K 64 instead of 65 packets"),
             (SCENARIO, base_over, base_over + ("transport.cwnd_validation=false",),
              "dclb (scenario.toml): window validation off")]
    if with_bytes:
        pairs += [(SCENARIO_DEFAULTS, NS3_HOST, NS3_HOST + ("topology.buffer_bytes=382500",),
                   "dclb (defaults, ns-3-like host): buffer 382,500 instead of 384,000 B"),
                  (SCENARIO_DEFAULTS, NS3_HOST, NS3_HOST + ("topology.ecn_k_bytes=96000",),
                   "dclb (defaults, ns-3-like host): K 96,000 instead of 97,500 B"),
                  (SCENARIO_DEFAULTS, NS3_HOST, NS3_HOST + ("transport.cwnd_validation=false",),
                   "dclb (defaults, ns-3-like host): window validation off"),
                  (SCENARIO_DEFAULTS, (), ("transport.cwnd_validation=false",),
                   "dclb (full defaults): window validation off")]
    for scenario, a, b, name in pairs:
        rows.append(pair_row(name, sizes, fct(scenario, a), fct(scenario, b)))
    ns3 = {k: v.set_index("flow_id").fct_data_us for k, v in files.items()}
    for a, b, name in (("ns3_ecmp.csv", "ns3_ecmp_preconnected.csv", "ns-3: connections opened early (no handshake before the data)"),
                       ("ns3_ecmp_floor.csv", "ns3_ecmp_floor_preconnected.csv", "ns-3 with the floor: connections opened early"),
                       ("ns3_ecmp.csv", "ns3_dmodk.csv", "ns-3: dmodk paths instead of dclb's ECMP paths")):
        if a in ns3 and b in ns3:
            rows.append(pair_row(name, sizes, ns3[a], ns3[b]))
    head = "| change | " + " | ".join(label for _, _, label in BINS) + " |"
    return "\n".join([head, "|---|" + "--:|" * len(BINS)] + rows)


ROLES = ("host_up", "leaf_down", "leaf_up", "spine_down")


def role_stats(per_port: pd.DataFrame) -> dict[str, str]:
    """Per port role: mean queue (mean over ports of each port's time average), the median over ports of each
    port's 99th percentile, and the largest sample, in KB."""
    out = {}
    for role in ROLES:
        x = per_port[per_port.role == role]
        out[role] = (f"{x.mean_bytes.mean() / 1000:.1f} / {x.p99_bytes.median() / 1000:.1f} / "
                     f"{x.max_bytes.max() / 1000:,.1f}")
    return out


def dclb_queues(scenario: Path, over: tuple[str, ...], interval_us: float) -> pd.DataFrame:
    """Every port's queue in dclb sampled like ns-3's --sample-queues-us, summarised per port."""
    import dclb

    sc = dclb.load_scenario(scenario, overrides=list(over))
    t = sc.topology
    n_ports = 2 * t.leaves * t.hosts_per_leaf + 2 * t.leaves * t.spines
    ports = ", ".join(str(i) for i in range(n_ports))
    sc = dclb.load_scenario(scenario, overrides=list(over) + [f"run.sampler={{interval_us = {interval_us:g}, "
                                                               f"ports = [{ports}]}}"])
    res = dclb.run(sc, out=None)
    roles = res.ports.to_pandas().set_index("port").role
    smp = res.samples.to_pandas()
    smp = smp[smp.kind == "port"]
    g = smp.groupby("id").queue_bytes
    return pd.DataFrame({"role": roles.loc[g.mean().index].to_numpy(), "mean_bytes": g.mean().to_numpy(),
                         "p99_bytes": g.quantile(0.99).to_numpy(), "max_bytes": g.max().to_numpy()})


def queue_table(f: Path, js: dict, over: tuple[str, ...]) -> str:
    """Queues per port role in ns-3 (--sample-queues-us) and in dclb sampled at the same interval."""
    ns3 = pd.read_csv(f.with_suffix(".queues.csv"))
    iv = js["sample_queues_us"]
    cols = [("ns-3", role_stats(ns3)),
            ("dclb, ns-3-like host", role_stats(dclb_queues(SCENARIO_DEFAULTS, over + NS3_HOST, iv))),
            ("dclb, full defaults", role_stats(dclb_queues(SCENARIO_DEFAULTS, over, iv)))]
    out = [f"Queues sampled every {iv:g} us, in KB: mean / p99 (median over the ports of the role) / largest sample. "
           f"ns-3: queue disc + device queue (not the packet on the wire); dclb: everything including the packet "
           f"on the wire.\n",
           "| port role | " + " | ".join(name for name, _ in cols) + " |", "|---|" + "--:|" * len(cols)]
    for role in ROLES:
        out.append(f"| {role} | " + " | ".join(c[role] for _, c in cols) + " |")
    return "\n".join(out)


def compare_one(f: Path, n: pd.DataFrame, js: dict, d: pd.DataFrame, res, paths, title: str, app: bool) -> None:
    """Prints every table of one ns-3 run against one dclb run."""
    import dclb

    n_paths = list(zip(n.data_spine, n.ack_spine))
    what = "the same data and ACK paths as dclb" if n_paths == paths else \
        f"different paths ({sum(a != b for a, b in zip(n_paths, paths))} of {len(n)} flows differ)"
    cc = js.get("congestion_control", "TcpDctcp")
    pre = js.get("preconnect_us", 0)
    how = (f"; connections opened {pre / 1000:g} ms early, data handed to TCP at the flow's start "
           f"({js['late_connections']} connections late)") if pre else ""
    print(f"## {f.name}: paths {js['paths']} ({what}); {title}; ns-3 {cc}{how}\n")
    since = "app" if app else "data"
    print(f"dclb {dclb.__version__} with ECMP against ns-3 3.44. FCT in microseconds; ratio = ns-3 ({since}) / dclb"
          + (" (both from the application's start, handshake included)" if app else "") + ".\n")
    print(bin_table(d, n, app) + "\n")
    print(lone_flows(d, n, app) + ".\n")
    h = n.handshake_us
    print(f"ns-3 handshake (application start to first data segment), all flows: min {h.min():.2f} us, median "
          f"{h.median():.2f} us, p90 {h.quantile(0.9):.1f} us, p99 {h.quantile(0.99):.1f} us, max {h.max():.1f} us; "
          f"flows that retransmitted their SYN: {int((n.syn_sent > 1).sum())}.\n")
    print("Flows with a retransmission timeout, per bin:\n")
    print(timeouts_by_bin(d, n) + "\n")
    if (n.timeouts > 0).any() or (d.timeouts > 0).any():
        print("The bins over flows without a timeout in either simulator:\n")
        print(without_timeouts(d, n, app) + "\n")
    print(counters(d, res.summary, res.stats, n, js, handshake=app) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns3", action="append", help="ns-3 per-flow CSV (default: every validation/results/ns3_*.csv)")
    args = ap.parse_args()
    files = [Path(p) for p in args.ns3] if args.ns3 else \
        sorted(p for p in (HERE / "results").glob("ns3_*.csv") if len(p.suffixes) == 1)  # not *.queues.csv
    if not files:
        raise SystemExit("no ns-3 results: run validation/ns3_leafspine.py first (see docs/validation.md)")

    pinned = pd.read_csv(HERE / "paths_ecmp.csv")
    pinned = list(zip(pinned.data_spine, pinned.ack_spine))
    groups: dict[tuple, list] = {}
    all_ns3 = {}
    any_bytes = False
    for f in files:
        n = load_ns3(f)
        all_ns3[f.name] = n
        js = json.loads(f.with_suffix(".json").read_text())
        cc = js.get("congestion_control", "TcpDctcp")
        pre = js.get("preconnect_us", 0)
        label = "ns-3 " + js["paths"].removesuffix(".csv").replace("paths_", "") + \
            (" floor" if cc != "TcpDctcp" else "") + (" preconnected" if pre else "")
        if js.get("queue_unit", "packets") == "packets":
            # dclb counts the packet on the wire and ns-3's 1-packet device queue is a second one outside the disc.
            buf, k = js["buffer_queue_disc_packets"] + 2, js["k_queue_disc_packets"] + 2
            d, res, paths = run_dclb(SCENARIO, packet_overrides(buf, k))
            if paths != pinned:
                raise SystemExit("dclb's ECMP paths are not those of validation/paths_ecmp.csv")
            compare_one(f, n, js, d, res, paths, f"packet queues, buffer {buf} packets, K {k} packets; dclb on "
                        f"scenario.toml (pre-#8 host model)", app=False)
            groups.setdefault(("packets", buf, k), []).append((label, n, "fct_data_us"))
        else:
            any_bytes = True
            over = byte_overrides(js)
            buf = js["buffer_queue_disc_bytes"] + BYTES_OUTSIDE_DISC
            k = js["k_queue_disc_bytes"] + BYTES_OUTSIDE_DISC
            for host, extra in (("host model closest to ns-3's (no TCP small queues, 10,000-packet NIC)", NS3_HOST),
                                ("full defaults (TCP small queues, 512-packet NIC)", ())):
                d, res, paths = run_dclb(SCENARIO_DEFAULTS, over + extra)
                if paths != pinned:
                    raise SystemExit("dclb's ECMP paths are not those of validation/paths_ecmp.csv")
                compare_one(f, n, js, d, res, paths, f"byte queues, buffer {buf:,} B, K {k:,} B; dclb on "
                            f"scenario_defaults.toml (handshake on), {host}", app=True)
            if f.with_suffix(".queues.csv").exists() and "sample_queues_us" in js:
                print(f"## {f.name}: queues per port role\n")
                print(queue_table(f, js, over) + "\n")
            groups.setdefault(("bytes", buf, k), []).append((label + " bytes (app)", n, "fct_app_us"))
            groups[("bytes", buf, k)].append((label + " bytes (data)", n, "fct_data_us"))
    if not args.ns3:
        print("## Yardsticks: median ratio / p99 ratio / flows within 10%, changed run against the original\n")
        print(yardsticks(all_ns3, any_bytes) + "\n")
    for key, runs in groups.items():
        unit, buf, k = key
        if unit == "packets":
            if len(runs) < 2:
                continue
            print(f"## All runs with packet queues, buffer {buf}, K {k}: median / p99 FCT in microseconds (ns-3 "
                  f"from the first data segment)\n")
            rows = [("dclb (scenario.toml)", run_dclb(SCENARIO, packet_overrides(buf, k))[0], "fct_us")] + runs
        else:
            print(f"## Byte queues (buffer {buf:,} B, K {k:,} B) and dclb's defaults: median / p99 FCT in "
                  f"microseconds; a row starting with + changes one thing from the last dclb row without +\n")
            over = byte_overrides({"buffer_queue_disc_bytes": buf - BYTES_OUTSIDE_DISC,
                                   "k_queue_disc_bytes": k - BYTES_OUTSIDE_DISC})
            variants = [
                ("dclb scenario.toml (packet queues, pre-#8 host, no handshake)", SCENARIO, packet_overrides(256, 65)),
                ("+ handshake", SCENARIO, packet_overrides(256, 65) + ("transport.handshake=true",)),
                ("dclb defaults, ns-3-like host, handshake (byte queues)", SCENARIO_DEFAULTS, over + NS3_HOST),
                ("+ window validation off", SCENARIO_DEFAULTS, over + NS3_HOST + ("transport.cwnd_validation=false",)),
                ("+ handshake off", SCENARIO_DEFAULTS, over + NS3_HOST + ("transport.handshake=false",)),
                ("dclb full defaults, handshake (TCP small queues, 512-packet NIC)", SCENARIO_DEFAULTS, over),
                ("+ window validation off", SCENARIO_DEFAULTS, over + ("transport.cwnd_validation=false",)),
                ("+ no TCP small queues (512-packet NIC)", SCENARIO_DEFAULTS, over + ("transport.host_queue_limit_bytes=0",)),
                ("+ handshake off (dclb's defaults as shipped)", SCENARIO_DEFAULTS, over + ("transport.handshake=false",)),
            ]
            rows = [(name, run_dclb(sc, o)[0], "fct_us") for name, sc, o in variants] + runs
            if "ns3_ecmp.csv" in all_ns3:
                rows.append(("ns-3 ecmp, packet queues (app)", all_ns3["ns3_ecmp.csv"], "fct_app_us"))
        print(overview(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
