//! LetFlow: flowlet switching with a uniformly random path for every new flowlet.
//!
//! **Rule.** A switch with several next hops remembers, per flow, the port of the flow's current flowlet and
//! when it last saw a packet of the flow. A packet that follows the flow's previous packet within the
//! flowlet timeout continues the flowlet on the same port; after a longer gap the packet starts a new
//! flowlet on a port drawn uniformly at random (Vanini et al., NSDI'17, [LetFlow]). LetFlow
//! needs no feedback: flowlets on a congested path see larger gaps (TCP slows down, packets are lost), so
//! they end sooner and are redrawn, while flowlets on good paths keep going. Load drifts away from bad paths.
//!
//! **Choices.**
//! * *Where.* Every switch runs it, spines included (as in the paper and in the Hermes authors' ns-3 code).
//!   A switch with a single candidate forwards without touching its table, so in a fabric with one link per
//!   leaf-spine pair only the source leaf decides; a spine with parallel links to the destination leaf
//!   picks among them the same way.
//! * *Flow key.* The exact 5-tuple (hosts, ports, protocol), so an ACK stream, whose tuple is reversed, is a
//!   flow of its own and forms its own flowlets at the leaf it leaves from. Hardware indexes a fixed table by
//!   a hash of the 5-tuple instead; `table_size` > 0 models that (flows that collide share one entry and
//!   therefore one flowlet).
//! * *Clock.* Exact timestamps by default (`flowlet_clock = "timestamp"`): a gap of at most the timeout
//!   continues the flowlet, as in both public simulator implementations. `"age_bit"` models hardware
//!   that keeps only a valid bit and an age bit per entry: a sweep every timeout sets the age bit of valid
//!   entries and invalidates those whose bit was already set, and a packet clears its entry's bit, so an idle
//!   gap ends a flowlet somewhere between one and two timeouts, depending on the sweep's phase. Table and
//!   clocks are the shared [`FlowTable`]'s.
//! * *Failures.* If the port of an active flowlet is no longer a candidate (its link, or the spine's way
//!   down, failed), the packet starts a new flowlet.
//! * *Memory.* With the exact table, entries idle for longer than the timeout are deleted by the table's
//!   periodic sweep (every `max(timeout, 1 ms)`). This only frees memory: an expired entry and a missing one
//!   lead to the same random draw.
//!
//! **Defaults.**
//! * `flowlet_timeout_us` = 500: the Hermes authors' ns-3 driver (`letFlowFlowletTimeout`) and README, and
//!   the value TR uses for LetFlow. Other values in use: 50 µs (the ns-3 class default),
//!   100 µs (ConWeave's code, at 100 Gbps). MDTLB's Table 5 lists a 5 ms flowlet timeout for its runs (as an
//!   MDTLB parameter; it does not say whether its LetFlow used it): a reproduction of MDTLB sets it here.
//! * `table_size` = 0 (exact per-5-tuple table), as both public simulators key on the exact flow.
//! * `flowlet_clock` = "timestamp", as both public simulators do ([LB], [CW]).

use super::flowtable::{Clock, FlowTable, Timeout};
use super::params::{scheme_params, LB_FABRIC_RTT_US};
use super::scheme::{per_switch, reflect_path_and_class, Placement, SchemeSpec};
use super::{Decision, PacketMut, SwitchBalancer, SwitchCx};
use crate::units::Time;
use crate::ids::PortId;

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "letflow",
    placement: Placement::Switch,
    granularity: "flowlet",
    summary: "flowlet switching: each new flowlet takes a uniformly random next hop",
    params: LetFlowParams::SPECS,
    install: |cx, p| {
        let p = LetFlowParams::from_params(p);
        per_switch(cx.switches, |s| LetFlow::new(&p, s.salt))
    },
    reflect: reflect_path_and_class,
};

scheme_params! {
    /// LetFlow's parameters.
    pub struct LetFlowParams {
        /// a gap longer than this since the flow's previous packet starts a new flowlet
        #[source = "[LB] driver and README (500 us); TR's LetFlow setting"]
        #[rtt_us = LB_FABRIC_RTT_US]
        flowlet_timeout_us: Time = 500.0,
        /// flowlet table entries indexed by a 5-tuple hash (colliding flows share an entry); 0 = exact per-flow
        /// table
        #[source = "[LB] and [CW] key on the exact flow"]
        table_size: usize in 0..=100_000_000 = 0,
        /// timestamp: gap <= timeout continues; age_bit: valid+age bits swept every timeout (ends after 1-2
        /// timeouts)
        #[source = "[LB] and [CW] use timestamps; hardware age bits as in [CONGA]"]
        flowlet_clock: Clock = Clock::Timestamp,
    }
}

/// The LetFlow balancer of one switch.
pub struct LetFlow {
    flowlets: FlowTable,
}

impl LetFlow {
    /// `table_size` 0 keys the table on the exact 5-tuple; otherwise it has that many entries, hashed with the
    /// switch's `salt`.
    pub fn new(p: &LetFlowParams, salt: u64) -> LetFlow {
        let timeout = Timeout::Over(p.flowlet_timeout_us);
        let flowlets = match p.table_size {
            0 => FlowTable::exact(timeout, p.flowlet_clock),
            n => FlowTable::hashed(n, salt, timeout, p.flowlet_clock),
        };
        LetFlow { flowlets }
    }

    /// Flowlet entries the table holds, for tests and overhead listings.
    pub fn entries(&self) -> usize {
        self.flowlets.len()
    }
}

impl SwitchBalancer for LetFlow {
    fn hooks(&self) -> super::Hooks {
        super::Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        let (key, now) = (pkt.five_tuple(), cx.now);
        let port = match self.flowlets.live(key, now) {
            Some(e) if candidates.contains(&e.port) => e.port,
            _ => candidates[cx.rng.below(candidates.len())],
        };
        self.flowlets.record(key, port, now);
        Decision::Forward(port)
    }

    fn on_timer(&mut self, cx: &mut SwitchCx) {
        self.flowlets.sweep(cx.now);
    }

    fn timer_period(&self) -> Option<Time> {
        self.flowlets.sweep_period()
    }

    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.flowlets.state_bytes()
    }
}
