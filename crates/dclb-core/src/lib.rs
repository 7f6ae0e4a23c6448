//! dclb-core: a packet-level simulator of leaf-spine datacenter fabrics and their load balancers.
//!
//! The engine is pure computation: it takes a validated [`Config`] and returns columnar [`Results`]. It does
//! no file or network I/O; the Python front (`dclb`) owns files, validation messages, storage and plots.
//!
//! Module map, bottom up: each module uses only modules listed above it (`tests/modules.rs` checks that the
//! imports have no circle).
//! * [`units`] — `Time` (ps), `Rate` (bit/s), `Bytes`; [`ids`] — typed ids of nodes, ports, hosts, leaves,
//!   spines, switches and flows (the conversions between kinds are the fabric's); [`rng`] — seeded random
//!   streams, one per entity.
//! * [`config`] — the scenario as the engine reads it; [`sched`] — the event queue with deterministic
//!   tie-breaking, and the push-only [`sched::Schedule`] handlers get; [`hash`] — the flow-key digest.
//! * [`dre`] — the discounting rate estimator, a service ports offer their switch's balancer.
//! * [`transport`] — TCP NewReno/DCTCP, receiver, resequencing buffer.
//! * [`packet`] — packets, their balancer header, the packet arena with the wire-byte books.
//! * [`cx`] — what an event handler gets: the time, a [`sched::Schedule`], the packet arena.
//! * [`port`] — one direction of a link and its queue discipline (admission, ECN, service, rate estimator).
//! * [`fabric`] — leaf-spine topology, ports, routing, static facts.
//! * [`lb`] — the balancer interface, registry, and one module per scheme; [`traffic`] — workloads (CDFs,
//!   mixtures) and traffic patterns.
//! * [`switch`] — the network side: [`switch::Network`] owns the fabric, its ports and the switches with
//!   their balancers, and routes packets through them.
//! * [`host`] — the host stack: [`host::Hosts`] owns the flows (TCP ends, statistics) and the edge
//!   balancers, and sends into the network.
//! * [`memory`] — the memory a run will need, estimated before anything large is allocated; [`runsize`] —
//!   what each source will do, how long the run lasts and how many events it takes, with the rules about
//!   them (the clock's range, work for every source, an event limit); [`metrics`] — the result tables, read
//!   from a finished run's parts.
//! * [`check`] — [`Config::check`], the one authority for whether a config can run; [`build`] — a run's
//!   parts from a checked config.
//! * [`sim`] — [`Simulation`]: the run's parts, the watchdogs and the loop that hands each event to its side.

pub mod build;
pub mod check;
pub mod config;
pub mod cx;
pub mod dre;
pub mod fabric;
pub mod hash;
pub mod host;
pub mod ids;
pub mod lb;
pub mod memory;
pub mod metrics;
pub mod packet;
pub mod port;
mod prefetch;
pub mod rng;
pub mod runsize;
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
