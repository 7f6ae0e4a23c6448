//! RPS, random packet spraying: every packet independently takes a uniformly random next hop.
//!
//! **Rule.** At every switch with several equal-cost next hops, pick one uniformly at random for each
//! packet, ACKs included (Dixit et al., INFOCOM'13, [RPS]).
//!
//! **Choices.** Plain TCP at the receiver by default (dupACK threshold 3, no resequencing buffer), since the
//! paper's point is that stock TCP copes on symmetric fabrics; `transport.reseq_timeout_us` adds a buffer.
//! Each switch draws from its own seeded stream.
//!
//! **Defaults.** None: RPS has no parameters.

use super::PacketMut;
use super::scheme::{per_switch, reflect_path_and_class, Placement, SchemeSpec};
use super::{Decision, SwitchBalancer, SwitchCx};
use crate::ids::PortId;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "rps",
    placement: Placement::Switch,
    granularity: "packet",
    summary: "random packet spraying: a uniformly random next hop per packet",
    params: &[],
    install: |cx, _| per_switch(cx.switches, |_| Rps),
    reflect: reflect_path_and_class,
};

pub struct Rps;

impl SwitchBalancer for Rps {
    fn hooks(&self) -> super::Hooks {
        super::Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, cx: &mut SwitchCx, _pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        Decision::Forward(candidates[cx.rng.below(candidates.len())])
    }
}
