//! Switch buffers and ECN marking across port rates: the defaults keep K below the buffer at every rate, so
//! a congested port marks at 40 and 100 Gbps as it does at 10 (before, K scaled with the rate and the
//! 256-packet buffer did not: at 40 Gbps K was 260 packets and nothing was ever marked).

mod common;
use common::*;
use dclb_core::config::{Pattern, QueueUnit, SourceConfig, TransportKind};

/// Four long-lived DCTCP flows into host 4 through one leaf at `gbps`: its down port is the bottleneck.
fn incast_at(gbps: f64, unit: QueueUnit) -> dclb_core::Config {
    let mut cfg = fabric(1, 1, 8);
    (cfg.topology.host_rate_gbps, cfg.topology.fabric_rate_gbps, cfg.topology.queue_unit) = (gbps, gbps, unit);
    cfg.sources = vec![SourceConfig { pattern: Pattern::LongLived, senders: (0..4).collect(), receivers: vec![4], transport: TransportKind::Dctcp, ..Default::default() }];
    cfg.run.horizon_us = Some(3000.0);
    cfg
}

#[test]
fn a_congested_port_marks_at_every_rate_with_default_buffers() {
    for unit in [QueueUnit::Bytes, QueueUnit::Packets] {
        for gbps in [10.0, 40.0, 100.0] {
            let r = run(&incast_at(gbps, unit));
            let (roles, peers) = (r.ports.strs("role"), r.ports.u64s("peer"));
            let p = (0..roles.len()).find(|&i| roles[i] == "leaf_down" && peers[i] == 4).unwrap();
            let (marks, drops) = (r.ports.u64s("ecn_marks")[p], r.ports.u64s("drops")[p]);
            assert!(marks > 0, "{unit:?} at {gbps} Gbps: the bottleneck never marked ({drops} drops)");
            assert_eq!(drops, 0, "{unit:?} at {gbps} Gbps: marking keeps DCTCP below the buffer");
        }
    }
}
