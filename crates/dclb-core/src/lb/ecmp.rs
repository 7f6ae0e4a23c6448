//! ECMP: every packet of a flow takes the same next hop, chosen by hashing its 5-tuple.
//!
//! **Rule.** At a switch with several equal-cost next hops, hash (source, destination, protocol, ports) with
//! the switch's own salt and take the candidate at `hash mod n`. The candidates are kept in port order, so
//! the choice is a pure function of the flow and the switch.
//!
//! **Choices.** The salt differs per switch (derived from the scenario seed and the switch id), which avoids
//! hash polarisation between tiers (per-switch seeds as in the ConWeave code [CW]; the Hermes ns-3 code [LB]
//! perturbs with the TTL instead, to the same effect). ACKs hash their own, reversed, 5-tuple, as a
//! real switch would. With a failed uplink the candidate list shrinks and flows rehash over what is left.
//!
//! **Defaults.** None: ECMP has no parameters.

use super::flowhash::salted_digest_index;
use super::PacketMut;
use super::scheme::{per_switch, reflect_path_and_class, Placement, SchemeSpec};
use super::{Decision, SwitchBalancer, SwitchCx};
use crate::packet::Packet;
use crate::ids::PortId;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "ecmp",
    placement: Placement::Switch,
    granularity: "flow",
    summary: "per-flow 5-tuple hash, salted per switch",
    params: &[],
    install: |cx, _| per_switch(cx.switches, |s| Ecmp { salt: s.salt }),
    reflect: reflect_path_and_class,
};

/// Index into `n` candidates for this packet's 5-tuple under `salt`.
#[inline]
pub fn flow_hash_index(pkt: &Packet, salt: u64, n: usize) -> usize {
    salted_digest_index(pkt.tuple_digest(), salt, n)
}

pub struct Ecmp {
    salt: u64,
}

impl Ecmp {
    pub fn new(salt: u64) -> Ecmp {
        Ecmp { salt }
    }
}

impl SwitchBalancer for Ecmp {
    fn hooks(&self) -> super::Hooks {
        super::Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, _cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        Decision::Forward(candidates[flow_hash_index(pkt, self.salt, candidates.len())])
    }
    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}
