//! Load balancing: the interface every scheme implements, and the registry that names them.
//!
//! Two places decide paths in a leaf-spine fabric:
//!
//! * a **switch** with several next hops: the source leaf picks an uplink, a spine with parallel links picks
//!   one of them. A [`SwitchBalancer`] runs at every switch, spines included, and sees every packet on
//!   arrival, at enqueue and at departure even where there is a single candidate: CONGA's spines fold their
//!   load into a header field, TR's spines write their queue into ACKs.
//! * a **host edge** (Presto, Hermes, Clove, MDTLB): the sending host picks a path and writes it into the
//!   packet's path tag; switches then follow the tag ([`source_route::SourceRoute`]). An [`EdgeBalancer`]
//!   sees the host's own flows, the ACKs and probe replies that come back, and may send probes.
//!
//! A balancer sees only what that device would see: its own ports' live queues, static facts of the fabric
//! ([`FabricFacts`]), and the packet in hand with its [`LbHeader`](crate::packet::LbHeader). Anything about
//! remote state arrives in packets, with the delay that implies.
//!
//! Hooks default to no-ops (in the manner of smoltcp's congestion controllers), so a scheme implements only
//! what it uses. A scheme is one file plus one entry in [`registry::SCHEMES`].

pub mod clove;
pub mod conga;
pub mod drb;
pub mod drill;
pub mod ecmp;
pub mod hermes;
pub mod letflow;
pub mod params;
pub mod presto;
pub mod registry;
pub mod rps;
pub mod source_route;

use crate::fabric::{FabricFacts, Port, PortRole};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::units::Time;

pub use params::{ParamSpec, ParamValue, Params};
pub use registry::{find_scheme, SchemeSpec, SCHEMES};

/// Which switch a balancer instance runs on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SwitchKind {
    Leaf,
    Spine,
}

#[derive(Copy, Clone, Debug)]
pub struct SwitchInfo {
    /// Global node id.
    pub node: u32,
    pub kind: SwitchKind,
    /// Leaf number or spine number.
    pub index: u32,
    /// Per-switch hash salt (ECMP-style schemes use it to avoid polarisation).
    pub salt: u64,
}

/// A read-only view of one switch's own ports.
pub struct PortsView<'a> {
    ports: &'a [Port],
    first: u32,
}

impl<'a> PortsView<'a> {
    pub fn new(all: &'a [Port], first: u32, n: u32) -> PortsView<'a> {
        PortsView { ports: &all[first as usize..(first + n) as usize], first }
    }
    #[inline]
    pub fn get(&self, port: u32) -> &'a Port {
        &self.ports[(port - self.first) as usize]
    }
    pub fn queue_bytes(&self, port: u32) -> u64 {
        self.get(port).queued_bytes
    }
    pub fn queue_packets(&self, port: u32) -> u32 {
        self.get(port).queue_packets()
    }
    /// Time to drain this port's queue at its rate.
    pub fn queue_delay(&self, port: u32) -> Time {
        self.get(port).queue_delay()
    }
    pub fn role(&self, port: u32) -> PortRole {
        self.get(port).role
    }
    /// Uplink index of a leaf's uplink port (spine * links + link).
    pub fn uplink_index(&self, port: u32) -> Option<u32> {
        let p = self.get(port);
        (p.role == PortRole::LeafUp).then_some(p.slot)
    }
    pub fn first(&self) -> u32 {
        self.first
    }
    pub fn len(&self) -> u32 {
        self.ports.len() as u32
    }
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }
    /// All ports of this switch as (global id, port).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &'a Port)> {
        let first = self.first;
        self.ports.iter().enumerate().map(move |(i, p)| (first + i as u32, p))
    }
}

/// What a switch balancer may use when it runs.
pub struct SwitchCx<'a> {
    pub now: Time,
    pub me: SwitchInfo,
    pub ports: PortsView<'a>,
    pub facts: &'a FabricFacts,
    pub rng: &'a mut Rng,
}

/// Why a balancer dropped a packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The scheme judged the flow unable to meet its deadline.
    Deadline,
    /// Scheme-specific policy.
    Policy,
}

/// A forwarding decision.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Send on this port (one of the candidates).
    Forward(u32),
    /// Drop this packet.
    Drop(DropReason),
    /// Drop this packet and tell the source, in a packet, that the network gave up on its flow.
    Cancel(DropReason),
}

/// Which per-packet hooks a balancer implements. The simulation skips building a context for hooks a balancer
/// does not use (a pure speed matter: skipped hooks are the default no-ops). The default is all of them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hooks {
    pub arrival: bool,
    pub enqueue: bool,
    pub departure: bool,
}

impl Hooks {
    pub const ALL: Hooks = Hooks { arrival: true, enqueue: true, departure: true };
    /// For balancers that only `choose`.
    pub const CHOOSE_ONLY: Hooks = Hooks { arrival: false, enqueue: false, departure: false };
}

pub trait SwitchBalancer: Send {
    /// Picks the egress for `pkt` among `candidates` (never empty; one entry where there is no choice).
    /// May read and write the packet's balancer header.
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut Packet, candidates: &[u32]) -> Decision;
    /// Every packet arriving at the switch, before routing: feedback rides on data and ACKs.
    fn on_arrival(&mut self, _cx: &mut SwitchCx, _pkt: &mut Packet) {}
    /// After the packet was accepted into `port`'s queue and the port's own DCTCP marking applied; a scheme
    /// may set or clear `pkt.ecn.ce` here (TAM).
    fn on_enqueue(&mut self, _cx: &mut SwitchCx, _pkt: &mut Packet, _port: u32) {}
    /// When the packet finishes serialisation on `port` (rate estimators count here).
    fn on_departure(&mut self, _cx: &mut SwitchCx, _pkt: &mut Packet, _port: u32) {}
    /// Periodic work, every [`SwitchBalancer::timer_period`].
    fn on_timer(&mut self, _cx: &mut SwitchCx) {}
    fn timer_period(&self) -> Option<Time> {
        None
    }
    /// Bytes of state the balancer holds now (tables, counters), for overhead comparisons.
    fn state_bytes(&self) -> usize {
        0
    }
    /// The per-packet hooks this balancer implements (see [`Hooks`]); override only to declare fewer.
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }
}

/// What the host knows about one of its own flows when its edge balancer runs.
#[derive(Copy, Clone, Debug)]
pub struct FlowView {
    pub flow: u32,
    pub dst: u32,
    /// Total bytes (saturated for unbounded flows).
    pub size: u64,
    pub start: Time,
    /// Highest byte sent so far.
    pub sent: u64,
    /// Bytes cumulatively acknowledged.
    pub acked: u64,
    pub cwnd: u64,
    /// Smoothed RTT, `Time::ZERO` before the first sample.
    pub srtt: Time,
    /// The packet being sent is a retransmission.
    pub retransmission: bool,
}

/// A probe an edge balancer wants sent: to `dst` along path tag `path`.
#[derive(Copy, Clone, Debug)]
pub struct ProbeRequest {
    pub dst: u32,
    pub path: u16,
}

pub struct EdgeCx<'a> {
    pub now: Time,
    /// This host's id.
    pub host: u32,
    pub facts: &'a FabricFacts,
    pub rng: &'a mut Rng,
    /// Probes to send when the hook returns.
    pub probes: &'a mut Vec<ProbeRequest>,
}

pub trait EdgeBalancer: Send {
    /// Picks the path tag for a data packet of `flow` among `paths` (never empty).
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, pkt: &mut Packet, paths: &[u16]) -> u16;
    /// An ACK of one of this host's flows arrived (`ack.lb.echo_path` is the path of the data it answers).
    fn on_ack(&mut self, _cx: &mut EdgeCx, _flow: &FlowView, _ack: &Packet) {}
    /// A retransmission timeout fired for `flow`.
    fn on_timeout(&mut self, _cx: &mut EdgeCx, _flow: &FlowView) {}
    /// A reply to one of this host's probes arrived.
    fn on_probe_reply(&mut self, _cx: &mut EdgeCx, _reply: &Packet) {}
    fn on_timer(&mut self, _cx: &mut EdgeCx) {}
    fn timer_period(&self) -> Option<Time> {
        None
    }
    fn state_bytes(&self) -> usize {
        0
    }
}

/// Context given to a scheme's constructors.
pub struct BuildCx<'a> {
    pub facts: &'a FabricFacts,
    /// Number of hosts in the fabric.
    pub hosts: u32,
}

/// What a scheme installs: a balancer for every switch and, for edge schemes, one for every host.
pub struct Installed {
    pub switches: Vec<Box<dyn SwitchBalancer>>,
    pub edges: Option<Vec<Box<dyn EdgeBalancer>>>,
}
