//! What Hermes and MDTLB share: a sending host's sensing of its paths, and the rerouting skeleton built on it.
//!
//! MDTLB describes only what it changes in Hermes; how a host learns about its paths, and the mechanism by
//! which it places and moves its flows, are Hermes' in both, so they live here once. What stays in each
//! scheme is its **judge** ([`PathJudge`]): how it grades a path from its delay and ECN estimates (Hermes'
//! good / gray / bad, MDTLB's five levels and self-adjusting thresholds), which levels a flow is placed on,
//! which level makes a flow move, what "notably better" means, and whether losses on a path are congestion.
//!
//! # Sensing
//!
//! **What a host knows.** A sending host keeps one [`PathState`] per (destination leaf, uplink) in a
//! [`PathTable`], shared by all its flows. It is filled only from what comes back to the host in packets (ACKs
//! and probe replies: the echoed path tag, the echoed send timestamp and the ECN echo) and from what the host
//! itself sends (bytes per path, retransmissions, timeouts):
//!
//! ```text
//!  ACK / probe reply ──► sample_answer(): delay EWMA (gain g), ECN fraction over ~T1, clears timeouts/probe
//!  data packet sent  ──► count_sent():    local sending rate r_p (DRE, τ), packets sent over the retx window
//!  retransmission    ──► count_retx():    retransmissions over the retx window (once per loss episode,
//!                                         see retx_charged())
//!  RTO of a flow     ──► count_timeout(): timeouts since the path last delivered
//!  probe timer       ──► probe_round():   per destination leaf in scope, two random paths + the best known
//! ```
//!
//! **Probing (Hermes' power of two choices).** Every probe interval, for each destination leaf in scope, the
//! host probes two distinct random paths plus the best path it knows (ranked by the judge's level, then
//! delay), or every path when there are at most three. A leaf is in scope when the host sent data towards it
//! within the last 10 probe intervals (`ProbeScope::Active`), or always (`All`). The probe goes to the host
//! with the prober's index on the destination leaf. The send time of a path's oldest unanswered probe is kept,
//! so that a path whose probe never came back fails; any answer from the path clears it.
//!
//! **The delay of an answer** is the round trip (now minus the echoed send time) or, with
//! `DelaySignal::OneWay`, the data's one-way delay (the answer's own send time minus the echoed one; clocks
//! are exact in a simulator). The estimate is kept in µs as a float (an EWMA); every delay *threshold* it is
//! compared with is a [`Time`].
//!
//! # Judging a path ([`Rerouter::view`])
//!
//! An unmeasured path (no sample within `stale`) is gray, compared as if its delay were the judge's
//! [`PathJudge::unknown_delay`] and its ECN fraction 0. A measured one gets the judge's
//! [`PathJudge::level`] from its delay and ECN estimates. Then two rules common to both schemes: a path with
//! a timeout since it last delivered anything is not good (a good level becomes gray), and a path is
//! **failed** when it had more than `fail_timeouts` timeouts with nothing delivered since (a blackhole), when
//! a probe has gone unanswered for `probe_timeout`, or for `fail_hold` after its retransmission fraction
//! exceeded `fail_retx_fraction` while the judge did not call those losses congestion (random drops).
//!
//! # Rerouting ([`Rerouter::choose_path`])
//!
//! For every data packet the host sends:
//!
//! ```text
//!  new flow ─────────────────────────────► place(): least loaded path of the judge's first placement level
//!                                          that has one, else the fallback among the paths not failed
//!  placed flow ─ retransmission? ─► charge it to the path (once per loss episode), maybe fail the path
//!              ─ timed out, or path failed / gone ─► place() again (no gates)
//!              ─ path at the judge's move level, or idle > flowlet timeout ─► the gates:
//!                  rerouting on, the flow's last attempt ≥ reroute interval ago, size gate S (sent bytes
//!                  below or at least S), rate gate (cwnd / srtt below R), then a draw against the reroute
//!                  probability ─► notably_better(): least loaded path, by the placement levels in turn,
//!                  that the judge calls notably better than the current one; none: stay
//!              ─ otherwise stay
//! ```
//!
//! "Least loaded" is the smallest local sending rate r_p, ties broken uniformly at random. The fallback is
//! uniform among the paths not failed, or among those of the best level present (MDTLB's option); if every
//! path has failed, a new flow takes a random one and a placed flow stays (unless its path is gone). A flow
//! that moves stops charging retransmissions of the bytes it sent before the move to its new path. A flow's
//! entry is dropped when every byte is acknowledged; its retransmission timer marks it for placing again and
//! counts a timeout against its path. The caller learns what happened ([`Routed`]) and counts it.

use super::ackpath::LegStart;
use super::flowtable::{Clock, Entry, FlowTable, Timeout};
use super::params::{param_choice, Params};
use super::{EdgeCx, FlowView, PacketMut, ProbeRequest};
use crate::fabric::FabricFacts;
use crate::ids::{FlowId, HostId, LeafId};
use crate::packet::{Packet, NO_PATH};
use crate::rng::Rng;
use crate::units::Time;

param_choice! {
    /// Which destination leaves a host probes.
    pub enum ProbeScope {
        /// Those it sent data to within the last 10 probe intervals.
        Active = "active",
        All = "all",
    }
}

param_choice! {
    /// Which flows the size gate S lets move.
    pub enum SizeGate {
        /// Fewer than S bytes sent (MDTLB's rerouting rule).
        Below = "below",
        /// At least S bytes (the [Hermes] paper, and [LB]).
        AtLeast = "at_least",
    }
}

param_choice! {
    /// Placement when no path of a placement level exists.
    pub enum Fallback {
        /// Uniformly among the non-failed paths of the best level present (bad before very bad).
        BestLevel = "best_level",
        /// Uniformly among the non-failed paths.
        Uniform = "uniform",
    }
}

param_choice! {
    /// What a delay sample measures.
    pub enum DelaySignal {
        /// Now minus the echoed timestamp.
        Rtt = "rtt",
        /// The data's one-way delay: the ACK's send time minus the echoed timestamp.
        OneWay = "one_way",
    }
}

/// What one host knows about one path (destination leaf, uplink).
#[derive(Copy, Clone, Debug)]
pub struct PathState {
    /// Smoothed delay in µs; meaningful while `sampled_at` is recent.
    pub rtt_us: f64,
    /// Time of the last delay/ECN sample, `Time::MAX` if none.
    pub sampled_at: Time,
    /// ECE-marked and total samples, each discounted by exp(-age / T1), as of `ecn_at`.
    pub ecn_marked: f64,
    pub ecn_total: f64,
    pub ecn_at: Time,
    /// Retransmitted and total data packets sent on the path, discounted over `retx_window`, as of `retx_at`.
    pub retx: f64,
    pub sent: f64,
    pub retx_at: Time,
    /// Retransmission timeouts of flows on this path since it last delivered anything.
    pub timeouts: u32,
    /// Send time of the oldest unanswered probe, `Time::MAX` if none.
    pub probe_pending: Time,
    /// Failed by its retransmission fraction until then.
    pub failed_until: Time,
    /// Discounted bytes this host sent on the path (the local sending rate r_p times `dre_tau`), as of `dre_at`.
    pub dre: f64,
    pub dre_at: Time,
}

impl Default for PathState {
    fn default() -> Self {
        PathState {
            rtt_us: 0.0,
            sampled_at: Time::MAX,
            ecn_marked: 0.0,
            ecn_total: 0.0,
            ecn_at: Time::ZERO,
            retx: 0.0,
            sent: 0.0,
            retx_at: Time::ZERO,
            timeouts: 0,
            probe_pending: Time::MAX,
            failed_until: Time::ZERO,
            dre: 0.0,
            dre_at: Time::ZERO,
        }
    }
}

/// `x` discounted from `at` to `now` with time constant `tau` (a zero `tau` counts as 1 ps: all but instant).
#[inline]
pub fn discounted(x: f64, at: Time, now: Time, tau: Time) -> f64 {
    if now <= at || x == 0.0 {
        x
    } else {
        x * (-((now.0 - at.0) as f64) / tau.0.max(1) as f64).exp()
    }
}

/// The delay an ACK or probe reply reports: the round trip (`now` minus the echoed send time), or with
/// `one_way` the data's one-way delay (the answer's own send time minus the echoed one).
#[inline]
pub fn delay_of(one_way: bool, now: Time, answer: &Packet) -> Time {
    if one_way {
        answer.sent_at.saturating_sub(answer.echo_ts)
    } else {
        now.saturating_sub(answer.echo_ts)
    }
}

impl PathState {
    /// Whether the estimates were sampled within `stale` of `now`.
    #[inline]
    pub fn is_fresh(&self, now: Time, stale: Time) -> bool {
        self.sampled_at != Time::MAX && now.saturating_sub(self.sampled_at) <= stale
    }

    /// The ECN-marked share of the recent samples (both counts decay alike, so the ratio is the one as of
    /// the last sample); 0 without samples.
    #[inline]
    pub fn ecn_fraction(&self) -> f64 {
        if self.ecn_total > 0.0 {
            self.ecn_marked / self.ecn_total
        } else {
            0.0
        }
    }

    /// Discounted bytes sent on the path as of `now`: proportional to the local sending rate r_p.
    #[inline]
    pub fn load(&self, now: Time, dre_tau: Time) -> f64 {
        discounted(self.dre, self.dre_at, now, dre_tau)
    }

    /// Whether a probe has been unanswered for at least `timeout`.
    #[inline]
    pub fn probe_lost(&self, now: Time, timeout: Time) -> bool {
        self.probe_pending != Time::MAX && now.saturating_sub(self.probe_pending) >= timeout
    }

    /// Records a delay sample and an ECN echo: evidence that the path delivers, so the timeout count and the
    /// pending probe clear. A stale estimate is replaced, a fresh one moves by `gain`.
    pub fn sample(&mut self, now: Time, delay: Time, ece: bool, gain: f64, stale: Time, ecn_window: Time) {
        let d = delay.as_us();
        if self.is_fresh(now, stale) {
            self.rtt_us = (1.0 - gain) * self.rtt_us + gain * d;
            self.ecn_marked = discounted(self.ecn_marked, self.ecn_at, now, ecn_window);
            self.ecn_total = discounted(self.ecn_total, self.ecn_at, now, ecn_window);
        } else {
            self.rtt_us = d;
            self.ecn_marked = 0.0;
            self.ecn_total = 0.0;
        }
        self.ecn_at = now;
        self.ecn_total += 1.0;
        if ece {
            self.ecn_marked += 1.0;
        }
        self.sampled_at = now;
        self.timeouts = 0;
        self.probe_pending = Time::MAX;
    }

    /// Counts a data packet of `bytes` sent on the path: towards r_p and the retransmission window.
    pub fn count_sent(&mut self, now: Time, bytes: u32, dre_tau: Time, retx_window: Time) {
        self.dre = discounted(self.dre, self.dre_at, now, dre_tau) + bytes as f64;
        self.dre_at = now;
        self.sent = discounted(self.sent, self.retx_at, now, retx_window) + 1.0;
        self.retx = discounted(self.retx, self.retx_at, now, retx_window);
        self.retx_at = now;
    }

    /// Counts a retransmission charged to the path.
    pub fn count_retx(&mut self, now: Time, retx_window: Time) {
        self.sent = discounted(self.sent, self.retx_at, now, retx_window);
        self.retx = discounted(self.retx, self.retx_at, now, retx_window) + 1.0;
        self.retx_at = now;
    }

    /// Whether the retransmission fraction exceeds `fraction`, judged only once the window holds at least
    /// `1 / fraction` packets (0 disables the rule).
    pub fn retx_excessive(&self, fraction: f64) -> bool {
        fraction > 0.0 && self.sent >= 1.0 / fraction && self.retx > fraction * self.sent
    }
}

/// The constants of a host's sensing, taken from the scheme's parameters.
#[derive(Copy, Clone, Debug)]
pub struct Sensing {
    /// EWMA gain of the delay estimate.
    pub rtt_gain: f64,
    /// Estimates older than this are forgotten.
    pub stale: Time,
    /// Time constant T1 of the ECN fraction.
    pub ecn_window: Time,
    /// Time constant of the local sending rate r_p.
    pub dre_tau: Time,
    /// Time constant of the retransmission fraction.
    pub retx_window: Time,
    pub delay_signal: DelaySignal,
    pub probe_scope: ProbeScope,
    /// Probe interval; also sets how recently a leaf must have been sent to for `ProbeScope::Active`.
    pub probe_interval: Time,
}

/// One host's estimates of every path to every other leaf, and the probing that keeps them current.
pub struct PathTable {
    cfg: Sensing,
    host: HostId,
    my_leaf: LeafId,
    uplinks: u32,
    /// `paths[dst_leaf * uplinks + uplink]`.
    paths: Vec<PathState>,
    /// Uplinks that reach each destination leaf (static routing facts), for probing.
    usable: Vec<Vec<u16>>,
    /// Last time this host sent data towards each leaf, `Time::MAX` if never.
    last_active: Vec<Time>,
}

impl PathTable {
    pub fn new(cfg: Sensing, facts: &FabricFacts, host: HostId) -> PathTable {
        let my_leaf = facts.leaf_of_host(host);
        let usable = facts
            .leaf_ids()
            .map(|d| if d == my_leaf { Vec::new() } else { (0..facts.uplinks).filter(|&u| facts.path_delay(my_leaf, u, d) != Time::MAX).map(|u| u as u16).collect() })
            .collect();
        PathTable {
            cfg,
            host,
            my_leaf,
            uplinks: facts.uplinks,
            paths: vec![PathState::default(); (facts.leaves * facts.uplinks) as usize],
            usable,
            last_active: vec![Time::MAX; facts.leaves as usize],
        }
    }

    #[inline]
    fn idx(&self, dst_leaf: LeafId, path: u16) -> usize {
        dst_leaf.index() * self.uplinks as usize + path as usize
    }

    /// The estimates of path `path` towards `dst_leaf`.
    #[inline]
    pub fn get(&self, dst_leaf: LeafId, path: u16) -> &PathState {
        &self.paths[self.idx(dst_leaf, path)]
    }

    #[inline]
    pub fn get_mut(&mut self, dst_leaf: LeafId, path: u16) -> &mut PathState {
        let i = self.idx(dst_leaf, path);
        &mut self.paths[i]
    }

    /// Every leaf of the fabric (the table has a row for each, its own leaf's empty).
    pub fn leaf_ids(&self) -> impl Iterator<Item = LeafId> + use<> {
        (0..self.usable.len() as u32).map(LeafId)
    }

    /// The uplinks that reach `dst_leaf` (none for the host's own leaf).
    pub fn usable(&self, dst_leaf: LeafId) -> &[u16] {
        &self.usable[dst_leaf.index()]
    }

    /// Notes that the host sends data towards `dst_leaf` at `now` (the probing scope follows it).
    #[inline]
    pub fn note_sending(&mut self, dst_leaf: LeafId, now: Time) {
        self.last_active[dst_leaf.index()] = now;
    }

    /// Whether the host sent data towards `dst_leaf` within `horizon` before `now`.
    pub fn sent_within(&self, dst_leaf: LeafId, now: Time, horizon: Time) -> bool {
        let la = self.last_active[dst_leaf.index()];
        la != Time::MAX && now.saturating_sub(la) <= horizon
    }

    /// Samples the path an ACK or probe reply reports on (its echoed tag), from the leaf of its sender. An
    /// answer without a tag, or about no path of this host's, is ignored.
    pub fn sample_answer(&mut self, now: Time, facts: &FabricFacts, answer: &Packet) {
        let path = answer.lb.echo_path;
        let dst_leaf = facts.leaf_of_host(answer.src);
        if path == NO_PATH || path as u32 >= self.uplinks || dst_leaf == self.my_leaf || dst_leaf.index() >= self.usable.len() {
            return;
        }
        let delay = delay_of(self.cfg.delay_signal == DelaySignal::OneWay, now, answer);
        let c = self.cfg;
        self.get_mut(dst_leaf, path).sample(now, delay, answer.ecn.ece, c.rtt_gain, c.stale, c.ecn_window);
    }

    /// Counts a data packet of `bytes` sent on a path.
    #[inline]
    pub fn count_sent(&mut self, dst_leaf: LeafId, path: u16, now: Time, bytes: u32) {
        let c = self.cfg;
        self.get_mut(dst_leaf, path).count_sent(now, bytes, c.dre_tau, c.retx_window);
    }

    /// Charges a retransmission to a path and returns its estimates, for the scheme's failure rule.
    pub fn count_retx(&mut self, dst_leaf: LeafId, path: u16, now: Time) -> &PathState {
        let w = self.cfg.retx_window;
        let ps = self.get_mut(dst_leaf, path);
        ps.count_retx(now, w);
        ps
    }

    /// Counts a retransmission timeout of a flow on a path (cleared by the path's next answer).
    pub fn count_timeout(&mut self, dst_leaf: LeafId, path: u16) {
        self.get_mut(dst_leaf, path).timeouts += 1;
    }

    /// Whether `dst_leaf` is in the probing scope at `now`.
    pub fn in_probe_scope(&self, dst_leaf: LeafId, now: Time) -> bool {
        self.cfg.probe_scope == ProbeScope::All || self.sent_within(dst_leaf, now, self.cfg.probe_interval.mul(10))
    }

    /// The most probes one round sends when this host sends to `active_leaves` other leaves: up to three paths
    /// (two random and the best) to each destination leaf in scope, every other leaf under
    /// `ProbeScope::All`; none when probing is off.
    pub fn probes_per_round(&self, active_leaves: usize) -> usize {
        if self.cfg.probe_interval == Time::ZERO {
            return 0;
        }
        let per_leaf = self.usable.iter().map(|u| u.len().min(3)).max().unwrap_or(0);
        let leaves = match self.cfg.probe_scope {
            ProbeScope::All => self.usable.iter().filter(|u| !u.is_empty()).count(),
            ProbeScope::Active => active_leaves,
        };
        leaves * per_leaf
    }

    /// One probe round (module doc). `rank` orders a destination's paths by the scheme's judgement, lowest
    /// best; the first in uplink order wins a tie. Random draws: two per leaf with more than three paths.
    pub fn probe_round<K: PartialOrd>(&mut self, cx: &mut EdgeCx, rank: impl Fn(&PathState) -> (K, f64)) {
        let (now, facts) = (cx.now, cx.facts);
        for d in facts.leaf_ids() {
            let n = self.usable[d.index()].len();
            if n == 0 || !self.in_probe_scope(d, now) {
                continue;
            }
            if n <= 3 {
                for k in 0..n {
                    let p = self.usable[d.index()][k];
                    self.send_probe(cx, d, p);
                }
                continue;
            }
            let a = cx.rng.below(n);
            let mut b = cx.rng.below(n - 1);
            if b >= a {
                b += 1;
            }
            let usable = &self.usable[d.index()];
            let mut best = 0usize;
            let mut key = rank(self.get(d, usable[0]));
            for (k, &p) in usable.iter().enumerate().skip(1) {
                let r = rank(self.get(d, p));
                if r < key {
                    key = r;
                    best = k;
                }
            }
            let (pa, pb, pbest) = (usable[a], usable[b], usable[best]);
            self.send_probe(cx, d, pa);
            self.send_probe(cx, d, pb);
            if best != a && best != b {
                self.send_probe(cx, d, pbest);
            }
        }
    }

    fn send_probe(&mut self, cx: &mut EdgeCx, dst_leaf: LeafId, path: u16) {
        let ps = self.get_mut(dst_leaf, path);
        if ps.probe_pending == Time::MAX {
            ps.probe_pending = cx.now;
        }
        // The host of the destination leaf with this host's place on its own leaf.
        let dst = cx.facts.host_on_leaf(dst_leaf, cx.facts.host_rank(self.host));
        cx.probes.push(ProbeRequest { dst, path });
    }

    /// Memory held beyond the struct itself.
    pub fn heap_bytes(&self) -> usize {
        self.paths.len() * std::mem::size_of::<PathState>() + self.last_active.len() * 8 + self.usable.iter().map(|u| u.len() * 2).sum::<usize>()
    }
}

/// Whether a retransmission of byte `seq` is charged to the flow's path, and the bookkeeping for the next
/// one (`charge_from` lives in the flow's state; `sent` is the highest byte the flow has sent).
///
/// A path's retransmission fraction should count loss episodes on *that* path, so a retransmission is
/// charged only if its byte is at or above `charge_from`; after it, every byte already sent is exempt. One
/// loss then costs one charge however many packets its recovery resends (NewReno's partial ACKs, go-back-N
/// after a timeout). The scheme also raises `charge_from` to `sent` when it moves the flow, so bytes first
/// sent on the old path, or reordered by the move, never blame the new one.
#[inline]
pub fn retx_charged(charge_from: &mut u64, seq: u64, sent: u64) -> bool {
    let charged = seq >= *charge_from;
    *charge_from = (*charge_from).max(sent);
    charged
}

/// The flow's own sending rate in bit/s, `cwnd / srtt` (0 before the first RTT sample).
#[inline]
pub fn flow_rate_bps(flow: &FlowView) -> f64 {
    if flow.srtt > Time::ZERO {
        flow.cwnd as f64 * 8.0 / flow.srtt.as_secs()
    } else {
        0.0
    }
}

/// Among `(path, load)` candidates in order, the one with the smallest load (the local sending rate r_p);
/// ties are broken uniformly at random by reservoir sampling, one draw per tie met.
pub fn pick_least_loaded(rng: &mut Rng, candidates: impl IntoIterator<Item = (u16, f64)>) -> Option<u16> {
    let mut best: Option<(u16, f64)> = None;
    let mut ties = 0usize;
    for (p, load) in candidates {
        match best {
            Some((_, l)) if load > l => {}
            Some((_, l)) if load == l => {
                ties += 1;
                if rng.below(ties) == 0 {
                    best = Some((p, l));
                }
            }
            _ => {
                best = Some((p, load));
                ties = 1;
            }
        }
    }
    best.map(|(p, _)| p)
}

/// One-way base delay (us) of the fabric [LB]'s delay thresholds were tuned on: four links of 10 us (its README:
/// `T_RTT_low` = 20 + the one-way base delay).
const LB_ONE_WAY_BASE_US: f64 = 40.0;

/// Under `lb.timing = "fabric"`, a delay threshold the scenario did not give (`published`, tuned on [LB]'s
/// fabric) keeps its margin above that fabric's base delay and sits that far above this fabric's base delay
/// instead: the base of the delay signal (the base RTT, or half of it for the one-way signal). A margin is
/// queueing, which at a given rate and marking threshold does not depend on propagation, so it is not scaled.
/// Under `"published"`, or for a value the scenario gave, the threshold is used as written. Shared by every
/// scheme whose thresholds come from the Hermes code (Hermes, MDTLB). The sum is taken in µs and rounded to
/// the picosecond once.
pub fn threshold_on_fabric(p: &Params, name: &str, published: Time, signal: DelaySignal) -> Time {
    let Some(rtt) = p.base_rtt() else { return published };
    if p.given(name) {
        return published;
    }
    let base = match signal {
        DelaySignal::Rtt => rtt.as_us(),
        DelaySignal::OneWay => rtt.as_us() / 2.0,
    };
    Time::from_us_f64((published.as_us() - LB_ONE_WAY_BASE_US).max(0.0) + base)
}

/// A path's level, best first. Hermes grades with four of them (good, gray, bad, failed), MDTLB with all six.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    VeryGood,
    Good,
    Gray,
    Bad,
    VeryBad,
    Failed,
}

impl Level {
    pub fn is_good(self) -> bool {
        matches!(self, Level::VeryGood | Level::Good)
    }
    pub fn is_bad(self) -> bool {
        matches!(self, Level::Bad | Level::VeryBad)
    }
}

/// A path as judged at one instant.
#[derive(Copy, Clone, Debug)]
pub struct PathView {
    pub level: Level,
    /// Whether the path has a fresh estimate (an unmeasured path is gray).
    pub measured: bool,
    /// Delay estimate in µs (the judge's [`PathJudge::unknown_delay`] when unmeasured).
    pub rtt_us: f64,
    /// ECN fraction (0 when unmeasured).
    pub ecn: f64,
}

/// What a scheme concludes from the estimates of its paths; the rest of rerouting is [`Rerouter`]'s.
pub trait PathJudge {
    /// Levels a flow is placed on, in order of preference (the least loaded path of the first level that has
    /// one); a move goes to a notably better path of these levels, in the same order.
    const PLACE_ON: &'static [Level];
    /// The level of a measured path from its delay (µs) and ECN estimates, before the timeout and failure
    /// rules.
    fn level(&self, rtt_us: f64, ecn: f64) -> Level;
    /// The delay an unmeasured path is compared at.
    fn unknown_delay(&self) -> Time;
    /// Whether a flow on a path of this level may move for congestion (through the gates).
    fn moves_off(&self, level: Level) -> bool;
    /// Whether path `there` is notably better than the flow's current path `here`.
    fn notably_better(&self, here: &PathView, there: &PathView) -> bool;
    /// Whether the losses of a path so judged are congestion drops, which do not fail it.
    fn losses_are_congestion(&self, path: &PathView) -> bool;
    /// Placement when no path of a placement level exists.
    fn fallback(&self) -> Fallback;
}

/// The constants of the rerouting skeleton, taken from the scheme's parameters.
#[derive(Copy, Clone, Debug)]
pub struct Rules {
    pub sensing: Sensing,
    /// A path with more timeouts than this and nothing delivered since is failed.
    pub fail_timeouts: u32,
    /// An unanswered probe fails its path after this long.
    pub probe_timeout: Time,
    /// A retransmission fraction above this fails a path whose losses are not congestion (0: never) ...
    pub fail_retx_fraction: f64,
    /// ... for this long.
    pub fail_hold: Time,
    /// Whether placed flows may move at all (besides being placed again).
    pub rerouting: bool,
    /// The size gate: S and which flows it lets move.
    pub size_bytes: u64,
    pub size_gate: SizeGate,
    /// The rate gate R: only flows sending slower than this (cwnd / srtt) move.
    pub rate_gbps: f64,
    /// A flow idle for longer than this may also move (0: never).
    pub flowlet_timeout: Time,
    /// A flow considers a move at most once per this interval.
    pub reroute_interval: Time,
    /// A considered move goes ahead with this probability.
    pub reroute_probability: f64,
    /// Whether a move certain to go ahead (probability 1) still draws its random number: Hermes' code does,
    /// MDTLB's does not. Kept so that each scheme's random sequence, and so its results, stay as they were.
    pub draw_when_certain: bool,
}

impl Rules {
    /// The flow-status gates: sent size against S, sending rate against R.
    fn gates_open(&self, flow: &FlowView) -> bool {
        let size_ok = match self.size_gate {
            SizeGate::Below => flow.sent < self.size_bytes,
            SizeGate::AtLeast => flow.sent >= self.size_bytes,
        };
        size_ok && flow_rate_bps(flow) < self.rate_gbps * 1e9
    }

    /// The anti-herding draw of a move that passed the gates.
    fn goes_ahead(&self, rng: &mut Rng) -> bool {
        if self.draw_when_certain {
            rng.unit() < self.reroute_probability
        } else {
            self.reroute_probability >= 1.0 || rng.unit() < self.reroute_probability
        }
    }
}

/// What the skeleton keeps per flow besides its path and when it last sent (the flow table's port and clock).
#[derive(Copy, Clone, Debug)]
struct FlowState {
    dst_leaf: LeafId,
    /// Last time a move was considered (the reroute interval).
    last_attempt: Option<Time>,
    /// The retransmission timer fired since the flow was last placed.
    timed_out: bool,
    /// Retransmissions of bytes below this are not charged to the flow's path: they were first sent on
    /// another path (set to the highest byte sent when the flow moves), or belong to a recovery episode
    /// already charged (set to the highest byte sent at each retransmission; see [`retx_charged`]).
    charge_from: u64,
}

impl Default for FlowState {
    /// A flow table's fresh entry; `dst_leaf` is set when the flow is placed.
    fn default() -> Self {
        FlowState { dst_leaf: LeafId(0), last_attempt: None, timed_out: false, charge_from: 0 }
    }
}

/// Why a packet went where it went.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// The flow's first packet: placed.
    New,
    /// Placed again: its retransmission timer fired, or its path failed or is gone.
    Replaced,
    /// A move was considered (the gates passed) because its path is at the judge's move level.
    Congested,
    /// A move was considered because the flow was idle longer than the flowlet timeout.
    Idle,
    /// The flow stays where it is.
    Kept,
}

/// The outcome of [`Rerouter::choose_path`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Routed {
    pub path: u16,
    pub why: Why,
    /// The flow was placed before and now takes another path.
    pub moved: bool,
    /// The placement found no path of a placement level and took the fallback.
    pub fallback: bool,
}

/// One host's path sensing, its flows' paths, and the rules that place and move them (module doc).
pub struct Rerouter {
    rules: Rules,
    sense: PathTable,
    /// Each flow's path; idle longer than the flowlet timeout, a flow may move.
    flows: FlowTable<FlowState, u16>,
    /// Scratch: the views of the candidate paths of the decision at hand.
    views: Vec<PathView>,
}

/// Judges one path from its estimates `ps` at `now` (module doc, "Judging a path").
#[inline]
fn judged<J: PathJudge>(judge: &J, r: &Rules, ps: &PathState, now: Time) -> PathView {
    let measured = ps.is_fresh(now, r.sensing.stale);
    let (rtt_us, ecn) = if measured { (ps.rtt_us, ps.ecn_fraction()) } else { (judge.unknown_delay().as_us(), 0.0) };
    let mut level = if measured { judge.level(rtt_us, ecn) } else { Level::Gray };
    if level.is_good() && ps.timeouts > 0 {
        // A path that timed out since it last delivered anything is not good.
        level = Level::Gray;
    }
    if ps.timeouts > r.fail_timeouts || ps.probe_lost(now, r.probe_timeout) || now < ps.failed_until {
        level = Level::Failed;
    }
    PathView { level, measured, rtt_us, ecn }
}

impl Rerouter {
    pub fn new(rules: Rules, facts: &FabricFacts, host: HostId) -> Rerouter {
        Rerouter {
            rules,
            sense: PathTable::new(rules.sensing, facts, host),
            flows: FlowTable::exact(Timeout::Over(rules.flowlet_timeout), Clock::Timestamp),
            views: Vec::new(),
        }
    }

    /// What the host knows about its paths.
    pub fn sense(&self) -> &PathTable {
        &self.sense
    }

    /// How `judge` sees path `path` towards `dst_leaf` at `now`.
    pub fn view<J: PathJudge>(&self, judge: &J, dst_leaf: LeafId, path: u16, now: Time) -> PathView {
        judged(judge, &self.rules, self.sense.get(dst_leaf, path), now)
    }

    /// The path a flow of this host is pinned to, if it has one.
    pub fn flow_path(&self, flow: FlowId) -> Option<u16> {
        self.flows.get(flow.key()).map(|e| e.port)
    }

    /// The path for a data packet of `flow` among `paths` (module doc, "Rerouting"), counted as sent on it.
    pub fn choose_path<J: PathJudge>(&mut self, judge: &J, cx: &mut EdgeCx, flow: &FlowView, pkt: &PacketMut, paths: &[u16]) -> Routed {
        let now = cx.now;
        let dl = cx.facts.leaf_of_host(flow.dst);
        self.sense.note_sending(dl, now);
        let key = flow.flow.key();
        let routed = match self.flows.get(key).copied() {
            None => {
                // With every path failed, a new flow still has to go somewhere: a random one.
                let (placed, fallback) = self.place(judge, cx.rng, dl, paths, now);
                let p = placed.unwrap_or_else(|| paths[cx.rng.below(paths.len())]);
                *self.flows.record(key, p, now) = FlowState { dst_leaf: dl, ..FlowState::default() };
                Routed { path: p, why: Why::New, moved: false, fallback }
            }
            Some(entry) => self.route_placed(judge, cx, flow, pkt, paths, dl, entry),
        };
        self.sense.count_sent(dl, routed.path, now, pkt.wire_bytes);
        routed
    }

    /// [`Rerouter::choose_path`] for a flow that has a path.
    #[allow(clippy::too_many_arguments)]
    fn route_placed<J: PathJudge>(&mut self, judge: &J, cx: &mut EdgeCx, flow: &FlowView, pkt: &PacketMut, paths: &[u16], dl: LeafId, entry: Entry<FlowState, u16>) -> Routed {
        let now = cx.now;
        let (cur, mut e) = (entry.port, entry.data);
        let on_cur = paths.contains(&cur);
        if flow.retransmission && retx_charged(&mut e.charge_from, pkt.seq, flow.sent) && on_cur {
            self.count_retx(judge, dl, cur, now);
        }
        let here = if on_cur { Some(self.view(judge, dl, cur, now)) } else { None };
        let (next, why, fallback) = match here {
            Some(here) if !e.timed_out && here.level != Level::Failed => {
                let r = &self.rules;
                let idle = r.flowlet_timeout > Time::ZERO && !self.flows.is_live(&entry, now);
                let due = e.last_attempt.is_none_or(|t| now.saturating_sub(t) >= r.reroute_interval);
                let congested = judge.moves_off(here.level);
                if r.rerouting && (congested || idle) && due && r.gates_open(flow) {
                    e.last_attempt = Some(now);
                    let p = if r.goes_ahead(cx.rng) { self.notably_better(judge, cx.rng, dl, cur, &here, paths, now).unwrap_or(cur) } else { cur };
                    (p, if congested { Why::Congested } else { Why::Idle }, false)
                } else {
                    (cur, Why::Kept, false)
                }
            }
            _ => {
                // Timed out, or the path failed or is gone: placed again, no gates. With every path failed,
                // moving gains nothing: stay (unless the path is gone).
                e.timed_out = false;
                let (placed, fallback) = self.place(judge, cx.rng, dl, paths, now);
                let p = match placed {
                    Some(p) => p,
                    None if on_cur => cur,
                    None => paths[cx.rng.below(paths.len())],
                };
                (p, Why::Replaced, fallback)
            }
        };
        if next != cur {
            e.charge_from = e.charge_from.max(flow.sent);
        }
        *self.flows.record(flow.flow.key(), next, now) = e;
        Routed { path: next, why, moved: next != cur, fallback }
    }

    /// Charges a retransmission to a path, and fails the path if its retransmission fraction is excessive
    /// and the judge does not call its losses congestion.
    fn count_retx<J: PathJudge>(&mut self, judge: &J, dst_leaf: LeafId, path: u16, now: Time) {
        let r = self.rules;
        if self.sense.count_retx(dst_leaf, path, now).retx_excessive(r.fail_retx_fraction) && !judge.losses_are_congestion(&self.view(judge, dst_leaf, path, now)) {
            self.sense.get_mut(dst_leaf, path).failed_until = now + r.fail_hold;
        }
    }

    /// Fills `views` with the views of `paths` (each judged once per decision).
    fn judge_all<J: PathJudge>(&mut self, judge: &J, dst_leaf: LeafId, paths: &[u16], now: Time) {
        self.views.clear();
        for &p in paths {
            let v = judged(judge, &self.rules, self.sense.get(dst_leaf, p), now);
            self.views.push(v);
        }
    }

    /// Among `paths` whose view passes `ok`, the least loaded (random tie-break); `views` must be theirs. The
    /// load (an exponential decay) is worked out only for the paths that pass.
    fn least_loaded(&self, rng: &mut Rng, dst_leaf: LeafId, paths: &[u16], now: Time, ok: impl Fn(u16, &PathView) -> bool) -> Option<u16> {
        let dre_tau = self.rules.sensing.dre_tau;
        let candidates = paths.iter().zip(&self.views).filter(|(&p, v)| ok(p, v));
        pick_least_loaded(rng, candidates.map(|(&p, _)| (p, self.sense.get(dst_leaf, p).load(now, dre_tau))))
    }

    /// The least loaded path of the first placement level that has one, else the fallback among the paths
    /// that have not failed (`true` when it was taken); `None` when every path has failed.
    fn place<J: PathJudge>(&mut self, judge: &J, rng: &mut Rng, dst_leaf: LeafId, paths: &[u16], now: Time) -> (Option<u16>, bool) {
        self.judge_all(judge, dst_leaf, paths, now);
        for &level in J::PLACE_ON {
            if let Some(p) = self.least_loaded(rng, dst_leaf, paths, now, |_, v| v.level == level) {
                return (Some(p), false);
            }
        }
        let target = match judge.fallback() {
            Fallback::BestLevel => self.views.iter().map(|v| v.level).filter(|&l| l != Level::Failed).min(),
            Fallback::Uniform => None,
        };
        let mut pick = None;
        let mut n = 0usize;
        for (&p, v) in paths.iter().zip(&self.views) {
            if v.level != Level::Failed && target.is_none_or(|t| v.level == t) {
                n += 1;
                if rng.below(n) == 0 {
                    pick = Some(p);
                }
            }
        }
        (pick, pick.is_some())
    }

    /// A path of the placement levels, in turn, that the judge calls notably better than `cur` (seen as
    /// `here`), least loaded first; `None` if there is none.
    #[allow(clippy::too_many_arguments)]
    fn notably_better<J: PathJudge>(&mut self, judge: &J, rng: &mut Rng, dst_leaf: LeafId, cur: u16, here: &PathView, paths: &[u16], now: Time) -> Option<u16> {
        self.judge_all(judge, dst_leaf, paths, now);
        for &level in J::PLACE_ON {
            if let Some(p) = self.least_loaded(rng, dst_leaf, paths, now, |p, v| v.level == level && p != cur && judge.notably_better(here, v)) {
                return Some(p);
            }
        }
        None
    }

    /// An ACK of one of the host's flows: a sample of the path it reports on; a flow whose every byte is
    /// acknowledged is forgotten.
    pub fn on_ack(&mut self, cx: &EdgeCx, flow: &FlowView, ack: &Packet) {
        self.sense.sample_answer(cx.now, cx.facts, ack);
        if flow.acked >= flow.size {
            self.flows.remove(flow.flow.key());
        }
    }

    /// A retransmission timeout of `flow`: it is placed again at its next packet, and its path counts a
    /// timeout.
    pub fn on_timeout(&mut self, flow: &FlowView) {
        if let Some(e) = self.flows.get_mut(flow.flow.key()) {
            e.data.timed_out = true;
            self.sense.count_timeout(e.data.dst_leaf, e.port);
        }
    }

    /// The path of a new ACK leg towards `dst_leaf` ([`super::ackpath`]): where a new flow to that leaf would
    /// be placed now, avoiding the path of a leg whose ACKs were lost if another is left (a random one when
    /// every path has failed). A leg whose ACKs were lost counts a timeout against its path, as a flow's
    /// retransmission timeout does: it is this host's own packets that the path lost. ACKs are not counted in
    /// the paths' sending rates (which rank the data's paths), nor do they put a leaf in the probing scope.
    pub fn place_ack<J: PathJudge>(&mut self, judge: &J, rng: &mut Rng, dst_leaf: LeafId, paths: &[u16], now: Time, start: LegStart) -> u16 {
        if let LegStart::Lost { on } = start {
            if paths.contains(&on) {
                self.sense.count_timeout(dst_leaf, on);
            }
        }
        let others: Vec<u16>;
        let candidates = match start.avoid() {
            Some(on) if paths.len() > 1 && paths.contains(&on) => {
                others = paths.iter().copied().filter(|&p| p != on).collect();
                &others[..]
            }
            _ => paths,
        };
        match self.place(judge, rng, dst_leaf, candidates, now).0 {
            Some(p) => p,
            None => candidates[rng.below(candidates.len())],
        }
    }

    /// A probe reply: a sample of the path it reports on.
    pub fn on_probe_reply(&mut self, cx: &EdgeCx, reply: &Packet) {
        self.sense.sample_answer(cx.now, cx.facts, reply);
    }

    /// One probe round, the best known path of a destination ranked by the judge's (level, delay).
    pub fn probe_round<J: PathJudge>(&mut self, judge: &J, cx: &mut EdgeCx) {
        let now = cx.now;
        let rules = &self.rules;
        self.sense.probe_round(cx, |ps| {
            let v = judged(judge, rules, ps, now);
            (v.level, v.rtt_us)
        });
    }

    /// Memory held beyond the struct itself.
    pub fn heap_bytes(&self) -> usize {
        self.sense.heap_bytes() + self.flows.state_bytes() + self.views.capacity() * std::mem::size_of::<PathView>()
    }
}
