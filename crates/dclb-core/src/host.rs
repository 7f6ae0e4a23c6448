//! The host stack: senders turning a flow's data into packets, receivers turning packets into ACKs, the
//! retransmission and resequencing timers, UDP sources, probes, and the edge balancer's hooks.
//!
//! [`Hosts`] owns the flows (both transport ends, statistics), the edge balancers and the run's flow
//! counts (active, ended, last progress). Its handlers take a [`Cx`] (time, a schedule that only adds
//! events, the packet arena) and the [`Network`], which it uses for two things only: to put a packet on a
//! host's NIC (`Network::enqueue_at_nic`) and to read the routing facts. What the network reports about NICs
//! comes back as values: a packet leaving its host ([`Leaving`], which `Hosts::leaving_host` stamps) and a
//! data packet that has left it ([`LeftHost`], which wakes the sender in `Hosts::left_nic`).
//!
//! ```text
//!  sender:   FlowStart (or SYN-ACK) / ACK / RTO / own packet left the NIC ─► TcpSender (window, NIC budget) ─►
//!            segments ─► packet: header stamped from the sender's state, path tag from the edge balancer
//!            (if any) ─► host NIC port
//!  receiver: data ─► [resequencing buffer] ─► TcpReceiver ─► ACK: cumulative ack, SACK blocks, ECN echo,
//!            timestamp echo, and whatever the scheme reflects (`SchemeSpec::reflect`) ─► host NIC port
//!  NIC:      a packet starting serialisation leaves the host: send timestamp, edge path choice (data)
//!  edge:     ACKs, probe replies and timeouts feed the edge balancer; probes it asks for leave at once;
//!            with `ack_routing = "edge"` the receiving host's balancer also tags the ACKs it makes
//! ```
//!
//! A host knows only its own flows: the balancer header it writes comes from the sender's own state
//! (class, deadline, bytes remaining, window), never from the network.
//!
//! **Priority** (`topology.priority_queues`, a source's `priority`). The sender stamps each data packet's
//! priority level from its source's rule when it makes the packet: a fixed level, or PIAS's demotion by
//! the payload bytes the flow has sent before it. Control packets (ACKs, SYN, SYN-ACK, probes and their
//! replies) stay at the top level, 0: they are small, and every sender waits on them.
//!
//! **Handshake** (`transport.handshake`). A TCP flow first sends a SYN; the receiver answers every SYN
//! with a SYN-ACK, and the first SYN-ACK opens the connection ([`Setup`]) and lets the sender fill its
//! window. The SYN timer is the flow's retransmission timer event: without a SYN-ACK by the initial RTO
//! the SYN is sent again, the timer doubled.
//!
//! **TCP small queues.** A flow may have at most `host_queue_limit_bytes` of data in its host's NIC
//! (waiting or being serialised). Before every call that may send, the host grants the sender what is left
//! of that budget ([`TcpSender::nic_budget`]), so a segment is created only when it can join the NIC
//! queue; when one of the flow's packets finishes serialisation the sender is woken and sends what its
//! window and the freed room allow, as Linux does on a NIC's transmit completion. The NIC ring itself is a
//! drop-tail queue of `nic_queue_packets` shared by the host's flows, ACKs and probes.
//!
//! **ECN capability.** A DCTCP flow's data is ECN-capable (ECT); so is every data packet of a host whose edge
//! balancer asks for it ([`EdgeBalancer::sets_ect`]: Clove's and Hermes' edges set ECT whatever the guest's
//! TCP), and every probe. A receiver echoes CE on the ACK of each data packet (ECE) for every TCP flow; the
//! sending edge reads it, and a NewReno sender ignores it (only DCTCP reacts), which stands for the receiving
//! edge hiding CE from a guest that did not negotiate ECN while reflecting it to the sending edge.

use crate::config::{PriorityRule, SourceConfig, TransportConfig, TransportKind};
use crate::cx::Cx;
use crate::ids::{FlowId, HostId};
use crate::lb::ackpath::AckView;
use crate::lb::{EdgeBalancer, EdgeCx, FlowView, PacketMut, ProbeRequest, Reflect};
use crate::packet::{class, Packet, PacketKind};
use crate::rng::Rng;
use crate::sched::{Event, Schedule};
use crate::switch::{Leaving, LeftHost, Network};
use crate::traffic::FlowSpec;
use crate::transport::reseq::Resequencer;
use crate::transport::sack::SackOption;
use crate::transport::tcp::{Retx, Segment, TcpReceiver, TcpSender};
use crate::transport::TcpParams;
use crate::units::{Bytes, Time};

/// Flow end states.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FlowState {
    /// Every byte reached the receiver.
    Completed = 0,
    /// The network gave up on the flow and told the source (e.g. DAR's hopeless deadline flows).
    Cancelled = 1,
    /// Still running when the run stopped at its horizon.
    Unfinished = 2,
}

impl FlowState {
    pub fn name(self) -> &'static str {
        match self {
            FlowState::Completed => "completed",
            FlowState::Cancelled => "cancelled",
            FlowState::Unfinished => "unfinished",
        }
    }
}

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
    pub(crate) rto_event_at: Time,
    /// Time of this flow's pending Reseq event, `Time::MAX` if none.
    pub(crate) reseq_event_at: Time,
    /// Wire bytes of this flow's data in its host's NIC, waiting or being serialised (TCP small queues).
    pub(crate) nic_bytes: u64,
    /// Whether the connection is open for data (see [`Setup`]).
    pub(crate) setup: Setup,
    pub ideal_fct: Time,
    // statistics
    pub bytes_sent: u64,
    pub packets_sent: u64,
    pub retransmissions: u64,
    pub spurious: u64,
    pub out_of_order: u64,
    pub queue_delay: Time,
    /// A UDP flow's payload bytes that reached the receiver, and that the network dropped (NIC, switch,
    /// wire): the flow ends when the two add up to its size, at the time of its last delivered byte.
    pub udp_received: u64,
    pub udp_lost: u64,
    /// When a UDP flow's receiver last got a packet (`Time::ZERO` before the first).
    pub udp_last_rx: Time,
}

impl Flow {
    /// Bytes that reached the receiving application so far in the run (a pre-loaded flow's bytes before
    /// the run, `spec.prior`, left out).
    pub fn bytes_delivered(&self) -> u64 {
        if self.spec.transport == TransportKind::Udp {
            self.udp_received
        } else {
            self.rx.rcv_nxt - self.spec.prior
        }
    }

    /// Lets the sender add up to `limit` wire bytes of data to the NIC, counting what it has there already.
    fn grant_nic_budget(&mut self, limit: u64) {
        self.tx.nic_budget = limit.saturating_sub(self.nic_bytes);
    }

    /// What the host's edge balancer may know of this flow.
    fn view(&self, id: FlowId, retransmission: bool) -> FlowView {
        FlowView {
            flow: id,
            dst: self.spec.dst,
            size: self.spec.size,
            start: self.spec.start,
            sent: self.tx.high_tx,
            acked: self.tx.snd_una,
            cwnd: self.tx.cwnd,
            srtt: self.tx.srtt,
            retransmission,
        }
    }
}

/// Where a TCP flow's connection setup stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Setup {
    /// Data may flow: the SYN-ACK arrived, or no handshake is modelled.
    Open,
    /// The SYN is out; without a SYN-ACK by `deadline` it is sent again with the timer doubled from `rto`.
    SynSent { deadline: Time, rto: Time },
}

/// The host stack's own settings, from the transport config (and the sources' priority rules).
#[derive(Clone, Debug)]
pub(crate) struct HostParams {
    /// Most wire bytes of one flow's data in its host's NIC (TCP small queues); `u64::MAX`: no limit.
    pub queue_limit: u64,
    /// TCP flows open with a SYN / SYN-ACK exchange.
    pub handshake: bool,
    /// Each source's priority rule (by `FlowSpec::source`), or `None` when every source sends at the top
    /// level (no stamping at all: the packet's level is already 0).
    pub priority: Option<Box<[PriorityRule]>>,
}

impl HostParams {
    pub fn from_config(c: &TransportConfig) -> HostParams {
        let queue_limit = match c.host_queue_limit_bytes {
            None => 2 * (c.mss_bytes as u64 + c.header_bytes as u64),
            Some(0) => u64::MAX,
            Some(limit) => limit,
        };
        HostParams { queue_limit, handshake: c.handshake, priority: None }
    }

    /// The sources' priority rules, for stamping data packets (see [`HostParams::priority`]).
    pub fn with_priorities(mut self, sources: &[SourceConfig]) -> HostParams {
        let top = PriorityRule::default();
        if sources.iter().any(|s| s.priority != top) {
            self.priority = Some(sources.iter().map(|s| s.priority.clone()).collect());
        }
        self
    }
}

/// One host's edge balancer (edge schemes only).
pub(crate) struct EdgeState {
    pub lb: Box<dyn EdgeBalancer>,
    pub rng: Rng,
    /// The balancer's [`EdgeBalancer::sets_ect`], asked once.
    pub ect: bool,
    /// The balancer's [`EdgeBalancer::routes_acks`], asked once.
    pub acks: bool,
}

impl EdgeState {
    pub fn new(lb: Box<dyn EdgeBalancer>, rng: Rng) -> EdgeState {
        EdgeState { ect: lb.sets_ect(), acks: lb.routes_acks(), lb, rng }
    }
}

/// The host stack of every host (see the module doc).
pub struct Hosts {
    tp: TcpParams,
    params: HostParams,
    pub(crate) flows: Vec<Flow>,
    /// One edge balancer per host for edge schemes, empty otherwise.
    pub(crate) edges: Vec<EdgeState>,
    /// What the receiving host copies into ACKs for this run's scheme.
    reflect: Reflect,
    /// Flows ended, active now, and active at most at once.
    ended: u64,
    active: u64,
    peak_active: u64,
    /// Last time a receiver got new data or a flow ended (the no-progress watchdog's reading).
    progress_at: Time,
    probes_sent: u64,
    // scratch buffers, reused
    segs: Vec<Segment>,
    released: Vec<u32>,
    probes: Vec<ProbeRequest>,
    alarms: crate::lb::Alarms,
}

impl Hosts {
    pub(crate) fn new(tp: TcpParams, params: HostParams, flows: Vec<Flow>, edges: Vec<EdgeState>, reflect: Reflect) -> Hosts {
        Hosts {
            tp,
            params,
            flows,
            edges,
            reflect,
            ended: 0,
            active: 0,
            peak_active: 0,
            progress_at: Time::ZERO,
            probes_sent: 0,
            segs: Vec::with_capacity(64),
            released: Vec::with_capacity(64),
            probes: Vec::new(),
            alarms: Vec::new(),
        }
    }

    /// Each flow's FCT alone on the fabric, over its best path with the engine's own sender
    /// ([`crate::transport::alone`]): the floor no load balancer can go below. `None` for UDP sources and
    /// flows without an end. Flows of the same size, transport and path share one computation.
    pub(crate) fn alone_fcts(&self, fabric: &crate::fabric::Fabric) -> Vec<Option<Time>> {
        use crate::transport::alone::{alone_fct, AloneParams, Hop};
        let mut seen: std::collections::HashMap<(Vec<Hop>, Vec<Hop>, u64, bool), Time> = Default::default();
        self.flows
            .iter()
            .map(|f| {
                let s = &f.spec;
                if s.transport == TransportKind::Udp || s.size >= crate::traffic::UNBOUNDED || s.preloaded {
                    return None;
                }
                let dctcp = s.transport == TransportKind::Dctcp;
                let data = fabric.best_hops(s.src, s.dst, s.size, &self.tp);
                let acks = fabric.best_hops(s.dst, s.src, 1, &self.tp);
                let p = AloneParams { tcp: self.tp.clone(), dctcp, handshake: self.params.handshake, nic_limit: self.params.queue_limit };
                let key = (data, acks, s.size, dctcp);
                if let Some(t) = seen.get(&key) {
                    return Some(*t);
                }
                let t = alone_fct(s.size, &key.0, &key.1, &p);
                seen.insert(key, t);
                Some(t)
            })
            .collect()
    }

    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }
    /// Flows that have ended (completed or cancelled).
    pub fn ended(&self) -> u64 {
        self.ended
    }
    /// Flows started and not ended.
    pub fn active(&self) -> u64 {
        self.active
    }
    pub fn peak_active(&self) -> u64 {
        self.peak_active
    }
    /// Last time a receiver got new in-order data, a UDP packet, or a flow ended.
    pub fn progress_at(&self) -> Time {
        self.progress_at
    }
    /// The watchdog's clock while no flow is active: time without flows never counts as no progress.
    pub(crate) fn idle_at(&mut self, now: Time) {
        self.progress_at = now;
    }
    pub fn probes_sent(&self) -> u64 {
        self.probes_sent
    }
    /// Whether hosts have edge balancers (an edge scheme).
    pub fn has_edges(&self) -> bool {
        !self.edges.is_empty()
    }

    /// Schedules the first flow start and every edge balancer's first periodic run. Flows are sorted by
    /// start time; only the next start is ever scheduled (each start schedules the following one), which
    /// keeps the event queue as small as the traffic in flight.
    pub(crate) fn schedule_start(&self, schedule: &mut Schedule) {
        if let Some(f) = self.flows.first() {
            schedule.at(f.spec.start, Event::FlowStart { flow: FlowId(0) });
        }
        for (h, e) in self.edges.iter().enumerate() {
            if let Some(p) = e.lb.timer_period().filter(|p| *p > Time::ZERO) {
                schedule.at(p, Event::EdgeTimer { host: HostId(h as u32) });
            }
        }
    }

    /// Bytes the host stack holds: flows and edge balancer state.
    pub(crate) fn engine_bytes(&self) -> usize {
        self.flows.capacity() * std::mem::size_of::<Flow>() + self.edges.iter().map(|e| e.lb.state_bytes()).sum::<usize>()
    }

    /// Runs `hook` on host `host`'s edge balancer with its context, then schedules the alarms and sends
    /// the probes it asked for. Every edge balancer call goes through here: the one place an [`EdgeCx`]
    /// is built. The hook also gets the network, for the routing facts the engine hands a balancer (its
    /// path list).
    fn edge_hook<R>(&mut self, cx: &mut Cx, net: &mut Network, host: HostId, hook: impl FnOnce(&mut dyn EdgeBalancer, &mut EdgeCx, &Network) -> R) -> R {
        let e = &mut self.edges[host.index()];
        let mut ecx = EdgeCx { now: cx.now, host, facts: &net.fabric.facts, rng: &mut e.rng, probes: &mut self.probes, alarms: &mut self.alarms };
        let r = hook(&mut *e.lb, &mut ecx, net);
        for (at, token) in self.alarms.drain(..) {
            cx.schedule.at(at, Event::EdgeAlarm { host, token });
        }
        self.send_probes(cx, net, host);
        r
    }

    /// Whether host `host`'s edge balancer makes the data it sends ECN-capable ([`EdgeBalancer::sets_ect`]).
    fn edge_sets_ect(&self, host: HostId) -> bool {
        self.edges.get(host.index()).is_some_and(|e| e.ect)
    }

    pub(crate) fn edge_timer(&mut self, cx: &mut Cx, net: &mut Network, host: HostId) {
        let period = self.edge_hook(cx, net, host, |lb, ecx, _| {
            lb.on_timer(ecx);
            lb.timer_period()
        });
        if let Some(p) = period.filter(|p| *p > Time::ZERO) {
            cx.schedule.at(cx.now + p, Event::EdgeTimer { host });
        }
    }

    pub(crate) fn edge_alarm(&mut self, cx: &mut Cx, net: &mut Network, host: HostId, token: u32) {
        self.edge_hook(cx, net, host, |lb, ecx, _| lb.on_alarm(ecx, token));
    }

    /// Puts packet `pid` on host `host`'s NIC; whether the NIC took it. A packet that starts serialisation
    /// because of it leaves its host (stamped here).
    fn put_on_nic(&mut self, cx: &mut Cx, net: &mut Network, host: HostId, pid: u32) -> bool {
        let r = net.enqueue_at_nic(cx, host, pid);
        if let Some(l) = r.leaving() {
            self.leaving_host(cx, net, l);
        }
        r.admitted
    }

    /// Makes a packet (counted as created, its 5-tuple digested) and puts it on host `host`'s NIC; whether
    /// the NIC took it.
    fn send(&mut self, cx: &mut Cx, net: &mut Network, host: HostId, p: Packet) -> bool {
        let pid = cx.pkts.make(p);
        self.put_on_nic(cx, net, host, pid)
    }

    // ----------------------------------------------------------------------------------------------
    // Senders

    pub(crate) fn start_flow(&mut self, cx: &mut Cx, net: &mut Network, flow: FlowId) {
        if let Some(next) = self.flows.get(flow.index() + 1) {
            cx.schedule.at(next.spec.start, Event::FlowStart { flow: FlowId(flow.0 + 1) });
        }
        let f = &mut self.flows[flow.index()];
        if f.started {
            return;
        }
        f.started = true;
        self.active += 1;
        self.peak_active = self.peak_active.max(self.active);
        match f.spec.transport {
            TransportKind::Udp => self.udp_tick(cx, net, flow),
            // A pre-loaded flow's connection is open already (traffic/stationary.rs).
            _ if self.params.handshake && !f.spec.preloaded => self.send_syn(cx, net, flow, self.tp.init_rto),
            _ => self.send_more(cx, net, flow),
        }
    }

    /// Sends the flow's SYN (ACK-sized, the flow's 5-tuple and header) and arms the SYN timer `rto` ahead.
    fn send_syn(&mut self, cx: &mut Cx, net: &mut Network, flow: FlowId, rto: Time) {
        let f = &self.flows[flow.index()];
        let mut p = Packet::new(PacketKind::Syn, flow, f.spec.src, f.spec.dst);
        p.sport = f.sport;
        p.dport = f.dport;
        p.wire_bytes = self.tp.ack_bytes;
        self.stamp_header(&mut p, flow);
        let f = &mut self.flows[flow.index()];
        let deadline = cx.now + rto;
        f.setup = Setup::SynSent { deadline, rto };
        if deadline < f.rto_event_at {
            f.rto_event_at = deadline;
            cx.schedule.at(deadline, Event::Rto { flow });
        }
        let src = f.spec.src;
        self.send(cx, net, src, p);
    }

    /// Lets the flow's sender fill its window within its NIC budget, and sends what it made.
    fn send_more(&mut self, cx: &mut Cx, net: &mut Network, flow: FlowId) {
        let f = &mut self.flows[flow.index()];
        f.grant_nic_budget(self.params.queue_limit);
        f.tx.fill_window(cx.now, &self.tp, &mut self.segs);
        self.emit_segments(cx, net, flow);
    }

    /// A packet of this host finished serialisation on its NIC (the network's [`LeftHost`]). A data packet
    /// frees its flow's share of the NIC, and the sender, woken, sends what its window and the freed room
    /// allow (TCP small queues: what a real stack does when the NIC completes a transmission).
    pub(crate) fn left_nic(&mut self, cx: &mut Cx, net: &mut Network, left: LeftHost) {
        if left.kind != PacketKind::Data {
            return;
        }
        let f = &mut self.flows[left.flow.index()];
        f.nic_bytes -= left.wire as u64;
        if f.state.is_none() {
            self.send_more(cx, net, left.flow);
        }
    }

    /// Turns the sender's queued segments into packets on the host NIC, then keeps the RTO timer in step.
    fn emit_segments(&mut self, cx: &mut Cx, net: &mut Network, flow: FlowId) {
        let mut segs = std::mem::take(&mut self.segs);
        for seg in segs.drain(..) {
            let f = &self.flows[flow.index()];
            let mut p = Packet::new(PacketKind::Data, flow, f.spec.src, f.spec.dst);
            p.sport = f.sport;
            p.dport = f.dport;
            p.seq = seg.seq;
            p.payload = seg.len;
            p.wire_bytes = seg.len + self.tp.header;
            p.retx = seg.retx;
            p.ecn.ect = f.spec.transport == TransportKind::Dctcp || self.edge_sets_ect(f.spec.src);
            self.stamp_header(&mut p, flow);
            let f = &mut self.flows[flow.index()];
            f.bytes_sent += seg.len as u64;
            f.packets_sent += 1;
            if seg.retx != Retx::No {
                f.retransmissions += 1;
            }
            let (src, wire) = (f.spec.src, p.wire_bytes as u64);
            if self.send(cx, net, src, p) {
                self.flows[flow.index()].nic_bytes += wire;
            }
        }
        self.segs = segs;
        self.sync_rto(&mut cx.schedule, flow);
    }

    /// Fills the balancer header from the sender's own state, as the host stack would.
    fn stamp_header(&self, p: &mut Packet, flow: FlowId) {
        let f = &self.flows[flow.index()];
        if f.spec.best_effort {
            p.lb.class |= class::BEST_EFFORT;
        }
        if f.spec.deadline != Time::ZERO {
            p.lb.class |= class::DEADLINE;
            p.lb.deadline = f.spec.deadline;
        }
        if p.payload > 0 && p.seq + p.payload as u64 >= f.spec.size {
            p.lb.class |= class::FIN;
        }
        p.lb.flow_size = f.spec.size;
        p.lb.remaining = f.spec.size.saturating_sub(f.tx.snd_una);
        p.lb.cwnd = f.tx.cwnd.min(u32::MAX as u64) as u32;
        if let Some(rules) = &self.params.priority {
            // Data only: a SYN, like every control packet, stays at the top level. `bytes_sent` is the
            // payload the flow has put on the wire before this packet (PIAS counts what it has sent).
            if p.payload > 0 {
                p.priority = rules[f.spec.source as usize].level(f.spec.prior + f.bytes_sent);
            }
        }
    }

    /// A packet starts serialisation on its host's NIC at `l.at` (the network's [`Leaving`]; now, or ahead
    /// of now on a lazily drained NIC, which has no edge balancer): it leaves the host then. A packet that
    /// starts a measurement (data, probe, SYN) takes its send timestamp here, so the delays TCP and edge
    /// balancers measure from it never include the host's own queue; an answer (ACK, probe reply, SYN-ACK)
    /// keeps the time it was made, the arrival of what it answers, so `sent_at - echo_ts` is the one-way
    /// delay of the path. The edge balancer picks the path of a data packet now, so flowlet gaps are gaps
    /// on the wire.
    pub(crate) fn leaving_host(&mut self, cx: &mut Cx, net: &mut Network, l: Leaving) {
        let p = cx.pkts.get_mut(l.pid);
        if !matches!(p.kind, PacketKind::Ack | PacketKind::ProbeReply | PacketKind::SynAck) {
            p.sent_at = l.at;
        }
        if self.edges.is_empty() || !matches!(p.kind, PacketKind::Data | PacketKind::Udp) {
            return;
        }
        debug_assert_eq!(l.at, cx.now, "a NIC with an edge balancer is event-driven");
        let mut q = *p;
        self.route_at_edge(cx, net, &mut q);
        *cx.pkts.get_mut(l.pid) = q;
    }

    /// Lets the source host's edge balancer tag a data packet with a path.
    fn route_at_edge(&mut self, cx: &mut Cx, net: &mut Network, p: &mut Packet) {
        let flow = p.flow;
        let f = &self.flows[flow.index()];
        let facts = &net.fabric.facts;
        let (sl, dl) = (facts.leaf_of_host(f.spec.src), facts.leaf_of_host(f.spec.dst));
        if sl == dl {
            return;
        }
        let view = f.view(flow, p.retx != Retx::No);
        let host = f.spec.src;
        let tag = self.edge_hook(cx, net, host, |lb, ecx, net| lb.choose_path(ecx, &view, &mut PacketMut::new(p), net.fabric.paths(sl, dl)));
        p.lb.path = tag;
        p.lb.class |= class::SOURCE_ROUTED;
    }

    /// Lets the receiving host's edge balancer tag an ACK with a path towards the data sender's leaf
    /// (`ack_routing = "edge"`, [`crate::lb::ackpath`]). The ACK is tagged when it is made, which is when it
    /// joins the NIC: ACKs are never held back by the host.
    fn route_ack_at_edge(&mut self, cx: &mut Cx, net: &mut Network, a: &mut Packet, view: &AckView) {
        let facts = &net.fabric.facts;
        let (sl, dl) = (facts.leaf_of_host(a.src), facts.leaf_of_host(a.dst));
        if sl == dl {
            return;
        }
        let tag = self.edge_hook(cx, net, a.src, |lb, ecx, net| lb.choose_ack_path(ecx, view, net.fabric.paths(sl, dl)));
        a.lb.path = tag;
        a.lb.class |= class::SOURCE_ROUTED;
    }

    fn send_probes(&mut self, cx: &mut Cx, net: &mut Network, host: HostId) {
        if self.probes.is_empty() {
            return;
        }
        let mut probes = std::mem::take(&mut self.probes);
        for r in probes.drain(..) {
            let mut p = Packet::new(PacketKind::Probe, FlowId::NONE, host, r.dst);
            p.wire_bytes = self.tp.ack_bytes;
            p.ecn.ect = true;
            p.lb.path = r.path;
            p.lb.class |= class::SOURCE_ROUTED;
            self.probes_sent += 1;
            self.send(cx, net, host, p);
        }
        self.probes = probes;
    }

    fn sync_rto(&mut self, schedule: &mut Schedule, flow: FlowId) {
        let f = &mut self.flows[flow.index()];
        if let Some(d) = f.tx.rto_deadline {
            if d < f.rto_event_at {
                f.rto_event_at = d;
                schedule.at(d, Event::Rto { flow });
            }
        }
    }

    pub(crate) fn rto_event(&mut self, cx: &mut Cx, net: &mut Network, flow: FlowId) {
        let now = cx.now;
        let f = &mut self.flows[flow.index()];
        if f.rto_event_at != now {
            return; // superseded by an earlier event
        }
        f.rto_event_at = Time::MAX;
        if f.state == Some(FlowState::Cancelled) {
            return;
        }
        if let Setup::SynSent { deadline, rto } = f.setup {
            if deadline > now {
                f.rto_event_at = deadline;
                cx.schedule.at(deadline, Event::Rto { flow });
            } else {
                // No SYN-ACK in time: the SYN or its answer was lost. Counted as a timeout and a retransmission.
                f.tx.timeouts += 1;
                f.retransmissions += 1;
                self.send_syn(cx, net, flow, Time(rto.0.saturating_mul(2)).min(self.tp.max_rto));
            }
            return;
        }
        match f.tx.rto_deadline {
            None => {}
            Some(d) if d > now => {
                f.rto_event_at = d;
                cx.schedule.at(d, Event::Rto { flow });
            }
            Some(_) => {
                f.grant_nic_budget(self.params.queue_limit);
                f.tx.on_timeout(now, &self.tp, &mut self.segs);
                if !self.edges.is_empty() {
                    let f = &self.flows[flow.index()];
                    let (view, host) = (f.view(flow, true), f.spec.src);
                    self.edge_hook(cx, net, host, |lb, ecx, _| lb.on_timeout(ecx, &view));
                }
                self.emit_segments(cx, net, flow);
            }
        }
    }

    pub(crate) fn udp_tick(&mut self, cx: &mut Cx, net: &mut Network, flow: FlowId) {
        let f = &self.flows[flow.index()];
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
        p.ecn.ect = self.edge_sets_ect(f.spec.src);
        let gap = f.spec.udp_rate.tx_time(Bytes(p.wire_bytes as u64));
        self.stamp_header(&mut p, flow);
        let f = &mut self.flows[flow.index()];
        f.bytes_sent += len as u64;
        f.packets_sent += 1;
        let more = f.bytes_sent < f.spec.size;
        let src = f.spec.src;
        self.send(cx, net, src, p);
        if more {
            cx.schedule.at(cx.now + gap, Event::UdpTick { flow });
        }
    }

    /// UDP packets the network dropped (`losses`: flow, payload bytes; the arena notes them as they are
    /// dropped). A UDP flow ends once every byte it sent was delivered or lost: with nothing left in
    /// flight its receiver will hear no more. Its finish is its last delivered byte's arrival, or, if the
    /// network dropped all of it, the moment of the last loss (`now`): a flow that delivered nothing still
    /// ends, with its loss in `udp_lost`, rather than wait forever.
    pub(crate) fn udp_losses(&mut self, now: Time, losses: impl Iterator<Item = (FlowId, u32)>) {
        for (flow, payload) in losses {
            let f = &mut self.flows[flow.index()];
            f.udp_lost += payload as u64;
            if f.state.is_none() && f.udp_received + f.udp_lost >= f.spec.size {
                let finish = if f.udp_received > 0 { f.udp_last_rx } else { now };
                self.end_flow(now, flow, FlowState::Completed);
                self.flows[flow.index()].finish = finish;
            }
        }
    }

    // ----------------------------------------------------------------------------------------------
    // Receivers

    fn end_flow(&mut self, now: Time, flow: FlowId, state: FlowState) {
        let f = &mut self.flows[flow.index()];
        if f.state.is_some() {
            return;
        }
        f.state = Some(state);
        f.finish = now;
        self.ended += 1;
        self.active -= 1;
        self.progress_at = now;
    }

    /// Packet `pid` arrives at host `host`, its destination.
    pub(crate) fn receive(&mut self, cx: &mut Cx, net: &mut Network, host: HostId, pid: u32) {
        let now = cx.now;
        let p = *cx.pkts.get(pid);
        debug_assert_eq!(p.dst, host);
        match p.kind {
            PacketKind::Data => {
                if self.tp.reseq_timeout > Time::ZERO {
                    let timeout = self.tp.reseq_timeout;
                    let f = &mut self.flows[p.flow.index()];
                    let mut rel = std::mem::take(&mut self.released);
                    f.reseq.on_packet(now, timeout, p.seq, p.payload, pid, &mut rel);
                    if let Some(at) = f.reseq.flush_at {
                        if at < f.reseq_event_at {
                            f.reseq_event_at = at;
                            cx.schedule.at(at, Event::Reseq { flow: p.flow });
                        }
                    }
                    for id in rel.drain(..) {
                        self.tcp_deliver(cx, net, id);
                    }
                    self.released = rel;
                } else {
                    self.tcp_deliver(cx, net, pid);
                }
            }
            PacketKind::Ack => {
                let sack = cx.pkts.sack(pid);
                cx.pkts.deliver(pid);
                let f = &mut self.flows[p.flow.index()];
                if f.state == Some(FlowState::Cancelled) {
                    return;
                }
                f.grant_nic_budget(self.params.queue_limit);
                f.tx.on_ack(now, p.seq, p.ecn.ece, p.echo_ts, &sack, &self.tp, &mut self.segs);
                if !self.edges.is_empty() {
                    let view = f.view(p.flow, false);
                    self.edge_hook(cx, net, host, |lb, ecx, _| lb.on_ack(ecx, &view, &p));
                }
                self.emit_segments(cx, net, p.flow);
            }
            PacketKind::Udp => {
                cx.pkts.deliver(pid);
                let f = &mut self.flows[p.flow.index()];
                f.udp_received += p.payload as u64;
                f.udp_last_rx = now;
                f.queue_delay += p.queue_delay;
                self.progress_at = now;
                if f.udp_received + f.udp_lost >= f.spec.size {
                    self.end_flow(now, p.flow, FlowState::Completed);
                }
            }
            PacketKind::Probe => {
                cx.pkts.deliver(pid);
                let mut r = Packet::new(PacketKind::ProbeReply, FlowId::NONE, host, p.src);
                r.wire_bytes = self.tp.ack_bytes;
                r.sent_at = now;
                r.echo_ts = p.sent_at;
                r.ecn.ece = p.ecn.ce;
                r.lb.echo_path = p.lb.path;
                self.send(cx, net, host, r);
            }
            PacketKind::ProbeReply => {
                cx.pkts.deliver(pid);
                if !self.edges.is_empty() {
                    self.edge_hook(cx, net, host, |lb, ecx, _| lb.on_probe_reply(ecx, &p));
                }
            }
            PacketKind::Syn => {
                cx.pkts.deliver(pid);
                let mut a = Packet::new(PacketKind::SynAck, p.flow, host, p.src);
                a.sport = p.dport;
                a.dport = p.sport;
                a.wire_bytes = self.tp.ack_bytes;
                a.sent_at = now;
                a.echo_ts = p.sent_at;
                self.send(cx, net, host, a);
            }
            PacketKind::SynAck => {
                cx.pkts.deliver(pid);
                let f = &mut self.flows[p.flow.index()];
                // The first SYN-ACK opens the connection; answers to retransmitted SYNs change nothing.
                if f.setup != Setup::Open && f.state.is_none() {
                    f.setup = Setup::Open;
                    self.send_more(cx, net, p.flow);
                }
            }
            PacketKind::Cancel => {
                cx.pkts.deliver(pid);
                let f = &mut self.flows[p.flow.index()];
                f.tx.rto_deadline = None;
                self.end_flow(now, p.flow, FlowState::Cancelled);
            }
        }
    }

    /// Hands a data packet to the flow's TCP receiver and sends the ACK.
    fn tcp_deliver(&mut self, cx: &mut Cx, net: &mut Network, pid: u32) {
        let now = cx.now;
        let p = *cx.pkts.get(pid);
        cx.pkts.deliver(pid);
        let f = &mut self.flows[p.flow.index()];
        let before = f.rx.rcv_nxt;
        let rx = f.rx.on_data(p.seq, p.payload, p.retx);
        if f.rx.rcv_nxt > before {
            self.progress_at = now;
        }
        f.out_of_order += rx.out_of_order as u64;
        f.spurious += rx.spurious as u64;
        f.queue_delay += p.queue_delay;
        let sack = if self.tp.sack { f.rx.sack_option(p.seq, p.seq + p.payload as u64, rx.duplicate) } else { SackOption::default() };
        let complete = f.state.is_none() && f.rx.rcv_nxt >= f.spec.size;
        let mut a = Packet::new(PacketKind::Ack, p.flow, p.dst, p.src);
        a.sport = p.dport;
        a.dport = p.sport;
        a.seq = rx.ack;
        a.wire_bytes = self.tp.ack_bytes + sack.wire_bytes();
        a.sent_at = now;
        a.echo_ts = p.sent_at;
        a.ecn.ece = p.ecn.ce;
        (self.reflect)(&p, &mut a.lb);
        if self.edges.get(p.dst.index()).is_some_and(|e| e.acks) {
            let view = AckView { flow: p.flow, to: p.src, size: f.spec.size, ack: rx.ack, seq: p.seq, duplicate: rx.duplicate };
            self.route_ack_at_edge(cx, net, &mut a, &view);
        }
        if complete {
            self.end_flow(now, p.flow, FlowState::Completed);
        }
        let aid = cx.pkts.make(a);
        if !sack.is_empty() {
            cx.pkts.set_sack(aid, sack);
        }
        self.put_on_nic(cx, net, p.dst, aid);
    }

    pub(crate) fn reseq_event(&mut self, cx: &mut Cx, net: &mut Network, flow: FlowId) {
        let now = cx.now;
        let f = &mut self.flows[flow.index()];
        if f.reseq_event_at != now {
            return;
        }
        f.reseq_event_at = Time::MAX;
        match f.reseq.flush_at {
            Some(at) if at > now => {
                f.reseq_event_at = at;
                cx.schedule.at(at, Event::Reseq { flow });
            }
            Some(_) => {
                let mut rel = std::mem::take(&mut self.released);
                f.reseq.flush(&mut rel);
                for id in rel.drain(..) {
                    self.tcp_deliver(cx, net, id);
                }
                self.released = rel;
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    //! The host stack on its own: a network and the hosts built from a config, driven by calling their
    //! handlers with a context, the test standing in for the simulation's loop.
    use super::*;
    use crate::config::{Config, ListedFlow, Pattern, SourceConfig};
    use crate::packet::PacketArena;
    use crate::sched::Scheduler;

    /// One DCTCP flow of 100 full segments from host 0 to host 2 (another leaf), every port event-driven.
    fn one_flow() -> (Scheduler, Network, Hosts) {
        let mut cfg = Config::default();
        cfg.topology.leaves = 2;
        cfg.topology.hosts_per_leaf = 2;
        let list = vec![ListedFlow { start_us: 0.0, src: 0, dst: 2, size_bytes: 100 * 1460, deadline_us: None }];
        cfg.sources = vec![SourceConfig { pattern: Pattern::List, transport: TransportKind::Dctcp, list, ..Default::default() }];
        cfg.check().expect("a valid config");
        let b = crate::build::build(&cfg, crate::lb::find_scheme("ecmp").expect("ecmp")).expect("built");
        let (sched, mut net, hosts) = (b.sched, b.net, b.hosts);
        net.set_lazy_ports(false, hosts.has_edges());
        (sched, net, hosts)
    }

    /// TCP small queues: a starting sender puts exactly its NIC budget (two full-size packets) on the NIC,
    /// the first leaving its host at once; when it has been serialised, the sender, woken, sends one more,
    /// and the second packet leaves its host then. Checked to fail with the budget not granted on the
    /// wake-up (`left_nic` without `send_more`: 2 packets sent, not 3).
    #[test]
    fn a_sender_fills_its_nic_budget_and_one_packet_leaving_lets_one_more_in() {
        let (mut sched, mut net, mut hosts) = one_flow();
        let mut pkts = PacketArena::new();
        let nic = net.fabric.host_nic(HostId(0));
        assert_eq!(sched.pop(), Some((Time::ZERO, Event::FlowStart { flow: FlowId(0) })));
        let cx = &mut Cx { now: Time::ZERO, schedule: Schedule::new(&mut sched), pkts: &mut pkts };
        hosts.start_flow(cx, &mut net, FlowId(0));
        let full = (1460 + 40) as u64;
        let f = &hosts.flows()[0];
        assert_eq!((f.packets_sent, f.nic_bytes), (2, 2 * full), "the window is larger; the NIC budget is two packets");
        assert_eq!(net.fabric.port(nic).queue_packets(), 2);
        // The first packet left its host when its serialisation started, now; it ends at 1.2 µs (10 Gbps).
        let sent: Vec<Time> = (0..2).map(|i| pkts.get(i).sent_at).collect();
        assert_eq!(sent[0], Time::ZERO);
        let (t, ev) = sched.pop().expect("the NIC's transmission ends");
        assert_eq!((t, ev), (Time::from_ns(1200), Event::TxDone { port: nic }));
        // What the simulation's loop does with it.
        let cx = &mut Cx { now: t, schedule: Schedule::new(&mut sched), pkts: &mut pkts };
        let left = net.tx_done(cx, nic).expect("a host NIC's packet left its host");
        assert_eq!((left.kind, left.flow, left.wire as u64), (PacketKind::Data, FlowId(0), full));
        hosts.left_nic(cx, &mut net, left);
        assert_eq!(hosts.flows()[0].packets_sent, 3, "woken, the sender sent one more");
        // The sender's packet, offered to the idle NIC, started its head (the second packet) and the host
        // stamped it; the loop's own call to serve finds the NIC busy.
        assert_eq!(net.serve(cx, nic), None);
        assert_eq!(pkts.get(1).sent_at, t, "the second packet leaves its host now");
        assert_eq!(pkts.get(2).sent_at, Time::ZERO, "the third waits behind it, not stamped yet");
        assert_eq!(hosts.flows()[0].nic_bytes, 2 * full);
    }
}
