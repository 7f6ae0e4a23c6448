//! Receiver resequencing buffer (the reorder buffer DRB and Presto assume), between the NIC and TCP.
//!
//! In-order data passes straight through. A segment that arrives beyond the next expected byte is held; it
//! is released as soon as the gap before it fills, or when it has waited `timeout` (then everything held is
//! released in sequence order and TCP sees the reordering). Retransmissions and duplicates pass at once.
//! This follows the recommendation of baselines.md §0.4c: deliver in-order data immediately, hold
//! out-of-order data up to a timeout, flush on timeout.

use crate::units::Time;

#[derive(Clone, Debug, Default)]
pub struct Resequencer {
    /// Next byte expected at this layer.
    pub next: u64,
    /// Held packets as (seq, end, arena id), sorted by seq.
    held: Vec<(u64, u64, u32)>,
    /// When the oldest held packet must be released.
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
