"""Which spine each flow's data and ACKs cross in dclb's ECMP run, so that ns-3 can pin the same paths.

ns-3 3.44 has no per-flow ECMP (docs/validation.md), so the ns-3 script pins every flow to a given spine for its
data and a given spine for its ACKs. dclb has no option that pins paths by a rule (no "spine = dst mod S"), but
its ECMP is a pure function of the 5-tuple and a per-switch salt, so the paths it took can be known exactly:

* data (source leaf -> spine): read from dclb's own output, ``uplink_bytes`` (payload bytes the flow sent on each
  uplink of its source leaf); with ECMP exactly one entry is non-zero;
* ACKs (destination leaf -> spine): dclb records no per-flow ACK path, so this file recomputes ECMP's choice with
  a Python copy of the rule (``flow_hash_index`` in crates/dclb-core/src/lb/ecmp.rs, the salts in sim.rs, the
  source ports in sim.rs, the generator in rng.rs). The same function is checked against every flow's data path
  first; a mismatch aborts, so the ACK paths are only used when the copy reproduces all data paths.

A leaf-spine path is fixed by the spine (one link per leaf-spine pair here), so (data spine, ACK spine) per flow
is the whole path assignment.

    python validation/dclb_paths.py      # runs dclb, checks the copy, writes validation/paths_ecmp.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

M64 = (1 << 64) - 1
HERE = Path(__file__).resolve().parent

# Stream numbers of crates/dclb-core/src/rng.rs (part of dclb's determinism contract).
STREAM_HASH_SALT = 4
STREAM_FLOW_PORTS = 5
PROTO_TCP = 6
DATA_PORT = 80


def _splitmix64(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & M64
    return state, mix64(state)


def mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Rng:
    """xoshiro256++ seeded through SplitMix64, as dclb's ``Rng``."""

    def __init__(self, seed: int) -> None:
        st, self.s = seed, []
        for _ in range(4):
            st, v = _splitmix64(st)
            self.s.append(v)

    @classmethod
    def derive(cls, seed: int, purpose: int, index: int) -> "Rng":
        st = seed ^ mix64(((purpose << 32) & M64) ^ ((index * 0x9E3779B9) & M64))
        _, v = _splitmix64(st)
        return cls(v)

    def next_u64(self) -> int:
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64  # noqa: E731
        result = (rotl((s[0] + s[3]) & M64, 23) + s[0]) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n: int) -> int:
        return (self.next_u64() * n) >> 64


def five_tuple_key(src: int, dst: int, sport: int, dport: int) -> int:
    t = (src << 72) | (dst << 40) | (sport << 24) | (dport << 8) | PROTO_TCP
    return mix64((t & M64) ^ mix64(t >> 64))


def ecmp_index(key: int, salt: int, n: int) -> int:
    return (mix64(key ^ salt) * n) >> 64


def ecmp_paths(flows: list[tuple[int, int]], seed: int, hosts_per_leaf: int, leaves: int, spines: int) -> list[tuple[int, int]]:
    """(data spine, ACK spine) for each flow (src, dst), in flow-id order, under dclb's ECMP (one link per pair,
    no failed links: the candidates at a leaf are its uplinks in spine order)."""
    hosts = hosts_per_leaf * leaves
    leaf_salt = [Rng.derive(seed, STREAM_HASH_SALT, hosts + leaf).next_u64() for leaf in range(leaves)]
    ports = Rng.derive(seed, STREAM_FLOW_PORTS, 0)
    out = []
    for src, dst in flows:
        sport = 10_000 + ports.below(50_000)
        data = ecmp_index(five_tuple_key(src, dst, sport, DATA_PORT), leaf_salt[src // hosts_per_leaf], spines)
        ack = ecmp_index(five_tuple_key(dst, src, DATA_PORT, sport), leaf_salt[dst // hosts_per_leaf], spines)
        out.append((data, ack))
    return out


def paths_from_run(flows_table, seed: int, topology) -> list[tuple[int, int]]:
    """Checks the copy of ECMP against the data paths of a dclb ECMP run and returns (data, ACK) spines."""
    f = flows_table.to_pandas().sort_values("flow_id")
    if topology.links_per_pair != 1:
        raise SystemExit("dclb_paths: one link per leaf-spine pair only")
    pairs = list(zip(f.src_host.astype(int), f.dst_host.astype(int)))
    predicted = ecmp_paths(pairs, seed, topology.hosts_per_leaf, topology.leaves, topology.spines)
    bad = 0
    for (data, _), up in zip(predicted, f.uplink_bytes):
        used = [i for i, b in enumerate(up) if b > 0]
        if used != [data]:
            bad += 1
    if bad:
        raise SystemExit(f"dclb_paths: the ECMP copy disagrees with dclb on {bad} of {len(pairs)} data paths")
    return predicted


def write_paths(path: Path, paths: list[tuple[int, int]]) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["flow_id", "data_spine", "ack_spine"])
        for i, (d, a) in enumerate(paths):
            w.writerow([i, d, a])


def main() -> int:
    import dclb

    sc = dclb.load_scenario(HERE / "scenario.toml")
    res = dclb.run(sc, out=None)
    paths = paths_from_run(res.flows, sc.seed, sc.topology)
    write_paths(HERE / "paths_ecmp.csv", paths)
    same = sum(d == a for d, a in paths)
    print(f"ECMP copy matches dclb on all {len(paths)} data paths; {same} flows have ACKs on the data spine; "
          f"wrote {HERE / 'paths_ecmp.csv'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
