//! LBT: the three classes and their rules on crafted queue states (short: shortest queue, kept per flow; long:
//! longest queue below Q1; BE: longest below Q2; all at or above: longest of all), the class switch at
//! 100 KB, the thresholds' update from measured load, and an end-to-end run whose decision trace obeys the
//! rules where ECMP's does not.
//!
//! How the tests were checked against broken rules (each tried once in `lbt.rs`, then reverted; the tests
//! that failed are listed):
//! * short flows to the longest instead of the shortest queue: the short-flow, 100 KB and expiry tests, the
//!   live-run trace and the end-to-end queueing comparison;
//! * short flows re-placed on every packet (no pinning): the short-flow and expiry tests and the trace;
//! * long/BE packets to the shortest queue below the threshold instead of the longest: the long, sticky,
//!   all-above, BE and 100 KB tests and the trace;
//! * a queue equal to the threshold counted as within it (`<=` for `<`), in the filter: the long, sticky,
//!   all-above and BE tests and the trace; in the sticky test alone: the sticky and BE tests and the trace;
//! * all-above rule replaced by the shortest queue: the all-above test and the trace;
//! * BE routed with Q1 instead of Q2: the BE test;
//! * class boundary `>=` instead of `>` (a flow of exactly 100,000 B turns long): the 100 KB test;
//! * thresholds left at q_min instead of following the measured load: the load test and the trace;
//! * `short_placement = first_data` ignored (the SYN makes the entry either way): the placement test;
//! * `short_priority` stamping long packets at the lowest level (as BE) instead of level 1: the priority
//!   test; stamping at every hop without a choice instead of the first: the priority test; no stamping
//!   where there is no choice (`choose_single` off): the priority test; no stamping where LBT decides:
//!   the priority test and the end-to-end priority run.

mod common;
use common::*;
use dclb_core::config::{Config, TransportKind};
use dclb_core::lb::ecmp::Ecmp;
use dclb_core::lb::lbt::{thresholds, Bounds, Class, Lbt, LbtParams, LongMode, Measured, ShortGranularity, ShortPlacement, ThresholdModel};
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::lb::{Decision, Hooks, Installed, PacketMut, Placement, SchemeSpec, SwitchBalancer, SwitchCx};
use dclb_core::packet::{class, Packet, PacketKind};
use dclb_core::rng::Rng;
use dclb_core::units::Time;
use dclb_core::Simulation;
use std::cell::RefCell;
use std::collections::HashMap;

/// One full-size packet on the wire, the unit the crafted queues are written in.
const PKT: u64 = 1500;

/// Leaf 0 of a 2-leaf, 4-spine fabric at 10 Gbps: its four uplinks towards leaf 1 are the candidates.
struct Bench {
    bench: SwitchBench,
    cands: Vec<PortId>,
    dst: HostId,
}

impl Bench {
    fn new() -> Bench {
        let bench = SwitchBench::leaf(&fabric(2, 4, 2), LeafId(0));
        let cands = bench.candidates_to_leaf(LeafId(1));
        assert_eq!(cands.len(), 4);
        let dst = bench.host_on_leaf(LeafId(1));
        Bench { bench, cands, dst }
    }
    fn lbt(&self, p: LbtParams) -> Lbt {
        Lbt::new(p, &self.bench.me, &self.bench.fabric.facts)
    }
    /// Queues of the four uplinks, in full-size packets.
    fn set_queues(&mut self, pkts: [u64; 4]) {
        for (i, &p) in self.cands.iter().enumerate() {
            self.bench.set_queue_bytes(p, pkts[i] * PKT);
        }
    }
    /// Index (0..4) of the uplink a packet went to.
    fn idx(&self, port: PortId) -> usize {
        self.cands.iter().position(|&c| c == port).unwrap()
    }
    /// A data packet of flow `flow` carrying bytes `seq..seq + payload`; `be` sets the best-effort bit.
    fn data(&self, flow: u32, seq: u64, payload: u32, be: bool) -> Packet {
        let mut p = Packet::new(PacketKind::Data, FlowId(flow), HostId(0), self.dst);
        p.sport = 1000 + flow as u16;
        p.dport = 80;
        p.seq = seq;
        p.payload = payload;
        p.wire_bytes = payload + 40;
        if be {
            p.lb.class |= class::BEST_EFFORT;
        }
        p
    }
    /// Sends `pkt` through the balancer; returns the uplink index it took.
    fn send(&mut self, lb: &mut Lbt, mut pkt: Packet) -> usize {
        let cands = self.cands.clone();
        let port = self.bench.forward(lb, &mut pkt, &cands);
        self.idx(port)
    }
    /// A long packet (bytes beyond 100 KB) of `flow`.
    fn long(&mut self, lb: &mut Lbt, flow: u32) -> usize {
        let p = self.data(flow, 200_000, 1460, false);
        self.send(lb, p)
    }
    fn be(&mut self, lb: &mut Lbt, flow: u32) -> usize {
        let p = self.data(flow, 0, 1460, true);
        self.send(lb, p)
    }
}

fn params(f: impl FnOnce(&mut LbtParams)) -> LbtParams {
    let mut p = LbtParams::default();
    f(&mut p);
    p
}

#[test]
fn defaults_are_the_papers() {
    let p = LbtParams::default();
    assert_eq!(p.short_threshold_bytes, 100_000);
    assert_eq!(p.period_us, Time::from_us(500));
    assert_eq!(p.max_window_bytes, 65_536);
    assert_eq!(p.rtt_us, Time::from_us(100));
    assert_eq!((p.threshold_model, p.long_mode, p.short_granularity), (ThresholdModel::Mg1Backlog, LongMode::Sticky, ShortGranularity::Flow));
    // A leaf's bounds come from its uplinks: Q1 up to the ECN threshold (65 packets), Q2 up to the buffer
    // less one packet (255 packets); both start at one packet.
    let mut b = Bench::new();
    let mut lb = b.lbt(p);
    b.set_queues([0; 4]);
    b.long(&mut lb, 1);
    let g = lb.group(0).unwrap();
    assert_eq!(g.bounds, Bounds { q_min: 1500, q1_max: 97_500, q2_max: 382_500 });
    assert_eq!((g.q1, g.q2, g.k), (1500, 1500, 4));
    assert!((g.capacity - 5e9).abs() < 1.0, "four 10 Gbps uplinks = 5e9 B/s");
    assert_eq!(lb.timer_period(), Some(Time::from_us(500)));
}

#[test]
fn short_flow_takes_the_shortest_queue_and_keeps_it() {
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    b.set_queues([5, 2, 7, 2]);
    let mut used = [0u32; 4];
    for f in 0..1000 {
        let p = b.data(f, 0, 1460, false);
        used[b.send(&mut lb, p)] += 1;
        assert_eq!(lb.last_decision().unwrap().class, Class::Short);
    }
    assert_eq!((used[0], used[2]), (0, 0), "never a longer queue: {used:?}");
    assert!((400..=600).contains(&used[1]) && (400..=600).contains(&used[3]), "ties split at random: {used:?}");

    // The queues change completely: the flows already placed keep their ports while short.
    let p = b.data(7, 0, 1460, false);
    let first = b.send(&mut lb, p);
    b.set_queues([0, 9, 9, 9]);
    for k in 1..60u64 {
        let p = b.data(7, k * 1460, 1460, false);
        assert_eq!(b.send(&mut lb, p), first, "packet {k} of a short flow moved");
    }
    // A new short flow takes the now shortest queue.
    let p = b.data(500_000, 0, 1460, false);
    assert_eq!(b.send(&mut lb, p), 0);

    // Control: per-packet granularity follows the shortest queue with every packet.
    let mut lb = b.lbt(params(|p| p.short_granularity = ShortGranularity::Packet));
    b.set_queues([5, 2, 7, 9]);
    let p = b.data(9, 0, 1460, false);
    assert_eq!(b.send(&mut lb, p), 1);
    b.set_queues([0, 9, 9, 9]);
    let p = b.data(9, 1460, 1460, false);
    assert_eq!(b.send(&mut lb, p), 0);
}

#[test]
fn long_flow_takes_the_longest_queue_below_q1() {
    for mode in [LongMode::Sticky, LongMode::PerPacket] {
        let mut b = Bench::new();
        let mut lb = b.lbt(params(|p| p.long_mode = mode));
        lb.set_thresholds(0, 10 * PKT, 20 * PKT);
        // 9 is the longest queue below 10; 12 is above.
        b.set_queues([12, 8, 3, 9]);
        assert_eq!(b.long(&mut lb, 1), 3, "{mode:?}");
        let d = lb.last_decision().unwrap();
        assert_eq!((d.class, d.threshold, d.all_above), (Class::Long, 10 * PKT, false));
        // A queue equal to Q1 is not within it: 9 and 9 tie, never 10.
        let mut used = [0u32; 4];
        for f in 100..400 {
            b.set_queues([10, 9, 9, 0]);
            used[b.long(&mut lb, f)] += 1;
        }
        assert_eq!((used[0], used[3]), (0, 0), "{mode:?}: {used:?}");
        assert!(used[1] > 100 && used[2] > 100, "{mode:?}: ties split at random: {used:?}");
    }
    // Per packet, a flow follows the longest queue below Q1 packet by packet.
    let mut b = Bench::new();
    let mut lb = b.lbt(params(|p| p.long_mode = LongMode::PerPacket));
    lb.set_thresholds(0, 10 * PKT, 20 * PKT);
    b.set_queues([2, 8, 3, 9]);
    assert_eq!(b.long(&mut lb, 1), 3);
    b.set_queues([2, 8, 3, 1]);
    assert_eq!(b.long(&mut lb, 1), 1);
}

#[test]
fn sticky_long_flow_stays_until_its_queue_reaches_q1() {
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    lb.set_thresholds(0, 10 * PKT, 20 * PKT);
    b.set_queues([5, 3, 0, 1]);
    assert_eq!(b.long(&mut lb, 1), 0, "placed on the longest below Q1");
    // Another port grows longer, still below Q1: the flow stays.
    b.set_queues([5, 9, 0, 1]);
    assert_eq!(b.long(&mut lb, 1), 0);
    b.set_queues([9, 9, 0, 1]);
    assert_eq!(b.long(&mut lb, 1), 0);
    // Its port reaches Q1: it moves to the longest queue still below, and keeps that one.
    b.set_queues([10, 9, 0, 1]);
    assert_eq!(b.long(&mut lb, 1), 1);
    assert_eq!(lb.last_decision().unwrap().previous.map(|p| b.idx(p)), Some(0));
    b.set_queues([3, 9, 0, 8]);
    assert_eq!(b.long(&mut lb, 1), 1);
    assert_eq!(lb.counters().get("moves_long"), 1);
}

/// A per-class counter of `lb` (`<name>_short`, `_long`, `_be`).
fn per_class(lb: &Lbt, name: &str) -> [u64; 3] {
    ["short", "long", "be"].map(|class| lb.counters().get(&format!("{name}_{class}")))
}

#[test]
fn a_move_onto_a_shorter_queue_is_counted_as_a_likely_reordering() {
    // A sticky move leaves a queue at or above Q1 for one below it: always a shorter queue, so the flow's
    // packets still queued on the old port are overtaken. The short->long switch from the shortest queue
    // to the longest below Q1 is not onto a shorter queue; a per-packet move onto a longer queue is not.
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    lb.set_thresholds(0, 10 * PKT, 20 * PKT);
    b.set_queues([0, 6, 8, 12]);
    for k in 0..101u64 {
        let p = b.data(1, k * 1000, 1000, false);
        b.send(&mut lb, p);
    }
    assert_eq!((lb.counters().get("to_long"), per_class(&lb, "to_shorter")), (1, [0, 0, 0]), "0 -> 8 packets is not shorter");
    b.set_queues([0, 6, 10, 12]);
    assert_eq!(b.long(&mut lb, 1), 1, "its port reached Q1: to 6, the longest below");
    assert_eq!((lb.counters().get("moves_long"), per_class(&lb, "to_shorter")), (1, [0, 1, 0]));
    let mut lb = b.lbt(params(|p| p.long_mode = LongMode::PerPacket));
    lb.set_thresholds(0, 10 * PKT, 20 * PKT);
    b.set_queues([3, 8, 0, 0]);
    assert_eq!(b.long(&mut lb, 2), 1);
    b.set_queues([9, 8, 0, 0]);
    assert_eq!(b.long(&mut lb, 2), 0);
    assert_eq!((lb.counters().get("moves_long"), per_class(&lb, "to_shorter")), (1, [0, 0, 0]), "8 -> 9 packets is longer");
    b.set_queues([9, 0, 5, 0]);
    assert_eq!(b.long(&mut lb, 2), 0);
    b.set_queues([10, 0, 5, 0]);
    assert_eq!(b.long(&mut lb, 2), 2);
    assert_eq!((lb.counters().get("moves_long"), per_class(&lb, "to_shorter")), (2, [0, 1, 0]));
}

#[test]
fn a_run_reports_lbt_counters() {
    // The counters reach the run statistics under lbt_ names. Two long flows at leaf 0 each turn long once;
    // short flows never move; every sticky move that is not an all-above move lands on a shorter queue.
    let mut cfg = mixed();
    cfg.lb.scheme = "lbt".into();
    let r = run(&cfg);
    let c = |n: &str| *r.stats.scheme_counters.get(n).unwrap_or_else(|| panic!("no counter {n}: {:?}", r.stats.scheme_counters));
    assert_eq!(c("lbt_to_long"), 2);
    assert_eq!((c("lbt_moves_short"), c("lbt_to_shorter_short")), (0, 0));
    assert!(c("lbt_moves_long") > 10, "{:?}", r.stats.scheme_counters);
    assert!(c("lbt_to_shorter_long") + c("lbt_all_above_long") >= c("lbt_moves_long"), "{:?}", r.stats.scheme_counters);
    assert!(c("lbt_decisions_long") > 1000 && c("lbt_periods") > 0);
}

#[test]
fn every_queue_at_or_above_the_threshold_sends_to_the_longest_queue() {
    for mode in [LongMode::Sticky, LongMode::PerPacket] {
        let mut b = Bench::new();
        let mut lb = b.lbt(params(|p| p.long_mode = mode));
        lb.set_thresholds(0, 10 * PKT, 20 * PKT);
        b.set_queues([12, 15, 11, 10]);
        assert_eq!(b.long(&mut lb, 1), 1, "{mode:?}");
        assert!(lb.last_decision().unwrap().all_above);
        b.set_queues([25, 30, 22, 21]);
        assert_eq!(b.be(&mut lb, 2), 1, "{mode:?}: BE with every queue at or above Q2");
        assert_eq!([lb.counters().get("all_above_long"), lb.counters().get("all_above_be")], [1, 1]);
    }
    // Sticky: a flow whose port is among the longest stays there, even when another port ties.
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    lb.set_thresholds(0, 10 * PKT, 20 * PKT);
    b.set_queues([3, 5, 0, 0]);
    assert_eq!(b.long(&mut lb, 1), 1);
    for _ in 0..50 {
        b.set_queues([20, 20, 12, 10]);
        assert_eq!(b.long(&mut lb, 1), 1);
    }
    // ... and moves to the longest when its port is not.
    b.set_queues([21, 20, 12, 10]);
    assert_eq!(b.long(&mut lb, 1), 0);
}

#[test]
fn best_effort_uses_q2() {
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    lb.set_thresholds(0, 10 * PKT, 20 * PKT);
    b.set_queues([15, 5, 0, 25]);
    assert_eq!(b.long(&mut lb, 1), 1, "long: the longest below Q1 = 10");
    assert_eq!(b.be(&mut lb, 2), 0, "BE: the longest below Q2 = 20");
    let d = lb.last_decision().unwrap();
    assert_eq!((d.class, d.threshold), (Class::BestEffort, 20 * PKT));
    // A tiny BE flow is BE from its first packet (no short phase), and the flag wins over size.
    let p = b.data(3, 0, 300, true);
    assert_eq!(b.send(&mut lb, p), 0);
    assert_eq!(lb.last_decision().unwrap().class, Class::BestEffort);
    // BE flows move at Q2, not at Q1.
    b.set_queues([19, 5, 0, 25]);
    assert_eq!(b.be(&mut lb, 2), 0);
    b.set_queues([20, 5, 0, 25]);
    assert_eq!(b.be(&mut lb, 2), 1);
}

#[test]
fn a_flow_turns_long_after_100_kb() {
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    lb.set_thresholds(0, 10 * PKT, 20 * PKT);
    b.set_queues([0, 6, 8, 12]);
    // 250 KB in 1,000-byte segments: bytes 1..=100,000 are short and pinned to the shortest queue (port 0).
    let mut classes = Vec::new();
    let mut ports = Vec::new();
    for k in 0..250u64 {
        let p = b.data(1, k * 1000, 1000, false);
        ports.push(b.send(&mut lb, p));
        classes.push(lb.last_decision().unwrap().class);
    }
    assert!(classes[..100].iter().all(|&c| c == Class::Short), "seq + payload <= 100,000 is short");
    assert!(classes[100..].iter().all(|&c| c == Class::Long), "the packet carrying byte 100,001 is long");
    assert!(ports[..100].iter().all(|&p| p == 0), "short phase pinned to the shortest queue");
    // The packet that crosses 100 KB is placed afresh: the longest queue below Q1 (8 packets), then stays.
    assert!(ports[100..].iter().all(|&p| p == 2), "{:?}", &ports[95..110]);
    assert_eq!(lb.counters().get("to_long"), 1);
    // A retransmission of the first bytes stays long.
    let p = b.data(1, 0, 1000, false);
    assert_eq!(b.send(&mut lb, p), 2);
    assert_eq!(lb.last_decision().unwrap().class, Class::Long);
    // A flow of exactly 100,000 bytes never turns long.
    for k in 0..100u64 {
        let p = b.data(2, k * 1000, 1000, false);
        b.send(&mut lb, p);
        assert_eq!(lb.last_decision().unwrap().class, Class::Short);
    }
    // Pure ACKs are routed as short flows of their own and never counted as load.
    let mut ack = Packet::new(PacketKind::Ack, FlowId(1), HostId(0), b.dst);
    ack.seq = 5_000_000;
    ack.wire_bytes = 40;
    let cands = b.cands.clone();
    b.bench.forward(&mut lb, &mut ack, &cands);
    assert_eq!(lb.last_decision().unwrap().class, Class::Short);
    let m = lb.group(0).unwrap().measured;
    assert_eq!(m.bytes, [200 * 1040, 151 * 1040, 0], "data bytes per class, no ACK bytes: {m:?}");
    assert_eq!(m.flows, [2, 1, 0], "distinct flows per class this period");
}

#[test]
fn q1_rises_with_measured_load() {
    // Drive the leaf with long data at a given fraction of its four 10 Gbps uplinks for one period, then let
    // the timer recompute the thresholds.
    let run = |load: f64, be_load: f64| -> (u64, u64, f64, f64) {
        let mut b = Bench::new();
        let mut lb = b.lbt(LbtParams::default());
        b.set_queues([0; 4]);
        let per_period = 4.0 * 1.25e9 * 500e-6; // bytes the group can carry in one period
        let n = (load * per_period / 1500.0).round() as u64;
        let nb = (be_load * per_period / 1500.0).round() as u64;
        // An ACK first: it creates the group but adds no load.
        let mut ack = Packet::new(PacketKind::Ack, FlowId(0), HostId(0), b.dst);
        ack.wire_bytes = 40;
        let cands = b.cands.clone();
        b.bench.forward(&mut lb, &mut ack, &cands);
        for k in 0..n {
            b.bench.at(Time::from_ns(k * 100));
            b.long(&mut lb, (k % 8) as u32);
        }
        for k in 0..nb {
            b.be(&mut lb, 100 + (k % 8) as u32);
        }
        let g = lb.group(0).unwrap();
        assert_eq!((g.q1, g.q2), (1500, 1500), "before the first update both thresholds are q_min");
        b.bench.at(Time::from_us(500));
        b.bench.timer(&mut lb);
        let g = lb.group(0).unwrap();
        assert_eq!(g.measured, Measured { k: 4, capacity: g.capacity, ..Measured::default() }, "counters reset every period");
        (g.q1, g.q2, g.l1, g.l2)
    };
    let expected = |l: f64| ((65_536.0 * l / (2.0 * (1.0 - l))).round() as u64).clamp(1500, 97_500);
    let mut prev = 0;
    for load in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7] {
        let (q1, q2, l1, l2) = run(load, 0.0);
        assert!((l1 - load).abs() < 1e-3 && l1 == l2, "measured load {l1} for {load}");
        assert_eq!(q1, expected(l1), "Q1 = W l / (2 (1 - l)) at load {load}");
        assert!(q1 > prev, "Q1 rises with load: {q1} after {prev} at {load}");
        assert_eq!(q2, q1, "no BE traffic: Q2 = Q1");
        prev = q1;
    }
    assert_eq!(run(0.8, 0.0).0, 97_500, "bounded by the ECN threshold");
    assert_eq!(run(1.2, 0.0).0, 97_500, "overload gives the upper bound");
    assert_eq!(run(0.0, 0.0).0, 1_500, "no load gives the lower bound");
    // BE traffic counts in l2 only: Q2 rises above Q1.
    let (q1, q2, l1, l2) = run(0.3, 0.3);
    assert!((l2 - 0.6).abs() < 1e-3 && (l1 - 0.3).abs() < 1e-3);
    assert_eq!((q1, q2), (expected(l1), (65_536.0 * l2 / (2.0 * (1.0 - l2))).round() as u64));
    assert!(q2 > q1);
}

/// The paper's eqs 8–11 (units repaired) on worked cases: 9 paths at 10 Gbps, t = 500 µs, W = 64 KB,
/// m = 7,300 B, R = 100 µs, γ = 2 (values computed independently of the code).
#[test]
fn paper_threshold_model_on_worked_cases() {
    let p = params(|p| p.threshold_model = ThresholdModel::Paper);
    let mg1 = LbtParams::default();
    let bounds = Bounds { q_min: 1500, q1_max: 97_500, q2_max: 382_500 };
    let t = Time::from_us(500);
    let m = |bytes: [u64; 3], p_s: u32, links: [u32; 3]| Measured { bytes, flows: [p_s, 3, (bytes[2] > 0) as u32], links, k: 9, capacity: 9.0 * 1.25e9 };
    // (measured, paper Q1, paper Q2, mg1 Q1, mg1 Q2)
    let rows = [
        (m([20_000, 2_800_000, 0], 2, [1, 5, 0]), 60_005, 60_005, 32_943, 32_943),
        (m([10_000, 1_690_000, 0], 1, [1, 3, 0]), 97_500, 97_500, 14_193, 14_193),
        (m([10_000, 1_690_000, 0], 1, [2, 3, 0]), 97_500, 97_500, 14_193, 14_193),
        (m([10_000, 3_940_000, 0], 1, [1, 7, 0]), 18_140, 18_140, 77_274, 77_274),
        (m([10_000, 2_800_000, 0], 1, [0, 5, 0]), 1_500, 1_500, 32_710, 32_710),
        (m([20_000, 2_800_000, 400_000], 2, [1, 5, 1]), 97_500, 382_500, 32_943, 43_872),
    ];
    for (i, (m, pq1, pq2, gq1, gq2)) in rows.into_iter().enumerate() {
        let a = thresholds(&p, &m, bounds, t, (1500, 1500), 10_000.0);
        assert_eq!((a.q1, a.q2), (pq1, pq2), "paper row {i}");
        let b = thresholds(&mg1, &m, bounds, t, (1500, 1500), 10_000.0);
        assert_eq!((b.q1, b.q2), (gq1, gq2), "mg1_backlog row {i}");
    }
    // No long (BE) traffic keeps the previous Q1 (Q2), Q2 raised to at least Q1.
    let none = Measured { bytes: [10_000, 0, 0], flows: [1, 0, 0], links: [1, 0, 0], k: 9, capacity: 9.0 * 1.25e9 };
    let a = thresholds(&p, &none, bounds, t, (40_000, 30_000), 10_000.0);
    assert_eq!((a.q1, a.q2), (40_000, 40_000));
    // A target at or below the transmission time alone gives the upper bound.
    let tight = params(|p| {
        p.threshold_model = ThresholdModel::Paper;
        p.fct_target_us = Time::from_ns(1);
    });
    assert_eq!(thresholds(&tight, &rows[0].0, bounds, t, (1500, 1500), 10_000.0).q1, 97_500);
    // Random inputs: always within bounds, Q2 >= Q1, in both models.
    let mut r = Rng::new(3);
    for _ in 0..20_000 {
        let m = Measured {
            bytes: [r.below(10_000_000) as u64, r.below(10_000_000) as u64, r.below(10_000_000) as u64],
            flows: [r.below(50) as u32, r.below(50) as u32, r.below(50) as u32],
            links: [r.below(10) as u32, r.below(10) as u32, r.below(10) as u32],
            k: 1 + r.below(9) as u32,
            capacity: r.below(10) as f64 * 1.25e9,
        };
        let prev = (1500 + r.below(100_000) as u64, 1500 + r.below(400_000) as u64);
        for model in [&p, &mg1] {
            let th = thresholds(model, &m, bounds, t, prev, 64.0 + r.below(100_000) as f64);
            assert!((1500..=97_500).contains(&th.q1) && (th.q1..=382_500).contains(&th.q2), "{m:?} -> {th:?}");
            assert!(th.x_s.is_finite() && th.l1.is_finite() && th.l2 >= th.l1);
        }
    }
}

#[test]
fn an_idle_flow_entry_expires_and_is_placed_afresh() {
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    b.set_queues([3, 0, 3, 3]);
    let p = b.data(1, 0, 1460, false);
    assert_eq!(b.send(&mut lb, p), 1);
    assert_eq!(lb.flow_entries(), 1);
    b.set_queues([0, 3, 3, 3]);
    // 900 µs later the entry still holds: pinned.
    b.bench.at(Time::from_us(500));
    b.bench.timer(&mut lb);
    b.bench.at(Time::from_us(900));
    let p = b.data(1, 1460, 1460, false);
    assert_eq!(b.send(&mut lb, p), 1);
    // After 2 ms without a packet the sweep has dropped it and the next packet takes the shortest queue.
    for t in [1000, 1500, 2000, 2500, 3000] {
        b.bench.at(Time::from_us(t));
        b.bench.timer(&mut lb);
    }
    assert_eq!(lb.flow_entries(), 0);
    b.bench.at(Time::from_us(3000));
    let p = b.data(1, 2920, 1460, false);
    assert_eq!(b.send(&mut lb, p), 0);
}

#[test]
fn a_spine_with_parallel_links_keeps_one_group_per_destination_leaf() {
    let mut cfg = fabric(3, 2, 2);
    cfg.topology.links_per_pair = 2;
    let mut b = SwitchBench::spine(&cfg, SpineId(0));
    let mut lb = Lbt::new(LbtParams::default(), &b.me, &b.fabric.facts);
    for leaf in [LeafId(1), LeafId(2)] {
        let cands = b.candidates_to_leaf(leaf);
        assert_eq!(cands.len(), 2);
        let mut p = Packet::new(PacketKind::Data, FlowId(leaf.0), HostId(0), b.host_on_leaf(leaf));
        p.payload = 1460;
        p.wire_bytes = 1500;
        b.forward(&mut lb, &mut p, &cands);
    }
    assert!(lb.group(0).is_none());
    for leaf in [1, 2] {
        let g = lb.group(leaf).unwrap();
        assert_eq!((g.k, g.measured.bytes[0]), (2, 1500), "leaf {leaf}");
    }
    // Without parallel links a spine never decides: no timer.
    let b = SwitchBench::spine(&fabric(3, 2, 2), SpineId(0));
    assert_eq!(Lbt::new(LbtParams::default(), &b.me, &b.fabric.facts).timer_period(), None);
}

// ---------------------------------------------------------------------------------------------------------
// End to end: a decision trace at the source leaf.

/// One decision at leaf 0: time, flow key, class as the test derives it from the packet, the candidates'
/// queues at that moment, the choice, and (LBT only) the threshold in force and the flow's previous port.
#[derive(Clone, Debug)]
struct Rec {
    at: Time,
    key: u128,
    class: Class,
    queues: Vec<(PortId, u64)>,
    chosen: PortId,
    threshold: u64,
    previous: Option<PortId>,
}

/// Leaf 0's thresholds after one update: (Q1, Q2, l1, l2).
type Tick = (u64, u64, f64, f64);

thread_local! {
    static TRACE: RefCell<Vec<Rec>> = const { RefCell::new(Vec::new()) };
    /// Leaf 0's (Q1, Q2, l1, l2) after every threshold update.
    static THRESHOLDS: RefCell<Vec<Tick>> = const { RefCell::new(Vec::new()) };
}

enum Inner {
    Lbt(Box<Lbt>),
    Ecmp(Ecmp),
}

/// Runs the real balancer; at leaf 0 it records each data decision first.
struct Traced {
    inner: Inner,
    record: bool,
}

impl SwitchBalancer for Traced {
    fn hooks(&self) -> Hooks {
        Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        let queues: Vec<(PortId, u64)> = candidates.iter().map(|&c| (c, cx.ports.queue_bytes(c))).collect();
        let d = match &mut self.inner {
            Inner::Lbt(l) => l.choose(cx, pkt, candidates),
            Inner::Ecmp(e) => e.choose(cx, pkt, candidates),
        };
        if self.record && pkt.payload > 0 {
            let Decision::Forward(chosen) = d else { panic!("LBT never drops") };
            let class = if pkt.lb.class & class::BEST_EFFORT != 0 {
                Class::BestEffort
            } else if pkt.seq + pkt.payload as u64 > 100_000 {
                Class::Long
            } else {
                Class::Short
            };
            let (class, threshold, previous) = match &self.inner {
                Inner::Lbt(l) => {
                    let last = l.last_decision().unwrap();
                    // LBT agrees with the packet's bytes, except that a long flow's retransmitted early bytes stay long.
                    assert!(last.class == class || (last.class, class) == (Class::Long, Class::Short), "LBT says {:?}, the bytes {class:?}", last.class);
                    (last.class, last.threshold, last.previous)
                }
                Inner::Ecmp(_) => (class, 0, None),
            };
            TRACE.with(|t| t.borrow_mut().push(Rec { at: cx.now, key: pkt.five_tuple(), class, queues, chosen, threshold, previous }));
        }
        d
    }
    fn on_timer(&mut self, cx: &mut SwitchCx) {
        if let Inner::Lbt(l) = &mut self.inner {
            l.on_timer(cx);
            if let Some(g) = l.group(0).filter(|_| self.record) {
                THRESHOLDS.with(|t| t.borrow_mut().push((g.q1, g.q2, g.l1, g.l2)));
            }
        }
    }
    fn timer_period(&self) -> Option<Time> {
        match &self.inner {
            Inner::Lbt(l) => l.timer_period(),
            Inner::Ecmp(_) => None,
        }
    }
    fn counters(&self) -> dclb_core::lb::scheme::CounterReport {
        match &self.inner {
            Inner::Lbt(l) => l.counters(),
            Inner::Ecmp(e) => e.counters(),
        }
    }
}

fn traced(cx: &dclb_core::lb::BuildCx, p: &dclb_core::lb::Params, lbt: bool) -> Installed {
    let p = LbtParams::from_params(p);
    let lbs = cx
        .switches
        .iter()
        .map(|s| {
            let inner = if lbt { Inner::Lbt(Box::new(Lbt::new(p, s, cx.facts))) } else { Inner::Ecmp(Ecmp::new(s.salt)) };
            Box::new(Traced { inner, record: s.as_leaf() == Some(LeafId(0)) }) as Box<dyn SwitchBalancer>
        })
        .collect();
    Installed::Switches(lbs)
}

const TRACED_LBT: SchemeSpec = SchemeSpec { name: "traced_lbt", placement: Placement::Switch, granularity: "flow/packet", summary: "test", params: LbtParams::SPECS, install: |cx, p| traced(cx, p, true), reflect: dclb_core::lb::reflect_path_and_class };
const TRACED_ECMP: SchemeSpec = SchemeSpec { name: "traced_ecmp", placement: Placement::Switch, granularity: "flow", summary: "test", params: LbtParams::SPECS, install: |cx, p| traced(cx, p, false), reflect: dclb_core::lb::reflect_path_and_class };

/// Leaf 0 (4 uplinks at 10 Gbps, hosts with 40 Gbps NICs so that one long flow fills an uplink and builds a
/// DCTCP standing queue there): two 12 MB DCTCP flows from hosts 0 and 1 to leaf 1, and from 2 ms on 150
/// short flows of 10 KB from hosts 2 and 3, one every 20 µs.
fn mixed() -> Config {
    let mut cfg = fabric(2, 4, 4);
    cfg.topology.host_rate_gbps = 40.0;
    let mut flows = vec![(0.0, 0, 4, 12_000_000), (0.0, 1, 5, 12_000_000)];
    for i in 0..150u32 {
        flows.push((2000.0 + 20.0 * i as f64, 2 + i % 2, 6 + i % 2, 10_000));
    }
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg
}

fn run_traced(cfg: &Config, spec: &SchemeSpec) -> (dclb_core::Results, Vec<Rec>) {
    TRACE.with(|t| t.borrow_mut().clear());
    THRESHOLDS.with(|t| t.borrow_mut().clear());
    let mut sim = Simulation::with_scheme(cfg, spec).expect("valid scenario");
    sim.run_to_end();
    let r = sim.results();
    assert_conserved(&r);
    drop(sim);
    (r, TRACE.with(|t| std::mem::take(&mut *t.borrow_mut())))
}

/// Share of short flows whose first packet went to a queue longer than the shortest candidate.
fn short_misplacements(trace: &[Rec]) -> (usize, usize) {
    let mut seen = HashMap::new();
    let mut bad = 0;
    for r in trace.iter().filter(|r| r.class == Class::Short) {
        if seen.insert(r.key, r.chosen).is_none() {
            let min = r.queues.iter().map(|q| q.1).min().unwrap();
            let q = r.queues.iter().find(|q| q.0 == r.chosen).unwrap().1;
            bad += (q > min) as usize;
        }
    }
    (bad, seen.len())
}

#[test]
fn the_rules_hold_in_a_live_run_and_ecmp_breaks_them() {
    let cfg = mixed();
    let (r, trace) = run_traced(&cfg, &TRACED_LBT);
    assert_eq!(r.stats.flows_completed, 152);
    // Short flows: the first packet at a shortest queue, the rest on the same port.
    let (bad, shorts) = short_misplacements(&trace);
    assert_eq!((bad, shorts), (0, 152), "150 short flows and the first 100 KB of the two long ones");
    let mut port_of: HashMap<u128, PortId> = HashMap::new();
    for r in trace.iter().filter(|r| r.class == Class::Short) {
        assert_eq!(*port_of.entry(r.key).or_insert(r.chosen), r.chosen, "a short flow moved at {:?}", r.at);
    }
    // Long packets: stay while the flow's port is below Q1; otherwise the longest queue below Q1, or the
    // longest of all when none is below.
    let (mut stays, mut moves, mut all_above) = (0, 0, 0);
    let mut thresholds = std::collections::BTreeSet::new();
    for r in trace.iter().filter(|r| r.class == Class::Long) {
        thresholds.insert(r.threshold);
        let q = |p: PortId| r.queues.iter().find(|x| x.0 == p).unwrap().1;
        if let Some(prev) = r.previous.filter(|&p| q(p) < r.threshold) {
            assert_eq!(r.chosen, prev, "a long flow left a port below Q1 at {:?}", r.at);
            stays += 1;
            continue;
        }
        let below: Vec<u64> = r.queues.iter().map(|x| x.1).filter(|&x| x < r.threshold).collect();
        if let Some(&max) = below.iter().max() {
            assert_eq!(q(r.chosen), max, "not the longest queue below Q1 at {:?}: {r:?}", r.at);
            moves += 1;
        } else {
            assert_eq!(q(r.chosen), r.queues.iter().map(|x| x.1).max().unwrap(), "all above: not the longest at {:?}", r.at);
            all_above += 1;
        }
    }
    assert!(stays > 1000 && moves > 10, "stays {stays}, placements {moves}, all above {all_above}");
    assert!(thresholds.len() > 3, "Q1 follows the load during the run: {thresholds:?}");

    // The same trace under ECMP breaks the short-flow rule for many flows.
    let (_, trace) = run_traced(&cfg, &TRACED_ECMP);
    let (bad, shorts) = short_misplacements(&trace);
    assert_eq!(shorts, 152);
    assert!(bad > 30, "ECMP put only {bad} of {shorts} short flows on a longer queue");
}

#[test]
fn end_to_end_short_flows_avoid_the_long_flows_queues() {
    // The defining outcome on the same traffic: short flows queue far less under LBT than under ECMP, whose
    // hash puts about half of them behind a long flow's standing queue.
    let mean_short_queueing = |scheme: &str| -> f64 {
        let mut cfg = mixed();
        cfg.lb.scheme = scheme.into();
        let r = run(&cfg);
        let sizes = r.flows.u64s("size_bytes");
        let q = r.flows.f64s("queueing_delay_us");
        let v: Vec<f64> = (0..sizes.len()).filter(|&i| sizes[i] < 100_000).map(|i| q[i]).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let lbt = mean_short_queueing("lbt");
    let ecmp = mean_short_queueing("ecmp");
    assert!(lbt < 0.5 * ecmp, "short-flow queueing: LBT {lbt:.1} us, ECMP {ecmp:.1} us");
}

#[test]
fn spines_without_a_choice_keep_no_state_and_runs_are_deterministic() {
    let mut cfg = fabric(4, 4, 4);
    cfg.lb.scheme = "lbt".into();
    cfg.sources = vec![poisson(16, 0.5, 300)];
    let a = run(&cfg);
    let b = run(&cfg);
    assert_eq!(fct_bits(&a), fct_bits(&b));
    let kinds = a.switches.strs("kind");
    let state = a.switches.u64s("state_bytes");
    let spine = SwitchBench::spine(&cfg, SpineId(0));
    let empty = Lbt::new(LbtParams::default(), &spine.me, &spine.fabric.facts).state_bytes() as u64;
    for (k, s) in kinds.iter().zip(state) {
        if *k == "spine" {
            assert_eq!(*s, empty, "a spine with one link per leaf holds no LBT state");
        } else {
            assert!(*s > empty, "a leaf holds groups and flow entries");
        }
    }
}

/// Not a test: prints LBT's own counters for a scenario the Python front dumped
/// (`dclb run S --dump-config F.json`, then `LBT_CONFIG=F.json cargo test -p dclb-core --test lbt -- --ignored
/// --nocapture counters`). The run goes through the same engine with the same parameters; only the decision
/// trace wrapper is added (it records nothing outside leaf 0's thresholds).
#[test]
#[ignore]
fn counters_of_a_dumped_scenario() {
    let path = std::env::var("LBT_CONFIG").expect("LBT_CONFIG=<engine config JSON>");
    let cfg: Config = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (r, _) = run_traced(&cfg, &TRACED_LBT);
    let c = |name: &str| ["short", "long", "be"].map(|class| r.stats.scheme_counters.get(&format!("lbt_{name}_{class}")).copied().unwrap_or(0));
    println!("flows completed {} of {}", r.stats.flows_completed, r.stats.flows_total);
    println!("decisions short/long/BE {:?}", c("decisions"));
    println!("fresh placements short/long/BE {:?}", c("placements"));
    println!("moves of a live flow short/long/BE {:?}", c("moves"));
    println!("port changes onto a shorter queue short/long/BE {:?}", c("to_shorter"));
    println!("all candidates at or above the threshold long/BE {:?}", &c("all_above")[1..]);
    println!("flows turned long {}", r.stats.scheme_counters.get("lbt_to_long").copied().unwrap_or(0));
    let th = THRESHOLDS.with(|t| t.borrow().clone());
    let busy: Vec<_> = th.iter().filter(|x| x.2 > 0.0).collect();
    let mean = |f: &dyn Fn(&Tick) -> f64| busy.iter().map(|x| f(x)).sum::<f64>() / busy.len().max(1) as f64;
    println!("leaf 0: {} periods with load; mean l1 {:.3}, l2 {:.3}, Q1 {:.0} B, Q2 {:.0} B; Q1 at its upper bound in {} periods", busy.len(), mean(&|x| x.2), mean(&|x| x.3), mean(&|x| x.0 as f64), mean(&|x| x.1 as f64), busy.iter().filter(|x| x.0 == th.iter().map(|y| y.0).max().unwrap_or(0)).count());
}

/// With the handshake on, a short flow's SYN reaches the switch an RTT before its first data packet.
/// `short_placement = syn` (as shipped): the SYN makes the flow's entry on the shortest queue then, and the
/// data keeps that port though the queues changed since. `first_data`: the SYN takes the shortest queue
/// and leaves no entry, so the first data packet places the flow on the queues it meets. Fails under the
/// other reading either way (the data's port is 1 under `syn`, 2 under `first_data`).
#[test]
fn with_the_handshake_a_short_flow_is_placed_by_its_syn_or_by_its_first_data_packet() {
    for placement in [ShortPlacement::Syn, ShortPlacement::FirstData] {
        let mut b = Bench::new();
        let mut lb = b.lbt(params(|p| p.short_placement = placement));
        let mut syn = b.data(1, 0, 0, false);
        (syn.kind, syn.wire_bytes) = (PacketKind::Syn, 40);
        b.set_queues([5, 1, 5, 5]);
        assert_eq!(b.send(&mut lb, syn), 1, "the SYN takes the shortest queue");
        assert_eq!(lb.last_decision().unwrap().class, Class::Short);
        assert_eq!(lb.flow_entries(), if placement == ShortPlacement::Syn { 1 } else { 0 });
        // An RTT later the queues have changed: port 1 is now the longest, port 2 the shortest.
        b.bench.at(Time::from_us(13));
        b.set_queues([5, 9, 0, 5]);
        let first = b.data(1, 0, 1460, false);
        let want = if placement == ShortPlacement::Syn { 1 } else { 2 };
        assert_eq!(b.send(&mut lb, first), want, "{placement:?}: the first data packet");
        // From then on the flow keeps its port, whatever the queues.
        b.set_queues([0, 9, 9, 9]);
        for k in 1..5u64 {
            let p = b.data(1, k * 1460, 1460, false);
            assert_eq!(b.send(&mut lb, p), want, "{placement:?}: packet {k}");
        }
    }
}

/// `short_priority`: where LBT classifies a packet it stamps its strict-priority level, short (and
/// packets without payload) at the top, long below, best effort at the lowest; with two levels long and BE
/// share the lower one. Where a switch has one candidate it only stamps, and only at the packet's first
/// switch. Off (as shipped), the level is left as the packet came.
#[test]
fn short_priority_stamps_short_long_and_best_effort_levels() {
    for (levels, want) in [(3u32, [0u8, 1, 2, 0]), (2, [0, 1, 1, 0])] {
        let mut cfg = fabric(2, 4, 2);
        cfg.topology.priority_queues = levels;
        let mut b = Bench { bench: SwitchBench::leaf(&cfg, LeafId(0)), ..Bench::new() };
        let mut lb = b.lbt(params(|p| p.short_priority = true));
        assert!(lb.hooks().choose_single, "it sees packets where there is no choice");
        let cands = b.cands.clone();
        let mut ack = b.data(9, 0, 0, false);
        (ack.kind, ack.wire_bytes) = (PacketKind::Ack, 40);
        let packets = [b.data(1, 0, 1460, false), b.data(2, 200_000, 1460, false), b.data(3, 0, 1460, true), ack];
        for (p, want) in packets.into_iter().zip(want) {
            let mut p = p;
            p.priority = 7;
            b.bench.forward(&mut lb, &mut p, &cands);
            assert_eq!(p.priority, want, "{levels} levels, {:?}", lb.last_decision().unwrap().class);
        }
        // One candidate: the level is stamped at the first switch only, from the packet alone, and LBT
        // keeps nothing.
        let entries = lb.flow_entries();
        let one = [cands[0]];
        for (hops, seq, want) in [(1u8, 200_000u64, 1u8), (1, 0, 0), (2, 200_000, 7)] {
            let mut p = b.data(20, seq, 1460, false);
            (p.priority, p.hops) = (7, hops);
            assert_eq!(b.bench.forward(&mut lb, &mut p, &one), cands[0]);
            assert_eq!(p.priority, want, "hop {hops}, offset {seq}");
        }
        assert_eq!(lb.flow_entries(), entries);
    }
    // Off: LBT leaves the level alone and sees no single-candidate packet.
    let mut b = Bench::new();
    let mut lb = b.lbt(LbtParams::default());
    assert_eq!(lb.hooks(), Hooks::CHOOSE_ONLY);
    let mut p = b.data(2, 200_000, 1460, false);
    p.priority = 5;
    let cands = b.cands.clone();
    b.bench.forward(&mut lb, &mut p, &cands);
    assert_eq!(p.priority, 5);
}

/// End to end: short flows from leaf 0 to a host that two long flows already load. No routing avoids its
/// port on the destination leaf, so LBT's short flows wait behind the long flows' queue there; with
/// `short_priority` and two priority levels they pass it.
#[test]
fn end_to_end_short_priority_lets_short_flows_pass_the_long_flows_queue_at_their_receiver() {
    let mean_short_fct = |short_priority: bool| -> f64 {
        let mut cfg = fabric(2, 4, 4);
        let mut flows = vec![(0.0, 0, 4, 5_000_000), (0.0, 1, 4, 5_000_000)];
        for i in 0..20u32 {
            flows.push((1000.0 + 100.0 * i as f64, 2 + i % 2, 4, 20_000));
        }
        cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
        cfg.topology.priority_queues = 2;
        cfg.lb.scheme = "lbt".into();
        cfg.lb.params = [("short_priority".to_string(), serde_json::json!(short_priority))].into();
        let r = run(&cfg);
        let sizes = r.flows.u64s("size_bytes");
        let v: Vec<f64> = (0..sizes.len()).filter(|&i| sizes[i] == 20_000).map(|i| fct(&r, i)).collect();
        assert_eq!(v.len(), 20);
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (without, with) = (mean_short_fct(false), mean_short_fct(true));
    eprintln!("LBT, 20 short flows behind two long ones at their receiver: mean FCT {without:.1} us without short_priority, {with:.1} us with");
    assert!(with < 0.4 * without, "short flows' mean FCT: {with:.1} us with short_priority, {without:.1} us without");
}
