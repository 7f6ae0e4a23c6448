//! What a scheme declares to the engine: its name, where it decides, its parameters, how to build its
//! balancers, and what a receiving host reflects into ACKs for it.
//!
//! Every scheme module defines one `pub const SPEC: SchemeSpec`; the registry list in `lb/mod.rs` collects
//! them.

use super::params::{ParamSpec, Params};
use super::{EdgeBalancer, SwitchBalancer, SwitchInfo};
use crate::fabric::FabricFacts;
use crate::packet::{class, LbHeader, Packet};

/// Where a scheme makes its decisions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// In switches (source leaf, possibly every hop).
    Switch,
    /// At the sending host, which tags packets with a path; the engine installs source routing
    /// ([`super::source_route::SourceRoute`]) at every switch.
    Edge,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Switch => "switch",
            Placement::Edge => "edge",
        }
    }
}

/// Context given to a scheme's constructors.
pub struct BuildCx<'a> {
    pub facts: &'a FabricFacts,
    /// Number of hosts in the fabric.
    pub hosts: u32,
    /// Every switch, leaves then spines.
    pub switches: &'a [SwitchInfo],
}

/// What a scheme installs: a balancer for every switch (a switch scheme, in the order of
/// [`BuildCx::switches`]) or one for every host (an edge scheme).
pub enum Installed {
    Switches(Vec<Box<dyn SwitchBalancer>>),
    Edges(Vec<Box<dyn EdgeBalancer>>),
}

/// What the receiving host copies from a data packet's balancer header into the ACK it sends back
/// (`data`: the arriving packet; `ack`: the ACK's header, fresh, so every field starts at its default).
/// This is the scheme's receiver side: feedback that travels host to host rides here.
pub type Reflect = fn(data: &Packet, ack: &mut LbHeader);

/// The default reflection: the path tag the data took (edge schemes learn which path an ACK speaks of)
/// and the best-effort class bit. Feedback slots start empty, so switch-to-switch feedback must be written
/// by switches.
pub fn reflect_path_and_class(data: &Packet, ack: &mut LbHeader) {
    ack.echo_path = data.lb.path;
    ack.class = data.lb.class & class::BEST_EFFORT;
}

pub struct SchemeSpec {
    pub name: &'static str,
    pub placement: Placement,
    /// Decision granularity, for listings: "flow", "flowlet", "packet", "flowcell".
    pub granularity: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    /// Builds the scheme's balancers: for every switch (placement `Switch`) or every host (`Edge`).
    pub install: fn(&BuildCx, &Params) -> Installed,
    /// The receiving host's part, see [`Reflect`].
    pub reflect: Reflect,
}

/// The same balancer built for every switch by `make`.
pub fn per_switch<B: SwitchBalancer + 'static>(switches: &[SwitchInfo], make: impl Fn(&SwitchInfo) -> B) -> Installed {
    Installed::Switches(switches.iter().map(|s| Box::new(make(s)) as Box<dyn SwitchBalancer>).collect())
}
