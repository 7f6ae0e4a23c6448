//! Units as types: a time is a [`Time`] (integer picoseconds), a link speed a [`Rate`] (bits per second), a size
//! a [`Bytes`]. Arithmetic that mixes them goes through named methods such as [`Rate::tx_time`], so a unit
//! mistake is a compile error rather than a silent factor of 8 or 10^6.
//!
//! **The clock's range.** A `Time` is a `u64` of picoseconds: 2^64 − 1 ps, about 213.5 days ([`Time::MAX`]).
//! Adding times saturates at `Time::MAX` rather than wrapping: the addition sits on the hottest paths (every
//! event's time is `now + delay`), where a saturating add costs what a wrapping one does and a checked one
//! would add a branch. Saturation must never reach a result, which two guards ensure. Before a run,
//! [`Config::check`](crate::config::Config::check) refuses any time the config makes the run compute
//! beyond the clock (a source's end, its last arrival or round, a deadline, a duration parameter) and a run
//! whose estimated end without a horizon is beyond a tenth of it. During a run, a time that saturated is
//! `Time::MAX` exactly, which no real event reaches: the event loop never runs an event at `Time::MAX`, and
//! stops the run with an error when one is all that is left ([`crate::Simulation`]). Since a saturated time
//! is only ever later than the true one, and every event that does run comes before `Time::MAX`, no event
//! runs at a saturated time and no comparison made at a real instant changes. Where time arithmetic is not
//! hot and its operands come from the config, it is checked ([`Time::try_from_us_f64`], [`Time::checked_add`]).

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Simulated time in integer picoseconds. `u64` covers 213 days, far beyond any run; see the module doc
/// for what keeps a run within it.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    /// The clock's last instant, which a saturated time equals and no event runs at.
    pub const MAX: Time = Time(u64::MAX);
    /// The clock's range in microseconds (2^64 ps; a time in µs must be below it to fit).
    pub const RANGE_US: f64 = 18_446_744_073_709_551_616.0 / 1e6;
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * 1_000_000)
    }
    /// Converts fractional microseconds (as written in scenarios), rounding to the nearest picosecond. A
    /// value beyond the clock saturates to [`Time::MAX`]; the config's check keeps every time it converts
    /// within the clock ([`Time::try_from_us_f64`]).
    pub fn from_us_f64(us: f64) -> Time {
        Time((us * 1e6).round().max(0.0) as u64)
    }
    /// [`Time::from_us_f64`] when `us` is a time the clock holds (finite, not negative, below
    /// [`Time::RANGE_US`] once rounded to picoseconds), else `None`.
    pub fn try_from_us_f64(us: f64) -> Option<Time> {
        let ps = (us * 1e6).round();
        (ps >= 0.0 && ps < 18_446_744_073_709_551_616.0).then(|| Time(ps as u64))
    }
    /// `self + rhs`, or `None` beyond the clock (where `+` saturates).
    pub fn checked_add(self, rhs: Time) -> Option<Time> {
        self.0.checked_add(rhs.0).map(Time)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub fn as_us(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs(self) -> f64 {
        self.0 as f64 / 1e12
    }
    pub fn saturating_sub(self, rhs: Time) -> Time {
        Time(self.0.saturating_sub(rhs.0))
    }
    pub fn mul(self, k: u64) -> Time {
        Time(self.0.saturating_mul(k))
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}
impl Sub for Time {
    type Output = Time;
    /// Panics when `rhs` is later than `self`, in release builds too: a negative duration is an engine bug,
    /// and wrapping to 213 days would hide it. Use [`Time::saturating_sub`] where "not before" is meant.
    fn sub(self, rhs: Time) -> Time {
        Time(self.0.checked_sub(rhs.0).expect("Time subtraction went below zero"))
    }
}
impl SubAssign for Time {
    fn sub_assign(&mut self, rhs: Time) {
        *self = *self - rhs;
    }
}
impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.as_us())
    }
}

/// A size in bytes. KB and MB are decimal (1000, 1,000,000) throughout dclb.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const fn get(self) -> u64 {
        self.0
    }
    pub fn bits(self) -> u128 {
        self.0 as u128 * 8
    }
}

/// A link rate in bits per second.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Rate(pub u64);

impl Rate {
    pub fn from_gbps(gbps: f64) -> Rate {
        Rate((gbps * 1e9).round() as u64)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    pub fn as_gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Serialization time of `bytes` on a link of this rate, rounded up to the next picosecond so that a
    /// link never carries more than its rate. A time beyond the clock saturates at [`Time::MAX`] (a flow's
    /// ideal time at 1 bit/s can be; a cast would wrap it): it then reads as "no such time".
    pub fn tx_time(self, bytes: Bytes) -> Time {
        let num = bytes.bits() * 1_000_000_000_000u128;
        let r = self.0 as u128;
        Time(num.div_ceil(r).min(u64::MAX as u128) as u64)
    }
    /// Bytes this rate carries in `t` (rounded down).
    pub fn bytes_in(self, t: Time) -> f64 {
        self.0 as f64 * t.as_secs() / 8.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_of_a_full_packet_at_10g_is_1_2_us() {
        assert_eq!(Rate::from_gbps(10.0).tx_time(Bytes(1500)), Time::from_ns(1200));
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bps = 8/3 s, which is not a whole number of picoseconds.
        assert_eq!(Rate(3).tx_time(Bytes(1)), Time(2_666_666_666_667));
    }

    #[test]
    fn times_beyond_the_clock_are_found_where_they_are_converted() {
        assert_eq!(Time::try_from_us_f64(1.5), Some(Time(1_500_000)));
        assert_eq!(Time::try_from_us_f64(1e13), Some(Time(10_000_000_000_000_000_000)));
        assert!(Time::try_from_us_f64(18_446_744_073_709.0).is_some());
        for beyond in [18_446_744_073_709.56, 1e14, f64::INFINITY, f64::NAN, -1.0] {
            assert_eq!(Time::try_from_us_f64(beyond), None, "{beyond}");
        }
        assert_eq!(Time::MAX.checked_add(Time(1)), None);
        assert_eq!(Time(1).checked_add(Time(2)), Some(Time(3)));
        // `+` saturates: the guards of the module doc keep that out of results.
        assert_eq!(Time(u64::MAX - 1) + Time(5), Time::MAX);
    }

    #[test]
    fn a_serialisation_time_beyond_the_clock_saturates_rather_than_wraps() {
        // 10^18 bytes at 10 Gbps is 8 x 10^20 ps; `as u64` made it 6.2 x 10^18 (wrapped).
        assert_eq!(Rate::from_gbps(10.0).tx_time(Bytes(1_000_000_000_000_000_000)), Time::MAX);
        assert_eq!(Rate(1).tx_time(Bytes(65_040)), Time(520_320_000_000_000_000));
    }

    #[test]
    fn fractional_microseconds_round_to_picoseconds() {
        assert_eq!(Time::from_us_f64(1.5), Time(1_500_000));
        assert_eq!(Time::from_us_f64(0.0000004), Time(0));
    }
}
