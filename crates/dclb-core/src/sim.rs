//! The simulation: the state of one run and the loop that dispatches its events to the side that owns them.
//!
//! ```text
//!            ┌──── Simulation ───────────────────────────────────────────────────────┐
//!            │ Scheduler (the only queue) ── pop ──► dispatch(event) with a Cx       │
//!            │   Cx = { now, Schedule (push only), PacketArena (+ wire-byte books) } │
//!            │                    │                                   │              │
//!            │     switch events  ▼                      host events  ▼              │
//!            │  Network (switch.rs)  ◄── enqueue on a NIC ───  Hosts (host.rs)       │
//!            │  fabric, ports (+DRE), ─── Leaving / LeftHost ──►  flows, TCP ends,   │
//!            │  switches, balancers       (returned values)       edge balancers     │
//!            └───────────────────────────────────────────────────────────────────────┘
//!  FlowStart, Rto, Reseq, UdpTick, EdgeTimer, EdgeAlarm, Arrive at a host  ─► Hosts
//!  Arrive at a switch, SwitchTimer, SwitchAlarm, WireLoss                  ─► Network
//!  TxDone: Network::tx_done ─► (a host NIC's packet left: Hosts::left_nic) ─► Network::serve ─►
//!          (a packet starts leaving its host: Hosts::leaving_host)
//!  LeftNic (a lazy NIC's data packet left): Network::left_nic ─► Hosts::left_nic
//!  Sample: the lazy ports sampled let go of what has left, the sampler records (metrics.rs)
//! ```
//!
//! This module holds the run's parts, the watchdogs and the dispatch loop only. Construction is in
//! `build.rs`, the network side (routing, balancer hooks, ports) in `switch.rs`, the host stack in `host.rs`,
//! and the result tables, read from the finished parts, in [`crate::metrics`]. Handlers never take the
//! simulation: each side's handler gets its own state, a [`Cx`] and, for the host stack, the network it
//! sends into; calls go one way only: from the loop to either side, and from the host stack to the network.
//! Packets live in the arena; events carry indices. The retransmission timer of a flow is one lazy event:
//! the sender only records when it should fire, and an event that finds the deadline moved reschedules
//! itself, so an ACK never schedules anything for its timer.
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

use crate::build;
use crate::config::Config;
use crate::cx::Cx;
use crate::fabric::{Fabric, NodeKind};
use crate::host::{Flow, Hosts};
use crate::ids::{LeafId, NodeId};
use crate::lb::{find_scheme, SchemeSpec};
use crate::memory::{self, MemoryLimit, BYTES_PER_SAMPLE_ROW, WATCH_EVENTS};
use crate::metrics::{self, Results, Sampler, Window};
use crate::packet::PacketArena;
use crate::sched::{Event, Schedule, Scheduler};
use crate::switch::Network;
use crate::traffic::SourceInfo;
use crate::units::Time;

pub struct Simulation {
    sched: Scheduler,
    pkts: PacketArena,
    net: Network,
    hosts: Hosts,
    sampler: Option<Sampler>,
    sources: Vec<SourceInfo>,
    horizon: Time,
    finished: bool,
    /// How long active flows may go without progress before the run is stopped.
    stall_window: Time,
    /// The memory the run may use, and the bytes its check estimated for everything but the sampler.
    memory_limit: Option<MemoryLimit>,
    fixed_bytes: f64,
    /// Why the engine stopped the run (a watchdog), if it did.
    error: Option<String>,
    /// The measurement window (`traffic/window.rs`, `metrics::Window`): with one, the run ends once every measured
    /// flow has.
    window: Option<Window>,
    /// Events are taken up to this time: the horizon, or just before the window's next bound, where the
    /// run pauses to read the bytes delivered (so that a run pays nothing per event for the window).
    pop_limit: Time,
}

impl Simulation {
    /// Checks the config ([`Config::check`]), then builds the fabric, the scheme's balancers and the flows,
    /// and schedules the start.
    pub fn new(cfg: &Config) -> Result<Simulation, String> {
        Self::new_within(cfg, None)
    }

    /// [`Simulation::new`] for a run held to `limit` bytes of memory: the check refuses a config whose
    /// estimate exceeds it ([`Config::check_within`]), and the run stops with an error if it outgrows it.
    pub fn new_within(cfg: &Config, limit: Option<MemoryLimit>) -> Result<Simulation, String> {
        let estimate = cfg.check_within(limit.as_ref())?;
        let mut sim = Self::build(cfg, find_scheme(&cfg.lb.scheme)?)?;
        // The sampler's rows are counted as they are recorded.
        sim.fixed_bytes = estimate.parts.iter().filter(|p| p.field != "run.sampler.interval_us").map(|p| p.bytes).sum();
        sim.memory_limit = limit;
        Ok(sim)
    }

    /// Like [`Simulation::new`], with a scheme given directly instead of looked up by `cfg.lb.scheme`: for
    /// a scheme under development outside the registry, and for tests of the engine's balancer interface.
    pub fn with_scheme(cfg: &Config, scheme: &SchemeSpec) -> Result<Simulation, String> {
        cfg.check_except_scheme()?;
        Self::build(cfg, scheme)
    }

    /// Builds a checked config (`build.rs`) and makes its ports lazily drained where they can be. The only
    /// error left is the scheme's parameters (for `with_scheme`, whose scheme the check did not see).
    fn build(cfg: &Config, scheme: &SchemeSpec) -> Result<Simulation, String> {
        let b = build::build(cfg, scheme)?;
        let mut sim = Simulation {
            sched: b.sched,
            pkts: PacketArena::new(),
            net: b.net,
            hosts: b.hosts,
            sampler: b.sampler,
            sources: b.sources,
            horizon: b.horizon,
            finished: false,
            stall_window: b.stall_window,
            memory_limit: None,
            fixed_bytes: 0.0,
            error: None,
            window: b.window,
            pop_limit: b.horizon,
        };
        sim.read_window_bounds(Time::ZERO);
        sim.set_lazy_ports(true);
        if sim.flows_to_end() == 0 && sim.horizon == Time::MAX {
            sim.finished = true;
        }
        Ok(sim)
    }

    /// Makes ports lazily drained (`on`) or event-driven (`port.rs`; see `Network::set_lazy_ports` for which
    /// ports can be lazy). Only before the run starts (ports empty).
    pub fn set_lazy_ports(&mut self, on: bool) {
        let edges = self.hosts.has_edges();
        self.net.set_lazy_ports(on, edges);
    }

    pub fn now(&self) -> Time {
        self.sched.now()
    }
    pub fn events(&self) -> u64 {
        self.sched.processed()
    }
    pub fn flows_total(&self) -> usize {
        self.hosts.flows().len()
    }
    pub fn flows_ended(&self) -> u64 {
        self.hosts.ended()
    }
    pub fn is_finished(&self) -> bool {
        self.finished
    }
    pub fn fabric(&self) -> &Fabric {
        self.net.fabric()
    }
    pub fn flow(&self, i: usize) -> &Flow {
        &self.hosts.flows()[i]
    }
    /// The kind of a node (for tests and tools).
    pub fn node_kind(&self, node: NodeId) -> NodeKind {
        self.net.fabric().node(node).kind
    }
    /// Next-hop candidates are exposed for tests that check routing.
    pub fn paths(&self, src_leaf: LeafId, dst_leaf: LeafId) -> Vec<u16> {
        self.net.fabric().paths(src_leaf, dst_leaf).to_vec()
    }

    /// Why the engine stopped the run before its end (no progress, memory), as a one-line message; `None`
    /// for a run that ended normally or is still going.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// How many flows the run waits for: every flow, or with a measurement window every measured flow.
    fn flows_to_end(&self) -> u64 {
        self.window.as_ref().map_or(self.hosts.flows().len() as u64, Window::measured)
    }

    /// Runs until the end or until `budget` more events have been processed. Returns true when finished,
    /// which includes a run a watchdog stopped ([`Simulation::error`]).
    pub fn run(&mut self, budget: u64) -> bool {
        let limit = self.sched.processed().saturating_add(budget);
        let flows = self.flows_to_end();
        while !self.finished && self.sched.processed() < limit {
            let Some((now, ev)) = self.sched.pop_by(self.pop_limit) else {
                // Nothing more by the limit: a window bound comes first, or the run is over.
                if self.pop_limit < self.horizon {
                    self.read_window_bounds(self.pop_limit + Time(1));
                    continue;
                }
                self.finished = true;
                break;
            };
            if self.hosts.active() == 0 {
                self.hosts.idle_at(now);
            } else if now.saturating_sub(self.hosts.progress_at()) > self.stall_window {
                self.stop_stalled(now);
                break;
            }
            // The next event's packet is most likely an arrival's: its line comes in while this one runs
            // (the first touch of a packet at a hop was a cache miss on every hop).
            if let Some(pid) = self.sched.next_arrival_hint() {
                self.pkts.prefetch(pid);
            }
            self.dispatch(now, ev);
            // Every flow has ended (at least as many as the run waits for, and with a window, each measured).
            if self.hosts.ended() >= flows && self.horizon == Time::MAX && self.window.as_mut().map_or(true, |w| w.measured_ended(self.hosts.flows())) {
                self.finished = true;
            }
            if self.sched.processed() % WATCH_EVENTS == 0 {
                self.watch_memory(now);
            }
        }
        self.finished
    }

    /// Reads the window's bounds at or before `at`, with every event before `at` handled and none after:
    /// the state at the bound. Then events are taken up to just before the next bound (or the horizon).
    fn read_window_bounds(&mut self, at: Time) {
        let Some(w) = self.window.as_mut() else { return };
        w.read_bounds(at, self.hosts.flows());
        self.pop_limit = w.next_bound().saturating_sub(Time(1)).min(self.horizon);
    }

    /// Hands `ev` to the side that owns it, with a context for `now`.
    #[inline(always)]
    fn dispatch(&mut self, now: Time, ev: Event) {
        let (net, hosts) = (&mut self.net, &mut self.hosts);
        let cx = &mut Cx { now, schedule: Schedule::new(&mut self.sched), pkts: &mut self.pkts };
        match ev {
            Event::Arrive { node, pkt, via } => match net.fabric.facts.node_host(node) {
                Some(host) => hosts.receive(cx, net, host, pkt),
                None => net.switch_receive(cx, node, pkt, via),
            },
            Event::FlowStart { flow } => hosts.start_flow(cx, net, flow),
            Event::TxDone { port } => {
                if let Some(left) = net.tx_done(cx, port) {
                    hosts.left_nic(cx, net, left);
                }
                if let Some(leaving) = net.serve(cx, port) {
                    hosts.leaving_host(cx, net, leaving);
                }
            }
            Event::WireLoss { port } => net.pop_departed(cx.pkts, port, now),
            Event::LeftNic { port, pkt } => {
                let left = net.left_nic(cx, port, pkt);
                hosts.left_nic(cx, net, left);
            }
            Event::Rto { flow } => hosts.rto_event(cx, net, flow),
            Event::Reseq { flow } => hosts.reseq_event(cx, net, flow),
            Event::UdpTick { flow } => hosts.udp_tick(cx, net, flow),
            Event::SwitchTimer { node } => net.switch_timer(cx, node),
            Event::SwitchAlarm { node, token } => net.switch_alarm(cx, node, token),
            Event::EdgeTimer { host } => hosts.edge_timer(cx, net, host),
            Event::EdgeAlarm { host, token } => hosts.edge_alarm(cx, net, host, token),
            Event::Sample => sample(cx, &mut self.sampler, net, hosts, self.horizon),
        }
    }

    /// Stops a run whose active flows have made no progress for the stall window (see the module doc).
    fn stop_stalled(&mut self, now: Time) {
        let progress_at = self.hosts.progress_at();
        self.error = Some(format!(
            "run: no progress for {} of simulated time: at {}, {} flows are active and none has delivered a new byte since {}, so the run would never end (is every packet of some flow lost: a blackhole, loss_rate = 1, a path that drops everything?); the engine stops a run after {} without progress while flows are active; to keep the results of such a run, set run.horizon_us below that",
            span(now - progress_at),
            span(now),
            self.hosts.active(),
            span(progress_at),
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

    /// Builds the result tables. Call after the run has finished (or to inspect a partial run).
    pub fn results(&mut self) -> Results {
        let end = if self.horizon != Time::MAX && self.finished { self.horizon.min(self.sched.peek_time().unwrap_or(self.horizon)).max(self.sched.now()) } else { self.sched.now() };
        // Lazily drained ports let go of what has left by the end (departures run first at their time).
        self.net.pop_all_departed(&mut self.pkts, end);
        let engine_bytes = self.engine_bytes();
        metrics::collect(metrics::Run {
            net: &mut self.net,
            hosts: &self.hosts,
            pkts: &self.pkts,
            sampler: self.sampler.as_ref(),
            sources: &self.sources,
            window: self.window.as_ref(),
            end,
            events: self.sched.processed(),
            engine_bytes,
        })
    }

    /// Approximate bytes the engine holds for this run (flows, packets, queues, events, balancer state).
    pub fn engine_bytes(&self) -> usize {
        self.hosts.engine_bytes() + self.net.engine_bytes() + self.pkts.footprint_bytes() + self.sched.pending() * 32
    }
}

/// Records one sampler row per chosen port and flow, and schedules the next sample while the run goes on.
fn sample(cx: &mut Cx, sampler: &mut Option<Sampler>, net: &mut Network, hosts: &Hosts, horizon: Time) {
    let Some(s) = sampler.as_mut() else { return };
    // Lazily drained ports first let go of what has left by now.
    for &p in s.ports() {
        if net.fabric.port(p).is_lazy() {
            net.pop_departed(cx.pkts, p, cx.now);
        }
    }
    s.record(cx.now, net, hosts);
    let next = cx.now + s.interval();
    let more_flows = (hosts.ended() as usize) < hosts.flows().len();
    if next <= horizon && (more_flows || horizon != Time::MAX) {
        cx.schedule.at(next, Event::Sample);
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
