//! Engine-only benchmark: `dclb-bench CONFIG.json` runs a resolved config and prints events/s, wall time and
//! the engine's memory estimate. `dclb bench` (Python) is the user-facing command; this binary exists for
//! profiling the engine without Python in the picture (perf, callgrind).
//!
//! `dclb-bench CONFIG.json --digest` also prints one 64-bit digest of the run's per-flow table (every column,
//! every row) and of its scheme counters. A refactoring that must not change behaviour is checked by
//! comparing digests before and after: the digest hashes the `Debug` text of the values, and `Debug` prints
//! floats with the shortest text that round-trips, so two digests agree only if every value agrees bit for bit.

use std::time::Instant;

/// FNV-1a, 64 bits: stable across builds and platforms (std's `DefaultHasher` promises neither).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let digest = args.iter().any(|a| a == "--digest");
    let path = args.iter().find(|a| !a.starts_with("--")).cloned().unwrap_or_else(|| {
        eprintln!("usage: dclb-bench CONFIG.json [--digest]   (a resolved engine config, e.g. from `dclb run --dump-config`)");
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
    if digest {
        let flows = fnv1a(format!("{:?}", r.flows.columns).as_bytes());
        let counters = fnv1a(format!("{} {:?}", s.probes_sent, s.scheme_counters).as_bytes());
        println!("digest flows {flows:016x} ({} rows) | events {} | probes {} counters {counters:016x} {:?}",
            r.flows.rows(), s.events, s.probes_sent, s.scheme_counters);
    }
}
