//! TAM: coarse-grained load balancing with traffic-aware ECN marking (Huang et al., Hindawi 2022;
//! "L" numbers below are lines of the paper, see docs/references.md; Algorithm 1 is L119–L158).
//!
//! **Rule.** Switches alone run TAM (L111); hosts run plain DCTCP. A switch keeps a flow table and a port
//! table (§2.8, Tables 2–3) and tells flows apart by the bytes it has seen of each: a flow is *short* until
//! it has sent more than 100 KB and *long* from then on (§2.5, Alg. 1 (3)–(4), (18)).
//!
//! * *Short flows are placed once* (§2.6, Alg. 1 (5)–(16)): the flow's first packet at the source leaf takes
//!   the uplink with the smallest transmission delay, i.e. the local queueing delay of the uplink plus the
//!   propagation delay from this leaf to the destination leaf over that uplink (L183–L185). A tie goes to the
//!   uplink carrying the fewest long flows, a remaining tie is drawn at random (against herding, L182).
//!   Every later packet of the flow follows the first one.
//! * *Long flows move only at flowlet boundaries* (§2.7, Alg. 1 (18)–(31)): when the gap since the flow's
//!   previous packet exceeds the flowlet timeout, the flow goes to the uplink with the fewest long flows;
//!   a tie goes to the smallest transmission delay (Alg. 1 (24)), then at random. Otherwise it stays.
//! * *Traffic-aware marking* (§2.4.1, Alg. 1 (32)–(37), Table 1): a long-flow packet gets CE when the queue
//!   of the port it joins holds more than `k* = C·RTT/7` (C the port's rate, the DCTCP paper's bound, L115)
//!   or while a short flow is active on that port. Short-flow packets are marked only by the port's ordinary
//!   DCTCP threshold K (L170), which the engine applies before this hook; TAM never clears a mark.
//!
//! ```text
//!  data packet ─► flow table: bytes += payload ─► short? ─ first packet: min(qdelay + pd), then fewest long,
//!                                                │        then random; later packets: same port
//!                                                └ long ─ gap > flowlet timeout: fewest long, then min delay,
//!                                                         then random; else same port
//!  at enqueue ─► short data: port.last_short = now
//!               long data:  CE if queue before it > k*  or  now - port.last_short <= T_short
//! ```
//!
//! **Where the paper is vague or contradictory, and the parameter that decides** (details, with the paper's
//! words, in `docs/assumptions.md`, § TAM):
//! * *Which switches classify and mark* (`class_source`, `mark_scope`). L111 and L172 say a switch identifies
//!   the flow type of every packet that arrives, and L185 that TAM keeps the spine queues low, so every
//!   switch counts bytes per flow on its own and marks on its own egress ports (`local_count`,
//!   `all_switches`). The paper puts no class in the packet. A spine therefore takes the first 100 KB of a
//!   long flow that it has not carried before for a short flow, as Algorithm 1 run at the spine would.
//!   `class_source = "source_leaf_bit"` is a dclb alternative: the source leaf writes its verdict into one
//!   scratch bit (a DSCP re-mark in hardware) that downstream switches read and the destination leaf clears
//!   before the host. `mark_scope = "source_leaf"` marks only at the packet's source leaf.
//! * *Routing happens at the source leaf only* (L185, L234). Spines with parallel links to a leaf pick one
//!   by 5-tuple hash, as for CONGA; the destination leaf has a single way down.
//! * *Short or long* (`long_threshold_bytes`, `count_bytes`). "100 KB" is 100,000 B; long iff the bytes seen
//!   exceed it (L176 "exceeds"; Alg. 1 (4) `<` and (18) `>` leave exactly 100 KB in neither branch). The
//!   packet whose bytes cross the threshold is already a long-flow packet. Bytes are the payloads summed
//!   (Alg. 1's `s_i·ps_i` assumes equal packets); `wire` counts headers too. Retransmissions count: a switch
//!   cannot tell them apart. The switch never reads the sender-filled `flow_size`/`remaining` (L176: the size
//!   is not known in advance).
//! * *Which packets count* (`ack_routing`). Only data packets (payload > 0) are classified, counted and
//!   marked. A SYN creates the flow's entry and picks its port by the short rule (0 bytes, never marked).
//!   Pure ACKs and SYN-ACKs never count and never make a short flow "active" (otherwise every ACK stream
//!   would look like a never-ending short flow and throttle every long flow); at their source leaf they are
//!   placed like a short flow's first packet and then follow it (`flow_fastest`), or hashed (`ecmp`).
//! * *When a flow stops counting as long on its port* (`flow_idle_expiry_us`, `sweep_period_us`). The paper
//!   does not say. The packet that carries the flow's last byte (TCP's FIN, the header's
//!   [`class::FIN`] bit) retires it from its port's count; the entry is kept so
//!   that a late retransmission is not taken for a new short flow, and is deleted (uncounting it if it still
//!   counts) once idle for `flow_idle_expiry_us`, checked every `sweep_period_us`.
//! * *When a short flow is "active" on a port* (`short_active_us`). Table 3 keeps the arrival time of the
//!   port's last short-flow packet and a flag; no window is given. The flag holds while
//!   `now − last_short ≤ T_short`, `T_short` = one base RTT by default (see k\* below; L200 speaks of "the
//!   current RTT").
//! * *Port-table period* (`port_period_us`): the "active long flows" count of Table 3 restarts every period,
//!   one base RTT by default.
//! * *Which long count ranks ports* (`long_count_basis`): §2.7 (1) says the "total number of long flows",
//!   Alg. 1 (20) "long flows in present"; default `total`, `active` reads the per-period count instead. A
//!   rerouting flow does not count itself on its current port (`exclude_self_on_reroute`).
//! * *Long-flow tie-break* (`long_tiebreak`): Alg. 1 (24) uses the transmission delay, §2.7 (2) the queueing
//!   delay; default Algorithm 1's. `delay_tie_tolerance_us` widens what counts as equal delay (0: exact).
//! * *Uplinks of different rates.* The paper's transmission delay (queueing + propagation, L183) is the same
//!   for an idle slow uplink and an idle fast one. `delay_includes_serialisation = true` adds one full-size
//!   packet's serialisation at the uplink's own rate (off by default).
//! * *k\** (`k_star_bytes`, `k_star_rtt_us`, `rtt_basis`): bytes, compared with `>` (Alg. 1 (32), L111;
//!   Table 1's `≥` differs only at equality); C is the port's own rate. The paper says only "RTT" and cites
//!   DCTCP's bound, which is about the path's round-trip time: by default the idle fabric's smallest
//!   round trip between hosts on different leaves as a host would measure it, propagation plus
//!   store-and-forward serialisation of a full-size packet out and an ACK back (the good paths under
//!   asymmetry; [`FabricFacts::min_rtt`]). `rtt_basis = "propagation"` uses the round-trip propagation delay
//!   alone (the paper's "RTPD", 200 µs and 8 µs in its setups); at 10 Gbps with 1 µs links that makes k*
//!   less than one full packet. The queue compared is the one the packet found, without itself.
//! * *Flowlet timeout* (`flowlet_timeout_us`): not given; L345 ties TAM's rerouting to "LetFlow
//!   segmentation", so LetFlow's 500 µs (the value the same group's TR paper uses). Gap `>` timeout. As it is
//!   LetFlow's value, it follows LetFlow's under `lb.timing = "fabric"` (scaled by the fabric's base RTT over
//!   84.93 µs, 76 µs on the default fabric); `"published"` keeps 500 µs.
//! * *Failed ports*: a flow whose port is no longer a candidate is placed again by its class's rule.
//! * `marking = false` is an ablation (routing only), not TAM.
//!
//! **Defaults and their sources.** `long_threshold_bytes` 100,000 (L29, L176, Alg. 1 (4)); `k_star_bytes`
//! auto = C·RTT/7 (L115, Alg. 1 (1)): in the paper's setups 4,451 B at 1 Gbps (RTT 249.3 µs: 200 µs of
//! propagation, 48 µs of data and 1.3 µs of ACK serialisation) and 6,594 B at 40 Gbps (9.23 µs); with
//! `rtt_basis = "propagation"` 3,571 B and 5,714 B. `k_star_rtt_us`, `short_active_us` and
//! `port_period_us` auto = the base RTT (dclb choice, see above); `flowlet_timeout_us` 500 (LetFlow's, see
//! above); `flow_idle_expiry_us` 10,000 and `sweep_period_us` 1,000 (dclb choices: far beyond any flowlet
//! gap or RTT of the paper's setups, about twice a typical minimum RTO); `long_count_basis` total
//! (§2.7 (1)); `long_tiebreak` transmission delay (Alg. 1 (24)); `class_source` local_count and
//! `mark_scope` all_switches (L111, L172, L185); `ack_routing` flow_fastest (dclb choice).
//!
//! **What packets carry.** Nothing of TAM's own (L111): a switch reads the 5-tuple, the payload length, the
//! ECN bits (it sets CE on ECN-capable long-flow data packets) and the TCP FIN flag of the last segment
//! ([`class::FIN`]). Only with `class_source = "source_leaf_bit"` does a packet
//! carry one more bit ([`LONG_BIT`] of the scratch field), between its source and destination leaves.
//!
//! **State** (`state_bytes`): the flow table (one entry per flow seen within the idle expiry, key included)
//! and one port entry per egress port of the switch, at their in-memory sizes.

use super::flowhash::{salted_index, FlowMap};
use super::params::{param_choice, scheme_params, LB_FABRIC_RTT_US};
use super::scheme::{reflect_path_and_class, scheme_counters, CounterReport, Installed, Placement, SchemeSpec};
use super::{Decision, Hooks, MarkablePacket, PacketMut, SwitchBalancer, SwitchCx, SwitchInfo, SwitchKind};
use crate::fabric::{FabricFacts, PortRole};
use crate::ids::{LeafId, PortId};
use crate::packet::{class, Packet, PacketKind};
use crate::units::{Bytes, Rate, Time};

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "tam",
    placement: Placement::Switch,
    granularity: "flow (short) / flowlet (long)",
    summary: "short flows: fastest uplink per flow; long flows: fewest long flows per flowlet; long-flow packets ECN-marked above k* = C*RTT/7 or while a short flow shares the port",
    params: TamParams::SPECS,
    install: |cx, p| {
        let p = TamParams::from_params(p);
        let rtt = base_rtt(cx.facts, p.rtt_basis);
        let switches = cx.switches.iter().map(|s| Box::new(Tam::new(&p, cx.facts, s, rtt)) as Box<dyn SwitchBalancer>).collect();
        Installed::Switches(switches)
    },
    reflect: reflect_path_and_class,
};

param_choice! {
    /// Which long-flow count ranks ports.
    pub enum LongCountBasis {
        /// Long flows assigned to the port (§2.7 (1) "total number of long flows").
        Total = "total",
        /// Long flows that sent on the port in the current port period (Alg. 1 (20) "in present").
        Active = "active",
    }
}

param_choice! {
    /// What breaks a tie in long-flow count when a long flow is rerouted.
    pub enum LongTiebreak {
        /// Queueing plus propagation delay (Alg. 1 (24)).
        TransmissionDelay = "transmission_delay",
        /// Local queueing delay only (§2.7 (2)).
        QueueingDelay = "queueing_delay",
    }
}

param_choice! {
    /// Where TAM's marking runs.
    pub enum MarkScope {
        /// On every switch's egress ports.
        AllSwitches = "all_switches",
        /// Only at the packet's source leaf.
        SourceLeaf = "source_leaf",
    }
}

param_choice! {
    /// How a marking switch knows a packet's class.
    pub enum ClassSource {
        /// Every switch counts the bytes it sees of each flow (Algorithm 1 at every switch).
        LocalCount = "local_count",
        /// The source leaf's verdict, carried in one scratch bit (dclb alternative).
        SourceLeafBit = "source_leaf_bit",
    }
}

param_choice! {
    /// How the source leaf routes pure ACKs and SYN-ACKs.
    pub enum AckRouting {
        /// Like a short flow: the first picks the fastest uplink, the rest follow it.
        FlowFastest = "flow_fastest",
        /// By 5-tuple hash.
        Ecmp = "ecmp",
    }
}

param_choice! {
    /// What "RTT" means where TAM needs one (k*, the short-flow window, the port period).
    pub enum RttBasis {
        /// The idle fabric's round trip as a host would measure it: propagation plus store-and-forward
        /// serialisation of a full-size packet out and an ACK back ([`FabricFacts::min_rtt`]).
        Unloaded = "unloaded",
        /// Round-trip propagation delay only (the paper's "RTPD", L65, L274).
        Propagation = "propagation",
    }
}

param_choice! {
    /// What the byte count of a flow adds per packet.
    pub enum CountBytes {
        Payload = "payload",
        Wire = "wire",
    }
}

scheme_params! {
    /// TAM's parameters.
    pub struct TamParams {
        /// a flow is long once the bytes the switch has seen of it exceed this
        #[source = "paper L29, L176, Alg. 1 (4)/(18): 100 KB (decimal)"]
        long_threshold_bytes: u64 (bytes) in 1..=1_000_000_000_000 = 100_000,
        /// what a packet adds to its flow's byte count: payload, or wire bytes (headers included)
        #[source = "dclb choice (Alg. 1 counts packets x packet size)"]
        count_bytes: CountBytes = CountBytes::Payload,
        /// a long flow whose packets pause longer than this starts a new flowlet and may be rerouted
        #[source = "not in the paper; LetFlow's 500 us (L345 ties TAM to LetFlow segmentation; TR uses 500 us)"]
        #[rtt_us = LB_FABRIC_RTT_US]
        flowlet_timeout_us: Time = 500.0,
        /// k* in bytes for every port; 0 = C * RTT / 7 with C the port's rate
        #[source = "paper L115, Alg. 1 (1): k* = C*RTT/7 (DCTCP's bound)"]
        k_star_bytes: u64 (bytes) = 0,
        /// RTT in k*; 0 = the base RTT (rtt_basis)
        #[source = "dclb choice (the paper says only RTT)"]
        k_star_rtt_us: Time = 0.0,
        /// the base RTT behind every 0 (auto) below and above: unloaded (propagation + serialisation of a
        /// full-size packet out and an ACK back, fastest inter-leaf path) or propagation only
        #[source = "dclb choice: DCTCP's C*RTT/7 bound (L115, ref. [2]) is about the path's round-trip time"]
        rtt_basis: RttBasis = RttBasis::Unloaded,
        /// a short flow counts as active on a port this long after its last data packet there; 0 = base RTT
        #[source = "dclb choice (Table 3 gives no window; L200 speaks of the current RTT)"]
        short_active_us: Time = 0.0,
        /// period after which a port's count of active long flows restarts; 0 = base RTT
        #[source = "dclb choice (Table 3 col. 1; L200 the current RTT)"]
        port_period_us: Time = 0.0,
        /// long-flow count that ranks ports: total (assigned) or active (sent in the current port period)
        #[source = "paper §2.7 (1) 'total number'; Alg. 1 (20) 'in present' as the alternative"]
        long_count_basis: LongCountBasis = LongCountBasis::Total,
        /// tie-break among ports with the fewest long flows: transmission (queue + propagation) or queueing delay
        #[source = "paper Alg. 1 (24); §2.7 (2) says queueing delay"]
        long_tiebreak: LongTiebreak = LongTiebreak::TransmissionDelay,
        /// a rerouting long flow does not count itself on its current port
        #[source = "dclb choice"]
        exclude_self_on_reroute: bool = true,
        /// add one full-size packet's serialisation at the uplink's own rate to its transmission delay (an idle
        /// slow uplink then loses a tie to an idle fast one)
        #[source = "dclb option; the paper's transmission delay is queueing + propagation (L183)"]
        delay_includes_serialisation: bool = false,
        /// delays within this of the smallest count as equal (0: exact picoseconds)
        #[source = "dclb choice"]
        delay_tie_tolerance_us: Time = 0.0,
        /// where TAM marks: all_switches, or only the packet's source leaf
        #[source = "paper L111, L185, Alg. 1 at 'the switch'"]
        mark_scope: MarkScope = MarkScope::AllSwitches,
        /// how a switch knows a packet's class: its own byte count, or a scratch bit written by the source leaf
        #[source = "paper L111, L172 (each switch identifies the type); the bit is a dclb alternative"]
        class_source: ClassSource = ClassSource::LocalCount,
        /// pure ACKs and SYN-ACKs at their source leaf: placed like a short flow, or hashed
        #[source = "dclb choice (the paper does not discuss ACKs)"]
        ack_routing: AckRouting = AckRouting::FlowFastest,
        /// a flow entry idle this long is deleted (its long count removed if still counted)
        #[source = "dclb choice (the paper never deletes entries)"]
        flow_idle_expiry_us: Time in 1.0..=1e9 = 10000.0,
        /// how often idle flow entries are swept
        #[source = "dclb choice"]
        sweep_period_us: Time in 1.0..=1e9 = 1000.0,
        /// ablation: false turns TAM's own marking off (routing only; the port's DCTCP marking stays)
        #[source = "dclb ablation (TAM always marks)"]
        marking: bool = true,
    }
}

/// The scratch bit in which the source leaf writes "long" (`class_source = "source_leaf_bit"`).
pub const LONG_BIT: u16 = 1 << 0;

/// The base RTT of `basis`: the fabric's [`FabricFacts::min_rtt`] or its [`FabricFacts::propagation_rtt`].
pub fn base_rtt(facts: &FabricFacts, basis: RttBasis) -> Time {
    match basis {
        RttBasis::Unloaded => facts.min_rtt,
        RttBasis::Propagation => facts.propagation_rtt(),
    }
}

/// `C·RTT/7` in bytes for a port of `rate` (rounded down).
pub fn k_star(rate: Rate, rtt: Time) -> u64 {
    (rate.bps() as u128 * rtt.0 as u128 / (7 * 8 * 1_000_000_000_000u128)) as u64
}

/// One row of the flow table (Table 2), at a switch that classifies the flow.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlowEntry {
    /// Forwarding port of the flow's latest packet (global port id).
    pub port: PortId,
    /// Arrival of the flow's latest packet at this switch (forwarding time).
    pub last_seen: Time,
    /// Packets forwarded (data and SYN; an ACK stream's entry counts none).
    pub pkts: u64,
    /// Bytes counted so far (payload or wire bytes, `count_bytes`).
    pub bytes: u64,
    pub is_long: bool,
    /// Statistical sign: the flow is in its port's long-flow total.
    pub counted: bool,
    /// The flow's last byte went by (FIN); it no longer counts as long anywhere.
    pub finished: bool,
    /// Activity sign: the port and period (epoch + 1; 0 = never) in which the flow was last counted active.
    active_port: PortId,
    active_epoch: u32,
}

impl Default for FlowEntry {
    /// A flow not yet forwarded: no port, no counts.
    fn default() -> Self {
        FlowEntry { port: PortId::NONE, last_seen: Time::ZERO, pkts: 0, bytes: 0, is_long: false, counted: false, finished: false, active_port: PortId::NONE, active_epoch: 0 }
    }
}

/// One row of the port table (Table 3).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PortState {
    /// Long flows assigned to the port.
    pub total_long: u32,
    /// Long flows that sent on the port in the current period.
    pub active_long: u32,
    /// Current period number and its start.
    pub epoch: u32,
    pub epoch_start: Time,
    /// Arrival of the port's latest short-flow data packet.
    pub last_short: Option<Time>,
}

scheme_counters! {
    /// What one switch's TAM did (columns `tam_*` of the per-switch result table, with `tam_flow_entries`: see
    /// [`SwitchBalancer::counters`] below).
    #[scheme = SPEC]
    pub struct TamCounters {
        /// short flows placed (first packet, with a choice of uplinks)
        short_placements,
        /// ACK streams placed (their first ACK, with a choice)
        ack_placements,
        /// flowlet starts of long flows that were placed again (with a choice)
        long_flowlets,
        /// of those, the ones that moved to another port
        long_moves,
        /// flows that crossed the long threshold here
        became_long,
        /// times a long flow was entered in a port's total (the statistical sign set)
        long_counted,
        /// random draws among tied ports
        random_ties,
        /// long flows retired by their last byte
        fin_retired,
        /// flow entries deleted after idling (those that still counted as long are also in `expired_long`)
        expired,
        /// flow entries deleted after idling that still counted as long
        expired_long,
        /// long-flow packets TAM marked with the queue above k*
        marks_k_star,
        /// long-flow packets TAM marked only because a short flow was active on the port
        marks_coexist,
    }
}

/// TAM at one switch.
pub struct Tam {
    p: TamParams,
    kind: SwitchKind,
    /// The leaf this switch is (`None`: a spine): the source leaf of its hosts' flows.
    leaf: Option<LeafId>,
    salt: u64,
    k_star_rtt: Time,
    short_window: Time,
    period: Time,
    flows: FlowMap<FlowEntry>,
    /// One entry per port of this switch, indexed from its first port.
    ports: Vec<PortState>,
    /// Global id of this switch's first port (learned from the context; `PortId::NONE` before any hook).
    first: PortId,
    /// Scratch: (port, delay, long count) of the candidates being compared.
    cands: Vec<(PortId, Time, u32)>,
    counters: TamCounters,
}

impl Tam {
    /// TAM for switch `me`; `rtt` is the fabric's base RTT ([`base_rtt`]), used wherever a parameter is 0.
    pub fn new(p: &TamParams, facts: &FabricFacts, me: &SwitchInfo, rtt: Time) -> Tam {
        let n_ports = match me.kind {
            SwitchKind::Leaf => facts.hosts_per_leaf + facts.uplinks,
            SwitchKind::Spine => facts.leaves * facts.links_per_pair,
        };
        let auto = |t: Time| if t == Time::ZERO { rtt } else { t };
        Tam {
            p: *p,
            kind: me.kind,
            leaf: me.as_leaf(),
            salt: me.salt,
            k_star_rtt: auto(p.k_star_rtt_us),
            short_window: auto(p.short_active_us),
            period: auto(p.port_period_us),
            flows: FlowMap::default(),
            ports: vec![PortState::default(); n_ports as usize],
            first: PortId::NONE,
            cands: Vec::new(),
            counters: TamCounters::default(),
        }
    }

    /// The flow-table entry of the flow `pkt` belongs to (data direction: its own 5-tuple).
    pub fn flow(&self, pkt: &Packet) -> Option<&FlowEntry> {
        self.flows.get(&pkt.five_tuple())
    }

    /// The port-table entry of one of this switch's ports (default before the switch's first hook).
    pub fn port_state(&self, port: PortId) -> PortState {
        if self.first == PortId::NONE {
            return PortState::default();
        }
        self.ports[self.slot(port)]
    }

    /// Long flows assigned to `port` ([`PortState::total_long`]).
    pub fn total_long(&self, port: PortId) -> u32 {
        self.port_state(port).total_long
    }

    /// k* of a port of `rate`, in bytes.
    pub fn k_star_bytes(&self, rate: Rate) -> u64 {
        if self.p.k_star_bytes > 0 {
            self.p.k_star_bytes
        } else {
            k_star(rate, self.k_star_rtt)
        }
    }

    /// Whether a short flow counts as active on `port` at `now`.
    pub fn short_active(&self, port: PortId, now: Time) -> bool {
        self.port_state(port).last_short.is_some_and(|t| now.saturating_sub(t) <= self.short_window)
    }

    /// Flow entries held.
    pub fn entries(&self) -> usize {
        self.flows.len()
    }

    #[inline]
    fn slot(&self, port: PortId) -> usize {
        (port.0 - self.first.0) as usize
    }

    /// Whether switches other than the source leaf classify flows themselves.
    fn classifies_downstream(&self) -> bool {
        self.p.class_source == ClassSource::LocalCount && self.p.mark_scope == MarkScope::AllSwitches
    }

    /// Starts a new port period if the current one is over.
    fn roll(&mut self, slot: usize, now: Time) {
        let ps = &mut self.ports[slot];
        if now.saturating_sub(ps.epoch_start) >= self.period {
            ps.epoch_start = now;
            ps.epoch += 1;
            ps.active_long = 0;
        }
    }

    /// The long-flow count of `port` that ranks it, without `e` itself if asked.
    fn long_count(&mut self, port: PortId, now: Time, e: Option<&FlowEntry>) -> u32 {
        let s = self.slot(port);
        let exclude = self.p.exclude_self_on_reroute;
        match self.p.long_count_basis {
            LongCountBasis::Total => {
                let own = e.is_some_and(|e| exclude && e.counted && e.port == port);
                self.ports[s].total_long - own as u32
            }
            LongCountBasis::Active => {
                self.roll(s, now);
                let ps = self.ports[s];
                let own = e.is_some_and(|e| exclude && e.active_port == port && e.active_epoch == ps.epoch + 1);
                ps.active_long - own as u32
            }
        }
    }

    /// Transmission delay of `port` towards `dst_leaf` (queueing + propagation), and its queueing delay.
    fn delays(&self, cx: &SwitchCx, port: PortId, dst_leaf: LeafId) -> (Time, Time) {
        let q = cx.ports.queue_delay(port);
        // Only a leaf's ports are uplinks.
        let mut pd = match (self.leaf, cx.ports.uplink_index(port)) {
            (Some(leaf), Some(u)) => cx.facts.path_delay(leaf, u, dst_leaf),
            _ => Time::ZERO,
        };
        if self.p.delay_includes_serialisation {
            pd += cx.ports.rate(port).tx_time(Bytes(cx.facts.mtu_wire_bytes as u64));
        }
        (q + pd, q)
    }

    /// Picks among `self.cands` (port, key, count): the smallest `first` key (within the delay tolerance when
    /// `first_is_delay`), then the smallest second key, then at random.
    fn pick(&mut self, cx: &mut SwitchCx, by_delay_first: bool) -> PortId {
        let tol = self.p.delay_tie_tolerance_us;
        let c = &mut self.cands;
        // Stage 1.
        if by_delay_first {
            let min = c.iter().map(|x| x.1).min().unwrap();
            c.retain(|x| x.1 <= min + tol);
        } else {
            let min = c.iter().map(|x| x.2).min().unwrap();
            c.retain(|x| x.2 == min);
        }
        // Stage 2.
        if c.len() > 1 {
            if by_delay_first {
                let min = c.iter().map(|x| x.2).min().unwrap();
                c.retain(|x| x.2 == min);
            } else {
                let min = c.iter().map(|x| x.1).min().unwrap();
                c.retain(|x| x.1 <= min + tol);
            }
        }
        if c.len() == 1 {
            return c[0].0;
        }
        self.counters.random_ties += 1;
        c[cx.rng.below(c.len())].0
    }

    /// The short-flow rule: smallest transmission delay, then fewest long flows, then random.
    fn fastest(&mut self, cx: &mut SwitchCx, candidates: &[PortId], dst_leaf: LeafId) -> PortId {
        self.cands.clear();
        for &port in candidates {
            let (t, _) = self.delays(cx, port, dst_leaf);
            let n = self.long_count(port, cx.now, None);
            self.cands.push((port, t, n));
        }
        self.pick(cx, true)
    }

    /// The long-flow rule at a flowlet boundary: fewest long flows (not counting `e` itself), then smallest
    /// delay (`long_tiebreak`), then random.
    fn fewest_long(&mut self, cx: &mut SwitchCx, candidates: &[PortId], dst_leaf: LeafId, e: &FlowEntry) -> PortId {
        self.cands.clear();
        for &port in candidates {
            let (t, q) = self.delays(cx, port, dst_leaf);
            let key = match self.p.long_tiebreak {
                LongTiebreak::TransmissionDelay => t,
                LongTiebreak::QueueingDelay => q,
            };
            let n = self.long_count(port, cx.now, Some(e));
            self.cands.push((port, key, n));
        }
        self.pick(cx, false)
    }

    fn hash(&self, pkt: &Packet, candidates: &[PortId]) -> PortId {
        if candidates.len() == 1 {
            candidates[0]
        } else {
            candidates[salted_index(pkt.five_tuple(), self.salt, candidates.len())]
        }
    }

    /// A data packet or SYN of a flow this switch classifies: count it, route it (`route`: this is its source
    /// leaf and there is a choice), keep the tables.
    fn flow_packet(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId], is_source: bool) -> PortId {
        let now = cx.now;
        let key = pkt.five_tuple();
        let add = match (pkt.kind, self.p.count_bytes) {
            (PacketKind::Syn, _) => 0,
            (_, CountBytes::Payload) => pkt.payload as u64,
            (_, CountBytes::Wire) => pkt.wire_bytes as u64,
        };
        let (mut e, first) = match self.flows.get(&key) {
            Some(e) => (*e, false),
            None => (FlowEntry::default(), true),
        };
        e.pkts += 1;
        e.bytes += add;
        if !e.is_long && e.bytes > self.p.long_threshold_bytes {
            e.is_long = true;
            self.counters.became_long += 1;
        }
        let dst_leaf = cx.facts.leaf_of_host(pkt.dst);
        let lost_port = !first && !candidates.contains(&e.port);
        let port = if !(is_source && candidates.len() > 1) {
            self.hash(pkt, candidates)
        } else if !e.is_long {
            // Short flow: placed once, on its first packet.
            if first || lost_port {
                self.counters.short_placements += 1;
                self.fastest(cx, candidates, dst_leaf)
            } else {
                e.port
            }
        } else if first || lost_port || now.saturating_sub(e.last_seen) > self.p.flowlet_timeout_us {
            // Long flow at a flowlet boundary (`last_seen` still holds the previous packet's arrival).
            self.counters.long_flowlets += 1;
            let p = self.fewest_long(cx, candidates, dst_leaf, &e);
            self.counters.long_moves += (!first && p != e.port) as u64;
            p
        } else {
            e.port
        };
        // Port table: the long-flow total follows the flow; the activity sign once per port period.
        if e.is_long && !e.finished {
            if !e.counted {
                let s = self.slot(port);
                self.ports[s].total_long += 1;
                e.counted = true;
                self.counters.long_counted += 1;
            } else if port != e.port {
                let (old, new) = (self.slot(e.port), self.slot(port));
                debug_assert!(self.ports[old].total_long > 0);
                self.ports[old].total_long -= 1;
                self.ports[new].total_long += 1;
            }
            let s = self.slot(port);
            self.roll(s, now);
            let ps = &mut self.ports[s];
            if !(e.active_port == port && e.active_epoch == ps.epoch + 1) {
                ps.active_long += 1;
                e.active_port = port;
                e.active_epoch = ps.epoch + 1;
            }
        }
        e.port = port;
        e.last_seen = now;
        if pkt.lb.class & class::FIN != 0 && pkt.payload > 0 && !e.finished {
            e.finished = true;
            if e.counted {
                let s = self.slot(port);
                debug_assert!(self.ports[s].total_long > 0);
                self.ports[s].total_long -= 1;
                e.counted = false;
                self.counters.fin_retired += 1;
            }
        }
        self.flows.insert(key, e);
        if is_source && self.p.class_source == ClassSource::SourceLeafBit {
            let lb = pkt.lb_mut();
            lb.scratch = if e.is_long { lb.scratch | LONG_BIT } else { lb.scratch & !LONG_BIT };
        }
        port
    }

    /// A pure ACK or SYN-ACK at its source leaf, with a choice: its stream is placed like a short flow's
    /// first packet and then follows it. It never counts bytes or packets.
    fn ack_packet(&mut self, cx: &mut SwitchCx, pkt: &PacketMut, candidates: &[PortId]) -> PortId {
        let key = pkt.five_tuple();
        let port = match self.flows.get(&key) {
            Some(e) if candidates.contains(&e.port) => e.port,
            _ => {
                self.counters.ack_placements += 1;
                self.fastest(cx, candidates, cx.facts.leaf_of_host(pkt.dst))
            }
        };
        let e = self.flows.entry(key).or_default();
        e.port = port;
        e.last_seen = cx.now;
        port
    }

    /// Whether this switch is the leaf `pkt` was sent from.
    #[inline]
    fn is_source_leaf(&self, cx: &SwitchCx, pkt: &Packet) -> bool {
        self.leaf == Some(cx.facts.leaf_of_host(pkt.src))
    }

    /// Whether TAM marks `pkt` at this switch.
    fn marks_here(&self, cx: &SwitchCx, pkt: &Packet) -> bool {
        match self.p.mark_scope {
            MarkScope::AllSwitches => true,
            MarkScope::SourceLeaf => self.is_source_leaf(cx, pkt),
        }
    }
}

impl SwitchBalancer for Tam {
    fn hooks(&self) -> Hooks {
        let choose_single = match self.kind {
            // A leaf is the source leaf of its hosts' flows (classified even without a choice) and, with
            // local counting, classifies the flows it delivers for its host ports' marking.
            SwitchKind::Leaf => true,
            SwitchKind::Spine => self.classifies_downstream(),
        };
        let enqueue = self.kind == SwitchKind::Leaf || self.p.mark_scope == MarkScope::AllSwitches;
        Hooks { arrival: false, enqueue, departure: false, choose_single }
    }

    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        self.first = cx.ports.first();
        let is_source = self.is_source_leaf(cx, pkt);
        let port = match pkt.kind {
            PacketKind::Data | PacketKind::Udp | PacketKind::Syn if is_source || self.classifies_downstream() => {
                self.flow_packet(cx, pkt, candidates, is_source)
            }
            PacketKind::Ack | PacketKind::SynAck if is_source && candidates.len() > 1 && self.p.ack_routing == AckRouting::FlowFastest => {
                self.ack_packet(cx, pkt, candidates)
            }
            _ => self.hash(pkt, candidates),
        };
        Decision::Forward(port)
    }

    fn on_enqueue(&mut self, cx: &mut SwitchCx, pkt: &mut MarkablePacket, port: PortId) {
        self.first = cx.ports.first();
        let data = matches!(pkt.kind, PacketKind::Data | PacketKind::Udp) && pkt.payload > 0;
        if data && self.marks_here(cx, pkt) {
            let long = match self.p.class_source {
                ClassSource::SourceLeafBit => Some(pkt.lb.scratch & LONG_BIT != 0),
                ClassSource::LocalCount => self.flows.get(&pkt.five_tuple()).map(|e| e.is_long),
            };
            let s = self.slot(port);
            match long {
                Some(false) => self.ports[s].last_short = Some(cx.now),
                Some(true) => {
                    // The queue the packet found, without itself; k* of this port's own rate.
                    let q = cx.ports.queue_bytes(port).saturating_sub(pkt.wire_bytes as u64);
                    let over = q > self.k_star_bytes(cx.ports.rate(port));
                    let coexist = self.ports[s].last_short.is_some_and(|t| cx.now.saturating_sub(t) <= self.short_window);
                    if self.p.marking && (over || coexist) && pkt.ecn.ect && !pkt.ecn.ce {
                        pkt.set_ce(true);
                        if over {
                            self.counters.marks_k_star += 1;
                        } else {
                            self.counters.marks_coexist += 1;
                        }
                    }
                }
                None => {}
            }
        }
        // The class bit never reaches a host.
        if self.p.class_source == ClassSource::SourceLeafBit && pkt.lb.scratch & LONG_BIT != 0 && cx.ports.role(port) == PortRole::LeafDown {
            pkt.lb_mut().scratch &= !LONG_BIT;
        }
    }

    fn on_timer(&mut self, cx: &mut SwitchCx) {
        let (now, expiry, first) = (cx.now, self.p.flow_idle_expiry_us, cx.ports.first());
        self.first = first;
        let (ports, counters) = (&mut self.ports, &mut self.counters);
        self.flows.retain(|_, e| {
            if now.saturating_sub(e.last_seen) <= expiry {
                return true;
            }
            counters.expired += 1;
            if e.counted {
                let ps = &mut ports[(e.port.0 - first.0) as usize];
                debug_assert!(ps.total_long > 0);
                ps.total_long -= 1;
                counters.expired_long += 1;
            }
            false
        });
    }

    fn timer_period(&self) -> Option<Time> {
        Some(self.p.sweep_period_us)
    }

    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.flows.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<FlowEntry>())
            + self.ports.len() * std::mem::size_of::<PortState>()
    }

    /// The counters, then `flow_entries`: the entries held when read, a reading of the table rather than an
    /// event count, so not a field of [`TamCounters`] (whose size `state_bytes` includes).
    fn counters(&self) -> CounterReport {
        let mut report = self.counters.report();
        report.counters.push(("flow_entries", self.flows.len() as u64));
        report
    }
}
