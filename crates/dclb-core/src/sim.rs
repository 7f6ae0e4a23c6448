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
//! Four watchdogs stop a run that would otherwise never end, outgrow the machine or report saturated times,
//! each with an error ([`Simulation::error`]) instead of results:
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
//! * **Events.** Held to an event limit ([`crate::runsize::EventLimit`]), the run stops once it has
//!   processed more events than the limit (checked every [`WATCH_EVENTS`]), and says whether its flows were
//!   still delivering (the estimate was low) or no flow had delivered a byte for how many events while
//!   flows were active: probes, balancer timers or UDP ticks running while no flow progresses (a probe
//!   interval of a picosecond) move simulated time too slowly for the no-progress window ever to pass.
//! * **The clock's end.** A time that saturated at the clock's end is `Time::MAX` exactly ([`crate::units`]),
//!   so the loop never runs an event at `Time::MAX`. Without a horizon, a run that has no event left before
//!   it while some flow has not ended (its next event saturated, or a timer at `Time::MAX` reads as none)
//!   stops with an error rather than end as complete. (With a horizon, such events lie beyond it, as the
//!   true times do.) The check keeps every config's times within the clock; this is the backstop.

use crate::build;
use crate::config::{Config, TransportKind};
use crate::cx::Cx;
use crate::fabric::{Fabric, NodeKind};
use crate::host::{Flow, Hosts};
use crate::ids::{LeafId, NodeId};
use crate::lb::{find_scheme, SchemeSpec};
use crate::check::Limits;
use crate::memory::{self, MemoryLimit, BYTES_PER_SAMPLE_ROW, WATCH_EVENTS};
use crate::metrics::{self, FabricMeter, Results, Sampler, Window};
use crate::traffic::stationary::PrefillReport;
use crate::runsize::{self, EventLimit};
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
    /// The events the run may process, the check's estimate of them, and the events processed when a flow
    /// last made progress (or none was active), as last seen by the watchdog.
    event_limit: Option<EventLimit>,
    estimated_events: f64,
    progress_seen: (Time, u64),
    /// Why the engine stopped the run (a watchdog), if it did.
    error: Option<String>,
    /// The measurement window (`traffic/window.rs`, `metrics::Window`): with one, the run ends once every measured
    /// flow has.
    window: Option<Window>,
    /// Events are taken up to this time: the horizon, or just before the window's or the meter's next
    /// bound, where the run pauses to read them (so that a run pays nothing per event for either).
    pop_limit: Time,
    /// The load the whole fabric carried over the measured span (`metrics::FabricMeter`).
    meter: Option<FabricMeter>,
    /// What a stationary start pre-loaded (`traffic/stationary.rs`).
    prefill: Option<PrefillReport>,
    /// Whether the run ends once every flow it waits for has (no `run.horizon_us`), and whether it did.
    until_ended: bool,
    ended_with_flows: bool,
    /// Whether the horizon is the drain's (`run.drain_us`): flows still running there are censored.
    drain: bool,
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
        Self::new_limited(cfg, Limits { memory: limit, events: None })
    }

    /// [`Simulation::new`] for a run held to `limits` (memory, events): the check refuses a config whose
    /// estimates exceed them, and the run stops with an error if it outgrows them.
    pub fn new_limited(cfg: &Config, limits: Limits) -> Result<Simulation, String> {
        let checked = cfg.check_within(&limits)?;
        let mut sim = Self::build(cfg, find_scheme(&cfg.lb.scheme)?)?;
        // The sampler's rows are counted as they are recorded.
        sim.fixed_bytes = checked.memory.parts.iter().filter(|p| p.field != "run.sampler.interval_us").map(|p| p.bytes).sum();
        sim.memory_limit = limits.memory;
        sim.event_limit = limits.events;
        sim.estimated_events = checked.size.total_events();
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
            event_limit: None,
            estimated_events: 0.0,
            progress_seen: (Time::ZERO, 0),
            error: None,
            window: b.window,
            pop_limit: b.horizon.min(Time(u64::MAX - 1)),
            meter: b.meter,
            prefill: b.prefill,
            until_ended: b.until_ended,
            ended_with_flows: false,
            drain: b.drain,
        };
        if sim.hosts.flows().iter().any(|f| f.spec.transport == TransportKind::Udp) {
            sim.pkts.track_udp_losses();
        }
        sim.read_bounds(Time::ZERO);
        sim.set_lazy_ports(true);
        if sim.flows_to_end() == 0 && sim.until_ended {
            sim.finished = true;
            sim.ended_with_flows = true;
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
                if self.pop_limit < self.last_instant() {
                    self.read_bounds(self.pop_limit + Time(1));
                    continue;
                }
                self.out_of_events(flows);
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
            if self.pkts.has_udp_losses() {
                self.hosts.udp_losses(now, self.pkts.take_udp_losses());
            }
            // Every flow has ended (at least as many as the run waits for, and with a window, each measured).
            if self.hosts.ended() >= flows && self.until_ended && self.window.as_mut().map_or(true, |w| w.measured_ended(self.hosts.flows())) {
                self.finished = true;
                self.ended_with_flows = true;
            }
            if self.sched.processed() % WATCH_EVENTS == 0 {
                self.watch(now);
            }
        }
        self.finished
    }

    /// Reads the window's and the meter's bounds at or before `at`, with every event before `at` handled
    /// and none after: the state at the bound. Then events are taken up to just before the next bound (or
    /// the horizon).
    fn read_bounds(&mut self, at: Time) {
        let mut next = Time::MAX;
        if let Some(w) = self.window.as_mut() {
            w.read_bounds(at, self.hosts.flows());
            next = next.min(w.next_bound());
        }
        if let Some(m) = self.meter.as_mut() {
            m.read_bounds(at, &self.net, self.hosts.flows());
            next = next.min(m.next_bound());
        }
        self.pop_limit = next.saturating_sub(Time(1)).min(self.last_instant());
    }

    /// The last instant an event may run: the horizon, and never the clock's last instant, which is a
    /// saturated time (module doc).
    fn last_instant(&self) -> Time {
        self.horizon.min(Time(u64::MAX - 1))
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

    /// The run has no event left due by the horizon (or before the clock's end): it is finished, with an
    /// error when it has no horizon and some of its `flows` have not ended. Out of the loop's way (cold).
    #[cold]
    #[inline(never)]
    fn out_of_events(&mut self, flows: u64) {
        self.finished = true;
        let unfinished = flows.saturating_sub(self.hosts.ended());
        if self.horizon == Time::MAX && unfinished > 0 {
            self.stop_at_clock_end(unfinished);
        }
    }

    /// The watchdogs that run every [`WATCH_EVENTS`] events (memory, events), out of the loop's way.
    #[inline(never)]
    fn watch(&mut self, now: Time) {
        self.watch_memory(now);
        self.watch_events(now);
    }

    /// Stops a run without a horizon that has no event left before the clock's end while `unfinished` flows
    /// have not ended. The message blames the clock only when that is true: events wait at the clock's end
    /// itself, or the run is in the second half of the clock's range (a timer that saturated reads as none,
    /// so a sender backing off towards the clock's end leaves no event). Otherwise nothing in the run is near
    /// the clock's end and nothing is left that could end those flows: the message names the first of them.
    fn stop_at_clock_end(&mut self, unfinished: u64) {
        let now = span(self.sched.now());
        let near_the_end = self.sched.pending() > 0 || self.sched.now() >= Time(u64::MAX / 2);
        self.error = Some(if near_the_end {
            format!(
                "run: the run needs times beyond the end of the engine's clock ({} us, picoseconds in 64 bits): at {now}, {unfinished} flows have not ended and their next events would lie beyond the clock's end, so the run is stopped rather than reported complete with its times saturated; set run.horizon_us, or use shorter times (timeouts, delays) and faster rates",
                runsize::num(crate::units::Time::RANGE_US),
            )
        } else {
            let first = self.hosts.flows().iter().enumerate().find(|(_, f)| f.state.is_none() && (self.window.is_none() || f.spec.measured));
            let which = first.map_or(String::new(), |(i, f)| {
                let kind = if f.spec.transport == TransportKind::Udp { "UDP" } else { "TCP" };
                format!(" (the first, flow {i}, a {kind} flow of {} bytes, had delivered {})", f.spec.size, f.bytes_delivered())
            });
            format!(
                "run: at {now}, {unfinished} flows have not ended{which} and no event is left that could end them; nothing in the run is near the clock's end, so this is a fault of the engine (a flow left without a timer): please report it with the scenario; run.horizon_us stops the run at a set time meanwhile"
            )
        });
    }

    /// Stops the run once it has processed more events than its limit, saying whether its flows were still
    /// progressing (module doc). Run every [`WATCH_EVENTS`] events, so progress is seen to that precision.
    fn watch_events(&mut self, now: Time) {
        let processed = self.sched.processed();
        if self.hosts.active() == 0 || self.hosts.progress_at() != self.progress_seen.0 {
            self.progress_seen = (self.hosts.progress_at(), processed);
        }
        let Some(limit) = &self.event_limit else { return };
        if (processed as f64) <= limit.events {
            return;
        }
        let (at, since) = (span(self.progress_seen.0), processed - self.progress_seen.1);
        let why = if since >= processed / 2 && self.hosts.active() > 0 {
            format!(
                "no flow has delivered a byte since {at} ({} events ago) while {} flows are active: only timers, probes or UDP ticks kept the run busy (a probe or timer period too short for the fabric?)",
                runsize::count(since as f64),
                self.hosts.active()
            )
        } else {
            format!("its flows were still delivering (the last at {at}): the run is longer than its estimate of {} events", runsize::count(self.estimated_events))
        };
        self.error = Some(format!(
            "run: at {} the run has processed {} events, more than the limit of {} ({}); {why}",
            span(now),
            runsize::count(processed as f64),
            runsize::count(limit.events),
            limit.source
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
        let end = if self.horizon != Time::MAX && self.finished && !self.ended_with_flows { self.horizon.min(self.sched.peek_time().unwrap_or(self.horizon)).max(self.sched.now()) } else { self.sched.now() };
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
            meter: self.meter.as_ref(),
            prefill: self.prefill.as_ref(),
            drained: self.drain && self.finished && !self.ended_with_flows && self.error.is_none(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Direction, LinkOverride, ListedFlow, Pattern, SourceConfig};
    use serde_json::json;

    /// 2 leaves x 1 spine x 1 host; one 100 KB flow from host 0 to host 1, whose only path (leaf 0's uplink)
    /// is a blackhole: the flow can never deliver a byte.
    fn stuck() -> Config {
        let mut cfg = Config::default();
        (cfg.topology.leaves, cfg.topology.spines, cfg.topology.hosts_per_leaf) = (2, 1, 1);
        cfg.topology.links = vec![LinkOverride { leaf: 0, spine: 0, blackhole: true, direction: Direction::Up, ..Default::default() }];
        cfg.sources = vec![SourceConfig { pattern: Pattern::List, list: vec![ListedFlow { start_us: 0.0, src: 0, dst: 1, size_bytes: 100_000, deadline_us: None }], ..Default::default() }];
        cfg
    }

    #[test]
    fn a_run_whose_times_would_saturate_stops_with_an_error() {
        // An RTO cap of 11.6 days: the check refuses it (the no-progress window would pass the clock's end),
        // so the run is built without it. The stuck flow backs off to the cap and retries until its next
        // timeout lies past the clock's end; before the guard the run then spun at the clock's last instant.
        let mut cfg = stuck();
        cfg.transport.max_rto_us = 1e12;
        assert!(cfg.check().unwrap_err().to_string().starts_with("transport.max_rto_us: the no-progress watchdog waits 6.4e13 us"));
        let mut sim = Simulation::build(&cfg, find_scheme("ecmp").unwrap()).unwrap();
        assert!(sim.run(1_000_000), "the run must stop");
        let e = sim.error().unwrap_or_else(|| panic!("stopped with an error: at {:?}, {} events, {} pending, {} ended", sim.now(), sim.events(), sim.sched.pending(), sim.flows_ended()));
        assert!(e.starts_with("run: the run needs times beyond the end of the engine's clock"), "{e}");
        assert!(sim.now() < Time::MAX);
    }

    #[test]
    fn a_run_beyond_its_event_limit_stops_saying_whether_flows_progressed() {
        // Hermes probing every nanosecond while the only flow delivers nothing: events go on, simulated time
        // crawls (the 64 s no-progress window would take some 10^14 events), and the event limit stops it.
        let mut cfg = stuck();
        cfg.lb.scheme = "hermes".into();
        cfg.lb.params.insert("probe_us".into(), json!(0.001));
        let limit = EventLimit { events: 200_000.0, source: "a test".into() };
        // (Its estimate is over the limit: the check refuses it, so the limit is given to the built run.)
        assert!(cfg.check_within(&Limits { memory: None, events: Some(limit.clone()) }).is_err());
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.event_limit = Some(limit);
        assert!(sim.run(10_000_000));
        let e = sim.error().expect("stopped with an error");
        assert!(e.starts_with("run: at ") && e.contains("more than the limit of 200.0 k (a test); no flow has delivered a byte since 0.0 us"), "{e}");
        assert!(sim.events() < 300_000);
        // A run whose flows deliver, held to a limit its estimate fits but the run does not: the estimate
        // was low.
        let cfg = crate::config::test_configs::two_leaf_poisson(400);
        let estimate = cfg.check_within(&Limits::default()).unwrap().size.total_events();
        let mut sim = Simulation::new_limited(&cfg, Limits { memory: None, events: Some(EventLimit { events: estimate.max(70_000.0), source: "a test".into() }) }).unwrap();
        sim.run_to_end();
        match sim.error() {
            Some(e) => assert!(e.contains("its flows were still delivering") && e.contains("the run is longer than its estimate"), "{e}"),
            None => assert!((sim.events() as f64) <= estimate.max(70_000.0) + WATCH_EVENTS as f64),
        }
        // Without a limit nothing is watched.
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.run_to_end();
        assert!(sim.error().is_none());
    }
}
