//! The discounting rate estimator (DRE): a service a port offers to its switch's balancer.
//!
//! A DRE is a byte register `X` that grows by the wire size of every packet the port finishes sending and
//! shrinks by the factor `1 − α` at every multiple of a period `T` (CONGA's rate estimate: a steady rate `R`
//! holds `X` near `R·T/α`). The decay at `k·T` comes after the departures of that same instant, as a timer
//! event after the departures it ties with would (`sched.rs`: departures run first at an instant).
//!
//! ```text
//!  admission (FIFO: departure `at` known) ─► ahead: decays before `at`, + bytes   (what the packet's own
//!            │                                                                    departure will read)
//!            └─► pending (at, bytes) ─► lagging register, brought up to `now` when read: each departure
//!                                       up to `now` after the decays before it, then the decays before `now`
//! ```
//!
//! A balancer asks for a DRE on some of its switch's ports when it is installed
//! ([`SwitchBalancer::rate_estimator`](crate::lb::SwitchBalancer::rate_estimator)) and reads it through
//! [`PortsView::dre`](crate::lb::PortsView::dre) (the register now) and
//! [`PortsView::dre_at_departure`](crate::lb::PortsView::dre_at_departure) (the register just after the
//! departure of the packet the port admitted last, for stamping that packet in `on_enqueue`).
//!
//! **Why at admission.** A FIFO port knows when a packet will finish sending the moment it admits it (the
//! packet ahead's departure, or now, plus its serialisation), so the port counts the packet then, on a lazily
//! drained port and an event-driven one alike, and no departure event or balancer hook is needed. Every
//! reading applies the same additions and multiplications, in the same order, as a register updated at each
//! departure and decayed by a timer would, so the results are bit-identical to that (tested in `port.rs`).
//! The register is brought up to date at each admission, so the departures waiting are never more than the
//! port's queue.

use crate::units::{Rate, Time};
use std::collections::VecDeque;

/// A DRE register: bytes sent, discounted geometrically over time.
#[derive(Copy, Clone, Debug, Default)]
pub struct Dre {
    x: f64,
}

impl Dre {
    /// A packet of `bytes` (wire size) finished transmission on the port.
    #[inline]
    pub fn on_send(&mut self, bytes: u32) {
        self.x += bytes as f64;
    }
    /// The periodic discount, every `T`.
    #[inline]
    pub fn decay(&mut self, alpha: f64) {
        self.x *= 1.0 - alpha;
    }
    /// The register `X` in bytes.
    pub fn bytes(&self) -> f64 {
        self.x
    }
    /// The register quantised to `bits` against the port's capacity over `tau`:
    /// `min(2^bits − 1, floor(8·X / (rate·tau) · 2^bits))`.
    pub fn metric(&self, rate: Rate, tau: Time, bits: u32) -> u8 {
        let levels = (1u32 << bits) as f64;
        let max = (1u32 << bits) - 1;
        let capacity_bits = rate.bps() as f64 * tau.as_secs();
        if capacity_bits <= 0.0 {
            return max as u8;
        }
        // `m >= 0`, so truncation is its floor (`f64::floor` is a library call on the baseline x86-64
        // target); the cast saturates.
        let m = 8.0 * self.x / capacity_bits * levels;
        (m.max(0.0) as u64).min(max as u64) as u8
    }

    /// Applies the decays of the register up to the `to`-th (it has had `*done`): the multiplications a
    /// timer would have made, in order (none once the register is 0, which they leave at 0).
    #[inline]
    fn decay_to(&mut self, done: &mut u64, to: u64, alpha: f64) {
        while *done < to {
            if self.x == 0.0 {
                *done = to;
                break;
            }
            self.decay(alpha);
            *done += 1;
        }
    }
}

/// How a DRE runs: `X ← X·(1 − alpha)` at every multiple of `period`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct DreConfig {
    pub period: Time,
    pub alpha: f64,
}

/// One port's DRE (see the module doc).
#[derive(Clone, Debug)]
pub struct RateEstimator {
    cfg: DreConfig,
    /// The register as of the departures counted into it and `decays` decays (lags behind now).
    register: Dre,
    decays: u64,
    /// The register just after the departure of the packet admitted last, and its decays.
    ahead: Dre,
    ahead_decays: u64,
    /// Admitted packets the lagging register has not counted yet: (departure, wire bytes), in order.
    pending: VecDeque<(Time, u32)>,
    /// Departure of the packet admitted last.
    last_departure: Time,
}

impl RateEstimator {
    pub fn new(cfg: DreConfig) -> RateEstimator {
        assert!(cfg.period > Time::ZERO, "a DRE's period must be positive");
        RateEstimator { cfg, register: Dre::default(), decays: 0, ahead: Dre::default(), ahead_decays: 0, pending: VecDeque::new(), last_departure: Time::ZERO }
    }

    pub fn config(&self) -> DreConfig {
        self.cfg
    }

    /// The decays that come before a departure or a reading at `t`: one at every multiple of the period
    /// before `t` (the decay at `t` itself comes after everything else at `t`).
    #[inline]
    fn decays_before(&self, t: Time) -> u64 {
        t.0.saturating_sub(1) / self.cfg.period.0
    }

    /// Departure of the packet admitted last (a FIFO port's next packet leaves after it).
    #[inline]
    pub fn last_departure(&self) -> Time {
        self.last_departure
    }

    /// Counts a packet of `wire` bytes admitted at `now` that will finish sending at `at` (no earlier than
    /// the packet admitted before it: the port is FIFO).
    #[inline]
    pub fn count(&mut self, now: Time, at: Time, wire: u32) {
        debug_assert!(at >= self.last_departure && at >= now, "a DRE counts the departures of a FIFO port in order");
        // Count what has left by now, so that the departures waiting stay as few as the port's queue.
        let (mut x, mut done) = (self.register, self.decays);
        let n = self.catch_up(&mut x, &mut done, now);
        self.pending.drain(..n);
        (self.register, self.decays) = (x, done);
        let to = self.decays_before(at);
        self.ahead.decay_to(&mut self.ahead_decays, to, self.cfg.alpha);
        self.ahead.on_send(wire);
        self.pending.push_back((at, wire));
        self.last_departure = at;
    }

    /// Brings register `x` (with `*done` decays) to `now`: the pending departures up to `now` (a departure at
    /// `now` has happened), each after the decays before it, then the decays before `now`. Returns how many
    /// departures it counted.
    #[inline]
    fn catch_up(&self, x: &mut Dre, done: &mut u64, now: Time) -> usize {
        let alpha = self.cfg.alpha;
        let mut n = 0;
        for &(at, bytes) in &self.pending {
            if at > now {
                break;
            }
            x.decay_to(done, self.decays_before(at), alpha);
            x.on_send(bytes);
            n += 1;
        }
        x.decay_to(done, self.decays_before(now), alpha);
        n
    }

    /// The register at `now`: every departure up to `now` counted, every decay before `now` applied.
    #[inline]
    pub fn at(&self, now: Time) -> Dre {
        let (mut x, mut done) = (self.register, self.decays);
        self.catch_up(&mut x, &mut done, now);
        x
    }

    /// The register just after the departure of the packet admitted last (with the decays before it).
    #[inline]
    pub fn at_last_departure(&self) -> Dre {
        self.ahead
    }

    /// Bytes this estimator holds beyond its own size (the departures waiting).
    pub fn heap_bytes(&self) -> usize {
        self.pending.capacity() * std::mem::size_of::<(Time, u32)>()
    }
}
