//! What an event handler is given besides its own side's state: the time, a hold on the event queue that
//! can only add events, and the packet arena (which also keeps the wire-byte books).
//!
//! ```text
//!  sim.rs (the loop) ── pops an event ──► Cx { now, schedule, packets } ──► the side that owns the event:
//!                                           network (switch.rs: ports, switches, balancers)
//!                                           host stack (host.rs: flows, TCP ends, edge balancers)
//! ```
//!
//! Entities never touch the global queue: a handler pushes the events it wants through [`Schedule`]; only
//! the loop takes events out, in the canonical order of `sched.rs`. Random streams are not in the context:
//! each switch, edge and port draws from its own (`rng.rs`), so one entity's draws never shift another's.
//! The routing facts belong to the network, and the host stack reads them through it.

use crate::packet::PacketArena;
use crate::sched::Schedule;
use crate::units::Time;

/// A handler's context (see the module doc).
pub struct Cx<'a> {
    /// The time of the event being handled.
    pub now: Time,
    pub schedule: Schedule<'a>,
    pub pkts: &'a mut PacketArena,
}
