//! Memory: what a run will need, estimated before anything large is allocated, and the limit it is held to.
//!
//! A scenario's numbers can ask for more memory than the machine has: a billion flows, 100,000 leaves, a
//! sampler row every 0.1 ns. Allocating first would abort the process (Rust does not recover from a failed
//! allocation), so the check estimates the run's memory from the config, in closed form, before it builds
//! anything, and refuses a run whose estimate exceeds the limit its caller gives (the Python front passes
//! the available physical memory, or `DCLB_MEMORY_LIMIT`). What grows with a scenario's numbers:
//!
//! ```text
//!  fabric    every port (hosts + leaves x (hosts + uplinks) + spines x leaves x links) and the tables over
//!            pairs of leaves (routes, path delays, balancer state: about leaves^2 x uplinks entries); edge
//!            schemes add per-host tables over (destination leaf, path)
//!  flows     the flow table, each flow's spec while the traffic is drawn, and the per-flow results (the
//!            engine's table, its Arrow copy, what Python computes from it): about 1 KB a flow
//!  sampler   one row per sampled port and flow per interval, over the horizon or, without one, at least
//!            over the span of the arrivals: about 128 B a row
//! ```
//!
//! The check estimates in two steps, each before what it guards is allocated: the fabric's part (and the
//! sampler's, given a horizon) before the fabric is built, then the whole run once the fabric is built and
//! the traffic checked, before any flow is drawn. What the config does not bound (the packets in flight,
//! sampler rows of a run that lasts longer than its arrivals) is watched while the run goes on:
//! [`crate::Simulation`] adds it up every [`WATCH_EVENTS`] events and stops the run with an error naming the
//! cause. The per-item constants were measured (peak resident memory of `dclb run` against flow and row
//! counts) and rounded up; an estimate is a floor of what a run uses, not a promise.

use crate::config::Config;
use crate::fabric::Port;
use crate::host::Flow;
use crate::lb::{find_scheme, Placement};
use crate::traffic::FlowSpec;
use std::mem::size_of;

/// Bytes a flow costs beyond its engine structures: its row of the result table, the Arrow copy the
/// binding hands to Python, and what the front computes from them (about 660 B measured with ECMP; flow
/// entries in balancers' tables come on top).
const RESULT_BYTES_PER_FLOW: f64 = 512.0;

/// Bytes a sampler row costs from the engine's vectors to the Arrow table Python gets: about 90 B measured
/// (the quickstart sampled every 5 µs, 4.6 M rows: +410 MB peak RSS), 218 B before the name columns held
/// static strings instead of a `String` per row.
pub const BYTES_PER_SAMPLE_ROW: f64 = 128.0;

/// Per (leaf, destination leaf, uplink): a balancer's per-destination state (CONGA's tables, for one).
const BALANCER_BYTES_PER_LEAF_PATH: f64 = 16.0;

/// Per (host, destination leaf, path) of an edge scheme: weights and timers (Clove's, for one).
const EDGE_BYTES_PER_HOST_PATH: f64 = 24.0;

/// The running simulation adds up its memory every this many events.
pub const WATCH_EVENTS: u64 = 1 << 16;

/// The most memory a run may use, and where that number comes from (said in the refusal).
#[derive(Clone, Debug)]
pub struct MemoryLimit {
    pub bytes: u64,
    /// For the message: "the available memory; ..." or "DCLB_MEMORY_LIMIT".
    pub source: String,
}

/// One part of an estimate: what it is, the field that sets its size, its bytes and how to shrink it.
#[derive(Clone, Debug)]
pub struct Part {
    pub what: String,
    pub field: String,
    pub bytes: f64,
    pub hint: String,
}

/// A run's memory, part by part.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    pub parts: Vec<Part>,
}

impl Estimate {
    pub fn total(&self) -> f64 {
        self.parts.iter().map(|p| p.bytes).sum()
    }

    /// The estimate of a config before its fabric is built: the fabric, and the sampler over the horizon
    /// when there is one. Needs only [`Config::validate`] to have passed (and not even that: it computes
    /// in floating point and never allocates more than its parts).
    pub fn before_build(cfg: &Config) -> Estimate {
        let mut e = Estimate { parts: vec![fabric_part(cfg)] };
        if let Some(h) = cfg.run.horizon_us {
            e.parts.extend(sampler_part(cfg, h));
        }
        e
    }

    /// The estimate of the whole run: the fabric, `flows` (per source: count and the field that sets it)
    /// and the sampler over the horizon, or without one over `span_us`, the span of the arrivals.
    pub fn of_run(cfg: &Config, flows: &[(f64, String)], span_us: f64) -> Estimate {
        let mut e = Estimate { parts: vec![fabric_part(cfg)] };
        e.parts.extend(flows_part(cfg, flows));
        e.parts.extend(sampler_part(cfg, cfg.run.horizon_us.unwrap_or(span_us)));
        e
    }

    /// Nothing when the estimate fits `limit` (or there is no limit), else the one-line refusal: the
    /// field behind the largest part, the estimate with its main parts, the limit and how to shrink it.
    pub fn within(&self, limit: Option<&MemoryLimit>) -> Result<(), String> {
        let Some(limit) = limit else { return Ok(()) };
        let total = self.total();
        if total <= limit.bytes as f64 {
            return Ok(());
        }
        let top = self.parts.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes)).expect("an estimate has a part");
        let parts: Vec<String> = self.parts.iter().filter(|p| p.bytes >= total / 100.0).map(|p| format!("{}: {}", p.what, size(p.bytes))).collect();
        Err(format!(
            "{}: the run would need about {} of memory ({}), more than the {} it may use ({}); {}",
            top.field,
            size(total),
            parts.join("; "),
            size(limit.bytes as f64),
            limit.source,
            top.hint
        ))
    }
}

/// Bytes in decimal units, as dclb writes sizes (1 KB = 1000 B).
pub fn size(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut v = bytes;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The fabric: ports, nodes, tables over pairs of leaves, switch and edge balancer state.
fn fabric_part(cfg: &Config) -> Part {
    let t = &cfg.topology;
    let (l, s, h, k) = (t.leaves as f64, t.spines as f64, t.hosts_per_leaf as f64, t.links_per_pair as f64);
    let (hosts, uplinks) = (l * h, s * k);
    let ports = hosts + l * (h + uplinks) + s * l * k;
    let per_host = ports * size_of::<Port>() as f64 + (hosts + l + s) * 16.0;
    // Per (leaf, destination leaf): a path delay per uplink, the route and path-tag lists (two vectors),
    // and balancer state; per spine and leaf: routes and link facts.
    let pairs = l * l;
    let edge = find_scheme(&cfg.lb.scheme).is_ok_and(|spec| spec.placement == Placement::Edge);
    let edge_tables = if edge { hosts * l * uplinks * EDGE_BYTES_PER_HOST_PATH } else { 0.0 };
    let per_pair = pairs * (48.0 + uplinks * (8.0 + 4.0 + 2.0 + BALANCER_BYTES_PER_LEAF_PATH)) + s * l * (24.0 + k * (4.0 + 32.0));
    let (field, hint) = if per_pair > per_host + edge_tables {
        ("topology.leaves", "use fewer leaves (tables over every pair of leaves grow with their square)")
    } else {
        ("topology.hosts_per_leaf", "use fewer hosts or leaves")
    };
    Part { what: format!("fabric of {ports:.0} ports"), field: field.into(), bytes: per_host + per_pair + edge_tables, hint: hint.into() }
}

/// The flows: per source `(count, field)`; the field of the largest source names the part.
fn flows_part(cfg: &Config, flows: &[(f64, String)]) -> Option<Part> {
    let total: f64 = flows.iter().map(|(n, _)| n).sum();
    let (_, field) = flows.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
    let uplinks = cfg.topology.spines as f64 * cfg.topology.links_per_pair as f64;
    let per_flow = (size_of::<Flow>() + size_of::<FlowSpec>()) as f64 + 8.0 * uplinks + RESULT_BYTES_PER_FLOW;
    // A stationary start's pre-loaded flows are named apart: a user who did not write them must see where they came from.
    let preloaded: f64 = flows.iter().filter(|(_, f)| f == "run.start").map(|(n, _)| n).sum();
    let (what, hint) = if preloaded > 0.0 {
        (format!("{total:.0} flows, {preloaded:.0} of them pre-loaded by the stationary start"), "make fewer flows, or use run.start = \"empty\" with a warm-up")
    } else {
        (format!("{total:.0} flows"), "make fewer flows")
    };
    Some(Part { what, field: field.clone(), bytes: total * per_flow, hint: hint.into() })
}

/// The sampler's rows over `duration_us` of simulated time (none without a sampler).
fn sampler_part(cfg: &Config, duration_us: f64) -> Option<Part> {
    let s = cfg.run.sampler.as_ref()?;
    let t = &cfg.topology;
    let (l, sp, h, k) = (t.leaves as f64, t.spines as f64, t.hosts_per_leaf as f64, t.links_per_pair as f64);
    let switch_ports = l * (h + sp * k) + sp * l * k;
    let ports = s.ports.as_ref().map_or(switch_ports, |p| p.len() as f64);
    let rows = (duration_us / s.interval_us).floor().max(0.0) + 1.0;
    let rows = rows * (ports + s.flows.len() as f64);
    let over = if cfg.run.horizon_us.is_some() { "over the horizon" } else { "at least, over the arrivals" };
    Some(Part {
        what: format!("sampler {rows:.3e} rows {over}"),
        field: "run.sampler.interval_us".into(),
        bytes: rows * BYTES_PER_SAMPLE_ROW,
        hint: "sample less often, fewer ports, or over a shorter run.horizon_us".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SamplerConfig;

    fn limit(bytes: u64) -> MemoryLimit {
        MemoryLimit { bytes, source: "test".into() }
    }

    #[test]
    fn sizes_are_decimal() {
        assert_eq!(size(999.0), "999 B");
        assert_eq!(size(1500.0), "1.5 KB");
        assert_eq!(size(2.5e12), "2.5 TB");
    }

    #[test]
    fn the_default_fabric_is_small_and_large_ones_are_named() {
        let cfg = Config::default();
        let e = Estimate::before_build(&cfg);
        assert!(e.total() < 1e6, "{}", e.total());
        e.within(Some(&limit(1_000_000))).unwrap();
        // 100,000 leaves: tables over 10^10 pairs of leaves.
        let mut cfg = Config::default();
        cfg.topology.leaves = 100_000;
        let err = Estimate::before_build(&cfg).within(Some(&limit(16_000_000_000))).unwrap_err();
        assert!(err.starts_with("topology.leaves: the run would need about "), "{err}");
        assert!(err.contains("more than the 16.0 GB it may use (test); use fewer leaves"), "{err}");
        // Ten million hosts per leaf: ports.
        let mut cfg = Config::default();
        cfg.topology.hosts_per_leaf = 10_000_000;
        let err = Estimate::before_build(&cfg).within(Some(&limit(16_000_000_000))).unwrap_err();
        assert!(err.starts_with("topology.hosts_per_leaf: "), "{err}");
        // No limit, no refusal.
        Estimate::before_build(&cfg).within(None).unwrap();
    }

    #[test]
    fn flows_and_sampler_rows_count() {
        let mut cfg = Config::default();
        let e = Estimate::of_run(&cfg, &[(1e9, "traffic.sources[0].flows".into())], 0.0);
        assert!(e.total() > 1e12);
        assert!(e.within(Some(&limit(1 << 34))).unwrap_err().starts_with("traffic.sources[0].flows: the run would need about 1."));
        // One row per port per interval: 0.1 ns over 1 ms on 64 switch ports is 6.4 x 10^8 rows.
        cfg.run.sampler = Some(SamplerConfig { interval_us: 1e-4, ..Default::default() });
        let e = Estimate::of_run(&cfg, &[(100.0, "traffic.sources[0].flows".into())], 1000.0);
        let err = e.within(Some(&limit(1 << 34))).unwrap_err();
        assert!(err.starts_with("run.sampler.interval_us: "), "{err}");
        assert!(err.contains("sampler 6.400e8 rows at least, over the arrivals"), "{err}");
    }

    #[test]
    fn pre_loaded_flows_are_named_in_the_refusal() {
        let cfg = Config::default();
        let flows = [(4e8, "traffic.sources[0].flows".to_string()), (6e8, "run.start".to_string())];
        let err = Estimate::of_run(&cfg, &flows, 0.0).within(Some(&limit(1 << 34))).unwrap_err();
        assert!(err.starts_with("run.start: "), "{err}");
        assert!(err.contains("1000000000 flows, 600000000 of them pre-loaded by the stationary start"), "{err}");
        assert!(err.ends_with("or use run.start = \"empty\" with a warm-up"), "{err}");
    }
}
