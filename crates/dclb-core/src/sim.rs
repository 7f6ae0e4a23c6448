//! The simulation: the state of one run and the loop that dispatches its events.
//!
//! ```text
//!  FlowStart ─► host stack (host.rs): sender fills its window (or sends its SYN) ─► packets into the NIC port
//!  port (port.rs) ─TxDone─► serialised ─Arrive (after propagation)─► next node
//!  (a lazily drained switch port schedules the Arrive when it admits the packet: no TxDone)
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
//!
//! Two watchdogs stop a run that would otherwise never end or outgrow the machine, each with an error
//! ([`Simulation::error`]) instead of results:
//!
//! * **No progress.** A run whose flows can no longer deliver anything (every packet of a flow lost on its
//!   only path, say a blackhole under ECMP) would retry at its RTO forever, simulated time racing on. The
//!   engine notes the last time a receiver got new in-order data, a UDP packet, or a flow ended; when flows
//!   are active and that was more than the stall window ago, the run stops. Time when no flow is active
//!   (gaps between arrivals) never counts. The window is 64 times the longest a live run can wait for its
//!   next delivery: one RTO at its cap (a sender backs off to `max_rto_us` and retries once per RTO), one
//!   round trip of the slowest hops with full buffers, the resequencing timeout, one packet of the slowest
//!   UDP source. Tripping it takes 64 retransmissions in a row lost by every active flow at once, about
//!   10^-20 for a path that loses half its packets; with the default 1 s `max_rto_us` it is 64 s of
//!   simulated time, against runs of milliseconds to seconds.
//! * **Memory.** Every [`WATCH_EVENTS`] events the run adds up what its config did not bound (packets in
//!   flight with their events, sampler rows) to the estimate the check made ([`crate::memory`]), and stops
//!   once that exceeds the caller's limit.

use crate::fabric::{Fabric, NodeKind};
use crate::host::{EdgeState, Flow, HostParams};
use crate::metrics::Sampler;
use crate::lb::{Alarms, ProbeRequest, Reflect};
use crate::memory::{self, MemoryLimit, BYTES_PER_SAMPLE_ROW, WATCH_EVENTS};
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
    /// Last time a receiver got new data or a flow ended, or no flow was active (the no-progress watchdog).
    pub(crate) progress_at: Time,
    /// How long active flows may go without progress before the run is stopped.
    pub(crate) stall_window: Time,
    /// The memory the run may use, and the bytes its check estimated for everything but the sampler.
    pub(crate) memory_limit: Option<MemoryLimit>,
    pub(crate) fixed_bytes: f64,
    /// Why the engine stopped the run (a watchdog), if it did.
    pub(crate) error: Option<String>,
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

    /// Why the engine stopped the run before its end (no progress, memory), as a one-line message; `None`
    /// for a run that ended normally or is still going.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Runs until the end or until `budget` more events have been processed. Returns true when finished,
    /// which includes a run a watchdog stopped ([`Simulation::error`]).
    pub fn run(&mut self, budget: u64) -> bool {
        let limit = self.sched.processed().saturating_add(budget);
        while !self.finished && self.sched.processed() < limit {
            let Some((now, ev)) = self.sched.pop_by(self.horizon) else {
                self.finished = true;
                break;
            };
            if self.active == 0 {
                self.progress_at = now;
            } else if now.saturating_sub(self.progress_at) > self.stall_window {
                self.stop_stalled(now);
                break;
            }
            // The next event's packet is most likely an arrival's: its line comes in while this one runs
            // (the first touch of a packet at a hop was a cache miss on every hop).
            if let Some(pid) = self.sched.next_arrival_hint() {
                self.pkts.prefetch(pid);
            }
            self.dispatch(now, ev);
            if self.ended as usize == self.flows.len() && self.horizon == Time::MAX {
                self.finished = true;
            }
            if self.sched.processed() % WATCH_EVENTS == 0 {
                self.watch_memory(now);
            }
        }
        self.finished
    }

    /// Stops a run whose active flows have made no progress for the stall window (see the module doc).
    fn stop_stalled(&mut self, now: Time) {
        self.error = Some(format!(
            "run: no progress for {} of simulated time: at {}, {} flows are active and none has delivered a new byte since {}, so the run would never end (is every packet of some flow lost: a blackhole, loss_rate = 1, a path that drops everything?); the engine stops a run after {} without progress while flows are active; to keep the results of such a run, set run.horizon_us below that",
            span(now - self.progress_at),
            span(now),
            self.active,
            span(self.progress_at),
            span(self.stall_window)
        ));
        self.finished = true;
    }

    /// Stops the run if what it holds beyond its checked estimate (packets in flight, sampler rows) takes
    /// it over its memory limit.
    fn watch_memory(&mut self, now: Time) {
        let Some(limit) = &self.memory_limit else { return };
        let packets = (self.pkts.footprint_bytes() + self.sched.footprint_bytes()) as f64;
        let rows = self.sampler.as_ref().map_or(0, |s| s.rows());
        let sampled = rows as f64 * BYTES_PER_SAMPLE_ROW;
        let total = self.fixed_bytes + packets + sampled;
        if total <= limit.bytes as f64 {
            return;
        }
        let (at, what) = (span(now), memory::size(total));
        let cap = format!("more than the {} it may use ({})", memory::size(limit.bytes as f64), limit.source);
        self.error = Some(if sampled > packets {
            format!(
                "run.sampler.interval_us: at {at} the sampler holds {rows} rows ({}) and the run about {what} in all, {cap}; sample less often, fewer ports, or over a shorter run.horizon_us",
                memory::size(sampled)
            )
        } else {
            format!(
                "run: at {at} the network holds {} packets in flight ({}) and the run about {what} in all, {cap}; use smaller buffers, shorter delays or fewer flows",
                self.pkts.live(),
                memory::size(packets)
            )
        });
        self.finished = true;
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
            Event::WireLoss { port } => self.pop_departed(port),
            Event::LeftNic { port, pkt } => self.left_nic_event(now, port, pkt),
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
    pub(crate) fn new_packet(&mut self, mut p: Packet) -> u32 {
        self.created += p.wire_bytes as u64;
        p.record_tuple();
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

/// A simulated time or duration for messages, in the unit that suits it (us, ms or s).
fn span(t: Time) -> String {
    let us = t.as_us();
    if us < 1e3 {
        format!("{us:.1} us")
    } else if us < 1e6 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.1} s", us / 1e6)
    }
}
