//! Strict-priority queues: a port's FIFOs (the control class, then one per priority level) served in strict
//! priority and sharing one buffer and one ECN threshold; the host's priority stamping (fixed, PIAS-style
//! demotion); per-level readings for balancers; the checks; and the priority-queue check of issue #23: short
//! flows behind a long flow's queue on one port, with and without priority queues.
//!
//! How the tests were checked against broken rules (each tried once, then reverted; the tests that failed):
//! * the port served its FIFOs in arrival order (`start_service` taking the oldest head of any FIFO): the
//!   strict-priority test, the priority-queue check (short flows wait behind the long ones again);
//! * the lowest FIFO served first (`rposition` for `position`): the strict-priority, shared-buffer and
//!   demotion tests, the check;
//! * drop-tail against the packet's own FIFO instead of the port's total: the shared-buffer test;
//! * PIAS's level taken from the bytes sent after the packet (`level(bytes_sent + payload)`): the demotion
//!   test (the packet that crosses a threshold is demoted one packet early);
//! * SYNs stamped with the flow's level: the demotion test (its SYNs at a level under `fixed = 1`).

mod common;
use common::*;
use dclb_core::config::{Config, PriorityRule, QueueUnit, TransportKind};
use dclb_core::fabric::{Buffer, Port, PortLink, PortRole, Threshold};
use dclb_core::lb::testkit::SwitchBench;
use dclb_core::lb::{self, per_switch, Decision, Hooks, PacketMut, Placement, SchemeSpec, SwitchBalancer, SwitchCx};
use dclb_core::packet::{Packet, PacketArena, PacketKind};
use dclb_core::rng::Rng;
use dclb_core::units::{Rate, Time};
use dclb_core::Simulation;
use std::cell::RefCell;

fn port(buffer: Buffer, k: Threshold, levels: u8) -> Port {
    let link = PortLink { owner: NodeId(0), peer: NodeId(1), role: PortRole::LeafDown, slot: 0, rate: Rate::from_gbps(10.0), delay: Time::ZERO };
    let mut p = Port::new(link, buffer, k);
    p.set_priority_levels(levels);
    p
}

fn packet(pkts: &mut PacketArena, kind: PacketKind, level: u8, wire: u32) -> u32 {
    let mut p = Packet::new(kind, FlowId(0), HostId(0), HostId(1));
    (p.priority, p.wire_bytes, p.ecn.ect) = (level, wire, true);
    pkts.alloc(p)
}

// ------------------------------------------------------------------------------------------------------------
// The port

/// Random arrivals at random levels (and, on a NIC-like port, control packets) into an event-driven port run
/// as the engine runs it. Every time a serialisation starts, the packet started must be the oldest waiting
/// packet of the highest class that holds one: control first, then level 0, 1, 2 (a level past the lowest
/// joins the lowest). A packet on the wire is never preempted.
#[test]
fn a_strict_priority_port_never_serves_a_lower_level_while_a_higher_one_waits() {
    for control in [false, true] {
        let mut p = port(Buffer { packets: 1000, bytes: u64::MAX }, Threshold::OFF, 3);
        if control {
            p.set_control_kinds(PacketKind::Ack.bit());
        }
        assert!(!p.set_lazy(true, PortId(9)), "a port with several FIFOs stays event-driven");
        let mut pkts = PacketArena::new();
        let mut rng = Rng::new(7);
        // Waiting packets (not yet on the wire): (class, arrival order, id); class 0 is control if any.
        let mut waiting: Vec<(u8, u64, u32)> = Vec::new();
        let (mut done, mut now, mut order, mut served) = (None::<Time>, Time::ZERO, 0u64, [0u32; 4]);
        let class_of = |kind: PacketKind, level: u8| -> u8 {
            match (control, kind) {
                (true, PacketKind::Ack) => 0,
                (true, _) => 1 + level.min(2),
                (false, _) => level.min(2),
            }
        };
        for _ in 0..5000 {
            // A mean gap of 0.85 µs against a mean service of 0.91 µs: the queue comes and goes.
            now += Time::from_ns(rng.below(1700) as u64);
            // Serialisations that end by now, each followed by the next start.
            while let Some(t) = done.filter(|&t| t <= now) {
                p.finish_service(t, &pkts);
                done = None;
                if let Some((pid, end)) = p.start_service(t, &mut pkts) {
                    let best = waiting.iter().copied().min().expect("a packet started, so one waited");
                    assert_eq!(pid, best.2, "at {t:?} the port started {pid}, but {best:?} waited (control {control})");
                    waiting.retain(|w| w.2 != pid);
                    served[best.0 as usize] += 1;
                    done = Some(end);
                }
            }
            let kind = if rng.below(4) == 0 { PacketKind::Ack } else { PacketKind::Data };
            let level = rng.below(5) as u8; // 3 and 4 join the lowest level
            let wire = if kind == PacketKind::Ack { 40 } else { 1500 };
            let pid = packet(&mut pkts, kind, level, wire);
            assert!(p.admit(now, pid, pkts.get_mut(pid)).is_some());
            waiting.push((class_of(kind, level), order, pid));
            order += 1;
            if done.is_none() {
                let (started, end) = p.start_service(now, &mut pkts).expect("an idle port starts what arrives");
                assert_eq!(started, pid);
                waiting.retain(|w| w.2 != pid);
                done = Some(end);
            }
        }
        // The arrivals keep the port busy, so every class was served while others waited.
        assert!(served.iter().take(if control { 4 } else { 3 }).all(|&n| n > 100), "{served:?}");
    }
}

/// Every FIFO shares the port's buffer and threshold: a top-level packet is refused by a buffer that
/// lower levels filled, and marked when the total reaches K; the per-level readings add up to the total.
#[test]
fn the_shared_buffer_drops_and_marks_by_the_ports_total() {
    let mut pkts = PacketArena::new();
    // 4 packets of buffer, K = 2 packets, 3 levels.
    let mut p = port(Buffer { packets: 4, bytes: u64::MAX }, Threshold { unit: QueueUnit::Packets, k: 2 }, 3);
    let offer = |p: &mut Port, pkts: &mut PacketArena, level: u8| {
        let pid = packet(pkts, PacketKind::Data, level, 1500);
        p.admit(Time::ZERO, pid, pkts.get_mut(pid)).map(|_| pkts.get(pid).ecn.ce)
    };
    assert_eq!(offer(&mut p, &mut pkts, 2), Some(false));
    assert_eq!(offer(&mut p, &mut pkts, 2), Some(false));
    assert_eq!(offer(&mut p, &mut pkts, 0), Some(true), "two low packets queued: the total reached K");
    assert_eq!(offer(&mut p, &mut pkts, 1), Some(true));
    assert_eq!(offer(&mut p, &mut pkts, 0), None, "the buffer is full of every level's packets");
    assert_eq!(p.drops, 1);
    let at = Time::ZERO;
    let levels: Vec<(u64, u32)> = (0..3).map(|l| (p.level_bytes_at(at, l), p.level_packets_at(at, l))).collect();
    assert_eq!(levels, vec![(1500, 1), (1500, 1), (3000, 2)]);
    assert_eq!(p.level_bytes_at(at, 7), 3000, "a level past the lowest reads the lowest");
    assert_eq!((p.queue_bytes_at(at), p.queue_packets_at(at)), (6000, 4));
    // In bytes: 4,000 B of buffer; 2,700 B of ACKs and low data leave no room for a top-level 1,500 B packet.
    let mut p = port(Buffer { packets: u32::MAX, bytes: 4000 }, Threshold { unit: QueueUnit::Bytes, k: 1000 }, 2);
    for _ in 0..30 {
        let pid = packet(&mut pkts, PacketKind::Ack, 0, 40);
        p.admit(Time::ZERO, pid, pkts.get_mut(pid)).unwrap();
    }
    let pid = packet(&mut pkts, PacketKind::Data, 1, 1500);
    p.admit(Time::ZERO, pid, pkts.get_mut(pid)).unwrap();
    let pid = packet(&mut pkts, PacketKind::Data, 0, 1500);
    assert!(p.admit(Time::ZERO, pid, pkts.get_mut(pid)).is_none(), "1,200 + 1,500 queued, 1,500 more is over 4,000 B");
    // The one on the wire leaves: it served level 0 first (the ACKs), and its bytes leave the total.
    let (first, end) = p.start_service(Time::ZERO, &mut pkts).unwrap();
    assert_eq!(pkts.get(first).kind, PacketKind::Ack);
    p.finish_service(end, &pkts);
    assert_eq!((p.level_bytes_at(end, 0), p.level_bytes_at(end, 1), p.queue_bytes_at(end)), (1160, 1500, 2660));
}

/// What a balancer reads: the port's levels and each level's queue, next to the total.
#[test]
fn a_balancer_reads_each_levels_queue_through_its_ports_view() {
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.priority_queues = 3;
    let mut bench = SwitchBench::leaf(&cfg, LeafId(0));
    let up = bench.candidates_to_leaf(LeafId(1));
    for level in [0u8, 2, 2, 1, 2] {
        assert!(bench.queue_packet(up[0], level, 1000 + level as u32));
    }
    let cx = bench.cx();
    assert_eq!(cx.ports.priority_levels(up[0]), 3);
    assert_eq!((0..3).map(|l| cx.ports.level_queue_bytes(up[0], l)).collect::<Vec<_>>(), vec![1000, 1001, 3 * 1002]);
    assert_eq!((0..3).map(|l| cx.ports.level_queue_packets(up[0], l)).collect::<Vec<_>>(), vec![1, 1, 3]);
    assert_eq!(cx.ports.queue_bytes(up[0]), 1000 + 1001 + 3 * 1002);
    assert_eq!((cx.ports.level_queue_bytes(up[1], 0), cx.ports.priority_levels(up[1])), (0, 3));
    // Without priority queues a port has one level, which holds its whole queue.
    let bench = SwitchBench::leaf(&fabric(2, 2, 2), LeafId(0));
    assert_eq!(bench.fabric.port(up[0]).priority_levels(), 1);
}

// ------------------------------------------------------------------------------------------------------------
// The host's stamping, seen by a switch

#[derive(Clone, Copy, Debug, PartialEq)]
struct Seen {
    kind: PacketKind,
    flow: u32,
    seq: u64,
    level: u8,
}

thread_local! {
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

/// ECMP that records every packet it sees at its first switch (where the host's level is still intact).
struct Spy(lb::ecmp::Ecmp);

impl SwitchBalancer for Spy {
    fn hooks(&self) -> Hooks {
        Hooks { choose_single: true, ..Hooks::CHOOSE_ONLY }
    }
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[PortId]) -> Decision {
        if pkt.hops == 1 {
            SEEN.with(|s| s.borrow_mut().push(Seen { kind: pkt.kind, flow: pkt.flow.0, seq: pkt.seq, level: pkt.priority }));
        }
        if candidates.len() == 1 {
            return Decision::Forward(candidates[0]);
        }
        self.0.choose(cx, pkt, candidates)
    }
}

const SPY: SchemeSpec = SchemeSpec {
    name: "spy",
    placement: Placement::Switch,
    granularity: "flow",
    summary: "test",
    params: &[],
    install: |cx, _| per_switch(cx.switches, |s| Spy(lb::ecmp::Ecmp::new(s.salt))),
    reflect: lb::reflect_path_and_class,
};

fn run_spied(cfg: &Config) -> (dclb_core::Results, Vec<Seen>) {
    SEEN.with(|s| s.borrow_mut().clear());
    let mut sim = Simulation::with_scheme(cfg, &SPY).expect("valid scenario");
    sim.run_to_end();
    let r = sim.results();
    assert_conserved(&r);
    drop(sim);
    (r, SEEN.with(|s| std::mem::take(&mut *s.borrow_mut())))
}

/// PIAS-style demotion: a 300 KB flow with thresholds at 100 KB and 200 KB sends its first 100 KB at the
/// top level, the next at level 1, the rest at level 2 (by the bytes it sent before each packet; nothing
/// is retransmitted here, so that is the packet's offset). A fixed rule puts every data packet at its
/// level. SYNs and ACKs stay at the top level either way.
#[test]
fn pias_demotes_a_flow_as_its_bytes_sent_reach_each_threshold() {
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.priority_queues = 3;
    cfg.transport.handshake = true;
    let mut pias = listed(&[(0.0, 0, 2, 300_000)], TransportKind::Dctcp);
    pias.priority = PriorityRule::Pias { thresholds_bytes: vec![100_000, 200_000] };
    let mut fixed = listed(&[(0.0, 1, 3, 50_000)], TransportKind::Dctcp);
    fixed.priority = PriorityRule::Fixed { level: 1 };
    cfg.sources = vec![pias, fixed];
    let (r, seen) = run_spied(&cfg);
    assert_eq!(r.flows.opt_f64s("fct_us").iter().flatten().count(), 2, "both flows complete");
    let data: Vec<&Seen> = seen.iter().filter(|s| s.kind == PacketKind::Data).collect();
    assert_eq!(sum(&r, "retransmissions"), 0);
    let mut levels = [0u32; 3];
    for s in data.iter().filter(|s| s.flow == 0) {
        let want = if s.seq < 100_000 { 0 } else if s.seq < 200_000 { 1 } else { 2 };
        assert_eq!(s.level, want, "flow 0, packet at {}", s.seq);
        levels[s.level as usize] += 1;
    }
    assert!(levels.iter().all(|&n| n >= 68), "every level carried its 100 KB: {levels:?}");
    assert!(data.iter().filter(|s| s.flow == 1).all(|s| s.level == 1));
    let control: Vec<&Seen> = seen.iter().filter(|s| s.kind != PacketKind::Data).collect();
    assert!(control.iter().any(|s| s.kind == PacketKind::Syn) && control.iter().any(|s| s.kind == PacketKind::Ack));
    assert!(control.iter().all(|s| s.level == 0), "control packets at the top level");
}

/// Priority levels that no packet uses change nothing: every packet at level 0 of a port with two levels
/// is a FIFO served event by event, whose results are the lazily drained FIFO's, bit for bit.
#[test]
fn priority_levels_that_no_packet_uses_change_no_result() {
    let mut cfg = fabric(2, 2, 4);
    cfg.sources = vec![poisson(8, 0.6, 300)];
    let base = run(&cfg);
    cfg.topology.priority_queues = 2;
    let two = run(&cfg);
    assert_eq!(fct_bits(&two), fct_bits(&base));
    for col in ["bytes_sent", "drops", "ecn_marks", "peak_queue_bytes"] {
        assert_eq!(two.ports.u64s(col), base.ports.u64s(col), "{col}");
    }
    assert!(two.stats.events > base.stats.events, "the ports were event-driven: {} events, lazy {}", two.stats.events, base.stats.events);
}

// ------------------------------------------------------------------------------------------------------------
// The priority-queue check (issue #23): short flows behind a long one on one port

/// One leaf: hosts 0 and 1 each send a long DCTCP flow to host 3, which keeps a standing queue near K on
/// host 3's port; from 1 ms on, host 2 sends short flows of 20 KB to host 3, one every 200 µs. The short
/// flows' mean FCT, alone, behind the long flows in one FIFO, and behind them with two priority levels
/// (the short source at level 0, the long one at level 1; or PIAS demotion after 100 KB for both).
fn behind_a_long_flow(long: bool, rule: Option<(PriorityRule, PriorityRule)>) -> (f64, f64) {
    let mut cfg = fabric(1, 1, 4);
    let shorts: Vec<(f64, u32, u32, u64)> = (0..10).map(|i| (1000.0 + 200.0 * i as f64, 2, 3, 20_000)).collect();
    let mut short = listed(&shorts, TransportKind::Dctcp);
    let mut longs = listed(&[(0.0, 0, 3, 6_000_000), (0.0, 1, 3, 6_000_000)], TransportKind::Dctcp);
    if let Some((s, l)) = rule {
        cfg.topology.priority_queues = 2;
        (short.priority, longs.priority) = (s, l);
    }
    cfg.sources = if long { vec![short, longs] } else { vec![short] };
    let r = run(&cfg);
    // Flows are numbered by start time: the short ones are those of 20 KB.
    let shorts: Vec<usize> = (0..r.flows.rows()).filter(|&i| r.flows.u64s("size_bytes")[i] == 20_000).collect();
    assert_eq!(shorts.len(), 10);
    let mean = shorts.iter().map(|&i| fct(&r, i)).sum::<f64>() / 10.0;
    let down = r.ports.u64s("peak_queue_bytes").iter().copied().max().unwrap();
    (mean, down as f64)
}

#[test]
fn short_flows_behind_a_long_flow_finish_near_their_alone_fct_with_priority_queues() {
    let (alone, _) = behind_a_long_flow(false, None);
    let (fifo, peak) = behind_a_long_flow(true, None);
    let fixed = (PriorityRule::Fixed { level: 0 }, PriorityRule::Fixed { level: 1 });
    let (prio, _) = behind_a_long_flow(true, Some(fixed));
    let pias = PriorityRule::Pias { thresholds_bytes: vec![100_000] };
    let (demoted, _) = behind_a_long_flow(true, Some((pias.clone(), pias)));
    eprintln!("short flows' mean FCT: alone {alone:.1} us, behind the long flows in one FIFO {fifo:.1} us (peak queue {peak:.0} B), with priority queues {prio:.1} us, with PIAS demotion {demoted:.1} us");
    assert!(peak > 50_000.0, "the long flows keep a queue: peak {peak} B");
    assert!(fifo > 2.5 * alone, "in one FIFO the short flows wait behind the long flows' queue: {fifo} vs {alone} us");
    assert!(prio < 1.3 * alone, "with priority queues they pass it: {prio} vs {alone} us alone");
    assert!(demoted < 1.3 * alone, "as with PIAS's demotion of the long flows: {demoted} vs {alone} us alone");
}

// ------------------------------------------------------------------------------------------------------------
// The checks

fn check_error(cfg: &Config) -> String {
    cfg.check().expect_err("the config must be refused").to_string()
}

#[test]
fn priority_settings_outside_the_ports_levels_are_refused_naming_the_field() {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 10_000)], TransportKind::Dctcp)];
    cfg.check().expect("valid");
    for (n, ok) in [(0, false), (1, true), (8, true), (9, false)] {
        cfg.topology.priority_queues = n;
        assert_eq!(cfg.check().is_ok(), ok, "{n} queues");
    }
    cfg.topology.priority_queues = 9;
    assert_eq!(check_error(&cfg), "topology.priority_queues: must be 1 (one FIFO per port, no priorities) to 8, got 9");
    cfg.topology.priority_queues = 1;
    cfg.sources[0].priority = PriorityRule::Fixed { level: 1 };
    assert_eq!(
        check_error(&cfg),
        "traffic.sources[0].priority.level: level 1 does not exist: topology.priority_queues is 1, so the only level is 0 (set priority_queues to use priorities)"
    );
    cfg.topology.priority_queues = 2;
    cfg.check().expect("level 1 of 2");
    cfg.sources[0].priority = PriorityRule::Pias { thresholds_bytes: vec![] };
    assert!(check_error(&cfg).starts_with("traffic.sources[0].priority.thresholds_bytes: give at least one threshold"));
    cfg.sources[0].priority = PriorityRule::Pias { thresholds_bytes: vec![1000, 2000] };
    assert_eq!(check_error(&cfg), "traffic.sources[0].priority.thresholds_bytes: 2 thresholds demote a flow to level 2, which does not exist: levels are 0 (the top) to 1 (topology.priority_queues = 2)");
    cfg.topology.priority_queues = 3;
    cfg.check().expect("two thresholds, three levels");
    cfg.sources[0].priority = PriorityRule::Pias { thresholds_bytes: vec![2000, 2000] };
    assert_eq!(check_error(&cfg), "traffic.sources[0].priority.thresholds_bytes[1]: thresholds must increase: 2000 is not above 2000");
    cfg.sources[0].priority = PriorityRule::Pias { thresholds_bytes: vec![0, 2000] };
    assert!(check_error(&cfg).starts_with("traffic.sources[0].priority.thresholds_bytes[0]: must be at least 1 byte"));
}

#[test]
fn a_scheme_option_that_sets_priorities_needs_priority_queues_and_a_rate_estimator_needs_fifo_ports() {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 10_000)], TransportKind::Dctcp)];
    for (scheme, option) in [("lbt", "short_priority"), ("dar", "deadline_priority")] {
        cfg.topology.priority_queues = 1;
        (cfg.lb.scheme, cfg.lb.params) = (scheme.into(), [(option.to_string(), serde_json::json!(true))].into());
        assert_eq!(
            check_error(&cfg),
            format!("lb.{option}: sets packets' priority levels, but every port has one (topology.priority_queues = 1): give topology.priority_queues = 2 or more")
        );
        cfg.topology.priority_queues = 2;
        cfg.check().expect("with two levels");
    }
    (cfg.lb.scheme, cfg.lb.params) = ("conga".into(), Default::default());
    assert_eq!(check_error(&cfg), "topology.priority_queues: scheme 'conga' keeps a rate estimator on its ports, which needs FIFO ports; give priority_queues = 1");
    cfg.topology.priority_queues = 1;
    cfg.check().expect("CONGA on FIFO ports");
    // Every other scheme runs on priority ports (a short run each, every port event-driven).
    cfg.topology.priority_queues = 2;
    for s in lb::SCHEMES.iter().filter(|s| s.name != "conga") {
        (cfg.lb.scheme, cfg.lb.params) = (s.name.into(), Default::default());
        cfg.check().unwrap_or_else(|e| panic!("{}: {e}", s.name));
        let r = run(&cfg);
        assert_eq!(r.flows.opt_f64s("fct_us").iter().flatten().count(), 1, "{}", s.name);
    }
}

