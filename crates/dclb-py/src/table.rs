//! `dclb._core.ResultTable`: one result table, readable without pyarrow.
//!
//! The engine's tables are built as Arrow record batches once, when the run ends, and stay here. Python
//! reads them in one of two ways:
//!
//! * column by column, as plain bytes that numpy views with `numpy.frombuffer` ([`PyResultTable::values`]
//!   for numbers and flags, [`PyResultTable::labels`] for text). This is what a run's summary reads, so a
//!   run that stores nothing never loads pyarrow (about 30 MB of shared libraries, more than the engine and
//!   the rest of the front together on the quick start; issue #30).
//! * whole, as a `pyarrow.RecordBatch` ([`PyResultTable::to_pyarrow`]), through Arrow's C data interface:
//!   pyarrow adopts the same buffers, as before this type existed. The store writes these.
//!
//! Both read the same arrays, so a number is the same whichever way it was read: nulls read as NaN in a
//! float column and as false in a flag column, which is what `pyarrow.compute`'s cast and `fill_null` give.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_pyarrow::ToPyArrow;
use arrow_schema::DataType;
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::HashMap;

#[pyclass(name = "ResultTable", module = "dclb._core", frozen)]
pub struct PyResultTable {
    batch: RecordBatch,
}

impl PyResultTable {
    pub fn new(batch: RecordBatch) -> Self {
        PyResultTable { batch }
    }

    fn column(&self, name: &str) -> PyResult<&dyn Array> {
        self.batch.column_by_name(name).map(|c| c.as_ref()).ok_or_else(|| PyKeyError::new_err(format!("result table has no column {name:?}")))
    }
}

#[pymethods]
impl PyResultTable {
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.batch.schema().fields().iter().map(|f| f.name().clone()).collect()
    }

    /// A numeric or flag column as (numpy dtype, bytes in this machine's byte order): int64 as `"=i8"`,
    /// float64 as `"=f8"` with nulls as NaN, booleans as `"|b1"` (one byte each) with nulls as false.
    fn values<'py>(&self, py: Python<'py>, name: &str) -> PyResult<(&'static str, Bound<'py, PyBytes>)> {
        let column = self.column(name)?;
        Ok(match column.data_type() {
            // An integer column has no NaN to stand for a missing value; the engine writes none, and a null
            // would read as whatever its slot holds, so it is refused rather than read.
            DataType::Int64 if column.null_count() > 0 => return Err(PyTypeError::new_err(format!("result column {name:?} is an integer column with missing values"))),
            DataType::Int64 => ("=i8", PyBytes::new(py, column.as_primitive::<Int64Type>().values().inner().as_slice())),
            DataType::Float64 => {
                let floats = column.as_primitive::<Float64Type>();
                if floats.null_count() == 0 {
                    ("=f8", PyBytes::new(py, floats.values().inner().as_slice()))
                } else {
                    let bytes: Vec<u8> = floats.iter().flat_map(|v| v.unwrap_or(f64::NAN).to_ne_bytes()).collect();
                    ("=f8", PyBytes::new(py, &bytes))
                }
            }
            DataType::Boolean => {
                let bytes: Vec<u8> = column.as_boolean().iter().map(|v| u8::from(v.unwrap_or(false))).collect();
                ("|b1", PyBytes::new(py, &bytes))
            }
            other => return Err(PyTypeError::new_err(format!("result column {name:?} is {other}, not a number or a flag"))),
        })
    }

    /// A text column as (int32 codes in this machine's byte order, the distinct texts): row i's text is
    /// `texts[codes[i]]`. The engine's texts come from small fixed sets (a flow's state, a port's role).
    fn labels<'py>(&self, py: Python<'py>, name: &str) -> PyResult<(Bound<'py, PyBytes>, Vec<String>)> {
        let column = self.column(name)?;
        if column.data_type() != &DataType::Utf8 {
            return Err(PyTypeError::new_err(format!("result column {name:?} is {}, not text", column.data_type())));
        }
        let mut texts: Vec<String> = Vec::new();
        let mut index: HashMap<&str, i32> = HashMap::new();
        let mut codes: Vec<u8> = Vec::with_capacity(column.len() * 4);
        for text in column.as_string::<i32>().iter() {
            let text = text.unwrap_or("");
            let code = *index.entry(text).or_insert_with(|| {
                texts.push(text.to_owned());
                (texts.len() - 1) as i32
            });
            codes.extend_from_slice(&code.to_ne_bytes());
        }
        Ok((PyBytes::new(py, &codes), texts))
    }

    /// The whole table as a `pyarrow.RecordBatch` (pyarrow adopts the buffers; nothing is copied).
    fn to_pyarrow(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.batch.to_pyarrow(py)
    }
}
