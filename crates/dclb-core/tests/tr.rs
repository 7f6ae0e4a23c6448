//! TR: Time-to-Next-Leaf, the order filter, the short and long rules, short-flow counting, the spine queue
//! carried back in ACK bits, and end-to-end runs on the paper's asymmetric two-leaf fabric.
//!
//! Deliberate breakages tried (each once, then reverted), and the tests that failed:
//! * order filter inverted (`t < p_tnl` safe): nine tests, among them both zero-reordering runs,
//!   `a_crafted_tnl_history_makes_an_uplink_ineligible` and `no_safe_uplink_falls_back_to_the_previous_packets_uplink`;
//! * order filter dropped (every uplink safe): the crafted history, the fallback, the long rule's second case and
//!   both end-to-end reordering runs;
//! * short rule taking the largest TNL: `short_flows_take_the_smallest_tnl_and_ties_are_random`, the TNL test,
//!   the feedback test and the end-to-end runs;
//! * long rule ranking by TNL alone (short-flow count ignored): `long_flows_take_the_uplink_with_the_fewest_short_flows`,
//!   `long_flows_keep_out_of_the_way_of_short_flows_end_to_end` (and the 3.5x run, whose filter then has nothing to do);
//! * no decrement when a flow becomes long: the counting test and the long-rule test; no idle expiry: the
//!   counting test and the end-of-run hygiene check;
//! * spine stamping the ACK's own egress queue (toward the data sender): the round-trip test and the feedback test;
//! * leaf not restoring the bits: the round-trip test, the TNL test and `hosts_never_see_the_report_bits...`;
//! * spine term left out of TNL: the TNL, filter, fallback, round-trip and feedback tests;
//! * ACKs classified and counted as flows: the counting test;
//! * the floor on the previous packet's uplink left out under `tnl_serialisation`:
//!   `with_serialisation_a_short_last_segment_may_follow_its_predecessor_on_its_own_uplink` and
//!   `unequal_segments_need_the_serialisation_term_for_strict_order` (short AFCT 275 µs vs 187 µs without the
//!   option); the floor applied whatever `p_tnl_on_last` says: the first of the two;
//! * `long_granularity = flowlet` never keeping the uplink: the flowlet unit test and
//!   `a_lone_long_flow_spreads_per_packet_and_stays_put_per_flowlet`; keeping it also for the packet that makes
//!   the flow long: the flowlet unit test.

mod common;
use common::*;
use dclb_core::config::{Config, Direction, LinkOverride, QueueUnit, TransportKind};
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::lb::tr::{decode_delay, encode, Decode, Fallback, FlowData, LongGranularity, OrderCompare, PtnlUpdate, Tr, TrParams, PRESENT};
use dclb_core::lb::{per_switch, Decision, Hooks, PacketMut, SchemeSpec, SwitchBalancer, SwitchCx};
use dclb_core::metrics::Results;
use dclb_core::packet::{Packet, PacketKind};
use dclb_core::units::{Rate, Time};
use dclb_core::Simulation;
use std::cell::RefCell;

fn us(x: u64) -> Time {
    Time::from_us(x)
}

/// A full-size data packet (or `payload` bytes) of flow `flow` from `src` to `dst`.
fn data(flow: u32, src: u32, dst: u32, payload: u32) -> Packet {
    let mut p = Packet::new(PacketKind::Data, FlowId(flow), HostId(src), HostId(dst));
    p.sport = 1000 + flow as u16;
    p.dport = 80;
    p.payload = payload;
    p.wire_bytes = payload + 40;
    p
}

/// The ACK a receiver `src` sends for flow `flow` back to `dst` (reversed ports), with report bits `scratch`.
fn ack(flow: u32, src: u32, dst: u32, scratch: u16) -> Packet {
    let mut p = Packet::new(PacketKind::Ack, FlowId(flow), HostId(src), HostId(dst));
    p.sport = 80;
    p.dport = 1000 + flow as u16;
    p.wire_bytes = 40;
    p.lb.scratch = scratch;
    p
}

fn override_link(leaf: u32, spine: u32, delay_us: f64) -> LinkOverride {
    LinkOverride { leaf, spine, delay_us: Some(delay_us), ..Default::default() }
}

/// Leaf 0 of two leaves and two spines at 10 Gbps, 2 hosts per leaf: leaf-to-leaf propagation 10 µs through
/// uplink 0 and 30 µs through uplink 1; spine buffers 320,000 B, so one code step of 5 bits is 10,000 B.
fn t1_bench() -> (SwitchBench, Config) {
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.fabric_delay_us = 5.0;
    cfg.topology.buffer_bytes = Some(320_000);
    cfg.topology.links = vec![override_link(0, 1, 15.0), override_link(1, 1, 15.0)];
    (SwitchBench::leaf(&cfg, LeafId(0)).with_rng(5), cfg)
}

/// Sends `pkt` through the leaf as the engine does (arrival from a host, then the decision).
fn send(tr: &mut Tr, b: &mut SwitchBench, pkt: &mut Packet) -> PortId {
    let cands = b.candidates_to_leaf(b.fabric.facts.leaf_of_host(pkt.dst));
    b.via(None).arrival(tr, pkt);
    b.forward(tr, pkt, &cands)
}

/// An ACK from a host of `src_leaf` arriving at leaf `b` through its uplink `uplink`.
fn report_via(tr: &mut Tr, b: &mut SwitchBench, uplink: u32, src_host: u32, dst_host: u32, scratch: u16) -> Packet {
    let mut a = ack(77, src_host, dst_host, scratch);
    let port = b.fabric.uplink_port(b.me.as_leaf().expect("a leaf bench"), uplink);
    b.via(Some(port)).arrival(tr, &mut a);
    b.via(None);
    a
}

#[test]
fn tnl_is_now_plus_propagation_plus_local_and_spine_queueing() {
    let (mut b, _) = t1_bench();
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    let now = us(1000);
    b.at(now);
    let (up0, up1) = (b.fabric.uplink_port(LeafId(0), 0), b.fabric.uplink_port(LeafId(0), 1));
    b.set_queue_bytes(up0, 12_500); // 10 µs at 10 Gbps, nothing on the wire
    // Spine 1 reported code 2 toward leaf 1 (20,000 B = 16 µs at 10 Gbps); spine 0 reported 0.
    let a = report_via(&mut tr, &mut b, 1, 2, 0, 2 | PRESENT);
    assert_eq!(a.lb.scratch, 0, "the leaf restores the bits");
    report_via(&mut tr, &mut b, 0, 2, 0, PRESENT);
    assert_eq!((tr.report(1, LeafId(1)), tr.report(0, LeafId(1))), (Some(2), Some(0)));
    assert_eq!(tr.tnl_of(&b.cx(), up0, LeafId(1), 1500), now + us(20), "10 µs propagation + 10 µs local queue");
    assert_eq!(tr.tnl_of(&b.cx(), up1, LeafId(1), 1500), now + us(46), "30 µs propagation + 16 µs spine queue");
    // A short packet takes the smaller TNL.
    assert_eq!(send(&mut tr, &mut b, &mut data(1, 0, 2, 1460)), up0);
    // With the packet's own serialisation: 1.2 µs on the uplink and 1.2 µs at the spine.
    let p = TrParams { tnl_serialisation: true, ..TrParams::default() };
    let tr2 = Tr::new(&b.fabric.facts, &b.me, p);
    assert_eq!(tr2.tnl_of(&b.cx(), up0, LeafId(1), 1500), now + us(20) + Time::from_ns(2400));
}

#[test]
fn the_local_wait_is_exact_with_a_packet_on_the_wire() {
    // Through the whole engine: one 1500 B packet is on leaf 0's uplink when the next decision is made.
    // `wait_time` counts the rest of its serialisation, `queue_delay` the whole packet.
    let cfg = fabric(2, 1, 2);
    let mut bench = SwitchBench::leaf(&cfg, LeafId(0));
    let up = bench.fabric.uplink_port(LeafId(0), 0);
    let port = &mut bench.fabric.ports[up.index()];
    let mut arena = dclb_core::packet::PacketArena::new();
    let mut p = data(1, 0, 2, 1460);
    let id = arena.alloc(p);
    assert!(port.admit(Time::ZERO, id, arena.get_mut(id)).is_some());
    let (_, done) = port.start_service(Time::ZERO, &mut arena).unwrap();
    assert_eq!(done, Time::from_ns(1200));
    p.seq = 1460;
    let id2 = arena.alloc(p);
    assert!(port.admit(Time::ZERO, id2, arena.get_mut(id2)).is_some());
    assert_eq!(port.wait_time(Time::from_ns(900)), Time::from_ns(300 + 1200), "rest of the head + one packet");
    assert_eq!(port.queue_delay(), Time::from_ns(2400), "both packets whole");
    bench.at(Time::from_ns(900));
    let exact = Tr::new(&bench.fabric.facts, &bench.me, TrParams::default());
    let coarse = Tr::new(&bench.fabric.facts, &bench.me, TrParams { local_delay: dclb_core::lb::tr::LocalDelay::QueuedBytes, ..TrParams::default() });
    let base = Time::from_ns(900) + us(2);
    assert_eq!(exact.tnl_of(&bench.cx(), up, LeafId(1), 1500), base + Time::from_ns(1500));
    assert_eq!(coarse.tnl_of(&bench.cx(), up, LeafId(1), 1500), base + Time::from_ns(2400));
}

#[test]
fn a_crafted_tnl_history_makes_an_uplink_ineligible() {
    let (mut b, _) = t1_bench();
    let now = us(1000);
    b.at(now);
    let (up0, up1) = (b.fabric.uplink_port(LeafId(0), 0), b.fabric.uplink_port(LeafId(0), 1));
    b.set_queue_bytes(up0, 12_500);
    let run = |p_tnl: Time, compare: OrderCompare, b: &mut SwitchBench| -> (PortId, Tr) {
        let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams { order_compare: compare, ..TrParams::default() });
        report_via(&mut tr, b, 1, 2, 0, 2 | PRESENT);
        let mut p = data(1, 0, 2, 1460);
        tr.set_flow(p.five_tuple(), up0, now, FlowData { fs: 1460, p_tnl, long: false, ..FlowData::default() });
        let port = send(&mut tr, b, &mut p);
        (port, tr)
    };
    // TNL0 = now + 20 µs, TNL1 = now + 46 µs.
    assert_eq!(run(Time::ZERO, OrderCompare::Strict, &mut b).0, up0, "no history: the smaller TNL");
    let (port, tr) = run(now + us(25), OrderCompare::Strict, &mut b);
    assert_eq!(port, up1, "the previous packet is due at +25 µs: uplink 0 (+20 µs) would deliver this one first");
    assert_eq!(tr.counters().get("excluded"), 1);
    let key = data(1, 0, 2, 1460).five_tuple();
    assert_eq!(tr.flow(key).unwrap().1.p_tnl, now + us(46), "the flow remembers the TNL of the uplink it used");
    // Equal TNL: excluded under the algorithm's "larger than", allowed under "not smaller".
    assert_eq!(run(now + us(20), OrderCompare::Strict, &mut b).0, up1);
    assert_eq!(run(now + us(20), OrderCompare::NonStrict, &mut b).0, up0);
    // A long flow is filtered the same way.
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    let mut p = data(2, 0, 2, 1460);
    tr.set_flow(p.five_tuple(), up0, now, FlowData { fs: 500_000, p_tnl: now + us(25), long: true, ..FlowData::default() });
    assert_eq!(send(&mut tr, &mut b, &mut p), up1);
}

#[test]
fn no_safe_uplink_falls_back_to_the_previous_packets_uplink() {
    let (mut b, _) = t1_bench();
    let now = us(1000);
    b.at(now);
    let (up0, up1) = (b.fabric.uplink_port(LeafId(0), 0), b.fabric.uplink_port(LeafId(0), 1));
    b.set_queue_bytes(up0, 12_500);
    let run = |fallback: Fallback, update: PtnlUpdate, last: PortId, b: &mut SwitchBench| -> (PortId, Time, Tr) {
        let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams { empty_set_fallback: fallback, p_tnl_update: update, ..TrParams::default() });
        report_via(&mut tr, b, 1, 2, 0, 2 | PRESENT);
        let mut p = data(1, 0, 2, 1460);
        let key = p.five_tuple();
        tr.set_flow(key, last, now, FlowData { fs: 1460, p_tnl: now + us(100), long: false, ..FlowData::default() });
        let port = send(&mut tr, b, &mut p);
        let p_tnl = tr.flow(key).unwrap().1.p_tnl;
        (port, p_tnl, tr)
    };
    // Both TNLs (+20, +46 µs) are below the previous packet's +100 µs.
    let (port, p_tnl, tr) = run(Fallback::LastPort, PtnlUpdate::Max, up1, &mut b);
    assert_eq!((port, p_tnl), (up1, now + us(100)), "FIFO behind the previous packet, and its bound kept");
    assert_eq!(tr.counters().get("fallbacks"), 1);
    assert_eq!(run(Fallback::LastPort, PtnlUpdate::Max, up0, &mut b).0, up0, "not the fastest: the previous uplink");
    assert_eq!(run(Fallback::MaxTnl, PtnlUpdate::Max, up0, &mut b).0, up1, "max_tnl: the slowest uplink");
    assert_eq!(run(Fallback::LastPort, PtnlUpdate::Chosen, up1, &mut b).1, now + us(46), "paper-literal update");
}

#[test]
fn with_serialisation_a_short_last_segment_may_follow_its_predecessor_on_its_own_uplink() {
    // t1_bench at 10 Gbps: leaf-to-leaf propagation 10 µs through uplink 0, 30 µs through uplink 1. With
    // `tnl_serialisation` a 1500 B packet's TNL includes 1.2 µs on the uplink and 1.2 µs at the spine.
    let (mut b, _) = t1_bench();
    let now = us(1000);
    let (up0, up1) = (b.fabric.uplink_port(LeafId(0), 0), b.fabric.uplink_port(LeafId(0), 1));
    let ser = TrParams { tnl_serialisation: true, ..TrParams::default() };
    let mut tr = Tr::new(&b.fabric.facts, &b.me, ser);
    b.at(now);
    let mut full = data(1, 0, 2, 1460);
    assert_eq!(send(&mut tr, &mut b, &mut full), up0);
    let key = full.five_tuple();
    assert_eq!(tr.flow(key).unwrap().1.p_tnl, now + us(10) + Time::from_ns(2400), "its last bit reaches leaf 1 then");
    // The flow's last segment (100 B on the wire, 80 ns per hop) arrives 80 ns later, while 1,400 B of the first
    // packet are still to go on uplink 0 (1.12 µs). Eq. 1 with its own serialisation puts it at +11.36 µs, before
    // the first packet's +12.4 µs, although it queues behind that packet at the leaf and again at the spine.
    // It follows it on uplink 0, and its last bit is due 80 ns after the first packet's: no detour through the
    // slow uplink 1 (+30 µs).
    b.at(now + Time::from_ns(80));
    b.set_queue_bytes(up0, 1400);
    let raw = tr.tnl_of(&b.cx(), up0, LeafId(1), 100);
    assert_eq!(raw, now + Time::from_ns(80 + 10_000 + 1_120 + 160));
    assert_eq!(send(&mut tr, &mut b, &mut data(1, 0, 2, 60)), up0);
    assert_eq!(tr.flow(key).unwrap().1.p_tnl, now + us(10) + Time::from_ns(2400 + 80), "the previous packet's arrival + its own 80 ns at the spine");
    assert_eq!(tr.counters().get("excluded"), 0);
    // The floor holds only on the uplink of the packet that set the bound: when that packet left by another
    // uplink (a fallback onto uplink 0 kept an older bound), uplink 0 is excluded as Eq. 1 says.
    let mut tr = Tr::new(&b.fabric.facts, &b.me, ser);
    let mut p = data(2, 0, 2, 60);
    tr.set_flow(p.five_tuple(), up0, now, FlowData { fs: 1460, p_tnl: now + us(12) + Time::from_ns(400), long: false, p_tnl_on_last: false });
    assert_eq!(send(&mut tr, &mut b, &mut p), up1);
    // Without the option nothing changes: the packet's TNL leaves out serialisation, and uplink 0 is safe as is.
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    let mut p = data(3, 0, 2, 60);
    tr.set_flow(p.five_tuple(), up0, now, FlowData { fs: 1460, p_tnl: now + us(10), long: false, p_tnl_on_last: true });
    assert_eq!(send(&mut tr, &mut b, &mut p), up0);
    assert_eq!(tr.flow(p.five_tuple()).unwrap().1.p_tnl, now + Time::from_ns(80 + 10_000 + 1_120));
}

#[test]
fn long_flows_switch_uplinks_only_between_flowlets_under_the_flowlet_reading() {
    // 2 x 4 at 10 Gbps, 1 µs links: base RTT 8 µs, the automatic flowlet gap. A long flow's previous packet
    // went out on uplink 0, which now holds 10,000 B (8 µs); the other uplinks are idle and no short flow runs.
    let now = us(100);
    let case = |granularity: LongGranularity, gap: Time, idle: Time, fs: u64| -> (PortId, Vec<PortId>) {
        let mut b = SwitchBench::leaf(&fabric(2, 4, 2), LeafId(0)).with_rng(2);
        let ups: Vec<PortId> = (0..4).map(|u| b.fabric.uplink_port(LeafId(0), u)).collect();
        let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams { long_granularity: granularity, long_flowlet_gap_us: gap, ..TrParams::default() });
        b.at(now);
        send(&mut tr, &mut b, &mut data(9, 1, 3, 1460)); // resolves the automatic RTT (a short flow of its own)
        b.set_queue_bytes(ups[0], 10_000);
        let mut p = data(1, 0, 2, 1460);
        tr.set_flow(p.five_tuple(), ups[0], now - idle, FlowData { fs, p_tnl: now - idle + us(1), long: fs > 100_000, p_tnl_on_last: true });
        (send(&mut tr, &mut b, &mut p), ups)
    };
    let (auto, long) = (Time::ZERO, 300_000);
    // Per packet (L87): the long rule picks afresh and leaves the queued uplink.
    let (port, ups) = case(LongGranularity::Packet, auto, us(1), long);
    assert_ne!(port, ups[0]);
    // Per flowlet: 1 µs after its previous packet the flow is within its flowlet and stays; exactly one gap
    // later as well (a gap must exceed the timeout, as in LetFlow); after 9 µs it starts a new flowlet.
    assert_eq!(case(LongGranularity::Flowlet, auto, us(1), long).0, ups[0]);
    assert_eq!(case(LongGranularity::Flowlet, auto, us(8), long).0, ups[0]);
    assert_ne!(case(LongGranularity::Flowlet, auto, us(9), long).0, ups[0]);
    assert_eq!(case(LongGranularity::Flowlet, us(20), us(9), long).0, ups[0], "a gap given explicitly");
    // The packet that makes the flow long starts a flowlet: placed by the long rule, not kept.
    assert_ne!(case(LongGranularity::Flowlet, auto, us(1), 99_000).0, ups[0]);
    // Short flows are per packet under either reading.
    assert_ne!(case(LongGranularity::Flowlet, auto, us(1), 50_000).0, ups[0]);
}

#[test]
fn short_flows_take_the_smallest_tnl_and_ties_are_random() {
    let mut cfg = fabric(2, 4, 2);
    let mut b = SwitchBench::leaf(&cfg, LeafId(0)).with_rng(3);
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    let cands = b.candidates_to_leaf(LeafId(1));
    let mut per = [0u32; 4];
    for f in 0..4000 {
        b.at(us(10 + f as u64));
        let port = send(&mut tr, &mut b, &mut data(f, 0, 2, 1460));
        per[cands.iter().position(|&c| c == port).unwrap()] += 1;
    }
    assert!(per.iter().all(|&n| (900..=1100).contains(&n)), "equal TNLs: a uniform draw, got {per:?}");
    // Uplink 2's propagation is 1 ns shorter: every short flow takes it.
    cfg.topology.links = vec![LinkOverride { leaf: 0, spine: 2, delay_us: Some(0.999), direction: dclb_core::config::Direction::Up, ..Default::default() }];
    let mut b = SwitchBench::leaf(&cfg, LeafId(0)).with_rng(3);
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    let up2 = b.fabric.uplink_port(LeafId(0), 2);
    for f in 0..200 {
        b.at(us(10 + f as u64));
        assert_eq!(send(&mut tr, &mut b, &mut data(f, 0, 2, 1460)), up2);
    }
    // Queues decide as well: uplink 3 with the least queue wins.
    let mut b = SwitchBench::leaf(&fabric(2, 4, 2), LeafId(0));
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    for (u, q) in [(0, 3000), (1, 2000), (2, 5000), (3, 1000)] {
        let p = b.fabric.uplink_port(LeafId(0), u);
        b.set_queue_bytes(p, q);
    }
    assert_eq!(send(&mut tr, &mut b, &mut data(1, 0, 2, 1460)), b.fabric.uplink_port(LeafId(0), 3));
}

/// Leaf 0 of 2 x 4 at 10 Gbps, 1 µs links: short flows placed 3 on uplink 0 and 1 on uplink 3, then queues
/// set so that the TNLs are 10 / 40 / 30 / 5 µs after `now`.
fn t5_bench(now: Time) -> (SwitchBench, Tr) {
    let mut b = SwitchBench::leaf(&fabric(2, 4, 2), LeafId(0)).with_rng(1);
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams { short_idle_timeout_us: us(200), ..TrParams::default() });
    let ups: Vec<PortId> = (0..4).map(|u| b.fabric.uplink_port(LeafId(0), u)).collect();
    b.at(now - us(10));
    let only = |b: &mut SwitchBench, u: usize| {
        for (i, &p) in ups.iter().enumerate() {
            b.set_queue_bytes(p, if i == u { 0 } else { 50_000 });
        }
    };
    only(&mut b, 0);
    for f in 0..3 {
        assert_eq!(send(&mut tr, &mut b, &mut data(100 + f, 0, 2, 1460)), ups[0]);
    }
    only(&mut b, 3);
    assert_eq!(send(&mut tr, &mut b, &mut data(103, 0, 2, 1460)), ups[3]);
    b.at(now);
    // Queue delays 8 / 38 / 28 / 3 µs (1,250 B per µs) on top of 2 µs of propagation.
    for (i, q) in [10_000u64, 47_500, 35_000, 3_750].into_iter().enumerate() {
        b.set_queue_bytes(ups[i], q);
    }
    (b, tr)
}

#[test]
fn long_flows_take_the_uplink_with_the_fewest_short_flows() {
    let now = us(100);
    let (mut b, mut tr) = t5_bench(now);
    let ups: Vec<PortId> = (0..4).map(|u| b.fabric.uplink_port(LeafId(0), u)).collect();
    assert_eq!((0..4).map(|u| tr.short_flows(now, u)).collect::<Vec<_>>(), vec![3, 0, 0, 1]);
    let tnls: Vec<Time> = ups.iter().map(|&p| tr.tnl_of(&b.cx(), p, LeafId(1), 1500)).collect();
    assert_eq!(tnls, vec![now + us(10), now + us(40), now + us(30), now + us(5)]);
    // A long flow: fewest short flows (uplinks 1 and 2, none), the faster of the two.
    let mut long = data(1, 0, 2, 1460);
    tr.set_flow(long.five_tuple(), ups[0], now - us(50), FlowData { fs: 300_000, p_tnl: Time::ZERO, long: true, ..FlowData::default() });
    assert_eq!(send(&mut tr, &mut b, &mut long), ups[2]);
    // Uplink 2 is unsafe once the previous packet is due at +35 µs: uplink 1.
    let mut long2 = data(2, 0, 2, 1460);
    tr.set_flow(long2.five_tuple(), ups[1], now - us(50), FlowData { fs: 300_000, p_tnl: now + us(35), long: true, ..FlowData::default() });
    assert_eq!(send(&mut tr, &mut b, &mut long2), ups[1]);
    // A short flow in the same state takes the smallest TNL, uplink 3, whatever its short-flow count.
    assert_eq!(send(&mut tr, &mut b, &mut data(3, 0, 2, 1460)), ups[3]);
    assert_eq!(tr.counters().get("long_packets"), 2);
    // The packet that makes a flow long (fs crosses 100,000 B) is placed by the long rule, and the flow leaves
    // the counts it was in.
    let (mut b, mut tr) = t5_bench(now);
    let mut p = data(100, 0, 2, 1460);
    let key = p.five_tuple();
    let (port0, mut st) = tr.flow(key).unwrap();
    assert_eq!(port0, ups[0]);
    st.fs = 99_000;
    tr.set_flow(key, port0, now - us(10), st);
    assert_eq!(send(&mut tr, &mut b, &mut p), ups[2], "100,460 B sent: long");
    assert!(tr.flow(key).unwrap().1.long);
    assert_eq!((0..4).map(|u| tr.short_flows(now, u)).collect::<Vec<_>>(), vec![2, 0, 0, 1]);
}

#[test]
fn short_flows_are_counted_per_uplink_and_expire_after_one_rtt() {
    let mut b = SwitchBench::leaf(&fabric(2, 2, 2), LeafId(0));
    let (up0, up1) = (b.fabric.uplink_port(LeafId(0), 0), b.fabric.uplink_port(LeafId(0), 1));
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams { short_idle_timeout_us: us(200), ..TrParams::default() });
    let mut pkt = data(1, 0, 2, 1460);
    let at = |t: Time, fast: PortId, b: &mut SwitchBench, tr: &mut Tr, pkt: &mut Packet| -> PortId {
        b.at(t);
        b.set_queue_bytes(up0, if fast == up0 { 0 } else { 100_000 });
        b.set_queue_bytes(up1, if fast == up1 { 0 } else { 100_000 });
        pkt.seq += 1460;
        send(tr, b, pkt)
    };
    assert_eq!(at(Time::ZERO, up0, &mut b, &mut tr, &mut pkt), up0);
    assert_eq!((tr.short_flows(Time::ZERO, 0), tr.short_flows(Time::ZERO, 1)), (1, 0));
    assert_eq!(at(us(50), up1, &mut b, &mut tr, &mut pkt), up1);
    assert_eq!((tr.short_flows(us(50), 0), tr.short_flows(us(50), 1)), (1, 1), "one short flow, present on both uplinks");
    assert_eq!(tr.short_flows(us(200) - Time(1), 0), 1);
    assert_eq!(tr.short_flows(us(200), 0), 0, "no packet on uplink 0 for one RTT: inactive there");
    assert_eq!(tr.short_flows(us(200), 1), 1);
    assert_eq!(at(us(300), up0, &mut b, &mut tr, &mut pkt), up0);
    assert_eq!((tr.short_flows(us(300), 0), tr.short_flows(us(300), 1)), (1, 0), "active again on uplink 0");
    // Packets 4..68 (99,280 B) keep it short and present; the 69th (100,740 B) makes it long.
    for i in 0..65 {
        let fast = if i % 2 == 0 { up0 } else { up1 };
        at(us(301 + i), fast, &mut b, &mut tr, &mut pkt);
    }
    assert_eq!(tr.flow(pkt.five_tuple()).unwrap().1.fs, 68 * 1460);
    assert_eq!((tr.short_flows(us(370), 0), tr.short_flows(us(370), 1)), (1, 1));
    at(us(370), up0, &mut b, &mut tr, &mut pkt);
    assert_eq!((tr.short_flows(us(370), 0), tr.short_flows(us(370), 1)), (0, 0), "long: it leaves every count at once");
    // A stream of pure ACKs leaving the leaf is never counted.
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    for i in 0..50 {
        b.at(us(1000 + i));
        send(&mut tr, &mut b, &mut ack(5, 0, 2, 0));
    }
    assert_eq!((tr.short_flows(us(1050), 0), tr.short_flows(us(1050), 1)), (0, 0));
    assert_eq!((tr.counters().get("control_packets"), tr.counters().get("short_packets")), (50, 0));
    // The automatic T_idle is the base RTT: 2 x (1 µs host link + 2 µs leaf to leaf + 1 µs host link).
    assert_eq!(tr.idle_timeout(), Some(us(8)));
}

#[test]
fn the_automatic_idle_timeout_is_the_propagation_round_trip_both_ways() {
    // Leaf 0's uplinks have 20 µs of delay leaf to spine only: from leaf 0 the data takes 1 + 20 + 1 + 1 µs
    // and the ACK 1 + 1 + 1 + 1 µs back, from leaf 1 the other way round: 27 µs at both leaves, not twice
    // either one-way delay (46 µs at leaf 0, 8 µs at leaf 1).
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.links = (0..2).map(|spine| LinkOverride { direction: Direction::Up, ..override_link(0, spine, 20.0) }).collect();
    for leaf in 0..2 {
        let mut b = SwitchBench::leaf(&cfg, LeafId(leaf));
        let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
        let (src, dst) = if leaf == 0 { (0, 2) } else { (2, 0) };
        send(&mut tr, &mut b, &mut data(1, src, dst, 1460));
        assert_eq!(tr.idle_timeout(), Some(us(27)), "leaf {leaf}");
    }
}

#[test]
fn the_spine_queue_rides_back_quantised_and_the_leaf_restores_the_bits() {
    // Leaves M = 0, E = 1, F = 2; spine buffers 375,000 B: one step of 5 bits is 11,718.75 B.
    let mut cfg = fabric(3, 2, 2);
    cfg.topology.buffer_bytes = Some(375_000);
    let mut spine = SwitchBench::spine(&cfg, SpineId(0));
    let mut leaf = SwitchBench::leaf(&cfg, LeafId(0));
    let mut s0 = Tr::new(&spine.fabric.facts, &spine.me, TrParams::default());
    let mut m = Tr::new(&leaf.fabric.facts, &leaf.me, TrParams::default());
    let to_e = spine.fabric.spine_down_port(SpineId(0), 1);
    let to_m = spine.fabric.spine_down_port(SpineId(0), 0);
    spine.set_queue_bytes(to_e, 30_000);
    spine.set_queue_bytes(to_m, 0);
    // An ACK from a host on E (host 2) to a host on M (host 0) comes into spine 0 from E.
    let mut a = ack(1, 2, 0, 0);
    spine.via(Some(to_e)).arrival(&mut s0, &mut a);
    assert_eq!(a.lb.scratch, 2 | PRESENT, "floor(30,000 x 32 / 375,000) = 2, of the queue toward E (not toward M)");
    assert_eq!(s0.counters().get("stamped"), 1);
    // Data packets are not stamped (stamp_packets = acks).
    let mut d = data(1, 2, 0, 1460);
    spine.arrival(&mut s0, &mut d);
    assert_eq!(d.lb.scratch, 0);
    // Leaf M gets the ACK on uplink 0 (spine 0): it files code 2 under (uplink 0, E) and restores the bits.
    let up0 = leaf.fabric.uplink_port(LeafId(0), 0);
    leaf.via(Some(up0)).arrival(&mut m, &mut a);
    assert_eq!(a.lb.scratch, 0, "the host receives the ACK as it was sent");
    assert_eq!((m.report(0, LeafId(1)), m.report(0, LeafId(2)), m.report(1, LeafId(1))), (Some(2), None, None));
    // Decoded: 2 x 375,000 / 32 = 23,437.5 B, 18.75 µs at 10 Gbps (lower edge); mid: 2.5 steps.
    let r = Rate::from_gbps(10.0);
    assert_eq!(decode_delay(2, 375_000, 5, r, Decode::Lower), Time::from_ns(18_750));
    assert_eq!(decode_delay(2, 375_000, 5, r, Decode::Mid), Time(23_437_500), "29,296.875 B");
    leaf.via(None).at(us(5));
    let base = us(5) + us(2);
    assert_eq!(m.tnl_of(&leaf.cx(), up0, LeafId(1), 1500), base + Time::from_ns(18_750), "toward E: the reported queue");
    assert_eq!(m.tnl_of(&leaf.cx(), up0, LeafId(2), 1500), base, "toward F: nothing reported");
    // A queue beyond the buffer (a shared buffer) saturates the code at 31; an empty one is 0.
    assert_eq!(encode(400_000, 375_000, 5), 31);
    assert_eq!(encode(0, 375_000, 5), 0);
    assert_eq!(encode(11_718, 375_000, 5), 0);
    assert_eq!(encode(11_719, 375_000, 5), 1);
    spine.set_queue_bytes(to_e, 400_000);
    let mut a2 = ack(1, 2, 0, 0);
    spine.via(Some(to_e)).arrival(&mut s0, &mut a2);
    assert_eq!(a2.lb.scratch, 31 | PRESENT);
    // The paper-literal table keeps one value per uplink: a report about F overwrites the one about E.
    let mut lit = Tr::new(&leaf.fabric.facts, &leaf.me, TrParams { spine_table_key: dclb_core::lb::tr::TableKey::Uplink, ..TrParams::default() });
    report_via(&mut lit, &mut leaf, 0, 2, 0, 2 | PRESENT);
    report_via(&mut lit, &mut leaf, 0, 4, 0, 7 | PRESENT);
    assert_eq!(lit.report(0, LeafId(1)), Some(7));
}

#[test]
fn ack_feedback_moves_short_flows_off_a_reported_queue() {
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.buffer_bytes = Some(375_000);
    let mut b = SwitchBench::leaf(&cfg, LeafId(0)).with_rng(4);
    let mut tr = Tr::new(&b.fabric.facts, &b.me, TrParams::default());
    let (up0, up1) = (b.fabric.uplink_port(LeafId(0), 0), b.fabric.uplink_port(LeafId(0), 1));
    let mut seen = [false; 2];
    for f in 0..100 {
        let port = send(&mut tr, &mut b, &mut data(f, 0, 2, 1460));
        seen[(port == up1) as usize] = true;
    }
    assert_eq!(seen, [true, true], "before any report both uplinks tie");
    // Spine 1 reports 100,000 B toward leaf 1: code 8.
    let mut spine = SwitchBench::spine(&cfg, SpineId(1));
    spine.set_queue_bytes(spine.fabric.spine_down_port(SpineId(1), 1), 100_000);
    let mut s1 = Tr::new(&spine.fabric.facts, &spine.me, TrParams::default());
    let mut a = ack(500, 2, 0, 0);
    let from_e = spine.fabric.spine_down_port(SpineId(1), 1);
    spine.via(Some(from_e)).arrival(&mut s1, &mut a);
    assert_eq!(a.lb.scratch, 8 | PRESENT);
    b.via(Some(up1)).arrival(&mut tr, &mut a);
    for f in 100..200 {
        assert_eq!(send(&mut tr, &mut b, &mut data(f, 0, 2, 1460)), up0);
    }
    // With reports that age (stale_us), an old report no longer counts.
    let mut aging = Tr::new(&b.fabric.facts, &b.me, TrParams { stale_us: us(100), ..TrParams::default() });
    report_via(&mut aging, &mut b, 1, 2, 0, 8 | PRESENT);
    b.at(us(101));
    assert_eq!(aging.tnl_of(&b.cx(), up1, LeafId(1), 1500), aging.tnl_of(&b.cx(), up0, LeafId(1), 1500));
}

#[test]
fn spines_with_parallel_links_keep_the_link_index() {
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.links_per_pair = 2;
    cfg.topology.links = vec![LinkOverride { leaf: 1, spine: 0, link: Some(1), delay_us: Some(9.0), ..Default::default() }];
    let mut spine = SwitchBench::spine(&cfg, SpineId(0));
    let mut s0 = Tr::new(&spine.fabric.facts, &spine.me, TrParams::default());
    let cands = spine.candidates_to_leaf(LeafId(1));
    for link in 0..2 {
        let from = spine.fabric.spine_down_port(SpineId(0), link);
        let mut p = data(1, 0, 2, 1460);
        let d = spine.via(Some(from)).choose(&mut s0, &mut p, &cands);
        assert_eq!(d, Decision::Forward(spine.fabric.spine_down_port(SpineId(0), 2 + link)));
    }
    // The leaf's TNL uses the delay of the link the spine will take: uplink 1 is spine 0's link 1 (9 µs down).
    let mut leaf = SwitchBench::leaf(&cfg, LeafId(0));
    let tr = Tr::new(&leaf.fabric.facts, &leaf.me, TrParams::default());
    let (u0, u1) = (leaf.fabric.uplink_port(LeafId(0), 0), leaf.fabric.uplink_port(LeafId(0), 1));
    assert_eq!(tr.tnl_of(&leaf.cx(), u0, LeafId(1), 1500), us(2));
    assert_eq!(tr.tnl_of(&leaf.cx(), u1, LeafId(1), 1500), us(10));
}

// ---------------------------------------------------------------------------------------------------------
// End to end

/// The paper's motivation fabric (L35): 2 leaves x 10 spines, 10 hosts per leaf, 1 Gbps, 25 µs links,
/// 250-packet buffers, DCTCP K = 20 packets; spines 5..9 are bad: their leaf-spine links take 150 µs, so a
/// bad path's RTT is 3.5 x the good one's (700 vs 200 µs).
fn motivation(scheme: &str) -> Config {
    let mut c = fabric(2, 10, 10);
    c.lb.scheme = scheme.into();
    let t = &mut c.topology;
    t.host_rate_gbps = 1.0;
    t.fabric_rate_gbps = 1.0;
    t.host_delay_us = 25.0;
    t.fabric_delay_us = 25.0;
    t.queue_unit = QueueUnit::Packets;
    t.buffer_packets = Some(250);
    t.ecn_k_packets = Some(20.0);
    for spine in 5..10 {
        for leaf in 0..2 {
            t.links.push(override_link(leaf, spine, 150.0));
        }
    }
    c
}

/// `n` flows from hosts 0..9 to hosts 10..19, Poisson starts (mean gap 1 ms), sizes from `size(i, draw)`.
fn group_flows(n: u32, seed: u64, size: impl Fn(u64) -> u64) -> Vec<(f64, u32, u32, u64)> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = 0.0;
    (0..n)
        .map(|_| {
            t += -(1.0 - (next() % 1_000_000) as f64 / 1e6).ln() * 1000.0;
            let (src, dst) = ((next() % 10) as u32, 10 + (next() % 10) as u32);
            (t, src, dst, size(next()))
        })
        .collect()
}

fn with_flows(mut c: Config, flows: &[(f64, u32, u32, u64)]) -> Config {
    c.sources = vec![listed(flows, TransportKind::Dctcp)];
    c
}

fn short_mean_fct(r: &Results) -> f64 {
    let sizes = r.flows.u64s("size_bytes");
    let f: Vec<f64> = (0..sizes.len()).filter(|&i| sizes[i] < 100_000).map(|i| fct(r, i)).collect();
    f.iter().sum::<f64>() / f.len() as f64
}

#[test]
fn tr_does_not_reorder_on_paths_differing_3_5x_where_rps_does() {
    // 20 flows of 200..2,000 full segments: every packet is full size.
    let flows = group_flows(20, 7, |d| 1460 * (200 + d % 1801));
    let data_packets: u64 = flows.iter().map(|f| f.3 / 1460).sum();
    let tr = run(&with_flows(motivation("tr"), &flows));
    let rps = run(&with_flows(motivation("rps"), &flows));
    assert_eq!(tr.stats.flows_completed, 20);
    assert_eq!(rps.stats.flows_completed, 20);
    assert_eq!(sum(&tr, "out_of_order"), 0, "TR: out-of-order arrivals");
    assert_eq!(sum(&tr, "spurious_retransmissions"), 0);
    let ooo = sum(&rps, "out_of_order");
    assert!(ooo * 100 > data_packets, "RPS: {ooo} of {data_packets} data packets out of order");
    assert!(sum(&rps, "spurious_retransmissions") > 0);
    // TR used both kinds of spine (per-packet, not pinned to the good half) and the filter did work.
    let rows = uplink_rows(&tr);
    let bad: u64 = rows.iter().map(|r| r[5..].iter().sum::<u64>()).sum();
    assert!(bad > 0, "some traffic crossed the slow spines");
    let excluded = tr.switches.u64s("tr_excluded")[0];
    assert!(excluded > 0, "the order filter excluded uplinks");
    // The overhead columns exist for every switch.
    assert_eq!(tr.switches.u64s("tr_peak_state_bytes").len(), 12);
    assert!(tr.switches.u64s("decisions")[0] > 0);
}

#[test]
fn unequal_segments_need_the_serialisation_term_for_strict_order() {
    // Data-mining-like sizes that are not whole segments: each flow ends with a short packet, which Eq. 1
    // (no own serialisation) can let overtake its predecessor by up to two full-packet times (24 µs at 1 Gbps).
    let flows = group_flows(60, 11, |d| if d % 10 < 8 { 200 + d % 9_800 } else { 100_000 + d % 900_000 });
    let data_packets: u64 = flows.iter().map(|f| f.3.div_ceil(1460)).sum();
    let paper = run(&with_flows(motivation("tr"), &flows));
    let mut strict = with_flows(motivation("tr"), &flows);
    strict.lb.params.insert("tnl_serialisation".into(), serde_json::json!(true));
    let strict = run(&strict);
    let rps = run(&with_flows(motivation("rps"), &flows));
    let (p, s, r) = (sum(&paper, "out_of_order"), sum(&strict, "out_of_order"), sum(&rps, "out_of_order"));
    assert_eq!(s, 0, "with its own serialisation in TNL, nothing overtakes");
    // Eq. 1 as printed: only a flow's short last segment overtakes, and at most the two packets before it
    // (it gains 2 x (12 - its own) µs of serialisation, a full packet takes 12 µs): no spurious retransmit.
    let per_flow = paper.flows.u64s("out_of_order");
    assert!(per_flow.iter().all(|&o| o <= 2), "{per_flow:?}");
    assert!(p > 0 && p * 50 < data_packets, "paper formula: {p} of {data_packets} out of order");
    assert!(r > 20 * p.max(1), "RPS: {r}");
    assert_eq!(sum(&paper, "spurious_retransmissions"), 0);
    assert_eq!(sum(&strict, "spurious_retransmissions"), 0);
    // Order costs short flows next to nothing: a last segment that must not overtake follows its predecessor on
    // the same uplink. (Without the floor on that uplink's TNL, a segment under half a packet found every good
    // uplink unsafe and crossed a 3.5x slower spine: short AFCT +40 % here.)
    let (sp, ss) = (short_mean_fct(&paper), short_mean_fct(&strict));
    assert!(ss < 1.05 * sp, "short AFCT: {ss:.0} µs with serialisation vs {sp:.0} µs without");
    // Short flows finish faster than under ECMP, which hashes half of them onto 3.5x slower paths.
    let ecmp = run(&with_flows(motivation("ecmp"), &flows));
    let (t, e) = (short_mean_fct(&paper), short_mean_fct(&ecmp));
    assert!(t < 0.8 * e, "short AFCT: TR {t:.0} µs vs ECMP {e:.0} µs");
}

#[test]
fn a_lone_long_flow_spreads_per_packet_and_stays_put_per_flowlet() {
    // 2 x 4 at 10 Gbps, symmetric, one 4 MB DCTCP flow: per packet (L87) its packets go to whichever idle uplink
    // predicts the earliest arrival, so all four carry it; per flowlet it keeps one uplink while it sends
    // without a gap of one base RTT (8 µs).
    let mut cfg = fabric(2, 4, 2);
    cfg.lb.scheme = "tr".into();
    cfg.sources = vec![listed(&[(0.0, 0, 2, 4_000_000)], TransportKind::Dctcp)];
    let shares = |cfg: &Config| -> Vec<f64> {
        let r = run(cfg);
        assert_eq!(r.stats.flows_completed, 1);
        assert_eq!(sum(&r, "out_of_order"), 0);
        let row = &uplink_rows(&r)[0];
        let total: u64 = row.iter().sum();
        row.iter().map(|&b| b as f64 / total as f64).collect()
    };
    let per_packet = shares(&cfg);
    assert!(per_packet.iter().all(|&s| s > 0.1), "per packet: {per_packet:?}");
    cfg.lb.params.insert("long_granularity".into(), serde_json::json!("flowlet"));
    let per_flowlet = shares(&cfg);
    assert!(per_flowlet.iter().any(|&s| s > 0.9), "per flowlet: {per_flowlet:?}");
}

// --- Long flows and short flows, end to end, with a recording wrapper around leaf 0's balancer.

thread_local! {
    /// Per long-flow packet at leaf 0: (its uplink had short flows, share of leaf 0's uplinks with short flows).
    /// Per test thread: the engine runs in the test's own thread.
    static LONG_SEEN: RefCell<Vec<(bool, f64)>> = const { RefCell::new(Vec::new()) };
    /// Packets that reached a leaf bound for one of its hosts with report bits still set.
    static LEAKED: RefCell<u64> = const { RefCell::new(0) };
}

struct Recorder {
    inner: Tr,
    leaf0: bool,
    long_flow: FlowId,
}

impl SwitchBalancer for Recorder {
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        let d = self.inner.choose(cx, pkt, candidates);
        if self.leaf0 && pkt.kind == PacketKind::Data && pkt.flow == self.long_flow && candidates.len() > 1 {
            if let Decision::Forward(port) = d {
                let now = cx.now;
                let n = cx.facts.uplinks;
                let busy = (0..n).filter(|&u| self.inner.short_flows(now, u) > 0).count();
                let mine = self.inner.short_flows(now, cx.ports.uplink_index(port).unwrap()) > 0;
                LONG_SEEN.with(|v| v.borrow_mut().push((mine, busy as f64 / n as f64)));
            }
        }
        d
    }
    fn on_arrival(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut) {
        self.inner.on_arrival(cx, pkt);
        if cx.me.as_leaf() == Some(cx.facts.leaf_of_host(pkt.dst)) && pkt.lb.scratch != 0 {
            LEAKED.with(|v| *v.borrow_mut() += 1);
        }
    }
    fn on_timer(&mut self, cx: &mut SwitchCx) {
        self.inner.on_timer(cx);
    }
    fn timer_period(&self) -> Option<Time> {
        self.inner.timer_period()
    }
    fn state_bytes(&self) -> usize {
        self.inner.state_bytes()
    }
    fn counters(&self) -> dclb_core::lb::scheme::CounterReport {
        self.inner.counters()
    }
    fn hooks(&self) -> Hooks {
        self.inner.hooks()
    }
}

fn recorded(cfg: &Config) -> Results {
    let spec = SchemeSpec {
        name: "tr-recorded",
        params: TrParams::SPECS,
        install: |cx, p| {
            let p = TrParams::from_params(p);
            per_switch(cx.switches, |s| Recorder { inner: Tr::new(cx.facts, s, p), leaf0: s.as_leaf() == Some(LeafId(0)), long_flow: FlowId(0) })
        },
        ..dclb_core::lb::tr::SPEC
    };
    let mut sim = Simulation::with_scheme(cfg, &spec).expect("valid scenario");
    sim.run_to_end();
    let r = sim.results();
    assert_conserved(&r);
    r
}

#[test]
fn long_flows_keep_out_of_the_way_of_short_flows_end_to_end() {
    // 2 leaves x 4 spines, 10 Gbps, symmetric. Flow 0: 20 MB from host 0 starting at 0; then a 20 KB short
    // flow every 20 µs from 200 µs to 2.2 ms, from the other hosts of leaf 0. T_idle is the 8 µs base RTT,
    // so short flows are present on an uplink only while they send.
    let mut cfg = fabric(2, 4, 8);
    let mut flows = vec![(0.0, 0, 8, 20_000_000)];
    for i in 0..100u32 {
        flows.push((200.0 + 20.0 * i as f64, 1 + i % 7, 9 + i % 7, 20_000));
    }
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg.lb.scheme = "tr".into();
    LONG_SEEN.with(|v| v.borrow_mut().clear());
    let r = recorded(&cfg);
    assert_eq!(r.stats.flows_completed, 101);
    let seen = LONG_SEEN.with(|v| std::mem::take(&mut *v.borrow_mut()));
    // Over the stream period: long-flow packets while some uplink had short flows and another had none.
    let during: Vec<&(bool, f64)> = seen.iter().filter(|(_, f)| *f > 0.0 && *f < 1.0).collect();
    assert!(during.len() > 1000, "{} long-flow packets decided while short flows ran", during.len());
    let on_busy = during.iter().filter(|(m, _)| *m).count() as f64 / during.len() as f64;
    let blind = during.iter().map(|(_, f)| f).sum::<f64>() / during.len() as f64;
    assert!(on_busy < 0.5 * blind, "long packets on uplinks with short flows: {on_busy:.3}; a choice blind to them: {blind:.3}");
    // Short flows complete faster than under ECMP, where the long flow's hash pins an uplink they may share.
    let mut e = cfg.clone();
    e.lb.scheme = "ecmp".into();
    let ecmp = run(&e);
    let (t, x) = (short_mean_fct(&r), short_mean_fct(&ecmp));
    assert!(t < x, "short AFCT: TR {t:.1} µs vs ECMP {x:.1} µs");
}

#[test]
fn hosts_never_see_the_report_bits_and_tables_empty_after_the_run() {
    // Traffic both ways across 3 leaves so that spines stamp ACKs toward every leaf.
    let mut cfg = fabric(3, 2, 4);
    cfg.lb.scheme = "tr".into();
    let flows: Vec<(f64, u32, u32, u64)> = (0..30u32).map(|i| (i as f64 * 30.0, i % 12, (i % 12 + 4 + i % 5) % 12, 30_000 + 50_000 * (i % 4) as u64)).filter(|f| f.1 / 4 != f.2 / 4).collect();
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg.run.horizon_us = Some(40_000.0);
    LEAKED.with(|v| *v.borrow_mut() = 0);
    let r = recorded(&cfg);
    assert_eq!(r.stats.flows_completed as usize, flows.len());
    assert_eq!(LEAKED.with(|v| *v.borrow()), 0, "a host would have seen modified bits");
    let (stamped, reports) = (sum_col(&r, "tr_stamped"), sum_col(&r, "tr_reports"));
    assert!(stamped > 0 && stamped == reports, "spines stamped {stamped}, leaves read {reports}");
    // Long after the last flow, every flow entry and presence record is gone: a leaf holds only its fixed tables.
    let bench = SwitchBench::leaf(&cfg, LeafId(0));
    let fresh = Tr::new(&bench.fabric.facts, &bench.me, TrParams::default()).state_bytes() as u64;
    let kinds = r.switches.strs("kind");
    for (i, &s) in r.switches.u64s("state_bytes").iter().enumerate() {
        if kinds[i] == "leaf" {
            assert_eq!(s, fresh, "leaf {i}");
        }
    }
    assert!(r.switches.u64s("tr_peak_state_bytes").iter().any(|&s| s > fresh));
}

fn sum_col(r: &Results, col: &str) -> u64 {
    r.switches.u64s(col).iter().sum()
}

#[test]
fn runs_are_deterministic() {
    let flows = group_flows(30, 3, |d| 1000 + d % 300_000);
    let cfg = with_flows(motivation("tr"), &flows);
    let (a, b) = (run(&cfg), run(&cfg));
    assert_eq!(fct_bits(&a), fct_bits(&b));
    assert_eq!(a.switches.u64s("tr_excluded"), b.switches.u64s("tr_excluded"));
}
