//! Steady-state measurement: a warm-up, a measurement window, and arrivals that go on after it.
//!
//! A run that starts from an empty fabric and stops its arrivals after a few hundred flows never carries
//! its nominal load on a heavy-tailed workload: the rare giant flows that carry most of the bytes last
//! longer than the arrivals, so most of their bytes are sent after the last arrival, into a draining
//! fabric (docs/assumptions.md, *Steady-state measurement*, has the numbers). The standard remedy, which
//! `run.warmup_us` turns on:
//!
//! ```text
//!  time ─────────────────────────────────────────────────────────────────────────────────────────►
//!  0            warmup_us = opens                 closes                closes + cooldown_us
//!  │ warm-up: arrivals,  │ window: the source's `flows` │ cool-down: arrivals │ (no more arrivals;
//!  │ not measured        │ (or `duration_us`) arrivals, │ go on, not measured │  the run ends when
//!  │                     │ measured                     │                     │  every measured flow has)
//! ```
//!
//! * **Which flows are measured** is decided by arrival time when the traffic is drawn ([`Arrivals`]): a
//!   poisson source's arrivals before the warm-up ends are not; its next `flows` arrivals (or those of the
//!   next `duration_us`) are, and they define its window, from the end of the warm-up to its last measured
//!   arrival (or to the end of `duration_us`); the arrivals of the next `cooldown_us` are not. A flow of
//!   any other pattern is measured when it starts after the warm-up. The draws are those of a run without
//!   a window, in the same order: the window only labels them and moves where they stop.
//! * **The run ends** when every measured flow has ended (or at `run.horizon_us`): flows still running then
//!   are unfinished and unmeasured, and flows drawn for the cool-down that had not arrived are left out of
//!   the tables. Arrivals are drawn up front (the flow table and the network's per-flow counters are sized
//!   once), so the cool-down is a length, not "until the last measured flow ends"; a run whose measured
//!   flows outlast the cool-down's arrivals says by how much (`window_drain_us`).
//! * **The load carried** in the window is measured exactly (`metrics::Window`, which also
//!   tracks the measured flows for the stop condition): the run reads the in-order bytes
//!   delivered by each source's flows at the moment its window opens and at the moment it closes (the state
//!   before the first event at or after that time is the state at that time), and divides their difference
//!   by the bytes the source's nominal load offers over the window. Summed over the sources with a window,
//!   that is `window_carried_load_ratio`.

use super::SourceInfo;
use crate::config::{RunConfig, SourceConfig};
use crate::units::Time;

/// The cool-down when the config does not give one, in warm-ups. A warm-up long enough for the flows
/// that carry most of the bytes to be in flight is shorter than the longest flows (a measured data-mining
/// flow of 1 GB lasted 4 s after a 3 s warm-up on LBT's fabric: docs/assumptions.md), and a cool-down
/// longer than needed costs no event, since the run stops with its last measured flow: only the memory of
/// the flows drawn for it (about 1 KB each).
pub const COOLDOWN_PER_WARMUP: f64 = 2.0;

/// A run's measurement plan: when the warm-up ends, and how long arrivals go on after a window closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub warmup: Time,
    pub cooldown: Time,
}

impl Plan {
    /// The plan of a run config; `None` without `warmup_us` (no window: every flow measured), unless the
    /// run has a stationary start, whose warm-up is then [`super::stationary::DEFAULT_WARMUP_US`].
    pub fn of(run: &RunConfig) -> Option<Plan> {
        let warmup = run.warmup_us.or((!run.start.is_empty()).then_some(super::stationary::DEFAULT_WARMUP_US))?;
        let cooldown = run.cooldown_us.unwrap_or(COOLDOWN_PER_WARMUP * warmup);
        Some(Plan { warmup: Time::from_us_f64(warmup), cooldown: Time::from_us_f64(cooldown) })
    }

    /// The arrival rule of a poisson source that starts at `start`, bounded by `flows` arrivals and/or
    /// `duration_us` of arrivals in its window.
    pub fn source_window(&self, start: Time, flows: Option<u64>, duration_us: Option<f64>) -> Arrivals {
        let opens = self.warmup.max(start);
        Arrivals {
            opens,
            closes_by: duration_us.map(|d| opens + Time::from_us_f64(d)),
            max_measured: flows.unwrap_or(u64::MAX),
            measured: 0,
            closed: None,
            cooldown: self.cooldown,
        }
    }
}

/// What a poisson source is expected to draw in a run with `plan`, for the check's memory estimate:
/// `(flows, when its last arrival comes in µs)`, given `measured`, the flows expected in its window (its
/// `flows`, or its arrivals in `duration_us` if fewer). It draws its window's flows, plus its arrivals
/// during the warm-up (from its start) and the cool-down.
pub fn expected_arrivals(plan: &Plan, s: &SourceConfig, info: &SourceInfo, measured: f64) -> (f64, f64) {
    let per_us = if info.mean_size > 0.0 { info.offered_bps / (8.0 * info.mean_size) / 1e6 } else { 0.0 };
    let opens_us = plan.warmup.as_us().max(s.start_us);
    let window_us = if per_us > 0.0 { measured / per_us } else { 0.0 };
    let window_us = s.duration_us.map_or(window_us, |d| window_us.min(d));
    let cooldown_us = plan.cooldown.as_us();
    let flows = measured + per_us * (opens_us - s.start_us + cooldown_us);
    (flows, opens_us + window_us + cooldown_us)
}

/// A poisson source's measurement window: from the end of the warm-up (or the source's start, if later)
/// to its last measured arrival, or to the end of its `duration_us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceWindow {
    pub opens: Time,
    pub closes: Time,
    /// Flows that arrived in it.
    pub measured: u64,
}

/// Labels a poisson source's arrivals, in order, as warm-up, measured or cool-down, and says where they
/// stop (see the module doc).
#[derive(Clone, Debug)]
pub struct Arrivals {
    opens: Time,
    /// The end of `duration_us`, when it bounds the window.
    closes_by: Option<Time>,
    max_measured: u64,
    measured: u64,
    /// When the window closed, once it has.
    closed: Option<Time>,
    cooldown: Time,
}

impl Arrivals {
    /// The arrival at `t` (arrivals come in time order): `Some(true)` measured, `Some(false)` drawn but
    /// not measured (warm-up or cool-down), `None` past the cool-down: the source makes no more flows.
    pub fn admit(&mut self, t: Time) -> Option<bool> {
        if t < self.opens {
            return Some(false);
        }
        if self.closed.is_none() {
            if self.closes_by.is_some_and(|end| t >= end) {
                self.closed = self.closes_by;
            } else {
                self.measured += 1;
                if self.measured >= self.max_measured {
                    self.closed = Some(t);
                }
                return Some(true);
            }
        }
        let closed = self.closed.expect("the window closed above");
        (t < closed + self.cooldown).then_some(false)
    }

    /// The window, once the arrivals have stopped.
    pub fn window(&self) -> SourceWindow {
        SourceWindow { opens: self.opens, closes: self.closed.unwrap_or(self.opens), measured: self.measured }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(t: u64) -> Time {
        Time::from_us(t)
    }

    /// Labels arrivals at the given times until the rule stops them.
    fn labels(a: &mut Arrivals, times: &[u64]) -> Vec<Option<bool>> {
        times.iter().map(|&t| a.admit(us(t))).collect()
    }

    #[test]
    fn arrivals_are_warm_up_then_measured_then_cool_down() {
        let plan = Plan { warmup: us(100), cooldown: us(50) };
        let mut a = plan.source_window(Time::ZERO, Some(3), None);
        let got = labels(&mut a, &[10, 99, 100, 120, 130, 140, 179, 180]);
        assert_eq!(got, [Some(false), Some(false), Some(true), Some(true), Some(true), Some(false), Some(false), None]);
        assert_eq!(a.window(), SourceWindow { opens: us(100), closes: us(130), measured: 3 });
    }

    #[test]
    fn a_window_bounded_by_time_closes_at_its_end() {
        let plan = Plan { warmup: us(100), cooldown: us(0) };
        let mut a = plan.source_window(us(150), None, Some(20.0));
        // The source starts after the warm-up: its window opens with it.
        assert_eq!(labels(&mut a, &[151, 169, 170]), [Some(true), Some(true), None]);
        assert_eq!(a.window(), SourceWindow { opens: us(150), closes: us(170), measured: 2 });
        // With a count too, whichever comes first closes it.
        let mut a = plan.source_window(Time::ZERO, Some(1), Some(20.0));
        assert_eq!(labels(&mut a, &[105, 110]), [Some(true), None]);
        assert_eq!(a.window().closes, us(105));
    }

    #[test]
    fn no_warm_up_and_no_cool_down_measures_what_a_run_without_a_window_makes() {
        let plan = Plan::of(&RunConfig { warmup_us: Some(0.0), cooldown_us: None, ..RunConfig::default() }).unwrap();
        assert_eq!(plan, Plan { warmup: Time::ZERO, cooldown: Time::ZERO });
        let mut a = plan.source_window(Time::ZERO, Some(2), None);
        assert_eq!(labels(&mut a, &[1, 2, 3]), [Some(true), Some(true), None]);
        assert_eq!(Plan::of(&RunConfig::default()), None);
        // The cool-down defaults to twice the warm-up.
        let plan = Plan::of(&RunConfig { warmup_us: Some(7.0), ..RunConfig::default() }).unwrap();
        assert_eq!(plan.cooldown, us(14));
    }
}
