//! The scheduler's priority queue: a timing wheel of small unsorted chunks, over a binary heap.
//!
//! Items are `(key, payload)` with a `u128` key whose high 64 bits are the time in picoseconds; keys are
//! distinct (the scheduler makes them so) and the smallest key comes out first.
//!
//! **Mechanism.** Time is cut into slots of `2^slot_bits` picoseconds; a ring of [`SLOTS`] slots covers the
//! window from the current slot (the *cursor*) on. An item due in the window goes to its slot: the slot
//! owns one *chunk*, [`LANES`] keys in one cache line and their payloads in the next, filled in arrival
//! order, not sorted. Taking the next item takes the smallest of the current slot's keys, found by a fixed
//! comparison of all the lanes (empty lanes hold `u128::MAX`), so no branch depends on the keys, and the
//! last filled lane moves into the hole. When the current slot is empty the cursor moves to the next
//! occupied slot (a bitmap, one bit per slot) or to the heap's earliest item, whichever comes first.
//!
//! Everything else goes to the heap: items due beyond the window, and items whose slot's chunk is full
//! (a burst of simultaneous events). The heap's smallest key is kept at hand and compared with the
//! chunk's smallest at every take, so an item in the heap comes out in its place wherever it is due; the
//! heap is not emptied onto the wheel as the window moves.
//!
//! **Why.** The wheel it replaces kept each slot as a linked list in key order: scheduling walked the
//! list to the item's place, a cache line per node and a branch per comparison that the predictor
//! misses (a quarter of the run's mispredictions). Here scheduling writes one lane of a chunk (the
//! chunk's line is hot: chunks are reused most recent first, and a slot near the cursor is touched
//! again soon), and taking compares a handful of keys in one line without branching on them.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Slots on the ring (a power of two).
pub const SLOTS: usize = 1 << 16;
const NIL: u32 = u32::MAX;
/// A slot's entry in `heads`: chunk index shifted by `FILL_BITS`, and the number of filled lanes.
const FILL_BITS: u32 = 3;
const FILL_MASK: u32 = (1 << FILL_BITS) - 1;
const EMPTY: u128 = u128::MAX;

/// One slot's items: keys in one cache line, payloads after them.
#[derive(Copy, Clone)]
#[repr(C, align(64))]
struct Chunk<T: Copy, const LANES: usize> {
    keys: [u128; LANES],
    items: [T; LANES],
}

/// A heap entry: smallest key on top.
struct Far<T>(u128, T);

impl<T> PartialEq for Far<T> {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0
    }
}
impl<T> Eq for Far<T> {}
impl<T> PartialOrd for Far<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Far<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.cmp(&self.0)
    }
}

/// Where the smallest pending key is.
enum Min {
    /// Lane `lane` of the chunk in `heads` entry `head` of the current slot, holding `key`.
    Lane { head: u32, lane: usize, key: u128 },
    Far,
}

/// A wheel whose slots hold `LANES` items (1 to 7) before the rest go to the heap.
pub struct Wheel<T: Copy, const LANES: usize> {
    /// Log2 of a slot's span in picoseconds.
    slot_bits: u32,
    /// Per slot: `NIL`, or its chunk's index << `FILL_BITS` | its filled lanes (1..=`LANES`).
    heads: Box<[u32; SLOTS]>,
    /// Bit `i % 64` of word `i / 64` set when slot `i` has a chunk.
    occupied: Box<[u64; SLOTS / 64]>,
    chunks: Vec<Chunk<T, LANES>>,
    /// `free[..free_top]`: chunks not in use (every key `EMPTY`), most recently freed last; never empty
    /// between calls. `free` is as long as `chunks`.
    free: Vec<u32>,
    free_top: usize,
    /// Absolute slot number (time >> slot_bits) of the current slot.
    cursor: u64,
    /// Items beyond the window or beyond their slot's lanes.
    far: BinaryHeap<Far<T>>,
    /// The heap's smallest key, or `EMPTY`.
    far_min: u128,
    /// That key's slot (`u64::MAX` for none): kept apart to spare moving to the cursor a `u128` shift.
    far_slot: u64,
    /// Payload of unused lanes.
    filler: T,
    len: usize,
}

impl<T: Copy, const LANES: usize> Wheel<T, LANES> {
    /// A wheel with slots of `2^slot_bits` picoseconds; `filler` fills unused lanes (never handed out).
    pub fn new(slot_bits: u32, filler: T) -> Wheel<T, LANES> {
        assert!(slot_bits < 64 && (1..=FILL_MASK as usize).contains(&LANES));
        let mut w = Wheel {
            slot_bits,
            heads: vec![NIL; SLOTS].into_boxed_slice().try_into().expect("SLOTS long"),
            occupied: vec![0; SLOTS / 64].into_boxed_slice().try_into().expect("SLOTS / 64 long"),
            chunks: Vec::with_capacity(1 << 10),
            free: Vec::with_capacity(1 << 10),
            free_top: 0,
            cursor: 0,
            far: BinaryHeap::new(),
            far_min: EMPTY,
            far_slot: u64::MAX,
            filler,
            len: 0,
        };
        w.grow();
        w
    }

    #[inline(always)]
    fn slot_of(&self, key: u128) -> u64 {
        ((key >> 64) as u64) >> self.slot_bits
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds `item` under `key` (distinct from every pending key, and below `u128::MAX`).
    #[inline(always)]
    pub fn push(&mut self, key: u128, item: T) {
        debug_assert!(key != EMPTY);
        self.len += 1;
        let s = self.slot_of(key);
        if s.wrapping_sub(self.cursor) >= SLOTS as u64 {
            return self.push_aside(key, item, s);
        }
        self.push_slot((s as usize) & (SLOTS - 1), key, item);
    }

    /// Adds to ring slot `i`, or to the heap if its lanes are full. No branch on whether the slot had a
    /// chunk (about even odds, which a predictor misses): an empty slot takes the free list's top.
    #[inline(always)]
    fn push_slot(&mut self, i: usize, key: u128, item: T) {
        let h = self.heads[i];
        let empty = h == NIL;
        let c = if empty { self.free[self.free_top - 1] } else { h >> FILL_BITS };
        let n = if empty { 0 } else { h & FILL_MASK } as usize;
        if n == LANES {
            return self.push_far(key, item);
        }
        self.free_top -= empty as usize;
        let chunk = &mut self.chunks[c as usize];
        chunk.keys[n] = key;
        chunk.items[n] = item;
        self.heads[i] = c << FILL_BITS | (n as u32 + 1);
        self.occupied[i / 64] |= 1 << (i % 64);
        if self.free_top == 0 {
            self.grow();
        }
    }

    /// Keeps a free chunk at hand for the next empty slot.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        debug_assert_eq!(self.free_top, 0);
        self.chunks.push(Chunk { keys: [EMPTY; LANES], items: [self.filler; LANES] });
        // `free` has a place for every chunk, so a freed chunk is written without a check.
        self.free.resize(self.chunks.len(), 0);
        self.free[0] = (self.chunks.len() - 1) as u32;
        self.free_top = 1;
    }

    /// An item beyond the window, or (after a look ahead that found nothing due by its limit) before the
    /// current slot, where it goes into the current slot.
    #[cold]
    #[inline(never)]
    fn push_aside(&mut self, key: u128, item: T, s: u64) {
        if s < self.cursor {
            self.push_slot((self.cursor as usize) & (SLOTS - 1), key, item);
        } else {
            self.push_far(key, item);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_far(&mut self, key: u128, item: T) {
        self.far_min = self.far_min.min(key);
        self.far_slot = self.slot_of(self.far_min);
        self.far.push(Far(key, item));
    }

    /// The lane of the smallest of a chunk's keys: every lane compared, empty ones being `EMPTY`.
    #[inline(always)]
    fn min_lane(keys: &[u128; LANES]) -> usize {
        let mut best = 0;
        for j in 1..LANES {
            best = if keys[j] < keys[best] { j } else { best };
        }
        best
    }

    /// The next occupied slot after the current one within the window, as an absolute slot number.
    fn next_occupied(&self) -> Option<u64> {
        let start = ((self.cursor + 1) as usize) & (SLOTS - 1);
        let words = SLOTS / 64;
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        if first != 0 {
            return Some(self.cursor + 1 + (w0 * 64 + first.trailing_zeros() as usize - start) as u64);
        }
        for k in 1..=words {
            let w = (w0 + k) % words;
            let mut bits = self.occupied[w];
            if k == words {
                bits &= (1u64 << b0).wrapping_sub(1);
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                return Some(self.cursor + 1 + ((i + SLOTS - start) & (SLOTS - 1)) as u64);
            }
        }
        None
    }

    /// Where the smallest key is, moving the cursor on over empty slots; `None` when nothing is pending.
    #[inline(always)]
    fn find_min(&mut self) -> Option<Min> {
        loop {
            let h = self.heads[(self.cursor as usize) & (SLOTS - 1)];
            if h != NIL {
                let keys = &self.chunks[(h >> FILL_BITS) as usize].keys;
                let lane = Self::min_lane(keys);
                let key = keys[lane];
                // The heap's item can come first only if it is due by the current slot (the slot's items
                // are: an item before the cursor goes into the current slot).
                if self.far_slot <= self.cursor && self.far_min < key {
                    return Some(Min::Far);
                }
                return Some(Min::Lane { head: h, lane, key });
            }
            if !self.advance_fast() {
                return if self.far_min != EMPTY { Some(Min::Far) } else { None };
            }
        }
    }

    /// `advance`, with its common case inline: the next occupied slot is in the current bitmap word and
    /// the heap has nothing due before it.
    #[inline(always)]
    fn advance_fast(&mut self) -> bool {
        let start = ((self.cursor + 1) as usize) & (SLOTS - 1);
        let first = self.occupied[start / 64] & (!0u64 << (start % 64));
        if first != 0 {
            let next = self.cursor + 1 + (first.trailing_zeros() as usize - start % 64) as u64;
            if next < self.far_slot {
                self.cursor = next;
                return true;
            }
        }
        self.advance()
    }

    /// With the current slot empty: moves the cursor to the next occupied slot or to the heap's smallest
    /// item's slot, whichever is first. False if the cursor stays: the heap's smallest item is due by the
    /// current slot, or nothing is pending.
    #[inline(never)]
    fn advance(&mut self) -> bool {
        let far = if self.far_slot != u64::MAX { Some(self.far_slot) } else { None };
        if far.is_some_and(|f| f <= self.cursor) {
            return false;
        }
        let next = match (self.next_occupied(), far) {
            (Some(n), Some(f)) => n.min(f),
            (Some(n), None) => n,
            (None, Some(f)) => f,
            (None, None) => return false,
        };
        // The cursor may now sit on the heap's smallest item's slot with no chunk: the caller's loop comes
        // back here and finds the heap's item due.
        self.cursor = next;
        true
    }

    /// A cheap guess at the item that comes out next, for prefetching only (nothing moves): the smallest
    /// of the current slot's items, or of the next occupied slot's within the current bitmap word; `None`
    /// past that. It may be wrong (the heap may hold an earlier item; more may be scheduled first).
    #[inline(always)]
    pub fn next_hint(&self) -> Option<T> {
        let i = (self.cursor as usize) & (SLOTS - 1);
        let mut h = self.heads[i];
        if h == NIL {
            let start = (i + 1) & (SLOTS - 1);
            let ahead = self.occupied[start / 64] & (!0u64 << (start % 64));
            if ahead == 0 {
                return None;
            }
            h = self.heads[(start & !63) + ahead.trailing_zeros() as usize];
        }
        let chunk = &self.chunks[(h >> FILL_BITS) as usize];
        Some(chunk.items[Self::min_lane(&chunk.keys)])
    }

    /// The smallest key pending, if any.
    pub fn peek_key(&mut self) -> Option<u128> {
        match self.find_min()? {
            Min::Far => Some(self.far_min),
            Min::Lane { key, .. } => Some(key),
        }
    }

    /// Takes the item with the smallest key if its time (the key's high 64 bits) is at or before `limit`:
    /// that time and the item.
    #[inline(always)]
    pub fn pop_by(&mut self, limit: u64) -> Option<(u64, T)> {
        match self.find_min()? {
            Min::Far => self.pop_far(limit),
            Min::Lane { head, lane, key } => {
                let at = (key >> 64) as u64;
                if at > limit {
                    return None;
                }
                let c = (head >> FILL_BITS) as usize;
                let chunk = &mut self.chunks[c];
                let item = chunk.items[lane];
                let last = (head & FILL_MASK) as usize - 1;
                chunk.keys[lane] = chunk.keys[last];
                chunk.items[lane] = chunk.items[last];
                chunk.keys[last] = EMPTY;
                // No branch on whether the slot is now empty (as often as not).
                let i = (self.cursor as usize) & (SLOTS - 1);
                let gone = last == 0;
                self.heads[i] = if gone { NIL } else { head - 1 };
                self.occupied[i / 64] &= !((gone as u64) << (i % 64));
                self.free[self.free_top] = c as u32;
                self.free_top += gone as usize;
                self.len -= 1;
                Some((at, item))
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn pop_far(&mut self, limit: u64) -> Option<(u64, T)> {
        if (self.far_min >> 64) as u64 > limit {
            return None;
        }
        let Far(key, item) = self.far.pop().expect("far_min set");
        self.far_min = self.far.peek().map_or(EMPTY, |f| f.0);
        self.far_slot = if self.far_min == EMPTY { u64::MAX } else { self.slot_of(self.far_min) };
        self.len -= 1;
        Some(((key >> 64) as u64, item))
    }

    /// Bytes held: the slot heads and bitmap (fixed), the chunks (as many as slots ever occupied at once,
    /// since chunks are reused) and the heap.
    pub fn footprint_bytes(&self) -> usize {
        std::mem::size_of::<[u32; SLOTS]>()
            + std::mem::size_of::<[u64; SLOTS / 64]>()
            + self.chunks.capacity() * std::mem::size_of::<Chunk<T, LANES>>()
            + self.free.capacity() * std::mem::size_of::<u32>()
            + self.far.capacity() * std::mem::size_of::<Far<T>>()
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    /// A key at time `t` (ps) with tie-breaker `tie`.
    fn k(t: u64, tie: u64) -> u128 {
        (t as u128) << 64 | tie as u128
    }

    /// Slots of 1,024 ps.
    const BITS: u32 = 10;
    const SLOT: u64 = 1 << BITS;

    fn drain<const L: usize>(w: &mut Wheel<u32, L>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| w.pop_by(u64::MAX)).collect()
    }

    /// Pushes `(key, id)` in the order given and checks they come out sorted by key, on both lane counts.
    fn check_sorted(items: &[(u128, u32)]) {
        fn one<const L: usize>(items: &[(u128, u32)]) {
            let mut w = Wheel::<u32, L>::new(BITS, u32::MAX);
            for &(key, id) in items {
                w.push(key, id);
            }
            assert_eq!(w.len(), items.len());
            let mut want = items.to_vec();
            want.sort();
            let want: Vec<(u64, u32)> = want.into_iter().map(|(key, id)| ((key >> 64) as u64, id)).collect();
            assert_eq!(drain(&mut w), want, "{L} lanes");
            assert_eq!(w.len(), 0);
        }
        one::<2>(items);
        one::<4>(items);
    }

    #[test]
    fn the_hint_names_the_next_item_out_when_it_is_near_and_nothing_is_due_sooner() {
        // Items two lanes deep in the current slot, then in slots a few and many ahead (the hint looks no
        // further than the current bitmap word: 64 slots).
        let mut w = Wheel::<u32, 2>::new(BITS, u32::MAX);
        for (t, id) in [(SLOT / 2, 1), (SLOT / 4, 2), (3 * SLOT, 3), (5 * SLOT + 9, 4), (5 * SLOT + 3, 5), (40 * SLOT, 6)] {
            w.push(k(t, 0), id);
        }
        let mut hints = Vec::new();
        loop {
            let hint = w.next_hint();
            let Some((_, id)) = w.pop_by(u64::MAX) else { break };
            hints.push((hint, id));
        }
        // Before the first pop the cursor is on slot 0, which holds 2 then 1.
        assert_eq!(hints, [(Some(2), 2), (Some(1), 1), (Some(3), 3), (Some(5), 5), (Some(4), 4), (Some(6), 6)]);
        assert_eq!(w.next_hint(), None);
        let mut far = Wheel::<u32, 2>::new(BITS, u32::MAX);
        far.push(k(200 * SLOT, 0), 7);
        assert_eq!(far.next_hint(), None, "beyond the bitmap word");
    }

    #[test]
    fn equal_times_come_out_by_tie_breaker_whatever_the_order_pushed() {
        // Five items at one instant, pushed in descending tie order (more than either lane count).
        let t = 7 * SLOT + 100;
        let items: Vec<(u128, u32)> = (0..5u32).rev().map(|i| (k(t, 10 + i as u64), i)).collect();
        check_sorted(&items);
        // Two items at one instant and one before it in the same slot.
        check_sorted(&[(k(t, 2), 0), (k(t, 1), 1), (k(t - 1, 9), 2)]);
    }

    #[test]
    fn items_on_either_side_of_a_slot_boundary_come_out_in_order() {
        // The last picosecond of a slot, the first of the next, and the next one's end; and a limit that
        // falls exactly on the boundary takes the first but not the second.
        let b = 3 * SLOT;
        check_sorted(&[(k(b, 0), 0), (k(b - 1, 0), 1), (k(b + SLOT - 1, 0), 2), (k(b + SLOT, 0), 3)]);
        let mut w = Wheel::<u32, 2>::new(BITS, u32::MAX);
        w.push(k(b, 0), 0);
        w.push(k(b - 1, 0), 1);
        assert_eq!(w.pop_by(b - 1), Some((b - 1, 1)));
        assert_eq!(w.pop_by(b - 1), None);
        assert_eq!(w.pop_by(b), Some((b, 0)));
        assert_eq!(w.pop_by(u64::MAX), None);
    }

    #[test]
    fn a_slot_with_more_items_than_lanes_gives_them_all_in_order() {
        // Nine items in one slot, pushed out of order: the lanes fill and the rest go to the heap; the heap's
        // items come out between the lanes' ones where their keys fall. Then more once some are taken.
        let t = 5 * SLOT;
        let order = [4u32, 8, 0, 6, 2, 7, 1, 5, 3];
        let items: Vec<(u128, u32)> = order.iter().map(|&i| (k(t + i as u64 * 10, 0), i)).collect();
        check_sorted(&items);
        let mut w = Wheel::<u32, 2>::new(BITS, u32::MAX);
        for &(key, id) in &items {
            w.push(key, id);
        }
        let first: Vec<u32> = (0..3).map(|_| w.pop_by(u64::MAX).unwrap().1).collect();
        assert_eq!(first, [0, 1, 2]);
        w.push(k(t + 25, 0), 100);
        w.push(k(t + 35, 0), 101);
        let rest: Vec<u32> = drain(&mut w).into_iter().map(|(_, id)| id).collect();
        assert_eq!(rest, [100, 3, 101, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn items_beyond_the_window_come_out_in_order_with_the_near_ones() {
        // The window is SLOTS slots from the cursor: an item exactly at its end, one just inside, ones far
        // beyond (a retransmission timer) and near ones, pushed mixed; then near items pushed once the
        // cursor has moved to the far ones.
        let w_end = SLOTS as u64 * SLOT;
        let items = [
            (k(w_end, 0), 0),
            (k(w_end - 1, 0), 1),
            (k(40 * w_end + 3, 0), 2),
            (k(5, 0), 3),
            (k(w_end + SLOT, 0), 4),
            (k(SLOT, 0), 5),
            (k(3 * w_end, 0), 6),
        ];
        check_sorted(&items);
        let mut w = Wheel::<u32, 2>::new(BITS, u32::MAX);
        for &(key, id) in &items {
            w.push(key, id);
        }
        let got: Vec<u32> = (0..5).map(|_| w.pop_by(u64::MAX).unwrap().1).collect();
        assert_eq!(got, [3, 5, 1, 0, 4]);
        // Now at w_end + SLOT: a near item before the 3 * w_end one, and one at the same instant as it.
        w.push(k(w_end + 2 * SLOT, 0), 7);
        w.push(k(3 * w_end, 1), 8);
        let rest: Vec<u32> = drain(&mut w).into_iter().map(|(_, id)| id).collect();
        assert_eq!(rest, [7, 6, 8, 2]);
    }

    #[test]
    fn pushes_at_the_instant_just_taken_and_before_a_look_ahead_come_out_next() {
        // Take an item at t, then push others at t (before and after the remaining one by tie) as an
        // event's handling does; then look ahead past everything due (pop_by returns None and the cursor
        // has moved to the next item's slot) and push an item due before that slot.
        let t = 9 * SLOT + 7;
        let mut w = Wheel::<u32, 2>::new(BITS, u32::MAX);
        w.push(k(t, 5), 0);
        w.push(k(t, 8), 1);
        w.push(k(t + 50 * SLOT, 0), 2);
        assert_eq!(w.pop_by(t), Some((t, 0)));
        w.push(k(t, 6), 3);
        w.push(k(t, 9), 4);
        w.push(k(t, 7), 5);
        let at_t: Vec<u32> = (0..4).map(|_| w.pop_by(t).unwrap().1).collect();
        assert_eq!(at_t, [3, 5, 1, 4]);
        assert_eq!(w.pop_by(t + 10 * SLOT), None, "the next item is beyond the limit");
        w.push(k(t + 10 * SLOT, 0), 6);
        w.push(k(t + 1, 0), 7);
        let rest: Vec<u32> = drain(&mut w).into_iter().map(|(_, id)| id).collect();
        assert_eq!(rest, [7, 6, 2]);
    }

    #[test]
    fn matches_a_sorted_reference_under_random_pushes_pops_and_limits() {
        fn run<const L: usize>(seed: u64) {
            let mut rng = crate::rng::Rng::new(seed);
            let mut w = Wheel::<u32, L>::new(BITS, u32::MAX);
            let mut reference = std::collections::BTreeMap::new();
            let mut now = 0u64;
            for id in 0..40_000u32 {
                if rng.below(2) == 0 || reference.is_empty() {
                    // Delays: the same instant (often: ties), within a slot, a few slots, beyond the window.
                    let delay = match rng.below(6) {
                        0 | 1 => 0,
                        2 => rng.below(SLOT as usize) as u64,
                        3 => rng.below(20 * SLOT as usize) as u64,
                        4 => rng.below(1 << 30) as u64,
                        _ => SLOTS as u64 * SLOT + rng.below(1 << 20) as u64,
                    };
                    let key = k(now + delay, id as u64);
                    w.push(key, id);
                    reference.insert(key, id);
                } else {
                    let limit = if rng.below(4) == 0 { now + rng.below(8 * SLOT as usize) as u64 } else { u64::MAX };
                    let want = reference.first_key_value().map(|(&k, &v)| (k, v)).filter(|&(k, _)| (k >> 64) as u64 <= limit);
                    let got = w.pop_by(limit);
                    assert_eq!(got, want.map(|(key, id)| ((key >> 64) as u64, id)), "{L} lanes, seed {seed}");
                    if let Some((key, _)) = want {
                        reference.remove(&key);
                        now = (key >> 64) as u64;
                    }
                }
                assert_eq!(w.len(), reference.len());
            }
            assert_eq!(drain(&mut w), reference.into_iter().map(|(key, id)| ((key >> 64) as u64, id)).collect::<Vec<_>>());
        }
        for seed in 1..=3 {
            run::<2>(seed);
            run::<4>(seed);
        }
    }
}
