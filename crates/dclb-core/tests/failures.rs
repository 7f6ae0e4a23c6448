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
    r.flows.strs("state").iter().filter(|s| *s != "completed").count()
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
