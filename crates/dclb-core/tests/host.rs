//! The host stack's own queue: TCP small queues bound what a flow keeps in its NIC and wake the sender as
//! its packets leave; a packet leaves its host when it starts serialisation on the NIC, which is when the
//! edge balancer chooses its path and its send timestamp is taken; probes, and ACKs when asked, leave the
//! NIC ahead of queued data; an edge balancer that asks for ECT gets its NewReno flows' packets marked and
//! every mark echoed to it, while the NewReno senders ignore the echoes; with the handshake a flow's data
//! waits for the SYN-ACK, and a lost SYN is sent again after the initial RTO.
//!
//! Each test fails without its feature: with no NIC budget (`host_queue_limit_bytes = 0`, the old
//! behaviour) a lone sender's window grows into its own NIC, hundreds of packets deep; with the path chosen
//! and the timestamp taken when TCP emits, all ten packets of a window are routed at time 0 and their RTT
//! samples grow by a serialisation each (the NIC wait); in one FIFO, a probe reply or an ACK waits behind
//! the host's data; without the handshake a flow finishes one small round trip earlier than its ideal FCT
//! (which then includes one), and nothing recovers a lost SYN. For the ECT test, each of these breakages
//! was tried and failed it: the host ignoring the edge's request (no marks), receivers echoing CE only for
//! DCTCP flows (no ECE reaches the edge), and a NewReno sender cutting its window on ECE as DCTCP does (the
//! flows no longer behave as without marks).

mod common;
use common::*;
use dclb_core::config::TransportKind;
use dclb_core::lb::{per_switch, reflect_path_and_class, BuildCx, Decision, DropReason, EdgeBalancer, EdgeCx, FlowView, Hooks, Installed, PacketMut, Params, Placement, ProbeRequest, SchemeSpec, SwitchBalancer, SwitchCx};
use dclb_core::metrics::Results;
use dclb_core::packet::{Packet, PacketKind};
use dclb_core::Simulation;
use std::cell::RefCell;

const TX_1500_AT_10G_US: f64 = 1.2;

/// Port index of host `h`'s NIC.
fn nic(r: &Results, h: u64) -> usize {
    let (roles, nodes) = (r.ports.strs("role"), r.ports.u64s("node"));
    (0..roles.len()).find(|&i| roles[i] == "host_up" && nodes[i] == h).unwrap()
}

/// Two 5 MB flows from host 0 (leaf 0) to hosts 2 and 3 (leaf 1): host 0's NIC is their bottleneck.
fn two_bulk_flows() -> dclb_core::Config {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 5_000_000), (0.0, 0, 3, 5_000_000)], TransportKind::Dctcp)];
    cfg
}

#[test]
fn a_sender_keeps_at_most_its_limit_in_its_own_nic_and_still_fills_it() {
    let r = run(&two_bulk_flows());
    let p = nic(&r, 0);
    // The default limit is two full-size packets per flow.
    assert!(r.ports.u64s("peak_queue_bytes")[p] <= 2 * 3000, "NIC peak {} B", r.ports.u64s("peak_queue_bytes")[p]);
    // The NIC holds at most four packets, two per flow: a packet waits for the three ahead of it at most
    // (the fabric behind the NIC runs at the same rate, so nothing queues there).
    let packets = sum(&r, "packets_sent") as f64;
    let per_packet = r.flows.f64s("queueing_delay_us").iter().sum::<f64>() / packets;
    assert!(per_packet <= 3.0 * TX_1500_AT_10G_US + 0.01, "each packet waited {per_packet:.2} µs on average");
    // The NIC never idles while the senders have data: 10 MB at 10 Gbps (plus headers) takes about 8.2 ms.
    let finish = r.flows.opt_f64s("finish_us").iter().map(|f| f.unwrap()).fold(0.0, f64::max);
    let line_rate = 2.0 * 5_000_000.0 / 1460.0 * TX_1500_AT_10G_US;
    assert!(finish < 1.02 * line_rate + 50.0, "both flows done at {finish:.0} µs; line rate allows {line_rate:.0} µs");

    let mut unlimited = two_bulk_flows();
    unlimited.transport.host_queue_limit_bytes = Some(0);
    let r = run(&unlimited);
    assert!(r.ports.u64s("peak_queue_packets")[nic(&r, 0)] > 100, "without a limit the windows grow into the NIC");
}

// ---------------------------------------------------------------------------------------------------------
// Leaving the host: edge path choice, timestamps, priority

/// What the recording edge balancer saw on this thread (tests run on threads of their own).
#[derive(Default)]
struct Seen {
    /// (flow, seq, time) of every path choice.
    chosen: Vec<(u32, u64, f64)>,
    /// RTT samples (µs) from the ACKs host 0 receives.
    rtts: Vec<f64>,
    /// One-way delays (µs) of the data those ACKs answer: ACK sent (made) minus data sent.
    one_way: Vec<f64>,
    /// RTT samples (µs) from probe replies.
    probe_rtts: Vec<f64>,
}

thread_local! {
    static SEEN: RefCell<Seen> = RefCell::new(Seen::default());
}

/// An edge balancer that takes the first path and records what it sees. When a flow of host 0 starts later
/// than time 0, it probes that flow's path as the flow's first packet leaves.
struct Recorder;

impl EdgeBalancer for Recorder {
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        if cx.host == HostId(0) && pkt.seq == 0 && flow.start.as_us() > 0.0 {
            cx.probes.push(ProbeRequest { dst: flow.dst, path: paths[0] });
        }
        SEEN.with(|s| s.borrow_mut().chosen.push((flow.flow.0, pkt.seq, cx.now.as_us())));
        paths[0]
    }
    fn on_ack(&mut self, cx: &mut EdgeCx, _flow: &FlowView, ack: &Packet) {
        if cx.host == HostId(0) {
            SEEN.with(|s| {
                let mut s = s.borrow_mut();
                s.rtts.push((cx.now - ack.echo_ts).as_us());
                s.one_way.push((ack.sent_at - ack.echo_ts).as_us());
            });
        }
    }
    fn on_probe_reply(&mut self, cx: &mut EdgeCx, reply: &Packet) {
        SEEN.with(|s| s.borrow_mut().probe_rtts.push((cx.now - reply.echo_ts).as_us()));
    }
}

fn recorder(cx: &BuildCx, _: &Params) -> Installed {
    Installed::Edges((0..cx.hosts).map(|_| Box::new(Recorder) as Box<dyn EdgeBalancer>).collect())
}

const RECORDER: SchemeSpec = SchemeSpec { name: "recorder", placement: Placement::Edge, granularity: "packet", summary: "test", params: &[], install: recorder, reflect: reflect_path_and_class };

fn run_recorded(cfg: &dclb_core::Config) -> Seen {
    SEEN.with(|s| *s.borrow_mut() = Seen::default());
    let mut sim = Simulation::with_scheme(cfg, &RECORDER).expect("valid scenario");
    sim.run_to_end();
    assert_conserved(&sim.results());
    SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

/// Round trip of a data packet and its ACK over four 1 µs links at 10 Gbps, with no queue anywhere.
const BASE_RTT_US: f64 = 4.0 * (TX_1500_AT_10G_US + 1.0) + 4.0 * (0.032 + 1.0);

#[test]
fn the_edge_chooses_paths_and_measures_from_the_moment_a_packet_leaves_the_nic() {
    // One window of ten packets, all queued in the NIC at time 0 (no NIC budget).
    let mut cfg = fabric(2, 2, 2);
    cfg.transport.host_queue_limit_bytes = Some(0);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 10 * 1460)], TransportKind::Dctcp)];
    cfg.run.horizon_us = Some(100.0); // without one the run ends with the last byte, before the last ACKs
    let seen = run_recorded(&cfg);
    assert!(seen.probe_rtts.is_empty());
    let times: Vec<f64> = seen.chosen.iter().map(|c| c.2).collect();
    let departures: Vec<f64> = (0..10).map(|k| k as f64 * TX_1500_AT_10G_US).collect();
    assert!(times.iter().zip(&departures).all(|(t, d)| (t - d).abs() < 1e-6), "paths chosen at {times:?}, packets leave at {departures:?}");
    assert_eq!(seen.rtts.len(), 10);
    assert!(seen.rtts.iter().all(|r| (r - BASE_RTT_US).abs() < 1e-6), "RTT samples {:?}, the path's RTT is {BASE_RTT_US}", seen.rtts);
}

#[test]
fn probes_always_and_acks_when_asked_leave_the_nic_ahead_of_data() {
    // Host 2 sends 2 MB to host 0 from time 0, queueing its slow-start windows in its NIC (no NIC budget).
    // Host 0 sends ten packets to host 2 at 50 µs; their ACKs and the reply to the probe of their path leave
    // through host 2's NIC.
    let mut cfg = fabric(2, 2, 2);
    cfg.transport.host_queue_limit_bytes = Some(0);
    cfg.sources = vec![listed(&[(50.0, 0, 2, 10 * 1460), (0.0, 2, 0, 2_000_000)], TransportKind::Dctcp)];
    // Without a queue, a probe and its reply are ACK-sized packets over eight links. In the control class a
    // small packet waits at most for the packet on the wire at each of its eight hops.
    let probe_rtt = 8.0 * (0.032 + 1.0);
    let at_most = 8.0 * TX_1500_AT_10G_US;
    let worst = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    for priority in [false, true] {
        cfg.transport.host_ack_priority = priority;
        let seen = run_recorded(&cfg);
        assert_eq!(seen.probe_rtts.len(), 1);
        let probe_wait = seen.probe_rtts[0] - probe_rtt;
        assert!(probe_wait <= at_most, "a probe always leaves ahead of data, yet it waited {probe_wait:.2} µs (ACK priority {priority})");
        let ack_wait = worst(&seen.rtts) - BASE_RTT_US;
        if priority {
            assert!(ack_wait <= at_most, "with priority an ACK waited {ack_wait:.2} µs");
        } else {
            assert!(ack_wait > 2.0 * at_most, "in one FIFO the ACKs wait behind host 2's data, only {ack_wait:.2} µs here");
        }
        // However long an ACK waits in host 2's NIC, the one-way delay of the data stays the path's: an
        // ACK's timestamp is when it was made (data crosses four links, meeting at most a few ACKs).
        let one_way = 4.0 * (TX_1500_AT_10G_US + 1.0);
        assert!(seen.one_way.iter().all(|d| (d - one_way).abs() < 4.0 * 0.032 + 1e-6), "one-way delays {:?}, the path's {one_way}", seen.one_way);
    }
}

// ---------------------------------------------------------------------------------------------------------
// ECN capability asked for by the edge

thread_local! {
    /// (ACKs, ACKs with ECE) the edges saw, all hosts together.
    static ECHOES: RefCell<(u64, u64)> = const { RefCell::new((0, 0)) };
}

/// An edge balancer that takes the first path, counts the ECN echoes on its ACKs, and asks for ECT or not.
struct EctEdge(bool);

impl EdgeBalancer for EctEdge {
    fn choose_path(&mut self, _cx: &mut EdgeCx, _flow: &FlowView, _pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        paths[0]
    }
    fn on_ack(&mut self, _cx: &mut EdgeCx, _flow: &FlowView, ack: &Packet) {
        ECHOES.with(|e| {
            let mut e = e.borrow_mut();
            e.0 += 1;
            e.1 += ack.ecn.ece as u64;
        });
    }
    fn sets_ect(&self) -> bool {
        self.0
    }
}

fn ect_edge(cx: &BuildCx, _: &Params) -> Installed {
    Installed::Edges((0..cx.hosts).map(|_| Box::new(EctEdge(true)) as Box<dyn EdgeBalancer>).collect())
}
fn plain_edge(cx: &BuildCx, _: &Params) -> Installed {
    Installed::Edges((0..cx.hosts).map(|_| Box::new(EctEdge(false)) as Box<dyn EdgeBalancer>).collect())
}

#[test]
fn an_edge_that_asks_for_ect_gets_every_mark_echoed_and_a_newreno_sender_ignores_them() {
    // Three 1 MB NewReno flows from leaf 0 to one host of leaf 1 share leaf 0's single 10 Gbps uplink: its
    // queue passes K (65 packets) and the buffer.
    let mut cfg = fabric(2, 1, 4);
    cfg.sources = vec![listed(&[(0.0, 0, 4, 1_000_000), (0.0, 1, 4, 1_000_000), (0.0, 2, 4, 1_000_000)], TransportKind::Newreno)];
    cfg.run.horizon_us = Some(100_000.0); // every ACK comes home
    let mut runs = Vec::new();
    for (name, install) in [("ect-edge", ect_edge as fn(&BuildCx, &Params) -> Installed), ("plain-edge", plain_edge)] {
        let spec = SchemeSpec { name, placement: Placement::Edge, granularity: "flow", summary: "test", params: &[], install, reflect: reflect_path_and_class };
        ECHOES.with(|e| *e.borrow_mut() = (0, 0));
        let mut sim = Simulation::with_scheme(&cfg, &spec).expect("valid scenario");
        sim.run_to_end();
        let r = sim.results();
        assert_conserved(&r);
        assert_eq!(r.stats.flows_completed, 3);
        runs.push((r, ECHOES.with(|e| *e.borrow())));
    }
    let [(on, (acks_on, ece_on)), (off, (acks_off, ece_off))] = <[_; 2]>::try_from(runs).ok().unwrap();
    let marks = port_sum(&on, "ecn_marks");
    assert!(marks > 100 && sum(&off, "retransmissions") > 0, "the uplink marks ({marks}) and drops");
    // Each marked data packet is answered by one ACK with ECE, which reaches the sending edge.
    assert_eq!(ece_on, marks, "ECE on {ece_on} of {acks_on} ACKs, {marks} marks");
    // Without the edge's ECT a NewReno flow's packets are never marked.
    assert_eq!((port_sum(&off, "ecn_marks"), ece_off), (0, 0));
    // NewReno does not react to ECE: the flows behave exactly as without the marks.
    assert_eq!(acks_on, acks_off);
    assert_eq!(fct_bits(&on), fct_bits(&off), "a NewReno sender changed its behaviour on ECE");
}

// ---------------------------------------------------------------------------------------------------------
// Handshake

const TX_ACK_AT_10G_US: f64 = 0.032;

fn lone_flow(handshake: bool) -> dclb_core::Config {
    let mut cfg = fabric(2, 2, 2);
    cfg.transport.handshake = handshake;
    cfg.sources = vec![listed(&[(0.0, 0, 2, 10 * 1460)], TransportKind::Dctcp)];
    cfg
}

#[test]
fn with_the_handshake_data_waits_one_small_round_trip_and_fct_counts_it() {
    let fct = |r: &Results| r.flows.opt_f64s("fct_us")[0].expect("completed");
    let plain = run(&lone_flow(false));
    let r = run(&lone_flow(true));
    // SYN and SYN-ACK: ACK-sized packets over four 1 µs links each way.
    let handshake = 2.0 * 4.0 * (TX_ACK_AT_10G_US + 1.0);
    assert!((fct(&r) - fct(&plain) - handshake).abs() < 1e-6, "FCT {} with, {} without the handshake", fct(&r), fct(&plain));
    let ideal = r.flows.opt_f64s("ideal_fct_us")[0].unwrap();
    assert!((fct(&r) - ideal).abs() < 1e-6, "a lone flow finishes in its ideal FCT, handshake included: {} vs {ideal}", fct(&r));
    assert_eq!((sum(&r, "retransmissions"), sum(&r, "timeouts")), (0, 0));
}

/// Drops the first SYN at the source leaf; records the 5-tuple of every SYN and data packet it sees there.
struct SynDropper {
    active: bool,
    dropped: bool,
}

thread_local! {
    static TUPLES: RefCell<Vec<(PacketKind, u128)>> = const { RefCell::new(Vec::new()) };
}

impl SwitchBalancer for SynDropper {
    fn choose(&mut self, _cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if self.active && matches!(pkt.kind, PacketKind::Syn | PacketKind::Data) {
            TUPLES.with(|t| t.borrow_mut().push((pkt.kind, pkt.five_tuple())));
            if pkt.kind == PacketKind::Syn && !self.dropped {
                self.dropped = true;
                return Decision::Drop(DropReason::Policy);
            }
        }
        Decision::Forward(candidates[0])
    }
    fn hooks(&self) -> Hooks {
        Hooks::CHOOSE_ONLY
    }
}

fn syn_dropper(cx: &BuildCx, _: &Params) -> Installed {
    per_switch(cx.switches, |s| SynDropper { active: s.as_leaf() == Some(LeafId(0)), dropped: false })
}

#[test]
fn a_lost_syn_is_sent_again_after_the_initial_rto_and_switches_see_the_flows_tuple() {
    let spec = SchemeSpec { name: "syn-dropper", placement: Placement::Switch, granularity: "flow", summary: "test", params: &[], install: syn_dropper, reflect: reflect_path_and_class };
    let cfg = lone_flow(true);
    TUPLES.with(|t| t.borrow_mut().clear());
    let mut sim = Simulation::with_scheme(&cfg, &spec).expect("valid scenario");
    sim.run_to_end();
    let r = sim.results();
    assert_conserved(&r);
    assert_eq!(r.stats.flows_completed, 1);
    assert_eq!((sum(&r, "retransmissions"), sum(&r, "timeouts")), (1, 1), "the SYN was sent again once, after a timeout");
    let (fct, ideal) = (r.flows.opt_f64s("fct_us")[0].unwrap(), r.flows.opt_f64s("ideal_fct_us")[0].unwrap());
    let init_rto = cfg.transport.init_rto_us;
    assert!((fct - (init_rto + ideal)).abs() < 1e-6, "FCT {fct}: the initial RTO ({init_rto}) plus the ideal FCT ({ideal})");
    let tuples = TUPLES.with(|t| t.borrow().clone());
    assert_eq!(tuples.iter().filter(|t| t.0 == PacketKind::Syn).count(), 2);
    assert!(tuples.iter().all(|t| t.1 == tuples[0].1), "SYNs and data share the flow's 5-tuple");
}
