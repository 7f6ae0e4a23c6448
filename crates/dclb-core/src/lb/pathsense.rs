//! Host-side path sensing shared by the edge schemes that judge paths from their own traffic (Hermes, MDTLB).
//!
//! MDTLB describes only what it changes in Hermes; how a host learns about its paths is Hermes' in both, so it
//! lives here once. What stays in each scheme is what it *concludes* from the estimates: the path types or
//! levels, which path a flow takes, and when a path counts as failed.
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
//! host probes two distinct random paths plus the best path it knows (the scheme ranks them), or every path
//! when there are at most three. A leaf is in scope when the host sent data towards it within the last 10
//! probe intervals (`ProbeScope::Active`), or always (`All`). The probe goes to the host with the prober's
//! index on the destination leaf. The send time of a path's oldest unanswered probe is kept, so the scheme
//! can fail a path whose probe never came back; any answer from the path clears it.
//!
//! **The delay of an answer** is the round trip (now minus the echoed send time) or, with
//! `DelaySignal::OneWay`, the data's one-way delay (the answer's own send time minus the echoed one; clocks
//! are exact in a simulator).

use super::params::param_choice;
use super::{EdgeCx, FlowView, ProbeRequest};
use crate::fabric::FabricFacts;
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
    host: u32,
    my_leaf: u32,
    uplinks: u32,
    hosts_per_leaf: u32,
    /// `paths[dst_leaf * uplinks + uplink]`.
    paths: Vec<PathState>,
    /// Uplinks that reach each destination leaf (static routing facts), for probing.
    usable: Vec<Vec<u16>>,
    /// Last time this host sent data towards each leaf, `Time::MAX` if never.
    last_active: Vec<Time>,
}

impl PathTable {
    pub fn new(cfg: Sensing, facts: &FabricFacts, host: u32) -> PathTable {
        let my_leaf = facts.leaf_of_host(host);
        let usable = (0..facts.leaves)
            .map(|d| if d == my_leaf { Vec::new() } else { (0..facts.uplinks).filter(|&u| facts.path_delay(my_leaf, u, d) != Time::MAX).map(|u| u as u16).collect() })
            .collect();
        PathTable {
            cfg,
            host,
            my_leaf,
            uplinks: facts.uplinks,
            hosts_per_leaf: facts.hosts_per_leaf,
            paths: vec![PathState::default(); (facts.leaves * facts.uplinks) as usize],
            usable,
            last_active: vec![Time::MAX; facts.leaves as usize],
        }
    }

    #[inline]
    fn idx(&self, dst_leaf: u32, path: u16) -> usize {
        (dst_leaf * self.uplinks + path as u32) as usize
    }

    /// The estimates of path `path` towards `dst_leaf`.
    #[inline]
    pub fn get(&self, dst_leaf: u32, path: u16) -> &PathState {
        &self.paths[self.idx(dst_leaf, path)]
    }

    #[inline]
    pub fn get_mut(&mut self, dst_leaf: u32, path: u16) -> &mut PathState {
        let i = self.idx(dst_leaf, path);
        &mut self.paths[i]
    }

    /// Number of leaves (destination leaf indices run below it).
    pub fn leaves(&self) -> u32 {
        self.usable.len() as u32
    }

    /// The uplinks that reach `dst_leaf` (none for the host's own leaf).
    pub fn usable(&self, dst_leaf: u32) -> &[u16] {
        &self.usable[dst_leaf as usize]
    }

    /// Notes that the host sends data towards `dst_leaf` at `now` (the probing scope follows it).
    #[inline]
    pub fn note_sending(&mut self, dst_leaf: u32, now: Time) {
        self.last_active[dst_leaf as usize] = now;
    }

    /// Whether the host sent data towards `dst_leaf` within `horizon` before `now`.
    pub fn sent_within(&self, dst_leaf: u32, now: Time, horizon: Time) -> bool {
        let la = self.last_active[dst_leaf as usize];
        la != Time::MAX && now.saturating_sub(la) <= horizon
    }

    /// Samples the path an ACK or probe reply reports on (its echoed tag), from the leaf of its sender. An
    /// answer without a tag, or about no path of this host's, is ignored.
    pub fn sample_answer(&mut self, now: Time, facts: &FabricFacts, answer: &Packet) {
        let path = answer.lb.echo_path;
        let dst_leaf = facts.leaf_of_host(answer.src);
        if path == NO_PATH || path as u32 >= self.uplinks || dst_leaf == self.my_leaf || dst_leaf >= self.leaves() {
            return;
        }
        let delay = delay_of(self.cfg.delay_signal == DelaySignal::OneWay, now, answer);
        let c = self.cfg;
        self.get_mut(dst_leaf, path).sample(now, delay, answer.ecn.ece, c.rtt_gain, c.stale, c.ecn_window);
    }

    /// Counts a data packet of `bytes` sent on a path.
    #[inline]
    pub fn count_sent(&mut self, dst_leaf: u32, path: u16, now: Time, bytes: u32) {
        let c = self.cfg;
        self.get_mut(dst_leaf, path).count_sent(now, bytes, c.dre_tau, c.retx_window);
    }

    /// Charges a retransmission to a path and returns its estimates, for the scheme's failure rule.
    pub fn count_retx(&mut self, dst_leaf: u32, path: u16, now: Time) -> &PathState {
        let w = self.cfg.retx_window;
        let ps = self.get_mut(dst_leaf, path);
        ps.count_retx(now, w);
        ps
    }

    /// Counts a retransmission timeout of a flow on a path (cleared by the path's next answer).
    pub fn count_timeout(&mut self, dst_leaf: u32, path: u16) {
        self.get_mut(dst_leaf, path).timeouts += 1;
    }

    /// Whether `dst_leaf` is in the probing scope at `now`.
    pub fn in_probe_scope(&self, dst_leaf: u32, now: Time) -> bool {
        self.cfg.probe_scope == ProbeScope::All || self.sent_within(dst_leaf, now, self.cfg.probe_interval.mul(10))
    }

    /// One probe round (module doc). `rank` orders a destination's paths by the scheme's judgement, lowest
    /// best; the first in uplink order wins a tie. Random draws: two per leaf with more than three paths.
    pub fn probe_round<K: PartialOrd>(&mut self, cx: &mut EdgeCx, rank: impl Fn(&PathState) -> (K, f64)) {
        let now = cx.now;
        for d in 0..self.leaves() {
            let n = self.usable[d as usize].len();
            if n == 0 || !self.in_probe_scope(d, now) {
                continue;
            }
            if n <= 3 {
                for k in 0..n {
                    let p = self.usable[d as usize][k];
                    self.send_probe(cx, d, p);
                }
                continue;
            }
            let a = cx.rng.below(n);
            let mut b = cx.rng.below(n - 1);
            if b >= a {
                b += 1;
            }
            let usable = &self.usable[d as usize];
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

    fn send_probe(&mut self, cx: &mut EdgeCx, dst_leaf: u32, path: u16) {
        let ps = self.get_mut(dst_leaf, path);
        if ps.probe_pending == Time::MAX {
            ps.probe_pending = cx.now;
        }
        let dst = dst_leaf * self.hosts_per_leaf + self.host % self.hosts_per_leaf;
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
