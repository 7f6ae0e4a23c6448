//! The engine's input: a fully resolved scenario.
//!
//! The Python front validates what a user writes (TOML, `--set` overrides, file paths, host-set syntax) and
//! hands the engine this structure as JSON, with every default filled in and every unit explicit in the field
//! name (`_us` microseconds, `_gbps` gigabits per second, `_bytes`). The engine still checks it
//! ([`Config::validate`]) and answers with an error message naming the field, never a panic.
//!
//! The `Default` values here are the documented defaults of dclb; the Python schema carries the same ones and
//! a test keeps the two in step.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Scenario seed; every random stream derives from it.
    pub seed: u64,
    pub topology: TopologyConfig,
    pub transport: TransportConfig,
    pub lb: LbConfig,
    /// Traffic sources; a run combines all of them.
    pub sources: Vec<SourceConfig>,
    pub run: RunConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            topology: TopologyConfig::default(),
            transport: TransportConfig::default(),
            lb: LbConfig::default(),
            sources: Vec::new(),
            run: RunConfig::default(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TopologyConfig {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Parallel links between each leaf-spine pair.
    pub links_per_pair: u32,
    pub host_rate_gbps: f64,
    pub fabric_rate_gbps: f64,
    /// One-way propagation delay of a host-leaf link.
    pub host_delay_us: f64,
    /// One-way propagation delay of a leaf-spine link.
    pub fabric_delay_us: f64,
    /// Buffer of each switch port in packets (drop-tail), unless `buffer_bytes` is set.
    pub buffer_packets: u32,
    /// Buffer of each switch port in bytes; overrides `buffer_packets` when set.
    pub buffer_bytes: Option<u64>,
    /// ECN marking threshold of switch ports in packets (instantaneous queue). `None`: 65 packets at 10 Gbps,
    /// scaled linearly with the port's rate.
    pub ecn_k_packets: Option<f64>,
    /// Per-role thresholds (`host_up`, `leaf_up`, `leaf_down`, `spine_down`) that override `ecn_k_packets`;
    /// 0 disables marking on that role. Host NICs do not mark unless `host_up` is given here.
    pub ecn_k_by_role: BTreeMap<String, f64>,
    /// Per-link changes: slower or longer links, failed links.
    pub links: Vec<LinkOverride>,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            leaves: 4,
            spines: 4,
            hosts_per_leaf: 8,
            links_per_pair: 1,
            host_rate_gbps: 10.0,
            fabric_rate_gbps: 10.0,
            host_delay_us: 1.0,
            fabric_delay_us: 1.0,
            buffer_packets: 256,
            buffer_bytes: None,
            ecn_k_packets: None,
            ecn_k_by_role: BTreeMap::new(),
            links: Vec::new(),
        }
    }
}

/// Which direction(s) of a leaf-spine link an override applies to.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Both,
    /// Leaf to spine only.
    Up,
    /// Spine to leaf only.
    Down,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    pub leaf: u32,
    pub spine: u32,
    /// Which parallel link; `None` means all links of the pair.
    #[serde(default)]
    pub link: Option<u32>,
    #[serde(default)]
    pub rate_gbps: Option<f64>,
    #[serde(default)]
    pub delay_us: Option<f64>,
    #[serde(default)]
    pub failed: bool,
    #[serde(default)]
    pub direction: Direction,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// TCP payload bytes per full segment.
    pub mss_bytes: u32,
    /// Header bytes added to every data packet on the wire.
    pub header_bytes: u32,
    /// Wire size of a pure ACK, a probe or a cancel notice.
    pub ack_bytes: u32,
    pub init_cwnd_packets: u32,
    /// Initial slow-start threshold; `None` means unbounded.
    pub init_ssthresh_bytes: Option<u64>,
    pub dupack_threshold: u32,
    pub min_rto_us: f64,
    /// RTO before the first RTT sample.
    pub init_rto_us: f64,
    /// Upper bound of the backed-off RTO.
    pub max_rto_us: f64,
    /// Clock granularity G of RFC 6298's RTO formula.
    pub rto_granularity_us: f64,
    pub dctcp_g: f64,
    pub dctcp_alpha_init: f64,
    /// Host NIC queue capacity in packets (drop-tail; the sender's own queue).
    pub nic_queue_packets: u32,
    /// Receiver resequencing buffer: hold out-of-order data up to this long before handing it to TCP.
    /// 0 disables the buffer (plain TCP receiver).
    pub reseq_timeout_us: f64,
    /// SACK loss recovery (RFC 6675) instead of NewReno; receivers then send SACK blocks and D-SACKs.
    pub sack: bool,
    /// With `sack`: undo a recovery's window reduction when D-SACKs show all its retransmissions were
    /// unnecessary (RFC 2883).
    pub dsack_undo: bool,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            mss_bytes: 1460,
            header_bytes: 40,
            ack_bytes: 40,
            init_cwnd_packets: 10,
            init_ssthresh_bytes: None,
            dupack_threshold: 3,
            min_rto_us: 5000.0,
            init_rto_us: 5000.0,
            max_rto_us: 1_000_000.0,
            rto_granularity_us: 0.0,
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: 1.0,
            nic_queue_packets: 10_000,
            reseq_timeout_us: 0.0,
            sack: false,
            dsack_undo: false,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LbConfig {
    pub scheme: String,
    /// Scheme parameters by name; unknown names are rejected against the scheme's declared parameters.
    pub params: BTreeMap<String, serde_json::Value>,
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig { scheme: "ecmp".into(), params: BTreeMap::new() }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Poisson arrivals between random sender/receiver pairs (on different leaves) at a given load.
    Poisson,
    /// A fixed number of flows between two host groups, starting together or spread over an interval.
    Group,
    /// N senders each send one flow to one receiver at the same moment, possibly in repeated rounds.
    Incast,
    /// One unbounded flow per sender, running until the horizon.
    LongLived,
    /// An explicit list of flows.
    List,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    #[default]
    Dctcp,
    Newreno,
    Udp,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LoadBasis {
    /// Offered bytes over the senders' access (host link) capacity.
    Access,
    /// Offered bytes over the uplink capacity of the senders' leaves.
    #[default]
    Fabric,
}

/// How a flow's deadline is drawn.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DeadlineModel {
    #[default]
    None,
    /// Every flow gets the same relative deadline.
    Fixed { us: f64 },
    /// Relative deadline uniform in [lo_us, hi_us].
    Uniform { lo_us: f64, hi_us: f64 },
    /// Relative deadline = factor x the flow's ideal FCT.
    Slack { factor: f64 },
}

/// One component of a workload mixture: a flow-size CDF and its weight (by flow count).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadComponent {
    pub weight: f64,
    /// (size in bytes, cumulative probability) points, non-decreasing in both, ending at probability 1.
    pub points: Vec<(f64, f64)>,
}

/// An explicitly listed flow.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListedFlow {
    pub start_us: f64,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    #[serde(default)]
    pub deadline_us: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SourceConfig {
    pub pattern: Pattern,
    /// Global host indices that send.
    pub senders: Vec<u32>,
    /// Global host indices that receive.
    pub receivers: Vec<u32>,
    /// Flow sizes from a mixture of CDFs; empty when `size_bytes` fixes the size.
    pub workload: Vec<WorkloadComponent>,
    /// Fixed flow size (incast, group, long-lived UDP); overrides `workload`.
    pub size_bytes: Option<u64>,
    /// Poisson: offered load as a fraction of `load_basis` capacity.
    pub load: Option<f64>,
    pub load_basis: LoadBasis,
    /// Number of flows (Poisson: stop after this many; group: exactly this many).
    pub flows: Option<u64>,
    pub start_us: f64,
    /// Poisson: stop generating after this long (when `flows` is not given).
    pub duration_us: Option<f64>,
    /// Group: start times uniform in [start, start + spread].
    pub spread_us: f64,
    /// Incast: repeat the incast this many times ...
    pub rounds: u32,
    /// ... every `period_us`.
    pub period_us: f64,
    pub transport: TransportKind,
    /// UDP sending rate.
    pub udp_rate_gbps: f64,
    pub best_effort: bool,
    pub deadline: DeadlineModel,
    /// Poisson/group: only pick pairs on different leaves.
    pub inter_leaf_only: bool,
    pub list: Vec<ListedFlow>,
}

impl Default for SourceConfig {
    fn default() -> Self {
        SourceConfig {
            pattern: Pattern::Poisson,
            senders: Vec::new(),
            receivers: Vec::new(),
            workload: Vec::new(),
            size_bytes: None,
            load: None,
            load_basis: LoadBasis::Fabric,
            flows: None,
            start_us: 0.0,
            duration_us: None,
            spread_us: 0.0,
            rounds: 1,
            period_us: 0.0,
            transport: TransportKind::Dctcp,
            udp_rate_gbps: 1.0,
            best_effort: false,
            deadline: DeadlineModel::None,
            inter_leaf_only: true,
            list: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SamplerConfig {
    pub interval_us: f64,
    /// Global port ids to sample; `None` samples every switch port.
    pub ports: Option<Vec<u32>>,
    /// Flow ids whose delivered bytes are recorded.
    pub flows: Vec<u32>,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig { interval_us: 100.0, ports: None, flows: Vec::new() }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Stop at this simulated time; `None` runs until every flow has ended.
    pub horizon_us: Option<f64>,
    pub sampler: Option<SamplerConfig>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { horizon_us: None, sampler: None }
    }
}

fn positive(v: f64, field: &str) -> Result<(), String> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(format!("{field}: must be a positive number, got {v}"))
    }
}

fn non_negative(v: f64, field: &str) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{field}: must be zero or positive, got {v}"))
    }
}

impl Config {
    /// Checks everything the engine relies on. Messages start with the field's dotted name.
    pub fn validate(&self) -> Result<(), String> {
        let t = &self.topology;
        for (v, f) in [(t.leaves, "topology.leaves"), (t.spines, "topology.spines"), (t.hosts_per_leaf, "topology.hosts_per_leaf"), (t.links_per_pair, "topology.links_per_pair")] {
            if v == 0 {
                return Err(format!("{f}: must be at least 1, got 0"));
            }
        }
        if t.spines * t.links_per_pair > 512 {
            return Err("topology: at most 512 uplinks per leaf (spines x links_per_pair)".into());
        }
        positive(t.host_rate_gbps, "topology.host_rate_gbps")?;
        positive(t.fabric_rate_gbps, "topology.fabric_rate_gbps")?;
        non_negative(t.host_delay_us, "topology.host_delay_us")?;
        non_negative(t.fabric_delay_us, "topology.fabric_delay_us")?;
        if t.buffer_packets == 0 && t.buffer_bytes.is_none() {
            return Err("topology.buffer_packets: must be at least 1".into());
        }
        if let Some(k) = t.ecn_k_packets {
            non_negative(k, "topology.ecn_k_packets")?;
        }
        for (role, k) in &t.ecn_k_by_role {
            if !["host_up", "leaf_up", "leaf_down", "spine_down"].contains(&role.as_str()) {
                return Err(format!("topology.ecn_k_by_role.{role}: unknown port role; allowed: host_up, leaf_up, leaf_down, spine_down"));
            }
            non_negative(*k, &format!("topology.ecn_k_by_role.{role}"))?;
        }
        for (i, l) in t.links.iter().enumerate() {
            let f = format!("topology.links[{i}]");
            if l.leaf >= t.leaves {
                return Err(format!("{f}.leaf: {} is out of range (0..{})", l.leaf, t.leaves));
            }
            if l.spine >= t.spines {
                return Err(format!("{f}.spine: {} is out of range (0..{})", l.spine, t.spines));
            }
            if let Some(k) = l.link {
                if k >= t.links_per_pair {
                    return Err(format!("{f}.link: {k} is out of range (0..{})", t.links_per_pair));
                }
            }
            if let Some(r) = l.rate_gbps {
                positive(r, &format!("{f}.rate_gbps"))?;
            }
            if let Some(d) = l.delay_us {
                non_negative(d, &format!("{f}.delay_us"))?;
            }
        }
        let tp = &self.transport;
        if tp.mss_bytes == 0 || tp.mss_bytes > 65_000 {
            return Err(format!("transport.mss_bytes: must be in 1..=65000, got {}", tp.mss_bytes));
        }
        if tp.ack_bytes == 0 {
            return Err("transport.ack_bytes: must be at least 1".into());
        }
        if tp.init_cwnd_packets == 0 {
            return Err("transport.init_cwnd_packets: must be at least 1".into());
        }
        if tp.dupack_threshold == 0 {
            return Err("transport.dupack_threshold: must be at least 1".into());
        }
        positive(tp.min_rto_us, "transport.min_rto_us")?;
        positive(tp.init_rto_us, "transport.init_rto_us")?;
        positive(tp.max_rto_us, "transport.max_rto_us")?;
        non_negative(tp.rto_granularity_us, "transport.rto_granularity_us")?;
        if !(tp.dctcp_g > 0.0 && tp.dctcp_g <= 1.0) {
            return Err(format!("transport.dctcp_g: must be in (0, 1], got {}", tp.dctcp_g));
        }
        if !(0.0..=1.0).contains(&tp.dctcp_alpha_init) {
            return Err(format!("transport.dctcp_alpha_init: must be in [0, 1], got {}", tp.dctcp_alpha_init));
        }
        if tp.nic_queue_packets == 0 {
            return Err("transport.nic_queue_packets: must be at least 1".into());
        }
        non_negative(tp.reseq_timeout_us, "transport.reseq_timeout_us")?;
        if let Some(h) = self.run.horizon_us {
            positive(h, "run.horizon_us")?;
        }
        if let Some(s) = &self.run.sampler {
            positive(s.interval_us, "run.sampler.interval_us")?;
        }
        let hosts = t.leaves * t.hosts_per_leaf;
        for (i, s) in self.sources.iter().enumerate() {
            s.validate(&format!("traffic.sources[{i}]"), hosts, t.hosts_per_leaf)?;
        }
        Ok(())
    }
}

impl SourceConfig {
    fn validate(&self, f: &str, hosts: u32, hosts_per_leaf: u32) -> Result<(), String> {
        for (set, name) in [(&self.senders, "senders"), (&self.receivers, "receivers")] {
            if let Some(h) = set.iter().find(|&&h| h >= hosts) {
                return Err(format!("{f}.{name}: host {h} does not exist (the fabric has hosts 0..{})", hosts));
            }
        }
        if self.pattern != Pattern::List {
            if self.senders.is_empty() {
                return Err(format!("{f}.senders: must name at least one host"));
            }
            if self.receivers.is_empty() {
                return Err(format!("{f}.receivers: must name at least one host"));
            }
        }
        if matches!(self.pattern, Pattern::Poisson | Pattern::Group) && self.inter_leaf_only {
            let leaf = |h: u32| h / hosts_per_leaf;
            let ok = self.senders.iter().any(|&s| self.receivers.iter().any(|&r| leaf(r) != leaf(s)));
            if !ok {
                return Err(format!("{f}: no sender/receiver pair lies on different leaves (set inter_leaf_only = false to allow same-leaf pairs)"));
            }
        }
        for (i, c) in self.workload.iter().enumerate() {
            validate_cdf(&c.points).map_err(|e| format!("{f}.workload[{i}]: {e}"))?;
            positive(c.weight, &format!("{f}.workload[{i}].weight"))?;
        }
        let needs_size = !matches!(self.pattern, Pattern::List | Pattern::LongLived);
        if needs_size && self.workload.is_empty() && self.size_bytes.is_none() {
            return Err(format!("{f}: needs a workload (flow-size CDF) or size_bytes"));
        }
        if self.size_bytes == Some(0) {
            return Err(format!("{f}.size_bytes: must be at least 1"));
        }
        non_negative(self.start_us, &format!("{f}.start_us"))?;
        non_negative(self.spread_us, &format!("{f}.spread_us"))?;
        non_negative(self.period_us, &format!("{f}.period_us"))?;
        if self.transport == TransportKind::Udp {
            positive(self.udp_rate_gbps, &format!("{f}.udp_rate_gbps"))?;
        }
        match self.pattern {
            Pattern::Poisson => {
                let load = self.load.ok_or_else(|| format!("{f}.load: a poisson source needs a load"))?;
                if !(load > 0.0 && load <= 1.0) {
                    return Err(format!("{f}.load: must be in (0, 1] of its basis ({:?}), got {load}", self.load_basis).to_lowercase());
                }
                if self.flows.is_none() && self.duration_us.is_none() {
                    return Err(format!("{f}: a poisson source needs `flows` or `duration_us`"));
                }
            }
            Pattern::Group => {
                if self.flows.is_none() {
                    return Err(format!("{f}.flows: a group source needs a flow count"));
                }
            }
            Pattern::Incast => {
                if self.rounds == 0 {
                    return Err(format!("{f}.rounds: must be at least 1"));
                }
            }
            Pattern::LongLived | Pattern::List => {}
        }
        if let Some(0) = self.flows {
            return Err(format!("{f}.flows: must be at least 1"));
        }
        match &self.deadline {
            DeadlineModel::None => {}
            DeadlineModel::Fixed { us } => positive(*us, &format!("{f}.deadline.us"))?,
            DeadlineModel::Uniform { lo_us, hi_us } => {
                positive(*lo_us, &format!("{f}.deadline.lo_us"))?;
                if hi_us < lo_us {
                    return Err(format!("{f}.deadline.hi_us: must be at least lo_us"));
                }
            }
            DeadlineModel::Slack { factor } => positive(*factor, &format!("{f}.deadline.factor"))?,
        }
        for (i, l) in self.list.iter().enumerate() {
            let lf = format!("{f}.list[{i}]");
            if l.src >= hosts || l.dst >= hosts {
                return Err(format!("{lf}: host out of range (0..{hosts})"));
            }
            if l.src == l.dst {
                return Err(format!("{lf}: src and dst are the same host"));
            }
            if l.size_bytes == 0 {
                return Err(format!("{lf}.size_bytes: must be at least 1"));
            }
            non_negative(l.start_us, &format!("{lf}.start_us"))?;
        }
        Ok(())
    }
}

/// A CDF must be non-decreasing in size and probability, start at probability >= 0 and end at exactly 1.
/// Repeated sizes (point masses) and repeated probabilities (flat segments) are legal.
pub fn validate_cdf(points: &[(f64, f64)]) -> Result<(), String> {
    if points.len() < 2 {
        return Err("a CDF needs at least two points".into());
    }
    for (i, w) in points.windows(2).enumerate() {
        if !(w[1].0 >= w[0].0) {
            return Err(format!("sizes must not decrease (point {} has {} after {})", i + 1, w[1].0, w[0].0));
        }
        if !(w[1].1 >= w[0].1) {
            return Err(format!("probabilities must not decrease (point {} has {} after {})", i + 1, w[1].1, w[0].1));
        }
    }
    let (x0, p0) = points[0];
    if !(x0 >= 0.0 && x0.is_finite()) {
        return Err(format!("sizes must be non-negative, got {x0}"));
    }
    if !(0.0..=1.0).contains(&p0) {
        return Err(format!("probabilities must lie in [0, 1], got {p0}"));
    }
    let last = points[points.len() - 1].1;
    if (last - 1.0).abs() > 1e-9 {
        return Err(format!("the last probability must be 1, got {last}"));
    }
    if !points[points.len() - 1].0.is_finite() {
        return Err("sizes must be finite".into());
    }
    Ok(())
}
