//! Hermes: host-side sensing of every path, and cautious rerouting of flows only when it clearly pays.
//!
//! **Rule (Zhang et al., SIGCOMM'17, [Hermes]).** Each sending host keeps a table of path conditions
//! per (destination leaf, uplink), shared by all its flows. It fills the table passively from the ACKs of its
//! own flows (a delay sample and the ECN echo, attributed to the path the acknowledged packet took) and
//! actively from probes: every probe interval it probes two random paths plus the best path it knows to each
//! destination leaf (power-of-two choices). A path is
//! * **good** when its delay is below `T_RTT_low` and its ECN fraction below `T_ECN`;
//! * **bad** (congested) when its delay is above `T_RTT_high` *and* its ECN fraction above `T_ECN`;
//! * **failed** when it shows more than three timeouts with nothing acknowledged in between (blackhole), or
//!   more than 1% retransmissions while not being congested (random drops), or a probe went unanswered;
//! * **gray** otherwise, and while nothing is known about it.
//!
//! A new flow, a flow whose retransmission timer fired, and a flow on a failed path are placed on the good
//! path with the smallest local sending rate, else the gray one with the smallest rate, else a random path
//! that has not failed (a flow already placed stays put if every path has failed; a new flow then takes a
//! random one). Any other flow stays where it is unless *all* of these hold (cautious rerouting):
//! its path is bad; it has sent at least `S` bytes (small flows never move) and its sending rate is below
//! `R`; and some good (else gray) path is *notably better*, with a delay lower by at least `ΔRTT` and an ECN
//! fraction lower by at least `ΔECN`. Among those it takes the one with the smallest local sending rate.
//!
//! **The size gate.** The paper ([Hermes]), and [LB] (`size >= S`, its acknowledged
//! bytes on the current path), let only flows that have sent at least `S` move: a small flow finishes soon
//! and gains little from a move that may reorder it. `size_gate = "at_least"` (default) does that, counting
//! the bytes the flow has sent over its whole life ([LB] counts acknowledged bytes since the flow's last
//! move). MDTLB's own rerouting rule (its pseudocode two, line 18, `f.s_sent < S and f.r_f < R`, and its
//! prose) has the opposite direction; it is MDTLB's algorithm, not a quotation of Hermes' Algorithm 1, so it
//! is only the option `"below"` (dclb's default until this was noticed: it rested on that source alone).
//!
//! **Where the authors' ns-3 code ([LB]) differs, dclb follows the paper:**
//! * the rate gate is the flow's own rate (`cwnd / srtt` from the host's TCP state), not [LB]'s per-path DRE;
//! * candidates are ranked by the local sending rate `r_p` of the path (a discounted byte counter, as the
//!   paper says), not by [LB]'s RTT level and flow count; a good candidate must also be notably better than
//!   the current path ([LB] skips that comparison for good paths), and bad paths are never candidates
//!   ([LB] falls back to a bad path better by `ΔRTT`);
//! * the ECN fraction counts (the paper's good/bad rules use both signals; [LB]'s simulations weigh ECN 0);
//! * the delay signal is the RTT, `now − echoed timestamp` (the paper); `delay_signal = "one_way"` uses
//!   [LB]'s one-way data-path delay instead (the ACK's own send time minus the echoed one; clocks are exact
//!   in a simulator). [LB]'s thresholds (and so both presets below) were tuned for that one-way delay;
//! * probes include the best known path (commented out in [LB]);
//! * failure detection follows the paper's rules as MDTLB's pseudocode one (line 7) restates them: more than
//!   3 timeouts with no packet acknowledged, or more than 1% retransmissions on a path that is not bad;
//!   [LB]'s thresholds (140 MB, 10000 timeouts) leave them effectively off.
//!
//! **ECN capability at the edge.** The ECN fraction of a path needs ECN-capable packets, whatever TCP the
//! guest runs (the sources read do not say which TCP the paper assumed; [LB]'s simulations weigh ECN 0, so
//! the question never arises there). Like Clove's vSwitch, dclb's Hermes makes every data packet its host
//! sends ECN-capable ([`EdgeBalancer::sets_ect`], `edge_ect`, default on); the receiving host echoes CE on
//! the ACK for any TCP flow, and a NewReno sender ignores the echo (only DCTCP reduces its window on ECE),
//! which stands for the edge hiding CE from a guest that did not negotiate ECN. Probes are always
//! ECN-capable. With `edge_ect = false` under NewReno only probes can be marked, so the ECN fraction of a
//! path comes from a probe or two per probe interval, and a bad path (which needs both a high delay and
//! ECN) is rarely seen.
//!
//! **Choices where the paper is vague.**
//! * ACKs are hashed by the switches (`ack_routing = "ecmp"`, [LB]'s `TLBReverseACK` off); with `"edge"` the
//!   receiving host's Hermes routes them, each flow's ACK leg placed as a new flow to the sender's leaf and
//!   placed again when its ACKs are lost (counted as a timeout on the path): [`super::ackpath`].
//! * Each host senses and probes for itself: the paper shares probe results within a rack, which would take
//!   host-to-host messages. With `probe_scope = "active"` (default) a host probes only destination leaves it
//!   sent data to within the last 10 probe intervals; `"all"` probes every leaf. The probed host is the one
//!   with the prober's index on the destination leaf. A probe that stays unanswered for `probe_timeout_us`
//!   marks its path failed.
//! * Delay estimate: EWMA with gain `rtt_gain` (0.5, [LB]'s smoothing). ECN fraction: ECE-marked share of the
//!   samples (ACKs and probe replies), each weighted by `exp(−age / T1)` with `T1 = ecn_window_us`, i.e. a sliding
//!   window of about `T1`. Estimates older than `stale_us` are forgotten (the path becomes unknown, i.e. gray
//!   with delay `T_RTT_low` and ECN 0, [LB]'s "no information" values); [LB] instead lets the delay drift.
//! * A path with a timeout since its last acknowledged packet cannot be good (it is gray at best); [LB] makes
//!   it bad. Timeouts, unanswered probes and the blackhole count clear on the next ACK or probe reply from the
//!   path. The retransmission fraction is measured over `retx_window_us` and judged only once that window
//!   holds at least `1 / fail_retx_fraction` packets; a path failed that way stays failed for `fail_hold_us`.
//!   Retransmissions count per loss-recovery episode: a retransmission is charged to the flow's current path
//!   if the byte was first sent on that path and is not part of an episode already charged (after a
//!   retransmission, the bytes already sent are exempt), so NewReno's partial-ACK retransmissions, go-back-N
//!   after a timeout, and reordering caused by a move neither inflate the fraction nor blame the new path.
//! * Anti-herding ([LB], the paper only says "randomization"): a flow considers a congestion reroute at most
//!   once per `reroute_interval_us` and goes ahead with probability `reroute_probability`; ties are random.
//! * `flowlet_timeout_us` ([LB]'s flowlet trigger, not in the paper's algorithm): a flow idle for longer than this
//!   may also be rerouted when its path is not bad, still subject to the size and rate gates and the
//!   notably-better test. Both presets turn it on because both sources list a value; 0 gives the paper's
//!   rule exactly.
//! * Local sending rate `r_p`: bytes this host put on the path, discounted with time constant `dre_tau_us`
//!   (150 µs = [LB]'s `T_dre` 30 µs / α 0.2).
//!
//! **Defaults** (`preset = "readme"`, the [LB] README's recommended set):
//! `T_RTT_low` 60 µs, `T_RTT_high` 180 µs, `ΔRTT` 100 µs, `S` 600,000 B, `T1` 60 µs, probing every 500 µs
//! (authors' scripts; README gives 100–500 µs), flowlet 500 µs ([LB] driver default and the authors' runs;
//! the README text says 5 ms). Not in the README:
//! `T_ECN` 0.1 ([LB] driver default; MDTLB Table 5), `ΔECN` 0 ([LB] code), `R` 5 Gbps ([LB] `DREMultiply`
//! 5 at a 1 Gbps base), probe timeout 100 ms ([LB]), reroute probability 0.5 and interval 100 µs ([LB]),
//! failure thresholds 3 timeouts and 1% retransmissions (paper, via MDTLB pseudocode one), RTT gain 0.5
//! ([LB] `IsSmooth`). dclb choices without a source: `stale_us` 2 ms, `retx_window_us` 1 ms, `fail_hold_us`
//! 10 ms, `probe_scope` active, `edge_ect` on. `preset = "mdtlb"
//! takes MDTLB's Table 5 values instead: `T_RTT_low` 40 µs, `T_RTT_high` 180 µs, `ΔRTT` 1 µs, `S` 64,000 B,
//! `T1` 100 µs, probing every 50 µs, flowlet 5 ms, `T_ECN` 0.1. A parameter given explicitly in the scenario
//! always beats the preset.
//!
//! **On other fabrics** (`lb.timing`, default `"fabric"`): the values above were tuned on [LB]'s 10 Gbps fabric
//! with 10 µs links (85 µs base RTT). Unless the scenario gives them, the delay thresholds `T_RTT_low` and
//! `T_RTT_high` keep their margin above that fabric's one-way base delay (40 µs: 20 µs and 140 µs of
//! queueing) and are placed that far above this fabric's base delay of the chosen signal (the base RTT, or half
//! of it one way): 33 µs and 153 µs of RTT on the default fabric (12.9 µs base RTT). `ΔRTT` is a difference of
//! delays and does not move. `T1` and the flowlet timeout scale with the base RTT (9.1 µs and 76 µs there).
//! `lb.timing = "published"` takes every value as written.
//!
//! How a host senses its paths (the estimates: delay EWMA, ECN fraction, r_p, retransmission window; the
//! probe rounds; the charging of retransmissions per loss episode) and the rerouting skeleton (placement,
//! the gates, the notably-better search, timeouts and failures) live in [`pathsense`](super::pathsense),
//! which MDTLB shares. This module keeps Hermes' judge: the good / gray / bad rule and its thresholds (a
//! [`Time`] each, read from µs once), the move off a bad path, "notably better" as at least `ΔRTT` and `ΔECN`
//! lower, and losses on a bad (or already failed) path that do not fail it.

use super::ackpath::{AckLegs, AckRouting, AckView};
use super::params::{param_choice, scheme_params, LB_FABRIC_RTT_US};
use super::pathsense::{threshold_on_fabric, Fallback, Level, PathJudge, PathView, Rerouter, Rules, Sensing};
pub use super::pathsense::{DelaySignal, ProbeScope, SizeGate};
use super::scheme::{reflect_path_and_class, scheme_counters, CounterReport, Placement, SchemeSpec};
use super::{BuildCx, EdgeBalancer, EdgeCx, FlowView, Installed, PacketMut, Params};
use crate::fabric::FabricFacts;
use crate::ids::{FlowId, HostId, LeafId};
use crate::packet::Packet;
use crate::units::Time;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "hermes",
    placement: Placement::Edge,
    granularity: "flow",
    summary: "host senses every path (ACKs + power-of-two probes), reroutes cautiously off bad or failed paths",
    params: HermesParams::SPECS,
    install,
    reflect: reflect_path_and_class,
};

fn install(cx: &BuildCx, p: &Params) -> Installed {
    let p = HermesParams::from_params(p);
    let edges = cx.facts.host_ids().map(|h| Box::new(Hermes::new(p, cx.facts, h)) as Box<dyn EdgeBalancer>).collect();
    Installed::Edges(edges)
}

scheme_params! {
    /// Hermes' parameters; `preset` sets the values its two sources disagree on.
    #[preset = HermesParams::with_preset]
    #[resolve = HermesParams::on_fabric]
    pub struct HermesParams {
        /// parameter set for the preset-dependent values below: [LB] README's recommended set, or MDTLB's Table 5
        #[source = "[LB] README; MDTLB Table 5"]
        preset: Preset = Preset::Readme,
        /// T_RTT_low: a good path's delay is below this (preset: readme 60, mdtlb 40; moved to this fabric's base
        /// delay under lb.timing = fabric: module doc)
        #[source = "[LB] README (20 + one-way base delay); MDTLB Table 5"]
        #[relation(<= rtt_high_us, "a path is good below T_RTT_low and bad above T_RTT_high, so the good bound cannot lie above the bad one")]
        rtt_low_us: Time = 60.0,
        /// T_RTT_high: a bad path's delay is above this (preset: 180 in both; moved like T_RTT_low)
        #[source = "[LB] README; MDTLB Table 5"]
        rtt_high_us: Time = 180.0,
        /// ΔRTT: a notably better path's delay is lower by at least this (preset: readme 100, mdtlb 1)
        #[source = "[LB] README; MDTLB Table 5"]
        delta_rtt_us: Time = 100.0,
        /// T_ECN: ECN fraction separating good from bad paths
        #[source = "[LB] driver default ECNPortionLow; MDTLB Table 5"]
        ecn_threshold: f64 in 0.0..=1.0 = 0.1,
        /// ΔECN: a notably better path's ECN fraction is lower by at least this
        #[source = "[LB] m_betterPathEcnThresh (code only)"]
        delta_ecn: f64 in 0.0..=1.0 = 0.0,
        /// S: sent-bytes gate of cautious rerouting (preset: readme 600000, mdtlb 64000)
        #[source = "[LB] README; MDTLB Table 5"]
        size_bytes: u64 (bytes) = 600_000,
        /// which flows S lets move: those that sent at least S bytes ([Hermes] paper, [LB] code)
        /// or fewer than S (MDTLB's own rule)
        #[source = "[Hermes] paper; [LB] ipv4-tlb.cc; 'below': MDTLB pseudocode two"]
        size_gate: SizeGate = SizeGate::AtLeast,
        /// R: only flows sending slower than this (cwnd/srtt) are rerouted off a bad path
        #[source = "[LB] DREMultiply 5 x 1 Gbps DRE base"]
        rate_gbps: f64 (Gbps) = 5.0,
        /// T1: time constant of the ECN-fraction window (preset: readme 60, mdtlb 100)
        #[source = "[LB] README T1; MDTLB Table 5"]
        #[rtt_us = LB_FABRIC_RTT_US]
        ecn_window_us: Time = 60.0,
        /// probe interval (preset: readme 500, mdtlb 50); 0 = no probes (paths sensed from ACKs alone)
        #[source = "[LB] authors' scripts / README 100-500; MDTLB Table 5"]
        probe_us: Time = 500.0,
        /// probe destination leaves this host sent to recently, or every leaf
        #[source = "dclb choice (paper: one prober per rack pair, results shared in the rack)"]
        probe_scope: ProbeScope = ProbeScope::Active,
        /// an unanswered probe marks its path failed after this long
        #[source = "[LB] m_probeTimeout 100 ms"]
        probe_timeout_us: Time = 100_000.0,
        /// idle gap after which a flow may be rerouted off a path that is not bad; 0 = off (paper) (preset:
        /// readme 500, mdtlb 5000)
        #[source = "[LB] FlowletTimeout driver default / README; MDTLB Table 5"]
        #[rtt_us = LB_FABRIC_RTT_US]
        flowlet_timeout_us: Time = 500.0,
        /// probability that a triggered congestion reroute goes ahead (anti-herding)
        #[source = "[LB] ChangePathPoss 50%"]
        reroute_probability: f64 in 0.0..=1.0 = 0.5,
        /// a flow considers a congestion reroute at most once per this interval
        #[source = "[LB] ipv4-tlb.cc"]
        reroute_interval_us: Time = 100.0,
        /// EWMA gain of the per-path delay estimate
        #[source = "[LB] IsSmooth (0.5 old + 0.5 sample)"]
        rtt_gain: f64 in 0.0..=1.0 = 0.5,
        /// delay sample: RTT from the echoed timestamp (paper) or the one-way data-path delay ([LB])
        #[source = "Hermes paper; [LB] tcp-socket-base.cc"]
        delay_signal: DelaySignal = DelaySignal::Rtt,
        /// a path's delay and ECN estimates are forgotten after this long without a sample
        #[source = "dclb choice ([LB] drifts the delay instead)"]
        stale_us: Time = 2000.0,
        /// a path with more timeouts than this and no ACK since is failed (blackhole)
        #[source = "Hermes paper via MDTLB pseudocode one"]
        fail_timeouts: u32 = 3,
        /// a path that is not bad with a larger retransmission fraction is failed (random drops)
        #[source = "Hermes paper via MDTLB pseudocode one"]
        fail_retx_fraction: f64 in 0.0..=1.0 = 0.01,
        /// time constant of the retransmission-fraction window
        #[source = "dclb choice"]
        retx_window_us: Time = 1000.0,
        /// how long a path failed by its retransmission fraction stays failed
        #[source = "dclb choice ([LB] keeps flags for 100 s)"]
        fail_hold_us: Time = 10_000.0,
        /// time constant of the local sending rate r_p of each path
        #[source = "[LB] T_dre 30 us / alpha 0.2"]
        dre_tau_us: Time = 150.0,
        /// the host makes every data packet it sends ECN-capable, whatever the guest's TCP; off: only DCTCP
        /// flows' packets (and probes) can be marked
        #[source = "dclb choice, as Clove's vSwitch (the ECN fraction needs ECT packets)"]
        edge_ect: bool = true,
        /// who routes the ACKs this host sends for the flows it receives: the switches' hash (the papers'
        /// code, TLBReverseACK off), or this host's Hermes, placing each ACK leg as it would place a new
        /// flow to the data sender's leaf (lb/ackpath.rs)
        #[source = "[LB] TLBReverseACK (default off); 'edge': dclb's reading of it"]
        ack_routing: AckRouting = AckRouting::Ecmp,
    }
}

param_choice! {
    /// Hermes' parameter sets: the declared defaults are the README's.
    pub enum Preset {
        Readme = "readme",
        Mdtlb = "mdtlb",
    }
}

impl HermesParams {
    /// The delay thresholds moved onto this fabric ([`threshold_on_fabric`]); `ΔRTT` is a difference of delays
    /// and stays as it is. The declaration's resolution step (`#[resolve]`): `from_params` applies it.
    fn on_fabric(self, p: &Params) -> HermesParams {
        let shift = |name: &str, t: Time| threshold_on_fabric(p, name, t, self.delay_signal);
        HermesParams { rtt_low_us: shift("rtt_low_us", self.rtt_low_us), rtt_high_us: shift("rtt_high_us", self.rtt_high_us), ..self }
    }

    /// The constants of the sensing and rerouting skeleton.
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
            rerouting: true,
            size_bytes: self.size_bytes,
            size_gate: self.size_gate,
            rate_gbps: self.rate_gbps,
            flowlet_timeout: self.flowlet_timeout_us,
            reroute_interval: self.reroute_interval_us,
            reroute_probability: self.reroute_probability,
            draw_when_certain: true,
        }
    }

    /// MDTLB's Table 5 values in place of the README's, when `preset` asks for them.
    fn with_preset(self) -> HermesParams {
        match self.preset {
            Preset::Readme => self,
            Preset::Mdtlb => HermesParams {
                rtt_low_us: Time::from_us(40),
                rtt_high_us: Time::from_us(180),
                delta_rtt_us: Time::from_us(1),
                ecn_threshold: 0.1,
                size_bytes: 64_000,
                ecn_window_us: Time::from_us(100),
                probe_us: Time::from_us(50),
                flowlet_timeout_us: Time::from_us(5000),
                ..self
            },
        }
    }
}

/// Hermes' judge (module doc): its parameters, read once.
impl PathJudge for HermesParams {
    /// Good, else gray.
    const PLACE_ON: &'static [Level] = &[Level::Good, Level::Gray];

    /// Bad: delay above `T_RTT_high` and ECN fraction above `T_ECN`; good: both below the low thresholds.
    fn level(&self, rtt_us: f64, ecn: f64) -> Level {
        if rtt_us > self.rtt_high_us.as_us() && ecn > self.ecn_threshold {
            Level::Bad
        } else if rtt_us < self.rtt_low_us.as_us() && ecn < self.ecn_threshold {
            Level::Good
        } else {
            Level::Gray
        }
    }

    /// [LB]'s "no information" delay.
    fn unknown_delay(&self) -> Time {
        self.rtt_low_us
    }

    fn moves_off(&self, level: Level) -> bool {
        level == Level::Bad
    }

    /// Delay lower by at least `ΔRTT` and ECN fraction lower by at least `ΔECN`.
    fn notably_better(&self, here: &PathView, there: &PathView) -> bool {
        here.rtt_us - there.rtt_us >= self.delta_rtt_us.as_us() && here.ecn - there.ecn >= self.delta_ecn
    }

    /// Losses on a bad path are congestion drops; a path already failed stays as it is (its hold is not
    /// extended).
    fn losses_are_congestion(&self, path: &PathView) -> bool {
        matches!(path.level, Level::Bad | Level::Failed)
    }

    /// A random path that has not failed (only bad ones are left).
    fn fallback(&self) -> Fallback {
        Fallback::Uniform
    }
}

scheme_counters! {
    /// What one host's Hermes did.
    #[scheme = SPEC]
    pub struct HermesCounters {
        /// flows moved off their path, for congestion, after an idle gap, a timeout or a failure (first
        /// placements not counted)
        reroutes,
    }
}

/// The Hermes edge balancer of one host.
pub struct Hermes {
    cfg: HermesParams,
    /// The host's path sensing, its flows' paths, and the rerouting skeleton.
    paths: Rerouter,
    /// The ACK legs of the flows this host receives (`ack_routing = "edge"`).
    acks: AckLegs,
    counters: HermesCounters,
}

impl Hermes {
    pub fn new(cfg: HermesParams, facts: &FabricFacts, host: HostId) -> Hermes {
        // A placed flow keeps its path through idle gaps (a gap only opens the cautious, gated move), so an
        // ACK leg does too: it is placed again only when its ACKs are lost or its path is gone. A duplicate after
        // a silence longer than the flowlet timeout is lost ACKs (module doc of `ackpath`).
        Hermes { cfg, paths: Rerouter::new(cfg.rules(), facts, host), acks: AckLegs::new(None, Some(cfg.flowlet_timeout_us)), counters: HermesCounters::default() }
    }

    /// How Hermes judges path `path` towards `dst_leaf` at `now` (for inspection and tests).
    pub fn view(&self, dst_leaf: LeafId, path: u16, now: Time) -> PathView {
        self.paths.view(&self.cfg, dst_leaf, path, now)
    }

    /// The path a flow of this host is pinned to, if it has one.
    pub fn flow_path(&self, flow: FlowId) -> Option<u16> {
        self.paths.flow_path(flow)
    }
}

impl EdgeBalancer for Hermes {
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        let routed = self.paths.choose_path(&self.cfg, cx, flow, pkt, paths);
        self.counters.reroutes += routed.moved as u64;
        routed.path
    }

    fn on_ack(&mut self, cx: &mut EdgeCx, flow: &FlowView, ack: &Packet) {
        self.paths.on_ack(cx, flow, ack);
    }

    fn on_timeout(&mut self, _cx: &mut EdgeCx, flow: &FlowView) {
        self.paths.on_timeout(flow);
    }

    fn routes_acks(&self) -> bool {
        self.cfg.ack_routing == AckRouting::Edge
    }

    /// Each ACK leg is placed as a new flow to the data sender's leaf would be (module doc of `ackpath`).
    fn choose_ack_path(&mut self, cx: &mut EdgeCx, ack: &AckView, paths: &[u16]) -> u16 {
        let (now, dl) = (cx.now, cx.facts.leaf_of_host(ack.to));
        let (cfg, rerouter, rng) = (&self.cfg, &mut self.paths, &mut *cx.rng);
        self.acks.route(now, ack, paths, |_| false, |start| rerouter.place_ack(cfg, rng, dl, paths, now, start))
    }

    fn on_probe_reply(&mut self, cx: &mut EdgeCx, reply: &Packet) {
        self.paths.on_probe_reply(cx, reply);
    }

    /// Every probe interval: for each destination leaf in scope, probe two distinct random paths and the best
    /// known one, ranked by (level, delay).
    fn on_timer(&mut self, cx: &mut EdgeCx) {
        self.paths.probe_round(&self.cfg, cx);
    }

    fn timer_period(&self) -> Option<Time> {
        (self.cfg.probe_us > Time::ZERO).then_some(self.cfg.probe_us)
    }

    fn probes_per_round(&self, active_leaves: usize) -> usize {
        self.paths.sense().probes_per_round(active_leaves)
    }

    fn sets_ect(&self) -> bool {
        self.cfg.edge_ect
    }

    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.paths.heap_bytes() + self.acks.state_bytes()
    }

    fn counters(&self) -> CounterReport {
        self.counters.report()
    }
}
