//! Lazily drained switch ports (`port.rs`) against the event-driven ports they replace: the same scenario
//! run both ways must give identical tables (flows, ports, switches, samples) and run statistics, for every
//! scheme (queue-reading balancers included), with drops, ECN marks, wire faults, failed links, a sampler
//! and a horizon that cuts the run with packets still queued. Only the event count differs: a lazy port
//! needs no transmission-done event (a lazy host NIC keeps one for data packets, to wake the sender).

mod common;

use common::*;
use dclb_core::config::{Config, LinkOverride, QueueUnit, SamplerConfig};
use dclb_core::lb::find_scheme;
use dclb_core::{Results, Simulation};

fn run_with(cfg: &Config, lazy: bool) -> Results {
    let mut sim = Simulation::new(cfg).expect("valid scenario");
    if !lazy {
        sim.set_lazy_ports(false);
    }
    sim.run_to_end();
    let r = sim.results();
    assert_conserved(&r);
    r
}

/// Runs `cfg` both ways and compares everything but the event count; returns (lazy, event-driven) events.
fn same_both_ways(cfg: &Config, what: &str) -> (u64, u64) {
    let (l, e) = (run_with(cfg, true), run_with(cfg, false));
    for (name, a, b) in [("flows", &l.flows, &e.flows), ("ports", &l.ports, &e.ports), ("switches", &l.switches, &e.switches), ("samples", &l.samples, &e.samples)] {
        assert_eq!(a.columns.len(), b.columns.len(), "{what}: {name} columns");
        for ((n, x), (_, y)) in a.columns.iter().zip(&b.columns) {
            assert!(x == y, "{what}: {name}.{n} differs between lazy and event-driven ports");
        }
    }
    let (s, t) = (&l.stats, &e.stats);
    let key = |s: &dclb_core::metrics::RunStats| {
        (s.sim_time_us.to_bits(), s.flows_completed, s.flows_cancelled, s.wire_bytes_created, s.wire_bytes_delivered, s.wire_bytes_dropped, s.wire_bytes_in_flight, s.peak_packets_in_flight, s.probes_sent, s.scheme_counters.clone())
    };
    assert_eq!(key(s), key(t), "{what}: run statistics");
    (s.events, t.events)
}

/// Two leaves, two spines with two parallel links each, four hosts per leaf; small byte buffers (12 full-size
/// packets) with K at 4 of them, so queues overflow and mark; a sampler on every switch port.
fn busy(scheme: &str, flows: u64) -> Config {
    let mut cfg = fabric(2, 2, 4);
    cfg.topology.links_per_pair = 2;
    cfg.topology.queue_unit = QueueUnit::Bytes;
    (cfg.topology.buffer_bytes, cfg.topology.ecn_k_bytes) = (Some(18_000), Some(6_000));
    cfg.lb.scheme = scheme.into();
    cfg.sources = vec![poisson(8, 0.7, flows)];
    cfg.run.sampler = Some(SamplerConfig { interval_us: 7.0, ports: None, flows: vec![0, 1, 2] });
    cfg
}

#[test]
fn every_scheme_gives_the_same_tables_with_lazy_and_event_driven_ports() {
    for scheme in ["ecmp", "rps", "drb", "presto", "letflow", "conga", "drill", "hermes", "clove", "lbt", "tam", "tr", "dar", "mdtlb"] {
        assert!(find_scheme(scheme).is_ok(), "{scheme}");
        let (lazy, driven) = same_both_ways(&busy(scheme, 60), scheme);
        assert!((lazy as f64) < 0.8 * driven as f64, "{scheme}: {lazy} events lazy, {driven} event-driven");
    }
}

/// CONGA on lazy ports against event-driven ones, where its DRE (the ports' rate estimators, counted at
/// admission on both kinds; `port.rs` tests them against a register counted at each departure) decides: a fine metric (Q = 8 bits)
/// over a short time constant (tau = 20 µs, so T_dre = 4 µs and a full-size packet moves the metric by
/// about 15 levels), and short flowlets (a new choice after 3 µs idle), on busy uplinks. A DRE one
/// departure or one decay step off changes CE stamps and choices, and so the tables.
#[test]
fn conga_where_the_dre_decides_gives_the_same_tables_with_its_dre_taken_at_admission() {
    let mut cfg = busy("conga", 150);
    for (k, v) in [("metric_bits", 8.0), ("dre_tau_us", 20.0), ("flowlet_timeout_us", 3.0)] {
        cfg.lb.params.insert(k.into(), serde_json::json!(v));
    }
    cfg.lb.params.insert("metric_bits".into(), serde_json::json!(8));
    let (lazy, driven) = same_both_ways(&cfg, "conga, Q = 8, tau = 20 us");
    // The switch ports are lazy too: 9 events per data packet instead of about 16.
    assert!((lazy as f64) < 0.7 * driven as f64, "conga: {lazy} events lazy, {driven} event-driven");
}

#[test]
fn host_nics_with_a_priority_class_stay_event_driven_and_agree() {
    // ACKs ahead of data at the NIC: two classes, so NICs stay event-driven (switch ports are lazy).
    let mut cfg = busy("ecmp", 60);
    cfg.transport.host_ack_priority = true;
    same_both_ways(&cfg, "ecmp with ACK priority");
}

#[test]
fn wire_faults_failed_links_and_a_horizon_give_the_same_tables() {
    // A lossy uplink, a black-holed uplink and a failed one, sprayed over by RPS; cut by a horizon while
    // queues still hold packets (their uplink bytes must not count, their bytes are in flight).
    let mut cfg = busy("rps", 80);
    let link = |leaf, spine, link| LinkOverride { leaf, spine, link: Some(link), ..Default::default() };
    cfg.topology.links = vec![
        LinkOverride { loss_rate: 0.02, ..link(0, 0, 0) },
        LinkOverride { blackhole: true, ..link(1, 1, 1) },
        LinkOverride { failed: true, ..link(0, 1, 0) },
    ];
    cfg.run.horizon_us = Some(2_500.0);
    same_both_ways(&cfg, "rps with faults and a horizon");
    let r = run_with(&cfg, true);
    assert!(port_sum(&r, "wire_losses") > 0 && r.stats.wire_bytes_in_flight > 0);
    // The same faults under ECMP, run to the end (flows hashed onto the black hole never finish: horizon).
    cfg.lb.scheme = "ecmp".into();
    same_both_ways(&cfg, "ecmp with faults and a horizon");
}

/// The no-progress watchdog (`sim.rs`) judges progress by what receivers get (new in-order data, a flow's
/// end), never by port events: a run whose flows are stuck on a black hole stops the same way with lazy
/// and event-driven ports (same message, same flows active, same last progress), though the lazy run has
/// no transmission-done events to wake the watchdog.
#[test]
fn a_stalled_run_stops_the_same_way_with_lazy_and_event_driven_ports() {
    use dclb_core::config::{Direction, TransportKind};
    let mut cfg = fabric(2, 4, 4);
    cfg.topology.links.push(LinkOverride { leaf: 0, spine: 0, blackhole: true, direction: Direction::Up, ..Default::default() });
    let flows: Vec<(f64, u32, u32, u64)> = (0..40).map(|i| (i as f64 * 20.0, i % 4, 4 + (i / 4) % 4, 50 * 1460)).collect();
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    let stop = |lazy: bool| {
        let mut sim = Simulation::new(&cfg).expect("valid scenario");
        if !lazy {
            sim.set_lazy_ports(false);
        }
        sim.run_to_end();
        (sim.error().map(str::to_owned), sim.flows_ended(), sim.now())
    };
    let (lazy, driven) = (stop(true), stop(false));
    let msg = lazy.0.as_deref().expect("the stalled run stops with an error");
    assert!(msg.starts_with("run: no progress for"), "{msg}");
    assert_eq!(lazy, driven);
}

/// Four hosts of leaf 0 send 60 full-size segments each to one host of leaf 1 at time 0 (an incast): the
/// receiving leaf's downlink holds a backlog that drains while packets keep coming.
fn incast() -> Config {
    use dclb_core::config::TransportKind;
    let mut cfg = fabric(2, 2, 4);
    let flows: Vec<(f64, u32, u32, u64)> = (0..4).map(|h| (0.0, h, 4, 60 * 1460)).collect();
    cfg.sources = vec![listed(&flows, TransportKind::Dctcp)];
    cfg
}

/// Breakage B4 of the lazy ports (the sampler reads a lazy port without letting go of what has left), at
/// the smallest scale: samples every 2 µs of every switch port during an incast must show, sample by
/// sample, the queue and bytes sent the event-driven ports show, with a backlog in some of them.
#[test]
fn the_sampler_reads_a_draining_lazy_queue_as_the_event_driven_port_shows_it() {
    let mut cfg = incast();
    cfg.run.sampler = Some(SamplerConfig { interval_us: 2.0, ports: None, flows: vec![] });
    let (l, e) = (run_with(&cfg, true), run_with(&cfg, false));
    let (ql, qe) = (l.samples.u64s("queue_bytes"), e.samples.u64s("queue_bytes"));
    assert!(ql.iter().filter(|&&b| b >= 3000).count() > 10, "the incast builds a backlog");
    assert_eq!(ql, qe, "queue samples, lazy against event-driven");
    assert_eq!(l.samples.u64s("bytes"), e.samples.u64s("bytes"), "bytes-sent samples");
}

/// Breakages B5 and B6 of the lazy ports (the end of a run does not let go of what has left by then; the
/// queue area counts the queued packets' stay after the end): a horizon that cuts the incast while the
/// downlink holds a backlog must leave every port's packets and bytes sent, queue and average queue as the
/// event-driven ports count them.
#[test]
fn a_horizon_that_cuts_a_backlog_counts_each_lazy_port_as_the_event_driven_one() {
    let mut cfg = incast();
    cfg.run.horizon_us = Some(45.0);
    let (l, e) = (run_with(&cfg, true), run_with(&cfg, false));
    assert!(l.stats.wire_bytes_in_flight > 0 && l.stats.flows_unfinished == 4, "cut during the incast");
    for col in ["packets_sent", "bytes_sent", "peak_queue_bytes"] {
        assert_eq!(l.ports.u64s(col), e.ports.u64s(col), "ports.{col}");
    }
    let avg = |r: &Results| match r.ports.get("avg_queue_bytes") {
        Some(dclb_core::metrics::Column::F64(v)) => v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        _ => panic!("avg_queue_bytes"),
    };
    assert_eq!(avg(&l), avg(&e), "ports.avg_queue_bytes");
}
