//! Engine-only benchmark: `dclb-bench CONFIG.json` runs a resolved config and prints events/s, wall time and
//! the engine's memory estimate. `dclb bench` (Python) is the user-facing command; this binary exists for
//! profiling the engine without Python in the picture (perf, callgrind).
//!
//! `dclb-bench CONFIG.json --digest` also prints one 64-bit digest of the run's per-flow table (every column,
//! every row) and of its scheme counters. A refactoring that must not change behaviour is checked by
//! comparing digests before and after: the digest hashes the `Debug` text of the values, and `Debug` prints
//! floats with the shortest text that round-trips, so two digests agree only if every value agrees bit for bit.
//! `--digest` also prints a digest of the per-port table.
//!
//! It also prints the cost model's counts: packets serialised on any port (hops), data packets sent, events
//! per data packet.
//!
//! Other options: `--event-driven` runs every port event-driven (no lazily drained switch ports; for
//! comparing the two), `--dump PREFIX` writes the flow, port and switch tables as `PREFIX.{flows,ports,switches}.tsv`
//! (one row per line, values as `Debug` prints them) for diffing two runs.

use dclb_core::metrics::{digest as fnv1a, Column, Table};
use std::io::Write;
use std::time::Instant;

/// Row `i` of a column as `Debug` prints its value.
fn cell(c: &Column, i: usize) -> String {
    match c {
        Column::U64(v) => format!("{:?}", v[i]),
        Column::F64(v) => format!("{:?}", v[i]),
        Column::Bool(v) => format!("{:?}", v[i]),
        Column::Str(v) => v[i].to_string(),
        Column::U64List { width, values } => format!("{:?}", &values[i * width..(i + 1) * width]),
        Column::OptF64(v) => format!("{:?}", v[i]),
        Column::OptBool(v) => format!("{:?}", v[i]),
    }
}

fn dump(t: &Table, path: &str) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap_or_else(|e| panic!("{path}: {e}")));
    writeln!(f, "{}", t.columns.iter().map(|(n, _)| *n).collect::<Vec<_>>().join("\t")).unwrap();
    for i in 0..t.rows() {
        writeln!(f, "{}", t.columns.iter().map(|(_, c)| cell(c, i)).collect::<Vec<_>>().join("\t")).unwrap();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let digest = args.iter().any(|a| a == "--digest");
    let event_driven = args.iter().any(|a| a == "--event-driven");
    let dump_prefix = args.iter().position(|a| a == "--dump").map(|i| args.get(i + 1).cloned().expect("--dump PREFIX"));
    let path = args.iter().enumerate().find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--dump")).map(|(_, a)| a.clone()).unwrap_or_else(|| {
        eprintln!("usage: dclb-bench CONFIG.json [--digest] [--event-driven] [--dump PREFIX]   (a resolved engine config, e.g. from `dclb run --dump-config`)");
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
    if event_driven {
        sim.set_lazy_ports(false);
    }
    let build = t0.elapsed().as_secs_f64();
    sim.run_to_end();
    let wall = t0.elapsed().as_secs_f64();
    let r = sim.results();
    let s = &r.stats;
    println!("flows {} completed {} | events {} | wall {:.3} s (setup {:.3} s) | {:.2} M events/s | sim {:.1} ms | engine ~{:.1} MB, peak packets {} peak active flows {}",
        s.flows_total, s.flows_completed, s.events, wall, build, s.events as f64 / wall / 1e6, s.sim_time_us / 1e3,
        s.engine_bytes as f64 / 1e6, s.peak_packets_in_flight, s.peak_flows_active);
    // The cost model's denominators (docs/performance.md): packets serialised on any port (hops) and data
    // packets sent by the flows' senders (retransmissions included).
    let hops: u64 = r.ports.u64s("packets_sent").iter().sum();
    let data: u64 = r.flows.u64s("packets_sent").iter().sum();
    println!("hops {hops} | data packets {data} | {:.2} events per data packet | {:.2} hops per data packet",
        s.events as f64 / data.max(1) as f64, hops as f64 / data.max(1) as f64);
    if digest {
        let flows = r.flows.digest();
        let counters = fnv1a(format!("{} {:?}", s.probes_sent, s.scheme_counters).as_bytes());
        println!("digest flows {flows:016x} ({} rows) | events {} | probes {} counters {counters:016x} {:?}",
            r.flows.rows(), s.events, s.probes_sent, s.scheme_counters);
        let ports = r.ports.digest();
        println!("digest ports {ports:016x} | bytes created {} delivered {} dropped {} in flight {}",
            s.wire_bytes_created, s.wire_bytes_delivered, s.wire_bytes_dropped, s.wire_bytes_in_flight);
    }
    if let Some(prefix) = dump_prefix {
        dump(&r.flows, &format!("{prefix}.flows.tsv"));
        dump(&r.ports, &format!("{prefix}.ports.tsv"));
        dump(&r.switches, &format!("{prefix}.switches.tsv"));
    }
}
