//! Traffic: turning the scenario's sources into a list of flows.
//!
//! Each source has a pattern (Poisson arrivals at a load, a group-to-group batch, an incast, long-lived flows,
//! an explicit list), sender and receiver host sets, a size model, a class, a deadline model and a transport.
//! All randomness comes from the traffic stream of the scenario seed, one sub-stream per source, so the flows
//! do not depend on the load balancer.
//!
//! **Load.** A Poisson source at load ρ offers ρ·C bits per second, where C is its basis capacity: `access`
//! is the sum of the senders' host link rates; `fabric` is the sum of the working uplink rates of the leaves
//! that hold senders. Arrivals have rate ρ·C / (8·mean size), with the mean of the interpolated CDF.
//!
//! **Measurement window.** With `run.warmup_us` ([`window`]), a poisson source's arrivals start as usual
//! but those before the warm-up ends are not measured; its `flows` (or `duration_us`) then counts the
//! arrivals of its measurement window, which opens when the warm-up ends, and its arrivals go on for
//! `run.cooldown_us` after the window closes. Each flow carries whether it is measured; a flow of any
//! other pattern is measured when it starts after the warm-up. The same draws are made in the same order
//! as without a window (a window of no warm-up and no cool-down makes the same flows, all measured).

pub mod cdf;
pub mod stationary;
pub mod window;

use crate::config::{Config, DeadlineModel, LoadBasis, Pattern, SourceConfig, TransportKind};
use crate::fabric::Fabric;
use crate::ids::{HostId, LeafId};
use crate::rng::{Rng, Stream};
use crate::transport::TcpParams;
use crate::units::{Rate, Time};
use cdf::{Cdf, Mixture};
use window::{Plan, SourceWindow};

/// Size used for flows that never end (long-lived TCP or UDP): effectively infinite.
pub const UNBOUNDED: u64 = u64::MAX / 4;

/// One flow to simulate.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub source: u16,
    pub src: HostId,
    pub dst: HostId,
    pub size: u64,
    pub start: Time,
    pub transport: TransportKind,
    pub best_effort: bool,
    /// Absolute deadline, `Time::ZERO` if none.
    pub deadline: Time,
    pub udp_rate: Rate,
    /// Whether the flow counts in the results: always without a measurement window, else whether it
    /// arrived in its source's window (see the module doc).
    pub measured: bool,
    /// Payload bytes sent and acknowledged before the run: a pre-loaded flow's ([`stationary`]), 0 for any
    /// other. Its sender starts at this sequence number and its receiver expects it.
    pub prior: u64,
    /// Whether the flow was in flight when the run started (a stationary start's, [`stationary`]).
    pub preloaded: bool,
}

/// Per-source facts printed with a run.
#[derive(Clone, Debug)]
pub struct SourceInfo {
    pub mean_size: f64,
    /// Offered load in bits per second (Poisson sources), else 0.
    pub offered_bps: f64,
    pub access_capacity_bps: f64,
    pub fabric_capacity_bps: f64,
    pub flows: u64,
    /// A poisson source's measurement window, when the run has one.
    pub window: Option<SourceWindow>,
}

pub(crate) fn size_model(s: &SourceConfig) -> Option<Mixture> {
    if s.workload.is_empty() {
        None
    } else {
        Some(Mixture::new(s.workload.iter().map(|c| (c.weight, Cdf::new(c.points.clone()))).collect()))
    }
}

/// Whether `src -> dst` may carry a flow of a poisson or group source: two different hosts, on different
/// leaves when the source is inter-leaf only.
pub fn admissible(s: &SourceConfig, hosts_per_leaf: u32, src: u32, dst: u32) -> bool {
    src != dst && (!s.inter_leaf_only || src / hosts_per_leaf != dst / hosts_per_leaf)
}

/// Whether some sender and some receiver differ in `key`. With both sets non-empty, this fails exactly
/// when every sender and every receiver has one and the same key (if a sender and a receiver always agree,
/// all of them agree with the first receiver), so one pass over the hosts answers it.
pub fn some_pair_differs(s: &SourceConfig, key: impl Fn(u32) -> u32) -> bool {
    let mut keys = s.senders.iter().chain(&s.receivers).map(|&h| key(h));
    match keys.next() {
        Some(first) => !s.senders.is_empty() && !s.receivers.is_empty() && keys.any(|k| k != first),
        None => false,
    }
}

/// Whether a poisson or group source has an [`admissible`] pair at all, i.e. whether drawing pairs until
/// one is admissible ever ends. An admissible pair differs in host (in leaf, when inter-leaf only).
pub fn has_admissible_pair(s: &SourceConfig, hosts_per_leaf: u32) -> bool {
    if s.inter_leaf_only {
        some_pair_differs(s, |h| h / hosts_per_leaf)
    } else {
        some_pair_differs(s, |h| h)
    }
}

/// The senders of an incast: every sender but the receiver (the first of `receivers`).
fn incast_senders(s: &SourceConfig) -> impl Iterator<Item = u32> + '_ {
    let dst = s.receivers[0];
    s.senders.iter().copied().filter(move |&a| a != dst)
}

/// The pairs of a long-lived source: sender `i` to receiver `i mod n`, skipping a host paired with itself.
fn long_lived_pairs(s: &SourceConfig) -> impl Iterator<Item = (u32, u32)> + '_ {
    s.senders.iter().enumerate().map(|(i, &a)| (a, s.receivers[i % s.receivers.len()])).filter(|(a, b)| a != b)
}

/// How many flows source `s` makes, when that is known without drawing them: for every pattern but a
/// poisson source bounded by `duration_us`, whose count depends on its random arrivals. (In a run with a
/// measurement window a poisson source's count is random too: see [`window::expected_arrivals`].)
pub fn planned_flows(s: &SourceConfig) -> Option<u64> {
    match s.pattern {
        Pattern::Poisson if s.duration_us.is_some() => None,
        Pattern::Poisson | Pattern::Group => s.flows,
        Pattern::Incast => Some(s.rounds as u64 * incast_senders(s).count() as u64),
        Pattern::LongLived => Some(long_lived_pairs(s).count() as u64),
        Pattern::List => Some(s.list.len() as u64),
    }
}

/// The facts that set source `s`'s arrival rate (its `flows` count is filled in by [`generate`]).
pub fn source_info(fabric: &Fabric, s: &SourceConfig) -> SourceInfo {
    let mean = size_model(s).map(|m| m.mean()).or(s.size_bytes.map(|b| b as f64)).unwrap_or(0.0);
    let (access, fab) = capacities(fabric, &s.senders);
    let offered = match (s.pattern, s.load_basis) {
        (Pattern::Poisson, LoadBasis::Access) => s.load.unwrap_or(0.0) * access,
        (Pattern::Poisson, LoadBasis::Fabric) => s.load.unwrap_or(0.0) * fab,
        _ => 0.0,
    };
    SourceInfo { mean_size: mean, offered_bps: offered, access_capacity_bps: access, fabric_capacity_bps: fab, flows: 0, window: None }
}

/// Capacity of the senders' access links and of their leaves' working uplinks, in bits per second.
pub fn capacities(fabric: &Fabric, senders: &[u32]) -> (f64, f64) {
    // The config's host numbers, as ids.
    let senders = senders.iter().map(|&h| HostId(h));
    let access: f64 = senders.clone().map(|h| fabric.port(fabric.host_nic(h)).rate.bps() as f64).sum();
    let mut leaves: Vec<LeafId> = senders.map(|h| fabric.facts.leaf_of_host(h)).collect();
    leaves.sort_unstable();
    leaves.dedup();
    let mut up = 0.0;
    for l in leaves {
        for u in 0..fabric.facts.uplinks {
            let p = fabric.port(fabric.uplink_port(l, u));
            if p.up {
                up += p.rate.bps() as f64;
            }
        }
    }
    (access, up)
}

/// Every flow of a run, with its sources' facts and what a stationary start pre-loaded.
pub struct Traffic {
    pub flows: Vec<FlowSpec>,
    pub sources: Vec<SourceInfo>,
    pub prefill: Option<stationary::PrefillReport>,
}

/// Generates every flow of the scenario, sorted by start time (ties keep source order).
pub fn generate(cfg: &Config, fabric: &Fabric, tp: &TcpParams) -> (Vec<FlowSpec>, Vec<SourceInfo>) {
    let t = generate_all(cfg, fabric, tp);
    (t.flows, t.sources)
}

/// [`generate`], with a stationary start's pre-loaded flows ([`stationary`]) among the flows (they start
/// within a round trip of their source's start) and its report.
pub fn generate_all(cfg: &Config, fabric: &Fabric, tp: &TcpParams) -> Traffic {
    let (mut flows, infos) = arrivals(cfg, fabric);
    // The stationary start matches its population to the load over the window: the span of the sources'.
    let windows = infos.iter().filter_map(|i| i.window);
    let span = windows.clone().map(|w| w.opens).min().zip(windows.map(|w| w.closes).max()).unwrap_or((Time::ZERO, Time::ZERO));
    let prefill = stationary::prefill(cfg, fabric, tp, &infos, &flows, span);
    let report = prefill.map(|p| {
        flows.extend(p.flows);
        // Stable: at equal times the pre-loaded flows follow the arrivals, as they were appended.
        flows.sort_by_key(|f| f.start);
        p.report
    });
    Traffic { flows, sources: infos, prefill: report }
}

/// Every source's own flows (no pre-loaded ones), sorted by start time (ties keep source order).
fn arrivals(cfg: &Config, fabric: &Fabric) -> (Vec<FlowSpec>, Vec<SourceInfo>) {
    let mut flows = Vec::new();
    let mut infos = Vec::new();
    let hpl = fabric.facts.hosts_per_leaf;
    let plan = Plan::of(&cfg.run);
    // Without a window every flow is measured; with one, a flow of a pattern other than poisson when it
    // starts after the warm-up (a poisson source's arrivals say for themselves).
    let after_warmup = |start: Time| plan.map_or(true, |p| start >= p.warmup);
    for (si, s) in cfg.sources.iter().enumerate() {
        let mut rng = Rng::derive(cfg.seed, Stream::Traffic, si as u64);
        let sizes = size_model(s);
        let mut info = source_info(fabric, s);
        let draw_size = |rng: &mut Rng| -> u64 {
            match (s.size_bytes, &sizes) {
                (Some(b), _) => b,
                (None, Some(m)) => m.sample(rng),
                (None, None) => UNBOUNDED,
            }
        };
        let pick_pair = |rng: &mut Rng| -> (u32, u32) {
            loop {
                let a = s.senders[rng.below(s.senders.len())];
                let b = s.receivers[rng.below(s.receivers.len())];
                if admissible(s, hpl, a, b) {
                    return (a, b);
                }
            }
        };
        let start0 = Time::from_us_f64(s.start_us);
        // The config's host numbers become ids here, once.
        let push = |rng: &mut Rng, src: u32, dst: u32, size: u64, start: Time, measured: bool, flows: &mut Vec<FlowSpec>| {
            let (src, dst) = (HostId(src), HostId(dst));
            let deadline = match s.deadline {
                DeadlineModel::None => Time::ZERO,
                DeadlineModel::Fixed { us } => start + Time::from_us_f64(us),
                DeadlineModel::Uniform { lo_us, hi_us } => start + Time::from_us_f64(lo_us + (hi_us - lo_us) * rng.unit()),
                DeadlineModel::Slack { factor } => {
                    let ideal = fabric.ideal_fct(src, dst, size, &cfg.transport, cfg.transport.handshakes(s.transport));
                    start + Time((ideal.0 as f64 * factor) as u64)
                }
            };
            flows.push(FlowSpec {
                source: si as u16,
                src,
                dst,
                size,
                start,
                transport: s.transport,
                best_effort: s.best_effort,
                deadline,
                udp_rate: Rate::from_gbps(s.udp_rate_gbps),
                measured,
                prior: 0,
                preloaded: false,
            });
        };
        let before = flows.len();
        match s.pattern {
            Pattern::Poisson => {
                let mean_gap_s = 8.0 * info.mean_size / info.offered_bps;
                let next_arrival = |rng: &mut Rng, t: Time| t + Time((rng.exp(mean_gap_s) * 1e12) as u64);
                match plan {
                    None => {
                        let end = s.duration_us.map(|d| start0 + Time::from_us_f64(d));
                        let max_flows = s.flows.unwrap_or(u64::MAX);
                        let mut t = start0;
                        let mut n = 0u64;
                        loop {
                            t = next_arrival(&mut rng, t);
                            if n >= max_flows || end.is_some_and(|e| t >= e) {
                                break;
                            }
                            let (a, b) = pick_pair(&mut rng);
                            let size = draw_size(&mut rng);
                            push(&mut rng, a, b, size, t, true, &mut flows);
                            n += 1;
                        }
                    }
                    Some(plan) => {
                        // The same draws in the same order as above; only which arrivals are measured, and
                        // where the arrivals stop, differ.
                        let mut w = plan.source_window(start0, s.flows, s.duration_us);
                        let mut t = start0;
                        loop {
                            t = next_arrival(&mut rng, t);
                            let Some(measured) = w.admit(t) else { break };
                            let (a, b) = pick_pair(&mut rng);
                            let size = draw_size(&mut rng);
                            push(&mut rng, a, b, size, t, measured, &mut flows);
                        }
                        info.window = Some(w.window());
                    }
                }
            }
            Pattern::Group => {
                for _ in 0..s.flows.unwrap_or(0) {
                    let (a, b) = pick_pair(&mut rng);
                    let size = draw_size(&mut rng);
                    let t = start0 + Time::from_us_f64(s.spread_us * rng.unit());
                    push(&mut rng, a, b, size, t, after_warmup(t), &mut flows);
                }
            }
            Pattern::Incast => {
                let dst = s.receivers[0];
                for r in 0..s.rounds {
                    let t = start0 + Time::from_us_f64(s.period_us * r as f64);
                    for a in incast_senders(s) {
                        let size = draw_size(&mut rng);
                        push(&mut rng, a, dst, size, t, after_warmup(t), &mut flows);
                    }
                }
            }
            Pattern::LongLived => {
                for (a, b) in long_lived_pairs(s) {
                    let size = s.size_bytes.unwrap_or(UNBOUNDED);
                    push(&mut rng, a, b, size, start0, after_warmup(start0), &mut flows);
                }
            }
            Pattern::List => {
                for l in &s.list {
                    let start = Time::from_us_f64(l.start_us);
                    let deadline = l.deadline_us.map(|d| start + Time::from_us_f64(d)).unwrap_or(Time::ZERO);
                    flows.push(FlowSpec {
                        source: si as u16,
                        src: HostId(l.src),
                        dst: HostId(l.dst),
                        size: l.size_bytes,
                        start,
                        transport: s.transport,
                        best_effort: s.best_effort,
                        deadline,
                        udp_rate: Rate::from_gbps(s.udp_rate_gbps),
                        measured: after_warmup(start),
                        prior: 0,
                        preloaded: false,
                    });
                }
            }
        }
        info.flows = (flows.len() - before) as u64;
        infos.push(info);
    }
    flows.sort_by_key(|f| f.start);
    (flows, infos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ListedFlow, WorkloadComponent};

    #[test]
    fn an_admissible_pair_exists_exactly_when_one_is_drawn_by_brute_force() {
        // Every sender and receiver set drawn from hosts 0..4 on leaves of 2 hosts, both pairing rules.
        let sets: Vec<Vec<u32>> = (1u32..16).map(|m| (0..4).filter(|h| m & (1 << h) != 0).collect()).collect();
        for inter_leaf_only in [false, true] {
            for senders in &sets {
                for receivers in &sets {
                    let s = SourceConfig { senders: senders.clone(), receivers: receivers.clone(), inter_leaf_only, ..Default::default() };
                    let brute = senders.iter().any(|&a| receivers.iter().any(|&b| admissible(&s, 2, a, b)));
                    assert_eq!(has_admissible_pair(&s, 2), brute, "{senders:?} -> {receivers:?}, inter-leaf only: {inter_leaf_only}");
                }
            }
        }
    }

    #[test]
    fn planned_counts_are_what_the_generator_makes() {
        let mut cfg = Config::default();
        (cfg.topology.leaves, cfg.topology.hosts_per_leaf) = (2, 4);
        let workload = vec![WorkloadComponent { weight: 1.0, points: vec![(1000.0, 0.0), (9000.0, 1.0)] }];
        let flow = |src, dst| ListedFlow { start_us: 0.0, src, dst, size_bytes: 100, deadline_us: None };
        let sources = [
            SourceConfig { senders: (0..8).collect(), receivers: (0..8).collect(), workload: workload.clone(), load: Some(0.3), flows: Some(17), ..Default::default() },
            SourceConfig { pattern: Pattern::Group, senders: vec![0, 1], receivers: vec![5], size_bytes: Some(10), flows: Some(9), ..Default::default() },
            SourceConfig { pattern: Pattern::Incast, senders: (0..6).collect(), receivers: vec![3], size_bytes: Some(10), rounds: 3, ..Default::default() },
            SourceConfig { pattern: Pattern::LongLived, senders: (0..6).collect(), receivers: vec![0, 7, 2], ..Default::default() },
            SourceConfig { pattern: Pattern::List, list: vec![flow(0, 4), flow(5, 1)], ..Default::default() },
        ];
        let expected = [17, 9, 15, 4, 2];
        let fabric = Fabric::build(&cfg.topology, &cfg.transport);
        let tp = TcpParams::from_config(&cfg.transport);
        for (s, n) in sources.into_iter().zip(expected) {
            assert_eq!(planned_flows(&s), Some(n), "{:?}", s.pattern);
            cfg.sources = vec![s];
            assert_eq!(generate(&cfg, &fabric, &tp).0.len() as u64, n);
        }
        let by_time = SourceConfig { duration_us: Some(100.0), ..SourceConfig::default() };
        assert_eq!(planned_flows(&by_time), None, "a poisson source bounded by time has no count before it is drawn");
    }
}
