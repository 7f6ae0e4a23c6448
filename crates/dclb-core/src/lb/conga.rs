//! CONGA: congestion-aware flowlet switching at the source leaf, driven by leaf-to-leaf feedback that rides
//! in the packets themselves (Alizadeh et al., SIGCOMM'14, [CONGA]; public code: [LB], [CW]).
//!
//! **Rule.** Every fabric egress port (each leaf uplink, each spine downlink) runs a Discounting Rate
//! Estimator: a byte register `X` that grows by the wire size of every packet the port finishes sending and
//! shrinks by the factor `1 − α` every `T_dre`, so that a steady rate `R` holds `X` near `R·τ` with
//! `τ = T_dre/α`. Its congestion metric is `X` over the port's capacity in a time constant, `X / (C·τ)`,
//! quantised to `Q` bits. A packet that leaves its source leaf for another leaf carries an overlay header:
//! `LBTag`, the uplink it took, and `CE`, the largest metric among the egress ports it crosses (the source
//! uplink writes it, the spine downlink can only raise it). The destination leaf files `CE` under
//! Congestion-From-Leaf[source leaf][LBTag]. Every packet going the other way (data or ACK, towards that
//! source leaf) carries one of those entries back as (`FB_LBTag`, `FB_Metric`), and the leaf it reaches
//! files it under Congestion-To-Leaf[destination leaf][FB_LBTag]. The source leaf splits each flow into
//! flowlets (a new flowlet starts after an idle gap longer than `T_fl`); a new flowlet goes to the uplink
//! with the smallest `max(local uplink metric, Congestion-To-Leaf[dst leaf][uplink])`. Packets within a
//! flowlet keep their uplink.
//!
//! **The DRE is the ports'.** CONGA asks, when installed, for a rate estimator on every fabric-facing port
//! ([`SwitchBalancer::rate_estimator`]; `crate::dre`), with `T_dre` and `α` from its parameters, and reads
//! it through the port view: `cx.ports.dre(port)` for a new flowlet's choice, and
//! `cx.ports.dre_at_departure(port)` for the `CE` stamp. A FIFO port knows when a packet will finish
//! sending as soon as it admits it, so the stamp (the register just after the packet's own departure) is
//! written in `on_enqueue`, and CONGA needs no departure hook: its switch's ports are lazily drained. The
//! port counts each packet, and the decays, in the order a departure hook and a timer would, so the tables
//! are bit-identical to a DRE updated at each departure (`port.rs`, `tests/lazy_ports.rs`).
//!
//! **Choices where the paper leaves room.**
//! * *Header.* The four overlay fields live in two of the packet's feedback slots, so a packet carries the
//!   forward pair for its own path and one feedback pair for the reverse direction at the same time, as the
//!   paper's VXLAN header does: `fb[0]` = valid bit 31 | `LBTag` in bits 16-30 | `CE` in bits 0-7, and
//!   `fb[1]` = valid bit 31 | `FB_LBTag` in bits 16-30 | `FB_Metric` in bits 0-7. Tags get 15 bits instead of
//!   the paper's 4 so that fabrics with more than 16 uplinks work. The destination leaf clears both slots
//!   ("strips the overlay") before delivering to the host; hosts never echo them.
//! * *Which feedback rides on a packet.* Round robin over the uplink tags of the destination leaf's entries,
//!   preferring entries whose metric changed since they were last fed back: from the tag after the one sent
//!   last, the first changed entry in ring order is sent; if none has changed, the first entry present. An
//!   entry is present once a packet from that leaf with that tag has arrived and for `stale_us` after the
//!   last one; if none is present the feedback pair is marked invalid (the paper's null `FB_LBTag`).
//! * *Ties.* Among the uplinks of minimum cost, the uplink of the flow's previous (expired) flowlet is kept
//!   if it is one of them, so a flow moves only to a strictly better uplink; otherwise one is drawn
//!   uniformly (the paper's rule, [CONGA]).
//! * *Flowlet table.* Exact per-5-tuple entries with timestamps ([`FlowTable`]), as both public simulators
//!   do, rather than the hardware's hashed table with age bits: a packet continues its flowlet when
//!   `now − last_seen ≤ T_fl`. ACKs are flows of their own (reversed 5-tuple). Entries idle longer than
//!   `max(stale_us, 2·T_fl)` are erased during the periodic sweep; by then the remote metrics they were
//!   chosen against have aged out too, so only the tie preference for the old uplink is forgotten.
//! * *Metric aging* (the paper only says stale metrics decay): a Congestion-To-Leaf entry not refreshed for
//!   `stale_us` counts as 0, and a Congestion-From-Leaf entry that old is no longer fed back. Staleness is
//!   checked exactly when an entry is read, instead of by a sweep every `aging/4` as in the Hermes authors'
//!   code ([LB]), so an entry expires at `stale_us` rather than somewhere in `[aging, 1.25·aging]`.
//! * *Quantisation* uses each port's own rate `C` (a slowed link saturates at its own capacity, as [LB] does
//!   with `congaAwareAsym`) and is clamped to `2^Q − 1`, to fit the paper's Q-bit field; neither public
//!   simulator clamps.
//! * *Spines* with parallel links down to a leaf pick one by 5-tuple hash (ECMP), as [LB] does; the paper's
//!   LBTag names only the source uplink.
//! * Packets between hosts of the same leaf never enter the fabric and carry no header.
//! * `feedback = false` is an ablation, not CONGA: destination leaves send no feedback and the source leaf
//!   balances on its local uplink metrics alone (the local-only design the CONGA paper argues against).
//!
//! **Defaults and sources.** `Q = 3`, `τ = 160 µs`, `T_fl = 500 µs`: the paper's values ([CONGA],
//! via the replication report [CONGA-rep]; the [LB] driver also uses `T_fl = 500 µs` and `Q = 3`).
//! `α = 0.2` as in both [LB] and [CW]; with `τ = 160 µs` that gives `T_dre = α·τ = 32 µs` (the [LB] driver uses
//! 30 µs with α = 0.2, i.e. τ = 150 µs). `stale_us` 10 ms, the [LB] metric aging ([CW] uses 500 µs).
//!
//! The ranges of `metric_bits` (1..=8), `dre_alpha` ([0.001, 1]) and `dre_tau_us` (at least 1 µs) are checked
//! when the scenario is read; `T_dre` is at least 100 ns.

use super::ecmp::flow_hash_index;
use super::flowtable::{Clock, FlowTable, Timeout};
use super::params::{scheme_params, LB_FABRIC_RTT_US};
use super::scheme::{reflect_path_and_class, Installed, Placement, SchemeSpec};
use super::{Decision, DreRequest, MarkablePacket, PacketMut, SwitchBalancer, SwitchCx, SwitchInfo, SwitchKind};
use crate::dre::DreConfig;
pub use crate::dre::Dre;
use crate::fabric::{FabricFacts, PortRole};
use crate::ids::{LeafId, PortId};
use crate::units::Time;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "conga",
    placement: Placement::Switch,
    granularity: "flowlet",
    summary: "flowlets to the uplink with the least max(local DRE, remote path metric); leaf-to-leaf feedback piggybacked on packets",
    params: CongaParams::SPECS,
    install: |cx, p| {
        let p = CongaParams::from_params(p);
        let switches = cx.switches.iter().map(|s| Box::new(Conga::new(cx.facts, s, p)) as Box<dyn SwitchBalancer>).collect();
        Installed::Switches(switches)
    },
    reflect: reflect_path_and_class,
};

scheme_params! {
    /// CONGA's parameters.
    pub struct CongaParams {
        /// idle gap after which a flow's next packet starts a new flowlet (T_fl)
        #[source = "[CONGA] paper via [CONGA-rep]; [LB] driver 500 us"]
        #[rtt_us = LB_FABRIC_RTT_US]
        flowlet_timeout_us: Time = 500.0,
        /// Q: bits of the quantised congestion metric (metric in 0..2^Q-1)
        #[source = "[CONGA] paper; [LB] m_Q = 3; [CW] 3"]
        metric_bits: u32 in 1..=8 = 3,
        /// DRE time constant tau = T_dre / alpha
        #[source = "[CONGA] paper via [CONGA-rep]"]
        dre_tau_us: Time in 1.0..=1e7 = 160.0,
        /// DRE decay factor alpha; X <- X(1-alpha) every T_dre = alpha * tau
        #[source = "[LB] and [CW] alpha = 0.2"]
        dre_alpha: f64 in 0.001..=1.0 = 0.2,
        /// a remote metric not refreshed for this long counts as 0 and is no longer fed back
        #[source = "[LB] 10 ms aging (the paper only says stale metrics decay)"]
        stale_us: Time = 10000.0,
        /// piggyback leaf-to-leaf feedback; false is an ablation that balances on local uplink DREs only
        #[source = "dclb ablation (CONGA always feeds back)"]
        feedback: bool = true,
    }
}

impl CongaParams {
    /// The decay period `T_dre = α·τ` (at least 100 ns).
    pub fn dre_period(&self) -> Time {
        Time(((self.dre_tau_us.0 as f64 * self.dre_alpha).round() as u64).max(100_000))
    }
}

const VALID: u32 = 1 << 31;

/// Packs a (tag, metric) pair into a feedback slot with the valid bit set.
#[inline]
fn pack(tag: u32, metric: u8) -> u32 {
    VALID | (tag & 0x7fff) << 16 | metric as u32
}

/// The (tag, metric) of a slot, or `None` if its valid bit is clear.
#[inline]
fn unpack(slot: u32) -> Option<(u32, u8)> {
    (slot & VALID != 0).then_some(((slot >> 16) & 0x7fff, (slot & 0xff) as u8))
}

/// Congestion-To-Leaf entry: the path metric the destination leaf last fed back.
#[derive(Copy, Clone, Debug, Default)]
struct Remote {
    valid: bool,
    metric: u8,
    updated: Time,
}

/// Congestion-From-Leaf entry: a metric measured on arrival, waiting to be fed back.
#[derive(Copy, Clone, Debug, Default)]
struct Pending {
    valid: bool,
    changed: bool,
    metric: u8,
    updated: Time,
}

/// CONGA at one switch. Leaves run the source and destination logic; spines only estimate and mark.
pub struct Conga {
    cfg: CongaParams,
    kind: SwitchKind,
    salt: u64,
    uplinks: usize,
    /// Ports of this switch: the DRE registers its ports keep for it (`state_bytes`).
    n_ports: usize,
    /// `cfg.dre_period()`, worked out once: the DRE's period and the flowlet sweep's timer.
    period: Time,
    /// `to_leaf[dst_leaf * uplinks + uplink]` (leaves only).
    to_leaf: Vec<Remote>,
    /// `from_leaf[src_leaf * uplinks + tag]` (leaves only).
    from_leaf: Vec<Pending>,
    /// Per remote leaf: the tag fed back last.
    rr: Vec<u32>,
    /// Flowlets of the flows this leaf sends into the fabric, kept after they end for the tie rule.
    flowlets: FlowTable,
    next_sweep: Time,
}

impl Conga {
    pub fn new(facts: &FabricFacts, me: &SwitchInfo, cfg: CongaParams) -> Conga {
        let leaves = facts.leaves as usize;
        let uplinks = facts.uplinks as usize;
        let (n_ports, tables) = match me.kind {
            SwitchKind::Leaf => (facts.hosts_per_leaf as usize + uplinks, leaves * uplinks),
            SwitchKind::Spine => ((facts.leaves * facts.links_per_pair) as usize, 0),
        };
        let rr_len = if me.kind == SwitchKind::Leaf { leaves } else { 0 };
        Conga {
            cfg,
            kind: me.kind,
            salt: me.salt,
            uplinks,
            n_ports,
            period: cfg.dre_period(),
            to_leaf: vec![Remote::default(); tables],
            from_leaf: vec![Pending::default(); tables],
            rr: vec![0; rr_len],
            flowlets: FlowTable::exact(Timeout::Over(cfg.flowlet_timeout_us), Clock::Timestamp),
            next_sweep: Time::ZERO,
        }
    }

    /// The quantised DRE metric of one of this switch's ports now.
    pub fn port_metric(&self, cx: &SwitchCx, port: PortId) -> u8 {
        cx.ports.dre(port).metric(cx.ports.rate(port), self.cfg.dre_tau_us, self.cfg.metric_bits)
    }

    /// The DRE register of one of this switch's fabric-facing ports now (for tests and inspection).
    pub fn port_dre(&self, cx: &SwitchCx, port: PortId) -> Dre {
        cx.ports.dre(port)
    }

    /// Congestion-To-Leaf[dst_leaf][uplink] as it would be used now (0 when unknown or aged out).
    pub fn remote_metric(&self, now: Time, dst_leaf: LeafId, uplink: u32) -> u8 {
        let e = &self.to_leaf[dst_leaf.index() * self.uplinks + uplink as usize];
        if e.valid && now.saturating_sub(e.updated) <= self.cfg.stale_us {
            e.metric
        } else {
            0
        }
    }

    fn cost(&self, cx: &SwitchCx, dst_leaf: LeafId, port: PortId) -> u8 {
        let local = self.port_metric(cx, port);
        let remote = match cx.ports.uplink_index(port) {
            Some(u) => self.remote_metric(cx.now, dst_leaf, u),
            None => 0,
        };
        local.max(remote)
    }

    /// The uplink for a new flowlet: least cost, keeping `previous` on a tie, else uniform among the best.
    fn pick_uplink(&self, cx: &mut SwitchCx, dst_leaf: LeafId, candidates: &[PortId], previous: Option<PortId>) -> PortId {
        let mut best = u8::MAX;
        let mut ties = 0usize;
        for &p in candidates {
            let c = self.cost(cx, dst_leaf, p);
            if c < best {
                best = c;
                ties = 1;
            } else if c == best {
                ties += 1;
            }
        }
        if let Some(old) = previous {
            if candidates.contains(&old) && self.cost(cx, dst_leaf, old) == best {
                return old;
            }
        }
        let mut k = if ties > 1 { cx.rng.below(ties) } else { 0 };
        for &p in candidates {
            if self.cost(cx, dst_leaf, p) == best {
                if k == 0 {
                    return p;
                }
                k -= 1;
            }
        }
        unreachable!("a minimum-cost candidate exists")
    }

    /// One Congestion-From-Leaf entry for `leaf` to piggyback: the first changed entry after the one sent
    /// last, else the next present one.
    fn take_feedback(&mut self, now: Time, leaf: LeafId) -> Option<(u32, u8)> {
        let u = self.uplinks;
        let base = leaf.index() * u;
        let start = self.rr[leaf.index()] as usize;
        let mut fallback = None;
        let mut chosen = None;
        for i in 1..=u {
            let t = (start + i) % u;
            let e = &self.from_leaf[base + t];
            if !e.valid || now.saturating_sub(e.updated) > self.cfg.stale_us {
                continue;
            }
            if e.changed {
                chosen = Some(t);
                break;
            }
            if fallback.is_none() {
                fallback = Some(t);
            }
        }
        let t = chosen.or(fallback)?;
        self.rr[leaf.index()] = t as u32;
        let e = &mut self.from_leaf[base + t];
        e.changed = false;
        Some((t as u32, e.metric))
    }

    fn purge_after(&self) -> Time {
        self.cfg.stale_us.max(self.cfg.flowlet_timeout_us.mul(2)).max(Time::from_us(1))
    }
}

impl SwitchBalancer for Conga {
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        let dst_leaf = cx.facts.leaf_of_host(pkt.dst);
        if cx.me.as_leaf().is_none_or(|me| me == dst_leaf) {
            // Spines: forced hop, or ECMP over parallel links. Destination leaf: the host port.
            let i = if candidates.len() > 1 { flow_hash_index(pkt, self.salt, candidates.len()) } else { 0 };
            return Decision::Forward(candidates[i]);
        }
        // Source leaf.
        let now = cx.now;
        let key = pkt.five_tuple();
        let previous = self.flowlets.get(key).map(|e| (e.port, self.flowlets.is_live(e, now)));
        let port = match previous {
            Some((p, true)) if candidates.contains(&p) => p,
            _ => self.pick_uplink(cx, dst_leaf, candidates, previous.map(|(p, _)| p)),
        };
        self.flowlets.record(key, port, now);
        let tag = cx.ports.uplink_index(port).expect("a leaf's fabric candidates are uplinks");
        pkt.lb_mut().fb[0] = pack(tag, 0);
        pkt.lb_mut().fb[1] = if self.cfg.feedback { self.take_feedback(now, dst_leaf).map_or(0, |(t, m)| pack(t, m)) } else { 0 };
        Decision::Forward(port)
    }

    fn on_arrival(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut) {
        let Some(me) = cx.me.as_leaf() else { return };
        if cx.facts.leaf_of_host(pkt.dst) != me {
            return;
        }
        let src_leaf = cx.facts.leaf_of_host(pkt.src);
        if src_leaf == me {
            return;
        }
        // Destination leaf: file the path metric, take the feedback, strip the overlay.
        let base = src_leaf.index() * self.uplinks;
        if let Some((tag, ce)) = unpack(pkt.lb.fb[0]) {
            if (tag as usize) < self.uplinks {
                self.from_leaf[base + tag as usize] = Pending { valid: true, changed: true, metric: ce, updated: cx.now };
            }
        }
        if let Some((tag, metric)) = unpack(pkt.lb.fb[1]) {
            if (tag as usize) < self.uplinks {
                self.to_leaf[base + tag as usize] = Remote { valid: true, metric, updated: cx.now };
            }
        }
        pkt.lb_mut().fb[0] = 0;
        pkt.lb_mut().fb[1] = 0;
    }

    /// The CE stamp: the packet's metric is raised to what this port's DRE reads just after the packet
    /// leaves (the port knows its departure at admission).
    fn on_enqueue(&mut self, cx: &mut SwitchCx, pkt: &mut MarkablePacket, port: PortId) {
        let role = cx.ports.role(port);
        if role != PortRole::LeafUp && role != PortRole::SpineDown {
            return;
        }
        if let Some((tag, ce)) = unpack(pkt.lb.fb[0]) {
            let m = cx.ports.dre_at_departure(port).metric(cx.ports.rate(port), self.cfg.dre_tau_us, self.cfg.metric_bits);
            if m > ce {
                pkt.lb_mut().fb[0] = pack(tag, m);
            }
        }
    }

    fn rate_estimator(&self) -> Option<DreRequest> {
        Some(DreRequest { config: DreConfig { period: self.period, alpha: self.cfg.dre_alpha }, roles: &[PortRole::LeafUp, PortRole::SpineDown] })
    }

    fn on_timer(&mut self, cx: &mut SwitchCx) {
        if self.kind == SwitchKind::Leaf && cx.now >= self.next_sweep {
            let now = cx.now;
            let keep = self.purge_after();
            self.flowlets.forget(now, Timeout::Over(keep));
            self.next_sweep = now + Time(keep.0 / 4);
        }
    }

    fn timer_period(&self) -> Option<Time> {
        Some(self.period)
    }

    fn hooks(&self) -> super::Hooks {
        super::Hooks { arrival: true, enqueue: true, departure: false, choose_single: true }
    }

    fn state_bytes(&self) -> usize {
        self.n_ports * std::mem::size_of::<Dre>()
            + self.to_leaf.len() * std::mem::size_of::<Remote>()
            + self.from_leaf.len() * std::mem::size_of::<Pending>()
            + self.rr.len() * 4
            + self.flowlets.state_bytes()
    }
}
