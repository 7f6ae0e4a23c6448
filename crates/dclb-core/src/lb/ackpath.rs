//! The ACK path of an edge scheme: hashed by the switches (`ack_routing = "ecmp"`, the default), or chosen by
//! the receiving host's own balancer (`"edge"`).
//!
//! An edge scheme (Presto, Hermes, Clove, MDTLB) chooses the path of the data its host sends; by default the
//! ACKs that come back are untagged and the switches hash them like ECMP ([`super::source_route`]), as in the
//! public ns-3 code of the Hermes authors (`TLBReverseACK` off) and in the papers' evaluations. A real edge
//! (a hypervisor switch) also sends the ACKs of its guests' incoming flows, and may route them with what it
//! knows about its paths. With `ack_routing = "edge"`, the host that receives a flow's data picks the path of
//! each ACK it sends back towards the data sender's leaf, from its own view of its paths to that leaf: the
//! view its own data to that leaf built (its path table, its weights), never the data sender's state.
//!
//! # ACK legs
//!
//! The ACKs of one flow are a stream from the receiving host, routed as the scheme routes a stream of its own
//! data, in legs ([`AckLegs`]): an ACK keeps the path of the previous ACK of its flow, unless
//!
//! * it is the first ACK of the flow (or the first since the flow's leg was forgotten);
//! * the stream was idle for longer than the scheme's gap (its flowlet timeout, when it has one), as a new
//!   flowlet of data would be re-placed;
//! * the leg's path is no longer a candidate (the fabric's routing dropped it);
//! * the scheme starts a new leg by its own rule (Presto: a new flowcell of acknowledged data);
//! * **the ACKs of this leg are being lost**: the sender sends again bytes this host had already received
//!   and acknowledged, after a silence, or twice. A receiving host sees this in the data itself. A
//!   duplicate in the middle of a burst is what go-back-N after a data loss looks like (the segments after
//!   a refilled hole arrive again, in increasing order, right after the segment that fills it), or a
//!   spurious fast retransmission; but a duplicate that ends a silence of the flow longer than the scheme's
//!   flowlet timeout is the first packet of a sender whose retransmission timer fired although this host
//!   had acknowledged it (after a data loss the first packet after the timeout is the missing one, new),
//!   and the same bytes arriving again at or below the last duplicate's sequence number mean that the
//!   timer fired twice. Either is lost ACKs. The new leg avoids the path, and the scheme is told
//!   ([`LegStart::Lost`]) so that it may count the loss in its own view of the path (Hermes and MDTLB count
//!   it as a timeout on the path, as they count their own flows' timeouts). Presto, which has no flowlet
//!   timeout, judges by the repeat alone (one more retransmission timeout).
//!
//! A new leg takes the path the scheme's own rule gives for its data to that leaf (Hermes and MDTLB: the
//! placement of a new flow; Clove: the next flowlet by weighted round robin; Presto: the next turn of the
//! flow's round robin). A flow's leg is forgotten once the ACK of its last byte is sent.
//!
//! What travels in packets: only the data (its sequence numbers) and the tag the ACK carries. The data
//! sender's balancer still learns of its data's path from the ACK's echoed tag, as before.
//!
//! SYN-ACKs, probe replies and cancel notices stay hashed under either reading.

use super::flowhash::FlowMap;
use super::params::param_choice;
use crate::ids::{FlowId, HostId};
use crate::units::Time;

param_choice! {
    /// Who routes the ACKs a host sends for the flows it receives.
    pub enum AckRouting {
        /// The switches hash them (the reversed 5-tuple), as the papers' code does.
        Ecmp = "ecmp",
        /// The receiving host's edge balancer tags them with a path, from its own view of its paths.
        Edge = "edge",
    }
}

/// What the receiving host knows about the ACK it is about to send (the data it answers, its own TCP
/// receiver), for its edge balancer.
#[derive(Copy, Clone, Debug)]
pub struct AckView {
    /// The flow the ACK belongs to (another host's flow: this host receives its data).
    pub flow: FlowId,
    /// The data sender, where the ACK goes.
    pub to: HostId,
    /// The flow's size in bytes.
    pub size: u64,
    /// The cumulative acknowledgement the ACK carries.
    pub ack: u64,
    /// First byte of the data packet the ACK answers.
    pub seq: u64,
    /// The data packet brought nothing new: this host held every byte of it already.
    pub duplicate: bool,
}

impl AckView {
    /// Whether this ACK acknowledges the whole flow (its leg is forgotten after it).
    pub fn last(&self) -> bool {
        self.ack >= self.size
    }
}

/// Why a new leg starts, as [`AckLegs::route`] tells the scheme's pick.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LegStart {
    /// The flow's first ACK (or the first since its leg was forgotten).
    First,
    /// The stream was idle for longer than the gap, or the scheme's own rule asked for a new leg; `was` is
    /// the path of the leg that ends.
    Next { was: u16 },
    /// The leg's path is no longer among the candidates.
    Gone,
    /// The ACKs of the leg on `on` are being lost (module doc); the new leg should avoid it.
    Lost { on: u16 },
}

impl LegStart {
    /// The path a new leg should avoid if it has another choice.
    pub fn avoid(self) -> Option<u16> {
        match self {
            LegStart::Lost { on } => Some(on),
            _ => None,
        }
    }
}

/// One flow's ACK leg.
#[derive(Copy, Clone, Debug)]
pub struct Leg {
    pub path: u16,
    /// When its last ACK was routed.
    pub last_at: Time,
    /// The cumulative acknowledgement when the leg started (Presto counts its flowcells from it).
    pub from_ack: u64,
    /// Sequence number of the last duplicate data packet seen, `u64::MAX` before the first.
    dup_mark: u64,
}

/// The ACK legs of the flows one host receives (module doc).
pub struct AckLegs {
    /// An idle gap longer than this starts a new leg; `None`: idle gaps never do.
    gap: Option<Time>,
    /// A duplicate that ends a silence of the flow longer than this means lost ACKs at once; `None`: only a
    /// repeated duplicate does.
    silence: Option<Time>,
    legs: FlowMap<Leg>,
}

impl AckLegs {
    /// Legs that idle gaps longer than `gap` end, and whose ACKs are judged lost by a duplicate after a
    /// silence longer than `silence` or by a repeated duplicate (module doc).
    pub fn new(gap: Option<Time>, silence: Option<Time>) -> AckLegs {
        let positive = |t: Option<Time>| t.filter(|t| *t > Time::ZERO);
        AckLegs { gap: positive(gap), silence: positive(silence), legs: FlowMap::default() }
    }

    /// The leg of `flow`, if it has one.
    pub fn leg(&self, flow: FlowId) -> Option<&Leg> {
        self.legs.get(&flow.key())
    }

    /// The path for `ack` among `paths` (never empty). `next_leg` is the scheme's own rule for ending a live
    /// leg (given the leg); `pick` chooses the path of a new leg, told why it starts, and must return one of
    /// `paths`.
    pub fn route(&mut self, now: Time, ack: &AckView, paths: &[u16], next_leg: impl FnOnce(&Leg) -> bool, pick: impl FnOnce(LegStart) -> u16) -> u16 {
        let key = ack.flow.key();
        let start = match self.legs.get_mut(&key) {
            None => Some(LegStart::First),
            Some(leg) => {
                let after_silence = self.silence.is_some_and(|q| now.saturating_sub(leg.last_at) > q);
                let repeated = ack.duplicate && ((leg.dup_mark != u64::MAX && ack.seq <= leg.dup_mark) || after_silence);
                if ack.duplicate {
                    leg.dup_mark = ack.seq;
                }
                if !paths.contains(&leg.path) {
                    Some(LegStart::Gone)
                } else if repeated {
                    // Counted once: the next repeat must again come at or below a fresh duplicate.
                    leg.dup_mark = u64::MAX;
                    Some(LegStart::Lost { on: leg.path })
                } else if self.gap.is_some_and(|g| now.saturating_sub(leg.last_at) > g) || next_leg(leg) {
                    Some(LegStart::Next { was: leg.path })
                } else {
                    None
                }
            }
        };
        let path = match start {
            None => self.legs[&key].path,
            Some(why) => {
                let p = pick(why);
                debug_assert!(paths.contains(&p), "an ACK leg's pick must be a candidate");
                let dup_mark = self.legs.get(&key).map_or(u64::MAX, |l| l.dup_mark);
                self.legs.insert(key, Leg { path: p, last_at: now, from_ack: ack.ack, dup_mark });
                p
            }
        };
        if ack.last() {
            self.legs.remove(&key);
        } else if let Some(leg) = self.legs.get_mut(&key) {
            leg.last_at = now;
        }
        path
    }

    /// Memory held.
    pub fn state_bytes(&self) -> usize {
        self.legs.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<Leg>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u64, ack: u64, duplicate: bool) -> AckView {
        AckView { flow: FlowId(7), to: HostId(0), size: 100_000, ack, seq, duplicate }
    }

    /// A leg holds while ACKs come; an idle gap, a lost leg (a repeated duplicate) and a vanished path start
    /// new ones; one duplicate alone (go-back-N after a data loss) does not. Fails with the repeat test
    /// dropped (`repeated = ack.duplicate`): the first duplicate would already start a new leg.
    #[test]
    fn legs_hold_until_a_gap_a_repeat_of_duplicates_or_a_lost_path() {
        let mut legs = AckLegs::new(Some(Time::from_us(100)), None);
        let paths = [0u16, 1, 2, 3];
        let mut turn = 0u16;
        let mut route = |legs: &mut AckLegs, t: u64, a: AckView, paths: &[u16]| {
            let mut why = None;
            let p = legs.route(Time::from_us(t), &a, paths, |_| false, |w| {
                why = Some(w);
                turn += 1;
                turn % 4
            });
            (p, why)
        };
        assert_eq!(route(&mut legs, 0, ack(0, 1460, false), &paths), (1, Some(LegStart::First)));
        assert_eq!(route(&mut legs, 50, ack(1460, 2920, false), &paths), (1, None));
        // Idle for more than the gap: a new leg.
        assert_eq!(route(&mut legs, 200, ack(2920, 4380, false), &paths), (2, Some(LegStart::Next { was: 1 })));
        // Go-back-N after a data loss: duplicates in increasing order keep the leg.
        assert_eq!(route(&mut legs, 210, ack(1460, 4380, true), &paths), (2, None));
        assert_eq!(route(&mut legs, 220, ack(2920, 4380, true), &paths), (2, None));
        // The sender resends bytes at or below the last duplicate: this leg's ACKs are lost.
        assert_eq!(route(&mut legs, 230, ack(2920, 4380, true), &paths), (3, Some(LegStart::Lost { on: 2 })));
        // The path leaves the candidates: a new leg.
        assert_eq!(route(&mut legs, 240, ack(4380, 5840, false), &[0, 1, 2]), (0, Some(LegStart::Gone)));
        // The last ACK forgets the leg.
        route(&mut legs, 250, ack(98_540, 100_000, false), &paths);
        assert!(legs.leg(FlowId(7)).is_none());
    }

    /// With a silence threshold, a duplicate that ends a silence (the sender's timer fired although this host
    /// acknowledged) means lost ACKs at once; a duplicate right after new data (go-back-N after a data loss)
    /// does not. Fails with the silence ignored (the leg would stay on path 1).
    #[test]
    fn a_duplicate_after_a_silence_means_lost_acks() {
        let mut legs = AckLegs::new(None, Some(Time::from_us(100)));
        let paths = [0u16, 1, 2, 3];
        let mut k = 0u16;
        let mut route = |legs: &mut AckLegs, t: u64, a: AckView| legs.route(Time::from_us(t), &a, &paths, |_| false, |_| { k += 1; k });
        assert_eq!(route(&mut legs, 0, ack(0, 1460, false)), 1);
        // Silent for 5 ms, then the missing segment (new) and go-back-N's duplicates behind it: the leg holds.
        assert_eq!(route(&mut legs, 5000, ack(1460, 4380, false)), 1);
        assert_eq!(route(&mut legs, 5001, ack(2920, 4380, true)), 1);
        assert_eq!(route(&mut legs, 5002, ack(4380, 5840, false)), 1);
        // Silent again, and the sender resends bytes this host has acknowledged (above the last duplicate, so
        // not a repeat): its ACKs were lost.
        assert_eq!(route(&mut legs, 10_002, ack(4380, 5840, true)), 2);
    }
}
