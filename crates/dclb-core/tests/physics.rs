//! Physics with known answers: ideal FCT, slow start, DCTCP fair sharing and queue, drops, conservation.

mod common;
use common::*;
use dclb_core::config::{Pattern, SamplerConfig, SourceConfig, TransportKind};
use dclb_core::metrics::Column;

const TX_1500_AT_10G_US: f64 = 1.2; // 1500 B * 8 / 10 Gbps
const TX_ACK_AT_10G_US: f64 = 0.032; // 40 B * 8 / 10 Gbps

#[test]
fn lone_flow_within_initial_window_finishes_in_its_ideal_fct() {
    let mut cfg = fabric(2, 2, 2);
    // Ten full segments: exactly the initial window. Host 0 is on leaf 0, host 2 on leaf 1: four links.
    cfg.sources = vec![listed(&[(0.0, 0, 2, 10 * 1460)], TransportKind::Dctcp)];
    let r = run(&cfg);
    let fct = r.flows.opt_f64s("fct_us")[0].expect("completed");
    let ideal = r.flows.opt_f64s("ideal_fct_us")[0].expect("completed");
    // By hand: the NIC serialises all ten packets, the last one then crosses three more links; four 1 µs hops.
    let by_hand = 10.0 * TX_1500_AT_10G_US + 3.0 * TX_1500_AT_10G_US + 4.0 * 1.0;
    assert!((ideal - by_hand).abs() / by_hand < 1e-6, "ideal {ideal} vs hand {by_hand}");
    assert!((fct - ideal).abs() / ideal < 0.01, "fct {fct} vs ideal {ideal}");
    assert_eq!(r.flows.strs("state")[0], "completed");
}

#[test]
fn larger_lone_flow_follows_the_slow_start_model() {
    // 10 µs links so that each slow-start round's packet train is shorter than an RTT.
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.host_delay_us = 10.0;
    cfg.topology.fabric_delay_us = 10.0;
    let packets = 150u64; // rounds of 10, 20, 40, 80 segments: IW 10, doubling per RTT (one MSS per ACK)
    cfg.sources = vec![listed(&[(0.0, 0, 2, packets * 1460)], TransportKind::Dctcp)];
    let r = run(&cfg);
    let fct = r.flows.opt_f64s("fct_us")[0].expect("completed");
    // No handshake is modelled. Round k starts when the ACK of round k-1's first packet returns, one RTT R
    // after it was sent; R = data one way (4 serialisations + 40 µs) + ACK one way (4 serialisations + 40 µs).
    let rtt = 4.0 * TX_1500_AT_10G_US + 40.0 + 4.0 * TX_ACK_AT_10G_US + 40.0;
    // The last round (80 packets) leaves the NIC back to back; its last packet then crosses 3 more links.
    let by_hand = 3.0 * rtt + 80.0 * TX_1500_AT_10G_US + 3.0 * TX_1500_AT_10G_US + 40.0;
    assert!((fct - by_hand).abs() / by_hand < 0.01, "fct {fct} vs slow-start model {by_hand}");
    assert_eq!(sum(&r, "retransmissions"), 0);
}

#[test]
fn dctcp_flows_share_a_bottleneck_fairly_and_hold_the_queue_near_k() {
    let n = 4u32;
    // Four long-lived DCTCP flows from hosts 0-3 to host 4 through one leaf: host 4's 10 Gbps access link is the
    // only bottleneck (on a multi-leaf fabric, ECMP collisions on uplinks would add a second one).
    let mut cfg = fabric(1, 1, 8);
    cfg.topology.host_delay_us = 20.0;
    cfg.sources = vec![SourceConfig {
        pattern: Pattern::LongLived,
        senders: (0..n).collect(),
        receivers: vec![4],
        transport: TransportKind::Dctcp,
        ..Default::default()
    }];
    let horizon = 40_000.0;
    cfg.run.horizon_us = Some(horizon);
    cfg.run.sampler = Some(SamplerConfig { interval_us: 100.0, ports: None, flows: (0..n).collect() });
    let r = run(&cfg);
    // Delivered bytes between 10 ms (after convergence) and the horizon.
    let (t, kind, id, bytes) = (r.samples.f64s("time_us"), r.samples.strs("kind"), r.samples.u64s("id"), r.samples.u64s("bytes"));
    let at = |flow: u64, when: f64| -> f64 {
        (0..t.len()).filter(|&i| kind[i] == "flow" && id[i] == flow && t[i] <= when).map(|i| bytes[i]).max().unwrap() as f64
    };
    let shares: Vec<f64> = (0..n as u64).map(|f| at(f, horizon) - at(f, 10_000.0)).collect();
    let total: f64 = shares.iter().sum();
    let window_s = (horizon - 10_000.0) * 1e-6;
    let gbps = total * 8.0 / window_s / 1e9;
    assert!(gbps > 9.0, "the bottleneck should stay busy: {gbps:.2} Gbps of goodput");
    eprintln!("shares {:?} gbps {gbps}", shares.iter().map(|s| s / total).collect::<Vec<_>>());
    for (i, s) in shares.iter().enumerate() {
        let frac = s / total;
        eprintln!("flow {i} share {frac:.4}");
        assert!((frac - 0.25).abs() < 0.025, "flow {i} got {:.3} of the bottleneck, expected 1/{n} within 10%", frac);
    }
    // The bottleneck port: leaf 1's down port to host 4. Its time-averaged queue stays near K = 65 packets.
    let roles = r.ports.strs("role");
    let peers = r.ports.u64s("peer");
    let p = (0..roles.len()).find(|&i| roles[i] == "leaf_down" && peers[i] == 4).unwrap();
    let avg_pkts = r.ports.f64s("avg_queue_bytes")[p] / 1500.0;
    eprintln!("avg queue {avg_pkts:.1} pkts, marks {}", r.ports.u64s("ecn_marks")[p]);
    assert!((30.0..=100.0).contains(&avg_pkts), "average bottleneck queue {avg_pkts:.1} packets, K = 65");
    assert_eq!(r.ports.u64s("drops")[p], 0, "DCTCP keeps the queue under the 256-packet buffer");
    assert!(r.ports.u64s("ecn_marks")[p] > 0);
}

#[test]
fn buffer_overflow_drops_are_counted_and_recovered_from() {
    let mut cfg = fabric(2, 2, 8);
    // 20 full-size packets; no marking (NewReno ignores it, and K must lie below the buffer).
    (cfg.topology.buffer_bytes, cfg.topology.ecn_k_bytes) = (Some(30_000), Some(0));
    // 8-to-1 incast of 200 KB NewReno flows (no ECN) into host 8: the receiver's port must overflow.
    cfg.sources = vec![SourceConfig {
        pattern: Pattern::Incast,
        senders: (0..8).collect(),
        receivers: vec![8],
        size_bytes: Some(200_000),
        transport: TransportKind::Newreno,
        ..Default::default()
    }];
    let r = run(&cfg);
    let drops = port_sum(&r, "drops");
    assert!(drops > 0, "a 20-packet buffer under an 8-to-1 incast must drop");
    assert_eq!(r.stats.wire_bytes_dropped > 0, true);
    assert!(sum(&r, "retransmissions") >= drops / 2, "dropped data is retransmitted");
    assert_eq!(r.stats.flows_completed, 8, "every flow still completes");
    assert_eq!(port_sum(&r, "ecn_marks"), 0, "NewReno packets are not ECN-capable");
}

#[test]
fn conservation_and_completion_under_poisson_load() {
    let mut cfg = fabric(4, 4, 4);
    cfg.sources = vec![poisson(16, 0.6, 400)];
    let r = run(&cfg);
    assert_eq!(r.stats.flows_completed, 400);
    // Delivered payload equals every flow's size.
    let sizes: u64 = r.flows.u64s("size_bytes").iter().sum();
    assert_eq!(sum(&r, "bytes_delivered"), sizes);
    let Column::U64List { width, values } = r.flows.get("uplink_bytes").unwrap() else { panic!() };
    assert_eq!(*width, 4);
    // Every inter-leaf payload byte crossed exactly one uplink of its source leaf at least once.
    assert!(values.iter().sum::<u64>() >= sizes);
}

#[test]
fn horizon_leaves_flows_unfinished_and_says_so() {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 50_000_000)], TransportKind::Dctcp)];
    cfg.run.horizon_us = Some(1_000.0);
    let r = run(&cfg);
    assert_eq!(r.flows.strs("state")[0], "unfinished");
    assert!(r.flows.opt_f64s("fct_us")[0].is_none());
    assert!((r.stats.sim_time_us - 1_000.0).abs() < 1e-6);
    assert!(r.stats.wire_bytes_in_flight > 0);
}

#[test]
fn udp_source_sends_at_its_rate() {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![SourceConfig {
        pattern: Pattern::List,
        transport: TransportKind::Udp,
        udp_rate_gbps: 2.0,
        list: vec![dclb_core::config::ListedFlow { start_us: 0.0, src: 0, dst: 2, size_bytes: 1_460_000, deadline_us: None }],
        ..Default::default()
    }];
    let r = run(&cfg);
    // 1000 packets of 1500 B at 2 Gbps: 6 ms of sending (the last packet departs 999 gaps after the first).
    let fct = r.flows.opt_f64s("fct_us")[0].expect("completed");
    let expect = 999.0 * 6.0 + 4.0 * 1.2 + 4.0;
    assert!((fct - expect).abs() / expect < 0.01, "{fct} vs {expect}");
}

/// One flow of `packets` full segments from host 0 to host 2 over a 2 x 1 fabric whose only leaf 0 ->
/// spine 0 link has a wire fault.
fn faulty_link(blackhole: bool, loss_rate: f64, packets: u64) -> dclb_core::Config {
    use dclb_core::config::{Direction, LinkOverride};
    let mut cfg = fabric(2, 1, 2);
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, link: None, rate_gbps: None, delay_us: None, failed: false, blackhole, loss_rate, direction: Direction::Up });
    cfg.sources = vec![listed(&[(0.0, 0, 2, packets * 1460)], TransportKind::Dctcp)];
    cfg.run.horizon_us = Some(if blackhole { 100_000.0 } else { 2_000_000.0 });
    cfg
}

#[test]
fn a_blackholed_link_stays_in_routing_and_loses_everything_on_the_wire() {
    let r = run(&faulty_link(true, 0.0, 20));
    let up = r.ports.strs("role").iter().position(|&x| x == "leaf_up").unwrap();
    assert_eq!(r.flows.strs("state")[0], "unfinished", "nothing gets through");
    assert_eq!(r.flows.u64s("bytes_delivered")[0], 0);
    assert!(r.flows.u64s("timeouts")[0] >= 3, "the sender keeps timing out");
    assert_eq!(r.ports.u64s("wire_losses")[up], r.ports.u64s("packets_sent")[up], "every packet serialised on the uplink is lost");
    assert_eq!(port_sum(&r, "drops"), 0, "wire losses are not buffer drops");
}

#[test]
fn a_lossy_link_loses_about_its_rate() {
    let r = run(&faulty_link(false, 0.02, 2000));
    let up = r.ports.strs("role").iter().position(|&x| x == "leaf_up").unwrap();
    assert_eq!(r.flows.strs("state")[0], "completed", "TCP recovers from random loss");
    let (lost, sent) = (r.ports.u64s("wire_losses")[up] as f64, r.ports.u64s("packets_sent")[up] as f64);
    assert!((lost / sent - 0.02).abs() < 0.008, "lost {lost} of {sent}");
    assert!(r.flows.u64s("retransmissions")[0] as f64 >= lost * 0.9, "lost data is sent again");
    // Deterministic: same seed, same losses.
    assert_eq!(run(&faulty_link(false, 0.02, 2000)).ports.u64s("wire_losses")[up], lost as u64);
}

/// `packets` full UDP segments at `gbps` from host 0 to host 2 over `faulty_link`'s fabric, without a horizon.
fn udp_over_faulty_link(blackhole: bool, loss_rate: f64, packets: u64) -> dclb_core::Config {
    let mut cfg = faulty_link(blackhole, loss_rate, packets);
    cfg.sources[0].transport = TransportKind::Udp;
    cfg.sources[0].udp_rate_gbps = 2.0;
    cfg.run.horizon_us = None;
    cfg
}

#[test]
fn a_udp_flow_that_loses_packets_ends_at_its_last_delivered_byte() {
    let clean = run(&udp_over_faulty_link(false, 0.0, 1000));
    let r = run(&udp_over_faulty_link(false, 0.05, 1000));
    let (delivered, lost) = (r.flows.u64s("bytes_delivered")[0], r.flows.u64s("udp_lost_bytes")[0]);
    assert_eq!(r.flows.strs("state")[0], "completed", "every packet is delivered or lost: nothing is left to wait for");
    assert_eq!(delivered + lost, 1000 * 1460, "every payload byte sent is delivered or counted lost");
    assert!((lost as f64 / (1000.0 * 1460.0) - 0.05).abs() < 0.02, "lost {lost}");
    assert_eq!(clean.flows.u64s("udp_lost_bytes")[0], 0);
    // The FCT runs to the last delivered byte: never later than the lossless flow's, and the same unless
    // the very last packets were lost (a UDP sender does not slow down for loss).
    let (fct, clean_fct) = (r.flows.opt_f64s("fct_us")[0].unwrap(), clean.flows.opt_f64s("fct_us")[0].unwrap());
    assert!(fct <= clean_fct + 1e-6 && fct > 0.98 * clean_fct, "fct {fct} vs lossless {clean_fct}");
}

#[test]
fn a_udp_flow_whose_every_packet_is_lost_still_ends() {
    let r = run(&udp_over_faulty_link(true, 0.0, 50));
    assert_eq!(r.flows.strs("state")[0], "completed");
    assert_eq!(r.flows.u64s("bytes_delivered")[0], 0);
    assert_eq!(r.flows.u64s("udp_lost_bytes")[0], 50 * 1460);
    // It ends when its last packet is lost, on the uplink after 49 gaps of 6 us and three hops.
    let fct = r.flows.opt_f64s("fct_us")[0].unwrap();
    assert!(fct > 49.0 * 6.0 && fct < 49.0 * 6.0 + 10.0, "fct {fct}");
}

#[test]
fn udp_senders_that_overrun_their_nic_end_with_the_nic_drops_counted_as_loss() {
    // Two flows from host 0, each at the host link's full 10 Gbps: together twice what the NIC sends, so
    // its buffer overflows and it drops about half of what is offered.
    let mut cfg = fabric(2, 2, 2);
    let flow = |dst| dclb_core::config::ListedFlow { start_us: 0.0, src: 0, dst, size_bytes: 3000 * 1460, deadline_us: None };
    cfg.sources = vec![SourceConfig { pattern: Pattern::List, transport: TransportKind::Udp, udp_rate_gbps: 10.0, list: vec![flow(2), flow(3)], ..Default::default() }];
    let r = run(&cfg);
    let lost: u64 = r.flows.u64s("udp_lost_bytes").iter().sum();
    let delivered: u64 = r.flows.u64s("bytes_delivered").iter().sum();
    assert!(r.flows.strs("state").iter().all(|&s| s == "completed"));
    assert_eq!(lost + delivered, 2 * 3000 * 1460);
    assert!(lost as f64 > 0.3 * (lost + delivered) as f64, "the NIC dropped about half: lost {lost} of {}", lost + delivered);
    let roles = r.ports.strs("role");
    let nic_drops: u64 = r.ports.u64s("drops").iter().zip(roles.iter()).filter(|(_, role)| **role == "host_up").map(|(d, _)| *d).sum();
    assert_eq!(nic_drops, port_sum(&r, "drops"), "the drops are the NIC's");
}

#[test]
fn deadline_met_is_null_without_a_deadline_and_false_when_late_or_unfinished() {
    let mut cfg = fabric(2, 2, 2);
    let mut source = listed(&[(0.0, 0, 2, 14_600), (0.0, 1, 3, 14_600), (0.0, 0, 3, 14_600), (0.0, 1, 2, 50_000_000)], TransportKind::Dctcp);
    // A generous deadline, one shorter than any FCT, none, and one on a flow the horizon cuts off.
    for (flow, deadline_us) in source.list.iter_mut().zip([Some(1_000.0), Some(1.0), None, Some(500.0)]) {
        flow.deadline_us = deadline_us;
    }
    cfg.sources = vec![source];
    cfg.run.horizon_us = Some(1_000.0);
    let r = run(&cfg);
    assert_eq!(r.flows.strs("state"), ["completed", "completed", "completed", "unfinished"]);
    assert_eq!(r.flows.opt_bools("deadline_met"), [Some(true), Some(false), None, Some(false)]);
    assert_eq!(r.flows.opt_f64s("deadline_us")[2], None);
}
