//! `dclb._core`: the thin binding between the Python front and the engine.
//!
//! It parses the resolved config (JSON written by `dclb.scenario`), runs the simulation in chunks with the
//! GIL released (so Python can draw a progress bar between chunks and other threads keep running), and hands
//! result columns back as raw little-endian buffers that Python wraps with numpy without copying per value.

use dclb_core::check;
use dclb_core::config::{SamplerConfig, SourceConfig};
use dclb_core::fabric::Fabric;
use dclb_core::lb::{ParamValue, SCHEMES};
use dclb_core::metrics::{Column, Table};
use dclb_core::{Config, Simulation};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::Mutex;

fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data numeric slices viewed as bytes (u64, i64, f64 have no padding).
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn table<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let v: Bound<'py, PyAny> = match col {
            Column::U64(v) => ("<u8", PyBytes::new(py, as_bytes(v))).into_pyobject(py)?.into_any(),
            Column::I64(v) => ("<i8", PyBytes::new(py, as_bytes(v))).into_pyobject(py)?.into_any(),
            Column::F64(v) => ("<f8", PyBytes::new(py, as_bytes(v))).into_pyobject(py)?.into_any(),
            Column::Bool(v) => {
                let b: Vec<u8> = v.iter().map(|&x| x as u8).collect();
                ("bool", PyBytes::new(py, &b)).into_pyobject(py)?.into_any()
            }
            Column::Str(v) => ("str", PyList::new(py, v)?).into_pyobject(py)?.into_any(),
            Column::U64List { width, values } => ("list<u8>", *width, PyBytes::new(py, as_bytes(values))).into_pyobject(py)?.into_any(),
            Column::OptF64(v) => {
                let f: Vec<f64> = v.iter().map(|x| x.unwrap_or(f64::NAN)).collect();
                ("<f8", PyBytes::new(py, as_bytes(&f))).into_pyobject(py)?.into_any()
            }
            Column::OptBool(v) => {
                // 0 false, 1 true, 2 missing
                let b: Vec<u8> = v.iter().map(|&x| x.map_or(2, |m| m as u8)).collect();
                ("bool?", PyBytes::new(py, &b)).into_pyobject(py)?.into_any()
            }
        };
        d.set_item(*name, v)?;
    }
    Ok(d)
}

/// A simulation in progress.
#[pyclass(name = "Simulation", module = "dclb._core")]
struct PySimulation {
    inner: Mutex<Simulation>,
}

#[pymethods]
impl PySimulation {
    /// Builds a simulation from a resolved config (JSON). Raises ValueError naming the offending field.
    #[new]
    fn new(py: Python<'_>, config_json: &str) -> PyResult<Self> {
        let cfg: Config = serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("engine config: {e}")))?;
        let sim = py.allow_threads(|| Simulation::new(&cfg)).map_err(PyValueError::new_err)?;
        Ok(PySimulation { inner: Mutex::new(sim) })
    }

    /// Processes up to `budget` events without the GIL. Returns True once the run has finished.
    fn run(&self, py: Python<'_>, budget: u64) -> bool {
        let mut guard = self.inner.lock().expect("simulation lock");
        let sim: &mut Simulation = &mut guard;
        py.allow_threads(|| sim.run(budget))
    }

    /// (simulated time in µs, events processed, flows ended, flows in total).
    fn progress(&self) -> (f64, u64, u64, usize) {
        let sim = self.inner.lock().expect("simulation lock");
        (sim.now().as_us(), sim.events(), sim.flows_ended(), sim.flows_total())
    }

    /// Result tables and statistics: {"flows": {...}, "ports": {...}, "switches": {...}, "samples": {...},
    /// "stats": {...}}. Each column is (dtype, buffer) or ("str", list) or ("list<u8>", width, buffer).
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut sim = self.inner.lock().expect("simulation lock");
        let r = sim.results();
        let d = PyDict::new(py);
        d.set_item("flows", table(py, &r.flows)?)?;
        d.set_item("ports", table(py, &r.ports)?)?;
        d.set_item("switches", table(py, &r.switches)?)?;
        d.set_item("samples", table(py, &r.samples)?)?;
        let s = &r.stats;
        let st = PyDict::new(py);
        st.set_item("events", s.events)?;
        st.set_item("sim_time_us", s.sim_time_us)?;
        st.set_item("flows_total", s.flows_total)?;
        st.set_item("flows_completed", s.flows_completed)?;
        st.set_item("flows_cancelled", s.flows_cancelled)?;
        st.set_item("flows_unfinished", s.flows_unfinished)?;
        st.set_item("wire_bytes_created", s.wire_bytes_created)?;
        st.set_item("wire_bytes_delivered", s.wire_bytes_delivered)?;
        st.set_item("wire_bytes_dropped", s.wire_bytes_dropped)?;
        st.set_item("wire_bytes_in_flight", s.wire_bytes_in_flight)?;
        st.set_item("peak_packets_in_flight", s.peak_packets_in_flight)?;
        st.set_item("peak_flows_active", s.peak_flows_active)?;
        st.set_item("balancer_drops", s.balancer_drops)?;
        st.set_item("probes_sent", s.probes_sent)?;
        st.set_item("engine_bytes", s.engine_bytes)?;
        st.set_item("source_mean_bytes", s.source_mean_bytes.clone())?;
        st.set_item("source_offered_bps", s.source_offered_bps.clone())?;
        st.set_item("source_access_capacity_bps", s.source_access_capacity_bps.clone())?;
        st.set_item("source_fabric_capacity_bps", s.source_fabric_capacity_bps.clone())?;
        d.set_item("stats", st)?;
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

fn parse_config(config_json: &str) -> PyResult<Config> {
    serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("engine config: {e}")))
}

/// Checks a resolved config (JSON) with the engine's one authority, `Config::check`; raises ValueError
/// with a one-line message naming the field.
#[pyfunction]
fn check_config(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let cfg = parse_config(config_json)?;
    py.allow_threads(|| cfg.check()).map_err(PyValueError::new_err)
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
    check::validate_cdf(&points, "points").map_err(PyValueError::new_err)?;
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
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(default_config, m)?)?;
    m.add_function(wrap_pyfunction!(default_parts, m)?)?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    m.add_function(wrap_pyfunction!(describe_sources, m)?)?;
    m.add_function(wrap_pyfunction!(cdf_mean, m)?)?;
    m.add_function(wrap_pyfunction!(cdf_problem, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
