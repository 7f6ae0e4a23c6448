//! The flow table's `alone_fct_us` (a flow alone on the fabric: slow start, handshake, TCP small queues over
//! its best path; `transport/alone.rs`) against the engine itself running each flow alone.
//!
//! Flows are listed far apart in time, so each has the fabric to itself. Where nothing queues behind the flow
//! itself the two must agree to the picosecond's rounding; where a faster host feeds a slower link (the flow
//! queues behind itself) DCTCP's marks may slow the engine's flow a little, and the alone FCT is a floor.

mod common;
use common::*;
use dclb_core::config::{Config, TransportKind};

const SIZES: [u64; 8] = [500, 1_460, 14_600, 30_000, 100_000, 250_000, 1_000_000, 3_000_000];

/// Each size alone, 50 ms apart, host 0 (leaf 0) to host 2 (leaf 1).
fn lone_flows(mut cfg: Config, transport: TransportKind) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let flows: Vec<(f64, u32, u32, u64)> = SIZES.iter().enumerate().map(|(i, &s)| (i as f64 * 50_000.0, 0, 2, s)).collect();
    cfg.sources = vec![listed(&flows, transport)];
    let r = run(&cfg);
    let fct = r.flows.opt_f64s("fct_us").iter().map(|x| x.expect("completed")).collect();
    let alone = r.flows.opt_f64s("alone_fct_us").iter().map(|x| x.expect("a TCP flow has one")).collect();
    let ideal = r.flows.opt_f64s("ideal_fct_us").iter().map(|x| x.expect("a TCP flow has one")).collect();
    (fct, alone, ideal)
}

fn assert_same(cfg: Config, transport: TransportKind, what: &str) {
    let (fct, alone, ideal) = lone_flows(cfg, transport);
    for (i, size) in SIZES.iter().enumerate() {
        assert!((fct[i] - alone[i]).abs() < 1e-3, "{what}, {size} B: engine {} us, alone {} us", fct[i], alone[i]);
        assert!(alone[i] >= ideal[i] - 1e-3, "{what}, {size} B: alone {} below the unbounded-window ideal {}", alone[i], ideal[i]);
    }
}

#[test]
fn a_lone_flow_takes_its_alone_fct_on_a_short_path() {
    assert_same(fabric(2, 2, 2), TransportKind::Dctcp, "1 us links, IW 10");
}

#[test]
fn a_lone_flow_takes_its_alone_fct_through_slow_start_on_a_long_path() {
    for iw in [2, 10] {
        for handshake in [false, true] {
            let mut cfg = fabric(2, 2, 2);
            cfg.topology.host_delay_us = 25.0;
            cfg.topology.fabric_delay_us = 25.0;
            cfg.transport.init_cwnd_packets = iw;
            cfg.transport.handshake = handshake;
            assert_same(cfg.clone(), TransportKind::Dctcp, &format!("25 us links, IW {iw}, handshake {handshake}"));
            assert_same(cfg, TransportKind::Newreno, &format!("NewReno, 25 us links, IW {iw}, handshake {handshake}"));
        }
    }
}

#[test]
fn slow_start_puts_the_alone_fct_well_above_the_unbounded_window_ideal_on_a_long_path() {
    // What the headroom bound gains over the ideal: a 100 KB flow over 100 us of propagation each way needs
    // several round trips with IW 2; the ideal counts one pass.
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.host_delay_us = 25.0;
    cfg.topology.fabric_delay_us = 25.0;
    cfg.transport.init_cwnd_packets = 2;
    let (_, alone, ideal) = lone_flows(cfg, TransportKind::Dctcp);
    let i = SIZES.iter().position(|&s| s == 100_000).unwrap();
    assert!(alone[i] > 2.0 * ideal[i], "alone {} vs ideal {}", alone[i], ideal[i]);
}

#[test]
fn with_a_slower_fabric_the_alone_fct_is_a_floor() {
    // 40 Gbps hosts, 10 Gbps fabric: the flow queues behind itself at the uplink and DCTCP may be marked.
    let mut cfg = fabric(2, 2, 2);
    cfg.topology.host_rate_gbps = 40.0;
    let (fct, alone, _) = lone_flows(cfg, TransportKind::Dctcp);
    for (i, size) in SIZES.iter().enumerate() {
        assert!(fct[i] >= alone[i] - 1e-3, "{size} B: engine {} below the floor {}", fct[i], alone[i]);
        assert!(fct[i] <= alone[i] * 1.10 + 1.0, "{size} B: engine {} far above the floor {}", fct[i], alone[i]);
    }
}
