//! Transport behaviour on a fabric: the resequencing buffer and loss recovery under sustained reordering.

mod common;
use common::*;
use dclb_core::config::{Config, LinkOverride, TransportKind};

/// Two leaves, four spines, RPS; the links of spines 2 and 3 take 20 µs instead of 5 µs, so half the
/// packets of a flow lag the other half by about 30 µs, every packet of the flow.
fn two_speed_paths(flows: &[(f64, u32, u32, u64)]) -> Config {
    let mut cfg = fabric(2, 4, 8);
    cfg.lb.scheme = "rps".into();
    cfg.topology.fabric_delay_us = 5.0;
    for spine in [2, 3] {
        for leaf in [0, 1] {
            cfg.topology.links.push(LinkOverride { leaf, spine, link: None, rate_gbps: None, delay_us: Some(20.0), failed: false, direction: Default::default() });
        }
    }
    cfg.sources = vec![listed(flows, TransportKind::Dctcp)];
    cfg
}

#[test]
fn reseq_hides_sustained_reordering_shorter_than_its_timeout() {
    // One 20 MB flow alone: its host link limits it to 10 Gbps, so fabric queues stay short and the lag of
    // the slow paths (~30 µs plus a little queueing) stays well below the 100 µs hold. Without the buffer TCP
    // sees 5,120 out-of-order arrivals and 1,111 spurious retransmissions; with it, none. A hold timer that is
    // not restarted on progress fires every 100 µs regardless (433 out-of-order, 678 spurious).
    let mut cfg = two_speed_paths(&[(0.0, 0, 8, 20_000_000)]);
    let plain = run(&cfg);
    cfg.transport.reseq_timeout_us = 100.0;
    let r = run(&cfg);
    assert_eq!(r.stats.flows_completed, 1);
    assert!(sum(&plain, "out_of_order") > 1000);
    assert_eq!(sum(&r, "out_of_order"), 0);
    assert_eq!(sum(&r, "retransmissions"), 0);
}
