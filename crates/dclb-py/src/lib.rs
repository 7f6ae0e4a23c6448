//! `dclb._core`: the thin binding between the Python front and the engine.
//!
//! It parses the resolved config (JSON written by `dclb.scenario`), runs the simulation in chunks with the
//! GIL released (so Python can draw a progress bar between chunks and other threads keep running), and hands
//! results back in two forms:
//!
//! * each result table as a [`table::PyResultTable`]: an Arrow record batch that Python reads column by
//!   column as bytes for numpy (a run that stores nothing never loads pyarrow), or whole as a
//!   `pyarrow.RecordBatch` through Arrow's C data interface (`arrow-pyarrow`): pyarrow adopts the engine's
//!   buffers, so no value is converted one by one and no byte layout is agreed by hand. Nullable engine
//!   columns keep their nulls; only they are nullable in the schema.
//! * the run statistics as one JSON document of [`RunStats`], which Python reads with `json.loads`. JSON
//!   rather than a Python-object serialiser: the binding already depends on `serde_json`, the document is a
//!   few dozen numbers once per run, and Python's `json` reads 64-bit integers exactly.
//!
//! A config the engine refuses (it cannot read it, a rule of `Config::check` is broken, a watchdog stopped
//! the run) raises `dclb._core.ConfigError`, a `ValueError` whose text is the engine's one line
//! (`traffic.sources[0].load: must be in (0, 1] ...`) and which carries the parts of that line as data:
//! `path`, the field as a tuple of keys (str) and list indices (int), `("traffic", "sources", 0, "load")`,
//! empty for the config as a whole; and `message`, the line without its path. The front names the field as
//! its user wrote it from `path` alone.

use dclb_core::check::{self, Limits};
use dclb_core::config::{ConfigError, FieldPath, PathPart, SamplerConfig, SourceConfig};
use dclb_core::fabric::Fabric;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, RecordBatch, RecordBatchOptions, StringArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Schema};
use dclb_core::lb::{ParamValue, SCHEMES};
use dclb_core::memory::{Estimate, MemoryLimit, Part};
use dclb_core::metrics::{Column, RunStats, Table};
use dclb_core::runsize::EventLimit;
use dclb_core::{Config, Simulation};
use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::{Arc, Mutex};

mod table;
use table::PyResultTable;

pyo3::create_exception!(
    _core,
    PyConfigError,
    PyValueError,
    "A config the engine refuses: str() is the engine's one line; `path` is the field as a tuple of keys and list indices (empty for the whole config), `message` the line without it."
);

/// The Python exception for an engine [`ConfigError`] (see the module documentation).
fn config_error(e: ConfigError) -> PyErr {
    Python::with_gil(|py| {
        let err = PyConfigError::new_err(e.to_string());
        let parts: Vec<PyObject> = e
            .path
            .parts()
            .iter()
            // Converting a str or an int to Python cannot fail (`Infallible`).
            .map(|part| match part {
                PathPart::Key(k) => k.into_pyobject(py).unwrap().into_any().unbind(),
                PathPart::Index(i) => i.into_pyobject(py).unwrap().into_any().unbind(),
            })
            .collect();
        let value = err.value(py);
        value.setattr("path", PyTuple::new(py, parts)?)?;
        value.setattr("message", e.message)?;
        Ok(err)
    })
    .unwrap_or_else(|e: PyErr| e)
}

/// An engine error still given as a line of text (`field.path: what`; the simulation's constructor and its
/// watchdogs) as a [`config_error`].
fn line_error(line: impl Into<String>) -> PyErr {
    config_error(ConfigError::from_line(line))
}

/// Counters are u64 in the engine and int64 in the stored tables (the integer type pandas, DuckDB and every
/// Parquet reader handle natively). A count beyond the int64 range is an error, never a silent wrap.
fn int64s(name: &str, values: &[u64]) -> PyResult<Vec<i64>> {
    values
        .iter()
        .map(|&v| i64::try_from(v).map_err(|_| PyOverflowError::new_err(format!("result column {name}: {v} exceeds the int64 range"))))
        .collect()
}

/// `width` counters per row as `list<int64>` (the list type pyarrow builds by default, item field included).
fn list_column(name: &str, rows: usize, width: usize, values: &[u64]) -> PyResult<ListArray> {
    let item = Arc::new(Field::new_list_field(DataType::Int64, true));
    let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(width, rows));
    let values: ArrayRef = Arc::new(Int64Array::from(int64s(name, values)?));
    ListArray::try_new(item, offsets, values, None).map_err(|e| PyRuntimeError::new_err(format!("result column {name}: {e}")))
}

/// One engine column as an Arrow array (taking its vector: floats and flags move without a copy).
fn arrow_column(name: &str, rows: usize, column: Column) -> PyResult<ArrayRef> {
    Ok(match column {
        Column::U64(v) => Arc::new(Int64Array::from(int64s(name, &v)?)),
        Column::F64(v) => Arc::new(Float64Array::from(v)),
        Column::OptF64(v) => Arc::new(Float64Array::from(v)),
        Column::Bool(v) => Arc::new(BooleanArray::from(v)),
        Column::OptBool(v) => Arc::new(BooleanArray::from(v)),
        Column::Str(v) => Arc::new(StringArray::from_iter_values(v)),
        Column::U64List { width, values } => Arc::new(list_column(name, rows, width, &values)?),
    })
}

/// An engine table as a record batch; its row count is explicit so that a table without columns (no
/// sampler) is still a valid, empty batch.
fn record_batch(table: Table) -> PyResult<RecordBatch> {
    let rows = table.rows();
    let mut fields = Vec::with_capacity(table.columns.len());
    let mut arrays = Vec::with_capacity(table.columns.len());
    for (name, column) in table.columns {
        let nullable = matches!(column, Column::OptF64(_) | Column::OptBool(_));
        let array = arrow_column(name, rows, column)?;
        fields.push(Field::new(name, array.data_type().clone(), nullable));
        arrays.push(array);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options).map_err(|e| PyRuntimeError::new_err(format!("result table: {e}")))
}

fn stats_json(stats: &RunStats) -> PyResult<String> {
    serde_json::to_string(stats).map_err(|e| PyRuntimeError::new_err(format!("run statistics: {e}")))
}

/// A simulation in progress.
#[pyclass(name = "Simulation", module = "dclb._core")]
struct PySimulation {
    inner: Mutex<Simulation>,
}

/// A memory limit from Python's `(bytes, where the number comes from)`, or none.
fn memory_limit(limit: Option<(u64, String)>) -> Option<MemoryLimit> {
    limit.map(|(bytes, source)| MemoryLimit { bytes, source })
}

/// The limits of a run from Python's memory limit and event limit, `(events, where the number comes from
/// and how to insist)`, each optional.
fn limits(memory: Option<(u64, String)>, events: Option<(f64, String)>) -> Limits {
    Limits { memory: memory_limit(memory), events: events.map(|(events, source)| EventLimit { events, source }) }
}

#[pymethods]
impl PySimulation {
    /// Builds a simulation from a resolved config (JSON), held to `memory_limit` = (bytes, source) and
    /// `event_limit` = (events, source) if given. Raises ConfigError naming the offending field.
    #[new]
    #[pyo3(signature = (config_json, memory_limit=None, event_limit=None))]
    fn new(py: Python<'_>, config_json: &str, memory_limit: Option<(u64, String)>, event_limit: Option<(f64, String)>) -> PyResult<Self> {
        let cfg = parse_config(config_json)?;
        let limits = self::limits(memory_limit, event_limit);
        let sim = py.allow_threads(|| Simulation::new_limited(&cfg, limits)).map_err(line_error)?;
        Ok(PySimulation { inner: Mutex::new(sim) })
    }

    /// Processes up to `budget` events without the GIL. Returns True once the run has finished; raises
    /// ConfigError with the engine's one-line reason if a watchdog stopped it (no progress, memory, events,
    /// the clock's end).
    fn run(&self, py: Python<'_>, budget: u64) -> PyResult<bool> {
        let mut guard = self.inner.lock().expect("simulation lock");
        let sim: &mut Simulation = &mut guard;
        let finished = py.allow_threads(|| sim.run(budget));
        match sim.error() {
            Some(e) => Err(line_error(e)),
            None => Ok(finished),
        }
    }

    /// (simulated time in µs, events processed, flows ended, flows in total).
    fn progress(&self) -> (f64, u64, u64, usize) {
        let sim = self.inner.lock().expect("simulation lock");
        (sim.now().as_us(), sim.events(), sim.flows_ended(), sim.flows_total())
    }

    /// Result tables and statistics: {"flows", "ports", "switches", "samples"} as `ResultTable`, and
    /// "stats" as the JSON text of the run statistics.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.inner.lock().expect("simulation lock").results();
        let d = PyDict::new(py);
        d.set_item("stats", stats_json(&r.stats)?)?;
        for (name, table) in [("flows", r.flows), ("ports", r.ports), ("switches", r.switches), ("samples", r.samples)] {
            d.set_item(name, PyResultTable::new(record_batch(table)?))?;
        }
        Ok(d)
    }
}

/// Every registered scheme with its parameters: a list of dicts.
#[pyfunction]
fn schemes<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for s in SCHEMES {
        let d = PyDict::new(py);
        d.set_item("name", s.name)?;
        d.set_item("placement", s.placement.name())?;
        d.set_item("granularity", s.granularity)?;
        d.set_item("summary", s.summary)?;
        let ps = PyList::empty(py);
        let relations = PyList::empty(py);
        for r in s.params.iter().flat_map(|p| p.relations) {
            let rd = PyDict::new(py);
            rd.set_item("relation", r.text())?;
            rd.set_item("why", r.why)?;
            relations.append(rd)?;
        }
        d.set_item("relations", relations)?;
        for p in s.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            match p.default {
                ParamValue::Num(x) => pd.set_item("default", x)?,
                ParamValue::Bool(b) => pd.set_item("default", b)?,
                ParamValue::Choice(c) => pd.set_item("default", c)?,
            }
            pd.set_item("kind", match p.default {
                ParamValue::Num(_) => "number",
                ParamValue::Bool(_) => "bool",
                ParamValue::Choice(_) => "choice",
            })?;
            pd.set_item("unit", p.unit)?;
            pd.set_item("choices", p.choices.to_vec())?;
            pd.set_item("min", p.min)?;
            pd.set_item("max", p.max)?;
            pd.set_item("whole", p.whole)?;
            pd.set_item("doc", p.doc)?;
            pd.set_item("source", p.source)?;
            // The base RTT (us) the default was chosen for, if it scales with the fabric's (lb.timing).
            pd.set_item("rtt_us", (p.rtt_us > 0.0).then_some(p.rtt_us))?;
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The engine's default config as JSON (the documented defaults).
#[pyfunction]
fn default_config() -> String {
    serde_json::to_string(&Config::default()).expect("config serialises")
}

/// The defaults of the parts `default_config` leaves out (a traffic source, the sampler) as JSON:
/// `{"source": {...}, "sampler": {...}}`.
#[pyfunction]
fn default_parts() -> String {
    serde_json::json!({"source": SourceConfig::default(), "sampler": SamplerConfig::default()}).to_string()
}

/// A config from JSON; a value the engine cannot read raises ConfigError with the path where reading stopped.
fn parse_config(config_json: &str) -> PyResult<Config> {
    Config::from_json(config_json).map_err(config_error)
}

/// Checks a resolved config (JSON) with the engine's one authority, `Config::check`, its memory estimate
/// against `memory_limit` = (bytes, source) and its event estimate against `event_limit` = (events,
/// source and how to insist), each if given; raises ConfigError naming the field. Returns the estimated
/// bytes.
#[pyfunction]
#[pyo3(signature = (config_json, memory_limit=None, event_limit=None))]
fn check_config(py: Python<'_>, config_json: &str, memory_limit: Option<(u64, String)>, event_limit: Option<(f64, String)>) -> PyResult<f64> {
    let cfg = parse_config(config_json)?;
    let limits = self::limits(memory_limit, event_limit);
    py.allow_threads(|| cfg.check_within(&limits)).map(|c| c.memory.total()).map_err(config_error)
}

/// The engine's estimate of a valid config's run (`dclb_core::runsize`) as JSON: `sources` (per source
/// `flows`, `started`, `first_us`, `last_us`, `end_us`, `packets`; an infinite time is null),
/// `sim_time_us`, `horizon`, `events` (per kind: `kind`, `events`, `field`, `what`) and `memory_bytes`.
/// Runs the whole check first (without limits); raises ConfigError as `check_config` does.
#[pyfunction]
fn run_size(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let cfg = parse_config(config_json)?;
    let checked = py.allow_threads(|| cfg.check_within(&Limits::default())).map_err(config_error)?;
    let mut out = serde_json::to_value(&checked.size).map_err(|e| PyRuntimeError::new_err(format!("run size: {e}")))?;
    out["memory_bytes"] = serde_json::json!(checked.memory.total());
    Ok(out.to_string())
}

/// What the front checks before its own allocations (expanding host sets) and before the full check
/// builds the fabric: the field rules (`Config::validate`: ranges, and the fabric's ids within their 32
/// bits, all by arithmetic), then the memory estimate of the config before its fabric is built (the
/// fabric, and the sampler over a horizon) plus `extra` parts the caller adds, `(what, field, bytes,
/// hint)`, held to `memory_limit` when one is given: raises ConfigError naming the field (behind the
/// largest part, when over the limit). Needs no traffic sources.
#[pyfunction]
#[pyo3(signature = (config_json, extra, memory_limit))]
fn check_memory(config_json: &str, extra: Vec<(String, String, f64, String)>, memory_limit: Option<(u64, String)>) -> PyResult<f64> {
    let cfg = parse_config(config_json)?;
    cfg.validate().map_err(config_error)?;
    let mut estimate = Estimate::before_build(&cfg);
    estimate.parts.extend(extra.into_iter().map(|(what, field, bytes, hint)| Part { what, field, bytes, hint }));
    estimate.within(self::memory_limit(memory_limit).as_ref()).map_err(line_error)?;
    Ok(estimate.total())
}

/// The fabric's base RTT in microseconds (what `lb.timing = "fabric"` scales timing defaults to).
#[pyfunction]
fn base_rtt_us(config_json: &str) -> PyResult<f64> {
    Ok(parse_config(config_json)?.base_rtt().as_us())
}

/// Per source of a checked config: mean flow size, offered load and the capacities of both load bases,
/// as the engine computes them (a list of dicts).
#[pyfunction]
fn describe_sources<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyList>> {
    let cfg = parse_config(config_json)?;
    let fabric = Fabric::build(&cfg.topology, &cfg.transport);
    let out = PyList::empty(py);
    for s in &cfg.sources {
        let info = dclb_core::traffic::source_info(&fabric, s);
        let d = PyDict::new(py);
        d.set_item("mean_bytes", info.mean_size)?;
        d.set_item("offered_bps", info.offered_bps)?;
        d.set_item("access_capacity_bps", info.access_capacity_bps)?;
        d.set_item("fabric_capacity_bps", info.fabric_capacity_bps)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Mean (bytes) of a piecewise-linear flow-size CDF, exactly as the engine calibrates load with it.
#[pyfunction]
fn cdf_mean(points: Vec<(f64, f64)>) -> PyResult<f64> {
    check::validate_cdf(&points, &FieldPath::of("points")).map_err(config_error)?;
    Ok(dclb_core::traffic::cdf::Cdf::new(points).mean())
}

/// What is wrong with a flow-size CDF: None, or (index of the offending point or None, message).
#[pyfunction]
fn cdf_problem(points: Vec<(f64, f64)>) -> Option<(Option<usize>, String)> {
    check::cdf_problem(&points)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySimulation>()?;
    m.add_class::<PyResultTable>()?;
    m.add("ConfigError", m.py().get_type::<PyConfigError>())?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(default_config, m)?)?;
    m.add_function(wrap_pyfunction!(default_parts, m)?)?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    m.add_function(wrap_pyfunction!(run_size, m)?)?;
    m.add_function(wrap_pyfunction!(check_memory, m)?)?;
    m.add_function(wrap_pyfunction!(describe_sources, m)?)?;
    m.add_function(wrap_pyfunction!(base_rtt_us, m)?)?;
    m.add_function(wrap_pyfunction!(cdf_mean, m)?)?;
    m.add_function(wrap_pyfunction!(cdf_problem, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
