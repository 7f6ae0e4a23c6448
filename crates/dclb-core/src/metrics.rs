//! What a run returns: columnar tables (per flow, per port, per switch, sampler rows) and run statistics.
//!
//! Columns are plain vectors so the binding can hand them to Python as Arrow arrays without a per-value
//! conversion; a value that may be missing is an `Option` (null in Arrow and Parquet, never NaN). Column
//! names carry their units; the Python side writes Parquet. Definitions live here
//! once: FCT is flow start to the arrival of the last byte at the receiver; a packet's queueing delay is the
//! time it waited in queues before serialisation, summed over hops; a deadline is met when the flow
//! completed no later than its deadline. A value that does not exist for a row (the FCT of an unfinished
//! flow, the deadline of a flow without one) is missing, not NaN.
//!
//! The tables are read from the finished state of a run's parts (`Run`: the network, the host stack, the
//! packet arena, the sampler), which the simulation hands over in [`crate::Simulation::results`]; nothing
//! here runs during the simulation except the sampler's recording and the measurement window's readings
//! (`Window`).
//!
//! With a measurement window (`run.warmup_us`, [`crate::traffic::window`]) the flow table gains a
//! `measured` column, the flows drawn for the cool-down that had not arrived when the run stopped are left
//! out of it (they never existed in the simulated world; `flow_id` keeps the engine's numbering), and the
//! run statistics gain the window's (`window_*`, absent without a window).

use crate::config::{QueueUnit, TransportKind};
pub use crate::host::FlowState;
use crate::host::{Flow, Hosts};
use crate::ids::{FlowId, PortId};
use crate::lb::SwitchKind;
use crate::packet::PacketArena;
use crate::switch::Network;
use crate::traffic::window::{Plan, SourceWindow};
use crate::fabric::PortRole;
use crate::traffic::stationary::PrefillReport;
use crate::traffic::SourceInfo;
use crate::units::Time;

/// Equality is value equality (no column holds NaN: missing values are `None`).
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    /// Names from a fixed set (a flow's state, a port's role): static, so a row costs no allocation.
    Str(Vec<&'static str>),
    /// A list of u64 per row, flattened with a fixed width.
    U64List { width: usize, values: Vec<u64> },
    /// Floats where a row may have no value (a flow without a deadline, an unfinished flow's FCT): null in
    /// the stored tables, never NaN, so two identical runs' tables compare equal.
    OptF64(Vec<Option<f64>>),
    /// Booleans where a row may have no value (deadline met, for a flow without a deadline).
    OptBool(Vec<Option<bool>>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::U64List { width, values } => if *width == 0 { 0 } else { values.len() / width },
            Column::OptF64(v) => v.len(),
            Column::OptBool(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &'static str, c: Column) {
        self.columns.push((name, c));
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
    pub fn u64s(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Some(Column::U64(v)) => v,
            _ => panic!("no u64 column {name}"),
        }
    }
    pub fn f64s(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
    /// A nullable float column (`None` where the row has no value).
    pub fn opt_f64s(&self, name: &str) -> &[Option<f64>] {
        match self.get(name) {
            Some(Column::OptF64(v)) => v,
            _ => panic!("no nullable f64 column {name}"),
        }
    }
    /// A nullable boolean column (`None` where the row has no value).
    pub fn opt_bools(&self, name: &str) -> &[Option<bool>] {
        match self.get(name) {
            Some(Column::OptBool(v)) => v,
            _ => panic!("no nullable bool column {name}"),
        }
    }
    pub fn strs(&self, name: &str) -> &[&'static str] {
        match self.get(name) {
            Some(Column::Str(v)) => v,
            _ => panic!("no str column {name}"),
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|c| c.1.len()).unwrap_or(0)
    }
    /// One 64-bit digest of the whole table (every column, every row): equal only if every value is equal
    /// bit for bit (see [`digest`]).
    pub fn digest(&self) -> u64 {
        digest(format!("{:?}", self.columns).as_bytes())
    }
    /// One digest per column, `(name, digest)`, so that a changed result names the column that moved.
    pub fn column_digests(&self) -> Vec<(&'static str, u64)> {
        self.columns.iter().map(|(n, c)| (*n, digest(format!("{c:?}").as_bytes()))).collect()
    }
}

/// FNV-1a over 64 bits, of the `Debug` text of values: stable across builds and platforms (std's
/// `DefaultHasher` promises neither), and `Debug` prints a float as the shortest text that reads back to the
/// same bits, so two digests agree only if every value agrees bit for bit. For golden tests and the bench's
/// `--digest`, never for anything the simulation decides.
pub fn digest(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// One source's window as the run measures it: its bounds, its nominal rate, and the bytes its flows had
/// delivered when each bound was reached (`None` until it is).
#[derive(Clone, Debug)]
struct Marks {
    source: u16,
    window: SourceWindow,
    offered_bps: f64,
    delivered_at_open: Option<u64>,
    delivered_at_close: Option<u64>,
}

/// The measurement window of a running simulation: when to read the bytes delivered (each source's window
/// bounds), and which flows the run still waits for.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    marks: Vec<Marks>,
    /// The earliest bound not yet read, `Time::MAX` when every bound has been.
    next_mark: Time,
    /// Measured flows in all.
    measured: u64,
    /// Every flow below this index is unmeasured or has ended (the stop condition's scan resumes here).
    cursor: usize,
}

impl Window {
    /// The window of a run whose flows (sorted by start) and sources are these, if it has one.
    pub fn new(plan: Option<Plan>, sources: &[SourceInfo], flows: &[Flow]) -> Option<Window> {
        plan?;
        let marks: Vec<Marks> = sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let window = s.window?;
                Some(Marks { source: i as u16, window, offered_bps: s.offered_bps, delivered_at_open: None, delivered_at_close: None })
            })
            .collect();
        let next_mark = marks.iter().map(|m| m.window.opens).min().unwrap_or(Time::MAX);
        let measured = flows.iter().filter(|f| f.spec.measured).count() as u64;
        Some(Window { marks, next_mark, measured, cursor: 0 })
    }

    /// Measured flows in all.
    pub fn measured(&self) -> u64 {
        self.measured
    }

    /// The earliest bound not read yet, `Time::MAX` when every bound has been.
    pub fn next_bound(&self) -> Time {
        self.next_mark
    }

    /// Reads the bytes delivered for every bound at or before `now`. The run calls it with every event
    /// before `now` handled and none at or after it, so what it reads is the state at the bound itself.
    pub fn read_bounds(&mut self, now: Time, flows: &[Flow]) {
        let delivered = |source: u16| flows.iter().filter(|f| f.spec.source == source).map(Flow::bytes_delivered).sum::<u64>();
        for m in &mut self.marks {
            if m.delivered_at_open.is_none() && m.window.opens <= now {
                m.delivered_at_open = Some(delivered(m.source));
            }
            if m.delivered_at_close.is_none() && m.window.closes <= now {
                m.delivered_at_close = Some(delivered(m.source));
            }
        }
        self.next_mark = self
            .marks
            .iter()
            .flat_map(|m| [(m.delivered_at_open.is_none(), m.window.opens), (m.delivered_at_close.is_none(), m.window.closes)])
            .filter_map(|(pending, t)| pending.then_some(t))
            .min()
            .unwrap_or(Time::MAX);
    }

    /// Whether every measured flow has ended. Each flow is passed over once in the whole run: the scan
    /// stops at the first measured flow still going and resumes there.
    pub fn measured_ended(&mut self, flows: &[Flow]) -> bool {
        while let Some(f) = flows.get(self.cursor) {
            if f.spec.measured && f.state.is_none() {
                return false;
            }
            self.cursor += 1;
        }
        true
    }

    /// Bits delivered in the windows over the bits their sources' nominal loads offer in them, summed over
    /// the sources with a load and a window of positive length; `None` if there is none, or if a window's
    /// bound was never reached (the run stopped before it, at its horizon).
    pub fn carried_load_ratio(&self) -> Option<f64> {
        let (mut carried, mut nominal) = (0.0, 0.0);
        for m in self.marks.iter().filter(|m| m.offered_bps > 0.0 && m.window.closes > m.window.opens) {
            carried += (m.delivered_at_close? - m.delivered_at_open?) as f64 * 8.0;
            nominal += m.offered_bps * (m.window.closes - m.window.opens).as_secs();
        }
        (nominal > 0.0).then(|| carried / nominal)
    }

    /// The earliest opening and the latest closing of the sources' windows (`None` without a poisson
    /// source).
    pub fn span(&self) -> Option<(Time, Time)> {
        let opens = self.marks.iter().map(|m| m.window.opens).min()?;
        let closes = self.marks.iter().map(|m| m.window.closes).max()?;
        Some((opens, closes))
    }
}

/// What the whole fabric carried over a run's measured span (`fabric_carried_load_ratio` and the mean
/// utilisation of each kind of link): the span of the measurement window, or without one from the first to
/// the last arrival of the poisson sources. At each bound the meter reads, without changing any state, the
/// in-order payload the poisson sources' flows had delivered to their receivers (pre-loaded flows included:
/// they are part of that load) and the wire bytes every port had sent; the differences over the span give the
/// numbers, the payload over what the poisson sources' nominal loads offer in the span. The flows of other
/// patterns (a group of long flows beside a poisson stream, TAM's microbenchmarks) are in the utilisations but
/// not in the ratio: their bytes are no part of the nominal load, and counting them read 104 times the load on a
/// fabric whose poisson stream offered 0.5% of it. A run without a poisson source has no meter.
#[derive(Clone, Debug)]
pub(crate) struct FabricMeter {
    opens: Time,
    closes: Time,
    /// The poisson sources' nominal load in all, bit/s.
    offered_bps: f64,
    /// Per source: whether its flows' bytes count in the ratio (a poisson source with a load).
    counted: Vec<bool>,
    at_open: Option<Reading>,
    at_close: Option<Reading>,
}

#[derive(Clone, Debug)]
struct Reading {
    delivered: u64,
    port_bytes: Vec<u64>,
}

/// [`FabricMeter`]'s numbers.
#[derive(Clone, Debug, Default)]
pub(crate) struct FabricLoad {
    pub span_us: f64,
    pub carried_load_ratio: Option<f64>,
    /// Mean over the working ports of each role: host NIC to leaf, leaf to host, leaf to spine, spine to leaf.
    pub utilisation: [Option<f64>; 4],
}

impl FabricMeter {
    /// The meter of a run with measurement window `span` (its earliest opening and latest closing), or
    /// without one, of the arrival span of its poisson sources' flows (sorted by start).
    pub fn new(span: Option<(Time, Time)>, sources: &[SourceInfo], flows: &[Flow]) -> Option<FabricMeter> {
        let counted: Vec<bool> = sources.iter().map(|s| s.offered_bps > 0.0).collect();
        let offered_bps: f64 = sources.iter().map(|s| s.offered_bps).sum();
        if offered_bps <= 0.0 {
            return None;
        }
        let (opens, closes) = match span {
            Some(s) => s,
            None => {
                let mut arrivals = flows.iter().filter(|f| counted[f.spec.source as usize] && !f.spec.preloaded).map(|f| f.spec.start);
                let first = arrivals.next()?;
                (first, arrivals.last().unwrap_or(first))
            }
        };
        (closes > opens).then_some(FabricMeter { opens, closes, offered_bps, counted, at_open: None, at_close: None })
    }

    /// The earliest bound not yet read, `Time::MAX` when both have been.
    pub fn next_bound(&self) -> Time {
        if self.at_open.is_none() {
            self.opens
        } else if self.at_close.is_none() {
            self.closes
        } else {
            Time::MAX
        }
    }

    /// Reads each bound at or before `now` (every event before `now` handled, none at or after it).
    pub fn read_bounds(&mut self, now: Time, net: &Network, flows: &[Flow]) {
        let read = |at: Time| Reading {
            delivered: flows.iter().filter(|f| self.counted[f.spec.source as usize]).map(Flow::bytes_delivered).sum(),
            port_bytes: net.fabric.ports.iter().map(|p| p.bytes_sent_by(at)).collect(),
        };
        if self.at_open.is_none() && self.opens <= now {
            self.at_open = Some(read(self.opens));
        }
        if self.at_close.is_none() && self.closes <= now {
            self.at_close = Some(read(self.closes));
        }
    }

    /// The span's numbers; only the span's length when a bound was never reached (a horizon before it).
    pub fn load(&self, net: &Network) -> FabricLoad {
        let span = self.closes - self.opens;
        let mut out = FabricLoad { span_us: span.as_us(), ..FabricLoad::default() };
        let (Some(a), Some(b)) = (&self.at_open, &self.at_close) else { return out };
        let secs = span.as_secs();
        out.carried_load_ratio = Some((b.delivered - a.delivered) as f64 * 8.0 / (self.offered_bps * secs));
        let roles = [PortRole::HostUp, PortRole::LeafDown, PortRole::LeafUp, PortRole::SpineDown];
        for (k, role) in roles.iter().enumerate() {
            let shares: Vec<f64> = net
                .fabric
                .ports
                .iter()
                .enumerate()
                .filter(|(_, p)| p.role == *role && p.up)
                .map(|(i, p)| (b.port_bytes[i] - a.port_bytes[i]) as f64 * 8.0 / (p.rate.bps() as f64 * secs))
                .collect();
            out.utilisation[k] = (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64);
        }
        out
    }
}

/// Per-run numbers. They cross to Python as one serialised value, so a field added here reaches the front
/// without touching the binding.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RunStats {
    pub events: u64,
    pub sim_time_us: f64,
    pub flows_total: u64,
    pub flows_completed: u64,
    pub flows_cancelled: u64,
    pub flows_unfinished: u64,
    /// Byte conservation, on the wire: every byte created is delivered, dropped, or still in the network.
    pub wire_bytes_created: u64,
    pub wire_bytes_delivered: u64,
    pub wire_bytes_dropped: u64,
    pub wire_bytes_in_flight: u64,
    pub peak_packets_in_flight: u64,
    pub peak_flows_active: u64,
    /// Packets dropped by balancers' decisions (`Decision::Drop`).
    pub balancer_drops: u64,
    /// Packets dropped by balancers that cancelled their flow (`Decision::Cancel`).
    pub balancer_cancels: u64,
    /// Packets that found no working route at a switch.
    pub routing_drops: u64,
    pub probes_sent: u64,
    /// The scheme's own counters ([`crate::lb::SwitchBalancer::counters`]), summed by name over every
    /// switch and host edge; empty for schemes that keep none.
    pub scheme_counters: std::collections::BTreeMap<String, u64>,
    /// Engine memory estimate: packet arena, flow table, queues (bytes).
    pub engine_bytes: u64,
    /// Per-source mean flow size (bytes) and offered load (bps), as used for calibration.
    pub source_mean_bytes: Vec<f64>,
    pub source_offered_bps: Vec<f64>,
    pub source_access_capacity_bps: Vec<f64>,
    pub source_fabric_capacity_bps: Vec<f64>,
    /// Measured flows (rows whose `measured` is true). Like every `window_*` statistic, present only in a
    /// run with a measurement window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_flows_measured: Option<u64>,
    /// Flows drawn for the cool-down that had not arrived when the run stopped: left out of the tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_flows_not_arrived: Option<u64>,
    /// The earliest opening and the latest closing of the poisson sources' windows, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_opens_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_closes_us: Option<f64>,
    /// Bits the poisson sources' flows delivered in their windows over the bits their nominal loads offer
    /// in them (measured at the window bounds, not estimated); `None` (null) if a bound was never reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_carried_load_ratio: Option<f64>,
    /// How long the last measured flow ran after the last arrival of the run, µs: 0 when arrivals went
    /// on until every measured flow had ended (the measured flows never saw a draining fabric).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_drain_us: Option<f64>,
    /// The whole fabric over the measured span ([`FabricMeter`]; absent without a poisson source): the
    /// in-order payload every flow delivered in it (pre-loaded flows included) over the payload the poisson
    /// sources' nominal loads offer in it, and the span's length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_carried_load_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_span_us: Option<f64>,
    /// Mean utilisation over the span (wire bytes sent over capacity) of the working links of each kind:
    /// host to leaf, leaf to host, leaf to spine, spine to leaf.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub util_host_to_leaf: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub util_leaf_to_host: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub util_leaf_to_spine: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub util_spine_to_leaf: Option<f64>,
    /// What a stationary start pre-loaded (`traffic/stationary.rs`); absent with an empty start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_flows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_remaining_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_fluid_flows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_fluid_time_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_candidates: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_load_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_cut_bytes: Option<u64>,
    /// Measured flows still running when the run stopped at its drain (`run.drain_us`): censored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_flows_censored: Option<u64>,
}

pub struct Results {
    pub flows: Table,
    pub ports: Table,
    pub switches: Table,
    pub samples: Table,
    pub stats: RunStats,
}

/// The sampler: queue length and bytes sent of chosen ports, bytes delivered of chosen flows, every
/// `interval` of simulated time.
pub(crate) struct Sampler {
    interval: Time,
    ports: Vec<PortId>,
    flows: Vec<FlowId>,
    time_us: Vec<f64>,
    kind: Vec<&'static str>,
    id: Vec<u64>,
    queue_bytes: Vec<u64>,
    bytes: Vec<u64>,
}

impl Sampler {
    pub fn new(interval: Time, ports: Vec<PortId>, flows: Vec<FlowId>) -> Sampler {
        Sampler { interval, ports, flows, time_us: Vec::new(), kind: Vec::new(), id: Vec::new(), queue_bytes: Vec::new(), bytes: Vec::new() }
    }

    /// Rows recorded so far.
    pub fn rows(&self) -> usize {
        self.time_us.len()
    }

    /// The sampling period.
    pub fn interval(&self) -> Time {
        self.interval
    }

    /// The ports it samples.
    pub fn ports(&self) -> &[PortId] {
        &self.ports
    }

    /// Records one row per chosen port and flow at `now` (lazily drained ports must have let go of what
    /// has left by now).
    pub fn record(&mut self, now: Time, net: &Network, hosts: &Hosts) {
        for &p in &self.ports {
            let port = net.fabric.port(p);
            self.time_us.push(now.as_us());
            self.kind.push("port");
            self.id.push(p.0 as u64);
            self.queue_bytes.push(port.queued_bytes);
            self.bytes.push(port.bytes_sent());
        }
        for &f in &self.flows {
            self.time_us.push(now.as_us());
            self.kind.push("flow");
            self.id.push(f.0 as u64);
            self.queue_bytes.push(0);
            self.bytes.push(hosts.flows[f.index()].bytes_delivered());
        }
    }

    fn table(&self) -> Table {
        let mut t = Table::default();
        t.push("time_us", Column::F64(self.time_us.clone()));
        t.push("kind", Column::Str(self.kind.clone()));
        t.push("id", Column::U64(self.id.clone()));
        t.push("queue_bytes", Column::U64(self.queue_bytes.clone()));
        t.push("bytes", Column::U64(self.bytes.clone()));
        t
    }
}

fn transport_name(t: TransportKind) -> &'static str {
    match t {
        TransportKind::Dctcp => "dctcp",
        TransportKind::Newreno => "newreno",
        TransportKind::Udp => "udp",
    }
}

/// The per-flow table of the flows at `rows` (engine flow ids, ascending); the `measured` column when
/// `windowed`. `alone` is each flow's FCT alone on the fabric, by flow id.
fn flow_table(all: &[Flow], rows: &[usize], windowed: bool, preloaded: bool, alone: &[Option<Time>], uplinks: usize, uplink_bytes: &[u64]) -> Table {
    let flows: Vec<&Flow> = rows.iter().map(|&i| &all[i]).collect();
    let us = |t: Time| t.as_us();
    let u64s = |f: &dyn Fn(&Flow) -> u64| Column::U64(flows.iter().map(|x| f(x)).collect());
    let opt = |f: &dyn Fn(&Flow) -> Option<f64>| Column::OptF64(flows.iter().map(|x| f(x)).collect());
    let completed = |f: &Flow| f.state == Some(FlowState::Completed);
    let fct = |f: &Flow| completed(f).then(|| f.finish - f.spec.start);
    let deadline = |f: &Flow| (f.spec.deadline != Time::ZERO).then(|| f.spec.deadline - f.spec.start);
    let ideal = |f: &Flow| (f.ideal_fct != Time::MAX).then_some(f.ideal_fct);
    let mut t = Table::default();
    t.push("flow_id", Column::U64(rows.iter().map(|&i| i as u64).collect()));
    t.push("source", u64s(&|f| f.spec.source as u64));
    t.push("src_host", u64s(&|f| f.spec.src.0 as u64));
    t.push("dst_host", u64s(&|f| f.spec.dst.0 as u64));
    t.push("size_bytes", u64s(&|f| f.spec.size));
    t.push("transport", Column::Str(flows.iter().map(|f| transport_name(f.spec.transport)).collect()));
    t.push("best_effort", Column::Bool(flows.iter().map(|f| f.spec.best_effort).collect()));
    if windowed {
        t.push("measured", Column::Bool(flows.iter().map(|f| f.spec.measured).collect()));
    }
    if preloaded {
        // A stationary start's: whether the flow was in flight at the start, and the bytes it had sent then.
        t.push("preloaded", Column::Bool(flows.iter().map(|f| f.spec.preloaded).collect()));
        t.push("prior_bytes", u64s(&|f| f.spec.prior));
    }
    t.push("deadline_us", opt(&|f| deadline(f).map(us)));
    t.push("start_us", Column::F64(flows.iter().map(|f| us(f.spec.start)).collect()));
    t.push("finish_us", opt(&|f| completed(f).then(|| us(f.finish))));
    t.push("fct_us", opt(&|f| fct(f).map(us)));
    t.push("ideal_fct_us", opt(&|f| ideal(f).map(us)));
    t.push("alone_fct_us", Column::OptF64(rows.iter().map(|&i| alone[i].map(us)).collect()));
    t.push("slowdown", opt(&|f| Some((fct(f)?.0 as f64 / ideal(f)?.0 as f64).max(1.0))));
    // Met: completed no later than the deadline; a flow that did not complete (cancelled, unfinished) missed.
    t.push("deadline_met", Column::OptBool(flows.iter().map(|f| deadline(f).map(|d| fct(f).is_some_and(|x| x <= d))).collect()));
    t.push("state", Column::Str(flows.iter().map(|f| f.state.unwrap_or(FlowState::Unfinished).name()).collect()));
    t.push("bytes_sent", u64s(&|f| f.bytes_sent));
    t.push("bytes_delivered", u64s(&|f| f.bytes_delivered()));
    // A UDP flow's payload the network dropped (0 for TCP, whose losses are retransmitted).
    t.push("udp_lost_bytes", u64s(&|f| f.udp_lost));
    t.push("packets_sent", u64s(&|f| f.packets_sent));
    t.push("retransmissions", u64s(&|f| f.retransmissions));
    t.push("spurious_retransmissions", u64s(&|f| f.spurious));
    t.push("timeouts", u64s(&|f| f.tx.timeouts as u64));
    t.push("out_of_order", u64s(&|f| f.out_of_order));
    t.push("queueing_delay_us", Column::F64(flows.iter().map(|f| us(f.queue_delay)).collect()));
    let uplink_rows = if rows.len() == all.len() { uplink_bytes.to_vec() } else { rows.iter().flat_map(|&i| &uplink_bytes[i * uplinks..(i + 1) * uplinks]).copied().collect() };
    t.push("uplink_bytes", Column::U64List { width: uplinks, values: uplink_rows });
    t
}

/// The per-port table; `span` is the run's simulated length and `areas` each port's queue-area integral
/// over it (for the time-averaged queue).
fn port_table(net: &Network, span: Time, areas: &[u128]) -> Table {
    let pl = &net.fabric.ports;
    let nodes = &net.fabric.nodes;
    let span = span.0.max(1) as f64;
    let mut t = Table::default();
    t.push("node", Column::U64(pl.iter().map(|p| p.owner.0 as u64).collect()));
    t.push("node_kind", Column::Str(pl.iter().map(|p| nodes[p.owner.index()].kind.name()).collect()));
    t.push("port", Column::U64((0..pl.len() as u64).collect()));
    t.push("peer", Column::U64(pl.iter().map(|p| p.peer.0 as u64).collect()));
    t.push("role", Column::Str(pl.iter().map(|p| p.role.name()).collect()));
    t.push("slot", Column::U64(pl.iter().map(|p| p.slot as u64).collect()));
    t.push("rate_gbps", Column::F64(pl.iter().map(|p| p.rate.as_gbps()).collect()));
    t.push("delay_us", Column::F64(pl.iter().map(|p| p.delay.as_us()).collect()));
    t.push("failed", Column::Bool(pl.iter().map(|p| !p.up).collect()));
    // Each limit in the unit the port counts it in, 0 in the other unit's column (K = 0 also: no marking).
    let k_in = |unit: QueueUnit| Column::U64(pl.iter().map(|p| if p.ecn_k.unit == unit { p.ecn_k.k } else { 0 }).collect());
    t.push("buffer_packets", Column::U64(pl.iter().map(|p| if p.cap_packets == u32::MAX { 0 } else { p.cap_packets as u64 }).collect()));
    t.push("buffer_bytes", Column::U64(pl.iter().map(|p| if p.cap_bytes == u64::MAX { 0 } else { p.cap_bytes }).collect()));
    t.push("ecn_k_packets", k_in(QueueUnit::Packets));
    t.push("ecn_k_bytes", k_in(QueueUnit::Bytes));
    t.push("bytes_sent", Column::U64(pl.iter().map(|p| p.bytes_sent()).collect()));
    t.push("packets_sent", Column::U64(pl.iter().map(|p| p.packets_sent()).collect()));
    t.push("drops", Column::U64(pl.iter().map(|p| p.drops).collect()));
    t.push("wire_losses", Column::U64(pl.iter().map(|p| p.wire_losses).collect()));
    t.push("ecn_marks", Column::U64(pl.iter().map(|p| p.ecn_marks).collect()));
    t.push("peak_queue_bytes", Column::U64(pl.iter().map(|p| p.peak_queue_bytes).collect()));
    t.push("peak_queue_packets", Column::U64(pl.iter().map(|p| p.peak_queue_packets as u64).collect()));
    t.push("avg_queue_bytes", Column::F64(areas.iter().map(|&a| a as f64 / span).collect()));
    t
}

/// The per-switch table: the balancer's decisions, drops by cause, and the state it holds.
fn switch_table(net: &Network) -> Table {
    let sw = &net.switches;
    let mut t = Table::default();
    t.push("node", Column::U64(sw.iter().map(|s| s.info.node.0 as u64).collect()));
    t.push("kind", Column::Str(sw.iter().map(|s| if s.info.kind == SwitchKind::Leaf { "leaf" } else { "spine" }).collect()));
    t.push("index", Column::U64(sw.iter().map(|s| s.info.number() as u64).collect()));
    t.push("decisions", Column::U64(sw.iter().map(|s| s.decisions).collect()));
    t.push("balancer_drops", Column::U64(sw.iter().map(|s| s.balancer_drops).collect()));
    t.push("balancer_cancels", Column::U64(sw.iter().map(|s| s.balancer_cancels).collect()));
    t.push("routing_drops", Column::U64(sw.iter().map(|s| s.routing_drops).collect()));
    t.push("state_bytes", Column::U64(sw.iter().map(|s| s.lb.state_bytes() as u64).collect()));
    // The balancers' own counters (`SwitchBalancer::counters`): one column per counter, named
    // `<scheme>_<counter>`, in order of first appearance, 0 for a switch that does not report it.
    let counters: Vec<Vec<(&'static str, u64)>> = sw.iter().map(|s| s.lb.counters().columns().collect()).collect();
    let mut names: Vec<&'static str> = Vec::new();
    for (name, _) in counters.iter().flatten() {
        if !names.contains(name) {
            names.push(name);
        }
    }
    for name in names {
        t.push(name, Column::U64(counters.iter().map(|c| c.iter().find(|(n, _)| *n == name).map_or(0, |&(_, v)| v)).collect()));
    }
    t
}

/// The balancers' own counters, named `<scheme>_<counter>`, summed by name over switches and host edges.
fn scheme_counters(net: &Network, hosts: &Hosts) -> std::collections::BTreeMap<String, u64> {
    let mut m = std::collections::BTreeMap::new();
    let reports = net.switches.iter().map(|s| s.lb.counters()).chain(hosts.edges.iter().map(|e| e.lb.counters()));
    for report in reports {
        for (name, n) in report.columns() {
            *m.entry(name.to_string()).or_insert(0) += n;
        }
    }
    m
}

/// A run's parts as the tables read them, at its `end` (the lazily drained ports have let go of what had
/// left by then).
pub(crate) struct Run<'a> {
    pub net: &'a mut Network,
    pub hosts: &'a Hosts,
    pub pkts: &'a PacketArena,
    pub sampler: Option<&'a Sampler>,
    pub sources: &'a [SourceInfo],
    pub window: Option<&'a Window>,
    pub meter: Option<&'a FabricMeter>,
    pub prefill: Option<&'a PrefillReport>,
    /// Whether the run stopped at a drain horizon (`run.drain_us`) with measured flows still running.
    pub drained: bool,
    pub end: Time,
    pub events: u64,
    pub engine_bytes: usize,
}

/// Every table and the run statistics of a finished run (or of one stopped early, for inspection).
pub(crate) fn collect(run: Run) -> Results {
    let Run { net, hosts, pkts, sampler, sources, window, meter, prefill, drained, end, events, engine_bytes } = run;
    let areas: Vec<u128> = net.fabric.ports.iter_mut().map(|p| p.queue_area_by(end)).collect();
    let uplink_bytes = net.uplink_bytes_departed(pkts);
    let all = hosts.flows();
    // With a window, the cool-down's flows that had not arrived are left out (see the module doc).
    let rows: Vec<usize> = (0..all.len()).filter(|&i| window.is_none() || all[i].started || all[i].spec.measured).collect();
    let flows: Vec<&Flow> = rows.iter().map(|&i| &all[i]).collect();
    let count = |st: FlowState| flows.iter().filter(|f| f.state.unwrap_or(FlowState::Unfinished) == st).count() as u64;
    let window_stats = window.map(|w| window_stats(w, all, rows.len()));
    let fabric = meter.map(|m| m.load(net)).unwrap_or_default();
    let censored = drained.then(|| all.iter().filter(|f| f.spec.measured && f.state.is_none()).count() as u64);
    let (created, delivered, dropped) = pkts.wire_books();
    let stats = RunStats {
        events,
        sim_time_us: end.as_us(),
        flows_total: flows.len() as u64,
        flows_completed: count(FlowState::Completed),
        flows_cancelled: count(FlowState::Cancelled),
        flows_unfinished: count(FlowState::Unfinished),
        wire_bytes_created: created,
        wire_bytes_delivered: delivered,
        wire_bytes_dropped: dropped,
        wire_bytes_in_flight: pkts.live_bytes(),
        peak_packets_in_flight: pkts.peak_live() as u64,
        peak_flows_active: hosts.peak_active(),
        balancer_drops: net.switches.iter().map(|s| s.balancer_drops).sum(),
        balancer_cancels: net.switches.iter().map(|s| s.balancer_cancels).sum(),
        routing_drops: net.switches.iter().map(|s| s.routing_drops).sum(),
        probes_sent: hosts.probes_sent(),
        scheme_counters: scheme_counters(net, hosts),
        engine_bytes: engine_bytes as u64,
        source_mean_bytes: sources.iter().map(|i| i.mean_size).collect(),
        source_offered_bps: sources.iter().map(|i| i.offered_bps).collect(),
        source_access_capacity_bps: sources.iter().map(|i| i.access_capacity_bps).collect(),
        source_fabric_capacity_bps: sources.iter().map(|i| i.fabric_capacity_bps).collect(),
        fabric_carried_load_ratio: fabric.carried_load_ratio,
        fabric_span_us: meter.map(|_| fabric.span_us),
        util_host_to_leaf: fabric.utilisation[0],
        util_leaf_to_host: fabric.utilisation[1],
        util_leaf_to_spine: fabric.utilisation[2],
        util_spine_to_leaf: fabric.utilisation[3],
        prefill_flows: prefill.map(|p| p.flows),
        prefill_remaining_bytes: prefill.map(|p| p.remaining_bytes),
        prefill_fluid_flows: prefill.map(|p| p.fluid_flows),
        prefill_fluid_time_us: prefill.map(|p| p.fluid_time_us),
        prefill_candidates: prefill.map(|p| p.candidates),
        prefill_load_ratio: prefill.map(|p| p.load_ratio),
        prefill_cut_bytes: prefill.map(|p| p.cut_bytes),
        window_flows_censored: censored,
        ..window_stats.unwrap_or_default()
    };
    Results {
        flows: flow_table(all, &rows, window.is_some(), prefill.is_some(), &hosts.alone_fcts(&net.fabric), net.uplinks(), &uplink_bytes),
        ports: port_table(net, end, &areas),
        switches: switch_table(net),
        samples: sampler.map(Sampler::table).unwrap_or_default(),
        stats,
    }
}

/// The `window_*` statistics of a run with a measurement window, whose `kept` flows are in the tables.
fn window_stats(w: &Window, flows: &[Flow], kept: usize) -> RunStats {
    let measured = flows.iter().filter(|f| f.spec.measured);
    let measured_end = measured.filter(|f| f.state.is_some()).map(|f| f.finish).max().unwrap_or(Time::ZERO);
    // Flows are sorted by start: the last one drawn is the run's last arrival.
    let last_arrival = flows.last().map_or(Time::ZERO, |f| f.spec.start);
    let span = w.span();
    RunStats {
        window_flows_measured: Some(w.measured()),
        window_flows_not_arrived: Some((flows.len() - kept) as u64),
        window_opens_us: span.map(|s| s.0.as_us()),
        window_closes_us: span.map(|s| s.1.as_us()),
        window_carried_load_ratio: w.carried_load_ratio(),
        window_drain_us: Some(measured_end.saturating_sub(last_arrival).as_us()),
        ..RunStats::default()
    }
}
