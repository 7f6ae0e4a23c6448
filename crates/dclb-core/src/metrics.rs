//! What a run returns: columnar tables (per flow, per port, per switch, sampler rows) and run statistics.
//!
//! Columns are plain vectors so the binding can hand them to Python as Arrow arrays without a per-value
//! conversion; a value that may be missing is an `Option` (null in Arrow and Parquet, never NaN). Column
//! names carry their units; the Python side writes Parquet. Definitions live here
//! once: FCT is flow start to the arrival of the last byte at the receiver; a packet's queueing delay is the
//! time it waited in queues before serialisation, summed over hops.

/// Flow end states.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FlowState {
    /// Every byte reached the receiver.
    Completed = 0,
    /// The network gave up on the flow and told the source (e.g. DAR's hopeless deadline flows).
    Cancelled = 1,
    /// Still running when the run stopped at its horizon.
    Unfinished = 2,
}

impl FlowState {
    pub fn name(self) -> &'static str {
        match self {
            FlowState::Completed => "completed",
            FlowState::Cancelled => "cancelled",
            FlowState::Unfinished => "unfinished",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
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
            Column::I64(v) => v.len(),
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
    pub fn strs(&self, name: &str) -> &[String] {
        match self.get(name) {
            Some(Column::Str(v)) => v,
            _ => panic!("no str column {name}"),
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|c| c.1.len()).unwrap_or(0)
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
    pub balancer_drops: u64,
    pub probes_sent: u64,
    /// Engine memory estimate: packet arena, flow table, queues (bytes).
    pub engine_bytes: u64,
    /// Per-source mean flow size (bytes) and offered load (bps), as used for calibration.
    pub source_mean_bytes: Vec<f64>,
    pub source_offered_bps: Vec<f64>,
    pub source_access_capacity_bps: Vec<f64>,
    pub source_fabric_capacity_bps: Vec<f64>,
}

pub struct Results {
    pub flows: Table,
    pub ports: Table,
    pub switches: Table,
    pub samples: Table,
    pub stats: RunStats,
}
