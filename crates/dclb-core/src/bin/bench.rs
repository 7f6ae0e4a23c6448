//! Engine-only benchmark: `dclb-bench CONFIG.json` runs a resolved config and prints events/s, wall time and
//! the engine's memory estimate. `dclb bench` (Python) is the user-facing command; this binary exists for
//! profiling the engine without Python in the picture (perf, callgrind).

use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: dclb-bench CONFIG.json   (a resolved engine config, e.g. from `dclb run --dump-config`)");
        std::process::exit(2);
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let cfg: dclb_core::Config = serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let t0 = Instant::now();
    let mut sim = dclb_core::Simulation::new(&cfg).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let build = t0.elapsed().as_secs_f64();
    sim.run_to_end();
    let wall = t0.elapsed().as_secs_f64();
    let r = sim.results();
    let s = &r.stats;
    println!("flows {} completed {} | events {} | wall {:.3} s (setup {:.3} s) | {:.2} M events/s | sim {:.1} ms | engine ~{:.1} MB, peak packets {} peak active flows {}",
        s.flows_total, s.flows_completed, s.events, wall, build, s.events as f64 / wall / 1e6, s.sim_time_us / 1e3,
        s.engine_bytes as f64 / 1e6, s.peak_packets_in_flight, s.peak_flows_active);
}
