//! The event scheduler: a priority queue of `(time, class, tie)` keys.
//!
//! Events at equal times run in a canonical order that depends only on the events themselves, never on when
//! they were scheduled, which is what lets a lazily drained port (`port.rs`) schedule a packet's arrival at
//! the next hop the moment it admits the packet and still see it run exactly where the event-driven port's
//! arrival (scheduled when the packet's serialisation ends) would have:
//!
//! 1. **departures**: the end of a packet's serialisation on a port (`TxDone`, `WireLoss`, `LeftNic`), by
//!    port id; a packet that leaves at `t` is gone for everything else that happens at `t`;
//! 2. **arrivals** over a link (`Arrive` through a port): by the port they come through, in an order
//!    shuffled per instant (the port ids XOR a hash of the time), so no port wins every tie;
//! 3. **everything else** (flow starts, timers, alarms, samples, packets made at a node): in the order they
//!    were scheduled (a sequence number).
//!
//! Keys never tie: a port finishes one packet at a time and a link delivers one packet at a time. Events
//! are a small `Copy` enum whose payloads are indices (of packets in the arena, of ports, of flows), so
//! scheduling never allocates once the queue has grown to its working size. The queue is a timing wheel
//! (`wheel.rs`) keyed by a `u128`: time, then the class and tie-breaker; it stores each event as two words
//! (`Packed`) and, before each event runs, can name the one likely next so that its packet is prefetched.

use crate::ids::{FlowId, HostId, NodeId, PortId};
use crate::units::Time;
use crate::wheel::Wheel;

/// Everything that can happen. Payloads are indices into the simulation's tables.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A flow's application hands its data to the transport.
    FlowStart { flow: FlowId },
    /// A packet finishes propagating and arrives at `node`, through `via`: the node's own port on the link
    /// it came by, or [`PortId::NONE`] for a packet made at the node itself.
    Arrive { node: NodeId, pkt: u32, via: PortId },
    /// The head packet of `port` finishes serialisation (event-driven ports).
    TxDone { port: PortId },
    /// A packet that the wire loses finishes serialisation on lazily drained `port`, which lets go of it.
    WireLoss { port: PortId },
    /// Data packet `pkt` finishes serialisation on lazily drained host NIC `port`: its sender may send more.
    LeftNic { port: PortId, pkt: u32 },
    /// A flow's retransmission timer may have expired (checked lazily against the flow's deadline).
    Rto { flow: FlowId },
    /// A flow's receiver resequencing buffer flushes.
    Reseq { flow: FlowId },
    /// A UDP constant-bit-rate source emits its next packet.
    UdpTick { flow: FlowId },
    /// Periodic work of a switch's balancer.
    SwitchTimer { node: NodeId },
    /// A one-shot wake-up a switch's balancer asked for, with its token.
    SwitchAlarm { node: NodeId, token: u32 },
    /// Periodic work of a host's edge balancer.
    EdgeTimer { host: HostId },
    /// A one-shot wake-up a host's edge balancer asked for, with its token.
    EdgeAlarm { host: HostId, token: u32 },
    /// The sampler records queues and flow progress.
    Sample,
}

/// The classes of simultaneous events, in the order they run (the top two bits of a key's low half).
const DEPARTURE: u64 = 0;
const ARRIVAL: u64 = 1 << 62;
const OTHER: u64 = 2 << 62;

/// The place of an arrival through port `via` among the arrivals of instant `at`: a 30-bit hash of both
/// (a random-looking permutation per instant, independent from one instant to the next), then the port.
#[inline(always)]
fn arrival_rank(at: Time, via: u32) -> u64 {
    let mut z = at.0 ^ (via as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z >> 34) << 32 | via as u64
}

/// The stored half of the tie-breaker of `ev` (see the module doc): the class in the top two bits, then the
/// port for a departure, the ingress port for an arrival (hashed into its rank by [`key`]), the scheduling
/// sequence `seq` for the rest.
#[inline]
fn tie(ev: &Event, seq: u64) -> u64 {
    match *ev {
        Event::TxDone { port } | Event::WireLoss { port } | Event::LeftNic { port, .. } => DEPARTURE | port.0 as u64,
        Event::Arrive { via, .. } if via != PortId::NONE => ARRIVAL | via.0 as u64,
        _ => OTHER | seq,
    }
}

/// The full key of an event at `at` with stored tie-breaker `tie` ([`tie`]): time in the high 64 bits, then
/// the class and the tie-breaker (an arrival's hashed rank), so one integer comparison orders by time and
/// then canonically.
#[inline(always)]
fn key(at: u64, tie: u64) -> u128 {
    let tie = if tie & !(ARRIVAL - 1) == ARRIVAL { ARRIVAL | arrival_rank(Time(at), tie as u32) } else { tie };
    (at as u128) << 64 | tie as u128
}

/// An event as the wheel stores it: two words built and read with shifts, so an event goes between the
/// registers and its slot in two 8-byte moves. Stored as the enum, an arrival was assembled on the stack
/// field by field and copied into its slot with one 16-byte load, which cannot be forwarded from four
/// 4-byte stores and stalled every hop (S1: an eighth of the time spent admitting a packet).
/// Word 0: the variant in the low 32 bits, the first field in the high; word 1: the second field, then the
/// third.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Packed(u64, u64);

const ARRIVE: u64 = 1;

impl Packed {
    #[inline(always)]
    fn new(variant: u64, a: u32, b: u32, c: u32) -> Packed {
        Packed(variant | (a as u64) << 32, b as u64 | (c as u64) << 32)
    }

    #[inline(always)]
    fn arrival(node: NodeId, pkt: u32, via: PortId) -> Packed {
        Packed::new(ARRIVE, node.0, pkt, via.0)
    }

    #[inline]
    fn pack(ev: Event) -> Packed {
        match ev {
            Event::FlowStart { flow } => Packed::new(0, flow.0, 0, 0),
            Event::Arrive { node, pkt, via } => Packed::arrival(node, pkt, via),
            Event::TxDone { port } => Packed::new(2, port.0, 0, 0),
            Event::WireLoss { port } => Packed::new(3, port.0, 0, 0),
            Event::LeftNic { port, pkt } => Packed::new(4, port.0, pkt, 0),
            Event::Rto { flow } => Packed::new(5, flow.0, 0, 0),
            Event::Reseq { flow } => Packed::new(6, flow.0, 0, 0),
            Event::UdpTick { flow } => Packed::new(7, flow.0, 0, 0),
            Event::SwitchTimer { node } => Packed::new(8, node.0, 0, 0),
            Event::SwitchAlarm { node, token } => Packed::new(9, node.0, token, 0),
            Event::EdgeTimer { host } => Packed::new(10, host.0, 0, 0),
            Event::EdgeAlarm { host, token } => Packed::new(11, host.0, token, 0),
            Event::Sample => Packed::new(12, 0, 0, 0),
        }
    }

    #[inline(always)]
    fn unpack(self) -> Event {
        let a = (self.0 >> 32) as u32;
        let (b, c) = (self.1 as u32, (self.1 >> 32) as u32);
        match self.0 as u32 {
            0 => Event::FlowStart { flow: FlowId(a) },
            1 => Event::Arrive { node: NodeId(a), pkt: b, via: PortId(c) },
            2 => Event::TxDone { port: PortId(a) },
            3 => Event::WireLoss { port: PortId(a) },
            4 => Event::LeftNic { port: PortId(a), pkt: b },
            5 => Event::Rto { flow: FlowId(a) },
            6 => Event::Reseq { flow: FlowId(a) },
            7 => Event::UdpTick { flow: FlowId(a) },
            8 => Event::SwitchTimer { node: NodeId(a) },
            9 => Event::SwitchAlarm { node: NodeId(a), token: b },
            10 => Event::EdgeTimer { host: HostId(a) },
            11 => Event::EdgeAlarm { host: HostId(a), token: b },
            _ => Event::Sample,
        }
    }
}

/// The wheel, with the lanes per slot chosen per run ([`Scheduler::with_slot_width`]).
enum Queue {
    Two(Wheel<Packed, 2>),
    Four(Wheel<Packed, 4>),
}

/// Forwards to the wheel in use (the same arm every time in a run, so the branch is predicted).
macro_rules! on_wheel {
    ($q:expr, $w:ident => $e:expr) => {
        match $q {
            Queue::Two($w) => $e,
            Queue::Four($w) => $e,
        }
    };
}

pub struct Scheduler {
    queue: Queue,
    next_seq: u64,
    now: Time,
    processed: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler::new()
    }
}

impl Scheduler {
    /// A scheduler with 32.8 ns wheel slots.
    pub fn new() -> Scheduler {
        Scheduler::with_slot_width(Time(1 << 15))
    }

    /// A scheduler whose wheel slots span `width` (rounded down to a power of two picoseconds, 1 ns to
    /// 262 ns): about a quarter of the mean time between events keeps most occupied slots at one or two
    /// events, which two lanes (one cache line) hold. Where the width wanted is below the 1 ns floor
    /// (a dense fabric: P1), slots hold more events at once and get four lanes. Speed only.
    pub fn with_slot_width(width: Time) -> Scheduler {
        let bits = (63 - width.0.max(1).leading_zeros()).clamp(10, 18);
        let queue = if width.0 < 1 << 10 {
            Queue::Four(Wheel::new(bits, Packed::pack(Event::Sample)))
        } else {
            Queue::Two(Wheel::new(bits, Packed::pack(Event::Sample)))
        };
        Scheduler { queue, next_seq: 0, now: Time::ZERO, processed: 0 }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Events handed out by [`Scheduler::pop`] so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn pending(&self) -> usize {
        on_wheel!(&self.queue, w => w.len())
    }

    /// Bytes the scheduler holds (for the memory watchdog).
    pub fn footprint_bytes(&self) -> usize {
        on_wheel!(&self.queue, w => w.footprint_bytes())
    }

    /// Schedules `ev` at absolute time `at`, which must not be in the past.
    #[inline]
    pub fn at(&mut self, at: Time, ev: Event) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at:?} < {:?}", self.now);
        debug_assert!(self.next_seq < 1 << 62);
        let k = key(at.0, tie(&ev, self.next_seq));
        on_wheel!(&mut self.queue, w => w.push(k, Packed::pack(ev)));
        self.next_seq += 1;
    }

    /// Schedules `Event::Arrive { node, pkt, via }` at `at` (the hot path's [`Scheduler::at`]).
    #[inline(always)]
    pub fn arrival(&mut self, at: Time, node: NodeId, pkt: u32, via: PortId) {
        debug_assert!(at >= self.now && via != PortId::NONE);
        let k = (at.0 as u128) << 64 | (ARRIVAL | arrival_rank(at, via.0)) as u128;
        on_wheel!(&mut self.queue, w => w.push(k, Packed::arrival(node, pkt, via)));
    }

    /// The packet of the event likely to come out next, if that is an arrival (a guess for prefetching:
    /// see [`Wheel::next_hint`]).
    #[inline(always)]
    pub fn next_arrival_hint(&self) -> Option<u32> {
        let next = on_wheel!(&self.queue, w => w.next_hint())?;
        (next.0 as u32 == ARRIVE as u32).then_some(next.1 as u32)
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<Time> {
        on_wheel!(&mut self.queue, w => w.peek_key()).map(|k| Time((k >> 64) as u64))
    }

    /// Removes the next event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_by(Time::MAX)
    }

    /// Removes the next event if it is due by `limit`, and advances the clock to it.
    #[inline]
    pub fn pop_by(&mut self, limit: Time) -> Option<(Time, Event)> {
        let (at, ev) = on_wheel!(&mut self.queue, w => w.pop_by(limit.0))?;
        self.now = Time(at);
        self.processed += 1;
        Some((self.now, ev.unpack()))
    }
}

/// A handler's hold on the event queue: it may add events, never take or reorder them (only the
/// simulation's loop does: `sim.rs`).
pub struct Schedule<'a> {
    queue: &'a mut Scheduler,
}

impl<'a> Schedule<'a> {
    pub fn new(queue: &'a mut Scheduler) -> Schedule<'a> {
        Schedule { queue }
    }
    /// [`Scheduler::at`].
    #[inline(always)]
    pub fn at(&mut self, at: Time, ev: Event) {
        self.queue.at(at, ev);
    }
    /// [`Scheduler::arrival`].
    #[inline(always)]
    pub fn arrival(&mut self, at: Time, node: NodeId, pkt: u32, via: PortId) {
        self.queue.arrival(at, node, pkt, via);
    }
    /// The time of the event being handled.
    #[inline(always)]
    pub fn now(&self) -> Time {
        self.queue.now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_comes_back_from_its_packed_form_as_it_went_in() {
        let (a, b, c) = (u32::MAX, 0x8000_0001, 7);
        let all = [
            Event::FlowStart { flow: FlowId(a) },
            Event::Arrive { node: NodeId(a), pkt: b, via: PortId(c) },
            Event::Arrive { node: NodeId(3), pkt: 0, via: PortId::NONE },
            Event::TxDone { port: PortId(a) },
            Event::WireLoss { port: PortId(b) },
            Event::LeftNic { port: PortId(a), pkt: b },
            Event::Rto { flow: FlowId(b) },
            Event::Reseq { flow: FlowId(c) },
            Event::UdpTick { flow: FlowId(a) },
            Event::SwitchTimer { node: NodeId(b) },
            Event::SwitchAlarm { node: NodeId(a), token: b },
            Event::EdgeTimer { host: HostId(c) },
            Event::EdgeAlarm { host: HostId(b), token: a },
            Event::Sample,
        ];
        for ev in all {
            assert_eq!(Packed::pack(ev).unpack(), ev);
        }
        let variants: std::collections::BTreeSet<u32> = all.iter().map(|&e| Packed::pack(e).0 as u32).collect();
        assert_eq!(variants.len(), 13, "each variant its own code");
    }

    #[test]
    fn equal_times_run_in_scheduling_order() {
        let mut s = Scheduler::new();
        s.at(Time(5), Event::Rto { flow: FlowId(1) });
        s.at(Time(3), Event::Rto { flow: FlowId(0) });
        s.at(Time(5), Event::Rto { flow: FlowId(2) });
        s.at(Time(5), Event::Rto { flow: FlowId(3) });
        let order: Vec<u32> = std::iter::from_fn(|| s.pop())
            .map(|(_, e)| match e {
                Event::Rto { flow } => flow.0,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![0, 1, 2, 3]);
        assert_eq!(s.now(), Time(5));
        assert_eq!(s.processed(), 4);
    }

    #[test]
    fn simultaneous_events_run_departures_then_arrivals_then_the_rest_whatever_the_scheduling_order() {
        let t = Time(1000);
        let evs = [
            Event::Sample,
            Event::Arrive { node: NodeId(3), pkt: 7, via: PortId(12) },
            Event::TxDone { port: PortId(9) },
            Event::Rto { flow: FlowId(1) },
            Event::Arrive { node: NodeId(3), pkt: 8, via: PortId(5) },
            Event::WireLoss { port: PortId(4) },
            Event::Arrive { node: NodeId(3), pkt: 9, via: PortId::NONE },
            Event::Arrive { node: NodeId(4), pkt: 10, via: PortId(40) },
        ];
        let order = |perm: &[usize]| -> Vec<Event> {
            let mut s = Scheduler::new();
            for &i in perm {
                s.at(t, evs[i]);
            }
            std::iter::from_fn(|| s.pop()).map(|(_, e)| e).collect()
        };
        let a = order(&[0, 1, 2, 3, 4, 5, 6, 7]);
        let b = order(&[7, 6, 5, 4, 3, 2, 1, 0]);
        // Departures by port, then arrivals over links (in an order of their own), then the rest as scheduled.
        assert_eq!(&a[..2], &[Event::WireLoss { port: PortId(4) }, Event::TxDone { port: PortId(9) }]);
        let arrivals = |v: &[Event]| v[2..5].to_vec();
        assert!(arrivals(&a).iter().all(|e| matches!(e, Event::Arrive { via, .. } if *via != PortId::NONE)));
        assert_eq!(arrivals(&a), arrivals(&b), "arrivals ordered by themselves, not by scheduling");
        assert_eq!(&a[5..], &[Event::Sample, Event::Rto { flow: FlowId(1) }, Event::Arrive { node: NodeId(3), pkt: 9, via: PortId::NONE }]);
        assert_eq!(&b[5..], &[Event::Arrive { node: NodeId(3), pkt: 9, via: PortId::NONE }, Event::Rto { flow: FlowId(1) }, Event::Sample]);
        // The order of simultaneous arrivals changes from one instant to the next (no port wins every tie).
        let first_at = |at: u64| {
            let mut s = Scheduler::new();
            for via in [10, 11, 12, 13] {
                s.at(Time(at), Event::Arrive { node: NodeId(0), pkt: via, via: PortId(via) });
            }
            match s.pop().unwrap().1 {
                Event::Arrive { via, .. } => via.0,
                _ => unreachable!(),
            }
        };
        let firsts: std::collections::BTreeSet<u32> = (1..200).map(|k| first_at(k * 1_200_000)).collect();
        assert_eq!(firsts.len(), 4, "{firsts:?}");
    }

    #[test]
    fn pops_in_exact_key_order_under_random_interleaving_on_any_wheel() {
        // Reference: the minimum key of what is pending. Interleave pushes and pops as a simulation does,
        // with delays from zero (the current slot) to beyond the wheel's window (the far heap), and event
        // kinds of every class; on wheels with slots of 1 ns (so the window wraps often; four lanes per slot,
        // then two) and 262 ns.
        for width in [Time(1 << 9), Time(1 << 10), Time(1 << 18)] {
            let mut rng = crate::rng::Rng::new(7);
            let mut s = Scheduler::with_slot_width(width);
            let mut pending: Vec<(u128, u32)> = Vec::new();
            let mut next_id = 0u32;
            for _ in 0..50_000 {
                if rng.below(3) > 0 || s.pending() == 0 {
                    let delay = match rng.below(5) {
                        0 => 0,
                        1 => rng.below(2_000) as u64,
                        2 => rng.below(1_000_000) as u64,
                        3 => rng.below(100_000_000) as u64,
                        _ => rng.below(1 << 40) as u64,
                    };
                    let at = Time(s.now().0 + delay);
                    let id = next_id;
                    next_id += 1;
                    let ev = match rng.below(3) {
                        0 => Event::TxDone { port: PortId(id) },
                        1 => Event::Arrive { node: NodeId(0), pkt: id, via: PortId(id) },
                        _ => Event::Rto { flow: FlowId(id) },
                    };
                    let seq = s.next_seq;
                    s.at(at, ev);
                    pending.push((key(at.0, tie(&ev, seq)), id));
                } else {
                    let (t, e) = s.pop().unwrap();
                    let id = match e {
                        Event::TxDone { port } => port.0,
                        Event::Arrive { pkt, .. } => pkt,
                        Event::Rto { flow } => flow.0,
                        _ => unreachable!(),
                    };
                    let min = pending.iter().enumerate().min_by_key(|(_, p)| p.0).map(|(i, _)| i).unwrap();
                    let (key, want) = pending.swap_remove(min);
                    assert_eq!((t.0, id), ((key >> 64) as u64, want), "slot width {width:?}");
                }
            }
            assert_eq!(s.pending(), pending.len());
        }
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
                s.at(Time(at), Event::Rto { flow: FlowId(next_id) });
                reference.push((at, next_id));
                next_id += 1;
            } else {
                let (t, e) = s.pop().unwrap();
                let Event::Rto { flow } = e else { unreachable!() };
                popped.push((t.0, flow.0));
            }
        }
        while let Some((t, e)) = s.pop() {
            let Event::Rto { flow } = e else { unreachable!() };
            popped.push((t.0, flow.0));
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
