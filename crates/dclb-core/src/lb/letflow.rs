//! LetFlow: flowlet switching with a uniformly random path for every new flowlet.
//!
//! **Rule.** A switch with several next hops remembers, per flow, the port of the flow's current flowlet and
//! when it last saw a packet of the flow. A packet that follows the flow's previous packet within the
//! flowlet timeout continues the flowlet on the same port; after a longer gap the packet starts a new
//! flowlet on a port drawn uniformly at random (Vanini et al., NSDI'17; baselines.md §5 and §0.4a). LetFlow
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
//!   gap ends a flowlet somewhere between one and two timeouts, depending on the sweep's phase.
//! * *Failures.* If the port of an active flowlet is no longer a candidate (its link, or the spine's way
//!   down, failed), the packet starts a new flowlet.
//! * *Memory.* With the exact table, entries idle for longer than the timeout are deleted by a periodic
//!   sweep (every `max(timeout, 1 ms)`). This only frees memory: an expired entry and a missing one
//!   lead to the same random draw.
//!
//! **Defaults.**
//! * `flowlet_timeout_us` = 500: the Hermes authors' ns-3 driver (`letFlowFlowletTimeout`) and README, and
//!   the value TR uses for LetFlow (baselines.md §5). Other values in use: 50 µs (the ns-3 class default),
//!   100 µs (ConWeave's code, at 100 Gbps). MDTLB's Table 5 lists a 5 ms flowlet timeout for its runs (as an
//!   MDTLB parameter; it does not say whether its LetFlow used it): a reproduction of MDTLB sets it here.
//! * `table_size` = 0 (exact per-5-tuple table), as both public simulators key on the exact flow.
//! * `flowlet_clock` = "timestamp", as both public simulators do (baselines.md §0.4a).

use super::PacketMut;
use super::flowhash::{salted_index, FlowMap};
use super::params::{param_choice, scheme_params};
use super::scheme::{per_switch, reflect_path_and_class, Placement, SchemeSpec};
use super::{Decision, SwitchBalancer, SwitchCx};
use crate::units::Time;

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
        #[source = "Hermes authors' ns-3 driver and README (500 us), TR's LetFlow setting; baselines.md §5"]
        flowlet_timeout_us: Time = 500.0,
        /// flowlet table entries indexed by a 5-tuple hash (colliding flows share an entry); 0 = exact per-flow
        /// table
        #[source = "public simulators key on the exact flow (baselines.md §0.4a)"]
        table_size: usize in 0..=100_000_000 = 0,
        /// timestamp: gap <= timeout continues; age_bit: valid+age bits swept every timeout (ends after 1-2
        /// timeouts)
        #[source = "public simulators use timestamps; hardware age bits as in CONGA (baselines.md §0.4a)"]
        flowlet_clock: FlowletClock = FlowletClock::Timestamp,
    }
}

param_choice! {
    /// How LetFlow's table tells that a flowlet is still active.
    pub enum FlowletClock {
        Timestamp = "timestamp",
        AgeBit = "age_bit",
    }
}

/// One flowlet table entry.
#[derive(Copy, Clone, Debug)]
struct Entry {
    port: u32,
    last_seen: Time,
    valid: bool,
    /// Age bit (only with the age-bit clock): set by a sweep, cleared by a packet.
    age: bool,
}

const EMPTY: Entry = Entry { port: 0, last_seen: Time::ZERO, valid: false, age: false };

enum Table {
    /// One entry per exact 5-tuple (looked up, never iterated for decisions).
    Exact(FlowMap<Entry>),
    /// A fixed array indexed by a salted hash of the 5-tuple.
    Hashed(Vec<Entry>),
}

/// The LetFlow balancer of one switch.
pub struct LetFlow {
    timeout: Time,
    age_bit: bool,
    salt: u64,
    table: Table,
}

impl LetFlow {
    /// `table_size` 0 keys the table on the exact 5-tuple; otherwise it has that many hashed entries.
    pub fn new(p: &LetFlowParams, salt: u64) -> LetFlow {
        let table = if p.table_size == 0 { Table::Exact(FlowMap::default()) } else { Table::Hashed(vec![EMPTY; p.table_size]) };
        LetFlow { timeout: p.flowlet_timeout_us, age_bit: p.flowlet_clock == FlowletClock::AgeBit, salt, table }
    }

    /// Live flowlet entries (valid ones), for tests and overhead listings.
    pub fn entries(&self) -> usize {
        match &self.table {
            Table::Exact(m) => m.values().filter(|e| e.valid).count(),
            Table::Hashed(v) => v.iter().filter(|e| e.valid).count(),
        }
    }

    fn sweep_period(&self) -> Time {
        if self.age_bit {
            self.timeout.max(Time::from_ns(1))
        } else {
            self.timeout.max(Time::from_us(1000))
        }
    }
}

impl SwitchBalancer for LetFlow {
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[u32]) -> Decision {
        if candidates.len() == 1 {
            return Decision::Forward(candidates[0]);
        }
        let key = pkt.five_tuple();
        let e = match &mut self.table {
            Table::Exact(m) => m.entry(key).or_insert(EMPTY),
            Table::Hashed(v) => {
                let i = salted_index(key, self.salt, v.len());
                &mut v[i]
            }
        };
        let fresh = if self.age_bit { e.valid } else { e.valid && cx.now.saturating_sub(e.last_seen) <= self.timeout };
        if !(fresh && candidates.contains(&e.port)) {
            e.port = candidates[cx.rng.below(candidates.len())];
        }
        e.valid = true;
        e.age = false;
        e.last_seen = cx.now;
        Decision::Forward(e.port)
    }

    fn on_timer(&mut self, cx: &mut SwitchCx) {
        let (now, timeout) = (cx.now, self.timeout);
        match (&mut self.table, self.age_bit) {
            (Table::Exact(m), true) => m.retain(|_, e| {
                let keep = !e.age;
                e.age = true;
                keep
            }),
            (Table::Exact(m), false) => m.retain(|_, e| now.saturating_sub(e.last_seen) <= timeout),
            (Table::Hashed(v), true) => {
                for e in v.iter_mut().filter(|e| e.valid) {
                    if e.age {
                        e.valid = false;
                    }
                    e.age = true;
                }
            }
            (Table::Hashed(_), false) => {}
        }
    }

    fn timer_period(&self) -> Option<Time> {
        match (&self.table, self.age_bit) {
            (Table::Hashed(_), false) => None,
            _ => Some(self.sweep_period()),
        }
    }

    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.table {
                Table::Exact(m) => m.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<Entry>()),
                Table::Hashed(v) => v.len() * std::mem::size_of::<Entry>(),
            }
    }
}
