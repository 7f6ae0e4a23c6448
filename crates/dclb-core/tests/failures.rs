//! Silent failures that routing does not see: a blackholed uplink stays a candidate, so a scheme that
//! cannot sense paths keeps sending into it, while a scheme that judges paths from its own packets' fate
//! (Hermes: timeouts on a path, nothing acknowledged) moves its flows away.

mod common;
use common::*;
use dclb_core::config::{Direction, LinkOverride, TransportKind};
use dclb_core::metrics::Results;

/// 2 leaves x 4 spines, 4 hosts per leaf; leaf 0's uplink to spine 0 is a blackhole. 40 flows of 50
/// packets from leaf 0's hosts to leaf 1's, one every 20 µs.
fn blackhole(scheme: &str) -> dclb_core::Config {
    let mut cfg = fabric(2, 4, 4);
    cfg.lb.scheme = scheme.into();
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, link: None, rate_gbps: None, delay_us: None, failed: false, blackhole: true, loss_rate: 0.0, direction: Direction::Up });
    let flows: Vec<(f64, u32, u32, u64)> = (0..40).map(|i| (i as f64 * 20.0, i % 4, 4 + (i / 4) % 4, 50 * 1460)).collect();
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg.run.horizon_us = Some(500_000.0);
    cfg
}

fn unfinished(r: &Results) -> usize {
    r.flows.strs("state").iter().filter(|&&s| s != "completed").count()
}

#[test]
fn hermes_leaves_a_blackholed_path_that_ecmp_keeps_using() {
    let e = run(&blackhole("ecmp"));
    let h = run(&blackhole("hermes"));
    let (ue, uh) = (unfinished(&e), unfinished(&h));
    eprintln!("unfinished of 40: ecmp {ue}, hermes {uh}; wire losses ecmp {}, hermes {}", port_sum(&e, "wire_losses"), port_sum(&h, "wire_losses"));
    // ECMP hashes about a quarter of the flows onto the dead uplink, and they never finish.
    assert!(ue >= 4, "ecmp: {ue} unfinished");
    assert_eq!(uh, 0, "hermes: every flow escapes the blackhole");
}

/// Without a horizon, the flows ECMP pins to the blackhole would retry at their RTO forever: the engine
/// stops the run once active flows have gone the stall window (64 x the 1 s `max_rto_us` here) without
/// delivering a byte, and says so.
#[test]
fn a_run_without_progress_stops_with_an_error_instead_of_running_forever() {
    let mut cfg = blackhole("ecmp");
    cfg.run.horizon_us = None;
    let err = dclb_core::simulate(&cfg).err().expect("the stalled run is an error");
    assert!(err.starts_with("run: no progress for 6"), "{err}");
    assert!(err.contains("flows are active and none has delivered a new byte since"), "{err}");
    assert!(err.contains("the engine stops a run after 64.0 s without progress"), "{err}");
    // Its simulated clock stopped just past the window, not at the end of time.
    let mut sim = dclb_core::Simulation::new(&cfg).unwrap();
    sim.run_to_end();
    assert!(sim.error().is_some() && sim.now().as_secs() < 70.0, "{:?}", sim.now());
    // Hermes moves its flows away from the blackhole: the same run ends, and no watchdog fires.
    cfg.lb.scheme = "hermes".into();
    let r = dclb_core::simulate(&cfg).unwrap();
    assert_eq!(unfinished(&r), 0);
}

/// Idle time between arrivals is not a stall: a flow 100 s after the previous one ended runs normally.
#[test]
fn idle_gaps_between_flows_are_not_a_stall() {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 100_000), (100e6, 1, 3, 100_000)], TransportKind::Dctcp)];
    let r = dclb_core::simulate(&cfg).unwrap();
    assert_eq!(unfinished(&r), 0);
}

/// 2 leaves x 4 spines, 4 hosts per leaf; the link from spine 0 down to leaf 0 is a blackhole, the way up
/// works. 40 flows of 50 packets from leaf 0's hosts to leaf 1's, one every 20 µs, so their data never
/// meets the blackhole: only what comes back to leaf 0 does (ACKs, probe replies).
fn ack_blackhole(scheme: &str, ack_routing: &str) -> dclb_core::Config {
    let mut cfg = fabric(2, 4, 4);
    cfg.lb.scheme = scheme.into();
    cfg.lb.params.insert("ack_routing".into(), serde_json::json!(ack_routing));
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, link: None, rate_gbps: None, delay_us: None, failed: false, blackhole: true, loss_rate: 0.0, direction: Direction::Down });
    let flows: Vec<(f64, u32, u32, u64)> = (0..40).map(|i| (i as f64 * 20.0, i % 4, 4 + (i / 4) % 4, 50 * 1460)).collect();
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg.run.horizon_us = Some(500_000.0);
    cfg
}

/// An edge scheme chooses its data's path, but by default the switches hash its ACKs: a flow whose ACKs
/// hash onto the blackholed way back never finishes, however well its sender chose. With
/// `ack_routing = "edge"` the receiving host routes the ACKs and moves them off a path that loses them
/// (the sender sending already acknowledged bytes again after a silence), so every flow finishes. Checked to fail
/// with the hook not called (`routes_acks` false for every scheme: the edge runs equal the ECMP ones).
#[test]
fn with_edge_ack_routing_the_receiver_moves_acks_off_a_blackhole_that_ecmp_hashes_them_onto() {
    for scheme in ["hermes", "clove", "presto", "mdtlb"] {
        let e = run(&ack_blackhole(scheme, "ecmp"));
        let g = run(&ack_blackhole(scheme, "edge"));
        let (ue, ug) = (unfinished(&e), unfinished(&g));
        eprintln!("{scheme}: unfinished of 40 with ACKs by ECMP {ue}, by the receiving edge {ug}");
        // About a quarter of the flows' ACKs hash onto spine 0 on the way back.
        assert!(ue >= 4, "{scheme}, ecmp: {ue} unfinished");
        assert_eq!(ug, 0, "{scheme}, edge: every flow's ACKs escape the blackhole");
    }
}
