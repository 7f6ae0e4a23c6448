//! One authority for "is this scenario valid".
//!
//! [`Config::check`] decides whether a config can run, and nothing else does. The Python front calls it
//! through the binding (`check_config`) when it validates a scenario, which serves `dclb run`, `--dry-run`
//! and the planning of every sweep point, and [`crate::simulate`] calls it before building anything. Python
//! keeps syntax, types and file messages (a CDF or flow-list line); every rule that relates values to one
//! another lives here. An error is a [`ConfigError`]: the field it concerns, as a path of keys and indices
//! in this config (`traffic.sources[0].load`), and what is wrong with it and what is allowed; shown as one
//! line, `field.path: what is wrong; what is allowed`. The front renames the path to what the user wrote
//! (`traffic.load`, `flows.csv:7`) from the path itself, never from the text.
//!
//! The checks run in stages, each relying on those before it:
//!
//! ```text
//!  fields    Config::validate: each value alone and with its neighbours (ranges, host indices, id space,
//!            every time within the clock, CDFs with a mean of at least a byte, what each pattern needs,
//!            priority rules within the ports' levels, a round trip shorter than the longest RTO), without
//!            building anything
//!  memory    the fabric's memory (and the sampler's over a horizon) within the caller's limit, before the
//!            fabric is built (crate::memory)
//!  fabric    built from the topology: the failed links leave every pair of leaves a path; every port's
//!            buffer holds a full-size packet and its ECN threshold leaves room for one below the buffer
//!  scheme    it exists, and its parameters resolve within their declared ranges and relations; a queue
//!            threshold it compares its ports' queues with can be reached on them (not above every buffer),
//!            and a period it is given comes round within the horizon;
//!            an option that sets packets' priority needs priority queues, a rate estimator needs FIFO ports
//!  run       a horizon when flows never end; sampled ports exist
//!  traffic   every source can make a flow and its generator ends: an admissible sender/receiver pair,
//!            sizes below the "never ends" size, a load its leaf uplinks carry, arrivals no finer than
//!            the 1 ps clock, a flow count within the 32-bit flow ids
//!  clock     every time the run computes from the config within the clock, the estimated end of a run
//!            without a horizon within a tenth of it (crate::runsize)
//!  work      every source expected to start a flow before the run ends (crate::runsize)
//!  memory    the whole run (fabric, flows, sampler rows) within the caller's limit, before any flow is drawn
//!  events    the run's estimated events (packets, balancer timers, probes, sampler ticks) within the
//!            caller's limit (crate::runsize)
//!  sampler   sampled flow ids exist
//! ```
//!
//! The memory and event stages apply only when the caller gives a limit ([`Config::check_within`]): how
//! much memory and engine time a run may take is the machine's and the user's business, not the scenario's,
//! and the Python front passes both (with the way to insist).
//!
//! The last stage needs the run's flow count. It is known in closed form for every source except a
//! poisson source bounded by time, whose count depends on its random arrivals; only then, and only when
//! the sampler names flows, are the flows generated, exactly as the run will generate them.

use crate::build::stall_window;
use crate::config::{Config, ConfigError, DeadlineModel, FieldPath, Pattern, PriorityRule, QueueUnit, RunConfig, SourceConfig, TopologyConfig, TransportConfig, TransportKind};
use crate::fabric::{buffer_of, threshold_of, Buffer, Fabric, Origin, PortRole};
use crate::lb::params::ParamType;
use crate::lb::{find_scheme, BuildCx, Installed, ParamValue, Params, SchemeSpec, SwitchInfo};
use crate::memory::{Estimate, MemoryLimit};
use crate::runsize::{self, EventLimit, RunSize};
use crate::traffic::stationary;
use crate::traffic::window::{self, Plan};
use crate::traffic::{self, SourceInfo, UNBOUNDED};
use crate::transport::TcpParams;
use crate::units::{Rate, Time};

/// Most flows a run can have: flows are numbered with 32-bit ids.
const MAX_FLOWS: u64 = u32::MAX as u64;

/// Most uplinks a leaf can have (path tags and per-flow uplink counters are sized for it).
const MAX_UPLINKS: u64 = 512;

/// Most strict-priority FIFOs a port may have (what commodity switches offer: 802.1p's eight classes).
const MAX_PRIORITY_QUEUES: u32 = 8;

/// Scheme parameters that, when true, make the balancer set packets' priority levels: they need ports with
/// more than one level, where they would otherwise change nothing.
const PRIORITY_OPTIONS: [&str; 2] = ["short_priority", "deadline_priority"];

/// A scheme parameter that the scheme compares a switch port's queue (in bytes) with. A queue never holds
/// more than its port's buffer, so a value above every buffer the rule reads would never be reached, and
/// the rule it sets would silently never apply: that is refused ([`check_queue_thresholds`]). A value that
/// some of those ports can reach is allowed (a scheme may mean it for its larger buffers).
struct QueueThreshold {
    scheme: &'static str,
    param: &'static str,
    /// The rule applies once the queue holds at least the value (`true`: LBT's thresholds, which a queue
    /// "reaches") or only more than it (`false`: TAM's `>`).
    reached_at: bool,
    /// The ports whose queues the rule reads.
    roles: &'static [PortRole],
    /// What would never happen, for the message.
    never: &'static str,
}

/// TAM's `k_star_bytes` is not one of them: a k* above every buffer is how a scenario turns TAM's queue
/// rule off and keeps its marking while short flows share the port (0 means "automatic", and TAM has no
/// other switch for that rule), an ablation its tests run.
const QUEUE_THRESHOLDS: [QueueThreshold; 1] = [QueueThreshold {
    scheme: "lbt",
    param: "q_min_bytes",
    reached_at: true,
    roles: &[PortRole::LeafUp, PortRole::SpineDown],
    never: "Q1 and Q2 never fall below q_min_bytes, so no queue could ever reach them and long and best-effort flows would never leave a port",
}];

/// A scheme's period (µs) given explicitly: with a horizon no longer than it, what the period does would
/// never happen in the run (the first round comes one period after the start), while 0 says "off" in so
/// many words. Only a value the scenario gives is checked: a default that a short run never reaches is the
/// run's length, not a setting the user made.
const PERIODS: [(&str, &str, &str); 3] = [
    ("hermes", "probe_us", "no host would ever probe a path (give 0 to turn probing off)"),
    ("mdtlb", "probe_us", "no host would ever probe a path (give 0 to turn probing off)"),
    ("lbt", "period_us", "Q1 and Q2 would never be recomputed from the load and stay at q_min_bytes"),
];

/// Port roles that take their own ECN threshold.
const ECN_ROLES: [&str; 4] = ["host_up", "leaf_up", "leaf_down", "spine_down"];

/// What a caller holds a run to, each only when given: its memory ([`crate::memory`]) and its events
/// ([`crate::runsize`]).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub memory: Option<MemoryLimit>,
    pub events: Option<EventLimit>,
}

/// What the check learned of a config it passed: the run's memory estimate and its size (sources, length,
/// events).
#[derive(Clone, Debug)]
pub struct Checked {
    pub memory: Estimate,
    pub size: RunSize,
}

impl Config {
    /// Every rule this config must satisfy to run; the first one broken, naming its field.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.check_stages(true, &Limits::default()).map(|_| ())
    }

    /// [`Config::check`], and the run's memory and events within `limits`; returns what it estimated.
    pub fn check_within(&self, limits: &Limits) -> Result<Checked, ConfigError> {
        self.check_stages(true, limits)
    }

    /// Every rule of [`Config::check`] but the scheme's, for a scheme given to the engine directly
    /// ([`crate::Simulation::with_scheme`]) rather than named in `lb.scheme` (its timers are then left out
    /// of the event estimate).
    pub fn check_except_scheme(&self) -> Result<(), ConfigError> {
        self.check_stages(false, &Limits::default()).map(|_| ())
    }

    fn check_stages(&self, scheme: bool, limits: &Limits) -> Result<Checked, ConfigError> {
        self.validate()?;
        // The memory estimate and the scheme registry still answer with a line of text (`field: what`).
        Estimate::before_build(self).within(limits.memory.as_ref()).map_err(ConfigError::from_line)?;
        let fabric = Fabric::build(&self.topology, &self.transport);
        check_connected(&fabric)?;
        check_buffers(self, &fabric)?;
        let scheme = if scheme { Some(check_scheme(self, &fabric)?) } else { None };
        check_run(self, &fabric)?;
        let traffic = check_traffic(self, &fabric)?;
        let size = check_run_size(self, &fabric, &traffic)?;
        let memory = Estimate::of_run(self, &traffic.flows, traffic.span_us);
        memory.within(limits.memory.as_ref()).map_err(ConfigError::from_line)?;
        let size = RunSize { events: runsize::events(self, &fabric, scheme.as_ref().map(|(s, p)| (*s, p)), &size.sources, size.sim_time_us), ..size };
        size.within(limits.events.as_ref()).map_err(ConfigError::from_line)?;
        check_sampled_flows(self, &fabric)?;
        Ok(Checked { memory, size })
    }

    /// The first stage of [`Config::check`]: each field alone and with its neighbours. Everything later
    /// stages build (the fabric, host and flow indices) is safe once this has passed.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_topology(&self.topology)?;
        validate_transport(&self.transport)?;
        validate_run(&self.run)?;
        let hosts = self.topology.leaves * self.topology.hosts_per_leaf;
        for (i, s) in self.sources.iter().enumerate() {
            validate_source(s, &source_field(i), hosts, self.topology.host_rate_gbps)?;
            validate_priority(&s.priority, &source_field(i).key("priority"), self.topology.priority_queues)?;
        }
        validate_round_trip(self)
    }
}

/// The field path of source `i`.
fn source_field(i: usize) -> FieldPath {
    FieldPath::of("traffic.sources").index(i)
}

/// An error about `field`.
fn error(field: &FieldPath, message: impl Into<String>) -> ConfigError {
    ConfigError::new(field.clone(), message)
}

/// An error about the field at the dotted path `field` (a path of keys).
fn error_at(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::new(FieldPath::of(field), message)
}

fn positive(v: f64, field: &FieldPath) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(error(field, format!("must be a positive number, got {v}")))
    }
}

fn non_negative(v: f64, field: &FieldPath) -> Result<(), ConfigError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(error(field, format!("must be zero or positive, got {v}")))
    }
}

/// A time in µs the engine converts to its clock: zero or positive, and within the clock's range.
fn time_us(v: f64, field: &FieldPath) -> Result<(), ConfigError> {
    non_negative(v, field)?;
    if Time::try_from_us_f64(v).is_none() {
        return Err(error(field, format!("{v} us is beyond the engine's clock ({} us, picoseconds in 64 bits)", Time::RANGE_US)));
    }
    Ok(())
}

/// A positive time in µs within the clock's range.
fn positive_time_us(v: f64, field: &FieldPath) -> Result<(), ConfigError> {
    positive(v, field)?;
    time_us(v, field)
}

/// A link or sending rate: positive, and at least the engine's 1 bit/s (a lower rate rounds to 0 and
/// would divide serialisation times by zero).
fn rate(gbps: f64, field: &FieldPath) -> Result<(), ConfigError> {
    positive(gbps, field)?;
    if Rate::from_gbps(gbps).bps() == 0 {
        return Err(error(field, format!("{gbps} Gbps is below the engine's smallest rate, 1 bit/s (1e-9 Gbps)")));
    }
    Ok(())
}

fn at_least_one(v: u64, field: &FieldPath) -> Result<(), ConfigError> {
    if v >= 1 {
        Ok(())
    } else {
        Err(error(field, "must be at least 1"))
    }
}

fn index_below(v: u32, limit: u32, field: &FieldPath) -> Result<(), ConfigError> {
    if v < limit {
        Ok(())
    } else {
        Err(error(field, format!("{v} is out of range (0..{})", limit - 1)))
    }
}

// ------------------------------------------------------------------------------------------------------
// Fields

fn validate_topology(t: &TopologyConfig) -> Result<(), ConfigError> {
    for (v, f) in [(t.leaves, "topology.leaves"), (t.spines, "topology.spines"), (t.hosts_per_leaf, "topology.hosts_per_leaf"), (t.links_per_pair, "topology.links_per_pair")] {
        if v == 0 {
            return Err(error_at(f, "must be at least 1, got 0"));
        }
    }
    let uplinks = t.spines as u64 * t.links_per_pair as u64;
    if uplinks > MAX_UPLINKS {
        return Err(error_at("topology", format!("at most {MAX_UPLINKS} uplinks per leaf (spines x links_per_pair), got {uplinks}")));
    }
    // Hosts, leaves and spines each own ports, numbered with 32-bit ids (host indices are a subset).
    let (l, s, h, k) = (t.leaves as u128, t.spines as u128, t.hosts_per_leaf as u128, t.links_per_pair as u128);
    let ports = l * h + l * (h + s * k) + s * l * k;
    if ports > u32::MAX as u128 {
        return Err(error_at("topology", format!("the fabric would have {ports} ports, more than the engine's 32-bit port ids; use fewer leaves, hosts or spines")));
    }
    let topology = FieldPath::of("topology");
    rate(t.host_rate_gbps, &topology.key("host_rate_gbps"))?;
    rate(t.fabric_rate_gbps, &topology.key("fabric_rate_gbps"))?;
    time_us(t.host_delay_us, &topology.key("host_delay_us"))?;
    time_us(t.fabric_delay_us, &topology.key("fabric_delay_us"))?;
    validate_queue_unit(t)?;
    if !(1..=MAX_PRIORITY_QUEUES).contains(&t.priority_queues) {
        return Err(error(&topology.key("priority_queues"), format!("must be 1 (one FIFO per port, no priorities) to {MAX_PRIORITY_QUEUES}, got {}", t.priority_queues)));
    }
    if let Some(b) = t.buffer_bytes {
        at_least_one(b, &topology.key("buffer_bytes"))?;
    }
    if let Some(b) = t.buffer_packets {
        at_least_one(b as u64, &topology.key("buffer_packets"))?;
    }
    if let Some(k) = t.ecn_k_packets {
        non_negative(k, &topology.key("ecn_k_packets"))?;
        marks_or_off(k, &topology.key("ecn_k_packets"), "packets")?;
    }
    for (role, k) in &t.ecn_k_by_role {
        let f = topology.key("ecn_k_by_role").key(role.as_str());
        if !ECN_ROLES.contains(&role.as_str()) {
            return Err(error(&f, format!("unknown port role; allowed: {}", ECN_ROLES.join(", "))));
        }
        non_negative(*k, &f)?;
        marks_or_off(*k, &f, t.queue_unit.name())?;
    }
    for (i, o) in t.links.iter().enumerate() {
        let f = topology.key("links").index(i);
        index_below(o.leaf, t.leaves, &f.key("leaf"))?;
        index_below(o.spine, t.spines, &f.key("spine"))?;
        if let Some(k) = o.link {
            index_below(k, t.links_per_pair, &f.key("link"))?;
        }
        if let Some(r) = o.rate_gbps {
            rate(r, &f.key("rate_gbps"))?;
        }
        if let Some(d) = o.delay_us {
            time_us(d, &f.key("delay_us"))?;
        }
        if !(0.0..=1.0).contains(&o.loss_rate) {
            return Err(error(&f.key("loss_rate"), format!("must be a probability in [0, 1], got {}", o.loss_rate)));
        }
    }
    Ok(())
}

/// A threshold is a whole number of packets or bytes, 0 meaning no marking: a positive K that rounds to 0
/// would silently turn marking off.
fn marks_or_off(k: f64, field: &FieldPath, unit: &str) -> Result<(), ConfigError> {
    if k > 0.0 && k.round() == 0.0 {
        Err(error(field, format!("{k} rounds to 0 {unit}, which turns marking off; give 0 for no marking, or a threshold of at least 1")))
    } else {
        Ok(())
    }
}

/// Buffers and thresholds are given in the unit switch ports count, never in the other one.
fn validate_queue_unit(t: &TopologyConfig) -> Result<(), ConfigError> {
    let unit = t.queue_unit;
    let other = [
        (QueueUnit::Packets, t.buffer_bytes.is_some(), "buffer_bytes"),
        (QueueUnit::Packets, t.ecn_k_bytes.is_some(), "ecn_k_bytes"),
        (QueueUnit::Bytes, t.buffer_packets.is_some(), "buffer_packets"),
        (QueueUnit::Bytes, t.ecn_k_packets.is_some(), "ecn_k_packets"),
    ];
    match other.iter().find(|(u, given, _)| *u == unit && *given) {
        Some((_, _, field)) => Err(error(
            &FieldPath::of("topology").key(*field),
            format!(
                "switch ports count {} (topology.queue_unit = \"{}\"); give the {} fields instead, or set topology.queue_unit to the unit of {field}",
                unit.name(),
                unit.name(),
                unit.name()
            ),
        )),
        None => Ok(()),
    }
}

fn validate_transport(tp: &TransportConfig) -> Result<(), ConfigError> {
    let f = |name: &str| FieldPath::of("transport").key(name);
    if tp.mss_bytes == 0 || tp.mss_bytes > 65_000 {
        return Err(error(&f("mss_bytes"), format!("must be in 1..=65000, got {}", tp.mss_bytes)));
    }
    at_least_one(tp.ack_bytes as u64, &f("ack_bytes"))?;
    at_least_one(tp.init_cwnd_packets as u64, &f("init_cwnd_packets"))?;
    at_least_one(tp.dupack_threshold as u64, &f("dupack_threshold"))?;
    if let Some(b) = tp.init_ssthresh_bytes {
        at_least_one(b, &f("init_ssthresh_bytes"))?;
    }
    positive_time_us(tp.min_rto_us, &f("min_rto_us"))?;
    positive_time_us(tp.init_rto_us, &f("init_rto_us"))?;
    positive_time_us(tp.max_rto_us, &f("max_rto_us"))?;
    time_us(tp.rto_granularity_us, &f("rto_granularity_us"))?;
    if !(tp.dctcp_g > 0.0 && tp.dctcp_g <= 1.0) {
        return Err(error(&f("dctcp_g"), format!("must be in (0, 1], got {}", tp.dctcp_g)));
    }
    if !(0.0..=1.0).contains(&tp.dctcp_alpha_init) {
        return Err(error(&f("dctcp_alpha_init"), format!("must be in [0, 1], got {}", tp.dctcp_alpha_init)));
    }
    at_least_one(tp.nic_queue_packets as u64, &f("nic_queue_packets"))?;
    let full = tp.mss_bytes as u64 + tp.header_bytes as u64;
    match tp.host_queue_limit_bytes {
        Some(limit) if limit != 0 && limit < full => Err(error(
            &f("host_queue_limit_bytes"),
            format!("{limit} is below one full-size packet ({full} bytes on the wire), so a flow could not send one; use at least {full}, or 0 for no limit"),
        )),
        _ => Ok(()),
    }?;
    time_us(tp.reseq_timeout_us, &f("reseq_timeout_us"))?;
    if tp.dsack_undo && !tp.sack {
        return Err(error(&f("dsack_undo"), "needs transport.sack = true (D-SACKs come with SACK)"));
    }
    Ok(())
}

fn validate_run(r: &RunConfig) -> Result<(), ConfigError> {
    if let Some(h) = r.horizon_us {
        positive_time_us(h, &FieldPath::of("run.horizon_us"))?;
    }
    if let Some(s) = &r.sampler {
        positive_time_us(s.interval_us, &FieldPath::of("run.sampler.interval_us"))?;
    }
    validate_window(r)
}

/// The measurement window's fields (`traffic/window.rs`): lengths of zero or more, a warm-up that ends
/// before the horizon, a cool-down only after a warm-up, a drain only with a window, and the stationary
/// start's candidates only with one.
fn validate_window(r: &RunConfig) -> Result<(), ConfigError> {
    let windowed = r.warmup_us.is_some() || !r.start.is_empty();
    if let Some(d) = r.drain_us {
        time_us(d, &FieldPath::of("run.drain_us"))?;
        if !windowed {
            return Err(error_at("run.drain_us", "the drain is counted from the end of the measurement window, and this run has none; set run.warmup_us (or run.start = \"stationary\") or remove drain_us"));
        }
    }
    if let Some(k) = r.start_candidates {
        if r.start.is_empty() {
            return Err(error_at("run.start_candidates", "only a stationary start (run.start = \"stationary\") chooses among candidate states; remove start_candidates or set run.start"));
        }
        if !(1..=stationary::MAX_CANDIDATES).contains(&k) {
            return Err(error_at("run.start_candidates", format!("must be from 1 to {}, got {k}", stationary::MAX_CANDIDATES)));
        }
    }
    if let Some(w) = r.warmup_us {
        time_us(w, &FieldPath::of("run.warmup_us"))?;
        // The window opens at the warm-up's end: at or after the horizon it would measure no flow at all.
        if let Some(h) = r.horizon_us.filter(|&h| w >= h) {
            return Err(error_at(
                "run.warmup_us",
                format!("the measurement window opens at {w} us, not before the run ends at run.horizon_us = {h} us, so no flow would be measured; give a warm-up shorter than the horizon"),
            ));
        }
    }
    if let Some(c) = r.cooldown_us {
        time_us(c, &FieldPath::of("run.cooldown_us"))?;
        if r.warmup_us.is_none() {
            return Err(error_at("run.cooldown_us", "only a run with a measurement window has a cool-down; set run.warmup_us (0 for none) or remove cooldown_us"));
        }
    }
    Ok(())
}

fn validate_source(s: &SourceConfig, f: &FieldPath, hosts: u32, host_rate_gbps: f64) -> Result<(), ConfigError> {
    validate_hosts(s, f, hosts)?;
    validate_sizes(s, f)?;
    validate_pattern_needs(s, f)?;
    time_us(s.start_us, &f.key("start_us"))?;
    time_us(s.spread_us, &f.key("spread_us"))?;
    time_us(s.period_us, &f.key("period_us"))?;
    if s.transport == TransportKind::Udp {
        let field = f.key("udp_rate_gbps");
        rate(s.udp_rate_gbps, &field)?;
        // A host's NIC sends at most at its link's rate: a UDP sender paced faster would only fill its own
        // NIC queue and lose the excess there, a loss that is the scenario's, not the fabric's. Refused, so
        // that the loss a run reports is the network's (a host link slowed by `topology.links` still drops
        // at its NIC, as a real one would, and counts as loss).
        if Rate::from_gbps(s.udp_rate_gbps).bps() > Rate::from_gbps(host_rate_gbps).bps() {
            return Err(error(
                &field,
                format!(
                    "{} Gbps is above the host links' rate, topology.host_rate_gbps = {} Gbps: a host cannot send faster than its link; use at most {}",
                    s.udp_rate_gbps, host_rate_gbps, host_rate_gbps
                ),
            ));
        }
    }
    validate_deadline(&s.deadline, &f.key("deadline"))?;
    for (i, l) in s.list.iter().enumerate() {
        let lf = f.key("list").index(i);
        for h in [l.src, l.dst] {
            if h >= hosts {
                return Err(error(&lf, format!("host {h} does not exist (hosts are 0..{})", hosts - 1)));
            }
        }
        if l.src == l.dst {
            return Err(error(&lf, format!("src and dst are the same host ({}); a flow needs two different hosts", l.src)));
        }
        time_us(l.start_us, &lf.key("start_us"))?;
        if let Some(d) = l.deadline_us {
            positive_time_us(d, &lf.key("deadline_us"))?;
        }
    }
    Ok(())
}

/// A source's priority rule uses levels the ports have (`levels`, 0 the top): a rule on ports without
/// priorities, or a level past the lowest, would be ignored or clamped unsaid.
fn validate_priority(rule: &PriorityRule, f: &FieldPath, levels: u32) -> Result<(), ConfigError> {
    let range = || if levels == 1 { "topology.priority_queues is 1, so the only level is 0 (set priority_queues to use priorities)".to_string() } else { format!("levels are 0 (the top) to {} (topology.priority_queues = {levels})", levels - 1) };
    match rule {
        PriorityRule::Fixed { level } if *level >= levels => Err(error(&f.key("level"), format!("level {level} does not exist: {}", range()))),
        PriorityRule::Fixed { .. } => Ok(()),
        PriorityRule::Pias { thresholds_bytes: t } => {
            let f = f.key("thresholds_bytes");
            if t.is_empty() {
                return Err(error(&f, "give at least one threshold (a flow drops one level as its bytes sent reach each)"));
            }
            if t.len() as u64 >= levels as u64 {
                return Err(error(&f, format!("{} thresholds demote a flow to level {}, which does not exist: {}", t.len(), t.len(), range())));
            }
            if t[0] == 0 {
                return Err(error(&f.index(0), "must be at least 1 byte: a flow starts at the top level"));
            }
            if let Some(i) = (1..t.len()).find(|&i| t[i] <= t[i - 1]) {
                return Err(error(&f.index(i), format!("thresholds must increase: {} is not above {}", t[i], t[i - 1])));
            }
            Ok(())
        }
    }
}

fn validate_hosts(s: &SourceConfig, f: &FieldPath, hosts: u32) -> Result<(), ConfigError> {
    for (set, name) in [(&s.senders, "senders"), (&s.receivers, "receivers")] {
        if let Some(h) = set.iter().find(|&&h| h >= hosts) {
            return Err(error(&f.key(name), format!("host {h} does not exist (hosts are 0..{})", hosts - 1)));
        }
        if set.is_empty() && s.pattern != Pattern::List {
            return Err(error(&f.key(name), "must name at least one host"));
        }
    }
    Ok(())
}

/// Sizes are at least one byte and below [`UNBOUNDED`], the size that marks a flow that never ends.
fn validate_sizes(s: &SourceConfig, f: &FieldPath) -> Result<(), ConfigError> {
    let bounded = |size: f64, field: &FieldPath| {
        if size < UNBOUNDED as f64 {
            Ok(())
        } else {
            Err(error(field, format!("{size} bytes is too large; sizes must be below {UNBOUNDED} bytes (the size that means 'never ends')")))
        }
    };
    if let Some(b) = s.size_bytes {
        at_least_one(b, &f.key("size_bytes"))?;
        bounded(b as f64, &f.key("size_bytes"))?;
    }
    for (i, c) in s.workload.iter().enumerate() {
        let wf = f.key("workload").index(i);
        validate_cdf(&c.points, &wf)?;
        positive(c.weight, &wf.key("weight"))?;
        bounded(c.points[c.points.len() - 1].0, &wf)?;
        // Flows of less than a byte on average are empty flows: a source of them would move nothing, and
        // its arrivals (load over mean size) would crowd below the clock's resolution.
        let mean = traffic::cdf::Cdf::new(c.points.clone()).mean();
        if !(mean >= 1.0) {
            return Err(error(&wf, format!("the CDF's mean is {mean} bytes, below one byte: its flows would carry nothing; give sizes of at least 1 byte")));
        }
    }
    for (i, l) in s.list.iter().enumerate() {
        let lf = f.key("list").index(i).key("size_bytes");
        at_least_one(l.size_bytes, &lf)?;
        bounded(l.size_bytes as f64, &lf)?;
    }
    Ok(())
}

/// The fields each pattern cannot do without.
fn validate_pattern_needs(s: &SourceConfig, f: &FieldPath) -> Result<(), ConfigError> {
    let needs_size = !matches!(s.pattern, Pattern::List | Pattern::LongLived);
    if needs_size && s.workload.is_empty() && s.size_bytes.is_none() {
        return Err(error(&f.key("workload"), format!("a {} source needs a workload (flow-size CDF) or size_bytes", s.pattern.name())));
    }
    if let Some(n) = s.flows {
        at_least_one(n, &f.key("flows"))?;
    }
    match s.pattern {
        Pattern::Poisson => {
            let load = s.load.ok_or_else(|| error(&f.key("load"), "a poisson source needs a load in (0, 1] of its load_basis capacity"))?;
            if !(load > 0.0 && load <= 1.0) {
                return Err(error(&f.key("load"), format!("must be in (0, 1] of its load_basis capacity ({}), got {load}", s.load_basis.name())));
            }
            if s.flows.is_none() && s.duration_us.is_none() {
                return Err(error(&f.key("flows"), "a poisson source needs `flows` (a count) or `duration_us`"));
            }
            if let Some(d) = s.duration_us {
                positive_time_us(d, &f.key("duration_us"))?;
            }
        }
        Pattern::Group if s.flows.is_none() => return Err(error(&f.key("flows"), "a group source needs a flow count")),
        Pattern::Incast => at_least_one(s.rounds as u64, &f.key("rounds"))?,
        Pattern::List if s.list.is_empty() => return Err(error(&f.key("list"), "a list source needs at least one flow")),
        _ => {}
    }
    Ok(())
}

fn validate_deadline(d: &DeadlineModel, f: &FieldPath) -> Result<(), ConfigError> {
    match d {
        DeadlineModel::None => Ok(()),
        DeadlineModel::Fixed { us } => positive_time_us(*us, &f.key("us")),
        DeadlineModel::Uniform { lo_us, hi_us } => {
            positive_time_us(*lo_us, &f.key("lo_us"))?;
            if hi_us >= lo_us {
                time_us(*hi_us, &f.key("hi_us"))
            } else {
                Err(error(&f.key("hi_us"), format!("must be at least lo_us ({lo_us}), got {hi_us}")))
            }
        }
        DeadlineModel::Slack { factor } => positive(*factor, &f.key("factor")),
    }
}

/// Why `points` is not a flow-size CDF: the index of the offending point (`None` when the problem is the
/// list as a whole) and what is wrong. A CDF is non-decreasing in size and in probability, starts at a
/// finite size >= 0 with a probability in [0, 1] and ends at probability 1 with a finite size. Repeated
/// sizes (point masses) and repeated probabilities (flat segments) are legal.
pub fn cdf_problem(points: &[(f64, f64)]) -> Option<(Option<usize>, String)> {
    if points.len() < 2 {
        return Some((None, format!("a CDF needs at least two points, found {}", points.len())));
    }
    for (i, w) in points.windows(2).enumerate() {
        let ((x0, p0), (x1, p1)) = (w[0], w[1]);
        // Written as negated `>=` so that NaN fails too.
        if !(x1 >= x0) {
            return Some((Some(i + 1), format!("sizes must not decrease ({x1} after {x0}); the CDF is not monotonic")));
        }
        if !(p1 >= p0) {
            return Some((Some(i + 1), format!("probabilities must not decrease ({p1} after {p0}); the CDF is not monotonic")));
        }
    }
    let (x0, p0) = points[0];
    if !(x0 >= 0.0 && x0.is_finite() && (0.0..=1.0).contains(&p0)) {
        return Some((Some(0), format!("sizes must be >= 0 and probabilities in [0, 1], got size {x0} at probability {p0}")));
    }
    let last = points.len() - 1;
    let (xn, pn) = points[last];
    if (pn - 1.0).abs() > 1e-9 {
        return Some((Some(last), format!("the last probability must be 1 (the CDF must end at 1), got {pn}")));
    }
    if !xn.is_finite() {
        return Some((Some(last), format!("sizes must be finite, got {xn}")));
    }
    None
}

/// [`cdf_problem`] as an error under `field`, the CDF's path (a point is named `field.points[i]`).
pub fn validate_cdf(points: &[(f64, f64)], field: &FieldPath) -> Result<(), ConfigError> {
    match cdf_problem(points) {
        None => Ok(()),
        Some((Some(i), what)) => Err(error(&field.key("points").index(i), what)),
        Some((None, what)) => Err(error(field, what)),
    }
}

/// The longest propagation round trip must be shorter than the longest retransmission timeout. TCP's RTO
/// never exceeds `max_rto_us`, so with a longer round trip every sender times out before its first ACK can
/// return, and resends its window once per timeout for as long as the round trip lasts: the copies in
/// flight grow with the delay (a 10^12 us link filled the memory). Bounded above by four host-link delays
/// and four crossings of the slowest working leaf-spine link.
fn validate_round_trip(cfg: &Config) -> Result<(), ConfigError> {
    let (t, tp) = (&cfg.topology, &cfg.transport);
    let (mut longest, mut field) = (t.fabric_delay_us, FieldPath::of("topology.fabric_delay_us"));
    for (i, o) in t.links.iter().enumerate() {
        if let Some(d) = o.delay_us.filter(|&d| d > longest && !o.failed) {
            (longest, field) = (d, FieldPath::of("topology.links").index(i).key("delay_us"));
        }
    }
    if t.host_delay_us > longest {
        field = FieldPath::of("topology.host_delay_us");
    }
    let rtt = 4.0 * (t.host_delay_us + longest);
    if rtt < tp.max_rto_us {
        return Ok(());
    }
    Err(error(
        &field,
        format!(
            "the longest round trip is {rtt} us of propagation (4 x host_delay_us + 4 x the slowest leaf-spine link), not shorter than transport.max_rto_us = {} us: every sender would time out before an ACK could return and resend its window once per timeout for the whole round trip; shorten the delay or raise transport.max_rto_us above the round trip",
            tp.max_rto_us
        ),
    ))
}

// ------------------------------------------------------------------------------------------------------
// Fabric, scheme, run

fn check_connected(fabric: &Fabric) -> Result<(), ConfigError> {
    let f = &fabric.facts;
    for a in f.leaf_ids() {
        for b in f.leaf_ids().filter(|&b| b != a) {
            if fabric.leaf_candidates(a, b).is_empty() {
                return Err(error_at("topology.links", format!("the failed links leave no path from leaf {a} to leaf {b}; every leaf needs a working path to every other leaf")));
            }
        }
    }
    Ok(())
}

/// Every port's buffer holds a full-size packet, and its marking threshold, when it marks, leaves room for
/// one full-size packet below its buffer. A packet is marked when it finds at least K queued and admitted
/// only if it fits, so a full-size packet can be marked only if `K + its size <= buffer`: with a K above
/// that (a K at or above the buffer, which defaults scaled with rate once gave at 40 Gbps, or just below
/// it) the port drops and never marks. Checked on every port as built, so defaults, per-role thresholds and
/// per-link rates are all covered.
fn check_buffers(cfg: &Config, fabric: &Fabric) -> Result<(), ConfigError> {
    let (t, tp) = (&cfg.topology, &cfg.transport);
    let full = (tp.mss_bytes + tp.header_bytes) as u64;
    for (id, port) in fabric.ports.iter().enumerate() {
        let (buffer, b_origin) = buffer_of(t, tp, port.role, port.rate);
        let (k, k_origin) = threshold_of(t, port.role, port.rate);
        let rate_from = match rate_override(t, fabric, id) {
            Some(i) => format!(" (topology.links[{i}].rate_gbps)"),
            None => String::new(),
        };
        let at = format!("on {} ports at {} Gbps{rate_from}", port.role.name(), port.rate.as_gbps());
        let (b_field, b_value) = buffer_field(t, b_origin, buffer);
        if buffer.bytes < full {
            return Err(error(&b_field, format!("{b_value} {at} cannot hold one full-size packet ({full} bytes on the wire); use at least {full}")));
        }
        // The most the buffer can hold, and one full-size packet, in the threshold's unit.
        let (room, packet) = match k.unit {
            QueueUnit::Packets => (buffer.packets as u64, 1),
            QueueUnit::Bytes => (buffer.bytes.min((buffer.packets as u64).saturating_mul(full)), full),
        };
        if k.k > 0 && k.k.saturating_add(packet) > room {
            let k_field = match k_origin {
                Origin::Role => FieldPath::of("topology.ecn_k_by_role").key(port.role.name()),
                _ => FieldPath::of("topology").key(format!("ecn_k_{}", k.unit.name())),
            };
            let k_how = if k_origin == Origin::Default { " (the default at this rate)" } else { "" };
            let unit = k.unit.name();
            let most = room.saturating_sub(packet);
            return Err(error(
                &k_field,
                format!(
                    "K = {} {unit}{k_how} {at} leaves no room for a full-size packet below the buffer, {b_field} = {b_value}, so those ports would never mark one; K must be at most the buffer less one full-size packet ({most} {unit}), or 0 for no marking",
                    k.k
                ),
            ));
        }
    }
    Ok(())
}

/// The per-link override that set port `id`'s rate, if one did (the last that applies, as the fabric
/// applies them in order): only leaf-spine ports have overrides.
fn rate_override(t: &TopologyConfig, fabric: &Fabric, id: usize) -> Option<usize> {
    use crate::config::Direction;
    let port = &fabric.ports[id];
    let (f, lpp) = (&fabric.facts, t.links_per_pair);
    let (leaf, spine, link, up) = match port.role {
        PortRole::LeafUp => (f.leaf_at(port.owner), f.spine_of_uplink(port.slot), port.slot % lpp, true),
        PortRole::SpineDown => (f.leaf_of_down_slot(port.slot), f.spine_at(port.owner), port.slot % lpp, false),
        _ => return None,
    };
    // The config names leaves and spines by their numbers.
    t.links.iter().rposition(|o| {
        o.rate_gbps.is_some()
            && o.leaf == leaf.0
            && o.spine == spine.0
            && o.link.is_none_or(|k| k == link)
            && match o.direction {
                Direction::Both => true,
                Direction::Up => up,
                Direction::Down => !up,
            }
    })
}

/// The field that sets a port's buffer, and its value with its unit.
fn buffer_field(t: &TopologyConfig, origin: Origin, b: Buffer) -> (FieldPath, String) {
    let field = match origin {
        Origin::Nic => FieldPath::of("transport.nic_queue_packets"),
        _ => FieldPath::of("topology").key(format!("buffer_{}", t.queue_unit.name())),
    };
    let how = if origin == Origin::Default { " (the default at this rate)" } else { "" };
    let value = if b.packets != u32::MAX { format!("{} packets{how}", b.packets) } else { format!("{} bytes{how}", b.bytes) };
    (field, value)
}

/// The scheme exists and its parameters resolve (ranges, relations, durations within the clock); an option
/// that sets packets' priority has levels to set, and a scheme with a rate estimator has FIFO ports. Returns
/// the scheme and its parameters, for the event estimate (the scheme's timers).
fn check_scheme(cfg: &Config, fabric: &Fabric) -> Result<(&'static SchemeSpec, Params), ConfigError> {
    let spec = find_scheme(&cfg.lb.scheme)?;
    check_ack_routing(cfg, spec)?;
    let params = Params::resolve(spec.name, spec.params, &cfg.lb.params, cfg.timing_rtt())?;
    check_queue_thresholds(cfg, fabric, spec, &params)?;
    check_periods(cfg, spec, &params)?;
    let levels = cfg.topology.priority_queues;
    let flags = spec.params.iter().filter(|p| PRIORITY_OPTIONS.contains(&p.name) && matches!(p.default, ParamValue::Bool(_)));
    for name in flags.map(|p| p.name) {
        if levels < 2 && <bool as ParamType>::read(&params, name) {
            return Err(error_at(&format!("lb.{name}"), "sets packets' priority levels, but every port has one (topology.priority_queues = 1): give topology.priority_queues = 2 or more"));
        }
    }
    if levels > 1 {
        // A rate estimator counts each packet at admission with the departure a FIFO port knows then;
        // strict priority reorders departures. Ask the scheme, as installing it would, on one leaf.
        let info = [SwitchInfo::leaf(&fabric.facts, crate::ids::LeafId(0), 0)];
        if let Installed::Switches(lbs) = (spec.install)(&BuildCx { facts: &fabric.facts, hosts: fabric.facts.hosts, switches: &info }, &params) {
            if lbs.iter().any(|lb| lb.rate_estimator().is_some()) {
                return Err(error_at("topology.priority_queues", format!("scheme '{}' keeps a rate estimator on its ports, which needs FIFO ports; give priority_queues = 1", spec.name)));
            }
        }
    }
    Ok((spec, params))
}

/// Every [`QueueThreshold`] of the scheme within reach of the largest buffer of the ports its rule reads
/// (a parameter left at 0, meaning "automatic", is not checked: the scheme then derives it from the ports).
fn check_queue_thresholds(cfg: &Config, fabric: &Fabric, spec: &SchemeSpec, params: &Params) -> Result<(), ConfigError> {
    let (t, tp) = (&cfg.topology, &cfg.transport);
    let full = (tp.mss_bytes + tp.header_bytes) as u64;
    for q in QUEUE_THRESHOLDS.iter().filter(|q| q.scheme == spec.name) {
        let value = params.number(q.param).unwrap_or_else(|| panic!("{} declares no parameter {}", q.scheme, q.param));
        if value <= 0.0 {
            continue;
        }
        // The largest buffer (in bytes) among the ports the rule reads, and the field that sets it.
        let mut largest: Option<(u64, Buffer, Origin)> = None;
        for port in fabric.ports.iter().filter(|p| q.roles.contains(&p.role)) {
            let (buffer, origin) = buffer_of(t, tp, port.role, port.rate);
            let bytes = buffer.bytes.min((buffer.packets as u64).saturating_mul(full));
            if largest.is_none_or(|(b, _, _)| bytes > b) {
                largest = Some((bytes, buffer, origin));
            }
        }
        let Some((room, buffer, origin)) = largest else { continue };
        let reachable = if q.reached_at { value <= room as f64 } else { value < room as f64 };
        if reachable {
            continue;
        }
        let (b_field, b_value) = buffer_field(t, origin, buffer);
        let in_bytes = if buffer.packets != u32::MAX { format!(" of {full}-byte packets, {room} bytes") } else { String::new() };
        let roles: Vec<&str> = q.roles.iter().map(|r| r.name()).collect();
        let most = if q.reached_at { room } else { room.saturating_sub(1) };
        return Err(error_at(
            &format!("lb.{}", q.param),
            format!(
                "{value} bytes is {} the largest buffer of the {} ports {} reads, {b_field} = {b_value}{in_bytes}: a queue never holds more than its buffer, and {}; use at most {most} bytes",
                if q.reached_at { "above" } else { "not below" },
                roles.join(", "),
                spec.name,
                q.never
            ),
        ));
    }
    Ok(())
}

/// Every given [`PERIODS`] entry of the scheme shorter than the horizon.
fn check_periods(cfg: &Config, spec: &SchemeSpec, params: &Params) -> Result<(), ConfigError> {
    let Some(horizon) = cfg.run.horizon_us else { return Ok(()) };
    for &(_, param, never) in PERIODS.iter().filter(|(scheme, param, _)| *scheme == spec.name && params.given(param)) {
        let period = params.number(param).unwrap_or_else(|| panic!("{} declares no parameter {param}", spec.name));
        if period > 0.0 && period >= horizon {
            return Err(error_at(
                &format!("lb.{param}"),
                format!("{period} us is not shorter than the run, run.horizon_us = {horizon} us: the first round would come after the run has ended, so {never}; give a period shorter than the horizon"),
            ));
        }
    }
    Ok(())
}

/// `lb.ack_routing = "edge"` (the receiving host's balancer routes the ACKs, `lb/ackpath.rs`) needs a
/// scheme that chooses its paths at the host. A switch scheme routes its ACKs in its switches: it has no
/// `ack_routing`, or (TAM, TR) one of its own whose values say how its switches place them. Either way the
/// message names the schemes "edge" applies to, rather than only the scheme's parameter list.
fn check_ack_routing(cfg: &Config, spec: &SchemeSpec) -> Result<(), ConfigError> {
    use crate::lb::Placement;
    let Some(given) = cfg.lb.params.get("ack_routing") else { return Ok(()) };
    if spec.placement == Placement::Edge {
        return Ok(());
    }
    let edge: Vec<&str> = crate::lb::SCHEMES.iter().filter(|s| s.placement == Placement::Edge).map(|s| s.name).collect();
    let message = match spec.params.iter().find(|p| p.name == "ack_routing") {
        // The scheme's own parameter, with a value other than "edge": its own check names its values.
        Some(_) if given.as_str() != Some("edge") => return Ok(()),
        Some(own) => {
            let values: Vec<String> = own.choices.iter().map(|n| format!("\"{n}\"")).collect();
            format!(
                "\"edge\" (ACKs routed by the receiving host's balancer) is for the schemes that choose paths at the host ({}); scheme '{}' chooses in its switches, and its own ack_routing is {}",
                edge.join(", "),
                spec.name,
                values.join(" or ")
            )
        }
        None => format!(
            "scheme '{}' chooses paths in its switches, which route its ACKs too, so it takes no ack_routing; ack_routing (\"ecmp\" or \"edge\") is for the schemes that choose at the host: {}",
            spec.name,
            edge.join(", ")
        ),
    };
    Err(error_at("lb.ack_routing", message))
}

fn check_run(cfg: &Config, fabric: &Fabric) -> Result<(), ConfigError> {
    if !cfg.run.start.is_empty() {
        check_stationary(cfg, fabric)?;
    }
    if cfg.run.warmup_us.is_some() && !cfg.sources.iter().any(|s| s.pattern == Pattern::Poisson) {
        return Err(error_at(
            "run.warmup_us",
            "a measurement window is counted in a poisson source's arrivals (its flows or duration_us after the warm-up), and this scenario has no poisson source; remove warmup_us",
        ));
    }
    if cfg.run.horizon_us.is_none() && cfg.sources.iter().any(|s| s.pattern == Pattern::LongLived) {
        return Err(error_at("run.horizon_us", "long-lived flows never end, so the run needs a horizon"));
    }
    let ports = fabric.ports.len();
    let sampled = cfg.run.sampler.as_ref().and_then(|s| s.ports.as_deref()).unwrap_or_default();
    if let Some(p) = sampled.iter().find(|&&p| p as usize >= ports) {
        return Err(error_at("run.sampler.ports", format!("port {p} does not exist (ports are 0..{})", ports - 1)));
    }
    Ok(())
}

/// A stationary start pre-loads what poisson sources with a load have in flight, modelling TCP's sharing
/// (`traffic/stationary.rs`): it needs such a source, and none of them may be UDP.
fn check_stationary(cfg: &Config, fabric: &Fabric) -> Result<(), ConfigError> {
    let mut any = false;
    for (i, s) in cfg.sources.iter().enumerate() {
        if !stationary::takes_part(s, &traffic::source_info(fabric, s)) {
            continue;
        }
        if s.transport == TransportKind::Udp {
            return Err(error(
                &source_field(i).key("transport"),
                "a stationary start pre-loads the flows a poisson source has in flight, modelled as TCP flows sharing their links fairly, and this poisson source is UDP; use an empty start (run.start = \"empty\") with a warm-up, or a TCP transport",
            ));
        }
        any = true;
    }
    if !any {
        let what = if cfg.sources.iter().any(|s| s.pattern == Pattern::Poisson) { "no poisson source with a load and flow sizes" } else { "no poisson source" };
        return Err(error_at(
            "run.start",
            format!("a stationary start pre-loads the flows that poisson sources (arrivals at a load) would have in flight in steady state, and this scenario has {what}; use run.start = \"empty\""),
        ));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------------
// Traffic

/// What the traffic check learns on the way: each source's flow count (expected, for a poisson source
/// bounded by time) with the field that sets it, as a path for the memory estimate and as the field's name
/// within the source for the run's size, and how long the arrivals last (for the memory estimate).
struct TrafficFacts {
    flows: Vec<(f64, String)>,
    counts: Vec<(f64, &'static str)>,
    span_us: f64,
    /// Of the flows, those measured (every flow without a window), and a stationary start's pre-loaded ones.
    measured: f64,
    preloaded: f64,
    /// Each source's measured flows (its count without a window).
    measured_by_source: Vec<f64>,
}

fn check_traffic(cfg: &Config, fabric: &Fabric) -> Result<TrafficFacts, ConfigError> {
    let hpl = cfg.topology.hosts_per_leaf;
    let mut fabric_load = 0.0;
    let mut flows = 0.0;
    let mut facts = TrafficFacts { flows: Vec::new(), counts: Vec::new(), span_us: 0.0, measured: 0.0, preloaded: 0.0, measured_by_source: Vec::new() };
    for (i, s) in cfg.sources.iter().enumerate() {
        let f = source_field(i);
        check_makes_flows(s, hpl, &f)?;
        let info = traffic::source_info(fabric, s);
        if s.pattern == Pattern::Poisson {
            fabric_load += check_poisson(s, &info, hpl, &f)?;
        }
        let (measured, name) = flow_count(s, &info);
        // With a measurement window, a poisson source also draws its warm-up and cool-down arrivals (they
        // count for the run's size too: they are flows the engine carries).
        let (n, span_us) = match Plan::of(&cfg.run) {
            Some(plan) if s.pattern == Pattern::Poisson => window::expected_arrivals(&plan, s, &info, measured),
            _ => (measured, arrival_span_us(s, &info, measured)),
        };
        facts.counts.push((n, name));
        facts.measured += if Plan::of(&cfg.run).is_some() && s.pattern != Pattern::Poisson { n } else { measured };
        facts.measured_by_source.push(measured);
        let field = f.key(name);
        flows += n;
        if flows > MAX_FLOWS as f64 {
            // Name the window when its arrivals, not the measured flows, break the limit.
            if flows - n + measured <= MAX_FLOWS as f64 {
                return Err(error_at("run.warmup_us", format!("the warm-up and cool-down would add about {:.0} flows to {}, more than the engine's {MAX_FLOWS} flow ids in all; give a shorter warm-up (or cooldown_us)", n - measured, field)));
            }
            return Err(error(&field, format!("the sources would make about {flows:.0} flows, more than the engine's {MAX_FLOWS} flow ids; make fewer flows")));
        }
        facts.flows.push((n, field.to_string()));
        facts.span_us = facts.span_us.max(span_us);
    }
    if fabric_load > 1.0 + 1e-9 {
        return Err(error_at("traffic", format!("the sources together offer a fabric load of {fabric_load:.2}, more than the fabric can carry (1.0)")));
    }
    // A stationary start's pre-loaded flows are flows the engine carries too.
    let infos: Vec<SourceInfo> = cfg.sources.iter().map(|s| traffic::source_info(fabric, s)).collect();
    let preloaded = stationary::expected_preloaded(cfg, fabric, &TcpParams::from_config(&cfg.transport), &infos);
    if preloaded > 0.0 {
        flows += preloaded;
        if flows > MAX_FLOWS as f64 {
            return Err(error_at("run.start", format!("the stationary start would pre-load about {preloaded:.0} flows, which with the sources' {:.0} is more than the engine's {MAX_FLOWS} flow ids; use an empty start or fewer hosts", flows - preloaded)));
        }
        facts.flows.push((preloaded, "run.start".to_string()));
        facts.preloaded = preloaded;
    }
    Ok(facts)
}

/// The clock and work rules ([`crate::runsize`]) on every source's estimate; the run's size without its
/// events (counted once the memory is known to fit, as they need the scheme's balancers built).
fn check_run_size(cfg: &Config, fabric: &Fabric, traffic: &TrafficFacts) -> Result<RunSize, ConfigError> {
    let mut sources = runsize::sources(cfg, fabric, &traffic.counts);
    if let Some(plan) = Plan::of(&cfg.run) {
        for (i, e) in sources.iter_mut().enumerate() {
            runsize::windowed(cfg, fabric, &plan, i, traffic.measured_by_source[i], e);
        }
    }
    let stall = stall_window(cfg, fabric, &TcpParams::from_config(&cfg.transport));
    let refuse = |(path, message): (FieldPath, String)| ConfigError::new(path, message);
    for (i, e) in sources.iter().enumerate() {
        runsize::check_clock(cfg, fabric, i, e, stall).map_err(refuse)?;
    }
    for (i, e) in sources.iter().enumerate() {
        runsize::check_work(cfg, fabric, i, e).map_err(refuse)?;
    }
    let mut sim_time_us = cfg.run.horizon_us.unwrap_or_else(|| sources.iter().map(|e| e.end_us).fold(0.0, f64::max));
    // A drain stops the run that long after the last window closes (expected: the measured arrivals at
    // their mean rate).
    if let (Some(plan), Some(drain)) = (Plan::of(&cfg.run), cfg.run.drain_us) {
        let closes = cfg
            .sources
            .iter()
            .filter(|s| s.pattern == Pattern::Poisson)
            .map(|s| {
                let info = traffic::source_info(fabric, s);
                let (measured, _) = flow_count(s, &info);
                let rate = info.offered_bps / (8.0 * info.mean_size.max(1.0));
                plan.warmup.as_us().max(s.start_us) + if rate > 0.0 { measured / rate * 1e6 } else { 0.0 }
            })
            .fold(0.0, f64::max);
        sim_time_us = sim_time_us.min(closes + drain);
    }
    let warmup_us = Plan::of(&cfg.run).map(|p| p.warmup.as_us());
    Ok(RunSize { sources, sim_time_us, horizon: cfg.run.horizon_us.is_some(), events: Vec::new(), measured_flows: traffic.measured, preloaded_flows: traffic.preloaded, warmup_us })
}

/// When source `s`'s last flow starts (on average for a poisson source of `n` flows), from time zero.
fn arrival_span_us(s: &SourceConfig, info: &SourceInfo, n: f64) -> f64 {
    match s.pattern {
        Pattern::Poisson if info.offered_bps > 0.0 => s.start_us + n * 8.0 * info.mean_size / info.offered_bps * 1e6,
        Pattern::Group => s.start_us + s.spread_us,
        Pattern::Incast => s.start_us + s.period_us * s.rounds.saturating_sub(1) as f64,
        Pattern::List => s.list.iter().map(|l| l.start_us).fold(0.0, f64::max),
        _ => s.start_us,
    }
}

/// A source must be able to make a flow: drawing pairs from sets without an admissible pair would never
/// end, and an incast or long-lived source whose every pair is a host with itself makes nothing.
fn check_makes_flows(s: &SourceConfig, hosts_per_leaf: u32, f: &FieldPath) -> Result<(), ConfigError> {
    match s.pattern {
        Pattern::Poisson | Pattern::Group if !traffic::has_admissible_pair(s, hosts_per_leaf) => {
            let host = s.senders[0];
            Err(error(
                &f.key("receivers"),
                if s.inter_leaf_only {
                    format!("every sender and receiver is on leaf {}, and inter_leaf_only pairs hosts on different leaves; add hosts on another leaf or set inter_leaf_only = false", host / hosts_per_leaf)
                } else {
                    format!("the only sender is also the only receiver (host {host}); a flow needs two different hosts")
                },
            ))
        }
        Pattern::Incast if traffic::planned_flows(s) == Some(0) => Err(error(
            &f.key("senders"),
            format!("every sender is the receiver (host {}); an incast needs a sender other than the first receiver", s.receivers[0]),
        )),
        Pattern::LongLived if traffic::planned_flows(s) == Some(0) => Err(error(
            &f.key("receivers"),
            format!("sender i sends to receiver i mod {}, which here is always the sender itself; give receivers that differ from the senders", s.receivers.len()),
        )),
        _ => Ok(()),
    }
}

/// A poisson source's load must be carried by its senders' leaf uplinks, and its arrivals must be no
/// finer than the 1 ps clock: below that the gaps round to zero and a source bounded by time would never
/// reach its end. Returns the fabric load the source adds (none when no pair crosses the fabric).
fn check_poisson(s: &SourceConfig, info: &SourceInfo, hosts_per_leaf: u32, f: &FieldPath) -> Result<f64, ConfigError> {
    let (offered, fabric) = (info.offered_bps, info.fabric_capacity_bps);
    if fabric <= 0.0 {
        return Err(error(&f.key("senders"), "the senders' leaves have no working uplink; a poisson source needs uplinks to carry its load"));
    }
    let crosses = s.inter_leaf_only || traffic::some_pair_differs(s, |h| h / hosts_per_leaf);
    let load = if crosses { offered / fabric } else { 0.0 };
    if load > 1.0 + 1e-9 {
        return Err(error(
            &f.key("load"),
            format!(
                "{} of the {} capacity offers {:.1} Gbps, more than the {:.1} Gbps the senders' leaf uplinks can carry (fabric load {load:.2}); the load must be in (0, 1] and the fabric must be able to carry it",
                s.load.unwrap_or(0.0),
                s.load_basis.name(),
                offered / 1e9,
                fabric / 1e9
            ),
        ));
    }
    let gap_ps = 8.0 * info.mean_size / offered * 1e12;
    if !(gap_ps >= 1.0) {
        return Err(error(
            &f.key("load"),
            format!(
                "{:.1} Gbps of flows of {} bytes on average arrive every {gap_ps:.3} ps, finer than the engine's 1 ps clock; lower the load or use larger flows",
                offered / 1e9,
                info.mean_size
            ),
        ));
    }
    Ok(load)
}

/// How many flows source `s` makes (the expected number for a poisson source bounded by time) and the
/// field that sets that number.
fn flow_count(s: &SourceConfig, info: &SourceInfo) -> (f64, &'static str) {
    if let Some(n) = traffic::planned_flows(s) {
        let field = match s.pattern {
            Pattern::Poisson | Pattern::Group => "flows",
            Pattern::Incast => "rounds",
            Pattern::LongLived => "senders",
            Pattern::List => "list",
        };
        return (n as f64, field);
    }
    let arrivals = info.offered_bps / (8.0 * info.mean_size) * s.duration_us.unwrap_or(0.0) / 1e6;
    match s.flows {
        Some(n) if (n as f64) < arrivals => (n as f64, "flows"),
        _ => (arrivals, "duration_us"),
    }
}

// ------------------------------------------------------------------------------------------------------
// Sampler

fn check_sampled_flows(cfg: &Config, fabric: &Fabric) -> Result<(), ConfigError> {
    let wanted = cfg.run.sampler.as_ref().map(|s| s.flows.as_slice()).unwrap_or_default();
    if wanted.is_empty() {
        return Ok(());
    }
    let count = flows_made(cfg, fabric);
    match wanted.iter().find(|&&id| id as u64 >= count) {
        Some(id) => Err(error_at("run.sampler.flows", format!("flow {id} does not exist (the scenario has {count} flows)"))),
        None => Ok(()),
    }
}

/// Exactly how many flows the run will have: in closed form when every source has one, else by generating
/// the traffic as the run will (always with a measurement window, whose warm-up and cool-down arrivals
/// are random).
fn flows_made(cfg: &Config, fabric: &Fabric) -> u64 {
    let planned = if Plan::of(&cfg.run).is_some() { None } else { cfg.sources.iter().map(traffic::planned_flows).sum::<Option<u64>>() };
    match planned {
        Some(n) => n,
        None => traffic::generate(cfg, fabric, &TcpParams::from_config(&cfg.transport)).0.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Direction, LinkOverride, ListedFlow, LoadBasis, SamplerConfig};
    use serde_json::json;

    /// The shared two-leaf poisson config with 50 flows.
    fn base() -> Config {
        crate::config::test_configs::two_leaf_poisson(50)
    }

    fn error(cfg: &Config) -> String {
        cfg.check().expect_err("the config must be rejected").to_string()
    }

    #[test]
    fn a_valid_config_passes() {
        base().check().unwrap();
    }

    #[test]
    fn an_error_carries_its_field_as_a_path() {
        let mut cfg = base();
        cfg.sources[0].list = vec![ListedFlow { start_us: 0.0, src: 1, dst: 1, size_bytes: 10, deadline_us: None }];
        cfg.sources[0].pattern = Pattern::List;
        let e = cfg.check().unwrap_err();
        assert_eq!(e.path, FieldPath::of("traffic.sources").index(0).key("list").index(0));
        assert_eq!(e.message, "src and dst are the same host (1); a flow needs two different hosts");
        // Errors of the scheme registry and the memory estimate, given as text, are read into a path too.
        let mut cfg = base();
        (cfg.lb.scheme, cfg.lb.params) = ("drill".into(), [("d".to_string(), json!(0))].into());
        assert_eq!(cfg.check().unwrap_err().path, FieldPath::of("lb.d"));
    }

    #[test]
    fn field_rules_are_the_first_stage() {
        let mut cfg = base();
        cfg.topology.links = vec![LinkOverride { leaf: 0, spine: 9, link: None, rate_gbps: None, delay_us: None, failed: true, direction: Direction::Both, ..Default::default() }];
        assert_eq!(error(&cfg), "topology.links[0].spine: 9 is out of range (0..1)");
        let mut cfg = base();
        cfg.sources[0].load = Some(1.5);
        assert_eq!(error(&cfg), "traffic.sources[0].load: must be in (0, 1] of its load_basis capacity (fabric), got 1.5");
        let mut cfg = base();
        cfg.sources[0].workload[0].points = vec![(1000.0, 0.0), (900.0, 0.5), (5000.0, 1.0)];
        assert_eq!(error(&cfg), "traffic.sources[0].workload[0].points[1]: sizes must not decrease (900 after 1000); the CDF is not monotonic");
    }

    #[test]
    fn a_fabric_too_large_for_32_bit_ids_is_refused_before_it_is_built() {
        let mut cfg = base();
        cfg.topology.leaves = 100_000;
        cfg.topology.hosts_per_leaf = 100_000;
        assert!(error(&cfg).starts_with("topology: the fabric would have 20000400000 ports, more than the engine's 32-bit port ids"));
    }

    #[test]
    fn failed_links_must_leave_every_leaf_pair_connected() {
        let mut cfg = base();
        for spine in 0..2 {
            cfg.topology.links.push(LinkOverride { leaf: 1, spine, link: None, rate_gbps: None, delay_us: None, failed: true, direction: Direction::Down, ..Default::default() });
        }
        assert_eq!(error(&cfg), "topology.links: the failed links leave no path from leaf 0 to leaf 1; every leaf needs a working path to every other leaf");
    }

    #[test]
    fn k_must_leave_room_for_a_full_packet_below_the_buffer_at_every_rate() {
        // Defaults scale K and the buffer together: every rate passes, very slow ones included.
        for rate in [0.001, 0.01, 0.1, 1.0, 10.0, 40.0, 100.0, 400.0] {
            let mut cfg = base();
            (cfg.topology.host_rate_gbps, cfg.topology.fabric_rate_gbps) = (rate, rate);
            cfg.check().unwrap();
            cfg.topology.queue_unit = QueueUnit::Packets;
            cfg.check().unwrap();
        }
        // Jumbo frames on slow links: the default buffer still holds K and a 9,040 B packet.
        let mut cfg = base();
        (cfg.topology.host_rate_gbps, cfg.topology.fabric_rate_gbps, cfg.transport.mss_bytes) = (0.1, 0.1, 9000);
        cfg.check().unwrap();
        // A fixed buffer with the default K: 40 Gbps fabric ports would never mark.
        let mut cfg = base();
        (cfg.topology.fabric_rate_gbps, cfg.topology.buffer_bytes) = (40.0, Some(384_000));
        assert_eq!(
            error(&cfg),
            "topology.ecn_k_bytes: K = 390000 bytes (the default at this rate) on leaf_up ports at 40 Gbps leaves no room for a full-size packet below the buffer, topology.buffer_bytes = 384000 bytes, so those ports would never mark one; K must be at most the buffer less one full-size packet (382500 bytes), or 0 for no marking"
        );
        // Just below the buffer is not enough in bytes: a full-size packet that finds K queued does not fit.
        let mut cfg = base();
        cfg.topology.ecn_k_bytes = Some(383_000);
        assert!(error(&cfg).starts_with("topology.ecn_k_bytes: K = 383000 bytes on leaf_down ports at 10 Gbps leaves no room"));
        cfg.topology.ecn_k_bytes = Some(382_500);
        cfg.check().unwrap();
        // The old packet defaults: 256 packets and K = 260 at 40 Gbps.
        let mut cfg = base();
        cfg.topology.queue_unit = QueueUnit::Packets;
        (cfg.topology.fabric_rate_gbps, cfg.topology.buffer_packets) = (40.0, Some(256));
        assert!(error(&cfg).starts_with("topology.ecn_k_packets: K = 260 packets (the default at this rate) on leaf_up ports at 40 Gbps leaves no room for a full-size packet below the buffer, topology.buffer_packets = 256 packets"));
        // A role's own K is named as such; host NICs count their ring in packets.
        let mut cfg = base();
        cfg.topology.ecn_k_by_role.insert("spine_down".into(), 400_000.0);
        assert!(error(&cfg).starts_with("topology.ecn_k_by_role.spine_down: K = 400000 bytes on spine_down ports at 10 Gbps leaves no room for a full-size packet below the buffer, topology.buffer_bytes = 384000 bytes (the default at this rate)"));
        let mut cfg = base();
        cfg.topology.queue_unit = QueueUnit::Packets;
        cfg.topology.ecn_k_by_role.insert("host_up".into(), 50.0);
        cfg.transport.nic_queue_packets = 50;
        assert!(error(&cfg).starts_with("topology.ecn_k_by_role.host_up: K = 50 packets on host_up ports at 10 Gbps leaves no room for a full-size packet below the buffer, transport.nic_queue_packets = 50 packets"));
        // A link override's rate: its ports get the defaults of that rate, and the message names the override.
        let mut cfg = base();
        cfg.topology.buffer_bytes = Some(384_000);
        cfg.topology.links = vec![LinkOverride { leaf: 1, spine: 0, rate_gbps: Some(100.0), direction: Direction::Down, ..Default::default() }];
        assert!(error(&cfg).starts_with("topology.ecn_k_bytes: K = 975000 bytes (the default at this rate) on spine_down ports at 100 Gbps (topology.links[0].rate_gbps) leaves no room"));
    }

    #[test]
    fn rates_below_one_bit_per_second_are_refused() {
        let mut cfg = base();
        cfg.topology.fabric_rate_gbps = 1e-12;
        assert_eq!(error(&cfg), "topology.fabric_rate_gbps: 0.000000000001 Gbps is below the engine's smallest rate, 1 bit/s (1e-9 Gbps)");
        let mut cfg = base();
        (cfg.sources[0].transport, cfg.sources[0].udp_rate_gbps) = (TransportKind::Udp, 1e-12);
        assert!(error(&cfg).starts_with("traffic.sources[0].udp_rate_gbps: "));
    }

    #[test]
    fn a_threshold_that_rounds_to_zero_is_refused() {
        let mut cfg = base();
        cfg.topology.queue_unit = QueueUnit::Packets;
        cfg.topology.ecn_k_packets = Some(0.4);
        assert_eq!(error(&cfg), "topology.ecn_k_packets: 0.4 rounds to 0 packets, which turns marking off; give 0 for no marking, or a threshold of at least 1");
        cfg.topology.ecn_k_packets = Some(0.0);
        cfg.check().unwrap();
        cfg.topology.ecn_k_by_role.insert("leaf_up".into(), 0.2);
        assert!(error(&cfg).starts_with("topology.ecn_k_by_role.leaf_up: 0.2 rounds to 0 packets"));
    }

    #[test]
    fn the_round_trip_must_be_shorter_than_the_longest_rto() {
        let mut cfg = base();
        cfg.topology.fabric_delay_us = 1e12;
        assert!(error(&cfg).starts_with("topology.fabric_delay_us: the longest round trip is 4000000000004 us of propagation"));
        // With an RTO that outlasts it, the run would end beyond a tenth of the clock (46 days of round trip).
        cfg.transport.max_rto_us = 1e13;
        assert!(error(&cfg).starts_with("topology.fabric_delay_us: the flows of source 0 would end at about "), "{}", error(&cfg));
        // A long run, not an impossible one: an hour of round trip.
        (cfg.topology.fabric_delay_us, cfg.transport.max_rto_us) = (1e9, 1e10);
        cfg.check().unwrap();
        let mut cfg = base();
        cfg.topology.links = vec![LinkOverride { delay_us: Some(300_000.0), ..Default::default() }];
        assert!(error(&cfg).starts_with("topology.links[0].delay_us: the longest round trip is 1200004 us"));
        // A failed link carries nothing.
        cfg.topology.links[0].failed = true;
        cfg.check().unwrap();
    }

    #[test]
    fn a_measurement_window_counts_its_warm_up_and_cool_down_arrivals_in_the_memory_estimate() {
        // 2 x 4 hosts at fabric load 0.4 of 2 x 20 Gbps, 50.5 KB flows: 39,604 arrivals a second.
        let mut cfg = base();
        cfg.sources[0].flows = Some(2_000);
        cfg.run.warmup_us = Some(100_000.0);
        let estimated = |cfg: &Config| -> f64 {
            let e = cfg.check_within(&Limits::default()).unwrap().memory;
            let part = e.parts.iter().find(|p| p.what.ends_with(" flows")).expect("a flows part");
            part.what.trim_end_matches(" flows").parse().unwrap()
        };
        let fabric = Fabric::build(&cfg.topology, &cfg.transport);
        let drawn = traffic::generate(&cfg, &fabric, &TcpParams::from_config(&cfg.transport)).0.len() as f64;
        // 2,000 measured, 0.1 s of warm-up and 0.2 s of cool-down: about 13,900 drawn.
        assert!((estimated(&cfg) / drawn - 1.0).abs() < 0.02, "estimated {} flows, drew {drawn}", estimated(&cfg));
        assert!(drawn > 13_000.0);
        // The sampled-flow check counts them too: flow 10,000 exists only with the window.
        cfg.run.sampler = Some(SamplerConfig { flows: vec![10_000], ..Default::default() });
        cfg.check().unwrap();
        cfg.run.warmup_us = None;
        assert!(error(&cfg).starts_with("run.sampler.flows: flow 10000 does not exist"));
    }

    #[test]
    fn memory_is_checked_before_the_fabric_is_built_and_before_flows_are_drawn() {
        use crate::memory::MemoryLimit;
        let limit = Limits { memory: Some(MemoryLimit { bytes: 1 << 30, source: "a test".into() }), events: None };
        base().check_within(&limit).unwrap();
        // Building this fabric would take terabytes: refused before it is built.
        let mut cfg = base();
        cfg.topology.leaves = 100_000;
        let e = cfg.check_within(&limit).unwrap_err().to_string();
        assert!(e.starts_with("topology.leaves: the run would need about "), "{e}");
        assert!(e.contains("more than the 1.1 GB it may use (a test)"), "{e}");
        // A billion flows: refused before any is drawn.
        let mut cfg = base();
        cfg.sources[0].flows = Some(1_000_000_000);
        assert!(cfg.check_within(&limit).unwrap_err().to_string().starts_with("traffic.sources[0].flows: the run would need about 1.1 TB"));
        cfg.check().unwrap();
    }

    #[test]
    fn the_host_queue_limit_lets_a_full_size_packet_through() {
        let mut cfg = base();
        cfg.transport.host_queue_limit_bytes = Some(1499);
        assert_eq!(
            error(&cfg),
            "transport.host_queue_limit_bytes: 1499 is below one full-size packet (1500 bytes on the wire), so a flow could not send one; use at least 1500, or 0 for no limit"
        );
        for ok in [0, 1500] {
            cfg.transport.host_queue_limit_bytes = Some(ok);
            cfg.check().unwrap();
        }
    }

    #[test]
    fn the_scheme_and_its_parameters_must_resolve() {
        let mut cfg = base();
        cfg.lb.scheme = "magic".into();
        assert!(error(&cfg).starts_with("lb.scheme: unknown scheme 'magic'; available: ecmp, "));
        let mut cfg = base();
        cfg.lb.scheme = "drill".into();
        cfg.lb.params.insert("d".into(), json!(0));
        assert_eq!(error(&cfg), "lb.d: must be in [1, 64], got 0");
        cfg.lb.params.insert("d".into(), json!(2));
        cfg.check().unwrap();
    }

    /// `ack_routing` is for the schemes that choose at the host; a switch scheme is refused naming the field,
    /// the scheme and where "edge" applies, whether it has no such parameter (CONGA) or one of its own (TAM).
    #[test]
    fn edge_ack_routing_is_refused_for_switch_schemes_naming_where_it_applies() {
        for scheme in ["presto", "hermes", "clove", "mdtlb"] {
            let mut cfg = base();
            cfg.lb.scheme = scheme.into();
            cfg.lb.params.insert("ack_routing".into(), json!("edge"));
            cfg.check().unwrap();
        }
        let mut cfg = base();
        cfg.lb.scheme = "conga".into();
        cfg.lb.params.insert("ack_routing".into(), json!("edge"));
        assert_eq!(
            error(&cfg),
            "lb.ack_routing: scheme 'conga' chooses paths in its switches, which route its ACKs too, so it takes no ack_routing; ack_routing (\"ecmp\" or \"edge\") is for the schemes that choose at the host: presto, hermes, clove, mdtlb"
        );
        cfg.lb.params.insert("ack_routing".into(), json!("ecmp"));
        assert!(error(&cfg).starts_with("lb.ack_routing: scheme 'conga' chooses paths in its switches"));
        let mut cfg = base();
        cfg.lb.scheme = "tam".into();
        cfg.lb.params.insert("ack_routing".into(), json!("edge"));
        assert_eq!(
            error(&cfg),
            "lb.ack_routing: \"edge\" (ACKs routed by the receiving host's balancer) is for the schemes that choose paths at the host (presto, hermes, clove, mdtlb); scheme 'tam' chooses in its switches, and its own ack_routing is \"flow_fastest\" or \"ecmp\""
        );
        // TAM's own values are its own.
        cfg.lb.params.insert("ack_routing".into(), json!("ecmp"));
        cfg.check().unwrap();
        let mut cfg = base();
        cfg.lb.scheme = "hermes".into();
        cfg.lb.params.insert("ack_routing".into(), json!("receiver"));
        assert_eq!(error(&cfg), "lb.ack_routing: expected one of ecmp, edge, got \"receiver\"");
    }

    #[test]
    fn a_queue_threshold_above_every_buffer_it_reads_is_refused() {
        // LBT's lower bound of Q1 and Q2 above the buffer: no queue could ever reach the thresholds.
        let mut cfg = base();
        (cfg.topology.buffer_bytes, cfg.lb.scheme) = (Some(384_000), "lbt".into());
        cfg.lb.params.insert("q_min_bytes".into(), json!(500_000));
        let e = error(&cfg);
        assert!(e.starts_with("lb.q_min_bytes: 500000 bytes is above the largest buffer of the leaf_up, spine_down ports lbt reads, topology.buffer_bytes = 384000 bytes:"), "{e}");
        assert!(e.ends_with("use at most 384000 bytes"), "{e}");
        // At the buffer a full queue reaches it: odd, but it can hold.
        cfg.lb.params.insert("q_min_bytes".into(), json!(384_000));
        cfg.check().unwrap();
        // In packets, the buffer holds that many full-size packets.
        let mut cfg = base();
        (cfg.topology.queue_unit, cfg.topology.buffer_packets, cfg.lb.scheme) = (QueueUnit::Packets, Some(100), "lbt".into());
        cfg.lb.params.insert("q_min_bytes".into(), json!(200_000));
        assert!(error(&cfg).starts_with("lb.q_min_bytes: 200000 bytes is above the largest buffer of the leaf_up, spine_down ports lbt reads, topology.buffer_packets = 100 packets of 1500-byte packets, 150000 bytes:"));
        // TAM's k* above the buffer is its queue rule turned off (coexistence marking alone): allowed.
        let mut cfg = base();
        (cfg.topology.buffer_bytes, cfg.lb.scheme) = (Some(384_000), "tam".into());
        cfg.lb.params.insert("k_star_bytes".into(), json!(1_000_000_000u64));
        cfg.check().unwrap();
    }

    #[test]
    fn a_period_given_longer_than_the_horizon_is_refused() {
        let mut cfg = base();
        (cfg.lb.scheme, cfg.run.horizon_us) = ("hermes".into(), Some(5000.0));
        cfg.check().unwrap(); // a default period is the run's length, not a setting
        cfg.lb.params.insert("probe_us".into(), json!(10000));
        assert!(error(&cfg).starts_with("lb.probe_us: 10000 us is not shorter than the run, run.horizon_us = 5000 us:"));
        cfg.lb.params.insert("probe_us".into(), json!(0)); // off
        cfg.check().unwrap();
        let mut cfg = base();
        (cfg.lb.scheme, cfg.run.horizon_us) = ("lbt".into(), Some(5000.0));
        cfg.lb.params.insert("period_us".into(), json!(5000));
        assert!(error(&cfg).starts_with("lb.period_us: 5000 us is not shorter than the run"));
    }

    #[test]
    fn a_warm_up_must_end_before_the_horizon() {
        let mut cfg = base();
        (cfg.run.warmup_us, cfg.run.horizon_us) = (Some(100_000.0), Some(50_000.0));
        assert!(error(&cfg).starts_with("run.warmup_us: the measurement window opens at 100000 us, not before the run ends at run.horizon_us = 50000 us"));
        cfg.run.warmup_us = Some(10_000.0);
        cfg.check().unwrap();
    }

    #[test]
    fn long_lived_flows_need_a_horizon() {
        let mut cfg = base();
        cfg.sources[0] = SourceConfig { pattern: Pattern::LongLived, senders: vec![0, 1], receivers: vec![4, 5], ..Default::default() };
        assert_eq!(error(&cfg), "run.horizon_us: long-lived flows never end, so the run needs a horizon");
        cfg.run.horizon_us = Some(1000.0);
        cfg.check().unwrap();
    }

    #[test]
    fn sampled_ports_must_exist() {
        let mut cfg = base();
        // 8 NICs + 2 leaves x (4 + 2) + 2 spines x 2 = 24 ports.
        cfg.run.sampler = Some(SamplerConfig { ports: Some(vec![3, 24]), ..Default::default() });
        assert_eq!(error(&cfg), "run.sampler.ports: port 24 does not exist (ports are 0..23)");
    }

    #[test]
    fn sampled_flows_must_exist_counted_or_generated() {
        let mut cfg = base();
        cfg.run.sampler = Some(SamplerConfig { flows: vec![49], ..Default::default() });
        cfg.check().unwrap();
        cfg.run.sampler = Some(SamplerConfig { flows: vec![50], ..Default::default() });
        assert_eq!(error(&cfg), "run.sampler.flows: flow 50 does not exist (the scenario has 50 flows)");
        // Bounded by time, the count is what the generator makes: check against the flows themselves.
        cfg.sources[0].flows = None;
        cfg.sources[0].duration_us = Some(2000.0);
        let tp = TcpParams::from_config(&cfg.transport);
        let made = traffic::generate(&cfg, &Fabric::build(&cfg.topology, &cfg.transport), &tp).0.len() as u32;
        assert!(made > 10);
        cfg.run.sampler = Some(SamplerConfig { flows: vec![made - 1], ..Default::default() });
        cfg.check().unwrap();
        cfg.run.sampler = Some(SamplerConfig { flows: vec![made], ..Default::default() });
        assert_eq!(error(&cfg), format!("run.sampler.flows: flow {made} does not exist (the scenario has {made} flows)"));
    }

    #[test]
    fn one_host_on_both_sides_is_an_error_not_a_hang() {
        for pattern in [Pattern::Poisson, Pattern::Group] {
            let mut cfg = base();
            let s = &mut cfg.sources[0];
            (s.pattern, s.senders, s.receivers, s.inter_leaf_only) = (pattern, vec![3], vec![3, 3], false);
            let expected = "traffic.sources[0].receivers: the only sender is also the only receiver (host 3); a flow needs two different hosts";
            assert_eq!(error(&cfg), expected);
            // The simulation checks first: before, drawing a pair looped forever here.
            assert_eq!(crate::simulate(&cfg).err().as_deref(), Some(expected));
        }
    }

    #[test]
    fn inter_leaf_only_needs_hosts_on_two_leaves() {
        let mut cfg = base();
        (cfg.sources[0].senders, cfg.sources[0].receivers) = (vec![4, 5], vec![6, 7]);
        assert_eq!(
            error(&cfg),
            "traffic.sources[0].receivers: every sender and receiver is on leaf 1, and inter_leaf_only pairs hosts on different leaves; add hosts on another leaf or set inter_leaf_only = false"
        );
        cfg.sources[0].inter_leaf_only = false;
        cfg.check().unwrap();
    }

    #[test]
    fn incast_and_long_lived_sources_must_pair_different_hosts() {
        let mut cfg = base();
        cfg.sources[0] = SourceConfig { pattern: Pattern::Incast, senders: vec![5], receivers: vec![5, 1], size_bytes: Some(1000), ..Default::default() };
        assert_eq!(error(&cfg), "traffic.sources[0].senders: every sender is the receiver (host 5); an incast needs a sender other than the first receiver");
        cfg.sources[0] = SourceConfig { pattern: Pattern::LongLived, senders: (0..8).collect(), receivers: (0..8).collect(), ..Default::default() };
        cfg.run.horizon_us = Some(1000.0);
        assert_eq!(
            error(&cfg),
            "traffic.sources[0].receivers: sender i sends to receiver i mod 8, which here is always the sender itself; give receivers that differ from the senders"
        );
        cfg.sources[0].receivers.rotate_left(1);
        cfg.check().unwrap();
    }

    #[test]
    fn a_list_source_needs_flows_between_existing_different_hosts() {
        let mut cfg = base();
        cfg.sources[0] = SourceConfig { pattern: Pattern::List, ..Default::default() };
        assert_eq!(error(&cfg), "traffic.sources[0].list: a list source needs at least one flow");
        let flow = |src, dst| ListedFlow { start_us: 0.0, src, dst, size_bytes: 1000, deadline_us: None };
        cfg.sources[0].list = vec![flow(0, 4), flow(2, 2)];
        assert_eq!(error(&cfg), "traffic.sources[0].list[1]: src and dst are the same host (2); a flow needs two different hosts");
        cfg.sources[0].list[1] = flow(2, 8);
        assert_eq!(error(&cfg), "traffic.sources[0].list[1]: host 8 does not exist (hosts are 0..7)");
    }

    #[test]
    fn sizes_must_stay_below_the_never_ends_size() {
        let mut cfg = base();
        cfg.sources[0].workload[0].points[1].0 = 1e19;
        assert_eq!(error(&cfg), "traffic.sources[0].workload[0]: 10000000000000000000 bytes is too large; sizes must be below 4611686018427387903 bytes (the size that means 'never ends')");
    }

    #[test]
    fn the_fabric_must_carry_each_load_and_all_of_them() {
        // 8 hosts x 10G of access at 0.6 is 48 Gbps over 2 leaves x 2 uplinks x 10G.
        let mut cfg = base();
        (cfg.sources[0].load, cfg.sources[0].load_basis) = (Some(0.6), LoadBasis::Access);
        assert_eq!(
            error(&cfg),
            "traffic.sources[0].load: 0.6 of the access capacity offers 48.0 Gbps, more than the 40.0 Gbps the senders' leaf uplinks can carry (fabric load 1.20); the load must be in (0, 1] and the fabric must be able to carry it"
        );
        let mut cfg = base();
        cfg.sources.push(cfg.sources[0].clone());
        cfg.sources[1].load = Some(0.7);
        assert_eq!(error(&cfg), "traffic: the sources together offer a fabric load of 1.10, more than the fabric can carry (1.0)");
        // Pairs that never leave their leaf do not load the fabric.
        (cfg.sources[1].senders, cfg.sources[1].receivers, cfg.sources[1].inter_leaf_only) = (vec![0, 1], vec![2, 3], false);
        cfg.check().unwrap();
    }

    #[test]
    fn senders_without_a_working_uplink_cannot_carry_a_load() {
        let mut cfg = base();
        cfg.topology.leaves = 1;
        (cfg.sources[0].senders, cfg.sources[0].receivers, cfg.sources[0].inter_leaf_only) = ((0..4).collect(), (0..4).collect(), false);
        cfg.check().unwrap();
        for spine in 0..2 {
            cfg.topology.links.push(LinkOverride { leaf: 0, spine, link: None, rate_gbps: None, delay_us: None, failed: true, direction: Direction::Up, ..Default::default() });
        }
        assert_eq!(error(&cfg), "traffic.sources[0].senders: the senders' leaves have no working uplink; a poisson source needs uplinks to carry its load");
    }

    #[test]
    fn arrivals_finer_than_the_clock_are_an_error_not_a_hang() {
        // Flows of 1 byte at 16 Tbps (0.4 of 4 uplinks of 10 Tbps) arrive every 0.5 ps: they would crowd at
        // one instant, and a source bounded by time would never reach its end.
        let mut cfg = base();
        (cfg.topology.host_rate_gbps, cfg.topology.fabric_rate_gbps) = (10_000.0, 10_000.0);
        cfg.sources[0].workload[0].points = vec![(1.0, 0.0), (1.0, 1.0)];
        (cfg.sources[0].flows, cfg.sources[0].duration_us) = (None, Some(1000.0));
        let expected = "traffic.sources[0].load: 16000.0 Gbps of flows of 1 bytes on average arrive every 0.500 ps, finer than the engine's 1 ps clock; lower the load or use larger flows";
        assert_eq!(error(&cfg), expected);
        assert_eq!(crate::simulate(&cfg).err().as_deref(), Some(expected));
    }

    #[test]
    fn a_warm_up_too_long_for_the_flow_ids_names_the_warm_up() {
        // The measured flows fit in the 32-bit ids; a warm-up of a million seconds of arrivals does not.
        let mut cfg = base();
        cfg.run.warmup_us = Some(1e12);
        let e = error(&cfg);
        assert!(e.starts_with("run.warmup_us: the warm-up and cool-down would add about ") && e.contains("traffic.sources[0].flows"), "{e}");
        // Without the window the same flows are fine; too many measured flows still name the source.
        cfg.run.warmup_us = None;
        cfg.check().unwrap();
        cfg.sources[0].flows = Some(u64::from(u32::MAX) + 1);
        assert!(error(&cfg).starts_with("traffic.sources[0].flows: the sources would make about"));
    }

    #[test]
    fn a_cdf_of_flows_below_a_byte_on_average_is_refused() {
        // Every flow 0 bytes (mean 0) once gave arrivals finer than the clock; half a byte on average too.
        for points in [vec![(0.0, 0.0), (0.0, 1.0)], vec![(0.0, 0.0), (1.0, 1.0)]] {
            let mut cfg = base();
            cfg.sources[0].workload[0].points = points;
            let e = error(&cfg);
            assert!(e.starts_with("traffic.sources[0].workload[0]: the CDF's mean is ") && e.contains("below one byte"), "{e}");
        }
        let mut cfg = base();
        cfg.sources[0].workload[0].points = vec![(0.0, 0.0), (2.0, 1.0)];
        cfg.check().unwrap();
    }

    #[test]
    fn the_flow_count_must_fit_the_flow_ids() {
        let mut cfg = base();
        cfg.sources[0].pattern = Pattern::Group;
        cfg.sources[0].flows = Some(5_000_000_000);
        assert_eq!(error(&cfg), "traffic.sources[0].flows: the sources would make about 5000000000 flows, more than the engine's 4294967295 flow ids; make fewer flows");
        // A poisson source bounded by time: the expected count, 16 Gbps of 50.5 KB flows for 10^6 s.
        let mut cfg = base();
        (cfg.sources[0].flows, cfg.sources[0].duration_us) = (None, Some(1e12));
        assert!(error(&cfg).starts_with("traffic.sources[0].duration_us: the sources would make about 39603960396 flows"));
    }

    #[test]
    fn cdf_problems_name_the_point() {
        assert_eq!(cdf_problem(&[(0.0, 0.0), (10.0, 1.0)]), None);
        assert_eq!(cdf_problem(&[(5.0, 1.0)]), Some((None, "a CDF needs at least two points, found 1".into())));
        assert_eq!(cdf_problem(&[(0.0, 0.0), (10.0, 0.5), (20.0, 0.4), (30.0, 1.0)]).unwrap().0, Some(2));
        assert_eq!(cdf_problem(&[(-1.0, 0.0), (10.0, 1.0)]).unwrap().0, Some(0));
        assert_eq!(cdf_problem(&[(0.0, 0.0), (10.0, 0.9)]), Some((Some(1), "the last probability must be 1 (the CDF must end at 1), got 0.9".into())));
        assert_eq!(cdf_problem(&[(0.0, 0.0), (f64::NAN, 1.0)]).unwrap().0, Some(1));
        assert_eq!(cdf_problem(&[(0.0, 0.0), (f64::INFINITY, 1.0)]), Some((Some(1), "sizes must be finite, got inf".into())));
    }
}
