//! The measurement window (`run.warmup_us`, `run.cooldown_us`; `traffic/window.rs`): which flows are
//! measured, when the run stops, the load carried in the window, and that a run without a window (or with
//! an empty one) is the run it always was.
//!
//! The fabric of these tests makes flows long without making them many: 1 ms links give a 4 ms round trip,
//! so a 60 KB flow (41 segments from an initial window of 10) lasts three round trips, whatever the link
//! rate. At this load about 160 such flows are in flight in steady state, so a run of 100 flows from an
//! empty fabric ends its arrivals before the first of them has finished: the short run of a heavy-tailed
//! workload, in miniature and fast.

mod common;

use common::{assert_conserved, fabric};
use dclb_core::config::{Config, Pattern, SourceConfig};
use dclb_core::metrics::{Column, Results, Table};
use dclb_core::{simulate, Simulation};

/// 2 leaves x 2 spines x 4 hosts at 10 Gbps with 1 ms links; every host sends 60 KB flows at 20% of its
/// link (Poisson, to the other leaf), `flows` of them (in the window, with one).
fn long_flows(flows: u64, warmup_us: Option<f64>, cooldown_us: Option<f64>) -> Config {
    let mut c = fabric(2, 2, 4);
    c.topology.host_delay_us = 10.0;
    c.topology.fabric_delay_us = 990.0;
    // An RTO above the round trip, so that the first RTT sample arrives before any timer fires.
    c.transport.min_rto_us = 20_000.0;
    c.transport.init_rto_us = 20_000.0;
    c.sources = vec![SourceConfig {
        pattern: Pattern::Poisson,
        senders: (0..8).collect(),
        receivers: (0..8).collect(),
        size_bytes: Some(60_000),
        load: Some(0.2),
        load_basis: dclb_core::config::LoadBasis::Access,
        flows: Some(flows),
        ..Default::default()
    }];
    c.run.warmup_us = warmup_us;
    c.run.cooldown_us = cooldown_us;
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

#[test]
fn a_window_carries_the_nominal_load_where_a_short_run_from_an_empty_fabric_falls_short() {
    // The short run, measured exactly: a window with neither warm-up nor cool-down is the run itself.
    let short = run(&long_flows(100, Some(0.0), Some(0.0)));
    let short_ratio = short.stats.window_carried_load_ratio.expect("the short run's window was read");
    assert!(short_ratio < 0.6, "100 flows from an empty fabric carry well under the load: {short_ratio}");
    // A warm-up of about three flow lifetimes, 2,500 measured flows, arrivals going on after them.
    let windowed = run(&long_flows(2_500, Some(40_000.0), None));
    let ratio = windowed.stats.window_carried_load_ratio.expect("the window's bounds were reached");
    assert!((ratio - 1.0).abs() < 0.06, "the window carries the nominal load within a few %: {ratio}");
    assert_eq!(windowed.stats.window_drain_us, Some(0.0), "arrivals went on until the measured flows had ended");
}

#[test]
fn flows_are_measured_by_arrival_time_and_the_run_stops_when_the_measured_flows_have_ended() {
    let cfg = long_flows(300, Some(20_000.0), Some(30_000.0));
    let r = run(&cfg);
    let measured = bools(&r.flows, "measured");
    let start = r.flows.f64s("start_us");
    let (opens, closes) = (r.stats.window_opens_us.unwrap(), r.stats.window_closes_us.unwrap());
    assert_eq!(opens, 20_000.0, "the window opens when the warm-up ends");
    assert_eq!(measured.iter().filter(|&&m| m).count(), 300, "the source's `flows` counts its window");
    assert_eq!(r.stats.window_flows_measured, Some(300));
    for (i, (&m, &t)) in measured.iter().zip(start).enumerate() {
        assert_eq!(m, (opens..=closes).contains(&t), "flow {i} arrived at {t} us, window {opens}..{closes}");
    }
    assert!(start.iter().any(|&t| t < opens) && start.iter().any(|&t| t > closes), "warm-up and cool-down arrivals ran");
    // The run ends with the last measured flow: every measured flow completed, the run's end is the last
    // one's finish, and cool-down flows were still running then.
    let finish = r.flows.opt_f64s("finish_us");
    let state = r.flows.strs("state");
    let last_measured = (0..measured.len()).filter(|&i| measured[i]).map(|i| finish[i].expect("a measured flow completed")).fold(0.0, f64::max);
    assert_eq!(r.stats.sim_time_us, last_measured, "the run stopped when its last measured flow ended");
    assert!((0..measured.len()).any(|i| !measured[i] && state[i] == "unfinished"), "unmeasured flows were still running");
    // The cool-down's arrivals after the stop never existed: left out, counted.
    assert!(start.iter().all(|&t| t <= r.stats.sim_time_us));
    let not_arrived = r.stats.window_flows_not_arrived.unwrap();
    assert!(not_arrived > 0, "the cool-down drew arrivals past the end of the run");
    let drawn = dclb_core::traffic::generate(&cfg, &dclb_core::fabric::Fabric::build(&cfg.topology, &cfg.transport), &dclb_core::transport::TcpParams::from_config(&cfg.transport)).0.len();
    assert_eq!(r.flows.rows() as u64 + not_arrived, drawn as u64);
    // Flow ids keep the engine's numbering: the rows are the first flows drawn (sorted by arrival).
    assert_eq!(r.flows.u64s("flow_id"), (0..r.flows.rows() as u64).collect::<Vec<_>>());
}

#[test]
fn the_load_carried_is_read_at_the_window_bounds() {
    // A window bounded by time on sampler ticks (every 1 ms): the bytes the sampler records at the bounds,
    // summed over every flow, are the bytes the window counted.
    let mut cfg = long_flows(1, Some(20_000.0), Some(10_000.0));
    cfg.sources[0].flows = None;
    cfg.sources[0].duration_us = Some(15_000.0);
    let drawn = dclb_core::traffic::generate(&cfg, &dclb_core::fabric::Fabric::build(&cfg.topology, &cfg.transport), &dclb_core::transport::TcpParams::from_config(&cfg.transport));
    cfg.run.sampler = Some(dclb_core::config::SamplerConfig { interval_us: 1_000.0, ports: Some(vec![]), flows: (0..drawn.0.len() as u32).collect() });
    let r = run(&cfg);
    let (t, bytes) = (r.samples.f64s("time_us"), r.samples.u64s("bytes"));
    let at = |us: f64| -> u64 { t.iter().zip(bytes).filter(|(&x, _)| x == us).map(|(_, &b)| b).sum() };
    let delivered = (at(35_000.0) - at(20_000.0)) as f64 * 8.0;
    let nominal = r.stats.source_offered_bps[0] * 0.015;
    let ratio = r.stats.window_carried_load_ratio.unwrap();
    assert!((ratio - delivered / nominal).abs() < 1e-12, "window {ratio} vs the sampler's {}", delivered / nominal);
    assert_eq!((r.stats.window_opens_us, r.stats.window_closes_us), (Some(20_000.0), Some(35_000.0)));
}

#[test]
fn an_empty_window_runs_the_same_simulation_and_no_window_leaves_the_tables_as_they_were() {
    let plain = run(&long_flows(200, None, None));
    let empty = run(&long_flows(200, Some(0.0), Some(0.0)));
    assert!(plain.flows.get("measured").is_none(), "no measured column without a window");
    assert!(plain.stats.window_carried_load_ratio.is_none() && plain.stats.window_flows_measured.is_none());
    let stats = serde_json::to_value(&plain.stats).unwrap();
    assert!(stats.as_object().unwrap().keys().all(|k| !k.starts_with("window_")), "no window statistics without a window");
    // The same flows, the same results: every column but `measured` (all true) equal.
    assert!(bools(&empty.flows, "measured").iter().all(|&m| m));
    for (name, column) in &plain.flows.columns {
        assert_eq!(Some(column), empty.flows.get(name), "column {name}");
    }
    assert_eq!(plain.ports.digest(), empty.ports.digest());
    assert_eq!(plain.stats.events, empty.stats.events);
}

#[test]
fn a_windowed_run_is_deterministic() {
    let cfg = long_flows(150, Some(10_000.0), None);
    let a = run(&cfg);
    let b = run(&cfg);
    assert_eq!(a.flows.digest(), b.flows.digest());
    assert_eq!(a.ports.digest(), b.ports.digest());
    assert_eq!(serde_json::to_string(&a.stats).unwrap(), serde_json::to_string(&b.stats).unwrap());
    // And the same when run in small steps (the bounds and the stop are checked event by event).
    let mut sim = Simulation::new(&cfg).unwrap();
    while !sim.run(997) {}
    assert_eq!(sim.results().flows.digest(), a.flows.digest());
}

#[test]
fn window_fields_are_checked() {
    let error = |cfg: &Config| Simulation::new(cfg).err().expect("the config is refused");
    let cfg = long_flows(10, Some(-1.0), None);
    assert_eq!(error(&cfg), "run.warmup_us: must be zero or positive, got -1");
    let cfg = long_flows(10, None, Some(5.0));
    assert!(error(&cfg).starts_with("run.cooldown_us: only a run with a measurement window has a cool-down"));
    let mut cfg = long_flows(10, Some(5.0), None);
    cfg.sources[0].pattern = Pattern::Group;
    cfg.sources[0].load = None;
    assert!(error(&cfg).starts_with("run.warmup_us: a measurement window is counted in a poisson source's arrivals"));
}
