//! TAM: classification by bytes seen, short flows on the fastest uplink, long flows rerouted per flowlet to
//! the uplink with the fewest long flows, traffic-aware marking of long flows (above k* or while a short flow
//! is active on the port), port-count hygiene, and end-to-end runs.
//!
//! Deliberate breakages tried in `src/lb/tam.rs` (each once, then restored) and the tests that failed:
//! * ACKs taken for short-flow data at enqueue: the classification test (an ACK stream sets `last_short`);
//! * 100 KB read as 102,400 B: the classification test and every test that builds long flows;
//! * short flows re-placed on every packet, or without the long-count tie-break: the short-flow test;
//! * propagation delay left out of the transmission delay: the delay test and `short_flows_avoid_slow_paths`;
//! * `delay_includes_serialisation` ignored: the serialisation test;
//! * remaining ties to the lowest index instead of the switch's random stream: the tie-break test;
//! * long flows rerouted on every packet, or `last_seen` updated before the gap test: the flowlet tests;
//! * a rerouting flow counting itself: the self-exclusion and count-basis tests;
//! * no marking while a short flow is active: the coexistence test, the downstream test and the end-to-end run;
//! * a short flow that never stops being active: the coexistence test and the end-to-end run;
//! * k* compared with the queue including the packet: the k* test (and two others);
//! * k* applied to short flows too: the k* test;
//! * FIN, or idle expiry, not removing a flow from its port's count: the hygiene test (and, for FIN, the
//!   end-to-end retirement check).

mod common;
use common::*;
use dclb_core::config::{Config, LinkOverride, TransportKind};
use dclb_core::lb::tam::{base_rtt, k_star, RttBasis, Tam, TamParams, LONG_BIT};
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::lb::{Params, SwitchBalancer};
use dclb_core::metrics::Results;
use dclb_core::packet::{class, Packet, PacketKind};
use dclb_core::units::{Rate, Time};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn us(x: f64) -> Time {
    Time::from_us_f64(x)
}

fn params(given: &[(&str, Value)]) -> TamParams {
    let m: BTreeMap<String, Value> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    TamParams::from_params(&Params::resolve("tam", TamParams::SPECS, &m, None).unwrap())
}

/// A full-size, ECN-capable data packet of flow `flow` (its own source port, so its own 5-tuple).
fn data(flow: u32, src: u32, dst: u32) -> Packet {
    let mut p = Packet::new(PacketKind::Data, FlowId(flow), HostId(src), HostId(dst));
    p.sport = 1000 + flow as u16;
    p.dport = 80;
    p.payload = 1460;
    p.wire_bytes = 1500;
    p.ecn.ect = true;
    p
}

/// The pure ACK answering `data`: the reversed 5-tuple, no payload.
fn ack_of(d: &Packet) -> Packet {
    let mut a = Packet::new(PacketKind::Ack, d.flow, d.dst, d.src);
    a.sport = d.dport;
    a.dport = d.sport;
    a.wire_bytes = 40;
    a
}

/// One switch of a fabric with TAM on it, driven by hand.
struct Bench {
    b: SwitchBench,
    lb: Tam,
}

impl Bench {
    fn leaf(cfg: &Config, leaf: u32, given: &[(&str, Value)]) -> Bench {
        Self::make(SwitchBench::leaf(cfg, LeafId(leaf)).with_rng(5), given)
    }
    fn spine(cfg: &Config, spine: u32, given: &[(&str, Value)]) -> Bench {
        Self::make(SwitchBench::spine(cfg, SpineId(spine)).with_rng(5), given)
    }
    fn make(b: SwitchBench, given: &[(&str, Value)]) -> Bench {
        let p = params(given);
        let rtt = base_rtt(&b.fabric.facts, p.rtt_basis);
        let lb = Tam::new(&p, &b.fabric.facts, &b.me, rtt);
        Bench { b, lb }
    }
    /// What routing offers this switch for `pkt`.
    fn candidates(&self, pkt: &Packet) -> Vec<PortId> {
        let f = &self.b.fabric;
        let dl = f.facts.leaf_of_host(pkt.dst);
        match self.b.me.as_leaf() {
            Some(leaf) if dl == leaf => vec![f.leaf_down_port(pkt.dst)],
            _ => self.b.candidates_to_leaf(dl),
        }
    }
    fn uplinks(&self, dst_leaf: LeafId) -> Vec<PortId> {
        self.b.candidates_to_leaf(dst_leaf)
    }
    /// Routes `pkt` at `t` µs.
    fn route(&mut self, t: f64, pkt: &mut Packet) -> PortId {
        let c = self.candidates(pkt);
        self.b.at(us(t));
        self.b.forward(&mut self.lb, pkt, &c)
    }
    /// Routes `pkt` at `t` µs and enqueues it on the chosen port, which holds `before` bytes ahead of it.
    /// The port and whether the packet left admission marked.
    fn pass(&mut self, t: f64, pkt: &mut Packet, before: u64) -> (PortId, bool) {
        let port = self.route(t, pkt);
        self.b.set_queue_bytes(port, before + pkt.wire_bytes as u64);
        self.b.enqueue(&mut self.lb, pkt, port);
        (port, pkt.ecn.ce)
    }
    /// Sets the queues of `ports` (bytes).
    fn queues(&mut self, ports: &[PortId], bytes: &[u64]) {
        for (&p, &q) in ports.iter().zip(bytes) {
            self.b.set_queue_bytes(p, q);
        }
    }
    /// Makes flow `flow` (host `src` to `dst`) long on uplink `port` at time `t` µs: the other uplinks are
    /// loaded for its first packet, so the short-flow rule puts it on `port`, then 68 more packets follow.
    fn make_long(&mut self, t: f64, flow: u32, src: u32, dst: u32, port: PortId) {
        let ups = self.uplinks(self.b.fabric.facts.leaf_of_host(HostId(dst)));
        let saved: Vec<u64> = ups.iter().map(|&u| self.b.queue_bytes(u)).collect();
        for &u in &ups {
            self.b.set_queue_bytes(u, if u == port { 0 } else { 1_000_000 });
        }
        for _ in 0..69 {
            assert_eq!(self.route(t, &mut data(flow, src, dst)), port);
        }
        assert!(self.lb.flow(&data(flow, src, dst)).unwrap().is_long);
        self.queues(&ups, &saved);
    }
}

/// Fabric at 1 Gbps with 25 µs links: host-to-host RTT 200 µs (the paper's motivation setup).
fn gig(leaves: u32, spines: u32, hpl: u32) -> Config {
    let mut c = fabric(leaves, spines, hpl);
    c.topology.host_rate_gbps = 1.0;
    c.topology.fabric_rate_gbps = 1.0;
    c.topology.host_delay_us = 25.0;
    c.topology.fabric_delay_us = 25.0;
    c
}

fn slow_spine(c: &mut Config, spine: u32, leaves: u32, delay_us: f64) {
    for leaf in 0..leaves {
        c.topology.links.push(LinkOverride { leaf, spine, delay_us: Some(delay_us), ..Default::default() });
    }
}

// ---------------------------------------------------------------------------------------------------------
// Defaults

#[test]
fn defaults_follow_the_paper_and_k_star_is_c_rtt_over_7() {
    let p = TamParams::default();
    assert_eq!(p.long_threshold_bytes, 100_000);
    assert_eq!(p.flowlet_timeout_us, us(500.0));
    assert_eq!(p.rtt_basis, RttBasis::Unloaded);
    // 1 Gbps, 25 µs links: 200 µs of propagation (4 links each way); unloaded, plus 4 x 12 µs of data and
    // 4 x 0.32 µs of ACK serialisation.
    let cfg = gig(2, 2, 2);
    let facts = &SwitchBench::leaf(&cfg, LeafId(0)).fabric.facts;
    assert_eq!(facts.propagation_rtt(), us(200.0));
    assert_eq!(base_rtt(facts, RttBasis::Unloaded), us(249.28));
    let b = Bench::leaf(&cfg, 0, &[]);
    assert_eq!(b.lb.k_star_bytes(Rate::from_gbps(1.0)), 4451);
    let b = Bench::leaf(&cfg, 0, &[("rtt_basis", json!("propagation"))]);
    assert_eq!(b.lb.k_star_bytes(Rate::from_gbps(1.0)), 3571);
    // 40 Gbps, 1 µs links: 8 µs of propagation, 9.232 µs unloaded; k* = 5,714 B or 6,594 B.
    let mut big = fabric(2, 2, 2);
    big.topology.host_rate_gbps = 40.0;
    big.topology.fabric_rate_gbps = 40.0;
    let facts = &SwitchBench::leaf(&big, LeafId(0)).fabric.facts;
    assert_eq!(facts.propagation_rtt(), us(8.0));
    assert_eq!(k_star(Rate::from_gbps(40.0), us(8.0)), 5714);
    assert_eq!(k_star(Rate::from_gbps(40.0), base_rtt(facts, RttBasis::Unloaded)), 6594);
    // Under asymmetry the RTT is the good paths': spine 1 slow, spine 0 still 25 µs.
    let mut asym = gig(2, 2, 2);
    slow_spine(&mut asym, 1, 2, 100.0);
    assert_eq!(SwitchBench::leaf(&asym, LeafId(0)).fabric.facts.propagation_rtt(), us(200.0));
    assert_eq!(base_rtt(&SwitchBench::leaf(&asym, LeafId(0)).fabric.facts, RttBasis::Unloaded), us(249.28));
    // An explicit k* or RTT wins.
    let b = Bench::leaf(&cfg, 0, &[("k_star_rtt_us", json!(400.0))]);
    assert_eq!(b.lb.k_star_bytes(Rate::from_gbps(1.0)), 7142);
    let b = Bench::leaf(&cfg, 0, &[("k_star_bytes", json!(9000))]);
    assert_eq!(b.lb.k_star_bytes(Rate::from_gbps(1.0)), 9000);
}

// ---------------------------------------------------------------------------------------------------------
// Classification

#[test]
fn a_flow_turns_long_on_the_packet_that_takes_it_past_100_kb_and_acks_never_count() {
    let cfg = fabric(2, 2, 2);
    for bit in [false, true] {
        let given: Vec<(&str, Value)> = if bit { vec![("class_source", json!("source_leaf_bit"))] } else { vec![] };
        let mut b = Bench::leaf(&cfg, 0, &given);
        let mut port = PortId::NONE;
        for i in 1..=80u64 {
            let mut p = data(1, 0, 2);
            port = b.route(i as f64, &mut p);
            let e = *b.lb.flow(&p).unwrap();
            // 68 x 1460 = 99,280 B; 69 x 1460 = 100,740 B.
            assert_eq!(e.is_long, i >= 69, "packet {i}: {} bytes", e.bytes);
            assert_eq!(b.lb.total_long(port), (i >= 69) as u32, "packet {i}");
            assert_eq!(p.lb.scratch & LONG_BIT != 0, bit && i >= 69, "packet {i}: the class bit only with source_leaf_bit");
        }
        // 10,000 ACKs from host 0 to leaf 1 (the reverse stream of some flow): no bytes, no class, no trace
        // on the port table.
        let before = b.lb.port_state(port);
        for i in 0..10_000u64 {
            let mut a = ack_of(&data(7, 2, 0));
            b.pass(100.0 + i as f64 * 0.1, &mut a, 0);
            assert!(!a.ecn.ce);
        }
        let a = ack_of(&data(7, 2, 0));
        let e = *b.lb.flow(&a).expect("the ACK stream keeps its placement");
        assert_eq!((e.bytes, e.pkts, e.is_long), (0, 0, false));
        for u in b.uplinks(LeafId(1)) {
            assert_eq!(b.lb.port_state(u).last_short, if u == port { before.last_short } else { None });
        }
        // So a long-flow packet right after them, queue empty, is not marked.
        assert!(!b.pass(1100.0, &mut data(1, 0, 2), 0).1);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Routing

#[test]
fn a_short_flow_takes_the_lowest_delay_uplink_ties_by_fewest_long_flows_and_stays() {
    let cfg = fabric(2, 3, 4);
    let mut b = Bench::leaf(&cfg, 0, &[]);
    let up = b.uplinks(LeafId(1));
    // Long flows: 0 on uplink 0, 3 on uplink 1, 1 on uplink 2.
    for (flow, u) in [(10, 1), (11, 1), (12, 1), (13, 2)] {
        b.make_long(1.0, flow, 1, 5, up[u]);
    }
    assert_eq!(up.iter().map(|&u| b.lb.total_long(u)).collect::<Vec<_>>(), vec![0, 3, 1]);
    // Queues of 5, 2, 2 full packets; equal propagation. Uplinks 1 and 2 tie on delay, 2 has fewer long flows.
    b.queues(&up, &[7500, 3000, 3000]);
    let first = b.route(10.0, &mut data(1, 0, 4));
    assert_eq!(first, up[2]);
    // Later packets follow, even after uplink 0 empties and uplink 2 fills.
    b.queues(&up, &[0, 3000, 30_000]);
    for i in 0..20 {
        assert_eq!(b.route(11.0 + i as f64, &mut data(1, 0, 4)), up[2], "packet {i} of the short flow");
    }
    // A new flow now goes to uplink 0 (alone at the lowest delay).
    assert_eq!(b.route(40.0, &mut data(2, 0, 4)), up[0]);
    assert_eq!(b.lb.counters().get("short_placements"), 2 + 4, "two here, four in make_long");
}

#[test]
fn transmission_delay_is_queueing_plus_propagation_to_the_destination_leaf() {
    // 1 Gbps; spine 0 is a bad path (100 µs leaf-spine links: pd 200 µs), spine 1 good (pd 50 µs).
    let mut cfg = gig(2, 2, 2);
    slow_spine(&mut cfg, 0, 2, 100.0);
    let mut b = Bench::leaf(&cfg, 0, &[]);
    let up = b.uplinks(LeafId(1));
    // 12 packets (144 µs) on the good uplink: 194 µs < 200 µs.
    b.queues(&up, &[0, 12 * 1500]);
    assert_eq!(b.route(1.0, &mut data(1, 0, 2)), up[1]);
    // 13 packets (156 µs): 206 µs > 200 µs.
    b.queues(&up, &[0, 13 * 1500]);
    assert_eq!(b.route(2.0, &mut data(2, 0, 2)), up[0]);
}

#[test]
fn serialisation_breaks_the_tie_between_idle_uplinks_of_different_rates_only_if_asked() {
    // Leaf 0's uplink to spine 0 runs at 2 Gbps, the other at 10 Gbps; both idle.
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, rate_gbps: Some(2.0), ..Default::default() });
    let mut plain = Bench::leaf(&cfg, 0, &[]);
    let mut ser = Bench::leaf(&cfg, 0, &[("delay_includes_serialisation", json!(true))]);
    let up = plain.uplinks(LeafId(1));
    let slow = (0..200).filter(|&f| plain.route(1.0, &mut data(f, 0, 2)) == up[0]).count();
    assert!((60..140).contains(&slow), "queueing + propagation alone: a random tie ({slow} of 200 on the slow uplink)");
    assert!((0..200).all(|f| ser.route(1.0, &mut data(f, 0, 2)) == up[1]), "6 µs vs 1.2 µs of serialisation");
}

#[test]
fn the_last_tie_is_broken_at_random_by_the_switch_stream() {
    let cfg = fabric(2, 4, 2);
    let run = || {
        let mut b = Bench::leaf(&cfg, 0, &[]);
        let up = b.uplinks(LeafId(1));
        let mut count = [0u32; 4];
        let mut picks = Vec::new();
        for f in 0..4000 {
            let p = b.route(1.0, &mut data(f, 0, 2));
            count[up.iter().position(|&u| u == p).unwrap()] += 1;
            picks.push(p);
        }
        assert_eq!(b.lb.counters().get("random_ties"), 4000);
        (count, picks)
    };
    let (count, a) = run();
    assert!(count.iter().all(|&c| (900..=1100).contains(&c)), "{count:?}");
    assert_eq!(a, run().1, "same seed, same draws");
}

#[test]
fn a_long_flow_moves_only_after_a_flowlet_gap_to_the_uplink_with_fewest_long_flows() {
    let cfg = fabric(2, 2, 4);
    let mut b = Bench::leaf(&cfg, 0, &[]);
    let up = b.uplinks(LeafId(1));
    b.make_long(1.0, 10, 1, 5, up[0]);
    b.make_long(1.0, 11, 2, 6, up[0]);
    b.make_long(2.0, 1, 0, 4, up[0]);
    assert_eq!((b.lb.total_long(up[0]), b.lb.total_long(up[1])), (3, 0));
    // Gaps of at most 500 µs keep the flowlet where it is, uplink 1 empty or not.
    let mut t = 2.0;
    for gap in [100.0, 400.0, 500.0, 1.0] {
        t += gap;
        assert_eq!(b.route(t, &mut data(1, 0, 4)), up[0], "gap {gap} µs");
    }
    // A 600 µs gap starts a flowlet: to uplink 1, which has no long flow.
    t += 600.0;
    assert_eq!(b.route(t, &mut data(1, 0, 4)), up[1]);
    assert_eq!((b.lb.total_long(up[0]), b.lb.total_long(up[1])), (2, 1), "the count moved with the flow");
    // And it stays there within the new flowlet, even though uplink 1 now has the longer queue.
    b.queues(&up, &[0, 60_000]);
    assert_eq!(b.route(t + 10.0, &mut data(1, 0, 4)), up[1]);
    let c = b.lb.counters();
    assert_eq!((c.get("long_flowlets"), c.get("long_moves")), (1, 1));
}

#[test]
fn a_rerouting_long_flow_breaks_count_ties_by_delay_and_does_not_count_itself() {
    let cfg = fabric(2, 4, 8);
    let mut b = Bench::leaf(&cfg, 0, &[]);
    let up = b.uplinks(LeafId(1));
    // Long counts 2 / 1 / 1 / 3, the flow f (flow 1) one of the two on uplink 0.
    b.make_long(1.0, 1, 0, 8, up[0]);
    for (flow, u) in [(10, 0), (11, 1), (12, 2), (13, 3), (14, 3), (15, 3)] {
        b.make_long(1.0, flow, 1 + flow % 7, 9, up[u]);
    }
    assert_eq!(up.iter().map(|&u| b.lb.total_long(u)).collect::<Vec<_>>(), vec![2, 1, 1, 3]);
    // Queueing 30 / 10 / 20 / 0 µs at 10 Gbps, equal propagation. Without itself f sees 1 / 1 / 1 / 3.
    b.queues(&up, &[37_500, 12_500, 25_000, 0]);
    assert_eq!(b.route(1000.0, &mut data(1, 0, 8)), up[1]);
    assert_eq!(up.iter().map(|&u| b.lb.total_long(u)).collect::<Vec<_>>(), vec![1, 2, 1, 3]);
    assert_eq!(b.lb.counters().get("random_ties"), 0);
    // With uplink 0 the fastest, only self-exclusion lets f stay on it (1 / 1 / 1 / 3 without itself).
    let mut b2 = Bench::leaf(&cfg, 0, &[]);
    b2.make_long(1.0, 1, 0, 8, up[0]);
    for (flow, u) in [(10, 0), (11, 1), (12, 2), (13, 3), (14, 3), (15, 3)] {
        b2.make_long(1.0, flow, 1 + flow % 7, 9, up[u]);
    }
    b2.queues(&up, &[0, 12_500, 25_000, 0]);
    assert_eq!(b2.route(1000.0, &mut data(1, 0, 8)), up[0], "f does not count itself: 1 / 1 / 1 / 3, uplink 0 fastest");
    let mut b3 = Bench::leaf(&cfg, 0, &[("exclude_self_on_reroute", json!(false))]);
    b3.make_long(1.0, 1, 0, 8, up[0]);
    for (flow, u) in [(10, 0), (11, 1), (12, 2), (13, 3), (14, 3), (15, 3)] {
        b3.make_long(1.0, flow, 1 + flow % 7, 9, up[u]);
    }
    b3.queues(&up, &[0, 12_500, 25_000, 0]);
    assert_eq!(b3.route(1000.0, &mut data(1, 0, 8)), up[1], "counting itself, uplink 0 shows 2 long flows");
}

#[test]
fn acks_are_placed_once_on_the_fastest_uplink_or_hashed() {
    let cfg = fabric(2, 4, 2);
    let mut b = Bench::leaf(&cfg, 0, &[]);
    let up = b.uplinks(LeafId(1));
    b.queues(&up, &[3000, 3000, 0, 3000]);
    assert_eq!(b.route(1.0, &mut ack_of(&data(1, 2, 0))), up[2]);
    b.queues(&up, &[0, 3000, 9000, 3000]);
    assert_eq!(b.route(2.0, &mut ack_of(&data(1, 2, 0))), up[2], "later ACKs follow the first");
    let mut h = Bench::leaf(&cfg, 0, &[("ack_routing", json!("ecmp"))]);
    let firsts: Vec<PortId> = (0..40).map(|f| h.route(1.0, &mut ack_of(&data(f, 2, 0)))).collect();
    assert!(firsts.iter().any(|&p| p != up[0]), "hashed ACK streams spread over the uplinks");
    assert_eq!(h.lb.entries(), 0, "hashed ACKs keep no state");
}

// ---------------------------------------------------------------------------------------------------------
// Marking

/// A leaf with one 1 Gbps uplink carrying long flow 1 (host 0 to host 2); RTT 200 µs of propagation, so
/// k* = 3,571 B and T_short = 200 µs.
fn marking_bench(given: &[(&str, Value)]) -> Bench {
    let cfg = gig(2, 1, 2);
    let mut given = given.to_vec();
    given.push(("rtt_basis", json!("propagation")));
    let mut b = Bench::leaf(&cfg, 0, &given);
    for _ in 0..69 {
        b.route(1.0, &mut data(1, 0, 2));
    }
    b
}

#[test]
fn long_flow_packets_are_marked_while_a_short_flow_is_active_on_their_port() {
    let mut b = marking_bench(&[]);
    // One packet queued, no short flow seen: not marked.
    assert!(!b.pass(10.0, &mut data(1, 0, 2), 1500).1);
    // A short-flow packet at t = 1000 µs (not marked by TAM: its queue is far below the DCTCP K).
    let (port, short_marked) = b.pass(1000.0, &mut data(2, 1, 3), 1500);
    assert!(!short_marked);
    assert_eq!(b.lb.port_state(port).last_short, Some(us(1000.0)));
    // Within T_short = RTT = 200 µs the long flow is marked, whatever the queue; after it, not.
    assert!(b.pass(1150.0, &mut data(1, 0, 2), 1500).1);
    assert!(b.pass(1200.0, &mut data(1, 0, 2), 0).1, "the window is inclusive");
    assert!(!b.pass(1201.0, &mut data(1, 0, 2), 1500).1);
    assert_eq!(b.lb.counters().get("marks_coexist"), 2);
    // A pure ACK does not make a short flow active.
    let mut b = marking_bench(&[]);
    let mut a = ack_of(&data(9, 3, 1)); // host 1 to host 3, over the same uplink
    b.pass(1000.0, &mut a, 1500);
    assert!(!b.pass(1150.0, &mut data(1, 0, 2), 1500).1);
    // Not ECN-capable: never marked.
    let mut b = marking_bench(&[]);
    b.pass(1000.0, &mut data(2, 1, 3), 0);
    let mut p = data(1, 0, 2);
    p.ecn.ect = false;
    assert!(!b.pass(1100.0, &mut p, 1500).1);
    // The ablation turns it off.
    let mut b = marking_bench(&[("marking", json!(false))]);
    b.pass(1000.0, &mut data(2, 1, 3), 0);
    assert!(!b.pass(1100.0, &mut data(1, 0, 2), 1500).1);
}

#[test]
fn long_flow_packets_are_marked_above_k_star_short_ones_are_not() {
    let mut b = marking_bench(&[]);
    // k* = 3,571 B: 2 full packets found in the queue is below, 3 above.
    assert!(!b.pass(10.0, &mut data(1, 0, 2), 3000).1);
    assert!(b.pass(11.0, &mut data(1, 0, 2), 4500).1);
    assert_eq!(b.lb.counters().get("marks_k_star"), 1);
    // Exactly k* is not above it.
    let mut b = marking_bench(&[("k_star_bytes", json!(4500))]);
    assert!(!b.pass(10.0, &mut data(1, 0, 2), 4500).1);
    assert!(b.pass(11.0, &mut data(1, 0, 2), 4501).1);
    // A short-flow packet with 4,500 B queued: TAM leaves it to the DCTCP K (20 packets in the paper).
    let mut b = marking_bench(&[]);
    assert!(!b.pass(12.0, &mut data(3, 1, 3), 4500).1);
    // A packet already marked by the port's DCTCP rule stays marked and is not counted as TAM's.
    let mut p = data(1, 0, 2);
    p.ecn.ce = true;
    assert!(b.pass(13.0, &mut p, 0).1);
    assert_eq!(b.lb.counters().get("marks_k_star") + b.lb.counters().get("marks_coexist"), 0);
}

#[test]
fn downstream_switches_classify_and_mark_too_unless_told_not_to() {
    // 2 leaves, 1 Gbps. The destination leaf (leaf 1) sees long flow 1 (host 0 -> host 2) and a short flow
    // (host 1 -> host 2) on its port to host 2.
    let cfg = gig(2, 1, 2);
    let run = |given: &[(&str, Value)]| -> (bool, bool, u16) {
        let mut b = Bench::leaf(&cfg, 1, given);
        for _ in 0..69 {
            b.route(1.0, &mut data(1, 0, 2));
        }
        let mut s = data(2, 1, 2);
        let short = b.pass(100.0, &mut s, 1500).1;
        let mut l = data(1, 0, 2);
        if given.iter().any(|(k, _)| *k == "class_source") {
            l.lb.scratch |= LONG_BIT; // written by the source leaf
        }
        let long = b.pass(150.0, &mut l, 1500).1;
        (short, long, l.lb.scratch)
    };
    assert_eq!(run(&[]), (false, true, 0), "local count at the destination leaf: the long flow is marked");
    assert_eq!(run(&[("mark_scope", json!("source_leaf"))]), (false, false, 0));
    assert_eq!(run(&[("class_source", json!("source_leaf_bit"))]), (false, true, 0), "bit read, then cleared before the host");
    // A spine counts too: spine 0 carries the long flow and, within T_short, a short flow to the same leaf.
    let mut s = Bench::spine(&cfg, 0, &[]);
    for _ in 0..69 {
        s.route(1.0, &mut data(1, 0, 2));
    }
    s.pass(100.0, &mut data(2, 1, 3), 0);
    assert!(s.pass(150.0, &mut data(1, 0, 2), 0).1);
    assert!(!s.pass(151.0, &mut data(2, 1, 3), 3000).1);
    // Hooks: spines classify (choose on a single candidate) only with local counting and marking everywhere.
    assert!(s.lb.hooks().choose_single && s.lb.hooks().enqueue);
    let s = Bench::spine(&cfg, 0, &[("class_source", json!("source_leaf_bit"))]);
    assert!(!s.lb.hooks().choose_single && s.lb.hooks().enqueue);
    let s = Bench::spine(&cfg, 0, &[("mark_scope", json!("source_leaf"))]);
    assert!(!s.lb.hooks().choose_single && !s.lb.hooks().enqueue);
}

// ---------------------------------------------------------------------------------------------------------
// Port-count hygiene

#[test]
fn long_counts_go_down_when_flows_end_or_age_out() {
    let cfg = fabric(2, 2, 4);
    let mut b = Bench::leaf(&cfg, 0, &[]);
    let empty = b.lb.state_bytes();
    let up = b.uplinks(LeafId(1));
    b.make_long(1.0, 1, 0, 4, up[0]);
    b.make_long(1.0, 2, 1, 5, up[0]);
    b.make_long(1.0, 3, 2, 6, up[1]);
    assert_eq!((b.lb.total_long(up[0]), b.lb.total_long(up[1])), (2, 1));
    // Flow 1's last byte (FIN) retires it at once; its retransmission does not count it again.
    let mut fin = data(1, 0, 4);
    fin.lb.class |= class::FIN;
    b.route(10.0, &mut fin);
    assert_eq!(b.lb.total_long(up[0]), 1);
    let mut again = data(1, 0, 4);
    again.lb.class |= class::FIN;
    b.route(20.0, &mut again);
    b.route(2000.0, &mut data(1, 0, 4));
    assert_eq!(b.lb.total_long(up[0]), 1);
    assert!(b.lb.flow(&data(1, 0, 4)).unwrap().is_long, "the entry stays: not a new short flow");
    // Flows 2 and 3 just stop. A sweep within the 10 ms idle expiry keeps them; after it, they are gone.
    b.b.at(us(9000.0));
    b.b.timer(&mut b.lb);
    assert_eq!((b.lb.total_long(up[0]), b.lb.total_long(up[1])), (1, 1));
    b.b.at(us(12_500.0));
    b.b.timer(&mut b.lb);
    assert_eq!((b.lb.total_long(up[0]), b.lb.total_long(up[1])), (0, 0));
    assert_eq!(b.lb.entries(), 0);
    assert_eq!(b.lb.state_bytes(), empty, "the tables are back to empty");
    let c = b.lb.counters();
    assert_eq!((c.get("fin_retired"), c.get("expired"), c.get("expired_long")), (1, 3, 2));
    // A flow that comes back after its entry expired starts short again.
    b.route(13_000.0, &mut data(2, 1, 5));
    assert!(!b.lb.flow(&data(2, 1, 5)).unwrap().is_long);
}

#[test]
fn the_long_count_basis_can_be_the_flows_active_in_the_current_period() {
    // Uplink 0: two long flows assigned but silent since; uplink 1: two, one of them (flow 3) still sending
    // and the other (flow 4) about to start a flowlet. By total count flow 4 stays on uplink 1 (1 other vs 2);
    // by the count of flows active in the current 1 ms period it moves to uplink 0 (0 vs 1).
    let cfg = fabric(2, 2, 4);
    for (basis, expect) in [("total", 1usize), ("active", 0)] {
        let mut b = Bench::leaf(&cfg, 0, &[("long_count_basis", json!(basis)), ("port_period_us", json!(1000.0))]);
        let up = b.uplinks(LeafId(1));
        b.make_long(1.0, 1, 0, 4, up[0]);
        b.make_long(1.0, 2, 1, 5, up[0]);
        b.make_long(1.0, 3, 2, 6, up[1]);
        b.make_long(1.0, 4, 3, 7, up[1]);
        for t in [400.0, 800.0, 1200.0] {
            assert_eq!(b.route(t, &mut data(3, 2, 6)), up[1], "no flowlet gap");
        }
        assert_eq!(b.route(1600.0, &mut data(4, 3, 7)), up[expect], "basis {basis}");
        assert_eq!(b.lb.counters().get("random_ties"), 0);
    }
}

// ---------------------------------------------------------------------------------------------------------
// End to end

/// Leaf 0 hosts 0..4 each send one long flow to leaf 1 hosts 6..10 (40 Gbps of demand on 2 x 10 Gbps
/// uplinks); host 5 sends 40 short flows of 20 KB to host 11, one every 100 µs, once the long flows run.
fn coexistence(scheme: &str, given: &[(&str, Value)]) -> Results {
    let mut cfg = fabric(2, 2, 6);
    cfg.lb.scheme = scheme.into();
    for (k, v) in given {
        cfg.lb.params.insert(k.to_string(), v.clone());
    }
    let mut flows: Vec<(f64, u32, u32, u64)> = (0..4).map(|i| (i as f64 * 10.0, i, 6 + i, 4_000_000)).collect();
    flows.extend((0..40).map(|i| (1000.0 + i as f64 * 100.0, 5, 11, 20_000)));
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    run(&cfg)
}

fn mean_fct(r: &Results, range: std::ops::Range<usize>) -> f64 {
    let n = range.len() as f64;
    range.map(|i| fct(r, i)).sum::<f64>() / n
}

#[test]
fn short_flows_beside_long_ones_finish_much_faster_under_tam() {
    let tam = coexistence("tam", &[]);
    let ecmp = coexistence("ecmp", &[]);
    let letflow = coexistence("letflow", &[]);
    let routing_only = coexistence("tam", &[("marking", json!(false))]);
    let coexist_only = coexistence("tam", &[("k_star_bytes", json!(1_000_000_000u64))]);
    for r in [&tam, &ecmp, &letflow, &routing_only, &coexist_only] {
        assert_eq!(r.stats.flows_completed, 44);
    }
    let short = |r: &Results| mean_fct(r, 4..44);
    let long = |r: &Results| mean_fct(r, 0..4);
    let (t, e, l, o) = (short(&tam), short(&ecmp), short(&letflow), short(&routing_only));
    eprintln!("short AFCT us: tam {t:.1} ecmp {e:.1} letflow {l:.1} tam-no-marking {o:.1}");
    eprintln!("long AFCT us: tam {:.1} ecmp {:.1} letflow {:.1} tam-no-marking {:.1}", long(&tam), long(&ecmp), long(&letflow), long(&routing_only));
    let sq = |r: &Results| r.flows.f64s("queueing_delay_us")[4..44].iter().sum::<f64>() / 40.0;
    eprintln!("short queueing us: tam {:.1} ecmp {:.1} letflow {:.1} tam-no-marking {:.1}", sq(&tam), sq(&ecmp), sq(&letflow), sq(&routing_only));
    let sw = |r: &Results, c: &str| r.switches.u64s(c).iter().sum::<u64>();
    eprintln!("tam counters: coexist {} k* {} became_long {} fin {} moves {}", sw(&tam, "tam_marks_coexist"), sw(&tam, "tam_marks_k_star"), sw(&tam, "tam_became_long"), sw(&tam, "tam_fin_retired"), sw(&tam, "tam_long_moves"));
    assert!(t < 0.5 * e.min(l), "TAM short AFCT {t:.1} us vs ECMP {e:.1}, LetFlow {l:.1}");
    assert!(t < 0.5 * o, "the marking, not the routing, makes the difference: {t:.1} vs {o:.1} us without it");
    let c = mean_fct(&coexist_only, 4..44);
    assert!(c < 0.5 * o, "with k* out of the way, marking while short flows are present alone: {c:.1} vs {o:.1} us");
    assert!(sw(&coexist_only, "tam_marks_coexist") > 100 && sw(&coexist_only, "tam_marks_k_star") == 0);
    assert!(sq(&tam) < 0.3 * sq(&ecmp).min(sq(&letflow)));
    assert!(sw(&tam, "tam_marks_coexist") > 0);
    // Long flows still get through without spurious retransmissions (flowlets do not reorder here).
    assert_eq!(sum(&tam, "spurious_retransmissions"), 0);
    assert!(long(&tam) < 1.5 * long(&ecmp), "long flows pay a bounded price");
}

#[test]
fn short_flows_avoid_slow_paths() {
    // 2 leaves x 4 spines at 1 Gbps; spines 2 and 3 have 100 µs leaf-spine links (4x). Light load, short flows.
    let run_on = |scheme: &str| -> f64 {
        let mut cfg = gig(2, 4, 4);
        slow_spine(&mut cfg, 2, 2, 100.0);
        slow_spine(&mut cfg, 3, 2, 100.0);
        cfg.lb.scheme = scheme.into();
        let flows: Vec<(f64, u32, u32, u64)> = (0..100).map(|i| (i as f64 * 300.0, i % 4, 4 + (i / 4) % 4, 10_000)).collect();
        cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
        let r = run(&cfg);
        assert_eq!(r.stats.flows_completed, 100);
        let good = uplink_rows(&r).iter().filter(|row| row[2] == 0 && row[3] == 0).count();
        good as f64 / 100.0
    };
    let (tam, ecmp) = (run_on("tam"), run_on("ecmp"));
    assert!(tam >= 0.95, "TAM placed {:.0}% of short flows on good spines", tam * 100.0);
    assert!(ecmp < 0.8, "ECMP {:.0}%", ecmp * 100.0);
}

#[test]
fn every_long_flow_that_a_leaf_counted_is_retired_and_runs_are_deterministic() {
    let mut cfg = fabric(4, 4, 4);
    cfg.lb.scheme = "tam".into();
    cfg.sources = vec![poisson(16, 0.5, 300)];
    let a = run(&cfg);
    assert_eq!(a.stats.flows_completed, 300);
    let kind = a.switches.strs("kind");
    let (counted, fin, expired) = (a.switches.u64s("tam_long_counted"), a.switches.u64s("tam_fin_retired"), a.switches.u64s("tam_expired_long"));
    for i in 0..kind.len() {
        if kind[i] == "leaf" {
            assert_eq!(counted[i], fin[i] + expired[i], "leaf {i}: every long flow counted is retired (FIN or expiry)");
        }
    }
    assert!(counted.iter().sum::<u64>() > 0);
    let b = run(&cfg);
    assert_eq!(fct_bits(&a), fct_bits(&b));
    assert_eq!(a.switches.u64s("tam_marks_coexist"), b.switches.u64s("tam_marks_coexist"));
}
