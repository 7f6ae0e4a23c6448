//! LBT: three traffic classes, each routed by its own rule on the switch's own queues, with two thresholds
//! recomputed from the measured load (Wang, Rao, Liu, Sharma, Hu, "Load balancing for heterogeneous traffic in
//! datacenter networks", J. Netw. Comput. Appl. 2023; `Lnnn` below is a line of the paper, see docs/references.md).
//!
//! **Rule** (§3 L104–L115, §4.2 L202–L208, Algorithm 1 L212–L256, §5 L267–L271). A switch that has several
//! equal-cost egress ports sorts every packet into one of three classes:
//!
//! * *best-effort* (BE): the sender flags the flow as BE, known in advance (L267);
//! * *short*: a flow is short while it has sent no more than 100 KB (L267: every flow starts short, and
//!   becomes long once the bytes it has sent exceed 100 KB);
//! * *long*: the rest.
//!
//! A short flow is placed once, on the port with the shortest queue, and keeps that port (flow granularity,
//! L52, L202, L269). A long packet goes to the port with the longest queue that is still below the first
//! threshold `Q1`; a BE packet likewise below the second threshold `Q2` (L52, L152, L204, L208). When no
//! candidate queue is below the threshold, the packet goes to the longest queue of all (Algorithm 1's `else`
//! branch, L206). `Q1` and `Q2` are recomputed every `t` = 500 µs (L123, L208, L284) from what the switch
//! measured in the last period; the paper wants them to rise with the load, so that long and BE traffic packs
//! onto fewer, fuller ports when the fabric is busy (coarser switching) and spreads when it is idle (L22,
//! L125), with `Q2` above `Q1` (L208, L271).
//!
//! ```text
//!   packet ─► class?  BE flag ──────────────► BE:    longest queue < Q2, else longest queue
//!                     bytes sent > 100 KB ──► long:  longest queue < Q1, else longest queue
//!                     otherwise ────────────► short: the flow's port; first packet: shortest queue
//!   every t: measured bytes/flows/links per class ─► l1, l2 (eqs 1, 2) ─► Q1, Q2
//! ```
//!
//! **What packets carry** (nothing else is read, nothing is written):
//! * the BE flag, 1 bit, set by the sending host (`class::BEST_EFFORT`, the traffic source's `best_effort`);
//! * the flow's byte offset, from the TCP sequence number (32 bits; taken modulo 2^32 here, as a switch sees
//!   it). dclb's senders number bytes from 0, so `seq + payload` of a data segment is the bytes the sender has
//!   sent up to and including it. This is how the switch learns "bytes sent so far": the paper has the host
//!   decide it from its sent count (L267), and the sequence number is that count, written by the sender in
//!   every segment, so no new header field is needed. Counting at the switch was rejected: a switch sees only
//!   the packets that cross it (a spine sees part of a flow sprayed per packet), counts retransmissions
//!   twice, and forgets the count when the entry expires. A real switch would subtract the ISN it saw in
//!   the SYN. UDP datagrams carry the same offset in `seq` and are classified the same way.
//!
//! **Choices where the paper is vague or contradictory** (details and the paper's words in
//! `docs/assumptions.md`, § LBT):
//! * *Thresholds* (`threshold_model`). Eqs 1–11 cannot be used as printed: eqs 1, 2, 6, 7, 9, 11 lack the
//!   period (a count times bytes over a rate is a time, not a load), eqs 3, 6, 7, 9, 11 carry a stray `1/X_s`,
//!   eq 6 writes `Q1 + G` for `Q1 + G·t`, the target `E[FCT_s]` that eqs 9 and 11 need is never given, and
//!   once repaired the result `Q = P·X/(Z − K_other) − G·t` is negative whenever the long (BE) bytes per
//!   allotted link stay below a period's line rate and infinite when `Z = K_other`. The repaired formula also
//!   *falls* as load rises (≈ 193 KB at load 0.3, 60 KB at 0.5, 18 KB at 0.7 with one short link), against the
//!   paper's own claim (L125), and does not imply `Q2 ≥ Q1` (claimed at L208). Two bounded modes:
//!   - `"mg1_backlog"` (default): the threshold is the mean backlog, in bytes, of the paper's own queue model
//!     at the measured load: `G·E[W_q] = W·l/(2(1 − l))` (eq 5 times the link rate), with `l1` for `Q1` and
//!     `l2` for `Q2` (eqs 1, 2 with the period put in). It rises strictly with load (L125) and gives `Q2 ≥ Q1`
//!     because `l2 ≥ l1` (L208). Load ≥ 1 gives the upper bound.
//!   - `"paper"`: eqs 8–11 after the repairs above, with `E[FCT_s] = γ·(N·R + X_s/G)` (`fct_target_factor` γ,
//!     `rtt_us` R) unless `fct_target_us` is set; a class without traffic keeps its previous threshold, a
//!     non-positive denominator or target gives the upper bound, a negative result the lower bound.
//!
//!   Both clamp to `[q_min_bytes, q1_max_bytes]` and `[q_min_bytes, q2_max_bytes]` and then raise `Q2` to at
//!   least `Q1`. The upper bound of `Q1` defaults to the candidate ports' ECN marking threshold (DCTCP holds a
//!   busy queue near it, so a higher `Q1` would never be reached and every long flow would pile onto one
//!   port), or to the buffer less one packet where marking is off; that of `Q2` to the buffer less one packet.
//!   Where the group's ports differ (a slowed link has a smaller K and buffer), the smallest bound applies.
//!   Before the first period ends both thresholds are `q_min_bytes`.
//! * *Measured quantities* (L267 names only "queue length, traffic quantity, traffic size"): per candidate
//!   group and period, `B_s, B_l, B_b` = wire bytes of data packets this switch sent into the group's ports
//!   (= `P·X` of eqs 1, 2; counted at the decision, so packets the port then drops count as offered load);
//!   `P_*` = distinct flows that sent data in the class; `K_*` = ports that carried data of the class; `K` =
//!   the group's ports and `G` their mean rate. `X_s = B_s/P_s` (previous value if no short data;
//!   `x_s_init_bytes` at first). `N = max(1, log2(X_s/m) + 1)`, `m` = `slow_start_unit_bytes` (undefined in
//!   the paper, L156). Only the `paper` mode uses `P_*`, `K_*`, `X_s`, `R`, `m`.
//! * *Where the threshold applies* (L196 "the two thresholds on the links"): one pair per candidate group, the
//!   set of ports one decision chooses among. A leaf has one group (its uplinks); a spine with parallel links
//!   to a leaf has one group per destination leaf.
//! * *Long/BE granularity* (`long_mode`). Algorithm 1 loops "for per packet" and tests `Qlength < Q1` without
//!   saying whose queue. `"sticky"` (default): a long (BE) flow keeps its port while that port's queue is
//!   below the threshold, and moves to the longest queue below it once its port reaches it (L152 "rerouted
//!   when the queue ... is greater than Q1", L206 "reaches", L271 "once the queue length hits the
//!   threshold"). `"per_packet"`: every long (BE) packet is placed afresh (the literal algorithm). In both
//!   the first long packet of a flow (the one crossing 100 KB) is placed afresh.
//! * *Strictness* (L152 "greater than", L206 "reaches", Algorithm 1 `<`): a port is within the threshold iff
//!   its queue is strictly below it, so a queue equal to the threshold makes a flow move.
//! * *Short granularity* (`short_granularity`). The text says per flow (L52, L202, L269), the algorithm's loop
//!   per packet: `"flow"` (default) or `"packet"` (every short packet to the current shortest queue).
//! * *Class boundary*: long once `seq + payload > short_threshold_bytes` (strict, L267 "greater than"; 100 KB
//!   read as 100,000 B, dclb's short-flow bucket). Monotone: a flow that became long stays long while its
//!   entry lives, so retransmitted early bytes do not make it short again.
//! * *Queue length* (Algorithm 1's `Qlength`): bytes queued at the port, the packet in service included.
//! * *Ties*: uniformly at random with the switch's seeded stream; a sticky flow whose port is among the
//!   longest when every queue is at or above the threshold stays.
//! * *Packets without payload* (ACKs, SYNs; the paper does not mention them) are routed as short flows of
//!   their own 5-tuple and are not counted in the load.
//! * *Flow entries* (per exact 5-tuple) expire after `flow_idle_timeout_us` without a packet, swept every
//!   period; the next packet is placed afresh (its class is re-derived from its sequence number).
//! * *BE pausing* (L70, L208: BE flows "can be paused"): no mechanism is described; none is modelled.
//! * *Priority* (`short_priority`; L202–L208, L269: short flows "take priority", long flows' "priority is
//!   lower", BE's "the lowest"). As shipped (`false`) LBT acts through routing alone, as its algorithm
//!   does. `true` also stamps each packet's strict-priority level where LBT classifies it, for ports with
//!   `topology.priority_queues` levels: short packets (and packets without payload) the top level 0, long
//!   ones level 1, BE ones the lowest level (with two levels, long and BE share level 1). It is stamped at
//!   every switch that decides, and at the first switch a packet meets where there is no choice (an
//!   intra-leaf flow, a fabric with one uplink), from the packet alone (BE bit, sequence offset), so that
//!   every packet gets its level at its first hop and keeps it (a later hop without a choice leaves it).
//! * *Placement with the handshake on* (`short_placement`). A SYN carries the flow's 5-tuple and no
//!   payload, so it is routed as a short flow and makes the flow's entry; the first data packet, an RTT
//!   later, finds the entry and keeps the SYN's port, chosen on queues an RTT old. `"syn"` (default, as
//!   shipped): the SYN is the flow's first packet at the switch (L52, L202), as it is in the paper's
//!   ns-2 FullTcp runs. `"first_data"`: the SYN goes to the shortest queue and leaves no entry, so the
//!   first data packet places the flow on the queues it will meet. Without the handshake both are the same.
//! * A switch with a single candidate forwards without running LBT (no state, no counting), so in a fabric
//!   with one link per leaf-spine pair only source leaves decide, and spines keep no state and no timer.
//!
//! **Defaults and sources.** `short_threshold_bytes` 100,000 (L70, L156, L267); `period_us` 500 (L123, L208,
//! L284); `max_window_bytes` W = 65,536 (Table 1, "64 KB"); `rtt_us` R = 100 (Table 1 symbol, value L86,
//! L284); `slow_start_unit_bytes` m = 7,300 (not given; half of dclb's initial window of 10 × 1,460 B, since
//! the paper's first round sends `2m`); `fct_target_factor` γ = 2 and `x_s_init_bytes` 10,000 (dclb choices,
//! `paper` mode only); `q_min_bytes` 1,500 (one full-size packet); `q1_max_bytes` / `q2_max_bytes` 0 = from the
//! ports (above); `flow_idle_timeout_us` 1,000 (two periods: a gap that long within a flow means a
//! retransmission timeout, when nothing of the flow is in flight, so re-placing it cannot reorder);
//! `threshold_model` `mg1_backlog`, `long_mode` `sticky`, `short_granularity` `flow`, `short_priority` off,
//! `short_placement` `syn` (above).
//!
//! **Counters** (per switch, summed into the run's `scheme_counters`): `lbt_decisions_*`, `lbt_placements_*`,
//! `lbt_moves_*`, `lbt_to_shorter_*` (a live flow's port changes onto a shorter queue than the one it left:
//! likely reorderings; every sticky move is one), `lbt_all_above_long/be`, `lbt_to_long`, `lbt_periods`; `*` is
//! `short`, `long`, `be`. Why LBT reorders and drops on `asym_4x4`: `docs/assumptions.md` § LBT.

use super::flowtable::{Clock, FlowTable, Timeout};
use super::params::{param_choice, scheme_params};
use super::scheme::{per_switch, reflect_path_and_class, scheme_counters, CounterReport, Placement, SchemeSpec};
use super::{Decision, Hooks, PacketMut, PortsView, SwitchBalancer, SwitchCx, SwitchInfo, SwitchKind};
use crate::config::QueueUnit;
use crate::fabric::FabricFacts;
use crate::ids::PortId;
use crate::packet::{class, PacketKind};
use crate::rng::Rng;
use crate::units::Time;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "lbt",
    placement: Placement::Switch,
    granularity: "flow/packet",
    summary: "short flows pinned to the shortest queue; long and best-effort packets to the longest queue below Q1 / Q2, thresholds recomputed from the load every 500 us",
    params: LbtParams::SPECS,
    install: |cx, p| {
        let p = LbtParams::from_params(p);
        per_switch(cx.switches, |s| Lbt::new(p, s, cx.facts))
    },
    reflect: reflect_path_and_class,
};

scheme_params! {
    /// LBT's parameters.
    pub struct LbtParams {
        /// a flow is long once the bytes it has sent (sequence offset) exceed this
        #[source = "LBT §2.1 L70, §4.1 L156, §5 L267 (100 KB)"]
        short_threshold_bytes: u64 (bytes) in 1..=1_000_000_000_000 = 100_000,
        /// t: thresholds recomputed, and load measured, over periods of this length
        #[source = "LBT §4.1 L123, §4.2 L208, §6 L284"]
        period_us: Time in 1.0..=1e7 = 500.0,
        /// how Q1/Q2 follow from the measured load: mg1_backlog (W·l/(2(1-l)), eqs 1, 2, 5) or paper (eqs 8-11, guarded)
        #[source = "dclb choice: eqs 8-11 are ill-posed as printed (docs/assumptions.md, § LBT)"]
        threshold_model: ThresholdModel = ThresholdModel::Mg1Backlog,
        /// sticky: a long/BE flow keeps its port until that queue reaches the threshold; per_packet: every packet placed afresh
        #[source = "LBT §4.1 L152, §4.2 L206, §5 L271 (sticky); Algorithm 1 'for per packet' (per_packet)"]
        long_mode: LongMode = LongMode::Sticky,
        /// flow: a short flow keeps the port chosen for its first packet; packet: every short packet to the shortest queue
        #[source = "LBT §1 L52, §4.2 L202, §5 L269 (flow); Algorithm 1 loop (packet)"]
        short_granularity: ShortGranularity = ShortGranularity::Flow,
        /// W: maximum TCP window of the queueing model
        #[source = "LBT Table 1 (64 KB)"]
        max_window_bytes: u64 (bytes) in 1..=1_000_000_000 = 65_536,
        /// R: round-trip propagation delay; only sets the default FCT target of the paper model
        #[source = "LBT Table 1 (symbol), L86 and L284 (100 us)"]
        rtt_us: Time = 100.0,
        /// m: slow-start unit (the first round sends 2m); paper model only
        #[source = "not given (L156); dclb: half of the initial window 10 x 1460 B"]
        slow_start_unit_bytes: u64 (bytes) in 1..=1_000_000_000 = 7_300,
        /// E[FCT_s] target of eqs 9 and 11; 0 = fct_target_factor x (N·R + X_s/G); paper model only
        #[source = "not given (eqs 8-11); dclb choice"]
        fct_target_us: Time = 0.0,
        /// gamma of the default target gamma x (N·R + X_s/G); paper model only
        #[source = "dclb choice (twice the unloaded FCT of a mean short flow)"]
        fct_target_factor: f64 in 1.0..=1000.0 = 2.0,
        /// lower bound of Q1 and Q2, and their value before the first period ends
        #[source = "dclb choice (one full-size packet)"]
        #[relation(<= q1_max_bytes if q1_max_bytes > 0, "Q1 is clamped to [q_min_bytes, q1_max_bytes]; a lower bound above the upper one would be silently raised")]
        #[relation(<= q2_max_bytes if q2_max_bytes > 0, "Q2 is clamped to [q_min_bytes, q2_max_bytes]; a lower bound above the upper one would be silently raised")]
        q_min_bytes: u64 (bytes) in 0..=1_000_000_000 = 1_500,
        /// upper bound of Q1; 0 = the candidate ports' ECN threshold (buffer less one packet if they do not mark)
        #[source = "dclb choice: DCTCP keeps a busy queue near K, so a larger Q1 is never reached"]
        #[relation(<= q2_max_bytes if q2_max_bytes > 0, "Q2 is raised to at least Q1, so a Q1 bound above Q2's would silently move Q2's")]
        q1_max_bytes: u64 (bytes) in 0..=1_000_000_000 = 0,
        /// upper bound of Q2; 0 = the candidate ports' buffer less one packet
        #[source = "dclb choice (BE may fill one link, L208, L271)"]
        q2_max_bytes: u64 (bytes) in 0..=1_000_000_000 = 0,
        /// a flow entry idle this long is dropped; the flow's next packet is placed afresh
        #[source = "dclb choice (two periods; such a gap means a retransmission timeout)"]
        flow_idle_timeout_us: Time in 1.0..=1e9 = 1000.0,
        /// X_s before any short flow was measured; paper model only
        #[source = "dclb choice"]
        x_s_init_bytes: u64 (bytes) in 1..=1_000_000_000 = 10_000,
        /// short packets at the top priority level, long ones below, best-effort at the lowest (needs topology.priority_queues >= 2)
        #[source = "LBT §4.2 L202-L208, §5 L269 (short flows 'take priority', BE 'the lowest'); off: routing only, as shipped"]
        short_priority: bool = false,
        /// where a short flow is placed with the handshake on: syn (its SYN makes the entry, an RTT before its data) or first_data (the SYN leaves no entry)
        #[source = "LBT L52, L202 ('the flow's first packet'); syn: a 5-tuple table sees the SYN first (as shipped); first_data: the queue the data will meet"]
        short_placement: ShortPlacement = ShortPlacement::Syn,
    }
}

param_choice! {
    /// How LBT turns a period's measurements into Q1 and Q2.
    pub enum ThresholdModel {
        /// The mean M/D/1 backlog at the measured load, `W·l/(2(1 − l))` (eqs 1, 2, 4, 5).
        Mg1Backlog = "mg1_backlog",
        /// Eqs 8–11 with units repaired and every ill-posed case bounded.
        Paper = "paper",
    }
}

param_choice! {
    /// How long and BE flows keep a port.
    pub enum LongMode {
        /// Keep the port while its queue is below the threshold.
        Sticky = "sticky",
        /// Every packet placed afresh (Algorithm 1 literally).
        PerPacket = "per_packet",
    }
}

param_choice! {
    /// How short flows keep a port.
    pub enum ShortGranularity {
        /// The port chosen for the flow's first packet.
        Flow = "flow",
        /// Every packet to the shortest queue.
        Packet = "packet",
    }
}

param_choice! {
    /// Which packet places a short flow when the flow opens with a handshake.
    pub enum ShortPlacement {
        /// The SYN (the flow's first packet): it makes the flow's entry, and the data finds it.
        Syn = "syn",
        /// The first data packet: a SYN goes to the shortest queue and leaves no entry.
        FirstData = "first_data",
    }
}

/// The three traffic classes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Class {
    #[default]
    Short = 0,
    Long = 1,
    BestEffort = 2,
}

/// Sequence numbers as a switch reads them: 32 bits.
const SEQ_MASK: u64 = 0xFFFF_FFFF;

/// What a switch keeps per flow.
#[derive(Copy, Clone, Debug, Default)]
struct FlowData {
    /// Highest sequence offset (`seq + payload`, 32 bits) seen in this entry's lifetime.
    max_end: u64,
    class: Class,
    /// The class under which the entry's port was chosen (a class change forces a fresh choice).
    placed_as: Class,
    /// Whether the entry holds a port at all.
    placed: bool,
    /// Period in which the flow was last counted in `P_s`, `P_l`, `P_b` (0: never; periods start at 1).
    counted: [u32; 3],
}

/// What one candidate group measured during a period: the inputs of eqs 1–11.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Measured {
    /// `B_s, B_l, B_b` = `P_s·X_s, P_l·X_l, P_b·X_b`: wire bytes of data sent into the group's ports per class.
    pub bytes: [u64; 3],
    /// `P_s, P_l, P_b`: distinct flows that sent data of the class.
    pub flows: [u32; 3],
    /// `K_s, K_l, K_b`: ports of the group that carried data of the class.
    pub links: [u32; 3],
    /// `K`: ports of the group.
    pub k: u32,
    /// `K·G`: the summed rate of the group's ports, in bytes per second.
    pub capacity: f64,
}

/// Bounds of the thresholds, in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub q_min: u64,
    pub q1_max: u64,
    pub q2_max: u64,
}

/// The outcome of one threshold update.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// Bytes.
    pub q1: u64,
    pub q2: u64,
    /// Load strengths of eqs 1 and 2.
    pub l1: f64,
    pub l2: f64,
    /// The `X_s` estimate carried to the next period.
    pub x_s: f64,
}

fn clamp(x: f64, lo: u64, hi: u64) -> u64 {
    let hi = hi.max(lo);
    if x.is_nan() {
        return hi;
    }
    (x.round().max(lo as f64).min(hi as f64)) as u64
}

/// `Q1` and `Q2` from one period's measurements `m` (`period`: the period's length, `prev`: the previous
/// thresholds, `x_s_prev`: the previous `X_s`). Always finite, within `bounds`, and `q2 ≥ q1`.
pub fn thresholds(p: &LbtParams, m: &Measured, bounds: Bounds, period: Time, prev: (u64, u64), x_s_prev: f64) -> Thresholds {
    let t = period.as_secs();
    let [b_s, b_l, b_b] = m.bytes.map(|b| b as f64);
    let per_period = m.capacity * t; // K·G·t, bytes
    let (a1, a2) = (b_s + b_l, b_s + b_l + b_b);
    let (l1, l2) = if per_period > 0.0 { (a1 / per_period, a2 / per_period) } else { (0.0, 0.0) };
    let x_s = if m.flows[0] > 0 && b_s > 0.0 { b_s / m.flows[0] as f64 } else { x_s_prev };
    let w = p.max_window_bytes as f64;
    let (q1, q2) = match p.threshold_model {
        ThresholdModel::Mg1Backlog => {
            // G·E[W_q] with E[W_q] = l/(2(1 − l))·W/G (eq 5): the mean backlog in bytes.
            let backlog = |l: f64, max: u64| if l >= 1.0 { max as f64 } else { w * l / (2.0 * (1.0 - l)) };
            (clamp(backlog(l1, bounds.q1_max), bounds.q_min, bounds.q1_max), clamp(backlog(l2, bounds.q2_max), bounds.q_min, bounds.q2_max))
        }
        ThresholdModel::Paper => {
            let k = m.k.max(1) as f64;
            let g = m.capacity / k; // G, bytes/s per link
            let gt = g * t;
            let n = ((x_s / p.slow_start_unit_bytes as f64).log2() + 1.0).max(1.0);
            let tx = if g > 0.0 { x_s / g } else { f64::INFINITY };
            let target = if p.fct_target_us > Time::ZERO { p.fct_target_us.as_secs() } else { p.fct_target_factor * (n * p.rtt_us.as_secs() + tx) };
            let slack = target - tx; // T − X_s/G: the queueing budget
            let eps = n * w / (2.0 * g * slack);
            let [k_s, k_l, k_b] = m.links.map(|x| x as f64);
            // Eq 8 (9) for Q1 and eq 10 (11) for Q2: Q = A/(Z − K_other) − G·t, Z = (1 + ε)·A_all/(G·t).
            let solve = |a: f64, a_all: f64, k_other: f64, prev: u64, max: u64| -> u64 {
                if a <= 0.0 {
                    return prev; // nothing of the class to steer: keep the previous threshold
                }
                if !(slack > 0.0) || !(gt > 0.0) {
                    return max;
                }
                let d = (1.0 + eps) * a_all / gt - k_other;
                if d <= 0.0 {
                    return max; // no room left for this class's links: pack it as densely as allowed
                }
                clamp(a / d - gt, bounds.q_min, max)
            };
            let q1 = solve(b_l, a1, k_s + k_b, prev.0, bounds.q1_max);
            let q2 = solve(b_b, a2, k_s + k_l, prev.1, bounds.q2_max);
            (clamp(q1 as f64, bounds.q_min, bounds.q1_max), clamp(q2 as f64, bounds.q_min, bounds.q2_max))
        }
    };
    Thresholds { q1, q2: q2.max(q1), l1, l2, x_s }
}

/// One candidate group: the ports one decision chooses among, what was measured on them this period, and
/// the thresholds in force.
struct Group {
    /// Local port indices (port − first port of the switch) that ever were candidates of this group.
    member: Vec<bool>,
    members: u32,
    /// `K·G` in bytes per second.
    capacity: f64,
    bounds: Bounds,
    /// Classes that sent data into each local port this period (bit per class), for `K_s, K_l, K_b`.
    mask: Vec<u8>,
    bytes: [u64; 3],
    flows: [u32; 3],
    q1: u64,
    q2: u64,
    l1: f64,
    l2: f64,
    x_s: f64,
}

/// What a group looks like to tests and tools.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct GroupView {
    pub q1: u64,
    pub q2: u64,
    /// Load strengths of the last completed period.
    pub l1: f64,
    pub l2: f64,
    pub bounds: Bounds,
    /// Ports in the group, and their summed rate in bytes per second.
    pub k: u32,
    pub capacity: f64,
    /// This period's measurements so far.
    pub measured: Measured,
}

scheme_counters! {
    /// What one switch's LBT did; per class `short`, `long`, `be` (best effort).
    #[scheme = SPEC]
    pub struct LbtCounters {
        /// decisions per class, data and control packets alike
        decisions[short, long, be],
        /// decisions that chose a port afresh (the first packet of a flow entry, a class change, a move)
        placements[short, long, be],
        /// placements that changed a live flow's port within its class (reroutes)
        moves[short, long, be],
        /// port changes of a live flow (a move, or the short-to-long switch) onto a queue shorter than the one
        /// of the port it left, per class of the packet: the flow's packets still queued on the old port are
        /// then overtaken, so each counts a likely reordering (a sticky long/BE move always lands on a shorter
        /// queue: it leaves a queue at or above the threshold for one below it)
        to_shorter[short, long, be],
        /// long / BE decisions that found every candidate at or above the threshold
        all_above[long, be],
        /// flows that turned from short into long
        to_long,
        /// threshold updates
        periods,
    }
}

/// The last decision, for tests and decision traces.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LastDecision {
    pub class: Class,
    pub port: PortId,
    /// The flow's port before this packet (`None` for a new entry or a class change).
    pub previous: Option<PortId>,
    /// The threshold that applied (0 for short).
    pub threshold: u64,
    /// Every candidate was at or above the threshold.
    pub all_above: bool,
}

/// The LBT balancer of one switch.
pub struct Lbt {
    p: LbtParams,
    /// Whether this switch can ever have more than one candidate (else no timer and no state).
    decides: bool,
    /// Spines keep one group per destination leaf; leaves one group.
    spine: bool,
    mtu: u64,
    flows: FlowTable<FlowData>,
    groups: Vec<Option<Group>>,
    /// Current period number (starts at 1).
    period: u32,
    counters: LbtCounters,
    last: Option<LastDecision>,
}

impl Lbt {
    pub fn new(p: LbtParams, me: &SwitchInfo, facts: &FabricFacts) -> Lbt {
        let spine = me.kind == SwitchKind::Spine;
        let decides = if spine { facts.links_per_pair > 1 } else { facts.uplinks > 1 };
        Lbt {
            p,
            decides,
            spine,
            mtu: facts.mtu_wire_bytes as u64,
            flows: FlowTable::exact(Timeout::AtLeast(p.flow_idle_timeout_us), Clock::Timestamp),
            groups: Vec::new(),
            period: 1,
            counters: LbtCounters::default(),
            last: None,
        }
    }

    pub fn last_decision(&self) -> Option<LastDecision> {
        self.last
    }

    /// Flow entries held now.
    pub fn flow_entries(&self) -> usize {
        self.flows.len()
    }

    /// Group `g` (a leaf has group 0; a spine one per destination leaf), if it exists.
    pub fn group(&self, g: usize) -> Option<GroupView> {
        let x = self.groups.get(g)?.as_ref()?;
        let links = [0, 1, 2].map(|c| x.mask.iter().filter(|&&m| m & (1 << c) != 0).count() as u32);
        let measured = Measured { bytes: x.bytes, flows: x.flows, links, k: x.members, capacity: x.capacity };
        Some(GroupView { q1: x.q1, q2: x.q2, l1: x.l1, l2: x.l2, bounds: x.bounds, k: x.members, capacity: x.capacity, measured })
    }

    /// Test hook: fixes group `g`'s thresholds until the next period ends (creating the group if needed).
    pub fn set_thresholds(&mut self, g: usize, q1: u64, q2: u64) {
        let grp = self.group_mut(g);
        grp.q1 = q1;
        grp.q2 = q2;
    }

    fn group_mut(&mut self, g: usize) -> &mut Group {
        if self.groups.len() <= g {
            self.groups.resize_with(g + 1, || None);
        }
        let q = self.p.q_min_bytes;
        self.groups[g].get_or_insert_with(|| Group {
            member: Vec::new(),
            members: 0,
            capacity: 0.0,
            bounds: Bounds { q_min: q, q1_max: q, q2_max: q },
            mask: Vec::new(),
            bytes: [0; 3],
            flows: [0; 3],
            q1: q,
            q2: q,
            l1: 0.0,
            l2: 0.0,
            x_s: 0.0,
        })
    }

    /// Makes sure group `g` knows every candidate as a member, updating its capacity and bounds.
    fn admit(&mut self, g: usize, ports: &PortsView, candidates: &[PortId]) {
        let (p, mtu, x_s) = (self.p, self.mtu, self.p.x_s_init_bytes as f64);
        let grp = self.group_mut(g);
        if grp.member.is_empty() {
            grp.member = vec![false; ports.len() as usize];
            grp.mask = vec![0; ports.len() as usize];
            grp.x_s = x_s;
        }
        let mut changed = false;
        for &c in candidates {
            let i = ports.local(c);
            if !grp.member[i] {
                grp.member[i] = true;
                changed = true;
            }
        }
        if !changed {
            return;
        }
        let (mut members, mut capacity, mut q1_cap, mut q2_cap) = (0u32, 0.0, u64::MAX, u64::MAX);
        for (i, _) in grp.member.iter().enumerate().filter(|(_, &m)| m) {
            let port = ports.nth(i as u32);
            members += 1;
            capacity += ports.rate(port).bps() as f64 / 8.0;
            let buf = ports.buffer(port);
            let buf_bytes = if buf.bytes != u64::MAX { buf.bytes } else { buf.packets as u64 * mtu };
            let room = buf_bytes.saturating_sub(mtu);
            let k = ports.ecn_threshold(port);
            let k_bytes = match k.unit {
                QueueUnit::Bytes => k.k,
                QueueUnit::Packets => k.k * mtu,
            };
            q1_cap = q1_cap.min(if k.k > 0 { k_bytes.min(room) } else { room });
            q2_cap = q2_cap.min(room);
        }
        grp.members = members;
        grp.capacity = capacity;
        let q1_max = if p.q1_max_bytes > 0 { p.q1_max_bytes } else { q1_cap };
        let q2_max = if p.q2_max_bytes > 0 { p.q2_max_bytes } else { q2_cap };
        grp.bounds = Bounds { q_min: p.q_min_bytes, q1_max: q1_max.max(p.q_min_bytes), q2_max: q2_max.max(q1_max).max(p.q_min_bytes) };
    }

    fn classify(&self, pkt: &PacketMut, st: &mut FlowData) -> Class {
        if pkt.payload == 0 {
            return Class::Short;
        }
        if pkt.lb.class & class::BEST_EFFORT != 0 {
            return Class::BestEffort;
        }
        let end = (pkt.seq + pkt.payload as u64) & SEQ_MASK;
        st.max_end = st.max_end.max(end);
        if st.class == Class::Long || st.max_end > self.p.short_threshold_bytes {
            Class::Long
        } else {
            Class::Short
        }
    }
}

/// The class of a packet from what it carries alone (payload, BE bit, sequence offset), for a switch without
/// a choice that only stamps priority (the class switch is then not sticky: a retransmitted early segment of a
/// long flow reads short).
fn class_of(pkt: &PacketMut, short_threshold: u64) -> Class {
    if pkt.payload == 0 {
        Class::Short
    } else if pkt.lb.class & class::BEST_EFFORT != 0 {
        Class::BestEffort
    } else if (pkt.seq + pkt.payload as u64) & SEQ_MASK > short_threshold {
        Class::Long
    } else {
        Class::Short
    }
}

/// The priority level of a class on ports with `levels` levels: short the top, long the next, BE the lowest.
fn level_of(cls: Class, levels: u8) -> u8 {
    let lowest = levels.saturating_sub(1);
    match cls {
        Class::Short => 0,
        Class::Long => 1.min(lowest),
        Class::BestEffort => lowest,
    }
}

/// The candidate with the shortest queue, ties uniformly at random.
fn shortest(ports: &PortsView, rng: &mut Rng, candidates: &[PortId]) -> PortId {
    let (mut best, mut best_q, mut ties) = (candidates[0], u64::MAX, 0usize);
    for &c in candidates {
        let q = ports.queue_bytes(c);
        if q < best_q {
            (best, best_q, ties) = (c, q, 1);
        } else if q == best_q {
            ties += 1;
            if rng.below(ties) == 0 {
                best = c;
            }
        }
    }
    best
}

/// The longest queue strictly below `limit` (`None` if there is none), or with `limit = u64::MAX`, the
/// longest of all; ties uniformly at random, except that `keep` wins a tie it is part of.
fn longest(ports: &PortsView, rng: &mut Rng, candidates: &[PortId], limit: u64, keep: Option<PortId>) -> Option<PortId> {
    let (mut best, mut best_q, mut ties, mut kept) = (None, 0u64, 0usize, false);
    for &c in candidates {
        let q = ports.queue_bytes(c);
        if limit != u64::MAX && q >= limit {
            continue;
        }
        if best.is_none() || q > best_q {
            (best, best_q, ties, kept) = (Some(c), q, 1, Some(c) == keep);
        } else if q == best_q && !kept {
            ties += 1;
            if Some(c) == keep {
                (best, kept) = (Some(c), true);
            } else if rng.below(ties) == 0 {
                best = Some(c);
            }
        }
    }
    best
}

impl SwitchBalancer for Lbt {
    fn hooks(&self) -> Hooks {
        // Stamping priority needs the first switch of every packet, also where it has no choice.
        Hooks { choose_single: self.p.short_priority, ..Hooks::CHOOSE_ONLY }
    }

    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if candidates.len() == 1 {
            // Only with `short_priority` (`hooks`): no decision here, only the level at the first switch.
            if pkt.hops == 1 {
                let cls = class_of(pkt, self.p.short_threshold_bytes);
                pkt.set_priority(level_of(cls, cx.ports.priority_levels(candidates[0])));
            }
            return Decision::Forward(candidates[0]);
        }
        let (key, now) = (pkt.five_tuple(), cx.now);
        let g = if self.spine { cx.facts.leaf_of_host(pkt.dst).index() } else { 0 };
        self.admit(g, &cx.ports, candidates);
        if pkt.kind == PacketKind::Syn && self.p.short_placement == ShortPlacement::FirstData {
            // The SYN leaves no entry: the flow is placed by its first data packet.
            let chosen = shortest(&cx.ports, cx.rng, candidates);
            self.counters.decisions[Class::Short as usize] += 1;
            self.counters.placements[Class::Short as usize] += 1;
            self.last = Some(LastDecision { class: Class::Short, port: chosen, previous: None, threshold: 0, all_above: false });
            if self.p.short_priority {
                pkt.set_priority(level_of(Class::Short, cx.ports.priority_levels(chosen)));
            }
            return Decision::Forward(chosen);
        }
        let (port, mut st) = match self.flows.live(key, now) {
            Some(e) => (e.port, e.data),
            None => (PortId::NONE, FlowData::default()),
        };
        let cls = self.classify(pkt, &mut st);
        if st.placed && st.class == Class::Short && cls == Class::Long {
            self.counters.to_long += 1;
        }
        st.class = cls;
        let current = (st.placed && st.placed_as == cls && candidates.contains(&port)).then_some(port);
        let grp = self.groups[g].as_ref().expect("admitted");
        let threshold = match cls {
            Class::Short => 0,
            Class::Long => grp.q1,
            Class::BestEffort => grp.q2,
        };
        // (port, whether it was chosen afresh, whether every candidate was at or above the threshold)
        let (chosen, fresh, all_above) = match cls {
            Class::Short => match (self.p.short_granularity, current) {
                (ShortGranularity::Flow, Some(c)) => (c, false, false),
                _ => (shortest(&cx.ports, cx.rng, candidates), true, false),
            },
            Class::Long | Class::BestEffort => {
                let keep = if self.p.long_mode == LongMode::Sticky { current } else { None };
                match keep {
                    Some(c) if cx.ports.queue_bytes(c) < threshold => (c, false, false),
                    _ => match longest(&cx.ports, cx.rng, candidates, threshold, None) {
                        Some(c) => (c, true, false),
                        None => (longest(&cx.ports, cx.rng, candidates, u64::MAX, keep).expect("candidates are never empty"), true, true),
                    },
                }
            }
        };
        let c = cls as usize;
        if st.placed && port != chosen && candidates.contains(&port) && cx.ports.queue_bytes(chosen) < cx.ports.queue_bytes(port) {
            self.counters.to_shorter[c] += 1;
        }
        self.counters.decisions[c] += 1;
        self.counters.placements[c] += fresh as u64;
        self.counters.moves[c] += current.is_some_and(|p| p != chosen) as u64;
        if all_above {
            self.counters.all_above[c - 1] += 1;
        }
        self.last = Some(LastDecision { class: cls, port: chosen, previous: current, threshold, all_above });
        if pkt.payload > 0 {
            let period = self.period;
            let local = cx.ports.local(chosen);
            let grp = self.groups[g].as_mut().expect("admitted");
            grp.bytes[c] += pkt.wire_bytes as u64;
            grp.mask[local] |= 1 << c;
            if st.counted[c] != period {
                st.counted[c] = period;
                grp.flows[c] += 1;
            }
        }
        st.placed = true;
        st.placed_as = cls;
        *self.flows.record(key, chosen, now) = st;
        if self.p.short_priority {
            pkt.set_priority(level_of(cls, cx.ports.priority_levels(chosen)));
        }
        Decision::Forward(chosen)
    }

    fn on_timer(&mut self, cx: &mut SwitchCx) {
        let (p, period) = (self.p, self.p.period_us);
        for grp in self.groups.iter_mut().flatten() {
            let links = [0, 1, 2].map(|c| grp.mask.iter().filter(|&&m| m & (1 << c) != 0).count() as u32);
            let m = Measured { bytes: grp.bytes, flows: grp.flows, links, k: grp.members, capacity: grp.capacity };
            let th = thresholds(&p, &m, grp.bounds, period, (grp.q1, grp.q2), grp.x_s);
            (grp.q1, grp.q2, grp.l1, grp.l2, grp.x_s) = (th.q1, th.q2, th.l1, th.l2, th.x_s);
            grp.bytes = [0; 3];
            grp.flows = [0; 3];
            grp.mask.iter_mut().for_each(|m| *m = 0);
        }
        self.period = self.period.wrapping_add(1).max(1);
        self.counters.periods += 1;
        self.flows.forget(cx.now, Timeout::AtLeast(p.flow_idle_timeout_us));
    }

    fn timer_period(&self) -> Option<Time> {
        self.decides.then_some(self.p.period_us)
    }

    fn counters(&self) -> CounterReport {
        self.counters.report()
    }

    fn state_bytes(&self) -> usize {
        let groups: usize = self.groups.iter().flatten().map(|g| g.member.len() + g.mask.len()).sum();
        std::mem::size_of::<Self>() + self.groups.len() * std::mem::size_of::<Option<Group>>() + groups + self.flows.state_bytes()
    }
}
