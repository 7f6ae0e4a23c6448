//! Switch side of edge schemes: follow the path tag the sending host wrote.
//!
//! A host edge balancer (Presto, Hermes, Clove, MDTLB) writes the source leaf's uplink index into
//! `pkt.lb.path`. The source leaf forwards on that uplink if it is a working candidate; a spine with parallel
//! links takes the link with the same link number. Untagged packets (ACKs unless the receiving host routes
//! them, `ack_routing = "edge"`; SYNs, probe replies, same-leaf traffic) and tags that name a failed path fall
//! back to ECMP, which is what a real fabric does with traffic it cannot steer. An ACK's tag is an uplink of
//! its own source leaf, the data receiver's, so the rule is the same for it.

use super::PacketMut;
use super::ecmp::flow_hash_index;
use super::{Decision, SwitchBalancer, SwitchCx, SwitchKind};
use crate::ids::PortId;
use crate::packet::NO_PATH;

pub struct SourceRoute {
    salt: u64,
}

impl SourceRoute {
    pub fn new(salt: u64) -> SourceRoute {
        SourceRoute { salt }
    }
}

impl SwitchBalancer for SourceRoute {
    fn hooks(&self) -> super::Hooks {
        super::Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if pkt.lb.path != NO_PATH {
            let tag = pkt.lb.path as u32;
            let lpp = cx.facts.links_per_pair;
            let hit = match cx.me.kind {
                SwitchKind::Leaf => candidates.iter().copied().find(|&p| cx.ports.uplink_index(p) == Some(tag)),
                SwitchKind::Spine => candidates.iter().copied().find(|&p| cx.ports.slot(p) % lpp == tag % lpp),
            };
            if let Some(p) = hit {
                return Decision::Forward(p);
            }
        }
        Decision::Forward(candidates[flow_hash_index(pkt, self.salt, candidates.len())])
    }
}
