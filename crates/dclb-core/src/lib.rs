//! dclb-core: a packet-level simulator of leaf-spine datacenter fabrics and their load balancers.
//!
//! The engine is pure computation: it takes a validated [`Config`] and returns columnar [`Results`]. It does
//! no file or network I/O; the Python front (`dclb`) owns files, validation messages, storage and plots.
//!
//! Module map:
//! * [`check`] — [`Config::check`], the one authority for whether a config can run.
//! * [`memory`] — the memory a run will need, estimated before anything large is allocated.
//! * [`units`] — `Time` (ps), `Rate` (bit/s), `Bytes`.
//! * [`sched`] — the event queue with deterministic tie-breaking.
//! * [`packet`] — packets, their balancer header, the packet arena.
//! * [`fabric`] — leaf-spine topology, ports and queues, routing, static facts.
//! * [`transport`] — TCP NewReno/DCTCP, receiver, resequencing buffer.
//! * [`lb`] — the balancer interface, registry, and one module per scheme.
//! * [`traffic`] — workloads (CDFs, mixtures) and traffic patterns.
//! * [`port`] — one direction of a link and its queue discipline (admission, ECN, service).
//! * [`sim`] — the state of a run and the event loop; [`build`] constructs it, [`switch`] routes through
//!   switches and their balancers, [`host`] is the host stack (TCP ends, edge balancers, probes).
//! * [`metrics`] — the result tables.

pub mod build;
pub mod check;
pub mod config;
pub mod cx;
pub mod dre;
pub mod fabric;
pub mod hash;
pub mod host;
pub mod lb;
pub mod memory;
pub mod metrics;
pub mod packet;
pub mod port;
mod prefetch;
pub mod rng;
pub mod sched;
mod wheel;
pub mod sim;
pub mod switch;
pub mod traffic;
pub mod transport;
pub mod units;

pub use config::Config;
pub use metrics::Results;
pub use sim::Simulation;

/// Checks a scenario ([`Config::check`]) and runs it to the end; a run the engine had to stop (no progress,
/// see [`Simulation::error`]) is an error too.
pub fn simulate(cfg: &Config) -> Result<Results, String> {
    let mut sim = Simulation::new(cfg)?;
    sim.run_to_end();
    match sim.error() {
        Some(e) => Err(e.to_string()),
        None => Ok(sim.results()),
    }
}
