//! DRILL: per-packet choice among a few sampled egress queues plus the best one remembered from the last
//! decision, using only the switch's own queue lengths (Ghorbani et al., SIGCOMM'17, [DRILL]).
//!
//! **Rule.** DRILL(d, m): for every packet at a switch with several equal-cost egress ports, draw `d`
//! distinct ports uniformly at random (all of them if there are no more than `d`), add the `m` ports kept in
//! memory, send the packet to the one with the shortest queue, and remember the `m` least loaded ports of
//! those just compared. There is no feedback from other switches.
//!
//! **Choices where the paper leaves room.**
//! * *Load* is the port's current queue in bytes, counting the packet being serialised (the Hermes authors'
//!   code, [LB], adds device queue and qdisc backlog, nearly the same quantity; whether ns-3's device queue
//!   still holds the packet on the wire was not checked).
//! * *Ties* (`ties`). The paper does not say which of several equally short queues wins. By default
//!   (`"memory"`) a remembered port keeps the packet: memory is examined first and a sampled port replaces
//!   the best only when strictly shorter, as in [LB] and ConWeave. Among sampled ports that tie, the first
//!   drawn wins, which is uniform. `"random"` draws the winner uniformly among all compared ports with the
//!   shortest queue, memory included. The choice matters more than it looks, see *Asymmetry* below.
//! * *Memory scope* (`memory_scope`). The paper keeps the memory per forwarding engine; dclb models one
//!   engine per switch, so `"switch"` (the default) shares one memory among all packets of the switch. A
//!   remembered port that is not a candidate for the packet in hand (another destination's parallel spine
//!   link, or an uplink whose spine cannot reach this destination) is not compared, and the memory then
//!   holds this decision's result, since the memory is by definition the outcome of the previous decision.
//!   `"dst_leaf"` keeps one memory per destination leaf and `"dst_host"` one per destination host, the
//!   latter being what the public simulators do ([LB] and ConWeave key `previousBest` by destination).
//! * *Samples and memory may coincide*: a sampled port already in memory is compared once, so fewer than
//!   `d + m` distinct ports may be compared, as in the paper's sampling.
//! * *Where it runs*: every switch with a choice, i.e. the source leaf's uplinks and, when leaf-spine pairs
//!   have parallel links, the spine's links down to the destination leaf. ACKs are balanced like any packet.
//! * *Out of scope*: DRILL's decomposition of an asymmetric fabric into symmetric components (flows hashed to
//!   a component, per-packet balancing inside it). Like both public simulators, dclb runs plain DRILL on
//!   every topology, so under asymmetry this is the local-only scheme CONGA argues against.
//!
//! **Asymmetry: DRILL(2, 1) is drawn to a slow path it cannot see.** On `benchmarks/asym_4x4.toml` (leaf 0's
//! link to spine 0 at 2 Gbps, web search at fabric load 0.6, 1,500 flows, seeds 1 and 2) DRILL(2, 1) sends
//! 54% and 62% of the bytes bound for leaf 0 through spine 0, where RPS sends 24% and ECMP 18-28%, and its
//! mean long-flow FCT is 63-87 ms against ECMP's 32 ms (`tests/drill.rs` pins the effect on a smaller
//! fabric). This follows from the rules above, not from a defect of the engine:
//! * The slow link is the spine's link down to leaf 0. The source leaf's uplink to spine 0 runs at full rate
//!   and its queue looks like any other, so DRILL's local view cannot tell the paths apart: the best a local
//!   scheme can do is RPS's even split.
//! * With host and fabric links at the same rate, one host's packets reach the leaf no faster than an uplink
//!   drains them. A queue forms at a leaf uplink only when packets of several hosts meet there; otherwise
//!   every compared queue is empty, the remembered port wins the tie, and the packet goes where the previous
//!   decision went. A lone flow therefore stays on the uplink of its first packet, as under ECMP.
//! * Traffic that crossed the slow link comes back as a slow ACK clock: its senders' next packets reach the
//!   leaf spread out, find the remembered uplink idle and keep it. Traffic on fast paths returns in bursts,
//!   which meet at an uplink, make its queue non-empty and push the memory to a sampled idle port. The memory
//!   thus lingers on the slow uplink, and flows towards the slow leaf lock onto it. (In an instrumented
//!   4x4 run, 84% of the packets leaf 1 sent towards leaf 0 over uplink 0 went there because the remembered
//!   port tied for the shortest queue, against 48% of those over uplink 1; with random ties the bias is gone.)
//!
//! With `ties = "random"` or `m = 0` the share falls to RPS's 24% (the local-only optimum, still blind to
//! the slow link; long-flow FCT 37-46 ms), and with `memory_scope = "dst_host"` it is 33-35%.
//! The defaults stay those of the public simulators (their tie rule, the paper's per-engine memory), so that
//! dclb's DRILL is theirs; a comparison under asymmetry should say which tie rule it used.
//!
//! **Defaults and sources.** `d = 2`, `m = 1`: the paper's recommended DRILL(2, 1) ([DRILL], as its
//! talk summarises it; [LB] attribute `d` = 2; ConWeave `m_drill_candidate` = 2). `d` is a whole number in
//! 1..=64 and `m` one in 0..=64. `ties = "memory"`: the rule of [LB] and ConWeave (a sampled port must be
//! strictly shorter to replace the remembered one); the paper gives none.

use super::params::{param_choice, scheme_params};
use super::scheme::{per_switch, reflect_path_and_class, Placement, SchemeSpec};
use super::{Decision, FabricFacts, PacketMut, SwitchBalancer, SwitchCx};
use crate::ids::PortId;
use crate::packet::Packet;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "drill",
    placement: Placement::Switch,
    granularity: "packet",
    summary: "per packet, the shortest queue among d random egress ports and the m best remembered ones",
    params: DrillParams::SPECS,
    install: |cx, p| {
        let p = DrillParams::from_params(p);
        per_switch(cx.switches, |_| Drill::new(&p, cx.facts))
    },
    reflect: reflect_path_and_class,
};

scheme_params! {
    /// DRILL's parameters.
    pub struct DrillParams {
        /// random egress ports sampled per packet
        #[source = "[DRILL] paper DRILL(2,1); [LB] d = 2; [CW] 2"]
        d: usize in 1..=64 = 2,
        /// least-loaded ports remembered from the previous decision
        #[source = "[DRILL] paper DRILL(2,1)"]
        m: usize in 0..=64 = 1,
        /// what one memory serves: the whole switch (the paper's per-engine memory), each destination leaf, or
        /// each destination host (the public simulators)
        #[source = "DRILL paper (per engine); [LB] and [CW] per destination"]
        memory_scope: MemoryScope = MemoryScope::Switch,
        /// which compared port wins among the shortest queues: the remembered one (memory), or one drawn
        /// uniformly among the tied ports (random)
        #[source = "[LB] and [CW] keep the remembered port (replace only on a strictly shorter queue); the paper does not say"]
        ties: Ties = Ties::Memory,
    }
}

param_choice! {
    /// What one DRILL memory serves.
    pub enum MemoryScope {
        Switch = "switch",
        DstLeaf = "dst_leaf",
        DstHost = "dst_host",
    }
}

param_choice! {
    /// Which of the compared ports with the shortest queue DRILL takes.
    pub enum Ties {
        Memory = "memory",
        Random = "random",
    }
}

pub struct Drill {
    d: usize,
    m: usize,
    scope: MemoryScope,
    ties: Ties,
    /// `m` remembered ports per memory, `PortId::NONE` for an empty slot.
    memory: Vec<PortId>,
    /// Scratch: candidates being sampled (partial shuffle).
    pool: Vec<PortId>,
    /// The ports compared in the last decision, memory first, then samples in draw order.
    compared: Vec<PortId>,
    /// Scratch: (load, position) of the compared ports.
    ranked: Vec<(u64, usize)>,
}

impl Drill {
    /// DRILL with parameters `p` at a switch of the fabric `facts` describes (which says how many memories
    /// a scope keeps: one, one per leaf, or one per host).
    pub fn new(p: &DrillParams, facts: &FabricFacts) -> Drill {
        let memories = match p.memory_scope {
            MemoryScope::Switch => 1,
            MemoryScope::DstLeaf => facts.leaves as usize,
            MemoryScope::DstHost => facts.hosts as usize,
        };
        Drill {
            d: p.d.max(1),
            m: p.m,
            scope: p.memory_scope,
            ties: p.ties,
            memory: vec![PortId::NONE; memories * p.m],
            pool: Vec::new(),
            compared: Vec::new(),
            ranked: Vec::new(),
        }
    }

    /// The ports compared in the most recent multi-candidate decision (remembered ones first).
    pub fn last_compared(&self) -> &[PortId] {
        &self.compared
    }

    /// The memory that serves `pkt` (the fabric's facts say its destination's leaf).
    fn slot(&self, pkt: &Packet, facts: &FabricFacts) -> usize {
        let i = match self.scope {
            MemoryScope::Switch => 0,
            MemoryScope::DstLeaf => facts.leaf_of_host(pkt.dst).index(),
            MemoryScope::DstHost => pkt.dst.index(),
        };
        i * self.m
    }
}

impl SwitchBalancer for Drill {
    fn hooks(&self) -> super::Hooks {
        super::Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        let n = candidates.len();
        let base = self.slot(pkt, cx.facts);
        self.compared.clear();
        for &p in &self.memory[base..base + self.m] {
            if p != PortId::NONE && candidates.contains(&p) && !self.compared.contains(&p) {
                self.compared.push(p);
            }
        }
        // d distinct samples: a partial Fisher-Yates shuffle of the candidates.
        self.pool.clear();
        self.pool.extend_from_slice(candidates);
        let take = self.d.min(n);
        for i in 0..take {
            if take < n {
                let j = i + cx.rng.below(n - i);
                self.pool.swap(i, j);
            }
            let p = self.pool[i];
            if !self.compared.contains(&p) {
                self.compared.push(p);
            }
        }
        // Shortest queue; the earliest (memory first) wins a tie, unless ties are drawn at random.
        self.ranked.clear();
        for (i, &p) in self.compared.iter().enumerate() {
            self.ranked.push((cx.ports.queue_bytes(p), i));
        }
        self.ranked.sort_unstable();
        if self.ties == Ties::Random {
            let tied = self.ranked.iter().take_while(|r| r.0 == self.ranked[0].0).count();
            if tied > 1 {
                let j = cx.rng.below(tied);
                self.ranked.swap(0, j);
            }
        }
        let best = self.compared[self.ranked[0].1];
        // Remember the m least loaded of those compared.
        for k in 0..self.m {
            self.memory[base + k] = self.ranked.get(k).map_or(PortId::NONE, |&(_, i)| self.compared[i]);
        }
        Decision::Forward(best)
    }

    fn state_bytes(&self) -> usize {
        self.memory.len() * 4
    }
}
