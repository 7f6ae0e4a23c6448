//! The simulation: owns the scheduler, the fabric, the flows and the balancers, and dispatches events.
//!
//! ```text
//!  FlowStart ─► sender fills its window ─► packets into the host NIC queue
//!  port queue ─TxDone─► (serialisation) ─Arrive (after propagation)─► next node
//!     switch: balancer.on_arrival ─► routing candidates ─► balancer.choose ─► enqueue (drop-tail, ECN) ─►
//!             balancer.on_enqueue ... balancer.on_departure at TxDone
//!     host:   data ─► [resequencer] ─► TCP receiver ─► ACK into the NIC queue
//!             ACK  ─► TCP sender (+ edge balancer feedback) ─► more segments
//! ```
//!
//! Packets live in the arena; events carry indices. The retransmission timer of a flow is one lazy event:
//! the sender only records when it should fire, and an event that finds the deadline moved reschedules
//! itself, so an ACK never schedules anything for its timer.

use crate::config::{Config, Pattern, TransportKind};
use crate::fabric::{Fabric, NodeKind, PortRole};
use crate::lb::{find_scheme, BuildCx, Decision, EdgeBalancer, EdgeCx, FlowView, Hooks, Params, PortsView, ProbeRequest, SwitchBalancer, SwitchCx, SwitchInfo, SwitchKind};
use crate::metrics::{Column, FlowState, Results, RunStats, Table};
use crate::packet::{class, Packet, PacketArena, PacketKind};
use crate::rng::{Rng, Stream};
use crate::sched::{Event, Scheduler};
use crate::traffic::{self, FlowSpec, SourceInfo, UNBOUNDED};
use crate::transport::reseq::Resequencer;
use crate::transport::tcp::{Retx, Segment, TcpReceiver, TcpSender};
use crate::transport::TcpParams;
use crate::units::{Bytes, Time};

/// Everything dclb tracks about one flow: its specification, both transport ends, and its statistics.
pub struct Flow {
    pub spec: FlowSpec,
    pub sport: u16,
    pub dport: u16,
    pub tx: TcpSender,
    pub rx: TcpReceiver,
    pub reseq: Resequencer,
    pub state: Option<FlowState>,
    pub started: bool,
    pub finish: Time,
    /// Time of this flow's pending Rto event, `Time::MAX` if none.
    rto_event_at: Time,
    reseq_event_at: Time,
    pub ideal_fct: Time,
    // statistics
    pub bytes_sent: u64,
    pub packets_sent: u64,
    pub retransmissions: u64,
    pub spurious: u64,
    pub out_of_order: u64,
    pub queue_delay: Time,
    pub udp_received: u64,
}

struct SwitchState {
    info: SwitchInfo,
    lb: Box<dyn SwitchBalancer>,
    hooks: Hooks,
    rng: Rng,
    decisions: u64,
    drops: u64,
}

struct EdgeState {
    lb: Box<dyn EdgeBalancer>,
    rng: Rng,
}

struct Sampler {
    interval: Time,
    ports: Vec<u32>,
    flows: Vec<u32>,
    time_us: Vec<f64>,
    kind: Vec<String>,
    id: Vec<u64>,
    queue_bytes: Vec<u64>,
    bytes: Vec<u64>,
}

pub struct Simulation {
    tp: TcpParams,
    sched: Scheduler,
    pkts: PacketArena,
    fabric: Fabric,
    switches: Vec<SwitchState>,
    edges: Vec<EdgeState>,
    flows: Vec<Flow>,
    uplinks: usize,
    uplink_bytes: Vec<u64>,
    horizon: Time,
    ended: u64,
    active: u64,
    peak_active: u64,
    created: u64,
    delivered: u64,
    dropped: u64,
    probes_sent: u64,
    sampler: Option<Sampler>,
    infos: Vec<SourceInfo>,
    finished: bool,
    // scratch buffers, reused
    segs: Vec<Segment>,
    released: Vec<u32>,
    probes: Vec<ProbeRequest>,
}

fn flow_view(f: &Flow, id: u32, retx: bool) -> FlowView {
    FlowView {
        flow: id,
        dst: f.spec.dst,
        size: f.spec.size,
        start: f.spec.start,
        sent: f.tx.high_tx,
        acked: f.tx.snd_una,
        cwnd: f.tx.cwnd,
        srtt: f.tx.srtt,
        retransmission: retx,
    }
}

impl Simulation {
    /// Validates the configuration, builds the fabric, the balancers and the flows, and schedules the start.
    pub fn new(cfg: &Config) -> Result<Simulation, String> {
        cfg.validate()?;
        let fabric = Fabric::build(&cfg.topology, &cfg.transport);
        let nl = cfg.topology.leaves;
        for a in 0..nl {
            for b in 0..nl {
                if a != b && fabric.leaf_candidates(a, b).is_empty() {
                    return Err(format!("topology.links: the failed links leave no path from leaf {a} to leaf {b}"));
                }
            }
        }
        let tp = TcpParams::from_config(&cfg.transport);
        let spec = find_scheme(&cfg.lb.scheme)?;
        let params = Params::resolve(spec.name, spec.params, &cfg.lb.params)?;

        let mut infos_sw = Vec::new();
        for l in 0..nl {
            let node = fabric.leaf_node(l);
            infos_sw.push(SwitchInfo { node, kind: SwitchKind::Leaf, index: l, salt: Rng::derive(cfg.seed, Stream::HashSalt, node as u64).next_u64() });
        }
        for s in 0..cfg.topology.spines {
            let node = fabric.first_spine() + s;
            infos_sw.push(SwitchInfo { node, kind: SwitchKind::Spine, index: s, salt: Rng::derive(cfg.seed, Stream::HashSalt, node as u64).next_u64() });
        }
        let installed = (spec.install)(&BuildCx { facts: &fabric.facts, hosts: fabric.hosts }, &params, &infos_sw);
        assert_eq!(installed.switches.len(), infos_sw.len(), "scheme {} built the wrong number of switch balancers", spec.name);
        let switches: Vec<SwitchState> = installed
            .switches
            .into_iter()
            .zip(infos_sw)
            .map(|(lb, info)| SwitchState { info, hooks: lb.hooks(), lb, rng: Rng::derive(cfg.seed, Stream::Switch, info.node as u64), decisions: 0, drops: 0 })
            .collect();
        let edges: Vec<EdgeState> = installed
            .edges
            .map(|v| v.into_iter().enumerate().map(|(h, lb)| EdgeState { lb, rng: Rng::derive(cfg.seed, Stream::Edge, h as u64) }).collect())
            .unwrap_or_default();

        let (specs, infos) = traffic::generate(cfg, &fabric, &tp);
        let unbounded = specs.iter().any(|f| f.size >= UNBOUNDED) || cfg.sources.iter().any(|s| s.pattern == Pattern::LongLived);
        if unbounded && cfg.run.horizon_us.is_none() {
            return Err("run.horizon_us: long-lived flows never end, so the run needs a horizon".into());
        }
        let mut port_rng = Rng::derive(cfg.seed, Stream::FlowPorts, 0);
        let flows: Vec<Flow> = specs
            .into_iter()
            .map(|spec| {
                let ideal = if spec.size >= UNBOUNDED { Time::MAX } else { fabric.ideal_fct(spec.src, spec.dst, spec.size, &cfg.transport) };
                let dctcp = spec.transport == TransportKind::Dctcp;
                Flow {
                    tx: TcpSender::new(spec.size, dctcp, &tp),
                    sport: 10_000 + port_rng.below(50_000) as u16,
                    dport: 80,
                    spec,
                    rx: TcpReceiver::default(),
                    reseq: Resequencer::default(),
                    state: None,
                    started: false,
                    finish: Time::ZERO,
                    rto_event_at: Time::MAX,
                    reseq_event_at: Time::MAX,
                    ideal_fct: ideal,
                    bytes_sent: 0,
                    packets_sent: 0,
                    retransmissions: 0,
                    spurious: 0,
                    out_of_order: 0,
                    queue_delay: Time::ZERO,
                    udp_received: 0,
                }
            })
            .collect();

        let uplinks = fabric.facts.uplinks as usize;
        let mut sim = Simulation {
            tp,
            sched: Scheduler::new(),
            pkts: PacketArena::new(),
            uplink_bytes: vec![0; flows.len() * uplinks],
            uplinks,
            fabric,
            switches,
            edges,
            flows,
            horizon: cfg.run.horizon_us.map(Time::from_us_f64).unwrap_or(Time::MAX),
            ended: 0,
            active: 0,
            peak_active: 0,
            created: 0,
            delivered: 0,
            dropped: 0,
            probes_sent: 0,
            sampler: None,
            infos,
            finished: false,
            segs: Vec::with_capacity(64),
            released: Vec::with_capacity(64),
            probes: Vec::new(),
        };
        // Flows are sorted by start time; only the next start is ever scheduled (each start schedules the
        // following one), which keeps the event heap as small as the traffic in flight.
        if let Some(f) = sim.flows.first() {
            sim.sched.at(f.spec.start, Event::FlowStart { flow: 0 });
        }
        for (i, s) in sim.switches.iter().enumerate() {
            if let Some(p) = s.lb.timer_period().filter(|p| *p > Time::ZERO) {
                sim.sched.at(p, Event::SwitchTimer { node: s.info.node });
                let _ = i;
            }
        }
        for (h, e) in sim.edges.iter().enumerate() {
            if let Some(p) = e.lb.timer_period().filter(|p| *p > Time::ZERO) {
                sim.sched.at(p, Event::EdgeTimer { host: h as u32 });
            }
        }
        if let Some(sc) = &cfg.run.sampler {
            let ports = match &sc.ports {
                Some(v) => {
                    if let Some(p) = v.iter().find(|&&p| p as usize >= sim.fabric.ports.len()) {
                        return Err(format!("run.sampler.ports: port {p} does not exist (0..{})", sim.fabric.ports.len()));
                    }
                    v.clone()
                }
                None => (0..sim.fabric.ports.len() as u32).filter(|&p| sim.fabric.ports[p as usize].role != PortRole::HostUp).collect(),
            };
            if let Some(f) = sc.flows.iter().find(|&&f| f as usize >= sim.flows.len()) {
                return Err(format!("run.sampler.flows: flow {f} does not exist (the scenario has {} flows)", sim.flows.len()));
            }
            sim.sampler = Some(Sampler {
                interval: Time::from_us_f64(sc.interval_us),
                ports,
                flows: sc.flows.clone(),
                time_us: Vec::new(),
                kind: Vec::new(),
                id: Vec::new(),
                queue_bytes: Vec::new(),
                bytes: Vec::new(),
            });
            sim.sched.at(Time::ZERO, Event::Sample);
        }
        if sim.flows.is_empty() && sim.horizon == Time::MAX {
            sim.finished = true;
        }
        Ok(sim)
    }

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
            Event::Arrive { node, pkt } => {
                if node < self.fabric.hosts {
                    self.host_receive(now, node, pkt)
                } else {
                    self.switch_receive(now, node, pkt)
                }
            }
            Event::TxDone { port } => self.tx_done(now, port),
            Event::Rto { flow } => self.rto_event(now, flow),
            Event::Reseq { flow } => self.reseq_event(now, flow),
            Event::UdpTick { flow } => self.udp_tick(now, flow),
            Event::SwitchTimer { node } => {
                let sw = (node - self.fabric.hosts) as usize;
                let n = &self.fabric.nodes[node as usize];
                let st = &mut self.switches[sw];
                let mut cx = SwitchCx { now, me: st.info, ports: PortsView::new(&self.fabric.ports, n.first_port, n.n_ports), facts: &self.fabric.facts, rng: &mut st.rng };
                st.lb.on_timer(&mut cx);
                if let Some(p) = st.lb.timer_period().filter(|p| *p > Time::ZERO) {
                    self.sched.at(now + p, Event::SwitchTimer { node });
                }
            }
            Event::EdgeTimer { host } => {
                let e = &mut self.edges[host as usize];
                let mut cx = EdgeCx { now, host, facts: &self.fabric.facts, rng: &mut e.rng, probes: &mut self.probes };
                e.lb.on_timer(&mut cx);
                if let Some(p) = e.lb.timer_period().filter(|p| *p > Time::ZERO) {
                    self.sched.at(now + p, Event::EdgeTimer { host });
                }
                self.send_probes(now, host);
            }
            Event::Sample => self.sample(now),
        }
    }

    // ----------------------------------------------------------------------------------------------
    // Ports

    /// Puts packet `pid` into `port`'s queue (drop-tail, then DCTCP marking, then the balancer's hook).
    fn enqueue(&mut self, now: Time, port_id: u32, pid: u32) {
        let port = &mut self.fabric.ports[port_id as usize];
        let p = self.pkts.get_mut(pid);
        let wire = p.wire_bytes;
        if !port.up || port.would_overflow(wire) {
            port.drops += 1;
            self.dropped += wire as u64;
            self.pkts.free(pid);
            return;
        }
        let was_ce = p.ecn.ce;
        if p.ecn.ect && port.ecn_k > 0 && port.queue_packets() >= port.ecn_k {
            p.ecn.ce = true;
        }
        port.account_area(now);
        port.queue.push_back(pid);
        port.queued_bytes += wire as u64;
        port.peak_queue_bytes = port.peak_queue_bytes.max(port.queued_bytes);
        port.peak_queue_packets = port.peak_queue_packets.max(port.queue.len() as u32);
        p.enqueued_at = now;
        let owner = port.owner;
        if owner >= self.fabric.hosts && self.switches[(owner - self.fabric.hosts) as usize].hooks.enqueue {
            let sw = (owner - self.fabric.hosts) as usize;
            let n = &self.fabric.nodes[owner as usize];
            let st = &mut self.switches[sw];
            let mut cx = SwitchCx { now, me: st.info, ports: PortsView::new(&self.fabric.ports, n.first_port, n.n_ports), facts: &self.fabric.facts, rng: &mut st.rng };
            st.lb.on_enqueue(&mut cx, p, port_id);
        }
        let port = &mut self.fabric.ports[port_id as usize];
        if p.ecn.ce && !was_ce {
            port.ecn_marks += 1;
        }
        if !port.busy {
            self.start_tx(now, port_id);
        }
    }

    fn start_tx(&mut self, now: Time, port_id: u32) {
        let port = &mut self.fabric.ports[port_id as usize];
        let head = *port.queue.front().expect("start_tx on an empty queue");
        let p = self.pkts.get_mut(head);
        p.queue_delay += now - p.enqueued_at;
        port.busy = true;
        let done = now + port.tx_time(p.wire_bytes);
        self.sched.at(done, Event::TxDone { port: port_id });
    }

    fn tx_done(&mut self, now: Time, port_id: u32) {
        let hosts = self.fabric.hosts;
        let port = &mut self.fabric.ports[port_id as usize];
        let pid = port.queue.pop_front().expect("TxDone with an empty queue");
        port.account_area(now);
        let p = self.pkts.get_mut(pid);
        port.queued_bytes -= p.wire_bytes as u64;
        port.bytes_sent += p.wire_bytes as u64;
        port.packets_sent += 1;
        port.busy = false;
        let (owner, peer, delay, role, slot) = (port.owner, port.peer, port.delay, port.role, port.slot);
        let more = !port.queue.is_empty();
        if owner >= hosts {
            if role == PortRole::LeafUp && p.kind == PacketKind::Data && self.fabric.facts.leaf_of_host(p.src) == owner - hosts {
                self.uplink_bytes[p.flow as usize * self.uplinks + slot as usize] += p.payload as u64;
            }
            let st = &mut self.switches[(owner - hosts) as usize];
            if st.hooks.departure {
                let n = &self.fabric.nodes[owner as usize];
                let mut cx = SwitchCx { now, me: st.info, ports: PortsView::new(&self.fabric.ports, n.first_port, n.n_ports), facts: &self.fabric.facts, rng: &mut st.rng };
                st.lb.on_departure(&mut cx, p, port_id);
            }
        }
        self.sched.at(now + delay, Event::Arrive { node: peer, pkt: pid });
        if more {
            self.start_tx(now, port_id);
        }
    }

    // ----------------------------------------------------------------------------------------------
    // Switches

    fn switch_receive(&mut self, now: Time, node: u32, pid: u32) {
        let hosts = self.fabric.hosts;
        let sw = (node - hosts) as usize;
        let n = &self.fabric.nodes[node as usize];
        let st = &mut self.switches[sw];
        let p = self.pkts.get_mut(pid);
        p.hops = p.hops.saturating_add(1);
        let mut cx = SwitchCx { now, me: st.info, ports: PortsView::new(&self.fabric.ports, n.first_port, n.n_ports), facts: &self.fabric.facts, rng: &mut st.rng };
        if st.hooks.arrival {
            st.lb.on_arrival(&mut cx, p);
        }
        let dst_leaf = self.fabric.facts.leaf_of_host(p.dst);
        let down;
        let candidates: &[u32] = match st.info.kind {
            SwitchKind::Leaf if dst_leaf == st.info.index => {
                down = self.fabric.leaf_down_port(p.dst);
                std::slice::from_ref(&down)
            }
            SwitchKind::Leaf => self.fabric.leaf_candidates(st.info.index, dst_leaf),
            SwitchKind::Spine => self.fabric.spine_candidates(st.info.index, dst_leaf),
        };
        if candidates.is_empty() {
            st.drops += 1;
            self.dropped += p.wire_bytes as u64;
            self.pkts.free(pid);
            return;
        }
        let decision = st.lb.choose(&mut cx, p, candidates);
        st.decisions += 1;
        match decision {
            Decision::Forward(port) => {
                debug_assert!(candidates.contains(&port), "balancer chose port {port} outside its candidates");
                self.enqueue(now, port, pid);
            }
            Decision::Drop(_) | Decision::Cancel(_) => {
                st.drops += 1;
                let (kind, flow, src, dst, wire) = (p.kind, p.flow, p.src, p.dst, p.wire_bytes);
                self.dropped += wire as u64;
                self.pkts.free(pid);
                if matches!(decision, Decision::Cancel(_)) && kind == PacketKind::Data {
                    let mut c = Packet::new(PacketKind::Cancel, flow, dst, src);
                    c.wire_bytes = self.tp.ack_bytes;
                    c.sent_at = now;
                    let cid = self.new_packet(c);
                    self.sched.at(now, Event::Arrive { node, pkt: cid });
                }
            }
        }
    }

    fn new_packet(&mut self, p: Packet) -> u32 {
        self.created += p.wire_bytes as u64;
        self.pkts.alloc(p)
    }

    // ----------------------------------------------------------------------------------------------
    // Hosts: senders

    fn start_flow(&mut self, now: Time, flow: u32) {
        if let Some(next) = self.flows.get(flow as usize + 1) {
            self.sched.at(next.spec.start, Event::FlowStart { flow: flow + 1 });
        }
        let f = &mut self.flows[flow as usize];
        if f.started {
            return;
        }
        f.started = true;
        self.active += 1;
        self.peak_active = self.peak_active.max(self.active);
        match f.spec.transport {
            TransportKind::Udp => self.udp_tick(now, flow),
            _ => {
                f.tx.fill_window(now, &self.tp, &mut self.segs);
                self.emit_segments(now, flow);
            }
        }
    }

    /// Turns the sender's queued segments into packets on the host NIC, then keeps the RTO timer in step.
    fn emit_segments(&mut self, now: Time, flow: u32) {
        let mut segs = std::mem::take(&mut self.segs);
        for seg in segs.drain(..) {
            let f = &self.flows[flow as usize];
            let mut p = Packet::new(PacketKind::Data, flow, f.spec.src, f.spec.dst);
            p.sport = f.sport;
            p.dport = f.dport;
            p.seq = seg.seq;
            p.payload = seg.len;
            p.wire_bytes = seg.len + self.tp.header;
            p.retx = seg.retx;
            p.sent_at = now;
            p.ecn.ect = f.spec.transport == TransportKind::Dctcp;
            self.stamp_header(&mut p, flow);
            self.route_at_edge(now, flow, &mut p, seg.retx != Retx::No);
            let f = &mut self.flows[flow as usize];
            f.bytes_sent += seg.len as u64;
            f.packets_sent += 1;
            if seg.retx != Retx::No {
                f.retransmissions += 1;
            }
            let src = f.spec.src;
            let pid = self.new_packet(p);
            self.enqueue(now, self.fabric.host_nic(src), pid);
        }
        self.segs = segs;
        self.sync_rto(flow);
    }

    /// Fills the balancer header from the sender's own state, as the host stack would.
    fn stamp_header(&self, p: &mut Packet, flow: u32) {
        let f = &self.flows[flow as usize];
        if f.spec.best_effort {
            p.lb.class |= class::BEST_EFFORT;
        }
        if f.spec.deadline != Time::ZERO {
            p.lb.class |= class::DEADLINE;
            p.lb.deadline = f.spec.deadline;
        }
        p.lb.flow_size = f.spec.size;
        p.lb.remaining = f.spec.size.saturating_sub(f.tx.snd_una);
        p.lb.cwnd = f.tx.cwnd.min(u32::MAX as u64) as u32;
    }

    /// Lets the source host's edge balancer, if any, tag the packet with a path.
    fn route_at_edge(&mut self, now: Time, flow: u32, p: &mut Packet, retx: bool) {
        if self.edges.is_empty() {
            return;
        }
        let f = &self.flows[flow as usize];
        let (sl, dl) = (self.fabric.facts.leaf_of_host(f.spec.src), self.fabric.facts.leaf_of_host(f.spec.dst));
        if sl == dl {
            return;
        }
        let view = flow_view(f, flow, retx);
        let host = f.spec.src;
        let paths = self.fabric.paths(sl, dl);
        let e = &mut self.edges[host as usize];
        let mut cx = EdgeCx { now, host, facts: &self.fabric.facts, rng: &mut e.rng, probes: &mut self.probes };
        let tag = e.lb.choose_path(&mut cx, &view, p, paths);
        p.lb.path = tag;
        p.lb.class |= class::SOURCE_ROUTED;
        self.send_probes(now, host);
    }

    fn send_probes(&mut self, now: Time, host: u32) {
        if self.probes.is_empty() {
            return;
        }
        let mut probes = std::mem::take(&mut self.probes);
        for r in probes.drain(..) {
            let mut p = Packet::new(PacketKind::Probe, u32::MAX, host, r.dst);
            p.wire_bytes = self.tp.ack_bytes;
            p.sent_at = now;
            p.ecn.ect = true;
            p.lb.path = r.path;
            p.lb.class |= class::SOURCE_ROUTED;
            self.probes_sent += 1;
            let pid = self.new_packet(p);
            self.enqueue(now, self.fabric.host_nic(host), pid);
        }
        self.probes = probes;
    }

    fn sync_rto(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if let Some(d) = f.tx.rto_deadline {
            if d < f.rto_event_at {
                f.rto_event_at = d;
                self.sched.at(d, Event::Rto { flow });
            }
        }
    }

    fn rto_event(&mut self, now: Time, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.rto_event_at != now {
            return; // superseded by an earlier event
        }
        f.rto_event_at = Time::MAX;
        if f.state == Some(FlowState::Cancelled) {
            return;
        }
        match f.tx.rto_deadline {
            None => {}
            Some(d) if d > now => {
                f.rto_event_at = d;
                self.sched.at(d, Event::Rto { flow });
            }
            Some(_) => {
                f.tx.on_timeout(now, &self.tp, &mut self.segs);
                if !self.edges.is_empty() {
                    let f = &self.flows[flow as usize];
                    let view = flow_view(f, flow, true);
                    let host = f.spec.src;
                    let e = &mut self.edges[host as usize];
                    let mut cx = EdgeCx { now, host, facts: &self.fabric.facts, rng: &mut e.rng, probes: &mut self.probes };
                    e.lb.on_timeout(&mut cx, &view);
                    self.send_probes(now, host);
                }
                self.emit_segments(now, flow);
            }
        }
    }

    fn udp_tick(&mut self, now: Time, flow: u32) {
        let f = &self.flows[flow as usize];
        if f.state.is_some() || f.bytes_sent >= f.spec.size {
            return;
        }
        let len = (f.spec.size - f.bytes_sent).min(self.tp.mss) as u32;
        let mut p = Packet::new(PacketKind::Udp, flow, f.spec.src, f.spec.dst);
        p.sport = f.sport;
        p.dport = f.dport;
        p.seq = f.bytes_sent;
        p.payload = len;
        p.wire_bytes = len + self.tp.header;
        p.sent_at = now;
        let gap = f.spec.udp_rate.tx_time(Bytes(p.wire_bytes as u64));
        self.stamp_header(&mut p, flow);
        self.route_at_edge(now, flow, &mut p, false);
        let f = &mut self.flows[flow as usize];
        f.bytes_sent += len as u64;
        f.packets_sent += 1;
        let more = f.bytes_sent < f.spec.size;
        let src = f.spec.src;
        let pid = self.new_packet(p);
        self.enqueue(now, self.fabric.host_nic(src), pid);
        if more {
            self.sched.at(now + gap, Event::UdpTick { flow });
        }
    }

    // ----------------------------------------------------------------------------------------------
    // Hosts: receivers

    fn consume(&mut self, pid: u32) {
        self.delivered += self.pkts.get(pid).wire_bytes as u64;
        self.pkts.free(pid);
    }

    fn end_flow(&mut self, now: Time, flow: u32, state: FlowState) {
        let f = &mut self.flows[flow as usize];
        if f.state.is_some() {
            return;
        }
        f.state = Some(state);
        f.finish = now;
        self.ended += 1;
        self.active -= 1;
    }

    fn host_receive(&mut self, now: Time, host: u32, pid: u32) {
        let p = *self.pkts.get(pid);
        debug_assert_eq!(p.dst, host);
        match p.kind {
            PacketKind::Data => {
                if self.tp.reseq_timeout > Time::ZERO {
                    let timeout = self.tp.reseq_timeout;
                    let f = &mut self.flows[p.flow as usize];
                    let mut rel = std::mem::take(&mut self.released);
                    f.reseq.on_packet(now, timeout, p.seq, p.payload, pid, &mut rel);
                    if let Some(at) = f.reseq.flush_at {
                        if at < f.reseq_event_at {
                            f.reseq_event_at = at;
                            self.sched.at(at, Event::Reseq { flow: p.flow });
                        }
                    }
                    for id in rel.drain(..) {
                        self.tcp_deliver(now, id);
                    }
                    self.released = rel;
                } else {
                    self.tcp_deliver(now, pid);
                }
            }
            PacketKind::Ack => {
                self.consume(pid);
                let f = &mut self.flows[p.flow as usize];
                if f.state == Some(FlowState::Cancelled) {
                    return;
                }
                f.tx.on_ack(now, p.seq, p.ecn.ece, p.echo_ts, &self.tp, &mut self.segs);
                if !self.edges.is_empty() {
                    let view = flow_view(f, p.flow, false);
                    let e = &mut self.edges[host as usize];
                    let mut cx = EdgeCx { now, host, facts: &self.fabric.facts, rng: &mut e.rng, probes: &mut self.probes };
                    e.lb.on_ack(&mut cx, &view, &p);
                    self.send_probes(now, host);
                }
                self.emit_segments(now, p.flow);
            }
            PacketKind::Udp => {
                self.consume(pid);
                let f = &mut self.flows[p.flow as usize];
                f.udp_received += p.payload as u64;
                f.queue_delay += p.queue_delay;
                if f.udp_received >= f.spec.size {
                    self.end_flow(now, p.flow, FlowState::Completed);
                }
            }
            PacketKind::Probe => {
                self.consume(pid);
                let mut r = Packet::new(PacketKind::ProbeReply, u32::MAX, host, p.src);
                r.wire_bytes = self.tp.ack_bytes;
                r.sent_at = now;
                r.echo_ts = p.sent_at;
                r.ecn.ece = p.ecn.ce;
                r.lb.echo_path = p.lb.path;
                let rid = self.new_packet(r);
                self.enqueue(now, self.fabric.host_nic(host), rid);
            }
            PacketKind::ProbeReply => {
                self.consume(pid);
                if !self.edges.is_empty() {
                    let e = &mut self.edges[host as usize];
                    let mut cx = EdgeCx { now, host, facts: &self.fabric.facts, rng: &mut e.rng, probes: &mut self.probes };
                    e.lb.on_probe_reply(&mut cx, &p);
                    self.send_probes(now, host);
                }
            }
            PacketKind::Cancel => {
                self.consume(pid);
                let f = &mut self.flows[p.flow as usize];
                f.tx.rto_deadline = None;
                self.end_flow(now, p.flow, FlowState::Cancelled);
            }
        }
    }

    /// Hands a data packet to the flow's TCP receiver and sends the ACK.
    fn tcp_deliver(&mut self, now: Time, pid: u32) {
        let p = *self.pkts.get(pid);
        self.consume(pid);
        let f = &mut self.flows[p.flow as usize];
        let rx = f.rx.on_data(p.seq, p.payload, p.retx);
        f.out_of_order += rx.out_of_order as u64;
        f.spurious += rx.spurious as u64;
        f.queue_delay += p.queue_delay;
        let complete = f.state.is_none() && f.rx.rcv_nxt >= f.spec.size;
        let mut a = Packet::new(PacketKind::Ack, p.flow, p.dst, p.src);
        a.sport = p.dport;
        a.dport = p.sport;
        a.seq = rx.ack;
        a.wire_bytes = self.tp.ack_bytes;
        a.sent_at = now;
        a.echo_ts = p.sent_at;
        a.ecn.ece = p.ecn.ce;
        a.lb.echo_path = p.lb.path;
        a.lb.class = p.lb.class & class::BEST_EFFORT;
        // The host echoes only the path tag (as Hermes/Clove-style edges need); feedback slots start empty
        // on every new packet, so switch-to-switch feedback must be written by switches.
        if complete {
            self.end_flow(now, p.flow, FlowState::Completed);
        }
        let aid = self.new_packet(a);
        self.enqueue(now, self.fabric.host_nic(p.dst), aid);
    }

    fn reseq_event(&mut self, now: Time, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.reseq_event_at != now {
            return;
        }
        f.reseq_event_at = Time::MAX;
        match f.reseq.flush_at {
            Some(at) if at > now => {
                f.reseq_event_at = at;
                self.sched.at(at, Event::Reseq { flow });
            }
            Some(_) => {
                let mut rel = std::mem::take(&mut self.released);
                f.reseq.flush(&mut rel);
                for id in rel.drain(..) {
                    self.tcp_deliver(now, id);
                }
                self.released = rel;
            }
            None => {}
        }
    }

    // ----------------------------------------------------------------------------------------------
    // Sampler and results

    fn sample(&mut self, now: Time) {
        let Some(s) = self.sampler.as_mut() else { return };
        for &p in &s.ports {
            let port = &self.fabric.ports[p as usize];
            s.time_us.push(now.as_us());
            s.kind.push("port".into());
            s.id.push(p as u64);
            s.queue_bytes.push(port.queued_bytes);
            s.bytes.push(port.bytes_sent);
        }
        for &f in &s.flows {
            let fl = &self.flows[f as usize];
            s.time_us.push(now.as_us());
            s.kind.push("flow".into());
            s.id.push(f as u64);
            s.queue_bytes.push(0);
            s.bytes.push(if fl.spec.transport == TransportKind::Udp { fl.udp_received } else { fl.rx.rcv_nxt });
        }
        let next = now + s.interval;
        let more_flows = (self.ended as usize) < self.flows.len();
        if next <= self.horizon && (more_flows || self.horizon != Time::MAX) {
            self.sched.at(next, Event::Sample);
        }
    }

    /// Builds the result tables. Call after the run has finished (or to inspect a partial run).
    pub fn results(&mut self) -> Results {
        let end = if self.horizon != Time::MAX && self.finished { self.horizon.min(self.sched.peek_time().unwrap_or(self.horizon)).max(self.sched.now()) } else { self.sched.now() };
        for port in &mut self.fabric.ports {
            port.account_area(end);
        }
        let n = self.flows.len();
        let mut t = Table::default();
        let us = |t: Time| t.as_us();
        t.push("flow_id", Column::U64((0..n as u64).collect()));
        t.push("source", Column::U64(self.flows.iter().map(|f| f.spec.source as u64).collect()));
        t.push("src_host", Column::U64(self.flows.iter().map(|f| f.spec.src as u64).collect()));
        t.push("dst_host", Column::U64(self.flows.iter().map(|f| f.spec.dst as u64).collect()));
        t.push("size_bytes", Column::U64(self.flows.iter().map(|f| f.spec.size).collect()));
        t.push(
            "transport",
            Column::Str(
                self.flows
                    .iter()
                    .map(|f| match f.spec.transport {
                        TransportKind::Dctcp => "dctcp",
                        TransportKind::Newreno => "newreno",
                        TransportKind::Udp => "udp",
                    })
                    .map(String::from)
                    .collect(),
            ),
        );
        t.push("best_effort", Column::Bool(self.flows.iter().map(|f| f.spec.best_effort).collect()));
        let completed = |f: &Flow| f.state == Some(FlowState::Completed);
        let deadline: Vec<Option<f64>> = self.flows.iter().map(|f| (f.spec.deadline != Time::ZERO).then(|| us(f.spec.deadline - f.spec.start))).collect();
        let fct: Vec<Option<f64>> = self.flows.iter().map(|f| completed(f).then(|| us(f.finish - f.spec.start))).collect();
        // Compared on the µs values the table shows, so the column always agrees with them; a flow that did
        // not complete missed its deadline.
        let deadline_met: Vec<Option<bool>> = deadline.iter().zip(&fct).map(|(d, f)| d.map(|d| f.is_some_and(|f| f <= d))).collect();
        t.push("deadline_us", Column::OptF64(deadline));
        t.push("start_us", Column::F64(self.flows.iter().map(|f| us(f.spec.start)).collect()));
        t.push("finish_us", Column::OptF64(self.flows.iter().map(|f| completed(f).then(|| us(f.finish))).collect()));
        t.push("fct_us", Column::OptF64(fct));
        t.push("ideal_fct_us", Column::OptF64(self.flows.iter().map(|f| (f.ideal_fct != Time::MAX).then(|| us(f.ideal_fct))).collect()));
        t.push(
            "slowdown",
            Column::OptF64(self.flows.iter().map(|f| (completed(f) && f.ideal_fct != Time::MAX).then(|| ((f.finish - f.spec.start).0 as f64 / f.ideal_fct.0 as f64).max(1.0))).collect()),
        );
        t.push("state", Column::Str(self.flows.iter().map(|f| f.state.unwrap_or(FlowState::Unfinished).name().to_string()).collect()));
        t.push("bytes_sent", Column::U64(self.flows.iter().map(|f| f.bytes_sent).collect()));
        t.push("bytes_delivered", Column::U64(self.flows.iter().map(|f| if f.spec.transport == TransportKind::Udp { f.udp_received } else { f.rx.rcv_nxt }).collect()));
        t.push("packets_sent", Column::U64(self.flows.iter().map(|f| f.packets_sent).collect()));
        t.push("retransmissions", Column::U64(self.flows.iter().map(|f| f.retransmissions).collect()));
        t.push("spurious_retransmissions", Column::U64(self.flows.iter().map(|f| f.spurious).collect()));
        t.push("timeouts", Column::U64(self.flows.iter().map(|f| f.tx.timeouts as u64).collect()));
        t.push("out_of_order", Column::U64(self.flows.iter().map(|f| f.out_of_order).collect()));
        t.push("queueing_delay_us", Column::F64(self.flows.iter().map(|f| us(f.queue_delay)).collect()));
        t.push("uplink_bytes", Column::U64List { width: self.uplinks, values: self.uplink_bytes.clone() });
        t.push("deadline_met", Column::OptBool(deadline_met));

        let mut ports = Table::default();
        let pl = &self.fabric.ports;
        let nodes = &self.fabric.nodes;
        let span = end.0.max(1) as f64;
        ports.push("node", Column::U64(pl.iter().map(|p| p.owner as u64).collect()));
        ports.push("node_kind", Column::Str(pl.iter().map(|p| nodes[p.owner as usize].kind.name().to_string()).collect()));
        ports.push("port", Column::U64((0..pl.len() as u64).collect()));
        ports.push("peer", Column::U64(pl.iter().map(|p| p.peer as u64).collect()));
        ports.push("role", Column::Str(pl.iter().map(|p| p.role.name().to_string()).collect()));
        ports.push("slot", Column::U64(pl.iter().map(|p| p.slot as u64).collect()));
        ports.push("rate_gbps", Column::F64(pl.iter().map(|p| p.rate.as_gbps()).collect()));
        ports.push("delay_us", Column::F64(pl.iter().map(|p| p.delay.as_us()).collect()));
        ports.push("failed", Column::Bool(pl.iter().map(|p| !p.up).collect()));
        ports.push("ecn_k_packets", Column::U64(pl.iter().map(|p| p.ecn_k as u64).collect()));
        ports.push("bytes_sent", Column::U64(pl.iter().map(|p| p.bytes_sent).collect()));
        ports.push("packets_sent", Column::U64(pl.iter().map(|p| p.packets_sent).collect()));
        ports.push("drops", Column::U64(pl.iter().map(|p| p.drops).collect()));
        ports.push("ecn_marks", Column::U64(pl.iter().map(|p| p.ecn_marks).collect()));
        ports.push("peak_queue_bytes", Column::U64(pl.iter().map(|p| p.peak_queue_bytes).collect()));
        ports.push("peak_queue_packets", Column::U64(pl.iter().map(|p| p.peak_queue_packets as u64).collect()));
        ports.push("avg_queue_bytes", Column::F64(pl.iter().map(|p| p.queue_area / span).collect()));

        let mut sw = Table::default();
        sw.push("node", Column::U64(self.switches.iter().map(|s| s.info.node as u64).collect()));
        sw.push("kind", Column::Str(self.switches.iter().map(|s| if s.info.kind == SwitchKind::Leaf { "leaf" } else { "spine" }.to_string()).collect()));
        sw.push("index", Column::U64(self.switches.iter().map(|s| s.info.index as u64).collect()));
        sw.push("decisions", Column::U64(self.switches.iter().map(|s| s.decisions).collect()));
        sw.push("balancer_drops", Column::U64(self.switches.iter().map(|s| s.drops).collect()));
        sw.push("state_bytes", Column::U64(self.switches.iter().map(|s| s.lb.state_bytes() as u64).collect()));

        let mut samples = Table::default();
        if let Some(s) = &self.sampler {
            samples.push("time_us", Column::F64(s.time_us.clone()));
            samples.push("kind", Column::Str(s.kind.clone()));
            samples.push("id", Column::U64(s.id.clone()));
            samples.push("queue_bytes", Column::U64(s.queue_bytes.clone()));
            samples.push("bytes", Column::U64(s.bytes.clone()));
        }

        let count = |st: FlowState| self.flows.iter().filter(|f| f.state.unwrap_or(FlowState::Unfinished) == st).count() as u64;
        let stats = RunStats {
            events: self.sched.processed(),
            sim_time_us: end.as_us(),
            flows_total: n as u64,
            flows_completed: count(FlowState::Completed),
            flows_cancelled: count(FlowState::Cancelled),
            flows_unfinished: count(FlowState::Unfinished),
            wire_bytes_created: self.created,
            wire_bytes_delivered: self.delivered,
            wire_bytes_dropped: self.dropped,
            wire_bytes_in_flight: self.pkts.live_bytes(),
            peak_packets_in_flight: self.pkts.peak_live() as u64,
            peak_flows_active: self.peak_active,
            balancer_drops: self.switches.iter().map(|s| s.drops).sum(),
            probes_sent: self.probes_sent,
            engine_bytes: self.engine_bytes() as u64,
            source_mean_bytes: self.infos.iter().map(|i| i.mean_size).collect(),
            source_offered_bps: self.infos.iter().map(|i| i.offered_bps).collect(),
            source_access_capacity_bps: self.infos.iter().map(|i| i.access_capacity_bps).collect(),
            source_fabric_capacity_bps: self.infos.iter().map(|i| i.fabric_capacity_bps).collect(),
        };
        Results { flows: t, ports, switches: sw, samples, stats }
    }

    /// Approximate bytes the engine holds for this run (flows, packets, queues, events, balancer state).
    pub fn engine_bytes(&self) -> usize {
        let flows = self.flows.capacity() * std::mem::size_of::<Flow>() + self.uplink_bytes.capacity() * 8;
        let queues: usize = self.fabric.ports.iter().map(|p| p.queue.capacity() * 4 + std::mem::size_of_val(p)).sum();
        let lbs: usize = self.switches.iter().map(|s| s.lb.state_bytes()).sum::<usize>() + self.edges.iter().map(|e| e.lb.state_bytes()).sum::<usize>();
        flows + self.pkts.footprint_bytes() + queues + self.sched.pending() * 32 + lbs
    }

    /// The kind of a node (for tests and tools).
    pub fn node_kind(&self, node: u32) -> NodeKind {
        self.fabric.nodes[node as usize].kind
    }

    /// Next-hop candidates are exposed for tests that check routing.
    pub fn paths(&self, src_leaf: u32, dst_leaf: u32) -> Vec<u16> {
        self.fabric.paths(src_leaf, dst_leaf).to_vec()
    }
}

