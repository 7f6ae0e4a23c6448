//! The engine's input: a fully resolved scenario.
//!
//! The Python front validates what a user writes (TOML, `--set` overrides, file paths, host-set syntax) and
//! hands the engine this structure as JSON, with every default filled in and every unit explicit in the field
//! name (`_us` microseconds, `_gbps` gigabits per second, `_bytes`). Whether a config can run is decided in
//! one place, [`Config::check`](crate::check) in `check.rs`, which answers with an error message naming the
//! field, never a panic or a hang.
//!
//! The `Default` values here are the documented defaults of dclb; the Python schema reads them from the engine
//! (`default_config`, `default_source`) rather than repeating them.

use crate::units::{Bytes, Rate, Time};
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

impl Config {
    /// The unloaded round-trip time between two hosts on different leaves: a full-size data packet out
    /// (serialised at each of its four links, store and forward) and its ACK back, over the links as the
    /// topology declares them (per-link overrides aside). It is the yardstick scheme timing defaults are
    /// scaled by ([`Timing`]): 84.9 us for 10 Gbps links of 10 us, 12.9 us for the default fabric. On a fabric
    /// without overrides it equals [`FabricFacts::min_rtt`](crate::fabric::FabricFacts::min_rtt); why the
    /// timing yardstick ignores overrides, and the engine's other base RTTs: [`FabricFacts`](crate::fabric::FabricFacts).
    pub fn base_rtt(&self) -> Time {
        let t = &self.topology;
        let data = (self.transport.mss_bytes + self.transport.header_bytes) as u64;
        let ack = self.transport.ack_bytes as u64;
        let (host, fabric) = (Rate::from_gbps(t.host_rate_gbps), Rate::from_gbps(t.fabric_rate_gbps));
        let one_way = |bytes: u64| {
            host.tx_time(Bytes(bytes)).mul(2) + fabric.tx_time(Bytes(bytes)).mul(2) + Time::from_us_f64(2.0 * (t.host_delay_us + t.fabric_delay_us))
        };
        one_way(data) + one_way(ack)
    }

    /// The base RTT that scheme timing defaults are scaled to, or `None` under `lb.timing = "published"`.
    pub fn timing_rtt(&self) -> Option<Time> {
        match self.lb.timing {
            Timing::Fabric => Some(self.base_rtt()),
            Timing::Published => None,
        }
    }
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
    /// What switch ports count, for drop-tail admission and for ECN marking alike: bytes (the default, as
    /// shared-memory switches count buffer cells) or packets (as some papers' simulators do). Only the
    /// buffer and threshold fields of this unit may be given.
    pub queue_unit: QueueUnit,
    /// Buffer of each switch port in bytes (`queue_unit = bytes`). `None`: 384,000 B (256 full-size
    /// packets) at 10 Gbps, scaled linearly with the port's rate, and at least the default K plus one
    /// full-size packet (the rule and its sources: `fabric.rs`).
    pub buffer_bytes: Option<u64>,
    /// Buffer of each switch port in packets (`queue_unit = packets`). `None`: 256 packets at 10 Gbps,
    /// scaled linearly with the port's rate, and at least the default K plus one.
    pub buffer_packets: Option<u32>,
    /// ECN marking threshold of switch ports in bytes (`queue_unit = bytes`; instantaneous queue). `None`:
    /// 97,500 B (65 full-size packets) at 10 Gbps, scaled linearly with the port's rate.
    pub ecn_k_bytes: Option<u64>,
    /// ECN marking threshold of switch ports in packets (`queue_unit = packets`). `None`: 65 packets at
    /// 10 Gbps, scaled linearly with the port's rate.
    pub ecn_k_packets: Option<f64>,
    /// Per-role thresholds (`host_up`, `leaf_up`, `leaf_down`, `spine_down`) in `queue_unit`, overriding
    /// the threshold above; 0 disables marking on that role. Host NICs do not mark unless `host_up` is
    /// given here.
    pub ecn_k_by_role: BTreeMap<String, f64>,
    /// Per-link changes: slower or longer links, failed links.
    pub links: Vec<LinkOverride>,
    /// Strict-priority FIFOs of every port, host NICs included (1 to 8): a packet joins the one of its
    /// priority level (0 the top, set by the sending host from its source's `priority` rule or by a
    /// balancer), all of them share the port's buffer and ECN threshold, and the port serves the highest
    /// level that holds a packet. 1: one FIFO, no priorities (the default). Ports with more than one
    /// level are event-driven (`port.rs`).
    pub priority_queues: u32,
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
            queue_unit: QueueUnit::Bytes,
            buffer_bytes: None,
            buffer_packets: None,
            ecn_k_bytes: None,
            ecn_k_packets: None,
            ecn_k_by_role: BTreeMap::new(),
            links: Vec::new(),
            priority_queues: 1,
        }
    }
}

/// What a queue counts.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum QueueUnit {
    #[default]
    Bytes,
    Packets,
}

impl QueueUnit {
    /// The name a scenario gives the unit (also the suffix of the fields in this unit).
    pub fn name(self) -> &'static str {
        match self {
            QueueUnit::Bytes => "bytes",
            QueueUnit::Packets => "packets",
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

/// A change to one leaf-spine link (`Default` is a no-op override of leaf 0 - spine 0, for struct update).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
    /// The link is down and routing has converged around it (no path uses it).
    #[serde(default)]
    pub failed: bool,
    /// The link stays in routing but loses every packet on the wire (a silent failure edge schemes must
    /// detect themselves).
    #[serde(default)]
    pub blackhole: bool,
    /// The link stays in routing and loses each packet on the wire with this probability (0..1).
    #[serde(default)]
    pub loss_rate: f64,
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
    /// Host NIC ring in packets (drop-tail), shared by the host's flows, ACKs and probes.
    pub nic_queue_packets: u32,
    /// TCP small queues: the most wire bytes of one flow's data in its host's NIC (waiting or being
    /// serialised). The sender creates no segment beyond it and is woken as its packets leave the NIC.
    /// `None`: two full-size packets (`2 x (mss_bytes + header_bytes)`); 0: no limit (the window alone
    /// bounds what a sender queues in its own NIC).
    pub host_queue_limit_bytes: Option<u64>,
    /// ACKs (and SYN, SYN-ACK) leave the host NIC ahead of queued data (a strict-priority control class).
    /// Edge balancers' probes and probe replies always do.
    pub host_ack_priority: bool,
    /// TCP flows open with a SYN / SYN-ACK exchange before their first data; a lost SYN is sent again after
    /// the initial RTO (backed off). FCT still counts from the application's start, handshake included.
    pub handshake: bool,
    /// Receiver resequencing buffer: hold out-of-order data up to this long before handing it to TCP.
    /// 0 disables the buffer (plain TCP receiver).
    pub reseq_timeout_us: f64,
    /// SACK loss recovery (RFC 6675) instead of NewReno; receivers then send SACK blocks and D-SACKs.
    pub sack: bool,
    /// With `sack`: undo a recovery's window reduction when D-SACKs show all its retransmissions were
    /// unnecessary (RFC 2883).
    pub dsack_undo: bool,
    /// Grow the window only while it limits the sender (Linux's `tcp_is_cwnd_limited`, in the spirit of
    /// RFC 7661): in slow start while the window is below twice the most data in flight during the last
    /// window of data, in congestion avoidance only if the window stopped a send during it. Off: every ACK
    /// grows the window, however little of it the sender used.
    pub cwnd_validation: bool,
}

impl TransportConfig {
    /// Whether flows of `kind` open with a handshake (TCP flows, when `handshake` asks; never UDP).
    pub fn handshakes(&self, kind: TransportKind) -> bool {
        self.handshake && kind != TransportKind::Udp
    }
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
            nic_queue_packets: 512,
            host_queue_limit_bytes: None,
            host_ack_priority: false,
            handshake: false,
            reseq_timeout_us: 0.0,
            sack: false,
            dsack_undo: false,
            cwnd_validation: true,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LbConfig {
    pub scheme: String,
    /// Scheme parameters by name; unknown names are rejected against the scheme's declared parameters.
    pub params: BTreeMap<String, serde_json::Value>,
    /// How the defaults of a scheme's timing parameters (flowlet timeouts, delay thresholds) are read.
    pub timing: Timing,
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig { scheme: "ecmp".into(), params: BTreeMap::new(), timing: Timing::Fabric }
    }
}

/// How a scheme's timing defaults relate to the fabric.
///
/// A flowlet timeout of 500 us or a "good path" RTT threshold of 60 us is a statement about a fabric: the one
/// the value was tuned on (mostly 10 Gbps with 10 us links, about 85 us of base RTT). On a fabric with a
/// 13 us base RTT the same 500 us is some forty RTTs, and LetFlow degenerates into per-flow random choice.
/// Parameters that are such statements declare the base RTT of their source (`dclb schemes` prints it).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// Each such default is scaled by `this fabric's base RTT / its source's base RTT`, so it keeps its
    /// meaning in RTTs. A value the scenario gives is used as written.
    #[default]
    Fabric,
    /// Every default is used as published, whatever the fabric (reproductions on the paper's own fabric).
    Published,
}

impl Timing {
    pub fn name(self) -> &'static str {
        match self {
            Timing::Fabric => "fabric",
            Timing::Published => "published",
        }
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

impl Pattern {
    /// The name a scenario gives the pattern.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Poisson => "poisson",
            Pattern::Group => "group",
            Pattern::Incast => "incast",
            Pattern::LongLived => "long_lived",
            Pattern::List => "list",
        }
    }
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

impl LoadBasis {
    /// The name a scenario gives the basis.
    pub fn name(self) -> &'static str {
        match self {
            LoadBasis::Access => "access",
            LoadBasis::Fabric => "fabric",
        }
    }
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

/// The priority level a source's hosts stamp on its data packets (`topology.priority_queues` levels, 0
/// the top). ACKs, SYNs and other control packets always go at the top level.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PriorityRule {
    /// Every data packet at `level`.
    Fixed { level: u32 },
    /// Size-based demotion as in PIAS (Bai et al., NSDI 2015): a flow starts at the top level and drops one
    /// level each time the payload bytes it has sent (retransmissions included) reach the next threshold;
    /// a packet's level is the number of thresholds the flow had reached before sending it.
    Pias { thresholds_bytes: Vec<u64> },
}

impl Default for PriorityRule {
    fn default() -> Self {
        PriorityRule::Fixed { level: 0 }
    }
}

impl PriorityRule {
    /// The level of a data packet sent after the flow has sent `sent` payload bytes.
    #[inline]
    pub fn level(&self, sent: u64) -> u8 {
        match self {
            PriorityRule::Fixed { level } => (*level).min(u8::MAX as u32) as u8,
            PriorityRule::Pias { thresholds_bytes } => thresholds_bytes.iter().take_while(|&&t| sent >= t).count().min(u8::MAX as usize) as u8,
        }
    }
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
    /// The priority level of the source's data packets (needs `topology.priority_queues` levels).
    pub priority: PriorityRule,
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
            priority: PriorityRule::default(),
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
    /// Stop at this simulated time; `None` runs until every flow has ended (every measured flow, with
    /// `warmup_us`).
    pub horizon_us: Option<f64>,
    pub sampler: Option<SamplerConfig>,
    /// Steady-state measurement (`traffic/window.rs`; `None`: off, every flow measured). Flows that arrive
    /// before this time warm the fabric up and are not measured; each poisson source's `flows` or
    /// `duration_us` then counts its measurement window from here, and its arrivals go on after it. The
    /// run ends once every measured flow has ended. Left out of the JSON when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_us: Option<f64>,
    /// With `warmup_us`: how long each poisson source's arrivals go on after its measurement window, so
    /// that measured flows end in a loaded fabric; `None`: twice `warmup_us` (`traffic::window`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_us: Option<f64>,
    /// What the fabric holds when the run starts (`traffic/stationary.rs`): nothing (`empty`, the default),
    /// or the flows each poisson source would have in flight in steady state (`stationary`), which need a
    /// measurement window (`warmup_us`, by default [`crate::traffic::stationary::default_warmup`]). Left out of
    /// the JSON when `empty`.
    #[serde(skip_serializing_if = "Start::is_empty")]
    pub start: Start,
    /// With a stationary start: how many steady states of the fluid run are candidates for the start; the
    /// one whose carried load is nearest the nominal load is taken (1: the first, unmatched). `None`:
    /// [`crate::traffic::stationary::DEFAULT_CANDIDATES`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_candidates: Option<u32>,
    /// With a measurement window: stop the run this long after the window closes, whether or not every
    /// measured flow has ended (those still running are censored: state `unfinished`). `None`: the run goes
    /// on until every measured flow has ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_us: Option<f64>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { horizon_us: None, sampler: None, warmup_us: None, cooldown_us: None, start: Start::Empty, start_candidates: None, drain_us: None }
    }
}

/// What the fabric holds when a run starts (`run.start`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    /// Nothing: the first flow finds an idle fabric.
    #[default]
    Empty,
    /// The flows each poisson source would have in flight in steady state (`traffic/stationary.rs`).
    Stationary,
}

impl Start {
    pub fn is_empty(&self) -> bool {
        *self == Start::Empty
    }
}

// ------------------------------------------------------------------------------------------------------
// Errors

/// One step of a [`FieldPath`]: a table key or a list index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathPart {
    Key(String),
    Index(usize),
}

/// Where a value sits in a config, in the spelling of the engine's messages: the keys and list indices from
/// the top, a source under `traffic` (`traffic.sources[0].load`) and a scheme parameter directly under `lb`
/// (`lb.d`, although the JSON holds it in `lb.params.d`). Shown as `traffic.sources[0].load`; empty for the
/// config as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(Vec<PathPart>);

impl FieldPath {
    /// A path of keys given dotted: `FieldPath::of("topology.links")`.
    pub fn of(dotted: &str) -> FieldPath {
        FieldPath(dotted.split('.').map(|k| PathPart::Key(k.to_string())).collect())
    }

    /// This path and one more key.
    pub fn key(&self, key: impl Into<String>) -> FieldPath {
        let mut parts = self.0.clone();
        parts.push(PathPart::Key(key.into()));
        FieldPath(parts)
    }

    /// This path and one more list index.
    pub fn index(&self, index: usize) -> FieldPath {
        let mut parts = self.0.clone();
        parts.push(PathPart::Index(index));
        FieldPath(parts)
    }

    pub fn parts(&self) -> &[PathPart] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A path as [`FieldPath`]'s `Display` writes it (`traffic.sources[0].load`); `None` for any other text.
    pub fn parse(text: &str) -> Option<FieldPath> {
        let mut parts = Vec::new();
        for piece in text.split('.') {
            let (key, mut rest) = piece.split_at(piece.find('[').unwrap_or(piece.len()));
            let is_name = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !is_name(key) {
                return None;
            }
            parts.push(PathPart::Key(key.to_string()));
            while !rest.is_empty() {
                let close = rest.find(']')?;
                parts.push(PathPart::Index(rest.get(1..close)?.parse().ok()?));
                rest = &rest[close + 1..];
                if !rest.is_empty() && !rest.starts_with('[') {
                    return None;
                }
            }
        }
        Some(FieldPath(parts))
    }

    /// The path of a value in the config's JSON (as serde reads it) in the engine's spelling: sources are
    /// named under `traffic`, scheme parameters directly under `lb`. Enum variants and steps serde cannot
    /// name are left out.
    fn from_json_path(path: &serde_path_to_error::Path) -> FieldPath {
        use serde_path_to_error::Segment;
        let mut parts: Vec<PathPart> = path
            .iter()
            .filter_map(|segment| match segment {
                Segment::Map { key } => Some(PathPart::Key(key.clone())),
                Segment::Seq { index } => Some(PathPart::Index(*index)),
                Segment::Enum { .. } | Segment::Unknown => None,
            })
            .collect();
        let key = |part: Option<&PathPart>, name: &str| matches!(part, Some(PathPart::Key(k)) if k == name);
        if key(parts.first(), "sources") {
            parts.insert(0, PathPart::Key("traffic".into()));
        } else if key(parts.first(), "lb") && key(parts.get(1), "params") && parts.len() > 2 {
            parts.remove(1);
        }
        FieldPath(parts)
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, part) in self.0.iter().enumerate() {
            match part {
                PathPart::Key(k) if i == 0 => write!(f, "{k}")?,
                PathPart::Key(k) => write!(f, ".{k}")?,
                PathPart::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// Why a config cannot run: the field it concerns ([`FieldPath`]) and what is wrong with it, with what is
/// allowed. Shown as one line, `field.path: what is wrong; what is allowed`, which is how every check of
/// the engine has always answered; the path is also kept as data, so that a caller can name the field as
/// its user wrote it (the Python front does) without reading it back out of the text.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub path: FieldPath,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: FieldPath, message: impl Into<String>) -> ConfigError {
        ConfigError { path, message: message.into() }
    }

    /// An error some part of the engine still reports as a line of text, `field.path: message` (the
    /// scheme registry and parameters, the memory estimate): its path is read back from the line. A line
    /// that does not start with a path is a message about the config as a whole.
    pub fn from_line(line: impl Into<String>) -> ConfigError {
        let line = line.into();
        if let Some((head, message)) = line.split_once(": ") {
            if let Some(path) = FieldPath::parse(head) {
                return ConfigError::new(path, message);
            }
        }
        ConfigError::new(FieldPath::default(), line)
    }

    /// A value the engine cannot read in the JSON `text` (a wrong type, a number out of its range, a
    /// number JSON cannot hold), from serde's error and the path where it stopped.
    fn unreadable(error: serde_path_to_error::Error<serde_json::Error>, text: &str) -> ConfigError {
        let path = FieldPath::from_json_path(error.path());
        let inner = error.into_inner();
        if let Some(value) = non_finite_at(text, inner.line(), inner.column()) {
            return ConfigError::new(path, format!("must be a finite number, got {value}"));
        }
        // serde_json ends its message with the position; the path says where, and better.
        let what = inner.to_string();
        let position = format!(" at line {} column {}", inner.line(), inner.column());
        let what = what.strip_suffix(&position).unwrap_or(&what);
        ConfigError::new(path, format!("the engine cannot read this value ({what})"))
    }
}

/// The number at a parse error's position (1-based `line` and byte `column`) if it is one that JSON cannot
/// hold, as Python's `json` writes them (`Infinity`, `-Infinity`, `NaN`): `inf`, `-inf` or `nan`.
fn non_finite_at(text: &str, line: usize, column: usize) -> Option<&'static str> {
    let line_start: usize = text.split_inclusive('\n').take(line.checked_sub(1)?).map(str::len).sum();
    let at = line_start + column.checked_sub(1)?;
    let (before, rest) = (text.get(..at)?, text.get(at..)?);
    if rest.starts_with("Infinity") {
        Some(if before.ends_with('-') { "-inf" } else { "inf" })
    } else if rest.starts_with("NaN") {
        Some("nan")
    } else {
        None
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// The one-line form, for callers that report errors as text.
impl From<ConfigError> for String {
    fn from(e: ConfigError) -> String {
        e.to_string()
    }
}

/// A line of text from a part of the engine that reports errors so ([`ConfigError::from_line`]).
impl From<String> for ConfigError {
    fn from(line: String) -> ConfigError {
        ConfigError::from_line(line)
    }
}

impl Config {
    /// Reads a config from JSON; an error names the field where reading stopped.
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        let mut reader = serde_json::Deserializer::from_str(text);
        let cfg: Config = serde_path_to_error::deserialize(&mut reader).map_err(|e| ConfigError::unreadable(e, text))?;
        reader.end().map_err(|e| ConfigError::new(FieldPath::default(), format!("the engine cannot read this config ({e})")))?;
        Ok(cfg)
    }
}

/// Configs the engine's unit tests share.
#[cfg(test)]
pub(crate) mod test_configs {
    use super::{Config, SourceConfig, WorkloadComponent};

    /// 2 leaves x 2 spines x 4 hosts; one poisson source between all hosts at fabric load 0.4 (16 Gbps of
    /// 50.5 KB flows on average: about 40,000 arrivals a second), `flows` flows.
    pub(crate) fn two_leaf_poisson(flows: u64) -> Config {
        let mut cfg = Config::default();
        (cfg.topology.leaves, cfg.topology.spines, cfg.topology.hosts_per_leaf) = (2, 2, 4);
        cfg.sources = vec![SourceConfig {
            senders: (0..8).collect(),
            receivers: (0..8).collect(),
            workload: vec![WorkloadComponent { weight: 1.0, points: vec![(1000.0, 0.0), (100_000.0, 1.0)] }],
            load: Some(0.4),
            flows: Some(flows),
            ..Default::default()
        }];
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_rtt_is_a_data_packet_out_and_its_ack_back() {
        let mut cfg = Config::default();
        // 10 Gbps, 1 us links: 4 x (1.2 us + 1 us) out, 4 x (0.032 us + 1 us) back.
        assert_eq!(cfg.base_rtt(), Time::from_ns(12_928));
        // The fabric of [LB], which timing defaults are declared against.
        (cfg.topology.host_delay_us, cfg.topology.fabric_delay_us) = (10.0, 10.0);
        assert!((cfg.base_rtt().as_us() - crate::lb::params::LB_FABRIC_RTT_US).abs() < 0.01);
        cfg.lb.timing = Timing::Published;
        assert_eq!(cfg.timing_rtt(), None);
    }

    #[test]
    fn base_rtt_is_the_min_rtt_of_the_declared_fabric() {
        use crate::fabric::Fabric;
        let min_rtt = |cfg: &Config| Fabric::build(&cfg.topology, &cfg.transport).facts.min_rtt;
        for (host_gbps, fabric_gbps, host_us, fabric_us) in [(10.0, 10.0, 1.0, 1.0), (10.0, 40.0, 1.0, 5.0), (1.0, 1.0, 25.0, 25.0), (25.0, 100.0, 0.5, 2.0)] {
            let mut cfg = Config::default();
            let t = &mut cfg.topology;
            (t.host_rate_gbps, t.fabric_rate_gbps, t.host_delay_us, t.fabric_delay_us) = (host_gbps, fabric_gbps, host_us, fabric_us);
            assert_eq!(min_rtt(&cfg), cfg.base_rtt());
            // A slow link leaves the fastest path, and both RTTs, as they were.
            cfg.topology.links = vec![LinkOverride { rate_gbps: Some(1.0), delay_us: Some(50.0), ..Default::default() }];
            assert_eq!(min_rtt(&cfg), cfg.base_rtt());
        }
        // Slowing every path moves the fabric's RTT, never the declared yardstick: leaf 0's links at 5 us make
        // each way 4 us longer.
        let mut cfg = Config::default();
        cfg.topology.leaves = 2;
        cfg.topology.links = (0..cfg.topology.spines).map(|spine| LinkOverride { spine, delay_us: Some(5.0), ..Default::default() }).collect();
        assert_eq!(cfg.base_rtt(), Time::from_ns(12_928));
        assert_eq!(min_rtt(&cfg), Time::from_ns(12_928 + 2 * 4_000));
    }

    #[test]
    fn a_field_path_is_shown_and_read_back_in_the_engines_spelling() {
        let path = FieldPath::of("traffic.sources").index(2).key("workload").index(0).key("points").index(3);
        assert_eq!(path.to_string(), "traffic.sources[2].workload[0].points[3]");
        assert_eq!(FieldPath::parse(&path.to_string()), Some(path));
        assert_eq!(FieldPath::parse("lb.d").unwrap().parts(), [PathPart::Key("lb".into()), PathPart::Key("d".into())]);
        for not_a_path in ["", "a b", "a..b", "a[x]", "a[1", "a[1]b", "[0]"] {
            assert_eq!(FieldPath::parse(not_a_path), None, "{not_a_path}");
        }
    }

    #[test]
    fn an_error_line_keeps_its_path_as_data() {
        let e = ConfigError::from_line("traffic.sources[0].flows: the run would need about 1.1 TB".to_string());
        assert_eq!(e.path, FieldPath::of("traffic.sources").index(0).key("flows"));
        assert_eq!(e.message, "the run would need about 1.1 TB");
        assert_eq!(e.to_string(), "traffic.sources[0].flows: the run would need about 1.1 TB");
        // A line without a path is about the config as a whole.
        let e = ConfigError::from_line("no progress: the run would never end");
        assert!(e.path.is_empty());
        assert_eq!(e.to_string(), "no progress: the run would never end");
    }

    #[test]
    fn a_value_the_engine_cannot_read_is_named_by_its_path() {
        let read = |text: &str| Config::from_json(text).expect_err("the config must be refused");
        let e = read(r#"{"topology": {"buffer_packets": 1099511627776}}"#);
        assert_eq!(e.path, FieldPath::of("topology.buffer_packets"));
        assert!(e.message.starts_with("the engine cannot read this value (invalid value: integer `1099511627776`, expected u32"), "{}", e.message);
        assert!(!e.message.contains("line 1"), "{}", e.message);
        // Sources are named under traffic, as every message of the engine names them.
        let e = read(r#"{"sources": [{}, {"senders": [1, -1]}]}"#);
        assert_eq!(e.to_string().split(':').next(), Some("traffic.sources[1].senders[1]"));
        // JSON has no infinity: the token it cannot read is named by its field.
        for (token, shown) in [("Infinity", "inf"), ("-Infinity", "-inf"), ("NaN", "nan")] {
            let e = read(&format!("{{\"seed\": 1,\n \"transport\": {{\"min_rto_us\": {token}}}}}"));
            assert_eq!(e.to_string(), format!("transport.min_rto_us: must be a finite number, got {shown}"));
        }
        let e = read(r#"{"run": {"horizon": 5}}"#);
        assert!(e.to_string().starts_with("run"), "{e}");
        assert!(e.message.contains("unknown field `horizon`"), "{e}");
        assert!(Config::from_json("{}").is_ok());
    }

}
