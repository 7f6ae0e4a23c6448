//! Test benches for scheme authors: drive one balancer by hand on a real fabric, at chosen times, with
//! chosen queue lengths, and read what it decided. A behaviour test then reads as the scheme's rule
//! ("with these queues, this packet goes there"), not as set-up.
//!
//! ```
//! use dclb_core::config::Config;
//! use dclb_core::ids::{FlowId, HostId, LeafId};
//! use dclb_core::lb::testkit::SwitchBench;
//! use dclb_core::lb::{rps::Rps, Decision};
//! use dclb_core::packet::{Packet, PacketKind};
//!
//! let mut cfg = Config::default();
//! cfg.topology.leaves = 2;
//! let mut bench = SwitchBench::leaf(&cfg, LeafId(0));
//! let uplinks = bench.candidates_to_leaf(LeafId(1));
//! let mut pkt = Packet::new(PacketKind::Data, FlowId(0), HostId(0), bench.host_on_leaf(LeafId(1)));
//! let port = bench.forward(&mut Rps, &mut pkt, &uplinks);
//! assert!(uplinks.contains(&port));
//! ```
//!
//! Everything a hook returns or asks for stays on the bench for inspection: one-shot alarms in
//! [`SwitchBench::alarms`] / [`EdgeBench::alarms`], probes in [`EdgeBench::probes`]. Nothing is scheduled:
//! a bench has no event loop, the test is the clock ([`SwitchBench::at`]).

use super::{Alarms, Decision, EdgeBalancer, EdgeCx, FlowView, MarkablePacket, PacketMut, PortsView, ProbeRequest, SwitchBalancer, SwitchCx, SwitchInfo, SwitchPlace};
use crate::config::Config;
use crate::fabric::Fabric;
use crate::ids::{FlowId, HostId, LeafId, PortId, SpineId};
use crate::packet::{Packet, PacketKind};
use crate::rng::Rng;
use crate::units::Time;

/// One switch of a fabric built from a config, with its balancer's context at hand.
pub struct SwitchBench {
    pub fabric: Fabric,
    pub me: SwitchInfo,
    pub rng: Rng,
    pub now: Time,
    /// Alarms the balancer asked for, in the order it asked.
    pub alarms: Alarms,
    /// The ingress port hooks see ([`SwitchCx::ingress`]); set it with [`SwitchBench::via`].
    pub ingress: Option<PortId>,
}

impl SwitchBench {
    fn new(fabric: Fabric, me: SwitchInfo) -> SwitchBench {
        SwitchBench { fabric, me, rng: Rng::new(11), now: Time::ZERO, alarms: Vec::new(), ingress: None }
    }
    /// Leaf `leaf` of the fabric `cfg` describes.
    pub fn leaf(cfg: &Config, leaf: LeafId) -> SwitchBench {
        let fabric = Fabric::build(&cfg.topology, &cfg.transport);
        let me = SwitchInfo::leaf(&fabric.facts, leaf, 0);
        Self::new(fabric, me)
    }
    /// Spine `spine` of the fabric `cfg` describes.
    pub fn spine(cfg: &Config, spine: SpineId) -> SwitchBench {
        let fabric = Fabric::build(&cfg.topology, &cfg.transport);
        let me = SwitchInfo::spine(&fabric.facts, spine, 0);
        Self::new(fabric, me)
    }
    /// Sets this switch's hash salt (the engine derives one per switch from the seed).
    pub fn with_salt(mut self, salt: u64) -> SwitchBench {
        self.me.salt = salt;
        self
    }
    /// Sets the balancer's random stream.
    pub fn with_rng(mut self, seed: u64) -> SwitchBench {
        self.rng = Rng::new(seed);
        self
    }
    /// Moves the clock (hooks called afterwards see `now`).
    pub fn at(&mut self, now: Time) -> &mut SwitchBench {
        self.now = now;
        self
    }
    /// Makes the next hooks see the packet as arrived through this switch's own port `port` (`None`: made
    /// here), as the engine does for `on_arrival` and `choose`.
    pub fn via(&mut self, port: Option<PortId>) -> &mut SwitchBench {
        self.ingress = port;
        self
    }
    /// The candidate ports routing offers at this switch towards `dst_leaf`.
    pub fn candidates_to_leaf(&self, dst_leaf: LeafId) -> Vec<PortId> {
        match self.me.place() {
            SwitchPlace::Leaf(leaf) => self.fabric.leaf_candidates(leaf, dst_leaf).to_vec(),
            SwitchPlace::Spine(spine) => self.fabric.spine_candidates(spine, dst_leaf).to_vec(),
        }
    }
    /// The first host of `leaf`.
    pub fn host_on_leaf(&self, leaf: LeafId) -> HostId {
        self.fabric.facts.host_on_leaf(leaf, 0)
    }
    /// Pretends `port` holds `bytes` in its queue (what queue-reading balancers see): the total only, not
    /// any priority level's ([`SwitchBench::queue_packet`] queues real packets at a level).
    pub fn set_queue_bytes(&mut self, port: PortId, bytes: u64) {
        self.fabric.port_mut(port).queued_bytes = bytes;
    }
    /// Queues a data packet of `wire` bytes at priority `level` on `port`, admitted as the engine admits it
    /// (drop-tail and marking on the port's total), so that the total and the per-level readings
    /// ([`PortsView::level_queue_bytes`]) both see it; the bench never serves it. Whether the port took it.
    pub fn queue_packet(&mut self, port: PortId, level: u8, wire: u32) -> bool {
        let mut p = Packet::new(PacketKind::Data, FlowId::NONE, HostId(0), HostId(0));
        (p.wire_bytes, p.priority) = (wire, level);
        let port = self.fabric.port_mut(port);
        // Arena ids matter only to a serialiser; the bench has none, so the position in the queue will do.
        let pid = port.queue_packets();
        port.admit(self.now, pid, &mut p).is_some()
    }
    pub fn queue_bytes(&self, port: PortId) -> u64 {
        self.fabric.port(port).queued_bytes
    }
    /// Gives this switch's ports the services `lb` asks for when installed (its rate estimators), once;
    /// every hook below does it first.
    pub fn install(&mut self, lb: &dyn SwitchBalancer) -> &mut SwitchBench {
        if let Some(req) = lb.rate_estimator() {
            if !self.fabric.ports_of(self.me.node).any(|p| self.fabric.port(p).rate_estimator().is_some()) {
                self.fabric.estimate_rates(self.me.node, req.roles, req.config);
            }
        }
        self
    }
    /// The context the engine would give the balancer now.
    pub fn cx(&mut self) -> SwitchCx<'_> {
        let n = self.fabric.node(self.me.node);
        SwitchCx { now: self.now, me: self.me, ports: PortsView::new(&self.fabric.ports, n.first_port, n.n_ports, self.now), facts: &self.fabric.facts, rng: &mut self.rng, alarms: &mut self.alarms, ingress: self.ingress }
    }
    pub fn choose(&mut self, lb: &mut dyn SwitchBalancer, pkt: &mut Packet, candidates: &[PortId]) -> Decision {
        self.install(lb);
        lb.choose(&mut self.cx(), &mut PacketMut::new(pkt), candidates)
    }
    /// The port chosen for `pkt`; panics if the balancer dropped it.
    pub fn forward(&mut self, lb: &mut dyn SwitchBalancer, pkt: &mut Packet, candidates: &[PortId]) -> PortId {
        match self.choose(lb, pkt, candidates) {
            Decision::Forward(p) => p,
            d => panic!("expected a forwarding decision, got {d:?}"),
        }
    }
    pub fn arrival(&mut self, lb: &mut dyn SwitchBalancer, pkt: &mut Packet) {
        self.install(lb);
        lb.on_arrival(&mut self.cx(), &mut PacketMut::new(pkt));
    }
    /// `pkt` joins `port`'s queue now: the port's rate estimator (if `lb` asked for one) counts it, and
    /// `on_enqueue` runs. The bench has no serialiser, so for the estimator the packet leaves at once (no
    /// earlier than the one before it); the queue itself is what [`SwitchBench::set_queue_bytes`] says.
    pub fn enqueue(&mut self, lb: &mut dyn SwitchBalancer, pkt: &mut Packet, port: PortId) {
        self.install(lb);
        if let Some(dre) = self.fabric.port_mut(port).rate_estimator_mut() {
            let at = self.now.max(dre.last_departure());
            dre.count(self.now, at, pkt.wire_bytes);
        }
        lb.on_enqueue(&mut self.cx(), &mut MarkablePacket::new(pkt), port);
    }
    /// `pkt` finishes serialisation on `port` now: `on_departure` runs (a rate estimator counts packets in
    /// [`SwitchBench::enqueue`]).
    pub fn departure(&mut self, lb: &mut dyn SwitchBalancer, pkt: &mut Packet, port: PortId) {
        self.install(lb);
        lb.on_departure(&mut self.cx(), &mut PacketMut::new(pkt), port);
    }
    pub fn timer(&mut self, lb: &mut dyn SwitchBalancer) {
        self.install(lb);
        lb.on_timer(&mut self.cx());
    }
    pub fn alarm(&mut self, lb: &mut dyn SwitchBalancer, token: u32) {
        self.install(lb);
        lb.on_alarm(&mut self.cx(), token);
    }
}

/// One host's edge of a fabric built from a config.
pub struct EdgeBench {
    pub fabric: Fabric,
    pub host: HostId,
    pub rng: Rng,
    pub now: Time,
    /// Probes the balancer asked to send, in order (cleared only by the test).
    pub probes: Vec<ProbeRequest>,
    /// Alarms the balancer asked for, in order.
    pub alarms: Alarms,
}

impl EdgeBench {
    pub fn new(cfg: &Config, host: HostId) -> EdgeBench {
        EdgeBench { fabric: Fabric::build(&cfg.topology, &cfg.transport), host, rng: Rng::new(11), now: Time::ZERO, probes: Vec::new(), alarms: Vec::new() }
    }
    pub fn with_rng(mut self, seed: u64) -> EdgeBench {
        self.rng = Rng::new(seed);
        self
    }
    pub fn at(&mut self, now: Time) -> &mut EdgeBench {
        self.now = now;
        self
    }
    /// Path tags from this host's leaf to `dst`'s leaf.
    pub fn paths_to(&self, dst: HostId) -> Vec<u16> {
        let f = &self.fabric.facts;
        self.fabric.paths(f.leaf_of_host(self.host), f.leaf_of_host(dst)).to_vec()
    }
    pub fn cx(&mut self) -> EdgeCx<'_> {
        EdgeCx { now: self.now, host: self.host, facts: &self.fabric.facts, rng: &mut self.rng, probes: &mut self.probes, alarms: &mut self.alarms }
    }
    pub fn choose_path(&mut self, lb: &mut dyn EdgeBalancer, flow: &FlowView, pkt: &mut Packet, paths: &[u16]) -> u16 {
        lb.choose_path(&mut self.cx(), flow, &mut PacketMut::new(pkt), paths)
    }
    pub fn ack(&mut self, lb: &mut dyn EdgeBalancer, flow: &FlowView, ack: &Packet) {
        lb.on_ack(&mut self.cx(), flow, ack);
    }
    pub fn probe_reply(&mut self, lb: &mut dyn EdgeBalancer, reply: &Packet) {
        lb.on_probe_reply(&mut self.cx(), reply);
    }
    pub fn timeout(&mut self, lb: &mut dyn EdgeBalancer, flow: &FlowView) {
        lb.on_timeout(&mut self.cx(), flow);
    }
    pub fn timer(&mut self, lb: &mut dyn EdgeBalancer) {
        lb.on_timer(&mut self.cx());
    }
    pub fn alarm(&mut self, lb: &mut dyn EdgeBalancer, token: u32) {
        lb.on_alarm(&mut self.cx(), token);
    }
}
