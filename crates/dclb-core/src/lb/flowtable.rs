//! Flow and flowlet tables: per-flow state kept by flow key, with one rule for when an entry is live.
//!
//! **Entries.** For a flow key (a `u128`: a packet's 5-tuple or a flow id, see [`flowhash`](super::flowhash))
//! the table keeps an [`Entry`]: the port (a switch's table) or path tag (an edge's: `FlowTable<D, u16>`,
//! see [`Choice`]) the flow's packets take, when the table last recorded
//! a packet of the flow, and the scheme's own data `D`. A scheme looks the flow up ([`FlowTable::live`]: the
//! flowlet in progress; [`FlowTable::get`]: whatever the table still holds, live or not), decides, and records
//! the packet ([`FlowTable::record`]), which makes the entry live again.
//!
//! **Layout.**
//! * *Exact* ([`FlowTable::exact`]): one entry per key, as the public simulators keep flowlets. Entries are
//!   created by `record` and dropped by `remove`, a sweep or `forget`.
//! * *Hashed* ([`FlowTable::hashed`]): a fixed array indexed by the key's
//!   [salted hash](super::flowhash::salted_index). Keys that collide share one entry (port, clock and data),
//!   as in a switch's flowlet table; memory is fixed.
//!
//! **Clock** ([`Clock`]): when an entry is live.
//! * *Timestamps*: while the gap since the entry's last packet is within the table's [`Timeout`].
//! * *Age bits* (CONGA's hardware): an entry has a valid bit and an age bit. A packet sets valid and clears
//!   age; a sweep every timeout invalidates the valid entries whose age bit is still set, then sets the age
//!   bit of the others. Only sweeps end an entry, so an idle one ends at the second sweep after its last
//!   packet: between one and two timeouts later, depending on the sweep's phase.
//!
//! **Expiry.** [`FlowTable::sweep`] is the table's own periodic work, to run every
//! [`FlowTable::sweep_period`]: the age-bit sweep, or, for an exact table with timestamps, dropping the
//! entries that are no longer live. The latter only frees memory: an expired entry and a missing one lead to
//! the same decision. A scheme that wants expired entries for a while (CONGA keeps a flow's previous
//! uplink on a tie) drops them itself with [`FlowTable::forget`].
//!
//! Per-flow state with no notion of idleness (Presto's flowcells) needs no clock: a plain
//! [`FlowMap`] holds it.

use super::flowhash::{salted_index, FlowMap};
use super::params::param_choice;
use crate::ids::PortId;
use crate::packet::NO_PATH;
use crate::units::Time;

/// What a table remembers a flow's packets take: a switch's egress [`PortId`], or an edge's path tag
/// (`u16`); `NONE` fills a slot nothing was recorded into.
pub trait Choice: Copy + PartialEq + std::fmt::Debug {
    const NONE: Self;
}

impl Choice for PortId {
    const NONE: PortId = PortId::NONE;
}

impl Choice for u16 {
    const NONE: u16 = NO_PATH;
}

param_choice! {
    /// How a flow table tells that an entry is live.
    pub enum Clock {
        /// Exact timestamps: live while the gap since the last packet is within the timeout.
        Timestamp = "timestamp",
        /// Valid and age bits, swept every timeout: an idle entry ends after one to two timeouts.
        AgeBit = "age_bit",
    }
}

/// How long an idle gap may last with the entry still live. With age bits, only the time counts: it is the
/// sweep period.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Timeout {
    /// A gap longer than this ends the entry; a gap of exactly this continues it (LetFlow, CONGA, Hermes).
    Over(Time),
    /// A gap of this or longer ends the entry (Clove).
    AtLeast(Time),
}

impl Timeout {
    pub fn time(self) -> Time {
        match self {
            Timeout::Over(t) | Timeout::AtLeast(t) => t,
        }
    }
    /// Whether an idle gap of `gap` ends the entry.
    pub fn ends(self, gap: Time) -> bool {
        match self {
            Timeout::Over(t) => gap > t,
            Timeout::AtLeast(t) => gap >= t,
        }
    }
}

/// What a table holds for one flow (for a hashed table: for every flow that maps to the slot).
#[derive(Copy, Clone, Debug)]
pub struct Entry<D, C = PortId> {
    /// The egress port, or for an edge scheme the path tag, of the flow's current flowlet.
    pub port: C,
    /// When the table last recorded a packet of the flow.
    pub last_seen: Time,
    /// The scheme's own per-flow data.
    pub data: D,
    /// Held by the table: a hashed slot is empty until recorded into, and age bits clear it.
    valid: bool,
    /// Age bit: set by a sweep, cleared by a packet (only with [`Clock::AgeBit`]).
    aged: bool,
}

impl<D: Default, C: Choice> Default for Entry<D, C> {
    fn default() -> Self {
        Entry { port: C::NONE, last_seen: Time::ZERO, data: D::default(), valid: false, aged: false }
    }
}

enum Slots<D, C> {
    Exact(FlowMap<Entry<D, C>>),
    Hashed { entries: Vec<Entry<D, C>>, salt: u64 },
}

/// A flow or flowlet table; see the [module documentation](self).
pub struct FlowTable<D = (), C = PortId> {
    slots: Slots<D, C>,
    timeout: Timeout,
    clock: Clock,
}

impl<D: Copy + Default, C: Choice> FlowTable<D, C> {
    /// One entry per key.
    pub fn exact(timeout: Timeout, clock: Clock) -> FlowTable<D, C> {
        FlowTable { slots: Slots::Exact(FlowMap::default()), timeout, clock }
    }

    /// `size` entries (at least 1) indexed by the key's hash under `salt`; colliding keys share an entry.
    pub fn hashed(size: usize, salt: u64, timeout: Timeout, clock: Clock) -> FlowTable<D, C> {
        assert!(size > 0, "a hashed flow table needs at least one entry");
        FlowTable { slots: Slots::Hashed { entries: vec![Entry::default(); size], salt }, timeout, clock }
    }

    /// The entry `key` maps to, live or not; `None` if the table holds none.
    pub fn get(&self, key: u128) -> Option<&Entry<D, C>> {
        match &self.slots {
            Slots::Exact(m) => m.get(&key),
            Slots::Hashed { entries, salt } => Some(&entries[salted_index(key, *salt, entries.len())]).filter(|e| e.valid),
        }
    }

    /// The entry `key` maps to, for changing its data; `None` if the table holds none.
    pub fn get_mut(&mut self, key: u128) -> Option<&mut Entry<D, C>> {
        match &mut self.slots {
            Slots::Exact(m) => m.get_mut(&key),
            Slots::Hashed { entries, salt } => {
                let i = salted_index(key, *salt, entries.len());
                Some(&mut entries[i]).filter(|e| e.valid)
            }
        }
    }

    /// The entry of `key` if it is live at `now`: the flow's flowlet in progress.
    pub fn live(&self, key: u128, now: Time) -> Option<&Entry<D, C>> {
        self.get(key).filter(|e| self.is_live(e, now))
    }

    /// Whether `entry` (one of this table's) is live at `now`.
    pub fn is_live(&self, entry: &Entry<D, C>, now: Time) -> bool {
        entry.valid
            && match self.clock {
                Clock::AgeBit => true,
                Clock::Timestamp => !self.timeout.ends(now.saturating_sub(entry.last_seen)),
            }
    }

    /// Records a packet of `key` sent to `port` at `now`: the entry becomes live, with its age bit clear.
    /// Returns the entry's data: kept if the table held the entry, the default for a new one.
    pub fn record(&mut self, key: u128, port: C, now: Time) -> &mut D {
        let e = match &mut self.slots {
            Slots::Exact(m) => m.entry(key).or_default(),
            Slots::Hashed { entries, salt } => {
                let i = salted_index(key, *salt, entries.len());
                &mut entries[i]
            }
        };
        if !e.valid {
            *e = Entry::default();
        }
        *e = Entry { port, last_seen: now, valid: true, aged: false, ..*e };
        &mut e.data
    }

    /// Drops the entry of `key` (a hashed table empties the slot, for every key that shares it).
    pub fn remove(&mut self, key: u128) {
        match &mut self.slots {
            Slots::Exact(m) => {
                m.remove(&key);
            }
            Slots::Hashed { .. } => {
                if let Some(e) = self.get_mut(key) {
                    e.valid = false;
                }
            }
        }
    }

    /// The table's periodic work, every [`FlowTable::sweep_period`]: ages the entries (age bits) or drops
    /// those no longer live (timestamps).
    pub fn sweep(&mut self, now: Time) {
        match self.clock {
            Clock::AgeBit => self.age(),
            Clock::Timestamp => self.forget(now, self.timeout),
        }
    }

    /// How often [`FlowTable::sweep`] should run: every timeout with age bits (the sweep is the clock; at
    /// least 1 ns); every `max(timeout, 1 ms)` for an exact table with timestamps, whose sweep only frees
    /// memory; never for a hashed table with timestamps (fixed memory, nothing to free).
    pub fn sweep_period(&self) -> Option<Time> {
        let t = self.timeout.time();
        match (self.clock, &self.slots) {
            (Clock::AgeBit, _) => Some(t.max(Time::from_ns(1))),
            (Clock::Timestamp, Slots::Exact(_)) => Some(t.max(Time::from_us(1000))),
            (Clock::Timestamp, Slots::Hashed { .. }) => None,
        }
    }

    /// Drops the entries whose idle gap at `now` has reached `after` (a hashed table empties their slots).
    pub fn forget(&mut self, now: Time, after: Timeout) {
        let ended = |e: &Entry<D, C>| after.ends(now.saturating_sub(e.last_seen));
        match &mut self.slots {
            Slots::Exact(m) => m.retain(|_, e| !ended(e)),
            Slots::Hashed { entries, .. } => {
                for e in entries.iter_mut().filter(|e| ended(e)) {
                    e.valid = false;
                }
            }
        }
    }

    /// The age-bit sweep: entries already aged end, the others age.
    fn age(&mut self) {
        match &mut self.slots {
            Slots::Exact(m) => m.retain(|_, e| {
                let keep = !e.aged;
                e.aged = true;
                keep
            }),
            Slots::Hashed { entries, .. } => {
                for e in entries.iter_mut().filter(|e| e.valid) {
                    if e.aged {
                        e.valid = false;
                    }
                    e.aged = true;
                }
            }
        }
    }

    /// Entries the table holds, live or not.
    pub fn len(&self) -> usize {
        match &self.slots {
            Slots::Exact(m) => m.len(),
            Slots::Hashed { entries, .. } => entries.iter().filter(|e| e.valid).count(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of table state: an exact table's entries with their keys, or a hashed table's whole array
    /// (which stores no keys).
    pub fn state_bytes(&self) -> usize {
        match &self.slots {
            Slots::Exact(m) => m.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<Entry<D, C>>()),
            Slots::Hashed { entries, .. } => entries.len() * std::mem::size_of::<Entry<D, C>>(),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Tables of path tags (`u16`), so that choices are plain numbers.
    use super::*;

    const T: Time = Time::from_us(500);

    fn us(x: u64) -> Time {
        Time::from_us(x)
    }

    #[test]
    fn exact_entries_are_per_key_and_hashed_ones_are_shared_by_colliding_keys() {
        let mut exact: FlowTable<u32, u16> = FlowTable::exact(Timeout::Over(T), Clock::Timestamp);
        *exact.record(1, 10, us(1)) = 7;
        exact.record(2, 20, us(2));
        assert_eq!((exact.get(1).unwrap().port, exact.get(1).unwrap().data), (10, 7));
        assert_eq!((exact.get(2).unwrap().port, exact.get(2).unwrap().data), (20, 0));
        assert!(exact.get(3).is_none());
        assert_eq!(exact.len(), 2);

        // One slot: every key collides, so the second flow takes over the first one's entry.
        let mut one: FlowTable<u32, u16> = FlowTable::hashed(1, 9, Timeout::Over(T), Clock::Timestamp);
        assert!(one.get(1).is_none(), "an unused slot holds nothing");
        *one.record(1, 10, us(1)) = 7;
        let shared = one.live(2, us(2)).expect("key 2 sees key 1's flowlet");
        assert_eq!((shared.port, shared.data), (10, 7));
        one.record(2, 20, us(3));
        assert_eq!(one.get(1).unwrap().port, 20);
        assert_eq!(one.len(), 1);

        // Many slots: keys spread, collisions are about as frequent as chance says (1000 keys, 4096 slots).
        let mut wide: FlowTable<(), u16> = FlowTable::hashed(4096, 9, Timeout::Over(T), Clock::Timestamp);
        for k in 0..1000u128 {
            wide.record(k << 72, 0, us(1));
        }
        assert!((850..920).contains(&wide.len()), "{} slots used", wide.len());
    }

    #[test]
    fn the_timeout_says_whether_a_gap_of_exactly_the_timeout_continues() {
        for (timeout, continues) in [(Timeout::Over(T), true), (Timeout::AtLeast(T), false)] {
            let mut t: FlowTable<(), u16> = FlowTable::exact(timeout, Clock::Timestamp);
            t.record(1, 3, us(10));
            assert!(t.live(1, us(10) + T - Time::from_ps(1)).is_some());
            assert_eq!(t.live(1, us(10) + T).is_some(), continues, "{timeout:?}");
            assert!(t.live(1, us(10) + T + Time::from_ps(1)).is_none());
            // Not live is not gone: the entry and its port stay until swept.
            assert_eq!(t.get(1).unwrap().port, 3);
        }
    }

    #[test]
    fn age_bits_end_an_idle_entry_between_one_and_two_timeouts() {
        // Sweeps at every multiple of T; the packet comes at a phase `p` after the sweep at 1000 µs.
        for p in [1, 100, 250, 499] {
            let mut t: FlowTable<(), u16> = FlowTable::hashed(64, 1, Timeout::Over(T), Clock::AgeBit);
            assert_eq!(t.sweep_period(), Some(T));
            let seen = us(1000 + p);
            t.record(5, 1, seen);
            t.sweep(us(1500));
            assert!(t.live(5, us(1999)).is_some(), "phase {p}: one sweep does not end it, whatever the gap");
            t.sweep(us(2000));
            assert!(t.live(5, us(2000)).is_none(), "phase {p}: the second sweep does");
            let gap = us(2000) - seen;
            assert!(T < gap && gap < T.mul(2), "phase {p}: ended after {gap:?}");
        }
        // A packet between sweeps clears the age bit, so the entry survives the next sweep.
        let mut t: FlowTable<(), u16> = FlowTable::exact(Timeout::Over(T), Clock::AgeBit);
        t.record(5, 1, us(10));
        t.sweep(us(500));
        t.record(5, 1, us(990));
        t.sweep(us(1000));
        assert!(t.live(5, us(1470)).is_some());
        t.sweep(us(1500));
        assert_eq!(t.len(), 0, "an exact table drops what age bits end");
    }

    #[test]
    fn sweeps_and_forget_expire_entries() {
        let mut t: FlowTable<(), u16> = FlowTable::exact(Timeout::Over(T), Clock::Timestamp);
        assert_eq!(t.sweep_period(), Some(us(1000)), "a memory sweep, at least every 1 ms");
        for k in 0..10 {
            t.record(k, 0, us(1));
        }
        t.record(0, 0, us(900));
        t.sweep(us(1000));
        assert_eq!(t.len(), 1, "only the flow seen within the timeout stays");
        // Keeping expired entries longer: gone only once idle for more than 1 ms.
        t.record(1, 4, us(1100));
        t.forget(us(2000), Timeout::Over(us(1000)));
        assert!(t.live(1, us(2000)).is_none() && t.get(1).is_some());
        t.forget(us(2101), Timeout::Over(us(1000)));
        assert!(t.get(1).is_none());

        let mut h: FlowTable<(), u16> = FlowTable::hashed(8, 0, Timeout::Over(T), Clock::Timestamp);
        assert_eq!(h.sweep_period(), None, "fixed memory: nothing to free");
        h.record(1, 0, us(1));
        h.sweep(us(600));
        assert!(h.get(1).is_none(), "a sweep empties a hashed slot too");
        h.record(1, 0, us(700));
        h.remove(1);
        assert!(h.is_empty());
    }

    #[test]
    fn data_is_kept_by_a_continuing_entry_and_fresh_in_a_new_one() {
        let mut t: FlowTable<u64, u16> = FlowTable::hashed(1, 0, Timeout::Over(T), Clock::AgeBit);
        *t.record(1, 0, us(1)) = 42;
        assert_eq!(*t.record(1, 2, us(2)), 42);
        t.sweep(us(500));
        t.sweep(us(1000));
        assert_eq!(*t.record(1, 2, us(1001)), 0, "an ended entry starts over");
        let mut e: FlowTable<u64, u16> = FlowTable::exact(Timeout::Over(T), Clock::Timestamp);
        *e.record(1, 0, us(1)) = 42;
        e.get_mut(1).unwrap().data += 1;
        assert_eq!(*e.record(1, 0, us(5000)), 43, "an exact entry keeps its data until removed");
        e.remove(1);
        assert_eq!(*e.record(1, 0, us(5001)), 0);
    }

    #[test]
    fn state_is_counted_with_keys_for_an_exact_table_and_fixed_for_a_hashed_one() {
        let entry = std::mem::size_of::<Entry<(), u16>>();
        let mut e: FlowTable<(), u16> = FlowTable::exact(Timeout::Over(T), Clock::Timestamp);
        e.record(1, 0, us(1));
        e.record(2, 0, us(1));
        assert_eq!(e.state_bytes(), 2 * (16 + entry));
        let h: FlowTable<(), u16> = FlowTable::hashed(100, 0, Timeout::Over(T), Clock::Timestamp);
        assert_eq!(h.state_bytes(), 100 * entry);
    }
}
