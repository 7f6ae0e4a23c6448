//! The stationary start (`run.start = "stationary"`, `traffic/stationary.rs`), the fabric meter
//! (`fabric_carried_load_ratio`, the link utilisations) and the drain (`run.drain_us`).
//!
//! The fabric: 4 leaves x 2 spines x 2 hosts at 10 Gbps with short links, data mining at load 0.5 of the
//! hosts' links. From an empty fabric its giants (100 MB to 1 GB, 73% of the bytes) take seconds to be in
//! flight; a stationary start has them in flight from the first microsecond.

mod common;

use common::{assert_conserved, fabric};
use dclb_core::config::{Config, LoadBasis, Pattern, SourceConfig, Start, TransportKind, WorkloadComponent};
use dclb_core::metrics::{Column, Results, Table};
use dclb_core::simulate;

/// Data mining (VL2, as shipped in `workloads/datamining.cdf`).
fn datamining() -> Vec<WorkloadComponent> {
    let points = vec![(100.0, 0.0), (10_000.0, 0.8), (152_522.0, 0.8346), (390_541.0, 0.9), (3_223_542.0, 0.953846), (1e8, 0.99), (1e9, 1.0)];
    vec![WorkloadComponent { weight: 1.0, points }]
}

fn heavy(flows: u64, start: Start) -> Config {
    let mut c = fabric(4, 2, 2);
    c.sources = vec![SourceConfig {
        pattern: Pattern::Poisson,
        senders: (0..8).collect(),
        receivers: (0..8).collect(),
        workload: datamining(),
        load: Some(0.5),
        load_basis: LoadBasis::Access,
        flows: Some(flows),
        ..Default::default()
    }];
    c.run.start = start;
    c
}

fn bools<'a>(t: &'a Table, name: &str) -> &'a [bool] {
    match t.get(name) {
        Some(Column::Bool(v)) => v,
        _ => panic!("no bool column {name}"),
    }
}

fn run(cfg: &Config) -> Results {
    let r = simulate(cfg).expect("the scenario runs");
    assert_conserved(&r);
    r
}

/// The pre-loaded flows of a run: (src, dst, size, prior bytes, start in ps).
fn preloaded(r: &Results) -> Vec<(u64, u64, u64, u64, u64)> {
    let t = &r.flows;
    let pre = bools(t, "preloaded");
    let starts = t.f64s("start_us");
    (0..t.rows())
        .filter(|&i| pre[i])
        .map(|i| (t.u64s("src_host")[i], t.u64s("dst_host")[i], t.u64s("size_bytes")[i], t.u64s("prior_bytes")[i], (starts[i] * 1e6) as u64))
        .collect()
}

/// The run's own flows (not pre-loaded): (src, dst, size, start).
fn own(r: &Results) -> Vec<(u64, u64, u64, u64)> {
    let t = &r.flows;
    let pre = t.get("preloaded").map(|_| bools(t, "preloaded").to_vec()).unwrap_or_else(|| vec![false; t.rows()]);
    let starts = t.f64s("start_us");
    (0..t.rows()).filter(|&i| !pre[i]).map(|i| (t.u64s("src_host")[i], t.u64s("dst_host")[i], t.u64s("size_bytes")[i], (starts[i] * 1e6) as u64)).collect()
}

#[test]
fn a_stationary_start_carries_the_nominal_load_that_an_empty_start_misses() {
    let mut empty = heavy(120, Start::Empty);
    empty.run.warmup_us = Some(20_000.0);
    let empty = run(&empty);
    let stationary = run(&heavy(120, Start::Stationary));
    let (e, s) = (empty.stats.fabric_carried_load_ratio.unwrap(), stationary.stats.fabric_carried_load_ratio.unwrap());
    assert!(e < 0.5, "20 ms from an empty fabric carries a fraction of data mining's load: {e}");
    assert!(s > 0.75, "a stationary start carries about the nominal load: {s}");
    // The giants are in flight: the pre-loaded flows hold hundreds of MB.
    let pre = preloaded(&stationary);
    assert!(!pre.is_empty() && stationary.stats.prefill_flows == Some(pre.len() as u64));
    assert!(pre.iter().map(|f| f.2 - f.3).sum::<u64>() > 100_000_000, "{pre:?}");
    // Pre-loaded flows are never measured, start within a round trip, and resume at whole segments.
    let measured = bools(&stationary.flows, "measured");
    let is_pre = bools(&stationary.flows, "preloaded");
    assert!((0..measured.len()).all(|i| !(measured[i] && is_pre[i])));
    let mss = stationary_mss();
    assert!(pre.iter().all(|f| f.3 % mss == 0 && f.3 < f.2 && f.4 < 1_000_000_000), "{pre:?}");
    // The window is the same length after the same warm-up (the default 20 ms): only the start differs.
    assert_eq!(stationary.stats.window_opens_us, Some(20_000.0));
}

fn stationary_mss() -> u64 {
    Config::default().transport.mss_bytes as u64
}

#[test]
fn every_scheme_starts_from_the_same_population_and_the_same_arrivals() {
    let base = heavy(60, Start::Stationary);
    let ecmp = run(&base);
    let mut rps = base.clone();
    rps.lb.scheme = "rps".into();
    let rps = run(&rps);
    assert_eq!(preloaded(&ecmp), preloaded(&rps), "the population is the scheme's business only after the start");
    // The run's own arrivals are those of an empty start with the same window: pre-loading draws from its
    // own stream.
    let mut empty = heavy(60, Start::Empty);
    empty.run.warmup_us = Some(20_000.0);
    let empty = run(&empty);
    let mut a = own(&ecmp);
    let mut b = own(&empty);
    // The empty run's table leaves out the cool-down flows that had not arrived when it stopped, and so does
    // the stationary run's: compare what both carried.
    let n = a.len().min(b.len());
    a.truncate(n);
    b.truncate(n);
    assert_eq!(a, b);
    // Another seed, another population.
    let mut other = base.clone();
    other.seed = 2;
    assert_ne!(preloaded(&run(&other)), preloaded(&ecmp));
}

#[test]
fn the_candidate_taken_is_the_one_nearest_the_nominal_load() {
    // One candidate is the fluid run's first state; more candidates include it, so the one taken can only
    // be nearer the nominal load (a property of the choice, not of chance).
    for seed in 1..=4 {
        let mut one = heavy(60, Start::Stationary);
        one.seed = seed;
        one.run.start_candidates = Some(1);
        let mut many = one.clone();
        many.run.start_candidates = Some(16);
        let (a, b) = (run(&one).stats.prefill_load_ratio.unwrap(), run(&many).stats.prefill_load_ratio.unwrap());
        assert!((b - 1.0).abs() <= (a - 1.0).abs(), "seed {seed}: 16 candidates {b}, one {a}");
    }
}

#[test]
fn pre_loaded_flows_deliver_what_they_had_left_without_a_handshake() {
    let mut c = heavy(40, Start::Stationary);
    c.transport.handshake = true;
    c.transport.sack = true;
    // A small population whose flows end: a light load, and a horizon long enough for them.
    c.sources[0].load = Some(0.2);
    let r = run(&c);
    let t = &r.flows;
    let pre = bools(t, "preloaded");
    let states = t.strs("state");
    let (size, prior, delivered) = (t.u64s("size_bytes"), t.u64s("prior_bytes"), t.u64s("bytes_delivered"));
    let mut ended = 0;
    for i in (0..t.rows()).filter(|&i| pre[i]) {
        assert!(delivered[i] <= size[i] - prior[i]);
        if states[i] == "completed" {
            assert_eq!(delivered[i], size[i] - prior[i], "a completed pre-loaded flow delivers what it had left");
            ended += 1;
        }
    }
    assert!(ended > 0, "some pre-loaded flow ends in the run");
    // No pre-loaded flow waited for a SYN: with the handshake on, the first of them delivers before one
    // round trip could have passed twice (SYN, SYN-ACK, then data).
    assert!(t.opt_f64s("ideal_fct_us").iter().zip(pre).all(|(x, &p)| !p || x.is_none()), "pre-loaded flows have no ideal FCT");
}

#[test]
fn the_fabric_meter_reads_the_window_of_a_single_source_and_the_arrivals_without_one() {
    // A single poisson source with a window: every flow is the source's, so the fabric's load is the
    // window's.
    let mut c = heavy(60, Start::Empty);
    c.sources[0].workload = vec![WorkloadComponent { weight: 1.0, points: vec![(1_000.0, 0.0), (200_000.0, 1.0)] }];
    c.run.warmup_us = Some(2_000.0);
    let r = run(&c);
    let (w, f) = (r.stats.window_carried_load_ratio.unwrap(), r.stats.fabric_carried_load_ratio.unwrap());
    assert!((w - f).abs() < 1e-12, "window {w}, fabric {f}");
    // The links carry it: the hosts' downlinks at about the load (wire bytes, so a little above).
    let u = r.stats.util_leaf_to_host.unwrap();
    assert!(u > 0.8 * 0.5 * f && u < 1.3 * 0.5 * f.max(0.1), "utilisation {u} for carried {f}");
    // Without a window the span is the arrivals', and the meter is there all the same.
    c.run.warmup_us = None;
    let r = run(&c);
    assert!(r.stats.fabric_carried_load_ratio.is_some() && r.stats.fabric_span_us.unwrap() > 0.0);
    // A run without a poisson source has no meter.
    c.sources[0].pattern = Pattern::Group;
    c.sources[0].load = None;
    c.sources[0].flows = Some(4);
    c.sources[0].size_bytes = Some(10_000);
    c.sources[0].workload = Vec::new();
    let r = run(&c);
    assert_eq!(r.stats.fabric_carried_load_ratio, None);
}

#[test]
fn a_drain_stops_the_run_after_the_window_and_counts_what_it_censored() {
    let mut c = heavy(80, Start::Stationary);
    let whole = run(&c);
    c.run.drain_us = Some(1_000.0);
    let drained = run(&c);
    let closes = drained.stats.window_closes_us.unwrap();
    assert!((drained.stats.sim_time_us - (closes + 1_000.0)).abs() < 1.0, "stops 1 ms after the window: {} vs {closes}", drained.stats.sim_time_us);
    assert!(drained.stats.sim_time_us < whole.stats.sim_time_us && drained.stats.events < whole.stats.events);
    let t = &drained.flows;
    let (measured, states) = (bools(t, "measured"), t.strs("state"));
    let running = (0..t.rows()).filter(|&i| measured[i] && states[i] == "unfinished").count() as u64;
    assert!(running > 0, "a data-mining giant outlasts a 1 ms drain");
    assert_eq!(drained.stats.window_flows_censored, Some(running));
    // The window's numbers are those of the run without a drain: the run is the same up to it.
    assert_eq!(drained.stats.fabric_carried_load_ratio, whole.stats.fabric_carried_load_ratio);
    assert_eq!(whole.stats.window_flows_censored, None);
    // A run whose measured flows all end before the drain stops with them, and censors nothing.
    c.run.drain_us = Some(1e9);
    let long = run(&c);
    assert_eq!(long.stats.sim_time_us, whole.stats.sim_time_us);
    assert_eq!(long.stats.window_flows_censored, None);
}

#[test]
fn a_stationary_start_needs_a_poisson_tcp_source_and_its_options_need_it() {
    let err = |c: &Config| c.check().expect_err("refused").to_string();
    let mut c = heavy(10, Start::Stationary);
    c.sources[0].pattern = Pattern::Group;
    c.sources[0].load = None;
    assert!(err(&c).starts_with("run.start: a stationary start pre-loads the flows that poisson sources"), "{}", err(&c));
    let mut c = heavy(10, Start::Stationary);
    c.sources[0].transport = TransportKind::Udp;
    assert!(err(&c).starts_with("traffic.sources[0].transport: a stationary start pre-loads"), "{}", err(&c));
    let mut c = heavy(10, Start::Empty);
    c.run.start_candidates = Some(4);
    assert!(err(&c).starts_with("run.start_candidates: only a stationary start"), "{}", err(&c));
    c.run.start = Start::Stationary;
    c.run.start_candidates = Some(0);
    assert!(err(&c).starts_with("run.start_candidates: must be from 1 to 1024"), "{}", err(&c));
    let mut c = heavy(10, Start::Empty);
    c.run.drain_us = Some(5.0);
    assert!(err(&c).starts_with("run.drain_us: the drain is counted from the end of the measurement window"), "{}", err(&c));
    c.run.warmup_us = Some(0.0);
    assert!(c.check().is_ok());
}

#[test]
fn the_estimate_counts_the_pre_loaded_flows_and_the_fabric_at_its_load() {
    let empty = heavy(120, Start::Empty);
    let stationary = heavy(120, Start::Stationary);
    let size = |c: &Config| c.check_within(&Default::default()).expect("fits").size;
    let (a, b) = (size(&empty), size(&stationary));
    assert!(b.total_events() > a.total_events(), "the pre-loaded flows' packets count: {} vs {}", b.total_events(), a.total_events());
    let memory = |c: &Config| c.check_within(&Default::default()).expect("fits").memory.total();
    assert!(memory(&stationary) > memory(&empty), "the pre-loaded flows take memory too");
}
