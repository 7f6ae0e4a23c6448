//! The digest of a flow key: the one mix that names a flow by a number, below packets and balancers.
//!
//! A flow key is a `u128`: a packet's exact 5-tuple ([`Packet::five_tuple`](crate::packet::Packet::five_tuple))
//! or any other number that names a flow. A packet records the digest of its 5-tuple when the simulation
//! makes it ([`Packet::record_tuple`](crate::packet::Packet::record_tuple)); balancers hash digests with their
//! own salt and key their per-flow maps by it (`lb/flowhash.rs`). It lives here, not in `lb/`, so that
//! packets do not depend on the balancers that read them.

use crate::rng::mix64;

/// A 64-bit digest of a flow key: both halves mixed, so keys that differ in any bit spread apart.
#[inline]
pub fn digest(key: u128) -> u64 {
    mix64(key as u64 ^ mix64((key >> 64) as u64))
}
