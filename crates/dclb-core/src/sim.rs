//! The simulation: the state of one run and the loop that dispatches its events.
//!
//! ```text
//!  FlowStart ─► host stack (host.rs): sender fills its window (or sends its SYN) ─► packets into the NIC port
//!  port (port.rs) ─TxDone─► serialised ─Arrive (after propagation)─► next node
//!     switch (switch.rs): on_arrival ─► routing candidates ─► choose ─► port admits (drop-tail, ECN) ─►
//!                         on_enqueue ... on_departure at TxDone
//!     host (host.rs):     data ─► [resequencer] ─► TCP receiver ─► ACK (scheme's reflection) into the NIC
//!                         ACK  ─► TCP sender (+ edge balancer feedback) ─► more segments
//! ```
//!
//! This module holds the state and the dispatch loop only. Construction is in `build.rs`, the switch side
//! (routing, balancer hooks, ports) in `switch.rs`, the host stack in `host.rs`, and the result tables in
//! [`crate::metrics`]. Packets live in the arena; events carry indices. The retransmission timer of a flow
//! is one lazy event: the sender only records when it should fire, and an event that finds the deadline
//! moved reschedules itself, so an ACK never schedules anything for its timer.

use crate::fabric::{Fabric, NodeKind};
use crate::host::{EdgeState, Flow, HostParams};
use crate::metrics::Sampler;
use crate::lb::{Alarms, ProbeRequest, Reflect};
use crate::metrics::Results;
use crate::packet::{Packet, PacketArena};
use crate::sched::{Event, Scheduler};
use crate::switch::SwitchState;
use crate::traffic::SourceInfo;
use crate::transport::tcp::Segment;
use crate::transport::TcpParams;
use crate::units::Time;

pub struct Simulation {
    pub(crate) tp: TcpParams,
    pub(crate) host: HostParams,
    pub(crate) sched: Scheduler,
    pub(crate) pkts: PacketArena,
    pub(crate) fabric: Fabric,
    pub(crate) switches: Vec<SwitchState>,
    /// One edge balancer per host for edge schemes, empty otherwise.
    pub(crate) edges: Vec<EdgeState>,
    /// What the receiving host copies into ACKs for this run's scheme.
    pub(crate) reflect: Reflect,
    pub(crate) flows: Vec<Flow>,
    /// Payload bytes per (flow, source-leaf uplink), row-major with `uplinks` columns.
    pub(crate) uplinks: usize,
    pub(crate) uplink_bytes: Vec<u64>,
    pub(crate) horizon: Time,
    pub(crate) ended: u64,
    pub(crate) active: u64,
    pub(crate) peak_active: u64,
    /// Wire-byte conservation: created = delivered + dropped + in flight.
    pub(crate) created: u64,
    pub(crate) delivered: u64,
    pub(crate) dropped: u64,
    pub(crate) probes_sent: u64,
    pub(crate) sampler: Option<Sampler>,
    pub(crate) infos: Vec<SourceInfo>,
    pub(crate) finished: bool,
    // scratch buffers, reused
    pub(crate) segs: Vec<Segment>,
    pub(crate) released: Vec<u32>,
    pub(crate) probes: Vec<ProbeRequest>,
    pub(crate) alarms: Alarms,
}

impl Simulation {
    pub fn now(&self) -> Time {
        self.sched.now()
    }
    pub fn events(&self) -> u64 {
        self.sched.processed()
    }
    pub fn flows_total(&self) -> usize {
        self.flows.len()
    }
    pub fn flows_ended(&self) -> u64 {
        self.ended
    }
    pub fn is_finished(&self) -> bool {
        self.finished
    }
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }
    pub fn flow(&self, i: usize) -> &Flow {
        &self.flows[i]
    }
    /// The kind of a node (for tests and tools).
    pub fn node_kind(&self, node: u32) -> NodeKind {
        self.fabric.nodes[node as usize].kind
    }
    /// Next-hop candidates are exposed for tests that check routing.
    pub fn paths(&self, src_leaf: u32, dst_leaf: u32) -> Vec<u16> {
        self.fabric.paths(src_leaf, dst_leaf).to_vec()
    }

    /// Runs until the end or until `budget` more events have been processed. Returns true when finished.
    pub fn run(&mut self, budget: u64) -> bool {
        let limit = self.sched.processed().saturating_add(budget);
        while !self.finished && self.sched.processed() < limit {
            match self.sched.peek_time() {
                Some(t) if t <= self.horizon => {}
                _ => {
                    self.finished = true;
                    break;
                }
            }
            let (now, ev) = self.sched.pop().expect("peeked");
            self.dispatch(now, ev);
            if self.ended as usize == self.flows.len() && self.horizon == Time::MAX {
                self.finished = true;
            }
        }
        self.finished
    }

    /// Runs to the end.
    pub fn run_to_end(&mut self) {
        while !self.run(u64::MAX) {}
    }

    fn dispatch(&mut self, now: Time, ev: Event) {
        match ev {
            Event::FlowStart { flow } => self.start_flow(now, flow),
            Event::Arrive { node, pkt, via } => {
                if node < self.fabric.hosts {
                    self.host_receive(now, node, pkt)
                } else {
                    self.switch_receive(now, node, pkt, via)
                }
            }
            Event::TxDone { port } => self.tx_done(now, port),
            Event::Rto { flow } => self.rto_event(now, flow),
            Event::Reseq { flow } => self.reseq_event(now, flow),
            Event::UdpTick { flow } => self.udp_tick(now, flow),
            Event::SwitchTimer { node } => self.switch_timer(now, node),
            Event::SwitchAlarm { node, token } => self.switch_alarm(now, node, token),
            Event::EdgeTimer { host } => self.edge_timer(now, host),
            Event::EdgeAlarm { host, token } => self.edge_hook(now, host, |lb, cx, _| lb.on_alarm(cx, token)),
            Event::Sample => self.sample(now),
        }
    }

    /// Puts a new packet in the arena, counting its bytes for conservation.
    pub(crate) fn new_packet(&mut self, p: Packet) -> u32 {
        self.created += p.wire_bytes as u64;
        self.pkts.alloc(p)
    }

    /// Builds the result tables. Call after the run has finished (or to inspect a partial run).
    pub fn results(&mut self) -> Results {
        crate::metrics::collect(self)
    }

    /// Approximate bytes the engine holds for this run (flows, packets, queues, events, balancer state).
    pub fn engine_bytes(&self) -> usize {
        let flows = self.flows.capacity() * std::mem::size_of::<Flow>() + self.uplink_bytes.capacity() * 8;
        let queues: usize = self.fabric.ports.iter().map(|p| p.queue_capacity_bytes() + std::mem::size_of_val(p)).sum();
        let lbs: usize = self.switches.iter().map(|s| s.lb.state_bytes()).sum::<usize>() + self.edges.iter().map(|e| e.lb.state_bytes()).sum::<usize>();
        flows + self.pkts.footprint_bytes() + queues + self.sched.pending() * 32 + lbs
    }
}
