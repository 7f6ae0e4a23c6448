//! Clove-ECN: flowlet switching at the sending host, with per-path weights that ECN echoes push around.
//!
//! **Rule (Katta et al., CoNEXT'17, [Clove]).** The sending host (in the paper, its hypervisor
//! vSwitch) keeps, per destination, a weight for every path. A flow's packets stay on one path while they
//! keep coming; after a gap of at least the flowlet timeout, the next packet starts a new flowlet, which takes
//! a path by weighted round robin over the weights. Switches mark CE as usual (DCTCP's threshold); the
//! receiver reflects, per path, whether the data was marked, which here is the ACK's ECE bit together with
//! its echoed path tag. When an ACK of path `p` carries ECE, the host cuts `p`'s weight to 2/3 and spreads
//! the removed third equally over the other paths, so the total weight stays the same. It reacts to a
//! path at most once per "half RTT" (40 µs) so that one burst of marks counts once.
//!
//! **ECN capability at the edge.** Clove works whatever TCP the guest runs: its vSwitch sets ECT on the outer
//! header of every packet it sends, and the receiving vSwitch reflects CE marks to the sender and strips them
//! before the guest sees them (Clove paper, recalled, not re-read here; [LB] sidesteps the question by running
//! DCTCP). dclb models this with [`EdgeBalancer::sets_ect`] (`edge_ect`, default on): every data packet the host
//! sends is ECN-capable, the receiving host echoes CE on the ACK (ECE) for any TCP flow, Clove reads it in
//! `on_ack`, and a NewReno sender ignores ECE (only DCTCP reduces its window on it), which stands for the
//! receiving vSwitch hiding CE from a guest that did not negotiate ECN. Switches mark at the usual threshold
//! (`topology.ecn_k_*`, 65 full-size packets at 10 Gbps by default; host NICs do not mark). With
//! `edge_ect = false` only DCTCP flows are ECN-capable, and under NewReno Clove sees no mark at all: it then
//! degenerates to weighted round robin over fixed equal weights.
//!
//! **Choices where the paper is vague, or where dclb departs from the public code.**
//! * Weights are kept per destination **leaf** (a path is a (destination leaf, uplink) pair, as in [LB],
//!   which gives each (destination leaf, spine) pair a path id), so every flow to a rack shares what any of
//!   them learnt. All usable paths start with weight 1.
//! * Path choice per flowlet: `pick = "wrr"` (default) is weighted round robin, as the Clove paper describes
//!   it and as MDTLB and TAM summarise it ("per-flowlet weighted round robin"). dclb uses the smooth form:
//!   each usable path accumulates its weight, the largest accumulator wins (ties broken at random, so hosts
//!   do not start in lockstep) and pays back the total. `pick = "random"` draws a path with probability
//!   proportional to its weight, as the [LB] ns-3 code does.
//! * Who receives the removed weight: `redistribute = "all"` (default, [LB]'s `DisToUncongestedPath=false`)
//!   gives it to every other usable path. `"uncongested"` gives it only to paths without an ECN reaction in
//!   the last half RTT, and keeps the weight where it was if there is none. This is the intended meaning of
//!   [LB]'s `DisToUncongestedPath`, whose public code inverts the test (it picks the paths marked *within*
//!   the last half RTT); dclb implements the intent, not the bug.
//! * Weight recovery is not settled by the sources (the paper's rule was not verified; [LB] has none), so it
//!   is the `recovery` option:
//!   - `"none"` (default): weights move only on ECN echoes, as in [LB]. Because the total is conserved, a
//!     path that lost weight regains it exactly when the other paths get marked, i.e. when load grows
//!     enough for the extra capacity to matter; in an asymmetric fabric the slow path's low weight persists,
//!     which is the point. It is also the only behaviour a public implementation shows.
//!   - `"decay"`: every destination's weights relax exponentially towards equal shares of their total, with
//!     time constant `recovery_us`.
//!   - `"reset"`: a destination's weights return to equal shares once `recovery_us` passes without an ECN
//!     reaction towards it.
//!
//!   `recovery_us` defaults to 5,000 µs, ten flowlet timeouts: long against the 40 µs reaction limit and one
//!   flowlet, so recovery does not undo fresh congestion signals (a dclb choice; no source gives a value).
//! * ACKs are hashed by the switches (`ack_routing = "ecmp"`, as in [LB]); with `"edge"` the receiving host's
//!   Clove routes them in acklets (the flowlet timeout splits them), each by the weighted round robin towards
//!   the sender's leaf, moved at once when its ACKs are lost ([`super::ackpath`]). The weights see no
//!   blackhole (it returns no ECN), so acklets and flowlets alike can be drawn onto one.
//! * The flowlet table ([`FlowTable`]) is per flow, with exact timestamps; a gap of at least
//!   `flowlet_timeout_us` starts a new flowlet. Entries are dropped when the flow is fully acknowledged.
//!
//! **Defaults.** Flowlet timeout 500 µs ([LB] driver `cloveFlowletTimeout=500` and README; the class default
//! is 40 µs and the constructor's 200 µs); reaction limit 40 µs ([LB] `HalfRTT`); weight cut 1/3 ([Clove]:
//! ×2/3; the code writes 0.67/0.33); redistribution to all other paths ([LB]); weighted round robin
//! (paper); recovery none ([LB]); ECT set at the edge (paper).

use super::ackpath::{AckLegs, AckRouting, AckView};
use super::flowtable::{Clock, FlowTable, Timeout};
use super::params::{param_choice, scheme_params, LB_FABRIC_RTT_US};
use super::scheme::{reflect_path_and_class, scheme_counters, CounterReport, Placement, SchemeSpec};
use super::{BuildCx, EdgeBalancer, EdgeCx, FlowView, Installed, PacketMut, Params};
use crate::fabric::FabricFacts;
use crate::ids::{HostId, LeafId};
use crate::packet::{Packet, NO_PATH};
use crate::units::Time;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "clove",
    placement: Placement::Edge,
    granularity: "flowlet",
    summary: "Clove-ECN: host flowlets on weighted round robin; ECN echoes move weight off marked paths",
    params: CloveParams::SPECS,
    install,
    reflect: reflect_path_and_class,
};

fn install(cx: &BuildCx, p: &Params) -> Installed {
    let p = CloveParams::from_params(p);
    let edges = cx.facts.host_ids().map(|h| Box::new(Clove::new(p, cx.facts, h)) as Box<dyn EdgeBalancer>).collect();
    Installed::Edges(edges)
}

scheme_params! {
    /// Clove-ECN's parameters.
    pub struct CloveParams {
        /// a gap of at least this between a flow's packets starts a new flowlet
        #[source = "[LB] driver cloveFlowletTimeout=500, README"]
        #[rtt_us = LB_FABRIC_RTT_US]
        flowlet_timeout_us: Time = 500.0,
        /// react to ECN on a path at most once per this interval (half RTT)
        #[source = "[LB] Ipv4Clove HalfRTT"]
        #[rtt_us = LB_FABRIC_RTT_US]
        react_gap_us: Time = 40.0,
        /// fraction of a marked path's weight moved to other paths
        #[source = "[Clove] (x 2/3); [LB] 0.67/0.33"]
        weight_cut: f64 in 0.0..=1.0 = 1.0 / 3.0,
        /// who receives the removed weight: every other path, or those without an ECN reaction in the last
        /// react_gap
        #[source = "[LB] DisToUncongestedPath=false; 'uncongested' = its intent, bug fixed"]
        redistribute: Redistribute = Redistribute::All,
        /// flowlet path choice: weighted round robin (paper) or weighted random ([LB])
        #[source = "Clove paper; [LB] Ipv4Clove"]
        pick: Pick = Pick::Wrr,
        /// how weights return to equal: never, exponential decay, or reset after a quiet period
        #[source = "[LB] (none); dclb options"]
        recovery: Recovery = Recovery::None,
        /// time constant of 'decay', quiet period of 'reset'
        #[source = "dclb choice (10 flowlet timeouts)"]
        #[rtt_us = LB_FABRIC_RTT_US]
        recovery_us: Time = 5000.0,
        /// the host makes every data packet it sends ECN-capable, whatever the guest's TCP (the vSwitch's
        /// outer header); off: only DCTCP flows' packets can be marked
        #[source = "Clove paper (vSwitch sets ECT, hides CE from the guest)"]
        edge_ect: bool = true,
        /// who routes the ACKs this host sends for the flows it receives: the switches' hash ([LB]), or this
        /// host's Clove, in acklets split by the flowlet timeout, each by its weights towards the data sender's
        /// leaf (lb/ackpath.rs)
        #[source = "[LB] (ACKs by ECMP); 'edge': dclb's reading of the receiving vSwitch"]
        ack_routing: AckRouting = AckRouting::Ecmp,
    }
}

param_choice! {
    /// Who receives the weight cut from a marked path.
    pub enum Redistribute {
        All = "all",
        Uncongested = "uncongested",
    }
}

param_choice! {
    /// How a new flowlet picks its path from the weights.
    pub enum Pick {
        Wrr = "wrr",
        Random = "random",
    }
}

param_choice! {
    /// How weights return to equal shares.
    pub enum Recovery {
        None = "none",
        Decay = "decay",
        Reset = "reset",
    }
}

/// The Clove-ECN edge balancer of one host.
pub struct Clove {
    cfg: CloveParams,
    my_leaf: LeafId,
    uplinks: u32,
    /// `weights[dst_leaf * uplinks + uplink]`; 0 for uplinks that cannot reach the leaf.
    weights: Vec<f64>,
    /// Smooth weighted round robin accumulators, same layout.
    wrr: Vec<f64>,
    /// Last ECN reaction per path, `Time::MAX` if none.
    last_ecn: Vec<Time>,
    /// Per destination leaf: when the weights were last relaxed (decay) and last cut (reset).
    relaxed_at: Vec<Time>,
    last_reaction: Vec<Time>,
    /// The path of each flow's current flowlet.
    flowlets: FlowTable<(), u16>,
    /// The ACK legs (acklets) of the flows this host receives (`ack_routing = "edge"`).
    acks: AckLegs,
    counters: CloveCounters,
}

scheme_counters! {
    /// What one host's Clove did.
    #[scheme = SPEC]
    pub struct CloveCounters {
        /// flowlets started (new flows included)
        flowlets,
    }
}

impl Clove {
    pub fn new(cfg: CloveParams, facts: &FabricFacts, host: HostId) -> Clove {
        let my_leaf = facts.leaf_of_host(host);
        let (nl, nu) = (facts.leaves, facts.uplinks);
        let mut weights = vec![0.0; (nl * nu) as usize];
        for d in facts.leaf_ids().filter(|&d| d != my_leaf) {
            for u in 0..nu {
                if facts.path_delay(my_leaf, u, d) != Time::MAX {
                    weights[d.index() * nu as usize + u as usize] = 1.0;
                }
            }
        }
        Clove {
            cfg,
            my_leaf,
            uplinks: nu,
            wrr: vec![0.0; weights.len()],
            last_ecn: vec![Time::MAX; weights.len()],
            weights,
            relaxed_at: vec![Time::ZERO; nl as usize],
            last_reaction: vec![Time::MAX; nl as usize],
            flowlets: FlowTable::exact(Timeout::AtLeast(cfg.flowlet_timeout_us), Clock::Timestamp),
            acks: AckLegs::new(Some(cfg.flowlet_timeout_us), Some(cfg.flowlet_timeout_us)),
            counters: CloveCounters::default(),
        }
    }

    fn range(&self, dst_leaf: LeafId) -> std::ops::Range<usize> {
        let a = dst_leaf.index() * self.uplinks as usize;
        a..a + self.uplinks as usize
    }

    /// Current weights towards `dst_leaf`, one per uplink (recovery applied up to `now`).
    pub fn weights(&mut self, dst_leaf: LeafId, now: Time) -> &[f64] {
        self.recover(dst_leaf, now);
        &self.weights[self.range(dst_leaf)]
    }

    /// Applies the recovery option to the weights towards `dst_leaf` up to `now`.
    fn recover(&mut self, dst_leaf: LeafId, now: Time) {
        let r = self.range(dst_leaf);
        let d = dst_leaf.index();
        let w = &mut self.weights[r];
        let total: f64 = w.iter().sum();
        // A zero period would divide by zero; 1 ps is as good as instant.
        let period = self.cfg.recovery_us.max(Time(1));
        match self.cfg.recovery {
            Recovery::None => {}
            Recovery::Decay => {
                let at = self.relaxed_at[d];
                if now > at {
                    let k = (-((now.0 - at.0) as f64) / period.0 as f64).exp();
                    let usable = w.iter().filter(|&&x| x > 0.0).count().max(1);
                    let share = total / usable as f64;
                    for x in w.iter_mut().filter(|x| **x > 0.0) {
                        *x = share + (*x - share) * k;
                    }
                    self.relaxed_at[d] = now;
                }
            }
            Recovery::Reset => {
                let last = self.last_reaction[d];
                if last != Time::MAX && now.saturating_sub(last) >= period {
                    let usable = w.iter().filter(|&&x| x > 0.0).count().max(1);
                    let share = total / usable as f64;
                    for x in w.iter_mut().filter(|x| **x > 0.0) {
                        *x = share;
                    }
                    self.last_reaction[d] = Time::MAX;
                }
            }
        }
    }

    /// Reacts to an ECN echo on `path` towards `dst_leaf`: cut its weight, give the cut to the others.
    fn on_ecn(&mut self, dst_leaf: LeafId, path: u16, now: Time) {
        if path as u32 >= self.uplinks || dst_leaf == self.my_leaf {
            return;
        }
        self.recover(dst_leaf, now);
        let base = self.range(dst_leaf).start;
        let i = base + path as usize;
        let gap = self.cfg.react_gap_us;
        let last = self.last_ecn[i];
        if last != Time::MAX && now.saturating_sub(last) < gap {
            return;
        }
        self.last_ecn[i] = now;
        if self.weights[i] <= 0.0 {
            return;
        }
        let recent = |t: Time| t != Time::MAX && now.saturating_sub(t) < gap;
        let only_calm = self.cfg.redistribute == Redistribute::Uncongested;
        let is_recipient = |j: usize, w: &[f64], l: &[Time]| j != i && w[j] > 0.0 && !(only_calm && recent(l[j]));
        let k = (base..base + self.uplinks as usize).filter(|&j| is_recipient(j, &self.weights, &self.last_ecn)).count();
        if k == 0 {
            return;
        }
        let moved = self.weights[i] * self.cfg.weight_cut;
        self.weights[i] -= moved;
        for j in base..base + self.uplinks as usize {
            if is_recipient(j, &self.weights, &self.last_ecn) {
                self.weights[j] += moved / k as f64;
            }
        }
        self.last_reaction[dst_leaf.index()] = now;
    }

    /// Picks a path for a new flowlet towards `dst_leaf` among `paths`.
    fn pick(&mut self, cx: &mut EdgeCx, dst_leaf: LeafId, paths: &[u16]) -> u16 {
        self.recover(dst_leaf, cx.now);
        let base = self.range(dst_leaf).start;
        let total: f64 = paths.iter().map(|&p| self.weights[base + p as usize]).sum();
        if total.is_nan() || total <= 0.0 {
            return paths[cx.rng.below(paths.len())];
        }
        if self.cfg.pick == Pick::Random {
            let mut r = cx.rng.unit() * total;
            for &p in paths {
                r -= self.weights[base + p as usize];
                if r < 0.0 {
                    return p;
                }
            }
            return *paths.last().unwrap();
        }
        // Smooth weighted round robin.
        let mut best = paths[0];
        let mut best_v = f64::NEG_INFINITY;
        let mut ties = 0usize;
        for &p in paths {
            let j = base + p as usize;
            self.wrr[j] += self.weights[j];
            let v = self.wrr[j];
            if v > best_v {
                best_v = v;
                best = p;
                ties = 1;
            } else if v == best_v {
                ties += 1;
                if cx.rng.below(ties) == 0 {
                    best = p;
                }
            }
        }
        self.wrr[base + best as usize] -= total;
        best
    }
}

impl EdgeBalancer for Clove {
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, _pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        let (key, now) = (flow.flow.key(), cx.now);
        let current = self.flowlets.live(key, now).map(|f| f.port).filter(|p| paths.contains(p));
        let path = match current {
            Some(p) => p,
            None => {
                self.counters.flowlets += 1;
                let dst_leaf = cx.facts.leaf_of_host(flow.dst);
                self.pick(cx, dst_leaf, paths)
            }
        };
        self.flowlets.record(key, path, now);
        path
    }

    fn on_ack(&mut self, cx: &mut EdgeCx, flow: &FlowView, ack: &Packet) {
        if ack.ecn.ece && ack.lb.echo_path != NO_PATH {
            self.on_ecn(cx.facts.leaf_of_host(ack.src), ack.lb.echo_path, cx.now);
        }
        if flow.acked >= flow.size {
            self.flowlets.remove(flow.flow.key());
        }
    }

    fn sets_ect(&self) -> bool {
        self.cfg.edge_ect
    }

    fn routes_acks(&self) -> bool {
        self.cfg.ack_routing == AckRouting::Edge
    }

    /// ACKs go in acklets, each taking the next path of the weighted round robin towards the data sender's
    /// leaf (the one its flowlets use), avoiding the path of an acklet whose ACKs were lost. Clove's weights
    /// move only on ECN, so a lost acklet changes no weight.
    fn choose_ack_path(&mut self, cx: &mut EdgeCx, ack: &AckView, paths: &[u16]) -> u16 {
        let (now, dl) = (cx.now, cx.facts.leaf_of_host(ack.to));
        let mut acks = std::mem::replace(&mut self.acks, AckLegs::new(None, None));
        let p = acks.route(now, ack, paths, |_| false, |start| match start.avoid() {
            Some(on) if paths.len() > 1 => {
                let others: Vec<u16> = paths.iter().copied().filter(|&p| p != on).collect();
                self.pick(cx, dl, &others)
            }
            _ => self.pick(cx, dl, paths),
        });
        self.acks = acks;
        p
    }

    fn state_bytes(&self) -> usize {
        self.acks.state_bytes()
            + std::mem::size_of::<Self>()
            + self.weights.len() * (8 + 8 + 8)
            + self.relaxed_at.len() * 16
            + self.flowlets.state_bytes()
    }

    fn counters(&self) -> CounterReport {
        self.counters.report()
    }
}
