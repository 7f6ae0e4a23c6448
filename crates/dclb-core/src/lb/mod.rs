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
//!   sees the host's own flows, the ACKs and probe replies that come back, and may send probes; with
//!   `ack_routing = "edge"` it also tags the ACKs its host sends for the flows it receives ([`ackpath`]).
//!
//! A balancer sees only what that device would see: its own ports' live queues, static facts of the fabric
//! ([`FabricFacts`]), and the packet in hand with its [`LbHeader`](crate::packet::LbHeader). Anything about
//! remote state arrives in packets, with the delay that implies.
//!
//! Hooks default to no-ops (in the manner of smoltcp's congestion controllers), so a scheme implements only
//! what it uses.
//!
//! # How to add a scheme
//!
//! A scheme is one file, one name in the registry list below, and one test file; the CLI (`dclb schemes`),
//! scenario validation, sweeps and the Python front find it through the registry.
//!
//! 1. **`lb/<name>.rs`.** Its module doc states the rule, the choices where the sources are vague, and each
//!    default with its source (`letflow.rs` is a short example). It defines:
//!    * `pub const SPEC:` [`SchemeSpec`]: the `name` scenarios write as `lb.scheme`, the [`Placement`], a
//!      `granularity` and one-line `summary` for listings, `params`, `install`, and `reflect`;
//!    * its parameters with `params::scheme_params!`: one typed struct whose rows carry default, unit,
//!      range, doc and source; `params: MyParams::SPECS`, and `install` starts with `MyParams::from_params`.
//!      Choices are enums declared with `params::param_choice!`. Use the names other schemes use for the
//!      same concept (`flowlet_timeout_us`, `dre_tau_us`, `stale_us`);
//!    * `install`, which builds the balancers: [`Installed::Switches`], one per switch in the order of
//!      [`BuildCx::switches`] ([`per_switch`] does it), or [`Installed::Edges`], one per host;
//!    * the balancer, a [`SwitchBalancer`] (or [`EdgeBalancer`]). Only `choose` is required. It declares the
//!      per-packet hooks it implements with `hooks()` ([`Hooks::CHOOSE_ONLY`] if it only chooses), so the
//!      engine skips the rest (a departure hook makes its switch's ports event-driven: a second event per
//!      packet and hop); periodic work goes in `on_timer` every `timer_period`, one-shot work in
//!      `on_alarm` after [`SwitchCx::wake_at`]; `state_bytes` reports what its tables hold;
//!    * a rate estimate of its ports (CONGA's DRE) is a service of the ports, not a hook: ask for it in
//!      `rate_estimator` and read [`PortsView::dre`] (and, to stamp the packet in hand in `on_enqueue`,
//!      [`PortsView::dre_at_departure`]);
//!    * per-flow or per-flowlet state in a [`flowtable::FlowTable`] (exact or hashed, timestamps or age
//!      bits, its own sweep), other per-flow maps as a [`flowhash::FlowMap`]: never std's randomly keyed
//!      hasher;
//!    * `reflect`: [`reflect_path_and_class`] unless the receiving host must echo more into ACKs ([`Reflect`]).
//! 2. **The name** in the `registry::schemes!` list below.
//! 3. **`crates/dclb-core/tests/<name>.rs`**: behaviour tests that drive the balancer by hand with
//!    [`testkit::SwitchBench`] or [`testkit::EdgeBench`] (with these queues and this clock, this packet goes
//!    there), and an end-to-end run. Break the rule on purpose once and see a test fail.

pub mod ackpath;
pub mod flowhash;
pub mod flowtable;
pub mod params;
pub mod pathsense;
pub mod registry;
pub mod scheme;
pub mod source_route;
pub mod testkit;

// The registry: every scheme (module `lb/<name>.rs`), baselines first in the order the papers list them.
registry::schemes![ecmp, rps, drb, presto, letflow, conga, drill, hermes, clove, lbt, tam, tr, dar, mdtlb];

use crate::dre::{Dre, DreConfig};
use crate::fabric::{Buffer, FabricFacts, Port, PortRole, Threshold};
use crate::ids::{FlowId, HostId, LeafId, NodeId, PortId, SpineId};
use crate::packet::{LbHeader, Packet};
use crate::rng::Rng;
use crate::units::{Rate, Time};

pub use params::{ParamSpec, ParamValue, Params};
pub use registry::find_scheme;
pub use scheme::{per_switch, reflect_path_and_class, BuildCx, Installed, Placement, Reflect, SchemeSpec};

/// Which switch a balancer instance runs on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SwitchKind {
    Leaf,
    Spine,
}

/// Which switch a balancer instance runs on, with its number among its kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SwitchPlace {
    Leaf(LeafId),
    Spine(SpineId),
}

/// A switch as its balancer knows itself. Made by [`SwitchInfo::leaf`] or [`SwitchInfo::spine`], which
/// take its node id from the fabric's numbering, so that the node, the kind and the number agree.
#[derive(Copy, Clone, Debug)]
pub struct SwitchInfo {
    /// Global node id.
    pub node: NodeId,
    pub kind: SwitchKind,
    /// Leaf number or spine number, by `kind` (read it typed: [`SwitchInfo::place`]).
    number: u32,
    /// Per-switch hash salt (ECMP-style schemes use it to avoid polarisation).
    pub salt: u64,
}

impl SwitchInfo {
    /// Leaf `leaf` of the fabric `facts` describes.
    pub fn leaf(facts: &FabricFacts, leaf: LeafId, salt: u64) -> SwitchInfo {
        SwitchInfo { node: facts.leaf_node(leaf), kind: SwitchKind::Leaf, number: leaf.0, salt }
    }
    /// Spine `spine` of the fabric `facts` describes.
    pub fn spine(facts: &FabricFacts, spine: SpineId, salt: u64) -> SwitchInfo {
        SwitchInfo { node: facts.spine_node(spine), kind: SwitchKind::Spine, number: spine.0, salt }
    }
    /// This switch as a leaf or a spine, with its number.
    #[inline(always)]
    pub fn place(&self) -> SwitchPlace {
        match self.kind {
            SwitchKind::Leaf => SwitchPlace::Leaf(LeafId(self.number)),
            SwitchKind::Spine => SwitchPlace::Spine(SpineId(self.number)),
        }
    }
    /// The leaf this switch is, or `None` for a spine.
    #[inline(always)]
    pub fn as_leaf(&self) -> Option<LeafId> {
        (self.kind == SwitchKind::Leaf).then_some(LeafId(self.number))
    }
    /// The spine this switch is, or `None` for a leaf.
    #[inline]
    pub fn as_spine(&self) -> Option<SpineId> {
        (self.kind == SwitchKind::Spine).then_some(SpineId(self.number))
    }
    /// Its number among the switches of its kind, untyped (for the result tables).
    pub fn number(&self) -> u32 {
        self.number
    }
}

/// A read-only view of one switch's own ports: live queues and the static facts of each port (rate, role,
/// slot), never another node's. Ports are named by their global id, as candidates are. Live readings are
/// taken at the view's time (the event being run), so a lazily drained port leaves out the packets that
/// have left by then.
pub struct PortsView<'a> {
    ports: &'a [Port],
    first: PortId,
    now: Time,
}

impl<'a> PortsView<'a> {
    /// The ports `first..first + n` of `all`, read at `now`.
    pub fn new(all: &'a [Port], first: PortId, n: u32, now: Time) -> PortsView<'a> {
        PortsView { ports: &all[first.index()..first.index() + n as usize], first, now }
    }
    #[inline]
    fn get(&self, port: PortId) -> &'a Port {
        &self.ports[self.local(port)]
    }
    /// Where `port` is among this switch's ports, counted from its first: a leaf's host ports come first
    /// (by host), then its uplinks (by uplink index); a spine's down links are in slot order.
    #[inline]
    pub fn local(&self, port: PortId) -> usize {
        (port.0 - self.first.0) as usize
    }
    /// This switch's port number `i` (counted as in [`PortsView::local`]).
    #[inline]
    pub fn nth(&self, i: u32) -> PortId {
        debug_assert!((i as usize) < self.ports.len(), "the switch has {} ports, not {}", self.ports.len(), i + 1);
        PortId(self.first.0 + i)
    }
    /// Bytes queued at `port`, the packet in service included.
    #[inline]
    pub fn queue_bytes(&self, port: PortId) -> u64 {
        self.get(port).queue_bytes_at(self.now)
    }
    /// Packets queued at `port`, the packet in service included.
    #[inline]
    pub fn queue_packets(&self, port: PortId) -> u32 {
        self.get(port).queue_packets_at(self.now)
    }
    /// The port's strict-priority levels for data (`topology.priority_queues`; 1: one FIFO). Level 0 is
    /// the top; a packet whose [`Packet::priority`] is past the lowest joins the lowest.
    #[inline]
    pub fn priority_levels(&self, port: PortId) -> u8 {
        self.get(port).priority_levels()
    }
    /// Bytes queued at `port` in priority `level`'s FIFO (clamped to the lowest), the packet in service
    /// included if it is of that level. [`PortsView::queue_bytes`] is the total, which buffer and ECN
    /// threshold count; a packet of `level` waits behind this level and the ones above it.
    #[inline]
    pub fn level_queue_bytes(&self, port: PortId, level: u8) -> u64 {
        self.get(port).level_bytes_at(self.now, level)
    }
    /// Packets queued at `port` in priority `level`'s FIFO (as [`PortsView::level_queue_bytes`]).
    #[inline]
    pub fn level_queue_packets(&self, port: PortId, level: u8) -> u32 {
        self.get(port).level_packets_at(self.now, level)
    }
    /// Time to drain this port's queue at its rate (the packet on the wire counted whole).
    #[inline]
    pub fn queue_delay(&self, port: PortId) -> Time {
        self.get(port).queue_delay_at(self.now)
    }
    /// Exactly how long a packet enqueued at `port` now would wait before its serialisation starts: the rest
    /// of the packet on the wire plus the bytes queued behind it ([`Port::wait_time`]). `now` must be the
    /// view's time.
    #[inline]
    pub fn wait_time(&self, port: PortId, now: Time) -> Time {
        debug_assert_eq!(now, self.now, "a port view reads its queues at its own time");
        self.get(port).wait_time(now)
    }
    /// One-way propagation delay of `port`'s link (static).
    pub fn delay(&self, port: PortId) -> Time {
        self.get(port).delay
    }
    pub fn rate(&self, port: PortId) -> Rate {
        self.get(port).rate
    }
    /// The port's drop-tail buffer limit (static configuration; the unit it does not count is `MAX`).
    pub fn buffer(&self, port: PortId) -> Buffer {
        let p = self.get(port);
        Buffer { packets: p.cap_packets, bytes: p.cap_bytes }
    }
    /// The port's ECN marking threshold, DCTCP's K (static configuration; `k = 0` never marks).
    pub fn ecn_threshold(&self, port: PortId) -> Threshold {
        self.get(port).ecn_k
    }
    pub fn role(&self, port: PortId) -> PortRole {
        self.get(port).role
    }
    /// See [`crate::port::PortLink::slot`]: uplink index, down-link index or host index, by role.
    pub fn slot(&self, port: PortId) -> u32 {
        self.get(port).slot
    }
    /// Uplink index of a leaf's uplink port (spine * links + link).
    pub fn uplink_index(&self, port: PortId) -> Option<u32> {
        let p = self.get(port);
        (p.role == PortRole::LeafUp).then_some(p.slot)
    }
    /// The rate estimator's register of `port` now ([`crate::dre`]): every packet that has finished sending
    /// by now counted, every decay before now applied. Panics on a port without one: a balancer asks for
    /// its estimators in [`SwitchBalancer::rate_estimator`].
    #[inline]
    pub fn dre(&self, port: PortId) -> Dre {
        self.estimator(port).at(self.now)
    }
    /// The rate estimator's register of `port` just after the packet it admitted last finishes sending:
    /// in `on_enqueue`, the packet in hand (what its departure would read; the port knows it at admission).
    #[inline]
    pub fn dre_at_departure(&self, port: PortId) -> Dre {
        self.estimator(port).at_last_departure()
    }
    #[inline]
    fn estimator(&self, port: PortId) -> &'a crate::dre::RateEstimator {
        match self.get(port).rate_estimator() {
            Some(e) => e,
            None => panic!("port {port} keeps no rate estimator: a balancer asks for one in SwitchBalancer::rate_estimator"),
        }
    }
    /// Global id of this switch's first port; its ports are `first()..first() + len()` ([`PortsView::ids`]).
    pub fn first(&self) -> PortId {
        self.first
    }
    pub fn len(&self) -> u32 {
        self.ports.len() as u32
    }
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }
    /// Global ids of this switch's ports.
    pub fn ids(&self) -> impl Iterator<Item = PortId> + Clone {
        (self.first.0..self.first.0 + self.len()).map(PortId)
    }
}

/// A packet as a balancer holds it: every field readable (through `Deref`), only the balancer header and
/// the priority level writable. Switches and edges never rewrite addresses, sequence numbers or timestamps.
pub struct PacketMut<'a> {
    pkt: &'a mut Packet,
}

impl<'a> PacketMut<'a> {
    pub fn new(pkt: &'a mut Packet) -> PacketMut<'a> {
        PacketMut { pkt }
    }
    /// The balancer header, for writing.
    #[inline]
    pub fn lb_mut(&mut self) -> &mut LbHeader {
        &mut self.pkt.lb
    }
    /// Sets the packet's strict-priority level ([`Packet::priority`], 0 the top), as a switch remarks
    /// DSCP: it holds at every later hop. A switch sets it in `choose`, before the packet joins its port.
    #[inline]
    pub fn set_priority(&mut self, level: u8) {
        self.pkt.priority = level;
    }
}

impl std::ops::Deref for PacketMut<'_> {
    type Target = Packet;
    #[inline]
    fn deref(&self) -> &Packet {
        self.pkt
    }
}

/// A packet just admitted to a port's queue: a [`PacketMut`] that may also have its CE mark set or
/// cleared, as schemes that mark by their own rule do (TAM). Only `on_enqueue` receives one.
pub struct MarkablePacket<'a> {
    inner: PacketMut<'a>,
}

impl<'a> MarkablePacket<'a> {
    pub fn new(pkt: &'a mut Packet) -> MarkablePacket<'a> {
        MarkablePacket { inner: PacketMut::new(pkt) }
    }
    /// Sets or clears Congestion Experienced; a packet that is not ECN-capable is never marked.
    pub fn set_ce(&mut self, ce: bool) {
        self.inner.pkt.ecn.ce = ce && self.inner.pkt.ecn.ect;
    }
}

impl<'a> std::ops::Deref for MarkablePacket<'a> {
    type Target = PacketMut<'a>;
    fn deref(&self) -> &PacketMut<'a> {
        &self.inner
    }
}
impl<'a> std::ops::DerefMut for MarkablePacket<'a> {
    fn deref_mut(&mut self) -> &mut PacketMut<'a> {
        &mut self.inner
    }
}

/// One-shot wake-ups a balancer asked for during a hook: `(time, token)`. The engine turns each into an
/// event that calls the balancer's `on_alarm` with the token at that time.
pub type Alarms = Vec<(Time, u32)>;

/// What a switch balancer may use when it runs.
pub struct SwitchCx<'a> {
    pub now: Time,
    pub me: SwitchInfo,
    pub ports: PortsView<'a>,
    pub facts: &'a FabricFacts,
    pub rng: &'a mut Rng,
    /// One-shot wake-ups requested so far (use [`SwitchCx::wake_at`]).
    pub alarms: &'a mut Alarms,
    /// In `on_arrival` and `choose`: this switch's own port on the link the packet came in by (a real
    /// switch knows its ingress port). `None` in the other hooks and for a packet made at this switch.
    pub ingress: Option<PortId>,
}

impl SwitchCx<'_> {
    /// Asks for `on_alarm(token)` at time `at` (not before now). Alarms cannot be cancelled: a balancer that
    /// re-arms keeps its own notion of which wake-up is current and ignores stale ones.
    pub fn wake_at(&mut self, at: Time, token: u32) {
        self.alarms.push((at.max(self.now), token));
    }
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
    Forward(PortId),
    /// Drop this packet.
    Drop(DropReason),
    /// Drop this packet and tell the source, in a packet, that the network gave up on its flow.
    Cancel(DropReason),
}

/// A balancer's request for a rate estimator ([`crate::dre`]) on each of its switch's ports of these roles.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct DreRequest {
    pub config: DreConfig,
    pub roles: &'static [PortRole],
}

/// Which per-packet hooks a balancer implements. The simulation skips building a context for hooks a balancer
/// does not use (a pure speed matter: skipped hooks are the default no-ops). The default is all of them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hooks {
    pub arrival: bool,
    pub enqueue: bool,
    /// `on_departure`: its switch's ports then run event-driven, so that the hook runs when each packet's
    /// serialisation ends (one more event per packet and hop).
    pub departure: bool,
    /// Call `choose` even where routing leaves a single candidate (a scheme that stamps the packet with
    /// its choice, like CONGA's LBTag, needs this). Otherwise the engine forwards on the only candidate.
    pub choose_single: bool,
}

impl Hooks {
    pub const ALL: Hooks = Hooks { arrival: true, enqueue: true, departure: true, choose_single: true };
    /// For balancers that only `choose`, and only where there is a choice.
    pub const CHOOSE_ONLY: Hooks = Hooks { arrival: false, enqueue: false, departure: false, choose_single: false };
}

pub trait SwitchBalancer: Send {
    /// Picks the egress for `pkt` among `candidates` (never empty; a single entry only when the balancer's
    /// [`Hooks::choose_single`] asks for it). May read the packet and write its balancer header.
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision;
    /// Every packet arriving at the switch, before routing: feedback rides on data and ACKs.
    fn on_arrival(&mut self, _cx: &mut SwitchCx, _pkt: &mut PacketMut) {}
    /// After the packet was accepted into `port`'s queue and the port's own DCTCP marking applied; a scheme
    /// may set or clear its CE mark here (TAM).
    fn on_enqueue(&mut self, _cx: &mut SwitchCx, _pkt: &mut MarkablePacket, _port: PortId) {}
    /// When the packet finishes serialisation on `port`. A balancer that implements it makes its switch's
    /// ports event-driven (an event per packet and hop when its serialisation ends) so that the hook runs at
    /// that time; a rate estimate needs no hook ([`SwitchBalancer::rate_estimator`]).
    fn on_departure(&mut self, _cx: &mut SwitchCx, _pkt: &mut PacketMut, _port: PortId) {}
    /// The rate estimators this balancer reads ([`PortsView::dre`]): asked once, when it is installed; the
    /// ports of its switch whose role is listed then keep a DRE ([`crate::dre`]) with that configuration.
    /// None by default.
    fn rate_estimator(&self) -> Option<DreRequest> {
        None
    }
    /// Periodic work, every [`SwitchBalancer::timer_period`].
    fn on_timer(&mut self, _cx: &mut SwitchCx) {}
    fn timer_period(&self) -> Option<Time> {
        None
    }
    /// A one-shot wake-up asked for with [`SwitchCx::wake_at`].
    fn on_alarm(&mut self, _cx: &mut SwitchCx, _token: u32) {}
    /// Bytes of state the balancer holds now (tables, counters), for overhead comparisons.
    fn state_bytes(&self) -> usize {
        0
    }
    /// The scheme's own counters at the end of the run, declared once with `scheme::scheme_counters!`
    /// (`self.counters.report()`). The engine names each `<scheme>_<counter>`: a column of the per-switch
    /// table (0 for switches that do not report it), summed by that name over every switch and host in
    /// `RunStats::scheme_counters`. None by default.
    fn counters(&self) -> scheme::CounterReport {
        scheme::CounterReport::default()
    }
    /// The per-packet hooks this balancer implements (see [`Hooks`]); override only to declare fewer.
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }
}

/// What the host knows about one of its own flows when its edge balancer runs.
#[derive(Copy, Clone, Debug)]
pub struct FlowView {
    pub flow: FlowId,
    pub dst: HostId,
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
    pub dst: HostId,
    pub path: u16,
}

pub struct EdgeCx<'a> {
    pub now: Time,
    /// This host's id.
    pub host: HostId,
    pub facts: &'a FabricFacts,
    pub rng: &'a mut Rng,
    /// Probes to send when the hook returns.
    pub probes: &'a mut Vec<ProbeRequest>,
    /// One-shot wake-ups requested so far (use [`EdgeCx::wake_at`]).
    pub alarms: &'a mut Alarms,
}

impl EdgeCx<'_> {
    /// Asks for `on_alarm(token)` at time `at` (not before now); see [`SwitchCx::wake_at`].
    pub fn wake_at(&mut self, at: Time, token: u32) {
        self.alarms.push((at.max(self.now), token));
    }
}

pub trait EdgeBalancer: Send {
    /// Picks the path tag for a data packet of `flow` among `paths` (never empty).
    /// May write the packet's balancer header (beyond the path tag the engine writes from the answer).
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, pkt: &mut PacketMut, paths: &[u16]) -> u16;
    /// An ACK of one of this host's flows arrived (`ack.lb.echo_path` is the path of the data it answers).
    fn on_ack(&mut self, _cx: &mut EdgeCx, _flow: &FlowView, _ack: &Packet) {}
    /// Whether this host's edge routes the ACKs it sends for the flows it receives (`ack_routing = "edge"`,
    /// [`ackpath`]): asked once, when the balancer is installed. Default off: ACKs go untagged and the
    /// switches hash them.
    fn routes_acks(&self) -> bool {
        false
    }
    /// Picks the path tag of an ACK this host sends for another host's flow, towards the data sender's leaf,
    /// among `paths` (never empty), from this host's own view of its paths. Called only if
    /// [`EdgeBalancer::routes_acks`]; the default takes the first path.
    fn choose_ack_path(&mut self, _cx: &mut EdgeCx, _ack: &ackpath::AckView, paths: &[u16]) -> u16 {
        paths[0]
    }
    /// A retransmission timeout fired for `flow`.
    fn on_timeout(&mut self, _cx: &mut EdgeCx, _flow: &FlowView) {}
    /// A reply to one of this host's probes arrived.
    fn on_probe_reply(&mut self, _cx: &mut EdgeCx, _reply: &Packet) {}
    fn on_timer(&mut self, _cx: &mut EdgeCx) {}
    fn timer_period(&self) -> Option<Time> {
        None
    }
    /// How many probes one `on_timer` round sends, at most, when this host sends data to `active_leaves`
    /// other leaves: for the run's event estimate (`runsize.rs`), which must count every event source.
    fn probes_per_round(&self, _active_leaves: usize) -> usize {
        0
    }
    /// A one-shot wake-up asked for with [`EdgeCx::wake_at`].
    fn on_alarm(&mut self, _cx: &mut EdgeCx, _token: u32) {}
    fn state_bytes(&self) -> usize {
        0
    }
    /// Whether this host's edge makes the data packets it sends ECN-capable (ECT) whatever the flow's
    /// transport, as a hypervisor edge does on the outer header so that switches mark them (Clove, Hermes).
    /// The receiving host then echoes CE on the ACK (ECE), as it does for DCTCP, and `on_ack` sees it; a
    /// NewReno sender ignores ECE, which stands for the receiving edge hiding CE from a guest that did not
    /// negotiate ECN. Asked once, when the balancer is installed; the host applies it to every TCP segment
    /// and UDP datagram it creates, on any path (not to ACKs, SYNs or SYN-ACKs). Default off: only DCTCP
    /// flows' packets are ECN-capable (probes always are).
    fn sets_ect(&self) -> bool {
        false
    }
    /// The scheme's own counters, summed over every host into `RunStats::scheme_counters` (see
    /// [`SwitchBalancer::counters`]). None by default.
    fn counters(&self) -> scheme::CounterReport {
        scheme::CounterReport::default()
    }
}
