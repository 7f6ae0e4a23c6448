//! A run's size before it runs: what each source will do, how long the run will last, how many events it
//! will take; and the three rules about them that [`Config::check`] applies (the clock's range, work for
//! every source, an event limit).
//!
//! Nothing is simulated and nothing large is allocated. The estimate is the one number for these sizes: the
//! check refuses from it, and the Python front prints it (`dclb run --dry-run`) through the binding.
//!
//! **Per source** ([`SourceEstimate`]), from its pattern, its traffic facts ([`SourceInfo`]) and the fabric:
//!
//! ```text
//!  flows     exact, except a poisson source bounded by duration_us: the expected arrivals (rate x duration,
//!            capped by flows), rate = offered load / (8 x mean size)
//!  started   of those, the flows that start before the horizon (all without one; expected for poisson)
//!  first     when its first flow starts (poisson: one mean gap after start_us); last: its last start
//!  end       when its last flow can end at the earliest: the latest of the last arrival plus one base
//!            round trip plus the mean flow alone at its rate, the first arrival plus the largest flow alone,
//!            and the first arrival plus the source's bytes over its senders' host links (and over their
//!            leaves' uplinks for the share of pairs on different leaves); infinite for unbounded flows.
//!            A lower bound: queueing and timeouts come on top
//!  packets   the data packets it sends (unbounded flows: at most what the host links and uplinks carry
//!            until the horizon)
//! ```
//!
//! **The run** lasts until the horizon, or without one until the latest source end. Its **events**
//! ([`EventPart`]) come from four sources: about [`EVENTS_PER_PACKET`] per data packet (a packet and its
//! ACK each cross four links, two events a link; measured 15-16 on several workloads and schemes); every
//! balancer timer (each switch's and host's `timer_period`, read from the scheme's balancers as built for
//! this config, so presets and defaults are the scheme's own), once per period over the run; the probes
//! an edge balancer sends each timer round ([`crate::lb::EdgeBalancer::probes_per_round`]), a probe and its
//! reply costing about what a packet and its ACK do; and the sampler's ticks. Retransmissions and drops come
//! on top: the estimate is rough, and low rather than high.
//!
//! **The rules**, each an error naming the field that decides it:
//!
//! * *The clock's range.* Every time the run computes from the config fits the clock (2^64 − 1 ps,
//!   [`Time::RANGE_US`]): a source's end of arrivals (`start_us + duration_us`), its group spread, its last
//!   incast round, each deadline after the last start (a slack deadline after the largest flow's ideal time),
//!   each listed flow's deadline. A poisson source's arrivals are random, so ten times their expected span
//!   ([`CLOCK_HEADROOM`]) must fit after its start; and the estimated end of a run without a horizon (a lower
//!   bound) must stay within a tenth of the clock, with the no-progress watchdog's window fitting beyond it. Beyond, a time would saturate at the clock's
//!   end and give a result that only looks valid ([`crate::units`]).
//! * *Work.* Every source is expected to start a flow before the run ends: a poisson source whose window
//!   (`duration_us`, or the horizon) leaves less than one expected arrival, and a source that starts every
//!   flow at or after the horizon, would be input silently ignored, and a run with nothing to do would report
//!   nothing. A source whose expected flows the random arrivals happen not to make is the run's business
//!   (the front warns, or with `--strict` refuses the result).
//! * *Events.* Given a limit ([`EventLimit`]), a run estimated above it is refused, naming the field behind
//!   the largest part (`lb.probe_us = 1e-6`: a probe round every picosecond): it would take hours and is
//!   likely a typo. The caller says how to insist (the front's `DCLB_EVENT_LIMIT`). The running simulation is
//!   held to the same limit ([`crate::Simulation`]).

use crate::config::{Config, DeadlineModel, FieldPath, Pattern, SourceConfig, TransportKind};
use crate::fabric::{Fabric, PortRole};
use crate::ids::{HostId, LeafId};
use crate::lb::{BuildCx, Installed, Params, SchemeSpec, SwitchInfo};
use crate::traffic::{self, window, SourceInfo};
use crate::units::{Rate, Time};

/// Events the engine handles per data packet sent between leaves (see the module doc).
pub const EVENTS_PER_PACKET: f64 = 16.0;

/// The estimated end of a run without a horizon, and a poisson source's expected last arrival, must stay
/// within this fraction of the clock's range: the estimate is a lower bound, and arrivals are random.
pub const CLOCK_HEADROOM: f64 = 0.1;

/// What one source will do, as far as the config tells before the run (module doc).
#[derive(Clone, Debug, serde::Serialize)]
pub struct SourceEstimate {
    pub flows: f64,
    pub started: f64,
    pub first_us: f64,
    pub last_us: f64,
    /// Infinite for flows that never end.
    pub end_us: f64,
    pub packets: f64,
    /// The field that sets the flow count (`flows`, `duration_us`, ...), within the source.
    #[serde(skip)]
    pub count_field: &'static str,
}

/// One kind of event in the estimate: how many, and the field that sets their number.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EventPart {
    /// "packets", "timers", "probes" or "sampler".
    pub kind: &'static str,
    pub events: f64,
    pub field: String,
    /// What they are, for the refusal.
    pub what: String,
}

/// The most events a run may be estimated at (and may process), and where that number comes from with how
/// to insist (said in the refusal).
#[derive(Clone, Debug)]
pub struct EventLimit {
    pub events: f64,
    /// For the message: "the default limit; set DCLB_EVENT_LIMIT=none ...".
    pub source: String,
}

/// A run's size (module doc): its sources, its length and its events.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RunSize {
    pub sources: Vec<SourceEstimate>,
    /// The horizon, or the latest source end (a lower bound, infinite for unbounded flows without one).
    pub sim_time_us: f64,
    pub horizon: bool,
    pub events: Vec<EventPart>,
    /// Of the sources' flows, those measured (in the window, when the run has one), and the flows a
    /// stationary start pre-loads (expected); the warm-up, µs, with a window.
    pub measured_flows: f64,
    pub preloaded_flows: f64,
    pub warmup_us: Option<f64>,
}

impl RunSize {
    pub fn total_events(&self) -> f64 {
        self.events.iter().map(|p| p.events).sum()
    }

    /// Nothing when the estimate fits `limit` (or there is no limit), else the one-line refusal naming the
    /// field behind the largest part.
    pub fn within(&self, limit: Option<&EventLimit>) -> Result<(), String> {
        let Some(limit) = limit else { return Ok(()) };
        let total = self.total_events();
        if total <= limit.events {
            return Ok(());
        }
        let top = self.events.iter().max_by(|a, b| a.events.total_cmp(&b.events)).expect("over a limit, an estimate has a part");
        let parts: Vec<String> = self.events.iter().filter(|p| p.events >= 1.0).map(|p| format!("{} {}", p.what, count(p.events))).collect();
        Err(format!(
            "{}: the run would take about {} events ({}; rough estimate), more than the limit of {} ({})",
            top.field,
            count(total),
            parts.join(", "),
            count(limit.events),
            limit.source
        ))
    }
}

/// A count of events for messages: `950`, `12.3 k`, `4.5 G`, `2.1e+14`.
pub fn count(n: f64) -> String {
    if n >= 1e13 {
        return format!("{n:.2e}");
    }
    for (unit, scale) in [("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)] {
        if n >= scale {
            return format!("{:.1} {unit}", n / scale);
        }
    }
    format!("{n:.0}")
}

/// A number for a message, short: `1e-6`, `0.4`, `2000`, `1.9e13`, `39603.960396`.
pub fn num(v: f64) -> String {
    let trim = |s: &str| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() };
    if v != 0.0 && v.is_finite() && (v.abs() >= 1e7 || v.abs() < 1e-3) {
        let s = format!("{v:.3e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{exponent}", trim(mantissa))
    } else {
        trim(&format!("{v:.6}"))
    }
}

/// The clock's range for messages.
fn clock() -> String {
    format!("{} us, picoseconds in 64 bits", num(Time::RANGE_US))
}

/// The facts of the fabric every source's estimate needs.
struct FabricRates {
    host_bps: f64,
    /// The fastest a flow between leaves can go on its uplink.
    fastest_uplink_bps: f64,
    /// The most the fabric's working uplinks carry at once.
    uplinks_bps: f64,
    /// One base round trip (a full-size packet out, its ACK back), in µs.
    base_rtt_us: f64,
}

impl FabricRates {
    fn of(cfg: &Config, fabric: &Fabric) -> FabricRates {
        let uplinks = fabric.ports.iter().filter(|p| p.role == PortRole::LeafUp && p.up);
        FabricRates {
            host_bps: fabric.facts.host_rate.bps() as f64,
            fastest_uplink_bps: uplinks.clone().map(|p| p.rate.bps() as f64).fold(0.0, f64::max),
            uplinks_bps: uplinks.map(|p| p.rate.bps() as f64).sum(),
            base_rtt_us: cfg.base_rtt().as_us(),
        }
    }
}

/// Source `s`'s arrivals per second (poisson; 0 for any other pattern).
fn arrival_rate(info: &SourceInfo) -> f64 {
    if info.mean_size > 0.0 && info.offered_bps > 0.0 {
        info.offered_bps / (8.0 * info.mean_size)
    } else {
        0.0
    }
}

/// The share of a source's random (sender, receiver) pairs whose hosts are on different leaves.
fn crossing_share(s: &SourceConfig, hosts_per_leaf: u32) -> f64 {
    if s.inter_leaf_only {
        return 1.0;
    }
    let leaf = |h: u32| h / hosts_per_leaf;
    let mut receivers_on: std::collections::BTreeMap<u32, f64> = std::collections::BTreeMap::new();
    for &r in &s.receivers {
        *receivers_on.entry(leaf(r)).or_default() += 1.0;
    }
    let receivers: std::collections::BTreeSet<u32> = s.receivers.iter().copied().collect();
    let both = s.senders.iter().filter(|h| receivers.contains(h)).count() as f64;
    let pairs = s.senders.len() as f64 * s.receivers.len() as f64 - both;
    let same_leaf = s.senders.iter().map(|&h| receivers_on.get(&leaf(h)).copied().unwrap_or(0.0)).sum::<f64>() - both;
    if pairs <= 0.0 {
        0.0
    } else {
        (1.0 - same_leaf / pairs).max(0.0)
    }
}

/// The largest flow a source makes, in bytes.
fn largest_bytes(s: &SourceConfig, mean: f64) -> f64 {
    if let Some(b) = s.size_bytes {
        return b as f64;
    }
    if !s.workload.is_empty() {
        return s.workload.iter().map(|c| c.points[c.points.len() - 1].0).fold(0.0, f64::max);
    }
    if !s.list.is_empty() {
        return s.list.iter().map(|l| l.size_bytes as f64).fold(0.0, f64::max);
    }
    mean
}

/// Source `s`'s estimate (module doc): `n` flows (counted by `count_field`) with traffic facts `info`.
fn source_estimate(cfg: &Config, s: &SourceConfig, info: &SourceInfo, n: f64, count_field: &'static str, rates: &FabricRates) -> SourceEstimate {
    let rate = arrival_rate(info);
    let start = s.start_us;
    let (first, last) = match s.pattern {
        Pattern::Poisson => {
            let first = if rate > 0.0 { start + 1e6 / rate } else { f64::INFINITY };
            let span = if rate > 0.0 { n / rate * 1e6 } else { f64::INFINITY };
            (first, start + s.duration_us.map_or(span, |d| d.min(span)))
        }
        Pattern::Group => (start, start + s.spread_us),
        Pattern::Incast => (start, start + s.period_us * s.rounds.saturating_sub(1) as f64),
        Pattern::LongLived => (start, start),
        Pattern::List => {
            let starts = s.list.iter().map(|l| l.start_us);
            (starts.clone().fold(f64::INFINITY, f64::min), starts.fold(0.0, f64::max))
        }
    };
    let started = started_before(s, n, rate, cfg.run.horizon_us);
    let mean = match s.pattern {
        Pattern::List if n > 0.0 => s.list.iter().map(|l| l.size_bytes as f64).sum::<f64>() / n,
        _ => info.mean_size,
    };
    let hpl = cfg.topology.hosts_per_leaf;
    let sending_bps = match s.transport {
        TransportKind::Udp => rates.host_bps.min(Rate::from_gbps(s.udp_rate_gbps).bps() as f64),
        _ => rates.host_bps,
    };
    let crossing = if s.pattern == Pattern::List { 1.0 } else { crossing_share(s, hpl) };
    let alone_bps = if crossing >= 1.0 { sending_bps.min(rates.fastest_uplink_bps) } else { sending_bps };
    let wire = (cfg.transport.mss_bytes + cfg.transport.header_bytes) as f64;
    let estimate = |end_us: f64, packets: f64| SourceEstimate { flows: n, started, first_us: first, last_us: last, end_us, packets, count_field };
    if s.pattern == Pattern::LongLived && s.size_bytes.is_none() {
        // Unbounded flows move what their host links and the uplinks carry, until the horizon.
        let active_us = (cfg.run.horizon_us.unwrap_or(0.0) - start).max(0.0);
        let packets = (n * sending_bps).min(rates.uplinks_bps) * active_us / 1e6 / 8.0 / wire;
        return estimate(f64::INFINITY, packets);
    }
    let total_bits = n * mean * 8.0;
    let access = match s.pattern {
        Pattern::List => s.list.iter().map(|l| l.src).collect::<std::collections::BTreeSet<_>>().len() as f64 * sending_bps,
        _ if s.transport == TransportKind::Udp => info.access_capacity_bps.min(s.senders.len() as f64 * sending_bps),
        _ => info.access_capacity_bps,
    };
    let mut work_us = if access > 0.0 { total_bits / access * 1e6 } else { 0.0 };
    if crossing > 0.0 && info.fabric_capacity_bps > 0.0 {
        work_us = work_us.max(total_bits * crossing / info.fabric_capacity_bps * 1e6);
    }
    let alone_us = |bytes: f64| bytes * 8.0 / alone_bps * 1e6;
    let from = if first.is_finite() { first } else { start };
    let mut end = (last + rates.base_rtt_us + alone_us(mean)).max(from + work_us);
    if n > 0.0 {
        end = end.max(first + rates.base_rtt_us + alone_us(largest_bytes(s, mean)));
    }
    let packets = n * (mean / cfg.transport.mss_bytes as f64 + 0.5);
    estimate(end, packets)
}

/// Corrects a poisson source's estimate `e` for a run with a measurement window `plan` (`measured` flows in
/// it): the run simulates its warm-up, its window and then only until its measured flows have ended (or its
/// drain), not the whole cool-down it draws, so the arrivals it carries are those of that span, and its
/// last flow ends at the earliest when the largest measured flow, arriving at the window's end, could.
pub fn windowed(cfg: &Config, fabric: &Fabric, plan: &window::Plan, i: usize, measured: f64, e: &mut SourceEstimate) {
    let s = &cfg.sources[i];
    if s.pattern != Pattern::Poisson {
        return;
    }
    let info = traffic::source_info(fabric, s);
    let rate = arrival_rate(&info);
    if rate <= 0.0 {
        return;
    }
    let rates = FabricRates::of(cfg, fabric);
    let opens = plan.warmup.as_us().max(s.start_us);
    let window_us = s.duration_us.map_or(measured / rate * 1e6, |d| d.min(measured / rate * 1e6));
    let closes = opens + window_us;
    let alone_largest = largest_bytes(s, info.mean_size) * 8.0 / rates.host_bps.min(rates.fastest_uplink_bps.max(1.0)) * 1e6;
    let tail = cfg.run.drain_us.unwrap_or(rates.base_rtt_us + alone_largest).min(plan.cooldown.as_us());
    let simulated = (closes + tail - s.start_us).max(0.0);
    e.last_us = closes + tail;
    e.end_us = e.end_us.min(closes + cfg.run.drain_us.unwrap_or(rates.base_rtt_us + alone_largest));
    e.packets = e.packets.min(rate * simulated / 1e6 * (info.mean_size / cfg.transport.mss_bytes as f64 + 0.5));
}

/// Of a source's `n` flows, those expected to start before `horizon` (all without one).
fn started_before(s: &SourceConfig, n: f64, rate: f64, horizon: Option<f64>) -> f64 {
    let Some(h) = horizon else { return n };
    if n <= 0.0 {
        return n;
    }
    match s.pattern {
        Pattern::Poisson => {
            let window = s.duration_us.map_or(h - s.start_us, |d| d.min(h - s.start_us)).max(0.0);
            n.min(rate * window / 1e6)
        }
        Pattern::List => s.list.iter().filter(|l| l.start_us < h).count() as f64,
        _ if s.start_us >= h => 0.0,
        Pattern::Group if s.spread_us > 0.0 => n * ((h - s.start_us) / s.spread_us).min(1.0),
        Pattern::Incast if s.period_us > 0.0 => n * ((h - s.start_us) / s.period_us).ceil().min(s.rounds as f64) / s.rounds as f64,
        _ => n,
    }
}

/// The estimate of every source: `counts` holds each source's flow count and the field that sets it.
pub fn sources(cfg: &Config, fabric: &Fabric, counts: &[(f64, &'static str)]) -> Vec<SourceEstimate> {
    let rates = FabricRates::of(cfg, fabric);
    cfg.sources.iter().zip(counts).map(|(s, &(n, field))| source_estimate(cfg, s, &traffic::source_info(fabric, s), n, field, &rates)).collect()
}

// ------------------------------------------------------------------------------------------------------
// The rules

/// The clock rule (module doc) for source `i`; the error's path and message.
pub fn check_clock(cfg: &Config, fabric: &Fabric, i: usize, e: &SourceEstimate, stall_window: Time) -> Result<(), (FieldPath, String)> {
    let s = &cfg.sources[i];
    let f = FieldPath::of("traffic.sources").index(i);
    let beyond = |field: FieldPath, what: String| Err((field, format!("{what}, beyond what the engine's clock can hold ({}); use values that keep the run's times within it", clock())));
    let fits = |us: f64| Time::try_from_us_f64(us).is_some();
    match s.pattern {
        Pattern::Poisson => {
            if let Some(d) = s.duration_us.filter(|&d| !fits(s.start_us + d)) {
                return beyond(f.key("duration_us"), format!("start_us + duration_us = {} us", num(s.start_us + d)));
            }
            // Arrivals are random: ten times their expected span must fit.
            let span = e.last_us - s.start_us;
            if s.duration_us.is_none() && !fits(s.start_us + span / CLOCK_HEADROOM) {
                let info = traffic::source_info(fabric, s);
                let basis = if s.load_basis == crate::config::LoadBasis::Access { info.access_capacity_bps } else { info.fabric_capacity_bps };
                return beyond(
                    f.key("load"),
                    format!(
                        "{} flows arriving at {} per second (load {} of the {} capacity, {} bit/s, over flows of {} bytes on average) from {} us: the last at about {} us, and arrivals are random, so {} times that span must fit",
                        num(e.flows),
                        num(arrival_rate(&info)),
                        num(s.load.unwrap_or(0.0)),
                        s.load_basis.name(),
                        num(basis),
                        num(info.mean_size),
                        num(s.start_us),
                        num(e.last_us),
                        num(1.0 / CLOCK_HEADROOM)
                    ),
                );
            }
        }
        Pattern::Group if !fits(e.last_us) => return beyond(f.key("spread_us"), format!("start_us + spread_us = {} us", num(e.last_us))),
        Pattern::Incast if !fits(e.last_us) => {
            return beyond(f.key("period_us"), format!("the last round starts at start_us + (rounds - 1) x period_us = {} us", num(e.last_us)))
        }
        Pattern::List => {
            for (k, l) in s.list.iter().enumerate() {
                if let Some(d) = l.deadline_us.filter(|&d| !fits(l.start_us + d)) {
                    return beyond(f.key("list").index(k), format!("start_us + deadline_us = {} us", num(l.start_us + d)));
                }
            }
        }
        _ => {}
    }
    if e.last_us.is_finite() {
        let due = match s.deadline {
            DeadlineModel::Fixed { us } => Some(("us", us)),
            DeadlineModel::Uniform { hi_us, .. } => Some(("hi_us", hi_us)),
            DeadlineModel::Slack { factor } => Some(("factor", factor * slowest_ideal_us(cfg, fabric, s))),
            DeadlineModel::None => None,
        };
        if let Some((name, d)) = due.filter(|&(_, d)| !fits(e.last_us + d)) {
            return beyond(f.key("deadline").key(name), format!("the last flow's deadline falls at about {} us", num(e.last_us + d)));
        }
    }
    if cfg.run.horizon_us.is_some() {
        return Ok(());
    }
    if !(e.end_us <= CLOCK_HEADROOM * Time::RANGE_US) {
        return Err((
            late_field(cfg, fabric, i, e),
            format!(
                "the flows of source {i} would end at about {} us at the earliest, beyond what the engine's clock can hold ({}; a run's estimated end must stay within {CLOCK_HEADROOM} of it, as the estimate leaves out queueing and timeouts); use values that keep the run's times within it, or set run.horizon_us",
                num(e.end_us),
                clock()
            ),
        ));
    }
    let window = stall_window_us(cfg, stall_window);
    if fits(e.end_us + window) {
        return Ok(());
    }
    Err((
        stall_field(cfg, stall_window),
        format!(
            "the no-progress watchdog waits {} us (64 x the longest wait for a delivery) before it stops a stalled run, so a run that stalls after its last flow's earliest end ({} us) would run past what the engine's clock can hold ({}); use a shorter timeout, or set run.horizon_us",
            num(window),
            num(e.end_us),
            clock()
        ),
    ))
}

/// The no-progress watchdog's window in µs, as `build.rs` computes it but without saturating (its RTO and
/// UDP parts recomputed beside the clock-bound `window`).
fn stall_window_us(cfg: &Config, window: Time) -> f64 {
    let tp = &cfg.transport;
    let wire = (tp.mss_bytes + tp.header_bytes) as f64 * 8.0;
    let udp = cfg.sources.iter().filter(|s| s.transport == TransportKind::Udp).map(|s| wire / (Rate::from_gbps(s.udp_rate_gbps).bps() as f64) * 1e6).fold(0.0, f64::max);
    window.as_us().max(64.0 * tp.max_rto_us.max(tp.init_rto_us).max(udp))
}

/// What sets the no-progress watchdog's window (`build.rs`): the RTO's cap (or its initial value), the
/// slowest UDP source, or else the round trip through full buffers.
fn stall_field(cfg: &Config, window: Time) -> FieldPath {
    let tp = &cfg.transport;
    let rto = tp.max_rto_us.max(tp.init_rto_us);
    let covers = |us: f64| us * 64.0 >= stall_window_us(cfg, window) * 0.999;
    if covers(rto) {
        return FieldPath::of(if tp.init_rto_us > tp.max_rto_us { "transport.init_rto_us" } else { "transport.max_rto_us" });
    }
    let wire = (tp.mss_bytes + tp.header_bytes) as f64 * 8.0;
    let udp = cfg.sources.iter().enumerate().filter(|(_, s)| s.transport == TransportKind::Udp).map(|(i, s)| (i, wire / (Rate::from_gbps(s.udp_rate_gbps).bps() as f64) * 1e6));
    match udp.max_by(|a, b| a.1.total_cmp(&b.1)).filter(|&(_, us)| covers(us)) {
        Some((i, _)) => FieldPath::of("traffic.sources").index(i).key("udp_rate_gbps"),
        None => FieldPath::of("topology.fabric_delay_us"),
    }
}

/// The longest ideal completion time of a source's largest flow, in µs: its bytes at the slowest host or
/// working leaf-spine rate, and four crossings of the longest delays (a bound for a slack deadline).
fn slowest_ideal_us(cfg: &Config, fabric: &Fabric, s: &SourceConfig) -> f64 {
    let slowest = fabric.ports.iter().filter(|p| p.up).map(|p| p.rate.bps()).min().unwrap_or(1).max(1) as f64;
    let delay = fabric.ports.iter().map(|p| p.delay.as_us()).fold(0.0, f64::max);
    let size = largest_bytes(s, traffic::source_info(fabric, s).mean_size);
    let wire = size * (1.0 + cfg.transport.header_bytes as f64 / cfg.transport.mss_bytes as f64) + cfg.transport.header_bytes as f64;
    wire * 8.0 / slowest * 1e6 + 8.0 * delay
}

/// What makes source `i` end late: its arrivals, its start, the round trip, or a rate too low.
fn late_field(cfg: &Config, fabric: &Fabric, i: usize, e: &SourceEstimate) -> FieldPath {
    let s = &cfg.sources[i];
    let f = FieldPath::of("traffic.sources").index(i);
    let span = e.end_us - s.start_us;
    if s.start_us > e.end_us / 2.0 {
        return f.key("start_us");
    }
    if e.last_us - s.start_us > span / 2.0 {
        return f.key(match s.pattern {
            Pattern::Poisson if s.duration_us.is_some_and(|d| d <= e.last_us - s.start_us) => "duration_us",
            Pattern::Poisson => "load",
            Pattern::Group => "spread_us",
            Pattern::Incast => "period_us",
            Pattern::List => "list",
            Pattern::LongLived => "start_us",
        });
    }
    let t = &cfg.topology;
    if 4.0 * (t.host_delay_us + t.fabric_delay_us) > span / 2.0 {
        return FieldPath::of(if t.host_delay_us > t.fabric_delay_us { "topology.host_delay_us" } else { "topology.fabric_delay_us" });
    }
    let host = fabric.facts.host_rate.bps() as f64;
    if s.transport == TransportKind::Udp && (Rate::from_gbps(s.udp_rate_gbps).bps() as f64) < host {
        return f.key("udp_rate_gbps");
    }
    let fastest_uplink = FabricRates::of(cfg, fabric).fastest_uplink_bps;
    if fastest_uplink < host {
        FieldPath::of("topology.fabric_rate_gbps")
    } else {
        FieldPath::of("topology.host_rate_gbps")
    }
}

/// The work rule (module doc) for source `i`.
pub fn check_work(cfg: &Config, fabric: &Fabric, i: usize, e: &SourceEstimate) -> Result<(), (FieldPath, String)> {
    let s = &cfg.sources[i];
    if e.started >= 1.0 || (e.started > 0.0 && s.pattern != Pattern::Poisson) {
        return Ok(());
    }
    let f = FieldPath::of("traffic.sources").index(i);
    let horizon = cfg.run.horizon_us;
    let not_before = || (f.key("start_us"), format!("{} us is not before run.horizon_us ({} us), so the source would start no flow", num(s.start_us), num(horizon.unwrap_or(0.0))));
    match s.pattern {
        Pattern::Poisson => {
            let rate = arrival_rate(&traffic::source_info(fabric, s));
            let window = s.duration_us.unwrap_or(f64::INFINITY);
            match horizon.filter(|h| h - s.start_us < window) {
                Some(h) if h <= s.start_us => Err(not_before()),
                Some(h) => Err((
                    FieldPath::of("run.horizon_us"),
                    format!(
                        "source {i}'s flows arrive at {} per second from start_us = {} us, so about {} would start before the horizon at {} us; a source must be expected to start at least one flow (a later horizon, a higher load or an earlier start)",
                        num(rate),
                        num(s.start_us),
                        num(e.started),
                        num(h)
                    ),
                )),
                None => Err((
                    f.key("duration_us"),
                    format!(
                        "{} us of arrivals at {} flows per second makes about {} flows; a source must be expected to make at least one (a longer duration_us or a higher load)",
                        num(window),
                        num(rate),
                        num(e.started)
                    ),
                )),
            }
        }
        Pattern::List => Err((f.key("list"), format!("every flow starts at or after run.horizon_us ({} us), so none would start", num(horizon.unwrap_or(0.0))))),
        _ => Err(not_before()),
    }
}

// ------------------------------------------------------------------------------------------------------
// Events

/// The events of a run of `sources` lasting `sim_time_us` (module doc), with the scheme's balancers built
/// for this config when `scheme` is given (their timers and probes; without it, none are counted).
pub fn events(cfg: &Config, fabric: &Fabric, scheme: Option<(&SchemeSpec, &Params)>, sources: &[SourceEstimate], sim_time_us: f64) -> Vec<EventPart> {
    let mut parts = Vec::new();
    if let Some((i, e)) = sources.iter().enumerate().max_by(|a, b| a.1.packets.total_cmp(&b.1.packets)) {
        let packets: f64 = sources.iter().map(|e| e.packets).sum();
        let field = if e.end_us.is_infinite() { "run.horizon_us".to_string() } else { FieldPath::of("traffic.sources").index(i).key(e.count_field).to_string() };
        // A stationary start carries about the nominal load from the first instant: at least what the
        // poisson sources offer over the whole run, pre-loaded flows included.
        let nominal = if cfg.run.start.is_empty() || !sim_time_us.is_finite() {
            0.0
        } else {
            let offered: f64 = cfg.sources.iter().map(|s| traffic::source_info(fabric, s).offered_bps).sum();
            offered / 8.0 * sim_time_us * 1e-6 / cfg.transport.mss_bytes as f64
        };
        if nominal > packets {
            parts.push(EventPart { kind: "packets", events: (nominal * EVENTS_PER_PACKET).ceil(), field: "run.start".into(), what: "data packets (the fabric at its nominal load from a stationary start)".into() });
        } else {
            parts.push(EventPart { kind: "packets", events: (packets * EVENTS_PER_PACKET).ceil(), field, what: "data packets".into() });
        }
    }
    if !(sim_time_us.is_finite() && sim_time_us > 0.0) {
        return parts;
    }
    if let Some((spec, params)) = scheme {
        timer_events(cfg, fabric, spec, params, sim_time_us, &mut parts);
    }
    if let Some(sampler) = &cfg.run.sampler {
        parts.push(EventPart {
            kind: "sampler",
            events: (sim_time_us / sampler.interval_us).floor() + 1.0,
            field: "run.sampler.interval_us".into(),
            what: "sampler ticks".into(),
        });
    }
    parts
}

/// Every balancer timer and every probe of the scheme's balancers over `us` of simulated time.
fn timer_events(cfg: &Config, fabric: &Fabric, spec: &SchemeSpec, params: &Params, us: f64, parts: &mut Vec<EventPart>) {
    let f = &fabric.facts;
    let mut switches: Vec<SwitchInfo> = f.leaf_ids().map(|l| SwitchInfo::leaf(f, l, 0)).collect();
    switches.extend(f.spine_ids().map(|s| SwitchInfo::spine(f, s, 0)));
    let installed = (spec.install)(&BuildCx { facts: f, hosts: f.hosts, switches: &switches }, params);
    let rounds = |period: Option<Time>| period.filter(|p| *p > Time::ZERO).map_or(0.0, |p| (us / p.as_us()).floor());
    let (mut timers, mut probes, mut shortest) = (0.0, 0.0, Time::MAX);
    let mut note = |p: Option<Time>| {
        if let Some(p) = p.filter(|p| *p > Time::ZERO) {
            shortest = shortest.min(p);
        }
    };
    match installed {
        Installed::Switches(lbs) => {
            for lb in &lbs {
                timers += rounds(lb.timer_period());
                note(lb.timer_period());
            }
        }
        Installed::Edges(lbs) => {
            let active = active_leaves(cfg, fabric);
            for (h, lb) in lbs.iter().enumerate() {
                let n = rounds(lb.timer_period());
                timers += n;
                probes += n * lb.probes_per_round(active[h]) as f64 * EVENTS_PER_PACKET;
                note(lb.timer_period());
            }
        }
    }
    let field = timer_field(spec, params, probes > 0.0);
    let every = if shortest < Time::MAX { format!(" (every {} us)", num(shortest.as_us())) } else { String::new() };
    if timers > 0.0 {
        parts.push(EventPart { kind: "timers", events: timers, field: field.clone(), what: format!("{} timers{every}", spec.name) });
    }
    if probes > 0.0 {
        parts.push(EventPart { kind: "probes", events: probes, field, what: format!("{} probes{every}", spec.name) });
    }
}

/// The parameter that sets a scheme's timers, for a refusal: its probe interval when it probes, else the
/// shortest duration the scenario gave (the likely cause), else the scheme itself.
fn timer_field(spec: &SchemeSpec, params: &Params, probing: bool) -> String {
    if probing && spec.params.iter().any(|p| p.name == "probe_us") {
        return "lb.probe_us".into();
    }
    let given = spec.params.iter().filter(|p| p.unit == "us" && params.given(p.name));
    let value = |name: &str| params.number(name).unwrap_or(f64::INFINITY);
    match given.min_by(|a, b| value(a.name).total_cmp(&value(b.name))) {
        Some(p) => format!("lb.{}", p.name),
        None => "lb.scheme".into(),
    }
}

/// For each host, how many destination leaves it sends to (other than its own): the leaves of the
/// receivers of every source it sends in, at most the other leaves.
fn active_leaves(cfg: &Config, fabric: &Fabric) -> Vec<usize> {
    let f = &fabric.facts;
    let leaf = |h: u32| f.leaf_of_host(HostId(h));
    let mut out = vec![0usize; f.hosts as usize];
    for s in &cfg.sources {
        if s.pattern == Pattern::List {
            let mut pairs: Vec<(u32, LeafId)> = s.list.iter().filter(|l| leaf(l.src) != leaf(l.dst)).map(|l| (l.src, leaf(l.dst))).collect();
            pairs.sort_unstable();
            pairs.dedup();
            for (h, _) in pairs {
                out[h as usize] += 1;
            }
            continue;
        }
        let mut leaves: Vec<LeafId> = s.receivers.iter().map(|&r| leaf(r)).collect();
        leaves.sort_unstable();
        leaves.dedup();
        for &h in &s.senders {
            out[h as usize] += leaves.iter().filter(|&&l| l != leaf(h)).count();
        }
    }
    let others = (f.leaves as usize).saturating_sub(1);
    out.iter_mut().for_each(|n| *n = (*n).min(others));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Limits;
    use crate::config::{Direction, LinkOverride, ListedFlow};
    use serde_json::json;

    /// The shared two-leaf poisson config with 50 flows.
    fn base() -> Config {
        crate::config::test_configs::two_leaf_poisson(50)
    }

    fn error(cfg: &Config) -> String {
        cfg.check().expect_err("the config must be rejected").to_string()
    }

    fn size(cfg: &Config) -> RunSize {
        cfg.check_within(&Limits::default()).expect("a valid config").size
    }

    fn events_of(size: &RunSize, kind: &str) -> f64 {
        size.events.iter().filter(|p| p.kind == kind).map(|p| p.events).sum()
    }

    /// Issue #24: each of these ran "complete", every FCT 0 and 18,446,744 s of simulated time, the clock
    /// saturated; each is now refused before the run, naming the field, with the clock in the message.
    #[test]
    fn times_beyond_the_clock_are_refused_naming_the_field() {
        let group = |cfg: &mut Config| {
            let s = &mut cfg.sources[0];
            (s.pattern, s.load, s.size_bytes, s.workload) = (Pattern::Group, None, Some(1_000_000), Vec::new());
        };
        let cases: Vec<(&str, Box<dyn Fn(&mut Config)>)> = vec![
            ("topology.host_rate_gbps: the flows of source 0 would end at about ", Box::new(|c| c.topology.host_rate_gbps = 1e-9)),
            ("topology.fabric_rate_gbps: the flows of source 0 would end at about ", Box::new(move |c| {
                group(c);
                c.topology.fabric_rate_gbps = 1e-9;
            })),
            ("traffic.sources[0].load: 50 flows arriving at ", Box::new(|c| c.sources[0].load = Some(1e-12))),
            ("traffic.sources[0].udp_rate_gbps: the flows of source 0 would end at about ", Box::new(|c| {
                (c.sources[0].transport, c.sources[0].udp_rate_gbps) = (TransportKind::Udp, 1e-9);
            })),
            ("traffic.sources[0].duration_us: start_us + duration_us = 1.9e13 us", Box::new(|c| (c.sources[0].start_us, c.sources[0].duration_us) = (1.8e13, Some(1e12)))),
            ("traffic.sources[0].period_us: the last round starts at", Box::new(|c| {
                let s = &mut c.sources[0];
                (s.pattern, s.receivers, s.rounds, s.period_us, s.size_bytes) = (Pattern::Incast, vec![0], 3, 1e13, Some(1000));
            })),
            ("traffic.sources[0].spread_us: start_us + spread_us = 1.9e13 us", Box::new(move |c| {
                group(c);
                (c.sources[0].start_us, c.sources[0].spread_us) = (1e13, 9e12);
            })),
            ("traffic.sources[0].deadline.us: the last flow's deadline falls at about 1.9e13 us", Box::new(|c| {
                (c.sources[0].start_us, c.sources[0].deadline) = (1.8e13, DeadlineModel::Fixed { us: 1e12 });
            })),
            ("traffic.sources[0].deadline.factor: the last flow's deadline falls at about", Box::new(|c| c.sources[0].deadline = DeadlineModel::Slack { factor: 1e12 })),
            ("traffic.sources[0].list[1]: start_us + deadline_us = ", Box::new(|c| {
                let flow = |start_us, deadline_us| ListedFlow { start_us, src: 0, dst: 5, size_bytes: 1000, deadline_us };
                c.sources[0] = SourceConfig { pattern: Pattern::List, list: vec![flow(0.0, None), flow(1e13, Some(9e12))], ..Default::default() };
                c.run.horizon_us = Some(100.0);
            })),
            ("traffic.sources[0].start_us: the flows of source 0 would end at about 1.8e13 us", Box::new(|c| c.sources[0].start_us = 1.8e13)),
            ("transport.max_rto_us: the no-progress watchdog waits 6.4e13 us", Box::new(|c| c.transport.max_rto_us = 1e12)),
            ("traffic.sources[0].start_us: 20000000000000 us is beyond the engine's clock", Box::new(|c| c.sources[0].start_us = 2e13)),
            ("run.horizon_us: 20000000000000 us is beyond the engine's clock", Box::new(|c| c.run.horizon_us = Some(2e13))),
            ("lb.flowlet_timeout_us: 20000000000000 us is beyond the engine's clock", Box::new(|c| {
                c.lb.scheme = "letflow".into();
                c.lb.params.insert("flowlet_timeout_us".into(), json!(2e13));
            })),
        ];
        for (expected, change) in cases {
            let mut cfg = base();
            change(&mut cfg);
            let e = cfg.check().map(|_| format!("accepted, expected {expected}")).unwrap_or_else(|e| e.to_string());
            assert!(e.starts_with(expected), "expected {expected}, got {e}");
            assert!(e.contains("clock"), "{e}");
        }
    }

    #[test]
    fn a_horizon_bounds_a_slow_run_and_the_arrivals_must_still_fit() {
        // 1 bit/s hosts: beyond the clock without a horizon, a run of 1 ms with one.
        let mut cfg = base();
        (cfg.topology.host_rate_gbps, cfg.run.horizon_us) = (1e-9, Some(1000.0));
        let s = size(&cfg);
        assert!(s.horizon && s.sim_time_us == 1000.0);
        assert!(s.sources[0].end_us > 1e12);
        // Arrivals that would saturate are refused even so: their start times would be stored.
        cfg.sources[0].load = Some(1e-12);
        assert!(error(&cfg).starts_with("traffic.sources[0].load: 50 flows arriving at "), "{}", error(&cfg));
    }

    #[test]
    fn a_source_that_would_start_no_flow_is_refused_for_every_pattern() {
        let list = |starts: &[f64]| SourceConfig {
            pattern: Pattern::List,
            list: starts.iter().map(|&start_us| ListedFlow { start_us, src: 0, dst: 5, size_bytes: 1000, deadline_us: None }).collect(),
            ..Default::default()
        };
        let cases: Vec<(&str, Box<dyn Fn(&mut Config)>)> = vec![
            ("traffic.sources[0].duration_us: 1e-6 us of arrivals at ", Box::new(|c| c.sources[0].duration_us = Some(1e-6))),
            ("run.horizon_us: source 0's flows arrive at ", Box::new(|c| c.run.horizon_us = Some(10.0))),
            ("traffic.sources[0].start_us: 500 us is not before run.horizon_us (100 us)", Box::new(|c| (c.sources[0].start_us, c.run.horizon_us) = (500.0, Some(100.0)))),
            ("traffic.sources[0].start_us: 500 us is not before run.horizon_us (100 us)", Box::new(|c| {
                let s = &mut c.sources[0];
                (s.pattern, s.flows, s.size_bytes, s.start_us) = (Pattern::Group, Some(5), Some(1000), 500.0);
                c.run.horizon_us = Some(100.0);
            })),
            ("traffic.sources[0].start_us: 500 us is not before", Box::new(|c| {
                let s = &mut c.sources[0];
                (s.pattern, s.receivers, s.size_bytes, s.start_us) = (Pattern::Incast, vec![0], Some(1000), 500.0);
                c.run.horizon_us = Some(100.0);
            })),
            ("traffic.sources[0].start_us: 500 us is not before", Box::new(|c| {
                c.sources[0] = SourceConfig { pattern: Pattern::LongLived, senders: vec![0, 1], receivers: vec![4, 5], start_us: 500.0, ..Default::default() };
                c.run.horizon_us = Some(100.0);
            })),
            ("traffic.sources[0].list: every flow starts at or after run.horizon_us (100 us)", Box::new(move |c| {
                c.sources[0] = list(&[100.0, 500.0]);
                c.run.horizon_us = Some(100.0);
            })),
            ("traffic.sources[1].duration_us: 0.001 us of arrivals", Box::new(|c| {
                let mut other = c.sources[0].clone();
                other.duration_us = Some(1e-3);
                c.sources.push(other);
            })),
        ];
        for (expected, change) in cases {
            let mut cfg = base();
            change(&mut cfg);
            let e = error(&cfg);
            assert!(e.starts_with(expected), "expected {expected}, got {e}");
        }
        // One flow before the horizon is work enough; a group that starts before it too.
        let mut cfg = base();
        (cfg.sources[0], cfg.run.horizon_us) = (list(&[50.0, 500.0]), Some(100.0));
        assert_eq!(size(&cfg).sources[0].started, 1.0);
    }

    #[test]
    fn the_estimate_counts_every_event_source() {
        let ecmp = size(&base());
        assert_eq!(ecmp.events.iter().map(|p| p.kind).collect::<Vec<_>>(), ["packets"]);
        // Hermes: a timer per host every probe interval, and probes from the senders to the other leaf.
        let mut cfg = base();
        cfg.lb.scheme = "hermes".into();
        let hermes = size(&cfg);
        let rounds = (hermes.sim_time_us / 500.0).floor();
        assert!(rounds >= 1.0, "{}", hermes.sim_time_us);
        assert_eq!(events_of(&hermes, "timers"), 8.0 * rounds);
        // Each host sends to the other leaf: 2 paths probed a round, a probe and its reply as a packet.
        assert_eq!(events_of(&hermes, "probes"), 8.0 * rounds * 2.0 * EVENTS_PER_PACKET);
        // The preset's probe interval is the scheme's own (50 us, not the declared 500).
        cfg.lb.params.insert("preset".into(), json!("mdtlb"));
        let preset = size(&cfg);
        assert_eq!(events_of(&preset, "timers"), 8.0 * (preset.sim_time_us / 50.0).floor());
        cfg.lb.params.insert("probe_us".into(), json!(0));
        assert_eq!(events_of(&size(&cfg), "probes"), 0.0);
        // Switch timers: LBT's period at the leaves that decide, DAR's sweeps at every switch.
        for (scheme, switches) in [("lbt", 2.0), ("dar", 4.0), ("tam", 4.0)] {
            let mut cfg = base();
            cfg.lb.scheme = scheme.into();
            cfg.run.horizon_us = Some(10_000.0);
            let s = size(&cfg);
            assert!(events_of(&s, "timers") >= switches * 10.0, "{scheme}: {:?}", s.events);
        }
        // The sampler: a tick per interval over the run.
        let mut cfg = base();
        cfg.run.horizon_us = Some(1000.0);
        cfg.run.sampler = Some(crate::config::SamplerConfig { interval_us: 10.0, ..Default::default() });
        assert_eq!(events_of(&size(&cfg), "sampler"), 101.0);
    }

    #[test]
    fn a_run_estimated_beyond_the_event_limit_is_refused_naming_the_field() {
        let limits = |events: f64| Limits { memory: None, events: Some(EventLimit { events, source: "a test; insist with none".into() }) };
        // Issue #24: Hermes probing every picosecond.
        let mut cfg = base();
        cfg.lb.scheme = "hermes".into();
        cfg.lb.params.insert("probe_us".into(), json!(1e-6));
        cfg.check().unwrap();
        let e = cfg.check_within(&limits(1e11)).unwrap_err().to_string();
        assert!(e.starts_with("lb.probe_us: the run would take about "), "{e}");
        assert!(e.contains("hermes probes (every 1e-6 us)") && e.ends_with("more than the limit of 100.0 G (a test; insist with none)"), "{e}");
        // MDTLB alike; a scheme's short timer names the duration the scenario gave.
        cfg.lb.scheme = "mdtlb".into();
        assert!(cfg.check_within(&limits(1e11)).unwrap_err().to_string().starts_with("lb.probe_us: "));
        let mut cfg = base();
        (cfg.lb.scheme, cfg.run.horizon_us) = ("dar".into(), Some(1e6));
        cfg.lb.params.insert("flow_idle_timeout_us".into(), json!(0.002));
        assert!(cfg.check_within(&limits(1e9)).unwrap_err().to_string().starts_with("lb.flow_idle_timeout_us: the run would take about "));
        // Packets: the source's count; a sampler: its interval.
        let mut cfg = base();
        cfg.sources[0].flows = Some(2_000_000);
        assert!(cfg.check_within(&limits(1e9)).unwrap_err().to_string().starts_with("traffic.sources[0].flows: the run would take about "));
        let mut cfg = base();
        cfg.run.sampler = Some(crate::config::SamplerConfig { interval_us: 1e-6, ..Default::default() });
        assert!(cfg.check_within(&limits(1e9)).unwrap_err().to_string().starts_with("run.sampler.interval_us: "));
        base().check_within(&limits(1e6)).unwrap();
    }

    #[test]
    fn contradictory_scheme_parameters_are_refused_by_the_check() {
        let with = |scheme: &str, given: &[(&str, serde_json::Value)]| {
            let mut cfg = base();
            cfg.lb.scheme = scheme.into();
            cfg.lb.params = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            cfg
        };
        for (scheme, given, field) in [
            ("hermes", vec![("rtt_low_us", json!(200)), ("rtt_high_us", json!(100))], "lb.rtt_low_us"),
            ("mdtlb", vec![("rtt_low_s_us", json!(200)), ("rtt_high_s_us", json!(100))], "lb.rtt_low_s_us"),
            ("mdtlb", vec![("rtt_low_d_us", json!(200)), ("rtt_high_d_us", json!(100))], "lb.rtt_low_d_us"),
            ("mdtlb", vec![("portion_small", json!(0.9)), ("portion_big", json!(0.5))], "lb.portion_small"),
            ("mdtlb", vec![("portion_small", json!(0.0)), ("portion_big", json!(0.0))], "lb.portion_big"),
            ("lbt", vec![("q_min_bytes", json!(5000)), ("q1_max_bytes", json!(3000))], "lb.q_min_bytes"),
            ("lbt", vec![("q1_max_bytes", json!(9000)), ("q2_max_bytes", json!(6000))], "lb.q1_max_bytes"),
        ] {
            let e = error(&with(scheme, &given));
            assert!(e.starts_with(&format!("{field}: ")) && e.contains(" break "), "{scheme}: {e}");
        }
        // 0 is automatic: no relation then.
        with("lbt", &[("q_min_bytes", json!(5000))]).check().unwrap();
        // Relations hold on the values the scheme runs with: an upper threshold above the default lower one
        // as moved onto this fabric (about 33 us) is fine, below the published one (60 us) it is not.
        let mut cfg = with("hermes", &[("rtt_high_us", json!(50))]);
        cfg.check().unwrap();
        cfg.lb.timing = crate::config::Timing::Published;
        assert!(error(&cfg).starts_with("lb.rtt_high_us: lb.rtt_low_us = 60 us (not given"), "{}", error(&cfg));
    }

    #[test]
    fn sources_are_estimated_per_pattern() {
        let mut cfg = base();
        cfg.sources[0].inter_leaf_only = false;
        let s = &size(&cfg).sources[0];
        assert_eq!(s.flows, 50.0);
        // 4 of the 7 other hosts of a sender are on the other leaf.
        assert!((crossing_share(&cfg.sources[0], 4) - 4.0 / 7.0).abs() < 1e-12);
        assert!(s.first_us > 0.0 && s.last_us > s.first_us && s.end_us > s.last_us);
        let mut cfg = base();
        cfg.topology.links = vec![LinkOverride { leaf: 0, spine: 0, rate_gbps: Some(40.0), direction: Direction::Up, ..Default::default() }];
        assert_eq!(FabricRates::of(&cfg, &Fabric::build(&cfg.topology, &cfg.transport)).fastest_uplink_bps, 40e9);
    }
}
