//! The leaf-spine fabric: nodes, ports, routing, and the static facts a balancer may read.
//!
//! ```text
//!            spine 0        spine 1   ...          each spine: L x links_per_pair down ports
//!            /     \        /     \
//!     leaf 0 ------- leaf 1 ...                    each leaf: hosts_per_leaf down ports, then
//!     | | |          | | |                          S x links_per_pair uplinks (uplink u = spine*links + link)
//!    hosts          hosts                          each host: one NIC port up to its leaf
//! ```
//!
//! Node ids: hosts `0..H`, then leaves, then spines. Ports are numbered globally; a node's ports are
//! contiguous. Each kind of id has its own type ([`crate::ids`]); the conversions between kinds live here
//! and nowhere else: the node numbering and a host's leaf in [`FabricFacts`] (what every switch knows),
//! the port numbering and the routes in [`Fabric`]. A port is one direction of a link: an egress FIFO with a drop-tail buffer, ECN marking at
//! enqueue on the instantaneous queue, a serialiser at the link rate and a propagation delay to its peer.
//! Buffers and thresholds are resolved here, per port, from the scenario and the port's rate
//! ([`buffer_of`], [`threshold_of`]); the check uses the same functions to refuse a K that could never mark.
//!
//! Routing is precomputed: from a leaf to another leaf the candidates are the uplinks that are up and whose
//! spine still has a working link down to the destination leaf; from a spine, the working links to the
//! destination leaf. A failed link is simply absent from the candidate lists (routing converged around it).

use crate::config::{Direction, QueueUnit, TopologyConfig, TransportConfig};
use crate::ids::{HostId, LeafId, NodeId, PortId, SpineId, SwitchIndex};
use crate::packet::PacketKind;
use crate::units::{Bytes, Rate, Time};
use crate::transport::alone::Hop;
pub use crate::port::{Buffer, Port, PortLink, PortRole, Threshold, WireFault};
use crate::rng::{Rng, Stream};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Leaf,
    Spine,
}

impl NodeKind {
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Host => "host",
            NodeKind::Leaf => "leaf",
            NodeKind::Spine => "spine",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    /// Index among nodes of its kind (host number, leaf number, spine number).
    pub index: u32,
    /// First global port id of this node; its ports are `first_port..first_port + n_ports`.
    pub first_port: PortId,
    pub n_ports: u32,
}

/// Facts about the fabric that every switch knows from configuration (not live state).
///
/// **Base RTTs.** The engine has three, each for its own use:
/// * [`Config::base_rtt`](crate::config::Config::base_rtt): the *declared* fabric's idle round trip
///   (propagation plus serialisation of a full-size packet out and an ACK back), per-link overrides ignored.
///   It is the yardstick that scheme timing defaults are scaled by (`lb.timing = "fabric"`), so a symmetric
///   fabric and its degraded variant run the schemes with the same timers; it needs no built fabric (the
///   Python front prints it before a run).
/// * [`FabricFacts::min_rtt`]: the same quantity on the fabric as built, over the fastest working paths.
///   It equals the declared one unless overrides slow every path; TAM's `rtt_basis = "unloaded"`.
/// * [`FabricFacts::propagation_rtt`] and [`FabricFacts::propagation_rtt_from`]: propagation only, the
///   papers' "RTPD" (TAM's `rtt_basis = "propagation"`, TR's automatic `T_idle`).
///
/// DAR's per-path round trip (`lb/dar.rs`, `rtt_base`) is the RTT of one candidate path, not a base RTT.
#[derive(Clone, Debug)]
pub struct FabricFacts {
    /// Hosts in the fabric (`leaves * hosts_per_leaf`): node ids below it are hosts.
    pub hosts: u32,
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Divides a host index by `hosts_per_leaf` without a division instruction (every packet at every
    /// switch asks for its destination's leaf).
    host_leaf: DivU32,
    pub links_per_pair: u32,
    /// Uplinks per leaf (`spines * links_per_pair`).
    pub uplinks: u32,
    /// One-way propagation delay from leaf `l` through its uplink `u` to destination leaf `d`, using the
    /// fastest working spine-to-`d` link: index `(l * uplinks + u) * leaves + d`. `Time::MAX` if no path.
    path_delay: Vec<Time>,
    /// Wire bytes of a full-size data packet.
    pub mtu_wire_bytes: u32,
    /// Static facts of every spine's down links (configuration, not live state): index
    /// `spine * leaves * links_per_pair + slot`, slot `leaf * links_per_pair + link` as in [`PortLink::slot`].
    spine_down: Vec<LinkFacts>,
    /// Static facts of every leaf's uplinks (configuration, not live state): index `leaf * uplinks + uplink`.
    leaf_up: Vec<LinkFacts>,
    /// One-way propagation delay of every host link (host NIC to its leaf, and leaf down to the host).
    pub host_delay: Time,
    /// The smallest round-trip time between hosts on different leaves in an idle fabric: propagation on
    /// every link plus store-and-forward serialisation of a full-size data packet on every hop out and of an
    /// ACK on every hop back, over the fastest working paths (host to leaf and back in a one-leaf fabric).
    /// It is [`Config::base_rtt`](crate::config::Config::base_rtt) measured on the fabric as built: the two
    /// differ only when per-link overrides slow every path (see [`FabricFacts`] on the base RTTs).
    pub min_rtt: Time,
    /// Wire bytes of a pure ACK (also of a probe and a cancel notice).
    pub ack_wire_bytes: u32,
    /// Rate of a host-leaf link (the same for every host: overrides change leaf-spine links only).
    pub host_rate: Rate,
}

/// What configuration says about one direction of a link: what a switch may know of a neighbour's port
/// without reading its live state (TR's leaves decode a spine's queue report with the spine port's buffer
/// and rate).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LinkFacts {
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Time,
    /// Drop-tail buffer in bytes; a buffer counted in packets is given as packets x full-size wire bytes.
    pub buffer_bytes: u64,
    /// In service (not failed); a failed link is absent from routing.
    pub up: bool,
}

/// Division of any `u32` by a divisor fixed when the fabric is built, as one 64 x 64 -> 128-bit multiply
/// and a shift: a hardware divide costs 20-40 cycles, and it sat on every switch hop (a host's leaf). The
/// multiplier is `ceil(2^64 / d)`, exact for every 32-bit numerator (Lemire, Kaser and Kurz, "Faster
/// remainder by direct computation", 2019); `d = 1`, whose multiplier would be 2^64, is kept apart.
#[derive(Copy, Clone, Debug)]
struct DivU32 {
    d: u32,
    m: u64,
}

impl DivU32 {
    fn new(d: u32) -> DivU32 {
        assert!(d > 0, "division by zero");
        DivU32 { d, m: if d == 1 { 0 } else { u64::MAX / d as u64 + 1 } }
    }
    #[inline(always)]
    fn div(self, n: u32) -> u32 {
        if self.d == 1 { n } else { ((self.m as u128 * n as u128) >> 64) as u32 }
    }
}

/// Conversions between kinds of ids: the node numbering (hosts, then leaves, then spines) and a host's leaf.
/// The only place one kind of id becomes another (see [`crate::ids`]).
impl FabricFacts {
    /// The leaf host `host` hangs off.
    #[inline]
    pub fn leaf_of_host(&self, host: HostId) -> LeafId {
        LeafId(self.host_leaf.div(host.0))
    }
    /// The `i`-th host of leaf `leaf` (`i < hosts_per_leaf`).
    #[inline]
    pub fn host_on_leaf(&self, leaf: LeafId, i: u32) -> HostId {
        debug_assert!(i < self.hosts_per_leaf, "leaf {leaf} has {} hosts, not {}", self.hosts_per_leaf, i + 1);
        HostId(leaf.0 * self.hosts_per_leaf + i)
    }
    /// Which of its leaf's hosts `host` is (`0..hosts_per_leaf`): its leaf's down port to it, counted from
    /// the leaf's first port.
    #[inline]
    pub fn host_rank(&self, host: HostId) -> u32 {
        host.0 - self.leaf_of_host(host).0 * self.hosts_per_leaf
    }
    /// The node id of host `host`.
    #[inline]
    pub fn host_node(&self, host: HostId) -> NodeId {
        NodeId(host.0)
    }
    /// The node id of leaf `leaf`.
    #[inline]
    pub fn leaf_node(&self, leaf: LeafId) -> NodeId {
        NodeId(self.hosts + leaf.0)
    }
    /// The node id of spine `spine`.
    #[inline]
    pub fn spine_node(&self, spine: SpineId) -> NodeId {
        NodeId(self.hosts + self.leaves + spine.0)
    }
    /// The host node `node` is, or `None` for a switch.
    #[inline(always)]
    pub fn node_host(&self, node: NodeId) -> Option<HostId> {
        (node.0 < self.hosts).then_some(HostId(node.0))
    }
    /// The host node `node` is. `node` must be a host (the owner of a NIC, say).
    #[inline(always)]
    pub fn host_at(&self, node: NodeId) -> HostId {
        debug_assert!(self.is_host(node), "node {node} is not a host");
        HostId(node.0)
    }
    /// Whether node `node` is a host.
    #[inline(always)]
    pub fn is_host(&self, node: NodeId) -> bool {
        node.0 < self.hosts
    }
    /// The switch node `node` is, among all switches (leaves, then spines). `node` must be a switch.
    #[inline(always)]
    pub fn switch_of(&self, node: NodeId) -> SwitchIndex {
        debug_assert!(!self.is_host(node), "node {node} is a host, not a switch");
        SwitchIndex(node.0 - self.hosts)
    }
    /// The leaf node `node` is. `node` must be a leaf (the owner or peer of a port whose role says so).
    #[inline(always)]
    pub fn leaf_at(&self, node: NodeId) -> LeafId {
        debug_assert!(node.0 >= self.hosts && node.0 - self.hosts < self.leaves, "node {node} is not a leaf");
        LeafId(node.0 - self.hosts)
    }
    /// The spine node `node` is. `node` must be a spine.
    #[inline]
    pub fn spine_at(&self, node: NodeId) -> SpineId {
        debug_assert!(node.0 >= self.hosts + self.leaves && node.0 - self.hosts - self.leaves < self.spines, "node {node} is not a spine");
        SpineId(node.0 - self.hosts - self.leaves)
    }
    /// Every host, leaf, spine.
    pub fn host_ids(&self) -> impl Iterator<Item = HostId> + Clone {
        (0..self.hosts).map(HostId)
    }
    pub fn leaf_ids(&self) -> impl Iterator<Item = LeafId> + Clone {
        (0..self.leaves).map(LeafId)
    }
    pub fn spine_ids(&self) -> impl Iterator<Item = SpineId> + Clone {
        (0..self.spines).map(SpineId)
    }
}

impl FabricFacts {
    /// Propagation delay (leaf `l` -> uplink `u` -> spine -> leaf `d`), excluding queueing and serialisation.
    pub fn path_delay(&self, leaf: LeafId, uplink: u32, dst_leaf: LeafId) -> Time {
        self.path_delay[((leaf.0 * self.uplinks + uplink) * self.leaves + dst_leaf.0) as usize]
    }
    /// The fastest one-way propagation from leaf `leaf` to leaf `dst_leaf` through the spines, `Time::MAX`
    /// if no working path.
    pub fn fastest_path_delay(&self, leaf: LeafId, dst_leaf: LeafId) -> Time {
        (0..self.uplinks).map(|u| self.path_delay(leaf, u, dst_leaf)).min().unwrap_or(Time::MAX)
    }
    /// The smallest round-trip *propagation* delay between a host of `leaf` and a host of another leaf: the
    /// host links at both ends, twice each, plus the fastest fabric path there and the fastest path back
    /// (which differ when a link override applies to one direction). `None` if no other leaf is reachable
    /// both ways.
    pub fn propagation_rtt_from(&self, leaf: LeafId) -> Option<Time> {
        self.leaf_ids()
            .filter(|&d| d != leaf)
            .map(|d| (self.fastest_path_delay(leaf, d), self.fastest_path_delay(d, leaf)))
            .filter(|&(there, back)| there != Time::MAX && back != Time::MAX)
            .map(|(there, back)| there + back)
            .min()
            .map(|fabric| self.host_delay.mul(4) + fabric)
    }
    /// The smallest round-trip propagation delay between hosts on different leaves (the minimum of
    /// [`propagation_rtt_from`](Self::propagation_rtt_from) over leaves); host to leaf and back, four host-link
    /// delays, when no two leaves reach each other.
    pub fn propagation_rtt(&self) -> Time {
        self.leaf_ids().filter_map(|l| self.propagation_rtt_from(l)).min().unwrap_or(self.host_delay.mul(4))
    }
    /// The spine an uplink index leads to.
    pub fn spine_of_uplink(&self, uplink: u32) -> SpineId {
        SpineId(uplink / self.links_per_pair)
    }
    /// The leaf a spine's down link `slot` (`leaf * links_per_pair + link`) leads to.
    pub fn leaf_of_down_slot(&self, slot: u32) -> LeafId {
        LeafId(slot / self.links_per_pair)
    }
    /// A spine's down-link slot of link `link` to leaf `leaf` (`leaf * links_per_pair + link`).
    pub fn down_slot(&self, leaf: LeafId, link: u32) -> u32 {
        leaf.0 * self.links_per_pair + link
    }
    /// The uplink of link `link` to spine `spine` (`spine * links_per_pair + link`).
    pub fn uplink_to(&self, spine: SpineId, link: u32) -> u32 {
        spine.0 * self.links_per_pair + link
    }
    /// Static facts of spine `spine`'s down link `slot` (`leaf * links_per_pair + link`).
    pub fn spine_down(&self, spine: SpineId, slot: u32) -> LinkFacts {
        self.spine_down[(spine.0 * self.leaves * self.links_per_pair + slot) as usize]
    }
    /// Static facts of leaf `leaf`'s uplink `uplink` (`spine * links_per_pair + link`).
    pub fn leaf_up(&self, leaf: LeafId, uplink: u32) -> LinkFacts {
        self.leaf_up[(leaf.0 * self.uplinks + uplink) as usize]
    }
    /// The configured bottleneck rate of the path from leaf `leaf` through its uplink `uplink` to leaf
    /// `dst_leaf`: the smaller of the uplink's rate and the rate of the spine's link down to `dst_leaf` that
    /// a packet tagged with this uplink takes (the one with the same link number, as source routing does;
    /// if that one has failed, the slowest working one, since the fallback may hash onto any of them).
    /// What a central controller knows from configuration, not live state. `Rate(0)` if the path does not
    /// work (failed uplink, no working link down, or `leaf == dst_leaf`).
    pub fn path_rate(&self, leaf: LeafId, uplink: u32, dst_leaf: LeafId) -> Rate {
        let up = self.leaf_up(leaf, uplink);
        if leaf == dst_leaf || !up.up {
            return Rate(0);
        }
        let (lpp, spine) = (self.links_per_pair, self.spine_of_uplink(uplink));
        let same = self.spine_down(spine, self.down_slot(dst_leaf, uplink % lpp));
        let down = if same.up {
            Some(same.rate)
        } else {
            (0..lpp).map(|k| self.spine_down(spine, self.down_slot(dst_leaf, k))).filter(|l| l.up).map(|l| l.rate).min()
        };
        down.map_or(Rate(0), |d| up.rate.min(d))
    }
}

/// A table of candidate port lists, all in one array: every switch hop reads one list, and lists kept
/// in their own allocations cost a cache miss each (a pointer, then the list).
#[derive(Clone, Debug, Default)]
struct Routes {
    /// Per entry: where its list starts in `ports`, and its length.
    spans: Vec<(u32, u32)>,
    ports: Vec<PortId>,
}

impl Routes {
    fn new(lists: &[Vec<PortId>]) -> Routes {
        let mut r = Routes { spans: Vec::with_capacity(lists.len()), ports: Vec::new() };
        for list in lists {
            r.spans.push((r.ports.len() as u32, list.len() as u32));
            r.ports.extend_from_slice(list);
        }
        r
    }
    #[inline(always)]
    fn get(&self, entry: u32) -> &[PortId] {
        let (start, len) = self.spans[entry as usize];
        &self.ports[start as usize..(start + len) as usize]
    }
}

pub struct Fabric {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub facts: FabricFacts,
    /// Entry `l * leaves + d`: candidate uplink port ids from leaf `l` to leaf `d`.
    leaf_routes: Routes,
    /// Entry `s * leaves + d`: candidate port ids from spine `s` down to leaf `d`.
    spine_routes: Routes,
    /// `leaf_paths[l * leaves + d]`: the same candidates as uplink indices (the path tags hosts may use).
    leaf_paths: Vec<Vec<u16>>,
}

/// The defaults of a switch port's buffer and DCTCP threshold, from one rule: both are a number of full-size
/// packets per 10 Gbps of the port's rate, 256 for the buffer and 65 for K, so that they scale together
/// and K stays at about a quarter of the buffer at every rate.
///
/// * K: 65 packets at 10 Gbps is the DCTCP paper's value (Alizadeh et al., SIGCOMM 2010); its
///   guideline `K > C x RTT / 7` grows with the rate, and 65 packets per 10 Gbps meets it for every round
///   trip below 546 us (`7 x 65 x 1500 B x 8 / 10 Gbps`), whatever the rate.
/// * The buffer: a shared-memory switch chip's buffer grows with its capacity, and a congested port may take
///   a share of it several times its even share; 256 packets (384,000 B) per 10 Gbps stands for that share.
///
/// In bytes a full-size packet counts 1,500 B (the default MSS plus headers). At very low rates (below
/// about 0.1 Gbps) the rule would leave no room: K is then at least 1 (byte or packet) and the buffer at
/// least K plus one full-size packet of this scenario (`mss_bytes + header_bytes` on the wire, or one
/// packet), so that a defaulted port always holds a packet and can mark it ([`crate::check`] refuses a
/// port that cannot).
const DEFAULT_BUFFER_10G: f64 = 256.0;
const DEFAULT_K_10G: f64 = 65.0;
const FULL_PACKET_BYTES: f64 = 1500.0;

/// `per_10g` full-size packets at 10 Gbps, scaled to `rate`, in `unit` (before the floors of [`default_k`]
/// and [`default_buffer`]).
fn scaled_default(per_10g: f64, rate: Rate, unit: QueueUnit) -> u64 {
    let packets = per_10g * rate.as_gbps() / 10.0;
    let v = match unit {
        QueueUnit::Packets => packets,
        QueueUnit::Bytes => packets * FULL_PACKET_BYTES,
    };
    v.round() as u64
}

/// One full-size packet in `unit`: `full` wire bytes, or one packet.
fn one_packet(unit: QueueUnit, full: u64) -> u64 {
    match unit {
        QueueUnit::Packets => 1,
        QueueUnit::Bytes => full,
    }
}

/// The default K of a switch port at `rate` (see [`DEFAULT_K_10G`]): at least 1.
fn default_k(rate: Rate, unit: QueueUnit) -> u64 {
    scaled_default(DEFAULT_K_10G, rate, unit).max(1)
}

/// The default buffer of a switch port at `rate` (see [`DEFAULT_BUFFER_10G`]): at least the default K plus
/// one full-size packet.
fn default_buffer(rate: Rate, unit: QueueUnit, full: u64) -> u64 {
    scaled_default(DEFAULT_BUFFER_10G, rate, unit).max(default_k(rate, unit) + one_packet(unit, full))
}

/// Where a port's buffer limit or marking threshold comes from (for messages that name the field).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The default for the port's rate.
    Default,
    /// The topology field in the queue unit (`buffer_bytes`, `ecn_k_packets`, ...).
    Topology,
    /// `topology.ecn_k_by_role.<role>`.
    Role,
    /// `transport.nic_queue_packets` (host NICs).
    Nic,
}

/// The packet kinds a host NIC sends ahead of queued data: an edge balancer's probes and their replies
/// always (its design sends them at high priority), ACKs and the handshake's SYN and SYN-ACK when
/// `host_ack_priority` asks.
fn nic_control_kinds(tp: &TransportConfig) -> u8 {
    let probes = PacketKind::Probe.bit() | PacketKind::ProbeReply.bit();
    if tp.host_ack_priority {
        probes | PacketKind::Ack.bit() | PacketKind::Syn.bit() | PacketKind::SynAck.bit()
    } else {
        probes
    }
}

/// The drop-tail limit of a port with `role` at `rate`: host NICs hold `nic_queue_packets` descriptors,
/// switch ports their buffer in the topology's queue unit.
pub fn buffer_of(t: &TopologyConfig, tp: &TransportConfig, role: PortRole, rate: Rate) -> (Buffer, Origin) {
    if role == PortRole::HostUp {
        return (Buffer { packets: tp.nic_queue_packets, bytes: u64::MAX }, Origin::Nic);
    }
    let full = tp.mss_bytes as u64 + tp.header_bytes as u64;
    match t.queue_unit {
        QueueUnit::Bytes => match t.buffer_bytes {
            Some(b) => (Buffer { packets: u32::MAX, bytes: b }, Origin::Topology),
            None => (Buffer { packets: u32::MAX, bytes: default_buffer(rate, QueueUnit::Bytes, full) }, Origin::Default),
        },
        QueueUnit::Packets => match t.buffer_packets {
            Some(p) => (Buffer { packets: p, bytes: u64::MAX }, Origin::Topology),
            None => {
                let p = default_buffer(rate, QueueUnit::Packets, full).min(u32::MAX as u64) as u32;
                (Buffer { packets: p, bytes: u64::MAX }, Origin::Default)
            }
        },
    }
}

/// The ECN threshold of a port with `role` at `rate`, in the topology's queue unit: its role's own
/// threshold, else the topology's, else the default (host NICs do not mark by default).
pub fn threshold_of(t: &TopologyConfig, role: PortRole, rate: Rate) -> (Threshold, Origin) {
    let unit = t.queue_unit;
    if let Some(k) = t.ecn_k_by_role.get(role.name()) {
        return (Threshold { unit, k: k.round() as u64 }, Origin::Role);
    }
    if role == PortRole::HostUp {
        return (Threshold::OFF, Origin::Default);
    }
    let given = match unit {
        QueueUnit::Bytes => t.ecn_k_bytes,
        QueueUnit::Packets => t.ecn_k_packets.map(|k| k.round() as u64),
    };
    match given {
        Some(k) => (Threshold { unit, k }, Origin::Topology),
        None => (Threshold { unit, k: default_k(rate, unit) }, Origin::Default),
    }
}

impl Fabric {
    pub fn build(t: &TopologyConfig, tp: &TransportConfig) -> Fabric {
        let (nl, ns, hpl, lpp) = (t.leaves, t.spines, t.hosts_per_leaf, t.links_per_pair);
        let hosts = nl * hpl;
        let uplinks = ns * lpp;
        // The numbering, before anything is built: every id below comes from these facts.
        let mut facts = FabricFacts {
            hosts,
            leaves: nl,
            spines: ns,
            hosts_per_leaf: hpl,
            host_leaf: DivU32::new(hpl.max(1)),
            links_per_pair: lpp,
            uplinks,
            path_delay: Vec::new(),
            mtu_wire_bytes: tp.mss_bytes + tp.header_bytes,
            spine_down: Vec::new(),
            leaf_up: Vec::new(),
            host_delay: Time::ZERO,
            min_rtt: Time::ZERO,
            ack_wire_bytes: tp.ack_bytes,
            host_rate: Rate(0),
        };
        let mut nodes = Vec::with_capacity((hosts + nl + ns) as usize);
        let mut ports: Vec<Port> = Vec::new();

        let host_rate = Rate::from_gbps(t.host_rate_gbps);
        let fabric_rate = Rate::from_gbps(t.fabric_rate_gbps);
        let host_delay = Time::from_us_f64(t.host_delay_us);
        let fabric_delay = Time::from_us_f64(t.fabric_delay_us);
        (facts.host_rate, facts.host_delay) = (host_rate, host_delay);
        let mk = |owner: NodeId, peer: NodeId, role: PortRole, slot: u32, rate: Rate, delay: Time| {
            let mut port = Port::new(PortLink { owner, peer, role, slot, rate, delay }, buffer_of(t, tp, role, rate).0, threshold_of(t, role, rate).0);
            // Every port, host NICs included, has the topology's strict-priority levels (`port.rs`).
            port.set_priority_levels(t.priority_queues.clamp(1, u8::MAX as u32) as u8);
            port
        };
        let next_port = |ports: &Vec<Port>| PortId(ports.len() as u32);

        let nic_control = nic_control_kinds(tp);
        for h in facts.host_ids() {
            nodes.push(Node { kind: NodeKind::Host, index: h.0, first_port: next_port(&ports), n_ports: 1 });
            let leaf = facts.leaf_node(facts.leaf_of_host(h));
            let mut nic = mk(facts.host_node(h), leaf, PortRole::HostUp, 0, host_rate, host_delay);
            nic.set_control_kinds(nic_control);
            ports.push(nic);
        }
        for l in facts.leaf_ids() {
            nodes.push(Node { kind: NodeKind::Leaf, index: l.0, first_port: next_port(&ports), n_ports: hpl + uplinks });
            for i in 0..hpl {
                // A leaf's down port to a host has the host's number as its slot.
                let h = facts.host_on_leaf(l, i);
                ports.push(mk(facts.leaf_node(l), facts.host_node(h), PortRole::LeafDown, h.0, host_rate, host_delay));
            }
            for u in 0..uplinks {
                let s = facts.spine_of_uplink(u);
                ports.push(mk(facts.leaf_node(l), facts.spine_node(s), PortRole::LeafUp, u, fabric_rate, fabric_delay));
            }
        }
        for s in facts.spine_ids() {
            nodes.push(Node { kind: NodeKind::Spine, index: s.0, first_port: next_port(&ports), n_ports: nl * lpp });
            for l in facts.leaf_ids() {
                for k in 0..lpp {
                    ports.push(mk(facts.spine_node(s), facts.leaf_node(l), PortRole::SpineDown, facts.down_slot(l, k), fabric_rate, fabric_delay));
                }
            }
        }

        let mut fabric = Fabric { nodes, ports, facts, leaf_routes: Routes::default(), spine_routes: Routes::default(), leaf_paths: Vec::new() };

        // Per-link overrides: rate, delay, failure, on one or both directions.
        for o in &t.links {
            let links: Vec<u32> = match o.link {
                Some(k) => vec![k],
                None => (0..lpp).collect(),
            };
            // The config's numbers become ids here, once.
            let (leaf, spine) = (LeafId(o.leaf), SpineId(o.spine));
            for k in links {
                let mut targets = Vec::new();
                if o.direction != Direction::Down {
                    targets.push(fabric.uplink_port(leaf, fabric.facts.uplink_to(spine, k)));
                }
                if o.direction != Direction::Up {
                    targets.push(fabric.spine_down_port(spine, fabric.facts.down_slot(leaf, k)));
                }
                for p in targets {
                    let port = &mut fabric.ports[p.index()];
                    if let Some(r) = o.rate_gbps {
                        // Defaults follow the link's own rate.
                        let rate = Rate::from_gbps(r);
                        port.set_rate(rate);
                        port.set_limits(buffer_of(t, tp, port.role, rate).0, threshold_of(t, port.role, rate).0);
                    }
                    if let Some(d) = o.delay_us {
                        port.delay = Time::from_us_f64(d);
                    }
                    if o.failed {
                        port.up = false;
                    }
                    if o.blackhole {
                        port.fault = WireFault::Blackhole;
                    } else if o.loss_rate > 0.0 {
                        // Seeded per port by `seed_wire_faults` before the run.
                        port.fault = WireFault::Lossy { rate: o.loss_rate, rng: Rng::new(0) };
                    }
                }
            }
        }
        fabric.compute_routes();
        let overridden: Vec<u32> = t.links.iter().map(|o| o.leaf).collect();
        fabric.facts.min_rtt = fabric.min_rtt(tp, &overridden);
        fabric
    }

    /// The port `id`.
    #[inline(always)]
    pub fn port(&self, id: PortId) -> &Port {
        &self.ports[id.index()]
    }
    /// The port `id`, for changing.
    #[inline(always)]
    pub fn port_mut(&mut self, id: PortId) -> &mut Port {
        &mut self.ports[id.index()]
    }
    /// Every port id, in order.
    pub fn port_ids(&self) -> impl Iterator<Item = PortId> + Clone {
        (0..self.ports.len() as u32).map(PortId)
    }
    /// The node `id`.
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
    /// The ports of node `id`, first to last.
    pub fn ports_of(&self, id: NodeId) -> impl Iterator<Item = PortId> + Clone {
        let n = self.node(id);
        (n.first_port.0..n.first_port.0 + n.n_ports).map(PortId)
    }

    /// See [`FabricFacts::min_rtt`]. `overridden`: the leaves that a `topology.links` entry changes.
    ///
    /// Host links are all alike, and so are the links of every leaf no override names: every ordered pair
    /// of two such leaves has the same round trip. So the minimum is taken over the pairs that involve an
    /// overridden leaf and over one pair of the others, instead of over every pair (with each pair's paths,
    /// that was `leaves^2 x spines^2` steps, minutes for a dry run of 8,000 leaves); the result is the same.
    fn min_rtt(&self, tp: &TransportConfig, overridden: &[u32]) -> Time {
        let f = &self.facts;
        let hop = |port: PortId, bytes: u32| {
            let p = self.port(port);
            p.delay + p.tx_time(bytes)
        };
        // One way from the first host of leaf `a` to the first host of leaf `b`, over the fastest path.
        let one_way = |a: LeafId, b: LeafId, bytes: u32| -> Time {
            let ends = hop(self.host_nic(f.host_on_leaf(a, 0)), bytes) + hop(self.leaf_down_port(f.host_on_leaf(b, 0)), bytes);
            if a == b {
                return ends;
            }
            let mut best = Time::MAX;
            for &up in self.leaf_candidates(a, b) {
                let spine = f.spine_at(self.port(up).peer);
                for &down in self.spine_candidates(spine, b) {
                    best = best.min(ends + hop(up, bytes) + hop(down, bytes));
                }
            }
            best
        };
        let (data, ack) = (tp.mss_bytes + tp.header_bytes, tp.ack_bytes);
        let mut best = Time::MAX;
        let mut pair = |a: LeafId, b: LeafId| {
            let (out, back) = (one_way(a, b, data), one_way(b, a, ack));
            if out != Time::MAX && back != Time::MAX {
                best = best.min(out + back);
            }
        };
        let mut is_special = vec![false; f.leaves as usize];
        for &l in overridden {
            if let Some(s) = is_special.get_mut(l as usize) {
                *s = true;
            }
        }
        let special = |l: LeafId| is_special[l.0 as usize];
        let specials: Vec<LeafId> = f.leaf_ids().filter(|&l| special(l)).collect();
        for &a in &specials {
            for b in f.leaf_ids().filter(|&b| b != a) {
                pair(a, b);
                if !special(b) {
                    pair(b, a);
                }
            }
        }
        let mut plain = f.leaf_ids().filter(|&l| !special(l));
        if let (Some(a), Some(b)) = (plain.next(), plain.next()) {
            pair(a, b);
        }
        if best == Time::MAX {
            one_way(LeafId(0), LeafId(0), data) + one_way(LeafId(0), LeafId(0), ack)
        } else {
            best
        }
    }

    fn compute_routes(&mut self) {
        let f = &self.facts;
        let (nl, ns, lpp, ups) = (f.leaves as usize, f.spines as usize, f.links_per_pair, f.uplinks);
        let mut spine_routes = vec![Vec::new(); ns * nl];
        for s in f.spine_ids() {
            for d in f.leaf_ids() {
                for k in 0..lpp {
                    let p = self.spine_down_port(s, f.down_slot(d, k));
                    if self.port(p).up {
                        spine_routes[s.index() * nl + d.index()].push(p);
                    }
                }
            }
        }
        let mut leaf_routes = vec![Vec::new(); nl * nl];
        let mut leaf_paths = vec![Vec::new(); nl * nl];
        let mut path_delay = vec![Time::MAX; nl * ups as usize * nl];
        for l in f.leaf_ids() {
            for u in 0..ups {
                let p = self.uplink_port(l, u);
                let port = self.port(p);
                let s = f.spine_of_uplink(u);
                for d in f.leaf_ids() {
                    if d == l {
                        continue;
                    }
                    let down = &spine_routes[s.index() * nl + d.index()];
                    if port.up && !down.is_empty() {
                        leaf_routes[l.index() * nl + d.index()].push(p);
                        leaf_paths[l.index() * nl + d.index()].push(u as u16);
                        let best_down = down.iter().map(|&q| self.port(q).delay).min().unwrap();
                        path_delay[(l.index() * ups as usize + u as usize) * nl + d.index()] = port.delay + best_down;
                    }
                }
            }
        }
        let mtu = self.facts.mtu_wire_bytes as u64;
        let facts_of = |p: &Port| {
            let buffer_bytes = if p.cap_bytes != u64::MAX { p.cap_bytes } else { (p.cap_packets as u64).saturating_mul(mtu) };
            LinkFacts { rate: p.rate, delay: p.delay, buffer_bytes, up: p.up }
        };
        let mut spine_down = Vec::with_capacity(ns * nl * lpp as usize);
        for s in f.spine_ids() {
            for slot in 0..f.leaves * lpp {
                spine_down.push(facts_of(self.port(self.spine_down_port(s, slot))));
            }
        }
        let mut leaf_up = Vec::with_capacity(nl * ups as usize);
        for l in f.leaf_ids() {
            for u in 0..ups {
                leaf_up.push(facts_of(self.port(self.uplink_port(l, u))));
            }
        }
        self.facts.leaf_up = leaf_up;
        self.spine_routes = Routes::new(&spine_routes);
        self.leaf_routes = Routes::new(&leaf_routes);
        self.leaf_paths = leaf_paths;
        self.facts.path_delay = path_delay;
        self.facts.spine_down = spine_down;
    }

    /// The port of `port`'s peer on the same link, pointing back (a packet sent on `port` arrives at the
    /// peer through it): a leaf's uplink and the spine's down link to that leaf, a host's NIC and its leaf's
    /// port down to it.
    pub fn reverse_port(&self, port: PortId) -> PortId {
        let p = self.port(port);
        let f = &self.facts;
        let lpp = f.links_per_pair;
        match p.role {
            PortRole::HostUp => self.leaf_down_port(f.host_at(p.owner)),
            // A leaf's down port has its host's number as its slot.
            PortRole::LeafDown => self.host_nic(HostId(p.slot)),
            PortRole::LeafUp => {
                let leaf = f.leaf_at(p.owner);
                self.spine_down_port(f.spine_of_uplink(p.slot), f.down_slot(leaf, p.slot % lpp))
            }
            PortRole::SpineDown => {
                let spine = f.spine_at(p.owner);
                self.uplink_port(f.leaf_of_down_slot(p.slot), f.uplink_to(spine, p.slot % lpp))
            }
        }
    }

    /// Gives each port of `node` whose role is in `roles` a rate estimator ([`crate::dre`]) run by `cfg`
    /// (a switch's balancer asked for them: `SwitchBalancer::rate_estimator`).
    pub fn estimate_rates(&mut self, node: NodeId, roles: &[PortRole], cfg: crate::dre::DreConfig) {
        for id in self.ports_of(node) {
            let p = self.port_mut(id);
            if roles.contains(&p.role) {
                p.estimate_rate(cfg);
            }
        }
    }

    /// Gives every lossy port its own random stream, derived from the scenario seed and the port id.
    pub fn seed_wire_faults(&mut self, seed: u64) {
        for (i, p) in self.ports.iter_mut().enumerate() {
            if let WireFault::Lossy { rng, .. } = &mut p.fault {
                *rng = Rng::derive(seed, Stream::LinkLoss, i as u64);
            }
        }
    }

    /// The switch that owns port `port` (among all switches, leaves then spines), or `None` for a host NIC.
    #[inline(always)]
    pub fn switch_owning(&self, port: &Port) -> Option<SwitchIndex> {
        (!self.facts.is_host(port.owner)).then(|| self.facts.switch_of(port.owner))
    }

    /// Port id of host `host`'s NIC.
    #[inline]
    pub fn host_nic(&self, host: HostId) -> PortId {
        self.node(self.facts.host_node(host)).first_port
    }
    /// Port id of leaf `l`'s uplink `u`.
    pub fn uplink_port(&self, leaf: LeafId, uplink: u32) -> PortId {
        let first = self.node(self.facts.leaf_node(leaf)).first_port;
        PortId(first.0 + self.facts.hosts_per_leaf + uplink)
    }
    /// Port id of the leaf's down port to `host`.
    #[inline]
    pub fn leaf_down_port(&self, host: HostId) -> PortId {
        let f = &self.facts;
        let first = self.node(f.leaf_node(f.leaf_of_host(host))).first_port;
        PortId(first.0 + f.host_rank(host))
    }
    /// Port id of spine `s`'s down link `slot` (`leaf * links + link`).
    pub fn spine_down_port(&self, spine: SpineId, slot: u32) -> PortId {
        PortId(self.node(self.facts.spine_node(spine)).first_port.0 + slot)
    }

    /// Uplink ports from leaf `l` that reach leaf `d`.
    #[inline]
    pub fn leaf_candidates(&self, leaf: LeafId, dst_leaf: LeafId) -> &[PortId] {
        self.leaf_routes.get(leaf.0 * self.facts.leaves + dst_leaf.0)
    }
    /// Down ports from spine `s` to leaf `d`.
    #[inline]
    pub fn spine_candidates(&self, spine: SpineId, dst_leaf: LeafId) -> &[PortId] {
        self.spine_routes.get(spine.0 * self.facts.leaves + dst_leaf.0)
    }
    /// Usable path tags (uplink indices) from `src_leaf` to `dst_leaf`: what a host edge balancer may choose.
    pub fn paths(&self, src_leaf: LeafId, dst_leaf: LeafId) -> &[u16] {
        &self.leaf_paths[src_leaf.index() * self.facts.leaves as usize + dst_leaf.index()]
    }

    /// Ideal FCT of `size` payload bytes from `src` to `dst` in an idle fabric with an unbounded window:
    /// store-and-forward pipelining over the best path, i.e. propagation on every link, plus the first
    /// packet's serialisation on every link, plus the rest of the wire bytes at the path's bottleneck rate.
    /// With a `handshake`, one SYN and one SYN-ACK (ACK-sized) over their best paths come first.
    pub fn ideal_fct(&self, src: HostId, dst: HostId, size: u64, tp: &TransportConfig, handshake: bool) -> Time {
        let mss = tp.mss_bytes as u64;
        let hdr = tp.header_bytes as u64;
        let pkts = size.div_ceil(mss).max(1);
        let data = self.best_chain(src, dst, size + pkts * hdr, size.min(mss) + hdr);
        if !handshake {
            return data;
        }
        let small = tp.ack_bytes as u64;
        self.best_chain(src, dst, small, small) + self.best_chain(dst, src, small, small) + data
    }

    /// The links of the path [`Fabric::ideal_fct`] finds best for `size` payload bytes from `src` to `dst`
    /// (first the sender's NIC, last the receiving leaf's down-link), for a flow alone on the fabric
    /// ([`crate::transport::alone`]). The first of equally fast paths, in routing order.
    pub fn best_hops(&self, src: HostId, dst: HostId, size: u64, tp: &crate::transport::TcpParams) -> Vec<Hop> {
        let pkts = size.div_ceil(tp.mss).max(1);
        let (wire_total, first) = (size + pkts * tp.header as u64, size.min(tp.mss) + tp.header as u64);
        let mut best: Option<(Time, Vec<Hop>)> = None;
        self.each_path(src, dst, |hops| {
            let t = chain_time(hops, wire_total, first);
            if best.as_ref().is_none_or(|(b, _)| t < *b) {
                best = Some((t, hops.to_vec()));
            }
        });
        best.map(|(_, h)| h).unwrap_or_default()
    }

    /// Shortest time to deliver `wire_total` bytes from `src` to `dst` in an idle fabric, the first packet
    /// (`first` bytes) store-and-forward on every link and the rest at the bottleneck rate behind it.
    fn best_chain(&self, src: HostId, dst: HostId, wire_total: u64, first: u64) -> Time {
        let mut best = Time::MAX;
        self.each_path(src, dst, |hops| best = best.min(chain_time(hops, wire_total, first)));
        best
    }

    /// Calls `f` with the links of every path from `src` to `dst`, in routing order: the sender's NIC, an
    /// uplink, a spine's down-link and the receiving leaf's down-link (the NIC and the down-link within a
    /// leaf). On the stack: [`Fabric::ideal_fct`] runs for every flow.
    fn each_path(&self, src: HostId, dst: HostId, mut f: impl FnMut(&[Hop])) {
        let hop = |p: &Port| Hop { rate: p.rate, delay: p.delay };
        let nic = hop(self.port(self.host_nic(src)));
        let down = hop(self.port(self.leaf_down_port(dst)));
        let (sl, dl) = (self.facts.leaf_of_host(src), self.facts.leaf_of_host(dst));
        if sl == dl {
            return f(&[nic, down]);
        }
        for &up in self.leaf_candidates(sl, dl) {
            let upp = self.port(up);
            let spine = self.facts.spine_at(upp.peer);
            for &sd in self.spine_candidates(spine, dl) {
                f(&[nic, hop(upp), hop(self.port(sd)), down]);
            }
        }
    }
}

/// [`Fabric::ideal_fct`]'s pipelining over `hops`: the first packet (`first` bytes) store-and-forward on every
/// link, the rest of `wire_total` at the bottleneck rate behind it.
fn chain_time(hops: &[Hop], wire_total: u64, first: u64) -> Time {
    let mut t = Time::ZERO;
    let mut bottleneck = Rate(u64::MAX);
    for h in hops {
        t += h.delay + h.rate.tx_time(Bytes(first));
        bottleneck = bottleneck.min(h.rate);
    }
    t + bottleneck.tx_time(Bytes(wire_total - first))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The minimum round trip taken over the overridden leaves' pairs and one plain pair is the minimum
    /// over every pair (every leaf counted as overridden), for faster, slower, longer, failed and one-way
    /// links. Checked to fail with the plain pair left out (a fabric whose fastest pair is plain).
    #[test]
    fn the_minimum_round_trip_over_the_overridden_leaves_is_the_minimum_over_every_pair() {
        use crate::config::{Direction, LinkOverride};
        let link = |leaf, spine, change: fn(&mut LinkOverride)| {
            let mut o = LinkOverride { leaf, spine, ..Default::default() };
            change(&mut o);
            o
        };
        let cases: Vec<Vec<LinkOverride>> = vec![
            vec![],
            vec![link(1, 0, |o| o.rate_gbps = Some(40.0))],
            vec![link(1, 0, |o| o.rate_gbps = Some(1.0)), link(1, 1, |o| o.rate_gbps = Some(1.0))],
            vec![link(2, 1, |o| o.delay_us = Some(0.1)), link(3, 0, |o| o.delay_us = Some(50.0))],
            vec![link(0, 0, |o| o.failed = true), link(4, 1, |o| (o.rate_gbps, o.direction) = (Some(100.0), Direction::Up))],
            vec![link(0, 0, |o| o.delay_us = Some(20.0)), link(0, 1, |o| o.delay_us = Some(20.0)), link(5, 1, |o| (o.delay_us, o.direction) = (Some(0.0), Direction::Down))],
        ];
        let tp = TransportConfig::default();
        for links in cases {
            let t = TopologyConfig { leaves: 6, spines: 2, hosts_per_leaf: 2, links, ..Default::default() };
            let fabric = Fabric::build(&t, &tp);
            let every: Vec<u32> = (0..t.leaves).collect();
            assert_eq!(fabric.facts.min_rtt, fabric.min_rtt(&tp, &every), "{:?}", t.links);
        }
    }

    /// The conversions between kinds of ids agree with the nodes and ports the fabric built: each leaf's
    /// and spine's node has its kind and number, a switch's index follows the leaves-then-spines order,
    /// a host's leaf and rank lead back to it and to its leaf's down port, and every port's reverse is a
    /// port of its peer pointing back. Checked to fail with `leaf_at` off by one.
    #[test]
    fn the_id_conversions_agree_with_the_built_fabric() {
        let t = TopologyConfig { leaves: 3, spines: 2, hosts_per_leaf: 4, links_per_pair: 2, ..Default::default() };
        let fabric = Fabric::build(&t, &TransportConfig::default());
        let f = &fabric.facts;
        for l in f.leaf_ids() {
            let n = f.leaf_node(l);
            assert_eq!((fabric.node(n).kind, fabric.node(n).index), (NodeKind::Leaf, l.0));
            assert_eq!((f.leaf_at(n), f.switch_of(n), f.node_host(n)), (l, SwitchIndex(l.0), None));
        }
        for s in f.spine_ids() {
            let n = f.spine_node(s);
            assert_eq!((fabric.node(n).kind, fabric.node(n).index), (NodeKind::Spine, s.0));
            assert_eq!((f.spine_at(n), f.switch_of(n)), (s, SwitchIndex(f.leaves + s.0)));
        }
        for h in f.host_ids() {
            let n = f.host_node(h);
            assert_eq!((fabric.node(n).kind, f.node_host(n), f.host_at(n)), (NodeKind::Host, Some(h), h));
            let (leaf, rank) = (f.leaf_of_host(h), f.host_rank(h));
            assert_eq!(f.host_on_leaf(leaf, rank), h);
            let down = fabric.port(fabric.leaf_down_port(h));
            assert_eq!((down.owner, down.peer), (f.leaf_node(leaf), n));
        }
        for p in fabric.port_ids() {
            let back = fabric.reverse_port(p);
            assert_eq!((fabric.port(back).owner, fabric.port(back).peer), (fabric.port(p).peer, fabric.port(p).owner), "port {p}");
            assert_eq!(fabric.reverse_port(back), p);
        }
    }

    #[test]
    fn the_multiply_divider_matches_division_for_every_kind_of_numerator() {
        // Divisors of every shape (1, powers of two, odd, near the top of the range) against numerators at
        // the edges of each quotient and across the whole 32-bit range.
        let divisors = [1u32, 2, 3, 5, 7, 8, 9, 10, 16, 20, 24, 25, 31, 32, 48, 64, 100, 127, 1000, 65_537, u32::MAX / 3, u32::MAX - 1, u32::MAX];
        for &d in &divisors {
            let div = DivU32::new(d);
            let mut ns: Vec<u32> = (0..2000).chain([u32::MAX, u32::MAX - 1, u32::MAX / 2]).collect();
            for q in [1u64, 2, 3, 1000, 1 << 20] {
                let at = q * d as u64;
                if at <= u32::MAX as u64 {
                    ns.extend([at as u32, (at - 1) as u32]);
                    if at < u32::MAX as u64 {
                        ns.push(at as u32 + 1);
                    }
                }
            }
            let mut x = 0x9E37_79B9u32;
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                ns.push(x);
            }
            for n in ns {
                assert_eq!(div.div(n), n / d, "{n} / {d}");
            }
        }
    }
}
