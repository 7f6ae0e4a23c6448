//! Typed ids: one newtype per kind of thing the engine numbers, so that a host cannot be passed where a
//! port goes, nor a node compared with a leaf.
//!
//! ```text
//!  NodeId   every node: hosts 0..H, then leaves, then spines        ─┐
//!  HostId   a host's number (0..H)                                   │ conversions between kinds:
//!  LeafId   a leaf's number (0..L)                                   │ FabricFacts (node numbering, a
//!  SpineId  a spine's number (0..S)                                  │ host's leaf) and Fabric (port
//!  SwitchIndex  a switch among all switches, leaves then spines      │ numbering), nowhere else
//!  PortId   every port (one direction of a link), numbered globally ─┘
//!  FlowId   a flow's index in the run's flow list
//! ```
//!
//! Each is `#[repr(transparent)]` over the integer the engine used before (`u32`), so a packet or an event
//! keeps its layout and a comparison or an index costs what it did. An id converts to a slice index with
//! [`index`](NodeId::index) and prints as its number (`Display`). There is no arithmetic on ids and no
//! `From` between kinds: where one kind leads to another (a host's leaf, a leaf's node, a port's owner as a
//! switch) the fabric says so, in [`crate::fabric::FabricFacts`] and [`crate::fabric::Fabric`]. The raw
//! number (`.0`) is for the boundaries: the config, the packed events, the result tables.

macro_rules! ids {
    ($($(#[doc = $doc:literal])* $name:ident;)+) => {$(
        $(#[doc = $doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into a table of its kind.
            #[inline(always)]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    )+};
}

ids! {
    /// A node of the fabric: hosts first, then leaves, then spines (see [`crate::fabric`]).
    NodeId;
    /// One direction of a link, numbered globally; a node's ports are contiguous.
    PortId;
    /// A host, numbered from 0; a host's leaf is [`FabricFacts::leaf_of_host`](crate::fabric::FabricFacts::leaf_of_host).
    HostId;
    /// A leaf switch, numbered from 0.
    LeafId;
    /// A spine switch, numbered from 0.
    SpineId;
    /// A switch among all switches, leaves first and then spines: the index of its balancer.
    SwitchIndex;
    /// A flow, by its place in the run's flow list (sorted by start time).
    FlowId;
}

impl PortId {
    /// No port: the ingress of a packet made at the node itself (in [`crate::sched::Event::Arrive`]).
    pub const NONE: PortId = PortId(u32::MAX);
}

impl FlowId {
    /// No flow: probes and their replies belong to none.
    pub const NONE: FlowId = FlowId(u32::MAX);

    /// The flow as a key of a per-flow map or table (`lb::flowhash`, `lb::flowtable`).
    #[inline]
    pub const fn key(self) -> u128 {
        self.0 as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_integer_in_layout_index_and_print() {
        assert_eq!(std::mem::size_of::<PortId>(), 4);
        assert_eq!(std::mem::align_of::<HostId>(), 4);
        assert_eq!(LeafId(7).index(), 7);
        assert_eq!(format!("{} {:?}", PortId(12), HostId(3)), "12 HostId(3)");
        assert!(FlowId(2) < FlowId(10));
    }
}
