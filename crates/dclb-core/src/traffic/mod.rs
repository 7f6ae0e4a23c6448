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

pub mod cdf;

use crate::config::{Config, DeadlineModel, LoadBasis, Pattern, SourceConfig, TransportKind};
use crate::fabric::Fabric;
use crate::rng::{Rng, Stream};
use crate::transport::TcpParams;
use crate::units::{Rate, Time};
use cdf::{Cdf, Mixture};

/// Size used for flows that never end (long-lived TCP or UDP): effectively infinite.
pub const UNBOUNDED: u64 = u64::MAX / 4;

/// One flow to simulate.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub source: u16,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
    pub transport: TransportKind,
    pub best_effort: bool,
    /// Absolute deadline, `Time::ZERO` if none.
    pub deadline: Time,
    pub udp_rate: Rate,
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
}

fn size_model(s: &SourceConfig) -> Option<Mixture> {
    if s.workload.is_empty() {
        None
    } else {
        Some(Mixture::new(s.workload.iter().map(|c| (c.weight, Cdf::new(c.points.clone()))).collect()))
    }
}

/// Capacity of the senders' access links and of their leaves' working uplinks, in bits per second.
pub fn capacities(fabric: &Fabric, senders: &[u32]) -> (f64, f64) {
    let access: f64 = senders.iter().map(|&h| fabric.ports[fabric.host_nic(h) as usize].rate.bps() as f64).sum();
    let mut leaves: Vec<u32> = senders.iter().map(|&h| fabric.facts.leaf_of_host(h)).collect();
    leaves.sort_unstable();
    leaves.dedup();
    let mut up = 0.0;
    for l in leaves {
        for u in 0..fabric.facts.uplinks {
            let p = &fabric.ports[fabric.uplink_port(l, u) as usize];
            if p.up {
                up += p.rate.bps() as f64;
            }
        }
    }
    (access, up)
}

/// Generates every flow of the scenario, sorted by start time (ties keep source order).
pub fn generate(cfg: &Config, fabric: &Fabric, tp: &TcpParams) -> (Vec<FlowSpec>, Vec<SourceInfo>) {
    let mut flows = Vec::new();
    let mut infos = Vec::new();
    let hpl = fabric.facts.hosts_per_leaf;
    for (si, s) in cfg.sources.iter().enumerate() {
        let mut rng = Rng::derive(cfg.seed, Stream::Traffic, si as u64);
        let sizes = size_model(s);
        let mean = sizes.as_ref().map(|m| m.mean()).or(s.size_bytes.map(|b| b as f64)).unwrap_or(0.0);
        let (access, fab) = capacities(fabric, &s.senders);
        let mut info = SourceInfo { mean_size: mean, offered_bps: 0.0, access_capacity_bps: access, fabric_capacity_bps: fab, flows: 0 };
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
                if a != b && (!s.inter_leaf_only || a / hpl != b / hpl) {
                    return (a, b);
                }
            }
        };
        let start0 = Time::from_us_f64(s.start_us);
        let push = |rng: &mut Rng, src: u32, dst: u32, size: u64, start: Time, flows: &mut Vec<FlowSpec>| {
            let deadline = match s.deadline {
                DeadlineModel::None => Time::ZERO,
                DeadlineModel::Fixed { us } => start + Time::from_us_f64(us),
                DeadlineModel::Uniform { lo_us, hi_us } => start + Time::from_us_f64(lo_us + (hi_us - lo_us) * rng.unit()),
                DeadlineModel::Slack { factor } => {
                    let ideal = fabric.ideal_fct(src, dst, size, &cfg.transport);
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
            });
        };
        let before = flows.len();
        match s.pattern {
            Pattern::Poisson => {
                let basis = match s.load_basis {
                    LoadBasis::Access => access,
                    LoadBasis::Fabric => fab,
                };
                let offered = s.load.unwrap_or(0.0) * basis;
                info.offered_bps = offered;
                let mean_gap_s = 8.0 * mean / offered;
                let end = s.duration_us.map(|d| start0 + Time::from_us_f64(d));
                let max_flows = s.flows.unwrap_or(u64::MAX);
                let mut t = start0;
                let mut n = 0u64;
                loop {
                    t += Time((rng.exp(mean_gap_s) * 1e12) as u64);
                    if n >= max_flows || end.is_some_and(|e| t >= e) {
                        break;
                    }
                    let (a, b) = pick_pair(&mut rng);
                    let size = draw_size(&mut rng);
                    push(&mut rng, a, b, size, t, &mut flows);
                    n += 1;
                }
            }
            Pattern::Group => {
                for _ in 0..s.flows.unwrap_or(0) {
                    let (a, b) = pick_pair(&mut rng);
                    let size = draw_size(&mut rng);
                    let t = start0 + Time::from_us_f64(s.spread_us * rng.unit());
                    push(&mut rng, a, b, size, t, &mut flows);
                }
            }
            Pattern::Incast => {
                let dst = s.receivers[0];
                for r in 0..s.rounds {
                    let t = start0 + Time::from_us_f64(s.period_us * r as f64);
                    for &a in s.senders.iter().filter(|&&a| a != dst) {
                        let size = draw_size(&mut rng);
                        push(&mut rng, a, dst, size, t, &mut flows);
                    }
                }
            }
            Pattern::LongLived => {
                for (i, &a) in s.senders.iter().enumerate() {
                    let b = s.receivers[i % s.receivers.len()];
                    if a == b {
                        continue;
                    }
                    let size = s.size_bytes.unwrap_or(UNBOUNDED);
                    push(&mut rng, a, b, size, start0, &mut flows);
                }
            }
            Pattern::List => {
                for l in &s.list {
                    let start = Time::from_us_f64(l.start_us);
                    let deadline = l.deadline_us.map(|d| start + Time::from_us_f64(d)).unwrap_or(Time::ZERO);
                    flows.push(FlowSpec {
                        source: si as u16,
                        src: l.src,
                        dst: l.dst,
                        size: l.size_bytes,
                        start,
                        transport: s.transport,
                        best_effort: s.best_effort,
                        deadline,
                        udp_rate: Rate::from_gbps(s.udp_rate_gbps),
                    });
                }
            }
        }
        info.flows = (flows.len() - before) as u64;
        infos.push(info);
    }
    let _ = tp;
    flows.sort_by_key(|f| f.start);
    (flows, infos)
}
