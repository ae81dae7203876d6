//! Temperatures handed to Python: maps and fields as ndarrays (row-major,
//! `[y, x]` and `[z, y, x]`, as the grid indexes `x + nx*(y + ny*z)`), and
//! blocks as a dict by name.

use cuth::grid::Grid;
use numpy::ndarray::Array;
use numpy::{IntoPyArray, PyArray2, PyArray3};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// One block's reading, wherever it came from.
pub struct BlockRow {
    pub layer: String,
    pub block: String,
    pub power_w: Option<f64>,
    /// `None`: the block lies outside the grid.
    pub min_avg_max: Option<(f64, f64, f64)>,
}

/// A plane map (index `x + nx*y`) as an ndarray `(ny, nx)`.
pub fn map_array(
    py: Python<'_>,
    map: Vec<f64>,
    nx: usize,
    ny: usize,
) -> PyResult<Bound<'_, PyArray2<f64>>> {
    let a = Array::from_shape_vec((ny, nx), map)
        .map_err(|e| crate::errors::input_error(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

/// A whole field as an ndarray `(nz, ny, nx)`.
pub fn field_array<'py>(
    py: Python<'py>,
    t: Vec<f64>,
    grid: &Grid,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let a = Array::from_shape_vec((grid.nz, grid.ny, grid.nx), t)
        .map_err(|e| crate::errors::input_error(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

/// The key of each row: its block's name, or `layer.block` where the name
/// is in several layers.
pub fn block_keys(rows: &[BlockRow]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let shared = rows.iter().filter(|o| o.block == r.block).count() > 1;
            match shared {
                true => format!("{}.{}", r.layer, r.block),
                false => r.block.clone(),
            }
        })
        .collect()
}

/// Block key → {"layer", "power", "min", "avg", "max"} (temperatures in K,
/// `None` for a block outside the grid; power in W, `None` where the
/// layer's map was set whole).
pub fn block_dict<'py>(py: Python<'py>, rows: &[BlockRow]) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (key, r) in block_keys(rows).into_iter().zip(rows) {
        let d = PyDict::new(py);
        d.set_item("layer", &r.layer)?;
        d.set_item("power", r.power_w)?;
        d.set_item("min", r.min_avg_max.map(|t| t.0))?;
        d.set_item("avg", r.min_avg_max.map(|t| t.1))?;
        d.set_item("max", r.min_avg_max.map(|t| t.2))?;
        out.set_item(key, d)?;
    }
    Ok(out)
}
