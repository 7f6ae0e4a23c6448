//! The event scheduler: a priority queue of `(time, sequence)` keys.
//!
//! Events at equal times run in the order they were scheduled: a monotonically increasing sequence number
//! breaks ties, which is what makes a run deterministic. Events are a small `Copy` enum whose payloads are
//! indices (of packets in the arena, of ports, of flows), so scheduling never allocates once the heap has
//! grown to its working size.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Everything that can happen. Payloads are indices into the simulation's tables.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A flow's application hands its data to the transport.
    FlowStart { flow: u32 },
    /// A packet finishes propagating and arrives at `node`, through `via`: the node's own port on the link
    /// it came by, or `u32::MAX` for a packet made at the node itself.
    Arrive { node: u32, pkt: u32, via: u32 },
    /// The head packet of `port` finishes serialisation.
    TxDone { port: u32 },
    /// A flow's retransmission timer may have expired (checked lazily against the flow's deadline).
    Rto { flow: u32 },
    /// A flow's receiver resequencing buffer flushes.
    Reseq { flow: u32 },
    /// A UDP constant-bit-rate source emits its next packet.
    UdpTick { flow: u32 },
    /// Periodic work of a switch's balancer.
    SwitchTimer { node: u32 },
    /// A one-shot wake-up a switch's balancer asked for, with its token.
    SwitchAlarm { node: u32, token: u32 },
    /// Periodic work of a host's edge balancer.
    EdgeTimer { host: u32 },
    /// A one-shot wake-up a host's edge balancer asked for, with its token.
    EdgeAlarm { host: u32, token: u32 },
    /// The sampler records queues and flow progress.
    Sample,
}

/// Heap entry: time in the high 64 bits of `key`, scheduling sequence in the low 64, so one integer comparison
/// orders by time and then by scheduling order.
#[derive(Copy, Clone, Debug)]
struct Entry {
    key: u128,
    ev: Event,
}

impl Entry {
    fn at(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (then first-scheduled) on top.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

#[derive(Default)]
pub struct Scheduler {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    now: Time,
    processed: u64,
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler { heap: BinaryHeap::with_capacity(1 << 16), ..Default::default() }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Events handed out by [`Scheduler::pop`] so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Schedules `ev` at absolute time `at`, which must not be in the past.
    pub fn at(&mut self, at: Time, ev: Event) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at:?} < {:?}", self.now);
        self.heap.push(Entry { key: (at.0 as u128) << 64 | self.next_seq as u128, ev });
        self.next_seq += 1;
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at())
    }

    /// Removes the next event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.now = e.at();
        self.processed += 1;
        Some((self.now, e.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_run_in_scheduling_order() {
        let mut s = Scheduler::new();
        s.at(Time(5), Event::Rto { flow: 1 });
        s.at(Time(3), Event::Rto { flow: 0 });
        s.at(Time(5), Event::Rto { flow: 2 });
        s.at(Time(5), Event::Rto { flow: 3 });
        let order: Vec<u32> = std::iter::from_fn(|| s.pop())
            .map(|(_, e)| match e {
                Event::Rto { flow } => flow,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![0, 1, 2, 3]);
        assert_eq!(s.now(), Time(5));
        assert_eq!(s.processed(), 4);
    }

    #[test]
    fn pops_in_exact_time_then_scheduling_order_under_random_interleaving() {
        // Reference: sort by (time, sequence). Interleave pushes and pops as a simulation does.
        let mut rng = crate::rng::Rng::new(42);
        let mut s = Scheduler::new();
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut popped: Vec<(u64, u32)> = Vec::new();
        let mut next_id = 0u32;
        for _ in 0..20_000 {
            if rng.below(3) > 0 || s.pending() == 0 {
                let delay = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(10) as u64,
                    2 => rng.below(1_000_000) as u64,
                    _ => rng.below(1 << 40) as u64,
                };
                let at = s.now().0 + delay;
                s.at(Time(at), Event::Rto { flow: next_id });
                reference.push((at, next_id));
                next_id += 1;
            } else {
                let (t, e) = s.pop().unwrap();
                let Event::Rto { flow } = e else { unreachable!() };
                popped.push((t.0, flow));
            }
        }
        while let Some((t, e)) = s.pop() {
            let Event::Rto { flow } = e else { unreachable!() };
            popped.push((t.0, flow));
        }
        // Every pop is the minimum of what was pending: times never decrease, ties in scheduling order.
        for w in popped.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1), "{w:?}");
        }
        reference.sort();
        popped.sort();
        assert_eq!(reference, popped);
    }
}
