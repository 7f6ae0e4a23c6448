//! DAR: deadline-aware rerouting of mixed deadline and non-deadline flows at the switch (Hu, Zhi, Rao, Liu,
//! Wang, IEEE conference 2024; `Lnnn` is a line of the paper, see docs/references.md).
//!
//! **Rule** (§III.B, L72-L90). The sending host marks the packets of a flow that has a deadline, and the
//! switch rates every such flow by two urgency factors built from what the packet says about its flow: B,
//! the bytes still to transfer, W, the current window, and D, the time left before the deadline.
//! `T_c = 4B / (3W)` is D2TCP's completion estimate under a sawtooth window (the pessimistic case, L73) and
//! `T_o = B / W` the completion with the full window every round (the best path, L77); `d1 = T_c / D`,
//! `d2 = T_o / D`. A flow with `d2 > 1` cannot finish even on the best path: **Level III**, cancelled and
//! never routed again (L77, L79, L90). A flow with `d1 > 1 ≥ d2` would miss on a bad path but not on the best
//! one: **Level I**, sent to the best path, which stays its own until the flow completes (L79, L90). A flow
//! with `d1 ≤ 1` meets its deadline even in the pessimistic case: **Level II**, sent to the second-best path
//! (L79, L90). Flows without a deadline take the best of the "normal" paths (L90). The switch knows the
//! paths only through a *path status table*: its own output ports and their queue lengths in packets (L81);
//! routing is per flow, decided when the flow arrives, to avoid reordering (L57, L82).
//!
//! ```text
//!   data packet, DEADLINE bit ──► B, W, D from the header ──► d1, d2 ──┬─ d2 > 1 ──► cancel (notice to source)
//!   (at a switch with a choice)                                        ├─ d1 > 1 ──► best port, dedicated
//!                                                                      └─ else   ──► second-best port
//!   data packet, no deadline / ACK ──────────────────────────────────────────────► best port not dedicated
//! ```
//!
//! **How the sender learns of a cancellation.** The switch answers the flow's first Level III packet with
//! `Decision::Cancel`: the engine drops the packet and sends a Cancel notice (an ACK-sized packet) from this
//! switch back to the source host through the fabric, with the queueing and propagation that implies. On its
//! arrival the host ends the flow as cancelled: no more data, no retransmission, the RTO timer disarmed.
//! Data the host sent before the notice arrived meets the switch's Cancelled entry and is dropped
//! (`Decision::Drop`). A cancelled flow has no FCT and counts as a missed deadline (`deadline_met` false,
//! `flows_cancelled` in the run statistics).
//!
//! **Where the paper is vague or silent, and the parameter that decides** (details and line references in
//! `docs/assumptions.md`, § DAR):
//! * *Round trips against time* (L73, L77). `4B/3W` and `B/W` count windows, i.e. round trips, while D is a
//!   time. `rtt_mode = "path"` (default) multiplies `T_c` by the RTT of the worst candidate path and `T_o` by
//!   that of the best, the only reading in which the two factors come from worst- and best-case path
//!   conditions as L57 says. A candidate's RTT is its unloaded round trip from static fabric facts (host
//!   links, the uplink's propagation to the destination leaf, one full packet and one ACK serialised per hop)
//!   plus the time to drain the port's own queue. `"base"`: both use the unloaded RTT of the best candidate
//!   (then `d1 = 4/3 · d2` always). Remote queues are invisible, as the paper's table holds local ports only.
//! * *Boundaries* (L73, L77, L79 leave `d1 = 1` and `d2 = 1` unassigned): III iff `d2 > 1`, else I iff
//!   `d1 > 1`, else II; `D ≤ 0` is III, `B = 0` is II, W is floored at one full-size packet. Compared in exact
//!   integer arithmetic, so the boundaries are exact.
//! * *Header fields* (the paper gives no widths): the absolute deadline in whole microseconds in 32 bits
//!   (wrapping every 71.6 minutes; the switch reads D against its own clock), B in 32 bits (saturating at
//!   4 GiB − 1), W in bytes in 32 bits. The switch reads these quantised values ([`DeadlineHeader`]), never
//!   the host's full-precision ones. The end of a flow (for the release below) is the TCP FIN a real
//!   sender sets on the segment with the last byte (`class::FIN`).
//! * *Ranking* (L81 "queue length", packets): ports ranked by queued packets, ties broken by queued bytes,
//!   then by a fresh random draw from the switch's seeded stream (`queue_metric = "bytes"`: bytes, then
//!   random). Best = first, second best = second (the only port when there is one). The live queue is read
//!   at decision time ("continuously monitoring", L81).
//! * *Normal paths* for non-deadline flows (L90, undefined): `normal_paths = "no_level1"` (default) excludes
//!   ports that hold a Level I reservation ("dedicated", L90), falling back to every candidate when all are;
//!   `"no_deadline"` also excludes ports with an active Level II flow; `"not_best"` takes the second best;
//!   `"all"` the best.
//! * *Dedicated until completion* (L90): a Level I flow is pinned to its port for its life; the port is
//!   dedicated only against non-deadline flows (through the normal paths), since exclusivity against other
//!   deadline flows would use up three paths at once. The reservation ends with the packet that carries
//!   the flow's last byte, when the flow's entry expires, or when the flow is cancelled.
//! * *Rated once or continuously* (L57/L82 flow-level vs L23 rerouting near the deadline): `reclassify =
//!   "every_packet"` (default) rates every data packet; a Level II flow that becomes Level I moves to the best
//!   port once (the rerouting of the title and L23) and never moves again; Level I never moves; any packet
//!   that rates III cancels the flow. `"first_packet"` rates only a flow's first data packet.
//! * *Drop or cancel* (L77 "canceled for transmission", L90 "preemptively drop"): `level3_action = "cancel"`
//!   (default) drops the first Level III packet with a notice to the source and later ones silently;
//!   `"forward"` is an ablation that never drops and routes a Level III flow as Level I (it needs the best
//!   path most).
//! * *Which hops* (L72 "each hop recognizes"): DAR acts wherever the switch has a choice of egress: the
//!   source leaf's uplinks, and a spine's parallel links to the destination leaf (its RTT estimate there
//!   assumes the uplink the packet came by has the delay of the chosen down link). A hop with one egress
//!   forwards without rating: cancelling there would only undo the source leaf's decision.
//! * *Non-data packets*: ACKs, SYNs and cancel notices have their own entries (their own 5-tuple), are routed
//!   like non-deadline flows and are never dropped. A flow's class is fixed by its first data packet.
//! * *Flow table* (not described): exact per 5-tuple; an entry idle longer than `flow_idle_timeout_us` is
//!   treated as gone when looked up and removed (with its reservation) by a sweep every half timeout; a cancelled flow's entry is kept at least until its
//!   deadline, after which every packet of it would rate III anyway. If a flow's port stops being a candidate
//!   (a failed link), the flow is placed afresh.
//! * *Level III in slow start* (L77 says `d2 > 1` means the flow "will definitely miss"; D5 of the spec). `B/W`
//!   counts the rounds left as if the window stayed W, and in slow start it doubles every round: a 60 KB flow at
//!   its initial 10 segments needs 3 rounds, `B/W` says 4.1. Each round also counts a full round trip where the
//!   last one needs only the one-way trip to the receiver. So `d2` overstates the time left to need, and DAR
//!   cancels flows that would have met their deadline, and none that finish late (a flow falling behind rates
//!   III before its deadline passes). Sparing the first window (spec §6 item 5, `level3_grace`) was tried and
//!   not kept: the first packets after the first ACKs, with B barely lower and W barely higher, rate III as well.
//!   The paper's rule is applied literally; the cost in the DAR reproduction (issue #10, web search, load 0.7,
//!   paper scale, 5 seeds): every deadline DAR misses is a cancellation (6,702 of 30,822 deadline flows, 72% at
//!   the first window), and of the flows DAR cancelled 3,240 met their deadline under ECMP and 3,828 under DAR's
//!   own routing without cancelling (`level3_action = forward`), which misses 23% fewer deadlines than ECMP.
//!   How many flows fall in the band between their true completion and `B/W` depends on the deadlines, which
//!   the paper does not give. Test: `dar_cancels_a_flow_in_slow_start_that_would_meet_its_deadline`.
//!   `round_count = "slow_start"` is the reading that counts the rounds as a doubling window needs them:
//!   `r = log2(1 + B/W)` (`W + 2W + ... + 2^(r−1)·W = B`), `T_o = r` round trips of the best path and
//!   `T_c = 4r/3` of the worst (the sawtooth's 4/3 kept, so that `d1/d2` is what it is under `B/W`). It is
//!   below `B/W` once B exceeds W (3.5 rounds instead of 10 for B = 10 W) and above it below (a flow whose
//!   rest fits in its window needs at most one round: `log2(1 + B/W) ≤ 1` there), and it is what a sender
//!   in slow start does, not one in congestion avoidance, which the switch cannot tell apart.
//! * *What B counts* (`remaining_basis`; L73 "the remaining data", D2TCP's B). `"unacked"` (default): flow
//!   size less the bytes cumulatively acknowledged when the packet was sent, the header's `remaining` as
//!   the host stamps it: data in flight still counts, since it may yet be lost. `"unsent"`: flow size less
//!   the packet's sequence offset (the header's flow size and the TCP sequence number, both 32-bit), i.e.
//!   this packet and everything the sender has not sent yet: data in flight, which arrives within the
//!   current round, no longer counts. The two differ by the flight (up to a window); on a retransmission
//!   `unsent` counts from the retransmitted byte.
//! * *Priority* (`deadline_priority`; §III.B.1 L72: the switch "prioritizes" deadline packets; spec D18).
//!   As shipped DAR acts through path choice and dropping alone. `true` also stamps each packet's
//!   strict-priority level for ports with `topology.priority_queues` levels: a deadline flow's data the top
//!   level 0, other data the lowest, packets without payload (ACKs, SYNs, notices) the top. It is stamped
//!   at every switch that decides, and at the first switch a packet meets where there is no choice (an
//!   intra-leaf flow), so every packet has its level from its first hop.
//! * *UDP deadline flows* carry the sender's initial window as W (they have no window); they are rated like
//!   any other.
//! * *A lost notice.* Later packets of a cancelled flow are dropped without a notice while the entry lasts. A TCP
//!   sender retransmits after its timeout; once the deadline has passed and the entry has expired, its next
//!   packet rates III again and draws a new notice. A UDP source that never learns sends into the drop, and its
//!   flow stays unfinished: with DAR's periodic sweep such a run needs a horizon to end.
//!
//! **Defaults and sources.** The rule, the factors and the three levels: §III.B.2 (L73-L79); best, second best
//! and normal paths: §III.B.4 (L82, L90); queue length in packets: §III.B.3 (L81). The paper gives no number
//! for anything else. `rtt_mode = path`, `queue_metric = packets`, `normal_paths = no_level1`,
//! `reclassify = every_packet`, `level3_action = cancel`, `flow_idle_timeout_us = 1000`, `remaining_basis =
//! unacked`, `round_count = window`, `deadline_priority = false` are dclb choices
//! (dclb's implementation notes recommend them, §2.3, §3.2, §4, §7; see docs/references.md):
//! 1 ms is longer than any gap inside a live flow except after a retransmission timeout, when nothing is in
//! flight and re-placing cannot reorder.

use super::flowhash::FlowMap;
use super::params::{param_choice, scheme_params};
use super::scheme::{per_switch, reflect_path_and_class, scheme_counters, CounterReport, Placement, SchemeSpec};
use super::{Decision, DropReason, Hooks, PacketMut, SwitchBalancer, SwitchCx};
use crate::ids::{LeafId, PortId};
use crate::packet::{class, Packet};
use crate::units::{Bytes, Time};

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "dar",
    placement: Placement::Switch,
    granularity: "flow",
    summary: "deadline flows rated from header B, W, D: level I to the shortest queue (dedicated), II to the second, III cancelled; others to the best undedicated port",
    params: DarParams::SPECS,
    install: |cx, p| {
        let p = DarParams::from_params(p);
        per_switch(cx.switches, |_| Dar::new(&p))
    },
    reflect: reflect_path_and_class,
};

param_choice! {
    /// How DAR turns the round trips of `T_c` and `T_o` into time.
    pub enum RttMode {
        /// `T_c` times the worst candidate's RTT, `T_o` times the best's (unloaded RTT plus local queue).
        Path = "path",
        /// Both times the best candidate's unloaded RTT.
        Base = "base",
    }
}

param_choice! {
    /// What ranks ports in the path status table.
    pub enum QueueMetric {
        /// Queued packets, ties by queued bytes, then random.
        Packets = "packets",
        /// Queued bytes, ties random.
        Bytes = "bytes",
    }
}

param_choice! {
    /// Which ports are "normal paths" for non-deadline flows.
    pub enum NormalPaths {
        /// Ports without a Level I reservation (every candidate if all have one).
        NoLevel1 = "no_level1",
        /// Ports without an active Level I or Level II flow (every candidate if none is free).
        NoDeadline = "no_deadline",
        /// Every candidate but the best one.
        NotBest = "not_best",
        /// Every candidate.
        All = "all",
    }
}

param_choice! {
    /// When a deadline flow is rated.
    pub enum Reclassify {
        /// Every data packet (II may become I once; any packet rated III cancels).
        EveryPacket = "every_packet",
        /// The flow's first data packet only.
        FirstPacket = "first_packet",
    }
}

param_choice! {
    /// What happens to a Level III flow.
    pub enum Level3Action {
        /// Drop the packet and notify the source, drop the flow's later packets.
        Cancel = "cancel",
        /// Ablation: never drop; route the flow as Level I.
        Forward = "forward",
    }
}

scheme_params! {
    /// DAR's parameters.
    pub struct DarParams {
        /// how round trips become time: path (T_c x worst candidate RTT, T_o x best, local queues included) or
        /// base (both x the best unloaded RTT)
        #[source = "paper silent (L73, L77); dclb choice from L57 best/worst path conditions"]
        rtt_mode: RttMode = RttMode::Path,
        /// what ranks ports: packets (ties by bytes, then random) or bytes (ties random)
        #[source = "paper §III.B.3 L81 (packets); tie-breaks dclb"]
        queue_metric: QueueMetric = QueueMetric::Packets,
        /// normal paths for non-deadline flows: no_level1, no_deadline, not_best or all
        #[source = "paper L90 (undefined); dclb choice"]
        normal_paths: NormalPaths = NormalPaths::NoLevel1,
        /// rate deadline flows on every data packet (II may move to I once) or on the first only
        #[source = "paper L23 vs L57/L82; dclb choice"]
        reclassify: Reclassify = Reclassify::EveryPacket,
        /// level III: cancel (drop, notify the source) or forward (ablation: route as level I)
        #[source = "paper L77, L90"]
        level3_action: Level3Action = Level3Action::Cancel,
        /// a flow entry idle this long is removed with its reservation (a cancelled one not before its deadline)
        #[source = "paper silent; dclb choice (spec §2.3)"]
        flow_idle_timeout_us: Time = 1000.0,
        /// what B counts: unacked (flow size less the bytes cumulatively acknowledged, the header's remaining) or unsent (flow size less the packet's sequence offset)
        #[source = "paper L73 'remaining data' (D2TCP's B); unacked as shipped, unsent a reading (spec D5)"]
        remaining_basis: RemainingBasis = RemainingBasis::Unacked,
        /// how B and W become round trips: window (B/W, the paper's) or slow_start (log2(1 + B/W): the window doubles every round)
        #[source = "paper L73, L77 (B/W); slow_start: spec D5 reading (c)"]
        round_count: RoundCount = RoundCount::Window,
        /// deadline data at the top priority level, other data at the lowest (needs topology.priority_queues >= 2)
        #[source = "paper §III.B.1 L72 (deadline packets 'prioritized'); off: routing only, as shipped (spec D18)"]
        deadline_priority: bool = false,
    }
}

param_choice! {
    /// What DAR's B (bytes left to transfer) counts.
    pub enum RemainingBasis {
        /// Flow size less the bytes cumulatively acknowledged when the packet was sent (`LbHeader::remaining`).
        Unacked = "unacked",
        /// Flow size less the packet's sequence offset: this packet and every byte not yet sent.
        Unsent = "unsent",
    }
}

param_choice! {
    /// How DAR counts the round trips of `T_c` and `T_o`.
    pub enum RoundCount {
        /// `B/W` rounds (`T_c` = 4/3 of them), the paper's: the window stays W.
        Window = "window",
        /// `log2(1 + B/W)` rounds (`T_c` = 4/3 of them): the window doubles every round, as in slow start.
        SlowStart = "slow_start",
    }
}

/// The urgency level of a deadline flow (L79).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Level {
    /// Would miss on the worst path, makes it on the best: pinned to the best port, dedicated.
    I,
    /// Makes it even on the worst path: the second-best port.
    II,
    /// Misses even on the best path: cancelled.
    III,
}

/// The two urgency factors and the level they give.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Urgency {
    /// `T_c / D`, with `T_c = 4B/(3W)` round trips of `rtt_worst` (infinite once the deadline has passed).
    pub d1: f64,
    /// `T_o / D`, with `T_o = B/W` round trips of `rtt_best`.
    pub d2: f64,
    pub level: Level,
}

/// Rates a deadline flow: `b` bytes left, window `w` bytes (floored at `w_floor`), `time_left` picoseconds to
/// the deadline (zero or negative once passed), round trips of the best and worst candidate paths.
/// III iff `d2 > 1` (or `time_left ≤ 0`), else I iff `d1 > 1`, else II; `b = 0` is II. The comparisons are
/// exact (integers); `d1` and `d2` are reported as floats.
pub fn urgency(b: u64, w: u64, w_floor: u64, time_left: i64, rtt_best: Time, rtt_worst: Time) -> Urgency {
    urgency_counted(RoundCount::Window, b, w, w_floor, time_left, rtt_best, rtt_worst)
}

/// [`urgency`] with the round trips counted by `rounds`: `B/W` (the paper's, exact integer comparisons), or
/// `r = log2(1 + B/W)`, the rounds a window of W that doubles every round needs to send B (`W + 2W + ... +
/// 2^(r−1)W = B`), with `T_o = r` round trips of `rtt_best` and `T_c = 4r/3` of `rtt_worst`. The slow-start
/// count compares floats (`d2 > 1`, `d1 > 1`); it is below `B/W` once `B > W` and above it below.
pub fn urgency_counted(rounds: RoundCount, b: u64, w: u64, w_floor: u64, time_left: i64, rtt_best: Time, rtt_worst: Time) -> Urgency {
    if time_left <= 0 {
        return Urgency { d1: f64::INFINITY, d2: f64::INFINITY, level: Level::III };
    }
    if b == 0 {
        return Urgency { d1: 0.0, d2: 0.0, level: Level::II };
    }
    if rounds == RoundCount::SlowStart {
        let r = (1.0 + b as f64 / w.max(w_floor).max(1) as f64).log2();
        let d = time_left as f64;
        let d2 = r * rtt_best.ps() as f64 / d;
        let d1 = 4.0 * r * rtt_worst.ps() as f64 / (3.0 * d);
        let level = if d2 > 1.0 {
            Level::III
        } else if d1 > 1.0 {
            Level::I
        } else {
            Level::II
        };
        return Urgency { d1, d2, level };
    }
    let (b, w, d) = (b as u128, w.max(w_floor).max(1) as u128, time_left as u128);
    let (best, worst) = (rtt_best.ps() as u128, rtt_worst.ps() as u128);
    // d2 > 1  <=>  B·RTT_best > W·D ;  d1 > 1  <=>  4·B·RTT_worst > 3·W·D
    let (o, c, wd) = (b * best, 4 * b * worst, w * d);
    let d2 = o as f64 / wd as f64;
    let d1 = c as f64 / (3 * wd) as f64;
    let level = if o > wd {
        Level::III
    } else if c > 3 * wd {
        Level::I
    } else {
        Level::II
    };
    Urgency { d1, d2, level }
}

/// What a DAR switch reads from a deadline packet's balancer header, at the widths a real header has room
/// for: the quantised values, not the host's full-precision ones.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DeadlineHeader {
    /// Absolute deadline in whole microseconds, modulo 2^32 (floored from the host's deadline).
    pub deadline_us: u32,
    /// Bytes left to transfer B, saturating at 2^32 − 1.
    pub remaining: u32,
    /// Current window W in bytes.
    pub cwnd: u32,
}

const PS_PER_US: u64 = 1_000_000;

impl DeadlineHeader {
    /// The deadline fields of `pkt`, or `None` if it does not carry the DEADLINE class bit.
    pub fn read(pkt: &Packet) -> Option<DeadlineHeader> {
        Self::read_as(pkt, RemainingBasis::Unacked)
    }

    /// [`DeadlineHeader::read`] with B counted on `basis`: the header's `remaining` (unacknowledged), or the
    /// flow size less the packet's sequence offset (unsent; both 32-bit fields as a switch reads them).
    pub fn read_as(pkt: &Packet, basis: RemainingBasis) -> Option<DeadlineHeader> {
        let b = match basis {
            RemainingBasis::Unacked => pkt.lb.remaining,
            RemainingBasis::Unsent => pkt.lb.flow_size.saturating_sub(pkt.seq),
        };
        (pkt.lb.class & class::DEADLINE != 0).then(|| DeadlineHeader {
            deadline_us: (pkt.lb.deadline.ps() / PS_PER_US) as u32,
            remaining: b.min(u32::MAX as u64) as u32,
            cwnd: pkt.lb.cwnd,
        })
    }

    /// Picoseconds from `now` to the deadline, negative once passed (exact while within ±35 minutes of it,
    /// the range of the wrapping 32-bit microsecond field).
    pub fn time_left(&self, now: Time) -> i64 {
        time_left(self.deadline_us, now)
    }
}

fn time_left(deadline_us: u32, now: Time) -> i64 {
    let (now_us, frac) = (now.ps() / PS_PER_US, now.ps() % PS_PER_US);
    let whole = deadline_us.wrapping_sub(now_us as u32) as i32 as i64;
    whole * PS_PER_US as i64 - frac as i64
}

/// Where a flow stands at this switch.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum FlowKind {
    /// No data packet seen yet (only ACKs, SYNs, ...): routed like a non-deadline flow, class not yet known.
    #[default]
    New,
    NonDeadline,
    LevelI,
    LevelII,
    /// Cancelled: its data is dropped.
    Cancelled,
}

const NONE: PortId = PortId::NONE;

/// Whether an entry has ended at `now`: idle for longer than `idle`, unless it is a cancelled flow whose
/// deadline has not passed yet.
fn expired(e: &FlowEntry, now: Time, idle: Time) -> bool {
    now.saturating_sub(e.last_seen) > idle && !(e.kind == FlowKind::Cancelled && time_left(e.deadline_us, now) > 0)
}

/// One flow's entry in the switch's flow table.
#[derive(Copy, Clone, Debug)]
struct FlowEntry {
    /// Pinned egress port, `NONE` before placement.
    port: PortId,
    last_seen: Time,
    kind: FlowKind,
    /// Counted on its port: a Level I reservation, or a Level II flow (for `normal_paths = no_deadline`).
    counted: bool,
    /// The quantised deadline (for keeping a Cancelled entry until then).
    deadline_us: u32,
}

impl Default for FlowEntry {
    fn default() -> Self {
        FlowEntry { port: NONE, last_seen: Time::ZERO, kind: FlowKind::New, counted: false, deadline_us: 0 }
    }
}

scheme_counters! {
    /// What a DAR switch counts (reported per switch and summed over switches in the run's `scheme_counters`).
    #[scheme = SPEC]
    pub struct DarCounters {
        /// deadline flows placed as Level I at their first rated packet (placements: a flow placed again after
        /// its entry expired or its port failed counts again, here and in the next three)
        level1_flows,
        /// deadline flows placed as Level II
        level2_flows,
        /// Level II flows moved to the best port on becoming Level I
        promoted_to_level1,
        /// non-deadline data flows placed
        nondeadline_flows,
        /// flows cancelled at their first data packet here
        cancelled_at_first_packet,
        /// flows cancelled after having been placed
        cancelled_later,
        /// data packets of cancelled flows dropped
        dropped_after_cancel,
        /// packets rated Level III and forwarded as Level I (`level3_action = forward`)
        level3_forwarded,
        /// Level I reservations (and Level II counts) released by the packet with the flow's last byte
        released_at_last_byte,
        /// entries removed idle (reservations released with them)
        expired_entries,
    }
}

/// The DAR balancer of one switch.
pub struct Dar {
    p: DarParams,
    flows: FlowMap<FlowEntry>,
    /// Per port of this switch (index `port − first`): [Level I reservations, active Level II flows].
    counts: Vec<[u32; 2]>,
    first_port: PortId,
    counters: DarCounters,
    /// Scratch: candidates in rank order.
    ranked: Vec<PortId>,
    keys: Vec<(u64, u64, u64, PortId)>,
}

impl Dar {
    pub fn new(p: &DarParams) -> Dar {
        Dar { p: *p, flows: FlowMap::default(), counts: Vec::new(), first_port: PortId(0), counters: DarCounters::default(), ranked: Vec::new(), keys: Vec::new() }
    }

    pub fn params(&self) -> &DarParams {
        &self.p
    }

    /// Level I reservations held on `port` (a port of this switch).
    pub fn level1_reservations(&self, port: PortId) -> u32 {
        self.count(port, 0)
    }

    /// Active Level II flows pinned to `port`.
    pub fn level2_flows(&self, port: PortId) -> u32 {
        self.count(port, 1)
    }

    /// How this switch holds the flow whose packets have 5-tuple `key`: its kind and pinned port.
    pub fn flow(&self, key: u128) -> Option<(FlowKind, Option<PortId>)> {
        self.flows.get(&key).map(|e| (e.kind, (e.port != NONE).then_some(e.port)))
    }

    /// Flow entries held.
    pub fn entries(&self) -> usize {
        self.flows.len()
    }

    fn expired(&self, e: &FlowEntry, now: Time) -> bool {
        expired(e, now, self.p.flow_idle_timeout_us)
    }

    fn count(&self, port: PortId, which: usize) -> u32 {
        // Another switch's port (below this one's first, or past its last) holds nothing here.
        port.0.checked_sub(self.first_port.0).and_then(|i| self.counts.get(i as usize)).map_or(0, |c| c[which])
    }

    /// Round trip of the path through `port` with nothing queued anywhere: host links both ways, the fabric
    /// part from static facts, one full packet forward and one ACK back serialised on every hop.
    fn rtt_base(cx: &SwitchCx, port: PortId, dst_leaf: LeafId) -> Time {
        let f = cx.facts;
        let rate = cx.ports.rate(port);
        let fabric_one_way = match (cx.me.as_leaf(), cx.ports.uplink_index(port)) {
            (Some(leaf), Some(u)) => f.path_delay(leaf, u, dst_leaf),
            // A spine sees its down link only; the uplink that brought the packet is taken to be like it.
            _ => cx.ports.delay(port).mul(2),
        };
        let (mtu, ack) = (Bytes(f.mtu_wire_bytes as u64), Bytes(f.ack_wire_bytes as u64));
        let ser = f.host_rate.tx_time(mtu) + rate.tx_time(mtu) + f.host_rate.tx_time(ack) + rate.tx_time(ack);
        (f.host_delay.mul(2) + fabric_one_way).mul(2) + ser.mul(2)
    }

    /// RTT of the best and the worst candidate, by `rtt_mode`.
    fn rtts(&self, cx: &SwitchCx, candidates: &[PortId], dst_leaf: LeafId) -> (Time, Time) {
        let (mut best, mut worst) = (Time::MAX, Time::ZERO);
        for &p in candidates {
            let base = Self::rtt_base(cx, p, dst_leaf);
            let rtt = match self.p.rtt_mode {
                RttMode::Path => base + cx.ports.queue_delay(p),
                RttMode::Base => base,
            };
            best = best.min(rtt);
            worst = worst.max(rtt);
        }
        match self.p.rtt_mode {
            RttMode::Path => (best, worst),
            RttMode::Base => (best, best),
        }
    }

    /// Orders the candidates by the path status table (best first) into `self.ranked`.
    fn rank(&mut self, cx: &mut SwitchCx, candidates: &[PortId]) {
        self.keys.clear();
        for &p in candidates {
            let (a, b) = match self.p.queue_metric {
                QueueMetric::Packets => (cx.ports.queue_packets(p) as u64, cx.ports.queue_bytes(p)),
                QueueMetric::Bytes => (cx.ports.queue_bytes(p), 0),
            };
            self.keys.push((a, b, cx.rng.next_u64(), p));
        }
        self.keys.sort_unstable();
        self.ranked.clear();
        self.ranked.extend(self.keys.iter().map(|k| k.3));
    }

    fn second(&self) -> PortId {
        self.ranked[1.min(self.ranked.len() - 1)]
    }

    /// The best normal path among the ranked candidates.
    fn best_normal(&self) -> PortId {
        let free = |p: PortId, both: bool| self.count(p, 0) == 0 && (!both || self.count(p, 1) == 0);
        let pick = |both: bool| self.ranked.iter().copied().find(|&p| free(p, both)).unwrap_or(self.ranked[0]);
        match self.p.normal_paths {
            NormalPaths::NoLevel1 => pick(false),
            NormalPaths::NoDeadline => pick(true),
            NormalPaths::NotBest => self.second(),
            NormalPaths::All => self.ranked[0],
        }
    }

    fn slot(&mut self, port: PortId) -> &mut [u32; 2] {
        &mut self.counts[(port.0 - self.first_port.0) as usize]
    }

    /// Counts a placed Level I or Level II entry on its port.
    fn hold(&mut self, e: &mut FlowEntry) {
        let which = match e.kind {
            FlowKind::LevelI => 0,
            FlowKind::LevelII => 1,
            _ => return,
        };
        self.slot(e.port)[which] += 1;
        e.counted = true;
    }

    /// Ends an entry's reservation (or Level II count) on its port.
    fn release(&mut self, e: &mut FlowEntry) {
        if e.counted {
            let which = if e.kind == FlowKind::LevelI { 0 } else { 1 };
            self.slot(e.port)[which] -= 1;
            e.counted = false;
        }
    }

    /// A packet that follows the non-deadline rule: the pinned port, or the best normal path for a new one.
    fn route_plain(&mut self, cx: &mut SwitchCx, e: &mut FlowEntry, candidates: &[PortId]) -> PortId {
        if e.port == NONE {
            self.rank(cx, candidates);
            e.port = self.best_normal();
        }
        e.port
    }

    /// DAR's decision for a packet at a switch with a choice: the flow's entry looked up (an idle one is
    /// gone), [`Dar::decide`], the entry kept.
    fn choose_port(&mut self, cx: &mut SwitchCx, pkt: &Packet, candidates: &[PortId]) -> Decision {
        if self.counts.is_empty() {
            self.first_port = cx.ports.first();
            self.counts = vec![[0, 0]; cx.ports.len() as usize];
        }
        let key = pkt.five_tuple();
        let mut e = match self.flows.get(&key).copied() {
            Some(old) if !self.expired(&old, cx.now) => old,
            Some(mut old) => {
                // Idle past the timeout but not yet swept: the same as gone.
                self.release(&mut old);
                self.counters.expired_entries += 1;
                FlowEntry::default()
            }
            None => FlowEntry::default(),
        };
        e.last_seen = cx.now;
        let d = self.decide(cx, pkt, &mut e, candidates);
        self.flows.insert(key, e);
        d
    }

    fn decide(&mut self, cx: &mut SwitchCx, pkt: &Packet, e: &mut FlowEntry, candidates: &[PortId]) -> Decision {
        if e.port != NONE && !candidates.contains(&e.port) {
            // Its port went down: place the flow afresh (a deadline flow is rated again; a non-deadline or
            // cancelled one keeps its kind).
            self.release(e);
            e.port = NONE;
            if matches!(e.kind, FlowKind::LevelI | FlowKind::LevelII) {
                e.kind = FlowKind::New;
            }
        }
        if pkt.payload == 0 {
            return Decision::Forward(self.route_plain(cx, e, candidates));
        }
        if e.kind == FlowKind::Cancelled {
            self.counters.dropped_after_cancel += 1;
            return Decision::Drop(DropReason::Deadline);
        }
        let hdr = match DeadlineHeader::read_as(pkt, self.p.remaining_basis) {
            Some(h) if e.kind != FlowKind::NonDeadline => h,
            _ => {
                if e.kind == FlowKind::New {
                    e.kind = FlowKind::NonDeadline;
                    e.port = NONE;
                    self.counters.nondeadline_flows += 1;
                }
                return Decision::Forward(self.route_plain(cx, e, candidates));
            }
        };
        let placed = matches!(e.kind, FlowKind::LevelI | FlowKind::LevelII);
        if !(placed && self.p.reclassify == Reclassify::FirstPacket) {
            let (best, worst) = self.rtts(cx, candidates, cx.facts.leaf_of_host(pkt.dst));
            let u = urgency_counted(self.p.round_count, hdr.remaining as u64, hdr.cwnd as u64, cx.facts.mtu_wire_bytes as u64, hdr.time_left(cx.now), best, worst);
            let level = match u.level {
                Level::III if self.p.level3_action == Level3Action::Forward => {
                    self.counters.level3_forwarded += 1;
                    Level::I
                }
                Level::III => {
                    self.release(e);
                    if placed {
                        self.counters.cancelled_later += 1;
                    } else {
                        self.counters.cancelled_at_first_packet += 1;
                    }
                    e.kind = FlowKind::Cancelled;
                    e.deadline_us = hdr.deadline_us;
                    return Decision::Cancel(DropReason::Deadline);
                }
                l => l,
            };
            match (e.kind, level) {
                (FlowKind::New, Level::I) | (FlowKind::LevelII, Level::I) => {
                    if e.kind == FlowKind::LevelII {
                        self.release(e);
                        self.counters.promoted_to_level1 += 1;
                    } else {
                        self.counters.level1_flows += 1;
                    }
                    self.rank(cx, candidates);
                    e.port = self.ranked[0];
                    e.kind = FlowKind::LevelI;
                    self.hold(e);
                }
                (FlowKind::New, _) => {
                    self.rank(cx, candidates);
                    e.port = self.second();
                    e.kind = FlowKind::LevelII;
                    self.counters.level2_flows += 1;
                    self.hold(e);
                }
                _ => {} // Level II rated II, Level I rated anything but III: stay
            }
        }
        // The packet with the last byte (a real sender's FIN) ends the reservation; the pin stays.
        if e.counted && pkt.lb.class & class::FIN != 0 {
            self.release(e);
            self.counters.released_at_last_byte += 1;
        }
        Decision::Forward(e.port)
    }
}

/// The priority level of a packet under `deadline_priority` on ports with `levels` levels: deadline data and
/// packets without payload the top, other data the lowest.
fn level_of(pkt: &Packet, levels: u8) -> u8 {
    if pkt.payload > 0 && pkt.lb.class & class::DEADLINE == 0 {
        levels.saturating_sub(1)
    } else {
        0
    }
}

impl SwitchBalancer for Dar {
    fn hooks(&self) -> Hooks {
        // Stamping priority needs the first switch of every packet, also where it has no choice.
        Hooks { choose_single: self.p.deadline_priority, ..Hooks::CHOOSE_ONLY }
    }

    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if candidates.len() == 1 {
            // Only with `deadline_priority` (`hooks`): no rating here, only the level at the first switch.
            if pkt.hops == 1 {
                pkt.set_priority(level_of(pkt, cx.ports.priority_levels(candidates[0])));
            }
            return Decision::Forward(candidates[0]);
        }
        let d = self.choose_port(cx, pkt, candidates);
        if let (true, Decision::Forward(port)) = (self.p.deadline_priority, d) {
            pkt.set_priority(level_of(pkt, cx.ports.priority_levels(port)));
        }
        d
    }

    fn on_timer(&mut self, cx: &mut SwitchCx) {
        let (now, idle) = (cx.now, self.p.flow_idle_timeout_us);
        let mut gone = Vec::new();
        self.flows.retain(|_, e| {
            let keep = !expired(e, now, idle);
            if !keep {
                gone.push(*e);
            }
            keep
        });
        for mut e in gone {
            self.release(&mut e);
            self.counters.expired_entries += 1;
        }
    }

    fn timer_period(&self) -> Option<Time> {
        Some(Time(self.p.flow_idle_timeout_us.ps() / 2).max(Time::from_ns(1)))
    }

    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.flows.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<FlowEntry>()) + self.counts.len() * std::mem::size_of::<[u32; 2]>()
    }

    fn counters(&self) -> CounterReport {
        self.counters.report()
    }
}
