//! Shared helpers for engine integration tests.
#![allow(dead_code)]

use dclb_core::config::{Config, ListedFlow, Pattern, SourceConfig, TransportKind, WorkloadComponent};
use dclb_core::metrics::Column;
use dclb_core::{simulate, Results};

/// The engine's typed ids, for every test file.
#[allow(unused_imports)]
pub use dclb_core::ids::{FlowId, HostId, LeafId, NodeId, PortId, SpineId};

/// A small fabric: `leaves` x `spines`, `hpl` hosts per leaf, 10 Gbps, 1 µs links.
pub fn fabric(leaves: u32, spines: u32, hpl: u32) -> Config {
    let mut c = Config::default();
    c.topology.leaves = leaves;
    c.topology.spines = spines;
    c.topology.hosts_per_leaf = hpl;
    c
}

pub fn listed(flows: &[(f64, u32, u32, u64)], transport: TransportKind) -> SourceConfig {
    SourceConfig {
        pattern: Pattern::List,
        transport,
        list: flows.iter().map(|&(start_us, src, dst, size_bytes)| ListedFlow { start_us, src, dst, size_bytes, deadline_us: None }).collect(),
        ..Default::default()
    }
}

pub fn websearch() -> Vec<WorkloadComponent> {
    let pts = [(0.0, 0.0), (10000.0, 0.15), (20000.0, 0.2), (30000.0, 0.3), (50000.0, 0.4), (80000.0, 0.53), (200000.0, 0.6), (1000000.0, 0.7), (2000000.0, 0.8), (5000000.0, 0.9), (10000000.0, 0.97), (30000000.0, 1.0)];
    vec![WorkloadComponent { weight: 1.0, points: pts.to_vec() }]
}

/// A Poisson source between all hosts at `load` of the fabric basis.
pub fn poisson(hosts: u32, load: f64, flows: u64) -> SourceConfig {
    SourceConfig {
        pattern: Pattern::Poisson,
        senders: (0..hosts).collect(),
        receivers: (0..hosts).collect(),
        workload: websearch(),
        load: Some(load),
        flows: Some(flows),
        ..Default::default()
    }
}

/// Runs to the end and checks byte conservation: created = delivered + dropped + in flight.
pub fn run(cfg: &Config) -> Results {
    let r = simulate(cfg).expect("scenario is valid");
    assert_conserved(&r);
    r
}

pub fn assert_conserved(r: &Results) {
    let s = &r.stats;
    assert_eq!(
        s.wire_bytes_created,
        s.wire_bytes_delivered + s.wire_bytes_dropped + s.wire_bytes_in_flight,
        "byte conservation: created {} != delivered {} + dropped {} + in flight {}",
        s.wire_bytes_created,
        s.wire_bytes_delivered,
        s.wire_bytes_dropped,
        s.wire_bytes_in_flight
    );
}

pub fn sum(r: &Results, col: &str) -> u64 {
    r.flows.u64s(col).iter().sum()
}

pub fn port_sum(r: &Results, col: &str) -> u64 {
    r.ports.u64s(col).iter().sum()
}

/// FCT of flow `i`, which must have completed (µs).
pub fn fct(r: &Results, i: usize) -> f64 {
    r.flows.opt_f64s("fct_us")[i].unwrap_or_else(|| panic!("flow {i} did not complete"))
}

/// Every flow's FCT as exact bits (None for a flow that did not complete), for determinism checks.
pub fn fct_bits(r: &Results) -> Vec<Option<u64>> {
    r.flows.opt_f64s("fct_us").iter().map(|x| x.map(f64::to_bits)).collect()
}

/// Per-flow bytes on each uplink of the source leaf, one row per flow.
pub fn uplink_rows(r: &Results) -> Vec<Vec<u64>> {
    let Column::U64List { width, values } = r.flows.get("uplink_bytes").unwrap() else { panic!("uplink_bytes is a list column") };
    values.chunks(*width).map(|c| c.to_vec()).collect()
}
