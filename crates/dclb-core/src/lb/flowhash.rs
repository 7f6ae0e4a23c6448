//! The one hash dclb applies to flow keys: deterministic, cheap, and salted where a switch hashes.
//!
//! A flow key is a `u128`: a packet's exact 5-tuple ([`Packet::five_tuple`](crate::packet::Packet::five_tuple))
//! or any other number that names a flow (a host's flow id). Two things hash keys:
//!
//! * switches that pick among `n` candidates or table slots by hash (ECMP, hashed flowlet tables):
//!   [`salted_index`], with the switch's own salt so that tiers do not polarise;
//! * exact per-flow maps ([`FlowMap`]), whose hasher only places entries in memory.
//!
//! std's default `HashMap` hasher is SipHash with keys drawn at random per process: lookups stay correct, but
//! anything that ever followed the map's internal order would differ from run to run. dclb therefore never
//! uses it for flow state; every per-flow map is a [`FlowMap`], hashed with [`digest`] (`hash.rs`, below
//! packets, which record their 5-tuple's digest when made).

pub use crate::hash::digest;
use crate::rng::mix64;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The slot among `n` that `key` maps to under `salt` (`n > 0`): uniform over the slots, and independent
/// between salts. Multiply-shift rather than modulo, so that every `n` is as uniform as a power of two.
#[inline]
pub fn salted_index(key: u128, salt: u64, n: usize) -> usize {
    salted_digest_index(digest(key), salt, n)
}

/// [`salted_index`] of a key whose [`digest`] is `d`.
#[inline]
pub fn salted_digest_index(d: u64, salt: u64, n: usize) -> usize {
    let h = mix64(d ^ salt);
    ((h as u128 * n as u128) >> 64) as usize
}

/// The [`Hasher`] of a [`FlowMap`]: the [`digest`] of the `u128` key.
#[derive(Default, Clone, Copy)]
pub struct FlowHasher(u64);

impl Hasher for FlowHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write_u128(&mut self, key: u128) {
        self.0 = digest(key);
    }
    fn write(&mut self, _bytes: &[u8]) {
        unreachable!("a FlowMap is keyed by u128 only")
    }
}

/// Per-flow state looked up by a `u128` flow key, hashed deterministically.
pub type FlowMap<V> = HashMap<u128, V, BuildHasherDefault<FlowHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salted_indices_are_uniform_and_differ_between_salts() {
        let (n, keys) = (5usize, 50_000u128);
        let mut count = [0u32; 5];
        let mut same = 0;
        for k in 0..keys {
            // Keys differing only in their high half (as 5-tuples of different hosts do) must spread too.
            let key = k << 72 | 80 << 8 | 6;
            let i = salted_index(key, 0x1234, n);
            count[i] += 1;
            same += (i == salted_index(key, 0xBEEF, n)) as u32;
        }
        assert!(count.iter().all(|&c| (9_500..10_500).contains(&c)), "{count:?}");
        assert!((9_500..10_500).contains(&same), "two salts agree on {same} of {keys} keys, about 1/5 expected");
    }

    #[test]
    fn a_packets_recorded_digest_picks_what_its_5_tuple_picks() {
        use crate::packet::{Packet, PacketKind};
        let mut p = Packet::new(PacketKind::Data, crate::ids::FlowId(3), crate::ids::HostId(17), crate::ids::HostId(42));
        (p.sport, p.dport) = (1000, 80);
        let salt = 0xABCD;
        for n in 2..9 {
            let want = salted_index(p.five_tuple(), salt, n);
            p.tuple = 0;
            assert_eq!(salted_digest_index(p.tuple_digest(), salt, n), want, "computed, {n} candidates");
            p.tuple = digest(p.five_tuple());
            assert_eq!(salted_digest_index(p.tuple_digest(), salt, n), want, "recorded, {n} candidates");
        }
    }

    #[test]
    fn a_flow_map_hashes_the_digest() {
        let mut h = FlowHasher::default();
        h.write_u128(7 << 64 | 9);
        assert_eq!(h.finish(), digest(7 << 64 | 9));
        let mut m: FlowMap<u32> = FlowMap::default();
        m.insert(1 << 100, 3);
        assert_eq!(m.get(&(1 << 100)), Some(&3));
        assert_eq!(m.get(&1), None);
    }
}
