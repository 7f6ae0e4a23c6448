//! Host-side path sensing shared by the edge schemes that judge paths from their own traffic (Hermes, MDTLB).
//!
//! A sending host keeps one [`PathState`] per (destination leaf, uplink). It is filled only from what comes
//! back to the host in packets (ACKs and probe replies: the echoed path tag, the echoed send timestamp and
//! the ECN echo) and from what the host itself sends (bytes per path, retransmissions, timeouts). The rules
//! that *judge* a path from these estimates belong to each scheme; this module only keeps the estimates:
//!
//! ```text
//!  ACK / probe reply ──► sample():     delay EWMA (gain g), ECN fraction over ~T1, clears timeouts/probe
//!  data packet sent  ──► count_sent(): local sending rate r_p (DRE, τ), packets sent over the retx window
//!  retransmission    ──► count_retx(): retransmissions over the retx window
//! ```

use crate::packet::Packet;
use crate::units::Time;

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
