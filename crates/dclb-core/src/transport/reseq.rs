//! Receiver resequencing buffer (the reorder buffer DRB and Presto assume), between the NIC and TCP.
//!
//! In-order data passes straight through. A segment that arrives beyond the next expected byte is held until
//! the gap before it fills. Retransmissions and duplicates (data at or below the next expected byte) pass at
//! once. The rule is dclb's, an outline of the Hermes authors' buffer ([LB] `tcp-resequence-buffer.cc`, which
//! also batches in-order data): deliver in-order data immediately, hold out-of-order data, and flush everything
//! held once `timeout` has passed *with no progress*.
//!
//! **Progress** means the next expected byte advanced: an arriving segment reached past it, with whatever held
//! data became contiguous. Nothing else counts: a segment filling a gap between two held segments, a duplicate
//! of data already passed, or another segment joining the held set leaves the buffer as stuck as before. The
//! hold clock starts when data is first held while nothing was held, and restarts on each progress that leaves
//! data held; when it reaches `timeout` the gap at the next expected byte is taken as a loss and everything
//! held is released in sequence order (TCP then sees the hole and the reordering).
//!
//! ```text
//!  next ─┐   held: [c] [e f]           t0   c arrives, held, clock starts: flush at t0 + timeout
//!        a b c d e f                   t1   a, b arrive: next passes c, progress, flush at t1 + timeout
//!                                      ...  no d until then: e, f released; a late d passes at once
//! ```
//!
//! So under sustained reordering (a fast path keeps delivering ahead of a slow one) held data is released by
//! the timer only when the slow path has stalled for a whole `timeout`, not every `timeout` since the first
//! segment was held.

use crate::units::Time;

#[derive(Clone, Debug, Default)]
pub struct Resequencer {
    /// Next byte expected at this layer.
    pub next: u64,
    /// Held packets as (seq, end, arena id), sorted by seq.
    held: Vec<(u64, u64, u32)>,
    /// When the held data must be released: `timeout` after the hold clock last (re)started.
    pub flush_at: Option<Time>,
}

impl Resequencer {
    /// Accepts a data packet; pushes the arena ids to hand to TCP now, in order, into `release`.
    /// Returns true if the packet was held.
    pub fn on_packet(&mut self, now: Time, timeout: Time, seq: u64, len: u32, pkt: u32, release: &mut Vec<u32>) -> bool {
        let end = seq + len as u64;
        if seq > self.next {
            let i = self.held.partition_point(|h| h.0 < seq);
            self.held.insert(i, (seq, end, pkt));
            if self.flush_at.is_none() {
                self.flush_at = Some(now + timeout);
            }
            return true;
        }
        release.push(pkt);
        let before = self.next;
        self.next = self.next.max(end);
        while let Some(&(s, e, id)) = self.held.first() {
            if s > self.next {
                break;
            }
            self.held.remove(0);
            release.push(id);
            self.next = self.next.max(e);
        }
        if self.held.is_empty() {
            self.flush_at = None;
        } else if self.next > before {
            self.flush_at = Some(now + timeout);
        }
        false
    }

    /// The hold timer fired: releases everything held, in order.
    pub fn flush(&mut self, release: &mut Vec<u32>) {
        for (_, e, id) in self.held.drain(..) {
            release.push(id);
            self.next = self.next.max(e);
        }
        self.flush_at = None;
    }

    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Time = Time::from_us(100);

    /// Feeds `(arrival time, segment number)` arrivals of 1-byte segments, firing the hold timer whenever it
    /// is due before the next arrival (and at the end). Returns the segment numbers in the order TCP gets them.
    fn deliver(arrivals: &[(Time, u64)]) -> Vec<u64> {
        let mut r = Resequencer::default();
        let mut out = Vec::new();
        for &(t, seq) in arrivals {
            if r.flush_at.is_some_and(|at| at <= t) {
                r.flush(&mut out);
            }
            r.on_packet(t, TIMEOUT, seq, 1, seq as u32, &mut out);
        }
        r.flush(&mut out);
        out.into_iter().map(u64::from).collect()
    }

    #[test]
    fn gap_filled_within_the_timeout_releases_in_order() {
        let us = Time::from_us;
        assert_eq!(deliver(&[(us(0), 0), (us(1), 2), (us(3), 3), (us(50), 1), (us(51), 4)]), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn stalled_gap_is_flushed_after_the_timeout() {
        let us = Time::from_us;
        // Segment 1 never comes before 2 and 3 have waited 100 µs: they are released, and 1 passes late.
        assert_eq!(deliver(&[(us(0), 0), (us(1), 2), (us(2), 3), (us(150), 1)]), vec![0, 2, 3, 1]);
    }

    #[test]
    fn progress_restarts_the_hold_clock() {
        let us = Time::from_us;
        let mut r = Resequencer::default();
        let mut out = Vec::new();
        r.on_packet(us(0), TIMEOUT, 1, 1, 1, &mut out);
        assert_eq!(r.flush_at, Some(us(100)), "the clock starts with the first held segment");
        r.on_packet(us(50), TIMEOUT, 3, 1, 3, &mut out);
        assert_eq!(r.flush_at, Some(us(100)), "another held segment is no progress");
        r.on_packet(us(60), TIMEOUT, 0, 1, 0, &mut out);
        assert_eq!(out, vec![0, 1]);
        assert_eq!(r.flush_at, Some(us(160)), "the next byte advanced with 3 still held: the clock restarts");
        r.on_packet(us(70), TIMEOUT, 0, 1, 9, &mut out);
        assert_eq!(r.flush_at, Some(us(160)), "a duplicate is no progress");
        r.on_packet(us(110), TIMEOUT, 2, 1, 2, &mut out);
        assert_eq!(out, vec![0, 1, 9, 2, 3]);
        assert_eq!(r.flush_at, None, "nothing held, no clock");
    }

    /// Sustained reordering: segment i leaves at i µs; even segments take 10 µs, odd ones 80 µs. Every odd
    /// segment lags by 70 µs, less than the timeout, and data is held at every moment. A timer that ran from
    /// the first held segment (and was never restarted while data stayed held) fired every 100 µs, each time
    /// handing TCP a run of even segments ahead of their odd predecessors (20 times here).
    #[test]
    fn sustained_reordering_below_the_timeout_is_fully_hidden() {
        let mut arrivals: Vec<(Time, u64)> = (0..2000u64).map(|i| (Time::from_us(i + if i % 2 == 0 { 10 } else { 80 }), i)).collect();
        arrivals.sort();
        let order = deliver(&arrivals);
        assert_eq!(order.len(), 2000);
        let late = order.windows(2).filter(|w| w[1] < w[0]).count();
        assert_eq!(late, 0, "segments reached TCP out of order {late} times");
    }
}
