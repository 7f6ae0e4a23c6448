//! TR (Traffic-aware Rerouting): per-packet uplink choice at the source leaf that never lets a packet
//! overtake its flow's previous one, with short flows sent the fastest way and long flows kept away from
//! short ones (Zhang, Lei, Zhang, Zou, Huang, Li, *Fine-grained load balancing with traffic-aware rerouting
//! in datacenter networks*, J. Cloud Computing 10:37, 2021; cited by line "L", see docs/references.md).
//!
//! **Rule** (section "TR design": "Basic insight" L63-L67, "TR overview" L77-L79, Algorithm 1 as described
//! in L87, "TNL calculation" L94-L112, "Counting the number of short flows" L116).
//!
//! ```text
//!  host ── source leaf M ──uplink j── spine ── leaf E ── host      data: M picks j per packet
//!              ▲                        │
//!              └──── ACK, 5 TTL bits ◄──┘  the spine writes its queue toward E, M reads it and
//!                                          puts the bits back before the ACK reaches the host
//! ```
//!
//! * In a two-tier fabric packets of a flow can only change order between the two leaves, so it is enough
//!   that each packet reaches the destination leaf after the previous one (L94-L96). For every data packet
//!   the source leaf therefore predicts, per candidate uplink `j`, its *Time to Next Leaf* (Eq. 1, L110):
//!   `TNL_j = ct + pd_j + lql_j/lqw_j + sql_j/sqw_j`: arrival time at the leaf, plus the idle leaf-to-leaf
//!   propagation through `j`, plus the waiting time in the leaf's own queue `j`, plus the waiting time in the
//!   spine's queue toward the destination leaf.
//! * The spine's queue is not local: spines write their queue length into returning ACKs, in 5 of the 8 TTL
//!   bits (3 bits suffice for the hop count in a datacenter), as a linear code whose unit is `BS / 2^k` for a
//!   spine buffer `BS` and `k = 5` bits; the source leaf reads the code, remembers it for that uplink and
//!   restores the bits, so hosts never see the change (L104-L106).
//! * Uplinks whose TNL does not exceed the TNL given to the flow's previous packet are excluded: through them
//!   this packet could arrive first (L63, L87). Among the remaining set `S`:
//!   a **short** flow (at most `Tl` = 100 KB sent so far, counted by the switch, L65) takes the uplink with
//!   the smallest TNL; a **long** flow takes the uplink of `S` that carries the fewest short flows, the
//!   fastest of them on a tie (L87). The flow then remembers the TNL of the uplink it used.
//! * Short flows per uplink, `ns_j` (L116): +1 when a short flow appears on `j`; -1 when it becomes long; -1
//!   when it has sent nothing on `j` for one RTT (inactive); +1 again when it comes back. Since a short flow
//!   moves per packet it can be present on several uplinks at once, so presence is kept per (flow, uplink):
//!   `ns_j` is the number of still-short flows with a packet on `j` within the last `T_idle`. Expiry is exact
//!   (a per-uplink time-ordered list, processed before every decision), not a periodic sweep.
//!
//! **Where the paper is vague or contradictory, and the parameter that decides** (details and line
//! references in `docs/assumptions.md`, § TR):
//! * *Equal TNL.* L63 and L96 call an uplink safe when its TNL is "not smaller", L87 when it is "larger".
//!   `order_compare = strict` (L87's algorithm; with equal predictions the order is not decided by the rule).
//! * *No safe uplink* (the paper does not consider it; happens when a spine report falls or with
//!   quantisation): `empty_set_fallback = last_port`, the previous packet's uplink, where FIFO order holds;
//!   `max_tnl` takes the uplink with the largest TNL. The remembered TNL is then kept at its old value if
//!   larger (`p_tnl_update = max`); `chosen` stores the chosen uplink's TNL as Algorithm 1 literally does.
//! * *Ties* among equal smallest TNLs (or equal counts and TNLs for long flows): not specified;
//!   `tie_break = random` (the switch's seeded stream, drawn only when a tie remains) or `lowest_index`.
//! * *Which spine queue and for which destination* (L104, L116 keep one value per output queue): the spine
//!   writes into an ACK the queue of its port toward the ACK's *source* leaf, which is the queue the data the
//!   ACK answers went through; the leaf files it under (ingress uplink, that leaf). `spine_table_key =
//!   uplink_dst_leaf`; `uplink` keeps one value per uplink as the paper literally does (exact only with two
//!   leaves). The ingress uplink is the port the ACK came in by ([`SwitchCx::ingress`]), not a header field.
//! * *The code* (L106, "BS/2k" has lost its superscript): step `BS/2^k`; encode rounds down and clamps at
//!   `2^k - 1`; `BS` in bytes, the spine port's own buffer (`spine_buffer_bytes = 0`; a buffer counted in
//!   packets is taken as packets x full-size wire bytes); decode to the step's lower edge (`sq_decode =
//!   lower`) or its middle (`mid`); `code_bits` sets `k`. The spine measures its queue in bytes, the packet
//!   on the wire included.
//! * *What carries the report* (L106: ACKs, or reverse data): `stamp_packets = acks` (ACK and SYN-ACK) or
//!   `all_reverse` (every packet crossing a spine). The spine stamps on arrival. The header field is the
//!   balancer header's `scratch` (bits 0..k-1: the code; bit 15: "a report is present", which a real TTL
//!   needs no bit for); hosts send 0 and the leaf sets it back to 0.
//! * *Stale reports*: the paper keeps the last one until the next; `stale_us` > 0 lets older reports count
//!   as an empty queue. Before any report the spine queue counts as empty.
//! * *Local queueing delay* `lql/lqw`: `local_delay = exact` is the true wait of a packet enqueued now (the
//!   rest of the packet on the wire plus the bytes behind it); `queued_bytes` divides the queue, the packet on
//!   the wire counted whole, by the rate.
//! * *Own serialisation.* Eq. 1 leaves out the packet's own transmission time, so a packet shorter than its
//!   predecessor (a flow's last segment) can still overtake it; `tnl_serialisation = true` adds its
//!   serialisation on the uplink and on the spine's port (TNL then is the arrival of its last bit). Eq. 1
//!   does not see the flow's own previous packet on its way to the spine, so on that packet's uplink it would
//!   predict a short segment to arrive first although it queues behind that packet at both hops; with the
//!   option the TNL of that uplink is therefore at least the previous packet's plus this packet's
//!   serialisation at the spine (`FlowData::p_tnl_on_last` says whether the bound's packet left by that
//!   uplink). Without the floor such a segment found every fast uplink unsafe and crossed a slow spine.
//! * *Long-flow granularity.* L87 places every packet P of a long flow afresh, behind the same order filter as
//!   a short flow's (`long_granularity = packet`). L77 and L261 say TR "adjusts the granularity of path
//!   switching" by flow type; read as coarser switching for long flows, `flowlet` keeps a long flow on its
//!   uplink while its packets follow each other within `long_flowlet_gap_us` (0: one base RTT, L116's measure
//!   of a flow gone idle) and places the first packet after a longer gap, and the packet that makes the flow
//!   long, by the long-flow rule. A packet kept on its flowlet's uplink needs no filter: FIFO keeps it behind
//!   its predecessor.
//! * *"One RTT"* of inactivity (L116): `short_idle_timeout_us = 0` takes the base (propagation) RTT between
//!   hosts on this leaf and the nearest other leaf ([`FabricFacts::propagation_rtt_from`]): four host-link
//!   delays plus the fastest leaf-to-leaf path there and the fastest back, 200 µs in the paper's two-leaf
//!   setups.
//! * *Bytes sent* (L65): payload of every data packet, retransmissions included (`count_bytes = payload`;
//!   `wire` counts headers too). A flow is long once its count exceeds `Tl` (L65 "exceeds", L116 "greater
//!   than"); the packet that crosses the threshold is already placed by the long-flow rule.
//! * *ACKs and other reverse traffic* at the leaf they enter the fabric from: the paper does not say how they
//!   are routed. `ack_routing = tnl_short` routes them by the short-flow rule (order filter, smallest TNL) in
//!   a table of their own, never counted in `fs` or `ns` (otherwise every receiving leaf would show permanent
//!   short flows on its uplinks); `ecmp` hashes them.
//! * *Flow entries* are made at the first packet of a flow (the SYN when the run has a handshake, L87) and
//!   dropped after `flow_idle_expiry_us` without packets; a flow that comes back starts afresh. The table is
//!   exact per 5-tuple (the paper indexes it by a hash, L87).
//! * *Spines with parallel links to a leaf* (the paper has one): a packet leaves on the link with the index
//!   of the link it came in by (the fastest working one if that link is down), and the leaf's TNL uses that
//!   link's delay, rate and report.
//! * *Packets not from a TCP/UDP flow's sender* (probes, cancel notices) follow `ack_routing`.
//!
//! **Defaults and sources.** `long_threshold_bytes` = 100,000 (L65, L116; Fig. 9 finds 100 KB best among 10 KB
//! to 1 MB, L192; KB taken as 1,000 B). `code_bits` = 5 (L106: 8 TTL bits less 3 for the hop count).
//! `short_idle_timeout_us` = one base RTT (L116). `long_granularity` = packet (L87). Everything else is a dclb
//! choice made where the paper is silent (above), each defaulting to the reading closest to the paper's text.
//!
//! **Overhead** (Fig. 15): `state_bytes` is the memory the switch's tables hold now (flow entries with their
//! keys, per-(flow, uplink) presence records and their expiry list, the spine report table, the counts); the
//! engine counts decisions per switch, and [`SwitchBalancer::counters`] adds TR's own: packets decided per
//! class, uplinks excluded by the order filter, fallbacks, reports written and read, peak state.

use super::ecmp::flow_hash_index;
use super::flowhash::FlowMap;
use super::flowtable::{Clock, FlowTable, Timeout};
use super::params::{param_choice, scheme_params};
use super::scheme::{per_switch, reflect_path_and_class, scheme_counters, CounterReport, Placement, SchemeSpec};
use super::{Decision, Hooks, PacketMut, SwitchBalancer, SwitchCx, SwitchInfo, SwitchKind, SwitchPlace};
use crate::fabric::{FabricFacts, LinkFacts};
use crate::ids::{LeafId, PortId, SpineId};
use crate::packet::{Packet, PacketKind};
use crate::units::Time;
use std::collections::VecDeque;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "tr",
    placement: Placement::Switch,
    granularity: "packet",
    summary: "per packet at the source leaf: uplinks whose Time-to-Next-Leaf would let the packet overtake its flow's previous one are excluded; short flows take the smallest TNL, long flows the uplink with the fewest short flows; spine queues return in ACK bits",
    params: TrParams::SPECS,
    install: |cx, p| {
        let p = TrParams::from_params(p);
        per_switch(cx.switches, |s| Tr::new(cx.facts, s, p))
    },
    reflect: reflect_path_and_class,
};

param_choice! {
    /// Whether an uplink whose TNL equals the previous packet's is safe.
    pub enum OrderCompare {
        /// Safe only if its TNL is larger (Algorithm 1, L87).
        Strict = "strict",
        /// Safe if not smaller (L63, L96).
        NonStrict = "non_strict",
    }
}

param_choice! {
    /// Where a packet goes when no uplink passes the order filter.
    pub enum Fallback {
        /// The uplink of the flow's previous packet (FIFO behind it).
        LastPort = "last_port",
        /// The uplink with the largest TNL.
        MaxTnl = "max_tnl",
    }
}

param_choice! {
    /// What the flow remembers as its previous packet's TNL.
    pub enum PtnlUpdate {
        /// The larger of the old value and the chosen uplink's TNL.
        Max = "max",
        /// The chosen uplink's TNL (Algorithm 1 literally).
        Chosen = "chosen",
    }
}

param_choice! {
    /// How remaining ties are broken.
    pub enum TieBreak {
        Random = "random",
        LowestIndex = "lowest_index",
    }
}

param_choice! {
    /// What one spine report is filed under at the leaf.
    pub enum TableKey {
        /// (ingress uplink, the report's source leaf).
        UplinkDstLeaf = "uplink_dst_leaf",
        /// The ingress uplink alone (the paper's one value per output queue).
        Uplink = "uplink",
    }
}

param_choice! {
    /// How a code is turned back into a queue length.
    pub enum Decode {
        /// code x BS / 2^k: the step's lower edge.
        Lower = "lower",
        /// (code + 1/2) x BS / 2^k: the step's middle.
        Mid = "mid",
    }
}

param_choice! {
    /// How the leaf's own queueing delay is measured.
    pub enum LocalDelay {
        /// The exact wait of a packet enqueued now.
        Exact = "exact",
        /// Queued bytes (the packet on the wire counted whole) over the rate.
        QueuedBytes = "queued_bytes",
    }
}

param_choice! {
    /// Which packets crossing a spine carry its queue report.
    pub enum Stamp {
        /// ACKs and SYN-ACKs.
        Acks = "acks",
        /// Every packet.
        AllReverse = "all_reverse",
    }
}

param_choice! {
    /// How packets that are not a flow's data are routed at the leaf they enter the fabric from.
    pub enum AckRouting {
        /// The short-flow rule (order filter, smallest TNL), per reverse 5-tuple, never counted as a flow.
        TnlShort = "tnl_short",
        /// A hash of the 5-tuple.
        Ecmp = "ecmp",
    }
}

param_choice! {
    /// How often a long flow may change uplink.
    pub enum LongGranularity {
        /// Every packet is placed afresh by the long-flow rule, behind the same order filter as short flows
        /// (Algorithm 1 as L87 describes it: one decision per packet P, for either class).
        Packet = "packet",
        /// A long flow keeps its uplink while its packets follow one another within `long_flowlet_gap_us`;
        /// the first packet after a longer gap (and the packet that makes the flow long) is placed afresh by
        /// the long-flow rule (L77, L261: TR "adjusts the granularity of path switching" by flow type).
        Flowlet = "flowlet",
    }
}

param_choice! {
    /// What a flow's sent bytes count.
    pub enum CountBytes {
        Payload = "payload",
        Wire = "wire",
    }
}

scheme_params! {
    /// TR's parameters.
    pub struct TrParams {
        /// Tl: a flow is long once the bytes it sent through the leaf exceed this, short while at most this
        #[source = "TR paper L65, L116 (100 KB); Fig. 9 best among 10 KB..1 MB"]
        long_threshold_bytes: u64 (bytes) in 1..=1_000_000_000_000_000 = 100_000,
        /// what a flow's sent bytes count: payload (retransmissions included) or wire bytes
        #[source = "dclb choice (the paper says 'data sent', L65)"]
        count_bytes: CountBytes = CountBytes::Payload,
        /// k: bits of the spine queue code an ACK carries (step = BS / 2^k)
        #[source = "TR paper L106: 5 of the 8 TTL bits"]
        code_bits: u32 in 1..=15 = 5,
        /// BS, the buffer the code's scale refers to; 0 = the spine port's own buffer
        #[source = "TR paper L106 ('buffer size of spine switch')"]
        spine_buffer_bytes: u64 (bytes) = 0,
        /// lower: code x BS/2^k; mid: (code + 1/2) x BS/2^k
        #[source = "dclb choice (L106 gives the encoding only)"]
        sq_decode: Decode = Decode::Lower,
        /// strict: an uplink is safe if its TNL is larger than the previous packet's; non_strict: not smaller
        #[source = "TR paper L87 (L63, L96 say 'not smaller')"]
        order_compare: OrderCompare = OrderCompare::Strict,
        /// where a packet goes when no uplink is safe: the previous packet's uplink, or the largest TNL
        #[source = "dclb choice (not in the paper)"]
        empty_set_fallback: Fallback = Fallback::LastPort,
        /// max: keep the larger of the old and the chosen TNL; chosen: the chosen uplink's TNL (Algorithm 1)
        #[source = "dclb choice (matters only after a fallback)"]
        p_tnl_update: PtnlUpdate = PtnlUpdate::Max,
        /// uplink_dst_leaf: one spine report per (uplink, destination leaf); uplink: one per uplink (paper)
        #[source = "dclb choice; the paper (L116) keeps one per output queue"]
        spine_table_key: TableKey = TableKey::UplinkDstLeaf,
        /// a short flow with no packet on an uplink for this long stops counting there; 0 = one base RTT
        #[source = "TR paper L116 ('one RTT'); base propagation RTT by dclb choice"]
        short_idle_timeout_us: Time = 0.0,
        /// exact: the true wait of a packet enqueued now; queued_bytes: queue (packet on the wire whole) / rate
        #[source = "dclb choice (Eq. 1 writes lql/lqw)"]
        local_delay: LocalDelay = LocalDelay::Exact,
        /// add the packet's own serialisation on the uplink and the spine port to its TNL (and, on the previous
        /// packet's uplink, never predict an arrival before that packet's plus this one's spine serialisation)
        #[source = "dclb option; off as in Eq. 1"]
        tnl_serialisation: bool = false,
        /// packet: a long flow's every packet is placed afresh (L87); flowlet: only after a gap of
        /// long_flowlet_gap_us, else it keeps its uplink
        #[source = "TR paper L87 (per packet); flowlet: a reading of L77, L261 ('adjusts the granularity')"]
        long_granularity: LongGranularity = LongGranularity::Packet,
        /// with long_granularity = flowlet: a long flow idle for longer than this is placed afresh; 0 = one
        /// base RTT (the short-flow counting window's automatic value)
        #[source = "dclb choice (L116's 'one RTT', the paper's one notion of a flow gone idle)"]
        long_flowlet_gap_us: Time = 0.0,
        /// which packets crossing a spine carry its queue: ACKs (and SYN-ACKs), or every packet
        #[source = "TR paper L104, L106 (ACKs; reverse data possible)"]
        stamp_packets: Stamp = Stamp::Acks,
        /// a spine report older than this counts as an empty queue; 0 = reports never age
        #[source = "dclb option; the paper keeps the last report"]
        stale_us: Time = 0.0,
        /// random (the switch's seeded stream) or lowest_index among uplinks still tied
        #[source = "dclb choice (the paper gives no tie rule)"]
        tie_break: TieBreak = TieBreak::Random,
        /// how ACKs and other non-data packets leave their leaf: the short-flow rule, or ECMP
        #[source = "dclb choice (the paper does not route ACKs)"]
        ack_routing: AckRouting = AckRouting::TnlShort,
        /// a flow entry with no packet for this long is dropped; the flow starts afresh if it returns
        #[source = "dclb choice (the paper does not delete entries)"]
        flow_idle_expiry_us: Time in 1.0..=1e9 = 10000.0,
    }
}

/// The "a report is present" bit of the scratch field (a real TTL needs none: every ACK from an uplink crossed
/// a spine).
pub const PRESENT: u16 = 1 << 15;

/// The code a spine writes for `queued` bytes in a buffer of `bs` bytes with `bits` bits: `floor(q 2^k / BS)`
/// clamped to `2^k - 1`.
pub fn encode(queued: u64, bs: u64, bits: u32) -> u16 {
    let top = (1u64 << bits) - 1;
    let code = if bs == 0 { top as u128 } else { ((queued as u128) << bits) / bs as u128 };
    code.min(top as u128) as u16
}

/// The queueing delay a leaf reads from `code`: the decoded length (lower edge or middle of the step
/// `bs / 2^bits`) at `rate`, rounded up to whole picoseconds.
pub fn decode_delay(code: u16, bs: u64, bits: u32, rate: crate::units::Rate, how: Decode) -> Time {
    // bytes = num / den; time = bytes * 8 / rate.
    let (num, den) = match how {
        Decode::Lower => (code as u128 * bs as u128, 1u128 << bits),
        Decode::Mid => ((2 * code as u128 + 1) * bs as u128, 1u128 << (bits + 1)),
    };
    if num == 0 {
        return Time::ZERO;
    }
    Time((num * 8 * 1_000_000_000_000).div_ceil(den * rate.bps().max(1) as u128) as u64)
}

/// Per-flow state at the source leaf (the uplink of the previous packet is the entry's port).
#[derive(Copy, Clone, Debug, Default)]
pub struct FlowData {
    /// Bytes sent so far through this leaf.
    pub fs: u64,
    /// TNL remembered for the previous packet (`Time::ZERO` before the first).
    pub p_tnl: Time,
    /// The flow has crossed `Tl`.
    pub long: bool,
    /// The packet whose TNL `p_tnl` is left by the previous packet's uplink, as that packet or ahead of it in
    /// the same queues. False only after a fallback onto another uplink kept an older, larger `p_tnl`
    /// (`p_tnl_update = max`). The field fits the padding after `long`: an entry is no larger with it.
    pub p_tnl_on_last: bool,
}

/// A spine report as filed at the leaf.
#[derive(Copy, Clone, Debug, Default)]
struct Report {
    valid: bool,
    code: u16,
    at: Time,
}

scheme_counters! {
    /// TR's own counters (see [`SwitchBalancer::counters`]).
    #[scheme = SPEC]
    pub struct TrCounters {
        /// data packets placed by the short-flow rule
        short_packets,
        /// data packets placed by the long-flow rule
        long_packets,
        /// non-data packets placed by `ack_routing`
        control_packets,
        /// candidate uplinks excluded by the order filter, summed over decisions
        excluded,
        /// decisions where no uplink was safe
        fallbacks,
        /// flow entries created
        flows,
        /// packets a spine wrote its queue into
        stamped,
        /// reports a leaf read (and removed) from packets arriving from its uplinks
        reports,
        /// largest `state_bytes` seen after a decision (a peak, not an event count)
        peak_state_bytes,
    }
}

/// TR at one switch: source-leaf decisions and report reading at leaves, stamping at spines.
pub struct Tr {
    p: TrParams,
    kind: SwitchKind,
    salt: u64,
    leaves: u32,
    uplinks: u32,
    lpp: u32,
    /// Forward data flows of this leaf's hosts.
    flows: FlowTable<FlowData>,
    /// Reverse streams (ACKs) routed by the short rule.
    acks: FlowTable<FlowData>,
    /// Spine reports: `[uplink * leaves + dst_leaf]`, or `[uplink]` with `spine_table_key = uplink`.
    sq: Vec<Report>,
    /// Short flows present per uplink.
    ns: Vec<u32>,
    /// (flow key, uplink) of every short flow counted in `ns`: when it last sent there.
    present: FlowMap<Time>,
    /// Per uplink, `(time, flow key)` of each short packet sent there, in time order: the expiry list.
    expiry: Vec<VecDeque<(Time, u128)>>,
    /// `T_idle` once resolved.
    t_idle: Option<Time>,
    /// Scratch: the TNL of each candidate in the decision at hand.
    tnl: Vec<Time>,
    counters: TrCounters,
}

/// The key of one (flow, uplink) presence record: the 5-tuple uses the low 104 bits.
#[inline]
fn presence_key(flow: u128, uplink: u32) -> u128 {
    flow | (uplink as u128) << 112
}

/// The down link `spine` uses toward `dst_leaf` for a packet that came in on link `link` of its pair: the same
/// link index if that link works, else the fastest working one (first on a tie). A slot.
pub fn down_slot(facts: &FabricFacts, spine: SpineId, dst_leaf: LeafId, link: u32) -> u32 {
    let lpp = facts.links_per_pair;
    let base = facts.down_slot(dst_leaf, 0);
    if link < lpp && facts.spine_down(spine, base + link).up {
        return base + link;
    }
    (base..base + lpp).filter(|&s| facts.spine_down(spine, s).up).min_by_key(|&s| facts.spine_down(spine, s).delay).unwrap_or(base)
}

impl Tr {
    pub fn new(facts: &FabricFacts, me: &SwitchInfo, p: TrParams) -> Tr {
        let leaf = me.kind == SwitchKind::Leaf;
        let uplinks = if leaf { facts.uplinks as usize } else { 0 };
        let reports = match p.spine_table_key {
            TableKey::UplinkDstLeaf => uplinks * facts.leaves as usize,
            TableKey::Uplink => uplinks,
        };
        let expiry = Timeout::Over(p.flow_idle_expiry_us);
        Tr {
            p,
            kind: me.kind,
            salt: me.salt,
            leaves: facts.leaves,
            uplinks: facts.uplinks,
            lpp: facts.links_per_pair,
            flows: FlowTable::exact(expiry, Clock::Timestamp),
            acks: FlowTable::exact(expiry, Clock::Timestamp),
            sq: vec![Report::default(); reports],
            ns: vec![0; uplinks],
            present: FlowMap::default(),
            expiry: vec![VecDeque::new(); uplinks],
            t_idle: (p.short_idle_timeout_us > Time::ZERO).then_some(p.short_idle_timeout_us),
            tnl: Vec::new(),
            counters: TrCounters::default(),
        }
    }

    /// Short flows counted on uplink `uplink` now (after expiring those idle for `T_idle`).
    pub fn short_flows(&mut self, now: Time, uplink: u32) -> u32 {
        self.expire(now);
        self.ns[uplink as usize]
    }

    /// The flow entry of `key` as the leaf holds it (live or not), for inspection.
    pub fn flow(&self, key: u128) -> Option<(PortId, FlowData)> {
        self.flows.get(key).map(|e| (e.port, e.data))
    }

    /// Sets the flow entry of `key` as if its previous packet went to `port` at `now` (tests craft histories).
    pub fn set_flow(&mut self, key: u128, port: PortId, now: Time, data: FlowData) {
        *self.flows.record(key, port, now) = data;
    }

    /// The code filed for (uplink, dst leaf), if any report arrived.
    pub fn report(&self, uplink: u32, dst_leaf: LeafId) -> Option<u16> {
        let r = self.sq[self.sq_index(uplink, dst_leaf)];
        r.valid.then_some(r.code)
    }

    /// `T_idle` as resolved (after the first decision when it is the automatic one-RTT value).
    pub fn idle_timeout(&self) -> Option<Time> {
        self.t_idle
    }

    fn sq_index(&self, uplink: u32, dst_leaf: LeafId) -> usize {
        match self.p.spine_table_key {
            TableKey::UplinkDstLeaf => (uplink * self.leaves) as usize + dst_leaf.index(),
            TableKey::Uplink => uplink as usize,
        }
    }

    /// Drops short-flow presences idle for `T_idle` or more at `now`.
    fn expire(&mut self, now: Time) {
        let Some(t_idle) = self.t_idle else { return };
        for (u, list) in self.expiry.iter_mut().enumerate() {
            while let Some(&(t, key)) = list.front() {
                if t + t_idle > now {
                    break;
                }
                list.pop_front();
                let pk = presence_key(key, u as u32);
                if self.present.get(&pk) == Some(&t) {
                    self.present.remove(&pk);
                    self.ns[u] -= 1;
                }
            }
        }
    }

    /// A short packet of flow `key` went on uplink `u` at `now`.
    fn count_short(&mut self, key: u128, u: u32, now: Time) {
        if self.present.insert(presence_key(key, u), now).is_none() {
            self.ns[u as usize] += 1;
        }
        self.expiry[u as usize].push_back((now, key));
    }

    /// Flow `key` became long: it leaves every uplink's count.
    fn uncount(&mut self, key: u128) {
        for u in 0..self.uplinks {
            if self.present.remove(&presence_key(key, u)).is_some() {
                self.ns[u as usize] -= 1;
            }
        }
    }

    /// The spine's link toward `dst_leaf` that a packet sent on uplink `port` leaves by.
    fn down_link(&self, cx: &SwitchCx, port: PortId, dst_leaf: LeafId) -> LinkFacts {
        let u = cx.ports.slot(port);
        let spine = cx.facts.spine_of_uplink(u);
        cx.facts.spine_down(spine, down_slot(cx.facts, spine, dst_leaf, u % self.lpp))
    }

    /// The TNL of `pkt` through uplink `port` toward `dst_leaf` now (Eq. 1).
    pub fn tnl_of(&self, cx: &SwitchCx, port: PortId, dst_leaf: LeafId, wire: u32) -> Time {
        let u = cx.ports.slot(port);
        let down = self.down_link(cx, port, dst_leaf);
        let pd = cx.ports.delay(port) + down.delay;
        let local = match self.p.local_delay {
            LocalDelay::Exact => cx.ports.wait_time(port, cx.now),
            LocalDelay::QueuedBytes => cx.ports.queue_delay(port),
        };
        let r = self.sq[self.sq_index(u, dst_leaf)];
        let fresh = r.valid && (self.p.stale_us == Time::ZERO || cx.now.saturating_sub(r.at) <= self.p.stale_us);
        let bs = if self.p.spine_buffer_bytes > 0 { self.p.spine_buffer_bytes } else { down.buffer_bytes };
        let spine_wait = if fresh { decode_delay(r.code, bs, self.p.code_bits, down.rate, self.p.sq_decode) } else { Time::ZERO };
        let own = if self.p.tnl_serialisation {
            cx.ports.rate(port).tx_time(crate::units::Bytes(wire as u64)) + down.rate.tx_time(crate::units::Bytes(wire as u64))
        } else {
            Time::ZERO
        };
        cx.now + pd + local + spine_wait + own
    }

    /// Among the candidates with `self.tnl` filled in: the index the rules pick for a packet whose flow last
    /// went to `last` with TNL `p_tnl`.
    fn pick(&mut self, cx: &mut SwitchCx, candidates: &[PortId], p_tnl: Time, last: Option<PortId>, long: bool) -> usize {
        let safe = |t: Time| match self.p.order_compare {
            OrderCompare::Strict => t > p_tnl,
            OrderCompare::NonStrict => t >= p_tnl,
        };
        let n_safe = self.tnl.iter().filter(|&&t| safe(t)).count();
        self.counters.excluded += (candidates.len() - n_safe) as u64;
        if n_safe == 0 {
            self.counters.fallbacks += 1;
            if self.p.empty_set_fallback == Fallback::LastPort {
                if let Some(i) = last.and_then(|l| candidates.iter().position(|&c| c == l)) {
                    return i;
                }
            }
            let max = *self.tnl.iter().max().expect("candidates are never empty");
            return self.tnl.iter().position(|&t| t == max).expect("the maximum is among them");
        }
        // The rank of a safe candidate: (short flows on it, TNL) for a long flow, TNL for a short one.
        let rank = |i: usize| -> (u32, Time) {
            let ns = if long { cx.ports.uplink_index(candidates[i]).map_or(0, |u| self.ns[u as usize]) } else { 0 };
            (ns, self.tnl[i])
        };
        let mut best = (u32::MAX, Time::MAX);
        let mut ties = 0usize;
        for i in (0..candidates.len()).filter(|&i| safe(self.tnl[i])) {
            let r = rank(i);
            if r < best {
                best = r;
                ties = 1;
            } else if r == best {
                ties += 1;
            }
        }
        let mut k = match self.p.tie_break {
            TieBreak::Random if ties > 1 => cx.rng.below(ties),
            _ => 0,
        };
        for i in (0..candidates.len()).filter(|&i| safe(self.tnl[i])) {
            if rank(i) == best {
                if k == 0 {
                    return i;
                }
                k -= 1;
            }
        }
        unreachable!("a best safe candidate exists")
    }

    /// The source leaf's decision for a data packet (`data`) or, with `ack_routing = tnl_short`, a reverse
    /// packet: classification, TNLs, order filter, class rule, bookkeeping.
    fn decide(&mut self, cx: &mut SwitchCx, pkt: &Packet, candidates: &[PortId], data: bool) -> PortId {
        let now = cx.now;
        if self.t_idle.is_none() {
            // One base RTT (L116): propagation only, from this leaf's hosts to the nearest other leaf and back.
            let leaf = cx.me.as_leaf().expect("a source leaf decides");
            self.t_idle = Some(cx.facts.propagation_rtt_from(leaf).unwrap_or(Time::ZERO));
        }
        self.expire(now);
        let key = pkt.five_tuple();
        let dst_leaf = cx.facts.leaf_of_host(pkt.dst);
        let table = if data { &self.flows } else { &self.acks };
        let (mut st, last, last_seen) = match table.live(key, now) {
            Some(e) => (e.data, Some(e.port), e.last_seen),
            None => {
                self.counters.flows += data as u64;
                (FlowData::default(), None, now)
            }
        };
        let was_long = st.long;
        if data {
            st.fs += match self.p.count_bytes {
                CountBytes::Payload => pkt.payload as u64,
                CountBytes::Wire => pkt.wire_bytes as u64,
            };
            if st.fs > self.p.long_threshold_bytes && !st.long {
                st.long = true;
                self.uncount(key);
            }
        }
        let mut tnl = std::mem::take(&mut self.tnl);
        tnl.clear();
        tnl.extend(candidates.iter().map(|&p| self.tnl_of(cx, p, dst_leaf, pkt.wire_bytes)));
        self.tnl = tnl;
        // Where the previous packet went, if it is still a candidate (looked up only by the options that use it).
        let last_i = || last.and_then(|l| candidates.iter().position(|&c| c == l));
        if self.p.tnl_serialisation && st.p_tnl_on_last {
            // TNL is then the arrival of the packet's last bit. Eq. 1 does not see the flow's own previous
            // packet, still on its way to the spine or in the spine's port: on that packet's uplink this one
            // queues behind it at both hops, so its last bit cannot reach the next leaf before the previous
            // packet's (`p_tnl`) plus its own serialisation at the spine. Without this floor a segment shorter
            // than half its predecessor is predicted to overtake it on its own FIFO path, is excluded there
            // (and on every other fast uplink), and goes out on a slow one.
            if let Some(i) = last_i() {
                let own = self.down_link(cx, candidates[i], dst_leaf).rate.tx_time(crate::units::Bytes(pkt.wire_bytes as u64));
                self.tnl[i] = self.tnl[i].max(st.p_tnl + own);
            }
        }
        // A long flow's packet within its flowlet: the flowlet's uplink, where FIFO keeps it in order. The packet
        // that makes the flow long starts a flowlet.
        let in_flowlet = self.p.long_granularity == LongGranularity::Flowlet && data && was_long && now.saturating_sub(last_seen) <= self.flowlet_gap();
        let keep = if in_flowlet { last_i() } else { None };
        let i = match keep {
            Some(i) => i,
            None => self.pick(cx, candidates, st.p_tnl, last, st.long),
        };
        let port = candidates[i];
        // Whether the packet that sets the bound leaves by this packet's uplink (this one, or one ahead of it).
        st.p_tnl_on_last = self.tnl[i] >= st.p_tnl || self.p.p_tnl_update == PtnlUpdate::Chosen || (Some(port) == last && st.p_tnl_on_last);
        st.p_tnl = match self.p.p_tnl_update {
            PtnlUpdate::Max => st.p_tnl.max(self.tnl[i]),
            PtnlUpdate::Chosen => self.tnl[i],
        };
        if data {
            if st.long {
                self.counters.long_packets += 1;
            } else {
                self.counters.short_packets += 1;
                if let Some(u) = cx.ports.uplink_index(port) {
                    self.count_short(key, u, now);
                }
            }
            *self.flows.record(key, port, now) = st;
        } else {
            self.counters.control_packets += 1;
            *self.acks.record(key, port, now) = st;
        }
        port
    }

    /// The idle gap that ends a long flow's flowlet (`long_granularity = flowlet`).
    fn flowlet_gap(&self) -> Time {
        if self.p.long_flowlet_gap_us > Time::ZERO {
            self.p.long_flowlet_gap_us
        } else {
            self.t_idle.unwrap_or(Time::ZERO)
        }
    }

    /// Whether a packet of this kind carries a spine report.
    fn stamps(&self, kind: PacketKind) -> bool {
        match self.p.stamp_packets {
            Stamp::Acks => matches!(kind, PacketKind::Ack | PacketKind::SynAck),
            Stamp::AllReverse => true,
        }
    }
}

impl SwitchBalancer for Tr {
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        let dst_leaf = cx.facts.leaf_of_host(pkt.dst);
        match cx.me.place() {
            SwitchPlace::Spine(spine) => {
                if candidates.len() == 1 {
                    return Decision::Forward(candidates[0]);
                }
                // Parallel links: the index of the link the packet came in by. A spine's ports are its down
                // links in slot order.
                let link = cx.ingress.map_or(0, |p| cx.ports.slot(p) % self.lpp);
                let port = cx.ports.nth(down_slot(cx.facts, spine, dst_leaf, link));
                return Decision::Forward(if candidates.contains(&port) { port } else { candidates[0] });
            }
            SwitchPlace::Leaf(leaf) if dst_leaf == leaf => return Decision::Forward(candidates[0]),
            SwitchPlace::Leaf(_) => {}
        }
        let data = matches!(pkt.kind, PacketKind::Data | PacketKind::Udp | PacketKind::Syn);
        let port = if data || self.p.ack_routing == AckRouting::TnlShort {
            self.decide(cx, pkt, candidates, data)
        } else {
            self.counters.control_packets += 1;
            candidates[if candidates.len() > 1 { flow_hash_index(pkt, self.salt, candidates.len()) } else { 0 }]
        };
        self.counters.peak_state_bytes = self.counters.peak_state_bytes.max(self.state_bytes() as u64);
        Decision::Forward(port)
    }

    fn on_arrival(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut) {
        match cx.me.place() {
            SwitchPlace::Spine(spine) => {
                if !self.stamps(pkt.kind) {
                    return;
                }
                // The queue toward the packet's source leaf, on the link the spine's rule uses for it.
                let src_leaf = cx.facts.leaf_of_host(pkt.src);
                let link = cx.ingress.map_or(0, |p| cx.ports.slot(p) % self.lpp);
                let slot = down_slot(cx.facts, spine, src_leaf, link);
                let port = cx.ports.nth(slot);
                let bs = if self.p.spine_buffer_bytes > 0 { self.p.spine_buffer_bytes } else { cx.facts.spine_down(spine, slot).buffer_bytes };
                let code = encode(cx.ports.queue_bytes(port), bs, self.p.code_bits);
                pkt.lb_mut().scratch = code | PRESENT;
                self.counters.stamped += 1;
            }
            SwitchPlace::Leaf(_) => {
                let Some(uplink) = cx.ingress.and_then(|p| cx.ports.uplink_index(p)) else { return };
                let s = pkt.lb.scratch;
                if s & PRESENT == 0 {
                    return;
                }
                let i = self.sq_index(uplink, cx.facts.leaf_of_host(pkt.src));
                self.sq[i] = Report { valid: true, code: s & !PRESENT, at: cx.now };
                self.counters.reports += 1;
                // Restore the bits before the packet goes on toward its host.
                pkt.lb_mut().scratch = 0;
            }
        }
    }

    fn on_timer(&mut self, cx: &mut SwitchCx) {
        self.flows.sweep(cx.now);
        self.acks.sweep(cx.now);
        self.expire(cx.now);
    }

    fn timer_period(&self) -> Option<Time> {
        (self.kind == SwitchKind::Leaf).then(|| self.flows.sweep_period()).flatten()
    }

    fn state_bytes(&self) -> usize {
        let expiry: usize = self.expiry.iter().map(|l| l.len()).sum();
        self.flows.state_bytes()
            + self.acks.state_bytes()
            + self.sq.len() * std::mem::size_of::<Report>()
            + self.ns.len() * std::mem::size_of::<u32>()
            + self.present.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<Time>())
            + expiry * std::mem::size_of::<(Time, u128)>()
    }

    fn counters(&self) -> CounterReport {
        self.counters.report()
    }

    fn hooks(&self) -> Hooks {
        // Every packet at the source leaf counts toward its flow, even where routing leaves one uplink.
        Hooks { arrival: true, enqueue: false, departure: false, choose_single: self.kind == SwitchKind::Leaf }
    }

}
