//! MDTLB: Hermes-style sensing at the sending host, five path levels judged against static and self-adjusting
//! RTT thresholds, and rerouting kept to critical cases.
//!
//! **Source.** Memon, Huang, Saajid, Khuda Bux, Saleem, Aljeroudi, *Novel Multi-Level Dynamic Traffic
//! Load-Balancing Protocol for Data Center*, Symmetry 11(2):145, 2019 ("L132" is a line of the paper, see
//! docs/references.md; "PC1"/"PC2" its pseudocode one (L126–L132) and two (L162–L197)). The choices below,
//! with the paper's words, are in `docs/assumptions.md`, § MDTLB. The paper builds on Hermes (L37, L81) and describes only what it
//! changes; what it leaves out (sensing, probing, the local sending rate) is Hermes' and shares its code
//! ([`pathsense`](super::pathsense)).
//!
//! # The rule (§4.2)
//!
//! Each sending host keeps, per (destination leaf, uplink), a smoothed RTT `r` and an ECN fraction `e` from
//! the ACKs of its own flows and from probes, plus its own sending rate `r_p` on the path, and counts the
//! path's timeouts and retransmissions (Tables 1–2).
//!
//! * **Judging (PC1, L126–L132).** Four RTT thresholds: static `T_LowS`, `T_highS` set by the user, and
//!   dynamic `T_LowD`, `T_highD` set by the host. With `e` below `T_ECN` a path with a low RTT is *very good*
//!   or *good*; with `e` above `T_ECN` a path with a high RTT is *bad* or *very bad*; anything else is *gray*.
//!   On top of that, a path is *failed* when it had more than 3 timeouts with nothing acknowledged, or more
//!   than 1% retransmissions while not bad or very bad (PC1 line 7).
//! * **Dynamic thresholds (L121, L136–L137, Table 4).** An integer `changeRatio` c (percent) moves by +10 when
//!   the share of good paths is small, or medium with a big share of bad paths, or big with a big share of
//!   bad paths; by −10 when the good share is big and the bad share is not. `T_LowD` and `T_highD` are their
//!   initial values times `(100 + c) / 100` (the thresholds "increase by 10%", L206).
//! * **Rerouting (PC2, L151–L197).** For every packet: a new flow, a flow whose timeout fired, or a flow on a
//!   failed path is placed on the very good path with the smallest `r_p`, else the good one, else the gray
//!   one, else a path that has not failed. A flow already placed moves only when its path is **very bad**, it
//!   has sent fewer than `S` bytes and sends slower than `R`, and a very good (else good, else gray) path is
//!   *notably better* (RTT lower by more than ΔRTT and ECN fraction lower by more than ΔECN); it takes the
//!   one with the smallest `r_p`. Otherwise every flow stays: bad, gray and good paths keep their flows, which
//!   is the paper's aim of rerouting as little as possible (L75).
//!
//! # Where the paper is vague or contradicts itself (parameter, default)
//!
//! * **Very bad as printed is milder than bad** (PC1 lines 4–5: very bad needs `r > T_highD` only after
//!   `r > T_highS` failed, so it exists only when `T_highD < T_highS`, yet Table 4 has very bad paths with the
//!   dynamic thresholds raised). `judge = "band"` (default): each side has an inner and an outer threshold
//!   (the smaller and larger of static and dynamic); the plain level lies beyond the inner one, the "very"
//!   level beyond both, and exists only while they differ. It is monotone in `r` and reproduces every level of
//!   Table 4. `judge = "literal"`: PC1 as printed.
//! * **Small / medium / big shares** are undefined (L136). `adapt_rule = "portions"` (default): small below
//!   `portion_small` (1/3), big above `portion_big` (2/3), over the measured, non-failed paths of the host
//!   (unknown paths are left out, as Table 4 event 1 requires). `"compare"`: +10 when bad outnumber good,
//!   −10 when good outnumber bad (the narrative of L205–L214). Very good counts as good and very bad as bad
//!   (Table 4 events 5 and 7).
//! * **+10% of what**: additive points of the initial value (`adapt_step_pct`, 10), so +10 then −10 returns
//!   exactly; thresholds are integer nanoseconds. Both dynamic thresholds move together.
//! * **When c moves**: PC1 ties it to each judging pass, which runs per packet; Table 4 moves it once per
//!   starting flow after routing it. `adapt_trigger = "new_flow"` (default): after a new flow's placement, at
//!   most once per `adapt_interval_us` (100 µs = MDTLBT1); `"timer"`: every `adapt_interval_us` while the host
//!   has an active destination. One c per host.
//! * **Bounds of c** (none given): `−ratio_floor_pct` (−50) to `ratio_max_pct` (+350, which keeps
//!   `T_LowD ≤ T_highS` with Table 5's values).
//! * **The size gate**: the paper says twice that flows that sent *less* than S may move (L153, PC2 line 18);
//!   `size_gate = "below"` (default), `"at_least"` is Hermes' code.
//! * **R** is used (PC2 line 18) but never given: `rate_gbps` 5 on the flow's `cwnd / srtt` (Hermes' value).
//! * **ΔECN** is named (Table 3) without a value: `delta_ecn` 0. Both "notably better" comparisons are strict
//!   as printed.
//! * **The last-resort placement**: PC2 line 16 draws a random non-failed path, but Table 4 event 6 picks the
//!   bad path over the very bad one. `fallback = "best_level"` (default): uniform among the non-failed paths
//!   of the best level present; `"uniform"`: line 16 literally.
//! * **PC2's structure** (line 17 indented inside the new-flow branch, line 33 leaving p* unset): read as
//!   "else if very bad … else keep the current path".
//! * **Flowlet timeout** (Table 5: 5 ms) has no place in PC2. `flowlet_timeout_us` (5000): as in the Hermes
//!   code the paper's Table 5 comes from, a flow idle that long may take the same cautious move from any
//!   non-failed level; 0 gives PC2 exactly. `rerouting = false` (MDTLBRerouting) turns both moves off.
//! * **ECN under plain TCP.** The paper ran ns-3 TCP (Table 5 `Tcp`), whose setup marks nothing, so its `and`
//!   rule could never see a bad path. `ecn_mode = "and"` (default, PC1 as printed) or `"rtt_only"` (RTT alone,
//!   which L121 calls the main signal). With `edge_ect` (default on) the host makes every data packet
//!   ECN-capable itself, as Hermes' shim does, so switches mark under any transport; a non-DCTCP sender
//!   ignores the echoes.
//! * **Delay signal**: the paper says RTT; its 40/180 µs come from the Hermes code, which measures the one-way
//!   delay. `delay_signal = "rtt"` (default) or `"one_way"`. Either way the dynamic thresholds calibrate
//!   themselves when the static ones sit below the fabric's base delay.
//! * **Sensing and probing** (not described): Hermes' ([`pathsense`](super::pathsense)): EWMA of the delay
//!   with gain `rtt_gain` (0.5, MDTLBSmooth), ECN fraction over ~`ecn_window_us` (100 µs, MDTLBT1), estimates
//!   forgotten after `stale_us` (2 ms; an unknown path is gray, compared as RTT `T_LowS` and ECN 0), `r_p` a
//!   byte count discounted with `dre_tau_us` (150 µs). Every `probe_us` (50 µs) a host probes, per
//!   destination leaf it sent to lately (`probe_scope`), two random paths and its best known one; a probe
//!   unanswered for `probe_timeout_us` (100 ms) fails its path.
//! * **Failure details** (PC1 line 7): "no packet is ACKed" since the path's last ACK or probe reply (any
//!   delivery resets the count); the retransmission fraction is measured over `retx_window_us` (1 ms), judged
//!   once that holds 100 packets, charged once per loss episode (as Hermes), and fails the path for
//!   `fail_hold_us` (10 ms). A path with a timeout since its last delivery is gray at best.
//! * **Anti-herding**: the paper has none: `reroute_probability` 1, `reroute_interval_us` 0.
//! * **MDTLBReverseACK** (Table 5: on; the receiver routes its ACKs with its own balancer) is
//!   `ack_routing = "edge"` ([`super::ackpath`]); the default stays `"ecmp"`, as for every edge scheme and
//!   as the [LB] driver has it, so that MDTLB and its Hermes baseline see the same ACK paths.
//! * **Not modelled**: quantifyRTTBase (a ranking bucket of the Hermes code with no role in PC2). Flow entries are dropped when every byte is acknowledged, not on idleness: a flow backing off its
//!   RTO must still charge its next timeout to its path.
//!
//! **Packets carry** only Hermes' set: the path tag and send timestamp on data, the echoed tag, timestamp and
//! ECE on ACKs, and a zero-payload ECN-capable probe and its reply. Nothing MDTLB-specific.
//!
//! **Defaults** (Table 5, L252–L266): `T_LowS` 40 µs, `T_highS` 180 µs, initial `T_LowD` 40 µs and `T_highD`
//! 180 µs, ΔRTT 1 µs, T1 100 µs, `T_ECN` 0.1, probing every 50 µs, smoothing on, rerouting on, S 64,000 B,
//! flowlet timeout 5 ms; step 10 (L136). Everything else is labelled above as a choice.
//!
//! **Timing on other fabrics** (`lb.timing`): Table 5 was set for a 4 × 4, 10 Gbps fabric with 10 µs links,
//! which is [LB]'s. Under `"fabric"` (the default) T1 and the flowlet timeout scale with the fabric's base
//! RTT like every row tuned there, and the four RTT thresholds keep their margin above the base delay as
//! Hermes' do (40 µs is the one-way base of that fabric, so `T_LowS` sits at this fabric's base delay and
//! `T_highS` 140 µs above it). `"published"` uses Table 5 as printed; reproductions of the paper do.

use super::ackpath::{AckLegs, AckRouting, AckView};
use super::params::{param_choice, scheme_params, LB_FABRIC_RTT_US};
pub use super::pathsense::{DelaySignal, Fallback, Level, PathView, ProbeScope, SizeGate};
use super::pathsense::{threshold_on_fabric, PathJudge, Rerouter, Rules, Sensing, Why};
use super::scheme::{reflect_path_and_class, scheme_counters, CounterReport, Placement, SchemeSpec};
use super::{BuildCx, EdgeBalancer, EdgeCx, FlowView, Installed, PacketMut, Params};
use crate::fabric::FabricFacts;
use crate::ids::{FlowId, HostId, LeafId};
use crate::packet::Packet;
use crate::units::Time;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "mdtlb",
    placement: Placement::Edge,
    granularity: "flow",
    summary: "host senses paths (Hermes), five levels vs static + self-adjusting RTT thresholds, moves flows only off very bad or failed paths",
    params: MdtlbParams::SPECS,
    install,
    reflect: reflect_path_and_class,
};

fn install(cx: &BuildCx, p: &Params) -> Installed {
    let p = MdtlbParams::from_params(p);
    let edges = cx.facts.host_ids().map(|h| Box::new(Mdtlb::new(p, cx.facts, h)) as Box<dyn EdgeBalancer>).collect();
    Installed::Edges(edges)
}

scheme_params! {
    /// MDTLB's parameters (Table 5 where it gives a value).
    #[resolve = MdtlbParams::on_fabric]
    pub struct MdtlbParams {
        /// T_RTT_LowS: static low RTT threshold (very good / good side)
        #[source = "MDTLB Table 5 MDTLBMinRTTS"]
        #[relation(<= rtt_high_s_us, "the static low threshold (very good / good) cannot lie above the static high one (bad / very bad)")]
        rtt_low_s_us: Time = 40.0,
        /// T_RTT_highS: static high RTT threshold (bad / very bad side)
        #[source = "MDTLB Table 5 MDTLBHighRTTS"]
        rtt_high_s_us: Time = 180.0,
        /// T_RTT_LowD at start (the dynamic one is this times (100 + c) / 100)
        #[source = "MDTLB Table 5 Initial MDTLMinRTTD"]
        #[relation(<= rtt_high_d_us, "the dynamic low threshold cannot start above the dynamic high one (both move by the same factor)")]
        rtt_low_d_us: Time = 40.0,
        /// T_RTT_highD at start (the dynamic one is this times (100 + c) / 100)
        #[source = "MDTLB Table 5 Initial MDTLHighRTTD"]
        rtt_high_d_us: Time = 180.0,
        /// ΔRTT: a notably better path's RTT is lower by more than this
        #[source = "MDTLB Table 5 MDTLBBetterPathRTT"]
        delta_rtt_us: Time = 1.0,
        /// T_ECN: ECN fraction separating the good side (below) from the bad side (above)
        #[source = "MDTLB Table 5 MDTLBECNPortionLow"]
        ecn_threshold: f64 in 0.0..=1.0 = 0.1,
        /// ΔECN: a notably better path's ECN fraction is lower by more than this
        #[source = "dclb choice (Table 3 names it without a value; Hermes code 0)"]
        delta_ecn: f64 in 0.0..=1.0 = 0.0,
        /// S: sent-bytes gate of a move off a very bad path
        #[source = "MDTLB Table 5 MDTLBS"]
        size_bytes: u64 (bytes) = 64_000,
        /// which flows S lets move: fewer than S bytes sent (the paper, L153 and PC2 line 18) or at least S
        #[source = "MDTLB L153, PC2 line 18"]
        size_gate: SizeGate = SizeGate::Below,
        /// R: only flows sending slower than this (cwnd/srtt) move off a very bad path
        #[source = "dclb choice (PC2 line 18 names R without a value; Hermes 5 Gbps)"]
        rate_gbps: f64 (Gbps) = 5.0,
        /// T1: time constant of the ECN-fraction window
        #[source = "MDTLB Table 5 MDTLBT1"]
        #[rtt_us = LB_FABRIC_RTT_US]
        ecn_window_us: Time = 100.0,
        /// probe interval; 0 = no probes (paths sensed from ACKs alone; the timer still moves the thresholds
        /// with adapt_trigger = timer)
        #[source = "MDTLB Table 5 MDTLBProbingInterval"]
        probe_us: Time = 50.0,
        /// probe destination leaves this host sent to recently, or every leaf
        #[source = "dclb choice, as Hermes"]
        probe_scope: ProbeScope = ProbeScope::Active,
        /// an unanswered probe fails its path after this long
        #[source = "Hermes code m_probeTimeout"]
        probe_timeout_us: Time = 100_000.0,
        /// idle gap after which a flow may take the cautious move from any non-failed level; 0 = PC2 exactly
        #[source = "MDTLB Table 5 MDTLBFlowletTimeout"]
        #[rtt_us = LB_FABRIC_RTT_US]
        flowlet_timeout_us: Time = 5000.0,
        /// existing flows may move off very bad paths (and after idle gaps); false = placement only
        #[source = "MDTLB Table 5 MDTLBRerouting"]
        rerouting: bool = true,
        /// probability that a triggered move goes ahead (anti-herding; the paper has none)
        #[source = "dclb choice (paper: none)"]
        reroute_probability: f64 in 0.0..=1.0 = 1.0,
        /// a flow considers a move at most once per this interval (anti-herding; the paper has none)
        #[source = "dclb choice (paper: none)"]
        reroute_interval_us: Time = 0.0,
        /// EWMA gain of the per-path delay estimate
        #[source = "MDTLB Table 5 MDTLBSmooth (Hermes code: 0.5 old + 0.5 sample)"]
        rtt_gain: f64 in 0.0..=1.0 = 0.5,
        /// delay sample: RTT from the echoed timestamp (the paper's word) or the one-way delay (Hermes code)
        #[source = "MDTLB §4 (RTT)"]
        delay_signal: DelaySignal = DelaySignal::Rtt,
        /// a path's estimates are forgotten after this long without a sample (it is then unknown: gray)
        #[source = "dclb choice, as Hermes"]
        stale_us: Time = 2000.0,
        /// a path with more timeouts than this and nothing acknowledged since is failed
        #[source = "MDTLB PC1 line 7"]
        fail_timeouts: u32 = 3,
        /// a path neither bad nor very bad with a larger retransmission fraction is failed
        #[source = "MDTLB PC1 line 7"]
        fail_retx_fraction: f64 in 0.0..=1.0 = 0.01,
        /// time constant of the retransmission-fraction window
        #[source = "dclb choice, as Hermes"]
        retx_window_us: Time = 1000.0,
        /// how long a path failed by its retransmission fraction stays failed
        #[source = "dclb choice, as Hermes"]
        fail_hold_us: Time = 10_000.0,
        /// time constant of the local sending rate r_p of each path
        #[source = "dclb choice, as Hermes (Hermes code T_dre 30 us / alpha 0.2)"]
        dre_tau_us: Time = 150.0,
        /// how the four thresholds make five levels: band (monotone, fits Table 4) or PC1 as printed
        #[source = "dclb choice (PC1 lines 4-5 contradict Table 4)"]
        judge: Judge = Judge::Band,
        /// whether judging needs the ECN fraction as well as the RTT (PC1) or uses the RTT alone
        #[source = "MDTLB PC1 (and); L121 (RTT the main signal)"]
        ecn_mode: EcnMode = EcnMode::And,
        /// how the good and bad shares move c: fuzzy portions (L136-137) or bad vs good (Table 4 narrative)
        #[source = "MDTLB L136-137; L205-214"]
        adapt_rule: AdaptRule = AdaptRule::Portions,
        /// points of percent c moves per step; 0 = fixed thresholds
        #[source = "MDTLB L136 (changeRatio + 10)"]
        adapt_step_pct: u32 in 0..=100 = 10,
        /// at most one step per this interval
        #[source = "dclb choice (= MDTLBT1)"]
        adapt_interval_us: Time = 100.0,
        /// when c may move: after a new flow's placement (Table 4) or on a timer
        #[source = "MDTLB Table 4 (judge, route, adapt per starting flow)"]
        adapt_trigger: AdaptTrigger = AdaptTrigger::NewFlow,
        /// a share below this is small
        #[source = "dclb choice (tertiles)"]
        #[relation(<= portion_big, "a share is small below portion_small and big above portion_big, so small cannot reach above big")]
        portion_small: f64 in 0.0..=1.0 = 1.0 / 3.0,
        /// a share above this is big
        #[source = "dclb choice (tertiles)"]
        #[relation(> 0.0, "with 0 every share of good or bad paths above nothing is big, and the three shares collapse into two")]
        portion_big: f64 in 0.0..=1.0 = 2.0 / 3.0,
        /// highest c in percent (350 keeps T_LowD <= T_highS with Table 5's values)
        #[source = "dclb choice"]
        ratio_max_pct: u32 in 0..=10_000 = 350,
        /// c never goes below minus this many percent
        #[source = "dclb choice"]
        ratio_floor_pct: u32 in 0..=99 = 50,
        /// placement when no very good, good or gray path exists: a non-failed path of the best level, or any
        #[source = "MDTLB Table 4 event 6; PC2 line 16"]
        fallback: Fallback = Fallback::BestLevel,
        /// the host makes its data packets ECN-capable whatever the transport (Hermes' shim)
        #[source = "dclb choice (Hermes design)"]
        edge_ect: bool = true,
        /// who routes the ACKs this host sends for the flows it receives: the switches' hash, or this host's
        /// MDTLB, placing each ACK leg as it would place a new flow to the data sender's leaf (lb/ackpath.rs;
        /// Table 5's MDTLBReverseACK is on, the [LB] driver's default off)
        #[source = "MDTLB Table 5 MDTLBReverseACK True; [LB] default off; default ecmp as every edge scheme"]
        ack_routing: AckRouting = AckRouting::Ecmp,
    }
}

param_choice! {
    /// How PC1's four thresholds make five levels.
    pub enum Judge {
        /// Inner and outer threshold per side; the "very" level lies beyond both.
        Band = "band",
        /// PC1 lines 2-6 as printed.
        Literal = "literal",
    }
}

param_choice! {
    /// Which signals judging uses.
    pub enum EcnMode {
        /// The RTT and the ECN fraction (PC1).
        And = "and",
        /// The RTT alone.
        RttOnly = "rtt_only",
    }
}

param_choice! {
    /// How the shares of good and bad paths move the dynamic thresholds.
    pub enum AdaptRule {
        /// L136-137 with tertiles.
        Portions = "portions",
        /// Up when bad paths outnumber good ones, down when good ones outnumber bad ones.
        Compare = "compare",
    }
}

param_choice! {
    /// When the dynamic thresholds may move.
    pub enum AdaptTrigger {
        /// After a new flow is placed.
        NewFlow = "new_flow",
        /// Every adapt interval while a destination is active.
        Timer = "timer",
    }
}

impl MdtlbParams {
    /// Table 5's four RTT thresholds come from the Hermes code on [LB]'s fabric, so under `lb.timing = "fabric"`
    /// they move onto this fabric the way Hermes' do: each keeps its margin above the base delay of the delay
    /// signal ([`threshold_on_fabric`]). `ΔRTT` stays as it is.
    fn on_fabric(self, p: &Params) -> MdtlbParams {
        let shift = |name: &str, t: Time| threshold_on_fabric(p, name, t, self.delay_signal);
        MdtlbParams {
            rtt_low_s_us: shift("rtt_low_s_us", self.rtt_low_s_us),
            rtt_high_s_us: shift("rtt_high_s_us", self.rtt_high_s_us),
            rtt_low_d_us: shift("rtt_low_d_us", self.rtt_low_d_us),
            rtt_high_d_us: shift("rtt_high_d_us", self.rtt_high_d_us),
            ..self
        }
    }

    /// The constants of the sensing and rerouting skeleton (Hermes' mechanism, MDTLB's values).
    fn rules(&self) -> Rules {
        Rules {
            sensing: Sensing {
                rtt_gain: self.rtt_gain,
                stale: self.stale_us,
                ecn_window: self.ecn_window_us,
                dre_tau: self.dre_tau_us,
                retx_window: self.retx_window_us,
                delay_signal: self.delay_signal,
                probe_scope: self.probe_scope,
                probe_interval: self.probe_us,
            },
            fail_timeouts: self.fail_timeouts,
            probe_timeout: self.probe_timeout_us,
            fail_retx_fraction: self.fail_retx_fraction,
            fail_hold: self.fail_hold_us,
            rerouting: self.rerouting,
            size_bytes: self.size_bytes,
            size_gate: self.size_gate,
            rate_gbps: self.rate_gbps,
            flowlet_timeout: self.flowlet_timeout_us,
            reroute_interval: self.reroute_interval_us,
            reroute_probability: self.reroute_probability,
            draw_when_certain: false,
        }
    }
}

/// The four RTT thresholds, each a whole number of nanoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Thresholds {
    pub low_s: Time,
    pub high_s: Time,
    pub low_d: Time,
    pub high_d: Time,
}

impl Thresholds {
    /// The static thresholds of `cfg` and its initial dynamic ones scaled by `(100 + c) / 100`, each truncated to
    /// the nanosecond.
    pub fn at(cfg: &MdtlbParams, c: i32) -> Thresholds {
        let ns = |t: Time| t.ps() / 1000;
        let scale = |t: Time| Time::from_ns((ns(t) as i64 * (100 + c as i64) / 100).max(0) as u64);
        Thresholds {
            low_s: Time::from_ns(ns(cfg.rtt_low_s_us)),
            high_s: Time::from_ns(ns(cfg.rtt_high_s_us)),
            low_d: scale(cfg.rtt_low_d_us),
            high_d: scale(cfg.rtt_high_d_us),
        }
    }
}

/// The level of a path with RTT `rtt_us` and ECN fraction `ecn` (before timeouts and failure), PC1 lines 2–6.
pub fn judge(rtt_us: f64, ecn: f64, th: &Thresholds, ecn_threshold: f64, how: Judge, ecn_mode: EcnMode) -> Level {
    let ecn_low = ecn_mode == EcnMode::RttOnly || ecn < ecn_threshold;
    let ecn_high = ecn_mode == EcnMode::RttOnly || ecn > ecn_threshold;
    match how {
        Judge::Literal => {
            if ecn_low && rtt_us < th.low_s.as_us() {
                Level::VeryGood
            } else if ecn_low && rtt_us < th.low_d.as_us() {
                Level::Good
            } else if ecn_high && rtt_us > th.high_s.as_us() {
                Level::Bad
            } else if ecn_high && rtt_us > th.high_d.as_us() {
                Level::VeryBad
            } else {
                Level::Gray
            }
        }
        Judge::Band => {
            let (lo_in, lo_out) = (th.low_s.min(th.low_d), th.low_s.max(th.low_d));
            let (hi_in, hi_out) = (th.high_s.min(th.high_d), th.high_s.max(th.high_d));
            if ecn_low && rtt_us < lo_in.as_us() && lo_in < lo_out {
                Level::VeryGood
            } else if ecn_low && rtt_us < lo_out.as_us() {
                Level::Good
            } else if ecn_high && rtt_us > hi_out.as_us() && hi_in < hi_out {
                Level::VeryBad
            } else if ecn_high && rtt_us > hi_in.as_us() {
                Level::Bad
            } else {
                Level::Gray
            }
        }
    }
}

/// The step of c (−step, 0 or +step) for `good` and `bad` paths out of `n` measured, non-failed ones (L136–L137).
pub fn adapt_delta(rule: AdaptRule, good: usize, bad: usize, n: usize, small: f64, big: f64, step: i32) -> i32 {
    if n == 0 {
        return 0;
    }
    match rule {
        AdaptRule::Portions => {
            let (g, b) = (good as f64 / n as f64, bad as f64 / n as f64);
            let (g_small, g_big, b_big) = (g < small, g > big, b > big);
            let g_medium = !g_small && !g_big;
            if g_small || (g_medium && b_big) || (g_big && b_big) {
                step
            } else if g_big && !b_big {
                -step
            } else {
                0
            }
        }
        AdaptRule::Compare => match bad.cmp(&good) {
            std::cmp::Ordering::Greater => step,
            std::cmp::Ordering::Less => -step,
            std::cmp::Ordering::Equal => 0,
        },
    }
}

scheme_counters! {
    /// What one host's MDTLB did.
    #[scheme = SPEC]
    pub struct MdtlbCounters {
        /// new flows placed
        placements,
        /// flows placed again after a timeout or on a failed path (whether or not the path changed)
        replacements,
        /// flows moved off a very bad path (PC2 lines 17–33)
        reroutes,
        /// flows moved after an idle gap longer than the flowlet timeout
        idle_reroutes,
        /// placements that found no very good, good or gray path (the fallback of PC2 line 16)
        fallbacks,
        /// steps of c up (the dynamic RTT thresholds raised)
        threshold_steps_up,
        /// steps of c down
        threshold_steps_down,
    }
}

/// MDTLB's judge: its parameters and the thresholds in force.
struct MdtlbJudge {
    cfg: MdtlbParams,
    /// Dynamic thresholds (and the static ones) for the current c.
    th: Thresholds,
}

impl PathJudge for MdtlbJudge {
    /// PC2 lines 4–16: very good, else good, else gray.
    const PLACE_ON: &'static [Level] = &[Level::VeryGood, Level::Good, Level::Gray];

    /// PC1 lines 2–6 ([`judge`]).
    fn level(&self, rtt_us: f64, ecn: f64) -> Level {
        let c = &self.cfg;
        judge(rtt_us, ecn, &self.th, c.ecn_threshold, c.judge, c.ecn_mode)
    }

    /// `T_LowS`.
    fn unknown_delay(&self) -> Time {
        self.cfg.rtt_low_s_us
    }

    /// PC2 line 17: only a very bad path.
    fn moves_off(&self, level: Level) -> bool {
        level == Level::VeryBad
    }

    /// RTT lower by more than ΔRTT and (unless judging by RTT alone) ECN fraction lower by more than ΔECN.
    fn notably_better(&self, here: &PathView, there: &PathView) -> bool {
        let c = &self.cfg;
        here.rtt_us - there.rtt_us > c.delta_rtt_us.as_us() && (c.ecn_mode == EcnMode::RttOnly || here.ecn - there.ecn > c.delta_ecn)
    }

    /// PC1 line 7: losses on a path whose level (before the failure rules) is bad or very bad.
    fn losses_are_congestion(&self, path: &PathView) -> bool {
        path.measured && self.level(path.rtt_us, path.ecn).is_bad()
    }

    fn fallback(&self) -> Fallback {
        self.cfg.fallback
    }
}

/// The MDTLB edge balancer of one host.
pub struct Mdtlb {
    judge: MdtlbJudge,
    /// The host's path sensing, its flows' paths, and the rerouting skeleton (Hermes').
    paths: Rerouter,
    /// changeRatio c, in percent of the initial dynamic thresholds.
    change: i32,
    /// When c last had a chance to move.
    last_adapt: Option<Time>,
    /// The ACK legs of the flows this host receives (`ack_routing = "edge"`).
    acks: AckLegs,
    counters: MdtlbCounters,
}

impl Mdtlb {
    pub fn new(cfg: MdtlbParams, facts: &FabricFacts, host: HostId) -> Mdtlb {
        Mdtlb {
            judge: MdtlbJudge { cfg, th: Thresholds::at(&cfg, 0) },
            paths: Rerouter::new(cfg.rules(), facts, host),
            change: 0,
            last_adapt: None,
            // As in Hermes, an ACK leg is placed again only when its ACKs are lost or its path is gone.
            acks: AckLegs::new(None, Some(cfg.flowlet_timeout_us)),
            counters: MdtlbCounters::default(),
        }
    }

    /// changeRatio c in percent.
    pub fn change_ratio(&self) -> i32 {
        self.change
    }

    /// Sets c (clamped to its bounds) and the dynamic thresholds with it: a test hook.
    pub fn set_change_ratio(&mut self, c: i32) {
        let cfg = &self.judge.cfg;
        self.change = c.clamp(-(cfg.ratio_floor_pct as i32), cfg.ratio_max_pct as i32);
        self.judge.th = Thresholds::at(cfg, self.change);
    }

    /// The thresholds in force.
    pub fn thresholds(&self) -> Thresholds {
        self.judge.th
    }

    /// The path a flow of this host is pinned to, if it has one.
    pub fn flow_path(&self, flow: FlowId) -> Option<u16> {
        self.paths.flow_path(flow)
    }

    /// How MDTLB judges path `path` towards `dst_leaf` at `now`, from the current estimates and thresholds.
    pub fn view(&self, dst_leaf: LeafId, path: u16, now: Time) -> PathView {
        self.paths.view(&self.judge, dst_leaf, path, now)
    }

    /// One step of the dynamic thresholds from the shares of good and bad paths among this host's measured,
    /// non-failed paths (L136–L137), at most once per adapt interval.
    fn adapt(&mut self, now: Time) {
        let c = &self.judge.cfg;
        if c.adapt_step_pct == 0 || self.last_adapt.is_some_and(|t| now.saturating_sub(t) < c.adapt_interval_us) {
            return;
        }
        let (mut n, mut good, mut bad) = (0usize, 0usize, 0usize);
        let sense = self.paths.sense();
        for d in sense.leaf_ids() {
            for &p in sense.usable(d) {
                let v = self.view(d, p, now);
                if !v.measured || v.level == Level::Failed {
                    continue;
                }
                n += 1;
                good += v.level.is_good() as usize;
                bad += v.level.is_bad() as usize;
            }
        }
        if n == 0 {
            return;
        }
        let delta = adapt_delta(c.adapt_rule, good, bad, n, c.portion_small, c.portion_big, c.adapt_step_pct as i32);
        self.last_adapt = Some(now);
        let before = self.change;
        self.set_change_ratio(before + delta);
        if self.change > before {
            self.counters.threshold_steps_up += 1;
        } else if self.change < before {
            self.counters.threshold_steps_down += 1;
        }
    }
}

impl EdgeBalancer for Mdtlb {
    fn sets_ect(&self) -> bool {
        self.judge.cfg.edge_ect
    }

    /// PC2: the skeleton places and moves the flow by MDTLB's judge; a new flow's placement may then step c
    /// (`adapt_trigger = "new_flow"`, Table 4).
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        let routed = self.paths.choose_path(&self.judge, cx, flow, pkt, paths);
        let c = &mut self.counters;
        c.fallbacks += routed.fallback as u64;
        match routed.why {
            Why::New => c.placements += 1,
            Why::Replaced => c.replacements += 1,
            Why::Congested => c.reroutes += routed.moved as u64,
            Why::Idle => c.idle_reroutes += routed.moved as u64,
            Why::Kept => {}
        }
        if routed.why == Why::New && self.judge.cfg.adapt_trigger == AdaptTrigger::NewFlow {
            self.adapt(cx.now);
        }
        routed.path
    }

    fn on_ack(&mut self, cx: &mut EdgeCx, flow: &FlowView, ack: &Packet) {
        self.paths.on_ack(cx, flow, ack);
    }

    fn on_timeout(&mut self, _cx: &mut EdgeCx, flow: &FlowView) {
        self.paths.on_timeout(flow);
    }

    fn on_probe_reply(&mut self, cx: &mut EdgeCx, reply: &Packet) {
        self.paths.on_probe_reply(cx, reply);
    }

    fn routes_acks(&self) -> bool {
        self.judge.cfg.ack_routing == AckRouting::Edge
    }

    /// Each ACK leg is placed as a new flow to the data sender's leaf would be, by MDTLB's judge (without
    /// moving c: an ACK leg is not a new flow).
    fn choose_ack_path(&mut self, cx: &mut EdgeCx, ack: &AckView, paths: &[u16]) -> u16 {
        let (now, dl) = (cx.now, cx.facts.leaf_of_host(ack.to));
        let (judge, rerouter, rng) = (&self.judge, &mut self.paths, &mut *cx.rng);
        self.acks.route(now, ack, paths, |_| false, |start| rerouter.place_ack(judge, rng, dl, paths, now, start))
    }

    /// Every probe interval: Hermes' probe round, the best known path ranked by (level, RTT). With
    /// `adapt_trigger = "timer"`, first the threshold step, while the host sent to some leaf lately.
    fn on_timer(&mut self, cx: &mut EdgeCx) {
        let now = cx.now;
        let c = &self.judge.cfg;
        let horizon = c.adapt_interval_us.mul(10);
        let sense = self.paths.sense();
        if c.adapt_trigger == AdaptTrigger::Timer && sense.leaf_ids().any(|d| !sense.usable(d).is_empty() && sense.sent_within(d, now, horizon)) {
            self.adapt(now);
        }
        if self.judge.cfg.probe_us == Time::ZERO {
            return;
        }
        self.paths.probe_round(&self.judge, cx);
    }

    fn timer_period(&self) -> Option<Time> {
        let c = &self.judge.cfg;
        if c.probe_us > Time::ZERO {
            Some(c.probe_us)
        } else if c.adapt_trigger == AdaptTrigger::Timer {
            Some(c.adapt_interval_us.max(Time::from_us(1)))
        } else {
            None
        }
    }

    /// Probing off (`probe_us = 0`), the timer only moves the thresholds.
    fn probes_per_round(&self, active_leaves: usize) -> usize {
        self.paths.sense().probes_per_round(active_leaves)
    }

    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.paths.heap_bytes() + self.acks.state_bytes()
    }

    fn counters(&self) -> CounterReport {
        self.counters.report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn on(given: &[(&str, Value)], base_rtt: Option<Time>) -> MdtlbParams {
        let m: BTreeMap<String, Value> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let p = Params::resolve("mdtlb", MdtlbParams::SPECS, &m, base_rtt).unwrap();
        MdtlbParams::from_params(&p)
    }

    #[test]
    fn table5_timing_moves_onto_the_fabric_unless_published_or_given() {
        // Published (no base RTT): Table 5 as printed.
        let t = on(&[], None);
        assert_eq!((t.rtt_low_s_us, t.rtt_high_s_us, t.flowlet_timeout_us), (Time::from_us(40), Time::from_us(180), Time::from_us(5000)));
        // A fabric with a 20 us base RTT: thresholds keep their margin above it (0 and 140 us), the flowlet
        // timeout and T1 scale by 20 / 84.93.
        let t = on(&[], Some(Time::from_us(20)));
        assert_eq!((t.rtt_low_s_us, t.rtt_high_s_us), (Time::from_us(20), Time::from_us(160)));
        assert_eq!((t.rtt_low_d_us, t.rtt_high_d_us), (Time::from_us(20), Time::from_us(160)));
        assert!((t.flowlet_timeout_us.as_us() - 5000.0 * 20.0 / LB_FABRIC_RTT_US).abs() < 0.01);
        assert!((t.ecn_window_us.as_us() - 100.0 * 20.0 / LB_FABRIC_RTT_US).abs() < 0.01);
        // The one-way signal's base is half the RTT.
        let t = on(&[("delay_signal", Value::from("one_way"))], Some(Time::from_us(20)));
        assert_eq!(t.rtt_high_s_us, Time::from_us(150));
        // A value the scenario gives is used as written.
        let t = on(&[("rtt_high_s_us", Value::from(180.0))], Some(Time::from_us(20)));
        assert_eq!((t.rtt_low_s_us, t.rtt_high_s_us), (Time::from_us(20), Time::from_us(180)));
    }
}
